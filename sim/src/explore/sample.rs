//! Randomised exploration: uniformly random schedules and PCT.
//!
//! Execution `i` of a run with seed `s` uses its own generator, seeded with
//! [`execution_seed`]`(s, i)`, so it does not depend on which worker runs it or on how many
//! workers there are. Executions are run in chunks in parallel (rayon) and merged strictly in
//! index order, so summaries (first schedules, shortest schedules, counts) are identical for
//! every `jobs`.
//!
//! PCT (Burckhardt et al., ASPLOS 2010, Algorithm 1): the n threads get distinct random
//! initial priorities d, d+1, ..., d+n−1; d−1 priority change points k₁..k_{d−1} are drawn
//! uniformly from 1..=k; at every step the runnable thread of highest priority runs, and
//! when the i-th change point is reached the running thread's priority drops to d−i (below
//! every initial one). A bug of depth d is then found by one execution with probability at
//! least 1/(n·k^(d−1)). k, the number of steps of an execution, is estimated before the
//! run by the canonical schedule; the bound is printed with the largest k observed.

use super::{
    Collector, Config, Deadline, Incomplete, Mode, PctInfo, ProgressFn, Summary, Verdict,
    CHECK_EVERY,
};
use interp::exec::{self, Outcome, Quiet};
use interp::reference::{Runnable, State};
use interp::Launch;
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use rayon::prelude::*;

/// The seed of execution `index` of a run with seed `seed` (SplitMix64 finaliser of both).
pub fn execution_seed(seed: u64, index: u64) -> u64 {
    fn mix(mut z: u64) -> u64 {
        z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    mix(seed ^ mix(index))
}

/// PCT's guaranteed lower bound 1/(n·k^(d−1)).
pub fn pct_bound(threads: u64, steps: u64, depth: u32) -> f64 {
    let n = threads.max(1) as f64;
    let k = steps.max(1) as f64;
    1.0 / (n * k.powi(depth.saturating_sub(1) as i32))
}

/// `n` executions with uniformly random choices.
pub fn random(
    launch: &Launch,
    n: u64,
    seed: u64,
    cfg: &Config,
    progress: Option<ProgressFn<'_>>,
) -> Summary {
    sample(
        launch,
        n,
        cfg,
        progress,
        Mode::Random { n, seed },
        Incomplete::Random,
        Deadline::new(cfg),
        |i, deadline| {
            let mut rng = StdRng::seed_from_u64(execution_seed(seed, i));
            exec::run(
                launch,
                until(deadline, |r| {
                    r.nth(rng.random_range(0..r.len()))
                        .expect("a runnable thread")
                }),
                &mut Quiet,
            )
        },
    )
}

/// A scheduler that gives up (the execution stops, `Outcome::stopped`) once `deadline`
/// has passed, looked at every [`CHECK_EVERY`] steps: one endless execution does not
/// delay a timeout or a Ctrl-C.
fn until(
    deadline: Deadline,
    mut choose: impl FnMut(&Runnable) -> usize,
) -> impl FnMut(&State, &Runnable) -> Option<usize> {
    let mut steps = 0u64;
    move |_, runnable| {
        steps += 1;
        if steps.is_multiple_of(CHECK_EVERY) && deadline.reason().is_some() {
            return None;
        }
        Some(choose(runnable))
    }
}

/// `n` executions under PCT with depth `depth` (at least 1). With k steps per execution
/// there are at most k distinct change points, so at most k are drawn whatever the depth.
pub fn pct(
    launch: &Launch,
    n: u64,
    depth: u32,
    seed: u64,
    cfg: &Config,
    progress: Option<ProgressFn<'_>>,
) -> Summary {
    let depth = depth.max(1);
    let deadline = Deadline::new(cfg);
    let k = exec::run(
        launch,
        until(deadline, |r| r.first().expect("a runnable thread")),
        &mut Quiet,
    )
    .steps
    .max(1);
    let points = (depth as u64 - 1).min(k);
    let threads = launch.threads();
    let mut s = sample(
        launch,
        n,
        cfg,
        progress,
        Mode::Pct { n, depth, seed },
        Incomplete::Pct,
        deadline,
        |i, deadline| {
            let mut rng = StdRng::seed_from_u64(execution_seed(seed, i));
            // Initial priorities: a random permutation of d .. d+n-1.
            let mut prio: Vec<u64> = (0..threads as u64).map(|p| p + depth as u64).collect();
            for j in (1..prio.len()).rev() {
                let r = rng.random_range(0..=j);
                prio.swap(j, r);
            }
            let mut changes: Vec<(u64, u64)> = (1..=points)
                .map(|i| (rng.random_range(1..=k), depth as u64 - i))
                .collect();
            changes.sort();
            let mut step = 0u64;
            let mut next_change = 0;
            exec::run(
                launch,
                until(deadline, |r| {
                    let mut t = r.iter().max_by_key(|&t| prio[t]).expect("runnable");
                    step += 1;
                    while next_change < changes.len() && changes[next_change].0 == step {
                        prio[t] = changes[next_change].1;
                        next_change += 1;
                        t = r.iter().max_by_key(|&t| prio[t]).expect("runnable");
                    }
                    t
                }),
                &mut Quiet,
            )
        },
    );
    s.pct = Some(PctInfo {
        depth,
        threads: threads as u64,
        max_steps: s.longest,
        bound: pct_bound(threads as u64, s.longest, depth),
    });
    s
}

/// Runs executions `0..n` (`one(i, deadline)`) in chunks, in parallel, merged in index
/// order. An execution stopped by the deadline counts as cut; what it found is kept.
#[allow(clippy::too_many_arguments)]
fn sample(
    launch: &Launch,
    n: u64,
    cfg: &Config<'_>,
    mut progress: Option<ProgressFn<'_>>,
    mode: Mode,
    sampling: Incomplete,
    deadline: Deadline,
    one: impl Fn(u64, Deadline) -> Outcome + Sync,
) -> Summary {
    let _ = launch;
    let mut col = Collector::new(mode, cfg);
    col.deadline = deadline;
    col.summary.states = 0;
    let limit = cfg.max_executions.map_or(n, |m| m.min(n));
    let jobs = cfg.jobs.max(1);
    // Results do not depend on the number of workers, so if the system refuses to start
    // them, the calling thread runs everything.
    let pool = (jobs > 1)
        .then(|| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(jobs)
                .build()
                .ok()
        })
        .flatten();
    let chunk = (64 * jobs as u64).max(64);
    let mut stop = None;
    let mut i = 0u64;
    while i < limit {
        if let Some(r) = col.stop_reason() {
            stop = Some(r);
            break;
        }
        let end = (i + chunk).min(limit);
        let run = |i| one(i, deadline);
        let outs: Vec<Outcome> = match &pool {
            Some(pool) => pool.install(|| (i..end).into_par_iter().map(run).collect()),
            None => (i..end).map(run).collect(),
        };
        for out in outs {
            col.outcome(out);
        }
        i = end;
        col.progress(&mut progress, Some(n));
    }
    if stop.is_none() {
        // The deadline may have stopped the last executions.
        stop = col.stop_reason().filter(|_| col.summary.cut > 0);
    }
    let verdict = match stop {
        Some(r) => Verdict::Incomplete(r),
        None if limit < n => Verdict::Incomplete(Incomplete::MaxExecutions),
        None => Verdict::Incomplete(sampling),
    };
    col.finish(verdict)
}
