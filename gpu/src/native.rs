//! The user's own OpenCL C program on the device: the `.cl` source as written, built with
//! the same `-D`/`-I` options the simulator's front end used, its arguments bound from
//! the same [`Launch`] the simulator ran (buffers from the launch's initial contents,
//! `__local` pointers sized as the launch sizes them, scalars from its parameters). What
//! the device computes from the code the user ships is compared with the simulation of
//! that code, instead of ksim's regenerated OpenCL C ([`crate::emit`]).

use crate::compare::{compare_arrays, ArrayMeta, Comparison};
use crate::repr::{Bytes, Repr};
use crate::runtime::{cl_err, Device, GpuError, Session};
use interp::{Launch, Memory, Value};
use lang::cl::ast::{AddrSpace, Base};
use lang::cl::lower::KernelInfo;
use lang::cl::simfile::ArgInfo;
use opencl3::kernel::Kernel as ClKernel;
use opencl3::memory::ClMem;
use opencl3::types::cl_mem;

/// One kernel argument of the program, bound from the launch.
#[derive(Clone, Debug, PartialEq)]
pub enum NativeArg {
    /// A `__global`/`__constant` buffer holding kernel array `array`.
    Buffer { array: usize },
    /// A `__local` pointer to `bytes` of local memory, kernel array `array`.
    Local { array: usize, bytes: usize },
    /// A scalar's bytes, as the device takes them.
    Scalar { bytes: Vec<u8> },
}

/// A program as the user wrote it, with what the device needs to run one kernel of it.
#[derive(Clone, Debug, PartialEq)]
pub struct NativeProgram {
    pub source: String,
    /// Build options: `-D NAME[=VALUE]` and `-I DIR`, as given to ksim.
    pub options: Vec<String>,
    pub kernel: String,
    pub args: Vec<NativeArg>,
}

/// Binds every parameter of the kernel (`params`, in order, and the lowering's `info`)
/// from `launch`. A scalar type the device would lay out in a way ksim does not know
/// (anything but `int`, `uint`, `float`, `size_t`) is refused with its name.
pub fn bind(
    launch: &Launch,
    params: &[ArgInfo],
    info: &KernelInfo,
    size_t_bytes: usize,
) -> Result<Vec<NativeArg>, String> {
    params
        .iter()
        .map(|p| {
            if let Base::Struct(tag) = &p.base {
                // The simulator keeps a struct's members apart (one scalar or buffer per
                // member, lang/src/cl/structs.rs); the device wants the C layout.
                return Err(format!(
                    "`{}` is a `struct {tag}`{}: passing structs to the device is not supported yet",
                    p.name,
                    if p.pointer { " buffer" } else { "" }
                ));
            }
            if let Base::Opaque(t) = &p.base {
                if t.starts_with("image") || t == "sampler_t" {
                    // The simulator's image is a texel array (lang/src/cl/images.rs); the
                    // device would want an image object with a format and a sampler.
                    return Err(format!(
                        "`{}` is an `{t}`: passing images and samplers to the device is not \
                         supported yet",
                        p.name
                    ));
                }
            }
            if p.pointer {
                let b = info
                    .buffers
                    .iter()
                    .find(|b| b.name == p.name)
                    .ok_or_else(|| format!("`{}` is no buffer of the kernel", p.name))?;
                let array = launch
                    .kernel
                    .array(&b.array)
                    .ok_or_else(|| format!("buffer `{}` has no array", p.name))?;
                return Ok(if p.space == AddrSpace::Local {
                    NativeArg::Local {
                        array,
                        bytes: launch.len(array) * repr(launch, array).size(),
                    }
                } else {
                    NativeArg::Buffer { array }
                });
            }
            if let Base::Vector(_, n) = &p.base {
                return vector_arg(launch, &p.name, *n, info);
            }
            let s = info
                .scalars
                .iter()
                .find(|s| s.name == p.name)
                .ok_or_else(|| format!("`{}` is no scalar of the kernel", p.name))?;
            let value = launch
                .kernel
                .param(&s.param)
                .map(|i| &launch.params[i])
                .ok_or_else(|| format!("scalar `{}` is not bound", p.name))?;
            let bytes = match (&p.base, value) {
                (Base::Int { .. }, Value::Int(v)) => v.to_le_bytes().to_vec(),
                (Base::Int { .. }, Value::Uint(v)) => v.to_le_bytes().to_vec(),
                (Base::Float, Value::Float(bits)) => bits.to_le_bytes().to_vec(),
                (Base::Size { .. }, v) => {
                    let n = v.as_i64().unwrap_or(0);
                    n.to_le_bytes()[..size_t_bytes].to_vec()
                }
                (b, _) => {
                    return Err(format!(
                        "scalar `{}` of type `{}` cannot be passed to the device",
                        p.name,
                        b.name()
                    ))
                }
            };
            Ok(NativeArg::Scalar { bytes })
        })
        .collect()
}

/// A by-value vector parameter: the lowering made it one scalar per component (`mask.x`,
/// ..., in order); the device takes their bytes in order, a 3-vector padded to 4.
fn vector_arg(launch: &Launch, name: &str, n: u8, info: &KernelInfo) -> Result<NativeArg, String> {
    let prefix = format!("{name}.");
    let mut bytes = Vec::new();
    for s in info.scalars.iter().filter(|s| s.name.starts_with(&prefix)) {
        let value = launch
            .kernel
            .param(&s.param)
            .map(|i| &launch.params[i])
            .ok_or_else(|| format!("scalar `{}` is not bound", s.name))?;
        bytes.extend(match value {
            Value::Int(v) => v.to_le_bytes(),
            Value::Uint(v) => v.to_le_bytes(),
            Value::Float(bits) => bits.to_le_bytes(),
            _ => return Err(format!("vector `{name}` cannot be passed to the device")),
        });
    }
    if bytes.len() != 4 * n as usize {
        return Err(format!("vector `{name}` has no component parameters"));
    }
    if n == 3 {
        bytes.extend([0; 4]);
    }
    Ok(NativeArg::Scalar { bytes })
}

/// Why running the program as written cannot show what the simulation computed, if it
/// cannot: it has no `__global` buffer to read back, or the launch gives a `__local`
/// pointer contents (ksim's launch may; a device's local memory starts undefined).
pub fn unfaithful(launch: &Launch, args: &[NativeArg]) -> Option<String> {
    for arg in args {
        if let NativeArg::Local { array, .. } = arg {
            let a = &launch.kernel.arrays[*array];
            let zero = Value::default_of(a.elem, launch.monoid);
            if launch.initial[*array].iter().any(|v| *v != zero) {
                return Some(format!(
                    "the launch gives the `__local` buffer `{}` contents, which a device cannot",
                    a.name
                ));
            }
        }
    }
    if !args.iter().any(|a| matches!(a, NativeArg::Buffer { .. })) {
        return Some("the kernel has no `__global` buffer to read back".into());
    }
    None
}

fn repr(launch: &Launch, a: usize) -> Repr {
    Repr::of(launch.kernel.arrays[a].elem, launch.monoid).unwrap_or(Repr::I32)
}

/// The final contents of the program's buffers on the device: `(array, values)`.
#[derive(Clone, Debug, PartialEq)]
pub struct NativeRun {
    pub buffers: Vec<(usize, Vec<Value>)>,
}

/// The device's `size_t` in bytes (its address width).
pub fn size_t_bytes(device: &Device) -> usize {
    let bits = opencl3::device::Device::new(device.id)
        .address_bits()
        .unwrap_or(64);
    (bits as usize / 8).clamp(4, 8)
}

/// Builds `program` with its options and runs its kernel once over `launch`'s NDRange.
pub fn run(
    launch: &Launch,
    program: &NativeProgram,
    device: &Device,
) -> Result<NativeRun, GpuError> {
    let session = Session::new(device)?;
    let built = session.build_with(&program.source, &program.options)?;
    let kernel = ClKernel::create(&built, &program.kernel).map_err(cl_err("clCreateKernel"))?;
    let mut buffers = Vec::new();
    for (i, arg) in program.args.iter().enumerate() {
        let i = i as u32;
        match arg {
            NativeArg::Buffer { array } => {
                let bytes = repr(launch, *array).encode_all(&launch.initial[*array]);
                let buf = session.buffer(bytes.len())?;
                session.write(&buf, &bytes)?;
                let mem: cl_mem = buf.get();
                // SAFETY: argument `i` is a buffer and `mem` a live buffer.
                unsafe { kernel.set_arg(i, &mem) }.map_err(cl_err("clSetKernelArg"))?;
                buffers.push((*array, buf, bytes.len()));
            }
            // SAFETY: argument `i` is a `__local` pointer.
            NativeArg::Local { bytes, .. } => unsafe { kernel.set_arg_local_buffer(i, *bytes) }
                .map_err(cl_err("clSetKernelArg"))?,
            NativeArg::Scalar { bytes } => {
                // SAFETY: argument `i` is a scalar of `bytes.len()` bytes, which `bytes` holds.
                unsafe {
                    opencl3::kernel::set_kernel_arg(
                        kernel.get(),
                        i,
                        bytes.len(),
                        bytes.as_ptr().cast(),
                    )
                }
                .map_err(|c| cl_err("clSetKernelArg")(c.into()))?
            }
        }
    }
    let local = launch.local_dims;
    let global: [usize; 3] = std::array::from_fn(|d| launch.group_dims[d] * local[d]);
    // SAFETY: `work_dim` <= 3 entries of arrays that outlive the call.
    let event = unsafe {
        session.queue.enqueue_nd_range_kernel(
            kernel.get(),
            launch.work_dim as u32,
            std::ptr::null(),
            global.as_ptr(),
            local.as_ptr(),
            &[],
        )
    }
    .map_err(cl_err("clEnqueueNDRangeKernel"))?;
    event.wait().map_err(cl_err("clWaitForEvents"))?;
    let mut out = Vec::new();
    for (array, buf, len) in buffers {
        let bytes = session.read(&buf, len)?;
        out.push((array, repr(launch, array).decode_all(&bytes)));
    }
    Ok(NativeRun { buffers: out })
}

/// Compares each of the program's buffers with the simulator's final contents of its
/// array (local memory is not observable on the device, so only buffers count).
pub fn compare(sim: &Memory, run: &NativeRun, launch: &Launch, limit: usize) -> Comparison {
    let metas: Vec<ArrayMeta> = run
        .buffers
        .iter()
        .map(|(a, _)| ArrayMeta {
            name: launch.kernel.arrays[*a].name.clone(),
            local: false,
            dims: launch.dims[*a].clone(),
        })
        .collect();
    let simulated: Vec<Vec<Vec<Value>>> = run
        .buffers
        .iter()
        .map(|(a, _)| vec![sim.arrays[*a][0].clone()])
        .collect();
    let device: Vec<Vec<Vec<Value>>> = run.buffers.iter().map(|(_, v)| vec![v.clone()]).collect();
    compare_arrays(
        &metas,
        &simulated,
        &device,
        limit,
        crate::compare::DEFAULT_FLOAT_ULPS,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use interp::launch::LaunchOptions;
    use std::sync::Arc;

    const SRC: &str = "#define STEP 1\n\
        __kernel void k(__global int *a, uint n, __local float *tmp, float f) {\n\
            tmp[get_local_id(0)] = f;\n\
            a[get_global_id(0)] += n * STEP;\n\
        }\n";

    /// The kernel of [`SRC`] launched as `--global 4 --local 4 --input a=iota:4 --arg n=7
    /// --input tmp=zeros:4 --arg f=1.5`.
    fn launch() -> (Launch, Vec<ArgInfo>, KernelInfo) {
        let mut map = lang::cl::SourceMap::new("t.cl", SRC.to_string());
        let o = lang::cl::ClOptions::default();
        let unit =
            lang::cl::parse_unit(&mut map, &o, &mut |_| Err("no includes".into())).expect("parses");
        let c = lang::cl::compile_unit(&unit, &o).expect("compiles");
        let params = lang::cl::simfile::kernel_args(&unit, "k").expect("kernel k");
        let size = |name: &str| {
            let b = c.info.buffers.iter().find(|b| b.name == name).unwrap();
            (b.size_param.clone(), "4".to_string())
        };
        let scalar = |name: &str, v: &str| {
            let s = c.info.scalars.iter().find(|s| s.name == name).unwrap();
            (s.param.clone(), v.to_string())
        };
        let opts = LaunchOptions {
            defines: vec![size("a"), size("tmp"), scalar("n", "7"), scalar("f", "1.5")],
            local_size: Some(4),
            groups: Some(1),
            inputs: vec![("a".into(), "iota".into())],
            ..Default::default()
        };
        let launch = Launch::new(Arc::new(c.kernel), &opts).expect("a launch");
        (launch, params, c.info)
    }

    fn program() -> (Launch, NativeProgram) {
        let (launch, params, info) = launch();
        let args = bind(&launch, &params, &info, 8).expect("binds");
        let p = NativeProgram {
            source: SRC.into(),
            options: vec!["-D STEP=1".into()],
            kernel: "k".into(),
            args,
        };
        (launch, p)
    }

    #[test]
    fn arguments_bind_in_parameter_order_with_the_device_layout() {
        let (launch, p) = program();
        let a = launch.kernel.array("a").unwrap();
        assert_eq!(
            p.args,
            [
                NativeArg::Buffer { array: a },
                NativeArg::Scalar {
                    bytes: 7u32.to_le_bytes().to_vec()
                },
                NativeArg::Local {
                    array: launch.kernel.array("tmp").unwrap(),
                    bytes: 16
                },
                NativeArg::Scalar {
                    bytes: 1.5f32.to_le_bytes().to_vec()
                },
            ]
        );
    }

    /// The simulator's final memory of [`launch`], written by hand: `a` is iota + 7.
    fn simulated(launch: &Launch) -> Memory {
        let a = launch.kernel.array("a").unwrap();
        let mut arrays: Vec<Vec<Vec<Value>>> =
            launch.initial.iter().map(|v| vec![v.clone()]).collect();
        arrays[a][0] = (7..11).map(Value::Int).collect();
        Memory { arrays }
    }

    #[test]
    fn local_contents_and_no_buffer_are_unfaithful() {
        let (mut launch, p) = program();
        assert_eq!(unfaithful(&launch, &p.args), None);
        let only_local: Vec<NativeArg> = p
            .args
            .iter()
            .filter(|a| !matches!(a, NativeArg::Buffer { .. }))
            .cloned()
            .collect();
        assert!(unfaithful(&launch, &only_local)
            .unwrap()
            .contains("no `__global` buffer"));
        let tmp = launch.kernel.array("tmp").unwrap();
        launch.initial[tmp][2] = Value::float(1.0);
        assert!(unfaithful(&launch, &p.args)
            .unwrap()
            .contains("`__local` buffer `tmp` contents"));
    }

    #[test]
    fn each_differing_element_is_reported() {
        let (launch, _) = program();
        let a = launch.kernel.array("a").unwrap();
        let device = NativeRun {
            buffers: vec![(a, (7..11).map(Value::Int).collect())],
        };
        let sim = simulated(&launch);
        assert!(compare(&sim, &device, &launch, 10).is_match());
        let mut corrupted = sim.clone();
        corrupted.arrays[a][0][1] = Value::Int(0);
        corrupted.arrays[a][0][3] = Value::Int(-5);
        let c = compare(&corrupted, &device, &launch, 10);
        assert_eq!((c.compared, c.mismatch_count), (4, 2));
        let shown: Vec<String> = c.mismatches.iter().map(|m| m.to_string()).collect();
        assert_eq!(
            shown,
            [
                "a[1]: simulated 0, device 8",
                "a[3]: simulated -5, device 10"
            ]
        );
    }

    #[test]
    fn the_program_as_written_runs_on_the_device() {
        let Some(device) = crate::device_or_skip("the program as written on the device") else {
            return;
        };
        let (launch, p) = program();
        let run = run(&launch, &p, &device).expect("runs");
        assert!(compare(&simulated(&launch), &run, &launch, 10).is_match());
        // The build options reach the device's compiler: STEP=2 doubles the increment.
        let p2 = NativeProgram {
            source: p.source.replace("#define STEP 1\n", ""),
            options: vec!["-D STEP=2".into()],
            ..p
        };
        let run = super::run(&launch, &p2, &device).expect("runs");
        let c = compare(&simulated(&launch), &run, &launch, 10);
        assert_eq!(c.mismatch_count, 4, "{c}");
    }
}
