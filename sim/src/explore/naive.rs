//! The naive explorer: depth-first search over every interleaving, with no reduction and no
//! caching. At every state each runnable thread is tried in turn; enabled barriers fire
//! eagerly (as everywhere in ksim), races are found by the interpreter's own
//! [`RaceTracker`], cloned at every branch. Exponential, and for that reason obviously
//! complete: it is the oracle that [`super::exhaustive`] is tested against.

use super::{Collector, Config, Incomplete, Mode, ProgressFn, Summary, Verdict};
use crate::schedule::Schedule;
use interp::fault::{Fault, FaultKind};
use interp::race::{AccessKind, RaceTracker};
use interp::reference::State;
use interp::Launch;

struct Naive<'a, 'p> {
    launch: &'a Launch,
    cfg: &'a Config<'a>,
    col: Collector<'a>,
    choices: Schedule,
    /// Steps in `choices`.
    depth: u64,
    stop: Option<Incomplete>,
    progress: Option<ProgressFn<'p>>,
    ticks: u64,
}

/// Explores every interleaving of `launch` (bounded by `cfg`).
pub fn naive(launch: &Launch, cfg: &Config, progress: Option<ProgressFn<'_>>) -> Summary {
    let mut n = Naive {
        launch,
        cfg,
        col: Collector::new(Mode::Naive, cfg),
        choices: Schedule::default(),
        depth: 0,
        stop: None,
        progress,
        ticks: 0,
    };
    let mut state = State::initial(launch);
    let mut tracker = RaceTracker::new(launch.groups);
    n.barriers(&mut state, &mut tracker);
    n.col.summary.states = 1;
    n.dfs(state, tracker);
    let verdict = match n.stop {
        None => Verdict::Exhaustive,
        Some(r) => Verdict::Incomplete(r),
    };
    n.col.finish(verdict)
}

impl Naive<'_, '_> {
    fn barriers(&mut self, state: &mut State, tracker: &mut RaceTracker) {
        for b in super::fire_all(state, self.launch) {
            tracker.barrier(b.fence);
            if let Some(d) = &b.divergence {
                self.col.divergence(d, &self.choices);
            }
        }
    }

    fn leaf_done(&mut self) {
        let s = &mut self.col.summary;
        s.complete += 1;
        s.longest = s.longest.max(self.depth);
        if self.stop.is_none() {
            if let Some(m) = self.cfg.max_executions {
                if s.complete >= m {
                    self.stop = Some(Incomplete::MaxExecutions);
                }
            }
        }
        self.ticks += 1;
        if self.ticks.is_multiple_of(64) && self.stop.is_none() {
            self.stop = self.col.stop_reason();
            self.col.progress(&mut self.progress, None);
        }
    }

    /// Inside long executions too, every [`super::CHECK_EVERY`] steps: the timeout and
    /// the interrupt flag.
    fn look_at_deadline(&mut self) {
        if self.stop.is_none() && self.col.summary.steps.is_multiple_of(super::CHECK_EVERY) {
            self.stop = self.col.stop_reason();
        }
    }

    fn dfs(&mut self, state: State, tracker: RaceTracker) {
        let runnable = state.runnable().to_vec();
        if runnable.is_empty() {
            self.col
                .final_store(state.memory(self.launch), &self.choices);
            self.leaf_done();
            return;
        }
        if self.depth >= self.launch.max_steps {
            self.col.fault(
                Fault {
                    kind: FaultKind::StepBound {
                        steps: self.launch.max_steps,
                    },
                    thread: None,
                    span: None,
                },
                &self.choices,
            );
            self.leaf_done();
            return;
        }
        for &t in &runnable {
            if self.stop.is_some() {
                self.col.summary.cut += 1;
                return;
            }
            self.col.summary.steps += 1;
            self.look_at_deadline();
            self.choices.push(t);
            self.depth += 1;
            match state.step(self.launch, t) {
                Err(f) => {
                    self.col.fault(f, &self.choices);
                    self.leaf_done();
                }
                Ok((mut next, info)) => {
                    let mut tr = tracker.clone();
                    let epochs = state.epochs(info.thread.group);
                    let step = self.depth - 1;
                    for (e, a) in info.accesses(self.launch, step, epochs) {
                        for race in tr.access(e.array, e.instance, e.offset, &e.index, a) {
                            self.col.race(race, &self.choices);
                        }
                    }
                    self.barriers(&mut next, &mut tr);
                    self.dfs(next, tr);
                }
            }
            self.choices.pop();
            self.depth -= 1;
        }
    }
}

/// One access remembered by [`enumerate`]: element, thread, kind, statement, epoch. The set
/// of these since the last barrier (all of them with several groups) is exactly what the
/// race tracker keeps, so (state, accesses) determines every future race.
type Remembered = (
    (usize, usize, usize),
    (usize, usize),
    AccessKind,
    (usize, usize),
    u64,
);

/// An independent enumeration for larger kernels: explicit-state search over the whole
/// state graph, every (state, accesses still able to race) pair explored once. No
/// partial-order reduction and no happens-before reasoning: it finds every reachable final
/// store, race key and fault, like [`naive`], in time proportional to the number of
/// reachable states instead of interleavings. Meant for terminating kernels (the step bound
/// is checked per path, but a memoised state is not re-explored with a different step
/// count).
pub fn enumerate(launch: &Launch, cfg: &Config) -> Summary {
    let mut n = Naive {
        launch,
        cfg,
        col: Collector::new(Mode::Naive, cfg),
        choices: Schedule::default(),
        depth: 0,
        stop: None,
        progress: None,
        ticks: 0,
    };
    let mut state = State::initial(launch);
    let mut tracker = RaceTracker::new(launch.groups);
    n.barriers(&mut state, &mut tracker);
    let mut seen = std::collections::HashSet::new();
    enum_dfs(&mut n, &mut seen, state, tracker, imbl::OrdSet::new());
    n.col.summary.states = seen.len() as u64;
    let verdict = match n.stop {
        None => Verdict::Exhaustive,
        Some(r) => Verdict::Incomplete(r),
    };
    n.col.finish(verdict)
}

fn enum_dfs(
    n: &mut Naive<'_, '_>,
    seen: &mut std::collections::HashSet<(State, imbl::OrdSet<Remembered>)>,
    state: State,
    tracker: RaceTracker,
    mem: imbl::OrdSet<Remembered>,
) {
    if !seen.insert((state.clone(), mem.clone())) {
        n.col.summary.pruned += 1;
        return;
    }
    let runnable = state.runnable().to_vec();
    if runnable.is_empty() {
        n.col.final_store(state.memory(n.launch), &n.choices);
        n.leaf_done();
        return;
    }
    if n.depth >= n.launch.max_steps {
        n.col.fault(
            Fault {
                kind: FaultKind::StepBound {
                    steps: n.launch.max_steps,
                },
                thread: None,
                span: None,
            },
            &n.choices,
        );
        n.leaf_done();
        return;
    }
    for &t in &runnable {
        if n.stop.is_some() {
            n.col.summary.cut += 1;
            return;
        }
        n.col.summary.steps += 1;
        n.look_at_deadline();
        n.choices.push(t);
        n.depth += 1;
        match state.step(n.launch, t) {
            Err(f) => {
                n.col.fault(f, &n.choices);
                n.leaf_done();
            }
            Ok((mut next, info)) => {
                let mut tr = tracker.clone();
                let mut m = mem.clone();
                let epochs = state.epochs(info.thread.group);
                let step = n.depth - 1;
                for (e, a) in info.accesses(n.launch, step, epochs) {
                    m.insert((
                        (e.array, e.instance, e.offset),
                        (info.thread.group, info.thread.local),
                        a.kind,
                        (info.span.start, info.span.end),
                        a.epoch,
                    ));
                    for race in tr.access(e.array, e.instance, e.offset, &e.index, a) {
                        n.col.race(race, &n.choices);
                    }
                }
                let fired = super::fire_all(&mut next, n.launch);
                for b in &fired {
                    tr.barrier(b.fence);
                    if let Some(d) = &b.divergence {
                        n.col.divergence(d, &n.choices);
                    }
                }
                if !fired.is_empty() && n.launch.groups == 1 {
                    m = imbl::OrdSet::new();
                }
                enum_dfs(n, seen, next, tr, m);
            }
        }
        n.choices.pop();
        n.depth -= 1;
    }
}
