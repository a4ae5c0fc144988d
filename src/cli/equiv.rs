//! `ksim equiv`: does a transformed kernel compute what the original computes, on the
//! inputs given, random inputs and the schedules explored ([`sim::equiv`])?

use super::common::*;
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
#[command(mut_arg("file", |a| a.value_name("ORIGINAL").index(1).help("The original kernel (`.ksim`, `.cl`, `.cu`, `.pvl`)")))]
pub struct EquivArgs {
    /// The original kernel (FILE) and its launch; the launch options apply to both sides
    /// unless a `--transformed-*` option overrides them.
    #[command(flatten)]
    pub launch: LaunchArgs,
    /// The transformed kernel.
    #[arg(value_name = "TRANSFORMED", index = 2)]
    pub transformed: PathBuf,
    /// The transformed kernel's work-groups, where the optimisation changed them (tiling).
    #[arg(long, value_name = "N[,N[,N]]", value_parser = parse_dims)]
    pub transformed_groups: Option<Dims>,
    /// The transformed kernel's work-group size, where the optimisation changed it.
    #[arg(long, value_name = "N[,N[,N]]", value_parser = parse_dims)]
    pub transformed_local_size: Option<Dims>,
    /// A `-D` for the transformed kernel only (added to, or replacing, the shared ones).
    #[arg(long, value_name = "NAME=VALUE", value_parser = parse_macro)]
    pub transformed_define: Vec<(String, Option<String>)>,
    /// How many random inputs to try after the inputs given (seeds 1 to N).
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub seeds: u64,
    /// Executions explored per side and input after the canonical schedule (0: the
    /// canonical schedule only).
    #[arg(long, default_value_t = 200, value_name = "N")]
    pub max_executions: u64,
    /// Threads for the engines (0: all cores).
    #[arg(long, default_value_t = 0, value_parser = super::limits::parse_jobs)]
    pub jobs: usize,
    /// Print a JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

pub fn equiv(args: &EquivArgs) -> CmdResult {
    let original = side(&args.launch)?;
    let mut t = args.launch.clone();
    t.file = args.transformed.clone();
    t.groups = args.transformed_groups.clone().or(t.groups);
    t.local_size = args.transformed_local_size.clone().or(t.local_size);
    for (name, value) in &args.transformed_define {
        t.define.retain(|(n, _)| n != name);
        t.define.push((name.clone(), value.clone()));
    }
    let transformed = side(&t)?;
    let request = sim::equiv::Request {
        original,
        transformed,
        seeds: (1..=args.seeds).collect(),
        max_executions: args.max_executions,
        jobs: args.jobs,
    };
    let report = sim::equiv::equiv(&request).map_err(Failure::usage)?;
    if args.json {
        println!("{}", sim::outcome::to_json(&report));
    } else {
        print!("{}", report.text());
    }
    Ok(exit_code(report.equivalent()))
}

/// Loads one side's kernel and launch options; its front end's notes go to standard error.
fn side(launch: &LaunchArgs) -> Result<sim::equiv::Side, Failure> {
    let (_, kernel, options, notes) = launch.load()?;
    eprint!("{notes}");
    Ok(sim::equiv::Side {
        file: launch.file.display().to_string(),
        kernel,
        options,
    })
}
