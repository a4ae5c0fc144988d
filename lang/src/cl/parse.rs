//! A recursive-descent parser for OpenCL C, from preprocessed tokens to [`super::ast`].
//!
//! Hand-written rather than chumsky (which the `.ksim` parser uses) because C's grammar is
//! context-sensitive: whether `(T)x` is a cast or `T * p;` a declaration depends on the
//! typedef names declared so far, which the parser tracks as it goes. It stops at the first
//! syntax error, whose span points into the original source; it never panics, and nesting
//! deeper than [`MAX_DEPTH`] is an error rather than a stack overflow.

use super::ast::*;
use super::lex::{char_value, Tok, Token};
use super::pp::parse_int;
use crate::ast::{BinOp, Span, UnOp};
use crate::diag::Diagnostic;
use std::collections::HashMap;

/// Nesting depth (statements and expressions, each operator of a chain such as `1+1+...`
/// one level) beyond which parsing stops with an error. Every pass over the tree recurses
/// on it: `ksim` runs them on a thread whose stack holds this depth with room to spare
/// (`src/main.rs`); the main thread's 8 MiB held 2,000 levels. The bound also keeps the
/// time of passes that are quadratic in the depth to seconds.
pub const MAX_DEPTH: usize = 5_000;

type PResult<T> = Result<T, Diagnostic>;

/// Parses a preprocessed translation unit.
pub fn parse(tokens: &[Token]) -> Result<Unit, Vec<Diagnostic>> {
    let mut p = Parser {
        toks: tokens,
        pos: 0,
        typedefs: HashMap::new(),
        depth: 0,
        structs: Vec::new(),
    };
    p.unit().map_err(|d| vec![d])
}

struct Parser<'t> {
    toks: &'t [Token],
    pos: usize,
    typedefs: HashMap<String, Type>,
    depth: usize,
    /// The struct and union definitions seen so far.
    structs: Vec<StructDef>,
}

const SPACE_WORDS: [(&str, AddrSpace); 8] = [
    ("__global", AddrSpace::Global),
    ("global", AddrSpace::Global),
    ("__local", AddrSpace::Local),
    ("local", AddrSpace::Local),
    ("__constant", AddrSpace::Constant),
    ("constant", AddrSpace::Constant),
    ("__private", AddrSpace::Private),
    ("private", AddrSpace::Private),
];

/// Image access qualifiers (OpenCL C 1.2 §6.6, 2.0's `read_write`).
const ACCESS_WORDS: [(&str, Access); 6] = [
    ("__read_only", Access::ReadOnly),
    ("read_only", Access::ReadOnly),
    ("__write_only", Access::WriteOnly),
    ("write_only", Access::WriteOnly),
    ("__read_write", Access::ReadWrite),
    ("read_write", Access::ReadWrite),
];

/// Words that qualify a declaration and do not change what ksim models.
const IGNORED_WORDS: [&str; 10] = [
    "static",
    "extern",
    "inline",
    "__inline",
    "__inline__",
    "restrict",
    "__restrict",
    "__restrict__",
    "register",
    "auto",
];

const SCALAR_WORDS: [&str; 21] = [
    "void",
    "bool",
    "char",
    "uchar",
    "short",
    "ushort",
    "int",
    "uint",
    "long",
    "ulong",
    "half",
    "float",
    "double",
    "size_t",
    "ptrdiff_t",
    "intptr_t",
    "uintptr_t",
    "unsigned",
    "signed",
    "struct",
    "union",
];

/// `int4` → (int, 4) for the vector type names of OpenCL C.
fn vector_type(w: &str) -> Option<(Base, u8)> {
    let digits = w.trim_start_matches(|c: char| c.is_ascii_alphabetic());
    let n: u8 = digits
        .parse()
        .ok()
        .filter(|n| [2, 3, 4, 8, 16].contains(n))?;
    let elem = scalar_base(&w[..w.len() - digits.len()])?;
    Some((elem, n))
}

fn scalar_base(w: &str) -> Option<Base> {
    Some(match w {
        "char" => Base::Char { unsigned: false },
        "uchar" => Base::Char { unsigned: true },
        "short" => Base::Short { unsigned: false },
        "ushort" => Base::Short { unsigned: true },
        "int" => Base::Int { unsigned: false },
        "uint" => Base::Int { unsigned: true },
        "long" => Base::Long { unsigned: false },
        "ulong" => Base::Long { unsigned: true },
        "half" => Base::Half,
        "float" => Base::Float,
        "double" => Base::Double,
        _ => return None,
    })
}

fn is_opaque(w: &str) -> bool {
    matches!(
        w,
        "event_t"
            | "cl_mem_fence_flags"
            | "sampler_t"
            | "image1d_t"
            | "image2d_t"
            | "image3d_t"
            | "image1d_array_t"
            | "image2d_array_t"
            | "image1d_buffer_t"
    )
}

impl<'t> Parser<'t> {
    fn peek(&self) -> Option<&'t Token> {
        self.toks.get(self.pos)
    }

    fn peek_at(&self, k: usize) -> Option<&'t Token> {
        self.toks.get(self.pos + k)
    }

    fn at(&self, p: &str) -> bool {
        self.peek().is_some_and(|t| t.is(p))
    }

    fn eat(&mut self, p: &str) -> bool {
        if self.at(p) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    /// The span of the current token (or the end of input).
    fn here(&self) -> Span {
        match self.peek() {
            Some(t) => t.span.clone(),
            None => self.toks.last().map_or(0..0, |t| t.span.end..t.span.end),
        }
    }

    fn prev_end(&self) -> usize {
        self.pos
            .checked_sub(1)
            .and_then(|k| self.toks.get(k))
            .map_or(0, |t| t.span.end)
    }

    fn error<T>(&self, expected: &str) -> PResult<T> {
        let found = match self.peek() {
            Some(t) => format!("`{}`", t.text),
            None => "end of input".into(),
        };
        Err(Diagnostic::new(
            format!("expected {expected}, found {found}"),
            self.here(),
        ))
    }

    fn expect(&mut self, p: &str) -> PResult<Span> {
        let span = self.here();
        if self.eat(p) {
            Ok(span)
        } else {
            self.error(&format!("`{p}`"))
        }
    }

    fn ident(&mut self) -> PResult<Ident> {
        match self.peek() {
            Some(t) if t.kind == Tok::Ident => {
                self.pos += 1;
                Ok(Ident {
                    name: t.text.to_string(),
                    span: t.span.clone(),
                })
            }
            _ => self.error("a name"),
        }
    }

    fn enter(&mut self) -> PResult<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(Diagnostic::new(
                format!("nested more than {MAX_DEPTH} deep"),
                self.here(),
            ));
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    /// Whether the attributes starting here name `noreturn` (kept for functions without a
    /// body, `cl/uf.rs`).
    fn noreturn_attribute(&self) -> bool {
        let mut k = self.pos;
        let mut depth = 0;
        while let Some(t) = self.toks.get(k) {
            if depth == 0 && !(t.is("__attribute__") || t.is("__attribute") || t.is("(")) {
                return false;
            }
            if t.is("(") {
                depth += 1;
            } else if t.is(")") {
                depth -= 1;
            } else if t.is("noreturn") || t.is("__noreturn__") {
                return true;
            }
            k += 1;
        }
        false
    }

    /// `__attribute__((...))`: skipped (alignment, `reqd_work_group_size`, ...).
    fn skip_attributes(&mut self) -> PResult<()> {
        while self.eat("__attribute__") || self.eat("__attribute") {
            self.expect("(")?;
            let mut depth = 1;
            while depth > 0 {
                let Some(t) = self.peek() else {
                    return self.error("`)` closing __attribute__");
                };
                if t.is("(") {
                    depth += 1;
                } else if t.is(")") {
                    depth -= 1;
                }
                self.pos += 1;
            }
        }
        Ok(())
    }

    /// Whether the current token starts a type (a declaration or a cast).
    fn starts_type(&self) -> bool {
        self.starts_type_at(0)
    }

    fn starts_type_at(&self, k: usize) -> bool {
        let Some(t) = self.peek_at(k) else {
            return false;
        };
        if t.kind != Tok::Ident {
            return false;
        }
        let w = &*t.text;
        SCALAR_WORDS.contains(&w)
            || SPACE_WORDS.iter().any(|(s, _)| *s == w)
            || IGNORED_WORDS.contains(&w)
            || ACCESS_WORDS.iter().any(|(a, _)| *a == w)
            || matches!(
                w,
                "const" | "volatile" | "__kernel" | "kernel" | "typedef" | "enum" | "__attribute__"
            )
            || vector_type(w).is_some()
            || is_opaque(w)
            || self.typedefs.contains_key(w)
    }

    fn unit(&mut self) -> PResult<Unit> {
        let mut items = Vec::new();
        while self.peek().is_some() {
            if self.eat(";") {
                continue;
            }
            items.extend(self.external()?);
        }
        Ok(Unit {
            items,
            structs: std::mem::take(&mut self.structs),
        })
    }

    /// Declaration specifiers: `(kernel)? qualifiers base qualifiers`.
    fn specifiers(&mut self) -> PResult<(Type, bool, bool)> {
        let start = self.here().start;
        let (mut is_kernel, mut is_typedef) = (false, false);
        let (mut space, mut is_const, mut is_volatile) = (AddrSpace::Private, false, false);
        let mut access = Access::Default;
        let mut base: Option<Base> = None;
        let (mut unsigned, mut signed, mut longs, mut short) = (false, false, 0, false);
        let mut int_word = false;
        loop {
            self.skip_attributes()?;
            let Some(t) = self.peek().filter(|t| t.kind == Tok::Ident) else {
                break;
            };
            let w = &*t.text;
            if let Some((_, s)) = SPACE_WORDS.iter().find(|(n, _)| *n == w) {
                space = *s;
            } else if w == "const" {
                is_const = true;
            } else if w == "volatile" {
                is_volatile = true;
            } else if w == "__kernel" || w == "kernel" {
                is_kernel = true;
            } else if w == "typedef" {
                is_typedef = true;
            } else if IGNORED_WORDS.contains(&w) {
            } else if let Some((_, a)) = ACCESS_WORDS.iter().find(|(n, _)| *n == w) {
                access = *a;
            } else if w == "unsigned" {
                unsigned = true;
            } else if w == "signed" {
                signed = true;
            } else if w == "long" {
                longs += 1;
            } else if w == "short" {
                short = true;
            } else if w == "int" && (unsigned || signed || longs > 0 || short) {
                int_word = true;
            } else if w == "char" && base.is_none() {
                base = Some(Base::Char { unsigned: false });
            } else if base.is_none() && w == "enum" {
                return Err(Diagnostic::new("not supported yet: `enum`", t.span.clone()));
            } else if base.is_none() && (w == "struct" || w == "union") {
                let is_union = w == "union";
                let at = t.span.clone();
                self.pos += 1;
                let name = if self.at("{") {
                    format!("(anonymous {})", self.structs.len() + 1)
                } else {
                    self.ident()?.name
                };
                if self.at("{") {
                    let fields = self.struct_fields()?;
                    self.structs.push(StructDef {
                        tag: name.clone(),
                        is_union,
                        fields,
                        span: at.start..self.prev_end(),
                    });
                }
                base = Some(Base::Struct(name));
                continue;
            } else if base.is_none() && !(unsigned || signed || longs > 0 || short) {
                if let Some(td) = self.typedefs.get(w) {
                    let mut td = td.clone();
                    self.pos += 1;
                    td.space = if space == AddrSpace::Private {
                        td.space
                    } else {
                        space
                    };
                    td.is_const |= is_const;
                    td.is_volatile |= is_volatile;
                    if access != Access::Default {
                        td.access = access;
                    }
                    // Qualifiers after a typedef name.
                    loop {
                        self.skip_attributes()?;
                        match self.peek().map(|t| &*t.text) {
                            Some("const") => td.is_const = true,
                            Some("volatile") => td.is_volatile = true,
                            Some(w) if IGNORED_WORDS.contains(&w) => {}
                            Some(w) if ACCESS_WORDS.iter().any(|(a, _)| *a == w) => {
                                td.access =
                                    ACCESS_WORDS.iter().find(|(a, _)| *a == w).expect("found").1
                            }
                            Some(w) => match SPACE_WORDS.iter().find(|(n, _)| *n == w) {
                                Some((_, s)) => td.space = *s,
                                None => break,
                            },
                            None => break,
                        }
                        self.pos += 1;
                    }
                    td.span = start..self.prev_end();
                    return Ok((td, is_kernel, is_typedef));
                }
                let b = match w {
                    "void" => Base::Void,
                    "bool" => Base::Bool,
                    "size_t" | "uintptr_t" => Base::Size { signed: false },
                    "ptrdiff_t" | "intptr_t" => Base::Size { signed: true },
                    _ => match (scalar_base(w), vector_type(w)) {
                        (Some(b), _) => b,
                        (_, Some((e, n))) => Base::Vector(Box::new(e), n),
                        _ if is_opaque(w) => Base::Opaque(w.to_string()),
                        _ => break,
                    },
                };
                base = Some(b);
            } else {
                break;
            }
            self.pos += 1;
        }
        let end = self.prev_end();
        let base = match base {
            Some(Base::Char { .. }) if unsigned || signed => Base::Char { unsigned },
            Some(b) if !(unsigned || signed || longs > 0 || short) => b,
            Some(Base::Int { .. }) | None if short => Base::Short { unsigned },
            Some(Base::Int { .. }) | None if longs > 0 => Base::Long { unsigned },
            Some(Base::Int { .. }) | None if unsigned || signed || int_word => {
                Base::Int { unsigned }
            }
            Some(b) => {
                return Err(Diagnostic::new(
                    format!(
                        "`{}` cannot be combined with signed/unsigned/short/long",
                        b.name()
                    ),
                    start..end.max(start),
                ))
            }
            None => return self.error("a type"),
        };
        Ok((
            Type {
                base,
                space,
                is_const,
                is_volatile,
                access,
                pointers: Vec::new(),
                arrays: Vec::new(),
                span: start..end.max(start),
            },
            is_kernel,
            is_typedef,
        ))
    }

    /// `{ T a, *b; U c[4]; }`: the members of a struct or union definition.
    fn struct_fields(&mut self) -> PResult<Vec<Field>> {
        self.expect("{")?;
        self.enter()?;
        let mut fields = Vec::new();
        while !self.eat("}") {
            let (base, _, _) = self.specifiers()?;
            loop {
                let (ty, name) = self.declarator(base.clone())?;
                let Some(name) = name else {
                    return self.error("a member name");
                };
                if self.eat(":") {
                    return Err(Diagnostic::new(
                        "not supported yet: bit-fields",
                        self.here(),
                    ));
                }
                fields.push(Field { ty, name });
                if !self.eat(",") {
                    break;
                }
            }
            self.expect(";")?;
        }
        self.leave();
        Ok(fields)
    }

    /// `* const * name [N][M]`: completes `base` with a declarator; the name is optional
    /// (abstract declarators in casts and prototypes).
    fn declarator(&mut self, mut ty: Type) -> PResult<(Type, Option<Ident>)> {
        loop {
            self.skip_attributes()?;
            if self.eat("*") {
                ty.pointers.push(Pointer { is_const: false });
            } else if self.at("const") || self.at("volatile") || self.at("restrict") {
                let c = self.at("const");
                self.pos += 1;
                match ty.pointers.last_mut() {
                    Some(p) => p.is_const |= c,
                    None => ty.is_const |= c,
                }
            } else if self
                .peek()
                .is_some_and(|t| IGNORED_WORDS.contains(&&*t.text))
            {
                self.pos += 1;
            } else if let Some((_, s)) = self
                .peek()
                .and_then(|t| SPACE_WORDS.iter().find(|(n, _)| *n == &*t.text))
            {
                // `int __global *p` style.
                ty.space = *s;
                self.pos += 1;
            } else {
                break;
            }
        }
        if self.at("(") && self.peek_at(1).is_some_and(|t| t.is("*")) {
            return Err(Diagnostic::new(
                "not supported yet: function pointers and pointers to arrays",
                self.here(),
            ));
        }
        let name = if self.peek().is_some_and(|t| t.kind == Tok::Ident) {
            Some(self.ident()?)
        } else {
            None
        };
        while self.eat("[") {
            if self.eat("]") {
                ty.arrays.push(None);
            } else {
                let e = self.assign_expr()?;
                self.expect("]")?;
                ty.arrays.push(Some(e));
            }
        }
        self.skip_attributes()?;
        ty.span = ty.span.start..self.prev_end().max(ty.span.start);
        Ok((ty, name))
    }

    fn external(&mut self) -> PResult<Vec<Item>> {
        let start = self.here().start;
        let (base, is_kernel, is_typedef) = self.specifiers()?;
        if self.eat(";") {
            return Ok(vec![Item::TypeDecl(start..self.prev_end())]);
        }
        let (ty, name) = self.declarator(base.clone())?;
        let Some(name) = name else {
            return self.error("a name");
        };
        if is_typedef {
            self.typedefs.insert(name.name.clone(), ty);
            while self.eat(",") {
                let (ty, name) = self.declarator(base.clone())?;
                let Some(name) = name else {
                    return self.error("a name");
                };
                self.typedefs.insert(name.name, ty);
            }
            self.expect(";")?;
            return Ok(vec![Item::TypeDecl(start..self.prev_end())]);
        }
        if self.eat("(") {
            let params = self.params()?;
            let noreturn = self.noreturn_attribute();
            self.skip_attributes()?;
            let body = if self.eat(";") {
                None
            } else {
                Some(self.block()?)
            };
            return Ok(vec![Item::Function(Function {
                name,
                is_kernel,
                ret: ty,
                params,
                body,
                noreturn,
                span: start..self.prev_end(),
            })]);
        }
        let mut items = vec![Item::Global(self.decl_rest(ty, name, start)?)];
        while self.eat(",") {
            let d = self.declarator(base.clone())?;
            let (ty, Some(name)) = d else {
                return self.error("a name");
            };
            let s = name.span.start;
            items.push(Item::Global(self.decl_rest(ty, name, s)?));
        }
        self.expect(";")?;
        Ok(items)
    }

    fn params(&mut self) -> PResult<Vec<Param>> {
        let mut params = Vec::new();
        if self.eat(")") {
            return Ok(params);
        }
        if self.at("void") && self.peek_at(1).is_some_and(|t| t.is(")")) {
            self.pos += 2;
            return Ok(params);
        }
        loop {
            let start = self.here().start;
            let (base, _, _) = self.specifiers()?;
            let (ty, name) = self.declarator(base)?;
            params.push(Param {
                ty,
                name,
                span: start..self.prev_end(),
            });
            if self.eat(")") {
                return Ok(params);
            }
            self.expect(",")?;
        }
    }

    /// After a declarator: `= init`.
    fn decl_rest(&mut self, ty: Type, name: Ident, start: usize) -> PResult<Decl> {
        let init = if self.eat("=") {
            Some(self.initializer()?)
        } else {
            None
        };
        Ok(Decl {
            ty,
            name,
            init,
            span: start..self.prev_end(),
        })
    }

    fn initializer(&mut self) -> PResult<Init> {
        if self.at("{") {
            self.enter()?;
            let start = self.here().start;
            self.pos += 1;
            let mut items = Vec::new();
            while !self.eat("}") {
                if self.at("[") || self.at(".") {
                    return Err(Diagnostic::new(
                        "not supported yet: designated initialisers",
                        self.here(),
                    ));
                }
                items.push(self.initializer()?);
                if !self.eat(",") {
                    self.expect("}")?;
                    break;
                }
            }
            self.leave();
            return Ok(Init::List(items, start..self.prev_end()));
        }
        Ok(Init::Expr(self.assign_expr()?))
    }

    fn block(&mut self) -> PResult<Block> {
        let start = self.expect("{")?.start;
        let saved = self.typedefs.clone();
        let mut stmts = Vec::new();
        while !self.eat("}") {
            if self.peek().is_none() {
                return self.error("`}`");
            }
            stmts.push(self.stmt()?);
        }
        self.typedefs = saved;
        Ok(Block {
            stmts,
            span: start..self.prev_end(),
        })
    }

    fn stmt(&mut self) -> PResult<Stmt> {
        self.enter()?;
        let r = self.stmt_inner();
        self.leave();
        r
    }

    fn stmt_inner(&mut self) -> PResult<Stmt> {
        let start = self.here().start;
        let mk = |p: &Self, kind| Stmt {
            kind,
            span: start..p.prev_end(),
        };
        let Some(t) = self.peek() else {
            return self.error("a statement");
        };
        if t.kind == Tok::Ident
            && self.peek_at(1).is_some_and(|n| n.is(":"))
            && !matches!(&*t.text, "default")
        {
            let label = self.ident()?;
            self.pos += 1;
            let s = self.stmt()?;
            return Ok(mk(self, StmtKind::Label(label, Box::new(s))));
        }
        match &*t.text {
            "{" if t.kind == Tok::Punct => {
                let b = self.block()?;
                return Ok(mk(self, StmtKind::Block(b)));
            }
            ";" if t.kind == Tok::Punct => {
                self.pos += 1;
                return Ok(mk(self, StmtKind::Empty));
            }
            _ => {}
        }
        if t.kind == Tok::Ident {
            match &*t.text {
                "if" => {
                    self.pos += 1;
                    self.expect("(")?;
                    let cond = self.expr()?;
                    self.expect(")")?;
                    let then = Box::new(self.stmt()?);
                    let els = if self.eat("else") {
                        Some(Box::new(self.stmt()?))
                    } else {
                        None
                    };
                    return Ok(mk(self, StmtKind::If { cond, then, els }));
                }
                "while" => {
                    self.pos += 1;
                    self.expect("(")?;
                    let cond = self.expr()?;
                    self.expect(")")?;
                    let body = Box::new(self.stmt()?);
                    return Ok(mk(self, StmtKind::While { cond, body }));
                }
                "do" => {
                    self.pos += 1;
                    let body = Box::new(self.stmt()?);
                    if !self.eat("while") {
                        return self.error("`while` after the body of `do`");
                    }
                    self.expect("(")?;
                    let cond = self.expr()?;
                    self.expect(")")?;
                    self.expect(";")?;
                    return Ok(mk(self, StmtKind::DoWhile { body, cond }));
                }
                "for" => {
                    self.pos += 1;
                    self.expect("(")?;
                    let saved = self.typedefs.clone();
                    let init = if self.eat(";") {
                        None
                    } else if self.starts_type() {
                        Some(Box::new(self.decl_stmt()?))
                    } else {
                        let s = self.here().start;
                        let e = self.expr()?;
                        self.expect(";")?;
                        Some(Box::new(Stmt {
                            kind: StmtKind::Expr(e),
                            span: s..self.prev_end(),
                        }))
                    };
                    let cond = if self.at(";") {
                        None
                    } else {
                        Some(self.expr()?)
                    };
                    self.expect(";")?;
                    let step = if self.at(")") {
                        None
                    } else {
                        Some(self.expr()?)
                    };
                    self.expect(")")?;
                    let body = Box::new(self.stmt()?);
                    self.typedefs = saved;
                    return Ok(mk(
                        self,
                        StmtKind::For {
                            init,
                            cond,
                            step,
                            body,
                        },
                    ));
                }
                "switch" => {
                    self.pos += 1;
                    self.expect("(")?;
                    let value = self.expr()?;
                    self.expect(")")?;
                    let body = Box::new(self.stmt()?);
                    return Ok(mk(self, StmtKind::Switch { value, body }));
                }
                "case" => {
                    self.pos += 1;
                    let e = self.cond_expr()?;
                    self.expect(":")?;
                    let s = self.case_body()?;
                    return Ok(mk(self, StmtKind::Case(e, Box::new(s))));
                }
                "default" => {
                    self.pos += 1;
                    self.expect(":")?;
                    let s = self.case_body()?;
                    return Ok(mk(self, StmtKind::Default(Box::new(s))));
                }
                "break" => {
                    self.pos += 1;
                    self.expect(";")?;
                    return Ok(mk(self, StmtKind::Break));
                }
                "continue" => {
                    self.pos += 1;
                    self.expect(";")?;
                    return Ok(mk(self, StmtKind::Continue));
                }
                "return" => {
                    self.pos += 1;
                    let e = if self.at(";") {
                        None
                    } else {
                        Some(self.expr()?)
                    };
                    self.expect(";")?;
                    return Ok(mk(self, StmtKind::Return(e)));
                }
                "goto" => {
                    self.pos += 1;
                    let l = self.ident()?;
                    self.expect(";")?;
                    return Ok(mk(self, StmtKind::Goto(l)));
                }
                _ => {}
            }
        }
        if self.starts_type() {
            return self.decl_stmt();
        }
        let e = self.expr()?;
        self.expect(";")?;
        Ok(mk(self, StmtKind::Expr(e)))
    }

    /// The statement after `case e:` — `case 1: case 2: s` nests; `case 1: }` labels nothing.
    fn case_body(&mut self) -> PResult<Stmt> {
        if self.at("}") {
            let s = self.here().start;
            return Ok(Stmt {
                kind: StmtKind::Empty,
                span: s..s,
            });
        }
        self.stmt()
    }

    fn decl_stmt(&mut self) -> PResult<Stmt> {
        let start = self.here().start;
        let (base, _, is_typedef) = self.specifiers()?;
        let mut decls = Vec::new();
        if !self.at(";") {
            loop {
                let ds = self.here().start;
                let (ty, name) = self.declarator(base.clone())?;
                let Some(name) = name else {
                    return self.error("a name");
                };
                if is_typedef {
                    self.typedefs.insert(name.name.clone(), ty);
                } else {
                    decls.push(self.decl_rest(ty, name, ds)?);
                }
                if !self.eat(",") {
                    break;
                }
            }
        }
        self.expect(";")?;
        let span = start..self.prev_end();
        Ok(Stmt {
            kind: if decls.is_empty() {
                StmtKind::Empty
            } else {
                StmtKind::Decl(decls)
            },
            span,
        })
    }

    // ----- expressions -----

    fn expr(&mut self) -> PResult<Expr> {
        let mut e = self.assign_expr()?;
        // Each `,` nests the tree one level deeper, as in [`Self::binary`].
        let mut chain = 0;
        let r = loop {
            if !self.eat(",") {
                break Ok(e);
            }
            chain += 1;
            if let Err(d) = self.enter() {
                break Err(d);
            }
            let b = match self.assign_expr() {
                Ok(b) => b,
                Err(d) => break Err(d),
            };
            let span = e.span.start..b.span.end;
            e = Expr {
                kind: ExprKind::Comma(Box::new(e), Box::new(b)),
                span,
            };
        };
        self.depth -= chain;
        r
    }

    fn assign_expr(&mut self) -> PResult<Expr> {
        self.enter()?;
        let r = self.assign_inner();
        self.leave();
        r
    }

    fn assign_inner(&mut self) -> PResult<Expr> {
        let lhs = self.cond_expr()?;
        const OPS: [(&str, Option<BinOp>); 11] = [
            ("=", None),
            ("+=", Some(BinOp::Add)),
            ("-=", Some(BinOp::Sub)),
            ("*=", Some(BinOp::Mul)),
            ("/=", Some(BinOp::Div)),
            ("%=", Some(BinOp::Rem)),
            ("<<=", Some(BinOp::Shl)),
            (">>=", Some(BinOp::Shr)),
            ("&=", Some(BinOp::BitAnd)),
            ("^=", Some(BinOp::BitXor)),
            ("|=", Some(BinOp::BitOr)),
        ];
        for (p, op) in OPS {
            if self.at(p) && self.peek().is_some_and(|t| t.kind == Tok::Punct) {
                self.pos += 1;
                let value = self.assign_expr()?;
                let span = lhs.span.start..value.span.end;
                return Ok(Expr {
                    kind: ExprKind::Assign {
                        op,
                        target: Box::new(lhs),
                        value: Box::new(value),
                    },
                    span,
                });
            }
        }
        Ok(lhs)
    }

    fn cond_expr(&mut self) -> PResult<Expr> {
        let c = self.binary(0)?;
        if self.eat("?") {
            let a = self.expr()?;
            self.expect(":")?;
            let b = self.assign_expr()?;
            let span = c.span.start..b.span.end;
            return Ok(Expr {
                kind: ExprKind::Cond(Box::new(c), Box::new(a), Box::new(b)),
                span,
            });
        }
        Ok(c)
    }

    fn binop(&self) -> Option<BinOp> {
        let t = self.peek().filter(|t| t.kind == Tok::Punct)?;
        use BinOp::*;
        Some(match &*t.text {
            "*" => Mul,
            "/" => Div,
            "%" => Rem,
            "+" => Add,
            "-" => Sub,
            "<<" => Shl,
            ">>" => Shr,
            "<" => Lt,
            "<=" => Le,
            ">" => Gt,
            ">=" => Ge,
            "==" => Eq,
            "!=" => Ne,
            "&" => BitAnd,
            "^" => BitXor,
            "|" => BitOr,
            "&&" => LogAnd,
            "||" => LogOr,
            _ => return None,
        })
    }

    fn binary(&mut self, min: u8) -> PResult<Expr> {
        let mut a = self.unary()?;
        // A chain `a + b + ...` is parsed in a loop, but each operator nests the tree (which
        // every later pass recurses on) one level deeper: it counts as nesting.
        let mut chain = 0;
        let r = loop {
            let Some(op) = self.binop().filter(|op| op.precedence() > min) else {
                break Ok(a);
            };
            self.pos += 1;
            chain += 1;
            if let Err(e) = self.enter() {
                break Err(e);
            }
            let b = match self.binary(op.precedence()) {
                Ok(b) => b,
                Err(e) => break Err(e),
            };
            let span = a.span.start..b.span.end;
            a = Expr {
                kind: ExprKind::Binary(op, Box::new(a), Box::new(b)),
                span,
            };
        };
        self.depth -= chain;
        r
    }

    fn unary(&mut self) -> PResult<Expr> {
        self.enter()?;
        let r = self.unary_inner();
        self.leave();
        r
    }

    fn unary_inner(&mut self) -> PResult<Expr> {
        let start = self.here().start;
        let mk = |p: &Self, kind| Expr {
            kind,
            span: start..p.prev_end(),
        };
        let Some(t) = self.peek() else {
            return self.error("an expression");
        };
        if t.kind == Tok::Punct {
            let prefix: Option<fn(Box<Expr>) -> ExprKind> = match &*t.text {
                "-" => Some(|e| ExprKind::Unary(UnOp::Neg, e)),
                "!" => Some(|e| ExprKind::Unary(UnOp::Not, e)),
                "~" => Some(|e| ExprKind::Unary(UnOp::BitNot, e)),
                "+" => Some(ExprKind::Plus),
                "&" => Some(ExprKind::AddrOf),
                "*" => Some(ExprKind::Deref),
                "++" => Some(|e| ExprKind::IncDec(IncDec::PreInc, e)),
                "--" => Some(|e| ExprKind::IncDec(IncDec::PreDec, e)),
                _ => None,
            };
            if let Some(f) = prefix {
                let deref = t.is("*");
                self.pos += 1;
                let e = self.unary()?;
                if deref {
                    return Ok(mk(self, deref_of(e)));
                }
                return Ok(mk(self, f(Box::new(e))));
            }
            if t.is("(") && self.starts_type_at(1) {
                self.pos += 1;
                let (base, _, _) = self.specifiers()?;
                let (ty, name) = self.declarator(base)?;
                if let Some(n) = name {
                    return Err(Diagnostic::new("expected `)` after a type name", n.span));
                }
                self.expect(")")?;
                if self.at("{") {
                    // `(short2){42, 43}`: a compound literal.
                    let Init::List(items, _) = self.initializer()? else {
                        unreachable!("a brace starts a list")
                    };
                    let items = items
                        .into_iter()
                        .map(|i| match i {
                            Init::Expr(e) => Ok(e),
                            Init::List(_, s) => Err(Diagnostic::new(
                                "not supported yet: nested compound literals",
                                s,
                            )),
                        })
                        .collect::<PResult<Vec<_>>>()?;
                    let e = mk(self, ExprKind::VecLit(Box::new(ty), items));
                    return self.postfix(e);
                }
                if self.at("(") && matches!(ty.base, Base::Vector(..)) && ty.pointers.is_empty() {
                    // `(int4)(a, b, c, d)`: a vector literal.
                    self.pos += 1;
                    let mut items = vec![self.assign_expr()?];
                    while self.eat(",") {
                        items.push(self.assign_expr()?);
                    }
                    self.expect(")")?;
                    let e = mk(self, ExprKind::VecLit(Box::new(ty), items));
                    return self.postfix(e);
                }
                let e = self.unary()?;
                return Ok(mk(self, ExprKind::Cast(Box::new(ty), Box::new(e))));
            }
        }
        if t.is("sizeof") {
            self.pos += 1;
            if self.at("(") && self.starts_type_at(1) {
                self.pos += 1;
                let (base, _, _) = self.specifiers()?;
                let (ty, _) = self.declarator(base)?;
                self.expect(")")?;
                return Ok(mk(self, ExprKind::SizeofType(Box::new(ty))));
            }
            let e = self.unary()?;
            return Ok(mk(self, ExprKind::SizeofExpr(Box::new(e))));
        }
        let e = self.primary()?;
        self.postfix(e)
    }

    fn postfix(&mut self, mut e: Expr) -> PResult<Expr> {
        let start = e.span.start;
        loop {
            if self.eat("[") {
                let i = self.expr()?;
                self.expect("]")?;
                e = Expr {
                    kind: ExprKind::Index(Box::new(e), Box::new(i)),
                    span: start..self.prev_end(),
                };
            } else if self.at("(") {
                let ExprKind::Name(name) = &e.kind else {
                    return Err(Diagnostic::new(
                        "not supported yet: calling something other than a function name",
                        self.here(),
                    ));
                };
                let func = Ident {
                    name: name.clone(),
                    span: e.span.clone(),
                };
                self.pos += 1;
                let mut args = Vec::new();
                if !self.eat(")") {
                    loop {
                        if func.name.starts_with("__") && self.starts_type() {
                            // GPUVerify's `__read_permission(int, A[i])`: a type argument.
                            let s = self.here().start;
                            let (base, _, _) = self.specifiers()?;
                            let (ty, _) = self.declarator(base)?;
                            args.push(Expr {
                                kind: ExprKind::SizeofType(Box::new(ty)),
                                span: s..self.prev_end(),
                            });
                        } else {
                            args.push(self.assign_expr()?);
                        }
                        if self.eat(")") {
                            break;
                        }
                        self.expect(",")?;
                    }
                }
                e = Expr {
                    kind: ExprKind::Call { func, args },
                    span: start..self.prev_end(),
                };
            } else if self.at(".") || self.at("->") {
                let arrow = self.at("->");
                self.pos += 1;
                let field = self.ident()?;
                e = Expr {
                    kind: ExprKind::Member {
                        base: Box::new(e),
                        field,
                        arrow,
                    },
                    span: start..self.prev_end(),
                };
            } else if self.at("++") || self.at("--") {
                let op = if self.at("++") {
                    IncDec::PostInc
                } else {
                    IncDec::PostDec
                };
                self.pos += 1;
                e = Expr {
                    kind: ExprKind::IncDec(op, Box::new(e)),
                    span: start..self.prev_end(),
                };
            } else {
                return Ok(e);
            }
        }
    }

    fn primary(&mut self) -> PResult<Expr> {
        let Some(t) = self.peek() else {
            return self.error("an expression");
        };
        let span = t.span.clone();
        let kind = match t.kind {
            Tok::Ident if !self.starts_type() => ExprKind::Name(t.text.to_string()),
            Tok::Number => number(&t.text).ok_or_else(|| {
                Diagnostic::new(format!("`{}` is not a valid number", t.text), span.clone())
            })?,
            Tok::Char => {
                ExprKind::Char(char_value(&t.text).map_err(|m| Diagnostic::new(m, span.clone()))?)
            }
            Tok::Str => ExprKind::Str(t.text[1..t.text.len() - 1].to_string()),
            Tok::Punct if t.is("(") => {
                self.pos += 1;
                let e = self.expr()?;
                self.expect(")")?;
                return Ok(Expr {
                    kind: e.kind,
                    span: span.start..self.prev_end(),
                });
            }
            _ => return self.error("an expression"),
        };
        self.pos += 1;
        Ok(Expr { kind, span })
    }
}

/// The value of a hex float's digits after `0x` (C11 §6.4.4.2): `h.hhhp±d`, the binary
/// exponent required. Exact for up to 64 significant bits, as the literals of real code.
fn hex_float(s: &str) -> Option<f64> {
    let (mantissa, exp) = s.split_once('p')?;
    let exp: i32 = exp.parse().ok()?;
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    let digits = format!("{int}{frac}");
    if digits.len() > 16 {
        return None;
    }
    let m = u64::from_str_radix(&digits, 16).ok()?;
    let shift = exp.checked_sub(4 * frac.len() as i32)?;
    Some(m as f64 * 2f64.powi(shift))
}

/// `*e`, with the address-of operators C defines it to cancel (C11 §6.5.3.2 and its
/// footnote 102, §6.5.2.1) taken out, so that the lowering sees the element itself (a
/// vector buffer's element is a vector, not its first component): `*&x` is `x`, and
/// `*(&a[i] + j)` is `a[i + j]` (`- j`: `a[i - j]`).
pub(crate) fn deref_of(e: Expr) -> ExprKind {
    match e.kind {
        ExprKind::AddrOf(x) => x.kind,
        ExprKind::Binary(op @ (BinOp::Add | BinOp::Sub), p, j) if matches!(&p.kind, ExprKind::AddrOf(x) if matches!(x.kind, ExprKind::Index(..))) =>
        {
            let ExprKind::AddrOf(x) = p.kind else {
                unreachable!("matched")
            };
            let ExprKind::Index(a, i) = x.kind else {
                unreachable!("matched")
            };
            let span = i.span.start..j.span.end;
            let i = Expr {
                kind: ExprKind::Binary(op, i, j),
                span,
            };
            ExprKind::Index(a, Box::new(i))
        }
        kind => ExprKind::Deref(Box::new(Expr { kind, span: e.span })),
    }
}

/// Reads a pp-number as a C literal: integers (decimal, hex, octal; `u`, `l` suffixes) and
/// floats (`1.5`, `1e3`, `2.0f`, hex `0x1.8p-3f`).
fn number(text: &str) -> Option<ExprKind> {
    let lower = text.to_ascii_lowercase();
    let is_hex = lower.starts_with("0x");
    if is_hex && lower.contains('p') {
        let single = lower.ends_with('f');
        let value = hex_float(lower[2..].trim_end_matches(['f', 'l']))?;
        return Some(ExprKind::Float { value, single });
    }
    if !is_hex && (lower.contains('.') || lower.contains('e')) {
        let single = lower.ends_with('f');
        let body = lower.trim_end_matches(['f', 'l']);
        let value: f64 = body.parse().ok()?;
        return Some(ExprKind::Float { value, single });
    }
    if !is_hex && lower.ends_with('f') {
        return None;
    }
    let suffix: String = lower
        .chars()
        .rev()
        .take_while(|c| matches!(c, 'u' | 'l'))
        .collect();
    let value = parse_int(text)?;
    let long = suffix.contains('l');
    // C: a hex or octal literal takes the first of int, uint, long, ulong that holds it
    // (a decimal one skips the unsigned types, which the checker does by itself).
    let octal = lower.len() > 1 && lower.starts_with('0');
    let unsigned_fit = (is_hex || octal)
        && ((!long && value > i32::MAX as u64 && value <= u32::MAX as u64)
            || value > i64::MAX as u64);
    Some(ExprKind::Int {
        value,
        unsigned: suffix.contains('u') || unsigned_fit,
        long,
    })
}
