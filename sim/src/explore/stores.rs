//! What the distinct final stores of an exploration tell a user (issue 11 item 4): which
//! elements differ between them and in how many stores, and which store a race-free run
//! gives, when one can be named.
//!
//! The store a race-free run gives is the canonical execution's (each thread runs to its
//! next barrier, in thread order), *if that execution met no race, fault or divergence*:
//! then it is a race-free run of the kernel, and Lemma 5.4 of POPL 2014 says every run
//! that is race-free in the same way ends in the same store. If the canonical execution
//! itself races, no run can be named as the race-free one from the kernel as written (the
//! barriers `ksim fix` proposes can, see [`crate::fix::race_free_store`]).

use super::FinalStore;
use crate::text::elem_name;
use interp::exec::Quiet;
use interp::Launch;
use serde::Serialize;

/// The canonical execution's store, as the store of a race-free run.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct CanonicalStore {
    /// The canonical execution ran to its end with no race, fault or divergence.
    pub race_free: bool,
    /// Which final store (1-based, in the order listed) the canonical execution ends in,
    /// when it is race-free and an explored execution ends there too.
    pub store: Option<usize>,
    /// Why no store can be named, when `store` is `null`.
    pub why_none: Option<String>,
}

/// Runs the canonical execution of `launch` and finds its store among `finals`.
pub fn canonical_store(launch: &Launch, finals: &[FinalStore]) -> CanonicalStore {
    let (out, _) = crate::run(launch, &crate::Scheduler::Canonical, &mut Quiet);
    // A benign race (`--race-policy same-value`) still makes the run not race-free: in
    // another order the same pair can be harmful.
    let why = if let Some(r) = out.races.iter().find(|r| !r.benign()) {
        Some(format!(
            "the canonical execution races (on {} at step {})",
            elem_name(launch, r.array, r.instance, &r.index),
            r.second.step
        ))
    } else if let Some(r) = out.races.first() {
        Some(format!(
            "the canonical execution meets a benign race (on {} at step {}), so it is not a \
             race-free run",
            elem_name(launch, r.array, r.instance, &r.index),
            r.second.step
        ))
    } else if let Some(f) = &out.fault {
        Some(format!("the canonical execution faults ({})", f.kind))
    } else if !out.divergences.is_empty() {
        Some("the canonical execution has a divergent barrier".into())
    } else if out.stopped {
        Some("the canonical execution did not end".into())
    } else {
        None
    };
    let Some(why) = why else {
        let store = finals.iter().position(|f| f.memory == out.memory);
        return CanonicalStore {
            race_free: true,
            store: store.map(|i| i + 1),
            why_none: store
                .is_none()
                .then(|| "no explored execution ends in the canonical execution's store".into()),
        };
    };
    CanonicalStore {
        race_free: false,
        store: None,
        why_none: Some(why),
    }
}

/// The elements of one array instance whose value differs between final stores.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct StoreDifference {
    /// The array (with its work-group for a `local` array of several groups).
    pub array: String,
    /// Each element that differs from store #1 in some store.
    pub elements: Vec<ElementDifference>,
}

#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct ElementDifference {
    /// Its name (`out[3]`).
    pub element: String,
    /// Its row-major offset in the array.
    pub offset: usize,
    /// In how many of the final stores its value differs from store #1's.
    pub stores: usize,
}

/// Per array instance that is not the same in every final store, the elements that
/// differ from the first store and in how many stores.
pub fn differences(launch: &Launch, finals: &[FinalStore]) -> Vec<StoreDifference> {
    let Some(base) = finals.first().map(|f| &f.memory) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (a, instances) in base.arrays.iter().enumerate() {
        for (inst, values) in instances.iter().enumerate() {
            let elements: Vec<ElementDifference> = (values.iter().enumerate())
                .filter_map(|(j, x)| {
                    let n = (finals.iter())
                        .filter(|f| &f.memory.arrays[a][inst][j] != x)
                        .count();
                    (n > 0).then(|| ElementDifference {
                        element: elem_name(
                            launch,
                            a,
                            inst,
                            &crate::page::unflatten(j, &launch.dims[a]),
                        ),
                        offset: j,
                        stores: n,
                    })
                })
                .collect();
            if !elements.is_empty() {
                out.push(StoreDifference {
                    array: elem_name(launch, a, inst, &[]),
                    elements,
                });
            }
        }
    }
    out
}
