//! The reachable configurations of one launch as a graph, for teaching (issue 12): PLT
//! Redex's `traces` window for the interleaving semantics.
//!
//! Nodes are kernel states (σ_A, K), found breadth-first from the initial one; an edge is
//! one K-STEP of one thread (followed, as in every engine, by the K-BARRIERs it enables,
//! which the edge records). Equal states reached along different interleavings are one
//! node: the graph is a DAG whose paths from the root are the executions. This is the full
//! interleaving graph (no reduction), so it is for tiny launches: two or three threads.
//!
//! An edge is *racy* when, at its source, another thread's enabled step accesses an element
//! the edge's step accesses, and the two accesses conflict (one writes; two atomic
//! accesses never race): both orders are executions with the two accesses adjacent and no
//! barrier between them — a race of Definition 5.2.

use interp::reference::{Rule, State, StepInfo, ThreadStatus};
use interp::{Fault, Launch, Memory};
use serde::Serialize;
use std::collections::HashMap;

/// Where one thread stands in a configuration.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Point {
    /// Its next statement starts at this byte offset of the source.
    At(usize),
    /// Waits at the `barrier` at this offset.
    Barrier(usize),
    Done,
}

#[derive(Clone, Debug, Serialize)]
pub struct Node {
    pub memory: Memory,
    /// Per thread (global index).
    pub points: Vec<Point>,
    /// Barrier epoch per work-group.
    pub epochs: Vec<u64>,
    pub is_final: bool,
    /// A fault some thread's step raises here (that step has no edge).
    pub faults: Vec<Fault>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Edge {
    pub from: usize,
    pub to: usize,
    /// Global thread index.
    pub thread: usize,
    pub rule: Rule,
    /// Work-groups whose K-BARRIER fired after the step.
    pub barriers: Vec<usize>,
    pub racy: bool,
}

#[derive(Clone, Debug, Serialize)]
pub struct Graph {
    pub nodes: Vec<Node>,
    pub edges: Vec<Edge>,
    /// The search stopped at `max_states` nodes: some edges lead out of the graph.
    pub truncated: bool,
}

/// Every configuration reachable from the initial one, up to `max_states` of them.
pub fn reachable(launch: &Launch, max_states: usize) -> Graph {
    let mut initial = State::initial(launch);
    while !initial.fire_ready_barriers(launch).is_empty() {}
    let mut ids: HashMap<State, usize> = HashMap::new();
    let mut states = vec![initial.clone()];
    ids.insert(initial, 0);
    let mut graph = Graph {
        nodes: Vec::new(),
        edges: Vec::new(),
        truncated: false,
    };
    let mut next = 0;
    while next < states.len() {
        let state = states[next].clone();
        let mut faults = Vec::new();
        let steps: Vec<(usize, State, StepInfo)> = state
            .runnable()
            .iter()
            .filter_map(|t| match state.step(launch, t) {
                Ok((s, info)) => Some((t, s, info)),
                Err(f) => {
                    faults.push(f);
                    None
                }
            })
            .collect();
        for (t, mut to, info) in steps.iter().cloned() {
            let mut barriers = Vec::new();
            loop {
                let fired = to.fire_ready_barriers(launch);
                if fired.is_empty() {
                    break;
                }
                barriers.extend(fired.iter().map(|b| b.group));
            }
            let racy = steps
                .iter()
                .any(|(u, _, other)| *u != t && conflict(launch, &state, (t, &info), (*u, other)));
            let id = match ids.get(&to) {
                Some(&id) => id,
                None if states.len() < max_states => {
                    states.push(to.clone());
                    ids.insert(to, states.len() - 1);
                    states.len() - 1
                }
                None => {
                    graph.truncated = true;
                    continue;
                }
            };
            graph.edges.push(Edge {
                from: next,
                to: id,
                thread: t,
                rule: info.rule,
                barriers,
                racy,
            });
        }
        graph.nodes.push(node(launch, &state, faults));
        next += 1;
    }
    graph
}

fn node(launch: &Launch, state: &State, faults: Vec<Fault>) -> Node {
    let points = (0..launch.threads())
        .map(|t| match state.status(launch, t) {
            ThreadStatus::Terminated => Point::Done,
            ThreadStatus::AtBarrier => {
                Point::Barrier(state.next_span(launch, t).expect("at a barrier").start)
            }
            ThreadStatus::Runnable => {
                Point::At(state.next_span(launch, t).expect("runnable").start)
            }
        })
        .collect();
    Node {
        memory: state.memory(launch),
        points,
        epochs: (0..launch.groups).map(|g| state.epoch(g)).collect(),
        is_final: state.is_final(),
        faults,
    }
}

/// Whether two steps enabled in `state` race: an element both access with a pair of
/// accesses that Definition 5.2 calls conflicting ([`interp::race::step_races`]: one
/// writes, and two atomic accesses never conflict).
fn conflict(
    launch: &Launch,
    state: &State,
    (t, a): (usize, &StepInfo),
    (u, b): (usize, &StepInfo),
) -> bool {
    // Both steps would be the next one: the step number does not matter here.
    let (ea, eb) = (
        state.epochs(t / launch.local_size),
        state.epochs(u / launch.local_size),
    );
    let xs: Vec<_> = a.accesses(launch, 0, ea).collect();
    let ys: Vec<_> = b.accesses(launch, 0, eb).collect();
    !interp::race::step_races(&xs, &ys).is_empty()
}
