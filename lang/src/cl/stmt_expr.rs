//! GNU statement expressions `({ s1; ...; sn; e; })` (CLsmith's safe-math macros use
//! them): the statements run in a scope of their own, in place, before the expression
//! that holds them (the lowering's `pre` statements, as for an inlined helper), and the
//! value is the last expression statement's. Inside `&&`, `||` and `?:` the `pre`
//! statements are already guarded by the lowering, so they run only where C evaluates
//! them. `break`, `continue`, `return` and `goto` out of one are refused: the flags that
//! model them are per statement, not per expression.

use super::*;

impl<'u> Lowerer<'u> {
    /// Lowers `({ stmts; value })` into `pre`; its value (`None` for `void`, or where
    /// `effect`: only the side effects of `value` are wanted).
    pub(super) fn stmt_expr(
        &mut self,
        stmts: &[cl::Stmt],
        value: Option<&cl::Expr>,
        effect: bool,
        span: &Span,
        pre: &mut Vec<k::Stmt>,
    ) -> Res<Option<k::Expr>> {
        if let Some(s) = stmts.iter().find(|s| {
            let e = exits(s);
            e.brk || e.cont || e.ret || has_goto(s)
        }) {
            return unsupported(
                "`break`, `continue`, `return` or `goto` leaving a statement expression",
                &s.span,
            );
        }
        self.scopes.push(HashMap::new());
        let r = self.stmt_expr_in_scope(stmts, value, effect, span, pre);
        self.scopes.pop();
        r
    }

    fn stmt_expr_in_scope(
        &mut self,
        stmts: &[cl::Stmt],
        value: Option<&cl::Expr>,
        effect: bool,
        span: &Span,
        pre: &mut Vec<k::Stmt>,
    ) -> Res<Option<k::Expr>> {
        self.block(stmts, pre)?;
        match value {
            Some(v) if effect => self.effect(v, pre).map(|()| None),
            Some(v) => self.expr(v, pre).map(Some),
            None if effect => Ok(None),
            None => Err(Diagnostic::new(
                "this statement expression has no value (its last statement is not an expression)",
                span.clone(),
            )),
        }
    }
}

/// Whether a `goto` or a label is in `s` (the restructuring does not look into expressions).
fn has_goto(s: &cl::Stmt) -> bool {
    use cl::StmtKind::*;
    match &s.kind {
        Goto(_) | Label(..) => true,
        If { then, els, .. } => has_goto(then) || els.as_deref().is_some_and(has_goto),
        While { body, .. }
        | DoWhile { body, .. }
        | For { body, .. }
        | Switch { body, .. }
        | Case(_, body)
        | Default(body) => has_goto(body),
        Block(b) => b.stmts.iter().any(has_goto),
        Decl(_) | Expr(_) | Empty | Break | Continue | Return(_) => false,
    }
}
