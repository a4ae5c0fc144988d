//! ksim's schedules and exploration: single runs under a scheduler, recorded schedules and
//! their replay, exhaustive and randomised schedule exploration, race reports.

pub mod explore;
pub mod fix;
pub mod outcome;
pub mod replay;
pub mod report;
pub mod schedule;
pub mod text;
pub mod trace;
pub mod verify;

pub use explore::{exhaustive, naive, pct, random, Config, Incomplete, Mode, Summary, Verdict};
pub use report::RaceReport;
pub use schedule::{run, Infeasible, Schedule, Scheduler};
