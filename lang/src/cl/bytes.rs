//! Byte-level views of memory (OpenCL C 1.2 §6.2.5, C99 §6.3.2.3p7, §6.5p7): a pointer
//! cast that changes the element type, `(char *)A` of an `int` buffer, lowered to accesses
//! of the array's own elements, so that the engines keep one element type per array.
//!
//! A pointer whose element type `U` differs from its target array's `T` is a *view*: its
//! offset counts `U`s ([`super::pointer::Ptr::view`]). An access through it at `U` index `i`
//! covers the bytes `i * sizeof(U)` to `(i + 1) * sizeof(U) - 1` of the array, little-endian
//! as every OpenCL device ksim targets:
//!
//! - a narrower read (`char` of `int`) reads the element holding those bytes and takes
//!   them: `(char)(A[i / 4] >> 8 * (i % 4))`;
//! - a read of the same width reinterprets the element (`uint` of `int`: `(uint)A[i]`);
//! - a wider read (`int` of `short`) reads the elements it covers and joins them:
//!   `(int)((uint)(ushort)A[2i] | (uint)(ushort)A[2i + 1] << 16)`; each element is
//!   bounds-checked, so an `int` read at the last two bytes of a `short` buffer faults;
//! - a write of the same width stores the converted value; a wider write stores each
//!   element it covers (several statements: a work-item that sees half of it races with
//!   the write, and the race is reported).
//!
//! A `float` or `double` element, or view, goes through its bits ([`super::bitcast::bits`]):
//! a `char` of a `float` is a byte of `as_uint(A[i / 4])`, a `float` of `uint` data is
//! `as_float` of the joined or extracted word.
//!
//! Races and bounds are therefore per element of the array, which is exact for all of
//! the above: every write covers whole elements, so it overlaps any byte range inside
//! them. A *narrower* write (a `char` into an `int` element) would need per-byte race
//! detection (two work-items writing different bytes of one element do not race), so it
//! is refused but for `__local` arrays of the kernel, which then hold bytes; so are atomics
//! and asynchronous copies through a view, and views of vector arrays.
//!
//! **Alignment.** OpenCL C requires every access to be naturally aligned. An offset in
//! `U`s from the start of the array always is; a cast to a wider type (`(int *)(C + 1)` of
//! a `char` view) is checked where it happens by an `__aligned(off % r == 0)` S-ASSERT
//! ([`crate::core::Annotation::Aligned`]): a misaligned pointer is a fault naming it.

use super::bitcast::bits;
use super::pointer::Ptr;
use super::*;
use crate::core::Annotation;

/// An access through a view: the accessed type and the array's element type.
#[derive(Clone, Copy, Debug)]
pub(super) struct View {
    pub unit: TypeName,
    pub elem: TypeName,
}

fn int(value: u64, span: &Span) -> k::Expr {
    ex(
        k::ExprKind::Int {
            value,
            unsigned: false,
        },
        span,
    )
}

fn bin(op: BinOp, a: k::Expr, b: k::Expr, span: &Span) -> k::Expr {
    ex(k::ExprKind::Binary(op, Box::new(a), Box::new(b)), span)
}

fn cast(t: TypeName, e: k::Expr, span: &Span) -> k::Expr {
    ex(k::ExprKind::Cast(t, Box::new(e)), span)
}

/// The unsigned integer type of `bytes` bytes.
fn unsigned(bytes: u64) -> TypeName {
    match bytes {
        1 => TypeName::Uchar,
        2 => TypeName::Ushort,
        4 => TypeName::Uint,
        _ => TypeName::Ulong,
    }
}

/// `i / r` rounded towards minus infinity (C's `/` truncates), so that a negative index
/// reaches a negative element and faults as out of bounds.
fn floor_div(i: k::Expr, r: u64, span: &Span) -> k::Expr {
    if r == 1 {
        return i;
    }
    let neg = bin(BinOp::Lt, i.clone(), int(0, span), span);
    let down = bin(
        BinOp::Sub,
        bin(
            BinOp::Div,
            bin(BinOp::Add, i.clone(), int(1, span), span),
            int(r, span),
            span,
        ),
        int(1, span),
        span,
    );
    let up = bin(BinOp::Div, i, int(r, span), span);
    ex(
        k::ExprKind::Cond(Box::new(neg), Box::new(down), Box::new(up)),
        span,
    )
}

impl<'u> Lowerer<'u> {
    /// Whether `&e` must go through [`Lowerer::element_places`] to keep its view: `e` is
    /// an element of an array holding bytes or reached through a pointer cast.
    pub(super) fn byte_view_place(&self, e: &cl::Expr) -> bool {
        use cl::ExprKind as E;
        let (E::Index(base, _) | E::Deref(base)) = &e.kind else {
            return false;
        };
        match &base.kind {
            E::Name(n) => match self.lookup(n) {
                Some(Binding::Array(a)) => self.byte_arrays.contains_key(a),
                Some(Binding::Ptr(v)) => self.static_view(v),
                _ => false,
            },
            _ => false,
        }
    }

    /// Refuses a view of `elem` elements as `unit`s that ksim does not model.
    pub(super) fn viewable(
        &self,
        array: &str,
        elem: TypeName,
        unit: TypeName,
        span: &Span,
    ) -> Res<()> {
        let number = |t: TypeName| ty_of(t).is_integer() || ty_of(t).is_float();
        if !number(elem) || !number(unit) {
            return unsupported(
                format!(
                    "a pointer cast that changes the element type between `{}` and `{}` \
                     (byte-level views are of integer, float and double data)",
                    ty_of(elem).name(),
                    ty_of(unit).name()
                ),
                span,
            );
        }
        if self.vec_arrays.contains_key(array) {
            return unsupported(
                "a pointer cast that changes the element type of a vector array",
                span,
            );
        }
        if self.arrays.get(array).is_some_and(|a| a.1 != 1) {
            return unsupported("pointers into arrays of two dimensions", span);
        }
        Ok(())
    }

    /// `p` converted to a pointer to `to`: its offset in `to`s, with the S-ASSERT that it
    /// stays aligned when `to` is wider than what `p` counts (pushed to `pre`).
    pub(super) fn view_as(
        &mut self,
        p: Ptr,
        to: TypeName,
        span: &Span,
        pre: &mut Vec<k::Stmt>,
    ) -> Res<Ptr> {
        let elem = self.arrays[&p.array].0;
        let from = p.view.unwrap_or(elem);
        let view = (to != elem).then_some(to);
        if view.is_some() {
            self.viewable(&p.array, elem, to, span)?;
        }
        let (sf, st) = (type_size(from), type_size(to));
        let offset = match p.offset {
            None => None,
            Some(o) if sf == st => Some(o),
            Some(o) if sf > st => Some(bin(BinOp::Mul, o, int(sf / st, span), span)),
            Some(o) => {
                let r = st / sf;
                let o = cast(TypeName::Int, o, span);
                // Named after the array, so that a misalignment fault's values say which.
                let name = format!("{}_offset", p.array);
                let o = name_expr(&self.temp(&name, TypeName::Int, Some(o), span, pre), span);
                let aligned = bin(
                    BinOp::Eq,
                    bin(BinOp::Rem, o.clone(), int(r, span), span),
                    int(0, span),
                    span,
                );
                pre.push(st_call(Annotation::Aligned.name(), aligned, span));
                Some(bin(BinOp::Div, o, int(r, span), span))
            }
        };
        Ok(Ptr {
            array: p.array,
            offset,
            view,
        })
    }
}

/// The read of a view place of `array`, whose last index counts `view.unit`s.
pub(super) fn view_read(
    array: k::Ident,
    mut index: Vec<k::Expr>,
    view: View,
    span: &Span,
) -> k::Expr {
    let (su, se) = (type_size(view.unit), type_size(view.elem));
    let i = cast(TypeName::Int, index.pop().expect("an index"), span);
    // An element as its bits (a `float` as a `uint`, see [`super::bitcast`]).
    let load = |index: &Vec<k::Expr>, e: k::Expr| {
        let mut indices = index.clone();
        indices.push(e);
        let e = ex(
            k::ExprKind::Index {
                array: array.clone(),
                indices,
            },
            span,
        );
        bits(e, view.elem, unsigned(se), span)
    };
    // The `unit` whose bits are `x` (an integer of `su` bytes or wider).
    let unit = |x: k::Expr| bits(cast(unsigned(su), x, span), unsigned(su), view.unit, span);
    if su <= se {
        let r = se / su;
        let elem = load(&index, floor_div(i.clone(), r, span));
        if r == 1 {
            return unit(elem);
        }
        let wide = cast(word(se), elem, span);
        let sub = bin(
            BinOp::Sub,
            i.clone(),
            bin(BinOp::Mul, floor_div(i, r, span), int(r, span), span),
            span,
        );
        let shift = bin(BinOp::Mul, sub, int(8 * su, span), span);
        let shift = cast(word(se), shift, span);
        return unit(bin(BinOp::Shr, wide, shift, span));
    }
    let r = su / se;
    let w = word(su);
    let first = bin(BinOp::Mul, i, int(r, span), span);
    let mut joined: Option<k::Expr> = None;
    for j in 0..r {
        let e = load(&index, bin(BinOp::Add, first.clone(), int(j, span), span));
        let part = cast(w, cast(unsigned(se), e, span), span);
        let part = if j == 0 {
            part
        } else {
            bin(BinOp::Shl, part, cast(w, int(8 * se * j, span), span), span)
        };
        joined = Some(match joined {
            None => part,
            Some(acc) => bin(BinOp::BitOr, acc, part, span),
        });
    }
    unit(joined.expect("two elements or more"))
}

impl<'u> Lowerer<'u> {
    /// `*p = v` for a view place of `array` (its last index counts `view.unit`s): the
    /// stores of the elements the write covers.
    pub(super) fn view_write(
        &mut self,
        array: k::Ident,
        mut index: Vec<k::Expr>,
        view: View,
        v: k::Expr,
        span: &Span,
    ) -> Res<Vec<k::Stmt>> {
        let (su, se) = (type_size(view.unit), type_size(view.elem));
        if su < se {
            if let Some(decl) = self.local_spans.get(&array.name) {
                // A `__local` array of the body: the next pass gives it byte memory.
                self.bytewise.insert(decl.clone());
                self.bytes_grown = true;
                return unsupported(
                    "a `__local` array written byte by byte (lowered again)",
                    span,
                );
            }
            return unsupported(
                format!(
                    "a write of a `{}` into `{}` elements through a pointer cast into a \
                     buffer (a write narrower than the element is modelled for `__local` \
                     arrays declared in the kernel only)",
                    ty_of(view.unit).name(),
                    ty_of(view.elem).name()
                ),
                span,
            );
        }
        let i = cast(TypeName::Int, index.pop().expect("an index"), span);
        let store = |e: k::Expr, value: k::Expr| {
            let mut indices = index.clone();
            indices.push(e);
            st(
                k::StmtKind::Assign {
                    target: k::LValue::Elem {
                        array: array.clone(),
                        indices,
                    },
                    op: k::AssignOp::Set,
                    value,
                },
                span,
            )
        };
        let r = su / se;
        let v = bits(cast(view.unit, v, span), view.unit, unsigned(su), span);
        if r == 1 {
            return Ok(vec![store(i, bits(v, unsigned(se), view.elem, span))]);
        }
        let mut out = Vec::new();
        let w = word(su);
        let bits_var = self.temp("bits", w, Some(cast(w, v, span)), span, &mut out);
        let first = self.temp(
            "first",
            TypeName::Int,
            Some(bin(BinOp::Mul, i, int(r, span), span)),
            span,
            &mut out,
        );
        for j in 0..r {
            let part = bin(
                BinOp::Shr,
                name_expr(&bits_var, span),
                cast(w, int(8 * se * j, span), span),
                span,
            );
            let part = bits(
                cast(unsigned(se), part, span),
                unsigned(se),
                view.elem,
                span,
            );
            let at = bin(BinOp::Add, name_expr(&first, span), int(j, span), span);
            out.push(store(at, part));
        }
        Ok(out)
    }
}

/// The type shifts of values of this many bytes compute in: `uint` up to 4 bytes (C's
/// integer promotion would make narrower ones a signed `int`), `ulong` for 8.
fn word(bytes: u64) -> TypeName {
    if bytes == 8 {
        TypeName::Ulong
    } else {
        TypeName::Uint
    }
}

/// The S-ASSERT `name(cond)` as a statement.
fn st_call(name: &str, cond: k::Expr, span: &Span) -> k::Stmt {
    st(
        k::StmtKind::Call(ex(
            k::ExprKind::Call {
                func: ident(name, span),
                args: vec![cond],
            },
            span,
        )),
        span,
    )
}
