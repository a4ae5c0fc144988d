//! The OpenCL C (and CUDA) front end: `.cl` source → Debian's `clang-15`, which
//! preprocesses, parses and type-checks it ([`clang`], converted to the OpenCL syntax tree
//! [`ast`]) → lowering ([`lower`], to ksim's surface syntax tree [`crate::ast`]) → the
//! existing checker ([`crate::check`]) → the core form every engine runs. One core, two
//! surface syntaxes.
//!
//! Spans are byte offsets in a [`SourceMap`]: the main file starts at offset 0 (so a span
//! in it is a plain offset into its text, as for `.ksim`), and each included file follows
//! at its own base offset.

pub mod ast;
pub mod builtins;
pub mod clang;
mod deref;
pub mod goto;
pub mod lower;
pub mod ndrange;
pub mod nesting;
pub mod options;
pub mod simbuild;
pub mod simfile;
pub mod simstruct;

use crate::ast::Span;
use crate::diag::Diagnostic;
use std::path::{Path, PathBuf};

/// One file of a translation unit: the main file or an included one.
#[derive(Clone, Debug)]
pub struct SourceFile {
    pub path: PathBuf,
    pub text: String,
    /// Offset of its first byte in the source map.
    pub base: usize,
}

/// The files of a translation unit, laid end to end in one offset space.
#[derive(Clone, Debug, Default)]
pub struct SourceMap {
    pub files: Vec<SourceFile>,
}

impl SourceMap {
    /// A map holding the main file at offset 0.
    pub fn new(path: impl Into<PathBuf>, text: String) -> SourceMap {
        let mut m = SourceMap::default();
        m.add(path.into(), text);
        m
    }

    /// Adds a file after the last one; returns its index.
    pub fn add(&mut self, path: PathBuf, text: String) -> usize {
        let base = self.files.last().map_or(0, |f| f.base + f.text.len() + 1);
        self.files.push(SourceFile { path, text, base });
        self.files.len() - 1
    }

    /// The file holding `offset`, and the offset within it.
    pub fn locate(&self, offset: usize) -> (&SourceFile, usize) {
        let f = self
            .files
            .iter()
            .rev()
            .find(|f| f.base <= offset)
            .expect("file 0 starts at 0");
        (f, (offset - f.base).min(f.text.len()))
    }
}

/// What a `.cl` compilation needs besides the source: preprocessor options and the kernel
/// to take (`None`: the only kernel of the file).
#[derive(Clone, Debug, Default)]
pub struct ClOptions {
    pub pp: options::PpOptions,
    pub kernel: Option<String>,
}

/// A compiled OpenCL kernel: the core form plus what the launch needs to know about the
/// parameters that the core has no notion of.
#[derive(Clone, Debug)]
pub struct Compiled {
    pub kernel: crate::core::Kernel,
    pub info: lower::KernelInfo,
}

/// Preprocesses, parses and lowers the main file of `map`, then type-checks the result.
/// Included files are read with `load` and added to `map` (for rendering diagnostics).
pub fn compile(
    map: &mut SourceMap,
    opts: &ClOptions,
    load: &mut options::Loader<'_>,
) -> Result<Compiled, Vec<Diagnostic>> {
    let unit = parse_unit(map, opts, load)?;
    compile_unit(&unit, opts)
}

/// Preprocesses and parses the main file of `map` with clang ([`clang`]): the first half
/// of [`compile`].
pub fn parse_unit(
    map: &mut SourceMap,
    opts: &ClOptions,
    load: &mut options::Loader<'_>,
) -> Result<ast::Unit, Vec<Diagnostic>> {
    clang::parse_unit(map, opts, load)
}

/// Lowers and type-checks the chosen kernel of a parsed unit (the second half of
/// [`compile`]).
pub fn compile_unit(unit: &ast::Unit, opts: &ClOptions) -> Result<Compiled, Vec<Diagnostic>> {
    let (kernel, info) = lower::lower(unit, opts.kernel.as_deref())?;
    let mut kernel = crate::check::check(&kernel)?;
    for (name, lanes) in &info.vector_arrays {
        if let Some(a) = kernel.array(name) {
            kernel.arrays[a].lanes = *lanes;
        }
    }
    for (name, elem) in &info.byte_arrays {
        if let Some(a) = kernel.array(name) {
            kernel.arrays[a].byte_elem = Some(crate::check::ty_of(*elem));
        }
    }
    Ok(Compiled { kernel, info })
}

/// Reads included files from disk (at most 16 MiB each).
pub fn read_file(path: &Path) -> Result<String, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if meta.len() > 16 << 20 {
        return Err(format!("{}: larger than 16 MiB", path.display()));
    }
    std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))
}

/// The span of a diagnostic inside the file that holds it.
pub fn local_span(map: &SourceMap, span: &Span) -> (usize, Span) {
    let (f, start) = map.locate(span.start);
    let idx = map
        .files
        .iter()
        .position(|g| std::ptr::eq(g, f))
        .expect("from the map");
    let end = (span.end.max(span.start) - f.base).min(f.text.len());
    (idx, start..end.max(start))
}
