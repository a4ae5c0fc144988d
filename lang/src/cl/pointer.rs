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
//! **Pointer values.** A pointer whose target is chosen at run time (assigned two arrays,
//! `x ? A : B`, null, returned by a helper that returns either) is a *dynamic* pointer: two
//! `int` variables, a target tag and the offset. Tag 0 is null, -1 "not given a value
//! yet", and each array or private variable that is ever a target has a tag of its own
//! (from 1). The set of possible targets is static: the lowering runs again, with the
//! variable dynamic, when it finds that a variable needs it ([`lower`](super::lower) keeps
//! the facts between passes in [`Dynamic`]), so a variable the lowering never sees assigned
//! two targets keeps the static (array, offset) form above. Then
//!
//! - a read `p[k]` is the lazy chain `p == 1 ? A[o + k] : p == 2 ? B[o + k] : ...`, so
//!   only the chosen array is read (and seen by race detection);
//! - a write (an assignment, `++`, an atomic) is an `if`/`else` chain of the writes;
//! - either is preceded by S-ASSERT checks that fault with "null pointer dereference"
//!   (`__non_null`) or "a pointer is used before it is given a value" (`__initialised`)
//!   when the pointer may be null or uninitialised; the fault names the tag's variable,
//!   the pointer's own name;
//! - `p == q`, `p != 0`, `p < q`, ... compare (tag, offset) pairs: equal pointers have the
//!   same target and offset; null (tag 0) is below every other pointer. C leaves the order
//!   of pointers into different objects undefined; this is one consistent order.
//!
//! Bounds are checked where the access happens, on the element it reaches (C forbids
//! arithmetic that leaves the array, but only an access can fault on a device).
//!
//! A cast that changes the element type of integer data (a `char *` view of an `int`
//! buffer) is a *view*: [`Ptr::view`] says what its offset counts, and [`super::bytes`]
//! lowers each access through it. Refused with "not supported yet": pointers into
//! two-dimensional arrays, arithmetic on the address of a private variable, a pointer
//! subtracted from another or printed.

use super::bytes::View;
use super::*;
use crate::core::Annotation;
use std::collections::BTreeSet;

/// A pointer variable: its element type and, once assigned, its target array.
pub(super) struct PtrVar {
    pub elem: TypeName,
    /// Components per pointee: `n` for a pointer to an `n`-vector, 1 for a scalar (which
    /// may view a vector array's components, see [`Lowerer::same_lanes_target`]).
    pub lanes: u8,
    /// The lowered array name; `None` before the first assignment. Unused when dynamic.
    target: Option<String>,
    /// The source name, for messages.
    name: String,
    /// Identifies the variable across the lowering's passes.
    key: Key,
    /// The tag variable of a dynamic pointer (see the module doc).
    tag: Option<String>,
}

/// A pointer variable across passes: its declaration's span and source name (a helper's
/// parameter or result, inlined at several calls, is one key for all of them).
pub(super) type Key = (Span, String);

/// What one pass learnt about a dynamic pointer variable.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct DynInfo {
    /// Lowered names of the arrays and private variables it may point at.
    targets: BTreeSet<String>,
    /// Whether it may be null.
    null: bool,
    /// Whether it may be used before it is given a value.
    uninit: bool,
}

/// The dynamic pointer variables, kept from one lowering pass to the next.
pub(super) type Dynamic = HashMap<Key, DynInfo>;

/// The lowering's pointer state.
#[derive(Default)]
pub(super) struct Pointers {
    /// Pointer variables, by the lowered name of their offset variable.
    pub(super) vars: HashMap<String, PtrVar>,
    /// The tag of each target (from 1; 0 is null).
    tags: HashMap<String, i64>,
    /// The dynamic variables: what the earlier passes found, grown by this one.
    pub dynamic: Dynamic,
    /// Whether this pass found more than the earlier ones: the lowering runs again.
    pub grown: bool,
}

impl Pointers {
    pub fn new(dynamic: Dynamic) -> Pointers {
        Pointers {
            dynamic,
            ..Pointers::default()
        }
    }
}

/// Tag of a pointer that has not been given a value.
const UNINIT: i64 = -1;
/// Tag of the null pointer.
const NULL: i64 = 0;

/// A pointer value: an array and the offset (in elements) into it; `None` is offset 0.
/// `array` may instead name a private scalar variable (lowered names are unique), whose
/// pointers have offset 0.
#[derive(Clone)]
pub(super) struct Ptr {
    pub array: String,
    pub offset: Option<k::Expr>,
    /// The pointee type when it is not the array's element type (a view through a pointer
    /// cast, see [`super::bytes`]): the offset then counts values of this type.
    pub view: Option<TypeName>,
}

/// A pointer value whose target is chosen at run time: pure expressions for its tag and
/// offset, and what it may point at.
#[derive(Clone)]
pub(super) struct Dyn {
    tag: k::Expr,
    offset: k::Expr,
    targets: BTreeSet<String>,
    null: bool,
    uninit: bool,
    /// The element type, where the value says it (a variable, a cast).
    elem: Option<TypeName>,
}

/// A pointer value of either form.
#[derive(Clone)]
pub(super) enum PVal {
    One(Ptr),
    Many(Dyn),
}

impl PVal {
    /// The arrays and private variables the value may point at (none: always null).
    pub(super) fn targets(&self) -> Vec<&str> {
        match self {
            PVal::One(p) => vec![p.array.as_str()],
            PVal::Many(d) => d.targets.iter().map(String::as_str).collect(),
        }
    }

    /// The same value with its run-time parts (the offset, and the tag of a value chosen at
    /// run time) replaced by what `f` makes of them: an asynchronous copy keeps its
    /// pointers in variables until the wait that completes it (`async_copy`).
    pub(super) fn map_parts(self, mut f: impl FnMut(&str, k::Expr) -> k::Expr) -> PVal {
        match self {
            PVal::One(p) => PVal::One(Ptr {
                offset: p.offset.map(|o| f("offset", o)),
                ..p
            }),
            PVal::Many(d) => PVal::Many(Dyn {
                tag: f("tag", d.tag),
                offset: f("offset", d.offset),
                ..d
            }),
        }
    }
}

/// One of the places a dereference may reach, with the condition (on the tag) that
/// chooses it; `None` for the last (or only) one.
#[derive(Clone)]
pub(super) struct Arm {
    pub when: Option<k::Expr>,
    pub array: k::Ident,
    pub index: Vec<k::Expr>,
    /// An access through a view ([`super::bytes`]): the last index counts its values.
    pub view: Option<View>,
}

fn add(a: Option<k::Expr>, b: k::Expr, span: &Span) -> k::Expr {
    match a {
        None => b,
        Some(a) => bin(BinOp::Add, a, b, span),
    }
}

fn bin(op: BinOp, a: k::Expr, b: k::Expr, span: &Span) -> k::Expr {
    ex(k::ExprKind::Binary(op, Box::new(a), Box::new(b)), span)
}

fn int(value: i64, span: &Span) -> k::Expr {
    let lit = ex(
        k::ExprKind::Int {
            value: value.unsigned_abs(),
            unsigned: false,
        },
        span,
    );
    if value < 0 {
        ex(k::ExprKind::Unary(UnOp::Neg, Box::new(lit)), span)
    } else {
        lit
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

/// Whether a lowered expression can be repeated as it is (a name or a literal).
fn simple(e: &k::Expr) -> bool {
    matches!(
        e.kind,
        k::ExprKind::Name(_) | k::ExprKind::Int { .. } | k::ExprKind::Bool(_)
    )
}

/// `if (w1) {s1} else if (w2) {s2} ... else {sn}`: the statements of each arm under its
/// condition (the last arm's, `None`, is the `else`).
pub(super) fn chain(arms: Vec<(Option<k::Expr>, Vec<k::Stmt>)>, span: &Span) -> Vec<k::Stmt> {
    let mut rest: Option<Vec<k::Stmt>> = None;
    for (when, stmts) in arms.into_iter().rev() {
        rest = Some(match (when, rest) {
            (None, _) | (Some(_), None) => stmts,
            (Some(w), Some(r)) => vec![if_then(w, stmts, Some(r), span)],
        });
    }
    rest.unwrap_or_default()
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
            E::Name(n) => matches!(
                self.lookup(n),
                Some(
                    Binding::Array(_)
                        | Binding::Ptr(_)
                        | Binding::VecPtr(_)
                        | Binding::Struct { dims: 1.., .. }
                )
            ),
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
            E::Index(..) => self.is_ptr_member(e),
            _ => false,
        }
    }

    /// The (array, offset) a pointer expression denotes, where its target is known
    /// statically; side effects go to `pre`.
    pub(super) fn pointer(&mut self, e: &cl::Expr, pre: &mut Vec<k::Stmt>) -> Res<Ptr> {
        match self.pointer_value(e, pre)? {
            PVal::One(p) => Ok(p),
            PVal::Many(_) => unsupported(
                "a pointer whose target is chosen at run time (or null) here",
                &e.span,
            ),
        }
    }

    /// The tag of target `array`.
    fn tag_of(&mut self, array: &str) -> i64 {
        let n = self.pointers.tags.len() as i64 + 1;
        *self.pointers.tags.entry(array.to_string()).or_insert(n)
    }

    /// A statically known pointer as a dynamic one.
    fn dynamic_of(&mut self, p: Ptr, span: &Span) -> Res<Dyn> {
        if p.view.is_some() {
            return unsupported(
                "a pointer cast that changes the element type of a pointer whose target is \
                 chosen at run time",
                span,
            );
        }
        let tag = self.tag_of(&p.array);
        Ok(Dyn {
            tag: int(tag, span),
            offset: p.offset.unwrap_or_else(|| int(0, span)),
            elem: self.elem_of(&p.array),
            targets: BTreeSet::from([p.array]),
            null: false,
            uninit: false,
        })
    }

    /// The view a pointer to `elem` into `target` is: `None` when `elem` is the array's
    /// element type or the target is a private variable.
    fn view_of(&self, target: &str, elem: TypeName) -> Option<TypeName> {
        match self.arrays.get(target) {
            Some(a) if a.0 != elem => Some(elem),
            _ => None,
        }
    }

    /// Whether pointer variable `var` has a static target that it views as another type.
    pub(super) fn static_view(&self, var: &str) -> bool {
        let pv = &self.pointers.vars[var];
        let target = pv.target.as_deref().filter(|_| pv.tag.is_none());
        target.is_some_and(|t| self.view_of(t, pv.elem).is_some())
    }

    /// Whether seeing `p` as a pointer to `elem` changes what its offset counts.
    fn views(&self, p: &Ptr, elem: TypeName) -> bool {
        p.view.is_some() || self.view_of(&p.array, elem).is_some()
    }

    /// `v` as a pointer to `elem` (its offset counting `elem`s, see [`super::bytes`]).
    fn in_units(
        &mut self,
        v: PVal,
        elem: TypeName,
        span: &Span,
        pre: &mut Vec<k::Stmt>,
    ) -> Res<PVal> {
        match v {
            PVal::One(p)
                if !self.is_private(&p.array)
                    && p.view.unwrap_or(self.arrays[&p.array].0) != elem =>
            {
                Ok(PVal::One(self.view_as(p, elem, span, pre)?))
            }
            v => Ok(v),
        }
    }

    fn elem_of(&self, target: &str) -> Option<TypeName> {
        match self.arrays.get(target) {
            Some(a) => Some(a.0),
            None => self.types.get(target).copied(),
        }
    }

    /// The null pointer (of element type `elem`, if known).
    fn null_value(elem: Option<TypeName>, span: &Span) -> PVal {
        PVal::Many(Dyn {
            tag: int(NULL, span),
            offset: int(0, span),
            targets: BTreeSet::new(),
            null: true,
            uninit: false,
            elem,
        })
    }

    /// Records that the variable `key` is dynamic and may point at `targets` (and be null
    /// or uninitialised); the error that makes the lowering run again.
    fn grow(
        &mut self,
        key: &Key,
        targets: impl IntoIterator<Item = String>,
        null: bool,
        uninit: bool,
        span: &Span,
    ) -> Diagnostic {
        let info = self.pointers.dynamic.entry(key.clone()).or_default();
        let before = info.clone();
        info.targets.extend(targets);
        info.null |= null;
        info.uninit |= uninit;
        if *info != before {
            self.pointers.grown = true;
        }
        Diagnostic::new(
            format!(
                "not supported yet: the targets of the pointer `{}` (the lowering did not settle them)",
                key.1
            ),
            span.clone(),
        )
    }

    /// The value of pointer variable `var`.
    fn var_value(&mut self, var: &str, span: &Span) -> Res<PVal> {
        let pv = &self.pointers.vars[var];
        let key = pv.key.clone();
        if let Some(tag) = pv.tag.clone() {
            let info = self.pointers.dynamic[&key].clone();
            return Ok(PVal::Many(Dyn {
                tag: name_expr(&tag, span),
                offset: name_expr(var, span),
                targets: info.targets,
                null: info.null,
                uninit: info.uninit,
                elem: Some(pv.elem),
            }));
        }
        match pv.target.clone() {
            Some(a) => Ok(PVal::One(Ptr {
                view: self.view_of(&a, pv.elem),
                array: a,
                offset: Some(name_expr(var, span)),
            })),
            // Used where it may not have a value yet: a dynamic pointer next time.
            None => Err(self.grow(&key, [], false, true, span)),
        }
    }

    /// The value a pointer expression denotes; side effects go to `pre`.
    pub(super) fn pointer_value(&mut self, e: &cl::Expr, pre: &mut Vec<k::Stmt>) -> Res<PVal> {
        use cl::ExprKind as E;
        let span = &e.span;
        match &e.kind {
            E::Name(n) => match self.lookup(n).cloned() {
                Some(Binding::Array(a)) => Ok(PVal::One(Ptr {
                    view: self.byte_arrays.get(&a).copied(),
                    array: a,
                    offset: None,
                })),
                Some(Binding::Ptr(v)) => self.var_value(&v, span),
                Some(Binding::VecPtr(_)) => unsupported(
                    format!(
                        "this use of `{n}`, a pointer to a private vector or pointer variable (only `*{n}`, \
                         `{n}[0]`, `{n}->x` and passing it to a helper)"
                    ),
                    span,
                ),
                _ if is_null(e) => Ok(Self::null_value(None, span)),
                Some(Binding::Struct { tag, .. }) => unsupported(
                    format!(
                        "a pointer to `struct {tag}` (`{n}`) as a value: ksim keeps each \
                         member in an array of its own, so a struct has no bytes to view or \
                         point into; use its members"
                    ),
                    span,
                ),
                _ => Err(Diagnostic::new(
                    format!("`{n}` is not a pointer"),
                    span.clone(),
                )),
            },
            E::AddrOf(inner) => match &inner.kind {
                E::Name(n) => match self.lookup(n).cloned() {
                    Some(Binding::Cell(a)) | Some(Binding::Array(a)) => Ok(PVal::One(Ptr {
                        view: self.byte_arrays.get(&a).copied(),
                        array: a,
                        offset: None,
                    })),
                    Some(Binding::Scalar(v)) => Ok(PVal::One(Ptr {
                        array: v,
                        offset: None,
                        view: None,
                    })),
                    Some(
                        Binding::Ptr(_)
                        | Binding::VecPtr(_)
                        | Binding::PtrMember(_)
                        | Binding::StructPtr(_),
                    ) => unsupported("pointers to pointers", span),
                    Some(Binding::Struct { .. }) => unsupported("pointers to structs", span),
                    Some(Binding::Vector { .. }) => {
                        unsupported("the address of a private vector", span)
                    }
                    Some(Binding::Image(_)) => unsupported("the address of an image", span),
                    None => Err(Diagnostic::new(
                        format!("unknown name `{n}`"),
                        inner.span.clone(),
                    )),
                },
                // `&*p` is `p`; `&p[k]` of a dynamic pointer is `p + k`.
                E::Deref(p) if self.dynamic_syntax(p) => self.pointer_value(p, pre),
                E::Index(p, k) if self.dynamic_syntax(p) => {
                    let v = self.pointer_value(p, pre)?;
                    self.moved(v, k, false, span, pre)
                }
                E::Index(..) | E::Deref(_) if self.byte_view_place(inner) => {
                    let (mut arms, _) = self.element_places(inner, pre)?;
                    let a = arms.pop().expect("one place");
                    let mut idx = self.source_indices(&a.array.name, a.index);
                    if idx.len() != 1 || !arms.is_empty() {
                        return unsupported("pointers into arrays of two dimensions", span);
                    }
                    Ok(PVal::One(Ptr {
                        array: a.array.name,
                        offset: idx.pop(),
                        view: a.view.map(|v| v.unit),
                    }))
                }
                E::Index(..) | E::Deref(_) => {
                    let (array, idx) = self.element(inner, pre)?;
                    let mut idx = self.source_indices(&array.name, idx);
                    if idx.is_empty() {
                        return Ok(PVal::One(Ptr {
                            array: array.name,
                            offset: None,
                            view: None,
                        }));
                    }
                    if idx.len() != 1 {
                        return unsupported("pointers into arrays of two dimensions", span);
                    }
                    Ok(PVal::One(Ptr {
                        array: array.name,
                        offset: idx.pop(),
                        view: None,
                    }))
                }
                _ => unsupported("taking the address of this expression", span),
            },
            E::Binary(op @ (BinOp::Add | BinOp::Sub), a, b) => {
                let (p, i) = if self.is_pointer(a) { (a, b) } else { (b, a) };
                if self.is_pointer(i) {
                    return unsupported("pointer differences and sums of pointers", span);
                }
                let p = self.pointer_value(p, pre)?;
                self.moved(p, i, *op == BinOp::Sub, span, pre)
            }
            E::Cast(t, a) => {
                if t.pointers.len() != 1 {
                    return unsupported("pointers to pointers", span);
                }
                let (elem, lanes) = self.pointee_type(t, span)?;
                if is_null(a) {
                    return Ok(Self::null_value(Some(elem), span));
                }
                let p = self.pointer_value(a, pre)?;
                match p {
                    PVal::One(p) if lanes == 1 && self.views(&p, elem) => {
                        Ok(PVal::One(self.view_as(p, elem, span, pre)?))
                    }
                    PVal::One(p) => {
                        self.same_target(&p.array, (elem, lanes), span)?;
                        Ok(PVal::One(p))
                    }
                    PVal::Many(d) => {
                        for t in &d.targets {
                            self.same_target(t, (elem, lanes), span)?;
                        }
                        Ok(PVal::Many(d))
                    }
                }
            }
            E::Cond(c, a, b) => {
                let c = self.expr(c, pre)?;
                let (mut pa, mut pb) = (Vec::new(), Vec::new());
                let x = self.pointer_value(a, &mut pa)?;
                let y = self.pointer_value(b, &mut pb)?;
                if !(pa.is_empty() && pb.is_empty()) {
                    return unsupported("side effects in a `?:` between pointers", span);
                }
                match (x, y) {
                    (PVal::One(x), PVal::One(y)) if x.array == y.array => {
                        let (oa, ob) = (
                            x.offset.unwrap_or_else(|| int(0, span)),
                            y.offset.unwrap_or_else(|| int(0, span)),
                        );
                        if x.view.is_some() || y.view.is_some() {
                            return unsupported("a `?:` between pointer casts", span);
                        }
                        Ok(PVal::One(Ptr {
                            view: None,
                            array: x.array,
                            offset: Some(ex(
                                k::ExprKind::Cond(Box::new(c), Box::new(oa), Box::new(ob)),
                                span,
                            )),
                        }))
                    }
                    (x, y) => {
                        let c = if simple(&c) {
                            c
                        } else {
                            let t = self.temp("cond", TypeName::Bool, Some(c), span, pre);
                            name_expr(&t, span)
                        };
                        let x = self.as_dynamic(x, span)?;
                        let y = self.as_dynamic(y, span)?;
                        let pick = |a: k::Expr, b: k::Expr| {
                            ex(
                                k::ExprKind::Cond(Box::new(c.clone()), Box::new(a), Box::new(b)),
                                span,
                            )
                        };
                        Ok(PVal::Many(Dyn {
                            tag: pick(x.tag, y.tag),
                            offset: pick(x.offset, y.offset),
                            targets: x.targets.union(&y.targets).cloned().collect(),
                            null: x.null || y.null,
                            uninit: x.uninit || y.uninit,
                            elem: x.elem.or(y.elem),
                        }))
                    }
                }
            }
            E::IncDec(op, a) => {
                let old = self.pointer_value(a, pre)?;
                self.value_movable(&old, span)?;
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
                    return self.pointer_value(a, pre);
                }
                let old_offset = match &old {
                    PVal::One(p) => p.offset.clone(),
                    PVal::Many(d) => Some(d.offset.clone()),
                };
                let t = self.temp("old", TypeName::Int, old_offset, span, pre);
                pre.push(step);
                Ok(match old {
                    PVal::One(p) => PVal::One(Ptr {
                        array: p.array,
                        offset: Some(name_expr(&t, span)),
                        view: p.view,
                    }),
                    PVal::Many(d) => PVal::Many(Dyn {
                        offset: name_expr(&t, span),
                        ..d
                    }),
                })
            }
            E::Assign { target, .. } => {
                self.effect(e, pre)?;
                self.pointer_value(target, pre)
            }
            E::Comma(a, b) => {
                self.effect(a, pre)?;
                self.pointer_value(b, pre)
            }
            E::Plus(a) => self.pointer_value(a, pre),
            E::Call { func, args } => match self.funcs.get(func.name.as_str()).copied() {
                Some(f) if !f.ret.pointers.is_empty() => {
                    let var = self.inline_pointer(f, args, span, pre)?;
                    self.var_value(&var, span)
                }
                _ => unsupported(format!("this call as a pointer (`{}`)", func.name), span),
            },
            _ if is_null(e) => Ok(Self::null_value(None, span)),
            E::Index(..) if self.is_ptr_member(e) => self.ptr_member_use(e),
            _ => unsupported("this pointer expression", span),
        }
    }

    /// Whether pointer expression `e` is one whose address arithmetic must go through
    /// [`Self::pointer_value`] (a dynamic variable, a choice, a call) rather than through
    /// the element it reaches.
    fn dynamic_syntax(&self, e: &cl::Expr) -> bool {
        use cl::ExprKind as E;
        match &e.kind {
            E::Name(_) => self
                .pointer_name(e)
                .is_some_and(|v| self.pointers.vars[&v].tag.is_some()),
            E::Cond(..) | E::Call { .. } => self.is_pointer(e),
            _ => false,
        }
    }

    /// `p + i` (`p - i` when `sub`).
    fn moved(
        &mut self,
        p: PVal,
        i: &cl::Expr,
        sub: bool,
        span: &Span,
        pre: &mut Vec<k::Stmt>,
    ) -> Res<PVal> {
        self.value_movable(&p, span)?;
        let i = self.expr(i, pre)?;
        let i = if sub {
            ex(k::ExprKind::Unary(UnOp::Neg, Box::new(i)), span)
        } else {
            i
        };
        Ok(match p {
            PVal::One(p) => PVal::One(Ptr {
                offset: Some(add(p.offset, i, span)),
                array: p.array,
                view: p.view,
            }),
            PVal::Many(d) => PVal::Many(Dyn {
                offset: add(Some(d.offset.clone()), i, span),
                ..d
            }),
        })
    }

    /// A pointer value in the dynamic form.
    fn as_dynamic(&mut self, v: PVal, span: &Span) -> Res<Dyn> {
        match v {
            PVal::One(p) => self.dynamic_of(p, span),
            PVal::Many(d) => Ok(d),
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

    /// Refuses arithmetic on a value that may point at a private variable.
    fn value_movable(&self, v: &PVal, span: &Span) -> Res<()> {
        match v {
            PVal::One(p) => self.not_private(&p.array, span),
            PVal::Many(d) => d.targets.iter().try_for_each(|t| self.not_private(t, span)),
        }
    }

    /// Refuses moving pointer variable `var` when it points at a private variable.
    pub(super) fn movable(&self, var: &str, span: &Span) -> Res<()> {
        let pv = &self.pointers.vars[var];
        if pv.tag.is_some() {
            let info = &self.pointers.dynamic[&pv.key];
            return info
                .targets
                .iter()
                .try_for_each(|t| self.not_private(t, span));
        }
        match &pv.target {
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
        if p.view.is_some() {
            return unsupported(
                "this use of a pointer cast that changes the element type (only reads and \
                 writes through it)",
                span,
            );
        }
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
        let i = match (p.offset, index) {
            (None, None) => int(0, span),
            (o, Some(i)) => add(o, i, span),
            (Some(o), None) => o,
        };
        Ok((
            ident(&p.array, span),
            self.thread_row(&p.array, vec![i], span),
        ))
    }

    /// The S-ASSERT checks before a use of dynamic pointer `d` (`deref`: a dereference,
    /// which null faults; otherwise a use of its value, which only an uninitialised
    /// pointer faults).
    fn pointer_checks(&self, d: &Dyn, deref: bool, span: &Span, pre: &mut Vec<k::Stmt>) {
        let mut check = |a: Annotation, tag: i64| {
            let cond = bin(BinOp::Ne, d.tag.clone(), int(tag, span), span);
            pre.push(st(
                k::StmtKind::Call(ex(
                    k::ExprKind::Call {
                        func: ident(a.name(), span),
                        args: vec![cond],
                    },
                    span,
                )),
                span,
            ));
        };
        if d.uninit {
            check(Annotation::Initialised, UNINIT);
        }
        if deref && d.null {
            check(Annotation::NonNull, NULL);
        }
    }

    /// The places a dereference of `v` (plus `index`) may reach, with the checks that must
    /// hold first (pushed to `pre`), and the element type. No places: `v` is always null.
    pub(super) fn places(
        &mut self,
        v: PVal,
        index: Option<k::Expr>,
        span: &Span,
        pre: &mut Vec<k::Stmt>,
    ) -> Res<(Vec<Arm>, TypeName)> {
        let d = match v {
            PVal::One(p) => {
                let array_elem = self.elem_of(&p.array).unwrap_or(TypeName::Int);
                let view = p.view.map(|unit| View {
                    unit,
                    elem: array_elem,
                });
                let (array, index) = self.pointee(Ptr { view: None, ..p }, index, span)?;
                return Ok((
                    vec![Arm {
                        when: None,
                        array,
                        index,
                        view,
                    }],
                    view.map_or(array_elem, |v| v.unit),
                ));
            }
            PVal::Many(d) => d,
        };
        self.pointer_checks(&d, true, span, pre);
        let mut arms = Vec::new();
        let n = d.targets.len();
        for (k, t) in d.targets.iter().enumerate() {
            let tag = self.tag_of(t);
            let offset = (!self.is_private(t)).then(|| d.offset.clone());
            let (array, index) = self.pointee(
                Ptr {
                    array: t.clone(),
                    offset,
                    view: None,
                },
                index.clone(),
                span,
            )?;
            let when = (k + 1 < n).then(|| bin(BinOp::Eq, d.tag.clone(), int(tag, span), span));
            arms.push(Arm {
                when,
                array,
                index,
                view: None,
            });
        }
        let elem = d
            .elem
            .or_else(|| d.targets.iter().find_map(|t| self.elem_of(t)))
            .unwrap_or(TypeName::Int);
        Ok((arms, elem))
    }

    /// A read of the places `arms`: the lazy `?:` chain, so that only the chosen one is
    /// read; an always-null pointer (no arms) reads 0 after its check has faulted.
    pub(super) fn read_places(arms: Vec<Arm>, elem: TypeName, span: &Span) -> k::Expr {
        let load = |a: Arm| {
            if let Some(view) = a.view {
                super::bytes::view_read(a.array, a.index, view, span)
            } else if a.index.is_empty() {
                name_expr(&a.array.name, span)
            } else {
                ex(
                    k::ExprKind::Index {
                        array: a.array,
                        indices: a.index,
                    },
                    span,
                )
            }
        };
        let mut rest: Option<k::Expr> = None;
        for a in arms.into_iter().rev() {
            rest = Some(match (a.when.clone(), rest) {
                (Some(w), Some(r)) => ex(
                    k::ExprKind::Cond(Box::new(w), Box::new(load(a)), Box::new(r)),
                    span,
                ),
                _ => load(a),
            });
        }
        rest.unwrap_or_else(|| ex(k::ExprKind::Cast(elem, Box::new(int(0, span))), span))
    }

    /// `a == b`, `a < b`, ... of two pointer expressions: on their (tag, offset) pairs.
    pub(super) fn pointer_compare(
        &mut self,
        op: BinOp,
        a: &cl::Expr,
        b: &cl::Expr,
        span: &Span,
        pre: &mut Vec<k::Stmt>,
    ) -> Res<k::Expr> {
        let x = self.pointer_value(a, pre)?;
        let y = self.pointer_value(b, pre)?;
        let (x, y) = match (x, y) {
            (PVal::One(x), PVal::One(y)) if x.array == y.array => {
                let zero = || int(0, span);
                let (ox, oy) = (x.offset.unwrap_or_else(zero), y.offset.unwrap_or_else(zero));
                return Ok(bin(op, ox, oy, span));
            }
            (x, y) => (self.as_dynamic(x, span)?, self.as_dynamic(y, span)?),
        };
        self.pointer_checks(&x, false, span, pre);
        self.pointer_checks(&y, false, span, pre);
        let same = bin(BinOp::Eq, x.tag.clone(), y.tag.clone(), span);
        let by_offset = bin(op, x.offset, y.offset, span);
        Ok(match op {
            BinOp::Eq => bin(BinOp::LogAnd, same, by_offset, span),
            BinOp::Ne => bin(BinOp::LogOr, not(same), by_offset, span),
            _ => {
                // Different targets order by tag; the same target by offset.
                let strict = match op {
                    BinOp::Le => BinOp::Lt,
                    BinOp::Ge => BinOp::Gt,
                    o => o,
                };
                bin(
                    BinOp::LogOr,
                    bin(
                        BinOp::LogAnd,
                        not(same.clone()),
                        bin(strict, x.tag, y.tag, span),
                        span,
                    ),
                    bin(BinOp::LogAnd, same, by_offset, span),
                    span,
                )
            }
        })
    }

    /// The element type a pointer type points to, and its components (1 for a scalar):
    /// `float4 *` points to `float` elements 4 at a time.
    pub(super) fn pointee_type(&self, t: &cl::Type, span: &Span) -> Res<(TypeName, u8)> {
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

    /// Refuses a pointer to `lanes`-component `elem` elements into `array` unless the
    /// array has them (a private target is one variable or row: its lanes are not checked).
    fn same_target(&self, array: &str, (elem, lanes): (TypeName, u8), span: &Span) -> Res<()> {
        self.same_element(array, elem, span)?;
        if !self.is_private(array) {
            self.same_lanes_target(array, lanes, span)?;
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

    /// Refuses a target that pointer variable `var` cannot have.
    fn valid_target(&self, var: &str, array: &str, span: &Span) -> Res<()> {
        let (elem, lanes) = (self.pointers.vars[var].elem, self.pointers.vars[var].lanes);
        match self.arrays.get(array) {
            Some(&(have, 1)) if have != elem && lanes == 1 => {
                return self.viewable(array, have, elem, span)
            }
            _ => self.same_element(array, elem, span)?,
        }
        if !self.is_private(array) {
            self.same_lanes_target(array, lanes, span)?;
        } else if lanes != 1 {
            return unsupported("the address of a private vector", span);
        }
        Ok(())
    }

    /// Declares a pointer variable `name` (its offset variable, and its tag variable when
    /// the earlier passes found it dynamic), not yet given a value.
    fn new_pointer_var(
        &mut self,
        name: &str,
        (elem, lanes): (TypeName, u8),
        key: Key,
        span: &Span,
        out: &mut Vec<k::Stmt>,
    ) -> String {
        let dynamic = self.pointers.dynamic.contains_key(&key);
        // The tag takes the pointer's own name: a fault's values name it.
        let tag = dynamic.then(|| {
            let t = self.declare_scalar(name, TypeName::Int);
            out.push(st(
                k::StmtKind::Decl {
                    ty: TypeName::Int,
                    name: ident(&t, span),
                    init: Some(int(UNINIT, span)),
                },
                span,
            ));
            t
        });
        let var = if dynamic {
            self.declare_scalar(&format!("{name}_offset"), TypeName::Int)
        } else {
            self.declare_scalar(name, TypeName::Int)
        };
        out.push(st(
            k::StmtKind::Decl {
                ty: TypeName::Int,
                name: ident(&var, span),
                init: dynamic.then(|| int(0, span)),
            },
            span,
        ));
        self.pointers.vars.insert(
            var.clone(),
            PtrVar {
                elem,
                lanes,
                target: None,
                name: name.to_string(),
                key,
                tag,
            },
        );
        var
    }

    /// Gives pointer variable `var` the value `v`.
    fn assign_pointer(
        &mut self,
        var: &str,
        v: PVal,
        span: &Span,
        out: &mut Vec<k::Stmt>,
    ) -> Res<()> {
        let pv = &self.pointers.vars[var];
        let (key, tag, old) = (pv.key.clone(), pv.tag.clone(), pv.target.clone());
        let elem = pv.elem;
        let v = self.in_units(v, elem, span, out)?;
        let Some(tag) = tag else {
            let p = match v {
                PVal::One(p) => p,
                PVal::Many(d) => {
                    return Err(self.grow(
                        &key,
                        d.targets.into_iter().chain(old),
                        d.null,
                        false,
                        span,
                    ))
                }
            };
            self.valid_target(var, &p.array, span)?;
            if let Some(t) = &old {
                if *t != p.array {
                    return Err(self.grow(&key, [t.clone(), p.array], false, false, span));
                }
            }
            self.pointers
                .vars
                .get_mut(var)
                .expect("a pointer variable")
                .target = Some(p.array);
            let offset = p.offset.unwrap_or_else(|| int(0, span));
            out.push(set(
                var,
                ex(k::ExprKind::Cast(TypeName::Int, Box::new(offset)), span),
                span,
            ));
            return Ok(());
        };
        let d = self.as_dynamic(v, span)?;
        for t in &d.targets {
            self.valid_target(var, t, span)?;
        }
        let info = &self.pointers.dynamic[&key];
        if !d.targets.is_subset(&info.targets)
            || (d.null && !info.null)
            || (d.uninit && !info.uninit)
        {
            return Err(self.grow(&key, d.targets, d.null, d.uninit, span));
        }
        // The offset first: the tag's expression never reads an offset variable, while
        // the offset's may read this pointer's old tag (`p = q + (p == r)`).
        let offset = ex(k::ExprKind::Cast(TypeName::Int, Box::new(d.offset)), span);
        out.push(set(var, offset, span));
        out.push(set(&tag, d.tag, span));
        Ok(())
    }

    /// Declares pointer variable `name` (identified by `key`) with the value `p`.
    pub(super) fn pointer_var(
        &mut self,
        name: &str,
        (elem, lanes): (TypeName, u8),
        p: PVal,
        key: Key,
        span: &Span,
        out: &mut Vec<k::Stmt>,
    ) -> Res<String> {
        let p = self.in_units(p, elem, span, out)?;
        if let (PVal::One(p), false) = (&p, self.pointers.dynamic.contains_key(&key)) {
            // The static form: one declaration of the offset.
            let var = self.declare_scalar(name, TypeName::Int);
            self.pointers.vars.insert(
                var.clone(),
                PtrVar {
                    elem,
                    lanes,
                    target: Some(p.array.clone()),
                    name: name.to_string(),
                    key,
                    tag: None,
                },
            );
            self.valid_target(&var, &p.array, span)?;
            out.push(st(
                k::StmtKind::Decl {
                    ty: TypeName::Int,
                    name: ident(&var, span),
                    init: Some(p.offset.clone().unwrap_or_else(|| int(0, span))),
                },
                span,
            ));
            return Ok(var);
        }
        let var = self.new_pointer_var(name, (elem, lanes), key, span, out);
        self.assign_pointer(&var, p, span, out)?;
        Ok(var)
    }

    /// `T *p;` or `T *p = e;` in a function body (any address space of the pointee).
    pub(super) fn pointer_decl(&mut self, d: &cl::Decl, out: &mut Vec<k::Stmt>) -> Res<()> {
        if d.ty.pointers.len() > 1 {
            return self.pointer_pointer_decl(d);
        }
        if !d.ty.arrays.is_empty() {
            return self.pointer_array_decl(d, out);
        }
        let (elem, lanes) = self.pointee_type(&d.ty, &d.ty.span)?;
        if let Some(cl::Init::Expr(e)) = &d.init {
            if let Some(b) = self.vector_address(e, (elem, lanes)) {
                self.bind(&d.name.name, b);
                return Ok(());
            }
        }
        let key = (d.name.span.clone(), d.name.name.clone());
        let var = match &d.init {
            None => {
                if let Some(info) = self.pointers.dynamic.get_mut(&key) {
                    info.uninit = true;
                }
                self.new_pointer_var(&d.name.name, (elem, lanes), key, &d.name.span, out)
            }
            Some(cl::Init::Expr(e)) => {
                if !is_null(e) && !self.is_pointer(e) {
                    return Err(Diagnostic::new(
                        format!(
                            "`{}` is a pointer; this is not a pointer value",
                            d.name.name
                        ),
                        e.span.clone(),
                    ));
                }
                let p = self.pointer_value(e, out)?;
                self.pointer_var(&d.name.name, (elem, lanes), p, key, &e.span, out)?
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
        match op {
            None => {
                if !is_null(value) && !self.is_pointer(value) {
                    return Err(Diagnostic::new(
                        format!(
                            "`{}` is a pointer; this is not a pointer value",
                            self.pointers.vars[var].name
                        ),
                        value.span.clone(),
                    ));
                }
                let p = self.pointer_value(value, out)?;
                self.assign_pointer(var, p, span, out)
            }
            Some(op @ (BinOp::Add | BinOp::Sub)) => {
                self.movable(var, span)?;
                // Its value now (an unassigned static pointer becomes dynamic here).
                let _ = self.var_value(var, span)?;
                let k = self.expr(value, out)?;
                let v = bin(op, name_expr(var, span), k, span);
                // The offset is an `int`; an unsigned step converts as C's pointer
                // arithmetic does for offsets that fit.
                let v = ex(k::ExprKind::Cast(TypeName::Int, Box::new(v)), span);
                out.push(set(var, v, span));
                Ok(())
            }
            Some(op) => Err(Diagnostic::new(
                format!("`{}=` does not apply to a pointer", op.symbol()),
                span.clone(),
            )),
        }
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
        if !is_null(a) && !self.is_pointer(a) {
            return unsupported(
                "passing this expression as a pointer (a buffer, array, pointer or address)",
                &a.span,
            );
        }
        let (elem, lanes) = self.pointee_type(&p.ty, &p.ty.span)?;
        if let Some(b) = self.vector_address(a, (elem, lanes)) {
            return Ok(b);
        }
        let ptr = self.pointer_value(a, pre)?;
        let pname = p.name.as_ref().map_or("arg", |n| n.name.as_str());
        let key = (
            p.name.as_ref().map_or(p.span.clone(), |n| n.span.clone()),
            pname.to_string(),
        );
        if let PVal::One(ptr) = &ptr {
            if !self.is_private(&ptr.array) {
                self.same_lanes(&p.ty, &ptr.array, &a.span)?;
            }
            if ptr.offset.is_none()
                && ptr.view.is_none()
                && self.view_of(&ptr.array, elem).is_none()
                && !written.contains(pname)
                && !self.is_private(&ptr.array)
                && !self.pointers.dynamic.contains_key(&key)
            {
                let (have, dims) = self.arrays[&ptr.array];
                if dims == 1 {
                    self.same_element(&ptr.array, elem, &a.span)?;
                } else if have != elem {
                    return unsupported("a pointer cast that changes the element type", &a.span);
                }
                return Ok(Binding::Array(ptr.array.clone()));
            }
        }
        let var = self.pointer_var(pname, (elem, lanes), ptr, key, &a.span, stmts)?;
        Ok(Binding::Ptr(var))
    }

    /// Inlines a call of helper `f`, which returns a pointer: its result is a pointer
    /// variable (identified across calls by the helper's name), which `return e;` sets.
    pub(super) fn inline_pointer(
        &mut self,
        f: &'u cl::Function,
        args: &[cl::Expr],
        span: &Span,
        pre: &mut Vec<k::Stmt>,
    ) -> Res<String> {
        if f.ret.pointers.len() > 1 {
            return unsupported("pointers to pointers", &f.ret.span);
        }
        let shape = self.pointee_type(&f.ret, &f.ret.span)?;
        let name = format!("{}_result", f.name.name);
        let key = (f.name.span.clone(), name.clone());
        let var = self.new_pointer_var(&name, shape, key, span, pre);
        self.inline_with(f, args, span, pre, Some((var.clone(), TypeName::Int)), None)?;
        Ok(var)
    }

    /// Whether `var` (a helper's result variable) is a pointer variable.
    pub(super) fn is_pointer_var(&self, var: &str) -> bool {
        self.pointers.vars.contains_key(var)
    }

    /// The (tag, offset) a pointer value is stored as in memory (see `structptr`); a value
    /// that may be uninitialised is checked first.
    pub(super) fn pointer_pair(
        &mut self,
        v: PVal,
        span: &Span,
        pre: &mut Vec<k::Stmt>,
    ) -> Res<(k::Expr, k::Expr)> {
        let d = self.as_dynamic(v, span)?;
        self.pointer_checks(&d, false, span, pre);
        Ok((d.tag, d.offset))
    }

    /// Pointer variable `var` (a bodiless helper's result) set to null.
    pub(super) fn return_null(
        &mut self,
        var: &str,
        span: &Span,
        out: &mut Vec<k::Stmt>,
    ) -> Res<()> {
        let elem = self.pointers.vars[var].elem;
        self.assign_pointer(var, Self::null_value(Some(elem), span), span, out)
    }

    /// `return e;` of a helper returning a pointer, its result in pointer variable `var`.
    pub(super) fn return_pointer(
        &mut self,
        var: &str,
        e: &cl::Expr,
        span: &Span,
        out: &mut Vec<k::Stmt>,
    ) -> Res<()> {
        let p = self.pointer_value(e, out)?;
        self.assign_pointer(var, p, span, out)
    }
}
