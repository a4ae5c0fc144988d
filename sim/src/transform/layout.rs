//! Matrix linearisation (Alpinist Section 4.4) and its inverse: a 2D array `A[R][C]`
//! stored as the row-major 1D array `A[R * C]`, every access `A[i][j]` becoming
//! `A[i * C + j]`; and back, `A[e]` becoming `A[e / C][e % C]`.
//!
//! Linearisation is always applicable (row-major is how ksim and every device store a 2D
//! array). Delinearisation needs the 1D size to be a whole number of rows, checked on the
//! launch given.

use super::{atom, walk, Edit, TransformError, Transformed, Unit};
use lang::ast::{Expr, ExprKind, Param};

/// The declaration of array `name`: its dimension expressions and its span.
fn declared<'a>(unit: &'a Unit<'_>, name: &str) -> Result<&'a [Expr], TransformError> {
    unit.ast
        .params
        .iter()
        .find_map(|p| match p {
            Param::Array { name: n, dims, .. } if n.name == name => Some(dims.as_slice()),
            _ => None,
        })
        .ok_or_else(|| {
            TransformError::Refused(format!("the kernel has no array parameter `{name}`"))
        })
}

/// `--linearize ARRAY`.
pub fn linearize(unit: &Unit<'_>, name: &str) -> Result<Transformed, TransformError> {
    let dims = declared(unit, name)?;
    let [rows, cols] = dims else {
        return Err(TransformError::Refused(format!(
            "`{name}` has {} dimension{}; linearisation takes a 2D array",
            dims.len(),
            if dims.len() == 1 { "" } else { "s" }
        )));
    };
    let cols_text = atom(unit.text(&cols.span), cols);
    let mut edits = vec![Edit::new(
        rows.span.start..cols.span.end,
        format!("{} * {cols_text}", atom(unit.text(&rows.span), rows)),
    )];
    for a in walk::accesses(&unit.ast.body) {
        if a.array.name != name {
            continue;
        }
        let [i, j] = a.indices else {
            unreachable!("the checker accepts 2 indices for a 2D array")
        };
        // `A[i][j]`: `(` before i when it needs it, `][` becomes ` * C + `.
        let i_text = unit.text(&i.span);
        if atom(i_text, i) != i_text {
            edits.push(Edit::insert(i.span.start, "("));
        }
        let close = if atom(i_text, i) != i_text { ")" } else { "" };
        let plus_needs_parens = matches!(&j.kind, ExprKind::Binary(op, ..) if op.precedence() < 9)
            || matches!(j.kind, ExprKind::Cond(..));
        let (open_j, close_j) = if plus_needs_parens {
            ("(", ")")
        } else {
            ("", "")
        };
        edits.push(Edit::new(
            i.span.end..j.span.start,
            format!("{close} * {cols_text} + {open_j}"),
        ));
        if !close_j.is_empty() {
            edits.push(Edit::insert(j.span.end, close_j));
        }
    }
    Ok(Transformed {
        text: super::apply(unit.src, edits),
        notes: vec![format!("`{name}` is stored row-major in one dimension")],
    })
}

/// `--delinearize ARRAY:COLS`.
pub fn delinearize(unit: &Unit<'_>, name: &str, cols: &str) -> Result<Transformed, TransformError> {
    let dims = declared(unit, name)?;
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
    let mut edits = vec![Edit::new(size.span.clone(), format!("{rows}][{cols}"))];
    for a in walk::accesses(&unit.ast.body) {
        if a.array.name != name {
            continue;
        }
        let e = &a.indices[0];
        let t = atom(unit.text(&e.span), e);
        edits.push(Edit::new(
            e.span.clone(),
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
