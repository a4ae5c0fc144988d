//! Schedule exploration: every behaviour the interleaving semantics allows for one launch.
//!
//! Five explorers share one result type, [`Summary`]:
//!
//! - [`exhaustive`]: every maximal execution up to equivalence, with state caching at
//!   barrier synchronisation points and source-DPOR with sleep sets inside a barrier
//!   interval (see [`dpor`] for the algorithm and its soundness argument);
//! - [`naive`]: plain depth-first search over every interleaving, no reduction and no
//!   caching: slow, obviously complete, and the oracle the tests compare [`exhaustive`] with;
//! - [`random`]: N executions with uniformly random choices;
//! - [`pct`]: N executions under the PCT scheduler of depth d (Burckhardt, Kothari,
//!   Musuvathi and Nagarakatte, ASPLOS 2010);
//! - [`preemption_bounded`]: every schedule with at most K preemptions (see [`bounded`]).
//!
//! [`shrink_races`] cuts the race schedules of the samplers down to the steps each race
//! needs; [`model`] holds the summary's JSON model and text.
//!
//! Random and PCT are deterministic for a seed whatever the number of worker threads: the
//! seed of execution `i` is derived from `(seed, i)` alone ([`execution_seed`]) and the
//! results are merged in index order.
//!
//! What a summary counts:
//!
//! - an *execution* is a path of the search from the initial state to a leaf. A *complete*
//!   execution ends in a final state (every thread terminated), a runtime fault, or the step
//!   bound (non-termination). A *pruned* one is abandoned as redundant: it reached a barrier
//!   state already explored (state cache) or every enabled thread was in its sleep set
//!   (partial-order reduction). A *cut* one was stopped by a bound (`max_executions`,
//!   `max_states`, timeout, interruption);
//! - *states*: distinct states (the whole persistent [`State`]) at barrier synchronisation
//!   points, the initial state included;
//! - *final stores*: distinct array stores of final states, each with the number of
//!   complete executions (explored, not pruned) that end in it and the first schedule found;
//! - *races*: distinct by [`interp::race::RaceKey`] (the pair of statements and access
//!   kinds), each with the shortest schedule found (for [`exhaustive`], the shortest of
//!   all schedules: see `dpor::Dpor::race_past`): the schedule ends with the step that
//!   completes the race, so replaying it stops at the race;
//! - *faults*: distinct by kind (with its values) and statement; non-termination (the step
//!   bound, or a barrier state that repeats along one execution, which can then be repeated
//!   forever) is counted separately.

pub mod bounded;
pub mod dpor;
pub mod model;
pub mod naive;
pub mod orders;
pub mod sample;
pub mod shrink;
pub mod stores;

use interp::exec::Outcome;
use interp::fault::{Fault, FaultKind};
use interp::race::{Race, RaceKey};
use interp::reference::State;
use interp::Memory;
use lang::ast::Span;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

pub use bounded::preemption_bounded;
pub use dpor::exhaustive;
pub use naive::{enumerate, naive};
pub use sample::{execution_seed, pct, pct_bound, random};
pub use shrink::shrink_races;

use crate::schedule::Schedule;

/// Bounds and controls shared by every explorer.
#[derive(Clone, Default)]
pub struct Config<'a> {
    /// Stop after this many executions, complete or pruned (every path of the search).
    pub max_executions: Option<u64>,
    /// Stop when more than this many distinct barrier states would be explored.
    pub max_states: Option<u64>,
    /// Stop after this much wall-clock time (checked inside executions too).
    pub timeout: Option<Duration>,
    /// Set from elsewhere (a Ctrl-C handler) to stop cleanly; checked inside executions
    /// too, every [`CHECK_EVERY`] steps, so one endless execution cannot delay the stop.
    pub interrupt: Option<&'static AtomicBool>,
    /// Worker threads for random, PCT and the exhaustive search (0 or 1: the calling
    /// thread); the summary does not depend on it (see [`dpor`], "Several jobs").
    pub jobs: usize,
    /// Stop as soon as this many distinct races are known (`--max-races`).
    pub max_races: Option<u64>,
    /// Stop at the first race (`--stop-on-race`): the verdict is INCOMPLETE (race found).
    pub stop_on_race: bool,
    /// Called with each distinct race as soon as it is found (with the schedule that found
    /// it; the summary ends with the shortest one found), so that a caller can save it
    /// before the exploration ends, or is killed.
    pub on_race: Option<&'a (dyn Fn(&FoundRace) + Sync)>,
}

impl std::fmt::Debug for Config<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Config")
            .field("max_executions", &self.max_executions)
            .field("max_states", &self.max_states)
            .field("timeout", &self.timeout)
            .field("interrupt", &self.interrupt)
            .field("jobs", &self.jobs)
            .field("max_races", &self.max_races)
            .field("stop_on_race", &self.stop_on_race)
            .field("on_race", &self.on_race.map(|_| "..."))
            .finish()
    }
}

/// How many steps an explorer may take between two looks at the timeout and the
/// interrupt flag.
pub const CHECK_EVERY: u64 = 4096;

/// The timeout and the interrupt flag of a [`Config`], from the start of an exploration:
/// `Copy` and `Sync`, so that every worker can look at them inside its executions.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Deadline {
    start: Instant,
    timeout: Option<Duration>,
    interrupt: Option<&'static AtomicBool>,
}

impl Deadline {
    pub fn new(cfg: &Config<'_>) -> Deadline {
        Deadline {
            start: Instant::now(),
            timeout: cfg.timeout,
            interrupt: cfg.interrupt,
        }
    }

    /// Why the exploration must stop now, if it must.
    pub fn reason(&self) -> Option<Incomplete> {
        if self.interrupt.is_some_and(|f| f.load(Ordering::Relaxed)) {
            return Some(Incomplete::Interrupted);
        }
        if self.timeout.is_some_and(|t| self.start.elapsed() >= t) {
            return Some(Incomplete::Timeout);
        }
        None
    }
}

/// Why an exploration did not cover everything.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Incomplete {
    MaxExecutions,
    MaxStates,
    Timeout,
    Interrupted,
    /// Random sampling: never a proof of absence.
    Random,
    /// PCT sampling: a probabilistic guarantee only.
    Pct,
    /// An execution cut by the step bound left threads waiting at a barrier that could
    /// still fire: what they would do after it was not explored.
    StepBound,
    /// `--stop-on-race`: stopped at the first race.
    RaceFound,
    /// `--max-races K`: stopped when K distinct races were known.
    MaxRaces,
    /// `--preemption-bound K`: every schedule within the bound was explored, and some
    /// schedule needed more preemptions.
    PreemptionBound(u32),
}

impl Incomplete {
    pub fn name(self) -> &'static str {
        match self {
            Incomplete::MaxExecutions => "max-executions",
            Incomplete::MaxStates => "max-states",
            Incomplete::Timeout => "timeout",
            Incomplete::Interrupted => "interrupted",
            Incomplete::Random => "random sampling",
            Incomplete::Pct => "pct sampling",
            Incomplete::StepBound => "step bound",
            Incomplete::RaceFound => "race found",
            Incomplete::MaxRaces => "max-races",
            Incomplete::PreemptionBound(_) => "preemption bound",
        }
    }
}

/// The verdict that ends every summary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Every execution, up to equivalence, was explored.
    Exhaustive,
    Incomplete(Incomplete),
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Verdict::Exhaustive => f.write_str("EXHAUSTIVE"),
            Verdict::Incomplete(Incomplete::PreemptionBound(k)) => write!(
                f,
                "INCOMPLETE (exhaustive within preemption bound {k}: schedules with more preemptions were not explored)"
            ),
            Verdict::Incomplete(r) => write!(f, "INCOMPLETE ({})", r.name()),
        }
    }
}

/// Which explorer produced a summary.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mode {
    Exhaustive,
    Naive,
    Random {
        n: u64,
        seed: u64,
    },
    Pct {
        n: u64,
        depth: u32,
        seed: u64,
    },
    /// Every schedule with at most `bound` preemptions, iteratively deepened (see
    /// [`bounded`]).
    PreemptionBounded {
        bound: u32,
    },
}

/// A distinct final array store.
#[derive(Clone, Debug)]
pub struct FinalStore {
    pub memory: Memory,
    /// Complete executions (explored, not pruned) that end in it.
    pub count: u64,
    /// The first schedule found that reaches it.
    pub schedule: Schedule,
}

/// A distinct race with the shortest schedule found that completes it.
#[derive(Clone, Debug)]
pub struct FoundRace {
    pub race: Race,
    pub schedule: Schedule,
}

/// A distinct runtime fault.
#[derive(Clone, Debug)]
pub struct FoundFault {
    pub fault: Fault,
    pub count: u64,
    /// The shortest schedule found that ends in the fault (its last step faults).
    pub schedule: Schedule,
}

/// A distinct barrier divergence message.
#[derive(Clone, Debug)]
pub struct FoundDivergence {
    pub message: String,
    pub schedule: Schedule,
}

/// Parameters of a PCT run, for the probabilistic bound.
#[derive(Clone, Debug, PartialEq)]
pub struct PctInfo {
    pub depth: u32,
    /// Threads of the launch (n).
    pub threads: u64,
    /// The largest number of steps of an execution (k).
    pub max_steps: u64,
    /// The guaranteed lower bound 1/(n·k^(d−1)) on the probability that one execution
    /// finds a given bug of depth d.
    pub bound: f64,
}

/// What an exploration found.
#[derive(Clone, Debug)]
pub struct Summary {
    pub mode: Mode,
    pub verdict: Verdict,
    pub complete: u64,
    /// Executions pruned as redundant: barrier-state cache hits plus sleep-set blocked ones.
    pub pruned: u64,
    /// Of the pruned: those that reached an already explored barrier state.
    pub cache_hits: u64,
    /// Of the pruned: those where every enabled thread was asleep.
    pub sleep_blocked: u64,
    /// Executions stopped by a bound.
    pub cut: u64,
    /// Distinct states at barrier synchronisation points (the initial state included).
    pub states: u64,
    pub finals: Vec<FinalStore>,
    pub races: Vec<FoundRace>,
    pub faults: Vec<FoundFault>,
    /// Executions that hit the step bound or entered a barrier-state cycle.
    pub non_terminating: u64,
    pub non_terminating_schedule: Option<Schedule>,
    pub divergences: Vec<FoundDivergence>,
    /// K-STEPs executed by the explorer (pruned and replayed prefixes included).
    pub steps: u64,
    /// The longest execution seen (in steps).
    pub longest: u64,
    pub elapsed: Duration,
    pub pct: Option<PctInfo>,
    /// Why state caching at barrier points is off, when it is (exhaustive search).
    pub caching_off: Option<&'static str>,
    /// Why partial-order reduction is off, when it is (exhaustive search).
    pub reduction_off: Option<&'static str>,
    /// Why the search ran on one thread although `--jobs` asked for more, when it did.
    pub jobs_ignored: Option<&'static str>,
    /// Preemption-bounded search: the fewest preemptions of a schedule that reaches each
    /// race, in the order of `races`.
    pub race_preemptions: Vec<u32>,
    /// Which final store the kernel made race-free by `ksim fix` ends in (set by the
    /// caller, which has the source text: [`crate::fix::race_free_store`]).
    pub race_free: Option<crate::fix::RaceFreeStore>,
    /// The canonical execution's store, as the store of a race-free run (set by the
    /// caller: [`stores::canonical_store`]).
    pub canonical: Option<stores::CanonicalStore>,
}

impl Summary {
    pub fn new(mode: Mode) -> Summary {
        Summary {
            mode,
            verdict: Verdict::Exhaustive,
            complete: 0,
            pruned: 0,
            cache_hits: 0,
            sleep_blocked: 0,
            cut: 0,
            states: 0,
            finals: Vec::new(),
            races: Vec::new(),
            faults: Vec::new(),
            non_terminating: 0,
            non_terminating_schedule: None,
            divergences: Vec::new(),
            steps: 0,
            longest: 0,
            elapsed: Duration::ZERO,
            pct: None,
            caching_off: None,
            canonical: None,
            reduction_off: None,
            jobs_ignored: None,
            race_preemptions: Vec::new(),
            race_free: None,
        }
    }

    /// No harmful race (benign ones under the race policy do not count), fault,
    /// divergence or non-termination was found.
    pub fn is_clean(&self) -> bool {
        self.races.iter().all(|r| r.race.benign())
            && self.faults.is_empty()
            && self.divergences.is_empty()
            && self.non_terminating == 0
    }

    pub fn executions(&self) -> u64 {
        self.complete + self.pruned + self.cut
    }

    /// Complete executions per second.
    pub fn rate(&self) -> f64 {
        let s = self.elapsed.as_secs_f64();
        if s > 0.0 {
            self.executions() as f64 / s
        } else {
            0.0
        }
    }

    /// The set of race keys (for comparisons).
    pub fn race_keys(&self) -> std::collections::HashSet<RaceKey> {
        self.races.iter().map(|r| r.race.key()).collect()
    }

    /// The set of fault keys (kind and statement) for comparisons.
    pub fn fault_keys(&self) -> std::collections::BTreeSet<String> {
        self.faults
            .iter()
            .map(|f| format!("{:?}@{:?}", f.fault.kind, f.fault.span))
            .collect()
    }

    /// The set of final memories (for comparisons).
    pub fn final_memories(&self) -> std::collections::HashSet<Memory> {
        self.finals.iter().map(|f| f.memory.clone()).collect()
    }
}

/// Progress snapshot for a progress bar.
#[derive(Clone, Debug, Default)]
pub struct Progress {
    pub executions: u64,
    pub states: u64,
    pub races: u64,
    pub elapsed: Duration,
    /// For sampling: the number of executions asked for.
    pub total: Option<u64>,
}

/// Called now and then (at most every 100 ms) with the progress made.
pub type ProgressFn<'a> = &'a mut (dyn FnMut(&Progress) + Send);

/// Collects findings in discovery order, deduplicated by key.
pub(crate) struct Collector<'a> {
    pub summary: Summary,
    finals: HashMap<Memory, usize>,
    races: HashMap<RaceKey, usize>,
    faults: HashMap<(FaultKind, Option<Span>), usize>,
    divergences: HashMap<String, usize>,
    pub deadline: Deadline,
    on_race: Option<&'a (dyn Fn(&FoundRace) + Sync)>,
    /// `--max-races` / `--stop-on-race`: the number of races that stops the exploration.
    race_limit: Option<(u64, Incomplete)>,
    start: Instant,
    last_progress: Instant,
    /// A worker of the parallel exhaustive search records what it finds, in order, for the
    /// merge to replay ([`dpor`]'s "Several jobs").
    pub(crate) record: Option<dpor::Record>,
}

impl<'a> Collector<'a> {
    pub fn new(mode: Mode, cfg: &Config<'a>) -> Collector<'a> {
        let now = Instant::now();
        Collector {
            summary: Summary::new(mode),
            finals: HashMap::new(),
            races: HashMap::new(),
            faults: HashMap::new(),
            divergences: HashMap::new(),
            deadline: Deadline::new(cfg),
            on_race: cfg.on_race,
            race_limit: if cfg.stop_on_race {
                Some((1, Incomplete::RaceFound))
            } else {
                cfg.max_races.map(|k| (k, Incomplete::MaxRaces))
            },
            start: now,
            last_progress: now,
            record: None,
        }
    }

    /// Forgets every finding (to search again from scratch), keeping the start time, the
    /// deadline and the race limit.
    pub fn restart(&mut self) {
        self.summary = Summary::new(self.summary.mode.clone());
        self.finals.clear();
        self.races.clear();
        self.faults.clear();
        self.divergences.clear();
    }

    /// Checks the race limit, the timeout and the interrupt flag.
    pub fn stop_reason(&self) -> Option<Incomplete> {
        self.race_stop().or_else(|| self.deadline.reason())
    }

    /// Enough distinct races are known (`--max-races`, `--stop-on-race`).
    pub fn race_stop(&self) -> Option<Incomplete> {
        self.race_limit
            .filter(|&(k, _)| self.summary.races.len() as u64 >= k.max(1))
            .map(|(_, why)| why)
    }

    pub fn progress(&mut self, f: &mut Option<ProgressFn<'_>>, total: Option<u64>) {
        let Some(f) = f else { return };
        if self.last_progress.elapsed() < Duration::from_millis(100) {
            return;
        }
        self.last_progress = Instant::now();
        let s = &self.summary;
        f(&Progress {
            executions: s.executions(),
            states: s.states,
            races: s.races.len() as u64,
            elapsed: self.start.elapsed(),
            total,
        });
    }

    /// Whether a schedule of `len` steps would be the shortest known for race `key`.
    pub fn race_improves(&self, key: &RaceKey, len: u64) -> bool {
        self.races
            .get(key)
            .is_none_or(|&i| len < self.summary.races[i].schedule.len())
    }

    pub fn race(&mut self, race: Race, choices: &Schedule) {
        let key = race.key();
        match self.races.get(&key) {
            Some(&i) => {
                let r = &mut self.summary.races[i];
                if choices.len() < r.schedule.len() {
                    r.race = race;
                    r.schedule = choices.clone();
                }
            }
            None => {
                if self.race_stop().is_some() {
                    return; // `--max-races K`: one step can complete more than K at once
                }
                self.races.insert(key, self.summary.races.len());
                let found = FoundRace {
                    race,
                    schedule: choices.clone(),
                };
                if let Some(f) = self.on_race {
                    f(&found);
                }
                self.summary.races.push(found);
            }
        }
    }

    pub fn final_store(&mut self, memory: Memory, choices: &Schedule) {
        self.final_store_n(memory, 1, || choices.clone());
    }

    /// Counts `n` executions ending in `memory`; returns the store's index in the summary.
    fn final_store_n(
        &mut self,
        memory: Memory,
        n: u64,
        schedule: impl FnOnce() -> Schedule,
    ) -> usize {
        match self.finals.get(&memory) {
            Some(&i) => {
                self.summary.finals[i].count += n;
                if let Some(rec) = &mut self.record {
                    rec.push(dpor::Item::Final(i, None));
                }
                i
            }
            None => {
                let i = self.summary.finals.len();
                self.finals.insert(memory.clone(), i);
                let schedule = schedule();
                if let Some(rec) = &mut self.record {
                    let first = Box::new((memory.clone(), schedule.clone()));
                    rec.push(dpor::Item::Final(i, Some(first)));
                }
                self.summary.finals.push(FinalStore {
                    memory,
                    count: n,
                    schedule,
                });
                i
            }
        }
    }

    /// One more execution ends in the known final store `i` (the parallel merge).
    pub(crate) fn final_again(&mut self, i: usize) {
        self.summary.finals[i].count += 1;
    }

    /// An execution ends in `memory` reached by `choices`; returns the store's index.
    pub(crate) fn final_index(&mut self, memory: Memory, choices: Schedule) -> usize {
        self.final_store_n(memory, 1, || choices)
    }

    /// One more execution ends in the known fault `fault` (the parallel merge).
    pub(crate) fn fault_again(&mut self, fault: &Fault) {
        let key = (fault.kind.clone(), fault.span.clone());
        let i = self.faults[&key];
        self.summary.faults[i].count += 1;
    }

    /// A runtime fault (or the step bound) ended an execution.
    pub fn fault(&mut self, fault: Fault, choices: &Schedule) {
        if let FaultKind::StepBound { .. } = fault.kind {
            self.non_terminating(choices);
            return;
        }
        let key = (fault.kind.clone(), fault.span.clone());
        match self.faults.get(&key) {
            Some(&i) => {
                let f = &mut self.summary.faults[i];
                f.count += 1;
                let shorter = choices.len() < f.schedule.len();
                if let Some(rec) = &mut self.record {
                    rec.push(dpor::Item::Fault(
                        Box::new(fault.clone()),
                        shorter.then(|| choices.clone()),
                    ));
                }
                if shorter {
                    f.schedule = choices.clone();
                    f.fault = fault;
                }
            }
            None => {
                if let Some(rec) = &mut self.record {
                    rec.push(dpor::Item::Fault(
                        Box::new(fault.clone()),
                        Some(choices.clone()),
                    ));
                }
                self.faults.insert(key, self.summary.faults.len());
                self.summary.faults.push(FoundFault {
                    fault,
                    count: 1,
                    schedule: choices.clone(),
                });
            }
        }
    }

    pub fn non_terminating(&mut self, choices: &Schedule) {
        let s = &mut self.summary;
        s.non_terminating += 1;
        let shorter = s
            .non_terminating_schedule
            .as_ref()
            .is_none_or(|old| choices.len() < old.len());
        if shorter {
            s.non_terminating_schedule = Some(choices.clone());
        }
        if let Some(rec) = &mut self.record {
            rec.push(dpor::Item::NonTerminating(shorter.then(|| choices.clone())));
        }
    }

    pub fn divergence(&mut self, message: &str, choices: &Schedule) {
        if !self.divergences.contains_key(message) {
            if let Some(rec) = &mut self.record {
                rec.push(dpor::Item::Divergence(Box::new((
                    message.to_string(),
                    choices.clone(),
                ))));
            }
            self.divergences
                .insert(message.to_string(), self.summary.divergences.len());
            self.summary.divergences.push(FoundDivergence {
                message: message.to_string(),
                schedule: choices.clone(),
            });
        }
    }

    /// Merges one whole execution (random and PCT); one stopped by the deadline is cut.
    pub fn outcome(&mut self, out: Outcome) {
        let s = &mut self.summary;
        s.steps += out.steps;
        s.longest = s.longest.max(out.steps);
        if out.stopped {
            s.cut += 1;
        } else {
            s.complete += 1;
        }
        for d in &out.divergences {
            if let Some(m) = &d.divergence {
                self.divergence(m, &out.schedule);
            }
        }
        for race in out.races {
            // The schedule up to the step that completed the race.
            let upto = out.schedule.prefix(race.second.step + 1);
            self.race(race, &upto);
        }
        match out.fault {
            Some(f) => self.fault(f, &out.schedule),
            None if !out.stopped => self.final_store(out.memory, &out.schedule),
            None => {}
        }
    }

    pub fn finish(mut self, verdict: Verdict) -> Summary {
        self.summary.verdict = verdict;
        self.summary.elapsed = self.start.elapsed();
        self.summary
    }
}

/// Fires enabled barriers until none is enabled ([`interp::exec::fire_barriers`]).
pub use interp::exec::fire_barriers as fire_all;

/// The hash of a state, as used for the barrier-state cache (for diagnostics).
pub fn state_hash(state: &State) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    state.hash(&mut h);
    h.finish()
}
