//! The exhaustive search on several threads when nothing can cut it short (no
//! `--max-executions`, `--max-states`, `--max-races`, `--stop-on-race`): every segment
//! explored apart, in any order, then one replay in the sequential order.
//!
//! # Why the result is the sequential one
//!
//! A segment's search is a function of its root state S and the steps k taken to it (see
//! the parent module, "Several jobs"). The sequential search explores a segment (S, k) only
//! where one of the segments it explores reaches S in k steps. So the set of every (S, k)
//! reachable from the root through segments, which the threads here explore (each once:
//! they share a set of the segments known, keyed by the state, compared by full equality,
//! and k), contains every segment the sequential search explores. Each exploration records,
//! in order, what its search did ([`Item`]s: an execution starts, K-STEPs, races with the
//! segment's part of their schedule, final stores, faults, complete executions, the
//! synchronisation points reached with the segment's schedule to them). The replay then
//! walks the records depth first exactly as the sequential search walks the tree: the same
//! state cache (entries keyed by a number per distinct state, with the same steps, longest
//! future and step-bound flag) decides at each synchronisation point whether the sequential
//! search explores it (the replay then enters that segment's record), prunes it as a cache
//! hit or sees a cycle; and every finding goes to the one [`Collector`] in the sequential
//! order, with the schedule up to the segment root in front. The collector thus receives
//! the calls of the sequential search, in its order, and the summary is the same: verdict,
//! every count, distinct final stores with their counts and first schedules, races with
//! their shortest schedules (ties: the first found in the sequential order), faults.
//!
//! What differs is only work: a segment (S, k′) that the sequential search prunes as a hit
//! on (S, k) with k < k′ is explored anyway (a state reached after different numbers of
//! steps is rare: with one group each thread's steps to a barrier are fixed by its path),
//! and a record the replay enters twice (a state explored again in fewer steps) is
//! replayed, not searched, twice. With several work-groups, the footprint of each segment
//! (what its groups accessed) is joined in the replay order, so the search starts again
//! without caching exactly where the sequential one does, never for a segment the
//! sequential search does not reach.
//!
//! Only the timeout and an interrupt stop at a moment that depends on timing: a thread
//! looks at them in its executions and before each segment, as the sequential search
//! does, and the replay ends at the first record (in the sequential order) that they
//! stopped, with what the records before it hold. (The replay itself does not look at
//! the clock: it would throw away what the threads found before the deadline.)
//!
//! # Why it is faster
//!
//! The parts need no hand-over in order: a thread takes the waiting segment that comes
//! first in the sequential order (so that, with a timeout, what was explored is mostly
//! what the replay comes to first), runs it to its end, and queues the synchronisation
//! points it reached that are new; no thread waits for another while work is queued. The replay's cost per item is a counter, a lookup by number or a
//! schedule put in front of a finding: small beside the K-STEPs and the race analysis it
//! stands for. Each synchronisation point reached is hashed once (outside the lock).

use super::par::{concat, worker, End, Item, Restart};
use super::{
    initial, Collector, Config, Entry, Footprint, Incomplete, ProgressFn, Summary, Verdict,
};
use crate::explore::Deadline;
use crate::schedule::Schedule;
use interp::race::RaceKey;
use interp::reference::State;
use interp::Launch;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::hash::{BuildHasher, BuildHasherDefault, Hasher};
use std::sync::atomic::AtomicBool;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Whether nothing can cut the search short before its end but the timeout or an
/// interrupt (then this module's split applies).
pub(super) fn applies(cfg: &Config) -> bool {
    cfg.max_executions.is_none()
        && cfg.max_states.is_none()
        && cfg.max_races.is_none()
        && !cfg.stop_on_race
}

/// A synchronisation point reached: the distinct state's number, the steps to it, the
/// segment's schedule to it, and the segment explored from it.
struct Child {
    sid: u64,
    steps: u64,
    rest: Schedule,
    id: usize,
}

/// One thing a segment's search did, in order ([`Item::Barrier`] becomes a [`Child`]).
enum Step {
    Item(Item),
    Child(Child),
}

/// What one segment's search did.
struct Rec {
    steps: Vec<Step>,
    end: End,
}

/// A state hash as its own hash: [`Inner::known`] is keyed by hashes made outside the lock.
#[derive(Default)]
struct Prehashed(u64);

impl Hasher for Prehashed {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// A distinct synchronisation point state: its number, and per number of steps to it its
/// segment.
struct Distinct {
    state: State,
    sid: u64,
    segs: Vec<(u64, usize)>,
}

/// What the threads share under one lock: the states known, the records, the waiting
/// segments.
#[derive(Default)]
struct Inner {
    /// Per state hash, the distinct states with that hash.
    known: HashMap<u64, Vec<Distinct>, BuildHasherDefault<Prehashed>>,
    states: u64,
    /// Per segment, its record once explored.
    recs: Vec<Option<Rec>>,
    /// Segments waiting for a thread, by their place in the sequential order (the child
    /// numbers from the root segment down: lexicographic order is depth-first order): id,
    /// root state, steps to it.
    tasks: BTreeMap<Vec<u32>, (usize, State, u64)>,
    /// Threads exploring a segment.
    busy: usize,
    /// For the progress shown while the threads search: executions ended (complete,
    /// sleep-set blocked, or at a known barrier state) and the distinct races recorded.
    ended: u64,
    races: HashSet<RaceKey>,
}

impl Inner {
    /// The state's number and the segment from it reached in `steps` steps, queued at
    /// `place` if new.
    fn intern(&mut self, hash: u64, state: &State, steps: u64, place: Vec<u32>) -> (u64, usize) {
        let same = self.known.entry(hash).or_default();
        let d = match same.iter().position(|d| d.state == *state) {
            Some(i) => &mut same[i],
            None => {
                same.push(Distinct {
                    state: state.clone(),
                    sid: self.states,
                    segs: Vec::new(),
                });
                self.states += 1;
                same.last_mut().expect("just pushed")
            }
        };
        if let Some(&(_, id)) = d.segs.iter().find(|(k, _)| *k == steps) {
            self.ended += 1;
            return (d.sid, id);
        }
        let id = self.recs.len();
        self.recs.push(None);
        d.segs.push((steps, id));
        self.tasks.insert(place, (id, state.clone(), steps));
        (d.sid, id)
    }
}

/// What the threads share.
/// The workers' cancel flag, never set: each segment's search runs to its end (or the
/// deadline).
static NEVER_CANCELLED: AtomicBool = AtomicBool::new(false);

struct Pool<'w> {
    launch: &'w Launch,
    /// The workers' configuration: no bound.
    cfg: &'w Config<'w>,
    deadline: Deadline,
    hasher: std::hash::RandomState,
    inner: Mutex<Inner>,
    changed: Condvar,
}

impl Pool<'_> {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Explores queued segments until none is queued and no thread explores one; the
    /// calling thread tells `progress` how far the search is.
    fn work(&self, mut progress: Option<&mut Progress<'_, '_>>) {
        let mut g = self.lock();
        loop {
            if let Some(p) = &mut progress {
                p.tell(&g);
            }
            // The first in the sequential order: with a timeout, what the threads explored
            // is then mostly what the replay comes to first.
            if let Some((place, (id, state, steps))) = g.tasks.pop_first() {
                g.busy += 1;
                drop(g);
                let rec = self.explore(state, steps, place);
                let mut ended = 0;
                let mut races = Vec::new();
                for step in &rec.steps {
                    match step {
                        Step::Item(Item::Complete(..) | Item::SleepBlocked) => ended += 1,
                        Step::Item(Item::Race(b)) => races.push(b.0.key()),
                        _ => {}
                    }
                }
                g = self.lock();
                g.ended += ended;
                g.races.extend(races);
                g.recs[id] = Some(rec);
                g.busy -= 1;
                if g.busy == 0 && g.tasks.is_empty() {
                    self.changed.notify_all();
                }
                continue;
            }
            if g.busy == 0 {
                return;
            }
            g = self.changed.wait(g).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// The search of the segment from `state` reached in `steps` steps, to its end; the
    /// synchronisation points it reaches are queued as it goes.
    fn explore(&self, state: State, steps: u64, place: Vec<u32>) -> Rec {
        if let Some(why) = self.deadline.reason() {
            let end = End {
                stop: Some(why),
                cut_unseen: false,
                footprint: None,
            };
            return Rec {
                steps: Vec::new(),
                end,
            };
        }
        let mut d = worker(
            self.launch,
            self.cfg,
            self.deadline,
            &NEVER_CANCELLED,
            state,
            steps,
        );
        let mut out = Vec::new();
        let mut children = 0;
        loop {
            d.run();
            let w = d.worker.as_mut().expect("a worker's search");
            let yielded = std::mem::take(&mut w.yielded);
            let items = if yielded {
                d.col.record.as_mut().expect("a worker records").drain()
            } else {
                d.col.record.take().expect("a worker records").finish()
            };
            self.intern(items, &mut out, &place, &mut children);
            if !yielded {
                return Rec {
                    steps: out,
                    end: End::of(&mut d),
                };
            }
        }
    }

    /// Appends `items` to `out`, each synchronisation point as a [`Child`] (new ones queued
    /// after `place`, numbered from `children` on).
    fn intern(&self, items: Vec<Item>, out: &mut Vec<Step>, place: &[u32], children: &mut u32) {
        let hashes: Vec<u64> = items
            .iter()
            .filter_map(|i| match i {
                Item::Barrier(b) => Some(self.hasher.hash_one(&b.0)),
                _ => None,
            })
            .collect();
        if hashes.is_empty() {
            out.extend(items.into_iter().map(Step::Item));
            return;
        }
        let mut g = self.lock();
        let queued = g.tasks.len();
        let mut hashes = hashes.into_iter();
        for item in items {
            out.push(match item {
                Item::Barrier(b) => {
                    let (state, steps, rest, _) = *b;
                    let hash = hashes.next().expect("a hash per barrier");
                    let mut at = place.to_vec();
                    at.push(*children);
                    *children += 1;
                    let (sid, id) = g.intern(hash, &state, steps, at);
                    Step::Child(Child {
                        sid,
                        steps,
                        rest,
                        id,
                    })
                }
                item => Step::Item(item),
            });
        }
        if g.tasks.len() > queued {
            self.changed.notify_all();
        }
    }
}

/// The progress shown while the threads search (the replay then shows its own).
struct Progress<'f, 'p> {
    f: &'f mut ProgressFn<'p>,
    start: Instant,
    last: Instant,
}

impl Progress<'_, '_> {
    fn tell(&mut self, g: &Inner) {
        if self.last.elapsed() < Duration::from_millis(100) {
            return;
        }
        self.last = Instant::now();
        (self.f)(&crate::explore::Progress {
            executions: g.ended,
            states: g.states,
            races: g.races.len() as u64,
            elapsed: self.start.elapsed(),
            total: None,
        });
    }
}

/// The exhaustive search with caching on `cfg.jobs` threads (the calling one too), then the
/// replay on the calling thread. `Err` gives the collector back when a `global` element
/// turned out to be shared by work-groups (the caller searches again without caching).
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
    let pool = Pool {
        launch,
        cfg: &worker_cfg,
        deadline: col.deadline,
        hasher: std::hash::RandomState::new(),
        inner: Mutex::new(Inner::default()),
        changed: Condvar::new(),
    };
    let hash = pool.hasher.hash_one(&state);
    let (root_sid, root) = pool.lock().intern(hash, &state, 0, Vec::new());
    let threads = cfg.jobs.clamp(1, super::par::MAX_THREADS);
    let mut progress = progress;
    std::thread::scope(|s| {
        for _ in 1..threads {
            s.spawn(|| pool.work(None));
        }
        let now = Instant::now();
        let mut shown = progress.as_mut().map(|f| Progress {
            f,
            start: now,
            last: now,
        });
        pool.work(shown.as_mut());
    });
    let inner = pool.inner.into_inner().unwrap_or_else(|e| e.into_inner());
    let recs: Vec<Rec> = inner
        .recs
        .into_iter()
        .map(|r| r.expect("every queued segment explored"))
        .collect();
    Replay {
        launch,
        col,
        progress,
        recs: &recs,
        cache: HashMap::new(),
        stack: Vec::new(),
        stop: None,
        cut_unseen: false,
        footprint: (launch.groups > 1).then(Footprint::default),
        ticks: 0,
    }
    .run(root_sid, root)
}

/// A segment being replayed.
struct Frame {
    id: usize,
    /// The next step of its record.
    at: usize,
    /// The whole schedule up to the segment root.
    prefix: Schedule,
    sid: u64,
    entry: Entry,
    /// The segment's final stores: their indices in the summary.
    finals: Vec<usize>,
    /// A synchronisation point to enter after the current K-STEP.
    descend: Option<(u64, u64, Schedule, usize)>,
}

/// Walks the records in the order of the sequential search, with its state cache.
struct Replay<'a, 'p, 'r> {
    launch: &'a Launch,
    col: Collector<'a>,
    progress: Option<ProgressFn<'p>>,
    recs: &'r [Rec],
    /// Per distinct state's number: what the sequential search's cache holds for it.
    cache: HashMap<u64, Entry>,
    stack: Vec<Frame>,
    stop: Option<Incomplete>,
    cut_unseen: bool,
    footprint: Option<Footprint>,
    ticks: u64,
}

impl<'a, 'p> Replay<'a, 'p, '_> {
    fn run(mut self, root_sid: u64, root: usize) -> Result<Summary, Restart<'a, 'p>> {
        self.enter(root_sid, 0, Schedule::default(), root);
        let recs = self.recs;
        let mut stopped = false;
        while let Some(f) = self.stack.last_mut() {
            let rec = &recs[f.id];
            let Some(step) = rec.steps.get(f.at) else {
                // The sequential search stops where it meets a shared element; the
                // search without caching that follows does not depend on where.
                if let (Some(f), Some(g)) = (&mut self.footprint, &rec.end.footprint) {
                    f.absorb(g);
                    if f.shared {
                        return Err(Box::new((self.col, self.progress)));
                    }
                }
                self.cut_unseen |= rec.end.cut_unseen;
                if let Some(why) = rec.end.stop {
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
                self.cache.insert(f.sid, entry);
                continue;
            };
            f.at += 1;
            let item = match step {
                Step::Child(c) => {
                    self.barrier_point(c);
                    continue;
                }
                Step::Item(item) => item,
            };
            match item {
                // No bound is checked where an execution starts; the deadline was checked
                // by the threads (a record stopped by it ends the replay).
                Item::Start => {}
                Item::Steps(n) => self.col.summary.steps += n,
                Item::Step => {
                    self.col.summary.steps += 1;
                    if let Some((sid, steps, prefix, id)) = f.descend.take() {
                        self.enter(sid, steps, prefix, id);
                    }
                }
                Item::Race(b) => {
                    let (race, rest) = &**b;
                    let mut race = race.clone();
                    // The prefix a race needs: see `Dpor::segment_prefix`.
                    let group = race.second.thread.group;
                    let ls = self.launch.local_size;
                    let prefix = if self.launch.groups == 1 {
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
                        self.col.race(race, &concat(&prefix, rest));
                    }
                }
                Item::Final(_, Some(b)) => {
                    let (memory, rest) = &**b;
                    let i = self
                        .col
                        .final_index(memory.clone(), concat(&f.prefix, rest));
                    f.finals.push(i);
                }
                Item::Final(i, None) => self.col.final_again(f.finals[*i]),
                Item::Fault(fault, Some(rest)) => {
                    self.col.fault((**fault).clone(), &concat(&f.prefix, rest));
                }
                Item::Fault(fault, None) => self.col.fault_again(fault),
                Item::NonTerminating(Some(rest)) => {
                    self.col.non_terminating(&concat(&f.prefix, rest));
                }
                Item::NonTerminating(None) => self.col.summary.non_terminating += 1,
                Item::Divergence(b) => {
                    let sched = concat(&f.prefix, &b.1);
                    self.col.divergence(&b.0, &sched);
                }
                Item::Complete(len, bounded) => {
                    self.col.summary.complete += 1;
                    self.learn(*len, *bounded);
                    self.tick();
                }
                Item::SleepBlocked => {
                    self.col.summary.pruned += 1;
                    self.col.summary.sleep_blocked += 1;
                    self.tick();
                }
                // Every one became a `Step::Child` when its slice was handed over.
                Item::Barrier(_) => {}
            }
        }
        let verdict = if stopped {
            Verdict::Incomplete(self.stop.unwrap_or(Incomplete::Interrupted))
        } else if self.cut_unseen {
            Verdict::Incomplete(Incomplete::StepBound)
        } else {
            Verdict::Exhaustive
        };
        Ok(self.col.finish(verdict))
    }

    /// Starts replaying segment `id` (`Dpor::push_root`).
    fn enter(&mut self, sid: u64, steps: u64, prefix: Schedule, id: usize) {
        let entry = Entry {
            on_path: true,
            steps_at: steps,
            max_len: 0,
            hit_bound: false,
        };
        self.cache.insert(sid, entry);
        self.stack.push(Frame {
            id,
            at: 0,
            prefix,
            sid,
            entry,
            finals: Vec::new(),
            descend: None,
        });
    }

    /// `Dpor::barrier_point`, deciding what the sequential search decides there.
    fn barrier_point(&mut self, c: &Child) {
        let max_steps = self.launch.max_steps;
        let f = self.stack.last_mut().expect("a frame");
        match self.cache.get(&c.sid).copied() {
            Some(e) if e.on_path => {
                let sched = concat(&f.prefix, &c.rest);
                self.col.non_terminating(&sched);
                self.col.summary.complete += 1;
                self.learn(c.steps, true);
                self.tick();
            }
            Some(e)
                if c.steps >= e.steps_at
                    && (e.steps_at == c.steps
                        || (!e.hit_bound && c.steps + e.max_len <= max_steps)) =>
            {
                self.col.summary.pruned += 1;
                self.col.summary.cache_hits += 1;
                self.learn(c.steps + e.max_len, e.hit_bound);
                self.tick();
            }
            found => {
                if found.is_none() {
                    self.col.summary.states += 1;
                }
                f.descend = Some((c.sid, c.steps, concat(&f.prefix, &c.rest), c.id));
            }
        }
    }

    /// `Dpor::learn`: every segment root being replayed learns of an execution's length.
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
