//! A small builder for typed core kernels ([`lang::core::Kernel`]) written in Rust: used
//! by the built-in multi-work-group scan pipeline ([`crate::scan`]) and by tests, so
//! that neither depends on the surface parser. It inserts no casts: operands must
//! already have the same type, as the type checker would guarantee.

use lang::ast::{BinOp, Space, UnOp};
use lang::core::{
    ArrayDecl, ArrayId, BlockId, Builtin, Expr, ExprKind, Fence, Kernel, Lit, ParamDecl, ParamKind,
    Stmt, StmtKind, Ty, VarDecl, VarId,
};

fn mk(kind: ExprKind, ty: Ty) -> Expr {
    Expr {
        kind,
        ty,
        span: 0..0,
    }
}

/// An `int` literal.
pub fn int(v: i32) -> Expr {
    mk(ExprKind::Lit(Lit::Int(v)), Ty::Int)
}

pub fn uint(v: u32) -> Expr {
    mk(ExprKind::Lit(Lit::Uint(v)), Ty::Uint)
}

pub fn float(v: f32) -> Expr {
    mk(ExprKind::Lit(Lit::Float(v)), Ty::Float)
}

pub fn boolean(v: bool) -> Expr {
    mk(ExprKind::Lit(Lit::Bool(v)), Ty::Bool)
}

/// The monoid identity (type `T`).
pub fn identity() -> Expr {
    mk(ExprKind::Identity, Ty::Generic)
}

pub fn tid() -> Expr {
    mk(ExprKind::Builtin(Builtin::LocalId), Ty::Int)
}

pub fn gid() -> Expr {
    mk(ExprKind::Builtin(Builtin::GlobalId), Ty::Int)
}

pub fn group_id() -> Expr {
    mk(ExprKind::Builtin(Builtin::GroupId), Ty::Int)
}

pub fn local_size() -> Expr {
    mk(ExprKind::Builtin(Builtin::LocalSize), Ty::Int)
}

/// A binary operator; comparisons and `&&`/`||` give `bool`, others the left type.
pub fn bin(op: BinOp, a: Expr, b: Expr) -> Expr {
    use BinOp::*;
    let ty = match op {
        Lt | Le | Gt | Ge | Eq | Ne | LogAnd | LogOr => Ty::Bool,
        _ => a.ty,
    };
    mk(ExprKind::Binary(op, Box::new(a), Box::new(b)), ty)
}

pub fn add(a: Expr, b: Expr) -> Expr {
    bin(BinOp::Add, a, b)
}
pub fn sub(a: Expr, b: Expr) -> Expr {
    bin(BinOp::Sub, a, b)
}
pub fn mul(a: Expr, b: Expr) -> Expr {
    bin(BinOp::Mul, a, b)
}
pub fn div(a: Expr, b: Expr) -> Expr {
    bin(BinOp::Div, a, b)
}
pub fn lt(a: Expr, b: Expr) -> Expr {
    bin(BinOp::Lt, a, b)
}
pub fn le(a: Expr, b: Expr) -> Expr {
    bin(BinOp::Le, a, b)
}
pub fn gt(a: Expr, b: Expr) -> Expr {
    bin(BinOp::Gt, a, b)
}
pub fn eq(a: Expr, b: Expr) -> Expr {
    bin(BinOp::Eq, a, b)
}
/// `a ⊕ b`.
pub fn combine(a: Expr, b: Expr) -> Expr {
    bin(BinOp::Combine, a, b)
}

pub fn unary(op: UnOp, a: Expr) -> Expr {
    let ty = if op == UnOp::Not { Ty::Bool } else { a.ty };
    mk(ExprKind::Unary(op, Box::new(a)), ty)
}

pub fn cast(ty: Ty, a: Expr) -> Expr {
    mk(ExprKind::Cast(Box::new(a)), ty)
}

pub fn cond(c: Expr, a: Expr, b: Expr) -> Expr {
    let ty = a.ty;
    mk(ExprKind::Cond(Box::new(c), Box::new(a), Box::new(b)), ty)
}

pub fn log2(a: Expr) -> Expr {
    mk(ExprKind::Log2(Box::new(a)), Ty::Int)
}

pub fn min(a: Expr, b: Expr) -> Expr {
    let ty = a.ty;
    mk(ExprKind::Min(Box::new(a), Box::new(b)), ty)
}

pub fn max(a: Expr, b: Expr) -> Expr {
    let ty = a.ty;
    mk(ExprKind::Max(Box::new(a), Box::new(b)), ty)
}

/// A kernel under construction. Statements go to the current block; [`KernelBuilder::if_`]
/// and [`KernelBuilder::while_`] take closures that fill nested blocks.
pub struct KernelBuilder {
    k: Kernel,
    current: BlockId,
}

impl KernelBuilder {
    pub fn new(name: &str) -> Self {
        KernelBuilder {
            k: Kernel {
                name: name.to_string(),
                params: Vec::new(),
                arrays: Vec::new(),
                vars: Vec::new(),
                blocks: vec![Vec::new()],
                groups: None,
                local_size: None,
                groups_more: Vec::new(),
                local_size_more: Vec::new(),
                generic: false,
            },
            current: Kernel::BODY,
        }
    }

    /// A size parameter (`int`).
    pub fn size_param(&mut self, name: &str) -> Expr {
        self.param(name, Ty::Int, ParamKind::Size)
    }

    pub fn param(&mut self, name: &str, ty: Ty, kind: ParamKind) -> Expr {
        self.k.params.push(ParamDecl {
            name: name.to_string(),
            ty,
            kind,
            span: 0..0,
        });
        mk(ExprKind::Param(self.k.params.len() - 1), ty)
    }

    pub fn array(
        &mut self,
        name: &str,
        elem: Ty,
        space: Space,
        is_const: bool,
        dims: Vec<Expr>,
    ) -> ArrayId {
        if elem == Ty::Generic {
            self.k.generic = true;
        }
        self.k.arrays.push(ArrayDecl {
            name: name.to_string(),
            elem,
            space,
            is_const,
            dims,
            span: 0..0,
            lanes: 1,
            byte_elem: None,
        });
        self.k.arrays.len() - 1
    }

    /// Declares a thread-private variable (starts at its type's default).
    pub fn var(&mut self, name: &str, ty: Ty) -> VarId {
        if ty == Ty::Generic {
            self.k.generic = true;
        }
        self.k.vars.push(VarDecl {
            name: name.to_string(),
            ty,
            span: 0..0,
            fresh_in: None,
        });
        self.k.vars.len() - 1
    }

    /// Reads variable `v`.
    pub fn get(&self, v: VarId) -> Expr {
        mk(ExprKind::Var(v), self.k.vars[v].ty)
    }

    /// `A[index...]`.
    pub fn load(&mut self, a: ArrayId, index: Vec<Expr>) -> Expr {
        let ty = self.k.arrays[a].elem;
        if ty == Ty::Generic {
            self.k.generic = true;
        }
        mk(ExprKind::Load { array: a, index }, ty)
    }

    pub fn launch(&mut self, groups: Option<Expr>, local_size: Option<Expr>) {
        self.k.groups = groups;
        self.k.local_size = local_size;
    }

    fn push(&mut self, kind: StmtKind) {
        self.k.blocks[self.current].push(Stmt { kind, span: 0..0 });
    }

    pub fn assign(&mut self, v: VarId, value: Expr) {
        self.push(StmtKind::Assign { var: v, value });
    }

    /// Declares a variable and assigns it (`TYPE name = value;`).
    pub fn let_(&mut self, name: &str, value: Expr) -> VarId {
        let v = self.var(name, value.ty);
        self.assign(v, value);
        v
    }

    pub fn store(&mut self, a: ArrayId, index: Vec<Expr>, value: Expr) {
        self.push(StmtKind::Store {
            array: a,
            index,
            value,
        });
    }

    /// `barrier()`: orders both memory spaces.
    pub fn barrier(&mut self) {
        self.push(StmtKind::Barrier {
            fence: Fence::BOTH,
            flags: None,
        });
    }

    fn nested(&mut self, f: impl FnOnce(&mut Self)) -> BlockId {
        self.k.blocks.push(Vec::new());
        let id = self.k.blocks.len() - 1;
        let saved = std::mem::replace(&mut self.current, id);
        f(self);
        self.current = saved;
        id
    }

    pub fn if_(&mut self, c: Expr, then: impl FnOnce(&mut Self)) {
        self.if_else(c, then, |_| {});
    }

    pub fn if_else(&mut self, c: Expr, then: impl FnOnce(&mut Self), els: impl FnOnce(&mut Self)) {
        let t = self.nested(then);
        let e = self.nested(els);
        self.push(StmtKind::If {
            cond: c,
            then: t,
            els: e,
        });
    }

    pub fn while_(&mut self, c: Expr, body: impl FnOnce(&mut Self)) {
        let b = self.nested(body);
        self.push(StmtKind::While { cond: c, body: b });
    }

    pub fn finish(self) -> Kernel {
        self.k
    }
}
