//! Runs the reference semantics along one schedule, watching for races, faults, barrier
//! divergence and non-termination.
//!
//! The schedule is a function choosing, at every point, one of the runnable threads;
//! enabled barriers fire eagerly (see [`crate::reference`]). The choices made are recorded
//! so that any run can be replayed.

use crate::fault::{Fault, FaultKind};
use crate::launch::{Launch, Memory};
use crate::race::{Race, RaceTracker};
use crate::reference::{BarrierInfo, State, StepInfo};
use serde::Serialize;

/// The result of one execution.
#[derive(Clone, Debug, Serialize)]
pub struct Outcome {
    /// The final array store (or the store when the execution stopped).
    pub memory: Memory,
    /// One race per distinct pair of statements (`Race::key`), the first found.
    pub races: Vec<Race>,
    /// The runtime fault that ended the execution, if any.
    pub fault: Option<Fault>,
    /// Barriers that fired without every thread of the group reaching the same barrier.
    pub divergences: Vec<BarrierInfo>,
    /// Number of K-STEP applications.
    pub steps: u64,
    /// The thread chosen at every K-STEP (global thread index).
    pub choices: Vec<usize>,
    /// The schedule gave up before the execution ended (e.g. an infeasible replay).
    pub stopped: bool,
}

impl Outcome {
    /// Whether anything went wrong (races, a fault, divergence, a stopped schedule).
    pub fn is_clean(&self) -> bool {
        self.races.is_empty()
            && self.fault.is_none()
            && self.divergences.is_empty()
            && !self.stopped
    }
}

/// Sees every step of an execution (for traces).
pub trait Observer {
    fn step(&mut self, _before: &State, _info: &StepInfo) {}
    fn barrier(&mut self, _info: &BarrierInfo) {}
    /// A race completed by the step just observed.
    fn race(&mut self, _race: &Race) {}
}

/// An observer that ignores everything.
pub struct Quiet;
impl Observer for Quiet {}

/// Runs from the initial state. `choose` gets the state and its runnable threads (never
/// empty) and returns one of them, or `None` to stop.
pub fn run(
    launch: &Launch,
    mut choose: impl FnMut(&State, &[usize]) -> Option<usize>,
    obs: &mut dyn Observer,
) -> Outcome {
    let mut state = State::initial(launch);
    let mut tracker = RaceTracker::new(launch.groups);
    let mut out = Outcome {
        memory: Memory { arrays: Vec::new() },
        races: Vec::new(),
        fault: None,
        divergences: Vec::new(),
        steps: 0,
        choices: Vec::new(),
        stopped: false,
    };
    loop {
        // Fire barriers until none is enabled: a group may go from one barrier straight
        // to the next.
        loop {
            let fired = state.fire_ready_barriers(launch);
            if fired.is_empty() {
                break;
            }
            for b in fired {
                tracker.barrier();
                obs.barrier(&b);
                if b.divergence.is_some() {
                    out.divergences.push(b);
                }
            }
        }
        let runnable = state.runnable(launch);
        if runnable.is_empty() {
            break; // every thread has terminated
        }
        if out.steps >= launch.max_steps {
            out.fault = Some(Fault {
                kind: FaultKind::StepBound {
                    steps: launch.max_steps,
                },
                thread: None,
                span: None,
            });
            break;
        }
        let Some(t) = choose(&state, &runnable) else {
            out.stopped = true;
            break;
        };
        match state.step(launch, t) {
            Err(f) => {
                out.fault = Some(f);
                break;
            }
            Ok((next, info)) => {
                obs.step(&state, &info);
                out.choices.push(t);
                let epoch = state.epoch(info.thread.group);
                for (e, access) in info.accesses(out.steps, epoch) {
                    for race in tracker.access(e.array, e.instance, e.offset, &e.index, access) {
                        obs.race(&race);
                        if !out.races.iter().any(|r| r.key() == race.key()) {
                            out.races.push(race);
                        }
                    }
                }
                out.steps += 1;
                state = next;
            }
        }
    }
    out.memory = state.memory(launch);
    out
}

/// The canonical schedule: always the lowest-numbered runnable thread. Each thread runs
/// until it reaches a barrier or terminates, thread by thread, then the barrier fires; work-
/// group 0 finishes before group 1 starts.
pub fn run_canonical(launch: &Launch) -> Outcome {
    run(launch, |_, r| Some(r[0]), &mut Quiet)
}
