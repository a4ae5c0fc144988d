//! OpenCL C types and data through the whole pipeline. Vector types (lang/src/cl/vector.rs):
//! components, swizzles, literals, element-wise operators, relational masks, conversions,
//! vector buffers in OpenCL's memory layout, helpers taking and returning vectors; arrays of
//! more than two dimensions (lang/src/cl/arrays.rs). Each kernel runs on both engines, which
//! must agree; expected values follow from OpenCL C 1.2 §6.1.5, §6.1.7, §6.2 and §6.3.

mod common;

use common::cl::{compile, Ran};

/// Runs `src` with `groups` x `local` work-items on both engines (which must agree, and
/// find no fault); buffers `(name, components, spec)`.
fn run(src: &str, groups: usize, local: usize, bufs: &[(&str, usize, &str)]) -> Ran {
    let r = common::cl::run(src, &[groups], &[local], bufs, &[]);
    assert!(r.fault.is_none(), "{:?}", r.fault);
    r
}

/// Runs a one-work-item kernel whose body stores into `__global int *out` (8 slots).
fn out_of(body: &str) -> Vec<String> {
    let src = format!("kernel void k(__global int *out) {{ {body} }}");
    run(&src, 1, 1, &[("out", 8, "zeros")]).array("out")
}

#[test]
fn components_swizzles_and_literals() {
    // §6.1.6 literals with vector parts and splats; §6.1.7 components, swizzles, lo/hi/even/odd.
    let got = out_of(
        "int4 a = (int4)(1, (int2)(2, 3), 4); int4 s = 7; int8 e = (int8)(a, (int4)(5, 6, 7, 8)); \
         int2 h = a.hi; int4 r = a.wzyx; int3 t = (int3)(9, a.xy); \
         out[0] = a.x + 10 * a.s3; out[1] = s.y; out[2] = e.s5 + 10 * e.odd.x; \
         out[3] = h.x * 10 + h.y; out[4] = r.x * 1000 + r.y * 100 + r.z * 10 + r.w; \
         out[5] = t.z + e.even.w; out[6] = e.hi.lo.y; out[7] = a.lo.y;",
    );
    assert_eq!(got, ["41", "7", "26", "34", "4321", "9", "6", "2"]);
}

#[test]
fn swizzle_assignment_and_element_wise_operators() {
    // The GPUVerify suite's vectorops kernel, its asserts turned into stores.
    let got = out_of(
        "int4 res = (int4)(5, 5, 5, 5); int4 v = (int4)(1, 2, 3, 4); res.wy = v.zy; \
         out[0] = res.x * 1000 + res.y * 100 + res.z * 10 + res.w; \
         int4 ad = (int4)(0, 1, 2, 0); res = (int4)(5, 5, 5, 5); res.xyzw += ad.yzwx; \
         out[1] = res.x * 1000 + res.y * 100 + res.z * 10 + res.w; \
         res = -res; out[2] = res.x; \
         v = v.wzyx; out[3] = v.x * 1000 + v.y * 100 + v.z * 10 + v.w; \
         v = v * 2 + (int4)(1); out[4] = v.x + v.w; v++; out[5] = v.y; \
         int2 q = (int2)(7, -7) / 2; out[6] = q.y; out[7] = (q << 1).x;",
    );
    assert_eq!(got, ["5253", "6755", "-6", "4321", "12", "8", "-3", "6"]);
}

#[test]
fn relational_operators_give_minus_one_or_zero_and_select_by_sign() {
    // §6.3: vector relational results are -1 (true) or 0; `?:` with a vector condition
    // and `select` choose per component by the condition's most significant bit.
    let got = out_of(
        "float4 a = (float4)(1.0f, 2.0f, 3.0f, 4.0f); int4 m = a > 2.5f; \
         out[0] = m.x; out[1] = m.w; int4 n = !m; out[2] = n.x; \
         int4 c = (int4)(-1, 0, 5, -8); int4 x = c ? (int4)(1) : (int4)(2); \
         out[3] = x.x * 1000 + x.y * 100 + x.z * 10 + x.w; \
         int4 y = select((int4)(1), (int4)(2), c); out[4] = y.x * 1000 + y.y * 100 + y.z * 10 + y.w; \
         out[5] = any(c); out[6] = all(c); out[7] = all(m | (int4)(-1));",
    );
    assert_eq!(got, ["0", "-1", "-1", "1221", "2112", "1", "0", "1"]);
}

#[test]
fn conversions_and_reinterpretations() {
    let src = "kernel void k(__global float *f, __global uint *u) { \
               float4 a = (float4)(1.5f, -2.5f, 3.75f, 0.0f); int4 i = convert_int4(a); \
               f[0] = convert_float(i.y); uint4 b = as_uint4(i); u[0] = b.y; u[1] = b.x; \
               float2 g = convert_float2((int2)(3, 4)) / 2.0f; f[1] = g.x + g.y; \
               f[2] = convert_float(7) + (float)as_int(4u); }";
    let r = run(src, 1, 1, &[("f", 3, "zeros"), ("u", 2, "zeros")]);
    assert_eq!(r.array("f"), ["-2", "3.5", "11"]);
    assert_eq!(r.array("u"), ["4294967294", "1"]);
}

#[test]
fn vector_buffers_use_the_opencl_memory_layout() {
    // Element i, component j of a float4 buffer is float i*4 + j; an int3 takes 4 slots
    // (§6.1.5) and its padding is not written.
    let src = "kernel void k(__global float4 *v, __global int3 *t, __global int *n) { \
               size_t i = get_global_id(0); v[i].y = (float)i; v[i] = v[i] * 2.0f; \
               t[i] = (int3)(i, i + 1, i + 2); n[i] = sizeof(t[i]) + sizeof(float3); }";
    let r = run(
        src,
        1,
        2,
        &[("v", 8, "iota"), ("t", 8, "zeros"), ("n", 2, "zeros")],
    );
    assert_eq!(r.array("v"), ["0", "0", "4", "6", "8", "2", "12", "14"]);
    assert_eq!(r.array("t"), ["0", "1", "2", "0", "1", "2", "3", "0"]);
    assert_eq!(r.array("n"), ["32", "32"]);
    assert!(r.races.is_empty());
}

#[test]
fn races_are_per_component() {
    // Every work-item writes G[3].y: a write-write race on one component (GPUVerify's
    // misc/fail/vector_element_race); different components of one element do not race.
    let racy = "kernel void k(__global float4 *G) { G[3].y = (float)get_global_id(0); }";
    assert!(!run(racy, 1, 4, &[("G", 16, "zeros")]).races.is_empty());
    let apart = "kernel void k(__global int4 *G) { \
                 int c = get_local_id(0); if (c == 0) G[0].x = 1; else if (c == 1) G[0].y = 2; \
                 else if (c == 2) G[0].z = 3; else G[0].w = 4; }";
    let r = run(apart, 1, 4, &[("G", 4, "zeros")]);
    assert!(r.races.is_empty());
    assert_eq!(r.array("G"), ["1", "2", "3", "4"]);
}

#[test]
fn local_vector_arrays_and_helpers_with_vectors() {
    let src = "int2 swap(int2 p) { return p.yx; } \
               int sum(int4 v) { return v.x + v.y + v.z + v.w; } \
               kernel void k(__global int *out) { \
               __local int4 t[2]; __local float2 c; size_t l = get_local_id(0); \
               t[l] = (int4)(l, 1, 2, 3); if (l == 0) c.x = 1.5f; barrier(CLK_LOCAL_MEM_FENCE); \
               int2 s = swap(t[1 - l].lo); out[l] = s.x * 10 + s.y + sum(t[l]); \
               out[2 + l] = (int)(c.x * 2.0f); }";
    let r = run(src, 1, 2, &[("out", 4, "zeros")]);
    assert_eq!(r.array("out"), ["17", "17", "3", "3"]);
}

#[test]
fn vector_errors_name_the_problem() {
    for (body, msg) in [
        (
            "int4 v = 1; out[0] = v;",
            "assigning to '__global int' from incompatible type '__private int4' (vector of 4 'int' values)",
        ),
        (
            "int4 v = 1; v.xx = (int2)(1, 2);",
            "vector is not assignable (contains duplicate components)",
        ),
        ("int3 v = 1; out[0] = v.w;", "vector component access exceeds type '__private int3' (vector of 3 'int' values)"),
        ("int2 v = 1; out[0] = v.z;", "vector component access exceeds type '__private int2' (vector of 2 'int' values)"),
        (
            "int4 v = (int4)(1, 2, 3);",
            "too few elements in vector initialization (expected 4 elements, have 3)",
        ),
        (
            "float4 f = 1.0f; int4 v = f;",
            "initializing '__private int4' (vector of 4 'int' values) with an expression of incompatible type '__private float4' (vector of 4 'float' values)",
        ),
        (
            "float4 f = 1.0f; int4 v = (int4)(f);",
            "invalid conversion between ext-vector type 'int4' (vector of 4 'int' values) and 'float4' (vector of 4 'float' values)",
        ),
        (
            "float4 f = 1.0f; int4 v = f + (int4)(1);",
            "implicit conversions between vector types ('float4' (vector of 4 'float' values) and 'int4' (vector of 4 'int' values)) are not permitted",
        ),
        (
            "int2 v = as_int2((float4)(1.0f));",
            "invalid reinterpretation: sizes of 'int2' (vector of 2 'int' values) and 'float4' (vector of 4 'float' values) must match",
        ),
        (
            "int4 v = convert_int4_sat((float4)(1.0f));",
            "not supported yet: conversions with `_sat`",
        ),
        ("__local int4 t[2]; f(t);", "pointer casts"),
    ] {
        let src = format!(
            "void f(__local int *p) {{ p[0] = 1; }} kernel void k(__global int *out) {{ {body} }}"
        );
        let e = compile(&src).unwrap_err();
        assert!(e.contains(msg), "{body}: {e}");
    }
}

#[test]
fn arrays_of_more_than_two_dimensions_keep_their_layout() {
    // L[a][b][c] is element (a * 3 + b) * 4 + c of the row-major layout: work-item l writes
    // the element whose flat position is l, then reads back its mirror image.
    let src = "kernel void k(__global int *out) { __local int L[2][3][4]; \
               int l = get_local_id(0); L[l / 12][(l / 4) % 3][l % 4] = l; \
               barrier(CLK_LOCAL_MEM_FENCE); int m = 23 - l; \
               out[l] = L[m / 12][(m / 4) % 3][m % 4] + 100 * sizeof(L[0][0][0]); }";
    let r = run(src, 1, 24, &[("out", 24, "zeros")]);
    let want: Vec<String> = (0..24).map(|l| (423 - l).to_string()).collect();
    assert_eq!(r.array("out"), want);
    assert!(r.races.is_empty());
    // Every work-item writing one element of a 4D array races (misc/fail/4d_array_race).
    let racy = "kernel void k(__global int *G) { local int L[2][3][4][5]; \
                L[1][2][3][3] = G[get_global_id(0)]; }";
    assert!(!run(racy, 1, 4, &[("G", 4, "iota")]).races.is_empty());
    // The lost per-dimension bounds check is said, not hidden.
    let c = compile(racy).unwrap();
    assert!(
        c.info
            .notes
            .iter()
            .any(|n| n.text.contains("flattened to two")),
        "{:?}",
        c.info.notes
    );
}

#[test]
fn a_vector_kernel_from_the_command_line() {
    // The input of a float4 buffer lists its components (4 per vector).
    let launch = [
        "tests/kernels/float4_scale.cl",
        "--global",
        "2",
        "--local",
        "2",
        "--input",
        "v=iota:8",
        "--arg",
        "k=2",
    ];
    for engine in ["reference", "fast"] {
        let mut args = vec!["run"];
        args.extend(launch);
        args.extend(["--engine", engine]);
        let o = common::ksim(&args);
        assert!(o.status.success(), "{}", common::text(&o));
        assert!(
            common::text(&o).contains("v = 4 6 0 2 12 14 8 10"),
            "{}",
            common::text(&o)
        );
    }
    let mut args = vec!["races"];
    args.extend(launch);
    args.extend(["-D", "RACY"]);
    let o = common::ksim(&args);
    assert_eq!(o.status.code(), Some(1), "{}", common::text(&o));
    assert!(
        common::text(&o).contains("race on v[1]"),
        "{}",
        common::text(&o)
    );
    // Without an input the message says what N counts.
    let o = common::ksim(&[
        "run", launch[0], "--global", "2", "--local", "2", "--arg", "k=2",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", common::text(&o));
    assert!(
        common::text(&o).contains("float4 elements, each 4 float slots: N counts slots"),
        "{}",
        common::text(&o)
    );
}

#[test]
fn gpu_compare_matches_on_a_vector_kernel() {
    // The simulation's float4 layout is the device's: the buffers compare equal.
    if gpu::device_or_skip("gpu compare of a vector .cl kernel").is_none() {
        return;
    }
    let o = common::ksim(&[
        "gpu",
        "compare",
        "tests/kernels/float4_scale.cl",
        "--global",
        "4",
        "--local",
        "2",
        "--input",
        "v=random:16:3",
        "--arg",
        "k=3",
    ]);
    assert!(o.status.success(), "{}", common::text(&o));
    assert!(
        common::stdout(&o).to_lowercase().starts_with("match ("),
        "{}",
        common::text(&o)
    );
}
