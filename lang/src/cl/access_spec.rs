//! GPUVerify's access specifications: a helper whose body is only its contract (the
//! suite's `__spec_*` functions) says with `__writes_to(p)` / `__reads_from(p)` that a call
//! of it writes / reads memory through `p`. GPUVerify checks the kernel for every function
//! meeting the contract; ksim runs **one** interpretation of it, as it does for a function
//! without a body ([`super::uf`]), and the call performs that interpretation's accesses,
//! so races with them are found and located at the specification's statement:
//!
//! - the element accessed is `p[i]`: the `i` the contract pins with an `__ensures` of the
//!   form `__write_implies(p, __write_offset_bytes(p) / sizeof(T) == e)` (or the byte
//!   offset `__write_offset_bytes(p) == e`; `__read_implies` / `__read_offset_bytes` for
//!   reads), or the `i` of an `__ensures(p[i] == v)`; with no such `__ensures`, element 0
//!   of `p` (any element is allowed; ksim picks the first). The offsets are relative to `p`;
//! - a write stores the value `v` of an `__ensures(p[i] == v)` (where `__old_int(x)` is
//!   `x`: the value is computed at the call, before the write, where every location still
//!   holds its old value); otherwise an arbitrary value: the hash of the work-item's global
//!   id and `i` ([`Lowerer::hash_into`]), so two work-items store different values (a
//!   write-write race between them is harmful, as GPUVerify's arbitrary values are);
//! - a read reads the element into a temporary;
//! - the function's `__ensures` become `__assume`s: they are the contract of the code the
//!   specification stands for, so one this interpretation breaks puts the run outside the
//!   contract (it blames the run, not the kernel). `__requires` stay checks of the caller.

use super::*;

/// `e` with GPUVerify's `__old_*(x)` replaced by `x`.
fn without_old(e: &cl::Expr) -> cl::Expr {
    use cl::ExprKind as E;
    let b = |x: &cl::Expr| Box::new(without_old(x));
    let kind = match &e.kind {
        E::Call { func, args } if func.name.starts_with("__old_") && args.len() == 1 => {
            return without_old(&args[0])
        }
        E::Call { func, args } => E::Call {
            func: func.clone(),
            args: args.iter().map(without_old).collect(),
        },
        E::Index(a, i) => E::Index(b(a), b(i)),
        E::Binary(op, x, y) => E::Binary(*op, b(x), b(y)),
        E::Unary(op, x) => E::Unary(*op, b(x)),
        E::Plus(x) => E::Plus(b(x)),
        E::Cast(t, x) => E::Cast(t.clone(), b(x)),
        E::Cond(c, x, y) => E::Cond(b(c), b(x), b(y)),
        k => k.clone(),
    };
    cl::Expr {
        kind,
        span: e.span.clone(),
    }
}

/// Whether `e` names the pointer `p` (the specification's parameter).
fn names(e: &cl::Expr, p: &str) -> bool {
    matches!(&e.kind, cl::ExprKind::Name(n) if n == p)
}

/// `(i, v)` of an `__ensures(p[i] == v)` (either side).
fn value_pin<'e>(c: &'e cl::Expr, p: &str) -> Option<(&'e cl::Expr, &'e cl::Expr)> {
    let cl::ExprKind::Binary(BinOp::Eq, a, b) = &c.kind else {
        return None;
    };
    for (x, y) in [(a, b), (b, a)] {
        if let cl::ExprKind::Index(base, i) = &x.kind {
            if names(base, p) {
                return Some((i, y));
            }
        }
    }
    None
}

fn int(v: u64, span: &Span) -> cl::Expr {
    cl::Expr {
        kind: cl::ExprKind::Int {
            value: v,
            unsigned: false,
            long: false,
        },
        span: span.clone(),
    }
}

fn binary(op: BinOp, a: cl::Expr, b: cl::Expr, span: &Span) -> cl::Expr {
    cl::Expr {
        kind: cl::ExprKind::Binary(op, Box::new(a), Box::new(b)),
        span: span.clone(),
    }
}

impl<'u> Lowerer<'u> {
    /// `__writes_to(p);` / `__reads_from(p);` in a specification function: the access of
    /// ksim's interpretation (see the module documentation).
    pub(super) fn access_spec(
        &mut self,
        func: &cl::Ident,
        args: &[cl::Expr],
        span: &Span,
        out: &mut Vec<k::Stmt>,
    ) -> Res<()> {
        let name = func.name.as_str();
        let [p] = args else {
            return Err(Diagnostic::new(
                format!("`{name}` takes one pointer"),
                span.clone(),
            ));
        };
        let cl::ExprKind::Name(pname) = &p.kind else {
            return unsupported(
                format!("`{name}` of an expression (it names a pointer parameter)"),
                &p.span,
            );
        };
        if !matches!(
            self.lookup(pname),
            Some(Binding::Array(_) | Binding::Ptr(_))
        ) {
            return Err(Diagnostic::new(
                format!("`{name}` takes a pointer parameter of the function"),
                p.span.clone(),
            ));
        }
        if self.frames.len() < 2 {
            return Err(Diagnostic::new(
                format!("`{name}` belongs in a helper function's contract, not in a kernel"),
                span.clone(),
            ));
        }
        let write = name.starts_with("__writes_to");
        let frame = self.frames.last_mut().expect("in a helper");
        frame.spec = true;
        let ensures = frame.contract.clone();
        let pinned = match write {
            true => ensures.iter().find_map(|c| value_pin(c, pname)),
            false => None,
        };
        let index = match pinned {
            Some((i, _)) => i.clone(),
            None => match ensures
                .iter()
                .find_map(|c| self.offset_pin(c, pname, write, span).transpose())
            {
                Some(i) => i?,
                None => int(0, span),
            },
        };
        let element = cl::Expr {
            kind: cl::ExprKind::Index(Box::new(p.clone()), Box::new(index.clone())),
            span: span.clone(),
        };
        if !write {
            let v = self.expr(&element, out)?;
            let t = self.type_of(&v).unwrap_or(TypeName::Int);
            self.temp("spec_read", t, Some(v), span, out);
            return Ok(());
        }
        let value = match pinned {
            Some((_, v)) => without_old(v),
            None => {
                let var = self.temp("spec_value", TypeName::Uint, None, span, out);
                let mut bits = Vec::new();
                for d in 0..3 {
                    let id = cl::Expr {
                        kind: cl::ExprKind::Call {
                            func: cl::Ident {
                                name: "get_global_id".into(),
                                span: span.clone(),
                            },
                            args: vec![int(d, span)],
                        },
                        span: span.clone(),
                    };
                    bits.push(self.expr(&id, out)?);
                }
                bits.push(self.expr(&index, out)?);
                let bits = bits
                    .into_iter()
                    .map(|b| ex(k::ExprKind::Cast(TypeName::Uint, Box::new(b)), span))
                    .collect();
                let fname = self.frames.last().expect("in a helper").name.clone();
                self.hash_into(&fname, bits, &[(var.clone(), TypeName::Uint)], span, out);
                // A source name no program can spell, bound to the value.
                let source = format!("{var} value");
                self.bind(&source, Binding::Scalar(var));
                cl::Expr {
                    kind: cl::ExprKind::Name(source),
                    span: span.clone(),
                }
            }
        };
        let assign = cl::Expr {
            kind: cl::ExprKind::Assign {
                op: None,
                target: Box::new(element),
                value: Box::new(value),
            },
            span: span.clone(),
        };
        self.effect(&assign, out)
    }

    /// The index `i` that `__write_implies(p, __write_offset_bytes(p) / d == e)` (or
    /// `... offset == e`, or the read forms) pins: `e * d / sizeof(p[0])`. `None` when `c`
    /// is no such implication about `p`; an error for an implication about `p` of another
    /// form, which ksim cannot turn into an element.
    fn offset_pin(&self, c: &cl::Expr, p: &str, write: bool, span: &Span) -> Res<Option<cl::Expr>> {
        let (implies, offset) = match write {
            true => ("__write_implies", "__write_offset_bytes"),
            false => ("__read_implies", "__read_offset_bytes"),
        };
        let cl::ExprKind::Call { func, args } = &c.kind else {
            return Ok(None);
        };
        let [base, cond] = args.as_slice() else {
            return Ok(None);
        };
        if func.name != implies || !names(base, p) {
            return Ok(None);
        }
        let is_offset = |e: &cl::Expr| {
            matches!(&e.kind, cl::ExprKind::Call { func, args }
                if func.name == offset && args.len() == 1 && names(&args[0], p))
        };
        if let cl::ExprKind::Binary(BinOp::Eq, a, b) = &cond.kind {
            for (x, y) in [(a, b), (b, a)] {
                let bytes = match &x.kind {
                    _ if is_offset(x) => Some((**y).clone()),
                    cl::ExprKind::Binary(BinOp::Div, o, d) if is_offset(o) => {
                        Some(binary(BinOp::Mul, (**y).clone(), (**d).clone(), span))
                    }
                    _ => None,
                };
                if let Some(bytes) = bytes {
                    let first = cl::Expr {
                        kind: cl::ExprKind::Index(Box::new(base.clone()), Box::new(int(0, span))),
                        span: span.clone(),
                    };
                    let size = cl::Expr {
                        kind: cl::ExprKind::SizeofExpr(Box::new(first)),
                        span: span.clone(),
                    };
                    return Ok(Some(binary(BinOp::Div, bytes, size, span)));
                }
            }
        }
        unsupported(
            format!("an `{implies}` about `{p}` that is not `{offset}({p}) == e` (the element a specification accesses)"),
            &c.span,
        )
    }
}
