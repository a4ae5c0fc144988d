//! The fast executor with lock-step warps (`--warp-size W`, [`interp::warp`]): small
//! kernels whose instructions, lane-steps, divergent branches, races and final stores were
//! computed by hand from the model, and `W = 1` against the thread-by-thread executor on
//! every example.

use interp::fast::{self, FastOptions, FastOutcome};
use interp::warp::SimtCounts;
use interp::{AccessKind, FaultKind, Launch, LaunchOptions, Monoid, Value};
use std::path::PathBuf;
use std::sync::Arc;

fn launch_with(src: &str, warp: Option<usize>, opts: LaunchOptions) -> Launch {
    let kernel = lang::check::compile(src).unwrap_or_else(|e| panic!("{e:?}\n{src}"));
    let mut l = Launch::new(Arc::new(kernel), &opts).expect("launch");
    l.warp_size = warp;
    l
}

fn launch(src: &str, warp: Option<usize>) -> Launch {
    launch_with(src, warp, LaunchOptions::default())
}

fn run(l: &Launch) -> FastOutcome {
    fast::run(
        l,
        &FastOptions {
            jobs: 1,
            track_races: true,
        },
    )
    .expect("the fast executor runs warps")
}

fn ints(out: &FastOutcome, a: usize) -> Vec<i64> {
    out.memory.arrays[a][0]
        .iter()
        .map(|v| v.as_i64().expect("an int"))
        .collect()
}

fn total(out: &FastOutcome) -> SimtCounts {
    out.simt.as_ref().expect("a SIMT cost with warps").total
}

fn counts(instructions: u64, lane_steps: u64, divergent_branches: u64) -> SimtCounts {
    SimtCounts {
        instructions,
        lane_steps,
        divergent_branches,
    }
}

#[test]
fn a_divergent_if_runs_both_sides_then_reconverges() {
    let src = "kernel k(global int x[4]) launch(groups = 1, local_size = 4) {
        if (tid < 2) { x[tid] = 1; } else { x[tid] = 2; }
        x[tid] = x[tid] + 1;
    }";
    let out = run(&launch(src, Some(4)));
    // The test (4 lanes), the then-store (2), the else-store (2), the last store (4).
    assert_eq!(total(&out), counts(4, 12, 1));
    assert_eq!(out.steps, 4);
    assert_eq!(ints(&out, 0), [2, 2, 3, 3]);
    assert!(out.races.is_empty() && out.fault.is_none());
    let simt = out.simt.unwrap();
    assert_eq!(simt.warp_size, 4);
    assert_eq!(simt.per_epoch, vec![counts(4, 12, 1)]);
    // Without warps: the same statements, one thread at a time.
    let plain = run(&launch(src, None));
    assert_eq!(plain.steps, 12);
    assert!(plain.simt.is_none());
}

#[test]
fn lanes_leaving_a_loop_wait_for_the_last() {
    let src = "kernel k(global int x[4]) launch(groups = 1, local_size = 4) {
        int i;
        while (i < tid) { i = i + 1; }
        x[tid] = i;
    }";
    let out = run(&launch(src, Some(4)));
    // Tests with 4, 3, 2, 1 lanes (the first three divergent), bodies with 3, 2, 1 lanes,
    // then one store for all four lanes.
    assert_eq!(total(&out), counts(8, 20, 3));
    assert_eq!(ints(&out, 0), [0, 1, 2, 3]);
    // Lane-steps are the statements the threads execute without warps.
    assert_eq!(run(&launch(src, None)).steps, 20);
}

#[test]
fn two_lanes_writing_one_element_in_one_instruction_race() {
    let src = "kernel k(global int x[1]) launch(groups = 1, local_size = 4) {
        x[0] = tid;
    }";
    let out = run(&launch(src, Some(4)));
    assert_eq!(out.races.len(), 1, "{:?}", out.races);
    let r = &out.races[0];
    assert_eq!(
        (r.race.first.kind, r.race.second.kind),
        (AccessKind::Write, AccessKind::Write)
    );
    assert_eq!(
        (r.race.first.thread.local, r.race.second.thread.local),
        (0, 1)
    );
    assert_eq!((r.race.first.step, r.race.second.step), (0, 0));
    // Every pair of the four lanes.
    assert_eq!(r.count, 6);
    // Writes are applied in lane order: the highest lane's value stays.
    assert_eq!(ints(&out, 0), [3]);
}

#[test]
fn reads_of_one_instruction_happen_before_its_writes() {
    let src = "kernel k(global int x[4]) launch(groups = 1, local_size = 4) {
        x[tid] = tid + 10;
        if (tid < 3) { x[tid] = x[tid + 1]; }
    }";
    let out = run(&launch(src, Some(4)));
    assert!(out.races.is_empty(), "{:?}", out.races);
    assert_eq!(ints(&out, 0), [11, 12, 13, 13]);
    // Interleaved thread by thread, the read of x[tid + 1] and the write of thread tid + 1
    // race.
    assert!(!run(&launch(src, None)).races.is_empty());
    // In two warps of two, threads 1 and 2 are in different warps: thread 1's read of
    // x[2] races with both writes of thread 2.
    let out = run(&launch(src, Some(2)));
    assert_eq!(out.races.len(), 2, "{:?}", out.races);
    for r in &out.races {
        let r = &r.race;
        assert_eq!((r.first.thread.local, r.second.thread.local), (1, 2));
        assert_eq!(
            (r.first.kind, r.second.kind),
            (AccessKind::Read, AccessKind::Write)
        );
    }
}

/// A warp-level inclusive scan without barriers: each lane reads `a[tid - d]` and writes
/// `a[tid]` in one statement, for d = 1, 2, 4, 8, 16.
const WARP_SCAN: &str = "kernel k(global int a[32]) launch(groups = 1, local_size = 32) {
    a[tid] = tid + 1;
    for (int d = 1; d < 32; d *= 2) {
        if (tid >= d) { a[tid] = a[tid - d] + a[tid]; }
    }
}";

#[test]
fn a_warp_scan_is_race_free_with_warps_of_32_only() {
    let out = run(&launch(WARP_SCAN, Some(32)));
    assert!(out.races.is_empty(), "{:?}", out.races);
    assert!(out.fault.is_none());
    let expected: Vec<i64> = (1..=32).map(|i| i * (i + 1) / 2).collect();
    assert_eq!(ints(&out, 0), expected);
    let t = total(&out);
    // Store, `d = 1`, then per round: loop test, `if` test, store, `d *= 2`; a last test.
    assert_eq!(t.instructions, 2 + 5 * 4 + 1);
    // The `if (tid >= d)` test splits the warp every round.
    assert_eq!(t.divergent_branches, 5);
    for w in [16, 8, 1] {
        let out = run(&launch(WARP_SCAN, Some(w)));
        assert!(!out.races.is_empty(), "warps of {w}: no race");
    }
    assert!(!run(&launch(WARP_SCAN, None)).races.is_empty());
}

#[test]
fn atomics_of_one_instruction_are_serialised_in_lane_order() {
    let src = "kernel k(global int c[2], global int out[4]) launch(groups = 1, local_size = 4) {
        int old = atomic_add(c[0], tid + 1);
        out[tid] = old;
        atomic_inc(c[c[1]]);
    }";
    let out = run(&launch(src, Some(4)));
    assert!(out.races.is_empty(), "{:?}", out.races);
    // Lane l sees the sum of the lanes before it.
    assert_eq!(ints(&out, 1), [0, 1, 3, 6]);
    // Every lane reads c[1] before the instruction's atomics: all increment c[0].
    assert_eq!(ints(&out, 0), [10 + 4, 0]);
    assert_eq!(total(&out), counts(3, 12, 0));
}

#[test]
fn barriers_split_the_cost_per_epoch_and_groups_add_up() {
    let src = "kernel k(global int x[8]) launch(groups = 2, local_size = 4) {
        x[gid] = tid;
        barrier();
        if (tid % 2 == 0) { x[gid] = x[gid] + 1; }
    }";
    let out = run(&launch(src, Some(2)));
    assert!(out.races.is_empty() && out.divergences.is_empty());
    assert_eq!(ints(&out, 0), [1, 1, 3, 3, 1, 1, 3, 3]);
    let simt = out.simt.unwrap();
    // Per group: epoch 0, one store per warp; epoch 1, per warp a divergent test and a
    // store by one lane.
    assert_eq!(simt.per_epoch, vec![counts(4, 8, 0), counts(8, 12, 4)]);
    assert_eq!(simt.total, counts(12, 20, 4));
    assert_eq!(out.steps, 12);
}

#[test]
fn a_race_between_warps_of_different_groups_is_found() {
    let src = "kernel k(global int x[1]) launch(groups = 2, local_size = 2) {
        if (tid == 0) { x[0] = gid; }
    }";
    let out = run(&launch(src, Some(2)));
    assert_eq!(out.races.len(), 1, "{:?}", out.races);
    let r = &out.races[0].race;
    assert_eq!((r.first.thread.group, r.second.thread.group), (0, 1));
}

#[test]
fn a_fault_names_the_first_faulting_lane_and_the_instruction() {
    let src = "kernel k(global int x[4]) launch(groups = 1, local_size = 4) {
        x[tid] = 1;
        x[tid + 2] = 2;
    }";
    let out = run(&launch(src, Some(4)));
    let f = out.fault.expect("out of bounds");
    assert!(matches!(f.kind, FaultKind::OutOfBounds { .. }), "{f:?}");
    assert_eq!(f.thread.map(|t| t.local), Some(2));
    assert_eq!(out.steps, 1);
}

#[test]
fn the_step_bound_counts_warp_instructions() {
    let src = "kernel k(global int x[4]) launch(groups = 1, local_size = 4) {
        while (tid >= 0) { x[tid] = 1; }
    }";
    let opts = LaunchOptions {
        max_steps: Some(10),
        ..Default::default()
    };
    let out = run(&launch_with(src, Some(4), opts));
    let f = out.fault.clone().expect("step bound");
    assert_eq!(f.kind, FaultKind::StepBound { steps: 10 });
    assert_eq!(out.steps, 10);
    assert_eq!(total(&out).instructions, 10);
}

#[test]
fn barrier_divergence_is_reported_with_warps() {
    let src = "kernel k(global int x[4]) launch(groups = 1, local_size = 4) {
        if (tid < 2) { barrier(); } else { barrier(); }
        x[tid] = 1;
    }";
    let warps = run(&launch(src, Some(2)));
    let plain = run(&launch(src, None));
    assert_eq!(warps.divergences.len(), 1);
    assert_eq!(warps.divergences, plain.divergences);
}

#[test]
fn warps_wider_than_64_lanes_are_left_to_the_reference_semantics() {
    let src = "kernel k(global int x[128]) launch(groups = 1, local_size = 128) { x[tid] = 1; }";
    assert!(fast::run(&launch(src, Some(128)), &FastOptions::default()).is_err());
}

fn examples() -> Vec<(String, String)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("examples directory") {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "ksim") {
            let name = path.file_stem().unwrap().to_string_lossy().to_string();
            out.push((name, std::fs::read_to_string(&path).unwrap()));
        }
    }
    out.sort();
    assert!(!out.is_empty());
    out
}

fn example_launch(src: &str, n: usize, warp: Option<usize>) -> Option<Launch> {
    let kernel = lang::check::compile(src).ok()?;
    let inputs = kernel
        .arrays
        .iter()
        .filter(|a| a.name == "in" || a.name == "array")
        .map(|a| (a.name.clone(), "random:3".to_string()))
        .collect();
    let opts = LaunchOptions {
        defines: vec![("n".into(), n.to_string())],
        monoid: Monoid::IntAdd,
        inputs,
        max_steps: Some(1 << 22),
        ..Default::default()
    };
    let mut l = Launch::new(Arc::new(kernel), &opts).ok()?;
    l.warp_size = warp;
    Some(l)
}

#[test]
fn warps_of_one_lane_are_the_paper_s_model_on_every_example() {
    let mut compared = 0;
    for (name, src) in examples() {
        for n in [1, 8, 64] {
            let (Some(plain), Some(one)) = (
                example_launch(&src, n, None),
                example_launch(&src, n, Some(1)),
            ) else {
                continue;
            };
            let (a, b) = (run(&plain), run(&one));
            let what = format!("{name} n={n}");
            assert_eq!(a.memory, b.memory, "{what}: memory");
            assert_eq!(a.fault, b.fault, "{what}: fault");
            assert_eq!(a.steps, b.steps, "{what}: steps");
            assert_eq!(a.races, b.races, "{what}: races");
            assert_eq!(a.divergences, b.divergences, "{what}: divergences");
            let t = total(&b);
            assert_eq!((t.instructions, t.lane_steps), (b.steps, b.steps), "{what}");
            assert_eq!(t.divergent_branches, 0, "{what}");
            compared += 1;
        }
    }
    assert!(compared >= 20, "only {compared} launches compared");
}

#[test]
fn race_free_scans_keep_their_result_in_warps_of_32() {
    // A race-free kernel has one final store whatever the schedule (Lemma 5.4), and the
    // barriers of the scans keep them race-free when warps run in lock-step.
    for name in ["kogge_stone", "blelloch", "brent_kung", "sklansky"] {
        let src = examples()
            .into_iter()
            .find(|(n, _)| n == name)
            .map(|(_, s)| s)
            .unwrap_or_else(|| panic!("{name}.ksim"));
        let (plain, warps) = (
            run(&example_launch(&src, 256, None).unwrap()),
            run(&example_launch(&src, 256, Some(32)).unwrap()),
        );
        assert!(plain.races.is_empty() && warps.races.is_empty(), "{name}");
        assert_eq!(plain.memory, warps.memory, "{name}");
        let t = total(&warps);
        assert_eq!(t.lane_steps, plain.steps, "{name}: lane-steps");
        assert!(t.instructions * 32 >= t.lane_steps, "{name}");
        let _ = Value::Int(0);
    }
}
