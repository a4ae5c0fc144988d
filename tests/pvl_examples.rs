//! Issue 27: the seeds' VerCors programs in `examples/vercors/` run clean, and each broken
//! twin is caught with the message a user needs (exit codes exact).

use std::path::PathBuf;

mod common;
use common::{ksim, ksim_in, root, stdout, text, tmp};

const UPSWEEP: [&str; 6] = ["-D", "N=8", "-D", "H=4", "--input", "input=iota"];
const ROTATION: [&str; 4] = ["-D", "size=8", "--input", "array=iota"];
const SCAN_2D: [&str; 6] = ["-D", "N=8", "-D", "H=4", "--input", "input=iota"];
const SCAN_1D: [&str; 4] = ["-D", "N=8", "--input", "input=iota"];

/// `ksim run examples/vercors/NAME.pvl args`: exit code and output.
fn run(name: &str, args: &[&str]) -> (Option<i32>, String) {
    let f = format!("examples/vercors/{name}.pvl");
    let mut a = vec!["run", f.as_str()];
    a.extend(args);
    let o = ksim(&a);
    (o.status.code(), text(&o))
}

#[test]
fn the_seed_programs_run_clean_with_their_permissions_checked() {
    for (name, args) in [("left_rotation", &ROTATION[..]), ("upsweep", &UPSWEEP[..])] {
        let (code, t) = run(name, args);
        assert_eq!(code, Some(0), "{name}: {t}");
        assert!(t.contains("permissions are checked"), "{name}: {t}");
        assert!(t.contains("no race, fault or divergence"), "{name}: {t}");
    }
    let (_, t) = run("left_rotation", &ROTATION);
    assert!(t.contains("array = 1 2 3 4 5 6 7 0"), "{t}");
    let (_, t) = run("upsweep", &UPSWEEP);
    // The root holds the sum 0 + 1 + ... + 7.
    assert!(t.contains("[3] 28 0 0 0 0 0 0 0"), "{t}");
}

#[test]
fn a_fraction_off_is_a_violation_at_the_write() {
    let (code, t) = run("left_rotation_fraction_off", &ROTATION);
    assert_eq!(code, Some(1), "{t}");
    assert!(t.contains("a write without the whole permission"), "{t}");
    assert!(
        t.contains("location array[0], held 1/2, needed 1 in thread 0"),
        "{t}"
    );
    assert!(t.contains("left_rotation_fraction_off.pvl:31:7"), "{t}");
}

#[test]
fn a_barrier_that_hands_out_more_than_it_takes_is_a_violation() {
    let (code, t) = run("upsweep_barrier_hands_out_more", &UPSWEEP);
    assert_eq!(code, Some(1), "{t}");
    assert!(
        t.contains("a barrier hands out more permission than its threads gave it"),
        "{t}"
    );
    assert!(t.contains("location tree[2][0], held 0, needed 1"), "{t}");
    assert!(
        t.contains("upsweep_barrier_hands_out_more.pvl:47:19"),
        "{t}"
    );
}

#[test]
fn an_invariant_off_by_one_fails_at_the_loop_head_with_its_values() {
    let (code, t) = run("upsweep_invariant_off_by_one", &UPSWEEP);
    assert_eq!(code, Some(1), "{t}");
    assert!(
        t.contains("a loop invariant does not hold at the loop head"),
        "{t}"
    );
    assert!(t.contains("level = 3, H = 4"), "{t}");
    assert!(t.contains("upsweep_invariant_off_by_one.pvl:36:7"), "{t}");
}

#[test]
fn a_wrong_old_relation_fails_the_postcondition() {
    let (code, t) = run("left_rotation_wrong_old", &ROTATION);
    assert_eq!(code, Some(1), "{t}");
    assert!(t.contains("a postcondition does not hold"), "{t}");
    assert!(t.contains("left_rotation_wrong_old.pvl:19:7"), "{t}");
    assert!(t.contains("array[tid] == \\old(array[tid])"), "{t}");
}

#[test]
fn the_racy_twins_race_report_replays() {
    let d = tmp("pvl-examples-racy");
    let f = root().join("examples/vercors/left_rotation_racy.pvl");
    let mut a = vec!["races", f.to_str().unwrap()];
    a.extend(ROTATION);
    let o = ksim_in(&d, &a);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let reports: Vec<PathBuf> = std::fs::read_dir(d.join("ksim-reports"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert!(!reports.is_empty());
    let o = ksim_in(&d, &["replay", reports[0].to_str().unwrap()]);
    assert!(stdout(&o).contains("race reproduced"), "{}", text(&o));
}

#[test]
fn no_specs_runs_the_broken_twins_without_their_checks() {
    let (code, t) = run(
        "left_rotation_wrong_old",
        &[&ROTATION[..], &["--no-specs"]].concat(),
    );
    assert_eq!(code, Some(0), "{t}");
    assert!(t.contains("array = 1 2 3 4 5 6 7 0"), "{t}");
}

/// A race found with `--no-specs` replays without the specifications too: the report keeps
/// the flag (with the checks on, their steps change the schedule and the replay failed).
#[test]
fn a_race_report_made_without_specs_replays_without_them() {
    let d = tmp("pvl-examples-nospecs-replay");
    let f = root().join("examples/vercors/left_rotation_racy.pvl");
    let mut a = vec!["races", f.to_str().unwrap(), "--no-specs"];
    a.extend(ROTATION);
    let o = ksim_in(&d, &a);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let reports: Vec<PathBuf> = std::fs::read_dir(d.join("ksim-reports"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(reports.len(), 2, "{}", text(&o));
    for r in reports {
        let saved = std::fs::read_to_string(&r).unwrap();
        assert!(saved.contains("\"no_specs\": true"), "{saved}");
        let o = ksim_in(&d, &["replay", r.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(1), "{}", text(&o));
        assert!(stdout(&o).contains("race reproduced"), "{}", text(&o));
    }
}

#[test]
fn blellochs_scan_runs_clean_with_1d_and_with_2d_tree_storage() {
    for (name, args) in [("blelloch_2d", &SCAN_2D[..]), ("blelloch_1d", &SCAN_1D[..])] {
        let (code, t) = run(name, args);
        assert_eq!(code, Some(0), "{name}: {t}");
        assert!(t.contains("permissions are checked"), "{name}: {t}");
        assert!(t.contains("no race, fault or divergence"), "{name}: {t}");
        // The exclusive prefix sum of 0 1 ... 7 (also what the postcondition checks).
        assert!(t.contains("output = 0 0 1 3 6 10 15 21"), "{name}: {t}");
        // No race on any explored schedule either (the permissions checked on each).
        let f = format!("examples/vercors/{name}.pvl");
        let mut a = vec!["explore", "--random", "10", f.as_str(), "-q"];
        a.extend(args);
        let o = ksim(&a);
        assert_eq!(o.status.code(), Some(0), "{name}: {}", text(&o));
    }
    // The seed's own size: N = 32, H = 6.
    let (code, t) = run(
        "blelloch_2d",
        &["-D", "N=32", "-D", "H=6", "--input", "input=iota"],
    );
    assert_eq!(code, Some(0), "{t}");
    assert!(t.contains("output = 0 0 1 3 6 10 15 21 28 "), "{t}");
}

#[test]
fn the_seeds_down_sweep_skips_the_roots_step_and_fails_the_postcondition() {
    let (code, t) = run("blelloch_2d_root_step_skipped", &SCAN_2D);
    assert_eq!(code, Some(1), "{t}");
    assert!(
        t.contains(
            "a postcondition does not hold at the function's exit (`__ensures`) in thread 0"
        ),
        "{t}"
    );
    assert!(t.contains("blelloch_2d_root_step_skipped.pvl:16:3"), "{t}");
    assert!(t.contains("ensures output[0] == 0;"), "{t}");
    assert!(t.contains("output = 6 6 7 9 22 26 31 37"), "{t}");
}

#[test]
fn a_node_the_barrier_does_not_hand_out_is_a_write_without_permission() {
    let (code, t) = run("blelloch_1d_node_not_handed_out", &SCAN_1D);
    assert_eq!(code, Some(1), "{t}");
    assert!(
        t.contains("a write without the whole permission (`__perm_write`): location tree[2], held 0, needed 1 in thread 0"),
        "{t}"
    );
    assert!(
        t.contains("blelloch_1d_node_not_handed_out.pvl:47:11"),
        "{t}"
    );
}
