//! The baseline: Voigtländer's O(n²) tests ("Much Ado about Two (Pearl): A Pearl on
//! Parallel Prefix Computation", POPL 2008), as POPL 2014 Section 7 runs them for Table 4.
//!
//! # The two operators
//!
//! Over `three = {0, 1, 2}`, both with identity 0 (`Monoid::Voigt1`, `Monoid::Voigt2`):
//!
//! ```text
//! f1 x 0 = x      f1 0 1 = 1      f1 x y = 2 otherwise     (saturating count: 0, 1, many)
//! f2 x 0 = x      f2 x 1 = 1      f2 x 2 = 2               (the last non-zero summand wins)
//! ```
//!
//! # The inputs, and why they suffice
//!
//! The inputs are those of the proof of Voigtländer's Lemma 4, as formalised by Böhme in the
//! Archive of Formal Proofs (`MuchAdoAboutTwo.thy`, functions `h1` and `h2`; the AFP entry
//! works on lists of naturals `[0..<n+1]`, here `0..n-1`):
//!
//! ```text
//! h1 k i j = if i = j then 1 else if j ≤ k then 0 else 2      for 0 ≤ i ≤ k ≤ n-1
//! h2 i j   = if i = j then 1 else if j = i+1 then 2 else 0     for 0 ≤ i ≤ n-2
//! ```
//!
//! that is, the f1 input for `(k, i)` is `0^i 1 0^(k-i) 2^(n-1-k)` and the f2 input for `i`
//! is `0^i 1 2 0^(n-2-i)`: n(n+1)/2 inputs for f1 and n-1 for f2 (131,839 in all for
//! n = 2^9, the first column of POPL 2014 Table 4).
//!
//! Why they suffice. A generic kernel cannot inspect `T` values, so (being race-free, hence
//! deterministic by Lemma 5.4) every `out[k]` it computes is the value, in whatever monoid,
//! of one fixed word `w_k` over the initial `T` cells (the free theorem of Voigtländer's
//! Lemma 1/3: map the list-concatenation run through the homomorphism `foldl1 f ∘ map h`).
//! For an inclusive scan, `w_k` must be `0 1 ... k`:
//!
//! * f1 on `h1 k i` must give 1 at `out[k]` for every `i ≤ k`. Every cell `j > k` maps to
//!   2, which absorbs in f1, so `w_k` contains no `j > k` (Voigtländer's Figure 6); with
//!   only `i` mapped to 1 among `0..k`, f1 counts the occurrences of `i` up to "many", so
//!   `i` occurs exactly once (Figures 4 and 5). Hence `w_k` is a permutation of `0..k`.
//!   (It also rules out an empty `w_k`, which gives 0.)
//! * f2 on `h2 i` must give 2 at `out[k]` for every `i < k`: the last of `i`, `i+1` in
//!   `w_k` is `i+1`, so every `i` is followed, somewhere later, by `i+1` (Figure 7), and a
//!   permutation with that property is sorted (AFP lemmas `Figure_7_trans`,
//!   `js_partition_order`, `js_equals_upt_k`).
//!
//! Each test compares the **whole** output with the sequential scan of its input, which is
//! at least as strong as the proof's use of `out[k]` only, and any failing test is a
//! genuine counterexample (f1 and f2 are associative, with identity 0).
//!
//! Two adaptations for kernels, both sound by the same argument:
//!
//! * Uninitialised memory. A kernel could read a `T` cell it never wrote (the interval
//!   test's `⊤` cells). Here every `T` cell other than `in[0..n-1]` starts at 2, the
//!   absorbing element of f1, so such a read that reaches `out[k]` makes the `(k, 0)` f1
//!   test give 2 instead of 1.
//! * Exclusive scans. `out[k]` (k ≥ 1) must be the inclusive prefix of length k, which the
//!   same tests with parameter `k-1` pin down, and `out[0]` must be the empty word, which
//!   the `(0, 0)` f1 test checks (any cell in `w_0` gives 1 or 2, not 0). The same n(n+1)/2
//!   + n-1 inputs are used, compared with the exclusive scan of each.

use super::{first_mismatch, instantiate, Counterexample, Engine, ScanArrays, ScanKind, Verdict};
use interp::launch::Launch;
use interp::{Monoid, Value};
use serde::Serialize;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// f1: `x ⊕ 0 = x`, `0 ⊕ 1 = 1`, otherwise 2.
pub fn f1(x: u8, y: u8) -> u8 {
    match (x, y) {
        (x, 0) => x,
        (0, 1) => 1,
        _ => 2,
    }
}

/// f2: `x ⊕ 0 = x`, `x ⊕ 1 = 1`, `x ⊕ 2 = 2`.
pub fn f2(x: u8, y: u8) -> u8 {
    if y == 0 {
        x
    } else {
        y
    }
}

/// One of Voigtländer's tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, schemars::JsonSchema)]
#[serde(tag = "op", rename_all = "lowercase")]
pub enum VoigtTest {
    /// f1 on `h1 k i`: `0^i 1 0^(k-i) 2^(n-1-k)`, `0 ≤ i ≤ k < n`.
    F1 { k: usize, i: usize },
    /// f2 on `h2 i`: `0^i 1 2 0^(n-2-i)`, `0 ≤ i < n-1`.
    F2 { i: usize },
}

impl VoigtTest {
    /// The monoid the test instantiates the kernel with.
    pub fn monoid(self) -> Monoid {
        match self {
            VoigtTest::F1 { .. } => Monoid::Voigt1,
            VoigtTest::F2 { .. } => Monoid::Voigt2,
        }
    }

    /// Element `j` of the test's input.
    pub fn input_at(self, j: usize) -> u8 {
        match self {
            VoigtTest::F1 { k, i } => {
                if j == i {
                    1
                } else if j <= k {
                    0
                } else {
                    2
                }
            }
            VoigtTest::F2 { i } => {
                if j == i {
                    1
                } else if j == i + 1 {
                    2
                } else {
                    0
                }
            }
        }
    }

    /// The test's input of length `n`.
    pub fn input(self, n: usize) -> Vec<u8> {
        (0..n).map(|j| self.input_at(j)).collect()
    }

    /// The correct output: the sequential scan of the input.
    pub fn expected(self, n: usize, kind: ScanKind) -> Vec<u8> {
        let op = match self {
            VoigtTest::F1 { .. } => f1,
            VoigtTest::F2 { .. } => f2,
        };
        kind.scan(&self.input(n), 0, |a, b| op(*a, *b))
    }
}

impl std::fmt::Display for VoigtTest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            VoigtTest::F1 { k, i } => write!(f, "f1 test (k = {k}, i = {i})"),
            VoigtTest::F2 { i } => write!(f, "f2 test (i = {i})"),
        }
    }
}

/// The number of tests for length `n`: n(n+1)/2 with f1 plus n-1 with f2.
pub fn test_count(n: usize) -> u64 {
    let n = n as u64;
    n * (n + 1) / 2 + n.saturating_sub(1)
}

/// Test number `t` (0-based, `t < test_count(n)`) in the order they are run: the n-1 f2
/// tests first (cheap to run and they catch the order bugs that commutative tests miss),
/// then the f1 tests by increasing `k`, then `i`.
pub fn test_at(n: usize, t: u64) -> VoigtTest {
    let f2s = n.saturating_sub(1) as u64;
    if t < f2s {
        return VoigtTest::F2 { i: t as usize };
    }
    let t = t - f2s;
    // The largest k with k(k+1)/2 <= t.
    let mut k = (((8.0 * t as f64 + 1.0).sqrt() - 1.0) / 2.0) as u64;
    while k * (k + 1) / 2 > t {
        k -= 1;
    }
    while (k + 1) * (k + 2) / 2 <= t {
        k += 1;
    }
    VoigtTest::F1 {
        k: k as usize,
        i: (t - k * (k + 1) / 2) as usize,
    }
}

/// Every test for length `n`, in the order they are run.
pub fn tests(n: usize) -> impl Iterator<Item = VoigtTest> {
    (0..test_count(n)).map(move |t| test_at(n, t))
}

/// How to run the tests.
#[derive(Clone, Debug, Default)]
pub struct VoigtOptions {
    /// Stop after this long and report how many tests passed.
    pub timeout: Option<Duration>,
    /// Worker threads (tests run in parallel, as on a GPU); 0 for one per core.
    pub threads: usize,
    /// Skip the race check (the caller has already established race-freedom).
    pub race_free: bool,
}

/// The result of the Voigtländer tests.
#[derive(Clone, Debug)]
pub struct VoigtReport {
    pub kind: ScanKind,
    pub n: usize,
    /// n(n+1)/2 + n-1.
    pub total: u64,
    /// Tests run to completion and passed.
    pub passed: u64,
    /// `None` when the timeout stopped the run first.
    pub verdict: Option<Verdict>,
    /// The test that failed, for a race, fault or wrong output.
    pub failing: Option<VoigtTest>,
    pub engine: Engine,
    /// The time of all tests (the kernel is loaded once, as the paper's wrapper does).
    pub time: Duration,
}

impl VoigtReport {
    pub fn timed_out(&self) -> bool {
        self.verdict.is_none()
    }
}

/// One test: the launch instantiated with the test's monoid and input, every other `T`
/// cell 2.
pub fn test_launch(base: &Launch, arrays: &ScanArrays, test: VoigtTest) -> Launch {
    instantiate(
        base,
        arrays,
        test.monoid(),
        |j| Value::Ternary(test.input_at(j)),
        Value::Ternary(2),
    )
}

/// Runs one test: `Ok(())` if it passes, else the verdict (race, fault or wrong output).
pub fn run_test(
    base: &Launch,
    arrays: &ScanArrays,
    kind: ScanKind,
    test: VoigtTest,
    check_races: bool,
    jobs: usize,
) -> (Result<(), Verdict>, Engine) {
    let launch = test_launch(base, arrays, test);
    let opts = interp::canonical::Options {
        jobs,
        track_races: check_races,
    };
    let run = interp::canonical::run_preferred(&launch, &opts);
    let engine = run.engine;
    let run = run.execution;
    let result = if !interp::race::all_benign(&run.races) {
        Err(Verdict::Racy(run.races))
    } else if let Some(f) = run.fault {
        Err(Verdict::Fault(f))
    } else {
        let expected = test.expected(arrays.n, kind);
        match first_mismatch(run.array(arrays.output), arrays.n, |k| {
            Value::Ternary(expected[k])
        }) {
            Some(ce) => Err(Verdict::Wrong(ce)),
            None => Ok(()),
        }
    };
    (result, engine)
}

/// Runs all n(n+1)/2 + n-1 tests, in parallel on `opts.threads` worker threads, stopping at
/// the first failure (reported is the lowest-numbered failing test) or at the timeout.
///
/// The workers are plain threads taking test numbers from a shared counter, each test one
/// single-threaded run: the engine may build a rayon pool of its own per run, and a rayon
/// worker waiting for another pool steals work from its own, which nests runs until the
/// stack overflows.
pub fn run_tests(
    base: &Launch,
    arrays: &ScanArrays,
    kind: ScanKind,
    opts: &VoigtOptions,
) -> VoigtReport {
    let start = Instant::now();
    let n = arrays.n;
    let total = test_count(n);
    let deadline = opts.timeout.map(|t| start + t);
    let mut report = VoigtReport {
        kind,
        n,
        total,
        passed: 0,
        verdict: None,
        failing: None,
        engine: Engine::Reference,
        time: Duration::ZERO,
    };
    let finish = |mut r: VoigtReport| {
        r.time = start.elapsed();
        r
    };
    // The first test also checks race-freedom (Theorem 5.3: any instantiation will do).
    let mut first = 0u64;
    if !opts.race_free && total > 0 {
        let test = test_at(n, 0);
        let (result, engine) = run_test(base, arrays, kind, test, true, 0);
        report.engine = engine;
        match result {
            Ok(()) => report.passed = 1,
            Err(v) => {
                report.verdict = Some(v);
                report.failing = Some(test);
                return finish(report);
            }
        }
        first = 1;
    }
    let workers = match opts.threads {
        0 => std::thread::available_parallelism().map_or(1, |p| p.get()),
        t => t,
    }
    .min((total - first).max(1) as usize);
    let next = AtomicU64::new(first);
    // The lowest failing test found so far: higher-numbered tests need not run.
    let first_failure = AtomicU64::new(u64::MAX);
    let passed = AtomicU64::new(report.passed);
    let failures: Mutex<Vec<(u64, Verdict)>> = Mutex::new(Vec::new());
    let engine = Mutex::new(report.engine);
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| loop {
                let t = next.fetch_add(1, Ordering::Relaxed);
                if t >= total
                    || t > first_failure.load(Ordering::Relaxed)
                    || deadline.is_some_and(|d| Instant::now() >= d)
                {
                    break;
                }
                let (result, e) = run_test(base, arrays, kind, test_at(n, t), false, 1);
                *engine.lock().unwrap() = e;
                match result {
                    Ok(()) => {
                        passed.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(v) => {
                        first_failure.fetch_min(t, Ordering::Relaxed);
                        failures.lock().unwrap().push((t, v));
                    }
                }
            });
        }
    });
    report.passed = passed.load(Ordering::Relaxed);
    report.engine = *engine.lock().unwrap();
    if let Some((t, v)) = failures
        .into_inner()
        .unwrap()
        .into_iter()
        .min_by_key(|(t, _)| *t)
    {
        report.verdict = Some(v);
        report.failing = Some(test_at(n, t));
    } else if report.passed == total {
        report.verdict = Some(Verdict::Verified);
    }
    finish(report)
}

/// A wrong output of a test, in words.
pub fn describe_failure(test: VoigtTest, n: usize, ce: &Counterexample) -> String {
    let input = test.input(n);
    let shown: String = if n <= 32 {
        input
            .iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join(" ")
    } else {
        match test {
            VoigtTest::F1 { k, i } => format!("0^{i} 1 0^{} 2^{}", k - i, n - 1 - k),
            VoigtTest::F2 { i } => format!("0^{i} 1 2 0^{}", n - 2 - i),
        }
    };
    format!(
        "{test}: with {} on input [{shown}], out[{}] is {}, expected {}",
        test.monoid(),
        ce.index,
        ce.found,
        ce.expected
    )
}
