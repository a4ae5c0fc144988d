//! The PVL syntax tree: VerCors's programs as written, with a span on every node. The
//! lowering ([`super::lower`]) turns one method of it into ksim's surface tree.

pub use crate::ast::{BinOp, Ident, Span, UnOp};

#[derive(Clone, Debug)]
pub struct Program {
    pub classes: Vec<Class>,
}

#[derive(Clone, Debug)]
pub struct Class {
    pub name: Ident,
    pub fields: Vec<(Type, Ident)>,
    pub methods: Vec<Method>,
}

/// A type as written: `int`, `boolean`, `void`, `int[]`, `int[N]`, `int[M][N]`.
#[derive(Clone, Debug)]
pub struct Type {
    pub base: Base,
    /// One entry per `[...]`, with its size when one is written.
    pub dims: Vec<Option<Expr>>,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Base {
    Int,
    Boolean,
    Void,
}

/// Where a clause stands decides when it is checked (see [`super::lower`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClauseKind {
    Requires,
    Ensures,
    Context,
    ContextEverywhere,
    LoopInvariant,
}

impl ClauseKind {
    pub fn keyword(self) -> &'static str {
        match self {
            ClauseKind::Requires => "requires",
            ClauseKind::Ensures => "ensures",
            ClauseKind::Context => "context",
            ClauseKind::ContextEverywhere => "context_everywhere",
            ClauseKind::LoopInvariant => "loop_invariant",
        }
    }
}

/// One contract line, `requires e;`; `given`/`yields` declarations are kept apart.
#[derive(Clone, Debug)]
pub enum Clause {
    Spec {
        kind: ClauseKind,
        expr: Expr,
        span: Span,
    },
    /// `given T x;` / `yields T x;`: ghost parameters, parsed and kept.
    Ghost { ty: Type, name: Ident, span: Span },
}

#[derive(Clone, Debug)]
pub struct Method {
    pub contract: Vec<Clause>,
    pub pure: bool,
    pub ret: Type,
    pub name: Ident,
    pub params: Vec<(Type, Ident)>,
    pub body: Option<MethodBody>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum MethodBody {
    Block(Block),
    /// `pure int f(...) = e;`
    Expr(Expr),
}

#[derive(Clone, Debug)]
pub struct Block {
    pub stmts: Vec<Stmt>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

/// `int t = lo .. hi`: one iterator of a `par` block.
#[derive(Clone, Debug)]
pub struct Iter {
    pub name: Ident,
    pub lo: Expr,
    pub hi: Expr,
}

#[derive(Clone, Debug)]
pub struct ParBlock {
    pub name: Option<Ident>,
    pub iters: Vec<Iter>,
    pub contract: Vec<Clause>,
    pub body: Block,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum StmtKind {
    Decl {
        ty: Type,
        name: Ident,
        init: Option<Expr>,
    },
    Assign {
        target: Expr,
        value: Expr,
    },
    /// `x++;` / `x--;`
    Step {
        target: Expr,
        decrement: bool,
    },
    /// A method call as a statement.
    Call(Expr),
    If {
        cond: Expr,
        then: Box<Stmt>,
        els: Option<Box<Stmt>>,
    },
    While {
        contract: Vec<Clause>,
        cond: Expr,
        body: Box<Stmt>,
    },
    For {
        contract: Vec<Clause>,
        init: Option<Box<Stmt>>,
        cond: Option<Expr>,
        step: Option<Box<Stmt>>,
        body: Box<Stmt>,
    },
    Block(Block),
    /// `par ... and par ...`: blocks joined with `and` (one or more).
    Par(Vec<ParBlock>),
    /// `parallel { par ... par ... }`
    Parallel(Vec<ParBlock>),
    Barrier {
        name: Ident,
        contract: Vec<Clause>,
    },
    Assert(Expr),
    Assume(Expr),
    /// `ghost s`
    Ghost(Box<Stmt>),
    Return(Option<Expr>),
    /// `invariant name(e) { ... }`
    Invariant {
        name: Ident,
        inv: Expr,
        body: Block,
    },
    /// `atomic(name) { ... }`
    Atomic {
        name: Ident,
        body: Block,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quantifier {
    Forall,
    /// `\forall*`: a quantified separating conjunction (of permissions).
    ForallStar,
    Exists,
}

impl Quantifier {
    pub fn spelling(self) -> &'static str {
        match self {
            Quantifier::Forall => "\\forall",
            Quantifier::ForallStar => "\\forall*",
            Quantifier::Exists => "\\exists",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bin {
    Op(BinOp),
    /// `==>`
    Implies,
    /// `**`: separating conjunction.
    Star,
    /// `a\b`: a fraction.
    Frac,
}

#[derive(Clone, Debug)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum ExprKind {
    Int(u64),
    Bool(bool),
    Null,
    /// `read`, `write`, `none`: permission amounts.
    Read,
    Write,
    NoPerm,
    /// `\result`
    Result,
    Name(String),
    Index(Box<Expr>, Box<Expr>),
    /// `e.name` (`a.length`).
    Field(Box<Expr>, Ident),
    /// `f(args)`, `Perm(loc, f)`.
    Call(Ident, Vec<Expr>),
    /// `\old(e)`, `\array(a, n)`, `\matrix(m, r, c)`, ...: the name without its backslash.
    Special(Ident, Vec<Expr>),
    Unary(UnOp, Box<Expr>),
    Binary(Bin, Box<Expr>, Box<Expr>),
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
    /// `new int[n]`
    New(Box<Type>),
    Quant {
        q: Quantifier,
        var: Ident,
        cond: Box<Expr>,
        body: Box<Expr>,
    },
}
