//! A run goes on past the faults that allow it (out of bounds, division by zero, shift
//! count, uninitialised read), reporting each (statement, kind) once with its count, as
//! Oclgrind does; `--stop-at-first-fault` ends it at the first, as before. Both engines
//! report the same faults.

mod common;

use common::{json, ksim_in, text, tmp};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Writes `src` as `name` in a fresh directory; returns the directory and the file.
fn kernel(name: &str, src: &str) -> (PathBuf, String) {
    let dir = tmp(&format!("faults-{}", name.replace('.', "-")));
    std::fs::write(dir.join(name), src).unwrap();
    (dir, name.to_string())
}

fn run(dir: &Path, args: &[&str]) -> (Option<i32>, Value) {
    let mut a = vec!["run"];
    a.extend_from_slice(args);
    a.push("--json");
    let o = ksim_in(dir, &a);
    (o.status.code(), json(&o))
}

/// The statement (source text) of a fault's span (`{start, end}`) or a race access's
/// (`[start, end]`).
fn stmt<'a>(src: &'a str, span: &Value) -> &'a str {
    let at = |k: &str, i: usize| span.get(k).unwrap_or(&span[i]).as_u64().unwrap() as usize;
    &src[at("start", 0)..at("end", 1)]
}

const SEVERAL: &str = "__kernel void k(__global int *a, __global int *b) {
  int i = get_global_id(0);
  b[i] = a[i + 4];
  a[i + 8] = 1;
  int z = i - i;
  b[i] = b[i] / z;
}
";

const LAUNCH: [&str; 8] = [
    "--global",
    "8",
    "--local",
    "8",
    "--input",
    "a=iota:8",
    "--input",
    "b=zeros:8",
];

fn with<'a>(file: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut a = vec![file];
    a.extend_from_slice(&LAUNCH);
    a.extend_from_slice(extra);
    a
}

#[test]
fn several_faults_are_each_reported_once_with_their_counts() {
    let (dir, f) = kernel("several.cl", SEVERAL);
    for engine in ["reference", "fast"] {
        let (code, v) = run(&dir, &with(&f, &["--engine", engine]));
        assert_eq!(code, Some(1), "{engine}: {v:#}");
        let list = v["faults"]["list"].as_array().unwrap();
        let got: Vec<(&str, &str, u64, u64)> = list
            .iter()
            .map(|x| {
                (
                    stmt(SEVERAL, &x["span"]),
                    x["kind"].as_str().unwrap(),
                    x["count"].as_u64().unwrap(),
                    x["thread"]["local"].as_u64().unwrap(),
                )
            })
            .collect();
        // In order of first occurrence: thread 0 writes out of bounds and divides by
        // zero before thread 4 reads out of bounds.
        assert_eq!(
            got,
            vec![
                ("a[i + 8] = 1", "out-of-bounds", 8, 0),
                ("b[i] = b[i] / z", "division-by-zero", 8, 0),
                ("b[i] = a[i + 4]", "out-of-bounds", 4, 4),
            ],
            "{engine}"
        );
        assert_eq!(v["faults"]["unlisted"], 0);
        // The first occurrence keeps its values: thread 0 divides b[0] = a[4] = 4.
        assert_eq!(list[1]["dividend"], "4");
        assert_eq!(list[0]["index"], serde_json::json!([8]));
        // `fault`: the first fault the run went on past.
        assert_eq!(v["fault"]["kind"], "out-of-bounds");
        assert_eq!(v["clean"], false);
        // The run went on: every thread ran to the end; a is untouched (the write out of
        // bounds was dropped), b holds the division's zero.
        let ints = |x: &Value| -> Vec<i64> {
            let row = x[0].as_array().unwrap();
            row.iter().map(|e| e.as_i64().unwrap()).collect()
        };
        assert_eq!(ints(&v["arrays"]["a"]), (0..8).collect::<Vec<_>>());
        assert_eq!(ints(&v["arrays"]["b"]), vec![0; 8]);
    }
}

#[test]
fn the_text_view_lists_every_fault_with_its_count() {
    let (dir, f) = kernel("several_text.cl", SEVERAL);
    let o = ksim_in(
        &dir,
        &[
            "run",
            &f,
            "--global",
            "8",
            "--local",
            "8",
            "--input",
            "a=iota:8",
            "--input",
            "b=zeros:8",
        ],
    );
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert_eq!(t.matches("runtime fault:").count(), 3, "{t}");
    assert_eq!(t.matches("8 times in this execution").count(), 2, "{t}");
    assert!(t.contains("4 times in this execution"), "{t}");
    assert!(
        t.contains("3 distinct fault(s), 20 occurrence(s) listed; the execution went on past them"),
        "{t}"
    );
}

const RACE_AFTER: &str = "__kernel void k(__global int *a, __global int *b) {
  int i = get_global_id(0);
  a[i + 8] = i;
  b[0] = a[i];
}
";

#[test]
fn an_out_of_bounds_write_is_dropped_and_the_race_after_it_reported() {
    let (dir, f) = kernel("race_after.cl", RACE_AFTER);
    for engine in ["reference", "fast"] {
        let (code, v) = run(&dir, &with(&f, &["--engine", engine]));
        assert_eq!(code, Some(1), "{v:#}");
        let list = v["faults"]["list"].as_array().unwrap();
        assert_eq!(list.len(), 1, "{v:#}");
        assert_eq!(stmt(RACE_AFTER, &list[0]["span"]), "a[i + 8] = i");
        assert_eq!(list[0]["count"], 8);
        let races = v["races"].as_array().unwrap();
        assert!(
            !races.is_empty(),
            "{engine}: no race after the fault: {v:#}"
        );
        assert!(races
            .iter()
            .all(|r| stmt(RACE_AFTER, &r["first"]["span"]) == "b[0] = a[i]"));
        assert_eq!(
            v["arrays"]["a"],
            serde_json::json!([[0, 1, 2, 3, 4, 5, 6, 7]])
        );
    }
    // `ksim races` (fast executor) reports the race too, after the fault.
    let o = ksim_in(
        &dir,
        &[
            "races",
            &f,
            "--global",
            "8",
            "--local",
            "8",
            "--input",
            "a=iota:8",
            "--input",
            "b=zeros:8",
            "--json",
            "--no-reports",
        ],
    );
    let v = json(&o);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(!v["races"].as_array().unwrap().is_empty(), "{v:#}");
    assert_eq!(v["faults"]["list"][0]["count"], 8, "{v:#}");
}

#[test]
fn stop_at_first_fault_ends_the_run_at_the_first_fault() {
    let (dir, f) = kernel("stop.cl", RACE_AFTER);
    for engine in ["reference", "fast"] {
        let (code, v) = run(
            &dir,
            &with(&f, &["--engine", engine, "--stop-at-first-fault"]),
        );
        assert_eq!(code, Some(1), "{v:#}");
        let list = v["faults"]["list"].as_array().unwrap();
        assert_eq!(list.len(), 1, "{v:#}");
        assert_eq!(list[0]["count"], 1, "{v:#}");
        assert_eq!(v["fault"]["thread"]["local"], 0);
        // Thread 0's first statement is all that ran: no race yet.
        assert_eq!(v["races"], serde_json::json!([]), "{engine}: {v:#}");
        assert_eq!(v["steps"], 1, "{engine}");
    }
}

#[test]
fn at_most_100_distinct_faults_are_listed_and_the_rest_counted() {
    let mut src = String::from("__kernel void k(__global int *a) {\n  int i = get_global_id(0);\n");
    for k in 0..105 {
        src.push_str(&format!("  a[i + {}] = {k};\n", 10 + k));
    }
    src.push_str("}\n");
    let (dir, f) = kernel("cap.cl", &src);
    for engine in ["reference", "fast"] {
        let (code, v) = run(
            &dir,
            &[
                &f,
                "--global",
                "2",
                "--local",
                "2",
                "--input",
                "a=zeros:4",
                "--engine",
                engine,
            ],
        );
        assert_eq!(code, Some(1));
        assert_eq!(
            v["faults"]["list"].as_array().unwrap().len(),
            100,
            "{engine}"
        );
        assert_eq!(v["faults"]["unlisted"], 5, "{engine}");
        assert!(v["faults"]["list"]
            .as_array()
            .unwrap()
            .iter()
            .all(|x| x["count"] == 2));
    }
    let o = ksim_in(
        &dir,
        &[
            "run",
            &f,
            "--global",
            "2",
            "--local",
            "2",
            "--input",
            "a=zeros:4",
        ],
    );
    assert!(
        text(&o).contains("5 more distinct fault(s) not listed: at most 100 are"),
        "{}",
        text(&o)
    );
}

/// Kernels with faults of every kind that goes on, one or two dimensions, atomics, local
/// memory, several groups: the fast executor and the reference semantics give the same
/// JSON model (but the schedule, which only the reference records).
#[test]
fn both_engines_agree_on_runs_that_go_on_past_faults() {
    let cases: &[(&str, &str, &[&str])] = &[
        (
            "mixed.cl",
            "__kernel void k(__global int *a, __global uint *u, __global int *c) {
  int i = get_global_id(0);
  int n = get_global_size(0);
  int z = i - i;
  a[i] = a[i + n / 2] + a[i - 3] % z;
  u[i] = u[i] << (i + 30);
  int s = i >> (30 + i);
  int old = atomic_add(&c[i * 2], 1);
  a[(i * 7) % (n + 2)] = old + s + c[n + i];
}
",
            &[
                "--global",
                "8",
                "--local",
                "4",
                "--input",
                "a=iota:8",
                "--input",
                "u=ones:8",
                "--input",
                "c=zeros:8",
            ],
        ),
        (
            "local.cl",
            "__kernel void k(__global float *a) {
  __local float t[4];
  int l = get_local_id(0);
  t[l] = a[get_global_id(0) + 2];
  barrier(CLK_LOCAL_MEM_FENCE);
  a[get_global_id(0)] = t[l + 1] + t[3 - l];
}
",
            &["--global", "8", "--local", "4", "--input", "a=iota:8"],
        ),
        (
            "undef.cl",
            "__kernel void k(__global int *a, __global int *b) {
  int i = get_global_id(0);
  int x;
  if (i % 2 == 0) x = 1;
  b[i] = a[i] + x;
  b[i + 1] = b[i] + 1;
}
",
            &[
                "--global",
                "8",
                "--local",
                "8",
                "--input",
                "a=undef:8",
                "--input",
                "b=undef:8",
            ],
        ),
        (
            "two_d.cl",
            "__kernel void k(__global int *a) {
  __local int t[2][4];
  int l = get_local_id(0);
  t[l][l] = l;
  t[l / 4][l % 4 + 2] = a[l] / (l - 1);
  barrier(CLK_LOCAL_MEM_FENCE);
  a[l] = t[l % 2][l];
}
",
            &["--global", "8", "--local", "8", "--input", "a=iota:8"],
        ),
        (
            // A step that stops the execution (a false assertion) is undone with the
            // faults it went on past (its out-of-bounds read).
            "assert.cl",
            "__kernel void k(__global int *a) {
  int i = get_global_id(0);
  a[i] = a[i + 6];
  __assert(a[i + 8] == 1);
}
",
            &["--global", "4", "--local", "4", "--input", "a=iota:4"],
        ),
    ];
    for (name, src, args) in cases {
        let (dir, f) = kernel(name, src);
        for extra in [&[][..], &["--warp-size", "2"][..]] {
            let mut a = vec![f.as_str()];
            a.extend_from_slice(args);
            a.extend_from_slice(extra);
            let engine = |e: &str| {
                let mut a = a.clone();
                a.extend_from_slice(&["--engine", e]);
                let (code, mut v) = run(&dir, &a);
                without_engine(&mut v);
                (code, v)
            };
            let (fast, reference) = (engine("fast"), engine("reference"));
            assert_eq!(fast, reference, "{name} {extra:?}");
            assert_eq!(reference.0, Some(1), "{name} {extra:?}: {:#}", reference.1);
            assert!(
                !reference.1["faults"]["list"].as_array().unwrap().is_empty(),
                "{name}"
            );
            // Parallel chunks of the fast executor (a testing knob) give the same.
            let mut a2 = a.clone();
            a2.extend_from_slice(&["--engine", "fast", "--json"]);
            a2.insert(0, "run");
            let o = std::process::Command::new(env!("CARGO_BIN_EXE_ksim"))
                .args(&a2)
                .current_dir(&dir)
                .env("KSIM_FAST_PAR_MIN", "2")
                .output()
                .unwrap();
            let mut v = json(&o);
            without_engine(&mut v);
            assert_eq!(v, fast.1, "{name} {extra:?} in parallel chunks");
        }
    }
}

/// `run --json`'s model without what differs by engine: the schedule's recording and the
/// engine's name.
fn without_engine(v: &mut Value) {
    for key in ["schedule", "engine", "fallback_reason"] {
        v.as_object_mut().unwrap().remove(key);
    }
}

/// A race found after a fault the run went on past replays: the report keeps that the run
/// went on, so the replayed schedule passes the fault as the run did.
#[test]
fn a_race_after_a_fault_replays() {
    let (dir, f) = kernel("replay.cl", RACE_AFTER);
    let o = ksim_in(
        &dir,
        &[
            "races",
            &f,
            "--global",
            "8",
            "--local",
            "8",
            "--input",
            "a=iota:8",
            "--input",
            "b=zeros:8",
            "--report-dir",
            "r",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let reports: Vec<PathBuf> = std::fs::read_dir(dir.join("r"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert!(!reports.is_empty(), "{}", text(&o));
    let rep: Value = serde_json::from_str(&std::fs::read_to_string(&reports[0]).unwrap()).unwrap();
    assert_eq!(rep["launch"]["continue_after_faults"], true, "{rep:#}");
    let o = ksim_in(&dir, &["replay", reports[0].to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        common::stdout(&o).contains("race reproduced"),
        "{}",
        text(&o)
    );
}
