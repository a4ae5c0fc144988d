//! The core form: the paper's Figure 4 language (plus `barrier`), typed and resolved.
//!
//! Every engine (the reference semantics, the fast executor, the OpenCL code generator) runs
//! this form, never the surface syntax. Declarations, `for`, compound assignments and `x++`
//! are desugared away; names are resolved to slots; every implicit conversion is an explicit
//! [`ExprKind::Cast`], so both operands of a binary operator have the same type. Statements
//! live in numbered blocks so that a thread's continuation is a small stack of
//! `(block, index)` pairs that can be hashed and compared.

use crate::ast::{BinOp, Space, Span, UnOp};
use serde::Serialize;

/// A value type of the core language.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum Ty {
    /// 32-bit two's complement, wrapping.
    Int,
    /// 32-bit unsigned, wrapping.
    Uint,
    Bool,
    /// IEEE binary32.
    Float,
    /// The generic monoid type 𝕊_X, instantiated at launch by a monoid.
    Generic,
}

impl Ty {
    pub fn name(self) -> &'static str {
        match self {
            Ty::Int => "int",
            Ty::Uint => "uint",
            Ty::Bool => "bool",
            Ty::Float => "float",
            Ty::Generic => "T",
        }
    }
}

pub type VarId = usize;
pub type ArrayId = usize;
pub type ParamId = usize;
pub type BlockId = usize;

/// A typed, resolved kernel.
#[derive(Clone, Debug, Serialize)]
pub struct Kernel {
    pub name: String,
    /// Launch parameters bound with `-D name=value`: size parameters (free names in array
    /// sizes and launch defaults, type `int`) and scalar parameters.
    pub params: Vec<ParamDecl>,
    pub arrays: Vec<ArrayDecl>,
    /// Thread-local variables, one slot each; every thread starts with each at its type's
    /// default (see [`Ty`] defaults in the interpreter).
    pub vars: Vec<VarDecl>,
    /// `blocks[0]` is the kernel body.
    pub blocks: Vec<Vec<Stmt>>,
    /// Default number of work-groups, if declared; an expression over parameters.
    pub groups: Option<Expr>,
    /// Default work-group size, if declared; an expression over parameters.
    pub local_size: Option<Expr>,
    /// Whether the kernel mentions the generic type `T` anywhere.
    pub generic: bool,
}

impl Kernel {
    pub const BODY: BlockId = 0;

    pub fn array(&self, name: &str) -> Option<ArrayId> {
        self.arrays.iter().position(|a| a.name == name)
    }

    pub fn param(&self, name: &str) -> Option<ParamId> {
        self.params.iter().position(|p| p.name == name)
    }

    /// The `if` statement that is the whole of block `b`, if it is one. An `else` block of
    /// this shape is an `else if` of the source: printers and compilers continue the chain
    /// in a loop rather than by recursion, so that thousands of `else if` arms neither
    /// exhaust the stack nor nest their output.
    pub fn else_if(&self, b: BlockId) -> Option<&Stmt> {
        match self.blocks[b].as_slice() {
            [s @ Stmt {
                kind: StmtKind::If { .. },
                ..
            }] => Some(s),
            _ => None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum ParamKind {
    /// Used in array sizes or launch defaults.
    Size,
    /// Declared as a scalar kernel parameter.
    Scalar,
}

#[derive(Clone, Debug, Serialize)]
pub struct ParamDecl {
    pub name: String,
    pub ty: Ty,
    pub kind: ParamKind,
    pub span: Span,
}

#[derive(Clone, Debug, Serialize)]
pub struct ArrayDecl {
    pub name: String,
    pub elem: Ty,
    pub space: Space,
    pub is_const: bool,
    /// One expression per dimension (1 or 2), over parameters only; row-major.
    pub dims: Vec<Expr>,
    pub span: Span,
}

#[derive(Clone, Debug, Serialize)]
pub struct VarDecl {
    pub name: String,
    pub ty: Ty,
    pub span: Span,
}

#[derive(Clone, Debug, Serialize)]
pub struct Stmt {
    pub kind: StmtKind,
    /// The source statement this came from (for a desugared `for`, the part it came from).
    pub span: Span,
}

#[derive(Clone, Debug, Serialize)]
pub enum StmtKind {
    /// `v := e` (S-ASSIGN).
    Assign { var: VarId, value: Expr },
    /// `A[e1] := e2` (S-ARRAY); two indices for a 2D array.
    Store {
        array: ArrayId,
        index: Vec<Expr>,
        value: Expr,
    },
    /// `if (e) {ss1} else {ss2}` (S-ITE-T / S-ITE-F).
    If {
        cond: Expr,
        then: BlockId,
        els: BlockId,
    },
    /// `while (e) {ss}` (S-LOOP-T / S-LOOP-F).
    While { cond: Expr, body: BlockId },
    /// `barrier` (K-BARRIER).
    Barrier,
}

#[derive(Clone, Debug, Serialize)]
pub struct Expr {
    pub kind: ExprKind,
    pub ty: Ty,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum Builtin {
    /// `tid`: the local id within the work-group (the paper's name).
    LocalId,
    /// `gid`: `group_id * local_size + tid`.
    GlobalId,
    GroupId,
    LocalSize,
    NumGroups,
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub enum Lit {
    Int(i32),
    Uint(u32),
    Bool(bool),
    Float(f32),
}

#[derive(Clone, Debug, Serialize)]
pub enum ExprKind {
    Lit(Lit),
    /// The monoid identity 1_X.
    Identity,
    Var(VarId),
    Param(ParamId),
    Builtin(Builtin),
    /// `A[e]` / `A[e1][e2]`.
    Load {
        array: ArrayId,
        index: Vec<Expr>,
    },
    /// Operand and result have the expression's type (`!` works on `bool`).
    Unary(UnOp, Box<Expr>),
    /// Both operands have the same type (the checker inserts casts); comparisons give
    /// `bool`; `&&`/`||` take `bool` and short-circuit; `Combine` is ⊕ on `T`.
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `c ? a : b`; only the chosen branch is evaluated.
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
    /// Conversion to the expression's type (C semantics; `x != 0` for conversion to bool).
    Cast(Box<Expr>),
    /// `log2(e)`: floor of the base-2 logarithm of a positive integer.
    Log2(Box<Expr>),
    /// `min(a, b)` / `max(a, b)` on `int`, `uint` or `float`.
    Min(Box<Expr>, Box<Expr>),
    Max(Box<Expr>, Box<Expr>),
}
