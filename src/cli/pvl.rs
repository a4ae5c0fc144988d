//! `.pvl` programs (VerCors's PVL) on the command line: one method, picked with
//! `--kernel NAME` when several have a `par` block, becomes a kernel
//! launched like a `.ksim` one (`-D N=8` binds its `int` parameters).

use super::common::{Failure, Source};
use sim::replay::Files;
use std::path::Path;

/// Whether a kernel file is a PVL program (by extension).
pub fn is_pvl(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "pvl")
}

/// Reads, parses, lowers and checks a PVL program's method.
pub fn load(
    path: &Path,
    method: Option<&str>,
    specs: bool,
    files: &dyn Files,
) -> Result<(Source, lang::pvl::Compiled), Failure> {
    let src = Source::read_with(path, files)?;
    match lang::pvl::compile(&src.text, method, specs) {
        Ok(c) => Ok((src, c)),
        Err(diags) => Err(Failure::usage(src.render(&diags))),
    }
}

/// The lowering's notes, one `note: file:line:col: text` line each, and one line saying
/// that permissions are checked, and where, when the program has some.
pub fn notes(src: &Source, c: &lang::pvl::Compiled) -> String {
    let mut s: String = c
        .notes
        .iter()
        .map(|n| format!("note: {}: {}\n", src.location(n.span.start), n.text))
        .collect();
    if c.permissions {
        s.push_str(&format!(
            "note: {}: permissions are checked (Perm, PointsTo, Value, \\forall* over them; every read and write), on the reference semantics: the fast executor falls back to it\n",
            src.path
        ));
    }
    s
}
