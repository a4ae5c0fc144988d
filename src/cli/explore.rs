//! `ksim explore` and `ksim replay`: argument parsing and wiring. The exploration is
//! `sim::explore`, its JSON model and text `sim::explore::model`, race reports
//! `sim::report`, and the replay decision `sim::replay`.
//!
//! `ksim explore FILE [launch options] (--exhaustive [--preemption-bound K] | --random N |
//! --pct N --depth D)` explores the schedules of one launch and prints a summary that ends
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
//! reproduced and also when it is not (like `ksim run --schedule` with a schedule that does
//! not fit), 2 for a report or schedule that is invalid (empty, naming threads the launch
//! does not have, more than 2^64 - 1 steps) or a kernel that changed (without `--force`).
//! `--jobs` parallelises random, PCT and the exhaustive search (the summary does not depend
//! on it: see `sim::explore::dpor`, "Several jobs"); `--preemption-bound`, kernels without
//! state caching, and several work-groups with a bound that stops the search run on one
//! thread.

use super::common::*;
use super::run::{TraceFormat, Tracer};
use clap::{ArgGroup, Args};
use interp::exec::Quiet;
use interp::Launch;
use sim::explore::model::{self, ExplorationModel};
use sim::explore::{self, Config, Mode, Progress};
use sim::report::{LaunchSpec, RaceReport};
use std::collections::HashSet;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Duration;

#[derive(Args, Debug)]
#[command(group(ArgGroup::new("mode").required(true).args(["exhaustive", "random", "pct"])))]
pub struct ExploreArgs {
    #[command(flatten)]
    pub launch: LaunchArgs,
    #[command(flatten)]
    pub policy: PolicyArgs,
    /// Every execution up to equivalence (state caching + partial-order reduction).
    #[arg(long)]
    pub exhaustive: bool,
    /// N executions with uniformly random scheduling choices.
    #[arg(long, value_name = "N")]
    pub random: Option<u64>,
    /// N executions under the PCT scheduler (needs --depth).
    #[arg(long, value_name = "N", requires = "depth")]
    pub pct: Option<u64>,
    /// PCT bug depth d (d - 1 priority change points).
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
    /// several work-groups with one of those bounds run on one thread.
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
    let (src, launch) = args.policy.launch(&args.launch)?;
    if args.jobs == 0 {
        return Err(Failure::usage("--jobs must be at least 1"));
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
            depth: args.depth.expect("requires depth"),
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
                b.set_message(format!("{} races, {rate:.0}/s", p.races));
            } else {
                b.set_message(format!(
                    "{} executions, {} states, {} races, {rate:.0} executions/s",
                    p.executions, p.states, p.races
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
            found_by: model::found_by(mode),
            warned: Mutex::new(HashSet::new()),
        }
    }

    /// Writes the report of `r`; its path, or `None` (with a warning) if it failed.
    fn write(&self, r: &explore::FoundRace) -> Option<String> {
        write_report(
            self.src,
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
pub fn write_report(
    src: &Source,
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
    let rep = RaceReport::new(src.view(), launch, spec, r, found_by, dir);
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

#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// A race report written by `ksim explore` or `ksim races`.
    pub report: PathBuf,
    /// Print every step up to the race (as `ksim trace`).
    #[arg(long)]
    pub trace: bool,
    /// Replay even if the kernel source no longer matches the report's hash.
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

pub fn replay(args: &ReplayArgs) -> CmdResult {
    let text = files::read_to_string(&args.report, files::TEXT_LIMIT)
        .map_err(|e| Failure::usage(format!("report: {e}")))?;
    let rep = RaceReport::parse(&text)
        .map_err(|e| Failure::usage(format!("{}: {e}", args.report.display())))?;
    let found = sim::replay::kernel_source(&rep, &args.report)
        .map_err(|e| Failure::usage(format!("{}: {e}", args.report.display())))?;
    if let Some(diff) = &found.changed {
        if !args.force {
            return Err(Failure::usage(format!(
                "the kernel source `{}` has changed since the report was written: refusing to \
                 replay; pass --force to try anyway. What changed:\n{diff}",
                found.path
            )));
        }
        eprintln!(
            "warning: the kernel source `{}` has changed since the report was written; replaying anyway (--force). What changed:\n{diff}",
            found.path
        );
    }
    if found.from_report {
        eprintln!(
            "note: the kernel file `{}` is not found; replaying the copy of its source kept in the report",
            rep.kernel_path
        );
    }
    // An OpenCL C kernel is compiled from its file (without the `-D`/`-I` of the run:
    // reports do not keep them yet); a `.ksim` kernel from the report's copy if need be.
    let (src, kernel) = if super::opencl::is_cl(std::path::Path::new(&found.path)) {
        load(std::path::Path::new(&found.path))?
    } else {
        check_source(Source {
            path: found.path.clone(),
            text: found.text.clone(),
            includes: Vec::new(),
        })?
    };
    let opts = rep
        .launch
        .options()
        .map_err(|e| Failure::usage(format!("{}: bad launch: {e}", args.report.display())))?;
    let mut launch =
        Launch::new(kernel, &opts).map_err(|e| Failure::usage(format!("launch: {}", e.0)))?;
    launch.race_policy = rep.launch.race_policy;
    launch.set_atomicity(rep.launch.atomicity);
    launch.warp_size = rep.launch.warp_size;
    rep.schedule
        .check(&launch)
        .map_err(|e| Failure::usage(format!("{}: invalid schedule: {e}", args.report.display())))?;
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
    print!(
        "{}",
        result.text(&args.report.display().to_string(), &launch)
    );
    // Reproduced or not (like `ksim run --schedule` with a schedule that does not fit),
    // not a clean run.
    Ok(EXIT_FOUND)
}
