//! OpenCL C's asynchronous work-group copies: `async_work_group_copy`,
//! `async_work_group_strided_copy` (both directions) and `wait_group_events`: the data moves
//! at the wait, and a barrier after it orders the copy before the work-items' accesses
//! (tests/cl_asyncev.rs tests the finer points: events, in-flight copies, uniformity). Each
//! kernel runs on both engines (which must agree); results are what OpenCL C 1.2 §6.12.10
//! specifies.

mod common;
use common::cl::{compile, Ran};

fn run(src: &str, groups: usize, local: usize, bufs: &[(&str, usize, &str)]) -> Ran {
    common::cl::run(src, &[groups], &[local], bufs, &[])
}

const COPY_IN_OUT: &str = "
kernel void k(__global int *in, __global int *out) {
    __local int t[8];
    event_t e = async_work_group_copy(t, in + 8 * get_group_id(0), 8, 0);
    wait_group_events(1, &e);
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = t[7 - get_local_id(0)] * 10;
    barrier(CLK_LOCAL_MEM_FENCE);
    t[get_local_id(0)] = get_local_id(0);
    barrier(CLK_LOCAL_MEM_FENCE);
    event_t f = async_work_group_copy(out + 16 + 8 * get_group_id(0), t, 8, 0);
    wait_group_events(1, &f);
}";

#[test]
fn a_copy_in_and_out_of_local_memory_moves_every_element() {
    // 2 groups of 8 work-items; group g copies in[8g..8g+8] into t.
    let r = run(
        COPY_IN_OUT,
        2,
        8,
        &[("in", 16, "iota"), ("out", 32, "zeros")],
    );
    let out = r.ints("out");
    let want_first: Vec<i64> = (0..16).map(|i| (8 * (i / 8) + 7 - i % 8) * 10).collect();
    assert_eq!(out[..16], want_first[..]);
    assert_eq!(out[16..], [0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7]);
    assert!(r.races.is_empty(), "{:?}", r.race_arrays());
    assert!(!r.divergent);
}

#[test]
fn fewer_work_items_than_elements_share_the_copy() {
    // 4 work-items copy 10 elements, each a quarter of them.
    let src = "kernel void k(__global int *in, __global int *out) {
        __local int t[10];
        event_t e = async_work_group_copy(t, in, 10, 0);
        wait_group_events(1, &e);
        barrier(CLK_LOCAL_MEM_FENCE);
        if (get_local_id(0) == 0) { for (int i = 0; i < 10; i++) out[i] = t[i]; }
    }";
    let r = run(src, 1, 4, &[("in", 10, "iota"), ("out", 10, "zeros")]);
    assert_eq!(r.ints("out"), (0..10).collect::<Vec<i64>>());
    assert!(r.races.is_empty(), "{:?}", r.race_arrays());
}

#[test]
fn strided_copies_stride_the_global_side_both_ways() {
    let src = "kernel void k(__global int *in, __global int *out) {
        __local int t[4];
        event_t e = async_work_group_strided_copy(t, in + 1, 4, 3, 0);
        wait_group_events(1, &e);
        barrier(CLK_LOCAL_MEM_FENCE);
        t[get_local_id(0)] += 100;
        barrier(CLK_LOCAL_MEM_FENCE);
        e = async_work_group_strided_copy(out, t, 4, 2, e);
        wait_group_events(1, &e);
    }";
    // in = 0..12: t = in[1], in[4], in[7], in[10] = 1, 4, 7, 10; out[2i] = t[i] + 100.
    let r = run(src, 1, 4, &[("in", 12, "iota"), ("out", 8, "zeros")]);
    assert_eq!(r.ints("out"), [101, 0, 104, 0, 107, 0, 110, 0]);
    assert!(r.races.is_empty(), "{:?}", r.race_arrays());
}

#[test]
fn reading_the_destination_before_the_wait_is_a_race() {
    let src = "kernel void k(__global int *in, __global int *out) {
        __local int t[8];
        event_t e = async_work_group_copy(t, in, 8, 0);
        out[get_local_id(0)] = t[7 - get_local_id(0)];
        wait_group_events(1, &e);
    }";
    // The data moves at the wait, in the read's barrier interval: a race.
    let r = run(src, 1, 8, &[("in", 8, "iota"), ("out", 8, "zeros")]);
    assert_eq!(r.race_arrays().first().map(String::as_str), Some("t"));
}

#[test]
fn a_copy_not_reached_by_every_work_item_is_divergence() {
    let src = "kernel void k(__global int *in, __global int *out) {
        __local int t[8];
        if (get_local_id(0) < 4) {
            event_t e = async_work_group_copy(t, in, 8, 0);
            wait_group_events(1, &e);
        }
        out[get_local_id(0)] = 1;
    }";
    let r = run(src, 1, 8, &[("in", 8, "iota"), ("out", 8, "zeros")]);
    assert!(r.divergent);
}

#[test]
fn copies_between_two_global_buffers_are_refused() {
    let e = compile(
        "kernel void k(__global int *a, __global int *b) { event_t e = async_work_group_copy(a, b, 4, 0); }",
    )
    .unwrap_err();
    assert!(
        e.contains("no matching function for call to 'async_work_group_copy'"),
        "{e}"
    );
    let e = compile(
        "kernel void k(__global int *a) { __local int t[4]; async_work_group_copy(t, a, 4); }",
    )
    .unwrap_err();
    assert!(
        e.contains("no matching function for call to 'async_work_group_copy'"),
        "{e}"
    );
}
