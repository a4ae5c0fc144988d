//! CUDA declarations of issue 28's second step: CUDA's vector types with `make_*`,
//! `__exp10f`, curand's MTGP32 state refused by name, and the conformance runner on `.cu`
//! kernels (open scalars tried at the values the kernel compares with; no OpenCL exceptions
//! reported as stale in a CUDA run).

mod common;

use common::{ksim, stdout, text, tmp};

#[allow(dead_code)]
#[path = "../examples/conformance/runner.rs"]
mod runner;

/// Writes `src` as `NAME.cu` in a fresh folder: its path.
fn write(name: &str, src: &str) -> String {
    let dir = tmp(&format!("cuda2-{name}"));
    let f = dir.join(format!("{name}.cu"));
    std::fs::write(&f, src).unwrap();
    f.to_str().unwrap().to_string()
}

/// The values of `array` in `run`'s output.
fn array_line(out: &str, array: &str) -> String {
    out.lines()
        .find_map(|l| {
            let (name, values) = l.split_once('=')?;
            (name.trim() == array).then(|| values.trim().to_string())
        })
        .unwrap_or_else(|| panic!("no array `{array}` in:\n{out}"))
}

#[test]
fn vector_types_and_make_functions_are_cudas() {
    let f = write(
        "vectors",
        "__global__ void k(uint4 *out, int *sum) {\n  uint4 v = {0, 0, 0, 0};\n  \
         int2 p = make_int2(threadIdx.x, 10);\n  v.x = p.x + p.y;\n  v.w = 7;\n  \
         out[threadIdx.x] = v;\n  float4 q = make_float4(1.0f, 2.0f, 3.0f, 4.0f);\n  \
         sum[threadIdx.x] = (int)(q.x + q.y + q.z + q.w) + v.x;\n}\n",
    );
    let o = ksim(&[
        "run",
        &f,
        "--block",
        "2",
        // A buffer of vectors is given in elements: 2 `uint4` are 8.
        "--input",
        "out=zeros:8",
        "--input",
        "sum=zeros:2",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(array_line(&stdout(&o), "sum"), "20 21", "{}", text(&o));
    assert_eq!(
        array_line(&stdout(&o), "out"),
        "10 0 0 7 11 0 0 7",
        "{}",
        text(&o)
    );
}

#[test]
fn exp10f_is_ten_to_the_power() {
    let f = write(
        "exp10",
        "__global__ void k(float *out) {\n  out[0] = __exp10f(2.0f);\n  \
         out[1] = exp10f(1.0f);\n}\n",
    );
    let o = ksim(&["run", &f, "--block", "1", "--input", "out=zeros:2"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(array_line(&stdout(&o), "out"), "100 10", "{}", text(&o));
}

#[test]
fn curand_mtgp32_is_refused_by_name_with_its_place() {
    // GPUVerify's `cuda.h` declares curand: the kernel includes nothing else.
    let f = write(
        "mtgp32",
        "#include <cuda.h>\n__global__ void k(curandStateMtgp32_t *state, float *A) {\n  \
         A[threadIdx.x] = curand(state);\n}\n",
    );
    let o = ksim(&["check", &f]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(t.contains("curand"), "{t}");
    assert!(!t.contains("unknown type"), "{t}");
    assert!(t.contains("mtgp32.cu:2:"), "no place in {t}");
}

/// Runs the conformance runner over `.cu` kernels written to a fresh folder: each row's
/// line and whether it agrees; and the stale exceptions it reports.
fn corpus(kernels: &[(&str, &str)]) -> (Vec<(String, bool)>, Vec<&'static str>) {
    let dir = tmp("cuda2-corpus");
    for (name, src) in kernels {
        let d = dir.join(name);
        std::fs::create_dir_all(&d).expect("a temporary folder");
        std::fs::write(d.join("kernel.cu"), src).expect("a kernel file");
    }
    let report = runner::run(&dir).expect("the runner runs");
    let rows = (report.rows.iter()).map(|r| (r.line(), r.agree)).collect();
    (rows, report.stale_exceptions())
}

#[test]
fn open_scalars_are_tried_at_the_distances_the_kernel_compares() {
    let (rows, stale) = corpus(&[(
        "distance",
        "//xfail:NOT_ALL_VERIFIED\n//--gridDim=1 --blockDim=64\n\
         __global__ void k(int *A, int x) {\n  __requires(x >= 0);\n  __requires(x < 100);\n  \
         if (threadIdx.x == 3) A[threadIdx.x + x] = 1;\n  \
         if (threadIdx.x == 40) A[threadIdx.x] = 2;\n}\n",
    )]);
    // x = 37 = 40 - 3: thread 3 writes A[40], as thread 40 does.
    assert!(rows[0].1, "{:?}", rows[0]);
    assert!(
        rows[0].0.contains("race on A (open scalars = 37)"),
        "{:?}",
        rows[0]
    );
    // The OpenCL corpus's exceptions say nothing of a CUDA run.
    assert!(stale.iter().all(|p| !p.ends_with(".cl")), "{stale:?}");
}

#[test]
fn a_struct_inherits_its_bases_members() {
    let f = write(
        "inherit",
        "struct s { int x; };\nstruct t : s { int y; };\nstruct u : t {};\n\
         __global__ void k(int *out) {\n  u v;\n  v.x = threadIdx.x;\n  v.y = 10;\n  \
         out[threadIdx.x] = v.x + v.y;\n}\n",
    );
    let o = ksim(&["run", &f, "--block", "2", "--input", "out=zeros:2"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(array_line(&stdout(&o), "out"), "10 11", "{}", text(&o));
    // A virtual base is refused by name.
    let f = write(
        "virtual_base",
        "struct s { int x; };\nstruct t : virtual s {};\n\
         __global__ void k(int *out) {\n  t v;\n  v.x = 1;\n  out[0] = v.x;\n}\n",
    );
    let o = ksim(&["check", &f]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("virtual base classes"), "{}", text(&o));
}
