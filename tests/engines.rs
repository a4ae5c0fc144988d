//! `ksim run --engine fast` and `--engine reference` produce the same model of the
//! canonical execution (`interp::canonical`): every field of `run --json` — arrays, races
//! with both accesses, fault, divergences, steps, verdict — and the same exit code and
//! text, for every example and for generated kernels (`support::gen`). The only fields
//! that differ are `engine` (and the text's `engine:` line), which the test checks too.

mod support;

use proptest::test_runner::TestCaseError;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;
use support::gen::{self, GenKernel};
use support::{check_property, ksim_in, Exit};

const LIMIT: Duration = Duration::from_secs(60);

fn ksim(dir: &Path, args: &[String]) -> Exit {
    ksim_in(dir, args, LIMIT)
}

/// Runs `ksim run ARGS --engine E` (text) and `... --json` on both engines and compares.
/// Returns the exit code.
fn same_model(dir: &Path, args: &[String]) -> Result<i32, String> {
    let with = |extra: &[&str]| -> Vec<String> {
        let mut a = vec!["run".to_string()];
        a.extend(args.iter().cloned());
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    let cmd = format!("ksim run {}", args.join(" "));
    let json = |engine: &str| -> Result<(Value, Option<i32>), String> {
        let e = ksim(dir, &with(&["--engine", engine, "--json"]));
        if !matches!(e.code, Some(0 | 1)) {
            return Err(format!("{cmd} --engine {engine} --json: {}", e.describe()));
        }
        let v: Value = serde_json::from_str(&e.stdout)
            .map_err(|err| format!("{cmd} --engine {engine}: not JSON ({err})"))?;
        Ok((v, e.code))
    };
    let (mut fast, fast_code) = json("fast")?;
    let (mut reference, ref_code) = json("reference")?;
    for (v, engine) in [(&mut fast, "fast"), (&mut reference, "reference")] {
        if v.as_object_mut().unwrap().remove("engine") != Some(Value::from(engine)) {
            return Err(format!("{cmd} --engine {engine}: not named in `engine`"));
        }
    }
    let runs = reference["schedule"]["runs"].as_array();
    let steps = reference["steps"].as_u64().unwrap_or(0);
    if steps > 0 && runs.is_none_or(|r| r.is_empty()) {
        return Err(format!(
            "{cmd}: the reference semantics recorded no schedule"
        ));
    }
    if fast != reference {
        return Err(format!(
            "{cmd}: the models differ\n--- fast ---\n{fast:#}\n--- reference ---\n{reference:#}"
        ));
    }
    if fast_code != ref_code {
        return Err(format!("{cmd}: exit codes {fast_code:?} vs {ref_code:?}"));
    }
    let code = ref_code.unwrap();
    if (code == 0) != (reference["clean"] == Value::Bool(true)) {
        return Err(format!(
            "{cmd}: exit code {code} but clean = {}",
            reference["clean"]
        ));
    }
    // The text view renders the model: the same text from both, but the engine's line.
    let text = |engine: &str, name: &str| {
        let e = ksim(dir, &with(&["--engine", engine]));
        let stderr = e.stderr.replace(&format!("engine: {name}\n"), "");
        (e.code, e.stdout, stderr)
    };
    let (f, r) = (
        text("fast", "fast executor"),
        text("reference", "reference semantics"),
    );
    if f != r {
        return Err(format!("{cmd}: text differs\n{f:?}\n{r:?}"));
    }
    Ok(code)
}

fn examples() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "ksim"))
        .collect();
    files.sort();
    files
}

/// The input of an example: random `in`, or left_rotation's single array `array` (the
/// paper's) as iota.
fn example_input(path: &Path) -> &'static str {
    let src = std::fs::read_to_string(path).unwrap();
    if src.contains(" in[") {
        "in=random:5"
    } else {
        "array=iota"
    }
}

#[test]
fn fast_and_reference_engines_give_the_same_model_for_every_example() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let files = examples();
    assert!(files.len() >= 13);
    let mut codes = [0usize; 2];
    for path in files {
        let file = path.to_str().unwrap().to_string();
        let input = example_input(&path);
        for n in ["8", "256"] {
            let args: Vec<String> = [&file, "-D", &format!("n={n}"), "--input", input]
                .iter()
                .map(|s| s.to_string())
                .collect();
            let code = same_model(&root, &args).unwrap_or_else(|e| panic!("{e}"));
            codes[code as usize] += 1;
        }
    }
    // Both verdicts occur among the examples (racy and wrong ones are there on purpose).
    assert!(codes[0] > 0 && codes[1] > 0, "exit codes 0/1: {codes:?}");
}

/// Divergent, faulting and non-terminating kernels: the findings are in the model too.
#[test]
fn fast_and_reference_engines_give_the_same_model_for_divergence_faults_and_step_bounds() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let cases: &[&[&str]] = &[
        &["tests/kernels/early_exit_barrier.ksim", "-D", "n=4"],
        &["tests/kernels/two_barriers.ksim", "-D", "n=4"],
        &["tests/kernels/divergent_copy.ksim", "-D", "n=4"],
        &["tests/kernels/spin_then_barrier.ksim", "--max-steps", "500"],
        &["tests/kernels/out_of_bounds.ksim", "-D", "n=4"],
    ];
    for args in cases {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let code = same_model(&root, &args).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(code, 1, "{args:?}: each of these kernels has a finding");
    }
}

/// `--race-policy same-value` (issue 10 item 4): both engines record what each write
/// stored and classify the same pairs as benign, on every example and on kernels whose
/// races are benign, harmful, or both.
#[test]
fn fast_and_reference_engines_give_the_same_model_under_the_same_value_policy() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let policy = ["--race-policy", "same-value"];
    for path in examples() {
        let file = path.to_str().unwrap().to_string();
        let input = example_input(&path);
        let args: Vec<String> = [file.as_str(), "-D", "n=8", "--input", input]
            .into_iter()
            .chain(policy)
            .map(|s| s.to_string())
            .collect();
        same_model(&root, &args).unwrap_or_else(|e| panic!("{e}"));
    }
    for (file, code) in [
        ("tests/kernels/write_zero.ksim", 0),
        ("tests/kernels/write_back.ksim", 0),
        ("tests/kernels/write_tid.ksim", 1),
        ("tests/kernels/write_half.ksim", 1),
    ] {
        for n in ["n=4", "n=300"] {
            let args: Vec<String> = [file, "-D", n]
                .into_iter()
                .chain(policy)
                .map(|s| s.to_string())
                .collect();
            let got = same_model(&root, &args).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(got, code, "{args:?}");
        }
    }
}

fn check_kernel(k: &GenKernel) -> Result<(), TestCaseError> {
    check_kernel_with(k, &[])
}

fn check_kernel_with(k: &GenKernel, extra: &[&str]) -> Result<(), TestCaseError> {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("k.ksim"), k.source()).unwrap();
    let mut args = vec!["k.ksim".to_string()];
    args.extend(k.launch_args());
    args.extend(extra.iter().map(|s| s.to_string()));
    same_model(dir.path(), &args)
        .map(|_| ())
        .map_err(TestCaseError::fail)
}

#[test]
fn fast_and_reference_engines_give_the_same_model_for_generated_kernels() {
    let cases = support::cases("KSIM_ENGINE_CASES", 64);
    check_property(
        "fast_and_reference_engines_give_the_same_model_for_generated_kernels",
        gen::kernel(),
        cases,
        |k| check_kernel(&k),
        |k| {
            format!(
                "--- k.ksim ---\n{}--- launch ---\n{}",
                k.source(),
                k.launch_args().join(" ")
            )
        },
    );
}

#[test]
fn fast_and_reference_engines_give_the_same_model_for_generated_kernels_under_same_value() {
    let cases = support::cases("KSIM_ENGINE_CASES", 32);
    check_property(
        "fast_and_reference_engines_give_the_same_model_for_generated_kernels_under_same_value",
        gen::kernel(),
        cases,
        |k| check_kernel_with(&k, &["--race-policy", "same-value"]),
        |k| {
            format!(
                "--- k.ksim ---\n{}--- launch ---\n{} --race-policy same-value",
                k.source(),
                k.launch_args().join(" ")
            )
        },
    );
}

/// `--atomicity access` (issue 10 item 2): both engines run the kernel split into its
/// shared-memory accesses (`interp::atomicity`) and give the same model, on every example,
/// on the split kernels of tests/atomicity.rs and on generated kernels.
#[test]
fn fast_and_reference_engines_give_the_same_model_under_access_atomicity() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let access = ["--atomicity", "access"];
    for path in examples() {
        let file = path.to_str().unwrap().to_string();
        let input = example_input(&path);
        for n in ["n=8", "n=256"] {
            let args: Vec<String> = [file.as_str(), "-D", n, "--input", input]
                .into_iter()
                .chain(access)
                .map(|s| s.to_string())
                .collect();
            same_model(&root, &args).unwrap_or_else(|e| panic!("{e}"));
        }
    }
    for (args, code) in [
        (&["tests/kernels/lost_update.ksim"][..], 1),
        (
            &[
                "tests/kernels/split_conditional.ksim",
                "--input",
                "a=1,0,2,5",
            ][..],
            1,
        ),
        (&["tests/kernels/out_of_bounds.ksim", "-D", "n=4"][..], 1),
    ] {
        let args: Vec<String> = args
            .iter()
            .copied()
            .chain(access)
            .map(|s| s.to_string())
            .collect();
        let got = same_model(&root, &args).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(got, code, "{args:?}");
    }
}

#[test]
fn fast_and_reference_engines_give_the_same_model_for_generated_kernels_under_access() {
    let cases = support::cases("KSIM_ENGINE_CASES", 32);
    check_property(
        "fast_and_reference_engines_give_the_same_model_for_generated_kernels_under_access",
        gen::kernel(),
        cases,
        |k| check_kernel_with(&k, &["--atomicity", "access"]),
        |k| {
            format!(
                "--- k.ksim ---\n{}--- launch ---\n{} --atomicity access",
                k.source(),
                k.launch_args().join(" ")
            )
        },
    );
}

/// `--warp-size W` (issue 10 item 3): the reference semantics' warp step and the fast
/// executor's warp engine implement one model (`interp::warp`): the same arrays, races,
/// faults, divergence and SIMT cost, on every example for W in {1, 4, 32} under both
/// atomicities, and on generated kernels.
#[test]
fn fast_and_reference_engines_give_the_same_model_under_warps() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut codes = [0usize; 2];
    for path in examples() {
        let file = path.to_str().unwrap().to_string();
        let input = example_input(&path);
        for n in ["n=8", "n=64"] {
            for w in ["1", "4", "32"] {
                for atomicity in ["statement", "access"] {
                    let args: Vec<String> = [
                        file.as_str(),
                        "-D",
                        n,
                        "--input",
                        input,
                        "--warp-size",
                        w,
                        "--atomicity",
                        atomicity,
                    ]
                    .iter()
                    .map(|s| s.to_string())
                    .collect();
                    let code = same_model(&root, &args).unwrap_or_else(|e| panic!("{e}"));
                    codes[code as usize] += 1;
                }
            }
        }
    }
    assert!(codes[0] > 0 && codes[1] > 0, "exit codes 0/1: {codes:?}");
}

#[test]
fn fast_and_reference_engines_give_the_same_model_for_generated_kernels_under_warps() {
    let cases = support::cases("KSIM_ENGINE_CASES", 32);
    check_property(
        "fast_and_reference_engines_give_the_same_model_for_generated_kernels_under_warps",
        gen::kernel(),
        cases,
        |k| check_kernel_with(&k, &["--warp-size", "4"]),
        |k| {
            format!(
                "--- k.ksim ---\n{}--- launch ---\n{} --warp-size 4",
                k.source(),
                k.launch_args().join(" ")
            )
        },
    );
}
