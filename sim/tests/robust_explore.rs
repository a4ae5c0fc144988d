//! Robustness of the explorers (issue 13): executions cut by the step bound, interruption
//! inside one long execution, races handed out as soon as they are found.

use interp::{Launch, LaunchOptions};
use sim::explore::{
    enumerate, exhaustive, naive, pct, random, Config, FoundRace, Incomplete, Verdict,
};
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::sync::Mutex;

fn compile(src: &str, local: usize, max_steps: u64) -> Launch {
    let k = lang::parse::parse(src)
        .and_then(|k| lang::check::check(&k))
        .expect("valid kernel");
    let opts = LaunchOptions {
        local_size: Some(local),
        max_steps: Some(max_steps),
        ..Default::default()
    };
    Launch::new(Arc::new(k), &opts).expect("launch")
}

/// Thread 0 never terminates; threads 1 and 2 race on `a[0]` (issue 13, item 1).
const SPIN_THEN_RACE: &str = "kernel looper(global int a[1]) {\n\
    if (tid == 0) { int i = 0; while (i >= 0) { i = i + 1; if (i > 1000) i = 0; } }\n\
    if (tid == 1) a[0] = 1;\n\
    if (tid == 2) a[0] = 2;\n}\n";

#[test]
fn a_thread_at_the_step_bound_does_not_hide_the_race_of_the_others() {
    // The default step bound of `explore` for 4 threads, and small ones the naive explorer
    // can cover.
    for (local, bound) in [(4, 104_000), (3, 12), (3, 16)] {
        let l = compile(SPIN_THEN_RACE, local, bound);
        let e = exhaustive(&l, &Config::default(), None);
        assert_eq!(e.verdict, Verdict::Exhaustive, "bound {bound}");
        assert_eq!(e.races.len(), 1, "bound {bound}: {e:?}");
        assert!(e.non_terminating > 0);
        if bound < 100 {
            let n = naive(&l, &Config::default(), None);
            assert_eq!(n.verdict, Verdict::Exhaustive);
            assert_eq!(e.race_keys(), n.race_keys(), "bound {bound}");
            assert_eq!(e.final_memories(), n.final_memories(), "bound {bound}");
            let en = enumerate(&l, &Config::default());
            assert_eq!(e.race_keys(), en.race_keys(), "bound {bound}");
        }
    }
}

/// Every thread spins until the step bound.
const SPIN: &str = "kernel spin(global int a[1]) {\n\
    int i = 0; while (i >= 0) { i = i + 1; if (i > 1000) i = 0; }\n}\n";

/// Sets `flag` a moment after the exploration has started.
fn interrupt_soon(flag: &'static AtomicBool) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(200));
        flag.store(true, Ordering::SeqCst);
    })
}

#[test]
fn an_interrupt_stops_one_long_execution() {
    // Five million steps per execution: minutes of work if the flag were only looked at
    // between executions.
    let l = compile(SPIN, 2, 5_000_000);
    // (Not the naive explorer: it recurses once per step, and is meant for short runs.)
    for which in ["random", "pct", "exhaustive"] {
        let flag: &'static AtomicBool = Box::leak(Box::new(AtomicBool::new(false)));
        let cfg = Config {
            interrupt: Some(flag),
            ..Default::default()
        };
        let waker = interrupt_soon(flag);
        let s = match which {
            "random" => random(&l, 1, 0, &cfg, None),
            "pct" => pct(&l, 1, 2, 0, &cfg, None),
            _ => exhaustive(&l, &cfg, None),
        };
        waker.join().unwrap();
        assert_eq!(
            s.verdict,
            Verdict::Incomplete(Incomplete::Interrupted),
            "{which}: {s:?}"
        );
        assert_eq!(s.non_terminating, 0, "{which}: the bound was not reached");
        assert!(s.steps < 5_000_000, "{which}: {} steps", s.steps);
    }
}

#[test]
fn a_huge_pct_depth_draws_at_most_one_change_point_per_step() {
    let l = compile(SPIN_THEN_RACE, 3, 200);
    let s = pct(&l, 4, u32::MAX, 0, &Config::default(), None);
    assert_eq!(s.complete, 4);
}

#[test]
fn each_race_is_handed_out_when_it_is_found() {
    let l = compile(SPIN_THEN_RACE, 3, 16);
    let seen = Mutex::new(Vec::new());
    let sink = |r: &FoundRace| seen.lock().unwrap().push(r.race.key());
    let cfg = Config {
        on_race: Some(&sink),
        ..Default::default()
    };
    for which in ["exhaustive", "naive", "random"] {
        let s = match which {
            "exhaustive" => exhaustive(&l, &cfg, None),
            "naive" => naive(&l, &cfg, None),
            _ => random(&l, 50, 1, &cfg, None),
        };
        let got: HashSet<_> = std::mem::take(&mut *seen.lock().unwrap())
            .into_iter()
            .collect();
        assert_eq!(got, s.race_keys());
        assert_eq!(got.len(), 1);
    }
}

#[test]
fn schedules_from_files_are_checked() {
    use sim::Schedule;
    let s = |runs: Vec<(usize, u64)>| Schedule { runs };
    let mut l = compile(
        "kernel k(local int A[4]) launch(groups = 1, local_size = 2) { A[tid] = 1; }",
        2,
        100,
    );
    assert_eq!(s(vec![(0, 2), (1, 3)]).check(&l), Ok(5));
    assert!(s(vec![]).check(&l).unwrap_err().contains("empty"));
    assert!(s(vec![(7, 1)]).check(&l).unwrap_err().contains("thread 7"));
    assert!(s(vec![(0, 0)]).check(&l).unwrap_err().contains("0 steps"));
    let huge = s(vec![(0, u64::MAX), (1, u64::MAX)]);
    assert!(huge.check(&l).unwrap_err().contains("2^64"));
    assert_eq!(huge.len(), u64::MAX);
    // Under --warp-size the schedule names warps: 2 threads in warps of 2 are 1 warp.
    l.warp_size = Some(2);
    assert_eq!(s(vec![(0, 4)]).check(&l), Ok(4));
    let e = s(vec![(1, 1)]).check(&l).unwrap_err();
    assert!(
        e.contains("warp 1, but the launch has only 1 warp (0..1)"),
        "{e}"
    );
}

#[test]
fn threads_spinning_on_their_own_data_are_one_execution() {
    // Only threads whose pending steps conflict are scheduled again at the bound.
    let l = compile(SPIN, 8, 3000);
    let e = exhaustive(&l, &Config::default(), None);
    assert_eq!(e.verdict, Verdict::Exhaustive);
    assert_eq!(e.complete, 1, "{e:?}");
    assert_eq!(e.non_terminating, 1);
}
