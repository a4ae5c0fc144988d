//! Benchmark of the fast executor (`interp::fast`).
//!
//! ```text
//! cargo run --release -p interp --example fast_bench            # full table
//! cargo run --release -p interp --example fast_bench -- ks 20   # one kernel, n = 2^20
//! cargo run --release -p interp --example fast_bench -- ks 20 t2   # ... tracked, 2 workers
//! cargo run --release -p interp --example fast_bench -- native  # plain Rust loops
//! cargo run --release -p interp --example fast_bench -- warps   # lock-step warps of 32 vs none
//! cargo run --release -p interp --example fast_bench -- ks 20 t1w32  # ... warps of 32
//! ```
//!
//! Prints, per kernel and size: wall time and CPU time (user + system, all workers) of
//! `fast::run` (median of a few runs) with race tracking on 1 and 2 workers, without race
//! tracking on 1 and 2 workers, thread-steps per second (steps / wall; with lock-step warps,
//! lane-steps / wall, where `steps` counts warp instructions), and the peak
//! resident memory (VmHWM from /proc/self/status) of a fresh process that builds the launch
//! (input included) and runs it: every configuration runs in its own child process.

use interp::fast::{self, FastOptions};
use interp::{Launch, LaunchOptions, Monoid};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

/// Kogge-Stone from POPL 2014 Fig. 2, used when examples/kogge_stone.ksim is missing.
const KOGGE_STONE: &str = "
kernel kogge_stone(const local T in[n], local T out[n])
    launch(groups = 1, local_size = n)
{
    out[tid] = in[tid];
    barrier();
    for (int offset = 1; offset < n; offset *= 2) {
        T temp;
        if (tid >= offset) temp = out[tid - offset];
        barrier();
        if (tid >= offset) out[tid] = temp ⊕ out[tid];
        barrier();
    }
}
";

fn source(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../examples")
        .join(format!("{name}.ksim"));
    match std::fs::read_to_string(&path) {
        Ok(s) => s,
        Err(_) if name == "kogge_stone" => KOGGE_STONE.to_string(),
        Err(e) => panic!("{}: {e}", path.display()),
    }
}

fn launch(src: &str, n: usize) -> Launch {
    let kernel = lang::check::compile(src).expect("kernel compiles");
    let opts = LaunchOptions {
        defines: vec![("n".into(), n.to_string())],
        monoid: Monoid::IntAdd,
        inputs: vec![("in".into(), "random:1".into())],
        ..Default::default()
    };
    Launch::new(Arc::new(kernel), &opts).expect("launch")
}

/// The floor: the same scans as plain Rust loops at n = 2^20 (int addition): a sequential
/// inclusive scan, and Kogge-Stone's rounds with a copy per round (what the kernel computes).
fn native() {
    let n = 1usize << 20;
    let input: Vec<i32> = (0..n as i32).map(|i| i.wrapping_mul(7919) % 100).collect();
    let t = Instant::now();
    let mut out = input.clone();
    for i in 1..n {
        out[i] = out[i].wrapping_add(out[i - 1]);
    }
    let seq = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let mut ks = input.clone();
    let mut tmp = vec![0i32; n];
    let mut offset = 1;
    while offset < n {
        tmp[..offset].copy_from_slice(&ks[..offset]);
        for i in offset..n {
            tmp[i] = ks[i - offset].wrapping_add(ks[i]);
        }
        std::mem::swap(&mut ks, &mut tmp);
        offset *= 2;
    }
    let kst = t.elapsed().as_secs_f64();
    assert_eq!(ks, out);
    println!(
        "native Rust at n = 2^20: sequential scan {:.2} ms, Kogge-Stone rounds {:.2} ms",
        seq * 1e3,
        kst * 1e3
    );
}

/// One configuration in this (fresh) process: prints `wall cpu steps intervals races MiB`.
fn child(args: &[String]) {
    let (name, e, cfg, reps) = (&args[0], &args[1], &args[2], &args[3]);
    let n = 1usize << e.parse::<u32>().expect("exponent");
    let mut l = launch(&source(name), n);
    let (jobs, warp) = cfg[1..].split_once('w').unwrap_or((&cfg[1..], ""));
    l.warp_size = (!warp.is_empty()).then(|| warp.parse().expect("warp size"));
    let m = measure(
        &l,
        jobs.parse().expect("jobs"),
        cfg.starts_with('t'),
        reps.parse().expect("reps"),
    );
    println!(
        "{} {} {} {} {} {} {}",
        m.secs, m.cpu, m.steps, m.intervals, m.races, m.hwm_mib, m.lane_steps
    );
}

fn vm_hwm_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// User + system CPU time of the process so far, in seconds.
fn cpu_secs() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name (which ends with ')'): utime is the 14th field.
    let rest = stat.rsplit_once(')').map(|x| x.1).unwrap_or("");
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f.get(11).and_then(|x| x.parse().ok()).unwrap_or(0.0)
        + f.get(12).and_then(|x| x.parse().ok()).unwrap_or(0.0);
    ticks / 100.0
}

struct Measure {
    secs: f64,
    cpu: f64,
    steps: u64,
    intervals: u64,
    races: usize,
    hwm_mib: f64,
    /// Thread steps: `steps`, or the lanes' steps with lock-step warps.
    lane_steps: u64,
}

fn measure(l: &Launch, jobs: usize, track: bool, reps: usize) -> Measure {
    let mut times = Vec::new();
    let mut cpus = Vec::new();
    let mut last = None;
    for _ in 0..reps {
        let c = cpu_secs();
        let t = Instant::now();
        let out = fast::run(
            l,
            &FastOptions {
                jobs,
                track_races: track,
            },
        )
        .expect("supported");
        times.push(t.elapsed().as_secs_f64());
        cpus.push(cpu_secs() - c);
        assert!(out.fault.is_none(), "{:?}", out.fault);
        last = Some(out);
    }
    times.sort_by(f64::total_cmp);
    cpus.sort_by(f64::total_cmp);
    let out = last.unwrap();
    Measure {
        secs: times[times.len() / 2],
        cpu: cpus[cpus.len() / 2],
        steps: out.steps,
        intervals: out.intervals,
        races: out.races.len(),
        hwm_mib: vm_hwm_kib() as f64 / 1024.0,
        lane_steps: out.simt.as_ref().map_or(out.steps, |c| c.total.lane_steps),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--child") {
        return child(&args[1..]);
    }
    let kernels: Vec<(&str, &str)> = vec![
        ("ks", "kogge_stone"),
        ("bk", "brent_kung"),
        ("bl", "blelloch"),
        ("ksr", "kogge_stone_racy"),
    ];
    // Optional third argument: one configuration, `t1` `t2` `n1` `n2` (tracked or not,
    // workers), with `wW` appended for lock-step warps of W lanes (`t1w32`).
    let warps = args.first().map(String::as_str) == Some("warps");
    let configs: Vec<String> = match args.get(2) {
        Some(c) => vec![c.clone()],
        None if warps => ["t1", "t1w32", "n1", "n1w32"].map(String::from).to_vec(),
        None => ["t1", "t2", "n1", "n2"].map(String::from).to_vec(),
    };
    let (selected, sizes): (Vec<(&str, &str)>, Vec<u32>) = match &args[..args.len().min(2)] {
        [k, e] => (
            kernels.iter().copied().filter(|(s, _)| s == k).collect(),
            vec![e.parse().expect("exponent")],
        ),
        _ if warps => (kernels[..3].to_vec(), vec![20]),
        _ => (kernels[..3].to_vec(), vec![10, 14, 18, 20]),
    };
    if args.first().map(String::as_str) == Some("native") {
        return native();
    }
    if args.is_empty() {
        native();
    }
    println!(
        "kernel       n        steps      intervals  mode            jobs  warp  wall(ms)  cpu(ms)  Msteps/s  peak RSS(MiB)  races"
    );
    for (_, name) in selected {
        for &e in &sizes {
            let reps = if e <= 14 { 7 } else { 3 };
            for cfg in &configs {
                let track = cfg.starts_with('t');
                let (jobs, warp) = cfg[1..].split_once('w').unwrap_or((&cfg[1..], "-"));
                let exe = std::env::current_exe().expect("own path");
                let out = std::process::Command::new(exe)
                    .args(["--child", name, &e.to_string(), cfg, &reps.to_string()])
                    .output()
                    .expect("child runs");
                let line = String::from_utf8_lossy(&out.stdout);
                let f: Vec<f64> = line
                    .split_whitespace()
                    .map(|x| x.parse().expect("child output"))
                    .collect();
                let m = Measure {
                    secs: f[0],
                    cpu: f[1],
                    steps: f[2] as u64,
                    intervals: f[3] as u64,
                    races: f[4] as usize,
                    hwm_mib: f[5],
                    lane_steps: f[6] as u64,
                };
                println!(
                    "{name:<12} 2^{e:<6} {:<10} {:<10} {:<15} {jobs:<5} {warp:<4}  {:>8.1}  {:>7.0}  {:>8.1}  {:>13.1}  {}",
                    m.steps,
                    m.intervals,
                    if track { "races tracked" } else { "no race check" },
                    m.secs * 1e3,
                    m.cpu * 1e3,
                    m.lane_steps as f64 / m.secs / 1e6,
                    m.hwm_mib,
                    m.races,
                );
            }
        }
    }
}
