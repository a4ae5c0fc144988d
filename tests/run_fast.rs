//! `ksim run` on the fast path (issue 29, item 1): by default `run` takes the fast executor
//! for the canonical schedule and the reference semantics where it must. Through the CLI,
//! `ksim run ARGS` (default engine) and `ksim run ARGS --engine reference` must print the
//! same thing — exit code, standard output (arrays, `.sim` dumps), standard error (races,
//! faults, divergences, notes) and every field of `--json`, the recorded schedule included —
//! except the line (text) or field (JSON) that names the engine. Checked on every example,
//! every test kernel with a launch, the `.sim` launches (ours and the Rodinia corpus when
//! present) and generated kernels, under the launch options that change the model.

mod support;

use proptest::test_runner::TestCaseError;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;
use support::gen::{self, GenKernel};
use support::{check_property, ksim_in, Exit};

const LIMIT: Duration = Duration::from_secs(120);

fn ksim(dir: &Path, args: &[String]) -> Exit {
    ksim_in(dir, args, LIMIT)
}

/// Standard error without its engine line, and that line.
fn split_engine(stderr: &str) -> (String, Option<String>) {
    let mut engine = None;
    let mut rest = String::new();
    for line in stderr.lines() {
        match line.strip_prefix("engine: ") {
            Some(e) => engine = Some(e.to_string()),
            None => {
                rest.push_str(line);
                rest.push('\n');
            }
        }
    }
    (rest, engine)
}

/// Which engine the default ran, from its engine line.
#[derive(Debug, PartialEq, Eq)]
enum Ran {
    Fast,
    /// With the reason given.
    Reference(String),
}

impl Ran {
    /// The fast executor ran, or the run reached the step bound, where the arrays need the
    /// reference semantics.
    fn fast_where_it_can(&self) -> bool {
        match self {
            Ran::Fast => true,
            Ran::Reference(why) => why.contains("step bound"),
        }
    }
}

/// Runs `ksim run ARGS` on the default engine and on `--engine reference`, as text and as
/// JSON, and compares everything but the engine. Returns the exit code and which engine the
/// default took.
fn same_output(dir: &Path, args: &[String]) -> Result<(i32, Ran), String> {
    let cmd = format!("ksim run {}", args.join(" "));
    let run = |extra: &[&str]| {
        let mut a = vec!["run".to_string()];
        a.extend(args.iter().cloned());
        a.extend(extra.iter().map(|s| s.to_string()));
        ksim(dir, &a)
    };
    let (default, reference) = (run(&[]), run(&["--engine", "reference"]));
    for (e, what) in [(&default, "default"), (&reference, "reference")] {
        if !matches!(e.code, Some(0 | 1)) {
            return Err(format!("{cmd} ({what}): {}", e.describe()));
        }
    }
    let (d_err, d_engine) = split_engine(&default.stderr);
    let (r_err, r_engine) = split_engine(&reference.stderr);
    if r_engine.as_deref() != Some("reference semantics") {
        return Err(format!(
            "{cmd} --engine reference: engine line {r_engine:?}"
        ));
    }
    let ran = match d_engine.as_deref() {
        Some("fast executor") => Ran::Fast,
        Some(e) if e.starts_with("reference semantics (") => Ran::Reference(e.to_string()),
        e => return Err(format!("{cmd}: engine line {e:?}")),
    };
    if (default.code, &default.stdout, &d_err) != (reference.code, &reference.stdout, &r_err) {
        return Err(format!(
            "{cmd}: the text differs\n--- default ({:?}, {ran:?}) ---\n{}{}--- reference ({:?}) ---\n{}{}",
            default.code, default.stdout, d_err, reference.code, reference.stdout, r_err
        ));
    }
    let json = |e: Exit, what: &str| -> Result<Value, String> {
        if !matches!(e.code, Some(0 | 1)) {
            return Err(format!("{cmd} --json ({what}): {}", e.describe()));
        }
        serde_json::from_str(&e.stdout).map_err(|err| format!("{cmd} --json ({what}): {err}"))
    };
    let mut d = json(run(&["--json"]), "default")?;
    let mut r = json(run(&["--json", "--engine", "reference"]), "reference")?;
    let (d_obj, r_obj) = (d.as_object_mut().unwrap(), r.as_object_mut().unwrap());
    let want = if ran == Ran::Fast {
        "fast"
    } else {
        "reference"
    };
    if d_obj.remove("engine") != Some(Value::from(want)) {
        return Err(format!(
            "{cmd} --json: the text said {ran:?}, the JSON did not"
        ));
    }
    if r_obj.remove("engine") != Some(Value::from("reference"))
        || r_obj.remove("fallback_reason") != Some(Value::Null)
    {
        return Err(format!("{cmd} --json --engine reference: engine fields"));
    }
    let reason = d_obj.remove("fallback_reason");
    if (ran == Ran::Fast) != (reason == Some(Value::Null)) {
        return Err(format!(
            "{cmd} --json: fallback_reason {reason:?} for {ran:?}"
        ));
    }
    if r["schedule"]["runs"].as_array().is_none() {
        return Err(format!(
            "{cmd} --json: the reference run recorded no schedule"
        ));
    }
    if d != r {
        return Err(format!(
            "{cmd} --json: the models differ\n--- default ---\n{d:#}\n--- reference ---\n{r:#}"
        ));
    }
    Ok((reference.code.unwrap(), ran))
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn files(dir: &str, ext: &str) -> Vec<PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(root().join(dir))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect();
    files.sort();
    files
}

/// The input of an example: random `in`, or left_rotation's single array `array` as iota.
fn example_input(path: &Path) -> &'static str {
    let src = std::fs::read_to_string(path).unwrap();
    if src.contains(" in[") {
        "in=random:5"
    } else {
        "array=iota"
    }
}

/// Every example, small (one thread at a time) and at 256 threads (lock-step batches).
#[test]
fn run_prints_the_same_on_both_engines_for_every_example() {
    let mut codes = [0usize; 2];
    for path in files("examples", "ksim") {
        let file = path.to_str().unwrap();
        for n in ["n=8", "n=256"] {
            let args = strings(&[file, "-D", n, "--input", example_input(&path)]);
            let (code, ran) = same_output(&root(), &args).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(ran, Ran::Fast, "{args:?}");
            codes[code as usize] += 1;
        }
    }
    assert!(codes[0] > 0 && codes[1] > 0, "exit codes 0/1: {codes:?}");
}

/// Groups of 8192 threads on two workers: the fast executor runs parallel chunks, whose
/// schedule is put together chunk by chunk.
#[test]
fn run_prints_the_same_on_both_engines_in_parallel_chunks() {
    for name in ["kogge_stone", "blelloch", "kogge_stone_racy"] {
        let path = root().join(format!("examples/{name}.ksim"));
        let args = strings(&[
            path.to_str().unwrap(),
            "-D",
            "n=8192",
            "--input",
            "in=random:3",
            "--jobs",
            "2",
        ]);
        let (_, ran) = same_output(&root(), &args).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(ran, Ran::Fast, "{args:?}");
    }
}

/// The options that change the model: definedness checks, stopping at the first fault,
/// access atomicity, warps, the same-value race policy.
#[test]
fn run_prints_the_same_on_both_engines_under_every_model_option() {
    let options: &[&[&str]] = &[
        &["--uninit", "check"],
        &["--stop-at-first-fault"],
        &["--atomicity", "access"],
        &["--warp-size", "4"],
        &["--warp-size", "32", "--atomicity", "access"],
        &["--race-policy", "same-value"],
        &["--max-steps", "300"],
    ];
    for path in files("examples", "ksim") {
        let file = path.to_str().unwrap();
        for opts in options {
            let mut args = strings(&[file, "-D", "n=16", "--input", example_input(&path)]);
            args.extend(strings(opts));
            let (_, ran) = same_output(&root(), &args).unwrap_or_else(|e| panic!("{e}"));
            assert!(ran.fast_where_it_can(), "{args:?}: {ran:?}");
        }
    }
}

/// The test kernels of `tests/kernels/` with a launch each: races, atomics, faults,
/// divergence, fences, step bounds, several groups.
#[test]
fn run_prints_the_same_on_both_engines_for_the_test_kernels() {
    let cases: &[&[&str]] = &[
        &["atomic_counter.ksim", "-D", "n=4", "-D", "g=2"],
        &["atomic_plain_race.ksim", "-D", "n=4"],
        &["divergent_copy.ksim", "-D", "n=4"],
        &["early_exit_barrier.ksim", "-D", "n=4"],
        &["fence_global.ksim", "-D", "n=4", "-D", "g=2"],
        &["fence_local.ksim", "-D", "n=4", "-D", "g=2"],
        &["group_local_race.ksim", "-D", "n=4"],
        &["group_tickets.ksim", "-D", "n=4", "-D", "b=2"],
        &["ids_2d.ksim"],
        &["late_shared.ksim"],
        &["lost_update.ksim"],
        &["out_of_bounds.ksim", "-D", "n=4"],
        &["out_of_bounds.ksim", "-D", "n=4", "--stop-at-first-fault"],
        &["pocl_crash.ksim"],
        &["read_loop.ksim", "-D", "n=50"],
        &["shared_write.ksim"],
        &["spin_then_barrier.ksim", "--max-steps", "500"],
        &["split_conditional.ksim", "--input", "a=1,0,2,5"],
        &["swap_halves.ksim"],
        &["ticket_race.ksim"],
        &["two_barriers.ksim", "-D", "n=4"],
        &["uneven_steps.ksim"],
        &["write_back.ksim", "-D", "n=300"],
        &["write_half.ksim", "-D", "n=300"],
        &["write_tid.ksim", "-D", "n=4"],
        &["write_zero.ksim", "-D", "n=4"],
        &["reverse_scale.sim"],
        &["rotate_racy.sim"],
    ];
    let dir = root().join("tests/kernels");
    let mut codes = [0usize; 2];
    for case in cases {
        let (code, ran) = same_output(&dir, &strings(case)).unwrap_or_else(|e| panic!("{e}"));
        assert!(ran.fast_where_it_can(), "{case:?}: {ran:?}");
        codes[code as usize] += 1;
    }
    assert!(codes[0] > 0 && codes[1] > 0, "exit codes 0/1: {codes:?}");
}

/// Every launch of the Rodinia corpus that loads (`../shared/corpora/rodinia-opencl/`),
/// under both race policies. Skipped when the corpus is absent, unless
/// `KSIM_REQUIRE_CORPUS` is set.
#[test]
fn run_prints_the_same_on_both_engines_for_the_rodinia_launches() {
    let corpus = root().join("../shared/corpora/rodinia-opencl");
    let Ok(list) = std::fs::read_to_string(corpus.join("CASES")) else {
        assert!(
            std::env::var_os("KSIM_REQUIRE_CORPUS").is_none(),
            "KSIM_REQUIRE_CORPUS is set but {} is missing",
            corpus.display()
        );
        eprintln!("skipped: no {}", corpus.display());
        return;
    };
    let mut ran_fast = 0;
    for case in list
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
    {
        let path = corpus.join(case);
        let dir = path.parent().unwrap();
        let file = path.file_name().unwrap().to_str().unwrap();
        // Kernels that do not load (structs by value, issue 26) fail alike on both engines.
        let probe = ksim(dir, &strings(&["check", file]));
        if probe.code != Some(0) {
            continue;
        }
        for policy in ["strict", "same-value"] {
            let args = strings(&[file, "--race-policy", policy]);
            let (_, ran) = same_output(dir, &args).unwrap_or_else(|e| panic!("{case}: {e}"));
            ran_fast += usize::from(ran == Ran::Fast);
        }
    }
    assert!(ran_fast > 0, "no Rodinia launch ran on the fast executor");
}

/// Where the fast executor cannot give the model, the default says so and runs the
/// reference semantics: another schedule, a monoid the fast executor does not implement,
/// a run cut at the step bound (the fast executor's arrays there are a few statements
/// past the canonical ones: `blelloch.ksim --max-steps 300` differed).
#[test]
fn run_falls_back_to_the_reference_semantics_and_says_why() {
    let ks = root().join("examples/kogge_stone.ksim");
    let ks = ks.to_str().unwrap();
    for (extra, why) in [
        (
            &["--schedule", "round-robin"][..],
            "canonical schedule only",
        ),
        (
            &["--monoid", "list"][..],
            "not supported by the fast executor",
        ),
        (&["--max-steps", "40"][..], "step bound"),
    ] {
        let mut args = strings(&[ks, "-D", "n=4", "--input", "in=iota"]);
        args.extend(strings(extra));
        let (_, ran) = same_output(&root(), &args).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            matches!(&ran, Ran::Reference(r) if r.contains(why)),
            "{ran:?}"
        );
        let mut a = vec!["run".to_string()];
        a.extend(args);
        let e = ksim(&root(), &a);
        assert!(
            e.stderr.contains("engine: reference semantics (") && e.stderr.contains(why),
            "{extra:?}: {}",
            e.stderr
        );
    }
}

fn check_kernel_with(k: &GenKernel, extra: &[&str]) -> Result<(), TestCaseError> {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("k.ksim"), k.source()).unwrap();
    let mut args = vec!["k.ksim".to_string()];
    args.extend(k.launch_args());
    args.extend(strings(extra));
    same_output(dir.path(), &args)
        .map(|_| ())
        .map_err(TestCaseError::fail)
}

#[test]
fn run_prints_the_same_on_both_engines_for_generated_kernels() {
    for (extra, cases) in [
        (&[][..], 48),
        (&["--uninit", "check"][..], 16),
        (&["--warp-size", "4"][..], 16),
    ] {
        let cases = support::cases("KSIM_ENGINE_CASES", cases);
        check_property(
            "run_prints_the_same_on_both_engines_for_generated_kernels",
            gen::kernel(),
            cases,
            |k| check_kernel_with(&k, extra),
            |k| {
                format!(
                    "--- k.ksim ---\n{}--- launch ---\n{} {}",
                    k.source(),
                    k.launch_args().join(" "),
                    extra.join(" ")
                )
            },
        );
    }
}
