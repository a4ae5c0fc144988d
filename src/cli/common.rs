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

/// Options of `.cl` (OpenCL C) kernels: which kernel, and where `#include` looks.
#[derive(Args, Clone, Debug, Default)]
pub struct ClArgs {
    /// The kernel to run from a `.cl` file (default: its only kernel).
    #[arg(long, value_name = "NAME")]
    pub kernel: Option<String>,
    /// A directory where `#include "..."` looks (after the including file's directory).
    #[arg(short = 'I', value_name = "DIR")]
    pub include: Vec<PathBuf>,
}

/// The kernel file and the launch: shared by run, trace, explore, races, verify-scan.
#[derive(Args, Clone, Debug)]
pub struct LaunchArgs {
    /// The kernel source: `.ksim`, or OpenCL C (`.cl`).
    pub file: PathBuf,
    /// `.ksim`: bind a size or scalar parameter: `-D n=8`. Sizes are checked (no 32-bit
    /// wrap-around); a launch may have 2^28 threads, 2^28 elements per array and need
    /// 2 GiB of memory by ksim's estimate (see README, launch options). `.cl`: define a
    /// preprocessor macro, as the OpenCL build option (`-D N=64`, `-D DEBUG`).
    #[arg(short = 'D', value_name = "NAME[=VALUE]", value_parser = parse_macro)]
    pub define: Vec<(String, Option<String>)>,
    #[command(flatten)]
    pub cl: ClArgs,
    /// Number of work-groups (default: the kernel's `launch(groups = ...)`, else 1).
    #[arg(long)]
    pub groups: Option<usize>,
    /// Threads per work-group (default: the kernel's `launch(local_size = ...)`).
    #[arg(long)]
    pub local_size: Option<usize>,
    /// `.cl`: the global NDRange size (work-items in all), a multiple of --local.
    #[arg(long, value_name = "N")]
    pub global: Option<String>,
    /// `.cl`: the work-group size (the same as --local-size).
    #[arg(long, value_name = "N")]
    pub local: Option<String>,
    /// `.cl`: the value of a scalar kernel parameter: `--arg n=16`.
    #[arg(long, value_name = "NAME=VALUE", value_parser = parse_define)]
    pub arg: Vec<(String, String)>,
    /// Initial contents of an array: `1,2,3`, `iota`, `zeros`, `ones`, `random[:SEED]`,
    /// `@FILE` (one value per line or a JSON array). Arrays not given start at zero
    /// (the identity for `T`). A `.cl` buffer's spec also gives its size: `zeros:1024`,
    /// `iota:256`, `random:4096[:SEED]`, a list or `@FILE`.
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

pub fn parse_macro(s: &str) -> Result<(String, Option<String>), String> {
    match s.split_once('=') {
        Some(_) => parse_define(s).map(|(n, v)| (n, Some(v))),
        None if s.trim().is_empty() => Err("`-D` needs a name".into()),
        None => Ok((s.trim().to_string(), None)),
    }
}

fn parse_monoid(s: &str) -> Result<Monoid, String> {
    s.parse()
}

/// A kernel read from a file, with its source kept for diagnostics.
pub struct Source {
    pub path: String,
    pub text: String,
    /// Files a `.cl` kernel included: path, text, and base offset of its spans.
    pub includes: Vec<(String, String, usize)>,
}

impl Source {
    pub fn read(path: &Path) -> Result<Source, Failure> {
        let text = files::read_to_string(path, files::TEXT_LIMIT)
            .map_err(|e| Failure::usage(e.to_string()))?;
        Ok(Source {
            path: path.display().to_string(),
            text,
            includes: Vec::new(),
        })
    }

    /// The file holding a span's start: its path, its text, and its base offset.
    fn file_of(&self, offset: usize) -> (&str, &str, usize) {
        self.includes
            .iter()
            .rev()
            .find(|(_, _, base)| *base <= offset)
            .map_or((&self.path, &self.text, 0), |(p, t, b)| (p, t, *b))
    }

    /// Renders diagnostics against this source (colour on a terminal); a diagnostic in an
    /// included file is rendered against that file.
    pub fn render(&self, diags: &[Diagnostic]) -> String {
        let mut out = String::new();
        for d in diags {
            let (path, text, base) = self.file_of(d.span.start);
            let shift =
                |s: &lang::ast::Span| s.start.saturating_sub(base)..s.end.saturating_sub(base);
            let mut d = d.clone();
            d.span = shift(&d.span);
            d.labels = d
                .labels
                .iter()
                .filter(|(s, _)| self.file_of(s.start).2 == base)
                .map(|(s, t)| (shift(s), t.clone()))
                .collect();
            out.push_str(&lang::render::render(&[d], path, text, use_color()));
        }
        out
    }

    /// `file:line:col` of a byte offset.
    pub fn location(&self, offset: usize) -> String {
        let (path, text, base) = self.file_of(offset);
        let (line, col) = lang::render::line_col(text, offset - base);
        format!("{path}:{line}:{col}")
    }

    /// The first line of a statement's source text: what a trace shows.
    pub fn statement(&self, span: &lang::ast::Span) -> String {
        let (_, text, base) = self.file_of(span.start);
        let text = text
            .get(span.start - base..span.end.saturating_sub(base))
            .unwrap_or("");
        let first = text.lines().next().unwrap_or("").trim();
        first.trim_end_matches('{').trim_end().to_string()
    }
}

pub fn use_color() -> bool {
    use std::io::IsTerminal;
    std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none()
}

/// Parses and checks a kernel; invalid kernels are a usage error (exit 2) with rendered
/// diagnostics. A `.cl` file is compiled with no macros and its only kernel.
pub fn load(path: &Path) -> Result<(Source, Arc<lang::core::Kernel>), Failure> {
    if super::opencl::is_cl(path) {
        let (src, c) = super::opencl::load_cl(path, &[], &[], None)?;
        return Ok((src, Arc::new(c.kernel)));
    }
    let src = Source::read(path)?;
    match lang::parse::parse(&src.text).and_then(|k| lang::check::check(&k)) {
        Ok(k) => Ok((src, Arc::new(k))),
        Err(diags) => Err(Failure::usage(src.render(&diags))),
    }
}

impl LaunchArgs {
    /// The launch options of a `.ksim` kernel (`-D` binds parameters); the `.cl` options
    /// are refused here, since they mean nothing for `.ksim`.
    fn ksim_options(&self) -> Result<LaunchOptions, Failure> {
        let cl_only = [
            (self.cl.kernel.is_some(), "--kernel"),
            (!self.cl.include.is_empty(), "-I"),
            (self.global.is_some(), "--global"),
            (self.local.is_some(), "--local"),
            (!self.arg.is_empty(), "--arg"),
        ];
        if let Some((_, flag)) = cl_only.iter().find(|(given, _)| *given) {
            return Err(Failure::usage(format!(
                "{flag} is for OpenCL C (`.cl`) kernels; `{}` is a .ksim kernel",
                self.file.display()
            )));
        }
        let defines = self
            .define
            .iter()
            .map(|(n, v)| match v {
                Some(v) => Ok((n.clone(), v.clone())),
                None => Err(Failure::usage(format!(
                    "-D {n}: a .ksim parameter needs a value, -D {n}=VALUE"
                ))),
            })
            .collect::<Result<_, _>>()?;
        Ok(LaunchOptions {
            defines,
            groups: self.groups,
            local_size: self.local_size,
            monoid: self.monoid,
            inputs: self.input.clone(),
            max_steps: self.max_steps,
        })
    }

    /// Loads the kernel (`.ksim` or `.cl`, by extension), its launch options, and a `.cl`
    /// kernel's notes on approximations (see [`super::opencl::notes`]).
    #[allow(clippy::type_complexity)]
    pub fn load(
        &self,
    ) -> Result<(Source, Arc<lang::core::Kernel>, LaunchOptions, String), Failure> {
        if super::opencl::is_cl(&self.file) {
            let (src, c) = super::opencl::load_cl(
                &self.file,
                &self.define,
                &self.cl.include,
                self.cl.kernel.as_deref(),
            )?;
            let opts = super::opencl::launch_options(self, &c.info)?;
            let notes = super::opencl::notes(&src, &c.info);
            return Ok((src, Arc::new(c.kernel), opts, notes));
        }
        let opts = self.ksim_options()?;
        let (src, kernel) = load(&self.file)?;
        Ok((src, kernel, opts, String::new()))
    }

    /// The launch options (for a `.cl` kernel, after compiling it: the options bind the
    /// lowered kernel's parameters).
    pub fn options(&self) -> Result<LaunchOptions, Failure> {
        self.load().map(|(_, _, o, _)| o)
    }

    /// Loads the kernel and binds the launch; a `.cl` kernel's notes on approximations go
    /// to standard error.
    pub fn launch(&self) -> Result<(Source, Launch), Failure> {
        let (src, kernel, opts, notes) = self.load()?;
        eprint!("{notes}");
        let launch = Launch::new(kernel, &opts).map_err(|e| Failure::usage(e.0))?;
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
