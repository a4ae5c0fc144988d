//! One PVL method → ksim's surface tree ([`crate::ast::Kernel`]), which the checker turns
//! into the core form every engine runs.
//!
//! A method whose body is a `par` block is a kernel: each thread of the block is a
//! work-item (`t = lo + get_local_id(d)`, one dimension per iterator); when the block's
//! body is itself one `par` block, the outer block's threads are the work-groups and the
//! inner block's the work-items of each. A `barrier` of the (inner) block is a
//! work-group barrier. `int[] a` parameters are global arrays, `int` parameters launch
//! parameters (`-D N=8`).
//!
//! Specifications become the core's checked annotations (S-ASSERT), where they hold:
//! - the method's `requires` (and `context`, `context_everywhere`): checked by the first
//!   work-item before a barrier that starts the kernel (a violation blames the launch's
//!   inputs); its `ensures` after a barrier that ends it. Only for a one-group launch:
//!   work-groups cannot wait for each other.
//! - a `par` block's `requires` at each thread's start, `ensures` at its end;
//! - a barrier's `requires` before it, `ensures` after it; `context` as both;
//! - `loop_invariant` before the loop and after each iteration (each arrival at its head);
//! - `assert`, `assume` where they stand.
//!
//! `\forall`/`\exists` over a bounded range become loops (the bounds are read from the
//! condition: `lo <= i && i < hi`); a top-level `\forall` checks its body inside the loop,
//! so that a violation shows the value of the bound variable. `\old(e)` in an `ensures` is
//! `e` saved when the block (or method) starts. Permissions (`Perm`, `PointsTo`, `Value`,
//! `\forall*` over them) move between the caller, the threads and the barriers, and every
//! access is checked against them: see [`perm`].

use super::ast::*;
use crate::ast::{self as k, ex, ident, set, st};
use crate::core::{Annotation, PermOp};
use crate::diag::Diagnostic;
use std::collections::HashMap;

mod call;
mod host;
mod perm;

/// A remark about what the lowering did not check.
#[derive(Clone, Debug)]
pub struct Note {
    pub span: Span,
    pub text: String,
}

/// A lowered method.
#[derive(Clone, Debug)]
pub struct Lowered {
    pub kernel: k::Kernel,
    pub notes: Vec<Note>,
    /// Whether some clause holds permissions (which are then checked).
    pub permissions: bool,
}

/// Why a clause or expression cannot be lowered.
enum Fail {
    /// The program is refused.
    Error(Diagnostic),
    /// The clause is not checked, for this reason (a note says so).
    Skip(String),
}

impl From<Diagnostic> for Fail {
    fn from(d: Diagnostic) -> Fail {
        Fail::Error(d)
    }
}

type Res<T> = Result<T, Fail>;

/// A method's `context_everywhere` clauses, which hold at every method, block and loop
/// boundary.
fn context_everywhere(m: &Method) -> Vec<Clause> {
    (m.contract.iter())
        .filter(|c| {
            matches!(
                c,
                Clause::Spec {
                    kind: ClauseKind::ContextEverywhere,
                    ..
                }
            )
        })
        .cloned()
        .collect()
}

fn err<T>(msg: impl Into<String>, span: &Span) -> Res<T> {
    Err(Fail::Error(Diagnostic::new(msg, span.clone())))
}

fn int(v: u64, span: &Span) -> k::Expr {
    ex(
        k::ExprKind::Int {
            value: v,
            unsigned: false,
        },
        span,
    )
}

fn bin(op: BinOp, a: k::Expr, b: k::Expr, span: &Span) -> k::Expr {
    ex(k::ExprKind::Binary(op, Box::new(a), Box::new(b)), span)
}

fn not(a: k::Expr) -> k::Expr {
    let span = a.span.clone();
    ex(k::ExprKind::Unary(UnOp::Not, Box::new(a)), &span)
}

fn name(n: &str, span: &Span) -> k::Expr {
    ex(k::ExprKind::Name(n.to_string()), span)
}

/// A PVL name as a ksim name: one that ksim reserves (the builtins `tid`, `gid`, ...,
/// keywords such as `local`) gets a trailing `_`.
fn rn(n: &str) -> String {
    const BUILTINS: [&str; 5] = ["tid", "gid", "group_id", "local_size", "num_groups"];
    if BUILTINS.contains(&n) || crate::parse::is_reserved_word(n) {
        format!("{n}_")
    } else {
        n.to_string()
    }
}

/// [`rn`] of an identifier.
fn rident(i: &Ident) -> k::Ident {
    ident(&rn(&i.name), &i.span)
}

fn block(stmts: Vec<k::Stmt>, span: &Span) -> k::Stmt {
    st(
        k::StmtKind::Block(k::Block {
            stmts,
            span: span.clone(),
        }),
        span,
    )
}

fn if_(cond: k::Expr, then: Vec<k::Stmt>, span: &Span) -> k::Stmt {
    st(
        k::StmtKind::If {
            arms: vec![k::IfArm {
                cond,
                then: block(then, span),
                span: span.clone(),
            }],
            els: None,
        },
        span,
    )
}

fn decl(ty: k::TypeName, var: &str, init: k::Expr, span: &Span) -> k::Stmt {
    st(
        k::StmtKind::Decl {
            ty,
            name: ident(var, span),
            init: Some(init),
        },
        span,
    )
}

/// The core's check of `cond` as annotation `a`, written as `.ksim` writes it.
fn check_stmt(a: Annotation, cond: k::Expr, span: &Span) -> k::Stmt {
    st(
        k::StmtKind::Call(ex(
            k::ExprKind::Call {
                func: ident(a.name(), span),
                args: vec![cond],
            },
            span,
        )),
        span,
    )
}

/// Whether `e` speaks of permissions only (and so is no functional check: [`perm`]
/// lowers it).
fn is_permission(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Call(f, _) => matches!(f.name.as_str(), "Perm" | "PointsTo" | "Value"),
        ExprKind::Quant { body, .. } => is_permission(body),
        ExprKind::Binary(Bin::Implies, _, b) => is_permission(b),
        ExprKind::Binary(Bin::Star | Bin::Op(BinOp::LogAnd), a, b) => {
            is_permission(a) && is_permission(b)
        }
        ExprKind::Cond(_, a, b) => is_permission(a) && is_permission(b),
        ExprKind::Special(f, _) => matches!(f.name.as_str(), "array" | "matrix" | "pointer"),
        _ => false,
    }
}

/// Whether `e` names variable `v` (free).
fn mentions(e: &Expr, v: &str) -> bool {
    match &e.kind {
        ExprKind::Name(n) => n == v,
        ExprKind::Index(a, b) | ExprKind::Binary(_, a, b) => mentions(a, v) || mentions(b, v),
        ExprKind::Field(a, _) | ExprKind::Unary(_, a) => mentions(a, v),
        ExprKind::Call(_, args) | ExprKind::Special(_, args) => args.iter().any(|a| mentions(a, v)),
        ExprKind::Cond(a, b, c) => mentions(a, v) || mentions(b, v) || mentions(c, v),
        ExprKind::Quant {
            var, cond, body, ..
        } => var.name != v && (mentions(cond, v) || mentions(body, v)),
        _ => false,
    }
}

/// The conjuncts of `e` (`&&` and `**`).
fn conjuncts(e: &Expr) -> Vec<&Expr> {
    match &e.kind {
        ExprKind::Binary(Bin::Star | Bin::Op(BinOp::LogAnd), a, b) => {
            let mut v = conjuncts(a);
            v.extend(conjuncts(b));
            v
        }
        _ => vec![e],
    }
}

/// One end of a quantifier's range: an expression and what to add to it.
type End<'e> = Option<(&'e Expr, u64)>;

/// The range `lo .. hi` of a quantifier over `v` with condition `cond`: `lo <= v`
/// (`v >= lo`, `lo < v`, `v > lo`) and `v < hi` (`v <= hi`, `hi > v`, `hi >= v`) among
/// its conjuncts.
fn bounds<'e>(v: &str, cond: &'e Expr) -> (End<'e>, End<'e>) {
    let is_v = |e: &Expr| matches!(&e.kind, ExprKind::Name(n) if n == v);
    let (mut lo, mut hi) = (None, None);
    for c in conjuncts(cond) {
        let ExprKind::Binary(Bin::Op(op), a, b) = &c.kind else {
            continue;
        };
        // Normalise to `v OP x` or `x OP v`.
        let (op, x, v_left) = if is_v(a) && !mentions(b, v) {
            (*op, &**b, true)
        } else if is_v(b) && !mentions(a, v) {
            (*op, &**a, false)
        } else {
            continue;
        };
        use BinOp::*;
        match (op, v_left) {
            (Ge, true) | (Le, false) => lo = lo.or(Some((x, 0))),
            (Gt, true) | (Lt, false) => lo = lo.or(Some((x, 1))),
            (Lt, true) | (Gt, false) => hi = hi.or(Some((x, 0))),
            (Le, true) | (Ge, false) => hi = hi.or(Some((x, 1))),
            _ => {}
        }
    }
    (lo, hi)
}

struct Lowerer<'p> {
    program: &'p Program,
    /// Array parameters and their sizes.
    arrays: HashMap<String, Vec<k::Expr>>,
    /// Names bound to expressions (pure functions' parameters), innermost last.
    env: Vec<HashMap<String, k::Expr>>,
    /// Where `\old(e)` snapshots go, when an `ensures` is being lowered.
    old: Option<Vec<k::Stmt>>,
    /// Conditions under which the expression being lowered is evaluated (left of `==>`
    /// and `&&`): an `\old(e)` under them is saved only when they hold.
    guards: Vec<k::Expr>,
    /// Depth of pure-function inlining.
    depth: usize,
    fresh: usize,
    notes: Vec<Note>,
    /// Whether the method's specifications hold permissions: then they are moved and
    /// every access is checked ([`perm`]).
    check_permissions: bool,
    /// The name of the work-group `par` block (barriers name it).
    block_name: Option<String>,
    /// The name of the grid `par` block (when nested).
    grid_name: Option<String>,
    /// Why a barrier cannot stand in the block being lowered (it shares its work-group
    /// with other blocks), when it cannot.
    no_barrier: Option<String>,
    /// The method's variables and the class's fields, which the method's threads share:
    /// each is a one-element array (PVL name → array name).
    scalars: HashMap<String, String>,
    /// Arrays whose accesses need no permission (the method's own variables).
    unchecked: std::collections::HashSet<String>,
    /// The `invariant` blocks in scope: name → invariant.
    invariants: HashMap<String, Expr>,
    /// Whether specifications are checked at all (`--no-specs` turns them off).
    specs: bool,
}

/// Lowers `method` of `program` (or its only kernel-like method).
pub fn lower(
    program: &Program,
    method: Option<&str>,
    specs: bool,
) -> Result<Lowered, Vec<Diagnostic>> {
    let methods: Vec<&Method> = program.classes.iter().flat_map(|c| &c.methods).collect();
    let has_par = |m: &Method| match &m.body {
        Some(MethodBody::Block(b)) => b.stmts.iter().any(host::has_par),
        _ => false,
    };
    let m = match method {
        Some(name) => methods
            .iter()
            .find(|m| m.name.name == name)
            .ok_or_else(|| {
                vec![Diagnostic::new(
                    format!(
                        "no method `{name}` in this program; its methods: {}",
                        methods
                            .iter()
                            .map(|m| m.name.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                    0..0,
                )]
            })?,
        None => {
            let with_par: Vec<&&Method> = methods.iter().filter(|m| has_par(m)).collect();
            let with_body: Vec<&&Method> = methods
                .iter()
                .filter(|m| !m.pure && matches!(m.body, Some(MethodBody::Block(_))))
                .collect();
            match (with_par.as_slice(), with_body.as_slice()) {
                ([m], _) | ([], [m]) => **m,
                ([], _) => {
                    return Err(vec![Diagnostic::new(
                        "no method of this program has a `par` block: nothing to run as a kernel",
                        0..0,
                    )])
                }
                (several, _) => {
                    return Err(vec![Diagnostic::new(
                        format!(
                            "several methods have a `par` block ({}): pick one with --kernel NAME",
                            several
                                .iter()
                                .map(|m| m.name.name.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                        0..0,
                    )])
                }
            }
        }
    };
    let mut l = Lowerer {
        program,
        arrays: HashMap::new(),
        env: Vec::new(),
        old: None,
        guards: Vec::new(),
        depth: 0,
        fresh: 0,
        notes: Vec::new(),
        check_permissions: false,
        block_name: None,
        grid_name: None,
        no_barrier: None,
        scalars: HashMap::new(),
        unchecked: Default::default(),
        invariants: HashMap::new(),
        specs,
    };
    match l.method(m) {
        Ok(kernel) => Ok(Lowered {
            kernel,
            notes: l.notes,
            permissions: l.check_permissions,
        }),
        Err(Fail::Error(d)) => Err(vec![d]),
        Err(Fail::Skip(why)) => Err(vec![Diagnostic::new(why, m.span.clone())]),
    }
}

/// `a.length == e` or `e == a.length` among the conjuncts of `clauses`: the length of `a`.
fn length_of<'e>(a: &str, clauses: &'e [Clause]) -> Option<&'e Expr> {
    let is_len = |e: &Expr| {
        matches!(&e.kind, ExprKind::Field(b, f)
            if f.name == "length" && matches!(&b.kind, ExprKind::Name(n) if n == a))
    };
    clauses.iter().find_map(|c| match c {
        Clause::Spec { expr, .. } => conjuncts(expr).into_iter().find_map(|c| match &c.kind {
            ExprKind::Binary(Bin::Op(BinOp::Eq), x, y) if is_len(x) => Some(&**y),
            ExprKind::Binary(Bin::Op(BinOp::Eq), x, y) if is_len(y) => Some(&**x),
            _ => None,
        }),
        Clause::Ghost { .. } => None,
    })
}

/// Free names of a size expression.
fn names(e: &k::Expr, out: &mut Vec<String>) {
    match &e.kind {
        k::ExprKind::Name(n) => out.push(n.clone()),
        k::ExprKind::Binary(_, a, b) => {
            names(a, out);
            names(b, out)
        }
        k::ExprKind::Unary(_, a) | k::ExprKind::Cast(_, a) => names(a, out),
        k::ExprKind::Cond(a, b, c) => {
            names(a, out);
            names(b, out);
            names(c, out)
        }
        k::ExprKind::Call { args, .. } => args.iter().for_each(|a| names(a, out)),
        _ => {}
    }
}

impl Lowerer<'_> {
    fn note(&mut self, span: &Span, text: impl Into<String>) {
        self.notes.push(Note {
            span: span.clone(),
            text: text.into(),
        });
    }

    fn temp(&mut self, base: &str) -> String {
        self.fresh += 1;
        format!("{base}_{}", self.fresh)
    }

    fn method(&mut self, m: &Method) -> Res<k::Kernel> {
        let Some(MethodBody::Block(body)) = &m.body else {
            return err(
                format!("method `{}` has no body to run", m.name.name),
                &m.name.span,
            );
        };
        let class = self
            .program
            .classes
            .iter()
            .find(|c| c.methods.iter().any(|x| std::ptr::eq(x, m)))
            .expect("the method is in a class");
        // One `par` block and nothing else: its threads are the launch's (a nested block:
        // grid × work-group). Anything else runs in one work-group (see [`host`]).
        let outer = match body.stmts.as_slice() {
            [Stmt {
                kind: StmtKind::Par(blocks),
                ..
            }] if blocks.len() == 1 && class.fields.is_empty() => &blocks[0],
            _ => return self.host_method(m, class, body),
        };
        // Nested: the outer block is the grid, the inner one a work-group.
        let inner = match outer.body.stmts.as_slice() {
            [Stmt {
                kind: StmtKind::Par(blocks),
                ..
            }] if blocks.len() == 1 => Some(&blocks[0]),
            _ => None,
        };
        let (grid, group) = match inner {
            Some(inner) => (Some(outer), inner),
            None => (None, outer),
        };
        if group.iters.is_empty() || group.iters.len() > 3 {
            return err(
                "a kernel's `par` block needs one to three iterators `(int t = lo .. hi)`",
                &group.span,
            );
        }
        if let Some(g) = grid {
            if g.iters.len() != 1 {
                return err(
                    "the grid's `par` block needs one iterator `(int b = lo .. hi)`",
                    &g.span,
                );
            }
        }
        self.check_permissions = self.specs && perm::mentions_permission(m);
        self.block_name = group.name.as_ref().map(|n| n.name.clone());
        self.grid_name = grid.and_then(|g| g.name.as_ref().map(|n| n.name.clone()));

        let mut params = self.array_params(m)?;
        let range = |l: &mut Self, it: &Iter| -> Res<k::Expr> {
            let lo = l.pure_expr(&it.lo)?;
            let hi = l.pure_expr(&it.hi)?;
            Ok(bin(BinOp::Sub, hi, lo, &it.hi.span))
        };
        let mut launch = Vec::new();
        let local: Vec<k::Expr> = group
            .iters
            .iter()
            .map(|it| range(self, it))
            .collect::<Res<_>>()?;
        launch.push(k::LaunchItem {
            key: k::LaunchKey::LocalSize,
            value: local[0].clone(),
            more: local[1..].to_vec(),
            span: group.span.clone(),
        });
        let groups = match grid {
            Some(g) => range(self, &g.iters[0])?,
            None => int(1, &group.span),
        };
        launch.push(k::LaunchItem {
            key: k::LaunchKey::Groups,
            value: groups,
            more: Vec::new(),
            span: grid.unwrap_or(group).span.clone(),
        });
        self.scalar_params(m, &launch, &mut params)?;

        // The thread: iterators, method precondition, block precondition, body, block
        // postcondition, method postcondition.
        let mut out = Vec::new();
        if let Some(g) = grid {
            out.push(self.iterator(&g.iters[0], "get_group_id", 0)?);
        }
        for (d, it) in group.iters.iter().enumerate() {
            out.push(self.iterator(it, "get_local_id", d as u64)?);
        }
        let everywhere = context_everywhere(m);
        // The method's contract, by the first work-item of a one-group launch.
        let first = {
            let mut c = bin(
                BinOp::Eq,
                name("tid", &m.name.span),
                int(0, &m.name.span),
                &m.name.span,
            );
            if grid.is_some() {
                c = bin(
                    BinOp::LogAnd,
                    c,
                    bin(
                        BinOp::Eq,
                        name("group_id", &m.name.span),
                        int(0, &m.name.span),
                        &m.name.span,
                    ),
                    &m.name.span,
                );
            }
            c
        };
        let method_checks = grid.is_none();
        let mut method_old = Vec::new();
        if method_checks {
            let mut pre = Vec::new();
            self.clauses(
                &m.contract,
                &[
                    ClauseKind::Requires,
                    ClauseKind::Context,
                    ClauseKind::ContextEverywhere,
                ],
                Annotation::Requires,
                &mut pre,
            );
            // `\old` of the method's postcondition: saved by the same thread.
            let mut post = Vec::new();
            self.old = Some(Vec::new());
            self.clauses(
                &m.contract,
                &[
                    ClauseKind::Ensures,
                    ClauseKind::Context,
                    ClauseKind::ContextEverywhere,
                ],
                Annotation::Ensures,
                &mut post,
            );
            method_old = self.old.take().unwrap_or_default();
            if self.check_permissions {
                self.lend(m, &mut pre)?;
                self.perm_clauses(
                    &m.contract,
                    &[
                        ClauseKind::Ensures,
                        ClauseKind::Context,
                        ClauseKind::ContextEverywhere,
                    ],
                    PermOp::Reclaim,
                    &mut post,
                )?;
            }
            if !pre.is_empty() || !method_old.is_empty() {
                let mut pre_all = method_old.clone();
                pre_all.extend(pre);
                // Saved values are declared at thread level, so the postcondition sees them.
                out.extend(
                    method_old
                        .iter()
                        .filter(|s| matches!(s.kind, k::StmtKind::Decl { .. }))
                        .map(|s| match &s.kind {
                            k::StmtKind::Decl { ty, name, .. } => st(
                                k::StmtKind::Decl {
                                    ty: *ty,
                                    name: name.clone(),
                                    init: None,
                                },
                                &s.span,
                            ),
                            _ => unreachable!(),
                        }),
                );
                let pre_all = pre_all
                    .into_iter()
                    .map(|s| match s.kind {
                        k::StmtKind::Decl {
                            name,
                            init: Some(v),
                            ..
                        } => st(
                            k::StmtKind::Assign {
                                target: k::LValue::Var(name),
                                op: k::AssignOp::Set,
                                value: v,
                            },
                            &s.span,
                        ),
                        other => st(other, &s.span),
                    })
                    .collect();
                out.push(if_(first.clone(), pre_all, &m.name.span));
                out.push(st(k::StmtKind::Barrier(k::Fence::BOTH), &m.name.span));
            }
            method_old = post;
        } else if m.contract.iter().any(|c| matches!(c, Clause::Spec { .. })) {
            self.note(&m.name.span, "the method's contract is not checked for a launch of several work-groups (work-groups cannot wait for each other)");
        }
        if let Some(g) = grid.filter(|_| self.check_permissions) {
            if g.contract
                .iter()
                .any(|c| matches!(c, Clause::Spec { expr, .. } if perm::has_permission(expr)))
            {
                self.note(&g.span, "the grid block's permissions are not split per work-group: each work-item takes its own block's from what the method holds");
            }
        }
        let mut contract = group.contract.clone();
        if let Some(g) = grid {
            contract.extend(g.contract.iter().cloned());
        }
        contract.extend(everywhere.iter().cloned());
        self.clauses(
            &contract,
            &[
                ClauseKind::Requires,
                ClauseKind::Context,
                ClauseKind::ContextEverywhere,
            ],
            Annotation::Assert,
            &mut out,
        );
        self.old = Some(Vec::new());
        let mut post = Vec::new();
        self.clauses(
            &contract,
            &[
                ClauseKind::Ensures,
                ClauseKind::Context,
                ClauseKind::ContextEverywhere,
            ],
            Annotation::Ensures,
            &mut post,
        );
        let saved = self.old.take().unwrap_or_default();
        out.extend(saved);
        if self.check_permissions {
            self.perm_clauses(
                &group.contract,
                &[ClauseKind::Requires, ClauseKind::Context],
                PermOp::Take,
                &mut out,
            )?;
            self.perm_clauses(
                &group.contract,
                &[ClauseKind::Ensures, ClauseKind::Context],
                PermOp::Give,
                &mut post,
            )?;
        }
        for s in &group.body.stmts {
            self.stmt(s, &everywhere, &mut out)?;
        }
        out.extend(post);
        if method_checks && !method_old.is_empty() {
            out.push(st(k::StmtKind::Barrier(k::Fence::BOTH), &m.name.span));
            out.push(if_(first, method_old, &m.name.span));
        }
        Ok(k::Kernel {
            name: ident(&m.name.name, &m.name.span),
            params,
            launch,
            body: k::Block {
                stmts: out,
                span: body.span.clone(),
            },
            span: m.span.clone(),
        })
    }

    /// The method's array parameters, with their sizes (`int[N] a`, or `a.length == N`
    /// in its contract).
    fn array_params(&mut self, m: &Method) -> Res<Vec<k::Param>> {
        let mut params = Vec::new();
        for (ty, p) in &m.params {
            if ty.dims.is_empty() {
                continue;
            }
            if ty.base != Base::Int {
                return err("only `int` arrays are supported yet", &ty.span);
            }
            let mut dims = Vec::new();
            for (i, d) in ty.dims.iter().enumerate() {
                let d = match (d, i) {
                    (Some(d), _) => d,
                    (None, 0) => length_of(&p.name, &m.contract).ok_or_else(|| {
                        Fail::Error(
                            Diagnostic::new(
                                format!("the length of array `{}` is not known", p.name),
                                p.span.clone(),
                            )
                            .with_note(format!(
                            "write `int[N] {0}` or a clause `context_everywhere {0}.length == N;`",
                            p.name
                        )),
                        )
                    })?,
                    (None, _) => {
                        return err(
                            format!("give the sizes of `{}`: `int[M][N] {}`", p.name, p.name),
                            &ty.span,
                        )
                    }
                };
                dims.push(self.pure_expr(d)?);
            }
            self.arrays.insert(p.name.clone(), dims.clone());
            params.push(k::Param::Array {
                is_const: false,
                space: k::Space::Global,
                elem: k::TypeName::Int,
                name: rident(p),
                dims,
                span: ty.span.start..p.span.end,
            });
        }
        Ok(params)
    }

    /// The method's scalar parameters, those that no array size or `launch` holds
    /// (those are the launch's `-D` parameters).
    fn scalar_params(
        &self,
        m: &Method,
        launch: &[k::LaunchItem],
        params: &mut Vec<k::Param>,
    ) -> Res<()> {
        let mut sized = Vec::new();
        for e in (self.arrays.values().flatten()).chain(
            launch
                .iter()
                .flat_map(|l| std::iter::once(&l.value).chain(&l.more)),
        ) {
            names(e, &mut sized);
        }
        for (ty, p) in &m.params {
            if !ty.dims.is_empty() || sized.contains(&rn(&p.name)) {
                continue;
            }
            let t = match ty.base {
                Base::Int => k::TypeName::Int,
                Base::Boolean => k::TypeName::Bool,
                Base::Void => return err("a parameter cannot be `void`", &ty.span),
            };
            params.push(k::Param::Scalar {
                ty: t,
                name: rident(p),
                span: ty.span.start..p.span.end,
            });
        }
        Ok(())
    }

    /// The clauses of `kinds` in `contract`, as checks of annotation `a`; a clause that
    /// cannot be checked gets a note.
    fn clauses(
        &mut self,
        contract: &[Clause],
        kinds: &[ClauseKind],
        a: Annotation,
        out: &mut Vec<k::Stmt>,
    ) {
        if !self.specs {
            return;
        }
        for c in contract {
            let Clause::Spec { kind, expr, span } = c else {
                continue;
            };
            if !kinds.contains(kind) {
                continue;
            }
            let mut stmts = Vec::new();
            match self.check(a, expr, span, &mut stmts) {
                Ok(()) => out.extend(stmts),
                Err(Fail::Skip(why)) => self.note(
                    span,
                    format!("`{}` clause not checked: {why}", kind.keyword()),
                ),
                Err(Fail::Error(d)) => self.note(
                    &d.span,
                    format!("`{}` clause not checked: {}", kind.keyword(), d.message),
                ),
            }
        }
    }

    /// Checks of `e` as annotation `a`: one per conjunct; `\forall` checks its body in
    /// the loop, `c ==> b` checks `b` under `if (c)`.
    fn check(&mut self, a: Annotation, e: &Expr, span: &Span, out: &mut Vec<k::Stmt>) -> Res<()> {
        if is_permission(e) {
            return Ok(());
        }
        match &e.kind {
            ExprKind::Binary(Bin::Star | Bin::Op(BinOp::LogAnd), x, y) => {
                self.check(a, x, span, out)?;
                self.check(a, y, span, out)
            }
            ExprKind::Binary(Bin::Implies, c, b) => {
                let c = self.expr(c, out)?;
                let mut then = Vec::new();
                self.guards.push(c.clone());
                let r = self.check(a, b, span, &mut then);
                self.guards.pop();
                r?;
                if !then.is_empty() {
                    out.push(if_(c, then, span));
                }
                Ok(())
            }
            ExprKind::Quant {
                q: Quantifier::Forall | Quantifier::ForallStar,
                var,
                cond,
                body,
            } => {
                let body_span = span.clone();
                self.quant_loop(var, cond, e, out, |l, guard_out| {
                    l.check(a, body, &body_span, guard_out)
                })
            }
            _ => {
                let c = self.expr(e, out)?;
                out.push(check_stmt(a, c, span));
                Ok(())
            }
        }
    }

    /// `{ int v = lo; while (v < hi) { if (cond) { f } v = v + 1; } }` in `out`.
    fn quant_loop(
        &mut self,
        var: &Ident,
        cond: &Expr,
        whole: &Expr,
        out: &mut Vec<k::Stmt>,
        f: impl FnOnce(&mut Self, &mut Vec<k::Stmt>) -> Res<()>,
    ) -> Res<()> {
        let (Some((lo, lo_off)), Some((hi, hi_off))) = bounds(&var.name, cond) else {
            return err(
                format!(
                    "quantifier over `{}` without a bound: write its range in the condition, as `lo <= {0} && {0} < hi`",
                    var.name
                ),
                &whole.span,
            );
        };
        let mut lo = self.expr(lo, out)?;
        if lo_off > 0 {
            lo = bin(BinOp::Add, lo, int(lo_off, &whole.span), &whole.span);
        }
        let mut hi = self.expr(hi, out)?;
        if hi_off > 0 {
            hi = bin(BinOp::Add, hi, int(hi_off, &whole.span), &whole.span);
        }
        let v = self.temp(&var.name);
        self.env
            .push(HashMap::from([(var.name.clone(), name(&v, &var.span))]));
        let mut guard = Vec::new();
        let c = self.expr(cond, &mut guard);
        let mut then = Vec::new();
        let r = c.and_then(|c| f(self, &mut then).map(|_| c));
        self.env.pop();
        let c = r?;
        let s = &whole.span;
        guard.push(if_(c, then, s));
        guard.push(set(&v, bin(BinOp::Add, name(&v, s), int(1, s), s), s));
        out.push(block(
            vec![
                decl(k::TypeName::Int, &v, lo, s),
                st(
                    k::StmtKind::While {
                        cond: bin(BinOp::Lt, name(&v, s), hi, s),
                        body: Box::new(block(guard, s)),
                    },
                    s,
                ),
            ],
            s,
        ));
        Ok(())
    }

    /// An expression without statements (sizes, launch ranges).
    /// A `par` iterator's declaration: `int t = lo + (int) func(dim)`, `func` the work-item
    /// function that numbers this block's threads.
    fn iterator(&mut self, it: &Iter, func: &str, dim: u64) -> Res<k::Stmt> {
        let span = &it.name.span;
        let lo = self.pure_expr(&it.lo)?;
        let id = ex(
            k::ExprKind::Call {
                func: ident(func, span),
                args: vec![int(dim, span)],
            },
            span,
        );
        let id = ex(k::ExprKind::Cast(k::TypeName::Int, Box::new(id)), span);
        let v = bin(BinOp::Add, lo, id, span);
        Ok(decl(k::TypeName::Int, &rn(&it.name.name), v, span))
    }

    fn pure_expr(&mut self, e: &Expr) -> Res<k::Expr> {
        let mut pre = Vec::new();
        let x = self.expr(e, &mut pre)?;
        if !pre.is_empty() {
            return err("a quantifier cannot stand here", &e.span);
        }
        Ok(x)
    }

    /// `e` with the statements it needs first in `pre`.
    fn expr(&mut self, e: &Expr, pre: &mut Vec<k::Stmt>) -> Res<k::Expr> {
        let s = &e.span;
        Ok(match &e.kind {
            ExprKind::Int(v) => int(*v, s),
            ExprKind::Bool(b) => ex(k::ExprKind::Bool(*b), s),
            ExprKind::Name(n) => {
                if let Some(v) = self.env.iter().rev().find_map(|m| m.get(n)) {
                    return Ok(v.clone());
                }
                match self.scalars.get(n) {
                    Some(a) => ex(
                        k::ExprKind::Index {
                            array: ident(a, s),
                            indices: vec![int(0, s)],
                        },
                        s,
                    ),
                    None => name(&rn(n), s),
                }
            }
            ExprKind::New(_) => {
                return err(
                    "`new` stands only in the declaration of one of the method's own arrays (`int[N] a = new int[N];`)",
                    s,
                )
            }
            ExprKind::Null => {
                return err(
                    "`null` is only compared with an array here (`a != null`)",
                    s,
                )
            }
            ExprKind::Read | ExprKind::Write | ExprKind::NoPerm => {
                return err("a permission amount stands only in `Perm(loc, amount)`", s)
            }
            ExprKind::Result => match self.env.iter().rev().find_map(|m| m.get("\\result")) {
                Some(v) => v.clone(),
                None => {
                    return Err(Fail::Skip(
                        "`\\result` is supported in a pure function's contract only yet".into(),
                    ))
                }
            },
            ExprKind::Index(..) => {
                let mut idx = Vec::new();
                let mut base = e;
                while let ExprKind::Index(b, i) = &base.kind {
                    idx.push(&**i);
                    base = b;
                }
                idx.reverse();
                let ExprKind::Name(a) = &base.kind else {
                    return err("only arrays can be indexed", &base.span);
                };
                let indices = idx
                    .into_iter()
                    .map(|i| self.expr(i, pre))
                    .collect::<Res<_>>()?;
                ex(
                    k::ExprKind::Index {
                        array: ident(&rn(a), &base.span),
                        indices,
                    },
                    s,
                )
            }
            ExprKind::Field(b, f) => match (&b.kind, f.name.as_str()) {
                (ExprKind::Name(a), "length") if self.arrays.contains_key(a) => {
                    self.arrays[a][0].clone()
                }
                _ => {
                    return err(
                        format!(
                        "field `.{}` is not supported here (only an array parameter's `.length`)",
                        f.name
                    ),
                        s,
                    )
                }
            },
            ExprKind::Call(f, args) => match f.name.as_str() {
                "Perm" | "PointsTo" | "Value" => ex(k::ExprKind::Bool(true), s),
                _ => self.call(f, args, s, pre)?,
            },
            ExprKind::Special(f, args) => match (f.name.as_str(), args.as_slice()) {
                ("old", [x]) => self.old(x, pre)?,
                ("array", [a, n]) => {
                    let n = self.expr(n, pre)?;
                    let len = self.expr(
                        &Expr {
                            kind: ExprKind::Field(
                                Box::new(a.clone()),
                                Ident {
                                    name: "length".into(),
                                    span: a.span.clone(),
                                },
                            ),
                            span: a.span.clone(),
                        },
                        pre,
                    )?;
                    bin(BinOp::Eq, len, n, s)
                }
                _ => return err(format!("`\\{}` is not supported yet", f.name), s),
            },
            ExprKind::Unary(op, a) => ex(k::ExprKind::Unary(*op, Box::new(self.expr(a, pre)?)), s),
            ExprKind::Binary(Bin::Op(op @ (BinOp::Eq | BinOp::Ne)), a, b)
                if matches!(a.kind, ExprKind::Null) || matches!(b.kind, ExprKind::Null) =>
            {
                // Arrays are never null in ksim.
                ex(k::ExprKind::Bool(*op == BinOp::Ne), s)
            }
            ExprKind::Binary(b, x, y) => {
                let x = self.expr(x, pre)?;
                let mut rp = Vec::new();
                let guard = match b {
                    Bin::Implies | Bin::Star | Bin::Op(BinOp::LogAnd) => Some(x.clone()),
                    Bin::Op(BinOp::LogOr) => Some(not(x.clone())),
                    _ => None,
                };
                let pushed = guard.map(|g| self.guards.push(g)).is_some();
                let yv = self.expr(y, &mut rp);
                if pushed {
                    self.guards.pop();
                }
                let yv = yv?;
                let (op, x) = match b {
                    Bin::Op(op) => (*op, x),
                    Bin::Star => (BinOp::LogAnd, x),
                    Bin::Implies => (BinOp::LogOr, not(x)),
                    Bin::Frac => return err("a fraction stands only in `Perm(loc, amount)`", s),
                };
                if rp.is_empty() {
                    bin(op, x, yv, s)
                } else if matches!(op, BinOp::LogAnd | BinOp::LogOr) {
                    // The right operand's statements run only when it is evaluated.
                    let t = self.temp("cond");
                    pre.push(decl(k::TypeName::Bool, &t, x, s));
                    rp.push(set(&t, yv, s));
                    let guard = if op == BinOp::LogAnd {
                        name(&t, s)
                    } else {
                        not(name(&t, s))
                    };
                    pre.push(if_(guard, rp, s));
                    name(&t, s)
                } else {
                    pre.extend(rp);
                    bin(op, x, yv, s)
                }
            }
            ExprKind::Cond(c, a, b) => {
                let c = self.expr(c, pre)?;
                let (mut pa, mut pb) = (Vec::new(), Vec::new());
                let a = self.expr(a, &mut pa)?;
                let b = self.expr(b, &mut pb)?;
                if !pa.is_empty() || !pb.is_empty() {
                    return err("a quantifier (or a call of a pure function with a contract) inside `?:` is not supported yet", s);
                }
                ex(k::ExprKind::Cond(Box::new(c), Box::new(a), Box::new(b)), s)
            }
            ExprKind::Quant { q, var, cond, body } => {
                let exists = *q == Quantifier::Exists;
                let t = self.temp(if exists { "exists" } else { "forall" });
                pre.push(decl(
                    k::TypeName::Bool,
                    &t,
                    ex(k::ExprKind::Bool(!exists), s),
                    s,
                ));
                let t2 = t.clone();
                self.quant_loop(var, cond, e, pre, |l, out| {
                    let b = l.expr(body, out)?;
                    let b = if exists { b } else { not(b) };
                    out.push(if_(
                        b,
                        vec![set(&t2, ex(k::ExprKind::Bool(exists), s), s)],
                        s,
                    ));
                    Ok(())
                })?;
                name(&t, s)
            }
        })
    }

    /// `\old(x)`: `x` saved where the postcondition's block starts (when the guards it
    /// stands under hold there).
    fn old(&mut self, x: &Expr, pre: &mut Vec<k::Stmt>) -> Res<k::Expr> {
        if !self.env.is_empty() {
            return Err(Fail::Skip(
                "`\\old` of an expression over a quantified variable is not supported yet".into(),
            ));
        }
        let Some(mut sink) = self.old.take() else {
            return Err(Fail::Skip(
                "`\\old` outside a postcondition is not supported yet".into(),
            ));
        };
        let r = self.expr(x, &mut sink);
        let _ = pre;
        let v = self.temp("old");
        let ty = match &x.kind {
            ExprKind::Bool(_) | ExprKind::Unary(UnOp::Not, _) | ExprKind::Quant { .. } => {
                k::TypeName::Bool
            }
            ExprKind::Binary(
                Bin::Op(
                    BinOp::Lt
                    | BinOp::Le
                    | BinOp::Gt
                    | BinOp::Ge
                    | BinOp::Eq
                    | BinOp::Ne
                    | BinOp::LogAnd
                    | BinOp::LogOr,
                ),
                ..,
            ) => k::TypeName::Bool,
            _ => k::TypeName::Int,
        };
        let r = r.map(|val| {
            match self
                .guards
                .iter()
                .cloned()
                .reduce(|a, b| bin(BinOp::LogAnd, a, b, &x.span))
            {
                None => sink.push(decl(ty, &v, val, &x.span)),
                Some(g) => {
                    let zero = match ty {
                        k::TypeName::Bool => ex(k::ExprKind::Bool(false), &x.span),
                        _ => int(0, &x.span),
                    };
                    sink.push(decl(ty, &v, zero, &x.span));
                    sink.push(if_(g, vec![set(&v, val, &x.span)], &x.span));
                }
            }
        });
        self.old = Some(sink);
        r?;
        Ok(name(&v, &x.span))
    }

    /// A call in an expression: a `pure` function with an expression body, inlined.
    fn call(&mut self, f: &Ident, args: &[Expr], s: &Span, pre: &mut Vec<k::Stmt>) -> Res<k::Expr> {
        let program = self.program;
        let Some(m) = program
            .classes
            .iter()
            .flat_map(|c| &c.methods)
            .find(|m| m.name.name == f.name)
        else {
            return err(format!("unknown function `{}`", f.name), &f.span);
        };
        let body = match &m.body {
            Some(MethodBody::Expr(body)) => body,
            None => return err(format!("`{}` has no body: ksim cannot run a call of it", f.name), &f.span),
            Some(MethodBody::Block(_)) => return err(format!("`{}` is a method, not a pure function with an expression body: a method's call stands only as a statement (`{0}(...);`)", f.name), &f.span),
        };
        if args.len() != m.params.len() {
            return err(
                format!("`{}` takes {} arguments", f.name, m.params.len()),
                s,
            );
        }
        if self.depth >= 32 {
            return err(format!("`{}`: pure functions nested (or recursive) deeper than 32 calls are not supported yet", f.name), s);
        }
        let mut bound = HashMap::new();
        for ((_, p), a) in m.params.iter().zip(args) {
            let v = self.expr(a, pre)?;
            bound.insert(p.name.clone(), v);
        }
        // The body and the contract see the parameters only.
        let saved = std::mem::replace(&mut self.env, vec![bound]);
        self.depth += 1;
        let r = self.pure_call(m, body, pre);
        self.depth -= 1;
        self.env = saved;
        r
    }

    /// A pure function's body in the caller's `pre`, between its contract's checks: its
    /// `requires` at the call, its `ensures` on the result (`\result`, saved in a
    /// variable), each inlined call checking them afresh.
    fn pure_call(&mut self, m: &Method, body: &Expr, pre: &mut Vec<k::Stmt>) -> Res<k::Expr> {
        let (pres, posts) = (
            [ClauseKind::Requires, ClauseKind::Context],
            [ClauseKind::Ensures, ClauseKind::Context],
        );
        let has = |kinds: &[ClauseKind]| {
            self.specs
                && (m.contract.iter())
                    .any(|c| matches!(c, Clause::Spec { kind, .. } if kinds.contains(kind)))
        };
        let post = has(&posts);
        self.clauses(&m.contract, &pres, Annotation::CallRequires, pre);
        let r = self.expr(body, pre)?;
        if !post {
            return Ok(r);
        }
        let s = &body.span;
        let v = self.temp("result");
        let ty = match m.ret.base {
            Base::Boolean => k::TypeName::Bool,
            _ => k::TypeName::Int,
        };
        pre.push(decl(ty, &v, r, s));
        self.env[0].insert("\\result".to_string(), name(&v, s));
        self.clauses(&m.contract, &posts, Annotation::Ensures, pre);
        Ok(name(&v, s))
    }

    fn ty(&self, t: &Type) -> Res<k::TypeName> {
        if !t.dims.is_empty() {
            return err("local arrays are not supported yet", &t.span);
        }
        match t.base {
            Base::Int => Ok(k::TypeName::Int),
            Base::Boolean => Ok(k::TypeName::Bool),
            Base::Void => err("a variable cannot be `void`", &t.span),
        }
    }

    fn lvalue(&mut self, e: &Expr, pre: &mut Vec<k::Stmt>) -> Res<k::LValue> {
        match self.expr(e, pre)?.kind {
            k::ExprKind::Name(n) => Ok(k::LValue::Var(ident(&n, &e.span))),
            k::ExprKind::Index { array, indices } => Ok(k::LValue::Elem { array, indices }),
            _ => err("cannot assign to this", &e.span),
        }
    }

    /// A statement of a thread.
    fn stmt(&mut self, s: &Stmt, everywhere: &[Clause], out: &mut Vec<k::Stmt>) -> Res<()> {
        let sp = &s.span;
        match &s.kind {
            StmtKind::Decl { ty, name: n, init } => {
                // A thread's own variable hides the method's of the same name.
                self.scalars.remove(&n.name);
                let ty = self.ty(ty)?;
                let init = init.as_ref().map(|i| self.expr(i, out)).transpose()?;
                self.push_checked(
                    st(
                        k::StmtKind::Decl {
                            ty,
                            name: rident(n),
                            init,
                        },
                        sp,
                    ),
                    out,
                );
            }
            StmtKind::Assign { target, value } => {
                let value = self.expr(value, out)?;
                let target = self.lvalue(target, out)?;
                self.push_checked(
                    st(
                        k::StmtKind::Assign {
                            target,
                            op: k::AssignOp::Set,
                            value,
                        },
                        sp,
                    ),
                    out,
                );
            }
            StmtKind::Step { target, decrement } => {
                let target = self.lvalue(target, out)?;
                self.push_checked(
                    st(
                        k::StmtKind::Step {
                            target,
                            decrement: *decrement,
                        },
                        sp,
                    ),
                    out,
                );
            }
            StmtKind::Call(e) => self.call_in_thread(e, out)?,
            StmtKind::If { cond, then, els } => {
                let c = self.expr(cond, out)?;
                let mut t = Vec::new();
                self.stmt(then, everywhere, &mut t)?;
                let els = match els {
                    Some(e) => {
                        let mut v = Vec::new();
                        self.stmt(e, everywhere, &mut v)?;
                        Some(Box::new(block(v, &e.span)))
                    }
                    None => None,
                };
                self.push_checked(
                    st(
                        k::StmtKind::If {
                            arms: vec![k::IfArm {
                                cond: c,
                                then: block(t, &then.span),
                                span: sp.clone(),
                            }],
                            els,
                        },
                        sp,
                    ),
                    out,
                );
            }
            StmtKind::While {
                contract,
                cond,
                body,
            } => self.loop_(contract, everywhere, None, cond, None, body, sp, out)?,
            StmtKind::For {
                contract,
                init,
                cond,
                step,
                body,
            } => {
                let t = Expr {
                    kind: ExprKind::Bool(true),
                    span: sp.clone(),
                };
                self.loop_(
                    contract,
                    everywhere,
                    init.as_deref(),
                    cond.as_ref().unwrap_or(&t),
                    step.as_deref(),
                    body,
                    sp,
                    out,
                )?
            }
            StmtKind::Block(b) => {
                let mut v = Vec::new();
                for s in &b.stmts {
                    self.stmt(s, everywhere, &mut v)?;
                }
                out.push(block(v, &b.span));
            }
            StmtKind::Par(_) | StmtKind::Parallel(_) => {
                return err("a `par` block inside a thread is not supported yet", sp)
            }
            StmtKind::Barrier { name: n, contract } => {
                if self.grid_name.as_deref() == Some(n.name.as_str()) {
                    return err(format!("a barrier over the grid block `{}` is not supported: work-groups cannot wait for each other", n.name), &n.span);
                }
                if let Some(why) = &self.no_barrier {
                    return err(why.clone(), &n.span);
                }
                if self.block_name.as_deref() != Some(n.name.as_str()) {
                    return err(
                        format!("`barrier({})` names no enclosing `par` block", n.name),
                        &n.span,
                    );
                }
                self.clauses(
                    contract,
                    &[ClauseKind::Requires, ClauseKind::Context],
                    Annotation::Assert,
                    out,
                );
                if self.check_permissions {
                    self.perm_clauses(
                        contract,
                        &[ClauseKind::Requires, ClauseKind::Context],
                        PermOp::Arrive,
                        out,
                    )?;
                }
                out.push(st(k::StmtKind::Barrier(k::Fence::BOTH), sp));
                self.clauses(
                    contract,
                    &[ClauseKind::Ensures, ClauseKind::Context],
                    Annotation::Assert,
                    out,
                );
                if self.check_permissions {
                    self.perm_clauses(
                        contract,
                        &[ClauseKind::Ensures, ClauseKind::Context],
                        PermOp::Depart,
                        out,
                    )?;
                }
            }
            StmtKind::Assert(_) | StmtKind::Assume(_) if !self.specs => {}
            StmtKind::Assert(e) => {
                let mut v = Vec::new();
                match self.check(Annotation::Assert, e, sp, &mut v) {
                    Ok(()) => out.extend(v),
                    Err(Fail::Skip(why)) => self.note(sp, format!("`assert` not checked: {why}")),
                    Err(e) => return Err(e),
                }
            }
            StmtKind::Assume(e) => {
                let mut v = Vec::new();
                match self.check(Annotation::Assume, e, sp, &mut v) {
                    Ok(()) => out.extend(v),
                    Err(Fail::Skip(why)) => self.note(sp, format!("`assume` not checked: {why}")),
                    Err(e) => return Err(e),
                }
            }
            StmtKind::Ghost(s) => self.stmt(s, everywhere, out)?,
            StmtKind::Return(_) => {
                return err("`return` inside a `par` block is not supported", sp)
            }
            StmtKind::Invariant { name: n, inv, body } => {
                self.invariant_enter(n, inv, out)?;
                let mut v = Vec::new();
                for s in &body.stmts {
                    self.stmt(s, everywhere, &mut v)?;
                }
                out.push(block(v, sp));
                self.invariant_leave(n, inv, out)?;
            }
            StmtKind::Atomic { name: n, body } => self.atomic(n, body, everywhere, sp, out)?,
        }
        Ok(())
    }

    /// `s` after the permission checks of its own accesses.
    fn push_checked(&self, s: k::Stmt, out: &mut Vec<k::Stmt>) {
        self.access_checks(&s, out);
        out.push(s);
    }

    /// A loop with its invariants checked at each arrival at its head.
    #[allow(clippy::too_many_arguments)]
    fn loop_(
        &mut self,
        contract: &[Clause],
        everywhere: &[Clause],
        init: Option<&Stmt>,
        cond: &Expr,
        step: Option<&Stmt>,
        body: &Stmt,
        sp: &Span,
        out: &mut Vec<k::Stmt>,
    ) -> Res<()> {
        let mut v = Vec::new();
        if let Some(i) = init {
            self.stmt(i, everywhere, &mut v)?;
        }
        let mut all = contract.to_vec();
        all.extend(everywhere.iter().cloned());
        let mut inv = Vec::new();
        self.clauses(
            &all,
            &[ClauseKind::LoopInvariant, ClauseKind::ContextEverywhere],
            Annotation::Invariant,
            &mut inv,
        );
        v.extend(inv.iter().cloned());
        let mut pre = Vec::new();
        let c = self.expr(cond, &mut pre)?;
        if !pre.is_empty() {
            return err(
                "a quantifier in a loop condition is not supported yet",
                &cond.span,
            );
        }
        let mut b = Vec::new();
        self.stmt(body, everywhere, &mut b)?;
        if let Some(s) = step {
            self.stmt(s, everywhere, &mut b)?;
        }
        b.extend(inv);
        // The condition's reads are checked at each arrival at the loop's head.
        self.read_checks(&c, &mut b);
        self.read_checks(&c, &mut v);
        v.push(st(
            k::StmtKind::While {
                cond: c,
                body: Box::new(block(b, &body.span)),
            },
            sp,
        ));
        out.push(block(v, sp));
        Ok(())
    }
}
