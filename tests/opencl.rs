//! OpenCL C kernels through the whole pipeline: each lowering (statement forms, inlining,
//! return/break/continue, switch, built-ins against the OpenCL specification's
//! definitions), run on both engines (the reference semantics and the fast executor must
//! agree on memory, races, faults and divergence), and `.cl` kernels equivalent to
//! examples/*.ksim giving the same results as the `.ksim` version.

mod common;

use common::cl::{compile, Ran};
use interp::launch::{Launch, LaunchOptions};
use interp::Value;
use std::path::Path;
use std::sync::Arc;

/// Runs `src` with `groups` x `local` work-items on both engines; buffers as
/// `(name, size, spec)`, scalars as `(name, value)`.
fn run(
    src: &str,
    groups: usize,
    local: usize,
    bufs: &[(&str, usize, &str)],
    args: &[(&str, &str)],
) -> Ran {
    common::cl::run(src, &[groups], &[local], bufs, args)
}

/// Evaluates `expr` (over `int x, y, z` / `uint ux, uy`, given) in one work-item, storing
/// it in `out[0]` of type `ty`.
fn eval(ty: &str, expr: &str) -> String {
    let src = format!(
        "kernel void k(__global {ty} *out) {{ int x = -7, y = 3, z = 2147483647; \
         unsigned int ux = 4000000000u, uy = 5u; out[0] = {expr}; }}"
    );
    run(&src, 1, 1, &[("out", 1, "zeros")], &[]).array("out")[0].clone()
}

#[test]
fn integer_builtins_match_the_opencl_definitions() {
    // OpenCL C 1.2 §6.12.3; the expected values follow from the definitions.
    for (ty, e, want) in [
        ("int", "min(x, y)", "-7"),
        ("int", "max(x, y)", "3"),
        ("uint", "min(ux, uy)", "5"),
        ("int", "clamp(x, -2, 2)", "-2"),
        ("int", "clamp(y, -2, 2)", "2"),
        ("uint", "abs(x)", "7"),
        ("uint", "abs(-2147483647 - 1)", "2147483648"),
        ("uint", "abs_diff(x, y)", "10"),
        ("uint", "abs_diff(z, -z)", "4294967294"),
        ("uint", "abs_diff(uy, ux)", "3999999995"),
        ("int", "add_sat(z, y)", "2147483647"),
        ("int", "add_sat(-z, x)", "-2147483648"),
        ("int", "add_sat(x, y)", "-4"),
        ("int", "sub_sat(-z, y)", "-2147483648"),
        ("int", "sub_sat(z, x)", "2147483647"),
        ("uint", "add_sat(ux, ux)", "4294967295"),
        ("uint", "sub_sat(uy, ux)", "0"),
        ("uint", "sub_sat(ux, uy)", "3999999995"),
        ("int", "hadd(z, z)", "2147483647"),
        ("int", "hadd(x, y)", "-2"),
        ("int", "rhadd(x, y)", "-2"),
        ("int", "rhadd(4, 7)", "6"),
        ("uint", "hadd(ux, ux)", "4000000000"),
        ("int", "select(x, y, 0)", "-7"),
        ("int", "select(x, y, 1)", "3"),
        ("int", "mad24(x, y, 1)", "-20"),
        ("int", "mul24(x, y)", "-21"),
        ("float", "mad(1.5f, 2.0f, 0.25f)", "3.25"),
        ("int", "isnan(0.0f / 0.0f)", "1"),
        ("int", "isnan(1.0f)", "0"),
        ("uint", "get_global_size(0)", "1"),
        ("uint", "get_work_dim()", "1"),
        ("int", "INT_MAX", "2147483647"),
        ("uint", "UINT_MAX", "4294967295"),
        ("uint", "sizeof(int) + sizeof(char) + sizeof(float4)", "21"),
    ] {
        assert_eq!(eval(ty, e), want, "{e}");
    }
}

#[test]
fn work_item_functions_are_size_t() {
    let src = "kernel void k(__global uint *g, __global uint *l) { \
               g[get_global_id(0)] = get_group_id(0) * 100 + get_local_size(0) * 10 + get_num_groups(0); \
               l[get_global_id(0)] = get_local_id(0) - 1; }";
    let r = run(src, 2, 2, &[("g", 4, "zeros"), ("l", 4, "zeros")], &[]);
    assert_eq!(r.ints("g"), [22, 22, 122, 122]);
    // size_t arithmetic wraps (ksim's size_t is 32 bits).
    assert_eq!(r.ints("l"), [4294967295, 0, 4294967295, 0]);
    let src = "kernel void k(__global int *a) { int x = 0; a[0] = get_global_id(x); }";
    let e = compile(src).unwrap_err();
    assert!(
        e.starts_with("not supported yet") && e.contains("not a constant"),
        "{e}"
    );
}

#[test]
fn statement_forms_compute_what_c_computes() {
    let src = r#"
        kernel void k(__global int *out) {
            int i, s = 0, t = 0;
            for (i = 0; i < 10; i++) { if (i == 3) continue; if (i == 7) break; s += i; }
            out[0] = s;                       // 0+1+2+4+5+6 = 18
            i = 0;
            do { t += 2; i++; } while (i < 4);
            out[1] = t;                       // 8
            int n = 0;
            while (1) { n++; if (n >= 5) break; }
            out[2] = n;                       // 5
            int a = 3, b = a++ + ++a;         // sequenced here: 3 + 5
            out[3] = b * 100 + a;             // 805
            int c = (a = 1, a + 1);
            out[4] = c;                       // 2
            int m = 0;
            for (int p = 0; p < 3; p++) for (int q = 0; q < 3; q++) { if (q == p) continue; m += 10 * p + q; }
            out[5] = m;                       // (1+2)+(10+12)+(20+21) = 66
            int z = 0;
            out[6] = (z != 0 && (10 / z) > 1) ? 1 : 2;   // short-circuit: no division by zero
            int w = 5;
            out[7] = w-- > 4 ? w : -w;        // 4
        }
    "#;
    let r = run(src, 1, 1, &[("out", 8, "zeros")], &[]);
    assert_eq!(r.ints("out"), [18, 8, 5, 805, 2, 66, 2, 4]);
}

#[test]
fn switch_falls_through_and_breaks() {
    let src = r#"
        kernel void k(__global int *out) {
            int id = get_global_id(0);
            int r = 0;
            switch (id) {
                case 0: r += 1;
                case 1: r += 10; break;
                case 2: { r = 100; break; }
                default: r = -1;
                case 4: r += 1000;
            }
            out[id] = r;
        }
    "#;
    let r = run(src, 1, 6, &[("out", 6, "zeros")], &[]);
    assert_eq!(r.ints("out"), [11, 10, 100, 999, 1000, 999]);
}

#[test]
fn helpers_are_inlined_with_values_and_array_arguments() {
    let src = r#"
        int sq(int v) { v = v * v; return v; }
        void store(__global int *dst, int i, int v) { if (v < 0) return; dst[i] = v; }
        int first_over(__global int *a, int n, int limit) {
            for (int j = 0; j < n; j++) { if (a[j] > limit) return j; }
            return -1;
        }
        kernel void k(__global int *a, __global int *out, int n) {
            int t = get_global_id(0);
            int v = sq(t) - 2;
            store(out, t, v);
            if (t == 0) out[4] = first_over(a, n, 4) * 10 + sq(sq(2));
        }
    "#;
    let r = run(
        src,
        1,
        4,
        &[("a", 8, "iota"), ("out", 5, "zeros")],
        &[("n", "8")],
    );
    assert_eq!(r.ints("out"), [0, 0, 2, 7, 66]);
    assert!(r.races.is_empty());
}

#[test]
fn recursion_and_unknown_functions_are_errors() {
    let e = compile(
        "int f(int x) { return x ? f(x - 1) : 0; } kernel void k(__global int *a) { a[0] = f(3); }",
    )
    .unwrap_err();
    assert!(e.contains("recursive call of `f`"), "{e}");
    let e = compile("kernel void k(__global int *a) { a[0] = nope(3); }").unwrap_err();
    assert!(e.contains("use of undeclared identifier 'nope'"), "{e}");
    let e = compile("kernel void k(__global int *a) { atomic_fetch_add(a, 1); }").unwrap_err();
    // OpenCL C 2.0's: OpenCL C 1.2 declares no `atomic_fetch_add`.
    assert_eq!(e, "use of undeclared identifier 'atomic_fetch_add'");
}

#[test]
fn an_early_return_before_a_barrier_is_divergence() {
    let src = r#"
        kernel void k(__global int *a, int n) {
            __local int t[8];
            int i = get_local_id(0);
            if (i >= n) return;
            t[i] = a[i];
            barrier(CLK_LOCAL_MEM_FENCE);
            a[i] = t[(i + 1) % n];
        }
    "#;
    let all = run(src, 1, 8, &[("a", 8, "iota")], &[("n", "8")]);
    assert!(!all.divergent, "every work-item reaches the barrier");
    assert_eq!(all.ints("a"), [1, 2, 3, 4, 5, 6, 7, 0]);
    let some = run(src, 1, 8, &[("a", 8, "iota")], &[("n", "4")]);
    assert!(
        some.divergent,
        "work-items 4..7 returned while 0..3 wait at the barrier"
    );
    // A uniform early return is no divergence.
    let none = run(src, 1, 8, &[("a", 8, "iota")], &[("n", "0")]);
    assert!(!none.divergent);
}

#[test]
fn races_and_faults_are_found_in_cl_kernels() {
    let racy = "kernel void k(__global int *a) { a[get_global_id(0)] = a[get_global_id(0) + 1]; }";
    assert_eq!(
        run(racy, 1, 4, &[("a", 5, "iota")], &[]).race_arrays(),
        ["a"]
    );
    let fixed = "kernel void k(__global int *a, __global int *b) { b[get_global_id(0)] = a[get_global_id(0) + 1]; }";
    assert!(
        run(fixed, 1, 4, &[("a", 5, "iota"), ("b", 4, "zeros")], &[])
            .races
            .is_empty()
    );
    let oob = run(fixed, 1, 4, &[("a", 4, "iota"), ("b", 4, "zeros")], &[]);
    assert!(oob.fault.unwrap().contains("out-of-bounds access a[4]"));
    let cell = "kernel void k(__global int *a) { __local int c; if (get_local_id(0) == 0) c = 5; \
                barrier(CLK_LOCAL_MEM_FENCE); a[get_global_id(0)] = c; }";
    assert_eq!(
        run(cell, 2, 2, &[("a", 4, "zeros")], &[]).ints("a"),
        [5, 5, 5, 5]
    );
}

#[test]
fn writable_parameters_and_shadowing_locals() {
    let src = r#"
        kernel void k(__global int *a, int n) {
            n = n * 2;
            int tid = n + 1;           // `tid` is a .ksim builtin name; renamed on lowering
            { int n = 100; a[1] = n; }
            a[0] = tid;
        }
    "#;
    let r = run(src, 1, 1, &[("a", 2, "zeros")], &[("n", "5")]);
    assert_eq!(r.ints("a"), [11, 100]);
}

/// Runs a `.ksim` example with `in = iota`, one group of `n` threads, returning `out`
/// and the number of races.
fn ksim_example(name: &str, n: usize) -> (Vec<String>, usize) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let src = std::fs::read_to_string(root.join("examples").join(name)).unwrap();
    let k = lang::check::compile(&src).unwrap();
    let opts = LaunchOptions {
        defines: vec![("n".into(), n.to_string())],
        inputs: vec![("in".into(), "iota".into())],
        ..LaunchOptions::default()
    };
    let launch = Launch::new(Arc::new(k), &opts).unwrap();
    let out = interp::exec::run_canonical(&launch);
    let a = launch.kernel.array("out").unwrap();
    let values = out.memory.arrays[a][0]
        .iter()
        .map(Value::to_string)
        .collect();
    (values, out.races.len())
}

/// `.cl` versions of examples/*.ksim give the same arrays and race verdicts as the
/// `.ksim` kernel (both engines, checked by `run`).
#[test]
fn cl_kernels_match_their_ksim_versions() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let cl = std::fs::read_to_string(root.join("examples/opencl/kogge_stone.cl")).unwrap();
    let racy = format!("#define RACY\n{cl}");
    for n in [1, 4, 8, 16] {
        let bufs = [("in", n, "iota"), ("out", n, "zeros")];
        let r = run(&cl, 1, n, &bufs, &[]);
        let (want, races) = ksim_example("kogge_stone.ksim", n);
        assert_eq!(r.array("out"), want, "n = {n}");
        assert_eq!((r.races.len(), races), (0, 0));
        let r = run(&racy, 1, n, &bufs, &[]);
        let (want, races) = ksim_example("kogge_stone_racy.ksim", n);
        assert_eq!(r.array("out"), want, "racy, n = {n}");
        assert_eq!(
            !r.races.is_empty(),
            races > 0,
            "racy, n = {n}: the same verdict"
        );
    }
}
