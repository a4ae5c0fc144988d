//! The paper's notation, for teaching views (`ksim step`, `ksim trace --core`): statements
//! in the core form of POPL 2014 Figure 4, the one the rules of Figures 6 and 7 are stated
//! over, and monoid elements as Definition 4.3 writes them.
//!
//! The interval monoid's identity is printed `1_I`, as the paper writes it (Definition 4.3),
//! not `1`, which reads as the integer one, nor `ε`, which the paper keeps for the empty
//! statement sequence of a finished thread; intervals are `[i,j]` and the non-contiguous
//! sums `⊤`.

use crate::monoid::Interval;
use crate::reference::Rule;
use crate::value::Value;
use lang::ast::Span;
use lang::core::{Kernel, Stmt, StmtKind};
use lang::print_core::expr;

/// A value in the paper's notation: as [`Value`]'s `Display`, except the interval
/// monoid's identity, which is `1_I`.
pub fn value(v: &Value) -> String {
    match v {
        Value::Interval(Interval::Id) => "1_I".into(),
        _ => v.to_string(),
    }
}

/// A variable's name, with `#slot` where several variables share it (as `check --core`).
pub fn var_name(k: &Kernel, v: usize) -> String {
    let name = &k.vars[v].name;
    if k.vars.iter().filter(|x| &x.name == name).count() > 1 {
        format!("{name}#{v}")
    } else {
        name.clone()
    }
}

/// One core statement on one line: `v := e`, `A[e1] := e2`, `if (e) {…} else {…}`,
/// `while (e) {…}`, `barrier` (or its fence, as `check --core` prints it),
/// `v := atomic_add(A[e], e2)`.
pub fn stmt(k: &Kernel, s: &Stmt) -> String {
    match &s.kind {
        StmtKind::Assign { var, value } => format!("{} := {}", var_name(k, *var), top(k, value)),
        StmtKind::Store {
            array,
            index,
            value,
        } => {
            let idx: String = index.iter().map(|i| format!("[{}]", top(k, i))).collect();
            format!("{}{idx} := {}", k.arrays[*array].name, top(k, value))
        }
        StmtKind::StoreAt { ptr, value } => {
            format!("*{} := {}", expr(k, ptr), top(k, value))
        }
        StmtKind::If { cond, .. } => format!("if ({}) {{…}} else {{…}}", top(k, cond)),
        StmtKind::While { cond, .. } => format!("while ({}) {{…}}", top(k, cond)),
        StmtKind::Barrier { flags: Some(v), .. } => {
            format!("barrier({})", var_name(k, *v))
        }
        StmtKind::Barrier { fence, .. } if *fence == lang::core::Fence::BOTH => "barrier".into(),
        StmtKind::Barrier { fence, .. } => fence.ksim().into(),
        StmtKind::Check { annotation, cond } => {
            format!("{}({})", annotation.name(), top(k, cond))
        }
        StmtKind::Perm { .. } => lang::print_core::perm_text(k, &s.kind),
        StmtKind::Atomic {
            op,
            array,
            index,
            args,
            result,
        } => {
            let idx: String = index.iter().map(|i| format!("[{}]", top(k, i))).collect();
            let args: String = args.iter().map(|a| format!(", {}", top(k, a))).collect();
            let call = format!("{}({}{idx}{args})", op.name(), k.arrays[*array].name);
            match result {
                Some(v) => format!("{} := {call}", var_name(k, *v)),
                None => call,
            }
        }
    }
}

/// An expression without its outermost parentheses.
fn top(k: &Kernel, e: &lang::core::Expr) -> String {
    let s = expr(k, e);
    if s.starts_with('(')
        && s.ends_with(')')
        && matches!(
            e.kind,
            lang::core::ExprKind::Binary(..) | lang::core::ExprKind::Cond(..)
        )
    {
        s[1..s.len() - 1].to_string()
    } else {
        s
    }
}

/// The core statement a step executed, found from its span and rule: the core statements
/// of a desugared `for` have the spans of its parts, and the rule tells an assignment from
/// a store, an `if` from a `while`. (Two core statements of the same kind with the same
/// span would be told apart by neither; the desugaring makes none in ksim's examples.)
pub fn find_stmt<'k>(k: &'k Kernel, span: &Span, rule: Rule) -> Option<&'k Stmt> {
    let kind_fits = |s: &Stmt| {
        matches!(
            (&s.kind, rule),
            (StmtKind::Assign { .. }, Rule::SAssign)
                | (
                    StmtKind::Store { .. } | StmtKind::StoreAt { .. },
                    Rule::SArray
                )
                | (StmtKind::If { .. }, Rule::SIteT | Rule::SIteF)
                | (StmtKind::While { .. }, Rule::SLoopT | Rule::SLoopF)
                | (StmtKind::Atomic { .. }, Rule::SAtomic)
                | (StmtKind::Barrier { .. }, Rule::KBarrier)
                | (
                    StmtKind::Check { .. } | StmtKind::Perm { .. },
                    Rule::SAssert
                )
        )
    };
    k.blocks
        .iter()
        .flatten()
        .find(|s| &s.span == span && kind_fits(s))
}
