//! ksim's schedules and exploration: single runs under a scheduler, recorded schedules and
//! their replay.

pub mod schedule;

pub use schedule::{run, Infeasible, Schedule, Scheduler};
