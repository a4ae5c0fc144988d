//! Times one exhaustive exploration of one kernel file: the figures of docs/performance.md
//! for multi-group state caching and for long barrier intervals.
//!
//! ```text
//! cargo run --release -p sim --example explore_file -- FILE [NAME=VALUE ...]
//! ```
//!
//! Size parameters come as `NAME=VALUE`; the step bound is 10^6.

use interp::{Launch, LaunchOptions};
use sim::explore::{exhaustive, Config};
use std::sync::Arc;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first() else {
        eprintln!("usage: explore_file FILE [NAME=VALUE ...]");
        std::process::exit(2);
    };
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| {
        eprintln!("{path}: {e}");
        std::process::exit(2)
    });
    let kernel = match lang::parse::parse(&text).and_then(|k| lang::check::check(&k)) {
        Ok(k) => k,
        Err(e) => {
            eprintln!("{path}: {e:?}");
            std::process::exit(2)
        }
    };
    let defines = args[1..]
        .iter()
        .filter_map(|a| a.split_once('='))
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .collect();
    let opts = LaunchOptions {
        defines,
        max_steps: Some(1_000_000),
        ..Default::default()
    };
    let launch = Launch::new(Arc::new(kernel), &opts).unwrap_or_else(|e| {
        eprintln!("{path}: {e:?}");
        std::process::exit(2)
    });
    let s = exhaustive(&launch, &Config::default(), None);
    println!(
        "{} complete, {} pruned ({} cache hits), {} states, {} steps, caching {}, {:.3} s, {}",
        s.complete,
        s.pruned,
        s.cache_hits,
        s.states,
        s.steps,
        if s.caching_off.is_some() { "off" } else { "on" },
        s.elapsed.as_secs_f64(),
        s.verdict
    );
}
