//! The simulated side of `ksim gpu`: the canonical execution of
//! [`interp::canonical::run_preferred`] in the shape the gpu commands read.
//! (Kept only so that `src/cli/gpu.rs` reads as before; the engine is chosen there.)

use interp::canonical::{self, Options};
use interp::reference::BarrierInfo;
use interp::{Fault, Launch, Memory, Race};

/// What the canonical execution of a launch found, whichever engine ran it.
pub struct Simulated {
    pub memory: Memory,
    /// One race per distinct pair of statements, with how many conflicting pairs the fast
    /// executor counted (1 from the reference semantics, which reports the first only).
    pub races: Vec<(Race, u64)>,
    pub fault: Option<Fault>,
    pub divergences: Vec<BarrierInfo>,
    /// `fast` or `reference`.
    pub engine: &'static str,
}

/// The canonical execution with race tracking on `jobs` worker threads.
pub fn simulate(launch: &Launch, jobs: usize) -> Simulated {
    let c = canonical::run_preferred(
        launch,
        &Options {
            jobs,
            track_races: true,
        },
    );
    let counts = c.race_pairs.unwrap_or_default();
    let e = c.execution;
    Simulated {
        races: (e.races.into_iter().enumerate())
            .map(|(k, r)| (r, counts.get(k).copied().unwrap_or(1)))
            .collect(),
        memory: e.memory,
        fault: e.fault,
        divergences: e.divergences,
        engine: c.engine.id(),
    }
}
