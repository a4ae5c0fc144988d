//! The one place where verification runs a kernel: the fast executor where it supports the
//! launch, the reference semantics (POPL 2014 Figures 6 and 7, canonical schedule)
//! otherwise.
//!
//! One run under one schedule is enough for everything verification asks of an execution:
//! for a race-free kernel every schedule ends in the same store (Lemma 5.4), and a race,
//! if there is one, shows in every schedule up to the first barrier interval where it
//! happens (the accesses of a barrier interval do not depend on the order of the steps
//! that precede the race).

use interp::launch::{Launch, Memory};
use interp::{Fault, Race};

/// Which engine ran an execution.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Engine {
    /// `interp::exec::run_canonical`, the reference semantics.
    Reference,
    /// `interp::fast::run`.
    Fast,
}

impl Engine {
    pub fn name(self) -> &'static str {
        match self {
            Engine::Reference => "reference semantics",
            Engine::Fast => "fast executor",
        }
    }
}

/// What verification needs to know of one execution.
#[derive(Clone, Debug)]
pub struct Execution {
    /// The final array store.
    pub memory: Memory,
    /// The races found (one per pair of statements), empty for a race-free execution.
    pub races: Vec<Race>,
    /// The fault that stopped the execution, if any (including the step bound).
    pub fault: Option<Fault>,
    /// Number of barriers that fired divergently (threads of a group at different barriers,
    /// or some terminated while others wait); both engines report them.
    pub divergences: usize,
    /// Number of K-STEP applications.
    pub steps: u64,
    pub engine: Engine,
}

impl Execution {
    /// The final contents of (the only instance of) array `a`.
    pub fn array(&self, a: usize) -> &[interp::Value] {
        &self.memory.arrays[a][0]
    }
}

/// Runs `launch` once: with the fast executor (`jobs` worker threads, 0 for one per core)
/// unless it does not support the launch (the `list` monoid), else with the reference
/// semantics. `races`: whether races must be looked for (a run whose only purpose is its
/// result skips the race tracking).
pub fn execute(launch: &Launch, races: bool, jobs: usize) -> Execution {
    let opts = interp::fast::FastOptions {
        jobs,
        track_races: races,
    };
    match interp::fast::run(launch, &opts) {
        Ok(out) => Execution {
            memory: out.memory,
            races: out.races.into_iter().map(|r| r.race).collect(),
            fault: out.fault,
            divergences: out.divergences.len(),
            steps: out.steps,
            engine: Engine::Fast,
        },
        Err(_) => reference(launch),
    }
}

/// Runs `launch` with the reference semantics under the canonical schedule.
pub fn reference(launch: &Launch) -> Execution {
    let out = interp::exec::run_canonical(launch);
    Execution {
        memory: out.memory,
        races: out.races,
        fault: out.fault,
        divergences: out.divergences.len(),
        steps: out.steps,
        engine: Engine::Reference,
    }
}
