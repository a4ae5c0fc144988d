//! The PVL front end: VerCors's programs (`.pvl`) → parser ([`parse`], to the PVL syntax
//! tree [`ast`]) → lowering of one method ([`lower`], to ksim's surface syntax tree
//! [`crate::ast`]) → the existing checker ([`crate::check`]) → the core form every engine
//! runs. Functional specifications become checked annotations, permissions the core's
//! permission statements (see [`lower`]).

pub mod ast;
pub mod lower;
pub mod parse;

use crate::diag::Diagnostic;

/// A compiled PVL method: the core form and what the lowering did not check.
#[derive(Clone, Debug)]
pub struct Compiled {
    pub kernel: crate::core::Kernel,
    pub notes: Vec<lower::Note>,
    /// Whether the method's specifications hold permissions (then checked).
    pub permissions: bool,
}

/// Parses `text`, lowers `method` (default: the only method with a `par` block) and
/// type-checks it; with `specs` false, without any of its specifications (`--no-specs`).
pub fn compile(text: &str, method: Option<&str>, specs: bool) -> Result<Compiled, Vec<Diagnostic>> {
    let program = parse::parse(text)?;
    let l = lower::lower(&program, method, specs)?;
    let kernel = crate::check::check(&l.kernel)?;
    Ok(Compiled {
        kernel,
        notes: l.notes,
        permissions: l.permissions,
    })
}
