//! The syntax tree of OpenCL C (the subset of C99 plus OpenCL 1.2 that ksim parses), with a
//! span on every node. Typedef names are resolved by the parser: a [`Type`] is always the
//! type itself.

use crate::ast::{BinOp, Span, UnOp};

#[derive(Clone, Debug, PartialEq)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

/// Scalar and other base types as written (`unsigned int` is `Int { unsigned: true }`).
#[derive(Clone, Debug, PartialEq)]
pub enum Base {
    Void,
    Bool,
    Char {
        unsigned: bool,
    },
    Short {
        unsigned: bool,
    },
    Int {
        unsigned: bool,
    },
    Long {
        unsigned: bool,
    },
    Half,
    Float,
    Double,
    /// `size_t`, `ptrdiff_t`, `intptr_t`, `uintptr_t` (`signed` tells which).
    Size {
        signed: bool,
    },
    /// `int4`, `float2`, ...: element type and length.
    Vector(Box<Base>, u8),
    /// `struct S` / `union U`, by tag (its members are in [`Unit::structs`]).
    Struct(String),
    /// `event_t`, `image2d_t`, `sampler_t`, ... (by name).
    Opaque(String),
}

impl Base {
    /// The OpenCL spelling, for messages.
    pub fn name(&self) -> String {
        let u = |unsigned: bool, s: &str| {
            if unsigned {
                format!("u{s}")
            } else {
                s.to_string()
            }
        };
        match self {
            Base::Void => "void".into(),
            Base::Bool => "bool".into(),
            Base::Char { unsigned } => u(*unsigned, "char"),
            Base::Short { unsigned } => u(*unsigned, "short"),
            Base::Int { unsigned } => u(*unsigned, "int"),
            Base::Long { unsigned } => u(*unsigned, "long"),
            Base::Half => "half".into(),
            Base::Float => "float".into(),
            Base::Double => "double".into(),
            Base::Size { signed: false } => "size_t".into(),
            Base::Size { signed: true } => "ptrdiff_t".into(),
            Base::Vector(b, n) => format!("{}{n}", b.name()),
            Base::Struct(s) => format!("struct {s}"),
            Base::Opaque(s) => s.clone(),
        }
    }
}

/// An image's access qualifier (OpenCL C 1.2 §6.6). An image parameter without one is
/// read-only.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Access {
    #[default]
    Default,
    ReadOnly,
    WriteOnly,
    ReadWrite,
}

/// OpenCL address spaces; `Private` when none is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddrSpace {
    Private,
    Global,
    Local,
    Constant,
}

/// One `*` of a pointer type with the qualifiers after it.
#[derive(Clone, Debug, PartialEq)]
pub struct Pointer {
    pub is_const: bool,
}

/// A full type: base, qualifiers of the pointee (or the object), pointers, array sizes.
#[derive(Clone, Debug, PartialEq)]
pub struct Type {
    pub base: Base,
    pub space: AddrSpace,
    pub is_const: bool,
    pub is_volatile: bool,
    /// An image's access qualifier (`__read_only`, ...); `Default` when none is written.
    pub access: Access,
    pub pointers: Vec<Pointer>,
    /// `[e]` suffixes, outermost first; `None` for `[]`.
    pub arrays: Vec<Option<Expr>>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Unit {
    pub items: Vec<Item>,
    /// Every `struct`/`union` definition of the unit, wherever it appears (C's tag scopes
    /// are not modelled: a later definition of a tag replaces an earlier one).
    pub structs: Vec<StructDef>,
}

/// `struct S { T a; U b[4]; }` (or a union): its members in order. An anonymous one gets
/// the tag `(anonymous N)`.
#[derive(Clone, Debug, PartialEq)]
pub struct StructDef {
    pub tag: String,
    pub is_union: bool,
    pub fields: Vec<Field>,
    pub span: Span,
}

/// One member of a struct.
#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    pub ty: Type,
    pub name: Ident,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    Function(Function),
    /// A program-scope variable (`__constant int T[4] = {...};`).
    Global(Decl),
    /// `struct S { ... };`, `typedef`: recorded by the parser, nothing to lower.
    TypeDecl(Span),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Function {
    pub name: Ident,
    pub is_kernel: bool,
    pub ret: Type,
    pub params: Vec<Param>,
    /// `None` for a prototype.
    pub body: Option<Block>,
    /// Declared `__attribute__((noreturn))`.
    pub noreturn: bool,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub ty: Type,
    /// Unnamed in a prototype.
    pub name: Option<Ident>,
    pub span: Span,
}

/// One declarator of a declaration: `int a = 1, *p, b[4] = {1, 2};` has three.
#[derive(Clone, Debug, PartialEq)]
pub struct Decl {
    pub ty: Type,
    pub name: Ident,
    pub init: Option<Init>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Init {
    Expr(Expr),
    /// `{a, b, ...}` (nested for arrays of arrays).
    List(Vec<Init>, Span),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    pub stmts: Vec<Stmt>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum StmtKind {
    /// `T a = e, b;`: one declarator or more.
    Decl(Vec<Decl>),
    Expr(Expr),
    If {
        cond: Expr,
        then: Box<Stmt>,
        els: Option<Box<Stmt>>,
    },
    While {
        cond: Expr,
        body: Box<Stmt>,
    },
    DoWhile {
        body: Box<Stmt>,
        cond: Expr,
    },
    For {
        init: Option<Box<Stmt>>,
        cond: Option<Expr>,
        step: Option<Expr>,
        body: Box<Stmt>,
    },
    Switch {
        value: Expr,
        body: Box<Stmt>,
    },
    /// `case e: s` (the label and the statement it labels).
    Case(Expr, Box<Stmt>),
    Default(Box<Stmt>),
    Break,
    Continue,
    Return(Option<Expr>),
    Block(Block),
    Empty,
    /// `goto L;` and `L: s`, by the label's name: [`crate::cl::goto`] restructures them
    /// before the lowering sees the function.
    Goto(Ident),
    Label(Ident, Box<Stmt>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IncDec {
    PreInc,
    PreDec,
    PostInc,
    PostDec,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    /// An integer literal with its suffixes.
    Int {
        value: u64,
        unsigned: bool,
        long: bool,
    },
    /// A floating literal; `single` with an `f` suffix.
    Float {
        value: f64,
        single: bool,
    },
    /// A character constant: an `int` holding a (signed) `char` value.
    Char(i64),
    Str(String),
    Name(String),
    Index(Box<Expr>, Box<Expr>),
    Call {
        func: Ident,
        args: Vec<Expr>,
    },
    /// `a.f` or `a->f` (`arrow`).
    Member {
        base: Box<Expr>,
        field: Ident,
        arrow: bool,
    },
    Unary(UnOp, Box<Expr>),
    /// `+e`
    Plus(Box<Expr>),
    IncDec(IncDec, Box<Expr>),
    AddrOf(Box<Expr>),
    Deref(Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `a = b` (`op: None`) or `a op= b`.
    Assign {
        op: Option<BinOp>,
        target: Box<Expr>,
        value: Box<Expr>,
    },
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
    Cast(Box<Type>, Box<Expr>),
    /// `(int4)(a, b, c, d)`: a vector literal.
    VecLit(Box<Type>, Vec<Expr>),
    Comma(Box<Expr>, Box<Expr>),
    SizeofType(Box<Type>),
    SizeofExpr(Box<Expr>),
    /// GNU `({ s1; ...; e; })`: the statements, then the value (`None` when the last
    /// statement is not an expression: the value is `void`).
    StmtExpr(Vec<Stmt>, Option<Box<Expr>>),
}
