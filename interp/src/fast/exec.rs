//! The bytecode interpreter: runs one thread from its saved program counter until it
//! reaches a barrier, terminates, faults, exhausts its step budget, or its memory policy
//! asks it to stop. Memory accesses go through a [`Policy`] (plain, speculative with
//! conflict detection, or exact with race tracking), monomorphised into the loop.

use super::compile::{CheckValue, Inst, Program, Site, NO_SITE};
use super::repr::{
    combine_interval, combine_voigt1, combine_voigt2, conv_word, wide_binary, wide_min_max,
    wide_unary, Repr,
};
use crate::fault::FaultKind;
use crate::race::AccessKind;
use crate::value::{OpError, Value};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};

/// One array as the threads of the current work-group see it.
pub(crate) struct ArrView<'a> {
    /// The group's instance.
    pub mem: &'a [AtomicU64],
    /// Writer shadow of the group's instance (empty when unused).
    pub wsh: &'a [AtomicU64],
    /// Offset of the instance in the array's flat storage.
    pub abs_base: usize,
    /// Dimensions (1 or 2).
    pub dims: &'a [usize],
    pub name: &'a str,
    pub is_const: bool,
    /// A `local` array (its accesses take the group's `local` barrier epoch).
    pub local: bool,
    /// Launch-wide group marks (writer group, reader groups) for a `global` array shared by
    /// several groups, when races are tracked.
    pub cross: Option<(&'a [AtomicU32], &'a [AtomicU32])>,
    /// `--uninit check`: one bit per element of the whole array (all instances, indexed
    /// by `abs_base + offset`), set once the element is defined; empty when the array
    /// starts defined or the check is off ([`crate::undef`]).
    pub def: &'a [AtomicU64],
    /// What an out-of-bounds read gives when the run goes on past it: the element type's
    /// zero (the identity for `T`), encoded.
    pub zero: u64,
}

impl ArrView<'_> {
    /// Whether element `off` of the instance is defined ([`crate::undef`]).
    #[inline(always)]
    pub fn defined(&self, off: usize) -> bool {
        let i = self.abs_base + off;
        self.def.is_empty() || self.def[i / 64].load(Relaxed) & (1 << (i % 64)) != 0
    }

    /// Element `off` of the instance is written: defined from now on.
    #[inline(always)]
    pub fn define(&self, off: usize) {
        if !self.def.is_empty() {
            let i = self.abs_base + off;
            self.def[i / 64].fetch_or(1 << (i % 64), Relaxed);
        }
    }
}

/// How a thread left [`exec`].
#[derive(Debug)]
pub(crate) enum Exit {
    /// At a barrier; the program counter points after it.
    Barrier,
    Done,
    /// A runtime fault in the statement of `site`, within the step budget.
    Fault {
        kind: FaultKind,
        site: u32,
    },
    /// The step budget would be exceeded.
    Budget,
    /// The policy asked to stop (a conflict in speculative mode, a cross-group conflict).
    Stop,
    /// At the start of the next statement (warp compilation only); the program counter
    /// points at its [`Inst::Sync`].
    Sync,
}

/// What a thread is: its group and local id.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Who {
    pub group: u32,
    pub tid: u32,
    /// The unit whose accesses never race with each other: the thread itself (`tid`),
    /// or its warp under lock-step warps ([`super::warp`]), numbered within the group.
    pub warp: u32,
    /// The thread's lane in `warp` (0 without warps); below 64.
    pub lane: u32,
}

impl Who {
    /// A thread interleaved on its own (no warps).
    pub fn thread(group: u32, tid: u32) -> Who {
        Who {
            group,
            tid,
            warp: tid,
            lane: 0,
        }
    }
}

/// The operation of an S-ATOMIC on an `int` (`signed`) or `uint` element, with its
/// operands: what a [`Policy`] applies to the element.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Rmw {
    pub op: lang::core::AtomicOp,
    pub signed: bool,
    /// A 64-bit element.
    pub wide: bool,
    pub a: u64,
    pub b: u64,
}

impl Rmw {
    /// The element's new bits when it held `old`.
    #[inline]
    pub fn apply(self, old: u64) -> u64 {
        atomic_bits(self.op, self.signed, self.wide, old, self.a, self.b)
    }

    /// The access kind when the element held `old`: an atomic read for a compare-exchange
    /// that finds another value than the compared one (it writes nothing), else an atomic
    /// update ([`crate::reference::atomic_writes`]).
    #[inline]
    pub fn kind(self, old: u64) -> AccessKind {
        let width = if self.wide {
            u64::MAX
        } else {
            u64::from(u32::MAX)
        };
        if self.op == lang::core::AtomicOp::CmpXchg && (old ^ self.a) & width != 0 {
            AccessKind::AtomicRead
        } else {
            AccessKind::Atomic
        }
    }
}

/// Memory semantics of a run. `steps` is the thread's step counter; the access is at the
/// thread's step `steps + site.pre` of the interval.
pub(crate) trait Policy {
    fn load(&mut self, view: &ArrView, site: &Site, off: usize, steps: u64) -> Result<u64, ()>;
    fn store(
        &mut self,
        view: &ArrView,
        site: &Site,
        off: usize,
        v: u64,
        steps: u64,
    ) -> Result<(), ()>;
    /// S-ATOMIC: replaces the element's value `old` by `new(old)` in one step and returns
    /// `old`. By default a load and a store (what conflict detection needs when nothing
    /// is reported); the exact tracker records one atomic access instead.
    fn rmw(
        &mut self,
        view: &ArrView,
        site: &Site,
        off: usize,
        steps: u64,
        op: Rmw,
    ) -> Result<u64, ()> {
        let old = self.load(view, site, off, steps)?;
        self.store(view, site, off, op.apply(old), steps)?;
        Ok(old)
    }
    /// The outcome of a conditional jump (`go`: the condition held). Only the lock-step
    /// warp policy listens, to see which way an `if` or `while` test went.
    #[inline(always)]
    fn branch(&mut self, _go: bool) {}
    /// A store to element `off` happened: defined from now on (`--uninit check`). The
    /// lock-step warp policy defines its stores when it applies them, after the lanes.
    #[inline(always)]
    fn define(&mut self, view: &ArrView, off: usize) {
        view.define(off);
    }
}

/// The new bits of an `int` (`signed`) or `uint` element, or of a `long` or `ulong` one
/// (`wide`), under an atomic operation with operands `a` and `b`.
#[inline]
pub(crate) fn atomic_bits(
    op: lang::core::AtomicOp,
    signed: bool,
    wide: bool,
    old: u64,
    a: u64,
    b: u64,
) -> u64 {
    if wide && signed {
        op.apply_i64(old as i64, &[a as i64, b as i64]) as u64
    } else if wide {
        op.apply_u64(old, &[a, b])
    } else if signed {
        let args = [a as u32 as i32, b as u32 as i32];
        op.apply_i32(old as u32 as i32, &args) as u32 as u64
    } else {
        op.apply_u32(old as u32, &[a as u32, b as u32]) as u64
    }
}

#[inline(always)]
fn idx(r: u64, signed: bool) -> i64 {
    if signed {
        r as u32 as i32 as i64
    } else {
        r as i64
    }
}

#[inline(always)]
fn f(x: u64) -> f32 {
    f32::from_bits(x as u32)
}

#[inline(always)]
fn fb(x: f32) -> u64 {
    x.to_bits() as u64
}

/// The uninitialised read of element `off` of `view`.
fn undef(view: &ArrView, off: usize) -> FaultKind {
    let index = match view.dims {
        [_, d1] => vec![(off / d1) as i64, (off % d1) as i64],
        _ => vec![off as i64],
    };
    crate::undef::element(view.name, index)
}

fn oob(view: &ArrView, index: Vec<i64>) -> FaultKind {
    FaultKind::OutOfBounds {
        array: view.name.to_string(),
        index,
        dims: view.dims.to_vec(),
    }
}

/// The faults a thread went on past, in order: each kind with its site and the thread's
/// step (in the interval) that met it.
pub(crate) type FaultLog = Vec<(FaultKind, u32, u64)>;

/// Runs one thread. `regs` holds its variables, constants and builtins; `pc` and `steps`
/// are updated in place (`steps`: statements executed in this interval; a run's statements
/// are added when the run ends). `budget`: the most steps the thread may execute.
/// `log`: where a fault that allows it ([`FaultKind::continues`]) is recorded, the thread
/// going on as the reference semantics does; `None`: every fault ends the run.
#[inline(never)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn exec<P: Policy>(
    prog: &Program,
    views: &[ArrView],
    regs: &mut [u64],
    pc_io: &mut u32,
    steps_io: &mut u64,
    budget: u64,
    pol: &mut P,
    mut log: Option<&mut FaultLog>,
) -> Exit {
    debug_assert!(regs.len() >= prog.nregs);
    let code = &prog.code[..];
    let sites = &prog.sites[..];
    let rp = regs.as_mut_ptr();
    // SAFETY: every register index was checked against `nregs` when compiling, and
    // `regs.len() >= nregs`; every jump target is a valid instruction index and the code
    // ends with `Halt`.
    macro_rules! r {
        ($i:expr) => {
            *unsafe { &mut *rp.add($i as usize) }
        };
    }
    let mut pc = *pc_io as usize;
    let mut steps = *steps_io;
    // A fault at `site`: recorded when it allows going on (the caller then goes on),
    // else the end of the run.
    macro_rules! fault {
        ($site:expr, $kind:expr) => {{
            let mut site = $site;
            let s = &sites[site as usize];
            if (steps as i64 + s.pre as i64 + 1) as u64 > budget {
                *pc_io = pc as u32;
                *steps_io = steps;
                return Exit::Budget;
            }
            let mut kind: FaultKind = $kind;
            match log.as_deref_mut() {
                Some(log) if kind.continues() => {
                    log.push((kind, site, (steps as i64 + s.pre as i64) as u64))
                }
                _ => {
                    *pc_io = pc as u32;
                    *steps_io = steps;
                    // Inside a store's value: the store's element is checked first
                    // (S-ARRAY).
                    if s.guard != NO_SITE {
                        let g = &sites[s.guard as usize];
                        let view = &views[g.arr as usize];
                        let index: Vec<i64> = (0..g.nidx as usize)
                            .map(|k| idx(r!(g.regs[k]), g.signed[k]))
                            .collect();
                        if crate::eval::offset(&index, view.dims).is_none() {
                            kind = oob(view, index);
                            site = s.guard;
                        }
                    }
                    return Exit::Fault { kind, site };
                }
            }
        }};
    }
    macro_rules! jump {
        ($t:expr, $n:expr) => {{
            steps += $n as u64;
            pc = $t as usize;
        }};
    }
    macro_rules! branch {
        ($go:expr, $t:expr, $st:expr, $sf:expr) => {{
            let go = $go;
            pol.branch(go);
            if go {
                steps += $sf as u64;
            } else {
                steps += $st as u64;
                pc = $t as usize;
            }
        }};
    }
    loop {
        let inst = unsafe { *code.get_unchecked(pc) };
        pc += 1;
        match inst {
            Inst::Mov { d, a } => r!(d) = r!(a),
            Inst::Add { d, a, b } => r!(d) = (r!(a) as u32).wrapping_add(r!(b) as u32) as u64,
            Inst::Sub { d, a, b } => r!(d) = (r!(a) as u32).wrapping_sub(r!(b) as u32) as u64,
            Inst::Mul { d, a, b } => r!(d) = (r!(a) as u32).wrapping_mul(r!(b) as u32) as u64,
            Inst::And { d, a, b } => r!(d) = r!(a) & r!(b),
            Inst::Or { d, a, b } => r!(d) = r!(a) | r!(b),
            Inst::Xor { d, a, b } => r!(d) = r!(a) ^ r!(b),
            Inst::Eq { d, a, b } => r!(d) = (r!(a) == r!(b)) as u64,
            Inst::Ne { d, a, b } => r!(d) = (r!(a) != r!(b)) as u64,
            Inst::DivI { d, a, b, site } | Inst::RemI { d, a, b, site } => {
                let (x, y) = (r!(a) as u32 as i32, r!(b) as u32 as i32);
                if y == 0 {
                    fault!(
                        site,
                        FaultKind::DivisionByZero {
                            dividend: Value::Int(x).to_string()
                        }
                    );
                    r!(d) = 0;
                    continue;
                }
                let v = if matches!(inst, Inst::DivI { .. }) {
                    x.wrapping_div(y)
                } else {
                    x.wrapping_rem(y)
                };
                r!(d) = v as u32 as u64;
            }
            Inst::DivU { d, a, b, site } | Inst::RemU { d, a, b, site } => {
                let (x, y) = (r!(a) as u32, r!(b) as u32);
                if y == 0 {
                    fault!(
                        site,
                        FaultKind::DivisionByZero {
                            dividend: Value::Uint(x).to_string()
                        }
                    );
                    r!(d) = 0;
                    continue;
                }
                let v = if matches!(inst, Inst::DivU { .. }) {
                    x / y
                } else {
                    x % y
                };
                r!(d) = v as u64;
            }
            Inst::ShlI { d, a, b, site } | Inst::ShrI { d, a, b, site } => {
                let (x, y) = (r!(a) as u32 as i32, r!(b) as u32 as i32);
                if !(0..32).contains(&y) {
                    fault!(site, FaultKind::ShiftRange { count: y as i64 });
                    r!(d) = 0;
                    continue;
                }
                let v = if matches!(inst, Inst::ShlI { .. }) {
                    x << y
                } else {
                    x >> y
                };
                r!(d) = v as u32 as u64;
            }
            Inst::ShlU { d, a, b, site } | Inst::ShrU { d, a, b, site } => {
                let (x, y) = (r!(a) as u32, r!(b) as u32);
                if y >= 32 {
                    fault!(site, FaultKind::ShiftRange { count: y as i64 });
                    r!(d) = 0;
                    continue;
                }
                let v = if matches!(inst, Inst::ShlU { .. }) {
                    x << y
                } else {
                    x >> y
                };
                r!(d) = v as u64;
            }
            Inst::LtI { d, a, b } => r!(d) = ((r!(a) as u32 as i32) < (r!(b) as u32 as i32)) as u64,
            Inst::LeI { d, a, b } => {
                r!(d) = ((r!(a) as u32 as i32) <= (r!(b) as u32 as i32)) as u64
            }
            Inst::LtU { d, a, b } => r!(d) = (r!(a) < r!(b)) as u64,
            Inst::LeU { d, a, b } => r!(d) = (r!(a) <= r!(b)) as u64,
            Inst::MinI { d, a, b } => {
                let (x, y) = (r!(a), r!(b));
                r!(d) = if (x as u32 as i32) < (y as u32 as i32) {
                    x
                } else {
                    y
                };
            }
            Inst::MaxI { d, a, b } => {
                let (x, y) = (r!(a), r!(b));
                r!(d) = if (x as u32 as i32) < (y as u32 as i32) {
                    y
                } else {
                    x
                };
            }
            Inst::MinU { d, a, b } => {
                let (x, y) = (r!(a), r!(b));
                r!(d) = if x < y { x } else { y };
            }
            Inst::MaxU { d, a, b } => {
                let (x, y) = (r!(a), r!(b));
                r!(d) = if x < y { y } else { x };
            }
            Inst::AddF { d, a, b } => r!(d) = fb(f(r!(a)) + f(r!(b))),
            Inst::SubF { d, a, b } => r!(d) = fb(f(r!(a)) - f(r!(b))),
            Inst::MulF { d, a, b } => r!(d) = fb(f(r!(a)) * f(r!(b))),
            Inst::DivF { d, a, b } => r!(d) = fb(f(r!(a)) / f(r!(b))),
            Inst::LtF { d, a, b } => r!(d) = (f(r!(a)) < f(r!(b))) as u64,
            Inst::LeF { d, a, b } => r!(d) = (f(r!(a)) <= f(r!(b))) as u64,
            Inst::EqF { d, a, b } => r!(d) = (f(r!(a)) == f(r!(b))) as u64,
            Inst::NeF { d, a, b } => r!(d) = (f(r!(a)) != f(r!(b))) as u64,
            Inst::MinF { d, a, b } => {
                let (x, y) = (r!(a), r!(b));
                r!(d) = if f(x) < f(y) { x } else { y };
            }
            Inst::MaxF { d, a, b } => {
                let (x, y) = (r!(a), r!(b));
                r!(d) = if f(x) < f(y) { y } else { x };
            }
            Inst::CombIv { d, a, b } => r!(d) = combine_interval(r!(a), r!(b)),
            Inst::CombV1 { d, a, b } => r!(d) = combine_voigt1(r!(a), r!(b)),
            Inst::CombV2 { d, a, b } => r!(d) = combine_voigt2(r!(a), r!(b)),
            Inst::Neg { d, a } => r!(d) = (r!(a) as u32).wrapping_neg() as u64,
            Inst::NegF { d, a } => r!(d) = fb(-f(r!(a))),
            Inst::BitNot { d, a } => r!(d) = (!(r!(a) as u32)) as u64,
            Inst::IsZ { d, a } => r!(d) = (r!(a) == 0) as u64,
            Inst::NeZ { d, a } => r!(d) = (r!(a) != 0) as u64,
            Inst::IsZF { d, a } => r!(d) = (f(r!(a)) == 0.0) as u64,
            Inst::NeZF { d, a } => r!(d) = (f(r!(a)) != 0.0) as u64,
            Inst::I2F { d, a } => r!(d) = fb(r!(a) as u32 as i32 as f32),
            Inst::U2F { d, a } => r!(d) = fb(r!(a) as u32 as f32),
            Inst::F2I { d, a } => r!(d) = f(r!(a)) as i32 as u32 as u64,
            Inst::F2U { d, a } => r!(d) = f(r!(a)) as u32 as u64,
            Inst::Conv { d, a, from, to } => r!(d) = conv_word(r!(a), from, to),
            Inst::WideUn { op, r, d, a } => r!(d) = wide_unary(op, r, r!(a)),
            Inst::WideMinMax { min, r, d, a, b } => r!(d) = wide_min_max(min, r, r!(a), r!(b)),
            Inst::Wide {
                op,
                r,
                d,
                a,
                b,
                site,
            } => match wide_binary(op, r, r!(a), r!(b)) {
                Ok(v) => r!(d) = v,
                Err(err) => {
                    let kind = match err {
                        OpError::DivisionByZero => FaultKind::DivisionByZero {
                            dividend: r.decode(r!(a)).to_string(),
                        },
                        OpError::ShiftRange(count) => FaultKind::ShiftRange { count },
                    };
                    fault!(site, kind);
                    r!(d) = 0;
                }
            },
            Inst::Log2 { d, a, signed, to } => {
                let v = idx(r!(a), signed);
                let l = if v <= 0 {
                    0
                } else {
                    63 - v.leading_zeros() as i64
                } as i32;
                r!(d) = match to {
                    Repr::F32 => fb(l as f32),
                    Repr::Bool => (l != 0) as u64,
                    _ => l as u32 as u64,
                };
            }
            Inst::Math {
                f: func,
                d,
                a,
                b,
                c,
            } => {
                let x = [f(r!(a)), f(r!(b)), f(r!(c))];
                r!(d) = fb(func.apply(&x));
            }
            Inst::IntFn {
                f: func,
                gen,
                d,
                a,
                b,
                c,
            } => {
                r!(d) = func.apply(gen, &[r!(a), r!(b), r!(c)]);
            }
            Inst::Load { d, i, site } => {
                let s = unsafe { sites.get_unchecked(site as usize) };
                let view = unsafe { views.get_unchecked(s.arr as usize) };
                let x = idx(r!(i), s.signed[0]);
                if x < 0 || x as u64 >= view.mem.len() as u64 {
                    fault!(site, oob(view, vec![x]));
                    r!(d) = view.zero;
                    continue;
                }
                if !view.defined(x as usize) {
                    fault!(site, undef(view, x as usize));
                }
                match pol.load(view, s, x as usize, steps) {
                    Ok(v) => r!(d) = v,
                    Err(()) => return Exit::Stop,
                }
            }
            Inst::Peek { d, i, site } => {
                let s = &sites[site as usize];
                let view = &views[s.arr as usize];
                let x = idx(r!(i), s.signed[0]);
                if x < 0 || x as u64 >= view.mem.len() as u64 {
                    fault!(site, oob(view, vec![x]));
                    r!(d) = view.zero;
                    continue;
                }
                if !view.defined(x as usize) {
                    fault!(site, undef(view, x as usize));
                }
                r!(d) = view.mem[x as usize].load(Relaxed);
            }
            Inst::Peek2 { d, i, j, site } => {
                let s = &sites[site as usize];
                let view = &views[s.arr as usize];
                let (x, y) = (idx(r!(i), s.signed[0]), idx(r!(j), s.signed[1]));
                let (d0, d1) = (view.dims[0] as u64, view.dims[1] as u64);
                if x < 0 || x as u64 >= d0 || y < 0 || y as u64 >= d1 {
                    fault!(site, oob(view, vec![x, y]));
                    r!(d) = view.zero;
                    continue;
                }
                let off = x as usize * d1 as usize + y as usize;
                if !view.defined(off) {
                    fault!(site, undef(view, off));
                }
                r!(d) = view.mem[off].load(Relaxed);
            }
            Inst::Assert { c, site, check } => {
                if r!(c) == 0 {
                    let check = &prog.checks[check as usize];
                    let values = check
                        .mentions
                        .iter()
                        .map(|(name, v)| {
                            let v = match v {
                                CheckValue::Reg(reg, repr) => super::repr::decode(r!(*reg), *repr),
                                CheckValue::Const(v) => v.clone(),
                            };
                            format!("{name} = {v}")
                        })
                        .collect();
                    fault!(
                        site,
                        FaultKind::Annotation {
                            annotation: check.annotation.name().to_string(),
                            values,
                        }
                    );
                }
            }
            Inst::Load2 { d, i, j, site } => {
                let s = &sites[site as usize];
                let view = &views[s.arr as usize];
                let (x, y) = (idx(r!(i), s.signed[0]), idx(r!(j), s.signed[1]));
                let (d0, d1) = (view.dims[0] as u64, view.dims[1] as u64);
                if x < 0 || x as u64 >= d0 || y < 0 || y as u64 >= d1 {
                    fault!(site, oob(view, vec![x, y]));
                    r!(d) = view.zero;
                    continue;
                }
                let off = x as usize * d1 as usize + y as usize;
                if !view.defined(off) {
                    fault!(site, undef(view, off));
                }
                match pol.load(view, s, off, steps) {
                    Ok(v) => r!(d) = v,
                    Err(()) => return Exit::Stop,
                }
            }
            Inst::Store { i, v, site } => {
                let s = unsafe { sites.get_unchecked(site as usize) };
                let view = unsafe { views.get_unchecked(s.arr as usize) };
                let x = idx(r!(i), s.signed[0]);
                if x < 0 || x as u64 >= view.mem.len() as u64 {
                    fault!(site, oob(view, vec![x]));
                    continue;
                }
                if pol.store(view, s, x as usize, r!(v), steps).is_err() {
                    return Exit::Stop;
                }
                pol.define(view, x as usize);
            }
            Inst::Store2 { i, j, v, site } => {
                let s = &sites[site as usize];
                let view = &views[s.arr as usize];
                let (x, y) = (idx(r!(i), s.signed[0]), idx(r!(j), s.signed[1]));
                let (d0, d1) = (view.dims[0] as u64, view.dims[1] as u64);
                if x < 0 || x as u64 >= d0 || y < 0 || y as u64 >= d1 {
                    fault!(site, oob(view, vec![x, y]));
                    continue;
                }
                let off = x as usize * d1 as usize + y as usize;
                if pol.store(view, s, off, r!(v), steps).is_err() {
                    return Exit::Stop;
                }
                pol.define(view, off);
            }
            Inst::Atomic {
                op,
                signed,
                wide,
                d,
                a,
                b,
                site,
            } => {
                let s = &sites[site as usize];
                let view = &views[s.arr as usize];
                let index: [i64; 2] = [
                    idx(r!(s.regs[0]), s.signed[0]),
                    idx(r!(s.regs[1]), s.signed[1]),
                ];
                let index = &index[..s.nidx as usize];
                let Some(off) = crate::eval::offset(index, view.dims) else {
                    fault!(site, oob(view, index.to_vec()));
                    r!(d) = view.zero;
                    continue;
                };
                if !view.defined(off) {
                    fault!(site, undef(view, off));
                }
                let (x, y) = (r!(a), r!(b));
                match pol.rmw(
                    view,
                    s,
                    off,
                    steps,
                    Rmw {
                        op,
                        signed,
                        wide,
                        a: x,
                        b: y,
                    },
                ) {
                    Ok(old) => r!(d) = old,
                    Err(()) => return Exit::Stop,
                }
            }
            Inst::UseVar { var, site } => {
                let (w, bit) = (prog.mask_base + var as usize / 64, var % 64);
                if r!(w) & (1 << bit) == 0 {
                    fault!(site, crate::undef::variable(&prog.var_names[var as usize]));
                }
            }
            Inst::DefVar { var } => {
                let (w, bit) = (prog.mask_base + var as usize / 64, var % 64);
                r!(w) |= 1 << bit;
            }
            Inst::UndefVar { var } => {
                let (w, bit) = (prog.mask_base + var as usize / 64, var % 64);
                r!(w) &= !(1 << bit);
            }
            Inst::Jump { t, steps: n } => jump!(t, n),
            Inst::Loop { t, steps: n } => {
                steps += n as u64;
                if steps > budget {
                    *pc_io = pc as u32;
                    *steps_io = steps;
                    return Exit::Budget;
                }
                pc = t as usize;
            }
            Inst::Jz { c, t, st, sf } => branch!(r!(c) != 0, t, st, sf),
            Inst::Jnz { c, t, st, sf } => branch!(r!(c) == 0, t, st, sf),
            Inst::JnLtI { a, b, t, st, sf } => {
                branch!((r!(a) as u32 as i32) < (r!(b) as u32 as i32), t, st, sf)
            }
            Inst::JnLeI { a, b, t, st, sf } => {
                branch!((r!(a) as u32 as i32) <= (r!(b) as u32 as i32), t, st, sf)
            }
            Inst::JnLtU { a, b, t, st, sf } => branch!(r!(a) < r!(b), t, st, sf),
            Inst::JnLeU { a, b, t, st, sf } => branch!(r!(a) <= r!(b), t, st, sf),
            Inst::JnEq { a, b, t, st, sf } => branch!(r!(a) == r!(b), t, st, sf),
            Inst::JnNe { a, b, t, st, sf } => branch!(r!(a) != r!(b), t, st, sf),
            Inst::Sync { .. } => {
                *pc_io = pc as u32 - 1;
                *steps_io = steps;
                return Exit::Sync;
            }
            Inst::Barrier { steps: n, .. } | Inst::Halt { steps: n } => {
                steps += n as u64;
                *pc_io = pc as u32;
                *steps_io = steps;
                if steps > budget {
                    return Exit::Budget;
                }
                return if matches!(inst, Inst::Barrier { .. }) {
                    Exit::Barrier
                } else {
                    Exit::Done
                };
            }
        }
    }
}

/// Plain memory: loads and stores in place, no tracking (sequential runs without race
/// tracking).
pub(crate) struct Plain;

impl Policy for Plain {
    #[inline(always)]
    fn load(&mut self, view: &ArrView, _: &Site, off: usize, _: u64) -> Result<u64, ()> {
        Ok(view.mem[off].load(Relaxed))
    }
    #[inline(always)]
    fn store(&mut self, view: &ArrView, _: &Site, off: usize, v: u64, _: u64) -> Result<(), ()> {
        view.mem[off].store(v, Relaxed);
        Ok(())
    }
}
