//! The fast executor: the canonical schedule on a compiled kernel, with exact race checking.
//!
//! [`run`] executes a [`Launch`] under the *canonical schedule* — work-groups in order
//! `0..G`, each running all of its barrier intervals before the next group starts; inside an
//! interval the threads run in `tid` order, each until it reaches a barrier or terminates;
//! then K-BARRIER fires (when all threads of the group are at a barrier or terminated and at
//! least one is at a barrier). It returns the final memory, every data race of that
//! execution (Definition 5.2), deduplicated by [`RaceKey`](crate::race::RaceKey) with counts,
//! the first fault, every barrier that fired divergently (judged exactly as the reference
//! semantics' K-BARRIER judges it), and the numbers of K-STEP applications and barrier
//! intervals.
//!
//! # Why one schedule decides race-freedom (and the final store) for this input
//!
//! Fix the launch, i.e. the initial state `S` (parameters, geometry, initial arrays). Write
//! `C` for the canonical execution from `S`. The *epoch* of a step of thread `t` is the
//! number of barriers `t` passed before it; because a K-BARRIER advances every thread of the
//! group that is at a barrier, and a thread that terminated never steps again, the epoch of a
//! step is also the number of K-BARRIERs of its group that happened before it, in any
//! execution. Two accesses to one element by distinct threads, at least one a write,
//! *conflict* when their threads are in different groups, or in the same group and the same
//! epoch ([`crate::race::conflict`]): exactly the pairs of Definition 5.2, since within a
//! group "a K-BARRIER between them" is "different epochs".
//!
//! **Races reported are real.** `C` is an execution of the semantics (every thread step is a
//! K-STEP; every barrier is fired when K-BARRIER's premise holds for the group; groups that
//! have not started simply take no steps yet). Every conflicting pair found in `C` is a data
//! race of an actual execution, with both accesses as reported.
//!
//! **No race in `C`, and `C` terminates, ⇒ no execution from `S` has a race, every execution
//! is finite, and every maximal one ends in `C`'s final store** (Lemma 5.4 with `C` as the
//! witness). Race-freedom of `C` says, for every element `e`: (i) in each (group, epoch), if
//! one thread writes `e` no other thread of the group accesses `e` in that epoch; (ii) if a
//! thread of group `h` writes `e`, no thread of another group accesses `e` at all. Let `E`
//! be any execution from `S`. We show by induction on the length of `E` that every step of
//! `E` is a *canonical step*: thread `t`'s `j`-th step in `E` starts from the same local
//! state, reads the same values from the same elements and writes the same values to the same
//! elements as `t`'s `j`-th step in `C` (and K-BARRIERs in `E` move each group's threads
//! between the same states as in `C`). Take `t`'s next step in `E`; by induction its local
//! state is canonical, so its first array access is to the canonical element `e`, and if it
//! reads, it reads the last write to `e` in `E` so far (or the initial value). All writes to
//! `e` in `E` so far are canonical steps. By (ii), since `t`'s group accesses `e`, every
//! write to `e` (in `C`, hence in `E`) is by `t`'s group `g`. Let `k` be `t`'s epoch.
//! Writes by other threads of `g` in epoch `k` do not exist by (i). A write in an epoch
//! `k' < k` precedes `t`'s read in `E` as in `C`: the `(k'+1)`-th K-BARRIER of `g` requires
//! its writer to have finished epoch `k'`. A write in an epoch `k'' > k` cannot have happened
//! in `E` yet: the `(k+1)`-th K-BARRIER needs `t` at a barrier, and `t` is still in epoch
//! `k`. Within one epoch `k' ≤ k` all writes to `e` are by a single thread (by (i); for
//! `k' = k` it is `t` itself), in its program order. So the writes to `e` before the read are
//! the same in `E` and in `C` and in the same order: the read returns the canonical value,
//! and by induction over the accesses of the step (addresses depend only on the local state
//! and values read earlier in the step) the whole step is canonical. Hence (a) any two
//! conflicting accesses of `E` are canonical accesses with the same threads and epochs, so
//! they would conflict in `C`: `E` has no race; (b) each thread's steps in `E` are a prefix
//! of its steps in `C` and each group fires at most as many barriers, so `E` is finite;
//! (c) if `E` is maximal, every thread has done all of its canonical steps (otherwise its next
//! canonical step, or a K-BARRIER, would apply), and the last write to each element is the
//! canonical one by the ordering argument above: `E` ends in `C`'s final store.
//!
//! **Non-termination and faults.** If some thread of `C` never reaches its barrier (or the
//! whole execution is long), `C` is cut at `launch.max_steps` K-STEPs and the verdict is the
//! fault `StepBound` ("did not terminate within N steps"), never "race-free": every thread's
//! budget in an interval is the remaining global budget, so an infinite loop ends the run.
//! A runtime fault (out of bounds, division by zero, shift count) is the first one of `C`
//! (lowest group, interval, `tid`, statement); races found before it are real; no claim is
//! made about the rest. Memory after a fault or the step bound is unspecified. When the
//! launch goes on past faults ([`Launch::continue_after_faults`]), the sequential paths
//! record each fault that allows it and go on as the reference semantics does
//! ([`crate::fault::FaultKind::continues`]); a speculative interval that meets a fault is
//! run again sequentially, so the faults are found in canonical order.
//!
//! # How an interval is executed
//!
//! The kernel is compiled ([`compile`]) to a flat register bytecode over `u64` slots
//! ([`repr`]: ints, uints, bools and float bits zero-extended; interval-monoid elements as
//! `i << 32 | j` with reserved codes for 1 and ⊤). Memory is one flat `Vec<AtomicU64>` per
//! array (local arrays: one instance per group, back to back; relaxed atomics compile to
//! plain loads and stores). A thread's saved state is `[pc, vars...]`.
//!
//! Each interval runs in one of three ways, all producing exactly the canonical interval:
//!
//! * **plain sequential** (no race tracking, one worker or few threads): threads in `tid`
//!   order, in place — the canonical schedule itself.
//! * **speculative parallel** (race tracking, or groups of at least 256 threads): the
//!   threads are split into contiguous chunks run in parallel (rayon, a pool of `jobs`
//!   workers; one chunk below 4096 threads), and each chunk runs its threads in lock-step
//!   batches of 64 ([`batch`]: one instruction dispatch for every lane at the same program
//!   counter, divergent lanes scheduled by smallest program counter), each thread against
//!   the shared memory, new thread states written to a second buffer. Every write marks the
//!   element in a *writer shadow* word (`stamp << 32 | tid`, swapped atomically); a second
//!   writer of the same interval is a conflict and does not write, so each element is
//!   written only by its first writer, which saved the interval-start value in an undo log.
//!   Reads (of arrays that some statement writes) are logged per chunk and validated after
//!   all chunks finished: a read of an element carrying another thread's mark of this
//!   interval is a conflict. If no conflict was found, no element written in the interval was
//!   accessed by two threads, so every read returned the interval-start value or the
//!   thread's own write, whatever the interleaving of lanes and chunks: each thread behaved
//!   exactly as it does running alone from the interval-start memory. By induction on `tid`,
//!   so does each thread in the canonical interval (a thread could only see a lower thread's
//!   write by reading an element that thread wrote — a conflict), so the canonical interval
//!   performs the same accesses (hence is race-free) and ends in the same memory and thread
//!   states. Contrapositively, when the canonical interval has a conflict the speculative
//!   run flags one (it may also flag spurious ones after diverging; that costs time, not
//!   precision). A fault or a thread over the step budget also abandons the speculation.
//!   Then memory is restored from the undo log, the new states are dropped, and the interval
//!   is run again by
//! * **exact sequential**: the canonical schedule in place with an exact tracker
//!   ([`shadow::Tracker`]) that finds every conflicting pair and reports, per race key, the
//!   first race found in canonical order and the number of conflicting pairs. After a failed
//!   speculation the following intervals of the group run sequentially for a while
//!   (exponential back-off), since racy kernels tend to race in every interval.
//!
//! The outcome is therefore identical whatever `jobs` is: memory, races and their order,
//! faults, steps and intervals. The environment variable `KSIM_FAST_PAR_MIN` lowers the 4096-thread chunking threshold;
//! it is a testing knob (the differential tests exercise parallel chunks with it).
//!
//! **Cross-group races.** Groups run one after another, so a group's reads of earlier groups'
//! writes never make the canonical run diverge; but they are races. With race tracking and
//! several groups, each element of a written `global` array carries launch-wide *group
//! marks* (the writing group; the reading group, with a "several groups" bit); every thread
//! of one group stores the same marks, so they are deterministic. A cross-group conflict
//! (possibly spurious after a failed speculation) restarts the whole launch in *full exact*
//! mode: every interval exact sequential, the tracker keeping the history of `global` arrays
//! for the whole launch.
//!
//! # Fences and atomics
//!
//! A barrier whose fence leaves a memory space out (`barrier(local)`) still ends the
//! interval for every thread, but does not order the accesses to arrays of the other space:
//! their epoch ([`crate::race::Epochs`]) counts only the barriers that order them. The
//! argument above holds with those epochs unchanged (every barrier still needs all threads
//! of the group, so a write in an earlier epoch of the element's space still precedes the
//! read). Races of such arrays may span intervals, which the per-interval speculation does
//! not see: with race tracking, a kernel with such a barrier runs every interval exact
//! sequential, and the tracker keeps the history of the unordered space's arrays for the
//! launch.
//!
//! An atomic statement (S-ATOMIC) is one read-modify-write access of kind
//! [`AccessKind::Atomic`](crate::race::AccessKind) (an atomic read when a compare-exchange
//! fails): the exact tracker pairs it with plain accesses only. Atomics make threads of one interval interact by design, so a lock-step
//! batch that meets one hands the interval to the exact sequential path. Two atomics on one
//! element are not a race but do not commute either: a race-free kernel with atomics can
//! have several final stores (e.g. `old = atomic_inc(c[0]); out[old] = tid;`), and the
//! canonical execution is one of them. The argument above needs every pair of accesses to
//! an element by distinct threads in one epoch to be reads, so it does not extend to
//! atomics: with atomics, another schedule may give a thread other values, take other
//! paths and race where `C` does not. For a kernel with atomics
//! ([`lang::core::Kernel::has_atomics`]) the fast executor's verdict is about `C` only;
//! `explore` decides every schedule.
//!
//! # Shadow state, bytes per array element
//!
//! | state | bytes per element | when |
//! |---|---|---|
//! | memory | 8 | always |
//! | writer shadow | 8 | written arrays, when tracking races or running on more than one worker |
//! | group marks | 8 | written `global` arrays, when tracking races with more than one group |
//! | exact tracker lists | 8 (+80 per live access class) | every array, only once some interval needed exact tracking |
//! | definedness bits | 1/8 | arrays that start undefined, under `--uninit check` ([`crate::undef`]) |
//!
//! Under `--uninit check` each variable also has a bit, in mask registers saved with the
//! thread's variables (checked before every read of the variable), and no interval is
//! speculated: every interval runs sequentially in canonical order, so the first
//! uninitialised read found is the canonical one and speculative stores never define an
//! element.
//!
//! Transient per interval: 8 bytes per logged read (of written arrays), 16 bytes per element
//! written (undo); per thread of a group: `2 × 8 × (1 + variables)` bytes of saved states.
//! For Kogge-Stone at n = 2^20 (two arrays, two variables) that is 16 MiB of memory, 8 MiB
//! of writer shadow (only `out` is written), 48 MiB of thread states and up to 24 MiB of
//! logs; the launch's initial values and the returned [`Memory`] (as `Value`s, 24 bytes per
//! element) come on top.
//! Nothing is hashed on the hot path; the exact tracker's race-key map is touched only when
//! a race is found.

mod batch;
mod compile;
mod engine;
mod exec;
mod repr;
mod shadow;
mod warp;

use crate::fault::Fault;
use crate::launch::{Launch, Memory};
use crate::race::Race;
use crate::reference::BarrierInfo;
use std::fmt;

/// Options of a fast run.
#[derive(Clone, Debug, Default)]
pub struct FastOptions {
    /// Worker threads; 0 = rayon's default (the number of cores).
    pub jobs: usize,
    /// Detect and report data races (Definition 5.2).
    pub track_races: bool,
}

/// One distinct race (by [`Race::key`]) with the number of conflicting pairs of accesses
/// that share its key.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct RaceCount {
    /// The first instance found, in canonical order.
    pub race: Race,
    /// Conflicting pairs with this key: unordered pairs of access instances (thread,
    /// statement, kind, epoch, element; repeats of one instance count once) that conflict.
    pub count: u64,
}

/// The result of a fast run.
#[derive(Clone, Debug, serde::Serialize)]
pub struct FastOutcome {
    /// The final store (unspecified after a fault).
    pub memory: Memory,
    /// Races in the order their first instance was found (empty unless tracked).
    pub races: Vec<RaceCount>,
    /// The fault that ended the execution, else the first fault it went on past
    /// ([`crate::exec::Outcome::fault`]).
    pub fault: Option<Fault>,
    /// Every fault, each (statement, kind) once with its count.
    pub faults: crate::fault::Faults,
    /// Barriers that fired without every thread of the group waiting at the same barrier
    /// statement, as the reference semantics reports them ([`crate::exec::Outcome`]).
    pub divergences: Vec<BarrierInfo>,
    /// Barrier intervals executed, summed over groups.
    pub intervals: u64,
    /// K-STEP rule applications (up to the fault; `max_steps` at the step bound); with
    /// warps, warp instructions.
    pub steps: u64,
    /// What the SIMT execution cost, with lock-step warps ([`crate::warp`]).
    pub simt: Option<crate::warp::SimtCost>,
    /// The canonical schedule the run followed, as the reference semantics records it
    /// (threads, or warps with `--warp-size`, run-length encoded); only from
    /// [`run_with_schedule`].
    pub schedule: Option<crate::exec::Schedule>,
}

/// The launch uses something the fast executor does not implement (e.g. the `list`
/// monoid); use the reference semantics instead.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unsupported {
    pub message: String,
}

impl Unsupported {
    pub fn new(message: impl Into<String>) -> Unsupported {
        Unsupported {
            message: message.into(),
        }
    }
}

impl fmt::Display for Unsupported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "not supported by the fast executor: {}", self.message)
    }
}

impl std::error::Error for Unsupported {}

/// Runs `launch` under the canonical schedule (see the module documentation).
pub fn run(launch: &Launch, opts: &FastOptions) -> Result<FastOutcome, Unsupported> {
    execute(launch, opts, false)
}

/// [`run`], also recording the schedule it follows ([`FastOutcome::schedule`]): one run
/// per thread and interval, which a launch of many threads and intervals pays for in
/// memory, so only `ksim run --json` asks for it.
pub fn run_with_schedule(launch: &Launch, opts: &FastOptions) -> Result<FastOutcome, Unsupported> {
    execute(launch, opts, true)
}

fn execute(launch: &Launch, opts: &FastOptions, record: bool) -> Result<FastOutcome, Unsupported> {
    if let Some(warps) = crate::warp::Warps::new(launch) {
        warp::supported(&warps)?;
        let prog = compile::compile(launch, true)?;
        let engine = engine::Engine::new(launch, &prog, opts, true)?.recording(record);
        return Ok(engine.run_warps(warps));
    }
    let prog = compile::compile(launch, false)?;
    let mut builder = rayon::ThreadPoolBuilder::new();
    if opts.jobs > 0 {
        builder = builder.num_threads(opts.jobs);
    }
    let pool = builder
        .build()
        .map_err(|e| Unsupported::new(format!("cannot start worker threads: {e}")))?;
    pool.install(|| {
        let engine = engine::Engine::new(launch, &prog, opts, false)?.recording(record);
        match engine.run() {
            Ok(out) => Ok(out),
            Err(engine::Restart) => {
                let engine = engine::Engine::new(launch, &prog, opts, true)?.recording(record);
                Ok(engine
                    .run()
                    .unwrap_or_else(|_| unreachable!("a full exact run never restarts")))
            }
        }
    })
}

/// The compiled bytecode of a launch, one instruction per line (for debugging and tests).
#[doc(hidden)]
pub fn disassemble(launch: &Launch) -> Result<String, Unsupported> {
    let prog = compile::compile(launch, launch.warp_size.is_some())?;
    let mut out = format!(
        "nregs {} nvars {} consts {:?}\n",
        prog.nregs, prog.nvars, prog.consts
    );
    for (i, inst) in prog.code.iter().enumerate() {
        out.push_str(&format!("{i:4}  {inst:?}\n"));
    }
    Ok(out)
}
