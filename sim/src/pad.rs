//! Padding text to a column width computed from the data (a name's length, a cell's).
//! Rust's `{:width$}` takes a width below 65,536 and panics beyond it, and an array name
//! or a row of cells can be longer: these pad by hand, for any width.

/// `s` followed by spaces up to `width` characters (as `{s:<width$}`).
pub fn left(s: &str, width: usize) -> String {
    let mut out = s.to_string();
    out.extend(std::iter::repeat_n(
        ' ',
        width.saturating_sub(s.chars().count()),
    ));
    out
}

/// Spaces up to `width` characters, then `s` (as `{s:>width$}`).
pub fn right(s: &str, width: usize) -> String {
    let mut out: String =
        std::iter::repeat_n(' ', width.saturating_sub(s.chars().count())).collect();
    out.push_str(s);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pads_as_format_does_and_beyond_its_limit() {
        assert_eq!(left("ab", 4), format!("{:<4}", "ab"));
        assert_eq!(right("ab", 4), format!("{:>4}", "ab"));
        assert_eq!(left("αβ", 3), "αβ ");
        assert_eq!(left("abc", 1), "abc");
        assert_eq!(left("", 70_000).len(), 70_000);
        assert_eq!(right("x", 70_000).len(), 70_000);
    }
}
