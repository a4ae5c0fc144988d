//! Source text → [`ast::Kernel`].
//!
//! Two stages: a hand-written lexer turns the text into tokens with byte spans (comments and
//! whitespace dropped, numeric literals decoded, keywords recognised), then a chumsky token
//! parser builds the syntax tree. Expressions use chumsky's Pratt parser with C precedence.
//!
//! Errors never stop at the first problem: the lexer skips bad characters, statements,
//! parameters and parenthesised expressions recover (skipping to the next `;` or the end of a
//! balanced `{...}` / `(...)` group) so that one run reports several errors. C constructs that
//! ksim does not support (`return`, `break`, `switch`, pointers, `x = y = z`, helper
//! functions, ...) are recognised and reported by name rather than as a generic syntax error.

use chumsky::{input::ValueInput, pratt::*, prelude::*};
use std::fmt;

use crate::ast::{
    AssignOp, BinOp, Block, Expr, ExprKind, Fence, Ident, IfArm, Kernel, LValue, LaunchItem,
    LaunchKey, Param, Space, Stmt, StmtKind, TypeName, UnOp,
};
use crate::diag::Diagnostic;

/// Parse one kernel. On failure every error found is returned, sorted by position.
pub fn parse(source: &str) -> Result<Kernel, Vec<Diagnostic>> {
    let (tokens, mut diags) = lex(source);
    if let Some(d) = check_nesting(&tokens) {
        diags.push(d);
        sort_diags(&mut diags);
        return Err(diags);
    }
    let eoi = SimpleSpan::from(source.len()..source.len());
    let input = tokens.as_slice().map(eoi, |(t, s)| (t, s));
    let (kernel, errors) = file_parser().parse(input).into_output_errors();
    for e in errors {
        // The lexer already reported the bad character behind an error token.
        if matches!(e.found(), Some(Tok::Error)) {
            continue;
        }
        diags.push(rich_to_diag(e, source, &tokens));
    }
    if diags.is_empty() {
        if let Some(Some(k)) = kernel {
            return Ok(k);
        }
        diags.push(Diagnostic::new(
            "expected a kernel definition",
            source.len()..source.len(),
        ));
    }
    sort_diags(&mut diags);
    Err(diags)
}

fn sort_diags(diags: &mut Vec<Diagnostic>) {
    diags.sort_by(|a, b| {
        (a.span.start, a.span.end)
            .cmp(&(b.span.start, b.span.end))
            .then_with(|| a.message.cmp(&b.message))
    });
    diags.dedup_by(|a, b| a.span == b.span && a.message == b.message);
}

// ---------------------------------------------------------------------------------------------
// Tokens and lexer
// ---------------------------------------------------------------------------------------------

/// A lexical token. Punctuation is canonicalised (`<+>` becomes `⊕`, `<+>=` becomes `⊕=`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Tok<'s> {
    Ident(&'s str),
    Int {
        value: u64,
        unsigned: bool,
    },
    Float(f32),
    /// A ksim keyword.
    Kw(&'static str),
    /// A C / OpenCL keyword that ksim does not support (`return`, `switch`, `double`, ...).
    Reserved(&'s str),
    Punct(&'static str),
    /// A character the lexer could not make sense of (already reported).
    Error,
}

impl fmt::Display for Tok<'_> {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Tok::Ident(s) => write!(f, "identifier `{s}`"),
            Tok::Int { value, unsigned } => {
                write!(
                    f,
                    "integer literal `{value}{}`",
                    if *unsigned { "u" } else { "" }
                )
            }
            Tok::Float(x) => write!(f, "float literal `{x:?}`"),
            Tok::Kw(k) => write!(f, "keyword `{k}`"),
            Tok::Reserved(k) => write!(f, "`{k}`"),
            Tok::Punct(p) => write!(f, "`{p}`"),
            Tok::Error => write!(f, "invalid token"),
        }
    }
}

const KEYWORDS: &[&str] = &[
    "kernel", "launch", "const", "local", "global", "int", "uint", "bool", "float", "T", "ptr",
    "if", "else", "while", "for", "barrier", "true", "false", "identity",
];

/// C / OpenCL words that are not part of the ksim language; they are reported by name.
const RESERVED: &[&str] = &[
    "do",
    "switch",
    "case",
    "default",
    "return",
    "break",
    "continue",
    "goto",
    "void",
    "struct",
    "union",
    "enum",
    "typedef",
    "sizeof",
    "unsigned",
    "signed",
    "long",
    "short",
    "char",
    "double",
    "static",
    "extern",
    "volatile",
    "register",
    "inline",
    "restrict",
    "auto",
    "__kernel",
    "__global",
    "__local",
    "__private",
    "__constant",
];

/// Is `word` a keyword or a reserved C word (i.e. not usable as an identifier)?
pub fn is_reserved_word(word: &str) -> bool {
    KEYWORDS.contains(&word) || RESERVED.contains(&word)
}

/// The error message for a reserved C / OpenCL word.
fn reserved_msg(word: &str) -> String {
    match word {
        "return" => "`return` is not supported in ksim kernels (a kernel runs to the end of its body)"
            .to_string(),
        "void" | "unsigned" | "signed" | "long" | "short" | "char" | "double" => format!(
            "type `{word}` is not supported in ksim kernels (the types are `int`, `uint`, `bool`, `float` and `T`)"
        ),
        "__kernel" => "`__kernel` is not supported in ksim kernels; write `kernel name(...)`".to_string(),
        "__global" | "__local" => format!(
            "`{word}` is not supported in ksim kernels; write `{}`",
            &word[2..]
        ),
        _ => format!("`{word}` is not supported in ksim kernels"),
    }
}

/// Punctuation, longest first (maximal munch).
const PUNCTS: &[&str] = &[
    "<+>=", "<<=", ">>=", "<+>", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "++", "--", "+=",
    "-=", "*=", "/=", "%=", "&=", "^=", "|=", "->", "+", "-", "*", "/", "%", "<", ">", "=", "!",
    "~", "&", "^", "|", "?", ":", "(", ")", "[", "]", "{", "}", ";", ",",
];

type Spanned<'s> = (Tok<'s>, SimpleSpan);

fn lex(src: &str) -> (Vec<Spanned<'_>>, Vec<Diagnostic>) {
    let bytes = src.as_bytes();
    let mut toks = Vec::new();
    let mut diags = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let rest = &src[i..];
        if rest.starts_with("//") {
            i += rest.find('\n').unwrap_or(rest.len());
            continue;
        }
        if let Some(comment) = rest.strip_prefix("/*") {
            match comment.find("*/") {
                Some(end) => i += end + 4,
                None => {
                    diags.push(
                        Diagnostic::new("unterminated block comment", i..i + 2)
                            .with_note("a `/*` comment must be closed by `*/`"),
                    );
                    i = bytes.len();
                }
            }
            continue;
        }
        if c.is_ascii_alphabetic() || c == b'_' {
            let len = rest
                .bytes()
                .position(|b| !(b.is_ascii_alphanumeric() || b == b'_'))
                .unwrap_or(rest.len());
            let word = &rest[..len];
            let tok = if let Some(k) = KEYWORDS.iter().find(|k| *k == &word) {
                Tok::Kw(k)
            } else if RESERVED.contains(&word) {
                Tok::Reserved(word)
            } else {
                Tok::Ident(word)
            };
            toks.push((tok, SimpleSpan::from(i..i + len)));
            i += len;
            continue;
        }
        if c.is_ascii_digit() || (c == b'.' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit)) {
            let (tok, len, diag) = lex_number(rest, i);
            toks.push((tok, SimpleSpan::from(i..i + len)));
            diags.extend(diag);
            i += len;
            continue;
        }
        if let Some(after) = rest.strip_prefix('⊕') {
            let (p, len) = if after.starts_with('=') {
                ("⊕=", '⊕'.len_utf8() + 1)
            } else {
                ("⊕", '⊕'.len_utf8())
            };
            toks.push((Tok::Punct(p), SimpleSpan::from(i..i + len)));
            i += len;
            continue;
        }
        if let Some(p) = PUNCTS.iter().find(|p| rest.starts_with(**p)) {
            let canon = match *p {
                "<+>" => "⊕",
                "<+>=" => "⊕=",
                p => p,
            };
            toks.push((Tok::Punct(canon), SimpleSpan::from(i..i + p.len())));
            i += p.len();
            continue;
        }
        // Something we cannot lex.
        let ch = rest.chars().next().unwrap_or('?');
        if ch == '#' && toks.last().is_none_or(|(_, s)| !same_line(src, s.end, i)) {
            // A preprocessor line: report it and skip it whole (no token, so that it does not
            // disturb the parse of the code around it).
            let len = rest.find('\n').unwrap_or(rest.len());
            diags.push(Diagnostic::new(
                "preprocessor directives (`#...`) are not supported in ksim kernels",
                i..i + len,
            ));
            i += len;
            continue;
        }
        let len = ch.len_utf8();
        let message = match ch {
            '"' | '\'' => {
                "string and character literals are not supported in ksim kernels".to_string()
            }
            '.' => "member access `.` is not supported in ksim kernels".to_string(),
            _ => format!("unexpected character `{}`", ch.escape_debug()),
        };
        diags.push(Diagnostic::new(message, i..i + len));
        toks.push((Tok::Error, SimpleSpan::from(i..i + len)));
        i += len;
    }
    (toks, diags)
}

fn same_line(src: &str, from: usize, to: usize) -> bool {
    !src.get(from..to).is_some_and(|s| s.contains('\n'))
}

/// Lex a numeric literal at the start of `rest` (which begins with a digit or `.digit`).
/// Returns the token, its byte length and an error, if any.
fn lex_number(rest: &str, offset: usize) -> (Tok<'static>, usize, Option<Diagnostic>) {
    let b = rest.as_bytes();
    let digits = |from: usize, hex: bool| {
        from + b[from..]
            .iter()
            .position(|c| {
                !(if hex {
                    c.is_ascii_hexdigit()
                } else {
                    c.is_ascii_digit()
                })
            })
            .unwrap_or(b.len() - from)
    };
    let suffix_end = |from: usize| {
        from + b[from..]
            .iter()
            .position(|c| !(c.is_ascii_alphanumeric() || *c == b'_'))
            .unwrap_or(b.len() - from)
    };
    let mut diag = None;
    if b.len() > 1 && b[0] == b'0' && (b[1] == b'x' || b[1] == b'X') {
        let end = digits(2, true);
        let sfx_end = suffix_end(end);
        let suffix = &rest[end..sfx_end];
        let span = offset..offset + sfx_end;
        let text = &rest[2..end];
        let value = if text.is_empty() {
            diag = Some(Diagnostic::new(
                "hexadecimal literal has no digits",
                span.clone(),
            ));
            0
        } else {
            u64::from_str_radix(text, 16).unwrap_or_else(|_| {
                diag = Some(Diagnostic::new(
                    format!("integer literal `{}` does not fit in 64 bits", &rest[..end]),
                    span.clone(),
                ));
                0
            })
        };
        let unsigned = int_suffix(suffix, &span, &mut diag);
        return (Tok::Int { value, unsigned }, sfx_end, diag);
    }
    let mut end = digits(0, false);
    let int_end = end;
    let mut is_float = false;
    if b.get(end) == Some(&b'.') {
        is_float = true;
        end = digits(end + 1, false);
    }
    if matches!(b.get(end), Some(b'e' | b'E')) {
        let mut e = end + 1;
        if matches!(b.get(e), Some(b'+' | b'-')) {
            e += 1;
        }
        if b.get(e).is_some_and(u8::is_ascii_digit) {
            is_float = true;
            end = digits(e, false);
        }
    }
    let sfx_end = suffix_end(end);
    let suffix = &rest[end..sfx_end];
    let text = &rest[..end];
    let span = offset..offset + sfx_end;
    if is_float {
        if !matches!(suffix, "" | "f" | "F") {
            diag = Some(Diagnostic::new(
                format!("invalid suffix `{suffix}` on float literal (only `f` is allowed)"),
                span.clone(),
            ));
        }
        let value = match text.parse::<f32>() {
            Ok(v) if v.is_finite() => v,
            Ok(_) => {
                diag = Some(Diagnostic::new(
                    format!("float literal `{text}` is out of range for a 32-bit float"),
                    span.clone(),
                ));
                0.0
            }
            Err(_) => {
                diag = Some(Diagnostic::new(
                    format!("malformed float literal `{text}`"),
                    span.clone(),
                ));
                0.0
            }
        };
        return (Tok::Float(value), sfx_end, diag);
    }
    debug_assert_eq!(int_end, end);
    let value = if text.len() > 1 && text.starts_with('0') {
        diag = Some(
            Diagnostic::new(
                format!("octal literals are not supported in ksim kernels (`{text}`)"),
                span.clone(),
            )
            .with_note("write the number without leading zeros, or in hex (`0x...`)"),
        );
        0
    } else {
        text.parse::<u64>().unwrap_or_else(|_| {
            diag = Some(Diagnostic::new(
                format!("integer literal `{text}` does not fit in 64 bits"),
                span.clone(),
            ));
            0
        })
    };
    let unsigned = int_suffix(suffix, &span, &mut diag);
    (Tok::Int { value, unsigned }, sfx_end, diag)
}

fn int_suffix(suffix: &str, span: &std::ops::Range<usize>, diag: &mut Option<Diagnostic>) -> bool {
    match suffix {
        "" => false,
        "u" | "U" => true,
        _ => {
            if diag.is_none() {
                let mut d = Diagnostic::new(
                    format!("invalid suffix `{suffix}` on integer literal (only `u` is allowed)"),
                    span.clone(),
                );
                if matches!(suffix, "f" | "F") {
                    d = d.with_note("a float literal needs a `.` or an exponent, e.g. `1.0f`");
                }
                *diag = Some(d);
            }
            false
        }
    }
}

/// Deeply nested input would make the (recursive) tree deep enough to exhaust the stack when
/// it is processed or dropped. Bound the nesting: for every token, the number of operator,
/// bracket and control-keyword tokens on the path from the kernel down to it.
///
/// A statement's depth is that of the statements around it: at a `;` or `}` that ends a
/// statement the count goes back to the enclosing block's level, and an `else` goes back
/// to its `if` (plus one for its body). The arms of an `else if` chain are at the level of
/// the chain's first `if`, since the parser and every pass over the tree handle a chain as
/// a list: a chain of any length is legitimate C and nests no deeper.
pub const MAX_NESTING: usize = 1000;

fn check_nesting(tokens: &[Spanned<'_>]) -> Option<Diagnostic> {
    // The level at each enclosing `{`, with the open `if`s outside it.
    let mut braces: Vec<(usize, Vec<usize>)> = Vec::new();
    // The levels of the `if`s of the current statement that may still take an `else`,
    // innermost last (C's dangling `else` goes to the innermost).
    let mut open_ifs: Vec<usize> = Vec::new();
    let mut parens = 0usize; // `(` / `[` depth inside the current statement
    let mut cur = 0usize;
    // A statement just ended (`;` or `}`): the next token starts a new one, unless it is
    // an `else` continuing an `if`.
    let mut ended = false;
    for (k, (tok, span)) in tokens.iter().enumerate() {
        if std::mem::take(&mut ended) && *tok != Tok::Kw("else") {
            cur = braces.last().map_or(0, |(c, _)| c + 1);
            open_ifs.clear();
        }
        match tok {
            Tok::Punct("{") => {
                braces.push((cur, std::mem::take(&mut open_ifs)));
                cur += 1;
                parens = 0;
            }
            Tok::Punct("}") => {
                (cur, open_ifs) = braces.pop().unwrap_or_default();
                parens = 0;
                ended = true;
            }
            Tok::Punct(";") if parens == 0 => ended = true,
            Tok::Punct("(" | "[") => {
                parens += 1;
                cur += 1;
            }
            Tok::Punct(")" | "]") => parens = parens.saturating_sub(1),
            Tok::Punct(",") => {}
            Tok::Kw("if") => {
                open_ifs.push(cur);
                cur += 1;
            }
            Tok::Kw("else") => {
                let level = open_ifs.pop().unwrap_or(cur);
                let chained = tokens.get(k + 1).is_some_and(|(t, _)| *t == Tok::Kw("if"));
                cur = if chained { level } else { level + 1 };
            }
            Tok::Punct(_) | Tok::Kw("while" | "for") => cur += 1,
            _ => {}
        }
        if cur > MAX_NESTING {
            return Some(Diagnostic::new(
                format!("this code is nested too deeply (more than {MAX_NESTING} levels of operators, brackets and statements)"),
                span.into_range(),
            ));
        }
    }
    None
}

// ---------------------------------------------------------------------------------------------
// Parser
// ---------------------------------------------------------------------------------------------

type Extra<'t, 's> = extra::Err<Rich<'t, Tok<'s>, SimpleSpan>>;

fn sp(s: SimpleSpan) -> crate::ast::Span {
    s.into_range()
}

/// A placeholder for an expression that has already been reported as an error.
fn err_expr(span: SimpleSpan) -> Expr {
    Expr {
        kind: ExprKind::Name(String::new()),
        span: sp(span),
    }
}

fn is_err_expr(e: &Expr) -> bool {
    matches!(&e.kind, ExprKind::Name(n) if n.is_empty())
}

/// A placeholder for a statement that has already been reported as an error.
fn err_stmt(span: SimpleSpan) -> Stmt {
    Stmt {
        kind: StmtKind::Block(Block {
            stmts: Vec::new(),
            span: sp(span),
        }),
        span: sp(span),
    }
}

fn err_param(span: SimpleSpan) -> Param {
    Param::Scalar {
        ty: TypeName::Int,
        name: Ident {
            name: String::new(),
            span: sp(span),
        },
        span: sp(span),
    }
}

enum NameSuffix {
    Call(Vec<Expr>),
    Index(Vec<Expr>),
}

enum LvRest {
    Step(bool),
    Assign(AssignOp, Expr),
}

fn type_name(t: TypeName) -> &'static str {
    crate::check::ty_of(t).name()
}

const P_LPAREN: Tok<'static> = Tok::Punct("(");
const P_RPAREN: Tok<'static> = Tok::Punct(")");
const P_LBRACK: Tok<'static> = Tok::Punct("[");
const P_RBRACK: Tok<'static> = Tok::Punct("]");
const P_LBRACE: Tok<'static> = Tok::Punct("{");
const P_RBRACE: Tok<'static> = Tok::Punct("}");
const P_SEMI: Tok<'static> = Tok::Punct(";");
const P_COMMA: Tok<'static> = Tok::Punct(",");

fn file_parser<'t, 's: 't, I>() -> impl Parser<'t, I, Option<Kernel>, Extra<'t, 's>>
where
    I: ValueInput<'t, Token = Tok<'s>, Span = SimpleSpan>,
{
    let p = |s: &'static str| just(Tok::Punct(s));
    let kw = |s: &'static str| just(Tok::Kw(s));

    // Balanced token groups, used to skip over erroneous code.
    let tt = recursive(|tt| {
        choice((
            tt.clone()
                .repeated()
                .delimited_by(just(P_LPAREN), just(P_RPAREN))
                .ignored(),
            tt.clone()
                .repeated()
                .delimited_by(just(P_LBRACK), just(P_RBRACK))
                .ignored(),
            tt.clone()
                .repeated()
                .delimited_by(just(P_LBRACE), just(P_RBRACE))
                .ignored(),
            none_of([P_LPAREN, P_RPAREN, P_LBRACK, P_RBRACK, P_LBRACE, P_RBRACE]).ignored(),
        ))
    })
    .boxed();
    let paren_group = tt
        .clone()
        .repeated()
        .delimited_by(just(P_LPAREN), just(P_RPAREN));
    let bracket_group = tt
        .clone()
        .repeated()
        .delimited_by(just(P_LBRACK), just(P_RBRACK));
    let brace_group = tt
        .clone()
        .repeated()
        .delimited_by(just(P_LBRACE), just(P_RBRACE))
        .boxed();

    let ident = select! {
        Tok::Ident(s) = e => Ident { name: s.to_string(), span: sp(e.span()) },
    }
    .labelled("identifier");

    let ty = select! {
        Tok::Kw("int") => TypeName::Int,
        Tok::Kw("uint") => TypeName::Uint,
        Tok::Kw("bool") => TypeName::Bool,
        Tok::Kw("float") => TypeName::Float,
        Tok::Kw("T") => TypeName::Generic,
        Tok::Kw("ptr") => TypeName::Ptr,
    }
    .labelled("type");

    let reserved = select! { Tok::Reserved(w) = e => (w, e.span()) };

    // ----- expressions -----
    let expr = recursive(|expr| {
        let args = expr
            .clone()
            .separated_by(just(P_COMMA))
            .collect::<Vec<_>>()
            .delimited_by(just(P_LPAREN), just(P_RPAREN));
        let index = expr.clone().delimited_by(just(P_LBRACK), just(P_RBRACK));

        let literal = select! {
            Tok::Int { value, unsigned } => ExprKind::Int { value, unsigned },
            Tok::Float(x) => ExprKind::Float(x),
            Tok::Kw("true") => ExprKind::Bool(true),
            Tok::Kw("false") => ExprKind::Bool(false),
            Tok::Kw("identity") => ExprKind::Identity,
        };

        let named = ident
            .then(
                choice((
                    args.map(NameSuffix::Call),
                    index
                        .repeated()
                        .at_least(1)
                        .collect::<Vec<_>>()
                        .map(NameSuffix::Index),
                ))
                .or_not(),
            )
            .validate(|(id, suffix), e, em| match suffix {
                None => ExprKind::Name(id.name),
                Some(NameSuffix::Call(args)) => ExprKind::Call { func: id, args },
                Some(NameSuffix::Index(indices)) => {
                    if indices.len() > 2 {
                        em.emit(Rich::custom(
                            e.span(),
                            format!(
                                "arrays have at most 2 dimensions, but `{}` is indexed {} times",
                                id.name,
                                indices.len()
                            ),
                        ));
                    }
                    ExprKind::Index { array: id, indices }
                }
            });

        let reserved_atom = reserved
            .then_ignore(paren_group.clone().or_not())
            .validate(|(w, span), _, em| {
                em.emit(Rich::custom(span, reserved_msg(w)));
                ExprKind::Name(String::new())
            });

        let atom = choice((literal, named, reserved_atom))
            .map_with(|kind, e| Expr {
                kind,
                span: sp(e.span()),
            })
            .or(expr
                .clone()
                .delimited_by(just(P_LPAREN), just(P_RPAREN)))
            .recover_with(via_parser(nested_delimiters(
                P_LPAREN,
                P_RPAREN,
                [(P_LBRACK, P_RBRACK), (P_LBRACE, P_RBRACE)],
                err_expr,
            )))
            .labelled("expression")
            .boxed();

        macro_rules! bin {
            ($($tok:literal => $op:ident),+ $(,)?) => {
                choice(($(p($tok).to(BinOp::$op),)+)).labelled("operator")
            };
        }
        macro_rules! fold_bin {
            () => {
                |l: Expr, op: BinOp, r: Expr, e| Expr {
                    kind: ExprKind::Binary(op, Box::new(l), Box::new(r)),
                    span: sp(e.span()),
                }
            };
        }

        let assign_op_any = choice((
            p("="),
            p("+="),
            p("-="),
            p("*="),
            p("/="),
            p("%="),
            p("<<="),
            p(">>="),
            p("&="),
            p("^="),
            p("|="),
            p("⊕="),
        ));

        atom.pratt((
            // Errors: `x++` inside an expression.
            postfix(14, choice((p("++"), p("--"))).labelled("operator"), |lhs: Expr, t: Tok<'s>, e| {
                let span = e.span();
                if !is_err_expr(&lhs) {
                    let op = if t == Tok::Punct("++") { "++" } else { "--" };
                    e.emit(Rich::custom(
                        span,
                        format!("`{op}` inside an expression is not supported in ksim kernels; increments are statements of their own (`x{op};`)"),
                    ));
                }
                err_expr(span)
            }),
            prefix(
                13,
                choice((
                    p("-").to(UnOp::Neg),
                    p("!").to(UnOp::Not),
                    p("~").to(UnOp::BitNot),
                ))
                .labelled("expression"),
                |op, rhs: Expr, e| Expr {
                    kind: ExprKind::Unary(op, Box::new(rhs)),
                    span: sp(e.span()),
                },
            ),
            prefix(
                13,
                ty
                    .delimited_by(just(P_LPAREN), just(P_RPAREN))
                    .labelled("expression"),
                |t: TypeName, rhs: Expr, e| {
                    let span = e.span();
                    if matches!(t, TypeName::Bool | TypeName::Generic) {
                        e.emit(Rich::custom(
                            span,
                            format!("cast to `{}` is not supported in ksim kernels (only `(int)`, `(uint)` and `(float)`)", type_name(t)),
                        ));
                        return err_expr(span);
                    }
                    Expr {
                        kind: ExprKind::Cast(t, Box::new(rhs)),
                        span: sp(e.span()),
                    }
                },
            ),
            // Errors: C prefix operators that ksim does not have.
            prefix(
                13,
                choice((p("*"), p("&"), p("+"), p("++"), p("--"))).labelled("expression"),
                |t: Tok<'s>, rhs: Expr, e| {
                    let span = e.span();
                    let msg = match t {
                        Tok::Punct("*") => "pointer dereference (unary `*`) is not supported in ksim kernels".to_string(),
                        Tok::Punct("&") => "taking an address (unary `&`) is not supported in ksim kernels".to_string(),
                        Tok::Punct("+") => "unary `+` is not supported in ksim kernels".to_string(),
                        _ => format!("{t} inside an expression is not supported in ksim kernels; increments are statements (`x++;`)"),
                    };
                    if !is_err_expr(&rhs) || t != Tok::Punct("*") {
                        e.emit(Rich::custom(span, msg));
                    }
                    err_expr(span)
                },
            ),
            infix(left(12), bin!("*" => Mul, "/" => Div, "%" => Rem), fold_bin!()),
            infix(left(11), bin!("+" => Add, "-" => Sub, "⊕" => Combine), fold_bin!()),
            infix(left(10), bin!("<<" => Shl, ">>" => Shr), fold_bin!()),
            infix(left(9), bin!("<" => Lt, "<=" => Le, ">" => Gt, ">=" => Ge), fold_bin!()),
            infix(left(8), bin!("==" => Eq, "!=" => Ne), fold_bin!()),
            infix(left(7), bin!("&" => BitAnd), fold_bin!()),
            infix(left(6), bin!("^" => BitXor), fold_bin!()),
            infix(left(5), bin!("|" => BitOr), fold_bin!()),
            infix(left(4), bin!("&&" => LogAnd), fold_bin!()),
            infix(left(3), bin!("||" => LogOr), fold_bin!()),
            infix(
                right(2),
                p("?")
                    .labelled("operator")
                    .ignore_then(expr.clone())
                    .then_ignore(p(":")),
                |c: Expr, mid: Expr, els: Expr, e| Expr {
                    kind: ExprKind::Cond(Box::new(c), Box::new(mid), Box::new(els)),
                    span: sp(e.span()),
                },
            ),
            // Errors: assignment used as an expression (`x = y = z`, `if (x = 1)`).
            infix(right(1), assign_op_any.labelled("operator"), |l: Expr, _, _r: Expr, e| {
                let span = e.span();
                if !is_err_expr(&l) {
                    e.emit(Rich::custom(
                        span,
                        "assignment inside an expression is not supported in ksim kernels (assignments are statements; chained assignments like `x = y = z` are not allowed)",
                    ));
                }
                err_expr(span)
            }),
        ))
        .labelled("expression")
    })
    .boxed();

    let index = expr.clone().delimited_by(just(P_LBRACK), just(P_RBRACK));

    // ----- statements -----
    let lvalue = ident
        .then(index.clone().repeated().collect::<Vec<_>>())
        .validate(|(id, indices), e, em| {
            if indices.len() > 2 {
                em.emit(Rich::custom(
                    e.span(),
                    format!(
                        "arrays have at most 2 dimensions, but `{}` is indexed {} times",
                        id.name,
                        indices.len()
                    ),
                ));
            }
            if indices.is_empty() {
                LValue::Var(id)
            } else {
                LValue::Elem { array: id, indices }
            }
        })
        .boxed();

    let assign_op = select! {
        Tok::Punct("=") => AssignOp::Set,
        Tok::Punct("+=") => AssignOp::Compound(BinOp::Add),
        Tok::Punct("-=") => AssignOp::Compound(BinOp::Sub),
        Tok::Punct("*=") => AssignOp::Compound(BinOp::Mul),
        Tok::Punct("/=") => AssignOp::Compound(BinOp::Div),
        Tok::Punct("%=") => AssignOp::Compound(BinOp::Rem),
        Tok::Punct("<<=") => AssignOp::Compound(BinOp::Shl),
        Tok::Punct(">>=") => AssignOp::Compound(BinOp::Shr),
        Tok::Punct("&=") => AssignOp::Compound(BinOp::BitAnd),
        Tok::Punct("^=") => AssignOp::Compound(BinOp::BitXor),
        Tok::Punct("|=") => AssignOp::Compound(BinOp::BitOr),
        Tok::Punct("⊕=") => AssignOp::Compound(BinOp::Combine),
    }
    .labelled("assignment operator");
    let step_op = p("++").to(false).or(p("--").to(true));

    // `TYPE name [= e]`, with errors for array declarations and several declarators.
    let declarator = ident
        .then(
            index
                .clone()
                .repeated()
                .collect::<Vec<_>>()
                .map_with(|d, e| (d, e.span())),
        )
        .then(p("=").ignore_then(expr.clone()).or_not());
    let decl = kw("const")
        .map_with(|_, e| e.span())
        .or_not()
        .then(ty)
        .then(declarator.clone())
        .then(
            p(",")
                .ignore_then(declarator.separated_by(p(",")).at_least(1))
                .map_with(|_, e| e.span())
                .or_not(),
        )
        .validate(|(((is_const, ty), ((name, (dims, dims_span)), init)), more), _, em| {
            if let Some(span) = is_const {
                em.emit(Rich::custom(
                    span,
                    "`const` local variables are not supported in ksim kernels (`const` is only allowed on array parameters)",
                ));
            }
            if !dims.is_empty() {
                em.emit(Rich::custom(
                    dims_span,
                    format!("array declarations inside a kernel are not supported; declare `{}` as a kernel parameter (`local {} {}[n]`)", name.name, type_name(ty), name.name),
                ));
            }
            if let Some(span) = more {
                em.emit(Rich::custom(
                    span,
                    "declaring several variables in one statement is not supported in ksim kernels; write one declaration per variable",
                ));
            }
            StmtKind::Decl { ty, name, init }
        });

    let lv_stmt = lvalue
        .clone()
        .then(choice((
            step_op.map(LvRest::Step),
            assign_op
                .then(expr.clone())
                .map(|(op, v)| LvRest::Assign(op, v)),
        )))
        .map(|(target, rest)| match rest {
            LvRest::Step(decrement) => StmtKind::Step { target, decrement },
            LvRest::Assign(op, value) => StmtKind::Assign { target, op, value },
        });
    let pre_step = step_op
        .then(lvalue)
        .map(|(decrement, target)| StmtKind::Step { target, decrement });

    // A "simple statement": what may appear in a `for` header, and (with `;`) as a statement.
    let simple = choice((decl, lv_stmt, pre_step))
        .map_with(|kind, e| Stmt {
            kind,
            span: sp(e.span()),
        })
        .boxed();

    let cond_parens = expr
        .clone()
        .delimited_by(just(P_LPAREN), just(P_RPAREN))
        .recover_with(via_parser(nested_delimiters(
            P_LPAREN,
            P_RPAREN,
            [(P_LBRACK, P_RBRACK), (P_LBRACE, P_RBRACE)],
            err_expr,
        )))
        .boxed();

    // Skipping over a broken statement: up to and including the next `;` at this nesting
    // level, or a balanced `{...}`, or up to (not including) the `}` closing the block.
    let skip_tok = choice((
        paren_group.clone().ignored(),
        bracket_group.clone().ignored(),
        none_of([P_SEMI, P_LBRACE, P_RBRACE]).ignored(),
    ))
    .boxed();
    let stmt_recovery = choice((
        skip_tok.clone().repeated().then(just(P_SEMI)).ignored(),
        skip_tok
            .clone()
            .repeated()
            .then(brace_group.clone())
            .ignored(),
        skip_tok
            .clone()
            .repeated()
            .at_least(1)
            .then(just(P_RBRACE).ignored().or(end()).rewind())
            .ignored(),
    ))
    .map_with(|_, e| err_stmt(e.span()))
    .boxed();

    let stmt = recursive(|stmt| {
        let block = stmt
            .clone()
            .repeated()
            .collect::<Vec<_>>()
            .delimited_by(just(P_LBRACE), just(P_RBRACE))
            .map_with(|stmts, e| Block {
                stmts,
                span: sp(e.span()),
            });

        // `if (c) s` then any number of `else if (c) s`, then maybe `else s`: the chain is
        // parsed by repetition, not by recursion into the `else` branch, so its length
        // costs no stack (see `StmtKind::If`).
        let arm = kw("if")
            .ignore_then(cond_parens.clone())
            .then(stmt.clone())
            .map_with(|(cond, then), e| IfArm {
                cond,
                then,
                span: sp(e.span()),
            });
        let if_ = arm
            .clone()
            .then(kw("else").ignore_then(arm).repeated().collect::<Vec<_>>())
            .then(kw("else").ignore_then(stmt.clone()).or_not())
            .map(|((first, mut rest), els)| {
                rest.insert(0, first);
                StmtKind::If {
                    arms: rest,
                    els: els.map(Box::new),
                }
            });
        let while_ = kw("while")
            .ignore_then(cond_parens.clone())
            .then(stmt.clone())
            .map(|(cond, body)| StmtKind::While {
                cond,
                body: Box::new(body),
            });
        let for_ = kw("for")
            .ignore_then(
                simple
                    .clone()
                    .or_not()
                    .then_ignore(just(P_SEMI))
                    .then(expr.clone().or_not())
                    .then_ignore(just(P_SEMI))
                    .then(simple.clone().or_not())
                    .delimited_by(just(P_LPAREN), just(P_RPAREN)),
            )
            .then(stmt.clone())
            .map(|(((init, cond), step), body)| StmtKind::For {
                init: init.map(Box::new),
                cond,
                step: step.map(Box::new),
                body: Box::new(body),
            });
        let fence_kw = select! {
            Tok::Kw("local") => Fence::LOCAL,
            Tok::Kw("global") => Fence::GLOBAL,
        };
        let fences = fence_kw
            .separated_by(p("|"))
            .at_least(1)
            .collect::<Vec<_>>()
            .map(|fs| {
                fs.into_iter().fold(
                    Fence {
                        local: false,
                        global: false,
                    },
                    Fence::union,
                )
            });
        let barrier_args = choice((
            fences.map(|f| Some(StmtKind::Barrier(f))),
            expr.clone()
                .separated_by(just(P_COMMA))
                .collect::<Vec<_>>()
                .validate(|mut args, e, em| match args.len() {
                    0 => None,
                    // `barrier(x)`: fence flags computed at run time (checked to be a variable).
                    1 => args.pop().map(StmtKind::BarrierFlags),
                    _ => {
                        em.emit(Rich::custom(
                            e.span(),
                            "`barrier` takes `local`, `global`, `local | global`, a variable holding OpenCL fence flags, or nothing (both spaces) in ksim kernels",
                        ));
                        None
                    }
                }),
        ))
        .delimited_by(just(P_LPAREN), just(P_RPAREN));
        let barrier = kw("barrier")
            .ignore_then(barrier_args.or_not())
            .then_ignore(just(P_SEMI))
            .map(|f| f.flatten().unwrap_or(StmtKind::Barrier(Fence::BOTH)));
        let simple_stmt = simple.clone().then_ignore(just(P_SEMI)).map(|s| s.kind);
        let unsupported = reserved
            .then_ignore(
                skip_tok.clone().repeated().then(choice((
                    just(P_SEMI).ignored(),
                    brace_group
                        .clone()
                        .then(
                            kw("while")
                                .then(paren_group.clone())
                                .then(just(P_SEMI))
                                .or_not(),
                        )
                        .ignored(),
                ))),
            )
            .validate(|(w, span), e, em| {
                em.emit(Rich::custom(span, reserved_msg(w)));
                err_stmt(e.span()).kind
            });
        let empty = just(P_SEMI).validate(|_, e, em| {
            em.emit(Rich::custom(
                e.span(),
                "empty statements (a lone `;`) are not supported in ksim kernels",
            ));
            err_stmt(e.span()).kind
        });
        let expr_stmt = expr
            .clone()
            .then_ignore(just(P_SEMI))
            .validate(|x, e, em| {
                if matches!(x.kind, ExprKind::Call { .. }) {
                    // The checker accepts the calls with an effect (atomics).
                    return StmtKind::Call(x);
                }
                if !is_err_expr(&x) {
                    em.emit(Rich::custom(
                        x.span.clone().into(),
                        "expression statements are not supported in ksim kernels (a statement is a declaration, an assignment, `x++;`, `if`, `while`, `for`, a block, `barrier();` or an atomic call)",
                    ));
                }
                err_stmt(e.span()).kind
            });

        choice((
            block.map(StmtKind::Block),
            if_,
            while_,
            for_,
            barrier,
            simple_stmt,
            unsupported,
            empty,
            expr_stmt,
        ))
        .map_with(|kind, e| Stmt {
            kind,
            span: sp(e.span()),
        })
        .labelled("statement")
        .recover_with(via_parser(stmt_recovery.clone()))
        .boxed()
    });

    let body = stmt
        .repeated()
        .collect::<Vec<_>>()
        .delimited_by(just(P_LBRACE), just(P_RBRACE))
        .map_with(|stmts, e| Block {
            stmts,
            span: sp(e.span()),
        })
        .labelled("kernel body `{ ... }`");

    // ----- kernel header -----
    let space = select! {
        Tok::Kw("local") => Space::Local,
        Tok::Kw("global") => Space::Global,
    };
    let param_ok = kw("const")
        .or_not()
        .map(|c| c.is_some())
        .then(space.or_not())
        .then(ty)
        .then(p("*").map_with(|_, e| e.span()).or_not())
        .then(ident)
        .then(index.clone().repeated().collect::<Vec<_>>())
        .validate(|(((((is_const, space), elem), ptr), name), dims), e, em| {
            let span = e.span();
            if let Some(ptr) = ptr {
                em.emit(Rich::custom(
                    ptr,
                    format!("pointer parameters are not supported in ksim kernels; declare an array, e.g. `global {} {}[n]`", type_name(elem), name.name),
                ));
                return err_param(span);
            }
            if dims.len() > 2 {
                em.emit(Rich::custom(
                    span,
                    format!("arrays have at most 2 dimensions, but `{}` has {}", name.name, dims.len()),
                ));
            }
            match (space, dims.is_empty()) {
                (Some(space), false) => Param::Array {
                    is_const,
                    space,
                    elem,
                    name,
                    dims,
                    span: sp(span),
                },
                (None, true) => {
                    if is_const {
                        em.emit(Rich::custom(
                            span,
                            format!("`const` is only allowed on array parameters, not on the scalar `{}`", name.name),
                        ));
                    }
                    Param::Scalar {
                        ty: elem,
                        name,
                        span: sp(span),
                    }
                }
                (None, false) => {
                    em.emit(Rich::custom(
                        span,
                        format!("array parameter `{}` needs an address space: `local` or `global`", name.name),
                    ));
                    err_param(span)
                }
                (Some(space), true) => {
                    em.emit(Rich::custom(
                        span,
                        format!(
                            "parameter `{}` is declared `{}` but has no size; write e.g. `{} {} {}[n]`",
                            name.name,
                            if space == Space::Local { "local" } else { "global" },
                            if space == Space::Local { "local" } else { "global" },
                            type_name(elem),
                            name.name
                        ),
                    ));
                    err_param(span)
                }
            }
        });
    let param_skip = choice((
        paren_group.clone().ignored(),
        bracket_group.clone().ignored(),
        none_of([
            P_COMMA, P_LPAREN, P_RPAREN, P_LBRACK, P_LBRACE, P_RBRACE, P_SEMI,
        ])
        .ignored(),
    ))
    .boxed();
    let param_reserved = reserved
        .then_ignore(param_skip.clone().repeated())
        .validate(|(w, span), e, em| {
            em.emit(Rich::custom(span, reserved_msg(w)));
            err_param(e.span())
        });
    let param = choice((param_ok, param_reserved))
        .labelled("parameter")
        .recover_with(via_parser(
            param_skip
                .clone()
                .repeated()
                .at_least(1)
                .map_with(|_, e| err_param(e.span())),
        ));
    let params = param
        .separated_by(just(P_COMMA))
        .collect::<Vec<_>>()
        .delimited_by(just(P_LPAREN), just(P_RPAREN))
        .recover_with(via_parser(nested_delimiters(
            P_LPAREN,
            P_RPAREN,
            [(P_LBRACK, P_RBRACK), (P_LBRACE, P_RBRACE)],
            |_| Vec::new(),
        )));

    let launch_key = select! {
        Tok::Ident("groups") => Some(LaunchKey::Groups),
        Tok::Ident("local_size") => Some(LaunchKey::LocalSize),
    }
    .labelled("`groups` or `local_size`")
    .or(
        select! { Tok::Ident(other) = e => (other, e.span()) }.validate(|(other, span), _, em| {
            em.emit(Rich::custom(
                span,
                format!("unknown launch parameter `{other}`; expected `groups` or `local_size`"),
            ));
            None
        }),
    );
    // `key = e`, or `key = (e0, e1[, e2])` for a multi-dimensional launch.
    let launch_dims = expr
        .clone()
        .separated_by(just(P_COMMA))
        .at_least(2)
        .at_most(3)
        .collect::<Vec<_>>()
        .delimited_by(just(P_LPAREN), just(P_RPAREN));
    let launch_item = launch_key
        .then_ignore(p("="))
        .then(choice((launch_dims, expr.clone().map(|e| vec![e]))))
        .map_with(|(key, mut dims), e| {
            let value = dims.remove(0);
            key.map(|key| LaunchItem {
                key,
                value,
                more: dims,
                span: sp(e.span()),
            })
        });
    let launch = kw("launch")
        .ignore_then(
            launch_item
                .separated_by(just(P_COMMA))
                .at_least(1)
                .collect::<Vec<_>>()
                .delimited_by(just(P_LPAREN), just(P_RPAREN))
                .recover_with(via_parser(nested_delimiters(
                    P_LPAREN,
                    P_RPAREN,
                    [(P_LBRACK, P_RBRACK), (P_LBRACE, P_RBRACE)],
                    |_| Vec::new(),
                ))),
        )
        .or_not()
        .map(|items| {
            items
                .unwrap_or_default()
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
        });

    let kernel = kw("kernel")
        .ignore_then(ident)
        .then(params)
        .then(launch)
        .then(body)
        .map_with(|(((name, params), launch), body), e| Kernel {
            name,
            params,
            launch,
            body,
            span: sp(e.span()),
        })
        .recover_with(via_parser(
            kw("kernel")
                .then(
                    none_of([P_LBRACE, Tok::Kw("kernel")])
                        .repeated()
                        .then(brace_group.clone().ignored().or(end())),
                )
                .map_with(|_, e| Kernel {
                    name: Ident {
                        name: String::new(),
                        span: sp(e.span()),
                    },
                    params: Vec::new(),
                    launch: Vec::new(),
                    body: Block {
                        stmts: Vec::new(),
                        span: sp(e.span()),
                    },
                    span: sp(e.span()),
                }),
        ))
        .map_with(|k, e| (k, e.span()));

    // Anything else at the top level (helper functions, globals, OpenCL `__kernel void`...).
    let other_item = none_of([Tok::Kw("kernel"), P_SEMI, P_LBRACE])
        .ignored()
        .repeated()
        .at_least(1)
        .then(choice((
            just(P_SEMI).ignored(),
            brace_group.clone().ignored(),
            kw("kernel").ignored().rewind(),
            end(),
        )))
        .ignored()
        .or(brace_group.clone().ignored())
        .or(just(P_SEMI).ignored())
        .map_with(|_, e| e.span())
        .validate(|span, _, em| {
            em.emit(Rich::custom(
                span,
                "only a `kernel` definition may appear at the top level; helper functions and other declarations are not supported in ksim kernels (write `kernel name(params) { ... }`)",
            ));
        });

    enum Item {
        Kernel(Kernel, SimpleSpan),
        Other,
    }
    choice((
        kernel.map(|(k, s)| Item::Kernel(k, s)),
        other_item.map(|_| Item::Other),
    ))
    .repeated()
    .collect::<Vec<_>>()
    .then_ignore(end())
    .validate(|items, e, em| {
        let mut kernel = None;
        let mut others = false;
        for item in items {
            match item {
                Item::Kernel(k, span) => {
                    if kernel.is_some() {
                        em.emit(Rich::custom(
                            span,
                            "only one kernel per file is supported in ksim; put each kernel in its own `.ksim` file",
                        ));
                    } else {
                        kernel = Some(k);
                    }
                }
                Item::Other => others = true,
            }
        }
        if kernel.is_none() && !others {
            em.emit(Rich::custom(
                e.span(),
                "expected a kernel definition: `kernel name(params) { ... }`",
            ));
        }
        kernel
    })
}

// ---------------------------------------------------------------------------------------------
// Error conversion
// ---------------------------------------------------------------------------------------------

fn pattern_text(p: &chumsky::error::RichPattern<'_, Tok<'_>>) -> Option<String> {
    use chumsky::error::RichPattern;
    Some(match p {
        RichPattern::Token(t) => match &**t {
            Tok::Punct(s) => format!("`{s}`"),
            Tok::Kw(k) => format!("`{k}`"),
            t => t.to_string(),
        },
        RichPattern::Label(l) => l.to_string(),
        RichPattern::Identifier(s) => format!("`{s}`"),
        RichPattern::Any => "something".to_string(),
        RichPattern::SomethingElse => return None,
        RichPattern::EndOfInput => "end of input".to_string(),
        _ => return None,
    })
}

fn rich_to_diag(
    e: Rich<'_, Tok<'_>, SimpleSpan>,
    source: &str,
    tokens: &[Spanned<'_>],
) -> Diagnostic {
    use chumsky::error::RichReason;
    let span = sp(*e.span());
    let mut diag = match e.reason() {
        RichReason::Custom(msg) => Diagnostic::new(msg.clone(), span.clone()),
        RichReason::ExpectedFound { expected, found } => {
            let mut exp: Vec<String> = Vec::new();
            for p in expected {
                if let Some(s) = pattern_text(p) {
                    if !exp.contains(&s) {
                        exp.push(s);
                    }
                }
            }
            // After a complete operand, "operator" (and `[` / `(` continuing a name) are always
            // possible; when a closing token is also expected, that is what the user most
            // likely missed, so only name that.
            const CLOSERS: &[&str] = &["`;`", "`)`", "`]`", "`,`", "`:`", "`}`", "`=`"];
            if exp.iter().any(|s| CLOSERS.contains(&s.as_str())) {
                exp.retain(|s| {
                    s != "operator" && s != "`[`" && s != "`(`" && s != "assignment operator"
                });
                if exp.contains(&"`;`".to_string()) {
                    exp.retain(|s| s != "`=`" && s != "`,`");
                }
            }
            exp.sort_by_key(|s| (!s.starts_with('`'), s.clone()));
            let found = match found {
                Some(t) => match &**t {
                    Tok::Punct(s) => format!("`{s}`"),
                    t => t.to_string(),
                },
                None => "end of input".to_string(),
            };
            let msg = match exp.len() {
                0 => format!("unexpected {found}"),
                1 => format!("expected {}, found {found}", exp[0]),
                n => format!(
                    "expected {} or {}, found {found}",
                    exp[..n - 1].join(", "),
                    exp[n - 1]
                ),
            };
            // A missing terminator is best shown right after the code it should end (like
            // rustc does), not at the next token, which is often on a later line.
            let terminator = ["`;`", "`)`", "`]`"]
                .iter()
                .any(|t| exp.first().map(String::as_str) == Some(*t));
            let prev_end = tokens
                .iter()
                .take_while(|(_, s)| s.end <= span.start)
                .last()
                .map(|(_, s)| s.end);
            match prev_end {
                Some(end)
                    if terminator
                        && source
                            .get(end..span.start)
                            .is_some_and(|gap| gap.contains('\n')) =>
                {
                    Diagnostic::new(msg, end..end)
                        .with_label(span.clone(), format!("found {found} here"))
                }
                _ => Diagnostic::new(msg, span.clone()),
            }
        }
    };
    for (label, ctx_span) in e.contexts() {
        if let Some(l) = pattern_text(label) {
            diag = diag.with_label(sp(*ctx_span), format!("while parsing this {l}"));
        }
    }
    diag
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexes_numbers() {
        let cases: &[(&str, Tok)] = &[
            (
                "0",
                Tok::Int {
                    value: 0,
                    unsigned: false,
                },
            ),
            (
                "42u",
                Tok::Int {
                    value: 42,
                    unsigned: true,
                },
            ),
            (
                "0x1F",
                Tok::Int {
                    value: 31,
                    unsigned: false,
                },
            ),
            (
                "0XffU",
                Tok::Int {
                    value: 255,
                    unsigned: true,
                },
            ),
            ("1.5", Tok::Float(1.5)),
            ("1.0f", Tok::Float(1.0)),
            ("2.f", Tok::Float(2.0)),
            ("2.", Tok::Float(2.0)),
            ("1e3", Tok::Float(1000.0)),
            ("1.e3", Tok::Float(1000.0)),
            ("1.5e-2F", Tok::Float(0.015)),
            (".5", Tok::Float(0.5)),
            (
                "18446744073709551615",
                Tok::Int {
                    value: u64::MAX,
                    unsigned: false,
                },
            ),
        ];
        for (src, tok) in cases {
            let (toks, diags) = lex(src);
            assert!(diags.is_empty(), "{src}: {diags:?}");
            assert_eq!(toks.len(), 1, "{src}");
            assert_eq!(toks[0].0, *tok, "{src}");
            assert_eq!(toks[0].1.into_range(), 0..src.len(), "{src}");
        }
        for bad in [
            "18446744073709551616",
            "0x",
            "1f",
            "12abc",
            "017",
            "1e99",
            "0x1_0",
            "1.5q",
        ] {
            let (toks, diags) = lex(bad);
            assert_eq!(toks.len(), 1, "{bad}");
            assert_eq!(diags.len(), 1, "{bad}: {diags:?}");
            assert_eq!(diags[0].span, 0..bad.len(), "{bad}");
        }
    }

    #[test]
    fn lexes_operators() {
        let (toks, diags) = lex("a<+>=b <+> c ⊕= d⊕e <<= f");
        assert!(diags.is_empty());
        let ps: Vec<_> = toks
            .iter()
            .filter_map(|(t, _)| match t {
                Tok::Punct(p) => Some(*p),
                _ => None,
            })
            .collect();
        assert_eq!(ps, ["⊕=", "⊕", "⊕=", "⊕", "<<="]);
    }
}
