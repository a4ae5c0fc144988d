//! What a failed specification annotation (S-ASSERT, [`lang::core::StmtKind::Check`])
//! reports: the variables and parameters its condition reads, with their values. Shared by
//! the reference semantics and the fast executor so that both report a failure in the same
//! words.

use lang::core::{Expr, ExprKind, Kernel, ParamId, VarId};

/// A name the condition of an annotation reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mention {
    Var(VarId),
    Param(ParamId),
}

/// The variables and parameters `cond` reads, in order of first mention.
pub fn mentions(cond: &Expr) -> Vec<Mention> {
    fn walk(e: &Expr, out: &mut Vec<Mention>) {
        let m = match &e.kind {
            ExprKind::Var(v) => Some(Mention::Var(*v)),
            ExprKind::Param(p) => Some(Mention::Param(*p)),
            _ => None,
        };
        if let Some(m) = m {
            if !out.contains(&m) {
                out.push(m);
            }
            return;
        }
        match &e.kind {
            ExprKind::Load { index, .. } => index.iter().for_each(|i| walk(i, out)),
            ExprKind::Unary(_, a)
            | ExprKind::Cast(a)
            | ExprKind::Bits(a)
            | ExprKind::Log2(a)
            | ExprKind::Deref(a)
            | ExprKind::Addr { offset: a, .. } => walk(a, out),
            ExprKind::Binary(_, a, b)
            | ExprKind::Min(a, b)
            | ExprKind::Max(a, b)
            | ExprKind::PtrAdd(a, b) => {
                walk(a, out);
                walk(b, out);
            }
            ExprKind::Math(_, args) | ExprKind::IntFn(_, args) => {
                args.iter().for_each(|a| walk(a, out))
            }
            ExprKind::Cond(c, a, b) => {
                walk(c, out);
                walk(a, out);
                walk(b, out);
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(cond, &mut out);
    out
}

/// `name = value` for a mention, as a fault lists it.
pub fn describe(kernel: &Kernel, m: Mention, value: &crate::Value) -> String {
    let name = match m {
        Mention::Var(v) => &kernel.vars[v].name,
        Mention::Param(p) => &kernel.params[p].name,
    };
    format!("{name} = {value}")
}
