//! `ksim gpu devices | emit | compare | bench` and `ksim plot`: the same kernel on a real
//! OpenCL device (through `gpu`), compared with the simulator, timed and plotted.
//!
//! Besides kernel files, `compare` and `bench` take `scan:tree1d` and `scan:tree2d`: the
//! multi-work-group Blelloch scan pipeline (2015 paper, section 4.5) with the tree stored
//! as a 1D heap or a 2D level × node array, sized by `-D n=N`.

use super::common::*;
use clap::{Args, Subcommand, ValueEnum};
use gpu::{Device, GpuError, Pipeline, Storage};
use interp::launch::{parse_input, Launch};
use interp::Memory;
use lang::core::Ty;
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
pub struct GpuArgs {
    #[command(subcommand)]
    pub command: GpuCommand,
}

#[derive(Subcommand, Debug)]
pub enum GpuCommand {
    /// List OpenCL platforms and devices with their limits.
    Devices,
    /// Print the OpenCL C generated for a launch.
    Emit(EmitArgs),
    /// Run on a device and on the simulator; compare every array.
    Compare(CompareArgs),
    /// Check kernels against the simulator, then time them over a range of sizes (the
    /// kernel only: ksim's harness code is left out); write a table, CSV, JSON, figures.
    Bench(Box<BenchArgs>),
}

#[derive(Args, Debug)]
pub struct EmitArgs {
    #[command(flatten)]
    pub launch: LaunchArgs,
}

#[derive(Args, Debug, Clone)]
pub struct DeviceArg {
    /// Device index or name substring (default: $KSIM_DEVICE, else the first GPU, else
    /// the first device).
    #[arg(long)]
    pub device: Option<String>,
}

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// A kernel file, or `scan:tree1d` / `scan:tree2d` for the multi-work-group scan.
    #[command(flatten)]
    pub launch: LaunchArgs,
    #[command(flatten)]
    pub device: DeviceArg,
    /// Device runs (each is compared).
    #[arg(long, default_value_t = 1)]
    pub repeat: usize,
    /// Most mismatches printed.
    #[arg(long, default_value_t = 20)]
    pub limit: usize,
}

#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Kernel files, or `scan:tree1d` / `scan:tree2d`.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// `-D n=2..1024` sweeps n over powers of two (also `n=2,4,8` or `n=16`); other
    /// parameters are fixed values.
    #[arg(short = 'D', value_name = "NAME=RANGE")]
    pub define: Vec<String>,
    /// Timed runs per kernel and size, 1 to 100000 (the table, CSV and figures give their
    /// median, mean, min, max and quartiles).
    #[arg(long, default_value_t = 10, value_parser = parse_repeat)]
    pub repeat: usize,
    /// Untimed runs before timing, 0 to 100000.
    #[arg(long, default_value_t = 2, value_parser = parse_warmup)]
    pub warmup: usize,
    /// `ARRAY=SPEC`: contents of an array (default `in=random:1`); a bare SPEC is for the
    /// `--in` array. Specs as for `ksim run --input`.
    #[arg(long, value_name = "[ARRAY=]SPEC")]
    pub input: Vec<String>,
    /// The input array a bare `--input SPEC` (and the default `random:1`) fills (default
    /// `in`; a kernel without `in` gets no default input, a named array must exist).
    #[arg(long = "in", value_name = "ARRAY")]
    pub in_array: Option<String>,
    /// Arrays holding the result (repeatable): the only local arrays copied back in the
    /// timed kernel, and those compared after timing. Default: the non-const global
    /// arrays and a local array named `out`.
    #[arg(long = "out", value_name = "ARRAY")]
    pub out_arrays: Vec<String>,
    /// The monoid of `T` and `⊕` (any with a device encoding: not `list`).
    #[arg(long, default_value = "int-add", value_parser = parse_monoid_arg)]
    pub monoid: interp::Monoid,
    /// Time the whole generated program: the fills of local arrays and their copies back
    /// to global memory included (by default only the kernel is timed).
    #[arg(long)]
    pub include_harness: bool,
    /// Time points where the simulator found a data race or the device disagreed with it
    /// (marked in the table and CSV). Faults and barrier divergence never run.
    #[arg(long)]
    pub force: bool,
    /// Also simulate every point with lock-step warps of W lanes (1 to 64) and add its
    /// SIMT cost to the CSV and JSON: warp instructions, lane-steps and divergent
    /// branches (`--cost warp-instructions` plots time against it).
    #[arg(long, value_name = "W", value_parser = parse_warp_size)]
    pub warp_size: Option<usize>,
    /// Write one row per (kernel, size) here, with a `.meta.json` sidecar (device,
    /// driver, ksim version and commit, date, command line).
    #[arg(long)]
    pub csv: Option<PathBuf>,
    /// Write the whole series (metadata, points, points left out) as JSON here.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Draw a figure here (.png, .svg or .pdf; repeatable).
    #[arg(long)]
    pub plot: Vec<PathBuf>,
    #[command(flatten)]
    pub figure: FigureArgs,
    #[command(flatten)]
    pub device: DeviceArg,
    #[arg(long)]
    pub quiet: bool,
}

/// The most warm-up or timed runs per point: bounds the run count (`--warmup` plus
/// `--repeat` cannot overflow) and the samples kept.
const MAX_RUNS: usize = 100_000;

fn parse_repeat(s: &str) -> Result<usize, String> {
    parse_runs(s, 1)
}

fn parse_warmup(s: &str) -> Result<usize, String> {
    parse_runs(s, 0)
}

fn parse_runs(s: &str, min: usize) -> Result<usize, String> {
    s.parse::<usize>()
        .ok()
        .filter(|n| (min..=MAX_RUNS).contains(n))
        .ok_or_else(|| format!("expected a number of runs from {min} to {MAX_RUNS}"))
}

fn parse_monoid_arg(s: &str) -> Result<interp::Monoid, String> {
    s.parse()
}

fn parse_warp_size(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(w) if (1..=64).contains(&w) => Ok(w),
        _ => Err(format!("`{s}`: expected lanes per warp, 1 to 64")),
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CostArg {
    /// K-STEP applications: statements executed, summed over the work-items.
    Steps,
    /// Warp instructions with lock-step warps (a CSV from `gpu bench --warp-size W`).
    WarpInstructions,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum MetricArg {
    /// Kernel time from OpenCL profiling events.
    Kernel,
    /// Host wall time of a run, transfers included.
    Total,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum StatArg {
    Median,
    Mean,
    Min,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum BandArg {
    /// From the fastest to the slowest run.
    Minmax,
    /// Interquartile range.
    Iqr,
    None,
}

/// How figures look (`ksim gpu bench --plot` and `ksim plot`).
#[derive(Args, Debug, Clone)]
pub struct FigureArgs {
    /// Draw simulated cost (steps) against measured time: a panel per kernel and a
    /// scatter with the log-log least-squares fit and its R².
    #[arg(long)]
    pub sim_vs_real: bool,
    /// The simulated cost of `--sim-vs-real`: statements executed (`steps`) or warp
    /// instructions issued with lock-step warps (`warp-instructions`, from
    /// `gpu bench --warp-size W`).
    #[arg(long, value_enum, default_value = "steps")]
    pub cost: CostArg,
    /// Plot kernel time (profiling events) or total time (with transfers).
    #[arg(long, value_enum, default_value = "kernel")]
    pub metric: MetricArg,
    /// The statistic drawn and tabulated.
    #[arg(long, value_enum, default_value = "median")]
    pub stat: StatArg,
    /// The band drawn around each line.
    #[arg(long, value_enum, default_value = "minmax")]
    pub band: BandArg,
    /// Figure title (default: the metric and the device; `--title ''` for none).
    #[arg(long)]
    pub title: Option<String>,
    /// x axis label (default: the swept parameter).
    #[arg(long)]
    pub xlabel: Option<String>,
    /// y axis label (default: metric, statistic and unit).
    #[arg(long)]
    pub ylabel: Option<String>,
    /// Width in pixels (default 1024).
    #[arg(long, conflicts_with = "size")]
    pub width: Option<u32>,
    /// Height in pixels (default 640).
    #[arg(long, conflicts_with = "size")]
    pub height: Option<u32>,
    /// Physical size, e.g. `3.3x2.2in` (also cm, mm); pixels = size × --dpi.
    #[arg(long)]
    pub size: Option<String>,
    /// Resolution (default 160: 1024 × 640 pixels are 6.4 × 4 in).
    #[arg(long, default_value_t = 160.0)]
    pub dpi: f64,
    /// Text size in points at the physical size (ticks, labels, legend).
    #[arg(long, default_value_t = 9.0)]
    pub font_size: f64,
    /// Logarithmic time axis (the default).
    #[arg(long, overrides_with = "linear_y")]
    pub log_y: bool,
    /// Linear time axis.
    #[arg(long)]
    pub linear_y: bool,
    /// Legend name of a kernel: `FILE=NAME` (FILE as given, or its stem).
    #[arg(long, value_name = "FILE=NAME")]
    pub label: Vec<String>,
}

impl FigureArgs {
    fn metric(&self) -> gpu::Metric {
        match self.metric {
            MetricArg::Kernel => gpu::Metric::Kernel,
            MetricArg::Total => gpu::Metric::Total,
        }
    }

    fn stat(&self) -> gpu::Statistic {
        match self.stat {
            StatArg::Median => gpu::Statistic::Median,
            StatArg::Mean => gpu::Statistic::Mean,
            StatArg::Min => gpu::Statistic::Min,
        }
    }

    /// The figure these options describe, or why they are wrong (checked before a run).
    fn figure(&self) -> Result<gpu::Figure, Failure> {
        if !(self.dpi > 0.0 && self.dpi <= 2400.0) {
            return Err(Failure::usage(format!(
                "--dpi {}: expected 1 to 2400",
                self.dpi
            )));
        }
        if !(self.font_size > 0.0 && self.font_size <= 72.0) {
            return Err(Failure::usage(format!(
                "--font-size {}: expected a size in points, up to 72",
                self.font_size
            )));
        }
        let (width_px, height_px) = match &self.size {
            Some(s) => {
                let (w, h) = gpu::plot::parse_size(s).map_err(Failure::usage)?;
                ((w * self.dpi).round() as u32, (h * self.dpi).round() as u32)
            }
            None => (self.width.unwrap_or(1024), self.height.unwrap_or(640)),
        };
        if !(64..=16384).contains(&width_px) || !(64..=16384).contains(&height_px) {
            return Err(Failure::usage(format!(
                "a figure of {width_px} × {height_px} pixels: each side must be 64 to 16384"
            )));
        }
        let labels = self
            .label
            .iter()
            .map(|l| {
                l.split_once('=')
                    .filter(|(f, n)| !f.trim().is_empty() && !n.trim().is_empty())
                    .map(|(f, n)| (label(Path::new(f)), n.to_string()))
                    .ok_or_else(|| Failure::usage(format!("--label {l}: expected FILE=NAME")))
            })
            .collect::<Result<_, _>>()?;
        Ok(gpu::Figure {
            title: self.title.clone(),
            xlabel: self.xlabel.clone(),
            ylabel: self.ylabel.clone(),
            width_px,
            height_px,
            dpi: self.dpi,
            font_pt: self.font_size,
            metric: self.metric(),
            stat: self.stat(),
            spread: match self.band {
                BandArg::Minmax => gpu::Spread::MinMax,
                BandArg::Iqr => gpu::Spread::Iqr,
                BandArg::None => gpu::Spread::None,
            },
            log_y: !self.linear_y || self.log_y,
            labels,
            cost: match self.cost {
                CostArg::Steps => gpu::plot::Cost::Steps,
                CostArg::WarpInstructions => gpu::plot::Cost::WarpInstructions,
            },
        })
    }
}

#[derive(Args, Debug)]
pub struct PlotArgs {
    /// CSVs written by `ksim gpu bench --csv` (several are drawn together).
    #[arg(required = true)]
    pub csv: Vec<PathBuf>,
    /// The figure to draw (.png, .svg or .pdf; repeatable).
    #[arg(long, required = true)]
    pub plot: Vec<PathBuf>,
    #[command(flatten)]
    pub figure: FigureArgs,
}

pub fn gpu(args: &GpuArgs) -> CmdResult {
    match &args.command {
        GpuCommand::Devices => devices(),
        GpuCommand::Emit(a) => emit(a),
        GpuCommand::Compare(a) => compare(a),
        GpuCommand::Bench(a) => bench(a),
    }
}

/// GPU errors: a missing platform or an unusable launch is the user's to fix (exit 2).
fn gpu_failure(e: GpuError) -> Failure {
    Failure::usage(e.to_string())
}

fn devices() -> CmdResult {
    let list = gpu::devices().map_err(gpu_failure)?;
    if list.is_empty() {
        return Err(Failure::usage(gpu::NO_PLATFORM));
    }
    for d in list {
        println!("{d}");
    }
    Ok(EXIT_OK)
}

fn emit(args: &EmitArgs) -> CmdResult {
    let (_, launch) = args.launch.launch()?;
    let code = gpu::emit(&launch).map_err(|e| Failure::usage(e.to_string()))?;
    print!("{code}");
    Ok(EXIT_OK)
}

fn open(arg: &DeviceArg) -> Result<Device, Failure> {
    gpu::open(arg.device.as_deref()).map_err(gpu_failure)
}

/// `scan:tree1d` / `scan:tree2d`.
fn scan_storage(path: &Path) -> Result<Option<Storage>, Failure> {
    let Some(name) = path.to_str().and_then(|p| p.strip_prefix("scan:")) else {
        return Ok(None);
    };
    match name {
        "tree1d" => Ok(Some(Storage::Tree1d)),
        "tree2d" => Ok(Some(Storage::Tree2d)),
        _ => Err(Failure::usage(format!(
            "unknown pipeline `scan:{name}`: use scan:tree1d or scan:tree2d"
        ))),
    }
}

/// The scan pipeline for `n` elements with the input spec of array `in`.
fn scan_pipeline(
    storage: Storage,
    n: usize,
    input: &str,
    monoid: interp::Monoid,
    device: &Device,
) -> Result<Pipeline, Failure> {
    let values = parse_input(input, n, Ty::Generic, monoid)
        .map_err(|e| Failure::usage(format!("--input in={input}: {e}")))?;
    let max = gpu::fitting_local_size(&device.info, monoid);
    gpu::scan_pipeline(storage, values, max, monoid).map_err(gpu_failure)
}

fn size_param(defines: &[(String, Option<String>)]) -> Result<usize, Failure> {
    let n = defines
        .iter()
        .find(|(k, _)| k == "n")
        .and_then(|(_, v)| v.as_deref()?.parse().ok())
        .ok_or_else(|| Failure::usage("the scan pipeline needs -D n=N (a power of two >= 2)"))?;
    checked_scan_size(n)
}

/// The scan pipeline's size, refused up front when it is not a power of two >= 2 or is
/// larger than ksim simulates ([`interp::launch::MAX_ELEMENTS`]).
fn checked_scan_size(n: u64) -> Result<usize, Failure> {
    if n < 2 || !n.is_power_of_two() {
        return Err(Failure::usage(format!(
            "the scan pipeline needs n a power of two >= 2 (got {n})"
        )));
    }
    if n > interp::launch::MAX_ELEMENTS as u64 {
        return Err(Failure::usage(format!(
            "the scan pipeline with n = {n} is larger than ksim supports ({} elements)",
            interp::launch::MAX_ELEMENTS
        )));
    }
    Ok(n as usize)
}

/// The canonical execution the device is compared with: the fast executor where it supports
/// the launch, with race tracking on every core.
fn simulate(launch: &Launch) -> interp::canonical::Canonical {
    interp::canonical::run_preferred(launch, &interp::canonical::Options::default())
}

/// The simulator's memory for a launch, or why it cannot be compared.
fn simulated_memory(launch: &Launch) -> Result<Memory, String> {
    let sim = simulate(launch).execution;
    if let Some(d) = sim.divergences.first() {
        return Err(divergence_message(d));
    }
    match (&sim.fault, sim.races.first()) {
        (Some(f), _) => Err(format!("the simulator faulted: {f}")),
        (None, Some(r)) => Err(format!(
            "the simulator found a race on `{}`",
            launch.kernel.arrays[r.array].name
        )),
        (None, None) => Ok(sim.memory),
    }
}

/// Set in the child process that does the work of `gpu compare` (see [`isolated`]).
const DEVICE_CHILD: &str = "KSIM_GPU_CHILD";

/// Runs this same `ksim` command in a child process and returns its exit code. An OpenCL
/// implementation compiles and runs kernels inside the calling process, and some abort on
/// valid kernels (PoCL fails an assertion on a barrier inside a loop whose trip count
/// differs between work-items, tests/kernels/pocl_crash.ksim): such a crash is reported,
/// and does not take ksim down with it.
fn isolated() -> CmdResult {
    let exe = std::env::current_exe()
        .map_err(|e| Failure::usage(format!("cannot find the ksim executable: {e}")))?;
    let status = std::process::Command::new(exe)
        .args(std::env::args_os().skip(1))
        .env(DEVICE_CHILD, "1")
        .status()
        .map_err(|e| Failure::usage(format!("cannot start the device run: {e}")))?;
    if let Some(code) = status.code() {
        return Ok(code);
    }
    #[cfg(unix)]
    let how = {
        use std::os::unix::process::ExitStatusExt;
        status
            .signal()
            .map_or_else(|| "it was stopped".to_string(), |s| format!("signal {s}"))
    };
    #[cfg(not(unix))]
    let how = "an abnormal exit".to_string();
    Err(Failure::usage(format!(
        "the OpenCL implementation crashed ({how}) while building or running the kernel: \
         nothing was compared. This is a bug of the device's OpenCL compiler or driver; \
         `ksim races` and `ksim run` still check the kernel itself."
    )))
}

fn compare(args: &CompareArgs) -> CmdResult {
    if std::env::var_os(DEVICE_CHILD).is_none() {
        return isolated();
    }
    if let Some(storage) = scan_storage(&args.launch.file)? {
        let n = size_param(&args.launch.define)?;
        let device = open(&args.device)?;
        let input = args
            .launch
            .input
            .iter()
            .find(|(a, _)| a == "in")
            .map_or("random:1", |(_, s)| s.as_str());
        let p = scan_pipeline(storage, n, input, args.launch.monoid, &device)?;
        let sim = gpu::simulate(&p, simulated_memory).map_err(|e| Failure {
            message: e.to_string(),
            code: EXIT_FOUND,
        })?;
        let run = gpu::run_pipeline(&p, &device, args.repeat).map_err(gpu_failure)?;
        let cmp = gpu::compare_pipeline(&sim, &run.memory, &p, args.limit);
        return Ok(report(
            &cmp,
            &device,
            &format!("{} launches", p.stages.len()),
        ));
    }
    // A `.cl` or `.sim` file: the user's program as written runs on the device.
    let (src, launch, program) = if super::native::applies(&args.launch.file) {
        let (src, launch, p) = super::native::load(&args.launch)?;
        (src, launch, Some(p))
    } else {
        let (src, launch) = args.launch.launch()?;
        (src, launch, None)
    };
    let canonical = simulate(&launch);
    let (sim, engine) = (canonical.execution, canonical.engine.id());
    for race in &sim.races {
        let note = "a racy kernel may legitimately differ on the device".to_string();
        eprint!("{}", render_race(&src, &launch, race, &[note]));
    }
    if let Some(f) = &sim.fault {
        eprint!("{}", render_fault(&src, &launch, f));
        eprintln!("the simulator faulted: its memory cannot be compared with the device's");
        return Ok(EXIT_FOUND);
    }
    if !sim.divergences.is_empty() {
        // A divergent barrier is undefined behaviour on a device: drivers hang or crash on
        // it (PoCL segfaults), so the kernel is never launched.
        for d in &sim.divergences {
            eprintln!("{}", divergence_message(d));
        }
        eprintln!("not launched on the device: barrier divergence is undefined behaviour there");
        return Ok(EXIT_FOUND);
    }
    let device = open(&args.device)?;
    let native = match &program {
        Some(p) => {
            let native = p.native(&src, &launch, &device)?;
            match gpu::native::unfaithful(&launch, &native.args) {
                Some(why) => {
                    eprintln!(
                        "note: {why}: the device runs ksim's OpenCL C generated from the \
                         kernel instead of the program as written"
                    );
                    None
                }
                None => Some(native),
            }
        }
        None => None,
    };
    let (cmp, what) = match native {
        Some(native) => {
            let mut run = None;
            for _ in 0..args.repeat.max(1) {
                run = Some(gpu::native::run(&launch, &native, &device).map_err(gpu_failure)?);
            }
            let run = run.expect("at least one run");
            let cmp = gpu::native::compare(&sim.memory, &run, &launch, args.limit);
            (
                cmp,
                format!(
                    "simulator: {} executor; the program as written ({}, built with {})",
                    engine,
                    src.path,
                    native.options.join(" ")
                ),
            )
        }
        None => {
            let run = gpu::run(&launch, &device, args.repeat).map_err(gpu_failure)?;
            let cmp = gpu::compare(&sim.memory, &run.memory, &launch, args.limit);
            (cmp, format!("simulator: {engine} executor"))
        }
    };
    let code = report(&cmp, &device, &what);
    if sim.races.is_empty() && launch.kernel.has_atomics() && code != EXIT_OK {
        // The device may order the atomics differently from the simulator's canonical
        // schedule: a mismatch is not a defect of either.
        eprintln!(
            "the kernel uses atomics: the device ordered them differently from the simulator's canonical schedule (`ksim explore --exhaustive` lists the possible final stores)"
        );
        Ok(code)
    } else if sim.races.is_empty() {
        Ok(code)
    } else {
        // The simulated store is one of several a racy kernel can end in: a match or a
        // mismatch says nothing about the device, and the race itself is the finding.
        eprintln!(
            "the simulator found {} race(s): the comparison is not meaningful for a racy kernel",
            sim.races.len()
        );
        Ok(EXIT_FOUND)
    }
}

fn report(cmp: &gpu::Comparison, device: &Device, what: &str) -> i32 {
    if cmp.is_match() {
        println!(
            "match ({} elements compared; {what}; device: {})",
            cmp.compared, device.info.name
        );
        EXIT_OK
    } else {
        println!("{cmp}");
        println!("MISMATCH ({what}; device: {})", device.info.name);
        EXIT_FOUND
    }
}

/// Checks the kernel files and the output files of `bench` before anything runs: no
/// `.sim` file, figures need a known extension, and every output must be writable
/// (its directory exists: none is created).
fn check_outputs(args: &BenchArgs) -> Result<(), Failure> {
    if let Some(sim) = args.files.iter().find(|f| super::simfile::is_sim(f)) {
        return Err(Failure::usage(format!(
            "`{}`: gpu bench takes .ksim and .cl kernels (swept with -D), not a .sim file, \
             whose launch is fixed (bench the .cl file it names)",
            sim.display()
        )));
    }
    if args.csv.is_none() && args.json.is_none() && args.plot.is_empty() {
        return Err(Failure::usage(
            "bench needs --csv FILE, --json FILE and/or --plot FILE",
        ));
    }
    for plot in &args.plot {
        gpu::plot_format(plot).map_err(|e| Failure::usage(e.0))?;
    }
    writable(args.csv.iter().chain(&args.json).chain(&args.plot))
}

fn writable<'a>(outs: impl Iterator<Item = &'a PathBuf>) -> Result<(), Failure> {
    for out in outs {
        files::check_writable(out)
            .map_err(|e| Failure::usage(format!("cannot write `{}`: {e}", out.display())))?;
    }
    Ok(())
}

/// `--input` as `(array, spec)` pairs: a bare SPEC is for the `--in` array, which gets
/// `random:1` when no spec names it.
fn input_specs(args: &BenchArgs) -> Vec<(String, String)> {
    let in_array = args.in_array();
    let mut specs: Vec<(String, String)> = args
        .input
        .iter()
        .map(|i| match i.split_once('=') {
            Some((a, s)) if is_name(a) => (a.trim().to_string(), s.to_string()),
            _ => (in_array.to_string(), i.clone()),
        })
        .collect();
    if !specs.iter().any(|(a, _)| a == in_array) {
        specs.push((in_array.to_string(), "random:1".into()));
    }
    specs
}

impl BenchArgs {
    fn in_array(&self) -> &str {
        self.in_array.as_deref().unwrap_or("in")
    }
}

fn is_name(s: &str) -> bool {
    let s = s.trim();
    s.chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
        && s.chars().all(|c| c.is_alphanumeric() || c == '_')
}

/// Builds every (kernel, size) of the sweep before the first device run: the launch is
/// valid and its work-group fits the device (the simulator's checks come per point, in
/// [`gpu::bench_point`]).
fn bench_jobs(
    args: &BenchArgs,
    sweep: &gpu::Sweep,
    inputs: &[(String, String)],
    device: &Device,
) -> Result<Vec<(gpu::PointSpec, gpu::BenchJob)>, Failure> {
    let mut jobs = Vec::new();
    for file in &args.files {
        let label = label(file);
        for &size in &sweep.sizes {
            let param = &sweep.param;
            let (job, used) = match scan_storage(file)? {
                Some(storage) => {
                    let n = checked_scan_size(size)?;
                    let spec = inputs
                        .iter()
                        .find(|(a, _)| a == args.in_array())
                        .map_or("random:1", |(_, s)| s.as_str());
                    let p = scan_pipeline(storage, n, spec, args.monoid, device)?;
                    (gpu::BenchJob::Pipeline(p), vec![format!("data={spec}")])
                }
                None => {
                    let (_, kernel) = load(file)?;
                    if let Some(name) = args.in_array.as_deref() {
                        if kernel.array(name).is_none() {
                            let names: Vec<_> = kernel
                                .arrays
                                .iter()
                                .map(|a| format!("`{}`", a.name))
                                .collect();
                            return Err(Failure::usage(format!(
                                "--in {name}: {label} has no array `{name}` to use as the input \
                                 (its arrays: {})",
                                names.join(", ")
                            )));
                        }
                    }
                    // Only the specs of arrays this kernel has (`in` may be absent).
                    let mine: Vec<(String, String)> = inputs
                        .iter()
                        .filter(|(a, _)| kernel.array(a).is_some())
                        .cloned()
                        .collect();
                    for (a, _) in inputs {
                        if kernel.array(a).is_none() && a != args.in_array() {
                            return Err(Failure::usage(format!(
                                "--input {a}=...: {label} has no array `{a}`"
                            )));
                        }
                    }
                    let opts = interp::LaunchOptions {
                        defines: sweep.defines(size),
                        monoid: args.monoid,
                        inputs: mine.clone(),
                        ..Default::default()
                    };
                    let launch = Launch::new(kernel, &opts)
                        .map_err(|e| Failure::usage(format!("{label} with {param}={size}: {e}")))?;
                    gpu::bench::fits(&launch, device).map_err(|why| {
                        Failure::usage(format!(
                            "{label} with {param}={size}: {why}; nothing was run (lower the \
                             sweep; `ksim plot A.csv B.csv` draws sweeps of different lengths \
                             together)"
                        ))
                    })?;
                    let outputs =
                        gpu::bench::outputs(&launch, &args.out_arrays).map_err(Failure::usage)?;
                    let used = mine.iter().map(|(a, s)| format!("{a}={s}")).collect();
                    (gpu::BenchJob::Kernel { launch, outputs }, used)
                }
            };
            let spec = gpu::PointSpec {
                kernel: label.clone(),
                param: param.clone(),
                size,
                input: used.join(";"),
            };
            jobs.push((spec, job));
        }
    }
    Ok(jobs)
}

/// The command line, shell-quoted where needed, for the benchmark's metadata.
fn command_line() -> String {
    std::env::args()
        .map(|a| {
            if !a.is_empty()
                && a.chars()
                    .all(|c| c.is_alphanumeric() || "-_./=:,+@%".contains(c))
            {
                a
            } else {
                format!("'{}'", a.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn bench(args: &BenchArgs) -> CmdResult {
    check_outputs(args)?;
    let fig = args.figure.figure()?;
    check_labels(
        &fig,
        &args.files.iter().map(|f| label(f)).collect::<Vec<_>>(),
    )?;
    if args.figure.cost == CostArg::WarpInstructions && args.warp_size.is_none() {
        return Err(Failure::usage(
            "--cost warp-instructions needs --warp-size W (the SIMT cost is simulated with warps)",
        ));
    }
    let sweep = gpu::Sweep::from_defines(&args.define).map_err(Failure::usage)?;
    gpu::bench::check_monoid(args.monoid).map_err(Failure::usage)?;
    let inputs = input_specs(args);
    let device = open(&args.device)?;
    let jobs = bench_jobs(args, &sweep, &inputs, &device)?;
    let opts = gpu::BenchOptions {
        warmup: args.warmup,
        repeat: args.repeat,
        include_harness: args.include_harness,
        force: args.force,
        warp_size: args.warp_size,
    };
    let ksim = (env!("CARGO_PKG_VERSION"), env!("KSIM_GIT_HASH"));
    let mut series = gpu::BenchSeries {
        meta: gpu::BenchMeta::now(&device, &opts, ksim, command_line()),
        ..Default::default()
    };
    let bar = progress(jobs.len() as u64, args.quiet);
    let mut failed = None;
    for (spec, job) in &jobs {
        bar.set_message(format!("{} {}={}", spec.kernel, spec.param, spec.size));
        match gpu::bench_point(job, spec, &device, &opts) {
            Ok(gpu::PointOutcome::Timed(p)) => series.points.push(*p),
            Ok(gpu::PointOutcome::LeftOut(l)) => series.left_out.push(l),
            Err(e) => {
                failed = Some(format!(
                    "{} with {}={}: {e}",
                    spec.kernel, spec.param, spec.size
                ));
                break;
            }
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    // What was measured is kept, even when a later run failed.
    print!(
        "{}",
        gpu::bench::table::render(&series, fig.metric, fig.stat)
    );
    write_series(&series, args.csv.as_deref(), args.json.as_deref())?;
    if !series.points.is_empty() {
        draw(&series, &args.plot, &args.figure, &fig)?;
    }
    if let Some(why) = failed {
        return Err(Failure::usage(format!(
            "the device failed on {why}; the {} points measured before are kept",
            series.points.len()
        )));
    }
    Ok(if series.left_out.is_empty() {
        EXIT_OK
    } else {
        EXIT_FOUND
    })
}

fn write_series(
    series: &gpu::BenchSeries,
    csv: Option<&Path>,
    json: Option<&Path>,
) -> Result<(), Failure> {
    if let Some(csv) = csv {
        match gpu::write_csv(series, csv).map_err(|e| Failure::usage(e.0))? {
            Some(meta) => println!("wrote {} and {}", csv.display(), meta.display()),
            None => println!("wrote {}", csv.display()),
        }
    }
    if let Some(json) = json {
        let text = serde_json::to_string_pretty(series)
            .map_err(|e| Failure::usage(format!("cannot encode the series: {e}")))?;
        files::write_atomic(json, format!("{text}\n").as_bytes())
            .map_err(|e| Failure::usage(format!("cannot write `{}`: {e}", json.display())))?;
        println!("wrote {}", json.display());
    }
    Ok(())
}

fn label(file: &Path) -> String {
    if file.to_str().is_some_and(|p| p.starts_with("scan:")) {
        return file.display().to_string();
    }
    file.file_stem().map_or_else(
        || file.display().to_string(),
        |s| s.to_string_lossy().into(),
    )
}

fn progress(total: u64, quiet: bool) -> indicatif::ProgressBar {
    use std::io::IsTerminal;
    if quiet || !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(total);
    if let Ok(style) =
        indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} {msg} [{elapsed}]")
    {
        bar.set_style(style);
    }
    bar
}

/// Refuses a `--label` for a kernel that is not among `kernels` (a misspelt name would
/// silently leave the legend unchanged).
fn check_labels(fig: &gpu::Figure, kernels: &[String]) -> Result<(), Failure> {
    for (k, _) in &fig.labels {
        if !kernels.contains(k) {
            let mut known: Vec<&str> = kernels.iter().map(String::as_str).collect();
            known.sort_unstable();
            known.dedup();
            return Err(Failure::usage(format!(
                "--label {k}=...: there is no kernel `{k}` to name (the kernels: {})",
                known.join(", ")
            )));
        }
    }
    Ok(())
}

/// Draws the figures; with `--sim-vs-real`, the simulated-vs-real figure and its fit.
fn draw(
    series: &gpu::BenchSeries,
    outs: &[PathBuf],
    args: &FigureArgs,
    fig: &gpu::Figure,
) -> Result<(), Failure> {
    let kernels: Vec<String> = series.points.iter().map(|p| p.kernel.clone()).collect();
    check_labels(fig, &kernels)?;
    if args.sim_vs_real {
        match gpu::plot::simreal::fit(series, fig) {
            Ok(f) => println!("{f}"),
            Err(why) => println!("{why}"),
        }
    }
    for out in outs {
        let drawn = if args.sim_vs_real {
            gpu::plot::simreal::plot(series, out, fig)
        } else {
            gpu::plot(series, out, fig)
        };
        drawn.map_err(|e| Failure::usage(format!("cannot draw `{}`: {}", out.display(), e.0)))?;
        println!("wrote {}", out.display());
    }
    Ok(())
}

pub fn plot(args: &PlotArgs) -> CmdResult {
    let fig = args.figure.figure()?;
    for p in &args.plot {
        gpu::plot_format(p).map_err(|e| Failure::usage(e.0))?;
    }
    writable(args.plot.iter())?;
    let mut series = gpu::BenchSeries::default();
    for (i, csv) in args.csv.iter().enumerate() {
        let s = gpu::read_csv(csv).map_err(|e| Failure::usage(e.0))?;
        if i == 0 {
            series.meta = s.meta;
        }
        series.points.extend(s.points);
    }
    draw(&series, &args.plot, &args.figure, &fig)?;
    Ok(EXIT_OK)
}
