//! Structs by value and pointers to structs in OpenCL C on the clang front end (issue 26,
//! item 2): structs passed to and returned from helpers, assigned, initialised with lists
//! (nested, partial: the rest is zero), with vector members; pointers to structs
//! (`global S *p = d + i; p->x`, `&d[i]`, `f(&s)`, `*p = v`). Each kernel runs on both
//! engines, which must agree; values are checked against C's (and against PoCL with
//! `gpu compare` where an OpenCL device is there); races and out-of-bounds accesses through
//! a pointer to a struct name the member buffer, element and thread, and a race report
//! replays. Kernels in `tests/kernels/ptrlower_*.cl`. Skipped without Debian's `clang-15`.

mod common;
use common::{has_clang, ksim_in, root, stdout, text, tmp};

/// Runs kernel `file` of `tests/kernels` on both engines with `launch`: they must succeed
/// and print the same buffers, which are returned (`NAME = v0 v1 ...` lines).
fn run_both(file: &str, launch: &[&str]) -> Vec<String> {
    let k = root().join("tests/kernels").join(file);
    let k = k.to_str().expect("a path");
    let mut outs = Vec::new();
    for engine in ["reference", "fast"] {
        let mut args = vec!["run", k, "--engine", engine];
        args.extend(launch);
        let o = ksim_in(&root(), &args);
        assert!(o.status.success(), "{engine}: {}", text(&o));
        let bufs: Vec<String> = stdout(&o)
            .lines()
            .filter(|l| l.contains(" = "))
            .map(str::to_string)
            .collect();
        outs.push(bufs);
    }
    assert_eq!(outs[0], outs[1], "the engines differ");
    outs.remove(0)
}

fn write(dir: &std::path::Path, src: &str) {
    std::fs::write(dir.join("k.cl"), src).expect("write kernel");
}

#[test]
fn structs_are_passed_returned_assigned_and_initialised_by_value() {
    if !has_clang() {
        eprintln!("skipped: no clang-15");
        return;
    }
    let out = run_both(
        "ptrlower_structval.cl",
        &["--global", "3", "--local", "3", "--input", "out=zeros:12"],
    );
    // Thread i: sum(b) = 12i + 11, sum(z) = 1 ({{1}}: the rest zero), c.p swapped back,
    // q.a = 10i + 1 (q changed through a pointer in `bump`).
    assert_eq!(
        out,
        ["out = 11 1 1001 1 23 1 2011 11 35 1 3021 21"],
        "{out:?}"
    );
}

#[test]
fn by_value_structs_match_the_device() {
    if !has_clang() {
        eprintln!("skipped: no clang-15");
        return;
    }
    let d = tmp("ptrlower-device");
    let src = std::fs::read_to_string(root().join("tests/kernels/ptrlower_structval.cl"))
        .expect("kernel");
    write(&d, &src);
    if !ksim_in(&d, &["gpu", "devices"]).status.success() {
        assert!(
            !std::env::var("KSIM_REQUIRE_OPENCL").is_ok_and(|v| v == "1"),
            "KSIM_REQUIRE_OPENCL=1 but no OpenCL device"
        );
        eprintln!("skipped: no OpenCL device");
        return;
    }
    let o = ksim_in(
        &d,
        &[
            "gpu",
            "compare",
            "k.cl",
            "--global",
            "3",
            "--local",
            "3",
            "--input",
            "out=zeros:12",
            "--limit",
            "20",
        ],
    );
    assert!(
        o.status.success() && stdout(&o).starts_with("match"),
        "{}",
        text(&o)
    );
}

#[test]
fn a_pointer_to_a_struct_reads_and_writes_the_members_it_points_at() {
    if !has_clang() {
        eprintln!("skipped: no clang-15");
        return;
    }
    let out = run_both(
        "ptrlower_structptr.cl",
        &[
            "--global",
            "3",
            "--local",
            "3",
            "--input",
            "d.x=iota:3",
            "--input",
            "d.y=ones:3",
            "--input",
            "out=zeros:3",
            "--input",
            "e.x=zeros:3",
            "--input",
            "e.y=zeros:3",
        ],
    );
    // out[i] = 101 * (i^2 + 1); e[i] = d[i] with x + 1, copied through `*p = v`.
    for want in ["out = 101 202 505", "e.x = 1 2 3", "e.y = 1 1 1"] {
        assert!(out.iter().any(|l| l == want), "{want} in {out:?}");
    }
}

const RACE: &str = "typedef struct { int x; int y; } Pt;
kernel void k(global Pt *d) {
  int i = get_global_id(0);
  global Pt *p = &d[i / 2];
  p->y = i;
}
";

#[test]
fn a_race_through_a_pointer_to_a_struct_names_the_member_and_element_and_replays() {
    if !has_clang() {
        eprintln!("skipped: no clang-15");
        return;
    }
    let d = tmp("ptrlower-race");
    write(&d, RACE);
    let o = ksim_in(
        &d,
        &[
            "races",
            "k.cl",
            "--global",
            "4",
            "--local",
            "4",
            "--input",
            "d.x=zeros:2",
            "--input",
            "d.y=zeros:2",
            "--report-dir",
            "rep",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let t = text(&o);
    assert!(t.contains("data race on d.y[0]"), "{t}");
    assert!(t.contains("thread 1 writes d.y[0]"), "{t}");
    let report = std::fs::read_dir(d.join("rep"))
        .expect("reports")
        .next()
        .expect("one report")
        .expect("entry")
        .path();
    let o = ksim_in(&d, &["replay", report.to_str().expect("a path")]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("race reproduced: d.y[0]"), "{}", text(&o));
}

#[test]
fn an_access_past_the_end_through_a_pointer_to_a_struct_is_a_fault() {
    if !has_clang() {
        eprintln!("skipped: no clang-15");
        return;
    }
    let d = tmp("ptrlower-oob");
    write(
        &d,
        "typedef struct { int x; int y; } Pt;
void set(global Pt *p, int v) { p->x = v; }
kernel void k(global Pt *d) { int i = get_global_id(0); set(d + i + 1, i); }
",
    );
    for engine in ["reference", "fast"] {
        let o = ksim_in(
            &d,
            &[
                "run",
                "k.cl",
                "--engine",
                engine,
                "--global",
                "4",
                "--local",
                "4",
                "--input",
                "d.x=zeros:4",
                "--input",
                "d.y=zeros:4",
            ],
        );
        assert_eq!(o.status.code(), Some(1), "{engine}: {}", text(&o));
        assert!(
            text(&o).contains("out-of-bounds access d.x[4]: d.x has size [4] in thread 3"),
            "{engine}: {}",
            text(&o)
        );
    }
}

#[test]
fn what_stays_refused_for_structs_is_a_clear_error() {
    if !has_clang() {
        eprintln!("skipped: no clang-15");
        return;
    }
    let d = tmp("ptrlower-refused");
    let cases = [
        (
            "typedef struct { int x; } S;
kernel void k(global S *d) { global S *p = d; p++; p->x = 1; }",
            "moving `p`, a pointer to a struct, after its declaration",
        ),
        (
            "typedef struct { int x; } S;
kernel void k(global int *o) { S s = {1}; S *p = &s; o[0] = p[1].x; }",
            "indexing a pointer to a struct variable",
        ),
        (
            "typedef struct { int x; } S; typedef struct { int x; } T;
int f(T t) { return t.x; }
kernel void k(global int *o) { S s = {1}; o[0] = f(s); }",
            "incompatible type",
        ),
    ];
    for (src, want) in cases {
        write(&d, src);
        let o = ksim_in(&d, &["check", "k.cl"]);
        assert_eq!(o.status.code(), Some(2), "{src}\n{}", text(&o));
        assert!(text(&o).contains(want), "{src}\n{}", text(&o));
    }
}
