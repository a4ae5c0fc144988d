//! docs/json.md promises that JSON fields are only ever added, never renamed or removed.
//! This golden set holds every field path the outputs had when the promise was checked
//! (`a.b.[].c`: `[]` for any list element); each test runs real commands that produce
//! every one of them and fails, naming it, when one is missing. A new field needs no change
//! here; a removed or renamed one fails.

use serde_json::Value;
use std::collections::BTreeSet;
use std::process::Command;

fn json(args: &[&str]) -> Value {
    let o = Command::new(env!("CARGO_BIN_EXE_ksim"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("ksim runs");
    assert!(
        matches!(o.status.code(), Some(0 | 1)),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{args:?}: not JSON: {e}"))
}

/// Every path of `v`, objects by key, list elements as `[]`.
fn paths(v: &Value, prefix: &str, out: &mut BTreeSet<String>) {
    let join = |k: &str| {
        if prefix.is_empty() {
            k.to_string()
        } else {
            format!("{prefix}.{k}")
        }
    };
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                out.insert(join(k));
                paths(x, &join(k), out);
            }
        }
        Value::Array(xs) => {
            for x in xs {
                out.insert(join("[]"));
                paths(x, &join("[]"), out);
            }
        }
        _ => {}
    }
}

/// Fails with the golden paths that none of `docs` has.
fn assert_has_fields(what: &str, docs: &[Value], golden: &str) {
    let mut have = BTreeSet::new();
    for d in docs {
        paths(d, "", &mut have);
    }
    let missing: Vec<&str> = golden
        .split_whitespace()
        .filter(|p| !have.contains(*p))
        .collect();
    assert!(
        missing.is_empty(),
        "{what}: fields promised by docs/json.md are gone: {missing:?}"
    );
}

const LAUNCH: &str = "launch launch.groups launch.local_size launch.max_steps launch.monoid \
    launch.params launch.params.n";

fn race_fields(prefix: &str) -> String {
    let access = |side: &str| {
        [
            "", ".epoch", ".group", ".kind", ".span", ".span.[]", ".step", ".thread",
        ]
        .iter()
        .map(|f| format!("{prefix}.[].{side}{f}"))
        .collect::<Vec<_>>()
        .join(" ")
    };
    format!(
        "{prefix} {prefix}.[] {prefix}.[].array {prefix}.[].index {prefix}.[].index.[] \
         {prefix}.[].instance {} {}",
        access("first"),
        access("second")
    )
}

const FAULT: &str = "fault fault.array fault.dims fault.dims.[] fault.index fault.index.[] \
    fault.kind fault.span fault.span.end fault.span.start fault.thread fault.thread.group \
    fault.thread.local";

const DIVERGENCES: &str =
    "divergences divergences.[] divergences.[].divergence divergences.[].epoch divergences.[].group";

#[test]
fn run_json_keeps_its_fields() {
    let schedule = std::env::temp_dir().join(format!("ksim-fields-{}.json", std::process::id()));
    std::fs::write(&schedule, r#"{"runs": [[0, 1]]}"#).unwrap();
    let at_schedule = format!("@{}", schedule.display());
    let docs = [
        json(&[
            "run",
            "examples/kogge_stone_racy.ksim",
            "-D",
            "n=4",
            "--json",
        ]),
        json(&[
            "run",
            "tests/kernels/out_of_bounds.ksim",
            "-D",
            "n=4",
            "--json",
        ]),
        json(&[
            "run",
            "tests/kernels/two_barriers.ksim",
            "-D",
            "n=4",
            "--json",
        ]),
        json(&[
            "run",
            "examples/kogge_stone.ksim",
            "-D",
            "n=4",
            "--schedule",
            &at_schedule,
            "--json",
        ]),
    ];
    std::fs::remove_file(&schedule).ok();
    let golden = format!(
        "arrays arrays.in arrays.in.[] arrays.in.[].[] arrays.out arrays.out.[] \
         arrays.out.[].[] clean fault infeasible infeasible.reason infeasible.step \
         infeasible.thread kernel scheduler steps schedule schedule.runs schedule.runs.[] \
         {LAUNCH} {} {FAULT} {DIVERGENCES}",
        race_fields("races")
    );
    assert_has_fields("ksim run --json", &docs, &golden);
}

#[test]
fn races_json_keeps_its_fields() {
    let docs = [
        json(&[
            "races",
            "examples/kogge_stone_racy.ksim",
            "-D",
            "n=4",
            "--json",
        ]),
        json(&[
            "races",
            "tests/kernels/out_of_bounds.ksim",
            "-D",
            "n=4",
            "--json",
        ]),
        json(&[
            "races",
            "tests/kernels/two_barriers.ksim",
            "-D",
            "n=4",
            "--json",
        ]),
    ];
    let golden = format!(
        "engine fallback_reason intervals kernel race_free seconds steps threads \
         races.[].count {LAUNCH} {} {FAULT} {DIVERGENCES}",
        race_fields("races")
    );
    assert_has_fields("ksim races --json", &docs, &golden);
}

#[test]
fn verify_scan_json_keeps_its_fields() {
    let docs = [
        json(&[
            "verify-scan",
            "examples/scan_off_by_one.ksim",
            "-D",
            "n=8",
            "--method",
            "both",
            "--json",
        ]),
        json(&[
            "verify-scan",
            "examples/kogge_stone_racy.ksim",
            "-D",
            "n=8",
            "--json",
        ]),
    ];
    let golden = format!(
        "file input output kernel kind n methods_disagree ratio verdict {LAUNCH} \
         interval interval.counterexample interval.counterexample.expected \
         interval.counterexample.explanation interval.counterexample.found \
         interval.counterexample.index interval.demo interval.demo.command \
         interval.demo.defines interval.demo.defines.[] interval.demo.expected \
         interval.demo.found interval.demo.index interval.demo.monoid interval.demo.n \
         interval.divergences interval.engine interval.fault interval.steps interval.time_s \
         interval.verdict {} \
         voigtlaender voigtlaender.counterexample voigtlaender.counterexample.expected \
         voigtlaender.counterexample.found voigtlaender.counterexample.index \
         voigtlaender.engine voigtlaender.failing_input voigtlaender.failing_input.[] \
         voigtlaender.failing_test voigtlaender.failing_test.i voigtlaender.failing_test.op \
         voigtlaender.fault voigtlaender.passed voigtlaender.races voigtlaender.tests \
         voigtlaender.time_s voigtlaender.timed_out voigtlaender.verdict",
        race_fields("interval.races")
    );
    assert_has_fields("ksim verify-scan --json", &docs, &golden);
}

#[test]
fn trace_end_record_keeps_its_fields() {
    let o = Command::new(env!("CARGO_BIN_EXE_ksim"))
        .args([
            "trace",
            "examples/kogge_stone_racy.ksim",
            "-D",
            "n=4",
            "--format",
            "json",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    let records: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let end: Vec<Value> = records
        .iter()
        .filter(|r| r["event"] == "end")
        .cloned()
        .collect();
    assert_eq!(end.len(), 1, "one end record");
    let golden = format!("event steps clean fault {}", race_fields("races"));
    assert_has_fields("ksim trace --format json (end)", &end, &golden);
    let steps: Vec<Value> = records
        .iter()
        .filter(|r| r["event"] == "step")
        .cloned()
        .collect();
    assert_has_fields(
        "ksim trace --format json (step)",
        &steps,
        "event step group thread rule statement line change",
    );
}
