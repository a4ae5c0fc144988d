//! Issue 31, items 1-3, through the binary: `ksim transform` applies an optimisation by
//! editing the source (untouched lines kept byte for byte), refuses one that does not
//! apply on the launch (exit 2), and `ksim equiv` checks the result, catching planted
//! wrong transformations.

mod common;
mod support;

use common::{ksim, stdout, text};
use proptest::test_runner::TestCaseError;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use support::gen::{self, GenKernel};

const ALP: &str = "tests/kernels/alpinist";

/// `ksim transform ARGS -o DIR/NAME`: the path written, after checking exit 0.
fn transformed(args: &[&str], name: &str) -> PathBuf {
    let out = common::tmp(&format!("transform-{name}")).join(name);
    let mut all = vec!["transform"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["-o", out.to_str().unwrap()]);
    let o = ksim(&all);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    out
}

fn read(p: impl AsRef<Path>) -> String {
    std::fs::read_to_string(p).expect("read")
}

/// `ksim equiv A B LAUNCH...`'s exit code and output.
fn equiv(a: &str, b: &Path, launch: &[&str]) -> (Option<i32>, String) {
    let mut args = vec!["equiv", a, b.to_str().unwrap()];
    args.extend_from_slice(launch);
    let o = ksim(&args);
    (o.status.code(), text(&o))
}

#[test]
fn unrolling_peels_iterations_like_the_papers_figure_5_and_keeps_the_other_lines() {
    let orig = "examples/kogge_stone.ksim";
    let out = transformed(&[orig, "--unroll", "23:2", "-D", "n=8"], "ks.ksim");
    let (a, b) = (read(orig), read(&out));
    // Lines 1-22 and everything after the loop are the original's, byte for byte.
    let a_lines: Vec<&str> = a.lines().collect();
    let b_lines: Vec<&str> = b.lines().collect();
    assert_eq!(a_lines[..22], b_lines[..22]);
    assert_eq!(
        a_lines[29..],
        b_lines[b_lines.len() - (a_lines.len() - 29)..]
    );
    // Fig. 5: the body twice before the loop, each copy followed by the update, then the
    // loop with its condition and update.
    let loop_text: String = b_lines[22..b_lines.len() - (a_lines.len() - 29)].join("\n");
    let body = "\n            T temp;\n            if (tid >= offset) temp = out[tid - offset];\n            barrier();\n            if (tid >= offset) out[tid] = temp ⊕ out[tid];\n            barrier();\n        }";
    assert_eq!(
        loop_text,
        format!(
            "    {{\n        // ksim transform --unroll 23:2: the loop runs at least 2 times (checked on the launch -D n=8: at least 3)\n        int offset = 1;\n        {{{body}\n        offset *= 2;\n        {{{body}\n        offset *= 2;\n        for (; offset < n; offset *= 2) {{{body}\n    }}"
        )
    );
    for n in ["n=8", "n=16"] {
        let (code, t) = equiv(orig, &out, &["-D", n]);
        assert_eq!(code, Some(0), "{t}");
    }
}

#[test]
fn unrolling_past_the_trip_count_is_refused_and_equiv_catches_it_on_a_shorter_launch() {
    let o = ksim(&[
        "transform",
        "examples/kogge_stone.ksim",
        "--unroll",
        "23:4",
        "-D",
        "n=8",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        text(&o),
        "error: not applied: the loop on line 23 runs only 3 times on the launch -D n=8 (some \
         entry of some thread), fewer than the 4 unrolled iterations\n"
    );
    // Checked on m = 3, the unrolled kernel is wrong where the loop runs once.
    let k = format!("{ALP}/repeat_add.ksim");
    let out = transformed(
        &[&k, "--unroll", "6:2", "-D", "n=4", "-D", "m=3"],
        "ra.ksim",
    );
    let (code, t) = equiv(&k, &out, &["-D", "n=4", "-D", "m=3"]);
    assert_eq!(code, Some(0), "{t}");
    let (code, t) = equiv(&k, &out, &["-D", "n=4", "-D", "m=1"]);
    assert_eq!(code, Some(1), "{t}");
    assert!(t.contains("DIFFERENT: out["), "{t}");
}

#[test]
fn iteration_merging_needs_a_multiple_of_the_trip_count() {
    let orig = "examples/kogge_stone.ksim";
    let out = transformed(&[orig, "--merge-iterations", "23:3", "-D", "n=8"], "m.ksim");
    let b = read(&out);
    assert_eq!(b.matches("offset *= 2;").count(), 2, "{b}");
    assert!(
        b.contains("    for (int offset = 1; offset < n; offset *= 2) {\n        {\n"),
        "{b}"
    );
    let (code, t) = equiv(orig, &out, &["-D", "n=8"]);
    assert_eq!(code, Some(0), "{t}");
    // Planted: the merged loop on a launch whose trip count (4) is no multiple of 3 runs
    // past the condition; the scan's guard hides it (tid >= offset is false), but a
    // counted sum does not.
    let k = format!("{ALP}/repeat_add.ksim");
    let out = transformed(
        &[&k, "--merge-iterations", "6:2", "-D", "n=2", "-D", "m=4"],
        "rm.ksim",
    );
    let (code, t) = equiv(&k, &out, &["-D", "n=2", "-D", "m=3"]);
    assert_eq!(code, Some(1), "{t}");
    let o = ksim(&["transform", orig, "--merge-iterations", "23:2", "-D", "n=8"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).contains(
            "runs 3 times on the launch -D n=8 (some entry of some thread), not a multiple of 2"
        ),
        "{}",
        text(&o)
    );
}

#[test]
fn linearising_the_2d_blelloch_tree_and_back() {
    let orig = "examples/blelloch_tree2d.ksim";
    let lin = transformed(&[orig, "--linearize", "tree", "-D", "n=8"], "lin.ksim");
    let b = read(&lin);
    assert!(b.contains("local T tree[(log2(n) + 1) * n])"), "{b}");
    assert!(b.contains(
        "            tree[(level - 1) * n + tid * 2] = tree[level * n + tid];                                  // left child\n"
    ));
    // Only the declaration and the lines with an access to `tree` changed.
    let changed = (read(orig).lines().zip(b.lines()))
        .filter(|(x, y)| x != y)
        .inspect(|(x, _)| assert!(x.contains("tree["), "{x}"))
        .count();
    assert_eq!(changed, 10);
    let (code, t) = equiv(orig, &lin, &["-D", "n=8"]);
    assert_eq!(code, Some(0), "{t}");
    assert!(t.contains("compared: in, out, tree\n"), "{t}");
    let back = transformed(
        &[
            lin.to_str().unwrap(),
            "--delinearize",
            "tree:n",
            "-D",
            "n=8",
        ],
        "back.ksim",
    );
    assert!(read(&back).contains("local T tree[log2(n) + 1][n])"));
    let (code, t) = equiv(orig, &back, &["-D", "n=4"]);
    assert_eq!(code, Some(0), "{t}");
    let o = ksim(&[
        "transform",
        "examples/blelloch_tree1d.ksim",
        "--delinearize",
        "tree:3",
        "-D",
        "n=8",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).contains(
            "`tree` has 16 elements on the launch -D n=8, not a whole number of rows of 3"
        ),
        "{}",
        text(&o)
    );
}

#[test]
fn bad_requests_are_refused_with_the_reason() {
    let cases: [(&[&str], &str); 6] = [
        (
            &["examples/kogge_stone.ksim", "--unroll", "5:2", "-D", "n=8"],
            "no loop starts on line 5",
        ),
        (
            &[
                "examples/blelloch_tree2d.ksim",
                "--unroll",
                "46:1",
                "-D",
                "n=8",
            ],
            "the loop on line 46 is not a counted loop",
        ),
        (
            &["examples/kogge_stone.ksim", "--linearize", "nope"],
            "the kernel has no array parameter `nope`",
        ),
        (
            &["examples/kogge_stone.ksim", "--linearize", "out"],
            "`out` has 1 dimension; linearisation takes a 2D array",
        ),
        (
            &["examples/kogge_stone.ksim", "--unroll", "23:0"],
            "`0` is not a positive number",
        ),
        (
            &["examples/opencl/kogge_stone.cl", "--linearize", "a"],
            "ksim transform edits .ksim kernels only",
        ),
    ];
    for (args, why) in cases {
        let mut all = vec!["transform"];
        all.extend_from_slice(args);
        let o = ksim(&all);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        assert!(text(&o).contains(why), "{args:?}: {}", text(&o));
        assert_eq!(stdout(&o), "", "nothing is emitted");
    }
    // No optimisation, or two at once: a usage error.
    assert_eq!(
        ksim(&["transform", "examples/kogge_stone.ksim"])
            .status
            .code(),
        Some(2)
    );
    let two = [
        "transform",
        "examples/blelloch_tree2d.ksim",
        "--linearize",
        "tree",
        "--unroll",
        "1:1",
    ];
    assert_eq!(ksim(&two).status.code(), Some(2));
}

/// Property: linearising each 2D array of a generated kernel whose canonical run is clean
/// gives a kernel `ksim equiv` finds equivalent (random inputs, explored schedules).
#[test]
fn linearised_generated_kernels_are_equivalent() {
    let cases = support::cases("KSIM_GEN_CASES", 24);
    let checked = AtomicU64::new(0);
    support::check_property(
        "linearised_generated_kernels_are_equivalent",
        gen::kernel(),
        cases,
        |k| check_linearised(&k, &checked),
        |k| k.source(),
    );
    let checked = checked.into_inner();
    eprintln!("{checked} of {cases} generated kernels ran cleanly and were compared");
    assert!(
        checked * 4 >= cases as u64,
        "too few clean kernels: {checked} of {cases}"
    );
}

fn check_linearised(k: &GenKernel, checked: &AtomicU64) -> Result<(), TestCaseError> {
    let limit = Duration::from_secs(30);
    let dir = common::tmp(&format!("transform-gen-{}", k.names.kernel));
    std::fs::write(dir.join("k.ksim"), k.source()).unwrap();
    let launch = k.launch_args();
    let with = |pre: &[&str], file: &str| {
        let mut a: Vec<String> = pre.iter().map(|s| s.to_string()).collect();
        a.push(file.into());
        a.extend(launch.iter().cloned());
        a
    };
    // Only kernels that run cleanly: after an out-of-bounds index the 2D and 1D stores
    // legitimately differ (a row overrun lands in the next row).
    let run = support::ksim_in(
        &dir,
        &with(&["run", "--stop-at-first-fault"], "k.ksim"),
        limit,
    );
    if run.code != Some(0) || k.spins() {
        return Ok(());
    }
    let mut file = "k.ksim".to_string();
    for (i, c) in ['M', 'H'].into_iter().enumerate() {
        let out = format!("k{i}.ksim");
        let mut a = with(&["transform", "--linearize", k.names.get(c)], &file);
        a.extend(["-o".to_string(), out.clone()]);
        let t = support::ksim_in(&dir, &a, limit);
        prop_assert_eq(t.code, Some(0), &t.text())?;
        file = out;
    }
    let mut a = with(
        &["equiv", "--seeds", "2", "--max-executions", "50"],
        "k.ksim",
    );
    a.insert(a.len() - launch.len(), file);
    let e = support::ksim_in(&dir, &a, limit);
    checked.fetch_add(1, Ordering::Relaxed);
    prop_assert_eq(e.code, Some(0), &e.text())
}

fn prop_assert_eq(a: Option<i32>, b: Option<i32>, what: &str) -> Result<(), TestCaseError> {
    if a == b {
        Ok(())
    } else {
        Err(TestCaseError::fail(format!(
            "exit {a:?}, expected {b:?}: {what}"
        )))
    }
}
