//! OpenCL C's integer functions (§6.12.3) that no short expression over the core's
//! operators computes at every width: counting bits, the high half of a product, a
//! saturating multiply-add, rotation and widening. [`IntFn::apply`] is the one definition
//! both engines run (exact, in 128-bit arithmetic); the OpenCL code generator emits the
//! device's function of the same name.

use crate::core::Ty;
use serde::Serialize;

/// An integer function of OpenCL C. Its operands have one integer type `gentype` (for
/// `upsample`, `hi` has it and `lo` is its unsigned type); the result is a `gentype`, or
/// for `upsample` the integer type of twice the width and `hi`'s signedness.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum IntFn {
    /// `clz(x)`: leading zero bits (the width for 0).
    Clz,
    /// `popcount(x)`: one bits.
    Popcount,
    /// `mul_hi(x, y)`: the high half of the double-width product.
    MulHi,
    /// `mad_hi(a, b, c)`: `mul_hi(a, b) + c`, wrapping.
    MadHi,
    /// `mad_sat(a, b, c)`: `a * b + c` saturated to the type's range.
    MadSat,
    /// `rotate(v, i)`: `v` rotated left by `i` modulo the width.
    Rotate,
    /// `upsample(hi, lo)`: `hi << width | lo`, in the type of twice the width.
    Upsample,
}

impl IntFn {
    pub const ALL: [IntFn; 7] = [
        IntFn::Clz,
        IntFn::Popcount,
        IntFn::MulHi,
        IntFn::MadHi,
        IntFn::MadSat,
        IntFn::Rotate,
        IntFn::Upsample,
    ];

    /// The OpenCL C name (also the `.ksim` and core spelling).
    pub fn name(self) -> &'static str {
        match self {
            IntFn::Clz => "clz",
            IntFn::Popcount => "popcount",
            IntFn::MulHi => "mul_hi",
            IntFn::MadHi => "mad_hi",
            IntFn::MadSat => "mad_sat",
            IntFn::Rotate => "rotate",
            IntFn::Upsample => "upsample",
        }
    }

    pub fn from_name(name: &str) -> Option<IntFn> {
        IntFn::ALL.into_iter().find(|f| f.name() == name)
    }

    pub fn arity(self) -> usize {
        match self {
            IntFn::Clz | IntFn::Popcount => 1,
            IntFn::MulHi | IntFn::Rotate | IntFn::Upsample => 2,
            IntFn::MadHi | IntFn::MadSat => 3,
        }
    }

    /// The result type for operands of integer type `gen`; `None` where OpenCL has no
    /// such function (`upsample` of a 64-bit type).
    pub fn result(self, gen: Ty) -> Option<Ty> {
        if self != IntFn::Upsample {
            return Some(gen);
        }
        Some(match gen {
            Ty::Char => Ty::Short,
            Ty::Uchar => Ty::Ushort,
            Ty::Short => Ty::Int,
            Ty::Ushort => Ty::Uint,
            Ty::Int => Ty::Long,
            Ty::Uint => Ty::Ulong,
            _ => return None,
        })
    }

    /// The function on operands of integer type `gen`, each given as its bit pattern
    /// (zero-extended to 64 bits, as the fast executor holds it); the result's bit pattern
    /// likewise (for `upsample`, of the wider type).
    pub fn apply(self, gen: Ty, args: &[u64]) -> u64 {
        let (w, signed) = gen.int_bits().expect("an integer type");
        let mask = if w == 64 { u64::MAX } else { (1u64 << w) - 1 };
        let bits = |i: usize| args.get(i).copied().unwrap_or(0) & mask;
        // The exact value of operand `i`.
        let val = |i: usize| -> i128 {
            let b = bits(i);
            if signed && (b >> (w - 1)) & 1 == 1 {
                b as i128 - (1i128 << w)
            } else {
                b as i128
            }
        };
        let wrap = |v: i128| v as u64 & mask;
        // The high half of a product (u128 for two unsigned 64-bit operands, whose product
        // can exceed i128).
        let mul_hi = || -> i128 {
            if signed {
                (val(0) * val(1)) >> w
            } else {
                ((bits(0) as u128 * bits(1) as u128) >> w) as i128
            }
        };
        match self {
            IntFn::Clz => (bits(0).leading_zeros() - (64 - w)) as u64,
            IntFn::Popcount => bits(0).count_ones() as u64,
            IntFn::MulHi => wrap(mul_hi()),
            IntFn::MadHi => wrap(mul_hi() + val(2)),
            IntFn::MadSat => {
                let (lo, hi) = if signed {
                    (-(1i128 << (w - 1)), (1i128 << (w - 1)) - 1)
                } else {
                    (0, mask as i128)
                };
                let exact = if signed {
                    val(0) * val(1) + val(2)
                } else {
                    // At most (2^64 - 1)^2 + 2^64 - 1 < 2^128: computed in u128, then
                    // saturated before it is read as an i128.
                    let p = bits(0) as u128 * bits(1) as u128 + bits(2) as u128;
                    p.min(mask as u128) as i128
                };
                wrap(exact.clamp(lo, hi))
            }
            IntFn::Rotate => {
                let n = val(1).rem_euclid(w as i128) as u32;
                let b = bits(0);
                if n == 0 {
                    b
                } else {
                    ((b << n) | (b >> (w - n))) & mask
                }
            }
            IntFn::Upsample => {
                let wide = self
                    .result(gen)
                    .and_then(Ty::int_bits)
                    .expect("a narrower type")
                    .0;
                let lo = args.get(1).copied().unwrap_or(0) & mask;
                let v = (bits(0) << w) | lo;
                if wide == 64 {
                    v
                } else {
                    v & ((1u64 << wide) - 1)
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(v: i64, t: Ty) -> u64 {
        let w = t.int_bits().unwrap().0;
        if w == 64 {
            v as u64
        } else {
            v as u64 & ((1 << w) - 1)
        }
    }

    #[test]
    fn edge_cases_follow_the_specification() {
        use IntFn::*;
        use Ty::*;
        let cases: [(IntFn, Ty, &[i64], i64); 20] = [
            (Clz, Char, &[0], 8),
            (Clz, Char, &[-1], 0),
            (Clz, Ulong, &[1], 63),
            (Clz, Int, &[0], 32),
            (Popcount, Short, &[-1], 16),
            (Popcount, Long, &[i64::MIN], 1),
            (MulHi, Int, &[i32::MIN as i64, i32::MIN as i64], 1 << 30),
            (
                MulHi,
                Uint,
                &[u32::MAX as i64, u32::MAX as i64],
                u32::MAX as i64 - 1,
            ),
            (MulHi, Long, &[-1, 1], -1),
            (MulHi, Ulong, &[-1, -1], -2),
            (MulHi, Char, &[-128, 127], -64),
            (MadHi, Uchar, &[255, 255, 10], 254 + 10 - 256),
            (MadSat, Char, &[100, 2, 0], 127),
            (MadSat, Uint, &[-1, 2, 0], u32::MAX as i64),
            (MadSat, Long, &[i64::MIN, 2, 5], i64::MIN),
            (MadSat, Ulong, &[-1, -1, -1], -1),
            (Rotate, Uchar, &[0x81, 1], 0x03),
            (Rotate, Int, &[1, -1], i32::MIN as i64),
            (Upsample, Char, &[-1, 0xfe], -2),
            (Upsample, Uint, &[1, 2], (1 << 32) | 2),
        ];
        for (f, t, args, want) in cases {
            let words: Vec<u64> = args.iter().map(|&a| p(a, t)).collect();
            let r = f.result(t).unwrap();
            assert_eq!(
                f.apply(t, &words),
                p(want, r),
                "{}({args:?}) on {}",
                f.name(),
                t.name()
            );
        }
    }
}
