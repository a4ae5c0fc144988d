//! `sim::verify` on the examples: every correct scan verifies for n = 2^1 .. 2^16 (one
//! interval test each, fast executor), and every broken one is rejected for the right
//! reason at the right index.

use interp::launch::{Launch, LaunchOptions};
use interp::{Interval, Value};
use sim::verify::{interval_test, IntervalReport, ScanArrays, ScanKind, Verdict};
use std::path::PathBuf;
use std::sync::Arc;

fn launch(name: &str, n: usize) -> (Launch, ScanArrays) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../examples/{name}.ksim"));
    let text = std::fs::read_to_string(&path).unwrap();
    let kernel = lang::parse::parse(&text)
        .and_then(|k| lang::check::check(&k))
        .unwrap_or_else(|_| panic!("{name} does not check"));
    let opts = LaunchOptions {
        defines: vec![("n".into(), n.to_string())],
        ..LaunchOptions::default()
    };
    let launch = Launch::new(Arc::new(kernel), &opts).unwrap();
    let arrays = ScanArrays::find(&launch, "in", "out").unwrap();
    (launch, arrays)
}

fn test(name: &str, n: usize, kind: ScanKind) -> IntervalReport {
    let (l, a) = launch(name, n);
    assert_eq!(a.n, n);
    interval_test(&l, &a, kind)
}

fn verifies_up_to_2_16(name: &str, kind: ScanKind) {
    for e in 1..=16 {
        let n = 1usize << e;
        let r = test(name, n, kind);
        assert!(
            r.verdict.is_verified(),
            "{name} at n = {n}: {:?}",
            r.verdict
        );
        assert_eq!(
            r.engine,
            sim::verify::Engine::Fast,
            "{name} ran on the reference engine"
        );
    }
    // And it is not the other kind of prefix sum.
    let other = match kind {
        ScanKind::Inclusive => ScanKind::Exclusive,
        ScanKind::Exclusive => ScanKind::Inclusive,
    };
    let r = test(name, 8, other);
    let Verdict::Wrong(ce) = r.verdict else {
        panic!("{name} as {other}: {:?}", r.verdict)
    };
    assert_eq!(ce.index, 0, "{name} as {other}");
}

#[test]
fn sequential_scan_verifies() {
    verifies_up_to_2_16("sequential_scan", ScanKind::Inclusive);
}

#[test]
fn kogge_stone_verifies() {
    verifies_up_to_2_16("kogge_stone", ScanKind::Inclusive);
}

#[test]
fn sklansky_verifies() {
    verifies_up_to_2_16("sklansky", ScanKind::Inclusive);
}

#[test]
fn brent_kung_verifies() {
    verifies_up_to_2_16("brent_kung", ScanKind::Inclusive);
}

#[test]
fn blelloch_verifies() {
    verifies_up_to_2_16("blelloch", ScanKind::Exclusive);
}

#[test]
fn blelloch_tree1d_verifies() {
    verifies_up_to_2_16("blelloch_tree1d", ScanKind::Exclusive);
}

#[test]
fn blelloch_tree2d_verifies() {
    verifies_up_to_2_16("blelloch_tree2d", ScanKind::Exclusive);
}

/// The 32-bit overflow fixed in blelloch.ksim: before, n >= 2^17 raced.
#[test]
fn blelloch_verifies_at_2_17() {
    assert!(test("blelloch", 1 << 17, ScanKind::Exclusive)
        .verdict
        .is_verified());
}

#[test]
fn kogge_stone_verifies_at_2_20() {
    assert!(test("kogge_stone", 1 << 20, ScanKind::Inclusive)
        .verdict
        .is_verified());
}

#[test]
fn blelloch_commuted_is_wrong_at_out_3() {
    // n = 2: the only prefix involved is the identity, so it is right.
    assert!(test("blelloch_commuted", 2, ScanKind::Exclusive)
        .verdict
        .is_verified());
    for e in 2..=12 {
        let n = 1usize << e;
        let r = test("blelloch_commuted", n, ScanKind::Exclusive);
        let Verdict::Wrong(ce) = r.verdict else {
            panic!("n = {n}: {:?}", r.verdict)
        };
        assert_eq!(ce.index, 3, "n = {n}");
        assert_eq!(ce.expected, Value::Interval(Interval::Range(0, 2)));
        assert_eq!(ce.found, Value::Interval(Interval::Top));
    }
    // The full interval output at n = 8, as its header says.
    let r = test("blelloch_commuted", 8, ScanKind::Exclusive);
    let shown: Vec<String> = r.output.iter().map(|v| v.to_string()).collect();
    assert_eq!(shown.join(" "), "1 [0,0] [0,1] ⊤ [0,3] ⊤ ⊤ ⊤");
}

#[test]
fn scan_off_by_one_is_wrong_at_n_over_2() {
    for e in 1..=16 {
        let n = 1usize << e;
        let r = test("scan_off_by_one", n, ScanKind::Inclusive);
        let Verdict::Wrong(ce) = r.verdict else {
            panic!("n = {n}: {:?}", r.verdict)
        };
        assert_eq!(ce.index, n / 2, "n = {n}");
        // out[n/2] = in[1] ⊕ ... ⊕ in[n/2]: it misses in[0].
        assert_eq!(
            ce.found,
            Value::Interval(Interval::Range(1, (n / 2) as u32)),
            "n = {n}"
        );
    }
    assert!(test("scan_off_by_one", 1, ScanKind::Inclusive)
        .verdict
        .is_verified());
}

#[test]
fn racy_examples_are_rejected_with_the_race() {
    for (name, kind) in [
        ("kogge_stone_racy", ScanKind::Inclusive),
        ("blelloch_missing_barrier", ScanKind::Exclusive),
    ] {
        for n in [4usize, 8, 1024] {
            let (l, a) = launch(name, n);
            let r = interval_test(&l, &a, kind);
            let Verdict::Racy(races) = r.verdict else {
                panic!("{name} at n = {n}: {:?}", r.verdict)
            };
            assert!(races.iter().all(|race| race.array == a.output), "{name}");
        }
    }
    // kogge_stone_racy: round offset = 1, thread 1 writes out[1], thread 2 reads it.
    let (l, a) = launch("kogge_stone_racy", 8);
    let Verdict::Racy(races) = interval_test(&l, &a, ScanKind::Inclusive).verdict else {
        panic!()
    };
    assert_eq!(races[0].index, vec![1]);
    // n <= 2: no thread that writes is read from in the same round.
    assert!(test("kogge_stone_racy", 2, ScanKind::Inclusive)
        .verdict
        .is_verified());
}

#[test]
fn non_generic_kernels_are_refused() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/stream_compaction.ksim");
    let text = std::fs::read_to_string(path).unwrap();
    let kernel = lang::check::check(&lang::parse::parse(&text).unwrap()).unwrap();
    let opts = LaunchOptions {
        defines: vec![("n".into(), "8".into())],
        ..LaunchOptions::default()
    };
    let l = Launch::new(Arc::new(kernel), &opts).unwrap();
    let err = ScanArrays::find(&l, "in", "out").unwrap_err();
    assert!(err.0.contains("not the generic type `T`"), "{err}");
    let err = ScanArrays::find(&l, "input", "out").unwrap_err();
    assert!(err.0.contains("no array `input`"), "{err}");
}
