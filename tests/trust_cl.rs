//! Issue 25, the OpenCL C front end: values that were untrue (saturating built-ins on small
//! types, `*&v[i]` on vector buffers, character escapes, the types of vector comparisons,
//! `#if` arithmetic), crashes on deep or huge input, and small refusals of valid C. Every
//! test runs the `ksim` command on a kernel file, so that it holds whatever front end
//! reads the file; expected values are Oclgrind's (FINDINGS.md of the red-team round).

mod common;
use common::{ksim, text, tmp};
use std::path::PathBuf;

/// Writes `src` as `NAME.cl` in a fresh directory.
fn kernel(name: &str, src: &str) -> PathBuf {
    let f = tmp(&format!("trust-cl-{name}")).join(format!("{name}.cl"));
    std::fs::write(&f, src).expect("write the kernel");
    f
}

/// Runs kernel `src` on one work-item with an `int` buffer `out` of `n` zeros (and `extra`
/// options); the values of `out` it prints.
fn out(name: &str, src: &str, n: usize, extra: &[&str]) -> Vec<i64> {
    let f = kernel(name, src);
    let zeros = format!("out=zeros:{n}");
    let mut args = vec![
        "run",
        f.to_str().unwrap(),
        "--local",
        "1",
        "--input",
        &zeros,
    ];
    args.extend(extra);
    let o = ksim(&args);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    let line = (stdout.lines())
        .find_map(|l| l.strip_prefix("out = "))
        .unwrap_or_else(|| panic!("no `out = ` line: {}", text(&o)));
    line.split_whitespace()
        .map(|v| v.parse().expect("an integer"))
        .collect()
}

#[test]
fn saturating_and_halving_built_ins_on_char_and_short_keep_their_type() {
    let src = "
        kernel void k(global int *out) {
            out[0] = add_sat((char)127, (char)127);
            out[1] = sub_sat((char)-128, (char)1);
            out[2] = add_sat((uchar)200, (uchar)100);
            out[3] = sub_sat((uchar)1, (uchar)2);
            out[4] = add_sat((short)30000, (short)30000);
            out[5] = sub_sat((short)-30000, (short)30000);
            out[6] = add_sat((ushort)60000, (ushort)60000);
            out[7] = sub_sat((ushort)1, (ushort)60000);
            out[8] = hadd((char)127, (char)127);
            out[9] = rhadd((uchar)255, (uchar)254);
            out[10] = abs_diff((char)-128, (char)127);
            out[11] = clamp((char)100, (char)-5, (char)5);
            out[12] = sizeof(add_sat((char)1, (char)1));
            out[13] = sizeof(abs_diff((short)1, (short)1));
            out[14] = abs((char)-128);
            out[15] = sizeof(hadd((uchar)1, (uchar)1));
            char4 v = add_sat((char4)(100, -100, 1, 0), (char4)(100, -100, 1, 0));
            out[16] = v.x; out[17] = v.y; out[18] = v.z;
            out[19] = add_sat(2147483647, 1);
        }";
    assert_eq!(
        out("sat", src, 20, &[]),
        [
            127, -128, 255, 0, 32767, -32768, 65535, 0, 127, 255, 255, 5, 1, 2, 128, 1, 127, -128,
            2, 2147483647
        ]
    );
}

#[test]
fn star_ampersand_of_a_vector_buffer_element_is_the_whole_vector() {
    let f = kernel(
        "vecaddr",
        "kernel void k(global int2 *d, global int *out) {
            int2 v = *&d[0];
            out[0] = v.x; out[1] = v.y;
            int2 w = *(&d[0] + 1);
            out[2] = w.x; out[3] = w.y;
        }",
    );
    let o = ksim(&[
        "run",
        f.to_str().unwrap(),
        "--local",
        "1",
        "--input",
        "d=iota:4",
        "--input",
        "out=zeros:4",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(text(&o).contains("out = 0 1 2 3"), "{}", text(&o));
}

#[test]
fn octal_and_hex_character_escapes_with_a_signed_char() {
    let src = r"
        kernel void k(global int *out) {
            out[0] = '\n';
            out[1] = '\x41';
            out[2] = '\101';
            out[3] = '\0';
            out[4] = '\\';
            out[5] = '\'';
            out[6] = '\xff';
            out[7] = '\377';
            out[8] = '\n' + '\x41' + '\101';
        #if '\x41' == 65 && '\xff' < 0
            out[9] = 1;
        #endif
        }";
    assert_eq!(
        out("chr", src, 10, &[]),
        [10, 65, 65, 0, 92, 39, -1, -1, 140, 1]
    );
}

#[test]
fn vector_comparisons_have_the_signed_type_of_their_operands_size() {
    let src = "
        kernel void k(global int *out) {
            out[0] = sizeof((char4)(1) == (char4)(1));
            out[1] = sizeof((short2)(1) < (short2)(2));
            long2 a = (long2)(1, 2);
            long2 r = a == (long2)(1, 3);
            out[2] = (int)r.x; out[3] = (int)r.y;
            out[4] = sizeof((double2)(1.0) < (double2)(2.0));
            char4 c = (char4)(1, 2, 3, 4) == (char4)(1, 0, 3, 0);
            out[5] = c.x; out[6] = c.y;
            short2 s = !(short2)(0, 5);
            out[7] = s.x; out[8] = s.y;
            char2 m = (uchar2)(200, 1) > (uchar2)(100);
            out[9] = m.x; out[10] = m.y; out[11] = any(m); out[12] = all(m);
            long2 l = (long2)(1, 0) && (long2)(1, 1);
            out[13] = l.x; out[14] = l.y;
            out[15] = sizeof((ulong2)(1) || (ulong2)(0));
            out[16] = sizeof(isnan((double2)(1.0)));
            out[17] = sizeof((uint4)(1) != (uint4)(0));
        }";
    assert_eq!(
        out("vcmp", src, 18, &[]),
        [4, 4, -1, 0, 16, -1, 0, -1, 0, -1, 0, 1, 0, -1, 0, 16, 16, 16]
    );
}

#[test]
fn if_computes_in_intmax_and_uintmax_and_short_circuits() {
    let src = "
        #if -1 > 0u
        #define A 1
        #endif
        #if (0u - 1) > 0 && 0xFFFFFFFFFFFFFFFF > 0 && (-1 / 2u) > 1000
        #define B 1
        #endif
        #if (1 ? -1 : 0u) > 0
        #define C 1
        #endif
        #if defined(N) && (1024 % N == 0)
        #error N divides 1024
        #else
        #define D 1
        #endif
        #if 0 && (1 / 0)
        #error not taken
        #endif
        #if (1 ? 2 : (1 / 0)) && (2 || 1 / 0) && (-1 >> 1) < 0 && -1 < 0
        #define E 1
        #endif
        kernel void k(global int *out) {
            out[0] = A; out[1] = B; out[2] = C; out[3] = D; out[4] = E;
        }";
    assert_eq!(out("ppif", src, 5, &[]), [1, 1, 1, 1, 1]);
    // With N defined, the second operand is evaluated.
    let f = kernel(
        "ppif0",
        "#if defined(N) && (1024 % N == 0)\n#endif\nkernel void k(global int *out) { out[0] = 1; }",
    );
    let o = ksim(&["check", f.to_str().unwrap(), "-D", "N=0"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("remainder by zero in preprocessor expression"),
        "{}",
        text(&o)
    );
}

/// `(open)^n 1 (close)^n` in `#if`, or `op` repeated `n` times between `1`s in an expression.
fn repeat(unit: &str, n: usize) -> String {
    vec![unit; n].concat()
}

#[test]
fn deep_and_long_expressions_are_accepted_or_refused_never_a_crash() {
    // Flat chains of 3,000 terms, as real code has: accepted, with the right value.
    for (name, expr, value) in [
        ("sum", format!("1{}", repeat("+1", 2999)), 3000),
        ("and", format!("1{}", repeat("&&1", 2999)), 1),
        ("comma", format!("(1{})", repeat(",1", 2999)), 1),
    ] {
        let src = format!("kernel void k(global int *out) {{ out[0] = {expr}; }}");
        assert_eq!(out(name, &src, 1, &[]), [value], "{name}");
    }
    // A 1,000-deep chain of helper calls.
    let mut src = String::from("int f0(int x) { return x + 1; }\n");
    for i in 1..1000 {
        src += &format!("int f{i}(int x) {{ return f{}(x) + 1; }}\n", i - 1);
    }
    src += "kernel void k(global int *out) { out[0] = f999(0); }";
    assert_eq!(out("helpers", &src, 1, &[]), [1000]);
    // The same sum as a -D macro; 30,000 terms are refused with a message.
    let src = "kernel void k(global int *out) { out[0] = V; }";
    let v = format!("V=1{}", repeat("+1", 2999));
    assert_eq!(out("dsum", src, 1, &["-D", &v]), [3000]);
    let f = kernel("dsum30k", src);
    let v = format!("V=1{}", repeat("+1", 29_999));
    let o = ksim(&["check", f.to_str().unwrap(), "-D", &v]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    // clang's tree of it does not come within the time ksim gives clang.
    assert!(text(&o).contains("ksim gave up"), "{}", text(&o));
    // `#if` with 100,000 `!`, accepted; 30,000 parentheses, refused with a message.
    let src = format!(
        "#if {}1\n#define X 1\n#endif\nkernel void k(global int *out) {{ out[0] = X; }}",
        repeat("!!", 50_000)
    );
    assert_eq!(out("ifnot", &src, 1, &[]), [1]);
    for (name, cond) in [
        (
            "ifparen",
            format!("{}1{}", repeat("(", 30_000), repeat(")", 30_000)),
        ),
        (
            "ifcond",
            format!("{}1{}", repeat("1?", 100_000), repeat(":1", 100_000)),
        ),
    ] {
        let f = kernel(
            name,
            &format!("#if {cond}\n#endif\nkernel void k(global int *out) {{ out[0] = 1; }}"),
        );
        let o = ksim(&["check", f.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{name}: {}", text(&o));
        assert!(
            text(&o).contains("#if expression nested more than"),
            "{name}: {}",
            text(&o)
        );
    }
}

#[test]
fn a_macro_that_expands_to_millions_of_tokens_is_refused() {
    let a0 = format!("1{}", repeat("+1", 20_000));
    let a1 = repeat(" A0", 100);
    let a2 = repeat(" A1", 100);
    let src = format!(
        "#define A0 {a0}\n#define A1 {a1}\n#define A2 {a2}\nkernel void k(global int *out) {{ out[0] = A2; }}"
    );
    let f = kernel("bomb", &src);
    let o = ksim(&["check", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("ksim gave up"), "{}", text(&o));
}

#[test]
fn include_of_a_macro_and_of_a_non_file_line_signbit_and_hex_floats() {
    let dir = tmp("trust-cl-misc");
    std::fs::write(dir.join("x.h"), "#define FROM_H 7\n").unwrap();
    let src = "#define H \"x.h\"
#include H
kernel void k(global int *out, global float *f) {
    out[0] = FROM_H;
    out[1] = __LINE__;
    out[2] = signbit(-0.0f) + 2 * signbit(1.5f) + 4 * signbit(-2.0);
    f[0] = 0x1p-3f;
    f[1] = 0x1.8p1;
    f[2] = 0xAp0f;
}
";
    let k = dir.join("misc.cl");
    std::fs::write(&k, src).unwrap();
    let o = ksim(&[
        "run",
        k.to_str().unwrap(),
        "--local",
        "1",
        "--input",
        "out=zeros:3",
        "--input",
        "f=zeros:3",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(text(&o).contains("out = 7 5 5"), "{}", text(&o));
    assert!(text(&o).contains("f   = 0.125 3 10"), "{}", text(&o));
    for target in ["/dev/zero", "/tmp"] {
        let f = kernel(
            "incdev",
            &format!("#include \"{target}\"\nkernel void k(global int *out) {{ out[0] = 1; }}"),
        );
        let o = ksim(&["check", f.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        // A device is larger than the loader reads; clang finds no file at a folder.
        let why = ["it is larger than the limit", "' file not found"];
        assert!(why.iter().any(|w| text(&o).contains(w)), "{}", text(&o));
    }
}
