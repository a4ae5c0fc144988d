//! Dereferences as C defines them to cancel address-of operators.

use super::ast::{Expr, ExprKind};
use crate::ast::BinOp;

/// `*e`, with the address-of operators C defines it to cancel (C11 §6.5.3.2 and its
/// footnote 102, §6.5.2.1) taken out, so that the lowering sees the element itself (a
/// vector buffer's element is a vector, not its first component): `*&x` is `x`, and
/// `*(&a[i] + j)` is `a[i + j]` (`- j`: `a[i - j]`).
pub(crate) fn deref_of(e: Expr) -> ExprKind {
    match e.kind {
        ExprKind::AddrOf(x) => x.kind,
        ExprKind::Binary(op @ (BinOp::Add | BinOp::Sub), p, j) if matches!(&p.kind, ExprKind::AddrOf(x) if matches!(x.kind, ExprKind::Index(..))) =>
        {
            let ExprKind::AddrOf(x) = p.kind else {
                unreachable!("matched")
            };
            let ExprKind::Index(a, i) = x.kind else {
                unreachable!("matched")
            };
            let span = i.span.start..j.span.end;
            let i = Expr {
                kind: ExprKind::Binary(op, i, j),
                span,
            };
            ExprKind::Index(a, Box::new(i))
        }
        kind => ExprKind::Deref(Box::new(Expr { kind, span: e.span })),
    }
}
