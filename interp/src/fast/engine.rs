//! The driver: runs the canonical schedule group by group, interval by interval, choosing
//! for each interval between plain sequential, speculative parallel and exact sequential
//! execution (see the module documentation of [`super`]).

use super::batch::{exec_batch, Batch, W};
use super::compile::{Inst, Program};
use super::exec::{exec, ArrView, Exit, FaultLog, Plain, Who};
use super::repr::{decode, encode};
use super::shadow::{validate, Exact, ReadRec, Spec, Tracker, UndoRec};
use super::{FastOptions, FastOutcome, RaceCount, Unsupported};
use crate::exec::Schedule;
use crate::fault::{Fault, FaultKind, Faults, ThreadId};
use crate::launch::{Launch, Memory};
use crate::race::Epochs;
use crate::reference::{divergence, BarrierInfo, DivergenceSide};
use lang::ast::Space;
use lang::core::Fence;
use rayon::prelude::*;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering::Relaxed};

/// Saved program counter of a terminated thread.
pub(super) const DONE: u64 = u64::MAX;

/// Without race tracking, groups with fewer threads than this run plain sequentially
/// (lock-step speculation needs conflict detection, which pays off from a few batches on).
const LOCKSTEP_MIN_THREADS: usize = 4 * W;

/// Intervals with fewer active threads than this run as one chunk, without rayon.
const PAR_MIN_THREADS: usize = 4096;

/// [`PAR_MIN_THREADS`], or the value of the environment variable `KSIM_FAST_PAR_MIN` (a
/// testing knob: the differential tests use it to exercise parallel chunks on small groups).
fn par_min_threads() -> usize {
    static V: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *V.get_or_init(|| {
        std::env::var("KSIM_FAST_PAR_MIN")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(PAR_MIN_THREADS)
    })
}

/// Copies a few words (a thread's variables) without a call to `memcpy`.
#[inline(always)]
fn copy(dst: &mut [u64], src: &[u64]) {
    match (dst, src) {
        ([], _) => {}
        ([d0], [s0, ..]) => *d0 = *s0,
        ([d0, d1], [s0, s1, ..]) => {
            *d0 = *s0;
            *d1 = *s1;
        }
        ([d0, d1, d2], [s0, s1, s2, ..]) => {
            *d0 = *s0;
            *d1 = *s1;
            *d2 = *s2;
        }
        ([d0, d1, d2, d3], [s0, s1, s2, s3, ..]) => {
            *d0 = *s0;
            *d1 = *s1;
            *d2 = *s2;
            *d3 = *s3;
        }
        (d, s) => d.copy_from_slice(&s[..d.len()]),
    }
}

/// Why a run of the launch must be started over in full exact mode.
pub(crate) struct Restart;

/// The result of one interval.
enum Interval {
    /// The barrier fires (`at_barrier > 0`) or the group is done.
    End { steps: u64, at_barrier: usize },
    /// The execution stopped: a fault or the step bound.
    Stop(Fault, u64),
    /// A cross-group conflict: start over in full exact mode.
    Restart,
}

#[derive(Default)]
struct Scratch {
    batch: Option<Batch>,
    regs: Vec<u64>,
    /// Per array.
    reads: Vec<Vec<ReadRec>>,
    undo: Vec<UndoRec>,
    steps: u64,
    at_barrier: usize,
    /// `(tid, steps)` of each thread that ran, in `tid` order, when the schedule is
    /// recorded.
    runs: Vec<(u32, u64)>,
}

/// Appends `n` steps of thread (or warp) `t` to a recorded schedule, if there is one.
pub(super) fn push_run(schedule: &mut Option<Schedule>, t: usize, n: u64) {
    let Some(s) = schedule else { return };
    if n == 0 {
        return;
    }
    match s.runs.last_mut() {
        Some((last, k)) if *last == t => *k += n,
        _ => s.runs.push((t, n)),
    }
}

pub(crate) struct Engine<'a> {
    pub(super) launch: &'a Launch,
    pub(super) prog: &'a Program,
    pub(super) opts: &'a FastOptions,
    full_exact: bool,
    /// Memory: per array, all instances back to back.
    pub(super) mem: Vec<Vec<AtomicU64>>,
    /// Writer shadow, same layout (empty when unused).
    wsh: Vec<Vec<AtomicU64>>,
    /// Group marks (writer group, reader groups) for `global` arrays shared by several
    /// groups when races are tracked (empty when unused).
    gw: Vec<Vec<AtomicU32>>,
    gr: Vec<Vec<AtomicU32>>,
    /// `--uninit check`: per array that starts undefined, one bit per element (all
    /// instances), set once defined ([`crate::undef`]); empty otherwise.
    pub(super) def: Vec<Vec<AtomicU64>>,
    pub(super) tracker: Option<Tracker>,
    stamp: u32,
    pub(super) steps: u64,
    pub(super) intervals: u64,
    pub(super) stride: usize,
    threads_in_pool: usize,
    /// Per-chunk scratch, reused across intervals.
    scratch: Vec<Scratch>,
    /// Every fault so far ([`crate::exec::Outcome::faults`]).
    pub(super) faults: Faults,
    /// Per array, what an out-of-bounds read gives ([`ArrView::zero`]).
    zeros: Vec<u64>,
    /// The schedule followed so far, when it is recorded ([`super::run_with_schedule`]).
    pub(super) schedule: Option<Schedule>,
}

/// The fault `kind` of thread `who` at `site`.
pub(super) fn located(prog: &Program, kind: FaultKind, site: u32, who: ThreadId) -> Fault {
    Fault {
        kind,
        thread: Some(who),
        span: Some(prog.spans[prog.sites[site as usize].stmt as usize].clone()),
    }
}

impl<'a> Engine<'a> {
    pub fn new(
        launch: &'a Launch,
        prog: &'a Program,
        opts: &'a FastOptions,
        full_exact: bool,
    ) -> Result<Engine<'a>, Unsupported> {
        let k = &launch.kernel;
        let narr = k.arrays.len();
        let mut mem = Vec::with_capacity(narr);
        for a in 0..narr {
            let r = prog.arr_repr[a];
            let init = launch.initial[a]
                .iter()
                .map(|v| encode(v, r))
                .collect::<Result<Vec<u64>, _>>()?;
            let inst = launch.instances(a);
            let mut v = Vec::with_capacity(init.len() * inst);
            for _ in 0..inst {
                v.extend(init.iter().map(|&x| AtomicU64::new(x)));
            }
            mem.push(v);
        }
        let threads_in_pool = rayon::current_num_threads();
        let unfenced = prog.unfenced.local || prog.unfenced.global;
        let speculate = !full_exact
            && !launch.checks_uninit()
            && (opts.track_races || launch.local_size >= LOCKSTEP_MIN_THREADS)
            && !(opts.track_races && unfenced);
        let def = (0..narr)
            .map(|a| {
                if launch.starts_defined(a) {
                    Vec::new()
                } else {
                    (0..mem[a].len().div_ceil(64))
                        .map(|_| AtomicU64::new(0))
                        .collect()
                }
            })
            .collect();
        let wsh = (0..narr)
            .map(|a| {
                if speculate && prog.written[a] {
                    (0..mem[a].len()).map(|_| AtomicU64::new(0)).collect()
                } else {
                    Vec::new()
                }
            })
            .collect();
        let marks = |a: usize| {
            opts.track_races
                && !full_exact
                && launch.groups > 1
                && k.arrays[a].space == Space::Global
                && prog.written[a]
        };
        let gw = (0..narr)
            .map(|a| {
                if marks(a) {
                    (0..mem[a].len()).map(|_| AtomicU32::new(0)).collect()
                } else {
                    Vec::new()
                }
            })
            .collect();
        let gr = (0..narr)
            .map(|a| {
                if marks(a) {
                    (0..mem[a].len()).map(|_| AtomicU32::new(0)).collect()
                } else {
                    Vec::new()
                }
            })
            .collect();
        let zeros = (0..narr)
            .map(|a| super::compile::default_slot(k.arrays[a].elem, launch.monoid))
            .collect::<Result<Vec<u64>, _>>()?;
        Ok(Engine {
            launch,
            prog,
            opts,
            full_exact,
            mem,
            wsh,
            gw,
            gr,
            def,
            tracker: None,
            stamp: 0,
            steps: 0,
            intervals: 0,
            stride: 1 + prog.nvars,
            threads_in_pool,
            scratch: Vec::new(),
            faults: Faults::default(),
            zeros,
            schedule: None,
        })
    }

    /// Records the schedule (`on`) as the run goes.
    pub fn recording(mut self, on: bool) -> Self {
        self.schedule = on.then(Schedule::default);
        self
    }

    pub(super) fn tracker(&mut self) -> &mut Tracker {
        if self.tracker.is_none() {
            let k = &self.launch.kernel;
            let lens: Vec<usize> = self.mem.iter().map(|m| m.len()).collect();
            let shape = (0..k.arrays.len())
                .map(|a| {
                    let dims = &self.launch.dims[a];
                    (
                        self.launch.len(a).max(1),
                        if dims.len() == 2 { dims[1] } else { 0 },
                        k.arrays[a].space == Space::Local,
                    )
                })
                .collect();
            let unfenced = self.prog.unfenced;
            let history = (0..k.arrays.len())
                .map(|a| {
                    let space = k.arrays[a].space;
                    (self.full_exact && self.launch.groups > 1 && space == Space::Global)
                        || unfenced.orders(space)
                })
                .collect();
            let stored_reprs = (self.launch.race_policy == crate::policy::RacePolicy::SameValue)
                .then(|| self.prog.arr_repr.clone());
            self.tracker = Some(Tracker::new(
                &lens,
                shape,
                history,
                self.prog.spans.clone(),
                stored_reprs,
            ));
        }
        self.tracker.as_mut().unwrap()
    }

    pub(super) fn views(&self, group: usize) -> Vec<ArrView<'_>> {
        let k = &self.launch.kernel;
        (0..k.arrays.len())
            .map(|a| {
                let len = self.launch.len(a);
                let base = self.launch.instance_of(a, group) * len;
                let cross = if self.gw[a].is_empty() {
                    None
                } else {
                    Some((&self.gw[a][base..base + len], &self.gr[a][base..base + len]))
                };
                ArrView {
                    mem: &self.mem[a][base..base + len],
                    wsh: if self.wsh[a].is_empty() {
                        &[]
                    } else {
                        &self.wsh[a][base..base + len]
                    },
                    abs_base: base,
                    dims: &self.launch.dims[a],
                    name: &k.arrays[a].name,
                    is_const: !self.prog.written[a],
                    local: k.arrays[a].space == Space::Local,
                    cross,
                    def: &self.def[a],
                    zero: self.zeros[a],
                }
            })
            .collect()
    }

    pub(super) fn new_regs(&self, group: usize) -> Vec<u64> {
        let mut regs = vec![0u64; self.prog.nregs];
        for &(r, v) in &self.prog.consts {
            regs[r as usize] = v;
        }
        if let Some(r) = self.prog.group_reg {
            regs[r as usize] = group as i32 as u32 as u64;
        }
        for &(r, b) in &self.prog.group_builtins {
            regs[r as usize] = self.builtin(b, group, 0);
        }
        regs
    }

    /// A builtin's register value for thread `tid` of `group`.
    fn builtin(&self, b: lang::core::Builtin, group: usize, tid: usize) -> u64 {
        self.launch.builtin(b, group, tid).as_i64().unwrap_or(0) as i32 as u32 as u64
    }

    pub(super) fn set_thread(&self, regs: &mut [u64], group: usize, tid: usize) {
        if let Some(r) = self.prog.tid_reg {
            regs[r as usize] = tid as i32 as u32 as u64;
        }
        if let Some(r) = self.prog.gid_reg {
            regs[r as usize] = (group * self.launch.local_size + tid) as i32 as u32 as u64;
        }
        for &(r, b) in &self.prog.thread_builtins {
            regs[r as usize] = self.builtin(b, group, tid);
        }
    }

    /// Runs the launch. `Err(Restart)`: a cross-group conflict was found; run again with
    /// `full_exact`.
    pub fn run(mut self) -> Result<FastOutcome, Restart> {
        let l = self.launch.local_size;
        let s = self.stride;
        let mut cur = vec![0u64; l * s];
        let mut next = vec![0u64; l * s];
        let mut fault = None;
        let mut divergences = Vec::new();
        'groups: for g in 0..self.launch.groups {
            for t in 0..l {
                cur[t * s] = 0;
                cur[t * s + 1..t * s + s].copy_from_slice(&self.prog.var_init);
            }
            let mut epoch = 0u64;
            let mut epochs = Epochs::default();
            // After a speculation failed (a conflict), the next `skip` intervals run
            // sequentially; `backoff` doubles with every consecutive failure.
            let (mut skip, mut backoff) = (0u32, 1u32);
            loop {
                self.intervals += 1;
                let remaining = self.launch.max_steps.saturating_sub(self.steps);
                let track = self.opts.track_races;
                // Races across a barrier that leaves a space unordered need the exact
                // tracker's history: no speculation then.
                let unfenced = self.prog.unfenced;
                // Uninitialised reads are checked in canonical order only.
                let speculate = !self.full_exact
                    && !self.launch.checks_uninit()
                    && (track || l >= LOCKSTEP_MIN_THREADS)
                    && !(track && (unfenced.local || unfenced.global));
                let mut res = None;
                if speculate && skip > 0 {
                    skip -= 1;
                } else if speculate {
                    match self.spec_interval(g, remaining, &cur, &mut next) {
                        Some(r) => {
                            if matches!(r, Interval::End { .. }) {
                                std::mem::swap(&mut cur, &mut next);
                                for sc in &self.scratch {
                                    for &(t, n) in &sc.runs {
                                        push_run(&mut self.schedule, g * l + t as usize, n);
                                    }
                                }
                            }
                            backoff = 1;
                            res = Some(r);
                        }
                        None => {
                            skip = backoff;
                            backoff = (backoff * 2).min(1024);
                        }
                    }
                }
                let res = match res {
                    Some(r) => r,
                    None => self.seq_interval(g, epochs, remaining, &mut cur),
                };
                match res {
                    Interval::End { steps, at_barrier } => {
                        self.steps += steps;
                        if at_barrier == 0 {
                            break;
                        }
                        epoch += 1;
                        epochs = self.fire_barrier(&cur, g, epoch, epochs, &mut divergences);
                    }
                    Interval::Stop(f, steps) => {
                        self.steps = steps;
                        self.faults.record(f.clone());
                        fault = Some(f);
                        break 'groups;
                    }
                    Interval::Restart => return Err(Restart),
                }
            }
        }
        let memory = self.memory();
        let races = match self.tracker.take() {
            Some(t) => t
                .races
                .into_iter()
                .map(|(race, count)| RaceCount { race, count })
                .collect(),
            None => Vec::new(),
        };
        Ok(FastOutcome {
            memory,
            races,
            fault: fault.or_else(|| self.faults.first().cloned()),
            faults: self.faults,
            divergences,
            intervals: self.intervals,
            steps: self.steps,
            simt: None,
            schedule: self.schedule,
        })
    }

    pub(super) fn memory(&self) -> Memory {
        Memory {
            arrays: (0..self.mem.len())
                .map(|a| {
                    let len = self.launch.len(a);
                    let r = self.prog.arr_repr[a];
                    (0..self.launch.instances(a))
                        .map(|i| {
                            self.mem[a][i * len..(i + 1) * len]
                                .iter()
                                .map(|x| decode(x.load(Relaxed), r))
                                .collect()
                        })
                        .collect()
                })
                .collect(),
        }
    }

    /// The verdict for a fault of thread `tid` of `group` at site `site`, `before` steps
    /// into the interval: the fault, or the step bound if the budget ran out first.
    fn fault(
        &self,
        group: usize,
        tid: usize,
        kind: FaultKind,
        site: u32,
        before: u64,
        remaining: u64,
    ) -> Interval {
        if before < remaining {
            let site = &self.prog.sites[site as usize];
            return Interval::Stop(
                Fault {
                    kind,
                    thread: Some(ThreadId { group, local: tid }),
                    span: Some(self.prog.spans[site.stmt as usize].clone()),
                },
                self.steps + before,
            );
        }
        self.step_bound()
    }

    fn step_bound(&self) -> Interval {
        let m = self.launch.max_steps;
        Interval::Stop(
            Fault {
                kind: FaultKind::StepBound { steps: m },
                thread: None,
                span: None,
            },
            m,
        )
    }

    /// Runs all threads of the interval one after another, in place, in canonical order:
    /// exactly the canonical schedule. Tracks races exactly when asked to.
    fn seq_interval(
        &mut self,
        g: usize,
        epochs: Epochs,
        remaining: u64,
        cur: &mut [u64],
    ) -> Interval {
        let track = self.opts.track_races;
        if track {
            self.tracker();
        }
        let mut tracker = self.tracker.take();
        let mut faults = std::mem::take(&mut self.faults);
        let mut schedule = self.schedule.take();
        let mut log = self.launch.continue_after_faults.then(FaultLog::new);
        let res = {
            let views = self.views(g);
            let mut regs = self.new_regs(g);
            let s = self.stride;
            let mut cum = 0u64;
            let mut at_barrier = 0;
            let mut out = None;
            for t in 0..self.launch.local_size {
                let st = &mut cur[t * s..t * s + s];
                if st[0] == DONE {
                    continue;
                }
                copy(&mut regs[..s - 1], &st[1..]);
                self.set_thread(&mut regs, g, t);
                let mut pc = st[0] as u32;
                let mut steps = 0u64;
                let budget = remaining - cum;
                let exit = if track {
                    let mut pol = Exact {
                        who: Who::thread(g as u32, t as u32),
                        epochs,
                        step_base: self.steps + cum,
                        max_steps: self.launch.max_steps,
                        tracker: tracker.as_mut(),
                        use_marks: !self.full_exact,
                        xconflict: false,
                    };
                    let e = exec(
                        self.prog,
                        &views,
                        &mut regs,
                        &mut pc,
                        &mut steps,
                        budget,
                        &mut pol,
                        log.as_mut(),
                    );
                    if pol.xconflict {
                        out = Some(Interval::Restart);
                        break;
                    }
                    e
                } else {
                    exec(
                        self.prog,
                        &views,
                        &mut regs,
                        &mut pc,
                        &mut steps,
                        budget,
                        &mut Plain,
                        log.as_mut(),
                    )
                };
                if let Some(log) = log.as_mut() {
                    if let Exit::Fault { site, .. } = exit {
                        // The step that ends the execution is undone, with the faults it
                        // went on past (as the reference semantics undoes it).
                        let at =
                            steps.wrapping_add(self.prog.sites[site as usize].pre as i64 as u64);
                        log.retain(|f| f.2 != at);
                    }
                    let who = ThreadId { group: g, local: t };
                    for (kind, site, _) in log.drain(..) {
                        faults.record(located(self.prog, kind, site, who));
                    }
                }
                let thread = g * self.launch.local_size + t;
                match exit {
                    Exit::Barrier => {
                        st[0] = pc as u64;
                        copy(&mut st[1..], &regs[..s - 1]);
                        at_barrier += 1;
                    }
                    Exit::Done => st[0] = DONE,
                    Exit::Fault { kind, site } => {
                        let before = (cum + steps)
                            .wrapping_add(self.prog.sites[site as usize].pre as i64 as u64);
                        if let Some(t) = tracker.as_mut() {
                            t.fault_at(self.steps + before);
                        }
                        let stop = self.fault(g, t, kind, site, before, remaining);
                        if let Interval::Stop(_, end) = stop {
                            // The steps before the one that stopped the execution.
                            push_run(&mut schedule, thread, end.saturating_sub(self.steps + cum));
                        }
                        out = Some(stop);
                        break;
                    }
                    Exit::Budget => {
                        push_run(&mut schedule, thread, remaining - cum);
                        out = Some(self.step_bound());
                        break;
                    }
                    Exit::Stop => unreachable!("only cross-group conflicts stop a sequential run"),
                    Exit::Sync => unreachable!("only warp programs have statement marks"),
                }
                push_run(&mut schedule, thread, steps);
                cum += steps;
            }
            out.unwrap_or(Interval::End {
                steps: cum,
                at_barrier,
            })
        };
        if let Some(t) = tracker.as_mut() {
            t.end_interval();
        }
        self.tracker = tracker;
        self.faults = faults;
        self.schedule = schedule;
        res
    }

    /// Runs the interval speculatively in parallel chunks; `None` if a conflict was found
    /// (memory is restored to the interval start and `cur` is untouched, so the caller runs
    /// the interval again sequentially). On success `next` holds the new thread states.
    fn spec_interval(
        &mut self,
        g: usize,
        remaining: u64,
        cur: &[u64],
        next: &mut [u64],
    ) -> Option<Interval> {
        if self.stamp == u32::MAX {
            for w in self.wsh.iter().flatten() {
                w.store(0, Relaxed);
            }
            self.stamp = 0;
        }
        self.stamp += 1;
        let stamp = self.stamp;
        let l = self.launch.local_size;
        let s = self.stride;
        let nchunks = if l < par_min_threads() || self.threads_in_pool <= 1 {
            1
        } else {
            (self.threads_in_pool * 8).min(l / W).max(1)
        };
        let csize = l.div_ceil(nchunks).next_multiple_of(W);
        let nchunks = l.div_ceil(csize);
        let conflict = AtomicBool::new(false);
        let xconflict = AtomicBool::new(false);
        let mut scratch = std::mem::take(&mut self.scratch);
        let views = self.views(g);
        scratch.resize_with(nchunks, Scratch::default);
        for sc in &mut scratch {
            sc.regs = self.new_regs(g);
            sc.reads.resize_with(self.mem.len(), Vec::new);
            for r in &mut sc.reads {
                r.clear();
            }
            sc.undo.clear();
            sc.runs.clear();
            sc.steps = 0;
            sc.at_barrier = 0;
        }
        let record = self.schedule.is_some();
        let run_batches = |c: usize, sc: &mut Scratch, cur: &[u64], next: &mut [u64]| {
            let first = c * csize;
            let mut cum = 0u64;
            let mut b = sc
                .batch
                .take()
                .unwrap_or_else(|| Batch::new(self.prog.nregs));
            for &(r, v) in &self.prog.consts {
                b.regs[r as usize * W..(r as usize + 1) * W].fill(v);
            }
            if let Some(r) = self.prog.group_reg {
                b.regs[r as usize * W..(r as usize + 1) * W].fill(g as i32 as u32 as u64);
            }
            for &(r, bi) in &self.prog.group_builtins {
                b.regs[r as usize * W..(r as usize + 1) * W].fill(self.builtin(bi, g, 0));
            }
            let nv = s - 1;
            for (k, (cu, nx)) in cur.chunks(s * W).zip(next.chunks_mut(s * W)).enumerate() {
                if conflict.load(Relaxed) || xconflict.load(Relaxed) {
                    break;
                }
                let t0 = (first + k * W) as u32;
                let n = cu.len() / s;
                let mut mask = 0u64;
                for l in 0..n {
                    let st = &cu[l * s..l * s + s];
                    if st[0] == DONE {
                        nx[l * s] = DONE;
                        continue;
                    }
                    mask |= 1 << l;
                    b.pc[l] = st[0] as u32;
                    b.steps[l] = 0;
                    for v in 0..nv {
                        b.regs[v * W + l] = st[1 + v];
                    }
                }
                if mask == 0 {
                    continue;
                }
                if let Some(r) = self.prog.tid_reg {
                    for l in 0..n {
                        b.regs[r as usize * W + l] = (t0 + l as u32) as i32 as u32 as u64;
                    }
                }
                if let Some(r) = self.prog.gid_reg {
                    let base = (g * self.launch.local_size) as u32 + t0;
                    for l in 0..n {
                        b.regs[r as usize * W + l] = (base + l as u32) as i32 as u32 as u64;
                    }
                }
                for &(r, bi) in &self.prog.thread_builtins {
                    for l in 0..n {
                        b.regs[r as usize * W + l] = self.builtin(bi, g, t0 as usize + l);
                    }
                }
                let mut pol = Spec {
                    who: Who::thread(g as u32, t0),
                    me: 0,
                    stamp,
                    reads: &mut sc.reads,
                    undo: &mut sc.undo,
                    conflict: &conflict,
                    xconflict: &xconflict,
                };
                let budget = remaining.saturating_sub(cum);
                match exec_batch(self.prog, &views, &mut b, mask, t0, budget, &mut pol) {
                    Ok(at_barrier) => {
                        let mut m = mask;
                        while m != 0 {
                            let l = m.trailing_zeros() as usize;
                            m &= m - 1;
                            cum += b.steps[l];
                            if record {
                                sc.runs.push((t0 + l as u32, b.steps[l]));
                            }
                            let st = &mut nx[l * s..l * s + s];
                            if at_barrier >> l & 1 != 0 {
                                st[0] = b.pc[l] as u64;
                                for v in 0..nv {
                                    st[1 + v] = b.regs[v * W + l];
                                }
                                sc.at_barrier += 1;
                            } else {
                                st[0] = DONE;
                            }
                        }
                    }
                    Err(()) => {
                        // A fault, a budget overrun or a conflict: decide sequentially.
                        conflict.store(true, Relaxed);
                        break;
                    }
                }
            }
            sc.batch = Some(b);
            sc.steps = cum;
        };
        if nchunks == 1 {
            run_batches(0, &mut scratch[0], cur, next);
        } else {
            let per = csize * s;
            scratch
                .par_iter_mut()
                .zip(cur.par_chunks(per))
                .zip(next.par_chunks_mut(per))
                .enumerate()
                .for_each(|(c, ((sc, cu), nx))| run_batches(c, sc, cu, nx));
        }
        let res = self.settle(remaining, stamp, &scratch, &conflict, &xconflict);
        self.scratch = scratch;
        res
    }

    /// K-BARRIER for group `g` (see [`Engine::barrier`]), its `epoch`-th: records its
    /// divergence as the reference semantics does (the first firing of each distinct
    /// divergence: a barrier in a loop may diverge at every iteration) and returns the
    /// group's epochs after it.
    pub(super) fn fire_barrier(
        &self,
        cur: &[u64],
        g: usize,
        epoch: u64,
        epochs: Epochs,
        divergences: &mut Vec<BarrierInfo>,
    ) -> Epochs {
        let (fence, d) = self.barrier(cur, g);
        let d = d.filter(|(d, _)| {
            !divergences
                .iter()
                .any(|b: &BarrierInfo| b.divergence.as_ref() == Some(d))
        });
        if let Some((d, sides)) = d {
            divergences.push(BarrierInfo {
                group: g,
                epoch,
                fence,
                fences: Vec::new(),
                divergence: Some(d),
                sides,
            });
        }
        epochs.after(fence)
    }

    /// K-BARRIER at the end of an interval of group `g` whose saved thread states `cur`
    /// hold `DONE` for a terminated thread and, for a waiting one, the program counter just
    /// past its `barrier` instruction: the barrier's fence (the union of the fences waited
    /// at) and its divergence, judged and worded as by the reference semantics
    /// ([`crate::reference::divergence`]).
    pub(super) fn barrier(
        &self,
        cur: &[u64],
        g: usize,
    ) -> (Fence, Option<(String, Vec<DivergenceSide>)>) {
        let fence_at = |pc: u64| {
            let Inst::Barrier { fence, stmt, .. } = self.prog.code[pc as usize - 1] else {
                unreachable!("a waiting thread stands after a barrier instruction")
            };
            (fence, stmt)
        };
        // The usual case first, without building the lists: every thread waits at one
        // barrier instruction (so at one statement): no divergence.
        let pc = cur[0];
        if pc != DONE && cur.chunks(self.stride).all(|st| st[0] == pc) {
            return (fence_at(pc).0, None);
        }
        let mut fence = Fence {
            local: false,
            global: false,
        };
        let (mut waiting, mut terminated) = (Vec::new(), Vec::new());
        for (t, st) in cur.chunks(self.stride).enumerate() {
            if st[0] == DONE {
                terminated.push(t);
                continue;
            }
            let (f, stmt) = fence_at(st[0]);
            fence = fence.union(f);
            waiting.push((t, self.prog.spans[stmt as usize].clone()));
        }
        (fence, divergence(g, &waiting, &terminated))
    }

    /// After the chunks ran: validation, then commit (the verdict) or rollback (`None`).
    fn settle(
        &self,
        remaining: u64,
        stamp: u32,
        scratch: &[Scratch],
        conflict: &AtomicBool,
        xconflict: &AtomicBool,
    ) -> Option<Interval> {
        if xconflict.load(Relaxed) {
            return Some(Interval::Restart);
        }
        let mut ok = !conflict.load(Relaxed);
        if ok {
            let wsh = &self.wsh;
            ok = if scratch.len() == 1 {
                validate(&scratch[0].reads, wsh, stamp)
            } else {
                scratch.par_iter().all(|sc| validate(&sc.reads, wsh, stamp))
            };
        }
        let mut prefix = 0u64;
        let mut at_barrier = 0;
        for sc in scratch {
            prefix += sc.steps;
            at_barrier += sc.at_barrier;
        }
        // Over the step budget: the sequential run finds where the canonical schedule
        // reaches the bound (which thread, how many of its steps).
        if !ok || prefix > remaining {
            for sc in scratch {
                for u in &sc.undo {
                    self.mem[u.arr as usize][u.abs as usize].store(u.old, Relaxed);
                }
            }
            return None;
        }
        Some(Interval::End {
            steps: prefix,
            at_barrier,
        })
    }
}
