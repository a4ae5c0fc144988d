//! clang as the C front end: Debian's `clang-15` preprocesses, parses and type-checks the
//! `.cl` file (OpenCL C 1.2), and its typed syntax tree (`-Xclang -ast-dump=json`) is
//! converted ([`convert`]) into the OpenCL syntax tree that the lowering takes.
//!
//! - The main file's text goes to clang on standard input (replay may hold a text that is
//!   no longer on disk), with clang working in the file's folder so that `#include "x.h"`
//!   finds what it found next to the file.
//! - Built-ins: clang's table-driven declarations of the OpenCL built-ins
//!   (`-fdeclare-opencl-builtins` with `-finclude-default-header`, which brings
//!   `opencl-c-base.h`: the types and the limits macros), plus ksim's own header
//!   (`ksim.h`: GPUVerify's annotation calls), passed with `-include`.
//! - Every file clang includes (`-H`) is read through the caller's loader and added to the
//!   [`SourceMap`], so that spans, messages and replay reports name it.
//! - clang's `file:line:col: error: message` lines become diagnostics at that place.

mod convert;
pub mod cuda;
mod json;
mod types;

use super::{ClOptions, SourceMap};
use crate::ast::Span;
use crate::diag::Diagnostic;
use convert::Spans;
use json::Loc;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;
use wait_timeout::ChildExt;

/// The clang ksim runs: Debian's versioned binary (`apt install clang-15`).
const CLANG: &str = "clang-15";

/// ksim's declarations for clang, shipped in the binary.
const HEADER: &str = include_str!("ksim.h");

/// The name clang gives the main file, read from standard input.
const STDIN: &str = "<stdin>";

/// Parses file 0 of `map` with clang; included files are read with `load` and added to
/// `map`.
pub fn parse_unit(
    map: &mut SourceMap,
    opts: &ClOptions,
    load: &mut super::options::Loader<'_>,
) -> Result<super::ast::Unit, Vec<Diagnostic>> {
    let fail = |m: String| vec![Diagnostic::new(m, 0..0)];
    let is_cuda = cuda::is_cuda(&map.files[0].path);
    let header = if is_cuda {
        cuda::header_dir()
    } else {
        header_file()
    }
    .map_err(fail)?;
    let dir = map.files[0]
        .path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    // A replayed report's folder may be gone: clang then runs elsewhere and reads the
    // report's copies of the includes through an overlay.
    let cwd = if dir.is_dir() {
        dir.clone()
    } else {
        std::env::temp_dir()
    };
    let mut overlay = Overlay::default();
    let out = loop {
        let out = run_clang(map, opts, is_cuda, &header, &dir, &cwd, &overlay)?;
        // A file clang did not find on disk may be one the loader holds (a replayed
        // report's copy of a deleted header): clang then reads it through an overlay.
        if !overlay.add_missing(&String::from_utf8_lossy(&out.stderr), &dir, opts, load) {
            break out;
        }
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    let mut files = Files::new(dir, header);
    for line in stderr.lines() {
        // `-H`: one line per included file, `. path` (more dots: deeper).
        let dots = line.len() - line.trim_start_matches('.').len();
        if dots > 0 && line[dots..].starts_with(' ') {
            files.include(map, load, line[dots + 1..].trim())?;
        }
    }
    // CUDA is read as CUDA, not OpenCL C: its errors carry no note.
    let invalid = (!is_cuda).then_some(INVALID_OPENCL);
    let errors = diagnostics(&stderr, map, &mut files, load, invalid)?;
    if !errors.is_empty() {
        return Err(errors);
    }
    if !out.status.success() {
        return Err(fail(format!("{CLANG} failed: {}", stderr.trim())));
    }
    let json = String::from_utf8_lossy(&out.stdout).into_owned();
    let spans = FileSpans {
        files: files.bases(map),
    };
    // The tree nests as deep as the source (a sum of 3,000 terms: 6,000 levels): read and
    // convert it on a thread whose stack holds that (memory is committed as it is used).
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .stack_size(1 << 30)
            .spawn_scoped(s, || {
                let root = json::read(&json).map_err(fail)?;
                let cuda = is_cuda.then(|| {
                    opts.pp
                        .defines
                        .iter()
                        .find(|(n, _)| n == cuda::SHARED_BYTES)
                        .and_then(|(_, v)| v.as_deref()?.parse().ok())
                });
                convert::unit(&root, &spans, cuda).map_err(|d| vec![d])
            })
            .map_err(|e| fail(format!("cannot start a thread: {e}")))?
            .join()
            .unwrap_or_else(|_| Err(fail("clang's syntax tree could not be read".into())))
    })
}

/// One run of clang on file 0 of `map`, reading the files of `overlay` at their paths.
fn run_clang(
    map: &SourceMap,
    opts: &ClOptions,
    is_cuda: bool,
    header: &Path,
    dir: &Path,
    cwd: &Path,
    overlay: &Overlay,
) -> Result<std::process::Output, Vec<Diagnostic>> {
    let fail = |m: String| vec![Diagnostic::new(m, 0..0)];
    let mut cmd = Command::new(CLANG);
    cmd.current_dir(cwd)
        .args(["-fsyntax-only", "-H"])
        // No warnings, but an initialiser with more items than the object is an error, as
        // C11 §6.7.9p2 makes it (a constraint), not clang's warning: the items would be lost.
        .args(["-Wno-everything", "-Werror=excess-initializers"])
        .args(["-fno-color-diagnostics", "-fno-caret-diagnostics"])
        .args(["-Xclang", "-ast-dump=json"]);
    if is_cuda {
        cmd.args(cuda::clang_args(header));
    } else {
        cmd.args(["-x", "cl", "-cl-std=CL1.2"])
            .args(["-Xclang", "-finclude-default-header"])
            .args(["-Xclang", "-fdeclare-opencl-builtins"])
            .arg("-include")
            .arg(header);
    }
    // `#include "x.h"` next to the main file, also when its folder is gone.
    cmd.arg("-iquote").arg(absolute(dir));
    if let Some(yaml) = overlay.write().map_err(fail)? {
        cmd.arg("-ivfsoverlay").arg(yaml);
    }
    for (name, value) in &opts.pp.defines {
        match value {
            Some(v) => cmd.arg(format!("-D{name}={v}")),
            None => cmd.arg(format!("-D{name}")),
        };
    }
    for d in &opts.pp.include_dirs {
        cmd.arg("-I").arg(absolute(d));
    }
    cmd.arg("-")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().map_err(|e| {
        fail(if e.kind() == std::io::ErrorKind::NotFound {
            format!(
                "{CLANG} is not installed: ksim reads OpenCL C with clang \
                 (Debian: `apt install {CLANG}`)"
            )
        } else {
            format!("cannot run {CLANG}: {e}")
        })
    })?;
    let mut stdin = child.stdin.take().expect("piped");
    let text = map.files[0].text.clone();
    let writer = std::thread::spawn(move || stdin.write_all(text.as_bytes()));
    let stdout = read_tree(child.stdout.take().expect("piped"), TREE_BYTES);
    let stderr = read_at_most(child.stderr.take().expect("piped"), TREE_BYTES);
    let status = match child.wait_timeout(Duration::from_secs(CLANG_SECONDS)) {
        Ok(Some(status)) => status,
        Ok(None) => {
            let _ = child.kill();
            let _ = child.wait();
            return Err(fail(format!(
                "{CLANG} took more than {CLANG_SECONDS} s on this file (a macro that \
                 expands without end?): ksim gave up"
            )));
        }
        Err(e) => return Err(fail(format!("{CLANG}: {e}"))),
    };
    // clang may stop reading early (a fatal error): its messages say why.
    let _ = writer.join();
    let joined = |r: std::thread::JoinHandle<std::io::Result<Vec<u8>>>| {
        r.join()
            .unwrap_or_else(|_| Ok(Vec::new()))
            .map_err(|e| fail(format!("{CLANG}: {e}")))
    };
    let (stdout, stderr) = (joined(stdout)?, joined(stderr)?);
    if stdout.len() as u64 >= TREE_BYTES {
        return Err(fail(format!(
            "the syntax tree {CLANG} gives for this file is over {} MiB (a macro that \
             expands to millions of tokens?): ksim gave up",
            TREE_BYTES >> 20
        )));
    }
    Ok(std::process::Output {
        status,
        stdout,
        stderr,
    })
}

/// How long clang may take on one file: far more than any real kernel needs (GPUVerify's
/// take under a second each), so that a macro that expands without end is an error, not
/// a hang.
const CLANG_SECONDS: u64 = 60;

/// The most of clang's output ksim keeps: the syntax tree of a kernel of thousands of
/// lines is tens of MiB once its indentation is dropped ([`read_tree`]).
const TREE_BYTES: u64 = 1 << 30;

/// Reads clang's JSON tree on a thread of its own without the spaces that start its lines
/// (the indentation, two per level, is most of the text of a deep tree: a sum of 3,000
/// terms is nested 6,000 levels deep), at most `limit` bytes of the rest (then the pipe
/// is closed, and clang gets an error writing). JSON strings hold no raw line breaks, so
/// no string loses a space.
fn read_tree(
    r: impl std::io::Read + Send + 'static,
    limit: u64,
) -> std::thread::JoinHandle<std::io::Result<Vec<u8>>> {
    std::thread::spawn(move || {
        let mut r = r;
        let (mut out, mut buf, mut line_start) = (Vec::new(), vec![0u8; 1 << 16], true);
        while (out.len() as u64) < limit {
            let n = match r.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            for &b in &buf[..n] {
                if !(line_start && b == b' ') {
                    line_start = b == b'\n';
                    out.push(b);
                }
            }
        }
        Ok(out)
    })
}

/// Reads `r` on a thread of its own, at most `limit` bytes (then the pipe is closed, and
/// a writer still writing gets an error).
fn read_at_most(
    r: impl std::io::Read + Send + 'static,
    limit: u64,
) -> std::thread::JoinHandle<std::io::Result<Vec<u8>>> {
    std::thread::spawn(move || {
        let mut out = Vec::new();
        r.take(limit).read_to_end(&mut out).map(|_| out)
    })
}

fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

/// Files clang reads at their paths although they are not on disk (clang's virtual file
/// system overlay, `-ivfsoverlay`): the loader's texts of included files, so that a
/// report replays where its headers are gone.
#[derive(Default)]
struct Overlay {
    /// Absolute path → text.
    files: Vec<(PathBuf, String)>,
    /// The temporary folder holding the texts and the overlay's description.
    dir: Option<PathBuf>,
}

impl Overlay {
    /// Adds the files clang reported as not found (`'NAME' file not found`) that the
    /// loader has, looked for where clang looks: beside the including file, then in each
    /// `-I` folder. Whether one was added (clang is then run again).
    fn add_missing(
        &mut self,
        stderr: &str,
        dir: &Path,
        opts: &ClOptions,
        load: &mut super::options::Loader<'_>,
    ) -> bool {
        let mut added = false;
        for line in stderr.lines() {
            let Some((place, rest)) = line.split_once(": fatal error: '") else {
                continue;
            };
            let Some(name) = rest.strip_suffix("' file not found") else {
                continue;
            };
            let file = place.rsplitn(3, ':').nth(2).unwrap_or(STDIN);
            let beside = match file {
                STDIN => dir.to_path_buf(),
                f => Path::new(f)
                    .parent()
                    .map_or_else(|| dir.to_path_buf(), Path::to_path_buf),
            };
            let places = std::iter::once(&beside).chain(&opts.pp.include_dirs);
            for d in places {
                let path = absolute(d).join(name);
                if self.files.iter().any(|(p, _)| *p == path) {
                    continue;
                }
                if let Ok(text) = load(&path) {
                    self.files.push((path, text));
                    self.dir.get_or_insert_with(temp_folder);
                    added = true;
                    break;
                }
            }
        }
        added
    }

    /// Writes the texts and the overlay's description (JSON, which clang's YAML reader
    /// takes); its path, or `None` for an empty overlay.
    fn write(&self) -> Result<Option<PathBuf>, String> {
        let Some(dir) = &self.dir else {
            return Ok(None);
        };
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let mut roots = Vec::new();
        for (i, (path, text)) in self.files.iter().enumerate() {
            let copy = dir.join(format!("{i}.h"));
            std::fs::write(&copy, text).map_err(|e| format!("{}: {e}", copy.display()))?;
            roots.push(serde_json::json!({
                "type": "file",
                "name": path,
                "external-contents": copy,
            }));
        }
        let yaml = serde_json::json!({
            "version": 0,
            "case-sensitive": "true",
            "use-external-names": false,
            "roots": roots,
        });
        let path = dir.join("overlay.yaml");
        std::fs::write(&path, yaml.to_string()).map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(Some(path))
    }
}

/// A fresh temporary folder's path (this process, a counter).
fn temp_folder() -> PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    std::env::temp_dir().join(format!("ksim-overlay-{}-{n}", std::process::id()))
}

impl Drop for Overlay {
    fn drop(&mut self) {
        if let Some(d) = &self.dir {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}

/// ksim's header, written once per content to the temporary folder.
fn header_file() -> Result<PathBuf, String> {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    HEADER.hash(&mut h);
    let path = std::env::temp_dir().join(format!("ksim-{:016x}.h", h.finish()));
    if std::fs::read_to_string(&path).is_ok_and(|t| t == HEADER) {
        return Ok(path);
    }
    let tmp = path.with_extension(format!("{}.tmp", std::process::id()));
    std::fs::write(&tmp, HEADER)
        .and_then(|_| std::fs::rename(&tmp, &path))
        .map_err(|e| format!("cannot write ksim's header {}: {e}", path.display()))?;
    Ok(path)
}

/// The files of the unit as clang names them, and their place in the source map.
struct Files {
    dir: PathBuf,
    header: PathBuf,
    /// clang's name of a file → its index in the source map.
    known: Vec<(String, usize)>,
}

impl Files {
    fn new(dir: PathBuf, header: PathBuf) -> Files {
        Files {
            dir,
            header,
            known: vec![(STDIN.to_string(), 0)],
        }
    }

    /// Adds an included file that the user wrote (not clang's or ksim's own headers).
    fn include(
        &mut self,
        map: &mut SourceMap,
        load: &mut super::options::Loader<'_>,
        name: &str,
    ) -> Result<Option<usize>, Vec<Diagnostic>> {
        if let Some((_, i)) = self.known.iter().find(|(n, _)| n == name) {
            return Ok(Some(*i));
        }
        let path = self.dir.join(name);
        // ksim's header (or, for CUDA, its folder of headers) and clang's own.
        if Path::new(name).starts_with(&self.header) || name.starts_with("/usr/lib/llvm-") {
            return Ok(None);
        }
        let clean: PathBuf = path.components().filter(|c| c.as_os_str() != ".").collect();
        let text = load(&clean).map_err(|m| vec![Diagnostic::new(m, 0..0)])?;
        let i = map.add(clean, text);
        self.known.push((name.to_string(), i));
        Ok(Some(i))
    }

    fn bases(&self, map: &SourceMap) -> Vec<(String, usize, String)> {
        self.known
            .iter()
            .map(|(n, i)| (n.clone(), map.files[*i].base, map.files[*i].text.clone()))
            .collect()
    }
}

struct FileSpans {
    /// clang's name of a file, its base offset and text in the source map.
    files: Vec<(String, usize, String)>,
}

impl Spans for FileSpans {
    fn offset(&self, loc: &Loc) -> Option<usize> {
        let (_, base, text) = self.files.iter().find(|(n, _, _)| *n == loc.file)?;
        Some(base + loc.offset.min(text.len()))
    }

    fn token(&self, loc: &Loc) -> Option<String> {
        let (_, _, text) = self.files.iter().find(|(n, _, _)| *n == loc.file)?;
        text.get(loc.offset..loc.offset + loc.tok_len)
            .map(str::to_string)
    }

    fn call_end(&self, loc: &Loc) -> Option<usize> {
        let (_, base, text) = self.files.iter().find(|(n, _, _)| *n == loc.file)?;
        let after = loc.offset + loc.tok_len;
        let rest = text.get(after..)?;
        let open = after + rest.len() - rest.trim_start().len();
        if !text[open..].starts_with('(') {
            return None;
        }
        let mut depth = 0usize;
        for (i, c) in text[open..].char_indices() {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(base + open + i + 1);
                    }
                }
                _ => {}
            }
        }
        None
    }
}

/// clang's `file:line:col: error: message` lines as diagnostics, each with the note
/// `invalid` unless it is about an undeclared name.
fn diagnostics(
    stderr: &str,
    map: &mut SourceMap,
    files: &mut Files,
    load: &mut super::options::Loader<'_>,
    invalid: Option<&str>,
) -> Result<Vec<Diagnostic>, Vec<Diagnostic>> {
    let mut out = Vec::new();
    for line in stderr.lines() {
        let Some((place, message)) = line
            .split_once(": fatal error: ")
            .or_else(|| line.split_once(": error: "))
        else {
            continue;
        };
        let mut parts = place.rsplitn(3, ':');
        let (col, line_no, file) = (parts.next(), parts.next(), parts.next());
        let span = match (
            col.and_then(|c| c.parse::<usize>().ok()),
            line_no.and_then(|l| l.parse::<usize>().ok()),
            file,
        ) {
            (Some(col), Some(line_no), Some(file)) => match files.include(map, load, file)? {
                Some(i) => at_line_col(&map.files[i].text, map.files[i].base, line_no, col),
                None => 0..0,
            },
            _ => 0..0,
        };
        let d = Diagnostic::new(message.to_string(), span);
        out.push(match invalid {
            Some(note) if !names_undeclared(message) => d.with_note(note),
            _ => d,
        });
    }
    Ok(out)
}

/// The note on an error of clang's in a `.cl` file, which says the kernel itself is
/// invalid OpenCL C 1.2: not on one about an undeclared name ([`names_undeclared`]), which may be a built-in or annotation
/// ksim's header lacks. The conformance runner tells such kernels apart by it.
pub const INVALID_OPENCL: &str =
    "clang-15 reads the file as OpenCL C 1.2 (`-cl-std=CL1.2`), as PoCL and Oclgrind do";

/// Whether clang's error is about a name nothing declares.
fn names_undeclared(message: &str) -> bool {
    message.starts_with("use of undeclared identifier")
        || message.starts_with("implicit declaration of function")
        || message.starts_with("unknown type name")
}

/// The span of the token at 1-based `line` and `col` of `text` (placed at `base`).
fn at_line_col(text: &str, base: usize, line: usize, col: usize) -> Span {
    let start = text
        .split_inclusive('\n')
        .take(line.saturating_sub(1))
        .map(str::len)
        .sum::<usize>()
        + col.saturating_sub(1);
    let start = start.min(text.len());
    let rest = &text[start..];
    let word = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    base + start..base + start + word.max(1).min(rest.len().max(1))
}
