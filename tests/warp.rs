//! `--warp-size W` on the command line (issue 10 item 3): the warp-synchronous scan of
//! `examples/warp_scan.ksim` is racy under the paper's model, race-free and correct with
//! warps of 32, racy again with warps of 16 for 32 threads; `run` prints the SIMT cost,
//! `trace` one line per warp instruction with its mask, race reports replay under the
//! warp size they were found with, and a bad warp size is a usage error.

mod common;
use common::{json, ksim, stdout, text};
use std::path::PathBuf;

const SCAN: &str = "examples/warp_scan.ksim";

/// `ksim COMMAND examples/warp_scan.ksim -D n=32 --input in=iota` plus `extra`.
fn scan(command: &str, extra: &[&str]) -> std::process::Output {
    let mut args = vec![command, SCAN, "-D", "n=32"];
    if command != "verify-scan" {
        args.extend(["--input", "in=iota"]);
    }
    args.extend(extra);
    ksim(&args)
}

fn out_of(doc: &serde_json::Value) -> Vec<i64> {
    doc["arrays"]["out"][0]
        .as_array()
        .expect("out")
        .iter()
        .map(|v| v.as_i64().expect("int"))
        .collect()
}

#[test]
fn the_warp_scan_races_between_threads_and_not_within_a_warp_of_32() {
    let o = scan("races", &["--no-reports"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("data race on out"), "{}", text(&o));

    let o = scan("races", &["--no-reports", "--warp-size", "32"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let verdict = stdout(&o);
    assert!(
        verdict.starts_with("race-free for this input (32 threads, warps of 32 threads"),
        "{verdict}"
    );

    let o = scan("run", &["--warp-size", "32", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let doc = json(&o);
    let sequential: Vec<i64> = (0..32)
        .scan(0, |s, i| {
            *s += i;
            Some(*s)
        })
        .collect();
    assert_eq!(out_of(&doc), sequential);
    assert_eq!(doc["launch"]["warp_size"], 32);

    let o = scan("races", &["--no-reports", "--warp-size", "16"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("data race on out"), "{}", text(&o));
}

#[test]
fn verify_scan_verifies_the_warp_scan_only_with_warps_of_32() {
    let o = scan("verify-scan", &["--warp-size", "32"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(stdout(&o).contains("warps of 32 threads"), "{}", text(&o));
    let o = scan("verify-scan", &[]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
}

#[test]
fn run_prints_the_simt_cost_in_text_and_json() {
    let o = scan("run", &["--warp-size", "32"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    // One warp: the copy and `int d = 1`, then per round d = 1, 2, 4, 8, 16 the loop test,
    // the `if` (divergent: lanes below d skip), the update of the lanes tid >= d and
    // `d *= 2`; then the test that leaves the loop.
    let lanes = 2 * 32 + 5 * 3 * 32 + (31 + 30 + 28 + 24 + 16) + 32;
    let line = format!(
        "SIMT cost (warps of 32 threads): 23 warp instructions, {:.2} active lanes on average, 5 divergent branches",
        lanes as f64 / 23.0
    );
    assert!(stdout(&o).contains(&line), "{}", text(&o));
    let doc = json(&scan("run", &["--warp-size", "32", "--json"]));
    let total = &doc["simt"]["total"];
    assert_eq!(total["instructions"], 23);
    assert_eq!(total["lane_steps"], lanes);
    assert_eq!(total["divergent_branches"], 5);
    assert_eq!(doc["simt"]["warp_size"], 32);
    // Without --warp-size there is no SIMT cost.
    let doc = json(&scan("run", &["--json"]));
    assert!(doc.get("simt").is_none());
}

#[test]
fn trace_prints_one_line_per_warp_instruction_with_its_mask() {
    let o = ksim(&[
        "trace",
        SCAN,
        "-D",
        "n=4",
        "--input",
        "in=iota",
        "--warp-size",
        "4",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].contains("warp"), "{out}");
    let instr: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| l.contains(" mask "))
        .collect();
    // The copy and `int d = 1`, per round d = 1, 2: test, if, update, `d *= 2`; the
    // last test.
    assert_eq!(instr.len(), 2 + 2 * 4 + 1, "{out}");
    assert!(instr.iter().all(|l| l.contains("g0.w0")), "{out}");
    assert!(
        instr[0].contains("S-ARRAY") && instr[0].contains("mask 1111"),
        "{out}"
    );
    let divergent: Vec<&&str> = instr.iter().filter(|l| l.contains("S-ITE-T/F")).collect();
    assert_eq!(divergent.len(), 2, "{out}");
    assert!(instr.iter().any(|l| l.contains("mask 0111")), "{out}");
    assert!(instr.iter().any(|l| l.contains("mask 0011")), "{out}");
    assert!(out.contains("out[3]: 5 -> 6"), "{out}");
}

#[test]
fn a_race_report_found_under_warps_replays_under_them() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let o = scan("races", &["--warp-size", "16", "--report-dir", d]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let mut reports: Vec<PathBuf> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    reports.sort();
    assert!(!reports.is_empty(), "{}", text(&o));
    for report in reports {
        let doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
        assert_eq!(doc["launch"]["warp_size"], 16);
        let r = ksim(&["replay", report.to_str().unwrap()]);
        assert_eq!(r.status.code(), Some(1), "{}", text(&r));
        assert!(
            text(&r).contains("reproduced"),
            "{}: {}",
            report.display(),
            text(&r)
        );
    }
}

#[test]
fn explore_interleaves_warps() {
    let args = |extra: &[&str]| {
        let mut a = vec![
            "explore",
            SCAN,
            "-D",
            "n=4",
            "--input",
            "in=iota",
            "--no-reports",
        ];
        a.extend_from_slice(extra);
        ksim(&a)
    };
    // One warp: a single execution, race-free; reduction off under warps, said so.
    let o = args(&["--exhaustive", "--warp-size", "4"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        text(&o).contains("reduction: off (--warp-size"),
        "{}",
        text(&o)
    );
    // Two warps of 2: racy under some interleaving of the warps.
    let o = args(&["--exhaustive", "--warp-size", "2"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let o = args(&["--random", "20", "--warp-size", "2"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let o = args(&["--random", "20", "--warp-size", "4"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}

#[test]
fn a_bad_warp_size_is_a_usage_error() {
    for bad in ["0", "-1", "many", ""] {
        for command in ["run", "trace", "races", "explore", "verify-scan"] {
            let mut extra = vec!["--warp-size", bad];
            if command == "explore" {
                extra.push("--exhaustive");
            }
            let o = scan(command, &extra);
            assert_eq!(o.status.code(), Some(2), "{command} {bad}: {}", text(&o));
        }
    }
    let o = scan("run", &["--warp-size", "0"]);
    assert!(
        text(&o).contains("a warp has at least 1 thread"),
        "{}",
        text(&o)
    );
    // A schedule file names warps under --warp-size.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    std::fs::write(&path, r#"{"runs": [[1, 1]]}"#).unwrap();
    let schedule = format!("@{}", path.display());
    let o = scan("run", &["--warp-size", "32", "--schedule", &schedule]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("names warp 1, but the launch has only 1 warp (0..1)"),
        "{}",
        text(&o)
    );
}
