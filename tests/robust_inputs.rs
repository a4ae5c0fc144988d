//! Whole-program tests for issue 13 ("never crash, never hang, never an untrue all clear"),
//! the input side: builtin typing, checked array sizes, memory budget, faithful JSON floats,
//! reserved names in the OpenCL emitter, long `else if` chains, and the launch options.

use std::path::PathBuf;
use std::process::{Command, Output};
mod common;
use common::{ksim, stdout, text};

/// Writes a kernel (or any input file) into this test binary's scratch directory.
fn file(name: &str, text: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("robust_inputs");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// Runs ksim and asserts the exit code.
fn expect(args: &[&str], code: i32) -> Output {
    let o = ksim(args);
    assert_eq!(o.status.code(), Some(code), "ksim {args:?}:\n{}", text(&o));
    o
}

// ----- item 2: builtins keep unsigned arguments unsigned -----

#[test]
fn log2_of_a_large_uint_is_31_on_both_engines() {
    let k = file(
        "log2_uint.ksim",
        "kernel k(global uint out[3]) launch(groups = 1, local_size = 1)\n\
         {\n    out[0] = log2(3000000000u);\n    uint x = 4294967295u;\n    out[1] = log2(x);\n    \
         out[2] = min(x, 3000000000u);\n}\n",
    );
    let k = k.to_str().unwrap();
    for engine in ["reference", "fast"] {
        let o = expect(&["run", k, "--engine", engine], 0);
        assert!(
            stdout(&o).contains("out = 31 31 3000000000"),
            "{engine}: {}",
            text(&o)
        );
    }
    let o = expect(&["gpu", "emit", k], 0);
    assert!(stdout(&o).contains("ks_log2u(3000000000u)"), "{}", text(&o));
}

// ----- item 3: size arithmetic is checked -----

#[test]
fn an_array_size_that_overflows_int_is_an_error_naming_the_array() {
    let k = file(
        "square.ksim",
        "kernel k(local int a[n * n]) launch(groups = 1, local_size = 1) { a[0] = 1; }\n",
    );
    let o = expect(&["run", k.to_str().unwrap(), "-D", "n=65536"], 2);
    let t = text(&o);
    assert!(t.contains("array `a`"), "{t}");
    assert!(t.contains("`n * n`"), "{t}");
    assert!(
        t.contains("65536 * 65536 = 4294967296 overflows `int`"),
        "{t}"
    );
    let k = file(
        "cube.ksim",
        "kernel k(local int a[n * n * n]) launch(groups = 1, local_size = 1) { a[0] = 1; }\n",
    );
    let o = expect(&["run", k.to_str().unwrap(), "-D", "n=1626"], 2);
    assert!(
        text(&o).contains("2643876 * 1626 = 4298942376 overflows"),
        "{}",
        text(&o)
    );
    // In range, the same kernel runs.
    expect(&["run", k.to_str().unwrap(), "-D", "n=3"], 0);
    // So do launch defaults: `local_size = n << 31` does not wrap to 0 threads.
    let k = file(
        "shifted.ksim",
        "kernel k(global int a[4]) launch(groups = 1, local_size = n << 31) { a[0] = 1; }\n",
    );
    let o = expect(&["run", k.to_str().unwrap(), "-D", "n=2"], 2);
    assert!(text(&o).contains("the declared local size"), "{}", text(&o));
}

// ----- item 9: launches beyond the memory budget are refused up front -----

#[test]
fn a_launch_beyond_the_memory_limit_is_refused_with_the_estimate() {
    // 2^28 elements (within the element limit) would take about 28 GiB.
    let k = file(
        "huge.ksim",
        "kernel k(global int a[n], global int b[n]) launch(groups = 1, local_size = 1) { a[0] = 1; }\n",
    );
    for cmd in ["run", "races", "trace"] {
        let o = expect(&[cmd, k.to_str().unwrap(), "-D", "n=134217728"], 2);
        let t = text(&o);
        assert!(t.contains("needs about 28.0 GiB of memory"), "{cmd}: {t}");
        assert!(t.contains("268435456 array elements"), "{cmd}: {t}");
        assert!(t.contains("limit of 2.0 GiB"), "{cmd}: {t}");
    }
    let o = expect(
        &["gpu", "emit", k.to_str().unwrap(), "-D", "n=134217728"],
        2,
    );
    assert!(text(&o).contains("limit of 2.0 GiB"), "{}", text(&o));
}

// ----- item 11: @FILE inputs are read with a bound -----

#[test]
fn an_input_file_larger_than_its_array_needs_is_refused_unread() {
    let k = file(
        "four.ksim",
        "kernel k(global int a[4]) launch(groups = 1, local_size = 1) { a[0] = 1; }\n",
    );
    let k = k.to_str().unwrap();
    let big = file("big_input.txt", &"1\n".repeat(600_000)); // 1.2 MB
    let o = expect(&["run", k, "--input", &format!("a=@{}", big.display())], 2);
    assert!(
        text(&o).contains("larger than the limit of 1048576 bytes"),
        "{}",
        text(&o)
    );
    let o = expect(&["run", k, "--input", "a=@/dev/zero"], 2);
    assert!(text(&o).contains("larger than the limit"), "{}", text(&o));
    let ok = file("ok_input.txt", "1\n2\n3\n4\n");
    let o = expect(&["run", k, "--input", &format!("a=@{}", ok.display())], 0);
    assert!(stdout(&o).contains("a = 1 2 3 4"), "{}", text(&o));
}

// ----- smaller inconsistencies of the launch options -----

#[test]
fn malformed_and_out_of_range_numbers_are_errors_for_every_type() {
    let k = file(
        "scalars.ksim",
        "kernel k(global int a[n], global uint u[2], global float f[2], global T t[2], int s) \
         launch(groups = 1, local_size = 1) { int x = s; }\n",
    );
    let k = k.to_str().unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec!["run", k, "-D", "n=2", "-D", "s=1"];
        args.extend_from_slice(extra);
        ksim(&args)
    };
    for (d, msg) in [
        ("s=--8", "`--8` is not an int"),
        ("s=-0x-8", "`-0x-8` is not an int"),
        ("s=2147483648", "out of range for an int"),
        ("s=0xFFFFFFFF", "out of range for an int"),
    ] {
        let mut args = vec!["run", k, "-D", "n=2", "-D", d];
        args.retain(|a| *a != "s=1");
        let o = ksim(&args);
        assert_eq!(o.status.code(), Some(2), "{d}: {}", text(&o));
        assert!(text(&o).contains(msg), "{d}: {}", text(&o));
    }
    for (input, msg) in [
        ("a=1,--8", "`--8` is not an int"),
        ("a=1,2147483648", "out of range for an int"),
        ("u=1,-1", "out of range for a uint"),
        ("u=1,4294967296", "out of range for a uint"),
        ("t=1,4294967295", "out of range for an int"),
        ("f=1,1e40", "out of range for a 32-bit float"),
    ] {
        let o = run(&["--input", input]);
        assert_eq!(o.status.code(), Some(2), "{input}: {}", text(&o));
        assert!(text(&o).contains(msg), "{input}: {}", text(&o));
    }
    // The largest values of each type, hexadecimal, and spelt-out infinities are accepted.
    let o = run(&[
        "--input",
        "a=-2147483648,0x7fffffff",
        "--input",
        "u=0xFFFFFFFF,4294967295",
        "--input",
        "f=-inf,3.4e38",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let t = stdout(&o);
    assert!(t.contains("a = -2147483648 2147483647"), "{t}");
    assert!(t.contains("u = 4294967295 4294967295"), "{t}");
    assert!(
        t.contains("f = -inf 340000000000000000000000000000000000000"),
        "{t}"
    );
}

#[test]
fn a_duplicate_input_is_an_error_like_a_duplicate_define() {
    let k = file(
        "dup.ksim",
        "kernel k(global int a[2]) launch(groups = 1, local_size = 1) { a[0] = 1; }\n",
    );
    let o = expect(
        &[
            "run",
            k.to_str().unwrap(),
            "--input",
            "a=1,2",
            "--input",
            "a=3,4",
        ],
        2,
    );
    assert!(
        text(&o).contains("--input a is given more than once"),
        "{}",
        text(&o)
    );
}

#[test]
fn the_shift_fault_names_the_real_range() {
    let k = file(
        "shift.ksim",
        "kernel k(global uint a[2]) launch(groups = 1, local_size = 1) { uint c = 32u; a[0] = 1u << c; }\n",
    );
    let o = expect(&["run", k.to_str().unwrap()], 1);
    assert!(
        text(&o).contains("shift count 32 outside 0 to 31"),
        "{}",
        text(&o)
    );
}

// ----- item 4: NaN and infinities survive --json -----

#[test]
fn json_writes_nan_and_infinities_as_strings_that_read_back() {
    let k = file(
        "nan.ksim",
        "kernel k(global float out[4]) launch(groups = 1, local_size = 1)\n\
         {\n    float z = 0.0;\n    out[0] = z / z;\n    out[1] = 1.0 / z;\n    out[2] = -1.0 / z;\n    \
         out[3] = 0.5;\n}\n",
    );
    let k = k.to_str().unwrap();
    let o = expect(&["run", k, "--json"], 0);
    let json: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let out = &json["arrays"]["out"][0];
    assert_eq!(
        out,
        &serde_json::json!(["NaN", "inf", "-inf", 0.5]),
        "{out}"
    );
    // The same list is a valid `--input @FILE`.
    let saved = file("nan_out.json", &out.to_string());
    let o = expect(
        &[
            "run",
            k,
            "--input",
            &format!("out=@{}", saved.display()),
            "--show",
            "out",
        ],
        0,
    );
    assert!(
        stdout(&o).contains("out = NaN inf -inf 0.5"),
        "{}",
        text(&o)
    );
}

// ----- item 5: the emitter renames reserved names and always ends -----

/// Runs ksim, killing it after `secs` seconds (a hang is a failure, not a stuck test).
fn ksim_within(args: &[&str], secs: u64) -> Output {
    use std::time::{Duration, Instant};
    let mut child = Command::new(env!("CARGO_BIN_EXE_ksim"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("NO_COLOR", "1")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("ksim starts");
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(secs) {
            child.kill().unwrap();
            panic!("ksim {args:?} did not finish within {secs} s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn gpu_emit_renames_every_reserved_prefix() {
    for p in ["get_", "ks_", "as_", "convert_", "cl_", "__", "CLK_"] {
        let src = format!(
            "kernel {p}k(global int {p}a[{p}n], int {p}s) launch(groups = 1, local_size = 1)\n\
             {{\n    int {p}v = {p}s;\n    {p}a[0] = {p}v;\n}}\n"
        );
        let k = file(&format!("reserved_{p}.ksim"), &src);
        let (n, s) = (format!("{p}n=4"), format!("{p}s=1"));
        let o = ksim_within(
            &["gpu", "emit", k.to_str().unwrap(), "-D", &n, "-D", &s],
            20,
        );
        assert_eq!(o.status.code(), Some(0), "{p}: {}", text(&o));
        let c = stdout(&o);
        for what in ["k", "a", "v"] {
            assert!(c.contains(&format!("k_{p}{what}")), "{p}{what}:\n{c}");
        }
        assert!(c.contains(&format!("void k_{p}k(")), "{p}:\n{c}");
        // The scalar and size parameters are constants of the kernel.
        assert!(c.contains(&format!("k_{p}n = 4")), "{p}n:\n{c}");
        assert!(c.contains(&format!("k_{p}s = 1")), "{p}s:\n{c}");
    }
}

// ----- item 7: long `else if` chains -----

#[test]
fn a_chain_of_15000_else_ifs_checks_runs_and_prints_linearly() {
    let n = 15_000;
    let mut src = String::from(
        "kernel chain(global int out[4]) launch(groups = 1, local_size = 4)\n{\n    int x = tid + 14996;\n",
    );
    for i in 0..n {
        let kw = if i == 0 { "if" } else { "else if" };
        src.push_str(&format!("    {kw} (x == {i}) out[tid] = {i};\n"));
    }
    src.push_str("    else out[tid] = -1;\n}\n");
    let k = file("chain15000.ksim", &src);
    let k = k.to_str().unwrap();
    expect(&["check", k], 0);
    // Linear output: the core form and the OpenCL C are a few times the source, not the
    // square of the chain (72 MB for 109 KB once).
    for args in [vec!["check", "--core", k], vec!["gpu", "emit", k]] {
        let o = expect(&args, 0);
        assert!(
            o.stdout.len() < 3 * src.len(),
            "{args:?}: {} bytes",
            o.stdout.len()
        );
    }
    for engine in ["reference", "fast"] {
        let o = expect(&["run", k, "--engine", engine], 0);
        assert!(
            stdout(&o).contains("out = 14996 14997 14998 14999")
                && stdout(&o).contains("canonical, 60002 steps"),
            "{engine}: {}",
            text(&o)
        );
    }
    // The core form prints the chain flat.
    let o = expect(&["check", "--core", k], 0);
    assert!(
        stdout(&o).contains("    } else if (x == 14999) {\n"),
        "{}",
        &stdout(&o)[..2000]
    );
}
