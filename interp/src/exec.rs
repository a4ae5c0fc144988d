//! Runs the reference semantics along one schedule, watching for races, faults, barrier
//! divergence and non-termination.
//!
//! The schedule is a function choosing, at every point, one of the runnable threads;
//! enabled barriers fire eagerly (see [`crate::reference`]). The choices made are recorded,
//! run-length encoded, so that any run can be replayed; nothing else an execution keeps
//! grows with its length.

use crate::fault::Fault;
use crate::launch::{Launch, Memory};
use crate::race::{Race, RaceTracker};
use crate::reference::{BarrierInfo, Runnable, State, StepInfo};
use serde::{Deserialize, Serialize};

/// A recorded schedule: `runs[k] = (thread, count)` means `count` consecutive K-STEPs of the
/// thread with global index `thread` (`group * local_size + tid`). Barriers are not part of
/// it: they fire as soon as they are enabled. Recorded run-length encoded as it grows, so a
/// thread that runs alone for a long time costs one run.
#[derive(
    Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct Schedule {
    pub runs: Vec<(usize, u64)>,
}

impl Schedule {
    pub fn from_choices(choices: &[usize]) -> Schedule {
        let mut s = Schedule::default();
        for &t in choices {
            s.push(t);
        }
        s
    }

    /// Appends one step of thread `t`.
    pub fn push(&mut self, t: usize) {
        match self.runs.last_mut() {
            Some((last, n)) if *last == t => *n += 1,
            _ => self.runs.push((t, 1)),
        }
    }

    /// Removes the last step.
    pub fn pop(&mut self) -> Option<usize> {
        let (t, n) = self.runs.last_mut()?;
        let t = *t;
        *n -= 1;
        if *n == 0 {
            self.runs.pop();
        }
        Some(t)
    }

    /// The thread of the last step.
    pub fn last(&self) -> Option<usize> {
        self.runs.last().map(|r| r.0)
    }

    /// The first `steps` steps.
    pub fn prefix(&self, steps: u64) -> Schedule {
        let mut left = steps;
        let mut runs = Vec::new();
        for &(t, n) in &self.runs {
            if left == 0 {
                break;
            }
            runs.push((t, n.min(left)));
            left -= n.min(left);
        }
        Schedule { runs }
    }

    pub fn choices(&self) -> impl Iterator<Item = usize> + '_ {
        self.runs
            .iter()
            .flat_map(|&(t, n)| std::iter::repeat_n(t, n as usize))
    }

    /// Number of steps (saturating: a schedule read from a file may claim more than
    /// 2^64 − 1; [`Schedule::check`] refuses it).
    pub fn len(&self) -> u64 {
        self.runs.iter().fold(0u64, |a, r| a.saturating_add(r.1))
    }

    /// Checks a schedule read from a file against a launch of `threads` threads: it is not
    /// empty, names only threads of the launch, has no run of 0 steps, and its number of
    /// steps fits in 64 bits. Returns that number.
    pub fn check(&self, threads: usize) -> Result<u64, String> {
        if self.runs.is_empty() {
            return Err("the schedule is empty".into());
        }
        let mut steps = 0u64;
        for (k, &(t, n)) in self.runs.iter().enumerate() {
            if t >= threads {
                return Err(format!(
                    "run {k} names thread {t}, but the launch has only {threads} threads (0..{threads})"
                ));
            }
            if n == 0 {
                return Err(format!("run {k} (thread {t}) has 0 steps"));
            }
            steps = steps
                .checked_add(n)
                .ok_or_else(|| "the schedule has more than 2^64 - 1 steps".to_string())?;
        }
        Ok(steps)
    }

    pub fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }
}

/// The result of one execution.
#[derive(Clone, Debug, Serialize)]
pub struct Outcome {
    /// The final array store (or the store when the execution stopped).
    pub memory: Memory,
    /// One race per distinct pair of statements (`Race::key`), the first found.
    pub races: Vec<Race>,
    /// The runtime fault that ended the execution, if any.
    pub fault: Option<Fault>,
    /// Barriers that fired without every thread of the group reaching the same barrier: the
    /// first firing of each distinct divergence (a barrier in a loop can diverge at every
    /// iteration; one report each keeps an execution's record bounded).
    pub divergences: Vec<BarrierInfo>,
    /// Number of K-STEP applications.
    pub steps: u64,
    /// The thread chosen at every K-STEP (global thread index).
    pub schedule: Schedule,
    /// The schedule gave up before the execution ended (e.g. an infeasible replay).
    pub stopped: bool,
}

impl Outcome {
    /// Whether anything went wrong (harmful races, a fault, divergence, a stopped
    /// schedule): races the race policy judged benign do not count.
    pub fn is_clean(&self) -> bool {
        crate::race::all_benign(&self.races)
            && self.fault.is_none()
            && self.divergences.is_empty()
            && !self.stopped
    }
}

/// Sees every step of an execution (for traces).
pub trait Observer {
    fn step(&mut self, _info: &StepInfo) {}
    fn barrier(&mut self, _info: &BarrierInfo) {}
    /// A race completed by the step just observed, the first of its key (`Race::key`) in
    /// this execution.
    fn race(&mut self, _race: &Race) {}
}

/// An observer that ignores everything.
pub struct Quiet;
impl Observer for Quiet {}

/// Fires enabled barriers (K-BARRIER) until none is enabled, in group order: after a
/// K-BARRIER the threads of a group may all wait at another barrier (`barrier();
/// barrier();`), which is then enabled too ([`State::fire_ready_barriers`] fires each
/// group at most once). Every engine on the reference state fires barriers through this.
pub fn fire_barriers(state: &mut State, launch: &Launch) -> Vec<BarrierInfo> {
    let mut all = Vec::new();
    loop {
        let fired = state.fire_ready_barriers(launch);
        if fired.is_empty() {
            return all;
        }
        all.extend(fired);
    }
}

/// Runs from the initial state. `choose` gets the state and its runnable threads (never
/// empty) and returns one of them, or `None` to stop.
pub fn run(
    launch: &Launch,
    mut choose: impl FnMut(&State, &Runnable) -> Option<usize>,
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
        schedule: Schedule::default(),
        stopped: false,
    };
    loop {
        for b in fire_barriers(&mut state, launch) {
            tracker.barrier(b.fence);
            obs.barrier(&b);
            if b.divergence.is_some()
                && !out.divergences.iter().any(|d| d.divergence == b.divergence)
            {
                out.divergences.push(b);
            }
        }
        if state.runnable().is_empty() {
            break; // every thread has terminated
        }
        if out.steps >= launch.max_steps {
            out.fault = Some(Fault::step_bound(launch.max_steps));
            break;
        }
        let Some(t) = choose(&state, state.runnable()) else {
            out.stopped = true;
            break;
        };
        let epochs = state.epochs(t / launch.local_size);
        match state.k_step(launch, t) {
            Err(f) => {
                out.fault = Some(f);
                break;
            }
            Ok(info) => {
                obs.step(&info);
                out.schedule.push(t);
                for (e, access) in info.accesses(launch, out.steps, epochs) {
                    // The tracker reports each key once.
                    for race in tracker.access(e.array, e.instance, e.offset, &e.index, access) {
                        obs.race(&race);
                        out.races.push(race);
                    }
                }
                out.steps += 1;
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
    run(launch, |_, r| r.first(), &mut Quiet)
}
