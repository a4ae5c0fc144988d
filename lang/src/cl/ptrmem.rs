//! Pointers stored in private memory (issue 26, item 2): arrays of pointers
//! (`int *ps[2] = {a, b};`) and pointers to pointer variables (`int **pp = &p;`, `&p` given
//! to a helper's `int **` parameter), lowered to the pointer variables of
//! [`pointer`](super::pointer) rather than to the core's pointer values (`ptr`, `__addr`,
//! `__deref_T`).
//!
//! Why this and not the core's pointer values: every pointer here lives in a private
//! variable or array of the kernel's own, whose every store the lowering sees, so the
//! set of places each one may point at is a fact of the code, which is what the (tag,
//! offset) scheme needs; then both engines run it (the fast executor and `gpu` refuse
//! `ptr` values), a pointer that never changes target keeps the static (array, offset)
//! form, and faults and races name the buffer and element as for any pointer. The core's
//! values are needed where that set is not known (a pointer the launch stored in a
//! buffer, [`structptr`](super::structptr)); they are not used yet.
//!
//! - An array of `N` pointers (`N` a constant up to 1024, one dimension) is `N` pointer
//!   variables, `ps[0]` ... bound under those names (lowered `ps.0`, ...), so each is
//!   static or dynamic on its own; `ps[k]` with a constant `k` is that variable (the same
//!   rewriting as an array of pointers in a struct parameter, [`structptr`]); an element
//!   the list does not give is null, as C zero-fills it; without a list each is a pointer
//!   not given a value yet.
//! - `T **pp = &p` binds `pp` as an alias of the pointer variable `p` (as a pointer to a
//!   private vector is an alias, [`vecptr`](super::vecptr)): `*pp` and `pp[0]` are `p`, so
//!   `*pp = q`, `**pp = 1`, `(*pp)[i]` and `*pp += 1` are what they are on `p`. A helper's
//!   `T **q` parameter given `&p` (or another such alias) is bound the same way: a helper
//!   that sets its caller's pointer through it sets `p`. `T ***ppp = &pp` is an alias of
//!   the alias `pp`, and so on.
//!
//! Refused by name: a variable index into an array of pointers, `__local` arrays of
//! pointers, arrays of pointers of several dimensions or of pointers to pointers, a
//! pointer to a pointer that is not the address of a pointer variable (or is given
//! another address later). Kernel parameters of pointer-to-pointer type are clang's
//! error (OpenCL C 1.2 §6.9).

use super::*;

/// The largest array of pointers: each element is a variable (or two).
const MAX_ELEMENTS: u64 = 1024;

impl<'u> Lowerer<'u> {
    /// `T *ps[N] (= {...});` in a function body: a pointer variable per element.
    pub(super) fn pointer_array_decl(&mut self, d: &cl::Decl, out: &mut Vec<k::Stmt>) -> Res<()> {
        let refused = || {
            unsupported(
                format!(
                    "this array of pointers (`{}`: only a private one of one dimension, of a \
                     constant size up to {MAX_ELEMENTS})",
                    d.name.name
                ),
                &d.ty.span,
            )
        };
        if d.ty.space == cl::AddrSpace::Local || d.ty.arrays.len() != 1 {
            return refused();
        }
        let list = match &d.init {
            None => None,
            Some(cl::Init::List(items, _)) => Some(items.as_slice()),
            Some(cl::Init::Expr(e)) => {
                return Err(Diagnostic::new(
                    "an array is initialised with a braced list `{...}`",
                    e.span.clone(),
                ))
            }
        };
        let n = match &d.ty.arrays[0] {
            Some(e) => private::const_int(e),
            None => list.map(|l| l.len() as u64),
        };
        let Some(n) = n.filter(|n| (1..=MAX_ELEMENTS).contains(n)) else {
            return refused();
        };
        if list.is_some_and(|l| l.len() as u64 > n) {
            return Err(Diagnostic::new(
                format!("too many initialisers for an array of {n} pointers"),
                d.span.clone(),
            ));
        }
        let elem = cl::Type {
            arrays: Vec::new(),
            ..d.ty.clone()
        };
        for i in 0..n as usize {
            let init = match list.map(|l| l.get(i)) {
                None => None,
                Some(Some(cl::Init::Expr(e))) => Some(cl::Init::Expr(
                    self.desugar(e)?.unwrap_or_else(|| e.clone()),
                )),
                Some(Some(cl::Init::List(_, s))) => {
                    return unsupported("braces around a pointer's initialiser", s)
                }
                // Past the list: C makes the element null.
                Some(None) => Some(cl::Init::Expr(cl::Expr {
                    kind: cl::ExprKind::Int {
                        value: 0,
                        unsigned: false,
                        long: false,
                    },
                    span: d.span.clone(),
                })),
            };
            // Declared as `ps.0` (its lowered name), then bound as `ps[0]` too.
            let element = cl::Decl {
                ty: elem.clone(),
                name: cl::Ident {
                    name: format!("{}.{i}", d.name.name),
                    span: d.name.span.clone(),
                },
                init,
                span: d.span.clone(),
            };
            self.pointer_decl(&element, out)?;
            let b = self
                .lookup(&element.name.name)
                .cloned()
                .expect("just declared");
            self.bind(&format!("{}[{i}]", d.name.name), b);
        }
        Ok(())
    }

    /// The binding of a pointer to a pointer (of type `ty`) whose value is `e`: an alias
    /// of the pointer `e` is the address of (or that `e`, itself such an alias, is one of).
    pub(super) fn pointer_alias(&self, e: &cl::Expr, ty: &cl::Type) -> Res<Binding> {
        use cl::ExprKind as E;
        let e = self.desugar(e)?.unwrap_or_else(|| e.clone());
        let target = match &e.kind {
            E::AddrOf(x) => match &x.kind {
                E::Name(n) => self.lookup(n).cloned(),
                _ => None,
            },
            E::Name(n) => match self.lookup(n) {
                Some(Binding::VecPtr(b)) => Some((**b).clone()),
                _ => None,
            },
            _ => None,
        };
        let Some((levels, var)) = target.as_ref().and_then(pointer_levels) else {
            return unsupported(
                "this pointer to a pointer (only the address of a pointer variable or of an \
                 element of an array of pointers, `&p`, `&ps[1]`)",
                &e.span,
            );
        };
        let inner = cl::Type {
            pointers: ty.pointers[ty.pointers.len() - 1..].to_vec(),
            ..ty.clone()
        };
        let (elem, lanes) = self.pointee_type(&inner, &ty.span)?;
        let pv = &self.pointers.vars[var];
        if levels + 1 != ty.pointers.len() || (pv.elem, pv.lanes) != (elem, lanes) {
            return unsupported(
                "a pointer to a pointer of another type (a cast between pointer types)",
                &e.span,
            );
        }
        Ok(Binding::VecPtr(Box::new(target.expect("a pointer"))))
    }

    /// `T **pp = &p;` (`T ***ppp = &pp;`, ...) in a function body: `pp` an alias of `p`.
    pub(super) fn pointer_pointer_decl(&mut self, d: &cl::Decl) -> Res<()> {
        if !d.ty.arrays.is_empty() {
            return unsupported("arrays of pointers to pointers", &d.ty.span);
        }
        let Some(cl::Init::Expr(e)) = &d.init else {
            return unsupported(
                format!(
                    "a pointer to a pointer without the address it holds (`{}`: ksim binds it \
                     to the pointer it is given, `T **q = &p;`)",
                    d.name.name
                ),
                &d.span,
            );
        };
        let b = self.pointer_alias(e, &d.ty)?;
        self.bind(&d.name.name, b);
        Ok(())
    }
}

/// The levels of pointers binding `b` holds (1 for a pointer variable, 2 for an alias of
/// one, ...) and the pointer variable at the end of the chain.
fn pointer_levels(b: &Binding) -> Option<(usize, &str)> {
    match b {
        Binding::Ptr(var) => Some((1, var)),
        Binding::VecPtr(inner) => pointer_levels(inner).map(|(n, var)| (n + 1, var)),
        _ => None,
    }
}
