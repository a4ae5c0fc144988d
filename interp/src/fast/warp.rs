//! Lock-step warps on the compiled kernel (`--warp-size W`): the canonical execution of
//! [`crate::warp`]'s model, which is the specification this file follows point by point.
//!
//! The kernel is compiled with an [`Inst::Sync`] at the start of every statement, carrying
//! its [`ProgramOrder`](crate::warp::ProgramOrder) number, so a lane's state between
//! instructions is the program counter of its next statement's mark (or "waiting after a
//! barrier", or "terminated"). One warp instruction:
//!
//! 1. the active mask: the runnable lanes whose mark has the lowest program-order number;
//! 2. each active lane, in lane order, runs its statement alone ([`exec`] from just past
//!    its mark to the next mark, barrier or end) with the [`Lanes`] policy: loads read the
//!    memory as it was before the instruction, because stores and atomics are only
//!    recorded; every access goes to the exact race tracker with the instruction's
//!    position as its step and the lane's *warp* as the unit that never races with itself;
//! 3. the recorded stores are applied in lane order, then the atomics one after the other
//!    in lane order (each seeing the one before), and each atomic's old value is put in its
//!    lane's result register;
//! 4. a write to an element that a lower lane wrote in the same instruction is a
//!    write-write race ([`Tracker::same_instruction`]), found when the write is recorded.
//!
//! Warps run in the canonical order (the lowest enabled warp: group by group, and in a
//! group each warp until all its lanes wait or terminated), sequentially on one worker.
//! A step is a warp instruction: the step bound, race steps and fault steps count them.
//! Warps have at most 64 lanes (one `u64` mask; GPUs use 32 or 64); wider warps are
//! [`Unsupported`] (the reference semantics takes them).

use super::compile::{Inst, Program, Reg, Site};
use super::engine::{Engine, DONE};
use super::exec::{exec, ArrView, Exit, FaultLog, Policy, Rmw, Who};
use super::shadow::Tracker;
use super::{FastOutcome, RaceCount, Unsupported};
use crate::fault::{Fault, Faults, ThreadId};
use crate::race::{AccessKind, Epochs};
use crate::warp::{SimtCost, Warps};
use std::sync::atomic::Ordering::Relaxed;

/// The widest warp the fast executor runs.
pub(crate) const MAX_WARP: usize = 64;

/// Checks that the fast executor can run warps of `warps.size` lanes.
pub(crate) fn supported(warps: &Warps) -> Result<(), Unsupported> {
    if warps.size == 0 || warps.size > MAX_WARP {
        return Err(Unsupported::new(format!(
            "warps of {} lanes (the fast executor runs 1 to {MAX_WARP})",
            warps.size
        )));
    }
    Ok(())
}

/// A store recorded during an instruction, applied after all lanes ran.
struct Write {
    arr: u32,
    abs: usize,
    value: u64,
}

/// An atomic recorded during an instruction, applied after the stores.
struct Atomic {
    arr: u32,
    abs: usize,
    op: Rmw,
    lane: usize,
    dest: Reg,
}

/// The memory policy of one lane in one warp instruction.
struct Lanes<'a> {
    who: Who,
    epochs: Epochs,
    /// The instruction's position in the execution.
    step: u64,
    tracker: Option<&'a mut Tracker>,
    writes: &'a mut Vec<Write>,
    atomics: &'a mut Vec<Atomic>,
    /// Per array (written arrays, when tracking): `(step + 1) << 13 | first lane << 7 |
    /// writers` for the last instruction that wrote the element.
    written_by: &'a mut [Vec<u64>],
    /// The result register of each atomic statement (by statement index).
    dest: &'a [Reg],
    /// The last conditional jump went the "condition holds" way.
    went: bool,
}

impl Lanes<'_> {
    fn record(&mut self, view: &ArrView, site: &Site, off: usize, kind: AccessKind, value: u64) {
        let Some(t) = self.tracker.as_deref_mut() else {
            return;
        };
        if view.is_const {
            return;
        }
        let epoch = if view.local {
            self.epochs.local
        } else {
            self.epochs.global
        };
        let abs = view.abs_base + off;
        let stored = (kind == AccessKind::Write && t.stored_reprs.is_some())
            .then(|| (value, view.mem[off].load(Relaxed) == value));
        t.access(
            site.arr, abs, site.stmt, kind, self.who, self.step, epoch, stored,
        );
        if kind != AccessKind::Write {
            return;
        }
        let stamp = &mut self.written_by[site.arr as usize][abs];
        let now = (self.step + 1) << 13;
        if *stamp >> 13 != self.step + 1 {
            *stamp = now | (self.who.lane as u64) << 7 | 1;
            return;
        }
        let (first_lane, writers) = ((*stamp >> 7 & 63) as u32, *stamp & 127);
        *stamp += 1;
        let first = Who {
            tid: self.who.tid - (self.who.lane - first_lane),
            lane: first_lane,
            ..self.who
        };
        let first_stored = stored.map(|_| {
            let w = self
                .writes
                .iter()
                .find(|w| w.arr == site.arr && w.abs == abs)
                .expect("the first writer's store is recorded");
            (w.value, view.mem[off].load(Relaxed) == w.value)
        });
        t.same_instruction(
            site.arr,
            abs,
            site.stmt,
            (first, self.who),
            writers,
            self.step,
            epoch,
            (first_stored, stored),
        );
    }
}

impl Policy for Lanes<'_> {
    #[inline(always)]
    fn load(&mut self, view: &ArrView, site: &Site, off: usize, _: u64) -> Result<u64, ()> {
        self.record(view, site, off, AccessKind::Read, 0);
        Ok(view.mem[off].load(Relaxed))
    }

    #[inline(always)]
    fn store(&mut self, view: &ArrView, site: &Site, off: usize, v: u64, _: u64) -> Result<(), ()> {
        self.record(view, site, off, AccessKind::Write, v);
        self.writes.push(Write {
            arr: site.arr,
            abs: view.abs_base + off,
            value: v,
        });
        Ok(())
    }

    fn rmw(&mut self, view: &ArrView, site: &Site, off: usize, _: u64, op: Rmw) -> Result<u64, ()> {
        // The value the atomic will find when applied: the instruction's last store to the
        // element, else memory, then the atomics of the lower lanes in lane order.
        let abs = view.abs_base + off;
        let here = |arr: u32, at: usize| arr == site.arr && at == abs;
        let stored = self.writes.iter().rev().find(|w| here(w.arr, w.abs));
        let old = self.atomics.iter().filter(|a| here(a.arr, a.abs)).fold(
            stored.map_or_else(|| view.mem[off].load(Relaxed), |w| w.value),
            |v, a| a.op.apply(v),
        );
        self.record(view, site, off, op.kind(old), 0);
        self.atomics.push(Atomic {
            arr: site.arr,
            abs,
            op,
            lane: self.who.lane as usize,
            dest: self.dest[site.stmt as usize],
        });
        // The old value is put in the result register once the atomics are applied.
        Ok(0)
    }

    #[inline(always)]
    fn branch(&mut self, go: bool) {
        self.went = go;
    }

    /// Lanes read the memory of before the instruction: a store defines its element when
    /// it is applied, after all lanes ran.
    #[inline(always)]
    fn define(&mut self, _: &ArrView, _: usize) {}
}

/// Where a lane stands between instructions.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Lane {
    /// At the mark of its next statement (the program counter).
    Next(u32),
    /// After a barrier (the program counter just past it).
    Waiting(u32),
    Done,
}

impl Engine<'_> {
    /// Runs the launch with lock-step warps (see the module documentation).
    pub(crate) fn run_warps(mut self, warps: Warps) -> FastOutcome {
        let l = self.launch.local_size;
        let s = self.stride;
        let prog = self.prog;
        let mut cur = vec![0u64; l * s];
        let mut fault = None;
        let mut divergences = Vec::new();
        let mut cost = SimtCost {
            warp_size: warps.size,
            ..SimtCost::default()
        };
        let track = self.opts.track_races;
        let mut written_by: Vec<Vec<u64>> = (0..self.mem.len())
            .map(|a| {
                if track && prog.written[a] {
                    vec![0; self.mem[a].len()]
                } else {
                    Vec::new()
                }
            })
            .collect();
        let mut dest = vec![Reg::MAX; prog.spans.len()];
        for inst in &prog.code {
            if let Inst::Atomic { d, site, .. } = *inst {
                dest[prog.sites[site as usize].stmt as usize] = d;
            }
        }
        let mut scratch = WarpScratch {
            regs: vec![0; warps.size * prog.nregs],
            lanes: vec![Lane::Done; warps.size],
            writes: Vec::new(),
            atomics: Vec::new(),
        };
        'groups: for g in 0..self.launch.groups {
            for t in 0..l {
                cur[t * s] = 0;
                cur[t * s + 1..t * s + s].copy_from_slice(&prog.var_init);
            }
            let mut epoch = 0u64;
            let mut epochs = Epochs::default();
            loop {
                self.intervals += 1;
                if track {
                    self.tracker();
                }
                let mut at_barrier = 0;
                for w in 0..warps.per_group {
                    let before = self.steps;
                    let ctx = WarpCtx {
                        group: g,
                        warp: w,
                        lanes: w * warps.size..((w + 1) * warps.size).min(l),
                        epochs,
                        epoch: epoch as usize,
                        dest: &dest,
                    };
                    let res = self.warp_interval(
                        &ctx,
                        &mut cur,
                        &mut scratch,
                        &mut written_by,
                        &mut cost,
                    );
                    let ran = self.steps - before;
                    super::engine::push_run(&mut self.schedule, warps.global(g, w), ran);
                    match res {
                        Ok(waiting) => at_barrier += waiting,
                        Err(f) => {
                            self.faults.record(f.clone());
                            fault = Some(f);
                            break 'groups;
                        }
                    }
                }
                if let Some(t) = self.tracker.as_mut() {
                    t.end_interval();
                }
                if at_barrier == 0 {
                    break;
                }
                epoch += 1;
                epochs = self.fire_barrier(&cur, g, epoch, epochs, &mut divergences);
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
        FastOutcome {
            memory,
            races,
            fault: fault.or_else(|| self.faults.first().cloned()),
            faults: self.faults,
            divergences,
            intervals: self.intervals,
            steps: self.steps,
            simt: Some(cost),
            schedule: self.schedule,
        }
    }

    /// Runs warp `ctx.warp` of group `ctx.group` until all its lanes wait at a barrier or
    /// terminated; returns the number waiting, or the fault (the step bound included) that
    /// stopped the execution. `cur`: the group's saved thread states, updated.
    fn warp_interval(
        &mut self,
        ctx: &WarpCtx,
        cur: &mut [u64],
        sc: &mut WarpScratch,
        written_by: &mut [Vec<u64>],
        cost: &mut SimtCost,
    ) -> Result<usize, Fault> {
        let mut tracker = self.tracker.take();
        let mut faults = std::mem::take(&mut self.faults);
        // Instructions so far in the execution (the engine's step counter).
        let mut count = self.steps;
        let res = self.warp_steps(
            ctx,
            cur,
            sc,
            written_by,
            cost,
            (&mut tracker, &mut faults),
            &mut count,
        );
        self.tracker = tracker;
        self.faults = faults;
        self.steps = count;
        res
    }

    /// [`Engine::warp_interval`] with the tracker, the faults and the step counter taken
    /// out of the engine (the lanes' views borrow it).
    #[allow(clippy::too_many_arguments)]
    fn warp_steps(
        &self,
        ctx: &WarpCtx,
        cur: &mut [u64],
        sc: &mut WarpScratch,
        written_by: &mut [Vec<u64>],
        cost: &mut SimtCost,
        (tracker, faults): (&mut Option<Tracker>, &mut Faults),
        count: &mut u64,
    ) -> Result<usize, Fault> {
        let prog = self.prog;
        let mut log = self.launch.continue_after_faults.then(FaultLog::new);
        let s = self.stride;
        let nregs = prog.nregs;
        {
            let views = self.views(ctx.group);
            let template = self.new_regs(ctx.group);
            // Load the lanes and bring each to its next statement (no statement runs).
            for (lane, t) in ctx.lanes.clone().enumerate() {
                let st = &cur[t * s..t * s + s];
                if st[0] == DONE {
                    sc.lanes[lane] = Lane::Done;
                    continue;
                }
                let regs = &mut sc.regs[lane * nregs..(lane + 1) * nregs];
                regs.copy_from_slice(&template);
                regs[..s - 1].copy_from_slice(&st[1..]);
                self.set_thread(regs, ctx.group, t);
                sc.lanes[lane] = settle(prog, &views, regs, st[0] as u32);
            }
            let n = ctx.lanes.len();
            loop {
                // The active mask: runnable lanes at the first statement in program order.
                let (mut first, mut active, mut branch) = (u32::MAX, 0u64, false);
                for (lane, st) in sc.lanes[..n].iter().enumerate() {
                    if let Lane::Next(pc) = *st {
                        let Inst::Sync { order, branch: b } = prog.code[pc as usize] else {
                            unreachable!("a lane stands at a statement mark")
                        };
                        if order < first {
                            (first, active, branch) = (order, 0, b);
                        }
                        if order == first {
                            active |= 1 << lane;
                        }
                    }
                }
                if active == 0 {
                    break;
                }
                if *count >= self.launch.max_steps {
                    return Err(Fault::step_bound(self.launch.max_steps));
                }
                let step = *count;
                sc.writes.clear();
                sc.atomics.clear();
                let mut went = 0u64;
                // The faults the lanes went on past: counted once the instruction is
                // done (a lane that stops the execution undoes the whole instruction).
                let mut pending = Vec::new();
                let mut m = active;
                while m != 0 {
                    let lane = m.trailing_zeros() as usize;
                    m &= m - 1;
                    let Lane::Next(pc) = sc.lanes[lane] else {
                        unreachable!("active lanes are runnable")
                    };
                    let tid = ctx.lanes.start + lane;
                    let mut pol = Lanes {
                        who: Who {
                            group: ctx.group as u32,
                            tid: tid as u32,
                            warp: ctx.warp as u32,
                            lane: lane as u32,
                        },
                        epochs: ctx.epochs,
                        step,
                        tracker: tracker.as_mut(),
                        writes: &mut sc.writes,
                        atomics: &mut sc.atomics,
                        written_by,
                        dest: ctx.dest,
                        went: false,
                    };
                    let regs = &mut sc.regs[lane * nregs..(lane + 1) * nregs];
                    let (mut pc, mut steps) = (pc + 1, 0u64);
                    let exit = exec(
                        prog,
                        &views,
                        regs,
                        &mut pc,
                        &mut steps,
                        u64::MAX,
                        &mut pol,
                        log.as_mut(),
                    );
                    if let Some(log) = log.as_mut() {
                        let who = ThreadId {
                            group: ctx.group,
                            local: tid,
                        };
                        pending.extend(log.drain(..).map(|(kind, site, _)| (who, kind, site)));
                    }
                    went |= (pol.went as u64) << lane;
                    sc.lanes[lane] = match exit {
                        Exit::Sync => Lane::Next(pc),
                        Exit::Barrier => Lane::Waiting(pc),
                        Exit::Done => Lane::Done,
                        Exit::Fault { kind, site } => {
                            if let Some(t) = tracker.as_mut() {
                                t.fault_at(step);
                            }
                            return Err(Fault {
                                kind,
                                thread: Some(ThreadId {
                                    group: ctx.group,
                                    local: tid,
                                }),
                                span: Some(
                                    prog.spans[prog.sites[site as usize].stmt as usize].clone(),
                                ),
                            });
                        }
                        Exit::Budget | Exit::Stop => {
                            unreachable!("no budget and no stopping policy in a warp")
                        }
                    };
                }
                for (who, kind, site) in pending {
                    faults.record(super::engine::located(prog, kind, site, who));
                }
                for w in &sc.writes {
                    self.mem[w.arr as usize][w.abs].store(w.value, Relaxed);
                    if let Some(def) = self.def.get(w.arr as usize).filter(|d| !d.is_empty()) {
                        def[w.abs / 64].fetch_or(1 << (w.abs % 64), Relaxed);
                    }
                }
                for a in &sc.atomics {
                    let cell = &self.mem[a.arr as usize][a.abs];
                    let old = cell.load(Relaxed);
                    cell.store(a.op.apply(old), Relaxed);
                    sc.regs[a.lane * nregs + a.dest as usize] = old;
                }
                let divergent = branch && went & active != 0 && went & active != active;
                cost.instruction(ctx.epoch, active.count_ones() as usize, divergent);
                *count += 1;
            }
            // Save the lanes.
            let mut waiting = 0;
            for (lane, t) in ctx.lanes.clone().enumerate() {
                let st = &mut cur[t * s..t * s + s];
                match sc.lanes[lane] {
                    Lane::Waiting(pc) => {
                        st[0] = pc as u64;
                        st[1..].copy_from_slice(&sc.regs[lane * nregs..lane * nregs + s - 1]);
                        waiting += 1;
                    }
                    Lane::Done => st[0] = DONE,
                    Lane::Next(_) => unreachable!("the warp ran until no lane was runnable"),
                }
            }
            Ok(waiting)
        }
    }
}

/// What [`Engine::warp_interval`] runs: one warp of one group in one interval.
struct WarpCtx<'a> {
    group: usize,
    /// The warp's number in its group.
    warp: usize,
    /// The local ids of its lanes.
    lanes: std::ops::Range<usize>,
    epochs: Epochs,
    /// The barrier interval (the cost's epoch).
    epoch: usize,
    dest: &'a [Reg],
}

/// Per-warp buffers, reused across warps.
struct WarpScratch {
    /// Register `r` of lane `l`: `regs[l * nregs + r]`.
    regs: Vec<u64>,
    lanes: Vec<Lane>,
    writes: Vec<Write>,
    atomics: Vec<Atomic>,
}

/// Brings a lane whose saved program counter is `pc` to its next statement without running
/// one: `pc` may stand at a mark, or before jumps, a barrier or the end of the kernel.
fn settle(prog: &Program, views: &[ArrView], regs: &mut [u64], pc: u32) -> Lane {
    if matches!(prog.code[pc as usize], Inst::Sync { .. }) {
        return Lane::Next(pc);
    }
    let (mut pc, mut steps) = (pc, 0u64);
    match exec(
        prog,
        views,
        regs,
        &mut pc,
        &mut steps,
        u64::MAX,
        &mut NoAccess,
        None,
    ) {
        Exit::Sync => Lane::Next(pc),
        Exit::Barrier => Lane::Waiting(pc),
        Exit::Done => Lane::Done,
        other => unreachable!("no statement runs between marks: {other:?}"),
    }
}

/// The policy of [`settle`], which runs no statement, hence no access.
struct NoAccess;

impl Policy for NoAccess {
    fn load(&mut self, _: &ArrView, _: &Site, _: usize, _: u64) -> Result<u64, ()> {
        unreachable!("no access between statement marks")
    }
    fn store(&mut self, _: &ArrView, _: &Site, _: usize, _: u64, _: u64) -> Result<(), ()> {
        unreachable!("no access between statement marks")
    }
}
