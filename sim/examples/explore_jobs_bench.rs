//! Benchmark of the parallel exhaustive search (`explore --exhaustive --jobs N`): the same
//! launch explored with 1, 2, ... threads side by side in one run, with wall time, the
//! process's CPU time, and a check that every summary equals the one-thread summary
//! (counts, stores, races and their schedules).
//!
//! ```text
//! cargo run --release -p sim --example explore_jobs_bench [-- FILE N MAX_EXECUTIONS JOBS...]
//! ```
//!
//! N is `n`'s value or a list of defines (`n=2,b=4`; `groups=2` sets the work-groups); MAX_EXECUTIONS 0 means no bound (a
//! complete search: the split of `sim/src/explore/dpor/dag.rs`, not the one of `par.rs`).
//!
//! Default: `examples/kogge_stone_racy.ksim` at n = 16 (`in=iota`), cut at 20 000
//! executions (a deterministic bound: every run does the same search), jobs 1 and 2; each
//! configuration runs three times, in turn, and the best wall time is kept (the machine may
//! be shared). CPU time is read from `/proc/self/stat` (Linux; `-` elsewhere).

use interp::{Launch, LaunchOptions};
use sim::explore::{exhaustive, Config, Summary};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn launch(path: &str, defines: &[(String, String)]) -> Launch {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let k = lang::parse::parse(&text)
        .and_then(|k| lang::check::check(&k))
        .unwrap_or_else(|e| panic!("{path}: {e:?}"));
    // `groups` is the launch's number of work-groups, not a define.
    let groups = defines.iter().find(|(k, _)| k == "groups");
    let mut opts = LaunchOptions {
        defines: defines
            .iter()
            .filter(|(k, _)| k != "groups")
            .cloned()
            .collect(),
        groups: groups.and_then(|(_, v)| v.parse().ok()),
        max_steps: Some(100_000),
        ..Default::default()
    };
    for a in ["in", "array"] {
        if k.array(a).is_some() {
            opts.inputs.push((a.into(), "iota".into()));
        }
    }
    Launch::new(Arc::new(k), &opts).unwrap_or_else(|e| panic!("{path}: {e:?}"))
}

/// User + system CPU time of this process so far.
fn cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which is in parentheses): utime is the 14th field.
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 10)) // USER_HZ is 100 on Linux
}

/// What must not depend on the number of threads.
fn fingerprint(s: &Summary) -> String {
    let finals: Vec<String> = s
        .finals
        .iter()
        .map(|f| format!("{:?} {} {:?}", f.memory, f.count, f.schedule))
        .collect();
    let races: Vec<String> = s
        .races
        .iter()
        .map(|r| format!("{:?} {:?}", r.race, r.schedule))
        .collect();
    format!(
        "{} {} {} {} {} {} {} {} {} {:?} {:?} {:?}",
        s.verdict,
        s.complete,
        s.pruned,
        s.cache_hits,
        s.sleep_blocked,
        s.cut,
        s.states,
        s.steps,
        s.longest,
        finals,
        races,
        s.faults
            .iter()
            .map(|f| (&f.fault, f.count, &f.schedule))
            .collect::<Vec<_>>(),
    )
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let file = args
        .first()
        .cloned()
        .unwrap_or_else(|| format!("{root}/examples/kogge_stone_racy.ksim"));
    // `16` is `n=16`; `n=2,b=4` sets several defines.
    let n = args.get(1).cloned().unwrap_or_else(|| "16".into());
    let defines: Vec<(String, String)> = n
        .split(',')
        .map(|d| match d.split_once('=') {
            Some((k, v)) => (k.into(), v.into()),
            None => ("n".into(), d.into()),
        })
        .collect();
    // 0: no bound (a complete search, see `sim/src/explore/dpor/dag.rs`).
    let max: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(20_000);
    let max = (max > 0).then_some(max);
    let mut jobs: Vec<usize> = args[3.min(args.len())..]
        .iter()
        .filter_map(|s| s.parse().ok())
        .collect();
    if jobs.is_empty() {
        jobs = vec![1, 2];
    }
    let l = launch(&file, &defines);
    println!(
        "{file}, -D {n}, {} threads, --max-executions {}; {} cores available",
        l.threads(),
        max.map_or("none".into(), |m| m.to_string()),
        std::thread::available_parallelism().map_or(0, |c| c.get())
    );
    println!("| jobs | wall (best of 3) | CPU (same run) | executions | states | same summary as jobs 1 |");
    println!("|---|---|---|---|---|---|");
    let mut best: Vec<Option<(Duration, Option<Duration>, Summary)>> = vec![None; jobs.len()];
    for _round in 0..3 {
        for (k, &j) in jobs.iter().enumerate() {
            let cfg = Config {
                max_executions: max,
                jobs: j,
                ..Default::default()
            };
            let (c0, t0) = (cpu_time(), Instant::now());
            let s = exhaustive(&l, &cfg, None);
            let wall = t0.elapsed();
            let cpu = cpu_time().zip(c0).map(|(b, a)| b - a);
            if best[k].as_ref().is_none_or(|b| wall < b.0) {
                best[k] = Some((wall, cpu, s));
            }
        }
    }
    let base = fingerprint(&best[0].as_ref().expect("a run").2);
    for (k, &j) in jobs.iter().enumerate() {
        let (wall, cpu, s) = best[k].as_ref().expect("a run");
        println!(
            "| {j} | {:.3} s | {} | {} | {} | {} |",
            wall.as_secs_f64(),
            cpu.map_or("-".into(), |c| format!("{:.2} s", c.as_secs_f64())),
            s.executions(),
            s.states,
            if fingerprint(s) == base { "yes" } else { "NO" },
        );
    }
}
