//! The clang front end (lang/src/cl/clang) closes the gaps to the hand-written one (issue 26,
//! item 1): GPUVerify's annotations that only the hand-written one read, and the replay of
//! a `.cl` report whose `#include`d header is gone (clang reads the report's copy through
//! a virtual file system overlay). Skipped when Debian's `clang-15` is not installed.

mod common;
use common::{has_clang, ksim_in};

/// `__read_permission(int, A[i])` takes a type as its first argument; the access
/// predicates with an address space in their name and `__atomic_implies` are declared.
#[test]
fn annotations_with_a_type_argument_and_address_space_predicates_load() {
    if !has_clang() {
        return;
    }
    let d = common::tmp("clangdefault-annotations");
    std::fs::write(
        d.join("k.cl"),
        "__kernel void foo(__global int *g) {
  __local int A[8];
  A[get_local_id(0)] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  __read_permission(int, A[get_local_id(0)]);
  __write_permission(int, A[get_local_id(0)]);
  __assert(A[get_local_id(0)] == 0);
}
",
    )
    .unwrap();
    let o = ksim_in(
        &d,
        &[
            "run",
            "k.cl",
            "--global",
            "8",
            "--local",
            "8",
            "--input",
            "g=zeros:8",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", common::text(&o));
    std::fs::write(
        d.join("p.cl"),
        "__kernel void foo(__global int *g, __local int *l) {
  __assert(__implies(__reads_from_local(l), true));
  __assert(__implies(__writes_to_global(g), true));
  __assert(__atomic_implies(g, true) || true);
}
",
    )
    .unwrap();
    let o = ksim_in(&d, &["check", "p.cl"]);
    assert!(
        !common::text(&o).contains("undeclared"),
        "{}",
        common::text(&o)
    );
}

const CL_WITH_HEADER: &str = "\
#include \"sync.h\"
__kernel void shift(__global int *a, __global int *b) {
    __local int t[4];
    size_t l = get_local_id(0);
    t[l] = a[l];
    SYNC();
    if (l > 0) b[l] = t[l - 1];
}
";

/// A race report of a kernel whose header (found with `-I`) and kernel file are deleted
/// replays from another folder: clang reads the report's copies.
#[test]
fn a_report_replays_with_its_header_deleted() {
    if !has_clang() {
        return;
    }
    let work = common::tmp("clangdefault-replay");
    std::fs::create_dir_all(work.join("src")).unwrap();
    std::fs::create_dir_all(work.join("inc")).unwrap();
    std::fs::write(work.join("src/k.cl"), CL_WITH_HEADER).unwrap();
    std::fs::write(work.join("inc/sync.h"), "#define SYNC()\n").unwrap();
    let args = [
        "explore",
        "--exhaustive",
        "src/k.cl",
        "-I",
        "inc",
        "--global",
        "4",
        "--local",
        "4",
        "--input",
        "a=iota:4",
        "--input",
        "b=zeros:4",
        "--report-dir",
        "r",
        "-q",
    ];
    let o = ksim_in(&work, &args);
    assert_eq!(o.status.code(), Some(1), "{}", common::text(&o));
    let rep = std::fs::read_dir(work.join("r"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    std::fs::remove_dir_all(work.join("src")).unwrap();
    std::fs::remove_dir_all(work.join("inc")).unwrap();
    let elsewhere = common::tmp("clangdefault-replay-elsewhere");
    let o = ksim_in(&elsewhere, &["replay", rep.to_str().unwrap()]);
    let t = common::text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(common::stdout(&o).contains("race reproduced"), "{t}");
}

/// `as_float(x)` (clang's `AsTypeExpr`) and initializer lists shorter than their array
/// (clang writes their elements under `array_filler`) read as written.
#[test]
fn as_type_and_short_initializer_lists_keep_their_values() {
    if !has_clang() {
        return;
    }
    let d = common::tmp("clangdefault-astype");
    std::fs::write(
        d.join("k.cl"),
        "kernel void k(__global int *out) {
  int part[5] = {9};
  int m[2][3] = {{1, 2, 3}, {4}};
  out[0] = part[0] + part[4];
  out[1] = m[0][2] * 10 + m[1][0] + m[1][1];
  out[2] = as_int(as_float(0x3f800000)) == 0x3f800000;
  out[3] = as_int(1.0f);
}
",
    )
    .unwrap();
    let o = ksim_in(
        &d,
        &[
            "run",
            "k.cl",
            "--global",
            "1",
            "--local",
            "1",
            "--input",
            "out=zeros:4",
        ],
    );
    let t = common::text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(t.contains("= 9 34 1 1065353216"), "{t}");
}

/// A macro that expands to 200 million tokens (trust_cl's bomb) keeps clang busy for
/// minutes: ksim gives up after its time bound with a message, exit 2, never a hang.
#[test]
fn a_macro_bomb_is_refused_after_clangs_time_bound() {
    if !has_clang() {
        return;
    }
    let d = common::tmp("clangdefault-bomb");
    let a0 = format!("1{}", "+1".repeat(20_000));
    let a1 = " A0".repeat(100);
    let a2 = " A1".repeat(100);
    std::fs::write(
        d.join("bomb.cl"),
        format!(
            "#define A0 {a0}\n#define A1 {a1}\n#define A2 {a2}\n\
             kernel void k(global int *out) {{ out[0] = A2; }}"
        ),
    )
    .unwrap();
    let o = ksim_in(&d, &["check", "bomb.cl"]);
    assert_eq!(o.status.code(), Some(2), "{}", common::text(&o));
    let t = common::text(&o);
    assert!(
        t.contains("clang-15 took more than 60 s on this file")
            || t.contains("syntax tree clang-15 gives for this file is over"),
        "{t}"
    );
}
