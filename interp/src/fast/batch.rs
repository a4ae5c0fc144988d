//! Lock-step (SIMT-style) execution of a batch of up to [`W`] consecutive threads of an
//! interval, for speculative runs: one instruction dispatch serves every lane at that
//! program counter. Lanes that branch differently are scheduled by smallest program counter,
//! so structured code reconverges after `if`s and loops.
//!
//! Executing lanes in lock-step instead of one after another is only valid when the
//! threads do not interact within the interval, which the speculative policy checks for
//! every access exactly as in thread-by-thread execution (see [`super`]). Anything unusual
//! (a fault, a budget overrun, a conflict) abandons the batch, and the caller re-runs the
//! whole interval sequentially, which decides it exactly.

use super::compile::{Inst, Program};
use super::exec::{ArrView, Policy};
use super::repr::{
    combine_interval, combine_voigt1, combine_voigt2, conv_word, wide_binary, wide_min_max,
    wide_unary, Repr,
};
use super::shadow::Spec;

/// Lanes per batch.
pub(crate) const W: usize = 64;

/// Registers and program state of a batch, structure-of-arrays: register `r` of lane `l`
/// is `regs[r * W + l]`.
pub(crate) struct Batch {
    pub regs: Vec<u64>,
    pub pc: [u32; W],
    pub steps: [u64; W],
}

impl Batch {
    pub fn new(nregs: usize) -> Batch {
        Batch {
            regs: vec![0; nregs * W],
            pc: [0; W],
            steps: [0; W],
        }
    }
}

/// How the lanes of a batch ended: a mask of lanes at a barrier (the rest of the initial
/// mask terminated).
pub(crate) type Ended = u64;

#[inline(always)]
fn f(x: u64) -> f32 {
    f32::from_bits(x as u32)
}

#[inline(always)]
fn fb(x: f32) -> u64 {
    x.to_bits() as u64
}

#[inline(always)]
fn idx(r: u64, signed: bool) -> i64 {
    if signed {
        r as u32 as i32 as i64
    } else {
        r as i64
    }
}

/// Runs the lanes of `mask` (thread `tid0 + lane`) from their program counters until each
/// is at a barrier or done. `Err(())`: something needs the sequential path (a fault, a lane
/// over `budget`, a conflict or cross-group conflict flagged by the policy).
pub(crate) fn exec_batch(
    prog: &Program,
    views: &[ArrView],
    b: &mut Batch,
    mask: u64,
    tid0: u32,
    budget: u64,
    pol: &mut Spec,
) -> Result<Ended, ()> {
    let code = &prog.code[..];
    let sites = &prog.sites[..];
    let rp = b.regs.as_mut_ptr();
    let nregs = prog.nregs;
    debug_assert!(b.regs.len() >= nregs * W);
    // SAFETY: register indices are < nregs (checked at compile time) and lanes < W.
    macro_rules! r {
        ($r:expr, $l:expr) => {
            *unsafe { &mut *rp.add($r as usize * W + $l) }
        };
    }
    macro_rules! lanes {
        ($m:expr, |$l:ident| $body:expr) => {{
            let mut m = $m;
            if m == u64::MAX {
                for $l in 0..W {
                    $body;
                }
            } else {
                while m != 0 {
                    let $l = m.trailing_zeros() as usize;
                    m &= m - 1;
                    $body;
                }
            }
        }};
    }
    macro_rules! bin {
        ($m:expr, $d:expr, $a:expr, $b:expr, |$x:ident, $y:ident| $e:expr) => {
            lanes!($m, |l| {
                let $x = r!($a, l);
                let $y = r!($b, l);
                r!($d, l) = $e;
            })
        };
    }
    macro_rules! un {
        ($m:expr, $d:expr, $a:expr, |$x:ident| $e:expr) => {
            lanes!($m, |l| {
                let $x = r!($a, l);
                r!($d, l) = $e;
            })
        };
    }
    // Pending (pc, mask) groups; the group with the smallest pc runs next.
    let mut groups: Vec<(u32, u64)> = Vec::with_capacity(8);
    let add = |groups: &mut Vec<(u32, u64)>, pc: u32, m: u64| {
        if m == 0 {
            return;
        }
        for g in groups.iter_mut() {
            if g.0 == pc {
                g.1 |= m;
                return;
            }
        }
        groups.push((pc, m));
    };
    {
        let mut m = mask;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            add(&mut groups, b.pc[l], 1 << l);
        }
    }
    // A lane looping longer than this hands the interval to the sequential path, so that a
    // batch of looping lanes costs at most about one budget of steps in total.
    let lane_cap = (budget / W as u64).max(1 << 16).min(budget);
    let mut at_barrier: u64 = 0;
    while !groups.is_empty() {
        let k = (0..groups.len()).min_by_key(|&k| groups[k].0).unwrap();
        let (mut pc, m) = groups.swap_remove(k);
        // Run the group until it branches, jumps or stops.
        loop {
            let inst = unsafe { *code.get_unchecked(pc as usize) };
            pc += 1;
            match inst {
                Inst::Mov { d, a } => un!(m, d, a, |x| x),
                Inst::Add { d, a, b } => {
                    bin!(m, d, a, b, |x, y| (x as u32).wrapping_add(y as u32) as u64)
                }
                Inst::Sub { d, a, b } => {
                    bin!(m, d, a, b, |x, y| (x as u32).wrapping_sub(y as u32) as u64)
                }
                Inst::Mul { d, a, b } => {
                    bin!(m, d, a, b, |x, y| (x as u32).wrapping_mul(y as u32) as u64)
                }
                Inst::And { d, a, b } => bin!(m, d, a, b, |x, y| x & y),
                Inst::Or { d, a, b } => bin!(m, d, a, b, |x, y| x | y),
                Inst::Xor { d, a, b } => bin!(m, d, a, b, |x, y| x ^ y),
                Inst::Eq { d, a, b } => bin!(m, d, a, b, |x, y| (x == y) as u64),
                Inst::Ne { d, a, b } => bin!(m, d, a, b, |x, y| (x != y) as u64),
                Inst::DivI { d, a, b, .. }
                | Inst::RemI { d, a, b, .. }
                | Inst::ShlI { d, a, b, .. }
                | Inst::ShrI { d, a, b, .. } => {
                    let mut bad = false;
                    lanes!(m, |l| {
                        let (x, y) = (r!(a, l) as u32 as i32, r!(b, l) as u32 as i32);
                        let v = match inst {
                            Inst::DivI { .. } | Inst::RemI { .. } if y == 0 => {
                                bad = true;
                                0
                            }
                            Inst::DivI { .. } => x.wrapping_div(y),
                            Inst::RemI { .. } => x.wrapping_rem(y),
                            _ if !(0..32).contains(&y) => {
                                bad = true;
                                0
                            }
                            Inst::ShlI { .. } => x << y,
                            _ => x >> y,
                        };
                        r!(d, l) = v as u32 as u64;
                    });
                    if bad {
                        return Err(());
                    }
                }
                Inst::DivU { d, a, b, .. }
                | Inst::RemU { d, a, b, .. }
                | Inst::ShlU { d, a, b, .. }
                | Inst::ShrU { d, a, b, .. } => {
                    let mut bad = false;
                    lanes!(m, |l| {
                        let (x, y) = (r!(a, l) as u32, r!(b, l) as u32);
                        let v = match inst {
                            Inst::DivU { .. } | Inst::RemU { .. } if y == 0 => {
                                bad = true;
                                0
                            }
                            Inst::DivU { .. } => x / y,
                            Inst::RemU { .. } => x % y,
                            _ if y >= 32 => {
                                bad = true;
                                0
                            }
                            Inst::ShlU { .. } => x << y,
                            _ => x >> y,
                        };
                        r!(d, l) = v as u64;
                    });
                    if bad {
                        return Err(());
                    }
                }
                Inst::LtI { d, a, b } => bin!(m, d, a, b, |x, y| ((x as u32 as i32)
                    < (y as u32 as i32))
                    as u64),
                Inst::LeI { d, a, b } => bin!(m, d, a, b, |x, y| ((x as u32 as i32)
                    <= (y as u32 as i32))
                    as u64),
                Inst::LtU { d, a, b } => bin!(m, d, a, b, |x, y| (x < y) as u64),
                Inst::LeU { d, a, b } => bin!(m, d, a, b, |x, y| (x <= y) as u64),
                Inst::MinI { d, a, b } => bin!(m, d, a, b, |x, y| if (x as u32 as i32)
                    < (y as u32 as i32)
                {
                    x
                } else {
                    y
                }),
                Inst::MaxI { d, a, b } => bin!(m, d, a, b, |x, y| if (x as u32 as i32)
                    < (y as u32 as i32)
                {
                    y
                } else {
                    x
                }),
                Inst::MinU { d, a, b } => bin!(m, d, a, b, |x, y| if x < y { x } else { y }),
                Inst::MaxU { d, a, b } => bin!(m, d, a, b, |x, y| if x < y { y } else { x }),
                Inst::AddF { d, a, b } => bin!(m, d, a, b, |x, y| fb(f(x) + f(y))),
                Inst::SubF { d, a, b } => bin!(m, d, a, b, |x, y| fb(f(x) - f(y))),
                Inst::MulF { d, a, b } => bin!(m, d, a, b, |x, y| fb(f(x) * f(y))),
                Inst::DivF { d, a, b } => bin!(m, d, a, b, |x, y| fb(f(x) / f(y))),
                Inst::LtF { d, a, b } => bin!(m, d, a, b, |x, y| (f(x) < f(y)) as u64),
                Inst::LeF { d, a, b } => bin!(m, d, a, b, |x, y| (f(x) <= f(y)) as u64),
                Inst::EqF { d, a, b } => bin!(m, d, a, b, |x, y| (f(x) == f(y)) as u64),
                Inst::NeF { d, a, b } => bin!(m, d, a, b, |x, y| (f(x) != f(y)) as u64),
                Inst::MinF { d, a, b } => bin!(m, d, a, b, |x, y| if f(x) < f(y) { x } else { y }),
                Inst::MaxF { d, a, b } => bin!(m, d, a, b, |x, y| if f(x) < f(y) { y } else { x }),
                Inst::CombIv { d, a, b } => bin!(m, d, a, b, |x, y| combine_interval(x, y)),
                Inst::CombV1 { d, a, b } => bin!(m, d, a, b, |x, y| combine_voigt1(x, y)),
                Inst::CombV2 { d, a, b } => bin!(m, d, a, b, |x, y| combine_voigt2(x, y)),
                Inst::Neg { d, a } => un!(m, d, a, |x| (x as u32).wrapping_neg() as u64),
                Inst::NegF { d, a } => un!(m, d, a, |x| fb(-f(x))),
                Inst::BitNot { d, a } => un!(m, d, a, |x| (!(x as u32)) as u64),
                Inst::IsZ { d, a } => un!(m, d, a, |x| (x == 0) as u64),
                Inst::NeZ { d, a } => un!(m, d, a, |x| (x != 0) as u64),
                Inst::IsZF { d, a } => un!(m, d, a, |x| (f(x) == 0.0) as u64),
                Inst::NeZF { d, a } => un!(m, d, a, |x| (f(x) != 0.0) as u64),
                Inst::I2F { d, a } => un!(m, d, a, |x| fb(x as u32 as i32 as f32)),
                Inst::U2F { d, a } => un!(m, d, a, |x| fb(x as u32 as f32)),
                Inst::F2I { d, a } => un!(m, d, a, |x| f(x) as i32 as u32 as u64),
                Inst::F2U { d, a } => un!(m, d, a, |x| f(x) as u32 as u64),
                Inst::Conv { d, a, from, to } => un!(m, d, a, |x| conv_word(x, from, to)),
                Inst::WideUn { op, r, d, a } => un!(m, d, a, |x| wide_unary(op, r, x)),
                Inst::WideMinMax { min, r, d, a, b } => {
                    bin!(m, d, a, b, |x, y| wide_min_max(min, r, x, y))
                }
                Inst::Wide { op, r, d, a, b, .. } => {
                    let mut bad = false;
                    lanes!(m, |l| {
                        match wide_binary(op, r, r!(a, l), r!(b, l)) {
                            Ok(v) => r!(d, l) = v,
                            Err(_) => bad = true,
                        }
                    });
                    if bad {
                        return Err(());
                    }
                }
                Inst::Log2 { d, a, signed, to } => un!(m, d, a, |x| {
                    let v = idx(x, signed);
                    let lg = if v <= 0 {
                        0
                    } else {
                        63 - v.leading_zeros() as i64
                    } as i32;
                    match to {
                        Repr::F32 => fb(lg as f32),
                        Repr::Bool => (lg != 0) as u64,
                        _ => lg as u32 as u64,
                    }
                }),
                Inst::Math {
                    f: func,
                    d,
                    a,
                    b,
                    c,
                } => lanes!(m, |l| {
                    let x = [f(r!(a, l)), f(r!(b, l)), f(r!(c, l))];
                    r!(d, l) = fb(func.apply(&x));
                }),
                Inst::IntFn {
                    f: func,
                    gen,
                    d,
                    a,
                    b,
                    c,
                } => lanes!(m, |l| {
                    r!(d, l) = func.apply(gen, &[r!(a, l), r!(b, l), r!(c, l)]);
                }),
                Inst::Load { d, i, site } | Inst::Load2 { d, i, site, .. } => {
                    let s = &sites[site as usize];
                    let view = &views[s.arr as usize];
                    let j = match inst {
                        Inst::Load2 { j, .. } => Some(j),
                        _ => None,
                    };
                    let mut bad = false;
                    lanes!(m, |l| {
                        let off = match j {
                            None => {
                                let x = idx(r!(i, l), s.signed[0]);
                                if x < 0 || x as u64 >= view.mem.len() as u64 {
                                    bad = true;
                                    continue;
                                }
                                x as usize
                            }
                            Some(j) => {
                                let (x, y) =
                                    (idx(r!(i, l), s.signed[0]), idx(r!(j, l), s.signed[1]));
                                let (d0, d1) = (view.dims[0] as u64, view.dims[1] as u64);
                                if x < 0 || x as u64 >= d0 || y < 0 || y as u64 >= d1 {
                                    bad = true;
                                    continue;
                                }
                                x as usize * d1 as usize + y as usize
                            }
                        };
                        pol.who.tid = tid0 + l as u32;
                        pol.me = (pol.stamp as u64) << 32 | pol.who.tid as u64;
                        match pol.load(view, s, off, 0) {
                            Ok(v) => r!(d, l) = v,
                            Err(()) => bad = true,
                        }
                    });
                    if bad {
                        return Err(());
                    }
                }
                Inst::Store { i, v, site } | Inst::Store2 { i, v, site, .. } => {
                    let s = &sites[site as usize];
                    let view = &views[s.arr as usize];
                    let j = match inst {
                        Inst::Store2 { j, .. } => Some(j),
                        _ => None,
                    };
                    let mut bad = false;
                    lanes!(m, |l| {
                        let off = match j {
                            None => {
                                let x = idx(r!(i, l), s.signed[0]);
                                if x < 0 || x as u64 >= view.mem.len() as u64 {
                                    bad = true;
                                    continue;
                                }
                                x as usize
                            }
                            Some(j) => {
                                let (x, y) =
                                    (idx(r!(i, l), s.signed[0]), idx(r!(j, l), s.signed[1]));
                                let (d0, d1) = (view.dims[0] as u64, view.dims[1] as u64);
                                if x < 0 || x as u64 >= d0 || y < 0 || y as u64 >= d1 {
                                    bad = true;
                                    continue;
                                }
                                x as usize * d1 as usize + y as usize
                            }
                        };
                        pol.who.tid = tid0 + l as u32;
                        pol.me = (pol.stamp as u64) << 32 | pol.who.tid as u64;
                        if pol.store(view, s, off, r!(v, l), 0).is_err() {
                            bad = true;
                        }
                    });
                    if bad {
                        return Err(());
                    }
                }
                // Atomics make threads interact within an interval by design: lock-step
                // speculation does not apply, the sequential path decides.
                Inst::Atomic { .. } => return Err(()),
                // Annotations (S-ASSERT) read memory as the canonical schedule leaves it and
                // may fault: the sequential path decides.
                Inst::Assert { .. } | Inst::Peek { .. } | Inst::Peek2 { .. } => return Err(()),
                // Uninitialised reads are checked only by sequential runs (no speculation
                // under `--uninit check`).
                Inst::UseVar { .. } | Inst::DefVar { .. } | Inst::UndefVar { .. } => return Err(()),
                Inst::Sync { .. } => unreachable!("warp programs run in `super::warp`"),
                Inst::Jump { t, steps } => {
                    lanes!(m, |l| b.steps[l] += steps as u64);
                    add(&mut groups, t, m);
                    break;
                }
                Inst::Loop { t, steps } => {
                    let mut over = false;
                    lanes!(m, |l| {
                        b.steps[l] += steps as u64;
                        over |= b.steps[l] > lane_cap;
                    });
                    if over {
                        return Err(());
                    }
                    add(&mut groups, t, m);
                    break;
                }
                Inst::Barrier { steps, .. } | Inst::Halt { steps } => {
                    let mut over = false;
                    lanes!(m, |l| {
                        b.steps[l] += steps as u64;
                        b.pc[l] = pc;
                        over |= b.steps[l] > budget;
                    });
                    if over {
                        return Err(());
                    }
                    if matches!(inst, Inst::Barrier { .. }) {
                        at_barrier |= m;
                    }
                    break;
                }
                _ => {
                    // Conditional jumps.
                    let (t, st, sf) = match inst {
                        Inst::Jz { t, st, sf, .. }
                        | Inst::Jnz { t, st, sf, .. }
                        | Inst::JnLtI { t, st, sf, .. }
                        | Inst::JnLeI { t, st, sf, .. }
                        | Inst::JnLtU { t, st, sf, .. }
                        | Inst::JnLeU { t, st, sf, .. }
                        | Inst::JnEq { t, st, sf, .. }
                        | Inst::JnNe { t, st, sf, .. } => (t, st, sf),
                        _ => unreachable!("every instruction is handled"),
                    };
                    // `go`: lanes that fall through.
                    let mut go = 0u64;
                    macro_rules! cond {
                        (|$l:ident| $c:expr) => {
                            lanes!(m, |$l| go |= ($c as u64) << $l)
                        };
                    }
                    match inst {
                        Inst::Jz { c, .. } => cond!(|l| r!(c, l) != 0),
                        Inst::Jnz { c, .. } => cond!(|l| r!(c, l) == 0),
                        Inst::JnLtI { a, b, .. } => {
                            cond!(|l| (r!(a, l) as u32 as i32) < (r!(b, l) as u32 as i32))
                        }
                        Inst::JnLeI { a, b, .. } => {
                            cond!(|l| (r!(a, l) as u32 as i32) <= (r!(b, l) as u32 as i32))
                        }
                        Inst::JnLtU { a, b, .. } => cond!(|l| r!(a, l) < r!(b, l)),
                        Inst::JnLeU { a, b, .. } => cond!(|l| r!(a, l) <= r!(b, l)),
                        Inst::JnEq { a, b, .. } => cond!(|l| r!(a, l) == r!(b, l)),
                        Inst::JnNe { a, b, .. } => cond!(|l| r!(a, l) != r!(b, l)),
                        _ => unreachable!(),
                    }
                    let taken = m & !go;
                    if st != 0 || sf != 0 {
                        lanes!(m, |l| b.steps[l] +=
                            if go >> l & 1 != 0 { sf } else { st } as u64);
                    }
                    if taken == 0 {
                        continue; // everyone falls through: keep going
                    }
                    if go == 0 {
                        pc = t;
                        // Everyone jumps: keep going unless another group waits before `t`.
                        if groups.iter().all(|g| g.0 > t) {
                            continue;
                        }
                        add(&mut groups, t, m);
                        break;
                    }
                    add(&mut groups, t, taken);
                    add(&mut groups, pc, go);
                    break;
                }
            }
        }
    }
    Ok(at_barrier)
}
