//! Barrier divergence is reported by every command and engine, never an "all clear"
//! (issue 13 item 6, issue 10 item 1): `run --engine fast` prints exactly what
//! `--engine reference` prints, `races` exits 1, and `gpu compare` never launches a
//! divergent kernel on a device (PoCL segfaults or hangs on one).

mod common;
use common::{ksim, text, text_without_engine};

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
            assert_eq!(
                text_without_engine(&r),
                text_without_engine(&f),
                "{file} {n}"
            );
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

/// Divergence names where each side stood (issue 10 item 1): the barrier statements with
/// their threads, or the threads that terminated; in text and in JSON, the same from both
/// engines and from `races`.
#[test]
fn divergence_names_the_barriers_and_the_threads_on_each_side() {
    let cases = [
        (
            "tests/kernels/two_barriers.ksim",
            vec![
                "threads 0, 1 wait here",
                "threads 2, 3 wait here",
                "threads 0, 1 wait at the barrier at tests/kernels/two_barriers.ksim:4:32",
                "threads 2, 3 wait at the barrier at tests/kernels/two_barriers.ksim:4:52",
            ],
            serde_json::json!([
                {"barrier": {"start": 196, "end": 206}, "threads": [0, 1]},
                {"barrier": {"start": 216, "end": 226}, "threads": [2, 3]},
            ]),
        ),
        (
            "tests/kernels/early_exit_barrier.ksim",
            vec![
                "threads 0, 1 wait here",
                "threads 2, 3 have terminated",
                "early_exit_barrier.ksim:5:18",
            ],
            serde_json::json!([
                {"barrier": {"start": 208, "end": 218}, "threads": [0, 1]},
                {"barrier": null, "threads": [2, 3]},
            ]),
        ),
    ];
    for (file, texts, sides) in cases {
        let src = std::fs::read_to_string(file).unwrap();
        for side in sides.as_array().unwrap() {
            if let Some(start) = side["barrier"]["start"].as_u64() {
                assert!(src[start as usize..].starts_with("barrier()"), "{file}");
            }
        }
        for cmd in [
            &["run", "--engine", "reference"][..],
            &["run", "--engine", "fast"],
            &["races"],
        ] {
            let mut args = vec![cmd[0], file, "-D", "n=4"];
            args.extend(&cmd[1..]);
            let o = ksim(&args);
            for t in &texts {
                assert!(text(&o).contains(t), "{args:?}: {t}\n{}", text(&o));
            }
            args.push("--json");
            let o = ksim(&args);
            let doc: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
            assert_eq!(doc["divergences"][0]["sides"], sides, "{args:?}");
        }
    }
}
