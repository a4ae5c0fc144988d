//! Comparing the simulator's final memory with the device's.
//!
//! Integers, booleans and monoid elements (the interval and Voigtländer encodings are
//! decoded first) must agree bit for bit. Floats agree when they are bitwise equal, both
//! NaN, both zero (of either sign), both smaller in magnitude than `f32::MIN_POSITIVE`
//! (devices may flush subnormals to zero), or at most [`DEFAULT_FLOAT_ULPS`] units in the
//! last place apart. The generated code disables contraction, so `+ - *` are correctly
//! rounded on every conformant device exactly as in the simulator; the tolerance covers
//! OpenCL's 2.5 ULP allowance for single-precision `/` and its propagation.

use interp::{Launch, Memory, Value};
use std::fmt;

/// The default float tolerance, in units in the last place.
pub const DEFAULT_FLOAT_ULPS: u32 = 4;

/// One element that differs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    pub array: String,
    /// The work-group's copy for a `local` array (0 for a `global` one).
    pub instance: usize,
    /// Whether the array is `local` (then `instance` is a work-group).
    pub local: bool,
    /// One index per dimension.
    pub index: Vec<usize>,
    pub simulated: Value,
    pub device: Value,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.array)?;
        for i in &self.index {
            write!(f, "[{i}]")?;
        }
        if self.local {
            write!(f, " (group {})", self.instance)?;
        }
        write!(f, ": simulated {}, device {}", self.simulated, self.device)
    }
}

/// The outcome of [`compare`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Comparison {
    /// Elements compared.
    pub compared: usize,
    /// Number of differing elements (all of them, not only the listed ones).
    pub mismatch_count: usize,
    /// The first differing elements, up to the limit.
    pub mismatches: Vec<Mismatch>,
    /// Arrays whose shapes differ (a backend bug, never expected).
    pub shape_errors: Vec<String>,
    /// The largest float distance seen among elements that matched, in ULPs.
    pub max_ulps: u32,
}

impl Comparison {
    /// True when every element matches.
    pub fn is_match(&self) -> bool {
        self.mismatch_count == 0 && self.shape_errors.is_empty()
    }
}

impl fmt::Display for Comparison {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_match() {
            return write!(f, "match ({} elements)", self.compared);
        }
        for s in &self.shape_errors {
            writeln!(f, "{s}")?;
        }
        for m in &self.mismatches {
            writeln!(f, "mismatch: {m}")?;
        }
        if self.mismatch_count > self.mismatches.len() {
            writeln!(
                f,
                "... and {} more",
                self.mismatch_count - self.mismatches.len()
            )?;
        }
        write!(
            f,
            "{} of {} elements differ",
            self.mismatch_count, self.compared
        )
    }
}

/// Compares every array of `sim` and `dev` (both from `launch`), listing up to `limit`
/// mismatches, with the default float tolerance.
pub fn compare(sim: &Memory, dev: &Memory, launch: &Launch, limit: usize) -> Comparison {
    compare_ulps(sim, dev, launch, limit, DEFAULT_FLOAT_ULPS)
}

/// [`compare`] with an explicit float tolerance in ULPs (0: bit for bit, up to NaN
/// payloads, signed zeros and subnormal flushing).
pub fn compare_ulps(
    sim: &Memory,
    dev: &Memory,
    launch: &Launch,
    limit: usize,
    ulps: u32,
) -> Comparison {
    let metas: Vec<ArrayMeta> = launch
        .kernel
        .arrays
        .iter()
        .enumerate()
        .map(|(a, d)| ArrayMeta {
            name: d.name.clone(),
            local: d.space == lang::ast::Space::Local,
            dims: launch.dims.get(a).cloned().unwrap_or_default(),
        })
        .collect();
    compare_arrays(&metas, &sim.arrays, &dev.arrays, limit, ulps)
}

/// What [`compare_arrays`] needs to know about an array to report a mismatch.
#[derive(Clone, Debug)]
pub struct ArrayMeta {
    pub name: String,
    pub local: bool,
    pub dims: Vec<usize>,
}

/// Compares `sim[a][instance][i]` with `dev[a][instance][i]` for every array.
pub fn compare_arrays(
    metas: &[ArrayMeta],
    sim: &[Vec<Vec<Value>>],
    dev: &[Vec<Vec<Value>>],
    limit: usize,
    ulps: u32,
) -> Comparison {
    let mut c = Comparison::default();
    if sim.len() != dev.len() {
        c.shape_errors.push(format!(
            "the simulator reports {} arrays, the device {}",
            sim.len(),
            dev.len()
        ));
        return c;
    }
    for (a, (s_inst, d_inst)) in sim.iter().zip(dev).enumerate() {
        let meta = metas.get(a).cloned().unwrap_or(ArrayMeta {
            name: format!("#{a}"),
            local: false,
            dims: Vec::new(),
        });
        let name = &meta.name;
        if s_inst.len() != d_inst.len() {
            c.shape_errors.push(format!(
                "array `{name}`: {} copies simulated, {} on the device",
                s_inst.len(),
                d_inst.len()
            ));
            continue;
        }
        for (inst, (s, d)) in s_inst.iter().zip(d_inst).enumerate() {
            if s.len() != d.len() {
                c.shape_errors.push(format!(
                    "array `{name}`: {} elements simulated, {} on the device",
                    s.len(),
                    d.len()
                ));
                continue;
            }
            for (i, (x, y)) in s.iter().zip(d).enumerate() {
                c.compared += 1;
                match same(x, y, ulps) {
                    Some(dist) => c.max_ulps = c.max_ulps.max(dist),
                    None => {
                        c.mismatch_count += 1;
                        if c.mismatches.len() < limit {
                            c.mismatches.push(Mismatch {
                                array: name.clone(),
                                instance: inst,
                                local: meta.local,
                                index: unflatten(i, &meta.dims),
                                simulated: x.clone(),
                                device: y.clone(),
                            });
                        }
                    }
                }
            }
        }
    }
    c
}

/// `Some(ulp distance)` when the values agree.
fn same(x: &Value, y: &Value, ulps: u32) -> Option<u32> {
    match (x, y) {
        (Value::Float(a), Value::Float(b)) => float_distance(*a, *b).filter(|d| *d <= ulps),
        _ => (x == y).then_some(0),
    }
}

/// Distance in ULPs between two floats under the rules of the module documentation
/// (`None`: infinitely far, e.g. NaN against a number).
pub fn float_distance(a: u32, b: u32) -> Option<u32> {
    let (x, y) = (f32::from_bits(a), f32::from_bits(b));
    if a == b || (x.is_nan() && y.is_nan()) || (x == 0.0 && y == 0.0) {
        return Some(0);
    }
    if x.is_nan() || y.is_nan() {
        return None;
    }
    if x.abs() < f32::MIN_POSITIVE && y.abs() < f32::MIN_POSITIVE {
        return Some(0);
    }
    // Map to a monotone integer line: negative floats below positive ones.
    let key = |bits: u32| -> i64 {
        if bits & 0x8000_0000 != 0 {
            -((bits & 0x7FFF_FFFF) as i64)
        } else {
            bits as i64
        }
    };
    u32::try_from((key(a) - key(b)).unsigned_abs()).ok()
}

fn unflatten(i: usize, dims: &[usize]) -> Vec<usize> {
    match dims {
        [_, w] if *w > 0 => vec![i / w, i % w],
        _ => vec![i],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_tolerance() {
        let one = 1.0f32.to_bits();
        assert_eq!(float_distance(one, one), Some(0));
        assert_eq!(float_distance(one, one + 3), Some(3));
        assert_eq!(
            float_distance(0.0f32.to_bits(), (-0.0f32).to_bits()),
            Some(0)
        );
        assert_eq!(float_distance(f32::NAN.to_bits(), one), None);
        assert_eq!(float_distance(1e-40f32.to_bits(), 0), Some(0));
        assert_eq!(
            float_distance(f32::MIN_POSITIVE.to_bits(), (-f32::MIN_POSITIVE).to_bits()),
            Some(2 * f32::MIN_POSITIVE.to_bits())
        );
        assert!(same(&Value::float(1.0), &Value::Float(one + 4), 4).is_some());
        assert!(same(&Value::float(1.0), &Value::Float(one + 5), 4).is_none());
        assert!(same(&Value::Int(1), &Value::Int(2), 4).is_none());
    }
}
