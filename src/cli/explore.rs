//! `ksim explore` and `ksim replay`: argument parsing and wiring. The exploration is
//! `sim::explore`, its JSON model and text `sim::explore::model`, race reports
//! `sim::report`, and the replay decision `sim::replay`.
//!
//! `ksim explore FILE [launch options] (--exhaustive [--preemption-bound K] | --random N |
//! --pct N [--depth D])` explores the schedules of one launch and prints a summary that ends
//! with `EXHAUSTIVE` or `INCOMPLETE (reason)` (`--json`: the model, see docs/json.md).
//! Every distinct race is written to `--report-dir` (default `ksim-reports/` in the
//! current directory) as a JSON race report, atomically, as soon as it is found (so that an
//! exploration killed later keeps it) and again at the end with the shortest schedule
//! found; `ksim replay REPORT` re-runs it. Every execution is bounded at `--max-steps`
//! steps (default 10^7 + 1000 × threads, as for every command): an execution that gets
//! there is reported as non-terminating.
//!
//! Exit codes: 0 nothing found; 1 a race, fault, barrier divergence or non-termination;
//! 2 usage error. A report that cannot be written is a warning: the summary is printed
//! and the exit code is still the one of what was found. `ksim replay`: 1 when the race is
//! reproduced; 0 when, with `--force` after a file changed, it no longer occurs; 2 for a
//! report or schedule that is invalid (empty, naming threads the launch does not have,
//! more than 2^64 - 1 steps), a file that changed (without `--force`), or a race that the
//! unchanged files and launch do not reproduce (a bug in ksim, said so).
//! `--jobs` parallelises random, PCT and the exhaustive search (the summary does not depend
//! on it: see `sim::explore::dpor`, "Several jobs"); `--preemption-bound`, kernels without
//! state caching, and several work-groups with a bound that stops the search run on one
//! thread.

use super::common::*;
use super::run::{TraceFormat, Tracer};
use clap::{ArgGroup, Args};
use interp::exec::Quiet;
use interp::launch::LaunchOptions;
use interp::Launch;
use sim::explore::model::{self, ExplorationModel};
use sim::explore::{self, Config, Mode, Progress};
use sim::replay::{Difference, Files, ReportFiles};
use sim::report::{LaunchSpec, RaceReport};
use std::collections::HashSet;
use std::io::IsTerminal;
use std::path::Path;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// `--pct`'s depth when `--depth` is not given.
const PCT_DEPTH: u32 = 3;

#[derive(Args, Debug)]
#[command(group(ArgGroup::new("mode").required(true).args(["exhaustive", "random", "pct"])))]
pub struct ExploreArgs {
    #[command(flatten)]
    pub launch: LaunchArgs,
    #[command(flatten)]
    pub policy: PolicyArgs,
    /// Every execution up to equivalence (state caching + partial-order reduction; the state
    /// graph instead where, without state caching, the reduction meets many executions).
    #[arg(long)]
    pub exhaustive: bool,
    /// N executions with uniformly random scheduling choices.
    #[arg(long, value_name = "N")]
    pub random: Option<u64>,
    /// N executions under the PCT scheduler, for bugs of depth --depth.
    #[arg(long, value_name = "N")]
    pub pct: Option<u64>,
    /// PCT bug depth d (d - 1 priority change points; default 3: PCT's authors found
    /// most concurrency bugs at depth 3 or less).
    #[arg(long, value_name = "D")]
    pub depth: Option<u32>,
    /// With --exhaustive: every schedule with at most K preemptions, iteratively deepened
    /// (0, 1, ..., K); EXHAUSTIVE only if no schedule needed more (see README).
    #[arg(long, value_name = "K", requires = "exhaustive")]
    pub preemption_bound: Option<u32>,
    /// Stop at the first race (verdict INCOMPLETE (race found), exit 1).
    #[arg(long)]
    pub stop_on_race: bool,
    /// Stop when K distinct races are known (at least 1).
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_races: Option<u64>,
    /// Shrink each race's schedule to the steps the race needs (random, PCT and
    /// --preemption-bound; --exhaustive schedules are already the shortest).
    #[arg(long)]
    pub shrink: bool,
    /// Seed for --random and --pct.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Stop after this many executions, complete or pruned as redundant (at least 1).
    #[arg(long, value_name = "M", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_executions: Option<u64>,
    /// Stop after this many distinct states at barrier points (exhaustive).
    #[arg(long, value_name = "M")]
    pub max_states: Option<u64>,
    /// Stop after this many seconds.
    #[arg(long, value_name = "SECS", value_parser = super::limits::parse_timeout)]
    pub timeout: Option<Duration>,
    /// Threads for --random, --pct and --exhaustive (the result does not depend on it; the
    /// exhaustive search is faster with more threads only without --max-executions,
    /// --max-states, --max-races and --stop-on-race, and then reports races when it ends,
    /// see docs/performance.md); --preemption-bound, kernels without state caching, and
    /// several work-groups with one of those bounds run on one thread. More threads than
    /// the cores are capped at the cores, with a note.
    #[arg(long, default_value_t = 1, value_parser = super::limits::parse_jobs)]
    pub jobs: usize,
    /// Where race reports are written.
    #[arg(long, value_name = "DIR", default_value = "ksim-reports")]
    pub report_dir: PathBuf,
    /// Do not write race reports.
    #[arg(long)]
    pub no_reports: bool,
    /// Print a JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// No progress display.
    #[arg(long, short)]
    pub quiet: bool,
    #[command(flatten)]
    pub views: super::race_views::RaceViewArgs,
}

/// Set by Ctrl-C; the explorers look at it inside executions too (`Config::interrupt`).
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Makes the first Ctrl-C stop the exploration cleanly (the summary of what was explored is
/// printed, INCOMPLETE (interrupted)); a second one ends ksim at once, as without a handler.
fn catch_ctrl_c() {
    let set = ctrlc::set_handler(|| {
        if INTERRUPTED.swap(true, Ordering::SeqCst) {
            std::process::exit(130);
        }
    });
    if let Err(e) = set {
        eprintln!("warning: Ctrl-C will end ksim without a summary: {e}");
    }
}

pub fn explore(args: &ExploreArgs) -> CmdResult {
    let (src, mut launch) = args.policy.launch(&args.launch)?;
    // Each execution ends at its first fault: going on past faults in every schedule
    // would multiply the executions to explore.
    launch.continue_after_faults = false;
    if args.jobs == 0 {
        return Err(Failure::usage("--jobs must be at least 1"));
    }
    if args.depth.is_some() && args.pct.is_none() {
        return Err(Failure::usage("--depth is PCT's: it needs --pct N"));
    }
    if args.depth == Some(0) {
        return Err(Failure::usage("--depth must be at least 1"));
    }
    if let Some(d) = args.depth.filter(|&d| d as u64 > launch.max_steps) {
        return Err(Failure::usage(format!(
            "--depth {d}: PCT changes priorities at d - 1 of the steps of an execution, \
             so the depth can be at most the step bound ({})",
            launch.max_steps
        )));
    }
    let mode = if let Some(bound) = args.preemption_bound {
        Mode::PreemptionBounded { bound }
    } else if args.exhaustive {
        Mode::Exhaustive
    } else if let Some(n) = args.random {
        Mode::Random { n, seed: args.seed }
    } else {
        Mode::Pct {
            n: args.pct.expect("mode group"),
            depth: args.depth.unwrap_or(PCT_DEPTH),
            seed: args.seed,
        }
    };
    let reports = if args.no_reports {
        None
    } else {
        match files::ensure_writable_dir(&args.report_dir) {
            Ok(()) => Some(Reports::new(
                args,
                &src,
                &launch,
                args.launch.options()?,
                &mode,
            )),
            Err(e) => {
                eprintln!(
                    "warning: race reports cannot be written to `{}` ({e}); exploring without them",
                    args.report_dir.display()
                );
                None
            }
        }
    };
    let on_race = |r: &explore::FoundRace| {
        if let Some(reports) = &reports {
            reports.write(r);
        }
    };
    catch_ctrl_c();
    let cfg = Config {
        max_executions: args.max_executions,
        max_states: args.max_states,
        timeout: args.timeout,
        interrupt: Some(&INTERRUPTED),
        jobs: args.jobs,
        max_races: args.max_races,
        stop_on_race: args.stop_on_race,
        on_race: Some(&on_race),
    };
    let show = !args.quiet && std::io::stderr().is_terminal();
    let bar = show.then(|| progress_bar(args.random.or(args.pct)));
    let mut on_progress = |p: &Progress| {
        if let Some(b) = &bar {
            let rate = p.executions as f64 / p.elapsed.as_secs_f64().max(1e-9);
            if p.total.is_some() {
                b.set_position(p.executions);
                b.set_message(format!(
                    "{}, {rate:.0}/s",
                    model::plural(p.races, "race", "races")
                ));
            } else {
                b.set_message(format!(
                    "{} executions, {} states, {}, {rate:.0} executions/s",
                    p.executions,
                    p.states,
                    model::plural(p.races, "race", "races")
                ));
                b.tick();
            }
        }
    };
    let progress: Option<explore::ProgressFn<'_>> =
        if show { Some(&mut on_progress) } else { None };
    let mut summary = match mode {
        Mode::Exhaustive | Mode::Naive => explore::exhaustive(&launch, &cfg, progress),
        Mode::PreemptionBounded { bound } => {
            explore::preemption_bounded(&launch, bound, &cfg, progress)
        }
        Mode::Random { n, seed } => explore::random(&launch, n, seed, &cfg, progress),
        Mode::Pct { n, depth, seed } => explore::pct(&launch, n, depth, seed, &cfg, progress),
    };
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    if args.shrink && mode != Mode::Exhaustive {
        explore::shrink_races(&launch, &mut summary);
    }
    if !summary.races.is_empty() && !super::opencl::is_cl(&args.launch.file) {
        let finals = summary.finals.iter().map(|f| &f.memory);
        summary.race_free = sim::fix::race_free_store(&src.text, &args.launch.options()?, finals);
    }
    if !summary.finals.is_empty() {
        summary.canonical = Some(explore::stores::canonical_store(&launch, &summary.finals));
    }
    // Each report was written when its race was found; now again with the shortest
    // schedule found.
    let reports: Vec<Option<String>> = summary
        .races
        .iter()
        .map(|r| reports.as_ref().and_then(|w| w.write(r)))
        .collect();
    let first = summary.races.first().map(|r| (&r.race, &r.schedule));
    args.views.write(&src, &launch, first);
    let code = if summary.is_clean() {
        EXIT_OK
    } else {
        EXIT_FOUND
    };
    if args.json {
        let doc = ExplorationModel::new(src.view(), &launch, &summary, &reports);
        println!("{}", sim::outcome::to_json(&doc));
    } else {
        // The diagnostics (stderr) first, then the summary (stdout): on a terminal both
        // streams interleave in the order written.
        eprint!(
            "{}",
            model::diagnostics_text(src.view(), &launch, &summary, &reports)
        );
        print!(
            "{}",
            model::summary_text(src.view(), &launch, &summary, &reports)
        );
    }
    Ok(code)
}

fn progress_bar(total: Option<u64>) -> indicatif::ProgressBar {
    match total {
        Some(n) => {
            let b = indicatif::ProgressBar::new(n);
            b.set_style(
                indicatif::ProgressStyle::with_template(
                    "{bar:30} {pos}/{len} executions {msg} [{elapsed}]",
                )
                .expect("template"),
            );
            b
        }
        None => {
            let b = indicatif::ProgressBar::new_spinner();
            b.set_style(
                indicatif::ProgressStyle::with_template("{spinner} {msg} [{elapsed}]")
                    .expect("template"),
            );
            b
        }
    }
}

/// Writes race reports into `--report-dir` as the races are found. A report that cannot
/// be written (a full disk, ...) is a warning, printed once per file: the exploration and
/// its summary go on, and `files::write_atomic` leaves no temporary behind.
struct Reports<'a> {
    args: &'a ExploreArgs,
    src: &'a Source,
    launch: &'a Launch,
    /// The launch options as a report records them (for `.cl`: of the lowered kernel).
    options: interp::launch::LaunchOptions,
    /// The files and options as given, to rebuild the launch.
    recorded: sim::report::Recorded,
    found_by: String,
    warned: Mutex<HashSet<PathBuf>>,
}

impl<'a> Reports<'a> {
    fn new(
        args: &'a ExploreArgs,
        src: &'a Source,
        launch: &'a Launch,
        options: interp::launch::LaunchOptions,
        mode: &Mode,
    ) -> Self {
        Reports {
            args,
            src,
            launch,
            options,
            recorded: args.launch.recorded(src),
            found_by: model::found_by(mode),
            warned: Mutex::new(HashSet::new()),
        }
    }

    /// Writes the report of `r`; its path, or `None` (with a warning) if it failed.
    fn write(&self, r: &explore::FoundRace) -> Option<String> {
        write_report(
            self.src,
            &self.recorded,
            self.launch,
            &self.options,
            r,
            &self.found_by,
            &self.args.report_dir,
            &self.warned,
        )
    }
}

/// Writes the race report of `r` into `dir`; its path, or `None` after a warning (once per
/// file in `warned`).
#[allow(clippy::too_many_arguments)]
pub fn write_report(
    src: &Source,
    recorded: &sim::report::Recorded,
    launch: &Launch,
    options: &interp::launch::LaunchOptions,
    r: &explore::FoundRace,
    found_by: &str,
    dir: &std::path::Path,
    warned: &Mutex<HashSet<PathBuf>>,
) -> Option<String> {
    let mut spec = LaunchSpec::from_options(options, launch.max_steps, launch.race_policy);
    spec.atomicity = launch.atomicity;
    spec.warp_size = launch.warp_size;
    spec.continue_after_faults = launch.continue_after_faults;
    let rep = RaceReport::new(src.view(), recorded.clone(), launch, spec, r, found_by, dir);
    let path = dir.join(rep.file_name_for(src.view()));
    match files::write_atomic(&path, rep.to_json().as_bytes()) {
        Ok(()) => Some(path.display().to_string()),
        Err(e) => {
            let first = (warned.lock())
                .unwrap_or_else(|e| e.into_inner())
                .insert(path.clone());
            if first {
                eprintln!(
                    "warning: cannot write race report `{}`: {e}",
                    path.display()
                );
            }
            None
        }
    }
}

/// The options of `ksim replay` (its help and exit codes: `Command::Replay` in main.rs).
#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// A race report written by `ksim explore` or `ksim races`.
    pub report: PathBuf,
    /// Print every step up to the race (as `ksim trace`).
    #[arg(long)]
    pub trace: bool,
    /// Replay even if a file of the launch (the kernel file, a header, the `.sim` file's
    /// program, an `@FILE` input) differs from the report's copy: the file on disk is
    /// used, with a warning and the difference. Exit 0 when the race no longer occurs.
    #[arg(long)]
    pub force: bool,
    /// After the recorded schedule, finish the run with the canonical schedule and print
    /// the final arrays.
    #[arg(long = "continue")]
    pub continue_run: bool,
    /// Write the reproduced race as an SVG timeline for slides (as `explore --timeline`).
    #[arg(long, value_name = "FILE.svg")]
    pub timeline: Option<PathBuf>,
}

/// The launch of a format 3 report, as the command line that found the race gave it
/// (paths where they are now, `@FILE` inputs as the values read through `files`).
fn launch_args(
    rep: &RaceReport,
    flags: &sim::report::LaunchFlags,
    files: &ReportFiles,
) -> Result<LaunchArgs, Failure> {
    let bad = |e: String| Failure::usage(format!("invalid launch in the report: {e}"));
    let dims = |d: &Option<String>| d.as_deref().map(parse_dims).transpose().map_err(bad);
    let input = |(name, spec): &(String, String)| -> Result<(String, String), Failure> {
        let Some(path) = spec.trim().strip_prefix('@') else {
            return Ok((name.clone(), spec.clone()));
        };
        let text = files
            .read(&files.locate(Path::new(path)))
            .map_err(|e| Failure::usage(format!("--input {name}={spec}: {e}")))?;
        let items = interp::launch::file_items(path, &text).map_err(Failure::usage)?;
        Ok((name.clone(), items.join(",")))
    };
    Ok(LaunchArgs {
        file: files.kernel.clone(),
        define: flags.defines.clone(),
        cl: ClArgs {
            kernel: flags.kernel.clone(),
            include: (flags.include.iter())
                .map(|d| files.locate(Path::new(d)))
                .collect(),
            shared_bytes: None,
            no_specs: flags.no_specs,
        },
        groups: dims(&flags.groups)?,
        grid: None,
        block: None,
        local_size: dims(&flags.local_size)?,
        global: flags.global.clone(),
        local: flags.local.clone(),
        arg: flags.args.clone(),
        input: flags.inputs.iter().map(input).collect::<Result<_, _>>()?,
        monoid: rep.launch.monoid.parse().map_err(bad)?,
        max_steps: Some(rep.launch.max_steps),
        uninit: Some(rep.launch.uninit),
        stop_at_first_fault: !rep.launch.continue_after_faults,
    })
}

/// The kernel and launch options of `rep`: a format 3 report's launch rebuilt through
/// `files`; an older report's recorded options (a `.cl` kernel then compiled without the
/// `-D`/`-I` it does not keep).
#[allow(clippy::type_complexity)]
fn rebuild(
    rep: &RaceReport,
    files: &ReportFiles,
) -> Result<(Source, std::sync::Arc<lang::core::Kernel>, LaunchOptions), Failure> {
    match &rep.flags {
        Some(flags) => {
            let (src, kernel, opts, notes) = launch_args(rep, flags, files)?.load_with(files)?;
            eprint!("{notes}");
            Ok((src, kernel, opts))
        }
        None => {
            let (src, kernel) = load_with(&files.kernel, files)?;
            let opts = (rep.launch.options())
                .map_err(|e| Failure::usage(format!("invalid launch in the report: {e}")))?;
            Ok((src, kernel, opts))
        }
    }
}

pub fn replay(args: &ReplayArgs) -> CmdResult {
    let shown = args.report.display();
    let text = files::read_to_string(&args.report, files::TEXT_LIMIT)
        .map_err(|e| Failure::usage(format!("report: {e}")))?;
    let rep = RaceReport::parse(&text).map_err(|e| Failure::usage(format!("{shown}: {e}")))?;
    let files = ReportFiles::new(&rep, &args.report);
    let built = rebuild(&rep, &files);
    // A changed file is refused before anything it may have broken is reported.
    for d in files.differences() {
        match d {
            Difference::Changed { path, diff } if !args.force => {
                return Err(Failure::usage(format!(
                    "`{}` has changed since the report was written: refusing to replay; pass \
                     --force to try anyway. What changed:\n{diff}",
                    path.display()
                )))
            }
            Difference::Changed { path, diff } => eprintln!(
                "warning: `{}` has changed since the report was written; replaying with it \
                 (--force). What changed:\n{diff}",
                path.display()
            ),
            Difference::FromReport(path) => eprintln!(
                "note: the file `{}` is not found; replaying the copy of its source kept in \
                 the report",
                path.display()
            ),
        }
    }
    let (src, kernel, opts) = built.map_err(|f| Failure {
        message: format!("{shown}: {}", f.message),
        code: f.code,
    })?;
    let mut launch =
        Launch::new(kernel, &opts).map_err(|e| Failure::usage(format!("launch: {}", e.0)))?;
    launch.race_policy = rep.launch.race_policy;
    launch.set_atomicity(rep.launch.atomicity);
    launch.warp_size = rep.launch.warp_size;
    if !files.changed() {
        check_rebuilt(&rep, &launch);
    }
    rep.schedule
        .check(&launch)
        .map_err(|e| Failure::usage(format!("{shown}: invalid schedule: {e}")))?;
    let result = if args.trace {
        let mut tracer = Tracer::new(
            &src,
            &launch,
            TraceFormat::Text,
            Default::default(),
            Default::default(),
        );
        sim::replay::replay(&launch, &rep, args.continue_run, &mut tracer)
    } else {
        sim::replay::replay(&launch, &rep, args.continue_run, &mut Quiet)
    };
    let views = super::race_views::RaceViewArgs {
        timeline: args.timeline.clone(),
        html: None,
    };
    views.write(
        &src,
        &launch,
        result.reproduced.as_ref().map(|r| (r, &rep.schedule)),
    );
    eprint!("{}", result.diagnostics(src.view(), &launch));
    print!("{}", result.text(&shown.to_string(), &launch));
    if result.reproduced.is_some() {
        return Ok(EXIT_FOUND);
    }
    if files.changed() {
        // After a fix: the race no longer occurs, and the summary said why.
        return Ok(EXIT_OK);
    }
    Err(Failure {
        message: format!(
            "{shown}: the recorded race was not reproduced although the kernel's files and \
             launch are those of the report: {}; this is a bug in ksim: please report it, \
             with the report",
            result.why_not()
        ),
        code: EXIT_USAGE,
    })
}

/// Warns when the launch rebuilt from unchanged files differs from the recorded one (by
/// the report's launch hash): a report of format 3 keeps every option, so the rebuild is
/// then not exact, a bug in ksim; an older one does not keep a `.cl` kernel's.
fn check_rebuilt(rep: &RaceReport, launch: &Launch) {
    let hash = sim::report::launch_hash(launch);
    if let Some(h) = rep.launch_hash.as_ref().filter(|h| **h != hash) {
        let why = if rep.flags.is_some() {
            "this is a bug in ksim: please report it, with the report".to_string()
        } else {
            format!(
                "the report, of format {}, does not keep the options of a `.cl` launch \
                 (`-D`, `-I`, `--kernel`)",
                rep.format_version
            )
        };
        eprintln!(
            "warning: the launch rebuilt from the report differs from the recorded one \
             (launch hash {hash}, the report's {h}); {why}"
        );
    }
}
