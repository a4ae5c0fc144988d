//! The 2015 paper's experiment on the local OpenCL device: a measurement, so a bench
//! binary, not a test. Run with
//!   cargo run -p gpu --release --example storage_experiment -- [DIR]
//! (DIR defaults to /tmp). It writes storage.csv/png (single work-group examples, n = 2..1024) and
//! pipeline.csv/png (multi-work-group scan pipeline, n = 2^11..2^20) and prints the
//! mean times and the 1D/2D ratios.

use gpu::{bench, device_or_skip, rows_for, BenchRow, Storage};
use interp::{Launch, LaunchOptions, Monoid};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

fn mean(rows: &[BenchRow], kernel: &str, size: u64) -> f64 {
    let v: Vec<f64> = rows
        .iter()
        .filter(|r| r.kernel == kernel && r.size == size)
        .map(|r| r.kernel_ns as f64)
        .collect();
    v.iter().sum::<f64>() / v.len() as f64
}

fn report(rows: &[BenchRow], a: &str, b: &str) {
    let sizes: BTreeMap<u64, ()> = rows.iter().map(|r| (r.size, ())).collect();
    println!("| n | {a} (µs) | {b} (µs) | ratio |");
    println!("|---|---|---|---|");
    for &n in sizes.keys() {
        let (x, y) = (mean(rows, a, n), mean(rows, b, n));
        println!("| {n} | {:.1} | {:.1} | {:.2} |", x / 1e3, y / 1e3, x / y);
    }
}

fn main() {
    let Some(dev) = device_or_skip("storage_experiment") else {
        std::process::exit(2);
    };
    let dir = PathBuf::from(std::env::args().nth(1).unwrap_or_else(|| "/tmp".into()));
    std::fs::create_dir_all(&dir).unwrap();
    let repeat = 10;
    let mut rows = Vec::new();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples");
    for name in ["blelloch_tree1d", "blelloch_tree2d"] {
        let src = std::fs::read_to_string(root.join(format!("{name}.ksim"))).unwrap();
        let k = Arc::new(lang::check::compile(&src).unwrap());
        for e in 1..=10 {
            let n = 1usize << e;
            let l = Launch::new(
                k.clone(),
                &LaunchOptions {
                    defines: vec![("n".into(), n.to_string())],
                    inputs: vec![("in".into(), "random:1".into())],
                    ..Default::default()
                },
            )
            .unwrap();
            let t = bench(&l, &dev, 2, repeat).unwrap();
            rows.extend(rows_for(name, n as u64, &dev.info.name, &t));
        }
    }
    gpu::write_csv(&rows, &dir.join("storage.csv")).unwrap();
    gpu::plot(&rows, &dir.join("storage.png")).unwrap();
    println!("single work-group, kernel time, device {}", dev.info.name);
    report(&rows, "blelloch_tree1d", "blelloch_tree2d");

    let mut rows = Vec::new();
    let max_local = dev.info.max_work_group_size.min(1024);
    for s in [Storage::Tree1d, Storage::Tree2d] {
        for e in [11, 12, 14, 16, 18, 20] {
            let n = 1usize << e;
            let input =
                interp::launch::parse_input("random:2", n, lang::core::Ty::Generic, Monoid::IntAdd)
                    .unwrap();
            let p = gpu::scan_pipeline(s, input, max_local, u64::MAX, Monoid::IntAdd).unwrap();
            let r = gpu::run_pipeline(&p, &dev, 2 + repeat).unwrap();
            rows.extend(rows_for(
                &format!("scan_{}", s.name()),
                n as u64,
                &dev.info.name,
                &r.timings[2..],
            ));
        }
    }
    gpu::write_csv(&rows, &dir.join("pipeline.csv")).unwrap();
    gpu::plot(&rows, &dir.join("pipeline.png")).unwrap();
    println!("multi-work-group pipeline (max {max_local} work-items per group), kernel time summed over launches");
    report(&rows, "scan_tree1d", "scan_tree2d");
}
