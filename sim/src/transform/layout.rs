//! Matrix linearisation (Alpinist Section 4.4) and its inverse: a 2D array `A[R][C]`
//! stored as the row-major 1D array `A[R * C]`, every access `A[i][j]` becoming
//! `A[i * C + j]`; and back, `A[e]` becoming `A[e / C][e % C]`.
//!
//! Linearisation is always applicable (row-major is how ksim and every device store a 2D
//! array). Delinearisation needs the 1D size to be a whole number of rows, checked on the
//! launch given.

use super::{atom, walk, Edit, TransformError, Transformed, Unit};
use lang::ast::{Expr, ExprKind, Param, Span};

/// The declaration of array `name`: where its name ends and its dimension expressions.
fn declared<'a>(unit: &'a Unit<'_>, name: &str) -> Result<(usize, &'a [Expr]), TransformError> {
    unit.ast
        .params
        .iter()
        .find_map(|p| match p {
            Param::Array { name: n, dims, .. } if n.name == name => {
                Some((n.span.end, dims.as_slice()))
            }
            _ => None,
        })
        .ok_or_else(|| {
            TransformError::Refused(format!("the kernel has no array parameter `{name}`"))
        })
}

/// The text between the brackets of each index of an access or declaration whose name
/// ends at `after`: the index expressions' spans leave out parentheses around them, and
/// an edit must not cut a pair.
fn brackets(src: &str, after: usize, indices: &[Expr]) -> Vec<Span> {
    let mut pos = after;
    indices
        .iter()
        .map(|e| {
            let open = pos + src[pos..].find('[').expect("an index has brackets");
            let close = e.span.end + src[e.span.end..].find(']').expect("closed");
            pos = close + 1;
            open + 1..close
        })
        .collect()
}

/// The text of a bracketed index in parentheses unless it is one already or binds
/// tighter than `min` (an operator's precedence; [`lang::ast::BinOp::precedence`]).
fn wrapped(src: &str, range: &Span, e: &Expr, min: u8) -> (&'static str, &'static str) {
    let t = src[range.clone()].trim();
    let loose = match &e.kind {
        ExprKind::Binary(op, ..) => op.precedence() < min,
        ExprKind::Cond(..) => true,
        _ => false,
    };
    if loose && t != format!("({})", &src[e.span.clone()]) {
        ("(", ")")
    } else {
        ("", "")
    }
}

/// `--linearize ARRAY`.
pub fn linearize(unit: &Unit<'_>, name: &str) -> Result<Transformed, TransformError> {
    let (decl_end, dims) = declared(unit, name)?;
    let [rows, cols] = dims else {
        return Err(TransformError::Refused(format!(
            "`{name}` has {} dimension{}; linearisation takes a 2D array",
            dims.len(),
            if dims.len() == 1 { "" } else { "s" }
        )));
    };
    let cols_text = atom(unit.text(&cols.span), cols);
    let decl = brackets(unit.src, decl_end, dims);
    let mut edits = vec![Edit::new(
        decl[0].start..decl[1].end,
        format!("{} * {cols_text}", atom(unit.text(&rows.span), rows)),
    )];
    for a in walk::accesses(&unit.ast.body) {
        if a.array.name != name {
            continue;
        }
        let [i, j] = a.indices else {
            unreachable!("the checker accepts 2 indices for a 2D array")
        };
        // `A[i][j]`: i in parentheses when it needs them, `][` becomes ` * C + `.
        let [bi, bj] = <[Span; 2]>::try_from(brackets(unit.src, a.array.span.end, a.indices))
            .expect("two indices");
        let (open_i, close_i) = wrapped(unit.src, &bi, i, 10);
        let (open_j, close_j) = wrapped(unit.src, &bj, j, 9);
        edits.push(Edit::insert(bi.start, open_i));
        edits.push(Edit::new(
            bi.end..bj.start,
            format!("{close_i} * {cols_text} + {open_j}"),
        ));
        edits.push(Edit::insert(bj.end, close_j));
    }
    Ok(Transformed {
        text: super::apply(unit.src, edits),
        notes: vec![format!("`{name}` is stored row-major in one dimension")],
    })
}

/// `--delinearize ARRAY:COLS`.
pub fn delinearize(unit: &Unit<'_>, name: &str, cols: &str) -> Result<Transformed, TransformError> {
    let (decl_end, dims) = declared(unit, name)?;
    let [size] = dims else {
        return Err(TransformError::Refused(format!(
            "`{name}` has {} dimensions; delinearisation takes a 1D array",
            dims.len()
        )));
    };
    let size_text = unit.text(&size.span);
    // The rows: `R` when the size is written `R * COLS`, else `SIZE / COLS` (then checked).
    let rows = match &size.kind {
        ExprKind::Binary(lang::ast::BinOp::Mul, r, c) if unit.text(&c.span) == cols => {
            unit.text(&r.span).to_string()
        }
        _ => format!("{} / {}", atom(size_text, size), paren(cols)),
    };
    let decl = brackets(unit.src, decl_end, dims);
    let mut edits = vec![Edit::new(decl[0].clone(), format!("{rows}][{cols}"))];
    let accesses: Vec<_> = (walk::accesses(&unit.ast.body).into_iter())
        .filter(|a| a.array.name == name)
        .collect();
    for a in &accesses {
        // The index is written twice, so an access to the array inside it would be edited
        // twice: refused rather than mangled.
        let b = brackets(unit.src, a.array.span.end, a.indices).remove(0);
        if accesses.iter().any(|x| b.contains(&x.array.span.start)) {
            return Err(TransformError::Refused(format!(
                "an index of `{name}` at line {} reads `{name}` itself",
                super::line_of(unit.src, b.start)
            )));
        }
        let e = &a.indices[0];
        let (open, close) = wrapped(unit.src, &b, e, 10);
        let t = format!("{open}{}{close}", unit.src[b.clone()].trim());
        edits.push(Edit::new(
            b,
            format!("{t} / {c}][{t} % {c}", c = paren(cols)),
        ));
    }
    let text = super::apply(unit.src, edits);
    check_rows(unit, name, &text, cols)?;
    Ok(Transformed {
        text,
        notes: vec![format!("`{name}` is stored as rows of {cols}")],
    })
}

/// `cols` in parentheses unless it is one word.
fn paren(cols: &str) -> String {
    if cols.chars().all(|c| c.is_alphanumeric() || c == '_') {
        cols.to_string()
    } else {
        format!("({cols})")
    }
}

/// Refuses unless the 2D array of `text` holds as many elements as the original 1D one
/// on the launch: `SIZE / COLS` rows of `COLS` lose the rest of a division.
fn check_rows(unit: &Unit<'_>, name: &str, text: &str, cols: &str) -> Result<(), TransformError> {
    let (before, after) = (unit.launch()?, super::launch_of(text, unit.opts)?);
    let len = |l: &interp::Launch| l.len(l.kernel.array(name).expect("declared"));
    if len(&before) != len(&after) {
        return Err(TransformError::Refused(format!(
            "`{name}` has {} elements on {}, not a whole number of rows of {cols}",
            len(&before),
            unit.launch_words()
        )));
    }
    Ok(())
}
