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
    assert!(
        r.races.is_empty(),
        "a void bodiless function writes nothing"
    );
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
    let r = run(src, &[1], &[64], &[], &[("x", "4294967295"), ("y", "5")]);
    let f = r
        .fault
        .expect("bar(x, y) < UINT_MAX in this interpretation");
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
    // `out` holds `int`: the `uint` sum 4000000005 reads back as 4000000005 - 2^32.
    assert_eq!(ints(src, 2, 4, &ok), [-4, -4, -294967291, -294967291]);
    let cases = [
        [("x", "2147483647"), ("y", "1"), ("u", "0"), ("v", "0")],
        [("x", "-2147483648"), ("y", "-1"), ("u", "0"), ("v", "0")],
        [
            ("x", "0"),
            ("y", "0"),
            ("u", "4000000000"),
            ("v", "300000000"),
        ],
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
        [2147483647, 2147483647, -1, -1] // UINT_MAX read back as an `int`
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
    let r = run(
        src,
        &[2],
        &[2],
        &[("q", 4, "zeros"), ("l", 2, "zeros")],
        &[],
    );
    assert!(r.fault.is_none());
    assert!(!r.races.is_empty(), "both groups write q[0] and q[1]");
    assert!(r.race_arrays().iter().all(|a| a == "q"));
    let e = compile("kernel void k(int x) { __requires_fresh_array(x); }").unwrap_err();
    assert!(
        e.contains("no matching function for call to '__requires_fresh_array'"),
        "{e}"
    );
}

#[test]
fn ghost_arrays_and_access_log_built_ins_are_refused_with_a_reason() {
    let e =
        compile("kernel void k() { __local int A[4]; __local int G[4]; __array_snapshot(G, A); }")
            .unwrap_err();
    assert!(
        e.starts_with("not supported yet: GPUVerify's ghost arrays")
            && e.contains("__array_snapshot"),
        "{e}"
    );
    // Access specifications (`__writes_to`) load now: tests/cl_gpuv.rs.
    let e = compile("kernel void k(__local int *p) { volatile int z = __read_offset_bytes(p); }")
        .unwrap_err();
    assert!(
        e.contains("access-log built-ins") && e.contains("__read_offset_bytes"),
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

#[test]
fn math_built_ins_have_their_values() {
    // Reference values: exact results, or the float nearest the true value.
    let cases: &[(&str, &str)] = &[
        ("sqrt(2.0f)", "1.4142135"),
        ("ceil(1.25f)", "2"),
        ("ceil(-1.5f)", "-1"),
        ("floor(-1.5f)", "-2"),
        ("trunc(-1.75f)", "-1"),
        ("round(2.5f)", "3"),
        ("rint(2.5f)", "2"),
        ("fabs(-3.5f)", "3.5"),
        ("exp(1.0f)", "2.7182817"),
        ("exp(2.0f)", "7.389056"),
        ("exp2(10.0f)", "1024"),
        ("log(1.0f)", "0"),
        ("log2(8.0f)", "3"),
        ("log10(1000.0f)", "3"),
        ("pow(2.0f, 10.0f)", "1024"),
        ("pown(3.0f, 4)", "81"),
        ("pown(2.0f, -2)", "0.25"),
        ("powr(4.0f, 0.5f)", "2"),
        ("powr(-1.0f, 2.0f)", "NaN"),
        ("half_powr(2.0f, 3.0f)", "8"),
        ("native_sqrt(16.0f)", "4"),
        ("sin(0.0f)", "0"),
        ("cos(0.0f)", "1"),
        ("atan2(1.0f, 1.0f)", "0.7853982"),
        ("hypot(3.0f, 4.0f)", "5"),
        ("fmod(7.5f, 2.0f)", "1.5"),
        ("fmin(NAN, 1.0f)", "1"),
        ("fmax(-2.0f, 1.0f)", "1"),
        ("fma(2.0f, 3.0f, 4.0f)", "10"),
        ("copysign(2.0f, -0.5f)", "-2"),
        ("native_recip(4.0f)", "0.25"),
        ("native_divide(1.0f, 8.0f)", "0.125"),
        ("rsqrt(4.0f)", "0.5"),
        ("cbrt(27.0f)", "3"),
        ("(float)isinf(INFINITY)", "1"),
        ("(float)isfinite(INFINITY)", "0"),
    ];
    let body: String = cases
        .iter()
        .enumerate()
        .map(|(i, (e, _))| format!("out[{i}] = {e};\n"))
        .collect();
    let src = format!("kernel void k(__global float *out) {{ {body} }}");
    let r = run(&src, &[1], &[1], &[("out", cases.len(), "zeros")], &[]);
    assert!(r.fault.is_none(), "{:?}", r.fault);
    let got = r.array("out");
    for ((e, want), got) in cases.iter().zip(&got) {
        assert_eq!(got, want, "{e}");
    }
}

#[test]
fn math_built_ins_apply_per_component_of_vectors() {
    // GPUVerify's ceil and misc16 kernels: ceil(float4), pown(float4, int4).
    let src = "
        kernel void k(__global float4 *p, __global int4 *n) {
            int i = get_global_id(0);
            p[i] = pown(ceil(p[i]), n[i]);
        }";
    let r = run(src, &[1], &[2], &[("p", 8, "iota"), ("n", 8, "iota")], &[]);
    assert!(r.fault.is_none(), "{:?}", r.fault);
    // p[j] = j^j per component (0^0 = 1).
    let want: Vec<String> = (0..8)
        .map(|j: i32| (j as f32).powi(j).to_string())
        .collect();
    assert_eq!(r.array("p"), want);
}

#[test]
fn sincos_stores_the_cosine_through_its_pointer() {
    let src = "
        kernel void k(__global float *s, __global float *c) {
            int i = get_global_id(0);
            float cv;
            s[i] = sincos(0.0f, &cv);
            c[i] = cv;
            s[i + 2] = sincos(0.0f, c + i + 2);
        }";
    let r = run(
        src,
        &[1],
        &[2],
        &[("s", 4, "zeros"), ("c", 4, "zeros")],
        &[],
    );
    assert!(r.fault.is_none() && r.races.is_empty());
    assert_eq!(r.array("s"), ["0", "0", "0", "0"]);
    assert_eq!(r.array("c"), ["1", "1", "1", "1"]);
    // GPUVerify's miscfail9: every work-item stores its cosine in A[0].
    let r = run(
        "kernel void k(__global float *A) { sincos(get_global_id(0), A); }",
        &[1],
        &[4],
        &[("A", 4, "zeros")],
        &[],
    );
    assert_eq!(r.race_arrays()[0], "A");
}

#[test]
fn fence_flags_known_after_inlining_decide_the_barrier() {
    // The flags reach the barrier through a helper's parameter and a constant variable:
    // a local barrier does not order the global buffer, so the reads race with the writes.
    let src = "
        void wait_for(cl_mem_fence_flags f) { barrier(f); }
        kernel void k(__global int *g, __local int *l, __global int *o) {
            int i = get_local_id(0);
            const cl_mem_fence_flags lf = CLK_LOCAL_MEM_FENCE;
            g[i] = i;
            l[i] = i;
            wait_for(lf);
            o[i] = g[(i + 1) % 2] + l[(i + 1) % 2];
        }";
    let r = run(
        src,
        &[1],
        &[2],
        &[("g", 2, "zeros"), ("l", 2, "zeros"), ("o", 2, "zeros")],
        &[],
    );
    assert_eq!(
        r.race_arrays().iter().filter(|a| *a == "g").count(),
        r.races.len()
    );
    assert!(!r.races.is_empty(), "the global accesses are not ordered");
    let both = src.replace("wait_for(lf)", "wait_for(lf | CLK_GLOBAL_MEM_FENCE)");
    let r = run(
        &both,
        &[1],
        &[2],
        &[("g", 2, "zeros"), ("l", 2, "zeros"), ("o", 2, "zeros")],
        &[],
    );
    assert!(r.races.is_empty(), "{:?}", r.race_arrays());
    // Flags computed at run time (GPUVerify's inter_group_and_barrier_flag_tests): a
    // per-work-item fence read from a variable (tests/cl_fences.rs).
    let per_item = |src: &str| {
        let c = compile(src).unwrap_or_else(|e| panic!("{e}"));
        c.kernel.has_item_fences()
    };
    assert!(per_item(
        "kernel void k(__local int *p) {
            int x = get_local_id(0) == 0 ? CLK_LOCAL_MEM_FENCE : 0;
            barrier(x);
        }"
    ));
    // A variable assigned after its declaration has no static value either.
    assert!(per_item(
        "kernel void k() { cl_mem_fence_flags f = CLK_LOCAL_MEM_FENCE; f = 0; barrier(f); }"
    ));
}

#[test]
fn a_call_of_a_noreturn_function_without_a_body_is_an_assertion_fault() {
    // GPUVerify's `unreachable`: the code after the call is unreachable.
    let src = "
        void f(__global int *a) __attribute__ ((noreturn));
        kernel void k(__global int *a) { f(a); }";
    let r = run(src, &[1], &[2], &[("a", 2, "zeros")], &[]);
    let f = r.fault.expect("the call cannot return");
    assert!(f.contains("__assert"), "{f}");
    let c = compile(src).expect("loads");
    assert!(c.info.notes.iter().any(|n| n.text.contains("noreturn")));
}

#[test]
fn gpu_compare_matches_on_math_built_ins() {
    if gpu::device_or_skip("gpu compare of float math built-ins").is_none() {
        return;
    }
    let o = common::ksim(&[
        "gpu",
        "compare",
        "tests/kernels/cl_math.cl",
        "--global",
        "8",
        "--local",
        "4",
        "--input",
        "x=iota:8",
        "--input",
        "v=iota:32",
        "--input",
        "out=zeros:32",
    ]);
    assert!(o.status.success(), "{}", common::text(&o));
    assert!(
        common::stdout(&o).to_lowercase().starts_with("match ("),
        "{}",
        common::text(&o)
    );
}
