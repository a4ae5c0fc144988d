//! `ksim explore`'s text summary as a user reads it (issue 30, item 6): each final store
//! reproducible with `ksim run --schedule`, long arrays summarised, a stop at a race not
//! counted as a bound, `--jobs` that a search cannot use said so, PCT's default depth.

mod common;
use common::*;

const RACY: &str = "examples/kogge_stone_racy.ksim";

fn explore(extra: &[&str]) -> std::process::Output {
    let dir = tmp("explore-summary");
    let dir = dir.to_str().unwrap();
    let mut args = vec!["explore", RACY, "-D", "n=4", "--input", "in=iota"];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--report-dir", dir]);
    ksim(&args)
}

/// `ksim run` of the same launch with `--schedule schedule` (and `extra`).
fn run_with(schedule: &str, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["run", RACY, "-D", "n=4", "--input", "in=iota"];
    args.extend_from_slice(&["--schedule", schedule]);
    args.extend_from_slice(extra);
    ksim(&args)
}

#[test]
fn each_final_store_is_reproduced_by_its_schedule() {
    let out = explore(&["--exhaustive"]);
    let summary = stdout(&out);
    let stores: Vec<(&str, &str)> = summary
        .lines()
        .zip(summary.lines().skip(1))
        .filter_map(|(head, values)| {
            let schedule = head.split("--schedule '").nth(1)?.strip_suffix('\'')?;
            Some((schedule, values.trim().strip_prefix("out = ")?))
        })
        .collect();
    assert_eq!(stores.len(), 2, "{summary}");
    assert_ne!(stores[0].0, stores[1].0, "{summary}");
    for (schedule, values) in stores {
        let run = run_with(schedule, &["--json"]);
        let doc = json(&run);
        // One instance: `[[...]]`.
        let got: Vec<String> = doc["arrays"]["out"][0]
            .as_array()
            .unwrap_or_else(|| panic!("{}", text(&run)))
            .iter()
            .map(|v| v.to_string())
            .collect();
        assert_eq!(got.join(" "), values, "schedule {schedule}");
    }
}

#[test]
fn a_stop_at_the_race_is_not_a_bound_and_an_empty_store_list_says_nothing_more() {
    let out = explore(&["--exhaustive", "--stop-on-race"]);
    let summary = stdout(&out);
    assert!(
        summary.contains("1 stopped at the race (--stop-on-race)"),
        "{summary}"
    );
    assert!(!summary.contains("cut by a bound"), "{summary}");
    assert!(
        summary.contains("distinct final stores: 0 (no execution ran to its end)"),
        "{summary}"
    );
    assert!(!summary.contains("with a barrier after"), "{summary}");
}

#[test]
fn jobs_a_search_cannot_use_are_said_so() {
    let out = explore(&["--exhaustive", "--preemption-bound", "1", "--jobs", "2"]);
    assert!(
        stdout(&out)
            .contains("--jobs: one thread (a preemption-bounded search runs on one thread)"),
        "{}",
        text(&out)
    );
    let out = explore(&["--exhaustive", "--preemption-bound", "1", "--json"]);
    assert!(json(&out)["jobs_ignored"].is_null());
    let out = explore(&[
        "--exhaustive",
        "--preemption-bound",
        "1",
        "--jobs",
        "2",
        "--json",
    ]);
    assert_eq!(
        json(&out)["jobs_ignored"],
        "a preemption-bounded search runs on one thread"
    );
}

#[test]
fn long_arrays_are_summarised() {
    let dir = tmp("explore-long");
    let out = ksim(&[
        "explore",
        "examples/kogge_stone.ksim",
        "-D",
        "n=64",
        "--input",
        "in=ones",
        "--random",
        "2",
        "--report-dir",
        dir.to_str().unwrap(),
    ]);
    let summary = stdout(&out);
    assert!(summary.contains("in = 1×64"), "{summary}");
    assert!(
        summary.contains(
            "out = 1 2 3 4 5 6 7 8 ... 57 58 59 60 61 62 63 64 (64 values; --json has them all)"
        ),
        "{summary}"
    );
}

#[test]
fn pct_runs_without_a_depth_at_depth_3() {
    let out = explore(&["--pct", "5", "--seed", "1", "--json"]);
    assert_eq!(json(&out)["depth"], 3, "{}", text(&out));
}

#[test]
fn a_written_out_schedule_that_is_malformed_is_a_usage_error() {
    let out = run_with("0 1×0", &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("`1×0` is not a run of a schedule"),
        "{}",
        text(&out)
    );
    let out = run_with("0 9", &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
}
