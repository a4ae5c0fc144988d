//! Shadow state: the speculative policy (writer shadow, read log, undo log, group marks)
//! used to run the threads of an interval in parallel and detect any conflict, and the
//! exact tracker that reports every conflicting pair of a sequential canonical run.

use super::compile::Site;
use super::exec::{ArrView, Policy, Rmw, Who};
use crate::codec::Repr;
use crate::fault::ThreadId;
use crate::policy::Stored;
use crate::race::{Access, AccessKind, Epochs, Race, RaceKey};
use lang::ast::Span;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering::Relaxed};

/// Group marks: bit 31 of the reader word means "read by two or more groups".
pub(crate) const MULTI: u32 = 1 << 31;

/// Checks and updates the launch-wide group marks of a `global` array element for an access
/// by group `g1 - 1`. Returns false on a cross-group conflict. All threads of one group store
/// the same values, so the marks do not depend on the interleaving of a group's threads.
#[inline]
pub(crate) fn cross_access(
    (gw, gr): (&[AtomicU32], &[AtomicU32]),
    off: usize,
    g1: u32,
    write: bool,
) -> bool {
    let w = gw[off].load(Relaxed);
    if w != 0 && w != g1 {
        return false;
    }
    let r = gr[off].load(Relaxed);
    if write {
        if r != 0 && (r & MULTI != 0 || r != g1) {
            return false;
        }
        if w == 0 {
            gw[off].store(g1, Relaxed);
        }
    } else if r & !MULTI != g1 {
        gr[off].store(if r == 0 { g1 } else { g1 | MULTI }, Relaxed);
    }
    true
}

/// A logged read (kept per array), validated after the interval against the writer shadow.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ReadRec {
    /// Offset in the array's flat storage (all instances).
    pub abs: u32,
    pub tid: u32,
}

/// The interval-start value of an element, saved by its first (and only legitimate) writer.
#[derive(Clone, Copy, Debug)]
pub(crate) struct UndoRec {
    pub arr: u32,
    pub abs: u32,
    pub old: u64,
}

/// Speculative execution of one chunk of threads of an interval.
///
/// Writes: the writer shadow word of an element is `stamp << 32 | tid`. A thread writing an
/// element whose word is stale (older stamp) swaps in its own word, saves the old value in
/// the undo log and writes in place; if the word it swapped out is another thread's of this
/// interval, that is a conflict (two writers) and it does not write. So an element is only
/// ever written by the first thread that marked it, and the undo log restores the
/// interval-start memory exactly even after a conflict.
///
/// Reads: logged (except `const` arrays, which no one writes) and validated after all
/// chunks finished: a read of an element whose writer word is another thread's of this
/// interval is a conflict, whenever the write happened.
pub(crate) struct Spec<'a> {
    pub who: Who,
    pub me: u64,
    pub stamp: u32,
    /// Per array.
    pub reads: &'a mut [Vec<ReadRec>],
    pub undo: &'a mut Vec<UndoRec>,
    pub conflict: &'a AtomicBool,
    pub xconflict: &'a AtomicBool,
}

impl Policy for Spec<'_> {
    #[inline(always)]
    fn load(&mut self, view: &ArrView, site: &Site, off: usize, _: u64) -> Result<u64, ()> {
        let v = view.mem[off].load(Relaxed);
        if !view.is_const {
            self.reads[site.arr as usize].push(ReadRec {
                abs: (view.abs_base + off) as u32,
                tid: self.who.tid,
            });
            if let Some(marks) = view.cross {
                if !cross_access(marks, off, self.who.group + 1, false) {
                    self.xconflict.store(true, Relaxed);
                    return Err(());
                }
            }
        }
        Ok(v)
    }

    #[inline(always)]
    fn store(&mut self, view: &ArrView, site: &Site, off: usize, v: u64, _: u64) -> Result<(), ()> {
        let w = &view.wsh[off];
        if w.load(Relaxed) != self.me {
            let prev = w.swap(self.me, Relaxed);
            if (prev >> 32) as u32 == self.stamp {
                self.conflict.store(true, Relaxed);
                return Err(());
            }
            self.undo.push(UndoRec {
                arr: site.arr,
                abs: (view.abs_base + off) as u32,
                old: view.mem[off].load(Relaxed),
            });
        }
        if let Some(marks) = view.cross {
            if !cross_access(marks, off, self.who.group + 1, true) {
                self.xconflict.store(true, Relaxed);
                return Err(());
            }
        }
        view.mem[off].store(v, Relaxed);
        Ok(())
    }
}

/// Sequential, in-place execution with optional exact race tracking (and group marks for
/// detecting cross-group conflicts when the tracker keeps no launch-wide history).
pub(crate) struct Exact<'a> {
    pub who: Who,
    /// The group's barrier epochs per memory space.
    pub epochs: Epochs,
    /// Global index of the thread's first step in this interval.
    pub step_base: u64,
    pub max_steps: u64,
    pub tracker: Option<&'a mut Tracker>,
    pub use_marks: bool,
    pub xconflict: bool,
}

impl Exact<'_> {
    #[inline]
    fn access(
        &mut self,
        view: &ArrView,
        site: &Site,
        off: usize,
        steps: u64,
        kind: AccessKind,
        written: Option<u64>,
    ) -> bool {
        if view.is_const {
            return true;
        }
        if self.use_marks {
            if let Some(marks) = view.cross {
                if !cross_access(marks, off, self.who.group + 1, kind != AccessKind::Read) {
                    self.xconflict = true;
                    return false;
                }
            }
        }
        if let Some(t) = self.tracker.as_deref_mut() {
            let step = (self.step_base + steps).wrapping_add(site.pre as i64 as u64);
            // Accesses of statements past the step bound never happen.
            if step < self.max_steps {
                let epoch = if view.local {
                    self.epochs.local
                } else {
                    self.epochs.global
                };
                // Under the same-value policy: the word written and whether it was there.
                let stored = written
                    .filter(|_| t.stored_reprs.is_some())
                    .map(|v| (v, view.mem[off].load(Relaxed) == v));
                t.access(
                    site.arr,
                    view.abs_base + off,
                    site.stmt,
                    kind,
                    self.who,
                    step,
                    epoch,
                    stored,
                );
            }
        }
        true
    }
}

impl Policy for Exact<'_> {
    #[inline(always)]
    fn load(&mut self, view: &ArrView, site: &Site, off: usize, steps: u64) -> Result<u64, ()> {
        let v = view.mem[off].load(Relaxed);
        if self.access(view, site, off, steps, AccessKind::Read, None) {
            Ok(v)
        } else {
            Err(())
        }
    }

    #[inline(always)]
    fn store(
        &mut self,
        view: &ArrView,
        site: &Site,
        off: usize,
        v: u64,
        steps: u64,
    ) -> Result<(), ()> {
        if !self.access(view, site, off, steps, AccessKind::Write, Some(v)) {
            return Err(());
        }
        view.mem[off].store(v, Relaxed);
        Ok(())
    }

    #[inline(always)]
    fn rmw(
        &mut self,
        view: &ArrView,
        site: &Site,
        off: usize,
        steps: u64,
        op: Rmw,
    ) -> Result<u64, ()> {
        let old = view.mem[off].load(Relaxed);
        if !self.access(view, site, off, steps, op.kind(old), None) {
            return Err(());
        }
        view.mem[off].store(op.apply(old), Relaxed);
        Ok(old)
    }
}

/// One class of accesses to one element: by one group at one statement with one kind
/// (and, under the same-value race policy, one stored word).
#[derive(Clone, Debug)]
struct Entry {
    next: u32,
    stmt: u32,
    kind: AccessKind,
    group: u32,
    /// The word a plain write stored and whether the element held it already (same-value
    /// race policy only, see [`crate::policy`]).
    stored: Option<(u64, bool)>,
    /// The epoch of the instances counted in `cur_*`.
    cur_epoch: u64,
    cur_first: (u32, u64),
    /// The warp (the thread, without warps) of the last instances, and the lanes of it
    /// among the instances of `cur_epoch`: a warp's accesses never race with each other in
    /// the tracker (same-instruction writes are judged by [`Tracker::same_instruction`]).
    cur_warp: u32,
    cur_mask: u64,
    /// Distinct threads of `cur_epoch`.
    cur_n: u64,
    /// Distinct (thread, epoch) instances over the launch.
    total_n: u64,
    /// The earliest instance: thread, step, epoch.
    first: (u32, u64, u64),
}

/// Per array: the entry lists of its elements.
#[derive(Default)]
struct Lists {
    head: Vec<u32>,
    tail: Vec<u32>,
}

/// Exact race tracking for a sequential run in canonical order.
///
/// For every element it keeps one [`Entry`] per (group, statement, kind) that accessed it,
/// with counts of distinct accessing threads. An access instance is (thread, statement,
/// kind, epoch, element); repeated instances are counted once. On each new instance it
/// counts the conflicting pairs it completes with earlier instances (Definition 5.2: other
/// thread, one of them a write, same epoch or other group), per [`RaceKey`], and remembers
/// the first race of each key found in canonical order. Within one interval the threads of
/// a group run one after another, so "the last thread of an entry is this thread" detects
/// repeated instances exactly.
///
/// Element lists of arrays without history are cleared after every interval; with history
/// (`global` arrays shared by several groups, in a full exact run; arrays of a memory space
/// that some barrier does not order) they live for the whole launch. Memory: 8 bytes per element of a tracked array plus 80 bytes per entry.
pub(crate) struct Tracker {
    lists: Vec<Lists>,
    history: Vec<bool>,
    /// Entries of elements without history (cleared per interval) and with history.
    local: Vec<Entry>,
    hist: Vec<Entry>,
    touched: Vec<(u32, u32)>,
    pub races: Vec<(Race, u64)>,
    keys: HashMap<RaceKey, usize>,
    /// What the accesses of step `journal_step` added to `races`: (race, pairs, created),
    /// undone if that step faults (a faulting step performs no accesses).
    journal: Vec<(usize, u64, bool)>,
    journal_step: u64,
    spans: Vec<Span>,
    /// Per array: length of one instance, second dimension (or 0), space is local.
    shape: Vec<(usize, usize, bool)>,
    /// Per array, the word encoding, when the race policy needs the stored values
    /// (`same-value`); `None` under `strict`.
    pub stored_reprs: Option<Vec<Repr>>,
}

const HIST_BIT: u32 = 1 << 31;

/// The word a plain write stored and whether the element held it already (same-value race
/// policy only).
pub(crate) type StoredWord = Option<(u64, bool)>;

impl Tracker {
    pub fn new(
        total_len: &[usize],
        shape: Vec<(usize, usize, bool)>,
        history: Vec<bool>,
        spans: Vec<Span>,
        stored_reprs: Option<Vec<Repr>>,
    ) -> Tracker {
        Tracker {
            lists: total_len
                .iter()
                .map(|&n| Lists {
                    head: vec![0; n],
                    tail: vec![0; n],
                })
                .collect(),
            history,
            local: Vec::new(),
            hist: Vec::new(),
            touched: Vec::new(),
            races: Vec::new(),
            keys: HashMap::new(),
            journal: Vec::new(),
            journal_step: u64::MAX,
            spans,
            shape,
            stored_reprs,
        }
    }

    fn entry(&self, id: u32) -> &Entry {
        if id & HIST_BIT != 0 {
            &self.hist[(id & !HIST_BIT) as usize - 1]
        } else {
            &self.local[id as usize - 1]
        }
    }

    fn entry_mut(&mut self, id: u32) -> &mut Entry {
        if id & HIST_BIT != 0 {
            &mut self.hist[(id & !HIST_BIT) as usize - 1]
        } else {
            &mut self.local[id as usize - 1]
        }
    }

    /// A stored word of array `a` as the race records it.
    fn stored(&self, a: usize, stored: Option<(u64, bool)>) -> Option<Stored> {
        let (word, silent) = stored?;
        let repr = self.stored_reprs.as_ref()?[a];
        Some(Stored {
            value: repr.decode(word),
            silent,
        })
    }

    /// The interval ended: forget the accesses of elements without history.
    pub fn end_interval(&mut self) {
        for &(a, e) in &self.touched {
            let l = &mut self.lists[a as usize];
            l.head[e as usize] = 0;
            l.tail[e as usize] = 0;
        }
        self.touched.clear();
        self.local.clear();
    }

    /// The step at global position `step` faulted: forget the races its accesses completed.
    pub fn fault_at(&mut self, step: u64) {
        if self.journal_step != step {
            return;
        }
        for (k, pairs, created) in self.journal.drain(..).rev() {
            if created {
                let (race, _) = self.races.pop().expect("journalled race");
                debug_assert_eq!(k, self.races.len());
                self.keys.remove(&race.key());
            } else {
                self.races[k].1 -= pairs;
            }
        }
    }

    /// The race between two accesses to flat element `abs` of array `a`.
    fn race(&self, a: usize, abs: usize, first: Access, second: Access) -> Race {
        let (len, d1, is_local) = self.shape[a];
        let elem = abs % len;
        Race {
            array: a,
            instance: if is_local { abs / len } else { 0 },
            index: match elem.checked_div(d1) {
                Some(row) => vec![row, elem % d1],
                None => vec![elem],
            },
            first,
            second,
        }
    }

    /// Counts `pairs` conflicting pairs of `race`'s key, keeping `race` if it is the
    /// first of its key; journalled for [`Tracker::fault_at`] (the caller has set the
    /// journal's step).
    fn add(&mut self, race: Race, pairs: u64) {
        let key = race.key();
        match self.keys.get(&key) {
            Some(&k) => {
                self.races[k].1 += pairs;
                self.journal.push((k, pairs, false));
            }
            None => {
                self.keys.insert(key, self.races.len());
                self.journal.push((self.races.len(), pairs, true));
                self.races.push((race, pairs));
            }
        }
    }

    /// Lock-step warps ([`super::warp`]): lane `second` writes flat element `abs` of array
    /// `arr` in the instruction at position `step` in which `writers` lower lanes of its
    /// warp, the first of them `first`, wrote it already: a write-write race per pair
    /// (the one kind of race within one instruction). `stored`: the words written by
    /// `first` and `second` (same-value race policy only).
    #[allow(clippy::too_many_arguments)]
    pub fn same_instruction(
        &mut self,
        arr: u32,
        abs: usize,
        stmt: u32,
        (first, second): (Who, Who),
        writers: u64,
        step: u64,
        epoch: u64,
        stored: (StoredWord, StoredWord),
    ) {
        if self.journal_step != step {
            self.journal.clear();
            self.journal_step = step;
        }
        let a = arr as usize;
        let access = |who: Who, stored| Access {
            thread: ThreadId {
                group: who.group as usize,
                local: who.tid as usize,
            },
            kind: AccessKind::Write,
            span: self.spans[stmt as usize].clone(),
            step,
            epoch,
            stored: self.stored(a, stored),
        };
        let race = self.race(a, abs, access(first, stored.0), access(second, stored.1));
        self.add(race, writers);
    }

    #[allow(clippy::too_many_arguments)]
    pub fn access(
        &mut self,
        arr: u32,
        abs: usize,
        stmt: u32,
        kind: AccessKind,
        who: Who,
        step: u64,
        epoch: u64,
        stored: Option<(u64, bool)>,
    ) {
        let a = arr as usize;
        let head = self.lists[a].head[abs];
        // A repeated instance adds nothing.
        let mut own = 0;
        let mut id = head;
        while id != 0 {
            let e = self.entry(id);
            if e.group == who.group && e.stmt == stmt && e.kind == kind && e.stored == stored {
                if e.cur_epoch == epoch
                    && e.cur_warp == who.warp
                    && e.cur_mask >> who.lane & 1 != 0
                    && e.cur_n > 0
                {
                    return;
                }
                own = id;
            }
            id = e.next;
        }
        if self.journal_step != step {
            self.journal.clear();
            self.journal_step = step;
        }
        // Conflicting pairs completed by this instance, recorded in the canonical order of
        // their earlier access (the order the reference semantics' tracker lists them).
        let mut found: Vec<(u64, AccessKind, Race, u64)> = Vec::new();
        let mut id = head;
        while id != 0 {
            let e = self.entry(id).clone();
            id = e.next;
            if !kind.conflicts_with(e.kind) {
                continue;
            }
            let (pairs, rep) = if e.group != who.group {
                (e.total_n, e.first)
            } else if e.cur_epoch == epoch {
                let own = if e.cur_warp == who.warp {
                    e.cur_mask.count_ones() as u64
                } else {
                    0
                };
                (e.cur_n - own, (e.cur_first.0, e.cur_first.1, epoch))
            } else {
                continue;
            };
            if pairs == 0 {
                continue;
            }
            let first = Access {
                thread: ThreadId {
                    group: e.group as usize,
                    local: rep.0 as usize,
                },
                kind: e.kind,
                span: self.spans[e.stmt as usize].clone(),
                step: rep.1,
                epoch: rep.2,
                stored: self.stored(a, e.stored),
            };
            let second = Access {
                thread: ThreadId {
                    group: who.group as usize,
                    local: who.tid as usize,
                },
                kind,
                span: self.spans[stmt as usize].clone(),
                step,
                epoch,
                stored: self.stored(a, stored),
            };
            found.push((rep.1, e.kind, self.race(a, abs, first, second), pairs));
        }
        found.sort_by_key(|f| (f.0, f.1));
        for (_, _, race, pairs) in found {
            self.add(race, pairs);
        }
        // Record the instance.
        if own != 0 {
            let e = self.entry_mut(own);
            if e.cur_epoch != epoch || e.cur_n == 0 {
                e.cur_epoch = epoch;
                e.cur_n = 0;
                e.cur_first = (who.tid, step);
                e.cur_mask = 0;
            }
            if e.cur_warp != who.warp {
                e.cur_warp = who.warp;
                e.cur_mask = 0;
            }
            e.cur_n += 1;
            e.cur_mask |= 1 << who.lane;
            e.total_n += 1;
            return;
        }
        let entry = Entry {
            next: 0,
            stmt,
            kind,
            group: who.group,
            stored,
            cur_epoch: epoch,
            cur_first: (who.tid, step),
            cur_warp: who.warp,
            cur_mask: 1 << who.lane,
            cur_n: 1,
            total_n: 1,
            first: (who.tid, step, epoch),
        };
        let id = if self.history[a] {
            self.hist.push(entry);
            self.hist.len() as u32 | HIST_BIT
        } else {
            self.local.push(entry);
            if head == 0 {
                self.touched.push((arr, abs as u32));
            }
            self.local.len() as u32
        };
        let l = &mut self.lists[a];
        let tail = l.tail[abs];
        l.tail[abs] = id;
        if head == 0 {
            l.head[abs] = id;
        } else {
            self.entry_mut(tail).next = id;
        }
    }
}

/// Validation of a chunk's reads after the interval: a read of an element marked by another
/// thread's write of this interval is a conflict.
pub(crate) fn validate(reads: &[Vec<ReadRec>], wsh: &[Vec<AtomicU64>], stamp: u32) -> bool {
    for (a, reads) in reads.iter().enumerate() {
        let wsh = &wsh[a];
        for r in reads {
            let w = wsh[r.abs as usize].load(Relaxed);
            if (w >> 32) as u32 == stamp && w as u32 != r.tid {
                return false;
            }
        }
    }
    true
}
