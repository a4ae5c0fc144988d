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
    /// Number of work-groups, or per dimension for a 2D/3D launch: `--groups 2,2`
    /// (default: the kernel's `launch(groups = ...)`, else 1).
    #[arg(long, value_name = "N[,N[,N]]", value_parser = parse_dims)]
    pub groups: Option<Dims>,
    /// Threads per work-group, or per dimension: `--local-size 16,2` (dimension 0 fastest
    /// in `tid`; default: the kernel's `launch(local_size = ...)`).
    #[arg(long, visible_alias = "local", value_name = "N[,N[,N]]", value_parser = parse_dims)]
    pub local_size: Option<Dims>,
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

/// A launch size per dimension (1 to 3), written `16` or `16,2`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dims(pub Vec<usize>);

impl std::fmt::Display for Dims {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> = self.0.iter().map(|d| d.to_string()).collect();
        f.write_str(&parts.join(","))
    }
}

fn parse_dims(s: &str) -> Result<Dims, String> {
    let dims = s
        .split(',')
        .map(|p| {
            p.trim()
                .parse::<usize>()
                .map_err(|_| format!("`{}` is not a size (a natural number)", p.trim()))
        })
        .collect::<Result<Vec<usize>, String>>()?;
    if dims.len() > 3 {
        return Err(format!(
            "`{s}` has {} dimensions; a launch has at most 3",
            dims.len()
        ));
    }
    Ok(Dims(dims))
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
    let src = Source::read(path)?;
    match lang::parse::parse(&src.text).and_then(|k| lang::check::check(&k)) {
        Ok(k) => Ok((src, Arc::new(k))),
        Err(diags) => Err(Failure::usage(src.render(&diags))),
    }
}

impl LaunchArgs {
    pub fn options(&self) -> LaunchOptions {
        // One dimension goes in the scalar fields, as before multi-dimensional launches.
        let split = |d: &Option<Dims>| match d.as_ref().map(|d| d.0.as_slice()) {
            Some([n]) => (Some(*n), Vec::new()),
            Some(dims) => (None, dims.to_vec()),
            None => (None, Vec::new()),
        };
        let (groups, group_dims) = split(&self.groups);
        let (local_size, local_dims) = split(&self.local_size);
        LaunchOptions {
            defines: self.define.clone(),
            groups,
            local_size,
            group_dims,
            local_dims,
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
        interp::AccessKind::Atomic => "atomically updates",
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
            if a.thread.group == b.thread.group && !launch.kernel.barriers_order_both() {
                match launch.kernel.arrays[race.array].space {
                    lang::ast::Space::Local => "with no barrier ordering local memory in between",
                    lang::ast::Space::Global => "with no barrier ordering global memory in between",
                }
            } else if a.thread.group == b.thread.group {
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
/// A divergent barrier as a compiler-style diagnostic: each `barrier` statement waited at
/// highlighted with its threads, the terminated threads in a note (the same from every
/// engine: both report [`interp::reference::BarrierInfo::sides`]).
pub fn render_divergence(
    src: &Source,
    launch: &Launch,
    d: &interp::reference::BarrierInfo,
) -> String {
    let threads = |ts: &[usize]| {
        let list: Vec<String> = ts.iter().map(|t| t.to_string()).collect();
        let who = if ts.len() == 1 { "thread" } else { "threads" };
        if launch.groups > 1 {
            format!("{who} {} of group {}", list.join(", "), d.group)
        } else {
            format!("{who} {}", list.join(", "))
        }
    };
    let waits = |ts: &[usize]| if ts.len() == 1 { "waits" } else { "wait" };
    let Some(first) = d.sides.iter().find_map(|s| s.barrier.clone()) else {
        return format!("{}\n", divergence_message(d));
    };
    let mut diag = Diagnostic::new(divergence_message(d), first);
    for side in &d.sides {
        match &side.barrier {
            Some(span) => {
                diag = diag
                    .with_label(
                        span.clone(),
                        format!("{} {} here", threads(&side.threads), waits(&side.threads)),
                    )
                    .with_note(format!(
                        "{} {} at the barrier at {}",
                        threads(&side.threads),
                        waits(&side.threads),
                        src.location(span.start)
                    ));
            }
            None => {
                diag = diag.with_note(format!(
                    "{} {} terminated (left the kernel without reaching a barrier)",
                    threads(&side.threads),
                    if side.threads.len() == 1 {
                        "has"
                    } else {
                        "have"
                    }
                ));
            }
        }
    }
    src.render(&[diag])
}

/// The one-line report of a divergent barrier, the same from every command and engine.
pub fn divergence_message(d: &interp::reference::BarrierInfo) -> String {
    format!(
        "barrier divergence: {} (the paper's K-BARRIER still fires; on a device this is undefined)",
        d.divergence.as_deref().unwrap_or("")
    )
}
