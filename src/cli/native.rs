//! `ksim gpu compare` on a `.cl` kernel or a `.sim` file: the user's program as written
//! (not ksim's regenerated OpenCL C) runs on the device with the same `-D`/`-I`, bound
//! from the same launch as the simulation ([`gpu::native`]).

use super::common::{Failure, LaunchArgs, Source};
use interp::Launch;
use lang::cl::lower::KernelInfo;
use lang::cl::simfile::ArgInfo;
use std::path::Path;

/// A user's program as the device builds it.
pub struct Program {
    /// Build options: `-I` the program's directory (where ksim's preprocessor looks
    /// first), then the user's `-D` and `-I`.
    pub options: Vec<String>,
    pub kernel: String,
    pub params: Vec<ArgInfo>,
    pub info: KernelInfo,
}

/// Whether `gpu compare` runs the user's own program for this file.
pub fn applies(path: &Path) -> bool {
    super::opencl::is_cl(path) || super::simfile::is_sim(path)
}

/// Loads the program and binds the launch, as `ksim run` does for the file.
pub fn load(args: &LaunchArgs) -> Result<(Source, Launch, Program), Failure> {
    let (src, kernel, opts, notes, program, params, info) = if super::simfile::is_sim(&args.file) {
        let l = super::simfile::load(args, &sim::replay::Disk)?;
        (
            l.src, l.kernel, l.opts, l.notes, l.program, l.params, l.info,
        )
    } else {
        let mut params = Vec::new();
        let (src, c, _) = super::opencl::load_cl_unit(
            &args.file,
            &args.define,
            &args.cl.include,
            &mut |unit| {
                let names: Vec<String> = lang::cl::lower::kernels(unit)
                    .iter()
                    .map(|f| f.name.name.clone())
                    .collect();
                let chosen = args.cl.kernel.clone().or(match names.as_slice() {
                    [one] => Some(one.clone()),
                    _ => None,
                });
                if let Some(name) = &chosen {
                    params = lang::cl::simfile::kernel_args(unit, name).unwrap_or_default();
                }
                Ok(chosen)
            },
            &sim::replay::Disk,
        )?;
        let opts = super::opencl::launch_options(args, &c.info)?;
        let notes = super::opencl::notes(&src, &c.info);
        let kernel = std::sync::Arc::new(c.kernel);
        (src, kernel, opts, notes, args.file.clone(), params, c.info)
    };
    eprint!("{notes}");
    let launch = Launch::new(kernel, &opts).map_err(|e| Failure::usage(e.0))?;
    let dir = program.parent().unwrap_or(Path::new(""));
    let mut options = vec![format!(
        "-I {}",
        if dir.as_os_str().is_empty() {
            ".".into()
        } else {
            dir.display().to_string()
        }
    )];
    options.extend(args.define.iter().map(|(n, v)| match v {
        Some(v) => format!("-D {n}={v}"),
        None => format!("-D {n}"),
    }));
    options.extend(
        args.cl
            .include
            .iter()
            .map(|d| format!("-I {}", d.display())),
    );
    let kernel = info.name.clone();
    Ok((
        src,
        launch,
        Program {
            options,
            kernel,
            params,
            info,
        },
    ))
}

impl Program {
    /// The program bound to the device's argument layout.
    pub fn native(
        &self,
        src: &Source,
        launch: &Launch,
        device: &gpu::Device,
    ) -> Result<gpu::native::NativeProgram, Failure> {
        let args = gpu::native::bind(
            launch,
            &self.params,
            &self.info,
            gpu::native::size_t_bytes(device),
        )
        .map_err(Failure::usage)?;
        Ok(gpu::native::NativeProgram {
            source: src.text.clone(),
            options: self.options.clone(),
            kernel: self.kernel.clone(),
            args,
        })
    }
}
