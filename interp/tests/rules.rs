//! One test per rule of POPL 2014 Figures 6 and 7, and race detection (Definition 5.2) on
//! small hand-made kernels, for each pair of access kinds.

use interp::exec::{run, run_canonical, Quiet};
use interp::launch::{Launch, LaunchOptions};
use interp::reference::{Rule, State};
use interp::{AccessKind, Value};
use std::sync::Arc;

fn launch(src: &str, groups: usize, local: usize) -> Launch {
    let k = lang::check::compile(src).unwrap_or_else(|d| panic!("{d:?}"));
    let opts = LaunchOptions {
        groups: Some(groups),
        local_size: Some(local),
        ..LaunchOptions::default()
    };
    Launch::new(Arc::new(k), &opts).expect("launch")
}

/// Applies K-STEP to thread 0 of a one-thread launch until it is at a barrier or done,
/// returning the rules in order.
fn rules_of(src: &str) -> Vec<Rule> {
    let l = launch(src, 1, 1);
    let mut s = State::initial(&l);
    let mut rules = Vec::new();
    loop {
        for b in s.fire_ready_barriers(&l) {
            assert_eq!(b.group, 0);
            rules.push(Rule::KBarrier);
        }
        if s.runnable().is_empty() {
            return rules;
        }
        let (next, info) = s.step(&l, 0).expect("no fault");
        rules.push(info.rule);
        s = next;
    }
}

fn ints(l: &Launch, out: &interp::Memory, name: &str) -> Vec<i32> {
    let a = l.kernel.array(name).expect("array");
    out.arrays[a][0]
        .iter()
        .map(|v| match v {
            Value::Int(x) => *x,
            other => panic!("not an int: {other:?}"),
        })
        .collect()
}

#[test]
fn s_assign() {
    let l = launch(
        "kernel k(local int a[1]) { int x = 1; x = x + 41; a[0] = x; }",
        1,
        1,
    );
    let s = State::initial(&l);
    let (s, info) = s.step(&l, 0).unwrap();
    assert_eq!(info.rule, Rule::SAssign);
    assert_eq!(
        info.var_change.as_ref().map(|c| c.2.clone()),
        Some(Value::Int(1))
    );
    let (s, info) = s.step(&l, 0).unwrap();
    assert_eq!(
        info.var_change.map(|c| (c.1, c.2)),
        Some((Value::Int(1), Value::Int(42)))
    );
    assert_eq!(*s.var(0, 0), Value::Int(42));
    assert!(info.reads.is_empty() && info.write.is_none());
}

#[test]
fn s_array() {
    let l = launch(
        "kernel k(local int a[4]) { a[2] = 7; a[3] = a[2] + 1; }",
        1,
        1,
    );
    let s = State::initial(&l);
    let (s, info) = s.step(&l, 0).unwrap();
    assert_eq!(info.rule, Rule::SArray);
    assert_eq!(info.write.as_ref().map(|e| e.offset), Some(2));
    let (s, info) = s.step(&l, 0).unwrap();
    assert_eq!(
        info.reads.iter().map(|e| e.offset).collect::<Vec<_>>(),
        vec![2]
    );
    assert_eq!(ints(&l, &s.memory(&l), "a"), vec![0, 0, 7, 8]);
}

#[test]
fn s_ite_t() {
    assert_eq!(
        rules_of("kernel k(local int a[1]) { if (1 < 2) { a[0] = 1; } else { a[0] = 2; } }"),
        vec![Rule::SIteT, Rule::SArray]
    );
}

#[test]
fn s_ite_f() {
    assert_eq!(
        rules_of(
            "kernel k(local int a[1]) { if (2 < 1) { a[0] = 1; } else { a[0] = 2; a[0] = 3; } }"
        ),
        vec![Rule::SIteF, Rule::SArray, Rule::SArray]
    );
    // An `if` without `else` whose condition is false only advances.
    assert_eq!(
        rules_of("kernel k(local int a[1]) { if (false) a[0] = 1; }"),
        vec![Rule::SIteF]
    );
}

#[test]
fn s_loop_t_and_s_loop_f() {
    // Two iterations: S-LOOP-T unfolds the body before the loop, S-LOOP-F drops the loop.
    assert_eq!(
        rules_of("kernel k(local int a[1]) { int i = 0; while (i < 2) { i = i + 1; } }"),
        vec![
            Rule::SAssign,
            Rule::SLoopT,
            Rule::SAssign,
            Rule::SLoopT,
            Rule::SAssign,
            Rule::SLoopF
        ]
    );
}

#[test]
fn k_step_interleaves_threads() {
    // K-STEP lets any runnable thread move: thread 1 can write before thread 0.
    let l = launch("kernel k(local int a[2]) { a[tid] = tid + 1; }", 1, 2);
    let s = State::initial(&l);
    assert_eq!(s.runnable().to_vec(), vec![0, 1]);
    let (s, info) = s.step(&l, 1).unwrap();
    assert_eq!(info.thread.local, 1);
    assert_eq!(s.runnable().to_vec(), vec![0]);
    let (s, _) = s.step(&l, 0).unwrap();
    assert!(s.is_final());
    assert_eq!(ints(&l, &s.memory(&l), "a"), vec![1, 2]);
}

#[test]
fn k_barrier_waits_for_every_thread_of_the_group() {
    let l = launch(
        "kernel k(local int a[2]) { a[tid] = 1; barrier(); a[tid] = a[1 - tid] + 1; }",
        1,
        2,
    );
    let mut s = State::initial(&l);
    s = s.step(&l, 0).unwrap().0;
    // Thread 0 waits; the barrier is not enabled while thread 1 can still step.
    assert!(s.k_barrier(&l, 0).is_none());
    assert_eq!(s.runnable().to_vec(), vec![1]);
    s = s.step(&l, 1).unwrap().0;
    let b = s.k_barrier(&l, 0).expect("K-BARRIER enabled");
    assert_eq!((b.group, b.epoch, b.divergence), (0, 1, None));
    assert_eq!(s.runnable().to_vec(), vec![0, 1]);
}

#[test]
fn k_barrier_fires_with_terminated_threads_and_reports_divergence() {
    // The paper's MPI-style rule: terminated threads do not block the barrier.
    let l = launch(
        "kernel k(local int a[2]) { if (tid == 0) { barrier(); } a[tid] = 1; }",
        1,
        2,
    );
    let out = run_canonical(&l);
    assert_eq!(out.divergences.len(), 1);
    assert_eq!(ints(&l, &out.memory, "a"), vec![1, 1]);
}

#[test]
fn barriers_synchronise_one_work_group_only() {
    // Group 1 can run to completion while group 0 waits at its barrier.
    let l = launch(
        "kernel k(global int a[4]) { a[gid] = 1; barrier(); a[gid] = 2; }",
        2,
        2,
    );
    let mut s = State::initial(&l);
    s = s.step(&l, 0).unwrap().0; // group 0, thread 0 at the barrier
    for t in [2, 3, 2, 3] {
        s.fire_ready_barriers(&l);
        s = s.step(&l, t).unwrap().0;
    }
    assert_eq!(s.status(&l, 2), interp::reference::ThreadStatus::Terminated);
    assert_eq!(s.status(&l, 0), interp::reference::ThreadStatus::AtBarrier);
}

fn race_kinds(src: &str, groups: usize, local: usize) -> Vec<(AccessKind, AccessKind)> {
    let l = launch(src, groups, local);
    run_canonical(&l)
        .races
        .iter()
        .map(|r| (r.first.kind, r.second.kind))
        .collect()
}

#[test]
fn race_read_then_write() {
    assert_eq!(
        race_kinds(
            "kernel k(local int a[2]) { if (tid == 0) { int x = a[1]; } else { a[1] = 5; } }",
            1,
            2
        ),
        vec![(AccessKind::Read, AccessKind::Write)]
    );
}

#[test]
fn race_write_then_read() {
    assert_eq!(
        race_kinds(
            "kernel k(local int a[2]) { if (tid == 0) { a[1] = 5; } else { int x = a[1]; } }",
            1,
            2
        ),
        vec![(AccessKind::Write, AccessKind::Read)]
    );
}

#[test]
fn race_write_write() {
    assert_eq!(
        race_kinds("kernel k(local int a[2]) { a[0] = tid; }", 1, 2),
        vec![(AccessKind::Write, AccessKind::Write)]
    );
}

#[test]
fn no_race_within_one_thread() {
    assert!(race_kinds(
        "kernel k(local int a[2]) { a[tid] = 1; a[tid] = a[tid] + 1; }",
        1,
        2
    )
    .is_empty());
}

#[test]
fn no_race_for_two_reads() {
    assert!(race_kinds(
        "kernel k(local int a[2], local int b[2]) { b[tid] = a[0]; }",
        1,
        2
    )
    .is_empty());
}

#[test]
fn no_race_across_a_barrier() {
    assert!(race_kinds(
        "kernel k(local int a[2]) { a[tid] = tid; barrier(); int x = a[1 - tid]; barrier(); a[tid] = x; }",
        1,
        2
    )
    .is_empty());
}

#[test]
fn race_between_work_groups_despite_barriers() {
    // Barriers order threads of one group only: group 0 and group 1 race on a[0].
    let kinds = race_kinds("kernel k(global int a[1]) { if (tid == 0) { barrier(); a[0] = group_id; } else { barrier(); } }", 2, 2);
    assert_eq!(kinds, vec![(AccessKind::Write, AccessKind::Write)]);
}

#[test]
fn local_arrays_are_per_group_so_groups_do_not_race_on_them() {
    assert!(race_kinds(
        "kernel k(local int a[1]) { if (tid == 0) { a[0] = group_id; } }",
        2,
        2
    )
    .is_empty());
}

#[test]
fn a_race_is_found_in_any_schedule_that_has_it() {
    // Under every random schedule the write/write race on a[0] is reported.
    let l = launch("kernel k(local int a[1]) { a[0] = tid; }", 1, 3);
    for seed in 0..20u64 {
        let mut rng = seed;
        let out = run(
            &l,
            |_, r| {
                rng = rng
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                r.nth((rng >> 33) as usize % r.len())
            },
            &mut Quiet,
        );
        assert_eq!(out.races.len(), 1, "seed {seed}");
    }
}

#[test]
fn faults_name_thread_and_values() {
    let l = launch("kernel k(local int a[4]) { a[tid + 2] = 1; }", 1, 4);
    let f = run_canonical(&l).fault.expect("out of bounds");
    assert_eq!(f.thread.map(|t| t.local), Some(2));
    assert!(f.to_string().contains("a[4]"), "{f}");
    let l = launch("kernel k(local int a[2]) { a[tid] = 10 / tid; }", 1, 2);
    let f = run_canonical(&l).fault.expect("division by zero");
    assert!(f.to_string().contains("division by zero (10 / 0)"), "{f}");
    let l = launch(
        "kernel k(local int a[2]) { a[tid] = 1 << (tid + 31); }",
        1,
        2,
    );
    let f = run_canonical(&l).fault.expect("shift");
    assert!(f.to_string().contains("shift count 32"), "{f}");
    let l = launch(
        "kernel k(local int a[1]) { while (true) { a[0] = 1; } }",
        1,
        1,
    );
    let opts = LaunchOptions {
        local_size: Some(1),
        max_steps: Some(100),
        ..LaunchOptions::default()
    };
    let l = Launch::new(l.kernel.clone(), &opts).unwrap();
    let f = run_canonical(&l).fault.expect("step bound");
    assert!(
        f.to_string().contains("did not terminate within 100 steps"),
        "{f}"
    );
}

#[test]
fn ints_wrap_as_on_devices() {
    let l = launch(
        "kernel k(local int a[3], local uint b[2]) { a[0] = 2147483647 + 1; a[1] = -2147483648 / -1; a[2] = (int)(0u - 1u); b[0] = 0u - 1u; b[1] = (uint)-1 >> 31; }",
        1,
        1,
    );
    let out = run_canonical(&l);
    assert!(out.fault.is_none());
    assert_eq!(ints(&l, &out.memory, "a"), vec![i32::MIN, i32::MIN, -1]);
    let b = l.kernel.array("b").unwrap();
    assert_eq!(
        out.memory.arrays[b][0],
        vec![Value::Uint(u32::MAX), Value::Uint(1)]
    );
}

#[test]
fn consecutive_barriers_fire_one_after_the_other() {
    let l = launch(
        "kernel k(local int a[4]) { barrier(); barrier(); a[tid] = 1; }",
        1,
        4,
    );
    let out = run_canonical(&l);
    assert_eq!(out.steps, 4);
    assert_eq!(ints(&l, &out.memory, "a"), vec![1, 1, 1, 1]);
}
