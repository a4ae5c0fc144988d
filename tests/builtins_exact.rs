//! OpenCL C's limits macros and integer built-ins as whole programs (`ksim run` on `.cl`
//! kernels), with results the specification defines (OpenCL C 1.2 §6.12.3): every width,
//! vectors, the result types (`abs` unsigned, `upsample` wider) and clear errors for calls
//! OpenCL has no version of.

mod common;

use common::{ksim, stdout, text};

/// Runs `src` in one work-item with the given `--input`s on both engines; the lines
/// `NAME = values`.
fn run(name: &str, src: &str, inputs: &[&str]) -> String {
    let dir = common::tmp(name);
    let file = dir.join("k.cl");
    std::fs::write(&file, src).expect("write kernel");
    let mut args = vec![
        "run",
        file.to_str().unwrap(),
        "--global",
        "1",
        "--local",
        "1",
    ];
    for i in inputs {
        args.extend(["--input", i]);
    }
    let o = ksim(&args);
    assert!(o.status.success(), "{}", text(&o));
    let fast = {
        args.extend(["--engine", "fast"]);
        ksim(&args)
    };
    assert_eq!(stdout(&o), stdout(&fast), "the engines agree");
    // Names are padded to one width: one space around `=`.
    stdout(&o)
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" ") + "\n")
        .collect()
}

#[test]
fn limits_macros_have_the_specified_values() {
    let src = "kernel void k(global long *o, global ulong *u, global float *f, global int *d) {
      o[0] = CHAR_BIT; o[1] = CHAR_MAX; o[2] = CHAR_MIN; o[3] = SCHAR_MAX; o[4] = SCHAR_MIN;
      o[5] = UCHAR_MAX; o[6] = SHRT_MAX; o[7] = SHRT_MIN; o[8] = USHRT_MAX; o[9] = INT_MAX;
      o[10] = INT_MIN; o[11] = UINT_MAX; o[12] = LONG_MAX; o[13] = LONG_MIN;
      u[0] = ULONG_MAX;
      f[0] = FLT_MAX; f[1] = FLT_MIN; f[2] = FLT_EPSILON; f[3] = M_PI_F; f[4] = M_E_F;
      f[5] = M_SQRT2_F; f[6] = MAXFLOAT;
      d[0] = FLT_DIG; d[1] = FLT_MANT_DIG; d[2] = FLT_MAX_EXP; d[3] = FLT_MIN_EXP;
      d[4] = FLT_MAX_10_EXP; d[5] = FLT_MIN_10_EXP; d[6] = FLT_RADIX; d[7] = DBL_MANT_DIG;
      d[8] = (int)(M_PI * 1000000.0);
    }";
    let out = run(
        "limits",
        src,
        &["o=zeros:14", "u=zeros:1", "f=zeros:7", "d=zeros:9"],
    );
    assert!(
        out.contains(
            "o = 8 127 -128 127 -128 255 32767 -32768 65535 2147483647 -2147483648 4294967295 \
             9223372036854775807 -9223372036854775808\n"
        ),
        "{out}"
    );
    assert!(out.contains("u = 18446744073709551615\n"), "{out}");
    let f: Vec<f32> = out
        .lines()
        .find_map(|l| l.strip_prefix("f = "))
        .expect("f")
        .split(' ')
        .map(|x| x.parse().unwrap())
        .collect();
    let want = [
        f32::MAX,
        f32::MIN_POSITIVE,
        f32::EPSILON,
        std::f32::consts::PI,
        std::f32::consts::E,
        std::f32::consts::SQRT_2,
        f32::MAX,
    ];
    assert_eq!(f, want, "{out}");
    assert!(
        out.contains("d = 6 24 128 -125 38 -37 2 53 3141592\n"),
        "{out}"
    );
}

#[test]
fn integer_builtins_on_64_bit_types_saturate_and_widen() {
    let src = "kernel void k(global long *o, global ulong *u, global const long *in) {
      long a = in[0], b = in[1]; ulong x = (ulong)in[2];
      o[0] = add_sat(a, 5L); o[1] = sub_sat(b, 1L); o[2] = hadd(a, a); o[3] = rhadd(b, a);
      o[4] = hadd(b, -1L); o[5] = mad_sat(a, 2L, 0L); o[6] = mul_hi(b, 2L);
      o[7] = upsample(-1, 2u); o[8] = clz(0L); o[9] = popcount(b); o[10] = rotate(b, 1L);
      o[11] = mad_hi(a, a, 1L);
      u[0] = abs(b); u[1] = abs_diff(a, b); u[2] = add_sat(x, 3UL); u[3] = sub_sat(3UL, x);
      u[4] = mul_hi(x, x); u[5] = abs(a); u[6] = mad_sat(x, x, x); u[7] = clz(1UL);
    }";
    let out = run(
        "long",
        src,
        &[
            "o=zeros:12",
            "u=zeros:8",
            "in=9223372036854775807,-9223372036854775808,-1",
        ],
    );
    // Each from the definitions of §6.12.3 (LONG_MAX = 2^63 - 1, LONG_MIN = -2^63).
    assert!(
        out.contains(
            "o = 9223372036854775807 -9223372036854775808 9223372036854775807 0 \
             -4611686018427387905 9223372036854775807 -1 -4294967294 64 1 1 \
             4611686018427387904\n"
        ),
        "{out}"
    );
    assert!(
        out.contains(
            "u = 9223372036854775808 18446744073709551615 18446744073709551615 0 \
             18446744073709551614 9223372036854775807 18446744073709551615 63\n"
        ),
        "{out}"
    );
}

#[test]
fn integer_builtins_count_bits_at_the_operand_width() {
    let src = "kernel void k(global uchar *c, global short *s, global int *i, global uint *u) {
      c[0] = clz((uchar)1); c[1] = popcount((char)-1); c[2] = rotate((uchar)0x81, (uchar)1);
      c[3] = mul_hi((uchar)200, (uchar)200); c[4] = mad_sat((uchar)100, (uchar)3, (uchar)0);
      c[5] = clz((char)0);
      s[0] = upsample((char)-1, (uchar)0xfe); s[1] = mul_hi((short)-32768, (short)-32768);
      s[2] = rotate((short)1, (short)-1); s[3] = mad_sat((short)-300, (short)300, (short)0);
      s[4] = clz((ushort)1);
      i[0] = mul_hi(INT_MIN, INT_MIN); i[1] = clz(0); i[2] = upsample((short)-1, (ushort)2);
      i[3] = mad_hi(-1, 1, 5); i[4] = mad_sat(INT_MAX, 2, INT_MIN); i[5] = rotate(1, 33);
      u[0] = mul_hi(UINT_MAX, UINT_MAX); u[1] = mad_sat(UINT_MAX, 2u, 0u);
      u[2] = popcount(UINT_MAX); u[3] = upsample((ushort)1, (ushort)2);
    }";
    let out = run(
        "widths",
        src,
        &["c=zeros:6", "s=zeros:5", "i=zeros:6", "u=zeros:4"],
    );
    assert!(out.contains("c = 7 8 3 156 255 8\n"), "{out}");
    assert!(out.contains("s = -2 16384 -32768 -32768 15\n"), "{out}");
    assert!(
        out.contains("i = 1073741824 32 -65534 4 2147483646 2\n"),
        "{out}"
    );
    assert!(
        out.contains("u = 4294967294 4294967295 32 65538\n"),
        "{out}"
    );
}

#[test]
fn integer_builtins_apply_per_component_of_vectors() {
    let src = "kernel void k(global uchar *c, global short *s, global long *l, global uint *u) {
      uchar4 x = (uchar4)(0, 1, 128, 255);
      uchar4 z = clz(x);
      c[0] = z.x; c[1] = z.y; c[2] = z.z; c[3] = z.w;
      short2 w = upsample((char2)(-1, 1), (uchar2)(0xfe, 2));
      s[0] = w.x; s[1] = w.y;
      long2 a = add_sat((long2)(LONG_MAX, LONG_MIN), (long2)(1L, -1L));
      l[0] = a.x; l[1] = a.y;
      uint4 r = rotate((uint4)(1u, 2u, 0x80000000u, 3u), (uint4)(31u, 0u, 1u, 32u));
      u[0] = r.x; u[1] = r.y; u[2] = r.z; u[3] = r.w;
    }";
    let out = run(
        "vectors",
        src,
        &["c=zeros:4", "s=zeros:2", "l=zeros:2", "u=zeros:4"],
    );
    assert!(out.contains("c = 8 7 0 0\n"), "{out}");
    assert!(out.contains("s = -2 258\n"), "{out}");
    assert!(
        out.contains("l = 9223372036854775807 -9223372036854775808\n"),
        "{out}"
    );
    assert!(out.contains("u = 2147483648 2 1 3\n"), "{out}");
}

#[test]
fn integer_builtins_without_an_opencl_version_are_errors() {
    for (call, want) in [
        ("clz(1.5f)", "call to 'clz' is ambiguous"),
        ("(long)upsample(1L, 2UL)", "call to 'upsample' is ambiguous"),
    ] {
        let dir = common::tmp("int-errors");
        let file = dir.join("k.cl");
        let src = format!("kernel void k(global long *o) {{ o[0] = {call}; }}");
        std::fs::write(&file, src).unwrap();
        let o = ksim(&[
            "run",
            file.to_str().unwrap(),
            "--global",
            "1",
            "--local",
            "1",
            "--input",
            "o=zeros:1",
        ]);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        assert!(text(&o).contains(want), "{call}: {}", text(&o));
        assert!(text(&o).contains("k.cl:1:"), "a span: {}", text(&o));
    }
}

#[test]
fn powr_follows_its_special_cases() {
    // OpenCL C §7.5.1: powr(±0, y) is +inf for finite y < 0 and +0 for y > 0; powr(x, NaN)
    // and powr(NaN, y) are NaN (found against PoCL by tests/builtins_pocl.rs).
    let src = "kernel void k(global float *f) {
      f[0] = powr(-0.0f, -1.0f); f[1] = powr(-0.0f, 3.0f); f[2] = powr(1.0f, NAN);
      f[3] = powr(NAN, 0.0f); f[4] = powr(2.0f, 3.0f); f[5] = powr(0.0f, -INFINITY);
    }";
    let out = run("powr", src, &["f=zeros:6"]);
    let f: Vec<f32> = out
        .lines()
        .find_map(|l| l.strip_prefix("f = "))
        .expect("f")
        .split(' ')
        .map(|x| x.parse().unwrap_or(f32::NAN))
        .collect();
    assert!(f[0] == f32::INFINITY, "{out}");
    assert!(f[1] == 0.0 && f[1].is_sign_positive(), "{out}");
    assert!(f[2].is_nan() && f[3].is_nan(), "{out}");
    assert_eq!((f[4], f[5]), (8.0, f32::INFINITY), "{out}");
}
