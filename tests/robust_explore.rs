//! Issue 13 ("never crash, never hang, never an untrue all clear"), on the built binary:
//! `explore`, `replay`, `run --schedule`, `races` and `verify-scan` with extreme options,
//! unbounded files, interrupts and report directories that cannot be written.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};
mod common;
use common::{ksim_in, text};

fn spawn_in(dir: &Path, args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_ksim"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ksim starts")
}

fn last_line(o: &Output) -> String {
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    out.lines().last().unwrap_or("").to_string()
}

/// A fresh directory holding `files`.
fn tmp(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ksim-robust-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("tmp dir");
    for (f, text) in files {
        std::fs::write(d.join(f), text).expect("write");
    }
    d
}

/// Waits for `child` for at most `limit` (a guard against a hang, not a timing check).
fn wait_or_kill(mut child: Child, limit: Duration) -> Output {
    let start = Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            let o = child.wait_with_output().expect("output");
            panic!("ksim did not stop: {}", text(&o));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().expect("output")
}

/// Issue 13, item 1: thread 0 never terminates; threads 1 and 2 race on `a[0]`.
const SPIN_THEN_RACE: &str = "kernel looper(global int a[1]) launch(local_size = 4) {\n\
    if (tid == 0) { int i = 0; while (i >= 0) { i = i + 1; if (i > 1000) i = 0; } }\n\
    if (tid == 1) a[0] = 1;\n\
    if (tid == 2) a[0] = 2;\n}\n";

/// Every thread spins forever.
const SPIN: &str = "kernel spin(global int a[1]) launch(local_size = 2) {\n\
    int i = 0; while (i >= 0) { i = i + 1; if (i > 1000) i = 0; }\n}\n";

/// A race in the first barrier interval, then a very long loop.
const RACE_THEN_LONG: &str = "kernel racelong(global int a[2]) launch(local_size = 4) {\n\
    a[tid % 2] = tid;\n\
    barrier();\n\
    int i = 0; while (i < 2000000000) { i = i + 1; }\n}\n";

#[test]
fn a_thread_at_the_step_bound_does_not_hide_a_race() {
    let d = tmp("item1", &[("loop.ksim", SPIN_THEN_RACE)]);
    let o = ksim_in(
        &d,
        &[
            "explore",
            "loop.ksim",
            "--exhaustive",
            "--json",
            "--max-steps",
            "100000",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(j["races"].as_array().unwrap().len(), 1, "{j}");
    assert_eq!(j["verdict"], "EXHAUSTIVE");
    assert!(j["non_terminating"]["count"].as_u64().unwrap() >= 1);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn extreme_options_are_usage_errors() {
    let d = tmp("item8", &[("loop.ksim", SPIN_THEN_RACE)]);
    let scan = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/kogge_stone.ksim");
    for args in [
        &[
            "explore",
            "loop.ksim",
            "--exhaustive",
            "--max-steps",
            "100000",
            "--timeout",
            "1e20",
        ][..],
        &["explore", "loop.ksim", "--exhaustive", "--timeout", "0"],
        &["verify-scan", scan, "-D", "n=4", "--timeout", "1e20"],
        &["verify-scan", scan, "-D", "n=4", "--timeout", "0"],
        &["verify-scan", scan, "-D", "n=4", "--threads", "100000"],
        &[
            "explore",
            "loop.ksim",
            "--pct",
            "5",
            "--depth",
            "4294967295",
        ],
        &[
            "explore",
            "loop.ksim",
            "--random",
            "5",
            "--max-steps",
            "100000",
            "--jobs",
            "100000",
        ],
        &["races", "loop.ksim", "--jobs", "100000"],
        &["run", "loop.ksim", "--engine", "fast", "--jobs", "100000"],
        &[
            "explore",
            "loop.ksim",
            "--exhaustive",
            "--max-executions",
            "0",
        ],
    ] {
        let o = ksim_in(&d, args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("error:"),
            "{args:?}: {}",
            text(&o)
        );
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn endless_files_are_refused() {
    let d = tmp("item11", &[("loop.ksim", SPIN_THEN_RACE)]);
    for args in [
        &["run", "/dev/zero"][..],
        &["run", "loop.ksim", "--schedule", "@/dev/zero"],
        &["replay", "/dev/zero"],
    ] {
        let o = ksim_in(&d, args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        assert!(text(&o).contains("larger than the limit"), "{}", text(&o));
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[cfg(unix)]
#[test]
fn ctrl_c_stops_one_long_execution() {
    let d = tmp("sigint", &[("spin.ksim", SPIN)]);
    for mode in [&["--random", "1"][..], &["--exhaustive"]] {
        let mut args = vec!["explore", "spin.ksim", "--max-steps", "4000000000", "-q"];
        args.extend_from_slice(mode);
        let child = spawn_in(&d, &args);
        // Time to start and install the handler.
        std::thread::sleep(Duration::from_secs(2));
        unsafe {
            libc::kill(child.id() as libc::pid_t, libc::SIGINT);
        }
        let o = wait_or_kill(child, Duration::from_secs(300));
        assert_eq!(o.status.code(), Some(0), "{mode:?}: {}", text(&o));
        assert_eq!(last_line(&o), "INCOMPLETE (interrupted)", "{}", text(&o));
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn an_unwritable_report_dir_still_gives_the_summary() {
    let long = SPIN_THEN_RACE.replace("looper", &"k".repeat(300));
    let d = tmp(
        "item12",
        &[
            ("loop.ksim", SPIN_THEN_RACE),
            ("long.ksim", &long),
            ("a-file", "x"),
        ],
    );
    let o = ksim_in(
        &d,
        &[
            "explore",
            "loop.ksim",
            "--exhaustive",
            "--max-steps",
            "100000",
            "--report-dir",
            "a-file",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("races: 1 distinct"), "{}", text(&o));
    assert!(text(&o).contains("warning: race reports cannot be written"));
    assert_eq!(last_line(&o), "EXHAUSTIVE");
    // A 300-character kernel name: the report's file name is cut to fit.
    let o = ksim_in(
        &d,
        &[
            "explore",
            "long.ksim",
            "--exhaustive",
            "--max-steps",
            "100000",
            "--report-dir",
            "r",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let names: Vec<String> = std::fs::read_dir(d.join("r"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
    assert!(names[0].len() <= 255 && names[0].ends_with(".json"));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_killed_exploration_keeps_the_reports_of_races_found() {
    let d = tmp("killed", &[("race.ksim", RACE_THEN_LONG)]);
    let mut child = spawn_in(
        &d,
        &[
            "explore",
            "race.ksim",
            "--exhaustive",
            "--max-steps",
            "100000000000",
            "-q",
        ],
    );
    let start = Instant::now();
    let report = loop {
        let found = std::fs::read_dir(&d)
            .unwrap()
            .filter_map(|e| e.ok())
            .find(|e| e.file_name() == "ksim-reports")
            .and_then(|_| std::fs::read_dir(d.join("ksim-reports")).ok())
            .and_then(|mut r| r.find_map(|e| e.ok()))
            .map(|e| e.path());
        if let Some(p) = found.filter(|p| p.extension().is_some_and(|x| x == "json")) {
            break p;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "ksim ended before writing a report"
        );
        assert!(start.elapsed() < Duration::from_secs(300), "no report");
        std::thread::sleep(Duration::from_millis(50));
    };
    child.kill().unwrap();
    child.wait().unwrap();
    let o = ksim_in(&d, &["replay", report.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("race reproduced"), "{}", text(&o));
    let _ = std::fs::remove_dir_all(&d);
}

/// A race report of `loop.ksim` in `d`, written by `explore`.
fn report_of(d: &Path) -> (PathBuf, serde_json::Value) {
    let o = ksim_in(
        d,
        &[
            "explore",
            "loop.ksim",
            "--exhaustive",
            "--max-steps",
            "100000",
            "--report-dir",
            "r",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let path = std::fs::read_dir(d.join("r"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let doc = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    (path, doc)
}

#[test]
fn replay_and_run_say_the_truth_about_a_schedule() {
    let d = tmp("item14", &[("loop.ksim", SPIN_THEN_RACE)]);
    let (path, doc) = report_of(&d);
    let o = ksim_in(&d, &["replay", path.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("race reproduced"));
    let max = u64::MAX;
    for (name, runs, code, says) in [
        ("threads", serde_json::json!([[99, 1]]), 2, "thread 99"),
        ("empty", serde_json::json!([]), 2, "empty"),
        (
            "overflow",
            serde_json::json!([[1, max], [2, max]]),
            2,
            "2^64",
        ),
        // The kernel is unchanged, so a race not reproduced is said to be a bug (exit 2).
        ("mismatch", serde_json::json!([[3, 1]]), 2, "NOT reproduced"),
    ] {
        let mut bad = doc.clone();
        bad["schedule"]["runs"] = runs;
        let p = d.join(format!("{name}.json"));
        std::fs::write(&p, bad.to_string()).unwrap();
        let o = ksim_in(&d, &["replay", p.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(code), "{name}: {}", text(&o));
        assert!(text(&o).contains(says), "{name}: {}", text(&o));
        let at = format!("@{}", p.display());
        let o = ksim_in(&d, &["run", "loop.ksim", "--schedule", &at]);
        // `run --schedule` with a schedule that does not fit: exit 1, as it found that.
        let run_code = if name == "mismatch" { 1 } else { code };
        assert_eq!(o.status.code(), Some(run_code), "run {name}: {}", text(&o));
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// `--max-executions` bounds the work of the search: executions pruned as redundant count
/// too (a racy kernel can prune hundreds of thousands between two complete ones).
#[test]
fn max_executions_counts_pruned_executions_too() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let o = ksim_in(
        root,
        &[
            "explore",
            "--exhaustive",
            "examples/blelloch_missing_barrier.ksim",
            "-D",
            "n=8",
            "--input",
            "in=iota",
            "--no-reports",
            "--max-executions",
            "50",
        ],
    );
    let t = text(&o);
    let line = t
        .lines()
        .find(|l| l.starts_with("executions: "))
        .unwrap_or_else(|| panic!("{t}"));
    let num = |after: &str| -> u64 {
        let rest = line.split(after).next().unwrap().trim();
        rest.rsplit(|c: char| !c.is_ascii_digit())
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    let (complete, pruned) = (num(" complete"), num(" pruned"));
    assert!(pruned > 0, "the kernel prunes: {line}");
    assert_eq!(complete + pruned, 50, "{line}");
    assert!(t.contains("INCOMPLETE (max-executions)"), "{t}");
}

/// A step-bound cut that leaves a work-group before a barrier it could still pass: the
/// race after that barrier (seen by `run --schedule round-robin`) is out of the search's
/// sight, so the verdict is INCOMPLETE (step bound), never "races: none ... EXHAUSTIVE".
#[test]
fn a_cut_that_hides_a_barrier_is_incomplete_not_exhaustive() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let kernel = "tests/kernels/spin_then_barrier.ksim";
    let rr = ksim_in(
        root,
        &[
            "run",
            kernel,
            "--max-steps",
            "2000",
            "--schedule",
            "round-robin",
        ],
    );
    assert!(text(&rr).contains("data race"), "{}", text(&rr));
    let o = ksim_in(
        root,
        &[
            "explore",
            "--exhaustive",
            kernel,
            "--max-steps",
            "2000",
            "--no-reports",
        ],
    );
    let t = text(&o);
    let found = !t.contains("races: none");
    assert!(
        found || t.contains("INCOMPLETE (step bound)"),
        "a hidden race with a complete verdict: {t}"
    );
    assert!(!t.contains("EXHAUSTIVE") || found, "{t}");
}
