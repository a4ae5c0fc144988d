//! Issue 27, first step: VerCors's PVL programs (`.pvl`) load, run, and have their
//! functional specifications checked at run time; permissions too (more in
//! `tests/pvl_perm.rs`), and the output says so.

use std::path::{Path, PathBuf};

mod common;
use common::{ksim, ksim_in, root, stdout, text, tmp};

const ROT: &str = "tests/kernels/pvl/left_rotation.pvl";
const RACY: &str = "tests/kernels/pvl/left_rotation_racy.pvl";
const BAD_BARRIER: &str = "tests/kernels/pvl/left_rotation_bad_barrier.pvl";
const LOOP: &str = "tests/kernels/pvl/loop_invariant_off_by_one.pvl";

/// A PVL program written to a temporary file.
fn program(name: &str, text: &str) -> PathBuf {
    let p = tmp(name).join(format!("{name}.pvl"));
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn left_rotation_runs_clean_and_says_permissions_are_checked() {
    let o = ksim(&["run", ROT, "-D", "size=8", "--input", "array=iota"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(t.contains("array = 1 2 3 4 5 6 7 0"), "{t}");
    assert_eq!(t.matches("permissions are checked").count(), 1, "{t}");
    // The method's postcondition `\old` over the quantified `i` is named, not skipped
    // silently.
    assert!(
        t.contains("left_rotation.pvl:8:3: `ensures` clause not checked"),
        "{t}"
    );
}

#[test]
fn check_summarises_the_method_and_picks_it_by_name() {
    let o = ksim(&["check", ROT, "--kernel", "leftRotation"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(stdout(&o).contains("kernel `leftRotation`"), "{}", text(&o));
    let o = ksim(&["check", ROT, "--kernel", "nope"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("no method `nope`"), "{}", text(&o));
}

#[test]
fn a_false_barrier_postcondition_is_a_fault_naming_the_clause() {
    let o = ksim(&["run", BAD_BARRIER, "-D", "size=8", "--input", "array=iota"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(t.contains("left_rotation_bad_barrier.pvl:27:9"), "{t}");
    assert!(t.contains("ensures array[tid] == temp"), "{t}");
}

#[test]
fn a_loop_invariant_off_by_one_fails_at_the_loop_head() {
    let o = ksim(&["run", LOOP, "-D", "threads=2", "-D", "n=3"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(t.contains("loop_invariant_off_by_one.pvl:12:7"), "{t}");
}

#[test]
fn the_racy_twin_races_and_its_report_replays() {
    let d = tmp("pvl-racy");
    // Without its permissions (which now fail before the race: tests/pvl_perm.rs).
    let src = std::fs::read_to_string(root().join(RACY)).unwrap();
    let bare: String = src
        .lines()
        .filter(|l| !l.contains("Perm("))
        .map(|l| format!("{l}\n"))
        .collect();
    let k = d.join("racy_bare.pvl");
    std::fs::write(&k, bare).unwrap();
    let o = ksim_in(
        &d,
        &[
            "explore",
            "--random",
            "20",
            k.to_str().unwrap(),
            "-D",
            "size=4",
            "--report-dir",
            "r",
            "-q",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let reports: Vec<PathBuf> = std::fs::read_dir(d.join("r"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert!(!reports.is_empty());
    let o = ksim_in(&d, &["replay", reports[0].to_str().unwrap()]);
    assert!(stdout(&o).contains("race reproduced"), "{}", text(&o));
    // With its barrier, the same program has no race on any explored schedule.
    let o = ksim(&["explore", "--random", "20", ROT, "-D", "size=4", "-q"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}

#[test]
fn a_method_precondition_violation_blames_the_input() {
    let p = program(
        "pvl-pre",
        "class C {\n  context_everywhere a.length == n;\n  requires (\\forall int i; 0 <= i && i < n; a[i] >= 0);\n  void m(int[] a, int n) {\n    par (int t = 0 .. n) { a[t] = a[t] + 1; }\n  }\n}\n",
    );
    let f = p.to_str().unwrap();
    let o = ksim(&["run", f, "-D", "n=4", "--input", "a=1,2,3,4"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let o = ksim(&["run", f, "-D", "n=4", "--input", "a=1,-2,3,4"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(t.contains(":3:3"), "{t}");
    // The value of the quantified variable is shown.
    assert!(t.contains("i_") && t.contains("= 1"), "{t}");
}

#[test]
fn a_quantifier_without_a_bound_is_refused_when_loading() {
    let p = program(
        "pvl-unbounded",
        "class C {\n  context_everywhere a.length == n;\n  ensures (\\forall int i; i >= 0; a[i] == 0);\n  void m(int[] a, int n) {\n    par (int t = 0 .. n) { a[t] = 0; }\n  }\n}\n",
    );
    let o = ksim(&["check", p.to_str().unwrap()]);
    let t = text(&o);
    assert!(t.contains("without a bound"), "{t}");
}

#[test]
fn unknown_constructs_are_named_with_their_span() {
    // A syntax error.
    let p = program(
        "pvl-syntax",
        "class C {\n  void m(int[] a) {\n    par (int t = 0 .. 4) { a[t] = ; }\n  }\n}\n",
    );
    let o = ksim(&["check", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("pvl-syntax.pvl:3:"), "{}", text(&o));
    // An `atomic` section names the `invariant` block it belongs to.
    let p = program(
        "pvl-atomic",
        "class C {\n  context_everywhere a.length == 4;\n  void m(int[] a) {\n    par (int t = 0 .. 4) { atomic(inv) { a[0] = t; } }\n  }\n}\n",
    );
    let o = ksim(&["check", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("`atomic(inv)` names no enclosing `invariant` block"),
        "{}",
        text(&o)
    );
    assert!(text(&o).contains("pvl-atomic.pvl:4:35"), "{}", text(&o));
}

#[test]
fn sequence_values_are_refused_by_name() {
    // A `seq<int>` parameter: named at its place, not misread as a comparison.
    let p = program("pvl-seq", "class C {\n  pure int f(seq<int> xs) = 0;\n}\n");
    let o = ksim(&["check", p.to_str().unwrap()]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(
        t.contains("`seq<...>`: `seq<T>`, `set<T>` and `bag<T>` values are not supported yet"),
        "{t}"
    );
    assert!(t.contains("pvl-seq.pvl:2:14"), "{t}");
    // A size `|xs|` comes first in this one.
    let p = program(
        "pvl-size",
        "class C {\n  requires |xs| > 0;\n  void m(set<int> xs) { }\n}\n",
    );
    let o = ksim(&["check", p.to_str().unwrap()]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(
        t.contains("`|xs|` (the size of a sequence, set or bag): `seq<T>`"),
        "{t}"
    );
    assert!(t.contains("pvl-size.pvl:2:12"), "{t}");
}

#[test]
fn a_pure_functions_contract_is_checked_at_each_call() {
    let src = "class C {\n  requires x >= 0;\n  ensures \\result >= x;\n  pure int twice(int x) = 2 * x;\n\n  context_everywhere a.length == n;\n  void m(int[] a, int n) {\n    par (int t = 0 .. n) { a[t] = twice(t); }\n  }\n}\n";
    let p = program("pvl-pure", src);
    let o = ksim(&["run", p.to_str().unwrap(), "-D", "n=4"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(t.contains("a = 0 2 4 6"), "{t}");
    // A call outside the precondition.
    let p = program("pvl-pure-pre", &src.replace("twice(t)", "twice(t - 1)"));
    let o = ksim(&["run", p.to_str().unwrap(), "-D", "n=4"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(
        t.contains("a call violates its function's precondition (`__call_requires`)"),
        "{t}"
    );
    assert!(t.contains("pvl-pure-pre.pvl:2:3"), "{t}");
    // A postcondition on `\result` that the body does not meet (twice(0) = 0).
    let p = program(
        "pvl-pure-post",
        &src.replace("\\result >= x", "\\result > x"),
    );
    let o = ksim(&["run", p.to_str().unwrap(), "-D", "n=4"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(t.contains("a postcondition does not hold"), "{t}");
    assert!(t.contains("pvl-pure-post.pvl:3:3"), "{t}");
}

#[test]
fn nested_par_blocks_are_groups_of_work_items() {
    let p = program(
        "pvl-grid",
        "class C {\n  context_everywhere a.length == g * b;\n  void m(int[] a, int g, int b) {\n    par grid (int x = 0 .. g) {\n      par block (int y = 0 .. b)\n        ensures a[x * b + y] == x;\n      {\n        a[x * b + y] = x;\n        barrier(block) { requires true; }\n      }\n    }\n  }\n}\n",
    );
    let o = ksim(&["run", p.to_str().unwrap(), "-D", "g=2", "-D", "b=3"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(t.contains("2 groups of 3 threads"), "{t}");
    assert!(t.contains("a = 0 0 0 1 1 1"), "{t}");
}

/// How many of the corpus's `.pvl` programs load (`ksim check`), with the first line of
/// the reason for each that does not; printed, not asserted (a yardstick, not a target).
#[test]
fn corpus_pvl_programs_load_count() {
    let corpus = root().join("../shared/corpora/vercors-gpu");
    if !corpus.exists() {
        assert!(
            std::env::var_os("KSIM_REQUIRE_CORPUS").is_none(),
            "corpus missing"
        );
        eprintln!("skipped: no corpus at {}", corpus.display());
        return;
    }
    fn walk(d: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|e| e == "pvl") {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    walk(&corpus, &mut files);
    files.sort();
    let mut loaded = 0;
    for f in &files {
        let o = ksim(&["check", f.to_str().unwrap()]);
        if o.status.code() == Some(0) {
            loaded += 1;
        } else {
            let t = text(&o);
            let first = t.lines().next().unwrap_or("");
            eprintln!("{}: {first}", f.strip_prefix(&corpus).unwrap().display());
        }
        // Never a crash.
        assert!(matches!(o.status.code(), Some(0) | Some(2)), "{}", text(&o));
    }
    eprintln!("{loaded} of {} .pvl programs load", files.len());
}
