//! The README's tour is the program's real output: every `$ ksim ...` line of its
//! ```` ```console ```` blocks runs (through `sh`, in a scratch directory that sees the
//! repository's `examples/` and `tests/`, the blocks in order so that a report written by
//! one command is there for the next), and what it prints must be what the README shows.
//!
//! A block may show standard output and standard error in the order they were written, or
//! standard output alone (the README then says what goes to standard error). Timings are
//! compared as `#` (`0.109 s`, `2116 executions/s`, `ratio 2922x`), trailing spaces are
//! ignored, and a line `...` stands for any number of lines. Left out: `ksim gpu` and
//! `ksim plot` (they need a device or write images) and lines that are not `ksim` commands.

use std::path::Path;
use std::process::Command;

/// One `$ ksim ...` line of the README and the lines shown after it.
struct Shown {
    command: String,
    output: Vec<String>,
}

fn console_commands(readme: &str) -> Vec<Shown> {
    let mut shown: Vec<Shown> = Vec::new();
    let mut in_console = false;
    let mut current: Option<Shown> = None;
    for line in readme.lines() {
        if line.starts_with("```") {
            shown.extend(current.take());
            in_console = line.starts_with("```console");
        } else if !in_console {
        } else if let Some(cmd) = line.strip_prefix("$ ") {
            shown.extend(current.take());
            current = Some(Shown {
                command: cmd.to_string(),
                output: Vec::new(),
            });
        } else if let Some(c) = current.as_mut() {
            c.output.push(line.to_string());
        }
    }
    shown
}

/// `line` with its timings as `#` and no trailing spaces.
fn normalise(line: &str) -> String {
    let line = line.trim_end();
    let mut out = String::new();
    let mut rest = line;
    while let Some(start) = rest.find(|c: char| c.is_ascii_digit()) {
        let len = rest[start..]
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len() - start);
        let after = &rest[start + len..];
        let unit = after.strip_prefix(" s").is_some_and(|a| {
            a.is_empty() || a.starts_with([')', ',', ' ']) // a time in seconds
        }) || after.starts_with(" executions/s")
            || rest[..start].ends_with("ratio ") && after.starts_with('x');
        out.push_str(&rest[..start]);
        out.push_str(if unit { "#" } else { &rest[start..start + len] });
        rest = after;
    }
    out.push_str(rest);
    out
}

fn normalised(lines: &[String]) -> Vec<String> {
    let mut v: Vec<String> = lines.iter().map(|l| normalise(l)).collect();
    while v.last().is_some_and(|l| l.is_empty()) {
        v.pop();
    }
    v
}

/// Whether `got` is `shown`, where a shown line `...` stands for any number of lines.
fn matches(shown: &[String], got: &[String]) -> bool {
    match shown.split_first() {
        None => got.is_empty(),
        Some((first, rest)) if first.trim() == "..." => {
            (0..=got.len()).any(|skip| matches(rest, &got[skip..]))
        }
        Some((first, rest)) => got.first() == Some(first) && matches(rest, &got[1..]),
    }
}

/// The command's output lines: both streams in the order written, or standard output alone.
fn run(dir: &Path, command: &str, with_stderr: bool) -> Vec<String> {
    let bin = Path::new(env!("CARGO_BIN_EXE_ksim")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let redirect = if with_stderr { "2>&1" } else { "2>/dev/null" };
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!("{{ {command} ; }} {redirect}"))
        .current_dir(dir)
        .env("PATH", path)
        .env("NO_COLOR", "1")
        .output()
        .expect("sh runs");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn every_console_block_of_the_readme_is_what_ksim_prints() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    for sub in ["examples", "tests"] {
        std::os::unix::fs::symlink(root.join(sub), dir.path().join(sub)).unwrap();
    }
    let mut checked = 0;
    let mut wrong = Vec::new();
    for s in console_commands(&readme) {
        let c = &s.command;
        if !c.starts_with("ksim ") || c.starts_with("ksim gpu") || c.starts_with("ksim plot") {
            continue;
        }
        checked += 1;
        let shown = normalised(&s.output);
        let both = normalised(&run(dir.path(), c, true));
        if matches(&shown, &both) || matches(&shown, &normalised(&run(dir.path(), c, false))) {
            continue;
        }
        wrong.push(format!(
            "$ {c}\n--- README shows:\n{}\n--- ksim prints:\n{}",
            shown.join("\n"),
            both.join("\n")
        ));
    }
    assert!(checked >= 15, "only {checked} README commands found");
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
}

#[test]
fn timings_are_normalised_and_nothing_else() {
    assert_eq!(
        normalise("checked in 0.109 s, race policy strict)  "),
        "checked in # s, race policy strict)"
    );
    assert_eq!(
        normalise("time: 0.002 s (2116 executions/s, 110 steps)"),
        "time: # s (# executions/s, 110 steps)"
    );
    assert_eq!(
        normalise("interval 0.0003 s (1 test), ratio 2922x"),
        "interval # s (1 test), ratio #x"
    );
    assert_eq!(normalise("out = 1 3 6 10"), "out = 1 3 6 10");
    let l = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert!(matches(&l(&["a", "...", "d"]), &l(&["a", "b", "c", "d"])));
    assert!(!matches(&l(&["a", "...", "d"]), &l(&["a", "b", "c"])));
}
