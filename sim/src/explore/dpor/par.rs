//! The exhaustive search on several threads (`--jobs N`): segments explored apart, merged in
//! the sequential order. See the parent module's documentation, "Several jobs", for why the
//! result is the one of the sequential search.

use super::{
    initial, Collector, Config, Dpor, Entry, Footprint, Incomplete, Mode, ProgressFn, Summary,
    Verdict, Worker,
};
use crate::explore::Deadline;
use crate::schedule::Schedule;
use interp::fault::Fault;
use interp::race::Race;
use interp::reference::State;
use interp::{Launch, Memory};
use std::cell::Cell;
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};

/// More threads than this are not started, whatever `--jobs` says (the result does not
/// depend on the number of threads).
const MAX_THREADS: usize = 64;

/// Workers wait while the segments explored but not yet merged hold more items than this
/// (the merge then explores the segments it needs itself): a bound on the memory that
/// exploring ahead of the merge can take.
const HOLD_LIMIT: usize = 1 << 22;

/// One thing a segment's search did that the merge replays, in the order it happened.
/// Schedules are the segment's own steps; the merge puts the prefix up to the segment root
/// in front.
pub(crate) enum Item {
    /// A new execution starts (where the sequential search checks `--max-executions`).
    Start,
    /// This many K-STEPs with nothing else to replay.
    Steps(u64),
    /// One K-STEP that did something replayed above (where the sequential search checks
    /// `--max-races` and then explores a synchronisation point it reached).
    Step,
    /// A race, with the segment's part of its shortest schedule (`Collector::race`).
    Race(Box<(Race, Schedule)>),
    /// An execution ends in the segment's final store number `.0`, given with its schedule
    /// the first time.
    Final(usize, Option<Box<(Memory, Schedule)>>),
    /// A fault, with its schedule when it is the first or shorter than the segment's ones.
    Fault(Box<Fault>, Option<Schedule>),
    /// Non-termination, with its schedule when shorter than the segment's ones.
    NonTerminating(Option<Schedule>),
    Divergence(Box<(String, Schedule)>),
    /// A complete execution of this many steps in all; whether it hit the step bound.
    Complete(u64, bool),
    SleepBlocked,
    /// A synchronisation point: its state, the steps taken to it, the segment's schedule.
    Barrier(Box<(State, u64, Schedule)>),
}

/// A worker's [`Item`]s, recorded by its [`Collector`] and its [`Dpor`].
#[derive(Default)]
pub(crate) struct Record {
    items: Vec<Item>,
    /// K-STEPs not yet recorded as [`Item::Steps`].
    pending: u64,
}

impl Record {
    pub(crate) fn push(&mut self, item: Item) {
        if self.pending > 0 {
            self.items.push(Item::Steps(self.pending));
            self.pending = 0;
        }
        self.items.push(item);
    }

    /// Where the record stands before a K-STEP (for [`Record::step_done`]).
    pub(crate) fn mark(&self) -> usize {
        self.items.len()
    }

    /// A K-STEP ended; `mark` is where the record stood before it.
    pub(crate) fn step_done(&mut self, mark: usize) {
        if self.items.len() > mark {
            self.items.push(Item::Step);
        } else {
            self.pending += 1;
        }
    }

    fn finish(mut self) -> Vec<Item> {
        if self.pending > 0 {
            self.items.push(Item::Steps(self.pending));
        }
        self.items
    }
}

/// The search of one segment.
struct Segment {
    items: Vec<Item>,
    /// Stopped by the timeout or an interrupt before its end.
    stop: Option<Incomplete>,
    cut_unseen: bool,
    footprint: Option<Footprint>,
}

impl Footprint {
    /// Adds what another search saw.
    fn absorb(&mut self, other: Footprint) {
        self.shared |= other.shared;
        for (k, (g, multi, w)) in other.elems {
            let x = self.elems.entry(k).or_insert((g, false, false));
            x.1 |= multi || x.0 != g;
            x.2 |= w;
            self.shared |= x.1 && x.2;
        }
    }
}

/// Whether the exhaustive search runs on several threads: asked for, with state caching
/// (without it the whole search is one segment), and, with several work-groups, only
/// without a bound that stops the search at a given execution (see the parent module's
/// documentation: there the search may restart without caching, and where it does so
/// depends on the order of the executions).
pub(super) fn applies(launch: &Launch, cfg: &Config, caching: bool) -> bool {
    let bounded = cfg.max_executions.is_some()
        || cfg.max_states.is_some()
        || cfg.max_races.is_some()
        || cfg.stop_on_race;
    cfg.jobs > 1 && caching && (launch.groups == 1 || !bounded)
}

/// A task's place in the sequential order: the path of barrier numbers from the root
/// segment (lexicographic order is depth-first order), then a unique number.
type Order = (Vec<u32>, u64);

enum Slot {
    Queued(Order),
    Running,
    Done(Segment, Order),
    /// Handed to the merge (which explores it again if it needs it again).
    Taken(Order),
}

#[derive(Default)]
struct Inner {
    /// Per synchronisation point state: per number of steps to it, its segment's search.
    slots: HashMap<State, Vec<(u64, Slot)>>,
    queue: BTreeMap<Order, (State, u64)>,
    /// Items of the segments done and not yet merged.
    held: usize,
    next: u64,
}

/// What the threads share.
struct Pool<'a> {
    launch: &'a Launch,
    /// The only bound the workers apply (the merge applies the others).
    deadline: Deadline,
    inner: Mutex<Inner>,
    changed: Condvar,
    cancel: AtomicBool,
}

impl Pool<'_> {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Queues the segment from `state` reached in `steps` steps, unless it is known.
    fn schedule(&self, order: Vec<u32>, state: &State, steps: u64) {
        let mut g = self.lock();
        let g = &mut *g;
        let known = g
            .slots
            .get(state)
            .is_some_and(|v| v.iter().any(|(n, _)| *n == steps));
        if known {
            return;
        }
        let order = (order, g.next);
        g.next += 1;
        g.queue.insert(order.clone(), (state.clone(), steps));
        g.slots
            .entry(state.clone())
            .or_default()
            .push((steps, Slot::Queued(order)));
        self.changed.notify_one();
    }

    fn slot<'g>(g: &'g mut Inner, state: &State, steps: u64) -> Option<&'g mut Slot> {
        let v = g.slots.get_mut(state)?;
        v.iter_mut().find(|(n, _)| *n == steps).map(|(_, s)| s)
    }

    /// Explores the segment from `state` (its children are queued as they are found).
    fn explore(&self, order: &Order, state: State, steps: u64) -> Segment {
        let barriers = Cell::new(0u32);
        let spawn = |s: &State, n: u64| {
            let mut child = order.0.clone();
            child.push(barriers.get());
            barriers.set(barriers.get() + 1);
            self.schedule(child, s, n);
        };
        let launch = self.launch;
        let cfg = Config::default();
        let mut col = Collector::new(Mode::Exhaustive, &cfg);
        col.deadline = self.deadline;
        col.record = Some(Record::default());
        let mut d = Dpor {
            launch,
            cfg: &cfg,
            col,
            path: Vec::new(),
            choices: Schedule::default(),
            index: HashMap::new(),
            cache: HashMap::new(),
            caching: true,
            footprint: (launch.groups > 1).then(Footprint::default),
            zero: vec![0u32; launch.threads()].into(),
            stop: None,
            skipped: false,
            cut_unseen: false,
            progress: None,
            ticks: 0,
            visit: None,
            visit_full: false,
            base: steps,
            worker: Some(Worker {
                spawn: &spawn,
                cancel: &self.cancel,
                races: HashMap::new(),
            }),
        };
        d.push_root(state, steps);
        d.run();
        Segment {
            items: d.col.record.take().expect("a worker records").finish(),
            stop: if d.path.is_empty() {
                None
            } else {
                Some(d.stop.unwrap_or(Incomplete::Interrupted))
            },
            cut_unseen: d.cut_unseen,
            footprint: d.footprint.take(),
        }
    }

    /// A worker thread: explores queued segments, the first in the sequential order first.
    fn work(&self) {
        loop {
            let (order, state, steps) = {
                let mut g = self.lock();
                loop {
                    if self.cancel.load(Ordering::Relaxed) {
                        return;
                    }
                    if g.held <= HOLD_LIMIT {
                        if let Some((order, (state, steps))) = g.queue.pop_first() {
                            if let Some(s) = Self::slot(&mut g, &state, steps) {
                                *s = Slot::Running;
                            }
                            break (order, state, steps);
                        }
                    }
                    g = self.changed.wait(g).unwrap_or_else(|e| e.into_inner());
                }
            };
            let seg = self.explore(&order, state.clone(), steps);
            let mut g = self.lock();
            g.held += seg.items.len();
            if let Some(s) = Self::slot(&mut g, &state, steps) {
                *s = Slot::Done(seg, order);
            }
            self.changed.notify_all();
        }
    }

    /// The merge needs the segment from `state` reached in `steps` steps: takes it when
    /// done, waits while a worker explores it, and explores it itself otherwise.
    fn take(&self, state: &State, steps: u64) -> Segment {
        let mut g = self.lock();
        loop {
            let order = match Self::slot(&mut g, state, steps) {
                None => (Vec::new(), u64::MAX),
                Some(Slot::Running) => {
                    g = self.changed.wait(g).unwrap_or_else(|e| e.into_inner());
                    continue;
                }
                Some(slot) => {
                    let order = match slot {
                        Slot::Queued(o) | Slot::Taken(o) | Slot::Done(_, o) => o.clone(),
                        Slot::Running => unreachable!("handled above"),
                    };
                    match std::mem::replace(slot, Slot::Taken(order.clone())) {
                        Slot::Done(seg, _) => {
                            g.held -= seg.items.len();
                            self.changed.notify_all();
                            return seg;
                        }
                        Slot::Queued(_) => {
                            g.queue.remove(&order);
                        }
                        _ => {}
                    }
                    order
                }
            };
            drop(g);
            return self.explore(&order, state.clone(), steps);
        }
    }
}

/// What [`search`] gives back when the search must start again without caching.
type Restart<'a, 'p> = Box<(Collector<'a>, Option<ProgressFn<'p>>)>;

/// The exhaustive search with caching on `cfg.jobs` threads (the calling one merges and
/// explores too). `Err` gives the collector back when a `global` element turned out to be
/// shared by work-groups: the caller searches again without caching, as the sequential
/// search does.
pub(super) fn search<'a, 'p>(
    launch: &'a Launch,
    cfg: &'a Config<'a>,
    mut col: Collector<'a>,
    progress: Option<ProgressFn<'p>>,
) -> Result<Summary, Restart<'a, 'p>> {
    let Some(state) = initial(launch, &mut col) else {
        return Ok(col.finish(Verdict::Exhaustive));
    };
    let pool = Pool {
        launch,
        deadline: col.deadline,
        inner: Mutex::new(Inner::default()),
        changed: Condvar::new(),
        cancel: AtomicBool::new(false),
    };
    pool.schedule(Vec::new(), &state, 0);
    let threads = cfg.jobs.min(MAX_THREADS);
    std::thread::scope(|s| {
        for _ in 1..threads {
            s.spawn(|| pool.work());
        }
        let merged = Merge {
            pool: &pool,
            cfg,
            col,
            progress,
            cache: HashMap::new(),
            stack: Vec::new(),
            stop: None,
            skipped: false,
            cut_unseen: false,
            footprint: (launch.groups > 1).then(Footprint::default),
            ticks: 0,
        }
        .run(state);
        pool.cancel.store(true, Ordering::Relaxed);
        let _guard = pool.lock();
        pool.changed.notify_all();
        merged
    })
}

/// A segment being merged.
struct Frame {
    items: std::vec::IntoIter<Item>,
    stop: Option<Incomplete>,
    /// The whole schedule up to the segment root.
    prefix: Schedule,
    state: State,
    entry: Entry,
    /// The segment's final stores: their indices in the summary.
    finals: Vec<usize>,
    /// A synchronisation point to explore after the current K-STEP.
    descend: Option<(State, u64, Schedule)>,
}

/// Replays the segments' items in the order of the sequential search, with its state cache
/// and its bounds.
struct Merge<'a, 'p, 'q> {
    pool: &'q Pool<'a>,
    cfg: &'a Config<'a>,
    col: Collector<'a>,
    progress: Option<ProgressFn<'p>>,
    cache: HashMap<State, Entry>,
    stack: Vec<Frame>,
    stop: Option<Incomplete>,
    skipped: bool,
    cut_unseen: bool,
    footprint: Option<Footprint>,
    ticks: u64,
}

fn concat(prefix: &Schedule, rest: &Schedule) -> Schedule {
    let mut s = prefix.clone();
    for &(t, n) in &rest.runs {
        for _ in 0..n {
            s.push(t);
        }
    }
    s
}

impl<'a, 'p> Merge<'a, 'p, '_> {
    fn run(mut self, root: State) -> Result<Summary, Restart<'a, 'p>> {
        if !self.enter(root, 0, Schedule::default()) {
            return Err(Box::new((self.col, self.progress)));
        }
        let mut stopped = false;
        while let Some(f) = self.stack.last_mut() {
            let Some(item) = f.items.next() else {
                if let Some(why) = f.stop {
                    self.stop.get_or_insert(why);
                    self.col.summary.cut += 1;
                    stopped = true;
                    break;
                }
                let f = self.stack.pop().expect("a frame");
                let entry = Entry {
                    on_path: false,
                    ..f.entry
                };
                self.cache.insert(f.state, entry);
                continue;
            };
            match item {
                Item::Start => {
                    if self.stop.is_none() {
                        if let Some(m) = self.cfg.max_executions {
                            let s = &self.col.summary;
                            if s.complete + s.pruned >= m {
                                self.stop = Some(Incomplete::MaxExecutions);
                            }
                        }
                    }
                    if self.stop.is_none() {
                        self.stop = self.col.deadline.reason();
                    }
                    if self.stop.is_some() {
                        self.col.summary.cut += 1;
                        stopped = true;
                        break;
                    }
                }
                Item::Steps(n) => self.col.summary.steps += n,
                Item::Step => {
                    self.col.summary.steps += 1;
                    if let Some(why) = self.col.race_stop() {
                        self.stop.get_or_insert(why);
                        self.col.summary.cut += 1;
                        stopped = true;
                        break;
                    }
                    if let Some((state, steps, prefix)) = f.descend.take() {
                        if !self.enter(state, steps, prefix) {
                            return Err(Box::new((self.col, self.progress)));
                        }
                    }
                }
                Item::Race(b) => {
                    let (mut race, rest) = *b;
                    // The prefix a race needs: see `Dpor::segment_prefix`.
                    let group = race.second.thread.group;
                    let ls = self.pool.launch.local_size;
                    let prefix = if self.pool.launch.groups == 1 {
                        f.prefix.clone()
                    } else {
                        let mut mine = Schedule::default();
                        for t in f.prefix.choices().filter(|t| t / ls == group) {
                            mine.push(t);
                        }
                        mine
                    };
                    let len = prefix.len() + rest.len();
                    if self.col.race_improves(&race.key(), len) {
                        race.first.step += prefix.len();
                        race.second.step += prefix.len();
                        self.col.race(race, &concat(&prefix, &rest));
                    }
                }
                Item::Final(_, Some(b)) => {
                    let (memory, rest) = *b;
                    let i = self.col.final_index(memory, concat(&f.prefix, &rest));
                    f.finals.push(i);
                }
                Item::Final(i, None) => self.col.final_again(f.finals[i]),
                Item::Fault(fault, Some(rest)) => {
                    self.col.fault(*fault, &concat(&f.prefix, &rest));
                }
                Item::Fault(fault, None) => self.col.fault_again(&fault),
                Item::NonTerminating(Some(rest)) => {
                    self.col.non_terminating(&concat(&f.prefix, &rest));
                }
                Item::NonTerminating(None) => self.col.summary.non_terminating += 1,
                Item::Divergence(b) => {
                    let sched = concat(&f.prefix, &b.1);
                    self.col.divergence(&b.0, &sched);
                }
                Item::Complete(len, bounded) => {
                    self.col.summary.complete += 1;
                    self.learn(len, bounded);
                    self.tick();
                }
                Item::SleepBlocked => {
                    self.col.summary.pruned += 1;
                    self.col.summary.sleep_blocked += 1;
                    self.tick();
                }
                Item::Barrier(b) => {
                    let (state, steps, rest) = *b;
                    let sched = concat(&f.prefix, &rest);
                    self.barrier_point(state, steps, sched);
                }
            }
        }
        let verdict = if stopped {
            Verdict::Incomplete(self.stop.unwrap_or(Incomplete::Interrupted))
        } else if self.skipped {
            Verdict::Incomplete(self.stop.unwrap_or(Incomplete::MaxStates))
        } else if self.cut_unseen {
            Verdict::Incomplete(Incomplete::StepBound)
        } else {
            Verdict::Exhaustive
        };
        Ok(self.col.finish(verdict))
    }

    /// Starts merging the segment from `state` (`Dpor::push_root`); false when a `global`
    /// element is now known to be shared by work-groups.
    fn enter(&mut self, state: State, steps: u64, prefix: Schedule) -> bool {
        let seg = self.pool.take(&state, steps);
        if let (Some(f), Some(g)) = (&mut self.footprint, seg.footprint) {
            f.absorb(g);
            if f.shared {
                return false;
            }
        }
        self.cut_unseen |= seg.cut_unseen;
        let entry = Entry {
            on_path: true,
            steps_at: steps,
            max_len: 0,
            hit_bound: false,
        };
        self.cache.insert(state.clone(), entry);
        self.stack.push(Frame {
            items: seg.items.into_iter(),
            stop: seg.stop,
            prefix,
            state,
            entry,
            finals: Vec::new(),
            descend: None,
        });
        true
    }

    /// `Dpor::barrier_point`, deciding what the sequential search decides there.
    fn barrier_point(&mut self, state: State, steps: u64, sched: Schedule) {
        match self.cache.get(&state).copied() {
            Some(e) if e.on_path => {
                self.col.non_terminating(&sched);
                self.col.summary.complete += 1;
                self.learn(steps, true);
                self.tick();
            }
            Some(e)
                if steps >= e.steps_at
                    && (e.steps_at == steps
                        || (!e.hit_bound && steps + e.max_len <= self.pool.launch.max_steps)) =>
            {
                self.col.summary.pruned += 1;
                self.col.summary.cache_hits += 1;
                self.learn(steps + e.max_len, e.hit_bound);
                self.tick();
            }
            Some(_) => self.descend_after_step(state, steps, sched),
            None => {
                if let Some(m) = self.cfg.max_states {
                    if self.col.summary.states >= m {
                        self.stop.get_or_insert(Incomplete::MaxStates);
                        self.col.summary.cut += 1;
                        self.skipped = true;
                        return;
                    }
                }
                self.col.summary.states += 1;
                self.descend_after_step(state, steps, sched);
            }
        }
    }

    fn descend_after_step(&mut self, state: State, steps: u64, sched: Schedule) {
        let f = self.stack.last_mut().expect("a frame");
        f.descend = Some((state, steps, sched));
    }

    /// `Dpor::learn`: every segment root being merged learns of an execution's length.
    fn learn(&mut self, len: u64, bounded: bool) {
        self.col.summary.longest = self.col.summary.longest.max(len);
        for f in &mut self.stack {
            let e = &mut f.entry;
            e.max_len = e.max_len.max(len.saturating_sub(e.steps_at));
            e.hit_bound |= bounded;
        }
    }

    fn tick(&mut self) {
        self.ticks += 1;
        if self.ticks.is_multiple_of(32) {
            self.col.progress(&mut self.progress, None);
        }
    }
}
