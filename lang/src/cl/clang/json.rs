//! clang's JSON syntax tree (`-Xclang -ast-dump=json`), read into typed nodes.
//!
//! clang writes a location's `file` (and `line`) only where it differs from the location
//! written before it, so a location means something only in document order. serde's
//! derived deserializers visit the fields of a node in the order they are written, so each
//! location is completed ([`Loc::file`]) as it is read, from the file seen last
//! ([`LocState`], per thread).

use serde::Deserialize;
use std::cell::RefCell;

/// One node of the tree: a declaration, statement, expression, type or attribute. Only the
/// fields ksim reads; a null child (a `for` without a condition) is a node without `kind`.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Node {
    pub id: String,
    pub kind: String,
    pub loc: Option<SrcLoc>,
    pub range: Option<Range>,
    pub is_implicit: bool,
    pub name: Option<String>,
    #[serde(rename = "type")]
    pub ty: Option<QualType>,
    pub value: Option<serde_json::Value>,
    pub opcode: Option<String>,
    pub cast_kind: Option<String>,
    pub is_arrow: bool,
    pub is_postfix: bool,
    pub referenced_decl: Option<Box<Node>>,
    pub owned_tag_decl: Option<Box<Node>>,
    pub decl: Option<Box<Node>>,
    pub tag_used: Option<String>,
    pub complete_definition: bool,
    pub arg_type: Option<QualType>,
    pub has_else: bool,
    /// A `LabelStmt`'s label and a `GotoStmt`'s target.
    pub decl_id: Option<String>,
    pub target_label_decl_id: Option<String>,
    pub storage_class: Option<String>,
    #[serde(rename = "virtual")]
    pub is_virtual: bool,
    pub inner: Vec<Node>,
    /// A C++ struct's base classes (`struct t : s`).
    pub bases: Vec<BaseSpec>,
    /// An initializer list shorter than its array: clang writes the filler (the value of
    /// the elements not written) and then the written elements here, not in `inner`.
    #[serde(rename = "array_filler")]
    pub array_filler: Vec<Node>,
}

/// A base class of a C++ struct.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct BaseSpec {
    #[serde(rename = "type")]
    pub ty: Option<QualType>,
    pub is_virtual: bool,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QualType {
    pub qual_type: String,
    pub desugared_qual_type: Option<String>,
}

#[derive(Clone, Debug, Default, Deserialize)]
pub struct Range {
    pub begin: SrcLoc,
    pub end: SrcLoc,
}

/// A source location: a plain one, or a macro expansion's (`expansionLoc` is where the
/// macro was used, the place ksim's messages point at).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SrcLoc {
    #[serde(flatten)]
    pub plain: Option<Loc>,
    pub spelling_loc: Option<Loc>,
    pub expansion_loc: Option<Loc>,
}

impl SrcLoc {
    /// Where the user wrote it: the expansion of a macro, else the location itself.
    pub fn user(&self) -> Option<&Loc> {
        self.expansion_loc.as_ref().or(self.plain.as_ref())
    }

    /// Where its characters are: in a macro's body for an expanded token.
    pub fn spelling(&self) -> Option<&Loc> {
        self.spelling_loc.as_ref().or(self.plain.as_ref())
    }
}

/// A location completed with the file and line written before it.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(from = "RawLoc")]
pub struct Loc {
    pub offset: usize,
    pub file: String,
    pub line: usize,
    pub col: usize,
    pub tok_len: usize,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawLoc {
    offset: usize,
    file: Option<String>,
    line: Option<usize>,
    col: Option<usize>,
    #[serde(default)]
    tok_len: usize,
}

/// The file and line of the location read last on this thread.
#[derive(Default)]
struct LocState {
    file: String,
    line: usize,
}

thread_local! {
    static STATE: RefCell<LocState> = RefCell::new(LocState::default());
}

impl From<RawLoc> for Loc {
    fn from(r: RawLoc) -> Loc {
        STATE.with(|s| {
            let mut s = s.borrow_mut();
            if let Some(f) = r.file {
                s.file = f;
            }
            if let Some(l) = r.line {
                s.line = l;
            }
            Loc {
                offset: r.offset,
                file: s.file.clone(),
                line: s.line,
                col: r.col.unwrap_or(0),
                tok_len: r.tok_len,
            }
        })
    }
}

/// Reads clang's JSON tree, however deep (the caller runs this on a thread with a large
/// stack: serde's derived deserializers recurse once per level).
pub fn read(text: &str) -> Result<Node, String> {
    STATE.with(|s| *s.borrow_mut() = LocState::default());
    let mut de = serde_json::Deserializer::from_str(text);
    de.disable_recursion_limit();
    let node = Node::deserialize(&mut de).map_err(|e| format!("clang's syntax tree: {e}"))?;
    de.end().map_err(|e| format!("clang's syntax tree: {e}"))?;
    Ok(node)
}
