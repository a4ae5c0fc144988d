//! Data races, exactly as Definition 5.2: two steps of distinct threads that access a
//! common array element, at least one of them writing, with no K-BARRIER between them.
//! A barrier orders only the threads of its own work-group, so conflicting accesses from
//! different work-groups always race.

use crate::fault::ThreadId;
use lang::ast::Span;
use lang::core::ArrayId;
use serde::Serialize;
use std::collections::HashMap;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum AccessKind {
    Read,
    Write,
}

/// One access of one step: who, what kind, in which statement, at which step.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Access {
    pub thread: ThreadId,
    pub kind: AccessKind,
    /// The statement that made the access.
    pub span: Span,
    /// The position of the step in the execution (0-based), where the engine knows it.
    pub step: u64,
    /// The number of barriers the thread's work-group had passed (its barrier epoch).
    pub epoch: u64,
}

/// A data race on one element.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Race {
    pub array: ArrayId,
    /// The work-group whose copy of a `local` array is accessed (0 for `global`).
    pub instance: usize,
    /// One coordinate per dimension.
    pub index: Vec<usize>,
    /// The earlier access.
    pub first: Access,
    /// The later access.
    pub second: Access,
}

/// Two races are the same for reporting when they join the same pair of statements with
/// the same access kinds (Definition 5.2 does not care which threads or element).
pub type RaceKey = (Span, AccessKind, Span, AccessKind);

impl Race {
    pub fn key(&self) -> RaceKey {
        let a = (self.first.span.clone(), self.first.kind);
        let b = (self.second.span.clone(), self.second.kind);
        let (a, b) = if (a.0.start, a.1) <= (b.0.start, b.1) {
            (a, b)
        } else {
            (b, a)
        };
        (a.0, a.1, b.0, b.1)
    }
}

/// Whether two accesses to the same element conflict under Definition 5.2.
pub fn conflict(a: &Access, b: &Access) -> bool {
    a.thread != b.thread
        && (a.kind == AccessKind::Write || b.kind == AccessKind::Write)
        && (a.thread.group != b.thread.group || a.epoch == b.epoch)
}

/// Watches the accesses of one execution, step by step, and reports each race as soon as
/// its second access happens. Per element it keeps the accesses that may still race: those
/// of the current epoch of their group, and, for `global` arrays shared by several groups,
/// all of them.
#[derive(Clone, Debug, Default)]
pub struct RaceTracker {
    seen: HashMap<(ArrayId, usize, usize), Vec<Access>>,
    /// Keep accesses of past epochs (needed when several groups share a global array).
    keep_history: bool,
}

impl RaceTracker {
    pub fn new(groups: usize) -> Self {
        RaceTracker {
            seen: HashMap::new(),
            keep_history: groups > 1,
        }
    }

    /// Records an access to element `offset` (row-major) of instance `instance` of `array`
    /// and returns the races it completes (at most one per earlier conflicting thread and
    /// kind).
    pub fn access(
        &mut self,
        array: ArrayId,
        instance: usize,
        offset: usize,
        index: &[usize],
        access: Access,
    ) -> Vec<Race> {
        let entry = self.seen.entry((array, instance, offset)).or_default();
        let mut races = Vec::new();
        for earlier in entry.iter() {
            if conflict(earlier, &access)
                && !races.iter().any(|r: &Race| {
                    r.first.thread == earlier.thread
                        && r.first.kind == earlier.kind
                        && r.first.span == earlier.span
                })
            {
                races.push(Race {
                    array,
                    instance,
                    index: index.to_vec(),
                    first: earlier.clone(),
                    second: access.clone(),
                });
            }
        }
        if !entry.iter().any(|e| {
            e.thread == access.thread
                && e.kind == access.kind
                && e.span == access.span
                && e.epoch == access.epoch
        }) {
            entry.push(access);
        }
        races
    }

    /// K-BARRIER fired: with one work-group no earlier access can race any more. With
    /// several groups sharing global arrays the history stays (cross-group accesses are never
    /// ordered, and same-group ones are told apart by their epochs).
    pub fn barrier(&mut self) {
        if !self.keep_history {
            self.seen.clear();
        }
    }
}
