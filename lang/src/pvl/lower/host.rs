//! A method that is more than one `par` block: statements before, between and after its
//! `par` blocks, `parallel { par ... par ... }` regions and blocks joined with `and`,
//! `invariant` blocks, the class's fields. It runs in one work-group:
//! - work-item 0 is the method's own thread: it runs the method's statements (and checks
//!   its contract), alone, between barriers;
//! - a region of `par` blocks (one block, blocks joined with `and`, a `parallel` region)
//!   runs after a barrier: its blocks' threads are consecutive work-items (the first
//!   block's first), then a barrier ends it. The launch has as many work-items as the
//!   largest region has threads;
//! - the method's variables and the class's fields are shared by its threads: each is a
//!   one-element array (the method's `local`, the fields `global` parameters), so that a
//!   `par` block's write to them races, as VerCors forbids it. Fields need permissions
//!   like array elements; the method's variables need none;
//! - a `barrier` stands only in a block that runs alone (not joined with `and`, not in a
//!   `parallel` region): its threads are the work-group's first; where the block has
//!   fewer threads than the launch, the work-items outside it never reach the barrier,
//!   which ksim reports as a barrier divergence at run time.
//!
//! Permissions: the caller lends the method's precondition, work-item 0 takes it, gives it
//! to the pool before each region and takes it back after it, and gives back the
//! postcondition at the end; an `invariant` block's permissions go to the pool for its
//! duration, and an `atomic` section takes them while it runs.

use super::*;

/// Whether statement `s` of a method holds a `par` block at the method's level (in blocks
/// and `invariant` blocks).
pub(super) fn has_par(s: &Stmt) -> bool {
    match &s.kind {
        StmtKind::Par(_) | StmtKind::Parallel(_) => true,
        StmtKind::Block(b) | StmtKind::Invariant { body: b, .. } => b.stmts.iter().any(has_par),
        _ => false,
    }
}

/// The kernel being built: its statements, work-item 0's pending ones, its shared
/// variables, the threads each region needs.
#[derive(Default)]
struct Host {
    code: Vec<k::Stmt>,
    host: Vec<k::Stmt>,
    params: Vec<k::Param>,
    threads: Vec<k::Expr>,
    /// Which statements of `code` are work-item 0's.
    host_blocks: Vec<usize>,
    /// The arrays the method allocates (`new`), which work-item 0 holds between regions.
    allocated: Vec<(String, Vec<k::Expr>)>,
}

/// The method's and the threads' clause kinds.
pub(super) const PRE: [ClauseKind; 3] = [
    ClauseKind::Requires,
    ClauseKind::Context,
    ClauseKind::ContextEverywhere,
];
pub(super) const POST: [ClauseKind; 3] = [
    ClauseKind::Ensures,
    ClauseKind::Context,
    ClauseKind::ContextEverywhere,
];

fn tid(s: &Span) -> k::Expr {
    name("tid", s)
}

impl Lowerer<'_> {
    pub(super) fn host_method(
        &mut self,
        m: &Method,
        class: &Class,
        body: &Block,
    ) -> Res<k::Kernel> {
        self.check_permissions = self.specs && perm::mentions_permission(m);
        let s = &m.name.span;
        let mut h = Host {
            params: self.array_params(m)?,
            ..Host::default()
        };
        for (ty, f) in &class.fields {
            let elem = self.ty(ty)?;
            let a = rn(&f.name);
            self.scalars.insert(f.name.clone(), a.clone());
            self.arrays.insert(f.name.clone(), vec![int(1, &f.span)]);
            h.params.push(k::Param::Array {
                is_const: false,
                space: k::Space::Global,
                elem,
                name: ident(&a, &f.span),
                dims: vec![int(1, &f.span)],
                span: f.span.clone(),
            });
        }
        let everywhere = context_everywhere(m);

        // Work-item 0 checks the precondition, saves what `\old` needs, takes the
        // permissions.
        let mut post = Vec::new();
        self.old = Some(Vec::new());
        self.clauses(&m.contract, &POST, Annotation::Ensures, &mut post);
        let saved = self.old.take().unwrap_or_default();
        self.clauses(&m.contract, &PRE, Annotation::Requires, &mut h.host);
        h.host.extend(saved);
        if self.check_permissions {
            self.lend(m, &mut h.host)?;
            self.perm_clauses(&m.contract, &PRE, PermOp::Take, &mut h.host)?;
            self.perm_clauses(&m.contract, &POST, PermOp::Give, &mut post)?;
            self.perm_clauses(&m.contract, &POST, PermOp::Reclaim, &mut post)?;
        }
        self.host_stmts(m, &body.stmts, &everywhere, &mut h)?;
        h.host.extend(post);
        flush(&mut h, s);

        // Variables that work-item 0 declares in one of its blocks and uses in a later
        // one (`\old`'s saved values, quantifiers' results) are declared first.
        let mut decls = Vec::new();
        for &i in &h.host_blocks {
            hoist(&mut h.code[i], &mut decls);
        }
        decls.append(&mut h.code);

        let local = h
            .threads
            .into_iter()
            .reduce(|a, b| {
                ex(
                    k::ExprKind::Cond(
                        Box::new(bin(BinOp::Gt, a.clone(), b.clone(), s)),
                        Box::new(a),
                        Box::new(b),
                    ),
                    s,
                )
            })
            .unwrap_or_else(|| int(1, s));
        let launch = vec![
            k::LaunchItem {
                key: k::LaunchKey::LocalSize,
                value: local,
                more: Vec::new(),
                span: s.clone(),
            },
            k::LaunchItem {
                key: k::LaunchKey::Groups,
                value: int(1, s),
                more: Vec::new(),
                span: s.clone(),
            },
        ];
        let mut params = h.params;
        self.scalar_params(m, &launch, &mut params)?;
        Ok(k::Kernel {
            name: ident(&m.name.name, s),
            params,
            launch,
            body: k::Block {
                stmts: decls,
                span: body.span.clone(),
            },
            span: m.span.clone(),
        })
    }

    /// The method's own statements (work-item 0's) and its regions.
    fn host_stmts(
        &mut self,
        m: &Method,
        stmts: &[Stmt],
        everywhere: &[Clause],
        h: &mut Host,
    ) -> Res<()> {
        for st_ in stmts {
            let sp = &st_.span;
            match &st_.kind {
                StmtKind::Par(bs) | StmtKind::Parallel(bs) => {
                    self.region(m, bs, everywhere, h, sp)?
                }
                StmtKind::Block(b) => self.host_stmts(m, &b.stmts, everywhere, h)?,
                StmtKind::Invariant { name: n, inv, body } => {
                    let mut v = Vec::new();
                    self.invariant_enter(n, inv, &mut v)?;
                    h.host.extend(v);
                    self.host_stmts(m, &body.stmts, everywhere, h)?;
                    let mut v = Vec::new();
                    self.invariant_leave(n, inv, &mut v)?;
                    h.host.extend(v);
                }
                StmtKind::Decl { ty, name: n, init } => {
                    self.shared(ty, n, init.as_ref(), sp, everywhere, h)?
                }
                StmtKind::Call(c) => {
                    // The callee's regions lend its precondition's permissions from
                    // what the method holds.
                    let (callee, post) = self.call_enter(c, &mut h.host)?;
                    let Some(MethodBody::Block(b)) = &callee.body else {
                        unreachable!("inline gives a method with a body")
                    };
                    let r = self.host_stmts(&callee, &b.stmts, &context_everywhere(&callee), h);
                    self.depth -= 1;
                    r?;
                    h.host.extend(post);
                }
                _ => self.stmt(st_, everywhere, &mut h.host)?,
            }
        }
        Ok(())
    }

    /// A variable of the method: shared by its threads, as a one-element array (or the
    /// array `int[N] a = new int[N]`, all of which work-item 0 holds).
    fn shared(
        &mut self,
        ty: &Type,
        n: &Ident,
        init: Option<&Expr>,
        sp: &Span,
        everywhere: &[Clause],
        h: &mut Host,
    ) -> Res<()> {
        let a = rn(&n.name);
        let elem = self.ty(&Type {
            dims: Vec::new(),
            ..ty.clone()
        })?;
        if ty.dims.is_empty() {
            self.scalars.insert(n.name.clone(), a.clone());
            self.unchecked.insert(a.clone());
            h.params.push(k::Param::Array {
                is_const: false,
                space: k::Space::Local,
                elem,
                name: ident(&a, &n.span),
                dims: vec![int(1, sp)],
                span: sp.clone(),
            });
            if let Some(v) = init {
                let assign = Stmt {
                    kind: StmtKind::Assign {
                        target: Expr {
                            kind: ExprKind::Name(n.name.clone()),
                            span: n.span.clone(),
                        },
                        value: v.clone(),
                    },
                    span: sp.clone(),
                };
                self.stmt(&assign, everywhere, &mut h.host)?;
            }
            return Ok(());
        }
        if init.is_some_and(|i| !matches!(i.kind, ExprKind::New(_))) {
            return err("an array of the method starts as `new int[N]`", sp);
        }
        let mut dims = Vec::new();
        for d in &ty.dims {
            let Some(d) = d else {
                return err(
                    format!("give the sizes of `{}`: `int[N] {0}`", n.name),
                    &ty.span,
                );
            };
            dims.push(self.pure_expr(d)?);
        }
        self.arrays.insert(n.name.clone(), dims.clone());
        if self.check_permissions {
            h.host
                .extend(self.every_element(&a, &dims, PermOp::Take, sp));
        }
        h.allocated.push((a.clone(), dims.clone()));
        h.params.push(k::Param::Array {
            is_const: false,
            space: k::Space::Local,
            elem,
            name: ident(&a, &n.span),
            dims,
            span: sp.clone(),
        });
        Ok(())
    }

    /// A region of `par` blocks: after a barrier, each block's threads run it on
    /// consecutive work-items; a barrier ends it. Work-item 0 lends the method's
    /// permissions to it and takes them back after it.
    fn region(
        &mut self,
        m: &Method,
        bs: &[ParBlock],
        everywhere: &[Clause],
        h: &mut Host,
        sp: &Span,
    ) -> Res<()> {
        if self.check_permissions {
            self.perm_clauses(&m.contract, &PRE[..2], PermOp::Give, &mut h.host)?;
            for (a, dims) in &h.allocated {
                h.host.extend(self.every_element(a, dims, PermOp::Give, sp));
            }
        }
        flush(h, sp);
        let mut offset = int(0, sp);
        // A barrier stands in a block that runs alone (its threads are then the
        // work-group's first; a block with fewer threads than the largest region's leaves
        // work-items that never reach it: a barrier divergence at run time).
        self.no_barrier = (bs.len() > 1).then(|| "a barrier stands only in a `par` block that runs alone (here other blocks share its work-group)".to_string());
        for b in bs {
            let saved = (self.block_name.clone(), self.scalars.clone());
            self.block_name = b.name.as_ref().map(|n| n.name.clone());
            let mut n = int(1, &b.span);
            let mut sizes = Vec::new();
            for it in &b.iters {
                let lo = self.pure_expr(&it.lo)?;
                let hi = self.pure_expr(&it.hi)?;
                let size = bin(BinOp::Sub, hi, lo.clone(), &it.hi.span);
                n = bin(BinOp::Mul, n, size.clone(), &b.span);
                sizes.push((it, lo, size));
            }
            // The thread's iterators, the last one varying fastest.
            let r = self.temp("thread");
            let mut code = vec![decl(
                k::TypeName::Int,
                &r,
                bin(BinOp::Sub, tid(sp), offset.clone(), sp),
                sp,
            )];
            for (it, lo, size) in sizes.into_iter().rev() {
                let s = &it.name.span;
                let v = bin(
                    BinOp::Add,
                    lo,
                    bin(BinOp::Rem, name(&r, s), size.clone(), s),
                    s,
                );
                code.push(decl(k::TypeName::Int, &rn(&it.name.name), v, s));
                self.scalars.remove(&it.name.name);
                code.push(set(&r, bin(BinOp::Div, name(&r, s), size, s), s));
            }
            self.thread_block(b, everywhere, &mut code)?;
            let end = bin(BinOp::Add, offset.clone(), n, sp);
            let inside = bin(
                BinOp::LogAnd,
                bin(BinOp::Le, offset, tid(sp), sp),
                bin(BinOp::Lt, tid(sp), end.clone(), sp),
                sp,
            );
            h.code.push(if_(inside, code, &b.span));
            offset = end;
            (self.block_name, self.scalars) = saved;
        }
        self.no_barrier = None;
        h.code.push(st(k::StmtKind::Barrier(k::Fence::BOTH), sp));
        h.threads.push(offset);
        if self.check_permissions {
            self.perm_clauses(&m.contract, &PRE[..2], PermOp::Take, &mut h.host)?;
            for (a, dims) in &h.allocated {
                h.host.extend(self.every_element(a, dims, PermOp::Take, sp));
            }
        }
        Ok(())
    }

    /// One thread of block `b`: its precondition, its body, its postcondition.
    fn thread_block(
        &mut self,
        b: &ParBlock,
        everywhere: &[Clause],
        out: &mut Vec<k::Stmt>,
    ) -> Res<()> {
        let mut contract = b.contract.clone();
        contract.extend(everywhere.iter().cloned());
        self.clauses(&contract, &PRE, Annotation::Assert, out);
        self.old = Some(Vec::new());
        let mut post = Vec::new();
        self.clauses(&contract, &POST, Annotation::Ensures, &mut post);
        out.extend(self.old.take().unwrap_or_default());
        if self.check_permissions {
            self.perm_clauses(&b.contract, &PRE[..2], PermOp::Take, out)?;
            self.perm_clauses(&b.contract, &POST[..2], PermOp::Give, &mut post)?;
        }
        for s in &b.body.stmts {
            self.stmt(s, everywhere, out)?;
        }
        out.extend(post);
        Ok(())
    }

    /// Entering `invariant n(inv) { ... }`: the invariant is checked, its permissions go
    /// to the pool (for the `atomic` sections to take).
    pub(super) fn invariant_enter(
        &mut self,
        n: &Ident,
        inv: &Expr,
        out: &mut Vec<k::Stmt>,
    ) -> Res<()> {
        self.invariant_check(inv, out);
        if self.check_permissions {
            self.perm(PermOp::Give, inv, out)?;
        }
        self.invariants.insert(n.name.clone(), inv.clone());
        Ok(())
    }

    /// Leaving an `invariant` block: its permissions come back, it is checked.
    pub(super) fn invariant_leave(
        &mut self,
        n: &Ident,
        inv: &Expr,
        out: &mut Vec<k::Stmt>,
    ) -> Res<()> {
        self.invariants.remove(&n.name);
        if self.check_permissions {
            self.perm(PermOp::Take, inv, out)?;
        }
        self.invariant_check(inv, out);
        Ok(())
    }

    fn invariant_check(&mut self, inv: &Expr, out: &mut Vec<k::Stmt>) {
        let c = Clause::Spec {
            kind: ClauseKind::Context,
            expr: inv.clone(),
            span: inv.span.clone(),
        };
        self.clauses(&[c], &[ClauseKind::Context], Annotation::Assert, out);
    }

    /// `atomic(n) { body }`: takes the invariant's permissions, runs the body, checks the
    /// invariant again and gives them back. The body runs as plain statements (ksim's
    /// core has no atomic section yet): a note says so.
    pub(super) fn atomic(
        &mut self,
        n: &Ident,
        body: &Block,
        everywhere: &[Clause],
        sp: &Span,
        out: &mut Vec<k::Stmt>,
    ) -> Res<()> {
        let Some(inv) = self.invariants.get(&n.name).cloned() else {
            return err(
                format!("`atomic({})` names no enclosing `invariant` block", n.name),
                &n.span,
            );
        };
        self.note(sp, "`atomic` section run as plain statements (ksim has no atomic section yet): its accesses can race with other threads'; its invariant is checked when it ends");
        if self.check_permissions {
            self.perm(PermOp::Take, &inv, out)?;
        }
        let mut v = Vec::new();
        for s in &body.stmts {
            self.stmt(s, everywhere, &mut v)?;
        }
        out.push(block(v, &body.span));
        self.invariant_check(&inv, out);
        if self.check_permissions {
            self.perm(PermOp::Give, &inv, out)?;
        }
        Ok(())
    }
}

/// Work-item 0's pending statements, then a barrier.
fn flush(h: &mut Host, sp: &Span) {
    if !h.host.is_empty() {
        let host = std::mem::take(&mut h.host);
        let zero = bin(BinOp::Eq, tid(sp), int(0, sp), sp);
        h.host_blocks.push(h.code.len());
        h.code.push(if_(zero, host, sp));
        h.code.push(st(k::StmtKind::Barrier(k::Fence::BOTH), sp));
    }
}

/// Moves the declarations at the top of work-item 0's blocks to `decls` (as declarations
/// without a value; the blocks assign it).
fn hoist(s: &mut k::Stmt, decls: &mut Vec<k::Stmt>) {
    {
        let k::StmtKind::If { arms, els: None } = &mut s.kind else {
            return;
        };
        let k::StmtKind::Block(b) = &mut arms[0].then.kind else {
            return;
        };
        for s in &mut b.stmts {
            if let k::StmtKind::Decl { ty, name, init } = &s.kind {
                decls.push(st(
                    k::StmtKind::Decl {
                        ty: *ty,
                        name: name.clone(),
                        init: None,
                    },
                    &s.span,
                ));
                let v = init.clone();
                let name = name.clone();
                s.kind = match v {
                    Some(value) => k::StmtKind::Assign {
                        target: k::LValue::Var(name),
                        op: k::AssignOp::Set,
                        value,
                    },
                    None => k::StmtKind::Block(k::Block {
                        stmts: Vec::new(),
                        span: s.span.clone(),
                    }),
                };
            }
        }
    }
}
