//! Barrier divergence is reported by every command and engine, never an "all clear"
//! (issue 13 item 6, issue 10 item 1): `run --engine fast` prints exactly what
//! `--engine reference` prints, `races` exits 1, and `gpu compare` never launches a
//! divergent kernel on a device (PoCL segfaults or hangs on one).

mod common;
use common::{ksim, text};

const KERNELS: [(&str, &str); 2] = [
    (
        "tests/kernels/early_exit_barrier.ksim",
        "wait at a barrier while",
    ),
    (
        "tests/kernels/two_barriers.ksim",
        "wait at 2 different barrier() statements",
    ),
];

/// 4 threads run sequentially; 300 in lock-step batches; 5000 in parallel chunks: every
/// path of the fast executor must see the divergence.
const SIZES: [&str; 3] = ["n=4", "n=300", "n=5000"];

#[test]
fn fast_and_reference_engines_print_the_same_divergence() {
    for (file, what) in KERNELS {
        for n in SIZES {
            let r = ksim(&["run", file, "-D", n, "--engine", "reference"]);
            let f = ksim(&["run", file, "-D", n, "--engine", "fast"]);
            assert_eq!(r.status.code(), Some(1), "{file} {n}: {}", text(&r));
            assert!(text(&r).contains(what), "{file} {n}: {}", text(&r));
            assert_eq!(r.status.code(), f.status.code(), "{file} {n}");
            assert_eq!(r.stdout, f.stdout, "{file} {n}");
            assert_eq!(text(&r), text(&f), "{file} {n}");
        }
    }
}

#[test]
fn races_reports_divergence_and_exits_1() {
    for (file, what) in KERNELS {
        for n in SIZES {
            let o = ksim(&["races", file, "-D", n]);
            let t = text(&o);
            assert_eq!(o.status.code(), Some(1), "{file} {n}: {t}");
            assert!(t.contains(what), "{file} {n}: {t}");
            assert!(!t.contains("race-free"), "{file} {n}: {t}");
            let j = ksim(&["races", file, "-D", n, "--json"]);
            let doc: serde_json::Value = serde_json::from_slice(&j.stdout).expect("JSON");
            assert_eq!(doc["race_free"], false, "{file} {n}");
            assert!(!doc["divergences"].as_array().unwrap().is_empty());
        }
    }
}

#[test]
fn a_uniform_barrier_is_no_divergence() {
    let o = ksim(&["races", "examples/kogge_stone.ksim", "-D", "n=300"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(!text(&o).contains("divergence"), "{}", text(&o));
}

#[test]
fn gpu_compare_never_launches_a_divergent_kernel() {
    for (file, what) in KERNELS {
        for n in ["n=4", "n=8"] {
            let o = ksim(&["gpu", "compare", file, "-D", n]);
            let t = text(&o);
            assert_eq!(o.status.code(), Some(1), "{file} {n}: {t}");
            assert!(t.contains(what), "{file} {n}: {t}");
            assert!(t.contains("not launched on the device"), "{file} {n}: {t}");
        }
    }
}
