//! Alpinist's optimisations on `.ksim` source (`ksim transform`): loop unrolling,
//! iteration merging and matrix linearisation (and back)
//! (`../shared/seeds/alpinist-annotation-aware-gpu-optimizer.txt`, Sections 4.1 and 4.4).
//! Tiling, kernel fusion and data prefetching are not implemented yet.
//!
//! **Source in, source out.** Each optimisation parses the kernel, finds what it changes
//! in the tree, and edits the source text at the spans of those nodes ([`Edit`]): every
//! line the optimisation does not touch is kept byte for byte, comments included, and the
//! code it writes reuses the user's own text for the expressions and statements it moves.
//!
//! **Applicability**, as Alpinist checks it, and on the given launch where it cannot be
//! decided from the text (Alpinist reads the bounds from annotations; a `.ksim` kernel has
//! none, so ksim runs the original on the launch): unrolling K times needs every entry of
//! the loop to run at least K iterations, merging K iterations needs every trip count to
//! be a multiple of K, delinearising needs a whole number of rows. An optimisation that
//! is not applicable is refused with the reason ([`TransformError::Refused`]), never
//! emitted. The transformed kernel is valid for the
//! launches where the check holds; `ksim equiv` checks it against the original.
//!
//! **Annotations.** `.ksim` has no annotation syntax, so there are none to transform; an
//! unrolled or merged loop gets a comment with the condition the check established, in
//! place of the assertions Alpinist adds.

mod layout;
mod loops;
mod walk;

use interp::launch::{Launch, LaunchOptions};
use lang::ast::{Kernel, Span};
use lang::diag::Diagnostic;
use std::sync::Arc;

/// One optimisation, as `ksim transform` names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Opt {
    /// `--unroll LINE:K`: peel the first K iterations of the `for` loop on LINE.
    Unroll { line: usize, k: usize },
    /// `--merge-iterations LINE:K`: K iterations per pass of the loop body.
    MergeIterations { line: usize, k: usize },
    /// `--linearize ARRAY`: 2D storage to row-major 1D.
    Linearize(String),
    /// `--delinearize ARRAY:COLS`: 1D storage to 2D with COLS columns (an expression over
    /// the kernel's parameters).
    Delinearize { array: String, cols: String },
}

/// Why a kernel was not transformed (exit code 2 for all).
#[derive(Debug)]
pub enum TransformError {
    /// The source does not parse or type-check.
    Invalid(Vec<Diagnostic>),
    /// The launch cannot be bound.
    Launch(String),
    /// The optimisation does not apply, and why.
    Refused(String),
}

/// A transformed kernel.
#[derive(Clone, Debug, PartialEq)]
pub struct Transformed {
    pub text: String,
    /// What the applicability check established, for the user.
    pub notes: Vec<String>,
}

/// Applies `opt` to the `.ksim` kernel `src`, checking applicability on the launch `opts`.
pub fn transform(
    src: &str,
    opt: &Opt,
    opts: &LaunchOptions,
) -> Result<Transformed, TransformError> {
    let ast = parse(src).map_err(TransformError::Invalid)?;
    let unit = Unit {
        src,
        ast: &ast,
        opts,
    };
    match opt {
        Opt::Unroll { line, k } => loops::unroll(&unit, *line, *k),
        Opt::MergeIterations { line, k } => loops::merge(&unit, *line, *k),
        Opt::Linearize(a) => layout::linearize(&unit, a),
        Opt::Delinearize { array, cols } => layout::delinearize(&unit, array, cols),
    }
}

/// Parses and type-checks a `.ksim` kernel; the tree for the edits.
fn parse(src: &str) -> Result<Kernel, Vec<Diagnostic>> {
    let ast = lang::parse::parse(src)?;
    lang::check::check(&ast)?;
    Ok(ast)
}

/// The kernel being transformed: its text, its tree and the launch to check on.
struct Unit<'a> {
    src: &'a str,
    ast: &'a Kernel,
    opts: &'a LaunchOptions,
}

impl Unit<'_> {
    /// The source text of a span.
    fn text(&self, span: &Span) -> &str {
        &self.src[span.clone()]
    }

    /// The original kernel bound to the launch.
    fn launch(&self) -> Result<Launch, TransformError> {
        launch_of(self.src, self.opts)
    }

    /// The launch in words, for notes: `-D n=8`, or `its declared launch`.
    fn launch_words(&self) -> String {
        let d: Vec<String> = (self.opts.defines.iter())
            .map(|(n, v)| format!("-D {n}={v}"))
            .collect();
        if d.is_empty() {
            "the launch given".into()
        } else {
            format!("the launch {}", d.join(" "))
        }
    }
}

/// Binds the launch of a `.ksim` source.
fn launch_of(src: &str, opts: &LaunchOptions) -> Result<Launch, TransformError> {
    let ast = lang::parse::parse(src).map_err(TransformError::Invalid)?;
    let kernel = lang::check::check(&ast).map_err(TransformError::Invalid)?;
    Launch::new(Arc::new(kernel), opts).map_err(|e| TransformError::Launch(e.0))
}

/// Replace `range` of the source with `text` (an insertion when the range is empty).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Edit {
    range: Span,
    text: String,
}

impl Edit {
    fn new(range: Span, text: impl Into<String>) -> Edit {
        Edit {
            range,
            text: text.into(),
        }
    }

    fn insert(at: usize, text: impl Into<String>) -> Edit {
        Edit::new(at..at, text)
    }
}

/// The source with `edits` applied; edits must not overlap (insertions at one offset
/// keep their order).
fn apply(src: &str, mut edits: Vec<Edit>) -> String {
    edits.sort_by_key(|e| (e.range.start, e.range.end));
    let mut out = String::with_capacity(src.len());
    let mut at = 0;
    for e in edits {
        debug_assert!(e.range.start >= at, "overlapping edits");
        out.push_str(&src[at..e.range.start]);
        out.push_str(&e.text);
        at = e.range.end;
    }
    out.push_str(&src[at..]);
    out
}

/// The 1-based line of a byte offset.
fn line_of(src: &str, offset: usize) -> usize {
    src[..offset].matches('\n').count() + 1
}

/// The whitespace that starts the line holding `offset`.
fn indent_at(src: &str, offset: usize) -> &str {
    let start = src[..offset].rfind('\n').map_or(0, |i| i + 1);
    let line = &src[start..];
    &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
}

/// `text` with `extra` added after every line break (to nest a multi-line statement one
/// level deeper).
fn reindent(text: &str, extra: &str) -> String {
    text.replace('\n', &format!("\n{extra}"))
}

/// `e` in parentheses unless it is a name, a literal, an element or a call.
fn atom(text: &str, e: &lang::ast::Expr) -> String {
    use lang::ast::ExprKind::*;
    match e.kind {
        Binary(..) | Cond(..) | Unary(..) | Cast(..) => format!("({text})"),
        _ => text.to_string(),
    }
}
