//! Structs as values and pointers to structs (issue 26, item 2), in the scalarised model of
//! [`structs`](super::structs), where a struct is its members:
//!
//! - a struct passed by value to a helper is copied member by member into a fresh private
//!   struct, the parameter (`float f(S s)`, `f(a)`, `f(*p)`, `f(G[i])`);
//! - a helper returning a struct writes its `return` value member by member into a private
//!   struct of the call site, the call's value (`s = f(x);`, `S s = f(x);`, `G[i] = f(x);`,
//!   an argument `g(f(x))`);
//! - a pointer to a struct (`&s`, `&A[i]`, `A + i`, a buffer of structs `G`, another such
//!   pointer `p + k`) given to a helper's parameter `S *p` or a variable `S *p = ...;` is
//!   bound to the members of its target: `p->m` is `s.m`, or `A.m[o]` with the offset `o`
//!   computed once, where the pointer gets its value. Such a pointer does not move
//!   afterwards (`p++`, `p = q` are refused), so every access through it is the direct
//!   access, with its race reports, faults and speed.
//!
//! Members are copied as scalars and vectors (nested structs flattened); a struct with an
//! array or pointer member is not copied as a whole.

use super::*;

/// A pointer to a struct. Its members are bound under `NAME.m` to the target's members.
#[derive(Clone, Debug)]
pub(super) struct StructPtr {
    pub tag: String,
    /// It points at one struct variable: only `p->m`, `*p` and `p[0]` reach it.
    pub single: bool,
    /// The binding key of its offset variable into an array (or buffer) of structs;
    /// `None`: offset 0.
    pub offset: Option<String>,
}

/// What a pointer-to-struct expression points at, in source terms.
struct Pointee {
    tag: String,
    /// The key the target's members are bound under.
    key: String,
    single: bool,
    offset: Option<cl::Expr>,
}

/// A scalar or vector member of a struct, nested structs flattened: its path (`a`,
/// `inner.b`) and its vector shape.
pub(super) struct Leaf {
    path: String,
    shape: Option<(TypeName, u8)>,
}

fn name(n: &str, span: &Span) -> cl::Expr {
    cl::Expr {
        kind: cl::ExprKind::Name(n.to_string()),
        span: span.clone(),
    }
}

/// `e.a.b` for the path `a.b`.
fn member_chain(e: &cl::Expr, path: &str) -> cl::Expr {
    path.split('.').fold(e.clone(), |base, f| cl::Expr {
        kind: cl::ExprKind::Member {
            base: Box::new(base),
            field: cl::Ident {
                name: f.to_string(),
                span: e.span.clone(),
            },
            arrow: false,
        },
        span: e.span.clone(),
    })
}

fn is_zero(e: &cl::Expr) -> bool {
    matches!(e.kind, cl::ExprKind::Int { value: 0, .. })
}

fn binary(op: BinOp, a: cl::Expr, b: cl::Expr) -> cl::Expr {
    let span = a.span.clone();
    cl::Expr {
        kind: cl::ExprKind::Binary(op, Box::new(a), Box::new(b)),
        span,
    }
}

impl Pointee {
    /// The target `k` structs further (`p + k`, `&p[k]`).
    fn advance(self, k: &cl::Expr, sub: bool, span: &Span) -> Res<Pointee> {
        if self.single {
            return unsupported(
                "arithmetic on the address of a struct variable (it points at one struct)",
                span,
            );
        }
        let k = if sub {
            binary(BinOp::Sub, zero_of(span), k.clone())
        } else {
            k.clone()
        };
        let offset = match self.offset {
            None => k,
            Some(o) => binary(BinOp::Add, o, k),
        };
        Ok(Pointee {
            offset: Some(offset),
            ..self
        })
    }
}

fn zero_of(span: &Span) -> cl::Expr {
    cl::Expr {
        kind: cl::ExprKind::Int {
            value: 0,
            unsigned: false,
            long: false,
        },
        span: span.clone(),
    }
}

impl<'u> Lowerer<'u> {
    /// The index a pointer to a struct turns its first index `i` into: `None` for a
    /// pointer to one struct variable (whose only index is 0), `o + i` for one into an
    /// array.
    pub(super) fn struct_ptr_index(
        &self,
        p: &StructPtr,
        i: cl::Expr,
        span: &Span,
    ) -> Res<Option<cl::Expr>> {
        if p.single {
            if !is_zero(&i) {
                return unsupported(
                    "indexing a pointer to a struct variable (it points at one struct: only \
                     `p[0]`)",
                    span,
                );
            }
            return Ok(None);
        }
        Ok(Some(match &p.offset {
            None => i,
            Some(o) if is_zero(&i) => name(o, span),
            Some(o) => binary(BinOp::Add, name(o, span), i),
        }))
    }

    /// The scalar and vector members of `struct tag`, in order, nested structs flattened.
    fn leaves(&self, tag: &str, span: &Span) -> Res<Vec<Leaf>> {
        let def = self.struct_def(tag, span)?;
        let mut out = Vec::new();
        for f in &def.fields {
            if !f.ty.arrays.is_empty() || !f.ty.pointers.is_empty() {
                return unsupported(
                    format!(
                        "copying a `struct {tag}` as a value: its member `{}` is an array or \
                         a pointer",
                        f.name.name
                    ),
                    span,
                );
            }
            if let cl::Base::Struct(inner) = &f.ty.base {
                for l in self.leaves(inner, span)? {
                    out.push(Leaf {
                        path: format!("{}.{}", f.name.name, l.path),
                        shape: l.shape,
                    });
                }
                continue;
            }
            out.push(Leaf {
                path: f.name.name.clone(),
                shape: self.type_shape(&f.ty)?,
            });
        }
        Ok(out)
    }

    /// The helper returning a struct that `e` calls, if it does.
    fn struct_call<'e>(&self, e: &'e cl::Expr) -> Option<(&'u cl::Function, &'e [cl::Expr])> {
        let cl::ExprKind::Call { func, args } = &e.kind else {
            return None;
        };
        let f = self.funcs.get(func.name.as_str()).copied()?;
        (matches!(f.ret.base, cl::Base::Struct(_)) && f.ret.pointers.is_empty())
            .then_some((f, args.as_slice()))
    }

    /// Whether `e` is a struct value ksim copies member by member: a call of a helper
    /// returning a struct.
    pub(super) fn is_struct_call(&self, e: &cl::Expr) -> bool {
        self.struct_call(e).is_some()
    }

    /// The values of the leaves of the struct `e` (a `struct tag`), each a list of
    /// components; side effects go to `pre`.
    fn struct_reads(
        &mut self,
        tag: &str,
        e: &cl::Expr,
        leaves: &[Leaf],
        pre: &mut Vec<k::Stmt>,
    ) -> Res<Vec<Vec<k::Expr>>> {
        let span = &e.span;
        if let Some((f, args)) = self.struct_call(e) {
            let (rtag, key, entries) = self.inline_struct(f, args, span, pre)?;
            self.same_tag(&rtag, tag, span)?;
            return Ok(leaves
                .iter()
                .map(|l| match &entries[&format!("{key}.{}", l.path)] {
                    Binding::Scalar(v) => vec![name_expr(v, span)],
                    Binding::Vector { comps, .. } => {
                        comps.iter().map(|c| name_expr(c, span)).collect()
                    }
                    b => unreachable!("a private struct's member is {b:?}"),
                })
                .collect());
        }
        let e = self.desugar(e)?.unwrap_or_else(|| e.clone());
        let Some(have) = self.struct_tag(&e)? else {
            return unsupported(
                format!(
                    "this `struct {tag}` value (a struct variable, element, `*p`, or a \
                     helper's result)"
                ),
                span,
            );
        };
        self.same_tag(&have, tag, span)?;
        let mut vals = Vec::new();
        for l in leaves {
            let m = member_chain(&e, &l.path);
            let m = self.desugar(&m)?.unwrap_or(m);
            vals.push(match l.shape {
                None => vec![self.expr(&m, pre)?],
                Some(shape) => self.vec_value(&m, shape, pre)?,
            });
        }
        Ok(vals)
    }

    fn same_tag(&self, have: &str, want: &str, span: &Span) -> Res<()> {
        if have != want {
            return Err(Diagnostic::new(
                format!("a `struct {have}` where a `struct {want}` is needed"),
                span.clone(),
            ));
        }
        Ok(())
    }

    /// Writes the leaf values `vals` into the struct `target`, member by member.
    fn struct_writes(
        &mut self,
        target: &cl::Expr,
        leaves: &[Leaf],
        vals: Vec<Vec<k::Expr>>,
        span: &Span,
        out: &mut Vec<k::Stmt>,
    ) -> Res<()> {
        for (l, mut v) in leaves.iter().zip(vals) {
            let m = member_chain(target, &l.path);
            let m = self.desugar(&m)?.unwrap_or(m);
            if let cl::ExprKind::Name(n) = &m.kind {
                if let Some(Binding::Vector { comps, .. }) = self.lookup(n).cloned() {
                    for (c, x) in comps.iter().zip(v) {
                        out.push(set(c, x, span));
                    }
                    continue;
                }
            }
            if l.shape.is_some() {
                return unsupported(
                    format!(
                        "storing a struct with a vector member (`{}`) as a whole into memory",
                        l.path
                    ),
                    span,
                );
            }
            let x = v.pop().expect("a scalar");
            self.store(None, &m, x, span, out)?;
        }
        Ok(())
    }

    /// `target = value;` (or `S target = value;`) where `value` is a helper's struct
    /// result: the helper is inlined and its result copied member by member.
    pub(super) fn struct_assign_call(
        &mut self,
        tag: &str,
        target: &cl::Expr,
        value: &cl::Expr,
        span: &Span,
        out: &mut Vec<k::Stmt>,
    ) -> Res<()> {
        let leaves = self.leaves(tag, span)?;
        let vals = self.struct_reads(tag, value, &leaves, out)?;
        self.struct_writes(target, &leaves, vals, span, out)
    }

    /// A private `struct tag` variable bound under `key` in a scope of its own (declared
    /// into `out`): the scope, ready to be bound elsewhere.
    fn private_struct(
        &mut self,
        tag: &str,
        key: &str,
        ty: &cl::Type,
        span: &Span,
        out: &mut Vec<k::Stmt>,
    ) -> Res<HashMap<String, Binding>> {
        let d = cl::Decl {
            ty: cl::Type {
                space: cl::AddrSpace::Private,
                is_const: false,
                pointers: Vec::new(),
                arrays: Vec::new(),
                ..ty.clone()
            },
            name: cl::Ident {
                name: key.to_string(),
                span: span.clone(),
            },
            init: None,
            span: span.clone(),
        };
        self.scopes.push(HashMap::new());
        let r = self.struct_decl(tag, &d, out);
        let scope = self.scopes.pop().expect("the scope pushed above");
        r.map(|()| scope)
    }

    /// Inlines a call of `f`, which returns a struct: its result is a private struct of
    /// the call site (declared into `pre`), which `return e;` sets. Gives the struct's
    /// tag, key and bindings.
    pub(super) fn inline_struct(
        &mut self,
        f: &'u cl::Function,
        args: &[cl::Expr],
        span: &Span,
        pre: &mut Vec<k::Stmt>,
    ) -> Res<(String, String, HashMap<String, Binding>)> {
        let cl::Base::Struct(tag) = &f.ret.base else {
            unreachable!("a helper returning a struct");
        };
        let key = self.fresh(&format!("{}_result", f.name.name));
        let entries = self.private_struct(tag, &key, &f.ret, span, pre)?;
        self.struct_result = Some((tag.clone(), key.clone(), entries.clone()));
        self.inline_with(f, args, span, pre, None, None)?;
        Ok((tag.clone(), key, entries))
    }

    /// `return e;` in a helper returning a struct: `e` copied into the call site's result.
    pub(super) fn return_struct(
        &mut self,
        e: &cl::Expr,
        span: &Span,
        out: &mut Vec<k::Stmt>,
    ) -> Res<()> {
        let frame = self.frames.last().expect("in a function");
        let (tag, key, entries) = frame.sresult.clone().expect("a struct result");
        let leaves = self.leaves(&tag, span)?;
        let vals = self.struct_reads(&tag, e, &leaves, out)?;
        self.scopes.push(entries);
        let r = self.struct_writes(&name(&key, span), &leaves, vals, span, out);
        self.scopes.pop();
        r
    }

    /// Binds parameter `p` of a helper, a struct or a pointer to one, to the argument `a`:
    /// a private copy of the struct, or the members of the struct pointed at. The
    /// bindings go to `scope`, the statements setting them to `stmts`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn struct_argument(
        &mut self,
        tag: &str,
        p: &cl::Param,
        a: &cl::Expr,
        written: &HashSet<String>,
        scope: &mut HashMap<String, Binding>,
        stmts: &mut Vec<k::Stmt>,
        pre: &mut Vec<k::Stmt>,
    ) -> Res<()> {
        let pname = p.name.as_ref().map_or("arg", |n| n.name.as_str());
        if !p.ty.pointers.is_empty() {
            if written.contains(pname) {
                return unsupported(
                    format!(
                        "moving `{pname}`, a pointer to a struct, in its function (it stays \
                         where the call points it)"
                    ),
                    &p.span,
                );
            }
            let t = self.struct_target(a)?;
            self.same_tag(&t.tag, tag, &a.span)?;
            scope.extend(self.struct_ptr_bindings(pname, t, &a.span, stmts, pre)?);
            return Ok(());
        }
        let leaves = self.leaves(tag, &a.span)?;
        let vals = self.struct_reads(tag, a, &leaves, pre)?;
        let entries = self.private_struct(tag, pname, &p.ty, &a.span, stmts)?;
        self.scopes.push(entries);
        let r = self.struct_writes(&name(pname, &a.span), &leaves, vals, &a.span, stmts);
        let entries = self.scopes.pop().expect("the scope pushed above");
        r?;
        scope.extend(entries);
        Ok(())
    }

    /// `S *p = e;`: `p` bound to the members of the struct `e` points at. A pointer to a
    /// struct that is moved later (`p++`, `p = q`) is refused.
    pub(super) fn struct_ptr_decl(
        &mut self,
        tag: &str,
        d: &cl::Decl,
        out: &mut Vec<k::Stmt>,
    ) -> Res<()> {
        let n = &d.name.name;
        let Some(cl::Init::Expr(init)) = &d.init else {
            return unsupported(
                format!(
                    "a pointer to a struct (`{n}`) declared without a value (it is bound \
                     where it is declared)"
                ),
                &d.span,
            );
        };
        if self.frames.last().is_some_and(|f| f.written.contains(n)) {
            return unsupported(
                format!("moving `{n}`, a pointer to a struct, after its declaration"),
                &d.span,
            );
        }
        let t = self.struct_target(init)?;
        self.same_tag(&t.tag, tag, &init.span)?;
        let mut stmts = Vec::new();
        let entries = self.struct_ptr_bindings(n, t, &init.span, &mut stmts, out)?;
        out.append(&mut stmts);
        for (k, b) in entries {
            self.bind(&k, b);
        }
        Ok(())
    }

    /// The struct tag of a struct expression (every dimension indexed), if `e` is one.
    fn struct_tag(&self, e: &cl::Expr) -> Res<Option<String>> {
        Ok(self.whole_struct(e)?.map(|a| a.tag))
    }

    /// What the pointer-to-struct expression `e` points at.
    fn struct_target(&self, e: &cl::Expr) -> Res<Pointee> {
        use cl::ExprKind as E;
        let span = &e.span;
        let refuse = || {
            unsupported(
                "this pointer to a struct (`&s`, `&A[i]`, `A + i`, a buffer of structs or \
                 a pointer to a struct, fixed where it is given)",
                span,
            )
        };
        match &e.kind {
            E::Name(n) => match self.lookup(n) {
                Some(Binding::Struct { tag, dims: 1 }) => Ok(Pointee {
                    tag: tag.clone(),
                    key: n.clone(),
                    single: false,
                    offset: None,
                }),
                Some(Binding::StructPtr(p)) => Ok(Pointee {
                    tag: p.tag.clone(),
                    key: n.clone(),
                    single: p.single,
                    offset: p.offset.as_ref().map(|o| name(o, span)),
                }),
                _ => refuse(),
            },
            E::AddrOf(inner) => match &inner.kind {
                E::Name(n) => match self.lookup(n) {
                    Some(Binding::Struct { tag, dims: 0 }) => Ok(Pointee {
                        tag: tag.clone(),
                        key: n.clone(),
                        single: true,
                        offset: None,
                    }),
                    _ => refuse(),
                },
                E::Index(a, i) => self.struct_target(a)?.advance(i, false, span),
                E::Deref(a) => self.struct_target(a),
                _ => refuse(),
            },
            E::Binary(op @ (BinOp::Add | BinOp::Sub), a, b) => {
                if self.struct_target(a).is_ok() {
                    self.struct_target(a)?.advance(b, *op == BinOp::Sub, span)
                } else if *op == BinOp::Add {
                    self.struct_target(b)?.advance(a, false, span)
                } else {
                    refuse()
                }
            }
            E::Cast(t, a) if t.pointers.len() == 1 => match &t.base {
                cl::Base::Struct(_) => self.struct_target(a),
                _ => refuse(),
            },
            E::Plus(a) => self.struct_target(a),
            _ => refuse(),
        }
    }

    /// The bindings of a pointer `name` to the target `t`: the pointer, its offset
    /// variable (declared into `stmts`, computed with side effects into `pre`), and the
    /// target's members under `name.m`.
    fn struct_ptr_bindings(
        &mut self,
        pname: &str,
        t: Pointee,
        span: &Span,
        stmts: &mut Vec<k::Stmt>,
        pre: &mut Vec<k::Stmt>,
    ) -> Res<Vec<(String, Binding)>> {
        let mut out = Vec::new();
        self.alias_members(&t.tag, &t.key, pname, span, &mut out)?;
        let offset = match &t.offset {
            None => None,
            Some(o) => {
                let v = self.expr(o, pre)?;
                let ty = self.type_of(&v).unwrap_or(TypeName::Int);
                let var = self.declare_scalar(&format!("{pname}.offset"), ty);
                stmts.push(st(
                    k::StmtKind::Decl {
                        ty,
                        name: ident(&var, span),
                        init: Some(v),
                    },
                    span,
                ));
                // A key no source name or member path can spell.
                let key = format!("{pname}->offset");
                out.push((key.clone(), Binding::Scalar(var)));
                Some(key)
            }
        };
        out.push((
            pname.to_string(),
            Binding::StructPtr(StructPtr {
                tag: t.tag,
                single: t.single,
                offset,
            }),
        ));
        Ok(out)
    }

    /// The members of the struct bound under `from` (nested structs' members too), each
    /// bound again under `to`.
    fn alias_members(
        &self,
        tag: &str,
        from: &str,
        to: &str,
        span: &Span,
        out: &mut Vec<(String, Binding)>,
    ) -> Res<()> {
        let def = self.struct_def(tag, span)?;
        for f in &def.fields {
            let (fk, tk) = (
                format!("{from}.{}", f.name.name),
                format!("{to}.{}", f.name.name),
            );
            if let Some(b) = self.lookup(&fk) {
                out.push((tk.clone(), b.clone()));
            }
            if let (cl::Base::Struct(inner), true) = (&f.ty.base, f.ty.pointers.is_empty()) {
                self.alias_members(inner, &fk, &tk, span, out)?;
            }
        }
        Ok(())
    }
}
