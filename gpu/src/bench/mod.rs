//! Benchmarks: every (kernel, size) point is checked against the simulator, then timed
//! without ksim's harness code, and summarised with the simulator's own measures beside
//! the device times, so that a figure can be published and reproduced.
//!
//! For each point ([`bench_point`]):
//! 1. **Simulate** the launch once on the fast executor (canonical schedule, race
//!    tracking). A fault or a barrier divergence is undefined behaviour on a device: the
//!    point is left out and never launched. A data race leaves it out too, unless
//!    `force` (then it is timed and marked [`Check::Race`]).
//! 2. **Compare** one device run of the full program (every local array filled and
//!    copied back, as `ksim gpu compare` runs it) with the simulator, array by array; a
//!    mismatch leaves the point out unless `force` ([`Check::Mismatch`]).
//! 3. **Time** the kernel the user wrote (see [`TimedProgram`]): `warmup` untimed runs,
//!    then `repeat` timed ones, through OpenCL profiling events (kernel time) and the host
//!    clock (total time, with the transfers). The last timed run's results are compared
//!    with the simulator again, since the timed program differs from the compared one.
//!
//! What is timed. ksim gives `local` arrays host-visible contents, so the generated
//! program fills every local array with the monoid's identity at kernel start and copies
//! it back to a global buffer at the end (see [`crate::emit`]). That harness work is not
//! the user's kernel and is not the same for kernels being compared (the 2D tree of the
//! 2015 paper is 11 × 1024 elements where the 1D one is 2 × 1024). The timed program
//! therefore copies back only the *output* arrays ([`outputs`]) and fills a local array
//! only when the results depend on it: the simulator runs the launch a second time with
//! those arrays holding arbitrary values instead of the identity, and if the outputs are
//! the same (and no fault occurs), the fill is left out. Local arrays with host-given
//! contents (the input `in` of the examples) are still copied in: that is the kernel's
//! input load. What stayed in the timed kernel is recorded per point
//! ([`BenchPoint::harness`]); `include_harness` times the full program instead.

pub mod csv_io;
pub mod stats;
pub mod sweep;
pub mod table;

use crate::compare::{compare, compare_arrays, ArrayMeta, DEFAULT_FLOAT_ULPS};
use crate::emit::EmitOptions;
use crate::pipeline::{compare_pipeline, run_pipeline, run_pipeline_with, simulate, Pipeline};
use crate::runtime::{run, run_with, Device, GpuError, Timing};
use interp::fast::{self, FastOptions};
use interp::launch::parse_input;
use interp::{Launch, Memory};
use lang::ast::Space;
use lang::core::ArrayId;
use serde::{Deserialize, Serialize};
pub use stats::{Spread, Statistic, Stats};

/// How a point was checked before it was timed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Check {
    /// No race, fault or divergence in the simulator; the device agreed with it.
    Ok,
    /// The simulator found a data race; timed anyway (`--force`).
    Race,
    /// The device's results differ from the simulator's; timed anyway (`--force`).
    Mismatch,
}

/// The simulator's measures of one point, from the fast executor's canonical run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SimMeasures {
    /// Work-items launched (groups × local size, summed over a pipeline's launches).
    pub threads: u64,
    /// K-STEP applications: statements executed, summed over all work-items.
    pub steps: u64,
    /// Barrier intervals executed, summed over work-groups (and launches).
    pub intervals: u64,
    /// The SIMT cost with lock-step warps (`--warp-size W`), from a second fast run with
    /// warps of `W` ([`interp::warp`]); `None` without `--warp-size`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warp: Option<WarpCost>,
}

/// What lock-step warps cost to simulate one point ([`interp::warp::SimtCost`]'s totals,
/// summed over a pipeline's launches).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WarpCost {
    /// Lanes per warp.
    pub warp_size: usize,
    /// Warp instructions issued.
    pub instructions: u64,
    /// Active lanes summed over the instructions.
    pub lane_steps: u64,
    /// `if`/`while` tests whose active lanes did not all go the same way.
    pub divergent_branches: u64,
}

impl WarpCost {
    fn add(&mut self, c: &interp::warp::SimtCounts) {
        self.instructions += c.instructions;
        self.lane_steps += c.lane_steps;
        self.divergent_branches += c.divergent_branches;
    }
}

/// The SIMT cost of `launch` with warps of `warp_size` lanes, added to `cost`: the
/// canonical run with lock-step warps, without race tracking (the point was checked
/// without warps).
fn warp_cost(launch: &Launch, warp_size: usize, cost: &mut WarpCost) -> Result<(), String> {
    let mut l = launch.clone();
    l.warp_size = Some(warp_size);
    let out = fast::run(
        &l,
        &FastOptions {
            jobs: 0,
            track_races: false,
        },
    )
    .map_err(|e| format!("no SIMT cost with --warp-size {warp_size}: {e}"))?;
    if let Some(f) = &out.fault {
        return Err(format!(
            "no SIMT cost: with warps of {warp_size} lanes the simulator found a fault ({f})"
        ));
    }
    cost.warp_size = warp_size;
    if let Some(simt) = &out.simt {
        cost.add(&simt.total);
    }
    Ok(())
}

/// One timed (kernel, size) point.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BenchPoint {
    /// The kernel's label: the file stem, or `scan:tree1d` / `scan:tree2d`.
    pub kernel: String,
    pub device: String,
    /// The swept parameter (e.g. `n`) and its value.
    pub param: String,
    pub size: u64,
    /// Work-groups and work-items per group (of the first launch for a pipeline; the
    /// largest local size).
    pub groups: usize,
    pub local_size: usize,
    /// Kernel launches per run (1, or a pipeline's stages).
    pub launches: usize,
    pub monoid: String,
    /// The input specs, `ARRAY=SPEC` joined by `;`.
    pub input: String,
    /// The harness work that was inside the timed kernel: `none`, or e.g.
    /// `copy-in in; copy-out out`.
    pub harness: String,
    pub check: Check,
    /// Kernel time from profiling events (summed over a pipeline's launches), ns.
    pub kernel_ns: Stats,
    /// Host wall time of a run, transfers included, ns.
    pub total_ns: Stats,
    pub sim: SimMeasures,
    /// Every timed repetition, in order.
    pub kernel_samples_ns: Vec<u64>,
    pub total_samples_ns: Vec<u64>,
}

impl BenchPoint {
    /// The summary of one metric.
    pub fn metric(&self, m: Metric) -> &Stats {
        match m {
            Metric::Kernel => &self.kernel_ns,
            Metric::Total => &self.total_ns,
        }
    }
}

/// Which device time a table or figure shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Metric {
    /// Kernel time from OpenCL profiling events.
    #[default]
    Kernel,
    /// Host wall time including transfers.
    Total,
}

impl Metric {
    pub fn describe(self) -> &'static str {
        match self {
            Metric::Kernel => "kernel time",
            Metric::Total => "total time (with transfers)",
        }
    }
}

/// A point that was not timed, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeftOut {
    pub kernel: String,
    pub param: String,
    pub size: u64,
    pub reason: String,
}

/// Where and how a series was measured (the CSV's sidecar JSON).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BenchMeta {
    pub device: String,
    /// GPU, CPU, accelerator or other.
    pub device_kind: String,
    pub device_version: String,
    pub driver_version: String,
    pub platform: String,
    pub ksim_version: String,
    pub git_hash: String,
    /// UTC, RFC 3339.
    pub date: String,
    pub command_line: String,
    pub warmup: usize,
    pub repeat: usize,
    /// What the timed region holds, in words.
    pub timed: String,
}

impl BenchMeta {
    /// The metadata of a series measured now on `device`.
    pub fn now(device: &Device, opts: &BenchOptions, ksim: (&str, &str), command: String) -> Self {
        let i = &device.info;
        BenchMeta {
            device: i.name.clone(),
            device_kind: i.kind.clone(),
            device_version: i.version.clone(),
            driver_version: i.driver.clone(),
            platform: i.platform.clone(),
            ksim_version: ksim.0.to_string(),
            git_hash: ksim.1.to_string(),
            date: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
            command_line: command,
            warmup: opts.warmup,
            repeat: opts.repeat,
            timed: if opts.include_harness {
                "the whole generated program, harness included (--include-harness)".into()
            } else {
                "the user's kernel; only the harness work in the `harness` column is inside it"
                    .into()
            },
        }
    }
}

/// A benchmark's result: the timed points and those left out.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BenchSeries {
    pub meta: BenchMeta,
    pub points: Vec<BenchPoint>,
    pub left_out: Vec<LeftOut>,
}

/// Options of a benchmark.
#[derive(Clone, Debug)]
pub struct BenchOptions {
    pub warmup: usize,
    /// Timed runs (at least 1).
    pub repeat: usize,
    /// Time the whole generated program, fills and copies included.
    pub include_harness: bool,
    /// Time points with a race or a mismatch anyway (never faults or divergences).
    pub force: bool,
    /// Also simulate each point with lock-step warps of this many lanes, for the SIMT
    /// cost columns ([`SimMeasures::warp`]).
    pub warp_size: Option<usize>,
}

impl Default for BenchOptions {
    fn default() -> Self {
        BenchOptions {
            warmup: 2,
            repeat: 10,
            include_harness: false,
            force: false,
            warp_size: None,
        }
    }
}

/// What to run at one point of a sweep.
#[derive(Clone, Debug)]
pub enum BenchJob {
    /// One launch; `outputs` are the arrays holding its result (see [`outputs`]).
    Kernel {
        launch: Launch,
        outputs: Vec<ArrayId>,
    },
    Pipeline(Pipeline),
}

/// The outcome of one point.
#[derive(Clone, Debug)]
pub enum PointOutcome {
    Timed(Box<BenchPoint>),
    LeftOut(LeftOut),
}

/// Where a point sits in the sweep and how it was set up, for its record.
#[derive(Clone, Debug)]
pub struct PointSpec {
    pub kernel: String,
    pub param: String,
    pub size: u64,
    pub input: String,
}

/// The arrays that hold a launch's result: `names` when given; otherwise every
/// non-const global array and a local array named `out`, or, when that finds nothing,
/// every non-const array.
pub fn outputs(launch: &Launch, names: &[String]) -> Result<Vec<ArrayId>, String> {
    let k = &launch.kernel;
    if !names.is_empty() {
        return names
            .iter()
            .map(|n| {
                k.array(n).ok_or_else(|| {
                    format!(
                        "--out {n}: kernel `{}` has no array `{n}` (its arrays: {})",
                        k.name,
                        k.arrays
                            .iter()
                            .map(|a| a.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                })
            })
            .collect();
    }
    let writable = |a: &usize| !k.arrays[*a].is_const;
    let found: Vec<ArrayId> = (0..k.arrays.len())
        .filter(writable)
        .filter(|&a| k.arrays[a].space == Space::Global || k.arrays[a].name == "out")
        .collect();
    if found.is_empty() {
        Ok((0..k.arrays.len()).filter(writable).collect())
    } else {
        Ok(found)
    }
}

/// Whether `launch` fits `device`: its work-group size and its local arrays (checked for
/// a whole sweep before anything runs, so that a sweep past the device's limits is
/// lowered rather than stopped halfway).
pub fn fits(launch: &Launch, device: &Device) -> Result<(), String> {
    let i = &device.info;
    if launch.local_size > i.max_work_group_size {
        return Err(format!(
            "work-groups of {} threads are more than the device's maximum of {}",
            launch.local_size, i.max_work_group_size
        ));
    }
    let bytes = crate::emit::emit_with(launch, &EmitOptions::default())
        .map_err(|e| e.to_string())?
        .local_bytes;
    if bytes as u64 > i.local_mem_size {
        return Err(format!(
            "its local arrays need {bytes} bytes of local memory, more than the device's {}",
            i.local_mem_size
        ));
    }
    Ok(())
}

/// Refuses a monoid without a device encoding (the list monoid) before anything runs.
pub fn check_monoid(monoid: interp::Monoid) -> Result<(), String> {
    match crate::repr::Repr::of(lang::core::Ty::Generic, monoid) {
        Some(_) => Ok(()),
        None => Err(crate::emit::EmitError::UnsupportedMonoid(monoid).to_string()),
    }
}

/// Checks and times one point (see the module documentation). `Err` is a device
/// failure; everything the simulator or the comparison finds is a [`LeftOut`].
pub fn bench_point(
    job: &BenchJob,
    spec: &PointSpec,
    device: &Device,
    opts: &BenchOptions,
) -> Result<PointOutcome, GpuError> {
    match job {
        BenchJob::Kernel { launch, outputs } => bench_kernel(launch, outputs, spec, device, opts),
        BenchJob::Pipeline(p) => bench_pipeline(p, spec, device, opts),
    }
}

fn left_out(spec: &PointSpec, reason: String) -> PointOutcome {
    PointOutcome::LeftOut(LeftOut {
        kernel: spec.kernel.clone(),
        param: spec.param.clone(),
        size: spec.size,
        reason,
    })
}

/// The fast executor's canonical run, or why the point cannot be timed.
fn simulate_launch(launch: &Launch, races: bool) -> Result<fast::FastOutcome, String> {
    let out = fast::run(
        launch,
        &FastOptions {
            jobs: 0,
            track_races: races,
        },
    )
    .map_err(|e| e.to_string())?;
    if let Some(f) = &out.fault {
        return Err(format!(
            "the simulator found a fault ({f}): an undefined kernel is never run on the \
             device (`ksim run` shows where)"
        ));
    }
    if let Some(d) = out.divergences.first() {
        return Err(format!(
            "the simulator found barrier divergence ({}): undefined on a device, never run \
             there",
            d.divergence
                .as_deref()
                .unwrap_or("threads wait at different barriers")
        ));
    }
    Ok(out)
}

/// The race message, or `None` for a race-free run.
fn race_message(launch: &Launch, out: &fast::FastOutcome) -> Option<String> {
    let r = &out.races.first()?.race;
    Some(format!(
        "the simulator found {} data race(s), e.g. on `{}` between {} and {} \
         (`ksim races` shows them); --force times it anyway",
        out.races.len(),
        launch.kernel.arrays[r.array].name,
        r.first.thread,
        r.second.thread
    ))
}

/// `launch` with every local array that starts at the default given arbitrary contents
/// instead (the arrays changed are returned too).
fn poisoned(launch: &Launch) -> (Launch, Vec<ArrayId>) {
    let mut l = launch.clone();
    let mut changed = Vec::new();
    for (a, decl) in launch.kernel.arrays.iter().enumerate() {
        let default = interp::Value::default_of(decl.elem, launch.monoid);
        if decl.space != Space::Local || launch.initial[a].iter().any(|v| *v != default) {
            continue;
        }
        if let Ok(v) = parse_input("random:7919", launch.len(a), decl.elem, launch.monoid) {
            l.initial[a] = v;
            changed.push(a);
        }
    }
    (l, changed)
}

/// The local arrays whose default fill can be left out of the timed kernel: all the
/// default-initialised ones when a run with arbitrary initial contents ends with the same
/// `outputs` and no fault; none otherwise.
fn unneeded_fills(launch: &Launch, expected: &Memory, outputs: &[ArrayId]) -> Vec<ArrayId> {
    let (l, changed) = poisoned(launch);
    if changed.is_empty() {
        return changed;
    }
    match simulate_launch(&l, false) {
        Ok(out)
            if outputs
                .iter()
                .all(|&a| out.memory.arrays[a] == expected.arrays[a]) =>
        {
            changed
        }
        _ => Vec::new(),
    }
}

/// The timed program of a launch: which fills and copies it keeps.
#[derive(Clone, Debug)]
pub struct TimedProgram {
    pub emit: EmitOptions,
    /// The harness work left in, in words (`none` when nothing).
    pub harness: String,
}

/// Chooses the timed program of `launch` (see the module documentation).
pub fn timed_program(
    launch: &Launch,
    expected: &Memory,
    outputs: &[ArrayId],
    include_harness: bool,
) -> TimedProgram {
    let k = &launch.kernel;
    let locals: Vec<ArrayId> = (0..k.arrays.len())
        .filter(|&a| k.arrays[a].space == Space::Local)
        .collect();
    let emit = if include_harness {
        EmitOptions::default()
    } else {
        EmitOptions {
            local_copy_out: true,
            no_copy_out: locals
                .iter()
                .copied()
                .filter(|a| !outputs.contains(a))
                .collect(),
            no_fill: unneeded_fills(launch, expected, outputs),
        }
    };
    let mut parts = Vec::new();
    for &a in &locals {
        let decl = &k.arrays[a];
        let default = interp::Value::default_of(decl.elem, launch.monoid);
        let host_given = launch.initial[a].iter().any(|v| *v != default);
        if host_given {
            parts.push(format!("copy-in {}", decl.name));
        } else if !emit.no_fill.contains(&a) {
            parts.push(format!("fill {}", decl.name));
        }
    }
    for &a in &locals {
        if !k.arrays[a].is_const && emit.local_copy_out && !emit.no_copy_out.contains(&a) {
            parts.push(format!("copy-out {}", k.arrays[a].name));
        }
    }
    let harness = if parts.is_empty() {
        "none".to_string()
    } else {
        parts.join("; ")
    };
    TimedProgram { emit, harness }
}

fn first_mismatch(cmp: &crate::Comparison) -> String {
    let first = cmp.to_string();
    let first = first.lines().next().unwrap_or("").trim().to_string();
    first
}

/// The timings after the warm-up runs.
fn timed(timings: &[Timing], warmup: usize) -> (Vec<u64>, Vec<u64>) {
    timings[warmup.min(timings.len())..]
        .iter()
        .map(|t| (t.kernel_ns, t.total_ns))
        .unzip()
}

#[allow(clippy::too_many_arguments)]
fn point(
    spec: &PointSpec,
    device: &Device,
    shape: (usize, usize, usize),
    monoid: interp::Monoid,
    harness: String,
    check: Check,
    sim: SimMeasures,
    samples: (Vec<u64>, Vec<u64>),
) -> PointOutcome {
    let (kernel, total) = samples;
    PointOutcome::Timed(Box::new(BenchPoint {
        kernel: spec.kernel.clone(),
        device: device.info.name.clone(),
        param: spec.param.clone(),
        size: spec.size,
        groups: shape.0,
        local_size: shape.1,
        launches: shape.2,
        monoid: monoid.to_string(),
        input: spec.input.clone(),
        harness,
        check,
        kernel_ns: Stats::of(&kernel).expect("at least one timed run"),
        total_ns: Stats::of(&total).expect("at least one timed run"),
        sim,
        kernel_samples_ns: kernel,
        total_samples_ns: total,
    }))
}

fn bench_kernel(
    launch: &Launch,
    outputs: &[ArrayId],
    spec: &PointSpec,
    device: &Device,
    opts: &BenchOptions,
) -> Result<PointOutcome, GpuError> {
    let sim = match simulate_launch(launch, true) {
        Ok(s) => s,
        Err(why) => return Ok(left_out(spec, why)),
    };
    let mut check = Check::Ok;
    if let Some(why) = race_message(launch, &sim) {
        if !opts.force {
            return Ok(left_out(spec, why));
        }
        check = Check::Race;
    }
    // A racy kernel's simulated memory is one of several outcomes: nothing to compare.
    let racy = check == Check::Race;
    let compared = |mem: &Memory, only: Option<&[ArrayId]>| -> Option<String> {
        if racy {
            return None;
        }
        let cmp = match only {
            None => compare(&sim.memory, mem, launch, 5),
            Some(arrays) => {
                let metas = arrays
                    .iter()
                    .map(|&a| ArrayMeta {
                        name: launch.kernel.arrays[a].name.clone(),
                        local: launch.kernel.arrays[a].space == Space::Local,
                        dims: launch.dims[a].clone(),
                    })
                    .collect::<Vec<_>>();
                let pick = |m: &Memory| {
                    arrays
                        .iter()
                        .map(|&a| m.arrays[a].clone())
                        .collect::<Vec<_>>()
                };
                compare_arrays(
                    &metas,
                    &pick(&sim.memory),
                    &pick(mem),
                    5,
                    DEFAULT_FLOAT_ULPS,
                )
            }
        };
        (!cmp.is_match()).then(|| first_mismatch(&cmp))
    };
    let checked = run(launch, device, 1)?;
    if let Some(m) = compared(&checked.memory, None) {
        if !opts.force {
            return Ok(left_out(
                spec,
                format!("the device's results differ from the simulator's ({m}); --force times it anyway"),
            ));
        }
        check = Check::Mismatch;
    }
    let program = timed_program(launch, &sim.memory, outputs, opts.include_harness);
    let r = run_with(
        launch,
        device,
        opts.warmup + opts.repeat.max(1),
        &program.emit,
    )?;
    if let Some(m) = compared(&r.memory, Some(outputs)) {
        if check == Check::Ok && !opts.force {
            return Ok(left_out(
                spec,
                format!(
                    "the timed program (harness: {}) gives other results than the simulator \
                     ({m}); --include-harness times the compared program",
                    program.harness
                ),
            ));
        }
        check = Check::Mismatch;
    }
    let mut measures = SimMeasures {
        threads: (launch.groups * launch.local_size) as u64,
        steps: sim.steps,
        intervals: sim.intervals,
        warp: None,
    };
    if let Some(w) = opts.warp_size {
        let mut cost = WarpCost::default();
        if let Err(why) = warp_cost(launch, w, &mut cost) {
            return Ok(left_out(spec, why));
        }
        measures.warp = Some(cost);
    }
    Ok(point(
        spec,
        device,
        (launch.groups, launch.local_size, 1),
        launch.monoid,
        program.harness,
        check,
        measures,
        timed(&r.timings, opts.warmup),
    ))
}

fn bench_pipeline(
    p: &Pipeline,
    spec: &PointSpec,
    device: &Device,
    opts: &BenchOptions,
) -> Result<PointOutcome, GpuError> {
    let mut measures = SimMeasures::default();
    let expected = simulate(p, |l| {
        let out = simulate_launch(l, true)?;
        if let Some(why) = race_message(l, &out) {
            return Err(why);
        }
        measures.threads += (l.groups * l.local_size) as u64;
        measures.steps += out.steps;
        measures.intervals += out.intervals;
        if let Some(w) = opts.warp_size {
            warp_cost(l, w, measures.warp.get_or_insert_with(WarpCost::default))?;
        }
        Ok(out.memory)
    });
    let expected = match expected {
        Ok(m) => m,
        Err(e) => return Ok(left_out(spec, e.to_string())),
    };
    let mut check = Check::Ok;
    let checked = run_pipeline(p, device, 1)?;
    let cmp = compare_pipeline(&expected, &checked.memory, p, 5);
    if !cmp.is_match() {
        if !opts.force {
            return Ok(left_out(
                spec,
                format!(
                    "the device's results differ from the simulator's ({}); --force times it anyway",
                    first_mismatch(&cmp)
                ),
            ));
        }
        check = Check::Mismatch;
    }
    // The fills can go when the pipeline ends the same with arbitrary local contents.
    let fill = opts.include_harness
        || simulate(p, |l| {
            simulate_launch(&poisoned(l).0, false).map(|o| o.memory)
        })
        .map_or(true, |m| m != expected);
    let r = run_pipeline_with(p, device, opts.warmup + opts.repeat.max(1), fill)?;
    if !compare_pipeline(&expected, &r.memory, p, 5).is_match() {
        if check == Check::Ok && !opts.force {
            return Ok(left_out(
                spec,
                "the timed pipeline (local fills left out) gives other results than the \
                 simulator; --include-harness times the compared program"
                    .into(),
            ));
        }
        check = Check::Mismatch;
    }
    let first = p.stages.first().map(|s| &s.launch);
    let groups = first.map_or(0, |l| l.groups);
    let local = p
        .stages
        .iter()
        .map(|s| s.launch.local_size)
        .max()
        .unwrap_or(0);
    let monoid = first.map_or(interp::Monoid::IntAdd, |l| l.monoid);
    let harness = if fill {
        "fill of the local arrays"
    } else {
        "none"
    };
    Ok(point(
        spec,
        device,
        (groups, local, p.stages.len()),
        monoid,
        harness.into(),
        check,
        measures,
        timed(&r.timings, opts.warmup),
    ))
}
