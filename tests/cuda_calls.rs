//! CUDA constructs that lower to calls the core already has (issue 28): function pointers
//! to device functions, in-kernel `memcpy`/`memset`, `atomicInc`/`atomicDec` with CUDA's
//! wrap-around, and their `.cl` twins where OpenCL C has an equivalent.

mod common;

use common::{ksim, stdout, text, tmp};

fn k(name: &str) -> String {
    format!("tests/kernels/cuda/{name}")
}

/// The line of `run`'s output that shows `array` (`out     = 28 92` → `28 92`).
fn array_line(out: &str, array: &str) -> String {
    out.lines()
        .find_map(|l| {
            let (name, values) = l.split_once('=')?;
            (name.trim() == array).then(|| values.trim().to_string())
        })
        .unwrap_or_else(|| panic!("no array `{array}` in:\n{out}"))
}

/// `ksim run funcptr.cu` with the launch's function pointer `first` = `value`.
fn apply(value: &str) -> std::process::Output {
    let first = format!("first={value}");
    let f = k("funcptr.cu");
    ksim(&[
        "run",
        &f,
        "--block",
        "4",
        "--input",
        "in=iota:4",
        "--input",
        "out=zeros:4",
        "--arg",
        &first,
    ])
}

#[test]
fn calls_through_function_pointers_reach_their_targets() {
    // `first` = 2 is `square`, the file's second device function.
    let o = apply("2");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    // out[i] = f(in[i]) + f(1): square, square (pick(1)), twice (pick(2)), square (pick(3)).
    assert_eq!(array_line(&stdout(&o), "out"), "1 2 6 10");
    let o = apply("1");
    assert_eq!(array_line(&stdout(&o), "out"), "2 2 6 10", "{}", text(&o));
}

#[test]
fn a_null_function_pointer_call_faults_and_a_non_function_is_the_launchs_fault() {
    let o = apply("0");
    let t = text(&o);
    assert!(t.contains("null pointer dereference"), "{t}");
    assert!(t.contains("funcptr.cu:17:14"), "{t}");
    // 3 is `pick`, of another type: not a value `first` may have.
    let t = text(&apply("3"));
    assert!(
        t.contains("violates the kernel's precondition (`__requires`) with first = 3"),
        "{t}"
    );
}

#[test]
fn a_function_pointer_cast_to_a_data_pointer_is_refused() {
    let dir = tmp("cuda-fnptr-cast");
    let f = dir.join("k.cu");
    std::fs::write(
        &f,
        "typedef int (*op_t)(int);\n__device__ int one(int x) { return 1; }\n\
         __global__ void k(int *o, op_t g) {\n  int *p = (int *)g;\n  o[0] = *p;\n}\n",
    )
    .unwrap();
    let o = ksim(&["check", f.to_str().unwrap()]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(
        t.contains("between a function pointer and a data pointer"),
        "{t}"
    );
    assert!(t.contains("k.cu:4:"), "{t}");
}

const COPY_INPUTS: [&str; 14] = [
    "--input",
    "in=iota:8",
    "--input",
    "out=zeros:8",
    "--input",
    "pin.x=iota:4",
    "--input",
    "pin.y=1,2,3,4",
    "--input",
    "pout.x=zeros:4",
    "--input",
    "pout.y=zeros:4",
    "--input",
    "fill=zeros:4",
];

#[test]
fn memcpy_and_memset_match_their_opencl_twin() {
    for (file, launch) in [("memcpy.cu", "--block"), ("memcpy.cl", "--local-size")] {
        let f = k(file);
        let mut args = vec!["run", f.as_str(), launch, "4"];
        args.extend(COPY_INPUTS);
        let o = ksim(&args);
        let out = stdout(&o);
        assert_eq!(o.status.code(), Some(0), "{file}: {}", text(&o));
        assert_eq!(array_line(&out, "out"), "0 1 2 3 4 5 6 7", "{file}");
        assert_eq!(array_line(&out, "pout.x"), "0 1 2 3", "{file}");
        assert_eq!(array_line(&out, "pout.y"), "1 2 3 4", "{file}");
        // memset's byte 0x11 * (i + 1) in each of the four bytes.
        assert_eq!(
            array_line(&out, "fill"),
            "286331153 572662306 858993459 1145324612",
            "{file}"
        );
    }
}

/// Writes a one-kernel `.cu` file and runs `ksim races` on it with two threads.
fn races(name: &str, body: &str) -> std::process::Output {
    let dir = tmp(&format!("cuda-{name}"));
    let f = dir.join(format!("{name}.cu"));
    std::fs::write(
        &f,
        format!(
            "struct p {{ short x; short y; }};\n__global__ void k(p *in, p *out) {{\n{body}\n}}\n"
        ),
    )
    .unwrap();
    ksim(&[
        "races",
        f.to_str().unwrap(),
        "--block",
        "2",
        "--input",
        "in.x=1,2",
        "--input",
        "in.y=3,4",
        "--input",
        "out.x=zeros:2",
        "--input",
        "out.y=zeros:2",
    ])
}

#[test]
fn memcpy_faults_and_races_per_element() {
    // Two elements from each thread's own: thread 0 writes out[1], as thread 1 does.
    let o = races(
        "overlap",
        "  memcpy(&out[threadIdx.x], &in[0], 2 * sizeof(p));",
    );
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(t.contains("data race on out.x[1]"), "{t}");
    // Thread 1's second element is past the end.
    let o = races(
        "overstep",
        "  memcpy(&out[threadIdx.x], &in[threadIdx.x], 2 * sizeof(p));",
    );
    assert!(
        text(&o).contains("out-of-bounds access in.x[2]"),
        "{}",
        text(&o)
    );
    let o = races("null", "  memcpy(0, &in[threadIdx.x], sizeof(p));");
    assert!(
        text(&o).contains("null pointer dereference"),
        "{}",
        text(&o)
    );
}

#[test]
fn byte_level_copies_are_refused_by_name() {
    for (name, body, what) in [
        (
            "part",
            "  memcpy(&out[0], &in[0], 3);",
            "part of an element of 4 bytes",
        ),
        (
            "mixed",
            "  memcpy(&out[0], (int *)&in[0], 4);",
            "between different element types",
        ),
        (
            "varlen",
            "  size_t n = 4;\n  memcpy(&out[0], &in[0], n);",
            "a length not known when the kernel is read",
        ),
        (
            "fillfloat",
            "  float f[2];\n  memset(f, 1, 8);\n  out[0].x = f[0];",
            "a byte other than 0",
        ),
    ] {
        let o = races(name, body);
        let t = text(&o);
        assert_eq!(o.status.code(), Some(2), "{name}: {t}");
        assert!(t.contains(what), "{name}: {t}");
        assert!(t.contains(&format!("{name}.cu:")), "{name}: {t}");
    }
}

#[test]
fn atomic_inc_and_dec_wrap_as_cuda_says_and_match_their_twin() {
    for (file, launch) in [
        ("atomic_wrap.cu", "--block"),
        ("atomic_wrap.cl", "--local-size"),
    ] {
        let f = k(file);
        let o = ksim(&[
            "run",
            &f,
            launch,
            "8",
            "--input",
            "ring=0",
            "--input",
            "down=9",
            "--input",
            "got=zeros:8",
        ]);
        let out = stdout(&o);
        assert_eq!(o.status.code(), Some(0), "{file}: {}", text(&o));
        // 0 → 1 → 2 → 0 → ...: eight increments modulo 3 end at 2.
        assert_eq!(array_line(&out, "ring"), "2", "{file}");
        assert_eq!(array_line(&out, "got"), "0 1 2 0 1 2 0 1", "{file}");
        // 9 > 5 → 5, 4, 3, 2, 1, 0, then 0 → 5, 4.
        assert_eq!(array_line(&out, "down"), "4", "{file}");
        let o = ksim(&[
            "races",
            &f,
            launch,
            "8",
            "--input",
            "ring=0",
            "--input",
            "down=9",
            "--input",
            "got=zeros:8",
        ]);
        assert_eq!(o.status.code(), Some(0), "{file}: {}", text(&o));
    }
}

#[test]
fn a_struct_argument_of_a_function_without_a_body_enters_its_hash_by_members() {
    let dir = tmp("cuda-uf-struct");
    let f = dir.join("k.cu");
    std::fs::write(
        &f,
        "struct s { int a; int b; };\n__device__ int h(s x);\n\
         __global__ void k(s *in, int *out) {\n  out[threadIdx.x] = h(in[threadIdx.x]);\n}\n",
    )
    .unwrap();
    let o = ksim(&[
        "run",
        f.to_str().unwrap(),
        "--block",
        "3",
        "--input",
        "in.a=1,1,1",
        "--input",
        "in.b=2,2,3",
        "--input",
        "out=zeros:3",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let out = array_line(&stdout(&o), "out");
    let v: Vec<&str> = out.split_whitespace().collect();
    // Equal structs give equal results; a different member, a different one.
    assert_eq!(v[0], v[1], "{out}");
    assert_ne!(v[1], v[2], "{out}");
}
