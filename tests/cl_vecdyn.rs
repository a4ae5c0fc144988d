//! Vector accesses through a pointer whose target is chosen at run time (lang/src/cl/
//! vecdyn.rs; docs/language.md, "Pointer values"): whole-vector reads and writes, compound
//! assignments, `++`/`--`, components and swizzles of `int4`/`float4`/`int3` elements
//! through a `float4 *r` assigned two buffers, a `?:` or null. Each kernel runs on the
//! reference semantics and the fast executor, which must agree on memory, races and faults
//! (`common::cl::run`).

mod common;
use common::cl::{compile, run, Ran};
use common::{ksim, stdout, text};

/// The source text of the later access of race `i` of `r`, in `src`.
fn race_site<'s>(src: &'s str, r: &Ran, i: usize) -> &'s str {
    let span = &r.races[i].second.span;
    &src[span.start..span.end]
}

#[test]
fn whole_vectors_are_written_and_read_through_the_chosen_target() {
    // Even work-items reach `a`, odd ones `b`; each copies its element to `out` through
    // the same pointer.
    let src = r#"
        kernel void k(__global int4 *a, __global int4 *b, __global int4 *out) {
            int i = get_global_id(0);
            __global int4 *r;
            if (i % 2 == 0) r = a; else r = b;
            r[i] = (int4)(i, 10 + i, 20 + i, 30 + i);
            out[i] = r[i] * 2;
        }
    "#;
    let bufs = [("a", 16, "zeros"), ("b", 16, "zeros"), ("out", 16, "zeros")];
    let r = run(src, &[1], &[4], &bufs, &[]);
    #[rustfmt::skip]
    assert_eq!(r.ints("a"), [0, 10, 20, 30, 0, 0, 0, 0, 2, 12, 22, 32, 0, 0, 0, 0]);
    #[rustfmt::skip]
    assert_eq!(r.ints("b"), [0, 0, 0, 0, 1, 11, 21, 31, 0, 0, 0, 0, 3, 13, 23, 33]);
    #[rustfmt::skip]
    assert_eq!(
        r.ints("out"),
        [0, 20, 40, 60, 2, 22, 42, 62, 4, 24, 44, 64, 6, 26, 46, 66]
    );
    assert!(r.races.is_empty(), "{:?}", r.race_arrays());
    assert!(r.fault.is_none(), "{:?}", r.fault);
}

#[test]
fn components_and_swizzles_are_read_and_written_through_the_chosen_target() {
    let src = r#"
        kernel void k(__global int4 *a, __global int4 *b, __global int *out, int c) {
            __global int4 *r = c ? a : b;
            out[0] = r[1].y;
            int2 v = r[1].wz;
            out[1] = v.x;
            out[2] = v.y;
            out[3] = (*r).x;
            r[0].zw = (int2)(7, 8);
            r[1].x = 9;
            (*r).y = 6;
        }
    "#;
    let bufs = [("a", 8, "iota"), ("b", 8, "ones"), ("out", 4, "zeros")];
    let r = run(src, &[1], &[1], &bufs, &[("c", "1")]);
    assert_eq!(r.ints("out"), [5, 7, 6, 0]);
    assert_eq!(r.ints("a"), [0, 6, 7, 8, 9, 5, 6, 7]);
    assert_eq!(r.ints("b"), [1; 8], "the other target is untouched");
    let r = run(src, &[1], &[1], &bufs, &[("c", "0")]);
    assert_eq!(r.ints("out"), [1, 1, 1, 1]);
    assert_eq!(r.ints("b"), [1, 6, 7, 8, 9, 1, 1, 1]);
    assert_eq!(r.ints("a"), (0..8).collect::<Vec<i64>>());
}

#[test]
fn compound_assignments_and_increments_update_only_the_chosen_target() {
    let src = r#"
        kernel void k(__global int4 *a, __global int4 *b, __global int4 *out, int c) {
            __global int4 *r = a;
            if (c) r = b;
            r[0] += (int4)(1, 2, 3, 4);
            r[0].x *= 10;
            r[0].y++;
            --r[0].z;
            r[1]++;
            r[1].yw -= (int2)(5, 6);
            out[0] = r[1]--;
            out[1] = ++r[1];
            out[2] = (r[0] = (int4)(40, 41, 42, 43)) + 1;
        }
    "#;
    let bufs = [("a", 8, "ones"), ("b", 8, "zeros"), ("out", 12, "zeros")];
    let r = run(src, &[1], &[1], &bufs, &[("c", "1")]);
    // b[0]: (1, 2, 3, 4) -> x 10, y 3, z 2 -> then overwritten by (40, 41, 42, 43).
    // b[1]: (1, 1, 1, 1) -> (1, -4, 1, -5); out[0] its old value, then -- and ++.
    assert_eq!(r.ints("b"), [40, 41, 42, 43, 1, -4, 1, -5]);
    #[rustfmt::skip]
    assert_eq!(r.ints("out"), [1, -4, 1, -5, 1, -4, 1, -5, 41, 42, 43, 44]);
    assert_eq!(r.ints("a"), [1; 8], "the other target is untouched");
    let r = run(src, &[1], &[1], &bufs, &[("c", "0")]);
    assert_eq!(r.ints("a"), [40, 41, 42, 43, 2, -3, 2, -4]);
    assert_eq!(r.ints("b"), [0; 8]);
}

#[test]
fn three_component_vectors_keep_their_padding_slot() {
    // An `int3` takes 4 slots; a write through the pointer leaves the fourth alone.
    let src = r#"
        kernel void k(__global int3 *a, __global int3 *b, int c) {
            __global int3 *r = c ? a : b;
            r[1] = r[0].zyx + (int3)(100);
        }
    "#;
    let bufs = [("a", 8, "iota"), ("b", 8, "zeros")];
    let r = run(src, &[1], &[1], &bufs, &[("c", "1")]);
    assert_eq!(r.ints("a"), [0, 1, 2, 3, 102, 101, 100, 7]);
    assert_eq!(r.ints("b"), [0; 8]);
}

#[test]
fn a_float4_kernel_like_gpuverifys_async_tests_runs() {
    // async_work_group_copy/pass/test6, small: the copy and the write both go through the
    // pointer chosen by the group.
    let src = r#"
        #define N 2
        kernel void foo(global float4 *p, global float4 *q) {
            local float4 mine[N];
            global float4 *r;
            if (get_group_id(0) == 1) r = p; else r = q;
            event_t handle = async_work_group_copy(mine, r + N * get_group_id(0), N, 0);
            wait_group_events(1, &handle);
            barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
            r[get_global_id(0)] = 2 * mine[get_local_id(0)];
        }
    "#;
    let bufs = [("p", 16, "iota"), ("q", 16, "iota")];
    let r = run(src, &[2], &[2], &bufs, &[]);
    assert!(r.races.is_empty(), "{:?}", r.race_arrays());
    assert!(r.fault.is_none(), "{:?}", r.fault);
    // Group 0 doubles q[0..2] in place; group 1 doubles p[2..4].
    let doubled = |v: &[String], from: usize| -> Vec<f64> {
        v[from..from + 8]
            .iter()
            .map(|s| s.parse().unwrap())
            .collect()
    };
    let want = |from: usize| -> Vec<f64> { (from..from + 8).map(|x| 2.0 * x as f64).collect() };
    assert_eq!(doubled(&r.array("q"), 0), want(0));
    assert_eq!(doubled(&r.array("p"), 8), want(8));
    assert_eq!(r.array("p")[0], "0", "group 1 leaves p[0] alone");
}

#[test]
fn a_null_or_uninitialised_pointer_faults_naming_it() {
    let src = r#"
        kernel void k(__global float4 *a, __global float *out, int c) {
            __global float4 *r = NULL;
            if (c) r = a;
            r[get_global_id(0)].y = 1.0f;
        }
    "#;
    let bufs = [("a", 8, "zeros"), ("out", 1, "zeros")];
    let r = run(src, &[1], &[2], &bufs, &[("c", "0")]);
    let f = r.fault.clone().expect("a null dereference");
    assert!(f.contains("null pointer dereference"), "{f}");
    assert!(f.contains("r = 0"), "{f}");
    assert_eq!(r.array("a"), ["0"; 8]);
    let r = run(src, &[1], &[2], &bufs, &[("c", "1")]);
    assert!(r.fault.is_none(), "{:?}", r.fault);
    assert_eq!(r.array("a"), ["0", "1", "0", "0", "0", "1", "0", "0"]);
    // A read of a whole vector through a pointer that is always null, and one through a
    // pointer not given a value yet.
    for (body, says) in [
        (
            "__global float4 *r = NULL; float4 v = r[0]; out[0] = v.x;",
            "null pointer dereference",
        ),
        (
            "__global float4 *r; if (c) out[0] = r[0].w; r = a;",
            "used before it is given a value",
        ),
    ] {
        let src =
            format!("kernel void k(__global float4 *a, __global float *out, int c) {{ {body} }}");
        let r = run(&src, &[1], &[1], &bufs, &[("c", "1")]);
        let f = r.fault.unwrap_or_else(|| panic!("{body}: no fault"));
        assert!(f.contains(says), "{body}: {f}");
        assert!(f.contains("r = "), "{body}: {f}");
    }
}

#[test]
fn an_access_outside_the_chosen_array_faults() {
    // `a` holds 2 int4s; element 2 of it is out of bounds, element 2 of `b` is not.
    let src = r#"
        kernel void k(__global int4 *a, __global int4 *b, int c) {
            __global int4 *r = c ? a : b;
            r[2].z = 5;
        }
    "#;
    let bufs = [("a", 8, "zeros"), ("b", 12, "zeros")];
    let r = run(src, &[1], &[1], &bufs, &[("c", "1")]);
    let f = r.fault.expect("out of bounds");
    assert!(f.contains("out-of-bounds access a[10]"), "{f}");
    let r = run(src, &[1], &[1], &bufs, &[("c", "0")]);
    assert!(r.fault.is_none(), "{:?}", r.fault);
    assert_eq!(r.ints("b")[10], 5);
}

#[test]
fn races_are_per_component_and_located_at_the_access() {
    // Work-item l writes component l of element 0 of the chosen array: no race. Two
    // work-items writing component y of one element race, on that slot.
    let apart = r#"
        kernel void k(__global int4 *a, __global int4 *b, int c) {
            __global int4 *r = c ? a : b;
            size_t l = get_local_id(0);
            if (l == 0) r[0].x = 10;
            if (l == 1) r[0].y = 11;
            if (l == 2) r[0].zw = (int2)(12, 13);
        }
    "#;
    let bufs = [("a", 8, "zeros"), ("b", 8, "zeros")];
    let r = run(apart, &[1], &[3], &bufs, &[("c", "1")]);
    assert!(r.races.is_empty(), "{:?}", r.race_arrays());
    assert_eq!(r.ints("a"), [10, 11, 12, 13, 0, 0, 0, 0]);
    let racy = r#"
        kernel void k(__global int4 *a, __global int4 *b, int c) {
            __global int4 *r = c ? a : b;
            r[1].y = get_local_id(0);
        }
    "#;
    let r = run(racy, &[1], &[2], &bufs, &[("c", "0")]);
    assert_eq!(r.race_arrays(), ["b"], "only the chosen array races");
    assert_eq!(r.races[0].index, [5], "component y of element 1");
    assert_eq!(race_site(racy, &r, 0), "r[1].y = get_local_id(0)");
    // A whole-vector write racing with a read of one component of the same element.
    let racy = r#"
        kernel void k(__global float4 *a, __global float4 *b, __global float *out, int c) {
            __global float4 *r = c ? a : b;
            if (get_local_id(0) == 0) r[0] = (float4)(1.0f);
            else out[0] = r[0].w;
        }
    "#;
    let bufs = [("a", 8, "zeros"), ("b", 8, "zeros"), ("out", 1, "zeros")];
    let r = run(racy, &[1], &[2], &bufs, &[("c", "1")]);
    assert_eq!(r.race_arrays(), ["a"]);
    assert_eq!(r.races[0].index, [3], "component w of element 0");
}

#[test]
fn using_the_value_of_a_component_assignment_through_such_a_pointer_is_a_clear_error() {
    let src = r#"
        kernel void k(__global int4 *a, __global int4 *b, __global int *out, int c) {
            __global int4 *r = c ? a : b;
            out[0] = r[0].x++;
        }
    "#;
    let e = compile(src).unwrap_err();
    assert!(e.contains("not supported yet"), "{e}");
    assert!(e.contains("chosen at run time"), "{e}");
}

#[test]
fn writing_a_constant_vector_array_through_a_pointer_is_an_error() {
    let src = r#"
        __constant int4 C[2] = {1, 1, 1, 1, 2, 2, 2, 2};
        kernel void k(__global int4 *a, int c) {
            __constant int4 *r = C;
            r[0].y = 3;
        }
    "#;
    let e = compile(src).unwrap_err();
    assert!(e.contains("read-only variable is not assignable"), "{e}");
}

#[test]
fn gpu_compare_matches_on_a_vector_access_through_a_pointer_value() {
    if gpu::device_or_skip("gpu compare of a .cl kernel with vectors through a pointer value")
        .is_none()
    {
        return;
    }
    let dir = std::env::temp_dir().join(format!("ksim-cl-vecdyn-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let path = dir.join("k.cl");
    std::fs::write(
        &path,
        "kernel void k(__global int4 *a, __global int4 *b) {\n\
         int i = get_global_id(0);\n\
         __global int4 *r;\n\
         if (i % 2 == 0) r = a; else r = b;\n\
         r[i] = r[i].wzyx + (int4)(i);\n\
         r[i].y += 100;\n\
         }\n",
    )
    .expect("the kernel is written");
    let path = path.to_str().expect("a UTF-8 path");
    let o = ksim(&[
        "gpu",
        "compare",
        path,
        "--global",
        "4",
        "--local",
        "4",
        "--input",
        "a=iota:16",
        "--input",
        "b=ones:16",
    ]);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(o.status.success(), "{}", text(&o));
    assert!(stdout(&o).contains("match"), "{}", text(&o));
}
