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

/// Every correct prefix sum, at every size from its smallest up to 2^8, under the
/// canonical, round-robin and two random schedules, on an input that depends on the size
/// and seed, computes the sequential prefix sum with no race, fault or divergence.
#[test]
fn prefix_sum_examples_compute_the_sequential_prefix_sum() {
    let mut checked = 0;
    for (file, exclusive, min_log) in SCANS {
        let k = example(file);
        for log_n in min_log..=8 {
            let n = 1usize << log_n;
            for (s, scheduler) in [
                Scheduler::Canonical,
                Scheduler::RoundRobin,
                Scheduler::Random { seed: 1 },
                Scheduler::Random { seed: 0x9E37_79B9 },
            ]
            .into_iter()
            .enumerate()
            {
                let seed = (log_n as u64) << 8 | s as u64;
                let input: Vec<i32> = (0..n as u64)
                    .map(|i| ((seed ^ (i * 0x9E37_79B9)) % 1000) as i32 - 500)
                    .collect();
                let l = launch(&k, n, &input);
                let (out, _) = sim::run(&l, &scheduler, &mut interp::exec::Quiet);
                assert!(
                    out.is_clean(),
                    "{file} n={n} {scheduler:?}: {:?} {:?} {:?}",
                    out.races.first(),
                    out.fault,
                    out.divergences.first()
                );
                assert_eq!(
                    out_ints(&l, &out),
                    scan(&input, exclusive),
                    "{file} n={n} {scheduler:?}"
                );
                checked += 1;
            }
        }
    }
    // 7 kernels, 8 or 9 sizes each, 4 schedules.
    assert_eq!(checked, 4 * (9 + 8 * 5 + 9));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Random inputs (any 32-bit values, wrapping) at random sizes up to 2^10 on the
    /// canonical schedule: the result does not depend on the values.
    #[test]
    fn prefix_sum_examples_are_right_for_any_input(
        which in 0..SCANS.len(),
        log_n in 0u32..=10,
        input in prop::collection::vec(any::<i32>(), 1024),
    ) {
        let (file, exclusive, min_log) = SCANS[which];
        let n = 1usize << log_n.max(min_log);
        let input = &input[..n];
        let k = example(file);
        let l = launch(&k, n, input);
        let (out, _) = sim::run(&l, &Scheduler::Canonical, &mut interp::exec::Quiet);
        prop_assert!(out.is_clean(), "{file} n={n}");
        prop_assert_eq!(out_ints(&l, &out), scan(input, exclusive), "{} n={}", file, n);
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

/// At every size 2^0..2^8 and every scheduler, with about half the elements zero: the
/// nonzero elements, in order, at the front of `out`.
#[test]
fn stream_compaction_keeps_the_nonzero_elements_in_order() {
    let k = example("stream_compaction.ksim");
    for log_n in 0..=8 {
        let n = 1usize << log_n;
        let input: Vec<i32> = (0..n as i32)
            .map(|i| {
                if (i * 7 + log_n) % 3 == 0 {
                    0
                } else {
                    i * 5 - 40
                }
            })
            .collect();
        let kept: Vec<i32> = input.iter().copied().filter(|&x| x != 0).collect();
        for scheduler in [
            Scheduler::Canonical,
            Scheduler::RoundRobin,
            Scheduler::Random { seed: 3 },
        ] {
            let l = launch(&k, n, &input);
            let (out, _) = sim::run(&l, &scheduler, &mut interp::exec::Quiet);
            assert!(out.is_clean(), "n={n} {scheduler:?}");
            assert_eq!(
                &out_ints(&l, &out)[..kept.len()],
                &kept[..],
                "n={n} {scheduler:?}"
            );
        }
    }
}

/// Every size 1..=40 (any n works), canonical and round-robin: array[i] = old[(i+1) % n].
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
    for n in 1..=40usize {
        let opts = LaunchOptions {
            defines: vec![("n".into(), n.to_string())],
            inputs: vec![(a.clone(), "iota".into())],
            ..LaunchOptions::default()
        };
        let l = Launch::new(k.clone(), &opts).unwrap();
        for scheduler in [Scheduler::Canonical, Scheduler::RoundRobin] {
            let (out, _) = sim::run(&l, &scheduler, &mut interp::exec::Quiet);
            assert!(out.is_clean(), "n={n}: {:?}", out.races.first());
            let idx = k.array(&a).unwrap();
            let want: Vec<Value> = (0..n).map(|i| Value::Int(((i + 1) % n) as i32)).collect();
            assert_eq!(out.memory.arrays[idx][0], want, "n={n} {scheduler:?}");
        }
    }
}
