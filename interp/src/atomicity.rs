//! Atomicity of a thread step (`--atomicity`).
//!
//! `statement` (the default) is the paper's rule set: every statement is one step, so
//! `x[0] = x[0] + 1` reads and writes the element indivisibly. `access` is the hardware's
//! granularity: each read and each write of shared memory (`local` and `global` arrays) is
//! its own step, so two threads can both read `x[0]` before either writes it and an update
//! is lost.
//!
//! `access` is a core-to-core transformation ([`split_accesses`]) applied to the kernel once
//! when the launch is bound ([`Launch::set_atomicity`]), not a second rule set inside the
//! semantics: a statement that touches shared memory more than once is lowered into a
//! sequence of core statements through fresh private temporaries (`t := x[0]; x[0] := t +
//! 1`), so that every statement of the result touches shared memory at most once. Then the
//! paper's rules, unchanged, give access atomicity, and the reference semantics, the fast
//! executor and the explorer all run the same program: they agree by construction, and
//! partial-order reduction stays sound because the dependence relation is still the
//! accesses of the steps. A temporary is written only by its own thread, so the extra steps
//! are private computation and add no race: the races are the same set in both models,
//! while the final stores under `access` are a superset of those under `statement`.
//!
//! The split steps keep the span of the statement they came from. A step that reads an
//! element into a temporary is rule S-READ in traces ([`crate::reference::Rule::SRead`]);
//! temporaries have names no source identifier can have ([`TEMP_PREFIX`]) and outputs leave
//! them out ([`is_temporary`]).

use crate::launch::Launch;
use lang::ast::{BinOp, Span};
use lang::core::{BlockId, Expr, ExprKind, Kernel, Stmt, StmtKind, Ty, VarDecl, VarId};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// What one thread step executes (`--atomicity`).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Atomicity {
    /// The paper's rules: one statement per step.
    #[default]
    Statement,
    /// One shared-memory access per step; private computation is silent.
    Access,
}

impl Atomicity {
    /// The name on the command line and in outputs.
    pub fn name(self) -> &'static str {
        match self {
            Atomicity::Statement => "statement",
            Atomicity::Access => "access",
        }
    }

    /// Parses a name of [`Atomicity::name`].
    pub fn parse(s: &str) -> Result<Atomicity, String> {
        match s {
            "statement" => Ok(Atomicity::Statement),
            "access" => Ok(Atomicity::Access),
            _ => Err(format!(
                "unknown atomicity `{s}` (expected statement or access)"
            )),
        }
    }
}

impl Launch {
    /// Runs the launch under `atomicity`: under `access` the kernel is replaced by its
    /// [`split_accesses`] form (once; setting it again changes nothing).
    pub fn set_atomicity(&mut self, atomicity: Atomicity) {
        if atomicity == Atomicity::Access && self.atomicity == Atomicity::Statement {
            self.kernel = Arc::new(split_accesses(&self.kernel));
        }
        self.atomicity = atomicity;
    }
}

/// The prefix of the temporaries' names: `%` starts no identifier of `.ksim` or OpenCL C.
pub const TEMP_PREFIX: &str = "%";

/// Whether `var` is a temporary of [`split_accesses`], not a variable of the source.
pub fn is_temporary(kernel: &Kernel, var: VarId) -> bool {
    kernel.vars[var].name.starts_with(TEMP_PREFIX)
}

/// The kernel with every statement that accesses shared memory more than once split into
/// statements that access it at most once each, in the order the statement evaluates them
/// (indices before the element, the stored element's index before its value, operands left
/// to right). Loads under `&&`, `||` and `?:` stay conditional: they move into an `if` on
/// the already evaluated operand, so a load the statement would not evaluate is still not
/// evaluated (and cannot fault). A `while` whose condition is split evaluates the split
/// prefix before the loop and again at the end of its body (the core form has no `break`
/// or `continue`, so the end of the body is the only way back to the condition). The one
/// reordering: S-ARRAY bounds-checks its element before evaluating the value, while the
/// split value's reads come first (docs/semantics.md, "Atomicity").
pub fn split_accesses(kernel: &Kernel) -> Kernel {
    let mut k = kernel.clone();
    let mut split = Splitter {
        vars: std::mem::take(&mut k.vars),
        blocks: Vec::new(),
        next_block: kernel.blocks.len(),
    };
    let mut appends: Vec<(BlockId, Vec<Stmt>)> = Vec::new();
    for b in 0..kernel.blocks.len() {
        let mut out = Vec::with_capacity(kernel.blocks[b].len());
        for s in &kernel.blocks[b] {
            if accesses(s) < 2 {
                out.push(s.clone());
                continue;
            }
            let span = &s.span;
            let kind = match &s.kind {
                StmtKind::Assign { var, value } => StmtKind::Assign {
                    var: *var,
                    value: split.expr(value, &mut out, span),
                },
                StmtKind::Store {
                    array,
                    index,
                    value,
                } => {
                    let index = split.exprs(index, &mut out, span);
                    StmtKind::Store {
                        array: *array,
                        index,
                        value: split.expr(value, &mut out, span),
                    }
                }
                StmtKind::StoreAt { ptr, value } => {
                    let ptr = split.expr(ptr, &mut out, span);
                    StmtKind::StoreAt {
                        ptr,
                        value: split.expr(value, &mut out, span),
                    }
                }
                StmtKind::Atomic {
                    op,
                    array,
                    index,
                    args,
                    result,
                } => {
                    let index = split.exprs(index, &mut out, span);
                    StmtKind::Atomic {
                        op: *op,
                        array: *array,
                        index,
                        args: split.exprs(args, &mut out, span),
                        result: *result,
                    }
                }
                StmtKind::If { cond, then, els } => StmtKind::If {
                    cond: split.expr(cond, &mut out, span),
                    then: *then,
                    els: *els,
                },
                StmtKind::While { cond, body } => {
                    let start = out.len();
                    let cond = split.expr(cond, &mut out, span);
                    appends.push((*body, out[start..].to_vec()));
                    StmtKind::While { cond, body: *body }
                }
                StmtKind::Barrier { .. } | StmtKind::Check { .. } | StmtKind::Perm { .. } => {
                    unreachable!("barriers and annotations access no array")
                }
            };
            out.push(Stmt {
                kind,
                span: span.clone(),
            });
        }
        k.blocks[b] = out;
    }
    k.blocks.append(&mut split.blocks);
    for (b, stmts) in appends {
        k.blocks[b].extend(stmts);
    }
    k.vars = split.vars;
    k
}

/// Shared-memory accesses of one execution of `s` (at most: loads under `&&`, `||` and
/// `?:` are counted whether or not they are evaluated).
fn accesses(s: &Stmt) -> usize {
    let all = |es: &[Expr]| es.iter().map(loads).sum::<usize>();
    match &s.kind {
        StmtKind::Assign { value, .. } => loads(value),
        StmtKind::Store { index, value, .. } => all(index) + loads(value) + 1,
        StmtKind::StoreAt { ptr, value } => loads(ptr) + loads(value) + 1,
        StmtKind::Atomic { index, args, .. } => all(index) + all(args) + 1,
        StmtKind::If { cond, .. } | StmtKind::While { cond, .. } => loads(cond),
        // An annotation's reads are not accesses: it stays one step.
        StmtKind::Barrier { .. } | StmtKind::Check { .. } | StmtKind::Perm { .. } => 0,
    }
}

/// The loads in `e`.
fn loads(e: &Expr) -> usize {
    match &e.kind {
        ExprKind::Lit(_)
        | ExprKind::Identity
        | ExprKind::Var(_)
        | ExprKind::Param(_)
        | ExprKind::Builtin(_)
        | ExprKind::Null => 0,
        ExprKind::Load { index, .. } => 1 + index.iter().map(loads).sum::<usize>(),
        ExprKind::Deref(p) => 1 + loads(p),
        ExprKind::Unary(_, a)
        | ExprKind::Cast(a)
        | ExprKind::Bits(a)
        | ExprKind::Log2(a)
        | ExprKind::Addr { offset: a, .. } => loads(a),
        ExprKind::Binary(_, a, b)
        | ExprKind::Min(a, b)
        | ExprKind::Max(a, b)
        | ExprKind::PtrAdd(a, b) => loads(a) + loads(b),
        ExprKind::Math(_, args) | ExprKind::IntFn(_, args) => args.iter().map(loads).sum(),
        ExprKind::Cond(c, a, b) => loads(c) + loads(a) + loads(b),
    }
}

/// The state of [`split_accesses`]: the variables (temporaries appended) and the blocks
/// it creates for conditional loads, numbered from `next_block`.
struct Splitter {
    vars: Vec<VarDecl>,
    blocks: Vec<Vec<Stmt>>,
    next_block: BlockId,
}

impl Splitter {
    fn temp(&mut self, ty: Ty, span: &Span) -> VarId {
        self.vars.push(VarDecl {
            name: format!("{TEMP_PREFIX}t{}", self.vars.len()),
            ty,
            span: span.clone(),
            fresh_in: None,
        });
        self.vars.len() - 1
    }

    fn block(&mut self, stmts: Vec<Stmt>) -> BlockId {
        self.blocks.push(stmts);
        self.next_block += 1;
        self.next_block - 1
    }

    fn exprs(&mut self, es: &[Expr], out: &mut Vec<Stmt>, span: &Span) -> Vec<Expr> {
        es.iter().map(|e| self.expr(e, out, span)).collect()
    }

    /// `e` with every load replaced by a temporary read by a statement appended to `out`.
    fn expr(&mut self, e: &Expr, out: &mut Vec<Stmt>, span: &Span) -> Expr {
        let stmt = |kind| Stmt {
            kind,
            span: span.clone(),
        };
        let var = |v: VarId, ty: Ty| Expr {
            kind: ExprKind::Var(v),
            ty,
            span: e.span.clone(),
        };
        let kind = match &e.kind {
            ExprKind::Lit(_)
            | ExprKind::Identity
            | ExprKind::Var(_)
            | ExprKind::Param(_)
            | ExprKind::Builtin(_)
            | ExprKind::Null => return e.clone(),
            ExprKind::Deref(p) => {
                let p = self.expr(p, out, span);
                let t = self.temp(e.ty, span);
                out.push(stmt(StmtKind::Assign {
                    var: t,
                    value: Expr {
                        kind: ExprKind::Deref(Box::new(p)),
                        ty: e.ty,
                        span: e.span.clone(),
                    },
                }));
                return var(t, e.ty);
            }
            ExprKind::Addr { array, offset } => ExprKind::Addr {
                array: *array,
                offset: Box::new(self.expr(offset, out, span)),
            },
            ExprKind::PtrAdd(a, b) => {
                let a = self.expr(a, out, span);
                ExprKind::PtrAdd(Box::new(a), Box::new(self.expr(b, out, span)))
            }
            ExprKind::Load { array, index } => {
                let index = self.exprs(index, out, span);
                let t = self.temp(e.ty, span);
                out.push(stmt(StmtKind::Assign {
                    var: t,
                    value: Expr {
                        kind: ExprKind::Load {
                            array: *array,
                            index,
                        },
                        ty: e.ty,
                        span: e.span.clone(),
                    },
                }));
                return var(t, e.ty);
            }
            ExprKind::Binary(op @ (BinOp::LogAnd | BinOp::LogOr), a, b) if loads(b) > 0 => {
                // t := a; if (t) { t := b }  (for ||: the `else` arm)
                let a = self.expr(a, out, span);
                let t = self.temp(e.ty, span);
                out.push(stmt(StmtKind::Assign { var: t, value: a }));
                let mut rhs = Vec::new();
                let b = self.expr(b, &mut rhs, span);
                rhs.push(stmt(StmtKind::Assign { var: t, value: b }));
                let (then, els) = if *op == BinOp::LogAnd {
                    (self.block(rhs), self.block(Vec::new()))
                } else {
                    (self.block(Vec::new()), self.block(rhs))
                };
                out.push(stmt(StmtKind::If {
                    cond: var(t, e.ty),
                    then,
                    els,
                }));
                return var(t, e.ty);
            }
            ExprKind::Cond(c, a, b) if loads(a) + loads(b) > 0 => {
                // t := c ? a : b  as  if (c) { t := a } else { t := b }
                let c = self.expr(c, out, span);
                let t = self.temp(e.ty, span);
                let arm = |x: &Expr, me: &mut Splitter| {
                    let mut stmts = Vec::new();
                    let x = me.expr(x, &mut stmts, span);
                    stmts.push(stmt(StmtKind::Assign { var: t, value: x }));
                    me.block(stmts)
                };
                let then = arm(a, self);
                let els = arm(b, self);
                out.push(stmt(StmtKind::If { cond: c, then, els }));
                return var(t, e.ty);
            }
            ExprKind::Unary(op, a) => ExprKind::Unary(*op, Box::new(self.expr(a, out, span))),
            ExprKind::Cast(a) => ExprKind::Cast(Box::new(self.expr(a, out, span))),
            ExprKind::Bits(a) => ExprKind::Bits(Box::new(self.expr(a, out, span))),
            ExprKind::Log2(a) => ExprKind::Log2(Box::new(self.expr(a, out, span))),
            ExprKind::Binary(op, a, b) => {
                let a = self.expr(a, out, span);
                ExprKind::Binary(*op, Box::new(a), Box::new(self.expr(b, out, span)))
            }
            ExprKind::Min(a, b) => {
                let a = self.expr(a, out, span);
                ExprKind::Min(Box::new(a), Box::new(self.expr(b, out, span)))
            }
            ExprKind::Max(a, b) => {
                let a = self.expr(a, out, span);
                ExprKind::Max(Box::new(a), Box::new(self.expr(b, out, span)))
            }
            ExprKind::Math(f, args) => {
                ExprKind::Math(*f, args.iter().map(|a| self.expr(a, out, span)).collect())
            }
            ExprKind::IntFn(f, args) => {
                ExprKind::IntFn(*f, args.iter().map(|a| self.expr(a, out, span)).collect())
            }
            ExprKind::Cond(c, a, b) => {
                let c = self.expr(c, out, span);
                ExprKind::Cond(
                    Box::new(c),
                    Box::new((**a).clone()),
                    Box::new((**b).clone()),
                )
            }
        };
        Expr {
            kind,
            ty: e.ty,
            span: e.span.clone(),
        }
    }
}
