//! `ksim step` scripted through standard input (issue 12): a fixed command sequence on
//! the racy Kogge-Stone scan reaches the race, `back` restores the previous configuration
//! exactly, and the schedule it prints replays with `ksim run --schedule @FILE`.

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn step(args: &[&str], script: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ksim"))
        .arg("step")
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ksim runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(script.as_bytes())
        .unwrap();
    child.wait_with_output().expect("ksim ends")
}

const RACY: &[&str] = &[
    "examples/kogge_stone_racy.ksim",
    "-D",
    "n=4",
    "--input",
    "in=ones",
];

/// The output of each `state` command: the lines after `> state` up to the next command.
fn states(out: &str) -> Vec<String> {
    out.split("\n> ")
        .filter_map(|chunk| chunk.strip_prefix("state\n"))
        .map(str::to_string)
        .collect()
}

/// `name = v v v` lines of a configuration block.
fn array_line(block: &str, name: &str) -> String {
    block
        .lines()
        .map(str::trim)
        .find(|l| l.split_whitespace().next() == Some(name) && l.contains(" = "))
        .unwrap_or_else(|| panic!("no array {name} in\n{block}"))
        .split(" = ")
        .nth(1)
        .unwrap()
        .replace('*', "")
}

#[test]
fn explicit_choices_reach_the_race_and_report_it_at_once() {
    // Everyone copies `in` to `out` and the first barrier fires; then thread 1 runs its
    // first round up to its write of out[1] (offset := 1, the loop test, the `if` and the
    // read of out[0], the `if` and the write), and thread 2 runs to its read of out[1]
    // (offset := 1, the loop test, the `if`, the read): no barrier lies between that
    // write and this read.
    let script = "barrier\nt1\nt1\nt1\nt1\nt1\nt1\nt2\nt2\nt2\nt2\nquit\n";
    let o = step(RACY, script);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    // The race is reported right after the step that completes it, the 4th step of t2.
    let race_at = out.find("data race on out[1]").expect("race reported");
    let last_t2 = out.rfind("> t2").unwrap();
    assert!(race_at > last_t2, "{out}");
    assert!(
        out[last_t2..].contains("step 13: t2 S-ASSIGN  temp := out[tid - offset]   temp: 0 -> 2"),
        "{out}"
    );
    assert!(out.contains("thread 1 writes out[1]") && out.contains("thread 2 reads out[1]"));
    assert!(out.contains("step 9: t1 S-ARRAY  out[tid] := temp ⊕ out[tid]   out[1]: 1 -> 2"));
    // No race is reported before the last command.
    assert!(!out[..last_t2].contains("data race"), "{out}");
}

#[test]
fn race_command_stops_at_the_race() {
    let o = step(RACY, "race\nquit\n");
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("data race on out["), "{out}");
    assert!(!out.contains("no new race"), "{out}");
}

#[test]
fn back_restores_the_previous_configuration_exactly() {
    let script = "barrier\nt2\nt2\nt2\nstate\nt2\nback\nstate\nt3\nt1\nback\nback\nstate\nquit\n";
    let o = step(RACY, script);
    let out = String::from_utf8_lossy(&o.stdout);
    let s = states(&out);
    assert_eq!(s.len(), 3, "{out}");
    assert_eq!(s[0], s[1], "one step and back");
    assert_eq!(s[0], s[2], "two steps and back twice");
    // The step undone did change something: its configuration differs.
    let after_t2 = out.split("> t2\n").nth(4).unwrap();
    assert_ne!(after_t2.split("\n> ").next().unwrap(), s[0]);
}

#[test]
fn saved_schedule_replays_to_the_same_arrays() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.json");
    let script = format!(
        "t3\nt0\nbarrier\nt2\nt2\nt1\nt1\nt1\nt1\nt1\nt1\nt1\nt2\nt2\nt2\nschedule\nsave {}\nstate\nquit\n",
        file.display()
    );
    let o = step(RACY, &script);
    let out = String::from_utf8_lossy(&o.stdout);
    let printed = out
        .split("> schedule\n")
        .nth(1)
        .unwrap()
        .lines()
        .next()
        .unwrap();
    let saved = std::fs::read_to_string(&file).unwrap();
    assert_eq!(printed, saved.trim());
    let state = &states(&out)[0];
    let mut args = RACY.to_vec();
    let at = format!("@{}", file.display());
    args.extend(["--schedule", at.as_str(), "--json"]);
    let run = Command::new(env!("CARGO_BIN_EXE_ksim"))
        .arg("run")
        .args(&args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    let steps: u64 = state
        .lines()
        .next()
        .unwrap()
        .split_whitespace()
        .nth(3)
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(doc["steps"], steps);
    for name in ["in", "out"] {
        let replayed: Vec<String> = doc["arrays"][name][0]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.to_string())
            .collect();
        assert_eq!(array_line(state, name), replayed.join(" "), "{name}");
    }
    // The prefix really is mid-execution (the replay stops where the session stopped).
    assert_eq!(doc["infeasible"]["step"], steps);
}

#[test]
fn bad_commands_are_refused_without_ending_the_session() {
    let o = step(RACY, "t9\nfrob\nback\nt0\nquit\n");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("there is no thread 9"), "{out}");
    assert!(out.contains("unknown command `frob`"), "{out}");
    assert!(
        out.contains("already at the initial configuration"),
        "{out}"
    );
    assert!(out.contains("step 0: t0 S-ARRAY"), "{out}");
    assert_eq!(o.status.code(), Some(0), "{out}");
}

#[test]
fn end_runs_to_the_final_configuration_and_the_interval_identity_prints_as_epsilon() {
    let o = step(
        &[
            "examples/kogge_stone.ksim",
            "-D",
            "n=4",
            "--monoid",
            "interval",
            "--input",
            "in=iota",
        ],
        "state\nend\nquit\n",
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}");
    let s = states(&out);
    assert!(s[0].contains("temp=1_I"), "{out}");
    assert!(out.contains("final"), "{out}");
    assert!(out.contains("out = [0,0] [0,1] [0,2] [0,3]"), "{out}");
}
