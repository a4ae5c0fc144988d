//! Schedules: the sequence of thread choices of an execution, run-length encoded, and the
//! schedulers that produce them.

use interp::exec::{self, Observer, Outcome};
use interp::reference::State;
use interp::Launch;
use rand::{RngExt, SeedableRng};
use serde::{Deserialize, Serialize};

/// A recorded schedule: `runs[k] = (thread, count)` means `count` consecutive K-STEPs of the
/// thread with global index `thread` (`group * local_size + tid`). Barriers are not part of
/// it: they fire as soon as they are enabled.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Schedule {
    pub runs: Vec<(usize, u64)>,
}

impl Schedule {
    pub fn from_choices(choices: &[usize]) -> Schedule {
        let mut runs: Vec<(usize, u64)> = Vec::new();
        for &t in choices {
            match runs.last_mut() {
                Some((last, n)) if *last == t => *n += 1,
                _ => runs.push((t, 1)),
            }
        }
        Schedule { runs }
    }

    pub fn choices(&self) -> impl Iterator<Item = usize> + '_ {
        self.runs
            .iter()
            .flat_map(|&(t, n)| std::iter::repeat_n(t, n as usize))
    }

    /// Number of steps (saturating: a schedule read from a file may claim more than
    /// 2^64 − 1; [`Schedule::check`] refuses it).
    pub fn len(&self) -> u64 {
        self.runs.iter().fold(0u64, |n, r| n.saturating_add(r.1))
    }

    /// Checks a schedule read from a file against a launch of `threads` threads: it is not
    /// empty, names only threads of the launch, has no run of 0 steps, and its number of
    /// steps fits in 64 bits. Returns that number.
    pub fn check(&self, threads: usize) -> Result<u64, String> {
        if self.runs.is_empty() {
            return Err("the schedule is empty".into());
        }
        let mut steps = 0u64;
        for (k, &(t, n)) in self.runs.iter().enumerate() {
            if t >= threads {
                return Err(format!(
                    "run {k} names thread {t}, but the launch has only {threads} threads (0..{threads})"
                ));
            }
            if n == 0 {
                return Err(format!("run {k} (thread {t}) has 0 steps"));
            }
            steps = steps
                .checked_add(n)
                .ok_or_else(|| "the schedule has more than 2^64 - 1 steps".to_string())?;
        }
        Ok(steps)
    }

    pub fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }
}

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
}

/// Why a replayed schedule could not be followed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
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
        Scheduler::Canonical => (exec::run(launch, |_, r| Some(r[0]), obs), None),
        Scheduler::RoundRobin => {
            let mut last: Option<usize> = None;
            let out = exec::run(
                launch,
                |_, r| {
                    let next = match last {
                        None => r[0],
                        Some(l) => r.iter().copied().find(|&t| t > l).unwrap_or(r[0]),
                    };
                    last = Some(next);
                    Some(next)
                },
                obs,
            );
            (out, None)
        }
        Scheduler::Random { seed } => {
            let mut rng = rand::rngs::StdRng::seed_from_u64(*seed);
            let out = exec::run(launch, |_, r| Some(r[rng.random_range(0..r.len())]), obs);
            (out, None)
        }
        Scheduler::Replay(schedule) => replay(launch, schedule, obs),
    }
}

fn replay(
    launch: &Launch,
    schedule: &Schedule,
    obs: &mut dyn Observer,
) -> (Outcome, Option<Infeasible>) {
    let mut choices = schedule.choices();
    let mut step = 0u64;
    let mut infeasible = None;
    let out = exec::run(
        launch,
        |state: &State, runnable: &[usize]| {
            let Some(t) = choices.next() else {
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
            if !runnable.contains(&t) {
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

fn short_list(items: &[usize]) -> String {
    let shown: Vec<String> = items.iter().take(8).map(|t| t.to_string()).collect();
    if items.len() > 8 {
        format!("{}, ...", shown.join(", "))
    } else {
        shown.join(", ")
    }
}
