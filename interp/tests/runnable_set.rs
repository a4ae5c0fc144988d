//! The reference engine keeps the runnable threads and the per-group status counts up to
//! date as threads step and barriers fire (instead of scanning every thread at every step).
//! Along random schedules of kernels with loops, divergent barriers and several groups,
//! the kept set must equal a scan of every thread's status, its order queries must agree
//! with the sorted list, barriers must fire exactly when a scan says they are enabled, and
//! a schedule is recorded run-length encoded (an execution keeps nothing per step).

use interp::exec::{run, Quiet};
use interp::launch::{Launch, LaunchOptions};
use interp::reference::{State, ThreadStatus};
use proptest::prelude::*;
use std::sync::Arc;

fn launch(src: &str, groups: usize, local: usize, max_steps: Option<u64>) -> Launch {
    let k = lang::check::compile(src).unwrap_or_else(|d| panic!("{d:?}"));
    let opts = LaunchOptions {
        groups: Some(groups),
        local_size: Some(local),
        max_steps,
        ..LaunchOptions::default()
    };
    Launch::new(Arc::new(k), &opts).expect("launch")
}

const KERNELS: &[&str] = &[
    "kernel k(global int a[64]) { int i = 0; while (i < tid % 3) { a[gid] = i; i = i + 1; barrier(); } }",
    "kernel k(local int a[64]) { if (tid % 2 == 0) { barrier(); } else { a[tid] = 1; barrier(); barrier(); } }",
    "kernel k(local int a[64]) { if (tid == 1) { a[0] = 1; } else { barrier(); barrier(); a[tid] = 2; } }",
    "kernel k(global int a[64]) { barrier(); a[gid] = tid; barrier(); }",
];

fn scan(l: &Launch, s: &State) -> Vec<usize> {
    (0..l.threads())
        .filter(|&t| s.status(l, t) == ThreadStatus::Runnable)
        .collect()
}

/// Whether a scan says the barrier of `g` is enabled.
fn enabled(l: &Launch, s: &State, g: usize) -> bool {
    let range = g * l.local_size..(g + 1) * l.local_size;
    let st: Vec<ThreadStatus> = range.map(|t| s.status(l, t)).collect();
    !st.contains(&ThreadStatus::Runnable) && st.contains(&ThreadStatus::AtBarrier)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    #[test]
    fn the_runnable_set_is_a_scan(
        kernel in 0..KERNELS.len(),
        groups in 1..4usize,
        local in 1..6usize,
        picks in prop::collection::vec(any::<u32>(), 0..80),
    ) {
        let l = launch(KERNELS[kernel], groups, local, None);
        let mut s = State::initial(&l);
        for pick in picks {
            let ready: Vec<usize> = (0..groups).filter(|&g| enabled(&l, &s, g)).collect();
            let fired: Vec<usize> = s.fire_ready_barriers(&l).iter().map(|b| b.group).collect();
            prop_assert_eq!(fired, ready);
            let r = s.runnable();
            let want = scan(&l, &s);
            prop_assert_eq!(r.to_vec(), want.clone());
            prop_assert_eq!(r.len(), want.len());
            prop_assert_eq!(r.first(), want.first().copied());
            for (k, &t) in want.iter().enumerate() {
                prop_assert_eq!(r.nth(k), Some(t));
                prop_assert!(r.contains(t));
            }
            prop_assert_eq!(r.nth(want.len()), None);
            for t in 0..l.threads() {
                prop_assert_eq!(r.next_after(t), want.iter().copied().find(|&u| u > t));
            }
            prop_assert_eq!(s.is_final(), (0..l.threads()).all(|t| s.status(&l, t) == ThreadStatus::Terminated));
            if want.is_empty() {
                break;
            }
            let t = want[pick as usize % want.len()];
            match s.step(&l, t) {
                Ok((next, _)) => s = next,
                Err(_) => break,
            }
        }
    }
}

#[test]
fn a_schedule_is_recorded_run_length_encoded() {
    let l = launch(
        "kernel k(local int a[1]) { int i = 0; while (i >= 0) { i = i + 1; if (i > 1000) { i = 0; } } }",
        1,
        1,
        Some(1_000_000),
    );
    let out = run(&l, |_, r| r.first(), &mut Quiet);
    assert_eq!(out.steps, 1_000_000);
    assert_eq!(out.schedule.runs, vec![(0, 1_000_000)]);
}

#[test]
fn a_barrier_diverging_in_a_loop_is_reported_once() {
    // Thread 1 terminates; thread 0 waits at the barrier forever: every firing diverges.
    let l = launch(
        "kernel k(local int a[1]) { if (tid == 0) { while (tid == 0) { barrier(); } } }",
        1,
        2,
        Some(10_000),
    );
    let out = run(&l, |_, r| r.first(), &mut Quiet);
    assert_eq!(out.steps, 10_000);
    assert_eq!(out.divergences.len(), 1);
}
