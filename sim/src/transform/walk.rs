//! Walks over the surface tree, for the optimisations that look at every statement or
//! expression: each visits in source order and recurses into every sub-node.

use lang::ast::{Block, Expr, ExprKind, LValue, Stmt, StmtKind};

/// Calls `f` on every statement of `block`, outer before inner.
pub fn stmts<'a>(block: &'a Block, f: &mut impl FnMut(&'a Stmt)) {
    for s in &block.stmts {
        stmt(s, f);
    }
}

fn stmt<'a>(s: &'a Stmt, f: &mut impl FnMut(&'a Stmt)) {
    f(s);
    for child in children(s) {
        stmt(child, f);
    }
}

/// The statements directly inside `s`.
fn children(s: &Stmt) -> Vec<&Stmt> {
    match &s.kind {
        StmtKind::If { arms, els } => (arms.iter().map(|a| &a.then))
            .chain(els.as_deref())
            .collect(),
        StmtKind::While { body, .. } => vec![body],
        StmtKind::For {
            init, step, body, ..
        } => (init.as_deref().into_iter())
            .chain(step.as_deref())
            .chain(std::iter::once(&**body))
            .collect(),
        StmtKind::Block(b) => b.stmts.iter().collect(),
        _ => Vec::new(),
    }
}

/// The index expressions of an assignment target.
fn lvalue(t: &LValue) -> Vec<&Expr> {
    match t {
        LValue::Var(_) => Vec::new(),
        LValue::Elem { indices, .. } => indices.iter().collect(),
    }
}

/// The expressions directly in `s` (not in its sub-statements), index expressions of an
/// element it assigns included.
fn own_exprs(s: &Stmt) -> Vec<&Expr> {
    match &s.kind {
        StmtKind::Decl { init, .. } => init.iter().collect(),
        StmtKind::Assign { target, value, .. } => {
            let mut v = lvalue(target);
            v.push(value);
            v
        }
        StmtKind::Step { target, .. } => lvalue(target),
        StmtKind::If { arms, .. } => arms.iter().map(|a| &a.cond).collect(),
        StmtKind::While { cond, .. } => vec![cond],
        StmtKind::For { cond, .. } => cond.iter().collect(),
        StmtKind::BarrierFlags(e) | StmtKind::Call(e) => vec![e],
        StmtKind::Block(_) | StmtKind::Barrier(_) => Vec::new(),
    }
}

/// Calls `f` on `e` and every sub-expression, outer first.
fn expr<'a>(e: &'a Expr, f: &mut impl FnMut(&'a Expr)) {
    f(e);
    match &e.kind {
        ExprKind::Index { indices, .. } => indices.iter().for_each(|i| expr(i, f)),
        ExprKind::Unary(_, a) | ExprKind::Cast(_, a) => expr(a, f),
        ExprKind::Binary(_, a, b) => {
            expr(a, f);
            expr(b, f);
        }
        ExprKind::Cond(a, b, c) => {
            expr(a, f);
            expr(b, f);
            expr(c, f);
        }
        ExprKind::Call { args, .. } => args.iter().for_each(|a| expr(a, f)),
        _ => {}
    }
}

/// An access to an array element: the array's name and its index expressions, from an
/// expression (`A[i]`) or an assignment target (`A[i] = ...`).
pub struct Access<'a> {
    pub array: &'a lang::ast::Ident,
    pub indices: &'a [Expr],
}

/// Every array access of `block`, in source order (a target before its value).
pub fn accesses<'a>(block: &'a Block) -> Vec<Access<'a>> {
    let mut out = Vec::new();
    stmts(block, &mut |s| {
        let target = match &s.kind {
            StmtKind::Assign { target, .. } | StmtKind::Step { target, .. } => Some(target),
            _ => None,
        };
        if let Some(LValue::Elem { array, indices }) = target {
            out.push(Access { array, indices });
        }
        for e in own_exprs(s) {
            expr(e, &mut |x| {
                if let ExprKind::Index { array, indices } = &x.kind {
                    out.push(Access { array, indices });
                }
            });
        }
    });
    out
}
