//! `barrier(flags)` with fence flags computed at run time
//! (`x = get_local_id(0) == 0 ? CLK_LOCAL_MEM_FENCE : 0; barrier(x);`).
//!
//! Flags known at lowering time (constants, their `|`, a variable or helper parameter
//! never assigned, see [`Lowerer::static_fence`]) give the core's fixed-fence barrier, as
//! before. Otherwise the flags are stored in a fresh `uint` variable right before the
//! barrier, and the core barrier reads each work-item's fence from it when it fires
//! (`barrier(x)` in the core form). OpenCL 1.2 requires every work-item to pass the same
//! flags; ksim follows GPUVerify's reading of a kernel that does not: a work-item's accesses
//! before the barrier are ordered with every later access (of any work-item of the group)
//! exactly when that work-item's own flags name the accessed memory space.

use super::*;

impl<'u> Lowerer<'u> {
    /// `barrier(flags)`: the core barrier, with a fixed fence when the flags are known at
    /// lowering time, else with a per-work-item fence read from a variable.
    pub(super) fn barrier(
        &mut self,
        args: &[cl::Expr],
        span: &Span,
        out: &mut Vec<k::Stmt>,
    ) -> Res<()> {
        let [a] = args else {
            return Err(Diagnostic::new(
                "`barrier` takes one argument (the fence flags)",
                span.clone(),
            ));
        };
        if let Some(Fence { local, global }) = self.static_fence(a) {
            let fence = crate::core::Fence { local, global };
            out.push(st(k::StmtKind::Barrier(fence), span));
            return Ok(());
        }
        let value = self.expr(a, out)?;
        let value = ex(k::ExprKind::Cast(TypeName::Uint, Box::new(value)), &a.span);
        let flags = self.temp("fence_flags", TypeName::Uint, Some(value), &a.span, out);
        let var = ex(k::ExprKind::Name(flags), &a.span);
        out.push(st(k::StmtKind::BarrierFlags(var), span));
        Ok(())
    }
}
