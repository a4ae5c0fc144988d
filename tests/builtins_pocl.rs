//! OpenCL C's integer built-ins (§6.12.3) and math built-ins (§6.12.2) against PoCL, over
//! edge-case operands: for each integer type, one kernel applies every built-in to a table
//! of operands (the type's minimum and maximum, 0, ±1, powers of two and their neighbours)
//! read from buffers, one result buffer per built-in; `ksim gpu compare` runs the kernel as
//! written on the OpenCL device and in the simulator and compares every element. The
//! simulator's two engines must agree too (`ksim run`). The math kernel's results must be
//! within the specification's ULP bounds (§7.4) of the device's. Skipped without an OpenCL
//! platform unless `KSIM_REQUIRE_OPENCL=1`.

mod common;

use common::{ksim, text};
use std::path::Path;

/// An integer type: its name, width and signedness.
#[derive(Clone, Copy)]
struct IntTy {
    name: &'static str,
    bits: u32,
    signed: bool,
}

const TYPES: [IntTy; 8] = [
    IntTy::new("char", 8, true),
    IntTy::new("uchar", 8, false),
    IntTy::new("short", 16, true),
    IntTy::new("ushort", 16, false),
    IntTy::new("int", 32, true),
    IntTy::new("uint", 32, false),
    IntTy::new("long", 64, true),
    IntTy::new("ulong", 64, false),
];

impl IntTy {
    const fn new(name: &'static str, bits: u32, signed: bool) -> IntTy {
        IntTy { name, bits, signed }
    }

    fn range(self) -> (i128, i128) {
        if self.signed {
            (-(1i128 << (self.bits - 1)), (1i128 << (self.bits - 1)) - 1)
        } else {
            (0, (1i128 << self.bits) - 1)
        }
    }

    /// The unsigned type of the same width (`abs`'s and `abs_diff`'s result).
    fn unsigned(self) -> &'static str {
        match self.bits {
            8 => "uchar",
            16 => "ushort",
            32 => "uint",
            _ => "ulong",
        }
    }

    /// `upsample`'s result type, if the type has one twice as wide.
    fn wide(self) -> Option<&'static str> {
        Some(match self.name {
            "char" => "short",
            "uchar" => "ushort",
            "short" => "int",
            "ushort" => "uint",
            "int" => "long",
            "uint" => "ulong",
            _ => return None,
        })
    }

    /// The edge-case operands: min, min + 1, -2 .. 2, powers of two (negated too for a
    /// signed type) and their neighbours, max - 1, max.
    fn edges(self) -> Vec<i128> {
        let (lo, hi) = self.range();
        let mut v = vec![lo, lo + 1, -2, -1, 0, 1, 2, hi - 1, hi];
        for k in [3, self.bits / 2 - 1, self.bits / 2, self.bits - 2] {
            let p = 1i128 << k;
            v.extend([p - 1, p, p + 1, -p, -p + 1]);
        }
        v.retain(|x| (lo..=hi).contains(x));
        v.sort();
        v.dedup();
        v
    }
}

/// A buffer's `--input` spec: its values, comma-separated.
fn list(v: &[i128]) -> String {
    v.iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// The kernel for type `t` over `n2` operand pairs `(a, b)` and `n3` triples `(p, q, s)`,
/// with `n24` triples `(m1, m2, m3)` of 24-bit operands for `mul24`/`mad24`: each
/// built-in writes its own buffer `r_NAME`. Returns the source and the result buffers
/// with their lengths.
fn kernel(t: IntTy, n2: usize, n3: usize, n24: usize) -> (String, Vec<(String, usize)>) {
    let (ty, uty) = (t.name, t.unsigned());
    let mut params = vec![
        format!("global const {ty} *a"),
        format!("global const {ty} *b"),
        format!("global const {ty} *p"),
        format!("global const {ty} *q"),
        format!("global const {ty} *s"),
    ];
    let mut body2 = Vec::new();
    let mut body3 = Vec::new();
    let mut outs = Vec::new();
    let mut out = |name: &str, rty: &str, n: usize, params: &mut Vec<String>| {
        params.push(format!("global {rty} *r_{name}"));
        outs.push((format!("r_{name}"), n));
    };
    for f in ["abs", "clz", "popcount"] {
        let rty = if f == "abs" { uty } else { ty };
        out(f, rty, n2, &mut params);
        body2.push(format!("r_{f}[i] = {f}(a[i]);"));
    }
    for f in [
        "abs_diff", "add_sat", "sub_sat", "hadd", "rhadd", "max", "min", "mul_hi", "rotate",
    ] {
        let rty = if f == "abs_diff" { uty } else { ty };
        out(f, rty, n2, &mut params);
        body2.push(format!("r_{f}[i] = {f}(a[i], b[i]);"));
    }
    if let Some(wide) = t.wide() {
        out("upsample", wide, n2, &mut params);
        body2.push(format!("r_upsample[i] = upsample(a[i], ({uty})b[i]);"));
    }
    for f in ["mad_hi", "mad_sat"] {
        out(f, ty, n3, &mut params);
        body3.push(format!("r_{f}[i] = {f}(p[i], q[i], s[i]);"));
    }
    out("clamp", ty, n3, &mut params);
    body3.push("r_clamp[i] = clamp(p[i], min(q[i], s[i]), max(q[i], s[i]));".into());
    let mut body24 = Vec::new();
    if t.bits == 32 {
        params.extend([
            format!("global const {ty} *m1"),
            format!("global const {ty} *m2"),
            format!("global const {ty} *m3"),
        ]);
        out("mul24", ty, n24, &mut params);
        out("mad24", ty, n24, &mut params);
        body24.push("r_mul24[i] = mul24(m1[i], m2[i]);".to_string());
        body24.push("r_mad24[i] = mad24(m1[i], m2[i], m3[i]);".to_string());
    }
    let lp = |n: usize, body: &[String]| {
        if body.is_empty() {
            String::new()
        } else {
            format!(
                "  for (int i = 0; i < {n}; i++) {{\n    {}\n  }}\n",
                body.join("\n    ")
            )
        }
    };
    let src = format!(
        "kernel void k({}) {{\n{}{}{}}}\n",
        params.join(", "),
        lp(n2, &body2),
        lp(n3, &body3),
        lp(n24, &body24)
    );
    (src, outs)
}

/// The launch options of the kernel for `t`: its operand buffers and result buffers.
fn launch(t: IntTy) -> (String, Vec<String>) {
    let e = t.edges();
    let (a, b): (Vec<i128>, Vec<i128>) = e
        .iter()
        .flat_map(|&x| e.iter().map(move |&y| (x, y)))
        .unzip();
    // Triples from every third edge operand (the ends kept).
    let few: Vec<i128> = e
        .iter()
        .enumerate()
        .filter(|(i, _)| i % 3 == 0 || *i == e.len() - 1)
        .map(|(_, &x)| x)
        .collect();
    let mut triples = (Vec::new(), Vec::new(), Vec::new());
    for &x in &few {
        for &y in &few {
            for &z in &few {
                triples.0.push(x);
                triples.1.push(y);
                triples.2.push(z);
            }
        }
    }
    // mul24/mad24 are defined for operands of 24 bits only.
    let (lo24, hi24) = if t.signed {
        (-(1 << 23), (1 << 23) - 1)
    } else {
        (0, (1 << 24) - 1)
    };
    let e24: Vec<i128> = [lo24, lo24 + 1, -1, 0, 1, 2, 4095, 4096, hi24 - 1, hi24]
        .into_iter()
        .filter(|x| (lo24..=hi24).contains(x))
        .collect();
    let mut m = (Vec::new(), Vec::new(), Vec::new());
    for &x in &e24 {
        for &y in &e24 {
            m.0.push(x);
            m.1.push(y);
            m.2.push(e24[(m.2.len() * 7) % e24.len()]);
        }
    }
    let (src, outs) = kernel(t, a.len(), triples.0.len(), m.0.len());
    let mut args = vec!["--global".into(), "1".into(), "--local".into(), "1".into()];
    let mut input = |name: &str, spec: String| {
        args.push("--input".into());
        args.push(format!("{name}={spec}"));
    };
    input("a", list(&a));
    input("b", list(&b));
    input("p", list(&triples.0));
    input("q", list(&triples.1));
    input("s", list(&triples.2));
    if t.bits == 32 {
        input("m1", list(&m.0));
        input("m2", list(&m.1));
        input("m3", list(&m.2));
    }
    for (name, n) in outs {
        input(&name, format!("zeros:{n}"));
    }
    (src, args)
}

fn run(file: &Path, cmd: &[&str], args: &[String]) -> std::process::Output {
    let mut all: Vec<&str> = cmd.to_vec();
    all.push(file.to_str().expect("utf-8 path"));
    all.extend(args.iter().map(String::as_str));
    ksim(&all)
}

/// Both engines agree on every integer built-in over every type's edge operands.
#[test]
fn integer_builtins_agree_between_the_engines() {
    let dir = common::tmp("builtins-engines");
    for t in TYPES {
        let (src, args) = launch(t);
        let file = dir.join(format!("{}.cl", t.name));
        std::fs::write(&file, &src).expect("write kernel");
        let r = run(&file, &["run", "--engine", "reference"], &args);
        assert!(r.status.success(), "{}:\n{src}\n{}", t.name, text(&r));
        let f = run(&file, &["run", "--engine", "fast"], &args);
        assert!(f.status.success(), "{}: {}", t.name, text(&f));
        let body = |o: &std::process::Output| {
            common::stdout(o)
                .lines()
                .filter(|l| l.contains(" = "))
                .map(str::to_string)
                .collect::<Vec<_>>()
        };
        assert_eq!(body(&r), body(&f), "{}", t.name);
    }
}

/// Every integer built-in on every integer type equals PoCL's result on every operand.
#[test]
fn integer_builtins_match_pocl() {
    if !gpu_available("integer_builtins_match_pocl") {
        return;
    }
    let dir = common::tmp("builtins-pocl");
    let mut failures = Vec::new();
    for t in TYPES {
        let (src, args) = launch(t);
        let results = result_elements(&args);
        let file = dir.join(format!("{}.cl", t.name));
        std::fs::write(&file, &src).expect("write kernel");
        let mut args = args;
        args.extend(["--limit".into(), "40".into()]);
        let o = run(&file, &["gpu", "compare"], &args);
        if !(o.status.success() && common::stdout(&o).starts_with("match")) {
            failures.push(format!("{}:\n{}", t.name, text(&o)));
            continue;
        }
        // Every result element was compared (the operand buffers are compared too).
        let compared: usize = common::stdout(&o)
            .trim_start_matches("match (")
            .split(' ')
            .next()
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        assert!(compared >= results, "{}: {}", t.name, text(&o));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The number of result elements a launch's `--input r_NAME=zeros:N` options give.
fn result_elements(args: &[String]) -> usize {
    args.iter()
        .filter_map(|a| a.strip_prefix("r_"))
        .filter_map(|a| a.split(":").nth(1)?.parse::<usize>().ok())
        .sum()
}

/// Whether an OpenCL device is there (a failure under `KSIM_REQUIRE_OPENCL=1` if not).
fn gpu_available(test: &str) -> bool {
    let o = ksim(&["gpu", "devices"]);
    if o.status.success() {
        return true;
    }
    if std::env::var("KSIM_REQUIRE_OPENCL").is_ok_and(|v| v == "1") {
        panic!(
            "{test}: KSIM_REQUIRE_OPENCL=1 but no OpenCL device: {}",
            text(&o)
        );
    }
    eprintln!("{test}: skipped: no OpenCL device ({})", text(&o).trim());
    false
}

/// The math built-ins ksim runs, with their error bounds in ULP (OpenCL C 1.2 §7.4, the
/// full-profile table for `float`; 0 for the exact functions).
const MATH1: [(&str, u32); 29] = [
    ("sqrt", 3),
    ("rsqrt", 2),
    ("cbrt", 2),
    ("exp", 3),
    ("exp2", 3),
    ("exp10", 3),
    ("expm1", 3),
    ("log", 3),
    ("log2", 3),
    ("log10", 3),
    ("log1p", 2),
    ("sin", 4),
    ("cos", 4),
    ("tan", 5),
    ("asin", 4),
    ("acos", 4),
    ("atan", 5),
    ("sinh", 4),
    ("cosh", 4),
    ("tanh", 5),
    ("asinh", 4),
    ("acosh", 4),
    ("atanh", 5),
    ("fabs", 0),
    ("floor", 0),
    ("ceil", 0),
    ("trunc", 0),
    ("round", 0),
    ("rint", 0),
];

const MATH2: [(&str, u32); 9] = [
    ("pow", 16),
    ("powr", 16),
    ("atan2", 6),
    ("hypot", 4),
    ("fmod", 0),
    ("fdim", 0),
    ("fmin", 0),
    ("fmax", 0),
    ("copysign", 0),
];

/// Ordinary and edge `float` operands, as bit patterns: ±0, ±1, ±inf, NaN, the largest and
/// smallest normal, a subnormal, and values around the functions' interesting points.
fn float_operands() -> Vec<u32> {
    let mut v: Vec<u32> = [
        0.0f32,
        -0.0,
        1.0,
        -1.0,
        0.5,
        -0.5,
        2.0,
        3.0,
        10.0,
        100.0,
        -3.7,
        0.001,
        1e10,
        -1e10,
        0.99,
        1.5,
        1e-20,
        88.0,
        -88.0,
        std::f32::consts::PI,
        1e6,
        12345.678,
    ]
    .iter()
    .map(|f| f.to_bits())
    .collect();
    v.extend([
        f32::INFINITY.to_bits(),
        f32::NEG_INFINITY.to_bits(),
        f32::NAN.to_bits(),
        f32::MAX.to_bits(),
        f32::MIN_POSITIVE.to_bits(),
        1,
    ]);
    v
}

/// Distance in ULP between two `float` bit patterns (0 for two NaNs: their payloads may
/// differ), `None` when exactly one is NaN.
fn ulps(a: u32, b: u32) -> Option<u32> {
    let (x, y) = (f32::from_bits(a), f32::from_bits(b));
    match (x.is_nan(), y.is_nan()) {
        (true, true) => return Some(0),
        (false, false) => {}
        _ => return None,
    }
    // Map the bit patterns to a line where adjacent floats are adjacent integers.
    let key = |u: u32| -> i64 {
        if u >> 31 == 1 {
            -((u & 0x7fff_ffff) as i64)
        } else {
            u as i64
        }
    };
    Some((key(a) - key(b)).unsigned_abs() as u32)
}

/// Every math built-in ksim runs is within its ULP bound of PoCL's result on every
/// operand (the results are compared as bit patterns, `as_uint`, so that the bound is
/// checked exactly rather than with `gpu compare`'s tolerance).
#[test]
fn math_builtins_within_ulp_bounds_of_pocl() {
    if !gpu_available("math_builtins_within_ulp_bounds_of_pocl") {
        return;
    }
    let x = float_operands();
    let (a, b): (Vec<u32>, Vec<u32>) = x
        .iter()
        .flat_map(|&p| x.iter().map(move |&q| (p, q)))
        .unzip();
    let mut params = vec![
        "global const uint *x".to_string(),
        "global const uint *a".into(),
        "global const uint *b".into(),
    ];
    let mut body1 = Vec::new();
    let mut body2 = Vec::new();
    let mut args: Vec<String> = ["--global", "1", "--local", "1", "--limit", "100000"]
        .map(String::from)
        .to_vec();
    let n = |v: &[u32]| {
        v.iter()
            .map(|u| u.to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    args.extend(["--input".into(), format!("x={}", n(&x))]);
    args.extend(["--input".into(), format!("a={}", n(&a))]);
    args.extend(["--input".into(), format!("b={}", n(&b))]);
    for (f, _) in MATH1 {
        params.push(format!("global uint *r_{f}"));
        body1.push(format!("r_{f}[i] = as_uint({f}(as_float(x[i])));"));
        args.extend(["--input".into(), format!("r_{f}=zeros:{}", x.len())]);
    }
    for (f, _) in MATH2 {
        params.push(format!("global uint *r_{f}"));
        body2.push(format!(
            "r_{f}[i] = as_uint({f}(as_float(a[i]), as_float(b[i])));"
        ));
        args.extend(["--input".into(), format!("r_{f}=zeros:{}", a.len())]);
    }
    let src = format!(
        "kernel void k({}) {{\n  for (int i = 0; i < {}; i++) {{\n    {}\n  }}\n  \
         for (int i = 0; i < {}; i++) {{\n    {}\n  }}\n}}\n",
        params.join(", "),
        x.len(),
        body1.join("\n    "),
        a.len(),
        body2.join("\n    ")
    );
    let dir = common::tmp("builtins-math");
    let file = dir.join("math.cl");
    std::fs::write(&file, &src).expect("write kernel");
    let o = run(&file, &["gpu", "compare"], &args);
    let out = common::stdout(&o);
    assert!(
        o.status.code() == Some(0) || out.contains("MISMATCH"),
        "{}",
        text(&o)
    );
    // "mismatch: r_sin[3]: simulated 1065353216, device 1065353217"
    let bound = |f: &str| {
        MATH1
            .iter()
            .chain(&MATH2)
            .find(|(g, _)| *g == f)
            .map(|(_, b)| *b)
    };
    let mut beyond = Vec::new();
    for line in out.lines().filter_map(|l| l.strip_prefix("mismatch: ")) {
        let parse = || -> Option<(String, u32, u32, u32)> {
            let (place, rest) = line.split_once(": simulated ")?;
            let (sim, dev) = rest.split_once(", device ")?;
            let f = place.strip_prefix("r_")?.split('[').next()?.to_string();
            let (s, d) = (sim.trim().parse().ok()?, dev.trim().parse().ok()?);
            Some((f.clone(), s, d, bound(&f)?))
        };
        let Some((f, s, d, max)) = parse() else {
            beyond.push(format!("{line} (unreadable)"));
            continue;
        };
        let operand = line
            .split('[')
            .nth(1)
            .and_then(|i| i.split(']').next()?.parse::<usize>().ok());
        if ulps(s, d).is_none_or(|u| u > max) {
            beyond.push(format!(
                "{f}: operand index {operand:?}: ksim {} ({s:#x}), PoCL {} ({d:#x}), bound {max} ULP",
                f32::from_bits(s),
                f32::from_bits(d)
            ));
        }
    }
    assert!(beyond.is_empty(), "{}", beyond.join("\n"));
}

/// ksim's own OpenCL C for the core's integer functions (`gpu emit`: the device's function
/// of the same name on operands cast to their type) computes what the simulator does.
#[test]
fn emitted_integer_functions_match_pocl() {
    if !gpu_available("emitted_integer_functions_match_pocl") {
        return;
    }
    let dir = common::tmp("builtins-emit");
    let file = dir.join("k.ksim");
    std::fs::write(
        &file,
        "kernel k(global int a[n], global int out[n]) launch(groups = 1, local_size = n) {\n  \
         out[tid] = popcount(a[tid]) + clz(a[tid]) * 100 + mul_hi(a[tid], 2147483647)\n    \
         + rotate(a[tid], tid) + mad_hi(a[tid], a[tid], 7) + mad_sat(a[tid], 3, tid);\n}\n",
    )
    .expect("write kernel");
    let o = ksim(&[
        "gpu",
        "compare",
        file.to_str().expect("utf-8"),
        "-D",
        "n=64",
        "--input",
        "a=random:1",
    ]);
    assert!(
        o.status.success() && common::stdout(&o).starts_with("match"),
        "{}",
        text(&o)
    );
}
