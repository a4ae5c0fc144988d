//! How values of each kernel type are stored in device memory (shared by the code
//! generator, which names the OpenCL C types, and the runtime, which encodes and decodes
//! buffers).

use interp::{Interval, Monoid, Value};
use lang::core::Ty;

/// The device representation of one element type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Repr {
    /// `int`: 32-bit two's complement.
    Int,
    /// `uint`.
    Uint,
    /// `bool` stored as `uchar` 0/1 (OpenCL forbids `bool` in buffers).
    Bool,
    /// `float`: IEEE binary32.
    Float,
    /// The interval monoid as `ulong`: `(i << 32) | j` for `[i,j]`, with the reserved
    /// encodings [`IV_ID`] for 1 and [`IV_TOP`] for ⊤ (both have `i > j`, so they are no
    /// interval).
    Interval,
    /// Voigtländer's {0,1,2} as `uchar`.
    Ternary,
}

/// Device encoding of the interval monoid's identity 1: `i = 0xFFFFFFFF > j = 0`.
pub const IV_ID: u64 = 0xFFFF_FFFF_0000_0000;
/// Device encoding of the interval monoid's ⊤: `i = 0xFFFFFFFF > j = 1`.
pub const IV_TOP: u64 = 0xFFFF_FFFF_0000_0001;

impl Repr {
    /// The representation of `ty` when `T` is instantiated with `monoid`; `None` for the
    /// list monoid, which has no fixed-size encoding.
    pub fn of(ty: Ty, monoid: Monoid) -> Option<Repr> {
        Some(match ty {
            Ty::Int => Repr::Int,
            Ty::Uint => Repr::Uint,
            Ty::Bool => Repr::Bool,
            Ty::Float => Repr::Float,
            Ty::Generic => match monoid {
                Monoid::IntAdd
                | Monoid::IntMax
                | Monoid::IntMin
                | Monoid::IntMul
                | Monoid::BitOr => Repr::Int,
                Monoid::FloatAdd => Repr::Float,
                Monoid::Interval => Repr::Interval,
                Monoid::Voigt1 | Monoid::Voigt2 => Repr::Ternary,
                Monoid::List => return None,
            },
        })
    }

    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            Repr::Int | Repr::Uint | Repr::Float => 4,
            Repr::Bool | Repr::Ternary => 1,
            Repr::Interval => 8,
        }
    }

    /// The OpenCL C type of an element in memory.
    pub fn c_type(self) -> &'static str {
        match self {
            Repr::Int => "int",
            Repr::Uint => "uint",
            Repr::Bool | Repr::Ternary => "uchar",
            Repr::Float => "float",
            Repr::Interval => "ulong",
        }
    }

    /// Appends the little-endian encoding of `v` (devices ksim targets are little-endian;
    /// the runtime checks `CL_DEVICE_ENDIAN_LITTLE`).
    pub fn encode(self, v: &Value, out: &mut Vec<u8>) {
        match (self, v) {
            (Repr::Int, Value::Int(x)) => out.extend_from_slice(&x.to_le_bytes()),
            (Repr::Int, Value::Uint(x)) => out.extend_from_slice(&x.to_le_bytes()),
            (Repr::Uint, Value::Uint(x)) => out.extend_from_slice(&x.to_le_bytes()),
            (Repr::Uint, Value::Int(x)) => out.extend_from_slice(&x.to_le_bytes()),
            (Repr::Bool, v) => out.push(v.truthy() as u8),
            (Repr::Float, Value::Float(bits)) => out.extend_from_slice(&bits.to_le_bytes()),
            (Repr::Interval, Value::Interval(iv)) => {
                out.extend_from_slice(&encode_interval(*iv).to_le_bytes())
            }
            (Repr::Ternary, Value::Ternary(t)) => out.push(*t),
            (r, v) => panic!("value {v:?} does not have representation {r:?}"),
        }
    }

    /// Decodes one element from exactly [`Repr::size`] bytes.
    pub fn decode(self, b: &[u8]) -> Value {
        match self {
            Repr::Int => Value::Int(i32::from_le_bytes(b.try_into().unwrap())),
            Repr::Uint => Value::Uint(u32::from_le_bytes(b.try_into().unwrap())),
            Repr::Bool => Value::Bool(b[0] != 0),
            Repr::Float => Value::Float(u32::from_le_bytes(b.try_into().unwrap())),
            Repr::Interval => {
                Value::Interval(decode_interval(u64::from_le_bytes(b.try_into().unwrap())))
            }
            Repr::Ternary => Value::Ternary(b[0]),
        }
    }

    pub fn encode_all(self, vals: &[Value]) -> Vec<u8> {
        let mut out = Vec::with_capacity(vals.len() * self.size());
        for v in vals {
            self.encode(v, &mut out);
        }
        out
    }

    pub fn decode_all(self, bytes: &[u8]) -> Vec<Value> {
        bytes
            .chunks_exact(self.size())
            .map(|c| self.decode(c))
            .collect()
    }
}

/// The device encoding of an interval-monoid element.
pub fn encode_interval(iv: Interval) -> u64 {
    match iv {
        Interval::Id => IV_ID,
        Interval::Top => IV_TOP,
        Interval::Range(i, j) => ((i as u64) << 32) | j as u64,
    }
}

/// Inverse of [`encode_interval`]; any other encoding with `i > j` (which a correct
/// device never produces) decodes as ⊤.
pub fn decode_interval(x: u64) -> Interval {
    match x {
        IV_ID => Interval::Id,
        _ => {
            let (i, j) = ((x >> 32) as u32, x as u32);
            if i <= j {
                Interval::Range(i, j)
            } else {
                Interval::Top
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interval_round_trip() {
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
    }

    #[test]
    fn values_round_trip() {
        let cases = [
            (Repr::Int, Value::Int(-5)),
            (Repr::Uint, Value::Uint(u32::MAX)),
            (Repr::Bool, Value::Bool(true)),
            (Repr::Float, Value::float(-1.25)),
            (Repr::Interval, Value::Interval(Interval::Range(2, 9))),
            (Repr::Ternary, Value::Ternary(2)),
        ];
        for (r, v) in cases {
            let bytes = r.encode_all(std::slice::from_ref(&v));
            assert_eq!(bytes.len(), r.size());
            assert_eq!(r.decode_all(&bytes), vec![v]);
        }
    }
}
