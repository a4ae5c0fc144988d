//! `explore --exhaustive --jobs N` (issue 11.2): the parallel search gives exactly what the
//! one-thread search gives — the whole JSON model (verdict, every count, final stores with
//! their counts and first schedules, races with their shortest schedules, faults, states)
//! and the text — whatever the number of threads, with caching on one and several
//! work-groups, the bounds that stop the search, and where caching is off.

use std::process::Output;

mod common;
use common::{json, ksim, stdout, text};

/// The explore command for `args` with `--jobs jobs`, no reports.
fn explore(args: &[&str], jobs: usize) -> Output {
    let jobs = jobs.to_string();
    let mut all = vec!["explore", "--exhaustive", "--no-reports", "--quiet"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--jobs", &jobs]);
    ksim(&all)
}

/// The JSON model without its timing fields (the only ones that may differ between runs)
/// and `jobs_ignored` (why more than one job was not used: it depends on `--jobs` alone).
fn untimed_json(o: &Output) -> serde_json::Value {
    let mut v = json(o);
    let obj = v.as_object_mut().expect("an object");
    obj.remove("jobs_ignored");
    let timing = ["time_s", "executions_per_s"];
    fn strip(v: &mut serde_json::Value, keys: &[&str]) {
        match v {
            serde_json::Value::Object(m) => {
                for k in keys {
                    m.remove(*k);
                }
                for x in m.values_mut() {
                    strip(x, keys);
                }
            }
            serde_json::Value::Array(a) => a.iter_mut().for_each(|x| strip(x, keys)),
            _ => {}
        }
    }
    for x in obj.values_mut() {
        strip(x, &timing);
    }
    for k in timing {
        obj.remove(k);
    }
    v
}

/// The text summary without its timing line and its `--jobs` line.
fn untimed_text(o: &Output) -> String {
    stdout(o)
        .lines()
        .filter(|l| !l.starts_with("time:") && !l.starts_with("--jobs:"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `--jobs 2` and `--jobs 3` give the JSON model, the text and the exit code of `--jobs 1`.
/// Returns the one-job model.
fn same_for_every_jobs(args: &[&str]) -> serde_json::Value {
    let mut with_json = args.to_vec();
    with_json.push("--json");
    let one = explore(&with_json, 1);
    let code = one.status.code();
    assert!(matches!(code, Some(0) | Some(1)), "{}", text(&one));
    let model = untimed_json(&one);
    let one_text = explore(args, 1);
    for jobs in [2, 3] {
        let o = explore(&with_json, jobs);
        assert_eq!(o.status.code(), code, "--jobs {jobs}: {}", text(&o));
        assert_eq!(
            untimed_json(&o),
            model,
            "--jobs {jobs} JSON differs: {args:?}"
        );
        let t = explore(args, jobs);
        assert_eq!(
            untimed_text(&t),
            untimed_text(&one_text),
            "--jobs {jobs} text differs: {args:?}"
        );
    }
    model
}

fn count(model: &serde_json::Value, field: &str) -> u64 {
    model["executions"][field]
        .as_u64()
        .unwrap_or_else(|| panic!("executions.{field} in {model}"))
}

#[test]
fn racy_kogge_stone_is_the_same_on_every_number_of_jobs() {
    let m = same_for_every_jobs(&[
        "examples/kogge_stone_racy.ksim",
        "-D",
        "n=8",
        "--input",
        "in=iota",
    ]);
    assert_eq!(m["verdict"], "EXHAUSTIVE", "{m}");
    // Many barrier states: the search is split into many segments.
    assert!(m["states"].as_u64().unwrap() > 10, "{m}");
    assert!(count(&m, "complete") > 100, "{m}");
}

#[test]
fn race_free_and_racy_scans_are_the_same_on_every_number_of_jobs() {
    for args in [
        &[
            "examples/kogge_stone.ksim",
            "-D",
            "n=8",
            "--input",
            "in=iota",
        ][..],
        &[
            "examples/blelloch_missing_barrier.ksim",
            "-D",
            "n=4",
            "--input",
            "in=iota",
        ],
        &[
            "examples/scan_off_by_one.ksim",
            "-D",
            "n=4",
            "--input",
            "in=iota",
        ],
        &[
            "examples/brent_kung.ksim",
            "-D",
            "n=8",
            "--input",
            "in=iota",
        ],
    ] {
        same_for_every_jobs(args);
    }
}

#[test]
fn state_caching_hits_are_the_same_on_every_number_of_jobs() {
    // Two work-groups, caching at points where both are between intervals: cache hits.
    let m = same_for_every_jobs(&["tests/kernels/group_tickets.ksim", "-D", "n=2", "-D", "b=3"]);
    assert!(m["executions"]["cache_hits"].as_u64().unwrap() > 0, "{m}");
    // Two work-groups racing on their own local arrays: caching stays on, and each race's
    // schedule needs only its own group's earlier steps.
    let m = same_for_every_jobs(&["tests/kernels/group_local_race.ksim", "-D", "n=3"]);
    assert_eq!(m["caching_off"], serde_json::Value::Null, "{m}");
    assert!(!m["races"].as_array().unwrap().is_empty(), "{m}");
    // One group, racy: hits as well.
    same_for_every_jobs(&[
        "examples/blelloch_missing_barrier.ksim",
        "-D",
        "n=8",
        "--input",
        "in=iota",
        "--max-executions",
        "3000",
    ]);
}

#[test]
fn bounds_keep_their_meaning_on_every_number_of_jobs() {
    let racy = [
        "examples/kogge_stone_racy.ksim",
        "-D",
        "n=8",
        "--input",
        "in=iota",
    ];
    for extra in [
        &["--stop-on-race"][..],
        &["--max-races", "1"],
        &["--max-executions", "40"],
        &["--max-states", "5"],
        &["--preemption-bound", "1"],
    ] {
        let mut args = racy.to_vec();
        args.extend_from_slice(extra);
        let m = same_for_every_jobs(&args);
        assert_ne!(m["verdict"], "EXHAUSTIVE", "{extra:?} cut something: {m}");
    }
}

#[test]
fn sharing_found_during_the_search_restarts_it_on_every_number_of_jobs() {
    let m = same_for_every_jobs(&["tests/kernels/late_shared.ksim"]);
    assert_ne!(m["caching_off"], serde_json::Value::Null, "{m}");
    assert_eq!(m["verdict"], "EXHAUSTIVE", "{m}");
}

#[test]
fn faults_non_termination_and_no_caching_are_the_same_on_every_number_of_jobs() {
    for args in [
        // A runtime fault after a barrier.
        &["tests/kernels/out_of_bounds.ksim", "-D", "n=3"][..],
        // A step-bound cut that leaves a group before its barrier.
        &["tests/kernels/spin_then_barrier.ksim", "--max-steps", "200"],
        // Barrier divergence.
        &["tests/kernels/two_barriers.ksim", "-D", "n=3"],
        // No barrier at all: one segment.
        &["tests/kernels/lost_update.ksim"],
    ] {
        same_for_every_jobs(args);
    }
}

#[test]
fn a_state_reached_after_different_numbers_of_steps_is_the_same_on_every_number_of_jobs() {
    // The barrier state is met first after the longer path, then again in fewer steps: the
    // one-thread search explores it again, and the race after the barrier gets the shorter
    // prefix (see tests/kernels/uneven_steps.ksim).
    let m = same_for_every_jobs(&["tests/kernels/uneven_steps.ksim"]);
    assert_eq!(m["verdict"], "EXHAUSTIVE", "{m}");
    assert!(!m["races"].as_array().unwrap().is_empty(), "{m}");
    // A step bound that only the longer path reaches: the segment's future then depends on
    // the steps taken to it.
    for bound in ["9", "10", "11"] {
        same_for_every_jobs(&["tests/kernels/uneven_steps.ksim", "--max-steps", bound]);
    }
}

#[test]
fn a_timeout_keeps_what_the_split_search_found_before_it() {
    // No bound: the threads search apart and the replay comes after; what they found
    // before the deadline is reported (the replay does not drop it for being late), and
    // the verdict says timeout. About 20 000 executions at n = 10: several seconds.
    let o = explore(
        &[
            "examples/kogge_stone_racy.ksim",
            "-D",
            "n=10",
            "--input",
            "in=iota",
            "--timeout",
            "1",
            "--json",
        ],
        2,
    );
    let m = json(&o);
    assert_eq!(m["verdict"], "INCOMPLETE", "{m}");
    assert_eq!(m["incomplete_reason"], "timeout", "{m}");
    assert!(count(&m, "complete") > 0, "{m}");
    assert!(!m["races"].as_array().unwrap().is_empty(), "{m}");
}
