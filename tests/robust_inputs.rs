//! Whole-program tests for issue 13 ("never crash, never hang, never an untrue all clear"),
//! the input side: builtin typing, checked array sizes, memory budget, faithful JSON floats,
//! reserved names in the OpenCL emitter, long `else if` chains, and the launch options.

use std::path::PathBuf;
use std::process::{Command, Output};

/// Writes a kernel (or any input file) into this test binary's scratch directory.
fn file(name: &str, text: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("robust_inputs");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn ksim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ksim"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("NO_COLOR", "1")
        .output()
        .expect("ksim runs")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
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
