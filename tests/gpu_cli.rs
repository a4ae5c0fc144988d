//! `ksim gpu compare` and `ksim gpu bench` from the command line (issue 13 items 9 and 13):
//! options and sizes are checked before any device work, a kernel the simulator found
//! undefined never runs on the device, and what was measured is kept.

use std::path::Path;
mod common;
use common::{ksim, ksim_in, text};

fn path(p: &Path) -> &str {
    p.to_str().expect("UTF-8 temp path")
}

#[test]
fn a_bad_plot_name_is_refused_before_any_run() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("t.csv");
    let jpg = dir.path().join("t.jpg");
    let o = ksim(&[
        "gpu",
        "bench",
        "examples/kogge_stone.ksim",
        "-D",
        "n=2..64",
        "--csv",
        path(&csv),
        "--plot",
        path(&jpg),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains(".png or .svg"), "{}", text(&o));
    assert!(!csv.exists(), "nothing ran, nothing written");
}

#[test]
fn an_output_that_cannot_be_written_is_refused_before_any_run() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("f");
    std::fs::write(&file, "x").unwrap();
    let csv = file.join("t.csv"); // below a plain file
    let o = ksim(&[
        "gpu",
        "bench",
        "examples/kogge_stone.ksim",
        "-D",
        "n=2..64",
        "--csv",
        path(&csv),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("cannot write"), "{}", text(&o));
}

#[test]
fn a_scan_pipeline_beyond_the_size_limit_is_refused() {
    for n in ["2147483648", "536870912"] {
        let o = ksim(&["gpu", "compare", "scan:tree1d", "-D", &format!("n={n}")]);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        assert!(
            text(&o).contains("larger than ksim supports"),
            "{}",
            text(&o)
        );
    }
    let o = ksim(&["gpu", "compare", "scan:tree2d", "-D", "n=12"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("power of two"), "{}", text(&o));
}

#[test]
fn a_sweep_over_the_work_group_maximum_is_refused_before_any_run() {
    let Some(device) = gpu::device_or_skip("bench sweep check") else {
        return;
    };
    let max = device.info.max_work_group_size;
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("t.csv");
    let sweep = format!("n=2..{}", (max + 1).next_power_of_two());
    let o = ksim(&[
        "gpu",
        "bench",
        "examples/kogge_stone.ksim",
        "-D",
        &sweep,
        "--csv",
        path(&csv),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("nothing was run"), "{}", text(&o));
    assert!(!csv.exists());
}

#[test]
fn an_undefined_kernel_is_never_benchmarked() {
    if gpu::device_or_skip("bench of a divergent kernel").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("t.csv");
    let o = ksim(&[
        "gpu",
        "bench",
        "tests/kernels/divergent_copy.ksim",
        "-D",
        "n=4..8",
        "--csv",
        path(&csv),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("barrier divergence"), "{}", text(&o));
    assert!(!csv.exists());
}

#[test]
fn bench_writes_the_csv_and_the_plot() {
    if gpu::device_or_skip("bench").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("t.csv");
    let svg = dir.path().join("t.svg");
    let o = ksim(&[
        "gpu",
        "bench",
        "examples/kogge_stone.ksim",
        "-D",
        "n=2..8",
        "--repeat",
        "2",
        "--warmup",
        "0",
        "--csv",
        path(&csv),
        "--plot",
        path(&svg),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let rows = gpu::read_csv(&csv).unwrap();
    assert_eq!(rows.len(), 3 * 2, "three sizes, two timed runs each");
    assert!(std::fs::read_to_string(&svg).unwrap().contains("<svg"));
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(names.len(), 2, "no temporary file left behind");
}

#[test]
fn compare_of_a_racy_kernel_exits_1_and_says_why() {
    if gpu::device_or_skip("compare of a racy kernel").is_none() {
        return;
    }
    let o = ksim(&[
        "gpu",
        "compare",
        "examples/kogge_stone_racy.ksim",
        "-D",
        "n=8",
        "--input",
        "in=iota",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("not meaningful"), "{}", text(&o));
}

#[test]
fn a_crash_of_the_opencl_compiler_is_reported_not_shared() {
    if gpu::device_or_skip("compare on a kernel PoCL's compiler aborts on").is_none() {
        return;
    }
    // Run elsewhere: PoCL dumps a `.dot` file into the working directory when it aborts.
    let dir = tempfile::tempdir().unwrap();
    let kernel = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kernels/pocl_crash.ksim");
    let o = ksim_in(dir.path(), &["gpu", "compare", path(&kernel)]);
    let t = text(&o);
    match o.status.code() {
        Some(0) => assert!(t.contains("match"), "{t}"), // an implementation without the bug
        Some(2) => assert!(t.contains("the OpenCL implementation crashed"), "{t}"),
        other => panic!("exit {other:?}: {t}"),
    }
}
