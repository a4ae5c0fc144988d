//! placeholder
#[derive(Clone, Debug, Default)]
pub struct KernelInfo {}
pub fn lower(_u: &super::ast::Unit, _k: Option<&str>) -> Result<(crate::ast::Kernel, KernelInfo), Vec<crate::diag::Diagnostic>> { todo!() }
