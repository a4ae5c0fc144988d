//! CUDA's function pointers to device functions, as GPUVerify's suite uses them: a kernel
//! takes one as an argument, picks one by a condition, returns one from a helper, and
//! calls through it. The core has no code addresses, so a function pointer is an `int`:
//! the *number* of the device function it points to (1 for the first device function of
//! the file, 2 for the next, ...; 0 is null). Taking a function's address gives its
//! number, and a call through a pointer is a choice among direct calls on that number:
//!
//! ```text
//! (*f)(v, i)   ~>   ({ float r; if (f == 1) r = twice(v, i);
//!                      else if (f == 2) r = half(v, i);
//!                      else __ksim_non_null(0); r; })
//! ```
//!
//! The arms are the file's device functions of the pointer's type (the possible targets);
//! a pointer that holds none of them (null) faults as a null dereference. A kernel
//! argument of a function-pointer type is a value of the launch: the kernel starts with
//! the precondition that it is null or one of the numbers of its type (a violation is the
//! launch's fault). Converting a function pointer to a data pointer is refused.

use super::convert::Converter;
use super::cuda::{call, name_expr};
use super::json::Node;
use crate::ast::{BinOp, Span};
use crate::cl::ast::*;
use crate::diag::Diagnostic;

type Res<T> = Result<T, Diagnostic>;

/// The annotation a call through a pointer with no target makes fail: a null dereference.
pub const NO_TARGET: &str = "__ksim_non_null";

/// The function type a printed function-pointer type points to: `float (*)(float *, int)`
/// → `float (float *, int)`; `None` for another type.
pub fn pointee(text: &str) -> Option<String> {
    let at = text.find("(*")?;
    let rest = &text[at + 2..];
    let close = rest.find(')')?;
    let quals = &rest[..close];
    if !quals
        .split_whitespace()
        .all(|w| matches!(w, "const" | "volatile" | "__restrict"))
    {
        return None;
    }
    let params = rest[close + 1..].trim_start();
    params
        .starts_with('(')
        .then(|| format!("{} {params}", text[..at].trim_end()))
}

/// The printed type of a node, desugared (a typedef name is its type).
fn printed(n: &Node) -> &str {
    n.ty.as_ref().map_or("", |t| {
        t.desugared_qual_type.as_deref().unwrap_or(&t.qual_type)
    })
}

/// Whether a node's type is a function pointer.
pub fn is_fn_ptr(n: &Node) -> bool {
    pointee(printed(n)).is_some()
}

fn int(value: u64, span: &Span) -> Expr {
    Expr {
        kind: ExprKind::Int {
            value,
            unsigned: false,
            long: false,
        },
        span: span.clone(),
    }
}

fn bin(op: BinOp, a: Expr, b: Expr, span: &Span) -> Expr {
    Expr {
        kind: ExprKind::Binary(op, Box::new(a), Box::new(b)),
        span: span.clone(),
    }
}

fn stmt(kind: StmtKind, span: &Span) -> Stmt {
    Stmt {
        kind,
        span: span.clone(),
    }
}

/// The device functions of a file, numbered from 1 in the order they are declared.
#[derive(Debug, Default)]
pub struct Functions {
    /// Name (a template instance's as a launch gives it) and printed function type.
    list: Vec<(String, String)>,
}

impl Functions {
    /// Records a device function (again: the number of its first declaration stays).
    pub fn add(&mut self, name: &str, ty: &str) {
        if !self.list.iter().any(|(n, _)| n == name) {
            self.list.push((name.to_string(), ty.to_string()));
        }
    }

    /// The number of the device function `name`.
    fn number(&self, name: &str) -> Option<u64> {
        let i = self.list.iter().position(|(n, _)| n == name)?;
        Some(i as u64 + 1)
    }

    /// The device functions of function type `ty`, with their numbers.
    fn of_type<'a>(&'a self, ty: &'a str) -> impl Iterator<Item = (u64, &'a str)> + 'a {
        (1..)
            .zip(&self.list)
            .filter(move |(_, (_, t))| t == ty)
            .map(|(i, (n, _))| (i, n.as_str()))
    }
}

impl Converter<'_> {
    /// The number of the device function `d` names (its address).
    pub(super) fn function_value(&self, d: &Node, span: &Span) -> Res<ExprKind> {
        let name = self.function_name(d);
        match self.functions.number(&name) {
            Some(n) => Ok(int(n, span).kind),
            None => Err(Diagnostic::new(
                format!(
                    "not supported yet: the address of `{name}` (a function pointer points to \
                     a device function of this file)"
                ),
                span.clone(),
            )),
        }
    }

    /// A call through the function pointer `callee` (its type `R (*)(A...)`): a choice
    /// among direct calls of the device functions of type `R (A...)` on the pointer's
    /// value.
    pub(super) fn pointer_call(&mut self, callee: &Node, args: &[Node], span: &Span) -> Res<Expr> {
        let Some(fn_type) = pointee(printed(callee)) else {
            return Err(Diagnostic::new(
                "not supported yet: calling something other than a function name",
                span.clone(),
            ));
        };
        // `(*f)(...)`, `(**f)(...)`: the pointer is `f`.
        let mut p = super::convert::strip_implicit(callee);
        while matches!(p.kind.as_str(), "ParenExpr" | "UnaryOperator")
            && (p.kind == "ParenExpr" || p.opcode.as_deref() == Some("*"))
        {
            match p.inner.first() {
                Some(x) => p = super::convert::strip_implicit(x),
                None => break,
            }
        }
        let pointer = self.expr(p)?;
        self.temps += 1;
        let k = self.temps;
        let mut stmts = Vec::new();
        // The pointer is read once: a name as it is, anything else into a temporary.
        let f = match pointer.kind {
            ExprKind::Name(_) => pointer,
            _ => {
                let name = format!("__ksim_fn{k}");
                stmts.push(stmt(
                    StmtKind::Decl(vec![self.temp(&name, "int", pointer, span)?]),
                    span,
                ));
                name_expr(&name, span)
            }
        };
        let ret_text = fn_type.split('(').next().unwrap_or("").trim();
        let ret = (ret_text != "void").then(|| format!("__ksim_ret{k}"));
        if let Some(r) = &ret {
            let ty = self.printed_type(ret_text, span)?;
            stmts.push(stmt(
                StmtKind::Decl(vec![Decl {
                    ty,
                    name: Ident {
                        name: r.clone(),
                        span: span.clone(),
                    },
                    init: None,
                    span: span.clone(),
                }]),
                span,
            ));
        }
        let no_target = stmt(
            StmtKind::Expr(Expr {
                kind: call(NO_TARGET, vec![int(0, span)], span),
                span: span.clone(),
            }),
            span,
        );
        let targets: Vec<(u64, String)> = self
            .functions
            .of_type(&fn_type)
            .map(|(n, name)| (n, name.to_string()))
            .collect();
        let mut chain = no_target;
        for (n, name) in targets.into_iter().rev() {
            let out = self.call_args(&fn_type, args)?;
            let direct = Expr {
                kind: call(&name, out, span),
                span: span.clone(),
            };
            let arm = match &ret {
                Some(r) => Expr {
                    kind: ExprKind::Assign {
                        op: None,
                        target: Box::new(name_expr(r, span)),
                        value: Box::new(direct),
                    },
                    span: span.clone(),
                },
                None => direct,
            };
            chain = stmt(
                StmtKind::If {
                    cond: bin(BinOp::Eq, f.clone(), int(n, span), span),
                    then: Box::new(stmt(StmtKind::Expr(arm), span)),
                    els: Some(Box::new(chain)),
                },
                span,
            );
        }
        stmts.push(chain);
        Ok(Expr {
            kind: ExprKind::StmtExpr(stmts, ret.map(|r| Box::new(name_expr(&r, span)))),
            span: span.clone(),
        })
    }

    /// `__requires(f == 0 | f == 1 | ...)` for a kernel parameter `f` of a function-pointer
    /// type: the launch passes null or a device function of its type.
    pub(super) fn fn_ptr_requires(&self, param: &Node, span: &Span) -> Option<Stmt> {
        let fn_type = pointee(printed(param))?;
        let f = name_expr(param.name.as_deref()?, span);
        let cond = self.functions.of_type(&fn_type).map(|(n, _)| n).fold(
            bin(BinOp::Eq, f.clone(), int(0, span), span),
            |c, n| {
                bin(
                    BinOp::BitOr,
                    c,
                    bin(BinOp::Eq, f.clone(), int(n, span), span),
                    span,
                )
            },
        );
        Some(stmt(
            StmtKind::Expr(Expr {
                kind: call("__requires", vec![cond], span),
                span: span.clone(),
            }),
            span,
        ))
    }

    /// A cast between a function pointer and a data pointer, refused (a function pointer
    /// is a number here, not an address).
    pub(super) fn fn_ptr_cast(&self, cast: &Node, operand: &Node, span: &Span) -> Res<()> {
        let data_ptr = |n: &Node| printed(n).contains('*') && !is_fn_ptr(n);
        if is_fn_ptr(cast) && data_ptr(operand) || is_fn_ptr(operand) && data_ptr(cast) {
            return Err(Diagnostic::new(
                "not supported yet: converting between a function pointer and a data pointer \
                 (a function pointer is the number of a device function here)",
                span.clone(),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_function_pointer_types() {
        assert_eq!(
            pointee("float (*)(float *, unsigned int)").as_deref(),
            Some("float (float *, unsigned int)")
        );
        assert_eq!(pointee("int (*const)(int)").as_deref(), Some("int (int)"));
        assert_eq!(pointee("int (*)[4]"), None, "a pointer to an array");
        assert_eq!(pointee("int *"), None);
    }

    #[test]
    fn numbers_functions_from_one_by_first_declaration() {
        let mut f = Functions::default();
        f.add("twice", "int (int)");
        f.add("half", "float (float)");
        f.add("twice", "int (int)");
        f.add("thrice", "int (int)");
        assert_eq!(f.number("twice"), Some(1));
        assert_eq!(f.number("thrice"), Some(3));
        assert_eq!(f.number("none"), None);
        let ints: Vec<_> = f.of_type("int (int)").collect();
        assert_eq!(ints, [(1, "twice"), (3, "thrice")]);
    }
}
