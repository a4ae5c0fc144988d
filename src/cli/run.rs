//! `ksim check`, `ksim run` and `ksim trace`.

use super::common::*;
use clap::{Args, ValueEnum};
use interp::exec::Observer;
use interp::reference::{BarrierInfo, StepInfo, WarpStep};
use interp::Launch;
use sim::{Schedule, Scheduler};
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// The kernel source: `.ksim`, OpenCL C (`.cl`), CUDA (`.cu`), a VerCors PVL program (`.pvl`), or an
    /// Oclgrind simulator file (`.sim`), whose launch is loaded and checked too.
    pub file: PathBuf,
    /// Also print the desugared core form (Figure 4 plus barrier).
    #[arg(long)]
    pub core: bool,
    /// `.cl`: define a preprocessor macro, as the OpenCL build option.
    #[arg(short = 'D', value_name = "NAME[=VALUE]", value_parser = super::common::parse_macro)]
    pub define: Vec<(String, Option<String>)>,
    #[command(flatten)]
    pub cl: ClArgs,
}

pub fn check(args: &CheckArgs) -> CmdResult {
    if super::opencl::is_cl(&args.file) {
        return check_cl(args);
    }
    if super::simfile::is_sim(&args.file) {
        return check_sim(args);
    }
    if super::pvl::is_pvl(&args.file) {
        return check_pvl(args);
    }
    if !args.define.is_empty() || args.cl.kernel.is_some() || !args.cl.include.is_empty() {
        return Err(Failure::usage(
            "-D, -I and --kernel are for OpenCL C (`.cl`) kernels",
        ));
    }
    let (_, k) = load(&args.file)?;
    println!("{}: {}", args.file.display(), lang::summary::kernel(&k));
    if args.core {
        print!("{}", lang::print_core::print_core(&k));
    }
    Ok(EXIT_OK)
}

/// `ksim check program.pvl`: the method's kernel, the lowering's notes.
fn check_pvl(args: &CheckArgs) -> CmdResult {
    if !args.define.is_empty() || !args.cl.include.is_empty() {
        return Err(Failure::usage("-D and -I are for OpenCL C (`.cl`) kernels"));
    }
    let (src, c) = super::pvl::load(
        &args.file,
        args.cl.kernel.as_deref(),
        !args.cl.no_specs,
        &sim::replay::Disk,
    )?;
    println!(
        "{}: {}",
        args.file.display(),
        lang::summary::kernel(&c.kernel)
    );
    print!("{}", super::pvl::notes(&src, &c));
    if args.core {
        print!("{}", lang::print_core::print_core(&c.kernel));
    }
    Ok(EXIT_OK)
}

/// `ksim check kernel.cl`: the kernel, what its launch needs, the lowering's notes.
fn check_cl(args: &CheckArgs) -> CmdResult {
    let (src, c) = super::opencl::load_cl(
        &args.file,
        &args.cl.defines(&args.define),
        &args.cl.include,
        args.cl.kernel.as_deref(),
    )?;
    println!(
        "{}: {}",
        args.file.display(),
        lang::summary::opencl(&c.info)
    );
    print!("{}", super::opencl::notes(&src, &c.info));
    if args.core {
        print!("{}", lang::print_core::print_core(&c.kernel));
    }
    Ok(EXIT_OK)
}

/// `ksim check X.sim`: the program, its kernel and the whole launch the file gives (its
/// arguments read and bound, the NDRange checked), without running it.
fn check_sim(args: &CheckArgs) -> CmdResult {
    if args.cl.kernel.is_some() {
        return Err(Failure::usage("--kernel: a `.sim` file names its kernel"));
    }
    let launch = LaunchArgs {
        file: args.file.clone(),
        define: args.define.clone(),
        cl: ClArgs {
            kernel: None,
            include: args.cl.include.clone(),
            shared_bytes: None,
            no_specs: false,
        },
        groups: None,
        local_size: None,
        grid: None,
        block: None,
        global: None,
        local: None,
        arg: Vec::new(),
        input: Vec::new(),
        monoid: "int-add".parse().map_err(Failure::usage)?,
        max_steps: None,
        uninit: None,
        stop_at_first_fault: false,
    };
    let l = super::simfile::load(&launch, &sim::replay::Disk)?;
    let bound = Launch::new(l.kernel.clone(), &l.opts)
        .map_err(|e| Failure::usage(format!("{}: the launch: {}", args.file.display(), e.0)))?;
    // The dimensions the launch uses (trailing 1s of both left out).
    let n = (0..3)
        .rposition(|d| bound.group_dims[d] != 1 || bound.local_dims[d] != 1)
        .map_or(1, |d| d + 1);
    let dims = |d: &[usize; 3]| {
        d[..n]
            .iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(" x ")
    };
    println!(
        "{}: kernel `{}` of {}, {} groups of {} work-items ({}), launch loads and is well-typed",
        args.file.display(),
        l.info.name,
        l.program.display(),
        dims(&bound.group_dims),
        dims(&bound.local_dims),
        bound.threads()
    );
    print!("{}", l.notes);
    if args.core {
        print!("{}", lang::print_core::print_core(&l.kernel));
    }
    Ok(EXIT_OK)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ScheduleKind {
    Canonical,
    RoundRobin,
    Random,
}

#[derive(Args, Debug)]
pub struct ScheduleArgs {
    /// `canonical`, `round-robin`, `random`, `@FILE` to follow a recorded schedule, or a
    /// schedule written out, `'0 1 2 3 0×4 1×6'` (thread, or thread×steps; `x` or `*` for
    /// ×), as `explore` prints one per final store.
    #[arg(long, default_value = "canonical")]
    pub schedule: String,
    /// Seed for `--schedule random`.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
}

impl ScheduleArgs {
    /// The scheduler for `launch`; a schedule file is checked against it (exit 2 if it is
    /// empty, names a thread the launch does not have, or overflows the step count).
    pub fn scheduler(&self, launch: &Launch) -> Result<Scheduler, Failure> {
        if let Some(path) = self.schedule.strip_prefix('@') {
            let schedule = read_schedule(path)?;
            schedule
                .check(launch)
                .map_err(|e| Failure::usage(format!("schedule `{path}`: {e}")))?;
            return Ok(Scheduler::Replay(schedule));
        }
        if self.schedule.starts_with(|c: char| c.is_ascii_digit()) {
            let schedule = Schedule::parse(&self.schedule)
                .and_then(|s| s.check(launch).map(|_| s))
                .map_err(|e| Failure::usage(format!("--schedule: {e}")))?;
            return Ok(Scheduler::Replay(schedule));
        }
        match ScheduleKind::from_str(&self.schedule, true) {
            Ok(ScheduleKind::Canonical) => Ok(Scheduler::Canonical),
            Ok(ScheduleKind::RoundRobin) => Ok(Scheduler::RoundRobin),
            Ok(ScheduleKind::Random) => Ok(Scheduler::Random { seed: self.seed }),
            Err(_) => Err(Failure::usage(format!(
                "unknown schedule `{}`: use canonical, round-robin, random, @FILE or the \
                 schedule itself ('0 1 0×3')",
                self.schedule
            ))),
        }
    }
}

/// Reads a schedule file: either a schedule object `{"runs": [[thread, count], ...]}` or
/// any JSON document with such an object under `"schedule"` (a `--json` run output or a
/// race report).
pub fn read_schedule(path: &str) -> Result<Schedule, Failure> {
    let text = files::read_to_string(Path::new(path), files::TEXT_LIMIT)
        .map_err(|e| Failure::usage(format!("schedule: {e}")))?;
    let doc: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| Failure::usage(format!("`{path}` is not JSON: {e}")))?;
    let obj = doc.get("schedule").cloned().unwrap_or(doc);
    serde_json::from_value(obj).map_err(|e| {
        Failure::usage(format!(
            "`{path}` holds no schedule ({{\"runs\": [[thread, count], ...]}}): {e}"
        ))
    })
}

#[derive(Args, Debug)]
pub struct RunArgs {
    #[command(flatten)]
    pub launch: LaunchArgs,
    #[command(flatten)]
    pub policy: PolicyArgs,
    #[command(flatten)]
    pub schedule: ScheduleArgs,
    /// `auto`: the fast executor for the canonical schedule where it supports the launch,
    /// else the reference semantics (the output says which ran, and why). `reference`: the
    /// small-step semantics, any schedule. `fast`: the fast executor only (canonical
    /// schedule; same memory, races, faults, divergence, steps and schedule:
    /// `interp::canonical`).
    #[arg(long, value_enum, default_value = "auto")]
    pub engine: Engine,
    /// Threads for the fast executor (0: all cores; more than the cores are capped at the
    /// cores, with a note).
    #[arg(long, default_value_t = 0, value_parser = super::limits::parse_jobs)]
    pub jobs: usize,
    /// Print only these arrays (default: all).
    #[arg(long, value_name = "ARRAY")]
    pub show: Vec<String>,
    /// Print a JSON object instead of text (documented in docs/json.md).
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: &RunArgs) -> CmdResult {
    // A `.sim` file's `dump` arguments are printed after the run, as Oclgrind prints them.
    let (src, launch, dumps) = if super::simfile::is_sim(&args.launch.file) {
        let l = super::simfile::load(&args.launch, &sim::replay::Disk)?;
        eprint!("{}", l.notes);
        let mut launch = Launch::new(l.kernel, &l.opts).map_err(|e| Failure::usage(e.0))?;
        args.policy.apply(&mut launch);
        (l.src, launch, Some(l.dumps))
    } else {
        let (src, launch) = args.policy.launch(&args.launch)?;
        (src, launch, None)
    };
    for name in &args.show {
        if launch.kernel.array(name).is_none() {
            return Err(Failure::usage(format!(
                "--show {name}: the kernel has no array `{name}`"
            )));
        }
    }
    let scheduler = args.schedule.scheduler(&launch)?;
    let report = sim::outcome::run(
        &launch,
        &scheduler,
        &args.schedule.schedule,
        args.engine.into(),
        args.jobs,
        args.json,
    )
    .map_err(Failure::usage)?;
    let mut text = report.text(&launch, src.view(), &args.show);
    text.err.push_str(&engine_line(&report));
    if report.clean && report.races.iter().any(|r| r.race.benign()) {
        // One execution's benign pairs say nothing of other orders (`ksim races` decides).
        text.err.push_str(
            "note: the benign races are benign in this execution only: in another order the \
             same pair can be harmful; `ksim races --race-policy same-value` decides every \
             order of this input\n",
        );
    }
    match dumps {
        _ if args.json => println!("{}", sim::outcome::to_json(&report)),
        // Standard output is Oclgrind's (the dumps alone), to compare line by line; the
        // run's own lines go to standard error.
        Some(dumps) if args.show.is_empty() => {
            print!("{}", super::simfile::dumps_text(&dumps, &report.arrays));
            eprint!(
                "{}",
                text.out
                    .lines()
                    .next()
                    .map_or(String::new(), |l| format!("{l}\n"))
            );
            eprint!("{}", text.err);
        }
        _ => print_text(&text),
    }
    Ok(exit_code(report.clean))
}

/// The text view's last line: which engine ran, and why not the fast executor when it was
/// preferred.
fn engine_line(report: &sim::outcome::RunReport) -> String {
    match &report.fallback_reason {
        Some(why) => format!("engine: {} ({why})\n", report.engine.name()),
        None => format!("engine: {}\n", report.engine.name()),
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Engine {
    Auto,
    Reference,
    Fast,
}

impl From<Engine> for Option<interp::canonical::Engine> {
    fn from(e: Engine) -> Self {
        match e {
            Engine::Auto => None,
            Engine::Reference => Some(interp::canonical::Engine::Reference),
            Engine::Fast => Some(interp::canonical::Engine::Fast),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum TraceFormat {
    Text,
    /// One JSON record per line (JSON Lines).
    Json,
}

#[derive(Args, Debug)]
pub struct TraceArgs {
    #[command(flatten)]
    pub launch: LaunchArgs,
    #[command(flatten)]
    pub policy: PolicyArgs,
    #[command(flatten)]
    pub schedule: ScheduleArgs,
    #[arg(long, value_enum, default_value = "text")]
    pub format: TraceFormat,
    #[command(flatten)]
    pub view: super::trace_view::TraceOptions,
    /// Also write the execution as one self-contained HTML page for the lecture hall
    /// (docs/teaching.md): source, configuration at every step, timeline, snapshots.
    #[arg(long, value_name = "FILE.html")]
    pub html: Option<PathBuf>,
}

pub fn trace(args: &TraceArgs) -> CmdResult {
    let (src, launch) = args.policy.launch(&args.launch)?;
    let scheduler = args.schedule.scheduler(&launch)?;
    if let Some(t) = args.view.thread.filter(|&t| t >= launch.threads()) {
        return Err(Failure::usage(format!(
            "--thread {t}: the launch has threads 0 to {}",
            launch.threads() - 1
        )));
    }
    if args.view.snapshots && args.format == TraceFormat::Json {
        return Err(Failure::usage(
            "--snapshots prints a text table; use it without --format json",
        ));
    }
    if args.html.is_some() {
        super::race_views::single_threads(&launch)?;
    }
    let racing = sim::trace::racing_steps(&launch, &scheduler);
    let mut tracer = Tracer::new(&src, &launch, args.format, (&args.view).into(), racing);
    let (out, infeasible) = sim::run(&launch, &scheduler, &mut tracer);
    if let Some(path) = &args.html {
        super::race_views::write_page(path, &src, &launch, &out.schedule);
    }
    let report =
        sim::outcome::RunReport::of_outcome(&launch, &args.schedule.schedule, out, infeasible);
    match args.format {
        TraceFormat::Text => {
            let table = if args.view.snapshots {
                tracer.view.snapshot_table()
            } else {
                String::new()
            };
            print_text(&sim::text::Text {
                out: format!(
                    "{table}-- {} steps\n{}",
                    report.steps,
                    report.arrays_text(&launch, &[])
                ),
                err: report.findings_text(&launch, src.view()),
            })
        }
        TraceFormat::Json => println!("{}", report.end_event()),
    }
    Ok(exit_code(report.clean))
}

/// Prints one line (or JSON record) per rule application ([`sim::trace::TraceView`]).
pub struct Tracer<'a> {
    view: sim::trace::TraceView<'a>,
}

impl<'a> Tracer<'a> {
    pub fn new(
        src: &'a Source,
        launch: &'a Launch,
        format: TraceFormat,
        opts: sim::trace::Options,
        racing: std::collections::BTreeMap<u64, String>,
    ) -> Self {
        let view = sim::trace::TraceView::new(src.view(), launch, format == TraceFormat::Json)
            .with_options(opts, racing);
        if let Some(h) = view.header() {
            println!("{h}");
        }
        Tracer { view }
    }
}

impl Observer for Tracer<'_> {
    fn step(&mut self, info: &StepInfo) {
        if let Some(line) = self.view.step(info) {
            println!("{line}");
        }
    }

    fn warp(&mut self, step: &WarpStep) {
        if let Some(line) = self.view.warp(step) {
            println!("{line}");
        }
    }

    fn barrier(&mut self, info: &BarrierInfo) {
        if let Some(line) = self.view.barrier(info) {
            println!("{line}");
        }
    }
}
