//! A concrete demonstration of a counterexample: what the user would see with a
//! non-commutative monoid.
//!
//! The interval test says *that* an output is wrong for some monoid; the list-concatenation
//! monoid (the free monoid, Sheeran's test) shows *how*: with `in[i] = [i]` every output is
//! the list of the inputs it combines, in the order it combines them, so `out[3] = [2 0 1]`
//! instead of `[0 1 2]` reads as "in[2] ⊕ in[0] ⊕ in[1]". Lists grow quadratically with n,
//! so the demonstration runs at a small size: the user's size if it is small, otherwise the
//! smallest power of two (of the kernel's single size parameter) at which the interval test
//! also fails.

use super::{interval_test, ScanArrays, ScanKind, Verdict};
use interp::launch::{Launch, LaunchOptions};
use interp::{Monoid, Value};
use lang::core::{Kernel, ParamKind};
use std::sync::Arc;

/// The largest length at which the list demonstration runs.
pub const DEMO_MAX: usize = 64;

/// The list monoid run that shows a counterexample.
#[derive(Clone, Debug)]
pub struct ListDemo {
    /// The `-D` bindings of the run (the user's, or with a smaller size).
    pub defines: Vec<(String, String)>,
    /// Whether the size was made smaller than the user's.
    pub shrunk: bool,
    pub n: usize,
    /// The whole output of the run.
    pub output: Vec<Value>,
    /// The first wrong output, with the list found and the list expected; `None` if the
    /// list run happens to be right (the interval test starts unwritten `T` memory at `⊤`,
    /// `ksim run` at the identity).
    pub wrong: Option<(usize, Value, Value)>,
}

fn list(items: impl IntoIterator<Item = u32>) -> Value {
    Value::List(items.into_iter().collect::<Vec<_>>().into())
}

/// The expected list at `out[k]`: `[0 .. k]` (inclusive) or `[0 .. k-1]` (exclusive).
pub fn expected_list(kind: ScanKind, k: usize) -> Value {
    match kind {
        ScanKind::Inclusive => list(0..=k as u32),
        ScanKind::Exclusive => list(0..k as u32),
    }
}

/// Finds a small launch at which the interval test fails and runs it with the list monoid
/// and `in = iota` (exactly `ksim run FILE <defines> --monoid list --input in=iota`).
/// `opts` are the user's launch options (their monoid is ignored). `None` if no size up to
/// [`DEMO_MAX`] shows the failure, or the kernel's sizes cannot be changed.
pub fn list_demo(
    kernel: &Arc<Kernel>,
    opts: &LaunchOptions,
    input: &str,
    output: &str,
    kind: ScanKind,
) -> Option<ListDemo> {
    let (defines, shrunk) = small_failing_size(kernel, opts, input, output, kind)?;
    let mut o = opts.clone();
    o.defines = defines.clone();
    o.monoid = Monoid::List;
    o.inputs.retain(|(name, _)| name != input);
    o.inputs.push((input.to_string(), "iota".to_string()));
    let launch = Launch::new(kernel.clone(), &o).ok()?;
    let arrays = ScanArrays::find(&launch, input, output).ok()?;
    let out = interp::canonical::run_preferred(&launch, &Default::default()).execution;
    if !out.races.is_empty() || out.fault.is_some() {
        return None;
    }
    let output: Vec<Value> = out.memory.arrays[arrays.output][0][..arrays.n].to_vec();
    let wrong = (0..arrays.n).find_map(|k| {
        let e = expected_list(kind, k);
        (output[k] != e).then(|| (k, output[k].clone(), e))
    });
    Some(ListDemo {
        defines,
        shrunk,
        n: arrays.n,
        output,
        wrong,
    })
}

/// The user's `-D` bindings if their length is at most [`DEMO_MAX`]; otherwise the
/// smallest power of two for the kernel's only size parameter at which the interval test
/// still finds a wrong output (only when the geometry comes from the kernel's `launch(...)`
/// declaration, which scales with the size).
fn small_failing_size(
    kernel: &Arc<Kernel>,
    opts: &LaunchOptions,
    input: &str,
    output: &str,
    kind: ScanKind,
) -> Option<(Vec<(String, String)>, bool)> {
    let len_at = |defines: &[(String, String)]| -> Option<(Launch, ScanArrays)> {
        let mut o = opts.clone();
        o.defines = defines.to_vec();
        let launch = Launch::new(kernel.clone(), &o).ok()?;
        let arrays = ScanArrays::find(&launch, input, output).ok()?;
        Some((launch, arrays))
    };
    let (_, arrays) = len_at(&opts.defines)?;
    if arrays.n <= DEMO_MAX {
        return Some((opts.defines.clone(), false));
    }
    if opts.groups.is_some() || opts.local_size.is_some() {
        return None;
    }
    let sizes: Vec<_> = kernel
        .params
        .iter()
        .filter(|p| p.kind == ParamKind::Size)
        .collect();
    let [size] = sizes.as_slice() else {
        return None;
    };
    let mut v = 1usize;
    while v <= DEMO_MAX {
        let mut defines = opts.defines.clone();
        defines.retain(|(name, _)| *name != size.name);
        defines.push((size.name.clone(), v.to_string()));
        if let Some((launch, arrays)) = len_at(&defines) {
            if arrays.n <= DEMO_MAX
                && matches!(
                    interval_test(&launch, &arrays, kind).verdict,
                    Verdict::Wrong(_)
                )
            {
                return Some((defines, true));
            }
        }
        v *= 2;
    }
    None
}

/// A list as ksim prints it, `[2 0 1]`, with ascending runs of four or more written
/// `a..b` once the list has more than 12 elements: `[4..7 0..3]`.
pub fn compact_list(v: &Value) -> String {
    let Value::List(items) = v else {
        return v.to_string();
    };
    if items.len() <= 12 {
        return v.to_string();
    }
    let mut parts = Vec::new();
    let mut s = 0;
    while s < items.len() {
        let mut e = s;
        while e + 1 < items.len() && items[e + 1] == items[e].wrapping_add(1) {
            e += 1;
        }
        if e - s >= 3 {
            parts.push(format!("{}..{}", items[s], items[e]));
        } else {
            parts.extend(items[s..=e].iter().map(|x| x.to_string()));
        }
        s = e + 1;
    }
    format!("[{}]", parts.join(" "))
}
