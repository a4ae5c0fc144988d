//! OpenCL C structs (lang/src/cl/structs.rs): a struct is scalarised, one core variable or
//! array per member named `NAME.member`. Each kernel runs on the reference semantics and
//! the fast executor, which must agree on memory, races and faults (common::cl::run).
//! Races on a buffer of structs are per member: the same member of one element conflicts,
//! different members (distinct bytes in C) do not.

mod common;
use common::cl::{compile, run};

#[test]
fn by_value_struct_parameters_are_one_scalar_parameter_per_member() {
    let src = r#"
        struct inner { int c; };
        typedef struct { int a; uint b; struct inner n; float f; } S;
        kernel void k(__global int *out, S q) {
            int g = get_global_id(0);
            out[g] = q.a * 100 + (int)q.b * 10 + q.n.c + (int)q.f + g * 1000;
        }
    "#;
    let c = compile(src).unwrap();
    let names: Vec<_> = c.info.scalars.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["q.a", "q.b", "q.n.c", "q.f"]);
    let r = run(
        src,
        &[1],
        &[3],
        &[("out", 3, "zeros")],
        &[("q.a", "1"), ("q.b", "2"), ("q.n.c", "3"), ("q.f", "4.5")],
    );
    assert_eq!(r.ints("out"), [127, 1127, 2127]);
    assert!(r.races.is_empty() && r.fault.is_none());
}

#[test]
fn a_written_member_of_a_by_value_parameter_is_a_private_copy() {
    // test_structs/requires_with_store: every work-item writes its own copy of `q.b`.
    let src = r#"
        struct s { int a; int b; };
        kernel void k(__global int *p, struct s q) {
            q.b = p[get_global_id(0)];
            q.b += q.a;
            p[get_global_id(0)] = q.b;
        }
    "#;
    let r = run(
        src,
        &[2],
        &[4],
        &[("p", 8, "iota")],
        &[("q.a", "10"), ("q.b", "0")],
    );
    assert_eq!(r.ints("p"), (10..18).collect::<Vec<i64>>());
    assert!(r.races.is_empty(), "{:?}", r.race_arrays());
}

#[test]
fn an_array_member_of_a_by_value_parameter_is_a_parameter_per_element() {
    // test_structs/store_array_element: each work-item writes its own copy of `q.a`.
    let src = r#"
        struct s { int a[3]; };
        kernel void k(__global int *p, struct s q) {
            q.a[1] = q.a[1] + (int)get_global_id(0);
            p[get_global_id(0)] = q.a[0] * 100 + q.a[1] * 10 + q.a[2];
        }
    "#;
    let c = compile(src).unwrap();
    let names: Vec<_> = c.info.scalars.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["q.a[0]", "q.a[1]", "q.a[2]"]);
    let r = run(
        src,
        &[1],
        &[3],
        &[("p", 3, "zeros")],
        &[("q.a[0]", "1"), ("q.a[1]", "2"), ("q.a[2]", "3")],
    );
    assert_eq!(r.ints("p"), [123, 133, 143]);
    assert!(r.races.is_empty(), "{:?}", r.race_arrays());
}

#[test]
fn private_structs_arrays_of_them_and_whole_assignment() {
    let src = r#"
        typedef struct { int x; float y; } P;
        typedef struct { P p; int tag; } Q;
        kernel void k(__global int *out) {
            int g = get_global_id(0);
            P a;
            a.x = g;
            a.y = 1.5f;
            P b = a;                 // member-wise copy
            P arr[3];
            arr[1] = b;
            arr[1].x += 100;
            Q q;
            q.p = arr[1];            // a nested struct, whole
            q.tag = 7;
            out[g] = q.p.x + (int)(q.p.y * 2.0f) + q.tag * 1000 + b.x * 10000;
        }
    "#;
    let r = run(src, &[1], &[3], &[("out", 3, "zeros")], &[]);
    assert_eq!(r.ints("out"), [7103, 17104, 27105]);
    assert!(r.races.is_empty() && r.fault.is_none());
}

#[test]
fn a_buffer_of_structs_is_one_buffer_per_member_through_index_arrow_and_deref() {
    let src = r#"
        typedef struct { int x; int y; } S;
        kernel void k(__global S *G, __global int *out) {
            int g = get_global_id(0);
            G[g].y = G[g].x + 1;
            out[g] = G->x + (*G).x + 10 * g;   // element 0's x: read by all, written by none
        }
    "#;
    let c = compile(src).unwrap();
    let names: Vec<_> = c.info.buffers.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(names, ["G.x", "G.y", "out"]);
    let r = run(
        src,
        &[2],
        &[2],
        &[
            ("G.x", 4, "5,6,7,8"),
            ("G.y", 4, "zeros"),
            ("out", 4, "zeros"),
        ],
        &[],
    );
    assert_eq!(r.ints("G.y"), [6, 7, 8, 9]);
    assert_eq!(r.ints("out"), [10, 20, 30, 40]);
    assert!(r.races.is_empty(), "{:?}", r.race_arrays());
}

#[test]
fn a_race_on_the_same_member_of_one_element_is_found_on_that_member() {
    // misc/fail/struct_member_race: GPUVerify reports G[3] bytes 4..7, i.e. member y.
    let src = r#"
        typedef struct { int x; int y; } S;
        kernel void example(global S *G) {
            G[3].y = get_global_id(0);
        }
    "#;
    let r = run(
        src,
        &[2],
        &[4],
        &[("G.x", 8, "zeros"), ("G.y", 8, "zeros")],
        &[],
    );
    assert!(!r.races.is_empty());
    assert!(
        r.race_arrays().iter().all(|a| a == "G.y"),
        "{:?}",
        r.race_arrays()
    );
    assert_eq!(r.races[0].index, [3]);
}

#[test]
fn different_members_of_one_element_never_race() {
    let src = r#"
        typedef struct { int x; int y; } S;
        kernel void k(global S *G) {
            if (get_local_id(0) == 0) G[0].x = 1;
            if (get_local_id(0) == 1) G[0].y = 2;
        }
    "#;
    let r = run(
        src,
        &[1],
        &[2],
        &[("G.x", 1, "zeros"), ("G.y", 1, "zeros")],
        &[],
    );
    assert!(r.races.is_empty(), "{:?}", r.race_arrays());
    assert_eq!((r.ints("G.x"), r.ints("G.y")), (vec![1], vec![2]));
}

#[test]
fn a_local_array_of_structs_of_four_dimensions_races_on_its_member() {
    // misc/fail/4d_array_of_structs_race: GPUVerify reports L[1][2][3][3] bytes 8..11 (z).
    let src = r#"
        typedef struct { float x; float y; float z; float w; } my_float4;
        kernel void example(global my_float4 *G) {
            local my_float4 L[2][3][4][5];
            L[1][2][3][3].z = G[get_global_id(0)].x;
        }
    "#;
    let r = run(
        src,
        &[1],
        &[4],
        &[
            ("G.x", 4, "1.0,2.0,3.0,4.0"),
            ("G.y", 4, "zeros"),
            ("G.z", 4, "zeros"),
            ("G.w", 4, "zeros"),
        ],
        &[],
    );
    assert!(!r.races.is_empty());
    assert!(
        r.race_arrays().iter().all(|a| a == "L.z"),
        "{:?}",
        r.race_arrays()
    );
}

/// A struct kernel parameter holding a pointer is invalid OpenCL C 1.2: clang-15 refuses
/// it, as PoCL and Oclgrind do.
#[test]
fn a_pointer_member_of_a_by_value_parameter_is_refused() {
    let src = r#"
        struct s { __global int *p; int n; };
        kernel void k(struct s q) {
            q.p[get_global_id(0)] = q.n + get_global_id(0);
        }
    "#;
    let e = compile(src).expect_err("refused");
    assert!(
        e.contains("struct kernel parameters may not contain pointers"),
        "{e}"
    );
}

#[test]
fn what_is_not_modelled_is_a_clear_error() {
    let cases = [
        (
            "union u { int a; float b; }; kernel void k(__global union u *G) { G[0].a = 1; }",
            "not supported yet: unions",
        ),
        (
            "struct a { int p[2]; int i; };
             kernel void k(__global struct a *q) { q[0].i = 1; }",
            "not supported yet: array members in a buffer of structs (`q.p`)",
        ),
        (
            "struct a { int i; };
             kernel void k(__global struct a *q) { __global int *b = (__global int *)q; b[0] = 1; }",
            "a pointer to `struct a` (`q`) as a value",
        ),
        (
            "struct a { int i; }; kernel void k(__global struct a *q) { q[0].j = 1; }",
            "no member named 'j' in 'struct a'",
        ),
        (
            "struct a { int i; }; kernel void k(__global struct a *q) { q.i = 1; }",
            "member reference type '__global struct a *__private' is a pointer; did you mean to use '->'?",
        ),
    ];
    for (src, want) in cases {
        match compile(src) {
            Ok(_) => panic!("compiled: {src}"),
            Err(e) => assert!(e.contains(want), "{e}\nwanted: {want}\n{src}"),
        }
    }
}
