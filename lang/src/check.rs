//! The type checker: Figure 5 of POPL 2014 extended to ksim's surface language, and the
//! lowering of the checked syntax tree to the [`core`] form.
//!
//! Beyond Figure 5 it resolves names (block-scoped variables, parameters, arrays,
//! builtins), inserts C's implicit conversions as explicit casts (bool < int < uint < float),
//! desugars `for`, compound assignments and `x++`, and enforces **genericity**: a value of
//! the monoid type `T` flows only through `⊕`, `identity`, assignments, `?:` branches and
//! arrays of `T` — never into an index, a condition, a cast or an integer operator. This is
//! the typing argument behind Theorem 5.3: a generic kernel's control flow and addressing
//! cannot depend on `T` values, so instantiating `T` with another monoid changes only what
//! the `T` cells hold.

use crate::ast::{self, AssignOp, BinOp, LValue, Span, StmtKind as S, TypeName, UnOp};
use crate::core::{
    Annotation, ArrayDecl, AtomicOp, BlockId, Builtin, DimQuery, Expr, ExprKind, IntFn, Kernel,
    Lit, MathFn, ParamDecl, ParamKind, PermOp, Stmt, StmtKind, Ty, VarDecl, VarId,
};
use crate::diag::Diagnostic;
use std::collections::HashMap;

/// Checks a kernel and lowers it to the core form, or returns every error found.
pub fn check(k: &ast::Kernel) -> Result<Kernel, Vec<Diagnostic>> {
    let mut cx = Checker {
        kernel: Kernel {
            name: k.name.name.clone(),
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
        scopes: Vec::new(),
        diags: Vec::new(),
        in_sizes: false,
        in_array_sizes: false,
        loop_fresh: Vec::new(),
    };
    cx.declare_params(k);
    cx.launch(k);
    cx.scopes.push(HashMap::new());
    let body = cx.block_stmts(&k.body.stmts);
    cx.kernel.blocks[Kernel::BODY] = body;
    if cx.diags.is_empty() {
        Ok(cx.kernel)
    } else {
        Err(cx.diags)
    }
}

/// The name of a type (the inverse of [`ty_of`]).
pub fn name_of(t: Ty) -> TypeName {
    match t {
        Ty::Int => TypeName::Int,
        Ty::Uint => TypeName::Uint,
        Ty::Bool => TypeName::Bool,
        Ty::Float => TypeName::Float,
        Ty::Generic => TypeName::Generic,
        Ty::Char => TypeName::Char,
        Ty::Uchar => TypeName::Uchar,
        Ty::Short => TypeName::Short,
        Ty::Ushort => TypeName::Ushort,
        Ty::Long => TypeName::Long,
        Ty::Ulong => TypeName::Ulong,
        Ty::Double => TypeName::Double,
        Ty::Ptr => TypeName::Ptr,
    }
}

const BUILTINS: [(&str, Builtin); 5] = [
    ("tid", Builtin::LocalId),
    ("gid", Builtin::GlobalId),
    ("group_id", Builtin::GroupId),
    ("local_size", Builtin::LocalSize),
    ("num_groups", Builtin::NumGroups),
];

/// The atomic function called by `e`, if it is a call of one: `atomic_add(A[i], v)`.
fn atomic_call(e: &ast::Expr) -> Option<(AtomicOp, &[ast::Expr])> {
    match &e.kind {
        ast::ExprKind::Call { func, args } => AtomicOp::ALL
            .into_iter()
            .find(|op| op.name() == func.name)
            .map(|op| (op, args.as_slice())),
        _ => None,
    }
}

/// The annotation called by `e`, if it is one: `__assert(c)`, `__requires(c)`, ...
fn annotation_call(e: &ast::Expr) -> Option<(Annotation, &[ast::Expr])> {
    match &e.kind {
        ast::ExprKind::Call { func, args } => Annotation::ALL
            .into_iter()
            .find(|a| a.name() == func.name)
            .map(|a| (a, args.as_slice())),
        _ => None,
    }
}

/// `__perm_take(A[i], num, den)`, ...: a permission statement and its arguments.
fn perm_call(e: &ast::Expr) -> Option<(PermOp, &[ast::Expr])> {
    match &e.kind {
        ast::ExprKind::Call { func, args } => PermOp::ALL
            .into_iter()
            .find(|p| p.name() == func.name)
            .map(|p| (p, args.as_slice())),
        _ => None,
    }
}

struct Checker {
    kernel: Kernel,
    /// Variable scopes, innermost last.
    scopes: Vec<HashMap<String, VarId>>,
    diags: Vec<Diagnostic>,
    /// Checking an array size or launch expression: free names become size parameters.
    in_sizes: bool,
    /// Checking an array size: `local_size` (the flat work-group size, the same for every
    /// thread of a launch) may appear too, so that an array can hold one row per thread
    /// (how the OpenCL front end lowers private arrays).
    in_array_sizes: bool,
    /// Per loop being checked, innermost last: the variables declared without initialiser
    /// in its body so far (they get [`VarDecl::fresh_in`] once the body's block exists).
    loop_fresh: Vec<Vec<VarId>>,
}

/// An error has been recorded; the caller skips the construct.
type Res<T> = Result<T, ()>;

/// The type a type name denotes.
pub fn ty_of(t: TypeName) -> Ty {
    match t {
        TypeName::Int => Ty::Int,
        TypeName::Uint => Ty::Uint,
        TypeName::Bool => Ty::Bool,
        TypeName::Float => Ty::Float,
        TypeName::Generic => Ty::Generic,
        TypeName::Char => Ty::Char,
        TypeName::Uchar => Ty::Uchar,
        TypeName::Short => Ty::Short,
        TypeName::Ushort => Ty::Ushort,
        TypeName::Long => Ty::Long,
        TypeName::Ulong => Ty::Ulong,
        TypeName::Double => Ty::Double,
        TypeName::Ptr => Ty::Ptr,
    }
}

/// The type a pointer function reads or writes (`__deref_int`, `__store_ptr`): a scalar
/// type or `ptr`.
fn pointee_ty(name: &str) -> Option<Ty> {
    match name {
        "ptr" => Some(Ty::Ptr),
        "bool" => Some(Ty::Bool),
        _ => scalar_ty(name),
    }
}

/// The scalar type named `name` (`int`, `float`, ...; not `bool` or `T`), for `as_T`.
fn scalar_ty(name: &str) -> Option<Ty> {
    use Ty::*;
    [
        Char, Uchar, Short, Ushort, Int, Uint, Long, Ulong, Float, Double,
    ]
    .into_iter()
    .find(|t| t.name() == name)
}

fn cast(e: Expr, ty: Ty) -> Expr {
    if e.ty == ty {
        return e;
    }
    let span = e.span.clone();
    Expr {
        kind: ExprKind::Cast(Box::new(e)),
        ty,
        span,
    }
}

impl Checker {
    fn error(&mut self, d: Diagnostic) {
        self.diags.push(d);
    }

    fn err<T>(&mut self, msg: impl Into<String>, span: &Span) -> Res<T> {
        self.diags.push(Diagnostic::new(msg, span.clone()));
        Err(())
    }

    fn note_generic(&mut self, t: Ty) {
        if t == Ty::Generic {
            self.kernel.generic = true;
        }
    }

    fn declare_params(&mut self, k: &ast::Kernel) {
        for p in &k.params {
            let (name, span) = match p {
                ast::Param::Array { name, span, .. } | ast::Param::Scalar { name, span, .. } => {
                    (name, span)
                }
            };
            if BUILTINS.iter().any(|(b, _)| *b == name.name) {
                self.error(Diagnostic::new(
                    format!("`{}` is a builtin and cannot name a parameter", name.name),
                    name.span.clone(),
                ));
                continue;
            }
            if self.kernel.array(&name.name).is_some() || self.kernel.param(&name.name).is_some() {
                self.error(Diagnostic::new(
                    format!("parameter `{}` is declared twice", name.name),
                    name.span.clone(),
                ));
                continue;
            }
            match p {
                ast::Param::Scalar { ty, .. } => {
                    if *ty == TypeName::Generic {
                        self.error(Diagnostic::new(
                            "a scalar parameter cannot have the generic type `T`: \
                             pass generic values in arrays",
                            span.clone(),
                        ));
                        continue;
                    }
                    self.kernel.params.push(ParamDecl {
                        name: name.name.clone(),
                        ty: ty_of(*ty),
                        kind: ParamKind::Scalar,
                        span: name.span.clone(),
                    })
                }
                ast::Param::Array {
                    is_const,
                    space,
                    elem,
                    dims,
                    ..
                } => {
                    // Sizes are checked after all parameters are declared (below).
                    self.note_generic(ty_of(*elem));
                    self.kernel.arrays.push(ArrayDecl {
                        name: name.name.clone(),
                        elem: ty_of(*elem),
                        space: *space,
                        is_const: *is_const,
                        dims: Vec::with_capacity(dims.len()),
                        span: span.clone(),
                        lanes: 1,
                        byte_elem: None,
                    });
                }
            }
        }
        let mut a = 0;
        for p in &k.params {
            if let ast::Param::Array { name, dims, .. } = p {
                if self
                    .kernel
                    .arrays
                    .get(a)
                    .is_none_or(|d| d.name != name.name)
                {
                    continue; // rejected above
                }
                if dims.is_empty() || dims.len() > 2 {
                    self.error(Diagnostic::new(
                        format!("array `{}` must have one or two dimensions", name.name),
                        name.span.clone(),
                    ));
                }
                let mut checked = Vec::new();
                self.in_array_sizes = true;
                for d in dims {
                    if let Ok(e) = self.size_expr(d, "an array size") {
                        checked.push(e);
                    }
                }
                self.in_array_sizes = false;
                self.kernel.arrays[a].dims = checked;
                a += 1;
            }
        }
    }

    fn launch(&mut self, k: &ast::Kernel) {
        for item in &k.launch {
            let (slot, what) = match item.key {
                ast::LaunchKey::Groups => (self.kernel.groups.is_some(), "groups"),
                ast::LaunchKey::LocalSize => (self.kernel.local_size.is_some(), "local_size"),
            };
            if slot {
                self.error(Diagnostic::new(
                    format!("`{what}` is declared twice in launch(...)"),
                    item.span.clone(),
                ));
                continue;
            }
            let dims: Vec<Res<Expr>> = std::iter::once(&item.value)
                .chain(&item.more)
                .map(|d| self.size_expr(d, "a launch size"))
                .collect();
            if let Ok(mut dims) = dims.into_iter().collect::<Res<Vec<Expr>>>() {
                let first = dims.remove(0);
                match item.key {
                    ast::LaunchKey::Groups => {
                        self.kernel.groups = Some(first);
                        self.kernel.groups_more = dims;
                    }
                    ast::LaunchKey::LocalSize => {
                        self.kernel.local_size = Some(first);
                        self.kernel.local_size_more = dims;
                    }
                }
            }
        }
    }

    /// An expression over size parameters only (array sizes, launch defaults).
    fn size_expr(&mut self, e: &ast::Expr, what: &str) -> Res<Expr> {
        self.in_sizes = true;
        let r = self.expr(e);
        self.in_sizes = false;
        let e = r?;
        match e.ty {
            t if t.is_integer() => Ok(cast(e, t.promote())),
            t => self.err(
                format!("{what} must be an integer, not `{}`", t.name()),
                &e.span,
            ),
        }
    }

    fn lookup_var(&self, name: &str) -> Option<VarId> {
        self.scopes.iter().rev().find_map(|s| s.get(name).copied())
    }

    /// The loop whose body is `body` is checked: the variables declared without
    /// initialiser in it become fresh at each entry into it ([`VarDecl::fresh_in`]).
    fn fresh_in(&mut self, body: BlockId) {
        for v in self.loop_fresh.pop().expect("a loop is being checked") {
            self.kernel.vars[v].fresh_in = Some(body);
        }
    }

    fn new_block(&mut self, stmts: Vec<Stmt>) -> BlockId {
        self.kernel.blocks.push(stmts);
        self.kernel.blocks.len() - 1
    }

    fn block_stmts(&mut self, stmts: &[ast::Stmt]) -> Vec<Stmt> {
        self.scopes.push(HashMap::new());
        let mut out = Vec::new();
        for s in stmts {
            self.stmt(s, &mut out);
        }
        self.scopes.pop();
        out
    }

    /// A statement used as a body (`if`, `while`, `for`): its own scope.
    fn body(&mut self, s: &ast::Stmt) -> BlockId {
        let stmts = match &s.kind {
            S::Block(b) => self.block_stmts(&b.stmts),
            _ => self.block_stmts(std::slice::from_ref(s)),
        };
        self.new_block(stmts)
    }

    fn stmt(&mut self, s: &ast::Stmt, out: &mut Vec<Stmt>) {
        let span = s.span.clone();
        match &s.kind {
            S::Decl { ty, name, init } => {
                let ty = ty_of(*ty);
                self.note_generic(ty);
                // `int old = atomic_add(A[i], v);` is checked once `old` is declared.
                let atomic = init.as_ref().and_then(atomic_call);
                let init = init
                    .as_ref()
                    .filter(|_| atomic.is_none())
                    .map(|e| self.expr(e).and_then(|e| self.convert(e, ty)));
                if BUILTINS.iter().any(|(b, _)| *b == name.name)
                    || self.kernel.array(&name.name).is_some()
                    || self.kernel.param(&name.name).is_some()
                {
                    self.error(Diagnostic::new(
                        format!(
                            "`{}` already names a parameter or builtin; choose another name",
                            name.name
                        ),
                        name.span.clone(),
                    ));
                    return;
                }
                if let Some(&prev) = self.scopes.last().and_then(|sc| sc.get(&name.name)) {
                    let prev_span = self.kernel.vars[prev].span.clone();
                    self.error(
                        Diagnostic::new(
                            format!("`{}` is declared twice in the same block", name.name),
                            name.span.clone(),
                        )
                        .with_label(prev_span, "first declared here"),
                    );
                    return;
                }
                let var = self.kernel.vars.len();
                self.kernel.vars.push(VarDecl {
                    name: name.name.clone(),
                    ty,
                    span: name.span.clone(),
                    fresh_in: None,
                });
                if init.is_none() && atomic.is_none() {
                    if let Some(fresh) = self.loop_fresh.last_mut() {
                        fresh.push(var);
                    }
                }
                self.scopes
                    .last_mut()
                    .expect("a scope is open")
                    .insert(name.name.clone(), var);
                // A declaration without initialiser is no step: the variable keeps the
                // default value it starts with (see the interpreter's `Value::default_of`),
                // or under `--uninit check` stays undefined, made undefined again at each
                // entry into the loop body that declares it (`VarDecl::fresh_in`).
                if let Some(Ok(value)) = init {
                    out.push(Stmt {
                        kind: StmtKind::Assign { var, value },
                        span: span.clone(),
                    });
                }
                if let Some((op, args)) = atomic {
                    if let Ok(kind) = self.atomic(op, args, Some(var), &span) {
                        out.push(Stmt { kind, span });
                    }
                }
            }
            S::Assign {
                target: LValue::Var(name),
                op: AssignOp::Set,
                value,
            } if atomic_call(value).is_some() => {
                let (op, args) = atomic_call(value).expect("an atomic call");
                let Some(var) = self.lookup_var(&name.name) else {
                    self.error(Diagnostic::new(
                        format!("unknown variable `{}`", name.name),
                        name.span.clone(),
                    ));
                    return;
                };
                if let Ok(kind) = self.atomic(op, args, Some(var), &span) {
                    out.push(Stmt { kind, span });
                }
            }
            S::Call(call) if annotation_call(call).is_some() => {
                let (annotation, args) = annotation_call(call).expect("an annotation");
                match args {
                    [c] => {
                        if let Ok(cond) = self.cond(c) {
                            out.push(Stmt {
                                kind: StmtKind::Check { annotation, cond },
                                span,
                            });
                        }
                    }
                    _ => self.error(Diagnostic::new(
                        format!("`{}` takes one condition", annotation.name()),
                        span,
                    )),
                }
            }
            S::Call(ast::Expr {
                kind: ast::ExprKind::Call { func, args },
                ..
            }) if func.name.starts_with("__store_") => {
                if let Ok(kind) = self.store_at(func, args, &span) {
                    out.push(Stmt { kind, span });
                }
            }
            S::Call(call) if perm_call(call).is_some() => {
                let (op, args) = perm_call(call).expect("a permission statement");
                if let Ok(kind) = self.perm(op, args, &span) {
                    out.push(Stmt { kind, span });
                }
            }
            S::Call(call) => match atomic_call(call) {
                Some((op, args)) => {
                    if let Ok(kind) = self.atomic(op, args, None, &span) {
                        out.push(Stmt { kind, span });
                    }
                }
                None => {
                    // Checked as an expression for its own errors; a pure call has no effect.
                    if self.expr(call).is_ok() {
                        self.error(Diagnostic::new(
                            "this call has no effect: only atomic functions (`atomic_add(A[i], v);`, ...) can be statements",
                            span,
                        ));
                    }
                }
            },
            S::Assign { target, op, value } => {
                let value = self.expr(value);
                if let Ok(st) = self.assign(target, *op, value, &span) {
                    out.push(Stmt { kind: st, span });
                }
            }
            S::Step { target, decrement } => {
                let one = ast::Expr {
                    kind: ast::ExprKind::Int {
                        value: 1,
                        unsigned: false,
                    },
                    span: span.clone(),
                };
                let op = if *decrement { BinOp::Sub } else { BinOp::Add };
                let value = self.expr(&one);
                if let Ok(st) = self.assign(target, AssignOp::Compound(op), value, &span) {
                    out.push(Stmt { kind: st, span });
                }
            }
            S::If { arms, els } => {
                // The core `if` has two branches (Figure 4): the chain
                // `if (c1) s1 else if (c2) s2 ... else t` becomes
                // `if (c1) {s1} else {if (c2) {s2} else {... {t}}}`, built from the last arm
                // back in a loop (a chain may have thousands of arms). The `if` of arm k
                // spans from its `if` to the end of the chain.
                let checked: Vec<_> = arms
                    .iter()
                    .map(|arm| (self.cond(&arm.cond), self.body(&arm.then), arm.span.start))
                    .collect();
                let mut els = match els {
                    Some(e) => self.body(e),
                    None => self.new_block(Vec::new()),
                };
                let mut first = None;
                for (k, (cond, then, start)) in checked.into_iter().enumerate().rev() {
                    let Ok(cond) = cond else { continue };
                    let stmt = Stmt {
                        kind: StmtKind::If { cond, then, els },
                        span: start..span.end,
                    };
                    if k == 0 {
                        first = Some(stmt);
                    } else {
                        els = self.new_block(vec![stmt]);
                    }
                }
                out.extend(first);
            }
            S::While { cond, body } => {
                let cond = self.cond(cond);
                self.loop_fresh.push(Vec::new());
                let body = self.body(body);
                self.fresh_in(body);
                if let Ok(cond) = cond {
                    out.push(Stmt {
                        kind: StmtKind::While { cond, body },
                        span,
                    });
                }
            }
            S::For {
                init,
                cond,
                step,
                body,
            } => {
                // for (init; cond; step) body  ==>  { init; while (cond) { body; step } }
                let body_start = body.span.start;
                self.scopes.push(HashMap::new());
                if let Some(init) = init {
                    self.stmt(init, out);
                }
                let cond = match cond {
                    Some(c) => self.cond(c),
                    None => Ok(Expr {
                        kind: ExprKind::Lit(Lit::Bool(true)),
                        ty: Ty::Bool,
                        span: span.clone(),
                    }),
                };
                self.loop_fresh.push(Vec::new());
                let mut stmts = match &body.kind {
                    S::Block(b) => self.block_stmts(&b.stmts),
                    _ => self.block_stmts(std::slice::from_ref(body)),
                };
                if let Some(step) = step {
                    self.stmt(step, &mut stmts);
                }
                let body = self.new_block(stmts);
                self.fresh_in(body);
                self.scopes.pop();
                if let Ok(cond) = cond {
                    // The loop's span is the `for (...)` header, up to its body.
                    out.push(Stmt {
                        kind: StmtKind::While { cond, body },
                        span: span.start..body_start,
                    });
                }
            }
            S::Block(b) => {
                let stmts = self.block_stmts(&b.stmts);
                out.extend(stmts);
            }
            S::Barrier(fence) => out.push(Stmt {
                kind: StmtKind::Barrier {
                    fence: *fence,
                    flags: None,
                },
                span,
            }),
            S::BarrierFlags(e) => {
                // A variable, so that every engine reads a thread's flags where it waits.
                let var = match &e.kind {
                    ast::ExprKind::Name(n) => self.lookup_var(n),
                    _ => None,
                };
                match var {
                    Some(v) if self.kernel.vars[v].ty.is_integer() => out.push(Stmt {
                        kind: StmtKind::Barrier {
                            fence: crate::core::Fence {
                                local: false,
                                global: false,
                            },
                            flags: Some(v),
                        },
                        span,
                    }),
                    _ => self.error(Diagnostic::new(
                        "`barrier` takes `local`, `global`, `local | global`, nothing, or an \
                         integer variable holding OpenCL fence flags (1 local, 2 global)",
                        e.span.clone(),
                    )),
                }
            }
        }
    }

    fn assign(
        &mut self,
        target: &LValue,
        op: AssignOp,
        value: Res<Expr>,
        span: &Span,
    ) -> Res<StmtKind> {
        match target {
            LValue::Var(name) => {
                let Some(var) = self.lookup_var(&name.name) else {
                    let what = if self.kernel.param(&name.name).is_some() {
                        "a parameter, which is read-only"
                    } else if BUILTINS.iter().any(|(b, _)| *b == name.name) {
                        "a builtin, which is read-only"
                    } else if self.kernel.array(&name.name).is_some() {
                        "an array: assign to an element, e.g. `A[i] = ...`"
                    } else {
                        return self.err(format!("unknown variable `{}`", name.name), &name.span);
                    };
                    return self.err(
                        format!("cannot assign to `{}`: it is {what}", name.name),
                        &name.span,
                    );
                };
                let ty = self.kernel.vars[var].ty;
                let current = Expr {
                    kind: ExprKind::Var(var),
                    ty,
                    span: name.span.clone(),
                };
                let value = self.compound(op, current, value?, span)?;
                let value = self.convert(value, ty)?;
                Ok(StmtKind::Assign { var, value })
            }
            LValue::Elem { array, indices } => {
                let (a, index) = self.element(array, indices)?;
                let decl = &self.kernel.arrays[a];
                if decl.is_const {
                    let decl_span = decl.span.clone();
                    self.error(
                        Diagnostic::new(
                            format!("cannot write to `{}`: it is declared const", array.name),
                            span.clone(),
                        )
                        .with_label(decl_span, "declared const here"),
                    );
                    return Err(());
                }
                let ty = decl.elem;
                let current = Expr {
                    kind: ExprKind::Load {
                        array: a,
                        index: index.clone(),
                    },
                    ty,
                    span: array.span.start..span.end,
                };
                let value = self.compound(op, current, value?, span)?;
                let value = self.convert(value, ty)?;
                Ok(StmtKind::Store {
                    array: a,
                    index,
                    value,
                })
            }
        }
    }

    /// `[result =] op(A[i], args...)`: S-ATOMIC on an `int`/`uint` element of a writable
    /// array; the operands are converted to the element's type, and the result variable
    /// must have that type.
    /// `__perm_take(A[i], num, den)` (`__perm_read(A[i])` for the checks of an access).
    fn perm(&mut self, op: PermOp, args: &[ast::Expr], span: &Span) -> Res<StmtKind> {
        let name = op.name();
        let want = if op.moves() { 3 } else { 1 };
        let element = match args {
            [e, ..] if args.len() == want => match &e.kind {
                ast::ExprKind::Index { array, indices } => Some((array, indices)),
                _ => None,
            },
            _ => None,
        };
        let Some((array, indices)) = element else {
            return self.err(
                format!(
                    "`{name}` takes an array element `A[i]`{}",
                    if op.moves() {
                        " and a fraction's numerator and denominator"
                    } else {
                        ""
                    }
                ),
                span,
            );
        };
        let (array, index) = self.element(array, indices)?;
        let mut amount = Vec::new();
        for a in &args[1..] {
            let e = self.expr(a)?;
            if !e.ty.is_integer() {
                return self.err("a fraction's parts must be integers", &a.span);
            }
            amount.push(cast(e, Ty::Long));
        }
        let one = || Expr {
            kind: ExprKind::Lit(Lit::Long(1)),
            ty: Ty::Long,
            span: span.clone(),
        };
        let den = amount.pop().unwrap_or_else(one);
        let num = amount.pop().unwrap_or_else(one);
        Ok(StmtKind::Perm {
            op,
            array,
            index,
            amount: [num, den],
        })
    }

    fn atomic(
        &mut self,
        op: AtomicOp,
        args: &[ast::Expr],
        result: Option<VarId>,
        span: &Span,
    ) -> Res<StmtKind> {
        let name = op.name();
        let want = 1 + op.operands();
        if args.len() != want {
            return self.err(
                format!(
                    "`{name}` takes {want} argument{}: an array element{}",
                    if want == 1 { "" } else { "s" },
                    match op.operands() {
                        0 => "",
                        1 => " and a value",
                        _ => ", the value to compare with and the new value",
                    }
                ),
                span,
            );
        }
        let ast::ExprKind::Index { array, indices } = &args[0].kind else {
            return self.err(
                format!("the first argument of `{name}` must be an array element, e.g. `A[i]`"),
                &args[0].span,
            );
        };
        let (a, index) = self.element(array, indices)?;
        let decl = &self.kernel.arrays[a];
        let (elem, is_const, decl_span) = (decl.elem, decl.is_const, decl.span.clone());
        if is_const {
            self.error(
                Diagnostic::new(
                    format!(
                        "`{name}` cannot write to `{}`: it is declared const",
                        array.name
                    ),
                    args[0].span.clone(),
                )
                .with_label(decl_span, "declared const here"),
            );
            return Err(());
        }
        // `atomic_xchg` also exchanges `float` bits (OpenCL C 1.2, §6.12.11).
        let float_xchg = op == AtomicOp::Xchg && elem == Ty::Float;
        if !matches!(elem, Ty::Int | Ty::Uint | Ty::Long | Ty::Ulong) && !float_xchg {
            return self.err(
                format!(
                    "`{name}` works on `int`, `uint`, `long` and `ulong` elements (`atomic_xchg` on `float` too); `{}` holds `{}`",
                    array.name,
                    elem.name()
                ),
                &args[0].span,
            );
        }
        let operands: Vec<Res<Expr>> = args[1..]
            .iter()
            .map(|x| self.expr(x).and_then(|x| self.convert(x, elem)))
            .collect();
        let operands = operands.into_iter().collect::<Res<Vec<Expr>>>()?;
        if let Some(v) = result {
            let vt = self.kernel.vars[v].ty;
            if vt != elem {
                return self.err(
                    format!(
                        "`{name}` returns the old `{}` value of `{}`, but `{}` is a `{}` variable",
                        elem.name(),
                        array.name,
                        self.kernel.vars[v].name,
                        vt.name()
                    ),
                    span,
                );
            }
        }
        Ok(StmtKind::Atomic {
            op,
            array: a,
            index,
            args: operands,
            result,
        })
    }

    fn compound(&mut self, op: AssignOp, current: Expr, value: Expr, span: &Span) -> Res<Expr> {
        match op {
            AssignOp::Set => Ok(value),
            AssignOp::Compound(op) => self.binary(op, current, value, span),
        }
    }

    /// Resolves `A[i]` / `A[i][j]`: the array and its integer indices.
    fn element(&mut self, array: &ast::Ident, indices: &[ast::Expr]) -> Res<(usize, Vec<Expr>)> {
        let Some(a) = self.kernel.array(&array.name) else {
            return self.err(format!("unknown array `{}`", array.name), &array.span);
        };
        let dims = self.kernel.arrays[a].dims.len().max(1);
        let mut index = Vec::new();
        let mut ok = true;
        for i in indices {
            match self.expr(i) {
                // A `char`/`short` index is promoted as in C; engines index with `int`,
                // `uint`, `long` and `ulong` values.
                Ok(e) if e.ty.is_integer() => {
                    let ty = e.ty.promote();
                    index.push(cast(e, ty))
                }
                Ok(e) if e.ty == Ty::Generic => {
                    ok = false;
                    self.generic_misuse("an array index", &e.span);
                }
                Ok(e) => {
                    ok = false;
                    let msg = format!("an array index must be an integer, not `{}`", e.ty.name());
                    self.error(Diagnostic::new(msg, e.span.clone()));
                }
                Err(()) => ok = false,
            }
        }
        if indices.len() != dims {
            return self.err(
                format!(
                    "`{}` has {dims} dimension{} but is indexed with {}",
                    array.name,
                    if dims == 1 { "" } else { "s" },
                    indices.len()
                ),
                &array.span,
            );
        }
        if ok {
            Ok((a, index))
        } else {
            Err(())
        }
    }

    fn generic_misuse(&mut self, place: &str, span: &Span) {
        self.error(
            Diagnostic::new(
                format!("a value of the generic type `T` cannot be used as {place}"),
                span.clone(),
            )
            .with_note(
                "generic kernels may only combine `T` values with ⊕, the identity, \
                 assignments and `T` arrays (POPL 2014, Theorem 5.3)",
            ),
        );
    }

    /// A condition: `bool`, or a number compared with zero as in C; never `T`.
    fn cond(&mut self, e: &ast::Expr) -> Res<Expr> {
        let e = self.expr(e)?;
        if e.ty == Ty::Generic {
            self.generic_misuse("a condition", &e.span);
            return Err(());
        }
        Ok(cast(e, Ty::Bool))
    }

    /// An implicit conversion for assignment or initialisation.
    fn convert(&mut self, e: Expr, to: Ty) -> Res<Expr> {
        match (e.ty, to) {
            (a, b) if a == b => Ok(e),
            (Ty::Ptr, _) | (_, Ty::Ptr) => self.err(
                format!(
                    "a `{}` value where a `{}` is expected: a pointer converts to no other type",
                    e.ty.name(),
                    to.name()
                ),
                &e.span,
            ),
            (Ty::Generic, _) => {
                let place = format!("a `{}` value", to.name());
                self.generic_misuse(&place, &e.span);
                Err(())
            }
            (from, Ty::Generic) => self.err(
                format!(
                    "a `{}` value cannot be stored in a `T` location: only ⊕, `identity` and \
                     other `T` values produce `T`",
                    from.name()
                ),
                &e.span,
            ),
            _ => Ok(cast(e, to)),
        }
    }

    fn expr(&mut self, e: &ast::Expr) -> Res<Expr> {
        use ast::ExprKind as E;
        let span = e.span.clone();
        let mk = |kind, ty| Expr {
            kind,
            ty,
            span: span.clone(),
        };
        match &e.kind {
            // C's rule for a decimal literal: the first of `int`, `long` (`uint`, `ulong`
            // with a `u` suffix) that holds the value.
            E::Int { value, unsigned } => {
                if *unsigned {
                    match u32::try_from(*value) {
                        Ok(v) => Ok(mk(ExprKind::Lit(Lit::Uint(v)), Ty::Uint)),
                        Err(_) => Ok(mk(ExprKind::Lit(Lit::Ulong(*value)), Ty::Ulong)),
                    }
                } else {
                    match (i32::try_from(*value), i64::try_from(*value)) {
                        (Ok(v), _) => Ok(mk(ExprKind::Lit(Lit::Int(v)), Ty::Int)),
                        (_, Ok(v)) => Ok(mk(ExprKind::Lit(Lit::Long(v)), Ty::Long)),
                        _ => self.err(
                            "integer literal does not fit in `long` (add a `u` suffix for `ulong`)",
                            &span,
                        ),
                    }
                }
            }
            E::Float(f) => Ok(mk(ExprKind::Lit(Lit::Float(*f)), Ty::Float)),
            E::Double(f) => Ok(mk(ExprKind::Lit(Lit::Double(*f)), Ty::Double)),
            E::Bool(b) => Ok(mk(ExprKind::Lit(Lit::Bool(*b)), Ty::Bool)),
            E::Identity => {
                self.kernel.generic = true;
                if self.in_sizes {
                    return self.err("`identity` cannot appear in a size", &span);
                }
                Ok(mk(ExprKind::Identity, Ty::Generic))
            }
            E::Name(name) => self.name(name, &span),
            E::Index { array, indices } => {
                if self.in_sizes {
                    return self.err("array elements cannot appear in a size", &span);
                }
                let (a, index) = self.element(array, indices)?;
                let ty = self.kernel.arrays[a].elem;
                Ok(mk(ExprKind::Load { array: a, index }, ty))
            }
            E::Unary(op, a) => {
                // -2147483648 is INT_MIN, although 2147483648 alone is no `int`.
                if let (
                    UnOp::Neg,
                    E::Int {
                        value: 2147483648,
                        unsigned: false,
                    },
                ) = (op, &a.kind)
                {
                    return Ok(mk(ExprKind::Lit(Lit::Int(i32::MIN)), Ty::Int));
                }
                let a = self.expr(a)?;
                let ty = match (op, a.ty) {
                    (_, Ty::Generic) => {
                        let place = format!("the operand of `{}`", unop_symbol(*op));
                        self.generic_misuse(&place, &a.span);
                        return Err(());
                    }
                    (UnOp::Not, _) => Ty::Bool,
                    (_, Ty::Ptr) => {
                        let msg = format!("`{}` on a pointer", unop_symbol(*op));
                        return self.err(msg, &span);
                    }
                    (UnOp::BitNot, t) if t.is_float() => {
                        let msg = format!("`~` needs an integer operand, not `{}`", t.name());
                        return self.err(msg, &span);
                    }
                    (_, t) => t.promote(),
                };
                let a = cast(a, if *op == UnOp::Not { Ty::Bool } else { ty });
                Ok(mk(ExprKind::Unary(*op, Box::new(a)), ty))
            }
            E::Binary(op, a, b) => {
                let (a, b) = (self.expr(a), self.expr(b));
                self.binary(*op, a?, b?, &span)
            }
            E::Cond(c, a, b) => {
                let c = self.cond(c);
                let (a, b) = (self.expr(a), self.expr(b));
                let (c, a, b) = (c?, a?, b?);
                let ty = match (a.ty, b.ty) {
                    (x, y) if x == y => x,
                    (Ty::Generic, _) | (_, Ty::Generic) => {
                        return self.err("both branches of `?:` must be `T` when one is `T`", &span)
                    }
                    (Ty::Ptr, _) | (_, Ty::Ptr) => {
                        return self
                            .err("both branches of `?:` must be pointers when one is", &span)
                    }
                    (x, y) => common(x, y),
                };
                Ok(mk(
                    ExprKind::Cond(Box::new(c), Box::new(cast(a, ty)), Box::new(cast(b, ty))),
                    ty,
                ))
            }
            E::Cast(t, a) => {
                let a = self.expr(a)?;
                let ty = ty_of(*t);
                if a.ty == Ty::Generic || ty == Ty::Generic {
                    self.generic_misuse("the operand of a cast", &a.span);
                    return Err(());
                }
                if (a.ty == Ty::Ptr) != (ty == Ty::Ptr) && ty != Ty::Bool {
                    return self.convert(a, ty);
                }
                Ok(cast(a, ty))
            }
            E::Call { func, args } => self.call(func, args, &span),
        }
    }

    fn name(&mut self, name: &str, span: &Span) -> Res<Expr> {
        let mk = |kind, ty| Expr {
            kind,
            ty,
            span: span.clone(),
        };
        if !self.in_sizes {
            if let Some(v) = self.lookup_var(name) {
                return Ok(mk(ExprKind::Var(v), self.kernel.vars[v].ty));
            }
        }
        if let Some(p) = self.kernel.param(name) {
            return Ok(mk(ExprKind::Param(p), self.kernel.params[p].ty));
        }
        if let Some(&(_, b)) = BUILTINS.iter().find(|(n, _)| *n == name) {
            if self.in_sizes && !(self.in_array_sizes && b == Builtin::LocalSize) {
                return self.err(
                    format!("`{name}` differs between threads and cannot appear in a size"),
                    span,
                );
            }
            return Ok(mk(ExprKind::Builtin(b), Ty::Int));
        }
        if self.kernel.array(name).is_some() {
            return self.err(
                format!("`{name}` is an array: read an element, e.g. `{name}[i]`"),
                span,
            );
        }
        if self.in_sizes {
            // A free name in a size is a size parameter, bound at launch with -D.
            self.kernel.params.push(ParamDecl {
                name: name.to_string(),
                ty: Ty::Int,
                kind: ParamKind::Size,
                span: span.clone(),
            });
            return Ok(mk(ExprKind::Param(self.kernel.params.len() - 1), Ty::Int));
        }
        let sizes: Vec<_> = self.kernel.params.iter().map(|p| p.name.as_str()).collect();
        self.error(
            Diagnostic::new(format!("unknown name `{name}`"), span.clone()).with_note(format!(
                "names in scope here are declared variables, the parameters ({}) and the \
                 builtins tid, gid, group_id, local_size, num_groups; size parameters are the \
                 free names of array sizes and launch(...)",
                if sizes.is_empty() {
                    "none".into()
                } else {
                    sizes.join(", ")
                }
            )),
        );
        Err(())
    }

    fn call(&mut self, func: &ast::Ident, args: &[ast::Expr], span: &Span) -> Res<Expr> {
        let f = func.name.as_str();
        let query = DimQuery::ALL.into_iter().find(|q| q.name() == f);
        if query.is_some() || f == "get_work_dim" {
            if self.in_sizes {
                return self.err(format!("`{f}` cannot appear in a size"), span);
            }
            let b = match (query, args) {
                (None, []) => Builtin::WorkDim,
                (None, _) => return self.err("`get_work_dim` takes no arguments", span),
                (
                    Some(q),
                    [ast::Expr {
                        kind: ast::ExprKind::Int { value, .. },
                        ..
                    }],
                ) if *value < 3 => Builtin::Dim(q, *value as u8),
                (Some(_), _) => {
                    return self.err(
                        format!("`{f}` takes a dimension: the literal 0, 1 or 2"),
                        span,
                    )
                }
            };
            return Ok(Expr {
                kind: ExprKind::Builtin(b),
                ty: Ty::Int,
                span: span.clone(),
            });
        }
        if AtomicOp::ALL.iter().any(|op| op.name() == f) {
            return self.err(
                format!(
                    "`{f}` must be a statement of its own (`{f}(A[i], v);`) or the whole \
                     right-hand side of an assignment to a variable (`old = {f}(A[i], v);`)"
                ),
                span,
            );
        }
        if let Some(to) = f.strip_prefix("as_").and_then(scalar_ty) {
            return self.reinterpret(f, to, args, span);
        }
        if let Some(e) = self.pointer_call(f, args, span) {
            return e;
        }
        if let Some(m) = MathFn::from_name(f) {
            if let Some(e) = self.math(m, args, span)? {
                return Ok(e);
            }
        }
        if let Some(g) = IntFn::from_name(f) {
            return self.int_fn(g, args, span);
        }
        let arity = match f {
            "log2" => 1,
            "min" | "max" => 2,
            _ => {
                return self.err(
                    format!(
                        "unknown function `{f}` (builtin functions: log2, min, max, clz, popcount, \
                         mul_hi, mad_hi, mad_sat, rotate, upsample, \
                         get_local_id, get_global_id, get_group_id, get_local_size, \
                         get_num_groups, get_global_size, get_global_offset, get_work_dim, \
                         atomic_add, atomic_sub, atomic_xchg, atomic_inc, atomic_dec, \
                         atomic_cmpxchg, atomic_min, atomic_max, atomic_and, atomic_or, atomic_xor, \
                         OpenCL's float math functions: sqrt, exp, pow, fmin, ..., and the bit views as_int, \
                         as_float, as_ulong, as_double, ...)"
                    ),
                    &func.span,
                )
            }
        };
        if args.len() != arity {
            return self.err(
                format!(
                    "`{f}` takes {arity} argument{}",
                    if arity == 1 { "" } else { "s" }
                ),
                span,
            );
        }
        let args: Vec<Res<Expr>> = args.iter().map(|a| self.expr(a)).collect();
        let mut args: Vec<Expr> = args.into_iter().collect::<Res<_>>()?;
        for a in &args {
            if a.ty == Ty::Generic {
                let place = format!("an argument of `{f}`");
                self.generic_misuse(&place, &a.span);
                return Err(());
            }
        }
        let mk = |kind, ty| Expr {
            kind,
            ty,
            span: span.clone(),
        };
        if f == "log2" {
            let a = args.pop().expect("one argument");
            let a = if a.ty.is_integer() {
                let ty = a.ty.promote();
                cast(a, ty)
            } else {
                a
            };
            if !matches!(a.ty, Ty::Int | Ty::Uint) {
                return self.err("`log2` takes an integer", &a.span);
            }
            // The argument keeps its type: converting a `uint` above INT_MAX to `int`
            // would make it negative (log2(3000000000u) would be 0, not 31). The result
            // (0..31) is an `int` either way.
            return Ok(mk(ExprKind::Log2(Box::new(a)), Ty::Int));
        }
        let b = args.pop().expect("two arguments");
        let a = args.pop().expect("two arguments");
        let ty = common(a.ty, b.ty);
        let (a, b) = (Box::new(cast(a, ty)), Box::new(cast(b, ty)));
        Ok(mk(
            if f == "min" {
                ExprKind::Min(a, b)
            } else {
                ExprKind::Max(a, b)
            },
            ty,
        ))
    }

    /// `as_T(e)`: the bits of `e` as a `T` of the same size (OpenCL C §6.2.4.2). Between
    /// integer types that is C's conversion (which keeps the bits at one width); with a
    /// `float` or `double` on either side it is [`ExprKind::Bits`].
    fn reinterpret(&mut self, f: &str, to: Ty, args: &[ast::Expr], span: &Span) -> Res<Expr> {
        let [a] = args else {
            return self.err(format!("`{f}` takes 1 argument"), span);
        };
        let a = self.expr(a)?;
        if a.ty == Ty::Generic || a.ty == Ty::Bool {
            let place = format!("the argument of `{f}`");
            if a.ty == Ty::Generic {
                self.generic_misuse(&place, &a.span);
                return Err(());
            }
            return self.err(
                format!("{place} is a `bool`, which has no bits to view"),
                &a.span,
            );
        }
        let (sa, st) = (a.ty.size(), to.size());
        if sa != st {
            return self.err(
                format!(
                    "`{f}` needs an operand of {} bytes, as a `{}` has; this one is a `{}` \
                     ({} bytes)",
                    st.unwrap_or(0),
                    to.name(),
                    a.ty.name(),
                    sa.unwrap_or(0)
                ),
                &a.span,
            );
        }
        if a.ty == to || (a.ty.is_integer() && to.is_integer()) {
            return Ok(cast(a, to));
        }
        Ok(Expr {
            kind: ExprKind::Bits(Box::new(a)),
            ty: to,
            span: span.clone(),
        })
    }

    /// A floating-point math function: its operands converted to `float`. `None` for
    /// `log2` of an integer, which is `.ksim`'s integer logarithm.
    fn math(&mut self, m: MathFn, args: &[ast::Expr], span: &Span) -> Res<Option<Expr>> {
        if args.len() != m.arity() {
            return self.err(
                format!(
                    "`{}` takes {} argument{}",
                    m.name(),
                    m.arity(),
                    if m.arity() == 1 { "" } else { "s" }
                ),
                span,
            );
        }
        let args: Vec<Res<Expr>> = args.iter().map(|a| self.expr(a)).collect();
        let args: Vec<Expr> = args.into_iter().collect::<Res<_>>()?;
        if m == MathFn::Log2 && matches!(args[0].ty, Ty::Int | Ty::Uint) {
            return Ok(None);
        }
        for a in &args {
            if a.ty == Ty::Generic {
                let place = format!("an argument of `{}`", m.name());
                self.generic_misuse(&place, &a.span);
                return Err(());
            }
        }
        let args = args.into_iter().map(|a| cast(a, Ty::Float)).collect();
        Ok(Some(Expr {
            kind: ExprKind::Math(m, args),
            ty: Ty::Float,
            span: span.clone(),
        }))
    }

    /// An integer function: its operands converted to their one integer type (C's usual
    /// arithmetic conversions, without promoting `char` and `short`, whose width the
    /// function counts in: `clz((uchar)1)` is 7); `upsample`'s `lo` to the unsigned type
    /// of `hi`'s.
    fn int_fn(&mut self, g: IntFn, args: &[ast::Expr], span: &Span) -> Res<Expr> {
        if args.len() != g.arity() {
            return self.err(
                format!(
                    "`{}` takes {} argument{}",
                    g.name(),
                    g.arity(),
                    if g.arity() == 1 { "" } else { "s" }
                ),
                span,
            );
        }
        let args: Vec<Res<Expr>> = args.iter().map(|a| self.expr(a)).collect();
        let args: Vec<Expr> = args.into_iter().collect::<Res<_>>()?;
        for a in &args {
            if !a.ty.is_integer() {
                return self.err(
                    format!("`{}` takes integers; this is a `{}`", g.name(), a.ty.name()),
                    &a.span,
                );
            }
        }
        let gen = if g == IntFn::Upsample || args.iter().all(|a| a.ty == args[0].ty) {
            args[0].ty
        } else {
            args.iter()
                .map(|a| a.ty)
                .reduce(common)
                .expect("one operand")
        };
        let Some(ty) = g.result(gen) else {
            return self.err(
                format!("`{}` has no version for `{}`", g.name(), gen.name()),
                &args[0].span,
            );
        };
        let unsigned = |t: Ty| match t {
            Ty::Char => Ty::Uchar,
            Ty::Short => Ty::Ushort,
            Ty::Int => Ty::Uint,
            Ty::Long => Ty::Ulong,
            t => t,
        };
        let args = args
            .into_iter()
            .enumerate()
            .map(|(i, a)| {
                let t = if g == IntFn::Upsample && i == 1 {
                    unsigned(gen)
                } else {
                    gen
                };
                cast(a, t)
            })
            .collect();
        Ok(Expr {
            kind: ExprKind::IntFn(g, args),
            ty,
            span: span.clone(),
        })
    }

    /// The pointer functions (docs/language.md, "Pointer values in the core"):
    /// `__null()`, `__addr(A, e)` (`&A[e]`, `e` counted over the whole array),
    /// `__deref_T(p)` (`*p` read as a `T`); `None` for other functions.
    fn pointer_call(&mut self, f: &str, args: &[ast::Expr], span: &Span) -> Option<Res<Expr>> {
        let mk = |kind, ty| Expr {
            kind,
            ty,
            span: span.clone(),
        };
        if self.in_sizes && (f == "__null" || f == "__addr" || f.starts_with("__deref_")) {
            return Some(self.err(format!("`{f}` cannot appear in a size"), span));
        }
        Some(match (f, args) {
            ("__null", []) => Ok(mk(ExprKind::Null, Ty::Ptr)),
            ("__addr", [a, off]) => {
                let ast::ExprKind::Name(name) = &a.kind else {
                    return Some(self.err("`__addr` takes an array name first", &a.span));
                };
                let Some(array) = self.kernel.array(name) else {
                    return Some(self.err(format!("`{name}` is no array"), &a.span));
                };
                let off = match self.expr(off) {
                    Ok(o) if o.ty.is_integer() => {
                        let ty = if o.ty.int_bits().is_some_and(|(b, _)| b == 64) {
                            Ty::Long
                        } else {
                            Ty::Int
                        };
                        cast(o, ty)
                    }
                    Ok(o) => return Some(self.err("`__addr` takes an integer offset", &o.span)),
                    Err(()) => return Some(Err(())),
                };
                Ok(mk(
                    ExprKind::Addr {
                        array,
                        offset: Box::new(off),
                    },
                    Ty::Ptr,
                ))
            }
            _ => {
                let ty = f.strip_prefix("__deref_").and_then(pointee_ty)?;
                let [p] = args else {
                    return Some(self.err(format!("`{f}` takes one pointer"), span));
                };
                let p = match self.expr(p) {
                    Ok(p) if p.ty == Ty::Ptr => p,
                    Ok(p) => return Some(self.err(format!("`{f}` takes a pointer"), &p.span)),
                    Err(()) => return Some(Err(())),
                };
                Ok(mk(ExprKind::Deref(Box::new(p)), ty))
            }
        })
    }

    /// `__store_T(p, v);`: `*p = v` with `v` converted to `T` ([`StmtKind::StoreAt`]).
    fn store_at(&mut self, func: &ast::Ident, args: &[ast::Expr], span: &Span) -> Res<StmtKind> {
        let Some(ty) = func.name.strip_prefix("__store_").and_then(pointee_ty) else {
            return self.err(format!("unknown function `{}`", func.name), &func.span);
        };
        let [p, v] = args else {
            return self.err(format!("`{}` takes a pointer and a value", func.name), span);
        };
        let (p, v) = (self.expr(p), self.expr(v));
        let (ptr, v) = (p?, v?);
        if ptr.ty != Ty::Ptr {
            return self.err(format!("`{}` takes a pointer first", func.name), &ptr.span);
        }
        let value = self.convert(v, ty)?;
        Ok(StmtKind::StoreAt { ptr, value })
    }

    /// A binary operator with a pointer operand: `p + i`, `i + p`, `p - i` move the
    /// pointer by `i` elements ([`ExprKind::PtrAdd`]); `==`, `!=`, `<`, ... compare two
    /// pointers; `&&`, `||` test them against null. Anything else is an error.
    fn pointer_binary(&mut self, op: BinOp, a: Expr, b: Expr, span: &Span) -> Res<Expr> {
        use BinOp::*;
        let mk = |kind, ty| Expr {
            kind,
            ty,
            span: span.clone(),
        };
        let offset = |e: Expr| {
            let ty = if e.ty.int_bits().is_some_and(|(bits, _)| bits == 64) {
                Ty::Long
            } else {
                Ty::Int
            };
            cast(e, ty)
        };
        match (op, a.ty, b.ty) {
            (LogAnd | LogOr, _, _) => Ok(mk(
                ExprKind::Binary(op, Box::new(cast(a, Ty::Bool)), Box::new(cast(b, Ty::Bool))),
                Ty::Bool,
            )),
            (Lt | Le | Gt | Ge | Eq | Ne, Ty::Ptr, Ty::Ptr) => {
                Ok(mk(ExprKind::Binary(op, Box::new(a), Box::new(b)), Ty::Bool))
            }
            (Add, Ty::Ptr, t) if t.is_integer() || t == Ty::Bool => Ok(mk(
                ExprKind::PtrAdd(Box::new(a), Box::new(offset(b))),
                Ty::Ptr,
            )),
            (Add, t, Ty::Ptr) if t.is_integer() || t == Ty::Bool => Ok(mk(
                ExprKind::PtrAdd(Box::new(b), Box::new(offset(a))),
                Ty::Ptr,
            )),
            (Sub, Ty::Ptr, t) if t.is_integer() || t == Ty::Bool => {
                let k = offset(b);
                let ty = k.ty;
                let neg = mk(ExprKind::Unary(UnOp::Neg, Box::new(k)), ty);
                Ok(mk(ExprKind::PtrAdd(Box::new(a), Box::new(neg)), Ty::Ptr))
            }
            _ => self.err(
                format!(
                    "`{}` of a `{}` and a `{}`: pointers take `+`/`-` of an integer and \
                     comparisons with pointers only (pointer differences are not supported yet)",
                    op.symbol(),
                    a.ty.name(),
                    b.ty.name()
                ),
                span,
            ),
        }
    }

    fn binary(&mut self, op: BinOp, a: Expr, b: Expr, span: &Span) -> Res<Expr> {
        use BinOp::*;
        let mk = |kind, ty| Expr {
            kind,
            ty,
            span: span.clone(),
        };
        if op == Combine {
            for e in [&a, &b] {
                if e.ty != Ty::Generic {
                    return self.err(
                        format!(
                            "`⊕` combines values of the generic type `T`, not `{}`",
                            e.ty.name()
                        ),
                        &e.span,
                    );
                }
            }
            self.kernel.generic = true;
            return Ok(mk(
                ExprKind::Binary(op, Box::new(a), Box::new(b)),
                Ty::Generic,
            ));
        }
        for e in [&a, &b] {
            if e.ty == Ty::Generic {
                let place = format!("an operand of `{}`", op.symbol());
                self.generic_misuse(&place, &e.span);
                return Err(());
            }
        }
        if a.ty == Ty::Ptr || b.ty == Ty::Ptr {
            return self.pointer_binary(op, a, b, span);
        }
        match op {
            LogAnd | LogOr => Ok(mk(
                ExprKind::Binary(op, Box::new(cast(a, Ty::Bool)), Box::new(cast(b, Ty::Bool))),
                Ty::Bool,
            )),
            Lt | Le | Gt | Ge | Eq | Ne => {
                // `bool == bool` stays on `bool`; everything else compares promoted.
                let ty = if a.ty == Ty::Bool && b.ty == Ty::Bool && matches!(op, Eq | Ne) {
                    Ty::Bool
                } else {
                    common(a.ty, b.ty)
                };
                Ok(mk(
                    ExprKind::Binary(op, Box::new(cast(a, ty)), Box::new(cast(b, ty))),
                    Ty::Bool,
                ))
            }
            Shl | Shr => {
                let ty = a.ty.promote();
                if ty.is_float() || b.ty.is_float() {
                    return self.err(format!("`{}` needs integer operands", op.symbol()), span);
                }
                Ok(mk(
                    ExprKind::Binary(op, Box::new(cast(a, ty)), Box::new(cast(b, ty))),
                    ty,
                ))
            }
            Rem | BitAnd | BitOr | BitXor => {
                let ty = common(a.ty, b.ty);
                if ty.is_float() {
                    return self.err(format!("`{}` needs integer operands", op.symbol()), span);
                }
                Ok(mk(
                    ExprKind::Binary(op, Box::new(cast(a, ty)), Box::new(cast(b, ty))),
                    ty,
                ))
            }
            Add | Sub | Mul | Div => {
                let ty = common(a.ty, b.ty);
                Ok(mk(
                    ExprKind::Binary(op, Box::new(cast(a, ty)), Box::new(cast(b, ty))),
                    ty,
                ))
            }
            Combine => unreachable!("handled above"),
        }
    }
}

/// The common type of two non-generic operands (C's usual arithmetic conversions, after
/// the integer promotions).
fn common(a: Ty, b: Ty) -> Ty {
    Ty::common(a, b)
}

fn unop_symbol(op: UnOp) -> &'static str {
    match op {
        UnOp::Neg => "-",
        UnOp::Not => "!",
        UnOp::BitNot => "~",
    }
}

/// Parses and checks a kernel source in one go.
pub fn compile(source: &str) -> Result<Kernel, Vec<Diagnostic>> {
    check(&crate::parse::parse(source)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::Fence;

    /// The body's first statement's value: `x := VALUE;`.
    fn first_value(src: &str) -> Expr {
        let k = compile(src).expect("well-typed");
        match &k.blocks[Kernel::BODY][0].kind {
            StmtKind::Assign { value, .. } => value.clone(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn log2_keeps_a_uint_argument_unsigned() {
        let e = first_value("kernel k() { int x = log2(3000000000u); }");
        let ExprKind::Log2(a) = &e.kind else {
            panic!("{e:?}")
        };
        assert_eq!(a.ty, Ty::Uint, "no conversion of the argument to int");
        assert_eq!(e.ty, Ty::Int);
        let e = first_value("kernel k() { int x = log2(5); }");
        let ExprKind::Log2(a) = &e.kind else {
            panic!("{e:?}")
        };
        assert_eq!(a.ty, Ty::Int);
    }

    #[test]
    fn min_and_max_keep_uint_operands_unsigned() {
        for f in ["min", "max"] {
            let e = first_value(&format!("kernel k() {{ uint x = {f}(3000000000u, 5u); }}"));
            assert_eq!(e.ty, Ty::Uint, "{f}");
        }
    }

    fn errors(src: &str) -> String {
        match compile(src) {
            Ok(_) => panic!("expected errors for {src}"),
            Err(d) => d
                .iter()
                .map(|d| d.message.clone())
                .collect::<Vec<_>>()
                .join("\n"),
        }
    }

    #[test]
    fn barriers_carry_their_fence() {
        let k = compile(
            "kernel k() { barrier; barrier(); barrier(local); barrier(global); barrier(global | local); }",
        )
        .expect("well-typed");
        let fences: Vec<Fence> = k.blocks[Kernel::BODY]
            .iter()
            .map(|s| match s.kind {
                StmtKind::Barrier { fence, .. } => fence,
                ref other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(
            fences,
            [
                Fence::BOTH,
                Fence::BOTH,
                Fence::LOCAL,
                Fence::GLOBAL,
                Fence::BOTH
            ]
        );
        assert!(!k.barriers_order_both());
    }

    #[test]
    fn atomics_lower_to_one_statement() {
        let k = compile(
            "kernel k(global uint A[4]) { uint old = atomic_add(A[tid], 2); \
             atomic_inc(A[0]); old = atomic_cmpxchg(A[1], old, 7); }",
        )
        .expect("well-typed");
        let body = &k.blocks[Kernel::BODY];
        assert_eq!(body.len(), 3, "{body:?}");
        let StmtKind::Atomic {
            op, args, result, ..
        } = &body[0].kind
        else {
            panic!("{:?}", body[0])
        };
        assert_eq!(*op, AtomicOp::Add);
        assert_eq!(*result, Some(0));
        // The int literal is converted to the element's type.
        assert_eq!(args[0].ty, Ty::Uint);
        assert!(matches!(
            body[1].kind,
            StmtKind::Atomic {
                op: AtomicOp::Inc,
                result: None,
                ..
            }
        ));
        let StmtKind::Atomic { op, args, .. } = &body[2].kind else {
            panic!("{:?}", body[2])
        };
        assert_eq!((*op, args.len()), (AtomicOp::CmpXchg, 2));
    }

    #[test]
    fn misused_atomics_are_errors() {
        for (src, msg) in [
            (
                "kernel k(global int A[4]) { int x = 1 + atomic_add(A[0], 1); }",
                "must be a statement of its own",
            ),
            (
                "kernel k(global float A[4]) { atomic_add(A[0], 1); }",
                "works on `int`, `uint`, `long` and `ulong` elements",
            ),
            (
                "kernel k(const global int A[4]) { atomic_inc(A[0]); }",
                "declared const",
            ),
            (
                "kernel k(global int A[4]) { atomic_add(A[0]); }",
                "takes 2 arguments",
            ),
            (
                "kernel k(global int A[4], int v) { atomic_add(v, 1); }",
                "must be an array element",
            ),
            (
                "kernel k(global int A[4]) { uint x = atomic_xchg(A[0], 1); }",
                "is a `uint` variable",
            ),
            ("kernel k(global int A[4]) { min(1, 2); }", "has no effect"),
        ] {
            let e = errors(src);
            assert!(e.contains(msg), "{src}: {e}");
        }
    }

    #[test]
    fn work_item_queries_take_a_literal_dimension() {
        let k = compile(
            "kernel k(global int A[8]) launch(local_size = (4, 2)) { \
             A[tid] = get_local_id(1) + get_global_size(0) + get_work_dim(); }",
        )
        .expect("well-typed");
        assert_eq!(k.local_size_more.len(), 1);
        let mut found = Vec::new();
        let StmtKind::Store { value, .. } = &k.blocks[Kernel::BODY][0].kind else {
            panic!()
        };
        fn walk(e: &Expr, out: &mut Vec<Builtin>) {
            match &e.kind {
                ExprKind::Builtin(b) => out.push(*b),
                ExprKind::Binary(_, a, b) => {
                    walk(a, out);
                    walk(b, out);
                }
                ExprKind::Cast(a) => walk(a, out),
                _ => {}
            }
        }
        walk(value, &mut found);
        assert_eq!(
            found,
            [
                Builtin::Dim(DimQuery::LocalId, 1),
                Builtin::Dim(DimQuery::GlobalSize, 0),
                Builtin::WorkDim
            ]
        );
        for src in [
            "kernel k(global int A[8]) { A[0] = get_local_id(3); }",
            "kernel k(global int A[8]) { int d = 0; A[0] = get_local_id(d); }",
        ] {
            assert!(errors(src).contains("the literal 0, 1 or 2"), "{src}");
        }
    }
}
