//! The JSON Schemas in `docs/schema/` (generated from the result models by `sim::schema`)
//! are current, and real outputs of every JSON-writing command validate against them,
//! racy and clean; a real output with a required field removed, or of the wrong type,
//! does not (the schemas are not permissive).

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

const REGENERATE: &str = "cargo run --example json_schema";

fn schema_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("docs/schema/{name}.schema.json"))
}

#[test]
fn checked_in_schemas_are_current() {
    for (name, schema) in sim::schema::schemas() {
        let path = schema_path(name);
        let have = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            have == sim::schema::text(&schema),
            "{} is stale or missing: run `{REGENERATE}`",
            path.display()
        );
    }
}

fn validator(name: &str) -> jsonschema::Validator {
    let text = std::fs::read_to_string(schema_path(name)).expect("schema file");
    let schema: Value = serde_json::from_str(&text).expect("schema is JSON");
    jsonschema::validator_for(&schema).expect("a valid schema")
}

/// Fails naming every violation of `doc` against schema `name`.
fn assert_valid(name: &str, what: &str, doc: &Value) {
    let v = validator(name);
    let errors: Vec<String> = v
        .iter_errors(doc)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{what}: {errors:#?}");
}

/// Runs ksim in `dir` (the repository root when `None`); the output must parse.
fn ksim(dir: Option<&Path>, args: &[&str]) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let o = Command::new(env!("CARGO_BIN_EXE_ksim"))
        .args(args)
        .current_dir(dir.unwrap_or(root))
        .output()
        .expect("ksim runs");
    assert!(
        matches!(o.status.code(), Some(0 | 1)),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).expect("UTF-8")
}

fn json(dir: Option<&Path>, args: &[&str]) -> Value {
    serde_json::from_str(&ksim(dir, args)).unwrap_or_else(|e| panic!("{args:?}: not JSON: {e}"))
}

/// An example or test kernel by absolute path (commands may run in a temporary folder).
fn kernel(rel: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(rel)
        .display()
        .to_string()
}

#[test]
fn run_outputs_validate() {
    let dir = tempfile::tempdir().unwrap();
    let schedule = dir.path().join("s.json");
    std::fs::write(&schedule, r#"{"runs": [[0, 1]]}"#).unwrap();
    let at = format!("@{}", schedule.display());
    for args in [
        vec!["examples/kogge_stone_racy.ksim", "-D", "n=4"],
        vec!["examples/kogge_stone.ksim", "-D", "n=4"],
        vec!["tests/kernels/out_of_bounds.ksim", "-D", "n=4"],
        vec!["tests/kernels/divergent_copy.ksim", "-D", "n=4"],
        vec!["examples/kogge_stone.ksim", "-D", "n=4", "--schedule", &at],
        vec![
            "examples/kogge_stone.ksim",
            "-D",
            "n=4",
            "--schedule",
            "random",
        ],
    ] {
        let mut a = vec!["run", "--json"];
        a.extend(&args);
        assert_valid("run", &format!("{a:?}"), &json(None, &a));
    }
}

#[test]
fn trace_records_validate() {
    for k in [
        "examples/kogge_stone_racy.ksim",
        "examples/kogge_stone.ksim",
    ] {
        let out = ksim(None, &["trace", k, "-D", "n=4", "--format", "json"]);
        let mut events = std::collections::BTreeSet::new();
        for line in out.lines() {
            let record: Value = serde_json::from_str(line).expect("a JSON record");
            events.insert(record["event"].as_str().unwrap_or("").to_string());
            assert_valid("trace", &format!("trace {k}: {line}"), &record);
        }
        let want = ["barrier", "end", "step"].map(String::from);
        assert_eq!(
            events,
            want.into_iter().collect(),
            "{k}: every kind of record"
        );
    }
}

#[test]
fn races_outputs_and_their_reports_validate() {
    let dir = tempfile::tempdir().unwrap();
    for k in [
        "examples/kogge_stone_racy.ksim",
        "examples/kogge_stone.ksim",
        "tests/kernels/out_of_bounds.ksim",
    ] {
        let k = kernel(k);
        let doc = json(Some(dir.path()), &["races", &k, "-D", "n=4", "--json"]);
        assert_valid("races", &k, &doc);
    }
    assert_reports_validate(&dir.path().join("ksim-reports"));
}

#[test]
fn explore_outputs_and_their_reports_validate() {
    let dir = tempfile::tempdir().unwrap();
    for args in [
        vec![
            "examples/kogge_stone_racy.ksim",
            "-D",
            "n=4",
            "--exhaustive",
        ],
        vec!["examples/kogge_stone.ksim", "-D", "n=4", "--exhaustive"],
        vec![
            "tests/kernels/out_of_bounds.ksim",
            "-D",
            "n=4",
            "--exhaustive",
        ],
        vec![
            "examples/kogge_stone_racy.ksim",
            "-D",
            "n=4",
            "--random",
            "20",
        ],
    ] {
        let k = kernel(args[0]);
        let mut a = vec!["explore", "--json", &k];
        a.extend(&args[1..]);
        assert_valid("explore", &format!("{a:?}"), &json(Some(dir.path()), &a));
    }
    assert_reports_validate(&dir.path().join("ksim-reports"));
}

/// Every race report in `dir` (there is at least one) validates.
fn assert_reports_validate(dir: &Path) {
    let reports: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("a report folder")
        .map(|e| e.unwrap().path())
        .collect();
    assert!(!reports.is_empty(), "no report in {}", dir.display());
    for r in reports {
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&r).unwrap()).unwrap();
        assert_valid("race-report", &r.display().to_string(), &doc);
    }
}

#[test]
fn verify_scan_outputs_validate() {
    for args in [
        vec![
            "examples/scan_off_by_one.ksim",
            "-D",
            "n=8",
            "--method",
            "both",
        ],
        vec!["examples/kogge_stone_racy.ksim", "-D", "n=8"],
        vec!["examples/kogge_stone.ksim", "-D", "n=8", "--method", "both"],
    ] {
        let mut a = vec!["verify-scan", "--json"];
        a.extend(&args);
        assert_valid("verify-scan", &format!("{a:?}"), &json(None, &a));
    }
}

#[test]
fn fix_outputs_validate() {
    for args in [
        vec!["examples/kogge_stone_racy.ksim", "-D", "n=4"],
        vec!["examples/blelloch_missing_barrier.ksim", "-D", "n=8"],
        vec!["examples/kogge_stone.ksim", "-D", "n=4"],
    ] {
        let mut a = vec!["fix", "--json"];
        a.extend(&args);
        assert_valid("fix", &format!("{a:?}"), &json(None, &a));
    }
}

#[test]
fn circuit_outputs_validate() {
    for k in ["examples/kogge_stone.ksim", "examples/sklansky.ksim"] {
        let a = ["circuit", "--json", k, "-D", "n=8"];
        assert_valid("circuit", &format!("{a:?}"), &json(None, &a));
    }
}

/// The schemas reject what the models never write: a missing required field (plain and
/// nullable), a value of the wrong type, a nested access without its kind.
#[test]
fn schemas_reject_broken_outputs() {
    let doc = json(
        None,
        &[
            "run",
            "--json",
            "examples/kogge_stone_racy.ksim",
            "-D",
            "n=4",
        ],
    );
    assert_valid("run", "the original", &doc);
    let v = validator("run");
    let broken: [Breakage; 4] = [
        ("without clean", |d| {
            d.as_object_mut().unwrap().remove("clean");
        }),
        ("without fault (null, but always written)", |d| {
            d.as_object_mut().unwrap().remove("fault");
        }),
        ("steps as a string", |d| d["steps"] = Value::from("62")),
        ("a race access without its kind", |d| {
            d["races"][0]["first"]
                .as_object_mut()
                .unwrap()
                .remove("kind");
        }),
    ];
    for (what, breaks) in broken {
        let mut d = doc.clone();
        breaks(&mut d);
        assert!(
            !v.is_valid(&d),
            "the run schema accepts a run output {what}"
        );
    }
}

/// A named way of breaking a valid document.
type Breakage = (&'static str, fn(&mut Value));
