//! The word encoding of values, shared by the fast executor (`fast::repr`, one `u64` slot
//! per value) and the OpenCL backend (`gpu::repr`, which stores the low `size` bytes of the
//! same word in device buffers), so that both read an interval, a `bool` or a float the
//! same way.
//!
//! | type / monoid                         | word                                            |
//! |---------------------------------------|-------------------------------------------------|
//! | `int` (and `T` under the int monoids) | the `i32` bit pattern, zero-extended            |
//! | `uint`                                | the `u32`, zero-extended                        |
//! | `char`, `uchar`, `short`, `ushort`    | the 8- or 16-bit pattern, zero-extended          |
//! | `long`, `ulong`                       | the 64-bit pattern                              |
//! | `double`                              | the `f64` bit pattern                           |
//! | `bool`                                | 0 or 1                                          |
//! | `float` (and `T` under `float-add`)   | the `f32` bit pattern, zero-extended            |
//! | `T` under `interval`                  | `(i << 32) | j` for `[i,j]`; [`IV_ID`], [`IV_TOP`] |
//! | `T` under `voigt1` / `voigt2`         | 0, 1 or 2                                       |
//!
//! The `list` monoid has unbounded values and no word encoding.

use crate::monoid::{Interval, Monoid};
use crate::value::Value;
use lang::core::Ty;

/// The encoding of the interval monoid's identity 1 (`i > j`: no range has it).
pub const IV_ID: u64 = 0xFFFF_FFFF_0000_0000;
/// The encoding of ⊤ (`i > j` too).
pub const IV_TOP: u64 = 0xFFFF_FFFF_0000_0001;

/// How one element type is encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Repr {
    I32,
    U32,
    Bool,
    F32,
    Interval,
    Ternary,
    I8,
    U8,
    I16,
    U16,
    I64,
    U64,
    F64,
}

impl Repr {
    /// The encoding of `ty` under `monoid` (`T` takes the monoid's); `None` for `T` under
    /// the `list` monoid and for pointers.
    pub fn of(ty: Ty, monoid: Monoid) -> Option<Repr> {
        Some(match ty {
            Ty::Int => Repr::I32,
            Ty::Uint => Repr::U32,
            Ty::Bool => Repr::Bool,
            Ty::Float => Repr::F32,
            Ty::Char => Repr::I8,
            Ty::Uchar => Repr::U8,
            Ty::Short => Repr::I16,
            Ty::Ushort => Repr::U16,
            Ty::Long => Repr::I64,
            Ty::Ulong => Repr::U64,
            Ty::Double => Repr::F64,
            // Pointer values have no word encoding yet: the fast executor refuses them.
            Ty::Ptr => return None,
            Ty::Generic => match monoid {
                Monoid::IntAdd
                | Monoid::IntMax
                | Monoid::IntMin
                | Monoid::IntMul
                | Monoid::BitOr => Repr::I32,
                Monoid::FloatAdd => Repr::F32,
                Monoid::Interval => Repr::Interval,
                Monoid::Voigt1 | Monoid::Voigt2 => Repr::Ternary,
                Monoid::List => return None,
            },
        })
    }

    /// The word of `v`; `None` when `v` is not a value of this representation.
    pub fn encode(self, v: &Value) -> Option<u64> {
        Some(match (self, v) {
            (Repr::I32, Value::Int(x)) => *x as u32 as u64,
            (Repr::U32, Value::Uint(x)) => *x as u64,
            (Repr::Bool, Value::Bool(b)) => *b as u64,
            (Repr::F32, Value::Float(bits)) => *bits as u64,
            (Repr::Interval, Value::Interval(iv)) => encode_interval(*iv),
            (Repr::Ternary, Value::Ternary(t)) => *t as u64,
            (Repr::I8, Value::Char(x)) => *x as u8 as u64,
            (Repr::U8, Value::Uchar(x)) => *x as u64,
            (Repr::I16, Value::Short(x)) => *x as u16 as u64,
            (Repr::U16, Value::Ushort(x)) => *x as u64,
            (Repr::I64, Value::Long(x)) => *x as u64,
            (Repr::U64, Value::Ulong(x)) => *x,
            (Repr::F64, Value::Double(bits)) => *bits,
            _ => return None,
        })
    }

    /// The value of a word.
    pub fn decode(self, x: u64) -> Value {
        match self {
            Repr::I32 => Value::Int(x as u32 as i32),
            Repr::U32 => Value::Uint(x as u32),
            Repr::Bool => Value::Bool(x != 0),
            Repr::F32 => Value::Float(x as u32),
            Repr::Interval => Value::Interval(decode_interval(x)),
            Repr::Ternary => Value::Ternary(x as u8),
            Repr::I8 => Value::Char(x as i8),
            Repr::U8 => Value::Uchar(x as u8),
            Repr::I16 => Value::Short(x as i16),
            Repr::U16 => Value::Ushort(x as u16),
            Repr::I64 => Value::Long(x as i64),
            Repr::U64 => Value::Ulong(x),
            Repr::F64 => Value::Double(x),
        }
    }

    /// The type whose values this representation holds (`None` for monoid elements).
    pub fn ty(self) -> Option<Ty> {
        Some(match self {
            Repr::I32 => Ty::Int,
            Repr::U32 => Ty::Uint,
            Repr::Bool => Ty::Bool,
            Repr::F32 => Ty::Float,
            Repr::I8 => Ty::Char,
            Repr::U8 => Ty::Uchar,
            Repr::I16 => Ty::Short,
            Repr::U16 => Ty::Ushort,
            Repr::I64 => Ty::Long,
            Repr::U64 => Ty::Ulong,
            Repr::F64 => Ty::Double,
            Repr::Interval | Repr::Ternary => return None,
        })
    }
}

pub fn encode_interval(iv: Interval) -> u64 {
    match iv {
        Interval::Id => IV_ID,
        Interval::Top => IV_TOP,
        Interval::Range(i, j) => ((i as u64) << 32) | j as u64,
    }
}

/// The one decoding of an interval word: [`IV_ID`] is 1, `[i,j]` with `i <= j` a range,
/// and every other word (`i > j`: [`IV_TOP`], or a word no encoder writes) ⊤, the absorbing
/// "not a contiguous summation" element.
pub fn decode_interval(x: u64) -> Interval {
    let (i, j) = ((x >> 32) as u32, x as u32);
    match x {
        IV_ID => Interval::Id,
        _ if i <= j => Interval::Range(i, j),
        _ => Interval::Top,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_round_trip_and_invalid_words_are_top() {
        for iv in [
            Interval::Id,
            Interval::Top,
            Interval::Range(0, 0),
            Interval::Range(3, 7),
            Interval::Range(u32::MAX, u32::MAX),
            Interval::Range(0, u32::MAX),
        ] {
            assert_eq!(decode_interval(encode_interval(iv)), iv);
        }
        assert_eq!(decode_interval(5 << 32 | 2), Interval::Top);
    }

    #[test]
    fn values_round_trip() {
        for (r, v) in [
            (Repr::I32, Value::Int(-5)),
            (Repr::U32, Value::Uint(u32::MAX)),
            (Repr::Bool, Value::Bool(true)),
            (Repr::F32, Value::float(-1.25)),
            (Repr::Interval, Value::Interval(Interval::Range(2, 9))),
            (Repr::Ternary, Value::Ternary(2)),
            (Repr::I8, Value::Char(-128)),
            (Repr::U8, Value::Uchar(255)),
            (Repr::I16, Value::Short(-2)),
            (Repr::U16, Value::Ushort(65535)),
            (Repr::I64, Value::Long(i64::MIN)),
            (Repr::U64, Value::Ulong(u64::MAX)),
            (Repr::F64, Value::double(-0.1)),
        ] {
            assert_eq!(r.decode(r.encode(&v).unwrap()), v);
        }
        assert_eq!(Repr::I32.encode(&Value::Bool(true)), None);
    }
}
