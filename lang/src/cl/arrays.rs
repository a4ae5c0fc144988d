//! `__local` arrays of more than two dimensions (OpenCL C 1.2 §6.1.5, C99 §6.5.2.1): the
//! core has arrays of one and two dimensions, so `T A[d0][d1]...[dn]` becomes the row-major
//! two-dimensional `A[d0][d1 * ... * dn]`, and `A[i0][i1]...[in]` the element
//! `A[i0][(i1 * d2 + i2) * ... + in]`: the same memory layout and the same element, so
//! races and values are those of the source. The first index is checked against `d0`; the
//! others only against the flattened row, so an index past its own dimension but inside
//! the row is not reported (a [`Note`] says so where such an array is declared).

use super::*;

/// The two core dimensions of `dims` (the inner ones multiplied) and the inner
/// dimensions `d2..dn` that [`Lowerer::flat_index`] needs.
pub(super) fn flatten(dims: Vec<k::Expr>) -> (Vec<k::Expr>, Vec<k::Expr>) {
    let mut it = dims.into_iter();
    let d0 = it.next().expect("three dimensions or more");
    let d1 = it.next().expect("three dimensions or more");
    let rest: Vec<k::Expr> = it.collect();
    let row = rest.iter().fold(d1, |acc, d| {
        let span = acc.span.clone();
        ex(
            k::ExprKind::Binary(BinOp::Mul, Box::new(acc), Box::new(d.clone())),
            &span,
        )
    });
    (vec![d0, row], rest)
}

impl<'u> Lowerer<'u> {
    /// Records that `array` was flattened from `logical` dimensions, with its inner
    /// dimensions `d2..dn`, and notes what bounds checking it loses.
    pub(super) fn flattened(&mut self, array: &str, inner: Vec<k::Expr>, span: &Span) {
        self.flat.insert(array.to_string(), inner);
        self.note(
            span,
            "an array of more than two dimensions is flattened to two: an index past its own \
             dimension (other than the first) but inside the array is not reported as out of \
             bounds"
                .to_string(),
        );
    }

    /// `A[i0][i1]...` where `A` names a flattened array: the array, the name expression and
    /// the indices in source order (pointers never point into these arrays, so the chain
    /// of indices is the only way to reach an element).
    pub(super) fn flattened_chain<'e>(
        &self,
        e: &'e cl::Expr,
    ) -> Option<(String, &'e cl::Expr, Vec<&'e cl::Expr>)> {
        let mut indices = Vec::new();
        let mut cur = e;
        while let cl::ExprKind::Index(a, i) = &cur.kind {
            indices.push(&**i);
            cur = a;
        }
        let cl::ExprKind::Name(n) = &cur.kind else {
            return None;
        };
        match self.lookup(n) {
            Some(Binding::Array(a)) if self.flat.contains_key(a) && !indices.is_empty() => {
                indices.reverse();
                Some((a.clone(), cur, indices))
            }
            _ => None,
        }
    }

    /// The two core indices of `indices` (one per source dimension) into a flattened array;
    /// other arrays' indices unchanged.
    pub(super) fn flat_index(&self, array: &str, indices: Vec<k::Expr>) -> Res<Vec<k::Expr>> {
        let Some(inner) = self.flat.get(array) else {
            return Ok(indices);
        };
        if indices.len() != inner.len() + 2 {
            let span = indices.first().map_or(0..0, |i| i.span.clone());
            return unsupported(
                "indexing part of a multi-dimensional array (a pointer to a row)",
                &span,
            );
        }
        let mut it = indices.into_iter();
        let i0 = it.next().expect("checked");
        let i1 = it.next().expect("checked");
        let row = it.zip(inner).fold(i1, |acc, (i, d)| {
            let span = i.span.clone();
            let scaled = ex(
                k::ExprKind::Binary(BinOp::Mul, Box::new(acc), Box::new(d.clone())),
                &span,
            );
            ex(
                k::ExprKind::Binary(BinOp::Add, Box::new(scaled), Box::new(i)),
                &span,
            )
        });
        Ok(vec![i0, row])
    }
}
