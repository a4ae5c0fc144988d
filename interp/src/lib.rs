//! ksim's semantics: values and monoids, launches, the reference small-step semantics of
//! POPL 2014 Figures 6 and 7 on persistent stores, and data races (Definition 5.2).

pub mod annotation;
pub mod atomicity;
pub mod canonical;
pub mod circuit;
pub mod codec;
pub mod eval;
pub mod exec;
pub mod fast;
pub mod fault;
pub mod launch;
pub mod monoid;
pub mod notation;
pub mod perm;
pub mod policy;
pub mod race;
pub mod reference;
pub mod stepper;
pub mod undef;
pub mod value;
pub mod warp;

pub use atomicity::Atomicity;
pub use fault::{Fault, FaultKind, ThreadId};
pub use launch::{Launch, LaunchError, LaunchOptions, Memory};
pub use monoid::{Interval, Monoid};
pub use policy::RacePolicy;
pub use race::{Access, AccessKind, Race};
pub use undef::Uninit;
pub use value::Value;
