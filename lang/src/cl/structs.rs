//! Structs (C99 §6.7.2.1), scalarised: ksim's core has scalars and arrays only, so a
//! struct becomes one core variable or array per member, named `NAME.member` (nested
//! structs: `NAME.inner.member`), which is the name race reports, `--arg`/`--input` and
//! the outputs use.
//!
//! - a private or `__local` struct `S s;` is a variable per member (`s.a`, `s.b`); an array
//!   of structs `S L[2][3]` is an array per member (`L.a[2][3]`), so `L[1][2].a` is
//!   `L.a[1][2]`;
//! - a kernel parameter passed by value `struct S q` is a scalar parameter per member
//!   (`q.a`, `q.b`); a pointer member is a buffer parameter of its own, as a pointer
//!   parameter is;
//! - a buffer of structs `__global S *G` is a buffer per member (struct of arrays): `G[i].y`
//!   and `G->y` are `G.y[i]` and `G.y[0]`. Two work-items touching different members of
//!   one element never conflict (distinct bytes in C too), the same member of one element
//!   does;
//! - `a = b` of two structs of the same type is a member-wise assignment;
//! - `S s = {1, 2};` initialises the members in order, the rest zero.
//!
//! Structs passed to and returned from helpers and pointers to structs are in
//! [`structval`](super::structval). Members are rewritten to those names before an
//! expression is lowered ([`desugar`]), so every other construct (pointers, vectors,
//! atomics, flattened arrays) applies to them unchanged. Not modelled, each a clear error:
//! unions (their members share bytes), `?:` of structs, byte views of a struct
//! (`(char *)G`), array members (of scalars) inside a buffer of structs, and initialiser
//! lists of arrays of structs. Pointer members of a
//! buffer of structs are pointer values in memory ([`structptr`](super::structptr)). An array member
//! `int a[N]` of a by-value parameter `q` is a scalar parameter per element (`q.a[0]`, ...)
//! copied into the private array `q.a`; an array of pointers `__global int *p[N]` a buffer
//! parameter per element, each the value of a pointer variable `q.p[k]` (indexed with a
//! constant, see [`structptr`](super::structptr)).
//!
//! [`desugar`]: Lowerer::desugar

use super::*;

/// `q.a.b` for a chain of `.` members on a name: the key such a member is bound under
/// (and the name [`assigned_names`] records for it).
pub(super) fn member_path(e: &cl::Expr) -> Option<String> {
    match &e.kind {
        cl::ExprKind::Name(n) => Some(n.clone()),
        cl::ExprKind::Member {
            base,
            field,
            arrow: false,
        } => Some(format!("{}.{}", member_path(base)?, field.name)),
        _ => None,
    }
}

/// An expression denoting a struct, an array of structs or a buffer of them: the key its
/// members are bound under and the indices applied so far.
pub(super) struct Access {
    key: String,
    pub tag: String,
    dims: usize,
    indices: Vec<cl::Expr>,
    /// The pointer to a struct `key` names, whose first index it moves
    /// ([`structval`](super::structval)).
    ptr: Option<super::structval::StructPtr>,
}

fn zero(span: &Span) -> cl::Expr {
    cl::Expr {
        kind: cl::ExprKind::Int {
            value: 0,
            unsigned: false,
            long: false,
        },
        span: span.clone(),
    }
}

/// Whether evaluating `e` may have a side effect (so that it cannot be repeated).
fn has_effects(e: &cl::Expr) -> bool {
    use cl::ExprKind as E;
    match &e.kind {
        // A work-item query (`get_local_id(0)`, CUDA's `threadIdx.x`) only reads.
        E::Call { func, args } => {
            !crate::cl::ndrange::is_work_item(&func.name) || args.iter().any(has_effects)
        }
        E::Assign { .. } | E::IncDec(..) | E::StmtExpr(..) => true,
        E::Index(a, b) | E::Binary(_, a, b) | E::Comma(a, b) => has_effects(a) || has_effects(b),
        E::Cond(a, b, c) => has_effects(a) || has_effects(b) || has_effects(c),
        E::VecLit(_, args) => args.iter().any(has_effects),
        E::Member { base: a, .. }
        | E::Unary(_, a)
        | E::Plus(a)
        | E::AddrOf(a)
        | E::Deref(a)
        | E::Cast(_, a) => has_effects(a),
        E::Int { .. }
        | E::Float { .. }
        | E::Char(_)
        | E::Str(_)
        | E::Name(_)
        | E::SizeofType(_)
        | E::SizeofExpr(_) => false,
    }
}

/// The initialiser that zeroes an object of type `t`: `0` for a scalar or a vector (`0`
/// widens), `{}` for a struct or an array.
fn zero_init(t: &cl::Type, span: &Span) -> cl::Init {
    let scalar =
        t.arrays.is_empty() && (!t.pointers.is_empty() || !matches!(t.base, cl::Base::Struct(_)));
    if scalar {
        cl::Init::Expr(zero(span))
    } else {
        cl::Init::List(Vec::new(), span.clone())
    }
}

fn boxed(new: Option<cl::Expr>, old: &cl::Expr) -> Box<cl::Expr> {
    Box::new(new.unwrap_or_else(|| old.clone()))
}

impl<'u> Lowerer<'u> {
    /// The definition of `struct tag`; unions are refused.
    pub(super) fn struct_def(&self, tag: &str, span: &Span) -> Res<&'u cl::StructDef> {
        match self.structs.get(tag) {
            Some(d) if d.is_union => unsupported(
                format!("unions (`union {tag}`: its members share bytes)"),
                span,
            ),
            Some(d) => Ok(d),
            None => Err(Diagnostic::new(
                format!("`struct {tag}` is declared but never defined"),
                span.clone(),
            )),
        }
    }

    /// A kernel parameter `struct S q` passed by value: a parameter per member, `q.m`.
    pub(super) fn struct_param(
        &mut self,
        tag: &str,
        name: &cl::Ident,
        span: &Span,
        written: &HashSet<String>,
        params: &mut Vec<k::Param>,
        prologue: &mut Vec<k::Stmt>,
    ) -> Res<()> {
        let def = self.struct_def(tag, &name.span)?;
        self.bind(
            &name.name,
            Binding::Struct {
                tag: tag.to_string(),
                dims: 0,
            },
        );
        for f in &def.fields {
            let key = cl::Ident {
                name: format!("{}.{}", name.name, f.name.name),
                span: name.span.clone(),
            };
            if !f.ty.arrays.is_empty() {
                self.array_member_param(&key, &f.ty, span, written, params, prologue)?;
                continue;
            }
            let lowered = self.fresh(&key.name);
            self.param(&key, lowered, &f.ty, span, written, params, prologue)?;
        }
        Ok(())
    }

    /// An array member `T a[N]` of a by-value struct parameter `q`: a scalar parameter per
    /// element, `q.a[0]` ... `q.a[N-1]`, copied into the private array `q.a` at the start.
    fn array_member_param(
        &mut self,
        key: &cl::Ident,
        ty: &cl::Type,
        span: &Span,
        written: &HashSet<String>,
        params: &mut Vec<k::Param>,
        prologue: &mut Vec<k::Stmt>,
    ) -> Res<()> {
        let n = match ty.arrays.as_slice() {
            [Some(n)] if ty.pointers.len() <= 1 => private::const_int(n).filter(|&n| n > 0),
            _ => None,
        };
        let Some(n) = n.filter(|&n| n <= 1024) else {
            return unsupported(
                format!(
                    "this array member of a struct parameter (`{}`: only one dimension of \
                     a constant size up to 1024, of scalars or pointers)",
                    key.name
                ),
                &ty.span,
            );
        };
        let elem = cl::Type {
            arrays: Vec::new(),
            ..ty.clone()
        };
        if !ty.pointers.is_empty() {
            return self.ptr_array_param(key, &elem, n, span, written, params, prologue);
        }
        let mut inits = Vec::new();
        for i in 0..n {
            let name = cl::Ident {
                name: format!("{}[{i}]", key.name),
                span: key.span.clone(),
            };
            let lowered = self.fresh(&format!("{}.{i}", key.name));
            self.param(&name, lowered, &elem, span, written, params, prologue)?;
            inits.push(cl::Init::Expr(cl::Expr {
                kind: cl::ExprKind::Name(name.name),
                span: key.span.clone(),
            }));
        }
        let copy = cl::Decl {
            ty: ty.clone(),
            name: key.clone(),
            init: Some(cl::Init::List(inits, key.span.clone())),
            span: key.span.clone(),
        };
        self.decl(&copy, prologue)
    }

    /// A kernel parameter `__global S *G`: a buffer per member, `G.m` (struct of arrays).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn struct_buffer(
        &mut self,
        tag: &str,
        name: &cl::Ident,
        ty: &cl::Type,
        span: &Span,
        written: &HashSet<String>,
        params: &mut Vec<k::Param>,
        prologue: &mut Vec<k::Stmt>,
    ) -> Res<()> {
        if written.contains(&name.name) {
            return unsupported(
                format!("moving a pointer to structs (`{}`)", name.name),
                &name.span,
            );
        }
        let def = self.struct_def(tag, &ty.span)?;
        self.bind(
            &name.name,
            Binding::Struct {
                tag: tag.to_string(),
                dims: 1,
            },
        );
        for f in &def.fields {
            let key = cl::Ident {
                name: format!("{}.{}", name.name, f.name.name),
                span: name.span.clone(),
            };
            if !f.ty.pointers.is_empty() {
                self.ptr_member_param(&key, &f.ty, ty, span, written, params, prologue)?;
                continue;
            }
            if !f.ty.arrays.is_empty() {
                return unsupported(
                    format!("array members in a buffer of structs (`{}`)", key.name),
                    &f.ty.span,
                );
            }
            let fty = cl::Type {
                pointers: ty.pointers.clone(),
                space: ty.space,
                is_const: ty.is_const || f.ty.is_const,
                ..f.ty.clone()
            };
            let lowered = self.fresh(&key.name);
            self.param(&key, lowered, &fty, span, written, params, prologue)?;
        }
        Ok(())
    }

    /// A struct variable `S s;` or array of structs `S s[N]...`, private or `__local`: a
    /// variable or array per member, declared as `s.m` with the struct's dimensions first.
    pub(super) fn struct_decl(
        &mut self,
        tag: &str,
        d: &cl::Decl,
        out: &mut Vec<k::Stmt>,
    ) -> Res<()> {
        let def = self.struct_def(tag, &d.ty.span)?;
        let mut list = None;
        let init = match &d.init {
            None => None,
            Some(cl::Init::List(..)) if d.ty.space == cl::AddrSpace::Local => {
                return Err(Diagnostic::new(
                    "a `__local` variable cannot have an initialiser",
                    d.span.clone(),
                ))
            }
            Some(cl::Init::List(_, s)) if !d.ty.arrays.is_empty() => {
                return unsupported("initialiser lists of arrays of structs", s)
            }
            Some(cl::Init::List(items, s)) if items.len() > def.fields.len() => {
                return Err(Diagnostic::new(
                    format!(
                        "{} initialisers for a `struct {tag}` of {} members",
                        items.len(),
                        def.fields.len()
                    ),
                    s.clone(),
                ))
            }
            Some(cl::Init::List(items, _)) => {
                list = Some(items);
                None
            }
            Some(cl::Init::Expr(_)) if !d.ty.arrays.is_empty() => {
                return Err(Diagnostic::new(
                    "an array is initialised with a braced list `{...}`",
                    d.span.clone(),
                ))
            }
            Some(cl::Init::Expr(_)) if d.ty.space == cl::AddrSpace::Local => {
                return Err(Diagnostic::new(
                    "a `__local` variable cannot have an initialiser",
                    d.span.clone(),
                ))
            }
            Some(cl::Init::Expr(e)) => Some(e),
        };
        for (i, f) in def.fields.iter().enumerate() {
            let ty = cl::Type {
                space: d.ty.space,
                arrays: d.ty.arrays.iter().chain(&f.ty.arrays).cloned().collect(),
                ..f.ty.clone()
            };
            // C99 §6.7.8: members without an initialiser in a list are zero.
            let init = list.map(|items| {
                items
                    .get(i)
                    .cloned()
                    .unwrap_or_else(|| zero_init(&ty, &d.span))
            });
            let member = cl::Decl {
                ty,
                name: cl::Ident {
                    name: format!("{}.{}", d.name.name, f.name.name),
                    span: d.name.span.clone(),
                },
                init,
                span: d.span.clone(),
            };
            self.decl(&member, out)?;
        }
        // Bound after its members: an initialiser `S s = s;` names an outer `s`, as in C.
        let target = cl::Expr {
            kind: cl::ExprKind::Name(d.name.name.clone()),
            span: d.name.span.clone(),
        };
        let value = init.map(|e| self.desugar(e).map(|n| n.unwrap_or_else(|| e.clone())));
        let value = value.transpose()?;
        self.bind(
            &d.name.name,
            Binding::Struct {
                tag: tag.to_string(),
                dims: d.ty.arrays.len(),
            },
        );
        if let Some(v) = value {
            self.struct_assign(None, &target, &v, &d.span, out)?;
        }
        Ok(())
    }

    /// `e` with every member of a struct rewritten to the name it is bound under (`G[i].y`
    /// to `G.y[i]`); `None` when `e` has no such member.
    pub(super) fn desugar(&self, e: &cl::Expr) -> Res<Option<cl::Expr>> {
        use cl::ExprKind as E;
        if let Some(v) = self.vector_pointee(e) {
            return Ok(Some(self.desugar(&v)?.unwrap_or(v)));
        }
        let span = &e.span;
        let one = |a: &cl::Expr, f: &dyn Fn(Box<cl::Expr>) -> E| -> Res<Option<E>> {
            Ok(self.desugar(a)?.map(|n| f(Box::new(n))))
        };
        let two = |a: &cl::Expr,
                   b: &cl::Expr,
                   f: &dyn Fn(Box<cl::Expr>, Box<cl::Expr>) -> E|
         -> Res<Option<E>> {
            let (na, nb) = (self.desugar(a)?, self.desugar(b)?);
            Ok((na.is_some() || nb.is_some()).then(|| f(boxed(na, a), boxed(nb, b))))
        };
        let list = |args: &[cl::Expr]| -> Res<Option<Vec<cl::Expr>>> {
            let new = args
                .iter()
                .map(|a| self.desugar(a))
                .collect::<Res<Vec<_>>>()?;
            Ok(new.iter().any(Option::is_some).then(|| {
                new.into_iter()
                    .zip(args)
                    .map(|(n, a)| n.unwrap_or_else(|| a.clone()))
                    .collect()
            }))
        };
        let kind = match &e.kind {
            E::Member { base, field, arrow } => {
                let nb = self.desugar(base)?;
                let b = nb.as_ref().unwrap_or(base);
                return match self.struct_access(b)? {
                    Some(acc) => self.member(acc, field, *arrow, span).map(Some),
                    None => Ok(nb.map(|nb| cl::Expr {
                        kind: E::Member {
                            base: Box::new(nb),
                            field: field.clone(),
                            arrow: *arrow,
                        },
                        span: span.clone(),
                    })),
                };
            }
            E::Index(a, b) => {
                let na = self.desugar(a)?;
                if let Some(p) = self.ptr_array_element(na.as_ref().unwrap_or(a), b)? {
                    return Ok(Some(p));
                }
                two(a, b, &|a, b| E::Index(a, b))?
            }
            E::Binary(op, a, b) => two(a, b, &|a, b| E::Binary(*op, a, b))?,
            E::Comma(a, b) => two(a, b, &|a, b| E::Comma(a, b))?,
            E::Assign { op, target, value } => two(target, value, &|t, v| E::Assign {
                op: *op,
                target: t,
                value: v,
            })?,
            E::Cond(c, a, b) => {
                let (nc, na, nb) = (self.desugar(c)?, self.desugar(a)?, self.desugar(b)?);
                (nc.is_some() || na.is_some() || nb.is_some())
                    .then(|| E::Cond(boxed(nc, c), boxed(na, a), boxed(nb, b)))
            }
            E::Unary(op, a) => one(a, &|a| E::Unary(*op, a))?,
            E::Plus(a) => one(a, &E::Plus)?,
            E::IncDec(op, a) => one(a, &|a| E::IncDec(*op, a))?,
            E::AddrOf(a) => one(a, &E::AddrOf)?,
            E::Deref(a) => one(a, &E::Deref)?,
            E::Cast(t, a) => one(a, &|a| E::Cast(t.clone(), a))?,
            E::SizeofExpr(a) => one(a, &E::SizeofExpr)?,
            E::Call { func, args } => list(args)?.map(|args| E::Call {
                func: func.clone(),
                args,
            }),
            E::VecLit(t, args) => list(args)?.map(|args| E::VecLit(t.clone(), args)),
            E::Int { .. }
            | E::Float { .. }
            | E::Char(_)
            | E::Str(_)
            | E::Name(_)
            | E::SizeofType(_)
            | E::StmtExpr(..) => None,
        };
        Ok(kind.map(|kind| cl::Expr {
            kind,
            span: span.clone(),
        }))
    }

    /// The struct (array of structs, buffer of structs) a desugared expression denotes.
    fn struct_access(&self, e: &cl::Expr) -> Res<Option<Access>> {
        use cl::ExprKind as E;
        let (inner, index) = match &e.kind {
            E::Name(n) => {
                return Ok(match self.lookup(n) {
                    Some(Binding::Struct { tag, dims }) => Some(Access {
                        key: n.clone(),
                        tag: tag.clone(),
                        dims: *dims,
                        indices: Vec::new(),
                        ptr: None,
                    }),
                    Some(Binding::StructPtr(p)) => Some(Access {
                        key: n.clone(),
                        tag: p.tag.clone(),
                        dims: 1,
                        indices: Vec::new(),
                        ptr: Some(p.clone()),
                    }),
                    _ => None,
                })
            }
            E::Index(a, i) => (a, (**i).clone()),
            E::Deref(a) => (a, zero(&e.span)),
            _ => return Ok(None),
        };
        let Some(mut acc) = self.struct_access(inner)? else {
            return Ok(None);
        };
        if acc.indices.len() >= acc.dims {
            return Err(Diagnostic::new(
                format!(
                    "this is a `struct {}`, not an array or pointer: it cannot be indexed",
                    acc.tag
                ),
                e.span.clone(),
            ));
        }
        acc.indices.push(index);
        Ok(Some(acc))
    }

    /// A whole struct (every dimension indexed), if `e` denotes one.
    pub(super) fn whole_struct(&self, e: &cl::Expr) -> Res<Option<Access>> {
        Ok(self.struct_access(e)?.filter(|a| a.indices.len() == a.dims))
    }

    /// Member `field` of the struct `acc` (through `->` if `arrow`): the member's name with
    /// the struct's indices.
    fn member(
        &self,
        mut acc: Access,
        field: &cl::Ident,
        arrow: bool,
        span: &Span,
    ) -> Res<cl::Expr> {
        if arrow {
            if acc.indices.len() >= acc.dims {
                return Err(Diagnostic::new(
                    format!(
                        "`->{}` needs a pointer to a struct; this is a `struct {}` (use `.`)",
                        field.name, acc.tag
                    ),
                    span.clone(),
                ));
            }
            acc.indices.push(zero(span));
        }
        if acc.indices.len() != acc.dims {
            return Err(Diagnostic::new(
                format!(
                    "`.{}` of an array of (or pointer to) `struct {}`: index it first{}",
                    field.name,
                    acc.tag,
                    if acc.dims - acc.indices.len() == 1 && acc.indices.is_empty() {
                        " (or use `->`)"
                    } else {
                        ""
                    }
                ),
                span.clone(),
            ));
        }
        let def = self.struct_def(&acc.tag, span)?;
        if !def.fields.iter().any(|f| f.name.name == field.name) {
            let names: Vec<_> = def.fields.iter().map(|f| f.name.name.as_str()).collect();
            return Err(Diagnostic::new(
                format!(
                    "`struct {}` has no member `{}` (its members: {})",
                    acc.tag,
                    field.name,
                    names.join(", ")
                ),
                field.span.clone(),
            ));
        }
        if let Some(p) = acc.ptr.take() {
            let first = acc.indices.remove(0);
            if let Some(i) = self.struct_ptr_index(&p, first, span)? {
                acc.indices.insert(0, i);
            }
        }
        let mut out = cl::Expr {
            kind: cl::ExprKind::Name(format!("{}.{}", acc.key, field.name)),
            span: span.clone(),
        };
        for i in acc.indices {
            out = cl::Expr {
                kind: cl::ExprKind::Index(Box::new(out), Box::new(i)),
                span: span.clone(),
            };
        }
        Ok(out)
    }

    /// `a = b;` when `a` is a whole struct: member-wise, `a.m = b.m` for each member.
    /// `None` when `target` is no struct.
    pub(super) fn struct_assignment(
        &mut self,
        e: &cl::Expr,
        out: &mut Vec<k::Stmt>,
    ) -> Res<Option<()>> {
        let cl::ExprKind::Assign { op, target, value } = &e.kind else {
            return Ok(None);
        };
        if self.whole_struct(target)?.is_none() {
            return Ok(None);
        }
        self.struct_assign(*op, target, value, &e.span, out)
            .map(Some)
    }

    fn struct_assign(
        &mut self,
        op: Option<BinOp>,
        target: &cl::Expr,
        value: &cl::Expr,
        span: &Span,
        out: &mut Vec<k::Stmt>,
    ) -> Res<()> {
        let t = self.whole_struct(target)?.expect("a struct target");
        if op.is_some() {
            return Err(Diagnostic::new(
                format!("a compound assignment to a `struct {}`", t.tag),
                span.clone(),
            ));
        }
        if self.is_struct_call(value) {
            return self.struct_assign_call(&t.tag, target, value, span, out);
        }
        let Some(v) = self.whole_struct(value)? else {
            return unsupported(
                format!(
                    "assigning this expression to a `struct {}` (only a struct variable, \
                     parameter or element of the same type)",
                    t.tag
                ),
                &value.span,
            );
        };
        if v.tag != t.tag {
            return Err(Diagnostic::new(
                format!("assigning a `struct {}` to a `struct {}`", v.tag, t.tag),
                span.clone(),
            ));
        }
        if has_effects(target) || has_effects(value) {
            return unsupported("a struct assignment whose operands have side effects", span);
        }
        let def = self.struct_def(&t.tag, span)?;
        let member = |e: &cl::Expr, f: &cl::Field| cl::Expr {
            kind: cl::ExprKind::Member {
                base: Box::new(e.clone()),
                field: f.name.clone(),
                arrow: false,
            },
            span: e.span.clone(),
        };
        for f in &def.fields {
            if !f.ty.arrays.is_empty() {
                return unsupported(
                    format!(
                        "assigning a struct with an array member (`{}`) as a whole",
                        f.name.name
                    ),
                    span,
                );
            }
            let assign = cl::Expr {
                kind: cl::ExprKind::Assign {
                    op: None,
                    target: Box::new(member(target, f)),
                    value: Box::new(member(value, f)),
                },
                span: span.clone(),
            };
            self.effect(&assign, out)?;
        }
        Ok(())
    }

    /// The error for a struct where a value is needed.
    pub(super) fn struct_value<T>(&self, e: &cl::Expr) -> Res<T> {
        unsupported(
            "a struct as a value (ksim reads and writes a struct through its members, or \
             assigns it whole: `a = b;`)",
            &e.span,
        )
    }

    /// Whether `e` denotes a struct or an array of them.
    pub(super) fn is_struct(&self, e: &cl::Expr) -> Res<bool> {
        Ok(self.struct_access(e)?.is_some())
    }
}
