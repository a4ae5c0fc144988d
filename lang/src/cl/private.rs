//! Private arrays (`int a[4] = {1, 2, 3, 4};` in a function body) and program-scope
//! `__constant` tables (`__constant int T[4] = {...};`). The core has no private arrays, so
//! each becomes a `local` array of the kernel with **one row per thread**:
//! `T a[d0]...[dn]` is `local T a.private[local_size][d0 * ... * dn]`, and `a[i]...` the
//! element `a.private[tid][...]` (the inner indices row-major, as [`arrays`] flattens).
//! A thread only ever reaches its own row, so two threads never touch the same element
//! and the array never races; an index outside `d0 * ... * dn` is an out-of-bounds fault
//! naming `a.private`, the thread's row and the index; `run` prints it under that name,
//! one row per thread (`[tid]`). Without an initialiser the elements are undefined, as
//! a `local` array's are (`--uninit`, interp's `undef` module): a read before a write is an
//! uninitialised read; an initialiser list stores every element (C zero-fills the rest).
//! A table's zero elements are not stored: the launch treats `.constant` arrays as defined.
//!
//! A `__constant` table is such an array too (`T.constant`), filled by every thread at the
//! start of the kernel from its initialiser (a copy per thread, so the fill never races),
//! and read-only afterwards: a write to it (also through a pointer, or an atomic) is an
//! error at load. A `__constant` scalar is a variable set in the prologue, read-only too.

use super::*;

/// An integer constant expression (after preprocessing): literals and arithmetic on them.
pub(super) fn const_int(e: &cl::Expr) -> Option<u64> {
    use cl::ExprKind as E;
    Some(match &e.kind {
        E::Int { value, .. } => *value,
        E::Char(c) => u64::try_from(*c).ok()?,
        E::Binary(op, a, b) => {
            let (a, b) = (const_int(a)?, const_int(b)?);
            match op {
                BinOp::Add => a.checked_add(b)?,
                BinOp::Sub => a.checked_sub(b)?,
                BinOp::Mul => a.checked_mul(b)?,
                BinOp::Div => a.checked_div(b)?,
                BinOp::Rem => a.checked_rem(b)?,
                BinOp::Shl => a.checked_shl(u32::try_from(b).ok()?)?,
                BinOp::Shr => a.checked_shr(u32::try_from(b).ok()?)?,
                _ => return None,
            }
        }
        E::Cast(_, a) => const_int(a)?,
        _ => return None,
    })
}

/// The scalar initialisers of an array of dimensions `dims` in row-major order (`None`
/// where the list gives none: C makes that element zero), from a braced list with C's
/// brace elision: a nested list fills the next whole sub-array, a bare expression the next
/// element.
fn flat_inits<'e>(
    list: &'e [cl::Init],
    dims: &[u64],
    span: &Span,
) -> Res<Vec<Option<&'e cl::Expr>>> {
    let total: u64 = dims.iter().product();
    let sub: u64 = dims[1..].iter().product();
    let mut out: Vec<Option<&cl::Expr>> = Vec::new();
    for i in list {
        match i {
            cl::Init::Expr(e) => out.push(Some(e)),
            cl::Init::List(inner, s) => {
                if dims.len() < 2 {
                    return unsupported("braces around a scalar initialiser", s);
                }
                // Align to the next sub-array, then fill it.
                while !(out.len() as u64).is_multiple_of(sub) {
                    out.push(None);
                }
                let mut part = flat_inits(inner, &dims[1..], s)?;
                part.resize(sub as usize, None);
                out.append(&mut part);
            }
        }
        if out.len() as u64 > total {
            return Err(Diagnostic::new(
                format!("too many initialisers for an array of {total} elements"),
                span.clone(),
            ));
        }
    }
    out.resize(total as usize, None);
    Ok(out)
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

impl<'u> Lowerer<'u> {
    /// `T a[d0]...[dn] (= {...});` in a function body (private memory).
    pub(super) fn private_array_decl(&mut self, d: &cl::Decl, out: &mut Vec<k::Stmt>) -> Res<()> {
        let name = self.rows_array(d, "private", out)?;
        self.bind(&d.name.name, Binding::Array(name));
        Ok(())
    }

    /// Declares the one-row-per-thread array of `d` (`NAME.suffix`) and appends to `out` the
    /// stores of its initialiser; returns the array's lowered name.
    fn rows_array(&mut self, d: &cl::Decl, suffix: &str, out: &mut Vec<k::Stmt>) -> Res<String> {
        let table = suffix == "constant";
        let span = &d.span;
        // An array of `n`-vectors holds `stride(n)` slots per element (see `vector`).
        let (elem, lanes) = match self.vec_base(&d.ty.base, &d.ty.span)? {
            Some(shape) => shape,
            None => (self.base(&d.ty.base, &d.ty.span)?, 1),
        };
        let stride = super::vector_stride(lanes) as u64;
        let list = match &d.init {
            None => None,
            Some(cl::Init::List(l, _)) => Some(l.as_slice()),
            Some(cl::Init::Expr(e)) => {
                return Err(Diagnostic::new(
                    "an array is initialised with a braced list `{...}`",
                    e.span.clone(),
                ))
            }
        };
        let mut dims = Vec::new();
        for (k, size) in d.ty.arrays.iter().enumerate() {
            let n = match size {
                Some(e) => const_int(e).filter(|&n| n > 0).ok_or_else(|| {
                    Diagnostic::new(
                        "an array's size must be a positive integer constant",
                        e.span.clone(),
                    )
                })?,
                None if k == 0 && list.is_some() => 0, // from the initialiser, below
                None => {
                    return Err(Diagnostic::new(
                        "an array needs a size (or an initialiser list)",
                        d.ty.span.clone(),
                    ))
                }
            };
            dims.push(n);
        }
        if dims[0] == 0 {
            // `int a[] = {...}`: as many rows as the list fills.
            let sub: u64 = dims[1..].iter().product();
            // A bare expression fills one element, a braced list a whole sub-array.
            let given = list.unwrap_or_default().iter().fold(0u64, |n, i| match i {
                cl::Init::Expr(_) => n + 1,
                cl::Init::List(..) => n.div_ceil(sub) * sub + sub,
            });
            dims[0] = given.div_ceil(sub).max(1);
        }
        let total = dims
            .iter()
            .chain([&stride])
            .try_fold(1u64, |a, &n| a.checked_mul(n))
            .filter(|&n| n <= u32::MAX as u64)
            .ok_or_else(|| Diagnostic::new("this array is too large", d.ty.span.clone()))?;
        let name = self.fresh(&format!("{}.{suffix}", d.name.name));
        let dspan = &d.name.span;
        self.local_arrays.push(k::Param::Array {
            is_const: false,
            space: Space::Local,
            elem,
            name: ident(&name, dspan),
            dims: vec![name_expr("local_size", dspan), int(total, dspan)],
            span: span.clone(),
        });
        self.arrays.insert(name.clone(), (elem, dims.len()));
        if lanes > 1 {
            self.vec_arrays.insert(name.clone(), lanes);
        }
        if dims.len() > 1 {
            let inner = dims[1..].iter().map(|&n| int(n, dspan)).collect();
            self.flat.insert(name.clone(), inner);
            self.note(
                &d.ty.span,
                format!(
                    "a {suffix} array of several dimensions is checked against its whole size: an \
                     index past its own dimension but inside the array is not reported as out \
                     of bounds"
                ),
            );
        }
        self.per_thread.insert(name.clone());
        if let Some(list) = list {
            // A vector element's initialiser is its components, braced or not (`{{0, 1,
            // 2}, {3, 4, 5}}` or `{0, 1, 2, 3, 4, 5}` for an `int3 t[2]`): the vector is
            // one more dimension of `lanes` scalars.
            let shape: Vec<u64> = dims.iter().copied().chain([lanes as u64]).collect();
            let shape = if lanes > 1 { &shape[..] } else { &dims[..] };
            for (p, init) in flat_inits(list, shape, span)?.into_iter().enumerate() {
                if let Some(e) = init.filter(|e| self.vec_shape(e).is_some()) {
                    return unsupported(
                        "a vector value in the initialiser of an array of vectors (list its components)",
                        &e.span,
                    );
                }
                let lanes = lanes as usize;
                let i = p / lanes * stride as usize + p % lanes;
                if table && init.is_none_or(|e| const_int(e) == Some(0)) {
                    // A table is filled once, at the start, over a zero row.
                    continue;
                }
                let value = match init {
                    Some(e) => self.expr(e, out)?,
                    None if elem == TypeName::Float => ex(k::ExprKind::Float(0.0), span),
                    None if elem == TypeName::Bool => boolean(false, span),
                    None => int(0, span),
                };
                let espan = init.map_or(span, |e| &e.span).clone();
                out.push(st(
                    k::StmtKind::Assign {
                        target: k::LValue::Elem {
                            array: ident(&name, &espan),
                            indices: vec![name_expr("tid", &espan), int(i as u64, &espan)],
                        },
                        op: k::AssignOp::Set,
                        value,
                    },
                    &espan,
                ));
            }
        }
        Ok(name)
    }

    /// The core indices of an element of `array`: the thread's row first for an array with
    /// one row per thread, the indices unchanged for any other array.
    pub(super) fn thread_row(
        &self,
        array: &str,
        mut indices: Vec<k::Expr>,
        span: &Span,
    ) -> Vec<k::Expr> {
        if self.per_thread.contains(array) {
            indices.insert(0, name_expr("tid", span));
        }
        indices
    }

    /// The indices of an element of `array` as the source wrote them: without the thread's
    /// row that [`Self::thread_row`] added.
    pub(super) fn source_indices(&self, array: &str, mut indices: Vec<k::Expr>) -> Vec<k::Expr> {
        if self.per_thread.contains(array) && !indices.is_empty() {
            indices.remove(0);
        }
        indices
    }

    /// The program-scope `__constant` variables of the unit, bound in the outermost scope
    /// (so that every function sees them); their fill goes to `out`, the kernel's prologue.
    pub(super) fn program_scope(&mut self, vars: &[&cl::Decl], out: &mut Vec<k::Stmt>) -> Res<()> {
        for d in vars {
            // A program-scope sampler is constant (OpenCL C 1.2 §6.12.14.1).
            if d.ty.space != cl::AddrSpace::Constant && !images::is_sampler(&d.ty) {
                return unsupported(
                    "program-scope variables other than `__constant` ones",
                    &d.span,
                );
            }
            let b = if !d.ty.pointers.is_empty() {
                return unsupported("program-scope `__constant` pointers", &d.span);
            } else if !d.ty.arrays.is_empty() {
                let name = self.rows_array(d, "constant", out)?;
                self.readonly.insert(name.clone());
                Binding::Array(name)
            } else {
                if self.vec_base(&d.ty.base, &d.ty.span)?.is_some() {
                    return unsupported("program-scope `__constant` vectors", &d.ty.span);
                }
                let ty = self.base(&d.ty.base, &d.ty.span)?;
                let init = match &d.init {
                    Some(cl::Init::Expr(e)) => self.expr(e, out)?,
                    Some(cl::Init::List(_, s)) => return unsupported("initialiser lists", s),
                    None => {
                        return Err(Diagnostic::new(
                            "a `__constant` variable needs an initialiser",
                            d.span.clone(),
                        ))
                    }
                };
                let name = self.declare_scalar(&format!("{}.constant", d.name.name), ty);
                out.push(st(
                    k::StmtKind::Decl {
                        ty,
                        name: ident(&name, &d.name.span),
                        init: Some(init),
                    },
                    &d.span,
                ));
                self.readonly.insert(name.clone());
                if let Some(cl::Init::Expr(e)) = &d.init {
                    self.note_sampler(&d.ty, &name, Some(e));
                }
                Binding::Scalar(name)
            };
            self.scopes[0].insert(d.name.name.clone(), b.clone());
            self.globals.insert(d.name.name.clone(), b);
        }
        Ok(())
    }

    /// Refuses a write to `name` (a lowered array or variable) if it is `__constant`.
    pub(super) fn writable(&self, name: &str, span: &Span) -> Res<()> {
        if self.readonly.contains(name) {
            let source = name.strip_suffix(".constant").unwrap_or(name);
            return Err(Diagnostic::new(
                format!("`{source}` is `__constant`: it cannot be written"),
                span.clone(),
            ));
        }
        Ok(())
    }
}
