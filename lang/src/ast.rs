//! The surface syntax tree: what the user wrote, with a source span on every node.
//!
//! The parser produces it, the pretty-printer prints it back (`parse(print(k)) == k` up to
//! spans), and the type checker ([`crate::check`]) lowers it to the resolved core form
//! ([`crate::core`]) that every engine runs.

pub use crate::core::Fence;
use serde::Serialize;

/// Byte offsets into the kernel source (chumsky's spans; ariadne is configured for bytes).
pub type Span = std::ops::Range<usize>;

/// A name and where it was written.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

/// A type as written: the paper's base types plus the generic monoid type 𝕊_X, written `T`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum TypeName {
    Int,
    Uint,
    Bool,
    Float,
    /// The generic monoid type `T` (Definition 4.1's 𝕊_X).
    Generic,
    /// OpenCL C's other scalar types (the OpenCL front end writes them; `.ksim` has no
    /// spelling for them): see [`crate::core::Ty`].
    Char,
    Uchar,
    Short,
    Ushort,
    Long,
    Ulong,
    Double,
    /// A pointer value ([`crate::core::Ty::Ptr`]); `.ksim` spells it `ptr`.
    Ptr,
}

/// Where an array lives: `local` arrays exist once per work-group, `global` once per launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum Space {
    Local,
    Global,
}

/// One kernel: `kernel name(params) launch(groups = e, local_size = e) { body }`.
#[derive(Clone, Debug, PartialEq)]
pub struct Kernel {
    pub name: Ident,
    pub params: Vec<Param>,
    /// Default launch geometry declared in the source; `--groups` / `--local-size` override it.
    pub launch: Vec<LaunchItem>,
    pub body: Block,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Param {
    /// `[const] local|global TYPE name[e1]([e2])`: sizes are expressions over size parameters.
    Array {
        is_const: bool,
        space: Space,
        elem: TypeName,
        name: Ident,
        dims: Vec<Expr>,
        span: Span,
    },
    /// `TYPE name`: a scalar argument, bound at launch with `-D name=value`.
    Scalar {
        ty: TypeName,
        name: Ident,
        span: Span,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum LaunchKey {
    Groups,
    LocalSize,
}

#[derive(Clone, Debug, PartialEq)]
pub struct LaunchItem {
    pub key: LaunchKey,
    /// Dimension 0.
    pub value: Expr,
    /// Dimensions 1 and 2 of `key = (e0, e1[, e2])`; empty for `key = e`.
    pub more: Vec<Expr>,
    pub span: Span,
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

/// The target of an assignment: a variable or an array element (1D or 2D).
#[derive(Clone, Debug, PartialEq)]
pub enum LValue {
    Var(Ident),
    Elem { array: Ident, indices: Vec<Expr> },
}

/// `=` or a compound assignment operator (`+=`, `<<=`, `⊕=`...).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AssignOp {
    Set,
    Compound(BinOp),
}

#[derive(Clone, Debug, PartialEq)]
pub enum StmtKind {
    /// `TYPE name;` or `TYPE name = e;`
    Decl {
        ty: TypeName,
        name: Ident,
        init: Option<Expr>,
    },
    /// `lv = e;` and compound assignments.
    Assign {
        target: LValue,
        op: AssignOp,
        value: Expr,
    },
    /// `lv++;` (`decrement == false`) or `lv--;`
    Step {
        target: LValue,
        decrement: bool,
    },
    /// `if (c) s`, `if (c) s else t`, and a whole `else if` chain
    /// `if (c1) s1 else if (c2) s2 ... [else t]` as one statement. The arms of a chain are
    /// a list, not nested `if`s in `else` branches, so that a chain of any length (C code
    /// has chains of thousands) is no deeper than one `if` for the parser, the checker,
    /// the printers and `Drop`. `els` is never itself an `if` (that is another arm).
    If {
        /// At least one.
        arms: Vec<IfArm>,
        els: Option<Box<Stmt>>,
    },
    While {
        cond: Expr,
        body: Box<Stmt>,
    },
    /// `for (init; cond; step) body`; desugared to the core `while`.
    For {
        init: Option<Box<Stmt>>,
        cond: Option<Expr>,
        step: Option<Box<Stmt>>,
        body: Box<Stmt>,
    },
    Block(Block),
    /// `barrier();` / `barrier;` (both spaces), `barrier(local);`, `barrier(global);`,
    /// `barrier(local | global);`
    Barrier(Fence),
    /// `barrier(x);` with `x` an integer variable: OpenCL's fence flags computed at run
    /// time. Each thread's fence is the value of `x` when the barrier fires, read as
    /// `cl_mem_fence_flags` bits (1 `local`, 2 `global`).
    BarrierFlags(Expr),
    /// A call as a statement: `atomic_inc(A[i]);` (only atomics have an effect).
    Call(Expr),
}

/// One arm of an `if` / `else if` chain: `if (cond) then`.
#[derive(Clone, Debug, PartialEq)]
pub struct IfArm {
    pub cond: Expr,
    pub then: Stmt,
    /// From the arm's `if` to the end of its `then` statement.
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum UnOp {
    /// `-e`
    Neg,
    /// `!e`
    Not,
    /// `~e`
    BitNot,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum BinOp {
    Mul,
    Div,
    Rem,
    Add,
    Sub,
    Shl,
    Shr,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    BitAnd,
    BitXor,
    BitOr,
    LogAnd,
    LogOr,
    /// The monoid operator `⊕` (ASCII `<+>`), on the generic type only.
    Combine,
}

impl BinOp {
    /// The C spelling (`⊕` for the monoid operator).
    pub fn symbol(self) -> &'static str {
        use BinOp::*;
        match self {
            Mul => "*",
            Div => "/",
            Rem => "%",
            Add => "+",
            Sub => "-",
            Shl => "<<",
            Shr => ">>",
            Lt => "<",
            Le => "<=",
            Gt => ">",
            Ge => ">=",
            Eq => "==",
            Ne => "!=",
            BitAnd => "&",
            BitXor => "^",
            BitOr => "|",
            LogAnd => "&&",
            LogOr => "||",
            Combine => "⊕",
        }
    }

    /// C precedence, higher binds tighter; `⊕` sits with the additive operators.
    pub fn precedence(self) -> u8 {
        use BinOp::*;
        match self {
            Mul | Div | Rem => 10,
            Add | Sub | Combine => 9,
            Shl | Shr => 8,
            Lt | Le | Gt | Ge => 7,
            Eq | Ne => 6,
            BitAnd => 5,
            BitXor => 4,
            BitOr => 3,
            LogAnd => 2,
            LogOr => 1,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    /// An integer literal; `unsigned` when written with a `u` suffix.
    Int {
        value: u64,
        unsigned: bool,
    },
    /// A float literal (`1.5`, `2.0f`).
    Float(f32),
    /// A `double` literal (OpenCL C's unsuffixed `1.5`; `.ksim` has none).
    Double(f64),
    Bool(bool),
    /// The monoid identity `1_T` (Definition 4.1's 1_X).
    Identity,
    /// A variable, size parameter, scalar parameter or builtin (`tid`, ...).
    Name(String),
    /// `A[e]` or `A[e1][e2]`.
    Index {
        array: Ident,
        indices: Vec<Expr>,
    },
    Unary(UnOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `c ? a : b`
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
    /// `(int) e`, `(uint) e`, `(float) e`
    Cast(TypeName, Box<Expr>),
    /// A builtin function call: `log2(e)`, `min(a, b)`, `max(a, b)`, `get_local_id(0)`, ...
    Call {
        func: Ident,
        args: Vec<Expr>,
    },
}

/// An expression at `span` (for the front ends that lower into this tree).
pub(crate) fn ex(kind: ExprKind, span: &Span) -> Expr {
    Expr {
        kind,
        span: span.clone(),
    }
}

/// A statement at `span`.
pub(crate) fn st(kind: StmtKind, span: &Span) -> Stmt {
    Stmt {
        kind,
        span: span.clone(),
    }
}

/// An identifier at `span`.
pub(crate) fn ident(name: &str, span: &Span) -> Ident {
    Ident {
        name: name.to_string(),
        span: span.clone(),
    }
}

/// `var = value;` at `span`.
pub(crate) fn set(var: &str, value: Expr, span: &Span) -> Stmt {
    st(
        StmtKind::Assign {
            target: LValue::Var(ident(var, span)),
            op: AssignOp::Set,
            value,
        },
        span,
    )
}
