//! `ksim check`, `ksim run` and `ksim trace`.

use super::common::*;
use clap::{Args, ValueEnum};
use interp::exec::{Observer, Outcome, Quiet};
use interp::reference::{BarrierInfo, StepInfo};
use interp::{Launch, Race};
use serde_json::json;
use sim::{Infeasible, Schedule, Scheduler};
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// The kernel source (`.ksim`).
    pub file: PathBuf,
    /// Also print the desugared core form (Figure 4 plus barrier).
    #[arg(long)]
    pub core: bool,
}

pub fn check(args: &CheckArgs) -> CmdResult {
    let (_, k) = load(&args.file)?;
    let sizes: Vec<_> = k.params.iter().map(|p| p.name.as_str()).collect();
    println!(
        "{}: kernel `{}` is well-typed{} (parameters: {})",
        args.file.display(),
        k.name,
        if k.generic { " and generic in T" } else { "" },
        if sizes.is_empty() {
            "none".into()
        } else {
            sizes.join(", ")
        }
    );
    if args.core {
        print!("{}", lang::print_core::print_core(&k));
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
    /// `canonical`, `round-robin`, `random`, or `@FILE` to follow a recorded schedule.
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
                .check(launch.threads())
                .map_err(|e| Failure::usage(format!("schedule `{path}`: {e}")))?;
            return Ok(Scheduler::Replay(schedule));
        }
        match ScheduleKind::from_str(&self.schedule, true) {
            Ok(ScheduleKind::Canonical) => Ok(Scheduler::Canonical),
            Ok(ScheduleKind::RoundRobin) => Ok(Scheduler::RoundRobin),
            Ok(ScheduleKind::Random) => Ok(Scheduler::Random { seed: self.seed }),
            Err(_) => Err(Failure::usage(format!(
                "unknown schedule `{}`: use canonical, round-robin, random or @FILE",
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
    pub schedule: ScheduleArgs,
    /// `reference`: the small-step semantics, any schedule. `fast`: the fast executor
    /// (canonical schedule only; same memory, races, faults and divergence).
    #[arg(long, value_enum, default_value = "reference")]
    pub engine: Engine,
    /// Threads for the fast executor (0: all cores).
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
    let (src, launch) = args.launch.launch()?;
    for name in &args.show {
        if launch.kernel.array(name).is_none() {
            return Err(Failure::usage(format!(
                "--show {name}: the kernel has no array `{name}`"
            )));
        }
    }
    let scheduler = args.schedule.scheduler(&launch)?;
    let (out, infeasible) = match args.engine {
        Engine::Reference => sim::run(&launch, &scheduler, &mut Quiet),
        Engine::Fast => {
            if !matches!(scheduler, Scheduler::Canonical) {
                return Err(Failure::usage(
                    "--engine fast runs the canonical schedule only; use --engine reference for other schedules",
                ));
            }
            (fast_outcome(&launch, args.jobs)?, None)
        }
    };
    let code = verdict_code(&out, infeasible.as_ref());
    if args.json {
        let doc = outcome_json(&launch, &args.schedule.schedule, &out, infeasible.as_ref());
        println!("{}", serde_json::to_string_pretty(&doc).expect("JSON"));
        return Ok(code);
    }
    println!(
        "kernel {}: {} group(s) of {} threads, monoid {}, schedule {}, {} steps",
        launch.kernel.name,
        launch.groups,
        launch.local_size,
        launch.monoid,
        args.schedule.schedule,
        out.steps
    );
    print_arrays(&launch, &out, &args.show);
    report_findings(&src, &launch, &out, infeasible.as_ref());
    Ok(code)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Engine {
    Reference,
    Fast,
}

/// The fast executor's canonical run, as an [`Outcome`] (its schedule is not recorded:
/// it is the canonical one).
fn fast_outcome(launch: &Launch, jobs: usize) -> Result<Outcome, Failure> {
    let opts = interp::fast::FastOptions {
        jobs,
        track_races: true,
    };
    let out = interp::fast::run(launch, &opts)
        .map_err(|e| Failure::usage(format!("--engine fast: {e}; use --engine reference")))?;
    Ok(Outcome {
        memory: out.memory,
        races: out.races.into_iter().map(|r| r.race).collect(),
        fault: out.fault,
        divergences: out.divergences,
        steps: out.steps,
        schedule: Schedule::default(),
        stopped: false,
    })
}

pub fn verdict_code(out: &Outcome, infeasible: Option<&Infeasible>) -> i32 {
    if out.is_clean() && infeasible.is_none() {
        EXIT_OK
    } else {
        EXIT_FOUND
    }
}

/// Prints every array (or those in `show`): 1D as one line, 2D as one line per row.
pub fn print_arrays(launch: &Launch, out: &Outcome, show: &[String]) {
    let k = &launch.kernel;
    let width = k.arrays.iter().map(|a| a.name.len()).max().unwrap_or(0);
    for (a, decl) in k.arrays.iter().enumerate() {
        if !show.is_empty() && !show.contains(&decl.name) {
            continue;
        }
        for (inst, values) in out.memory.arrays[a].iter().enumerate() {
            let label = if launch.instances(a) > 1 {
                format!("{} (group {inst})", decl.name)
            } else {
                decl.name.clone()
            };
            let dims = &launch.dims[a];
            if dims.len() == 2 {
                let cols = dims[1].max(1);
                println!("{label} =");
                for (r, row) in values.chunks(cols).enumerate() {
                    println!("  [{r}] {}", join(row));
                }
                if values.is_empty() {
                    println!("  (empty)");
                }
            } else {
                println!("{label:width$} = {}", join(values));
            }
        }
    }
}

fn join(values: &[interp::Value]) -> String {
    values
        .iter()
        .map(|v| v.to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Prints races, faults, divergence and schedule problems to stderr.
pub fn report_findings(
    src: &Source,
    launch: &Launch,
    out: &Outcome,
    infeasible: Option<&Infeasible>,
) {
    for race in &out.races {
        eprint!("{}", render_race(src, launch, race, &[]));
    }
    if let Some(f) = &out.fault {
        eprint!("{}", render_fault(src, launch, f));
    }
    for d in &out.divergences {
        eprintln!("{}", divergence_message(d));
    }
    if let Some(i) = infeasible {
        eprintln!("schedule not followed: {}", i.reason);
    }
    if out.races.is_empty()
        && out.fault.is_none()
        && out.divergences.is_empty()
        && infeasible.is_none()
    {
        eprintln!("no race, fault or divergence in this execution");
    }
}

pub fn race_json(launch: &Launch, race: &Race) -> serde_json::Value {
    let access = |a: &interp::Access| {
        json!({
            "group": a.thread.group,
            "thread": a.thread.local,
            "kind": a.kind,
            "span": [a.span.start, a.span.end],
            "step": a.step,
            "epoch": a.epoch,
        })
    };
    json!({
        "array": launch.kernel.arrays[race.array].name,
        "instance": race.instance,
        "index": race.index,
        "first": access(&race.first),
        "second": access(&race.second),
    })
}

/// The `--json` form of one execution.
pub fn outcome_json(
    launch: &Launch,
    schedule: &str,
    out: &Outcome,
    infeasible: Option<&Infeasible>,
) -> serde_json::Value {
    let arrays: serde_json::Map<String, serde_json::Value> = launch
        .kernel
        .arrays
        .iter()
        .enumerate()
        .map(|(a, d)| (d.name.clone(), json!(out.memory.arrays[a])))
        .collect();
    json!({
        "kernel": launch.kernel.name,
        "launch": launch_json(launch),
        "scheduler": schedule,
        "steps": out.steps,
        "schedule": out.schedule,
        "arrays": arrays,
        "races": out.races.iter().map(|r| race_json(launch, r)).collect::<Vec<_>>(),
        "fault": out.fault,
        "divergences": out.divergences,
        "infeasible": infeasible,
        "clean": out.is_clean() && infeasible.is_none(),
    })
}

pub fn launch_json(launch: &Launch) -> serde_json::Value {
    let params: serde_json::Map<String, serde_json::Value> = launch
        .kernel
        .params
        .iter()
        .zip(&launch.params)
        .map(|(p, v)| (p.name.clone(), json!(v)))
        .collect();
    json!({
        "groups": launch.groups,
        "local_size": launch.local_size,
        "monoid": launch.monoid.name(),
        "params": params,
        "max_steps": launch.max_steps,
    })
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
    pub schedule: ScheduleArgs,
    #[arg(long, value_enum, default_value = "text")]
    pub format: TraceFormat,
    #[command(flatten)]
    pub view: super::trace_view::TraceView,
}

pub fn trace(args: &TraceArgs) -> CmdResult {
    let (src, launch) = args.launch.launch()?;
    let scheduler = args.schedule.scheduler(&launch)?;
    if let Some(t) = args.view.thread.filter(|&t| t >= launch.threads()) {
        return Err(Failure::usage(format!(
            "--thread {t}: the launch has threads 0..{}",
            launch.threads()
        )));
    }
    if args.view.snapshots && args.format == TraceFormat::Json {
        return Err(Failure::usage(
            "--snapshots prints a text table; use it without --format json",
        ));
    }
    let racing = super::trace_view::racing_steps(&launch, &scheduler);
    let mut tracer = Tracer::new(&src, &launch, args.format).with_view(args.view.clone(), racing);
    let (out, infeasible) = sim::run(&launch, &scheduler, &mut tracer);
    if args.format == TraceFormat::Text {
        if args.view.snapshots {
            tracer.snapshots.print(&launch, &tracer.shadow);
        }
        println!("-- {} steps", out.steps);
        print_arrays(&launch, &out, &[]);
        report_findings(&src, &launch, &out, infeasible.as_ref());
    } else {
        let end = json!({"event": "end", "steps": out.steps, "clean": out.is_clean() && infeasible.is_none(),
            "races": out.races.iter().map(|r| race_json(&launch, r)).collect::<Vec<_>>(), "fault": out.fault});
        println!("{end}");
    }
    Ok(verdict_code(&out, infeasible.as_ref()))
}

/// Prints one line (or JSON record) per rule application.
pub struct Tracer<'a> {
    src: &'a Source,
    launch: &'a Launch,
    format: TraceFormat,
    step: u64,
    view: super::trace_view::TraceView,
    /// Steps taking part in a race, with a note (see `trace_view::racing_steps`).
    racing: std::collections::BTreeMap<u64, String>,
    shadow: super::trace_view::Shadow,
    snapshots: super::trace_view::Snapshots,
    /// K-BARRIER applications so far: they are numbered B1, B2, ... (step numbers count
    /// K-STEPs, as schedules and race reports do).
    barriers: u64,
    header: bool,
}

impl<'a> Tracer<'a> {
    pub fn new(src: &'a Source, launch: &'a Launch, format: TraceFormat) -> Self {
        let shadow = super::trace_view::Shadow::new(launch);
        let mut snapshots = super::trace_view::Snapshots::default();
        snapshots.initial(launch, &shadow);
        Tracer {
            src,
            launch,
            format,
            step: 0,
            view: Default::default(),
            racing: Default::default(),
            shadow,
            snapshots,
            barriers: 0,
            header: false,
        }
    }

    /// With the teaching options of `trace` and the racing steps to mark.
    pub fn with_view(
        mut self,
        view: super::trace_view::TraceView,
        racing: std::collections::BTreeMap<u64, String>,
    ) -> Self {
        self.view = view;
        self.racing = racing;
        self
    }

    fn header(&mut self) {
        if self.format == TraceFormat::Text && !self.header {
            self.header = true;
            println!(
                "{:>6}  {:<9} {:<10} {:<44} changes",
                "step", "thread", "rule", "statement"
            );
        }
    }
}

impl Observer for Tracer<'_> {
    fn step(&mut self, info: &StepInfo) {
        let k = &self.launch.kernel;
        use interp::notation::value;
        let change = if let Some((v, old, new)) = &info.var_change {
            format!("{}: {} -> {}", k.vars[*v].name, value(old), value(new))
        } else if let (Some(e), Some((old, new))) = (&info.write, &info.elem_change) {
            format!(
                "{}: {} -> {}",
                elem_name(self.launch, e.array, e.instance, &e.index),
                value(old),
                value(new)
            )
        } else {
            String::new()
        };
        let global = info.thread.group * self.launch.local_size + info.thread.local;
        if !self.view.shows_step(self.step, global) {
            self.shadow.apply(info);
            self.step += 1;
            return;
        }
        let stmt = self.src.statement(&info.span);
        let core = interp::notation::find_stmt(k, &info.span, info.rule)
            .map(|s| interp::notation::stmt(k, s))
            .unwrap_or_else(|| stmt.clone());
        let reads = if self.view.reads {
            self.shadow.reads(self.launch, info)
        } else {
            String::new()
        };
        let race = self.racing.get(&self.step).cloned();
        self.header();
        match self.format {
            TraceFormat::Text => {
                let mut extra = String::new();
                for part in [reads.as_str(), race.as_deref().unwrap_or("")] {
                    if !part.is_empty() {
                        extra.push_str(if change.is_empty() && extra.is_empty() {
                            ""
                        } else {
                            "; "
                        });
                        extra.push_str(part);
                    }
                }
                let line = format!(
                    "{:>6}  g{}.t{:<5} {:<10} {:<44} {change}{extra}",
                    self.step,
                    info.thread.group,
                    info.thread.local,
                    info.rule.name(),
                    if self.view.core { &core } else { &stmt },
                );
                println!("{}", line.trim_end());
            }
            TraceFormat::Json => println!(
                "{}",
                json!({"event": "step", "step": self.step, "group": info.thread.group,
                    "thread": info.thread.local, "rule": info.rule, "statement": stmt,
                    "core": core,
                    "line": lang::render::line_col(&self.src.text, info.span.start).0,
                    "change": change, "race": race,
                    "reads": self.view.reads.then_some(reads)})
            ),
        }
        self.shadow.apply(info);
        self.step += 1;
    }

    fn barrier(&mut self, info: &BarrierInfo) {
        self.barriers += 1;
        self.snapshots
            .barrier(self.launch, &self.shadow, self.barriers, info);
        if !self.view.shows_barrier(self.launch, self.step, info.group) {
            return;
        }
        self.header();
        match self.format {
            TraceFormat::Text => println!(
                "{:>6}  g{:<8} {:<10} epoch {} begins{}",
                format!("B{}", self.barriers),
                info.group,
                "K-BARRIER",
                info.epoch,
                info.divergence
                    .as_ref()
                    .map(|d| format!(" (divergence: {d})"))
                    .unwrap_or_default()
            ),
            TraceFormat::Json => println!(
                "{}",
                json!({"event": "barrier", "rule": "K-BARRIER", "number": self.barriers, "group": info.group,
                    "epoch": info.epoch, "divergence": info.divergence})
            ),
        }
    }
}
