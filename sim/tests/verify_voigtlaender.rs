//! Voigtländer's tests: their number and shape (POPL 2014 Table 4 counts), a brute-force
//! check of the derivation in `sim::verify::voigtlaender` on every short word, and
//! agreement with the interval test on every example and on synthetic broken kernels.

use interp::launch::{Launch, LaunchOptions};
use sim::verify::demo::list_demo;
use sim::verify::voigtlaender::{
    f1, f2, run_tests, test_at, test_count, tests, VoigtOptions, VoigtTest,
};
use sim::verify::{interval_test, ScanArrays, ScanKind, Verdict};
use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;

#[test]
fn test_counts_match_table_4() {
    for n in 1..200usize {
        assert_eq!(test_count(n), (n * (n + 1) / 2 + n - 1) as u64);
    }
    assert_eq!(test_count(1 << 9), 131_839);
    assert_eq!(test_count(1 << 10), 525_823);
}

#[test]
fn tests_are_the_h1_and_h2_inputs_each_once() {
    for n in 1..=40usize {
        let all: Vec<VoigtTest> = tests(n).collect();
        let set: HashSet<_> = all.iter().copied().collect();
        assert_eq!(set.len() as u64, test_count(n), "n = {n}: duplicates");
        let f1s = all
            .iter()
            .filter(|t| matches!(t, VoigtTest::F1 { .. }))
            .count();
        assert_eq!(f1s, n * (n + 1) / 2);
        for t in &all {
            let input = t.input(n);
            match *t {
                VoigtTest::F1 { k, i } => {
                    assert!(i <= k && k < n);
                    let want: Vec<u8> = (0..n)
                        .map(|j| {
                            if j == i {
                                1
                            } else if j <= k {
                                0
                            } else {
                                2
                            }
                        })
                        .collect();
                    assert_eq!(input, want);
                    // The proof's observation: out[k] is 1.
                    assert_eq!(t.expected(n, ScanKind::Inclusive)[k], 1);
                }
                VoigtTest::F2 { i } => {
                    assert!(i + 1 < n);
                    let mut want = vec![0u8; n];
                    want[i] = 1;
                    want[i + 1] = 2;
                    assert_eq!(input, want);
                }
            }
        }
    }
    // Order: f2 first, then f1 by k, then i.
    assert_eq!(test_at(4, 0), VoigtTest::F2 { i: 0 });
    assert_eq!(test_at(4, 3), VoigtTest::F1 { k: 0, i: 0 });
    assert_eq!(test_at(4, 4), VoigtTest::F1 { k: 1, i: 0 });
    assert_eq!(test_at(4, 12), VoigtTest::F1 { k: 3, i: 3 });
}

/// A symbol of the word a kernel computes at one output: an input cell, or a cell the
/// kernel never wrote (2 in every test).
#[derive(Clone, Copy, Debug)]
enum Sym {
    In(usize),
    Garbage,
}

fn fold(op: fn(u8, u8) -> u8, word: &[Sym], test: VoigtTest) -> u8 {
    word.iter().fold(0, |acc, s| {
        op(
            acc,
            match s {
                Sym::In(j) => test.input_at(*j),
                Sym::Garbage => 2,
            },
        )
    })
}

/// The heart of the method (Voigtländer's Lemma 4, with the two kernel adaptations): for
/// every word w of length <= n + 1 over the n input cells and an unwritten cell, and every
/// output position k, all tests give the right value at k iff w is the right prefix.
#[test]
fn the_tests_pin_down_every_short_word() {
    for n in 1..=4usize {
        let alphabet: Vec<Sym> = (0..n).map(Sym::In).chain([Sym::Garbage]).collect();
        let mut words: Vec<Vec<Sym>> = vec![vec![]];
        let mut frontier = words.clone();
        for _ in 0..=n {
            frontier = frontier
                .iter()
                .flat_map(|w| {
                    alphabet.iter().map(move |s| {
                        let mut w = w.clone();
                        w.push(*s);
                        w
                    })
                })
                .collect();
            words.extend(frontier.iter().cloned());
        }
        for kind in [ScanKind::Inclusive, ScanKind::Exclusive] {
            for k in 0..n {
                let want: Vec<usize> = match kind {
                    ScanKind::Inclusive => (0..=k).collect(),
                    ScanKind::Exclusive => (0..k).collect(),
                };
                for w in &words {
                    let is_right = w.len() == want.len()
                        && w.iter()
                            .zip(&want)
                            .all(|(s, j)| matches!(s, Sym::In(x) if x == j));
                    let passes = tests(n).all(|t| {
                        let op = match t {
                            VoigtTest::F1 { .. } => f1,
                            VoigtTest::F2 { .. } => f2,
                        };
                        fold(op, w, t) == t.expected(n, kind)[k]
                    });
                    assert_eq!(passes, is_right, "n = {n}, {kind}, k = {k}, word {w:?}");
                }
            }
        }
    }
}

fn load_source(
    text: &str,
    n: usize,
) -> (Arc<lang::core::Kernel>, LaunchOptions, Launch, ScanArrays) {
    let kernel = Arc::new(
        lang::parse::parse(text)
            .and_then(|k| lang::check::check(&k))
            .unwrap_or_else(|d| panic!("does not check: {d:?}")),
    );
    let opts = LaunchOptions {
        defines: vec![("n".into(), n.to_string())],
        ..LaunchOptions::default()
    };
    let launch = Launch::new(kernel.clone(), &opts).unwrap();
    let arrays = ScanArrays::find(&launch, "in", "out").unwrap();
    (kernel, opts, launch, arrays)
}

fn example(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../examples/{name}.ksim"));
    std::fs::read_to_string(path).unwrap()
}

/// Both methods, as (interval verdict, Voigtländer verdict).
fn both(text: &str, n: usize, kind: ScanKind) -> (Verdict, Verdict) {
    let (_, _, launch, arrays) = load_source(text, n);
    let i = interval_test(&launch, &arrays, kind).verdict;
    let v = run_tests(&launch, &arrays, kind, &VoigtOptions::default())
        .verdict
        .expect("no timeout");
    (i, v)
}

#[test]
fn methods_agree_on_every_example() {
    let cases = [
        ("sequential_scan", ScanKind::Inclusive, true),
        ("kogge_stone", ScanKind::Inclusive, true),
        ("sklansky", ScanKind::Inclusive, true),
        ("brent_kung", ScanKind::Inclusive, true),
        ("blelloch", ScanKind::Exclusive, true),
        ("blelloch_tree1d", ScanKind::Exclusive, true),
        ("blelloch_tree2d", ScanKind::Exclusive, true),
        ("blelloch_commuted", ScanKind::Exclusive, false),
        ("scan_off_by_one", ScanKind::Inclusive, false),
        ("kogge_stone_racy", ScanKind::Inclusive, false),
        ("blelloch_missing_barrier", ScanKind::Exclusive, false),
    ];
    for (name, kind, correct) in cases {
        let text = example(name);
        for n in [2usize, 4, 8, 16, 32] {
            let (i, v) = both(&text, n, kind);
            assert_eq!(i.name(), v.name(), "{name} at n = {n}: {i:?} vs {v:?}");
            if correct {
                assert!(v.is_verified(), "{name} at n = {n}: {v:?}");
            } else if n >= 4 {
                // Every broken example fails from n = 4 on (blelloch_commuted and the racy
                // ones are right, and race-free, at n = 2).
                assert!(
                    !v.is_verified(),
                    "{name} at n = {n} passed all Voigtländer tests"
                );
            }
        }
    }
}

#[test]
fn blelloch_commuted_fails_an_f2_test_only() {
    // f1 is commutative, so only the order test can see the swapped operands.
    let (_, _, launch, arrays) = load_source(&example("blelloch_commuted"), 8);
    let r = run_tests(
        &launch,
        &arrays,
        ScanKind::Exclusive,
        &VoigtOptions::default(),
    );
    assert!(matches!(r.verdict, Some(Verdict::Wrong(_))));
    assert_eq!(r.failing, Some(VoigtTest::F2 { i: 1 }));
    // And every f1 test passes.
    for t in tests(8).filter(|t| matches!(t, VoigtTest::F1 { .. })) {
        let (result, _) =
            sim::verify::voigtlaender::run_test(&launch, &arrays, ScanKind::Exclusive, t, false, 1);
        assert!(result.is_ok(), "{t}");
    }
}

/// Reads out[0] before writing it: right under `ksim run` (memory starts at the identity),
/// wrong on a device (undefined memory). The interval test sees ⊤, the Voigtländer tests
/// see 2, the list demonstration cannot show it.
const UNINIT: &str = "
kernel uninit(const local T in[n], local T out[n]) launch(groups = 1, local_size = 1) {
    out[0] = out[0] ⊕ in[0];
    for (int i = 1; i < n; i++) { out[i] = out[i - 1] ⊕ in[i]; }
}";

/// Adds in[0] twice into the last element.
const TWICE: &str = "
kernel twice(const local T in[n], local T out[n]) launch(groups = 1, local_size = 1) {
    out[0] = in[0];
    for (int i = 1; i < n; i++) { out[i] = out[i - 1] ⊕ in[i]; }
    out[n - 1] = in[0] ⊕ out[n - 1];
}";

/// Skips in[1] in every element from 1 on.
const SKIP: &str = "
kernel skip(const local T in[n], local T out[n]) launch(groups = 1, local_size = 1) {
    out[0] = in[0];
    out[1] = in[0];
    for (int i = 2; i < n; i++) { out[i] = out[i - 1] ⊕ in[i]; }
}";

/// Reverses the order of two summands, only at the last element.
const SWAP_LAST: &str = "
kernel swap_last(const local T in[n], local T out[n]) launch(groups = 1, local_size = 1) {
    out[0] = in[0];
    for (int i = 1; i < n - 1; i++) { out[i] = out[i - 1] ⊕ in[i]; }
    out[n - 1] = in[n - 1] ⊕ out[n - 2];
}";

#[test]
fn methods_agree_on_synthetic_broken_kernels() {
    for (name, text, first_wrong) in [
        ("uninit", UNINIT, Some(0)),
        ("twice", TWICE, None),
        ("skip", SKIP, Some(1)),
        ("swap_last", SWAP_LAST, None),
    ] {
        for n in [2usize, 3, 5, 8, 16] {
            let (i, v) = both(text, n, ScanKind::Inclusive);
            let Verdict::Wrong(ce) = &i else {
                panic!("{name} at n = {n}: interval says {i:?}")
            };
            assert_eq!(ce.index, first_wrong.unwrap_or(n - 1), "{name} at n = {n}");
            assert!(
                matches!(v, Verdict::Wrong(_)),
                "{name} at n = {n}: Voigtländer says {v:?}"
            );
        }
    }
}

#[test]
fn list_demo_shows_what_a_user_would_see() {
    // blelloch_commuted at n = 8: out[3] = [2 0 1].
    let (kernel, opts, _, _) = load_source(&example("blelloch_commuted"), 8);
    let d = list_demo(&kernel, &opts, "in", "out", ScanKind::Exclusive).unwrap();
    assert!(!d.shrunk);
    let (k, found, expected) = d.wrong.unwrap();
    assert_eq!(k, 3);
    assert_eq!(found.to_string(), "[2 0 1]");
    assert_eq!(expected.to_string(), "[0 1 2]");
    // scan_off_by_one at n = 2^12 is shown at the smallest failing size, n = 2.
    let (kernel, opts, _, _) = load_source(&example("scan_off_by_one"), 1 << 12);
    let d = list_demo(&kernel, &opts, "in", "out", ScanKind::Inclusive).unwrap();
    assert!(d.shrunk);
    assert_eq!(d.n, 2);
    let (k, found, _) = d.wrong.unwrap();
    assert_eq!((k, found.to_string()), (1, "[1]".to_string()));
    // The uninitialised read is invisible to a run that starts memory at the identity.
    let (kernel, opts, _, _) = load_source(UNINIT, 8);
    let d = list_demo(&kernel, &opts, "in", "out", ScanKind::Inclusive).unwrap();
    assert!(d.wrong.is_none());
}

#[test]
fn timeout_reports_how_far_it_got() {
    // 8.4 million tests of 4096 threads: no machine runs them in 200 ms, so the timeout
    // fires however fast the machine (the test asserts no time, only the count).
    let (_, _, launch, arrays) = load_source(&example("kogge_stone"), 4096);
    let r = run_tests(
        &launch,
        &arrays,
        ScanKind::Inclusive,
        &VoigtOptions {
            timeout: Some(std::time::Duration::from_millis(200)),
            ..VoigtOptions::default()
        },
    );
    assert!(r.timed_out());
    assert!(r.passed < r.total, "{} of {}", r.passed, r.total);
    assert_eq!(r.total, test_count(4096));
}
