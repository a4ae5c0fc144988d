//! OpenCL C's floating-point math built-ins (§6.12.2), lowered to the core's math
//! functions ([`crate::core::MathFn`]: one definition that both engines run, correctly
//! rounded or within 1 ULP; the OpenCL code generator emits the device's own function).
//!
//! - `sqrt(x)`, `exp(x)`, `pow(x, y)`, `fma(a, b, c)`, ...: the core function, each operand
//!   converted to `float` (an integer argument is converted as by a cast). `native_f` and
//!   `half_f`, which OpenCL lets a device compute with less precision, run the precise `f`.
//! - `pown(x, n)` is `pow(x, (float)n)` (exact for `|n| < 2^24`); `native_recip(x)` is
//!   `1.0f / x`, `native_divide(x, y)` is `x / y`; `isinf(x)` and `isfinite(x)` compare
//!   `fabs(x)` with `INFINITY` (an `int`, 0 or 1, for a scalar).
//! - `sincos(x, cosval)` stores `cos(x)` through the pointer `cosval` (a write the race
//!   check sees, like any store) and is `sin(x)`.
//! - On vectors each function applies per component (`ceil(float4)`, `pown(float4, int4)`);
//!   a scalar operand is widened to every component.

use super::builtins::Math;
use super::*;
use crate::core::MathFn;

fn call(name: &str, args: Vec<k::Expr>, span: &Span) -> k::Expr {
    ex(
        k::ExprKind::Call {
            func: ident(name, span),
            args,
        },
        span,
    )
}

fn float(e: k::Expr) -> k::Expr {
    let span = e.span.clone();
    ex(k::ExprKind::Cast(TypeName::Float, Box::new(e)), &span)
}

impl<'u> Lowerer<'u> {
    /// The scalar math built-in `m` on operands already lowered (`sincos`: the sine only;
    /// its store is made by [`Lowerer::math_call`]).
    fn math_value(&self, m: Math, mut args: Vec<k::Expr>, span: &Span) -> k::Expr {
        let bin = |op, a, b| ex(k::ExprKind::Binary(op, Box::new(a), Box::new(b)), span);
        let inf = || ex(k::ExprKind::Float(f32::INFINITY), span);
        match m {
            Math::Fn(f) => call(f.name(), args.into_iter().map(float).collect(), span),
            Math::Pown => call(
                MathFn::Pow.name(),
                args.into_iter().map(float).collect(),
                span,
            ),
            Math::SinCos => call(MathFn::Sin.name(), vec![float(args.remove(0))], span),
            Math::Recip => bin(
                BinOp::Div,
                ex(k::ExprKind::Float(1.0), span),
                float(args.remove(0)),
            ),
            Math::Divide => {
                let a = float(args.remove(0));
                bin(BinOp::Div, a, float(args.remove(0)))
            }
            Math::IsInf | Math::IsFinite => {
                let abs = call(MathFn::Fabs.name(), vec![float(args.remove(0))], span);
                let op = if m == Math::IsInf {
                    BinOp::Eq
                } else {
                    BinOp::Lt
                };
                ex(
                    k::ExprKind::Cast(TypeName::Int, Box::new(bin(op, abs, inf()))),
                    span,
                )
            }
        }
    }

    /// A scalar call of math built-in `m`.
    pub(super) fn math_call(
        &mut self,
        m: Math,
        func: &cl::Ident,
        args: &[cl::Expr],
        span: &Span,
        pre: &mut Vec<k::Stmt>,
    ) -> Res<k::Expr> {
        if args.len() != m.arity() {
            return Err(Diagnostic::new(
                format!("`{}` takes {} argument(s)", func.name, m.arity()),
                span.clone(),
            ));
        }
        if m == Math::SinCos {
            let x = self.expr(&args[0], pre)?;
            let x = float(x);
            let t = self.temp("sincos_x", TypeName::Float, Some(x), &args[0].span, pre);
            let x = name_expr(&t, span);
            self.store_through(
                &args[1],
                call(MathFn::Cos.name(), vec![x.clone()], span),
                pre,
            )?;
            return Ok(self.math_value(m, vec![x], span));
        }
        let mut lowered = Vec::new();
        for a in args {
            lowered.push(self.expr(a, pre)?);
        }
        Ok(self.math_value(m, lowered, span))
    }

    /// `*p = value` for the pointer argument `p` of a built-in.
    fn store_through(&mut self, p: &cl::Expr, value: k::Expr, pre: &mut Vec<k::Stmt>) -> Res<()> {
        if !self.is_pointer(p) {
            return Err(Diagnostic::new(
                "this argument must be a pointer (`&c`, a buffer)",
                p.span.clone(),
            ));
        }
        let ptr = self.pointer(p, pre)?;
        let (array, indices) = self.pointee(ptr, None, &p.span)?;
        self.writable(&array.name, &p.span)?;
        let target = if indices.is_empty() {
            k::LValue::Var(array)
        } else {
            k::LValue::Elem { array, indices }
        };
        pre.push(st(
            k::StmtKind::Assign {
                target,
                op: k::AssignOp::Set,
                value,
            },
            &p.span,
        ));
        Ok(())
    }

    /// A call of math built-in `m` with a vector operand: its components (`n` of them).
    pub(super) fn math_vec(
        &mut self,
        m: Math,
        func: &cl::Ident,
        args: &[cl::Expr],
        n: u8,
        span: &Span,
        pre: &mut Vec<k::Stmt>,
    ) -> Res<Vec<k::Expr>> {
        if args.len() != m.arity() {
            return Err(Diagnostic::new(
                format!("`{}` takes {} argument(s)", func.name, m.arity()),
                span.clone(),
            ));
        }
        if m == Math::SinCos {
            return unsupported("`sincos` of a vector", span);
        }
        let mut lowered = Vec::new();
        for a in args {
            let elem = match self.vec_shape(a) {
                Some((e, _)) => e,
                None if m == Math::Pown => TypeName::Int,
                None => TypeName::Float,
            };
            let comps = self.vec_value(a, (elem, n), pre)?;
            lowered.push(comps);
        }
        let mut out = Vec::new();
        for i in 0..n as usize {
            let at: Vec<k::Expr> = lowered.iter().map(|a| a[i].clone()).collect();
            let v = self.math_value(m, at, span);
            // Vector relational results are -1 (true) or 0 per component (§6.12.6).
            out.push(if matches!(m, Math::IsInf | Math::IsFinite) {
                ex(k::ExprKind::Unary(UnOp::Neg, Box::new(v)), span)
            } else {
                v
            });
        }
        Ok(out)
    }
}
