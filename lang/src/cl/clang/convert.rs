//! clang's typed tree ([`super::json::Node`]) → the OpenCL syntax tree [`crate::cl::ast`],
//! which the existing lowering takes. Implicit conversions (`ImplicitCastExpr`) are
//! dropped: the lowering derives them again from the types. Explicit casts, literals with their C types, and every
//! other construct map one to one; a node kind with no counterpart is refused with
//! "not supported yet: ..." at its span.

use super::json::{Loc, Node, SrcLoc};
use super::types::{Typedef, Types};
use crate::ast::{BinOp, Span, UnOp};
use crate::cl::ast::*;
use crate::cl::deref::deref_of;
use crate::cl::nesting::MAX_DEPTH;
use crate::cl::{builtins, lower};
use crate::diag::Diagnostic;

type Res<T> = Result<T, Diagnostic>;

/// Turns a location into a span of the [`crate::cl::SourceMap`]: `None` for a location
/// outside the files the user wrote (clang's and ksim's own headers).
pub trait Spans {
    fn offset(&self, loc: &Loc) -> Option<usize>;
    /// The text of the token at `loc`.
    fn token(&self, loc: &Loc) -> Option<String>;
    /// Where the arguments of a function-like macro used at `loc` end (after its `)`), as
    /// a span offset; `None` when no `(` follows the name.
    fn call_end(&self, loc: &Loc) -> Option<usize>;
}

pub struct Converter<'s> {
    spans: &'s dyn Spans,
    /// The unit is CUDA ([`super::cuda`]): its built-ins and C++ are converted too.
    cuda: bool,
    /// `--shared-bytes`: the size of an `extern __shared__` array (CUDA).
    pub(super) shared_bytes: Option<u64>,
    /// clang's id of a template instance → its name as a launch gives it (`scan<int,256>`).
    instances: std::collections::HashMap<String, String>,
    types: Types,
    structs: Vec<StructDef>,
    /// clang's id of each struct of [`Converter::structs`].
    struct_ids: Vec<String>,
    /// clang's id of each label of the function being converted → its name.
    labels: std::collections::HashMap<String, String>,
    /// clang's id of each enum constant → its value.
    enum_values: std::collections::HashMap<String, i64>,
    /// clang's id of each enum → whether its type is `unsigned int`.
    enum_ids: std::collections::HashMap<String, bool>,
    depth: usize,
    /// The span of the innermost node seen that is in the user's files: the span given to
    /// a node that has none of its own (one written inside a header's macro).
    last: Span,
}

/// Converts a translation unit, keeping the declarations of the user's files; `cuda`:
/// the unit is CUDA, with the size of its `extern __shared__` array if given.
pub fn unit(root: &Node, spans: &dyn Spans, cuda: Option<Option<u64>>) -> Res<Unit> {
    let mut c = Converter {
        spans,
        cuda: cuda.is_some(),
        shared_bytes: cuda.flatten(),
        instances: Default::default(),
        types: Types::default(),
        structs: Vec::new(),
        struct_ids: Vec::new(),
        labels: Default::default(),
        enum_values: Default::default(),
        enum_ids: Default::default(),
        depth: 0,
        last: 0..0,
    };
    if c.cuda {
        c.name_instances(&root.inner);
    }
    let mut items = Vec::new();
    c.decls(&root.inner, &mut items)?;
    if c.cuda {
        super::cuda::shared_into_kernels(&mut items);
    }
    Ok(Unit {
        items,
        structs: c.structs,
    })
}

fn binop(op: &str) -> Option<BinOp> {
    Some(match op {
        "*" => BinOp::Mul,
        "/" => BinOp::Div,
        "%" => BinOp::Rem,
        "+" => BinOp::Add,
        "-" => BinOp::Sub,
        "<<" => BinOp::Shl,
        ">>" => BinOp::Shr,
        "<" => BinOp::Lt,
        "<=" => BinOp::Le,
        ">" => BinOp::Gt,
        ">=" => BinOp::Ge,
        "==" => BinOp::Eq,
        "!=" => BinOp::Ne,
        "&" => BinOp::BitAnd,
        "^" => BinOp::BitXor,
        "|" => BinOp::BitOr,
        "&&" => BinOp::LogAnd,
        "||" => BinOp::LogOr,
        _ => return None,
    })
}

/// A node without `kind`: clang's null child (`for (;;)` has no condition).
fn is_null(n: &Node) -> bool {
    n.kind.is_empty()
}

impl Converter<'_> {
    fn unsupported<T>(&self, what: &str, span: &Span) -> Res<T> {
        Err(Diagnostic::new(
            format!("not supported yet: {what}"),
            span.clone(),
        ))
    }

    fn at(&self, loc: &SrcLoc) -> Option<(usize, usize)> {
        let l = loc.user()?;
        let start = self.spans.offset(l)?;
        Some((start, start + l.tok_len.max(1)))
    }

    /// The node's own span (its range), or `None` outside the user's files.
    fn own_span(&self, n: &Node) -> Option<Span> {
        match &n.range {
            Some(r) => {
                let (s, _) = self.at(&r.begin)?;
                // A node that ends inside a macro's expansion ends with the macro's use,
                // its arguments included (`x = OP(a, b)`), not with its name.
                let call_end = r
                    .end
                    .expansion_loc
                    .as_ref()
                    .and_then(|l| self.spans.call_end(l));
                let e = call_end
                    .or_else(|| self.at(&r.end).map(|(_, e)| e))
                    .unwrap_or(s + 1);
                Some(s..e.max(s + 1))
            }
            None => n.loc.as_ref().and_then(|l| self.at(l)).map(|(s, e)| s..e),
        }
    }

    /// The node's span, or the last one seen.
    fn span(&mut self, n: &Node) -> Span {
        match self.own_span(n) {
            Some(s) => {
                self.last = s.clone();
                s
            }
            None => self.last.clone(),
        }
    }

    /// The span of the node's name (its `loc`), or its span.
    fn name_span(&mut self, n: &Node) -> Span {
        match n.loc.as_ref().and_then(|l| self.at(l)) {
            Some((s, e)) => s..e,
            None => self.span(n),
        }
    }

    fn ident(&mut self, n: &Node) -> Ident {
        Ident {
            name: n.name.clone().unwrap_or_default(),
            span: self.name_span(n),
        }
    }

    /// The node's type; a C++ reference `T &` is the pointer `T *` (its uses are `*r`).
    fn ty_of(&self, n: &Node, span: &Span) -> Res<Type> {
        let text = n.ty.as_ref().map_or("int", |t| t.qual_type.as_str());
        let (text, is_ref) = match text.trim_end().strip_suffix('&') {
            Some(t) => (t.trim_end_matches('&'), true),
            None => (text, false),
        };
        let mut ty = self
            .types
            .parse(text, span)
            .map_err(|m| Diagnostic::new(m, span.clone()))?;
        if is_ref {
            ty.pointers.push(Pointer { is_const: false });
        }
        Ok(ty)
    }

    /// Names every template instance of the unit before any call of one is converted.
    fn name_instances(&mut self, decls: &[Node]) {
        for d in decls {
            match d.kind.as_str() {
                "FunctionTemplateDecl" => {
                    for f in &d.inner {
                        if let Some(n) = super::cuda::instance_name(f) {
                            self.instances.insert(f.id.clone(), n);
                        }
                    }
                }
                "NamespaceDecl" | "LinkageSpecDecl" => self.name_instances(&d.inner),
                _ => {}
            }
        }
    }

    /// The declarations of the user's files among `decls`, into `items`.
    fn decls(&mut self, decls: &[Node], items: &mut Vec<Item>) -> Res<()> {
        for d in decls {
            if d.is_implicit || self.own_span(d).is_none() {
                continue;
            }
            match d.kind.as_str() {
                // C++ (CUDA): a template's instances (the pattern is not code), the
                // members of a namespace or of `extern "C"`.
                "FunctionTemplateDecl" if self.cuda => {
                    for f in d.inner.iter().filter(|f| {
                        f.kind == "FunctionDecl"
                            && f.inner.iter().any(|a| a.kind == "TemplateArgument")
                    }) {
                        if let Some(item) = self.decl(f)? {
                            items.push(item);
                        }
                    }
                }
                "NamespaceDecl" | "LinkageSpecDecl" if self.cuda => self.decls(&d.inner, items)?,
                "UsingDirectiveDecl" | "UsingDecl" | "ClassTemplateDecl" if self.cuda => {}
                _ => {
                    if let Some(item) = self.decl(d)? {
                        items.push(item);
                    }
                }
            }
        }
        Ok(())
    }

    /// A declaration at program scope (or a struct/typedef inside a function).
    fn decl(&mut self, d: &Node) -> Res<Option<Item>> {
        let span = self.span(d);
        Ok(match d.kind.as_str() {
            "FunctionDecl" => Some(Item::Function(self.function(d, span)?)),
            "CXXRecordDecl" if self.cuda => {
                self.cxx_record(d)?;
                Some(Item::TypeDecl(span))
            }
            "VarDecl" => Some(Item::Global(self.var(d)?)),
            "RecordDecl" => {
                self.record(d)?;
                Some(Item::TypeDecl(span))
            }
            "TypedefDecl" => {
                self.typedef(d);
                Some(Item::TypeDecl(span))
            }
            "EnumDecl" => {
                self.enum_decl(d, &span)?;
                Some(Item::TypeDecl(span))
            }
            "EmptyDecl" => None,
            k => return self.unsupported(&format!("the declaration `{k}`"), &span),
        })
    }

    fn typedef(&mut self, d: &Node) {
        let name = d.name.clone().unwrap_or_default();
        let owned = d.inner.iter().find_map(|t| {
            t.owned_tag_decl
                .as_ref()
                .or(t.decl.as_ref())
                .or_else(|| t.inner.first().and_then(|r| r.decl.as_ref()))
                .map(|r| r.id.clone())
        });
        if let Some(&unsigned) = owned.as_ref().and_then(|id| self.enum_ids.get(id)) {
            self.types.enums.insert(name.clone(), unsigned);
        }
        let tag = owned.and_then(|id| {
            self.structs
                .iter()
                .zip(&self.struct_ids)
                .find(|(_, i)| **i == id)
                .map(|(s, _)| s.tag.clone())
        });
        let def = match tag {
            Some(tag) => Typedef::Struct(tag),
            None => Typedef::Text(
                d.ty.as_ref()
                    .map(|t| t.qual_type.clone())
                    .unwrap_or_default(),
            ),
        };
        self.types.typedefs.insert(name, def);
    }

    /// `enum E { A, B = 5, C }`: the values of its constants (each the one written, else
    /// one more than the one before, from 0) and its type, recorded for its uses.
    fn enum_decl(&mut self, d: &Node, span: &Span) -> Res<()> {
        let mut next = 0i64;
        let mut unsigned = true;
        for c in d.inner.iter().filter(|c| c.kind == "EnumConstantDecl") {
            let written = c.inner.iter().find_map(|v| match &v.value {
                Some(serde_json::Value::String(s)) => Some(s.clone()),
                _ => None,
            });
            let value = match written {
                Some(v) => v
                    .parse()
                    .or_else(|_| self.unsupported(&format!("the enum value `{v}`"), span))?,
                None => next,
            };
            unsigned &= value >= 0;
            self.enum_values.insert(c.id.clone(), value);
            next = value.wrapping_add(1);
        }
        self.enum_ids.insert(d.id.clone(), unsigned);
        let key = match &d.name {
            Some(n) if !n.is_empty() => n.clone(),
            _ => match d.loc.as_ref().and_then(|l| l.user()) {
                Some(l) => format!("(unnamed enum at {}:{}:{})", l.file, l.line, l.col),
                None => return Ok(()),
            },
        };
        self.types.enums.insert(key, unsigned);
        Ok(())
    }

    /// A C++ struct: recorded as a C one, its name a type name as a typedef's.
    fn cxx_record(&mut self, d: &Node) -> Res<()> {
        self.record(d)?;
        if let Some(n) = d.name.as_ref().filter(|_| d.complete_definition) {
            self.types
                .typedefs
                .insert(n.clone(), Typedef::Struct(n.clone()));
        }
        Ok(())
    }

    /// A struct or union definition: recorded under its tag (`(anonymous N)` without one).
    fn record(&mut self, d: &Node) -> Res<()> {
        let span = self.span(d);
        if !d.complete_definition {
            return Ok(());
        }
        let is_union = d.tag_used.as_deref() == Some("union");
        let tag = match &d.name {
            Some(n) if !n.is_empty() => n.clone(),
            _ => {
                let tag = format!("(anonymous {})", self.structs.len() + 1);
                if let Some(l) = d.loc.as_ref().and_then(|l| l.user()) {
                    let kw = d.tag_used.as_deref().unwrap_or("struct");
                    for how in ["unnamed", "anonymous"] {
                        let key = format!("({how} {kw} at {}:{}:{})", l.file, l.line, l.col);
                        self.types.unnamed.insert(key, tag.clone());
                    }
                }
                tag
            }
        };
        let mut fields = Vec::new();
        // C++'s simple inheritance (`struct t : s`): the bases' members come first, as in
        // the derived struct's layout, and `p.x` reads the base's `x` as the struct's own.
        for b in &d.bases {
            if b.is_virtual {
                return self.unsupported("virtual base classes", &span);
            }
            let name = b.ty.as_ref().map_or("", |t| t.qual_type.as_str());
            let name = name.trim_start_matches("struct ");
            match self.structs.iter().find(|s| s.tag == name) {
                Some(base) => fields.extend(base.fields.iter().cloned()),
                None => return self.unsupported(&format!("the base class `{name}`"), &span),
            }
        }
        for f in &d.inner {
            match f.kind.as_str() {
                "FieldDecl" => {
                    let name = self.ident(f);
                    let ty = self.ty_of(f, &name.span)?;
                    fields.push(Field { ty, name });
                }
                "RecordDecl" => self.record(f)?,
                k if k.ends_with("Attr") => {}
                "CXXRecordDecl" if f.is_implicit => {}
                "CXXRecordDecl" => self.cxx_record(f)?,
                "CXXMethodDecl" | "CXXConstructorDecl" | "CXXDestructorDecl" if self.cuda => {
                    if f.is_virtual {
                        return self.unsupported("virtual functions", &span);
                    }
                    if !f.is_implicit {
                        return self.unsupported("member functions", &span);
                    }
                }
                "AccessSpecDecl" if self.cuda => {}
                k => return self.unsupported(&format!("`{k}` in a struct"), &span),
            }
        }
        self.structs.push(StructDef {
            tag,
            is_union,
            fields,
            span,
        });
        self.struct_ids.push(d.id.clone());
        Ok(())
    }

    fn function(&mut self, d: &Node, span: Span) -> Res<Function> {
        let mut name = self.ident(d);
        if let Some(inst) = self.instances.get(&d.id) {
            name.name = inst.clone();
        }
        let text = d.ty.as_ref().map_or("", |t| t.qual_type.as_str());
        let ret_text = text.split('(').next().unwrap_or("").trim();
        let ret = self
            .types
            .parse(ret_text, &span)
            .map_err(|m| Diagnostic::new(m, span.clone()))?;
        let mut params = Vec::new();
        let mut body = None;
        let mut is_kernel = false;
        // GNU `noreturn` is an attribute of the function's type.
        let mut noreturn = text.contains("__attribute__((noreturn))");
        for c in &d.inner {
            match c.kind.as_str() {
                "ParmVarDecl" => {
                    let pspan = self.span(c);
                    let name = c.name.as_ref().map(|_| self.ident(c));
                    if self.cuda {
                        self.cuda_check_decl(c, &pspan)?;
                    }
                    let ty = self.ty_of(c, &pspan)?;
                    params.push(Param {
                        ty,
                        name,
                        span: pspan,
                    });
                }
                "CompoundStmt" => {
                    self.labels = label_names(c);
                    let mut b = self.block(c)?;
                    crate::cl::goto::eliminate(&mut b)?;
                    body = Some(b);
                }
                "OpenCLKernelAttr" | "CUDAGlobalAttr" => is_kernel = true,
                "NoReturnAttr" | "C11NoReturnAttr" => noreturn = true,
                _ => {}
            }
        }
        if self.cuda && is_kernel {
            // A kernel's pointers point into global memory.
            for p in &mut params {
                if !p.ty.pointers.is_empty() && p.ty.space == AddrSpace::Private {
                    p.ty.space = AddrSpace::Global;
                }
            }
        }
        Ok(Function {
            name,
            is_kernel,
            ret,
            params,
            body,
            noreturn,
            span,
        })
    }

    fn var(&mut self, d: &Node) -> Res<Decl> {
        let whole = self.span(d);
        let name = self.ident(d);
        // From the name on (traces show `i = ...`).
        let span = name.span.start.min(whole.end)..whole.end;
        if self.cuda {
            self.cuda_check_decl(d, &whole)?;
        }
        let ty = self.ty_of(d, &whole)?;
        let is_ref = is_reference(d);
        let init = match d.inner.iter().find(|c| !c.kind.ends_with("Attr")) {
            // `T &r = x;`: a pointer to `x`.
            Some(e) if is_ref => {
                let x = self.expr(e)?;
                let span = x.span.clone();
                Some(Init::Expr(Expr {
                    kind: ExprKind::AddrOf(Box::new(x)),
                    span,
                }))
            }
            // `S s;` of a C++ struct: its trivial default constructor, no value.
            Some(e) if e.kind == "CXXConstructExpr" && e.inner.is_empty() => None,
            Some(e) => Some(self.init(e)?),
            None => None,
        };
        let mut decl = Decl {
            ty,
            name,
            init,
            span,
        };
        if self.cuda {
            self.cuda_var(d, &mut decl)?;
        }
        Ok(decl)
    }

    fn init(&mut self, e: &Node) -> Res<Init> {
        let e = strip_implicit(e);
        if e.kind == "InitListExpr" {
            let span = self.span(e);
            let all: Vec<&Node> = (e.inner.iter())
                .chain(e.array_filler.iter().skip(1))
                .collect();
            // Members left out (`{[2] = 5}`, `{.y = 7}`) are implicit zeros: dropped at the
            // end (a short list zeroes the rest), kept as zeros before a given item, so
            // that the items after them stay in their places.
            let given = all
                .iter()
                .rposition(|i| i.kind != "ImplicitValueInitExpr")
                .map_or(0, |p| p + 1);
            let items = all[..given]
                .iter()
                .map(|i| match i.kind.as_str() {
                    "ImplicitValueInitExpr" => self.zero_init(i),
                    _ => self.init(i),
                })
                .collect::<Res<Vec<_>>>()?;
            return Ok(Init::List(items, span));
        }
        Ok(Init::Expr(self.expr(e)?))
    }

    /// The zero of an implicit value-initialisation: `(T)0` for a scalar or vector, an empty
    /// list (all members zero) for a struct or array.
    fn zero_init(&mut self, n: &Node) -> Res<Init> {
        let span = self.span(n);
        let ty = self.ty_of(n, &span)?;
        if !ty.arrays.is_empty() || matches!(ty.base, Base::Struct(_)) && ty.pointers.is_empty() {
            return Ok(Init::List(Vec::new(), span));
        }
        let zero = Expr {
            kind: ExprKind::Int {
                value: 0,
                unsigned: false,
                long: false,
            },
            span: span.clone(),
        };
        Ok(Init::Expr(Expr {
            kind: ExprKind::Cast(Box::new(ty), Box::new(zero)),
            span,
        }))
    }

    fn block(&mut self, b: &Node) -> Res<Block> {
        let span = self.span(b);
        let mut stmts = Vec::new();
        for s in &b.inner {
            if let Some(s) = self.stmt(s)? {
                stmts.push(s);
            }
        }
        Ok(Block { stmts, span })
    }

    fn enter(&mut self, span: &Span) -> Res<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(Diagnostic::new(
                format!("nested more than {MAX_DEPTH} deep"),
                span.clone(),
            ));
        }
        Ok(())
    }

    /// A statement as the body of another: a declaration-only one becomes `;`.
    fn sub(&mut self, s: &Node) -> Res<Box<Stmt>> {
        let span = self.span(s);
        Ok(Box::new(self.stmt(s)?.unwrap_or(Stmt {
            kind: StmtKind::Empty,
            span,
        })))
    }

    fn stmt(&mut self, s: &Node) -> Res<Option<Stmt>> {
        let span = self.span(s);
        self.enter(&span)?;
        let r = self.stmt_inner(s, span);
        self.depth -= 1;
        r
    }

    fn stmt_inner(&mut self, s: &Node, span: Span) -> Res<Option<Stmt>> {
        if self.cuda {
            self.cuda_refused(&s.kind, &span)?;
        }
        let kind = match s.kind.as_str() {
            "CompoundStmt" => StmtKind::Block(self.block(s)?),
            "DeclStmt" => {
                let mut decls = Vec::new();
                for d in &s.inner {
                    match d.kind.as_str() {
                        // A cooperative group of one block holds nothing.
                        "VarDecl"
                            if self.cuda
                                && super::cuda::is_block_group(
                                    d.ty.as_ref().map_or("", |t| t.qual_type.as_str()),
                                ) => {}
                        "VarDecl" => decls.push(self.var(d)?),
                        "RecordDecl" => self.record(d)?,
                        "CXXRecordDecl" => self.cxx_record(d)?,
                        "TypedefDecl" => self.typedef(d),
                        "EnumDecl" => self.enum_decl(d, &span)?,
                        k => return self.unsupported(&format!("the declaration `{k}`"), &span),
                    }
                }
                if decls.is_empty() {
                    return Ok(None);
                }
                StmtKind::Decl(decls)
            }
            "IfStmt" => {
                let [cond, then, rest @ ..] = &s.inner[..] else {
                    return self.unsupported("this `if`", &span);
                };
                StmtKind::If {
                    cond: self.expr(cond)?,
                    then: self.sub(then)?,
                    els: match rest.first() {
                        Some(e) if s.has_else => Some(self.sub(e)?),
                        _ => None,
                    },
                }
            }
            "WhileStmt" => {
                let [cond, body] = &s.inner[..] else {
                    return self.unsupported("this `while`", &span);
                };
                StmtKind::While {
                    cond: self.expr(cond)?,
                    body: self.sub(body)?,
                }
            }
            "DoStmt" => {
                let [body, cond] = &s.inner[..] else {
                    return self.unsupported("this `do`", &span);
                };
                StmtKind::DoWhile {
                    body: self.sub(body)?,
                    cond: self.expr(cond)?,
                }
            }
            "ForStmt" => {
                let [init, var, cond, step, body] = &s.inner[..] else {
                    return self.unsupported("this `for`", &span);
                };
                if !is_null(var) {
                    return self.unsupported("a declaration as a `for` condition", &span);
                }
                StmtKind::For {
                    init: match Some(init).filter(|n| !is_null(n)) {
                        Some(i) => self.stmt(i)?.map(Box::new),
                        None => None,
                    },
                    cond: Some(cond)
                        .filter(|n| !is_null(n))
                        .map(|c| self.expr(c))
                        .transpose()?,
                    step: Some(step)
                        .filter(|n| !is_null(n))
                        .map(|c| self.expr(c))
                        .transpose()?,
                    body: self.sub(body)?,
                }
            }
            "SwitchStmt" => {
                let [value, body] = &s.inner[..] else {
                    return self.unsupported("this `switch`", &span);
                };
                StmtKind::Switch {
                    value: self.expr(value)?,
                    body: self.sub(body)?,
                }
            }
            "CaseStmt" => {
                let [value, body] = &s.inner[..] else {
                    return self.unsupported("a `case` range", &span);
                };
                StmtKind::Case(self.expr(value)?, self.sub(body)?)
            }
            "DefaultStmt" => {
                let [body] = &s.inner[..] else {
                    return self.unsupported("this `default`", &span);
                };
                StmtKind::Default(self.sub(body)?)
            }
            "BreakStmt" => StmtKind::Break,
            "ContinueStmt" => StmtKind::Continue,
            "ReturnStmt" => StmtKind::Return(s.inner.first().map(|e| self.expr(e)).transpose()?),
            "NullStmt" => StmtKind::Empty,
            "GotoStmt" => {
                let target = s.target_label_decl_id.as_deref().unwrap_or("");
                let Some(name) = self.labels.get(target) else {
                    return self.unsupported("this `goto`", &span);
                };
                StmtKind::Goto(Ident {
                    name: name.clone(),
                    span: span.clone(),
                })
            }
            "LabelStmt" => {
                let label = self.ident(s);
                let [body] = &s.inner[..] else {
                    return self.unsupported("this label", &span);
                };
                StmtKind::Label(label, self.sub(body)?)
            }
            // `#pragma unroll`, `__attribute__((opencl_unroll_hint))`: hints for a compiler.
            "AttributedStmt" => {
                let Some(body) = s.inner.iter().find(|c| !c.kind.ends_with("Attr")) else {
                    return Ok(None);
                };
                return self.stmt(body);
            }
            _ => StmtKind::Expr(self.expr(s)?),
        };
        Ok(Some(Stmt { kind, span }))
    }

    pub(super) fn expr(&mut self, e: &Node) -> Res<Expr> {
        let e = strip_implicit(e);
        let span = self.span(e);
        if let Some(name) = self.known_macro(e) {
            return Ok(Expr {
                kind: ExprKind::Name(name),
                span,
            });
        }
        self.enter(&span)?;
        let r = self.expr_inner(e, span);
        self.depth -= 1;
        r
    }

    /// The name of an OpenCL macro that the lowering knows by name (`CLK_LOCAL_MEM_FENCE`,
    /// `INT_MAX`, ...) when `e` is its whole expansion from clang's header: kept as the
    /// name, as the lowering reads fence arguments and sampler bits by name.
    fn known_macro(&self, e: &Node) -> Option<String> {
        let r = e.range.as_ref()?;
        let (begin, end) = (
            r.begin.expansion_loc.as_ref()?,
            r.end.expansion_loc.as_ref()?,
        );
        let spelled = r.begin.spelling_loc.as_ref()?;
        if begin.offset != end.offset
            || begin.file != end.file
            || self.spans.offset(spelled).is_some()
        {
            return None;
        }
        let name = self.spans.token(begin)?;
        let known = builtins::constant(&name).is_some()
            || builtins::fence_flag(&name).is_some()
            || name.starts_with("CLK_")
            || name == "NULL";
        known.then_some(name)
    }

    fn boxed(&mut self, e: &Node) -> Res<Box<Expr>> {
        Ok(Box::new(self.expr(e)?))
    }

    fn expr_inner(&mut self, e: &Node, span: Span) -> Res<Expr> {
        let one = |this: &Self| match &e.inner[..] {
            [x] => Ok(x),
            _ => this.unsupported(&format!("this `{}`", e.kind), &span),
        };
        let two = |this: &Self| match &e.inner[..] {
            [a, b] => Ok((a, b)),
            _ => this.unsupported(&format!("this `{}`", e.kind), &span),
        };
        let value = || e.value.as_ref().and_then(|v| v.as_str()).unwrap_or("");
        let qual = e.ty.as_ref().map_or("", |t| t.qual_type.as_str());
        if is_half_value(qual) {
            return self.unsupported(
                "values of type `half` (`cl_khr_fp16`; ksim holds halves in memory only, \
                 for `vload_half` and `vstore_half`)",
                &span,
            );
        }
        if self.cuda {
            self.cuda_refused(&e.kind, &span)?;
            if let Some(kind) = self.cuda_member(e, &span) {
                return Ok(Expr { kind, span });
            }
        }
        let kind = match e.kind.as_str() {
            "IntegerLiteral" => {
                let ty =
                    e.ty.as_ref()
                        .and_then(|t| t.desugared_qual_type.as_deref())
                        .unwrap_or(qual);
                ExprKind::Int {
                    value: value().parse().map_err(|_| {
                        Diagnostic::new(
                            format!("`{}` is not a valid number", value()),
                            span.clone(),
                        )
                    })?,
                    unsigned: ty.contains("unsigned"),
                    long: ty.contains("long"),
                }
            }
            "FloatingLiteral" => ExprKind::Float {
                value: value().parse().map_err(|_| {
                    Diagnostic::new(format!("`{}` is not a valid number", value()), span.clone())
                })?,
                single: qual == "float",
            },
            "CharacterLiteral" => {
                let v = e.value.as_ref().and_then(|v| v.as_i64()).unwrap_or(0);
                ExprKind::Char(v as u8 as i8 as i64)
            }
            "CXXBoolLiteralExpr" => {
                let v = e.value.as_ref().and_then(|v| v.as_bool()).unwrap_or(false);
                ExprKind::Name(v.to_string())
            }
            "StringLiteral" => {
                let v = value();
                ExprKind::Str(
                    v.get(1..v.len().saturating_sub(1))
                        .unwrap_or("")
                        .to_string(),
                )
            }
            "DeclRefExpr" => {
                let d = e.referenced_decl.as_deref();
                if let Some(&v) = d.and_then(|d| self.enum_values.get(&d.id)) {
                    // An enum constant is an `int` (C99 §6.7.2.2).
                    let lit = ExprKind::Int {
                        value: v.unsigned_abs(),
                        unsigned: false,
                        long: false,
                    };
                    return Ok(Expr {
                        kind: if v < 0 {
                            ExprKind::Unary(
                                UnOp::Neg,
                                Box::new(Expr {
                                    kind: lit,
                                    span: span.clone(),
                                }),
                            )
                        } else {
                            lit
                        },
                        span,
                    });
                }
                let name = ExprKind::Name(d.and_then(|d| d.name.clone()).unwrap_or_default());
                if d.is_some_and(is_reference) {
                    // A C++ reference is a pointer: its use is `*r`.
                    deref_of(Expr {
                        kind: name,
                        span: span.clone(),
                    })
                } else {
                    name
                }
            }
            "ParenExpr" => {
                return Ok(Expr {
                    kind: self.expr(one(self)?)?.kind,
                    span,
                })
            }
            "ConstantExpr" => return self.expr(one(self)?),
            "ArraySubscriptExpr" => {
                let (a, i) = two(self)?;
                ExprKind::Index(self.boxed(a)?, self.boxed(i)?)
            }
            "CallExpr" => {
                let Some((callee, args)) = e.inner.split_first() else {
                    return self.unsupported("this call", &span);
                };
                let callee = strip_implicit(callee);
                if callee.kind != "DeclRefExpr" {
                    return self.unsupported("calling something other than a function name", &span);
                }
                let decl = callee.referenced_decl.as_deref();
                let name = decl
                    .and_then(|d| {
                        self.instances
                            .get(&d.id)
                            .cloned()
                            .or_else(|| d.name.clone())
                    })
                    .unwrap_or_default();
                if self.cuda {
                    if let Some(kind) = self.cuda_call(&name, callee, args, &span)? {
                        return Ok(Expr { kind, span });
                    }
                }
                let func = Ident {
                    name,
                    span: self.span(callee),
                };
                // A C++ reference parameter takes the argument's address.
                let refs = decl
                    .and_then(|d| d.ty.as_ref())
                    .map(|t| reference_params(&t.qual_type))
                    .unwrap_or_default();
                let mut out = Vec::new();
                for (i, a) in args.iter().enumerate() {
                    let x = self.expr(a)?;
                    out.push(if refs.get(i).copied().unwrap_or(false) {
                        let span = x.span.clone();
                        Expr {
                            kind: ExprKind::AddrOf(Box::new(x)),
                            span,
                        }
                    } else {
                        x
                    });
                }
                // `vloadN`: a vector literal of clang's type for the call (`cl/vecmem.rs`).
                match lower::vecmem_form(&func.name, "vload").filter(|f| f.n > 1) {
                    Some(f) => {
                        // clang prints the result as `float __attribute__((ext_vector_type(4)))`.
                        let mut ty = self.ty_of(e, &span)?;
                        if !matches!(ty.base, Base::Vector(..)) {
                            ty.base = Base::Vector(Box::new(ty.base), f.n);
                        }
                        lower::vload(&func.name, &ty, &out, &span).expect("a vloadN")?
                    }
                    None => ExprKind::Call { func, args: out },
                }
            }
            "MemberExpr" => {
                let base = self.boxed(one(self)?)?;
                ExprKind::Member {
                    field: Ident {
                        name: e.name.clone().unwrap_or_default(),
                        span: e
                            .loc
                            .as_ref()
                            .and_then(|l| self.at(l))
                            .map_or(span.clone(), |(s, t)| s..t),
                    },
                    base,
                    arrow: e.is_arrow,
                }
            }
            "ExtVectorElementExpr" => {
                let base = self.boxed(one(self)?)?;
                // clang's JSON leaves the accessor (`xy`, `s0`) out: it is the last token.
                let name = e
                    .range
                    .as_ref()
                    .and_then(|r| r.end.spelling())
                    .and_then(|l| self.spans.token(l))
                    .unwrap_or_default();
                ExprKind::Member {
                    field: Ident {
                        name,
                        span: span.end.saturating_sub(1)..span.end,
                    },
                    base,
                    arrow: false,
                }
            }
            "UnaryOperator" => {
                let a = self.boxed(one(self)?)?;
                match (e.opcode.as_deref().unwrap_or(""), e.is_postfix) {
                    ("-", _) => ExprKind::Unary(UnOp::Neg, a),
                    ("!", _) => ExprKind::Unary(UnOp::Not, a),
                    ("~", _) => ExprKind::Unary(UnOp::BitNot, a),
                    ("+", _) => ExprKind::Plus(a),
                    ("&", _) => ExprKind::AddrOf(a),
                    ("*", _) => deref_of(*a),
                    ("++", false) => ExprKind::IncDec(IncDec::PreInc, a),
                    ("--", false) => ExprKind::IncDec(IncDec::PreDec, a),
                    ("++", true) => ExprKind::IncDec(IncDec::PostInc, a),
                    ("--", true) => ExprKind::IncDec(IncDec::PostDec, a),
                    ("__extension__", _) => return Ok(*a),
                    (op, _) => return self.unsupported(&format!("the operator `{op}`"), &span),
                }
            }
            "BinaryOperator" => {
                let (a, b) = two(self)?;
                let op = e.opcode.as_deref().unwrap_or("");
                let (a, b) = (self.boxed(a)?, self.boxed(b)?);
                match op {
                    "=" => ExprKind::Assign {
                        op: None,
                        target: a,
                        value: b,
                    },
                    "," => ExprKind::Comma(a, b),
                    _ => match binop(op) {
                        Some(op) => ExprKind::Binary(op, a, b),
                        None => return self.unsupported(&format!("the operator `{op}`"), &span),
                    },
                }
            }
            "CompoundAssignOperator" => {
                let (a, b) = two(self)?;
                let op = e.opcode.as_deref().unwrap_or("").trim_end_matches('=');
                let Some(op) = binop(op) else {
                    return self.unsupported(&format!("the operator `{op}=`"), &span);
                };
                ExprKind::Assign {
                    op: Some(op),
                    target: self.boxed(a)?,
                    value: self.boxed(b)?,
                }
            }
            "ConditionalOperator" => {
                let [c, a, b] = &e.inner[..] else {
                    return self.unsupported("this `?:`", &span);
                };
                ExprKind::Cond(self.boxed(c)?, self.boxed(a)?, self.boxed(b)?)
            }
            "CStyleCastExpr" => {
                let ty = self.ty_of(e, &span)?;
                let inner = strip_implicit(one(self)?);
                if e.cast_kind.as_deref() == Some("VectorSplat") && inner.kind == "ParenExpr" {
                    // `(float4)(x)`: a vector literal of one element.
                    ExprKind::VecLit(Box::new(ty), vec![self.expr(inner)?])
                } else {
                    ExprKind::Cast(Box::new(ty), self.boxed(inner)?)
                }
            }
            "CompoundLiteralExpr" => {
                let ty = self.ty_of(e, &span)?;
                let list = strip_implicit(one(self)?);
                if list.kind != "InitListExpr" {
                    return self.unsupported("this compound literal", &span);
                }
                let items = list
                    .inner
                    .iter()
                    .map(|i| self.expr(i))
                    .collect::<Res<Vec<_>>>()?;
                ExprKind::VecLit(Box::new(ty), items)
            }
            "UnaryExprOrTypeTraitExpr" if e.name.as_deref() == Some("sizeof") => {
                match &e.arg_type {
                    Some(t) => ExprKind::SizeofType(Box::new(
                        self.types
                            .parse(&t.qual_type, &span)
                            .map_err(|m| Diagnostic::new(m, span.clone()))?,
                    )),
                    None => ExprKind::SizeofExpr(self.boxed(one(self)?)?),
                }
            }
            "UnaryExprOrTypeTraitExpr" => {
                let what = e.name.clone().unwrap_or_default();
                return self.unsupported(&format!("`{what}`"), &span);
            }
            // `as_float(x)`: clang's header makes it `__builtin_astype`; the lowering reads
            // it as the call `as_T` of its result type (not the macro name at the expansion
            // place: in `as_float(as_int(x))` both expand where `as_float` is written).
            "AsTypeExpr" => {
                let name = astype_name(qual);
                let arg = e.inner.first().map(|a| self.expr(a)).transpose()?;
                let Some(arg) = arg else {
                    return self.unsupported("this `as_type`", &span);
                };
                ExprKind::Call {
                    func: Ident {
                        name,
                        span: span.start..span.start + 3,
                    },
                    args: vec![arg],
                }
            }
            "StmtExpr" => {
                let Ok(body) = one(self) else {
                    return self.unsupported("this statement expression", &span);
                };
                let mut stmts = self.block(body)?.stmts;
                let value = match stmts.last().map(|s| &s.kind) {
                    Some(StmtKind::Expr(_)) if qual != "void" => match stmts.pop() {
                        Some(Stmt {
                            kind: StmtKind::Expr(v),
                            ..
                        }) => Some(Box::new(v)),
                        _ => None,
                    },
                    _ => None,
                };
                ExprKind::StmtExpr(stmts, value)
            }
            // C++ (CUDA).
            "CXXNullPtrLiteralExpr" => ExprKind::Int {
                value: 0,
                unsigned: false,
                long: false,
            },
            "CXXStaticCastExpr"
            | "CXXFunctionalCastExpr"
            | "CXXReinterpretCastExpr"
            | "CXXConstCastExpr" => {
                let ty = self.ty_of(e, &span)?;
                ExprKind::Cast(Box::new(ty), self.boxed(strip_implicit(one(self)?))?)
            }
            "SubstNonTypeTemplateParmExpr" | "MaterializeTemporaryExpr" => {
                let Some(x) = e.inner.last() else {
                    return self.unsupported(&format!("this `{}`", e.kind), &span);
                };
                return Ok(Expr {
                    kind: self.expr(x)?.kind,
                    span,
                });
            }
            "CXXMemberCallExpr" => match self.cuda_member_call(e, &span) {
                Some(kind) => kind,
                None => return self.unsupported("member functions", &span),
            },
            // A copy of a struct (its trivial copy constructor).
            "CXXConstructExpr" if e.inner.len() == 1 => {
                return Ok(Expr {
                    kind: self.expr(&e.inner[0])?.kind,
                    span,
                })
            }
            "CXXOperatorCallExpr" => return self.unsupported("overloaded operators", &span),

            "InitListExpr" => return self.unsupported("an initializer list here", &span),
            k => return self.unsupported(&format!("the expression `{k}`"), &span),
        };
        Ok(Expr { kind, span })
    }
}

/// clang's id of each label under `n` → its name (a `goto` names its label by id).
fn label_names(n: &Node) -> std::collections::HashMap<String, String> {
    let mut out = std::collections::HashMap::new();
    let mut todo = vec![n];
    while let Some(n) = todo.pop() {
        if let (Some(id), Some(name)) = (&n.decl_id, &n.name) {
            if n.kind == "LabelStmt" {
                out.insert(id.clone(), name.clone());
            }
        }
        todo.extend(&n.inner);
    }
    out
}

/// Whether a declaration is of a C++ reference (`T &`).
fn is_reference(d: &Node) -> bool {
    d.ty.as_ref()
        .is_some_and(|t| t.qual_type.trim_end().ends_with('&'))
}

/// For each parameter of a printed function type (`void (int &, float)`), whether it is a
/// C++ reference.
fn reference_params(fn_type: &str) -> Vec<bool> {
    let Some(open) = fn_type.find('(') else {
        return Vec::new();
    };
    let inner = fn_type[open + 1..].trim_end().trim_end_matches(')');
    let mut out = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '(' | '<' | '[' => depth += 1,
            ')' | '>' | ']' => depth -= 1,
            ',' if depth == 0 => {
                out.push(inner[start..i].trim_end().ends_with('&'));
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(inner[start..].trim_end().ends_with('&'));
    out
}

/// Whether clang's type `qual` is `half` or a vector of halves (not a pointer to them).
fn is_half_value(qual: &str) -> bool {
    !qual.contains(['*', '[', '('])
        && qual.split_whitespace().last().is_some_and(|w| {
            w.strip_prefix("half")
                .is_some_and(|n| n.chars().all(|c| c.is_ascii_digit()))
        })
}

/// The node under clang's implicit conversions, which the lowering derives again.
pub(super) fn strip_implicit(mut e: &Node) -> &Node {
    while matches!(
        e.kind.as_str(),
        "ImplicitCastExpr" | "FullExpr" | "ExprWithCleanups"
    ) && e.inner.len() == 1
    {
        e = &e.inner[0];
    }
    e
}

/// `as_T` for the type clang prints as the result of `__builtin_astype`: `int` → `as_int`,
/// `unsigned int __attribute__((ext_vector_type(2)))` → `as_uint2`, a typedef name
/// (`float4`) as it is.
fn astype_name(qual: &str) -> String {
    let (elem, lanes) = match qual.split_once(" __attribute__((ext_vector_type(") {
        Some((e, rest)) => (e, rest.split(')').next().unwrap_or("")),
        None => (qual, ""),
    };
    let elem = elem.trim_start_matches("const ").trim();
    let elem = match elem.strip_prefix("unsigned ") {
        Some(u) => format!("u{u}"),
        None => elem.rsplit(' ').next().unwrap_or(elem).to_string(),
    };
    format!("as_{elem}{lanes}")
}
