//! Pretty-printer for the desugared core form, in the notation of POPL 2014 Figure 4:
//! `v := e`, `A[e1] := e2`, `if (e) {ss1} else {ss2}`, `while (e) {ss}`, `barrier` (with
//! its fence when not both spaces: `barrier(local)`), and `v := atomic_add(A[e1], e2)`;
//! pointer values as C writes them: `&A[e]`, `null`, `(p + e)`, `*(int *)p`, `*p := e`.

use crate::core::{BlockId, Expr, ExprKind, Fence, Kernel, Lit, StmtKind};
use std::fmt::Write;

/// The whole kernel: parameters, arrays, variables and the body.
pub fn print_core(k: &Kernel) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "kernel {} (core form)", k.name);
    for p in &k.params {
        let _ = writeln!(out, "  param {} : {} ({:?})", p.name, p.ty.name(), p.kind);
    }
    for a in &k.arrays {
        let dims: String = a.dims.iter().map(|d| format!("[{}]", expr(k, d))).collect();
        let _ = writeln!(
            out,
            "  array {}{} : {}{} {:?}",
            a.name,
            dims,
            if a.is_const { "const " } else { "" },
            a.elem.name(),
            a.space
        );
    }
    for (i, v) in k.vars.iter().enumerate() {
        let _ = writeln!(out, "  var {} : {}", var_name(k, i), v.ty.name());
    }
    block(k, Kernel::BODY, 1, &mut out);
    out
}

/// Variables are printed by name, with `#slot` where several share a name.
fn var_name(k: &Kernel, v: usize) -> String {
    let name = &k.vars[v].name;
    if k.vars.iter().filter(|x| &x.name == name).count() > 1 {
        format!("{name}#{v}")
    } else {
        name.clone()
    }
}

fn block(k: &Kernel, b: BlockId, depth: usize, out: &mut String) {
    let pad = "    ".repeat(depth);
    for s in &k.blocks[b] {
        match &s.kind {
            StmtKind::Assign { var, value } => {
                let _ = writeln!(out, "{pad}{} := {};", var_name(k, *var), top(k, value));
            }
            StmtKind::Store {
                array,
                index,
                value,
            } => {
                let idx: String = index.iter().map(|i| format!("[{}]", top(k, i))).collect();
                let _ = writeln!(
                    out,
                    "{pad}{}{idx} := {};",
                    k.arrays[*array].name,
                    expr(k, value)
                );
            }
            StmtKind::StoreAt { ptr, value } => {
                let _ = writeln!(out, "{pad}*{} := {};", expr(k, ptr), top(k, value));
            }
            StmtKind::If { cond, then, els } => {
                let _ = writeln!(out, "{pad}if ({}) {{", top(k, cond));
                block(k, *then, depth + 1, out);
                // An `else` holding only an `if` is printed `} else if (...) {`, flat.
                let mut els = *els;
                while let Some(StmtKind::If {
                    cond,
                    then,
                    els: next,
                }) = k.else_if(els).map(|s| &s.kind)
                {
                    let _ = writeln!(out, "{pad}}} else if ({}) {{", top(k, cond));
                    block(k, *then, depth + 1, out);
                    els = *next;
                }
                let _ = writeln!(out, "{pad}}} else {{");
                block(k, els, depth + 1, out);
                let _ = writeln!(out, "{pad}}}");
            }
            StmtKind::While { cond, body } => {
                let _ = writeln!(out, "{pad}while ({}) {{", top(k, cond));
                block(k, *body, depth + 1, out);
                let _ = writeln!(out, "{pad}}}");
            }
            StmtKind::Barrier { flags: Some(v), .. } => {
                let _ = writeln!(out, "{pad}barrier({});", k.vars[*v].name);
            }
            StmtKind::Barrier { fence, .. } => {
                let b = if *fence == Fence::BOTH {
                    "barrier"
                } else {
                    fence.ksim()
                };
                let _ = writeln!(out, "{pad}{b};");
            }
            StmtKind::Check { annotation, cond } => {
                let _ = writeln!(out, "{pad}{}({});", annotation.name(), top(k, cond));
            }
            StmtKind::Perm { .. } => {
                let _ = writeln!(out, "{pad}{};", perm_text(k, &s.kind));
            }
            StmtKind::Atomic {
                op,
                array,
                index,
                args,
                result,
            } => {
                let idx: String = index.iter().map(|i| format!("[{}]", top(k, i))).collect();
                let mut call = format!("{}({}{idx}", op.name(), k.arrays[*array].name);
                for a in args {
                    let _ = write!(call, ", {}", top(k, a));
                }
                call.push(')');
                match result {
                    Some(v) => {
                        let _ = writeln!(out, "{pad}{} := {call};", var_name(k, *v));
                    }
                    None => {
                        let _ = writeln!(out, "{pad}{call};");
                    }
                }
            }
        }
    }
}

/// A permission statement ([`StmtKind::Perm`]) as `.ksim` writes it:
/// `__perm_take(A[i], 1, 2)`, `__perm_read(A[i])`.
pub fn perm_text(k: &Kernel, s: &StmtKind) -> String {
    let StmtKind::Perm {
        op,
        array,
        index,
        amount,
    } = s
    else {
        return String::new();
    };
    let idx: String = index.iter().map(|i| format!("[{}]", top(k, i))).collect();
    let mut call = format!("{}({}{idx}", op.name(), k.arrays[*array].name);
    if op.moves() {
        call += &format!(", {}, {}", top(k, &amount[0]), top(k, &amount[1]));
    }
    call + ")"
}

/// An expression in a position that needs no parentheses of its own.
fn top(k: &Kernel, e: &Expr) -> String {
    let s = expr(k, e);
    match e.kind {
        ExprKind::Binary(..) | ExprKind::Cond(..) | ExprKind::PtrAdd(..) => {
            s[1..s.len() - 1].to_string()
        }
        _ => s,
    }
}

/// A core expression, fully parenthesised, casts shown.
pub fn expr(k: &Kernel, e: &Expr) -> String {
    match &e.kind {
        ExprKind::Lit(Lit::Int(v)) => v.to_string(),
        ExprKind::Lit(Lit::Uint(v)) => format!("{v}u"),
        ExprKind::Lit(Lit::Bool(b)) => b.to_string(),
        ExprKind::Lit(Lit::Float(f)) => format!("{f:?}"),
        ExprKind::Lit(Lit::Long(v)) => format!("{v}L"),
        ExprKind::Lit(Lit::Ulong(v)) => format!("{v}UL"),
        ExprKind::Lit(Lit::Double(f)) => format!("{f:?}"),
        ExprKind::Identity => "1_T".into(),
        ExprKind::Var(v) => var_name(k, *v),
        ExprKind::Param(p) => k.params[*p].name.clone(),
        ExprKind::Builtin(b) => b.text(),
        ExprKind::Load { array, index } => {
            let idx: String = index.iter().map(|i| format!("[{}]", top(k, i))).collect();
            format!("{}{idx}", k.arrays[*array].name)
        }
        ExprKind::Null => "null".into(),
        ExprKind::Addr { array, offset } => {
            format!("&{}[{}]", k.arrays[*array].name, top(k, offset))
        }
        ExprKind::PtrAdd(p, off) => format!("({} + {})", expr(k, p), expr(k, off)),
        ExprKind::Deref(p) => format!("*({} *){}", e.ty.name(), expr(k, p)),
        ExprKind::Unary(op, a) => {
            let sym = match op {
                crate::ast::UnOp::Neg => "-",
                crate::ast::UnOp::Not => "!",
                crate::ast::UnOp::BitNot => "~",
            };
            format!("{sym}{}", expr(k, a))
        }
        ExprKind::Binary(op, a, b) => format!("({} {} {})", expr(k, a), op.symbol(), expr(k, b)),
        ExprKind::Cond(c, a, b) => format!("({} ? {} : {})", expr(k, c), expr(k, a), expr(k, b)),
        ExprKind::Cast(a) => format!("({}){}", e.ty.name(), expr(k, a)),
        ExprKind::Bits(a) => format!("as_{}({})", e.ty.name(), top(k, a)),
        ExprKind::Log2(a) => format!("log2({})", expr(k, a)),
        ExprKind::Min(a, b) => format!("min({}, {})", expr(k, a), expr(k, b)),
        ExprKind::Max(a, b) => format!("max({}, {})", expr(k, a), expr(k, b)),
        ExprKind::Math(f, args) => {
            let args: Vec<String> = args.iter().map(|a| expr(k, a)).collect();
            format!("{}({})", f.name(), args.join(", "))
        }
        ExprKind::IntFn(f, args) => {
            let args: Vec<String> = args.iter().map(|a| expr(k, a)).collect();
            format!("{}({})", f.name(), args.join(", "))
        }
    }
}
