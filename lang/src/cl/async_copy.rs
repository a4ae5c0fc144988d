//! OpenCL C 1.2's asynchronous work-group copies (§6.12.10): `async_work_group_copy`,
//! `async_work_group_strided_copy` (`__global` to `__local` and back) and
//! `wait_group_events`, with `event_t` values.
//!
//! The specification lets an implementation perform the copy at any time between the call
//! and the `wait_group_events` that waits for its event, by any work-items of the group, and
//! requires every work-item of the group to reach the call (and the wait) with the same
//! arguments. ksim models exactly that, with the core's statements:
//!
//! - the copy is a barrier that orders no memory (`barrier` with an empty fence: it
//!   synchronises the group, so a copy not reached by every work-item is barrier
//!   divergence, and orders no accesses for races), then each work-item's share of the
//!   element copies: work-item `l` (flat local id) copies elements `l`, `l + L`, `l + 2L`,
//!   ... below `num_elements` (`L` the work-group size): `dst[i] = src[i]`, with the
//!   stride on the `__global` side for the strided copy (`src[i * stride]` when copying
//!   into `__local` memory, `dst[i * stride]` when copying out of it);
//! - `wait_group_events(n, events)` is `barrier(CLK_LOCAL_MEM_FENCE |
//!   CLK_GLOBAL_MEM_FENCE)`: it synchronises the group and orders every copy before it
//!   against every access after it, in both memory spaces.
//!
//! So an access to the destination before the wait races with another work-item's share
//! of the copy (as it may on a device), and after the wait the data is there. An `event_t`
//! is an `int` (always 0): ksim needs no event to know which copies a wait completes,
//! since it waits for all of them (a kernel that waits for only some of its events and
//! reads the others' destinations is therefore not reported; documented in
//! docs/language.md). A copy of vector elements (`float4`) copies each element's components
//! (its slots in the array, see `vector`): work-item `l` copies every component of its
//! elements.

use super::pointer::{Arm, PVal};
use super::*;
use std::collections::BTreeSet;

impl<'u> Lowerer<'u> {
    /// `async_work_group_copy(dst, src, n, event)` and
    /// `async_work_group_strided_copy(dst, src, n, stride, event)`: the copy's statements in
    /// `pre`; the value is the event (0).
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
        let int = |v: u64| {
            ex(
                k::ExprKind::Int {
                    value: v,
                    unsigned: false,
                },
                span,
            )
        };
        let as_int = |e: k::Expr| ex(k::ExprKind::Cast(TypeName::Int, Box::new(e)), span);
        let n = self.expr(&args[2], pre)?;
        let n = self.temp("copy_n", TypeName::Int, Some(as_int(n)), span, pre);
        let stride = if strided {
            let s = self.expr(&args[3], pre)?;
            Some(name_expr(
                &self.temp("copy_stride", TypeName::Int, Some(as_int(s)), span, pre),
                span,
            ))
        } else {
            None
        };
        // The event argument is evaluated for its effects, its value unused.
        let _ = self.expr(&args[want - 1], pre)?;
        pre.push(st(
            k::StmtKind::Barrier(crate::core::Fence {
                local: false,
                global: false,
            }),
            span,
        ));
        let i = self.temp(
            "copy_i",
            TypeName::Int,
            Some(name_expr("tid", span)),
            span,
            pre,
        );
        let iv = name_expr(&i, span);
        let bin = |op, a: k::Expr, b: k::Expr| {
            ex(k::ExprKind::Binary(op, Box::new(a), Box::new(b)), span)
        };
        let strided_index = |s: &Option<k::Expr>| match s {
            Some(s) => bin(BinOp::Mul, iv.clone(), s.clone()),
            None => iv.clone(),
        };
        let (di, si) = if to_local {
            (iv.clone(), strided_index(&stride))
        } else {
            (strided_index(&stride), iv.clone())
        };
        let lanes = self.copy_lanes(&args[..2], [&src, &dst], func, span)?;
        // Either pointer may be dynamic (chosen at run time, or null): its places are the
        // chain of its targets, checked (null, uninitialised) before each element copy.
        let mut body = Vec::new();
        let (sarms, elem) = self.places(src, Some(si), span, &mut body)?;
        let (darms, _) = self.places(dst, Some(di), span, &mut body)?;
        if sarms.iter().chain(&darms).any(|a| a.view.is_some()) {
            return unsupported(
                format!(
                    "`{}` through a pointer cast to another element type (a view)",
                    func.name
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
        let step = set(
            &i,
            bin(BinOp::Add, iv.clone(), name_expr("local_size", span)),
            span,
        );
        pre.push(st(
            k::StmtKind::While {
                cond: bin(BinOp::Lt, iv.clone(), name_expr(&n, span)),
                body: Box::new(block(
                    body.into_iter().chain(std::iter::once(step)).collect(),
                    span,
                )),
            },
            span,
        ));
        Ok(int(0))
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

    /// `wait_group_events(n, events)`: a barrier on both memory spaces.
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
        pre.push(st(k::StmtKind::Barrier(crate::core::Fence::BOTH), span));
        Ok(ex(
            k::ExprKind::Int {
                value: 0,
                unsigned: false,
            },
            span,
        ))
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
