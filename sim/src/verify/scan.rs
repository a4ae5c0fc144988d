//! `verify-scan` as one library call: which methods run ([`Method`]), when the Voigtländer
//! tests are skipped (the interval run already found a race or a fault: they need
//! race-freedom and termination too), whether the two methods disagree (both are complete
//! for race-free generic kernels, so a disagreement is a bug in ksim), the verdict, and the
//! report's JSON form (docs/json.md) and text view.

use super::demo::{self, ListDemo};
use super::voigtlaender::{self, VoigtOptions, VoigtReport, VoigtTest};
use super::{explain, interval_test, Counterexample, IntervalReport, ScanArrays, ScanKind};
use super::{Engine, SetupError, Verdict};
use crate::outcome::{LaunchInfo, RaceView};
use crate::text::{SourceText, Text};
use interp::launch::{Launch, LaunchOptions};
use interp::{Fault, Monoid, Value};
use lang::core::{Kernel, Ty};
use serde::{Serialize, Serializer};
use std::sync::Arc;
use std::time::Duration;

/// How to verify.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// One run with the interval-of-summations monoid (POPL 2014).
    Interval,
    /// Voigtländer's n(n+1)/2 + n-1 tests over {0, 1, 2} (POPL 2008).
    Voigtlaender,
    /// Both, with their times and the ratio.
    Both,
}

/// What to verify and how.
#[derive(Clone, Debug)]
pub struct Request {
    /// The kernel file as the user named it (for the report and the reproduce command).
    pub file: String,
    /// The user's launch options; the monoid must be the default, `int-add`: verify-scan
    /// chooses its monoids itself.
    pub options: LaunchOptions,
    /// The input and output array names.
    pub input: String,
    pub output: String,
    pub kind: ScanKind,
    pub method: Method,
    /// Stop the Voigtländer tests after this long.
    pub timeout: Option<Duration>,
    /// Worker threads of the Voigtländer tests (0: one per core).
    pub threads: usize,
    /// `--warp-size`: run every test with warps in SIMT lock-step ([`interp::warp`]).
    pub warp_size: Option<usize>,
}

/// The result of `verify-scan`.
#[derive(Clone, Debug)]
pub struct ScanReport {
    pub request: Request,
    /// The user's launch (arrays as given, monoid int-add).
    pub base: Launch,
    pub arrays: ScanArrays,
    pub interval: Option<IntervalReport>,
    /// The list-monoid demonstration of an interval counterexample.
    pub demo: Option<ListDemo>,
    /// `None` when not asked for, or skipped after a race or fault of the interval run.
    pub voigtlaender: Option<VoigtReport>,
    /// The two methods ran to a verdict and disagree (a bug in ksim).
    pub methods_disagree: bool,
}

/// Checks the request (a usage error otherwise), runs the methods asked for and compares
/// them.
pub fn verify_scan(kernel: Arc<Kernel>, request: Request) -> Result<ScanReport, SetupError> {
    let opts = &request.options;
    if opts.monoid != Monoid::IntAdd {
        return Err(SetupError(format!(
            "--monoid {}: verify-scan chooses its monoids itself (interval, voigt1, voigt2, list)",
            opts.monoid
        )));
    }
    let mut base = Launch::new(kernel.clone(), opts).map_err(|e| SetupError(e.0))?;
    base.warp_size = request.warp_size;
    let arrays = ScanArrays::find(&base, &request.input, &request.output)?;
    for (name, _) in &opts.inputs {
        if let Some(a) = kernel.array(name) {
            if kernel.arrays[a].elem == Ty::Generic {
                return Err(SetupError(format!(
                    "--input {name}=...: `{name}` has the generic type T, whose contents \
                     verify-scan sets itself (the singleton condition, Definition 5.1)"
                )));
            }
        }
    }
    let kind = request.kind;
    let interval = match request.method {
        Method::Interval | Method::Both => Some(interval_test(&base, &arrays, kind)),
        Method::Voigtlaender => None,
    };
    // The demonstration runs the canonical schedule: no use where another order of the
    // atomics is the wrong one.
    let demo = match &interval {
        Some(IntervalReport {
            verdict: Verdict::Wrong(_),
            atomic_orders: None,
            ..
        }) => demo::list_demo(&kernel, opts, &request.input, &request.output, kind),
        _ => None,
    };
    let voigtlaender = match (&interval, request.method) {
        (_, Method::Interval) => None,
        (Some(r), _)
            if matches!(
                r.verdict,
                Verdict::Racy(_) | Verdict::Fault(_) | Verdict::Undecided(_)
            ) =>
        {
            None
        }
        (r, _) => Some(voigtlaender::run_tests(
            &base,
            &arrays,
            kind,
            &VoigtOptions {
                timeout: request.timeout,
                threads: request.threads,
                race_free: r.is_some(),
            },
        )),
    };
    let mut voigtlaender = voigtlaender;
    if let (None, Some(v)) = (&interval, &mut voigtlaender) {
        if v.verdict.as_ref().is_some_and(Verdict::is_verified) {
            v.verdict = Some(voigt_alone_caveat(&base, &arrays));
        }
    }
    let methods_disagree = match (&interval, &voigtlaender) {
        (
            Some(i),
            Some(VoigtReport {
                verdict: Some(v), ..
            }),
        ) => v.is_verified() != i.verdict.is_verified(),
        _ => false,
    };
    Ok(ScanReport {
        request,
        base,
        arrays,
        interval,
        demo,
        voigtlaender,
        methods_disagree,
    })
}

/// What the Voigtländer tests alone cannot show for a kernel that passed them: each test is
/// one run, which decides every run only for a deterministic kernel (Lemma 5.4), and a
/// kernel with atomics is not one; and a `T` variable read before its first write reads
/// the identity in ksim, not garbage ([`super::generic_read_before_write`]).
fn voigt_alone_caveat(base: &Launch, arrays: &ScanArrays) -> Verdict {
    let singleton = super::singleton_launch(base, arrays);
    if let Some(f) = super::generic_read_before_write(&singleton) {
        return Verdict::Fault(f);
    }
    if base.kernel.has_atomics() {
        return Verdict::Undecided(
            "the kernel uses atomics, so one run per test does not show determinism \
             (Lemma 5.4); --method interval explores every order of the atomics"
                .into(),
        );
    }
    Verdict::Verified
}

impl ScanReport {
    /// `verified`, `race`, `fault`, `counterexample` (the interval test's when it ran), or
    /// `timeout` (the Voigtländer tests alone, stopped).
    pub fn verdict(&self) -> &'static str {
        match (&self.interval, &self.voigtlaender) {
            (Some(i), _) => i.verdict.name(),
            (None, Some(v)) => v.verdict.as_ref().map_or("timeout", |v| v.name()),
            (None, None) => unreachable!("a method always runs"),
        }
    }

    /// Verified, by every method that ran to a verdict, and no disagreement (exit code 0).
    pub fn verified(&self) -> bool {
        !self.methods_disagree && self.verdict() == "verified"
    }

    /// Voigtländer time / interval time, and whether it is only a lower bound (timed out).
    pub fn ratio(&self) -> Option<(f64, bool)> {
        let (i, v) = (self.interval.as_ref()?, self.voigtlaender.as_ref()?);
        let it = i.time.as_secs_f64();
        (it > 0.0).then(|| (v.time.as_secs_f64() / it, v.timed_out()))
    }

    fn out_name(&self) -> &str {
        &self.base.kernel.arrays[self.arrays.output].name
    }

    fn in_name(&self) -> &str {
        &self.base.kernel.arrays[self.arrays.input].name
    }

    fn what(&self) -> String {
        format!(
            "generic {} prefix sum of length {}",
            self.request.kind, self.arrays.n
        )
    }

    /// The `ksim run` command line of a demonstration.
    pub fn reproduce(&self, d: &ListDemo) -> String {
        let o = &self.request.options;
        let mut cmd = vec!["ksim".to_string(), "run".into(), quote(&self.request.file)];
        for (name, value) in &d.defines {
            cmd.push(format!("-D {}", quote(&format!("{name}={value}"))));
        }
        // One size, or one per dimension (`--groups 2,2`).
        let dims = |one: Option<usize>, per_dim: &[usize]| match one {
            Some(n) => Some(n.to_string()),
            None if !per_dim.is_empty() => Some(
                per_dim
                    .iter()
                    .map(|d| d.to_string())
                    .collect::<Vec<_>>()
                    .join(","),
            ),
            None => None,
        };
        if let Some(g) = dims(o.groups, &o.group_dims) {
            cmd.push(format!("--groups {g}"));
        }
        if let Some(l) = dims(o.local_size, &o.local_dims) {
            cmd.push(format!("--local-size {l}"));
        }
        for (name, spec) in &o.inputs {
            cmd.push(format!("--input {}", quote(&format!("{name}={spec}"))));
        }
        if let Some(m) = o.max_steps {
            cmd.push(format!("--max-steps {m}"));
        }
        cmd.push("--monoid list".into());
        cmd.push(format!("--input {}=iota", quote(&self.request.input)));
        cmd.join(" ")
    }

    /// The text view: verdicts and times on stdout; races, faults, warnings and a
    /// disagreement on stderr.
    pub fn text(&self, src: SourceText) -> Text {
        let mut t = Text::default();
        if let Some(r) = &self.interval {
            self.interval_text(&mut t, src, r);
        }
        if let Some(v) = &self.voigtlaender {
            self.voigt_text(&mut t, src, v, self.interval.is_none());
        }
        if let (Some(i), Some(v)) = (&self.interval, &self.voigtlaender) {
            t.out.push_str(&format!(
                "times: interval {} (1 test), voigtlaender {} ({} of {} tests){}\n",
                secs(i.time),
                secs(v.time),
                v.passed,
                v.total,
                match self.ratio() {
                    Some((r, true)) => format!(", ratio > {}", times(r)),
                    Some((r, false)) => format!(", ratio {}", times(r)),
                    None => String::new(),
                }
            ));
        }
        if let Some(w) = self.base.warp_size {
            t.out.push_str(&format!(
                "model: warps of {} in SIMT lock-step (--warp-size)\n",
                crate::explore::model::plural(w as u64, "thread", "threads")
            ));
        }
        if self.methods_disagree {
            t.err.push_str(
                "internal error: the interval test and the Voigtländer tests disagree; both are \
                 complete for race-free generic kernels, so this is a bug in ksim: please report it\n",
            );
        }
        t
    }

    fn interval_text(&self, t: &mut Text, src: SourceText, r: &IntervalReport) {
        if r.divergences > 0 {
            t.err.push_str(&format!(
                "warning: {} barrier(s) fired with the threads of a group at different barriers \
                 (allowed by the paper's K-BARRIER, undefined on a GPU)\n",
                r.divergences
            ));
        }
        match &r.verdict {
            Verdict::Verified => {
                t.out.push_str(&format!(
                    "verified: {} (1 test, {})\n",
                    self.what(),
                    secs(r.time)
                ));
                match &r.atomic_orders {
                    Some(o) => t.out.push_str(&format!(
                        "  the kernel uses atomics, so one run does not show determinism \
                         (Lemma 5.4): every order of them was explored ({} executions, {}), \
                         all race-free with the expected output, so by POPL 2014 Theorem 4.5 \
                         (with Theorem 5.3) the kernel is correct for every monoid\n",
                        o.executions, o.verdict
                    )),
                    None => t.out.push_str(&format!(
                        "  the {} found no data race, so by POPL 2014 Theorem 4.5 (with Theorem \
                         5.3 and Lemma 5.4) the kernel is correct for every monoid\n",
                        r.engine.name()
                    )),
                }
                if r.uninit_assumed {
                    t.out.push_str(
                        "  assuming no T variable is read before it is written (ksim starts \
                         them at the identity, Definition 5.1 at ⊤; too long a run to check \
                         again: `--uninit check` checks it)\n",
                    );
                }
            }
            Verdict::Undecided(why) => {
                t.out.push_str(&format!("not verified: {why}\n"));
            }
            Verdict::Racy(races) => {
                t.out.push_str(
                    "not verified: the kernel has a data race on the singleton input; the \
                     theorem needs race-freedom (POPL 2014, Theorem 5.3 and Lemma 5.4)\n",
                );
                self.races_text(t, src, races);
            }
            Verdict::Fault(f) => {
                t.out.push_str(&format!(
                    "not verified: the interval test run stopped with a runtime fault: {f}\n"
                ));
                t.out.push_str(&uninit_note(&self.base, f));
                t.err.push_str(&src.fault(&self.base, f));
            }
            Verdict::Wrong(ce) => {
                let atomic = r.atomic_orders.as_ref().and_then(|o| o.schedule.as_ref());
                if let Some((s, _)) = atomic {
                    t.out.push_str(&format!(
                        "not verified: the kernel uses atomics, and in the schedule {s} the \
                         output is wrong (the canonical run's is right)\n"
                    ));
                }
                let out = self.out_name();
                t.out.push_str(&format!(
                    "not verified: {out}[{}] is {}, expected {} (the kernel is not a {})\n",
                    ce.index,
                    ce.found,
                    ce.expected,
                    self.what()
                ));
                t.out.push_str(&format!(
                    "  {out}[{}] = {}\n",
                    ce.index,
                    explain(ce, self.in_name(), out)
                ));
                t.out.push_str(&format!(
                    "  interval test output: {}\n",
                    window(out, &r.output, ce.index)
                ));
                if atomic.is_some() {
                    t.out.push_str(&format!(
                        "  every order with list concatenation: ksim explore --exhaustive {} \
                         (this launch) --monoid list --input {}=iota\n",
                        quote(&self.request.file),
                        quote(&self.request.input)
                    ));
                } else {
                    self.demo_text(t);
                }
            }
        }
    }

    fn races_text(&self, t: &mut Text, src: SourceText, races: &[interp::Race]) {
        for race in races.iter().take(3) {
            t.err.push_str(&src.race(&self.base, race, &[]));
        }
        if races.len() > 3 {
            t.err
                .push_str(&format!("... and {} more race(s)\n", races.len() - 3));
        }
    }

    fn demo_text(&self, t: &mut Text) {
        let out = self.out_name();
        let Some(d) = &self.demo else {
            t.out.push_str(&format!(
                "  (no list-monoid demonstration: no size up to {} shows the failure, or the \
                 kernel's size cannot be changed)\n",
                demo::DEMO_MAX
            ));
            return;
        };
        let size = if d.shrunk {
            format!(" at the smallest failing size, length {}", d.n)
        } else {
            String::new()
        };
        t.out.push_str(&format!(
            "  with list concatenation{size} ({}[i] = [i]: each output lists the inputs it \
             combines, in order):\n",
            self.in_name()
        ));
        match &d.wrong {
            Some((k, found, expected)) => t.out.push_str(&format!(
                "    {out}[{k}] = {}, but {} prefix sum gives {}\n",
                demo::compact_list(found),
                match self.request.kind {
                    ScanKind::Inclusive => "an inclusive",
                    ScanKind::Exclusive => "an exclusive",
                },
                demo::compact_list(expected)
            )),
            None => t.out.push_str(
                "    every output is right: `ksim run` starts unwritten T memory at the identity, \
                 the interval test at ⊤ (the kernel reads memory it never wrote)\n",
            ),
        }
        if d.n <= 16 {
            let all: Vec<String> = d.output.iter().map(|x| x.to_string()).collect();
            t.out.push_str(&format!("    {out} = {}\n", all.join(" ")));
        }
        t.out
            .push_str(&format!("    reproduce: {}\n", self.reproduce(d)));
    }

    fn voigt_text(&self, t: &mut Text, src: SourceText, r: &VoigtReport, alone: bool) {
        match &r.verdict {
            None => t.out.push_str(&format!(
                "{}timed out after {}: {} of {} Voigtländer tests passed ({:.2}%)\n",
                if alone {
                    "not verified: "
                } else {
                    "voigtlaender: "
                },
                secs(r.time),
                r.passed,
                r.total,
                100.0 * r.passed as f64 / r.total.max(1) as f64
            )),
            Some(Verdict::Verified) => t.out.push_str(&if alone {
                format!(
                    "verified: {} ({} Voigtländer tests, {})\n",
                    self.what(),
                    r.total,
                    secs(r.time)
                )
            } else {
                format!(
                    "voigtlaender: all {} tests passed ({})\n",
                    r.total,
                    secs(r.time)
                )
            }),
            Some(Verdict::Racy(races)) => {
                t.out.push_str(
                    "not verified: the kernel has a data race; the Voigtländer tests need \
                     race-freedom too (Lemma 5.4)\n",
                );
                self.races_text(t, src, races);
            }
            Some(Verdict::Undecided(why)) => {
                t.out.push_str(&format!(
                    "not verified: all {} Voigtländer tests passed, but {why}\n",
                    r.total
                ));
            }
            Some(Verdict::Fault(f)) if r.failing.is_none() => {
                t.out.push_str(&format!(
                    "not verified: all {} Voigtländer tests passed, but the kernel reads a T \
                     variable before writing it: {f}\n",
                    r.total
                ));
                t.out.push_str(&uninit_note(&self.base, f));
                t.err.push_str(&src.fault(&self.base, f));
            }
            Some(Verdict::Fault(f)) => {
                t.out.push_str(&format!(
                    "not verified: {} stopped with a runtime fault: {f}\n",
                    r.failing.map(|t| t.to_string()).unwrap_or_default()
                ));
                t.err.push_str(&src.fault(&self.base, f));
            }
            Some(Verdict::Wrong(ce)) => {
                let test = r.failing.expect("a failing test");
                t.out.push_str(&format!(
                    "{}{} (after {} passed tests, {})\n",
                    if alone {
                        format!("not verified: the kernel is not a {}: ", self.what())
                    } else {
                        "voigtlaender: ".to_string()
                    },
                    voigtlaender::describe_failure(test, r.n, ce),
                    r.passed,
                    secs(r.time)
                ));
            }
        }
    }
}

/// Why a `T` variable read before its first write is not verified, when ksim started it
/// at the identity (empty for every other fault).
fn uninit_note(base: &Launch, f: &Fault) -> String {
    let variable = matches!(&f.kind, interp::fault::FaultKind::Uninitialised { index, .. } if index.is_empty());
    if !variable || base.checks_uninit() {
        return String::new();
    }
    "  ksim starts T variables at the identity (--uninit zero), so this read sees 1; \
     Definition 5.1 starts them at ⊤ and a device at garbage: a passing test does not cover \
     it (write the variable first)\n"
        .into()
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

// The JSON form (docs/json.md, `ksim verify-scan --json`).

#[derive(Serialize, schemars::JsonSchema)]
pub(crate) struct ScanJson<'a> {
    file: &'a str,
    kernel: &'a str,
    launch: LaunchInfo,
    input: &'a str,
    output: &'a str,
    kind: ScanKind,
    n: usize,
    verdict: &'static str,
    methods_disagree: bool,
    interval: Option<IntervalJson<'a>>,
    voigtlaender: Option<VoigtJson<'a>>,
    ratio: Option<f64>,
}

#[derive(Serialize, schemars::JsonSchema)]
struct IntervalJson<'a> {
    verdict: &'static str,
    time_s: f64,
    steps: u64,
    engine: Engine,
    divergences: usize,
    races: Vec<RaceView>,
    fault: Option<&'a Fault>,
    counterexample: Option<ExplainedJson<'a>>,
    demo: Option<DemoJson<'a>>,
}

#[derive(Serialize, schemars::JsonSchema)]
struct ExplainedJson<'a> {
    index: usize,
    expected: &'a Value,
    found: &'a Value,
    explanation: String,
}

#[derive(Serialize, schemars::JsonSchema)]
struct DemoJson<'a> {
    monoid: &'static str,
    n: usize,
    defines: Vec<String>,
    index: Option<usize>,
    found: Option<&'a Value>,
    expected: Option<&'a Value>,
    command: String,
}

#[derive(Serialize, schemars::JsonSchema)]
struct VoigtJson<'a> {
    verdict: &'static str,
    tests: u64,
    passed: u64,
    time_s: f64,
    timed_out: bool,
    engine: Engine,
    failing_test: Option<VoigtTest>,
    failing_input: Option<Vec<u8>>,
    races: Vec<RaceView>,
    fault: Option<&'a Fault>,
    counterexample: Option<&'a Counterexample>,
}

impl ScanReport {
    fn races_json(&self, v: Option<&Verdict>) -> Vec<RaceView> {
        match v {
            Some(Verdict::Racy(races)) => {
                races.iter().map(|r| RaceView::of(&self.base, r)).collect()
            }
            _ => Vec::new(),
        }
    }
}

fn fault_of(v: Option<&Verdict>) -> Option<&Fault> {
    match v {
        Some(Verdict::Fault(f)) => Some(f),
        _ => None,
    }
}

impl Serialize for ScanReport {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let interval = self.interval.as_ref().map(|r| IntervalJson {
            verdict: r.verdict.name(),
            time_s: r.time.as_secs_f64(),
            steps: r.steps,
            engine: r.engine,
            divergences: r.divergences,
            races: self.races_json(Some(&r.verdict)),
            fault: fault_of(Some(&r.verdict)),
            counterexample: match &r.verdict {
                Verdict::Wrong(ce) => Some(ExplainedJson {
                    index: ce.index,
                    expected: &ce.expected,
                    found: &ce.found,
                    explanation: explain(ce, self.in_name(), self.out_name()),
                }),
                _ => None,
            },
            demo: self.demo.as_ref().map(|d| DemoJson {
                monoid: "list",
                n: d.n,
                defines: d.defines.iter().map(|(k, v)| format!("{k}={v}")).collect(),
                index: d.wrong.as_ref().map(|w| w.0),
                found: d.wrong.as_ref().map(|w| &w.1),
                expected: d.wrong.as_ref().map(|w| &w.2),
                command: self.reproduce(d),
            }),
        });
        let voigtlaender = self.voigtlaender.as_ref().map(|r| VoigtJson {
            verdict: r.verdict.as_ref().map_or("timeout", |v| v.name()),
            tests: r.total,
            passed: r.passed,
            time_s: r.time.as_secs_f64(),
            timed_out: r.timed_out(),
            engine: r.engine,
            failing_test: r.failing,
            failing_input: r.failing.filter(|_| r.n <= 4096).map(|t| t.input(r.n)),
            races: self.races_json(r.verdict.as_ref()),
            fault: fault_of(r.verdict.as_ref()),
            counterexample: match &r.verdict {
                Some(Verdict::Wrong(ce)) => Some(ce),
                _ => None,
            },
        });
        ScanJson {
            file: &self.request.file,
            kernel: &self.base.kernel.name,
            launch: LaunchInfo::of(&self.base),
            input: &self.request.input,
            output: &self.request.output,
            kind: self.request.kind,
            n: self.arrays.n,
            verdict: self.verdict(),
            methods_disagree: self.methods_disagree,
            interval,
            voigtlaender,
            ratio: self.ratio().map(|r| r.0),
        }
        .serialize(s)
    }
}
