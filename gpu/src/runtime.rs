//! Running launches on an OpenCL device through `opencl3`.
//!
//! `opencl3` loads `libOpenCL.so.1` when it is first used (its `dynamic` feature), so a
//! machine without OpenCL builds and runs every other command; there the functions here
//! return [`GpuError::NoPlatform`], whose message tells what to install.

use crate::emit::{emit_with, EmitOptions, Emitted};
use crate::repr::Bytes;
use interp::{Launch, Memory};
use lang::ast::Space;
use opencl3::command_queue::{CommandQueue, CL_QUEUE_PROFILING_ENABLE};
use opencl3::context::Context;
use opencl3::device::{
    Device as ClDevice, CL_DEVICE_TYPE_ACCELERATOR, CL_DEVICE_TYPE_ALL, CL_DEVICE_TYPE_CPU,
    CL_DEVICE_TYPE_GPU,
};
use opencl3::error_codes::{CL_INVALID_WORK_GROUP_SIZE, CL_OUT_OF_RESOURCES};
use opencl3::kernel::Kernel as ClKernel;
use opencl3::memory::{Buffer, ClMem, CL_MEM_READ_WRITE};
use opencl3::program::Program;
use opencl3::types::{cl_device_id, cl_mem, CL_BLOCKING};
use std::collections::HashMap;
use std::fmt;
use std::rc::Rc;
use std::time::Instant;

/// The message for a machine without a usable OpenCL platform (the CLI prints it as is).
pub const NO_PLATFORM: &str =
    "no OpenCL platform found: install pocl-opencl-icd (CPU) or your GPU driver's OpenCL ICD";

/// Environment variable that selects a device (index or name substring) when no
/// explicit selector is given.
pub const DEVICE_ENV: &str = "KSIM_DEVICE";

/// An error from the GPU backend.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GpuError {
    /// No OpenCL loader (libOpenCL.so.1), or a loader without any platform (ICD).
    NoPlatform,
    /// The device selector matched nothing.
    NoSuchDevice {
        selector: String,
        available: Vec<String>,
    },
    /// The kernel cannot be translated (e.g. the list monoid).
    Emit(crate::emit::EmitError),
    /// The OpenCL compiler rejected the generated program.
    Build { log: String },
    /// The work-group size is larger than the device (or this kernel on it) allows.
    WorkGroupTooLarge {
        local_size: usize,
        max: usize,
        device: String,
        /// Whether the limit is the kernel's (`CL_KERNEL_WORK_GROUP_SIZE`) rather than the
        /// device's.
        kernel_limit: bool,
    },
    /// The kernel's `__local` arrays do not fit in the device's local memory.
    LocalMemoryTooLarge {
        bytes: usize,
        max: u64,
        device: String,
    },
    /// The device is big-endian (the buffer encoding assumes little-endian).
    BigEndian { device: String },
    /// An OpenCL call failed.
    Cl { call: &'static str, code: i32 },
    /// A pipeline is malformed (see [`crate::pipeline`]).
    Pipeline(String),
}

impl fmt::Display for GpuError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GpuError::NoPlatform => f.write_str(NO_PLATFORM),
            GpuError::NoSuchDevice {
                selector,
                available,
            } => {
                write!(
                    f,
                    "no OpenCL device matches `{selector}`; available devices:"
                )?;
                for d in available {
                    write!(f, "\n  {d}")?;
                }
                Ok(())
            }
            GpuError::Emit(e) => write!(f, "{e}"),
            GpuError::Build { log } => write!(
                f,
                "the OpenCL compiler rejected the generated program; build log:\n{}",
                log.trim_end()
            ),
            GpuError::WorkGroupTooLarge {
                local_size,
                max,
                device,
                kernel_limit,
            } => write!(
                f,
                "work-group size {local_size} exceeds the maximum of {max} {} on {device} \
                 (the simulator has no such limit; use a smaller local size, or a pipeline \
                 over several work-groups)",
                if *kernel_limit {
                    "for this kernel"
                } else {
                    "work-items per work-group"
                }
            ),
            GpuError::LocalMemoryTooLarge { bytes, max, device } => write!(
                f,
                "the kernel's local arrays need {bytes} bytes of local memory but {device} has \
                 {max} (the simulator has no such limit)"
            ),
            GpuError::BigEndian { device } => {
                write!(f, "{device} is big-endian, which ksim does not support")
            }
            GpuError::Cl { call, code } => write!(
                f,
                "OpenCL call {call} failed: {} ({code})",
                opencl3::error_codes::error_text(*code)
            ),
            GpuError::Pipeline(msg) => write!(f, "invalid pipeline: {msg}"),
        }
    }
}

impl std::error::Error for GpuError {}

impl From<crate::emit::EmitError> for GpuError {
    fn from(e: crate::emit::EmitError) -> Self {
        GpuError::Emit(e)
    }
}

/// `-1001` is `CL_PLATFORM_NOT_FOUND_KHR` (the ICD loader without ICDs); `-2000` is
/// cl3's "library could not be loaded".
pub(crate) fn cl_err(call: &'static str) -> impl Fn(opencl3::error_codes::ClError) -> GpuError {
    move |e| match e.0 {
        -1001 | -2000 | -2001 => GpuError::NoPlatform,
        code => GpuError::Cl { call, code },
    }
}

/// What `ksim gpu devices` lists about one device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceInfo {
    /// Position in [`devices`]' list (the `--device INDEX` selector).
    pub index: usize,
    pub platform: String,
    pub name: String,
    /// "GPU", "CPU", "accelerator" or "other".
    pub kind: String,
    /// The device's OpenCL version string.
    pub version: String,
    /// `CL_DRIVER_VERSION`: the driver (or OpenCL implementation) version.
    pub driver: String,
    pub max_work_group_size: usize,
    pub local_mem_size: u64,
    pub global_mem_size: u64,
    pub compute_units: u32,
}

impl fmt::Display for DeviceInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "[{}] {} ({}, platform {}): max work-group size {}, local memory {} KiB, {} compute units",
            self.index,
            self.name,
            self.kind,
            self.platform,
            self.max_work_group_size,
            self.local_mem_size / 1024,
            self.compute_units
        )
    }
}

/// An opened device.
#[derive(Clone, Debug)]
pub struct Device {
    pub info: DeviceInfo,
    pub(crate) id: cl_device_id,
}

impl Device {
    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }
}

fn enumerate() -> Result<Vec<(DeviceInfo, cl_device_id)>, GpuError> {
    // The ICD loader's first clGetPlatformIDs is not safe to race (with ocl-icd, a
    // concurrent first call can answer CL_PLATFORM_NOT_FOUND_KHR): serialise.
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let platforms = opencl3::platform::get_platforms().map_err(cl_err("clGetPlatformIDs"))?;
    if platforms.is_empty() {
        return Err(GpuError::NoPlatform);
    }
    let mut out = Vec::new();
    for p in platforms {
        let pname = p.name().unwrap_or_else(|_| "?".into());
        // A platform without devices answers CL_DEVICE_NOT_FOUND: skip it.
        let ids = p.get_devices(CL_DEVICE_TYPE_ALL).unwrap_or_default();
        for id in ids {
            let d = ClDevice::new(id);
            let ty = d.dev_type().unwrap_or(0);
            let kind = if ty & CL_DEVICE_TYPE_GPU != 0 {
                "GPU"
            } else if ty & CL_DEVICE_TYPE_CPU != 0 {
                "CPU"
            } else if ty & CL_DEVICE_TYPE_ACCELERATOR != 0 {
                "accelerator"
            } else {
                "other"
            };
            out.push((
                DeviceInfo {
                    index: out.len(),
                    platform: pname.trim().to_string(),
                    name: d.name().unwrap_or_else(|_| "?".into()).trim().to_string(),
                    kind: kind.to_string(),
                    version: d.version().unwrap_or_default().trim().to_string(),
                    driver: d.driver_version().unwrap_or_default().trim().to_string(),
                    max_work_group_size: d.max_work_group_size().unwrap_or(0),
                    local_mem_size: d.local_mem_size().unwrap_or(0),
                    global_mem_size: d.global_mem_size().unwrap_or(0),
                    compute_units: d.max_compute_units().unwrap_or(0),
                },
                id,
            ));
        }
    }
    if out.is_empty() {
        return Err(GpuError::NoPlatform);
    }
    Ok(out)
}

/// Every OpenCL device of every platform, in a stable order (the `--device INDEX`
/// numbering). Fails with [`GpuError::NoPlatform`] when OpenCL is missing.
pub fn devices() -> Result<Vec<DeviceInfo>, GpuError> {
    Ok(enumerate()?.into_iter().map(|(i, _)| i).collect())
}

/// Opens a device: `selector` is an index into [`devices`] or a case-insensitive
/// substring of the device or platform name; `None` falls back to `$KSIM_DEVICE`, and
/// then to the first GPU, else the first device.
pub fn open(selector: Option<&str>) -> Result<Device, GpuError> {
    let all = enumerate()?;
    let env = std::env::var(DEVICE_ENV)
        .ok()
        .filter(|s| !s.trim().is_empty());
    let sel = selector.map(str::to_string).or(env);
    let pick = match &sel {
        None => all
            .iter()
            .find(|(i, _)| i.kind == "GPU")
            .or(all.first())
            .cloned(),
        Some(s) => {
            let s = s.trim();
            if let Ok(k) = s.parse::<usize>() {
                all.get(k).cloned()
            } else {
                let low = s.to_lowercase();
                all.iter()
                    .find(|(i, _)| i.name.to_lowercase().contains(&low))
                    .or_else(|| {
                        all.iter()
                            .find(|(i, _)| i.platform.to_lowercase().contains(&low))
                    })
                    .cloned()
            }
        }
    };
    match pick {
        Some((info, id)) => Ok(Device { info, id }),
        None => Err(GpuError::NoSuchDevice {
            selector: sel.unwrap_or_default(),
            available: all.iter().map(|(i, _)| i.to_string()).collect(),
        }),
    }
}

/// Timings of one execution.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timing {
    /// Kernel execution time from OpenCL profiling events (END − START), summed over the
    /// launches of a pipeline.
    pub kernel_ns: u64,
    /// Host wall-clock time of the whole execution: writing the inputs, the kernel(s),
    /// reading the results back (not compilation).
    pub total_ns: u64,
}

/// The result of [`run`].
#[derive(Clone, Debug)]
pub struct DeviceRun {
    /// The final contents of every array, as the simulator reports them.
    pub memory: Memory,
    /// One entry per repetition.
    pub timings: Vec<Timing>,
    /// The program that ran.
    pub source: String,
    pub device: DeviceInfo,
}

/// Runs `launch` on `device` `repeat` times (at least once), each time from the launch's
/// initial contents, and returns the final memory of the last run with every run's
/// timings. Refuses a launch whose work-group size exceeds the device's maximum.
pub fn run(launch: &Launch, device: &Device, repeat: usize) -> Result<DeviceRun, GpuError> {
    run_with(launch, device, repeat, &EmitOptions::default())
}

/// [`run`] with a choice of the harness code around the kernel (see [`EmitOptions`]): a
/// benchmark's timed kernel leaves out the fills and copies its results do not need.
pub fn run_with(
    launch: &Launch,
    device: &Device,
    repeat: usize,
    opts: &EmitOptions,
) -> Result<DeviceRun, GpuError> {
    let session = Session::new(device)?;
    let compiled = session.compile(launch, opts)?;
    let mut bufs = session.buffers_for(launch, &compiled, &HashMap::new())?;
    let mut timings = Vec::new();
    let mut memory = None;
    for _ in 0..repeat.max(1) {
        let t0 = Instant::now();
        session.write_inputs(launch, &compiled, &mut bufs)?;
        let kernel_ns = session.launch(launch, &compiled, &bufs)?;
        let mem = session.read_memory(launch, &compiled, &bufs)?;
        timings.push(Timing {
            kernel_ns,
            total_ns: t0.elapsed().as_nanos() as u64,
        });
        memory = Some(mem);
    }
    Ok(DeviceRun {
        memory: memory.unwrap(),
        timings,
        source: compiled.emitted.source.clone(),
        device: device.info.clone(),
    })
}

/// A context and a profiling command queue on one device.
pub(crate) struct Session<'d> {
    pub device: &'d Device,
    context: Context,
    pub(crate) queue: CommandQueue,
    cache: std::cell::RefCell<HashMap<String, Rc<Compiled>>>,
}

pub(crate) struct Compiled {
    pub emitted: Emitted,
    kernel: ClKernel,
    _program: Program,
    /// The driver's `CL_KERNEL_WORK_GROUP_SIZE`, if it answered. Only used to explain a
    /// refused launch: NVIDIA's driver (580) answers 256 for every kernel, even one of
    /// ten registers, yet launches the same kernels with 1024 work-items per group.
    kernel_limit: Option<usize>,
}

/// The device buffers of one launch: per kernel array, the buffer behind its argument
/// (shared with a pipeline buffer, or private).
pub(crate) struct LaunchBuffers {
    per_array: Vec<Option<Rc<Buffer<u8>>>>,
    /// Whether the array's buffer belongs to a pipeline (then the host does not write it).
    shared: Vec<bool>,
}

impl<'d> Session<'d> {
    pub fn new(device: &'d Device) -> Result<Self, GpuError> {
        let d = ClDevice::new(device.id);
        if !d.endian_little().unwrap_or(true) {
            return Err(GpuError::BigEndian {
                device: device.info.name.clone(),
            });
        }
        let context = Context::from_device(&d).map_err(cl_err("clCreateContext"))?;
        #[allow(deprecated)]
        let queue = CommandQueue::create_default(&context, CL_QUEUE_PROFILING_ENABLE)
            .map_err(cl_err("clCreateCommandQueue"))?;
        Ok(Session {
            device,
            context,
            queue,
            cache: Default::default(),
        })
    }

    fn too_large(&self, local_size: usize, max: usize, kernel_limit: bool) -> GpuError {
        GpuError::WorkGroupTooLarge {
            local_size,
            max,
            device: self.device.info.name.clone(),
            kernel_limit,
        }
    }

    /// Emits and builds the program for `launch` (cached by source text).
    pub fn compile(&self, launch: &Launch, opts: &EmitOptions) -> Result<Rc<Compiled>, GpuError> {
        let info = &self.device.info;
        if launch.local_size > info.max_work_group_size {
            return Err(self.too_large(launch.local_size, info.max_work_group_size, false));
        }
        let emitted = emit_with(launch, opts)?;
        if emitted.local_bytes as u64 > info.local_mem_size {
            return Err(GpuError::LocalMemoryTooLarge {
                bytes: emitted.local_bytes,
                max: info.local_mem_size,
                device: info.name.clone(),
            });
        }
        if let Some(c) = self.cache.borrow().get(&emitted.source) {
            return Ok(c.clone());
        }
        let program = self.build(&emitted.source)?;
        let kernel =
            ClKernel::create(&program, &emitted.kernel_name).map_err(cl_err("clCreateKernel"))?;
        let kernel_limit = kernel.get_work_group_size(self.device.id).ok();
        let c = Rc::new(Compiled {
            emitted,
            kernel,
            _program: program,
            kernel_limit,
        });
        self.cache
            .borrow_mut()
            .insert(c.emitted.source.clone(), c.clone());
        Ok(c)
    }

    /// Builds OpenCL C source for this device; a compiler error carries the build log.
    pub fn build(&self, source: &str) -> Result<Program, GpuError> {
        self.build_with(source, &[])
    }

    /// [`Session::build`] with more build options (`-D NAME=VALUE`, `-I DIR`).
    pub fn build_with(&self, source: &str, options: &[String]) -> Result<Program, GpuError> {
        let mut program = Program::create_from_source(&self.context, source)
            .map_err(cl_err("clCreateProgramWithSource"))?;
        let mut opts = vec!["-cl-std=CL1.2".to_string()];
        opts.extend(options.iter().cloned());
        if let Err(e) = program.build(&[self.device.id], &opts.join(" ")) {
            let log = program.get_build_log(self.device.id).unwrap_or_default();
            return Err(
                if e.0 == opencl3::error_codes::CL_BUILD_PROGRAM_FAILURE || !log.trim().is_empty() {
                    GpuError::Build { log }
                } else {
                    cl_err("clBuildProgram")(e)
                },
            );
        }
        Ok(program)
    }

    pub fn buffer(&self, bytes: usize) -> Result<Rc<Buffer<u8>>, GpuError> {
        // SAFETY: no host pointer; OpenCL allocates at least one byte.
        let b = unsafe {
            Buffer::<u8>::create(
                &self.context,
                CL_MEM_READ_WRITE,
                bytes.max(1),
                std::ptr::null_mut(),
            )
        }
        .map_err(cl_err("clCreateBuffer"))?;
        Ok(Rc::new(b))
    }

    /// Allocates the buffers of a launch; `shared` maps kernel arrays to existing
    /// (pipeline) buffers.
    pub fn buffers_for(
        &self,
        launch: &Launch,
        c: &Compiled,
        shared: &HashMap<usize, Rc<Buffer<u8>>>,
    ) -> Result<LaunchBuffers, GpuError> {
        let mut per_array = Vec::new();
        let mut is_shared = Vec::new();
        for (a, plan) in c.emitted.plans.iter().enumerate() {
            if plan.arg.is_none() {
                per_array.push(None);
                is_shared.push(false);
                continue;
            }
            if let Some(b) = shared.get(&a) {
                per_array.push(Some(b.clone()));
                is_shared.push(true);
                continue;
            }
            let bytes = launch.len(a) * launch.instances(a) * plan.repr.size();
            per_array.push(Some(self.buffer(bytes)?));
            is_shared.push(false);
        }
        Ok(LaunchBuffers {
            per_array,
            shared: is_shared,
        })
    }

    pub fn write(&self, buf: &Buffer<u8>, bytes: &[u8]) -> Result<(), GpuError> {
        if bytes.is_empty() {
            return Ok(());
        }
        // SAFETY: blocking write of `bytes.len()` bytes into a buffer at least that large
        // (buffers are sized from the same launch); `bytes` outlives the blocking call.
        let ev = unsafe {
            opencl3::command_queue::enqueue_write_buffer(
                self.queue.get(),
                buf.get(),
                CL_BLOCKING,
                0,
                bytes.len(),
                bytes.as_ptr().cast(),
                0,
                std::ptr::null(),
            )
        }
        .map_err(|code| cl_err("clEnqueueWriteBuffer")(code.into()))?;
        drop(opencl3::event::Event::new(ev));
        Ok(())
    }

    pub fn read(&self, buf: &Buffer<u8>, len: usize) -> Result<Vec<u8>, GpuError> {
        let mut out = vec![0u8; len];
        if len == 0 {
            return Ok(out);
        }
        // SAFETY: blocking read of `len` bytes from a buffer at least that large.
        unsafe {
            self.queue
                .enqueue_read_buffer(buf, CL_BLOCKING, 0, &mut out, &[])
        }
        .map_err(cl_err("clEnqueueReadBuffer"))?;
        Ok(out)
    }

    /// Writes the launch's initial contents into its private buffers.
    pub fn write_inputs(
        &self,
        launch: &Launch,
        c: &Compiled,
        bufs: &mut LaunchBuffers,
    ) -> Result<(), GpuError> {
        for (a, plan) in c.emitted.plans.iter().enumerate() {
            let (Some(buf), false) = (&bufs.per_array[a], bufs.shared[a]) else {
                continue;
            };
            if !plan.write {
                continue;
            }
            let one = plan.repr.encode_all(&launch.initial[a]);
            let bytes = one.repeat(launch.instances(a));
            self.write(buf, &bytes)?;
        }
        Ok(())
    }

    /// Sets the arguments and runs the kernel; returns the profiled kernel time.
    pub fn launch(
        &self,
        launch: &Launch,
        c: &Compiled,
        bufs: &LaunchBuffers,
    ) -> Result<u64, GpuError> {
        for (i, arg) in c.emitted.args.iter().enumerate() {
            let mem: cl_mem = bufs.per_array[arg.array]
                .as_ref()
                .expect("every argument has a buffer")
                .get();
            // SAFETY: argument `i` is a `__global` pointer and `mem` a live buffer.
            unsafe { c.kernel.set_arg(i as u32, &mem) }.map_err(cl_err("clSetKernelArg"))?;
        }
        let dims = launch.work_dim;
        let local = launch.local_dims;
        let global: [usize; 3] = std::array::from_fn(|d| launch.group_dims[d] * local[d]);
        // SAFETY: a range of `dims` <= 3 dimensions; the arrays have 3 entries and outlive
        // the call.
        let event = unsafe {
            self.queue.enqueue_nd_range_kernel(
                c.kernel.get(),
                dims as u32,
                std::ptr::null(),
                global.as_ptr(),
                local.as_ptr(),
                &[],
            )
        }
        .map_err(|e| match c.kernel_limit {
            // The launch itself decides: the kernel's reported limit is only advisory.
            Some(kmax)
                if launch.local_size > kmax
                    && matches!(e.0, CL_INVALID_WORK_GROUP_SIZE | CL_OUT_OF_RESOURCES) =>
            {
                self.too_large(launch.local_size, kmax, true)
            }
            _ => cl_err("clEnqueueNDRangeKernel")(e),
        })?;
        event.wait().map_err(cl_err("clWaitForEvents"))?;
        let start = event
            .profiling_command_start()
            .map_err(cl_err("clGetEventProfilingInfo"))?;
        let end = event
            .profiling_command_end()
            .map_err(cl_err("clGetEventProfilingInfo"))?;
        Ok(end.saturating_sub(start))
    }

    /// Reads the final memory of a launch (const and unread arrays keep their initial
    /// contents).
    pub fn read_memory(
        &self,
        launch: &Launch,
        c: &Compiled,
        bufs: &LaunchBuffers,
    ) -> Result<Memory, GpuError> {
        let mut arrays = Vec::new();
        for (a, plan) in c.emitted.plans.iter().enumerate() {
            let n = launch.len(a);
            let inst = launch.instances(a);
            match (&bufs.per_array[a], plan.read) {
                (Some(buf), true) => {
                    let bytes = self.read(buf, n * inst * plan.repr.size())?;
                    let vals = plan.repr.decode_all(&bytes);
                    arrays.push(if n == 0 {
                        vec![Vec::new(); inst]
                    } else {
                        vals.chunks(n).map(<[_]>::to_vec).collect()
                    });
                }
                _ => arrays.push(vec![launch.initial[a].clone(); inst]),
            }
        }
        Ok(Memory { arrays })
    }
}

/// Whether array `a` of `launch` is a `global` array.
pub(crate) fn is_global(launch: &Launch, a: usize) -> bool {
    launch.kernel.arrays[a].space == Space::Global
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compiler_errors_carry_the_build_log() {
        let Some(dev) = crate::device_or_skip("compiler_errors_carry_the_build_log") else {
            return;
        };
        let s = Session::new(&dev).unwrap();
        let err = match s.build("__kernel void k(__global int *a) { a[0] = undeclared_name; }") {
            Err(e) => e,
            Ok(_) => panic!("a broken program built"),
        };
        let msg = err.to_string();
        assert!(matches!(err, GpuError::Build { .. }), "{msg}");
        assert!(
            msg.contains("build log") && msg.contains("undeclared_name"),
            "{msg}"
        );
    }
}
