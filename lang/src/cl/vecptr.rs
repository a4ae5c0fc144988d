//! The address of a private vector (OpenCL C 1.2 §6.1.2, C99 §6.5.3.2): `int4 *p = &v`,
//! `&v` passed to a helper's `int4 *` parameter, and `*p`, `p[0]`, `p->x`, `(*p).x`
//! through it. A private vector is one variable per component ([`super::vector`]), so such
//! a pointer is an alias: `p` is bound to the vector's components, and `*p` (also `p[0]`)
//! is rewritten to a hidden name, `*p`, that [`Lowerer::lookup`] resolves to the vector
//! itself; `p->x` becomes `(*p).x`. Reads and writes through it are the vector's.
//!
//! Anything else done with such a pointer (arithmetic, `p[1]`, comparisons, assigning it
//! another address, a scalar view `(float *)&v`) is refused with "not supported yet".

use super::*;

impl<'u> Lowerer<'u> {
    /// The binding of a pointer to `shape` vectors whose value is `e`, when `e` is the
    /// address of a private vector of that shape (or a pointer already bound to one).
    pub(super) fn vector_address(
        &self,
        e: &cl::Expr,
        (elem, lanes): (TypeName, u8),
    ) -> Option<Binding> {
        let b = match &e.kind {
            cl::ExprKind::AddrOf(v) => match &v.kind {
                cl::ExprKind::Name(n) => self.lookup(n)?.clone(),
                _ => return None,
            },
            cl::ExprKind::Name(n) => match self.lookup(n)? {
                Binding::VecPtr(b) => (**b).clone(),
                _ => return None,
            },
            _ => return None,
        };
        match &b {
            Binding::Vector { comps, elem: e } if *e == elem && comps.len() == lanes as usize => {
                Some(Binding::VecPtr(Box::new(b)))
            }
            _ => None,
        }
    }

    /// `*p`, `p[0]` as the hidden name of the vector `p` points at, and `p->f` as its
    /// member `f`, when `p` points at a private vector; `None` otherwise.
    pub(super) fn vector_pointee(&self, e: &cl::Expr) -> Option<cl::Expr> {
        use cl::ExprKind as E;
        let alias = |p: &cl::Expr| match &p.kind {
            E::Name(n) if matches!(self.lookup(n), Some(Binding::VecPtr(_))) => Some(cl::Expr {
                kind: E::Name(format!("*{n}")),
                span: p.span.clone(),
            }),
            _ => None,
        };
        match &e.kind {
            E::Deref(p) => alias(p),
            E::Index(p, i) if matches!(i.kind, E::Int { value: 0, .. }) => alias(p),
            E::Member {
                base,
                field,
                arrow: true,
            } => Some(cl::Expr {
                kind: E::Member {
                    base: Box::new(alias(base)?),
                    field: field.clone(),
                    arrow: false,
                },
                span: e.span.clone(),
            }),
            _ => None,
        }
    }
}
