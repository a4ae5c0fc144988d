//! The monoids a generic kernel (one over the type `T`) can be instantiated with
//! (Definition 4.1's 𝕊_X, ⊕_X, 1_X; the paper's Definition 4.2 monoid substitution).

use crate::value::Value;
use serde::Serialize;
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

/// An element of the interval-of-summations monoid (POPL 2014, Definition 4.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Interval {
    /// The identity 1.
    Id,
    /// (i, j) with i ≤ j: the summation of inputs i..=j.
    Range(u32, u32),
    /// The absorbing ⊤: a summation that is not a contiguous interval.
    Top,
}

impl Interval {
    /// (i1,i2) ⊕ (i3,i4) = (i1,i4) if i2 + 1 = i3, else ⊤; 1 is the identity, ⊤ absorbs.
    pub fn combine(self, other: Interval) -> Interval {
        match (self, other) {
            (Interval::Id, x) | (x, Interval::Id) => x,
            (Interval::Range(a, b), Interval::Range(c, d)) if b.checked_add(1) == Some(c) => {
                Interval::Range(a, d)
            }
            _ => Interval::Top,
        }
    }
}

impl fmt::Display for Interval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Interval::Id => write!(f, "1"),
            Interval::Range(i, j) => write!(f, "[{i},{j}]"),
            Interval::Top => write!(f, "⊤"),
        }
    }
}

/// A monoid instantiation, chosen with `--monoid`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum Monoid {
    /// `int-add` (the default): 32-bit wrapping addition, identity 0.
    IntAdd,
    /// `int-max`: identity `INT_MIN`.
    IntMax,
    /// `int-min`: identity `INT_MAX`.
    IntMin,
    /// `int-mul`: wrapping multiplication, identity 1.
    IntMul,
    /// `bit-or` on `int`, identity 0.
    BitOr,
    /// `float-add`: IEEE binary32 addition, identity 0.0 (associative only up to rounding).
    FloatAdd,
    /// `interval`: the interval-of-summations monoid.
    Interval,
    /// `list`: list concatenation (free monoid), for small n.
    List,
    /// `voigt1`: Voigtländer's f1 on {0,1,2}: x⊕0 = x, 0⊕1 = 1, otherwise 2.
    Voigt1,
    /// `voigt2`: Voigtländer's f2 on {0,1,2}: x⊕0 = x, x⊕1 = 1, x⊕2 = 2.
    Voigt2,
}

impl Monoid {
    pub const ALL: [Monoid; 10] = [
        Monoid::IntAdd,
        Monoid::IntMax,
        Monoid::IntMin,
        Monoid::IntMul,
        Monoid::BitOr,
        Monoid::FloatAdd,
        Monoid::Interval,
        Monoid::List,
        Monoid::Voigt1,
        Monoid::Voigt2,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Monoid::IntAdd => "int-add",
            Monoid::IntMax => "int-max",
            Monoid::IntMin => "int-min",
            Monoid::IntMul => "int-mul",
            Monoid::BitOr => "bit-or",
            Monoid::FloatAdd => "float-add",
            Monoid::Interval => "interval",
            Monoid::List => "list",
            Monoid::Voigt1 => "voigt1",
            Monoid::Voigt2 => "voigt2",
        }
    }

    pub fn identity(self) -> Value {
        match self {
            Monoid::IntAdd | Monoid::BitOr => Value::Int(0),
            Monoid::IntMax => Value::Int(i32::MIN),
            Monoid::IntMin => Value::Int(i32::MAX),
            Monoid::IntMul => Value::Int(1),
            Monoid::FloatAdd => Value::float(0.0),
            Monoid::Interval => Value::Interval(Interval::Id),
            Monoid::List => Value::List(Arc::from(Vec::new())),
            Monoid::Voigt1 | Monoid::Voigt2 => Value::Ternary(0),
        }
    }

    /// a ⊕ b. Both operands are elements of this monoid (the type checker guarantees that
    /// only `T` values reach ⊕, and launch inputs are parsed per monoid).
    pub fn combine(self, a: &Value, b: &Value) -> Value {
        match (self, a, b) {
            (Monoid::IntAdd, Value::Int(x), Value::Int(y)) => Value::Int(x.wrapping_add(*y)),
            (Monoid::IntMax, Value::Int(x), Value::Int(y)) => Value::Int(*x.max(y)),
            (Monoid::IntMin, Value::Int(x), Value::Int(y)) => Value::Int(*x.min(y)),
            (Monoid::IntMul, Value::Int(x), Value::Int(y)) => Value::Int(x.wrapping_mul(*y)),
            (Monoid::BitOr, Value::Int(x), Value::Int(y)) => Value::Int(x | y),
            (Monoid::FloatAdd, Value::Float(x), Value::Float(y)) => {
                Value::float(f32::from_bits(*x) + f32::from_bits(*y))
            }
            (Monoid::Interval, Value::Interval(x), Value::Interval(y)) => {
                Value::Interval(x.combine(*y))
            }
            (Monoid::List, Value::List(x), Value::List(y)) => {
                Value::List(x.iter().chain(y.iter()).copied().collect())
            }
            (Monoid::Voigt1, Value::Ternary(x), Value::Ternary(y)) => {
                Value::Ternary(match (x, y) {
                    (x, 0) => *x,
                    (0, 1) => 1,
                    _ => 2,
                })
            }
            (Monoid::Voigt2, Value::Ternary(x), Value::Ternary(y)) => {
                Value::Ternary(if *y == 0 { *x } else { *y })
            }
            _ => unreachable!("{a:?} and {b:?} are not both elements of {}", self.name()),
        }
    }

    /// Parses one element as written in an input spec: an integer for the int monoids,
    /// a float for `float-add`, `[i,j]` / `1` / `id` / `⊤` / `top` for `interval`,
    /// `a.b.c` (dot-separated naturals, `[]` for empty) for `list`, 0..=2 for Voigtländer's.
    pub fn parse_elem(self, text: &str) -> Result<Value, String> {
        let t = text.trim();
        let bad = || format!("`{t}` is not an element of the {} monoid", self.name());
        match self {
            Monoid::IntAdd | Monoid::IntMax | Monoid::IntMin | Monoid::IntMul | Monoid::BitOr => {
                parse_int(t)
                    .map(Value::Int)
                    .map_err(|e| format!("{e} (the {} monoid)", self.name()))
            }
            Monoid::FloatAdd => parse_float(t)
                .map(Value::float)
                .map_err(|e| format!("{e} (the {} monoid)", self.name())),
            Monoid::Interval => match t {
                "1" | "id" => Ok(Value::Interval(Interval::Id)),
                "⊤" | "top" => Ok(Value::Interval(Interval::Top)),
                _ => {
                    let inner = t
                        .strip_prefix('[')
                        .and_then(|r| r.strip_suffix(']'))
                        .ok_or_else(bad)?;
                    let (i, j) = inner.split_once(',').ok_or_else(bad)?;
                    let (i, j) = (
                        i.trim().parse().map_err(|_| bad())?,
                        j.trim().parse().map_err(|_| bad())?,
                    );
                    if i <= j {
                        Ok(Value::Interval(Interval::Range(i, j)))
                    } else {
                        Err(format!("interval `{t}` has i > j"))
                    }
                }
            },
            Monoid::List => {
                if t == "[]" {
                    return Ok(Value::List(Arc::from(Vec::new())));
                }
                let items: Result<Vec<u32>, _> = t.split('.').map(|x| x.trim().parse()).collect();
                items.map(|v| Value::List(v.into())).map_err(|_| bad())
            }
            Monoid::Voigt1 | Monoid::Voigt2 => match t {
                "0" => Ok(Value::Ternary(0)),
                "1" => Ok(Value::Ternary(1)),
                "2" => Ok(Value::Ternary(2)),
                _ => Err(bad()),
            },
        }
    }
}

/// A decimal or `0x` hexadecimal integer with at most one leading `-`: how integers are
/// written in `-D` and `--input`. Anything else (`--8`, `-0x-8`, `+8`, `1e3`, ``) is
/// malformed; a well-formed integer too large for 128 bits gives `Ok(None)`.
fn parse_integer(t: &str) -> Result<Option<i128>, ()> {
    let (neg, digits) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t),
    };
    let (radix, digits) = match digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        Some(hex) => (16, hex),
        None => (10, digits),
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return Err(());
    }
    Ok(i128::from_str_radix(digits, radix)
        .ok()
        .map(|m| if neg { -m } else { m }))
}

/// An integer of the C type `ty` (`int` or `uint`), written as [`parse_integer`] accepts;
/// a value outside the type's range is an error, never wrapped.
pub(crate) fn parse_in_range<T: TryFrom<i128>>(
    t: &str,
    ty: &str,
    range: &str,
) -> Result<T, String> {
    match parse_integer(t) {
        Err(()) => Err(format!("`{t}` is not {ty}")),
        Ok(v) => v
            .and_then(|v| T::try_from(v).ok())
            .ok_or_else(|| format!("`{t}` is out of range for {ty} ({range})")),
    }
}

/// A 32-bit signed integer (decimal or `0x` hexadecimal, possibly negative).
pub(crate) fn parse_int(t: &str) -> Result<i32, String> {
    parse_in_range(t, "an int", "-2147483648 to 2147483647")
}

/// A 32-bit unsigned integer (decimal or `0x` hexadecimal).
pub(crate) fn parse_uint(t: &str) -> Result<u32, String> {
    parse_in_range(t, "a uint", "0 to 4294967295")
}

/// A 32-bit float. A finite number too large for `float` (`1e40`) is an error, as the
/// literal `1e40` is in a kernel (C99 6.4.4p2: a constant's value must be in the range of
/// its type; OpenCL C inherits the rule); `inf`, `-inf` and `NaN` spelt out are accepted.
pub(crate) fn parse_float(t: &str) -> Result<f32, String> {
    let v: f32 = t.parse().map_err(|_| format!("`{t}` is not a float"))?;
    let word = t.trim_start_matches(['-', '+']).to_ascii_lowercase();
    if v.is_infinite() && word != "inf" && word != "infinity" {
        return Err(format!(
            "`{t}` is out of range for a 32-bit float (largest finite value {:e})",
            f32::MAX
        ));
    }
    Ok(v)
}

/// A 64-bit float; as [`parse_float`], a finite number too large for `double` is an error.
pub(crate) fn parse_double(t: &str) -> Result<f64, String> {
    let v: f64 = t.parse().map_err(|_| format!("`{t}` is not a double"))?;
    let word = t.trim_start_matches(['-', '+']).to_ascii_lowercase();
    if v.is_infinite() && word != "inf" && word != "infinity" {
        return Err(format!(
            "`{t}` is out of range for a 64-bit double (largest finite value {:e})",
            f64::MAX
        ));
    }
    Ok(v)
}

impl FromStr for Monoid {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Monoid::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| {
                let names: Vec<_> = Monoid::ALL.iter().map(|m| m.name()).collect();
                format!(
                    "unknown monoid `{s}` (expected one of: {})",
                    names.join(", ")
                )
            })
    }
}

impl fmt::Display for Monoid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
