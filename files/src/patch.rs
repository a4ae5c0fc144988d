//! Patching a file the user owns and may be editing (`ksim fix --write`), so that nothing
//! the user wrote is lost: the symlink's target is patched (the link kept), a read-only
//! file is refused, a file that changed since it was read is refused, and the original is
//! kept beside the target in a file that did not exist before (`FILE.orig`, or
//! `FILE.orig.1`, `FILE.orig.2`, ... when earlier originals are there), with FILE's mode.

use crate::write::{parent, resolve_links, write_atomic};
use std::fmt;
use std::fs::{self, OpenOptions, Permissions};
use std::io::{self, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// How many `FILE.orig.N` names are tried before giving up.
const MAX_ORIGINALS: usize = 1000;

/// Why a file was not patched. In every case the file and its earlier originals are as
/// they were (an `Io` error after the original was kept leaves that new original behind).
#[derive(Debug)]
pub enum PatchError {
    /// The path (after symlinks) is not a regular file.
    NotRegular(PathBuf),
    /// The file has no write permission bit: the user made it read-only.
    ReadOnly(PathBuf),
    /// The file no longer holds the text that was analysed.
    Changed(PathBuf),
    /// The operating system refused (permissions, a full disk, ...).
    Io(PathBuf, io::Error),
}

impl fmt::Display for PatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PatchError::NotRegular(p) => {
                write!(f, "not written: `{}` is not a regular file", p.display())
            }
            PatchError::ReadOnly(p) => write!(
                f,
                "not written: `{}` is read-only (it has no write permission)",
                p.display()
            ),
            PatchError::Changed(p) => write!(
                f,
                "not written: `{}` changed while it was analysed; run the command again on \
                 the new text",
                p.display()
            ),
            PatchError::Io(p, e) => write!(f, "cannot write `{}`: {e}", p.display()),
        }
    }
}

impl std::error::Error for PatchError {}

/// Replaces the text of the file `path` names, `original` when it was read, by `patched`;
/// returns where the original was kept. Refuses, writing nothing, when the file is not a
/// regular file, is read-only or may not be written by this user, or no longer holds
/// `original` (re-read just before writing, so an edit made meanwhile is not lost; an edit
/// in the instant between that re-read and the rename can still be, as with any editor).
pub fn patch_file(path: &Path, original: &str, patched: &str) -> Result<PathBuf, PatchError> {
    let io_err = |p: &Path| {
        let p = p.to_path_buf();
        move |e| PatchError::Io(p, e)
    };
    let target = resolve_links(path).map_err(io_err(path))?;
    let meta = fs::metadata(&target).map_err(io_err(&target))?;
    if !meta.is_file() {
        return Err(PatchError::NotRegular(path.to_path_buf()));
    }
    if meta.permissions().mode() & 0o222 == 0 {
        return Err(PatchError::ReadOnly(path.to_path_buf()));
    }
    // Whether this user may write it (owner, ACLs, a read-only mount) is the kernel's to
    // say: opening for writing without truncating asks it and changes nothing.
    OpenOptions::new()
        .write(true)
        .open(&target)
        .map_err(io_err(&target))?;
    let now = crate::read_to_string(&target, crate::TEXT_LIMIT);
    if now.ok().as_deref() != Some(original) {
        return Err(PatchError::Changed(path.to_path_buf()));
    }
    let orig = keep_original(&target, original, meta.permissions())?;
    write_atomic(&target, patched.as_bytes()).map_err(io_err(&target))?;
    Ok(orig)
}

/// Writes `text` to the first of `FILE.orig`, `FILE.orig.1`, ... that does not exist, with
/// `perm`; never replaces a file (the final rename refuses to).
fn keep_original(target: &Path, text: &str, perm: Permissions) -> Result<PathBuf, PatchError> {
    for n in 0..MAX_ORIGINALS {
        let mut name = target.as_os_str().to_owned();
        name.push(if n == 0 {
            ".orig".to_string()
        } else {
            format!(".orig.{n}")
        });
        let orig = PathBuf::from(name);
        if fs::symlink_metadata(&orig).is_ok() {
            continue;
        }
        let io_err = |e| PatchError::Io(orig.clone(), e);
        let mut tmp = tempfile::Builder::new()
            .prefix(".ksim-")
            .tempfile_in(parent(target))
            .map_err(io_err)?;
        tmp.as_file()
            .set_permissions(perm.clone())
            .map_err(io_err)?;
        tmp.write_all(text.as_bytes()).map_err(io_err)?;
        tmp.as_file().sync_all().map_err(io_err)?;
        match tmp.persist_noclobber(&orig) {
            Ok(_) => return Ok(orig),
            Err(e) if e.error.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(io_err(e.error)),
        }
    }
    Err(PatchError::Io(
        target.to_path_buf(),
        io::Error::other(format!(
            "{MAX_ORIGINALS} earlier originals (FILE.orig, FILE.orig.N) are in the way"
        )),
    ))
}
