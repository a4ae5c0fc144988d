//! The build options of a `.cl` or `.cu` compilation that clang's preprocessor takes
//! (OpenCL's `-D` and `-I`), and how included files are read.

use std::path::{Path, PathBuf};

/// Preprocessor options: OpenCL build options `-D` and `-I`, passed on to clang.
#[derive(Clone, Debug, Default)]
pub struct PpOptions {
    /// `-D NAME` (value `1`) or `-D NAME=VALUE`.
    pub defines: Vec<(String, Option<String>)>,
    pub include_dirs: Vec<PathBuf>,
}

/// Reads an included file: its text, or a message saying why not (for a path that is no
/// file on disk, taken as "not found": the next candidate is tried). Through it a replayed
/// report gives clang the copies of headers that are no longer on disk.
pub type Loader<'a> = dyn FnMut(&Path) -> Result<String, String> + 'a;
