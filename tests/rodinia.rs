//! Rodinia's OpenCL kernels against Oclgrind (issue 26, "How this is checked"): over
//! `../shared/corpora/rodinia-opencl/` (25 launches, each a `.sim` file with what Oclgrind
//! 21.10 reported for it; skipped when absent unless `KSIM_REQUIRE_CORPUS` is set), every
//! launch ksim loads must agree with Oclgrind:
//!
//! - **verdict**: `ksim races --race-policy same-value` (Oclgrind's policy: a write of the
//!   value already held is no race) finds a harmful race exactly when Oclgrind reported
//!   one (`KERNEL.oracle.json`, class `race`), and a fault or barrier divergence exactly
//!   when Oclgrind reported another class of error;
//! - **values**: for a race-free launch, `ksim run X.sim` prints the `dump` buffers as
//!   Oclgrind does, and its standard output equals `KERNEL.expected-nocontract` where
//!   present (Oclgrind fused a multiply-add there; ksim does not contract), else
//!   `KERNEL.expected`. Both print floats as C++'s `cout` does (`%g`, 6 significant
//!   digits), so equal text is agreement within the printing's precision. A racy launch's
//!   values depend on the order of the work-items (Oclgrind runs the work-groups one after
//!   another, ksim's canonical schedule does not), so they are not compared.
//!
//! The launches ksim cannot load yet are [`NOT_LOADING`], each with the reason; the test
//! fails when one of them loads (move it to the checked ones) or when another does not.

mod common;
use common::{ksim, stdout, text};
use std::path::Path;

/// Launches ksim does not load yet, and why.
const NOT_LOADING: &[(&str, &str)] = &[];

fn corpus() -> Option<std::path::PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpora/rodinia-opencl");
    if dir.is_dir() {
        return Some(dir);
    }
    assert!(
        std::env::var_os("KSIM_REQUIRE_CORPUS").is_none(),
        "KSIM_REQUIRE_CORPUS is set but {} is missing",
        dir.display()
    );
    eprintln!("skipped: no corpus at {}", dir.display());
    None
}

/// Oclgrind's error classes for a launch (`race`, ...), from its oracle file.
fn oclgrind_classes(dir: &Path, kernel: &str) -> Vec<String> {
    let oracle = dir.join(format!("{kernel}.oracle.json"));
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&oracle).expect("oracle file"))
            .expect("oracle JSON");
    doc["classes"]
        .as_object()
        .expect("classes")
        .keys()
        .cloned()
        .collect()
}

#[test]
fn every_launch_ksim_loads_agrees_with_oclgrind() {
    let Some(dir) = corpus() else { return };
    let cases = std::fs::read_to_string(dir.join("CASES")).expect("CASES");
    let (mut loaded, mut agree) = (0, 0);
    let mut problems = Vec::new();
    for case in cases.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let sim = dir.join(case);
        let sim_arg = sim.to_str().unwrap();
        let races = ksim(&["races", "--race-policy", "same-value", "--json", sim_arg]);
        let listed = NOT_LOADING.iter().find(|(c, _)| *c == case);
        let loads = races.status.code() != Some(2);
        match (loads, listed) {
            (false, Some(_)) => continue,
            (false, None) => {
                problems.push(format!("{case} does not load: {}", text(&races)));
                continue;
            }
            (true, Some((_, why))) => {
                problems.push(format!(
                    "{case} loads now (listed as not loading: {why}): move it to the checked ones"
                ));
            }
            (true, None) => {}
        }
        loaded += 1;
        let kernel = case.trim_end_matches(".sim");
        let classes = oclgrind_classes(&dir, kernel);
        let report = common::json(&races);
        let race = report["races"]
            .as_array()
            .expect("races")
            .iter()
            .any(|r| r["benign"] == false);
        let other = !report["fault"].is_null()
            || !report["divergences"]
                .as_array()
                .expect("divergences")
                .is_empty();
        let oclgrind_race = classes.iter().any(|c| c == "race");
        let oclgrind_other = classes.iter().any(|c| c != "race");
        let mut ok = true;
        if (race, other) != (oclgrind_race, oclgrind_other) {
            ok = false;
            problems.push(format!(
                "{case}: ksim finds race {race}, fault or divergence {other}; Oclgrind's \
                 classes are {classes:?}"
            ));
        }
        if !oclgrind_race {
            let nocontract = dir.join(format!("{kernel}.expected-nocontract"));
            let expected = if nocontract.exists() {
                nocontract
            } else {
                dir.join(format!("{kernel}.expected"))
            };
            let expected = std::fs::read_to_string(&expected).expect("expected output");
            let run = ksim(&["run", "--engine", "fast", sim_arg]);
            let out = stdout(&run);
            if out != expected {
                ok = false;
                let first = out
                    .lines()
                    .zip(expected.lines())
                    .find(|(a, b)| a != b)
                    .map_or_else(
                        || {
                            format!(
                                "{} lines against {}",
                                out.lines().count(),
                                expected.lines().count()
                            )
                        },
                        |(a, b)| format!("ksim `{a}`, Oclgrind `{b}`"),
                    );
                problems.push(format!("{case}: the dumped buffers differ: {first}"));
            }
        }
        agree += ok as usize;
    }
    eprintln!(
        "{loaded} of {} launches load, {agree} agree with Oclgrind",
        cases.lines().count()
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
