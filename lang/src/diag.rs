//! Diagnostics for syntax and type errors: a message, the primary span, secondary labels.
//! Rendered with ariadne (byte-indexed spans) and always headed by `file:line:col`.

use crate::ast::Span;

#[derive(Clone, Debug, PartialEq)]
pub struct Diagnostic {
    pub message: String,
    pub span: Span,
    /// Secondary spans with their own text (e.g. "declared here").
    pub labels: Vec<(Span, String)>,
    pub notes: Vec<String>,
    /// Rendered as a warning (`Warning:`), not an error: something reported that does not
    /// fail the check (a race the race policy judged benign).
    pub warning: bool,
}

impl Diagnostic {
    pub fn new(message: impl Into<String>, span: Span) -> Self {
        Diagnostic {
            message: message.into(),
            span,
            labels: Vec::new(),
            notes: Vec::new(),
            warning: false,
        }
    }

    pub fn as_warning(mut self) -> Self {
        self.warning = true;
        self
    }

    pub fn with_label(mut self, span: Span, text: impl Into<String>) -> Self {
        self.labels.push((span, text.into()));
        self
    }

    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }
}
