//! `--atomicity statement|access` (issue 10 item 2): under `access` each read and each
//! write of shared memory is its own step (`interp::atomicity`). A lost update shows up as
//! a second final store; the races are the same set as under `statement` on every example;
//! both engines agree under `access` (tests/engines.rs); race reports keep the atomicity
//! and replay under it.

mod common;
use common::{ksim, stdout, text};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::PathBuf;

const LOST_UPDATE: &str = "tests/kernels/lost_update.ksim";
const SPLIT_CONDITIONAL: &str = "tests/kernels/split_conditional.ksim";

fn explore(atomicity: &str) -> String {
    let o = ksim(&[
        "explore",
        LOST_UPDATE,
        "--exhaustive",
        "--atomicity",
        atomicity,
        "--no-reports",
    ]);
    assert_eq!(o.status.code(), Some(1), "the race is found: {}", text(&o));
    stdout(&o)
}

#[test]
fn a_lost_update_is_a_second_final_store_under_access_only() {
    let s = explore("statement");
    assert!(s.contains("distinct final stores: 1\n"), "{s}");
    assert!(s.contains("x = 2"), "{s}");
    assert!(
        s.contains(
            "cannot change the arrays' final values on this input under statement atomicity"
        ),
        "{s}"
    );
    let a = explore("access");
    assert!(a.contains("distinct final stores: 2\n"), "{a}");
    assert!(a.contains("x = 1") && a.contains("x = 2"), "{a}");
    assert!(a.contains("atomicity: access"), "{a}");
    assert!(
        a.contains("schedule-dependent: 2 distinct final stores"),
        "{a}"
    );
}

#[test]
fn explore_json_names_the_atomicity() {
    for atomicity in ["statement", "access"] {
        let o = ksim(&[
            "explore",
            LOST_UPDATE,
            "--exhaustive",
            "--atomicity",
            atomicity,
            "--no-reports",
            "--json",
        ]);
        let doc: Value = serde_json::from_slice(&o.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", text(&o)));
        assert_eq!(doc["launch"]["atomicity"], atomicity, "{}", text(&o));
    }
}

#[test]
fn trace_names_the_split_read_and_hides_temporaries() {
    let o = ksim(&["trace", LOST_UPDATE, "--atomicity", "access"]);
    let t = stdout(&o);
    let reads: Vec<&str> = t.lines().filter(|l| l.contains("S-READ")).collect();
    assert_eq!(reads.len(), 2, "one read step per thread: {t}");
    assert!(reads[0].contains("x[0] = x[0] + 1;"), "{t}");
    assert!(reads[0].contains("read x[0]: 0"), "{t}");
    assert!(!t.contains('%'), "no temporary shows: {t}");
    let o = ksim(&["trace", LOST_UPDATE]);
    assert!(!stdout(&o).contains("S-READ"), "{}", text(&o));
}

/// The race keys of `ksim races --json` and the exit code. The step numbers count the
/// split steps, and `count` (how many access pairs hit the key) can count the split steps
/// of one statement separately: both are left out, the set of races is compared.
fn race_keys(args: &[&str], atomicity: &str) -> (Option<i32>, BTreeSet<String>) {
    let mut all = vec!["races"];
    all.extend(args);
    all.extend(["--json", "--no-reports", "--atomicity", atomicity]);
    let o = ksim(&all);
    let doc: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{all:?}: not JSON ({e}): {}", text(&o)));
    assert_eq!(doc["launch"]["atomicity"], atomicity);
    let keys = doc["races"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let mut r = r.clone();
            r.as_object_mut().unwrap().remove("count");
            for side in ["first", "second"] {
                r[side].as_object_mut().unwrap().remove("step");
            }
            r.to_string()
        })
        .collect();
    (o.status.code(), keys)
}

#[test]
fn races_are_the_same_set_under_both_atomicities() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "ksim"))
        .collect();
    files.sort();
    assert!(files.len() >= 13);
    let mut racy = 0;
    for path in &files {
        let file = path.to_str().unwrap();
        let src = std::fs::read_to_string(path).unwrap();
        let input = if src.contains(" in[") {
            "in=random:5"
        } else {
            "array=iota"
        };
        for n in ["n=8", "n=256"] {
            let args = [file, "-D", n, "--input", input];
            let statement = race_keys(&args, "statement");
            let access = race_keys(&args, "access");
            assert_eq!(statement, access, "{args:?}");
            racy += usize::from(!statement.1.is_empty());
        }
    }
    for args in [
        &[LOST_UPDATE][..],
        &[SPLIT_CONDITIONAL, "--input", "a=1,0,2,5"][..],
    ] {
        let statement = race_keys(args, "statement");
        assert!(!statement.1.is_empty(), "{args:?}");
        assert_eq!(statement, race_keys(args, "access"), "{args:?}");
        racy += 1;
    }
    assert!(racy > 2, "racy examples are compared too");
}

#[test]
fn conditional_loads_stay_conditional() {
    // Thread 3 would read a[4] (out of bounds) if `i < 3 && a[i + 1] > 0` read eagerly.
    let args = [SPLIT_CONDITIONAL, "--input", "a=1,0,2,5", "--json"];
    let run = |atomicity: &str| {
        let mut all = vec!["run"];
        all.extend(args);
        all.extend(["--atomicity", atomicity]);
        let o = ksim(&all);
        let doc: Value = serde_json::from_slice(&o.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", text(&o)));
        assert!(doc["fault"].is_null(), "{}", text(&o));
        doc["arrays"].clone()
    };
    assert_eq!(run("statement"), run("access"));
}

#[test]
fn replay_keeps_the_atomicity_of_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let o = ksim(&[
        "explore",
        LOST_UPDATE,
        "--exhaustive",
        "--atomicity",
        "access",
        "--report-dir",
        d,
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let mut reports: Vec<PathBuf> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    reports.sort();
    assert!(!reports.is_empty(), "{}", text(&o));
    for report in reports {
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
        assert_eq!(doc["launch"]["atomicity"], "access");
        let r = ksim(&["replay", report.to_str().unwrap()]);
        let t = text(&r);
        assert!(t.contains("reproduced"), "{}: {t}", report.display());
    }
}

#[test]
fn a_bad_atomicity_is_a_usage_error() {
    let o = ksim(&["run", LOST_UPDATE, "--atomicity", "word"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).contains("expected statement or access"),
        "{}",
        text(&o)
    );
}
