//! `ksim verify-scan`: verify a generic prefix sum with one test (POPL 2014, Theorem 4.5
//! with Theorem 5.3 and Lemma 5.4), or with Voigtländer's O(n²) tests, or both.

use super::common::*;
use super::run::{launch_json, race_json};
use clap::{Args, ValueEnum};
use interp::{Launch, Monoid, Value};
use serde_json::json;
use sim::verify::demo::{self, ListDemo};
use sim::verify::voigtlaender::{self, VoigtOptions, VoigtReport};
use sim::verify::{self as v, IntervalReport, ScanArrays, ScanKind, Verdict};
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
    /// Print a JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

pub fn verify_scan(args: &VerifyArgs) -> CmdResult {
    let (src, kernel) = load(&args.launch.file)?;
    if args.launch.monoid != Monoid::IntAdd {
        return Err(Failure::usage(format!(
            "--monoid {}: verify-scan chooses its monoids itself (interval, voigt1, voigt2, list)",
            args.launch.monoid
        )));
    }
    let opts = args.launch.options()?;
    let base = Launch::new(kernel.clone(), &opts).map_err(|e| Failure::usage(e.0))?;
    let arrays = ScanArrays::find(&base, &args.in_array, &args.out_array)
        .map_err(|e| Failure::usage(e.0))?;
    for (name, _) in &opts.inputs {
        if let Some(a) = kernel.array(name) {
            if kernel.arrays[a].elem == lang::core::Ty::Generic {
                return Err(Failure::usage(format!(
                    "--input {name}=...: `{name}` has the generic type T, whose contents \
                     verify-scan sets itself (the singleton condition, Definition 5.1)"
                )));
            }
        }
    }
    let kind = if args.exclusive {
        ScanKind::Exclusive
    } else {
        ScanKind::Inclusive
    };
    let ctx = Ctx {
        args,
        src: &src,
        base: &base,
        arrays: &arrays,
        kind,
    };

    let interval = match args.method {
        Method::Interval | Method::Both => Some(v::interval_test(&base, &arrays, kind)),
        Method::Voigtlaender => None,
    };
    let demo = match &interval {
        Some(IntervalReport {
            verdict: Verdict::Wrong(_),
            ..
        }) => demo::list_demo(&kernel, &opts, &args.in_array, &args.out_array, kind),
        _ => None,
    };
    // The Voigtländer tests need race-freedom and a terminating kernel too: when the
    // interval run already found a race or a fault, they are not run.
    let voigt = match (&interval, args.method) {
        (_, Method::Interval) => None,
        (Some(r), _) if matches!(r.verdict, Verdict::Racy(_) | Verdict::Fault(_)) => None,
        (r, _) => Some(voigtlaender::run_tests(
            &base,
            &arrays,
            kind,
            &VoigtOptions {
                timeout: args.timeout,
                threads: args.threads,
                race_free: r.is_some(),
            },
        )),
    };

    let disagree = match (&interval, &voigt) {
        (Some(i), Some(vr)) => match &vr.verdict {
            Some(vv) => vv.is_verified() != i.verdict.is_verified(),
            None => false,
        },
        _ => false,
    };
    let code = match (&interval, &voigt) {
        _ if disagree => EXIT_FOUND,
        (Some(i), _) => verdict_code(&i.verdict),
        (None, Some(vr)) => match &vr.verdict {
            Some(vv) => verdict_code(vv),
            None => EXIT_FOUND, // timed out: not verified
        },
        (None, None) => unreachable!("a method always runs"),
    };

    if args.json {
        let doc = ctx.json(interval.as_ref(), voigt.as_ref(), demo.as_ref(), disagree);
        println!("{}", serde_json::to_string_pretty(&doc).expect("JSON"));
        return Ok(code);
    }
    if let Some(r) = &interval {
        ctx.print_interval(r, demo.as_ref());
    }
    if let Some(vr) = &voigt {
        ctx.print_voigt(vr, interval.is_none());
    }
    if let (Some(i), Some(vr)) = (&interval, &voigt) {
        println!(
            "times: interval {} (1 test), voigtlaender {} ({} of {} tests){}",
            secs(i.time),
            secs(vr.time),
            vr.passed,
            vr.total,
            match ratio(i, vr) {
                Some((r, true)) => format!(", ratio > {}", times(r)),
                Some((r, false)) => format!(", ratio {}", times(r)),
                None => String::new(),
            }
        );
    }
    if disagree {
        eprintln!(
            "internal error: the interval test and the Voigtländer tests disagree; both are \
             complete for race-free generic kernels, so this is a bug in ksim: please report it"
        );
    }
    Ok(code)
}

fn verdict_code(v: &Verdict) -> i32 {
    if v.is_verified() {
        EXIT_OK
    } else {
        EXIT_FOUND
    }
}

/// Voigtländer time / interval time, and whether it is only a lower bound (timed out).
fn ratio(i: &IntervalReport, vr: &VoigtReport) -> Option<(f64, bool)> {
    let it = i.time.as_secs_f64();
    (it > 0.0).then(|| (vr.time.as_secs_f64() / it, vr.timed_out()))
}

/// `0.0123 s`, `1.23 s`, `123 s`.
pub fn secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s < 0.01 {
        format!("{:.4} s", s)
    } else if s < 1.0 {
        format!("{:.3} s", s)
    } else if s < 100.0 {
        format!("{:.2} s", s)
    } else {
        format!("{:.0} s", s)
    }
}

fn times(r: f64) -> String {
    if r < 10.0 {
        format!("{r:.1}x")
    } else {
        format!("{:.0}x", r)
    }
}

struct Ctx<'a> {
    args: &'a VerifyArgs,
    src: &'a Source,
    base: &'a Launch,
    arrays: &'a ScanArrays,
    kind: ScanKind,
}

impl Ctx<'_> {
    fn out_name(&self) -> &str {
        &self.base.kernel.arrays[self.arrays.output].name
    }

    fn what(&self) -> String {
        format!(
            "generic {} prefix sum of length {}",
            self.kind, self.arrays.n
        )
    }

    fn print_interval(&self, r: &IntervalReport, demo: Option<&ListDemo>) {
        if r.divergences > 0 {
            eprintln!(
                "warning: {} barrier(s) fired with the threads of a group at different barriers \
                 (allowed by the paper's K-BARRIER, undefined on a GPU)",
                r.divergences
            );
        }
        match &r.verdict {
            Verdict::Verified => {
                println!("verified: {} (1 test, {})", self.what(), secs(r.time));
                println!(
                    "  the {} found no data race, so by POPL 2014 Theorem 4.5 (with Theorem 5.3 \
                     and Lemma 5.4) the kernel is correct for every monoid",
                    r.engine.name()
                );
            }
            Verdict::Racy(races) => {
                println!(
                    "not verified: the kernel has a data race on the singleton input; the \
                     theorem needs race-freedom (POPL 2014, Theorem 5.3 and Lemma 5.4)"
                );
                self.print_races(races);
            }
            Verdict::Fault(f) => {
                println!("not verified: the interval test run stopped with a runtime fault: {f}");
                eprint!("{}", render_fault(self.src, self.base, f));
            }
            Verdict::Wrong(ce) => {
                let out = self.out_name();
                println!(
                    "not verified: {out}[{}] is {}, expected {} (the kernel is not a {})",
                    ce.index,
                    ce.found,
                    ce.expected,
                    self.what()
                );
                println!("  {out}[{}] = {}", ce.index, v::explain(ce));
                println!(
                    "  interval test output: {}",
                    window(out, &r.output, ce.index)
                );
                self.print_demo(demo);
            }
        }
    }

    fn print_races(&self, races: &[interp::Race]) {
        for race in races.iter().take(3) {
            eprint!("{}", render_race(self.src, self.base, race, &[]));
        }
        if races.len() > 3 {
            eprintln!("... and {} more race(s)", races.len() - 3);
        }
    }

    fn print_demo(&self, demo: Option<&ListDemo>) {
        let out = self.out_name();
        let Some(d) = demo else {
            println!(
                "  (no list-monoid demonstration: no size up to {} shows the failure, or the \
                 kernel's size cannot be changed)",
                demo::DEMO_MAX
            );
            return;
        };
        let size = if d.shrunk {
            format!(" at the smallest failing size, length {}", d.n)
        } else {
            String::new()
        };
        println!(
            "  with list concatenation{size} (in[i] = [i]: each output lists the inputs it \
             combines, in order):"
        );
        match &d.wrong {
            Some((k, found, expected)) => println!(
                "    {out}[{k}] = {}, but {} prefix sum gives {}",
                demo::compact_list(found),
                match self.kind {
                    ScanKind::Inclusive => "an inclusive",
                    ScanKind::Exclusive => "an exclusive",
                },
                demo::compact_list(expected)
            ),
            None => println!(
                "    every output is right: `ksim run` starts unwritten T memory at the identity, \
                 the interval test at ⊤ (the kernel reads memory it never wrote)"
            ),
        }
        if d.n <= 16 {
            let all: Vec<String> = d.output.iter().map(|x| x.to_string()).collect();
            println!("    {out} = {}", all.join(" "));
        }
        println!("    reproduce: {}", self.reproduce(d));
    }

    /// The `ksim run` command line of a demonstration.
    fn reproduce(&self, d: &ListDemo) -> String {
        let a = &self.args.launch;
        let mut cmd = vec![
            "ksim".to_string(),
            "run".into(),
            quote(&a.file.display().to_string()),
        ];
        for (name, value) in &d.defines {
            cmd.push(format!("-D {}", quote(&format!("{name}={value}"))));
        }
        if let Some(g) = a.groups {
            cmd.push(format!("--groups {g}"));
        }
        if let Some(l) = a.local_size {
            cmd.push(format!("--local-size {l}"));
        }
        for (name, spec) in &a.input {
            cmd.push(format!("--input {}", quote(&format!("{name}={spec}"))));
        }
        if let Some(m) = a.max_steps {
            cmd.push(format!("--max-steps {m}"));
        }
        cmd.push("--monoid list".into());
        cmd.push(format!("--input {}=iota", quote(&self.args.in_array)));
        cmd.join(" ")
    }

    fn print_voigt(&self, r: &VoigtReport, alone: bool) {
        match &r.verdict {
            None => println!(
                "{}timed out after {}: {} of {} Voigtländer tests passed ({:.2}%)",
                if alone {
                    "not verified: "
                } else {
                    "voigtlaender: "
                },
                secs(r.time),
                r.passed,
                r.total,
                100.0 * r.passed as f64 / r.total.max(1) as f64
            ),
            Some(Verdict::Verified) => {
                if alone {
                    println!(
                        "verified: {} ({} Voigtländer tests, {})",
                        self.what(),
                        r.total,
                        secs(r.time)
                    );
                } else {
                    println!(
                        "voigtlaender: all {} tests passed ({})",
                        r.total,
                        secs(r.time)
                    );
                }
            }
            Some(Verdict::Racy(races)) => {
                println!(
                    "not verified: the kernel has a data race; the Voigtländer tests need \
                     race-freedom too (Lemma 5.4)"
                );
                self.print_races(races);
            }
            Some(Verdict::Fault(f)) => {
                println!(
                    "not verified: {} stopped with a runtime fault: {f}",
                    r.failing.map(|t| t.to_string()).unwrap_or_default()
                );
                eprint!("{}", render_fault(self.src, self.base, f));
            }
            Some(Verdict::Wrong(ce)) => {
                let t = r.failing.expect("a failing test");
                println!(
                    "{}{} (after {} passed tests, {})",
                    if alone {
                        format!("not verified: the kernel is not a {}: ", self.what())
                    } else {
                        "voigtlaender: ".to_string()
                    },
                    voigtlaender::describe_failure(t, r.n, ce),
                    r.passed,
                    secs(r.time)
                );
            }
        }
    }

    fn json(
        &self,
        interval: Option<&IntervalReport>,
        voigt: Option<&VoigtReport>,
        demo: Option<&ListDemo>,
        disagree: bool,
    ) -> serde_json::Value {
        let verdict_json = |v: &Verdict| -> serde_json::Value {
            match v {
                Verdict::Verified => json!(null),
                Verdict::Racy(races) => {
                    json!(races
                        .iter()
                        .map(|r| race_json(self.base, r))
                        .collect::<Vec<_>>())
                }
                Verdict::Fault(f) => json!(f),
                Verdict::Wrong(ce) => json!(ce),
            }
        };
        let interval_doc = interval.map(|r| {
            json!({
                "verdict": r.verdict.name(),
                "time_s": r.time.as_secs_f64(),
                "steps": r.steps,
                "engine": r.engine,
                "divergences": r.divergences,
                "races": match &r.verdict { Verdict::Racy(_) => verdict_json(&r.verdict), _ => json!([]) },
                "fault": match &r.verdict { Verdict::Fault(_) => verdict_json(&r.verdict), _ => json!(null) },
                "counterexample": match &r.verdict {
                    Verdict::Wrong(ce) => json!({
                        "index": ce.index,
                        "expected": ce.expected,
                        "found": ce.found,
                        "explanation": v::explain(ce),
                    }),
                    _ => json!(null),
                },
                "demo": demo.map(|d| json!({
                    "monoid": "list",
                    "n": d.n,
                    "defines": d.defines.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>(),
                    "index": d.wrong.as_ref().map(|w| w.0),
                    "found": d.wrong.as_ref().map(|w| w.1.clone()),
                    "expected": d.wrong.as_ref().map(|w| w.2.clone()),
                    "command": self.reproduce(d),
                })),
            })
        });
        let voigt_doc = voigt.map(|r| {
            json!({
                "verdict": r.verdict.as_ref().map(|v| v.name()).unwrap_or("timeout"),
                "tests": r.total,
                "passed": r.passed,
                "time_s": r.time.as_secs_f64(),
                "timed_out": r.timed_out(),
                "engine": r.engine,
                "failing_test": r.failing,
                "failing_input": r.failing.filter(|_| r.n <= 4096).map(|t| t.input(r.n)),
                "races": match &r.verdict { Some(v @ Verdict::Racy(_)) => verdict_json(v), _ => json!([]) },
                "fault": match &r.verdict { Some(v @ Verdict::Fault(_)) => verdict_json(v), _ => json!(null) },
                "counterexample": match &r.verdict { Some(Verdict::Wrong(ce)) => json!(ce), _ => json!(null) },
            })
        });
        let verdict = match (interval, voigt) {
            (Some(i), _) => i.verdict.name(),
            (None, Some(vr)) => vr.verdict.as_ref().map(|v| v.name()).unwrap_or("timeout"),
            (None, None) => "none",
        };
        json!({
            "file": self.args.launch.file.display().to_string(),
            "kernel": self.base.kernel.name,
            "launch": launch_json(self.base),
            "input": self.args.in_array,
            "output": self.args.out_array,
            "kind": self.kind,
            "n": self.arrays.n,
            "verdict": verdict,
            "methods_disagree": disagree,
            "interval": interval_doc,
            "voigtlaender": voigt_doc,
            "ratio": match (interval, voigt) {
                (Some(i), Some(vr)) => ratio(i, vr).map(|(r, _)| r),
                _ => None,
            },
        })
    }
}

/// Up to 4 outputs either side of `k`: `out[1..7] = [0,0] [0,1] ⊤ ...`.
fn window(name: &str, output: &[Value], k: usize) -> String {
    let lo = k.saturating_sub(4);
    let hi = (k + 5).min(output.len());
    let vals: Vec<String> = output[lo..hi].iter().map(|x| x.to_string()).collect();
    let (pre, post) = (
        if lo > 0 { "... " } else { "" },
        if hi < output.len() { " ..." } else { "" },
    );
    format!("{name}[{lo}..{}] = {pre}{}{post}", hi - 1, vals.join(" "))
}

/// Single-quotes a shell word when it needs it.
fn quote(s: &str) -> String {
    if s.chars()
        .all(|c| c.is_ascii_alphanumeric() || "_-.,=:/@+".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}
