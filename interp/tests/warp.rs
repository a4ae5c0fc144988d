//! SIMT lock-step execution in the reference semantics (`--warp-size`, `interp::warp`):
//! active masks, reconvergence, the instruction's read-before-write, races within and
//! between warps, serialised atomics, barriers, work-groups, and the SIMT cost.

use interp::exec::{run, run_canonical, Observer, Outcome};
use interp::launch::{Launch, LaunchOptions};
use interp::reference::{Rule, WarpStep};
use interp::warp::SimtCounts;
use interp::{AccessKind, Value};
use std::path::PathBuf;
use std::sync::Arc;

fn launch(src: &str, groups: usize, local: usize, warp: Option<usize>) -> Launch {
    let k = lang::check::compile(src).unwrap_or_else(|d| panic!("{d:?}"));
    let opts = LaunchOptions {
        groups: Some(groups),
        local_size: Some(local),
        ..LaunchOptions::default()
    };
    let mut l = Launch::new(Arc::new(k), &opts).expect("launch");
    l.warp_size = warp;
    l
}

fn ints(l: &Launch, out: &Outcome, name: &str) -> Vec<i32> {
    let a = l.kernel.array(name).expect("array");
    out.memory.arrays[a][0]
        .iter()
        .map(|v| match v {
            Value::Int(x) => *x,
            other => panic!("not an int: {other:?}"),
        })
        .collect()
}

/// One warp instruction: the warp, its active lanes (local ids), their rules, divergence.
type Instruction = (usize, Vec<usize>, Vec<Rule>, bool);

/// Every warp instruction of an execution.
#[derive(Default)]
struct Instructions(Vec<Instruction>);

impl Observer for Instructions {
    fn warp(&mut self, step: &WarpStep) {
        self.0.push((
            step.warp,
            step.lanes.iter().map(|i| i.thread.local).collect(),
            step.lanes.iter().map(|i| i.rule).collect(),
            step.divergent,
        ));
    }
}

fn canonical_instructions(l: &Launch) -> (Outcome, Vec<Instruction>) {
    let mut obs = Instructions::default();
    let out = run(l, |_, r| r.first(), &mut obs);
    (out, obs.0)
}

fn counts(instructions: u64, lane_steps: u64, divergent_branches: u64) -> SimtCounts {
    SimtCounts {
        instructions,
        lane_steps,
        divergent_branches,
    }
}

#[test]
fn warps_of_one_are_the_papers_threads_on_every_example() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).expect("examples/") {
        let path = entry.expect("entry").path();
        if path.extension().is_none_or(|e| e != "ksim") {
            continue;
        }
        let src = std::fs::read_to_string(&path).expect("example");
        let k = Arc::new(lang::check::compile(&src).unwrap_or_else(|d| panic!("{d:?}")));
        let opts = LaunchOptions {
            defines: vec![("n".into(), "8".into())],
            inputs: k
                .arrays
                .iter()
                .filter(|a| a.name == "in" || a.name == "out")
                .map(|a| (a.name.clone(), "1,2,3,4,5,6,7,8".into()))
                .collect(),
            ..LaunchOptions::default()
        };
        let Ok(paper) = Launch::new(k, &opts) else {
            continue; // needs other parameters than n
        };
        let mut warps = paper.clone();
        warps.warp_size = Some(1);
        let (a, b) = (run_canonical(&paper), run_canonical(&warps));
        let name = path.display();
        assert_eq!(a.memory, b.memory, "{name}");
        assert_eq!(a.races, b.races, "{name}");
        assert_eq!(a.fault, b.fault, "{name}");
        assert_eq!(a.divergences, b.divergences, "{name}");
        assert_eq!(a.steps, b.steps, "{name}");
        assert_eq!(a.schedule, b.schedule, "{name}");
        assert_eq!(a.simt, None);
        let simt = b.simt.expect("SIMT cost under --warp-size");
        assert_eq!(simt.total.instructions, b.steps, "{name}");
        assert_eq!(simt.total.lane_steps, b.steps, "{name}");
        assert_eq!(simt.total.divergent_branches, 0, "{name}");
        checked += 1;
    }
    assert!(checked >= 8, "only {checked} examples ran with n = 8");
}

#[test]
fn a_divergent_if_runs_then_lanes_then_else_lanes_then_reconverges() {
    let l = launch(
        "kernel k(local int A[4], local int B[4]) { if (tid < 2) { A[tid] = 1; } else { A[tid] = 2; } B[tid] = A[tid] + 10; }",
        1,
        4,
        Some(4),
    );
    let (out, instr) = canonical_instructions(&l);
    use Rule::*;
    assert_eq!(
        instr,
        vec![
            (0, vec![0, 1, 2, 3], vec![SIteT, SIteT, SIteF, SIteF], true),
            (0, vec![0, 1], vec![SArray, SArray], false),
            (0, vec![2, 3], vec![SArray, SArray], false),
            (0, vec![0, 1, 2, 3], vec![SArray; 4], false),
        ]
    );
    assert!(out.is_clean());
    assert_eq!(ints(&l, &out, "B"), [11, 11, 12, 12]);
    let simt = out.simt.expect("cost");
    assert_eq!(simt.warp_size, 4);
    assert_eq!(simt.total, counts(4, 12, 1));
    assert_eq!(simt.per_epoch, vec![counts(4, 12, 1)]);
    assert_eq!(out.steps, 4);
    assert_eq!(out.schedule.runs, vec![(0, 4)]);
}

#[test]
fn lanes_leaving_a_loop_wait_after_it_until_the_last_one_leaves() {
    let l = launch(
        "kernel k(local int A[4]) { int i = 0; while (i < tid) { i = i + 1; } A[tid] = i; }",
        1,
        4,
        Some(4),
    );
    let (out, instr) = canonical_instructions(&l);
    let masks: Vec<Vec<usize>> = instr.iter().map(|i| i.1.clone()).collect();
    assert_eq!(
        masks,
        vec![
            vec![0, 1, 2, 3], // i = 0
            vec![0, 1, 2, 3], // test: lane 0 leaves
            vec![1, 2, 3],
            vec![1, 2, 3], // lane 1 leaves
            vec![2, 3],
            vec![2, 3], // lane 2 leaves
            vec![3],
            vec![3],          // lane 3 leaves: not divergent
            vec![0, 1, 2, 3], // reconverged after the loop
        ]
    );
    let divergent: Vec<bool> = instr.iter().map(|i| i.3).collect();
    assert_eq!(
        divergent,
        [false, true, false, true, false, true, false, false, false]
    );
    assert_eq!(instr[7].2, vec![Rule::SLoopF]);
    assert_eq!(ints(&l, &out, "A"), [0, 1, 2, 3]);
    assert_eq!(out.simt.expect("cost").total, counts(9, 24, 3));
}

#[test]
fn two_lanes_writing_one_element_in_one_instruction_race_and_the_highest_lane_wins() {
    let l = launch(
        "kernel k(local int A[1]) { A[0] = tid + 5; }",
        1,
        2,
        Some(2),
    );
    let out = run_canonical(&l);
    assert_eq!(out.races.len(), 1);
    let r = &out.races[0];
    assert_eq!(
        (r.first.kind, r.second.kind),
        (AccessKind::Write, AccessKind::Write)
    );
    assert_eq!((r.first.thread.local, r.second.thread.local), (0, 1));
    assert_eq!((r.first.step, r.second.step), (0, 0));
    assert_eq!(ints(&l, &out, "A"), [6]);
    assert_eq!(out.steps, 1);
}

#[test]
fn an_instruction_reads_before_it_writes_so_a_rotation_is_race_free_in_one_warp() {
    let src = "kernel k(local int A[4]) { A[tid] = A[(tid + 1) % 4]; }";
    let input = |mut l: Launch| {
        l.initial[0] = (1..=4).map(Value::Int).collect();
        l
    };
    let l = input(launch(src, 1, 4, Some(4)));
    let out = run_canonical(&l);
    assert!(out.races.is_empty(), "{:?}", out.races);
    assert_eq!(ints(&l, &out, "A"), [2, 3, 4, 1]);
    // Threads one by one, or two warps of two: the read of one races the other's write.
    for warp in [None, Some(2)] {
        let l = input(launch(src, 1, 4, warp));
        let out = run_canonical(&l);
        assert_eq!(out.races.len(), 1, "warp size {warp:?}");
        let kinds = (out.races[0].first.kind, out.races[0].second.kind);
        assert_eq!(kinds, (AccessKind::Read, AccessKind::Write), "{warp:?}");
    }
}

#[test]
fn atomics_of_one_instruction_are_serialised_in_lane_order() {
    let l = launch(
        "kernel k(local int A[1], local int B[4]) { int old = atomic_add(A[0], tid + 1); B[tid] = old; }",
        1,
        4,
        Some(4),
    );
    let out = run_canonical(&l);
    assert!(out.is_clean(), "{:?}", out.races);
    assert_eq!(ints(&l, &out, "A"), [10]);
    assert_eq!(ints(&l, &out, "B"), [0, 1, 3, 6]);
    assert_eq!(out.simt.expect("cost").total.instructions, 2);
}

#[test]
fn warps_wait_at_a_barrier_and_the_cost_is_split_per_epoch() {
    let l = launch(
        "kernel k(local int A[8], local int B[8]) { A[tid] = tid; barrier(); if (tid % 2 == 0) { B[tid] = A[(tid + 1) % 8]; } }",
        1,
        8,
        Some(4),
    );
    let (out, instr) = canonical_instructions(&l);
    assert!(out.is_clean(), "{:?}", out.races);
    assert_eq!(ints(&l, &out, "B"), [1, 0, 3, 0, 5, 0, 7, 0]);
    let warps: Vec<usize> = instr.iter().map(|i| i.0).collect();
    assert_eq!(warps, [0, 1, 0, 0, 1, 1]);
    let simt = out.simt.expect("cost");
    assert_eq!(
        simt.per_epoch,
        vec![counts(2, 8, 0), counts(4, 12, 2)],
        "{simt:?}"
    );
    assert_eq!(simt.total, counts(6, 20, 2));
    // Without the barrier, warp 1's write of A[4] races warp 0's read of it.
    let l = launch(
        "kernel k(local int A[8], local int B[8]) { A[tid] = tid; B[tid] = A[(tid + 1) % 8]; }",
        1,
        8,
        Some(4),
    );
    let out = run_canonical(&l);
    assert_eq!(out.races.len(), 1);
    let r = &out.races[0];
    assert_eq!((r.first.thread.local, r.second.thread.local), (3, 4));
    assert_eq!((r.first.step, r.second.step), (1, 2));
}

#[test]
fn warps_are_numbered_across_groups_and_groups_race_on_global_arrays() {
    let l = launch(
        "kernel k(global int G[8], local int L[4]) { L[tid] = gid; G[gid] = L[(tid + 1) % 4]; G[0] = 1; }",
        2,
        4,
        Some(2),
    );
    let out = run_canonical(&l);
    // Warps 0, 1 (group 0) then 2, 3 (group 1), each to the end of the kernel.
    assert_eq!(out.schedule.runs, vec![(0, 3), (1, 3), (2, 3), (3, 3)]);
    assert_eq!(out.simt.as_ref().expect("cost").total, counts(12, 24, 0));
    let pairs: Vec<(usize, usize, usize, usize)> = out
        .races
        .iter()
        .map(|r| {
            (
                r.first.thread.group,
                r.first.thread.local,
                r.second.thread.group,
                r.second.thread.local,
            )
        })
        .collect();
    let steps: Vec<(u64, u64)> = out
        .races
        .iter()
        .map(|r| (r.first.step, r.second.step))
        .collect();
    // Warp 0 (threads 0, 1) runs its three instructions, then warp 1 (threads 2, 3):
    // lanes 0 and 1 both write G[0] in instruction 2; warp 1 writes L[2] (instruction 3)
    // that warp 0 read in instruction 1; warp 1's `G[0] = 1` (5) meets warp 0's write of
    // G[0] by `G[gid] = ...` (1). Group 1 repeats these statement pairs: no new race.
    assert_eq!(pairs, [(0, 0, 0, 1), (0, 1, 0, 2), (0, 0, 0, 2)]);
    assert_eq!(steps, [(2, 2), (1, 3), (1, 5)]);
}

#[test]
fn a_fault_in_one_lane_stops_the_instruction_and_names_the_lane() {
    let l = launch("kernel k(local int A[2]) { A[tid] = 1; }", 1, 4, Some(4));
    let out = run_canonical(&l);
    let f = out.fault.clone().expect("out of bounds");
    assert_eq!(f.thread.map(|t| t.local), Some(2));
    assert_eq!(
        ints(&l, &out, "A"),
        [0, 0],
        "the instruction is not applied"
    );
}
