//! How values of each kernel type are stored in device memory (shared by the code
//! generator, which names the OpenCL C types, and the runtime, which encodes and decodes
//! buffers). The encoding is the word of [`interp::codec`], the fast executor's too, stored
//! little-endian in its low [`Bytes::size`] bytes: `int`, `uint` and `float` in 4 bytes,
//! `char`/`short`/`long`/`double` (and unsigned kin) in their own sizes,
//! `bool` and Voigtländer's {0,1,2} as `uchar` (OpenCL forbids `bool` in buffers), the
//! interval monoid as `ulong` with the reserved words [`IV_ID`] and [`IV_TOP`]. An interval
//! word is decoded one way everywhere: [`interp::codec::decode_interval`].

pub use interp::codec::{encode_interval, Repr, IV_ID, IV_TOP};
use interp::Value;

/// The device side of a [`Repr`]: its size, its OpenCL C type, and buffers of it.
pub trait Bytes: Copy {
    /// Bytes per element in a device buffer.
    fn size(self) -> usize;
    /// The OpenCL C type of an element.
    fn c_type(self) -> &'static str;
    /// Appends the encoding of `v` (an `int` buffer also takes `uint` values and vice
    /// versa, bit for bit; a `bool` buffer any value, by its truth).
    fn encode_bytes(self, v: &Value, out: &mut Vec<u8>);
    fn decode_bytes(self, b: &[u8]) -> Value;

    fn encode_all(self, vals: &[Value]) -> Vec<u8> {
        let mut out = Vec::with_capacity(vals.len() * self.size());
        for v in vals {
            self.encode_bytes(v, &mut out);
        }
        out
    }

    fn decode_all(self, bytes: &[u8]) -> Vec<Value> {
        bytes
            .chunks_exact(self.size())
            .map(|c| self.decode_bytes(c))
            .collect()
    }
}

impl Bytes for Repr {
    fn size(self) -> usize {
        match self {
            Repr::I32 | Repr::U32 | Repr::F32 => 4,
            Repr::Bool | Repr::Ternary | Repr::I8 | Repr::U8 => 1,
            Repr::I16 | Repr::U16 => 2,
            Repr::Interval | Repr::I64 | Repr::U64 | Repr::F64 => 8,
        }
    }

    fn c_type(self) -> &'static str {
        match self {
            Repr::I32 => "int",
            Repr::U32 => "uint",
            Repr::Bool | Repr::Ternary => "uchar",
            Repr::F32 => "float",
            Repr::Interval => "ulong",
            Repr::I8 => "char",
            Repr::U8 => "uchar",
            Repr::I16 => "short",
            Repr::U16 => "ushort",
            Repr::I64 => "long",
            Repr::U64 => "ulong",
            Repr::F64 => "double",
        }
    }

    fn encode_bytes(self, v: &Value, out: &mut Vec<u8>) {
        let word = match (self, v) {
            (Repr::I32, Value::Uint(x)) => *x as u64,
            (Repr::U32, Value::Int(x)) => *x as u32 as u64,
            (Repr::Bool, v) => v.truthy() as u64,
            (r, v) => r
                .encode(v)
                .unwrap_or_else(|| panic!("value {v:?} does not have representation {r:?}")),
        };
        out.extend_from_slice(&word.to_le_bytes()[..self.size()]);
    }

    fn decode_bytes(self, b: &[u8]) -> Value {
        let mut word = [0u8; 8];
        word[..b.len()].copy_from_slice(b);
        self.decode(u64::from_le_bytes(word))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use interp::Interval;

    #[test]
    fn values_round_trip_through_device_bytes() {
        let cases = [
            (Repr::I32, Value::Int(-5)),
            (Repr::U32, Value::Uint(u32::MAX)),
            (Repr::Bool, Value::Bool(true)),
            (Repr::F32, Value::float(-1.25)),
            (Repr::Interval, Value::Interval(Interval::Range(2, 9))),
            (Repr::Interval, Value::Interval(Interval::Top)),
            (Repr::Interval, Value::Interval(Interval::Id)),
            (Repr::Ternary, Value::Ternary(2)),
        ];
        for (r, v) in cases {
            let bytes = r.encode_all(std::slice::from_ref(&v));
            assert_eq!(bytes.len(), r.size());
            assert_eq!(r.decode_all(&bytes), vec![v]);
        }
    }

    #[test]
    fn an_invalid_interval_word_from_the_device_is_top() {
        let bytes = (7u64 << 32 | 3).to_le_bytes();
        assert_eq!(
            Repr::Interval.decode_all(&bytes),
            vec![Value::Interval(Interval::Top)]
        );
    }
}
