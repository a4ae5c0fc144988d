//! The exhaustive search on several threads (`--jobs N`) when a bound can stop it: segments
//! explored apart, in slices, the first in the sequential order first, and merged in the
//! sequential order as they come (without a bound, `dag` splits the search instead). See the
//! parent module's documentation, "Several jobs", for why the result is the one of the
//! sequential search.

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
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};

/// More threads than this are not started, whatever `--jobs` says (the result does not
/// depend on the number of threads).
pub(super) const MAX_THREADS: usize = 64;

/// Workers wait while the segments explored but not yet merged hold more items than this
/// (the merge then explores the segments it needs itself): a bound on the memory that
/// exploring ahead of the merge can take.
const HOLD_LIMIT: usize = 1 << 22;

/// A slice of a segment's search ends after this many turns of its loop (or where it
/// reaches a synchronisation point): then what it recorded goes to the merge, and the
/// thread goes on with whatever comes first in the sequential order. Small enough that the
/// merge never waits long for a segment it needs, large enough that the lock is rare.
pub(super) const SLICE_STEPS: u64 = 4096;

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
    /// A synchronisation point: its state, the steps taken to it, the segment's schedule,
    /// and the pool's segment from it (set when the slice is handed over).
    Barrier(Box<(State, u64, Schedule, u64)>),
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

    /// The items recorded so far (the K-STEPs not yet recorded stay pending).
    pub(super) fn drain(&mut self) -> Vec<Item> {
        std::mem::take(&mut self.items)
    }

    pub(super) fn finish(mut self) -> Vec<Item> {
        if self.pending > 0 {
            self.items.push(Item::Steps(self.pending));
        }
        self.items
    }
}

/// How a segment's search ended.
pub(super) struct End {
    /// Stopped by the timeout or an interrupt before its end.
    pub(super) stop: Option<Incomplete>,
    pub(super) cut_unseen: bool,
    pub(super) footprint: Option<Footprint>,
}

impl End {
    /// How the worker's search `d`, which returned without yielding, ended.
    pub(super) fn of(d: &mut Dpor) -> End {
        End {
            stop: if d.path.is_empty() {
                None
            } else {
                Some(d.stop.unwrap_or(Incomplete::Interrupted))
            },
            cut_unseen: d.cut_unseen,
            footprint: d.footprint.take(),
        }
    }
}

impl Footprint {
    /// Adds what another search saw.
    pub(super) fn absorb(&mut self, other: &Footprint) {
        self.shared |= other.shared;
        for (&k, &(g, multi, w)) in &other.elems {
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

/// A place in the sequential order: the path of synchronisation point numbers from the root
/// segment (lexicographic order is depth-first order), then a unique number.
type Order = (Vec<u32>, u64);

/// A segment's search waiting for a thread.
enum Task<'w> {
    /// Not started: the segment from this state, reached in this many steps.
    Start(Box<(State, u64)>),
    /// Stopped at the end of a slice.
    Paused(Box<Dpor<'w, 'w>>),
}

/// The search of one segment, from its first slice to the merge.
struct Seg<'w> {
    /// The segment's own place in the sequential order.
    order: Order,
    /// Synchronisation points reached so far (the next child's number).
    children: u32,
    /// The search, while no thread runs it and it is not finished.
    task: Option<Task<'w>>,
    /// Items recorded and not yet merged, in order.
    chunks: VecDeque<Vec<Item>>,
    /// Set when the search is finished (and not yet merged).
    end: Option<End>,
    /// The merge has entered it (a later need for the same segment explores it again).
    taken: bool,
}

impl Seg<'_> {
    /// Where the rest of the search comes in the sequential order: after the subtree of the
    /// last child found (which comes before the next child).
    fn key(&self) -> Order {
        let mut path = self.order.0.clone();
        if self.children > 0 {
            path.extend([self.children - 1, u32::MAX]);
        }
        (path, self.order.1)
    }
}

#[derive(Default)]
struct Inner<'w> {
    /// Per synchronisation point state: per number of steps to it, its segment.
    known: HashMap<State, Vec<(u64, u64)>>,
    segs: HashMap<u64, Seg<'w>>,
    /// The segments waiting for a thread, by [`Seg::key`].
    queue: BTreeMap<Order, u64>,
    /// Items recorded and not yet merged.
    held: usize,
    next: u64,
    /// Threads waiting for something to do.
    idle: usize,
}

/// What one slice of a segment's search gives.
struct Slice<'w> {
    items: Vec<Item>,
    /// The search to go on with, or how it ended.
    rest: Result<Box<Dpor<'w, 'w>>, End>,
}

/// What the threads share.
struct Pool<'w> {
    launch: &'w Launch,
    /// The workers' configuration: no bound (the merge applies them).
    cfg: &'w Config<'w>,
    /// The only bound the workers apply.
    deadline: Deadline,
    cancel: &'w AtomicBool,
    inner: Mutex<Inner<'w>>,
    changed: Condvar,
}

/// What the merge gets for the segment it merges.
enum Next {
    Items(Vec<Item>),
    End(End),
}

impl<'w> Pool<'w> {
    fn lock(&self) -> MutexGuard<'_, Inner<'w>> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn wait<'g>(&self, mut g: MutexGuard<'g, Inner<'w>>) -> MutexGuard<'g, Inner<'w>> {
        g.idle += 1;
        let mut g = self.changed.wait(g).unwrap_or_else(|e| e.into_inner());
        g.idle -= 1;
        g
    }

    /// Queues the segment from `state` reached in `steps` steps, unless it is known;
    /// returns it.
    fn schedule(g: &mut Inner<'w>, path: Vec<u32>, state: &State, steps: u64) -> u64 {
        let ids = g.known.entry(state.clone()).or_default();
        if let Some(&(_, id)) = ids.iter().find(|(n, _)| *n == steps) {
            return id;
        }
        let id = g.next;
        g.next += 1;
        ids.push((steps, id));
        Self::queue(g, id, path, state.clone(), steps, false);
        id
    }

    /// Queues a new segment `id`.
    fn queue(g: &mut Inner<'w>, id: u64, path: Vec<u32>, state: State, steps: u64, taken: bool) {
        let seg = Seg {
            order: (path, id),
            children: 0,
            task: Some(Task::Start(Box::new((state, steps)))),
            chunks: VecDeque::new(),
            end: None,
            taken,
        };
        g.queue.insert(seg.key(), id);
        g.segs.insert(id, seg);
    }

    /// Runs one slice of a segment's search.
    fn slice(&self, task: Task<'w>) -> Slice<'w> {
        let mut d = match task {
            Task::Start(b) => worker(self.launch, self.cfg, self.deadline, self.cancel, b.0, b.1),
            Task::Paused(d) => d,
        };
        d.run();
        let w = d.worker.as_mut().expect("a worker's search");
        if std::mem::take(&mut w.yielded) {
            let items = d.col.record.as_mut().expect("a worker records").drain();
            return Slice { items, rest: Ok(d) };
        }
        let items = d.col.record.take().expect("a worker records").finish();
        Slice {
            items,
            rest: Err(End::of(&mut d)),
        }
    }

    /// Hands a slice of segment `id` over: its items to the merge, the synchronisation
    /// points it reached to the queue. Gives the search back to go on with when `keep` and
    /// nothing earlier in the sequential order waits; queues it otherwise.
    fn deliver(
        &self,
        g: &mut Inner<'w>,
        id: u64,
        slice: Slice<'w>,
        keep: bool,
    ) -> Option<Box<Dpor<'w, 'w>>> {
        self.changed.notify_all();
        let mut slice = slice;
        let (path, first_child) = {
            let seg = &g.segs[&id];
            (seg.order.0.clone(), seg.children)
        };
        let mut children = first_child;
        for item in &mut slice.items {
            if let Item::Barrier(b) = item {
                let mut path = path.clone();
                path.push(children);
                children += 1;
                b.3 = Self::schedule(g, path, &b.0, b.1);
            }
        }
        let seg = g.segs.get_mut(&id).expect("a segment being explored");
        seg.children = children;
        if !slice.items.is_empty() {
            g.held += slice.items.len();
            seg.chunks.push_back(slice.items);
        }
        let seg_key = seg.key();
        let d = match slice.rest {
            Err(end) => {
                seg.end = Some(end);
                None
            }
            Ok(d) => Some(d),
        };
        let d = d?;
        // An idle thread takes what comes earlier: going on saves a hand-over.
        let first = g.idle > 0 || g.queue.first_key_value().is_none_or(|(k, _)| *k > seg_key);
        if keep && first && g.held <= HOLD_LIMIT && !self.cancel.load(Ordering::Relaxed) {
            return Some(d);
        }
        let seg = g.segs.get_mut(&id).expect("a segment being explored");
        seg.task = Some(Task::Paused(d));
        g.queue.insert(seg_key, id);
        None
    }

    /// Runs the search of segment `id` (taken from the queue) from `task`, one slice (the
    /// merge) or as long as it comes first in the sequential order (a worker).
    fn run(&self, id: u64, task: Task<'w>, keep: bool) -> MutexGuard<'_, Inner<'w>> {
        let mut task = task;
        loop {
            let slice = self.slice(task);
            let mut g = self.lock();
            match self.deliver(&mut g, id, slice, keep) {
                Some(d) => task = Task::Paused(d),
                None => return g,
            }
        }
    }

    /// Takes the first waiting segment from the queue.
    fn pop(g: &mut Inner<'w>) -> Option<(u64, Task<'w>)> {
        let (_, id) = g.queue.pop_first()?;
        let task = g.segs.get_mut(&id)?.task.take()?;
        Some((id, task))
    }

    /// A worker thread: explores the waiting segments, the first in the sequential order
    /// first, until the merge is done.
    fn work(&self) {
        let mut g = self.lock();
        loop {
            if self.cancel.load(Ordering::Relaxed) {
                return;
            }
            let next = if g.held <= HOLD_LIMIT {
                Self::pop(&mut g)
            } else {
                None
            };
            g = match next {
                Some((id, task)) => {
                    drop(g);
                    self.run(id, task, true)
                }
                None => self.wait(g),
            };
        }
    }

    /// The merge enters the segment from `state` reached in `steps` steps: `id`, queued
    /// for it, or a new one when that one was merged already (it is needed again).
    fn enter(&self, id: u64, state: &State, steps: u64) -> u64 {
        let mut g = self.lock();
        if let Some(seg) = g.segs.get_mut(&id) {
            if !seg.taken {
                seg.taken = true;
                return id;
            }
        }
        let id = g.next;
        g.next += 1;
        Self::queue(&mut g, id, Vec::new(), state.clone(), steps, true);
        self.changed.notify_all();
        id
    }

    /// What comes next in segment `id` for the merge: the items recorded so far, or how it
    /// ended. While there is none, the merge explores: a slice of this segment if no thread
    /// runs it, else a slice of the first waiting one.
    fn next(&self, id: u64) -> Next {
        let mut g = self.lock();
        loop {
            let seg = g.segs.get_mut(&id).expect("a segment being merged");
            if !seg.chunks.is_empty() {
                let chunks = std::mem::take(&mut seg.chunks);
                let items: Vec<Item> = chunks.into_iter().flatten().collect();
                g.held -= items.len();
                self.changed.notify_all();
                return Next::Items(items);
            }
            if let Some(end) = seg.end.take() {
                g.segs.remove(&id);
                return Next::End(end);
            }
            let mine = seg.task.take().map(|t| (seg.key(), t));
            let work = match mine {
                Some((key, task)) => {
                    g.queue.remove(&key);
                    Some((id, task))
                }
                None if g.held <= HOLD_LIMIT => Self::pop(&mut g),
                None => None,
            };
            g = match work {
                Some((other, task)) => {
                    drop(g);
                    self.run(other, task, false)
                }
                None => self.wait(g),
            };
        }
    }
}

/// A worker's search of the segment from `state`, reached in `steps` steps: no bound but
/// `deadline` and `cancel`, no state cache, everything it finds recorded as [`Item`]s.
pub(super) fn worker<'w>(
    launch: &'w Launch,
    cfg: &'w Config<'w>,
    deadline: Deadline,
    cancel: &'w AtomicBool,
    state: State,
    steps: u64,
) -> Box<Dpor<'w, 'w>> {
    let mut col = Collector::new(Mode::Exhaustive, cfg);
    col.deadline = deadline;
    col.record = Some(Record::default());
    let mut d = Box::new(Dpor {
        launch,
        cfg,
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
            reached: false,
            cancel,
            races: HashMap::new(),
            slice_steps: 0,
            yielded: false,
        }),
    });
    d.push_root(state, steps);
    d
}

/// What [`search`] gives back when the search must start again without caching.
pub(super) type Restart<'a, 'p> = Box<(Collector<'a>, Option<ProgressFn<'p>>)>;

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
    let worker_cfg = Config::default();
    let cancel = AtomicBool::new(false);
    let pool = Pool {
        launch,
        cfg: &worker_cfg,
        deadline: col.deadline,
        cancel: &cancel,
        inner: Mutex::new(Inner::default()),
        changed: Condvar::new(),
    };
    Pool::schedule(&mut pool.lock(), Vec::new(), &state, 0);
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
        cancel.store(true, Ordering::Relaxed);
        let _guard = pool.lock();
        pool.changed.notify_all();
        merged
    })
}

/// A segment being merged.
struct Frame {
    /// The segment in the pool.
    id: u64,
    /// Its items received and not yet merged.
    items: std::vec::IntoIter<Item>,
    /// The whole schedule up to the segment root.
    prefix: Schedule,
    state: State,
    entry: Entry,
    /// The segment's final stores: their indices in the summary.
    finals: Vec<usize>,
    /// A synchronisation point to explore after the current K-STEP.
    descend: Option<(State, u64, Schedule, u64)>,
}

/// Replays the segments' items in the order of the sequential search, with its state cache
/// and its bounds.
struct Merge<'a, 'p, 'q, 'w> {
    pool: &'q Pool<'w>,
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

pub(super) fn concat(prefix: &Schedule, rest: &Schedule) -> Schedule {
    let mut s = prefix.clone();
    for &(t, n) in &rest.runs {
        for _ in 0..n {
            s.push(t);
        }
    }
    s
}

impl<'a, 'p> Merge<'a, 'p, '_, '_> {
    fn run(mut self, root: State) -> Result<Summary, Restart<'a, 'p>> {
        self.enter(root, 0, Schedule::default(), 0);
        let mut stopped = false;
        while let Some(f) = self.stack.last_mut() {
            let Some(item) = f.items.next() else {
                let end = match self.pool.next(f.id) {
                    Next::Items(items) => {
                        f.items = items.into_iter();
                        continue;
                    }
                    Next::End(end) => end,
                };
                // The sequential search stops where it meets a shared element; the
                // search without caching that follows does not depend on where.
                if let (Some(f), Some(g)) = (&mut self.footprint, end.footprint) {
                    f.absorb(&g);
                    if f.shared {
                        return Err(Box::new((self.col, self.progress)));
                    }
                }
                self.cut_unseen |= end.cut_unseen;
                if let Some(why) = end.stop {
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
                    if let Some((state, steps, prefix, id)) = f.descend.take() {
                        self.enter(state, steps, prefix, id);
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
                    let (state, steps, rest, id) = *b;
                    self.barrier_point(state, steps, rest, id);
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

    /// Starts merging the segment from `state` (`Dpor::push_root`), which is the pool's
    /// segment `id` unless that one was merged already.
    fn enter(&mut self, state: State, steps: u64, prefix: Schedule, id: u64) {
        let id = self.pool.enter(id, &state, steps);
        let entry = Entry {
            on_path: true,
            steps_at: steps,
            max_len: 0,
            hit_bound: false,
        };
        self.cache.insert(state.clone(), entry);
        self.stack.push(Frame {
            id,
            items: Vec::new().into_iter(),
            prefix,
            state,
            entry,
            finals: Vec::new(),
            descend: None,
        });
    }

    /// `Dpor::barrier_point`, deciding what the sequential search decides there.
    /// `rest` is the segment's part of the schedule to it; `id` the pool's segment from it.
    fn barrier_point(&mut self, state: State, steps: u64, rest: Schedule, id: u64) {
        match self.cache.get(&state).copied() {
            Some(e) if e.on_path => {
                let sched = concat(&self.stack.last().expect("a frame").prefix, &rest);
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
            Some(_) => self.descend_after_step(state, steps, rest, id),
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
                self.descend_after_step(state, steps, rest, id);
            }
        }
    }

    fn descend_after_step(&mut self, state: State, steps: u64, rest: Schedule, id: u64) {
        let f = self.stack.last_mut().expect("a frame");
        f.descend = Some((state, steps, concat(&f.prefix, &rest), id));
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
