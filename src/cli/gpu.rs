//! `ksim gpu devices | emit | compare | bench` and `ksim plot`: the same kernel on a real
//! OpenCL device (through `gpu`), compared with the simulator, timed and plotted.
//!
//! Besides kernel files, `compare` and `bench` take `scan:tree1d` and `scan:tree2d`: the
//! multi-work-group Blelloch scan pipeline (2015 paper, section 4.5) with the tree stored
//! as a 1D heap or a 2D level × node array, sized by `-D n=N`.

use super::common::*;
use super::engine::simulate;
use clap::{Args, Subcommand, ValueEnum};
use gpu::{BenchRow, Device, GpuError, Pipeline, Storage};
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
    /// Time kernels over a range of sizes; write a CSV and a plot.
    Bench(BenchArgs),
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
    /// Timed runs per kernel and size.
    #[arg(long, default_value_t = 10)]
    pub repeat: usize,
    /// Untimed runs before timing.
    #[arg(long, default_value_t = 2)]
    pub warmup: usize,
    /// Input of the `in` array (default `random:1`).
    #[arg(long, default_value = "random:1")]
    pub input: String,
    /// Write the timings here (kernel, size, device, repeat, kernel_ns, total_ns).
    #[arg(long)]
    pub csv: Option<PathBuf>,
    /// Draw a line chart here (.png or .svg).
    #[arg(long)]
    pub plot: Option<PathBuf>,
    /// Plot kernel time (profiling events) or total time (with transfers).
    #[arg(long, value_enum, default_value = "kernel")]
    pub metric: MetricArg,
    #[command(flatten)]
    pub device: DeviceArg,
    #[arg(long)]
    pub quiet: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum MetricArg {
    Kernel,
    Total,
}

impl MetricArg {
    fn metric(self) -> gpu::Metric {
        match self {
            MetricArg::Kernel => gpu::Metric::Kernel,
            MetricArg::Total => gpu::Metric::Total,
        }
    }
}

#[derive(Args, Debug)]
pub struct PlotArgs {
    /// A CSV written by `ksim gpu bench --csv`.
    pub csv: PathBuf,
    /// The chart to draw (.png or .svg).
    #[arg(long)]
    pub plot: PathBuf,
    #[arg(long, value_enum, default_value = "kernel")]
    pub metric: MetricArg,
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
    let max = device.info.max_work_group_size.min(1024);
    gpu::scan_pipeline(storage, values, max, device.info.local_mem_size, monoid)
        .map_err(gpu_failure)
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

/// The simulator's memory for a launch, or why it cannot be compared.
fn simulated_memory(launch: &Launch) -> Result<Memory, String> {
    let sim = simulate(launch, 0);
    if let Some(d) = sim.divergences.first() {
        return Err(divergence_message(d));
    }
    match (&sim.fault, sim.races.first()) {
        (Some(f), _) => Err(format!("the simulator faulted: {f}")),
        (None, Some((r, _))) => Err(format!(
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
    let (src, launch) = args.launch.launch()?;
    let sim = simulate(&launch, 0);
    for (race, _) in &sim.races {
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
    let run = gpu::run(&launch, &device, args.repeat).map_err(gpu_failure)?;
    let cmp = gpu::compare(&sim.memory, &run.memory, &launch, args.limit);
    let code = report(
        &cmp,
        &device,
        &format!("simulator: {} executor", sim.engine),
    );
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

/// Splits `-D` into the swept parameter (with its sizes) and fixed ones.
fn sweep(defines: &[String]) -> Result<(String, Vec<u64>, Vec<(String, String)>), Failure> {
    let mut swept = None;
    let mut fixed = Vec::new();
    for d in defines {
        let (k, v) = d
            .split_once('=')
            .ok_or_else(|| Failure::usage(format!("-D {d}: expected NAME=RANGE")))?;
        if v.contains("..") || v.contains(',') || swept.is_none() && k == "n" {
            if swept.is_some() {
                return Err(Failure::usage("only one -D parameter can be swept"));
            }
            let sizes = gpu::parse_sweep(v).map_err(|e| Failure::usage(format!("-D {d}: {e}")))?;
            swept = Some((k.to_string(), sizes));
        } else {
            fixed.push((k.to_string(), v.to_string()));
        }
    }
    let (name, sizes) =
        swept.ok_or_else(|| Failure::usage("bench needs a swept parameter, e.g. -D n=2..1024"))?;
    Ok((name, sizes, fixed))
}

/// One kernel at one size, ready to run on the device.
enum BenchJob {
    Pipeline(Pipeline),
    Kernel(Launch),
}

/// Checks the output files of `bench` before anything runs: a plot needs a `.png`/`.svg`
/// name, and every output needs a directory where files can be created.
fn check_outputs(args: &BenchArgs) -> Result<(), Failure> {
    if args.csv.is_none() && args.plot.is_none() {
        return Err(Failure::usage("bench needs --csv FILE and/or --plot FILE"));
    }
    if let Some(plot) = &args.plot {
        gpu::plot_format(plot).map_err(|e| Failure::usage(e.0))?;
    }
    for out in args.csv.iter().chain(&args.plot) {
        let dir = out
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        files::ensure_writable_dir(dir)
            .map_err(|e| Failure::usage(format!("cannot write `{}`: {e}", out.display())))?;
    }
    Ok(())
}

/// Builds every (kernel, size) of the sweep and checks it before the first timed run: the
/// launch is valid, its work-group fits the device, and the simulator found its execution
/// defined (no fault, no divergence, termination): an out-of-bounds access or a divergent
/// barrier on a device corrupts memory, crashes or hangs.
fn bench_jobs(
    args: &BenchArgs,
    device: &Device,
) -> Result<(String, Vec<(String, u64, BenchJob)>), Failure> {
    let (param, sizes, fixed) = sweep(&args.define)?;
    let max_group = device.info.max_work_group_size;
    let mut jobs = Vec::new();
    for file in &args.files {
        let label = label(file);
        for &size in &sizes {
            let job = match scan_storage(file)? {
                Some(storage) => {
                    let n = checked_scan_size(size)?;
                    BenchJob::Pipeline(scan_pipeline(
                        storage,
                        n,
                        &args.input,
                        interp::Monoid::IntAdd,
                        device,
                    )?)
                }
                None => {
                    let mut defines = fixed.clone();
                    defines.push((param.clone(), size.to_string()));
                    let la = LaunchArgs {
                        file: file.clone(),
                        define: defines.into_iter().map(|(n, v)| (n, Some(v))).collect(),
                        cl: Default::default(),
                        groups: None,
                        local_size: None,
                        global: None,
                        local: None,
                        arg: Vec::new(),
                        input: vec![("in".into(), args.input.clone())],
                        monoid: interp::Monoid::IntAdd,
                        max_steps: None,
                    };
                    let (_, launch) = la.launch()?;
                    if launch.local_size > max_group {
                        return Err(Failure::usage(format!(
                            "{label} with {param}={size}: work-groups of {} threads are more than \
                             the device's maximum of {max_group}; nothing was run (lower the sweep)",
                            launch.local_size
                        )));
                    }
                    let sim = simulate(&launch, 0);
                    if let Some(f) = &sim.fault {
                        return Err(Failure::usage(format!(
                            "{label} with {param}={size}: the simulator found {f}; nothing was run \
                             (an undefined kernel must not run on a device)"
                        )));
                    }
                    if let Some(d) = sim.divergences.first() {
                        return Err(Failure::usage(format!(
                            "{label} with {param}={size}: {}; nothing was run",
                            divergence_message(d)
                        )));
                    }
                    BenchJob::Kernel(launch)
                }
            };
            jobs.push((label.clone(), size, job));
        }
    }
    Ok((param, jobs))
}

fn bench(args: &BenchArgs) -> CmdResult {
    check_outputs(args)?;
    let device = open(&args.device)?;
    let (param, jobs) = bench_jobs(args, &device)?;
    let bar = progress(jobs.len() as u64, args.quiet);
    let mut rows: Vec<BenchRow> = Vec::new();
    let mut failed = None;
    for (label, size, job) in &jobs {
        bar.set_message(format!("{label} {param}={size}"));
        let timings = match job {
            BenchJob::Pipeline(p) => {
                gpu::run_pipeline(p, &device, args.warmup + args.repeat.max(1))
                    .map(|run| run.timings[args.warmup..].to_vec())
            }
            BenchJob::Kernel(launch) => gpu::bench(launch, &device, args.warmup, args.repeat),
        };
        match timings {
            Ok(t) => rows.extend(gpu::rows_for(label, *size, &device.info.name, &t)),
            Err(e) => {
                failed = Some(format!("{label} with {param}={size}: {e}"));
                break;
            }
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    // What was measured is kept, even when a later run failed.
    if !rows.is_empty() {
        print_summary(&rows, &args.files);
        if let Some(csv) = &args.csv {
            gpu::write_csv(&rows, csv)
                .map_err(|e| Failure::usage(format!("cannot write `{}`: {e}", csv.display())))?;
            println!("wrote {}", csv.display());
        }
        if let Some(out) = &args.plot {
            draw(&rows, out, args.metric)?;
        }
    }
    match failed {
        Some(why) => Err(Failure::usage(format!(
            "the device failed on {why}; the {} timings measured before are kept",
            rows.len()
        ))),
        None => Ok(EXIT_OK),
    }
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

/// Mean kernel time per kernel and size, one line per size.
fn print_summary(rows: &[BenchRow], files: &[PathBuf]) {
    let labels: Vec<String> = files.iter().map(|f| label(f)).collect();
    let mut sizes: Vec<u64> = rows.iter().map(|r| r.size).collect();
    sizes.sort_unstable();
    sizes.dedup();
    print!("{:>10}", "size");
    for l in &labels {
        print!(" {:>22}", format!("{l} (µs)"));
    }
    println!();
    for s in sizes {
        print!("{s:>10}");
        for l in &labels {
            let t: Vec<u64> = rows
                .iter()
                .filter(|r| r.size == s && &r.kernel == l)
                .map(|r| r.kernel_ns)
                .collect();
            let mean = t.iter().sum::<u64>() as f64 / t.len().max(1) as f64 / 1000.0;
            print!(" {mean:>22.1}");
        }
        println!();
    }
}

fn draw(rows: &[BenchRow], out: &Path, metric: MetricArg) -> Result<(), Failure> {
    let opts = gpu::PlotOptions {
        metric: metric.metric(),
        ..Default::default()
    };
    gpu::plot_with(rows, out, &opts)
        .map_err(|e| Failure::usage(format!("cannot draw `{}`: {}", out.display(), e.0)))?;
    println!("wrote {}", out.display());
    Ok(())
}

pub fn plot(args: &PlotArgs) -> CmdResult {
    let rows = gpu::read_csv(&args.csv).map_err(|e| Failure::usage(e.0))?;
    draw(&rows, &args.plot, args.metric)?;
    Ok(EXIT_OK)
}
