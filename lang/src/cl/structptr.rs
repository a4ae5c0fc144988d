//! Pointer members of a buffer of structs (`__global struct S *q` with a member
//! `__global int *p` or an array of them `__global int *p[N]`).
//!
//! A buffer of structs is a buffer per member ([`structs`](super::structs)); a pointer
//! stored in memory is a pointer *value*, the (tag, offset) pair a dynamic pointer has
//! ([`pointer`](super::pointer)). So a pointer member `q.p` is two hidden `int` buffers,
//! `q.p.tag` and `q.p.offset` (an array member `p[N]` keeps element `k` of struct `i` at
//! `i * N + k`), and
//!
//! - `q[i].p = e;` stores the tag and offset of the pointer value `e` (a buffer, a pointer
//!   variable, `NULL`, ...), the tags being the kernel's own ([`pointer`]'s numbering);
//! - `q2[i].p = q1[j].p;` copies the pair: the pointer is moved as it is, whatever it points
//!   at (a pointer the launch put in `q1` is its two `int`s, copied unread).
//!
//! An array of pointers `__global int *p[N]` in a struct passed by value `struct S q` is a
//! buffer parameter per element, `q.p[0]` ... (`--input q.p[3]=...`), as a pointer member
//! is one; each is the initial value of a pointer variable, so `q.p[3] = p;` makes it point
//! elsewhere (a pointer chosen at run time from then on). `q.p[k]` is indexed with a
//! constant.
//!
//! Not modelled, each a clear error: any other use of a pointer read from a buffer of
//! structs (dereferencing it, comparing it, giving it to a pointer variable). The set of
//! arrays such a pointer may reach is not a fact of the kernel's code (it depends on what
//! the launch or another kernel stored), so the lowering cannot build the chain of targets
//! a dynamic pointer's dereference is. An array member is indexed with a constant (a
//! variable index could leave the member into the next struct's).

use super::*;

/// A pointer member of a buffer of structs: its two hidden buffers.
#[derive(Clone, Debug)]
pub(super) struct PtrMember {
    /// The member's source name (`q.p`), for messages.
    name: String,
    /// Lowered names of the `int` buffers holding each pointer's tag and offset.
    tag: String,
    offset: String,
    /// `N` for an array member `T *p[N]`; `None` for one pointer.
    len: Option<u64>,
}

/// One pointer of a pointer member: the member, the struct's index and the array index.
struct Place<'e> {
    member: PtrMember,
    index: &'e cl::Expr,
    element: Option<u64>,
}

impl<'u> Lowerer<'u> {
    /// Pointer member `key` (`q.p`, of type `fty`) of the buffer of structs `q` (of pointer
    /// type `buf`): its two hidden buffers, bound under `key`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn ptr_member_param(
        &mut self,
        key: &cl::Ident,
        fty: &cl::Type,
        buf: &cl::Type,
        span: &Span,
        written: &HashSet<String>,
        params: &mut Vec<k::Param>,
        prologue: &mut Vec<k::Stmt>,
    ) -> Res<()> {
        let len = match fty.arrays.as_slice() {
            [] => None,
            [Some(n)] => match private::const_int(n).filter(|&n| (1..=1024).contains(&n)) {
                Some(n) => Some(n),
                None => return self.member_refused(key, fty),
            },
            _ => return self.member_refused(key, fty),
        };
        if fty.pointers.len() != 1 {
            return self.member_refused(key, fty);
        }
        let mut names = Vec::new();
        for part in ["tag", "offset"] {
            let name = cl::Ident {
                name: format!("{}.{part}", key.name),
                span: key.span.clone(),
            };
            let ty = cl::Type {
                base: cl::Base::Int { unsigned: false },
                arrays: Vec::new(),
                ..buf.clone()
            };
            let lowered = self.fresh(&name.name);
            self.param(&name, lowered, &ty, span, written, params, prologue)?;
            match self.lookup(&name.name) {
                Some(Binding::Array(a)) => names.push(a.clone()),
                _ => return self.member_refused(key, fty),
            }
        }
        let [tag, offset] = <[String; 2]>::try_from(names).expect("two buffers");
        let member = PtrMember {
            name: key.name.clone(),
            tag,
            offset,
            len,
        };
        self.bind(&key.name, Binding::PtrMember(Box::new(member)));
        Ok(())
    }

    fn member_refused<T>(&self, key: &cl::Ident, fty: &cl::Type) -> Res<T> {
        unsupported(
            format!(
                "this member in a buffer of structs (`{}`: a scalar, a vector, a pointer or \
                 a one-dimensional array of pointers of a constant size up to 1024)",
                key.name
            ),
            &fty.span,
        )
    }

    /// The pointer `e` (desugared: `q.p[i]` or `q.p[i][k]`) names, if it is one of a
    /// pointer member.
    fn ptr_member_place<'e>(&self, e: &'e cl::Expr) -> Res<Option<Place<'e>>> {
        use cl::ExprKind as E;
        let member = |a: &cl::Expr| match &a.kind {
            E::Name(n) => match self.lookup(n) {
                Some(Binding::PtrMember(m)) => Some((**m).clone()),
                _ => None,
            },
            _ => None,
        };
        let E::Index(a, i) = &e.kind else {
            return Ok(None);
        };
        if let Some(m) = member(a) {
            return match m.len {
                None => Ok(Some(Place {
                    member: m,
                    index: i,
                    element: None,
                })),
                // `q[i].p` of an array member is an array of pointers, not a pointer.
                Some(_) => Ok(None),
            };
        }
        let E::Index(b, j) = &a.kind else {
            return Ok(None);
        };
        let Some(m) = member(b) else {
            return Ok(None);
        };
        let Some(len) = m.len else {
            return Ok(None);
        };
        match private::const_int(i).filter(|&k| k < len) {
            Some(k) => Ok(Some(Place {
                member: m,
                index: j,
                element: Some(k),
            })),
            None => unsupported(
                format!(
                    "this index into the array of pointers `{}` (a constant below {len})",
                    m.name
                ),
                &i.span,
            ),
        }
    }

    /// The flat index of place `p` in its member's buffers (a temporary).
    fn ptr_member_index(&mut self, p: &Place, pre: &mut Vec<k::Stmt>) -> Res<k::Expr> {
        let span = &p.index.span;
        let i = self.expr(p.index, pre)?;
        let i = ex(k::ExprKind::Cast(TypeName::Int, Box::new(i)), span);
        let flat = match (p.member.len, p.element) {
            (Some(n), Some(k)) => {
                let int = |v: u64| {
                    ex(
                        k::ExprKind::Int {
                            value: v,
                            unsigned: false,
                        },
                        span,
                    )
                };
                let row = ex(
                    k::ExprKind::Binary(BinOp::Mul, Box::new(i), Box::new(int(n))),
                    span,
                );
                ex(
                    k::ExprKind::Binary(BinOp::Add, Box::new(row), Box::new(int(k))),
                    span,
                )
            }
            _ => i,
        };
        let t = self.temp("member_i", TypeName::Int, Some(flat), span, pre);
        Ok(name_expr(&t, span))
    }

    /// `q[i].p = e;` (a statement): stores the tag and offset of `e`. `None` when `e` is
    /// no assignment to a pointer member.
    pub(super) fn ptr_member_store(
        &mut self,
        e: &cl::Expr,
        out: &mut Vec<k::Stmt>,
    ) -> Res<Option<()>> {
        let cl::ExprKind::Assign { op, target, value } = &e.kind else {
            return Ok(None);
        };
        let Some(to) = self.ptr_member_place(target)? else {
            return Ok(None);
        };
        let span = &e.span;
        if op.is_some() {
            return unsupported(
                format!(
                    "a compound assignment to the pointer member `{}`",
                    to.member.name
                ),
                span,
            );
        }
        let load = |array: &str, i: &k::Expr| {
            ex(
                k::ExprKind::Index {
                    array: ident(array, span),
                    indices: vec![i.clone()],
                },
                span,
            )
        };
        let (tag, offset) = match self.ptr_member_place(value)? {
            Some(from) => {
                let i = self.ptr_member_index(&from, out)?;
                (load(&from.member.tag, &i), load(&from.member.offset, &i))
            }
            None => {
                let v = self.pointer_value(value, out)?;
                self.pointer_pair(v, span, out)?
            }
        };
        // Both halves are read before either is written (`q[i].p = q[i].p`).
        let tag = self.temp("member_tag", TypeName::Int, Some(tag), span, out);
        let offset = self.temp("member_offset", TypeName::Int, Some(offset), span, out);
        let i = self.ptr_member_index(&to, out)?;
        for (array, v) in [(&to.member.tag, tag), (&to.member.offset, offset)] {
            out.push(st(
                k::StmtKind::Assign {
                    target: k::LValue::Elem {
                        array: ident(array, span),
                        indices: vec![i.clone()],
                    },
                    op: k::AssignOp::Set,
                    value: name_expr(&v, span),
                },
                span,
            ));
        }
        Ok(Some(()))
    }

    /// Whether `e` is a pointer read from a pointer member (`q[i].p`, desugared).
    pub(super) fn is_ptr_member(&self, e: &cl::Expr) -> bool {
        matches!(self.ptr_member_place(e), Ok(Some(_)))
    }

    /// The error for a use of pointer `e` of a pointer member other than storing to it or
    /// copying it.
    pub(super) fn ptr_member_use<T>(&self, e: &cl::Expr) -> Res<T> {
        let name = match self.ptr_member_place(e) {
            Ok(Some(p)) => p.member.name,
            _ => String::new(),
        };
        unsupported(
            format!(
                "using a pointer read from a buffer of structs (`{name}`) other than by \
                 storing it in a pointer member: what it points at depends on what the launch \
                 or a kernel stored there"
            ),
            &e.span,
        )
    }

    /// Array member `key` (`q.p`) of `n` pointers of type `elem` of a by-value struct
    /// parameter: a buffer parameter per element, each the value of pointer variable
    /// `q.p[k]`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn ptr_array_param(
        &mut self,
        key: &cl::Ident,
        elem: &cl::Type,
        n: u64,
        span: &Span,
        written: &HashSet<String>,
        params: &mut Vec<k::Param>,
        prologue: &mut Vec<k::Stmt>,
    ) -> Res<()> {
        let shape = self.pointee_type(elem, &elem.span)?;
        for i in 0..n {
            let name = cl::Ident {
                name: format!("{}[{i}]", key.name),
                span: key.span.clone(),
            };
            let lowered = self.fresh(&format!("{}.{i}", key.name));
            self.param(&name, lowered, elem, span, written, params, prologue)?;
            let Some(Binding::Array(buffer)) = self.lookup(&name.name).cloned() else {
                return unsupported(
                    format!("this array member of a struct parameter (`{}`)", key.name),
                    &elem.span,
                );
            };
            let value = pointer::PVal::One(pointer::Ptr {
                array: buffer,
                offset: None,
                view: None,
            });
            let var_key = (key.span.clone(), name.name.clone());
            let var = self.pointer_var(
                &format!("{}.{i}", key.name),
                shape,
                value,
                var_key,
                &key.span,
                prologue,
            )?;
            self.bind(&name.name, Binding::Ptr(var));
        }
        Ok(())
    }

    /// `q.p[k]` (`a[b]`, `a` desugared) of an array of pointers of a struct parameter: the
    /// name its pointer variable is bound under.
    pub(super) fn ptr_array_element(&self, a: &cl::Expr, b: &cl::Expr) -> Res<Option<cl::Expr>> {
        let cl::ExprKind::Name(n) = &a.kind else {
            return Ok(None);
        };
        if self.lookup(n).is_some()
            || !matches!(self.lookup(&format!("{n}[0]")), Some(Binding::Ptr(_)))
        {
            return Ok(None);
        }
        let name = private::const_int(b)
            .map(|k| format!("{n}[{k}]"))
            .filter(|name| self.lookup(name).is_some());
        match name {
            Some(name) => Ok(Some(cl::Expr {
                kind: cl::ExprKind::Name(name),
                span: a.span.clone(),
            })),
            None => unsupported(
                format!("this index into the array of pointers `{n}` (a constant in its bounds)"),
                &b.span,
            ),
        }
    }

    /// The error for the pointer member `name` of a whole buffer of structs (`q.p` for
    /// `q->p`'s array, not one struct's pointer).
    pub(super) fn ptr_members_whole<T>(&self, name: &str, span: &Span) -> Res<T> {
        unsupported(
            format!("the pointer member `{name}` here (store to one struct's: `q[i].p = e;`)"),
            span,
        )
    }
}
