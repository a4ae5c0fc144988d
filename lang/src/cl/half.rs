//! IEEE 754 binary16 (`half`) data (OpenCL C 1.2 §6.1.1.1, §6.12.7): without the
//! `cl_khr_fp16` extension a kernel holds halves only in memory and reads and writes them
//! with `vload_half*` and `vstore_half*`, which convert to and from `float`. ksim keeps a
//! `half` element as its 16 bits, in a `ushort` slot (a buffer's input and output list the
//! bit patterns), and converts with core expressions over the bits of a `float`:
//!
//! - half → float is exact: a normal half's exponent is rebiased, a subnormal one's value
//!   (`m * 2^-24`) computed exactly in `float`, infinities and NaNs (payload kept) mapped.
//! - float → half rounds as the suffix of `vstore_half` asks (none or `_rte`: to nearest,
//!   ties to even; `_rtz`, `_rtp`, `_rtn`): the 13 dropped mantissa bits of a normal result
//!   decide the increment; a subnormal result is `|x| * 2^24` (exact in `float`) rounded
//!   to an integer with `rint`, `trunc` or `ceil`; a magnitude of 2^16 or more overflows
//!   to infinity or to the largest finite half (65504) as the mode says; a NaN stays a quiet
//!   NaN with its payload's top bits.
//!
//! Values of type `half` themselves (`cl_khr_fp16`) are refused when clang's tree is
//! converted.

use super::*;

/// A rounding mode of `vstore_half` (§6.12.7: the suffix; none is `_rte`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Round {
    Even,
    Zero,
    Up,
    Down,
}

impl Round {
    pub fn from_suffix(s: &str) -> Option<Round> {
        Some(match s {
            "" | "_rte" => Round::Even,
            "_rtz" => Round::Zero,
            "_rtp" => Round::Up,
            "_rtn" => Round::Down,
            _ => return None,
        })
    }
}

/// Builds core expressions at one span.
struct B<'s>(&'s Span);

impl B<'_> {
    fn u(&self, v: u32) -> k::Expr {
        ex(
            k::ExprKind::Int {
                value: v.into(),
                unsigned: true,
            },
            self.0,
        )
    }
    fn bin(&self, op: BinOp, a: k::Expr, b: k::Expr) -> k::Expr {
        ex(k::ExprKind::Binary(op, Box::new(a), Box::new(b)), self.0)
    }
    fn and(&self, a: k::Expr, mask: u32) -> k::Expr {
        self.bin(BinOp::BitAnd, a, self.u(mask))
    }
    fn or(&self, a: k::Expr, b: k::Expr) -> k::Expr {
        self.bin(BinOp::BitOr, a, b)
    }
    fn shr(&self, a: k::Expr, n: u32) -> k::Expr {
        self.bin(BinOp::Shr, a, self.u(n))
    }
    fn shl(&self, a: k::Expr, n: u32) -> k::Expr {
        self.bin(BinOp::Shl, a, self.u(n))
    }
    fn cmp(&self, op: BinOp, a: k::Expr, v: u32) -> k::Expr {
        self.bin(op, a, self.u(v))
    }
    fn cond(&self, c: k::Expr, a: k::Expr, b: k::Expr) -> k::Expr {
        ex(
            k::ExprKind::Cond(Box::new(c), Box::new(a), Box::new(b)),
            self.0,
        )
    }
    fn call(&self, f: &str, args: Vec<k::Expr>) -> k::Expr {
        ex(
            k::ExprKind::Call {
                func: ident(f, self.0),
                args,
            },
            self.0,
        )
    }
    fn cast(&self, t: TypeName, a: k::Expr) -> k::Expr {
        ex(k::ExprKind::Cast(t, Box::new(a)), self.0)
    }
    fn float(&self, v: f32) -> k::Expr {
        ex(k::ExprKind::Float(v), self.0)
    }
    /// 1 when `c` holds, else 0, as a `uint`.
    fn bit(&self, c: k::Expr) -> k::Expr {
        self.cond(c, self.u(1), self.u(0))
    }
}

/// The `float` a half's bits `h` (an integer expression, evaluated more than once: pass a
/// name or a literal) denote: exact.
pub fn to_float(h: k::Expr, span: &Span) -> k::Expr {
    let b = B(span);
    let h = b.cast(TypeName::Uint, h);
    let sign = b.shl(b.and(h.clone(), 0x8000), 16);
    let exp = b.and(b.shr(h.clone(), 10), 0x1f);
    let man = b.and(h, 0x3ff);
    let special = b.or(b.or(sign.clone(), b.u(0x7f80_0000)), b.shl(man.clone(), 13));
    let normal = b.or(
        b.or(
            sign.clone(),
            b.shl(b.bin(BinOp::Add, exp.clone(), b.u(112)), 23),
        ),
        b.shl(man.clone(), 13),
    );
    // m * 2^-24: exact, as m < 2^10.
    let scaled = b.bin(
        BinOp::Mul,
        b.cast(TypeName::Float, man),
        b.float(2f32.powi(-24)),
    );
    let sub = b.or(sign, b.call("as_uint", vec![scaled]));
    let bits = b.cond(
        b.cmp(BinOp::Eq, exp.clone(), 0x1f),
        special,
        b.cond(b.cmp(BinOp::Eq, exp, 0), sub, normal),
    );
    b.call("as_float", vec![bits])
}

/// The bits of the half nearest `f` (a `float` expression, evaluated more than once: pass a
/// name or a literal) in rounding mode `round`, as a `ushort`.
pub fn from_float(f: k::Expr, round: Round, span: &Span) -> k::Expr {
    let b = B(span);
    let u = b.call("as_uint", vec![f]);
    let sign = b.and(b.shr(u.clone(), 16), 0x8000);
    let neg = b.cmp(BinOp::Ne, b.shr(u.clone(), 31), 0);
    let pos = b.cmp(BinOp::Eq, b.shr(u.clone(), 31), 0);
    let a = b.and(u, 0x7fff_ffff);
    // Whether a result that is not exact moves away from zero.
    let away = |inexact: k::Expr, even_up: k::Expr| match round {
        Round::Even => even_up,
        Round::Zero => b.u(0),
        Round::Up => b.bit(b.bin(BinOp::LogAnd, inexact, pos.clone())),
        Round::Down => b.bit(b.bin(BinOp::LogAnd, inexact, neg.clone())),
    };
    let nan = b.or(b.u(0x7e00), b.and(b.shr(a.clone(), 13), 0x3ff));
    let overflow = match round {
        Round::Even => b.u(0x7c00),
        Round::Zero => b.u(0x7bff),
        Round::Up => b.cond(pos.clone(), b.u(0x7c00), b.u(0x7bff)),
        Round::Down => b.cond(neg.clone(), b.u(0x7c00), b.u(0x7bff)),
    };
    // A normal result: the exponent rebiased (127 - 15 = 112), 13 mantissa bits dropped.
    let r = b.bin(BinOp::Sub, a.clone(), b.u(0x3800_0000));
    let dropped = b.and(r.clone(), 0x1fff);
    let kept = b.shr(r.clone(), 13);
    let half_way = b.cmp(BinOp::Eq, dropped.clone(), 0x1000);
    let even_up = b.bit(b.bin(
        BinOp::LogOr,
        b.cmp(BinOp::Gt, dropped.clone(), 0x1000),
        b.bin(
            BinOp::LogAnd,
            half_way,
            b.cmp(BinOp::Ne, b.and(kept.clone(), 1), 0),
        ),
    ));
    let normal = b.bin(
        BinOp::Add,
        kept,
        away(b.cmp(BinOp::Ne, dropped, 0), even_up),
    );
    // A subnormal result (or zero): |x| * 2^24 < 2^10, exact, rounded to an integer.
    let y = b.bin(
        BinOp::Mul,
        b.call("as_float", vec![a.clone()]),
        b.float(2f32.powi(24)),
    );
    let up = |f: &str| b.call(f, vec![y.clone()]);
    let rounded = match round {
        Round::Even => up("rint"),
        Round::Zero => up("trunc"),
        Round::Up => b.cond(pos.clone(), up("ceil"), up("trunc")),
        Round::Down => b.cond(neg.clone(), up("ceil"), up("trunc")),
    };
    let sub = b.cast(TypeName::Uint, rounded);
    let magnitude = b.cond(
        b.cmp(BinOp::Gt, a.clone(), 0x7f80_0000),
        nan,
        b.cond(
            b.cmp(BinOp::Eq, a.clone(), 0x7f80_0000),
            b.u(0x7c00),
            b.cond(
                b.cmp(BinOp::Ge, a.clone(), 0x4780_0000),
                overflow,
                b.cond(b.cmp(BinOp::Ge, a, 0x3880_0000), normal, sub),
            ),
        ),
    );
    b.cast(TypeName::Ushort, b.or(sign, magnitude))
}
