//! CUDA's `atomicInc(p, lim)` and `atomicDec(p, lim)` on `unsigned int`, whose wrap-around
//! at a limit the core's atomic increment lacks (CUDA C++ Programming Guide, "Atomic
//! Functions"):
//!
//! - `atomicInc`: `old >= lim ? 0 : old + 1`;
//! - `atomicDec`: `(old == 0 || old > lim) ? lim : old - 1`;
//!
//! both returning `old`. Each is a compare-and-swap loop over the core's atomics, which is
//! the same indivisible update (the swap succeeds only on the value the new one was
//! computed from, and fails only when another thread's atomic changed the element):
//!
//! ```text
//! ({ uint old, lim = L;
//!    do old = atomic_or(p, 0); while (atomic_cmpxchg(p, old, NEW(old, lim)) != old);
//!    old; })
//! ```
//!
//! Every access is atomic, so the loop races with nothing an atomic does not race with.

use super::convert::Converter;
use super::cuda::{call, name_expr};
use super::json::Node;
use crate::ast::{BinOp, Span};
use crate::cl::ast::*;
use crate::diag::Diagnostic;

type Res<T> = Result<T, Diagnostic>;

fn ex(kind: ExprKind, span: &Span) -> Expr {
    Expr {
        kind,
        span: span.clone(),
    }
}

fn uint(value: u64, span: &Span) -> Expr {
    ex(
        ExprKind::Int {
            value,
            unsigned: true,
            long: false,
        },
        span,
    )
}

fn bin(op: BinOp, a: Expr, b: Expr, span: &Span) -> Expr {
    ex(ExprKind::Binary(op, Box::new(a), Box::new(b)), span)
}

impl Converter<'_> {
    /// `atomicInc(p, lim)` (`inc`) or `atomicDec(p, lim)`, as a compare-and-swap loop.
    pub(super) fn wrap_atomic(
        &mut self,
        name: &str,
        args: &[Node],
        inc: bool,
        span: &Span,
    ) -> Res<ExprKind> {
        let [p, lim] = args else {
            return Err(Diagnostic::new(
                format!("`{name}` takes 2 arguments"),
                span.clone(),
            ));
        };
        if super::memcopy::has_effects(p) {
            return Err(Diagnostic::new(
                format!("not supported yet: `{name}` on a pointer with side effects"),
                self.span(p),
            ));
        }
        self.temps += 1;
        let (old, limit) = (
            format!("__ksim_old{}", self.temps),
            format!("__ksim_lim{}", self.temps),
        );
        let o = || name_expr(&old, span);
        let l = || name_expr(&limit, span);
        let new = if inc {
            ExprKind::Cond(
                Box::new(bin(BinOp::Ge, o(), l(), span)),
                Box::new(uint(0, span)),
                Box::new(bin(BinOp::Add, o(), uint(1, span), span)),
            )
        } else {
            let wraps = bin(
                BinOp::LogOr,
                bin(BinOp::Eq, o(), uint(0, span), span),
                bin(BinOp::Gt, o(), l(), span),
                span,
            );
            ExprKind::Cond(
                Box::new(wraps),
                Box::new(l()),
                Box::new(bin(BinOp::Sub, o(), uint(1, span), span)),
            )
        };
        let read = ex(
            call("atomic_or", vec![self.expr(p)?, uint(0, span)], span),
            span,
        );
        let swap = ex(
            call(
                "atomic_cmpxchg",
                vec![self.expr(p)?, o(), ex(new, span)],
                span,
            ),
            span,
        );
        let stmt = |kind| Stmt {
            kind,
            span: span.clone(),
        };
        let lim = self.expr(lim)?;
        let decls = vec![
            self.temp(&old, "unsigned int", uint(0, span), span)?,
            self.temp(&limit, "unsigned int", lim, span)?,
        ];
        let body = ex(
            ExprKind::Assign {
                op: None,
                target: Box::new(o()),
                value: Box::new(read),
            },
            span,
        );
        let lp = stmt(StmtKind::DoWhile {
            body: Box::new(stmt(StmtKind::Expr(body))),
            cond: bin(BinOp::Ne, swap, o(), span),
        });
        Ok(ExprKind::StmtExpr(
            vec![stmt(StmtKind::Decl(decls)), lp],
            Some(Box::new(o())),
        ))
    }
}
