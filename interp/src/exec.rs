//! Runs the reference semantics along one schedule, watching for races, faults, barrier
//! divergence and non-termination.
//!
//! The schedule is a function choosing, at every point, one of the runnable threads, or
//! under `--warp-size` one of the enabled warps ([`crate::warp`]); enabled barriers fire
//! eagerly (see [`crate::reference`]). The choices made are recorded,
//! run-length encoded, so that any run can be replayed; nothing else an execution keeps
//! grows with its length.

use crate::fault::{Fault, Faults, ThreadId};
use crate::launch::{Launch, Memory};
use crate::race::{AccessKind, Race, RaceTracker};
use crate::reference::{BarrierInfo, Runnable, State, StepInfo, WarpStep};
use crate::warp::{SimtCost, Warps};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// A recorded schedule: `runs[k] = (thread, count)` means `count` consecutive K-STEPs of the
/// thread with global index `thread` (`group * local_size + tid`); under `--warp-size`,
/// `count` consecutive instructions of the warp with launch-wide number `thread`
/// ([`crate::warp::Warps::global`]). Barriers are not part of it: they fire as soon as they
/// are enabled. Recorded run-length encoded as it grows, so a
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

    /// The schedule in one line, `0 1 2 3 0×4 1×6`: each run a thread, `×count` when it
    /// runs more than one step ([`Schedule::parse`] reads it back).
    pub fn text(&self) -> String {
        let runs: Vec<String> = (self.runs.iter())
            .map(|&(t, n)| {
                if n == 1 {
                    t.to_string()
                } else {
                    format!("{t}×{n}")
                }
            })
            .collect();
        runs.join(" ")
    }

    /// Reads [`Schedule::text`]'s form: runs separated by spaces or commas, each `T` or
    /// `T×N` (also `TxN` and `T*N`, which are easier to type).
    pub fn parse(text: &str) -> Result<Schedule, String> {
        let mut s = Schedule::default();
        for run in text.split([' ', ',', '\t', '\n']).filter(|r| !r.is_empty()) {
            let (t, n) = match run.split_once(['×', 'x', '*']) {
                Some((t, n)) => (t, n),
                None => (run, "1"),
            };
            let bad = || format!("`{run}` is not a run of a schedule (THREAD or THREAD×STEPS)");
            let t: usize = t.parse().map_err(|_| bad())?;
            let n: u64 = n.parse().map_err(|_| bad())?;
            if n == 0 {
                return Err(bad());
            }
            match s.runs.last_mut() {
                Some((last, k)) if *last == t => *k = k.checked_add(n).ok_or_else(bad)?,
                _ => s.runs.push((t, n)),
            }
        }
        if s.runs.is_empty() {
            return Err("the schedule is empty".into());
        }
        Ok(s)
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

    /// Checks a schedule read from a file against `launch`: it is not empty, names only
    /// threads of the launch (warps under `--warp-size`), has no run of 0 steps, and its
    /// number of steps fits in 64 bits. Returns that number.
    pub fn check(&self, launch: &Launch) -> Result<u64, String> {
        let (unit, count) = match Warps::new(launch) {
            Some(w) => ("warp", w.count()),
            None => ("thread", launch.threads()),
        };
        if self.runs.is_empty() {
            return Err("the schedule is empty".into());
        }
        let mut steps = 0u64;
        for (k, &(t, n)) in self.runs.iter().enumerate() {
            if t >= count {
                let s = if count == 1 { "" } else { "s" };
                return Err(format!(
                    "run {k} names {unit} {t}, but the launch has only {count} {unit}{s} (0..{count})"
                ));
            }
            if n == 0 {
                return Err(format!("run {k} ({unit} {t}) has 0 steps"));
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
    /// The runtime fault that ended the execution (the step bound included), else the
    /// first fault it went on past, if any.
    pub fault: Option<Fault>,
    /// Every fault of the execution, each (statement, kind) once with its count: those
    /// it went on past ([`Launch::continue_after_faults`]) and the one that ended it.
    pub faults: Faults,
    /// Barriers that fired without every thread of the group reaching the same barrier: the
    /// first firing of each distinct divergence (a barrier in a loop can diverge at every
    /// iteration; one report each keeps an execution's record bounded).
    pub divergences: Vec<BarrierInfo>,
    /// Number of K-STEP applications (warp instructions under `--warp-size`).
    pub steps: u64,
    /// The thread (warp) chosen at every step.
    pub schedule: Schedule,
    /// The schedule gave up before the execution ended (e.g. an infeasible replay).
    pub stopped: bool,
    /// What the SIMT execution cost (under `--warp-size` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub simt: Option<SimtCost>,
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
    /// A warp instruction (under `--warp-size`): by default, each lane's step in turn.
    fn warp(&mut self, step: &WarpStep) {
        for info in &step.lanes {
            self.step(info);
        }
    }
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

/// Runs from the initial state. `choose` gets the state and its runnable threads, or under
/// `--warp-size` its enabled warps ([`State::choices`], never empty), and returns one of
/// them, or `None` to stop.
pub fn run(
    launch: &Launch,
    mut choose: impl FnMut(&State, &Runnable) -> Option<usize>,
    obs: &mut dyn Observer,
) -> Outcome {
    let mut state = State::initial(launch);
    let mut tracker = RaceTracker::for_launch(launch);
    let mut out = Outcome {
        memory: Memory { arrays: Vec::new() },
        races: Vec::new(),
        fault: None,
        faults: Faults::default(),
        divergences: Vec::new(),
        steps: 0,
        schedule: Schedule::default(),
        stopped: false,
        simt: None,
    };
    let warps = Warps::new(launch);
    let mut simt = warps.map(|w| SimtCost {
        warp_size: w.size,
        ..SimtCost::default()
    });
    loop {
        for b in fire_barriers(&mut state, launch) {
            tracker.fired(&b);
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
            out.stop(Fault::step_bound(launch.max_steps));
            break;
        }
        let Some(t) = choose(&state, state.choices()) else {
            out.stopped = true;
            break;
        };
        if let (Some(warps), Some(simt)) = (warps, &mut simt) {
            let group = warps.group(t);
            let epoch = state.epoch(group);
            match state.warp_step_on(launch, t) {
                Err(f) => {
                    out.stop(f);
                    break;
                }
                Ok(step) => {
                    for info in &step.lanes {
                        out.record(&info.faults);
                    }
                    simt.instruction(epoch as usize, step.lanes.len(), step.divergent);
                    let races = warp_races(launch, &step, (out.steps, &state), &mut tracker);
                    obs.warp(&step);
                    out.schedule.push(t);
                    for race in races {
                        obs.race(&race);
                        out.races.push(race);
                    }
                    out.steps += 1;
                }
            }
            continue;
        }
        let epochs = state.thread_epochs(launch, t);
        match state.k_step_on(launch, t) {
            Err(f) => {
                out.stop(f);
                break;
            }
            Ok(info) => {
                out.record(&info.faults);
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
    if out.fault.is_none() {
        out.fault = out.faults.first().cloned();
    }
    out.memory = state.memory(launch);
    out.simt = simt;
    out
}

impl Outcome {
    /// Counts the faults a step went on past.
    fn record(&mut self, faults: &[Fault]) {
        for f in faults {
            self.faults.record(f.clone());
        }
    }

    /// The execution ends at fault `f`.
    fn stop(&mut self, f: Fault) {
        self.faults.record(f.clone());
        self.fault = Some(f);
    }
}

/// The races completed by a warp instruction ([`State::warp_step`]) taken at position
/// `at_step` of the execution, in `state` (before or after it: a step moves no barrier
/// epoch). Accesses are recorded
/// lane by lane, each lane's reads then its write; each is checked against the accesses of
/// other warps ([`RaceTracker::access_by`] with the warp as owner), then a write against
/// the earlier lanes' writes of this instruction (two lanes writing one element race:
/// GPUVerify's `--warp-sync` rule).
pub fn warp_races(
    launch: &Launch,
    step: &WarpStep,
    (at_step, state): (u64, &State),
    tracker: &mut RaceTracker,
) -> Vec<Race> {
    let owner = warp_owner(launch, step);
    let mut races = Vec::new();
    let mut written: HashMap<(usize, usize, usize), crate::race::Access> = HashMap::new();
    for info in &step.lanes {
        let t = info.thread.group * launch.local_size + info.thread.local;
        let epochs = state.thread_epochs(launch, t);
        for (e, access) in info.accesses(launch, at_step, epochs) {
            let at = (e.array, e.instance, e.offset);
            races.extend(tracker.access_by(owner, at, &e.index, access.clone()));
            if access.kind == AccessKind::Write {
                // One instruction: nothing orders its lanes' accesses.
                if let Some(race) = written.get(&at).and_then(|first| {
                    Race::between_live(e.array, e.instance, &e.index, first, &access, true)
                }) {
                    races.extend(tracker.report(race));
                }
                written.entry(at).or_insert(access);
            }
        }
    }
    races
}

/// The thread that stands for a warp in race tracking: its lane 0.
pub fn warp_owner(launch: &Launch, step: &WarpStep) -> ThreadId {
    let warps = Warps::new(launch).expect("a launch with a warp size");
    ThreadId {
        group: warps.group(step.warp),
        local: warps.lanes(step.warp).start % launch.local_size,
    }
}

/// The canonical schedule: always the lowest-numbered runnable thread. Each thread runs
/// until it reaches a barrier or terminates, thread by thread, then the barrier fires; work-
/// group 0 finishes before group 1 starts.
pub fn run_canonical(launch: &Launch) -> Outcome {
    run(launch, |_, r| r.first(), &mut Quiet)
}
