//! Equivalence of two kernels by execution (`ksim equiv`): does an optimised kernel
//! compute what the original computes?
//!
//! Alpinist (`../shared/seeds/alpinist-annotation-aware-gpu-optimizer.txt`) trusts an
//! optimisation because the transformed annotations are re-proved; this module checks the
//! transformed kernel against the original by running both, on the same inputs:
//!
//! - **Inputs**: the ones given (arrays not given start as their launch says), then, per
//!   seed, every compared array filled with random values (the same on both sides: a
//!   linearised array gets the row-major order of its 2D original).
//! - **Schedules**: the canonical one, then a bounded exhaustive exploration
//!   ([`crate::explore::exhaustive`], at most `max_executions` per side and input; for a
//!   race-free kernel one execution per barrier interval decides every schedule).
//! - **Verdict**: every final store of the transformed kernel must be a final store the
//!   original reaches (on the compared arrays), and the transformed kernel must not race,
//!   fault (a false annotation is a fault), diverge or run past the step bound where the
//!   original did not. The first difference found is reported with its inputs and
//!   schedule.
//!
//! Compared arrays are those both kernels declare, by name, with the same number of
//! instances and elements per instance (a shape change such as 2D to 1D keeps the
//! number); the others (a staging array that prefetching adds) are listed as not compared.

use crate::explore::{self, Config, FinalStore, Summary};
use interp::canonical::{self, Execution};
use interp::launch::{parse_input, Launch, LaunchOptions};
use interp::{Memory, Value};
use lang::core::Kernel;
use serde::Serialize;
use std::sync::Arc;

/// One side of the comparison: a checked kernel and its launch options.
#[derive(Clone, Debug)]
pub struct Side {
    /// The file it was read from, for messages.
    pub file: String,
    pub kernel: Arc<Kernel>,
    pub options: LaunchOptions,
}

/// What `ksim equiv` asks for.
#[derive(Clone, Debug)]
pub struct Request {
    pub original: Side,
    pub transformed: Side,
    /// Seeds of the random inputs tried after the inputs given.
    pub seeds: Vec<u64>,
    /// Executions explored per side and input (0: the canonical schedule only).
    pub max_executions: u64,
    /// Worker threads for the engines (0: one per core).
    pub jobs: usize,
}

/// Which inputs a trial used.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case", tag = "kind", content = "seed")]
pub enum Inputs {
    /// The inputs given on the command line.
    Given,
    /// Every compared array random (`--input A=random:SEED` with a seed per array).
    Random(u64),
}

impl std::fmt::Display for Inputs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Inputs::Given => f.write_str("the inputs given"),
            Inputs::Random(s) => write!(f, "random inputs (seed {s})"),
        }
    }
}

/// One set of inputs tried: the canonical run and the exploration of both sides.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Trial {
    pub inputs: Inputs,
    /// Executions explored (original, transformed); absent when exploration is off or a
    /// difference was found before it.
    pub explored: Option<[u64; 2]>,
    /// Both explorations covered every schedule (verdict EXHAUSTIVE).
    pub exhaustive: bool,
}

/// What differs.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DifferenceKind {
    /// A final element differs.
    Array,
    /// The transformed kernel races where the original does not.
    Race,
    /// The transformed kernel faults where the original does not.
    Fault,
    /// The transformed kernel has a divergent barrier where the original has none.
    Divergence,
    /// The transformed kernel ran past the step bound where the original did not.
    NonTermination,
}

/// The first difference found.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Difference {
    pub kind: DifferenceKind,
    pub inputs: Inputs,
    /// `canonical`, or the transformed kernel's schedule (`ksim run --schedule`'s form).
    pub schedule: String,
    /// The array and element (`Array` only): `out[3]`, with `@g` for group g's copy of a
    /// local array.
    pub element: Option<String>,
    /// The original's and the transformed kernel's value (`Array` only).
    pub values: Option<[String; 2]>,
    /// The race, fault or divergence in words.
    pub message: Option<String>,
}

/// The result of `ksim equiv`.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct EquivReport {
    pub original: String,
    pub transformed: String,
    /// Arrays compared, by name.
    pub compared: Vec<String>,
    /// Arrays not compared, each with the reason.
    pub not_compared: Vec<[String; 2]>,
    pub trials: Vec<Trial>,
    pub difference: Option<Difference>,
}

impl EquivReport {
    /// No difference on everything tried: exit code 0.
    pub fn equivalent(&self) -> bool {
        self.difference.is_none()
    }

    /// The text view: what was compared and tried, then the verdict.
    pub fn text(&self) -> String {
        let mut out = format!(
            "ksim equiv: {} (original) vs {} (transformed)\n",
            self.original, self.transformed
        );
        out.push_str(&format!("compared: {}\n", self.compared.join(", ")));
        for [name, why] in &self.not_compared {
            out.push_str(&format!("not compared: {name} ({why})\n"));
        }
        for t in &self.trials {
            let explored = match t.explored {
                Some([a, b]) => format!(
                    "; explored {a} + {b} executions ({})",
                    if t.exhaustive {
                        "every schedule"
                    } else {
                        "bounded: INCOMPLETE"
                    }
                ),
                None => String::new(),
            };
            out.push_str(&format!(
                "tried {}: canonical schedule{explored}\n",
                t.inputs
            ));
        }
        match &self.difference {
            None => out.push_str("equivalent on everything tried\n"),
            Some(d) => {
                let what = match (&d.element, &d.values, &d.message) {
                    (Some(e), Some([a, b]), _) => {
                        format!("{e} is {a} in the original, {b} in the transformed kernel")
                    }
                    (_, _, Some(m)) => m.clone(),
                    _ => format!("{:?}", d.kind),
                };
                out.push_str(&format!(
                    "DIFFERENT: {what}\n  with {}, schedule {}\n",
                    d.inputs, d.schedule
                ));
            }
        }
        out
    }
}

/// An array both kernels have: its id on each side.
struct Pair {
    name: String,
    ids: [usize; 2],
}

/// Runs both sides on every input set and schedule the request names; `Err` for a launch
/// that cannot be bound (exit 2).
pub fn equiv(req: &Request) -> Result<EquivReport, String> {
    let sides = [&req.original, &req.transformed];
    let bind = |s: &Side| {
        Launch::new(s.kernel.clone(), &s.options).map_err(|e| format!("{}: {}", s.file, e.0))
    };
    let given = [bind(sides[0])?, bind(sides[1])?];
    let (pairs, not_compared) = compared(&given);
    if pairs.is_empty() {
        return Err(format!(
            "{} and {} have no array in common (by name and number of elements) to compare",
            req.original.file, req.transformed.file
        ));
    }
    let mut report = EquivReport {
        original: req.original.file.clone(),
        transformed: req.transformed.file.clone(),
        compared: pairs.iter().map(|p| p.name.clone()).collect(),
        not_compared,
        trials: Vec::new(),
        difference: None,
    };
    let inputs = std::iter::once(Inputs::Given).chain(req.seeds.iter().map(|&s| Inputs::Random(s)));
    for input in inputs {
        let launches = match input {
            Inputs::Given => given.clone(),
            Inputs::Random(seed) => randomised(&given, &pairs, seed)?,
        };
        let (trial, difference) = try_inputs(req, &launches, &pairs, input);
        report.trials.push(trial);
        if difference.is_some() {
            report.difference = difference;
            break;
        }
    }
    Ok(report)
}

/// The arrays both launches have with the same shape of storage, and the others with why.
fn compared(launches: &[Launch; 2]) -> (Vec<Pair>, Vec<[String; 2]>) {
    let mut pairs = Vec::new();
    let mut skipped = Vec::new();
    let (a, b) = (&launches[0], &launches[1]);
    for (i, decl) in a.kernel.arrays.iter().enumerate() {
        let Some(j) = b.kernel.array(&decl.name) else {
            skipped.push([decl.name.clone(), "only in the original".into()]);
            continue;
        };
        if a.len(i) != b.len(j) || a.instances(i) != b.instances(j) {
            skipped.push([
                decl.name.clone(),
                format!(
                    "{}x{} elements in the original, {}x{} in the transformed kernel",
                    a.instances(i),
                    a.len(i),
                    b.instances(j),
                    b.len(j)
                ),
            ]);
            continue;
        }
        pairs.push(Pair {
            name: decl.name.clone(),
            ids: [i, j],
        });
    }
    for decl in &b.kernel.arrays {
        if a.kernel.array(&decl.name).is_none() {
            skipped.push([decl.name.clone(), "only in the transformed kernel".into()]);
        }
    }
    (pairs, skipped)
}

/// Both launches with every compared array filled from `random:SEED'`, where `SEED'` is
/// derived from `seed` and the array's position, identically on both sides.
fn randomised(given: &[Launch; 2], pairs: &[Pair], seed: u64) -> Result<[Launch; 2], String> {
    let mut out = given.clone();
    for (k, p) in pairs.iter().enumerate() {
        let (l, a) = (&given[0], p.ids[0]);
        let spec = format!("random:{}", explore::execution_seed(seed, k as u64));
        let values = parse_input(&spec, l.len(a), l.kernel.arrays[a].elem, l.monoid)
            .map_err(|e| format!("random input for {}: {e}", p.name))?;
        for (side, launch) in out.iter_mut().enumerate() {
            launch.initial[p.ids[side]] = values.clone();
            launch.given[p.ids[side]] = true;
        }
    }
    Ok(out)
}

/// One input set: the canonical run of both sides, then their exploration.
fn try_inputs(
    req: &Request,
    launches: &[Launch; 2],
    pairs: &[Pair],
    inputs: Inputs,
) -> (Trial, Option<Difference>) {
    let mut trial = Trial {
        inputs: inputs.clone(),
        explored: None,
        exhaustive: false,
    };
    let opts = canonical::Options {
        jobs: req.jobs,
        track_races: true,
    };
    let [a, b] = [0, 1].map(|i| canonical::run_preferred(&launches[i], &opts).execution);
    let diff = |kind, schedule: &str, element, values, message| Difference {
        kind,
        inputs: inputs.clone(),
        schedule: schedule.to_string(),
        element,
        values,
        message,
    };
    let findings = |i: usize, e: &Execution| canonical_findings(&launches[i], e);
    if let Some(d) = new_finding(&findings(0, &a), &findings(1, &b)) {
        return (trial, Some(diff(d.0, "canonical", None, None, Some(d.1))));
    }
    if let Some((e, v)) = first_difference(launches, pairs, &a.memory, &b.memory) {
        return (
            trial,
            Some(diff(
                DifferenceKind::Array,
                "canonical",
                Some(e),
                Some(v),
                None,
            )),
        );
    }
    if req.max_executions == 0 {
        return (trial, None);
    }
    let cfg = Config {
        max_executions: Some(req.max_executions),
        jobs: req.jobs,
        ..Config::default()
    };
    let [sa, sb] = [0, 1].map(|i| explore::exhaustive(&launches[i], &cfg, None));
    trial.explored = Some([sa.executions(), sb.executions()]);
    trial.exhaustive = [&sa, &sb]
        .iter()
        .all(|s| s.verdict == explore::Verdict::Exhaustive);
    if let Some((kind, msg, schedule)) = new_explored_finding(launches, &sa, &sb) {
        return (trial, Some(diff(kind, &schedule, None, None, Some(msg))));
    }
    // Every final store of the transformed side must be one the original reaches.
    let reference: Vec<&Memory> = std::iter::once(&a.memory)
        .chain(sa.finals.iter().map(|f| &f.memory))
        .collect();
    for FinalStore {
        memory, schedule, ..
    } in &sb.finals
    {
        let mismatch = reference
            .iter()
            .map(|m| first_difference(launches, pairs, m, memory))
            .collect::<Option<Vec<_>>>();
        if let Some(first) = mismatch.and_then(|all| all.into_iter().next()) {
            let (e, v) = first;
            return (
                trial,
                Some(diff(
                    DifferenceKind::Array,
                    &format!("'{}'", schedule.text()),
                    Some(e),
                    Some(v),
                    None,
                )),
            );
        }
    }
    (trial, None)
}

/// What an execution found, by kind: (race, fault, divergence, non-termination) messages.
type Findings = [Option<String>; 4];

const KINDS: [DifferenceKind; 4] = [
    DifferenceKind::Race,
    DifferenceKind::Fault,
    DifferenceKind::Divergence,
    DifferenceKind::NonTermination,
];

fn canonical_findings(launch: &Launch, e: &Execution) -> Findings {
    let step_bound =
        |f: &interp::Fault| matches!(f.kind, interp::fault::FaultKind::StepBound { .. });
    [
        e.races
            .iter()
            .find(|r| !r.benign())
            .map(|r| race_text(launch, r)),
        e.fault
            .as_ref()
            .filter(|f| !step_bound(f))
            .map(|f| f.to_string()),
        e.divergences
            .first()
            .map(|_| "a divergent barrier".to_string()),
        e.fault
            .as_ref()
            .filter(|f| step_bound(f))
            .map(|f| f.to_string()),
    ]
}

/// A race in words: `a data race on out[3] (g0.t1 and g0.t2)`.
fn race_text(launch: &Launch, r: &interp::Race) -> String {
    let index: String = r.index.iter().map(|i| format!("[{i}]")).collect();
    format!(
        "a data race on {}{index} ({} and {})",
        launch.kernel.arrays[r.array].name, r.first.thread, r.second.thread
    )
}

/// The first kind of finding the transformed execution has and the original has not:
/// its kind and message.
fn new_finding(a: &Findings, b: &Findings) -> Option<(DifferenceKind, String)> {
    let k = (0..4).find(|&k| a[k].is_none() && b[k].is_some())?;
    Some((KINDS[k], b[k].clone().expect("found")))
}

/// [`new_finding`] for explorations, with the transformed kernel's schedule.
fn new_explored_finding(
    launches: &[Launch; 2],
    a: &Summary,
    b: &Summary,
) -> Option<(DifferenceKind, String, String)> {
    let findings = |s: &Summary, launch: &Launch| -> [Option<(String, String)>; 4] {
        let quoted = |s: &interp::exec::Schedule| format!("'{}'", s.text());
        [
            (s.races.iter().find(|r| !r.race.benign()))
                .map(|r| (race_text(launch, &r.race), quoted(&r.schedule))),
            s.faults
                .first()
                .map(|f| (f.fault.to_string(), quoted(&f.schedule))),
            s.divergences
                .first()
                .map(|d| (d.message.clone(), quoted(&d.schedule))),
            (s.non_terminating > 0).then(|| {
                let sched = s
                    .non_terminating_schedule
                    .as_ref()
                    .map(quoted)
                    .unwrap_or_default();
                ("the step bound (non-termination)".to_string(), sched)
            }),
        ]
    };
    let (fa, fb) = (findings(a, &launches[0]), findings(b, &launches[1]));
    let k = (0..4).find(|&k| fa[k].is_none() && fb[k].is_some())?;
    let (msg, sched) = fb[k].clone().expect("found");
    Some((KINDS[k], msg, sched))
}

/// The first compared element where two final stores differ: `out[3]` (or `tree@1[3]`
/// for group 1's copy of a local array) and both values.
fn first_difference(
    launches: &[Launch; 2],
    pairs: &[Pair],
    a: &Memory,
    b: &Memory,
) -> Option<(String, [String; 2])> {
    for p in pairs {
        let (xs, ys) = (&a.arrays[p.ids[0]], &b.arrays[p.ids[1]]);
        for (g, (x, y)) in xs.iter().zip(ys).enumerate() {
            if let Some(i) = (0..x.len()).find(|&i| !same(&x[i], &y[i])) {
                let group = if launches[0].instances(p.ids[0]) > 1 {
                    format!("@{g}")
                } else {
                    String::new()
                };
                let index = element_text(&launches[0].dims[p.ids[0]], i);
                return Some((
                    format!("{}{group}{index}", p.name),
                    [x[i].to_string(), y[i].to_string()],
                ));
            }
        }
    }
    None
}

/// Equal final values; two NaNs are the same result.
fn same(x: &Value, y: &Value) -> bool {
    x == y || (x.to_string() == "nan" && y.to_string() == "nan")
}

/// `[i]` or `[i][j]` for the row-major element `flat` of an array of shape `dims`.
fn element_text(dims: &[usize], flat: usize) -> String {
    let mut index = Vec::new();
    let mut rest = flat;
    for &d in dims.iter().rev() {
        index.push(rest % d.max(1));
        rest /= d.max(1);
    }
    index.iter().rev().map(|i| format!("[{i}]")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn element_text_is_row_major() {
        assert_eq!(element_text(&[8], 5), "[5]");
        assert_eq!(element_text(&[3, 4], 6), "[1][2]");
    }
}
