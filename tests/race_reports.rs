//! Issue 11, items 1, 2 and 4, through the binary: shortest race schedules, stopping and
//! bounding exploration, and race reports that last (names that do not collide, replay
//! from anywhere, a changed source refused with the difference shown, `races` reports,
//! `replay --continue`, `run --schedule @report`).

use std::path::{Path, PathBuf};

mod common;
use common::{json, ksim, ksim_in, last_line, root, stdout, text, tmp};

fn reports_in(d: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(d)
        .map(|r| r.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default();
    v.sort();
    v
}

/// 66 threads in 2 groups that all write `A[0]`.
const WRITERS: &str = "kernel writers(global int A[1]) launch(groups = 2, local_size = 33) {\n\
    A[0] = tid;\n}\n";

#[test]
fn kogge_stone_racy_n4_reports_a_14_step_race() {
    let o = ksim(&[
        "explore",
        "--exhaustive",
        "examples/kogge_stone_racy.ksim",
        "-D",
        "n=4",
        "--input",
        "in=iota",
        "--json",
        "--no-reports",
    ]);
    let j = json(&o);
    let race = &j["races"][0];
    let steps: u64 = race["schedule"]["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r[1].as_u64().unwrap())
        .sum();
    assert!(steps <= 14, "{race}");
    assert_eq!(race["shortest"], true);
    // The text says which elements differ between the final stores, and in how many.
    let o = ksim(&[
        "explore",
        "--exhaustive",
        "examples/kogge_stone_racy.ksim",
        "-D",
        "n=4",
        "--input",
        "in=iota",
        "--no-reports",
    ]);
    let out = stdout(&o);
    assert!(
        out.contains("out differs from store #1 at [3] in 1 of 2 stores"),
        "{out}"
    );
    assert!(out.contains("(shortest schedule 14 steps)"), "{out}");
}

#[test]
fn stop_on_race_ends_at_the_first_race() {
    let d = tmp("stop");
    std::fs::write(d.join("w.ksim"), WRITERS).unwrap();
    let o = ksim_in(
        &d,
        &[
            "explore",
            "--exhaustive",
            "--stop-on-race",
            "w.ksim",
            "--no-reports",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert_eq!(last_line(&o), "INCOMPLETE (race found)");
    assert!(stdout(&o).contains("races: 1 distinct"));
    // The state caching line says it is off, and why.
    assert!(stdout(&o).contains("state caching: off (several work-groups"));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn max_races_stops_at_k_races() {
    let d = tmp("maxraces");
    let two = "kernel two(global int a[1], global int b[1]) launch(local_size = 2) {\n\
        a[0] = tid;\n b[0] = a[0];\n}\n";
    std::fs::write(d.join("two.ksim"), two).unwrap();
    let all = json(&ksim_in(
        &d,
        &[
            "explore",
            "--exhaustive",
            "two.ksim",
            "--json",
            "--no-reports",
        ],
    ));
    assert!(all["races"].as_array().unwrap().len() >= 2, "{all}");
    let one = json(&ksim_in(
        &d,
        &[
            "explore",
            "--exhaustive",
            "two.ksim",
            "--json",
            "--no-reports",
            "--max-races",
            "1",
        ],
    ));
    assert_eq!(one["races"].as_array().unwrap().len(), 1);
    assert_eq!(one["incomplete_reason"], "max-races");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn preemption_bound_states_the_bound_and_is_exhaustive_when_nothing_is_cut() {
    let d = tmp("bound");
    std::fs::write(d.join("w.ksim"), WRITERS).unwrap();
    let o = ksim_in(
        &d,
        &[
            "explore",
            "--exhaustive",
            "--preemption-bound",
            "2",
            "w.ksim",
            "--no-reports",
        ],
    );
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        last_line(&o),
        "INCOMPLETE (exhaustive within preemption bound 2: schedules with more preemptions were not explored)"
    );
    assert!(stdout(&o).contains("reduction: off"));
    // Two threads of two steps each, no barrier: 6 schedules in all, every one within a
    // bound of 10 preemptions: EXHAUSTIVE, and the same count as every interleaving.
    let small = "kernel small(global int a[2]) launch(local_size = 2) {\n\
        int x = a[tid];\n a[tid] = x + 1;\n}\n";
    std::fs::write(d.join("s.ksim"), small).unwrap();
    let j = json(&ksim_in(
        &d,
        &[
            "explore",
            "--exhaustive",
            "--preemption-bound",
            "10",
            "s.ksim",
            "--json",
        ],
    ));
    assert_eq!(j["verdict"], "EXHAUSTIVE");
    assert_eq!(j["executions"]["complete"], 6);
    assert_eq!(j["preemption_bound"], 10);
    let j0 = json(&ksim_in(
        &d,
        &[
            "explore",
            "--exhaustive",
            "--preemption-bound",
            "0",
            "s.ksim",
            "--json",
        ],
    ));
    assert_eq!(j0["executions"]["complete"], 1);
    assert_eq!(j0["incomplete_reason"], "preemption bound");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn shrink_shortens_sampled_race_schedules() {
    let run = |shrink: bool| {
        let mut a = vec![
            "explore",
            "--random",
            "5",
            "--seed",
            "1",
            "examples/kogge_stone_racy.ksim",
            "-D",
            "n=8",
            "--json",
            "--no-reports",
        ];
        if shrink {
            a.push("--shrink");
        }
        json(&ksim(&a))
    };
    let len = |j: &serde_json::Value| -> u64 {
        j["races"][0]["schedule"]["runs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r[1].as_u64().unwrap())
            .sum()
    };
    let (plain, shrunk) = (run(false), run(true));
    assert!(
        len(&shrunk) < len(&plain),
        "{} vs {}",
        len(&shrunk),
        len(&plain)
    );
    assert_eq!(shrunk["races"][0]["shortest"], false);
}

/// n = 4 and n = 8 reports coexist; a report replays from another directory, and with
/// the kernel moved away (from the copy of the source it keeps).
#[test]
fn reports_of_two_launches_coexist_and_replay_from_anywhere() {
    let d = tmp("coexist");
    let kernel = root().join("examples/kogge_stone_racy.ksim");
    let k = kernel.to_str().unwrap();
    for n in ["n=4", "n=8"] {
        let o = ksim_in(
            &d,
            &[
                "explore",
                "--random",
                "20",
                k,
                "-D",
                n,
                "--report-dir",
                "r",
                "-q",
            ],
        );
        assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    }
    let reports = reports_in(&d.join("r"));
    assert_eq!(reports.len(), 2, "{reports:?}");
    let elsewhere = tmp("elsewhere");
    for r in &reports {
        let o = ksim_in(&elsewhere, &["replay", r.to_str().unwrap()]);
        assert!(stdout(&o).contains("race reproduced"), "{}", text(&o));
    }
    // The report's folder moved: the kernel is found by its absolute path.
    let moved = elsewhere.join("moved.json");
    std::fs::copy(&reports[0], &moved).unwrap();
    let o = ksim_in(&d, &["replay", moved.to_str().unwrap()]);
    assert!(stdout(&o).contains("race reproduced"), "{}", text(&o));
    // The kernel is nowhere: the report's copy of the source is replayed.
    let mut rep: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&reports[0]).unwrap()).unwrap();
    rep["kernel_path"] = "gone.ksim".into();
    rep["kernel_path_absolute"] = "/nonexistent/gone.ksim".into();
    rep["kernel_path_from_report"] = "gone.ksim".into();
    std::fs::write(&moved, rep.to_string()).unwrap();
    let o = ksim_in(&elsewhere, &["replay", moved.to_str().unwrap()]);
    assert!(stdout(&o).contains("race reproduced"), "{}", text(&o));
    assert!(text(&o).contains("copy of its source kept in the report"));
    let _ = std::fs::remove_dir_all(&d);
    let _ = std::fs::remove_dir_all(&elsewhere);
}

#[test]
fn a_changed_source_is_refused_with_the_difference_unless_forced() {
    let d = tmp("changed");
    let src = std::fs::read_to_string(root().join("examples/kogge_stone_racy.ksim")).unwrap();
    std::fs::write(d.join("k.ksim"), &src).unwrap();
    let o = ksim_in(
        &d,
        &[
            "explore",
            "--exhaustive",
            "k.ksim",
            "-D",
            "n=4",
            "--report-dir",
            "r",
        ],
    );
    assert_eq!(o.status.code(), Some(1));
    let rep = reports_in(&d.join("r")).remove(0);
    let r = rep.to_str().unwrap();
    // An edit after the racing statements (one before them would move their spans, and
    // the race would no longer be the recorded one).
    std::fs::write(d.join("k.ksim"), format!("{src}// edited\n")).unwrap();
    let o = ksim_in(&d, &["replay", r]);
    assert_eq!(o.status.code(), Some(2));
    let t = text(&o);
    assert!(t.contains("refusing to replay"), "{t}");
    assert!(t.contains("\n+// edited\n"), "{t}");
    assert!(t.contains("--- source in the report"), "{t}");
    let o = ksim_in(&d, &["replay", r, "--force"]);
    assert!(stdout(&o).contains("race reproduced"), "{}", text(&o));
    let _ = std::fs::remove_dir_all(&d);
}

/// `races` at n = 2^16 writes a report; `replay` reproduces it, `replay --continue`
/// finishes the run, and `run --schedule @report` says the schedule ended early.
#[test]
fn races_writes_a_replayable_report() {
    let d = tmp("races");
    let k = root().join("examples/kogge_stone_racy.ksim");
    let k = k.to_str().unwrap();
    let o = ksim_in(
        &d,
        &["races", k, "-D", "n=65536", "--report-dir", "r", "--json"],
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let j = json(&o);
    let rep = j["races"][0]["report"]
        .as_str()
        .expect("a report")
        .to_string();
    let rep = d.join(rep);
    let r = rep.to_str().unwrap();
    let o = ksim_in(&d, &["replay", r]);
    assert!(stdout(&o).contains("race reproduced"), "{}", text(&o));
    let run = ksim_in(
        &d,
        &[
            "run",
            k,
            "-D",
            "n=65536",
            "--schedule",
            &format!("@{r}"),
            "--show",
            "in",
        ],
    );
    assert!(
        stdout(&run).contains("the schedule ended after"),
        "{}",
        text(&run)
    );
    assert!(stdout(&run).contains("not a final result"));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn replay_continue_prints_the_final_arrays() {
    let d = tmp("continue");
    let k = root().join("examples/kogge_stone_racy.ksim");
    let o = ksim_in(
        &d,
        &[
            "explore",
            "--exhaustive",
            k.to_str().unwrap(),
            "-D",
            "n=4",
            "--input",
            "in=iota",
            "--report-dir",
            "r",
        ],
    );
    assert_eq!(o.status.code(), Some(1));
    let rep = reports_in(&d.join("r")).remove(0);
    let o = ksim_in(&d, &["replay", "--continue", rep.to_str().unwrap()]);
    let out = stdout(&o);
    assert!(out.contains("race reproduced"), "{out}");
    assert!(
        out.contains("steps of the canonical schedule to the end of the kernel"),
        "{out}"
    );
    let finals = out.split("final arrays:").nth(1).expect("final arrays");
    // The 14-step race schedule, then the canonical schedule: a complete run.
    assert!(finals.contains("out = 0 1 3 7"), "{out}");
    let _ = std::fs::remove_dir_all(&d);
}

/// A format 1 report (no paths but the one as given, no source, no launch hash) still
/// replays.
#[test]
fn format_1_reports_still_replay() {
    let d = tmp("format1");
    let k = root().join("examples/kogge_stone_racy.ksim");
    let o = ksim_in(
        &d,
        &[
            "explore",
            "--exhaustive",
            k.to_str().unwrap(),
            "-D",
            "n=4",
            "--report-dir",
            "r",
        ],
    );
    assert_eq!(o.status.code(), Some(1));
    let rep = reports_in(&d.join("r")).remove(0);
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&rep).unwrap()).unwrap();
    let m = v.as_object_mut().unwrap();
    for f in [
        "kernel_path_absolute",
        "kernel_path_from_report",
        "source",
        "launch_hash",
    ] {
        assert!(m.remove(f).is_some(), "format 2 writes {f}");
    }
    m.insert("format_version".into(), 1.into());
    let old = d.join("v1.json");
    std::fs::write(&old, v.to_string()).unwrap();
    let o = ksim_in(&d, &["replay", old.to_str().unwrap()]);
    assert!(stdout(&o).contains("race reproduced"), "{}", text(&o));
    let _ = std::fs::remove_dir_all(&d);
}

/// A report whose race involves an atomic access keeps the access's kind, so replay finds
/// the same race (the report once read "atomic" back as a read and never reproduced it).
#[test]
fn a_race_with_an_atomic_access_replays() {
    let d = tmp("atomic");
    let k = root().join("tests/kernels/atomic_plain_race.ksim");
    let k = k.to_str().unwrap();
    let o = ksim_in(
        &d,
        &["races", k, "-D", "n=2", "--report-dir", "r", "--json"],
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let rep = d.join(json(&o)["races"][0]["report"].as_str().expect("a report"));
    let body = std::fs::read_to_string(&rep).unwrap();
    assert!(body.contains("\"atomic\""), "{body}");
    let o = ksim_in(&d, &["replay", rep.to_str().unwrap()]);
    assert!(stdout(&o).contains("race reproduced"), "{}", text(&o));
    let _ = std::fs::remove_dir_all(&d);
}
