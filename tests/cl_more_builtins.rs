//! OpenCL C built-ins of issue 26 item 4 on the clang front end:
//! `vloadN`/`vstoreN` (N = 2, 3, 4, 8, 16), the `half` loads and stores with every rounding
//! mode, and `bitselect`. Each kernel runs on both engines, which must print the same
//! buffers; results are checked against values computed here from the specification (for
//! `half`, by searching all halves for the one each rounding mode picks), and against PoCL
//! with `gpu compare` where an OpenCL device is there. Skipped without Debian's `clang-15`.

mod common;
use common::{has_clang, ksim_in};

/// The buffers `ksim run` prints (`NAME ... = v0 v1 ...`), by name.
fn buffers(out: &str) -> Vec<(String, Vec<String>)> {
    out.lines()
        .filter_map(|l| {
            let (head, values) = l.split_once(" = ")?;
            let name = head.split_whitespace().next()?.to_string();
            Some((
                name,
                values.split_whitespace().map(str::to_string).collect(),
            ))
        })
        .collect()
}

/// Runs `src` (written to `k.cl` in a fresh folder named after `test`) with `launch` on
/// both engines; they must succeed and print the same buffers, which are returned.
fn run_both(test: &str, src: &str, launch: &[&str]) -> Vec<(String, Vec<String>)> {
    let d = common::tmp(test);
    std::fs::write(d.join("k.cl"), src).expect("write kernel");
    let mut outs = Vec::new();
    for engine in ["reference", "fast"] {
        let mut args = vec!["run", "k.cl", "--engine", engine];
        args.extend(launch);
        let o = ksim_in(&d, &args);
        assert!(o.status.success(), "{engine}:\n{src}\n{}", common::text(&o));
        outs.push(buffers(&common::stdout(&o)));
    }
    assert_eq!(outs[0], outs[1], "the engines differ");
    outs.remove(0)
}

fn buffer(bufs: &[(String, Vec<String>)], name: &str) -> Vec<String> {
    bufs.iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("no buffer {name} in {bufs:?}"))
        .1
        .clone()
}

fn strings<T: ToString>(v: impl IntoIterator<Item = T>) -> Vec<String> {
    v.into_iter().map(|x| x.to_string()).collect()
}

/// `gpu compare` of `src` with `launch` matches the device, if there is one.
fn matches_device(test: &str, src: &str, launch: &[&str]) {
    let d = common::tmp(test);
    std::fs::write(d.join("k.cl"), src).expect("write kernel");
    if !ksim_in(&d, &["gpu", "devices"]).status.success() {
        if std::env::var("KSIM_REQUIRE_OPENCL").is_ok_and(|v| v == "1") {
            panic!("{test}: KSIM_REQUIRE_OPENCL=1 but no OpenCL device");
        }
        eprintln!("{test}: skipped: no OpenCL device");
        return;
    }
    let mut args = vec!["gpu", "compare", "k.cl", "--limit", "20"];
    args.extend(launch);
    let o = ksim_in(&d, &args);
    assert!(
        o.status.success() && common::stdout(&o).starts_with("match"),
        "{}",
        common::text(&o)
    );
}

const VLOAD: &str = "
kernel void k(global const int *in, global int *o2, global int *o3, global int *o4,
              global int *o8, global int *o16, global int *op) {
  size_t i = get_global_id(0);
  vstore2(vload2(i, in) + 1, i, o2);
  vstore3(vload3(i, in) * 2, i, o3);
  vstore4(vload4(i, in).wzyx, i, o4);
  vstore8(vload8(i, in), i, o8);
  vstore16(vload16(i, in) - 1, i, o16);
  vstore2(vload2(1, in + 4 * i), 0, op + 2 * i);
}
";

const VLOAD_LAUNCH: [&str; 18] = [
    "--global",
    "2",
    "--local",
    "2",
    "--input",
    "in=iota:32",
    "--input",
    "o2=zeros:4",
    "--input",
    "o3=zeros:6",
    "--input",
    "o4=zeros:8",
    "--input",
    "o8=zeros:16",
    "--input",
    "o16=zeros:32",
    "--input",
    "op=zeros:4",
];

#[test]
fn vload_and_vstore_move_n_elements_at_n_times_the_offset() {
    if !has_clang() {
        return;
    }
    let b = run_both("vload", VLOAD, &VLOAD_LAUNCH);
    assert_eq!(buffer(&b, "o2"), strings((0..4).map(|k| k + 1)));
    // vload3/vstore3 read and write 3 elements, packed (not a float3's 4 slots).
    assert_eq!(buffer(&b, "o3"), strings((0..6).map(|k| 2 * k)));
    assert_eq!(
        buffer(&b, "o4"),
        strings((0..2).flat_map(|i| [3, 2, 1, 0].map(|c| 4 * i + c)))
    );
    assert_eq!(buffer(&b, "o8"), strings(0..16));
    assert_eq!(buffer(&b, "o16"), strings((0..32).map(|k| k - 1)));
    // Through pointer arithmetic: in + 4i, element 1 of its int2s.
    assert_eq!(buffer(&b, "op"), strings([2, 3, 6, 7]));
}

#[test]
fn vload_and_vstore_match_the_device() {
    if has_clang() {
        matches_device("vload-device", VLOAD, &VLOAD_LAUNCH);
    }
}

#[test]
fn vstore_evaluates_the_whole_vector_before_storing() {
    if !has_clang() {
        return;
    }
    let src = "
kernel void k(global float *a, global float *out) {
  vstore4(vload4(0, a).wzyx, 0, a);
  float p[6] = {1, 2, 3, 4, 5, 6};
  vstore3(vload3(1, p).zyx, 0, p);
  local float t[4];
  vstore4((float4)(1.5f, 2.5f, 3.5f, 4.5f), 0, t);
  float2 u = vload2(1, t);
  for (int j = 0; j < 6; j++) out[j] = p[j];
  out[6] = u.x;
  out[7] = u.y;
}
";
    let b = run_both(
        "vstore-order",
        src,
        &[
            "--global",
            "1",
            "--local",
            "1",
            "--input",
            "a=iota:4",
            "--input",
            "out=zeros:8",
        ],
    );
    assert_eq!(buffer(&b, "a"), strings([3, 2, 1, 0]));
    assert_eq!(
        buffer(&b, "out"),
        strings(["6", "5", "4", "4", "5", "6", "3.5", "4.5"])
    );
}

#[test]
fn a_vload_argument_with_side_effects_is_refused_at_its_span() {
    if !has_clang() {
        return;
    }
    let d = common::tmp("vload-effects");
    std::fs::write(
        d.join("k.cl"),
        "kernel void k(global int *a, global int *o) {\n  int i = 0;\n  \
         vstore4(vload4(i++, a), 0, o);\n}\n",
    )
    .unwrap();
    let o = ksim_in(&d, &["check", "k.cl"]);
    let t = common::text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(
        t.contains("not supported yet") && t.contains("side effects"),
        "{t}"
    );
    assert!(t.contains("k.cl:3:18"), "{t}");
}

const BITSELECT: &str = "
kernel void k(global int *oi, global uchar *ou, global float *of, global int *ov,
              global long *ol) {
  oi[0] = bitselect(0x0f0f0f0f, 0x12345678, (int)0xff00ff00);
  ou[0] = bitselect((uchar)0xaa, (uchar)0x55, (uchar)0xf0);
  of[0] = bitselect(1.0f, -2.0f, as_float(0x80000000u));
  of[1] = bitselect(1.0f, 2.0f, as_float(0x7fffffffu));
  vstore4(bitselect((int4)(0), (int4)(-1), (int4)(1, 2, 3, 4)), 0, ov);
  ol[0] = bitselect(0L, -1L, (long)0x7000000000000001L);
}
";

const BITSELECT_LAUNCH: [&str; 14] = [
    "--global",
    "1",
    "--local",
    "1",
    "--input",
    "oi=zeros:1",
    "--input",
    "ou=zeros:1",
    "--input",
    "of=zeros:2",
    "--input",
    "ov=zeros:4",
    "--input",
    "ol=zeros:1",
];

#[test]
fn bitselect_takes_each_bit_from_b_where_c_is_set() {
    if !has_clang() {
        return;
    }
    let b = run_both("bitselect", BITSELECT, &BITSELECT_LAUNCH);
    assert_eq!(buffer(&b, "oi"), strings([0x120f560f]));
    assert_eq!(buffer(&b, "ou"), strings([0x5a]));
    // The sign bit of -2 with the rest of 1.0; every bit but the sign of 2.0.
    assert_eq!(buffer(&b, "of"), strings(["-1", "2"]));
    assert_eq!(buffer(&b, "ov"), strings([1, 2, 3, 4]));
    assert_eq!(buffer(&b, "ol"), strings([0x7000000000000001i64]));
}

#[test]
fn bitselect_matches_the_device() {
    if has_clang() {
        matches_device("bitselect-device", BITSELECT, &BITSELECT_LAUNCH);
    }
}

/// The `f32` a half's bits denote, from the definition of binary16.
fn half_value(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let (e, m) = (i32::from((h >> 10) & 0x1f), f64::from(h & 0x3ff));
    sign * match e {
        0 => m * 2f64.powi(-24),
        31 if m == 0.0 => f64::INFINITY,
        31 => f64::NAN,
        _ => (1024.0 + m) * 2f64.powi(e - 25),
    }
}

#[test]
fn vload_half_converts_every_half_exactly() {
    if !has_clang() {
        return;
    }
    let src = "
kernel void k(global const half *h, global uint *out) {
  for (uint j = 0; j < 256; j++) {
    uint i = get_global_id(0) * 256 + j;
    out[i] = as_uint(vload_half(i, h));
  }
}
";
    let b = run_both(
        "vload-half",
        src,
        &[
            "--global",
            "256",
            "--local",
            "64",
            "--input",
            "h=iota:65536",
            "--input",
            "out=zeros:65536",
        ],
    );
    let out = buffer(&b, "out");
    for (h, got) in out.iter().enumerate() {
        let bits: u32 = got.parse().expect("a uint");
        let want = half_value(h as u16);
        if want.is_nan() {
            // A NaN keeps its sign and payload (shifted into the float's mantissa).
            let nan = ((h as u32 & 0x8000) << 16) | 0x7f80_0000 | ((h as u32 & 0x3ff) << 13);
            assert_eq!(bits, nan, "half {h:#06x}");
        } else {
            assert_eq!(f32::from_bits(bits), want as f32, "half {h:#06x}");
            assert_eq!(bits >> 31, h as u32 >> 15, "the sign of half {h:#06x}");
        }
    }
}

/// The rounding modes of `vstore_half`.
const MODES: [&str; 5] = ["", "_rte", "_rtz", "_rtp", "_rtn"];

/// The half `vstore_half{mode}` stores for `x`, by search over every half: to nearest
/// (ties to the even one; 65520 and more is infinity), toward zero, up or down; the sign
/// of `x` kept (also for a zero result). `None` for a NaN.
fn to_half(x: f32, mode: &str) -> Option<u16> {
    if x.is_nan() {
        return None;
    }
    let sign = if x.is_sign_negative() { 0x8000u16 } else { 0 };
    let a = f64::from(x.abs());
    // Magnitudes: 0..=0x7c00 (0x7c00 is infinity), increasing.
    let mags: Vec<u16> = (0..=0x7c00).collect();
    let below = mags[mags.partition_point(|&h| half_value(h) <= a) - 1];
    let above = mags[mags.partition_point(|&h| half_value(h) < a).min(0x7c00)];
    let away = matches!((mode, sign != 0), ("_rtp", false) | ("_rtn", true));
    let mag = match mode {
        "" | "_rte" if a >= 65520.0 => 0x7c00,
        "" | "_rte" => {
            let (lo, hi) = (a - half_value(below), half_value(above) - a);
            if lo < hi || (lo == hi && below.is_multiple_of(2)) {
                below
            } else {
                above
            }
        }
        _ if away => above,
        _ => below,
    };
    Some(sign | mag)
}

/// Edge and ordinary `float` operands for the conversions to `half`, as bit patterns.
fn half_operands() -> Vec<u32> {
    let mut v: Vec<f32> = vec![
        0.0,
        -0.0,
        1.0,
        -1.0,
        1.0 / 3.0,
        -1.0 / 3.0,
        std::f32::consts::PI,
        65504.0,
        65505.0,
        65519.99,
        65520.0,
        -65520.0,
        65536.0,
        1e10,
        -1e10,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        f32::MAX,
        f32::MIN_POSITIVE,
        f32::from_bits(1),
        1.0 + 2f32.powi(-11),
        1.0 + 3.0 * 2f32.powi(-11),
        -(1.0 + 2f32.powi(-11)),
        2f32.powi(-14),
        2f32.powi(-14) - 2f32.powi(-25),
        2f32.powi(-24),
        2f32.powi(-25),
        -2f32.powi(-25),
        1.5 * 2f32.powi(-25),
        2.5 * 2f32.powi(-24),
        3.5 * 2f32.powi(-24),
        -3.5 * 2f32.powi(-24),
        1e-10,
        -1e-10,
    ];
    // A spread of ordinary values of both signs.
    v.extend((0..200).map(|k| f32::from_bits(0x3000_0000 + k * 0x0007_3d2b)));
    v.extend((0..100).map(|k| -f32::from_bits(0x3300_0000 + k * 0x0005_1f37)));
    v.into_iter().map(f32::to_bits).collect()
}

fn vstore_half_kernel() -> String {
    let params: Vec<String> = MODES
        .iter()
        .map(|m| format!("global half *h{}", m.trim_start_matches('_')))
        .collect();
    let stores: Vec<String> = MODES
        .iter()
        .map(|m| format!("vstore_half{m}(f, i, h{});", m.trim_start_matches('_')))
        .collect();
    format!(
        "kernel void k(global const uint *x, {}, uint n) {{\n  \
         for (uint i = 0; i < n; i++) {{\n    float f = as_float(x[i]);\n    {}\n  }}\n}}\n",
        params.join(", "),
        stores.join("\n    ")
    )
}

fn vstore_half_launch(x: &[u32]) -> Vec<String> {
    let mut launch: Vec<String> = ["--global", "1", "--local", "1"].map(String::from).to_vec();
    launch.extend(["--input".into(), format!("x={}", strings(x).join(","))]);
    for m in MODES {
        launch.extend([
            "--input".into(),
            format!("h{}=zeros:{}", m.trim_start_matches('_'), x.len()),
        ]);
    }
    launch.extend(["--arg".into(), format!("n={}", x.len())]);
    launch
}

#[test]
fn vstore_half_rounds_as_each_mode_says() {
    if !has_clang() {
        return;
    }
    let x = half_operands();
    let launch = vstore_half_launch(&x);
    let launch: Vec<&str> = launch.iter().map(String::as_str).collect();
    let b = run_both("vstore-half", &vstore_half_kernel(), &launch);
    let mut wrong = Vec::new();
    for m in MODES {
        let got = buffer(&b, &format!("h{}", m.trim_start_matches('_')));
        for (i, &bits) in x.iter().enumerate() {
            let f = f32::from_bits(bits);
            let h: u16 = got[i].parse().expect("a ushort");
            match to_half(f, m) {
                Some(want) if want != h => {
                    wrong.push(format!("vstore_half{m}({f:e}): {h:#06x}, want {want:#06x}"))
                }
                // A NaN stays a NaN.
                None if h & 0x7c00 != 0x7c00 || h & 0x3ff == 0 => {
                    wrong.push(format!("vstore_half{m}(NaN): {h:#06x}"))
                }
                _ => {}
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn vstore_half_matches_the_device() {
    if !has_clang() {
        return;
    }
    // The device may keep another NaN payload: NaNs are checked above.
    let x: Vec<u32> = half_operands()
        .into_iter()
        .filter(|&b| !f32::from_bits(b).is_nan())
        .collect();
    let launch = vstore_half_launch(&x);
    let launch: Vec<&str> = launch.iter().map(String::as_str).collect();
    matches_device("vstore-half-device", &vstore_half_kernel(), &launch);
}

const HALF_VECTORS: &str = "
kernel void k(global const half *h, global half *o4, global half *oa3, global float *f3) {
  size_t i = get_global_id(0);
  vstore_half4(vload_half4(i, h) * 2.0f, i, o4);
  float3 v = vloada_half3(i, h);
  vstorea_half3_rtz(v, i, oa3);
  vstore3(vload_half3(i, h), i, f3);
}
";

#[test]
fn half_vectors_load_and_store_every_component() {
    if !has_clang() {
        return;
    }
    // Halves 1.0, 1.5, 2.0, ..., 4.5 (0x3c00 + k * 0x200 for k < 8).
    let h: Vec<u16> = (0..8).map(|k| 0x3c00 + k * 0x200).collect();
    let launch = [
        "--global".to_string(),
        "2".into(),
        "--local".into(),
        "2".into(),
        "--input".into(),
        format!("h={}", strings(&h).join(",")),
        "--input".into(),
        "o4=zeros:8".into(),
        "--input".into(),
        "oa3=zeros:8".into(),
        "--input".into(),
        "f3=zeros:6".into(),
    ];
    let launch: Vec<&str> = launch.iter().map(String::as_str).collect();
    let b = run_both("half-vectors", HALF_VECTORS, &launch);
    let value = |k: u16| half_value(h[k as usize]);
    // Doubling a half adds one to its exponent: 0x400 to its bits.
    assert_eq!(buffer(&b, "o4"), strings(h.iter().map(|x| x + 0x400)));
    // vloada_half3/vstorea_half3 step by 4 halves and leave the fourth alone.
    assert_eq!(
        buffer(&b, "oa3"),
        strings([h[0], h[1], h[2], 0, h[4], h[5], h[6], 0])
    );
    // vload_half3 steps by 3.
    assert_eq!(buffer(&b, "f3"), strings((0..6).map(value)));
    matches_device("half-vectors-device", HALF_VECTORS, &launch);
}

#[test]
fn half_values_themselves_are_refused() {
    if !has_clang() {
        return;
    }
    let d = common::tmp("half-values");
    std::fs::write(
        d.join("k.cl"),
        "#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n\
         kernel void k(global half *h) {\n  h[0] = h[1] + h[2];\n}\n",
    )
    .unwrap();
    let o = ksim_in(&d, &["check", "k.cl"]);
    let t = common::text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(t.contains("`half`"), "{t}");
}
