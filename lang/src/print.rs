//! The pretty-printer: [`ast::Kernel`] → canonical source text.
//!
//! Four-space indentation, one statement per line, and the fewest parentheses that still make
//! [`crate::parse()`] rebuild the same tree: `parse(print_kernel(k)) == k` up to spans (see
//! [`erase_spans`]) for every tree the parser can produce.
//!
//! Trees the parser cannot produce are printed as well as possible: a negative or non-finite
//! float literal, a compound assignment with an operator that has no `op=` form (`&&=`), or an
//! `if` without `else` as the then-branch of an `if` with `else` (the dangling-else case, which
//! is printed with braces around the then-branch).

use std::fmt::Write;

use crate::ast::{
    AssignOp, BinOp, Block, Expr, ExprKind, Kernel, LValue, LaunchItem, LaunchKey, Param, Space,
    Stmt, StmtKind, TypeName, UnOp,
};

const INDENT: &str = "    ";

/// Print a whole kernel, ending with a newline.
pub fn print_kernel(k: &Kernel) -> String {
    let mut out = String::new();
    let params: Vec<String> = k.params.iter().map(print_param).collect();
    let _ = write!(out, "kernel {}({})", k.name.name, params.join(", "));
    if !k.launch.is_empty() {
        let items: Vec<String> = k.launch.iter().map(print_launch_item).collect();
        let _ = write!(out, " launch({})", items.join(", "));
    }
    out.push(' ');
    write_block(&mut out, &k.body, 0);
    out.push('\n');
    out
}

/// One expression, with minimal parentheses.
pub fn print_expr(e: &Expr) -> String {
    let mut out = String::new();
    write_expr(&mut out, e, 0);
    out
}

/// A one-line rendering of a statement for traces: the header of `if` / `while` / `for`
/// (`while (offset < n)`), `{ ... }` for a block, and the full statement otherwise.
pub fn print_stmt_head(s: &Stmt) -> String {
    match &s.kind {
        StmtKind::If { arms, .. } => format!("if ({})", print_expr(&arms[0].cond)),
        StmtKind::While { cond, .. } => format!("while ({})", print_expr(cond)),
        StmtKind::For {
            init, cond, step, ..
        } => for_header(init.as_deref(), cond.as_ref(), step.as_deref()),
        StmtKind::Block(_) => "{ ... }".to_string(),
        _ => {
            let mut out = String::new();
            write_stmt(&mut out, s, 0);
            out
        }
    }
}

fn type_str(t: TypeName) -> &'static str {
    crate::check::ty_of(t).name()
}

fn print_param(p: &Param) -> String {
    match p {
        Param::Array {
            is_const,
            space,
            elem,
            name,
            dims,
            ..
        } => {
            let mut s = String::new();
            if *is_const {
                s.push_str("const ");
            }
            s.push_str(match space {
                Space::Local => "local ",
                Space::Global => "global ",
            });
            let _ = write!(s, "{} {}", type_str(*elem), name.name);
            for d in dims {
                let _ = write!(s, "[{}]", print_expr(d));
            }
            s
        }
        Param::Scalar { ty, name, .. } => format!("{} {}", type_str(*ty), name.name),
    }
}

fn print_launch_item(item: &LaunchItem) -> String {
    let key = match item.key {
        LaunchKey::Groups => "groups",
        LaunchKey::LocalSize => "local_size",
    };
    if item.more.is_empty() {
        return format!("{key} = {}", print_expr(&item.value));
    }
    let dims: Vec<String> = std::iter::once(&item.value)
        .chain(&item.more)
        .map(print_expr)
        .collect();
    format!("{key} = ({})", dims.join(", "))
}

fn write_block(out: &mut String, b: &Block, indent: usize) {
    if b.stmts.is_empty() {
        out.push_str("{}");
        return;
    }
    out.push_str("{\n");
    for s in &b.stmts {
        push_indent(out, indent + 1);
        write_stmt(out, s, indent + 1);
        out.push('\n');
    }
    push_indent(out, indent);
    out.push('}');
}

fn push_indent(out: &mut String, indent: usize) {
    for _ in 0..indent {
        out.push_str(INDENT);
    }
}

fn lvalue_str(lv: &LValue) -> String {
    match lv {
        LValue::Var(id) => id.name.clone(),
        LValue::Elem { array, indices } => {
            let mut s = array.name.clone();
            for i in indices {
                let _ = write!(s, "[{}]", print_expr(i));
            }
            s
        }
    }
}

fn assign_op_str(op: AssignOp) -> String {
    match op {
        AssignOp::Set => "=".to_string(),
        AssignOp::Compound(b) => format!("{}=", b.symbol()),
    }
}

/// A declaration, assignment or step without the `;` (also used in `for` headers).
fn simple_str(s: &Stmt) -> String {
    match &s.kind {
        StmtKind::Decl { ty, name, init } => match init {
            Some(e) => format!("{} {} = {}", type_str(*ty), name.name, print_expr(e)),
            None => format!("{} {}", type_str(*ty), name.name),
        },
        StmtKind::Assign { target, op, value } => format!(
            "{} {} {}",
            lvalue_str(target),
            assign_op_str(*op),
            print_expr(value)
        ),
        StmtKind::Step { target, decrement } => {
            format!(
                "{}{}",
                lvalue_str(target),
                if *decrement { "--" } else { "++" }
            )
        }
        // Not a simple statement: print it whole on one line (not re-parseable in a header).
        _ => {
            let mut out = String::new();
            write_stmt(&mut out, s, 0);
            out.split_whitespace().collect::<Vec<_>>().join(" ")
        }
    }
}

fn for_header(init: Option<&Stmt>, cond: Option<&Expr>, step: Option<&Stmt>) -> String {
    let mut s = String::from("for (");
    if let Some(i) = init {
        s.push_str(&simple_str(i));
    }
    s.push(';');
    if let Some(c) = cond {
        s.push(' ');
        s.push_str(&print_expr(c));
    }
    s.push(';');
    if let Some(st) = step {
        s.push(' ');
        s.push_str(&simple_str(st));
    }
    s.push(')');
    s
}

/// Does this statement end with an `if` that has no `else` (so that a following `else`
/// would attach to it)?
fn ends_with_open_if(s: &Stmt) -> bool {
    match &s.kind {
        StmtKind::If { els: None, .. } => true,
        StmtKind::If { els: Some(e), .. } => ends_with_open_if(e),
        // (`els` is no `if`, so this recursion follows nesting, never a chain.)
        StmtKind::While { body, .. } | StmtKind::For { body, .. } => ends_with_open_if(body),
        _ => false,
    }
}

/// Write a statement whose first line is already indented; later lines get `indent`.
fn write_stmt(out: &mut String, s: &Stmt, indent: usize) {
    match &s.kind {
        StmtKind::Decl { .. } | StmtKind::Assign { .. } | StmtKind::Step { .. } => {
            out.push_str(&simple_str(s));
            out.push(';');
        }
        StmtKind::Barrier(fence) => {
            out.push_str(fence.ksim());
            out.push(';');
        }
        StmtKind::BarrierFlags(e) => {
            out.push_str(&format!("barrier({});", print_expr(e)));
        }
        StmtKind::Call(e) => {
            out.push_str(&print_expr(e));
            out.push(';');
        }
        StmtKind::Block(b) => write_block(out, b, indent),
        StmtKind::If { arms, els } => {
            // One line per arm, `else if` flat, however long the chain.
            for (k, arm) in arms.iter().enumerate() {
                let _ = write!(out, "if ({})", print_expr(&arm.cond));
                let more = k + 1 < arms.len() || els.is_some();
                let then_ends_block = if more && ends_with_open_if(&arm.then) {
                    // Dangling else: braces keep the `else` on this `if`.
                    out.push_str(" {\n");
                    push_indent(out, indent + 1);
                    write_stmt(out, &arm.then, indent + 1);
                    out.push('\n');
                    push_indent(out, indent);
                    out.push('}');
                    true
                } else {
                    write_body(out, &arm.then, indent)
                };
                if more {
                    if then_ends_block {
                        out.push_str(" else");
                    } else {
                        out.push('\n');
                        push_indent(out, indent);
                        out.push_str("else");
                    }
                    if k + 1 < arms.len() {
                        out.push(' ');
                    }
                }
            }
            if let Some(e) = els {
                write_body(out, e, indent);
            }
        }
        StmtKind::While { cond, body } => {
            let _ = write!(out, "while ({})", print_expr(cond));
            write_body(out, body, indent);
        }
        StmtKind::For {
            init,
            cond,
            step,
            body,
        } => {
            out.push_str(&for_header(init.as_deref(), cond.as_ref(), step.as_deref()));
            write_body(out, body, indent);
        }
    }
}

/// The body of `if` / `else` / `while` / `for`: a block on the same line (` {`), anything
/// else after a space on the same line. Returns whether the body was a block.
fn write_body(out: &mut String, body: &Stmt, indent: usize) -> bool {
    out.push(' ');
    write_stmt(out, body, indent);
    matches!(body.kind, StmtKind::Block(_))
}

// ----- expressions -----

/// Binding strength used for parenthesisation (matches the parser's Pratt levels).
const PREC_COND: u8 = 2;
const PREC_UNARY: u8 = 13;
const PREC_ATOM: u8 = 15;

fn bin_prec(op: BinOp) -> u8 {
    op.precedence() + 2
}

fn expr_prec(e: &Expr) -> u8 {
    match &e.kind {
        ExprKind::Cond(..) => PREC_COND,
        ExprKind::Binary(op, ..) => bin_prec(*op),
        ExprKind::Unary(..) | ExprKind::Cast(..) => PREC_UNARY,
        _ => PREC_ATOM,
    }
}

/// Write `e`, parenthesised if it binds more loosely than `min`.
fn write_expr(out: &mut String, e: &Expr, min: u8) {
    if expr_prec(e) < min {
        out.push('(');
        write_expr(out, e, 0);
        out.push(')');
        return;
    }
    match &e.kind {
        ExprKind::Int { value, unsigned } => {
            let _ = write!(out, "{value}{}", if *unsigned { "u" } else { "" });
        }
        ExprKind::Float(x) => out.push_str(&float_str(*x)),
        // Only the OpenCL front end writes these; `.ksim` reads the text back as a float.
        ExprKind::Double(x) => {
            let _ = write!(out, "{x:?}");
        }
        ExprKind::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        ExprKind::Identity => out.push_str("identity"),
        ExprKind::Name(n) => out.push_str(n),
        ExprKind::Index { array, indices } => {
            out.push_str(&array.name);
            for i in indices {
                out.push('[');
                write_expr(out, i, 0);
                out.push(']');
            }
        }
        ExprKind::Call { func, args } => {
            out.push_str(&func.name);
            out.push('(');
            for (n, a) in args.iter().enumerate() {
                if n > 0 {
                    out.push_str(", ");
                }
                write_expr(out, a, 0);
            }
            out.push(')');
        }
        ExprKind::Unary(op, x) => {
            let sym = match op {
                UnOp::Neg => "-",
                UnOp::Not => "!",
                UnOp::BitNot => "~",
            };
            out.push_str(sym);
            // `- -x` must not become the token `--`.
            if *op == UnOp::Neg && starts_with_minus(x) {
                out.push(' ');
            }
            write_expr(out, x, PREC_UNARY);
        }
        ExprKind::Cast(t, x) => {
            let _ = write!(out, "({}) ", type_str(*t));
            write_expr(out, x, PREC_UNARY);
        }
        ExprKind::Binary(op, l, r) => {
            let p = bin_prec(*op);
            write_expr(out, l, p);
            let _ = write!(out, " {} ", op.symbol());
            write_expr(out, r, p + 1);
        }
        ExprKind::Cond(c, a, b) => {
            write_expr(out, c, PREC_COND + 1);
            out.push_str(" ? ");
            write_expr(out, a, 0);
            out.push_str(" : ");
            write_expr(out, b, PREC_COND);
        }
    }
}

fn starts_with_minus(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Unary(UnOp::Neg, _) => true,
        ExprKind::Float(x) => x.is_sign_negative(),
        ExprKind::Double(x) => x.is_sign_negative(),
        _ => false,
    }
}

/// A float literal that reads back as exactly the same `f32`.
fn float_str(x: f32) -> String {
    let s = format!("{x:?}");
    if x.is_finite() && !s.contains(['.', 'e', 'E']) {
        format!("{s}.0")
    } else {
        s
    }
}

// ----- span erasure -----

/// Set every span in the tree to `0..0`, so that trees can be compared structurally.
pub fn erase_spans(k: &mut Kernel) {
    k.span = 0..0;
    k.name.span = 0..0;
    for p in &mut k.params {
        match p {
            Param::Array {
                name, dims, span, ..
            } => {
                name.span = 0..0;
                *span = 0..0;
                dims.iter_mut().for_each(erase_expr);
            }
            Param::Scalar { name, span, .. } => {
                name.span = 0..0;
                *span = 0..0;
            }
        }
    }
    for item in &mut k.launch {
        item.span = 0..0;
        erase_expr(&mut item.value);
        item.more.iter_mut().for_each(erase_expr);
    }
    erase_block(&mut k.body);
}

fn erase_block(b: &mut Block) {
    b.span = 0..0;
    b.stmts.iter_mut().for_each(erase_stmt);
}

fn erase_lvalue(lv: &mut LValue) {
    match lv {
        LValue::Var(id) => id.span = 0..0,
        LValue::Elem { array, indices } => {
            array.span = 0..0;
            indices.iter_mut().for_each(erase_expr);
        }
    }
}

fn erase_stmt(s: &mut Stmt) {
    s.span = 0..0;
    match &mut s.kind {
        StmtKind::Decl { name, init, .. } => {
            name.span = 0..0;
            init.iter_mut().for_each(erase_expr);
        }
        StmtKind::Assign { target, value, .. } => {
            erase_lvalue(target);
            erase_expr(value);
        }
        StmtKind::Step { target, .. } => erase_lvalue(target),
        StmtKind::If { arms, els } => {
            for arm in arms {
                arm.span = 0..0;
                erase_expr(&mut arm.cond);
                erase_stmt(&mut arm.then);
            }
            if let Some(e) = els {
                erase_stmt(e);
            }
        }
        StmtKind::While { cond, body } => {
            erase_expr(cond);
            erase_stmt(body);
        }
        StmtKind::For {
            init,
            cond,
            step,
            body,
        } => {
            if let Some(i) = init {
                erase_stmt(i);
            }
            cond.iter_mut().for_each(erase_expr);
            if let Some(s) = step {
                erase_stmt(s);
            }
            erase_stmt(body);
        }
        StmtKind::Block(b) => erase_block(b),
        StmtKind::Barrier(_) => {}
        StmtKind::BarrierFlags(e) => erase_expr(e),
        StmtKind::Call(e) => erase_expr(e),
    }
}

fn erase_expr(e: &mut Expr) {
    e.span = 0..0;
    match &mut e.kind {
        ExprKind::Int { .. }
        | ExprKind::Float(_)
        | ExprKind::Double(_)
        | ExprKind::Bool(_)
        | ExprKind::Identity
        | ExprKind::Name(_) => {}
        ExprKind::Index { array, indices } => {
            array.span = 0..0;
            indices.iter_mut().for_each(erase_expr);
        }
        ExprKind::Call { func, args } => {
            func.span = 0..0;
            args.iter_mut().for_each(erase_expr);
        }
        ExprKind::Unary(_, x) | ExprKind::Cast(_, x) => erase_expr(x),
        ExprKind::Binary(_, l, r) => {
            erase_expr(l);
            erase_expr(r);
        }
        ExprKind::Cond(c, a, b) => {
            erase_expr(c);
            erase_expr(a);
            erase_expr(b);
        }
    }
}
