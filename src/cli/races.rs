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
    /// Threads for the fast executor (0: all cores; more than the cores are capped at the
    /// cores, with a note).
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
    let others = report.decide_other_orders(&launch);
    let first = report.races.len() - others.len();
    let others: Vec<_> = others.iter().map(Some).collect();
    for (r, path) in report.races[first..].iter_mut().zip(write_found(
        args,
        &src,
        &launch,
        &others,
        "exhaustive (races --race-policy same-value, other schedules)",
    )) {
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
    let keys: Vec<_> = races.iter().map(|r| r.key()).collect();
    let found = sim::report::canonical_race_schedules(launch, &keys);
    let found: Vec<_> = (keys.iter())
        .map(|k| found.iter().find(|f| f.race.key() == *k))
        .collect();
    write_found(args, src, launch, &found, "races (canonical schedule)")
}

/// Writes a race report per race found with its schedule (`None`: no schedule, no
/// report); per race, its path.
fn write_found(
    args: &RacesArgs,
    src: &Source,
    launch: &interp::Launch,
    found: &[Option<&sim::explore::FoundRace>],
    found_by: &str,
) -> Vec<Option<String>> {
    let none = vec![None; found.len()];
    if args.no_reports || found.is_empty() {
        return none;
    }
    if let Err(e) = files::ensure_writable_dir(&args.report_dir) {
        eprintln!(
            "warning: race reports cannot be written to `{}` ({e})",
            args.report_dir.display()
        );
        return none;
    }
    let Ok(options) = args.launch.options() else {
        return none;
    };
    let warned = Mutex::new(HashSet::new());
    let recorded = args.launch.recorded(src);
    found
        .iter()
        .map(|f| {
            super::explore::write_report(
                src,
                &recorded,
                launch,
                &options,
                (*f)?,
                found_by,
                &args.report_dir,
                &warned,
            )
        })
        .collect()
}
