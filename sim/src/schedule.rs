//! Schedules: the sequence of thread choices of an execution, run-length encoded, and the
//! schedulers that produce them.

use interp::exec::{self, Observer, Outcome};
use interp::reference::{Runnable, State};
use interp::Launch;
use rand::{RngExt, SeedableRng};
use serde::Serialize;

pub use interp::exec::Schedule;

/// How a single run picks the next thread.
#[derive(Clone, Debug)]
pub enum Scheduler {
    /// The lowest-numbered runnable thread: each thread runs to its next barrier or to its
    /// end, in thread order, then the barrier fires.
    Canonical,
    /// One step per thread in turn.
    RoundRobin,
    /// A uniformly random runnable thread, from a seeded generator.
    Random { seed: u64 },
    /// Exactly the given choices.
    Replay(Schedule),
    /// The given choices, then the canonical scheduler to the end of the kernel
    /// (`ksim replay --continue`).
    ReplayThenCanonical(Schedule),
}

/// Why a replayed schedule could not be followed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Infeasible {
    /// The step (0-based) at which the recorded choice was impossible.
    pub step: u64,
    pub thread: Option<usize>,
    pub reason: String,
}

/// Runs `launch` under `scheduler`; for a replay, also says where the schedule could not
/// be followed (a thread that cannot step, or a schedule that ends before the kernel).
pub fn run(
    launch: &Launch,
    scheduler: &Scheduler,
    obs: &mut dyn Observer,
) -> (Outcome, Option<Infeasible>) {
    match scheduler {
        Scheduler::Canonical => (exec::run(launch, |_, r| r.first(), obs), None),
        Scheduler::RoundRobin => {
            let mut last: Option<usize> = None;
            let out = exec::run(
                launch,
                |_, r| {
                    let next = last.and_then(|l| r.next_after(l)).or_else(|| r.first());
                    last = next;
                    next
                },
                obs,
            );
            (out, None)
        }
        Scheduler::Random { seed } => {
            let mut rng = rand::rngs::StdRng::seed_from_u64(*seed);
            let out = exec::run(launch, |_, r| r.nth(rng.random_range(0..r.len())), obs);
            (out, None)
        }
        Scheduler::Replay(schedule) => replay(launch, schedule, false, obs),
        Scheduler::ReplayThenCanonical(schedule) => replay(launch, schedule, true, obs),
    }
}

fn replay(
    launch: &Launch,
    schedule: &Schedule,
    then_canonical: bool,
    obs: &mut dyn Observer,
) -> (Outcome, Option<Infeasible>) {
    let mut choices = schedule.choices();
    let mut step = 0u64;
    let mut infeasible = None;
    let out = exec::run(
        launch,
        |state: &State, runnable: &Runnable| {
            let Some(t) = choices.next() else {
                if then_canonical {
                    step += 1;
                    return runnable.first();
                }
                infeasible = Some(Infeasible {
                    step,
                    thread: None,
                    reason: format!(
                        "the schedule ends after {step} steps but threads {} can still step",
                        short_list(runnable)
                    ),
                });
                return None;
            };
            if !runnable.contains(t) {
                let why = if t >= launch.threads() {
                    format!("the launch has only {} threads", launch.threads())
                } else {
                    match state.status(launch, t) {
                        interp::reference::ThreadStatus::AtBarrier => {
                            "it waits at a barrier".into()
                        }
                        interp::reference::ThreadStatus::Terminated => "it has terminated".into(),
                        interp::reference::ThreadStatus::Runnable => "it cannot step".into(),
                    }
                };
                infeasible = Some(Infeasible {
                    step,
                    thread: Some(t),
                    reason: format!("thread {t} cannot take step {step}: {why}"),
                });
                return None;
            }
            step += 1;
            Some(t)
        },
        obs,
    );
    (out, infeasible)
}

fn short_list(items: &Runnable) -> String {
    let shown: Vec<String> = items.iter().take(8).map(|t| t.to_string()).collect();
    if items.len() > 8 {
        format!("{}, ...", shown.join(", "))
    } else {
        shown.join(", ")
    }
}
