//! The compact value representation: every value of the kernel is one `u64` slot, the
//! word of [`crate::codec`] (shared with the OpenCL backend), and the monoid operations on
//! words.
//!
//! Every slot of a 32-bit type keeps its upper 32 bits zero, so equality, truth (`!= 0`)
//! and the bitwise operators work on the whole slot. The `list` monoid has unbounded values
//! and is not supported (the caller falls back to the reference semantics).

use super::Unsupported;
use crate::monoid::{Interval, Monoid};
use crate::value::{OpError, Value};
use lang::ast::{BinOp, UnOp};
use lang::core::Ty;

pub(crate) use crate::codec::{Repr, IV_ID, IV_TOP};

pub(crate) fn repr_of(ty: Ty, monoid: Monoid) -> Result<Repr, Unsupported> {
    Repr::of(ty, monoid).ok_or_else(|| match ty {
        Ty::Ptr => Unsupported::new("pointer values (the reference semantics runs them)"),
        _ => Unsupported::new("the `list` monoid has unbounded values; use the reference engine"),
    })
}

pub(crate) fn encode(v: &Value, r: Repr) -> Result<u64, Unsupported> {
    if let Value::Interval(iv @ Interval::Range(i, j)) = v {
        if i > j {
            return Err(Unsupported::new(format!(
                "interval value {iv} has i > j and has no compact encoding"
            )));
        }
    }
    r.encode(v).ok_or_else(|| {
        Unsupported::new(format!(
            "value {v:?} does not have the representation {r:?}"
        ))
    })
}

pub(crate) fn decode(x: u64, r: Repr) -> Value {
    r.decode(x)
}

/// The word of a scalar value, whatever its type (a comparison's `bool` included).
fn word(v: &Value) -> u64 {
    let r = match v {
        Value::Bool(_) => Repr::Bool,
        Value::Int(_) => Repr::I32,
        Value::Uint(_) => Repr::U32,
        Value::Float(_) => Repr::F32,
        Value::Char(_) => Repr::I8,
        Value::Uchar(_) => Repr::U8,
        Value::Short(_) => Repr::I16,
        Value::Ushort(_) => Repr::U16,
        Value::Long(_) => Repr::I64,
        Value::Ulong(_) => Repr::U64,
        Value::Double(_) => Repr::F64,
        other => unreachable!("no scalar word for {other:?}"),
    };
    r.encode(v).expect("the value's own representation")
}

/// [`super::compile::Inst::Conv`]: C's conversion of a word of `from` to `to` (both
/// scalar), by [`Value::cast`], so that both engines share one definition.
pub(crate) fn conv_word(x: u64, from: Repr, to: Repr) -> u64 {
    let ty = to.ty().expect("a scalar target");
    word(&from.decode(x).cast(ty))
}

/// [`super::compile::Inst::Wide`]: a binary operator on two words of `r`.
pub(crate) fn wide_binary(op: BinOp, r: Repr, x: u64, y: u64) -> Result<u64, OpError> {
    Value::binary(op, &r.decode(x), &r.decode(y)).map(|v| word(&v))
}

/// [`super::compile::Inst::WideUn`].
pub(crate) fn wide_unary(op: UnOp, r: Repr, x: u64) -> u64 {
    word(&Value::unary(op, &r.decode(x)))
}

/// [`super::compile::Inst::WideMinMax`].
pub(crate) fn wide_min_max(min: bool, r: Repr, x: u64, y: u64) -> u64 {
    word(&crate::eval::min_max(min, r.decode(x), r.decode(y)))
}

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
