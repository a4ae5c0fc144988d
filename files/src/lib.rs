//! Every file ksim reads or writes goes through here, for two promises:
//!
//! - **bounded reads**: a file a user names (a kernel, an `@file` input, a schedule, a
//!   report, a CSV) is read with a size limit, so `/dev/zero` or a huge file gives a clear
//!   error instead of exhausting memory;
//! - **writes to the file the user named** ([`write_atomic`]): what ksim produces (reports,
//!   CSVs, plots, patched kernels) goes to the file a path names, following symlinks; a
//!   regular file is written to a temporary file beside it and renamed over it (a reader
//!   never sees half a file, a failed write loses nothing and leaves no temporary behind),
//!   keeping its mode, and a new file gets the mode the umask gives; a FIFO or a device
//!   (`/dev/stdout`) is written in place, never replaced.

use std::fmt;
use std::io::Read;
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

mod patch;
mod write;

pub use patch::{patch_file, PatchError};
pub use write::{
    check_writable, ensure_writable_dir, resolve_links, write_atomic, write_atomic_via,
    writes_in_place,
};

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{FileTypeExt, PermissionsExt};

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
        let p = dir.path().join("out.json");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "two");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
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

    fn mode(p: &Path) -> u32 {
        std::fs::metadata(p).unwrap().permissions().mode() & 0o7777
    }

    fn set_mode(p: &Path, mode: u32) {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    #[test]
    fn a_replaced_file_keeps_its_mode() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("page.html");
        std::fs::write(&p, "old").unwrap();
        set_mode(&p, 0o640);
        write_atomic(&p, b"new").unwrap();
        assert_eq!(mode(&p), 0o640);
        set_mode(&p, 0o604);
        write_atomic_via(&p, ".png", |tmp| std::fs::write(tmp, "png")).unwrap();
        assert_eq!(mode(&p), 0o604);
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "png");
    }

    #[test]
    fn a_new_file_is_not_private_to_the_owner() {
        // The umask of the test process is unknown here (tests/trust_files.rs sets one); a
        // new file gets the group and other bits it leaves, where `tempfile` alone gives 0600.
        let dir = tempfile::tempdir().unwrap();
        let probe = dir.path().join("probe");
        std::fs::write(&probe, "").unwrap();
        let p = dir.path().join("new.csv");
        write_atomic(&p, b"x").unwrap();
        assert_eq!(mode(&p), mode(&probe));
    }

    #[test]
    fn a_symlink_is_followed_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target.csv");
        let link = dir.path().join("link.csv");
        std::fs::write(&target, "old").unwrap();
        std::os::unix::fs::symlink("target.csv", &link).unwrap();
        write_atomic(&link, b"new").unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
        // A dangling link: its target is created.
        let dangling = dir.path().join("dangling.svg");
        std::os::unix::fs::symlink("made.svg", &dangling).unwrap();
        write_atomic_via(&dangling, ".svg", |tmp| std::fs::write(tmp, "svg")).unwrap();
        assert!(std::fs::symlink_metadata(&dangling)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(
            std::fs::read_to_string(dir.path().join("made.svg")).unwrap(),
            "svg"
        );
    }

    #[test]
    fn a_fifo_is_written_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo.csv");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        for via in [false, true] {
            let reader = {
                let fifo = fifo.clone();
                std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
            };
            if via {
                write_atomic_via(&fifo, ".png", |tmp| std::fs::write(tmp, "drawn")).unwrap();
            } else {
                write_atomic(&fifo, b"a,b\n").unwrap();
            }
            assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
            let got = reader.join().unwrap();
            assert_eq!(got, if via { "drawn" } else { "a,b\n" });
        }
    }

    #[test]
    fn a_device_is_written_in_place() {
        write_atomic(Path::new("/dev/null"), b"x").unwrap();
        assert!(std::fs::metadata("/dev/null")
            .unwrap()
            .file_type()
            .is_char_device());
        let e = write_atomic(Path::new("/dev/full"), b"x").unwrap_err();
        assert!(std::fs::metadata("/dev/full")
            .unwrap()
            .file_type()
            .is_char_device());
        assert!(e.to_string().contains("space"), "{e}");
    }

    #[test]
    fn a_directory_or_a_missing_directory_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let e = write_atomic(dir.path(), b"x").unwrap_err();
        assert!(e.to_string().contains("is a directory"), "{e}");
        let p = dir.path().join("nosuch/x.json");
        let e = write_atomic(&p, b"x").unwrap_err();
        assert!(e.to_string().contains("does not exist"), "{e}");
        assert!(check_writable(&p).is_err());
        assert!(!dir.path().join("nosuch").exists());
        assert!(check_writable(&dir.path().join("x.json")).is_ok());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_file_changed_since_it_was_read_is_not_patched() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("k.ksim");
        std::fs::write(&p, "analysed\n// user edit\n").unwrap();
        let e = patch_file(&p, "analysed\n", "patched\n").unwrap_err();
        assert!(matches!(e, PatchError::Changed(_)), "{e}");
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            "analysed\n// user edit\n"
        );
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        // The same file, unchanged since it was read, is patched.
        let orig = patch_file(&p, "analysed\n// user edit\n", "patched\n").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "patched\n");
        assert_eq!(
            std::fs::read_to_string(orig).unwrap(),
            "analysed\n// user edit\n"
        );
    }

    #[test]
    fn patching_keeps_every_original_and_the_mode() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("k.ksim");
        std::fs::write(&p, "one").unwrap();
        set_mode(&p, 0o664);
        assert_eq!(
            patch_file(&p, "one", "two").unwrap(),
            dir.path().join("k.ksim.orig")
        );
        assert_eq!(
            patch_file(&p, "two", "three").unwrap(),
            dir.path().join("k.ksim.orig.1")
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("k.ksim.orig")).unwrap(),
            "one"
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("k.ksim.orig.1")).unwrap(),
            "two"
        );
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "three");
        for f in ["k.ksim", "k.ksim.orig", "k.ksim.orig.1"] {
            assert_eq!(mode(&dir.path().join(f)), 0o664, "{f}");
        }
    }

    #[test]
    fn patching_a_link_patches_its_target() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.ksim");
        let link = dir.path().join("link.ksim");
        std::fs::write(&real, "old").unwrap();
        std::os::unix::fs::symlink("real.ksim", &link).unwrap();
        let orig = patch_file(&link, "old", "new").unwrap();
        assert_eq!(orig, dir.path().join("real.ksim.orig"));
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "new");
    }

    #[test]
    fn a_read_only_file_is_not_patched() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("ro.ksim");
        std::fs::write(&p, "old").unwrap();
        set_mode(&p, 0o444);
        let e = patch_file(&p, "old", "new").unwrap_err();
        assert!(matches!(e, PatchError::ReadOnly(_)), "{e}");
        assert!(e.to_string().contains("read-only"), "{e}");
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "old");
        assert_eq!(mode(&p), 0o444);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
