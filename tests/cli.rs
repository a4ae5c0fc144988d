//! Whole-program tests of the `ksim` binary: the acceptance checks of the language issue and
//! a corpus of bad inputs (`tests/bad/*.ksim`), each of which names in its header the
//! command to run (`// args:`), the exit code (`// exit:`) and message fragments
//! (`// expect:`).

use std::path::{Path, PathBuf};
mod common;
use common::{ksim, text};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn kogge_stone_computes_the_inclusive_scan() {
    let o = ksim(&[
        "run",
        "examples/kogge_stone.ksim",
        "-D",
        "n=8",
        "--input",
        "in=1,2,3,4,5,6,7,8",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("out = 1 3 6 10 15 21 28 36"),
        "{}",
        text(&o)
    );
}

#[test]
fn kogge_stone_racy_reports_both_lines() {
    let o = ksim(&[
        "run",
        "examples/kogge_stone_racy.ksim",
        "-D",
        "n=8",
        "--input",
        "in=iota",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let t = text(&o);
    let src = std::fs::read_to_string(root().join("examples/kogge_stone_racy.ksim")).unwrap();
    let line_of = |needle: &str| {
        src.lines()
            .position(|l| l.contains(needle) && !l.trim_start().starts_with("//"))
            .unwrap()
            + 1
    };
    let read = format!(
        "kogge_stone_racy.ksim:{}:",
        line_of("temp = out[tid - offset]")
    );
    let write = format!("kogge_stone_racy.ksim:{}:", line_of("out[tid] = temp"));
    assert!(t.contains("data race on out["), "{t}");
    assert!(
        t.contains(&read) && t.contains(&write),
        "{read} {write} in {t}"
    );
}

#[test]
fn trace_shows_rule_names_and_barriers() {
    let o = ksim(&[
        "trace",
        "examples/kogge_stone.ksim",
        "-D",
        "n=4",
        "--input",
        "in=ones",
    ]);
    assert_eq!(o.status.code(), Some(0));
    let t = String::from_utf8_lossy(&o.stdout);
    for rule in [
        "S-ARRAY",
        "S-ASSIGN",
        "S-ITE-T",
        "S-ITE-F",
        "S-LOOP-T",
        "S-LOOP-F",
        "K-BARRIER",
    ] {
        assert!(t.contains(rule), "{rule} missing from\n{t}");
    }
    assert!(t.contains("out[3]: 2 -> 4"), "{t}");
}

#[test]
fn trace_json_gives_one_record_per_line() {
    let o = ksim(&[
        "trace",
        "examples/kogge_stone.ksim",
        "-D",
        "n=2",
        "--input",
        "in=ones",
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0));
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON record"))
        .collect();
    assert!(lines.iter().any(|r| r["rule"] == "K-BARRIER"));
    assert_eq!(lines.last().unwrap()["event"], "end");
}

#[test]
fn run_json_is_an_object_with_arrays_and_schedule() {
    let o = ksim(&[
        "run",
        "examples/kogge_stone.ksim",
        "-D",
        "n=4",
        "--input",
        "in=1,2,3,4",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["arrays"]["out"][0], serde_json::json!([1, 3, 6, 10]));
    assert_eq!(v["clean"], true);
    assert!(v["schedule"]["runs"]
        .as_array()
        .is_some_and(|r| !r.is_empty()));
}

#[test]
fn a_recorded_schedule_replays_to_the_same_result() {
    let dir = std::env::temp_dir().join(format!("ksim-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let rec = ksim(&[
        "run",
        "examples/kogge_stone_racy.ksim",
        "-D",
        "n=4",
        "--input",
        "in=iota",
        "--schedule",
        "random",
        "--seed",
        "3",
        "--json",
    ]);
    let file = dir.join("run.json");
    std::fs::write(&file, &rec.stdout).unwrap();
    let arg = format!("@{}", file.display());
    let rep = ksim(&[
        "run",
        "examples/kogge_stone_racy.ksim",
        "-D",
        "n=4",
        "--input",
        "in=iota",
        "--schedule",
        &arg,
        "--json",
    ]);
    let (a, b): (serde_json::Value, serde_json::Value) = (
        serde_json::from_slice(&rec.stdout).unwrap(),
        serde_json::from_slice(&rep.stdout).unwrap(),
    );
    assert_eq!(a["arrays"], b["arrays"]);
    assert_eq!(a["races"], b["races"]);
    assert_eq!(a["schedule"], b["schedule"]);
    std::fs::remove_dir_all(dir).ok();
}

/// Every example runs with only `-D n=8` and exits with exactly the code its header
/// implies: 1 for the examples marked `BROKEN (data race)` (the canonical run finds the
/// race), 0 for the others (a wrong result is not something `run` can know).
#[test]
fn every_example_runs_with_only_its_size() {
    let mut racy = 0;
    for entry in std::fs::read_dir(root().join("examples")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "ksim") {
            continue;
        }
        let p = path.to_str().unwrap();
        let header = std::fs::read_to_string(&path).unwrap();
        let races = header.starts_with("// BROKEN (data race)");
        let o = ksim(&["run", p, "-D", "n=8"]);
        let t = text(&o);
        assert_eq!(o.status.code(), Some(races as i32), "{p}: {t}");
        assert_eq!(t.contains("data race on "), races, "{p}: {t}");
        racy += races as usize;
    }
    assert!(racy >= 2, "the racy examples are found by their header");
}

#[test]
fn bad_inputs_fail_with_their_messages_and_exit_codes() {
    let dir = root().join("tests/bad");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let src = std::fs::read_to_string(&path).unwrap();
        let header = |key: &str| -> Vec<String> {
            src.lines()
                .filter_map(|l| l.strip_prefix(&format!("// {key}: ")))
                .map(str::to_string)
                .collect()
        };
        let args = header("args");
        let mut argv: Vec<&str> = args[0].split_whitespace().collect();
        let file = path.to_str().unwrap();
        argv.insert(1, file);
        let o = ksim(&argv);
        let t = text(&o);
        let exit: i32 = header("exit")[0].parse().unwrap();
        assert_eq!(o.status.code(), Some(exit), "{}: {t}", path.display());
        for e in header("expect") {
            assert!(t.contains(&e), "{}: `{e}` not in\n{t}", file_name(&path));
        }
        assert!(!t.contains("panicked"), "{t}");
        checked += 1;
    }
    assert!(checked >= 20);
}

fn file_name(p: &Path) -> String {
    p.file_name().unwrap().to_string_lossy().into()
}

#[test]
fn usage_errors_exit_2() {
    let o = ksim(&["run"]);
    assert_eq!(o.status.code(), Some(2));
    let o = ksim(&["run", "no/such/file.ksim", "-D", "n=4"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("cannot read `no/such/file.ksim`"));
    let o = ksim(&["run", "examples/kogge_stone.ksim", "-D", "n=4", "-D", "m=2"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("has no parameter `m`"));
}
