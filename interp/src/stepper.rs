//! An execution driven one choice at a time, for teaching: the state machine behind
//! `ksim step` (and, later, the HTML trace page).
//!
//! It runs the reference semantics exactly as [`crate::exec::run`] does — K-STEP for the
//! chosen thread, then every enabled K-BARRIER fires at once, the race tracker sees every
//! access — but the caller picks each thread. Going back one step replays the schedule
//! without its last choice from the initial state: the semantics is deterministic given
//! the schedule, so the configuration it reaches is exactly the earlier one, and nothing
//! but the schedule has to be kept.

use crate::exec::Schedule;
use crate::fault::Fault;
use crate::launch::Launch;
use crate::race::{Race, RaceTracker};
use crate::reference::{BarrierInfo, Elem, Rule, State, StepInfo, ThreadStatus};
use crate::value::Value;
use lang::ast::Span;
use serde::Serialize;

/// One K-STEP and what followed it: the barriers it enabled, which fired, and the races it
/// completed.
#[derive(Clone, Debug, Serialize)]
pub struct Step {
    /// Position in the execution (0-based).
    pub index: u64,
    /// Global index of the thread that stepped.
    pub thread: usize,
    pub info: StepInfo,
    pub barriers: Vec<BarrierInfo>,
    pub races: Vec<Race>,
}

/// Why a step was not taken.
#[derive(Clone, Debug, PartialEq)]
pub enum Refusal {
    /// Every thread has terminated.
    Final,
    /// The execution stopped at a fault; only `back` can go on.
    Faulted,
    /// The chosen thread cannot take a K-STEP; the reason says why.
    NotRunnable(String),
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::Final => write!(f, "every thread has terminated"),
            Refusal::Faulted => write!(f, "the execution stopped at a fault (use `back`)"),
            Refusal::NotRunnable(why) => write!(f, "{why}"),
        }
    }
}

/// Where a thread stands, as the configuration view shows it.
#[derive(Clone, Debug, Serialize)]
pub enum Status {
    /// Runnable: K-STEP may choose it. `rule` is the rule its next step applies, or the
    /// fault it would raise.
    Enabled {
        rule: Result<Rule, String>,
    },
    /// Its next statement is the `barrier` at `span`.
    AtBarrier {
        span: Span,
    },
    Done,
}

/// One thread of the configuration: the paper's ⟨σ_v, ss⟩.
#[derive(Clone, Debug, Serialize)]
pub struct ThreadView {
    /// Global index.
    pub thread: usize,
    pub group: usize,
    pub local: usize,
    /// Every variable of σ_v, by name (see [`crate::notation::var_name`]).
    pub vars: Vec<(String, Value)>,
    /// The next statement in core form, and its source span.
    pub next: Option<(String, Span)>,
    pub status: Status,
}

/// One array instance of σ_A.
#[derive(Clone, Debug, Serialize)]
pub struct ArrayView {
    pub array: usize,
    pub instance: usize,
    pub values: Vec<Value>,
    /// Row-major offsets written by the last K-STEP.
    pub changed: Vec<usize>,
}

/// The configuration (σ_A, K) with each thread's status.
#[derive(Clone, Debug, Serialize)]
pub struct Config {
    pub steps: u64,
    /// Barrier epoch per work-group.
    pub epochs: Vec<u64>,
    pub threads: Vec<ThreadView>,
    pub arrays: Vec<ArrayView>,
    pub is_final: bool,
}

/// What [`Stepper::run`] did.
#[derive(Clone, Debug, Default)]
pub struct Run {
    /// K-STEPs taken.
    pub steps: u64,
    /// The threads chosen, run-length encoded.
    pub schedule: Schedule,
    /// The steps that fired a K-BARRIER or completed a race, in order.
    pub events: Vec<Step>,
    /// The fault that stopped the run.
    pub fault: Option<Fault>,
}

/// Where a run of canonical choices stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Until {
    /// After the next K-BARRIER fires.
    Barrier,
    /// After the step that completes a race not reported before.
    Race,
    /// At the end of the execution.
    End,
}

/// An execution under construction.
pub struct Stepper<'a> {
    launch: &'a Launch,
    state: State,
    tracker: RaceTracker,
    schedule: Schedule,
    steps: u64,
    races: Vec<Race>,
    divergences: Vec<BarrierInfo>,
    fault: Option<Fault>,
    /// Barriers enabled in the initial state (a kernel that starts with `barrier`).
    initial_barriers: Vec<BarrierInfo>,
    last: Option<Step>,
}

impl<'a> Stepper<'a> {
    /// The initial configuration (with any barrier enabled there already fired).
    pub fn new(launch: &'a Launch) -> Stepper<'a> {
        let mut s = Stepper {
            launch,
            state: State::initial(launch),
            tracker: RaceTracker::for_launch(launch),
            schedule: Schedule::default(),
            steps: 0,
            races: Vec::new(),
            divergences: Vec::new(),
            fault: None,
            initial_barriers: Vec::new(),
            last: None,
        };
        s.initial_barriers = s.fire_barriers();
        s
    }

    /// The configuration reached by following `schedule` from the initial one.
    pub fn replay(launch: &'a Launch, schedule: &Schedule) -> Result<Stepper<'a>, String> {
        let mut s = Stepper::new(launch);
        for (k, t) in schedule.choices().enumerate() {
            let stepped = s
                .step(t)
                .map_err(|why| format!("step {k} of the schedule (thread {t}): {why}"))?;
            if stepped.is_err() {
                break; // a fault ends the execution
            }
        }
        Ok(s)
    }

    pub fn launch(&self) -> &'a Launch {
        self.launch
    }

    pub fn state(&self) -> &State {
        &self.state
    }

    /// The choices made so far, in the `--schedule @FILE` format.
    pub fn schedule(&self) -> &Schedule {
        &self.schedule
    }

    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// Every race found so far, one per pair of statements (`Race::key`).
    pub fn races(&self) -> &[Race] {
        &self.races
    }

    pub fn divergences(&self) -> &[BarrierInfo] {
        &self.divergences
    }

    pub fn fault(&self) -> Option<&Fault> {
        self.fault.as_ref()
    }

    pub fn initial_barriers(&self) -> &[BarrierInfo] {
        &self.initial_barriers
    }

    /// The last K-STEP taken.
    pub fn last(&self) -> Option<&Step> {
        self.last.as_ref()
    }

    /// The thread the canonical schedule runs next: the lowest runnable one.
    pub fn canonical(&self) -> Option<usize> {
        self.state.runnable().first()
    }

    /// K-STEP for thread `t`, then every barrier that became enabled. A fault (the step
    /// bound included) ends the execution and is returned as `Ok` with the fault recorded
    /// in [`Stepper::fault`]: it is something that happened, not a refused command.
    pub fn step(&mut self, t: usize) -> Result<Result<Step, Fault>, Refusal> {
        if self.fault.is_some() {
            return Err(Refusal::Faulted);
        }
        if self.state.is_final() {
            return Err(Refusal::Final);
        }
        if !self.state.runnable().contains(t) {
            let why = if t >= self.launch.threads() {
                format!(
                    "there is no thread {t}: the launch has threads 0 to {}",
                    self.launch.threads() - 1
                )
            } else {
                match self.state.status(self.launch, t) {
                    ThreadStatus::AtBarrier => format!("thread {t} waits at a barrier"),
                    ThreadStatus::Terminated => format!("thread {t} has terminated"),
                    ThreadStatus::Runnable => format!("thread {t} cannot step"),
                }
            };
            return Err(Refusal::NotRunnable(why));
        }
        if self.steps >= self.launch.max_steps {
            let f = Fault::step_bound(self.launch.max_steps);
            self.fault = Some(f.clone());
            return Ok(Err(f));
        }
        let epochs = self.state.thread_epochs(self.launch, t);
        let info = match self.state.k_step(self.launch, t) {
            Ok(info) => info,
            Err(f) => {
                self.fault = Some(f.clone());
                return Ok(Err(f));
            }
        };
        let mut races = Vec::new();
        for (e, access) in info.accesses(self.launch, self.steps, epochs) {
            races.extend(
                self.tracker
                    .access(e.array, e.instance, e.offset, &e.index, access),
            );
        }
        self.races.extend(races.iter().cloned());
        self.schedule.push(t);
        let index = self.steps;
        self.steps += 1;
        let barriers = self.fire_barriers();
        let step = Step {
            index,
            thread: t,
            info,
            barriers,
            races,
        };
        self.last = Some(step.clone());
        Ok(Ok(step))
    }

    /// Takes canonical steps until `until` holds, the execution ends or a fault stops it.
    /// Only the steps that fired a barrier or found a race are kept: a run to the end of
    /// a long execution keeps no more than its schedule.
    pub fn run(&mut self, until: Until) -> Run {
        let mut run = Run::default();
        while let Some(t) = self.canonical() {
            match self.step(t) {
                Ok(Ok(step)) => {
                    run.steps += 1;
                    run.schedule.push(t);
                    let stop = match until {
                        Until::Barrier => !step.barriers.is_empty(),
                        Until::Race => !step.races.is_empty(),
                        Until::End => false,
                    };
                    if !step.barriers.is_empty() || !step.races.is_empty() {
                        run.events.push(step);
                    }
                    if stop {
                        break;
                    }
                }
                Ok(Err(f)) => {
                    run.fault = Some(f);
                    break;
                }
                Err(_) => break,
            }
        }
        run
    }

    /// Undoes the last K-STEP (and the barriers it fired); false at the initial
    /// configuration.
    pub fn back(&mut self) -> bool {
        if self.schedule.is_empty() && self.fault.is_none() {
            return false;
        }
        // A fault took no step: undoing it just clears it.
        let prefix = if self.fault.is_some() {
            self.schedule.clone()
        } else {
            self.schedule.prefix(self.steps - 1)
        };
        *self =
            Stepper::replay(self.launch, &prefix).expect("a prefix of a taken schedule replays");
        true
    }

    fn fire_barriers(&mut self) -> Vec<BarrierInfo> {
        let fired = crate::exec::fire_barriers(&mut self.state, self.launch);
        for b in &fired {
            self.tracker.fired(b);
            if b.divergence.is_some()
                && !self
                    .divergences
                    .iter()
                    .any(|d| d.divergence == b.divergence)
            {
                self.divergences.push(b.clone());
            }
        }
        fired
    }

    /// The configuration: every thread's variables, next statement and status, and the
    /// arrays with the cells the last K-STEP wrote.
    pub fn config(&self) -> Config {
        let launch = self.launch;
        let threads = (0..launch.threads())
            .map(|t| thread_view(launch, &self.state, t))
            .collect();
        let memory = self.state.memory(launch);
        let written: Option<&Elem> = self.last.as_ref().and_then(|s| s.info.write.as_ref());
        let arrays = memory
            .arrays
            .into_iter()
            .enumerate()
            .flat_map(|(a, instances)| {
                instances
                    .into_iter()
                    .enumerate()
                    .map(move |(instance, values)| ArrayView {
                        array: a,
                        instance,
                        changed: written
                            .filter(|e| e.array == a && e.instance == instance)
                            .map(|e| vec![e.offset])
                            .unwrap_or_default(),
                        values,
                    })
            })
            .collect();
        Config {
            steps: self.steps,
            epochs: (0..launch.groups).map(|g| self.state.epoch(g)).collect(),
            threads,
            arrays,
            is_final: self.state.is_final(),
        }
    }
}

/// Thread `t` of `state` as the configuration view shows it: the paper's ⟨σ_v, ss⟩ with its
/// next statement in core form and the rule its next step would apply (a dry run of the
/// step), for `ksim step` and the nodes of `ksim graph`.
pub fn thread_view(launch: &Launch, state: &State, t: usize) -> ThreadView {
    let k = &launch.kernel;
    let vars = (0..k.vars.len())
        .map(|v| (crate::notation::var_name(k, v), state.var(t, v).clone()))
        .collect();
    let (status, next) = match state.status(launch, t) {
        ThreadStatus::Terminated => (Status::Done, None),
        ThreadStatus::AtBarrier => {
            let span = state.next_span(launch, t).expect("at a barrier");
            (
                Status::AtBarrier { span: span.clone() },
                Some(("barrier".into(), span)),
            )
        }
        ThreadStatus::Runnable => {
            // A dry run of the step tells the rule (S-ITE-T or -F, ...).
            let span = state.next_span(launch, t).expect("runnable");
            match state.step(launch, t) {
                Ok((_, info)) => {
                    let text = crate::notation::find_stmt(k, &info.span, info.rule)
                        .map(|s| crate::notation::stmt(k, s))
                        .unwrap_or_default();
                    (
                        Status::Enabled {
                            rule: Ok(info.rule),
                        },
                        Some((text, span)),
                    )
                }
                Err(f) => (
                    Status::Enabled {
                        rule: Err(f.kind.to_string()),
                    },
                    Some((String::new(), span)),
                ),
            }
        }
    };
    ThreadView {
        thread: t,
        group: t / launch.local_size,
        local: t % launch.local_size,
        vars,
        next,
        status,
    }
}
