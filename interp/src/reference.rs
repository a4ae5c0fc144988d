//! The reference semantics: POPL 2014 Figures 6 and 7, one rule application per step, on
//! persistent stores; one function per rule (`s_assign`, `s_array`, `s_ite`, `s_loop`,
//! [`State::k_step`], [`State::k_barrier`]), each quoting its rule, plus ksim's S-ATOMIC
//! (`s_atomic`) for OpenCL's atomics and fenced barriers (docs/semantics.md).
//!
//! A kernel state is (σ_A, K): the array store, shared by the threads of a work-group
//! (`local` arrays, one copy per group) or of the whole launch (`global` arrays), and per
//! thread a variable store σ_v and a statement sequence. The sequence is kept as a stack of
//! `(block, index)` frames into the core kernel's blocks: the top frame is the next
//! statement, and a frame whose index has run off its block is popped. S-LOOP-T pushes the
//! loop body without advancing past the loop (so `while e do ss; ss'` becomes
//! `ss · while e do ss; ss'`, as in Figure 6), S-ITE-T/F advance past the `if` and push the
//! chosen branch.
//!
//! Everything lives in `imbl` vectors and `Arc`s, so cloning a [`State`] is O(1) and
//! states hash and compare structurally: exploration caches them. Beside (σ_A, K) a state
//! keeps what the schedulers ask at every step — the runnable threads, and per work-group
//! how many threads are runnable or wait at a barrier — updated as threads change status,
//! so that a step costs O(1) amortised in the number of threads. It is a function of K, and
//! is left out of equality and hashing.
//!
//! K-BARRIER is the paper's MPI-style rule, per work-group: it fires when every thread of
//! the group is at a barrier or has terminated and at least one is at a barrier. A barrier
//! touches no data and, once enabled, no thread of its group can move until it fires, so the
//! engines fire it eagerly ([`State::fire_ready_barriers`]); this loses no behaviour.

use crate::annotation::Mention;
use crate::eval::{eval, eval_index, offset, pointee, Env};
use crate::fault::{Fault, FaultKind, ThreadId};
use crate::launch::{Launch, Memory};
use crate::monoid::Monoid;
use crate::perm::{Frac, Move, Perms};
use crate::race::{Access, AccessKind, Epochs};
use crate::undef::Shadow;
use crate::value::Value;
use crate::warp::{ProgramOrder, Warps};
use lang::ast::Span;
use lang::core::{
    Annotation, ArrayId, AtomicOp, BlockId, Builtin, Expr, Fence, ParamId, PermOp, StmtKind, VarId,
};
use serde::Serialize;
use std::fmt;
use std::sync::Arc;

/// The rule that fired, named as in the paper. A thread step is K-STEP applied to one of
/// the sequential rules, which is what is recorded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, schemars::JsonSchema)]
pub enum Rule {
    #[serde(rename = "S-ASSIGN")]
    SAssign,
    #[serde(rename = "S-ARRAY")]
    SArray,
    /// S-ASSIGN of a load into a temporary of `--atomicity access`: the read half of a
    /// statement split into its accesses ([`crate::atomicity`]).
    #[serde(rename = "S-READ")]
    SRead,
    #[serde(rename = "S-ITE-T")]
    SIteT,
    #[serde(rename = "S-ITE-F")]
    SIteF,
    #[serde(rename = "S-LOOP-T")]
    SLoopT,
    #[serde(rename = "S-LOOP-F")]
    SLoopF,
    #[serde(rename = "S-ATOMIC")]
    SAtomic,
    #[serde(rename = "K-BARRIER")]
    KBarrier,
    /// A specification annotation that holds (`__assert(e)`, `__requires(e)`, ...).
    #[serde(rename = "S-ASSERT")]
    SAssert,
}

impl Rule {
    pub fn name(self) -> &'static str {
        match self {
            Rule::SAssign => "S-ASSIGN",
            Rule::SArray => "S-ARRAY",
            Rule::SRead => "S-READ",
            Rule::SIteT => "S-ITE-T",
            Rule::SIteF => "S-ITE-F",
            Rule::SLoopT => "S-LOOP-T",
            Rule::SLoopF => "S-LOOP-F",
            Rule::SAtomic => "S-ATOMIC",
            Rule::KBarrier => "K-BARRIER",
            Rule::SAssert => "S-ASSERT",
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One array element: which array, which copy (the group for `local` arrays), where.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct Elem {
    pub array: ArrayId,
    pub instance: usize,
    /// Row-major offset.
    pub offset: usize,
    /// One coordinate per dimension.
    pub index: Vec<usize>,
}

/// What one K-STEP did: Definition 5.2's accessed elements and the store update.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StepInfo {
    pub thread: ThreadId,
    pub rule: Rule,
    /// The statement executed.
    pub span: Span,
    /// Every element the step read (expressions, indices and conditions included).
    pub reads: Vec<Elem>,
    /// The element written by S-ARRAY, or read and written indivisibly by S-ATOMIC.
    pub write: Option<Elem>,
    /// The step is S-ATOMIC: `write` is an atomic access (it races with plain accesses of
    /// other threads to the element, never with their atomic ones).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub atomic: bool,
    /// The S-ATOMIC wrote nothing (a failed `atomic_cmpxchg`): its access is an atomic
    /// read ([`AccessKind::AtomicRead`]), which races with plain writes only.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub atomic_read: bool,
    /// For S-ASSIGN: the variable and its old and new value.
    pub var_change: Option<(VarId, Value, Value)>,
    /// For S-ARRAY and S-ATOMIC: the old and new value of the element written.
    pub elem_change: Option<(Value, Value)>,
    /// The faults the step went on past ([`crate::fault::FaultKind::continues`], when
    /// the launch continues after faults), in the order they happened.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub faults: Vec<Fault>,
}

impl StepInfo {
    /// What the step's plain write stored, as the launch's race policy records it
    /// ([`crate::policy`]): `None` under `strict`, for S-ATOMIC and without a write.
    pub fn stored(&self, launch: &Launch) -> Option<crate::policy::Stored> {
        let (old, new) = self.elem_change.as_ref().filter(|_| !self.atomic)?;
        launch.race_policy.stored(old, new)
    }

    /// The step's accesses (reads, then the write) as Definition 5.2 sees them, for a step
    /// taken at position `step` of the execution when its group's barrier epochs were
    /// `epochs` (each access gets the epoch of its array's memory space).
    pub fn accesses<'a>(
        &'a self,
        launch: &'a Launch,
        step: u64,
        epochs: Epochs,
    ) -> impl Iterator<Item = (&'a Elem, Access)> + 'a {
        let reads = self.reads.iter().map(|e| (e, AccessKind::Read));
        let kind = match (self.atomic, self.atomic_read) {
            (true, true) => AccessKind::AtomicRead,
            (true, false) => AccessKind::Atomic,
            (false, _) => AccessKind::Write,
        };
        let write = self.write.iter().map(move |e| (e, kind));
        reads.chain(write).map(move |(e, kind)| {
            let access = Access {
                thread: self.thread,
                kind,
                span: self.span.clone(),
                step,
                epoch: epochs.of(launch.kernel.arrays[e.array].space),
                stored: (kind == AccessKind::Write)
                    .then(|| self.stored(launch))
                    .flatten(),
            };
            (e, access)
        })
    }
}

/// A K-BARRIER application.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct BarrierInfo {
    pub group: usize,
    /// The group's barrier epoch after the barrier (barriers of any fence).
    pub epoch: u64,
    /// The memory spaces the barrier orders: the union of the fences of the `barrier`
    /// statements its threads waited at.
    pub fence: Fence,
    /// Each thread's fence (local id order) when the barrier takes its flags from a variable
    /// (OpenCL's fence flags computed at run time): what it ordered of that thread's
    /// earlier accesses. A terminated thread takes `fence`. Empty (and left out) for a
    /// fixed fence.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fences: Vec<Fence>,
    /// Set when the barrier was not reached uniformly: some threads had terminated, or
    /// threads wait at different `barrier()` statements. The paper's rule still fires; on a
    /// real device this is undefined behaviour (barrier divergence).
    pub divergence: Option<String>,
    /// Where the threads of a divergent barrier stood: one side per `barrier` statement
    /// waited at (in source order), then the terminated threads.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sides: Vec<DivergenceSide>,
}

/// The threads of a work-group that, at a divergent K-BARRIER, waited at one `barrier`
/// statement (`barrier` is its span) or had terminated (`barrier` is `None`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct DivergenceSide {
    pub barrier: Option<Span>,
    /// Local ids, increasing.
    pub threads: Vec<usize>,
}

/// The message and sides of a K-BARRIER of `group` that finds `waiting` (local id, barrier
/// span) threads at barriers and `terminated` threads ended: `None` when uniform. Shared by
/// the reference semantics and the fast executor, so that both report divergence in the
/// same words.
pub fn divergence(
    group: usize,
    waiting: &[(usize, Span)],
    terminated: &[usize],
) -> Option<(String, Vec<DivergenceSide>)> {
    let mut places: Vec<Span> = waiting.iter().map(|w| w.1.clone()).collect();
    places.sort_by_key(|s| (s.start, s.end));
    places.dedup();
    let message = if !terminated.is_empty() {
        format!(
            "{} thread(s) of group {group} wait at a barrier while {} have terminated",
            waiting.len(),
            terminated.len()
        )
    } else if places.len() > 1 {
        format!(
            "threads of group {group} wait at {} different barrier() statements",
            places.len()
        )
    } else {
        return None;
    };
    let mut sides: Vec<DivergenceSide> = places
        .into_iter()
        .map(|p| DivergenceSide {
            threads: waiting.iter().filter(|w| w.1 == p).map(|w| w.0).collect(),
            barrier: Some(p),
        })
        .collect();
    if !terminated.is_empty() {
        sides.push(DivergenceSide {
            barrier: None,
            threads: terminated.to_vec(),
        });
    }
    Some((message, sides))
}

/// One thread's part of K: its variable store and its statement sequence.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Thread {
    vars: Vec<Value>,
    /// Per variable: assigned yet (`--uninit check`); empty when every variable counts as
    /// defined ([`crate::undef`]).
    defined: Vec<bool>,
    /// Continuation: `(block, index)` frames, top last; empty when terminated.
    frames: Vec<(usize, usize)>,
}

/// A kernel state (σ_A, K) with the barrier epoch of every work-group.
#[derive(Clone, Debug)]
pub struct State {
    /// One persistent vector per array instance, at `base[array] + instance`.
    arrays: imbl::Vector<imbl::Vector<Value>>,
    threads: imbl::Vector<Arc<Thread>>,
    /// Per work-group: barriers fired (any fence).
    epochs: imbl::Vector<u64>,
    /// Per work-group: barriers fired per memory space they order.
    fenced: imbl::Vector<Epochs>,
    /// Per thread, when some barrier's fence is computed at run time
    /// ([`lang::core::Kernel::has_item_fences`]): barriers fired per memory space they
    /// order for that thread's accesses ([`State::thread_epochs`]). Empty otherwise.
    items: imbl::Vector<Epochs>,
    /// Which array elements are defined (`--uninit check`, [`crate::undef`]).
    shadow: Shadow,
    /// Who holds which permissions ([`crate::perm`]); empty for a kernel without
    /// permission statements.
    perms: Perms,
    /// Derived from `threads`; shared until a thread changes status.
    sched: Arc<Sched>,
}

/// Equality and hashing are structural on (σ_A, K) and the epochs; `sched` is a function
/// of K.
impl PartialEq for State {
    fn eq(&self, other: &State) -> bool {
        self.arrays == other.arrays
            && self.threads == other.threads
            && self.epochs == other.epochs
            && self.fenced == other.fenced
            && self.items == other.items
            && self.shadow == other.shadow
            && self.perms == other.perms
    }
}

impl Eq for State {}

impl std::hash::Hash for State {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.arrays.hash(h);
        self.threads.hash(h);
        self.epochs.hash(h);
        self.fenced.hash(h);
        self.items.hash(h);
        self.shadow.hash(h);
        self.perms.hash(h);
    }
}

/// Thread statuses, counted: what the schedulers and K-BARRIER need at every step.
#[derive(Clone, Debug)]
struct Sched {
    runnable: Runnable,
    /// Per work-group: runnable threads.
    runnable_in: Vec<usize>,
    /// Per work-group: threads whose next statement is `barrier`.
    waiting_in: Vec<usize>,
    terminated: usize,
    /// Work-groups whose K-BARRIER is enabled.
    ready: std::collections::BTreeSet<usize>,
    /// Under `--warp-size`: the warps and which of them are enabled ([`crate::warp`]).
    warps: Option<WarpSched>,
}

/// What K-STEP on warps needs beside the runnable threads: the partition, the program
/// order that picks a warp's active lanes, and per warp its runnable lanes.
#[derive(Clone, Debug)]
struct WarpSched {
    warps: Warps,
    order: Arc<ProgramOrder>,
    /// Per warp: runnable lanes.
    runnable_lanes: Vec<usize>,
    /// Warps with at least one runnable lane.
    enabled: Runnable,
}

impl Sched {
    fn count(&mut self, group: usize, t: usize, status: ThreadStatus, delta: isize) {
        let add = |n: &mut usize| *n = n.checked_add_signed(delta).expect("status count");
        match status {
            ThreadStatus::Runnable => {
                add(&mut self.runnable_in[group]);
                if delta > 0 {
                    self.runnable.insert(t);
                } else {
                    self.runnable.remove(t);
                }
                if let Some(ws) = &mut self.warps {
                    let w = ws.warps.of_thread(t);
                    add(&mut ws.runnable_lanes[w]);
                    if ws.runnable_lanes[w] > 0 {
                        ws.enabled.insert(w);
                    } else {
                        ws.enabled.remove(w);
                    }
                }
            }
            ThreadStatus::AtBarrier => add(&mut self.waiting_in[group]),
            ThreadStatus::Terminated => add(&mut self.terminated),
        }
        if self.runnable_in[group] == 0 && self.waiting_in[group] > 0 {
            self.ready.insert(group);
        } else {
            self.ready.remove(&group);
        }
    }
}

/// The runnable threads (global indices) as an ordered set: a bit per thread and a Fenwick
/// tree of the bits per 64-thread word, so that the lowest, the k-th and the next thread
/// after a given one are found in O(log n), and a status change costs O(log n).
#[derive(Clone, Debug)]
pub struct Runnable {
    words: Vec<u64>,
    /// Fenwick tree (1-based) over the population counts of `words`.
    tree: Vec<u32>,
    len: usize,
}

impl Runnable {
    fn new(threads: usize) -> Runnable {
        let n = threads.div_ceil(64);
        Runnable {
            words: vec![0; n],
            tree: vec![0; n + 1],
            len: 0,
        }
    }

    fn add(&mut self, word: usize, delta: i32) {
        let mut i = word + 1;
        while i < self.tree.len() {
            self.tree[i] = self.tree[i].wrapping_add_signed(delta);
            i += i & i.wrapping_neg();
        }
    }

    fn insert(&mut self, t: usize) {
        let bit = 1u64 << (t % 64);
        if self.words[t / 64] & bit == 0 {
            self.words[t / 64] |= bit;
            self.add(t / 64, 1);
            self.len += 1;
        }
    }

    fn remove(&mut self, t: usize) {
        let bit = 1u64 << (t % 64);
        if self.words[t / 64] & bit != 0 {
            self.words[t / 64] &= !bit;
            self.add(t / 64, -1);
            self.len -= 1;
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn contains(&self, t: usize) -> bool {
        self.words
            .get(t / 64)
            .is_some_and(|w| w & (1u64 << (t % 64)) != 0)
    }

    /// The `k`-th runnable thread in increasing order (0-based).
    pub fn nth(&self, k: usize) -> Option<usize> {
        if k >= self.len {
            return None;
        }
        // Largest word prefix holding at most k threads.
        let mut pos = 0;
        let mut rest = k as u32;
        let mut step = (self.tree.len() - 1).next_power_of_two();
        while step > 0 {
            let next = pos + step;
            if next < self.tree.len() && self.tree[next] <= rest {
                pos = next;
                rest -= self.tree[next];
            }
            step /= 2;
        }
        let mut w = self.words[pos];
        for _ in 0..rest {
            w &= w - 1;
        }
        Some(pos * 64 + w.trailing_zeros() as usize)
    }

    /// The lowest runnable thread.
    pub fn first(&self) -> Option<usize> {
        self.nth(0)
    }

    /// The lowest runnable thread above `t`.
    pub fn next_after(&self, t: usize) -> Option<usize> {
        let u = t + 1;
        let word = u / 64;
        if word >= self.words.len() {
            return None;
        }
        let mut below = 0;
        let mut i = word;
        while i > 0 {
            below += self.tree[i] as usize;
            i -= i & i.wrapping_neg();
        }
        below += (self.words[word] & ((1u64 << (u % 64)) - 1)).count_ones() as usize;
        self.nth(below)
    }

    /// In increasing order.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.words.iter().enumerate().flat_map(|(i, &w)| {
            let mut w = w;
            std::iter::from_fn(move || {
                (w != 0).then(|| {
                    let b = w.trailing_zeros() as usize;
                    w &= w - 1;
                    i * 64 + b
                })
            })
        })
    }

    pub fn to_vec(&self) -> Vec<usize> {
        self.iter().collect()
    }
}

/// Where a thread stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThreadStatus {
    /// Can take a K-STEP.
    Runnable,
    /// Its next statement is `barrier`.
    AtBarrier,
    Terminated,
}

impl State {
    /// The initial state: every array as the launch gives it, every variable at its
    /// type's default, every thread at the start of the kernel body.
    pub fn initial(launch: &Launch) -> State {
        let k = &launch.kernel;
        let mut arrays = imbl::Vector::new();
        for a in 0..k.arrays.len() {
            let init: imbl::Vector<Value> = launch.initial[a].iter().cloned().collect();
            for _ in 0..launch.instances(a) {
                arrays.push_back(init.clone());
            }
        }
        let vars: Vec<Value> = k
            .vars
            .iter()
            .map(|v| Value::default_of(v.ty, launch.monoid))
            .collect();
        let defined = if launch.checks_uninit() {
            vec![false; k.vars.len()]
        } else {
            Vec::new()
        };
        let mut start = Thread {
            vars,
            defined,
            frames: vec![(lang::core::Kernel::BODY, 0)],
        };
        normalise(launch, &mut start.frames);
        let status = thread_status(launch, &start);
        let start = Arc::new(start);
        let threads = launch.threads();
        let mut sched = Sched {
            runnable: Runnable::new(threads),
            runnable_in: vec![0; launch.groups],
            waiting_in: vec![0; launch.groups],
            terminated: 0,
            ready: Default::default(),
            warps: Warps::new(launch).map(|warps| WarpSched {
                warps,
                order: Arc::new(ProgramOrder::new(k)),
                runnable_lanes: vec![0; warps.count()],
                enabled: Runnable::new(warps.count()),
            }),
        };
        for t in 0..threads {
            sched.count(t / launch.local_size, t, status, 1);
        }
        State {
            arrays,
            threads: (0..threads).map(|_| start.clone()).collect(),
            epochs: (0..launch.groups).map(|_| 0).collect(),
            fenced: (0..launch.groups).map(|_| Epochs::default()).collect(),
            items: if k.has_item_fences() {
                (0..threads).map(|_| Epochs::default()).collect()
            } else {
                imbl::Vector::new()
            },
            shadow: Shadow::initial(launch),
            perms: Perms::default(),
            sched: Arc::new(sched),
        }
    }

    pub fn status(&self, launch: &Launch, t: usize) -> ThreadStatus {
        thread_status(launch, &self.threads[t])
    }

    /// Threads (global index `group * local_size + tid`) that can take a K-STEP, in order.
    pub fn runnable(&self) -> &Runnable {
        &self.sched.runnable
    }

    /// What a scheduler chooses from: the runnable threads, or under `--warp-size` the
    /// enabled warps (launch-wide numbers, [`crate::warp::Warps::global`]).
    pub fn choices(&self) -> &Runnable {
        match &self.sched.warps {
            Some(ws) => &ws.enabled,
            None => &self.sched.runnable,
        }
    }

    /// Whether every thread has terminated (a final state).
    pub fn is_final(&self) -> bool {
        self.sched.terminated == self.threads.len()
    }

    /// Barriers fired by `group` so far, whatever their fence.
    pub fn epoch(&self, group: usize) -> u64 {
        self.epochs[group]
    }

    /// Barriers fired by `group` so far, per memory space they order: the epochs of
    /// Definition 5.2 for accesses to `local` and to `global` arrays.
    pub fn epochs(&self, group: usize) -> Epochs {
        self.fenced[group]
    }

    /// The epochs of thread `t`'s accesses (global index): its group's ([`State::epochs`]),
    /// or its own where barrier fences are computed at run time. An access of `t` is
    /// ordered with every later access of the group exactly when `t`'s epoch of its space
    /// has moved on since ([`crate::race::conflict_live`]).
    pub fn thread_epochs(&self, launch: &Launch, t: usize) -> Epochs {
        match self.items.get(t) {
            Some(e) => *e,
            None => self.fenced[t / launch.local_size],
        }
    }

    /// The statement a thread executes next, if any.
    pub fn next_span(&self, launch: &Launch, t: usize) -> Option<Span> {
        self.threads[t]
            .frames
            .last()
            .map(|&(b, i)| launch.kernel.blocks[b][i].span.clone())
    }

    pub fn var(&self, t: usize, v: VarId) -> &Value {
        &self.threads[t].vars[v]
    }

    /// The array store as plain vectors.
    pub fn memory(&self, launch: &Launch) -> Memory {
        let mut it = self.arrays.iter();
        Memory {
            arrays: (0..launch.kernel.arrays.len())
                .map(|a| {
                    (0..launch.instances(a))
                        .map(|_| {
                            it.next()
                                .expect("one vector per instance")
                                .iter()
                                .cloned()
                                .collect()
                        })
                        .collect()
                })
                .collect(),
        }
    }

    /// K-BARRIER for `group`, if it is enabled there (Figure 7):
    ///
    /// ```text
    /// ∀t : ∃σ_v : (∃ss : K(t) = (σ_v, barrier; ss) ∧ K′(t) = (σ_v, ss)) ∨ (K(t) = (σ_v, ε) ∧ K′(t) = (σ_v, ε))
    /// ───────────────────────────────────────────────────────────────────────  ∃t, σ_v, ss : K(t) = (σ_v, barrier; ss)
    ///                        (σ_A, K) →k (σ_A, K′)
    /// ```
    ///
    /// per work-group, as every engine reads the rule. The group's epochs advance: the
    /// total, and per memory space the ones its fence orders.
    pub fn k_barrier(&mut self, launch: &Launch, group: usize) -> Option<BarrierInfo> {
        if !self.sched.ready.contains(&group) {
            return None;
        }
        let range = group * launch.local_size..(group + 1) * launch.local_size;
        let mut at = Vec::new();
        let mut own = Vec::new();
        let mut waiting = Vec::new();
        let mut terminated = Vec::new();
        let mut fence = Fence {
            local: false,
            global: false,
        };
        for t in range.clone() {
            match self.status(launch, t) {
                ThreadStatus::Runnable => unreachable!("an enabled barrier has no runnable thread"),
                ThreadStatus::AtBarrier => {
                    let (b, i) = *self.threads[t].frames.last().expect("at a barrier");
                    let stmt = &launch.kernel.blocks[b][i];
                    if let StmtKind::Barrier { fence: f, flags } = stmt.kind {
                        let f = match flags {
                            Some(v) => {
                                let bits = self.threads[t].vars[v].as_i64().unwrap_or(0);
                                Fence::from_bits(bits as u64)
                            }
                            None => f,
                        };
                        fence = fence.union(f);
                        own.push((t, f));
                    }
                    waiting.push((t - range.start, stmt.span.clone()));
                    at.push(t);
                }
                ThreadStatus::Terminated => terminated.push(t - range.start),
            }
        }
        let (divergence, sides) = match divergence(group, &waiting, &terminated) {
            Some((message, sides)) => (Some(message), sides),
            None => (None, Vec::new()),
        };
        let sched = Arc::make_mut(&mut self.sched);
        for t in at {
            let th = Arc::make_mut(&mut self.threads[t]);
            th.frames.last_mut().expect("at a barrier").1 += 1;
            normalise(launch, &mut th.frames);
            let status = thread_status(launch, th);
            if status != ThreadStatus::AtBarrier {
                sched.count(group, t, ThreadStatus::AtBarrier, -1);
                sched.count(group, t, status, 1);
            }
        }
        self.epochs[group] += 1;
        self.fenced[group] = self.fenced[group].after(fence);
        let mut fences = Vec::new();
        if !self.items.is_empty() {
            fences = vec![fence; launch.local_size];
            for (t, f) in own {
                fences[t - range.start] = f;
            }
            for (t, f) in range.zip(&fences) {
                let e = self.items[t].after(*f);
                self.items.set(t, e);
            }
        }
        Some(BarrierInfo {
            group,
            epoch: self.epochs[group],
            fence,
            fences,
            divergence,
            sides,
        })
    }

    /// Fires every enabled barrier, in group order.
    pub fn fire_ready_barriers(&mut self, launch: &Launch) -> Vec<BarrierInfo> {
        let ready: Vec<usize> = self.sched.ready.iter().copied().collect();
        ready
            .into_iter()
            .filter_map(|g| self.k_barrier(launch, g))
            .collect()
    }

    /// K-STEP for thread `t` (which must be runnable), on a copy of the state.
    pub fn step(&self, launch: &Launch, t: usize) -> Result<(State, StepInfo), Fault> {
        let mut next = self.clone();
        let info = next.k_step(launch, t)?;
        Ok((next, info))
    }

    /// K-STEP in place (Figure 7); on a fault the state is unchanged:
    ///
    /// ```text
    /// K(t) = (σ_v, ss)    (σ_v, σ_A, ss) →s (σ′_v, σ′_A, ss′)    K′ = K[t ↦ (σ′_v, ss′)]
    /// ─────────────────────────────────────────────────────────────────── (K-STEP)
    ///                      (σ_A, K) →k (σ′_A, K′)
    /// ```
    ///
    /// The sequential step →s is the rule of the thread's next statement, one function
    /// each below; the array update σ′_A is applied once the rule has succeeded.
    pub fn k_step(&mut self, launch: &Launch, t: usize) -> Result<StepInfo, Fault> {
        let lane = self.rule(launch, t, false)?;
        Ok(self.commit(launch, t, lane))
    }

    /// [`State::k_step`], going on past the faults that allow it when the launch says so
    /// ([`Launch::continue_after_faults`]): they are in [`StepInfo::faults`]. Only a
    /// single execution does ([`crate::exec::run`]); exploration stops at the first fault.
    pub fn k_step_on(&mut self, launch: &Launch, t: usize) -> Result<StepInfo, Fault> {
        let lane = self.rule(launch, t, launch.continue_after_faults)?;
        Ok(self.commit(launch, t, lane))
    }

    /// [`State::warp_step`] on a copy of the state.
    pub fn step_warp(&self, launch: &Launch, warp: usize) -> Result<(State, WarpStep), Fault> {
        let mut next = self.clone();
        let step = next.warp_step(launch, warp)?;
        Ok((next, step))
    }

    /// One warp instruction (module [`crate::warp`], points 2 and 3): the warp's runnable
    /// lanes whose next statement is first in program order each take the rule K-STEP
    /// would take for them alone, all reading the state before the instruction; then their
    /// updates are applied in lane order (an atomic one reading the element as the lanes
    /// before it left it). On a fault (the lowest faulting lane's) the state is unchanged.
    /// `warp` must be enabled, and the launch must have a warp size.
    pub fn warp_step(&mut self, launch: &Launch, warp: usize) -> Result<WarpStep, Fault> {
        self.warp_step_with(launch, warp, false)
    }

    /// [`State::warp_step`], going on past faults as [`State::k_step_on`] does.
    pub fn warp_step_on(&mut self, launch: &Launch, warp: usize) -> Result<WarpStep, Fault> {
        self.warp_step_with(launch, warp, launch.continue_after_faults)
    }

    fn warp_step_with(
        &mut self,
        launch: &Launch,
        warp: usize,
        go_on: bool,
    ) -> Result<WarpStep, Fault> {
        let ws = self
            .sched
            .warps
            .as_ref()
            .expect("a launch with a warp size");
        let order = |t: usize| {
            let &(b, i) = self.threads[t].frames.last().expect("runnable lane");
            ws.order.of(b, i)
        };
        let runnable: Vec<usize> = ws
            .warps
            .lanes(warp)
            .filter(|&t| self.sched.runnable.contains(t))
            .collect();
        let first = runnable
            .iter()
            .map(|&t| order(t))
            .min()
            .expect("an enabled warp has a runnable lane");
        let active: Vec<usize> = runnable
            .into_iter()
            .filter(|&t| order(t) == first)
            .collect();
        let computed = active
            .iter()
            .map(|&t| self.rule(launch, t, go_on))
            .collect::<Result<Vec<Lane>, Fault>>()?;
        let lanes: Vec<StepInfo> = active
            .iter()
            .zip(computed)
            .map(|(&t, lane)| self.commit(launch, t, lane))
            .collect();
        let took = |r: Rule| lanes.iter().any(|l| l.rule == r);
        let divergent =
            (took(Rule::SIteT) && took(Rule::SIteF)) || (took(Rule::SLoopT) && took(Rule::SLoopF));
        Ok(WarpStep {
            warp,
            lanes,
            divergent,
        })
    }

    /// The sequential rule of thread `t`'s next statement, evaluated on this state and not
    /// yet applied: the first half of K-STEP. `go_on`: record the faults that allow it
    /// and go on past them ([`crate::fault::FaultKind::continues`]).
    fn rule(&self, launch: &Launch, t: usize, go_on: bool) -> Result<Lane, Fault> {
        let group = t / launch.local_size;
        let tid = ThreadId {
            group,
            local: t % launch.local_size,
        };
        let &(b, i) = self.threads[t]
            .frames
            .last()
            .expect("runnable thread has a statement");
        let stmt = &launch.kernel.blocks[b][i];
        let mut env = ThreadEnv {
            launch,
            state: self,
            t,
            tid,
            reads: Vec::new(),
            go_on,
            faults: Vec::new(),
        };
        let mut thread = (*self.threads[t]).clone();
        let mut info = StepInfo {
            thread: tid,
            rule: Rule::SAssign,
            span: stmt.span.clone(),
            reads: Vec::new(),
            write: None,
            atomic: false,
            atomic_read: false,
            var_change: None,
            elem_change: None,
            faults: Vec::new(),
        };
        let applied = match &stmt.kind {
            StmtKind::Assign { var, value } => {
                s_assign(&mut env, &mut thread, &mut info, *var, value)
            }
            StmtKind::Store {
                array,
                index,
                value,
            } => s_array(&mut env, &mut thread, &mut info, *array, index, value),
            StmtKind::StoreAt { ptr, value } => {
                s_store_at(&mut env, &mut thread, &mut info, ptr, value)
            }
            StmtKind::If { cond, then, els } => {
                s_ite(&mut env, &mut thread, &mut info, cond, *then, *els)
            }
            StmtKind::While { cond, body } => s_loop(&mut env, &mut thread, &mut info, cond, *body),
            StmtKind::Atomic {
                op,
                array,
                index,
                args,
                result,
            } => s_atomic(
                &mut env,
                &mut thread,
                &mut info,
                (*op, *array),
                index,
                args,
                *result,
            ),
            StmtKind::Check { annotation, cond } => {
                s_assert(&mut env, &mut thread, &mut info, *annotation, cond)
            }
            StmtKind::Perm {
                op,
                array,
                index,
                amount,
            } => s_perm(&mut env, &mut thread, &mut info, *op, *array, index, amount),
            StmtKind::Barrier { .. } => unreachable!("a thread at a barrier is not runnable"),
        };
        let fault = |kind| Fault {
            kind,
            thread: Some(tid),
            span: Some(stmt.span.clone()),
        };
        let update = applied.map_err(fault)?;
        info.reads = env.reads;
        info.faults = env.faults.into_iter().map(fault).collect();
        Ok(Lane {
            thread,
            info,
            update,
        })
    }

    /// The second half of K-STEP: applies a rule computed by [`State::rule`] for thread
    /// `t`. An atomic update reads its element now, so that the atomics of one warp
    /// instruction are serialised.
    fn commit(&mut self, launch: &Launch, t: usize, lane: Lane) -> StepInfo {
        let Lane {
            mut thread,
            mut info,
            update,
        } = lane;
        match update {
            None => {}
            Some(ArrayUpdate::Perm(m)) => self.perms.apply(m),
            Some(ArrayUpdate::Store(slot, offset, v)) => {
                self.arrays[slot].set(offset, v);
                self.shadow.define(slot, offset);
            }
            Some(ArrayUpdate::Atomic {
                slot,
                offset,
                op,
                operands,
                result,
            }) => {
                let old = self.arrays[slot][offset].clone();
                let new = atomic_apply(op, &old, &operands);
                info.atomic_read = !atomic_writes(op, &old, &operands);
                if let Some(var) = result {
                    define(&mut thread, var);
                    let prev = std::mem::replace(&mut thread.vars[var], old.clone());
                    info.var_change = Some((var, prev, old.clone()));
                }
                info.elem_change = Some((old, new.clone()));
                self.arrays[slot].set(offset, new);
            }
        }
        normalise(launch, &mut thread.frames);
        let status = thread_status(launch, &thread);
        self.threads.set(t, Arc::new(thread));
        if status != ThreadStatus::Runnable {
            let sched = Arc::make_mut(&mut self.sched);
            sched.count(t / launch.local_size, t, ThreadStatus::Runnable, -1);
            sched.count(t / launch.local_size, t, status, 1);
        }
        info
    }
}

/// One warp instruction ([`State::warp_step`]).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WarpStep {
    /// The warp's launch-wide number.
    pub warp: usize,
    /// The step of every active lane, in lane order.
    pub lanes: Vec<StepInfo>,
    /// An `if` or `while` test whose active lanes did not all go the same way.
    pub divergent: bool,
}

/// A rule evaluated for one thread and not yet applied ([`State::rule`]): the thread's
/// next part of K, what the step did so far, and its update of σ_A.
struct Lane {
    thread: Thread,
    info: StepInfo,
    update: Option<ArrayUpdate>,
}

/// An update of the array store σ_A that a rule makes, at an instance slot and offset.
enum ArrayUpdate {
    /// S-ARRAY: the value to store.
    Store(usize, usize, Value),
    /// A checked permission move ([`crate::perm`]).
    Perm(Move),
    /// S-ATOMIC: the operation, applied to the element's value when the update is.
    Atomic {
        slot: usize,
        offset: usize,
        op: AtomicOp,
        operands: Vec<Value>,
        result: Option<VarId>,
    },
}

/// Variable `var` of `thread` is assigned: defined from now on ([`crate::undef`]).
fn define(thread: &mut Thread, var: VarId) {
    if let Some(d) = thread.defined.get_mut(var) {
        *d = true;
    }
}

/// Moves a thread past the statement it just executed.
fn advance(thread: &mut Thread) {
    thread.frames.last_mut().expect("frame").1 += 1;
}

/// S-ASSIGN (Figure 6):
///
/// ```text
///         σ′_v = σ_v[v ↦ ⟦e⟧^σv_σA]
/// ──────────────────────────────────────── (S-ASSIGN)
/// (σ_v, σ_A, v := e; ss′) →s (σ′_v, σ_A, ss′)
/// ```
fn s_assign(
    env: &mut ThreadEnv,
    thread: &mut Thread,
    info: &mut StepInfo,
    var: VarId,
    value: &Expr,
) -> Result<Option<ArrayUpdate>, FaultKind> {
    let v = eval(value, env)?;
    define(thread, var);
    let old = std::mem::replace(&mut thread.vars[var], v.clone());
    info.rule = if crate::atomicity::is_temporary(&env.launch.kernel, var)
        && matches!(value.kind, lang::core::ExprKind::Load { .. })
    {
        Rule::SRead
    } else {
        Rule::SAssign
    };
    info.var_change = Some((var, old, v));
    advance(thread);
    Ok(None)
}

/// S-ARRAY (Figure 6); the element is bounds-checked before the value is evaluated:
///
/// ```text
/// ⟦e1⟧ = n    A′ = σ_A(A)[n ↦ ⟦e2⟧]    σ′_A = σ_A[A ↦ A′]
/// ────────────────────────────────────────────────── (S-ARRAY)
///     (σ_v, σ_A, A[e1] := e2; ss′) →s (σ_v, σ′_A, ss′)
/// ```
fn s_array(
    env: &mut ThreadEnv,
    thread: &mut Thread,
    info: &mut StepInfo,
    array: ArrayId,
    index: &[Expr],
    value: &Expr,
) -> Result<Option<ArrayUpdate>, FaultKind> {
    let idx = eval_index(index, env)?;
    store(env, thread, info, array, idx, value)
}

/// `*p := e`: S-ARRAY on the element pointer `p` points at, the same step (access, race
/// check, messages) as the direct store `A[i] := e` to it. A null pointer, or a pointer
/// into an array of another element type than `e`'s, is a fault.
fn s_store_at(
    env: &mut ThreadEnv,
    thread: &mut Thread,
    info: &mut StepInfo,
    ptr: &Expr,
    value: &Expr,
) -> Result<Option<ArrayUpdate>, FaultKind> {
    let p = eval(ptr, env)?;
    let (array, idx) = pointee(env.launch, &p, value.ty)?;
    store(env, thread, info, array, idx, value)
}

/// The store of S-ARRAY to element `idx` of `array` (not yet bounds-checked).
fn store(
    env: &mut ThreadEnv,
    thread: &mut Thread,
    info: &mut StepInfo,
    array: ArrayId,
    idx: Vec<i64>,
    value: &Expr,
) -> Result<Option<ArrayUpdate>, FaultKind> {
    // Going on past faults, the value's faults come first, as the statement computes it.
    let checked = match env.go_on {
        false => Some(env.elem(array, &idx)?),
        true => None,
    };
    let v = eval(value, env)?;
    info.rule = Rule::SArray;
    let elem = match checked.map_or_else(|| env.elem(array, &idx), Ok) {
        Ok(elem) => elem,
        Err(kind) => {
            // Out of bounds: the write is dropped.
            env.fault(kind)?;
            advance(thread);
            return Ok(None);
        }
    };
    let slot = base(env.launch, array) + elem.instance;
    let old = env.state.arrays[slot][elem.offset].clone();
    info.elem_change = Some((old, v.clone()));
    let update = ArrayUpdate::Store(slot, elem.offset, v);
    info.write = Some(elem);
    advance(thread);
    Ok(Some(update))
}

/// S-ITE-T / S-ITE-F (Figure 6):
///
/// ```text
///                 ⟦e⟧                                              ¬⟦e⟧
/// ───────────────────────────────────────── (S-ITE-T)   ───────────────────────────────────────── (S-ITE-F)
/// (σ_v, σ_A, if (e) {ss1} else {ss2}; ss′)               (σ_v, σ_A, if (e) {ss1} else {ss2}; ss′)
///     →s (σ_v, σ_A, ss1 · ss′)                               →s (σ_v, σ_A, ss2 · ss′)
/// ```
fn s_ite(
    env: &mut ThreadEnv,
    thread: &mut Thread,
    info: &mut StepInfo,
    cond: &Expr,
    then: BlockId,
    els: BlockId,
) -> Result<Option<ArrayUpdate>, FaultKind> {
    let c = eval(cond, env)?.truthy();
    advance(thread);
    thread.frames.push((if c { then } else { els }, 0));
    info.rule = if c { Rule::SIteT } else { Rule::SIteF };
    Ok(None)
}

/// S-LOOP-T / S-LOOP-F (Figure 6):
///
/// ```text
///                 ⟦e⟧                                            ¬⟦e⟧
/// ─────────────────────────────────────── (S-LOOP-T)   ──────────────────────────────── (S-LOOP-F)
/// (σ_v, σ_A, while (e) {ss}; ss′)                       (σ_v, σ_A, while (e) {ss}; ss′)
///     →s (σ_v, σ_A, ss · while (e) {ss}; ss′)               →s (σ_v, σ_A, ss′)
/// ```
fn s_loop(
    env: &mut ThreadEnv,
    thread: &mut Thread,
    info: &mut StepInfo,
    cond: &Expr,
    body: BlockId,
) -> Result<Option<ArrayUpdate>, FaultKind> {
    if eval(cond, env)?.truthy() {
        thread.frames.push((body, 0));
        info.rule = Rule::SLoopT;
        // The body's declarations without initialiser are reached again: indeterminate.
        if !thread.defined.is_empty() {
            for (v, decl) in env.launch.kernel.vars.iter().enumerate() {
                if decl.fresh_in == Some(body) {
                    thread.defined[v] = false;
                }
            }
        }
    } else {
        advance(thread);
        info.rule = Rule::SLoopF;
    }
    Ok(None)
}

/// S-ATOMIC (ksim's extension of Figure 6 for OpenCL's `atomic_*`): one indivisible
/// read-modify-write of the element, which is bounds-checked before the operands are
/// evaluated; the old value goes to the result variable, if any:
///
/// ```text
/// ⟦e⟧ = n    old = σ_A(A)(n)    σ′_A = σ_A[A ↦ σ_A(A)[n ↦ op(old, ⟦e1⟧, ..)]]    σ′_v = σ_v[v ↦ old]
/// ─────────────────────────────────────────────────────────────────────────── (S-ATOMIC)
///         (σ_v, σ_A, v := atomic_op(A[e], e1, ..); ss′) →s (σ′_v, σ′_A, ss′)
/// ```
///
/// For Definition 5.2 the element's access is *atomic*: it races with plain reads and
/// writes of other threads, not with their atomic accesses. A compare-exchange that finds
/// another value than the compared one writes nothing: its access is an *atomic read*,
/// which races with plain writes only (decided when the update is applied, in `commit`).
fn s_atomic(
    env: &mut ThreadEnv,
    thread: &mut Thread,
    info: &mut StepInfo,
    (op, array): (AtomicOp, ArrayId),
    index: &[Expr],
    args: &[Expr],
    result: Option<VarId>,
) -> Result<Option<ArrayUpdate>, FaultKind> {
    let idx = eval_index(index, env)?;
    // Going on past faults, the operands' faults come first, as the statement computes them.
    let checked = match env.go_on {
        false => Some(env.elem(array, &idx)?),
        true => None,
    };
    let operands = args
        .iter()
        .map(|a| eval(a, env))
        .collect::<Result<Vec<Value>, _>>()?;
    info.rule = Rule::SAtomic;
    let elem = match checked.map_or_else(|| env.elem(array, &idx), Ok) {
        Ok(elem) => elem,
        Err(kind) => {
            // Out of bounds: nothing is written; the result is the element type's zero.
            env.fault(kind)?;
            if let Some(var) = result {
                let zero = env.undefined(array);
                define(thread, var);
                let prev = std::mem::replace(&mut thread.vars[var], zero.clone());
                info.var_change = Some((var, prev, zero));
            }
            advance(thread);
            return Ok(None);
        }
    };
    // The atomic reads its element (after its operands, as the fast executor checks).
    if let Err(kind) = env.defined(&elem) {
        env.fault(kind)?;
    }
    info.atomic = true;
    let update = ArrayUpdate::Atomic {
        slot: base(env.launch, array) + elem.instance,
        offset: elem.offset,
        op,
        operands,
        result,
    };
    info.write = Some(elem);
    advance(thread);
    Ok(Some(update))
}

/// S-ASSERT (ksim's rule for GPUVerify's annotations): the thread moves on when the
/// condition holds; a false condition is a fault naming the annotation and the values its
/// condition read. The condition's reads observe the state and are not accesses
/// (Definition 5.2 does not see them):
///
/// ```text
///                  ⟦e⟧
/// ───────────────────────────────────────── (S-ASSERT)
/// (σ_v, σ_A, __assert(e); ss′) →s (σ_v, σ_A, ss′)
/// ```
fn s_assert(
    env: &mut ThreadEnv,
    thread: &mut Thread,
    info: &mut StepInfo,
    annotation: Annotation,
    cond: &Expr,
) -> Result<Option<ArrayUpdate>, FaultKind> {
    let holds = eval(cond, env)?.truthy();
    env.reads.clear();
    if !holds {
        let kernel = &env.launch.kernel;
        let values = crate::annotation::mentions(cond)
            .into_iter()
            .map(|m| {
                let v = match m {
                    Mention::Var(v) => thread.vars[v].clone(),
                    Mention::Param(p) => env.launch.params[p].clone(),
                };
                crate::annotation::describe(kernel, m, &v)
            })
            .collect();
        return Err(FaultKind::Annotation {
            annotation: annotation.name().to_string(),
            values,
        });
    }
    info.rule = Rule::SAssert;
    advance(thread);
    Ok(None)
}

/// A permission statement ([`crate::perm`]): checked against the table as this state
/// holds it, the move applied with the step. Like S-ASSERT, its reads are not accesses.
fn s_perm(
    env: &mut ThreadEnv,
    thread: &mut Thread,
    info: &mut StepInfo,
    op: PermOp,
    array: ArrayId,
    index: &[Expr],
    amount: &[Expr; 2],
) -> Result<Option<ArrayUpdate>, FaultKind> {
    let idx = eval_index(index, env)?;
    let elem = env.elem(array, &idx)?;
    let part = |e: &Expr, env: &mut ThreadEnv| -> Result<i64, FaultKind> {
        Ok(eval(e, env)?.as_i64().unwrap_or(0))
    };
    let (num, den) = (part(&amount[0], env)?, part(&amount[1], env)?);
    env.reads.clear();
    let name = &env.launch.kernel.arrays[array].name;
    let location: String = std::iter::once(name.clone())
        .chain(idx.iter().map(|i| format!("[{i}]")))
        .collect();
    if den <= 0 {
        return Err(FaultKind::Annotation {
            annotation: op.name().to_string(),
            values: vec![
                format!("location {location}"),
                format!("fraction {num}/{den}"),
            ],
        });
    }
    let slot = base(env.launch, array) + elem.instance;
    let moved = env
        .state
        .perms
        .step(
            op,
            (env.t, env.tid.group),
            slot,
            elem.offset,
            Frac::new(num, den),
            &location,
        )
        .map_err(|values| FaultKind::Annotation {
            annotation: op.name().to_string(),
            values,
        })?;
    info.rule = Rule::SAssert;
    advance(thread);
    Ok(moved.map(ArrayUpdate::Perm))
}

/// Whether an atomic operation on an element holding `old` writes it: every one does but
/// a compare-exchange whose element does not hold the compared value (compared at the
/// element's width, as [`atomic_apply`] does).
pub fn atomic_writes(op: AtomicOp, old: &Value, operands: &[Value]) -> bool {
    if op != AtomicOp::CmpXchg {
        return true;
    }
    let cmp = operands.first().and_then(Value::as_i64).unwrap_or(0);
    let old_bits = old.as_i64().unwrap_or(0);
    match old {
        Value::Long(_) | Value::Ulong(_) => old_bits == cmp,
        _ => old_bits as u32 == cmp as u32,
    }
}

/// The new value of an `int`, `uint`, `long` or `ulong` element under an atomic operation
/// (of a `float` element under `atomic_xchg`, which only moves the operand's bits in).
pub fn atomic_apply(op: AtomicOp, old: &Value, operands: &[Value]) -> Value {
    if let (AtomicOp::Xchg, Some(v)) = (op, operands.first()) {
        return v.clone();
    }
    let wide = |v: &Value| v.as_i64().unwrap_or(0);
    match old {
        Value::Long(o) => {
            let args: Vec<i64> = operands.iter().map(wide).collect();
            Value::Long(op.apply_i64(*o, &args))
        }
        Value::Ulong(o) => {
            let args: Vec<u64> = operands.iter().map(|v| wide(v) as u64).collect();
            Value::Ulong(op.apply_u64(*o, &args))
        }
        Value::Uint(o) => {
            let args: Vec<u32> = operands
                .iter()
                .map(|v| v.as_i64().unwrap_or(0) as u32)
                .collect();
            Value::Uint(op.apply_u32(*o, &args))
        }
        _ => {
            let o = old.as_i64().unwrap_or(0) as i32;
            let args: Vec<i32> = operands
                .iter()
                .map(|v| v.as_i64().unwrap_or(0) as i32)
                .collect();
            Value::Int(op.apply_i32(o, &args))
        }
    }
}

fn thread_status(launch: &Launch, thread: &Thread) -> ThreadStatus {
    match thread.frames.last() {
        None => ThreadStatus::Terminated,
        Some(&(b, i)) => match launch.kernel.blocks[b][i].kind {
            StmtKind::Barrier { .. } => ThreadStatus::AtBarrier,
            _ => ThreadStatus::Runnable,
        },
    }
}

/// Pops finished frames so that the top frame, if any, names the next statement.
fn normalise(launch: &Launch, frames: &mut Vec<(usize, usize)>) {
    while let Some(&(b, i)) = frames.last() {
        if i < launch.kernel.blocks[b].len() {
            return;
        }
        frames.pop();
    }
}

/// Index of the first instance of array `a` in the state's flat list of array instances.
fn base(launch: &Launch, a: ArrayId) -> usize {
    (0..a).map(|x| launch.instances(x)).sum()
}

struct ThreadEnv<'a> {
    launch: &'a Launch,
    state: &'a State,
    t: usize,
    tid: ThreadId,
    reads: Vec<Elem>,
    /// Go on past the faults that allow it.
    go_on: bool,
    /// The faults the step went on past.
    faults: Vec<FaultKind>,
}

impl ThreadEnv<'_> {
    fn elem(&self, array: ArrayId, idx: &[i64]) -> Result<Elem, FaultKind> {
        let dims = &self.launch.dims[array];
        match offset(idx, dims) {
            Some(off) => Ok(Elem {
                array,
                instance: self.launch.instance_of(array, self.tid.group),
                offset: off,
                index: idx.iter().map(|&i| i as usize).collect(),
            }),
            None => Err(FaultKind::OutOfBounds {
                array: self.launch.kernel.arrays[array].name.clone(),
                index: idx.to_vec(),
                dims: dims.clone(),
            }),
        }
    }
}

impl ThreadEnv<'_> {
    /// What an out-of-bounds read of `array` gives when the execution goes on: the
    /// element type's zero (the identity for `T`).
    fn undefined(&self, array: ArrayId) -> Value {
        let elem = self.launch.kernel.arrays[array].elem;
        Value::default_of(elem, self.launch.monoid)
    }

    /// An uninitialised read when `elem` is undefined ([`crate::undef`]).
    fn defined(&self, elem: &Elem) -> Result<(), FaultKind> {
        let slot = base(self.launch, elem.array) + elem.instance;
        if self.state.shadow.is_defined(slot, elem.offset) {
            return Ok(());
        }
        let index = elem.index.iter().map(|&i| i as i64).collect();
        Err(crate::undef::element(
            &self.launch.kernel.arrays[elem.array].name,
            index,
        ))
    }
}

impl Env for ThreadEnv<'_> {
    fn var(&mut self, v: VarId) -> Result<Value, FaultKind> {
        let thread = &self.state.threads[self.t];
        if thread.defined.get(v) == Some(&false) {
            self.fault(crate::undef::variable(&self.launch.kernel.vars[v].name))?;
        }
        Ok(self.state.threads[self.t].vars[v].clone())
    }
    fn fault(&mut self, kind: FaultKind) -> Result<(), FaultKind> {
        if self.go_on && kind.continues() {
            self.faults.push(kind);
            return Ok(());
        }
        Err(kind)
    }
    fn param(&self, p: ParamId) -> Value {
        self.launch.params[p].clone()
    }
    fn builtin(&self, b: Builtin) -> Value {
        self.launch.builtin(b, self.tid.group, self.tid.local)
    }
    fn monoid(&self) -> Monoid {
        self.launch.monoid
    }
    fn launch(&self) -> &Launch {
        self.launch
    }
    fn load(&mut self, array: ArrayId, idx: &[i64]) -> Result<Value, FaultKind> {
        let elem = match self.elem(array, idx) {
            Ok(elem) => elem,
            Err(kind) => {
                self.fault(kind)?;
                return Ok(self.undefined(array));
            }
        };
        if let Err(kind) = self.defined(&elem) {
            self.fault(kind)?;
        }
        let v = self.state.arrays[base(self.launch, array) + elem.instance][elem.offset].clone();
        if !self.reads.contains(&elem) {
            self.reads.push(elem);
        }
        Ok(v)
    }
}
