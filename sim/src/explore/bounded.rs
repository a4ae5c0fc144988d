//! Preemption-bounded exploration (`explore --exhaustive --preemption-bound K`), after
//! CHESS (Musuvathi and Qadeer, PLDI 2007): every schedule with at most K preemptions,
//! iteratively deepened (all schedules with 0 preemptions, then 1, ..., then K), so that
//! each race is first found with the fewest preemptions that reach it.
//!
//! The default scheduler keeps running the thread that took the last step while it can
//! step, and otherwise runs the lowest-numbered runnable thread (the canonical schedule).
//! Preemptions are counted as delays (Emmi, Qadeer and Rakamarić, POPL 2011): running,
//! instead of the default thread, the runnable thread k places after it in thread order
//! (cyclically) costs k. A switch to the next thread costs one, as in CHESS; a switch
//! further away costs more, and so does a different choice when the running thread blocks
//! or ends, where CHESS chooses freely. Free choices there give threads! schedules even
//! with no preemption (65 threads that each write once), while delays keep the number of
//! schedules within the bound polynomial, O(steps^K), whatever the number of threads.
//!
//! Every schedule is the default scheduler plus the list of its deviations (step, thread),
//! and the other way round, so enumerating the deviation lists of total cost 0..=K visits
//! every schedule within the bound exactly once. Each schedule is run from the initial
//! state by the interpreter (races, faults, divergence, the step bound: as `ksim run`).
//! When no schedule within the bound could have deviated once more, every schedule has
//! been run and the verdict is EXHAUSTIVE; otherwise it is INCOMPLETE (exhaustive within
//! preemption bound K). There is no reduction and no state caching
//! ([`Summary::reduction_off`]).

use super::{Collector, Config, Incomplete, Mode, ProgressFn, Summary, Verdict, CHECK_EVERY};
use interp::exec::{self, Quiet};
use interp::Launch;

/// Why the bounded search has no reduction.
pub const REDUCTION_OFF: &str = "preemption-bounded search: every schedule within the bound \
    is run from the start (no partial-order reduction, no state caching)";

/// A schedule as the default scheduler plus its deviations: (step, thread), by step.
type Preemptions = Vec<(u64, usize)>;

/// Explores every schedule of `launch` with at most `bound` preemptions.
pub fn preemption_bounded(
    launch: &Launch,
    bound: u32,
    cfg: &Config,
    mut progress: Option<ProgressFn<'_>>,
) -> Summary {
    let mut col = Collector::new(Mode::PreemptionBounded { bound }, cfg);
    col.summary.states = 0;
    col.summary.caching_off = Some(REDUCTION_OFF);
    col.summary.reduction_off = Some(REDUCTION_OFF);
    if cfg.jobs > 1 {
        col.summary.jobs_ignored = Some("a preemption-bounded search runs on one thread");
    }
    // Deviation lists by total cost: `levels[c]` holds those of cost c not yet run.
    let mut levels: Vec<Vec<Preemptions>> = vec![Vec::new(); bound as usize + 1];
    levels[0].push(Vec::new());
    let mut stop = None;
    // Some schedule within the bound could have deviated once more.
    let mut beyond = false;
    'levels: for cost in 0..=bound {
        let level = std::mem::take(&mut levels[cost as usize]);
        for pre in &level {
            if let Some(m) = cfg.max_executions {
                if col.summary.executions() >= m {
                    stop = Some(Incomplete::MaxExecutions);
                }
            }
            if stop.is_none() {
                stop = col.stop_reason();
            }
            if stop.is_some() {
                col.summary.cut += 1;
                break 'levels;
            }
            let races_before = col.summary.races.len();
            let (out, alternatives, over) = run_one(launch, pre, bound - cost, col.deadline);
            beyond |= over;
            col.outcome(out);
            col.summary
                .race_preemptions
                .resize(col.summary.races.len().max(races_before), cost);
            for (step, threads) in alternatives {
                for (t, delay) in threads {
                    let mut child = pre.clone();
                    child.push((step, t));
                    levels[(cost + delay) as usize].push(child);
                }
            }
            col.progress(&mut progress, None);
        }
    }
    let verdict = match stop {
        Some(r) => Verdict::Incomplete(r),
        None if beyond => Verdict::Incomplete(Incomplete::PreemptionBound(bound)),
        None => Verdict::Exhaustive,
    };
    col.finish(verdict)
}

/// A step of a run and the threads that could have taken it instead, each with its cost.
type Alternatives = (u64, Vec<(usize, u32)>);

/// Runs the default scheduler with the deviations `pre`; returns the outcome, for every
/// step after the last deviation the other runnable threads that cost at most `budget`
/// (how many places after the default thread they come, cyclically) with their cost, and
/// whether some other thread would have cost more.
fn run_one(
    launch: &Launch,
    pre: &[(u64, usize)],
    budget: u32,
    deadline: super::Deadline,
) -> (exec::Outcome, Vec<Alternatives>, bool) {
    let mut over = false;
    let after = pre.last().map_or(0, |&(s, _)| s + 1);
    let mut alternatives = Vec::new();
    let mut next_pre = pre.iter().peekable();
    let mut last: Option<usize> = None;
    let mut step = 0u64;
    let out = exec::run(
        launch,
        |_, runnable| {
            if step > 0 && step.is_multiple_of(CHECK_EVERY) && deadline.reason().is_some() {
                return None;
            }
            let default = last
                .filter(|&l| runnable.contains(l))
                .or_else(|| runnable.first())
                .expect("a runnable thread");
            let t = match next_pre.peek() {
                Some(&&(s, t)) if s == step => {
                    next_pre.next();
                    t
                }
                _ => default,
            };
            if step >= after {
                let all: Vec<usize> = runnable.iter().collect();
                let d = all.iter().position(|&r| r == default).expect("runnable");
                over |= all.len() > budget as usize + 1;
                let others: Vec<(usize, u32)> = (1..all.len().min(budget as usize + 1))
                    .map(|k| (all[(d + k) % all.len()], k as u32))
                    .collect();
                if !others.is_empty() {
                    alternatives.push((step, others));
                }
            }
            last = Some(t);
            step += 1;
            Some(t)
        },
        &mut Quiet,
    );
    (out, alternatives, over)
}
