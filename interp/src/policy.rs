//! Race policies: which of the conflicting pairs of Definition 5.2 are errors.
//!
//! `strict` (the default) is Definition 5.2: every conflicting pair is a race. `same-value`
//! is the tolerance of GPUVerify and Oclgrind: a pair is *benign* when each plain write in
//! it stores the value the element already held (GPUVerify's "write back the value just
//! read", `v = A[0]; A[0] = v;`), or the same value as the write it pairs with (`A[0] = 0`
//! by every thread). Benign pairs are still reported, as warnings; only harmful ones make a
//! check fail. Atomic accesses never make a benign pair: a read-modify-write's value is not
//! what the plain accesses it races with see.
//!
//! The engines record what each write stored ([`Stored`]) only under `same-value`, so
//! under `strict` every pair is harmful and the accesses are the paper's.

use crate::race::{Access, AccessKind};
use crate::value::Value;
use serde::{Deserialize, Serialize};

/// Which conflicting pairs are errors (`--race-policy`).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum RacePolicy {
    /// Definition 5.2: every conflicting pair.
    #[default]
    Strict,
    /// Pairs whose writes store the element's old value or the value of the other write
    /// are benign.
    SameValue,
}

impl RacePolicy {
    /// The name on the command line and in outputs.
    pub fn name(self) -> &'static str {
        match self {
            RacePolicy::Strict => "strict",
            RacePolicy::SameValue => "same-value",
        }
    }

    /// Parses a name of [`RacePolicy::name`].
    pub fn parse(s: &str) -> Result<RacePolicy, String> {
        match s {
            "strict" => Ok(RacePolicy::Strict),
            "same-value" => Ok(RacePolicy::SameValue),
            _ => Err(format!(
                "unknown race policy `{s}` (expected strict or same-value)"
            )),
        }
    }

    /// What a plain write that changed an element from `old` to `new` records under this
    /// policy: nothing under `strict`.
    pub fn stored(self, old: &Value, new: &Value) -> Option<Stored> {
        (self == RacePolicy::SameValue).then(|| Stored {
            value: new.clone(),
            silent: old == new,
        })
    }
}

/// The value a plain write stored, and whether the element already held it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct Stored {
    pub value: Value,
    /// The element held `value` before the write: the write changed nothing.
    pub silent: bool,
}

/// Whether the conflicting pair `a`, `b` is benign: neither is an atomic update (an atomic
/// that wrote nothing counts as a read), and each write of
/// the pair is recorded ([`Stored`]) and stores the value the element held or the value of
/// the other write. Without records (the `strict` policy) no pair is benign.
pub fn benign(a: &Access, b: &Access) -> bool {
    let harmless = |w: &Access, other: &Access| match (&w.kind, &w.stored) {
        (AccessKind::Read | AccessKind::AtomicRead, _) => true,
        (AccessKind::Write, Some(s)) => {
            s.silent
                || (other.kind == AccessKind::Write
                    && other.stored.as_ref().is_some_and(|o| o.value == s.value))
        }
        _ => false,
    };
    harmless(a, b) && harmless(b, a)
}
