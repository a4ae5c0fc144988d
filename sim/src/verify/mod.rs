//! Verifying generic prefix sums: Chong, Donaldson & Ketema, POPL 2014.
//!
//! A *generic* kernel is one whose `in` and `out` arrays have the generic type `T`
//! (Definition 4.2): it can only combine `T` values with `⊕`, copy them and use the
//! identity, and no control flow or index can depend on them (the type checker enforces
//! this). Such a kernel implements a prefix sum of length `n` for **every** monoid iff
//!
//! 1. it is data race-free (Definition 5.2; by Theorem 5.3 race-freedom does not depend on
//!    the monoid, and by Lemma 5.4 a race-free kernel computes one deterministic result), and
//! 2. instantiated with the interval-of-summations monoid (Definition 4.3) and started in
//!    the singleton condition (Definitions 4.4 and 5.1: `in[k] = [k,k]` for `k < n`, every
//!    other element of every `T` array `⊤`), it outputs `[0,0], [0,1], ..., [0,n-1]`
//!    (inclusive) or `1, [0,0], ..., [0,n-2]` (exclusive) — Theorem 4.5, stated for
//!    kernels in Section 5.
//!
//! [`interval_test`] does both with **one** run. [`voigtlaender`] is the baseline the paper
//! compares against (its Section 7, Table 4): Voigtländer's O(n²) tests over {0, 1, 2}
//! with two associative operators, made sound for kernels by the same Lemma 5.4.
//! [`demo`] turns an interval counterexample into the concrete wrong result a user would see
//! with the list-concatenation monoid.
//!
//! A note on the singleton condition in ksim: ksim starts every thread-local `T` variable
//! at the monoid identity, for every monoid (see `Value::default_of`), so a kernel that
//! reads such a variable before writing it reads `1` under every instantiation; the
//! reification of `1_I` is `{1_M}`, so the simulation argument of Lemma 4.6/4.7 holds with
//! variables starting at `1` instead of `⊤`. Arrays are under the user's control
//! (`--input`), so every `T` array other than the input is set to `⊤`, as the definition
//! says: a kernel that reads an element it never wrote can never pass.

pub mod demo;
pub mod scan;
pub mod voigtlaender;

pub use interp::canonical::Engine;

use interp::fault::FaultKind;
use interp::launch::Launch;
use interp::{Fault, Interval, Monoid, Race, Value};
use lang::core::{ArrayId, Ty};
use serde::Serialize;
use std::fmt;
use std::time::{Duration, Instant};

/// Which prefix sum the kernel claims to compute.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ScanKind {
    /// `out[k] = in[0] ⊕ ... ⊕ in[k]`.
    Inclusive,
    /// `out[0] = 1`, `out[k] = in[0] ⊕ ... ⊕ in[k-1]`.
    Exclusive,
}

impl ScanKind {
    pub fn name(self) -> &'static str {
        match self {
            ScanKind::Inclusive => "inclusive",
            ScanKind::Exclusive => "exclusive",
        }
    }

    /// What `out[k]` must be after the interval test: `[0,k]` (inclusive), or `1` for
    /// `k = 0` and `[0,k-1]` otherwise (exclusive).
    pub fn expected_interval(self, k: usize) -> Interval {
        match (self, k) {
            (ScanKind::Inclusive, k) => Interval::Range(0, k as u32),
            (ScanKind::Exclusive, 0) => Interval::Id,
            (ScanKind::Exclusive, k) => Interval::Range(0, k as u32 - 1),
        }
    }

    /// The sequential prefix sum of `xs` (the specification every test compares with).
    pub fn scan<T: Clone>(self, xs: &[T], identity: T, op: impl Fn(&T, &T) -> T) -> Vec<T> {
        let mut acc = identity;
        let mut out = Vec::with_capacity(xs.len());
        for x in xs {
            match self {
                ScanKind::Inclusive => {
                    acc = op(&acc, x);
                    out.push(acc.clone());
                }
                ScanKind::Exclusive => {
                    out.push(acc.clone());
                    acc = op(&acc, x);
                }
            }
        }
        out
    }
}

impl fmt::Display for ScanKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A kernel that cannot be verified as asked (a usage error: wrong array names or types).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SetupError(pub String);

impl fmt::Display for SetupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SetupError {}

/// The arrays of a scan and its length.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScanArrays {
    pub input: ArrayId,
    pub output: ArrayId,
    /// The length of the prefix sum: the number of elements of the output array.
    pub n: usize,
}

impl ScanArrays {
    /// Finds the input and output arrays by name and checks what the theorem needs: both
    /// exist, have the generic element type `T` (Definition 4.2), are one-dimensional and
    /// have a single instance (a `global` array, or a `local` one of a one-group launch),
    /// and the input has at least as many elements as the output. They may be the same
    /// array (an in-place scan).
    pub fn find(launch: &Launch, input: &str, output: &str) -> Result<ScanArrays, SetupError> {
        let k = &launch.kernel;
        let lookup = |role: &str, name: &str| -> Result<ArrayId, SetupError> {
            let a = k.array(name).ok_or_else(|| {
                let names: Vec<_> = k.arrays.iter().map(|a| format!("`{}`", a.name)).collect();
                SetupError(format!(
                    "kernel `{}` has no array `{name}` to use as the {role} (its arrays: {}; \
                     name another with --{})",
                    k.name,
                    if names.is_empty() {
                        "none".into()
                    } else {
                        names.join(", ")
                    },
                    if role == "input" { "in" } else { "out" }
                ))
            })?;
            let decl = &k.arrays[a];
            if decl.elem != Ty::Generic {
                return Err(SetupError(format!(
                    "the {role} array `{name}` has element type `{}`, not the generic type `T`: \
                     verify-scan checks generic prefix sums (POPL 2014, Definition 4.2), whose \
                     `in` and `out` are arrays of `T`",
                    decl.elem.name()
                )));
            }
            if launch.dims[a].len() != 1 {
                return Err(SetupError(format!(
                    "the {role} array `{name}` is two-dimensional; a prefix sum reads and writes \
                     one-dimensional arrays"
                )));
            }
            if launch.instances(a) != 1 {
                return Err(SetupError(format!(
                    "the {role} array `{name}` is `local` and the launch has {} work-groups, so \
                     there is one copy per group; verify a one-group launch or make it `global`",
                    launch.groups
                )));
            }
            Ok(a)
        };
        let input = lookup("input", input)?;
        let output = lookup("output", output)?;
        let n = launch.len(output);
        if n == 0 {
            return Err(SetupError(format!(
                "the output array `{}` has no elements",
                k.arrays[output].name
            )));
        }
        if launch.len(input) < n {
            return Err(SetupError(format!(
                "the input array `{}` has {} elements, fewer than the {n} of the output `{}`",
                k.arrays[input].name,
                launch.len(input),
                k.arrays[output].name
            )));
        }
        Ok(ScanArrays { input, output, n })
    }
}

/// `base` instantiated with `monoid`: the input's first `n` elements are `input(k)`; every
/// other element of every `T` array (the rest of the input, the output, scratch arrays) is
/// `other`. Arrays of other types, parameters and geometry are kept.
pub fn instantiate(
    base: &Launch,
    arrays: &ScanArrays,
    monoid: Monoid,
    input: impl Fn(usize) -> Value,
    other: Value,
) -> Launch {
    let mut launch = base.clone();
    launch.monoid = monoid;
    for (a, decl) in base.kernel.arrays.iter().enumerate() {
        if decl.elem != Ty::Generic {
            continue;
        }
        let len = base.len(a);
        launch.initial[a] = if a == arrays.input {
            (0..len)
                .map(|k| {
                    if k < arrays.n {
                        input(k)
                    } else {
                        other.clone()
                    }
                })
                .collect()
        } else {
            vec![other.clone(); len]
        };
    }
    launch
}

/// `base` in the singleton condition for `n` (Definitions 4.4 and 5.1) under the interval
/// monoid: `in[k] = [k,k]` for `k < n`, every other `T` array element `⊤`.
pub fn singleton_launch(base: &Launch, arrays: &ScanArrays) -> Launch {
    instantiate(
        base,
        arrays,
        Monoid::Interval,
        |k| Value::Interval(Interval::Range(k as u32, k as u32)),
        Value::Interval(Interval::Top),
    )
}

/// The first wrong output of a test.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Counterexample {
    /// The output index.
    pub index: usize,
    pub expected: Value,
    pub found: Value,
}

/// The outcome of a verification method.
#[derive(Clone, Debug)]
pub enum Verdict {
    /// Correct for every monoid.
    Verified,
    /// The kernel races: the theorem does not apply (and the kernel is wrong anyway: its
    /// result may depend on the schedule).
    Racy(Vec<Race>),
    /// A runtime fault (out of bounds, division by zero, non-termination).
    Fault(Fault),
    /// A wrong output: the kernel is not a generic prefix sum.
    Wrong(Counterexample),
    /// The test passed, but what the theorem needs was not shown (the reason): the kernel
    /// uses atomics and not every order of them could be explored.
    Undecided(String),
}

impl Verdict {
    pub fn is_verified(&self) -> bool {
        matches!(self, Verdict::Verified)
    }

    /// A short name: `verified`, `race`, `fault`, `counterexample`.
    pub fn name(&self) -> &'static str {
        match self {
            Verdict::Verified => "verified",
            Verdict::Racy(_) => "race",
            Verdict::Fault(_) => "fault",
            Verdict::Wrong(_) => "counterexample",
            Verdict::Undecided(_) => "undecided",
        }
    }
}

/// The result of the interval test.
#[derive(Clone, Debug)]
pub struct IntervalReport {
    pub kind: ScanKind,
    pub n: usize,
    pub verdict: Verdict,
    /// The output array after the run.
    pub output: Vec<Value>,
    /// Barriers that fired with the threads of a group at different barriers (the paper's
    /// MPI-style K-BARRIER allows this; the theorem still holds, a GPU would not).
    pub divergences: usize,
    pub steps: u64,
    pub engine: Engine,
    /// Preparing the launch, the run (with race detection) and the comparison.
    pub time: Duration,
    /// The run was too long to check again that no `T` variable is read before written
    /// ([`UNINIT_CHECK_STEPS`]): the verdict assumes it, and says so.
    pub uninit_assumed: bool,
    /// The kernel uses atomics: what the exploration of every order of them found
    /// ([`every_atomic_order`]); `None` without atomics, or when the one run already failed.
    pub atomic_orders: Option<AtomicOrders>,
}

/// What exploring every order of a kernel's atomics on the singleton input found.
#[derive(Clone, Debug)]
pub struct AtomicOrders {
    /// Executions explored (every schedule up to equivalence when `complete`).
    pub executions: u64,
    pub complete: bool,
    /// The explorer's verdict (`EXHAUSTIVE`, `INCOMPLETE (...)`).
    pub verdict: String,
    /// A schedule whose output is wrong, and that output, when the verdict is a
    /// counterexample found by it.
    pub schedule: Option<(String, Vec<Value>)>,
}

/// The first index where `output` differs from `expected(k)`.
pub fn first_mismatch(
    output: &[Value],
    n: usize,
    expected: impl Fn(usize) -> Value,
) -> Option<Counterexample> {
    (0..n).find_map(|k| {
        let e = expected(k);
        (output[k] != e).then(|| Counterexample {
            index: k,
            expected: e,
            found: output[k].clone(),
        })
    })
}

/// The single test of Theorem 4.5: one run of the kernel instantiated with the interval
/// monoid in the singleton condition, with race detection on (Theorem 5.3 lets the race
/// check use this instantiation).
pub fn interval_test(base: &Launch, arrays: &ScanArrays, kind: ScanKind) -> IntervalReport {
    let start = Instant::now();
    let launch = singleton_launch(base, arrays);
    let run = interp::canonical::run_preferred(&launch, &Default::default());
    let engine = run.engine;
    let run = run.execution;
    let output = run.array(arrays.output)[..arrays.n].to_vec();
    let mut verdict = if !interp::race::all_benign(&run.races) {
        Verdict::Racy(run.races)
    } else if let Some(f) = run.fault {
        Verdict::Fault(f)
    } else {
        match first_mismatch(&output, arrays.n, |k| {
            Value::Interval(kind.expected_interval(k))
        }) {
            Some(ce) => Verdict::Wrong(ce),
            None => Verdict::Verified,
        }
    };
    let mut uninit_assumed = false;
    if verdict.is_verified() && has_generic_vars(&launch) {
        if run.steps <= UNINIT_CHECK_STEPS {
            if let Some(f) = generic_read_before_write(&launch) {
                verdict = Verdict::Fault(f);
            }
        } else {
            uninit_assumed = true;
        }
    }
    let mut atomic_orders = None;
    let mut output = output;
    if verdict.is_verified() && launch.kernel.has_atomics() {
        let (v, orders) = every_atomic_order(&launch, arrays, kind);
        verdict = v;
        if let Some((_, wrong)) = &orders.schedule {
            output = wrong.clone();
        }
        atomic_orders = Some(orders);
    }
    IntervalReport {
        kind,
        n: arrays.n,
        verdict,
        output,
        divergences: run.divergences.len(),
        steps: run.steps,
        engine,
        time: start.elapsed(),
        atomic_orders,
        uninit_assumed,
    }
}

/// The longest interval run that is run again with variables tracked
/// ([`generic_read_before_write`], about 3.5 times the run's cost); above it the verdict
/// states the assumption instead.
pub const UNINIT_CHECK_STEPS: u64 = 10_000_000;

/// Whether the kernel has `T` variables that ksim starts at the identity (not under
/// `--uninit check`, which tracks them in the run itself).
fn has_generic_vars(launch: &Launch) -> bool {
    !launch.checks_uninit() && launch.kernel.vars.iter().any(|v| v.ty == Ty::Generic)
}

/// A read of a `T` variable before its first assignment, in the singleton run: ksim starts
/// `T` variables at the identity (`--uninit zero`, `.ksim`'s start), Definition 5.1 at `⊤`
/// (and a device at garbage), so the one test passes only because of ksim's choice. Found
/// by running the test again with variables tracked (`--uninit check`, every array
/// defined); a read of an undefined variable of another type is not the theorem's concern.
pub fn generic_read_before_write(launch: &Launch) -> Option<Fault> {
    let k = &launch.kernel;
    let generic = |name: &str| k.vars.iter().any(|v| v.name == name && v.ty == Ty::Generic);
    if !has_generic_vars(launch) {
        return None;
    }
    let mut check = launch.clone();
    check.uninit = interp::undef::Uninit::Check;
    check.given = vec![true; k.arrays.len()];
    let run = interp::canonical::run_preferred(&check, &Default::default()).execution;
    run.fault.filter(|f| {
        matches!(&f.kind, FaultKind::Uninitialised { name, index } if index.is_empty() && generic(name))
    })
}

/// Lemma 5.4 (one race-free run decides every run) needs a deterministic kernel, and
/// atomics make the result depend on their order. So a kernel with atomics whose one
/// interval test passed is decided over every schedule: the exhaustive explorer runs the
/// singleton launch (within the budget of [`crate::explore::orders`]), and every
/// execution must be race-free, fault-free and end with the expected output. T values
/// cannot steer control flow or indices (Definition 4.2), so the orders explored are those
/// of every monoid, and Theorem 4.5 applies to each of them. When the exploration is cut,
/// the verdict is [`Verdict::Undecided`].
pub fn every_atomic_order(
    launch: &Launch,
    arrays: &ScanArrays,
    kind: ScanKind,
) -> (Verdict, AtomicOrders) {
    let s = match crate::explore::orders::every_order(launch) {
        Ok(s) => s,
        Err(why) => {
            let orders = AtomicOrders {
                executions: 0,
                complete: false,
                verdict: why.clone(),
                schedule: None,
            };
            return (Verdict::Undecided(undecided(&why)), orders);
        }
    };
    let complete = crate::explore::orders::covers_every_schedule(&s);
    let mut orders = AtomicOrders {
        executions: s.executions(),
        complete,
        verdict: s.verdict.to_string(),
        schedule: None,
    };
    let races: Vec<Race> = (s.races.iter())
        .filter(|r| !r.race.benign())
        .map(|r| r.race.clone())
        .collect();
    if !races.is_empty() {
        return (Verdict::Racy(races), orders);
    }
    if let Some(f) = s.faults.first() {
        return (Verdict::Fault(f.fault.clone()), orders);
    }
    for f in &s.finals {
        let output = &f.memory.arrays[arrays.output][0][..arrays.n];
        let wrong = first_mismatch(output, arrays.n, |k| {
            Value::Interval(kind.expected_interval(k))
        });
        if let Some(ce) = wrong {
            let schedule = crate::explore::model::short_schedule(&f.schedule, 12);
            orders.schedule = Some((schedule, output.to_vec()));
            return (Verdict::Wrong(ce), orders);
        }
    }
    if !complete {
        let why = crate::explore::orders::why_not_covered(&s);
        return (Verdict::Undecided(undecided(&why)), orders);
    }
    (Verdict::Verified, orders)
}

/// The reason of [`Verdict::Undecided`] for a kernel with atomics.
fn undecided(why: &str) -> String {
    format!(
        "the kernel uses atomics, so one race-free run does not show determinism (Lemma \
         5.4), and {why}"
    )
}

/// `in[a] ⊕ ... ⊕ in[b]`, `in[a]` or nothing.
fn span_text(input: &str, a: u32, b: u32) -> String {
    if a == b {
        format!("{input}[{a}]")
    } else {
        format!("{input}[{a}] ⊕ ... ⊕ {input}[{b}]")
    }
}

/// What a wrong interval-test output means, in words: which summands are missing, extra,
/// or why `⊤` is wrong. (A range `[a,b]` at the end of the test means exactly
/// `in[a] ⊕ ... ⊕ in[b]` for every monoid; `⊤` a sum that is not contiguous.) `input` and
/// `output` are the names of the kernel's arrays (`--in`, `--out`).
pub fn explain(ce: &Counterexample, input: &str, output: &str) -> String {
    let (Value::Interval(expected), Value::Interval(found)) = (&ce.expected, &ce.found) else {
        return format!(
            "{output}[{}] is {}, expected {}",
            ce.index, ce.found, ce.expected
        );
    };
    match (expected, found) {
        (_, Interval::Top) => "⊤: the kernel combined values that are not adjacent \
            summations of the input (a summand missing, repeated or out of order, or a value \
            the kernel never computed from the input)"
            .to_string(),
        (Interval::Range(..), Interval::Id) => {
            "the identity: the empty sum, no input at all".to_string()
        }
        (Interval::Id, Interval::Range(a, b)) => {
            format!(
                "{}, but an exclusive prefix sum starts with the identity",
                span_text(input, *a, *b)
            )
        }
        (Interval::Range(_, k), Interval::Range(a, b)) => {
            let mut what = vec![span_text(input, *a, *b)];
            if *a > 0 {
                what.push(format!("missing {}", span_text(input, 0, a - 1)));
            }
            if b < k {
                what.push(format!("missing {}", span_text(input, b + 1, *k)));
            } else if b > k {
                what.push(format!("with {} too many", span_text(input, k + 1, *b)));
            }
            what.join(", ")
        }
        _ => format!("{found}, expected {expected}"),
    }
}
