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
pub const TIMEOUT: Duration = Duration::from_secs(20);

/// Every schedule of `launch` up to equivalence, within the budget.
pub fn every_order(launch: &Launch) -> Summary {
    let cfg = Config {
        max_states: Some(MAX_STATES),
        timeout: Some(TIMEOUT),
        ..Default::default()
    };
    super::exhaustive(launch, &cfg, None)
}

/// Whether the exploration saw every execution to its end: EXHAUSTIVE, and no execution
/// cut at the step bound.
pub fn covers_every_schedule(s: &Summary) -> bool {
    s.verdict == Verdict::Exhaustive && s.non_terminating == 0
}
