//! The bits of float and double data (docs/language.md, "Byte-level views" and the `as_T`
//! row): `as_T` of scalars and vectors, lowered to the core's bit reinterpretation. Each
//! kernel runs on the reference semantics and the fast executor, which must agree on
//! memory, races and faults (`common::cl::run`); expected values are IEEE 754 bit patterns.

mod common;
use common::cl::{compile, run};
use common::{ksim, stdout, text};

#[test]
fn as_int_of_a_float_is_its_ieee_bits() {
    let src = r#"
        kernel void k(__global float *f, __global int *out, __global uint *u) {
            out[0] = as_int(1.0f);
            out[1] = as_int(-0.0f);
            out[2] = as_int(f[0]);
            out[3] = as_int(-f[0]);
            u[0] = as_uint(f[1]);
            u[1] = as_uint(0.1f);
        }
    "#;
    let bufs = [("f", 2, "2.5,-1"), ("out", 4, "zeros"), ("u", 2, "zeros")];
    let r = run(src, &[1], &[1], &bufs, &[]);
    assert_eq!(
        r.ints("out"),
        [
            0x3f80_0000,
            i32::MIN as i64,
            0x4020_0000,
            0xc020_0000u32 as i32 as i64
        ]
    );
    assert_eq!(r.ints("u"), [0xbf80_0000, 0x3dcc_cccd]);
    assert!(r.fault.is_none(), "{:?}", r.fault);
}

#[test]
fn as_float_of_an_int_is_the_float_of_those_bits() {
    let src = r#"
        kernel void k(__global float *f, __global int *out) {
            f[0] = as_float(0x3f800000);
            f[1] = as_float(0xc0490fdbu);
            f[2] = as_float(1) * 2.0f - as_float(2);
            out[0] = as_float(0x7f800000) > 1e38f;
            out[1] = as_int(as_float(-123456789)) == -123456789;
        }
    "#;
    let bufs = [("f", 3, "zeros"), ("out", 2, "zeros")];
    let r = run(src, &[1], &[1], &bufs, &[]);
    let f = r.array("f");
    assert_eq!(f[0].parse::<f32>().unwrap(), 1.0);
    assert_eq!(f[1].parse::<f32>().unwrap(), f32::from_bits(0xc049_0fdb));
    assert_eq!(f[2].parse::<f32>().unwrap(), 0.0, "subnormals are exact");
    assert_eq!(r.ints("out"), [1, 1]);
}

#[test]
fn nan_payloads_survive_as_t_memory_and_both_engines() {
    // A quiet NaN with payload 1 and a signalling NaN: their bits come back unchanged
    // through a variable, a float buffer and as_int.
    let src = r#"
        kernel void k(__global float *f, __global int *out) {
            float q = as_float(0x7fc00001);
            f[0] = q;
            f[1] = as_float(0xffa00005);
            out[0] = as_int(q);
            out[1] = as_int(f[0]);
            out[2] = as_int(f[1]);
            out[3] = q != q;
        }
    "#;
    let bufs = [("f", 2, "zeros"), ("out", 4, "zeros")];
    let r = run(src, &[1], &[1], &bufs, &[]);
    assert_eq!(
        r.ints("out"),
        [0x7fc0_0001, 0x7fc0_0001, 0xffa0_0005u32 as i32 as i64, 1]
    );
}

#[test]
fn double_and_long_bits() {
    let src = r#"
        kernel void k(__global double *d, __global long *l, __global ulong *u) {
            l[0] = as_long(1.0);
            l[1] = as_long(-0.0);
            u[0] = as_ulong(d[0]);
            d[1] = as_double(0x400921fb54442d18L);
            l[2] = as_long(as_double(0x7ff0000000000001L));
        }
    "#;
    let bufs = [("d", 2, "0.1,0"), ("l", 3, "zeros"), ("u", 1, "zeros")];
    let r = run(src, &[1], &[1], &bufs, &[]);
    assert_eq!(
        r.ints("l"),
        [0x3ff0_0000_0000_0000, i64::MIN, 0x7ff0_0000_0000_0001]
    );
    assert_eq!(r.array("u"), [0x3fb9_9999_9999_999au64.to_string()]);
    assert_eq!(
        r.array("d")[1].parse::<f64>().unwrap(),
        std::f64::consts::PI
    );
}

#[test]
fn as_t_of_vectors_is_per_component() {
    let src = r#"
        kernel void k(__global int *out, __global float *f) {
            int4 i = (int4)(0x3f800000, 0x40000000, 0xbf800000, 0);
            float4 v = as_float4(i);
            f[0] = v.x; f[1] = v.y; f[2] = v.z; f[3] = v.w;
            int4 back = as_int4(v * 2.0f);
            out[0] = back.x; out[1] = back.y; out[2] = back.z; out[3] = back.w;
            uint3 w = as_uint3((float3)(0.5f, -2.0f, 0.0f));
            out[4] = w.x; out[5] = w.y; out[6] = w.z;
        }
    "#;
    let bufs = [("out", 7, "zeros"), ("f", 4, "zeros")];
    let r = run(src, &[1], &[1], &bufs, &[]);
    let f: Vec<f32> = r.array("f").iter().map(|s| s.parse().unwrap()).collect();
    assert_eq!(f, [1.0, 2.0, -1.0, 0.0]);
    assert_eq!(
        r.ints("out"),
        [
            0x4000_0000,
            0x4080_0000,
            0xc000_0000u32 as i32 as i64,
            0,
            0x3f00_0000,
            0xc000_0000u32 as i32 as i64,
            0
        ]
    );
}

#[test]
fn as_t_between_integer_types_keeps_the_bits() {
    let src = r#"
        kernel void k(__global int *out) {
            out[0] = as_uint(-1) == 0xffffffffu;
            out[1] = as_char((uchar)200);
            out[2] = as_ushort((short)-2);
        }
    "#;
    let r = run(src, &[1], &[1], &[("out", 3, "zeros")], &[]);
    assert_eq!(r.ints("out"), [1, -56, 65534]);
}

#[test]
fn as_t_of_another_size_is_opencls_error() {
    for (call, want) in [
        ("as_int(1.0)", "sizes of 'int' and 'double' must match"),
        (
            "as_float((long)1)",
            "sizes of 'float' and 'long' must match",
        ),
        (
            "as_double(1.0f)",
            "sizes of 'double' and 'float' must match",
        ),
        (
            "as_int((float2)(1.0f, 2.0f))",
            "sizes of 'int' and 'float2'",
        ),
    ] {
        let src = format!("kernel void k(__global int *o) {{ o[0] = (int){call}; }}");
        let e = compile(&src)
            .err()
            .unwrap_or_else(|| panic!("{call} loads"));
        assert!(e.contains(want), "{call}: {e}");
    }
    let src = "kernel void k(__global uint *o) { uint2 u = as_uint2(1.0); o[0] = u.x; }";
    let e = compile(src).expect_err("a view that splits a double");
    assert!(
        e.contains("not supported yet") && e.contains("splits or joins components"),
        "{e}"
    );
    let src = "kernel void k(__global int *o) { o[0] = as_int(o[0] < 1); }";
    let e = compile(src)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(e.contains("has no bits"), "{e}");
}

#[test]
fn a_char_view_of_a_float_buffer_reads_the_bytes_of_its_bits() {
    let src = r#"
        kernel void k(__global float *f, __global int *out) {
            int i = get_global_id(0);
            __global uchar *c = (__global uchar *)f;
            out[i] = c[i];
        }
    "#;
    // 1.0f = 0x3f800000: bytes 00 00 80 3f; -2.5f = 0xc0200000: bytes 00 00 20 c0.
    let bufs = [("f", 2, "1,-2.5"), ("out", 8, "zeros")];
    let r = run(src, &[1], &[8], &bufs, &[]);
    assert_eq!(r.ints("out"), [0, 0, 0x80, 0x3f, 0, 0, 0x20, 0xc0]);
    assert!(r.races.is_empty() && r.fault.is_none());
}

#[test]
fn int_and_float_views_of_the_same_width_reinterpret_both_ways() {
    let src = r#"
        kernel void k(__global float *f, __global int *a, __global int *out) {
            __global int *fi = (__global int *)f;
            out[0] = fi[1];
            fi[0] = 0x40490fdb;
            __global float *af = (__global float *)a;
            af[1] = -0.0f;
            out[1] = (int)(af[0] * 4.0f);
        }
    "#;
    let bufs = [
        ("f", 2, "0,-2.5"),
        ("a", 2, "1069547520,7"),
        ("out", 2, "zeros"),
    ];
    let r = run(src, &[1], &[1], &bufs, &[]);
    // 1069547520 = 0x3fc00000 = 1.5f.
    assert_eq!(r.ints("out"), [0xc020_0000u32 as i32 as i64, 6]);
    assert_eq!(
        r.array("f")[0].parse::<f32>().unwrap(),
        f32::from_bits(0x4049_0fdb)
    );
    assert_eq!(r.ints("a"), [0x3fc0_0000, i32::MIN as i64]);
}

#[test]
fn uint_views_split_a_double_and_a_double_view_joins_uints() {
    let src = r#"
        kernel void k(__global double *d, __global uint *u, __global uint *out) {
            __global uint *du = (__global uint *)d;
            out[0] = du[0];
            out[1] = du[1];
            __global double *ud = (__global double *)u;
            ud[0] = 0.1;
        }
    "#;
    let bufs = [("d", 1, "1.5"), ("u", 2, "zeros"), ("out", 2, "zeros")];
    let r = run(src, &[1], &[1], &bufs, &[]);
    // 1.5 = 0x3ff8000000000000; 0.1 = 0x3fb999999999999a.
    assert_eq!(r.ints("out"), [0, 0x3ff8_0000]);
    assert_eq!(r.ints("u"), [0x9999_999a, 0x3fb9_9999]);
}

#[test]
fn a_char_write_into_a_local_float_replaces_one_byte_of_its_bits() {
    let src = r#"
        kernel void k(__global float *out, __global int *bits) {
            __local float a[2];
            int t = get_local_id(0);
            if (t == 0) { a[0] = 1.0f; a[1] = -1.0f; }
            barrier(CLK_LOCAL_MEM_FENCE);
            __local uchar *c = (__local uchar *)a;
            if (t == 0) c[3] = 0x40;
            if (t == 1) c[6] = 0x20;
            barrier(CLK_LOCAL_MEM_FENCE);
            if (t == 0) { out[0] = a[0]; out[1] = a[1]; bits[0] = as_int(a[0]); }
        }
    "#;
    let bufs = [("out", 2, "zeros"), ("bits", 1, "zeros")];
    let r = run(src, &[1], &[2], &bufs, &[]);
    // 0x3f800000 with byte 3 = 0x40: 0x40800000 = 4.0; 0xbf800000 with byte 2 = 0x20:
    // 0xbf200000 = -0.625. Two work-items writing different bytes of one float do not race.
    let f: Vec<f32> = r.array("out").iter().map(|s| s.parse().unwrap()).collect();
    assert_eq!(f, [4.0, -0.625]);
    assert_eq!(r.ints("bits"), [0x4080_0000]);
    assert!(r.races.is_empty(), "{:?}", r.race_arrays());
}

#[test]
fn byte_writes_into_one_byte_of_a_local_float_race() {
    let src = r#"
        kernel void k(__global float *out) {
            __local float a[1];
            __local uchar *c = (__local uchar *)a;
            c[1] = get_local_id(0);
            barrier(CLK_LOCAL_MEM_FENCE);
            out[0] = a[0];
        }
    "#;
    let r = run(src, &[1], &[2], &[("out", 1, "zeros")], &[]);
    assert!(!r.races.is_empty(), "two writes of byte 1 race");
}

const KERNEL: &str = "tests/kernels/cl_bitcast.cl";

#[test]
fn the_kernel_file_runs_and_the_opencl_device_agrees() {
    let args = [
        "--global",
        "4",
        "--local",
        "4",
        "--input",
        "f=1,-2.5,0.1,4",
        "--input",
        "u=zeros:4",
        "--input",
        "b=zeros:4",
        "--input",
        "g=zeros:4",
    ];
    let mut run_args = vec!["run", KERNEL];
    run_args.extend(args);
    let o = ksim(&run_args);
    assert!(o.status.success(), "{}", text(&o));
    // The bits of 1.0f, -2.5f, 0.1f (0x3dcccccd), 4.0f, their top bytes; adding 1 << 23 to
    // the bits doubles each.
    for want in [
        "= 1065353216 3223322624 1036831949 1082130432",
        "= 63 192 61 64",
        "= 2 -5 0.2 8",
    ] {
        assert!(stdout(&o).contains(want), "{want}\n{}", text(&o));
    }
    if gpu::device_or_skip("gpu compare of a kernel with as_T and a float byte view").is_none() {
        return;
    }
    let mut cmp = vec!["gpu", "compare", KERNEL];
    cmp.extend(args);
    let o = ksim(&cmp);
    assert!(o.status.success(), "{}", text(&o));
    assert!(stdout(&o).contains("match"), "{}", text(&o));
}
