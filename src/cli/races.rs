//! `ksim races`: the exact race check of one input ([`sim::outcome::check_races`]). Each
//! race gets a replayable race report: the canonical schedule up to the race, run on the
//! reference semantics (`sim::report::canonical_race_schedules`).

use super::common::*;
use clap::Args;
use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Mutex;

#[derive(Args, Debug)]
pub struct RacesArgs {
    #[command(flatten)]
    pub launch: LaunchArgs,
    #[command(flatten)]
    pub policy: PolicyArgs,
    /// Threads for the fast executor (0: all cores).
    #[arg(long, default_value_t = 0, value_parser = super::limits::parse_jobs)]
    pub jobs: usize,
    /// Print a JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Where race reports are written.
    #[arg(long, value_name = "DIR", default_value = "ksim-reports")]
    pub report_dir: PathBuf,
    /// Do not write race reports.
    #[arg(long)]
    pub no_reports: bool,
}

pub fn races(args: &RacesArgs) -> CmdResult {
    let (src, launch) = args.policy.launch(&args.launch)?;
    let mut report = sim::outcome::check_races(&launch, args.jobs);
    let found: Vec<interp::Race> = report.races.iter().map(|r| r.race.race.clone()).collect();
    for (r, path) in report
        .races
        .iter_mut()
        .zip(write_reports(args, &src, &launch, &found))
    {
        r.report = path;
    }
    if args.json {
        println!("{}", sim::outcome::to_json(&report));
    } else {
        let text = report.text(&launch, src.view());
        eprint!("{}", text.err);
        print!("{}", text.out);
    }
    Ok(exit_code(report.is_clean()))
}

/// Writes a race report per race (the canonical schedule up to it); per race, its path.
fn write_reports(
    args: &RacesArgs,
    src: &Source,
    launch: &interp::Launch,
    races: &[interp::Race],
) -> Vec<Option<String>> {
    if args.no_reports || races.is_empty() {
        return vec![None; races.len()];
    }
    if let Err(e) = files::ensure_writable_dir(&args.report_dir) {
        eprintln!(
            "warning: race reports cannot be written to `{}` ({e})",
            args.report_dir.display()
        );
        return vec![None; races.len()];
    }
    let Ok(options) = args.launch.options() else {
        return vec![None; races.len()];
    };
    let keys: Vec<_> = races.iter().map(|r| r.key()).collect();
    let found = sim::report::canonical_race_schedules(launch, &keys);
    let warned = Mutex::new(HashSet::new());
    let recorded = args.launch.recorded(src);
    keys.iter()
        .map(|k| {
            let f = found.iter().find(|f| f.race.key() == *k)?;
            super::explore::write_report(
                src,
                &recorded,
                launch,
                &options,
                f,
                "races (canonical schedule)",
                &args.report_dir,
                &warned,
            )
        })
        .collect()
}
