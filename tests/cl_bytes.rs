//! Byte-level views of memory (docs/language.md, "Byte-level views"): pointer casts that
//! change the element type, lowered to accesses of the array's own elements. Each kernel
//! runs on the reference semantics and the fast executor, which must agree on memory,
//! races and faults (`common::cl::run`).

mod common;
use common::cl::{compile, run};
use common::{ksim, stdout, text};

#[test]
fn a_char_view_reads_the_bytes_of_int_elements_little_endian() {
    let src = r#"
        kernel void k(__global int *a, __global int *out) {
            int i = get_global_id(0);
            __global char *c = (__global char *)a;
            __global uchar *u = (__global uchar *)a;
            out[i] = c[i] * 1000 + u[i];
        }
    "#;
    // a[0] = 0x80FF0201: bytes 01 02 FF 80; a[1] = 0x00000304: bytes 04 03 00 00.
    let bufs = [("a", 2, "-2130771455,772"), ("out", 8, "zeros")];
    let r = run(src, &[1], &[8], &bufs, &[]);
    assert_eq!(
        r.ints("out"),
        [1001, 2002, -1000 + 255, -128000 + 128, 4004, 3003, 0, 0]
    );
    assert!(r.races.is_empty(), "{:?}", r.race_arrays());
    assert!(r.fault.is_none(), "{:?}", r.fault);
}

#[test]
fn a_wider_view_joins_elements_and_a_wider_write_splits_them() {
    // An `int` view of a `short` buffer: element i of the view is shorts 2i and 2i + 1.
    let src = r#"
        kernel void k(__global short *s, __global int *out) {
            int i = get_global_id(0);
            __global int *w = (__global int *)s;
            out[i] = w[i];
            barrier(CLK_GLOBAL_MEM_FENCE);
            w[i] = 0x12345678 + i;
        }
    "#;
    let bufs = [("s", 4, "1,2,-1,-1"), ("out", 2, "zeros")];
    let r = run(src, &[1], &[2], &bufs, &[]);
    assert_eq!(r.ints("out"), [0x0002_0001, -1]);
    assert_eq!(r.ints("s"), [0x5678, 0x1234, 0x5679, 0x1234]);
    assert!(r.races.is_empty(), "{:?}", r.race_arrays());
}

#[test]
fn a_view_of_the_same_width_reinterprets() {
    let src = r#"
        kernel void k(__global int *a) {
            __global uint *u = (__global uint *)a;
            u[0] = u[0] + 1u;
            a[1] = (int)(u[1] > 0u);
        }
    "#;
    let r = run(src, &[1], &[1], &[("a", 2, "-1,-5")], &[]);
    assert_eq!(r.ints("a"), [0, 1]);
}

#[test]
fn pointer_arithmetic_counts_the_view_type_and_casts_back() {
    // `c + 4` is one `int` further; cast back, it indexes ints again.
    let src = r#"
        kernel void k(__global int *a, __global int *out) {
            __global char *c = (__global char *)a;
            __global int *p = (__global int *)(c + 4);
            out[0] = p[0];
            out[1] = *((__global int *)c + 2);
        }
    "#;
    let r = run(
        src,
        &[1],
        &[1],
        &[("a", 3, "7,8,9"), ("out", 2, "zeros")],
        &[],
    );
    assert_eq!(r.ints("out"), [8, 9]);
    assert!(r.fault.is_none(), "{:?}", r.fault);
}

#[test]
fn a_misaligned_cast_to_a_wider_type_faults_naming_the_alignment() {
    let src = r#"
        kernel void k(__global int *a, int d) {
            __global char *c = (__global char *)a;
            __global int *p = (__global int *)(c + d);
            p[0] = 1;
        }
    "#;
    let bufs = [("a", 4, "zeros")];
    let r = run(src, &[1], &[1], &bufs, &[("d", "1")]);
    let fault = r.fault.expect("a misaligned pointer faults");
    assert!(fault.contains("__aligned"), "{fault}");
    let r = run(src, &[1], &[1], &bufs, &[("d", "8")]);
    assert!(r.fault.is_none(), "{:?}", r.fault);
    assert_eq!(r.ints("a"), [0, 0, 1, 0]);
}

#[test]
fn out_of_bounds_is_per_byte_range() {
    // An `int` read at the last two bytes of a `short` buffer of 3 reaches short 3.
    let src = r#"
        kernel void k(__global short *s, __global int *out) {
            __global int *w = (__global int *)s;
            out[0] = w[1];
        }
    "#;
    let r = run(
        src,
        &[1],
        &[1],
        &[("s", 3, "zeros"), ("out", 1, "zeros")],
        &[],
    );
    let fault = r.fault.expect("out of bounds");
    assert!(fault.contains("out-of-bounds"), "{fault}");
    assert!(fault.contains("[3]"), "{fault}");
    // A `char` read one byte before the buffer is out of bounds too (element -1).
    let src = r#"
        kernel void k(__global int *a, __global int *out) {
            __global char *c = (__global char *)a;
            out[0] = c[-1];
        }
    "#;
    let r = run(
        src,
        &[1],
        &[1],
        &[("a", 1, "zeros"), ("out", 1, "zeros")],
        &[],
    );
    let fault = r.fault.expect("out of bounds");
    assert!(fault.contains("[-1]"), "{fault}");
}

#[test]
fn a_narrow_read_races_with_an_overlapping_write_and_not_with_a_read() {
    // Work-item 0 writes a[0]; work-item 1 reads byte 2 of it through a char view.
    let src = r#"
        kernel void k(__global int *a, __global int *out) {
            int i = get_global_id(0);
            __global char *c = (__global char *)a;
            if (i == 0) a[0] = 5;
            if (i == 1) out[0] = c[2];
        }
    "#;
    let r = run(
        src,
        &[1],
        &[2],
        &[("a", 2, "zeros"), ("out", 1, "zeros")],
        &[],
    );
    assert_eq!(r.race_arrays(), ["a"]);
    // Reads of distinct bytes (and of the same bytes) never race.
    let src = r#"
        kernel void k(__global int *a, __global int *out) {
            int i = get_global_id(0);
            __global char *c = (__global char *)a;
            out[i] = c[i % 2] + a[0];
        }
    "#;
    let r = run(
        src,
        &[1],
        &[4],
        &[("a", 1, "zeros"), ("out", 4, "zeros")],
        &[],
    );
    assert!(r.races.is_empty(), "{:?}", r.race_arrays());
}

#[test]
fn a_view_passed_to_a_helper_and_a_constant_view() {
    let src = r#"
        __constant int T[2] = { 0x01020304, 0x05060708 };
        char byte_of(__global char *p, int k) { return p[k]; }
        kernel void k(__global int *a, __global int *out) {
            __constant char *t = (__constant char *)T;
            out[0] = byte_of((__global char *)a, 1);
            out[1] = t[4];
        }
    "#;
    let r = run(
        src,
        &[1],
        &[1],
        &[("a", 1, "258"), ("out", 2, "zeros")],
        &[],
    );
    assert_eq!(r.ints("out"), [1, 8]);
}

#[test]
fn what_views_do_not_model_is_a_clear_error() {
    let narrow = r#"
        kernel void k(__local int *l) {
            ((__local char *)l)[get_local_id(0)] = 1;
        }
    "#;
    let e = compile(narrow).unwrap_err();
    assert!(e.contains("narrower than the element"), "{e}");
    let atomic = r#"
        kernel void k(__global long *a) {
            atomic_add((__global int *)a, 1);
        }
    "#;
    let e = compile(atomic).unwrap_err();
    assert!(e.contains("through a pointer cast"), "{e}");
    let copy = r#"
        kernel void k(__global int *g, __global int *out) {
            __local char l[16];
            event_t e = async_work_group_copy(l, (__global char *)g, 16, 0);
            wait_group_events(1, &e);
            out[get_local_id(0)] = l[get_local_id(0)];
        }
    "#;
    let e = compile(copy).unwrap_err();
    assert!(
        e.contains("`async_work_group_copy` through a pointer cast to another element type"),
        "{e}"
    );
}

#[test]
fn the_address_of_a_private_vector_reads_and_writes_the_vector() {
    let src = r#"
        void nothing(int4 *p) { }
        void bump(int4 *p) { p->x += 1; (*p).y = p[0].x * 10; }
        kernel void k(__global int *out) {
            int4 v = (int4)(1, 2, 3, 4);
            int4 *q = &v;
            nothing(&v);
            bump(q);
            bump(&v);
            int4 w = *q;
            out[0] = w.x;
            out[1] = w.y;
            out[2] = q->z;
            out[3] = v.w;
        }
    "#;
    let r = run(src, &[1], &[1], &[("out", 4, "zeros")], &[]);
    assert!(r.fault.is_none(), "{:?}", r.fault);
    assert_eq!(r.ints("out"), [3, 30, 3, 4]);
    let moved = r#"
        kernel void k(__global int *out) {
            int4 v = (int4)(1, 2, 3, 4);
            int4 *q = &v;
            q++;
        }
    "#;
    let e = compile(moved).unwrap_err();
    assert!(e.contains("a pointer to a private vector"), "{e}");
}

#[test]
fn a_local_array_written_byte_by_byte_races_per_byte() {
    // Four work-items write the four bytes of L[0]: disjoint bytes, no race; reading L
    // as `int` afterwards joins them (little-endian).
    let src = r#"
        kernel void k(__global int *out) {
            __local int L[4];
            int l = get_local_id(0);
            L[l] = 0;
            barrier(CLK_LOCAL_MEM_FENCE);
            ((__local char *)L)[l] = l + 1;
            barrier(CLK_LOCAL_MEM_FENCE);
            out[l] = L[l];
        }
    "#;
    let r = run(src, &[1], &[4], &[("out", 4, "zeros")], &[]);
    assert!(r.races.is_empty(), "{:?}", r.race_arrays());
    assert!(r.fault.is_none(), "{:?}", r.fault);
    assert_eq!(r.ints("out"), [0x0403_0201, 0, 0, 0]);
    // An `int` write and an overlapping `char` read race; a `char` write to another
    // element does not. The message names the byte both ways.
    let src = r#"
        kernel void k(__global int *out) {
            __local int L[2];
            int l = get_local_id(0);
            __local char *c = (__local char *)L;
            if (l == 0) L[0] = 7;
            if (l == 1) out[0] = c[2];
            if (l == 2) c[5] = 1;
        }
    "#;
    let r = run(src, &[1], &[3], &[("out", 1, "zeros")], &[]);
    assert_eq!(r.races.len(), 1, "{:?}", r.race_arrays());
    let race = &r.races[0];
    let name = sim::text::elem_name(&r.launch, race.array, race.instance, &race.index);
    assert_eq!(name, "L[2] (L[0] byte 2)");
    // Out of bounds per byte: a `char` write one byte past the array.
    let src = r#"
        kernel void k() {
            __local int L[2];
            ((__local char *)L)[get_local_id(0)] = 1;
        }
    "#;
    let r = run(src, &[1], &[9], &[], &[]);
    let fault = r.fault.expect("out of bounds");
    assert!(fault.contains("out-of-bounds access L[8]"), "{fault}");
}

#[test]
fn gpu_compare_matches_on_byte_views() {
    if gpu::device_or_skip("gpu compare of byte-level views").is_none() {
        return;
    }
    let o = ksim(&[
        "gpu",
        "compare",
        "tests/kernels/cl_bytes.cl",
        "--global",
        "4",
        "--local",
        "4",
        "--input",
        "a=iota:4",
        "--input",
        "s=zeros:8",
        "--input",
        "out=zeros:4",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(stdout(&o).starts_with("match ("), "{}", text(&o));
}

#[test]
fn a_byte_view_kernel_runs_from_the_command_line() {
    let o = ksim(&[
        "run",
        "tests/kernels/cl_bytes.cl",
        "--global",
        "4",
        "--local",
        "4",
        "--input",
        "a=iota:4",
        "--input",
        "s=zeros:8",
        "--input",
        "out=zeros:4",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    // L[0] holds the bytes 1, 18, 35, 52: 0x34231201; s gets 0x10002 * (l + 1) per int.
    assert!(stdout(&o).contains("out = 874713601 0 0 0"), "{}", text(&o));
    assert!(stdout(&o).contains("s   = 2 1 4 2 6 3 8 4"), "{}", text(&o));
}
