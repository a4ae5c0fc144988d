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
    assert!(text(&o).contains(".png, .svg or .pdf"), "{}", text(&o));
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
fn a_sweep_past_the_local_memory_is_refused_before_any_run() {
    let Some(device) = gpu::device_or_skip("bench local memory check") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let k = dir.path().join("big.ksim");
    std::fs::write(
        &k,
        "kernel big(global int out[1], local int a[m]) launch(groups = 1, local_size = 1) {
            a[0] = 1; out[0] = a[0];
        }",
    )
    .unwrap();
    let ints = device.info.local_mem_size / 4;
    let sweep = format!("m={}..{}", ints / 2, ints * 2);
    let csv = dir.path().join("t.csv");
    let o = ksim(&["gpu", "bench", path(&k), "-D", &sweep, "--csv", path(&csv)]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("bytes of local memory"), "{}", text(&o));
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
        "--force",
        "--csv",
        path(&csv),
    ]);
    // Left out (exit 1) even with --force: divergence is undefined on a device.
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("barrier divergence"), "{}", text(&o));
    assert!(text(&o).contains("left out (2)"), "{}", text(&o));
}

#[test]
fn a_racy_kernel_is_reported_and_left_out_unless_forced() {
    if gpu::device_or_skip("bench of a racy kernel").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("t.csv");
    let args = |force: bool| {
        let mut a = vec![
            "gpu",
            "bench",
            "examples/kogge_stone_racy.ksim",
            "examples/kogge_stone.ksim",
            "-D",
            "n=8..16",
            "--repeat",
            "2",
            "--warmup",
            "0",
            "--csv",
            path(&csv),
        ];
        if force {
            a.push("--force");
        }
        a.iter().map(|s| s.to_string()).collect::<Vec<_>>()
    };
    let a = args(false);
    let o = ksim(&a.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("kogge_stone_racy n=8: the simulator found"),
        "{}",
        text(&o)
    );
    let s = gpu::read_csv(&csv).unwrap();
    assert!(
        s.points.iter().all(|p| p.kernel == "kogge_stone"),
        "only the race-free kernel"
    );
    assert_eq!(s.points.len(), 2);
    let a = args(true);
    let o = ksim(&a.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let s = gpu::read_csv(&csv).unwrap();
    let racy: Vec<_> = s
        .points
        .iter()
        .filter(|p| p.kernel == "kogge_stone_racy")
        .collect();
    assert_eq!(racy.len(), 2);
    assert!(racy.iter().all(|p| p.check == gpu::Check::Race));
}

#[test]
fn bench_writes_the_csv_with_metadata_the_json_and_figures() {
    if gpu::device_or_skip("bench").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("t.csv");
    let json = dir.path().join("t.json");
    let svg = dir.path().join("t.svg");
    let pdf = dir.path().join("t.pdf");
    let o = ksim(&[
        "gpu",
        "bench",
        "examples/kogge_stone.ksim",
        "-D",
        "n=2..8",
        "--repeat",
        "3",
        "--warmup",
        "0",
        "--csv",
        path(&csv),
        "--json",
        path(&json),
        "--plot",
        path(&svg),
        "--plot",
        path(&pdf),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        text(&o).contains("median [min–max] of 3 run(s)"),
        "{}",
        text(&o)
    );
    let s = gpu::read_csv(&csv).unwrap();
    assert_eq!(s.points.len(), 3, "three sizes");
    for p in &s.points {
        assert_eq!(p.kernel_samples_ns.len(), 3);
        assert_eq!(
            (p.groups, p.local_size, p.launches),
            (1, p.size as usize, 1)
        );
        assert_eq!(p.input, "in=random:1");
        assert_eq!(p.monoid, "int-add");
        assert!(p.sim.steps > 0 && p.sim.threads == p.size, "{:?}", p.sim);
    }
    let m = &s.meta;
    assert!(!m.device.is_empty() && !m.driver_version.is_empty() && !m.platform.is_empty());
    assert_eq!(m.ksim_version, env!("CARGO_PKG_VERSION"));
    assert!(
        m.date.starts_with("20") && m.command_line.contains("gpu bench"),
        "{m:?}"
    );
    assert_eq!((m.warmup, m.repeat), (0, 3));
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(j["points"].as_array().unwrap().len(), 3);
    assert!(j["points"][0]["sim"]["steps"].as_u64().unwrap() > 0);
    assert!(std::fs::read_to_string(&svg).unwrap().contains("<svg"));
    assert!(std::fs::read(&pdf).unwrap().starts_with(b"%PDF-"));
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(
        names.len(),
        5,
        "csv, sidecar, json, svg, pdf; no temporary file left behind"
    );

    // `ksim plot` redraws from the CSV, also the simulated-vs-real figure.
    let png = dir.path().join("s.png");
    let o = ksim(&[
        "plot",
        path(&csv),
        "--sim-vs-real",
        "--size",
        "4x2.6in",
        "--dpi",
        "300",
        "--plot",
        path(&png),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(text(&o).contains("R² ="), "{}", text(&o));
    assert!(std::fs::read(&png).unwrap().starts_with(b"\x89PNG"));
    // Panels too small for their axes are refused with a size that fits, the figure kept.
    let o = ksim(&[
        "plot",
        path(&csv),
        "--sim-vs-real",
        "--size",
        "3.3x2.2in",
        "--plot",
        path(&png),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("give --size 3.3x"), "{}", text(&o));
    assert!(std::fs::read(&png).unwrap().starts_with(b"\x89PNG"));
    let o = ksim(&["plot", path(&csv), "--size", "3x2", "--plot", path(&png)]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}

#[test]
fn any_array_names_and_monoid() {
    if gpu::device_or_skip("bench with --in/--out/--monoid").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let k = dir.path().join("copy.ksim");
    std::fs::write(
        &k,
        "kernel copy(const local T src[n], local T dst[n], local T tmp[n])
            launch(groups = 1, local_size = n) {
            tmp[tid] = src[tid];
            dst[tid] = tmp[tid] ⊕ tmp[tid];
        }",
    )
    .unwrap();
    let csv = dir.path().join("t.csv");
    let o = ksim(&[
        "gpu",
        "bench",
        path(&k),
        "-D",
        "n=4..8",
        "--in",
        "src",
        "--input",
        "iota",
        "--out",
        "dst",
        "--monoid",
        "int-max",
        "--repeat",
        "1",
        "--csv",
        path(&csv),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let s = gpu::read_csv(&csv).unwrap();
    assert_eq!(s.points.len(), 2);
    for p in &s.points {
        assert_eq!(p.input, "src=iota");
        assert_eq!(p.monoid, "int-max");
        // `tmp` is neither filled nor copied out; `dst` is the only copy-out.
        assert_eq!(p.harness, "copy-in src; copy-out dst");
    }
    let o = ksim(&[
        "gpu",
        "bench",
        path(&k),
        "-D",
        "n=4",
        "--out",
        "nope",
        "--csv",
        path(&csv),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("has no array `nope`"), "{}", text(&o));
    let o = ksim(&[
        "gpu",
        "bench",
        path(&k),
        "-D",
        "n=4",
        "--monoid",
        "list",
        "--csv",
        path(&csv),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("cannot run on an OpenCL device"),
        "{}",
        text(&o)
    );
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

#[test]
fn a_warp_cost_needs_a_valid_warp_size_before_any_run() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("w.csv");
    let bench = |extra: &[&str]| {
        let mut args = vec![
            "gpu",
            "bench",
            "examples/kogge_stone.ksim",
            "-D",
            "n=2..8",
            "--csv",
            path(&csv),
        ];
        args.extend_from_slice(extra);
        ksim(&args)
    };
    let o = bench(&["--sim-vs-real", "--cost", "warp-instructions"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("needs --warp-size"), "{}", text(&o));
    for w in ["0", "65", "x"] {
        let o = bench(&["--warp-size", w]);
        assert_eq!(o.status.code(), Some(2), "--warp-size {w}: {}", text(&o));
        assert!(text(&o).contains("1 to 64"), "{}", text(&o));
    }
    assert!(!csv.exists(), "nothing ran, nothing written");
}

#[test]
fn bench_with_a_warp_size_adds_the_simt_cost_and_plots_time_against_it() {
    if gpu::device_or_skip("bench --warp-size").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("w.csv");
    let json = dir.path().join("w.json");
    let o = ksim(&[
        "gpu",
        "bench",
        "examples/kogge_stone.ksim",
        "-D",
        "n=8..32",
        "--repeat",
        "2",
        "--warmup",
        "0",
        "--warp-size",
        "4",
        "--csv",
        path(&csv),
        "--json",
        path(&json),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let s = gpu::read_csv(&csv).unwrap();
    assert_eq!(s.points.len(), 3);
    for p in &s.points {
        let w = p.sim.warp.expect("a SIMT cost");
        assert_eq!(w.warp_size, 4);
        // A race-free kernel: the lanes execute the statements the threads do.
        assert_eq!(w.lane_steps, p.sim.steps, "{p:?}");
        assert!(w.instructions * 4 >= w.lane_steps && w.instructions < w.lane_steps);
        // `if (tid >= offset)` splits some warp in every round but the last ones.
        assert!(w.divergent_branches > 0, "{w:?}");
    }
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(j["points"][0]["sim"]["warp"]["warp_size"], 4);
    let svg = dir.path().join("w.svg");
    let o = ksim(&[
        "plot",
        path(&csv),
        "--sim-vs-real",
        "--cost",
        "warp-instructions",
        "--plot",
        path(&svg),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        text(&o).contains("time ∝ warp instructions^"),
        "{}",
        text(&o)
    );
    assert!(std::fs::read_to_string(&svg)
        .unwrap()
        .contains("simulated warp instructions"));
}
