//! SIMT lock-step execution (`--warp-size W`): the model both engines implement.
//!
//! The paper's semantics interleaves *threads*; a GPU issues instructions for *warps* of
//! threads in lock-step (and much warp-synchronous code, e.g. a warp-level scan without
//! barriers, is race-free only under that model). With a warp size `W` set on the launch:
//!
//! 1. **Warps.** The threads of each work-group are split, by flat local id, into warps of
//!    `W` consecutive threads (the last warp of a group may be shorter). Warps are numbered
//!    across the launch: warp `w` of group `g` is [`Warps::global`]`(g, w)`. A warp is
//!    *enabled* when at least one of its lanes (threads) is runnable: neither waiting at a
//!    barrier nor terminated. K-STEP chooses an enabled warp, not a thread; schedules name
//!    warps.
//! 2. **Active mask and reconvergence.** The lanes that execute the warp's next instruction
//!    are its runnable lanes whose next statement comes first in *program order*
//!    ([`ProgramOrder`]: the pre-order numbering of the core statements, a `while` before
//!    its body, the then-branch before the else-branch, a statement before those that follow
//!    it). So after a divergent `if` the then-lanes run until they reach the statement after
//!    the `if`, then the else-lanes run, and there the warp reconverges; lanes that leave a
//!    loop wait after it until the last lane leaves; a lane at a barrier waits for K-BARRIER
//!    (which is unchanged: it fires for the work-group). This is the immediate
//!    post-dominator reconvergence of pre-Volta GPUs for structured code (the core form has
//!    no `goto`, `break` or `continue`).
//! 3. **One instruction.** Every active lane takes the step that K-STEP would take for it
//!    alone (the same rule, named the same), with every lane's reads seeing the memory as it
//!    was before the instruction; then the lanes' writes are applied in lane order. Atomic
//!    read-modify-writes of one instruction are applied one after the other in lane order,
//!    each seeing the result of the one before (as the hardware serialises them). Under
//!    `--atomicity access` an instruction is one access per lane, because the statements
//!    are already split.
//! 4. **Races** (GPUVerify's `--warp-sync` rule). Two accesses of the same lane-instruction
//!    cannot race; within one instruction of a warp, reads happen before writes, so only two
//!    lanes *writing* one element race (a write-write race, reported like any other; the
//!    element then holds the highest lane's value). Accesses of one warp in different
//!    instructions are ordered by the warp's program order. Accesses of different warps
//!    conflict exactly as accesses of different threads do ([`crate::race::conflict`]):
//!    same group and same barrier epoch, or different groups.
//! 5. **Canonical schedule.** The lowest-numbered enabled warp steps; so each group's warps
//!    run in order, each until all its lanes wait at a barrier or have terminated. The
//!    argument of [`crate::fast`] (Lemma 5.4 with the canonical execution as witness) holds
//!    with warps in place of threads: a warp's instruction is a deterministic function of
//!    its lanes' states and of the memory it reads.
//! 6. **Cost** ([`SimtCost`]): instructions issued, lane-steps (active lanes summed over
//!    instructions, so `lane_steps / instructions` is the average number of active lanes),
//!    and divergent branches (an `if` or `while` test whose active lanes do not all go the
//!    same way), in total and per barrier epoch.
//!
//! With `W = 1` every warp is one thread and the model is the paper's.

use crate::launch::Launch;
use lang::core::{BlockId, Kernel, StmtKind};
use serde::Serialize;

/// The partition of a launch's threads into warps ([`Warps::new`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Warps {
    /// Lanes per warp.
    pub size: usize,
    /// Threads per work-group.
    pub local_size: usize,
    /// Warps per work-group: `local_size / size`, rounded up.
    pub per_group: usize,
    /// Work-groups in the launch.
    pub groups: usize,
}

impl Warps {
    /// The warps of `launch` with its warp size, or `None` when threads are interleaved
    /// one by one (no `--warp-size`).
    pub fn new(launch: &Launch) -> Option<Warps> {
        let size = launch.warp_size?;
        Some(Warps {
            size,
            local_size: launch.local_size,
            per_group: launch.local_size.div_ceil(size),
            groups: launch.groups,
        })
    }

    /// Warps in the launch.
    pub fn count(&self) -> usize {
        self.per_group * self.groups
    }

    /// The launch-wide number of warp `w` of group `g`.
    pub fn global(&self, g: usize, w: usize) -> usize {
        g * self.per_group + w
    }

    /// The warp of global thread `t` (threads are numbered group by group, by local id).
    pub fn of_thread(&self, t: usize) -> usize {
        let (g, local) = (t / self.local_size, t % self.local_size);
        self.global(g, local / self.size)
    }

    /// The work-group of warp `warp`.
    pub fn group(&self, warp: usize) -> usize {
        warp / self.per_group
    }

    /// The global thread ids of the lanes of warp `warp`, lane 0 first.
    pub fn lanes(&self, warp: usize) -> std::ops::Range<usize> {
        let (g, w) = (warp / self.per_group, warp % self.per_group);
        let start = w * self.size;
        let end = (start + self.size).min(self.local_size);
        g * self.local_size + start..g * self.local_size + end
    }
}

/// The pre-order number of every core statement: the order in which a warp's active mask
/// picks its lanes (module documentation, point 2).
#[derive(Clone, Debug)]
pub struct ProgramOrder {
    /// `numbers[b][i]`: the number of statement `i` of block `b`.
    numbers: Vec<Vec<u32>>,
}

impl ProgramOrder {
    pub fn new(kernel: &Kernel) -> ProgramOrder {
        let mut numbers: Vec<Vec<u32>> = kernel.blocks.iter().map(|b| vec![0; b.len()]).collect();
        let mut next = 0u32;
        // Depth-first over blocks, with an explicit stack so that deep nesting cannot
        // exhaust the call stack: (block, next statement to number).
        let mut stack: Vec<(BlockId, usize)> = vec![(Kernel::BODY, 0)];
        while let Some((b, i)) = stack.pop() {
            let Some(stmt) = kernel.blocks[b].get(i) else {
                continue;
            };
            numbers[b][i] = next;
            next += 1;
            stack.push((b, i + 1));
            match &stmt.kind {
                StmtKind::If { then, els, .. } => {
                    stack.push((*els, 0));
                    stack.push((*then, 0));
                }
                StmtKind::While { body, .. } => stack.push((*body, 0)),
                _ => {}
            }
        }
        ProgramOrder { numbers }
    }

    /// The number of statement `index` of block `block`.
    pub fn of(&self, block: BlockId, index: usize) -> u32 {
        self.numbers[block][index]
    }
}

/// What SIMT execution cost: the simulated measure that `gpu bench` sets against device time.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct SimtCost {
    /// Lanes per warp.
    pub warp_size: usize,
    /// The totals over the whole execution.
    pub total: SimtCounts,
    /// `per_epoch[k]`: the counts of barrier epoch `k`, summed over work-groups.
    pub per_epoch: Vec<SimtCounts>,
}

/// Counters of warp instructions ([`SimtCost`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct SimtCounts {
    /// Warp instructions issued.
    pub instructions: u64,
    /// Active lanes summed over the instructions.
    pub lane_steps: u64,
    /// `if`/`while` tests whose active lanes did not all go the same way.
    pub divergent_branches: u64,
}

impl SimtCounts {
    /// Average active lanes per instruction (0 when none was issued).
    pub fn average_active(&self) -> f64 {
        if self.instructions == 0 {
            0.0
        } else {
            self.lane_steps as f64 / self.instructions as f64
        }
    }
}

impl SimtCost {
    /// Counts one instruction of `active` lanes in barrier epoch `epoch`.
    pub fn instruction(&mut self, epoch: usize, active: usize, divergent: bool) {
        if self.per_epoch.len() <= epoch {
            self.per_epoch.resize(epoch + 1, SimtCounts::default());
        }
        for c in [&mut self.total, &mut self.per_epoch[epoch]] {
            c.instructions += 1;
            c.lane_steps += active as u64;
            c.divergent_branches += divergent as u64;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn warps(size: usize, local_size: usize, groups: usize) -> Warps {
        Warps {
            size,
            local_size,
            per_group: local_size.div_ceil(size),
            groups,
        }
    }

    #[test]
    fn a_short_last_warp_keeps_its_group() {
        let w = warps(4, 6, 2);
        assert_eq!(w.count(), 4);
        assert_eq!(w.lanes(0), 0..4);
        assert_eq!(w.lanes(1), 4..6);
        assert_eq!(w.lanes(2), 6..10);
        assert_eq!(w.lanes(3), 10..12);
        assert_eq!(w.of_thread(5), 1);
        assert_eq!(w.of_thread(6), 2);
        assert_eq!(w.group(3), 1);
    }

    #[test]
    fn program_order_puts_then_before_else_and_loops_before_their_exit() {
        let src = "kernel k(local int A[4]) launch(groups = 1, local_size = 2) { if (tid < 2) { A[0] = 1; } else { A[1] = 2; } \
                   while (A[2] < 3) { A[2] = A[2] + 1; } A[3] = 4; }";
        let kernel = lang::check::compile(src).expect("kernel compiles");
        let order = ProgramOrder::new(&kernel);
        let body = &kernel.blocks[Kernel::BODY];
        let (
            StmtKind::If { then, els, .. },
            StmtKind::While {
                body: loop_body, ..
            },
        ) = (&body[0].kind, &body[1].kind)
        else {
            panic!("unexpected core form: {body:?}");
        };
        let numbers = [
            order.of(Kernel::BODY, 0),
            order.of(*then, 0),
            order.of(*els, 0),
            order.of(Kernel::BODY, 1),
            order.of(*loop_body, 0),
            order.of(Kernel::BODY, 2),
        ];
        assert_eq!(numbers, [0, 1, 2, 3, 4, 5]);
    }
}
