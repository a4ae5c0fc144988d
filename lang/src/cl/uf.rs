//! Functions without a body (prototypes only, and GPUVerify's `DECLARE_UF_BINARY`): GPUVerify
//! treats each as an *uninterpreted* function, an arbitrary function of its arguments that
//! writes no memory, and proves a kernel for every such function at once. ksim runs
//! programs, so it picks **one** interpretation and runs it:
//!
//! - the result is a fixed hash of the arguments' values (per function name, mixed with
//!   the murmur3 finaliser, all in wrapping `uint` arithmetic of the core): `int`/`uint`
//!   return the 32 hash bits, `bool` their lowest bit, `float` a value in `[0, 1)` (the top
//!   24 bits scaled by 2^-24); a vector result hashes its component index in as well;
//! - equal arguments give equal results (it is a function), within a work-item and across
//!   work-items; a `float` argument enters as `(int)x` and `(int)(x * 65536)`;
//! - a struct argument enters as its members' values (nested structs flattened);
//! - a pointer argument is evaluated (its side effects happen) but its memory is neither
//!   read nor written, which is what GPUVerify assumes unless `__writes_to`/`__reads_from`
//!   say otherwise; a `void` function does nothing else;
//! - a function returning a pointer returns null: nothing else is a pointer every such
//!   function may return whatever its arguments (a pointer argument, or memory it owns,
//!   are results of some functions only), and GPUVerify, proving the kernel for every
//!   function, reports the null dereference this interpretation faults on;
//! - a call of a `noreturn` function without a body cannot return: reaching it is an
//!   `__assert(false)` fault (clang marks the code after it unreachable, which GPUVerify
//!   checks as an assertion).
//!
//! A verdict therefore holds for this one interpretation: "no fault" is not GPUVerify's
//! "verified", and a kernel whose claim needs properties the function lacks (the axioms of
//! a `--boogie-file`) fails where GPUVerify, given those axioms, proves it. The lowering
//! records a [`super::Note`] saying so for each such function a kernel calls.

use super::*;

/// The golden-ratio multiplier (Knuth) that spreads each argument over the hash.
const MIX: u64 = 0x9E37_79B1;

/// FNV-1a of the function's name: each function gets its own interpretation.
fn seed(name: &str) -> u64 {
    let mut h: u32 = 0x811C_9DC5;
    for b in name.bytes() {
        h ^= b as u32;
        h = h.wrapping_mul(0x0100_0193);
    }
    h as u64
}

fn uint(v: u64, span: &Span) -> k::Expr {
    ex(
        k::ExprKind::Int {
            value: v,
            unsigned: true,
        },
        span,
    )
}

fn op(o: BinOp, a: k::Expr, b: k::Expr, span: &Span) -> k::Expr {
    ex(k::ExprKind::Binary(o, Box::new(a), Box::new(b)), span)
}

fn cast(t: TypeName, a: k::Expr, span: &Span) -> k::Expr {
    ex(k::ExprKind::Cast(t, Box::new(a)), span)
}

impl<'u> Lowerer<'u> {
    /// A call of `f`, which has no body: its arguments are evaluated, then the result (into
    /// `result` or the components `vresult`, declared by the caller) is the hash of their
    /// values. See the module documentation.
    pub(super) fn uninterpreted(
        &mut self,
        f: &'u cl::Function,
        args: &[cl::Expr],
        span: &Span,
        pre: &mut Vec<k::Stmt>,
        result: Option<(String, TypeName)>,
        vresult: Option<(Vec<String>, TypeName)>,
    ) -> Res<()> {
        let name = &f.name.name;
        let mut bits = Vec::new();
        // A struct argument enters as its members (nested structs flattened).
        let mut values = Vec::new();
        for (p, a) in f.params.iter().zip(args) {
            self.members_of(&p.ty, a, &mut values)?;
        }
        for (ty, a) in values {
            if !ty.pointers.is_empty() {
                // Evaluated for its side effects; the memory it reaches is not touched.
                self.pointer_value(&a, pre)?;
                continue;
            }
            let a = &a;
            let vals = match self.type_shape(&ty)? {
                Some(shape) => self.vec_value(a, shape, pre)?,
                None => {
                    let ty = self.scalar(&ty)?;
                    let v = self.expr(a, pre)?;
                    vec![cast(ty, v, &a.span)]
                }
            };
            for v in vals {
                let t = self.type_of(&v).unwrap_or(TypeName::Int);
                let v = self.temp("uf_arg", t, Some(v), &a.span, pre);
                let v = name_expr(&v, &a.span);
                if t == TypeName::Float {
                    let scaled = op(
                        BinOp::Mul,
                        v.clone(),
                        ex(k::ExprKind::Float(65536.0), &a.span),
                        &a.span,
                    );
                    bits.push(cast(
                        TypeName::Uint,
                        cast(TypeName::Int, v, &a.span),
                        &a.span,
                    ));
                    bits.push(cast(
                        TypeName::Uint,
                        cast(TypeName::Int, scaled, &a.span),
                        &a.span,
                    ));
                } else {
                    bits.push(cast(TypeName::Uint, v, &a.span));
                }
            }
        }
        if f.noreturn {
            // A function that never returns, without a body: the code after the call is
            // unreachable (clang marks it so, and GPUVerify checks that as an assertion).
            // ksim cannot run the call, so reaching it is an assertion fault.
            self.note(
                span,
                format!("`{name}` is `noreturn` and has no body: a call of it is reported as a failed assertion (the code after it is unreachable)"),
            );
            pre.push(st(
                k::StmtKind::Call(ex(
                    k::ExprKind::Call {
                        func: ident(crate::core::Annotation::Assert.name(), span),
                        args: vec![boolean(false, span)],
                    },
                    span,
                )),
                span,
            ));
        }
        if let Some((var, _)) = result.as_ref().filter(|(v, _)| self.is_pointer_var(v)) {
            self.note(
                &f.name.span,
                format!(
                    "`{name}` has no body and returns a pointer: GPUVerify treats it as an \
                     arbitrary function; ksim runs the one interpretation that returns null \
                     (a value every such function may return), so using its result is a \
                     null pointer dereference"
                ),
            );
            return self.return_null(var, span, pre);
        }
        let outs: Vec<(String, TypeName)> = match (result, vresult) {
            (Some(r), _) => vec![r],
            (None, Some((comps, elem))) => comps.into_iter().map(|c| (c, elem)).collect(),
            (None, None) => return Ok(()),
        };
        self.note(
            &f.name.span,
            format!(
                "`{name}` has no body: GPUVerify treats it as an arbitrary function; ksim runs one \
                 interpretation (a fixed hash of its arguments), so a verdict holds for that \
                 interpretation only"
            ),
        );
        self.hash_into(name, bits, &outs, span, pre);
        Ok(())
    }

    /// The value `a` of type `ty` as the values it is made of: itself, or a struct's
    /// members `a.m` (a member struct's in turn), into `out`.
    fn members_of(
        &self,
        ty: &cl::Type,
        a: &cl::Expr,
        out: &mut Vec<(cl::Type, cl::Expr)>,
    ) -> Res<()> {
        match &ty.base {
            cl::Base::Struct(tag) if ty.pointers.is_empty() && ty.arrays.is_empty() => {
                for f in &self.struct_def(tag, &a.span)?.fields {
                    let m = cl::Expr {
                        kind: cl::ExprKind::Member {
                            base: Box::new(a.clone()),
                            field: f.name.clone(),
                            arrow: false,
                        },
                        span: a.span.clone(),
                    };
                    self.members_of(&f.ty, &m, out)?;
                }
            }
            _ => out.push((ty.clone(), a.clone())),
        }
        Ok(())
    }

    /// Sets each of `outs` to this interpretation's value for the argument bits `bits`
    /// (each a `uint`): the hash of the bits seeded by `name`, mixed with the output's
    /// position, converted to the output's type (see the module documentation).
    pub(super) fn hash_into(
        &mut self,
        name: &str,
        bits: Vec<k::Expr>,
        outs: &[(String, TypeName)],
        span: &Span,
        pre: &mut Vec<k::Stmt>,
    ) {
        let h = self.temp(
            "uf_hash",
            TypeName::Uint,
            Some(uint(seed(name), span)),
            span,
            pre,
        );
        let hv = || name_expr(&h, span);
        // h = (h ^ bits) * MIX, for each argument.
        for b in bits {
            let x = op(BinOp::BitXor, hv(), b, span);
            pre.push(set(&h, op(BinOp::Mul, x, uint(MIX, span), span), span));
        }
        for (i, (var, ty)) in outs.iter().enumerate() {
            let c = self.temp(
                "uf_mix",
                TypeName::Uint,
                Some(op(BinOp::BitXor, hv(), uint(i as u64, span), span)),
                span,
                pre,
            );
            let cv = || name_expr(&c, span);
            // The murmur3 finaliser: every input bit affects every output bit.
            for (shift, mul) in [(16, Some(0x85EB_CA6B)), (13, Some(0xC2B2_AE35)), (16, None)] {
                let x = op(
                    BinOp::BitXor,
                    cv(),
                    op(BinOp::Shr, cv(), uint(shift, span), span),
                    span,
                );
                let x = match mul {
                    Some(m) => op(BinOp::Mul, x, uint(m, span), span),
                    None => x,
                };
                pre.push(set(&c, x, span));
            }
            let value = match ty {
                TypeName::Uint => cv(),
                TypeName::Bool => op(
                    BinOp::Ne,
                    op(BinOp::BitAnd, cv(), uint(1, span), span),
                    uint(0, span),
                    span,
                ),
                TypeName::Float => op(
                    BinOp::Mul,
                    cast(
                        TypeName::Float,
                        op(BinOp::Shr, cv(), uint(8, span), span),
                        span,
                    ),
                    ex(k::ExprKind::Float(1.0 / 16_777_216.0), span),
                    span,
                ),
                t => cast(*t, cv(), span),
            };
            pre.push(set(var, value, span));
        }
    }
}
