//! Preemption-bounded exploration (`explore --preemption-bound K`), after CHESS (Musuvathi
//! and Qadeer, PLDI 2007): every schedule with at most K preemptions, iteratively deepened
//! (all schedules with 0 preemptions, then 1, ..., then K), so that each race is first found
//! with the fewest preemptions that reach it.
//!
//! The default scheduler keeps running the thread that took the last step while it can
//! step, and otherwise runs the lowest-numbered runnable thread (like the canonical
//! schedule). A *preemption* is any other choice. CHESS lets the scheduler choose freely,
//! at no cost, when the running thread blocks or ends; here that choice costs one
//! preemption too, which keeps the number of schedules with at most K preemptions
//! polynomial, O((steps × threads)^K), where free choices would give threads! schedules
//! even with no preemption (65 threads that each write once).
//!
//! Every schedule is the default scheduler plus the list of its preemptions (step, thread),
//! and the other way round, so enumerating the preemption lists of length 0..=K visits
//! every schedule with at most K preemptions exactly once. Each schedule is run from the
//! initial state by the interpreter (races, faults, divergence, the step bound: as `ksim
//! run`). When no schedule with K preemptions could have taken one more, every schedule
//! has been run and the verdict is EXHAUSTIVE; otherwise it is INCOMPLETE (exhaustive
//! within preemption bound K). There is no reduction and no state caching
//! ([`Summary::reduction_off`]).

use super::{Collector, Config, Incomplete, Mode, ProgressFn, Summary, Verdict, CHECK_EVERY};
use interp::exec::{self, Quiet};
use interp::Launch;

/// Why the bounded search has no reduction.
pub const REDUCTION_OFF: &str = "preemption-bounded search: every schedule within the bound \
    is run from the start (no partial-order reduction, no state caching)";

/// A schedule as the default scheduler plus its preemptions: (step, thread), by step.
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
    let mut level: Vec<Preemptions> = vec![Vec::new()];
    let mut stop = None;
    // Some schedule within the bound could have taken one more preemption.
    let mut beyond = false;
    let mut depth = 0u32;
    'levels: loop {
        let mut next: Vec<Preemptions> = Vec::new();
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
            let (out, alternatives) = run_one(launch, pre, col.deadline);
            col.outcome(out);
            col.summary
                .race_preemptions
                .resize(col.summary.races.len().max(races_before), depth);
            if depth < bound {
                for (step, threads) in alternatives {
                    for t in threads {
                        let mut child = pre.clone();
                        child.push((step, t));
                        next.push(child);
                    }
                }
            } else if !alternatives.is_empty() {
                beyond = true;
            }
            col.progress(&mut progress, None);
        }
        if next.is_empty() {
            break;
        }
        level = next;
        depth += 1;
    }
    let verdict = match stop {
        Some(r) => Verdict::Incomplete(r),
        None if beyond => Verdict::Incomplete(Incomplete::PreemptionBound(bound)),
        None => Verdict::Exhaustive,
    };
    col.finish(verdict)
}

/// Runs the default scheduler with the preemptions `pre`; returns the outcome and, for
/// every step after the last preemption, the threads that could have preempted there.
fn run_one(
    launch: &Launch,
    pre: &[(u64, usize)],
    deadline: super::Deadline,
) -> (exec::Outcome, Vec<(u64, Vec<usize>)>) {
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
                let others: Vec<usize> = runnable.iter().filter(|&r| r != default).collect();
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
    (out, alternatives)
}
