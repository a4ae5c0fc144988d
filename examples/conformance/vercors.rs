//! The VerCors yardstick: `cargo run --release --example conformance -- --vercors
//! ../shared/corpora/vercors-gpu [--write docs/conformance-vercors.md]`, over the corpus's
//! `.pvl` programs, with the `ksim` binary of the same build (`target/release/ksim`).
//!
//! Rules (fixed, for every program):
//! - the kernels: every method with a `par` block (the only method with a body when none
//!   has one), each run on its own with `--kernel NAME`;
//! - sizes and inputs: every parameter the kernel takes with `-D` is 4, or the constant
//!   the program pins it to (`N == 16` anywhere in the file), or one more than the
//!   largest lower bound it states when that is 4 or more (`N > 10`: 11); arrays start at
//!   zero (ksim's default) and, where that violates the method's precondition, every array
//!   parameter starts as `iota`, then as `ones`; the canonical schedule (`ksim run`), a
//!   60 s limit;
//! - VerCors's verdict: the line of `vercors-tests/*.scala` that names the file (`should
//!   verify`, `should fail`, `should error`; a commented-out line is a known VerCors
//!   problem: no verdict), else the file's `//:: verdict` header. A file with
//!   `/*[/expect ...]*/` markers verifies when its marked failure is found: ksim should
//!   find a violation there;
//! - agreement: VerCors verifies and ksim runs clean; VerCors expects a failure (`should
//!   fail`, an `expect` marker, `verdict Fail`) and ksim finds a violation or a race (a
//!   launch that still violates the kernel's precondition shows nothing of the kernel:
//!   no agreement);
//!   VerCors refuses the program (`should error`, `verdict Error`) and ksim refuses it
//!   or finds a race (VerCors's errors here are writes out of a block's scope, which race
//!   at run time).

use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Every disagreement, by file and kernel, with its reason, checked by reading the program
/// and ksim's output: (b) VerCors's policy that ksim reads differently; (d) not loadable
/// yet (a construct ksim does not read).
const REASONS: &[(&str, &str)] = &[
    ("InvariantParallelAtomic.pvl bar", "(d) `int[] xs` has no length clause (`xs.length == N`): ksim cannot size it"),
    ("ParNestedInvariantWrite.pvl m", "(b) VerCors refuses the `par` block's write to the method's variable `b` (outOfWriteScope); ksim runs it and the other block's `requires b` fails after the write (a specification's read is not an access for races)"),
    ("array_par.pvl ", "(d) a barrier with a body (`barrier(main; inv) ... { x = 1; }`) is not read yet"),
    ("oddEven.pvl ", "(d) `seq<int>` values and `|xs|` are not supported yet (refused by name)"),
    ("challenge2.pvl ", "(d) `seq<boolean>` values and `|xs|` are not supported yet (refused by name)"),
];

/// What VerCors says about a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verdict {
    Verify,
    /// A failure VerCors reports (a violated specification).
    Fail,
    /// VerCors refuses the program (resolution or type error).
    Error,
    /// A commented-out test: a known VerCors problem.
    Known,
    None,
}

/// What ksim did with one kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Outcome {
    Refused(String),
    Clean,
    Violation(String),
    Race,
    Timeout,
}

struct Row {
    file: String,
    kernel: String,
    verdict: Verdict,
    expect_marker: bool,
    outcome: Outcome,
}

impl Row {
    fn agrees(&self) -> Option<bool> {
        let expected_fail = self.expect_marker || self.verdict == Verdict::Fail;
        Some(match (self.verdict, &self.outcome) {
            (Verdict::Known | Verdict::None, _) => return None,
            (_, Outcome::Violation(v)) if v.contains("the launch violates") => false,
            (_, Outcome::Violation(_) | Outcome::Race) if expected_fail => true,
            (Verdict::Verify, Outcome::Clean) => true,
            (Verdict::Error, Outcome::Refused(_) | Outcome::Race) => true,
            _ => false,
        })
    }

    fn line(&self) -> String {
        let outcome = match &self.outcome {
            Outcome::Refused(why) => format!("not loaded: {why}"),
            Outcome::Clean => "runs clean".into(),
            Outcome::Violation(what) => format!("violation: {what}"),
            Outcome::Race => "data race".into(),
            Outcome::Timeout => "timeout".into(),
        };
        let verdict = match (self.verdict, self.expect_marker) {
            (Verdict::Verify, true) => "verifies (its expect marker fails)",
            (Verdict::Verify, false) => "verifies",
            (Verdict::Fail, _) => "fails",
            (Verdict::Error, _) => "error",
            (Verdict::Known, _) => "known VerCors problem",
            (Verdict::None, _) => "no verdict",
        };
        let key = format!(
            "{} {}",
            self.file.rsplit('/').next().unwrap_or(&self.file),
            self.kernel
        );
        let agree = match self.agrees() {
            Some(true) => "agree".to_string(),
            Some(false) => match REASONS.iter().find(|(k, _)| *k == key) {
                Some((_, why)) => format!("disagree: {}", why.replace('|', "\\|")),
                None => "DISAGREE (unreviewed)".to_string(),
            },
            None => "-".to_string(),
        };
        format!(
            "| {} | {} | {verdict} | {} | {agree} |",
            self.file,
            self.kernel,
            outcome.replace('|', "\\|")
        )
    }
}

fn pvl_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            pvl_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "pvl") {
            out.push(p);
        }
    }
}

/// VerCors's verdict on the file named `base`, from the test lists (`scala`) or its header.
fn verdict(base: &str, scala: &str, text: &str) -> Verdict {
    for line in scala.lines().filter(|l| l.contains(&format!("/{base}\""))) {
        let l = line.trim_start();
        if l.starts_with("//") {
            return Verdict::Known;
        }
        if l.contains("should verify") {
            return Verdict::Verify;
        }
        if l.contains("should fail") {
            return Verdict::Fail;
        }
        if l.contains("should error") {
            return Verdict::Error;
        }
    }
    match text
        .lines()
        .find_map(|l| l.strip_prefix("//:: verdict "))
        .map(str::trim)
    {
        Some("Pass") => Verdict::Verify,
        Some("Fail") => Verdict::Fail,
        Some("Error") => Verdict::Error,
        _ => Verdict::None,
    }
}

/// The kernels of a program: its methods with a `par` block, or none when it does not parse
/// (then ksim's own default picks, and its error is the row's).
fn kernels(text: &str) -> Vec<(String, Vec<String>)> {
    let Ok(p) = lang::pvl::parse::parse(text) else {
        return vec![(String::new(), Vec::new())];
    };
    let names: Vec<(String, Vec<String>)> = p
        .classes
        .iter()
        .flat_map(|c| &c.methods)
        .filter(|m| match &m.body {
            Some(lang::pvl::ast::MethodBody::Block(b)) => b.stmts.iter().any(has_par),
            _ => false,
        })
        .map(|m| {
            let arrays = m
                .params
                .iter()
                .filter(|(t, _)| !t.dims.is_empty())
                .map(|(_, p)| p.name.clone())
                .collect();
            (m.name.name.clone(), arrays)
        })
        .collect();
    if names.is_empty() {
        vec![(String::new(), Vec::new())]
    } else {
        names
    }
}

/// Whether a statement of a method holds a `par` block at the method's level.
fn has_par(s: &lang::pvl::ast::Stmt) -> bool {
    use lang::pvl::ast::StmtKind;
    match &s.kind {
        StmtKind::Par(_) | StmtKind::Parallel(_) => true,
        StmtKind::Block(b) | StmtKind::Invariant { body: b, .. } => b.stmts.iter().any(has_par),
        _ => false,
    }
}

fn ksim(args: &[String]) -> (Option<i32>, String) {
    let bin = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/release/ksim");
    let o = Command::new("timeout")
        .arg("60")
        .arg(bin)
        .args(args)
        .output()
        .expect("runs ksim");
    let mut t = String::from_utf8_lossy(&o.stdout).into_owned();
    t.push_str(&String::from_utf8_lossy(&o.stderr));
    (o.status.code(), t)
}

fn first_error(t: &str) -> String {
    t.lines()
        .find_map(|l| l.strip_prefix("Error: "))
        .unwrap_or("?")
        .chars()
        .take(110)
        .collect()
}

/// The constant `text` pins `name` to: `name == 16` (or `name==16`), the first one.
fn pinned(text: &str, name: &str) -> Option<u64> {
    let mut rest = text;
    while let Some(i) = rest.find(name) {
        let before = rest[..i].chars().next_back();
        let after = rest[i + name.len()..].trim_start();
        rest = &rest[i + name.len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        if let Some(v) = after.strip_prefix("==") {
            let digits: String = v
                .trim_start()
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            if let Ok(n) = digits.parse() {
                return Some(n);
            }
        }
    }
    None
}

/// One more than the largest lower bound `text` states for `name` (`name > 10`: 11).
fn lower_bound(text: &str, name: &str) -> Option<u64> {
    let mut best = None;
    for (i, _) in text.match_indices(name) {
        if text[..i]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_')
        {
            continue;
        }
        let after = text[i + name.len()..].trim_start();
        let Some(v) = after.strip_prefix('>').filter(|v| !v.starts_with('=')) else {
            continue;
        };
        let digits: String = v
            .trim_start()
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        if let Ok(n) = digits.parse::<u64>() {
            best = best.max(Some(n + 1));
        }
    }
    best
}

fn run_one(file: &Path, kernel: &str, arrays: &[String]) -> Outcome {
    let mut base = vec![file.display().to_string()];
    if !kernel.is_empty() {
        base.extend(["--kernel".to_string(), kernel.to_string()]);
    }
    let mut check = vec!["check".to_string()];
    check.extend(base.clone());
    let (code, t) = ksim(&check);
    if code != Some(0) {
        return Outcome::Refused(first_error(&t));
    }
    let params: Vec<String> = t
        .lines()
        .find_map(|l| l.split("(parameters: ").nth(1))
        .map(|p| {
            p.trim_end_matches(')')
                .split(", ")
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    let mut run = vec!["run".to_string()];
    run.extend(base);
    let text = std::fs::read_to_string(file).unwrap_or_default();
    for p in params.iter().filter(|p| p.as_str() != "none") {
        let v = pinned(&text, p)
            .or_else(|| lower_bound(&text, p).filter(|b| *b >= 4))
            .unwrap_or(4);
        run.extend(["-D".to_string(), format!("{p}={v}")]);
    }
    let (mut code, mut t) = ksim(&run);
    for fill in ["iota", "ones"] {
        if code != Some(1) || !t.contains("`__requires`") || arrays.is_empty() {
            break;
        }
        let mut again = run.clone();
        for a in arrays {
            again.extend(["--input".to_string(), format!("{a}={fill}")]);
        }
        (code, t) = ksim(&again);
    }
    match code {
        Some(0) => Outcome::Clean,
        Some(1) if t.contains("data race") => Outcome::Race,
        Some(1) => Outcome::Violation(first_error(&t)),
        Some(124) => Outcome::Timeout,
        _ => Outcome::Refused(first_error(&t)),
    }
}

pub fn main(dir: &Path, write: Option<&String>) -> Result<(), String> {
    let mut scala = String::new();
    for e in std::fs::read_dir(dir.join("vercors-tests")).map_err(|e| e.to_string())? {
        scala.push_str(
            &std::fs::read_to_string(e.map_err(|e| e.to_string())?.path()).unwrap_or_default(),
        );
    }
    let mut files = Vec::new();
    pvl_files(dir, &mut files);
    files.sort();
    let mut rows = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).map_err(|e| e.to_string())?;
        let base = f.file_name().unwrap().to_string_lossy().into_owned();
        let v = verdict(&base, &scala, &text);
        for (k, arrays) in kernels(&text) {
            let outcome = run_one(f, &k, &arrays);
            let row = Row {
                file: f.strip_prefix(dir).unwrap_or(f).display().to_string(),
                kernel: k,
                verdict: v,
                expect_marker: text.contains("/*[/expect"),
                outcome,
            };
            println!("{}", row.line());
            rows.push(row);
        }
    }
    let loaded_files = files
        .iter()
        .filter(|f| {
            let name = f.strip_prefix(dir).unwrap_or(f).display().to_string();
            rows.iter()
                .any(|r| r.file == name && !matches!(r.outcome, Outcome::Refused(_)))
        })
        .count();
    let judged: Vec<&Row> = rows.iter().filter(|r| r.agrees().is_some()).collect();
    let agree = judged.iter().filter(|r| r.agrees() == Some(true)).count();
    let clean_where_verified = rows
        .iter()
        .filter(|r| r.verdict == Verdict::Verify && !r.expect_marker)
        .map(|r| (r.outcome == Outcome::Clean, 1))
        .fold((0, 0), |(a, b), (c, d)| (a + c as usize, b + d));
    let mut s = String::new();
    let _ = writeln!(s, "# VerCors conformance (`.pvl`)\n");
    let _ = writeln!(
        s,
        "Written by `cargo run --release --example conformance -- --vercors ../shared/corpora/vercors-gpu --write docs/conformance-vercors.md` \
         over VerCors's GPU examples (see `../shared/corpora/vercors-gpu/README.md`). The rules \
         (kernels, sizes, inputs, verdicts, agreement) are at the top of `examples/conformance/vercors.rs`.\n"
    );
    let _ = writeln!(s, "| | |\n|---|---|");
    let _ = writeln!(s, "| `.pvl` programs | {} |", files.len());
    let _ = writeln!(s, "| load (at least one kernel) | {loaded_files} |");
    let _ = writeln!(s, "| kernels run | {} |", rows.len());
    let _ = writeln!(
        s,
        "| run clean where VerCors verifies | {} of {} |",
        clean_where_verified.0, clean_where_verified.1
    );
    let _ = writeln!(
        s,
        "| agree, among kernels with a verdict | {agree} of {} |",
        judged.len()
    );
    let _ = writeln!(
        s,
        "\n## Every kernel\n\n| file | kernel | VerCors | ksim | |\n|---|---|---|---|---|"
    );
    for r in &rows {
        let _ = writeln!(s, "{}", r.line());
    }
    println!(
        "{} .pvl programs, {loaded_files} load; {agree} of {} kernels with a verdict agree",
        files.len(),
        judged.len()
    );
    if let Some(path) = write {
        files::write_atomic(path.as_ref(), s.as_bytes())
            .map_err(|e| format!("cannot write {path}: {e}"))?;
        println!("wrote {path}");
    }
    Ok(())
}
