//! clang as the C front end (lang/src/cl/clang): kernels load and run, clang's errors point
//! at the user's token, included files are in messages, and a missing clang is a clear
//! usage error.
//! Skipped when Debian's `clang-15` is not installed (scripts/test.sh installs it).

mod common;
use common::{has_clang, ksim_in};

use std::process::Command;

const SHIFT: &str = "#define N 4
typedef struct { int a; float b[2]; } S;
__kernel void shift(__global float4 *p, __local int *l, uint n) {
  size_t i = get_global_id(0);
  S s; s.a = INT_MAX; s.b[1] = 0.5f;
  int x = (int)p[i].x + N;
  for (int j = 0; j < n; j++) { x += j; }
  l[get_local_id(0)] = x + (s.a == INT_MAX);
  barrier(CLK_LOCAL_MEM_FENCE);
  p[i].yz = (float2)(l[(get_local_id(0) + 1) % get_local_size(0)], s.b[1]);
  p[i].w = (float)(n * 2u);
}
";

/// The values worked out by hand: `x = 4i + N + (0 + 1 + 2)`, `l[lid] = x + 1`; `y` is the
/// next work-item's `l` in the group, `z` and `w` constants.
#[test]
fn a_kernel_runs_with_the_values_c_gives() {
    if !has_clang() {
        return;
    }
    let d = common::tmp("clang-same");
    std::fs::write(d.join("k.cl"), SHIFT).unwrap();
    let args = [
        "run",
        "k.cl",
        "--global",
        "8",
        "--local",
        "4",
        "--input",
        "p=iota:32",
        "--input",
        "l=zeros:4",
        "--arg",
        "n=3",
    ];
    let o = ksim_in(&d, &args);
    let t = common::text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(
        t.contains(
            "p           = 0 12 0.5 6 4 16 0.5 6 8 20 0.5 6 12 8 0.5 6 \
             16 28 0.5 6 20 32 0.5 6 24 36 0.5 6 28 24 0.5 6\n"
        ),
        "{t}"
    );
    assert!(t.contains("l (group 1) = 24 28 32 36\n"), "{t}");
}

#[test]
fn clang_errors_point_at_the_users_token() {
    if !has_clang() {
        return;
    }
    let d = common::tmp("clang-error");
    std::fs::write(
        d.join("k.cl"),
        "kernel void f(global int *a) {\n  a[0] = missing + 1;\n}\n",
    )
    .unwrap();
    let o = ksim_in(&d, &["check", "k.cl"]);
    let t = common::text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(t.contains("undeclared identifier 'missing'"), "{t}");
    assert!(t.contains("k.cl:2:10"), "{t}");
}

#[test]
fn errors_in_included_files_and_macros_name_the_users_lines() {
    if !has_clang() {
        return;
    }
    let d = common::tmp("clang-include");
    std::fs::write(
        d.join("h.h"),
        "#define BAD(x) ((x) + nothere)\nint twice(int v);\n",
    )
    .unwrap();
    std::fs::write(
        d.join("k.cl"),
        "#include \"h.h\"\nkernel void f(global int *a) {\n  a[0] = BAD(a[1]);\n}\n",
    )
    .unwrap();
    let o = ksim_in(&d, &["check", "k.cl"]);
    let t = common::text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(t.contains("nothere"), "{t}");
    // The macro's body is in h.h; the message points at its use in k.cl.
    assert!(t.contains("k.cl:3:10"), "{t}");
    // A lowering error in an expanded macro points at the use in k.cl.
    std::fs::write(d.join("h.h"), "#define IDX(x) a[(x) * 2 + 1]\n").unwrap();
    std::fs::write(
        d.join("k.cl"),
        "#include \"h.h\"\nkernel void f(global int *a) {\n  int v = IDX(1);\n  a[0] = \
         printf(\"%d\", v);\n}\n",
    )
    .unwrap();
    let o = ksim_in(&d, &["check", "k.cl"]);
    let t = common::text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(t.contains("k.cl:4:"), "{t}");
}

#[test]
fn a_deep_sum_loads() {
    if !has_clang() {
        return;
    }
    let d = common::tmp("clang-deep");
    let sum = vec!["a[1]"; 3000].join(" + ");
    std::fs::write(
        d.join("k.cl"),
        format!("kernel void f(global int *a) {{\n  a[0] = {sum};\n}}\n"),
    )
    .unwrap();
    let o = ksim_in(&d, &["check", "k.cl"]);
    assert_eq!(o.status.code(), Some(0), "{}", common::text(&o));
}

#[test]
fn a_missing_clang_names_the_package() {
    let d = common::tmp("clang-missing");
    std::fs::write(
        d.join("k.cl"),
        "kernel void f(global int *a) { a[0] = 1; }\n",
    )
    .unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_ksim"))
        .args(["check", "k.cl"])
        .current_dir(&d)
        .env("NO_COLOR", "1")
        .env("PATH", d.join("no-such-dir"))
        .output()
        .expect("ksim runs");
    let t = common::text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(t.contains("apt install clang-15"), "{t}");
}

/// `NULL` (clang's `((void*)0)`) and a GNU `noreturn` helper are read.
#[test]
fn null_and_noreturn_as_before() {
    if !has_clang() {
        return;
    }
    let d = common::tmp("clang-null");
    std::fs::write(
        d.join("k.cl"),
        "void f(__global int *a) __attribute__ ((noreturn));\n\
         kernel void k(global int *a) {\n  global int *p = a;\n  if (p != NULL) p[0] = 1;\n  \
         if (get_global_id(0) == 9) f(a);\n}\n",
    )
    .unwrap();
    let args = [
        "run",
        "k.cl",
        "--global",
        "4",
        "--local",
        "4",
        "--input",
        "a=zeros:4",
    ];
    let old = common::ksim_in(&d, &args);
    let new = ksim_in(&d, &args);
    assert_eq!(common::text(&old), common::text(&new));
}
