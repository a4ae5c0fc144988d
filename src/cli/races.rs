//! `ksim races`: the exact race check of one input ([`sim::outcome::check_races`]).

use super::common::*;
use clap::Args;

#[derive(Args, Debug)]
pub struct RacesArgs {
    #[command(flatten)]
    pub launch: LaunchArgs,
    /// Threads for the fast executor (0: all cores).
    #[arg(long, default_value_t = 0, value_parser = super::limits::parse_jobs)]
    pub jobs: usize,
    /// Print a JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

pub fn races(args: &RacesArgs) -> CmdResult {
    let (src, launch) = args.launch.launch()?;
    let report = sim::outcome::check_races(&launch, args.jobs);
    if args.json {
        println!("{}", sim::outcome::to_json(&report));
    } else {
        let text = report.text(&launch, src.view());
        eprint!("{}", text.err);
        print!("{}", text.out);
    }
    Ok(exit_code(report.is_clean()))
}
