//! `ksim verify-scan` end to end: exit codes, messages, JSON, and the showcase.

use std::process::Output;

mod common;
use common::{ksim, stdout};

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn kogge_stone_2_20_verifies() {
    let o = ksim(&[
        "verify-scan",
        "examples/kogge_stone.ksim",
        "-D",
        "n=1048576",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(
        stdout(&o)
            .starts_with("verified: generic inclusive prefix sum of length 1048576 (1 test, "),
        "{}",
        stdout(&o)
    );
}

#[test]
fn every_correct_example_verifies_from_the_command_line() {
    for (file, excl) in [
        ("sequential_scan", false),
        ("kogge_stone", false),
        ("sklansky", false),
        ("brent_kung", false),
        ("blelloch", true),
        ("blelloch_tree1d", true),
        ("blelloch_tree2d", true),
    ] {
        let path = format!("examples/{file}.ksim");
        let mut args = vec!["verify-scan", &path, "-D", "n=1024"];
        if excl {
            args.push("--exclusive");
        }
        let o = ksim(&args);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{file}: {}{}",
            stdout(&o),
            stderr(&o)
        );
        let kind = if excl { "exclusive" } else { "inclusive" };
        assert!(
            stdout(&o).contains(&format!(
                "verified: generic {kind} prefix sum of length 1024"
            )),
            "{file}: {}",
            stdout(&o)
        );
    }
}

/// The showcase: right integers with int-add, rejected by verify-scan.
#[test]
fn blelloch_commuted_right_for_ints_rejected_by_verify_scan() {
    let o = ksim(&[
        "run",
        "examples/blelloch_commuted.ksim",
        "-D",
        "n=8",
        "--input",
        "in=iota",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("out = 0 0 1 3 6 10 15 21"),
        "{}",
        stdout(&o)
    );

    let o = ksim(&[
        "verify-scan",
        "examples/blelloch_commuted.ksim",
        "-D",
        "n=8",
        "--exclusive",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("not verified: out[3] is ⊤, expected [0,2]"),
        "{out}"
    );
    assert!(
        out.contains("out[3] = [2 0 1], but an exclusive prefix sum gives [0 1 2]"),
        "{out}"
    );
    assert!(
        out.contains(
            "reproduce: ksim run examples/blelloch_commuted.ksim -D n=8 --monoid list --input in=iota"
        ),
        "{out}"
    );
}

#[test]
fn scan_off_by_one_rejected_with_the_exact_index() {
    let o = ksim(&["verify-scan", "examples/scan_off_by_one.ksim", "-D", "n=8"]);
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    assert!(
        out.contains("not verified: out[4] is [1,4], expected [0,4]"),
        "{out}"
    );
    assert!(out.contains("missing in[0]"), "{out}");
    let o = ksim(&[
        "verify-scan",
        "examples/scan_off_by_one.ksim",
        "-D",
        "n=65536",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    assert!(
        out.contains("not verified: out[32768] is [1,32768], expected [0,32768]"),
        "{out}"
    );
    // Demonstrated at the smallest failing size.
    assert!(out.contains("-D n=2 --monoid list"), "{out}");
}

#[test]
fn kogge_stone_racy_names_the_race() {
    let o = ksim(&["verify-scan", "examples/kogge_stone_racy.ksim", "-D", "n=8"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains("data race"), "{}", stdout(&o));
    let err = stderr(&o);
    assert!(err.contains("data race on out[1]"), "{err}");
    assert!(err.contains("thread 2 reads out[1]"), "{err}");
    assert!(err.contains("thread 1 writes out[1]"), "{err}");
}

#[test]
fn usage_errors_exit_2() {
    let o = ksim(&[
        "verify-scan",
        "examples/stream_compaction.ksim",
        "-D",
        "n=8",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("not the generic type `T`"),
        "{}",
        stderr(&o)
    );
    let o = ksim(&[
        "verify-scan",
        "examples/kogge_stone.ksim",
        "-D",
        "n=8",
        "--out",
        "result",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no array `result`"), "{}", stderr(&o));
    let o = ksim(&[
        "verify-scan",
        "examples/kogge_stone.ksim",
        "-D",
        "n=8",
        "--input",
        "in=iota",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let o = ksim(&[
        "verify-scan",
        "examples/kogge_stone.ksim",
        "-D",
        "n=8",
        "--monoid",
        "interval",
    ]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn method_both_prints_times_and_ratio() {
    let o = ksim(&[
        "verify-scan",
        "examples/brent_kung.ksim",
        "-D",
        "n=32",
        "--method",
        "both",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("voigtlaender: all 559 tests passed"), "{out}");
    assert!(out.contains("times: interval "), "{out}");
    assert!(out.contains("ratio "), "{out}");
}

#[test]
fn voigtlaender_alone_finds_the_commuted_operands() {
    let o = ksim(&[
        "verify-scan",
        "examples/blelloch_commuted.ksim",
        "-D",
        "n=8",
        "--exclusive",
        "--method",
        "voigtlaender",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    assert!(
        out.contains(
            "f2 test (i = 1): with voigt2 on input [0 1 2 0 0 0 0 0], out[3] is 1, expected 2"
        ),
        "{out}"
    );
}

#[test]
fn timeout_says_how_far_it_got() {
    // 2^31 tests of 2^16 threads each: no machine finishes them in half a second, so the
    // timeout always fires, however fast the machine.
    let o = ksim(&[
        "verify-scan",
        "examples/kogge_stone.ksim",
        "-D",
        "n=65536",
        "--method",
        "voigtlaender",
        "--timeout",
        "0.5",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    assert!(out.contains("not verified: timed out after"), "{out}");
    assert!(
        out.contains("of 2147581951 Voigtländer tests passed"),
        "{out}"
    );
}

#[test]
fn json_output() {
    let o = ksim(&[
        "verify-scan",
        "examples/blelloch_commuted.ksim",
        "-D",
        "n=8",
        "--exclusive",
        "--method",
        "both",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(doc["verdict"], "counterexample");
    assert_eq!(doc["kind"], "exclusive");
    assert_eq!(doc["n"], 8);
    assert_eq!(doc["interval"]["counterexample"]["index"], 3);
    assert_eq!(doc["interval"]["counterexample"]["found"], "⊤");
    assert_eq!(doc["interval"]["counterexample"]["expected"], "[0,2]");
    assert_eq!(doc["interval"]["demo"]["found"], "[2 0 1]");
    assert_eq!(doc["voigtlaender"]["verdict"], "counterexample");
    assert_eq!(doc["voigtlaender"]["failing_test"]["op"], "f2");
    assert_eq!(doc["methods_disagree"], false);

    let o = ksim(&[
        "verify-scan",
        "examples/kogge_stone.ksim",
        "-D",
        "n=64",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(doc["verdict"], "verified");
    assert_eq!(doc["interval"]["engine"], "fast");
    assert!(doc["voigtlaender"].is_null());
}

#[test]
fn faults_exit_1_with_the_fault() {
    let dir = std::env::temp_dir().join(format!("ksim-verify-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("oob.ksim");
    std::fs::write(
        &file,
        "kernel oob(const local T in[n], local T out[n]) launch(groups = 1, local_size = n) {\n\
         \x20   out[tid + 1] = in[tid];\n}\n",
    )
    .unwrap();
    let path = file.display().to_string();
    for method in ["interval", "voigtlaender"] {
        let o = ksim(&["verify-scan", &path, "-D", "n=8", "--method", method]);
        assert_eq!(o.status.code(), Some(1), "{method}");
        assert!(
            stdout(&o).contains("runtime fault: out-of-bounds access out[8]"),
            "{method}: {}",
            stdout(&o)
        );
        assert!(
            stderr(&o).contains("out-of-bounds access out[8]"),
            "{}",
            stderr(&o)
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
