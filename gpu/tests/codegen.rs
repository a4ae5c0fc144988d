//! Code generation tests (no OpenCL needed).

mod common;

use common::*;
use interp::Monoid;

#[test]
fn doubles_with_wrapping_and_names() {
    let l = launch(
        double_it(),
        &[("n", 8)],
        Monoid::IntAdd,
        None,
        &[("in", "iota")],
    );
    let src = gpu::emit(&l).unwrap();
    println!("{src}");
    assert!(src.contains("__kernel"));
    assert!(src.contains("void double_it("));
    assert!(src.contains("__global const int *restrict in"));
    assert!(src.contains("__global int *restrict out"));
    assert!(src.contains("const int n = 8;"));
    assert!(src.contains("const int tid = (int)get_local_id(0);"));
    assert!(src.contains("out[tid] = (int)((uint)in[tid] * 2u);"));
    assert!(src.contains("reqd_work_group_size(8, 1, 1)"));
}

#[test]
fn local_arrays_get_backing_buffers_and_barriers() {
    let l = launch(
        kogge_stone(),
        &[("n", 16)],
        Monoid::IntAdd,
        Some(2),
        &[("in", "random:1")],
    );
    let src = gpu::emit(&l).unwrap();
    println!("{src}");
    assert!(src.contains("__local T in[16];"));
    assert!(src.contains("__local T out[16];"));
    assert!(src.contains("__global T *restrict in_g"));
    assert!(src.contains("__global T *restrict out_g"));
    assert!(src.contains("in[ks_i] = in_g[get_group_id(0) * 16 + ks_i];"));
    // `out` starts with the default: filled, not copied in; copied out at the end.
    assert!(src.contains("out[ks_i] = 0;"));
    assert!(src.contains("out_g[get_group_id(0) * 16 + ks_i] = out[ks_i];"));
    assert!(src.contains("barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);"));
    assert!(src.contains("out[tid] = combine(temp, out[tid]);"));
    assert!(src.contains("typedef int T;"));
    let e = gpu::emit_with(&l, &gpu::EmitOptions::default()).unwrap();
    assert_eq!(e.args.len(), 2);
    assert!(e.plans[0].write && !e.plans[0].read);
    assert!(!e.plans[1].write && e.plans[1].read);
}

#[test]
fn interval_monoid_encoding() {
    let l = launch(
        kogge_stone(),
        &[("n", 4)],
        Monoid::Interval,
        Some(1),
        &[("in", "iota")],
    );
    let src = gpu::emit(&l).unwrap();
    assert!(src.contains("typedef ulong T;"));
    assert!(src.contains("#define IV_ID ((ulong)0xFFFFFFFF00000000UL)"));
    assert!(src.contains("static inline T iv_combine(T a, T b)"));
    assert!(src.contains("temp = IV_ID;"));
}

#[test]
fn list_monoid_is_refused() {
    let l = launch(kogge_stone(), &[("n", 4)], Monoid::List, Some(1), &[]);
    let err = gpu::emit(&l).unwrap_err();
    assert!(
        err.to_string()
            .contains("list monoid cannot run on an OpenCL device"),
        "{err}"
    );
}

#[test]
fn float_monoid_and_voigt() {
    let l = launch(kogge_stone(), &[("n", 4)], Monoid::FloatAdd, Some(1), &[]);
    let src = gpu::emit(&l).unwrap();
    assert!(src.contains("typedef float T;"));
    assert!(src.contains("#pragma OPENCL FP_CONTRACT OFF"));
    let l = launch(kogge_stone(), &[("n", 4)], Monoid::Voigt1, Some(1), &[]);
    let src = gpu::emit(&l).unwrap();
    assert!(src.contains("typedef uchar T;"));
}

#[test]
fn corner_cases_use_helpers() {
    let l = launch(corner_cases(), &[("n", 8)], Monoid::IntAdd, None, &[]);
    let src = gpu::emit(&l).unwrap();
    println!("{src}");
    assert!(src.contains("ks_div(x, dv)"));
    assert!(src.contains("ks_rem(x, dv)"));
    assert!(src.contains("ks_log2("));
    assert!(src.contains("ks_fmin("));
    assert!(src.contains("convert_int_sat("));
    assert!(src.contains("m[0 * 8 + tid]") || src.contains("m[tid]"));
    assert!(src.contains("(-2147483647 - 1)") || src.contains("2147483648u"));
    assert!(src.contains("__global uchar *restrict z"));
}

#[test]
fn scan_pipeline_kernels_emit() {
    // 64 elements, blocks of 16 (8 work-items, two elements each): scan(64) in 4 groups,
    // scan(4) of the block sums in 1 group, then add(64). The tree storage decides the
    // shape of the local array: a heap of 2b elements (1D) or (log2 b + 1) rows of b (2D).
    for (s, tree) in [
        (
            gpu::Storage::Tree1d,
            ["__local T tree[32];", "__local T tree[8];"],
        ),
        (gpu::Storage::Tree2d, ["local x[5][16]", "local x[3][4]"]),
    ] {
        let input: Vec<_> = (0..64).map(interp::Value::Int).collect();
        let p = gpu::scan_pipeline(s, input, 8, Monoid::IntAdd).unwrap();
        let stages: Vec<(String, usize, usize)> = p
            .stages
            .iter()
            .map(|st| {
                let l = &st.launch;
                (l.kernel.name.clone(), l.groups, l.local_size)
            })
            .collect();
        let scan = format!("scan_blocks_{}", s.name());
        assert_eq!(
            stages,
            [
                (scan.clone(), 4, 8),
                (scan.clone(), 1, 2),
                ("add_sums".to_string(), 4, 8)
            ],
            "{s:?}"
        );
        for (st, want) in p.stages.iter().zip(tree) {
            let src = gpu::emit(&st.launch).unwrap();
            assert!(src.contains(&format!("void {scan}(")), "{src}");
            assert!(src.contains(want), "{s:?}: `{want}` in\n{src}");
        }
    }
}
