//! Unit tests of the fast executor on kernels built by hand in the core form (no parser or
//! type checker involved), each also checked against the reference semantics.

use interp::exec::run_canonical;
use interp::fast::{self, FastOptions, FastOutcome};
use interp::{AccessKind, FaultKind, Launch, LaunchOptions, Value};
use lang::ast::{BinOp, Space};
use lang::core::{
    ArrayDecl, Builtin, Expr, ExprKind, Fence, Kernel, Lit, Stmt, StmtKind, Ty, VarDecl,
};
use std::sync::Arc;

/// A tiny builder of core kernels: every statement gets its own span (so race keys differ).
struct B {
    k: Kernel,
    span: usize,
}

fn e(kind: ExprKind, ty: Ty) -> Expr {
    Expr {
        kind,
        ty,
        span: 0..0,
    }
}
fn int(v: i32) -> Expr {
    e(ExprKind::Lit(Lit::Int(v)), Ty::Int)
}
fn tid() -> Expr {
    e(ExprKind::Builtin(Builtin::LocalId), Ty::Int)
}
fn gid() -> Expr {
    e(ExprKind::Builtin(Builtin::GlobalId), Ty::Int)
}
fn var(v: usize) -> Expr {
    e(ExprKind::Var(v), Ty::Int)
}
fn bin(op: BinOp, a: Expr, b: Expr) -> Expr {
    let ty = match op {
        BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Eq | BinOp::Ne => Ty::Bool,
        _ => a.ty,
    };
    e(ExprKind::Binary(op, Box::new(a), Box::new(b)), ty)
}
fn load(a: usize, i: Expr) -> Expr {
    e(
        ExprKind::Load {
            array: a,
            index: vec![i],
        },
        Ty::Int,
    )
}

impl B {
    fn new(arrays: &[(&str, Space, usize)], nvars: usize) -> B {
        B {
            k: Kernel {
                name: "k".into(),
                params: vec![],
                arrays: arrays
                    .iter()
                    .map(|&(name, space, n)| ArrayDecl {
                        name: name.into(),
                        elem: Ty::Int,
                        space,
                        is_const: false,
                        dims: vec![int(n as i32)],
                        span: 0..0,
                        lanes: 1,
                        byte_elem: None,
                    })
                    .collect(),
                vars: (0..nvars)
                    .map(|v| VarDecl {
                        name: format!("v{v}"),
                        ty: Ty::Int,
                        span: 0..0,
                        fresh_in: None,
                    })
                    .collect(),
                blocks: vec![vec![]],
                groups: None,
                local_size: None,
                groups_more: Vec::new(),
                local_size_more: Vec::new(),
                generic: false,
            },
            span: 0,
        }
    }
    fn stmt(&mut self, kind: StmtKind) -> Stmt {
        self.span += 10;
        Stmt {
            kind,
            span: self.span..self.span + 5,
        }
    }
    fn assign(&mut self, v: usize, value: Expr) -> Stmt {
        self.stmt(StmtKind::Assign { var: v, value })
    }
    fn store(&mut self, a: usize, i: Expr, value: Expr) -> Stmt {
        self.stmt(StmtKind::Store {
            array: a,
            index: vec![i],
            value,
        })
    }
    fn barrier(&mut self) -> Stmt {
        self.stmt(StmtKind::Barrier {
            fence: Fence::BOTH,
            flags: None,
        })
    }
    fn block(&mut self, stmts: Vec<Stmt>) -> usize {
        self.k.blocks.push(stmts);
        self.k.blocks.len() - 1
    }
    fn iff(&mut self, cond: Expr, then: Vec<Stmt>, els: Vec<Stmt>) -> Stmt {
        let (then, els) = (self.block(then), self.block(els));
        self.stmt(StmtKind::If { cond, then, els })
    }
    fn whilst(&mut self, cond: Expr, body: Vec<Stmt>) -> Stmt {
        let body = self.block(body);
        self.stmt(StmtKind::While { cond, body })
    }
    fn launch(self, body: Vec<Stmt>, groups: usize, local: usize) -> Launch {
        self.launch_bounded(body, groups, local, 10_000)
    }
    fn launch_bounded(mut self, body: Vec<Stmt>, groups: usize, local: usize, max: u64) -> Launch {
        self.k.blocks[0] = body;
        let opts = LaunchOptions {
            groups: Some(groups),
            local_size: Some(local),
            max_steps: Some(max),
            ..Default::default()
        };
        Launch::new(Arc::new(self.k), &opts).expect("launch")
    }
}

/// Runs fast (1 and 2 workers, tracked) and reference; checks they agree; returns fast's.
fn run(l: &Launch) -> FastOutcome {
    let reference = run_canonical(l);
    let mut first: Option<FastOutcome> = None;
    for jobs in [1, 2] {
        let out = fast::run(
            l,
            &FastOptions {
                jobs,
                track_races: true,
            },
        )
        .unwrap();
        assert_eq!(out.fault, reference.fault);
        if out.fault.is_none() {
            assert_eq!(out.memory, reference.memory);
        }
        assert_eq!(out.steps, reference.steps);
        let races: Vec<_> = out.races.iter().map(|r| r.race.clone()).collect();
        assert_eq!(races, reference.races);
        if let Some(f) = &first {
            assert_eq!(f.memory, out.memory);
            assert_eq!(f.races, out.races);
        }
        first = Some(out);
    }
    first.unwrap()
}

fn ints(v: &[Value]) -> Vec<i32> {
    v.iter()
        .map(|x| match x {
            Value::Int(i) => *i,
            other => panic!("{other:?}"),
        })
        .collect()
}

#[test]
fn assignment_and_store() {
    let mut b = B::new(&[("A", Space::Local, 4)], 1);
    let body = vec![
        b.assign(0, bin(BinOp::Mul, tid(), int(3))),
        b.store(0, tid(), var(0)),
    ];
    let out = run(&b.launch(body, 1, 4));
    assert_eq!(ints(&out.memory.arrays[0][0]), vec![0, 3, 6, 9]);
    assert_eq!(out.steps, 8);
    assert!(out.races.is_empty());
    assert_eq!(out.intervals, 1);
}

#[test]
fn if_then_else() {
    let mut b = B::new(&[("A", Space::Local, 4)], 0);
    let t = vec![b.store(0, tid(), int(1))];
    let f = vec![b.store(0, tid(), int(2))];
    let body = vec![b.iff(bin(BinOp::Lt, tid(), int(2)), t, f)];
    let out = run(&b.launch(body, 1, 4));
    assert_eq!(ints(&out.memory.arrays[0][0]), vec![1, 1, 2, 2]);
    assert_eq!(out.steps, 8);
}

#[test]
fn while_loop_counts_every_evaluation() {
    let mut b = B::new(&[("A", Space::Local, 4)], 1);
    let inc = vec![b.assign(0, bin(BinOp::Add, var(0), int(1)))];
    let body = vec![
        b.whilst(bin(BinOp::Lt, var(0), tid()), inc),
        b.store(0, tid(), var(0)),
    ];
    let out = run(&b.launch(body, 1, 4));
    assert_eq!(ints(&out.memory.arrays[0][0]), vec![0, 1, 2, 3]);
    // Thread t: t true evaluations + 1 false, t increments, 1 store.
    assert_eq!(out.steps, (0..4).map(|t| 2 * t + 2).sum::<u64>());
}

#[test]
fn barrier_orders_and_separates() {
    let mut b = B::new(&[("A", Space::Local, 4), ("B", Space::Local, 4)], 0);
    let next = bin(BinOp::Rem, bin(BinOp::Add, tid(), int(1)), int(4));
    let body = vec![
        b.store(0, tid(), bin(BinOp::Mul, tid(), int(10))),
        b.barrier(),
        b.store(1, tid(), load(0, next)),
    ];
    let out = run(&b.launch(body, 1, 4));
    assert_eq!(ints(&out.memory.arrays[1][0]), vec![10, 20, 30, 0]);
    assert!(out.races.is_empty());
    assert_eq!(out.intervals, 2);
}

#[test]
fn faults() {
    // Out of bounds: thread 3 reads A[4].
    let mut b = B::new(&[("A", Space::Local, 4)], 1);
    let body = vec![b.assign(0, load(0, bin(BinOp::Add, tid(), int(1))))];
    let out = run(&b.launch(body, 1, 4));
    let f = out.fault.unwrap();
    assert!(matches!(f.kind, FaultKind::OutOfBounds { .. }));
    assert_eq!(f.thread.unwrap().local, 3);

    // Division by zero: thread 2 computes 7 / (tid - 2).
    let mut b = B::new(&[("A", Space::Local, 4)], 1);
    let body = vec![b.assign(0, bin(BinOp::Div, int(7), bin(BinOp::Sub, tid(), int(2))))];
    let out = run(&b.launch(body, 1, 4));
    let f = out.fault.unwrap();
    assert_eq!(
        f.kind,
        FaultKind::DivisionByZero {
            dividend: "7".into()
        }
    );
    assert_eq!(f.thread.unwrap().local, 2);

    // Shift count: 1 << (tid * 16) faults for tid = 2 (count 32).
    let mut b = B::new(&[("A", Space::Local, 4)], 1);
    let body = vec![b.assign(0, bin(BinOp::Shl, int(1), bin(BinOp::Mul, tid(), int(16))))];
    let out = run(&b.launch(body, 1, 4));
    let f = out.fault.unwrap();
    assert_eq!(f.kind, FaultKind::ShiftRange { count: 32 });
    assert_eq!(f.thread.unwrap().local, 2);

    // A thread that never reaches its barrier: the step bound, never "race-free".
    let mut b = B::new(&[("A", Space::Local, 4)], 1);
    let spin = vec![b.assign(0, bin(BinOp::Add, var(0), int(1)))];
    let body = vec![
        b.whilst(bin(BinOp::Ge, tid(), int(3)), spin),
        b.barrier(),
        b.store(0, tid(), int(1)),
    ];
    let out = run(&b.launch(body, 1, 4));
    assert_eq!(
        out.fault.unwrap().kind,
        FaultKind::StepBound { steps: 10_000 }
    );
    assert_eq!(out.steps, 10_000);
}

/// Races of a one-statement-pair kernel on `A`: (first kind, second kind, count).
fn race_kinds(out: &FastOutcome) -> Vec<(AccessKind, AccessKind, u64)> {
    out.races
        .iter()
        .map(|r| (r.race.first.kind, r.race.second.kind, r.count))
        .collect()
}

#[test]
fn race_write_then_read() {
    // Thread t writes A[t] then reads A[t-1] (written by thread t-1 earlier).
    let mut b = B::new(&[("A", Space::Local, 4)], 1);
    let prev = bin(BinOp::Rem, bin(BinOp::Add, tid(), int(3)), int(4));
    let body = vec![b.store(0, tid(), int(1)), b.assign(0, load(0, prev))];
    let out = run(&b.launch(body, 1, 4));
    // Pairs: A[0..2] written by t, read by t+1; A[3] read by 0 then written by 3.
    // Both orders join the same two statements: one race key, 4 pairs.
    assert_eq!(
        race_kinds(&out),
        vec![(AccessKind::Write, AccessKind::Read, 4)]
    );
}

#[test]
fn race_read_then_write() {
    // Thread t reads A[t+1] then writes A[t]: A[t+1] is written later by thread t+1.
    let mut b = B::new(&[("A", Space::Local, 5)], 1);
    let body = vec![
        b.assign(0, load(0, bin(BinOp::Add, tid(), int(1)))),
        b.store(0, tid(), int(1)),
    ];
    let out = run(&b.launch(body, 1, 4));
    assert_eq!(
        race_kinds(&out),
        vec![(AccessKind::Read, AccessKind::Write, 3)]
    );
    let r = &out.races[0].race;
    assert_eq!((r.first.thread.local, r.second.thread.local), (0, 1));
    assert_eq!(r.index, vec![1]);
}

#[test]
fn race_write_write_counts_all_pairs() {
    let mut b = B::new(&[("A", Space::Local, 4)], 0);
    let body = vec![b.store(0, int(0), tid())];
    let out = run(&b.launch(body, 1, 5));
    assert_eq!(
        race_kinds(&out),
        vec![(AccessKind::Write, AccessKind::Write, 10)]
    );
}

#[test]
fn same_thread_is_no_race() {
    let mut b = B::new(&[("A", Space::Local, 4)], 1);
    let body = vec![b.store(0, tid(), int(1)), b.assign(0, load(0, tid()))];
    let out = run(&b.launch(body, 1, 4));
    assert!(out.races.is_empty());
}

#[test]
fn barrier_separated_is_no_race() {
    let mut b = B::new(&[("A", Space::Local, 4)], 1);
    let next = bin(BinOp::Rem, bin(BinOp::Add, tid(), int(1)), int(4));
    let body = vec![
        b.store(0, tid(), int(1)),
        b.barrier(),
        b.assign(0, load(0, next)),
    ];
    let out = run(&b.launch(body, 1, 4));
    assert!(out.races.is_empty());
}

#[test]
fn groups_race_on_global_not_on_local() {
    // Every thread of 2 groups writes G[0] and L[0] (one thread per group).
    let mut b = B::new(&[("G", Space::Global, 2), ("L", Space::Local, 2)], 0);
    let body = vec![
        b.store(0, int(0), gid()),
        b.barrier(),
        b.store(1, int(0), gid()),
    ];
    let out = run(&b.launch(body, 2, 1));
    assert_eq!(out.races.len(), 1);
    let r = &out.races[0].race;
    assert_eq!(r.array, 0);
    assert_eq!((r.first.thread.group, r.second.thread.group), (0, 1));
    assert_eq!(ints(&out.memory.arrays[1][0]), vec![0, 0]);
    assert_eq!(ints(&out.memory.arrays[1][1]), vec![1, 0]);
}

#[test]
fn identical_whatever_the_number_of_workers() {
    // A big racy launch: every thread reads its left neighbour and writes its own element.
    let mut b = B::new(&[("A", Space::Local, 5000)], 1);
    let left = bin(BinOp::Rem, bin(BinOp::Add, tid(), int(4999)), int(5000));
    let body = vec![
        b.assign(0, load(0, left)),
        b.store(0, tid(), bin(BinOp::Add, var(0), int(1))),
    ];
    let l = b.launch_bounded(body, 1, 5000, 1_000_000);
    let reference = run_canonical(&l);
    assert!(reference.fault.is_none());
    assert_eq!(reference.races.len(), 1);
    let runs: Vec<FastOutcome> = [1, 2, 3]
        .iter()
        .map(|&jobs| {
            fast::run(
                &l,
                &FastOptions {
                    jobs,
                    track_races: true,
                },
            )
            .unwrap()
        })
        .collect();
    for r in &runs {
        assert!(r.fault.is_none());
        assert!(
            r.memory == reference.memory,
            "memory differs from the reference"
        );
    }
    for r in &runs[1..] {
        assert_eq!(r.memory, runs[0].memory);
        assert_eq!(r.races, runs[0].races);
        assert_eq!(r.steps, runs[0].steps);
    }
    assert_eq!(runs[0].races.len(), 1);
    assert_eq!(runs[0].races[0].count, 5000);
    // Canonical values: each thread sees its left neighbour's new value (a chain).
    assert_eq!(ints(&runs[0].memory.arrays[0][0])[4999], 5000);
}

#[test]
fn list_monoid_is_unsupported() {
    let src = "kernel k(local T A[4]) launch(groups = 1, local_size = 4) { A[tid] = A[tid] <+> identity; }";
    let k = lang::check::compile(src).expect("compiles");
    let opts = LaunchOptions {
        monoid: interp::Monoid::List,
        ..Default::default()
    };
    let l = Launch::new(Arc::new(k), &opts).expect("launch");
    let err = fast::run(&l, &FastOptions::default()).unwrap_err();
    assert!(err.to_string().contains("list"), "{err}");
}

#[test]
fn two_dimensional_arrays_and_interval_monoid() {
    let src = "kernel k(const local T in[n], local T t[2][n]) launch(groups = 1, local_size = n) {
        t[0][tid] = in[tid];
        barrier();
        if (tid > 0) t[1][tid] = t[0][tid - 1] <+> t[0][tid]; else t[1][tid] = t[0][tid];
    }";
    let k = lang::check::compile(src).expect("compiles");
    let opts = LaunchOptions {
        defines: vec![("n".into(), "300".into())],
        monoid: interp::Monoid::Interval,
        inputs: vec![("in".into(), "iota".into())],
        ..Default::default()
    };
    let l = Launch::new(Arc::new(k), &opts).expect("launch");
    let out = run(&l);
    assert!(out.races.is_empty());
    assert_eq!(out.memory.arrays[1][0][600 - 1].to_string(), "[298,299]");
}

/// Two barriers in a row: K-BARRIER fires twice before anyone can step again.
/// (`interp::exec::run` fires each group's barrier once per loop iteration and then stops
/// because no thread is runnable; the differential test uses a driver that fires until no
/// barrier is enabled.)
#[test]
fn consecutive_barriers() {
    let src = "kernel k(local int A[4]) launch(groups = 1, local_size = 4) {
        barrier(); barrier(); A[tid] = 1;
    }";
    let k = lang::check::compile(src).expect("compiles");
    let l = Launch::new(Arc::new(k), &LaunchOptions::default()).expect("launch");
    for jobs in [1, 2] {
        let out = fast::run(
            &l,
            &FastOptions {
                jobs,
                track_races: true,
            },
        )
        .unwrap();
        assert_eq!(ints(&out.memory.arrays[0][0]), vec![1, 1, 1, 1]);
        assert_eq!(out.steps, 4);
        assert_eq!(out.intervals, 3);
    }
    let reference = run_canonical(&l);
    eprintln!(
        "reference exec::run_canonical: {:?} after {} steps",
        reference.memory.arrays[0][0], reference.steps
    );
}
