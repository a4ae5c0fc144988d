//! Running the `ksim` binary from the whole-program tests: one place for the command line
//! every test file uses (no colour, a known working directory).
#![allow(dead_code)] // each test file uses a part

use std::path::Path;
use std::process::{Command, Output};

pub mod cl;

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

/// Whether Debian's clang-15 (the C front end's) is installed.
pub fn has_clang() -> bool {
    Command::new("clang-15").arg("--version").output().is_ok()
}

/// Standard output and standard error together, for messages and assertion context.
pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// [`text`] without `run`'s last line, `engine: ...`: what two engines print is compared
/// without the line that names the engine.
pub fn text_without_engine(o: &Output) -> String {
    (text(o).lines())
        .filter(|l| !l.starts_with("engine: "))
        .map(|l| format!("{l}\n"))
        .collect()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The repository root.
pub fn root() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A fresh, empty directory for this test process (for reports and written files).
pub fn tmp(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("ksim-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("tmp dir");
    d
}

/// Standard output parsed as JSON (the output in the panic message when it is not).
pub fn json(o: &Output) -> serde_json::Value {
    serde_json::from_str(&stdout(o)).unwrap_or_else(|e| panic!("not JSON ({e}): {}", text(o)))
}

/// The last line of standard output.
pub fn last_line(o: &Output) -> String {
    stdout(o).lines().last().unwrap_or("").to_string()
}

/// Debian's chromium for the page tests (`KSIM_CHROMIUM` names another), or `None` (the
/// test skips) where it is missing and not required (`CI=true`, `KSIM_REQUIRE_BROWSER=1`).
pub fn chromium() -> Option<std::path::PathBuf> {
    let found = std::env::var_os("KSIM_CHROMIUM")
        .map(std::path::PathBuf::from)
        .or_else(|| {
            ["chromium", "chromium-browser"].iter().find_map(|name| {
                std::env::var_os("PATH").and_then(|paths| {
                    std::env::split_paths(&paths)
                        .map(|d| d.join(name))
                        .find(|p| p.is_file())
                })
            })
        });
    let required = std::env::var("CI").as_deref() == Ok("true")
        || std::env::var("KSIM_REQUIRE_BROWSER").as_deref() == Ok("1");
    if found.is_none() {
        assert!(
            !required,
            "chromium is required (CI=true or KSIM_REQUIRE_BROWSER=1): run scripts/install-chromium.sh"
        );
        eprintln!(
            "skipped: chromium not found (run scripts/install-chromium.sh, or set KSIM_CHROMIUM)"
        );
    }
    found
}
