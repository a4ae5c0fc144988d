//! Vector buffers and the vector constructs around them (lang/src/cl/vector.rs,
//! pointer.rs, async_copy.rs): pointer variables into arrays of vectors, async copies of
//! vector elements, `shuffle`/`shuffle2`, by-value vector kernel parameters, and the
//! messages that name a slot of a vector buffer as the source does (`G[13] (G[3].y)`).
//! Each kernel runs on the reference semantics and the fast executor, which must agree;
//! the CLI tests run tests/kernels/cl_vectors.cl, also on PoCL (`gpu compare`).

mod common;
use common::cl::{compile, Ran};
use common::{ksim, stdout, text};

fn run(
    src: &str,
    groups: &[usize],
    local: &[usize],
    bufs: &[(&str, usize, &str)],
    args: &[(&str, &str)],
) -> Ran {
    common::cl::run(src, groups, local, bufs, args)
}

#[test]
fn a_race_on_one_component_is_found_and_other_components_do_not_race() {
    let racy = "kernel void k(__global float4 *G) { G[3].y = (float)get_global_id(0); }";
    let r = run(racy, &[1], &[2], &[("G", 16, "zeros")], &[]);
    assert_eq!(r.race_arrays(), ["G"]);
    assert_eq!(r.races[0].index, [13], "component y of element 3");
    // Work-item l writes component l of element 0 (through a swizzle and a `float *` view):
    // one element, four distinct slots, no race.
    let apart = "kernel void k(__global int4 *G) { \
                 size_t l = get_local_id(0); __global int *c = (__global int *)G; \
                 if (l == 0) G[0].x = 10; if (l == 1) G[0].y = 11; \
                 if (l == 2) c[2] = 12; if (l == 3) G[0].w = 13; }";
    let r = run(apart, &[1], &[4], &[("G", 8, "zeros")], &[]);
    assert!(r.races.is_empty());
    assert_eq!(r.ints("G"), [10, 11, 12, 13, 0, 0, 0, 0]);
}

#[test]
fn pointer_variables_into_vector_buffers_step_by_whole_vectors() {
    // `r` moves by int3 elements (4 slots each, OpenCL's layout); `f` views the slots.
    let src = "kernel void k(__global int3 *p, __global int *out) { \
               __global int3 *r = p + 1; r++; \
               int3 v = *r + r[-1]; \
               r[1] = v; \
               __global int *f = (__global int *)p; \
               out[0] = f[8]; out[1] = f[5]; out[2] = (*(r - 1)).z; }";
    let r = run(
        src,
        &[1],
        &[1],
        &[("p", 16, "iota"), ("out", 3, "zeros")],
        &[],
    );
    // p[1] = (4, 5, 6), p[2] = (8, 9, 10): p[3] = (12, 14, 16), its padding slot 15 kept.
    assert_eq!(
        r.ints("p"),
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 14, 16, 15]
    );
    assert_eq!(r.ints("out"), [8, 5, 6]);
}

#[test]
fn async_copies_of_vector_elements_copy_every_component() {
    let src = "kernel void k(__global int2 *in, __global int2 *out) { \
               __local int2 t[4]; size_t l = get_local_id(0); \
               event_t e = async_work_group_copy(t, in + 4 * get_group_id(0), 4, 0); \
               wait_group_events(1, &e); barrier(CLK_LOCAL_MEM_FENCE); \
               out[get_global_id(0)] = t[3 - l]; \
               barrier(CLK_GLOBAL_MEM_FENCE); \
               e = async_work_group_strided_copy(out, t, 2, 2, 0); \
               wait_group_events(1, &e); }";
    let r = run(
        src,
        &[1],
        &[4],
        &[("in", 8, "iota"), ("out", 8, "zeros")],
        &[],
    );
    assert!(r.races.is_empty() && r.fault.is_none(), "{:?}", r.fault);
    // out = t reversed, then elements 0 and 2 of out (stride 2) overwritten by t[0], t[1].
    assert_eq!(r.ints("out"), [0, 1, 4, 5, 2, 3, 0, 1]);
    // Reading the destination before the wait finds nothing there (the data moves at the
    // wait); with `t` defined first, it races with the copy.
    let racy = "kernel void k(__global int2 *in, __global int2 *out) { \
                __local int2 t[4]; size_t l = get_local_id(0); \
                t[l] = (int2)(0, 0); barrier(CLK_LOCAL_MEM_FENCE); \
                event_t e = async_work_group_copy(t, in, 4, 0); \
                out[l] = t[3 - l]; wait_group_events(1, &e); }";
    let r = run(
        racy,
        &[1],
        &[4],
        &[("in", 8, "iota"), ("out", 8, "zeros")],
        &[],
    );
    assert_eq!(r.race_arrays().first().map(String::as_str), Some("t"));
}

#[test]
fn shuffle_picks_components_by_the_low_bits_of_the_mask() {
    let src = "kernel void k(__global int4 *A, __global int8 *C, uint4 mask) { \
               A[1] = shuffle(A[0], mask); \
               C[0] = shuffle2(A[0], A[2], (uint8)(7, 0, 6, 1, 5, 2, 4, 11)); }";
    let r = run(
        src,
        &[1],
        &[1],
        &[("A", 12, "iota"), ("C", 8, "zeros")],
        &[
            ("mask.x", "3"),
            ("mask.y", "3"),
            ("mask.z", "6"),
            ("mask.w", "0"),
        ],
    );
    // mask 6 keeps its low 2 bits (2) for a 4-component source; shuffle2 indexes A[0]
    // then A[2] (8, 9, 10, 11), 11 keeping its low 3 bits (3).
    assert_eq!(r.ints("A")[4..8], [3, 3, 2, 0]);
    assert_eq!(r.ints("C"), [11, 0, 10, 1, 9, 2, 8, 3]);
}

#[test]
fn a_by_value_vector_parameter_is_one_scalar_per_component() {
    let src = "kernel void k(__global float *out, float3 v, int2 w) { \
               w.y += 1; out[0] = v.x + v.z; out[1] = (float)(w.x * w.y); }";
    let c = compile(src).unwrap();
    let names: Vec<_> = c.info.scalars.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["v.x", "v.y", "v.z", "w.x", "w.y"]);
    let r = run(
        src,
        &[1],
        &[1],
        &[("out", 2, "zeros")],
        &[
            ("v.x", "1.5"),
            ("v.y", "0"),
            ("v.z", "2"),
            ("w.x", "3"),
            ("w.y", "4"),
        ],
    );
    assert_eq!(r.array("out"), ["3.5", "15"]);
}

#[test]
fn vector_pointer_misuse_is_refused_clearly() {
    for (body, msg) in [
        (
            "__global int4 *p = (__global int4 *)t;",
            "changes the vector length (elements of 2 seen as 4)",
        ),
        (
            "int4 s = shuffle(t[0], (uint2)(1, 0));",
            "initializing '__private int4' (vector of 4 'int' values) with an expression of incompatible type 'int __attribute__((ext_vector_type(2)))' (vector of 2 'int' values)",
        ),
        (
            "int2 s = shuffle(t[0], (int2)(1, 0));",
            "no matching function for call to 'shuffle'",
        ),
        (
            "int s = shuffle(t[0], (uint2)(1, 0));",
            "initializing '__private int' with an expression of incompatible type 'int __attribute__((ext_vector_type(2)))' (vector of 2 'int' values)",
        ),
    ] {
        let src = format!("kernel void k(__global int2 *t) {{ {body} }}");
        let e = compile(&src).unwrap_err();
        assert!(e.contains(msg), "{body}: {e}");
    }
}

const KERNEL: &str = "tests/kernels/cl_vectors.cl";
const LAUNCH: [&str; 18] = [
    "--global",
    "8",
    "--local",
    "4",
    "--input",
    "in=iota:32",
    "--input",
    "out=zeros:32",
    "--input",
    "first=zeros:8",
    "--arg",
    "mask.x=3",
    "--arg",
    "mask.y=2",
    "--arg",
    "mask.z=1",
    "--arg",
    "mask.w=0",
];

#[test]
fn cli_round_trips_a_vector_buffer_on_both_engines() {
    for engine in ["fast", "reference"] {
        let mut args = vec!["run", KERNEL];
        args.extend(LAUNCH);
        args.extend(["--engine", engine]);
        let o = ksim(&args);
        assert!(o.status.success(), "{}", text(&o));
        let out = stdout(&o);
        // out[i] = 2 * in[i].wzyx: in = 0..31 as 8 float4s.
        let want: Vec<String> = (0..8)
            .flat_map(|i| [3, 2, 1, 0].map(|c| (2 * (4 * i + c)).to_string()))
            .collect();
        assert!(
            out.lines()
                .any(|l| l.starts_with("out ") && l.ends_with(&format!("= {}", want.join(" ")))),
            "{out}"
        );
        let first: Vec<String> = (0..8).map(|i| (4 * i).to_string()).collect();
        assert!(
            out.lines()
                .any(|l| l.starts_with("first ") && l.ends_with(&first.join(" "))),
            "{out}"
        );
    }
}

#[test]
fn cli_names_a_vector_slot_as_the_source_does() {
    // The racy variant also reads `tile` before any write: `--uninit zero` leaves the race
    // as the only finding (under the default `check` the uninitialised read ends the run).
    let mut args = vec!["races", KERNEL, "-D", "RACY", "--uninit", "zero"];
    args.extend(LAUNCH);
    let o = ksim(&args);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    // `tile` holds float4s: slot 4 is tile[1].x.
    assert!(text(&o).contains("tile[4] (tile[1].x)"), "{}", text(&o));
    // An access past the end names the element and component it would be.
    let mut args = vec!["run", KERNEL];
    args.extend(LAUNCH);
    let i = args.iter().position(|a| *a == "in=iota:32").unwrap();
    args[i] = "in=iota:30";
    let o = ksim(&args);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("in[30] is in[7].z"), "{}", text(&o));
}

#[test]
fn gpu_compare_matches_on_a_vector_kernel() {
    if gpu::device_or_skip("gpu compare of a .cl kernel with vector buffers").is_none() {
        return;
    }
    let mut args = vec!["gpu", "compare", KERNEL];
    args.extend(LAUNCH);
    let o = ksim(&args);
    assert!(o.status.success(), "{}", text(&o));
    assert!(stdout(&o).contains("match"), "{}", text(&o));
}

#[test]
fn constant_and_private_arrays_of_vectors_hold_their_components() {
    // alignment/initialisation of the GPUVerify suite: a 3-vector takes 4 slots.
    let src = "__constant int3 c[2] = {{0, 0, 7}, {1, 0, 0}}; \
               kernel void k(__global int *out) { \
               int2 p[2][2] = {{{1, 2}, {3, 4}}, {5, 6, 7, 8}}; \
               p[1][0].y += c[0].z; \
               out[0] = c[1].x; out[1] = c[0].z; out[2] = p[1][0].y; out[3] = p[0][1].x; \
               int4 q[2]; q[1] = (int4)(9); out[4] = q[1].w + q[0].x; }";
    let r = run(src, &[1], &[1], &[("out", 5, "zeros")], &[]);
    assert!(r.races.is_empty() && r.fault.is_none(), "{:?}", r.fault);
    assert_eq!(r.ints("out"), [1, 7, 13, 3, 9]);
}

#[test]
fn a_helper_returning_a_vector_names_it_in_its_ensures() {
    // vectortests/vectorreturn of the GPUVerify suite, with a postcondition that fails.
    let ok = "int4 bar(int4 v) { __ensures(__return_val_int4().y == v.y + 1); \
              int4 r = v + 1; return r; } \
              kernel void k(__global int *out) { int4 b = bar((int4)(0, 1, 2, 3)); out[0] = b.y; }";
    let r = run(ok, &[1], &[1], &[("out", 1, "zeros")], &[]);
    assert!(r.fault.is_none(), "{:?}", r.fault);
    assert_eq!(r.ints("out"), [2]);
    let bad = ok.replace("v.y + 1", "v.y + 2");
    let r = run(&bad, &[1], &[1], &[("out", 1, "zeros")], &[]);
    assert!(
        r.fault.as_deref().is_some_and(|f| f.contains("__ensures")),
        "{:?}",
        r.fault
    );
}
