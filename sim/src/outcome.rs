//! Result models of single executions — one run (`ksim run`, `ksim trace`) and one race
//! check (`ksim races`) — with their JSON form (docs/json.md; serialise with
//! [`to_json`]) and their text views. The CLI builds a model with one call, hands it to a
//! view and takes its exit code from it.

use crate::explore::model::plural;
use crate::explore::{orders, FoundRace};
use crate::schedule::{self, Infeasible, Schedule, Scheduler};
use crate::text::{SourceText, Text};
use interp::canonical::{self, Canonical, Engine};
use interp::exec::Outcome;
use interp::fault::Faults;
use interp::reference::BarrierInfo;
use interp::warp::{SimtCost, SimtCounts};
use interp::{Access, AccessKind, Fault, Launch, Memory, Race, Value};
use serde::{Serialize, Serializer};
use std::collections::BTreeMap;
use std::time::Instant;

/// Pretty JSON with the keys of every object in alphabetical order (the order ksim's JSON
/// outputs have always had).
pub fn to_json(model: &impl Serialize) -> String {
    let value = serde_json::to_value(model).expect("models serialise");
    serde_json::to_string_pretty(&value).expect("JSON")
}

/// The launch as the JSON outputs describe it.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct LaunchInfo {
    pub groups: usize,
    pub local_size: usize,
    pub monoid: &'static str,
    /// Each parameter's bound value, by name.
    pub params: BTreeMap<String, Value>,
    pub max_steps: u64,
    /// `--race-policy`: which conflicting pairs are errors (`strict`, `same-value`).
    pub race_policy: &'static str,
    /// `--atomicity`: what one thread step executes (`statement`, `access`).
    pub atomicity: &'static str,
    /// `--warp-size`: lanes per warp in SIMT lock-step (absent: threads interleave).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warp_size: Option<usize>,
}

impl LaunchInfo {
    pub fn of(launch: &Launch) -> LaunchInfo {
        LaunchInfo {
            groups: launch.groups,
            local_size: launch.local_size,
            monoid: launch.monoid.name(),
            params: launch
                .kernel
                .params
                .iter()
                .zip(&launch.params)
                .map(|(p, v)| (p.name.clone(), v.clone()))
                .collect(),
            max_steps: launch.max_steps,
            race_policy: launch.race_policy.name(),
            atomicity: launch.atomicity.name(),
            warp_size: launch.warp_size,
        }
    }
}

/// A race with its array's name: `{"array", "instance", "index", "first", "second"}`, each
/// access `{"group", "thread", "kind", "span": [start, end], "step", "epoch"}`.
#[derive(Clone, Debug, PartialEq)]
pub struct RaceView {
    pub race: Race,
    pub array: String,
}

impl RaceView {
    pub fn of(launch: &Launch, race: &Race) -> RaceView {
        RaceView {
            race: race.clone(),
            array: launch.kernel.arrays[race.array].name.clone(),
        }
    }
}

/// One access of a race in the JSON outputs: thread, kind, statement span, step, epoch.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct AccessJson {
    pub group: usize,
    pub thread: usize,
    pub kind: AccessKind,
    pub span: [usize; 2],
    pub step: u64,
    pub epoch: u64,
}

impl From<&Access> for AccessJson {
    fn from(a: &Access) -> AccessJson {
        AccessJson {
            group: a.thread.group,
            thread: a.thread.local,
            kind: a.kind,
            span: [a.span.start, a.span.end],
            step: a.step,
            epoch: a.epoch,
        }
    }
}

/// The JSON form of a [`RaceView`] (its schema is this struct's).
#[derive(Serialize, schemars::JsonSchema)]
pub(crate) struct RaceJson<'a> {
    array: &'a str,
    instance: usize,
    index: &'a [usize],
    first: AccessJson,
    second: AccessJson,
    benign: bool,
}

impl Serialize for RaceView {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        RaceJson {
            array: &self.array,
            instance: self.race.instance,
            index: &self.race.index,
            first: (&self.race.first).into(),
            second: (&self.race.second).into(),
            benign: self.race.benign(),
        }
        .serialize(s)
    }
}

/// Every array's final contents by name (a list of instances, each row-major), kept in
/// declaration order for the text view.
#[derive(Clone, Debug, PartialEq)]
pub struct Arrays(pub Vec<(String, Vec<Vec<Value>>)>);

impl Arrays {
    pub fn of(launch: &Launch, memory: Memory) -> Arrays {
        let names = launch.kernel.arrays.iter().map(|a| a.name.clone());
        Arrays(names.zip(memory.arrays).collect())
    }

    /// Every array (or those in `show`): 1D as one line, 2D as one line per row.
    pub fn text(&self, launch: &Launch, show: &[String]) -> String {
        let width = self.0.iter().map(|a| a.0.len()).max().unwrap_or(0);
        let mut s = String::new();
        for (a, (name, instances)) in self.0.iter().enumerate() {
            if !show.is_empty() && !show.contains(name) {
                continue;
            }
            for (inst, values) in instances.iter().enumerate() {
                let label = if instances.len() > 1 {
                    format!("{name} (group {inst})")
                } else {
                    name.clone()
                };
                let dims = &launch.dims[a];
                if dims.len() == 2 {
                    let cols = dims[1].max(1);
                    s.push_str(&format!("{label} =\n"));
                    for (r, row) in values.chunks(cols).enumerate() {
                        s.push_str(&format!("  [{r}] {}\n", join(row)));
                    }
                    if values.is_empty() {
                        s.push_str("  (empty)\n");
                    }
                } else {
                    s.push_str(&format!(
                        "{} = {}\n",
                        crate::pad::left(&label, width),
                        join(values)
                    ));
                }
            }
        }
        s
    }
}

impl Serialize for Arrays {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.0.iter().map(|(k, v)| (k, v)))
    }
}

/// One execution under one scheduler: `ksim run`.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct RunReport {
    pub kernel: String,
    pub launch: LaunchInfo,
    /// The scheduler as the user named it: `canonical`, `round-robin`, `random`, `@FILE`.
    pub scheduler: String,
    /// The engine that ran: the fast executor (canonical schedule) or the reference
    /// semantics.
    pub engine: Engine,
    /// Why the fast executor did not run where it was preferred (`--engine auto`).
    pub fallback_reason: Option<String>,
    pub steps: u64,
    /// The thread choices, run-length encoded; `None` when the fast executor ran without
    /// recording them (`ksim run` records them for `--json` only).
    pub schedule: Option<Schedule>,
    pub arrays: Arrays,
    pub races: Vec<RaceView>,
    /// The fault that ended the execution (a step bound included), else the first fault
    /// it went on past.
    pub fault: Option<Fault>,
    /// Every fault, each (statement, kind) once with its count, in the order of first
    /// occurrence (at most 100 listed).
    pub faults: Faults,
    pub divergences: Vec<BarrierInfo>,
    /// Where a replayed schedule could not be followed.
    pub infeasible: Option<Infeasible>,
    /// No race, fault, divergence or infeasible schedule (exit code 0).
    pub clean: bool,
    /// The seed of `--schedule random`.
    pub seed: Option<u64>,
    /// What the SIMT execution cost (`--warp-size` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub simt: Option<SimtCost>,
}

/// Runs `launch` once: the canonical schedule on `engine` (through
/// [`interp::canonical`]), any other scheduler on the reference semantics. `engine: None`
/// prefers the fast executor and falls back to the reference semantics where it must (a
/// schedule other than the canonical one, a launch the fast executor does not support),
/// saying why in [`RunReport::fallback_reason`]. `scheduler_name` is what the report calls
/// the scheduler. `schedule`: record the schedule on the fast executor too (the reference
/// semantics always does). `Some(Engine::Fast)` runs only the canonical schedule and only
/// the launches the fast executor supports: anything else is an `Err` saying so.
pub fn run(
    launch: &Launch,
    scheduler: &Scheduler,
    scheduler_name: &str,
    engine: Option<Engine>,
    jobs: usize,
    schedule: bool,
) -> Result<RunReport, String> {
    let opts = canonical::Options {
        jobs,
        track_races: true,
    };
    match (scheduler, engine) {
        (Scheduler::Canonical, None) => {
            let mut c = canonical::run_preferred_recording(launch, &opts, schedule);
            // The fast executor checks the step budget at loop back-edges and barriers, so
            // its memory at the step bound is a few statements past the canonical one's:
            // the reference semantics stops at the exact step.
            let bound = |c: &Canonical| {
                matches!(
                    c.execution.fault,
                    Some(Fault {
                        kind: interp::fault::FaultKind::StepBound { .. },
                        ..
                    })
                )
            };
            if c.engine == Engine::Fast && bound(&c) {
                c = canonical::run(launch, Engine::Reference, &opts)
                    .expect("the reference semantics runs every launch");
                c.fallback = Some(
                    "the run reached the step bound, where only the reference semantics \
                     gives the exact arrays"
                        .into(),
                );
            }
            Ok(RunReport::of_canonical(launch, scheduler_name, c))
        }
        (Scheduler::Canonical, Some(engine)) => {
            let c = canonical::run_recording(launch, engine, &opts, schedule)
                .map_err(|e| format!("--engine fast: {e}; use --engine reference"))?;
            Ok(RunReport::of_canonical(launch, scheduler_name, c))
        }
        (_, Some(Engine::Fast)) => Err(
            "--engine fast runs the canonical schedule only; use --engine reference for other schedules"
                .into(),
        ),
        (_, _) => {
            let (out, infeasible) = schedule::run(launch, scheduler, &mut interp::exec::Quiet);
            let mut report = RunReport::of_outcome(launch, scheduler_name, out, infeasible);
            if let Scheduler::Random { seed } = scheduler {
                report.seed = Some(*seed);
            }
            if engine.is_none() {
                report.fallback_reason = Some(format!(
                    "the fast executor follows the canonical schedule only, not `{scheduler_name}`"
                ));
            }
            Ok(report)
        }
    }
}

impl RunReport {
    /// The report of a canonical execution.
    pub fn of_canonical(launch: &Launch, scheduler: &str, c: Canonical) -> RunReport {
        let e = c.execution;
        let clean = e.is_clean();
        RunReport {
            kernel: launch.kernel.name.clone(),
            launch: LaunchInfo::of(launch),
            scheduler: scheduler.to_string(),
            engine: c.engine,
            fallback_reason: c.fallback,
            steps: e.steps,
            schedule: c.schedule,
            arrays: Arrays::of(launch, e.memory),
            races: e.races.iter().map(|r| RaceView::of(launch, r)).collect(),
            fault: e.fault,
            faults: e.faults,
            divergences: e.divergences,
            infeasible: None,
            clean,
            seed: None,
            simt: e.simt,
        }
    }

    /// The report of an execution of the reference semantics under any scheduler.
    pub fn of_outcome(
        launch: &Launch,
        scheduler: &str,
        out: Outcome,
        infeasible: Option<Infeasible>,
    ) -> RunReport {
        let clean = out.is_clean() && infeasible.is_none();
        RunReport {
            kernel: launch.kernel.name.clone(),
            launch: LaunchInfo::of(launch),
            scheduler: scheduler.to_string(),
            engine: Engine::Reference,
            fallback_reason: None,
            steps: out.steps,
            schedule: Some(out.schedule),
            arrays: Arrays::of(launch, out.memory),
            races: out.races.iter().map(|r| RaceView::of(launch, r)).collect(),
            fault: out.fault,
            faults: out.faults,
            divergences: out.divergences,
            infeasible,
            clean,
            seed: None,
            simt: out.simt,
        }
    }

    /// The text view: a header line and the arrays (only those named in `show`, if any) on
    /// stdout; races, fault, divergences and schedule problems on stderr.
    pub fn text(&self, launch: &Launch, src: SourceText, show: &[String]) -> Text {
        let seed = self
            .seed
            .map(|s| format!(" (seed {s})"))
            .unwrap_or_default();
        let mut out = format!(
            "{}, schedule {}{seed}, {} steps\n",
            crate::explore::model::launch_line(launch),
            self.scheduler,
            self.steps
        );
        if let Some(i) = &self.infeasible {
            let what = if i.thread.is_none() {
                "the schedule ended"
            } else {
                "the schedule could not be followed"
            };
            out.push_str(&format!(
                "{what} after {} steps, before the kernel ended: the arrays below are the store at that point, not a final result\n",
                self.steps
            ));
        }
        out.push_str(&self.arrays_text(launch, show));
        if let Some(simt) = &self.simt {
            out.push_str(&simt_text(simt));
        }
        Text {
            out,
            err: self.findings_text(launch, src),
        }
    }

    /// Every array (or those in `show`): 1D as one line, 2D as one line per row.
    pub fn arrays_text(&self, launch: &Launch, show: &[String]) -> String {
        self.arrays.text(launch, show)
    }

    /// Races, the fault, divergences and an unfollowed schedule, or that there were none.
    pub fn findings_text(&self, launch: &Launch, src: SourceText) -> String {
        let mut s = String::new();
        for r in &self.races {
            s.push_str(&src.race(launch, &r.race, &[]));
        }
        s.push_str(&src.faults(launch, self.fault.as_ref(), &self.faults));
        for d in &self.divergences {
            s.push_str(&src.divergence(launch, d));
        }
        if let Some(i) = &self.infeasible {
            s.push_str(&format!("schedule not followed: {}\n", i.reason));
        }
        let benign = self.races.iter().filter(|r| r.race.benign()).count();
        if self.clean && benign == 0 {
            s.push_str("no race, fault or divergence in this execution\n");
        } else if self.clean {
            s.push_str(&format!(
                "no harmful race, fault or divergence in this execution: {benign} benign race(s)\n"
            ));
        }
        s.push_str(&format!("race policy: {}\n", launch.race_policy.name()));
        if launch.atomicity != interp::Atomicity::Statement {
            s.push_str(&format!("atomicity: {}\n", launch.atomicity.name()));
        }
        if let Some(w) = launch.warp_size {
            s.push_str(&format!("warp size: {w} (SIMT lock-step)\n"));
        }
        s
    }
}

/// The SIMT cost of a run (`ksim run --warp-size`): the totals, then one line per barrier
/// interval when there is more than one.
pub fn simt_text(simt: &SimtCost) -> String {
    let line = |c: &SimtCounts| {
        format!(
            "{}, {:.2} active lanes on average, {}",
            plural(c.instructions, "warp instruction", "warp instructions"),
            c.average_active(),
            plural(
                c.divergent_branches,
                "divergent branch",
                "divergent branches"
            ),
        )
    };
    let mut s = format!(
        "SIMT cost (warps of {}): {}\n",
        plural(simt.warp_size as u64, "thread", "threads"),
        line(&simt.total)
    );
    if simt.per_epoch.len() > 1 {
        for (k, c) in simt.per_epoch.iter().enumerate() {
            s.push_str(&format!("  barrier interval {k}: {}\n", line(c)));
        }
    }
    s
}

impl RunReport {
    /// The last record of `ksim trace --format json`:
    /// `{"event": "end", "steps", "clean", "races", "fault", "faults"}`.
    pub fn end_event(&self) -> String {
        let end = End {
            event: "end",
            steps: self.steps,
            clean: self.clean,
            races: &self.races,
            fault: &self.fault,
            faults: &self.faults,
        };
        serde_json::to_value(end).expect("JSON").to_string()
    }
}

/// The last record of `ksim trace --format json`.
#[derive(Serialize, schemars::JsonSchema)]
pub(crate) struct End<'a> {
    event: &'static str,
    steps: u64,
    clean: bool,
    races: &'a [RaceView],
    fault: &'a Option<Fault>,
    faults: &'a Faults,
}

fn join(values: &[Value]) -> String {
    let v: Vec<String> = values.iter().map(|v| v.to_string()).collect();
    v.join(" ")
}

/// A race with the number of conflicting access pairs between its two statements (`None`
/// from the reference semantics, which reports the first pair only).
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct CountedRace {
    #[serde(flatten)]
    pub race: RaceView,
    pub count: Option<u64>,
    /// The replayable race report written for it, if any (`ksim replay PATH`).
    pub report: Option<String>,
    /// A race the canonical run does not meet, found by exploring other orders
    /// ([`RacesReport::decide_other_orders`]): the schedule that reaches it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub other_schedule: Option<Schedule>,
}

/// What exploring every order decided about a canonical run whose only races are benign
/// ([`RacesReport::decide_other_orders`]).
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum OtherOrders {
    /// Every order explored, none with a harmful race: the verdict holds for the input.
    Clean { executions: u64, verdict: String },
    /// Harmful races in other orders: they follow the canonical run's in `races`, each
    /// with its `other_schedule`.
    Harmful { verdict: String },
    /// Not every order could be explored: the verdict holds for the canonical schedule
    /// only.
    CanonicalOnly { why: String },
}

/// The exact race check of one input: `ksim races`.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct RacesReport {
    pub kernel: String,
    pub launch: LaunchInfo,
    pub engine: Engine,
    /// Why the fast executor did not run (then the reference semantics decided).
    pub fallback_reason: Option<String>,
    pub threads: usize,
    /// Barrier intervals executed (fast executor only).
    pub intervals: Option<u64>,
    pub steps: u64,
    pub seconds: f64,
    /// No race, no fault and no divergence, and no atomics (exit code 0): with atomics the
    /// canonical execution does not decide the other schedules.
    pub race_free: bool,
    /// Whether the kernel uses atomics.
    pub atomics: bool,
    pub races: Vec<CountedRace>,
    /// The fault that ended the execution (a step bound included), else the first fault
    /// it went on past.
    pub fault: Option<Fault>,
    /// Every fault, each (statement, kind) once with its count (at most 100 listed).
    pub faults: Faults,
    pub divergences: Vec<BarrierInfo>,
    /// Under `--race-policy same-value`, when the canonical run met benign races only:
    /// what exploring every order decided.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub other_orders: Option<OtherOrders>,
}

/// Checks `launch` for races along the canonical schedule: on the fast executor where it
/// supports the launch (one canonical execution decides race-freedom for every schedule;
/// see `interp::fast`), else on the reference semantics.
pub fn check_races(launch: &Launch, jobs: usize) -> RacesReport {
    let start = Instant::now();
    let c = canonical::run_preferred(
        launch,
        &canonical::Options {
            jobs,
            track_races: true,
        },
    );
    let seconds = start.elapsed().as_secs_f64();
    let e = &c.execution;
    let count = |k: usize| c.race_pairs.as_ref().map(|p| p[k]);
    RacesReport {
        kernel: launch.kernel.name.clone(),
        launch: LaunchInfo::of(launch),
        engine: c.engine,
        fallback_reason: c.fallback.clone(),
        threads: launch.threads(),
        intervals: c.intervals,
        steps: e.steps,
        seconds,
        // With atomics one execution does not decide the others (see `interp::fast`).
        race_free: e.is_clean() && !launch.kernel.has_atomics(),
        atomics: launch.kernel.has_atomics(),
        races: (e.races.iter().enumerate())
            .map(|(k, r)| CountedRace {
                race: RaceView::of(launch, r),
                count: count(k),
                report: None,
                other_schedule: None,
            })
            .collect(),
        fault: e.fault.clone(),
        faults: e.faults.clone(),
        divergences: e.divergences.clone(),
        other_orders: None,
    }
}

impl RacesReport {
    /// No race, fault or divergence in the canonical execution (exit code 0; with atomics
    /// `race_free` stays false, since other schedules may take other paths).
    pub fn is_clean(&self) -> bool {
        self.races.iter().all(|r| r.race.race.benign())
            && self.fault.is_none()
            && self.divergences.is_empty()
    }

    /// Under `--race-policy same-value`, a canonical run whose only races are benign does
    /// not decide the input: in another order a benign pair can be harmful (a write that
    /// stored the element's value in one order changes it in another). Every order is then
    /// explored ([`crate::explore::orders`]) and the outcome kept in `other_orders`; the
    /// harmful races found join `races` (and are returned, for their race reports). Unless
    /// every order was explored clean, `race_free` is false; the exit code stays 0 when
    /// nothing harmful was found, as for a kernel with atomics, whose canonical run does not
    /// decide the other schedules either.
    pub fn decide_other_orders(&mut self, launch: &Launch) -> Vec<FoundRace> {
        let benign = self.races.iter().filter(|r| r.race.race.benign()).count();
        if benign == 0 || !self.is_clean() {
            return Vec::new();
        }
        let s = match orders::every_order(launch) {
            Ok(s) => s,
            Err(why) => {
                self.race_free = false;
                self.other_orders = Some(OtherOrders::CanonicalOnly { why });
                return Vec::new();
            }
        };
        let harmful: Vec<FoundRace> = (s.races.iter())
            .filter(|r| !r.race.benign())
            .cloned()
            .collect();
        let verdict = s.verdict.to_string();
        self.other_orders = Some(if !harmful.is_empty() {
            self.races.extend(harmful.iter().map(|r| CountedRace {
                race: RaceView::of(launch, &r.race),
                count: None,
                report: None,
                other_schedule: Some(r.schedule.clone()),
            }));
            self.race_free = false;
            OtherOrders::Harmful { verdict }
        } else if orders::covers_every_schedule(&s) {
            OtherOrders::Clean {
                executions: s.executions(),
                verdict,
            }
        } else {
            self.race_free = false;
            OtherOrders::CanonicalOnly {
                why: orders::why_not_covered(&s),
            }
        });
        harmful
    }

    /// The text view: each race, the fault and the divergences on stderr, the verdict
    /// line on stdout.
    pub fn text(&self, launch: &Launch, src: SourceText) -> Text {
        let mut err = String::new();
        if let Some(why) = &self.fallback_reason {
            err.push_str(&format!(
                "note: {why}; the reference semantics decides instead\n"
            ));
        }
        for r in &self.races {
            let mut notes = vec![match (&r.other_schedule, r.count) {
                (Some(s), _) => format!(
                    "harmful in another schedule ({} steps: {}); the canonical run met this \
                     pair, or its statements, as benign",
                    s.len(),
                    crate::explore::model::short_schedule(s, 12)
                ),
                (None, Some(n)) => format!(
                    "{n} conflicting access pair{} between these two statements",
                    if n == 1 { "" } else { "s" }
                ),
                (None, None) => {
                    "the reference semantics reports the first conflicting pair only".into()
                }
            }];
            if let Some(p) = &r.report {
                notes.push(format!("report: {p} (replay: ksim replay {p})"));
            }
            err.push_str(&src.race(launch, &r.race.race, &notes));
        }
        err.push_str(&src.faults(launch, self.fault.as_ref(), &self.faults));
        for d in &self.divergences {
            err.push_str(&src.divergence(launch, d));
        }
        let intervals = self
            .intervals
            .map(|k| format!(", {k} barrier interval{}", if k == 1 { "" } else { "s" }))
            .unwrap_or_default();
        let warps = launch
            .warp_size
            .map(|w| format!(", warps of {}", plural(w as u64, "thread", "threads")))
            .unwrap_or_default();
        let summary = format!(
            "{} threads{warps}{intervals}, {} steps, checked in {:.3} s, race policy {}",
            self.threads,
            self.steps,
            self.seconds,
            launch.race_policy.name()
        );
        let benign = self.races.iter().filter(|r| r.race.race.benign()).count();
        let harmful = self.races.len() - benign;
        let summary = if benign > 0 {
            format!("{summary}; {benign} benign race(s) listed above as warnings")
        } else {
            summary
        };
        let out = match (&self.fault, harmful, self.divergences.len()) {
            (Some(f), _, _) if matches!(f.kind, interp::fault::FaultKind::StepBound { .. }) => {
                format!("no verdict: non-terminating (no end within the step bound; {summary})")
            }
            (Some(f), _, _) if !f.kind.continues() || !launch.continue_after_faults => {
                format!("no verdict: the execution faulted ({summary})")
            }
            (Some(_), harmful, _) => format!(
                "no verdict: the execution faulted and went on past the faults, with {harmful} \
                 harmful race(s) ({summary})"
            ),
            (None, 0, 0) if self.atomics => format!(
                "no race in the canonical execution; the kernel uses atomics, so other schedules \
                 may take other paths: `ksim explore --exhaustive` checks them all ({summary})"
            ),
            (None, 0, 0) if benign > 0 => match &self.other_orders {
                Some(OtherOrders::Clean {
                    executions,
                    verdict,
                }) => format!(
                    "no harmful race for this input (every order of the benign pairs explored: \
                     {executions} executions, {verdict}; {summary})"
                ),
                Some(OtherOrders::CanonicalOnly { why }) => format!(
                    "no harmful race in the canonical schedule only: its {benign} benign race(s) \
                     may be harmful in another order, and {why} (`ksim explore --exhaustive \
                     --race-policy same-value` on a smaller launch checks every order; {summary})"
                ),
                _ => format!("no harmful race for this input ({summary})"),
            },
            (None, 0, 0) => format!("race-free for this input ({summary})"),
            (None, 0, d) => {
                format!("no race, but {d} divergent barrier(s): undefined on a device ({summary})")
            }
            (None, k, 0) => match &self.other_orders {
                Some(OtherOrders::Harmful { verdict }) => format!(
                    "{k} harmful race(s) in other schedules: the canonical run's {benign} benign \
                     race(s) are harmful in another order (every order explored, {verdict}; \
                     {summary})"
                ),
                _ => format!("{k} distinct race(s) ({summary})"),
            },
            (None, k, d) => {
                format!("{k} distinct race(s) and {d} divergent barrier(s) ({summary})")
            }
        };
        Text {
            out: out + "\n",
            err,
        }
    }
}
