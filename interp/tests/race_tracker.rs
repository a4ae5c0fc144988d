//! The race tracker against a straightforward oracle: the scan over every remembered access
//! that `RaceTracker` used before it kept per-element summaries. On random access sequences
//! (several elements of both memory spaces, groups, threads, statements, reads, writes and
//! atomics, barriers of every fence, writes with and without the stored values of the
//! same-value race policy, so benign and harmful pairs of one statement pair) the tracker must
//! report exactly the first race of every key, in the order the oracle finds them, with the
//! same earlier and later accesses.

use interp::fault::ThreadId;
use interp::policy::Stored;
use interp::race::{conflict, Access, AccessKind, Epochs, Race, RaceKey, RaceTracker};
use interp::Value;
use lang::ast::Space;
use lang::core::Fence;
use proptest::prelude::*;
use std::collections::{HashMap, HashSet};

/// The old tracker: per element every access that may still race (those of the current
/// epoch with one group, all of them with several), scanned at every access.
struct Oracle {
    seen: HashMap<usize, Vec<Access>>,
    keep_history: bool,
}

impl Oracle {
    fn access(&mut self, offset: usize, access: Access) -> Vec<Race> {
        let entry = self.seen.entry(offset).or_default();
        let mut races = Vec::new();
        for earlier in entry.iter() {
            if conflict(earlier, &access)
                && !races.iter().any(|r: &Race| {
                    r.first.thread == earlier.thread
                        && r.first.kind == earlier.kind
                        && r.first.span == earlier.span
                        && r.first.stored == earlier.stored
                })
            {
                races.push(Race {
                    array: 0,
                    instance: 0,
                    index: vec![offset],
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
                && e.stored == access.stored
        }) {
            entry.push(access);
        }
        races
    }

    fn barrier(&mut self, fence: Fence) {
        if !self.keep_history && fence == Fence::BOTH {
            self.seen.clear();
        }
    }
}

#[derive(Clone, Debug)]
enum Op {
    /// (element, group, local thread, kind, statement, what a write stored under the
    /// same-value race policy); odd elements are `local`.
    Access(usize, usize, usize, AccessKind, usize, Option<Stored>),
    Barrier(usize, Fence),
}

fn op(groups: usize) -> impl Strategy<Value = Op> {
    let kind = prop_oneof![
        Just(AccessKind::Read),
        Just(AccessKind::Write),
        Just(AccessKind::Atomic),
        Just(AccessKind::AtomicRead)
    ];
    let stored = prop::option::of((0..2i32, any::<bool>())).prop_map(|v| {
        v.map(|(v, silent)| Stored {
            value: Value::Int(v),
            silent,
        })
    });
    let fence = prop_oneof![Just(Fence::BOTH), Just(Fence::LOCAL), Just(Fence::GLOBAL)];
    prop_oneof![
        8 => (0..4usize, 0..groups, 0..3usize, kind, 0..5usize, stored)
            .prop_map(|(e, g, l, k, s, v)| {
                Op::Access(e, g, l, k, s, v.filter(|_| k == AccessKind::Write))
            }),
        1 => (0..groups, fence).prop_map(|(g, f)| Op::Barrier(g, f)),
    ]
}

fn ops() -> impl Strategy<Value = (usize, Vec<Op>)> {
    (1..4usize).prop_flat_map(|groups| (Just(groups), prop::collection::vec(op(groups), 0..120)))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]
    #[test]
    fn tracker_matches_the_scan((groups, ops) in ops()) {
        let mut oracle = Oracle { seen: HashMap::new(), keep_history: groups > 1 };
        let mut tracker = RaceTracker::new(groups);
        let mut epochs = vec![Epochs::default(); groups];
        let mut expected = Vec::new();
        let mut keys: HashSet<RaceKey> = HashSet::new();
        let mut got = Vec::new();
        for (step, op) in ops.iter().enumerate() {
            match *op {
                Op::Access(e, group, local, kind, s, ref stored) => {
                    let space = if e % 2 == 1 { Space::Local } else { Space::Global };
                    let access = Access {
                        thread: ThreadId { group, local },
                        kind,
                        span: s * 10..s * 10 + 5,
                        step: step as u64,
                        epoch: epochs[group].of(space),
                        stored: stored.clone(),
                    };
                    for r in oracle.access(e, access.clone()) {
                        if keys.insert(r.key()) {
                            expected.push(r);
                        }
                    }
                    got.extend(tracker.access(0, 0, e, &[e], access));
                }
                Op::Barrier(g, fence) => {
                    epochs[g] = epochs[g].after(fence);
                    oracle.barrier(fence);
                    tracker.barrier(fence);
                }
            }
        }
        prop_assert_eq!(got, expected);
    }
}
