//! The compact value representation: every value of the kernel is one `u64` slot.
//!
//! | type / monoid                       | slot contents                                   |
//! |-------------------------------------|-------------------------------------------------|
//! | `int` (and `T` under the int monoids) | the `i32` bit pattern, zero-extended           |
//! | `uint`                              | the `u32`, zero-extended                        |
//! | `bool`                              | 0 or 1                                          |
//! | `float` (and `T` under `float-add`) | the `f32` bit pattern, zero-extended            |
//! | `T` under `interval`                | `(i << 32) | j` for `[i,j]`; [`IV_ID`], [`IV_TOP`] |
//! | `T` under `voigt1` / `voigt2`       | 0, 1 or 2                                       |
//!
//! Every slot of a 32-bit type keeps its upper 32 bits zero, so equality, truth (`!= 0`)
//! and the bitwise operators work on the whole slot. The `list` monoid has unbounded values
//! and is not supported (the caller falls back to the reference semantics).

use super::Unsupported;
use crate::monoid::{Interval, Monoid};
use crate::value::Value;
use lang::core::Ty;

/// How the values of one type are stored in a slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Repr {
    I32,
    U32,
    Bool,
    F32,
    Interval,
    Ternary,
}

/// The identity 1 of the interval monoid: `i = u32::MAX > j = 0`, never a valid range.
pub(crate) const IV_ID: u64 = 0xFFFF_FFFF_0000_0000;
/// The absorbing ⊤ of the interval monoid: `i = u32::MAX > j = 1`, never a valid range.
pub(crate) const IV_TOP: u64 = 0xFFFF_FFFF_0000_0001;

pub(crate) fn repr_of(ty: Ty, monoid: Monoid) -> Result<Repr, Unsupported> {
    Ok(match ty {
        Ty::Int => Repr::I32,
        Ty::Uint => Repr::U32,
        Ty::Bool => Repr::Bool,
        Ty::Float => Repr::F32,
        Ty::Generic => match monoid {
            Monoid::IntAdd | Monoid::IntMax | Monoid::IntMin | Monoid::IntMul | Monoid::BitOr => {
                Repr::I32
            }
            Monoid::FloatAdd => Repr::F32,
            Monoid::Interval => Repr::Interval,
            Monoid::Voigt1 | Monoid::Voigt2 => Repr::Ternary,
            Monoid::List => {
                return Err(Unsupported::new(
                    "the `list` monoid has unbounded values; use the reference engine",
                ))
            }
        },
    })
}

/// Encodes a value of representation `r`.
pub(crate) fn encode(v: &Value, r: Repr) -> Result<u64, Unsupported> {
    Ok(match (r, v) {
        (Repr::I32, Value::Int(x)) => *x as u32 as u64,
        (Repr::U32, Value::Uint(x)) => *x as u64,
        (Repr::Bool, Value::Bool(b)) => *b as u64,
        (Repr::F32, Value::Float(bits)) => *bits as u64,
        (Repr::Interval, Value::Interval(iv)) => match *iv {
            Interval::Id => IV_ID,
            Interval::Top => IV_TOP,
            Interval::Range(i, j) if i <= j => ((i as u64) << 32) | j as u64,
            Interval::Range(..) => {
                return Err(Unsupported::new(format!(
                    "interval value {iv} has i > j and has no compact encoding"
                )))
            }
        },
        (Repr::Ternary, Value::Ternary(t)) => *t as u64,
        _ => {
            return Err(Unsupported::new(format!(
                "value {v:?} does not have the representation {r:?}"
            )))
        }
    })
}

/// Decodes a slot of representation `r`.
pub(crate) fn decode(x: u64, r: Repr) -> Value {
    match r {
        Repr::I32 => Value::Int(x as u32 as i32),
        Repr::U32 => Value::Uint(x as u32),
        Repr::Bool => Value::Bool(x != 0),
        Repr::F32 => Value::Float(x as u32),
        Repr::Interval => Value::Interval(match x {
            IV_ID => Interval::Id,
            IV_TOP => Interval::Top,
            _ => Interval::Range((x >> 32) as u32, x as u32),
        }),
        Repr::Ternary => Value::Ternary(x as u8),
    }
}

/// `Interval::combine` on encoded slots.
#[inline(always)]
pub(crate) fn combine_interval(x: u64, y: u64) -> u64 {
    if x == IV_ID {
        return y;
    }
    if y == IV_ID {
        return x;
    }
    if x == IV_TOP || y == IV_TOP {
        return IV_TOP;
    }
    let b = x as u32;
    let c = (y >> 32) as u32;
    if b != u32::MAX && b + 1 == c {
        (x & 0xFFFF_FFFF_0000_0000) | (y & 0xFFFF_FFFF)
    } else {
        IV_TOP
    }
}

/// Voigtländer's f1 on {0,1,2}: x⊕0 = x, 0⊕1 = 1, otherwise 2.
#[inline(always)]
pub(crate) fn combine_voigt1(x: u64, y: u64) -> u64 {
    match (x, y) {
        (x, 0) => x,
        (0, 1) => 1,
        _ => 2,
    }
}

/// Voigtländer's f2 on {0,1,2}: x⊕0 = x, x⊕y = y otherwise.
#[inline(always)]
pub(crate) fn combine_voigt2(x: u64, y: u64) -> u64 {
    if y == 0 {
        x
    } else {
        y
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interval_combine_matches_monoid() {
        let vals = [
            Interval::Id,
            Interval::Top,
            Interval::Range(0, 0),
            Interval::Range(0, 3),
            Interval::Range(1, 1),
            Interval::Range(4, 7),
            Interval::Range(3, 3),
            Interval::Range(u32::MAX, u32::MAX),
            Interval::Range(0, u32::MAX - 1),
        ];
        for a in vals {
            for b in vals {
                let ea = encode(&Value::Interval(a), Repr::Interval).unwrap();
                let eb = encode(&Value::Interval(b), Repr::Interval).unwrap();
                assert_eq!(
                    decode(combine_interval(ea, eb), Repr::Interval),
                    Value::Interval(a.combine(b)),
                    "{a} ⊕ {b}"
                );
            }
        }
    }

    #[test]
    fn voigt_combine_matches_monoid() {
        for x in 0..3u8 {
            for y in 0..3u8 {
                let (vx, vy) = (Value::Ternary(x), Value::Ternary(y));
                assert_eq!(
                    decode(combine_voigt1(x as u64, y as u64), Repr::Ternary),
                    Monoid::Voigt1.combine(&vx, &vy)
                );
                assert_eq!(
                    decode(combine_voigt2(x as u64, y as u64), Repr::Ternary),
                    Monoid::Voigt2.combine(&vx, &vy)
                );
            }
        }
    }
}
