//! A launch: a kernel with its parameters bound (`-D`), its geometry (`--groups`,
//! `--local-size`), its monoid and its initial arrays (`--input`). Every engine starts from
//! a [`Launch`] and ends in a [`Memory`], so their results compare directly.

use crate::eval::{lit, log2, min_max};
use crate::monoid::{
    parse_double, parse_float, parse_in_range, parse_int, parse_uint, Interval, Monoid,
};
use crate::value::{OpError, Value};
use lang::ast::{BinOp, Space, UnOp};
use lang::core::{ArrayId, Builtin, DimQuery, Expr, ExprKind, Kernel, Ty};
use rand::{RngExt, SeedableRng};
use serde::Serialize;
use std::sync::Arc;

/// The largest array (in elements, all instances together) and the most threads a launch
/// may have: 2^28, so that every element and thread has a 32-bit index.
pub const MAX_ELEMENTS: usize = 1 << 28;

/// The memory a launch may need, by [`memory_estimate`]: 2 GiB. A larger launch is refused
/// before anything is allocated (a usage error, exit 2), with the estimate and this limit,
/// rather than aborting in the middle of a run when an allocation fails.
pub const MEMORY_LIMIT: u64 = 2 << 30;

/// Bytes the simulator keeps per array element (per instance): the initial contents and
/// the final memory as [`Value`]s (24 bytes each), the fast executor's 8-byte cell and its
/// race shadows, and the printed result. Measured: `ksim run` of one 2^24-element array
/// peaks at 104 bytes per element, `ksim races` at 63.
pub const BYTES_PER_ELEMENT: u64 = 112;

/// Bytes the simulator keeps per thread, besides its variables: its continuation and the
/// executor's per-thread bookkeeping.
pub const BYTES_PER_THREAD: u64 = 64;

/// Bytes per thread-local variable and thread (one [`Value`]).
pub const BYTES_PER_VARIABLE: u64 = 24;

/// The memory a launch needs at least, in bytes: `elements` array elements (all instances
/// of all arrays) at [`BYTES_PER_ELEMENT`], and `threads` threads at [`BYTES_PER_THREAD`]
/// plus [`BYTES_PER_VARIABLE`] per variable. An estimate from above: Kogge-Stone at
/// n = 2^22 (8.4 M elements, 4.2 M threads) peaks at 0.79 GB in `ksim races`; the
/// estimate is 1.4 GB.
pub fn memory_estimate(elements: u64, threads: u64, vars: u64) -> u64 {
    let per_thread = BYTES_PER_THREAD.saturating_add(vars.saturating_mul(BYTES_PER_VARIABLE));
    elements
        .saturating_mul(BYTES_PER_ELEMENT)
        .saturating_add(threads.saturating_mul(per_thread))
}

/// Bytes as a short human-readable quantity (`6.0 GiB`, `512.0 MiB`).
pub fn bytes_text(b: u64) -> String {
    const GIB: f64 = (1u64 << 30) as f64;
    const MIB: f64 = (1u64 << 20) as f64;
    let b = b as f64;
    if b >= GIB {
        format!("{:.1} GiB", b / GIB)
    } else {
        format!("{:.1} MiB", b / MIB)
    }
}

/// The size limit of an `@FILE` input for an array of `len` elements: 64 bytes per element,
/// at least 1 MiB. Generous for any element (an interval `[123456,123457]` or a number
/// takes under 20), and it stops `/dev/zero` or a file meant for another array before it
/// is read into memory.
pub fn input_file_limit(len: usize) -> u64 {
    (len as u64).saturating_mul(64).max(1 << 20)
}

/// What the user asked for on the command line.
#[derive(Clone, Debug)]
pub struct LaunchOptions {
    /// `-D NAME=VALUE`: size and scalar parameters.
    pub defines: Vec<(String, String)>,
    /// Number of work-groups of a one-dimensional launch (`--groups 4`).
    pub groups: Option<usize>,
    /// Work-group size of a one-dimensional launch (`--local-size 64`).
    pub local_size: Option<usize>,
    /// Work-groups per dimension (`--groups 2,2`), 1 to 3 entries; when not empty it
    /// replaces `groups`.
    pub group_dims: Vec<usize>,
    /// Work-group size per dimension (`--local-size 16,2`); when not empty it replaces
    /// `local_size`.
    pub local_dims: Vec<usize>,
    pub monoid: Monoid,
    /// `--input ARRAY=SPEC`.
    pub inputs: Vec<(String, String)>,
    /// The step bound after which an execution is reported as non-terminating; `None`
    /// for the default, [`default_max_steps`].
    pub max_steps: Option<u64>,
    /// What memory nothing wrote holds (`--uninit`, [`crate::undef`]).
    pub uninit: crate::undef::Uninit,
    /// Go on past the faults that allow it ([`crate::fault::FaultKind::continues`]),
    /// reporting each; `false` stops at the first fault (`--stop-at-first-fault`).
    pub continue_after_faults: bool,
}

impl Default for LaunchOptions {
    fn default() -> Self {
        LaunchOptions {
            defines: Vec::new(),
            groups: None,
            local_size: None,
            group_dims: Vec::new(),
            local_dims: Vec::new(),
            monoid: Monoid::IntAdd,
            inputs: Vec::new(),
            max_steps: None,
            uninit: Default::default(),
            continue_after_faults: false,
        }
    }
}

/// Default `--max-steps`: 10^7 plus 1000 per thread. Generous for every example at
/// n = 2^20 (Kogge-Stone takes about 100 steps per thread), yet an infinite loop is
/// reported in seconds.
pub fn default_max_steps(threads: usize) -> u64 {
    10_000_000 + 1000 * threads as u64
}

/// A launch error: bad `-D`, geometry or input (a usage error, exit code 2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaunchError(pub String);

impl std::fmt::Display for LaunchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for LaunchError {}

/// A fully bound launch.
#[derive(Clone, Debug)]
pub struct Launch {
    pub kernel: Arc<Kernel>,
    /// One value per kernel parameter.
    pub params: Vec<Value>,
    /// Work-groups in the launch (the product of `group_dims`).
    pub groups: usize,
    /// Threads per work-group (the product of `local_dims`).
    pub local_size: usize,
    /// Work-groups per dimension; unused dimensions are 1.
    pub group_dims: [usize; 3],
    /// Work-group size per dimension; unused dimensions are 1. A thread's flat local id
    /// (`tid`) is `x + sx * (y + sy * z)`, dimension 0 fastest, as in OpenCL.
    pub local_dims: [usize; 3],
    /// Dimensions of the NDRange (1 to 3): `get_work_dim()`.
    pub work_dim: usize,
    pub monoid: Monoid,
    /// Shape of each array (one entry per dimension).
    pub dims: Vec<Vec<usize>>,
    /// Initial contents of each array, row-major; every work-group's copy of a `local`
    /// array starts with these contents.
    pub initial: Vec<Vec<Value>>,
    pub max_steps: u64,
    /// Which conflicting pairs are errors ([`crate::policy`]); `strict` unless the caller
    /// sets another after building the launch.
    pub race_policy: crate::policy::RacePolicy,
    /// What one thread step executes ([`crate::atomicity`]); `statement` unless the caller
    /// sets another with [`Launch::set_atomicity`].
    pub atomicity: crate::atomicity::Atomicity,
    /// Lanes per warp when warps run in SIMT lock-step ([`crate::warp`], `--warp-size`);
    /// `None`: threads interleave one by one, as in the paper.
    pub warp_size: Option<usize>,
    /// What memory nothing wrote holds ([`crate::undef`], `--uninit`).
    pub uninit: crate::undef::Uninit,
    /// Per array: `--input` gave its contents (it starts defined under `--uninit check`).
    pub given: Vec<bool>,
    /// Executions go on past the faults that allow it, reporting each
    /// ([`crate::fault::FaultKind::continues`]); `false`: the first fault ends them.
    /// Exhaustive exploration always stops an execution at its first fault.
    pub continue_after_faults: bool,
}

/// The array store at the end of an execution: `arrays[a][instance][element]`, where a
/// `local` array has one instance per work-group and a `global` array one.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Memory {
    pub arrays: Vec<Vec<Vec<Value>>>,
}

impl Launch {
    pub fn new(kernel: Arc<Kernel>, opts: &LaunchOptions) -> Result<Launch, LaunchError> {
        let params = bind_params(&kernel, &opts.defines)?;
        let eval_size =
            |what: &str, e: &Expr, local: Option<usize>| -> Result<usize, LaunchError> {
                let v = size_eval(e, &params, local).map_err(|why| {
                    let text = lang::print_core::expr(&kernel, e);
                    let text = match e.kind {
                        ExprKind::Binary(..) | ExprKind::Cond(..) => &text[1..text.len() - 1],
                        _ => &text,
                    };
                    LaunchError(format!("{what}, `{text}`, cannot be evaluated: {why}"))
                })?;
                let v = v.as_i64().unwrap_or(-1);
                usize::try_from(v)
                    .map_err(|_| LaunchError(format!("{what} evaluates to {v}, which is negative")))
            };
        let declared = |what: &str, first: &Option<Expr>, more: &[Expr]| {
            let Some(first) = first else {
                return Ok(None);
            };
            std::iter::once(first)
                .chain(more)
                .enumerate()
                .map(|(d, e)| {
                    let what = if more.is_empty() {
                        format!("the declared {what}")
                    } else {
                        format!("dimension {d} of the declared {what}")
                    };
                    eval_size(&what, e, None)
                })
                .collect::<Result<Vec<usize>, _>>()
                .map(Some)
        };
        let group_shape = if !opts.group_dims.is_empty() {
            opts.group_dims.clone()
        } else if let Some(g) = opts.groups {
            vec![g]
        } else {
            declared("number of groups", &kernel.groups, &kernel.groups_more)?
                .unwrap_or_else(|| vec![1])
        };
        let local_shape = if !opts.local_dims.is_empty() {
            opts.local_dims.clone()
        } else if let Some(l) = opts.local_size {
            vec![l]
        } else {
            declared("local size", &kernel.local_size, &kernel.local_size_more)?.ok_or_else(
                || {
                    LaunchError(format!(
                        "kernel `{}` declares no work-group size: pass --local-size or add \
                         `launch(local_size = ...)` to the kernel",
                        kernel.name
                    ))
                },
            )?
        };
        for (what, shape) in [("groups", &group_shape), ("local size", &local_shape)] {
            if shape.len() > 3 {
                return Err(LaunchError(format!(
                    "the {what} has {} dimensions; a launch has at most 3",
                    shape.len()
                )));
            }
        }
        let work_dim = group_shape.len().max(local_shape.len());
        let mut group_dims = [1usize; 3];
        group_dims[..group_shape.len()].copy_from_slice(&group_shape);
        let mut local_dims = [1usize; 3];
        local_dims[..local_shape.len()].copy_from_slice(&local_shape);
        let product = |d: [usize; 3]| {
            d.iter()
                .try_fold(1usize, |a, &x| a.checked_mul(x))
                .unwrap_or(usize::MAX)
        };
        let (groups, local_size) = (product(group_dims), product(local_dims));
        if groups == 0 || local_size == 0 {
            return Err(LaunchError(format!(
                "a launch needs at least one group and one thread per group (got {groups} \
                 groups of {local_size})"
            )));
        }
        if groups.saturating_mul(local_size) > MAX_ELEMENTS {
            return Err(LaunchError(format!(
                "{groups} groups of {local_size} threads is more than ksim supports ({MAX_ELEMENTS} threads)"
            )));
        }
        let mut dims = Vec::new();
        let mut elements = 0u64;
        for a in &kernel.arrays {
            let mut shape = Vec::new();
            for (k, d) in a.dims.iter().enumerate() {
                shape.push(eval_size(
                    &format!("dimension {} of array `{}`", k + 1, a.name),
                    d,
                    Some(local_size),
                )?);
            }
            let len = shape.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d));
            let copies = if a.space == Space::Local { groups } else { 1 };
            let all = len.and_then(|l| l.checked_mul(copies));
            match all {
                Some(n) if n <= MAX_ELEMENTS => elements += n as u64,
                _ => {
                    return Err(LaunchError(format!(
                        "array `{}` of size {shape:?}{} is larger than ksim supports ({MAX_ELEMENTS} elements)",
                        a.name,
                        if copies > 1 {
                            format!(" in each of {copies} groups")
                        } else {
                            String::new()
                        }
                    )))
                }
            }
            dims.push(shape);
        }
        let threads = (groups * local_size) as u64;
        let need = memory_estimate(elements, threads, kernel.vars.len() as u64);
        if need > MEMORY_LIMIT {
            return Err(LaunchError(format!(
                "this launch needs about {} of memory ({elements} array elements x \
                 {BYTES_PER_ELEMENT} bytes + {threads} threads x {} bytes), more than \
                 ksim's limit of {}: use smaller sizes",
                bytes_text(need),
                BYTES_PER_THREAD + kernel.vars.len() as u64 * BYTES_PER_VARIABLE,
                bytes_text(MEMORY_LIMIT)
            )));
        }
        for (k, (name, _)) in opts.inputs.iter().enumerate() {
            if opts.inputs[..k].iter().any(|(n, _)| n == name) {
                return Err(LaunchError(format!(
                    "--input {name} is given more than once"
                )));
            }
        }
        let mut launch = Launch {
            kernel: kernel.clone(),
            params,
            groups,
            local_size,
            group_dims,
            local_dims,
            work_dim,
            monoid: opts.monoid,
            initial: Vec::new(),
            dims,
            max_steps: opts
                .max_steps
                .unwrap_or_else(|| default_max_steps(groups * local_size)),
            race_policy: Default::default(),
            atomicity: Default::default(),
            warp_size: None,
            uninit: opts.uninit,
            continue_after_faults: opts.continue_after_faults,
            given: vec![false; kernel.arrays.len()],
        };
        launch.initial = (0..kernel.arrays.len())
            .map(|a| vec![Value::default_of(kernel.arrays[a].elem, opts.monoid); launch.len(a)])
            .collect();
        for (name, spec) in &opts.inputs {
            let a = kernel.array(name).ok_or_else(|| {
                LaunchError(format!(
                    "--input {name}=...: kernel `{}` has no array `{name}`",
                    kernel.name
                ))
            })?;
            launch.initial[a] =
                parse_input(spec, launch.len(a), kernel.arrays[a].elem, opts.monoid)
                    .map_err(|e| LaunchError(format!("--input {name}={spec}: {e}")))?;
            launch.given[a] = true;
        }
        Ok(launch)
    }

    /// Whether array `a` is defined before the first step ([`crate::undef`]): always under
    /// `--uninit zero`; under `check` when `--input` gave its contents or it is a
    /// `__constant` table.
    pub fn starts_defined(&self, a: ArrayId) -> bool {
        self.uninit == crate::undef::Uninit::Zero
            || self.given[a]
            || crate::undef::is_table(&self.kernel.arrays[a].name)
    }

    /// Whether uninitialised reads are faults (`--uninit check`).
    pub fn checks_uninit(&self) -> bool {
        self.uninit == crate::undef::Uninit::Check
    }

    /// Total number of threads.
    pub fn threads(&self) -> usize {
        self.groups * self.local_size
    }

    /// Number of elements of one instance of array `a`.
    pub fn len(&self, a: ArrayId) -> usize {
        self.dims[a].iter().product()
    }

    /// Number of instances of array `a`: one per group for `local`, one for `global`.
    pub fn instances(&self, a: ArrayId) -> usize {
        match self.kernel.arrays[a].space {
            Space::Local => self.groups,
            Space::Global => 1,
        }
    }

    /// The instance of array `a` that a thread of `group` sees.
    pub fn instance_of(&self, a: ArrayId, group: usize) -> usize {
        match self.kernel.arrays[a].space {
            Space::Local => group,
            Space::Global => 0,
        }
    }

    /// The array store before the first step.
    pub fn initial_memory(&self) -> Memory {
        Memory {
            arrays: (0..self.initial.len())
                .map(|a| vec![self.initial[a].clone(); self.instances(a)])
                .collect(),
        }
    }

    /// The value of a builtin for a thread (flat group id and flat local id).
    pub fn builtin(&self, b: Builtin, group: usize, local: usize) -> Value {
        let d = |dim: u8| dim as usize;
        Value::Int(match b {
            Builtin::LocalId => local,
            Builtin::GlobalId => group * self.local_size + local,
            Builtin::GroupId => group,
            Builtin::LocalSize => self.local_size,
            Builtin::NumGroups => self.groups,
            Builtin::WorkDim => self.work_dim,
            Builtin::Dim(q, dim) => {
                let l = coords(local, self.local_dims)[d(dim)];
                let g = coords(group, self.group_dims)[d(dim)];
                let (sl, sg) = (self.local_dims[d(dim)], self.group_dims[d(dim)]);
                match q {
                    DimQuery::LocalId => l,
                    DimQuery::GlobalId => g * sl + l,
                    DimQuery::GroupId => g,
                    DimQuery::LocalSize => sl,
                    DimQuery::NumGroups => sg,
                    DimQuery::GlobalSize => sg * sl,
                    DimQuery::GlobalOffset => 0,
                }
            }
        } as i32)
    }
}

/// The coordinates of flat index `i` in a grid of `dims`, dimension 0 fastest.
pub fn coords(i: usize, dims: [usize; 3]) -> [usize; 3] {
    [
        i % dims[0],
        (i / dims[0]) % dims[1],
        i / (dims[0] * dims[1]),
    ]
}

/// Binds every kernel parameter from `-D`; every one must be given exactly once.
fn bind_params(kernel: &Kernel, defines: &[(String, String)]) -> Result<Vec<Value>, LaunchError> {
    for (name, _) in defines {
        if kernel.param(name).is_none() {
            let known: Vec<_> = kernel.params.iter().map(|p| p.name.as_str()).collect();
            return Err(LaunchError(format!(
                "-D {name}=...: kernel `{}` has no parameter `{name}` (its parameters: {})",
                kernel.name,
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            )));
        }
    }
    kernel
        .params
        .iter()
        .map(|p| {
            let given: Vec<_> = defines.iter().filter(|(n, _)| *n == p.name).collect();
            match given.as_slice() {
                [] => Err(LaunchError(format!(
                    "parameter `{}` is not bound: pass -D {}=VALUE",
                    p.name, p.name
                ))),
                [(_, text)] => parse_scalar(text, p.ty)
                    .map_err(|e| LaunchError(format!("-D {}={text}: {e}", p.name))),
                _ => Err(LaunchError(format!(
                    "-D {} is given more than once",
                    p.name
                ))),
            }
        })
        .collect()
}

/// Why a launch cannot give a pointer a value: a pointer names one of the kernel's arrays,
/// which no number does.
const POINTER_INPUT: &str =
    "a pointer cannot be given a value by the launch: pointers start null (`zeros`)";

fn parse_scalar(text: &str, ty: Ty) -> Result<Value, String> {
    let t = text.trim();
    match ty {
        Ty::Int => parse_int(t).map(Value::Int),
        Ty::Uint => parse_uint(t).map(Value::Uint),
        Ty::Float => parse_float(t).map(Value::float),
        Ty::Bool => t
            .parse::<bool>()
            .map(Value::Bool)
            .map_err(|_| format!("`{t}` is not a bool (true or false)")),
        Ty::Generic => Err("generic parameters cannot be bound with -D".into()),
        Ty::Ptr => Err(POINTER_INPUT.into()),
        Ty::Double => parse_double(t).map(Value::double),
        Ty::Char => parse_in_range(t, "a char", "-128 to 127").map(Value::Char),
        Ty::Uchar => parse_in_range(t, "a uchar", "0 to 255").map(Value::Uchar),
        Ty::Short => parse_in_range(t, "a short", "-32768 to 32767").map(Value::Short),
        Ty::Ushort => parse_in_range(t, "a ushort", "0 to 65535").map(Value::Ushort),
        Ty::Long => parse_in_range(t, "a long", "-9223372036854775808 to 9223372036854775807")
            .map(Value::Long),
        Ty::Ulong => parse_in_range(t, "a ulong", "0 to 18446744073709551615").map(Value::Ulong),
    }
}

/// An element of type `ty` (under `monoid` for `T`) made from a small natural number:
/// what `iota`, `ones` and `random` produce. For the interval monoid, `i` gives the
/// singleton `[i,i]`; for the list monoid the one-element list `i`.
pub fn from_nat(i: u32, ty: Ty, monoid: Monoid) -> Result<Value, String> {
    Ok(match ty {
        Ty::Int => Value::Int(i as i32),
        Ty::Uint => Value::Uint(i),
        Ty::Bool => Value::Bool(i != 0),
        Ty::Float => Value::float(i as f32),
        Ty::Double => Value::double(i as f64),
        Ty::Ptr => return Err(POINTER_INPUT.into()),
        Ty::Generic => match monoid {
            Monoid::FloatAdd => Value::float(i as f32),
            Monoid::Interval => Value::Interval(Interval::Range(i, i)),
            Monoid::List => Value::List(Arc::from(vec![i])),
            Monoid::Voigt1 | Monoid::Voigt2 => {
                if i > 2 {
                    return Err(format!("{i} is not an element of {{0, 1, 2}}"));
                }
                Value::Ternary(i as u8)
            }
            _ => Value::Int(i as i32),
        },
        // The other integer types; `iota` past the type's range wraps as a conversion does.
        int => Value::Int(i as i32).cast(int),
    })
}

/// Parses an input spec for an array of `len` elements of type `ty`:
/// `1,2,3` | `iota` | `zeros` | `ones` | `random` | `random:SEED` | `@FILE` (one value per
/// line, or a JSON array).
pub fn parse_input(spec: &str, len: usize, ty: Ty, monoid: Monoid) -> Result<Vec<Value>, String> {
    let spec = spec.trim();
    // [`Launch::new`] checks its arrays before; other callers (the scan pipelines) rely
    // on this check.
    let need = memory_estimate(len as u64, 0, 0);
    if len > MAX_ELEMENTS || need > MEMORY_LIMIT {
        return Err(format!(
            "an array of {len} elements needs about {} of memory, more than ksim's limit \
             of {} (and at most {MAX_ELEMENTS} elements)",
            bytes_text(need),
            bytes_text(MEMORY_LIMIT)
        ));
    }
    match spec {
        "iota" => (0..len).map(|i| from_nat(i as u32, ty, monoid)).collect(),
        "zeros" => Ok(vec![Value::default_of(ty, monoid); len]),
        "ones" => (0..len).map(|_| from_nat(1, ty, monoid)).collect(),
        _ if spec == "random" || spec.starts_with("random:") => {
            let seed = match spec.strip_prefix("random:") {
                Some(s) => s
                    .parse::<u64>()
                    .map_err(|_| format!("`{s}` is not a seed"))?,
                None => 0,
            };
            let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
            (0..len)
                .map(|_| match (ty, monoid) {
                    (Ty::Float, _) | (Ty::Generic, Monoid::FloatAdd) => {
                        Ok(Value::float(rng.random_range(0.0f32..1.0)))
                    }
                    (Ty::Double, _) => Ok(Value::double(rng.random_range(0.0f64..1.0))),
                    (Ty::Generic, Monoid::Voigt1 | Monoid::Voigt2) => {
                        from_nat(rng.random_range(0..3u32), ty, monoid)
                    }
                    _ => from_nat(rng.random_range(0..100u32), ty, monoid),
                })
                .collect()
        }
        _ => {
            let items: Vec<String> = if let Some(path) = spec.strip_prefix('@') {
                let text = files::read_to_string(path.as_ref(), input_file_limit(len))
                    .map_err(|e| e.to_string())?;
                file_items(path, &text)?
            } else {
                split_list(spec)
            };
            if items.len() != len {
                return Err(format!(
                    "{} values given for an array of {len} elements",
                    items.len()
                ));
            }
            items.iter().map(|s| parse_elem(s, ty, monoid)).collect()
        }
    }
}

/// The values of an `@FILE` input's text: a JSON array, else one value per line.
pub fn file_items(path: &str, text: &str) -> Result<Vec<String>, String> {
    if text.trim_start().starts_with('[') {
        let json: Vec<serde_json::Value> =
            serde_json::from_str(text).map_err(|e| format!("`{path}` is not a JSON array: {e}"))?;
        Ok(json
            .into_iter()
            .map(|v| match v {
                serde_json::Value::String(s) => s,
                other => other.to_string(),
            })
            .collect())
    } else {
        Ok(text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(String::from)
            .collect())
    }
}

/// Splits a comma list, keeping commas inside `[i,j]` intervals.
fn split_list(spec: &str) -> Vec<String> {
    let mut items = Vec::new();
    let (mut depth, mut cur) = (0, String::new());
    for c in spec.chars() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            ',' if depth == 0 => {
                items.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    items.push(cur);
    items
}

fn parse_elem(text: &str, ty: Ty, monoid: Monoid) -> Result<Value, String> {
    match ty {
        Ty::Generic => monoid.parse_elem(text),
        _ => parse_scalar(text, ty),
    }
}

/// Evaluates a launch-time expression (an array size, a launch default): parameters and
/// literals only, with the kernel's 32-bit operators, except that an `int` or `uint`
/// operation whose exact result does not fit its type is an error instead of wrapping: a
/// size is never silently reduced modulo 2^32 (`n * n` with n = 65536 is no 0-element
/// array). An array size may also name `local_size` (the flat work-group size, `Some` once
/// the launch's shape is known; the OpenCL front end gives each thread a row of such an
/// array for a private array). The one evaluation of sizes, used by [`Launch::new`].
pub fn size_eval(e: &Expr, params: &[Value], local_size: Option<usize>) -> Result<Value, String> {
    let eval = |x: &Expr| size_eval(x, params, local_size);
    Ok(match &e.kind {
        ExprKind::Lit(l) => lit(*l),
        ExprKind::Param(p) => params[*p].clone(),
        ExprKind::Unary(op, a) => {
            let x = eval(a)?;
            let v = Value::unary(*op, &x);
            if let (UnOp::Neg, Some(x), Some(r)) = (op, x.as_i64(), v.as_i64()) {
                if -x != r {
                    return Err(format!("-({x}) = {} overflows `{}`", -x, e.ty.name()));
                }
            }
            v
        }
        ExprKind::Binary(BinOp::LogAnd, a, b) => {
            Value::Bool(eval(a)?.truthy() && eval(b)?.truthy())
        }
        ExprKind::Binary(BinOp::LogOr, a, b) => Value::Bool(eval(a)?.truthy() || eval(b)?.truthy()),
        ExprKind::Binary(op, a, b) => {
            let (x, y) = (eval(a)?, eval(b)?);
            let v = Value::binary(*op, &x, &y).map_err(|err| match err {
                OpError::DivisionByZero => format!("division by zero ({x} {} 0)", op.symbol()),
                OpError::ShiftRange(c) => format!("shift count {c} outside 0 to 31"),
            })?;
            if let (Some(x), Some(y), Some(r)) = (x.as_i64(), y.as_i64(), v.as_i64()) {
                let (x, y) = (x as i128, y as i128);
                let exact = match op {
                    BinOp::Add => Some(x + y),
                    BinOp::Sub => Some(x - y),
                    BinOp::Mul => Some(x * y),
                    BinOp::Div => Some(x / y),
                    BinOp::Shl => Some(x << y),
                    _ => None,
                };
                if let Some(exact) = exact.filter(|&exact| exact != r as i128) {
                    return Err(format!(
                        "{x} {} {y} = {exact} overflows `{}` (sizes are checked, not wrapped)",
                        op.symbol(),
                        e.ty.name()
                    ));
                }
            }
            v
        }
        ExprKind::Cond(c, a, b) => {
            if eval(c)?.truthy() {
                eval(a)?
            } else {
                eval(b)?
            }
        }
        ExprKind::Cast(a) => eval(a)?.cast(e.ty),
        ExprKind::Bits(..) => return Err("a bit view (`as_T`) in a size expression".into()),
        ExprKind::Log2(a) => log2(&eval(a)?, e.ty),
        ExprKind::Min(a, b) => min_max(true, eval(a)?, eval(b)?),
        ExprKind::Max(a, b) => min_max(false, eval(a)?, eval(b)?),
        ExprKind::Math(..) => return Err("a math function in a size expression".into()),
        ExprKind::IntFn(f, _) => {
            return Err(format!("`{}` in a size expression", f.name()));
        }
        ExprKind::Builtin(Builtin::LocalSize) => match local_size {
            Some(n) => {
                Value::Int(i32::try_from(n).map_err(|_| format!("local_size {n} overflows `int`"))?)
            }
            None => return Err("`local_size` is not known before the launch's shape".into()),
        },
        ExprKind::Identity
        | ExprKind::Var(_)
        | ExprKind::Builtin(_)
        | ExprKind::Load { .. }
        | ExprKind::Null
        | ExprKind::Addr { .. }
        | ExprKind::PtrAdd(..)
        | ExprKind::Deref(..) => {
            unreachable!("sizes mention only parameters, literals and local_size (checked)")
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn size(src: &str, n: i32) -> Result<Value, String> {
        let k = lang::check::compile(&format!("kernel k(global int a[{src}]) {{ }}")).unwrap();
        size_eval(&k.arrays[0].dims[0], &[Value::Int(n)], None)
    }

    #[test]
    fn sizes_are_evaluated_exactly_or_refused() {
        assert_eq!(size("n * n", 46340), Ok(Value::Int(2147395600)));
        assert!(size("n * n", 65536)
            .unwrap_err()
            .contains("overflows `int`"));
        assert!(size("n + 2147483647", 1).is_err());
        assert!(size("-n", i32::MIN).is_err());
        assert!(size("n / -1", i32::MIN).is_err());
        assert!(size("1 << n", 31).is_err());
        assert!(size("(uint)n - 1u", 0).is_err());
        assert!(size("n / 0", 1).unwrap_err().contains("division by zero"));
        assert_eq!(
            size("log2((uint)n) + min(n, 3)", 1 << 20),
            Ok(Value::Int(23))
        );
    }

    #[test]
    fn an_input_beyond_the_limit_is_refused_before_allocation() {
        let e = parse_input("iota", 1 << 31, Ty::Int, Monoid::IntAdd).unwrap_err();
        assert!(e.contains("limit of 2.0 GiB"), "{e}");
    }
}
