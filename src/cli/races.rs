//! `ksim races`: the exact race check of one input with the fast executor (one canonical
//! execution decides race-freedom for every schedule; see `interp::fast`). Each race gets
//! a replayable race report: the canonical schedule up to the race, run on the reference
//! semantics (`sim::report::canonical_race_schedules`).

use super::common::*;
use super::engine::simulate;
use super::run::{launch_json, race_json};
use clap::Args;
use serde_json::json;
use std::cell::RefCell;
use std::collections::HashSet;
use std::path::PathBuf;
use std::time::Instant;

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
    /// Where race reports are written.
    #[arg(long, value_name = "DIR", default_value = "ksim-reports")]
    pub report_dir: PathBuf,
    /// Do not write race reports.
    #[arg(long)]
    pub no_reports: bool,
}

pub fn races(args: &RacesArgs) -> CmdResult {
    let (src, launch) = args.launch.launch()?;
    let start = Instant::now();
    let sim = simulate(&launch, args.jobs);
    let elapsed = start.elapsed();
    if let Some(why) = &sim.fallback {
        eprintln!("note: {why}; the reference semantics decides instead");
    }
    let code = if sim.is_clean() { EXIT_OK } else { EXIT_FOUND };
    let reports = write_reports(args, &src, &launch, &sim.races);
    if args.json {
        let doc = json!({
            "kernel": launch.kernel.name,
            "launch": launch_json(&launch),
            "engine": sim.engine,
            "fallback_reason": sim.fallback,
            "threads": launch.threads(),
            "intervals": sim.intervals,
            "steps": sim.steps,
            "seconds": elapsed.as_secs_f64(),
            "race_free": sim.races.is_empty() && sim.fault.is_none() && sim.divergences.is_empty(),
            "races": sim.races.iter().zip(&reports).map(|((r, n), p)| {
                let mut v = race_json(&launch, r);
                v["count"] = json!(n);
                v["report"] = json!(p);
                v
            }).collect::<Vec<_>>(),
            "fault": sim.fault,
            "divergences": sim.divergences,
        });
        println!("{}", serde_json::to_string_pretty(&doc).expect("JSON"));
        return Ok(code);
    }
    for ((race, count), report) in sim.races.iter().zip(&reports) {
        let mut notes = vec![format!(
            "{count} conflicting access pair{} between these two statements",
            if *count == 1 { "" } else { "s" }
        )];
        if let Some(p) = report {
            notes.push(format!("report: {p} (replay: ksim replay {p})"));
        }
        eprint!("{}", render_race(&src, &launch, race, &notes));
    }
    if let Some(f) = &sim.fault {
        eprint!("{}", render_fault(&src, &launch, f));
    }
    for d in &sim.divergences {
        eprintln!("{}", divergence_message(d));
    }
    let intervals = sim
        .intervals
        .map(|k| format!(", {k} barrier interval{}", if k == 1 { "" } else { "s" }))
        .unwrap_or_default();
    let summary = format!(
        "{} threads{intervals}, {} steps, checked in {:.3} s",
        launch.threads(),
        sim.steps,
        elapsed.as_secs_f64()
    );
    match (&sim.fault, sim.races.len(), sim.divergences.len()) {
        (Some(f), _, _) if matches!(f.kind, interp::fault::FaultKind::StepBound { .. }) => {
            println!("no verdict: non-terminating (no end within the step bound; {summary})")
        }
        (Some(_), _, _) => println!("no verdict: the execution faulted ({summary})"),
        (None, 0, 0) => println!("race-free for this input ({summary})"),
        (None, 0, d) => {
            println!("no race, but {d} divergent barrier(s): undefined on a device ({summary})")
        }
        (None, k, 0) => println!("{k} distinct race(s) ({summary})"),
        (None, k, d) => println!("{k} distinct race(s) and {d} divergent barrier(s) ({summary})"),
    }
    Ok(code)
}

/// Writes a race report per race (the canonical schedule up to it); per race, its path.
fn write_reports(
    args: &RacesArgs,
    src: &Source,
    launch: &interp::Launch,
    races: &[(interp::Race, u64)],
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
    let keys: Vec<_> = races.iter().map(|(r, _)| r.key()).collect();
    let found = sim::report::canonical_race_schedules(launch, &keys);
    let warned = RefCell::new(HashSet::new());
    keys.iter()
        .map(|k| {
            let f = found.iter().find(|f| f.race.key() == *k)?;
            super::explore::write_report(
                src,
                launch,
                &args.launch,
                f,
                "races (canonical schedule)",
                &args.report_dir,
                &warned,
            )
        })
        .collect()
}
