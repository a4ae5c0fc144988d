//! The OpenCL C front end's preprocessor and parser: each directive, `#` and `##`, error
//! locations in the original file, the statement forms, and a property: parsing never
//! panics on random token streams.

use lang::cl::lex::Token;
use lang::cl::pp::{preprocess, PpOptions};
use lang::cl::{parse, SourceMap};
use proptest::prelude::*;
use std::path::Path;

fn pp_with(src: &str, defines: &[(&str, Option<&str>)]) -> Result<(Vec<Token>, SourceMap), String> {
    let mut map = SourceMap::new("main.cl", src.to_string());
    let opts = PpOptions {
        defines: defines
            .iter()
            .map(|(n, v)| (n.to_string(), v.map(String::from)))
            .collect(),
        include_dirs: Vec::new(),
    };
    let toks = preprocess(&mut map, &opts, &mut |p: &Path| lang::cl::read_file(p))
        .map_err(|d| d[0].message.clone())?
        .tokens;
    Ok((toks, map))
}

/// The preprocessed text, tokens joined by single spaces.
fn pp(src: &str) -> String {
    pp_d(src, &[])
}

fn pp_d(src: &str, defines: &[(&str, Option<&str>)]) -> String {
    let (toks, _) = pp_with(src, defines).unwrap_or_else(|e| panic!("{e}"));
    toks.iter()
        .map(|t| t.text.to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn object_and_function_like_macros_expand() {
    assert_eq!(pp("#define N 64\nint a[N];"), "int a [ 64 ] ;");
    assert_eq!(
        pp("#define SQ(x) ((x) * (x))\nSQ(a + 1)"),
        "( ( a + 1 ) * ( a + 1 ) )"
    );
    assert_eq!(pp("#define F() 7\nF()"), "7");
    // A function-like macro name without `(` is left alone.
    assert_eq!(pp("#define F(x) x\nint F;"), "int F ;");
    // Rescanning, and no recursion through a macro's own name.
    assert_eq!(pp("#define A B\n#define B A\nA"), "A");
    assert_eq!(pp("#define f(x) x + f(x)\nf(1)"), "1 + f ( 1 )");
    assert_eq!(pp("#define ID(x) x\n#define TWO ID(2)\nTWO"), "2");
    assert_eq!(pp("#define V(...) f(__VA_ARGS__)\nV(1, 2)"), "f ( 1 , 2 )");
}

#[test]
fn stringify_and_paste() {
    assert_eq!(pp("#define S(x) #x\nS(a + b)"), "\"a + b\"");
    assert_eq!(
        pp("#define CAT(a, b) a ## b\nCAT(foo, bar) CAT(1, 2)"),
        "foobar 12"
    );
    // An empty argument is a placemarker: pasting with it gives the other side.
    assert_eq!(pp("#define CAT(a, b) a ## b\nCAT(, x) CAT(y, )"), "x y");
    // Arguments next to ## are not expanded first.
    assert_eq!(pp("#define N 4\n#define CAT(a, b) a ## b\nCAT(N, 1)"), "N1");
    assert!(pp_with("#define CAT(a, b) a ## b\nCAT(+, /)", &[])
        .unwrap_err()
        .contains("pasting"));
}

#[test]
fn conditionals_undef_and_command_line_defines() {
    let src = "#if defined(A) && A > 2\nbig\n#elif defined B\nb\n#else\nnone\n#endif";
    assert_eq!(pp_d(src, &[("A", Some("3"))]), "big");
    assert_eq!(pp_d(src, &[("A", Some("1")), ("B", None)]), "b");
    assert_eq!(pp(src), "none");
    assert_eq!(pp("#ifdef X\nx\n#endif\n#ifndef X\ny\n#endif"), "y");
    assert_eq!(pp("#define X 1\n#undef X\n#ifdef X\nx\n#endif\nX"), "X");
    assert_eq!(
        pp("#if (1 << 4) == 16 && !0 && 7 / 2 == 3 && (0 ? 1 : 2) == 2\nok\n#endif"),
        "ok"
    );
    // Nested false branches are skipped whole, directives included.
    assert_eq!(pp("#if 0\n#if 1\n#error no\n#endif\n#endif\nok"), "ok");
    assert_eq!(pp("#if __OPENCL_VERSION__ >= 120\nok\n#endif"), "ok");
    assert_eq!(
        pp("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\nok"),
        "ok"
    );
}

#[test]
fn directive_errors_point_into_the_file() {
    for (src, msg) in [
        ("int x;\n#endif\n", "#endif without #if"),
        ("#if 1\nint x;\n", "#if without #endif"),
        ("#if 1 / 0\n#endif", "division by zero"),
        ("#error stop here\n", "#error stop here"),
        ("#include \"nowhere.h\"\n", "not found"),
        ("#bogus\n", "unknown directive"),
        ("#define F(a, b) a\nF(1)\n", "takes 2 arguments"),
    ] {
        let e = pp_with(src, &[]).unwrap_err();
        assert!(e.contains(msg), "{src:?}: {e}");
    }
    let mut map = SourceMap::new("m.cl", "int a;\n\n  #if 1\n".into());
    let d = preprocess(&mut map, &PpOptions::default(), &mut |p: &Path| {
        lang::cl::read_file(p)
    })
    .unwrap_err();
    assert_eq!(lang::line_col(&map.files[0].text, d[0].span.start), (3, 3));
}

#[test]
fn tokens_keep_their_original_spans_through_macros() {
    let src = "#define ADD(a, b) (a + b)\nint x = ADD(first, second);";
    let (toks, _) = pp_with(src, &[]).unwrap();
    let first = toks.iter().find(|t| &*t.text == "first").unwrap();
    assert_eq!(
        &src[first.span.clone()],
        "first",
        "an argument keeps its own span"
    );
    let plus = toks.iter().find(|t| &*t.text == "+").unwrap();
    assert_eq!(
        &src[plus.span.clone()],
        "ADD(first, second)",
        "a body token: the macro use"
    );
}

#[test]
fn includes_are_found_next_to_the_file_and_with_dash_i() {
    let dir = std::env::temp_dir().join(format!("ksim-cl-include-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("inc")).unwrap();
    std::fs::write(
        dir.join("inc/defs.h"),
        "#define TYPE int\nfloat from_header;\n",
    )
    .unwrap();
    std::fs::write(dir.join("local.h"), "#define OP +\n").unwrap();
    let main = dir.join("k.cl");
    let mut map = SourceMap::new(
        &main,
        "#include \"local.h\"\n#include \"defs.h\"\nTYPE OP".into(),
    );
    let opts = PpOptions {
        defines: Vec::new(),
        include_dirs: vec![dir.join("inc")],
    };
    let toks = preprocess(&mut map, &opts, &mut |p: &Path| lang::cl::read_file(p)).unwrap();
    let text: Vec<_> = toks.tokens.iter().map(|t| t.text.to_string()).collect();
    assert_eq!(text, ["float", "from_header", ";", "int", "+"]);
    assert_eq!(map.files.len(), 3);
    // A token of an included file locates in that file; a macro's token at its use.
    let (f, off) = map.locate(toks.tokens[0].span.start);
    assert!(f.path.ends_with("defs.h"));
    assert_eq!(&f.text[off..off + 5], "float");
    let (f, off) = map.locate(toks.tokens[3].span.start);
    assert!(f.path.ends_with("k.cl"));
    assert_eq!(&f.text[off..off + 4], "TYPE");
    std::fs::remove_dir_all(&dir).ok();
}

fn parse_src(src: &str) -> Result<lang::cl::ast::Unit, String> {
    let (toks, _) = pp_with(src, &[])?;
    parse::parse(&toks).map_err(|d| d[0].message.clone())
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
            int i = 0, j, arr[3] = {1, 2, 3};
            unsigned long long big;
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
fn syntax_errors_name_what_was_expected() {
    for (src, msg) in [
        (
            "kernel void k() { int x = ; }",
            "expected an expression, found `;`",
        ),
        ("kernel void k() { if x) {} }", "expected `(`"),
        ("kernel void k() { do {} until (1); }", "expected `while`"),
        ("kernel void k() {", "expected `}`, found end of input"),
    ] {
        let e = parse_src(src).unwrap_err();
        assert!(e.contains(msg), "{src}: {e}");
    }
    // The parser's nesting bound assumes the large stack `ksim` runs it on (src/main.rs).
    let deep = format!(
        "kernel void k() {{ int x = {}1{}; }}",
        "(".repeat(10_000),
        ")".repeat(10_000)
    );
    let e = std::thread::Builder::new()
        .stack_size(1 << 30)
        .spawn(move || parse_src(&deep).unwrap_err())
        .expect("a thread")
        .join()
        .expect("no overflow");
    assert!(e.contains("nested more than"), "{e}");
}

const WORDS: &[&str] = &[
    "int",
    "uint",
    "float",
    "__kernel",
    "kernel",
    "void",
    "__global",
    "__local",
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
    "typedef",
    "struct",
    "sizeof",
    "x",
    "y",
    "A",
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
    "->",
    "!",
    "~",
    "0",
    "1",
    "2.5f",
    "0x10u",
    "'a'",
    "\"s\"",
    "__attribute__",
    "unsigned",
    "long",
    "int4",
    "#",
    "##",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    /// Any token stream parses or fails with a diagnostic; nothing panics, and lowering
    /// what parses never panics either.
    #[test]
    fn parsing_random_token_streams_never_panics(ix in prop::collection::vec(0..WORDS.len(), 0..60)) {
        let src: Vec<&str> = ix.iter().map(|&i| WORDS[i]).collect();
        let src = src.join(" ");
        if let Ok((toks, _)) = pp_with(&src, &[]) {
            if let Ok(u) = parse::parse(&toks) {
                let _ = lang::cl::lower::lower(&u, None).map(|(k, _)| lang::check::check(&k));
            }
        }
    }

    /// Kernel-shaped random bodies: the same, with statements inside a kernel.
    #[test]
    fn random_kernel_bodies_never_panic(ix in prop::collection::vec(0..WORDS.len(), 0..40)) {
        let body: Vec<&str> = ix.iter().map(|&i| WORDS[i]).collect();
        let src = format!("kernel void k(__global int *A, int n) {{ {} }}", body.join(" "));
        if let Ok((toks, _)) = pp_with(&src, &[]) {
            if let Ok(u) = parse::parse(&toks) {
                let _ = lang::cl::lower::lower(&u, None).map(|(k, _)| lang::check::check(&k));
            }
        }
    }
}
