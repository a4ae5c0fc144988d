//! Pointer variables and pointer arithmetic (OpenCL C 1.2 §6.5, C99 §6.5.6), lowered to
//! the arrays ksim already has: a pointer whose target array is known statically at each
//! use is the pair (array, integer offset in elements). A pointer variable `p` becomes an
//! `int` variable holding its offset, and its target is fixed by the first assignment the
//! lowering sees:
//!
//! - `T *p = A;`, `p = &A[i];`, `p = A + k;`, `p = q;` set the offset (and the target);
//! - `p[k]` is `A[off + k]`, `*p` is `A[off]`, `*(p + k)` is `A[off + k]`;
//! - `p++`, `p += k`, `p -= k` move the offset; `&p[k]`, `p + k`, `(T *)p` are pointers again;
//! - passing `A + k`, `&A[i]` or a pointer variable to a helper binds its parameter likewise;
//! - `&x` of a `__local` scalar is element 0 of its one-element array;
//! - `&x` of a private variable points at the variable itself: `*p` and `p[0]` are `x`.
//!   Such a pointer never moves (arithmetic on it is refused), so its offset is always 0.
//!
//! Bounds are checked where the access happens, on the element it reaches (C forbids
//! arithmetic that leaves the array, but only an access can fault on a device).
//!
//! Refused with "not supported yet": a pointer whose target differs between assignments
//! (`p = x ? A : B`), null pointers, a cast that changes the element type (a `char *` view
//! of an `int` buffer: that needs byte-range memory, issue 9 item 3), pointers into
//! two-dimensional arrays, arithmetic on the address of a private variable, and a pointer
//! used as a value (compared, printed, subtracted).

use super::*;

/// A pointer variable: its element type and, once assigned, its target array.
pub(super) struct PtrVar {
    pub elem: TypeName,
    /// Components per pointee: `n` for a pointer to an `n`-vector, 1 for a scalar (which
    /// may view a vector array's components, see [`Lowerer::same_lanes_target`]).
    pub lanes: u8,
    /// The lowered array name; `None` before the first assignment.
    target: Option<String>,
    /// The source name, for messages.
    name: String,
}

/// A pointer value: an array and the offset (in elements) into it; `None` is offset 0.
/// `array` may instead name a private scalar variable (lowered names are unique), whose
/// pointers have offset 0.
pub(super) struct Ptr {
    pub array: String,
    pub offset: Option<k::Expr>,
}

fn add(a: Option<k::Expr>, b: k::Expr, span: &Span) -> k::Expr {
    match a {
        None => b,
        Some(a) => ex(
            k::ExprKind::Binary(BinOp::Add, Box::new(a), Box::new(b)),
            span,
        ),
    }
}

/// Whether `e` is a null pointer constant (`0`, `NULL`, `(T *)0`).
fn is_null(e: &cl::Expr) -> bool {
    match &e.kind {
        cl::ExprKind::Int { value: 0, .. } => true,
        cl::ExprKind::Name(n) => n == "NULL",
        cl::ExprKind::Cast(_, a) => is_null(a),
        _ => false,
    }
}

fn null<T>(span: &Span) -> Res<T> {
    unsupported("null pointers", span)
}

impl<'u> Lowerer<'u> {
    /// The lowered name of a 1D or 2D array (`dims`) named by `e`.
    pub(super) fn array_of_dims(&self, e: &cl::Expr, dims: usize) -> Option<String> {
        match &e.kind {
            cl::ExprKind::Name(n) => match self.lookup(n) {
                Some(Binding::Array(a)) if self.arrays[a].1 == dims => Some(a.clone()),
                _ => None,
            },
            _ => None,
        }
    }

    /// The offset variable of pointer variable `e`, if `e` names one.
    pub(super) fn pointer_name(&self, e: &cl::Expr) -> Option<String> {
        match &e.kind {
            cl::ExprKind::Name(n) => match self.lookup(n) {
                Some(Binding::Ptr(v)) => Some(v.clone()),
                _ => None,
            },
            _ => None,
        }
    }

    /// Whether `e` has a pointer type (syntactically: a buffer, array or pointer variable,
    /// an address, pointer arithmetic, a pointer cast, a choice between pointers).
    pub(super) fn is_pointer(&self, e: &cl::Expr) -> bool {
        use cl::ExprKind as E;
        match &e.kind {
            E::Name(n) => matches!(self.lookup(n), Some(Binding::Array(_) | Binding::Ptr(_))),
            E::AddrOf(_) => true,
            E::Binary(BinOp::Add, a, b) => self.is_pointer(a) || self.is_pointer(b),
            E::Binary(BinOp::Sub, a, b) => self.is_pointer(a) && !self.is_pointer(b),
            E::Cast(t, _) => !t.pointers.is_empty(),
            E::Cond(_, a, b) => self.is_pointer(a) || self.is_pointer(b),
            E::IncDec(_, a) | E::Assign { target: a, .. } => self.pointer_name(a).is_some(),
            E::Comma(_, b) => self.is_pointer(b),
            E::Plus(a) => self.is_pointer(a),
            E::Call { func, .. } => self
                .funcs
                .get(func.name.as_str())
                .is_some_and(|f| !f.ret.pointers.is_empty()),
            _ => false,
        }
    }

    /// The (array, offset) a pointer expression denotes; side effects go to `pre`.
    pub(super) fn pointer(&mut self, e: &cl::Expr, pre: &mut Vec<k::Stmt>) -> Res<Ptr> {
        use cl::ExprKind as E;
        let span = &e.span;
        match &e.kind {
            E::Name(n) => match self.lookup(n).cloned() {
                Some(Binding::Array(a)) => Ok(Ptr {
                    array: a,
                    offset: None,
                }),
                Some(Binding::Ptr(v)) => match self.pointers[&v].target.clone() {
                    Some(a) => Ok(Ptr {
                        array: a,
                        offset: Some(name_expr(&v, span)),
                    }),
                    None => Err(Diagnostic::new(
                        format!("the pointer `{n}` is used before it is given a value"),
                        span.clone(),
                    )),
                },
                _ if is_null(e) => null(span),
                _ => Err(Diagnostic::new(
                    format!("`{n}` is not a pointer"),
                    span.clone(),
                )),
            },
            E::AddrOf(inner) => match &inner.kind {
                E::Name(n) => match self.lookup(n).cloned() {
                    Some(Binding::Cell(a)) | Some(Binding::Array(a)) => Ok(Ptr {
                        array: a,
                        offset: None,
                    }),
                    Some(Binding::Scalar(v)) => Ok(Ptr {
                        array: v,
                        offset: None,
                    }),
                    Some(Binding::Ptr(_)) => unsupported("pointers to pointers", span),
                    Some(Binding::Vector { .. }) => {
                        unsupported("the address of a private vector", span)
                    }
                    None => Err(Diagnostic::new(
                        format!("unknown name `{n}`"),
                        inner.span.clone(),
                    )),
                },
                E::Index(..) | E::Deref(_) => {
                    let (array, idx) = self.element(inner, pre)?;
                    let mut idx = self.source_indices(&array.name, idx);
                    if idx.is_empty() {
                        return Ok(Ptr {
                            array: array.name,
                            offset: None,
                        });
                    }
                    if idx.len() != 1 {
                        return unsupported("pointers into arrays of two dimensions", span);
                    }
                    Ok(Ptr {
                        array: array.name,
                        offset: idx.pop(),
                    })
                }
                _ => unsupported("taking the address of this expression", span),
            },
            E::Binary(op @ (BinOp::Add | BinOp::Sub), a, b) => {
                let (p, i) = if self.is_pointer(a) { (a, b) } else { (b, a) };
                if self.is_pointer(i) {
                    return unsupported("pointer differences and sums of pointers", span);
                }
                let p = self.pointer(p, pre)?;
                self.not_private(&p.array, span)?;
                let i = self.expr(i, pre)?;
                let i = if *op == BinOp::Sub {
                    ex(k::ExprKind::Unary(UnOp::Neg, Box::new(i)), span)
                } else {
                    i
                };
                Ok(Ptr {
                    offset: Some(add(p.offset, i, span)),
                    array: p.array,
                })
            }
            E::Cast(t, a) => {
                if is_null(a) {
                    return null(span);
                }
                if t.pointers.len() != 1 {
                    return unsupported("pointers to pointers", span);
                }
                let p = self.pointer(a, pre)?;
                let (elem, lanes) = self.pointee_type(t, span)?;
                self.same_element(&p.array, elem, span)?;
                if !self.is_private(&p.array) {
                    self.same_lanes_target(&p.array, lanes, span)?;
                }
                Ok(p)
            }
            E::Cond(c, a, b) => {
                let c = self.expr(c, pre)?;
                let (mut pa, mut pb) = (Vec::new(), Vec::new());
                let x = self.pointer(a, &mut pa)?;
                let y = self.pointer(b, &mut pb)?;
                if x.array != y.array {
                    return unsupported(
                        "a pointer whose target differs between paths (`?:` between two arrays)",
                        span,
                    );
                }
                if !(pa.is_empty() && pb.is_empty()) {
                    return unsupported("side effects in a `?:` between pointers", span);
                }
                let zero = || {
                    ex(
                        k::ExprKind::Int {
                            value: 0,
                            unsigned: false,
                        },
                        span,
                    )
                };
                let (oa, ob) = (x.offset.unwrap_or_else(zero), y.offset.unwrap_or_else(zero));
                Ok(Ptr {
                    array: x.array,
                    offset: Some(ex(
                        k::ExprKind::Cond(Box::new(c), Box::new(oa), Box::new(ob)),
                        span,
                    )),
                })
            }
            E::IncDec(op, a) => {
                let old = self.pointer(a, pre)?;
                self.not_private(&old.array, span)?;
                let v = self.pointer_name(a).expect("is_pointer checked");
                let dec = matches!(op, cl::IncDec::PreDec | cl::IncDec::PostDec);
                let step = st(
                    k::StmtKind::Step {
                        target: k::LValue::Var(ident(&v, span)),
                        decrement: dec,
                    },
                    span,
                );
                if matches!(op, cl::IncDec::PreInc | cl::IncDec::PreDec) {
                    pre.push(step);
                    return self.pointer(a, pre);
                }
                let t = self.temp("old", TypeName::Int, old.offset, span, pre);
                pre.push(step);
                Ok(Ptr {
                    array: old.array,
                    offset: Some(name_expr(&t, span)),
                })
            }
            E::Assign { target, .. } => {
                self.effect(e, pre)?;
                self.pointer(target, pre)
            }
            E::Comma(a, b) => {
                self.effect(a, pre)?;
                self.pointer(b, pre)
            }
            E::Plus(a) => self.pointer(a, pre),
            E::Call { func, .. } => unsupported(
                format!("functions returning a pointer (`{}`)", func.name),
                span,
            ),
            _ if is_null(e) => null(span),
            _ => unsupported("this pointer expression", span),
        }
    }

    /// Whether `target` is a private variable (not an array).
    fn is_private(&self, target: &str) -> bool {
        !self.arrays.contains_key(target)
    }

    /// Refuses arithmetic on a pointer to a private variable: it would leave the variable.
    fn not_private(&self, target: &str, span: &Span) -> Res<()> {
        if self.is_private(target) {
            return unsupported(
                "pointer arithmetic on the address of a private variable",
                span,
            );
        }
        Ok(())
    }

    /// Refuses moving pointer variable `var` when it points at a private variable.
    pub(super) fn movable(&self, var: &str, span: &Span) -> Res<()> {
        match &self.pointers[var].target {
            Some(t) => self.not_private(t, span),
            None => Ok(()),
        }
    }

    /// The element a pointer (plus an index) reaches; no indices for a private variable.
    pub(super) fn pointee(
        &mut self,
        p: Ptr,
        index: Option<k::Expr>,
        span: &Span,
    ) -> Res<(k::Ident, Vec<k::Expr>)> {
        if self.is_private(&p.array) {
            // Its offset is 0 (it never moves); only index 0 stays inside the variable.
            return match index {
                None
                | Some(k::Expr {
                    kind: k::ExprKind::Int { value: 0, .. },
                    ..
                }) => Ok((ident(&p.array, span), Vec::new())),
                Some(_) => unsupported(
                    "indexing a pointer to a private variable other than with 0",
                    span,
                ),
            };
        }
        if self.arrays[&p.array].1 != 1 {
            return unsupported(
                "a row of a two-dimensional array as a pointer (index it as `A[i][j]`)",
                span,
            );
        }
        let zero = ex(
            k::ExprKind::Int {
                value: 0,
                unsigned: false,
            },
            span,
        );
        let i = match (p.offset, index) {
            (None, None) => zero,
            (o, Some(i)) => add(o, i, span),
            (Some(o), None) => o,
        };
        Ok((
            ident(&p.array, span),
            self.thread_row(&p.array, vec![i], span),
        ))
    }

    /// The element type a pointer type points to, and its components (1 for a scalar):
    /// `float4 *` points to `float` elements 4 at a time.
    fn pointee_type(&self, t: &cl::Type, span: &Span) -> Res<(TypeName, u8)> {
        match &t.base {
            cl::Base::Void => unsupported("`void *` pointers", span),
            b => match self.vec_base(b, span)? {
                Some(shape) => Ok(shape),
                None => Ok((self.base(b, span)?, 1)),
            },
        }
    }

    /// Refuses a pointer to `lanes`-component elements into `array` unless it sees the
    /// array's elements whole (the same length) or one component at a time (a scalar
    /// pointer into a vector array: its slots are the components in memory order, 4 per
    /// 3-vector, as a `float *` view of a `float4` buffer sees them on a device).
    fn same_lanes_target(&self, array: &str, lanes: u8, span: &Span) -> Res<()> {
        let have = self.vec_arrays.get(array).copied().unwrap_or(1);
        if lanes != have && lanes != 1 {
            return unsupported(
                format!(
                    "a pointer cast that changes the vector length (elements of {have} seen as {lanes})"
                ),
                span,
            );
        }
        Ok(())
    }

    /// Refuses a pointer to `elem` into an array of another element type.
    fn same_element(&self, array: &str, elem: TypeName, span: &Span) -> Res<()> {
        let (have, dims) = match self.arrays.get(array) {
            Some(a) => *a,
            None => (self.types[array], 1),
        };
        if dims != 1 {
            return unsupported("pointers into arrays of two dimensions", span);
        }
        if have != elem {
            return unsupported(
                format!(
                    "a pointer cast that changes the element type (`{}` elements seen as `{}`: byte-level views)",
                    format!("{have:?}").to_lowercase(),
                    format!("{elem:?}").to_lowercase()
                ),
                span,
            );
        }
        Ok(())
    }

    /// Points pointer variable `var` at `array`; its target must stay the same.
    fn set_target(&mut self, var: &str, array: &str, span: &Span) -> Res<()> {
        let (elem, lanes) = (self.pointers[var].elem, self.pointers[var].lanes);
        self.same_element(array, elem, span)?;
        if !self.is_private(array) {
            self.same_lanes_target(array, lanes, span)?;
        } else if lanes != 1 {
            return unsupported("the address of a private vector", span);
        }
        let pv = self.pointers.get_mut(var).expect("a pointer variable");
        match &pv.target {
            Some(t) if t != array => unsupported(
                format!(
                    "a pointer whose target differs between assignments (`{}` points into `{t}` and `{array}`)",
                    pv.name
                ),
                span,
            ),
            _ => {
                pv.target = Some(array.to_string());
                Ok(())
            }
        }
    }

    /// Declares the offset variable of a new pointer variable `name` pointing at `p`.
    pub(super) fn pointer_var(
        &mut self,
        name: &str,
        (elem, lanes): (TypeName, u8),
        p: Ptr,
        span: &Span,
        out: &mut Vec<k::Stmt>,
    ) -> Res<String> {
        let var = self.declare_scalar(name, TypeName::Int);
        self.pointers.insert(
            var.clone(),
            PtrVar {
                elem,
                lanes,
                target: None,
                name: name.to_string(),
            },
        );
        self.set_target(&var, &p.array, span)?;
        let zero = ex(
            k::ExprKind::Int {
                value: 0,
                unsigned: false,
            },
            span,
        );
        out.push(st(
            k::StmtKind::Decl {
                ty: TypeName::Int,
                name: ident(&var, span),
                init: Some(p.offset.unwrap_or(zero)),
            },
            span,
        ));
        Ok(var)
    }

    /// `T *p;` or `T *p = e;` in a function body (any address space of the pointee).
    pub(super) fn pointer_decl(&mut self, d: &cl::Decl, out: &mut Vec<k::Stmt>) -> Res<()> {
        let span = &d.span;
        if d.ty.pointers.len() > 1 {
            return unsupported("pointers to pointers", &d.ty.span);
        }
        if !d.ty.arrays.is_empty() {
            return unsupported("arrays of pointers", &d.ty.span);
        }
        let (elem, lanes) = self.pointee_type(&d.ty, &d.ty.span)?;
        let var = match &d.init {
            None => {
                let var = self.declare_scalar(&d.name.name, TypeName::Int);
                self.pointers.insert(
                    var.clone(),
                    PtrVar {
                        elem,
                        lanes,
                        target: None,
                        name: d.name.name.clone(),
                    },
                );
                out.push(st(
                    k::StmtKind::Decl {
                        ty: TypeName::Int,
                        name: ident(&var, &d.name.span),
                        init: None,
                    },
                    span,
                ));
                var
            }
            Some(cl::Init::Expr(e)) => {
                if is_null(e) {
                    return null(&e.span);
                }
                if !self.is_pointer(e) {
                    return Err(Diagnostic::new(
                        format!(
                            "`{}` is a pointer; this is not a pointer value",
                            d.name.name
                        ),
                        e.span.clone(),
                    ));
                }
                let p = self.pointer(e, out)?;
                self.pointer_var(&d.name.name, (elem, lanes), p, &e.span, out)?
            }
            Some(cl::Init::List(_, s)) => {
                return Err(Diagnostic::new(
                    "a pointer cannot have an initialiser list",
                    s.clone(),
                ))
            }
        };
        self.bind(&d.name.name, Binding::Ptr(var));
        Ok(())
    }

    /// `p = e`, `p += k`, `p -= k` on pointer variable `var`.
    pub(super) fn pointer_assign(
        &mut self,
        var: &str,
        op: Option<BinOp>,
        value: &cl::Expr,
        span: &Span,
        out: &mut Vec<k::Stmt>,
    ) -> Res<()> {
        let v = match op {
            None => {
                if is_null(value) {
                    return null(&value.span);
                }
                if !self.is_pointer(value) {
                    return Err(Diagnostic::new(
                        format!(
                            "`{}` is a pointer; this is not a pointer value",
                            self.pointers[var].name
                        ),
                        value.span.clone(),
                    ));
                }
                let p = self.pointer(value, out)?;
                self.set_target(var, &p.array, span)?;
                p.offset.unwrap_or_else(|| {
                    ex(
                        k::ExprKind::Int {
                            value: 0,
                            unsigned: false,
                        },
                        span,
                    )
                })
            }
            Some(op @ (BinOp::Add | BinOp::Sub)) => {
                self.movable(var, span)?;
                if self.pointers[var].target.is_none() {
                    return Err(Diagnostic::new(
                        format!(
                            "the pointer `{}` is used before it is given a value",
                            self.pointers[var].name
                        ),
                        span.clone(),
                    ));
                }
                let k = self.expr(value, out)?;
                ex(
                    k::ExprKind::Binary(op, Box::new(name_expr(var, span)), Box::new(k)),
                    span,
                )
            }
            Some(op) => {
                return Err(Diagnostic::new(
                    format!("`{}=` does not apply to a pointer", op.symbol()),
                    span.clone(),
                ))
            }
        };
        // The offset is an `int`; an unsigned step converts as C's pointer arithmetic does
        // for offsets that fit.
        let v = ex(k::ExprKind::Cast(TypeName::Int, Box::new(v)), span);
        out.push(set(var, v, span));
        Ok(())
    }

    /// A helper's pointer parameter `p` bound to argument `a`: the caller's array when the
    /// argument is one and the helper never moves the parameter, else a pointer variable.
    pub(super) fn pointer_argument(
        &mut self,
        p: &cl::Param,
        a: &cl::Expr,
        written: &HashSet<String>,
        stmts: &mut Vec<k::Stmt>,
        pre: &mut Vec<k::Stmt>,
    ) -> Res<Binding> {
        if is_null(a) {
            return null(&a.span);
        }
        if !self.is_pointer(a) {
            return unsupported(
                "passing this expression as a pointer (a buffer, array, pointer or address)",
                &a.span,
            );
        }
        let (elem, lanes) = self.pointee_type(&p.ty, &p.ty.span)?;
        let ptr = self.pointer(a, pre)?;
        let pname = p.name.as_ref().map_or("arg", |n| n.name.as_str());
        if !self.is_private(&ptr.array) {
            self.same_lanes(&p.ty, &ptr.array, &a.span)?;
        }
        if ptr.offset.is_none() && !written.contains(pname) && !self.is_private(&ptr.array) {
            let (have, dims) = self.arrays[&ptr.array];
            if dims == 1 {
                self.same_element(&ptr.array, elem, &a.span)?;
            } else if have != elem {
                return unsupported("a pointer cast that changes the element type", &a.span);
            }
            return Ok(Binding::Array(ptr.array));
        }
        let var = self.pointer_var(pname, (elem, lanes), ptr, &a.span, stmts)?;
        Ok(Binding::Ptr(var))
    }
}
