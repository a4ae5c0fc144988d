//! Runtime values and the operators of the core language on them.
//!
//! Integers are 32-bit and wrap as on real devices, so results compare bit for bit with
//! OpenCL; floats are IEEE binary32 (compared and hashed by bit pattern).

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
}

/// Why an operator could not be applied (a runtime fault, reported with thread and span).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OpError {
    DivisionByZero,
    /// A shift count outside 0 to 31 (both 32-bit integer types).
    ShiftRange(i64),
}

impl Value {
    pub fn float(f: f32) -> Value {
        Value::Float(f.to_bits())
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
            Ty::Generic => monoid.identity(),
        }
    }

    /// The value as an index or size: `None` for non-integers.
    pub fn as_i64(&self) -> Option<i64> {
        match *self {
            Value::Int(v) => Some(v as i64),
            Value::Uint(v) => Some(v as i64),
            _ => None,
        }
    }

    /// Truth of a condition (`bool`, or a non-zero integer as in C).
    pub fn truthy(&self) -> bool {
        match *self {
            Value::Bool(b) => b,
            Value::Int(v) => v != 0,
            Value::Uint(v) => v != 0,
            Value::Float(bits) => f32::from_bits(bits) != 0.0,
            _ => false,
        }
    }

    /// C conversion to `ty` (int <-> uint reinterpret, float truncates, bool is `!= 0`).
    pub fn cast(&self, ty: Ty) -> Value {
        match (ty, self) {
            (Ty::Int, Value::Int(v)) => Value::Int(*v),
            (Ty::Int, Value::Uint(v)) => Value::Int(*v as i32),
            (Ty::Int, Value::Bool(b)) => Value::Int(*b as i32),
            (Ty::Int, Value::Float(b)) => Value::Int(f32::from_bits(*b) as i32),
            (Ty::Uint, Value::Int(v)) => Value::Uint(*v as u32),
            (Ty::Uint, Value::Uint(v)) => Value::Uint(*v),
            (Ty::Uint, Value::Bool(b)) => Value::Uint(*b as u32),
            (Ty::Uint, Value::Float(b)) => Value::Uint(f32::from_bits(*b) as u32),
            (Ty::Float, Value::Int(v)) => Value::float(*v as f32),
            (Ty::Float, Value::Uint(v)) => Value::float(*v as f32),
            (Ty::Float, Value::Bool(b)) => Value::float(*b as u8 as f32),
            (Ty::Float, Value::Float(b)) => Value::Float(*b),
            (Ty::Bool, v) => Value::Bool(v.truthy()),
            (_, v) => v.clone(),
        }
    }

    pub fn unary(op: UnOp, v: &Value) -> Value {
        match (op, v) {
            (UnOp::Neg, Value::Int(a)) => Value::Int(a.wrapping_neg()),
            (UnOp::Neg, Value::Uint(a)) => Value::Uint(a.wrapping_neg()),
            (UnOp::Neg, Value::Float(a)) => Value::float(-f32::from_bits(*a)),
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
        Ok(match (a, b) {
            (Value::Int(x), Value::Int(y)) => {
                let (x, y) = (*x, *y);
                match op {
                    Add => Value::Int(x.wrapping_add(y)),
                    Sub => Value::Int(x.wrapping_sub(y)),
                    Mul => Value::Int(x.wrapping_mul(y)),
                    Div | Rem if y == 0 => return Err(OpError::DivisionByZero),
                    Div => Value::Int(x.wrapping_div(y)),
                    Rem => Value::Int(x.wrapping_rem(y)),
                    Shl => Value::Int(x.wrapping_shl(shift(y as i64)?)),
                    Shr => Value::Int(x.wrapping_shr(shift(y as i64)?)),
                    BitAnd => Value::Int(x & y),
                    BitOr => Value::Int(x | y),
                    BitXor => Value::Int(x ^ y),
                    _ => Value::Bool(compare(op, x.cmp(&y))),
                }
            }
            (Value::Uint(x), Value::Uint(y)) => {
                let (x, y) = (*x, *y);
                match op {
                    Add => Value::Uint(x.wrapping_add(y)),
                    Sub => Value::Uint(x.wrapping_sub(y)),
                    Mul => Value::Uint(x.wrapping_mul(y)),
                    Div | Rem if y == 0 => return Err(OpError::DivisionByZero),
                    Div => Value::Uint(x / y),
                    Rem => Value::Uint(x % y),
                    Shl => Value::Uint(x.wrapping_shl(shift(y as i64)?)),
                    Shr => Value::Uint(x.wrapping_shr(shift(y as i64)?)),
                    BitAnd => Value::Uint(x & y),
                    BitOr => Value::Uint(x | y),
                    BitXor => Value::Uint(x ^ y),
                    _ => Value::Bool(compare(op, x.cmp(&y))),
                }
            }
            (Value::Float(x), Value::Float(y)) => {
                let (x, y) = (f32::from_bits(*x), f32::from_bits(*y));
                match op {
                    Add => Value::float(x + y),
                    Sub => Value::float(x - y),
                    Mul => Value::float(x * y),
                    Div => Value::float(x / y),
                    Lt => Value::Bool(x < y),
                    Le => Value::Bool(x <= y),
                    Gt => Value::Bool(x > y),
                    Ge => Value::Bool(x >= y),
                    Eq => Value::Bool(x == y),
                    Ne => Value::Bool(x != y),
                    _ => unreachable!("type checker admits no float {op:?}"),
                }
            }
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

fn shift(count: i64) -> Result<u32, OpError> {
    if (0..32).contains(&count) {
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
