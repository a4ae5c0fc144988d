//! The OpenCL C lexer: source text to preprocessing tokens (C99 §6.4), each with the span of
//! its characters in the [`SourceMap`](super::SourceMap).
//!
//! Numbers stay "pp-numbers" (their text) until the parser reads them, so that `##` can
//! paste them; comments and line splices (`\` newline) are whitespace.

use crate::ast::Span;
use crate::diag::Diagnostic;
use std::rc::Rc;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tok {
    Ident,
    /// A pp-number: `12`, `0x1Fu`, `1.5f`, `1e-3`.
    Number,
    Str,
    Char,
    Punct,
}

/// A token: its kind, its text, where it was written, and the preprocessor's bookkeeping.
#[derive(Clone, Debug)]
pub struct Token {
    pub kind: Tok,
    pub text: Rc<str>,
    /// For a token out of a macro body, the span of the macro use it came from.
    pub span: Span,
    /// First token of a source line (where a `#` starts a directive).
    pub bol: bool,
    /// Whitespace before it (kept by `#` stringification).
    pub space: bool,
    /// The macros this token came out of and must not expand again (Prosser's hide set).
    pub hide: Rc<Vec<Rc<str>>>,
}

impl Token {
    pub fn is(&self, p: &str) -> bool {
        matches!(self.kind, Tok::Punct | Tok::Ident) && &*self.text == p
    }
}

/// Punctuators, longest first so that the first match is the longest.
const PUNCTS: [&str; 48] = [
    "<<=", ">>=", "...", "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "*=",
    "/=", "%=", "+=", "-=", "&=", "^=", "|=", "##", "[", "]", "(", ")", "{", "}", ".", "&", "*",
    "+", "-", "~", "!", "/", "%", "<", ">", "^", "|", "?", ":", ";", "=", ",", "#",
];

/// Lexes `text`, whose first byte has offset `base` in the source map.
pub fn lex(text: &str, base: usize) -> Result<Vec<Token>, Diagnostic> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let (mut i, mut bol, mut space) = (0, true, false);
    let no_hide: Rc<Vec<Rc<str>>> = Rc::new(Vec::new());
    while i < b.len() {
        let c = b[i];
        if c == b'\n' {
            bol = true;
            space = false;
            i += 1;
            continue;
        }
        if c == b'\\' && b.get(i + 1) == Some(&b'\n') {
            i += 2;
            continue;
        }
        if c == b'\\' && b.get(i + 1) == Some(&b'\r') && b.get(i + 2) == Some(&b'\n') {
            i += 3;
            continue;
        }
        if c.is_ascii_whitespace() {
            space = true;
            i += 1;
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                // A line comment ends at a newline that is not spliced.
                if b[i] == b'\\' && b.get(i + 1) == Some(&b'\n') {
                    i += 1;
                }
                i += 1;
            }
            space = true;
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'*') {
            let start = i;
            i += 2;
            loop {
                if i + 1 >= b.len() {
                    return Err(Diagnostic::new(
                        "unterminated comment",
                        base + start..base + start + 2,
                    ));
                }
                if b[i] == b'*' && b[i + 1] == b'/' {
                    i += 2;
                    break;
                }
                i += 1;
            }
            space = true;
            continue;
        }
        let start = i;
        let kind = if c.is_ascii_alphabetic() || c == b'_' {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            Tok::Ident
        } else if c.is_ascii_digit() || (c == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit))
        {
            // pp-number: digits, letters, `.`, `_`, and a sign after e/E/p/P.
            i += 1;
            while i < b.len() {
                let d = b[i];
                let sign =
                    matches!(d, b'+' | b'-') && matches!(b[i - 1], b'e' | b'E' | b'p' | b'P');
                if sign || d.is_ascii_alphanumeric() || d == b'.' || d == b'_' {
                    i += 1;
                } else {
                    break;
                }
            }
            Tok::Number
        } else if c == b'"' || c == b'\'' {
            i += 1;
            while i < b.len() && b[i] != c {
                if b[i] == b'\n' {
                    break;
                }
                if b[i] == b'\\' {
                    i += 1;
                }
                i += 1;
            }
            if i >= b.len() || b[i] != c {
                return Err(Diagnostic::new(
                    if c == b'"' {
                        "unterminated string literal"
                    } else {
                        "unterminated character literal"
                    },
                    base + start..base + i.min(b.len()),
                ));
            }
            i += 1;
            if c == b'"' {
                Tok::Str
            } else {
                Tok::Char
            }
        } else if let Some(p) = PUNCTS.iter().find(|p| b[i..].starts_with(p.as_bytes())) {
            i += p.len();
            Tok::Punct
        } else {
            let ch = text[i..].chars().next().expect("in bounds");
            return Err(Diagnostic::new(
                format!("unexpected character `{ch}`"),
                base + i..base + i + ch.len_utf8(),
            ));
        };
        out.push(Token {
            kind,
            text: Rc::from(&text[start..i]),
            span: base + start..base + i,
            bol,
            space,
            hide: no_hide.clone(),
        });
        bol = false;
        space = false;
    }
    Ok(out)
}

/// The value of a character constant `'c'` (C11 §6.4.4.4) as OpenCL C computes it: an `int`
/// holding the `char` the escape or character denotes, with `char` signed (`'\xff'` is -1).
/// Simple escapes (`\n`, `\'`, ...), octal (`\101`, up to three digits) and hex (`\x41`)
/// escapes; `Err` says what is wrong with the constant.
pub fn char_value(text: &str) -> Result<i64, String> {
    let inner = text
        .strip_prefix('\'')
        .and_then(|t| t.strip_suffix('\''))
        .ok_or("not a character constant")?;
    let (v, rest) = char_code(inner)?;
    if !rest.is_empty() {
        return Err(format!(
            "`{text}` has more than one character (multi-character constants are not supported)"
        ));
    }
    // A code over 0xff is a character outside `char`'s range (a non-ASCII letter).
    if v > 0xff {
        return Err(format!("`{text}` does not fit in a `char`"));
    }
    Ok(v as u8 as i8 as i64)
}

/// The code of the first (possibly escaped) character of `s`, and the rest of `s`.
fn char_code(s: &str) -> Result<(u32, &str), String> {
    let mut cs = s.chars();
    let c = cs.next().ok_or("an empty character constant")?;
    if c != '\\' {
        return Ok((c as u32, cs.as_str()));
    }
    let e = cs.next().ok_or("a `\\` ends the character constant")?;
    let simple = match e {
        'n' => Some(10),
        't' => Some(9),
        'r' => Some(13),
        'a' => Some(7),
        'b' => Some(8),
        'f' => Some(12),
        'v' => Some(11),
        '\\' | '\'' | '"' | '?' => Some(e as u32),
        _ => None,
    };
    if let Some(v) = simple {
        return Ok((v, cs.as_str()));
    }
    let rest = cs.as_str();
    let (radix, digits, max) = match e {
        'x' => (16, rest, usize::MAX),
        '0'..='7' => (8, &s[1..], 3),
        // clang warns about an unknown escape and takes the character itself.
        _ => return Ok((e as u32, rest)),
    };
    let n = digits
        .chars()
        .take(max)
        .take_while(|c| c.is_digit(radix))
        .count();
    if n == 0 {
        return Err("`\\x` needs at least one hex digit".into());
    }
    let v = u32::from_str_radix(&digits[..n.min(8)], radix)
        .ok()
        .filter(|_| n <= 8)
        .ok_or("the escape sequence is out of range")?;
    if v > 0xff {
        return Err("the escape sequence is out of range for a `char`".into());
    }
    Ok((v, &digits[n..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(s: &str) -> Vec<String> {
        lex(s, 0)
            .unwrap()
            .iter()
            .map(|t| t.text.to_string())
            .collect()
    }

    #[test]
    fn lexes_punctuators_numbers_and_comments() {
        assert_eq!(
            texts("a<<=b->c /* x */ 1.5e-3f // y\n 0x1Fu ..."),
            ["a", "<<=", "b", "->", "c", "1.5e-3f", "0x1Fu", "..."]
        );
        let t = lex("x\n  #define", 10).unwrap();
        assert!(t[1].bol && t[1].space && t[1].span == (14..15));
    }

    #[test]
    fn reports_bad_characters_with_their_span() {
        let e = lex("int x = 1 @ 2;", 0).unwrap_err();
        assert_eq!(e.span, 10..11);
        assert!(lex("/* open", 0).is_err());
    }

    #[test]
    fn character_constants_with_octal_and_hex_escapes() {
        for (text, v) in [
            ("'A'", 65),
            ("'\\x41'", 65),
            ("'\\101'", 65),
            ("'\\0'", 0),
            ("'\\n'", 10),
            ("'\\\\'", 92),
            ("'\\''", 39),
            ("'\\xff'", -1),
            ("'\\377'", -1),
            ("'\\x7F'", 127),
            ("'\\200'", -128),
        ] {
            assert_eq!(char_value(text), Ok(v), "{text}");
        }
        for bad in ["'ab'", "'\\x'", "'\\x100'", "'\\1234'", "''"] {
            assert!(char_value(bad).is_err(), "{bad}");
        }
    }
}
