//! Pointers the lowering settles at run time where they meet structs and asynchronous
//! copies (issue 9 item 3): a dynamic pointer (chosen at run time, or null) as the source or
//! destination of `async_work_group_copy`. Each kernel runs on both engines, which must
//! agree (`common::cl::run`); results are what OpenCL C 1.2 computes.

mod common;
use common::cl::{compile, Ran};

fn run(src: &str, groups: usize, local: usize, bufs: &[(&str, usize, &str)]) -> Ran {
    common::cl::run(src, &[groups], &[local], bufs, &[])
}

/// Group 1 copies from `a`, the others from `b` (or from null, with `NULL` for `b`).
const DYNAMIC_SOURCE: &str = "
kernel void k(__global int *a, __global int *b, __global int *out) {
    __local int t[4];
    __global int *r;
    if (get_group_id(0) == 1) r = a; else r = OTHER;
    event_t e = async_work_group_copy(t, r + 4 * get_group_id(0), 4, 0);
    wait_group_events(1, &e);
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = t[3 - get_local_id(0)];
}";

#[test]
fn a_copy_from_a_pointer_chosen_at_run_time_reads_the_chosen_buffer() {
    let src = DYNAMIC_SOURCE.replace("OTHER", "b");
    let r = run(
        &src,
        2,
        4,
        &[("a", 8, "iota"), ("b", 8, "ones"), ("out", 8, "zeros")],
    );
    assert!(r.fault.is_none(), "{:?}", r.fault);
    // Group 0 copies b[0..4] (ones), group 1 a[4..8] reversed.
    assert_eq!(r.ints("out"), [1, 1, 1, 1, 7, 6, 5, 4]);
    assert!(r.races.is_empty(), "{:?}", r.race_arrays());
}

#[test]
fn a_copy_from_a_pointer_that_may_be_null_faults_where_it_is() {
    let src = DYNAMIC_SOURCE.replace("OTHER", "NULL");
    let r = run(
        &src,
        2,
        4,
        &[("a", 8, "iota"), ("b", 8, "ones"), ("out", 8, "zeros")],
    );
    let f = r.fault.expect("a null source");
    assert!(f.contains("null pointer dereference"), "{f}");
    assert!(f.contains("group 0"), "{f}");
    // A pointer that is always null.
    let always = "kernel void k(__global int *out) {
        __local int t[4];
        __global int *r = NULL;
        event_t e = async_work_group_copy(t, r, 4, 0);
        wait_group_events(1, &e);
        barrier(CLK_LOCAL_MEM_FENCE);
        out[get_local_id(0)] = t[get_local_id(0)];
    }";
    let r = run(always, 1, 4, &[("out", 4, "zeros")]);
    let f = r.fault.expect("an always-null source");
    assert!(f.contains("null pointer dereference"), "{f}");
    // Copying no element touches nothing: no fault.
    let none = always.replace("r, 4, 0", "r, 0, 0").replace(
        "out[get_local_id(0)] = t[get_local_id(0)];",
        "out[get_local_id(0)] = 3;",
    );
    let r = run(&none, 1, 4, &[("out", 4, "zeros")]);
    assert!(r.fault.is_none(), "{:?}", r.fault);
    assert_eq!(r.ints("out"), [3, 3, 3, 3]);
}

#[test]
fn a_copy_into_a_local_array_chosen_at_run_time_and_back_out() {
    // Vector elements (int2): each component is copied; the destination `m` and the
    // global side `r` are both dynamic.
    let src = "kernel void k(__global int2 *a, __global int2 *b) {
        __local int2 t1[2];
        __local int2 t2[2];
        __local int2 *m;
        __global int2 *r;
        if (get_group_id(0) == 1) { m = t1; r = a; } else { m = t2; r = b; }
        event_t e = async_work_group_copy(m, r + 2 * get_group_id(0), 2, 0);
        wait_group_events(1, &e);
        barrier(CLK_LOCAL_MEM_FENCE);
        if (get_group_id(0) == 1) t1[get_local_id(0)] *= 10; else t2[get_local_id(0)] *= 10;
        barrier(CLK_LOCAL_MEM_FENCE);
        e = async_work_group_copy(r + 2 * get_group_id(0), m, 2, 0);
        wait_group_events(1, &e);
    }";
    let r = run(src, 2, 2, &[("a", 8, "iota"), ("b", 8, "iota")]);
    assert!(r.fault.is_none(), "{:?}", r.fault);
    // a's elements 2..4 (group 1) and b's elements 0..2 (group 0), times 10.
    assert_eq!(r.ints("a"), [0, 1, 2, 3, 40, 50, 60, 70]);
    assert_eq!(r.ints("b"), [0, 10, 20, 30, 4, 5, 6, 7]);
    assert!(r.races.is_empty(), "{:?}", r.race_arrays());
}

#[test]
fn a_null_local_destination_faults() {
    let src = "kernel void k(__global int *a) {
        __local int t[4];
        __local int *m;
        if (get_group_id(0) == 1) m = t; else m = NULL;
        event_t e = async_work_group_copy(m, a, 4, 0);
        wait_group_events(1, &e);
    }";
    let r = run(src, 2, 4, &[("a", 8, "iota")]);
    let f = r.fault.expect("a null destination");
    assert!(f.contains("null pointer dereference"), "{f}");
}

#[test]
fn copies_through_dynamic_pointers_ksim_cannot_model_are_refused_clearly() {
    for (src, msg) in [
        (
            "kernel void k(__global int *a, int x) { __local int t[4]; __local int u[4]; \
             __global int *p = x ? a : t; event_t e = async_work_group_copy(u, p, 4, 0); }",
            // OpenCL C 1.2 has no pointer that may reach two address spaces: clang refuses it.
            "which are pointers to non-overlapping address spaces",
        ),
        (
            "kernel void k(__global int *a, int x) { int y = 0; __local int t[4]; \
             int *p = x ? a : &y; event_t e = async_work_group_copy(t, p, 4, 0); }",
            "which are pointers to non-overlapping address spaces",
        ),
        (
            "kernel void k(__global int *a) { __local int *t = NULL; __global int *p = NULL; \
             event_t e = async_work_group_copy(t, p, 4, 0); }",
            "between two pointers that are always null",
        ),
    ] {
        let e = compile(src).unwrap_err();
        assert!(e.contains(msg), "{src}: {e}");
    }
}

/// A buffer of structs with a pointer member: each work-item stores a pointer chosen at
/// run time (odd ones `x + g`, even ones `y`, the last one null) and an int.
const STORE_PTR: &str = "
struct a { __global int *p; int i; };
kernel void k(__global int *x, __global int *y, __global struct a *q) {
    int g = get_global_id(0);
    q[g].i = 42;
    if (g == 3) q[g].p = NULL; else q[g].p = (g % 2) ? x + g : y;
}";

#[test]
fn a_pointer_member_of_a_buffer_of_structs_holds_tag_and_offset() {
    let r = run(
        STORE_PTR,
        1,
        4,
        &[
            ("x", 4, "zeros"),
            ("y", 4, "zeros"),
            ("q.p.tag", 4, "iota"),
            ("q.p.offset", 4, "iota"),
            ("q.i", 4, "zeros"),
        ],
    );
    assert!(r.fault.is_none(), "{:?}", r.fault);
    assert!(r.races.is_empty(), "{:?}", r.race_arrays());
    assert_eq!(r.ints("q.i"), [42, 42, 42, 42]);
    let (tag, offset) = (r.ints("q.p.tag"), r.ints("q.p.offset"));
    // y (g = 0, 2) and x (g = 1) have distinct tags, neither null; null is tag 0.
    assert_eq!(tag[0], tag[2]);
    assert!(tag[0] > 0 && tag[1] > 0 && tag[0] != tag[1], "{tag:?}");
    assert_eq!(tag[3], 0);
    assert_eq!(offset[..3], [0, 1, 0]);
}

#[test]
fn copying_a_pointer_member_moves_its_tag_and_offset_unread() {
    // The launch filled q1: its pointers are copied as they are (GPUVerify's
    // load_ptr_and_int); an array member's element 3 likewise.
    let src = "
    struct a { __global int *p; int i; };
    struct b { __global int *p[5]; int i; };
    kernel void k(__global struct a *q1, __global struct a *q2,
                  __global struct b *r1, __global struct b *r2) {
        int g = get_global_id(0);
        q2[g].i = q1[g].i;
        q2[g].p = q1[g].p;
        r2[g].p[3] = r1[g].p[3];
    }";
    let r = run(
        src,
        1,
        2,
        &[
            ("q1.p.tag", 2, "iota"),
            ("q1.p.offset", 2, "ones"),
            ("q1.i", 2, "iota"),
            ("q2.p.tag", 2, "zeros"),
            ("q2.p.offset", 2, "zeros"),
            ("q2.i", 2, "zeros"),
            ("r1.p.tag", 10, "iota"),
            ("r1.p.offset", 10, "iota"),
            ("r1.i", 2, "zeros"),
            ("r2.p.tag", 10, "zeros"),
            ("r2.p.offset", 10, "zeros"),
            ("r2.i", 2, "zeros"),
        ],
    );
    assert!(r.fault.is_none(), "{:?}", r.fault);
    assert!(r.races.is_empty(), "{:?}", r.race_arrays());
    assert_eq!(r.ints("q2.p.tag"), [0, 1]);
    assert_eq!(r.ints("q2.p.offset"), [1, 1]);
    assert_eq!(r.ints("q2.i"), [0, 1]);
    // Struct g's element 3 is at 5g + 3.
    assert_eq!(r.ints("r2.p.tag"), [0, 0, 0, 3, 0, 0, 0, 0, 8, 0]);
    assert_eq!(r.ints("r2.p.offset"), [0, 0, 0, 3, 0, 0, 0, 0, 8, 0]);
}

#[test]
fn two_work_items_storing_one_pointer_member_race() {
    let src = "
    struct a { __global int *p; int i; };
    kernel void k(__global int *x, __global struct a *q) {
        q[0].p = x + get_global_id(0);
    }";
    let r = run(
        src,
        1,
        2,
        &[
            ("x", 2, "zeros"),
            ("q.p.tag", 2, "zeros"),
            ("q.p.offset", 2, "zeros"),
            ("q.i", 2, "zeros"),
        ],
    );
    // Both store q[0].p: the first conflict found is on its tag.
    assert_eq!(
        r.race_arrays().first().map(String::as_str),
        Some("q.p.tag"),
        "{:?}",
        r.race_arrays()
    );
}

#[test]
fn pointer_members_ksim_cannot_model_are_refused_clearly() {
    for (body, msg) in [
        (
            "*q[0].p = 1;",
            "using a pointer read from a buffer of structs (`q.p`)",
        ),
        (
            "__global int *p = q[0].p;",
            "using a pointer read from a buffer of structs (`q.p`)",
        ),
        (
            "r[0].p[get_local_id(0)] = x;",
            "this index into the array of pointers `r.p` (a constant below 5)",
        ),
        (
            "q[0].p += 1;",
            "a compound assignment to the pointer member `q.p`",
        ),
    ] {
        let src = format!(
            "struct a {{ __global int *p; int i; }}; struct b {{ __global int *p[5]; }};
             kernel void k(__global int *x, __global struct a *q, __global struct b *r) {{ {body} }}"
        );
        let e = compile(&src).unwrap_err();
        assert!(e.contains(msg), "{body}: {e}");
    }
}

/// GPUVerify's test_structs/store_ptr_array_element: a struct kernel parameter holding an
/// array of pointers is invalid OpenCL C 1.2; clang-15 refuses it, as PoCL and Oclgrind do.
#[test]
fn an_array_of_pointers_in_a_struct_parameter_is_refused() {
    let src = "
    struct s { __global int *p[5]; };
    kernel void k(__global int *p, struct s q) {
        q.p[3] = p;
        q.p[3][get_global_id(0)] = 5;
    }";
    let e = compile(src).expect_err("refused");
    assert!(
        e.contains("struct kernel parameters may not contain pointers"),
        "{e}"
    );
}

/// GPUVerify's null_pointers/function_prototype_or_local: `bar` has no body.
const PROTOTYPE: &str = "
float *bar(float *p);
kernel void k(__global float *out, int i) {
    float x = 0;
    float z = 0;
    float *y;
    if (i == 0) y = bar(&x); else y = &z;
    y[0] = y[0] + 1;
    out[get_global_id(0)] = z;
}";

#[test]
fn a_pointer_returned_by_a_function_without_a_body_is_null() {
    let r = common::cl::run(PROTOTYPE, &[1], &[2], &[("out", 2, "zeros")], &[("i", "0")]);
    let f = r.fault.expect("a null result");
    assert!(f.contains("null pointer dereference"), "{f}");
    let r = common::cl::run(PROTOTYPE, &[1], &[2], &[("out", 2, "zeros")], &[("i", "1")]);
    assert!(r.fault.is_none(), "{:?}", r.fault);
    assert_eq!(r.array("out"), ["1", "1"]);
    let c = compile(PROTOTYPE).expect("loads");
    assert!(
        c.info
            .notes
            .iter()
            .any(|n| n.text.contains("`bar` has no body and returns a pointer")),
        "{:?}",
        c.info.notes.iter().map(|n| &n.text).collect::<Vec<_>>()
    );
}
