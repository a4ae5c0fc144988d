//! `ksim races`: the exact race check of one input with the fast executor (one canonical
//! execution decides race-freedom for every schedule; see `interp::fast`).

use super::common::*;
use super::engine::simulate;
use super::run::{launch_json, race_json};
use clap::Args;
use serde_json::json;
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
    // With atomics one execution does not decide the others (see `interp::fast`).
    let atomics = launch.kernel.has_atomics();
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
            "race_free": !atomics && sim.races.is_empty() && sim.fault.is_none() && sim.divergences.is_empty(),
            "atomics": atomics,
            "races": sim.races.iter().map(|(r, n)| {
                let mut v = race_json(&launch, r);
                v["count"] = json!(n);
                v
            }).collect::<Vec<_>>(),
            "fault": sim.fault,
            "divergences": sim.divergences,
        });
        println!("{}", serde_json::to_string_pretty(&doc).expect("JSON"));
        return Ok(code);
    }
    for (race, count) in &sim.races {
        let note = format!("{count} conflicting access pair(s) between these two statements");
        eprint!("{}", render_race(&src, &launch, race, &[note]));
    }
    if let Some(f) = &sim.fault {
        eprint!("{}", render_fault(&src, &launch, f));
    }
    for d in &sim.divergences {
        eprint!("{}", render_divergence(&src, &launch, d));
    }
    let intervals = sim
        .intervals
        .map(|k| format!(", {k} barrier intervals"))
        .unwrap_or_default();
    let summary = format!(
        "{} threads{intervals}, {} steps, checked in {:.3} s",
        launch.threads(),
        sim.steps,
        elapsed.as_secs_f64()
    );
    match (&sim.fault, sim.races.len(), sim.divergences.len()) {
        (Some(_), _, _) => println!("no verdict: the execution faulted ({summary})"),
        (None, 0, 0) if atomics => println!(
            "no race in the canonical execution; the kernel uses atomics, so other schedules \
             may take other paths: `ksim explore --exhaustive` checks them all ({summary})"
        ),
        (None, 0, 0) => println!("race-free for this input ({summary})"),
        (None, 0, d) => {
            println!("no race, but {d} divergent barrier(s): undefined on a device ({summary})")
        }
        (None, k, 0) => println!("{k} distinct race(s) ({summary})"),
        (None, k, d) => println!("{k} distinct race(s) and {d} divergent barrier(s) ({summary})"),
    }
    Ok(code)
}
