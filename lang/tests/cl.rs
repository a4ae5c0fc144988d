//! The OpenCL C front end's reading of a file through clang-15 (`lang::cl::parse_unit`):
//! `-D` and `-I` reach clang, included files join the source map so that spans locate in
//! them, clang's errors are diagnostics at the user's line, the statement forms read, and
//! a property: lowering whatever clang accepts of random kernel bodies never panics.

use lang::cl::options::PpOptions;
use lang::cl::{ast::Unit, ClOptions, SourceMap};
use lang::diag::Diagnostic;
use proptest::prelude::*;
use std::path::{Path, PathBuf};

/// Parses `src` as the file `path` with `pp`'s options, includes read from disk.
fn parse_at(path: &Path, src: &str, pp: PpOptions) -> (Result<Unit, Vec<Diagnostic>>, SourceMap) {
    let mut map = SourceMap::new(path, src.to_string());
    let opts = ClOptions { pp, kernel: None };
    let unit = lang::cl::parse_unit(&mut map, &opts, &mut |p: &Path| lang::cl::read_file(p));
    (unit, map)
}

fn parse_src(src: &str) -> Result<Unit, String> {
    parse_at(Path::new("main.cl"), src, PpOptions::default())
        .0
        .map_err(|d| d[0].message.clone())
}

/// A fresh folder for this test process.
fn folder(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ksim-cl-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn defines_and_include_dirs_reach_clang_and_included_files_join_the_map() {
    let dir = folder("include");
    std::fs::create_dir_all(dir.join("inc")).unwrap();
    std::fs::write(
        dir.join("inc/defs.h"),
        "#define TYPE int\nint from_header(int v) { return v + 1; }\n",
    )
    .unwrap();
    std::fs::write(dir.join("local.h"), "#define OP +\n").unwrap();
    let src = "#include \"local.h\"\n#include \"defs.h\"\n\
               kernel void k(global TYPE *a) { a[0] = WIDTH OP from_header(ON); }\n";
    let pp = PpOptions {
        defines: vec![("WIDTH".into(), Some("4".into())), ("ON".into(), None)],
        include_dirs: vec![dir.join("inc")],
    };
    let (unit, map) = parse_at(&dir.join("k.cl"), src, pp);
    let unit = unit.unwrap_or_else(|d| panic!("{}", d[0].message));
    assert_eq!(lang::cl::lower::kernels(&unit).len(), 1);
    let names: Vec<_> = map.files.iter().map(|f| f.path.clone()).collect();
    assert_eq!(map.files.len(), 3, "{names:?}");
    assert!(names.iter().any(|p| p.ends_with("inc/defs.h")), "{names:?}");
    // Without `-I`, clang does not find defs.h: an error at the `#include` line.
    let (unit, map) = parse_at(&dir.join("k.cl"), src, PpOptions::default());
    let d = unit.unwrap_err();
    assert!(
        d[0].message.contains("'defs.h' file not found"),
        "{}",
        d[0].message
    );
    assert_eq!(lang::line_col(&map.files[0].text, d[0].span.start), (2, 10));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn an_error_in_an_included_file_locates_in_that_file() {
    let dir = folder("include-error");
    std::fs::write(
        dir.join("h.h"),
        "int ok(void);\nint bad(void) { return nowhere; }\n",
    )
    .unwrap();
    let (unit, map) = parse_at(
        &dir.join("k.cl"),
        "#include \"h.h\"\nkernel void k(global int *a) { a[0] = 1; }\n",
        PpOptions::default(),
    );
    let d = unit.unwrap_err();
    let (f, off) = map.locate(d[0].span.start);
    assert!(f.path.ends_with("h.h"), "{}", f.path.display());
    assert_eq!(&f.text[off..off + 7], "nowhere");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn parses_the_c_statement_forms_and_declarations() {
    let src = r#"
        typedef unsigned int u32;
        typedef __global float *fptr;
        int helper(const int x, __local int *p) { return x + p[0]; }
        __kernel __attribute__((reqd_work_group_size(64, 1, 1)))
        void k(__global u32 *restrict a, fptr b, unsigned n, signed char c) {
            __local int tile[64][2];
            int i = 0, j = 0, arr[3] = {1, 2, 3};
            unsigned long big;
            for (int q = 0; q < n; q++, j--) { if (q) continue; else break; }
            do { i += 2; } while (i < 10);
            while (1) { break; }
            switch (i) { case 0: case 1: j = 1; break; default: j = (int)b[0]; }
            i = j > 0 ? i++ : --j, i <<= 1;
            a[i] = sizeof(int) + sizeof i;
            __assert(i >= 0);
            barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
            return;
        }
    "#;
    let u = parse_src(src).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(lang::cl::lower::kernels(&u).len(), 1);
}

#[test]
fn syntax_errors_are_clangs_at_the_users_line() {
    for (src, msg, at) in [
        (
            "kernel void k() {\n int x = ; }",
            "expected expression",
            (2, 10),
        ),
        (
            "kernel void k() {\n if x) {} }",
            "expected '(' after 'if'",
            (2, 5),
        ),
        ("kernel void k() {", "expected '}'", (1, 18)),
    ] {
        let (unit, map) = parse_at(Path::new("m.cl"), src, PpOptions::default());
        let d = unit.unwrap_err();
        assert!(d[0].message.contains(msg), "{src}: {}", d[0].message);
        assert_eq!(
            lang::line_col(&map.files[0].text, d[0].span.start),
            at,
            "{src}"
        );
    }
}

const WORDS: &[&str] = &[
    "int",
    "uint",
    "float",
    "const",
    "if",
    "else",
    "for",
    "while",
    "do",
    "switch",
    "case",
    "default",
    "break",
    "continue",
    "return",
    "sizeof",
    "x",
    "A",
    "n",
    "get_local_id",
    "barrier",
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    ";",
    ",",
    "=",
    "+=",
    "++",
    "--",
    "+",
    "-",
    "*",
    "/",
    "&",
    "&&",
    "||",
    "?",
    ":",
    "<",
    "<<",
    ".",
    "!",
    "~",
    "0",
    "1",
    "2.5f",
    "0x10u",
    "int4",
    "goto",
    "L:",
];

proptest! {
    // clang takes about 0.1 s a file: few cases, each a kernel around a random body.
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Whatever clang accepts lowers or fails with a diagnostic; nothing panics.
    #[test]
    fn random_kernel_bodies_never_panic(ix in prop::collection::vec(0..WORDS.len(), 0..40)) {
        let body: Vec<&str> = ix.iter().map(|&i| WORDS[i]).collect();
        let src = format!(
            "kernel void k(__global int *A, int n) {{ int x = 0; {} }}",
            body.join(" ")
        );
        if let Ok(u) = parse_src(&src) {
            let _ = lang::cl::lower::lower(&u, None).map(|(k, _)| lang::check::check(&k));
        }
    }
}
