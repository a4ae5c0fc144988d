//! POPL 2014 Table 4 on this machine: for Kogge-Stone, Sklansky, Brent-Kung and Blelloch,
//! the time of the single interval-of-summations test (I rows) and of Voigtländer's
//! n(n+1)/2 + n-1 tests (V rows, capped per cell), at n = 2^9 .. 2^14 and 2^18 .. 2^20.
//!
//! ```text
//! cargo run --release -p sim --example table4 -- [--cap SECS] [--sizes 9,10,...]
//!     [--kernels kogge_stone,...] [--threads N] [--skip-after-cap] [--interval-only]
//! ```
//!
//! I cells are end to end, like the paper's: parse and type-check the kernel, bind the
//! launch, prepare the singleton input, run with race detection (fast executor, all cores),
//! compare. V cells: the kernel is loaded once per size (as the paper's wrapper does), then
//! every test is one run (fast executor, one core per run, `--threads` runs in parallel,
//! default one per core), stopping at the cap: `>60 s (k of N)` says how many passed.
//! `--skip-after-cap` leaves the V cells after a capped one empty (`-`, as the paper
//! does); `--interval-only` measures the I rows alone.

use interp::launch::{Launch, LaunchOptions};
use sim::verify::voigtlaender::{self, VoigtOptions};
use sim::verify::{interval_test, ScanArrays, ScanKind};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

const KERNELS: [(&str, &str, ScanKind); 4] = [
    ("kogge_stone", "Kogge-Stone", ScanKind::Inclusive),
    ("sklansky", "Sklansky", ScanKind::Inclusive),
    ("brent_kung", "Brent-Kung", ScanKind::Inclusive),
    ("blelloch", "Blelloch", ScanKind::Exclusive),
];

fn main() {
    let mut cap = 60.0f64;
    let mut sizes: Vec<u32> = vec![9, 10, 11, 12, 13, 14, 18, 19, 20];
    let mut kernels: Vec<String> = KERNELS.iter().map(|k| k.0.to_string()).collect();
    let mut threads = 0usize;
    let mut skip_after_cap = false;
    let mut interval_only = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut val = || args.next().unwrap_or_else(|| panic!("{a} needs a value"));
        match a.as_str() {
            "--cap" => cap = val().parse().expect("--cap SECS"),
            "--sizes" => {
                sizes = val()
                    .split(',')
                    .map(|s| s.trim().parse().expect("--sizes 9,10,..."))
                    .collect()
            }
            "--kernels" => kernels = val().split(',').map(String::from).collect(),
            "--threads" => threads = val().parse().expect("--threads N"),
            "--skip-after-cap" => skip_after_cap = true,
            "--interval-only" => interval_only = true,
            other => panic!("unknown argument {other}"),
        }
    }
    let examples = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let cores = std::thread::available_parallelism().map_or(1, |p| p.get());
    println!(
        "# ksim Table 4: I = interval test, V = Voigtländer tests (cap {cap} s per cell); \
         {cores} cores, V on {} worker threads",
        if threads == 0 { cores } else { threads }
    );
    let head: Vec<String> = sizes.iter().map(|e| format!("2^{e}")).collect();
    println!("\n| n | | {} |", head.join(" | "));
    println!("|---|---|{}", "---:|".repeat(sizes.len()));
    let counts: Vec<String> = sizes
        .iter()
        .map(|&e| fmt_count(voigtlaender::test_count(1usize << e)))
        .collect();
    println!("| #Voigtländer tests | | {} |", counts.join(" | "));
    for (file, title, kind) in KERNELS {
        if !kernels.iter().any(|k| k == file) {
            continue;
        }
        let path = examples.join(format!("{file}.ksim"));
        let mut v_row = Vec::new();
        let mut i_row = Vec::new();
        let mut capped = false;
        for &e in &sizes {
            let n = 1usize << e;
            // I: end to end.
            let t0 = Instant::now();
            let (launch, arrays) = load(&path, n);
            let rep = interval_test(&launch, &arrays, kind);
            let i_time = t0.elapsed();
            assert!(
                rep.verdict.is_verified(),
                "{file} at n = {n}: interval test says {}",
                rep.verdict.name()
            );
            i_row.push(fmt_secs(i_time));
            // V.
            if interval_only || (capped && skip_after_cap) {
                v_row.push("-".to_string());
                continue;
            }
            let vr = voigtlaender::run_tests(
                &launch,
                &arrays,
                kind,
                &VoigtOptions {
                    timeout: Some(Duration::from_secs_f64(cap)),
                    threads,
                    race_free: false,
                },
            );
            match &vr.verdict {
                None => {
                    capped = true;
                    v_row.push(format!(
                        ">{cap} s ({} of {})",
                        fmt_count(vr.passed),
                        fmt_count(vr.total)
                    ))
                }
                Some(v) if v.is_verified() => v_row.push(fmt_secs(vr.time)),
                Some(v) => panic!("{file} at n = {n}: Voigtländer tests say {}", v.name()),
            }
            eprintln!(
                "{title} n=2^{e}: I {} V {}",
                i_row.last().unwrap(),
                v_row.last().unwrap()
            );
        }
        println!("| **{title}** | V | {} |", v_row.join(" | "));
        println!("| | I | {} |", i_row.join(" | "));
    }
}

fn load(path: &std::path::Path, n: usize) -> (Launch, ScanArrays) {
    let text = std::fs::read_to_string(path).expect("the example");
    let kernel = lang::parse::parse(&text)
        .and_then(|k| lang::check::check(&k))
        .unwrap_or_else(|_| panic!("{} does not check", path.display()));
    let opts = LaunchOptions {
        defines: vec![("n".into(), n.to_string())],
        ..LaunchOptions::default()
    };
    let launch = Launch::new(Arc::new(kernel), &opts).expect("a launch");
    let arrays = ScanArrays::find(&launch, "in", "out").expect("in and out of type T");
    (launch, arrays)
}

fn fmt_secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s < 0.01 {
        format!("{s:.4}")
    } else if s < 10.0 {
        format!("{s:.2}")
    } else {
        format!("{s:.1}")
    }
}

fn fmt_count(c: u64) -> String {
    if c < 10_000_000 {
        let s = c.to_string();
        let mut out = String::new();
        for (i, ch) in s.chars().enumerate() {
            if i > 0 && (s.len() - i).is_multiple_of(3) {
                out.push(',');
            }
            out.push(ch);
        }
        out
    } else {
        let exp = (c as f64).log10().floor() as i32;
        format!("{:.1}e{exp}", c as f64 / 10f64.powi(exp))
    }
}
