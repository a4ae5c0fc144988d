//! GPUVerify's specification language, checked at run time instead of proved.
//!
//! An annotation becomes the core's S-ASSERT statement ([`crate::core::StmtKind::Check`])
//! at the place where GPUVerify means it to hold:
//!
//! - `__assert(e)`, `__global_assert(e)`: where it stands.
//! - `__requires(e)`, `__global_requires(e)`: where it stands (a function's first
//!   statements). In the kernel it is the launch's precondition (a violation blames the
//!   launch, [`crate::core::Annotation::Requires`]); in a helper it is checked at each call
//!   (`__call_requires`, the caller's fault).
//! - `__ensures(e)`, `__global_ensures(e)`: at the function's exit (after its last
//!   statement, every `return` having jumped there), where `__return_val_int()` (and the
//!   other `__return_val_*`) is the value returned.
//! - `__invariant(e)`, `__global_invariant(e)`: GPUVerify writes them in the loop
//!   condition (`for (...; __invariant(e), i < n; ...)`), which the lowering evaluates each
//!   time the loop head is reached; that is when the invariant is checked.
//! - `__assume(e)`: checked where it stands; a false assumption blames the run.
//!
//! The predicates with a meaning for one thread are expanded: `__implies(a, b)` is
//! `!a || b`, `__is_pow2(x)` is `x != 0 && (x & (x - 1)) == 0`, `__ite(c, a, b)` is
//! `c ? a : b`, `__enabled()` is true (a thread that runs the check is enabled).
//!
//! Predicates that need what a single run of a thread does not have are not checked: the
//! annotation holding one is skipped, with a note naming the predicate ([`NO_MEANING`]):
//! two-thread predicates (`__other_int`, `__same_group`, `__uniform_int`, `__distinct_int`,
//! `__exclusive`, ...: GPUVerify's pairs of threads; a run could check them over all pairs
//! at a barrier, which ksim does not do yet), access-log predicates (`__read(A)`,
//! `__no_read(A)`, `__read_implies(A, e)`, `__read_offset_bytes(A)`, ...: they speak of the
//! thread's accesses since the last barrier, which the engines do not log for
//! annotations yet), and verifier devices (candidate, function-wide and barrier
//! invariants, permissions, `__atomic_has_taken_value`, `__old_int`).

use super::*;
use crate::core::Annotation;

/// Predicates and annotations without a single-thread dynamic meaning (see the module doc).
const NO_MEANING: [&str; 29] = [
    "__other_int",
    "__other_bool",
    "__other_float",
    "__same_group",
    "__uniform_int",
    "__uniform_bool",
    "__distinct_int",
    "__distinct_bool",
    "__exclusive",
    "__all",
    "__read",
    "__write",
    "__atomic",
    "__no_read",
    "__no_write",
    "__read_implies",
    "__write_implies",
    "__atomic_implies",
    "__read_offset_bytes",
    "__write_offset_bytes",
    "__ptr_offset_bytes",
    "__ptr_base",
    "__atomic_has_taken_value",
    "__old_int",
    "__array_snapshot",
    "__writes_to",
    "__reads_from",
    "__dominator_enabled",
    "__spec_bar",
];

/// The first predicate without a dynamic meaning that `e` calls, if any.
fn meaningless(e: &cl::Expr) -> Option<&str> {
    use cl::ExprKind::*;
    match &e.kind {
        Call { func, args } => {
            if NO_MEANING.contains(&func.name.as_str()) {
                return Some(func.name.as_str());
            }
            args.iter().find_map(meaningless)
        }
        Index(a, b) | Binary(_, a, b) | Comma(a, b) => meaningless(a).or_else(|| meaningless(b)),
        Assign { target, value, .. } => meaningless(target).or_else(|| meaningless(value)),
        Cond(a, b, c) => meaningless(a)
            .or_else(|| meaningless(b))
            .or_else(|| meaningless(c)),
        VecLit(_, args) => args.iter().find_map(meaningless),
        Member { base: a, .. }
        | Unary(_, a)
        | Plus(a)
        | Deref(a)
        | Cast(_, a)
        | SizeofExpr(a)
        | IncDec(_, a)
        | AddrOf(a) => meaningless(a),
        // `__same_group` is written without parentheses.
        Name(n) if NO_MEANING.contains(&n.as_str()) => Some(n.as_str()),
        StmtExpr(_, value) => value.as_deref().and_then(meaningless),
        Int { .. } | Float { .. } | Char(_) | Str(_) | Name(_) | SizeofType(_) => None,
    }
}

/// What an annotation statement of GPUVerify's becomes.
enum Place {
    /// An S-ASSERT of this kind, here.
    Here(Annotation),
    /// An `__ensures`: at the function's exit.
    Exit,
    /// Not checked, for this reason.
    Skip(&'static str),
}

fn place(name: &str, in_kernel: bool) -> Place {
    match name {
        "__assert" | "__global_assert" => Place::Here(Annotation::Assert),
        "__requires" | "__global_requires" if in_kernel => Place::Here(Annotation::Requires),
        "__requires" | "__global_requires" => Place::Here(Annotation::CallRequires),
        "__ensures" | "__global_ensures" => Place::Exit,
        "__invariant" | "__global_invariant" => Place::Here(Annotation::Invariant),
        "__assume" => Place::Here(Annotation::Assume),
        "__ksim_non_null" => Place::Here(Annotation::NonNull),
        "__candidate_invariant" | "__candidate_global_invariant" => {
            Place::Skip("a candidate invariant is a guess for GPUVerify's inference; a false one is not an error")
        }
        "__function_wide_invariant" | "__function_wide_candidate_invariant" => {
            Place::Skip("function-wide invariants are not checked yet")
        }
        "__barrier_invariant" | "__barrier_invariant_binary" => {
            Place::Skip("barrier invariants speak of all threads at a barrier; not checked yet")
        }
        _ => Place::Skip("this GPUVerify annotation has no run-time meaning in ksim"),
    }
}

/// Whether `name` is one of GPUVerify's barrier invariants (`__barrier_invariant_1`, ...,
/// `__barrier_invariant_binary_1`, ...), which the suite numbers by arity.
pub fn is_barrier_invariant(name: &str) -> bool {
    name.strip_prefix("__barrier_invariant")
        .is_some_and(|rest| {
            rest.trim_start_matches("_binary")
                .trim_start_matches('_')
                .chars()
                .all(|c| c.is_ascii_digit())
        })
}

impl<'u> Lowerer<'u> {
    /// An annotation statement `__assert(e);`, `__requires(e);`, ...: an S-ASSERT in
    /// `out`, a deferred check for `__ensures`, or a note when it is not checked.
    pub(super) fn annotation(
        &mut self,
        func: &cl::Ident,
        args: &[cl::Expr],
        span: &Span,
        out: &mut Vec<k::Stmt>,
    ) -> Res<()> {
        let name = func.name.as_str();
        let name = if is_barrier_invariant(name) {
            "__barrier_invariant"
        } else {
            name
        };
        if name == "__requires_fresh_array" {
            return self.fresh_array(args, span);
        }
        let in_kernel = self.frames.len() == 1;
        let what = match place(name, in_kernel) {
            Place::Skip(why) => {
                self.note(span, format!("`{}` is not checked: {why}", func.name));
                return Ok(());
            }
            p => p,
        };
        let [cond] = args else {
            return Err(Diagnostic::new(
                format!("`{}` takes one condition", func.name),
                span.clone(),
            ));
        };
        if matches!(what, Place::Exit) {
            let frame = self.frames.last_mut().expect("in a function");
            frame.contract.push(cond.clone());
        }
        if let Some(p) = meaningless(cond) {
            self.note(
                span,
                format!(
                    "an annotation using `{p}` is not checked: the predicate has no meaning for one run of one thread (see docs/language.md)"
                ),
            );
            return Ok(());
        }
        match what {
            Place::Here(a) => self.check(a, cond, span, out),
            Place::Exit => {
                self.frames
                    .last_mut()
                    .expect("in a function")
                    .ensures
                    .push((cond.clone(), span.clone()));
                Ok(())
            }
            Place::Skip(_) => unreachable!("returned above"),
        }
    }

    /// The S-ASSERT of `cond` as annotation `a`. The condition is side-effect free in
    /// GPUVerify's language; anything it needs computed first (a helper's call) runs before.
    fn check(
        &mut self,
        a: Annotation,
        cond: &cl::Expr,
        span: &Span,
        out: &mut Vec<k::Stmt>,
    ) -> Res<()> {
        let c = self.expr(cond, out)?;
        out.push(st(
            k::StmtKind::Call(ex(
                k::ExprKind::Call {
                    func: ident(a.name(), span),
                    args: vec![c],
                },
                span,
            )),
            span,
        ));
        Ok(())
    }

    /// The `__ensures` of the function being lowered, at its exit.
    pub(super) fn ensures(&mut self, out: &mut Vec<k::Stmt>) -> Res<()> {
        let pending = std::mem::take(&mut self.frames.last_mut().expect("in a function").ensures);
        let frame = self.frames.last().expect("in a function");
        let what = if frame.spec {
            Annotation::Assume
        } else {
            Annotation::Ensures
        };
        for (cond, span) in &pending {
            self.check(what, cond, span, out)?;
        }
        Ok(())
    }

    /// A specification predicate inside an expression, if `func` is one with a meaning
    /// for one thread (`None` otherwise: the caller goes on with other built-ins).
    pub(super) fn predicate(
        &mut self,
        func: &cl::Ident,
        args: &[cl::Expr],
        span: &Span,
        pre: &mut Vec<k::Stmt>,
    ) -> Res<Option<k::Expr>> {
        let name = func.name.as_str();
        let arity = match name {
            "__enabled" => 0,
            "__is_pow2" => 1,
            "__implies" | "__mod_pow2" => 2,
            "__add_noovfl_int" | "__add_noovfl_unsigned_int" => {
                return self.add_noovfl(func, args, span, pre).map(Some)
            }
            "__add_noovfl" => return self.add_noovfl_predicate(args, span, pre).map(Some),
            "__ite" => 3,
            _ if name.starts_with("__return_val_") => 0,
            _ => return Ok(None),
        };
        if args.len() != arity {
            return Err(Diagnostic::new(
                format!(
                    "`{name}` takes {arity} argument{}",
                    if arity == 1 { "" } else { "s" }
                ),
                span.clone(),
            ));
        }
        let mut vals = Vec::new();
        for a in args {
            vals.push(self.expr(a, pre)?);
        }
        let bin = |op, a: k::Expr, b: k::Expr| {
            ex(k::ExprKind::Binary(op, Box::new(a), Box::new(b)), span)
        };
        let int = |v| {
            ex(
                k::ExprKind::Int {
                    value: v,
                    unsigned: false,
                },
                span,
            )
        };
        Ok(Some(match (name, vals.as_slice()) {
            ("__enabled", []) => boolean(true, span),
            ("__implies", [a, b]) => bin(BinOp::LogOr, not(a.clone()), b.clone()),
            ("__is_pow2", [x]) => bin(
                BinOp::LogAnd,
                bin(BinOp::Ne, x.clone(), int(0)),
                bin(
                    BinOp::Eq,
                    bin(BinOp::BitAnd, x.clone(), bin(BinOp::Sub, x.clone(), int(1))),
                    int(0),
                ),
            ),
            // GPUVerify's `__mod_pow2(x, y)`: `x mod y` for a power of two `y`, as the
            // bit mask `x & (y - 1)`.
            ("__mod_pow2", [x, y]) => {
                bin(BinOp::BitAnd, x.clone(), bin(BinOp::Sub, y.clone(), int(1)))
            }
            ("__ite", [c, a, b]) => ex(
                k::ExprKind::Cond(
                    Box::new(c.clone()),
                    Box::new(a.clone()),
                    Box::new(b.clone()),
                ),
                span,
            ),
            _ => {
                // `__return_val_int()` and friends: the value the function returns.
                let frame = self.frames.last().expect("in a function");
                match (&frame.result, self.frames.len() > 1) {
                    (Some((r, _)), true) => name_expr(r, span),
                    _ => {
                        return Err(Diagnostic::new(
                            format!("`{name}` names the value returned by a helper function, in its `__ensures`"),
                            span.clone(),
                        ))
                    }
                }
            }
        }))
    }

    /// `__requires_fresh_array(A)`: GPUVerify's precondition that buffer `A` is freshly
    /// allocated (aliases nothing, accessed by nobody before the kernel). A ksim launch
    /// gives every buffer its own memory and starts with no accesses, so it always holds:
    /// nothing is checked, the argument must name a buffer.
    fn fresh_array(&mut self, args: &[cl::Expr], span: &Span) -> Res<()> {
        match args {
            [a] if matches!(&a.kind, cl::ExprKind::Name(n)
                if matches!(self.lookup(n), Some(Binding::Array(_)))) =>
            {
                Ok(())
            }
            _ => Err(Diagnostic::new(
                "`__requires_fresh_array` takes one buffer (a pointer parameter)",
                span.clone(),
            )),
        }
    }

    /// `__add_noovfl_int(x, y)`, `__add_noovfl_unsigned_int(x, y)`: `x + y`, which GPUVerify
    /// assumes does not overflow. The sum is computed and an overflow is an `__assume`
    /// fault (the run is outside what the kernel's author assumes), checked before it.
    fn add_noovfl(
        &mut self,
        func: &cl::Ident,
        args: &[cl::Expr],
        span: &Span,
        pre: &mut Vec<k::Stmt>,
    ) -> Res<k::Expr> {
        let [a, b] = args else {
            return Err(Diagnostic::new(
                format!("`{}` takes 2 arguments", func.name),
                span.clone(),
            ));
        };
        let ty = if func.name.ends_with("unsigned_int") {
            TypeName::Uint
        } else {
            TypeName::Int
        };
        let mut vals = Vec::new();
        for a in [a, b] {
            let v = self.expr(a, pre)?;
            let v = ex(k::ExprKind::Cast(ty, Box::new(v)), &a.span);
            let t = self.temp("noovfl", ty, Some(v), &a.span, pre);
            vals.push(name_expr(&t, &a.span));
        }
        let (x, y) = (vals[0].clone(), vals[1].clone());
        let sum = ex(
            k::ExprKind::Binary(BinOp::Add, Box::new(x.clone()), Box::new(y.clone())),
            span,
        );
        let fits = no_overflow(ty, x, y, sum.clone(), span);
        pre.push(st(
            k::StmtKind::Call(ex(
                k::ExprKind::Call {
                    func: ident(Annotation::Assume.name(), span),
                    args: vec![fits],
                },
                span,
            )),
            span,
        ));
        Ok(sum)
    }

    /// GPUVerify's predicate `__add_noovfl(x1, ..., xn)`: true when adding the arguments
    /// (in the type of the first: `uint` if it is unsigned, else `int`) overflows at no
    /// step of `((x1 + x2) + x3) + ...`. A single argument cannot overflow.
    fn add_noovfl_predicate(
        &mut self,
        args: &[cl::Expr],
        span: &Span,
        pre: &mut Vec<k::Stmt>,
    ) -> Res<k::Expr> {
        if args.is_empty() {
            return Err(Diagnostic::new(
                "`__add_noovfl` takes one or more integers",
                span.clone(),
            ));
        }
        let mut vals = Vec::new();
        let mut ty = None;
        for a in args {
            let v = self.expr(a, pre)?;
            let t = *ty.get_or_insert(match self.type_of(&v) {
                Some(TypeName::Uint) => TypeName::Uint,
                _ => TypeName::Int,
            });
            let v = ex(k::ExprKind::Cast(t, Box::new(v)), &a.span);
            let t = self.temp("noovfl", t, Some(v), &a.span, pre);
            vals.push(name_expr(&t, &a.span));
        }
        let ty = ty.expect("one argument at least");
        let mut ok = boolean(true, span);
        let mut sum = vals[0].clone();
        for y in &vals[1..] {
            let next = ex(
                k::ExprKind::Binary(BinOp::Add, Box::new(sum.clone()), Box::new(y.clone())),
                span,
            );
            let fits = no_overflow(ty, sum, y.clone(), next.clone(), span);
            ok = ex(
                k::ExprKind::Binary(BinOp::LogAnd, Box::new(ok), Box::new(fits)),
                span,
            );
            sum = next;
        }
        Ok(ok)
    }
}

/// Whether `x + y` (whose wrapped value is `sum`) does not overflow `ty` (`int` or `uint`).
fn no_overflow(ty: TypeName, x: k::Expr, y: k::Expr, sum: k::Expr, span: &Span) -> k::Expr {
    let bin =
        |op, a: k::Expr, b: k::Expr| ex(k::ExprKind::Binary(op, Box::new(a), Box::new(b)), span);
    let lit = |v: u64| {
        ex(
            k::ExprKind::Int {
                value: v,
                unsigned: ty == TypeName::Uint,
            },
            span,
        )
    };
    if ty == TypeName::Uint {
        // Wrapped iff the sum is below an operand.
        bin(BinOp::Ge, sum, x)
    } else {
        // y > 0: x <= INT_MAX - y; y < 0: x >= INT_MIN - y (neither bound overflows).
        let zero = lit(0);
        let int_min = ex(k::ExprKind::Unary(UnOp::Neg, Box::new(lit(1 << 31))), span);
        let int_min = ex(k::ExprKind::Cast(TypeName::Int, Box::new(int_min)), span);
        let hi = bin(
            BinOp::LogOr,
            bin(BinOp::Le, y.clone(), zero.clone()),
            bin(
                BinOp::Le,
                x.clone(),
                bin(BinOp::Sub, lit(i32::MAX as u64), y.clone()),
            ),
        );
        let lo = bin(
            BinOp::LogOr,
            bin(BinOp::Ge, y.clone(), zero),
            bin(BinOp::Ge, x, bin(BinOp::Sub, int_min, y)),
        );
        bin(BinOp::LogAnd, hi, lo)
    }
}
