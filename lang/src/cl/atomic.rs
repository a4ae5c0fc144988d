//! OpenCL C 1.2's atomic functions (§6.12.11 `atomic_*`, and the `atom_*` names of the
//! `cl_khr_{global,local}_int32_{base,extended}_atomics` extensions, which §9.5 defines
//! with the same meaning) on `__global` and `__local` `int`/`uint`, lowered to the core's
//! S-ATOMIC statement: one indivisible read-modify-write of the element the pointer
//! argument reaches ([`super::pointer`]), returning the old value.
//!
//! Two atomics on one element never race; an atomic and a plain access do unless a barrier
//! orders them (the core's race check). `atomic_xchg` also works on `float` (allowed by
//! §6.12.11: it moves the bits); the 64-bit `atom_*` of `cl_khr_int64_{base,extended}_atomics`
//! (`atom_add` on a `long *`) work the same way on `long`/`ulong` elements.

use super::*;
use crate::core::AtomicOp;

/// The core operation of an atomic function name (`atomic_add`, `atom_add`, ...).
pub fn op(name: &str) -> Option<AtomicOp> {
    let base = name
        .strip_prefix("atomic_")
        .or_else(|| name.strip_prefix("atom_"))?;
    AtomicOp::ALL
        .into_iter()
        .find(|op| op.name().strip_prefix("atomic_") == Some(base))
}

impl<'u> Lowerer<'u> {
    /// `atomic_op(p, args...)`: as a statement (`value == false`) or, for its value, into
    /// a temporary holding the old value (returned).
    pub(super) fn atomic(
        &mut self,
        op: AtomicOp,
        func: &cl::Ident,
        args: &[cl::Expr],
        value: bool,
        span: &Span,
        pre: &mut Vec<k::Stmt>,
    ) -> Res<Option<k::Expr>> {
        let want = 1 + op.operands();
        if args.len() != want {
            return Err(Diagnostic::new(
                format!(
                    "`{}` takes {want} argument{}",
                    func.name,
                    if want == 1 { "" } else { "s" }
                ),
                span.clone(),
            ));
        }
        let target = &args[0];
        if !self.is_pointer(target) {
            return Err(Diagnostic::new(
                format!("the first argument of `{}` must be a pointer", func.name),
                target.span.clone(),
            ));
        }
        // Several places when the pointer's target is chosen at run time (a chain of
        // atomics, one per target), none when it is always null (its check faults).
        let p = self.pointer_value(target, pre)?;
        let (arms, elem) = self.places(p, None, &target.span, pre)?;
        for a in &arms {
            if self.byte_arrays.contains_key(&a.array.name) {
                return unsupported(
                    format!(
                        "`{}` on an element of a `__local` array that the kernel also writes \
                         byte by byte through a pointer cast",
                        func.name
                    ),
                    &target.span,
                );
            }
            if let Some(v) = a.view {
                return unsupported(
                    format!(
                        "`{}` through a pointer cast (`{}` elements seen as `{}`: an atomic \
                         through a view of another type)",
                        func.name,
                        crate::check::ty_of(v.elem).name(),
                        crate::check::ty_of(v.unit).name()
                    ),
                    &target.span,
                );
            }
            if a.index.is_empty() {
                return Err(Diagnostic::new(
                    format!(
                        "`{}` works on `__global` and `__local` memory, not a private variable",
                        func.name
                    ),
                    target.span.clone(),
                ));
            }
            self.writable(&a.array.name, &target.span)?;
        }
        let float_xchg = op == AtomicOp::Xchg && elem == TypeName::Float;
        if !matches!(
            elem,
            TypeName::Int | TypeName::Uint | TypeName::Long | TypeName::Ulong
        ) && !float_xchg
        {
            return unsupported(
                format!(
                    "`{}` on `{}` elements (ksim's atomics are on `int`, `uint`, `long`, `ulong`)",
                    func.name,
                    format!("{elem:?}").to_lowercase()
                ),
                &target.span,
            );
        }
        let mut operands = Vec::new();
        for a in &args[1..] {
            operands.push(self.expr(a, pre)?);
        }
        let call = |a: pointer::Arm| {
            let mut lowered = vec![ex(
                k::ExprKind::Index {
                    array: a.array,
                    indices: a.index,
                },
                &target.span,
            )];
            lowered.extend(operands.iter().cloned());
            ex(
                k::ExprKind::Call {
                    func: ident(op.name(), &func.span),
                    args: lowered,
                },
                span,
            )
        };
        if arms.len() == 1 {
            let call = call(arms.into_iter().next().expect("one place"));
            if !value {
                pre.push(st(k::StmtKind::Call(call), span));
                return Ok(None);
            }
            let t = self.temp("old", elem, Some(call), span, pre);
            return Ok(Some(name_expr(&t, span)));
        }
        let t = value.then(|| self.temp("old", elem, None, span, pre));
        let arms = arms
            .into_iter()
            .map(|a| {
                let when = a.when.clone();
                let c = call(a);
                let s = match &t {
                    Some(t) => set(t, c, span),
                    None => st(k::StmtKind::Call(c), span),
                };
                (when, vec![s])
            })
            .collect();
        pre.extend(pointer::chain(arms, span));
        Ok(t.map(|t| name_expr(&t, span)))
    }
}

#[cfg(test)]
mod tests {
    use crate::cl::{compile, ClOptions, SourceMap};
    use crate::core::{AtomicOp, StmtKind};

    fn compile_src(src: &str) -> Result<crate::cl::Compiled, String> {
        let mut map = SourceMap::new("k.cl", src.to_string());
        compile(&mut map, &ClOptions::default(), &mut |_| {
            Err("no includes".into())
        })
        .map_err(|d| d[0].message.clone())
    }

    fn atomics(c: &crate::cl::Compiled) -> Vec<(AtomicOp, String, usize, bool)> {
        c.kernel
            .blocks
            .iter()
            .flatten()
            .filter_map(|s| match &s.kind {
                StmtKind::Atomic {
                    op,
                    array,
                    args,
                    result,
                    ..
                } => Some((
                    *op,
                    c.kernel.arrays[*array].name.clone(),
                    args.len(),
                    result.is_some(),
                )),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn every_name_maps_to_its_operation() {
        for op in AtomicOp::ALL {
            let base = op.name().strip_prefix("atomic_").unwrap();
            assert_eq!(super::op(op.name()), Some(op));
            assert_eq!(super::op(&format!("atom_{base}")), Some(op));
        }
        assert_eq!(super::op("atomic_fetch_add"), None);
    }

    #[test]
    fn atomics_on_pointers_addresses_and_local_scalars() {
        let c = compile_src(
            "__kernel void k(__global int *A, __global uint *B) { \
             __local int count; \
             atomic_add(A, 10); \
             atom_inc(&B[get_local_id(0)]); \
             int old = atomic_cmpxchg(A + 2, 1, 2); \
             A[atomic_inc(&count)] = old; }",
        )
        .unwrap();
        assert_eq!(
            atomics(&c),
            vec![
                (AtomicOp::Add, "A".into(), 1, false),
                (AtomicOp::Inc, "B".into(), 0, false),
                (AtomicOp::CmpXchg, "A".into(), 2, true),
                (AtomicOp::Inc, "count".into(), 0, true),
            ]
        );
    }

    #[test]
    fn float_atomics_other_than_xchg_and_wrong_arity_are_refused() {
        let c = compile_src("__kernel void k(__global float *F) { atomic_xchg(F, 1.0f); }");
        assert!(c.is_ok(), "{:?}", c.err());
        let e =
            compile_src("__kernel void k(__global float *F) { atomic_add(F, 1.0f); }").unwrap_err();
        // OpenCL C 1.2 declares no `atomic_add` on `float`: clang refuses the call.
        assert!(e.contains("call to 'atomic_add' is ambiguous"), "{e}");
        let e = compile_src("__kernel void k(__global int *A) { atomic_add(A); }").unwrap_err();
        assert!(
            e.contains("no matching function for call to 'atomic_add'"),
            "{e}"
        );
        let e =
            compile_src("__kernel void k(__global int *A, int x) { atomic_inc(x); }").unwrap_err();
        assert!(
            e.contains("no matching function for call to 'atomic_inc'"),
            "{e}"
        );
    }
}
