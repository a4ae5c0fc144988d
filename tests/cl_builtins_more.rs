//! Functions without a body (GPUVerify's uninterpreted functions, `DECLARE_UF_BINARY`),
//! GPUVerify's built-ins outside annotations (`__add_noovfl_*`, `__mod_pow2`,
//! `__requires_fresh_array`, and the ones refused with a reason) and `atomic_xchg` on
//! `float`: each kernel runs on the reference semantics and the fast executor, which must
//! agree (tests/common/cl.rs).

mod common;
use common::cl::{compile, run};

/// The `int` elements of buffer `out` after running `src` on one group of `n` work-items.
fn ints(src: &str, n: usize, len: usize, args: &[(&str, &str)]) -> Vec<i64> {
    let r = run(src, &[1], &[n], &[("out", len, "zeros")], args);
    assert!(r.fault.is_none(), "{:?}", r.fault);
    assert!(r.races.is_empty(), "{:?}", r.race_arrays());
    r.ints("out")
}

#[test]
fn a_bodiless_function_is_a_function_of_its_arguments() {
    // Equal arguments give equal results, in one work-item and across work-items; other
    // arguments (almost surely) other results; each function name its own function.
    let src = "
        uint f(uint, uint);
        uint g(uint, uint);
        kernel void k(__global uint *out) {
            uint i = get_local_id(0);
            out[4 * i] = f(i / 2, 7) == f(i / 2, 7);
            out[4 * i + 1] = f(i / 2, 7);
            out[4 * i + 2] = f(7, i / 2) != f(i / 2, 7) || i == 14;
            out[4 * i + 3] = f(i, 1) != g(i, 1);
        }";
    let out = ints(src, 4, 16, &[]);
    for i in 0..4 {
        assert_eq!(out[4 * i], 1, "f is deterministic");
        assert_eq!(out[4 * i + 2], 1, "argument order matters");
        assert_eq!(out[4 * i + 3], 1, "f and g differ");
    }
    assert_eq!(out[1], out[5], "work-items 0 and 1 call f(0, 7)");
    assert_eq!(out[9], out[13], "work-items 2 and 3 call f(1, 7)");
    assert_ne!(out[1], out[9], "f(0, 7) and f(1, 7) differ");
}

#[test]
fn bodiless_results_of_every_scalar_and_vector_type() {
    let src = "
        bool b(void);
        int n(int);
        float r(float);
        int3 v(void);
        void nothing(__global int *p, int x);
        kernel void k(__global int *out, __global float *fout) {
            int i = get_local_id(0);
            bool y = b();
            out[8 * i] = y == b();
            float x = r(1.5f);
            fout[i] = x;
            out[8 * i + 1] = x >= 0.0f && x < 1.0f && x == r(1.5f) && x != r(2.5f);
            int3 a = v();
            int3 c = v();
            out[8 * i + 2] = a.x == c.x && a.y == c.y && a.z == c.z;
            out[8 * i + 3] = a.x != a.y && a.y != a.z;
            nothing(out, 5);
            out[8 * i + 4] = n(-1) == n(-1) && n(-1) != n(1);
        }";
    let r = run(
        src,
        &[1],
        &[2],
        &[("out", 16, "zeros"), ("fout", 2, "zeros")],
        &[],
    );
    assert!(r.fault.is_none(), "{:?}", r.fault);
    assert!(r.races.is_empty(), "a void bodiless function writes nothing");
    let out = r.ints("out");
    for i in 0..2 {
        assert_eq!(out[8 * i..8 * i + 5], [1, 1, 1, 1, 1], "work-item {i}");
    }
    let f = r.array("fout");
    assert_eq!(f[0], f[1]);
}

#[test]
fn a_bodiless_function_is_noted_as_one_interpretation() {
    let c = compile("uint bar(uint, uint); kernel void k(uint x) { uint z = bar(x, x); }")
        .expect("loads");
    assert!(
        c.info
            .notes
            .iter()
            .any(|n| n.text.contains("`bar` has no body") && n.text.contains("one")),
        "{:?}",
        c.info.notes
    );
}

#[test]
fn an_assertion_about_an_uninterpreted_function_can_fail() {
    // GPUVerify's fail_bodiless_procedure: nothing says bar(x, y) >= x, and the one
    // interpretation ksim runs is not monotone.
    let src = "
        unsigned bar(unsigned, unsigned);
        kernel void k(unsigned x, unsigned y) {
            unsigned z = bar(x, y);
            __assert(z >= x && z >= y);
        }";
    let r = run(src, &[1], &[64], &[], &[("x", "3000000000"), ("y", "5")]);
    let f = r.fault.expect("bar(x, y) < x in this interpretation");
    assert!(f.contains("__assert"), "{f}");
}

#[test]
fn declare_uf_binary_declares_a_bodiless_function() {
    let src = "
        DECLARE_UF_BINARY(A, unsigned, unsigned, unsigned);
        kernel void k(__global uint *out, unsigned x, unsigned y) {
            out[get_local_id(0)] = A(x, y) == A(x, y) && A(x, y) != A(y, x);
        }";
    assert_eq!(ints(src, 2, 2, &[("x", "3"), ("y", "4")]), [1, 1]);
}

#[test]
fn a_race_on_a_bodiless_functions_argument_is_found() {
    // GPUVerify's writereadarray_equality: the argument A[tid + 1] is read, racing with
    // the neighbour's write.
    let src = "
        void foo(int);
        kernel void k(__local int *A) {
            A[get_local_id(0)] = 0;
            foo(A[get_local_id(0) + 1]);
        }";
    let r = run(src, &[1], &[2], &[("A", 4, "zeros")], &[]);
    assert_eq!(r.race_arrays(), ["A"]);
}

#[test]
fn add_noovfl_adds_and_an_overflow_is_an_assumption_fault() {
    let src = "
        kernel void k(__global int *out, int x, int y, unsigned u, unsigned v) {
            out[get_local_id(0)] = __add_noovfl_int(x, y);
            out[get_local_id(0) + 2] = __add_noovfl_unsigned_int(u, v);
        }";
    let ok = [("x", "-7"), ("y", "3"), ("u", "4000000000"), ("v", "5")];
    assert_eq!(ints(src, 2, 4, &ok), [-4, -4, 4000000005, 4000000005]);
    let cases = [
        [("x", "2147483647"), ("y", "1"), ("u", "0"), ("v", "0")],
        [("x", "-2147483648"), ("y", "-1"), ("u", "0"), ("v", "0")],
        [("x", "0"), ("y", "0"), ("u", "4000000000"), ("v", "300000000")],
    ];
    for args in cases {
        let r = run(src, &[1], &[2], &[("out", 4, "zeros")], &args);
        let f = r.fault.unwrap_or_else(|| panic!("{args:?} overflows"));
        assert!(f.contains("__assume"), "{f}");
    }
    // The bounds themselves are sums that fit.
    let edge = [
        ("x", "2147483646"),
        ("y", "1"),
        ("u", "4294967290"),
        ("v", "5"),
    ];
    assert_eq!(
        ints(src, 2, 4, &edge),
        [2147483647, 2147483647, 4294967295, 4294967295]
    );
}

#[test]
fn mod_pow2_is_the_low_bits() {
    let src = "
        kernel void k(__global int *out) {
            int i = get_local_id(0);
            out[i] = __mod_pow2(i + 13, 8);
            __assert(__mod_pow2(i, get_local_size(0)) == get_local_id(0));
        }";
    assert_eq!(ints(src, 4, 4, &[]), [5, 6, 7, 0]);
}

#[test]
fn requires_fresh_array_holds_for_every_buffer() {
    let src = "
        kernel void k(__global float *q, __local float *l) {
            __requires_fresh_array(q);
            __requires_fresh_array(l);
            q[get_local_id(0)] = get_global_id(0);
        }";
    let r = run(src, &[2], &[2], &[("q", 4, "zeros"), ("l", 2, "zeros")], &[]);
    assert!(r.fault.is_none());
    assert_eq!(r.race_arrays(), ["q", "q"], "both groups write q[0] and q[1]");
    let e = compile("kernel void k(int x) { __requires_fresh_array(x); }").unwrap_err();
    assert!(e.contains("takes one buffer"), "{e}");
}

#[test]
fn ghost_arrays_and_access_specifications_are_refused_with_a_reason() {
    let e = compile(
        "kernel void k() { __local int A[4]; __local int G[4]; __array_snapshot(G, A); }",
    )
    .unwrap_err();
    assert!(
        e.starts_with("not supported yet: GPUVerify's ghost arrays") && e.contains("__array_snapshot"),
        "{e}"
    );
    let e = compile(
        "void __spec_f(__global int *p) { __writes_to(p); }
         kernel void k(__global int *A) { __spec_f(A); }",
    )
    .unwrap_err();
    assert!(
        e.contains("access specifications") && e.contains("__writes_to"),
        "{e}"
    );
}

#[test]
fn atomic_xchg_exchanges_float_bits() {
    let src = "
        kernel void k(__local float *E, __global float *F, __global float *out) {
            int i = get_local_id(0);
            atomic_xchg(E, 10.0f);
            float old = atomic_xchg(&F[1], 2.5f + i);
            barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
            out[i] = old;
        }";
    let r = run(
        src,
        &[1],
        &[1],
        &[("E", 1, "zeros"), ("F", 2, "iota"), ("out", 1, "zeros")],
        &[],
    );
    assert!(r.fault.is_none(), "{:?}", r.fault);
    assert_eq!(r.array("E"), ["10"]);
    assert_eq!(r.array("F"), ["0", "2.5"]);
    assert_eq!(r.array("out"), ["1"]);
    // Several work-items: atomics never race with each other.
    let r = run(
        src,
        &[1],
        &[4],
        &[("E", 1, "zeros"), ("F", 2, "iota"), ("out", 4, "zeros")],
        &[],
    );
    assert!(r.races.is_empty(), "{:?}", r.race_arrays());
}
