//! The finer asynchronous-copy model (lang/src/cl/async_copy.rs): events are values, a copy
//! is in flight until the wait that names its event (the data moves there), its accesses
//! are the group's (a barrier after the wait orders them), and the copy's and the wait's
//! arguments must be the same in every work-item. Each kernel runs on both engines, which
//! must agree; the shapes are those of GPUVerify's async_work_group_copy tests.

mod common;
use common::cl::Ran;

fn run(src: &str, groups: usize, local: usize, bufs: &[(&str, usize, &str)]) -> Ran {
    common::cl::run(src, &[groups], &[local], bufs, &[])
}

fn clean(r: &Ran) {
    assert!(r.races.is_empty(), "races on {:?}", r.race_arrays());
    assert!(r.fault.is_none(), "{:?}", r.fault);
    assert!(!r.divergent, "divergent");
}

/// Two copies into `__local` memory, a wait for both, then a barrier: every element is
/// there and nothing races.
const TWO_COPIES: &str = "
kernel void k(global int *p, global int *q) {
    local int a[8];
    local int b[8];
    event_t h[2];
    h[0] = async_work_group_copy(a, p + 8 * get_group_id(0), 8, 0);
    h[1] = async_work_group_copy(b, q + 8 * get_group_id(0), 8, 0);
    wait_group_events(2, h);
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    p[get_global_id(0)] = 2 * a[get_local_id(0)];
    q[get_global_id(0)] = 3 * b[get_local_id(0)];
}";

#[test]
fn waiting_for_every_event_then_a_barrier_is_clean_and_moves_the_data() {
    let r = run(TWO_COPIES, 2, 8, &[("p", 16, "iota"), ("q", 16, "iota")]);
    clean(&r);
    assert_eq!(r.ints("p"), (0..16).map(|i| 2 * i).collect::<Vec<i64>>());
    assert_eq!(r.ints("q"), (0..16).map(|i| 3 * i).collect::<Vec<i64>>());
}

#[test]
fn waiting_for_only_the_first_event_leaves_the_second_copy_in_flight() {
    // GPUVerify's fail/test2: `wait_group_events(1, h)` completes h[0] only; the kernel
    // then ends with the second copy in flight.
    let src = TWO_COPIES.replace("wait_group_events(2, h)", "wait_group_events(1, h)");
    let r = run(&src, 2, 8, &[("p", 16, "iota"), ("q", 16, "iota")]);
    let f = r.fault.clone().unwrap_or_default();
    assert!(
        f.contains("uninitialised read of b")
            || f.contains("finished without waiting for events")
            || r.race_arrays().contains(&"b".to_string()),
        "{f} {:?}",
        r.race_arrays()
    );
}

#[test]
fn a_copy_that_joins_an_event_completes_with_it() {
    // pass/test3: the second copy joins the first one's event; one wait completes both.
    let src = "kernel void k(global int *p, global int *q) {
        local int a[8];
        local int b[8];
        event_t e = async_work_group_copy(a, p, 8, 0);
        async_work_group_copy(b, q, 8, e);
        wait_group_events(1, &e);
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
        p[get_local_id(0)] = a[get_local_id(0)] + b[get_local_id(0)];
    }";
    let r = run(src, 1, 8, &[("p", 8, "iota"), ("q", 8, "iota")]);
    clean(&r);
    // The copy read `p`: a barrier that orders only `__local` memory leaves that read
    // unordered with the store to `p`.
    let local_only = src.replace(
        "CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE",
        "CLK_LOCAL_MEM_FENCE",
    );
    let r = run(&local_only, 1, 8, &[("p", 8, "iota"), ("q", 8, "iota")]);
    assert_eq!(r.race_arrays(), ["p"]);
    assert_eq!(r.ints("p"), (0..8).map(|i| 2 * i).collect::<Vec<i64>>());
}

/// An event that no copy returned cannot be written in OpenCL C 1.2: clang-15 refuses
/// `e + 1` (GPUVerify's fail/test3) and an integer as an event, as PoCL and Oclgrind do.
#[test]
fn events_no_copy_returned_are_refused_by_clang() {
    let copy = "kernel void k(global int *p, global int *q) {
        local int a[8];
        local int b[8];
        event_t e = async_work_group_copy(a, p, 8, 0);
        async_work_group_copy(b, q, 8, e + 1);
        wait_group_events(1, &e);
    }";
    let e = common::cl::compile(copy).expect_err("refused");
    assert!(e.contains("invalid operands to binary expression"), "{e}");
    let wait = "kernel void k(global int *p) {
        local int a[8];
        event_t e = async_work_group_copy(a, p, 8, 0);
        event_t bad = 7;
        wait_group_events(1, &bad);
    }";
    let e = common::cl::compile(wait).expect_err("refused");
    assert!(
        e.contains("with an expression of incompatible type 'int'"),
        "{e}"
    );
}

#[test]
fn reading_the_destination_with_no_wait_is_found() {
    // fail/test1: the kernel reads the destination and ends with the copy never waited
    // for: the fault "finished without waiting for events" at the copy.
    let src = "kernel void k(global int *p) {
        local int a[8];
        event_t e = async_work_group_copy(a, p + 8 * get_group_id(0), 8, 0);
        p[get_global_id(0)] = 2 * a[get_local_id(0)];
    }";
    let r = run(src, 2, 8, &[("p", 16, "iota")]);
    let f = r.fault.clone().unwrap_or_default();
    assert!(f.contains("finished without waiting for events"), "{f}");
}

#[test]
fn a_barrier_before_the_wait_does_not_order_the_copy() {
    // fail/test13: the read after the barrier is still before the wait.
    let src = "kernel void k(global int *p, global int *q) {
        local int a[8];
        for (int i = 0; i < 8; i++) { if (get_local_id(0) == 0) a[i] = 0; }
        barrier(CLK_LOCAL_MEM_FENCE);
        event_t e = async_work_group_copy(a, p, 8, 0);
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
        q[get_local_id(0)] = a[get_local_id(0)];
        wait_group_events(1, &e);
    }";
    let r = run(src, 1, 8, &[("p", 8, "iota"), ("q", 8, "zeros")]);
    assert_eq!(r.race_arrays().first().map(String::as_str), Some("a"));
}

#[test]
fn the_wait_alone_does_not_order_the_copy_with_a_work_items_reads() {
    // fail/test14: each work-item reads its own element after the wait, no barrier.
    let src = TWO_COPIES.replace("barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);", "");
    let r = run(&src, 2, 8, &[("p", 16, "iota"), ("q", 16, "iota")]);
    assert!(
        r.race_arrays().contains(&"a".to_string()),
        "{:?}",
        r.race_arrays()
    );
    assert!(r.fault.is_none(), "{:?}", r.fault);
}

#[test]
fn two_copies_out_to_one_region_race() {
    // fail/test5: both copies write p[8g..8g+8]; waited for, they race.
    let src = "kernel void k(global int *p) {
        local int a[8];
        local int b[8];
        a[get_local_id(0)] = 1;
        b[get_local_id(0)] = 2;
        barrier(CLK_LOCAL_MEM_FENCE);
        event_t e[2];
        e[0] = async_work_group_copy(p + 8 * get_group_id(0), a, 8, 0);
        e[1] = async_work_group_copy(p + 8 * get_group_id(0), b, 8, 0);
        wait_group_events(2, e);
    }";
    let r = run(src, 2, 8, &[("p", 16, "zeros")]);
    assert_eq!(r.race_arrays().first().map(String::as_str), Some("p"));
}

#[test]
fn writing_the_source_before_a_barrier_after_the_wait_races() {
    // fail/test4: the copy out reads a[] that each work-item wrote with no barrier.
    let src = "kernel void k(global int *p) {
        local int a[8];
        event_t e = async_work_group_copy(a, p + 8 * get_group_id(0), 8, 0);
        wait_group_events(1, &e);
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
        a[get_local_id(0)] = 2 * a[get_local_id(0)];
        e = async_work_group_copy(p + 8 * get_group_id(0), a, 8, 0);
        wait_group_events(1, &e);
    }";
    let r = run(src, 2, 8, &[("p", 16, "iota")]);
    assert!(
        r.race_arrays().contains(&"a".to_string()),
        "{:?}",
        r.race_arrays()
    );
    let fixed = src.replace(
        "e = async_work_group_copy(p",
        "barrier(CLK_LOCAL_MEM_FENCE); e = async_work_group_copy(p",
    );
    let r = run(&fixed, 2, 8, &[("p", 16, "iota")]);
    clean(&r);
    assert_eq!(r.ints("p"), (0..16).map(|i| 2 * i).collect::<Vec<i64>>());
}

#[test]
fn a_wait_given_different_events_by_different_work_items_is_divergence() {
    // fail/test11.
    let src = "kernel void k(global int *p, global int *q) {
        local int a[8];
        local int b[8];
        event_t ea = async_work_group_copy(a, p, 8, 0);
        event_t eb = async_work_group_copy(b, q, 8, 0);
        event_t *ptr = &ea;
        if (get_local_id(0) > 3) ptr = &eb;
        wait_group_events(1, ptr);
    }";
    let r = run(src, 1, 8, &[("p", 8, "iota"), ("q", 8, "iota")]);
    assert!(r.divergent);
}

#[test]
fn a_copy_given_different_events_by_different_work_items_is_divergence() {
    // fail/test12.
    let src = "kernel void k(global int *p, global int *q, global int *r) {
        local int a[8];
        local int b[8];
        local int c[8];
        event_t ea = async_work_group_copy(a, p, 8, 0);
        event_t eb = async_work_group_copy(b, q, 8, 0);
        event_t *ptr = &ea;
        if (get_local_id(0) > 3) ptr = &eb;
        async_work_group_copy(c, r, 8, *ptr);
    }";
    let r = run(
        src,
        1,
        8,
        &[("p", 8, "iota"), ("q", 8, "iota"), ("r", 8, "iota")],
    );
    assert!(r.divergent);
}

#[test]
fn a_copy_given_different_counts_is_divergence() {
    let src = "kernel void k(global int *p) {
        local int a[8];
        event_t e = async_work_group_copy(a, p, 4 + get_local_id(0) % 2, 0);
        wait_group_events(1, &e);
    }";
    let r = run(src, 1, 8, &[("p", 8, "iota")]);
    assert!(r.divergent);
}

#[test]
fn a_copy_in_a_loop_completes_at_the_wait_lowered_before_it() {
    // Double buffering: the wait at the top of the loop completes the copy made at the
    // bottom of the previous iteration.
    let src = "kernel void k(global int *p, global int *out) {
        local int t[4];
        event_t e = async_work_group_copy(t, p, 4, 0);
        int acc = 0;
        for (int j = 0; j < 3; j++) {
            wait_group_events(1, &e);
            barrier(CLK_LOCAL_MEM_FENCE);
            acc += t[get_local_id(0)];
            barrier(CLK_LOCAL_MEM_FENCE);
            e = async_work_group_copy(t, p + 4 * (j + 1), 4, 0);
        }
        wait_group_events(1, &e);
        out[get_local_id(0)] = acc;
    }";
    let r = run(src, 1, 4, &[("p", 16, "iota"), ("out", 4, "zeros")]);
    clean(&r);
    // acc = p[l] + p[4 + l] + p[8 + l].
    assert_eq!(
        r.ints("out"),
        (0..4).map(|l| 3 * l + 12).collect::<Vec<i64>>()
    );
}

#[test]
fn a_copy_strided_out_waits_like_any_other() {
    let src = "kernel void k(global int *p) {
        local int t[4];
        t[get_local_id(0)] = 10 + get_local_id(0);
        barrier(CLK_LOCAL_MEM_FENCE);
        event_t e = async_work_group_strided_copy(p, t, 4, 2, 0);
        wait_group_events(1, &e);
    }";
    let r = run(src, 1, 4, &[("p", 8, "zeros")]);
    clean(&r);
    assert_eq!(r.ints("p"), [10, 0, 11, 0, 12, 0, 13, 0]);
}

#[test]
fn a_copy_given_different_pointers_is_divergence() {
    // fail/test6's error: the source depends on the local id.
    let src = "kernel void k(global int *p) {
        local int a[4];
        event_t e = async_work_group_copy(a, p + 4 * get_local_id(0), 4, 0);
        wait_group_events(1, &e);
    }";
    let r = run(src, 1, 4, &[("p", 16, "iota")]);
    assert!(r.divergent);
    // The same offset in every work-item of a group, another in each group: uniform.
    let per_group = src.replace("get_local_id(0)", "get_group_id(0)");
    let r = run(&per_group, 4, 4, &[("p", 16, "iota")]);
    clean(&r);
}
