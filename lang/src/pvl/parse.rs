//! PVL source text → [`Program`]: a small hand-written lexer (comments dropped, `\forall`
//! and the other backslash words kept whole), then a chumsky token parser. Expressions use
//! chumsky's Pratt parser with PVL's precedence: `?:` lowest, then `==>` (right
//! associative), `**`, `||`, `&&`, equality, comparison, `+ -`, `* / % \`, prefix `! -`,
//! postfix `[i]`, `.f`.

use chumsky::{input::ValueInput, pratt::*, prelude::*};
use std::fmt;

use super::ast::*;
use crate::diag::Diagnostic;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tok<'s> {
    Ident(&'s str),
    Int(u64),
    Kw(&'static str),
    /// `\forall`, `\old`, ...: the word without its backslash (`forall*` with the star).
    Bs(&'s str),
    Punct(&'static str),
}

impl fmt::Display for Tok<'_> {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Tok::Ident(s) => write!(f, "identifier `{s}`"),
            Tok::Int(v) => write!(f, "`{v}`"),
            Tok::Kw(k) => write!(f, "`{k}`"),
            Tok::Bs(w) => write!(f, "`\\{w}`"),
            Tok::Punct(p) => write!(f, "`{p}`"),
        }
    }
}

const KEYWORDS: &[&str] = &[
    "class",
    "void",
    "int",
    "boolean",
    "if",
    "else",
    "while",
    "for",
    "par",
    "and",
    "parallel",
    "barrier",
    "requires",
    "ensures",
    "context",
    "context_everywhere",
    "loop_invariant",
    "given",
    "yields",
    "assert",
    "assume",
    "ghost",
    "pure",
    "static",
    "inline",
    "return",
    "true",
    "false",
    "null",
    "read",
    "write",
    "none",
    "invariant",
    "atomic",
    "new",
    "sequential",
];

/// Punctuation, longest first.
const PUNCTS: &[&str] = &[
    "==>", "**", "..", "==", "!=", "<=", ">=", "&&", "||", "++", "--", "+", "-", "*", "/", "%",
    "\\", "|", "<", ">", "=", "!", "?", ":", "(", ")", "[", "]", "{", "}", ";", ",", ".",
];

type Spanned<'s> = (Tok<'s>, SimpleSpan);

fn lex(src: &str) -> Result<Vec<Spanned<'_>>, Diagnostic> {
    let bytes = src.as_bytes();
    let mut toks = Vec::new();
    let mut i = 0;
    let word_end = |from: usize| {
        from + src[from..]
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(src.len() - from)
    };
    while i < bytes.len() {
        let c = bytes[i];
        let rest = &src[i..];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if rest.starts_with("//") {
            i += rest.find('\n').unwrap_or(rest.len());
        } else if let Some(comment) = rest.strip_prefix("/*") {
            match comment.find("*/") {
                Some(end) => i += end + 4,
                None => return Err(Diagnostic::new("unterminated block comment", i..i + 2)),
            }
        } else if c.is_ascii_digit() {
            let end = i + rest
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(rest.len());
            let value = src[i..end]
                .parse::<u64>()
                .map_err(|_| Diagnostic::new("integer literal too large", i..end))?;
            toks.push((Tok::Int(value), SimpleSpan::from(i..end)));
            i = end;
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let end = word_end(i);
            let w = &src[i..end];
            let tok = match KEYWORDS.iter().find(|k| **k == w) {
                Some(k) => Tok::Kw(k),
                None => Tok::Ident(w),
            };
            toks.push((tok, SimpleSpan::from(i..end)));
            i = end;
        } else if c == b'\\' && bytes.get(i + 1).is_some_and(|b| b.is_ascii_alphabetic()) {
            let mut end = word_end(i + 1);
            if &src[i + 1..end] == "forall" && bytes.get(end) == Some(&b'*') {
                end += 1;
            }
            toks.push((Tok::Bs(&src[i + 1..end]), SimpleSpan::from(i..end)));
            i = end;
        } else if let Some(p) = PUNCTS.iter().find(|p| rest.starts_with(**p)) {
            toks.push((Tok::Punct(p), SimpleSpan::from(i..i + p.len())));
            i += p.len();
        } else {
            let ch = rest.chars().next().expect("not at the end");
            return Err(Diagnostic::new(
                format!("unexpected character `{ch}`"),
                i..i + ch.len_utf8(),
            ));
        }
    }
    Ok(toks)
}

/// Why a program with VerCors's collection values is refused.
const UNSUPPORTED_COLLECTIONS: &str =
    "`seq<T>`, `set<T>` and `bag<T>` values are not supported yet";

/// The first collection type (`seq<int>`, `set<T>`, `bag<T>`) or size `|xs|` among
/// `tokens`, refused by name rather than misread (as a comparison, or an unknown `|`).
fn collection(tokens: &[Spanned<'_>]) -> Result<(), Diagnostic> {
    for (i, (t, s)) in tokens.iter().enumerate() {
        let what = match (t, tokens.get(i + 1)) {
            (Tok::Ident(n @ ("seq" | "set" | "bag")), Some((Tok::Punct("<"), _))) => {
                format!("`{n}<...>`")
            }
            (Tok::Punct("|"), _) => "`|xs|` (the size of a sequence, set or bag)".to_string(),
            _ => continue,
        };
        return Err(Diagnostic::new(
            format!("{what}: {UNSUPPORTED_COLLECTIONS}"),
            s.into_range(),
        ));
    }
    Ok(())
}

/// Parses a whole PVL file.
pub fn parse(src: &str) -> Result<Program, Vec<Diagnostic>> {
    let tokens = lex(src).map_err(|d| vec![d])?;
    collection(&tokens).map_err(|d| vec![d])?;
    let eoi = SimpleSpan::from(src.len()..src.len());
    let input = tokens.as_slice().map(eoi, |(t, s)| (t, s));
    let result = program().parse(input).into_result().map_err(|errs| {
        errs.into_iter()
            .map(|e| {
                let span = e.span().into_range();
                let msg = match e.reason() {
                    chumsky::error::RichReason::ExpectedFound { found, .. } => match found {
                        Some(t) => format!("unexpected {} in a PVL program", **t),
                        None => "unexpected end of the PVL program".to_string(),
                    },
                    chumsky::error::RichReason::Custom(m) => m.clone(),
                };
                let mut d = Diagnostic::new(msg, span);
                let expected: Vec<String> = e.expected().map(|p| p.to_string()).collect();
                if !expected.is_empty() && expected.len() <= 8 {
                    d = d.with_note(format!("expected {}", expected.join(", ")));
                }
                d
            })
            .collect()
    });
    result
}

type Extra<'t, 's> = extra::Err<Rich<'t, Tok<'s>, SimpleSpan>>;

fn sp(s: SimpleSpan) -> Span {
    s.into_range()
}

fn program<'t, 's: 't, I>() -> impl Parser<'t, I, Program, Extra<'t, 's>>
where
    I: ValueInput<'t, Token = Tok<'s>, Span = SimpleSpan>,
{
    let p = |s: &'static str| just(Tok::Punct(s));
    let kw = |s: &'static str| just(Tok::Kw(s));
    let ident = select! {
        Tok::Ident(s) = e => Ident { name: s.to_string(), span: sp(e.span()) },
    }
    .labelled("identifier");

    let expr = recursive(|expr| {
        let args = expr
            .clone()
            .separated_by(p(","))
            .collect::<Vec<Expr>>()
            .delimited_by(p("("), p(")"));
        let literal = select! {
            Tok::Int(v) => ExprKind::Int(v),
            Tok::Kw("true") => ExprKind::Bool(true),
            Tok::Kw("false") => ExprKind::Bool(false),
            Tok::Kw("null") => ExprKind::Null,
            Tok::Kw("read") => ExprKind::Read,
            Tok::Kw("write") => ExprKind::Write,
            Tok::Kw("none") => ExprKind::NoPerm,
            Tok::Bs("result") => ExprKind::Result,
        };
        let call = ident
            .then(args.clone().or_not())
            .map(|(id, args)| match args {
                Some(args) => ExprKind::Call(id, args),
                None => ExprKind::Name(id.name),
            });
        let bs_word = select! {
            Tok::Bs(w) = e => Ident { name: w.to_string(), span: sp(e.span()) },
        };
        let special = bs_word
            .try_map(|w, span| match w.name.as_str() {
                "forall" | "forall*" | "exists" | "result" => {
                    Err(Rich::custom(span, "not a function"))
                }
                _ => Ok(w),
            })
            .then(args)
            .map(|(w, args)| ExprKind::Special(w, args));
        let quant = select! {
            Tok::Bs("forall") => Quantifier::Forall,
            Tok::Bs("forall*") => Quantifier::ForallStar,
            Tok::Bs("exists") => Quantifier::Exists,
        }
        .then_ignore(kw("int"))
        .then(ident)
        .then_ignore(p(";"))
        .then(expr.clone())
        .then_ignore(p(";"))
        .then(expr.clone())
        .map(|(((q, var), cond), body)| ExprKind::Quant {
            q,
            var,
            cond: Box::new(cond),
            body: Box::new(body),
        });
        // `new int[n]`: an array the method allocates.
        let new = kw("new")
            .ignore_then(
                select! { Tok::Kw("int") => Base::Int, Tok::Kw("boolean") => Base::Boolean },
            )
            .then(
                expr.clone()
                    .delimited_by(p("["), p("]"))
                    .repeated()
                    .at_least(1)
                    .collect::<Vec<_>>(),
            )
            .map_with(|(base, dims), e| {
                ExprKind::New(Box::new(Type {
                    base,
                    dims: dims.into_iter().map(Some).collect(),
                    span: sp(e.span()),
                }))
            });
        let atom = choice((literal, new, special, call))
            .map_with(|kind, e| Expr {
                kind,
                span: sp(e.span()),
            })
            .or(quant.delimited_by(p("("), p(")")).map_with(|kind, e| Expr {
                kind,
                span: sp(e.span()),
            }))
            .or(expr.clone().delimited_by(p("("), p(")")))
            .labelled("expression")
            .boxed();

        let bin = |b: Bin| {
            move |l: Expr,
                  _,
                  r: Expr,
                  e: &mut chumsky::input::MapExtra<'t, '_, I, Extra<'t, 's>>| {
                Expr {
                    kind: ExprKind::Binary(b, Box::new(l), Box::new(r)),
                    span: sp(e.span()),
                }
            }
        };
        let op = |b: BinOp| bin(Bin::Op(b));
        let operators = atom.pratt((
            postfix(
                12,
                expr.clone().delimited_by(p("["), p("]")),
                |base: Expr, i: Expr, e| Expr {
                    kind: ExprKind::Index(Box::new(base), Box::new(i)),
                    span: sp(e.span()),
                },
            ),
            postfix(12, p(".").ignore_then(ident), |base: Expr, f: Ident, e| {
                Expr {
                    kind: ExprKind::Field(Box::new(base), f),
                    span: sp(e.span()),
                }
            }),
            prefix(
                11,
                choice((p("!").to(UnOp::Not), p("-").to(UnOp::Neg))),
                |o, rhs: Expr, e| Expr {
                    kind: ExprKind::Unary(o, Box::new(rhs)),
                    span: sp(e.span()),
                },
            ),
            infix(left(10), p("*"), op(BinOp::Mul)),
            infix(left(10), p("/"), op(BinOp::Div)),
            infix(left(10), p("%"), op(BinOp::Rem)),
            infix(left(10), p("\\"), bin(Bin::Frac)),
            infix(left(9), p("+"), op(BinOp::Add)),
            infix(left(9), p("-"), op(BinOp::Sub)),
            infix(left(8), p("<"), op(BinOp::Lt)),
            infix(left(8), p("<="), op(BinOp::Le)),
            infix(left(8), p(">"), op(BinOp::Gt)),
            infix(left(8), p(">="), op(BinOp::Ge)),
            infix(left(7), p("=="), op(BinOp::Eq)),
            infix(left(7), p("!="), op(BinOp::Ne)),
            infix(left(6), p("&&"), op(BinOp::LogAnd)),
            infix(left(5), p("||"), op(BinOp::LogOr)),
            infix(left(4), p("**"), bin(Bin::Star)),
            infix(right(3), p("==>"), bin(Bin::Implies)),
        ));
        operators
            .clone()
            .then(
                p("?")
                    .ignore_then(expr.clone())
                    .then_ignore(p(":"))
                    .then(expr.clone())
                    .or_not(),
            )
            .map_with(|(c, arms), e| match arms {
                None => c,
                Some((a, b)) => Expr {
                    kind: ExprKind::Cond(Box::new(c), Box::new(a), Box::new(b)),
                    span: sp(e.span()),
                },
            })
            .boxed()
    });

    let base = choice((
        kw("int").to(Base::Int),
        kw("boolean").to(Base::Boolean),
        kw("void").to(Base::Void),
    ));
    let ty = base
        .then(
            expr.clone()
                .or_not()
                .delimited_by(p("["), p("]"))
                .repeated()
                .collect::<Vec<_>>(),
        )
        .map_with(|(base, dims), e| Type {
            base,
            dims,
            span: sp(e.span()),
        })
        .labelled("type");

    let clause_kw = select! {
        Tok::Kw("requires") => ClauseKind::Requires,
        Tok::Kw("ensures") => ClauseKind::Ensures,
        Tok::Kw("context") => ClauseKind::Context,
        Tok::Kw("context_everywhere") => ClauseKind::ContextEverywhere,
        Tok::Kw("loop_invariant") => ClauseKind::LoopInvariant,
    };
    let clause = choice((
        clause_kw
            .then(expr.clone())
            .then_ignore(p(";"))
            .map_with(|(kind, expr), e| Clause::Spec {
                kind,
                expr,
                span: sp(e.span()),
            }),
        choice((kw("given"), kw("yields")))
            .ignore_then(ty.clone())
            .then(ident)
            .then_ignore(p(";"))
            .map_with(|(ty, name), e| Clause::Ghost {
                ty,
                name,
                span: sp(e.span()),
            }),
    ));
    let contract = clause.clone().repeated().collect::<Vec<_>>();

    let stmt = recursive(|stmt| {
        let block = stmt
            .clone()
            .repeated()
            .collect::<Vec<Stmt>>()
            .delimited_by(p("{"), p("}"))
            .map_with(|stmts, e| Block {
                stmts,
                span: sp(e.span()),
            })
            .boxed();
        let s = |kind, e: SimpleSpan| Stmt { kind, span: sp(e) };
        // Statements without their `;`, as in a `for` header.
        let simple = choice((
            ty.clone()
                .then(ident)
                .then(p("=").ignore_then(expr.clone()).or_not())
                .map(|((ty, name), init)| StmtKind::Decl { ty, name, init }),
            expr.clone()
                .then_ignore(p("="))
                .then(expr.clone())
                .map(|(target, value)| StmtKind::Assign { target, value }),
            expr.clone()
                .then(choice((p("++").to(false), p("--").to(true))))
                .map(|(target, decrement)| StmtKind::Step { target, decrement }),
            expr.clone().map(StmtKind::Call),
        ))
        .map_with(move |k, e| s(k, e.span()))
        .boxed();
        let iter = kw("int")
            .ignore_then(ident)
            .then_ignore(p("="))
            .then(expr.clone())
            .then_ignore(p(".."))
            .then(expr.clone())
            .map(|((name, lo), hi)| Iter { name, lo, hi });
        let par_block = ident
            .or_not()
            .then(
                iter.separated_by(p(","))
                    .collect::<Vec<_>>()
                    .delimited_by(p("("), p(")"))
                    .or_not(),
            )
            .then(contract.clone())
            .then(block.clone())
            .map_with(|(((name, iters), contract), body), e| ParBlock {
                name,
                iters: iters.unwrap_or_default(),
                contract,
                body,
                span: sp(e.span()),
            })
            .boxed();
        let loop_ = contract
            .clone()
            .then(choice((
                kw("while")
                    .ignore_then(expr.clone().delimited_by(p("("), p(")")))
                    .then(stmt.clone())
                    .map(|(c, b)| (None, Some(c), None, b)),
                kw("for")
                    .ignore_then(
                        simple
                            .clone()
                            .or_not()
                            .then_ignore(p(";"))
                            .then(expr.clone().or_not())
                            .then_ignore(p(";"))
                            .then(simple.clone().or_not())
                            .delimited_by(p("("), p(")")),
                    )
                    .then(stmt.clone())
                    .map(|(((i, c), st), b)| (Some(i), c, Some(st), b)),
            )))
            .map(|(contract, (init, cond, step, body))| match init {
                None => StmtKind::While {
                    contract,
                    cond: cond.expect("while has a condition"),
                    body: Box::new(body),
                },
                Some(init) => StmtKind::For {
                    contract,
                    init: init.map(Box::new),
                    cond,
                    step: step.flatten().map(Box::new),
                    body: Box::new(body),
                },
            });
        choice((
            block.clone().map(StmtKind::Block),
            // `sequential { par ... par ... }`: the blocks one after the other.
            kw("sequential")
                .ignore_then(block.clone())
                .map(StmtKind::Block),
            kw("if")
                .ignore_then(expr.clone().delimited_by(p("("), p(")")))
                .then(stmt.clone())
                .then(kw("else").ignore_then(stmt.clone()).or_not())
                .map(|((cond, then), els)| StmtKind::If {
                    cond,
                    then: Box::new(then),
                    els: els.map(Box::new),
                }),
            loop_,
            kw("par")
                .ignore_then(
                    par_block
                        .clone()
                        .separated_by(kw("and").then(kw("par").or_not()))
                        .at_least(1)
                        .collect::<Vec<_>>(),
                )
                .map(StmtKind::Par),
            kw("parallel")
                .ignore_then(
                    kw("par")
                        .ignore_then(par_block)
                        .repeated()
                        .collect::<Vec<_>>()
                        .delimited_by(p("{"), p("}")),
                )
                .map(StmtKind::Parallel),
            kw("barrier")
                // `barrier(b; inv)`: the invariants it may use are not needed at run time.
                .ignore_then(
                    ident
                        .then_ignore(p(";").then(ident.separated_by(p(",")).at_least(1)).or_not())
                        .delimited_by(p("("), p(")")),
                )
                // The contract stands in braces, or before empty braces (as the seeds
                // write it), or the barrier has none: `barrier(b);`.
                .then(contract.clone())
                .then(choice((
                    contract.clone().delimited_by(p("{"), p("}")),
                    p(";").to(Vec::new()),
                )))
                .map(|((name, mut contract), inner)| {
                    contract.extend(inner);
                    StmtKind::Barrier { name, contract }
                }),
            kw("assert")
                .ignore_then(expr.clone())
                .then_ignore(p(";"))
                .map(StmtKind::Assert),
            kw("assume")
                .ignore_then(expr.clone())
                .then_ignore(p(";"))
                .map(StmtKind::Assume),
            kw("ghost")
                .ignore_then(stmt.clone())
                .map(|s| StmtKind::Ghost(Box::new(s))),
            kw("return")
                .ignore_then(expr.clone().or_not())
                .then_ignore(p(";"))
                .map(StmtKind::Return),
            kw("invariant")
                .ignore_then(ident)
                .then(expr.clone().delimited_by(p("("), p(")")))
                .then(block.clone())
                .map(|((name, inv), body)| StmtKind::Invariant { name, inv, body }),
            kw("atomic")
                .ignore_then(ident.delimited_by(p("("), p(")")))
                .then(block.clone())
                .map(|(name, body)| StmtKind::Atomic { name, body }),
            // `int x, y;` declares several.
            ty.clone()
                .then(ident.separated_by(p(",")).at_least(2).collect::<Vec<_>>())
                .then_ignore(p(";"))
                .map_with(|(ty, names), e| {
                    StmtKind::Block(Block {
                        stmts: names
                            .into_iter()
                            .map(|name| Stmt {
                                span: name.span.clone(),
                                kind: StmtKind::Decl {
                                    ty: ty.clone(),
                                    name,
                                    init: None,
                                },
                            })
                            .collect(),
                        span: sp(e.span()),
                    })
                }),
            simple.then_ignore(p(";")).map(|s| s.kind),
        ))
        .map_with(move |k, e| s(k, e.span()))
        .boxed()
    });

    let block = stmt
        .repeated()
        .collect::<Vec<Stmt>>()
        .delimited_by(p("{"), p("}"))
        .map_with(|stmts, e| Block {
            stmts,
            span: sp(e.span()),
        });
    let modifiers = choice((kw("pure"), kw("static"), kw("inline"), kw("ghost")))
        .repeated()
        .collect::<Vec<_>>();
    let method = contract
        .clone()
        .then(modifiers)
        .then(ty.clone())
        .then(ident)
        .then(
            ty.clone()
                .then(ident)
                .separated_by(p(","))
                .collect::<Vec<_>>()
                .delimited_by(p("("), p(")")),
        )
        .then(choice((
            block.map(|b| Some(MethodBody::Block(b))),
            p("=")
                .ignore_then(expr.clone())
                .then_ignore(p(";"))
                .map(|e| Some(MethodBody::Expr(e))),
            p(";").to(None),
        )))
        .map_with(
            |(((((contract, mods), ret), name), params), body), e| Method {
                contract,
                pure: mods.contains(&Tok::Kw("pure")),
                ret,
                name,
                params,
                body,
                span: sp(e.span()),
            },
        );
    let field = ty
        .clone()
        .then(ident.separated_by(p(",")).at_least(1).collect::<Vec<_>>())
        .then_ignore(p(";"));
    enum Member {
        Fields(Vec<(Type, Ident)>),
        Method(Box<Method>),
    }
    let member = choice((
        method.map(|m| Member::Method(Box::new(m))),
        field.map(|(ty, names)| {
            Member::Fields(names.into_iter().map(|n| (ty.clone(), n)).collect())
        }),
    ));
    let class = kw("class")
        .ignore_then(ident)
        .then(
            member
                .repeated()
                .collect::<Vec<_>>()
                .delimited_by(p("{"), p("}")),
        )
        .map(|(name, members)| {
            let mut c = Class {
                name,
                fields: Vec::new(),
                methods: Vec::new(),
            };
            for m in members {
                match m {
                    Member::Fields(f) => c.fields.extend(f),
                    Member::Method(m) => c.methods.push(*m),
                }
            }
            c
        });
    class
        .repeated()
        .collect::<Vec<_>>()
        .map(|classes| Program { classes })
        .then_ignore(end())
}
