//! Every example parses and type-checks; every correct prefix sum computes the sequential
//! prefix sum under canonical, round-robin and random schedules (proptest over inputs and
//! sizes); every broken example fails the way its header says.

use interp::exec::{run_canonical, Outcome};
use interp::launch::{Launch, LaunchOptions};
use interp::{Monoid, Value};
use proptest::prelude::*;
use sim::Scheduler;
use std::path::PathBuf;
use std::sync::Arc;

fn example(name: &str) -> Arc<lang::core::Kernel> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("examples")
        .join(name);
    let src = std::fs::read_to_string(&path).expect("example exists");
    Arc::new(lang::check::compile(&src).unwrap_or_else(|d| panic!("{name}: {d:?}")))
}

fn launch(kernel: &Arc<lang::core::Kernel>, n: usize, input: &[i32]) -> Launch {
    let spec = input
        .iter()
        .map(|v| v.to_string())
        .collect::<Vec<_>>()
        .join(",");
    let opts = LaunchOptions {
        defines: vec![("n".into(), n.to_string())],
        inputs: vec![("in".into(), spec)],
        ..LaunchOptions::default()
    };
    Launch::new(kernel.clone(), &opts).expect("launch")
}

fn out_ints(l: &Launch, out: &Outcome) -> Vec<i32> {
    let a = l.kernel.array("out").expect("out");
    out.memory.arrays[a][0]
        .iter()
        .map(|v| match v {
            Value::Int(x) => *x,
            other => panic!("{other:?}"),
        })
        .collect()
}

fn scan(input: &[i32], exclusive: bool) -> Vec<i32> {
    let mut acc = 0i32;
    input
        .iter()
        .map(|&x| {
            let before = acc;
            acc = acc.wrapping_add(x);
            if exclusive {
                before
            } else {
                acc
            }
        })
        .collect()
}

/// (file, exclusive, smallest n)
const SCANS: [(&str, bool, u32); 7] = [
    ("kogge_stone.ksim", false, 0),
    ("sklansky.ksim", false, 1),
    ("brent_kung.ksim", false, 1),
    ("blelloch.ksim", true, 1),
    ("blelloch_tree1d.ksim", true, 1),
    ("blelloch_tree2d.ksim", true, 1),
    ("sequential_scan.ksim", false, 0),
];

#[test]
fn every_example_parses_and_type_checks() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut count = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "ksim") {
            example(path.file_name().unwrap().to_str().unwrap());
            count += 1;
        }
    }
    assert!(count >= 13, "only {count} examples");
}

fn schedule_strategy() -> impl Strategy<Value = Scheduler> {
    prop_oneof![
        Just(Scheduler::Canonical),
        Just(Scheduler::RoundRobin),
        any::<u64>().prop_map(|seed| Scheduler::Random { seed }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn prefix_sum_examples_compute_the_sequential_prefix_sum(
        which in 0..SCANS.len(),
        log_n in 0u32..=8,
        seed in any::<u64>(),
        scheduler in schedule_strategy(),
    ) {
        let (file, exclusive, min_log) = SCANS[which];
        let n = 1usize << log_n.max(min_log);
        let input: Vec<i32> = (0..n as u64).map(|i| ((seed ^ (i * 0x9E37_79B9)) % 1000) as i32 - 500).collect();
        let k = example(file);
        let l = launch(&k, n, &input);
        let (out, _) = sim::run(&l, &scheduler, &mut interp::exec::Quiet);
        prop_assert!(out.is_clean(), "{file} n={n}: {:?} {:?}", out.races.first(), out.fault);
        prop_assert_eq!(out_ints(&l, &out), scan(&input, exclusive), "{} n={} {:?}", file, n, scheduler);
    }
}

#[test]
fn kogge_stone_racy_races_between_the_read_and_the_write() {
    let k = example("kogge_stone_racy.ksim");
    let l = launch(&k, 8, &[0, 1, 2, 3, 4, 5, 6, 7]);
    let out = run_canonical(&l);
    assert!(!out.races.is_empty());
    let src = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/kogge_stone_racy.ksim"),
    )
    .unwrap();
    let lines: Vec<&str> = out
        .races
        .iter()
        .flat_map(|r| [r.first.span.clone(), r.second.span.clone()])
        .map(|s| src[s].trim())
        .collect();
    assert!(
        lines.iter().any(|l| l.contains("temp = out[tid - offset]")),
        "{lines:?}"
    );
    assert!(
        lines.iter().any(|l| l.contains("out[tid] = temp")),
        "{lines:?}"
    );
}

#[test]
fn blelloch_missing_barrier_races() {
    let k = example("blelloch_missing_barrier.ksim");
    for n in [4, 8, 16] {
        let l = launch(&k, n, &vec![1; n]);
        assert!(!run_canonical(&l).races.is_empty(), "n={n}");
    }
}

#[test]
fn scan_off_by_one_is_race_free_but_wrong() {
    let k = example("scan_off_by_one.ksim");
    let input: Vec<i32> = (0..8).collect();
    let l = launch(&k, 8, &input);
    let out = run_canonical(&l);
    assert!(out.is_clean());
    assert_ne!(out_ints(&l, &out), scan(&input, false));
}

#[test]
fn blelloch_commuted_is_right_for_integer_addition_only() {
    let k = example("blelloch_commuted.ksim");
    let input: Vec<i32> = (1..=8).collect();
    let l = launch(&k, 8, &input);
    let out = run_canonical(&l);
    assert_eq!(out_ints(&l, &out), scan(&input, true));
    // With list concatenation (non-commutative) the result is not the exclusive scan.
    let opts = LaunchOptions {
        defines: vec![("n".into(), "8".into())],
        inputs: vec![("in".into(), "iota".into())],
        monoid: Monoid::List,
        ..LaunchOptions::default()
    };
    let l = Launch::new(k, &opts).unwrap();
    let out = run_canonical(&l);
    let a = l.kernel.array("out").unwrap();
    let expected: Vec<Value> = (0..8u32).map(|i| Value::List((0..i).collect())).collect();
    assert_ne!(out.memory.arrays[a][0], expected);
}

#[test]
fn stream_compaction_keeps_the_nonzero_elements_in_order() {
    let k = example("stream_compaction.ksim");
    let input = [0, 5, 0, 0, 7, 1, 0, 9];
    let l = launch(&k, 8, &input);
    let out = run_canonical(&l);
    assert!(out.is_clean());
    assert_eq!(&out_ints(&l, &out)[..4], &[5, 7, 1, 9]);
}

#[test]
fn left_rotation_rotates_by_one() {
    let k = example("left_rotation.ksim");
    let a = k
        .arrays
        .iter()
        .find(|a| !a.is_const)
        .expect("an array")
        .name
        .clone();
    let opts = LaunchOptions {
        defines: vec![("n".into(), "8".into())],
        inputs: vec![(a.clone(), "iota".into())],
        ..LaunchOptions::default()
    };
    let l = Launch::new(k.clone(), &opts).unwrap();
    let out = run_canonical(&l);
    assert!(out.is_clean(), "{:?}", out.races.first());
    let idx = k.array(&a).unwrap();
    let got: Vec<Value> = out.memory.arrays[idx][0].clone();
    let want: Vec<Value> = (0..8).map(|i| Value::Int((i + 1) % 8)).collect();
    assert_eq!(got, want);
}
