//! Deciding over every schedule what one canonical run cannot decide, within a budget.
//!
//! One race-free canonical execution decides race freedom for every schedule of its input
//! (the README's argument) only when it meets no conflicting pair at all. Two things break
//! that: a *benign* pair under `--race-policy same-value` (in another order the same pair
//! can be harmful: the write no longer stores the value the element already held), and
//! atomics (their order changes the values, and with them the paths and the result; Lemma
//! 5.4 needs determinism). Where they occur, `ksim races` and `ksim verify-scan` run the
//! exhaustive explorer on the same launch, within [`MAX_STATES`] and [`TIMEOUT`], and
//! decide only when it covered every schedule ([`covers_every_schedule`]).

use super::{Config, Summary, Verdict};
use interp::Launch;
use std::time::Duration;

/// The budget of one exploration: distinct barrier states.
pub const MAX_STATES: u64 = 100_000;
/// The budget of one exploration: wall-clock time.
pub const TIMEOUT: Duration = Duration::from_secs(5);
/// The largest launch explored: with more threads the orders of a few conflicting pairs
/// are already too many to explore, and the budget would be spent for nothing.
pub const MAX_THREADS: usize = 64;

/// Every schedule of `launch` up to equivalence, within the budget; or why it was not
/// explored (the launch is too large).
pub fn every_order(launch: &Launch) -> Result<Summary, String> {
    if launch.threads() > MAX_THREADS {
        return Err(format!(
            "the launch has {} threads, too many to explore every order (at most {MAX_THREADS})",
            launch.threads()
        ));
    }
    let cfg = Config {
        max_states: Some(MAX_STATES),
        timeout: Some(TIMEOUT),
        ..Default::default()
    };
    Ok(super::exhaustive(launch, &cfg, None))
}

/// Why an exploration does not decide every schedule (see [`covers_every_schedule`]).
pub fn why_not_covered(s: &Summary) -> String {
    if s.verdict != Verdict::Exhaustive {
        format!("exploring every order did not finish: {}", s.verdict)
    } else {
        "exploring every order met executions cut at the step bound".into()
    }
}

/// Whether the exploration saw every execution to its end: EXHAUSTIVE, and no execution
/// cut at the step bound.
pub fn covers_every_schedule(s: &Summary) -> bool {
    s.verdict == Verdict::Exhaustive && s.non_terminating == 0
}
