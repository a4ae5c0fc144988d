//! Permissions: the lowering of `Perm`, `PointsTo`, `Value` and `\forall*` over them to
//! the core's permission statements ([`crate::core::StmtKind::Perm`]), which the reference
//! semantics checks against its table (`interp::perm`), and the checks of each access of
//! the program: a read needs a positive fraction, a write the whole permission.
//!
//! Where each clause moves permissions (see `interp::perm` for the holders):
//! - the method's `requires`: the first work-item gives every element back to the caller
//!   and lends the precondition (a method without a permission precondition keeps all of
//!   every array); its `ensures`: the caller reclaims it after the last barrier;
//! - a `par` block's `requires`: each thread takes it at its start; its `ensures`: each
//!   thread gives it back at its end;
//! - a barrier's `requires`: each thread gives it to the barrier before it; its
//!   `ensures`: each thread takes it from what the barrier got, after it;
//! - `context` is both.
//!
//! `read` is the fraction 1/1000000 (any positive fraction would do; this one lets a
//! million threads read one element); `none` is 0.

use super::*;
use crate::core::PermOp;

/// The amount `read` stands for.
const READ_DEN: u64 = 1_000_000;

/// A permission statement `__perm_OP(loc, num, den)` (`__perm_read(loc)`).
fn perm_stmt(op: PermOp, loc: k::Expr, amount: Option<(k::Expr, k::Expr)>, span: &Span) -> k::Stmt {
    let mut args = vec![loc];
    if let Some((n, d)) = amount {
        args.push(n);
        args.push(d);
    }
    st(
        k::StmtKind::Call(ex(
            k::ExprKind::Call {
                func: ident(op.name(), span),
                args,
            },
            span,
        )),
        span,
    )
}

/// Whether the clause `e` holds a permission somewhere (and so turns checking on).
/// Whether a clause of method `m` (its contract, a `par` block's, a barrier's, a loop's)
/// holds a permission.
pub(super) fn mentions_permission(m: &Method) -> bool {
    fn clauses(c: &[Clause]) -> bool {
        c.iter()
            .any(|c| matches!(c, Clause::Spec { expr, .. } if has_permission(expr)))
    }
    fn stmt(s: &Stmt) -> bool {
        match &s.kind {
            StmtKind::Par(bs) | StmtKind::Parallel(bs) => bs
                .iter()
                .any(|b| clauses(&b.contract) || b.body.stmts.iter().any(stmt)),
            StmtKind::Barrier { contract, .. } => clauses(contract),
            StmtKind::While { contract, body, .. } | StmtKind::For { contract, body, .. } => {
                clauses(contract) || stmt(body)
            }
            StmtKind::If { then, els, .. } => stmt(then) || els.as_deref().is_some_and(stmt),
            StmtKind::Block(b)
            | StmtKind::Invariant { body: b, .. }
            | StmtKind::Atomic { body: b, .. } => b.stmts.iter().any(stmt),
            StmtKind::Ghost(s) => stmt(s),
            _ => false,
        }
    }
    clauses(&m.contract)
        || matches!(&m.body, Some(MethodBody::Block(b)) if b.stmts.iter().any(stmt))
}

pub(super) fn has_permission(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Call(f, _) => matches!(f.name.as_str(), "Perm" | "PointsTo" | "Value"),
        ExprKind::Quant { body, .. } => has_permission(body),
        ExprKind::Binary(_, a, b) => has_permission(a) || has_permission(b),
        ExprKind::Cond(_, a, b) => has_permission(a) || has_permission(b),
        _ => false,
    }
}

impl Lowerer<'_> {
    /// The permission statements `op` of the clauses of `kinds` in `contract`.
    pub(super) fn perm_clauses(
        &mut self,
        contract: &[Clause],
        kinds: &[ClauseKind],
        op: PermOp,
        out: &mut Vec<k::Stmt>,
    ) -> Res<()> {
        for c in contract {
            match c {
                Clause::Spec { kind, expr, .. } if kinds.contains(kind) => {
                    self.perm(op, expr, out)?
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// The permission statements of one permission expression: `Perm(loc, f)` moves `f`
    /// of `loc`; `**`/`&&` both sides; `c ==> p` and `c ? p : q` under their condition;
    /// `\forall*` (and `\forall`) a loop over its range. Functional parts move nothing.
    pub(super) fn perm(&mut self, op: PermOp, e: &Expr, out: &mut Vec<k::Stmt>) -> Res<()> {
        if !has_permission(e) {
            return Ok(());
        }
        let s = &e.span;
        match &e.kind {
            ExprKind::Call(f, args) => {
                let (loc, amount) = match (f.name.as_str(), args.as_slice()) {
                    ("Perm", [loc, amount]) | ("PointsTo", [loc, amount, _]) => (loc, Some(amount)),
                    ("Value", [loc]) => (loc, None),
                    _ => return err(format!("`{}` takes a location and a fraction", f.name), s),
                };
                let loc = self.location(loc, out)?;
                let amount = match amount {
                    Some(a) => self.fraction(a, out)?,
                    None => (int(1, s), int(READ_DEN, s)),
                };
                out.push(perm_stmt(op, loc, Some(amount), s));
                Ok(())
            }
            ExprKind::Binary(Bin::Star | Bin::Op(BinOp::LogAnd), a, b) => {
                self.perm(op, a, out)?;
                self.perm(op, b, out)
            }
            ExprKind::Binary(Bin::Implies, c, b) => {
                let c = self.expr(c, out)?;
                let mut then = Vec::new();
                self.perm(op, b, &mut then)?;
                out.push(if_(c, then, s));
                Ok(())
            }
            ExprKind::Cond(c, a, b) => {
                let c = self.expr(c, out)?;
                let (mut then, mut els) = (Vec::new(), Vec::new());
                self.perm(op, a, &mut then)?;
                self.perm(op, b, &mut els)?;
                out.push(if_(c.clone(), then, s));
                out.push(if_(not(c), els, s));
                Ok(())
            }
            ExprKind::Quant {
                q: Quantifier::Forall | Quantifier::ForallStar,
                var,
                cond,
                body,
            } => self.quant_loop(var, cond, e, out, |l, o| l.perm(op, body, o)),
            _ => err(
                "a permission here is not supported (write `Perm(a[i], f)`, `**`, `==>`, `?:` or `\\forall*`)",
                s,
            ),
        }
    }

    /// `a[i]` (`a[i][j]`) as the location of a permission.
    fn location(&mut self, loc: &Expr, out: &mut Vec<k::Stmt>) -> Res<k::Expr> {
        let l = self.expr(loc, out)?;
        match l.kind {
            k::ExprKind::Index { .. } => Ok(l),
            _ => err(
                "a permission's location must be an array element `a[i]` here",
                &loc.span,
            ),
        }
    }

    /// A permission amount as numerator and denominator: `1\2`, `write`, `read`, `none`,
    /// an integer.
    fn fraction(&mut self, a: &Expr, out: &mut Vec<k::Stmt>) -> Res<(k::Expr, k::Expr)> {
        let s = &a.span;
        Ok(match &a.kind {
            ExprKind::Write => (int(1, s), int(1, s)),
            ExprKind::Read => (int(1, s), int(READ_DEN, s)),
            ExprKind::NoPerm => (int(0, s), int(1, s)),
            ExprKind::Binary(Bin::Frac, n, d) => (self.expr(n, out)?, self.expr(d, out)?),
            _ => (self.expr(a, out)?, int(1, s)),
        })
    }

    /// The permission checks of the accesses `s` makes itself (not those of the
    /// statements it holds): `__perm_read` per element it reads, `__perm_write` for the
    /// element it writes, each under the conditions that decide whether it is evaluated.
    pub(super) fn access_checks(&self, s: &k::Stmt, out: &mut Vec<k::Stmt>) {
        if !self.check_permissions {
            return;
        }
        let mut found = Vec::new();
        match &s.kind {
            k::StmtKind::Decl { init: Some(e), .. } => reads(e, &[], &mut found),
            k::StmtKind::Assign { target, value, .. } => {
                reads(value, &[], &mut found);
                write(target, &s.span, &mut found);
            }
            k::StmtKind::Step { target, .. } => write(target, &s.span, &mut found),
            k::StmtKind::If { arms, .. } => arms
                .iter()
                .take(1)
                .for_each(|a| reads(&a.cond, &[], &mut found)),
            k::StmtKind::While { cond, .. } => reads(cond, &[], &mut found),
            _ => {}
        }
        self.emit(found, out)
    }

    /// The permission checks of the reads of `e`.
    pub(super) fn read_checks(&self, e: &k::Expr, out: &mut Vec<k::Stmt>) {
        if self.check_permissions {
            let mut found = Vec::new();
            reads(e, &[], &mut found);
            self.emit(found, out)
        }
    }

    /// The method's precondition, lent by the caller (first work-item, before the
    /// kernel starts): all of every array goes back to the caller first, then the
    /// precondition's permissions are lent. Without a permission precondition the method
    /// keeps all of every array.
    pub(super) fn lend(&mut self, m: &Method, out: &mut Vec<k::Stmt>) -> Res<()> {
        let kinds = [
            ClauseKind::Requires,
            ClauseKind::Context,
            ClauseKind::ContextEverywhere,
        ];
        let asks = m.contract.iter().any(|c| {
            matches!(c, Clause::Spec { kind, expr, .. } if kinds.contains(kind) && has_permission(expr))
        });
        if !asks {
            return Ok(());
        }
        let s = &m.name.span;
        let mut arrays: Vec<(String, Vec<k::Expr>)> = self
            .arrays
            .iter()
            .map(|(a, d)| (a.clone(), d.clone()))
            .collect();
        arrays.sort_by(|a, b| a.0.cmp(&b.0));
        for (a, dims) in arrays {
            out.extend(self.every_element(&rn(&a), &dims, PermOp::Reclaim, s));
        }
        self.perm_clauses(&m.contract, &kinds, PermOp::Lend, out)
    }
}

impl Lowerer<'_> {
    /// `op` of all of every element of array `a` (of sizes `dims`):
    /// `for (i0 ..) for (i1 ..) op(a[i0][i1], 1, 1)`.
    pub(super) fn every_element(
        &self,
        a: &str,
        dims: &[k::Expr],
        op: PermOp,
        s: &Span,
    ) -> Vec<k::Stmt> {
        let vars: Vec<String> = (0..dims.len()).map(|d| format!("__all_{d}")).collect();
        let loc = ex(
            k::ExprKind::Index {
                array: ident(a, s),
                indices: vars.iter().map(|v| name(v, s)).collect(),
            },
            s,
        );
        let mut body = vec![perm_stmt(op, loc, Some((int(1, s), int(1, s))), s)];
        for (v, d) in vars.iter().zip(dims).rev() {
            body.push(set(v, bin(BinOp::Add, name(v, s), int(1, s), s), s));
            body = vec![block(
                vec![
                    decl(k::TypeName::Int, v, int(0, s), s),
                    st(
                        k::StmtKind::While {
                            cond: bin(BinOp::Lt, name(v, s), d.clone(), s),
                            body: Box::new(block(body, s)),
                        },
                        s,
                    ),
                ],
                s,
            )];
        }
        body
    }
}

/// The write of an element `target` (with the reads of its indices).
fn write(target: &k::LValue, span: &Span, out: &mut Vec<Access>) {
    if let k::LValue::Elem { array, indices } = target {
        indices.iter().for_each(|i| reads(i, &[], out));
        let loc = ex(
            k::ExprKind::Index {
                array: array.clone(),
                indices: indices.clone(),
            },
            span,
        );
        out.push((PermOp::Write, Vec::new(), loc));
    }
}

impl Lowerer<'_> {
    /// The checks of accesses found, each under its conditions; the method's own variables
    /// need none.
    fn emit(&self, found: Vec<Access>, out: &mut Vec<k::Stmt>) {
        for (op, guards, loc) in found {
            if matches!(&loc.kind, k::ExprKind::Index { array, .. } if self.unchecked.contains(&array.name))
            {
                continue;
            }
            let sp = loc.span.clone();
            let check = perm_stmt(op, loc, None, &sp);
            match guards
                .into_iter()
                .reduce(|a, b| bin(BinOp::LogAnd, a, b, &sp))
            {
                None => out.push(check),
                Some(g) => out.push(if_(g, vec![check], &sp)),
            }
        }
    }
}

/// An access found in an expression: what it needs, the conditions under which it is
/// evaluated, the element.
type Access = (PermOp, Vec<k::Expr>, k::Expr);

/// The elements `e` reads, each with the conditions under which it is read (`&&`, `||`
/// and `?:` evaluate their right operands only sometimes).
fn reads(e: &k::Expr, guards: &[k::Expr], out: &mut Vec<Access>) {
    let under = |g: k::Expr| {
        let mut v = guards.to_vec();
        v.push(g);
        v
    };
    match &e.kind {
        k::ExprKind::Index { indices, .. } => {
            indices.iter().for_each(|i| reads(i, guards, out));
            out.push((PermOp::Read, guards.to_vec(), e.clone()));
        }
        k::ExprKind::Binary(op @ (BinOp::LogAnd | BinOp::LogOr), a, b) => {
            reads(a, guards, out);
            let g = if *op == BinOp::LogAnd {
                (**a).clone()
            } else {
                not((**a).clone())
            };
            reads(b, &under(g), out);
        }
        k::ExprKind::Cond(c, a, b) => {
            reads(c, guards, out);
            reads(a, &under((**c).clone()), out);
            reads(b, &under(not((**c).clone())), out);
        }
        k::ExprKind::Binary(_, a, b) => {
            reads(a, guards, out);
            reads(b, guards, out);
        }
        k::ExprKind::Unary(_, a) | k::ExprKind::Cast(_, a) => reads(a, guards, out),
        k::ExprKind::Call { args, .. } => args.iter().for_each(|a| reads(a, guards, out)),
        _ => {}
    }
}
