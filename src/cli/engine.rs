//! Choosing the engine that runs a launch along the canonical schedule: the fast executor
//! where it supports the launch, else the reference semantics. Both give the same memory,
//! races (by statement pair), faults and barrier divergence; the differential tests check
//! it.

use interp::exec::run_canonical;
use interp::fast::{self, FastOptions};
use interp::reference::BarrierInfo;
use interp::{Fault, Launch, Memory, Race};

/// What the canonical execution of a launch found, whichever engine ran it.
pub struct Simulated {
    pub memory: Memory,
    /// One race per distinct pair of statements, with how many conflicting pairs the fast
    /// executor counted (1 for the reference semantics, which stops counting at the first).
    pub races: Vec<(Race, u64)>,
    pub fault: Option<Fault>,
    /// Barriers that fired divergently (undefined behaviour on a device).
    pub divergences: Vec<BarrierInfo>,
    pub steps: u64,
    /// Barrier intervals executed (summed over work-groups); known to the fast executor.
    pub intervals: Option<u64>,
    pub engine: &'static str,
    /// Why the fast executor did not run, when the reference semantics ran instead: said
    /// to the user, never a silent switch.
    pub fallback: Option<String>,
}

/// Runs `launch` on the fast executor (with race tracking) or, where it cannot (the list
/// monoid, or no worker threads), on the reference semantics, saying why in `fallback`.
pub fn simulate(launch: &Launch, jobs: usize) -> Simulated {
    match fast::run(
        launch,
        &FastOptions {
            jobs,
            track_races: true,
        },
    ) {
        Ok(out) => Simulated {
            memory: out.memory,
            races: out.races.into_iter().map(|r| (r.race, r.count)).collect(),
            fault: out.fault,
            divergences: out.divergences,
            steps: out.steps,
            intervals: Some(out.intervals),
            engine: "fast",
            fallback: None,
        },
        Err(why) => Simulated {
            fallback: Some(why.to_string()),
            ..reference(launch)
        },
    }
}

/// The reference semantics along the canonical schedule.
pub fn reference(launch: &Launch) -> Simulated {
    let out = run_canonical(launch);
    Simulated {
        memory: out.memory,
        races: out.races.into_iter().map(|r| (r, 1)).collect(),
        fault: out.fault,
        divergences: out.divergences,
        steps: out.steps,
        intervals: None,
        engine: "reference",
        fallback: None,
    }
}

impl Simulated {
    pub fn is_clean(&self) -> bool {
        self.races.is_empty() && self.fault.is_none() && self.divergences.is_empty()
    }
}
