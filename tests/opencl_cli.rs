//! `ksim` on `.cl` kernels from the command line: each command, the OpenCL launch options,
//! and errors that point into the original file.

mod common;
use common::{ksim, ksim_in, stdout, text};

const KS: &str = "examples/opencl/kogge_stone.cl";
const LAUNCH: [&str; 8] = [
    "--global",
    "8",
    "--local",
    "8",
    "--input",
    "in=iota:8",
    "--input",
    "out=zeros:8",
];

fn with<'a>(cmd: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut v = vec![cmd, KS];
    v.extend(LAUNCH);
    v.extend(extra);
    v
}

#[test]
fn check_run_trace_races_and_explore_a_cl_kernel() {
    let o = ksim(&["check", KS]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(stdout(&o).contains("OpenCL kernel `kogge_stone` lowers to the core"));
    let o = ksim(&with("run", &[]));
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        stdout(&o).contains("out = 0 1 3 6 10 15 21 28"),
        "{}",
        text(&o)
    );
    let o = ksim(&with("run", &["--engine", "fast"]));
    assert!(
        stdout(&o).contains("out = 0 1 3 6 10 15 21 28"),
        "{}",
        text(&o)
    );
    let o = ksim(&with("trace", &[]));
    assert!(
        stdout(&o).contains("out[tid] = in[tid]"),
        "the trace shows the OpenCL source: {}",
        text(&o)
    );
    let o = ksim(&with("races", &[]));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let o = ksim(&with("races", &["-D", "RACY"]));
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("data race on out["), "{}", text(&o));
    assert!(
        text(&o).contains("kogge_stone.cl:20:"),
        "the race points into the .cl file: {}",
        text(&o)
    );
    let mut args = with("explore", &["-D", "RACY", "--exhaustive", "--no-reports"]);
    args[3] = "4";
    args[5] = "4";
    args[7] = "in=iota:4";
    args[9] = "out=zeros:4";
    let o = ksim(&args);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
}

#[test]
fn launch_errors_are_usage_errors_with_clear_messages() {
    for (args, msg) in [
        (
            vec!["run", KS, "--global", "16,2", "--local", "8"],
            "--global 16,2 has 2 dimensions but --local 8 has 1",
        ),
        (
            vec!["run", KS, "--global", "16,3", "--local", "8,2"],
            "not a multiple of --local 8,2 in dimension 1 (3 by 2)",
        ),
        (
            vec!["run", KS, "--global", "12", "--local", "8"],
            "not a multiple of --local 8",
        ),
        (vec!["run", KS, "--global", "8"], "--global needs --local"),
        (
            vec!["run", KS, "--local", "8", "--input", "in=iota:8"],
            "buffer `out` (int elements) needs a size",
        ),
        (
            vec![
                "run",
                KS,
                "--local",
                "8",
                "--input",
                "in=iota",
                "--input",
                "out=zeros:8",
            ],
            "no size given",
        ),
        (
            vec!["run", KS, "--local", "8", "--input", "nope=zeros:8"],
            "has no pointer parameter `nope`",
        ),
        (
            vec!["run", KS, "--local", "8", "--arg", "n=3"],
            "has no scalar parameter `n`",
        ),
        (
            vec!["run", KS, "--kernel", "other", "--local", "8"],
            "no kernel `other` in this file (its kernels: kogge_stone)",
        ),
        (
            vec!["run", "examples/kogge_stone.ksim", "--arg", "n=3"],
            "--arg is for OpenCL C",
        ),
    ] {
        let o = ksim(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        assert!(text(&o).contains(msg), "{args:?}: {}", text(&o));
    }
}

#[test]
fn language_errors_point_into_the_original_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("defs.h"), "#define LOAD(a, i) (a)[(i)]\n").unwrap();
    std::fs::write(
        dir.path().join("k.cl"),
        "#include \"defs.h\"\n\nkernel void k(__global int *a) {\n    a[0] = atomic_fetch_add(a, 1);\n}\n",
    )
    .unwrap();
    let o = ksim_in(dir.path(), &["check", "k.cl"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).contains("use of undeclared identifier 'atomic_fetch_add'"),
        "{}",
        text(&o)
    );
    assert!(text(&o).contains("k.cl:4:12"), "{}", text(&o));
    std::fs::write(dir.path().join("bad.h"), "int oops = ;\n").unwrap();
    std::fs::write(
        dir.path().join("m.cl"),
        "#include \"bad.h\"\nkernel void k() {}\n",
    )
    .unwrap();
    let o = ksim_in(dir.path(), &["check", "m.cl"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).contains("bad.h:1:12"),
        "an error in an included file: {}",
        text(&o)
    );
    // -I finds headers elsewhere; -D NAME without a value is 1.
    std::fs::create_dir(dir.path().join("inc")).unwrap();
    std::fs::write(
        dir.path().join("inc/n.h"),
        "#if FLAG\n#define N 4\n#endif\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("i.cl"),
        "#include \"n.h\"\nkernel void k(__global int *a) { a[get_global_id(0)] = N; }\n",
    )
    .unwrap();
    let o = ksim_in(
        dir.path(),
        &[
            "run",
            "i.cl",
            "-I",
            "inc",
            "-D",
            "FLAG",
            "--global",
            "4",
            "--local",
            "2",
            "--input",
            "a=zeros:4",
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    assert!(stdout(&o).contains("a = 4 4 4 4"), "{}", text(&o));
}

#[test]
fn scalar_arguments_bind_with_arg() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("s.cl"),
        "kernel void s(__global float *y, const __global float *x, float a, int n) {\n\
         int i = get_global_id(0);\n if (i < n) y[i] = a * x[i] + y[i];\n}\n",
    )
    .unwrap();
    let o = ksim_in(
        dir.path(),
        &[
            "run",
            "s.cl",
            "--global",
            "4",
            "--local",
            "4",
            "--arg",
            "a=2",
            "--arg",
            "n=3",
            "--input",
            "x=iota:4",
            "--input",
            "y=1,1,1,1",
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    assert!(stdout(&o).contains("y = 1 3 5 1"), "{}", text(&o));
    let o = ksim_in(
        dir.path(),
        &[
            "run",
            "s.cl",
            "--local",
            "4",
            "--input",
            "x=iota:4",
            "--input",
            "y=zeros:4",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("pass --arg a=VALUE"), "{}", text(&o));
}

/// `gpu compare` on a `.cl` kernel whose buffers are all `__local` with contents from the
/// launch: a device cannot be given those, so it runs the OpenCL C that ksim generates
/// from the lowered core, and its buffers match the simulation's (the program as written
/// on the device: tests/simfile_cli.rs).
#[test]
fn gpu_compare_matches_on_a_cl_kernel() {
    if gpu::device_or_skip("gpu compare of a .cl kernel").is_none() {
        return;
    }
    for extra in [vec![], vec!["-D", "TYPE=uint"]] {
        let mut args = vec!["gpu", "compare", KS];
        args.extend(LAUNCH);
        args.extend(extra.iter().copied());
        let o = ksim(&args);
        assert!(o.status.success(), "{}", text(&o));
        assert!(stdout(&o).contains("match"), "{}", text(&o));
        assert!(
            text(&o).contains("instead of the program as written"),
            "{}",
            text(&o)
        );
    }
}
