//! Differential property test on random well-typed kernels (`support::gen`): every engine
//! and command that claims something about a launch must agree with the others.
//!
//! For each generated kernel and its small launch (1–4 threads, 1–2 work-groups), through
//! the `ksim` binary:
//!
//! - `run --json` (the reference semantics, canonical schedule) and `run --engine fast
//!   --json` (the fast executor): the same arrays (unless the run faulted: memory after a
//!   fault is unspecified), races (every field, in order), fault and step count;
//! - `races --json`: the fast executor's races (with counts), fault and verdict;
//! - `run --schedule round-robin` and `--schedule random --seed S` (reference semantics);
//! - `explore --exhaustive --json`: when the search completes (EXHAUSTIVE), each of the
//!   three runs above, ended at its first fault as exploration ends each execution
//!   (`--stop-at-first-fault`), is one of its executions: its final store is among the explorer's
//!   final stores (or its fault among the faults, its step-bound cut among the
//!   non-terminating executions), its races among the explorer's races (by statement
//!   pair), its divergence among the divergences. And when the canonical run is race-free
//!   and ends without a fault, the explorer finds no race and no fault and exactly one final
//!   store, the canonical one (Lemma 5.4; the fast executor's claim that one execution
//!   decides race-freedom for the input, `interp/src/fast/mod.rs`), unless the kernel has
//!   atomics, whose order the canonical run fixes;
//! - `gpu emit` succeeds (it only translates);
//! - `gpu compare` on an OpenCL device (PoCL here; see [`gpu_compare_agrees`]): a clean
//!   kernel matches the simulator; a faulting or divergent one is reported, never launched.
//!
//! Exit codes agree with what is reported (0: clean; 1: a race, fault or divergence).
//!
//! Case counts: `KSIM_GEN_CASES` (default 160) and `KSIM_GEN_GPU_CASES` (default 8);
//! `KSIM_GEN_SEED` replays a run. The long run and its result are in docs/testing.md.

mod support;

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use support::gen::{self, GenKernel};
use support::{check_property, ksim_in, Exit};

/// Generous per-command limit: every generated launch takes milliseconds (a command that
/// hangs is killed and reported; a short limit keeps shrinking such a case bearable).
const LIMIT: Duration = Duration::from_secs(20);
/// Bounds of one exhaustive exploration (complete executions, seconds), after which it
/// stops with INCOMPLETE and the case compares nothing with it. `--max-executions` alone
/// does not bound the work: executions pruned at explored barrier states do not count,
/// and a racy interval of 4 threads can take hundreds of thousands of them.
const MAX_EXECUTIONS: &str = "3000";
const EXPLORE_TIMEOUT: &str = "5";

/// Runs `ksim ARGS FILE LAUNCH...` on the kernel's file in `dir`.
fn ksim_k(dir: &Path, k: &GenKernel, pre: &[&str], post: &[&str]) -> Exit {
    let mut args: Vec<String> = pre.iter().map(|s| s.to_string()).collect();
    args.push("k.ksim".into());
    args.extend(k.launch_args());
    args.extend(post.iter().map(|s| s.to_string()));
    ksim_in(dir, &args, LIMIT)
}

/// The command line of a check, for failure messages.
fn cmdline(k: &GenKernel, pre: &[&str], post: &[&str]) -> String {
    let mut parts: Vec<String> = vec!["ksim".into()];
    parts.extend(pre.iter().map(|s| s.to_string()));
    parts.push("k.ksim".into());
    parts.extend(k.launch_args());
    parts.extend(post.iter().map(|s| s.to_string()));
    parts
        .iter()
        .map(|p| {
            if p.contains(|c: char| c.is_whitespace() || "<>|&;()*".contains(c)) {
                format!("'{p}'")
            } else {
                p.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn fail(what: &str, cmd: &str, e: &Exit) -> TestCaseError {
    TestCaseError::fail(format!("{what}\n  $ {cmd}\n{}", e.describe()))
}

/// Runs a command that must end in order (exit 0 or 1; 2 would mean the generated launch
/// is invalid) and print one JSON document.
fn json_of(
    dir: &Path,
    k: &GenKernel,
    pre: &[&str],
    post: &[&str],
) -> Result<(Value, i32), TestCaseError> {
    let e = ksim_k(dir, k, pre, post);
    let cmd = cmdline(k, pre, post);
    if !matches!(e.code, Some(0 | 1)) || e.timed_out {
        return Err(fail("exit code not 0 or 1", &cmd, &e));
    }
    let v = serde_json::from_str(&e.stdout)
        .map_err(|err| fail(&format!("stdout is not JSON ({err})"), &cmd, &e))?;
    Ok((v, e.code.unwrap_or(-1)))
}

/// Arrays as instance lists: `run --json` writes every array as a list of instances; the
/// explorer writes a single instance as its flat list of values.
fn instances(arrays: &Value) -> Value {
    let Value::Object(m) = arrays else {
        return arrays.clone();
    };
    Value::Object(
        m.iter()
            .map(|(name, v)| {
                let norm = match v {
                    Value::Array(xs) if xs.first().is_some_and(Value::is_array) => v.clone(),
                    _ => Value::Array(vec![v.clone()]),
                };
                (name.clone(), norm)
            })
            .collect(),
    )
}

/// A race by its statement pair (Definition 5.2's two accesses, unordered): the
/// (span start, span end, kind) of both accesses, sorted.
fn race_key(r: &Value) -> String {
    let acc = |a: &Value| format!("{}:{}", a["span"], a["kind"]);
    let mut pair = [acc(&r["first"]), acc(&r["second"])];
    pair.sort();
    format!("{} / {}", pair[0], pair[1])
}

fn race_keys(races: &Value) -> BTreeSet<String> {
    races
        .as_array()
        .map(|rs| rs.iter().map(race_key).collect())
        .unwrap_or_default()
}

/// A fault by kind and statement.
fn fault_key(f: &Value) -> String {
    format!("{} at {}", f["kind"], f["span"])
}

fn is_empty_list(v: &Value) -> bool {
    v.as_array().is_none_or(|a| a.is_empty())
}

/// Races without the fields only `ksim races` has: `count` and `report`.
fn without_counts(races: &Value) -> Value {
    let mut v = races.clone();
    if let Value::Array(rs) = &mut v {
        for r in rs {
            if let Value::Object(m) = r {
                m.remove("count");
                m.remove("report");
            }
        }
    }
    v
}

/// Statistics printed at the end (what the generated kernels exercised).
#[derive(Default)]
struct Stats {
    cases: AtomicU64,
    racy: AtomicU64,
    faulty: AtomicU64,
    divergent: AtomicU64,
    clean: AtomicU64,
    spinning: AtomicU64,
    exhaustive: AtomicU64,
    incomplete: AtomicU64,
    multi_final: AtomicU64,
}

impl Stats {
    fn bump(c: &AtomicU64) {
        c.fetch_add(1, Ordering::Relaxed);
    }

    fn line(&self) -> String {
        let g = |c: &AtomicU64| c.load(Ordering::Relaxed);
        format!(
            "{} kernels: {} clean, {} racy, {} faulting, {} with barrier divergence, {} spinning; \
             exploration: {} EXHAUSTIVE ({} with several final stores), {} INCOMPLETE",
            g(&self.cases),
            g(&self.clean),
            g(&self.racy),
            g(&self.faulty),
            g(&self.divergent),
            g(&self.spinning),
            g(&self.exhaustive),
            g(&self.multi_final),
            g(&self.incomplete),
        )
    }
}

/// The reference semantics under one schedule, with what it found.
struct RefRun {
    name: String,
    json: Value,
}

fn check_kernel(k: &GenKernel, stats: &Stats) -> Result<(), TestCaseError> {
    let src = k.source();
    // Well-typed by construction: a rejection is a generator (or checker) bug.
    if let Err(d) = lang::check::compile(&src) {
        return Err(TestCaseError::fail(format!(
            "generated kernel rejected:\n{}",
            lang::render::render(&d, "k.ksim", &src, false)
        )));
    }
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("k.ksim"), &src).expect("write kernel");
    let d = dir.path();
    Stats::bump(&stats.cases);
    if k.spins() {
        Stats::bump(&stats.spinning);
    }

    // The reference semantics, canonical schedule.
    let reference = ["run", "--engine", "reference"];
    let (rf, rf_code) = json_of(d, k, &reference, &["--json"])?;
    let cmd_ref = cmdline(k, &reference, &["--json"]);
    prop_assert_eq!(
        rf_code == 0,
        rf["clean"] == true,
        "exit code vs clean: {}",
        cmd_ref
    );
    let faulted = !rf["fault"].is_null();
    let racy = !is_empty_list(&rf["races"]);
    let divergent = !is_empty_list(&rf["divergences"]);
    Stats::bump(match (faulted, racy, divergent) {
        (true, _, _) => &stats.faulty,
        (_, true, _) => &stats.racy,
        (_, _, true) => &stats.divergent,
        _ => &stats.clean,
    });
    if divergent && (faulted || racy) {
        Stats::bump(&stats.divergent);
    }

    // The fast executor, canonical schedule: the same execution.
    let (fa, fa_code) = json_of(d, k, &["run", "--engine", "fast"], &["--json"])?;
    let cmd_fast = cmdline(k, &["run", "--engine", "fast"], &["--json"]);
    prop_assert_eq!(
        &fa["fault"],
        &rf["fault"],
        "fault: {} vs {}",
        cmd_fast,
        cmd_ref
    );
    prop_assert_eq!(
        &fa["races"],
        &rf["races"],
        "races: {} vs {}",
        cmd_fast,
        cmd_ref
    );
    prop_assert_eq!(
        &fa["steps"],
        &rf["steps"],
        "steps: {} vs {}",
        cmd_fast,
        cmd_ref
    );
    if !faulted {
        prop_assert_eq!(
            &fa["arrays"],
            &rf["arrays"],
            "arrays: {} vs {}",
            cmd_fast,
            cmd_ref
        );
    }
    // Both engines judge barrier divergence the same way: everything is compared.
    prop_assert_eq!(&fa["divergences"], &rf["divergences"], "{}", cmd_fast);
    prop_assert_eq!(
        &fa["clean"],
        &rf["clean"],
        "clean: {} vs {}",
        cmd_fast,
        cmd_ref
    );
    prop_assert_eq!(fa_code, rf_code, "exit code: {} vs {}", cmd_fast, cmd_ref);

    // `ksim races`: the fast executor's verdict for the input.
    let (ra, ra_code) = json_of(d, k, &["races"], &["--json", "--no-reports"])?;
    let cmd_races = cmdline(k, &["races"], &["--json", "--no-reports"]);
    prop_assert_eq!(
        &ra["fault"],
        &rf["fault"],
        "fault: {} vs {}",
        cmd_races,
        cmd_ref
    );
    prop_assert_eq!(
        without_counts(&ra["races"]),
        rf["races"].clone(),
        "races: {} vs {}",
        cmd_races,
        cmd_ref
    );
    prop_assert_eq!(&ra["divergences"], &rf["divergences"], "{}", cmd_races);
    // With atomics one execution does not decide the input: never "race-free".
    prop_assert_eq!(
        ra["race_free"] == true,
        !racy && !faulted && !divergent && !k.has_atomics(),
        "race_free: {}",
        cmd_races
    );
    prop_assert_eq!(ra_code, rf_code, "exit code: {} vs {}", cmd_races, cmd_ref);

    // The OpenCL C translation (no device needed).
    let emit = ksim_k(d, k, &["gpu", "emit"], &[]);
    if emit.code != Some(0) || !emit.stdout.contains("__kernel") {
        return Err(fail(
            "gpu emit did not print a kernel",
            &cmdline(k, &["gpu", "emit"], &[]),
            &emit,
        ));
    }

    // Other schedules of the reference semantics. Exploration ends each execution at its
    // first fault, so the runs compared with it do too (`--stop-at-first-fault`).
    let stop = ["--json", "--stop-at-first-fault"];
    let mut runs = Vec::new();
    if rf["fault"].is_null() {
        runs.push(RefRun {
            name: cmd_ref.clone(),
            json: rf.clone(),
        });
    } else {
        let (v, _) = json_of(d, k, &["run"], &stop)?;
        let name = cmdline(k, &["run"], &stop);
        runs.push(RefRun { name, json: v });
    }
    for post in [
        &[
            "--schedule",
            "round-robin",
            "--json",
            "--stop-at-first-fault",
        ][..],
        &[
            "--schedule",
            "random",
            "--seed",
            "7",
            "--json",
            "--stop-at-first-fault",
        ][..],
    ] {
        let (v, code) = json_of(d, k, &["run"], post)?;
        let name = cmdline(k, &["run"], post);
        prop_assert!(v["infeasible"].is_null(), "infeasible: {}", name);
        prop_assert_eq!(
            code == 0,
            v["clean"] == true,
            "exit code vs clean: {}",
            name
        );
        runs.push(RefRun { name, json: v });
    }

    // Exhaustive exploration.
    let post = [
        "--json",
        "--no-reports",
        "--max-executions",
        MAX_EXECUTIONS,
        "--timeout",
        EXPLORE_TIMEOUT,
    ];
    let (ex, ex_code) = json_of(d, k, &["explore", "--exhaustive"], &post)?;
    let cmd_ex = cmdline(k, &["explore", "--exhaustive"], &post);
    prop_assert_eq!(
        ex_code == 0,
        ex["clean"] == true,
        "exit code vs clean: {}",
        cmd_ex
    );
    let ex_clean = is_empty_list(&ex["races"])
        && is_empty_list(&ex["faults"])
        && ex["non_terminating"]["count"] == 0
        && is_empty_list(&ex["divergences"]);
    prop_assert_eq!(ex["clean"] == true, ex_clean, "clean: {}", cmd_ex);
    if ex["verdict"] != "EXHAUSTIVE" {
        prop_assert!(
            ["max-executions", "timeout", "step bound"]
                .iter()
                .any(|r| ex["incomplete_reason"] == *r),
            "{}: {}",
            ex["incomplete_reason"],
            cmd_ex
        );
        Stats::bump(&stats.incomplete);
        return Ok(());
    }
    Stats::bump(&stats.exhaustive);
    let finals: Vec<Value> = ex["final_stores"]
        .as_array()
        .map(|fs| fs.iter().map(|f| instances(&f["arrays"])).collect())
        .unwrap_or_default();
    if finals.len() > 1 {
        Stats::bump(&stats.multi_final);
    }
    let ex_races = race_keys(&ex["races"]);
    let ex_faults: BTreeSet<String> = ex["faults"]
        .as_array()
        .map(|fs| fs.iter().map(fault_key).collect())
        .unwrap_or_default();
    let ex_nonterm = ex["non_terminating"]["count"].as_u64().unwrap_or(0);
    for r in &runs {
        let j = &r.json;
        let ctx = format!(
            "{}\n  is not among the executions of\n  $ {}",
            r.name, cmd_ex
        );
        let missing: Vec<String> = race_keys(&j["races"])
            .difference(&ex_races)
            .cloned()
            .collect();
        prop_assert!(
            missing.is_empty(),
            "races {:?} missing from exploration (found {:?}): {}",
            missing,
            ex_races,
            ctx
        );
        if j["fault"].is_null() {
            let store = instances(&j["arrays"]);
            prop_assert!(
                finals.contains(&store),
                "final store {} not among the {} final stores: {}",
                store,
                finals.len(),
                ctx
            );
        } else if j["fault"]["kind"] == "step-bound" {
            prop_assert!(ex_nonterm > 0, "non-termination not found: {}", ctx);
        } else {
            let f = fault_key(&j["fault"]);
            prop_assert!(
                ex_faults.contains(&f),
                "fault {} not among {:?}: {}",
                f,
                ex_faults,
                ctx
            );
        }
        if !is_empty_list(&j["divergences"]) {
            prop_assert!(
                !is_empty_list(&ex["divergences"]),
                "divergence not found: {}",
                ctx
            );
        }
    }
    // One execution decides the input (Lemma 5.4): a race-free canonical execution that
    // ends without fault is the only behaviour. Not with atomics: they are not races but do
    // not commute, so other schedules may end elsewhere (and take other paths).
    if !racy && !faulted && !k.has_atomics() {
        let ctx = format!("{cmd_ref} is race-free and ends, but\n  $ {cmd_ex}");
        prop_assert!(ex_races.is_empty(), "finds races {:?}: {}", ex_races, ctx);
        prop_assert!(
            ex_faults.is_empty(),
            "finds faults {:?}: {}",
            ex_faults,
            ctx
        );
        prop_assert_eq!(ex_nonterm, 0, "finds non-termination: {}", ctx);
        prop_assert_eq!(
            finals.clone(),
            vec![instances(&rf["arrays"])],
            "final stores: {}",
            ctx
        );
        prop_assert_eq!(
            is_empty_list(&ex["divergences"]),
            !divergent,
            "divergence: {}",
            ctx
        );
    }
    Ok(())
}

/// A generated kernel as it is shown on failure: source and launch options.
fn show(k: &GenKernel) -> String {
    format!(
        "--- k.ksim ---\n{}--- launch options ---\n{}",
        k.source(),
        k.launch_args().join(" ")
    )
}

#[test]
fn engines_explorer_and_commands_agree() {
    let stats = Stats::default();
    let cases = support::cases("KSIM_GEN_CASES", 160);
    let start = std::time::Instant::now();
    check_property(
        "engines_explorer_and_commands_agree",
        gen::kernel(),
        cases,
        |k| check_kernel(&k, &stats),
        show,
    );
    eprintln!(
        "engines_explorer_and_commands_agree: {} in {:.1} s",
        stats.line(),
        start.elapsed().as_secs_f64()
    );
    // The generator must keep exercising the explorer: most searches complete.
    let (ex, inc) = (
        stats.exhaustive.load(Ordering::Relaxed),
        stats.incomplete.load(Ordering::Relaxed),
    );
    assert!(
        ex >= 2 * inc,
        "only {ex} of {} explorations completed",
        ex + inc
    );
}

/// What `gpu compare` must say about a generated kernel, given the reference run.
fn check_gpu(k: &GenKernel) -> Result<(), TestCaseError> {
    let src = k.source();
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("k.ksim"), &src).expect("write kernel");
    let d = dir.path();
    let (rf, _) = json_of(d, k, &["run"], &["--json"])?;
    let faulted = !rf["fault"].is_null();
    let racy = !is_empty_list(&rf["races"]);
    let divergent = !is_empty_list(&rf["divergences"]);
    let e = ksim_k(d, k, &["gpu", "compare"], &[]);
    let cmd = cmdline(k, &["gpu", "compare"], &[]);
    if !e.is_orderly() {
        return Err(fail("gpu compare did not end in order", &cmd, &e));
    }
    if faulted {
        // The simulator faulted: nothing to compare, the device is not run.
        prop_assert_eq!(
            e.code,
            Some(1),
            "faulting kernel: {}\n{}",
            cmd,
            e.describe()
        );
    } else if divergent {
        // Undefined on a device (issue 13, item 6): reported, never launched.
        prop_assert!(
            e.code == Some(1) && e.text().contains("divergence"),
            "divergent kernel not reported as such: {}\n{}",
            cmd,
            e.describe()
        );
    } else if racy {
        // A racy kernel may differ on the device; the comparison still ends in order.
        prop_assert!(matches!(e.code, Some(0 | 1)), "{}", cmd);
    } else {
        prop_assert!(
            e.code == Some(0) && e.stdout.starts_with("match"),
            "clean kernel does not match the device: {}\n{}",
            cmd,
            e.describe()
        );
    }
    Ok(())
}

/// `gpu compare` on PoCL (each case builds one OpenCL program, about a second, hence
/// fewer cases). Skipped without an OpenCL platform unless `KSIM_REQUIRE_OPENCL=1`.
#[test]
fn gpu_compare_agrees() {
    if !support::opencl_available("gpu_compare_agrees") {
        return;
    }
    let cases = support::cases("KSIM_GEN_GPU_CASES", 8);
    check_property(
        "gpu_compare_agrees",
        gen::kernel(),
        cases,
        |k| check_gpu(&k),
        show,
    );
}

/// The generator's kernels are well-typed (checked in-process, many cases: cheap).
#[test]
fn generated_kernels_are_well_typed() {
    let cases = support::cases("KSIM_GEN_CASES", 160) * 2;
    check_property(
        "generated_kernels_are_well_typed",
        gen::kernel(),
        cases,
        |k| {
            let src = k.source();
            match lang::check::compile(&src) {
                Ok(_) => Ok(()),
                Err(d) => Err(TestCaseError::fail(lang::render::render(
                    &d, "k.ksim", &src, false,
                ))),
            }
        },
        show,
    );
}

/// The generator produces the OpenCL extensions it claims to (fenced barriers, atomics,
/// per-dimension queries, 2D launches) often enough to be tested: in 400 kernels, each in at
/// least 20.
#[test]
fn generated_kernels_use_fences_atomics_and_2d_launches() {
    use proptest::strategy::{Strategy, ValueTree};
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let strategy = gen::kernel();
    let mut counts = [0usize; 5];
    for _ in 0..400 {
        let k = strategy.new_tree(&mut runner).expect("a kernel").current();
        let src = k.source();
        let found = [
            src.contains("barrier(local);"),
            src.contains("barrier(global);"),
            k.has_atomics(),
            src.contains("get_local_id(1)") || src.contains("get_global_size(0)"),
            k.dim1.is_some(),
        ];
        for (c, f) in counts.iter_mut().zip(found) {
            *c += f as usize;
        }
    }
    assert!(counts.iter().all(|&c| c >= 20), "{counts:?}");
}
