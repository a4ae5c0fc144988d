//! GPUVerify's specification annotations checked at run time (S-ASSERT): each annotation
//! is placed where GPUVerify means it to hold, both engines report a false one as the same
//! fault (thread, annotation, values), a `__requires` blames the launch, and an
//! annotation's reads are not accesses for races.

mod common;
use common::cl::{compile, Ran};
use common::{ksim, stdout, text};

/// Runs `src` on both engines (one group of `local` work-items, buffers `(name, size,
/// spec)`, scalars `(name, value)`; `common::cl::run` checks that they agree) and returns
/// what the canonical execution found.
fn run(src: &str, local: usize, bufs: &[(&str, usize, &str)], args: &[(&str, &str)]) -> Ran {
    common::cl::run(src, &[1], &[local], bufs, args)
}

fn message(r: &Ran) -> String {
    r.fault.clone().unwrap_or_else(|| "none".into())
}

#[test]
fn a_false_assert_is_a_fault_with_the_thread_and_the_values() {
    let src = "kernel void k(__global int *A) {
        int x = get_local_id(0) * 2;
        __assert(x < 6);
        A[get_local_id(0)] = x;
    }";
    let r = run(src, 4, &[("A", 4, "zeros")], &[]);
    let f = r.raw_fault.clone().expect("thread 3 has x = 6");
    assert_eq!(f.thread.map(|t| t.local), Some(3));
    let m = f.to_string();
    assert!(m.contains("an assertion does not hold (`__assert`)"), "{m}");
    assert!(m.contains("= 6"), "{m}");
    let span = f.span.expect("the annotation's location");
    assert!(src[span].starts_with("__assert(x < 6)"));
    // Three work-items: every assertion holds.
    let r = run(src, 3, &[("A", 4, "zeros")], &[]);
    assert!(r.fault.is_none(), "{}", message(&r));
}

#[test]
fn global_assert_and_predicates_have_their_meaning() {
    // __implies(a, b) is !a || b; __is_pow2; __ite; __enabled() holds.
    let src = "kernel void k(__global int *A, int n) {
        int i = get_local_id(0);
        __global_assert(__implies(i > 100, false));
        __assert(__is_pow2(n) && !__is_pow2(n + 1) && !__is_pow2(0));
        __assert(__ite(i < 2, A[i] == 0, A[i] == i));
        __assert(__enabled());
        A[i] = i;
    }";
    let r = run(src, 4, &[("A", 4, "zeros")], &[("n", "8")]);
    // A[i] is 0 for every i at the assertion: it fails for i = 2 (A[2] == 2 is false).
    let f = r
        .raw_fault
        .clone()
        .expect("the __ite assertion fails for thread 2");
    assert_eq!(f.thread.map(|t| t.local), Some(2));
    let r = run(src, 4, &[("A", 4, "iota")], &[("n", "8")]);
    // With A = iota the __ite assertion fails for thread 0 or 1 only if A[i] != 0: thread 1.
    assert_eq!(r.raw_fault.and_then(|f| f.thread).map(|t| t.local), Some(1));
    let r = run(src, 2, &[("A", 4, "zeros")], &[("n", "8")]);
    assert!(r.fault.is_none(), "{}", message(&r));
    let r = run(src, 2, &[("A", 4, "zeros")], &[("n", "6")]);
    assert!(message(&r).contains("n = 6"), "{}", message(&r));
}

#[test]
fn requires_blames_the_launch() {
    let src = "kernel void k(__global int *A, int j) {
        __requires(j == 0);
        A[get_local_id(0) + j] = 1;
    }";
    let r = run(src, 4, &[("A", 8, "zeros")], &[("j", "0")]);
    assert!(r.fault.is_none(), "{}", message(&r));
    let r = run(src, 4, &[("A", 8, "zeros")], &[("j", "3")]);
    let f = r
        .raw_fault
        .clone()
        .expect("j = 3 violates the precondition");
    assert!(f.kind.blames_launch());
    assert_eq!(
        f.to_string(),
        "the launch violates the kernel's precondition (`__requires`) with j = 3 in thread 0 of group 0"
    );
}

#[test]
fn requires_of_a_helper_is_checked_at_each_call_and_blames_the_caller() {
    let src = "void bar(__global int *A, int x) { __global_requires(x == 100); A[0] = x; }
    kernel void k(__global int *A) {
        int z = 50;
        if (get_local_id(0) % 2 == 0) { z = 100; }
        if (get_local_id(0) == 1) { bar(A, z); }
    }";
    let r = run(src, 2, &[("A", 1, "zeros")], &[]);
    let f = r.raw_fault.clone().expect("thread 1 calls bar with 50");
    assert!(!f.kind.blames_launch());
    assert_eq!(f.thread.map(|t| t.local), Some(1));
    assert!(f
        .to_string()
        .contains("a call violates its function's precondition (`__call_requires`)"));
}

#[test]
fn ensures_is_checked_at_every_exit_with_the_returned_value() {
    let src = "int halve(int a) {
        __ensures(__return_val_int() > 0);
        if (a > 10) { return a / 2; }
        return a - 1;
    }
    kernel void k(__global int *A) {
        A[get_local_id(0)] = halve(A[get_local_id(0)]);
    }";
    // iota: thread 1 computes halve(1) = 0, which violates the postcondition; thread 0 too.
    let r = run(src, 4, &[("A", 4, "iota")], &[]);
    let f = r
        .raw_fault
        .clone()
        .expect("halve(0) and halve(1) return <= 0");
    assert_eq!(f.thread.map(|t| t.local), Some(0));
    assert!(
        f.to_string().contains("a postcondition does not hold"),
        "{f}"
    );
    // Random inputs may be negative, so only the engines' agreement (checked by `run`)
    // is asserted here; the next case is exact.
    run(src, 4, &[("A", 4, "random:1")], &[]);
    // Inputs 12.. take the early return: every result is positive.
    let src2 = src.replace(
        "halve(A[get_local_id(0)])",
        "halve(A[get_local_id(0)] + 12)",
    );
    let r = run(&src2, 4, &[("A", 4, "iota")], &[]);
    assert!(r.fault.is_none(), "{}", message(&r));
}

#[test]
fn a_kernel_ensures_is_checked_when_the_thread_exits() {
    let src = "kernel void k(__global int *A) {
        __ensures(A[get_local_id(0)] == 7);
        if (get_local_id(0) == 2) { return; }
        A[get_local_id(0)] = 7;
    }";
    let r = run(src, 4, &[("A", 4, "zeros")], &[]);
    let f = r.raw_fault.clone().expect("thread 2 returns early");
    assert_eq!(f.thread.map(|t| t.local), Some(2));
    assert!(f.to_string().contains("`__ensures`"), "{f}");
}

#[test]
fn an_invariant_is_checked_each_time_the_loop_head_is_reached() {
    let src = "kernel void k(__global int *A, int n) {
        int s = 0;
        for (int i = 0; __invariant(s == i * (i - 1) / 2), __invariant(i <= n), i < n; i++) {
            s += i;
        }
        A[get_local_id(0)] = s;
    }";
    let r = run(src, 2, &[("A", 2, "zeros")], &[("n", "5")]);
    assert!(r.fault.is_none(), "{}", message(&r));
    // A wrong invariant fails at the head after the first iteration (i = 1, s = 0 + 0).
    let bad = src.replace("s == i * (i - 1) / 2", "s == i");
    let r = run(&bad, 2, &[("A", 2, "zeros")], &[("n", "5")]);
    let m = message(&r);
    assert!(
        m.contains("a loop invariant does not hold at the loop head (`__invariant`)"),
        "{m}"
    );
    assert!(m.contains("s = 0") && m.contains("= 1"), "{m}");
}

#[test]
fn annotation_reads_are_not_accesses_for_races() {
    // Thread t writes A[t]; every thread asserts on A[0] (written by thread 0 in the same
    // interval). A plain read there would race; the annotation's read does not.
    let src = "kernel void k(__global int *A) {
        A[get_local_id(0)] = 1;
        __assert(A[0] >= 0);
    }";
    let r = run(src, 4, &[("A", 4, "zeros")], &[]);
    let races = r.race_arrays();
    assert!(r.fault.is_none(), "{}", message(&r));
    assert!(races.is_empty(), "{races:?}");
    let plain = src.replace("__assert(A[0] >= 0);", "if (A[0] < 0) { A[1] = 0; }");
    let races = run(&plain, 4, &[("A", 4, "zeros")], &[]).race_arrays();
    assert!(!races.is_empty(), "the same read as code races");
}

#[test]
fn predicates_without_a_dynamic_meaning_are_skipped_with_a_note() {
    let src = "kernel void k(__global int *A) {
        __assert(__no_read(A));
        __assert(__implies(__same_group, __other_int(get_local_id(0)) != get_local_id(0)));
        __candidate_invariant(false);
        A[get_local_id(0)] = 1;
    }";
    let c = compile(src).expect("loads");
    let notes: Vec<&str> = c.info.notes.iter().map(|n| n.text.as_str()).collect();
    assert!(notes.iter().any(|n| n.contains("`__no_read`")), "{notes:?}");
    assert!(
        notes.iter().any(|n| n.contains("`__same_group`")),
        "{notes:?}"
    );
    assert!(
        notes.iter().any(|n| n.contains("candidate invariant")),
        "{notes:?}"
    );
    let r = run(src, 2, &[("A", 2, "zeros")], &[]);
    assert!(r.fault.is_none(), "{}", message(&r));
}

#[test]
fn annotations_are_statements_with_one_condition() {
    let e = compile("kernel void k(__global int *A) { __assert(1, 2); }").unwrap_err();
    assert!(
        e.contains("too many arguments to function call, expected 1, have 2"),
        "{e}"
    );
    let e = compile("kernel void k(__global int *A) { A[0] = __assert(1); }").unwrap_err();
    // ksim's header declares `__assert` void: clang refuses its value.
    assert!(
        e.contains("assigning to '__global int' from incompatible type 'void'"),
        "{e}"
    );
    let e = compile("kernel void k(__global int *A) { __assert(__return_val_int() == 0); }")
        .unwrap_err();
    assert!(e.contains("helper function"), "{e}");
}

const ASSERT_CL: &str = "tests/kernels/cl_assert.cl";

#[test]
fn cli_reports_the_annotation_and_trace_shows_s_assert() {
    for engine in ["reference", "fast"] {
        let o = ksim(&[
            "run",
            ASSERT_CL,
            "--global",
            "4",
            "--local",
            "4",
            "--input",
            "A=zeros:4",
            "--engine",
            engine,
        ]);
        assert!(!o.status.success(), "{}", text(&o));
        let t = text(&o);
        assert!(t.contains("an assertion does not hold (`__assert`)"), "{t}");
        assert!(t.contains("thread 3"), "{t}");
    }
    let o = ksim(&[
        "trace",
        ASSERT_CL,
        "--global",
        "2",
        "--local",
        "2",
        "--input",
        "A=zeros:4",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(stdout(&o).contains("S-ASSERT"), "{}", stdout(&o));
}
