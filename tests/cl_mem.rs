//! OpenCL C pointers, atomics and 2D/3D NDRanges through the whole pipeline: each kernel
//! runs on the reference semantics and the fast executor, which must agree on memory,
//! races and faults; results are what OpenCL C 1.2 computes. The same kernels run through
//! the CLI (`ksim run kernel.cl --global 4,2 --local 2,2`) in `cli_*` tests.

mod common;
use common::cl::{compile, Ran};
use common::{ksim, stdout, text};

/// Runs `src` on both engines with `groups` × `local` (per dimension) and buffers
/// `(name, size, spec)`.
fn run(src: &str, groups: &[usize], local: &[usize], bufs: &[(&str, usize, &str)]) -> Ran {
    common::cl::run(src, groups, local, bufs, &[])
}

#[test]
fn pointer_variables_follow_their_offset() {
    let src = r#"
        void put(__global int *dst, int v) { *dst = v; }
        void fill2(__global int *p, int v) { p[0] = v; p++; *p = v + 1; }
        kernel void k(__global int *a, __global int *out) {
            int i = get_global_id(0);
            __global int *p = a + 4 * i;       // p = &a[4i]
            __global int *q;
            q = &p[1];                         // &a[4i + 1]
            p[2] = *q + 100;                   // a[4i+2] = a[4i+1] + 100
            q++;                               // &a[4i + 2]
            *(q + 1) = q[0] * 2;               // a[4i+3] = 2 a[4i+2]
            put(out + i, *p);                  // out[i] = a[4i]
            fill2(&out[8 + 2 * i], i);         // out[8+2i] = i, out[9+2i] = i + 1
        }
    "#;
    let r = run(src, &[1], &[2], &[("a", 8, "iota"), ("out", 12, "zeros")]);
    assert_eq!(r.ints("a"), [0, 1, 101, 202, 4, 5, 105, 210]);
    assert_eq!(r.ints("out"), [0, 4, 0, 0, 0, 0, 0, 0, 0, 1, 1, 2]);
    assert!(r.races.is_empty(), "{:?}", r.race_arrays());
}

#[test]
fn pointers_to_private_variables_are_the_variable() {
    let src = r#"
        void set(int *v, int x) { *v = x; }
        kernel void k(__global int *out) {
            int x = 1, y;
            int *p;
            p = &x;
            *p = *p + 10;                      // x = 11
            set(&y, 5);                        // y = 5
            set(p, p[0] + y);                  // x = 16
            *&y = y * 2;                       // y = 10
            out[get_global_id(0)] = x * 100 + y;
        }
    "#;
    let r = run(src, &[1], &[2], &[("out", 2, "zeros")]);
    assert_eq!(r.ints("out"), [1610, 1610]);
    assert!(r.races.is_empty());
}

#[test]
fn a_moved_buffer_parameter_and_a_local_pointer() {
    let src = r#"
        kernel void k(__global int *a) {
            __local int tile[4];
            __local int *t = tile;
            int l = get_local_id(0);
            t[l] = a[l];
            barrier(CLK_LOCAL_MEM_FENCE);
            a += 4;                            // a buffer parameter moved: a pointer variable
            a[l] = t[3 - l];
        }
    "#;
    let r = run(src, &[1], &[4], &[("a", 8, "iota")]);
    assert_eq!(r.ints("a"), [0, 1, 2, 3, 3, 2, 1, 0]);
    assert!(r.races.is_empty());
}

#[test]
fn an_access_through_a_pointer_is_bounds_checked_and_raced_on_its_array() {
    let src = "kernel void k(__global int *a) { __global int *p = a + 3; p[get_local_id(0)] = 1; }";
    let r = run(src, &[1], &[2], &[("a", 4, "zeros")]);
    let f = r.fault.expect("out of bounds");
    assert!(f.contains("out-of-bounds access a[4]"), "{f}");
    let src = "kernel void k(__global int *a) { __global int *p = &a[1]; *p = get_local_id(0); }";
    let r = run(src, &[1], &[2], &[("a", 4, "zeros")]);
    assert_eq!(r.race_arrays(), ["a"]);
}

#[test]
fn pointers_ksim_cannot_model_are_refused_clearly() {
    for (src, msg) in [
        (
            "kernel void k(__global int *a) { int x = 0; int *p = &x; p++; *p = 1; }",
            "pointer arithmetic on the address of a private variable",
        ),
        (
            "kernel void k(__global int *a) { int x = 0; int *p = &x; a[0] = p[1]; }",
            "indexing a pointer to a private variable other than with 0",
        ),
    ] {
        let e = compile(src).unwrap_err();
        assert!(e.contains(msg), "{src}: {e}");
    }
    // Pointer values (tests/cl_pointers.rs) other than these are refused too.
    let e =
        compile("kernel void k(__global int *a, __global int *b) { a[0] = a - b; }").unwrap_err();
    assert!(e.contains("using the pointer `a` as a value"), "{e}");
}

#[test]
fn atomics_are_indivisible_and_do_not_race_each_other() {
    let src = r#"
        kernel void k(__global int *count, __global uint *bits, __global int *slot) {
            __local int n;
            int l = get_local_id(0);
            if (l == 0) n = 0;
            barrier(CLK_LOCAL_MEM_FENCE);
            int mine = atomic_inc(&n);
            slot[mine] = 1;
            atomic_add(count, 2);
            atom_or(&bits[0], 1u << l);
            atomic_max(count + 1, l);
            atomic_cmpxchg(&count[2], 0, 7);
        }
    "#;
    let r = run(
        src,
        &[1],
        &[4],
        &[
            ("count", 3, "zeros"),
            ("bits", 1, "zeros"),
            ("slot", 4, "zeros"),
        ],
    );
    assert_eq!(r.ints("count"), [8, 3, 7]);
    assert_eq!(r.ints("bits"), [15]);
    assert_eq!(r.ints("slot"), [1, 1, 1, 1]);
    assert!(r.races.is_empty(), "{:?}", r.race_arrays());
    // An atomic and a plain access to the same element race.
    let src = "kernel void k(__global int *a) { if (get_local_id(0) == 0) a[0] = 1; else atomic_add(a, 1); }";
    let r = run(src, &[1], &[2], &[("a", 1, "zeros")]);
    assert_eq!(r.race_arrays(), ["a"]);
}

#[test]
fn two_and_three_dimensional_ids() {
    let src = r#"
        kernel void k(__global uint *out) {
            uint x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
            uint w = get_global_size(0), h = get_global_size(1);
            out[x + w * (y + h * z)] = 1000 * get_work_dim() + 100 * get_group_id(1)
                + 10 * get_local_id(1) + get_local_size(2) * get_num_groups(2);
        }
    "#;
    let r = run(src, &[1, 2, 1], &[2, 2, 2], &[("out", 16, "zeros")]);
    let want: Vec<i64> = (0..16)
        .map(|i| {
            let (y, _) = ((i / 2) % 4, i / 8);
            3000 + 100 * (y / 2) + 10 * (y % 2) + 2
        })
        .collect();
    assert_eq!(r.ints("out"), want);
    assert!(r.races.is_empty());
}

const TRANSPOSE: &str = "tests/kernels/cl_transpose_2d.cl";

#[test]
fn cli_runs_a_2d_kernel_with_pointers_on_both_engines() {
    for engine in ["reference", "fast"] {
        let o = ksim(&[
            "run",
            TRANSPOSE,
            "--global",
            "4,2",
            "--local",
            "2,2",
            "--input",
            "in=iota:8",
            "--input",
            "out=zeros:8",
            "--engine",
            engine,
        ]);
        assert!(o.status.success(), "{}", text(&o));
        assert!(
            stdout(&o)
                .lines()
                .any(|l| l.starts_with("out ") && l.ends_with("= 0 4 1 5 2 6 3 7")),
            "{}",
            text(&o)
        );
    }
    let o = ksim(&[
        "races",
        TRANSPOSE,
        "--global",
        "4,2",
        "--local",
        "2,2",
        "--input",
        "in=iota:8",
        "--input",
        "out=zeros:8",
    ]);
    assert!(o.status.success(), "{}", text(&o));
}

#[test]
fn cli_finds_the_race_of_a_missing_barrier_in_2d() {
    let o = ksim(&[
        "races",
        TRANSPOSE,
        "-D",
        "RACY",
        "--global",
        "4,2",
        "--local",
        "2,2",
        "--input",
        "in=iota:8",
        "--input",
        "out=zeros:8",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("tile"), "{}", text(&o));
}

#[test]
fn a_float_pointer_stores_through_its_offset() {
    let src = "kernel void k(__global float *f) { __global float *p = f + 1; *p = 2.5f; }";
    let r = run(src, &[1], &[1], &[("f", 2, "zeros")]);
    let a = r.launch.kernel.array("f").unwrap();
    assert_eq!(
        r.memory.arrays[a][0][1],
        interp::Value::Float(2.5f32.to_bits())
    );
}

const ATOMIC_2D: &str = "tests/kernels/cl_atomic_2d.cl";
const ATOMIC_LAUNCH: [&str; 8] = [
    "--global",
    "2,4",
    "--local",
    "2,2",
    "--input",
    "count=zeros:2",
    "--input",
    "bits=zeros:2",
];

#[test]
fn cli_runs_atomics_on_a_2d_ndrange_race_free() {
    let mut args = vec!["races", ATOMIC_2D];
    args.extend(ATOMIC_LAUNCH);
    let o = ksim(&args);
    assert!(o.status.success(), "{}", text(&o));
    let mut args = vec!["run", ATOMIC_2D];
    args.extend(ATOMIC_LAUNCH);
    let o = ksim(&args);
    assert!(o.status.success(), "{}", text(&o));
    // Two groups, tickets 1 + 2 + 3 + 4 each; all four bits of each group's row.
    assert!(
        stdout(&o)
            .lines()
            .any(|l| l.starts_with("count ") && l.ends_with("= 0 20")),
        "{}",
        text(&o)
    );
    assert!(
        stdout(&o)
            .lines()
            .any(|l| l.starts_with("bits ") && l.ends_with("= 15 15")),
        "{}",
        text(&o)
    );
}

#[test]
fn gpu_compare_matches_on_pointer_atomic_and_2d_kernels() {
    if gpu::device_or_skip("gpu compare of .cl kernels with pointers, atomics, 2D").is_none() {
        return;
    }
    let transpose = [
        "gpu",
        "compare",
        TRANSPOSE,
        "--global",
        "4,2",
        "--local",
        "2,2",
        "--input",
        "in=iota:8",
        "--input",
        "out=zeros:8",
    ];
    let mut atomic = vec!["gpu", "compare", ATOMIC_2D];
    atomic.extend(ATOMIC_LAUNCH);
    for args in [transpose.to_vec(), atomic] {
        let o = ksim(&args);
        assert!(o.status.success(), "{}", text(&o));
        assert!(stdout(&o).contains("match"), "{}", text(&o));
    }
}
