//! Benchmark of the reference engine (`interp::exec::run_canonical`: the small-step
//! semantics with race tracking, as `ksim run`, `trace` and `explore` drive it).
//!
//! ```text
//! cargo run --release -p interp --example reference_bench             # every row
//! cargo run --release -p interp --example reference_bench -- ks 4096  # one row
//! ```
//!
//! Rows: Kogge-Stone (`examples/kogge_stone.ksim`, one group of n threads, `in = iota`) at
//! 1024, 2048, 4096 and 8192 threads, where every step used to scan every thread; a
//! straight-line kernel of 16,000 statements on one element (one thread), where the race
//! tracker used to scan every earlier access of the element; 8,000 barriers in two work-
//! groups of one thread each, where the race tracker used to keep every epoch. Only the
//! run is timed (compiling a 16,000-statement kernel takes longer than running it).

use interp::exec::run_canonical;
use interp::{Launch, LaunchOptions, Monoid};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

fn kogge_stone() -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/kogge_stone.ksim");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `statements` statements `a[0] = a[0] + k;` in one thread.
fn straight_line(statements: usize) -> String {
    let mut s =
        String::from("kernel straight(local int a[1]) launch(groups = 1, local_size = 1)\n{\n");
    for k in 0..statements {
        s.push_str(&format!("    a[0] = a[0] + {};\n", k % 7));
    }
    s.push_str("}\n");
    s
}

/// `barriers` rounds of `a[gid] = a[gid] + 1; barrier();` in two groups of one thread.
fn barrier_rounds(barriers: usize) -> String {
    let mut s =
        String::from("kernel barriers(global int a[2]) launch(groups = 2, local_size = 1)\n{\n");
    for _ in 0..barriers {
        s.push_str("    a[gid] = a[gid] + 1;\n    barrier();\n");
    }
    s.push_str("}\n");
    s
}

fn launch(src: &str, defines: Vec<(String, String)>, inputs: Vec<(String, String)>) -> Launch {
    let kernel = lang::check::compile(src).expect("kernel compiles");
    let opts = LaunchOptions {
        defines,
        monoid: Monoid::IntAdd,
        inputs,
        ..Default::default()
    };
    Launch::new(Arc::new(kernel), &opts).expect("launch")
}

fn row(name: &str, l: &Launch) {
    let t = Instant::now();
    let out = run_canonical(l);
    let wall = t.elapsed().as_secs_f64();
    assert!(
        out.fault.is_none() && out.races.is_empty(),
        "{name}: not clean"
    );
    println!(
        "{name:<28} {:>10} steps {:>9.3} s {:>8.2} Msteps/s",
        out.steps,
        wall,
        out.steps as f64 / wall / 1e6
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let only = |name: &str| args.is_empty() || args[0] == name;
    if only("ks") {
        let sizes: Vec<usize> = match args.get(1) {
            Some(n) => vec![n.parse().expect("thread count")],
            None => vec![1024, 2048, 4096, 8192],
        };
        let src = kogge_stone();
        for n in sizes {
            let l = launch(
                &src,
                vec![("n".into(), n.to_string())],
                vec![("in".into(), "iota".into())],
            );
            row(&format!("kogge_stone n={n}"), &l);
        }
    }
    if only("straight") {
        row(
            "straight-line 16000 stmts",
            &launch(&straight_line(16_000), vec![], vec![]),
        );
    }
    if only("barriers") {
        row(
            "8000 barriers, 2 groups",
            &launch(&barrier_rounds(8_000), vec![], vec![]),
        );
    }
}
