//! A launch: a kernel with its parameters bound (`-D`), its geometry (`--groups`,
//! `--local-size`), its monoid and its initial arrays (`--input`). Every engine starts from
//! a [`Launch`] and ends in a [`Memory`], so their results compare directly.

use crate::eval::{eval, Env};
use crate::fault::FaultKind;
use crate::monoid::{parse_int, Interval, Monoid};
use crate::value::Value;
use lang::ast::Space;
use lang::core::{ArrayId, Builtin, Kernel, ParamId, Ty, VarId};
use rand::{RngExt, SeedableRng};
use serde::Serialize;
use std::sync::Arc;

/// The largest array (in elements) a launch may allocate.
pub const MAX_ELEMENTS: usize = 1 << 28;

/// What the user asked for on the command line.
#[derive(Clone, Debug)]
pub struct LaunchOptions {
    /// `-D NAME=VALUE`: size and scalar parameters.
    pub defines: Vec<(String, String)>,
    pub groups: Option<usize>,
    pub local_size: Option<usize>,
    pub monoid: Monoid,
    /// `--input ARRAY=SPEC`.
    pub inputs: Vec<(String, String)>,
    /// The step bound after which an execution is reported as non-terminating; `None`
    /// for the default, [`default_max_steps`].
    pub max_steps: Option<u64>,
}

impl Default for LaunchOptions {
    fn default() -> Self {
        LaunchOptions {
            defines: Vec::new(),
            groups: None,
            local_size: None,
            monoid: Monoid::IntAdd,
            inputs: Vec::new(),
            max_steps: None,
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
    pub groups: usize,
    pub local_size: usize,
    pub monoid: Monoid,
    /// Shape of each array (one entry per dimension).
    pub dims: Vec<Vec<usize>>,
    /// Initial contents of each array, row-major; every work-group's copy of a `local`
    /// array starts with these contents.
    pub initial: Vec<Vec<Value>>,
    pub max_steps: u64,
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
        let mut env = ConstEnv {
            params: &params,
            monoid: opts.monoid,
        };
        let mut eval_size = |what: &str, e: &lang::core::Expr| -> Result<usize, LaunchError> {
            let v = eval(e, &mut env)
                .map_err(|f| LaunchError(format!("cannot evaluate {what}: {f}")))?
                .as_i64()
                .unwrap_or(-1);
            usize::try_from(v)
                .map_err(|_| LaunchError(format!("{what} evaluates to {v}, which is negative")))
        };
        let groups = match (opts.groups, &kernel.groups) {
            (Some(g), _) => g,
            (None, Some(e)) => eval_size("the declared number of groups", e)?,
            (None, None) => 1,
        };
        let local_size = match (opts.local_size, &kernel.local_size) {
            (Some(l), _) => l,
            (None, Some(e)) => eval_size("the declared local size", e)?,
            (None, None) => {
                return Err(LaunchError(format!(
                    "kernel `{}` declares no work-group size: pass --local-size or add \
                     `launch(local_size = ...)` to the kernel",
                    kernel.name
                )))
            }
        };
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
        for a in &kernel.arrays {
            let mut shape = Vec::new();
            for (k, d) in a.dims.iter().enumerate() {
                shape.push(eval_size(
                    &format!("dimension {} of `{}`", k + 1, a.name),
                    d,
                )?);
            }
            let len = shape.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d));
            let copies = if a.space == Space::Local { groups } else { 1 };
            if len
                .and_then(|l| l.checked_mul(copies))
                .is_none_or(|l| l > MAX_ELEMENTS)
            {
                return Err(LaunchError(format!(
                    "array `{}` of size {shape:?} is larger than ksim supports ({MAX_ELEMENTS} elements)",
                    a.name
                )));
            }
            dims.push(shape);
        }
        let mut launch = Launch {
            kernel: kernel.clone(),
            params,
            groups,
            local_size,
            monoid: opts.monoid,
            initial: Vec::new(),
            dims,
            max_steps: opts
                .max_steps
                .unwrap_or_else(|| default_max_steps(groups * local_size)),
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
        }
        Ok(launch)
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

    /// The value of a builtin for a thread.
    pub fn builtin(&self, b: Builtin, group: usize, local: usize) -> Value {
        Value::Int(match b {
            Builtin::LocalId => local,
            Builtin::GlobalId => group * self.local_size + local,
            Builtin::GroupId => group,
            Builtin::LocalSize => self.local_size,
            Builtin::NumGroups => self.groups,
        } as i32)
    }
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

fn parse_scalar(text: &str, ty: Ty) -> Result<Value, String> {
    let t = text.trim();
    match ty {
        Ty::Int => parse_int(t)
            .filter(|_| t.parse::<i64>().map_or(true, |v| v <= i32::MAX as i64))
            .map(Value::Int)
            .ok_or_else(|| format!("`{t}` is not an int")),
        Ty::Uint => t
            .parse::<u32>()
            .map(Value::Uint)
            .map_err(|_| format!("`{t}` is not a uint")),
        Ty::Float => t
            .parse::<f32>()
            .map(Value::float)
            .map_err(|_| format!("`{t}` is not a float")),
        Ty::Bool => t
            .parse::<bool>()
            .map(Value::Bool)
            .map_err(|_| format!("`{t}` is not a bool (true or false)")),
        Ty::Generic => Err("generic parameters cannot be bound with -D".into()),
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
    })
}

/// Parses an input spec for an array of `len` elements of type `ty`:
/// `1,2,3` | `iota` | `zeros` | `ones` | `random` | `random:SEED` | `@FILE` (one value per
/// line, or a JSON array).
pub fn parse_input(spec: &str, len: usize, ty: Ty, monoid: Monoid) -> Result<Vec<Value>, String> {
    let spec = spec.trim();
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
                    (Ty::Generic, Monoid::Voigt1 | Monoid::Voigt2) => {
                        from_nat(rng.random_range(0..3u32), ty, monoid)
                    }
                    _ => from_nat(rng.random_range(0..100u32), ty, monoid),
                })
                .collect()
        }
        _ => {
            let items: Vec<String> = if let Some(path) = spec.strip_prefix('@') {
                let text = std::fs::read_to_string(path)
                    .map_err(|e| format!("cannot read `{path}`: {e}"))?;
                if text.trim_start().starts_with('[') {
                    let json: Vec<serde_json::Value> = serde_json::from_str(&text)
                        .map_err(|e| format!("`{path}` is not a JSON array: {e}"))?;
                    json.into_iter()
                        .map(|v| match v {
                            serde_json::Value::String(s) => s,
                            other => other.to_string(),
                        })
                        .collect()
                } else {
                    text.lines()
                        .map(str::trim)
                        .filter(|l| !l.is_empty())
                        .map(String::from)
                        .collect()
                }
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

/// Evaluates launch-time expressions: parameters and literals only.
struct ConstEnv<'a> {
    params: &'a [Value],
    monoid: Monoid,
}

impl Env for ConstEnv<'_> {
    fn var(&self, _: VarId) -> Value {
        unreachable!("size expressions mention no variables (checked)")
    }
    fn param(&self, p: ParamId) -> Value {
        self.params[p].clone()
    }
    fn builtin(&self, _: Builtin) -> Value {
        unreachable!("size expressions mention no builtins (checked)")
    }
    fn monoid(&self) -> Monoid {
        self.monoid
    }
    fn load(&mut self, _: ArrayId, _: &[i64]) -> Result<Value, FaultKind> {
        unreachable!("size expressions read no arrays (checked)")
    }
}
