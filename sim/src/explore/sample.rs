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

use super::{Collector, Config, Incomplete, Mode, PctInfo, ProgressFn, Summary, Verdict};
use interp::exec::{self, Outcome, Quiet};
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
        |i| {
            let mut rng = StdRng::seed_from_u64(execution_seed(seed, i));
            exec::run(
                launch,
                |_, r| r.nth(rng.random_range(0..r.len())),
                &mut Quiet,
            )
        },
    )
}

/// `n` executions under PCT with depth `depth` (at least 1).
pub fn pct(
    launch: &Launch,
    n: u64,
    depth: u32,
    seed: u64,
    cfg: &Config,
    progress: Option<ProgressFn<'_>>,
) -> Summary {
    let depth = depth.max(1);
    let k = exec::run_canonical(launch).steps.max(1);
    let threads = launch.threads();
    let mut s = sample(
        launch,
        n,
        cfg,
        progress,
        Mode::Pct { n, depth, seed },
        Incomplete::Pct,
        |i| {
            let mut rng = StdRng::seed_from_u64(execution_seed(seed, i));
            // Initial priorities: a random permutation of d .. d+n-1.
            let mut prio: Vec<u64> = (0..threads as u64).map(|p| p + depth as u64).collect();
            for j in (1..prio.len()).rev() {
                let r = rng.random_range(0..=j);
                prio.swap(j, r);
            }
            let mut changes: Vec<(u64, u64)> = (1..depth as u64)
                .map(|i| (rng.random_range(1..=k), depth as u64 - i))
                .collect();
            changes.sort();
            let mut step = 0u64;
            let mut next_change = 0;
            exec::run(
                launch,
                |_, r| {
                    let mut t = r.iter().max_by_key(|&t| prio[t]).expect("runnable");
                    step += 1;
                    while next_change < changes.len() && changes[next_change].0 == step {
                        prio[t] = changes[next_change].1;
                        next_change += 1;
                        t = r.iter().max_by_key(|&t| prio[t]).expect("runnable");
                    }
                    Some(t)
                },
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

fn sample(
    launch: &Launch,
    n: u64,
    cfg: &Config,
    mut progress: Option<ProgressFn<'_>>,
    mode: Mode,
    sampling: Incomplete,
    one: impl Fn(u64) -> Outcome + Sync,
) -> Summary {
    let _ = launch;
    let mut col = Collector::new(mode);
    col.summary.states = 0;
    let limit = cfg.max_executions.map_or(n, |m| m.min(n));
    let jobs = cfg.jobs.max(1);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .build()
        .expect("thread pool");
    let chunk = (64 * jobs as u64).max(64);
    let mut stop = None;
    let mut i = 0u64;
    while i < limit {
        if let Some(r) = col.stop_reason(cfg) {
            stop = Some(r);
            break;
        }
        let end = (i + chunk).min(limit);
        let outs: Vec<Outcome> = if jobs > 1 {
            pool.install(|| (i..end).into_par_iter().map(&one).collect())
        } else {
            (i..end).map(&one).collect()
        };
        for out in outs {
            col.outcome(out);
        }
        i = end;
        col.progress(&mut progress, Some(n));
    }
    col.summary.cut = 0;
    let verdict = match stop {
        Some(r) => Verdict::Incomplete(r),
        None if limit < n => Verdict::Incomplete(Incomplete::MaxExecutions),
        None => Verdict::Incomplete(sampling),
    };
    col.finish(verdict)
}
