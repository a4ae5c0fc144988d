//! In-kernel `memcpy` and `memset` (and clang's `__builtin_` forms) of CUDA, as copies of
//! whole elements, so that the engines check each element's bounds and races as for any
//! other access:
//!
//! ```text
//! memcpy(d, s, n)  ~>  for (k = 0; k < n / sizeof(T); k++) d[k] = s[k];
//! memset(d, c, n)  ~>  for (k = 0; k < n / sizeof(T); k++) d[k] = (T)((uchar)c * 0x0101...);
//! ```
//!
//! where `T` is the element type both pointers have (a struct copies as a struct
//! assignment). The length must be known when the kernel is read (a literal, `sizeof`,
//! arithmetic of them) and be a whole number of elements; a copy between different element
//! types, or of part of an element, is a byte-level copy, which is refused by name, as is a
//! `memset` of a non-integer element with a byte other than 0. A null pointer argument is a
//! null dereference (C leaves `memcpy(0, s, n)` undefined, even for `n == 0`).

use super::convert::{strip_implicit, Converter};
use super::cuda::{base_bytes, call, name_expr};
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

fn int(value: u64, span: &Span) -> Expr {
    ex(
        ExprKind::Int {
            value,
            unsigned: true,
            long: true,
        },
        span,
    )
}

fn refuse<T>(what: String, span: &Span) -> Res<T> {
    Err(Diagnostic::new(
        format!("not supported yet: {what}"),
        span.clone(),
    ))
}

/// Whether an argument is a null pointer constant (`0`, `NULL`, `nullptr`).
fn is_null(n: &Node) -> bool {
    let n = strip_implicit(n);
    match n.kind.as_str() {
        "CXXNullPtrLiteralExpr" => true,
        "IntegerLiteral" => n.value.as_ref().and_then(|v| v.as_str()) == Some("0"),
        "ParenExpr" | "CStyleCastExpr" => n.inner.first().is_some_and(is_null),
        _ => false,
    }
}

/// Whether evaluating `n` may change memory or call a function (it is read once per
/// element).
pub(super) fn has_effects(n: &Node) -> bool {
    matches!(
        n.kind.as_str(),
        "CallExpr" | "CompoundAssignOperator" | "CXXMemberCallExpr" | "CXXOperatorCallExpr"
    ) || n.kind == "BinaryOperator" && n.opcode.as_deref() == Some("=")
        || n.kind == "UnaryOperator" && matches!(n.opcode.as_deref(), Some("++" | "--"))
        || n.inner.iter().any(has_effects)
}

impl Converter<'_> {
    /// `memcpy(d, s, n)` (`set`: `memset(d, c, n)`), as a loop over whole elements.
    pub(super) fn mem_call(
        &mut self,
        name: &str,
        args: &[Node],
        set: bool,
        span: &Span,
    ) -> Res<ExprKind> {
        let [d, s, n] = args else {
            return refuse(format!("`{name}` with {} arguments", args.len()), span);
        };
        if is_null(d) || !set && is_null(s) {
            // The check fails: the copy dereferences null.
            return Ok(call(super::funcptr::NO_TARGET, vec![int(0, span)], span));
        }
        for a in [d, s] {
            if has_effects(a) {
                return refuse(
                    format!("`{name}` with an argument that has side effects"),
                    &self.span(a),
                );
            }
        }
        let elem = self.pointee_type(d, name, span)?;
        if !set && self.pointee_type(s, name, span)? != elem {
            return refuse(
                format!("`{name}` between different element types (a byte-level copy)"),
                span,
            );
        }
        let size = self.size_of(&elem).ok_or_else(|| {
            Diagnostic::new(
                format!("not supported yet: `{name}` of `{}`", elem.base.name()),
                span.clone(),
            )
        })?;
        let Some(len) = self.const_len(n) else {
            return refuse(
                format!("`{name}` with a length not known when the kernel is read"),
                &self.span(n),
            );
        };
        if len % size != 0 {
            return refuse(
                format!(
                    "`{name}` of {len} bytes, part of an element of {size} bytes (a \
                     byte-level copy)"
                ),
                span,
            );
        }
        let value = if set {
            Some(self.fill(s, &elem, span)?)
        } else {
            None
        };
        // One element: a plain assignment; more: a loop over them.
        let count = len / size;
        let k = if count == 1 {
            int(0, span)
        } else {
            self.temps += 1;
            name_expr(&format!("__ksim_k{}", self.temps), span)
        };
        let target = self.element(d, &k, span)?;
        let value = match value {
            Some(v) => v,
            None => self.element(s, &k, span)?,
        };
        let copy = ex(
            ExprKind::Assign {
                op: None,
                target: Box::new(target),
                value: Box::new(value),
            },
            span,
        );
        let stmt = |kind| Stmt {
            kind,
            span: span.clone(),
        };
        let ExprKind::Name(var) = &k.kind else {
            return Ok(copy.kind);
        };
        let init = self.temp(var, "unsigned long", int(0, span), span)?;
        let lp = stmt(StmtKind::For {
            init: Some(Box::new(stmt(StmtKind::Decl(vec![init])))),
            cond: Some(ex(
                ExprKind::Binary(BinOp::Lt, Box::new(k.clone()), Box::new(int(count, span))),
                span,
            )),
            step: Some(ex(
                ExprKind::IncDec(IncDec::PreInc, Box::new(k.clone())),
                span,
            )),
            body: Box::new(stmt(StmtKind::Expr(copy))),
        });
        Ok(ExprKind::StmtExpr(vec![lp], None))
    }

    /// Element `k` from where pointer argument `p` points: `A[i + k]` for `&A[i]` (a
    /// struct element is reached so, not through a pointer to it), `x` for `&x` and
    /// `k == 0`, else `p[k]`.
    fn element(&mut self, p: &Node, k: &Expr, span: &Span) -> Res<Expr> {
        let p = strip_implicit(p);
        let zero = matches!(k.kind, ExprKind::Int { value: 0, .. });
        if p.kind == "UnaryOperator" && p.opcode.as_deref() == Some("&") {
            if let Some(x) = p.inner.first().map(strip_implicit) {
                if x.kind == "ArraySubscriptExpr" && x.inner.len() == 2 {
                    let (a, i) = (self.expr(&x.inner[0])?, self.expr(&x.inner[1])?);
                    let i = if zero {
                        i
                    } else {
                        ex(
                            ExprKind::Binary(BinOp::Add, Box::new(i), Box::new(k.clone())),
                            span,
                        )
                    };
                    return Ok(ex(ExprKind::Index(Box::new(a), Box::new(i)), span));
                }
                if zero {
                    return self.expr(x);
                }
            }
        }
        let p = self.expr(p)?;
        Ok(ex(ExprKind::Index(Box::new(p), Box::new(k.clone())), span))
    }

    /// The element type a pointer argument points to.
    fn pointee_type(&mut self, p: &Node, name: &str, span: &Span) -> Res<Type> {
        let p = strip_implicit(p);
        let mut ty = self.printed_type(p.ty.as_ref().map_or("", |t| t.qual_type.as_str()), span)?;
        // A pointer's element, or an array's (which decays to a pointer to it).
        if ty.pointers.pop().is_none() && (ty.arrays.is_empty() || ty.arrays.remove(0).is_none()) {
            return refuse(format!("`{name}` of this argument"), span);
        }
        if ty.base == Base::Void && ty.pointers.is_empty() {
            return refuse(
                format!("`{name}` through a `void *` (a byte-level copy)"),
                span,
            );
        }
        // The element type, whatever memory it is in and however qualified.
        ty.space = AddrSpace::Private;
        ty.is_const = false;
        ty.is_volatile = false;
        ty.span = 0..0;
        Ok(ty)
    }

    /// The value every element gets from `memset`'s byte `c`: the byte repeated (an
    /// integer or vector of integers), or zero.
    fn fill(&mut self, c: &Node, elem: &Type, span: &Span) -> Res<Expr> {
        let scalar = match &elem.base {
            Base::Vector(e, _) => e.as_ref(),
            b => b,
        };
        let integer = matches!(
            scalar,
            Base::Bool
                | Base::Char { .. }
                | Base::Short { .. }
                | Base::Int { .. }
                | Base::Long { .. }
                | Base::Size { .. }
        );
        if !elem.pointers.is_empty() || !elem.arrays.is_empty() {
            return refuse("`memset` of pointers or arrays".into(), span);
        }
        let byte = if integer {
            // `(uchar)c * 0x0101010101010101`, converted to the element type: each byte c.
            let uchar = Type {
                base: Base::Char { unsigned: true },
                ..elem.clone()
            };
            let c = ex(
                ExprKind::Cast(Box::new(uchar), Box::new(self.expr(c)?)),
                span,
            );
            ex(
                ExprKind::Binary(
                    BinOp::Mul,
                    Box::new(c),
                    Box::new(int(0x0101_0101_0101_0101, span)),
                ),
                span,
            )
        } else if self.const_len(c) == Some(0)
            && matches!(scalar, Base::Float | Base::Double | Base::Half)
        {
            int(0, span)
        } else {
            return refuse(
                format!(
                    "`memset` of `{}` with a byte other than 0 (a byte-level fill)",
                    elem.base.name()
                ),
                span,
            );
        };
        let scalar_ty = Type {
            base: scalar.clone(),
            ..elem.clone()
        };
        let v = ex(ExprKind::Cast(Box::new(scalar_ty), Box::new(byte)), span);
        Ok(match elem.base {
            Base::Vector(..) => ex(ExprKind::VecLit(Box::new(elem.clone()), vec![v]), span),
            _ => v,
        })
    }

    /// The value of a length known when the kernel is read: literals, `sizeof` and their
    /// arithmetic.
    fn const_len(&self, n: &Node) -> Option<u64> {
        let n = strip_implicit(n);
        let sub = |i: usize| n.inner.get(i).and_then(|x| self.const_len(x));
        match n.kind.as_str() {
            "IntegerLiteral" | "ConstantExpr" if n.value.is_some() => {
                n.value.as_ref()?.as_str()?.parse().ok()
            }
            "ParenExpr" | "CStyleCastExpr" | "ConstantExpr" => sub(0),
            "UnaryExprOrTypeTraitExpr" if n.name.as_deref() == Some("sizeof") => {
                let ty = match &n.arg_type {
                    Some(t) => self.printed_type(&t.qual_type, &(0..0)).ok()?,
                    None => self
                        .printed_type(n.inner.first()?.ty.as_ref()?.qual_type.as_str(), &(0..0))
                        .ok()?,
                };
                self.size_of(&ty)
            }
            "BinaryOperator" => {
                let (a, b) = (sub(0)?, sub(1)?);
                match n.opcode.as_deref()? {
                    "+" => a.checked_add(b),
                    "-" => a.checked_sub(b),
                    "*" => a.checked_mul(b),
                    "/" => a.checked_div(b),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// The size in bytes of a type (C's layout: members at multiples of their alignment).
    fn size_of(&self, ty: &Type) -> Option<u64> {
        self.size_align(ty).map(|(s, _)| s)
    }

    fn size_align(&self, ty: &Type) -> Option<(u64, u64)> {
        let one = if !ty.pointers.is_empty() {
            (8, 8)
        } else if let Base::Struct(tag) = &ty.base {
            let def = self.structs.iter().find(|s| s.tag == *tag)?;
            let (mut size, mut align) = (0u64, 1u64);
            for f in &def.fields {
                let (s, a) = self.size_align(&f.ty)?;
                align = align.max(a);
                size = if def.is_union {
                    size.max(s)
                } else {
                    size.div_ceil(a) * a + s
                };
            }
            (size.div_ceil(align) * align, align)
        } else {
            let s = base_bytes(&ty.base)?;
            (s, s)
        };
        let mut n = 1;
        for a in &ty.arrays {
            match a.as_ref().map(|e| &e.kind) {
                Some(ExprKind::Int { value, .. }) => n *= value,
                _ => return None,
            }
        }
        Some((one.0 * n, one.1))
    }
}
