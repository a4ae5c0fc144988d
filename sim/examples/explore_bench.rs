//! Benchmark of schedule exploration: for every example kernel (`examples/*.ksim`) at
//! n = 2, 4, 8, 16, the executions explored with reduction (state caching + source-DPOR)
//! and without (the naive explorer, capped), distinct barrier states, and times.
//!
//! ```text
//! cargo run --release -p sim --example explore_bench [-- NAIVE_CAP SECONDS]
//! ```
//!
//! Prints a Markdown table (kept in docs/performance.md). Inputs: `in=iota`
//! (`array=iota` for left_rotation), default monoid int-add, max steps 100 000.

use interp::{Launch, LaunchOptions};
use sim::explore::{exhaustive, naive, Config, Summary, Verdict};
use std::sync::Arc;
use std::time::Duration;

fn launch(path: &std::path::Path, n: usize) -> Option<Launch> {
    let text = std::fs::read_to_string(path).ok()?;
    let k = lang::parse::parse(&text)
        .and_then(|k| lang::check::check(&k))
        .ok()?;
    let mut opts = LaunchOptions {
        defines: vec![("n".into(), n.to_string())],
        max_steps: Some(100_000),
        ..Default::default()
    };
    for a in ["in", "array"] {
        if k.array(a).is_some() {
            opts.inputs.push((a.into(), "iota".into()));
        }
    }
    Launch::new(Arc::new(k), &opts).ok()
}

fn execs(s: &Summary) -> String {
    let total = s.complete + s.pruned;
    match s.verdict {
        Verdict::Exhaustive => format!("{total}"),
        Verdict::Incomplete(r) => format!(">{total} ({})", r.name()),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let cap: u64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(100_000);
    let secs: f64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(10.0);
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("examples/")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "ksim"))
        .collect();
    files.sort();
    println!("naive explorer capped at {cap} executions or {secs} s; reduced explorer capped at {secs} s\n");
    println!("| example | n | threads | reduced: executions (complete + pruned) | distinct barrier states | final stores | races | reduced time | naive: executions | naive time |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for f in &files {
        let name = f.file_stem().unwrap().to_string_lossy().to_string();
        for n in [2usize, 4, 8, 16] {
            let Some(l) = launch(f, n) else { continue };
            let cfg = Config {
                timeout: Some(Duration::from_secs_f64(secs)),
                ..Default::default()
            };
            let r = exhaustive(&l, &cfg, None);
            let ncfg = Config {
                max_executions: Some(cap),
                timeout: Some(Duration::from_secs_f64(secs)),
                ..Default::default()
            };
            let nv = naive(&l, &ncfg, None);
            println!(
                "| {name} | {n} | {} | {} ({} + {}) | {} | {} | {} | {:.3} s | {} | {:.3} s |",
                l.threads(),
                execs(&r),
                r.complete,
                r.pruned,
                r.states,
                r.finals.len(),
                r.races.len(),
                r.elapsed.as_secs_f64(),
                match nv.verdict {
                    Verdict::Exhaustive => format!("{}", nv.complete),
                    Verdict::Incomplete(_) => format!(">{}", nv.complete),
                },
                nv.elapsed.as_secs_f64(),
            );
        }
    }
}
