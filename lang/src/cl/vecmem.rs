//! `vloadN` and `vstoreN` (OpenCL C 1.2 §6.12.7), N = 2, 3, 4, 8, 16: the N elements at
//! `p + N * offset` read as a vector, or a vector's components written there. Unlike an
//! access through a `floatN *`, these need only the element's alignment, and `vload3`
//! reads 3 elements, not the 4 slots a `float3` takes in an array of vectors.
//!
//! - `vloadN(offset, p)` becomes the vector literal `(T N)(p[N*offset], ...,
//!   p[N*offset + N-1])` when clang's tree is converted ([`vload`]): clang gives the
//!   call's type, which the literal needs.
//! - `vstoreN(data, offset, p)` is lowered as a statement ([`Lowerer::vstore`]): every
//!   component of `data` is evaluated before the first store, then `p[N*offset + j] =
//!   data.sj` for each `j`.
//!
//! - The `half` forms (`vload_half`, `vload_halfN`, `vloada_halfN`, `vstore_half[N]` and
//!   `vstorea_half[N]` with a rounding suffix) do the same on a `half` buffer, converting
//!   each component ([`super::half`]); the `a` forms take a 3-vector's room as 4 halves.
//!   `vload_halfN` becomes a literal of scalar `vload_half` calls, one per component.
//!
//! `offset` and `p` are written once per component, so they must have no side effects
//! (`vload4(i++, p)` is refused as not supported yet).

use super::half::{self, Round};
use super::*;

/// A `vload*`/`vstore*` built-in: components, elements between vectors, and for the
/// `half` forms the rounding of a store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Form {
    pub n: u8,
    pub stride: u8,
    pub half: Option<Round>,
}

/// The form of `name` if it is a `vload*` (`prefix` "vload") or `vstore*` ("vstore")
/// built-in.
pub fn form(name: &str, prefix: &str) -> Option<Form> {
    let rest = name.strip_prefix(prefix)?;
    let (half, aligned, rest) = match (rest.strip_prefix("_half"), rest.strip_prefix("a_half")) {
        (Some(r), _) => (true, false, r),
        (_, Some(r)) => (true, true, r),
        _ => (false, false, rest),
    };
    let digits = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    let (num, suffix) = rest.split_at(digits);
    let n: u8 = if num.is_empty() && half {
        1
    } else {
        num.parse().ok()?
    };
    if ![1, 2, 3, 4, 8, 16].contains(&n) || (n == 1 && !half) {
        return None;
    }
    let round = match (half, prefix) {
        (false, _) if suffix.is_empty() => None,
        (true, "vstore") => Some(Round::from_suffix(suffix)?),
        (true, _) if suffix.is_empty() => Some(Round::Even),
        _ => return None,
    };
    Some(Form {
        n,
        stride: if aligned && n == 3 { 4 } else { n },
        half: round,
    })
}

/// Whether evaluating `e` more than once is the same as evaluating it once: no
/// assignment, `++`/`--` or call of anything but a built-in that only computes a value.
fn pure(e: &cl::Expr) -> bool {
    use cl::ExprKind as E;
    match &e.kind {
        E::Int { .. }
        | E::Float { .. }
        | E::Char(_)
        | E::Str(_)
        | E::Name(_)
        | E::SizeofType(_)
        | E::SizeofExpr(_) => true,
        E::Index(a, b) | E::Binary(_, a, b) | E::Comma(a, b) => pure(a) && pure(b),
        E::Member { base: a, .. }
        | E::Unary(_, a)
        | E::Plus(a)
        | E::AddrOf(a)
        | E::Deref(a)
        | E::Cast(_, a) => pure(a),
        E::Cond(c, a, b) => pure(c) && pure(a) && pure(b),
        E::VecLit(_, items) => items.iter().all(pure),
        E::Call { func, args } => {
            let computes = match builtins::lookup(&func.name) {
                Some(Builtin::Math(m)) => m != builtins::Math::SinCos,
                Some(b) => matches!(
                    b,
                    Builtin::WorkItem | Builtin::Exact(_) | Builtin::Convert | Builtin::VectorTest
                ),
                None => false,
            };
            computes && args.iter().all(pure)
        }
        E::IncDec(..) | E::Assign { .. } | E::StmtExpr(..) => false,
    }
}

/// Refuses an argument written once per component that has side effects.
fn once_only(name: &str, args: &[&cl::Expr]) -> Res<()> {
    match args.iter().find(|a| !pure(a)) {
        Some(a) => unsupported(
            format!("an argument of `{name}` with side effects (it is evaluated per component)"),
            &a.span,
        ),
        None => Ok(()),
    }
}

/// `n * offset + j`.
fn index(offset: &cl::Expr, n: u8, j: u8, span: &Span) -> cl::Expr {
    let mk = |kind| cl::Expr {
        kind,
        span: span.clone(),
    };
    let int = |v: u8| {
        Box::new(mk(cl::ExprKind::Int {
            value: v.into(),
            unsigned: false,
            long: false,
        }))
    };
    let scaled = mk(cl::ExprKind::Binary(
        BinOp::Mul,
        Box::new(offset.clone()),
        int(n),
    ));
    mk(cl::ExprKind::Binary(BinOp::Add, Box::new(scaled), int(j)))
}

/// `p[n * offset + j]`.
fn slot(p: &cl::Expr, offset: &cl::Expr, n: u8, j: u8, span: &Span) -> cl::Expr {
    cl::Expr {
        kind: cl::ExprKind::Index(Box::new(p.clone()), Box::new(index(offset, n, j, span))),
        span: span.clone(),
    }
}

/// `vloadN(offset, p)` (`vload_halfN`, `vloada_halfN`) of type `ty` (clang's type of the
/// call) as a vector literal; `None` when `name` is no such built-in with a vector result.
pub fn vload(
    name: &str,
    ty: &cl::Type,
    args: &[cl::Expr],
    span: &Span,
) -> Option<Res<cl::ExprKind>> {
    let f = form(name, "vload").filter(|f| f.n > 1)?;
    let [offset, p] = args else {
        return Some(Err(Diagnostic::new(
            format!("`{name}` takes 2 arguments"),
            span.clone(),
        )));
    };
    Some(once_only(name, &[offset, p]).map(|()| {
        let comps = (0..f.n)
            .map(|j| match f.half {
                None => slot(p, offset, f.stride, j, span),
                Some(_) => cl::Expr {
                    kind: cl::ExprKind::Call {
                        func: cl::Ident {
                            name: "vload_half".into(),
                            span: span.clone(),
                        },
                        args: vec![index(offset, f.stride, j, span), p.clone()],
                    },
                    span: span.clone(),
                },
            })
            .collect();
        cl::ExprKind::VecLit(Box::new(ty.clone()), comps)
    }))
}

impl Lowerer<'_> {
    /// `vload_half(offset, p)`: the half `p[offset]` as a `float`.
    pub(super) fn vload_half(
        &mut self,
        args: &[cl::Expr],
        span: &Span,
        pre: &mut Vec<k::Stmt>,
    ) -> Res<k::Expr> {
        let [offset, p] = args else {
            return Err(Diagnostic::new(
                "`vload_half` takes 2 arguments",
                span.clone(),
            ));
        };
        let bits = self.expr(&slot(p, offset, 1, 0, span), pre)?;
        let bits = self.once(bits, TypeName::Ushort, pre);
        Ok(half::to_float(bits, span))
    }

    /// `vstoreN(data, offset, p)` (and the `half` forms) as a statement.
    pub(super) fn vstore(
        &mut self,
        func: &cl::Ident,
        args: &[cl::Expr],
        span: &Span,
        out: &mut Vec<k::Stmt>,
    ) -> Res<()> {
        let name = func.name.as_str();
        let f = form(name, "vstore").expect("looked up as a vstore");
        let [data, offset, p] = args else {
            return Err(Diagnostic::new(
                format!("`{name}` takes 3 arguments"),
                span.clone(),
            ));
        };
        once_only(name, &[offset, p])?;
        let (elem, comps) = match self.vec_shape(data) {
            Some((elem, m)) if m == f.n => (elem, self.vec_expr(data, out)?.comps),
            None if f.n == 1 => {
                let v = self.expr(data, out)?;
                (self.type_of(&v).unwrap_or(TypeName::Float), vec![v])
            }
            _ => {
                return Err(Diagnostic::new(
                    format!("`{name}` stores a vector of {} components", f.n),
                    data.span.clone(),
                ))
            }
        };
        if f.half.is_some() && elem != TypeName::Float {
            return unsupported(
                format!("`{name}` of a `{}`", ty_of(elem).name()),
                &data.span,
            );
        }
        let values: Vec<k::Expr> = comps.into_iter().map(|c| self.once(c, elem, out)).collect();
        for (j, v) in (0..f.n).zip(values) {
            let v = match f.half {
                Some(round) => half::from_float(v, round, span),
                None => v,
            };
            self.store(None, &slot(p, offset, f.stride, j, span), v, span, out)?;
        }
        Ok(())
    }
}
