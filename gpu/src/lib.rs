//! ksim's GPU backend: the same kernel on a real OpenCL device, compared with the
//! simulator, timed and plotted.
//!
//! - [`emit`]: a bound [`interp::Launch`] → readable OpenCL C 1.2 (see [`emit`]'s module
//!   documentation for the translation, including how `local` arrays with host-given
//!   contents are handled).
//! - [`devices`], [`open`]: list and select OpenCL devices (`--device INDEX|NAME`, or
//!   `$KSIM_DEVICE`; default the first GPU, else the first device). Without any OpenCL
//!   these return [`GpuError::NoPlatform`], whose message is the install hint.
//! - [`run`], [`run_with`]: run a launch on a device, giving an [`interp::Memory`] shaped
//!   like the simulator's and per-repetition timings (profiled kernel time and wall
//!   time with transfers).
//! - [`compare()`]: simulator memory vs device memory, bit for bit for integers, within
//!   [`compare::DEFAULT_FLOAT_ULPS`] for floats.
//! - [`bench`]: benchmark series, each point checked against the simulator before it is
//!   timed without ksim's harness code, with the simulator's measures beside the device
//!   times; the series model, its table, its CSV + JSON sidecar and size sweeps.
//! - [`plot`]: figures for papers (PNG, SVG, PDF) of a series, and the simulated-vs-real
//!   figure with its fit ([`plot::simreal`]).
//! - [`native`]: the user's own `.cl` program, as written and with its build options, run
//!   over the simulator's launch and compared with it (`ksim gpu compare` on `.cl`/`.sim`).
//! - [`pipeline`]: sequences of launches over shared global arrays, runnable on the
//!   simulator (any engine, as a closure) and on a device; [`scan`]: the recursive
//!   multi-work-group scan (1D heap vs 2D level × node tree storage) as a pipeline.

pub mod bench;
pub mod builder;
pub mod compare;
pub mod emit;
pub mod native;
pub mod pipeline;
pub mod plot;
pub mod repr;
pub mod runtime;
pub mod scan;

pub use bench::csv_io::{read_csv, write_csv, CsvError};
pub use bench::sweep::{parse_sweep, Sweep};
pub use bench::{
    bench_point, BenchJob, BenchMeta, BenchOptions, BenchPoint, BenchSeries, Check, LeftOut,
    Metric, PointOutcome, PointSpec, SimMeasures, Spread, Statistic, Stats, WarpCost,
};
pub use compare::{compare, compare_ulps, Comparison, Mismatch, DEFAULT_FLOAT_ULPS};
pub use emit::{emit, emit_with, EmitError, EmitOptions, Emitted};
pub use pipeline::{
    compare_pipeline, run_pipeline, run_pipeline_with, simulate, Pipeline, PipelineMemory,
    PipelineRun, StageError,
};
pub use plot::{plot, plot_format, Figure, PlotError, PlotFormat};
pub use runtime::{
    devices, open, run, run_with, Device, DeviceInfo, DeviceRun, GpuError, Timing, DEVICE_ENV,
    NO_PLATFORM,
};
pub use scan::{fitting_local_size, scan_pipeline, Storage};

/// The environment variable that turns "no OpenCL platform: skipped" into a test
/// failure (CI sets `KSIM_REQUIRE_OPENCL=1`).
pub const REQUIRE_ENV: &str = "KSIM_REQUIRE_OPENCL";

/// For tests and tools that need a device: `Some(device)` when one can be opened;
/// `None` (after printing why to stderr) when OpenCL is missing and
/// `$KSIM_REQUIRE_OPENCL` is not `1`; panics when it is `1`.
pub fn device_or_skip(what: &str) -> Option<Device> {
    match open(None) {
        Ok(d) => Some(d),
        Err(e) => {
            if std::env::var(REQUIRE_ENV).is_ok_and(|v| v.trim() == "1") {
                panic!("{what}: OpenCL is required ({REQUIRE_ENV}=1) but unavailable: {e}");
            }
            eprintln!(
                "skipping {what}: {e} (set {REQUIRE_ENV}=1 to make this a failure; \
                 scripts/install-opencl.sh installs PoCL)"
            );
            None
        }
    }
}
