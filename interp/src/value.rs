//! Runtime values and the operators of the core language on them.
//!
//! Integers have OpenCL C's widths (8, 16, 32, 64 bits) and wrap as on real devices, so
//! results compare bit for bit with OpenCL; floats are IEEE binary32 and binary64 (compared
//! and hashed by bit pattern).

use crate::monoid::{Interval, Monoid};
use lang::ast::{BinOp, UnOp};
use lang::core::Ty;
use std::fmt;
use std::sync::Arc;

/// One value of the core language, or of the monoid a generic kernel is instantiated with.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Value {
    Int(i32),
    Uint(u32),
    Bool(bool),
    /// The bit pattern of an `f32` (so that values can be hashed and compared exactly).
    Float(u32),
    /// An element of the interval-of-summations monoid (Definition 4.3).
    Interval(Interval),
    /// An element of the list-concatenation monoid.
    List(Arc<[u32]>),
    /// An element of {0, 1, 2} for Voigtländer's ternary operators.
    Ternary(u8),
    Char(i8),
    Uchar(u8),
    Short(i16),
    Ushort(u16),
    Long(i64),
    Ulong(u64),
    /// The bit pattern of an `f64`.
    Double(u64),
    /// A pointer value ([`Ty::Ptr`]): the array it points into (`None` for null) and the
    /// element offset, counted over the whole array (it may lie outside the array: only
    /// an access through it is checked). Pointers compare by (array, offset), null first.
    Ptr(Option<u32>, i64),
}

/// Why an operator could not be applied (a runtime fault, reported with thread and span).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OpError {
    DivisionByZero,
    /// A shift count outside 0 to 31 (32-bit operands) or 0 to 63 (64-bit operands).
    ShiftRange(i64),
}

impl Value {
    pub fn float(f: f32) -> Value {
        Value::Float(f.to_bits())
    }

    pub fn double(f: f64) -> Value {
        Value::Double(f.to_bits())
    }

    /// `as_T` ([`lang::core::ExprKind::Bits`]): this value's bits as a `ty` of the same
    /// size, unchanged (a NaN keeps its payload); `None` when the sizes differ or either
    /// side is no 32- or 64-bit number.
    pub fn reinterpret(&self, ty: Ty) -> Option<Value> {
        let bits = match *self {
            Value::Int(v) => u64::from(v as u32),
            Value::Uint(v) | Value::Float(v) => u64::from(v),
            Value::Long(v) => v as u64,
            Value::Ulong(v) | Value::Double(v) => v,
            _ => return None,
        };
        let wide = matches!(self, Value::Long(_) | Value::Ulong(_) | Value::Double(_));
        Some(match (ty, wide) {
            (Ty::Int, false) => Value::Int(bits as u32 as i32),
            (Ty::Uint, false) => Value::Uint(bits as u32),
            (Ty::Float, false) => Value::Float(bits as u32),
            (Ty::Long, true) => Value::Long(bits as i64),
            (Ty::Ulong, true) => Value::Ulong(bits),
            (Ty::Double, true) => Value::Double(bits),
            _ => return None,
        })
    }

    /// The integer `i` converted to the integer type `ty` (C's conversion: keep the low
    /// bits, two's complement); `None` if `ty` is no integer type.
    fn int_of(ty: Ty, i: i128) -> Option<Value> {
        Some(match ty {
            Ty::Char => Value::Char(i as i8),
            Ty::Uchar => Value::Uchar(i as u8),
            Ty::Short => Value::Short(i as i16),
            Ty::Ushort => Value::Ushort(i as u16),
            Ty::Int => Value::Int(i as i32),
            Ty::Uint => Value::Uint(i as u32),
            Ty::Long => Value::Long(i as i64),
            Ty::Ulong => Value::Ulong(i as u64),
            _ => return None,
        })
    }

    /// The exact value of an integer or `bool`.
    fn as_i128(&self) -> Option<i128> {
        Some(match *self {
            Value::Bool(b) => b as i128,
            Value::Char(v) => v as i128,
            Value::Uchar(v) => v as i128,
            Value::Short(v) => v as i128,
            Value::Ushort(v) => v as i128,
            Value::Int(v) => v as i128,
            Value::Uint(v) => v as i128,
            Value::Long(v) => v as i128,
            Value::Ulong(v) => v as i128,
            _ => return None,
        })
    }

    /// The exact value of a `float` or `double`.
    fn as_f64(&self) -> Option<f64> {
        match *self {
            Value::Float(b) => Some(f32::from_bits(b) as f64),
            Value::Double(b) => Some(f64::from_bits(b)),
            _ => None,
        }
    }

    /// The value every variable and array element of type `ty` starts with: zero of its
    /// type, and the monoid identity for `T`. (Documented choice: real devices leave such
    /// memory undefined; a deterministic zero keeps runs reproducible.)
    pub fn default_of(ty: Ty, monoid: Monoid) -> Value {
        match ty {
            Ty::Int => Value::Int(0),
            Ty::Uint => Value::Uint(0),
            Ty::Bool => Value::Bool(false),
            Ty::Float => Value::float(0.0),
            Ty::Double => Value::double(0.0),
            Ty::Generic => monoid.identity(),
            Ty::Ptr => Value::Ptr(None, 0),
            int => Value::int_of(int, 0).expect("an integer type"),
        }
    }

    /// The value as an index or size: `None` for non-integers. A `ulong` above `i64::MAX`
    /// wraps to a negative number (which no array admits as an index).
    pub fn as_i64(&self) -> Option<i64> {
        match *self {
            Value::Bool(_) => None,
            Value::Ulong(v) => Some(v as i64),
            _ => self.as_i128().map(|v| v as i64),
        }
    }

    /// Truth of a condition (`bool`, or a non-zero number as in C).
    pub fn truthy(&self) -> bool {
        if let Value::Ptr(array, _) = self {
            return array.is_some();
        }
        if let Some(i) = self.as_i128() {
            return i != 0;
        }
        self.as_f64().is_some_and(|f| f != 0.0)
    }

    /// C conversion to `ty`: integers keep their low bits (sign- or zero-extending to a
    /// wider type), floating values convert to an integer rounding toward zero (a value
    /// out of the type's range, undefined in C, saturates and NaN gives 0: ksim's
    /// documented choice, Rust's `as`), integers and `double` round to nearest into
    /// `float`, `bool` is `!= 0`.
    pub fn cast(&self, ty: Ty) -> Value {
        if ty == Ty::Bool {
            return Value::Bool(self.truthy());
        }
        if let Some(i) = self.as_i128() {
            return match ty {
                Ty::Float => Value::float(i as f32),
                Ty::Double => Value::double(i as f64),
                _ => Value::int_of(ty, i).unwrap_or_else(|| self.clone()),
            };
        }
        if let Some(f) = self.as_f64() {
            return match ty {
                Ty::Float => Value::float(f as f32),
                Ty::Double => Value::double(f),
                Ty::Char => Value::Char(f as i8),
                Ty::Uchar => Value::Uchar(f as u8),
                Ty::Short => Value::Short(f as i16),
                Ty::Ushort => Value::Ushort(f as u16),
                Ty::Int => Value::Int(f as i32),
                Ty::Uint => Value::Uint(f as u32),
                Ty::Long => Value::Long(f as i64),
                Ty::Ulong => Value::Ulong(f as u64),
                _ => self.clone(),
            };
        }
        self.clone()
    }

    pub fn unary(op: UnOp, v: &Value) -> Value {
        match (op, v) {
            (UnOp::Neg, Value::Int(a)) => Value::Int(a.wrapping_neg()),
            (UnOp::Neg, Value::Uint(a)) => Value::Uint(a.wrapping_neg()),
            (UnOp::Neg, Value::Float(a)) => Value::float(-f32::from_bits(*a)),
            (UnOp::Neg, Value::Long(a)) => Value::Long(a.wrapping_neg()),
            (UnOp::Neg, Value::Ulong(a)) => Value::Ulong(a.wrapping_neg()),
            (UnOp::Neg, Value::Double(a)) => Value::double(-f64::from_bits(*a)),
            (UnOp::BitNot, Value::Long(a)) => Value::Long(!a),
            (UnOp::BitNot, Value::Ulong(a)) => Value::Ulong(!a),
            (UnOp::BitNot, Value::Int(a)) => Value::Int(!a),
            (UnOp::BitNot, Value::Uint(a)) => Value::Uint(!a),
            (UnOp::Not, v) => Value::Bool(!v.truthy()),
            (_, v) => unreachable!("type checker admits no {op:?} on {v:?}"),
        }
    }

    /// A binary operator on two operands of the same type (`&&`, `||` and `⊕` are
    /// evaluated by the engines: they short-circuit or need the monoid).
    pub fn binary(op: BinOp, a: &Value, b: &Value) -> Result<Value, OpError> {
        use BinOp::*;
        // One body per integer type: wrapping at the type's width, shift counts from 0 to
        // the width minus 1 (any other count is a fault, see `shift`).
        macro_rules! int_ops {
            ($x:expr, $y:expr, $V:ident, $bits:expr) => {{
                let (x, y) = ($x, $y);
                match op {
                    Add => Value::$V(x.wrapping_add(y)),
                    Sub => Value::$V(x.wrapping_sub(y)),
                    Mul => Value::$V(x.wrapping_mul(y)),
                    Div | Rem if y == 0 => return Err(OpError::DivisionByZero),
                    Div => Value::$V(x.wrapping_div(y)),
                    Rem => Value::$V(x.wrapping_rem(y)),
                    Shl => Value::$V(x.wrapping_shl(shift(y as i64, $bits)?)),
                    Shr => Value::$V(x.wrapping_shr(shift(y as i64, $bits)?)),
                    BitAnd => Value::$V(x & y),
                    BitOr => Value::$V(x | y),
                    BitXor => Value::$V(x ^ y),
                    _ => Value::Bool(compare(op, x.cmp(&y))),
                }
            }};
        }
        macro_rules! float_ops {
            ($x:expr, $y:expr, $mk:path) => {{
                let (x, y) = ($x, $y);
                match op {
                    Add => $mk(x + y),
                    Sub => $mk(x - y),
                    Mul => $mk(x * y),
                    Div => $mk(x / y),
                    Lt => Value::Bool(x < y),
                    Le => Value::Bool(x <= y),
                    Gt => Value::Bool(x > y),
                    Ge => Value::Bool(x >= y),
                    Eq => Value::Bool(x == y),
                    Ne => Value::Bool(x != y),
                    _ => unreachable!("type checker admits no floating {op:?}"),
                }
            }};
        }
        Ok(match (a, b) {
            (Value::Int(x), Value::Int(y)) => int_ops!(*x, *y, Int, 32),
            (Value::Uint(x), Value::Uint(y)) => int_ops!(*x, *y, Uint, 32),
            (Value::Long(x), Value::Long(y)) => int_ops!(*x, *y, Long, 64),
            (Value::Ulong(x), Value::Ulong(y)) => int_ops!(*x, *y, Ulong, 64),
            (Value::Float(x), Value::Float(y)) => {
                float_ops!(f32::from_bits(*x), f32::from_bits(*y), Value::float)
            }
            (Value::Double(x), Value::Double(y)) => {
                float_ops!(f64::from_bits(*x), f64::from_bits(*y), Value::double)
            }
            (Value::Ptr(..), Value::Ptr(..)) => Value::Bool(compare(op, a.cmp(b))),
            (Value::Bool(x), Value::Bool(y)) => match op {
                Eq => Value::Bool(x == y),
                Ne => Value::Bool(x != y),
                BitAnd => Value::Bool(x & y),
                BitOr => Value::Bool(x | y),
                BitXor => Value::Bool(x ^ y),
                LogAnd => Value::Bool(*x && *y),
                LogOr => Value::Bool(*x || *y),
                _ => unreachable!("type checker admits no bool {op:?}"),
            },
            _ => unreachable!("type checker admits no {op:?} on {a:?} and {b:?}"),
        })
    }
}

/// A shift count for an operand of `bits` bits: ksim faults on a count outside 0 to
/// `bits - 1` (undefined in C; OpenCL masks it), so that such a shift is found, not hidden.
fn shift(count: i64, bits: i64) -> Result<u32, OpError> {
    if (0..bits).contains(&count) {
        Ok(count as u32)
    } else {
        Err(OpError::ShiftRange(count))
    }
}

fn compare(op: BinOp, ord: std::cmp::Ordering) -> bool {
    use std::cmp::Ordering::*;
    match op {
        BinOp::Lt => ord == Less,
        BinOp::Le => ord != Greater,
        BinOp::Gt => ord == Greater,
        BinOp::Ge => ord != Less,
        BinOp::Eq => ord == Equal,
        BinOp::Ne => ord != Equal,
        _ => unreachable!("{op:?} is not a comparison"),
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(v) => write!(f, "{v}"),
            Value::Uint(v) => write!(f, "{v}"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Float(bits) => write!(f, "{}", f32::from_bits(*bits)),
            Value::Interval(i) => write!(f, "{i}"),
            Value::List(items) => {
                write!(f, "[")?;
                for (k, x) in items.iter().enumerate() {
                    if k > 0 {
                        write!(f, " ")?;
                    }
                    write!(f, "{x}")?;
                }
                write!(f, "]")
            }
            Value::Ternary(t) => write!(f, "{t}"),
            Value::Char(v) => write!(f, "{v}"),
            Value::Uchar(v) => write!(f, "{v}"),
            Value::Short(v) => write!(f, "{v}"),
            Value::Ushort(v) => write!(f, "{v}"),
            Value::Long(v) => write!(f, "{v}"),
            Value::Ulong(v) => write!(f, "{v}"),
            Value::Double(bits) => write!(f, "{}", f64::from_bits(*bits)),
            Value::Ptr(None, 0) => write!(f, "null"),
            Value::Ptr(None, off) => write!(f, "null+{off}"),
            Value::Ptr(Some(a), off) => write!(f, "&#{a}[{off}]"),
        }
    }
}

impl serde::Serialize for Value {
    /// Numbers and booleans as JSON scalars; monoid elements as their printed form. JSON
    /// has no NaN or infinities (serde_json would write `null`, losing the value), so a
    /// non-finite float is the string `"NaN"`, `"inf"` or `"-inf"`, as ksim prints it and
    /// as `--input @FILE` reads it back.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Value::Int(v) => s.serialize_i32(*v),
            Value::Uint(v) => s.serialize_u32(*v),
            Value::Bool(b) => s.serialize_bool(*b),
            Value::Float(bits) if f32::from_bits(*bits).is_finite() => {
                s.serialize_f32(f32::from_bits(*bits))
            }
            Value::Ternary(t) => s.serialize_u8(*t),
            Value::Char(v) => s.serialize_i8(*v),
            Value::Uchar(v) => s.serialize_u8(*v),
            Value::Short(v) => s.serialize_i16(*v),
            Value::Ushort(v) => s.serialize_u16(*v),
            Value::Long(v) => s.serialize_i64(*v),
            Value::Ulong(v) => s.serialize_u64(*v),
            Value::Double(bits) if f64::from_bits(*bits).is_finite() => {
                s.serialize_f64(f64::from_bits(*bits))
            }
            other => s.serialize_str(&other.to_string()),
        }
    }
}

/// Hand-written because `Value` serialises by hand: a JSON number (ints, uints, finite
/// floats, ternary digits), a boolean, or a string (non-finite floats, monoid elements).
impl schemars::JsonSchema for Value {
    fn schema_name() -> String {
        "Value".into()
    }

    fn json_schema(_: &mut schemars::gen::SchemaGenerator) -> schemars::schema::Schema {
        use schemars::schema::{InstanceType, SchemaObject};
        SchemaObject {
            instance_type: Some(
                vec![
                    InstanceType::Number,
                    InstanceType::Boolean,
                    InstanceType::String,
                ]
                .into(),
            ),
            ..Default::default()
        }
        .into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_finite_floats_serialise_as_strings() {
        let json = |f: f32| serde_json::to_string(&Value::float(f)).unwrap();
        assert_eq!(json(f32::NAN), "\"NaN\"");
        assert_eq!(json(f32::INFINITY), "\"inf\"");
        assert_eq!(json(f32::NEG_INFINITY), "\"-inf\"");
        assert_eq!(json(1.5), "1.5");
        assert_eq!(json(-0.0), "-0.0");
    }
}
