//! `ksim explore` and `ksim replay`.
//!
//! `ksim explore FILE [launch options] (--exhaustive | --random N | --pct N --depth D)`
//! explores the schedules of one launch (see `sim::explore`) and prints a summary that ends
//! with `EXHAUSTIVE` or `INCOMPLETE (reason)`. Every distinct race is written to
//! `--report-dir` (default `ksim-reports/` in the current directory) as a JSON race report
//! (`sim::report`), atomically, as soon as it is found (so that an exploration killed
//! later keeps it) and again at the end with the shortest schedule found; `ksim replay
//! REPORT` re-runs it.
//!
//! Unless `--max-steps` is given, exploration bounds every execution at
//! 100 000 + 1000 × threads steps (`ksim run` uses 10^7 + 1000 × threads): an execution
//! that gets there is reported as non-terminating.
//!
//! `--json` prints one object:
//!
//! ```text
//! { "kernel": name, "path": file, "launch": {groups, local_size, monoid, params, max_steps},
//!   "mode": "exhaustive" | "random" | "pct", "seed": S | null, "depth": D | null,
//!   "verdict": "EXHAUSTIVE" | "INCOMPLETE", "incomplete_reason": null | "max-executions" |
//!     "max-states" | "timeout" | "interrupted" | "random sampling" | "pct sampling" |
//!     "step bound",
//!   "executions": {"total", "complete", "pruned", "cache_hits", "sleep_blocked", "cut"},
//!   "states": distinct states at barrier points (exhaustive),
//!   "final_stores": [{"count", "schedule": {"runs"}, "arrays": {name: [values] or [[...] per group]}}],
//!   "races": [{race as in `ksim run --json`, "statement_first", "statement_second",
//!              "location_first", "location_second", "schedule", "report": path | null}],
//!   "race_changes_result": true | false | null,
//!   "faults": [{fault, "count", "schedule"}],
//!   "non_terminating": {"count", "schedule"},
//!   "divergences": [{"message", "schedule"}],
//!   "lemma_5_4_confirmed": bool (exhaustive, race-free, one final store),
//!   "pct": null | {"depth", "threads", "max_steps", "bound"},
//!   "steps": K-STEPs executed, "time_s", "executions_per_s", "clean" }
//! ```
//!
//! Exit codes: 0 nothing found; 1 a race, fault, barrier divergence or non-termination;
//! 2 usage error. A report that cannot be written is a warning: the summary is printed
//! and the exit code is still the one of what was found. `ksim replay`: 1 when the race is
//! reproduced and also when it is not (like `ksim run --schedule` with a schedule that does
//! not fit), 2 for a report or schedule that is invalid (empty, naming threads the launch
//! does not have, more than 2^64 - 1 steps). `--jobs` parallelises random and PCT (results do not depend on it); the
//! exhaustive search runs on one thread.

use super::common::*;
use super::run::{launch_json, race_json, TraceFormat, Tracer};
use clap::{ArgGroup, Args};
use interp::exec::Quiet;
use interp::{Launch, Memory};
use serde_json::json;
use sim::explore::{self, Config, Mode, Progress, Summary, Verdict};
use sim::report::{self, KeySpec, LaunchSpec, RaceReport};
use sim::{Schedule, Scheduler};
use std::cell::RefCell;
use std::collections::HashSet;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

#[derive(Args, Debug)]
#[command(group(ArgGroup::new("mode").required(true).args(["exhaustive", "random", "pct"])))]
pub struct ExploreArgs {
    #[command(flatten)]
    pub launch: LaunchArgs,
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
    /// Worker threads for --random and --pct (the result does not depend on it).
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

/// The default step bound of exploration.
pub fn explore_max_steps(threads: usize) -> u64 {
    100_000 + 1000 * threads as u64
}

pub fn explore(args: &ExploreArgs) -> CmdResult {
    let (src, mut launch) = args.launch.launch()?;
    if args.launch.max_steps.is_none() {
        launch.max_steps = explore_max_steps(launch.threads());
    }
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
    let mode = if args.exhaustive {
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
        on_race: Some(&on_race),
    };
    let show = !args.quiet && std::io::stderr().is_terminal();
    let bar = if show {
        let b = match args.random.or(args.pct) {
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
        };
        Some(b)
    } else {
        None
    };
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
    let summary = match mode {
        Mode::Exhaustive | Mode::Naive => explore::exhaustive(&launch, &cfg, progress),
        Mode::Random { n, seed } => explore::random(&launch, n, seed, &cfg, progress),
        Mode::Pct { n, depth, seed } => explore::pct(&launch, n, depth, seed, &cfg, progress),
    };
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    // Each report was written when its race was found; now again with the shortest
    // schedule found.
    let reports: Vec<Option<String>> = summary
        .races
        .iter()
        .map(|r| reports.as_ref().and_then(|w| w.write(r)))
        .collect();
    let code = if summary.is_clean() {
        EXIT_OK
    } else {
        EXIT_FOUND
    };
    if args.json {
        let doc = summary_json(&src, &launch, &summary, &reports);
        println!("{}", serde_json::to_string_pretty(&doc).expect("JSON"));
    } else {
        print_summary(&src, &launch, &summary, &reports);
    }
    Ok(code)
}

fn found_by(mode: &Mode) -> String {
    match mode {
        Mode::Exhaustive => "exhaustive".into(),
        Mode::Naive => "naive".into(),
        Mode::Random { n, seed } => format!("random (N = {n}, seed {seed})"),
        Mode::Pct { n, depth, seed } => format!("pct (N = {n}, depth {depth}, seed {seed})"),
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
    warned: RefCell<HashSet<PathBuf>>,
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
            found_by: found_by(mode),
            warned: RefCell::new(HashSet::new()),
        }
    }

    /// Writes the report of `r`; its path, or `None` (with a warning) if it failed.
    fn write(&self, r: &explore::FoundRace) -> Option<String> {
        let rep = make_report(self.src, self.launch, &self.options, r, &self.found_by);
        let (l1, l2) = (
            lang::render::line_col(&self.src.text, r.race.key().0.start).0,
            lang::render::line_col(&self.src.text, r.race.key().2.start).0,
        );
        let path = self.args.report_dir.join(rep.file_name(l1, l2));
        match files::write_atomic(&path, rep.to_json().as_bytes()) {
            Ok(()) => Some(path.display().to_string()),
            Err(e) => {
                if self.warned.borrow_mut().insert(path.clone()) {
                    eprintln!(
                        "warning: cannot write race report `{}`: {e}",
                        path.display()
                    );
                }
                None
            }
        }
    }
}

fn make_report(
    src: &Source,
    launch: &Launch,
    options: &interp::launch::LaunchOptions,
    r: &explore::FoundRace,
    found_by: &str,
) -> RaceReport {
    let mut race = race_json(launch, &r.race);
    race["key"] = serde_json::to_value(KeySpec::from_key(&r.race.key())).expect("JSON");
    race["statement_first"] = json!(src.statement(&r.race.first.span));
    race["statement_second"] = json!(src.statement(&r.race.second.span));
    race["location_first"] = json!(src.location(r.race.first.span.start));
    race["location_second"] = json!(src.location(r.race.second.span.start));
    RaceReport {
        format: report::FORMAT.into(),
        format_version: report::FORMAT_VERSION,
        ksim_version: env!("CARGO_PKG_VERSION").into(),
        source_hash: report::source_hash(&src.text),
        kernel: launch.kernel.name.clone(),
        kernel_path: src.path.clone(),
        launch: LaunchSpec::from_options(options, launch.max_steps),
        resolved: launch_json(launch),
        race,
        schedule: r.schedule.clone(),
        found_by: found_by.into(),
    }
}

/// `0×5 1×3 2 ...`: a schedule in a line (at most `max` runs).
fn short_schedule(s: &Schedule, max: usize) -> String {
    let mut parts: Vec<String> = s
        .runs
        .iter()
        .take(max)
        .map(|&(t, n)| {
            if n == 1 {
                format!("{t}")
            } else {
                format!("{t}×{n}")
            }
        })
        .collect();
    if s.runs.len() > max {
        parts.push(format!("... ({} runs in all)", s.runs.len()));
    }
    if parts.is_empty() {
        "(empty)".into()
    } else {
        parts.join(" ")
    }
}

fn values(v: &[interp::Value]) -> String {
    v.iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

fn array_label(launch: &Launch, a: usize, inst: usize) -> String {
    let name = &launch.kernel.arrays[a].name;
    if launch.instances(a) > 1 {
        format!("{name} (group {inst})")
    } else {
        name.clone()
    }
}

fn memory_arrays(launch: &Launch, m: &Memory) -> serde_json::Value {
    let map: serde_json::Map<String, serde_json::Value> = launch
        .kernel
        .arrays
        .iter()
        .enumerate()
        .map(|(a, d)| {
            let v = if m.arrays[a].len() == 1 {
                json!(m.arrays[a][0])
            } else {
                json!(m.arrays[a])
            };
            (d.name.clone(), v)
        })
        .collect();
    serde_json::Value::Object(map)
}

fn mode_line(s: &Summary) -> String {
    match &s.mode {
        Mode::Exhaustive => {
            "exhaustive (state caching at barriers + source-DPOR with sleep sets)".into()
        }
        Mode::Naive => "naive (every interleaving)".into(),
        Mode::Random { n, seed } => format!("random, {n} executions, seed {seed}"),
        Mode::Pct { n, depth, seed } => {
            format!("PCT, {n} executions, depth {depth}, seed {seed}")
        }
    }
}

fn race_changes_result(s: &Summary) -> Option<bool> {
    if s.races.is_empty() {
        None
    } else if s.finals.len() > 1 {
        Some(true)
    } else if s.verdict == Verdict::Exhaustive && s.finals.len() == 1 {
        Some(false)
    } else {
        None
    }
}

fn lemma_confirmed(s: &Summary) -> bool {
    s.verdict == Verdict::Exhaustive
        && s.races.is_empty()
        && s.faults.is_empty()
        && s.non_terminating == 0
        && s.finals.len() == 1
}

fn print_summary(src: &Source, launch: &Launch, s: &Summary, reports: &[Option<String>]) {
    println!(
        "ksim explore: kernel {}, {} group(s) of {} threads, monoid {}, {}",
        launch.kernel.name,
        launch.groups,
        launch.local_size,
        launch.monoid,
        mode_line(s)
    );
    println!(
        "executions: {} complete, {} pruned as redundant ({} at explored barrier states, {} sleep-set blocked), {} cut by a bound",
        s.complete, s.pruned, s.cache_hits, s.sleep_blocked, s.cut
    );
    if s.mode == Mode::Exhaustive {
        println!("distinct states at barrier points: {}", s.states);
    }
    // Final stores.
    println!("distinct final stores: {}", s.finals.len());
    let k = &launch.kernel;
    let mut differing = Vec::new();
    let mut common = Vec::new();
    for a in 0..k.arrays.len() {
        for inst in 0..launch.instances(a) {
            let first = &s.finals.first().map(|f| &f.memory.arrays[a][inst]);
            if s.finals
                .iter()
                .all(|f| Some(&f.memory.arrays[a][inst]) == *first)
            {
                common.push((a, inst));
            } else {
                differing.push((a, inst));
            }
        }
    }
    if s.finals.len() == 1 {
        let f = &s.finals[0];
        for &(a, inst) in &common {
            println!(
                "  {} = {}",
                array_label(launch, a, inst),
                values(&f.memory.arrays[a][inst])
            );
        }
    } else if !s.finals.is_empty() {
        let names: Vec<String> = common
            .iter()
            .map(|&(a, i)| array_label(launch, a, i))
            .collect();
        if !names.is_empty() {
            println!("  the same in every final store: {}", names.join(", "));
        }
        const SHOWN: usize = 20;
        let base = &s.finals[0].memory;
        for (i, f) in s.finals.iter().take(SHOWN).enumerate() {
            println!(
                "  #{} ({} execution{}; schedule {}):",
                i + 1,
                f.count,
                if f.count == 1 { "" } else { "s" },
                short_schedule(&f.schedule, 8)
            );
            for &(a, inst) in &differing {
                let v = &f.memory.arrays[a][inst];
                let label = array_label(launch, a, inst);
                if v.len() <= 32 || i == 0 {
                    println!("      {label} = {}", values(v));
                } else {
                    let diffs: Vec<String> = v
                        .iter()
                        .zip(&base.arrays[a][inst])
                        .enumerate()
                        .filter(|(_, (x, y))| x != y)
                        .map(|(j, (x, _))| format!("[{j}]={x}"))
                        .collect();
                    println!("      {label}: differs from #1 at {}", diffs.join(" "));
                }
            }
        }
        if s.finals.len() > SHOWN {
            println!("  ... and {} more (see --json)", s.finals.len() - SHOWN);
        }
    }
    // Races.
    if s.races.is_empty() {
        println!("races: none");
    } else {
        println!("races: {} distinct", s.races.len());
        for (r, path) in s.races.iter().zip(reports) {
            let mut extra = vec![format!(
                "shortest schedule found ({} steps): {}",
                r.schedule.len(),
                short_schedule(&r.schedule, 12)
            )];
            if let Some(p) = path {
                extra.push(format!("report: {p} (replay: ksim replay {p})"));
            }
            eprint!("{}", render_race(src, launch, &r.race, &extra));
            println!(
                "  {} at {} `{}` / {} at {} `{}` (shortest schedule {} steps{})",
                kind(r.race.first.kind),
                src.location(r.race.first.span.start),
                src.statement(&r.race.first.span),
                kind(r.race.second.kind),
                src.location(r.race.second.span.start),
                src.statement(&r.race.second.span),
                r.schedule.len(),
                path.as_ref()
                    .map(|p| format!("; report {p}"))
                    .unwrap_or_default()
            );
        }
        match race_changes_result(s) {
            Some(true) => println!(
                "  the race{} make{} the result schedule-dependent: {} distinct final stores",
                if s.races.len() > 1 { "s" } else { "" },
                if s.races.len() > 1 { "" } else { "s" },
                s.finals.len()
            ),
            Some(false) => println!(
                "  the race{} cannot change the result on this input (every execution ends in the same store); still a data race (Definition 5.2)",
                if s.races.len() > 1 { "s" } else { "" }
            ),
            None => {}
        }
    }
    if s.faults.is_empty() {
        println!("runtime faults: none");
    } else {
        println!("runtime faults: {} distinct", s.faults.len());
        for f in &s.faults {
            eprint!("{}", render_fault(src, launch, &f.fault));
            println!(
                "  {} ({} execution{}; schedule {} steps: {})",
                f.fault,
                f.count,
                if f.count == 1 { "" } else { "s" },
                f.schedule.len(),
                short_schedule(&f.schedule, 12)
            );
        }
    }
    match &s.non_terminating_schedule {
        None => println!("non-terminating executions: 0"),
        Some(sch) => println!(
            "non-terminating executions: {} (step bound {} or a repeating barrier state; shortest schedule {} steps: {})",
            s.non_terminating,
            launch.max_steps,
            sch.len(),
            short_schedule(sch, 12)
        ),
    }
    for d in &s.divergences {
        println!(
            "barrier divergence: {} (schedule {} steps: {})",
            d.message,
            d.schedule.len(),
            short_schedule(&d.schedule, 12)
        );
    }
    if let Some(p) = &s.pct {
        println!(
            "PCT guarantee: each execution finds a given bug of depth {} with probability >= 1/(n·k^(d-1)) = {:.3e} (n = {} threads, k = {} steps)",
            p.depth, p.bound, p.threads, p.max_steps
        );
    }
    if lemma_confirmed(s) {
        println!("Lemma 5.4 confirmed on this input: race-free, and every execution ends in the same final store");
    }
    println!(
        "time: {:.3} s ({:.0} executions/s, {} steps)",
        s.elapsed.as_secs_f64(),
        s.rate(),
        s.steps
    );
    println!("{}", s.verdict);
}

fn kind(k: interp::AccessKind) -> &'static str {
    match k {
        interp::AccessKind::Read => "read",
        interp::AccessKind::Write => "write",
    }
}

fn summary_json(
    src: &Source,
    launch: &Launch,
    s: &Summary,
    reports: &[Option<String>],
) -> serde_json::Value {
    let (mode, seed, depth) = match &s.mode {
        Mode::Exhaustive => ("exhaustive", None, None),
        Mode::Naive => ("naive", None, None),
        Mode::Random { seed, .. } => ("random", Some(*seed), None),
        Mode::Pct { seed, depth, .. } => ("pct", Some(*seed), Some(*depth)),
    };
    let (verdict, reason) = match s.verdict {
        Verdict::Exhaustive => ("EXHAUSTIVE", None),
        Verdict::Incomplete(r) => ("INCOMPLETE", Some(r.name())),
    };
    let races: Vec<serde_json::Value> = s
        .races
        .iter()
        .zip(reports)
        .map(|(r, p)| {
            let mut v = race_json(launch, &r.race);
            v["statement_first"] = json!(src.statement(&r.race.first.span));
            v["statement_second"] = json!(src.statement(&r.race.second.span));
            v["location_first"] = json!(src.location(r.race.first.span.start));
            v["location_second"] = json!(src.location(r.race.second.span.start));
            v["schedule"] = json!(r.schedule);
            v["report"] = json!(p);
            v
        })
        .collect();
    json!({
        "kernel": launch.kernel.name,
        "path": src.path,
        "launch": launch_json(launch),
        "mode": mode,
        "seed": seed,
        "depth": depth,
        "verdict": verdict,
        "incomplete_reason": reason,
        "executions": {
            "total": s.executions(),
            "complete": s.complete,
            "pruned": s.pruned,
            "cache_hits": s.cache_hits,
            "sleep_blocked": s.sleep_blocked,
            "cut": s.cut,
        },
        "states": s.states,
        "final_stores": s.finals.iter().map(|f| json!({
            "count": f.count,
            "schedule": f.schedule,
            "arrays": memory_arrays(launch, &f.memory),
        })).collect::<Vec<_>>(),
        "races": races,
        "race_changes_result": race_changes_result(s),
        "faults": s.faults.iter().map(|f| {
            let mut v = serde_json::to_value(&f.fault).expect("JSON");
            v["count"] = json!(f.count);
            v["schedule"] = json!(f.schedule);
            v
        }).collect::<Vec<_>>(),
        "non_terminating": {"count": s.non_terminating, "schedule": s.non_terminating_schedule},
        "divergences": s.divergences.iter().map(|d| json!({"message": d.message, "schedule": d.schedule})).collect::<Vec<_>>(),
        "lemma_5_4_confirmed": lemma_confirmed(s),
        "pct": s.pct.as_ref().map(|p| json!({"depth": p.depth, "threads": p.threads, "max_steps": p.max_steps, "bound": p.bound})),
        "steps": s.steps,
        "time_s": s.elapsed.as_secs_f64(),
        "executions_per_s": s.rate(),
        "clean": s.is_clean(),
    })
}

#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// A race report written by `ksim explore`.
    pub report: PathBuf,
    /// Print every step up to the race (as `ksim trace`).
    #[arg(long)]
    pub trace: bool,
    /// Replay even if the kernel source no longer matches the report's hash.
    #[arg(long)]
    pub force: bool,
}

/// The kernel file named by a report: as given, else relative to the report's folder.
fn kernel_file(report: &Path, given: &str) -> PathBuf {
    let p = PathBuf::from(given);
    if p.exists() || p.is_absolute() {
        return p;
    }
    report
        .parent()
        .map(|d| d.join(given))
        .filter(|q| q.exists())
        .unwrap_or(p)
}

pub fn replay(args: &ReplayArgs) -> CmdResult {
    let text = files::read_to_string(&args.report, files::TEXT_LIMIT)
        .map_err(|e| Failure::usage(format!("report: {e}")))?;
    let rep = RaceReport::parse(&text)
        .map_err(|e| Failure::usage(format!("{}: {e}", args.report.display())))?;
    let file = kernel_file(&args.report, &rep.kernel_path);
    let src = Source::read(&file)?;
    let hash = report::source_hash(&src.text);
    let changed = hash != rep.source_hash;
    if changed && !args.force {
        return Err(Failure::usage(format!(
            "the kernel source `{}` has changed since the report was written (hash {hash}, report {}): \
             refusing to replay; pass --force to try anyway",
            file.display(),
            rep.source_hash
        )));
    }
    if changed {
        eprintln!(
            "warning: the kernel source `{}` has changed since the report was written; replaying anyway (--force)",
            file.display()
        );
    }
    let (_, kernel) = load(&file)?;
    let opts = rep
        .launch
        .options()
        .map_err(|e| Failure::usage(format!("{}: bad launch: {e}", args.report.display())))?;
    let launch =
        Launch::new(kernel, &opts).map_err(|e| Failure::usage(format!("launch: {}", e.0)))?;
    rep.schedule
        .check(launch.threads())
        .map_err(|e| Failure::usage(format!("{}: invalid schedule: {e}", args.report.display())))?;
    let scheduler = Scheduler::Replay(rep.schedule.clone());
    let (out, infeasible) = if args.trace {
        let mut tracer = Tracer::new(&src, &launch, TraceFormat::Text);
        sim::run(&launch, &scheduler, &mut tracer)
    } else {
        sim::run(&launch, &scheduler, &mut Quiet)
    };
    println!(
        "replay of {}: kernel {}, {} steps of {} recorded",
        args.report.display(),
        launch.kernel.name,
        out.steps,
        rep.schedule.len()
    );
    if let Some(i) = infeasible.as_ref().filter(|i| i.thread.is_some()) {
        println!(
            "the schedule stops being feasible at step {}: {}",
            i.step, i.reason
        );
    }
    if let Some(f) = &out.fault {
        eprint!("{}", render_fault(&src, &launch, f));
    }
    let want = rep.key();
    let hit = out
        .races
        .iter()
        .find(|r| Some(r.key()) == want)
        .or_else(|| {
            if want.is_none() {
                out.races.first()
            } else {
                None
            }
        });
    match hit {
        Some(r) => {
            eprint!(
                "{}",
                render_race(
                    &src,
                    &launch,
                    r,
                    &[format!(
                        "reproduced at step {} of the recorded schedule",
                        r.second.step
                    )]
                )
            );
            println!(
                "race reproduced: {} at step {}",
                elem_name(&launch, r.array, r.instance, &r.index),
                r.second.step
            );
            Ok(EXIT_FOUND)
        }
        None => {
            for r in &out.races {
                eprint!("{}", render_race(&src, &launch, r, &[]));
            }
            println!("the recorded race was NOT reproduced");
            // Like `ksim run --schedule` with a schedule that does not fit: not a clean run.
            Ok(EXIT_FOUND)
        }
    }
}
