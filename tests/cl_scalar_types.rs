//! OpenCL C's scalar types beyond int/uint/float/bool: `char`, `uchar`, `short`,
//! `ushort`, `long`, `ulong`, `double` (issue 9). Each kernel runs on both engines, which
//! must agree; expected values are C's, computed by hand from OpenCL C 1.2 §6.2 (integer
//! promotions, usual arithmetic conversions, conversions on assignment) and §6.3.

mod common;

use common::cl::{compile, Ran};
use common::{ksim, stdout, text};
use proptest::prelude::*;

/// Runs a one-work-item kernel on both engines (no fault allowed).
fn run1(src: &str, bufs: &[(&str, usize, &str)]) -> Ran {
    let r = common::cl::run(src, &[1], &[1], bufs, &[]);
    assert!(r.fault.is_none(), "{:?}\n{src}", r.fault);
    r
}

/// A one-work-item kernel storing into `__global long *out` (8 slots).
fn longs_of(body: &str) -> Vec<i64> {
    let src = format!("kernel void k(__global long *out) {{ {body} }}");
    run1(&src, &[("out", 8, "zeros")]).ints("out")
}

#[test]
fn narrow_types_truncate_on_store_and_promote_in_arithmetic() {
    let got = longs_of(
        "char c = 200; uchar uc = 200; short s = 40000; ushort us = 70000; \
         out[0] = c; out[1] = uc; out[2] = s; out[3] = us; \
         char a = 100, b = 100; out[4] = a + b; char d = a + b; out[5] = d; \
         uchar m = 255; m++; out[6] = m; out[7] = (uchar)(-1) >> 4;",
    );
    // 200 - 256, 200, 40000 - 65536, 70000 - 65536, 200 (int), -56, 0, 255 >> 4.
    assert_eq!(got, [-56, 200, -25536, 4464, 200, -56, 0, 15]);
    let got = longs_of(
        "short s = 32767; s += 1; out[0] = s; ushort u = 0; u -= 1; out[1] = u; \
         char c = -128; c = -c; out[2] = c; out[3] = -c; \
         uchar x = 250, y = 10; out[4] = x + y; out[5] = (uchar)(x + y); \
         char n = -1; out[6] = (uint)n; out[7] = (ushort)n;",
    );
    assert_eq!(got, [-32768, 65535, -128, 128, 260, 4, 4294967295, 65535]);
}

#[test]
fn long_and_ulong_wrap_at_64_bits() {
    let got = longs_of(
        "long x = 2147483647; x = x + 1; out[0] = x; int i = 2147483647; out[1] = i + 1; \
         out[2] = (long)i + 1; ulong u = 0; u = u - 1; out[3] = u; \
         long m = 9223372036854775807L; out[4] = m + 1; out[5] = 1L << 40; \
         out[6] = -7L / 2; out[7] = -7L % 2;",
    );
    assert_eq!(
        got,
        [
            2147483648,
            -2147483648,
            2147483648,
            -1,
            i64::MIN,
            1 << 40,
            -3,
            -1
        ]
    );
    let src = "kernel void k(__global ulong *u) { ulong a = 0; a = a - 1; u[0] = a; \
               u[1] = a / 3; u[2] = a >> 63; u[3] = 0xFFFFFFFFFFFFFFFFUL * 3; \
               long n = -1; u[4] = n; u[5] = (uint)n; }";
    let got = run1(src, &[("u", 6, "zeros")]).array("u");
    assert_eq!(
        got,
        [
            "18446744073709551615",
            "6148914691236517205",
            "1",
            "18446744073709551613",
            "18446744073709551615",
            "4294967295"
        ]
    );
}

#[test]
fn usual_arithmetic_conversions_pick_the_wider_type() {
    let got = longs_of(
        "uint big = 4000000000u; out[0] = big > -1; out[1] = big > -1L; \
         out[2] = 4000000000 > 0; out[3] = -1 < 0xFFFFFFFF; \
         out[4] = 5000000000; out[5] = sizeof(5000000000); \
         int i = -1; ulong z = 1; out[6] = i < z; out[7] = (long)i < (long)z;",
    );
    // uint vs int: int converts to uint (4294967295), so false; uint vs long: long holds
    // both, true. An unsuffixed decimal too large for int is a long; a hex one that fits
    // uint is a uint, so -1 converts to it. int vs ulong: int converts to ulong.
    assert_eq!(got, [0, 1, 1, 0, 5000000000, 8, 0, 1]);
}

#[test]
fn sizeof_each_type() {
    let got = longs_of(
        "out[0] = sizeof(char); out[1] = sizeof(uchar); out[2] = sizeof(short); \
         out[3] = sizeof(ushort); out[4] = sizeof(long); out[5] = sizeof(unsigned long); \
         out[6] = sizeof(double); char c = 0; out[7] = sizeof(c + c);",
    );
    assert_eq!(got, [1, 1, 2, 2, 8, 8, 8, 4]);
}

#[test]
fn doubles_compute_in_binary64_and_convert() {
    let src = "kernel void k(__global double *d, __global float *f, __global int *n) { \
               double x = 0.1; float y = 0.1f; d[0] = x; d[1] = y; d[2] = x * 3; \
               d[3] = 1e308 * 10; f[0] = x; f[1] = 0.1f * 3; f[2] = 0.1f * 3.0; \
               n[0] = (int)-2.7; n[1] = (int)2.7; n[2] = (int)1e10; n[3] = (long)1e10 / 3; \
               n[4] = x == y; n[5] = (float)x == y; }";
    let r = run1(
        src,
        &[("d", 4, "zeros"), ("f", 3, "zeros"), ("n", 6, "zeros")],
    );
    assert_eq!(
        r.array("d"),
        ["0.1", "0.10000000149011612", "0.30000000000000004", "inf"]
    );
    // float * int stays float (0.1f * 3 rounded in binary32); float * double computes in
    // double (0.30000000447034836), then rounds to float: both are the float nearest 0.3.
    assert_eq!(r.array("f"), ["0.1", "0.3", "0.3"]);
    // Toward zero; an out-of-range double saturates (ksim's documented choice for C's
    // undefined behaviour); the long 3333333333 keeps its low 32 bits in an int.
    assert_eq!(
        r.ints("n"),
        [-2, 2, 2147483647, 3333333333i64 as i32 as i64, 0, 1]
    );
}

#[test]
fn buffers_private_and_local_arrays_of_the_new_types() {
    let src = "kernel void k(__global char *c, __global short *s, __global double *d) { \
               int i = get_local_id(0); __local short t[4]; long p[2]; \
               t[i] = s[i] * 2; p[0] = c[i]; p[1] = (long)c[i] << 33; \
               barrier(CLK_LOCAL_MEM_FENCE); \
               s[i] = t[3 - i]; c[i] = p[1] >> 33; d[i] = c[i] + 0.5 * s[i]; }";
    let r = common::cl::run(
        src,
        &[1],
        &[4],
        &[
            ("c", 4, "-128,-1,0,127"),
            ("s", 4, "1,-2,3,20000"),
            ("d", 4, "zeros"),
        ],
        &[],
    );
    assert!(r.fault.is_none(), "{:?}", r.fault);
    // 20000 * 2 = 40000 truncates to short -25536.
    assert_eq!(r.ints("s"), [-25536, 6, -4, 2]);
    assert_eq!(r.ints("c"), [-128, -1, 0, 127]);
    assert_eq!(r.array("d"), ["-12896", "2", "-2", "128"]);
    assert!(r.races.is_empty());
}

#[test]
fn division_faults_are_reported_by_both_engines() {
    for body in [
        "long x = 1; int k = 63; out[0] = (x << k) / (x - 1);",
        "ulong x = 5; out[0] = x % (x - 5);",
    ] {
        let src = format!("kernel void k(__global long *out) {{ {body} }}");
        let r = common::cl::run(&src, &[1], &[1], &[("out", 1, "zeros")], &[]);
        let f = r.fault.unwrap_or_else(|| panic!("no fault: {body}"));
        assert!(f.contains("division by zero"), "{body}: {f}");
    }
}

/// OpenCL C §6.3.j: a shift uses the low log2(N) bits of its count, N the bits of the
/// left operand after integer promotion (of its elements for a vector): no count faults.
#[test]
fn shift_counts_are_masked_to_the_left_operand_width() {
    let got = longs_of(
        "long x = 1; int k = 63; out[0] = x << k; k = 64; out[1] = x << k; \
         int i = 1; k = 33; out[2] = i << k; i <<= k; out[3] = i; \
         char h = 1; h <<= 1; h <<= h; out[4] = h; \
         uint u = 0x80000000u; out[5] = u >> 63; \
         uchar2 v = (uchar2)(1, 3); v <<= (uchar2)(9, 8); out[6] = v.x; out[7] = v.y;",
    );
    assert_eq!(
        got,
        // 1 << 63; 64 & 63 = 0; 33 & 31 = 1 (twice); char: 2 << (2 & 31) = 8; 63 & 31 = 31;
        // uchar elements: 9 & 7 = 1, 8 & 7 = 0.
        vec![i64::MIN, 1, 2, 2, 8, 1, 2, 3]
    );
}

#[test]
fn atomics_on_long_and_ulong_elements() {
    let src = "#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable\n\
               kernel void k(__global long *acc, __global ulong *m) { \
               long v = get_global_id(0); atom_add(&acc[0], v << 40); atom_max(&acc[1], -v); \
               atom_inc(&m[0]); atom_min(&m[1], (ulong)v + 5000000000UL); \
               long old = atom_xchg(&acc[2], v); }";
    let r = common::cl::run(
        src,
        &[1],
        &[8],
        &[("acc", 3, "0,-100,0"), ("m", 2, "0,18446744073709551615")],
        &[],
    );
    assert!(r.fault.is_none(), "{:?}", r.fault);
    assert!(r.races.is_empty());
    // (0 + 1 + ... + 7) << 40; max(-100, 0, -1, ..., -7); 8 increments; the smallest sum.
    let acc = r.ints("acc");
    assert_eq!(acc[..2], [28 << 40, 0]);
    assert!((0..8).contains(&acc[2]), "the last exchange: {}", acc[2]);
    assert_eq!(r.array("m"), ["8", "5000000000"]);
}

#[test]
fn half_stays_a_clear_error() {
    let e = compile("kernel void k(__global int *out) { half h; out[0] = 1; }").unwrap_err();
    assert!(
        e.contains("declaring variable of type '__private half' is not allowed"),
        "{e}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Storing a long into a narrower buffer and reading it back widened is C's `(T)x`,
    /// for every narrow type: the low bits, sign- or zero-extended.
    #[test]
    fn narrowing_store_then_widening_load_is_the_c_conversion(x in any::<i64>()) {
        let src = "kernel void k(long x, __global char *c, __global uchar *uc, \
                   __global short *s, __global ushort *us, __global int *i, \
                   __global uint *u, __global long *out) { \
                   c[0] = x; uc[0] = x; s[0] = x; us[0] = x; i[0] = x; u[0] = x; \
                   out[0] = c[0]; out[1] = uc[0]; out[2] = s[0]; out[3] = us[0]; \
                   out[4] = i[0]; out[5] = u[0]; out[6] = (float)x; out[7] = (double)x; }";
        let xs = x.to_string();
        let r = common::cl::run(
            src,
            &[1],
            &[1],
            &[
                ("c", 1, "zeros"),
                ("uc", 1, "zeros"),
                ("s", 1, "zeros"),
                ("us", 1, "zeros"),
                ("i", 1, "zeros"),
                ("u", 1, "zeros"),
                ("out", 8, "zeros"),
            ],
            &[("x", &xs)],
        );
        prop_assert!(r.fault.is_none());
        prop_assert_eq!(
            r.ints("out"),
            vec![
                x as i8 as i64,
                x as u8 as i64,
                x as i16 as i64,
                x as u16 as i64,
                x as i32 as i64,
                x as u32 as i64,
                x as f32 as i64,
                x as f64 as i64,
            ]
        );
    }
}

/// `ksim gpu compare` of a char, a long and a double kernel on the OpenCL device (PoCL on
/// the test machines): the device's results match the simulator's bit for bit.
#[test]
fn gpu_compare_matches_on_char_long_and_double_kernels() {
    if gpu::device_or_skip("gpu compare of char, long and double kernels").is_none() {
        return;
    }
    for args in [
        vec![
            "tests/kernels/cl_types_char.cl",
            "--input",
            "c=-128,-1,0,1,2,50,100,127",
            "--input",
            "u=zeros:8",
            "--input",
            "s=zeros:8",
        ],
        vec![
            "tests/kernels/cl_types_long.cl",
            "--input",
            "l=-9223372036854775808,-1,0,1,2,4611686018427387904,123456789012,9223372036854775807",
            "--input",
            "u=iota:8",
        ],
        vec![
            "tests/kernels/cl_types_double.cl",
            "--input",
            "d=0.5,-1.25,3,1e10,-7,0.1,2.5,100",
            "--input",
            "f=zeros:8",
            "--input",
            "n=zeros:8",
        ],
    ] {
        let mut full = vec!["gpu", "compare"];
        full.extend(&args[..1]);
        full.extend(["--global", "8", "--local", "4"]);
        full.extend(&args[1..]);
        let o = ksim(&full);
        assert!(o.status.success(), "{}", text(&o));
        assert!(stdout(&o).contains("match"), "{}", text(&o));
    }
}
