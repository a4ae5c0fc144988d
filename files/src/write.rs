//! Writing the file a path names, the way a user expects of a command-line tool:
//!
//! - a symlink is followed: its target is written and the link kept;
//! - a regular file is replaced atomically (a temporary file beside it, renamed over it)
//!   and keeps its permissions;
//! - a new file is created the same way, with the mode the user's umask gives (0644 under
//!   umask 022), as `open(2)` would give it; its directory must exist: a path the user
//!   named is never made up by creating directories (`ksim races --report-dir` creates its
//!   directory with [`ensure_writable_dir`], since that is a directory the user asked for);
//! - anything else that exists (a FIFO, a character device, `/dev/stdout`, any path under
//!   `/dev` or `/proc`) is opened and written in place, never replaced: renaming over it
//!   would replace a device node, or leave a reader of a FIFO with nothing;
//! - a directory is an error.

use std::fs::{self, File, OpenOptions, Permissions};
use std::io::{self, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// How many symlinks are followed before giving up (the limit of Linux's own resolution).
const MAX_LINKS: usize = 40;

/// Where a write to a path goes.
enum Target {
    /// A regular file, or none yet: written beside and renamed over `path`. `keep` holds
    /// the permissions of the file replaced, if there is one.
    Replace {
        path: PathBuf,
        keep: Option<Permissions>,
    },
    /// Something that is not a regular file, or a system path: written in place.
    InPlace(PathBuf),
}

/// The directory a file at `path` lives in (`.` for a bare file name).
pub(crate) fn parent(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// Paths under `/dev` and `/proc` are the system's (devices, `/dev/stdout`,
/// `/proc/self/fd/1`): written in place, and their links are the kernel's to follow.
fn is_system(path: &Path) -> bool {
    path.starts_with("/dev") || path.starts_with("/proc")
}

/// The file `path` reaches through symlinks, found even when the last link dangles (a
/// write then creates the link's target). Stops at a system path, whose links (such as
/// `/proc/self/fd/1` to a pipe) do not name files.
pub fn resolve_links(path: &Path) -> io::Result<PathBuf> {
    let mut p = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        if is_system(&p) {
            return Ok(p);
        }
        match fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = fs::read_link(&p)?;
                p = match p.parent().filter(|d| !d.as_os_str().is_empty()) {
                    Some(dir) => dir.join(to),
                    None => to,
                };
            }
            _ => return Ok(p),
        }
    }
    Err(io::Error::other("too many levels of symbolic links"))
}

fn target(path: &Path) -> io::Result<Target> {
    let p = resolve_links(path)?;
    let meta = match fs::metadata(&p) {
        Err(e) if e.kind() == io::ErrorKind::NotFound && !is_system(&p) => {
            let dir = parent(&p);
            if !dir.is_dir() {
                return Err(io::Error::new(
                    io::ErrorKind::NotFound,
                    format!("the directory `{}` does not exist", dir.display()),
                ));
            }
            return Ok(Target::Replace {
                path: p,
                keep: None,
            });
        }
        meta => meta?,
    };
    if meta.is_dir() {
        Err(io::Error::other("it is a directory"))
    } else if meta.is_file() && !is_system(&p) {
        Ok(Target::Replace {
            path: p,
            keep: Some(meta.permissions()),
        })
    } else {
        Ok(Target::InPlace(p))
    }
}

/// Opens a file that is written in place. Appending keeps what a shell redirection of
/// `/dev/stdout` to a file already holds; on a FIFO or a device it changes nothing.
fn open_in_place(path: &Path) -> io::Result<File> {
    OpenOptions::new().append(true).open(path)
}

/// Writes `bytes` to the file `path` names (see the module documentation). On any failure
/// a replaced file keeps its old contents and no temporary file remains.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    match target(path)? {
        Target::InPlace(p) => open_in_place(&p)?.write_all(bytes),
        Target::Replace { path, keep } => {
            replace(&path, keep, "", |tmp| tmp.as_file_mut().write_all(bytes))
        }
    }
}

/// Like [`write_atomic`], for producers that write to a path themselves (a plotting
/// backend): `produce` gets a temporary file's path and fills it; the result then goes
/// where [`write_atomic`] would put it. `suffix` keeps the extension a producer may look
/// at (`.png`).
pub fn write_atomic_via<E: From<io::Error>>(
    path: &Path,
    suffix: &str,
    produce: impl FnOnce(&Path) -> Result<(), E>,
) -> Result<(), E> {
    match target(path)? {
        Target::InPlace(p) => {
            let tmp = tempfile::Builder::new()
                .prefix(".ksim-")
                .suffix(suffix)
                .tempfile()?;
            produce(tmp.path())?;
            io::copy(&mut File::open(tmp.path())?, &mut open_in_place(&p)?)?;
            Ok(())
        }
        Target::Replace { path, keep } => replace(&path, keep, suffix, |tmp| produce(tmp.path())),
    }
}

/// The one atomic writer: a temporary file next to `path` (same file system, so the final
/// rename is atomic), created with mode 0666 less the umask or given `keep`'s permissions,
/// filled by `fill`, flushed to disk, renamed over `path`; dropped (and so deleted) on any
/// failure.
fn replace<E: From<io::Error>>(
    path: &Path,
    keep: Option<Permissions>,
    suffix: &str,
    fill: impl FnOnce(&mut tempfile::NamedTempFile) -> Result<(), E>,
) -> Result<(), E> {
    let mut tmp = tempfile::Builder::new()
        .prefix(".ksim-")
        .suffix(suffix)
        .permissions(Permissions::from_mode(0o666))
        .tempfile_in(parent(path))?;
    if let Some(perm) = keep {
        tmp.as_file().set_permissions(perm)?;
    }
    fill(&mut tmp)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Whether a write to `path` goes in place (a FIFO, a device, `/dev/stdout`) rather than
/// to a regular file: such a path has no directory to put companion files in.
pub fn writes_in_place(path: &Path) -> bool {
    matches!(target(path), Ok(Target::InPlace(_)))
}

/// Checks up front, creating nothing, that [`write_atomic`] can write `path`, so that a
/// long computation does not end in a result that cannot be saved. A FIFO or a device is
/// not opened (opening a FIFO waits for a reader): it is checked when written.
pub fn check_writable(path: &Path) -> io::Result<()> {
    if let Target::Replace { path, .. } = target(path)? {
        tempfile::Builder::new()
            .prefix(".ksim-")
            .tempfile_in(parent(&path))?;
    }
    Ok(())
}

/// Checks up front that files can be created in `dir`, creating it if needed: for a
/// directory the user asks ksim to fill (`--report-dir`).
pub fn ensure_writable_dir(dir: &Path) -> io::Result<()> {
    fs::create_dir_all(dir)?;
    tempfile::Builder::new().prefix(".ksim-").tempfile_in(dir)?;
    Ok(())
}
