//! OpenCL C private arrays and program-scope `__constant` tables (lang/src/cl/private.rs):
//! each kernel runs on the reference semantics and the fast executor, which must agree on
//! memory, races and faults; results are what OpenCL C 1.2 computes. A private array is a
//! `local` array `NAME.private` with one row per thread, so it never races, and an index
//! past its end is a fault naming it.

mod common;
use common::cl::{compile, Ran};
use common::{ksim, stdout, text};

fn run(src: &str, groups: &[usize], local: &[usize], bufs: &[(&str, usize, &str)]) -> Ran {
    common::cl::run(src, groups, local, bufs, &[])
}

#[test]
fn private_arrays_hold_their_initialiser_per_thread() {
    let src = r#"
        kernel void k(__global int *out) {
            int g = get_global_id(0);
            int a[4] = {1, 2, 3, 4};
            float w[3];
            int b[] = {7, 8};
            int part[5] = {9};
            a[g % 4] += 10 * g;                  // each thread changes its own copy
            for (int i = 0; i < 3; i++) w[i] = (float)(i + g);
            int s = 0;
            for (int i = 0; i < 4; i++) s += a[i];
            out[g] = s + (int)w[2] + b[1] + part[0] + part[4];
        }
    "#;
    let r = run(src, &[2], &[2], &[("out", 4, "zeros")]);
    // s = 10 + 10 g; w[2] = 2 + g; b[1] = 8; part = {9, 0, 0, 0, 0}
    let want: Vec<i64> = (0..4).map(|g| 10 + 10 * g + 2 + g + 8 + 9).collect();
    assert_eq!(r.ints("out"), want);
    assert!(r.races.is_empty(), "{:?}", r.race_arrays());
    assert!(r.fault.is_none(), "{:?}", r.fault);
}

#[test]
fn private_arrays_of_two_dimensions_and_braced_rows() {
    let src = r#"
        kernel void k(__global int *out) {
            int g = get_global_id(0);
            int m[2][3] = {{1, 2, 3}, {4}};
            int n[2][2] = {5, 6, 7, 8};
            m[1][2] = g;
            out[g] = m[0][2] * 100 + m[1][0] * 10 + m[1][1] + m[1][2] + n[1][0] * 1000;
        }
    "#;
    let r = run(src, &[1], &[3], &[("out", 3, "zeros")]);
    assert_eq!(r.ints("out"), [7340, 7341, 7342]);
}

#[test]
fn a_private_array_passed_to_a_helper_and_through_a_pointer() {
    let src = r#"
        int at(int *x, int i) { return x[i]; }
        void put(int *x, int i, int v) { x[i] = v; }
        kernel void k(__global int *out) {
            int g = get_global_id(0);
            int x[4] = {0, 1, 2, 3};
            put(x, 3, g);
            int *p = &x[1];
            p[1] = 50;
            out[g] = at(x, 3) + x[2] + *p;
        }
    "#;
    let r = run(src, &[1], &[4], &[("out", 4, "zeros")]);
    assert_eq!(r.ints("out"), [51, 52, 53, 54]);
    assert!(r.races.is_empty());
}

#[test]
fn threads_never_race_on_a_private_array() {
    // Every thread writes index 0 of its own array: on a shared array this would race.
    let src = r#"
        kernel void k(__global int *out) {
            int t[2];
            t[0] = get_local_id(0);
            barrier(CLK_LOCAL_MEM_FENCE);
            out[get_global_id(0)] = t[0];
        }
    "#;
    let r = run(src, &[2], &[4], &[("out", 8, "zeros")]);
    assert!(r.races.is_empty(), "{:?}", r.race_arrays());
    assert_eq!(r.ints("out"), [0, 1, 2, 3, 0, 1, 2, 3]);
}

#[test]
fn an_index_past_a_private_array_is_a_fault_naming_it() {
    let src = r#"
        kernel void k(__global int *out) {
            int L[4];
            int x = get_global_id(0);
            L[x] = x;
            out[x] = L[x];
        }
    "#;
    let r = run(src, &[1], &[6], &[("out", 6, "zeros")]);
    let f = r.fault.expect("an out-of-bounds fault");
    assert!(f.contains("L.private[") && f.contains("][4]"), "{f}");
}

#[test]
fn constant_tables_and_variables_are_read_in_kernels_and_helpers() {
    let src = r#"
        __constant int T[4] = {5, 0, 7, 8};
        __constant float F[2] = {0.5f, 1.5f};
        __constant int Z[3] = { };
        __constant uint K = 3;
        int pick(int i) { return T[i] + (int)K; }
        kernel void k(__global int *out) {
            int g = get_global_id(0);
            out[g] = pick(g) + (int)(F[1] * 2.0f) + Z[g % 3];
        }
    "#;
    let r = run(src, &[1], &[4], &[("out", 4, "zeros")]);
    assert_eq!(r.ints("out"), [11, 6, 13, 14]);
    assert!(r.races.is_empty());
}

#[test]
fn writing_a_constant_is_an_error_at_load() {
    for (src, what) in [
        (
            "__constant int T[2] = {1, 2};\nkernel void k() { T[0] = 3; }",
            "read-only variable is not assignable",
        ),
        (
            "__constant int T[2] = {1, 2};\nvoid f(int *p) { p[1] = 0; }\nkernel void k() { f(T); }",
            "passing '__constant int *' to parameter of type '__private int *' changes address space of pointer",
        ),
        (
            "__constant int N = 2;\nkernel void k() { N++; }",
            "read-only variable is not assignable",
        ),
    ] {
        let e = compile(src).expect_err("refused");
        assert!(e.contains(what), "{e}");
    }
}

#[test]
fn bad_private_arrays_are_clear_errors() {
    for (src, what) in [
        (
            "kernel void k(int n) { int a[n]; }",
            "variable length arrays are not supported in OpenCL",
        ),
        (
            "kernel void k() { int a[2] = {1, 2, 3}; }",
            "excess elements in array initializer",
        ),
        (
            "kernel void k() { int a[]; }",
            "definition of variable with array type needs an explicit size or an initializer",
        ),
        (
            "kernel void k() { int4 a[2] = {(int4)(1), (int4)(2)}; }",
            "a vector value in the initialiser of an array of vectors",
        ),
        (
            "int x = 1;\nkernel void k() { }",
            "program scope variable must reside in constant address space",
        ),
    ] {
        let e = compile(src).expect_err("refused");
        assert!(e.contains(what), "{src}: {e}");
    }
}

const MIX: &str = "tests/kernels/cl_private_table.cl";
const MIX_LAUNCH: [&str; 8] = [
    "--global",
    "8",
    "--local",
    "4",
    "--input",
    "in=iota:8",
    "--input",
    "out=zeros:8",
];

/// out[g] = sum over i of (a[i] * (WEIGHTS[i] << 1) + g) = 2 * 300 + 4 g.
#[test]
fn cli_runs_private_arrays_and_constant_tables_and_marks_them_private() {
    let mut args = vec!["run", MIX];
    args.extend(MIX_LAUNCH);
    let o = ksim(&args);
    assert!(o.status.success(), "{}", text(&o));
    let out = stdout(&o);
    let want: Vec<String> = (0..8).map(|g| (600 + 4 * g).to_string()).collect();
    assert!(
        out.lines()
            .any(|l| l.starts_with("out ") && l.ends_with(&format!("= {}", want.join(" ")))),
        "{out}"
    );
    // The private arrays appear only under their marked names, a row per thread.
    assert!(
        out.contains("a.private (group 0) =\n  [0] 10 20 30 40"),
        "{out}"
    );
}

#[test]
fn gpu_compare_matches_on_private_arrays_and_constant_tables() {
    if gpu::device_or_skip("gpu compare of a .cl kernel with private arrays").is_none() {
        return;
    }
    let mut args = vec!["gpu", "compare", MIX];
    args.extend(MIX_LAUNCH);
    let o = ksim(&args);
    assert!(o.status.success(), "{}", text(&o));
    assert!(stdout(&o).contains("match"), "{}", text(&o));
}
