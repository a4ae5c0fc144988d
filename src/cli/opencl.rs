//! `.cl` kernels on the command line: compiling OpenCL C with `-D`/`-I`/`--kernel`, and
//! turning the OpenCL launch (`--global`/`--local`, `--input BUF=SPEC` with the buffer's
//! size, `--arg NAME=VALUE`) into the launch options of the lowered kernel.

use super::common::{Failure, LaunchArgs, Source};
use interp::launch::LaunchOptions;
use lang::ast::TypeName;
use lang::cl::lower::KernelInfo;
use lang::cl::{ClOptions, SourceMap};
use std::path::{Path, PathBuf};

/// Whether a kernel file is OpenCL C or CUDA (by extension: `.cl`, `.cu`), which one front
/// end reads into one syntax tree.
pub fn is_cl(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "cl") || lang::cl::clang::cuda::is_cuda(path)
}

/// Preprocesses, parses, lowers and checks an OpenCL C file; diagnostics are rendered
/// against the file (or the included file) they point into.
pub fn load_cl(
    path: &Path,
    defines: &[(String, Option<String>)],
    include: &[PathBuf],
    kernel: Option<&str>,
) -> Result<(Source, lang::cl::Compiled), Failure> {
    load_cl_unit(
        path,
        defines,
        include,
        &mut |_| Ok(kernel.map(String::from)),
        &sim::replay::Disk,
    )
    .map(|(src, c, _)| (src, c))
}

/// Names the kernel to lower from a parsed unit (or refuses with a failure, e.g. a `.sim`
/// file naming a kernel the unit lacks); `None`: the unit's only kernel.
pub type ChooseKernel<'a> = dyn FnMut(&lang::cl::ast::Unit) -> Result<Option<String>, Failure> + 'a;

/// [`load_cl`] with a look at the parsed unit before lowering, through `choose`, reading
/// the file and the files it includes through `files`.
pub fn load_cl_unit(
    path: &Path,
    defines: &[(String, Option<String>)],
    include: &[PathBuf],
    choose: &mut ChooseKernel<'_>,
    files: &dyn sim::replay::Files,
) -> Result<(Source, lang::cl::Compiled, lang::cl::ast::Unit), Failure> {
    let mut src = Source::read_with(path, files)?;
    let mut map = SourceMap::new(path, src.text.clone());
    let opts = ClOptions {
        pp: lang::cl::options::PpOptions {
            defines: defines.to_vec(),
            include_dirs: include.to_vec(),
        },
        kernel: None,
    };
    let unit = lang::cl::parse_unit(&mut map, &opts, &mut |p: &Path| files.read(p));
    src.includes = map.files[1..]
        .iter()
        .map(|f| (f.path.display().to_string(), f.text.clone(), f.base))
        .collect();
    let unit = unit.map_err(|diags| Failure::usage(src.render(&diags)))?;
    let opts = ClOptions {
        kernel: choose(&unit)?,
        ..opts
    };
    match lang::cl::compile_unit(&unit, &opts) {
        Ok(c) => Ok((src, c, unit)),
        Err(diags) => Err(Failure::usage(src.render(&diags))),
    }
}

/// The lowering's notes on approximations, one `note: file:line:col: text` line each.
pub fn notes(src: &Source, info: &KernelInfo) -> String {
    info.notes
        .iter()
        .map(|n| format!("note: {}: {}\n", src.location(n.span.start), n.text))
        .collect()
}

/// `64` → [64]; `64,2` → [64, 2] (a 2D NDRange), at most three dimensions.
fn dims(flag: &str, text: &str) -> Result<Vec<usize>, Failure> {
    let d = text
        .split(',')
        .map(|p| {
            p.trim().parse::<usize>().map_err(|_| {
                Failure::usage(format!("{flag} {text}: `{}` is not a number", p.trim()))
            })
        })
        .collect::<Result<Vec<usize>, Failure>>()?;
    if d.len() > 3 {
        return Err(Failure::usage(format!(
            "{flag} {text}: an NDRange has at most 3 dimensions"
        )));
    }
    Ok(d)
}

/// `--input img=WxH:CONTENTS` for an image: its sizes and the contents spec (without a
/// size: `zeros`, `random:SEED`, a list, `@FILE`).
fn image_spec<'s>(name: &str, spec: &'s str) -> Result<(Vec<usize>, &'s str), Failure> {
    let bad = || {
        Failure::usage(format!(
            "--input {name}={spec}: an image takes W[xH[xD]]:CONTENTS, CONTENTS being zeros, \
             ones, iota, random[:SEED], undef, a list or @FILE of 4 slots per texel"
        ))
    };
    let (sizes, contents) = spec.trim().split_once(':').ok_or_else(bad)?;
    let sizes = sizes
        .split('x')
        .map(|s| s.parse::<usize>().map_err(|_| bad()))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((sizes, contents))
}

/// A buffer's input spec with its size: `zeros:N`, `ones:N`, `iota:N`, `random:N[:SEED]`,
/// a list `1,2,3`, or `@FILE`; returns the length and the spec for [`interp::launch`].
pub fn sized_spec(name: &str, spec: &str) -> Result<(usize, String), Failure> {
    let spec = spec.trim();
    let bad = |why: &str| {
        Failure::usage(format!(
            "--input {name}={spec}: {why} (a buffer's spec gives its size: zeros:N, ones:N, \
             iota:N, random:N[:SEED], undef:N (no contents), a list 1,2,3 or @FILE)"
        ))
    };
    let size = |s: &str| {
        s.parse::<usize>()
            .map_err(|_| bad(&format!("`{s}` is not a size")))
    };
    for kind in ["zeros", "ones", "iota", "undef"] {
        if spec == kind {
            return Err(bad("no size given"));
        }
        if let Some(n) = spec.strip_prefix(kind).and_then(|r| r.strip_prefix(':')) {
            return Ok((size(n)?, kind.to_string()));
        }
    }
    if spec == "random" {
        return Err(bad("no size given"));
    }
    if let Some(rest) = spec.strip_prefix("random:") {
        return match rest.split_once(':') {
            Some((n, seed)) => Ok((size(n)?, format!("random:{seed}"))),
            None => Ok((size(rest)?, "random".into())),
        };
    }
    if let Some(path) = spec.strip_prefix('@') {
        let text = files::read_to_string(Path::new(path), files::TEXT_LIMIT)
            .map_err(|e| bad(&e.to_string()))?;
        let n = if text.trim_start().starts_with('[') {
            serde_json::from_str::<Vec<serde_json::Value>>(&text)
                .map_err(|e| bad(&format!("not a JSON array: {e}")))?
                .len()
        } else {
            text.lines().filter(|l| !l.trim().is_empty()).count()
        };
        return Ok((n, spec.to_string()));
    }
    if spec.is_empty() {
        return Err(bad("empty"));
    }
    Ok((spec.split(',').count(), spec.to_string()))
}

/// The launch options of a lowered OpenCL kernel: `--arg` binds its scalar parameters,
/// `--input` sizes and fills its buffers, `--global`/`--local` (or `--groups`/
/// `--local-size`) give the geometry.
pub fn launch_options(args: &LaunchArgs, info: &KernelInfo) -> Result<LaunchOptions, Failure> {
    let given = |flag: &str, d: &Option<super::common::Dims>| match d {
        Some(d) => dims(flag, &d.to_string()).map(Some),
        None => Ok(None),
    };
    // CUDA's words: `--block` is the work-group size, `--grid` the number of groups.
    let either =
        |a: &Option<super::common::Dims>, b: &Option<super::common::Dims>, what| match (a, b) {
            (Some(_), Some(_)) => Err(Failure::usage(format!("give {what}, not both"))),
            (a, b) => Ok(a.clone().or_else(|| b.clone())),
        };
    let (local_size, groups) = (
        given(
            "--local-size",
            &either(&args.local_size, &args.block, "--local-size or --block")?,
        )?,
        given(
            "--groups",
            &either(&args.groups, &args.grid, "--groups or --grid")?,
        )?,
    );
    let local = match (&args.local, local_size) {
        (Some(_), Some(_)) => return Err(Failure::usage("give --local or --local-size, not both")),
        (Some(l), None) => Some(dims("--local", l)?),
        (None, l) => l,
    };
    let groups = match (&args.global, groups) {
        (Some(_), Some(_)) => return Err(Failure::usage("give --global or --groups, not both")),
        (Some(g), None) => {
            let g = dims("--global", g)?;
            let Some(l) = &local else {
                return Err(Failure::usage(
                    "--global needs --local: ksim does not choose a work-group size",
                ));
            };
            if g.len() != l.len() {
                return Err(Failure::usage(format!(
                    "--global {} has {} dimensions but --local {} has {}",
                    super::common::Dims(g.clone()),
                    g.len(),
                    super::common::Dims(l.clone()),
                    l.len()
                )));
            }
            // OpenCL 1.2 (clEnqueueNDRangeKernel): each global size is a multiple of the
            // work-group size in its dimension.
            let (g_all, l_all) = (&g, l);
            let mut groups = Vec::new();
            for (d, (&g, &l)) in g.iter().zip(l).enumerate() {
                if l == 0 || g % l != 0 {
                    let dim = if l_all.len() > 1 {
                        format!(" in dimension {d} ({g} by {l})")
                    } else {
                        String::new()
                    };
                    return Err(Failure::usage(format!(
                        "--global {} is not a multiple of --local {}{dim} (OpenCL 1.2 requires it)",
                        super::common::Dims(g_all.clone()),
                        super::common::Dims(l_all.clone()),
                    )));
                }
                groups.push(g / l);
            }
            Some(groups)
        }
        (None, g) => g,
    };
    let Some(local) = local else {
        return Err(Failure::usage(
            if lang::cl::clang::cuda::is_cuda(&args.file) {
                "give the block size: --block X[,Y[,Z]] (and --grid X[,Y[,Z]])"
            } else {
                "give the work-group size: --local N[,N[,N]] (and --global or --groups)"
            },
        ));
    };
    let mut defines = Vec::new();
    let mut inputs = Vec::new();
    let names = |info: &KernelInfo| {
        let mut v: Vec<_> = info.buffers.iter().map(|b| b.name.as_str()).collect();
        v.extend(info.images.iter().map(|i| i.name.as_str()));
        v.extend(info.scalars.iter().map(|s| s.name.as_str()));
        if v.is_empty() {
            "none".to_string()
        } else {
            v.join(", ")
        }
    };
    for (name, _) in &args.arg {
        if !info.scalars.iter().any(|s| &s.name == name) {
            return Err(Failure::usage(format!(
                "--arg {name}=...: kernel `{}` has no scalar parameter `{name}` (its parameters: {})",
                info.name,
                names(info)
            )));
        }
    }
    for (name, _) in &args.input {
        if !info.buffers.iter().any(|b| &b.name == name)
            && !info.images.iter().any(|i| &i.name == name)
        {
            return Err(Failure::usage(format!(
                "--input {name}=...: kernel `{}` has no pointer parameter `{name}` (its parameters: {})",
                info.name,
                names(info)
            )));
        }
    }
    for s in &info.scalars {
        let given: Vec<_> = args.arg.iter().filter(|(n, _)| *n == s.name).collect();
        match given.as_slice() {
            [(_, v)] if info.samplers.contains(&s.name) => {
                let bits = lang::cl::lower::sampler_value(v)
                    .map_err(|e| Failure::usage(format!("--arg {}={v}: {e}", s.name)))?;
                defines.push((s.param.clone(), bits.to_string()));
            }
            [(_, v)] => defines.push((s.param.clone(), v.clone())),
            [] => {
                return Err(Failure::usage(format!(
                    "scalar parameter `{}` is not bound: pass --arg {}=VALUE",
                    s.name, s.name
                )))
            }
            _ => {
                return Err(Failure::usage(format!(
                    "--arg {} is given more than once",
                    s.name
                )))
            }
        }
    }
    for b in &info.buffers {
        let given: Vec<_> = args.input.iter().filter(|(n, _)| *n == b.name).collect();
        match given.as_slice() {
            [(_, spec)] => {
                let (n, spec) = sized_spec(&b.name, spec)?;
                defines.push((b.size_param.clone(), n.to_string()));
                // `undef:N`: a size and no contents (undefined under `--uninit check`).
                if spec != "undef" {
                    inputs.push((b.array.clone(), spec));
                }
            }
            [] => {
                let elem = match b.elem {
                    TypeName::Float => "float",
                    TypeName::Uint => "uint",
                    TypeName::Bool => "bool",
                    _ => "int",
                };
                // A vector buffer's input lists its components in memory order.
                let what = match b.lanes {
                    1 => format!("{elem} elements"),
                    n => format!(
                        "{elem}{n} elements, each {} {elem} slots: N counts slots",
                        lang::cl::lower::vector_stride(n)
                    ),
                };
                return Err(Failure::usage(format!(
                    "buffer `{}` ({what}) needs a size and contents: pass --input {}=zeros:N \
                     (or ones:N, iota:N, random:N[:SEED], a list, @FILE)",
                    b.name, b.name
                )));
            }
            _ => {
                return Err(Failure::usage(format!(
                    "--input {} is given more than once",
                    b.name
                )))
            }
        }
    }
    for im in &info.images {
        let given: Vec<_> = args.input.iter().filter(|(n, _)| *n == im.name).collect();
        let [(_, spec)] = given.as_slice() else {
            return Err(Failure::usage(if given.is_empty() {
                format!(
                    "image `{}` needs a size and contents: pass --input {}={}:zeros \
                     (or ones, iota, random[:SEED], undef, a list or @FILE of 4 {} slots per texel)",
                    im.name,
                    im.name,
                    ["W", "WxH", "WxHxD"][im.dims.len() - 1],
                    lang::check::ty_of(im.elem).name()
                )
            } else {
                format!("--input {} is given more than once", im.name)
            }));
        };
        let (sizes, contents) = image_spec(&im.name, spec)?;
        let sized = im
            .defines(&sizes)
            .map_err(|e| Failure::usage(format!("--input {}={spec}: {e}", im.name)))?;
        let slots = &sized.last().expect("the slots come last").1;
        // The contents spec of the texel array, with the number of slots put in.
        let with_size = match contents.split_once(':') {
            Some(("random", seed)) => format!("random:{slots}:{seed}"),
            None if ["zeros", "ones", "iota", "undef", "random"].contains(&contents) => {
                format!("{contents}:{slots}")
            }
            _ => contents.to_string(),
        };
        let (n, contents) = sized_spec(&im.name, &with_size)?;
        if n.to_string() != *slots {
            return Err(Failure::usage(format!(
                "--input {}={spec}: {n} values for {slots} slots (4 per texel)",
                im.name
            )));
        }
        defines.extend(sized);
        if contents != "undef" {
            inputs.push((im.array.clone(), contents));
        }
    }
    // One dimension goes in the scalar fields, as for a .ksim launch.
    let split = |d: Option<Vec<usize>>| match d.as_deref() {
        Some([n]) => (Some(*n), Vec::new()),
        _ => (None, d.unwrap_or_default()),
    };
    let (groups, group_dims) = split(groups);
    let (local_size, local_dims) = split(Some(local));
    Ok(LaunchOptions {
        defines,
        groups,
        local_size,
        group_dims,
        local_dims,
        monoid: args.monoid,
        inputs,
        max_steps: args.max_steps,
        // A device leaves memory nothing wrote undefined.
        uninit: args.uninit.unwrap_or(interp::Uninit::Check),
        continue_after_faults: !args.stop_at_first_fault,
    })
}
