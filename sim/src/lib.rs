//! ksim's schedules and exploration: single runs under a scheduler, recorded schedules and
//! their replay, exhaustive and randomised schedule exploration, race reports.

pub mod circuit_view;
pub mod equiv;
pub mod explore;
pub mod fix;
pub mod graph;
pub mod graph_view;
pub mod outcome;
pub mod pad;
pub mod page;
pub mod replay;
pub mod report;
pub mod schedule;
pub mod schema;
pub mod session;
pub mod step_view;
pub mod text;
pub mod timeline;
pub mod trace;
pub mod transform;
pub mod verify;

pub use explore::{exhaustive, naive, pct, random, Config, Incomplete, Mode, Summary, Verdict};
pub use report::RaceReport;
pub use schedule::{run, Infeasible, Schedule, Scheduler};
