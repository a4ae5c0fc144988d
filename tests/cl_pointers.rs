//! OpenCL C pointer values (docs/language.md, "Pointer values"): pointers whose target is
//! chosen at run time (assigned two arrays, `?:` between arrays, null, returned by a
//! helper). Each kernel runs on the reference semantics and the fast executor, which must
//! agree on memory, races and faults (`common::cl::run`).

mod common;
use common::cl::{compile, run};
use common::{ksim, stdout, text};

#[test]
fn a_target_chosen_by_a_thread_dependent_condition() {
    // Even work-items write through `a`, odd ones through `b`: each array gets only its
    // own writes.
    let src = r#"
        kernel void k(__global int *a, __global int *b) {
            int i = get_global_id(0);
            __global int *p;
            if (i % 2 == 0) p = a; else p = b;
            p[i] = 10 + i;
        }
    "#;
    let r = run(
        src,
        &[1],
        &[4],
        &[("a", 4, "zeros"), ("b", 4, "zeros")],
        &[],
    );
    assert_eq!(r.ints("a"), [10, 0, 12, 0]);
    assert_eq!(r.ints("b"), [0, 11, 0, 13]);
    assert!(r.races.is_empty(), "{:?}", r.race_arrays());
    assert!(r.fault.is_none(), "{:?}", r.fault);
}

#[test]
fn a_choice_between_arrays_reads_and_moves_only_the_chosen_one() {
    let src = r#"
        kernel void k(__global int *a, __global int *b, __global int *out, int x) {
            int i = get_global_id(0);
            __global int *p = x ? a : b;
            p += 1;
            out[i] = p[i] + *(i < 2 ? a : b);
        }
    "#;
    let bufs = [("a", 8, "iota"), ("b", 8, "ones"), ("out", 4, "zeros")];
    let r = run(src, &[1], &[4], &bufs, &[("x", "1")]);
    // p = a + 1: a[i + 1]; plus a[0] for i < 2, b[0] otherwise.
    assert_eq!(r.ints("out"), [1, 2, 4, 5]);
    let r = run(src, &[1], &[4], &bufs, &[("x", "0")]);
    // p = b + 1: b[i + 1] = 1; plus a[0] = 0 or b[0] = 1.
    assert_eq!(r.ints("out"), [1, 1, 2, 2]);
    assert!(r.races.is_empty(), "{:?}", r.race_arrays());
}

#[test]
fn a_race_is_seen_through_the_chosen_target_only() {
    // Every work-item writes element 0 of the chosen array: a race on that array, and
    // none on the other, which no work-item reaches.
    let src = r#"
        kernel void k(__global int *a, __global int *b, int x) {
            __global int *p = a;
            if (x) p = b;
            p[0] = get_global_id(0);
        }
    "#;
    let bufs = [("a", 4, "zeros"), ("b", 4, "zeros")];
    let r = run(src, &[1], &[4], &bufs, &[("x", "0")]);
    assert_eq!(r.race_arrays(), ["a"]);
    let r = run(src, &[1], &[4], &bufs, &[("x", "1")]);
    assert_eq!(r.race_arrays(), ["b"]);
    // Through a `__local` and a `__global` target chosen per work-item, each reached by
    // one work-item per element: no race.
    let src = r#"
        kernel void k(__global int *a, __global int *out) {
            __local int t[4];
            int l = get_local_id(0);
            __global int *g = a;
            __local int *p = t;
            if (l < 2) { p[l] = l; } else { g[l] = l; }
            barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
            out[l] = l < 2 ? t[l] : a[l];
        }
    "#;
    let r = run(
        src,
        &[1],
        &[4],
        &[("a", 4, "zeros"), ("out", 4, "zeros")],
        &[],
    );
    assert!(r.races.is_empty(), "{:?}", r.race_arrays());
    assert_eq!(r.ints("out"), [0, 1, 2, 3]);
}

#[test]
fn a_null_dereference_is_a_fault_naming_the_pointer() {
    let src = r#"
        kernel void k(__global int *a, int i) {
            __global int *q = 0;
            if (i) q = a;
            q[get_global_id(0)] = 1;
        }
    "#;
    let r = run(src, &[1], &[2], &[("a", 2, "zeros")], &[("i", "0")]);
    let f = r.fault.expect("a null dereference");
    assert!(f.contains("null pointer dereference"), "{f}");
    assert!(f.contains("q = 0"), "{f}");
    assert!(f.contains("thread 0 of group 0"), "{f}");
    let r = run(src, &[1], &[2], &[("a", 2, "zeros")], &[("i", "1")]);
    assert!(r.fault.is_none(), "{:?}", r.fault);
    assert_eq!(r.ints("a"), [1, 1]);
    // A read of null, a store through NULL, an atomic on a null pointer.
    for body in [
        "__global int *p = NULL; a[0] = p[1];",
        "__global int *p = a; p = NULL; *p = 2;",
        "atomic_inc((__global int *)0);",
    ] {
        let src = format!("kernel void k(__global int *a) {{ {body} }}");
        let r = run(&src, &[1], &[1], &[("a", 2, "zeros")], &[]);
        let f = r
            .fault
            .clone()
            .unwrap_or_else(|| panic!("{body}: no fault"));
        assert!(f.contains("null pointer dereference"), "{body}: {f}");
        assert_eq!(r.ints("a"), [0, 0], "{body}");
    }
}

#[test]
fn an_uninitialised_pointer_faults_when_used() {
    // `p` is used (by work-item 1) before the assignment the lowering sees: a dynamic
    // pointer, -1 until assigned.
    let src = r#"
        kernel void k(__global int *a) {
            __global int *p;
            if (get_global_id(0) == 1) p[0] = 1;
            p = a;
            p[1] = 2;
        }
    "#;
    let r = run(src, &[1], &[2], &[("a", 2, "zeros")], &[]);
    let f = r.fault.expect("an uninitialised pointer");
    assert!(f.contains("used before it is given a value"), "{f}");
    assert!(f.contains("p = -1"), "{f}");
    assert!(f.contains("thread 1 of group 0"), "{f}");
    // Comparing it reads its value: a fault too.
    let src = "kernel void k(__global int *a) { int *x; a[0] = x == 0; }";
    let r = run(src, &[1], &[1], &[("a", 1, "zeros")], &[]);
    let f = r.fault.expect("an uninitialised pointer compared");
    assert!(f.contains("used before it is given a value"), "{f}");
}

#[test]
fn pointer_equality_and_order() {
    let src = r#"
        kernel void k(__global int *a, __global int *b, __global int *out, int i) {
            __global int *p = a;
            if (i == 0) p = b;
            __global int *n = NULL;
            if (i == 2) n = a + 1;
            out[0] = p == a;
            out[1] = p != b;
            out[2] = n == 0;
            out[3] = n > (__global int *)0;
            out[4] = a + 2 > a + 1;
            out[5] = p == b + 0;
        }
    "#;
    let bufs = [("a", 2, "zeros"), ("b", 2, "zeros"), ("out", 6, "zeros")];
    let r = run(src, &[1], &[1], &bufs, &[("i", "0")]);
    assert_eq!(r.ints("out"), [0, 0, 1, 0, 1, 1]);
    let r = run(src, &[1], &[1], &bufs, &[("i", "2")]);
    assert_eq!(r.ints("out"), [1, 1, 0, 1, 1, 0]);
}

#[test]
fn helpers_return_and_take_pointer_values() {
    let src = r#"
        __global int *pick(__global int *x, __global int *y, int c) {
            if (c) return x;
            return y + 1;
        }
        __global int *same(__global int *x) { return x; }
        void put(__global int *d, int v) { d[0] = v; }
        kernel void k(__global int *a, __global int *b) {
            int i = get_global_id(0);
            __global int *p = pick(a, b, i == 0);
            put(p + 2 * i, 7 + i);
            if (i == 0) same(b)[0] = 5;
        }
    "#;
    let r = run(
        src,
        &[1],
        &[2],
        &[("a", 4, "zeros"), ("b", 4, "zeros")],
        &[],
    );
    assert_eq!(r.ints("a"), [7, 0, 0, 0]);
    // Work-item 1: b + 1 + 2.
    assert_eq!(r.ints("b"), [5, 0, 0, 8]);
    assert!(r.races.is_empty(), "{:?}", r.race_arrays());
}

#[test]
fn a_helper_returning_null_or_its_argument() {
    let src = r#"
        float *bar(float *p, int i) { if (i) return p; else return NULL; }
        kernel void k(__global float *out, int i) {
            float x = 1.0f;
            float *y = bar(&x, i);
            y[0] = y[0] + 1.0f;
            out[get_global_id(0)] = x;
        }
    "#;
    let r = run(src, &[1], &[1], &[("out", 1, "zeros")], &[("i", "1")]);
    assert!(r.fault.is_none(), "{:?}", r.fault);
    assert_eq!(r.array("out"), ["2"]);
    let r = run(src, &[1], &[1], &[("out", 1, "zeros")], &[("i", "0")]);
    assert!(r.fault.expect("null").contains("null pointer dereference"));
}

#[test]
fn a_statically_known_target_keeps_the_static_form() {
    // `p` is only ever `a`: no tag variable, no checks (the lowered kernel has only `p`).
    let c = compile("kernel void k(__global int *a) { __global int *p = a; p += 1; p[0] = 1; }")
        .expect("compiles");
    let names: Vec<_> = c.kernel.vars.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(names, ["p"]);
    let c = compile(
        "kernel void k(__global int *a, __global int *b, int x) { __global int *p = x ? a : b; p[0] = 1; }",
    )
    .expect("compiles");
    let names: Vec<_> = c.kernel.vars.iter().map(|v| v.name.as_str()).collect();
    assert!(
        names.contains(&"p") && names.contains(&"p_offset"),
        "{names:?}"
    );
}

#[test]
fn pointer_values_ksim_cannot_model_are_refused_clearly() {
    for (src, msg) in [
        (
            // Both private: OpenCL C 1.2 has no pointer that may reach two address spaces.
            "kernel void k(__global int *a, __global int *b, int x) { int y = 0; int z = 0; int *p = x ? &z : &y; p++; }",
            "pointer arithmetic on the address of a private variable",
        ),
        (
            "kernel void k(__global int *a, __global float *b, int x) { __global int *p = a; if (x) p = b; }",
            "a pointer cast that changes the element type",
        ),
    ] {
        let e = compile(src).unwrap_err();
        assert!(e.contains(msg), "{src}: {e}");
    }
}

#[test]
fn gpuverify_null_and_choice_kernels_find_their_error_with_the_scalar_zero() {
    // null_pointers/null_pointer_assignment_equal and atomics/pointers of GPUVerify's
    // suite: the error needs the scalar 0 (the conformance runner binds it to the
    // work-group size, an EXCEPTIONS entry says so).
    let equal = r#"
        kernel void foo(int i, __global int *A) {
            __global int *a;
            if (i == 0) a = A; else a = NULL;
            if (a == 0) A[get_global_id(0)] = get_global_id(0);
            else A[0] = get_global_id(0);
        }
    "#;
    let r = run(equal, &[1], &[4], &[("A", 4, "zeros")], &[("i", "0")]);
    assert_eq!(r.race_arrays(), ["A"]);
    let r = run(equal, &[1], &[4], &[("A", 4, "zeros")], &[("i", "4")]);
    assert!(r.races.is_empty());
    let atomics = r#"
        kernel void pointers(local int *A, local int *B, int c) {
            local int *p;
            int tid = get_local_id(0);
            if (c) p = B + 3; else p = A + 12;
            A[tid] = atomic_inc(p);
        }
    "#;
    let bufs = [("A", 16, "zeros"), ("B", 16, "zeros")];
    let r = run(atomics, &[1], &[16], &bufs, &[("c", "0")]);
    assert_eq!(r.race_arrays()[..1], ["A"]);
    let r = run(atomics, &[1], &[16], &bufs, &[("c", "16")]);
    assert!(r.races.is_empty());
}

#[test]
fn gpu_compare_matches_on_a_dynamic_pointer_kernel() {
    if gpu::device_or_skip("gpu compare of a .cl kernel with a pointer value").is_none() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("ksim-cl-pointers-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let path = dir.join("k.cl");
    std::fs::write(
        &path,
        "kernel void k(__global int *a, __global int *b) {\n\
         int i = get_global_id(0);\n\
         __global int *p;\n\
         if (i % 2 == 0) p = a; else p = b;\n\
         p[i] = p[i] + 10 + i;\n\
         }\n",
    )
    .expect("the kernel is written");
    let path = path.to_str().expect("a UTF-8 path");
    let o = ksim(&[
        "gpu", "compare", path, "--global", "4", "--local", "4", "--input", "a=iota:4", "--input",
        "b=ones:4",
    ]);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(o.status.success(), "{}", text(&o));
    assert!(stdout(&o).contains("match"), "{}", text(&o));
}
