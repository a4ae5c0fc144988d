//! A method call as a statement of a method (`forward(N, a, b, c);`): the callee is
//! inlined. Its parameters are replaced by the arguments (an array parameter by the
//! caller's array, a scalar by the argument's expression), and the callee is then lowered
//! as the caller's own statements are: its `requires` checked at the call (the callee's
//! `par` regions take its precondition's permissions from what the caller holds), its
//! body, its `ensures` checked at the return, `\old` meaning the values at the call.

use super::*;
use std::collections::HashSet;

/// `e` with the free names of `map` replaced (a quantifier's variable hides them).
fn expr(e: &Expr, map: &HashMap<String, Expr>, bound: &HashSet<String>) -> Expr {
    let sub = |x: &Expr| Box::new(expr(x, map, bound));
    let kind = match &e.kind {
        ExprKind::Name(n) if !bound.contains(n) => match map.get(n) {
            Some(v) => return v.clone(),
            None => e.kind.clone(),
        },
        ExprKind::Index(a, i) => ExprKind::Index(sub(a), sub(i)),
        ExprKind::Field(a, f) => ExprKind::Field(sub(a), f.clone()),
        ExprKind::Call(f, args) => ExprKind::Call(
            f.clone(),
            args.iter().map(|a| expr(a, map, bound)).collect(),
        ),
        ExprKind::Special(f, args) => ExprKind::Special(
            f.clone(),
            args.iter().map(|a| expr(a, map, bound)).collect(),
        ),
        ExprKind::Unary(op, a) => ExprKind::Unary(*op, sub(a)),
        ExprKind::Binary(op, a, b) => ExprKind::Binary(*op, sub(a), sub(b)),
        ExprKind::Cond(a, b, c) => ExprKind::Cond(sub(a), sub(b), sub(c)),
        ExprKind::Quant { q, var, cond, body } => {
            let mut inner = bound.clone();
            inner.insert(var.name.clone());
            ExprKind::Quant {
                q: *q,
                var: var.clone(),
                cond: Box::new(expr(cond, map, &inner)),
                body: Box::new(expr(body, map, &inner)),
            }
        }
        other => other.clone(),
    };
    Expr {
        kind,
        span: e.span.clone(),
    }
}

fn clauses(c: &[Clause], map: &HashMap<String, Expr>) -> Vec<Clause> {
    c.iter()
        .map(|c| match c {
            Clause::Spec {
                kind,
                expr: e,
                span,
            } => Clause::Spec {
                kind: *kind,
                expr: expr(e, map, &HashSet::new()),
                span: span.clone(),
            },
            ghost => ghost.clone(),
        })
        .collect()
}

fn block(b: &Block, map: &HashMap<String, Expr>) -> Block {
    Block {
        stmts: b.stmts.iter().map(|s| stmt(s, map)).collect(),
        span: b.span.clone(),
    }
}

/// `s` with the names of `map` replaced; a declaration in `s` is the callee's own and
/// hides nothing of the map (the callee's parameters keep their names' meaning).
fn stmt(s: &Stmt, map: &HashMap<String, Expr>) -> Stmt {
    let e = |x: &Expr| expr(x, map, &HashSet::new());
    let bs = |s: &Stmt| Box::new(stmt(s, map));
    let kind = match &s.kind {
        StmtKind::Decl { ty, name, init } => StmtKind::Decl {
            ty: ty.clone(),
            name: name.clone(),
            init: init.as_ref().map(e),
        },
        StmtKind::Assign { target, value } => StmtKind::Assign {
            target: e(target),
            value: e(value),
        },
        StmtKind::Step { target, decrement } => StmtKind::Step {
            target: e(target),
            decrement: *decrement,
        },
        StmtKind::Call(c) => StmtKind::Call(e(c)),
        StmtKind::If { cond, then, els } => StmtKind::If {
            cond: e(cond),
            then: bs(then),
            els: els.as_deref().map(bs),
        },
        StmtKind::While {
            contract,
            cond,
            body,
        } => StmtKind::While {
            contract: clauses(contract, map),
            cond: e(cond),
            body: bs(body),
        },
        StmtKind::For {
            contract,
            init,
            cond,
            step,
            body,
        } => StmtKind::For {
            contract: clauses(contract, map),
            init: init.as_deref().map(bs),
            cond: cond.as_ref().map(e),
            step: step.as_deref().map(bs),
            body: bs(body),
        },
        StmtKind::Block(b) => StmtKind::Block(block(b, map)),
        StmtKind::Par(ps) => StmtKind::Par(ps.iter().map(|p| par(p, map)).collect()),
        StmtKind::Parallel(ps) => StmtKind::Parallel(ps.iter().map(|p| par(p, map)).collect()),
        StmtKind::Barrier { name, contract } => StmtKind::Barrier {
            name: name.clone(),
            contract: clauses(contract, map),
        },
        StmtKind::Assert(x) => StmtKind::Assert(e(x)),
        StmtKind::Assume(x) => StmtKind::Assume(e(x)),
        StmtKind::Ghost(s) => StmtKind::Ghost(bs(s)),
        StmtKind::Return(x) => StmtKind::Return(x.as_ref().map(e)),
        StmtKind::Invariant { name, inv, body } => StmtKind::Invariant {
            name: name.clone(),
            inv: e(inv),
            body: block(body, map),
        },
        StmtKind::Atomic { name, body } => StmtKind::Atomic {
            name: name.clone(),
            body: block(body, map),
        },
    };
    Stmt {
        kind,
        span: s.span.clone(),
    }
}

fn par(p: &ParBlock, map: &HashMap<String, Expr>) -> ParBlock {
    let e = |x: &Expr| expr(x, map, &HashSet::new());
    ParBlock {
        name: p.name.clone(),
        iters: (p.iters.iter())
            .map(|it| Iter {
                name: it.name.clone(),
                lo: e(&it.lo),
                hi: e(&it.hi),
            })
            .collect(),
        contract: clauses(&p.contract, map),
        body: block(&p.body, map),
        span: p.span.clone(),
    }
}

/// The callee of call statement `c` with its parameters replaced by the call's
/// arguments: a method with a body, without a result.
pub(super) fn inline(program: &Program, c: &Expr) -> Res<Method> {
    let ExprKind::Call(f, args) = &c.kind else {
        return err(
            "only a call of a method stands here as a statement",
            &c.span,
        );
    };
    let methods = program.classes.iter().flat_map(|c| &c.methods);
    let Some(m) = methods.clone().find(|m| m.name.name == f.name) else {
        return err(format!("unknown method `{}`", f.name), &f.span);
    };
    let Some(MethodBody::Block(body)) = &m.body else {
        return err(
            format!(
                "method `{}` has no body to run: ksim cannot run a call of it",
                f.name
            ),
            &f.span,
        );
    };
    if m.pure || m.ret.base != Base::Void {
        return err(
            format!("the call of `{}` drops its result: only a `void` method's call stands as a statement", f.name),
            &c.span,
        );
    }
    if args.len() != m.params.len() {
        return err(
            format!("`{}` takes {} arguments", f.name, m.params.len()),
            &c.span,
        );
    }
    let mut map = HashMap::new();
    for ((ty, p), a) in m.params.iter().zip(args) {
        if !ty.dims.is_empty() && !matches!(a.kind, ExprKind::Name(_)) {
            return err(
                format!(
                    "the argument for array parameter `{}` of `{}` names an array of the caller",
                    p.name, f.name
                ),
                &a.span,
            );
        }
        map.insert(p.name.clone(), a.clone());
    }
    Ok(Method {
        contract: clauses(&m.contract, &map),
        pure: false,
        ret: m.ret.clone(),
        name: m.name.clone(),
        params: Vec::new(),
        body: Some(MethodBody::Block(block(body, &map))),
        span: m.span.clone(),
    })
}

impl Lowerer<'_> {
    /// The callee of call statement `c`, inlined, with its precondition's checks in
    /// `out` (and the values its postcondition's `\old` needs); the postcondition's
    /// checks are returned, for the caller to place at the return.
    pub(super) fn call_enter(
        &mut self,
        c: &Expr,
        out: &mut Vec<k::Stmt>,
    ) -> Res<(Method, Vec<k::Stmt>)> {
        let callee = inline(self.program, c)?;
        if self.depth >= 32 {
            return err(
                format!("`{}`: method calls nested (or recursive) deeper than 32 calls are not supported", callee.name.name),
                &c.span,
            );
        }
        if self.specs && !self.check_permissions && perm::mentions_permission(&callee) {
            self.note(
                &c.span,
                format!("the permissions in `{}`'s specifications are not checked: the calling method has none", callee.name.name),
            );
        }
        let mut post = Vec::new();
        self.old = Some(Vec::new());
        self.clauses(
            &callee.contract,
            &host::POST,
            Annotation::Ensures,
            &mut post,
        );
        let saved = self.old.take().unwrap_or_default();
        self.clauses(&callee.contract, &host::PRE, Annotation::CallRequires, out);
        out.extend(saved);
        self.depth += 1;
        Ok((callee, post))
    }

    /// A method call as a thread's statement: the callee's body runs in the thread.
    pub(super) fn call_in_thread(&mut self, c: &Expr, out: &mut Vec<k::Stmt>) -> Res<()> {
        let (callee, post) = self.call_enter(c, out)?;
        let everywhere = context_everywhere(&callee);
        let Some(MethodBody::Block(body)) = &callee.body else {
            unreachable!("inline gives a method with a body")
        };
        let mut v = Vec::new();
        let r = body
            .stmts
            .iter()
            .try_for_each(|s| self.stmt(s, &everywhere, &mut v));
        self.depth -= 1;
        r?;
        out.push(super::block(v, &c.span));
        out.extend(post);
        Ok(())
    }
}
