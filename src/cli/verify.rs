//! `ksim verify-scan`: verify a generic prefix sum with one test (POPL 2014, Theorem 4.5
//! with Theorem 5.3 and Lemma 5.4), or with Voigtländer's O(n²) tests, or both.

use super::common::*;
use clap::{Args, ValueEnum};
use sim::verify::scan::{self, Request};
use sim::verify::ScanKind;
use std::time::Duration;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Method {
    /// One run with the interval-of-summations monoid (POPL 2014).
    Interval,
    /// Voigtländer's n(n+1)/2 + n-1 tests over {0, 1, 2} (POPL 2008).
    Voigtlaender,
    /// Both, with their times and the ratio.
    Both,
}

#[derive(Args, Debug)]
pub struct VerifyArgs {
    #[command(flatten)]
    pub launch: LaunchArgs,
    /// The kernel claims an exclusive prefix sum (out[0] = identity, out[k] = in[0] ⊕ ... ⊕
    /// in[k-1]) instead of an inclusive one.
    #[arg(long)]
    pub exclusive: bool,
    /// How to verify.
    #[arg(long, value_enum, default_value = "interval")]
    pub method: Method,
    /// The input array (of type T).
    #[arg(
        long = "in",
        id = "in_array",
        value_name = "NAME",
        default_value = "in"
    )]
    pub in_array: String,
    /// The output array (of type T); the prefix sum's length is its number of elements.
    #[arg(
        long = "out",
        id = "out_array",
        value_name = "NAME",
        default_value = "out"
    )]
    pub out_array: String,
    /// Stop the Voigtländer tests after SECS seconds and report how many passed.
    #[arg(long, value_name = "SECS", value_parser = super::limits::parse_timeout)]
    pub timeout: Option<Duration>,
    /// Worker threads for the Voigtländer tests (0: one per core).
    #[arg(long, default_value_t = 0, value_parser = super::limits::parse_jobs)]
    pub threads: usize,
    /// Run every test with warps of W threads in SIMT lock-step (as `ksim run --warp-size`).
    #[arg(long, value_name = "W", value_parser = parse_warp_size)]
    pub warp_size: Option<usize>,
    /// Print a JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

pub fn verify_scan(args: &VerifyArgs) -> CmdResult {
    let (src, kernel, options, notes) = args.launch.load()?;
    eprint!("{notes}");
    let request = Request {
        file: args.launch.file.display().to_string(),
        options,
        input: args.in_array.clone(),
        output: args.out_array.clone(),
        kind: if args.exclusive {
            ScanKind::Exclusive
        } else {
            ScanKind::Inclusive
        },
        method: match args.method {
            Method::Interval => scan::Method::Interval,
            Method::Voigtlaender => scan::Method::Voigtlaender,
            Method::Both => scan::Method::Both,
        },
        timeout: args.timeout,
        threads: args.threads,
        warp_size: args.warp_size,
    };
    let report = scan::verify_scan(kernel, request).map_err(|e| Failure::usage(e.0))?;
    if args.json {
        println!("{}", sim::outcome::to_json(&report));
    } else {
        print_text(&report.text(src.view()));
    }
    Ok(exit_code(report.verified()))
}
