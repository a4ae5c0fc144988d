//! OpenCL's work-item functions (OpenCL C 1.2 §6.12.1) on 1D, 2D and 3D NDRanges, lowered
//! to the core's per-dimension queries ([`crate::core::Builtin::Dim`]) and
//! `get_work_dim()`. The launch gives the shape (`--global 64,2 --local 16,2`); in a
//! dimension beyond the launch's, sizes are 1 and ids 0, as the specification requires.
//!
//! The dimension must be a constant: the core has one builtin per dimension, and every
//! kernel of the GPUVerify suite writes a literal. A constant of 3 or more is allowed by the
//! specification ("returns 0" for ids and offsets, 1 for sizes) and lowered to that constant.

use super::ast as cl;
use crate::ast::{self as k, Span, TypeName};
use crate::diag::Diagnostic;

/// The per-dimension work-item functions ksim lowers, by OpenCL name.
const QUERIES: [&str; 7] = [
    "get_local_id",
    "get_global_id",
    "get_group_id",
    "get_local_size",
    "get_num_groups",
    "get_global_size",
    "get_global_offset",
];

/// Whether `name` is a work-item function (the per-dimension queries and `get_work_dim`).
pub fn is_work_item(name: &str) -> bool {
    name == "get_work_dim" || QUERIES.contains(&name)
}

fn uint(value: u64, span: &Span) -> k::Expr {
    k::Expr {
        kind: k::ExprKind::Int {
            value,
            unsigned: true,
        },
        span: span.clone(),
    }
}

/// `get_local_id(d)` etc. as a `.ksim` expression of type `uint` (OpenCL's `size_t`, 32
/// bits in ksim); `get_work_dim()` likewise.
pub fn lower(name: &str, args: &[cl::Expr], span: &Span) -> Result<k::Expr, Diagnostic> {
    let call = |args: Vec<k::Expr>| k::Expr {
        kind: k::ExprKind::Cast(
            TypeName::Uint,
            Box::new(k::Expr {
                kind: k::ExprKind::Call {
                    func: k::Ident {
                        name: name.to_string(),
                        span: span.clone(),
                    },
                    args,
                },
                span: span.clone(),
            }),
        ),
        span: span.clone(),
    };
    if name == "get_work_dim" {
        return match args {
            [] => Ok(call(Vec::new())),
            _ => Err(Diagnostic::new(
                "`get_work_dim` takes no arguments",
                span.clone(),
            )),
        };
    }
    let [arg] = args else {
        return Err(Diagnostic::new(
            format!("`{name}` takes one argument (the dimension)"),
            span.clone(),
        ));
    };
    let d = match constant(arg) {
        Some(d) => d,
        None => {
            return Err(Diagnostic::new(
                format!(
                    "not supported yet: a dimension of `{name}` that is not a constant (0, 1 or 2)"
                ),
                arg.span.clone(),
            ))
        }
    };
    if d < 3 {
        return Ok(call(vec![k::Expr {
            kind: k::ExprKind::Int {
                value: d,
                unsigned: false,
            },
            span: arg.span.clone(),
        }]));
    }
    // §6.12.1: for a dimension outside 0 .. get_work_dim() - 1, sizes are 1, ids and the
    // offset are 0.
    let size = matches!(
        name,
        "get_local_size" | "get_num_groups" | "get_global_size"
    );
    Ok(uint(u64::from(size), span))
}

/// The value of an integer constant expression written as a literal, possibly with a cast
/// or parentheses (`0`, `1u`, `(uint)2`).
fn constant(e: &cl::Expr) -> Option<u64> {
    match &e.kind {
        cl::ExprKind::Int { value, .. } => Some(*value),
        cl::ExprKind::Cast(t, a) if t.pointers.is_empty() => constant(a),
        cl::ExprKind::Plus(a) => constant(a),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use crate::cl::{compile, ClOptions, SourceMap};
    use crate::core::{Builtin, DimQuery, ExprKind, StmtKind};

    fn compile_src(src: &str) -> Result<crate::cl::Compiled, String> {
        let mut map = SourceMap::new("k.cl", src.to_string());
        compile(&mut map, &ClOptions::default(), &mut |_| {
            Err("no includes".into())
        })
        .map_err(|d| d[0].message.clone())
    }

    /// The builtins under the casts of a store's value, in order.
    fn builtins(e: &crate::core::Expr, out: &mut Vec<Builtin>) {
        match &e.kind {
            ExprKind::Builtin(b) => out.push(*b),
            ExprKind::Cast(a) | ExprKind::Unary(_, a) => builtins(a, out),
            ExprKind::Binary(_, a, b) => {
                builtins(a, out);
                builtins(b, out);
            }
            _ => {}
        }
    }

    #[test]
    fn each_dimension_maps_to_its_core_query() {
        let c = compile_src(
            "__kernel void k(__global uint *A) { \
             A[0] = get_local_id(1) + get_global_id(2) + get_group_id(0) + get_local_size(2) \
             + get_num_groups(1) + get_global_size(1) + get_global_offset(2) + get_work_dim(); }",
        )
        .unwrap();
        let StmtKind::Store { value, .. } = &c.kernel.blocks[0][0].kind else {
            panic!("a store")
        };
        let mut b = Vec::new();
        builtins(value, &mut b);
        assert_eq!(
            b,
            vec![
                Builtin::Dim(DimQuery::LocalId, 1),
                Builtin::Dim(DimQuery::GlobalId, 2),
                Builtin::Dim(DimQuery::GroupId, 0),
                Builtin::Dim(DimQuery::LocalSize, 2),
                Builtin::Dim(DimQuery::NumGroups, 1),
                Builtin::Dim(DimQuery::GlobalSize, 1),
                Builtin::Dim(DimQuery::GlobalOffset, 2),
                Builtin::WorkDim,
            ]
        );
    }

    #[test]
    fn a_dimension_beyond_three_is_the_specified_constant() {
        let c = compile_src(
            "__kernel void k(__global uint *A) { A[0] = get_local_id(3); A[1] = get_local_size(5); }",
        )
        .unwrap();
        let lits: Vec<_> = c.kernel.blocks[0]
            .iter()
            .map(|s| match &s.kind {
                StmtKind::Store { value, .. } => format!("{:?}", value.kind),
                _ => panic!("a store"),
            })
            .collect();
        assert!(lits[0].contains("Uint(0)"), "{}", lits[0]);
        assert!(lits[1].contains("Uint(1)"), "{}", lits[1]);
    }

    #[test]
    fn a_variable_dimension_is_refused_clearly() {
        let e = compile_src("__kernel void k(__global uint *A, int d) { A[0] = get_local_id(d); }")
            .unwrap_err();
        assert!(e.contains("not a constant"), "{e}");
        let e = compile_src("__kernel void k(__global uint *A) { A[0] = get_work_dim(1); }")
            .unwrap_err();
        assert!(e.contains("too many arguments to function call"), "{e}");
    }
}
