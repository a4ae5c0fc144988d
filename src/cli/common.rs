//! What every command shares: loading a kernel, the launch options, exit codes, and the
//! rendering of races and faults.

use clap::Args;
use interp::launch::{Launch, LaunchOptions};
use interp::{Fault, Monoid, Race};
use lang::diag::Diagnostic;
use sim::replay::{Disk, Files};
use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Exit codes, for every command.
pub const EXIT_OK: i32 = 0;
/// A race, runtime fault or failed verification was found.
pub const EXIT_FOUND: i32 = 1;
/// A usage error or an invalid kernel.
pub const EXIT_USAGE: i32 = 2;

/// A command that cannot go on: the message and the exit code.
#[derive(Debug)]
pub struct Failure {
    pub message: String,
    pub code: i32,
}

impl Failure {
    pub fn usage(message: impl Into<String>) -> Failure {
        Failure {
            message: message.into(),
            code: EXIT_USAGE,
        }
    }
}

pub type CmdResult = Result<i32, Failure>;

/// Options of `.cl` (OpenCL C) kernels: which kernel, and where `#include` looks.
#[derive(Args, Clone, Debug, Default)]
pub struct ClArgs {
    /// The kernel to run from a `.cl` or `.cu` file (default: its only kernel; a CUDA
    /// template instance as `'scan<int,256>'`); for a `.pvl`
    /// program, the method (default: the only one with a `par` block).
    #[arg(long, value_name = "NAME")]
    pub kernel: Option<String>,
    /// A directory where `#include "..."` looks (after the including file's directory).
    #[arg(short = 'I', value_name = "DIR")]
    pub include: Vec<PathBuf>,
    /// `.cu`: the bytes of dynamic shared memory, which size an `extern __shared__` array
    /// (CUDA's third launch parameter).
    #[arg(long, value_name = "N")]
    pub shared_bytes: Option<u64>,
    /// `.pvl`: run without checking the program's specifications (contracts, barrier
    /// contracts, invariants, asserts, permissions), to measure what checking costs.
    #[arg(long)]
    pub no_specs: bool,
}

impl ClArgs {
    /// The macros for the C front end: `-D`'s, and `--shared-bytes` as the macro the CUDA
    /// converter reads.
    pub fn defines(&self, define: &[(String, Option<String>)]) -> Vec<(String, Option<String>)> {
        let mut d = define.to_vec();
        if let Some(n) = self.shared_bytes {
            d.push((
                lang::cl::clang::cuda::SHARED_BYTES.to_string(),
                Some(n.to_string()),
            ));
        }
        d
    }
}

/// The kernel file and the launch: shared by run, trace, explore, races, verify-scan.
#[derive(Args, Clone, Debug)]
pub struct LaunchArgs {
    /// The kernel source: `.ksim`, OpenCL C (`.cl`), CUDA (`.cu`), a VerCors PVL program (`.pvl`), or an
    /// Oclgrind simulator file (`.sim`) that names a `.cl` kernel and gives its whole launch.
    pub file: PathBuf,
    /// `.ksim`: bind a size or scalar parameter: `-D n=8`. Sizes are checked (no 32-bit
    /// wrap-around); a launch may have 2^28 threads, 2^28 elements per array and need
    /// 2 GiB of memory by ksim's estimate (see README, launch options). `.cl`: define a
    /// preprocessor macro, as the OpenCL build option (`-D N=64`, `-D DEBUG`).
    #[arg(short = 'D', value_name = "NAME[=VALUE]", value_parser = parse_macro)]
    pub define: Vec<(String, Option<String>)>,
    #[command(flatten)]
    pub cl: ClArgs,
    /// Number of work-groups, or per dimension for a 2D/3D launch: `--groups 2,2`
    /// (default: the kernel's `launch(groups = ...)`, else 1).
    #[arg(long, value_name = "N[,N[,N]]", value_parser = parse_dims)]
    pub groups: Option<Dims>,
    /// Threads per work-group, or per dimension: `--local-size 16,2` (dimension 0 fastest
    /// in `tid`; default: the kernel's `launch(local_size = ...)`).
    #[arg(long, value_name = "N[,N[,N]]", value_parser = parse_dims)]
    pub local_size: Option<Dims>,
    /// `.cu`: the grid, in blocks (CUDA's word for --groups): `--grid 4` or `--grid 4,2`.
    #[arg(long, value_name = "X[,Y[,Z]]", value_parser = parse_dims)]
    pub grid: Option<Dims>,
    /// `.cu`: threads per block (CUDA's word for --local-size): `--block 256` or
    /// `--block 16,16`.
    #[arg(long, value_name = "X[,Y[,Z]]", value_parser = parse_dims)]
    pub block: Option<Dims>,
    /// `.cl`: the global NDRange size (work-items in all), per dimension for a 2D/3D
    /// NDRange (`--global 64,2`); a multiple of --local in each dimension.
    #[arg(long, value_name = "N[,N[,N]]")]
    pub global: Option<String>,
    /// The work-group size: `--local-size` for `.ksim`, OpenCL's name for `.cl`
    /// (`--local 16,2`).
    #[arg(long, value_name = "N[,N[,N]]")]
    pub local: Option<String>,
    /// `.cl`: the value of a scalar kernel parameter: `--arg n=16`.
    #[arg(long, value_name = "NAME=VALUE", value_parser = parse_define)]
    pub arg: Vec<(String, String)>,
    /// Initial contents of an array: `1,2,3`, `iota`, `zeros`, `ones`, `random[:SEED]`,
    /// `@FILE` (one value per line or a JSON array). Arrays not given start undefined
    /// (see --uninit). A `.cl` buffer's spec also gives its size: `zeros:1024`,
    /// `iota:256`, `random:4096[:SEED]`, `undef:64` (a size, no contents), a list or `@FILE`;
    /// an image's gives its sizes first: `W[xH[xD]]:CONTENTS` (`4x2:iota`).
    #[arg(long, value_name = "ARRAY=SPEC", value_parser = parse_define)]
    pub input: Vec<(String, String)>,
    /// The monoid instantiating the generic type `T`.
    #[arg(long, default_value = "int-add", value_parser = parse_monoid)]
    pub monoid: Monoid,
    /// Report non-termination after this many thread steps (default: 10^7 + 1000 per thread).
    #[arg(long)]
    pub max_steps: Option<u64>,
    /// Memory nothing wrote (an array without --input, a `__local` or private variable
    /// before its first write): `check` makes reading it a fault, an "uninitialised read"
    /// with the thread, statement and name (default for `.cl` and `.sim`: a device leaves
    /// it undefined); `zero` starts it at zero, the identity for `T` (default for `.ksim`).
    /// Reports keep it for replay.
    #[arg(long, value_name = "MODE", value_parser = interp::Uninit::parse)]
    pub uninit: Option<interp::Uninit>,
    /// End the run at its first runtime fault. By default a run goes on past the faults
    /// that allow it, as Oclgrind does, and reports each (statement, kind) once with its
    /// count: an out-of-bounds read gives zero (the identity for `T`), an out-of-bounds
    /// write is dropped, an uninitialised read gives what the memory holds, a division by
    /// zero or a shift count out of range gives zero. A step bound or a false annotation
    /// always ends the run; `explore` ends each execution at its first fault.
    #[arg(long)]
    pub stop_at_first_fault: bool,
}

/// `--race-policy`, `--atomicity` and `--warp-size`, for the commands that judge races of
/// executions (run, trace, explore, races); `replay` takes them from its report.
#[derive(Args, Clone, Debug)]
pub struct PolicyArgs {
    /// Which data races are errors: `strict` (Definition 5.2, every conflicting pair) or
    /// `same-value` (GPUVerify's and Oclgrind's tolerance: a pair whose writes store the
    /// value the element held, or the same value as the other write, is benign: listed as
    /// a warning, exit code 0 when nothing else was found). Race reports keep it for replay.
    #[arg(long, default_value = "strict", value_name = "POLICY", value_parser = interp::RacePolicy::parse)]
    pub race_policy: interp::RacePolicy,
    /// What one thread step executes: `statement` (the paper's rules, one statement per
    /// step) or `access` (each read and each write of a local or global array is its own
    /// step, as on hardware: `x[0] = x[0] + 1` by two threads can lose an update). The races
    /// are the same in both; race reports keep it for replay.
    #[arg(long, default_value = "statement", value_name = "ATOMICITY", value_parser = interp::Atomicity::parse)]
    pub atomicity: interp::Atomicity,
    /// Run warps of W consecutive threads of a work-group in SIMT lock-step (docs/semantics.md,
    /// "Three knobs"): a warp executes one statement for all its active threads at once, reads
    /// before writes, a divergent branch runs one side then the other; schedules interleave
    /// warps. Only two threads of one warp writing an element in the same statement race
    /// within a warp (GPUVerify's --warp-sync). Default: threads interleave one by one.
    #[arg(long, value_name = "W", value_parser = parse_warp_size)]
    pub warp_size: Option<usize>,
}

impl PolicyArgs {
    /// Loads the kernel and binds the launch ([`LaunchArgs::launch`]) under this policy and
    /// atomicity.
    pub fn launch(&self, args: &LaunchArgs) -> Result<(Source, Launch), Failure> {
        let (src, mut launch) = args.launch()?;
        self.apply(&mut launch);
        Ok((src, launch))
    }

    /// Sets this policy, atomicity and warp size on a launch built elsewhere (a `.sim`
    /// file's).
    pub fn apply(&self, launch: &mut Launch) {
        launch.race_policy = self.race_policy;
        launch.set_atomicity(self.atomicity);
        launch.warp_size = self.warp_size;
    }
}

/// `--warp-size W`: a whole number of at least 1.
pub fn parse_warp_size(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("a warp has at least 1 thread".into()),
        Ok(w) => Ok(w),
        Err(_) => Err(format!("`{s}` is not a number of threads")),
    }
}

fn parse_define(s: &str) -> Result<(String, String), String> {
    let (name, value) = s
        .split_once('=')
        .ok_or_else(|| format!("`{s}` is not NAME=VALUE"))?;
    if name.trim().is_empty() {
        return Err(format!("`{s}` has an empty name"));
    }
    Ok((name.trim().to_string(), value.to_string()))
}

/// A launch size per dimension (1 to 3), written `16` or `16,2`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dims(pub Vec<usize>);

impl std::fmt::Display for Dims {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> = self.0.iter().map(|d| d.to_string()).collect();
        f.write_str(&parts.join(","))
    }
}

pub fn parse_dims(s: &str) -> Result<Dims, String> {
    let dims = s
        .split(',')
        .map(|p| {
            p.trim()
                .parse::<usize>()
                .map_err(|_| format!("`{}` is not a size (a natural number)", p.trim()))
        })
        .collect::<Result<Vec<usize>, String>>()?;
    if dims.len() > 3 {
        return Err(format!(
            "`{s}` has {} dimensions; a launch has at most 3",
            dims.len()
        ));
    }
    Ok(Dims(dims))
}

pub fn parse_macro(s: &str) -> Result<(String, Option<String>), String> {
    match s.split_once('=') {
        Some(_) => parse_define(s).map(|(n, v)| (n, Some(v))),
        None if s.trim().is_empty() => Err("`-D` needs a name".into()),
        None => Ok((s.trim().to_string(), None)),
    }
}

fn parse_monoid(s: &str) -> Result<Monoid, String> {
    s.parse()
}

/// A kernel read from a file, with its source kept for diagnostics.
pub struct Source {
    pub path: String,
    pub text: String,
    /// Files a `.cl` kernel included: path, text, and base offset of its spans.
    pub includes: Vec<(String, String, usize)>,
    /// Every file read to build the launch ([`LaunchArgs::load_with`]), by
    /// [`sim::replay::normal_path`], the kernel file first: what a race report keeps.
    pub files: Vec<(PathBuf, String)>,
}

impl Source {
    pub fn read(path: &Path) -> Result<Source, Failure> {
        Source::read_with(path, &Disk)
    }

    /// Reads `path` through `files`.
    pub fn read_with(path: &Path, files: &dyn Files) -> Result<Source, Failure> {
        let text = files.read(path).map_err(Failure::usage)?;
        Ok(Source {
            path: path.display().to_string(),
            text,
            includes: Vec::new(),
            files: Vec::new(),
        })
    }

    /// The source as the library's text views take it (colour on a terminal; a span in an
    /// `#include`d file is shown against that file).
    pub fn view(&self) -> sim::text::SourceText<'_> {
        sim::text::SourceText {
            path: &self.path,
            text: &self.text,
            color: use_color(),
            includes: &self.includes,
        }
    }

    /// Renders diagnostics against this source (colour on a terminal).
    pub fn render(&self, diags: &[Diagnostic]) -> String {
        self.view().render(diags)
    }

    /// `file:line:col` of a byte offset.
    pub fn location(&self, offset: usize) -> String {
        self.view().location(offset)
    }
}

pub fn use_color() -> bool {
    use std::io::IsTerminal;
    std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none()
}

/// Parses and checks a kernel; invalid kernels are a usage error (exit 2) with rendered
/// diagnostics. A `.cl` file is compiled with no macros and its only kernel.
pub fn load(path: &Path) -> Result<(Source, Arc<lang::core::Kernel>), Failure> {
    load_with(path, &Disk)
}

/// [`load`], reading through `files`.
pub fn load_with(
    path: &Path,
    files: &dyn Files,
) -> Result<(Source, Arc<lang::core::Kernel>), Failure> {
    if super::opencl::is_cl(path) {
        let (src, c, _) = super::opencl::load_cl_unit(path, &[], &[], &mut |_| Ok(None), files)?;
        return Ok((src, Arc::new(c.kernel)));
    }
    if super::pvl::is_pvl(path) {
        let (src, c) = super::pvl::load(path, None, true, files)?;
        return Ok((src, Arc::new(c.kernel)));
    }
    check_source(Source::read_with(path, files)?)
}

/// Reads through another [`Files`] and keeps what it read (once per file), for race
/// reports.
struct Recorder<'a> {
    files: &'a dyn Files,
    read: RefCell<Vec<(PathBuf, String)>>,
}

impl Files for Recorder<'_> {
    fn read(&self, path: &Path) -> Result<String, String> {
        let text = self.files.read(path)?;
        let path = sim::replay::normal_path(path);
        let mut read = self.read.borrow_mut();
        if !read.iter().any(|(p, _)| *p == path) {
            read.push((path, text.clone()));
        }
        Ok(text)
    }
}

/// Parses and checks a kernel source already read (a race report keeps one).
pub fn check_source(src: Source) -> Result<(Source, Arc<lang::core::Kernel>), Failure> {
    match lang::parse::parse(&src.text).and_then(|k| lang::check::check(&k)) {
        Ok(k) => Ok((src, Arc::new(k))),
        Err(diags) => Err(Failure::usage(src.render(&diags))),
    }
}

impl LaunchArgs {
    /// The launch options of a `.ksim` kernel (`-D` binds parameters); the `.cl` options
    /// are refused here, since they mean nothing for `.ksim`.
    fn ksim_options(&self) -> Result<LaunchOptions, Failure> {
        let cl_only = [
            (self.cl.kernel.is_some(), "--kernel"),
            (!self.cl.include.is_empty(), "-I"),
            (self.global.is_some(), "--global"),
            (!self.arg.is_empty(), "--arg"),
        ];
        if let Some((_, flag)) = cl_only.iter().find(|(given, _)| *given) {
            return Err(Failure::usage(format!(
                "{flag} is for OpenCL C (`.cl`) kernels; `{}` is a .ksim kernel",
                self.file.display()
            )));
        }
        let defines = self
            .define
            .iter()
            .map(|(n, v)| match v {
                Some(v) => Ok((n.clone(), v.clone())),
                None => Err(Failure::usage(format!(
                    "-D {n}: a .ksim parameter needs a value, -D {n}=VALUE"
                ))),
            })
            .collect::<Result<_, _>>()?;
        // One dimension goes in the scalar fields, as before multi-dimensional launches.
        let split = |d: &Option<Dims>| match d.as_ref().map(|d| d.0.as_slice()) {
            Some([n]) => (Some(*n), Vec::new()),
            Some(dims) => (None, dims.to_vec()),
            None => (None, Vec::new()),
        };
        let (groups, group_dims) = split(&self.groups);
        // `--local` is `--local-size` for a .ksim kernel too.
        let local = match (&self.local, &self.local_size) {
            (Some(_), Some(_)) => {
                return Err(Failure::usage("give --local or --local-size, not both"))
            }
            (Some(l), None) => {
                Some(parse_dims(l).map_err(|e| Failure::usage(format!("--local {l}: {e}")))?)
            }
            (None, l) => l.clone(),
        };
        let (local_size, local_dims) = split(&local);
        Ok(LaunchOptions {
            defines,
            groups,
            local_size,
            group_dims,
            local_dims,
            monoid: self.monoid,
            inputs: self.input.clone(),
            max_steps: self.max_steps,
            // `.ksim`'s documented zero start, for teaching.
            uninit: self.uninit.unwrap_or(interp::Uninit::Zero),
            continue_after_faults: !self.stop_at_first_fault,
        })
    }

    /// Loads the kernel (`.ksim`, `.cl`, or a `.sim` file naming a `.cl` kernel and its
    /// launch, by extension), its launch options, and a `.cl`
    /// kernel's notes on approximations (see [`super::opencl::notes`]).
    #[allow(clippy::type_complexity)]
    pub fn load(
        &self,
    ) -> Result<(Source, Arc<lang::core::Kernel>, LaunchOptions, String), Failure> {
        self.load_with(&Disk)
    }

    /// [`LaunchArgs::load`], reading every file through `files`; the source keeps what
    /// was read (`Source::files`).
    #[allow(clippy::type_complexity)]
    pub fn load_with(
        &self,
        files: &dyn Files,
    ) -> Result<(Source, Arc<lang::core::Kernel>, LaunchOptions, String), Failure> {
        let rec = Recorder {
            files,
            read: RefCell::new(Vec::new()),
        };
        let (mut src, kernel, opts, notes) = if super::simfile::is_sim(&self.file) {
            let l = super::simfile::load(self, &rec)?;
            (l.src, l.kernel, l.opts, l.notes)
        } else if super::opencl::is_cl(&self.file) {
            let kernel = self.cl.kernel.clone();
            let (src, c, _) = super::opencl::load_cl_unit(
                &self.file,
                &self.cl.defines(&self.define),
                &self.cl.include,
                &mut |_| Ok(kernel.clone()),
                &rec,
            )?;
            let opts = super::opencl::launch_options(self, &c.info)?;
            let notes = super::opencl::notes(&src, &c.info);
            (src, Arc::new(c.kernel), opts, notes)
        } else if super::pvl::is_pvl(&self.file) {
            let mut plain = self.clone();
            plain.cl.kernel = None;
            let opts = plain.ksim_options()?;
            let (src, c) = super::pvl::load(
                &self.file,
                self.cl.kernel.as_deref(),
                !self.cl.no_specs,
                &rec,
            )?;
            let notes = super::pvl::notes(&src, &c);
            (src, Arc::new(c.kernel), opts, notes)
        } else {
            let opts = self.ksim_options()?;
            let (src, kernel) = load_with(&self.file, &rec)?;
            (src, kernel, opts, String::new())
        };
        src.files = rec.read.into_inner();
        Ok((src, kernel, opts, notes))
    }

    /// The launch options as given, with absolute paths: what a race report keeps to
    /// rebuild the launch from any directory.
    pub fn flags(&self) -> sim::report::LaunchFlags {
        let abs = |p: &Path| sim::replay::normal_path(p).display().to_string();
        // CUDA's words are kept as their OpenCL equivalents (`--shared-bytes` as its macro).
        sim::report::LaunchFlags {
            defines: self.cl.defines(&self.define),
            include: self.cl.include.iter().map(|d| abs(d)).collect(),
            kernel: self.cl.kernel.clone(),
            global: self.global.clone(),
            local: self.local.clone(),
            groups: (self.groups.as_ref().or(self.grid.as_ref())).map(Dims::to_string),
            local_size: (self.local_size.as_ref().or(self.block.as_ref())).map(Dims::to_string),
            args: self.arg.clone(),
            inputs: (self.input.iter())
                .map(|(name, spec)| match spec.trim().strip_prefix('@') {
                    Some(path) => (name.clone(), format!("@{}", abs(Path::new(path)))),
                    None => (name.clone(), spec.clone()),
                })
                .collect(),
            no_specs: self.cl.no_specs,
        }
    }

    /// What a race report of this launch records: the kernel file, the options as given
    /// and every other file read (`src` from [`LaunchArgs::load`]), `@FILE` inputs
    /// included (read again here: the launch read them when it was bound).
    pub fn recorded(&self, src: &Source) -> sim::report::Recorded {
        let main = sim::replay::normal_path(&self.file);
        let text = (src.files.iter())
            .find(|(p, _)| *p == main)
            .map(|(_, t)| t.clone())
            .unwrap_or_else(|| src.text.clone());
        let inputs = (self.input.iter())
            .filter_map(|(_, spec)| spec.trim().strip_prefix('@'))
            .filter_map(|path| {
                let text = Disk.read(Path::new(path)).ok()?;
                Some((sim::replay::normal_path(Path::new(path)), text))
            });
        let mut files: Vec<sim::report::SavedFile> = Vec::new();
        for (p, t) in src.files.iter().cloned().chain(inputs) {
            let saved = sim::report::SavedFile::new(&p, &t);
            if p != main && !files.iter().any(|f| f.path == saved.path) {
                files.push(saved);
            }
        }
        sim::report::Recorded {
            path: self.file.display().to_string(),
            text,
            flags: self.flags(),
            files,
        }
    }

    /// The launch options (for a `.cl` kernel, after compiling it: the options bind the
    /// lowered kernel's parameters).
    pub fn options(&self) -> Result<LaunchOptions, Failure> {
        self.load().map(|(_, _, o, _)| o)
    }

    /// Loads the kernel and binds the launch; a `.cl` kernel's notes on approximations go
    /// to standard error.
    pub fn launch(&self) -> Result<(Source, Launch), Failure> {
        let (src, kernel, opts, notes) = self.load()?;
        eprint!("{notes}");
        let launch = Launch::new(kernel, &opts).map_err(|e| Failure::usage(e.0))?;
        Ok((src, launch))
    }
}

pub use sim::text::divergence_message;

/// A race as a compiler-style diagnostic ([`sim::text::SourceText::race`]).
pub fn render_race(src: &Source, launch: &Launch, race: &Race, extra: &[String]) -> String {
    src.view().race(launch, race, extra)
}

/// A runtime fault with its statement highlighted ([`sim::text::SourceText::fault`]).
pub fn render_fault(src: &Source, launch: &Launch, fault: &Fault) -> String {
    src.view().fault(launch, fault)
}

/// Prints a view's text: results on stdout, then findings on stderr.
pub fn print_text(text: &sim::text::Text) {
    print!("{}", text.out);
    eprint!("{}", text.err);
}

/// The exit code of a model's verdict: 0 when nothing was found, else 1.
pub fn exit_code(clean: bool) -> i32 {
    if clean {
        EXIT_OK
    } else {
        EXIT_FOUND
    }
}
