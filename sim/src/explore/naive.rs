//! The naive explorer: depth-first search over every interleaving, with no reduction. At
//! every state each runnable thread is tried in turn; enabled barriers fire eagerly (as
//! everywhere in ksim), races are found by the interpreter's own [`RaceTracker`], cloned at
//! every branch. Exponential, and for that reason obviously complete: it is the oracle that
//! [`super::exhaustive`] is tested against. [`enumerate`] is the same search with a memo of
//! the (state, accesses still able to race) pairs already explored, for larger kernels.
//!
//! The memo keeps, per pair, the fewest steps at which it was explored, and a pair reached
//! again in fewer steps is explored again, as the exhaustive explorer's state cache does:
//! every race, fault and divergence is then met along a shortest schedule (a breadth-first
//! argument: the pair before the racing step is explored from its shortest prefix). A pair
//! met again while it is on the current path is a cycle: that execution can repeat forever,
//! and it is counted as non-terminating.
//!
//! Under `--warp-size` the choices are the enabled warps and a step is a warp instruction
//! ([`interp::warp`]); `ksim explore --exhaustive` then runs [`enumerate`] (the
//! partial-order reduction of [`super::exhaustive`] reasons about threads). Where
//! state caching is off for the exhaustive explorer and its executions are many, it runs
//! [`state_graph`] ([`super::dpor`], "Many executions without state caching").

use super::{Collector, Config, Incomplete, Mode, ProgressFn, Summary, Verdict};
use crate::schedule::Schedule;
use interp::exec;
use interp::fault::Fault;
use interp::policy::Stored;
use interp::race::{AccessKind, RaceTracker};
use interp::reference::State;
use interp::Launch;
use std::collections::HashMap;

/// One access remembered by the memo of [`enumerate`]: element, thread, kind, statement,
/// epoch, and what a write stored (under the `same-value` race policy, which judges a race
/// by it). The set of these since the last barrier (all of them with several groups) is
/// exactly what the race tracker keeps, so (state, accesses) determines every future race.
type Remembered = (
    (usize, usize, usize),
    (usize, usize),
    AccessKind,
    (usize, usize),
    u64,
    Option<Stored>,
);

type Accesses = imbl::OrdSet<Remembered>;

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
    /// The pairs already explored, when the search is memoised ([`enumerate`]): the
    /// fewest steps at which each was explored, and whether it is on the current path.
    memo: Option<HashMap<(State, Accesses), (u64, bool)>>,
    /// The most pairs the memo may hold ([`state_graph`]); past it the search stops.
    limit: usize,
    /// The search stopped at `limit`.
    over_limit: bool,
}

/// Explores every interleaving of `launch` (bounded by `cfg`).
pub fn naive(launch: &Launch, cfg: &Config, progress: Option<ProgressFn<'_>>) -> Summary {
    search(launch, cfg, progress, None).0
}

/// An independent enumeration for larger kernels: the naive search over the whole state
/// graph, every (state, accesses still able to race) pair explored once. No partial-order
/// reduction and no happens-before reasoning: it finds every reachable final store, race
/// key and fault, like [`naive`], in time proportional to the number of reachable states
/// instead of interleavings.
pub fn enumerate(launch: &Launch, cfg: &Config) -> Summary {
    search(launch, cfg, None, Some(usize::MAX)).0
}

/// Why `explore --exhaustive` searched the state graph ([`state_graph`]).
pub const REDUCTION_OFF_STATES: &str = "without state caching the partial-order reduction ran \
     into many executions, so the state graph was searched instead: every interleaving, each \
     (state, accesses that can still race) pair explored once from the fewest steps that \
     reach it";

/// [`enumerate`] with at most `limit` pairs, for `explore --exhaustive` where state caching
/// is off: `None` when the limit cut it, or when an execution repeats a state or reaches the
/// step bound (the exhaustive explorer then decides, reporting non-termination as it always
/// does). Reported as an exhaustive search with partial-order reduction off
/// ([`REDUCTION_OFF_STATES`]).
pub fn state_graph(
    launch: &Launch,
    cfg: &Config,
    progress: Option<ProgressFn<'_>>,
    limit: usize,
) -> Option<Summary> {
    let (mut s, over_limit) = search(launch, cfg, progress, Some(limit));
    if over_limit || s.non_terminating > 0 {
        return None;
    }
    s.mode = Mode::Exhaustive;
    s.reduction_off = Some(REDUCTION_OFF_STATES);
    Some(s)
}

/// Why `explore --exhaustive` does without partial-order reduction under `--warp-size`.
pub const REDUCTION_OFF_WARPS: &str = "--warp-size: every interleaving of warp instructions, \
     each (state, accesses) pair explored once";

/// [`enumerate`] for `explore --exhaustive` under `--warp-size`: reported as an exhaustive
/// search with partial-order reduction off ([`REDUCTION_OFF_WARPS`]).
pub fn exhaustive_warps(
    launch: &Launch,
    cfg: &Config,
    progress: Option<ProgressFn<'_>>,
) -> Summary {
    let mut s = search(launch, cfg, progress, Some(usize::MAX)).0;
    s.mode = Mode::Exhaustive;
    s.reduction_off = Some(REDUCTION_OFF_WARPS);
    s
}

/// The search, memoised with at most `memo` pairs when given; whether it stopped there.
fn search(
    launch: &Launch,
    cfg: &Config,
    progress: Option<ProgressFn<'_>>,
    memo: Option<usize>,
) -> (Summary, bool) {
    let mut n = Naive {
        launch,
        cfg,
        col: Collector::new(Mode::Naive, cfg),
        choices: Schedule::default(),
        depth: 0,
        stop: None,
        progress,
        ticks: 0,
        memo: memo.map(|_| HashMap::new()),
        limit: memo.unwrap_or(usize::MAX),
        over_limit: false,
    };
    let mut state = State::initial(launch);
    let mut tracker = RaceTracker::for_launch(launch);
    n.barriers(&mut state, &mut tracker);
    n.dfs(state, tracker, Accesses::new());
    n.col.summary.states = n.memo.as_ref().map_or(1, |m| m.len() as u64);
    let verdict = match n.stop {
        None => Verdict::Exhaustive,
        Some(r) => Verdict::Incomplete(r),
    };
    (n.col.finish(verdict), n.over_limit)
}

impl Naive<'_, '_> {
    /// Fires the enabled barriers; whether any fired.
    fn barriers(&mut self, state: &mut State, tracker: &mut RaceTracker) -> bool {
        let fired = super::fire_all(state, self.launch);
        for b in &fired {
            tracker.fired(b);
            if let Some(d) = &b.divergence {
                self.col.divergence(d, &self.choices);
            }
        }
        !fired.is_empty()
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

    fn dfs(&mut self, state: State, tracker: RaceTracker, mem: Accesses) {
        let Some(seen) = &mut self.memo else {
            return self.expand(state, tracker, mem);
        };
        let key = (state, mem);
        let full = seen.len() >= self.limit;
        match seen.get_mut(&key) {
            Some((_, true)) => {
                // On the current path: this execution can repeat forever.
                self.col.non_terminating(&self.choices);
                self.leaf_done();
                return;
            }
            Some((depth, on_path)) if self.depth < *depth => {
                (*depth, *on_path) = (self.depth, true)
            }
            Some(_) => {
                self.col.summary.pruned += 1;
                self.col.summary.cache_hits += 1;
                return;
            }
            None if full => {
                self.over_limit = true;
                self.stop = Some(Incomplete::MaxStates);
                return;
            }
            None => {
                seen.insert(key.clone(), (self.depth, true));
            }
        }
        let (state, mem) = key.clone();
        self.expand(state, tracker, mem);
        if let Some(entry) = self.memo.as_mut().and_then(|m| m.get_mut(&key)) {
            entry.1 = false;
        }
    }

    /// Runs each runnable thread's step from `state` and searches on.
    fn expand(&mut self, state: State, tracker: RaceTracker, mem: Accesses) {
        let runnable = state.choices().to_vec();
        if runnable.is_empty() {
            self.col
                .final_store(state.memory(self.launch), &self.choices);
            self.leaf_done();
            return;
        }
        if self.depth >= self.launch.max_steps {
            self.col
                .fault(Fault::step_bound(self.launch.max_steps), &self.choices);
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
            let stepped = match self.launch.warp_size {
                None => state.step(self.launch, t).map(|(s, i)| (s, vec![i], None)),
                Some(_) => state
                    .step_warp(self.launch, t)
                    .map(|(s, w)| (s, w.lanes.clone(), Some(w))),
            };
            match stepped {
                Err(f) => {
                    self.col.fault(f, &self.choices);
                    self.leaf_done();
                }
                Ok((mut next, infos, warp)) => {
                    let mut tr = tracker.clone();
                    let mut m = mem.clone();
                    let step = self.depth - 1;
                    // Accesses of one owner (thread, or warp under --warp-size) never race.
                    let owner = warp.as_ref().map(|w| exec::warp_owner(self.launch, w));
                    for info in &infos {
                        let o = owner.unwrap_or(info.thread);
                        let t = info.thread.group * self.launch.local_size + info.thread.local;
                        let epochs = state.thread_epochs(self.launch, t);
                        for (e, a) in info.accesses(self.launch, step, epochs) {
                            if self.memo.is_some() {
                                m.insert((
                                    (e.array, e.instance, e.offset),
                                    (o.group, o.local),
                                    a.kind,
                                    (info.span.start, info.span.end),
                                    a.epoch,
                                    a.stored.clone(),
                                ));
                            }
                            if warp.is_none() {
                                for race in tr.access(e.array, e.instance, e.offset, &e.index, a) {
                                    self.col.race(race, &self.choices);
                                }
                            }
                        }
                    }
                    if let Some(w) = &warp {
                        for race in exec::warp_races(self.launch, w, (step, &state), &mut tr) {
                            self.col.race(race, &self.choices);
                        }
                    }
                    // After a barrier of a one-group launch no earlier access can race
                    // (unless a barrier leaves a space unordered for some thread).
                    if self.barriers(&mut next, &mut tr)
                        && self.launch.groups == 1
                        && self.launch.kernel.barriers_order_both()
                    {
                        m = Accesses::new();
                    }
                    self.dfs(next, tr, m);
                }
            }
            self.choices.pop();
            self.depth -= 1;
        }
    }
}
