//! Acceptance tests of `ksim explore` and `ksim replay` (the schedule-exploration issue),
//! run on the built binary.

use std::path::PathBuf;
use std::process::Output;

mod common;
use common::{json, ksim, ksim_in, last_line, root, stdout, text, tmp};

/// The summary without its timing line (the only line that may differ between runs).
fn untimed(o: &Output) -> String {
    stdout(o)
        .lines()
        .filter(|l| !l.starts_with("time:"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn kogge_stone_n8_is_exhaustive_and_race_free() {
    let o = ksim(&[
        "explore",
        "--exhaustive",
        "examples/kogge_stone.ksim",
        "-D",
        "n=8",
        "--input",
        "in=iota",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let out = stdout(&o);
    assert_eq!(last_line(&o), "EXHAUSTIVE", "{out}");
    assert!(out.contains("races: none"), "{out}");
    assert!(out.contains("distinct final stores: 1"), "{out}");
    assert!(out.contains("Lemma 5.4 confirmed"), "{out}");
    assert!(out.contains("executions: 1 complete, 0 pruned"), "{out}");
    assert!(out.contains("out = 0 1 3 6 10 15 21 28"), "{out}");
}

#[test]
fn kogge_stone_racy_reports_the_race_and_replay_reproduces_it() {
    let dir = tmp("racy");
    let d = dir.display().to_string();
    let o = ksim(&[
        "explore",
        "--exhaustive",
        "examples/kogge_stone_racy.ksim",
        "-D",
        "n=4",
        "--input",
        "in=iota",
        "--report-dir",
        &d,
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert_eq!(last_line(&o), "EXHAUSTIVE");
    let all = text(&o);
    assert!(all.contains("data race on out["), "{all}");
    assert!(all.contains("races: 1 distinct"), "{all}");
    assert!(!all.contains("distinct final stores: 1\n"), "{all}");
    let reports: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("report dir")
        .map(|e| e.expect("entry").path())
        .collect();
    assert_eq!(reports.len(), 1, "{reports:?}");
    let rep: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&reports[0]).unwrap()).unwrap();
    assert_eq!(rep["format"], "ksim-race-report");
    assert_eq!(rep["format_version"], 3);
    assert!(rep["source"]
        .as_str()
        .unwrap()
        .contains("kernel kogge_stone_racy"));
    assert!(rep["kernel_path_absolute"]
        .as_str()
        .unwrap()
        .ends_with("examples/kogge_stone_racy.ksim"));
    assert!(rep["launch_hash"].as_str().unwrap().starts_with("fnv1a64:"));
    assert!(rep["source_hash"].as_str().unwrap().starts_with("fnv1a64:"));
    assert_eq!(rep["kernel_path"], "examples/kogge_stone_racy.ksim");
    assert_eq!(rep["launch"]["defines"][0][0], "n");
    assert_eq!(rep["launch"]["inputs"][0][1], "iota");
    assert!(rep["schedule"]["runs"].is_array());
    assert_eq!(rep["race"]["array"], "out");

    let p = reports[0].display().to_string();
    let r = ksim(&["replay", &p]);
    assert_eq!(r.status.code(), Some(1), "{}", text(&r));
    assert!(stdout(&r).contains("race reproduced"), "{}", text(&r));
    assert!(text(&r).contains("data race on out["), "{}", text(&r));
    let t = ksim(&["replay", "--trace", &p]);
    assert_eq!(t.status.code(), Some(1));
    assert!(stdout(&t).contains("S-ARRAY"), "{}", text(&t));
    assert!(stdout(&t).contains("K-BARRIER"), "{}", text(&t));
    // Any schedule can be run: `ksim run --schedule @report`.
    let run = ksim(&[
        "run",
        "examples/kogge_stone_racy.ksim",
        "-D",
        "n=4",
        "--input",
        "in=iota",
        "--schedule",
        &format!("@{p}"),
    ]);
    assert!(text(&run).contains("data race on out["), "{}", text(&run));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn replay_refuses_a_changed_kernel_unless_forced() {
    let dir = tmp("changed");
    let kernel = dir.join("k.ksim");
    let racy = std::fs::read_to_string(root().join("examples/kogge_stone_racy.ksim")).unwrap();
    std::fs::write(&kernel, &racy).unwrap();
    let o = ksim_in(
        &dir,
        &[
            "explore",
            "--exhaustive",
            "k.ksim",
            "-D",
            "n=4",
            "--input",
            "in=iota",
            "-q",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let report = std::fs::read_dir(dir.join("ksim-reports"))
        .expect("default report dir ksim-reports/")
        .next()
        .expect("a report")
        .unwrap()
        .path();
    let p = report.display().to_string();
    // Fix the race: put the barrier back.
    std::fs::write(
        &kernel,
        racy.replace("// barrier();   <- removed", "barrier(); // <- restored"),
    )
    .unwrap();
    let r = ksim_in(&dir, &["replay", &p]);
    assert_eq!(r.status.code(), Some(2), "{}", text(&r));
    assert!(text(&r).contains("has changed"), "{}", text(&r));
    let f = ksim_in(&dir, &["replay", "--force", &p]);
    let out = text(&f);
    assert!(out.contains("stops being feasible at step"), "{out}");
    assert!(out.contains("NOT reproduced"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn random_is_deterministic_and_independent_of_jobs() {
    let args = |jobs: &'static str| {
        vec![
            "explore",
            "--random",
            "1000",
            "--seed",
            "7",
            "examples/kogge_stone_racy.ksim",
            "-D",
            "n=4",
            "--input",
            "in=iota",
            "--no-reports",
            "--jobs",
            jobs,
        ]
    };
    let a = ksim(&args("1"));
    let b = ksim(&args("1"));
    let c = ksim(&args("2"));
    assert_eq!(a.status.code(), Some(1), "{}", text(&a));
    assert!(text(&a).contains("data race on out["), "{}", text(&a));
    assert!(stdout(&a).contains("races: 1 distinct"));
    assert_eq!(untimed(&a), untimed(&b));
    assert_eq!(untimed(&a), untimed(&c));
    assert!(last_line(&a).starts_with("INCOMPLETE ("), "{}", stdout(&a));
}

#[test]
fn pct_is_deterministic_and_prints_its_bound() {
    let args = |jobs: &'static str| {
        vec![
            "explore",
            "--pct",
            "300",
            "--depth",
            "2",
            "--seed",
            "11",
            "examples/kogge_stone_racy.ksim",
            "-D",
            "n=4",
            "--input",
            "in=iota",
            "--no-reports",
            "--jobs",
            jobs,
            "--json",
        ]
    };
    let a = json(&ksim(&args("1")));
    let b = json(&ksim(&args("3")));
    for k in ["final_stores", "races", "executions", "pct", "verdict"] {
        assert_eq!(a[k], b[k], "{k}");
    }
    assert_eq!(a["pct"]["threads"], 4);
    let bound = a["pct"]["bound"].as_f64().unwrap();
    let k = a["pct"]["max_steps"].as_f64().unwrap();
    assert!((bound - 1.0 / (4.0 * k)).abs() < 1e-12);
    assert_eq!(a["races"].as_array().unwrap().len(), 1);
}

#[test]
fn max_executions_makes_the_run_incomplete() {
    let o = ksim(&[
        "explore",
        "--exhaustive",
        "examples/kogge_stone_racy.ksim",
        "-D",
        "n=8",
        "--input",
        "in=iota",
        "--max-executions",
        "10",
        "--no-reports",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert_eq!(
        last_line(&o),
        "INCOMPLETE (max-executions)",
        "{}",
        stdout(&o)
    );
    // Executions pruned as redundant count towards the bound too.
    assert!(
        stdout(&o).contains("executions: 8 complete, 2 pruned"),
        "{}",
        stdout(&o)
    );
    let s = ksim(&[
        "explore",
        "--exhaustive",
        "examples/kogge_stone_racy.ksim",
        "-D",
        "n=8",
        "--input",
        "in=iota",
        "--max-states",
        "5",
        "--no-reports",
    ]);
    assert_eq!(last_line(&s), "INCOMPLETE (max-states)", "{}", stdout(&s));
}

#[test]
fn json_summary_of_exhaustive_matches_text() {
    let o = ksim(&[
        "explore",
        "--exhaustive",
        "examples/kogge_stone_racy.ksim",
        "-D",
        "n=4",
        "--input",
        "in=iota",
        "--no-reports",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let j = json(&o);
    assert_eq!(j["verdict"], "EXHAUSTIVE");
    assert_eq!(j["incomplete_reason"], serde_json::Value::Null);
    assert!(j["final_stores"].as_array().unwrap().len() > 1);
    assert_eq!(j["race_changes_result"], true);
    assert_eq!(j["lemma_5_4_confirmed"], false);
    assert!(j["executions"]["complete"].as_u64().unwrap() >= 1);
    assert!(j["races"][0]["schedule"]["runs"].is_array());
}

#[test]
fn non_termination_and_faults_are_reported() {
    let dir = tmp("nonterm");
    let k = dir.join("spin.ksim");
    std::fs::write(
        &k,
        "kernel spin(local int A[2]) launch(groups = 1, local_size = 2) {\n\
         if (tid == 0) { while (A[0] == 0) { } } else { A[0] = 1; }\n\
         barrier();\n A[tid + 1] = 5;\n}\n",
    )
    .unwrap();
    let o = ksim_in(
        &dir,
        &[
            "explore",
            "--exhaustive",
            "spin.ksim",
            "--max-steps",
            "200",
            "--json",
            "--no-reports",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let j = json(&o);
    // Cuts where thread 0 leaves its loop for the barrier leave the rest to other
    // executions: the verdict says the step bound hid something (see README).
    assert_eq!(j["verdict"], "INCOMPLETE");
    assert_eq!(j["incomplete_reason"], "step bound");
    assert!(j["non_terminating"]["count"].as_u64().unwrap() >= 1, "{j}");
    assert_eq!(j["faults"][0]["kind"], "out-of-bounds", "{j}");
    assert!(!j["races"].as_array().unwrap().is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn usage_errors_exit_2() {
    let o = ksim(&["explore", "examples/kogge_stone.ksim", "-D", "n=4"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    // `--depth` belongs to `--pct` (which no longer needs it: depth 3 by default).
    let o = ksim(&[
        "explore",
        "--random",
        "5",
        "--depth",
        "2",
        "examples/kogge_stone.ksim",
        "-D",
        "n=4",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let o = ksim(&["replay", "/nonexistent/report.json"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}

/// docs/json.md: the keys of every object are in alphabetical order, `explore` included.
#[test]
fn explore_json_keys_are_in_alphabetical_order() {
    let o = ksim(&[
        "explore",
        "--exhaustive",
        "examples/kogge_stone_racy.ksim",
        "-D",
        "n=4",
        "--json",
        "--no-reports",
    ]);
    let out = stdout(&o);
    let top: Vec<&str> = out
        .lines()
        .filter_map(|l| l.strip_prefix("  \"")?.split('"').next())
        .collect();
    assert!(top.len() > 10, "{out}");
    let mut sorted = top.clone();
    sorted.sort();
    assert_eq!(top, sorted);
}
