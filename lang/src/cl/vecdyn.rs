//! Vector accesses through a pointer whose target is chosen at run time (a `float4 *r`
//! assigned two buffers, `c ? p : q`, null; see [`pointer`](super::pointer)).
//!
//! A vector element is one slot per component ([`vector`](super::vector)), and a dynamic
//! pointer's dereference is one place per possible target, chosen by the pointer's tag. So
//! a vector access through such a pointer is, per target, that target's slots:
//! [`VecPlaces`]. Then, as for scalars,
//!
//! - a read (`r[i]`, `*r`, `r[i].x`, `r[i].yx`) is, per component, the lazy chain
//!   `r == 1 ? p[4i + c] : q[4i + c]`, so only the chosen array is read (and seen by race
//!   detection), one access per component;
//! - a write (`=`, a compound assignment, `++`/`--`, of the whole vector or of components)
//!   computes every component of the value first, then is an `if`/`else` chain over the
//!   targets, each storing its own slots;
//! - the null and "used before it is given a value" checks come first, naming the
//!   pointer ([`Lowerer::places`]); bounds are checked per slot where it is reached.
//!
//! Refused, as for scalar accesses through such a pointer: the value of an assignment or of
//! `++`/`--` to one component used inside an expression (`x = r[i].x++`).

use super::pointer;
use super::*;

/// A place an assignment may store to, with the condition on the tag that chooses it.
type ChosenPlace = (Option<k::Expr>, Place);

/// The slots a vector access may reach: per possible target, the condition on the tag that
/// chooses it (`None` for the last or only one) and one lvalue per component.
pub(super) struct VecPlaces {
    pub arms: Vec<(Option<k::Expr>, Vec<k::LValue>)>,
    pub elem: TypeName,
    /// Components per access (also when there is no arm: a pointer that is always null).
    pub lanes: usize,
}

impl VecPlaces {
    /// The statically known slots `lvs`.
    fn one(lvs: Vec<k::LValue>, elem: TypeName) -> VecPlaces {
        VecPlaces {
            lanes: lvs.len(),
            arms: vec![(None, lvs)],
            elem,
        }
    }

    /// The slots themselves, when the access has one target.
    pub fn single(self) -> Option<(Vec<k::LValue>, TypeName)> {
        match <[_; 1]>::try_from(self.arms) {
            Ok([(None, lvs)]) => Some((lvs, self.elem)),
            _ => None,
        }
    }

    /// Each component's value: the lazy chain over the targets, so only the chosen one is
    /// read; 0 when there is no target (after the null check has faulted).
    pub fn read(&self, span: &Span) -> Vec<k::Expr> {
        (0..self.lanes)
            .map(|c| {
                let mut rest: Option<k::Expr> = None;
                for (when, lvs) in self.arms.iter().rev() {
                    let here = Lowerer::lvalue_expr(&lvs[c], span);
                    rest = Some(match (when, rest) {
                        (Some(w), Some(r)) => ex(
                            k::ExprKind::Cond(Box::new(w.clone()), Box::new(here), Box::new(r)),
                            span,
                        ),
                        _ => here,
                    });
                }
                rest.unwrap_or_else(|| {
                    let zero = ex(
                        k::ExprKind::Int {
                            value: 0,
                            unsigned: false,
                        },
                        span,
                    );
                    ex(k::ExprKind::Cast(self.elem, Box::new(zero)), span)
                })
            })
            .collect()
    }

    /// The statements `store` makes of each target's slots, chained on the tag.
    pub fn write(
        &self,
        span: &Span,
        mut store: impl FnMut(&[k::LValue]) -> Vec<k::Stmt>,
    ) -> Vec<k::Stmt> {
        let arms = (self.arms.iter())
            .map(|(when, lvs)| (when.clone(), store(lvs)))
            .collect();
        pointer::chain(arms, span)
    }

    /// Every slot of every target.
    pub fn all(&self) -> impl Iterator<Item = &k::LValue> {
        self.arms.iter().flat_map(|(_, lvs)| lvs)
    }
}

impl<'u> Lowerer<'u> {
    /// The slots vector lvalue `e` may reach (several targets through a dynamic pointer);
    /// the checks that must hold first go to `pre`.
    pub(super) fn vec_places(&mut self, e: &cl::Expr, pre: &mut Vec<k::Stmt>) -> Res<VecPlaces> {
        use cl::ExprKind as E;
        let span = &e.span;
        match &e.kind {
            E::Index(..) | E::Deref(_) if self.vec_shape(e).is_some() => {
                let (_, lanes) = self.vec_shape(e).expect("a vector");
                let (arms, elem) = self.element_places(e, pre)?;
                let mut out = Vec::new();
                for a in arms {
                    if a.view.is_some() || !self.vec_arrays.contains_key(&a.array.name) {
                        return unsupported(
                            "a vector access through a pointer that views memory as another type",
                            span,
                        );
                    }
                    let lvs = (self.slots(&a.array.name, a.index, pre).into_iter())
                        .map(|indices| k::LValue::Elem {
                            array: a.array.clone(),
                            indices,
                        })
                        .collect();
                    out.push((a.when, lvs));
                }
                Ok(VecPlaces {
                    arms: out,
                    elem,
                    lanes: lanes as usize,
                })
            }
            E::Member {
                base,
                field,
                arrow: false,
            } if self.vec_shape(base).is_some() => {
                let p = self.vec_places(base, pre)?;
                let idx = vector::swizzle(&field.name, p.lanes as u8)
                    .map_err(|m| Diagnostic::new(m, field.span.clone()))?;
                let mut seen = HashSet::new();
                if !idx.iter().all(|i| seen.insert(*i)) {
                    return Err(Diagnostic::new(
                        format!(
                            "`.{}` repeats a component: it cannot be assigned to",
                            field.name
                        ),
                        field.span.clone(),
                    ));
                }
                Ok(VecPlaces {
                    arms: (p.arms.into_iter())
                        .map(|(w, lvs)| (w, idx.iter().map(|&i| lvs[i].clone()).collect()))
                        .collect(),
                    elem: p.elem,
                    lanes: idx.len(),
                })
            }
            E::Name(_) => {
                let (lvs, elem) = self.vec_lvalue(e, pre)?;
                Ok(VecPlaces::one(lvs, elem))
            }
            _ => Err(Diagnostic::new(
                "this cannot be assigned to as a vector",
                span.clone(),
            )),
        }
    }

    /// The places of a one-component target `v.x` (`r[i].x`, `(*r).y`) for a scalar
    /// assignment or `++`/`--`: one per target of the pointer under it. `None` when `e` is
    /// no component of a vector.
    pub(super) fn component_places(
        &mut self,
        e: &cl::Expr,
        pre: &mut Vec<k::Stmt>,
    ) -> Res<Option<Vec<ChosenPlace>>> {
        let cl::ExprKind::Member { base, .. } = &e.kind else {
            return Ok(None);
        };
        if self.vec_shape(base).is_none() {
            return Ok(None);
        }
        let p = self.vec_places(e, pre)?;
        if p.lanes != 1 {
            return self.not_scalar(e);
        }
        self.vec_writable(&p, &e.span)?;
        Ok(Some(
            (p.arms.into_iter())
                .map(|(w, mut lvs)| (w, Place::Plain(lvs.remove(0))))
                .collect(),
        ))
    }

    /// Refuses a write to places in `__constant` memory.
    pub(super) fn vec_writable(&self, p: &VecPlaces, span: &Span) -> Res<()> {
        for lv in p.all() {
            let (k::LValue::Elem { array: name, .. } | k::LValue::Var(name)) = lv;
            self.writable(&name.name, span)?;
        }
        Ok(())
    }
}
