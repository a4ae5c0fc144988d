//! The bits of float and double data (OpenCL C 1.2 §6.2.4.2): `as_T(x)` of scalars and
//! vectors, lowered to `.ksim`'s `as_T`, the core's [`crate::core::ExprKind::Bits`] (the
//! same bits read as another type of the same size; NaN payloads kept). Between integer
//! types it is C's conversion, which keeps the bits at one width.
//!
//! `as_T` needs an operand of `T`'s size (a 3-vector has the size of a 4-vector); a size
//! that differs is OpenCL's error. A view that splits or joins components (`as_uint2` of
//! a `double`) is refused as not supported yet.

use super::*;

/// The scalar type OpenCL spells `word` (`int`, `double`, ...; not `bool` or `half`).
pub(super) fn scalar_type(word: &str) -> Option<TypeName> {
    use TypeName::*;
    [
        Char, Uchar, Short, Ushort, Int, Uint, Long, Ulong, Float, Double,
    ]
    .into_iter()
    .find(|&t| ty_of(t).name() == word)
}

impl Lowerer<'_> {
    /// `signbit(x)` of a scalar `float` or `double` (§6.12.6): 1 when `x`'s sign bit is set
    /// (also for `-0.0f` and a negative NaN), else 0: the bits read as a signed integer are
    /// negative.
    pub(super) fn signbit(
        &mut self,
        args: &[cl::Expr],
        span: &Span,
        pre: &mut Vec<k::Stmt>,
    ) -> Res<k::Expr> {
        let [a] = args else {
            return Err(Diagnostic::new("`signbit` takes 1 argument", span.clone()));
        };
        if self.vec_shape(a).is_some() {
            return unsupported("`signbit` of a vector", span);
        }
        let x = self.expr(a, pre)?;
        let (from, to) = match self.type_of(&x) {
            Some(TypeName::Double) => (TypeName::Double, TypeName::Long),
            Some(TypeName::Float) => (TypeName::Float, TypeName::Int),
            _ => {
                return unsupported(
                    "`signbit` of an argument that is not a `float` or `double`",
                    span,
                )
            }
        };
        let zero = ex(
            k::ExprKind::Int {
                value: 0,
                unsigned: false,
            },
            span,
        );
        let neg = ex(
            k::ExprKind::Binary(BinOp::Lt, Box::new(bits(x, from, to, span)), Box::new(zero)),
            span,
        );
        Ok(ex(k::ExprKind::Cast(TypeName::Int, Box::new(neg)), span))
    }
}

/// `e` (of type `from`) as a `to` of the same size, the same bits.
pub(super) fn bits(e: k::Expr, from: TypeName, to: TypeName, span: &Span) -> k::Expr {
    if from == to {
        return e;
    }
    if ty_of(from).is_integer() && ty_of(to).is_integer() {
        return ex(k::ExprKind::Cast(to, Box::new(e)), span);
    }
    ex(
        k::ExprKind::Call {
            func: ident(&format!("as_{}", ty_of(to).name()), span),
            args: vec![e],
        },
        span,
    )
}

/// Bytes of an `n`-vector of `t` (a 3-vector is stored as a 4-vector, §6.1.5).
fn size_of(t: TypeName, n: usize) -> u64 {
    type_size(t) * if n == 3 { 4 } else { n as u64 }
}

impl<'u> Lowerer<'u> {
    /// `as_T(x)` where `want` components are expected (1 for a scalar): the components of
    /// the result.
    pub(super) fn as_bits(
        &mut self,
        func: &cl::Ident,
        args: &[cl::Expr],
        want: u8,
        span: &Span,
        pre: &mut Vec<k::Stmt>,
    ) -> Res<Vec<k::Expr>> {
        let name = func.name.as_str();
        let word = &name["as_".len()..];
        let digits = word.trim_start_matches(|c: char| c.is_ascii_alphabetic());
        let base = &word[..word.len() - digits.len()];
        let n: u8 = if digits.is_empty() {
            1
        } else {
            digits.parse().unwrap_or(0)
        };
        let Some(to) = scalar_type(base).filter(|_| [1, 2, 3, 4, 8, 16].contains(&n)) else {
            return Err(Diagnostic::new(
                format!("unknown function `{name}`"),
                func.span.clone(),
            ));
        };
        if n != want {
            return Err(Diagnostic::new(
                if want == 1 {
                    format!("`{name}` gives a vector where a scalar is needed")
                } else {
                    format!("`{name}` gives {n} components where {want} are needed")
                },
                span.clone(),
            ));
        }
        let (from, comps) = self.conversion_arg(func, args, None, span, pre)?;
        if from == TypeName::Bool || from == TypeName::Generic {
            return Err(Diagnostic::new(
                format!(
                    "`{name}` of a `{}`, which has no bits to view",
                    ty_of(from).name()
                ),
                span.clone(),
            ));
        }
        let (sf, st) = (size_of(from, comps.len()), size_of(to, n as usize));
        let from_name = match comps.len() {
            1 => ty_of(from).name().to_string(),
            m => format!("{}{m}", ty_of(from).name()),
        };
        if sf != st {
            return Err(Diagnostic::new(
                format!(
                    "`{name}` of a `{from_name}`: OpenCL C requires an operand of the result's \
                     size ({st} bytes; a `{from_name}` has {sf})"
                ),
                span.clone(),
            ));
        }
        if comps.len() != n as usize {
            return unsupported(
                format!("`{name}` of a `{from_name}` (a bit view that splits or joins components)"),
                span,
            );
        }
        Ok(comps.into_iter().map(|c| bits(c, from, to, span)).collect())
    }
}
