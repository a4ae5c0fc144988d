//! What every command shares: loading a kernel, the launch options, exit codes, and the
//! rendering of races and faults.

use clap::Args;
use interp::launch::{Launch, LaunchOptions};
use interp::{Fault, Monoid, Race};
use lang::diag::Diagnostic;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Exit codes, for every command.
pub const EXIT_OK: i32 = 0;
/// A race, runtime fault or failed verification was found.
pub const EXIT_FOUND: i32 = 1;
/// A usage error or an invalid kernel.
pub const EXIT_USAGE: i32 = 2;

/// A command that cannot go on: the message and the exit code.
#[derive(Debug)]
pub struct Failure {
    pub message: String,
    pub code: i32,
}

impl Failure {
    pub fn usage(message: impl Into<String>) -> Failure {
        Failure {
            message: message.into(),
            code: EXIT_USAGE,
        }
    }
}

pub type CmdResult = Result<i32, Failure>;

/// The kernel file and the launch: shared by run, trace, explore, races, verify-scan.
#[derive(Args, Clone, Debug)]
pub struct LaunchArgs {
    /// The kernel source (`.ksim`).
    pub file: PathBuf,
    /// Bind a size or scalar parameter, like an OpenCL build option: `-D n=8`. Sizes are
    /// checked (no 32-bit wrap-around); a launch may have 2^28 threads, 2^28 elements per
    /// array and need 2 GiB of memory by ksim's estimate (see README, launch options).
    #[arg(short = 'D', value_name = "NAME=VALUE", value_parser = parse_define)]
    pub define: Vec<(String, String)>,
    /// Number of work-groups (default: the kernel's `launch(groups = ...)`, else 1).
    #[arg(long)]
    pub groups: Option<usize>,
    /// Threads per work-group (default: the kernel's `launch(local_size = ...)`).
    #[arg(long)]
    pub local_size: Option<usize>,
    /// Initial contents of an array: `1,2,3`, `iota`, `zeros`, `ones`, `random[:SEED]`,
    /// `@FILE` (one value per line or a JSON array). Arrays not given start at zero
    /// (the identity for `T`).
    #[arg(long, value_name = "ARRAY=SPEC", value_parser = parse_define)]
    pub input: Vec<(String, String)>,
    /// The monoid instantiating the generic type `T`.
    #[arg(long, default_value = "int-add", value_parser = parse_monoid)]
    pub monoid: Monoid,
    /// Report non-termination after this many thread steps (default: 10^7 + 1000 per thread).
    #[arg(long)]
    pub max_steps: Option<u64>,
}

fn parse_define(s: &str) -> Result<(String, String), String> {
    let (name, value) = s
        .split_once('=')
        .ok_or_else(|| format!("`{s}` is not NAME=VALUE"))?;
    if name.trim().is_empty() {
        return Err(format!("`{s}` has an empty name"));
    }
    Ok((name.trim().to_string(), value.to_string()))
}

fn parse_monoid(s: &str) -> Result<Monoid, String> {
    s.parse()
}

/// A kernel read from a file, with its source kept for diagnostics.
pub struct Source {
    pub path: String,
    pub text: String,
}

impl Source {
    pub fn read(path: &Path) -> Result<Source, Failure> {
        let text = files::read_to_string(path, files::TEXT_LIMIT)
            .map_err(|e| Failure::usage(e.to_string()))?;
        Ok(Source {
            path: path.display().to_string(),
            text,
        })
    }

    /// Renders diagnostics against this source (colour on a terminal).
    pub fn render(&self, diags: &[Diagnostic]) -> String {
        lang::render::render(diags, &self.path, &self.text, use_color())
    }

    /// `file:line:col` of a byte offset.
    pub fn location(&self, offset: usize) -> String {
        let (line, col) = lang::render::line_col(&self.text, offset);
        format!("{}:{line}:{col}", self.path)
    }

    /// The path and text, as the library's views take them.
    pub fn as_ref(&self) -> sim::explore::model::SourceRef<'_> {
        sim::explore::model::SourceRef {
            path: &self.path,
            text: &self.text,
        }
    }

    /// The first line of a statement's source text: what a trace shows.
    pub fn statement(&self, span: &lang::ast::Span) -> String {
        let text = self.text.get(span.clone()).unwrap_or("");
        let first = text.lines().next().unwrap_or("").trim();
        first.trim_end_matches('{').trim_end().to_string()
    }
}

pub fn use_color() -> bool {
    use std::io::IsTerminal;
    std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none()
}

/// Parses and checks a kernel; invalid kernels are a usage error (exit 2) with rendered
/// diagnostics.
pub fn load(path: &Path) -> Result<(Source, Arc<lang::core::Kernel>), Failure> {
    check_source(Source::read(path)?)
}

/// Parses and checks a kernel source already read (a race report keeps one).
pub fn check_source(src: Source) -> Result<(Source, Arc<lang::core::Kernel>), Failure> {
    match lang::parse::parse(&src.text).and_then(|k| lang::check::check(&k)) {
        Ok(k) => Ok((src, Arc::new(k))),
        Err(diags) => Err(Failure::usage(src.render(&diags))),
    }
}

impl LaunchArgs {
    pub fn options(&self) -> LaunchOptions {
        LaunchOptions {
            defines: self.define.clone(),
            groups: self.groups,
            local_size: self.local_size,
            monoid: self.monoid,
            inputs: self.input.clone(),
            max_steps: self.max_steps,
        }
    }

    /// Loads the kernel and binds the launch.
    pub fn launch(&self) -> Result<(Source, Launch), Failure> {
        let (src, kernel) = load(&self.file)?;
        let launch = Launch::new(kernel, &self.options()).map_err(|e| Failure::usage(e.0))?;
        Ok((src, launch))
    }
}

/// `out[3]`, `tree[1][2]`, or `out[3] (group 1)` for a local array of a multi-group launch.
pub fn elem_name(launch: &Launch, array: usize, instance: usize, index: &[usize]) -> String {
    let idx: String = index.iter().map(|i| format!("[{i}]")).collect();
    let name = &launch.kernel.arrays[array].name;
    if launch.instances(array) > 1 {
        format!("{name}{idx} (group {instance})")
    } else {
        format!("{name}{idx}")
    }
}

fn verb(kind: interp::AccessKind) -> &'static str {
    match kind {
        interp::AccessKind::Read => "reads",
        interp::AccessKind::Write => "writes",
    }
}

/// A race as a compiler-style diagnostic: both statements highlighted, threads and element
/// named, plus the plain `file:line:col` of both accesses.
pub fn render_race(src: &Source, launch: &Launch, race: &Race, extra: &[String]) -> String {
    let elem = elem_name(launch, race.array, race.instance, &race.index);
    let (a, b) = (&race.first, &race.second);
    let mut d = Diagnostic::new(format!("data race on {elem}"), b.span.clone())
        .with_label(
            b.span.clone(),
            format!("{} {} {elem}", a_thread(launch, b.thread), verb(b.kind)),
        )
        .with_note(format!(
            "first access:  {} {} {elem} at {}",
            a_thread(launch, a.thread),
            verb(a.kind),
            src.location(a.span.start)
        ))
        .with_note(format!(
            "second access: {} {} {elem} at {}, {}",
            a_thread(launch, b.thread),
            verb(b.kind),
            src.location(b.span.start),
            if a.thread.group == b.thread.group {
                "with no barrier in between"
            } else {
                "in another work-group (a barrier orders only the threads of its own group)"
            }
        ));
    if a.span != b.span {
        d = d.with_label(
            a.span.clone(),
            format!("{} {} {elem}", a_thread(launch, a.thread), verb(a.kind)),
        );
    }
    for e in extra {
        d = d.with_note(e.clone());
    }
    src.render(&[d])
}

fn a_thread(launch: &Launch, t: interp::ThreadId) -> String {
    if launch.groups > 1 {
        format!("thread {} of group {}", t.local, t.group)
    } else {
        format!("thread {}", t.local)
    }
}

/// A runtime fault with its statement highlighted.
pub fn render_fault(src: &Source, launch: &Launch, fault: &Fault) -> String {
    match &fault.span {
        Some(span) => {
            let who = fault
                .thread
                .map(|t| format!(" in {}", a_thread(launch, t)))
                .unwrap_or_default();
            let d = Diagnostic::new(format!("runtime fault: {}{who}", fault.kind), span.clone())
                .with_label(span.clone(), format!("{}", fault.kind))
                .with_note(format!("at {}", src.location(span.start)));
            src.render(&[d])
        }
        None if matches!(fault.kind, interp::fault::FaultKind::StepBound { .. }) => {
            format!("non-terminating: {fault} (the step bound; see --max-steps)\n")
        }
        None => format!("runtime fault: {fault}\n"),
    }
}
/// The one-line report of a divergent barrier, the same from every command and engine.
pub fn divergence_message(d: &interp::reference::BarrierInfo) -> String {
    format!(
        "barrier divergence: {} (the paper's K-BARRIER still fires; on a device this is undefined)",
        d.divergence.as_deref().unwrap_or("")
    )
}
