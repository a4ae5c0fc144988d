//! Every file ksim reads or writes goes through here, for two promises:
//!
//! - **bounded reads**: a file a user names (a kernel, an `@file` input, a schedule, a
//!   report, a CSV) is read with a size limit, so `/dev/zero` or a huge file gives a clear
//!   error instead of exhausting memory;
//! - **atomic writes**: what ksim produces (reports, CSVs, plots, patched kernels) is
//!   written to a temporary file beside its destination and renamed over it, so a reader
//!   never sees half a file, an existing file is never lost to a failed write, and a failed
//!   write leaves no temporary behind (`tempfile` removes it).

use std::fmt;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// The size limit for a kernel source, a schedule or a report (64 MiB).
pub const TEXT_LIMIT: u64 = 64 << 20;

/// Why a file could not be read.
#[derive(Debug)]
pub enum ReadError {
    /// The operating system refused (missing file, permissions, a directory, ...).
    Io(PathBuf, std::io::Error),
    /// The file holds more than `limit` bytes.
    TooLarge(PathBuf, u64),
    /// The file is not UTF-8 text.
    NotText(PathBuf),
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::Io(p, e) => write!(f, "cannot read `{}`: {e}", p.display()),
            ReadError::TooLarge(p, limit) => write!(
                f,
                "cannot read `{}`: it is larger than the limit of {} bytes",
                p.display(),
                limit
            ),
            ReadError::NotText(p) => {
                write!(f, "cannot read `{}`: it is not UTF-8 text", p.display())
            }
        }
    }
}

impl std::error::Error for ReadError {}

/// Reads a whole text file of at most `limit` bytes. Never reads more than `limit + 1`
/// bytes, whatever the file is (a device, a pipe, a growing file).
pub fn read_to_string(path: &Path, limit: u64) -> Result<String, ReadError> {
    let io = |e| ReadError::Io(path.to_path_buf(), e);
    let file = std::fs::File::open(path).map_err(io)?;
    if file.metadata().map_err(io)?.is_dir() {
        return Err(io(std::io::Error::other("it is a directory")));
    }
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > limit {
        return Err(ReadError::TooLarge(path.to_path_buf(), limit));
    }
    String::from_utf8(bytes).map_err(|_| ReadError::NotText(path.to_path_buf()))
}

/// The directory a file at `path` lives in (`.` for a bare file name).
fn parent(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// Writes `bytes` to `path` atomically, creating the parent directory if needed. On any
/// failure `path` keeps its old contents (if it had any) and no temporary file remains.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_atomic_in(path, "", |tmp| tmp.as_file_mut().write_all(bytes))
}

/// Like [`write_atomic`], for producers that write to a path themselves (a plotting
/// backend): `produce` gets the temporary file's path, fills it, and on success the file is
/// renamed over `path`. `suffix` keeps the extension a producer may look at (`.png`).
pub fn write_atomic_via<E: From<std::io::Error>>(
    path: &Path,
    suffix: &str,
    produce: impl FnOnce(&Path) -> Result<(), E>,
) -> Result<(), E> {
    write_atomic_in(path, suffix, |tmp| produce(tmp.path()))
}

/// The one atomic writer: a temporary file next to `path` (same file system, so the final
/// rename is atomic), filled by `fill`, flushed to disk, renamed over `path`; dropped (and
/// so deleted) on any failure.
fn write_atomic_in<E: From<std::io::Error>>(
    path: &Path,
    suffix: &str,
    fill: impl FnOnce(&mut tempfile::NamedTempFile) -> Result<(), E>,
) -> Result<(), E> {
    let dir = parent(path);
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".ksim-")
        .suffix(suffix)
        .tempfile_in(dir)?;
    fill(&mut tmp)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Checks up front that files can be created in `dir` (creating it if needed), so that a
/// long computation does not end in a result that cannot be saved.
pub fn ensure_writable_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    tempfile::Builder::new().prefix(".ksim-").tempfile_in(dir)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_within_the_limit_and_refuses_beyond() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.txt");
        std::fs::write(&p, "12345").unwrap();
        assert_eq!(read_to_string(&p, 5).unwrap(), "12345");
        let e = read_to_string(&p, 4).unwrap_err();
        assert!(matches!(e, ReadError::TooLarge(_, 4)), "{e}");
        assert!(e.to_string().contains("larger than the limit of 4 bytes"));
    }

    #[test]
    fn an_endless_device_is_refused_not_read() {
        let e = read_to_string(Path::new("/dev/zero"), 1 << 10).unwrap_err();
        assert!(matches!(e, ReadError::TooLarge(..)), "{e}");
    }

    #[test]
    fn directories_and_binary_files_are_clear_errors() {
        let dir = tempfile::tempdir().unwrap();
        let e = read_to_string(dir.path(), 10).unwrap_err();
        assert!(e.to_string().contains("directory"), "{e}");
        let p = dir.path().join("b");
        std::fs::write(&p, [0xff, 0xfe]).unwrap();
        assert!(matches!(read_to_string(&p, 10), Err(ReadError::NotText(_))));
    }

    #[test]
    fn atomic_write_replaces_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("sub/out.json");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "two");
        let names: Vec<_> = std::fs::read_dir(p.parent().unwrap()).unwrap().collect();
        assert_eq!(names.len(), 1);
    }

    #[test]
    fn a_failed_producer_keeps_the_old_file_and_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("plot.png");
        std::fs::write(&p, "old").unwrap();
        let r: Result<(), std::io::Error> = write_atomic_via(&p, ".png", |tmp| {
            std::fs::write(tmp, "half")?;
            Err(std::io::Error::other("drawing failed"))
        });
        assert!(r.is_err());
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "old");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn an_unwritable_destination_is_found_before_work() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, "x").unwrap();
        assert!(ensure_writable_dir(&file).is_err());
        assert!(ensure_writable_dir(&dir.path().join("new")).is_ok());
    }
}
