//! Running the `ksim` binary from the whole-program tests: one place for the command line
//! every test file uses (no colour, a known working directory).
#![allow(dead_code)] // each test file uses a part

use std::path::Path;
use std::process::{Command, Output};

/// Runs `ksim ARGS` in the repository root.
pub fn ksim(args: &[&str]) -> Output {
    ksim_in(Path::new(env!("CARGO_MANIFEST_DIR")), args)
}

/// Runs `ksim ARGS` in `dir`.
pub fn ksim_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ksim"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .expect("ksim runs")
}

/// Standard output and standard error together, for messages and assertion context.
pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}
