//! CUDA kernels (`.cu`) through clang (issue 28): the kernels of `tests/kernels/cuda/`, their
//! launches in CUDA's words (`--grid`, `--block`, `--shared-bytes`), a `.cu` kernel and its
//! hand-written `.cl` twin, and the CUDA that ksim refuses by name.

mod common;

use common::{ksim, ksim_in, stdout, text, tmp};

const DIR: &str = "tests/kernels/cuda";

fn k(name: &str) -> String {
    format!("{DIR}/{name}")
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

const REDUCE: [&str; 6] = [
    "--input",
    "in=iota:16",
    "--input",
    "out=zeros:2",
    "--uninit",
    "check",
];

#[test]
fn reduction_with_shared_memory_and_syncthreads_is_clean() {
    let f = k("reduce.cu");
    let mut args = vec!["run", &f, "--grid", "2", "--block", "8"];
    args.extend(REDUCE);
    let o = ksim(&args);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(array_line(&stdout(&o), "out"), "28 92", "{}", text(&o));
    let mut args = vec!["races", &f, "--grid", "2", "--block", "8"];
    args.extend(REDUCE);
    let o = ksim(&args);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}

#[test]
fn cuda_kernel_and_its_opencl_twin_agree() {
    for (file, launch) in [
        ("reduce.cu", ["--grid", "2", "--block", "8"]),
        ("reduce.cl", ["--groups", "2", "--local-size", "8"]),
    ] {
        let f = k(file);
        let mut args = vec!["run", f.as_str()];
        args.extend(launch);
        args.extend(REDUCE);
        let o = ksim(&args);
        assert_eq!(o.status.code(), Some(0), "{file}: {}", text(&o));
        let out = stdout(&o);
        assert_eq!(array_line(&out, "out"), "28 92", "{file}: {out}");
        assert_eq!(
            array_line(&out, "partial (group 1)"),
            "92 48 24 26 12 13 14 15",
            "{file}: {out}"
        );
    }
    // The racy twins: the same race in both, reported with both accesses.
    let dir = tmp("cuda-twin");
    let cl = dir.join("reduce_racy.cl");
    let text_cl = std::fs::read_to_string(k("reduce.cl")).unwrap().replacen(
        "    }\n    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);\n",
        "    }\n",
        1,
    );
    std::fs::write(&cl, text_cl).unwrap();
    let racy_cu = common::root().join(k("reduce_racy.cu"));
    for (f, launch) in [
        (racy_cu.to_str().unwrap(), ["--grid", "2", "--block", "8"]),
        (cl.to_str().unwrap(), ["--groups", "2", "--local-size", "8"]),
    ] {
        let mut args = vec!["races", f];
        args.extend(launch);
        args.extend(REDUCE);
        let o = ksim_in(&dir, &args);
        assert_eq!(o.status.code(), Some(1), "{f}: {}", text(&o));
        assert!(
            text(&o).contains("data race on partial[1] (group 0)"),
            "{f}: {}",
            text(&o)
        );
    }
}

#[test]
fn racy_reduction_names_both_accesses_and_replays() {
    let dir = tmp("cuda-racy");
    let f = common::root().join(k("reduce_racy.cu"));
    let f = f.to_str().unwrap();
    let mut args = vec!["races", f, "--grid", "2", "--block", "8"];
    args.extend(REDUCE);
    args.extend(["--report-dir", "r"]);
    let o = ksim_in(&dir, &args);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(
        t.contains("first access:  thread 0 of group 0 reads partial[1]"),
        "{t}"
    );
    assert!(
        t.contains("second access: thread 1 of group 0 writes partial[1]"),
        "{t}"
    );
    assert!(t.contains("reduce_racy.cu:13:7"), "{t}");
    let report = std::fs::read_dir(dir.join("r"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "json"))
        .expect("a race report");
    let o = ksim_in(&dir, &["replay", report.to_str().unwrap()]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(t.contains("partial[1]"), "{t}");
}

#[test]
fn template_kernel_runs_the_instance_the_launch_names() {
    let f = k("scan.cu");
    let o = ksim(&[
        "run",
        &f,
        "--kernel",
        "scan<int,8>",
        "--block",
        "8",
        "--input",
        "data=iota:8",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(array_line(&stdout(&o), "data"), "0 1 3 6 10 15 21 28");
    let o = ksim(&[
        "run",
        &f,
        "--kernel",
        "scan<unsigned int,4>",
        "--block",
        "4",
        "--input",
        "data=1,2,3,4",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(array_line(&stdout(&o), "data"), "1 3 6 10");
    // Without --kernel: the instances are listed.
    let o = ksim(&["check", &f]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("2 kernels (scan<int,8>, scan<unsigned int,4>)"),
        "{}",
        text(&o)
    );
}

#[test]
fn atomics_give_every_update() {
    let f = k("atomics.cu");
    let o = ksim(&[
        "run",
        &f,
        "--grid",
        "2",
        "--block",
        "4",
        "--input",
        "in=iota:8",
        "--input",
        "hist=zeros:5",
        "--input",
        "best=zeros:1",
        "--input",
        "first=zeros:4",
        "--input",
        "bits=0,4294967295",
        "--input",
        "total=zeros:1",
    ]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(array_line(&out, "hist"), "2 2 2 2 -4");
    assert_eq!(array_line(&out, "best"), "7");
    assert_eq!(array_line(&out, "first"), "1 2 3 4");
    assert_eq!(array_line(&out, "bits"), "255 4294967040");
    assert_eq!(array_line(&out, "total"), "28");
}

/// Writes `src` as `NAME.cu` in a fresh folder and runs `ksim check` on it.
fn check_source(name: &str, src: &str, extra: &[&str]) -> std::process::Output {
    let dir = tmp(&format!("cuda-{name}"));
    let f = dir.join(format!("{name}.cu"));
    std::fs::write(&f, src).unwrap();
    let mut args = vec!["check", f.to_str().unwrap()];
    args.extend(extra);
    ksim(&args)
}

#[test]
fn extern_shared_is_sized_by_shared_bytes() {
    let src = "__global__ void k(int *out) {\n  extern __shared__ int s[];\n  \
               s[threadIdx.x] = threadIdx.x;\n  __syncthreads();\n  \
               out[threadIdx.x] = s[blockDim.x - 1 - threadIdx.x];\n}\n";
    let o = check_source("extern_shared", src, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("pass --shared-bytes N"), "{}", text(&o));
    let dir = tmp("cuda-extern-run");
    let f = dir.join("k.cu");
    std::fs::write(&f, src).unwrap();
    let f = f.to_str().unwrap();
    let o = ksim(&[
        "run",
        f,
        "--block",
        "4",
        "--shared-bytes",
        "16",
        "--input",
        "out=zeros:4",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(array_line(&stdout(&o), "out"), "3 2 1 0");
    // 8 bytes hold two ints: thread 2 writes out of bounds.
    let o = ksim(&[
        "run",
        f,
        "--block",
        "4",
        "--shared-bytes",
        "8",
        "--input",
        "out=zeros:4",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
}

#[test]
fn unsupported_cuda_is_refused_by_name_with_its_place() {
    let cases: [(&str, &str, &str); 6] = [
        (
            "texture",
            "texture<float, 1> tex;\n__global__ void k(float *o) {\n  o[0] = tex1Dfetch(tex, 0);\n}\n",
            "textures",
        ),
        (
            "curand",
            "#include <curand_kernel.h>\n__global__ void k(float *o) {\n  curandState s;\n  \
             curand_init(0, 0, 0, &s);\n  o[0] = curand_uniform(&s);\n}\n",
            "curand",
        ),
        (
            "asm",
            "__global__ void k(int *o) {\n  int x;\n  asm(\"mov.u32 %0, 1;\" : \"=r\"(x));\n  \
             o[0] = x;\n}\n",
            "inline PTX",
        ),
        (
            "dynamic",
            "__global__ void child(int *o) { o[0] = 1; }\n__global__ void k(int *o) {\n  \
             child<<<1, 1>>>(o);\n}\n",
            // clang refuses it (without -fgpu-rdc) with its own message.
            "reference to __global__ function",
        ),
        (
            "grid",
            "#include <cooperative_groups.h>\nusing namespace cooperative_groups;\n\
             __global__ void k(int *o) {\n  grid_group g = this_grid();\n  synchronize(g);\n}\n",
            "grid-wide synchronisation",
        ),
        (
            "virtual",
            "struct B { virtual __device__ int f() { return 1; } };\n\
             __global__ void k(int *o) { o[0] = 1; }\n",
            "virtual functions",
        ),
    ];
    for (name, src, what) in cases {
        let o = check_source(name, src, &["--kernel", "k"]);
        let t = text(&o);
        assert_eq!(o.status.code(), Some(2), "{name}: {t}");
        assert!(t.contains(what), "{name}: expected `{what}` in {t}");
        assert!(
            t.contains(&format!("{name}.cu:")),
            "{name}: no place in {t}"
        );
        assert!(!t.contains("panicked"), "{name}: {t}");
    }
}

#[test]
fn several_kernels_are_listed() {
    let src = "__global__ void first(int *o) { o[0] = 1; }\n\
               __global__ void second(int *o) { o[0] = 2; }\n";
    let o = check_source("several", src, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("2 kernels (first, second)"),
        "{}",
        text(&o)
    );
}

#[test]
fn every_command_takes_a_cu_file() {
    let f = k("reduce.cu");
    let launch = [
        "--block",
        "2",
        "--input",
        "in=iota:2",
        "--input",
        "out=zeros:1",
    ];
    for cmd in [
        vec!["check"],
        vec!["run"],
        vec!["trace"],
        vec!["races"],
        vec!["explore", "--exhaustive"],
        vec!["graph"],
    ] {
        let mut args = cmd.clone();
        args.push(&f);
        if cmd[0] != "check" {
            args.extend(launch);
        }
        let o = ksim(&args);
        assert_eq!(o.status.code(), Some(0), "{cmd:?}: {}", text(&o));
    }
}
