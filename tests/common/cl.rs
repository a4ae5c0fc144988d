//! OpenCL C kernels from a string, run on both engines: the one helper the `.cl` lowering
//! tests share (tests/opencl.rs, tests/cl_*.rs).

use interp::fast::{self, FastOptions};
use interp::launch::{Launch, LaunchOptions};
use interp::Value;
use lang::cl::{ClOptions, SourceMap};
use std::path::Path;
use std::sync::Arc;

/// Lowers `src` (named `test.cl`); the first diagnostic's message on failure.
pub fn compile(src: &str) -> Result<lang::cl::Compiled, String> {
    let mut map = SourceMap::new("test.cl", src.to_string());
    lang::cl::compile(&mut map, &ClOptions::default(), &mut |p: &Path| {
        lang::cl::read_file(p)
    })
    .map_err(|d| d[0].message.clone())
}

/// What the canonical execution found, after checking that the reference semantics and the
/// fast executor agree on it (faults, memory when there is no fault, races, divergence).
pub struct Ran {
    pub launch: Launch,
    pub memory: interp::Memory,
    pub races: Vec<interp::Race>,
    /// The fault's message.
    pub fault: Option<String>,
    /// The fault itself: thread, location, kind.
    pub raw_fault: Option<interp::Fault>,
    pub divergent: bool,
}

impl Ran {
    /// Array `name` (instance 0), each element as ksim prints it.
    pub fn array(&self, name: &str) -> Vec<String> {
        let a = self.launch.kernel.array(name).expect("an array");
        self.memory.arrays[a][0]
            .iter()
            .map(Value::to_string)
            .collect()
    }

    /// Array `name` (instance 0) of an integer type.
    pub fn ints(&self, name: &str) -> Vec<i64> {
        (self.array(name).iter())
            .map(|s| s.parse().expect("an integer element"))
            .collect()
    }

    /// The array of each race, in the order found.
    pub fn race_arrays(&self) -> Vec<String> {
        (self.races.iter())
            .map(|r| self.launch.kernel.arrays[r.array].name.clone())
            .collect()
    }
}

/// Runs `src` with `groups` × `local` work-items (per dimension), buffers as
/// `(name, size, spec)` and scalar arguments as `(name, value)`.
pub fn run(
    src: &str,
    groups: &[usize],
    local: &[usize],
    bufs: &[(&str, usize, &str)],
    args: &[(&str, &str)],
) -> Ran {
    run_with_images(src, groups, local, &[], bufs, args)
}

/// [`run`] with image parameters as `(name, sizes, contents)` (samplers are scalars, by
/// their bits).
pub fn run_with_images(
    src: &str,
    groups: &[usize],
    local: &[usize],
    images: &[(&str, &[usize], &str)],
    bufs: &[(&str, usize, &str)],
    args: &[(&str, &str)],
) -> Ran {
    let c = compile(src).unwrap_or_else(|e| panic!("{e}\n{src}"));
    let mut defines = Vec::new();
    let mut inputs = Vec::new();
    for im in &c.info.images {
        let (_, sizes, spec) = (images.iter())
            .find(|(n, _, _)| *n == im.name)
            .unwrap_or_else(|| panic!("no spec for image {}", im.name));
        defines.extend(im.defines(sizes).expect("sizes"));
        inputs.push((im.array.clone(), spec.to_string()));
    }
    for b in &c.info.buffers {
        let (_, n, spec) = (bufs.iter())
            .find(|(name, _, _)| *name == b.name)
            .unwrap_or_else(|| panic!("no spec for buffer {}", b.name));
        defines.push((b.size_param.clone(), n.to_string()));
        inputs.push((b.array.clone(), spec.to_string()));
    }
    for s in &c.info.scalars {
        let (_, v) = (args.iter())
            .find(|(n, _)| *n == s.name)
            .unwrap_or_else(|| panic!("no value for scalar {}", s.name));
        defines.push((s.param.clone(), v.to_string()));
    }
    let opts = LaunchOptions {
        defines,
        group_dims: groups.to_vec(),
        local_dims: local.to_vec(),
        inputs,
        ..LaunchOptions::default()
    };
    let launch = Launch::new(Arc::new(c.kernel), &opts).expect("launch");
    let reference = interp::exec::run_canonical(&launch);
    let fast = fast::run(
        &launch,
        &FastOptions {
            jobs: 1,
            track_races: true,
        },
    )
    .expect("the fast executor runs it");
    assert_eq!(reference.fault, fast.fault, "engines agree on the fault");
    if reference.fault.is_none() {
        assert_eq!(reference.memory, fast.memory, "engines agree on memory");
    }
    assert_eq!(
        reference.races.len(),
        fast.races.len(),
        "engines agree on races"
    );
    assert_eq!(
        reference.divergences.is_empty(),
        fast.divergences.is_empty(),
        "engines agree on divergence"
    );
    Ran {
        memory: reference.memory,
        races: reference.races,
        fault: reference.fault.as_ref().map(|f| f.to_string()),
        raw_fault: reference.fault,
        divergent: !reference.divergences.is_empty(),
        launch,
    }
}
