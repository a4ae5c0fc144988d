//! Parser, pretty-printer and diagnostics rendering: unit tests and round-trip properties.

use lang::ast::*;
use lang::diag::Diagnostic;
use lang::{erase_spans, line_col, parse, print_expr, print_kernel, print_stmt_head, render};
use proptest::prelude::*;

const KOGGE_STONE: &str = "// Kogge-Stone inclusive scan
kernel kogge_stone(const local T in[n], local T out[n]) launch(groups = 1, local_size = n) {
    out[tid] = in[tid];
    barrier();
    for (int offset = 1; offset < n; offset *= 2) {
        T temp;
        if (tid >= offset) temp = out[tid - offset];
        barrier();
        if (tid >= offset) out[tid] = temp ⊕ out[tid];
        barrier();
    }
}
";

const TREE_SCAN: &str = "/* up-sweep over a 2D tree */
kernel tree(local T tree[log2(n) + 1][n], int d) launch(local_size = n / 2) {
    uint i = tid;
    if (i < n >> d) tree[d][i] <+>= tree[d - 1][2 * i];
}
";

// ----- helpers -----

fn parse_ok(src: &str) -> Kernel {
    match parse(src) {
        Ok(k) => k,
        Err(d) => panic!(
            "unexpected parse errors for\n{src}\n{}",
            render(&d, "test.ksim", src, false)
        ),
    }
}

fn parse_err(src: &str) -> Vec<Diagnostic> {
    match parse(src) {
        Ok(k) => panic!(
            "expected errors for\n{src}\nparsed as\n{}",
            print_kernel(&k)
        ),
        Err(d) => {
            assert!(!d.is_empty());
            d
        }
    }
}

/// Parse `e` as the right-hand side of an assignment in a kernel.
fn parse_expr(e: &str) -> Expr {
    let src = format!("kernel k() {{ x = {e}; }}");
    let k = parse_ok(&src);
    match &k.body.stmts[0].kind {
        StmtKind::Assign { value, .. } => value.clone(),
        other => panic!("{other:?}"),
    }
}

/// Print with every operator application parenthesised, to check the tree's shape.
fn full(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Unary(op, x) => {
            let s = match op {
                UnOp::Neg => "-",
                UnOp::Not => "!",
                UnOp::BitNot => "~",
            };
            format!("({s}{})", full(x))
        }
        ExprKind::Cast(t, x) => format!("(({t:?}) {})", full(x)),
        ExprKind::Binary(op, l, r) => format!("({} {} {})", full(l), op.symbol(), full(r)),
        ExprKind::Cond(c, a, b) => format!("({} ? {} : {})", full(c), full(a), full(b)),
        ExprKind::Index { array, indices } => {
            let ix: Vec<String> = indices.iter().map(|i| format!("[{}]", full(i))).collect();
            format!("{}{}", array.name, ix.concat())
        }
        ExprKind::Call { func, args } => {
            let a: Vec<String> = args.iter().map(full).collect();
            format!("{}({})", func.name, a.join(", "))
        }
        _ => print_expr(e),
    }
}

fn messages(d: &[Diagnostic]) -> String {
    d.iter()
        .map(|d| d.message.as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

fn assert_error_mentions(src: &str, needle: &str) {
    let d = parse_err(src);
    assert!(
        d.iter().any(|d| d.message.contains(needle)),
        "no error mentioning {needle:?} for {src:?}; got:\n{}",
        messages(&d)
    );
}

// ----- parsing the examples -----

#[test]
fn parses_kogge_stone() {
    let k = parse_ok(KOGGE_STONE);
    assert_eq!(k.name.name, "kogge_stone");
    assert_eq!(k.params.len(), 2);
    match &k.params[0] {
        Param::Array {
            is_const,
            space,
            elem,
            name,
            dims,
            span,
        } => {
            assert!(*is_const);
            assert_eq!(*space, Space::Local);
            assert_eq!(*elem, TypeName::Generic);
            assert_eq!(name.name, "in");
            assert_eq!(dims.len(), 1);
            assert_eq!(&KOGGE_STONE[span.clone()], "const local T in[n]");
        }
        p => panic!("{p:?}"),
    }
    assert_eq!(k.launch.len(), 2);
    assert_eq!(k.launch[0].key, LaunchKey::Groups);
    assert_eq!(k.launch[1].key, LaunchKey::LocalSize);
    assert_eq!(&KOGGE_STONE[k.launch[1].span.clone()], "local_size = n");
    assert_eq!(k.body.stmts.len(), 3);
    assert_eq!(
        &KOGGE_STONE[k.body.stmts[0].span.clone()],
        "out[tid] = in[tid];"
    );
    assert_eq!(k.body.stmts[1].kind, StmtKind::Barrier(Fence::BOTH));
    let StmtKind::For {
        init,
        cond,
        step,
        body,
    } = &k.body.stmts[2].kind
    else {
        panic!()
    };
    assert_eq!(
        &KOGGE_STONE[init.as_ref().unwrap().span.clone()],
        "int offset = 1"
    );
    assert_eq!(
        &KOGGE_STONE[cond.as_ref().unwrap().span.clone()],
        "offset < n"
    );
    assert_eq!(
        &KOGGE_STONE[step.as_ref().unwrap().span.clone()],
        "offset *= 2"
    );
    let StmtKind::Block(b) = &body.kind else {
        panic!()
    };
    assert_eq!(b.stmts.len(), 5);
    let StmtKind::If { arms, .. } = &b.stmts[3].kind else {
        panic!()
    };
    let then = &arms[0].then;
    assert_eq!(
        &KOGGE_STONE[then.span.clone()],
        "out[tid] = temp ⊕ out[tid];"
    );
    let StmtKind::Assign { value, .. } = &then.kind else {
        panic!()
    };
    assert!(matches!(value.kind, ExprKind::Binary(BinOp::Combine, ..)));
    assert_eq!(&KOGGE_STONE[value.span.clone()], "temp ⊕ out[tid]");
    assert_eq!(
        k.span,
        KOGGE_STONE.find("kernel").unwrap()..KOGGE_STONE.len() - 1
    );
}

#[test]
fn parses_2d_tree() {
    let k = parse_ok(TREE_SCAN);
    let Param::Array { dims, .. } = &k.params[0] else {
        panic!()
    };
    assert_eq!(dims.len(), 2);
    assert_eq!(full(&dims[0]), "(log2(n) + 1)");
    assert!(
        matches!(&k.params[1], Param::Scalar { ty: TypeName::Int, name, .. } if name.name == "d")
    );
    let StmtKind::If { arms, els } = &k.body.stmts[1].kind else {
        panic!()
    };
    let (cond, then) = (&arms[0].cond, &arms[0].then);
    assert!(els.is_none());
    assert_eq!(full(cond), "(i < (n >> d))");
    let StmtKind::Assign { target, op, value } = &then.kind else {
        panic!()
    };
    assert_eq!(*op, AssignOp::Compound(BinOp::Combine));
    let LValue::Elem { array, indices } = target else {
        panic!()
    };
    assert_eq!(array.name, "tree");
    assert_eq!(indices.len(), 2);
    assert_eq!(full(value), "tree[(d - 1)][(2 * i)]");
    // The printer uses the canonical spelling.
    assert!(print_kernel(&k).contains("tree[d][i] ⊕= tree[d - 1][2 * i];"));
}

#[test]
fn prints_kogge_stone_canonically() {
    let k = parse_ok(KOGGE_STONE);
    let printed = print_kernel(&k);
    // The source is already canonical, apart from the comment.
    assert_eq!(
        printed,
        KOGGE_STONE.trim_start_matches("// Kogge-Stone inclusive scan\n")
    );
}

// ----- expressions -----

#[test]
fn precedence() {
    let cases = [
        ("a + b * c", "(a + (b * c))"),
        ("a * b + c", "((a * b) + c)"),
        ("a << b + c", "(a << (b + c))"),
        ("a & b == c", "(a & (b == c))"),
        ("a ? b : c ? d : e", "(a ? b : (c ? d : e))"),
        ("a ? b ? c : d : e", "(a ? (b ? c : d) : e)"),
        ("a || b ? c : d", "((a || b) ? c : d)"),
        ("-a[i]", "(-a[i])"),
        ("(int) x + 1", "(((Int) x) + 1)"),
        ("(float) -x", "((Float) (-x))"),
        ("(uint) a[i] * 2u", "(((Uint) a[i]) * 2u)"),
        ("a - b - c", "((a - b) - c)"),
        ("a - (b - c)", "(a - (b - c))"),
        ("a ⊕ b <+> c * d", "((a ⊕ b) ⊕ (c * d))"),
        ("a + b ⊕ c", "((a + b) ⊕ c)"),
        ("a || b && c", "(a || (b && c))"),
        ("a | b ^ c & d", "(a | (b ^ (c & d)))"),
        ("a < b == c >= d", "((a < b) == (c >= d))"),
        ("!a == ~b", "((!a) == (~b))"),
        ("- -a", "(-(-a))"),
        ("a % b / c * d", "(((a % b) / c) * d)"),
        ("a >> b << c", "((a >> b) << c)"),
        (
            "x != y && y <= z || w > v",
            "(((x != y) && (y <= z)) || (w > v))",
        ),
        ("min(a, b + 1) * log2(n)", "(min(a, (b + 1)) * log2(n))"),
        ("get_local_id(0) + f()", "(get_local_id(0) + f())"),
        ("((a))", "a"),
    ];
    for (src, expected) in cases {
        assert_eq!(full(&parse_expr(src)), expected, "{src}");
    }
}

#[test]
fn literals() {
    let cases: &[(&str, ExprKind)] = &[
        (
            "0",
            ExprKind::Int {
                value: 0,
                unsigned: false,
            },
        ),
        (
            "7u",
            ExprKind::Int {
                value: 7,
                unsigned: true,
            },
        ),
        (
            "7U",
            ExprKind::Int {
                value: 7,
                unsigned: true,
            },
        ),
        (
            "0x10",
            ExprKind::Int {
                value: 16,
                unsigned: false,
            },
        ),
        (
            "0xFFu",
            ExprKind::Int {
                value: 255,
                unsigned: true,
            },
        ),
        (
            "18446744073709551615u",
            ExprKind::Int {
                value: u64::MAX,
                unsigned: true,
            },
        ),
        ("1.5", ExprKind::Float(1.5)),
        ("1.0f", ExprKind::Float(1.0)),
        ("2.f", ExprKind::Float(2.0)),
        ("1e3", ExprKind::Float(1000.0)),
        ("2.5e-1f", ExprKind::Float(0.25)),
        (".5", ExprKind::Float(0.5)),
        ("true", ExprKind::Bool(true)),
        ("false", ExprKind::Bool(false)),
        ("identity", ExprKind::Identity),
        ("tid", ExprKind::Name("tid".into())),
    ];
    for (src, kind) in cases {
        assert_eq!(&parse_expr(src).kind, kind, "{src}");
    }
}

#[test]
fn expression_spans() {
    let src = "kernel k() { x = (a + b) * c[i]; }";
    let k = parse_ok(src);
    let StmtKind::Assign { value, .. } = &k.body.stmts[0].kind else {
        panic!()
    };
    assert_eq!(&src[value.span.clone()], "(a + b) * c[i]");
    let ExprKind::Binary(_, l, r) = &value.kind else {
        panic!()
    };
    assert_eq!(&src[l.span.clone()], "a + b");
    assert_eq!(&src[r.span.clone()], "c[i]");
    let ExprKind::Index { array, .. } = &r.kind else {
        panic!()
    };
    assert_eq!(&src[array.span.clone()], "c");
}

#[test]
fn minimal_parentheses() {
    let cases = [
        ("a + b * c", "a + b * c"),
        ("(a + b) * c", "(a + b) * c"),
        ("a - (b - c)", "a - (b - c)"),
        ("a + (b + c)", "a + (b + c)"),
        ("(a - b) - c", "a - b - c"),
        ("((a))", "a"),
        ("a & (b == c)", "a & b == c"),
        ("(a & b) == c", "(a & b) == c"),
        ("(a ? b : c) ? d : e", "(a ? b : c) ? d : e"),
        ("a ? (b ? c : d) : (e ? f : g)", "a ? b ? c : d : e ? f : g"),
        ("-(a + b)", "-(a + b)"),
        ("-(-a)", "- -a"),
        ("-(a[i])", "-a[i]"),
        ("((int) x) + 1", "(int) x + 1"),
        ("(int) (x + 1)", "(int) (x + 1)"),
        ("!(a < b)", "!(a < b)"),
        ("a <+> (b <+> c)", "a ⊕ (b ⊕ c)"),
    ];
    for (src, expected) in cases {
        assert_eq!(print_expr(&parse_expr(src)), expected, "{src}");
    }
    // Floats always print as floats and read back exactly.
    for x in [
        1.0f32,
        0.1,
        1e-7,
        3.4028235e38,
        1.0e20,
        0.0,
        16777217.0,
        1e-45,
    ] {
        let e = Expr {
            kind: ExprKind::Float(x),
            span: 0..0,
        };
        let s = print_expr(&e);
        assert!(s.contains(['.', 'e']), "{s}");
        assert_eq!(parse_expr(&s).kind, ExprKind::Float(x), "{s}");
    }
}

// ----- statements -----

#[test]
fn dangling_else_binds_to_nearest_if() {
    let k = parse_ok("kernel k() { if (a) if (b) x = 1; else x = 2; }");
    let StmtKind::If { arms, els } = &k.body.stmts[0].kind else {
        panic!()
    };
    assert!(els.is_none(), "else must bind to the inner if");
    let StmtKind::If { els: inner_els, .. } = &arms[0].then.kind else {
        panic!()
    };
    assert!(inner_els.is_some());

    // The printer keeps an outer else on the outer if with braces.
    let mut k = parse_ok("kernel k() { if (a) { if (b) x = 1; } else x = 2; }");
    erase_spans(&mut k);
    let printed = print_kernel(&k);
    let mut again = parse_ok(&printed);
    erase_spans(&mut again);
    assert_eq!(again, k, "{printed}");
}

#[test]
fn statements_and_steps() {
    let src = "kernel k(global int a[n][m], uint s) {
        int i = 0;
        bool b;
        float f = 1.5f;
        i++;
        i--;
        ++i;
        --i;
        a[i][0]++;
        a[i][1] <<= 2;
        while (i < n) { i += 1; }
        for (;;) barrier();
        for (i = 0; ; i++) {}
        for (; i < 3;) i *= 2;
        { { } }
        if (b) i = 1; else if (!b) i = 2; else { i = 3; }
    }";
    let k = parse_ok(src);
    let kinds: Vec<&StmtKind> = k.body.stmts.iter().map(|s| &s.kind).collect();
    assert!(matches!(
        kinds[3],
        StmtKind::Step {
            decrement: false,
            ..
        }
    ));
    assert!(matches!(
        kinds[4],
        StmtKind::Step {
            decrement: true,
            ..
        }
    ));
    assert!(matches!(
        kinds[5],
        StmtKind::Step {
            decrement: false,
            ..
        }
    ));
    assert!(matches!(
        kinds[6],
        StmtKind::Step {
            decrement: true,
            ..
        }
    ));
    assert!(matches!(
        kinds[8],
        StmtKind::Assign {
            op: AssignOp::Compound(BinOp::Shl),
            ..
        }
    ));
    assert!(matches!(
        kinds[10],
        StmtKind::For {
            init: None,
            cond: None,
            step: None,
            ..
        }
    ));
    let printed = print_kernel(&k);
    assert!(printed.contains("    for (;;) barrier();\n"), "{printed}");
    assert!(printed.contains("    for (i = 0;; i++) {}\n"), "{printed}");
    assert!(
        printed.contains("    for (; i < 3;) i *= 2;\n"),
        "{printed}"
    );
    assert!(
        printed.contains("    i++;\n    i--;\n    i++;\n    i--;\n"),
        "{printed}"
    );
    assert!(
        printed.contains(
            "    if (b) i = 1;\n    else if (!b) i = 2;\n    else {\n        i = 3;\n    }\n"
        ),
        "{printed}"
    );
    // Printing is idempotent.
    assert_eq!(print_kernel(&parse_ok(&printed)), printed);
}

#[test]
fn comments_are_ignored() {
    let src = "// leading comment
/* block
   comment */ kernel /* here */ k(/**/ int n // trailing
) {
    x = 1; // after
    /* before */ y = /* inside */ 2;
    // z = 3;
}
// end";
    let k = parse_ok(src);
    assert_eq!(k.body.stmts.len(), 2);
    assert_eq!(&src[k.body.stmts[1].span.clone()], "y = /* inside */ 2;");
    assert_error_mentions(
        "kernel k() { /* never closed }",
        "unterminated block comment",
    );
}

#[test]
fn stmt_heads() {
    let k = parse_ok(
        "kernel k() { while (offset < n) { x = 1; } if (a == b) x = 2; for (int i = 0; i < n; i++) {} x ⊕= y; barrier(); T t; }",
    );
    let heads: Vec<String> = k.body.stmts.iter().map(print_stmt_head).collect();
    assert_eq!(
        heads,
        [
            "while (offset < n)",
            "if (a == b)",
            "for (int i = 0; i < n; i++)",
            "x ⊕= y;",
            "barrier();",
            "T t;"
        ]
    );
}

// ----- errors -----

#[test]
fn unsupported_constructs_are_named() {
    let cases = [
        ("kernel k() { do { x++; } while (x < 3); }", "`do`"),
        ("kernel k() { switch (x) { case 1: y = 2; } }", "`switch`"),
        ("kernel k() { return; }", "`return`"),
        ("kernel k() { return x + 1; }", "`return`"),
        ("kernel k() { while (true) break; }", "`break`"),
        ("kernel k() { while (true) { continue; } }", "`continue`"),
        ("kernel k() { goto end; }", "`goto`"),
        ("kernel k() { x = *p; }", "pointer dereference"),
        ("kernel k() { x = &y; }", "address"),
        ("kernel k(global int *p) { }", "pointer parameters"),
        ("kernel k() { x = y = z; }", "chained assignments"),
        (
            "kernel k() { if (x = 1) y = 2; }",
            "assignment inside an expression",
        ),
        ("kernel k() { y = x++ + 1; }", "`++` inside an expression"),
        ("kernel k() { x + 1; }", "expression statements"),
        (
            "int helper(int x) { return x; } kernel k() { }",
            "helper functions",
        ),
        ("kernel k() { } kernel j() { }", "only one kernel per file"),
        ("kernel k() { double d = 1.0; }", "type `double`"),
        ("kernel k() { int a[4]; }", "array declarations"),
        ("kernel k() { int a, b; }", "several variables"),
        ("kernel k() { x = a[1][2][3]; }", "at most 2 dimensions"),
        ("kernel k() { x = (bool) y; }", "cast to `bool`"),
        // `barrier(x)` parses (a variable holding fence flags, checked later); two do not.
        (
            "kernel k() { barrier(CLK_LOCAL_MEM_FENCE, x); }",
            "`barrier` takes `local`, `global`",
        ),
        ("kernel k() { ; }", "empty statements"),
        (
            "kernel k() launch(threads = 4) { }",
            "unknown launch parameter `threads`",
        ),
        ("kernel k(local int a) { }", "has no size"),
        ("kernel k(int a[n]) { }", "address space"),
        ("kernel k() { x = sizeof(int); }", "`sizeof`"),
        ("kernel k() { x = 017; }", "octal"),
        ("kernel k() { x = \"s\"; }", "string"),
        ("#include <x.h>\nkernel k() { }", "preprocessor"),
        ("__kernel void k(__global int *p) { }", "top level"),
        ("", "expected a kernel definition"),
        ("kernel k() { x = 1.5q; }", "invalid suffix `q`"),
        ("kernel k() { x = 1e39; }", "out of range"),
    ];
    for (src, needle) in cases {
        assert_error_mentions(src, needle);
    }
}

#[test]
fn integer_overflow_has_span() {
    let src = "kernel k() { x = 18446744073709551616 + 1; }";
    let d = parse_err(src);
    assert_eq!(d.len(), 1, "{}", messages(&d));
    assert!(d[0].message.contains("does not fit in 64 bits"));
    assert_eq!(&src[d[0].span.clone()], "18446744073709551616");
    let src = "kernel k() { x = 0x10000000000000000u; }";
    let d = parse_err(src);
    assert_eq!(&src[d[0].span.clone()], "0x10000000000000000u");
}

#[test]
fn syntax_error_messages_are_readable() {
    let d = parse_err("kernel k() { x = 1 }");
    assert_eq!(d.len(), 1, "{}", messages(&d));
    assert_eq!(d[0].message, "expected `;`, found `}`");
    let d = parse_err("kernel k() { x = ; }");
    assert_eq!(d[0].message, "expected expression, found `;`");
    let d = parse_err("kernel k() { if (a b) x = 1; }");
    assert_eq!(d[0].message, "expected `)`, found identifier `b`");
}

#[test]
fn several_errors_are_reported() {
    // Two statements missing `;`.
    let d = parse_err("kernel k() {\n  a = 1\n  b = 2;\n  c = 3;\n  d = 4\n  e = 5;\n}");
    assert!(d.len() >= 2, "{}", messages(&d));
    // Two bad statements in different blocks, plus a bad parameter.
    let d = parse_err(
        "kernel k(int, local T a[n]) {\n  if (x) { y = ; }\n  while (y) { break; }\n  z = 1;\n}",
    );
    assert!(d.len() >= 3, "{}", messages(&d));
    // Errors come sorted by position.
    assert!(d.windows(2).all(|w| w[0].span.start <= w[1].span.start));
    // A lexer error and a parser error.
    let d = parse_err("kernel k() { x = @; y = ; }");
    assert_eq!(d.len(), 2, "{}", messages(&d));
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let deep = format!(
        "kernel k() {{ x = {}a{}; }}",
        "(".repeat(5000),
        ")".repeat(5000)
    );
    assert_error_mentions(&deep, "nested too deeply");
    let long = format!("kernel k() {{ x = a{}; }}", " + a".repeat(5000));
    assert_error_mentions(&long, "nested too deeply");
    let ifs = format!("kernel k() {{ {} x = 1; }}", "if (a) ".repeat(5000));
    assert_error_mentions(&ifs, "nested too deeply");
    let negs = format!("kernel k() {{ x = {}a; }}", "- ".repeat(5000));
    assert_error_mentions(&negs, "nested too deeply");
    // Reasonable nesting is fine.
    let ok = format!(
        "kernel k() {{ x = {}a{}; }}",
        "(".repeat(200),
        ")".repeat(200)
    );
    parse_ok(&ok);
}

/// Issue 13 item 7: `else if` chains are lists, at any length, with or without braces; the
/// nesting bound still counts what really nests (it once reset at every `;`).
#[test]
fn else_if_chains_of_any_length_parse_and_check() {
    for braces in [false, true] {
        let arm = |i: usize| {
            if braces {
                format!("if (x == {i}) {{ y = {i}; }}")
            } else {
                format!("if (x == {i}) y = {i};")
            }
        };
        let chain: Vec<String> = (0..15_000).map(arm).collect();
        let src = format!(
            "kernel k() {{ int x = 3; int y = 0; {} else y = -1; }}",
            chain.join(" else ")
        );
        let k = parse_ok(&src);
        let StmtKind::If { arms, els } = &k.body.stmts[2].kind else {
            panic!()
        };
        assert_eq!(arms.len(), 15_000);
        assert!(els.is_some());
        assert_eq!(&src[arms[1].span.clone()], arm(1));
        // The printer keeps the chain flat: one line per arm (two with braces).
        let printed = print_kernel(&k);
        assert!(printed.lines().count() < 2 * 15_000 + 10, "braces {braces}");
        let last = if braces {
            "} else if (x == 14999) {"
        } else {
            "else if (x == 14999) y = 14999;"
        };
        assert!(printed.contains(last), "braces {braces}");
        lang::check::check(&k).expect("well-typed");
    }
    // Blocks one after the other do not add up.
    let loops = format!("kernel k() {{ {} }}", "while (a) { x = 1; } ".repeat(3000));
    parse_ok(&loops);
    // A dangling `else` still goes to the innermost `if`, in a chain too.
    let k = parse_ok("kernel k() { if (a) if (b) x = 1; else if (c) x = 2; else x = 3; }");
    let StmtKind::If { arms, els } = &k.body.stmts[0].kind else {
        panic!()
    };
    assert!(els.is_none() && arms.len() == 1);
    let StmtKind::If { arms, els } = &arms[0].then.kind else {
        panic!()
    };
    assert!(els.is_some() && arms.len() == 2);
    // What nests is counted, across `;` and `}`: an `else` whose body is a `while` whose
    // body is an `if` ..., and `if`s whose then-branches are blocks holding `if`s.
    let stairs = format!(
        "kernel k() {{ {} x = 1; }}",
        "if (a) x = 1; else while (a) ".repeat(5000)
    );
    assert_error_mentions(&stairs, "nested too deeply");
    let blocks = format!(
        "kernel k() {{ {} x = 1; {} }}",
        "if (a) { ".repeat(5000),
        "} else x = 2; ".repeat(5000)
    );
    assert_error_mentions(&blocks, "nested too deeply");
}

// ----- rendering -----

#[test]
fn render_shows_location() {
    let src = "kernel k() {\n    x = 1\n}\n";
    let d = parse_err(src);
    let out = render(&d, "dir/scan.ksim", src, false);
    // A missing `;` is reported right after the statement it should end.
    assert!(out.contains("dir/scan.ksim:2:10"), "{out}");
    assert!(out.contains("expected `;`, found `}`"), "{out}");
    assert!(out.contains("x = 1"), "{out}");
    assert!(out.contains("found `}` here"), "{out}");
    // With colour, the location is still there literally.
    let out = render(&d, "dir/scan.ksim", src, true);
    assert!(out.contains("dir/scan.ksim:2:10"), "{out}");
    assert!(out.contains('\u{1b}'), "{out}");
}

#[test]
fn render_labels_and_notes() {
    let src = "kernel k() {\n    T x;\n    T x;\n}\n";
    let d = Diagnostic::new("`x` is declared twice", 26..31)
        .with_label(17..22, "first declared here")
        .with_note("rename one of them");
    let out = render(&[d], "a.ksim", src, false);
    assert!(out.contains("a.ksim:3:5"), "{out}");
    assert!(out.contains("first declared here"), "{out}");
    assert!(out.contains("rename one of them"), "{out}");
}

#[test]
fn render_never_panics_on_odd_spans() {
    let srcs = ["", "x", "kernel k() {\n}\n", "é⊕\n⊕é", "\n\n"];
    for src in srcs {
        for span in [
            0..0,
            0..1,
            src.len()..src.len(),
            1..2,
            std::ops::Range { start: 2, end: 1 },
            0..1000,
            999..1000,
        ] {
            let d = Diagnostic::new("m", span.clone())
                .with_label(span.clone(), "l")
                .with_note("n");
            let out = render(&[d], "f.ksim", src, false);
            let (line, col) = line_col(src, span.start);
            assert!(
                out.contains(&format!("f.ksim:{line}:{col}")),
                "{src:?} {span:?}: {out}"
            );
        }
    }
}

#[test]
fn line_col_is_one_based_in_chars() {
    let src = "ab\n⊕cd\n";
    assert_eq!(line_col(src, 0), (1, 1));
    assert_eq!(line_col(src, 1), (1, 2));
    assert_eq!(line_col(src, 2), (1, 3));
    assert_eq!(line_col(src, 3), (2, 1));
    assert_eq!(line_col(src, 3 + '⊕'.len_utf8()), (2, 2));
    assert_eq!(line_col(src, 4), (2, 1)); // inside ⊕
    assert_eq!(line_col(src, src.len()), (3, 1));
    assert_eq!(line_col(src, 1000), (3, 1));
    assert_eq!(line_col("", 0), (1, 1));
}

// ----- round trip: random trees -----

const BUILTINS: &[&str] = &[
    "tid",
    "gid",
    "group_id",
    "local_size",
    "num_groups",
    "groups",
    "get_local_id",
    "get_global_id",
    "get_group_id",
    "get_local_size",
    "get_num_groups",
    "log2",
    "min",
    "max",
];

fn mk_expr(kind: ExprKind) -> Expr {
    Expr { kind, span: 0..0 }
}

fn mk_stmt(kind: StmtKind) -> Stmt {
    Stmt { kind, span: 0..0 }
}

fn name_strategy() -> impl Strategy<Value = String> {
    "[a-z_][a-z0-9_]{0,5}".prop_filter("keyword or builtin", |s| {
        !lang::parse::is_reserved_word(s) && !BUILTINS.contains(&s.as_str())
    })
}

fn ident_strategy() -> impl Strategy<Value = Ident> {
    name_strategy().prop_map(|name| Ident { name, span: 0..0 })
}

fn type_strategy() -> impl Strategy<Value = TypeName> {
    prop_oneof![
        Just(TypeName::Int),
        Just(TypeName::Uint),
        Just(TypeName::Bool),
        Just(TypeName::Float),
        Just(TypeName::Generic),
    ]
}

const BINOPS: &[BinOp] = &[
    BinOp::Mul,
    BinOp::Div,
    BinOp::Rem,
    BinOp::Add,
    BinOp::Sub,
    BinOp::Shl,
    BinOp::Shr,
    BinOp::Lt,
    BinOp::Le,
    BinOp::Gt,
    BinOp::Ge,
    BinOp::Eq,
    BinOp::Ne,
    BinOp::BitAnd,
    BinOp::BitXor,
    BinOp::BitOr,
    BinOp::LogAnd,
    BinOp::LogOr,
    BinOp::Combine,
];

const COMPOUND: &[BinOp] = &[
    BinOp::Mul,
    BinOp::Div,
    BinOp::Rem,
    BinOp::Add,
    BinOp::Sub,
    BinOp::Shl,
    BinOp::Shr,
    BinOp::BitAnd,
    BinOp::BitXor,
    BinOp::BitOr,
    BinOp::Combine,
];

fn float_strategy() -> impl Strategy<Value = f32> {
    prop_oneof![
        (0u32..4096).prop_map(|x| x as f32 / 16.0),
        any::<f32>().prop_filter("finite, non-negative", |x| x.is_finite()
            && x.is_sign_positive()),
    ]
}

fn expr_strategy() -> impl Strategy<Value = Expr> {
    let leaf = prop_oneof![
        (any::<u64>(), any::<bool>())
            .prop_map(|(value, unsigned)| mk_expr(ExprKind::Int { value, unsigned })),
        (0u64..100, any::<bool>())
            .prop_map(|(value, unsigned)| mk_expr(ExprKind::Int { value, unsigned })),
        float_strategy().prop_map(|x| mk_expr(ExprKind::Float(x))),
        any::<bool>().prop_map(|b| mk_expr(ExprKind::Bool(b))),
        Just(mk_expr(ExprKind::Identity)),
        name_strategy().prop_map(|n| mk_expr(ExprKind::Name(n))),
        prop::sample::select(BUILTINS[..5].to_vec())
            .prop_map(|n| mk_expr(ExprKind::Name(n.to_string()))),
    ];
    leaf.prop_recursive(6, 64, 4, |inner| {
        prop_oneof![
            (
                ident_strategy(),
                prop::collection::vec(inner.clone(), 1..=2)
            )
                .prop_map(|(array, indices)| mk_expr(ExprKind::Index { array, indices })),
            (
                ident_strategy(),
                prop::collection::vec(inner.clone(), 0..=3)
            )
                .prop_map(|(func, args)| mk_expr(ExprKind::Call { func, args })),
            (
                prop_oneof![Just(UnOp::Neg), Just(UnOp::Not), Just(UnOp::BitNot)],
                inner.clone()
            )
                .prop_map(|(op, x)| mk_expr(ExprKind::Unary(op, Box::new(x)))),
            (prop::sample::select(BINOPS), inner.clone(), inner.clone())
                .prop_map(|(op, l, r)| mk_expr(ExprKind::Binary(op, Box::new(l), Box::new(r)))),
            (prop::sample::select(BINOPS), inner.clone(), inner.clone())
                .prop_map(|(op, l, r)| mk_expr(ExprKind::Binary(op, Box::new(l), Box::new(r)))),
            (inner.clone(), inner.clone(), inner.clone()).prop_map(|(c, a, b)| mk_expr(
                ExprKind::Cond(Box::new(c), Box::new(a), Box::new(b))
            )),
            (
                prop_oneof![
                    Just(TypeName::Int),
                    Just(TypeName::Uint),
                    Just(TypeName::Float)
                ],
                inner.clone()
            )
                .prop_map(|(t, x)| mk_expr(ExprKind::Cast(t, Box::new(x)))),
        ]
    })
}

fn lvalue_strategy() -> impl Strategy<Value = LValue> {
    prop_oneof![
        ident_strategy().prop_map(LValue::Var),
        (
            ident_strategy(),
            prop::collection::vec(expr_strategy(), 1..=2)
        )
            .prop_map(|(array, indices)| LValue::Elem { array, indices }),
    ]
}

fn simple_strategy() -> impl Strategy<Value = Stmt> {
    prop_oneof![
        (
            type_strategy(),
            ident_strategy(),
            prop::option::of(expr_strategy())
        )
            .prop_map(|(ty, name, init)| mk_stmt(StmtKind::Decl { ty, name, init })),
        (
            lvalue_strategy(),
            prop_oneof![
                Just(AssignOp::Set),
                prop::sample::select(COMPOUND).prop_map(AssignOp::Compound)
            ],
            expr_strategy()
        )
            .prop_map(|(target, op, value)| mk_stmt(StmtKind::Assign {
                target,
                op,
                value
            })),
        (lvalue_strategy(), any::<bool>())
            .prop_map(|(target, decrement)| mk_stmt(StmtKind::Step { target, decrement })),
    ]
}

fn ends_with_open_if(s: &Stmt) -> bool {
    match &s.kind {
        StmtKind::If { els: None, .. } => true,
        StmtKind::If { els: Some(e), .. } => ends_with_open_if(e),
        StmtKind::While { body, .. } | StmtKind::For { body, .. } => ends_with_open_if(body),
        _ => false,
    }
}

fn block(stmts: Vec<Stmt>) -> Block {
    Block { stmts, span: 0..0 }
}

fn stmt_strategy() -> impl Strategy<Value = Stmt> {
    let fence = prop_oneof![Just(Fence::BOTH), Just(Fence::LOCAL), Just(Fence::GLOBAL)];
    // A call statement (what `atomic_add(A[i], v);` parses to).
    let call = (
        ident_strategy(),
        ident_strategy(),
        expr_strategy(),
        prop::collection::vec(expr_strategy(), 0..3),
    )
        .prop_map(|(func, array, i, mut args)| {
            let elem = mk_expr(ExprKind::Index {
                array,
                indices: vec![i],
            });
            args.insert(0, elem);
            mk_stmt(StmtKind::Call(mk_expr(ExprKind::Call { func, args })))
        });
    let leaf = prop_oneof![
        4 => simple_strategy(),
        1 => fence.prop_map(|f| mk_stmt(StmtKind::Barrier(f))),
        1 => call,
    ];
    leaf.prop_recursive(4, 24, 4, |inner| {
        prop_oneof![
            (
                expr_strategy(),
                inner.clone(),
                prop::option::of(inner.clone())
            )
                .prop_map(|(cond, then, els)| {
                    // `if (a) if (b) s; else t;` cannot express an else on the outer if:
                    // such trees need a block around the then-branch.
                    let then = if els.is_some() && ends_with_open_if(&then) {
                        mk_stmt(StmtKind::Block(block(vec![then])))
                    } else {
                        then
                    };
                    // An `else` that is an `if` is more arms of one chain, as the
                    // parser builds it.
                    let mut arms = vec![IfArm {
                        cond,
                        then,
                        span: 0..0,
                    }];
                    let els = match els.map(|e| e.kind) {
                        Some(StmtKind::If { arms: more, els }) => {
                            arms.extend(more);
                            els
                        }
                        Some(kind) => Some(Box::new(mk_stmt(kind))),
                        None => None,
                    };
                    mk_stmt(StmtKind::If { arms, els })
                }),
            (expr_strategy(), inner.clone()).prop_map(|(cond, body)| mk_stmt(StmtKind::While {
                cond,
                body: Box::new(body)
            })),
            (
                prop::option::of(simple_strategy()),
                prop::option::of(expr_strategy()),
                prop::option::of(simple_strategy()),
                inner.clone()
            )
                .prop_map(|(init, cond, step, body)| mk_stmt(StmtKind::For {
                    init: init.map(Box::new),
                    cond,
                    step: step.map(Box::new),
                    body: Box::new(body)
                })),
            prop::collection::vec(inner.clone(), 0..4)
                .prop_map(|stmts| mk_stmt(StmtKind::Block(block(stmts)))),
        ]
    })
}

fn param_strategy() -> impl Strategy<Value = Param> {
    prop_oneof![
        (
            any::<bool>(),
            prop_oneof![Just(Space::Local), Just(Space::Global)],
            type_strategy(),
            ident_strategy(),
            prop::collection::vec(expr_strategy(), 1..=2)
        )
            .prop_map(|(is_const, space, elem, name, dims)| Param::Array {
                is_const,
                space,
                elem,
                name,
                dims,
                span: 0..0
            }),
        (type_strategy(), ident_strategy()).prop_map(|(ty, name)| Param::Scalar {
            ty,
            name,
            span: 0..0
        }),
    ]
}

fn kernel_strategy() -> impl Strategy<Value = Kernel> {
    (
        ident_strategy(),
        prop::collection::vec(param_strategy(), 0..4),
        prop::collection::vec(
            (
                prop_oneof![Just(LaunchKey::Groups), Just(LaunchKey::LocalSize)],
                expr_strategy(),
                prop_oneof![
                    2 => Just(Vec::new()),
                    1 => prop::collection::vec(expr_strategy(), 1..3),
                ],
            )
                .prop_map(|(key, value, more)| LaunchItem {
                    key,
                    value,
                    more,
                    span: 0..0,
                }),
            0..3,
        ),
        prop::collection::vec(stmt_strategy(), 0..6),
    )
        .prop_map(|(name, params, launch, stmts)| Kernel {
            name,
            params,
            launch,
            body: block(stmts),
            span: 0..0,
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn print_then_parse_round_trips(k in kernel_strategy()) {
        let src = print_kernel(&k);
        let mut parsed = match parse(&src) {
            Ok(p) => p,
            Err(d) => panic!("{src}\n{}", render(&d, "gen.ksim", &src, false)),
        };
        erase_spans(&mut parsed);
        prop_assert_eq!(&parsed, &k, "printed as\n{}", src);
        prop_assert_eq!(print_kernel(&parsed), src);
    }

    /// The type checker accepts or rejects every random syntax tree (names mostly
    /// unresolved) with diagnostics, never a panic; `check_never_panics` below generates
    /// well-scoped kernels that reach the typing rules.
    #[test]
    fn check_never_panics_on_random_trees(k in kernel_strategy()) {
        if let Err(diags) = lang::check::check(&k) {
            prop_assert!(!diags.is_empty());
            prop_assert!(diags.iter().all(|d| !d.message.is_empty()));
        }
    }

    #[test]
    fn expressions_round_trip(e in expr_strategy()) {
        let printed = print_expr(&e);
        let mut k = parse_ok(&format!("kernel k() {{ x = {printed}; }}"));
        erase_spans(&mut k);
        let StmtKind::Assign { value, .. } = &k.body.stmts[0].kind else { panic!() };
        prop_assert_eq!(value, &e, "printed as {}", printed);
    }

    #[test]
    fn parse_never_panics_on_arbitrary_text(s in any::<String>()) {
        let r = parse(&s);
        if let Err(d) = r {
            let _ = render(&d, "fuzz.ksim", &s, false);
        }
    }

    #[test]
    fn parse_never_panics_on_token_soup(
        s in "([a-z]{1,3}|[0-9]{1,3}|0x[0-9a-f]{0,3}|[.][0-9]|[(){}\\[\\];,]|[-+*/%<>=!&|^~?:]{1,3}|<[+]>|⊕|kernel|launch|local|global|const|if|else|while|for|barrier|int|uint|float|bool|T|return|do|/[*]|[*]/|//|\n| )*"
    ) {
        if let Err(d) = parse(&s) {
            let _ = render(&d, "fuzz.ksim", &s, true);
        }
    }

    #[test]
    fn parse_never_panics_on_mutated_kernels(
        edits in prop::collection::vec((any::<prop::sample::Index>(), 0usize..4, 0usize..12, 0usize..8), 1..6)
    ) {
        const SNIPPETS: &[&str] = &[
            "(", ")", "{", "}", "[", "]", ";", ",", "=", "⊕", "<+>", "if", "else", "for (",
            "x++", "*", "&", "return", "kernel", "/*", "\"", "1e", "0x", "é", "\n", "? :",
        ];
        let mut s = if edits.len() % 2 == 0 { KOGGE_STONE.to_string() } else { TREE_SCAN.to_string() };
        for (at, kind, len, snippet) in edits {
            let mut pos = at.index(s.len() + 1);
            while !s.is_char_boundary(pos) { pos -= 1; }
            let mut end = (pos + len).min(s.len());
            while !s.is_char_boundary(end) { end -= 1; }
            match kind {
                0 => { s.replace_range(pos..end, ""); }
                1 => s.insert_str(pos, SNIPPETS[(snippet + len) % SNIPPETS.len()]),
                2 => { let dup = s[pos..end].to_string(); s.insert_str(end, &dup); }
                _ => s.replace_range(pos..end, SNIPPETS[snippet % SNIPPETS.len()]),
            }
        }
        match parse(&s) {
            Ok(k) => {
                // Whatever parses must print and re-parse to the same tree.
                let printed = print_kernel(&k);
                let mut a = parse(&printed).expect("printed kernel re-parses");
                let mut b = k;
                erase_spans(&mut a);
                erase_spans(&mut b);
                prop_assert_eq!(a, b);
            }
            Err(d) => {
                let _ = render(&d, "fuzz.ksim", &s, false);
            }
        }
    }
}

// Well-scoped random kernels for the checker: every name is declared (parameters of each
// element type, `T` arrays, variables of each type), so the checker gets past name
// resolution to its typing and genericity rules (Definition 4.2). Expressions are mostly
// well-typed; one in a few is a sub-expression of another type, a comparison or an index
// of `T`, or a `T` value in a condition, so that both verdicts occur.

/// (type, generator depth) -> source text of an expression, mostly of that type.
fn typed_expr(ty: &'static str, depth: u32) -> BoxedStrategy<String> {
    let leaf: BoxedStrategy<String> = match ty {
        "int" => prop::sample::select(vec!["x", "tid", "n", "1", "a[tid]", "a[x % n]", "gid"])
            .prop_map(String::from)
            .boxed(),
        "uint" => prop::sample::select(vec!["u", "2u", "ua[tid]", "(uint)x"])
            .prop_map(String::from)
            .boxed(),
        "float" => prop::sample::select(vec!["f", "0.5f", "fa[tid]", "(float)x"])
            .prop_map(String::from)
            .boxed(),
        "bool" => prop::sample::select(vec!["p", "true", "ba[tid]", "tid < n"])
            .prop_map(String::from)
            .boxed(),
        _ => prop::sample::select(vec!["t", "in[tid]", "out[tid]", "out[x % n]"])
            .prop_map(String::from)
            .boxed(),
    };
    if depth == 0 {
        return leaf;
    }
    let sub = move |t: &'static str| typed_expr(t, depth - 1);
    let other = prop::sample::select(vec!["int", "uint", "float", "bool", "T"]);
    let mistyped = other.prop_flat_map(move |t| typed_expr(t, 0)).boxed();
    let composite: BoxedStrategy<String> = match ty {
        "int" | "uint" | "float" => {
            let ops = prop::sample::select(vec!["+", "-", "*", "/", "%", "<<", "&"]);
            (sub(ty), ops, sub(ty))
                .prop_map(|(a, o, b)| format!("({a} {o} {b})"))
                .boxed()
        }
        "bool" => {
            let cmp = prop::sample::select(vec!["<", "==", "!="]);
            let num = prop::sample::select(vec!["int", "uint", "float"]);
            prop_oneof![
                (num, cmp).prop_flat_map(move |(t, c)| {
                    (sub(t), sub(t)).prop_map(move |(a, b)| format!("({a} {c} {b})"))
                }),
                (sub("bool"), sub("bool")).prop_map(|(a, b)| format!("({a} && !{b})")),
                // Genericity: a `T` value compared (rejected: T is opaque).
                (sub("T"), sub("T")).prop_map(|(a, b)| format!("({a} == {b})")),
            ]
            .boxed()
        }
        _ => (sub("T"), sub("T"))
            .prop_map(|(a, b)| format!("({a} ⊕ {b})"))
            .boxed(),
    };
    prop_oneof![4 => leaf, 3 => composite, 1 => mistyped].boxed()
}

fn typed_stmt(depth: u32) -> BoxedStrategy<String> {
    let assign = prop::sample::select(vec![
        ("x", "int"),
        ("a[tid]", "int"),
        ("u", "uint"),
        ("f", "float"),
        ("fa[tid]", "float"),
        ("p", "bool"),
        ("t", "T"),
        ("out[tid]", "T"),
        // Genericity: an index computed from a `T` array is rejected.
        ("out[(int)in[tid]]", "T"),
    ])
    .prop_flat_map(|(lhs, ty)| typed_expr(ty, 2).prop_map(move |e| format!("{lhs} = {e};")));
    let leaf = prop_oneof![6 => assign, 1 => Just("barrier();".to_string())].boxed();
    if depth == 0 {
        return leaf;
    }
    prop_oneof![
        3 => leaf,
        1 => (typed_expr("bool", 1), typed_stmt(depth - 1), typed_stmt(depth - 1))
            .prop_map(|(c, a, b)| format!("if ({c}) {{ {a} }} else {{ {b} }}")),
        1 => typed_stmt(depth - 1)
            .prop_map(|s| format!("for (int i = 0; i < 2; i++) {{ {s} }}")),
        // A `T` condition: rejected by genericity.
        1 => typed_stmt(depth - 1).prop_map(|s| format!("if (t) {{ {s} }}")),
    ]
    .boxed()
}

fn scoped_kernel() -> impl Strategy<Value = String> {
    prop::collection::vec(typed_stmt(2), 1..6).prop_map(|body| {
        format!(
            "kernel g(const global T in[n], global T out[n], global int a[n], \
             global uint ua[n], global float fa[n], global bool ba[n])\n{{\n\
             int x = 0; uint u = 0u; float f = 0.0f; bool p = false; T t;\n{}\n}}\n",
            body.join("\n")
        )
    })
}

/// The checker on well-scoped kernels: never a panic, a message with every rejection, and
/// over the cases both verdicts, generic kernels accepted, and rejections that come from
/// the typing and genericity rules rather than from name resolution.
#[test]
fn check_never_panics() {
    use proptest::test_runner::{Config, RngSeed, TestRunner};
    use std::cell::RefCell;
    let seen = RefCell::new((0u32, 0u32, 0u32, Vec::<String>::new()));
    let mut runner = TestRunner::new(Config {
        cases: 400,
        rng_seed: RngSeed::Fixed(20261126),
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(&scoped_kernel(), |src| {
            let k = parse(&src).unwrap_or_else(|d| panic!("{src}\n{d:?}"));
            let mut s = seen.borrow_mut();
            match lang::check::check(&k) {
                Ok(core) => {
                    s.0 += 1;
                    if core.generic {
                        s.1 += 1;
                    }
                }
                Err(diags) => {
                    prop_assert!(!diags.is_empty());
                    prop_assert!(diags.iter().all(|d| !d.message.is_empty()));
                    s.2 += 1;
                    s.3.extend(diags.iter().map(|d| d.message.clone()));
                }
            }
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
    let (accepted, generic, rejected, messages) = seen.into_inner();
    let distinct: std::collections::BTreeSet<&String> = messages.iter().collect();
    eprintln!(
        "check_never_panics: {accepted} accepted ({generic} generic), {rejected} rejected \
         with {} distinct messages",
        distinct.len()
    );
    assert!(accepted >= 40, "only {accepted} of 400 kernels accepted");
    assert!(
        generic >= 20,
        "only {generic} accepted kernels generic in T"
    );
    assert!(rejected >= 40, "only {rejected} of 400 kernels rejected");
    let unresolved = messages
        .iter()
        .filter(|m| m.contains("not declared") || m.contains("unknown"))
        .count();
    assert_eq!(
        unresolved, 0,
        "name errors in well-scoped kernels: {messages:?}"
    );
    // Both kinds of rule reject: plain typing (operand types) and genericity (`T` opaque).
    let generic_rule = distinct.iter().filter(|m| m.contains("type `T`")).count();
    let typing_rule = distinct
        .iter()
        .filter(|m| m.contains("needs integer"))
        .count();
    assert!(
        generic_rule >= 5,
        "the genericity rules were hardly reached: {distinct:?}"
    );
    assert!(
        typing_rule >= 1,
        "the operand typing rules were not reached: {distinct:?}"
    );
}
