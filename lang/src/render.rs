//! Rendering [`Diagnostic`]s for humans with ariadne.
//!
//! Each diagnostic becomes an ariadne report: `Error: <message>`, then a location line
//! `╭─[ path:line:col ]` (1-based line and character column of the primary span's start),
//! the source excerpt with the primary label and the secondary labels, then the notes.

use ariadne::{Color, Config, IndexType, Label, Report, ReportKind, Source};

use crate::ast::Span;
use crate::diag::Diagnostic;

/// 1-based line and column (in characters) of byte `offset` in `source`. Offsets past the end
/// are clamped to the end; offsets inside a multi-byte character count as that character.
pub fn line_col(source: &str, offset: usize) -> (usize, usize) {
    let offset = floor_char_boundary(source, offset);
    let before = &source[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let col = before[line_start..].chars().count() + 1;
    (line, col)
}

fn floor_char_boundary(source: &str, offset: usize) -> usize {
    let mut o = offset.min(source.len());
    while !source.is_char_boundary(o) {
        o -= 1;
    }
    o
}

fn ceil_char_boundary(source: &str, offset: usize) -> usize {
    let mut o = offset.min(source.len());
    while !source.is_char_boundary(o) {
        o += 1;
    }
    o
}

/// Make a span safe for ariadne: inside the source, on character boundaries, not reversed.
fn clamp(source: &str, span: &Span) -> Span {
    let start = floor_char_boundary(source, span.start);
    let end = ceil_char_boundary(source, span.end.max(span.start)).max(start);
    start..end
}

/// Render every diagnostic (in order) as ariadne reports for the file `path`.
pub fn render(diags: &[Diagnostic], path: &str, source: &str, color: bool) -> String {
    let mut out = String::new();
    let config = Config::default()
        .with_index_type(IndexType::Byte)
        .with_color(color);
    for d in diags {
        let span = clamp(source, &d.span);
        let (kind, kind_name, red) = if d.warning {
            (ReportKind::Warning, "Warning", Color::Yellow)
        } else {
            (ReportKind::Error, "Error", Color::Red)
        };
        let primary_color = if color { red } else { Color::Primary };
        let secondary_color = if color { Color::Blue } else { Color::Primary };
        let mut report = Report::build(kind, (path, span.clone()))
            .with_config(config)
            .with_message(&d.message)
            .with_label(
                Label::new((path, span.clone()))
                    .with_message(primary_label(d))
                    .with_color(primary_color)
                    .with_order(0),
            );
        for (i, (s, text)) in d.labels.iter().enumerate() {
            if *s == d.span {
                continue; // it is the primary label's text (see `primary_label`)
            }
            report = report.with_label(
                Label::new((path, clamp(source, s)))
                    .with_message(text)
                    .with_color(secondary_color)
                    .with_order(i as i32 + 1),
            );
        }
        for n in &d.notes {
            report = report.with_note(n);
        }
        let mut buf = Vec::new();
        let written = report
            .finish()
            .write((path, Source::from(source)), &mut buf);
        let text = String::from_utf8_lossy(&buf);
        let (line, col) = line_col(source, span.start);
        let location = format!("{path}:{line}:{col}");
        if written.is_err() || !text.contains(&location) {
            // Ariadne could not show the source (it should always be able to); fall back to a
            // plain header so that the location is never lost.
            out.push_str(&format!("{kind_name}: {}\n   --> {location}\n", d.message));
            for n in &d.notes {
                out.push_str(&format!("   Note: {n}\n"));
            }
        } else {
            let starts: Vec<usize> = std::iter::once(span.start)
                .chain(d.labels.iter().map(|(s, _)| clamp(source, s).start))
                .collect();
            out.push_str(&fix_section_headers(&text, path, source, &starts));
        }
    }
    out
}

/// Ariadne starts a new section of a report when a label lies on an earlier line than the
/// one before it, and heads every section with the report's own `file:line:col`, so the
/// second header named a line its snippet does not show. Each header is rewritten to name
/// the first labelled position on the first source line of its section.
fn fix_section_headers(text: &str, path: &str, source: &str, starts: &[usize]) -> String {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut out = String::with_capacity(text.len());
    for (i, line) in lines.iter().enumerate() {
        let plain = strip_ansi(line);
        let is_header = plain.contains("─[ ") && plain.trim_end().ends_with(']');
        let snippet_line = || {
            lines[i + 1..].iter().map(|l| strip_ansi(l)).find_map(|l| {
                let (num, rest) = l.trim_start().split_once(' ')?;
                (rest.starts_with('│') && !num.is_empty())
                    .then(|| num.parse::<usize>().ok())
                    .flatten()
            })
        };
        let fixed = is_header.then(snippet_line).flatten().and_then(|n| {
            let start = starts
                .iter()
                .copied()
                .filter(|&s| line_col(source, s).0 == n)
                .min()?;
            let (old_from, old_to) = (plain.find("─[ ")? + "─[ ".len(), plain.rfind(" ]")?);
            let old = plain.get(old_from..old_to)?.to_string();
            let (l, c) = line_col(source, start);
            Some(line.replacen(&old, &format!("{path}:{l}:{c}"), 1))
        });
        out.push_str(fixed.as_deref().unwrap_or(line));
    }
    out
}

/// The text without ANSI colour sequences (`ESC [ ... m`).
fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The text under the primary span: the part of an "expected X, found Y" message that says
/// what was found, or a short pointer for other messages.
///
/// A secondary label on exactly the primary span supplies the primary label's text.
fn primary_label(d: &Diagnostic) -> String {
    if let Some((_, text)) = d.labels.iter().find(|(s, _)| *s == d.span) {
        return text.clone();
    }
    if let Some(i) = d.message.find(", found ") {
        if d.message.starts_with("expected ") {
            return format!("{} here", &d.message[..i]);
        }
    }
    "here".to_string()
}
