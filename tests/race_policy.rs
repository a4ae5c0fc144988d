//! `--race-policy strict|same-value` (issue 10 item 4): under `same-value` a pair whose
//! writes store the value the element held, or the same value as the other write, is
//! benign: listed as a warning, exit code 0 when nothing else was found; any other race is
//! still an error. Every output names the policy; both engines and the explorer agree.

mod common;
use common::{ksim, stdout, text, text_without_engine};
use serde_json::Value;

const WRITE_ZERO: &str = "tests/kernels/write_zero.ksim";
const WRITE_BACK: &str = "tests/kernels/write_back.ksim";
const WRITE_TID: &str = "tests/kernels/write_tid.ksim";
const WRITE_HALF: &str = "tests/kernels/write_half.ksim";

fn json(args: &[&str]) -> (Option<i32>, Value) {
    let o = ksim(args);
    let doc = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{args:?}: not JSON ({e}): {}", text(&o)));
    (o.status.code(), doc)
}

/// `races` under each policy: exit code, whether every race listed is benign, how many.
fn races(file: &str, n: &str, policy: &str) -> (Option<i32>, Vec<bool>) {
    let (code, doc) = json(&[
        "races",
        file,
        "-D",
        n,
        "--race-policy",
        policy,
        "--json",
        "--no-reports",
    ]);
    assert_eq!(doc["launch"]["race_policy"], policy, "{file}");
    let benign = doc["races"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["benign"].as_bool().expect("benign is a bool"))
        .collect();
    (code, benign)
}

#[test]
fn same_value_writes_are_benign_under_same_value_only() {
    // 4 threads run sequentially, 300 in lock-step batches, 5000 in parallel chunks.
    for n in ["n=4", "n=300", "n=5000"] {
        for file in [WRITE_ZERO, WRITE_BACK] {
            let (code, benign) = races(file, n, "strict");
            assert_eq!(code, Some(1), "{file} {n} strict");
            assert!(
                !benign.is_empty() && benign.iter().all(|b| !b),
                "{file} {n}"
            );
            let (code, benign) = races(file, n, "same-value");
            assert_eq!(code, Some(0), "{file} {n} same-value");
            assert!(
                !benign.is_empty() && benign.iter().all(|b| *b),
                "{file} {n}"
            );
        }
    }
}

#[test]
fn different_values_are_still_an_error() {
    for n in ["n=4", "n=300"] {
        let (code, benign) = races(WRITE_TID, n, "same-value");
        assert_eq!(code, Some(1), "{n}");
        assert_eq!(benign, vec![false], "{n}");
        // The first pair (threads 0 and 1) is benign, later ones are not: both listed,
        // and the harmful one decides.
        let (code, benign) = races(WRITE_HALF, n, "same-value");
        assert_eq!(code, Some(1), "{n}");
        assert!(benign.contains(&true) && benign.contains(&false), "{n}");
    }
}

#[test]
fn text_output_names_the_policy_and_warns() {
    let o = ksim(&[
        "races",
        WRITE_ZERO,
        "-D",
        "n=4",
        "--race-policy",
        "same-value",
        "--no-reports",
    ]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(t.contains("Warning: benign data race on a[0]"), "{t}");
    assert!(t.contains("both writes store 0"), "{t}");
    assert!(
        stdout(&o).starts_with("no harmful race for this input"),
        "{t}"
    );
    assert!(stdout(&o).contains("race policy same-value"), "{t}");
    let o = ksim(&["races", WRITE_ZERO, "-D", "n=4", "--no-reports"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains("race policy strict"), "{}", text(&o));
    let o = ksim(&[
        "races",
        WRITE_BACK,
        "-D",
        "n=4",
        "--race-policy",
        "same-value",
    ]);
    assert!(
        text(&o).contains("the value the element already held"),
        "{}",
        text(&o)
    );
}

#[test]
fn run_engines_agree_under_same_value() {
    for file in [WRITE_ZERO, WRITE_BACK, WRITE_TID, WRITE_HALF] {
        for n in ["n=4", "n=300"] {
            let args = |engine| {
                vec![
                    "run",
                    file,
                    "-D",
                    n,
                    "--race-policy",
                    "same-value",
                    "--engine",
                    engine,
                ]
            };
            let r = ksim(&args("reference"));
            let f = ksim(&args("fast"));
            assert_eq!(r.status.code(), f.status.code(), "{file} {n}");
            assert_eq!(
                text_without_engine(&r),
                text_without_engine(&f),
                "{file} {n}"
            );
            assert!(text(&r).contains("race policy: same-value"), "{}", text(&r));
        }
    }
    let o = ksim(&[
        "run",
        WRITE_ZERO,
        "-D",
        "n=4",
        "--race-policy",
        "same-value",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(text(&o).contains("no harmful race"), "{}", text(&o));
}

#[test]
fn explore_judges_by_the_policy() {
    for (file, policy, code) in [
        (WRITE_ZERO, "same-value", 0),
        (WRITE_BACK, "same-value", 0),
        (WRITE_ZERO, "strict", 1),
        (WRITE_TID, "same-value", 1),
    ] {
        let o = ksim(&[
            "explore",
            file,
            "-D",
            "n=3",
            "--exhaustive",
            "--race-policy",
            policy,
            "--no-reports",
        ]);
        let t = text(&o);
        assert_eq!(o.status.code(), Some(code), "{file} {policy}: {t}");
        assert!(t.contains(&format!("race policy {policy}")), "{t}");
        let (_, doc) = json(&[
            "explore",
            file,
            "-D",
            "n=3",
            "--exhaustive",
            "--race-policy",
            policy,
            "--json",
            "--no-reports",
        ]);
        assert_eq!(doc["launch"]["race_policy"], policy);
        let benign = doc["races"].as_array().unwrap();
        assert!(!benign.is_empty(), "{file}");
        assert!(
            benign.iter().all(|r| r["benign"] == (code == 0)),
            "{file} {policy}: {doc}"
        );
    }
}

#[test]
fn replay_keeps_the_policy_of_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let o = ksim(&[
        "races",
        WRITE_ZERO,
        "-D",
        "n=4",
        "--race-policy",
        "same-value",
        "--report-dir",
        d,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let report = std::fs::read_dir(d)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(doc["launch"]["race_policy"], "same-value");
    assert_eq!(doc["race"]["key"]["benign"], true);
    let r = ksim(&["replay", report.to_str().unwrap()]);
    let t = text(&r);
    assert!(t.contains("benign data race on a[0]"), "{t}");
    assert!(t.contains("reproduced"), "{t}");
}

/// verify-scan's theorems (POPL 2014 Theorem 4.5 with Lemma 5.4) need race-freedom as
/// Definition 5.2 has it: it takes no other policy.
#[test]
fn verify_scan_takes_no_race_policy() {
    let o = ksim(&[
        "verify-scan",
        "examples/kogge_stone.ksim",
        "-D",
        "n=8",
        "--race-policy",
        "same-value",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}

#[test]
fn a_bad_policy_is_a_usage_error() {
    let o = ksim(&["races", WRITE_ZERO, "--race-policy", "lenient"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).contains("unknown race policy `lenient`"),
        "{}",
        text(&o)
    );
}
