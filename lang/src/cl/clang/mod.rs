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
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

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
    load: &mut super::pp::Loader<'_>,
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
    // A replayed report's folder may be gone: clang then runs elsewhere (its includes,
    // which it reads from disk, are not found: a known gap of this front end).
    let cwd = if dir.is_dir() {
        dir.clone()
    } else {
        std::env::temp_dir()
    };
    let mut cmd = Command::new(CLANG);
    cmd.current_dir(&cwd)
        .args(["-fsyntax-only", "-H", "-w"])
        .args(["-fno-color-diagnostics", "-fno-caret-diagnostics"])
        .args(["-Xclang", "-ast-dump=json"]);
    if is_cuda {
        cmd.args(cuda::clang_args(&header));
    } else {
        cmd.args(["-x", "cl", "-cl-std=CL1.2"])
            .args(["-Xclang", "-finclude-default-header"])
            .args(["-Xclang", "-fdeclare-opencl-builtins"])
            .arg("-include")
            .arg(&header);
    }
    for (name, value) in &opts.pp.defines {
        match value {
            Some(v) => cmd.arg(format!("-D{name}={v}")),
            None => cmd.arg(format!("-D{name}")),
        };
    }
    for d in &opts.pp.include_dirs {
        cmd.arg("-I")
            .arg(std::path::absolute(d).unwrap_or_else(|_| d.clone()));
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
    let out = child
        .wait_with_output()
        .map_err(|e| fail(format!("{CLANG}: {e}")))?;
    // clang may stop reading early (a fatal error): its messages say why.
    let _ = writer.join();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let mut files = Files::new(dir, header);
    for line in stderr.lines() {
        // `-H`: one line per included file, `. path` (more dots: deeper).
        let dots = line.len() - line.trim_start_matches('.').len();
        if dots > 0 && line[dots..].starts_with(' ') {
            files.include(map, load, line[dots + 1..].trim())?;
        }
    }
    let errors = diagnostics(&stderr, map, &mut files, load)?;
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
        load: &mut super::pp::Loader<'_>,
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
}

/// clang's `file:line:col: error: message` lines as diagnostics.
fn diagnostics(
    stderr: &str,
    map: &mut SourceMap,
    files: &mut Files,
    load: &mut super::pp::Loader<'_>,
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
        out.push(Diagnostic::new(message.to_string(), span));
    }
    Ok(out)
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
