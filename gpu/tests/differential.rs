//! Differential tests on OpenCL (PoCL in CI): every example kernel, random inputs,
//! several sizes and monoids, gives on the device exactly what the simulator gives.
//! Skipped (with the reason) without an OpenCL platform unless KSIM_REQUIRE_OPENCL=1.

mod common;

use gpu::{compare, device_or_skip, run};
use interp::{Launch, LaunchOptions, Memory, Monoid};
use std::path::PathBuf;
use std::sync::Arc;

fn examples() -> Vec<(String, String)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let mut out: Vec<(String, String)> = std::fs::read_dir(&dir)
        .expect("examples/")
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "ksim"))
        .map(|p| {
            (
                p.file_stem().unwrap().to_string_lossy().into_owned(),
                std::fs::read_to_string(&p).unwrap(),
            )
        })
        .collect();
    out.sort();
    out
}

/// The simulator ([`interp::canonical::run_preferred`]: the fast executor where it
/// applies, else the reference semantics). Returns the memory and whether the run was
/// clean (no race, no fault, no divergence).
fn simulate(l: &Launch) -> (Memory, bool) {
    let opts = interp::canonical::Options {
        jobs: 1,
        track_races: true,
    };
    let e = interp::canonical::run_preferred(l, &opts).execution;
    let clean = e.is_clean();
    (e.memory, clean)
}

#[test]
fn every_example_matches_the_simulator() {
    let Some(dev) = device_or_skip("every_example_matches_the_simulator") else {
        return;
    };
    let mut checked = 0;
    for (name, src) in examples() {
        let kernel = match lang::check::compile(&src) {
            Ok(k) => Arc::new(k),
            Err(d) => panic!("{name}: does not compile: {d:?}"),
        };
        let arrays: Vec<String> = kernel.arrays.iter().map(|a| a.name.clone()).collect();
        let monoids: &[Monoid] = if kernel.generic {
            &[
                Monoid::IntAdd,
                Monoid::Interval,
                Monoid::IntMax,
                Monoid::FloatAdd,
            ]
        } else {
            &[Monoid::IntAdd]
        };
        for &m in monoids {
            // Every size with int-add; fewer with the other monoids (each distinct
            // program is one PoCL build, about 0.7 s on a cold cache).
            let sizes: &[usize] = if m == Monoid::IntAdd {
                &[2, 8, 32, 128]
            } else {
                &[8, 64]
            };
            for (k, &n) in sizes.iter().enumerate() {
                // Inputs for every const array and for a non-const single array kernel
                // (left_rotation's `array`).
                let inputs: Vec<(String, String)> = kernel
                    .arrays
                    .iter()
                    .filter(|a| a.is_const || arrays.len() == 1)
                    .map(|a| {
                        let spec = if m == Monoid::Interval && a.elem == lang::core::Ty::Generic {
                            "iota".to_string()
                        } else {
                            format!("random:{}", 17 + k)
                        };
                        (a.name.clone(), spec)
                    })
                    .collect();
                let opts = LaunchOptions {
                    defines: vec![("n".into(), n.to_string())],
                    monoid: m,
                    inputs,
                    ..Default::default()
                };
                let l = match Launch::new(kernel.clone(), &opts) {
                    Ok(l) => l,
                    Err(e) => panic!("{name} n={n}: {e}"),
                };
                let (sim, clean) = simulate(&l);
                let dev_run = run(&l, &dev, 1).unwrap_or_else(|e| panic!("{name} n={n} {m}: {e}"));
                let c = compare(&sim, &dev_run.memory, &l, 8);
                if clean {
                    assert!(c.is_match(), "{name} n={n} {m}: {c}\n{}", dev_run.source);
                    checked += 1;
                } else {
                    // A racy (or divergent) kernel: a difference is expected, not a backend
                    // bug.
                    eprintln!(
                        "{name} n={n} {m}: racy or divergent in the simulator; device {}",
                        if c.is_match() { "matches" } else { "differs" }
                    );
                }
            }
        }
    }
    assert!(checked > 0);
    eprintln!("{checked} clean launches matched");
}

#[test]
fn scan_pipeline_simulated_matches_device() {
    let Some(dev) = device_or_skip("scan_pipeline_simulated_matches_device") else {
        return;
    };
    for storage in [gpu::Storage::Tree1d, gpu::Storage::Tree2d] {
        for m in [Monoid::IntAdd, Monoid::Interval] {
            let n = 64;
            let spec = if m == Monoid::Interval {
                "iota"
            } else {
                "random:5"
            };
            let input = interp::launch::parse_input(spec, n, lang::core::Ty::Generic, m).unwrap();
            let p = gpu::scan_pipeline(storage, input.clone(), 4, m).unwrap();
            let sim = gpu::simulate(&p, |l| {
                let o = interp::exec::run_canonical(l);
                if o.is_clean() {
                    Ok(o.memory)
                } else {
                    Err(format!("races {:?} fault {:?}", o.races.len(), o.fault))
                }
            })
            .unwrap_or_else(|e| panic!("{storage:?} {m}: {e}"));
            let d = gpu::run_pipeline(&p, &dev, 1).unwrap();
            let c = gpu::compare_pipeline(&sim, &d.memory, &p, 8);
            assert!(c.is_match(), "{storage:?} {m}: {c}");
            assert_eq!(
                sim.buffers[p.buffer("data").unwrap()],
                gpu::scan::exclusive_scan(&input, m)
            );
        }
    }
}
