//! Whole-program tests of behaviours no other test file covers: `ksim races` (text, JSON,
//! exit codes), `check` (success and `--core`, with the checker's desugarings), input specs
//! (`@FILE` in both forms, intervals, lists), `--show`, `--schedule round-robin`, and the
//! basic `gpu` and `plot` commands (on PoCL where it is installed; skipped with the reason
//! otherwise, failed under KSIM_REQUIRE_OPENCL=1).

mod common;

use common::{ksim, stdout, text};
use serde_json::Value;
use std::path::Path;

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn json(o: &std::process::Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}", text(o)))
}

#[test]
fn races_says_race_free_and_exits_0_for_a_correct_kernel() {
    let o = ksim(&["races", "examples/kogge_stone.ksim", "-D", "n=64"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let out = stdout(&o);
    assert!(
        out.starts_with("race-free for this input (64 threads, "),
        "{out}"
    );
    assert!(stderr(&o).is_empty(), "{}", stderr(&o));
}

#[test]
fn races_reports_each_race_with_its_count_and_exits_1() {
    let o = ksim(&["races", "examples/kogge_stone_racy.ksim", "-D", "n=8"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let (out, err) = (stdout(&o), stderr(&o));
    let distinct: usize = out
        .strip_suffix(|_| false)
        .unwrap_or(&out)
        .split(" distinct race(s)")
        .next()
        .unwrap()
        .parse()
        .unwrap_or_else(|_| panic!("{out}"));
    assert!(distinct >= 1, "{out}");
    assert_eq!(err.matches("data race on out[").count(), distinct, "{err}");
    assert_eq!(
        err.matches(" between these two statements").count(),
        distinct,
        "{err}"
    );
    // The JSON form says the same.
    let o = ksim(&[
        "races",
        "examples/kogge_stone_racy.ksim",
        "-D",
        "n=8",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let j = json(&o);
    assert_eq!(j["race_free"], false);
    assert_eq!(j["engine"], "fast");
    let races = j["races"].as_array().unwrap();
    assert_eq!(races.len(), distinct);
    for r in races {
        assert_eq!(r["array"], "out");
        assert!(r["count"].as_u64().unwrap() >= 1, "{r}");
    }
}

#[test]
fn races_of_a_faulting_kernel_gives_no_verdict_and_exits_1() {
    let o = ksim(&["races", "tests/kernels/out_of_bounds.ksim", "-D", "n=4"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        stdout(&o).starts_with("no verdict: the execution faulted"),
        "{}",
        text(&o)
    );
    assert!(
        stderr(&o).contains("out-of-bounds access a[4]: a has size [4]"),
        "{}",
        text(&o)
    );
    let j = json(&ksim(&[
        "races",
        "tests/kernels/out_of_bounds.ksim",
        "-D",
        "n=4",
        "--json",
    ]));
    assert_eq!(j["fault"]["kind"], "out-of-bounds");
    assert_eq!(j["fault"]["thread"]["local"], 3);
    assert_eq!(j["race_free"], false);
}

#[test]
fn races_of_a_divergent_kernel_names_the_divergence_and_exits_1() {
    let o = ksim(&["races", "tests/kernels/two_barriers.ksim", "-D", "n=4"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        stdout(&o).starts_with("no race, but 1 divergent barrier(s)"),
        "{}",
        text(&o)
    );
    assert!(stderr(&o).contains("barrier divergence: "), "{}", text(&o));
}

#[test]
fn races_with_the_list_monoid_falls_back_to_the_reference_semantics_and_says_so() {
    let o = ksim(&[
        "races",
        "examples/kogge_stone_racy.ksim",
        "-D",
        "n=4",
        "--monoid",
        "list",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let j = json(&o);
    assert_eq!(j["engine"], "reference");
    assert!(
        j["fallback_reason"].as_str().unwrap().contains("list"),
        "{}",
        j["fallback_reason"]
    );
    assert_eq!(
        j["races"][0]["count"],
        Value::Null,
        "the reference does not count"
    );
    let o = ksim(&[
        "races",
        "examples/kogge_stone_racy.ksim",
        "-D",
        "n=4",
        "--monoid",
        "list",
    ]);
    let err = stderr(&o);
    assert!(
        err.contains("the reference semantics decides instead"),
        "{err}"
    );
    assert!(
        err.contains("reports the first conflicting pair only"),
        "{err}"
    );
}

#[test]
fn races_refuses_an_unbound_size_with_exit_2() {
    let o = ksim(&["races", "examples/kogge_stone.ksim"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("parameter `n` is not bound"),
        "{}",
        text(&o)
    );
}

#[test]
fn check_accepts_a_kernel_and_names_its_parameters() {
    let o = ksim(&["check", "examples/kogge_stone.ksim"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(
        stdout(&o),
        "examples/kogge_stone.ksim: kernel `kogge_stone` is well-typed and generic in T \
         (parameters: n)\n"
    );
    let o = ksim(&["check", "examples/left_rotation.ksim"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(!stdout(&o).contains("generic"), "{}", stdout(&o));
}

/// `check --core` prints the core form: every surface construct desugared.
#[test]
fn check_core_shows_the_desugarings() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("d.ksim");
    std::fs::write(
        &file,
        "kernel d(global int a[n]) launch(groups = 1, local_size = n)\n{\n\
         int x = tid;\n\
         for (int i = 0; i < 2; i++) { x += i; }\n\
         if (x > 3) a[tid] = x;\n\
         x++;\n\
         a[tid] *= 2;\n}\n",
    )
    .unwrap();
    let o = ksim(&["check", file.to_str().unwrap(), "--core"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let core = stdout(&o);
    let body: Vec<&str> = core
        .lines()
        .skip_while(|l| !l.contains("core form"))
        .filter(|l| l.starts_with("    "))
        .map(str::trim)
        .collect();
    assert_eq!(
        body,
        [
            "x := tid;", // declaration with initialiser: an assignment
            "i := 0;",   // for: init; while (cond) { body; step }
            "while (i < 2) {",
            "x := x + i;", // x += e
            "i := i + 1;", // i++
            "}",
            "if (x > 3) {", // if without else: an empty else
            "a[tid] := x;",
            "} else {",
            "}",
            "x := x + 1;",             // x++
            "a[tid] := (a[tid] * 2);", // a[e] *= e
        ],
        "{core}"
    );
}

fn run_out(args: &[&str]) -> String {
    let o = ksim(args);
    assert_eq!(o.status.code(), Some(0), "{args:?}: {}", text(&o));
    stdout(&o)
}

#[test]
fn input_specs_lists_files_intervals_and_lists() {
    let base = ["run", "examples/kogge_stone.ksim", "-D", "n=4"];
    let with = |extra: &[&str]| -> String {
        let mut a: Vec<&str> = base.to_vec();
        a.extend(extra);
        run_out(&a)
    };
    assert!(with(&["--input", "in=1,2,3,4"]).contains("out = 1 3 6 10\n"));
    assert!(with(&["--input", "in=iota"]).contains("out = 0 1 3 6\n"));
    assert!(with(&["--input", "in=ones"]).contains("out = 1 2 3 4\n"));
    assert!(with(&["--input", "in=zeros"]).contains("out = 0 0 0 0\n"));
    // random:SEED is deterministic, and a different seed gives a different input.
    let r5 = with(&["--input", "in=random:5"]);
    assert_eq!(r5, with(&["--input", "in=random:5"]));
    assert_ne!(r5, with(&["--input", "in=random:6"]));

    let dir = tempfile::tempdir().unwrap();
    let lines = dir.path().join("in.txt");
    std::fs::write(&lines, "5\n6\n\n7\n8\n").unwrap();
    let arr = dir.path().join("in.json");
    std::fs::write(&arr, "[5, 6, 7, 8]").unwrap();
    for f in [&lines, &arr] {
        let spec = format!("in=@{}", f.display());
        assert!(
            with(&["--input", &spec]).contains("out = 5 11 18 26\n"),
            "{spec}"
        );
    }
    let short = dir.path().join("short.txt");
    std::fs::write(&short, "1\n2\n").unwrap();
    let o = ksim(&[
        "run",
        "examples/kogge_stone.ksim",
        "-D",
        "n=4",
        "--input",
        &format!("in=@{}", short.display()),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));

    // Interval-monoid elements: the singleton input gives [0,k] (POPL 2014, Theorem 4.5).
    let out = with(&[
        "--monoid",
        "interval",
        "--input",
        "in=[0,0],[1,1],[2,2],[3,3]",
    ]);
    assert!(out.contains("out = [0,0] [0,1] [0,2] [0,3]\n"), "{out}");
    let out = with(&["--monoid", "interval", "--input", "in=[0,0],top,id,[3,3]"]);
    assert!(out.contains("out = [0,0] ⊤ ⊤ ⊤\n"), "{out}");
    // List elements: dot-separated naturals, `[]` for the empty list.
    let out = with(&["--monoid", "list", "--input", "in=0,1.2,[],3"]);
    assert!(
        out.contains("out = [0] [0 1 2] [0 1 2] [0 1 2 3]\n"),
        "{out}"
    );
}

#[test]
fn show_prints_only_the_named_arrays() {
    let out = run_out(&[
        "run",
        "examples/kogge_stone.ksim",
        "-D",
        "n=4",
        "--input",
        "in=1,2,3,4",
        "--show",
        "out",
    ]);
    assert!(out.contains("out = 1 3 6 10\n"), "{out}");
    assert!(!out.contains("in "), "{out}");
    let o = ksim(&[
        "run",
        "examples/kogge_stone.ksim",
        "-D",
        "n=4",
        "--show",
        "nope",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("the kernel has no array `nope`"));
}

#[test]
fn round_robin_interleaves_threads_and_ends_in_the_same_store() {
    let args = |s: &str| {
        vec![
            "run",
            "examples/kogge_stone.ksim",
            "-D",
            "n=4",
            "--input",
            "in=1,2,3,4",
            "--schedule",
            s,
            "--json",
        ]
        .into_iter()
        .map(String::from)
        .collect::<Vec<_>>()
    };
    let run = |s: &str| {
        let a = args(s);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        let o = ksim(&a);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        json(&o)
    };
    let (rr, canonical) = (run("round-robin"), run("canonical"));
    assert_eq!(rr["scheduler"], "round-robin");
    let runs = |j: &Value| -> Vec<(u64, u64)> {
        (j["schedule"]["runs"].as_array().unwrap().iter())
            .map(|r| (r[0].as_u64().unwrap(), r[1].as_u64().unwrap()))
            .collect()
    };
    // One step per thread in turn: 0, 1, 2, 3, then around again, every run one step.
    let rr_runs = runs(&rr);
    assert_eq!(
        rr_runs[..8],
        [
            (0, 1),
            (1, 1),
            (2, 1),
            (3, 1),
            (0, 1),
            (1, 1),
            (2, 1),
            (3, 1)
        ]
    );
    assert!(rr_runs.iter().all(|r| r.1 == 1), "{rr_runs:?}");
    // The canonical schedule runs a thread until its barrier: several steps in a row.
    assert!(runs(&canonical).iter().any(|r| r.1 > 1));
    // A race-free kernel ends in the same store under every schedule (Lemma 5.4).
    assert_eq!(rr["arrays"], canonical["arrays"]);
    assert_eq!(rr["steps"], canonical["steps"]);
}

fn opencl(test: &str) -> bool {
    let o = ksim(&["gpu", "devices"]);
    if o.status.code() == Some(0) {
        return true;
    }
    if std::env::var("KSIM_REQUIRE_OPENCL").is_ok_and(|v| v == "1") {
        panic!(
            "{test}: KSIM_REQUIRE_OPENCL=1 but no OpenCL device: {}",
            text(&o)
        );
    }
    eprintln!("{test}: skipped: no OpenCL device ({})", text(&o).trim());
    false
}

#[test]
fn gpu_devices_emit_and_compare_work_from_the_command_line() {
    // emit only translates: no device needed.
    let o = ksim(&["gpu", "emit", "examples/kogge_stone.ksim", "-D", "n=8"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(stdout(&o).contains("void kogge_stone("), "{}", stdout(&o));
    if !opencl("gpu_devices_emit_and_compare_work_from_the_command_line") {
        return;
    }
    let o = ksim(&["gpu", "devices"]);
    assert!(stdout(&o).contains("max work-group size"), "{}", text(&o));
    let o = ksim(&["gpu", "compare", "examples/kogge_stone.ksim", "-D", "n=8"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        stdout(&o).starts_with("match (16 elements compared"),
        "{}",
        text(&o)
    );
    // A wrong kernel is still what the simulator computes: compare checks the device, not
    // the algorithm.
    let o = ksim(&[
        "gpu",
        "compare",
        "examples/scan_off_by_one.ksim",
        "-D",
        "n=8",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}

#[test]
fn plot_redraws_a_bench_csv() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("b.csv");
    let svg = dir.path().join("b.svg");
    // A CSV `ksim gpu bench --csv` wrote (PoCL, committed with docs/performance.md).
    std::fs::copy("docs/figures/pocl-storage.csv", &csv).unwrap();
    let o = ksim(&[
        "plot",
        csv.to_str().unwrap(),
        "--plot",
        svg.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let drawn = std::fs::read_to_string(&svg).unwrap();
    assert!(drawn.contains("<svg"), "{drawn}");
    let o = ksim(&[
        "plot",
        Path::new("/nonexistent.csv").to_str().unwrap(),
        "--plot",
        "x.svg",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}

/// `explore --timeout` stops a search that would not end otherwise, and says so.
#[test]
fn explore_timeout_stops_the_search_and_says_incomplete() {
    let o = ksim(&[
        "explore",
        "examples/kogge_stone.ksim",
        "-D",
        "n=8",
        "--random",
        "100000000",
        "--timeout",
        "0.3",
    ]);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", text(&o));
    assert!(stdout(&o).contains("INCOMPLETE (timeout)"), "{}", text(&o));
}

#[test]
fn explore_usage_errors_exit_2_with_a_message() {
    for (args, says) in [
        (
            &[
                "explore",
                "examples/kogge_stone.ksim",
                "-D",
                "n=4",
                "--exhaustive",
                "--random",
                "3",
            ][..],
            "cannot be used with",
        ),
        (
            &["explore", "examples/kogge_stone.ksim", "-D", "n=4"],
            "required arguments were not provided",
        ),
        (
            &[
                "explore",
                "examples/kogge_stone.ksim",
                "-D",
                "n=4",
                "--exhaustive",
                "--timeout",
                "soon",
            ],
            "soon",
        ),
        (
            &["explore", "examples/kogge_stone.ksim", "--exhaustive"],
            "parameter `n` is not bound",
        ),
    ] {
        let o = ksim(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        assert!(text(&o).contains(says), "{args:?}: {}", text(&o));
        assert!(!text(&o).contains("panicked"), "{args:?}");
    }
}
