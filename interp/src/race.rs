//! Data races, exactly as Definition 5.2: two steps of distinct threads that access a
//! common array element, at least one of them writing, with no K-BARRIER between them.
//! A barrier orders only the threads of its own work-group, so conflicting accesses from
//! different work-groups always race.
//!
//! Two extensions for OpenCL: a barrier orders only the accesses to the memory spaces of
//! its fence (`barrier(local)` leaves `global` accesses unordered), so the epoch of an
//! access counts the barriers whose fence includes its array's space ([`Epochs`]); and an
//! atomic access (S-ATOMIC) conflicts with plain reads and writes of the element but not
//! with another atomic access; an atomic that wrote nothing (a failed `atomic_cmpxchg`,
//! [`AccessKind::AtomicRead`]) conflicts with plain writes only.
//!
//! Where a barrier's fence is computed at run time (OpenCL's `barrier(x)`, each work-item
//! with its own flags), epochs are kept per thread: an access's epoch is its own thread's,
//! and it is ordered with the later accesses of its group exactly once its thread's epoch
//! of that space has moved on ([`conflict_live`]): GPUVerify's reading, where the flags of
//! the work-item that made the *earlier* access decide.

use crate::fault::ThreadId;
use crate::policy::{benign, Stored};
use lang::ast::{Space, Span};
use lang::core::{ArrayId, Fence};
use serde::Serialize;
use std::collections::{HashMap, HashSet};

#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum AccessKind {
    Read,
    Write,
    /// The read-modify-write of S-ATOMIC.
    Atomic,
    /// An S-ATOMIC that wrote nothing: a failed `atomic_cmpxchg` (its element did not hold
    /// the compared value). OpenCL 1.2 §3.3.1 defines no data race formally; its successor
    /// follows C11, where a failed compare-exchange is an atomic load (7.17.7.4) and a race
    /// needs a modification (5.1.2.4), and Oclgrind records it as an atomic load without a
    /// store: it races with a plain write as a read does, and with nothing else.
    #[serde(rename = "atomic-read")]
    AtomicRead,
}

impl AccessKind {
    /// Whether accesses of these kinds to one element by distinct threads conflict: one of
    /// them changes the element, and they are not both atomic.
    pub fn conflicts_with(self, other: AccessKind) -> bool {
        (self.writes() || other.writes()) && !(self.atomic() && other.atomic())
    }

    /// The access changes the element (a plain or atomic write).
    pub fn writes(self) -> bool {
        matches!(self, AccessKind::Write | AccessKind::Atomic)
    }

    /// The access is S-ATOMIC's, whether it wrote or not.
    pub fn atomic(self) -> bool {
        matches!(self, AccessKind::Atomic | AccessKind::AtomicRead)
    }

    /// The kind's name in reports and JSON (`read`, `write`, `atomic`, `atomic-read`).
    pub fn name(self) -> &'static str {
        match self {
            AccessKind::Read => "read",
            AccessKind::Write => "write",
            AccessKind::Atomic => "atomic",
            AccessKind::AtomicRead => "atomic-read",
        }
    }
}

/// A work-group's barrier epochs per memory space: how many barriers it has passed whose
/// fence orders `local` (resp. `global`) accesses. With only `barrier()` (both spaces) the
/// two are equal, and equal to the number of barriers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub struct Epochs {
    pub local: u64,
    pub global: u64,
}

impl Epochs {
    /// The epoch of an access to an array of `space`.
    pub fn of(self, space: Space) -> u64 {
        match space {
            Space::Local => self.local,
            Space::Global => self.global,
        }
    }

    /// The epochs after a barrier with `fence`.
    pub fn after(self, fence: Fence) -> Epochs {
        Epochs {
            local: self.local + fence.local as u64,
            global: self.global + fence.global as u64,
        }
    }
}

/// One access of one step: who, what kind, in which statement, at which step.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Access {
    pub thread: ThreadId,
    pub kind: AccessKind,
    /// The statement that made the access.
    pub span: Span,
    /// The position of the step in the execution (0-based), where the engine knows it.
    pub step: u64,
    /// The number of barriers the thread's work-group had passed that order the accessed
    /// array's memory space (its barrier epoch for that space, see [`Epochs`]); counted
    /// per thread where fences are computed at run time.
    pub epoch: u64,
    /// What a plain write stored, recorded under the `same-value` race policy only
    /// ([`crate::policy`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stored: Option<Stored>,
}

/// A data race on one element.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Race {
    pub array: ArrayId,
    /// The work-group whose copy of a `local` array is accessed (0 for `global`).
    pub instance: usize,
    /// One coordinate per dimension.
    pub index: Vec<usize>,
    /// The earlier access.
    pub first: Access,
    /// The later access.
    pub second: Access,
}

/// Two races are the same for reporting when they join the same pair of statements with
/// the same access kinds (Definition 5.2 does not care which threads or element) and are
/// both benign or both harmful under the race policy ([`crate::policy`]; the last field,
/// always false under `strict`).
pub type RaceKey = (Span, AccessKind, Span, AccessKind, bool);

impl Race {
    pub fn key(&self) -> RaceKey {
        race_key(&self.first, &self.second)
    }

    /// Whether the race policy tolerates this pair ([`crate::policy::benign`]): it is
    /// reported as a warning, not an error.
    pub fn benign(&self) -> bool {
        benign(&self.first, &self.second)
    }
}

/// The key of a race between two accesses.
fn race_key(first: &Access, second: &Access) -> RaceKey {
    key_of(
        (first.span.clone(), first.kind),
        (second.span.clone(), second.kind),
        benign(first, second),
    )
}

/// The key of a race between two statements with these access kinds, in either order,
/// benign or not under the race policy (`ksim fix` maps a patched kernel's races back to
/// the original's statements).
pub fn key_of(a: (Span, AccessKind), b: (Span, AccessKind), benign: bool) -> RaceKey {
    let (a, b) = if (a.0.start, a.1) <= (b.0.start, b.1) {
        (a, b)
    } else {
        (b, a)
    };
    (a.0, a.1, b.0, b.1, benign)
}

/// Whether every race of a list is benign: the races leave a check clean.
pub fn all_benign(races: &[Race]) -> bool {
    races.iter().all(Race::benign)
}

/// Whether two accesses to the same element conflict under Definition 5.2 (with atomic
/// accesses, which conflict only with plain ones).
pub fn conflict(a: &Access, b: &Access) -> bool {
    conflict_live(a, b, a.epoch == b.epoch)
}

/// [`conflict`] for an earlier access `a` and a later `b`, where `live` says whether `a`
/// is still unordered with accesses made now in its work-group: no barrier since `a`
/// ordered its space for `a`'s thread (its thread's epoch of the space is still `a.epoch`).
/// With fences fixed per barrier every thread of a group has the group's epochs, and
/// `live` is `a.epoch == b.epoch`.
pub fn conflict_live(a: &Access, b: &Access, live: bool) -> bool {
    a.thread != b.thread
        && a.kind.conflicts_with(b.kind)
        && (a.thread.group != b.thread.group || live)
}

/// Every race between an access of an earlier step and one of a later step to a common
/// element, each step's accesses as [`crate::reference::StepInfo::accesses`] lists them
/// (the step-pairing rule of the exhaustive explorer and of the state graph; the race
/// tracker pairs one access with its summary of earlier ones, by the same [`conflict`]).
pub fn step_races(
    first: &[(&crate::reference::Elem, Access)],
    second: &[(&crate::reference::Elem, Access)],
) -> Vec<Race> {
    step_races_live(first, second, |_, a, b| a.epoch == b.epoch)
}

/// [`step_races`] where `live(elem, a, b)` says whether the earlier access `a` is still
/// unordered with `b` in its work-group ([`conflict_live`]): the explorer asks the state
/// for `a`'s thread's epochs when fences are computed at run time.
pub fn step_races_live(
    first: &[(&crate::reference::Elem, Access)],
    second: &[(&crate::reference::Elem, Access)],
    live: impl Fn(&crate::reference::Elem, &Access, &Access) -> bool,
) -> Vec<Race> {
    let mut races = Vec::new();
    for (e, a) in first {
        for (f, b) in second {
            if (e.array, e.instance, e.offset) != (f.array, f.instance, f.offset) {
                continue;
            }
            let unordered = live(e, a, b);
            if let Some(race) = Race::between_live(f.array, f.instance, &f.index, a, b, unordered) {
                races.push(race);
            }
        }
    }
    races
}

impl Race {
    /// The race between two accesses to element `index` of instance `instance` of
    /// `array`, `first` the earlier, if they conflict ([`conflict`]): the one place where
    /// a pair of accesses becomes a race, for the race tracker and the exhaustive explorer.
    pub fn between(
        array: ArrayId,
        instance: usize,
        index: &[usize],
        first: &Access,
        second: &Access,
    ) -> Option<Race> {
        let live = first.epoch == second.epoch;
        Race::between_live(array, instance, index, first, second, live)
    }

    /// [`Race::between`] with `live` as [`conflict_live`] takes it.
    pub fn between_live(
        array: ArrayId,
        instance: usize,
        index: &[usize],
        first: &Access,
        second: &Access,
        live: bool,
    ) -> Option<Race> {
        conflict_live(first, second, live).then(|| Race {
            array,
            instance,
            index: index.to_vec(),
            first: first.clone(),
            second: second.clone(),
        })
    }
}

/// Watches the accesses of one execution, step by step, and reports each race as soon as
/// its second access happens: for every access, the races with a key ([`Race::key`]) not
/// reported before in this execution, each with the earliest earlier access that makes it
/// a race (so the first race of every key, and the order in which keys are found, are those
/// of a scan over every remembered access).
///
/// Per element it keeps a summary that decides conflicts without scanning the history. An
/// *entry* is the first access of a (thread, kind, statement, epoch). For a statement and
/// kind (a *class*) only two entries can ever be the earliest conflicting one: the first,
/// and the first of another thread (any accessor differs from one of those two threads).
/// So per element and per work-group the current barrier epoch keeps, per class, those two
/// entries (older epochs of the group never race with it again); with several groups
/// sharing a `global` array, every access of another group races whatever its epoch, so
/// per class the first entries of the first two distinct groups are kept too. Classes are
/// indexed by the thread (or group) that alone accessed them, so an access only looks at
/// classes that conflict with it: a step costs O(1) amortised in threads and epochs, plus
/// the classes (statements) it races with.
#[derive(Clone, Debug, Default)]
pub struct RaceTracker {
    seen: HashMap<(ArrayId, usize, usize), Element>,
    /// Several groups share `global` arrays: keep the cross-group summaries.
    cross_group: bool,
    /// Keys already reported in this execution.
    reported: HashSet<RaceKey>,
    /// Accesses seen so far: orders entries as a scan of the history would.
    clock: u64,
    /// Where some barrier's fence is computed at run time: per-thread epochs and every
    /// distinct access (the summaries above assume one epoch per work-group).
    items: Option<Items>,
}

/// The race tracker's state for per-thread epochs ([`RaceTracker::for_launch`]): a scan
/// of every distinct access of an element. Slower than the summaries, and used only for
/// kernels whose barrier flags are computed at run time.
#[derive(Clone, Debug, Default)]
struct Items {
    local_size: usize,
    /// Per array, its memory space.
    spaces: Vec<Space>,
    /// Per thread (global index), its epochs as [`crate::reference::State::thread_epochs`].
    epochs: Vec<Epochs>,
    /// Per element, its accesses with their owners in execution order, one per (owner,
    /// thread, kind, statement, stored value, epoch): a repeat races with nothing its first
    /// does not.
    seen: HashMap<(ArrayId, usize, usize), Vec<(ThreadId, Access)>>,
}

/// The summary of one element.
#[derive(Clone, Debug, Default)]
struct Element {
    /// Per work-group, its current epoch's classes (keyed by thread).
    same: HashMap<usize, (u64, Classes<ThreadId>)>,
    /// Every epoch, keyed by work-group (only with several groups).
    cross: Classes<usize>,
}

/// An entry: the access and its position in the execution's access order.
type Entry = (u64, Access);

/// A class: the first entry and the first entry of another owner (thread or group).
#[derive(Clone, Debug)]
struct Class<K> {
    first: (K, Entry),
    second: Option<(K, Entry)>,
}

impl<K: Copy + Eq> Class<K> {
    /// The earliest entry whose owner is not `owner`.
    fn other_than(&self, owner: K) -> Option<&Entry> {
        if self.first.0 != owner {
            Some(&self.first.1)
        } else {
            self.second.as_ref().map(|s| &s.1)
        }
    }
}

/// What identifies a class within a kind: the statement, and under the `same-value`
/// policy what the write stored (whether a pair is benign depends on it, so each stored
/// value keeps its own earliest entries).
type ClassId = (Span, Option<Stored>);

/// The classes of one kind, indexed by owner.
#[derive(Clone, Debug)]
struct Bucket<K> {
    classes: HashMap<ClassId, Class<K>>,
    /// Classes with two owners: they conflict with any accessor.
    shared: Vec<ClassId>,
    /// Classes with one owner, by owner.
    solo: HashMap<K, HashSet<ClassId>>,
}

impl<K> Default for Bucket<K> {
    fn default() -> Self {
        Bucket {
            classes: HashMap::new(),
            shared: Vec::new(),
            solo: HashMap::new(),
        }
    }
}

impl<K: Copy + Eq + std::hash::Hash> Bucket<K> {
    /// Calls `f` with every class that has an entry of an owner other than `owner`, and
    /// that entry.
    fn conflicting(&self, owner: K, mut f: impl FnMut(&ClassId, &Entry)) {
        let ids = self.shared.iter().chain(
            self.solo
                .iter()
                .filter(|(o, _)| **o != owner)
                .flat_map(|(_, v)| v.iter()),
        );
        for id in ids {
            let class = &self.classes[id];
            if let Some(e) = class.other_than(owner) {
                f(id, e);
            }
        }
    }

    fn record(&mut self, owner: K, entry: &Entry) {
        let span = &(entry.1.span.clone(), entry.1.stored.clone());
        match self.classes.get_mut(span) {
            None => {
                self.classes.insert(
                    span.clone(),
                    Class {
                        first: (owner, entry.clone()),
                        second: None,
                    },
                );
                self.solo.entry(owner).or_default().insert(span.clone());
            }
            Some(class) if class.second.is_none() && class.first.0 != owner => {
                let solo = self.solo.get_mut(&class.first.0).expect("solo class");
                solo.remove(span);
                if solo.is_empty() {
                    self.solo.remove(&class.first.0);
                }
                class.second = Some((owner, entry.clone()));
                self.shared.push(span.clone());
            }
            Some(_) => {}
        }
    }
}

/// A bucket per access kind: reads, writes, atomic updates and atomic reads.
#[derive(Clone, Debug)]
struct Classes<K> {
    reads: Bucket<K>,
    writes: Bucket<K>,
    atomics: Bucket<K>,
    atomic_reads: Bucket<K>,
}

impl<K> Default for Classes<K> {
    fn default() -> Self {
        Classes {
            reads: Bucket::default(),
            writes: Bucket::default(),
            atomics: Bucket::default(),
            atomic_reads: Bucket::default(),
        }
    }
}

impl<K: Copy + Eq + std::hash::Hash> Classes<K> {
    /// Entries of another owner that conflict in kind with an access of kind `kind`.
    fn conflicting(
        &self,
        owner: K,
        kind: AccessKind,
        mut f: impl FnMut(AccessKind, &ClassId, &Entry),
    ) {
        for (bucket, k) in [
            (&self.writes, AccessKind::Write),
            (&self.reads, AccessKind::Read),
            (&self.atomics, AccessKind::Atomic),
            (&self.atomic_reads, AccessKind::AtomicRead),
        ] {
            if kind.conflicts_with(k) {
                bucket.conflicting(owner, |s, e| f(k, s, e));
            }
        }
    }

    fn record(&mut self, owner: K, entry: &Entry) {
        match entry.1.kind {
            AccessKind::Read => self.reads.record(owner, entry),
            AccessKind::Write => self.writes.record(owner, entry),
            AccessKind::Atomic => self.atomics.record(owner, entry),
            AccessKind::AtomicRead => self.atomic_reads.record(owner, entry),
        }
    }
}

impl RaceTracker {
    pub fn new(groups: usize) -> Self {
        RaceTracker {
            cross_group: groups > 1,
            ..RaceTracker::default()
        }
    }

    /// The tracker for `launch`: [`RaceTracker::new`], with per-thread epochs where some
    /// barrier's fence is computed at run time. Feed it every K-BARRIER with
    /// [`RaceTracker::fired`].
    pub fn for_launch(launch: &crate::launch::Launch) -> Self {
        let k = &launch.kernel;
        RaceTracker {
            items: k.has_item_fences().then(|| Items {
                local_size: launch.local_size,
                spaces: k.arrays.iter().map(|a| a.space).collect(),
                epochs: vec![Epochs::default(); launch.threads()],
                seen: HashMap::new(),
            }),
            ..RaceTracker::new(launch.groups)
        }
    }

    /// K-BARRIER fired ([`crate::reference::BarrierInfo`]): with per-thread epochs each
    /// thread of the group moves on by its own fence, else [`RaceTracker::barrier`].
    pub fn fired(&mut self, b: &crate::reference::BarrierInfo) {
        let Some(items) = &mut self.items else {
            return self.barrier(b.fence);
        };
        let start = b.group * items.local_size;
        for l in 0..items.local_size {
            let f = b.fences.get(l).copied().unwrap_or(b.fence);
            items.epochs[start + l] = items.epochs[start + l].after(f);
        }
    }

    /// [`RaceTracker::access_by`] with per-thread epochs: scans the element's accesses.
    fn access_items(
        &mut self,
        owner: ThreadId,
        (array, instance, offset): (ArrayId, usize, usize),
        index: &[usize],
        access: Access,
    ) -> Vec<Race> {
        let items = self.items.as_mut().expect("per-thread epochs");
        let space = items.spaces[array];
        let mut races = Vec::new();
        let seen = items.seen.entry((array, instance, offset)).or_default();
        let mut repeat = false;
        for (o, first) in seen.iter() {
            if *o == owner {
                repeat |= first.thread == access.thread
                    && first.kind == access.kind
                    && first.span == access.span
                    && first.stored == access.stored
                    && first.epoch == access.epoch;
                continue;
            }
            let live = items.epochs[first.thread.group * items.local_size + first.thread.local]
                .of(space)
                == first.epoch;
            if let Some(race) = Race::between_live(array, instance, index, first, &access, live) {
                if self.reported.insert(race.key()) {
                    races.push(race);
                }
            }
        }
        if !repeat {
            seen.push((owner, access));
        }
        races
    }

    /// Records an access to element `offset` (row-major) of instance `instance` of `array`
    /// and returns the races it completes whose key was not reported before, in the order
    /// of their earlier accesses.
    pub fn access(
        &mut self,
        array: ArrayId,
        instance: usize,
        offset: usize,
        index: &[usize],
        access: Access,
    ) -> Vec<Race> {
        let owner = access.thread;
        self.access_by(owner, (array, instance, offset), index, access)
    }

    /// [`RaceTracker::access`] for an access whose program order is `owner`'s: accesses of
    /// one owner never race. Under `--warp-size` the owner is the warp (its lane 0), whose
    /// instructions are ordered ([`crate::warp`], point 4); the race keeps the lanes.
    pub fn access_by(
        &mut self,
        owner: ThreadId,
        (array, instance, offset): (ArrayId, usize, usize),
        index: &[usize],
        access: Access,
    ) -> Vec<Race> {
        if self.items.is_some() {
            return self.access_items(owner, (array, instance, offset), index, access);
        }
        let cross_group = self.cross_group;
        let elem = self.seen.entry((array, instance, offset)).or_default();
        let group = access.thread.group;
        let same = elem
            .same
            .entry(group)
            .or_insert_with(|| (access.epoch, Classes::default()));
        if same.0 != access.epoch {
            // The group passed a barrier: its older accesses never race with it again.
            *same = (access.epoch, Classes::default());
        }
        // Per class with a key not reported yet: its conflicting entries.
        let reported = &self.reported;
        let mut candidates: Vec<(AccessKind, ClassId, Entry)> = Vec::new();
        let mut push = |kind: AccessKind, span: &ClassId, e: &Entry| {
            let key = race_key(&e.1, &access);
            if !reported.contains(&key) {
                candidates.push((kind, span.clone(), e.clone()));
            }
        };
        same.1.conflicting(owner, access.kind, &mut push);
        if cross_group {
            elem.cross.conflicting(group, access.kind, &mut push);
        }
        // The earliest entry per class (kind, statement, stored value), then in entry order.
        candidates.sort_by(|(k1, c1, e1), (k2, c2, e2)| {
            (k1, c1.0.start, c1.0.end, &c1.1, e1.0).cmp(&(k2, c2.0.start, c2.0.end, &c2.1, e2.0))
        });
        candidates.dedup_by(|b, a| a.0 == b.0 && a.1 == b.1);
        candidates.sort_by_key(|c| c.2 .0);
        let entry = (self.clock, access);
        self.clock += 1;
        let same = &mut elem.same.get_mut(&group).expect("just inserted").1;
        same.record(owner, &entry);
        if cross_group {
            elem.cross.record(group, &entry);
        }
        candidates
            .into_iter()
            .filter_map(|(_, _, (_, first))| {
                let race = Race::between(array, instance, index, &first, &entry.1)?;
                // Two stored values of one statement can give the same key: the earliest.
                self.reported.insert(race.key()).then_some(race)
            })
            .collect()
    }

    /// Reports a race found outside the tracker's summaries (two lanes of one warp writing
    /// an element in the same instruction), unless its key was reported before.
    pub fn report(&mut self, race: Race) -> Option<Race> {
        self.reported.insert(race.key()).then_some(race)
    }

    /// K-BARRIER fired with `fence`. With one work-group and a barrier ordering both
    /// spaces no earlier access can race any more, so everything is forgotten; otherwise
    /// each group's summary of an element is renewed lazily when one of its threads
    /// accesses the element in a new epoch of the element's space.
    pub fn barrier(&mut self, fence: Fence) {
        if !self.cross_group && fence == Fence::BOTH {
            self.seen.clear();
        }
    }
}
