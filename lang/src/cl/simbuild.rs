//! The build options a `.sim` file names in a `# build: OPTS` comment (the options the
//! benchmark's host passes to `clBuildProgram`, which Oclgrind takes with
//! `--build-options`): `-D NAME[=VALUE]` and `-I DIR` apply to the program's build;
//! `-cl-*` and warning flags (`-w`, `-W...`) change nothing ksim computes (ksim neither
//! optimises nor contracts, and has no warnings to silence) and are ignored with a note;
//! any other option is an error at its span, rather than a build that silently differs.

use crate::ast::Span;
use crate::diag::Diagnostic;

/// What the `# build:` comments of a `.sim` text give, in order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BuildOptions {
    pub defines: Vec<(String, Option<String>)>,
    /// `-I` directories as written (relative to the `.sim` file's directory).
    pub include: Vec<String>,
    /// The options ignored, with their spans, for the note.
    pub ignored: Vec<(String, Span)>,
    /// The comments' spans (for a note that they were not applied).
    pub spans: Vec<Span>,
}

impl BuildOptions {
    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }
}

/// The options of every `# build:` comment of `text` (a comment whose text starts with
/// `build:`, anywhere a `#` comment may be).
pub fn build_options(text: &str) -> Result<BuildOptions, Diagnostic> {
    let mut out = BuildOptions::default();
    let mut line_start = 0;
    for line in text.split_inclusive('\n') {
        let base = line_start;
        line_start += line.len();
        let Some(hash) = line.find('#') else { continue };
        let comment = &line[hash + 1..];
        let lead = comment.len() - comment.trim_start().len();
        let Some(opts) = comment.trim_start().strip_prefix("build:") else {
            continue;
        };
        let at = base + hash + 1 + lead + "build:".len();
        out.spans.push(base + hash..base + line.trim_end().len());
        let mut words = words(opts, at).into_iter();
        while let Some((w, span)) = words.next() {
            // `-D X` and `-I DIR` take the next word when the option stands alone.
            let mut operand = |flag: &str| -> Result<(String, Span), Diagnostic> {
                match w.strip_prefix(flag) {
                    Some("") => words.next().ok_or_else(|| {
                        Diagnostic::new(format!("`{flag}` without an operand"), span.clone())
                    }),
                    Some(rest) => Ok((rest.to_string(), span.clone())),
                    None => unreachable!("the caller checked the prefix"),
                }
            };
            if w.starts_with("-D") {
                let (d, _) = operand("-D")?;
                out.defines.push(match d.split_once('=') {
                    Some((n, v)) => (n.to_string(), Some(v.to_string())),
                    None => (d, None),
                });
            } else if w.starts_with("-I") {
                out.include.push(operand("-I")?.0);
            } else if w.starts_with("-cl-") || w == "-w" || w.starts_with("-W") {
                out.ignored.push((w, span));
            } else {
                return Err(Diagnostic::new(
                    format!(
                        "unsupported build option `{w}` (ksim applies -D and -I, and ignores \
                         -cl-* and warning options)"
                    ),
                    span,
                ));
            }
        }
    }
    Ok(out)
}

/// The whitespace-separated words of `s` with their spans (`s` starts at `at`).
fn words(s: &str, at: usize) -> Vec<(String, Span)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in s.char_indices().chain([(s.len(), ' ')]) {
        match (c.is_whitespace(), start) {
            (false, None) => start = Some(i),
            (true, Some(b)) => {
                out.push((s[b..i].to_string(), at + b..at + i));
                start = None;
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defines_includes_and_ignored_flags_are_read_from_build_comments() {
        let text = "# a comment\n# build: -DBLOCK_SIZE=16 -D FAST -I inc -cl-mad-enable\nk.cl\n\
                    k  # build: -Iother -w\n";
        let b = build_options(text).unwrap();
        assert_eq!(
            b.defines,
            vec![
                ("BLOCK_SIZE".to_string(), Some("16".to_string())),
                ("FAST".to_string(), None)
            ]
        );
        assert_eq!(b.include, vec!["inc".to_string(), "other".to_string()]);
        let ignored: Vec<_> = b
            .ignored
            .iter()
            .map(|(w, s)| (w.as_str(), &text[s.clone()]))
            .collect();
        assert_eq!(
            ignored,
            vec![("-cl-mad-enable", "-cl-mad-enable"), ("-w", "-w")]
        );
        assert_eq!(b.spans.len(), 2);
    }

    #[test]
    fn no_build_comment_gives_nothing() {
        let b = build_options("# build is not here\nk.cl\nk\n").unwrap();
        assert!(b.is_empty(), "{b:?}");
    }

    #[test]
    fn an_unknown_option_or_a_missing_operand_is_an_error_at_its_span() {
        let text = "# build: -DX -O3\n";
        let e = build_options(text).unwrap_err();
        assert!(e.message.contains("`-O3`"), "{}", e.message);
        assert_eq!(&text[e.span], "-O3");
        let text = "# build: -D\n";
        let e = build_options(text).unwrap_err();
        assert!(e.message.contains("without an operand"), "{}", e.message);
    }
}
