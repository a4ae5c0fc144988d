//! The canonical execution of a launch, by either engine: the one place where a caller
//! chooses between the reference semantics ([`crate::exec::run_canonical`]) and the fast
//! executor ([`crate::fast::run`]).
//!
//! Both engines follow the canonical schedule (the lowest-numbered runnable thread; see
//! [`crate::exec::run_canonical`] and the soundness argument in [`crate::fast`]), so they
//! return the same [`Execution`]: final memory, races (the first of each statement pair, in
//! the order found, with the same accesses), the fault, every divergent barrier and the
//! number of K-STEPs. What only one engine knows is kept beside it in [`Canonical`]: the
//! recorded schedule (reference), the number of conflicting pairs per race and of barrier
//! intervals (fast). `tests/engines.rs` checks the equality on every example and on
//! generated kernels.

use crate::exec::{run_canonical, Schedule};
use crate::fast::{self, FastOptions, Unsupported};
use crate::fault::{Fault, Faults};
use crate::launch::{Launch, Memory};
use crate::race::Race;
use crate::reference::BarrierInfo;
use serde::Serialize;

/// Which engine runs the canonical schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Engine {
    /// The small-step semantics of POPL 2014 Figures 6 and 7 (any launch).
    Reference,
    /// The compiled executor (every monoid but `list`).
    Fast,
}

impl Engine {
    /// `reference` or `fast`, as in `--engine` and the JSON outputs.
    pub fn id(self) -> &'static str {
        match self {
            Engine::Reference => "reference",
            Engine::Fast => "fast",
        }
    }

    /// `reference semantics` or `fast executor`, for sentences.
    pub fn name(self) -> &'static str {
        match self {
            Engine::Reference => "reference semantics",
            Engine::Fast => "fast executor",
        }
    }
}

/// How to run.
#[derive(Clone, Debug)]
pub struct Options {
    /// Worker threads of the fast executor; 0 = one per core.
    pub jobs: usize,
    /// Look for races. The reference semantics always does; the fast executor skips the
    /// tracking when this is off (a run that only needs its result), and then reports none.
    pub track_races: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            jobs: 0,
            track_races: true,
        }
    }
}

/// What the canonical execution of a launch found: the same from both engines.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Execution {
    /// The final store (unspecified after a fault).
    pub memory: Memory,
    /// One race per distinct pair of statements ([`Race::key`]), the first found.
    pub races: Vec<Race>,
    /// The fault that ended the execution (the step bound included), else the first
    /// fault it went on past ([`crate::exec::Outcome::fault`]).
    pub fault: Option<Fault>,
    /// Every fault, each (statement, kind) once with its count, in the order of first
    /// occurrence.
    pub faults: Faults,
    /// The first firing of each distinct divergent barrier.
    pub divergences: Vec<BarrierInfo>,
    /// K-STEP applications (up to the fault; `max_steps` at the step bound).
    pub steps: u64,
    /// What the SIMT execution cost, when warps run in lock-step ([`crate::warp`]).
    pub simt: Option<crate::warp::SimtCost>,
}

impl Execution {
    /// No harmful race (benign ones under the race policy do not count), no fault, no
    /// divergence.
    pub fn is_clean(&self) -> bool {
        crate::race::all_benign(&self.races) && self.fault.is_none() && self.divergences.is_empty()
    }

    /// The final contents of instance 0 of array `a`.
    pub fn array(&self, a: usize) -> &[crate::Value] {
        &self.memory.arrays[a][0]
    }
}

/// One canonical execution, with what only the engine that ran it knows.
#[derive(Clone, Debug)]
pub struct Canonical {
    pub execution: Execution,
    pub engine: Engine,
    /// Why the fast executor did not run when it was preferred ([`run_preferred`]).
    pub fallback: Option<String>,
    /// The recorded schedule (always by the reference semantics; by the fast executor
    /// when asked, [`run_recording`]).
    pub schedule: Option<Schedule>,
    /// Per race, the number of conflicting access pairs between its two statements (fast
    /// executor with race tracking only; the reference semantics stops at the first).
    pub race_pairs: Option<Vec<u64>>,
    /// Barrier intervals executed, summed over work-groups (fast executor only).
    pub intervals: Option<u64>,
}

/// Runs `launch` along the canonical schedule on `engine`; the fast executor refuses
/// launches it does not support (the `list` monoid).
pub fn run(launch: &Launch, engine: Engine, opts: &Options) -> Result<Canonical, Unsupported> {
    run_recording(launch, engine, opts, false)
}

/// [`run`]; with `schedule`, the fast executor records the schedule too
/// ([`fast::run_with_schedule`]; the reference semantics always does).
pub fn run_recording(
    launch: &Launch,
    engine: Engine,
    opts: &Options,
    schedule: bool,
) -> Result<Canonical, Unsupported> {
    match engine {
        Engine::Reference => Ok(reference(launch)),
        Engine::Fast => {
            let fast_opts = FastOptions {
                jobs: opts.jobs,
                track_races: opts.track_races,
            };
            let out = if schedule {
                fast::run_with_schedule(launch, &fast_opts)?
            } else {
                fast::run(launch, &fast_opts)?
            };
            let (races, pairs) = out.races.into_iter().map(|r| (r.race, r.count)).unzip();
            Ok(Canonical {
                execution: Execution {
                    memory: out.memory,
                    races,
                    fault: out.fault,
                    faults: out.faults,
                    divergences: out.divergences,
                    steps: out.steps,
                    simt: out.simt,
                },
                engine: Engine::Fast,
                fallback: None,
                schedule: out.schedule,
                race_pairs: opts.track_races.then_some(pairs),
                intervals: Some(out.intervals),
            })
        }
    }
}

/// Runs `launch` on the fast executor where it supports the launch, else on the reference
/// semantics with the reason in [`Canonical::fallback`] (for the caller to say: never a
/// silent switch in what a user sees).
pub fn run_preferred(launch: &Launch, opts: &Options) -> Canonical {
    run_preferred_recording(launch, opts, false)
}

/// [`run_preferred`]; with `schedule`, the fast executor records the schedule too.
pub fn run_preferred_recording(launch: &Launch, opts: &Options, schedule: bool) -> Canonical {
    run_recording(launch, Engine::Fast, opts, schedule).unwrap_or_else(|why| Canonical {
        fallback: Some(why.to_string()),
        ..reference(launch)
    })
}

fn reference(launch: &Launch) -> Canonical {
    let out = run_canonical(launch);
    Canonical {
        execution: Execution {
            memory: out.memory,
            races: out.races,
            fault: out.fault,
            faults: out.faults,
            divergences: out.divergences,
            steps: out.steps,
            simt: out.simt,
        },
        engine: Engine::Reference,
        fallback: None,
        schedule: Some(out.schedule),
        race_pairs: None,
        intervals: None,
    }
}
