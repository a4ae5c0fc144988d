//! What `ksim explore` shows: the exploration summary as a serialisable model (the `--json`
//! document, described in `docs/json.md`) and as text. The command line only parses its
//! arguments, runs the explorer and prints one of these views.

use super::{Incomplete, Mode, Summary, Verdict};
use crate::schedule::Schedule;
use crate::text::SourceText;
use interp::race::Race;
use interp::{Launch, Memory, Value};
use serde::Serialize;

/// The launch as every `--json` output shows it.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct LaunchModel {
    pub groups: usize,
    pub local_size: usize,
    pub monoid: String,
    pub params: serde_json::Map<String, serde_json::Value>,
    pub max_steps: u64,
    /// `--race-policy`: which conflicting pairs are errors (`strict`, `same-value`).
    pub race_policy: &'static str,
    /// `--atomicity`: what one thread step executes (`statement`, `access`).
    pub atomicity: &'static str,
}

impl LaunchModel {
    pub fn new(launch: &Launch) -> LaunchModel {
        LaunchModel {
            groups: launch.groups,
            local_size: launch.local_size,
            monoid: launch.monoid.name().to_string(),
            params: launch
                .kernel
                .params
                .iter()
                .zip(&launch.params)
                .map(|(p, v)| (p.name.clone(), serde_json::to_value(v).expect("JSON")))
                .collect(),
            max_steps: launch.max_steps,
            race_policy: launch.race_policy.name(),
            atomicity: launch.atomicity.name(),
        }
    }
}

/// One access of a race, as in `ksim run --json`.
pub use crate::outcome::AccessJson as AccessModel;

/// A race, as in `ksim run --json`, with its statements and locations.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct RaceModel {
    pub array: String,
    pub instance: usize,
    pub index: Vec<usize>,
    pub first: AccessModel,
    pub second: AccessModel,
    pub statement_first: String,
    pub statement_second: String,
    pub location_first: String,
    pub location_second: String,
    /// The race policy tolerates the pair (a warning, not an error).
    pub benign: bool,
}

impl RaceModel {
    pub fn new(src: SourceText, launch: &Launch, r: &Race) -> RaceModel {
        RaceModel {
            array: launch.kernel.arrays[r.array].name.clone(),
            instance: r.instance,
            index: r.index.clone(),
            first: AccessModel::from(&r.first),
            second: AccessModel::from(&r.second),
            statement_first: src.statement(&r.first.span),
            statement_second: src.statement(&r.second.span),
            location_first: src.location(r.first.span.start),
            location_second: src.location(r.second.span.start),
            benign: r.benign(),
        }
    }
}

/// A distinct race of an exploration.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct FoundRaceModel {
    #[serde(flatten)]
    pub race: RaceModel,
    /// The shortest schedule known that reaches it (it ends with the race's second step).
    pub schedule: Schedule,
    /// Whether that schedule is proved to be the shortest of any schedule (exhaustive
    /// search, no execution cut by a bound).
    pub shortest: bool,
    /// Preemption-bounded search: the fewest preemptions of a schedule reaching it.
    pub preemptions: Option<u32>,
    /// The race report written for it.
    pub report: Option<String>,
}

#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct Executions {
    pub total: u64,
    pub complete: u64,
    pub pruned: u64,
    pub cache_hits: u64,
    pub sleep_blocked: u64,
    pub cut: u64,
}

#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct FinalStoreModel {
    pub count: u64,
    pub schedule: Schedule,
    pub arrays: serde_json::Map<String, serde_json::Value>,
}

#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct FaultModel {
    #[serde(flatten)]
    pub fault: interp::fault::Fault,
    pub count: u64,
    pub schedule: Schedule,
}

#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct NonTerminating {
    pub count: u64,
    pub schedule: Option<Schedule>,
}

#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct DivergenceModel {
    pub message: String,
    pub schedule: Schedule,
}

#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct PctModel {
    pub depth: u32,
    pub threads: u64,
    pub max_steps: u64,
    pub bound: f64,
}

/// The `ksim explore --json` document (see `docs/json.md`).
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct ExplorationModel {
    pub kernel: String,
    pub path: String,
    pub launch: LaunchModel,
    /// `exhaustive`, `naive`, `random`, `pct` or `preemption-bounded`.
    pub mode: &'static str,
    pub seed: Option<u64>,
    pub depth: Option<u32>,
    pub preemption_bound: Option<u32>,
    /// `EXHAUSTIVE` or `INCOMPLETE`.
    pub verdict: &'static str,
    pub incomplete_reason: Option<&'static str>,
    /// The verdict line as the text output ends.
    pub verdict_text: String,
    pub caching_off: Option<&'static str>,
    pub reduction_off: Option<&'static str>,
    /// Why the search ran on one thread although `--jobs` asked for more.
    pub jobs_ignored: Option<&'static str>,
    pub executions: Executions,
    pub states: u64,
    pub final_stores: Vec<FinalStoreModel>,
    /// The final store of the kernel made race-free by the barriers `ksim fix` proposes,
    /// and which of `final_stores` (1-based) equals it; `null` without races or fix.
    pub race_free_store: Option<crate::fix::RaceFreeStore>,
    /// Per array that is not the same in every final store, the elements that differ
    /// from store #1 and in how many stores (empty with fewer than two stores).
    pub final_store_differences: Vec<super::stores::StoreDifference>,
    /// The store a race-free run gives: the canonical execution's, when it meets no race
    /// (see `sim::explore::stores`); `null` when not computed (no final store).
    pub canonical_store: Option<super::stores::CanonicalStore>,
    pub races: Vec<FoundRaceModel>,
    pub race_changes_result: Option<bool>,
    pub faults: Vec<FaultModel>,
    pub non_terminating: NonTerminating,
    pub divergences: Vec<DivergenceModel>,
    pub lemma_5_4_confirmed: bool,
    pub pct: Option<PctModel>,
    pub steps: u64,
    pub time_s: f64,
    pub executions_per_s: f64,
    pub clean: bool,
}

impl Summary {
    /// Whether the races change the result: `Some(true)` when there are several final
    /// stores, `Some(false)` when the search was exhaustive and found one, `None` when
    /// there is no race or the search cannot tell.
    pub fn race_changes_result(&self) -> Option<bool> {
        if self.races.is_empty() {
            None
        } else if self.finals.len() > 1 {
            Some(true)
        } else if self.verdict == Verdict::Exhaustive && self.finals.len() == 1 {
            Some(false)
        } else {
            None
        }
    }

    /// POPL 2014 Lemma 5.4 on this input: an exhaustive search found no race, fault,
    /// barrier divergence or non-termination, and one final store.
    pub fn lemma_confirmed(&self) -> bool {
        self.verdict == Verdict::Exhaustive
            && self.races.is_empty()
            && self.faults.is_empty()
            && self.divergences.is_empty()
            && self.non_terminating == 0
            && self.finals.len() == 1
    }

    /// Whether the schedules of the races are proved to be the shortest: an exhaustive
    /// search that no bound cut (see `dpor::Dpor::race_past`).
    pub fn shortest_proved(&self) -> bool {
        self.mode == Mode::Exhaustive
            && self.verdict == Verdict::Exhaustive
            && self.non_terminating == 0
    }
}

/// How a race report names the explorer that found it.
pub fn found_by(mode: &Mode) -> String {
    match mode {
        Mode::Exhaustive => "exhaustive".into(),
        Mode::Naive => "naive".into(),
        Mode::Random { n, seed } => format!("random (N = {n}, seed {seed})"),
        Mode::Pct { n, depth, seed } => format!("pct (N = {n}, depth {depth}, seed {seed})"),
        Mode::PreemptionBounded { bound } => format!("preemption-bounded (K = {bound})"),
    }
}

fn memory_arrays(launch: &Launch, m: &Memory) -> serde_json::Map<String, serde_json::Value> {
    launch
        .kernel
        .arrays
        .iter()
        .enumerate()
        .map(|(a, d)| {
            let v = if m.arrays[a].len() == 1 {
                serde_json::to_value(&m.arrays[a][0])
            } else {
                serde_json::to_value(&m.arrays[a])
            };
            (d.name.clone(), v.expect("JSON"))
        })
        .collect()
}

impl ExplorationModel {
    /// The model of `s`; `reports[k]` is the report file written for race k, if any.
    pub fn new(
        src: SourceText,
        launch: &Launch,
        s: &Summary,
        reports: &[Option<String>],
    ) -> ExplorationModel {
        let (mode, seed, depth, bound) = match &s.mode {
            Mode::Exhaustive => ("exhaustive", None, None, None),
            Mode::Naive => ("naive", None, None, None),
            Mode::Random { seed, .. } => ("random", Some(*seed), None, None),
            Mode::Pct { seed, depth, .. } => ("pct", Some(*seed), Some(*depth), None),
            Mode::PreemptionBounded { bound } => ("preemption-bounded", None, None, Some(*bound)),
        };
        let (verdict, reason) = match s.verdict {
            Verdict::Exhaustive => ("EXHAUSTIVE", None),
            Verdict::Incomplete(r) => ("INCOMPLETE", Some(r.name())),
        };
        let shortest = s.shortest_proved();
        ExplorationModel {
            kernel: launch.kernel.name.clone(),
            path: src.path.to_string(),
            launch: LaunchModel::new(launch),
            mode,
            seed,
            depth,
            preemption_bound: bound,
            verdict,
            incomplete_reason: reason,
            verdict_text: s.verdict.to_string(),
            caching_off: s.caching_off,
            reduction_off: s.reduction_off,
            jobs_ignored: s.jobs_ignored,
            executions: Executions {
                total: s.executions(),
                complete: s.complete,
                pruned: s.pruned,
                cache_hits: s.cache_hits,
                sleep_blocked: s.sleep_blocked,
                cut: s.cut,
            },
            states: s.states,
            final_stores: s
                .finals
                .iter()
                .map(|f| FinalStoreModel {
                    count: f.count,
                    schedule: f.schedule.clone(),
                    arrays: memory_arrays(launch, &f.memory),
                })
                .collect(),
            race_free_store: s.race_free.clone(),
            final_store_differences: super::stores::differences(launch, &s.finals),
            canonical_store: s.canonical.clone(),
            races: s
                .races
                .iter()
                .enumerate()
                .map(|(k, r)| FoundRaceModel {
                    race: RaceModel::new(src, launch, &r.race),
                    schedule: r.schedule.clone(),
                    shortest,
                    preemptions: s.race_preemptions.get(k).copied(),
                    report: reports.get(k).cloned().flatten(),
                })
                .collect(),
            race_changes_result: s.race_changes_result(),
            faults: s
                .faults
                .iter()
                .map(|f| FaultModel {
                    fault: f.fault.clone(),
                    count: f.count,
                    schedule: f.schedule.clone(),
                })
                .collect(),
            non_terminating: NonTerminating {
                count: s.non_terminating,
                schedule: s.non_terminating_schedule.clone(),
            },
            divergences: s
                .divergences
                .iter()
                .map(|d| DivergenceModel {
                    message: d.message.clone(),
                    schedule: d.schedule.clone(),
                })
                .collect(),
            lemma_5_4_confirmed: s.lemma_confirmed(),
            pct: s.pct.as_ref().map(|p| PctModel {
                depth: p.depth,
                threads: p.threads,
                max_steps: p.max_steps,
                bound: p.bound,
            }),
            steps: s.steps,
            time_s: s.elapsed.as_secs_f64(),
            executions_per_s: s.rate(),
            clean: s.is_clean(),
        }
    }
}

/// `0×5 1×3 2 ...`: a schedule in a line (at most `max` runs).
pub fn short_schedule(s: &Schedule, max: usize) -> String {
    if s.runs.is_empty() {
        return "(empty)".into();
    }
    let head = Schedule {
        runs: s.runs.iter().take(max).copied().collect(),
    };
    if s.runs.len() > max {
        format!("{} ... ({} runs in all)", head.text(), s.runs.len())
    } else {
        head.text()
    }
}

/// An array's values in a line: all of them up to 32; a longer one run-length encoded
/// (`0×256`) when that is short, else its first and last 8 values (`--json` has them all).
fn values(v: &[Value]) -> String {
    const ALL: usize = 32;
    let text = |v: &[Value]| {
        v.iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join(" ")
    };
    if v.len() <= ALL {
        return text(v);
    }
    let mut runs: Vec<(&Value, usize)> = Vec::new();
    for x in v {
        match runs.last_mut() {
            Some((y, n)) if *y == x => *n += 1,
            _ => runs.push((x, 1)),
        }
    }
    if runs.len() <= 8 {
        let runs: Vec<String> = (runs.iter())
            .map(|(x, n)| {
                if *n == 1 {
                    x.to_string()
                } else {
                    format!("{x}×{n}")
                }
            })
            .collect();
        return runs.join(" ");
    }
    format!(
        "{} ... {} ({} values; --json has them all)",
        text(&v[..8]),
        text(&v[v.len() - 8..]),
        v.len()
    )
}

/// How to reproduce final store `i` (0-based) with `ksim run` and the same launch options:
/// the schedule written out, when it is short enough to paste; its JSON path otherwise.
fn store_schedule(s: &Schedule, i: usize) -> String {
    const PASTE: usize = 64;
    if s.runs.len() <= PASTE {
        format!("--schedule '{}'", s.text())
    } else {
        format!(
            "schedule {} (the whole schedule: --json, final_stores[{i}].schedule)",
            short_schedule(s, 8)
        )
    }
}

fn array_label(launch: &Launch, a: usize, inst: usize) -> String {
    let name = &launch.kernel.arrays[a].name;
    if launch.instances(a) > 1 {
        format!("{name} (group {inst})")
    } else {
        name.clone()
    }
}

/// `1 race`, `2 races`: a count with its noun.
pub fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn mode_line(s: &Summary) -> String {
    match &s.mode {
        Mode::Exhaustive if s.reduction_off.is_some() => {
            "exhaustive (every interleaving, each state once; no partial-order reduction)".into()
        }
        Mode::Exhaustive if s.caching_off.is_some() => {
            "exhaustive (source-DPOR with sleep sets; no state caching)".into()
        }
        Mode::Exhaustive => {
            "exhaustive (state caching at barriers + source-DPOR with sleep sets)".into()
        }
        Mode::Naive => "naive (every interleaving)".into(),
        Mode::Random { n, seed } => format!("random, {n} executions, seed {seed}"),
        Mode::Pct { n, depth, seed } => {
            format!("PCT, {n} executions, depth {depth}, seed {seed}")
        }
        Mode::PreemptionBounded { bound } => format!(
            "every schedule with at most {bound} preemption{}, iteratively deepened",
            if *bound == 1 { "" } else { "s" }
        ),
    }
}

/// The executions a search did not finish: cut by a bound (`--max-executions`,
/// `--max-states`, `--timeout`), or stopped where the user asked it to stop (a race found,
/// an interrupt), which is not a bound. Step-bound cuts are counted as non-terminating.
fn cut_text(s: &Summary) -> String {
    let stop = match s.verdict {
        Verdict::Incomplete(Incomplete::RaceFound) => "at the race (--stop-on-race)",
        Verdict::Incomplete(Incomplete::MaxRaces) => "at the last race (--max-races)",
        Verdict::Incomplete(Incomplete::Interrupted) => "by the interrupt",
        _ => return format!("{} cut by a bound", s.cut),
    };
    format!("{} stopped {stop}", s.cut)
}

/// The header line of `ksim explore` and `ksim run`: kernel, launch, and the monoid only
/// for a generic kernel (one that uses `T`).
pub fn launch_line(launch: &Launch) -> String {
    let monoid = if launch.kernel.generic {
        format!(", monoid {}", launch.monoid)
    } else {
        String::new()
    };
    // Under --warp-size the model differs: the line says so wherever it is printed.
    let warps = launch
        .warp_size
        .map(|w| format!(", warps of {}", plural(w as u64, "thread", "threads")))
        .unwrap_or_default();
    format!(
        "kernel {}, {} of {} thread{}{monoid}{warps}",
        launch.kernel.name,
        plural(launch.groups as u64, "group", "groups"),
        launch.local_size,
        if launch.local_size == 1 { "" } else { "s" },
    )
}

/// The diagnostics of `ksim explore` (stderr, before the summary): each race with its
/// shortest schedule and report file, then each fault.
pub fn diagnostics_text(
    src: SourceText,
    launch: &Launch,
    s: &Summary,
    reports: &[Option<String>],
) -> String {
    let proved = s.shortest_proved();
    let mut out = String::new();
    for (k, r) in s.races.iter().enumerate() {
        let mut extra = vec![format!(
            "{} ({} steps): {}",
            if proved {
                "shortest schedule"
            } else {
                "shortest schedule found"
            },
            r.schedule.len(),
            short_schedule(&r.schedule, 12)
        )];
        if let Some(p) = reports.get(k).cloned().flatten() {
            extra.push(format!("report: {p} (replay: ksim replay {p})"));
        }
        out.push_str(&src.race(launch, &r.race, &extra));
    }
    for f in &s.faults {
        out.push_str(&src.fault(launch, &f.fault));
    }
    out
}

/// The text summary of `ksim explore` (stdout; the race and fault diagnostics go to
/// stderr, before it).
pub fn summary_text(
    src: SourceText,
    launch: &Launch,
    s: &Summary,
    reports: &[Option<String>],
) -> String {
    use std::fmt::Write;
    let mut o = String::new();
    let w = &mut o;
    let _ = writeln!(w, "ksim explore: {}, {}", launch_line(launch), mode_line(s));
    // The state-graph searches (reduction off, caching on) cache every state, not only
    // barrier states, and have no sleep sets.
    let every_state = s.reduction_off.is_some() && s.caching_off.is_none();
    if every_state {
        let _ = writeln!(
            w,
            "executions: {} complete, {} pruned at explored states, {}",
            s.complete,
            s.pruned,
            cut_text(s)
        );
    } else {
        let _ = writeln!(
            w,
            "executions: {} complete, {} pruned as redundant ({} at explored barrier states, {} sleep-set blocked), {}",
            s.complete,
            s.pruned,
            s.cache_hits,
            s.sleep_blocked,
            cut_text(s)
        );
    }
    if let Some(why) = s.jobs_ignored {
        let _ = writeln!(w, "--jobs: one thread ({why})");
    }
    if s.mode == Mode::Exhaustive {
        match s.caching_off {
            None if every_state => {
                let _ = writeln!(w, "distinct states explored: {}", s.states);
            }
            None => {
                let _ = writeln!(w, "distinct states at barrier points: {}", s.states);
            }
            Some(why) => {
                let _ = writeln!(w, "state caching: off ({why})");
            }
        }
    }
    if let Some(why) = s.reduction_off {
        let _ = writeln!(w, "reduction: off ({why})");
    }
    final_stores_text(w, launch, s);
    if launch.atomicity != interp::Atomicity::Statement {
        let _ = writeln!(w, "atomicity: {}", launch.atomicity.name());
    }
    let policy = launch.race_policy.name();
    if s.races.is_empty() {
        let _ = writeln!(w, "races: none (race policy {policy})");
    } else {
        let benign = s.races.iter().filter(|r| r.race.benign()).count();
        let benign = if benign > 0 {
            format!(", {benign} of them benign")
        } else {
            String::new()
        };
        let _ = writeln!(
            w,
            "races: {} distinct (race policy {policy}{benign})",
            s.races.len()
        );
        let proved = s.shortest_proved();
        for (k, (r, path)) in s.races.iter().zip(reports).enumerate() {
            let pre = s
                .race_preemptions
                .get(k)
                .map(|p| format!(", {}", plural(*p as u64, "preemption", "preemptions")))
                .unwrap_or_default();
            let _ = writeln!(
                w,
                "  {}{} at {} `{}` / {} at {} `{}` ({} {} steps{pre}{})",
                if r.race.benign() { "benign: " } else { "" },
                r.race.first.kind.name(),
                src.location(r.race.first.span.start),
                src.statement(&r.race.first.span),
                r.race.second.kind.name(),
                src.location(r.race.second.span.start),
                src.statement(&r.race.second.span),
                if proved {
                    "shortest schedule"
                } else {
                    "shortest schedule found"
                },
                r.schedule.len(),
                path.as_ref()
                    .map(|p| format!("; report {p}"))
                    .unwrap_or_default()
            );
        }
        match s.race_changes_result() {
            Some(true) => {
                let _ = writeln!(
                    w,
                    "  the race{} make{} the result schedule-dependent: {} distinct final stores",
                    if s.races.len() > 1 { "s" } else { "" },
                    if s.races.len() > 1 { "" } else { "s" },
                    s.finals.len()
                );
            }
            Some(false) => {
                let _ = writeln!(
                    w,
                    "  the race{} cannot change the arrays' final values on this input under {} atomicity (every execution ends in the same arrays; private variables are not compared); still a data race (Definition 5.2)",
                    if s.races.len() > 1 { "s" } else { "" },
                    launch.atomicity.name()
                );
            }
            None => {}
        }
    }
    if s.faults.is_empty() {
        let _ = writeln!(w, "runtime faults: none");
    } else {
        let _ = writeln!(w, "runtime faults: {} distinct", s.faults.len());
        for f in &s.faults {
            let _ = writeln!(
                w,
                "  {} ({}; schedule {} steps: {})",
                f.fault,
                plural(f.count, "execution", "executions"),
                f.schedule.len(),
                short_schedule(&f.schedule, 12)
            );
        }
    }
    match &s.non_terminating_schedule {
        None => {
            let _ = writeln!(w, "non-terminating executions: 0");
        }
        // Cut executions are non-terminating only where a repeating state proves it (an
        // exhaustive search ends EXHAUSTIVE only then; otherwise its verdict is INCOMPLETE
        // (step bound), see `dpor::Dpor::bound_leaf`).
        Some(sch) if s.verdict != Verdict::Exhaustive => {
            let _ = writeln!(
                w,
                "executions cut at the step bound: {} (--max-steps {}, or a repeating barrier state; what follows a step-bound cut was not explored: its accesses, races and faults are unknown, and it may terminate; shortest schedule {} steps: {})",
                s.non_terminating,
                launch.max_steps,
                sch.len(),
                short_schedule(sch, 12)
            );
        }
        Some(sch) => {
            let _ = writeln!(
                w,
                "non-terminating executions: {} (a repeating state: a thread that spins at the step bound {}, or a barrier state that recurs; shortest schedule {} steps: {})",
                s.non_terminating,
                launch.max_steps,
                sch.len(),
                short_schedule(sch, 12)
            );
        }
    }
    for d in &s.divergences {
        let _ = writeln!(
            w,
            "barrier divergence: {} (schedule {} steps: {})",
            d.message,
            d.schedule.len(),
            short_schedule(&d.schedule, 12)
        );
    }
    if let Some(p) = &s.pct {
        let _ = writeln!(
            w,
            "PCT guarantee: each execution finds a given bug of depth {} with probability >= 1/(n·k^(d-1)) = {:.3e} (n = {} threads, k = {} steps)",
            p.depth, p.bound, p.threads, p.max_steps
        );
    }
    if s.lemma_confirmed() {
        let _ = writeln!(w, "Lemma 5.4 confirmed on this input: race-free, and every execution ends in the same final store");
    }
    let _ = writeln!(
        w,
        "time: {:.3} s ({:.0} executions/s, {} steps)",
        s.elapsed.as_secs_f64(),
        s.rate(),
        s.steps
    );
    let _ = writeln!(w, "{}", s.verdict);
    o
}

/// The distinct final stores: arrays equal in all of them once, then per store the arrays
/// that differ (long ones as the elements that differ from store #1), and per element that
/// differs somewhere, in how many stores it differs from #1.
fn final_stores_text(w: &mut String, launch: &Launch, s: &Summary) {
    use std::fmt::Write;
    if s.finals.is_empty() {
        let _ = writeln!(w, "distinct final stores: 0 (no execution ran to its end)");
        return;
    }
    let _ = writeln!(w, "distinct final stores: {}", s.finals.len());
    let k = &launch.kernel;
    let mut differing = Vec::new();
    let mut common = Vec::new();
    for a in 0..k.arrays.len() {
        for inst in 0..launch.instances(a) {
            let first = &s.finals.first().map(|f| &f.memory.arrays[a][inst]);
            if s.finals
                .iter()
                .all(|f| Some(&f.memory.arrays[a][inst]) == *first)
            {
                common.push((a, inst));
            } else {
                differing.push((a, inst));
            }
        }
    }
    let race_free = s.race_free.as_ref();
    if let Some(r) = race_free {
        let _ = writeln!(
            w,
            "  with a barrier {} (`ksim fix`) the kernel is race-free and ends in {}",
            r.barriers.join(" and "),
            match (r.store, s.finals.len()) {
                (Some(_), 1) => "this store".to_string(),
                (Some(k), _) => format!("store #{k}"),
                (None, _) => "a store no explored execution ends in".into(),
            }
        );
    }
    // The store of a race-free run, said where it helps: with races or several stores. Where
    // the canonical run names none but `ksim fix`'s line above did, saying "no store can be
    // named" would contradict it.
    let canonical = s.canonical.as_ref().filter(|c| {
        (s.finals.len() > 1 || !s.races.is_empty()) && (c.store.is_some() || s.race_free.is_none())
    });
    if let Some(c) = canonical {
        let line = match (c.store, &c.why_none) {
            (Some(_), _) if s.finals.len() == 1 => {
                "a race-free run (the canonical execution, which meets no race) ends in this store"
                    .to_string()
            }
            (Some(k), _) => format!(
                "a race-free run (the canonical execution, which meets no race) ends in store #{k}"
            ),
            (None, Some(why)) => format!("no store can be named as a race-free run's: {why}"),
            (None, None) => "no store can be named as a race-free run's".into(),
        };
        let _ = writeln!(w, "  {line}");
    }
    if s.finals.len() == 1 {
        let f = &s.finals[0];
        for &(a, inst) in &common {
            let _ = writeln!(
                w,
                "  {} = {}",
                array_label(launch, a, inst),
                values(&f.memory.arrays[a][inst])
            );
        }
        return;
    }
    let names: Vec<String> = common
        .iter()
        .map(|&(a, i)| array_label(launch, a, i))
        .collect();
    if !names.is_empty() {
        let _ = writeln!(w, "  the same in every final store: {}", names.join(", "));
    }
    let base = &s.finals[0].memory;
    for d in super::stores::differences(launch, &s.finals) {
        let counts: Vec<String> = (d.elements.iter())
            .map(|e| format!("[{}] in {}", e.offset, e.stores))
            .collect();
        let _ = writeln!(
            w,
            "  {} differs from store #1 at {} of {} stores",
            d.array,
            counts.join(", "),
            s.finals.len()
        );
    }
    const SHOWN: usize = 20;
    let _ = writeln!(
        w,
        "  each store below is reproduced by `ksim run` with this launch and its --schedule"
    );
    for (i, f) in s.finals.iter().take(SHOWN).enumerate() {
        let mark = if race_free.and_then(|r| r.store) == Some(i + 1) {
            ", the race-free store"
        } else if canonical.and_then(|c| c.store) == Some(i + 1) {
            ", the race-free canonical run's store"
        } else {
            ""
        };
        let _ = writeln!(
            w,
            "  #{} ({}{mark}): {}",
            i + 1,
            plural(f.count, "execution", "executions"),
            store_schedule(&f.schedule, i)
        );
        for &(a, inst) in &differing {
            let v = &f.memory.arrays[a][inst];
            let label = array_label(launch, a, inst);
            if v.len() <= 32 || i == 0 {
                let _ = writeln!(w, "      {label} = {}", values(v));
            } else {
                let diffs: Vec<String> = v
                    .iter()
                    .zip(&base.arrays[a][inst])
                    .enumerate()
                    .filter(|(_, (x, y))| x != y)
                    .map(|(j, (x, _))| format!("[{j}]={x}"))
                    .collect();
                let _ = writeln!(w, "      {label}: differs from #1 at {}", diffs.join(" "));
            }
        }
    }
    if s.finals.len() > SHOWN {
        let _ = writeln!(w, "  ... and {} more (see --json)", s.finals.len() - SHOWN);
    }
}
