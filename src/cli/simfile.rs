//! Oclgrind's simulator files (`.sim`) on the command line: the file is read and parsed by
//! [`lang::cl::simfile`], its program compiled as a `.cl` kernel (with `-D`/`-I`), and its
//! launch written as the flags of a `.cl` launch, which [`super::opencl::launch_options`]
//! binds: a `.sim` launch and a flags launch are one thing.

use super::common::{Failure, LaunchArgs, Source};
use interp::launch::LaunchOptions;
use interp::Value;
use lang::cl::simfile::{self, ArgInfo, Num, SimArg, SimParser};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Whether a kernel file is an Oclgrind simulator file (by extension).
pub fn is_sim(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "sim")
}

/// A `dump` argument: what the file said, its parameter, and its array in the kernel.
pub struct Dump {
    arg: SimArg,
    param: ArgInfo,
    array: String,
}

/// A loaded `.sim` file: the program's source, its kernel, the launch, the lowering's
/// notes and the arguments to dump after a run.
pub struct Loaded {
    pub src: Source,
    pub kernel: Arc<lang::core::Kernel>,
    pub opts: LaunchOptions,
    pub notes: String,
    pub dumps: Vec<Dump>,
    /// The program file, its kernel's parameters and the lowering's view of them (for
    /// running the program as written on a device).
    pub program: std::path::PathBuf,
    pub params: Vec<ArgInfo>,
    pub info: lang::cl::lower::KernelInfo,
}

/// Reads the `.sim` file of `args` (and its program, through `files`), compiles its program
/// and binds its launch. The file gives the kernel and the whole launch, so the launch
/// flags are refused with it; `-D` and `-I` go to the program's build, and without them
/// the file's `# build:` options do.
pub fn load(args: &LaunchArgs, files: &dyn sim::replay::Files) -> Result<Loaded, Failure> {
    let flags = [
        (args.cl.kernel.is_some(), "--kernel"),
        (args.global.is_some(), "--global"),
        (args.local.is_some(), "--local"),
        (args.local_size.is_some(), "--local-size"),
        (args.groups.is_some(), "--groups"),
        (!args.input.is_empty(), "--input"),
        (!args.arg.is_empty(), "--arg"),
    ];
    if let Some((_, flag)) = flags.iter().find(|(given, _)| *given) {
        return Err(Failure::usage(format!(
            "{flag}: `{}` is an Oclgrind simulator file, which gives the kernel and its whole \
             launch (only -D and -I apply, to the program's build)",
            args.file.display()
        )));
    }
    let sim = Source::read_with(&args.file, files)?;
    let fail = |d| Failure::usage(sim.render(&[d]));
    let mut parser = SimParser::new(&sim.text);
    let header = parser.header().map_err(fail)?;
    let mut parser = parser.with_budget(memory_budget(&header));
    // Oclgrind opens the program file relative to where it runs; ksim takes it relative
    // to the `.sim` file, so that the pair works from any directory.
    let dir = args.file.parent().unwrap_or(Path::new(""));
    let program = dir.join(&header.program.text);
    let cant = |why: String| {
        fail(lang::diag::Diagnostic::new(
            format!("cannot use the program file `{}`: {why}", program.display()),
            header.program.span.clone(),
        ))
    };
    let head = files.read(&program);
    match head {
        Err(e) => return Err(cant(e)),
        Ok(t) if t.starts_with("BC") => {
            return Err(cant(
                "LLVM bitcode is not supported, give the OpenCL C source".into(),
            ))
        }
        Ok(_) => {}
    }
    let (define, include, build_notes) = build_options(args, &sim, dir).map_err(fail)?;
    let mut params = Vec::new();
    let (src, c, _) = super::opencl::load_cl_unit(
        &program,
        &define,
        &include,
        &mut |unit| {
            let name = &header.kernel.text;
            params = simfile::kernel_args(unit, name).ok_or_else(|| {
                let names: Vec<_> = lang::cl::lower::kernels(unit)
                    .iter()
                    .map(|f| f.name.name.clone())
                    .collect();
                fail(lang::diag::Diagnostic::new(
                    format!(
                        "no kernel `{name}` in `{}` (its kernels: {})",
                        program.display(),
                        if names.is_empty() {
                            "none".into()
                        } else {
                            names.join(", ")
                        }
                    ),
                    header.kernel.span.clone(),
                ))
            })?;
            Ok(Some(name.clone()))
        },
        files,
    )?;
    let args_of_file = parser.arguments(&params).map_err(fail)?;
    let flags = simfile::to_flags(&header, &args_of_file, &params, &c.info).map_err(fail)?;
    let dims = |d: &[usize]| d.iter().map(usize::to_string).collect::<Vec<_>>().join(",");
    let as_flags = LaunchArgs {
        global: Some(dims(&flags.global)),
        local: Some(dims(&flags.local)),
        input: flags.inputs,
        arg: flags.args,
        ..args.clone()
    };
    let opts = super::opencl::launch_options(&as_flags, &c.info).map_err(|f| Failure {
        message: format!("{}: {}", args.file.display(), in_file_terms(&f.message)),
        code: f.code,
    })?;
    let dumps = args_of_file
        .into_iter()
        .zip(params.iter().cloned())
        .filter(|(a, _)| matches!(a.kind, simfile::ArgKind::Buffer { dump: true, .. }))
        .map(|(arg, param)| {
            // A buffer of structs is a buffer per member in ksim (`lang::cl::simstruct`).
            let Some(b) = c.info.buffers.iter().find(|b| b.name == arg.name) else {
                return Err(fail(lang::diag::Diagnostic::new(
                    format!(
                        "not supported yet: `dump` of `{}`, a buffer of `{}`",
                        arg.name,
                        param.base.name()
                    ),
                    arg.span.clone(),
                )));
            };
            let array = b.array.clone();
            Ok(Dump { arg, param, array })
        })
        .collect::<Result<_, _>>()?;
    let notes = build_notes + &super::opencl::notes(&src, &c.info);
    Ok(Loaded {
        src,
        kernel: Arc::new(c.kernel),
        opts,
        notes,
        dumps,
        program,
        params,
        info: c.info,
    })
}

/// The program's `-D` and `-I`: the command line's when it gives any, else those of the
/// file's `# build:` comments (`-I` relative to the `.sim` file, as the program file is);
/// with notes on the options not applied.
#[allow(clippy::type_complexity)]
fn build_options(
    args: &LaunchArgs,
    sim: &Source,
    dir: &Path,
) -> Result<(Vec<(String, Option<String>)>, Vec<PathBuf>, String), lang::diag::Diagnostic> {
    let b = lang::cl::simbuild::build_options(&sim.text)?;
    let mut notes = String::new();
    if !args.define.is_empty() || !args.cl.include.is_empty() {
        if let Some(span) = b.spans.first() {
            notes += &format!(
                "note: {}: the file's `# build:` options are not applied: the command line \
                 gives -D or -I\n",
                sim.location(span.start)
            );
        }
        return Ok((args.define.clone(), args.cl.include.clone(), notes));
    }
    for (opt, span) in &b.ignored {
        notes += &format!(
            "note: {}: build option `{opt}` ignored (it changes nothing ksim computes)\n",
            sim.location(span.start)
        );
    }
    let include = b.include.iter().map(|d| dir.join(d)).collect();
    Ok((b.defines, include, notes))
}

/// The launch memory limit (as `Launch::new` applies it) for the buffers of a file with
/// `header`, checked before their data are read: the threads, and `elements` elements.
fn memory_budget(header: &simfile::Header) -> impl Fn(u64) -> Result<(), String> {
    use interp::launch::MEMORY_LIMIT;
    use interp::launch::{bytes_text, memory_estimate, BYTES_PER_ELEMENT, BYTES_PER_THREAD};
    let threads = (header.ndrange.iter()).fold(1u64, |n, &d| n.saturating_mul(d as u64));
    move |elements| {
        let need = memory_estimate(elements, threads, 0);
        if need <= MEMORY_LIMIT {
            return Ok(());
        }
        Err(format!(
            "this launch needs about {} of memory ({elements} buffer elements x \
             {BYTES_PER_ELEMENT} bytes + {threads} work-items x {BYTES_PER_THREAD} bytes), \
             more than ksim's limit of {}: use smaller sizes",
            bytes_text(need),
            bytes_text(MEMORY_LIMIT)
        ))
    }
}

/// A message about the launch flags a `.sim` file was turned into, in the file's terms.
fn in_file_terms(message: &str) -> String {
    (message.replace("--global", "the NDRange"))
        .replace("--local", "the work-group size")
        .replace("--input ", "argument ")
        .replace("--arg ", "argument ")
}

/// Oclgrind's dump of every `dump` argument from the final arrays of a run.
pub fn dumps_text(dumps: &[Dump], arrays: &sim::outcome::Arrays) -> String {
    dumps
        .iter()
        .map(|d| {
            let values: Vec<Num> = arrays
                .0
                .iter()
                .find(|(name, _)| *name == d.array)
                .and_then(|(_, instances)| instances.first())
                .map(|vals| vals.iter().map(num).collect())
                .unwrap_or_default();
            simfile::dump(&d.arg, &simfile::encode(&d.param, &values))
        })
        .collect()
}

fn num(v: &Value) -> Num {
    match v {
        Value::Float(bits) => Num::F(f32::from_bits(*bits) as f64),
        Value::Bool(b) => Num::I(*b as i128),
        other => Num::I(other.as_i64().unwrap_or(0) as i128),
    }
}
