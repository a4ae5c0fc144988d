//! Host-level pipelines: a sequence of launches over shared global arrays.
//!
//! A [`Pipeline`] has named *buffers* (host-level global arrays with initial contents)
//! and *stages*; each stage is a full [`Launch`] plus bindings of some of its `global`
//! arrays to buffers. Running a pipeline runs the stages in order: a bound array starts
//! with the buffer's current contents and its final contents become the buffer's new
//! contents; unbound arrays (and all `local` arrays) are private to the stage and start
//! with the launch's own initial contents. This is what a host program with several
//! `clEnqueueNDRangeKernel` calls on shared `cl_mem` objects does, e.g. the 2015 paper's
//! recursive multi-work-group scan (section 4.5, built by [`crate::scan`]).
//!
//! The same description runs on the simulator ([`simulate`], with any engine given as a
//! closure) and on a device ([`run_pipeline`], which keeps the buffers on the device
//! between stages), and the results compare with [`compare_pipeline`].

use crate::compare::{compare_arrays, ArrayMeta, Comparison, DEFAULT_FLOAT_ULPS};
use crate::emit::EmitOptions;
use crate::repr::{Bytes, Repr};
use crate::runtime::{is_global, Device, DeviceInfo, GpuError, Session, Timing};
use interp::{Launch, Memory, Value};
use lang::core::{ArrayId, Ty};
use std::collections::HashMap;
use std::time::Instant;

pub type BufferId = usize;

/// A host-level global array.
#[derive(Clone, Debug)]
pub struct PipelineBuffer {
    pub name: String,
    /// Element type; `T` means the stages' monoid.
    pub elem: Ty,
    pub initial: Vec<Value>,
}

/// One launch of a pipeline.
#[derive(Clone, Debug)]
pub struct Stage {
    pub launch: Launch,
    /// `(kernel array, buffer)`: global arrays of the launch that live in a buffer.
    pub bind: Vec<(ArrayId, BufferId)>,
}

/// A sequence of launches over shared buffers (see the module documentation).
#[derive(Clone, Debug, Default)]
pub struct Pipeline {
    pub name: String,
    pub buffers: Vec<PipelineBuffer>,
    pub stages: Vec<Stage>,
}

/// The buffers' contents after a pipeline ran.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PipelineMemory {
    pub buffers: Vec<Vec<Value>>,
}

impl Pipeline {
    pub fn new(name: &str) -> Self {
        Pipeline {
            name: name.to_string(),
            ..Default::default()
        }
    }

    pub fn add_buffer(&mut self, name: &str, elem: Ty, initial: Vec<Value>) -> BufferId {
        self.buffers.push(PipelineBuffer {
            name: name.to_string(),
            elem,
            initial,
        });
        self.buffers.len() - 1
    }

    pub fn buffer(&self, name: &str) -> Option<BufferId> {
        self.buffers.iter().position(|b| b.name == name)
    }

    /// Appends a stage, binding kernel arrays (by name) to buffers. Each bound array must
    /// be `global`, of the buffer's element type and length.
    pub fn add_stage(&mut self, launch: Launch, bind: &[(&str, BufferId)]) -> Result<(), GpuError> {
        let k = launch.kernel.clone();
        let mut b = Vec::new();
        for &(name, buf) in bind {
            let a = k.array(name).ok_or_else(|| {
                GpuError::Pipeline(format!("kernel `{}` has no array `{name}`", k.name))
            })?;
            let pb = self.buffers.get(buf).ok_or_else(|| {
                GpuError::Pipeline(format!("no buffer #{buf} for `{}`.{name}", k.name))
            })?;
            if !is_global(&launch, a) {
                return Err(GpuError::Pipeline(format!(
                    "`{}`.{name} is a local array: only global arrays can be shared between launches",
                    k.name
                )));
            }
            if k.arrays[a].elem != pb.elem {
                return Err(GpuError::Pipeline(format!(
                    "`{}`.{name} has element type {} but buffer `{}` has {}",
                    k.name,
                    k.arrays[a].elem.name(),
                    pb.name,
                    pb.elem.name()
                )));
            }
            if launch.len(a) != pb.initial.len() {
                return Err(GpuError::Pipeline(format!(
                    "`{}`.{name} has {} elements but buffer `{}` has {}",
                    k.name,
                    launch.len(a),
                    pb.name,
                    pb.initial.len()
                )));
            }
            if b.iter().any(|&(_, x)| x == buf) {
                return Err(GpuError::Pipeline(format!(
                    "buffer `{}` is bound twice in one launch of `{}`",
                    pb.name, k.name
                )));
            }
            b.push((a, buf));
        }
        self.stages.push(Stage { launch, bind: b });
        Ok(())
    }

    /// The buffers' initial contents.
    pub fn initial_memory(&self) -> PipelineMemory {
        PipelineMemory {
            buffers: self.buffers.iter().map(|b| b.initial.clone()).collect(),
        }
    }

    /// The launch of `stage` with its bound arrays' initial contents taken from `mem`.
    pub fn stage_launch(&self, stage: usize, mem: &PipelineMemory) -> Launch {
        let s = &self.stages[stage];
        let mut l = s.launch.clone();
        for &(a, b) in &s.bind {
            l.initial[a] = mem.buffers[b].clone();
        }
        l
    }
}

/// A stage failed in the simulator.
#[derive(Clone, Debug)]
pub struct StageError<E> {
    /// 0-based stage index.
    pub stage: usize,
    pub kernel: String,
    pub error: E,
}

impl<E: std::fmt::Display> std::fmt::Display for StageError<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "launch {} (`{}`) of the pipeline: {}",
            self.stage + 1,
            self.kernel,
            self.error
        )
    }
}

/// Runs the pipeline on the simulator: `engine` runs one launch (the reference semantics
/// or the fast executor) and returns its final memory. Returns the buffers' final
/// contents, or the first stage that failed.
pub fn simulate<E>(
    p: &Pipeline,
    mut engine: impl FnMut(&Launch) -> Result<Memory, E>,
) -> Result<PipelineMemory, StageError<E>> {
    let mut mem = p.initial_memory();
    for (i, s) in p.stages.iter().enumerate() {
        let l = p.stage_launch(i, &mem);
        let out = engine(&l).map_err(|error| StageError {
            stage: i,
            kernel: s.launch.kernel.name.clone(),
            error,
        })?;
        for &(a, b) in &s.bind {
            mem.buffers[b] = out.arrays[a][0].clone();
        }
    }
    Ok(mem)
}

/// The result of [`run_pipeline`].
#[derive(Clone, Debug)]
pub struct PipelineRun {
    pub memory: PipelineMemory,
    /// Per repetition: kernel time summed over the stages, and wall time from writing the
    /// buffers to reading them back.
    pub timings: Vec<Timing>,
    pub device: DeviceInfo,
}

/// Runs the pipeline on `device` `repeat` times (at least once). Buffers stay on the
/// device between stages; every program is built once, before timing starts.
pub fn run_pipeline(p: &Pipeline, device: &Device, repeat: usize) -> Result<PipelineRun, GpuError> {
    run_pipeline_with(p, device, repeat, true)
}

/// [`run_pipeline`], choosing whether the stages' `local` arrays are filled with the
/// default at kernel start (`fill`); a benchmark leaves the fill out of the timed kernels
/// when the simulator showed that the results do not depend on it (see [`crate::bench`]).
pub fn run_pipeline_with(
    p: &Pipeline,
    device: &Device,
    repeat: usize,
    fill: bool,
) -> Result<PipelineRun, GpuError> {
    let session = Session::new(device)?;
    let monoid = p
        .stages
        .first()
        .map(|s| s.launch.monoid)
        .unwrap_or(interp::Monoid::IntAdd);
    let reprs: Vec<Repr> = p
        .buffers
        .iter()
        .map(|b| {
            Repr::of(b.elem, monoid).ok_or(GpuError::Emit(
                crate::emit::EmitError::UnsupportedMonoid(monoid),
            ))
        })
        .collect::<Result<_, _>>()?;
    let dev_bufs = p
        .buffers
        .iter()
        .zip(&reprs)
        .map(|(b, r)| session.buffer(b.initial.len() * r.size()))
        .collect::<Result<Vec<_>, _>>()?;
    let mut compiled = Vec::new();
    let mut stage_bufs = Vec::new();
    for s in &p.stages {
        let opts = EmitOptions {
            local_copy_out: false,
            no_fill: if fill {
                Vec::new()
            } else {
                (0..s.launch.kernel.arrays.len()).collect()
            },
            ..Default::default()
        };
        let c = session.compile(&s.launch, &opts)?;
        let shared: HashMap<usize, _> = s
            .bind
            .iter()
            .map(|&(a, b)| (a, dev_bufs[b].clone()))
            .collect();
        stage_bufs.push(session.buffers_for(&s.launch, &c, &shared)?);
        compiled.push(c);
    }
    let mut timings = Vec::new();
    let mut memory = None;
    for _ in 0..repeat.max(1) {
        let t0 = Instant::now();
        for ((b, r), buf) in p.buffers.iter().zip(&reprs).zip(&dev_bufs) {
            session.write(buf, &r.encode_all(&b.initial))?;
        }
        let mut kernel_ns = 0;
        for (i, s) in p.stages.iter().enumerate() {
            session.write_inputs(&s.launch, &compiled[i], &mut stage_bufs[i])?;
            kernel_ns += session.launch(&s.launch, &compiled[i], &stage_bufs[i])?;
        }
        let mut out = Vec::new();
        for ((b, r), buf) in p.buffers.iter().zip(&reprs).zip(&dev_bufs) {
            out.push(r.decode_all(&session.read(buf, b.initial.len() * r.size())?));
        }
        timings.push(Timing {
            kernel_ns,
            total_ns: t0.elapsed().as_nanos() as u64,
        });
        memory = Some(PipelineMemory { buffers: out });
    }
    Ok(PipelineRun {
        memory: memory.unwrap(),
        timings,
        device: device.info.clone(),
    })
}

/// Compares two pipeline results buffer by buffer (as [`crate::compare`] does arrays).
pub fn compare_pipeline(
    sim: &PipelineMemory,
    dev: &PipelineMemory,
    p: &Pipeline,
    limit: usize,
) -> Comparison {
    let metas: Vec<ArrayMeta> = p
        .buffers
        .iter()
        .map(|b| ArrayMeta {
            name: b.name.clone(),
            local: false,
            dims: vec![b.initial.len()],
        })
        .collect();
    let s: Vec<Vec<Vec<Value>>> = sim.buffers.iter().map(|b| vec![b.clone()]).collect();
    let d: Vec<Vec<Vec<Value>>> = dev.buffers.iter().map(|b| vec![b.clone()]).collect();
    compare_arrays(&metas, &s, &d, limit, DEFAULT_FLOAT_ULPS)
}
