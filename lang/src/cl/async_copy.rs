//! OpenCL C 1.2's asynchronous work-group copies (§6.12.10): `async_work_group_copy`,
//! `async_work_group_strided_copy` (`__global` to `__local` and back) and
//! `wait_group_events`, with `event_t` values.
//!
//! The specification lets an implementation perform a copy at any time between the call
//! and the `wait_group_events` that names its event, by any work-items of the group; it
//! requires every work-item of the group to reach the call (and the wait) with the same
//! arguments, and a barrier after the wait before work-items use the copied data. ksim
//! models that with the core's statements, in the lowering alone:
//!
//! - **Events are values.** An `event_t` is an `int`: each work-item counts the events
//!   issued so far, and a copy given event 0 returns a new one (1, 2, ...); a copy given a
//!   non-zero event joins it (and returns it). An event that no copy returned (joined or
//!   waited for) is the fault `__event` ([`crate::core::Annotation::Event`]).
//! - **A copy is in flight until the wait that names its event; the data moves at that
//!   wait.** The call records the copy (its pointers, count, stride, event) in variables of
//!   its call site; `wait_group_events(n, events)` completes exactly the copies whose events
//!   are among the `n` it names. A kernel that finishes with a copy never waited for is
//!   the fault `__waited` at the copy's call ("finished without waiting for events":
//!   §6.12.10 makes the data defined only after the wait); a call site reached again while
//!   its earlier copy is still in flight completes that one first (an implementation may
//!   do either then). So the destination holds nothing new before the wait: reading a
//!   `__local` destination before it is an uninitialised read (or a race with the copy's
//!   writes, see next point).
//! - **The copy's accesses are the group's, not the reading work-item's.** The elements
//!   are copied at the wait by the group's work-items, spread so that a work-item's own
//!   accesses rarely coincide with its share: element `i` of the group's `s`-th copy is
//!   copied by work-item `(c - i) mod L`, with `c = (s - 1) mod (L - 1)` (`L` the
//!   work-group size; `c = 0` when `L = 1`): a reflection of the elements across the
//!   group. So an access to the copied elements in the wait's barrier interval, before or
//!   after the wait (no barrier orders them), races with the copy, as it may on a device;
//!   two copies of one group into the same element race with each other (different `c`).
//!   A barrier after the wait orders the copy before what follows. A race needs one pair,
//!   so the only access pattern this misses is one where every work-item accesses exactly
//!   the element it copies itself (`l` accessing element `c - l`); `c` is never `L - 1`,
//!   so work-item `l` reading element `L - 1 - l` is always seen, and with `L >= 3` so are
//!   `l` reading `l` or `l + 1` (with `L = 2`, `c` is always 0: the copy's shares are the
//!   work-items' own elements, and two copies share them out alike).
//! - **Work-group functions.** The copy and the wait synchronise the group as a barrier
//!   that orders no memory (`barrier` with an empty fence: one not reached by every
//!   work-item is barrier divergence). Their arguments (the pointers' offsets and targets,
//!   count, stride, the events) must be the same in every work-item: each is checked bit
//!   by bit, the work-items whose bit is set waiting at a barrier placed at the argument
//!   and the others at one placed at the call, so work-items that disagree diverge there.
//!
//! A copy of vector elements (`float4`) copies each element's components (its slots in the
//! array, see `vector`).

use super::pointer::{Arm, PVal};
use super::*;
use std::collections::BTreeSet;

/// The kernel's asynchronous copies: what the waits and the kernel's end complete.
#[derive(Default)]
pub(super) struct Copies {
    /// Declarations of the work-items' copy state, placed at the kernel's start.
    decls: Vec<k::Stmt>,
    /// The variables counting the events issued and the copies started, once a copy or a
    /// wait is lowered.
    counters: Option<(String, String)>,
    sites: Vec<Site>,
    /// The statements only the kernel's end can write (a wait completes copies of call
    /// sites lowered after it, in a loop): markers in the lowered body until then.
    holes: Vec<Hole>,
}

/// One call site of a copy: the variables holding its copy in flight.
#[derive(Clone)]
struct Site {
    span: Span,
    func: String,
    /// Whether a copy of this site is in flight.
    pending: String,
    event: String,
    /// The centre of the reflection that shares its elements out (see the module's
    /// documentation).
    centre: String,
    n: String,
    stride: Option<String>,
    to_local: bool,
    lanes: u8,
    /// The pointers, their run-time parts in variables of the site.
    dst: PVal,
    src: PVal,
}

enum Hole {
    /// A wait for the event in this variable: completes every copy in flight of that event.
    Wait { event: String, span: Span },
    /// A call site reached again: completes its earlier copy if it is in flight.
    Again { site: usize },
}

/// The name of the marker statement standing for a hole (not a C identifier).
const HOLE: &str = "async copy hole";

fn int(v: i64, span: &Span) -> k::Expr {
    let lit = ex(
        k::ExprKind::Int {
            value: v.unsigned_abs(),
            unsigned: false,
        },
        span,
    );
    if v < 0 {
        ex(k::ExprKind::Unary(UnOp::Neg, Box::new(lit)), span)
    } else {
        lit
    }
}

fn bin(op: BinOp, a: k::Expr, b: k::Expr, span: &Span) -> k::Expr {
    ex(k::ExprKind::Binary(op, Box::new(a), Box::new(b)), span)
}

fn as_int(e: k::Expr, span: &Span) -> k::Expr {
    ex(k::ExprKind::Cast(TypeName::Int, Box::new(e)), span)
}

/// A barrier that orders no memory: it only synchronises the group.
fn sync(span: &Span) -> k::Stmt {
    st(
        k::StmtKind::Barrier(crate::core::Fence {
            local: false,
            global: false,
        }),
        span,
    )
}

/// The check `annotation(cond)`: a fault at `span` when `cond` is false.
fn check(annotation: crate::core::Annotation, cond: k::Expr, span: &Span) -> k::Stmt {
    st(
        k::StmtKind::Call(ex(
            k::ExprKind::Call {
                func: ident(annotation.name(), span),
                args: vec![cond],
            },
            span,
        )),
        span,
    )
}

/// `0 < e && e <= issued`: `e` is an event some copy returned.
fn issued(e: &str, issued: &str, span: &Span) -> k::Expr {
    and(
        bin(BinOp::Lt, int(0, span), name_expr(e, span), span),
        bin(BinOp::Le, name_expr(e, span), name_expr(issued, span), span),
    )
}

/// The index of the hole a statement marks, if it is a marker.
fn hole_of(s: &k::Stmt) -> Option<usize> {
    match &s.kind {
        k::StmtKind::Call(k::Expr {
            kind: k::ExprKind::Call { func, args },
            ..
        }) if func.name == HOLE => match args.first().map(|a| &a.kind) {
            Some(k::ExprKind::Int { value, .. }) => Some(*value as usize),
            _ => None,
        },
        _ => None,
    }
}

/// Replaces every marker in `s` by its statement.
fn fill(s: &mut k::Stmt, fills: &mut [Option<k::Stmt>]) {
    if let Some(h) = hole_of(s) {
        *s = fills[h].take().expect("each hole is marked once");
        return;
    }
    match &mut s.kind {
        k::StmtKind::If { arms, els } => {
            for a in arms {
                fill(&mut a.then, fills);
            }
            if let Some(e) = els {
                fill(e, fills);
            }
        }
        k::StmtKind::While { body, .. } => fill(body, fills),
        k::StmtKind::For {
            init, step, body, ..
        } => {
            for s in [init, step].into_iter().flatten() {
                fill(s, fills);
            }
            fill(body, fills);
        }
        k::StmtKind::Block(b) => {
            for s in &mut b.stmts {
                fill(s, fills);
            }
        }
        _ => {}
    }
}

impl<'u> Lowerer<'u> {
    /// The variables counting the events issued and the copies started (declared at the
    /// kernel's start, 0).
    fn copy_counters(&mut self, span: &Span) -> (String, String) {
        if let Some(c) = &self.copies.counters {
            return c.clone();
        }
        let events = self.copy_var("events_issued", TypeName::Int, span);
        let started = self.copy_var("copies_started", TypeName::Int, span);
        self.copies.counters = Some((events.clone(), started.clone()));
        (events, started)
    }

    /// A variable of the copies' state, declared at the kernel's start (0 or false).
    fn copy_var(&mut self, what: &str, ty: TypeName, span: &Span) -> String {
        let v = self.declare_scalar(what, ty);
        let init = if ty == TypeName::Bool {
            boolean(false, span)
        } else {
            int(0, span)
        };
        self.copies.decls.push(st(
            k::StmtKind::Decl {
                ty,
                name: ident(&v, span),
                init: Some(init),
            },
            span,
        ));
        v
    }

    /// Checks that the `int` in variable `v` is the same in every work-item of the group:
    /// per bit, the work-items with the bit set wait at a barrier placed at `arg`, the
    /// others at one placed at `span`.
    fn uniform(&self, v: &str, arg: &Span, span: &Span, pre: &mut Vec<k::Stmt>) {
        for b in 0..32 {
            let bit = bin(
                BinOp::BitAnd,
                bin(BinOp::Shr, name_expr(v, span), int(b, span), span),
                int(1, span),
                span,
            );
            pre.push(if_then(
                bin(BinOp::Ne, bit, int(0, span), span),
                vec![sync(arg)],
                Some(vec![sync(span)]),
                span,
            ));
        }
    }

    /// A marker for hole `hole`, written at the kernel's end ([`Lowerer::finish_copies`]).
    fn hole(&mut self, hole: Hole, span: &Span) -> k::Stmt {
        self.copies.holes.push(hole);
        st(
            k::StmtKind::Call(ex(
                k::ExprKind::Call {
                    func: ident(HOLE, span),
                    args: vec![int(self.copies.holes.len() as i64 - 1, span)],
                },
                span,
            )),
            span,
        )
    }

    /// `async_work_group_copy(dst, src, n, event)` and
    /// `async_work_group_strided_copy(dst, src, n, stride, event)`: records the copy in its
    /// site's variables (the data moves at the wait); the value is the copy's event.
    pub(super) fn async_copy(
        &mut self,
        func: &cl::Ident,
        args: &[cl::Expr],
        span: &Span,
        pre: &mut Vec<k::Stmt>,
    ) -> Res<k::Expr> {
        let strided = func.name == "async_work_group_strided_copy";
        let want = if strided { 5 } else { 4 };
        if args.len() != want {
            return Err(Diagnostic::new(
                format!("`{}` takes {want} arguments", func.name),
                span.clone(),
            ));
        }
        let (dst, src) = (&args[0], &args[1]);
        for p in [dst, src] {
            if !self.is_pointer(p) {
                return Err(Diagnostic::new(
                    format!(
                        "the first two arguments of `{}` must be pointers",
                        func.name
                    ),
                    p.span.clone(),
                ));
            }
        }
        let dst = self.pointer_value(dst, pre)?;
        let src = self.pointer_value(src, pre)?;
        let to_local = self.copy_direction(&dst, &src, func, span)?;
        let lanes = self.copy_lanes(&args[..2], [&src, &dst], func, span)?;
        if [&dst, &src]
            .iter()
            .any(|v| matches!(v, PVal::One(p) if p.view.is_some()))
        {
            return unsupported(
                format!(
                    "`{}` through a pointer cast to another element type (a view)",
                    func.name
                ),
                span,
            );
        }
        let (events, started) = self.copy_counters(span);
        let n = self.expr(&args[2], pre)?;
        let n = self.temp("copy_n", TypeName::Int, Some(as_int(n, span)), span, pre);
        let stride = if strided {
            let s = self.expr(&args[3], pre)?;
            Some(self.temp(
                "copy_stride",
                TypeName::Int,
                Some(as_int(s, span)),
                span,
                pre,
            ))
        } else {
            None
        };
        let e = self.expr(&args[want - 1], pre)?;
        let event = self.temp(
            "copy_event",
            TypeName::Int,
            Some(as_int(e, span)),
            span,
            pre,
        );
        // A work-group function: reached by all, with the same arguments.
        pre.push(sync(span));
        self.uniform(&n, &args[2].span, span, pre);
        if let Some(s) = &stride {
            self.uniform(s, &args[3].span, span, pre);
        }
        self.uniform(&event, &args[want - 1].span, span, pre);
        // Event 0: a new event; otherwise the copy joins an event issued before.
        pre.push(if_then(
            bin(BinOp::Ne, name_expr(&event, span), int(0, span), span),
            vec![check(
                crate::core::Annotation::Event,
                issued(&event, &events, span),
                span,
            )],
            Some(vec![
                set(
                    &events,
                    bin(BinOp::Add, name_expr(&events, span), int(1, span), span),
                    span,
                ),
                set(&event, name_expr(&events, span), span),
            ]),
            span,
        ));
        pre.push(set(
            &started,
            bin(BinOp::Add, name_expr(&started, span), int(1, span), span),
            span,
        ));
        // The site's earlier copy, if still in flight, completes first.
        let site = self.copies.sites.len();
        let pending = self.copy_var("copy_pending", TypeName::Bool, span);
        let again = self.hole(Hole::Again { site }, span);
        pre.push(if_then(name_expr(&pending, span), vec![again], None, span));
        let keep = |lw: &mut Self, what: &str, e: k::Expr, pre: &mut Vec<k::Stmt>| {
            let v = lw.copy_var(&format!("copy_{what}"), TypeName::Int, span);
            pre.push(set(&v, e, span));
            v
        };
        let site_event = keep(self, "event_id", name_expr(&event, span), pre);
        let site_n = keep(self, "count", name_expr(&n, span), pre);
        let site_stride = stride.map(|s| keep(self, "stride_by", name_expr(&s, span), pre));
        // c = (s - 1) mod (L - 1), 0 for one work-item.
        let local = || name_expr("local_size", span);
        let centre = bin(
            BinOp::Rem,
            bin(BinOp::Sub, name_expr(&started, span), int(1, span), span),
            bin(BinOp::Sub, local(), int(1, span), span),
            span,
        );
        let site_centre = self.copy_var("copy_centre", TypeName::Int, span);
        pre.push(if_then(
            bin(BinOp::Gt, local(), int(1, span), span),
            vec![set(&site_centre, centre, span)],
            Some(vec![set(&site_centre, int(0, span), span)]),
            span,
        ));
        // The pointers' run-time parts, the same in every work-item too.
        let snap = |lw: &mut Self, v: PVal, side: &str, arg: &Span, pre: &mut Vec<k::Stmt>| {
            v.map_parts(|part, e| {
                let var = lw.copy_var(&format!("copy_{side}_{part}"), TypeName::Int, span);
                pre.push(set(&var, as_int(e, span), span));
                lw.uniform(&var, arg, span, pre);
                name_expr(&var, span)
            })
        };
        let dst = snap(self, dst, "dst", &args[0].span, pre);
        let src = snap(self, src, "src", &args[1].span, pre);
        pre.push(set(&pending, boolean(true, span), span));
        self.copies.sites.push(Site {
            span: span.clone(),
            func: func.name.clone(),
            pending,
            event: site_event,
            centre: site_centre,
            n: site_n,
            stride: site_stride,
            to_local,
            lanes,
            dst,
            src,
        });
        Ok(name_expr(&event, span))
    }

    /// `wait_group_events(n, events)`: a work-group function (reached by all, with the same
    /// `n` and events) that completes the copies of each of the `n` events.
    pub(super) fn wait_events(
        &mut self,
        args: &[cl::Expr],
        span: &Span,
        pre: &mut Vec<k::Stmt>,
    ) -> Res<k::Expr> {
        if args.len() != 2 {
            return Err(Diagnostic::new(
                "`wait_group_events` takes 2 arguments",
                span.clone(),
            ));
        }
        let (events, _) = self.copy_counters(span);
        let n = self.expr(&args[0], pre)?;
        let n = self.temp("wait_n", TypeName::Int, Some(as_int(n, span)), span, pre);
        pre.push(sync(span));
        self.uniform(&n, &args[0].span, span, pre);
        let i = self.temp("wait_i", TypeName::Int, Some(int(0, span)), span, pre);
        // `events[i]`, lowered as the source's own indexing (a name no C program has). A
        // list that is the address of one `event_t` variable holds one event: past it, the
        // wait names no event (0, refused by `__event`).
        let list = &args[1];
        let single = {
            let mut scratch = Vec::new();
            let v = self.pointer_value(list, &mut scratch)?;
            v.targets().iter().any(|t| !self.arrays.contains_key(*t))
        };
        let hidden = "wait index";
        self.scopes.push(HashMap::new());
        self.bind(hidden, Binding::Scalar(i.clone()));
        let index = if single {
            cl::ExprKind::Int {
                value: 0,
                unsigned: false,
                long: false,
            }
        } else {
            cl::ExprKind::Name(hidden.into())
        };
        let nth = cl::Expr {
            kind: cl::ExprKind::Index(
                Box::new(list.clone()),
                Box::new(cl::Expr {
                    kind: index,
                    span: list.span.clone(),
                }),
            ),
            span: list.span.clone(),
        };
        let mut body = Vec::new();
        let e = self.expr(&nth, &mut body);
        self.scopes.pop();
        let mut e = as_int(e?, span);
        if single {
            let first = bin(BinOp::Eq, name_expr(&i, span), int(0, span), span);
            e = ex(
                k::ExprKind::Cond(Box::new(first), Box::new(e), Box::new(int(0, span))),
                span,
            );
        }
        let e = self.temp("wait_event", TypeName::Int, Some(e), span, &mut body);
        self.uniform(&e, &list.span, span, &mut body);
        body.push(check(
            crate::core::Annotation::Event,
            issued(&e, &events, span),
            span,
        ));
        let done = self.hole(
            Hole::Wait {
                event: e,
                span: span.clone(),
            },
            span,
        );
        body.push(done);
        body.push(set(
            &i,
            bin(BinOp::Add, name_expr(&i, span), int(1, span), span),
            span,
        ));
        pre.push(st(
            k::StmtKind::While {
                cond: bin(BinOp::Lt, name_expr(&i, span), name_expr(&n, span), span),
                body: Box::new(block(body, span)),
            },
            span,
        ));
        Ok(int(0, span))
    }

    /// At the kernel's end: writes the holes, checks that no copy is still in flight (a
    /// fault naming the copy's call), and declares the copies' state at the start of
    /// `stmts`.
    pub(super) fn finish_copies(&mut self, stmts: &mut Vec<k::Stmt>) -> Res<()> {
        if self.copies.counters.is_none() {
            return Ok(());
        }
        let holes = std::mem::take(&mut self.copies.holes);
        let mut fills = Vec::new();
        for h in &holes {
            fills.push(Some(match h {
                Hole::Wait { event, span } => {
                    let mut out = Vec::new();
                    for s in 0..self.copies.sites.len() {
                        let site = &self.copies.sites[s];
                        let named = and(
                            name_expr(&site.pending, span),
                            bin(
                                BinOp::Eq,
                                name_expr(&site.event, span),
                                name_expr(event, span),
                                span,
                            ),
                        );
                        let copy = self.complete(s)?;
                        out.push(if_then(named, copy, None, span));
                    }
                    block(out, span)
                }
                Hole::Again { site } => {
                    let span = self.copies.sites[*site].span.clone();
                    block(self.complete(*site)?, &span)
                }
            }));
        }
        for s in stmts.iter_mut() {
            fill(s, &mut fills);
        }
        for site in &self.copies.sites {
            let pending = name_expr(&site.pending, &site.span);
            let waited = ex(k::ExprKind::Unary(UnOp::Not, Box::new(pending)), &site.span);
            stmts.push(check(crate::core::Annotation::Waited, waited, &site.span));
        }
        let decls = std::mem::take(&mut self.copies.decls);
        stmts.splice(0..0, decls);
        Ok(())
    }

    /// The statements completing the copy in flight of site `s`: each work-item copies its
    /// share of the elements (see the module's documentation), then the site is free.
    fn complete(&mut self, s: usize) -> Res<Vec<k::Stmt>> {
        let site = self.copies.sites[s].clone();
        let span = &site.span;
        let mut out = Vec::new();
        // Work-item w copies element (c - w) mod L, then every L-th after it.
        let start = bin(
            BinOp::Rem,
            bin(
                BinOp::Sub,
                bin(
                    BinOp::Add,
                    name_expr(&site.centre, span),
                    name_expr("local_size", span),
                    span,
                ),
                name_expr("tid", span),
                span,
            ),
            name_expr("local_size", span),
            span,
        );
        let i = self.temp("copy_i", TypeName::Int, Some(start), span, &mut out);
        let iv = name_expr(&i, span);
        let strided_index = |s: &Option<String>| match s {
            Some(s) => bin(BinOp::Mul, iv.clone(), name_expr(s, span), span),
            None => iv.clone(),
        };
        let (di, si) = if site.to_local {
            (iv.clone(), strided_index(&site.stride))
        } else {
            (strided_index(&site.stride), iv.clone())
        };
        let lanes = site.lanes;
        // Either pointer may be dynamic (chosen at run time, or null): its places are the
        // chain of its targets, checked (null, uninitialised) before each element copy.
        let mut body = Vec::new();
        let (sarms, elem) = self.places(site.src, Some(si), span, &mut body)?;
        let (darms, _) = self.places(site.dst, Some(di), span, &mut body)?;
        if sarms.iter().chain(&darms).any(|a| a.view.is_some()) {
            return unsupported(
                format!(
                    "`{}` through a pointer cast to another element type (a view)",
                    site.func
                ),
                span,
            );
        }
        // A vector element is copied component by component (its slots, see `vector`).
        let mut slots = |a: Arm, body: &mut Vec<k::Stmt>| -> Vec<Arm> {
            if lanes == 1 {
                return vec![a];
            }
            (self.slots(&a.array.name, a.index, body).into_iter())
                .map(|index| Arm {
                    when: a.when.clone(),
                    array: a.array.clone(),
                    index,
                    view: None, // views of vector arrays are refused (`bytes`)
                })
                .collect()
        };
        let mut by_lane: Vec<Vec<Arm>> = (0..lanes).map(|_| Vec::new()).collect();
        for a in sarms {
            for (c, s) in slots(a, &mut body).into_iter().enumerate() {
                by_lane[c].push(s);
            }
        }
        let mut writes = Vec::new();
        for a in darms {
            let when = a.when.clone();
            let stmts = (slots(a, &mut body).into_iter().zip(&by_lane))
                .map(|(d, s)| {
                    let value = Self::read_places(s.clone(), elem, span);
                    st(
                        k::StmtKind::Assign {
                            target: k::LValue::Elem {
                                array: d.array,
                                indices: d.index,
                            },
                            op: k::AssignOp::Set,
                            value,
                        },
                        span,
                    )
                })
                .collect();
            writes.push((when, stmts));
        }
        body.extend(pointer::chain(writes, span));
        body.push(set(
            &i,
            bin(BinOp::Add, iv.clone(), name_expr("local_size", span), span),
            span,
        ));
        out.push(st(
            k::StmtKind::While {
                cond: bin(BinOp::Lt, iv, name_expr(&site.n, span), span),
                body: Box::new(block(body, span)),
            },
            span,
        ));
        out.push(set(&site.pending, boolean(false, span), span));
        Ok(out)
    }

    /// Whether the copy is into `__local` memory: every target of the destination in one
    /// space, every target of the source in the other (a pointer that is always null has
    /// no target; at least one side must have one).
    fn copy_direction(&self, dst: &PVal, src: &PVal, func: &cl::Ident, span: &Span) -> Res<bool> {
        let space = |v: &PVal| -> Res<Option<Space>> {
            let mut spaces = BTreeSet::new();
            for t in v.targets() {
                match self.space_of(t) {
                    Some(s) if self.arrays.contains_key(t) => spaces.insert(s == Space::Local),
                    _ => {
                        return Err(Diagnostic::new(
                            format!(
                                "`{}` copies between `__global` and `__local` memory",
                                func.name
                            ),
                            span.clone(),
                        ))
                    }
                };
            }
            Ok(match spaces.len() {
                0 => None,
                1 => Some(if spaces.contains(&true) {
                    Space::Local
                } else {
                    Space::Global
                }),
                _ => {
                    return unsupported(
                        format!(
                            "`{}` through a pointer that may reach `__global` or `__local` memory",
                            func.name
                        ),
                        span,
                    )
                }
            })
        };
        let (d, s) = (space(dst)?, space(src)?);
        match (d, s) {
            (Some(d), Some(s)) if d != s => Ok(d == Space::Local),
            (Some(d), None) => Ok(d == Space::Local),
            (None, Some(s)) => Ok(s != Space::Local),
            (None, None) => unsupported(
                format!("`{}` between two pointers that are always null", func.name),
                span,
            ),
            _ => Err(Diagnostic::new(
                format!(
                    "`{}` copies from `__global` to `__local` memory or back",
                    func.name
                ),
                span.clone(),
            )),
        }
    }

    /// Components per copied element (the `gentype` of the copy): both pointers must see
    /// whole elements of one vector length, or both scalars of scalar arrays (every target
    /// of a dynamic pointer alike).
    fn copy_lanes(
        &self,
        ptrs: &[cl::Expr],
        [src, dst]: [&PVal; 2],
        func: &cl::Ident,
        span: &Span,
    ) -> Res<u8> {
        // (the length the pointer sees, the array's), for every target of the source then
        // of the destination.
        let mut lanes = Vec::new();
        for (e, v) in [(&ptrs[1], src), (&ptrs[0], dst)] {
            let sees = self.pointer_name(e).map(|v| self.pointers.vars[&v].lanes);
            let targets = v.targets();
            if targets.is_empty() {
                lanes.extend(sees.map(|s| (s, s)));
            }
            for a in targets {
                let have = self.vec_arrays.get(a).copied().unwrap_or(1);
                lanes.push((sees.unwrap_or(have), have));
            }
        }
        if lanes.iter().any(|(sees, have)| sees != have) || lanes.iter().any(|l| l.0 != lanes[0].0)
        {
            return unsupported(
                format!(
                    "`{}` between pointers that see elements of different vector lengths",
                    func.name
                ),
                span,
            );
        }
        Ok(lanes.first().map_or(1, |l| l.0))
    }

    /// The memory space of a lowered array: a buffer's or a `__local` declaration's.
    fn space_of(&self, array: &str) -> Option<Space> {
        if let Some(b) = self.info.buffers.iter().find(|b| b.array == array) {
            return Some(b.space);
        }
        self.local_arrays.iter().find_map(|p| match p {
            k::Param::Array { name, space, .. } if name.name == array => Some(*space),
            _ => None,
        })
    }
}
