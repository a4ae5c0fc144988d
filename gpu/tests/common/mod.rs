//! Hand-built kernels for the tests (the parser is not needed).
#![allow(dead_code)]

use gpu::builder::*;
use interp::{Launch, LaunchOptions, Monoid};
use lang::ast::Space;
use lang::core::Ty;
use std::sync::Arc;

/// `kernel double_it(const global int in[n], global int out[n]) { out[tid] = in[tid] * 2; }`
/// with one work-group of n threads.
pub fn double_it() -> lang::core::Kernel {
    let mut k = KernelBuilder::new("double_it");
    let n = k.size_param("n");
    let input = k.array("in", Ty::Int, Space::Global, true, vec![n.clone()]);
    let out = k.array("out", Ty::Int, Space::Global, false, vec![n.clone()]);
    k.launch(Some(int(1)), Some(n));
    let v = k.load(input, vec![tid()]);
    k.store(out, vec![tid()], mul(v, int(2)));
    k.finish()
}

/// Kogge–Stone inclusive scan over `const local T in[n]`, `local T out[n]` (as
/// examples/kogge_stone.ksim), `groups` work-groups of n threads.
pub fn kogge_stone() -> lang::core::Kernel {
    let mut k = KernelBuilder::new("kogge_stone");
    let n = k.size_param("n");
    let input = k.array("in", Ty::Generic, Space::Local, true, vec![n.clone()]);
    let out = k.array("out", Ty::Generic, Space::Local, false, vec![n.clone()]);
    k.launch(None, Some(n.clone()));
    let v = k.load(input, vec![tid()]);
    k.store(out, vec![tid()], v);
    k.barrier();
    let offset = k.let_("offset", int(1));
    let temp = k.var("temp", Ty::Generic);
    k.while_(lt(k.get(offset), n.clone()), |k| {
        k.assign(temp, identity());
        k.if_(bin(lang::ast::BinOp::Ge, tid(), k.get(offset)), |k| {
            let v = k.load(out, vec![sub(tid(), k.get(offset))]);
            k.assign(temp, v);
        });
        k.barrier();
        k.if_(bin(lang::ast::BinOp::Ge, tid(), k.get(offset)), |k| {
            let v = k.load(out, vec![tid()]);
            k.store(out, vec![tid()], combine(k.get(temp), v));
        });
        k.barrier();
        k.assign(offset, mul(k.get(offset), int(2)));
    });
    k.finish()
}

/// A kernel exercising integer corner cases on `global int a[n]` / `global uint u[n]` /
/// `global float f[n]` / `global bool z[n]` / a 2D `global int m[r][c]`.
pub fn corner_cases() -> lang::core::Kernel {
    use lang::ast::{BinOp, UnOp};
    let mut k = KernelBuilder::new("corners");
    let n = k.size_param("n");
    let a = k.array("a", Ty::Int, Space::Global, false, vec![n.clone()]);
    let u = k.array("u", Ty::Uint, Space::Global, false, vec![n.clone()]);
    let f = k.array("f", Ty::Float, Space::Global, false, vec![n.clone()]);
    let z = k.array("z", Ty::Bool, Space::Global, false, vec![n.clone()]);
    let m = k.array("m", Ty::Int, Space::Global, false, vec![int(2), n.clone()]);
    k.launch(Some(int(1)), Some(n.clone()));
    let xa = k_load(&mut k, a);
    let x = k.let_("x", xa);
    // Wrapping arithmetic.
    k.store(
        a,
        vec![tid()],
        add(mul(k.get(x), int(65536)), int(i32::MAX)),
    );
    let neg = unary(UnOp::Neg, k.get(x));
    k.store(m, vec![int(0), tid()], sub(neg, int(i32::MIN)));
    // Division by a variable (-1 for the INT_MIN case) and remainder.
    let dv = k.let_("dv", cond(eq(tid(), int(0)), int(-1), add(tid(), int(1))));
    k.store(
        m,
        vec![int(1), tid()],
        add(
            div(k.get(x), k.get(dv)),
            bin(BinOp::Rem, k.get(x), k.get(dv)),
        ),
    );
    // Unsigned: wraps, shifts, log2, min/max.
    let ux = k.let_("ux", cast(Ty::Uint, k.get(x)));
    let shifted = bin(BinOp::Shr, k.get(ux), uint(3));
    k.store(
        u,
        vec![tid()],
        add(
            sub(uint(0), k.get(ux)),
            bin(
                BinOp::BitXor,
                shifted,
                cast(Ty::Uint, log2(add(tid(), int(1)))),
            ),
        ),
    );
    // Floats: division, casts, min/max.
    let fx = k.let_("fx", cast(Ty::Float, k.get(x)));
    let fl = k.load(f, vec![tid()]);
    let q = div(fl.clone(), add(k.get(fx), float(0.5)));
    k.store(f, vec![tid()], max(min(q, float(1e30)), float(-3.5)));
    // Bools and short-circuit.
    let zb = k.load(z, vec![tid()]);
    let sc = bin(
        BinOp::LogOr,
        zb,
        bin(
            BinOp::LogAnd,
            gt(k.get(x), int(10)),
            lt(cast(Ty::Int, fl), int(100)),
        ),
    );
    k.store(z, vec![tid()], unary(UnOp::Not, sc));
    k.finish()
}

fn k_load(k: &mut KernelBuilder, a: usize) -> lang::core::Expr {
    k.load(a, vec![tid()])
}

pub fn launch(
    k: lang::core::Kernel,
    defines: &[(&str, usize)],
    monoid: Monoid,
    groups: Option<usize>,
    inputs: &[(&str, &str)],
) -> Launch {
    Launch::new(
        Arc::new(k),
        &LaunchOptions {
            defines: defines
                .iter()
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect(),
            groups,
            monoid,
            inputs: inputs
                .iter()
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect(),
            ..Default::default()
        },
    )
    .expect("launch")
}
