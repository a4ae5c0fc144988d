//! The reachable configurations of one launch as a graph, for teaching (issue 12): PLT
//! Redex's `traces` window for the interleaving semantics.
//!
//! Nodes are kernel states (σ_A, K), found breadth-first from the initial one; a node keeps
//! every thread's ⟨σ_v, ss⟩ (its variables and next statement), so distinct configurations
//! never look alike. An edge is one K-STEP of one thread, or one K-BARRIER (Figure 7's →k
//! rule as its own step): a configuration where a work-group's K-BARRIER is enabled has that
//! step as its only one, since every engine fires a barrier as soon as it is enabled. Equal
//! states reached along different interleavings are one node: the graph's paths from the
//! root are the executions. This is the full interleaving graph (no reduction), so it is for
//! tiny launches: two or three threads.
//!
//! With `--reduce por` ([`explored`]) the graph is the part of it that the exhaustive
//! explorer visits, so that students see what state caching and partial-order reduction
//! save.
//!
//! An edge is *racy* when its step completes a harmful race of Definition 5.2 in some
//! execution through it: an access of another thread made earlier on some path from the
//! root to the edge's source conflicts with one of the step's accesses and no barrier that
//! orders the element's memory space came between them, judged exactly as the exhaustive
//! explorer judges its races ([`interp::race::step_races_live`], with the thread's epochs
//! that the state records; a barrier that fences only the other space does not order the
//! pair). The step that made that earlier access is marked too ([`Edge::race_first`]), so
//! both accesses of the pair of Definition 5.2 are drawn.
//!
//! A K-BARRIER that fires with the threads of a group at different barriers, or some of
//! them terminated, is barrier divergence (undefined on a device): the edge that fires it
//! records the message, and the configuration it leads to lists it with its faults.

use interp::race::Access;
use interp::reference::{Elem, Rule, State, StepInfo, ThreadStatus};
use interp::stepper::{thread_view, ThreadView};
use interp::{Fault, Launch, Memory};
use serde::Serialize;
use std::collections::{HashMap, HashSet};

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
    /// Per thread: its variables, next statement in core form and status.
    pub threads: Vec<ThreadView>,
    /// Barrier epoch per work-group.
    pub epochs: Vec<u64>,
    pub is_final: bool,
    /// A fault some thread's step raises here (that step has no edge).
    pub faults: Vec<Fault>,
    /// Barrier divergence: the message of each divergent K-BARRIER that fired on a step
    /// into this configuration.
    pub divergences: Vec<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Edge {
    pub from: usize,
    pub to: usize,
    /// Global thread index of a K-STEP; `None` for a K-BARRIER.
    pub thread: Option<usize>,
    pub rule: Rule,
    /// Work-groups whose K-BARRIER this step fired (a K-BARRIER edge only).
    pub barriers: Vec<usize>,
    /// The step completes a race: it makes the second access of the pair.
    pub racy: bool,
    /// The step makes the first access of a race that a later step completes.
    pub race_first: bool,
    /// The K-BARRIER the step fired was divergent: why.
    pub divergence: Option<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Graph {
    pub nodes: Vec<Node>,
    pub edges: Vec<Edge>,
    /// The search stopped at `max_states` nodes: some edges lead out of the graph.
    pub truncated: bool,
}

/// Which part of the state space a [`Graph`] holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reduce {
    /// Every reachable configuration and every K-STEP between them.
    None,
    /// What the exhaustive explorer visits ([`explored`]).
    Por,
}

/// The K-STEPs enabled in `state`: each enabled thread's successor (before the barriers it
/// enables fire) and step, and the faults of the threads whose step faults.
type Expansion = (Vec<(usize, State, StepInfo)>, Vec<Fault>);

fn expand(launch: &Launch, state: &State) -> Expansion {
    let mut faults = Vec::new();
    let steps = state
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
    (steps, faults)
}

/// Fires the K-BARRIERs enabled in `to`; the groups whose barrier fired (none when no
/// barrier is enabled), and the message of a divergent one.
fn fire(launch: &Launch, to: &mut State) -> (Vec<usize>, Option<String>) {
    let (mut barriers, mut divergence) = (Vec::new(), None);
    loop {
        let fired = to.fire_ready_barriers(launch);
        if fired.is_empty() {
            return (barriers, divergence);
        }
        for b in fired {
            barriers.push(b.group);
            divergence = divergence.or(b.divergence);
        }
    }
}

/// One step's accesses as the explorer sees them (the thread's epochs in `state`), owned
/// and with the step position cleared, so that equal accesses along different paths are
/// one.
type Accesses = Vec<(Elem, Access)>;

fn accesses_of(launch: &Launch, state: &State, t: usize, info: &StepInfo) -> Accesses {
    let epochs = state.thread_epochs(launch, t);
    info.accesses(launch, 0, epochs)
        .map(|(e, a)| (e.clone(), a))
        .collect()
}

/// A step as an edge: the configuration it leads to, its rule, the groups whose K-BARRIER
/// it fired, the message of a divergent one, and its accesses (none for a K-BARRIER).
type StepEdge = (State, Rule, Vec<usize>, Option<String>, Accesses);

/// The K-BARRIER step out of `state`, when one is enabled there.
fn barrier_edge(launch: &Launch, state: &State) -> Option<StepEdge> {
    let mut to = state.clone();
    let (barriers, divergence) = fire(launch, &mut to);
    (!barriers.is_empty()).then(|| (to, Rule::KBarrier, barriers, divergence, Vec::new()))
}

/// The edge for thread `t`'s step among `steps` (an [`Expansion`] of `state`), with the
/// configuration it leads to and the step's accesses (its raciness is decided once the
/// graph is built: [`mark_races`]).
fn edge_of(
    launch: &Launch,
    state: &State,
    steps: &[(usize, State, StepInfo)],
    t: usize,
) -> Option<StepEdge> {
    let (_, to, info) = steps.iter().find(|(u, _, _)| *u == t)?;
    let acc = accesses_of(launch, state, t, info);
    Some((to.clone(), info.rule, Vec::new(), None, acc))
}

/// Marks the racy edges (see the module documentation): per configuration, every access
/// made on some path from the root to it (a fixpoint over the edges, the graph may have
/// cycles); an edge is racy when one of its accesses forms a harmful race with one of its
/// source's, as the exhaustive explorer decides it.
fn mark_races(launch: &Launch, graph: &mut Graph, states: &[State], acc: &[Accesses]) {
    let mut past: Vec<HashSet<(Elem, Access)>> = vec![HashSet::new(); graph.nodes.len()];
    let mut changed = true;
    while changed {
        changed = false;
        for (e, a) in graph.edges.iter().zip(acc) {
            if e.from == e.to {
                continue;
            }
            let add: Vec<(Elem, Access)> = (past[e.from].iter().chain(a))
                .filter(|x| !past[e.to].contains(*x))
                .cloned()
                .collect();
            changed |= !add.is_empty();
            past[e.to].extend(add);
        }
    }
    // Per node, the edges into it (for the search back from a racy step).
    let mut into: Vec<Vec<usize>> = vec![Vec::new(); graph.nodes.len()];
    for (i, e) in graph.edges.iter().enumerate() {
        into[e.to].push(i);
    }
    let froms: Vec<usize> = graph.edges.iter().map(|e| e.from).collect();
    let mut first_of_race = vec![false; graph.edges.len()];
    for (e, a) in graph.edges.iter_mut().zip(acc) {
        let state = &states[e.from];
        let live = |el: &Elem, x: &Access, _: &Access| {
            let t = x.thread.group * launch.local_size + x.thread.local;
            let space = launch.kernel.arrays[el.array].space;
            state.thread_epochs(launch, t).of(space) == x.epoch
        };
        let first: Vec<(&Elem, Access)> =
            past[e.from].iter().map(|(el, x)| (el, x.clone())).collect();
        let second: Vec<(&Elem, Access)> = a.iter().map(|(el, x)| (el, x.clone())).collect();
        let races: Vec<_> = interp::race::step_races_live(&first, &second, live)
            .into_iter()
            .filter(|r| !r.benign())
            .collect();
        e.racy = !races.is_empty();
        for r in &races {
            mark_first_access(&into, &froms, acc, e.from, r, &mut first_of_race);
        }
    }
    for (e, first) in graph.edges.iter_mut().zip(first_of_race) {
        e.race_first = first;
    }
}

/// Marks in `marked` the steps on some path from the root to configuration `at` that make
/// the first access of `race` (an access equal to it, on its element): a search back over
/// the edges `into` each node (edge `i` leaves node `froms[i]`).
fn mark_first_access(
    into: &[Vec<usize>],
    froms: &[usize],
    acc: &[Accesses],
    at: usize,
    race: &interp::race::Race,
    marked: &mut [bool],
) {
    let mut seen = vec![false; into.len()];
    let mut todo = vec![at];
    seen[at] = true;
    while let Some(n) = todo.pop() {
        for &i in &into[n] {
            marked[i] |= acc[i].iter().any(|(el, x)| {
                (el.array, el.instance) == (race.array, race.instance)
                    && el.index == race.index
                    && *x == race.first
            });
            let from = froms[i];
            if !seen[from] {
                seen[from] = true;
                todo.push(from);
            }
        }
    }
}

/// Numbers configurations as they are found, up to `max` of them.
struct Ids {
    ids: HashMap<State, usize>,
    states: Vec<State>,
    max: usize,
}

impl Ids {
    fn new(initial: State, max: usize) -> Ids {
        let mut ids = Ids {
            ids: HashMap::new(),
            states: Vec::new(),
            max,
        };
        ids.get(initial);
        ids
    }

    /// The number of `state`, or `None` when it is new and `max` are numbered already.
    fn get(&mut self, state: State) -> Option<usize> {
        if let Some(&id) = self.ids.get(&state) {
            return Some(id);
        }
        if self.states.len() >= self.max {
            return None;
        }
        self.states.push(state.clone());
        self.ids.insert(state, self.states.len() - 1);
        Some(self.states.len() - 1)
    }
}

/// Every configuration reachable from the initial one, up to `max_states` of them.
pub fn reachable(launch: &Launch, max_states: usize) -> Graph {
    reachable_states(launch, max_states).0
}

/// [`reachable`], with the state of each node.
fn reachable_states(launch: &Launch, max_states: usize) -> (Graph, Vec<State>) {
    breadth_first(
        launch,
        State::initial(launch),
        max_states,
        false,
        |_, steps| steps.iter().map(|&(t, _, _)| t).collect(),
    )
}

/// The graph from `initial`, numbered breadth-first, with an edge for each thread that
/// `threads` picks among a configuration's enabled steps (a faulting step has no edge),
/// racy edges marked ([`mark_races`]); with the state of each node.
fn breadth_first(
    launch: &Launch,
    initial: State,
    max_states: usize,
    truncated: bool,
    threads: impl Fn(&State, &[(usize, State, StepInfo)]) -> Vec<usize>,
) -> (Graph, Vec<State>) {
    let mut ids = Ids::new(initial, max_states);
    let mut graph = Graph {
        nodes: Vec::new(),
        edges: Vec::new(),
        truncated,
    };
    let mut acc = Vec::new();
    let mut next = 0;
    while next < ids.states.len() {
        let state = ids.states[next].clone();
        // An enabled K-BARRIER is the configuration's only step (it fires at once).
        let (out, faults): (Vec<(Option<usize>, StepEdge)>, Vec<Fault>) =
            match barrier_edge(launch, &state) {
                Some(e) => (vec![(None, e)], Vec::new()),
                None => {
                    let (steps, faults) = expand(launch, &state);
                    let out = (threads(&state, &steps).into_iter())
                        .filter_map(|t| Some((Some(t), edge_of(launch, &state, &steps, t)?)))
                        .collect();
                    (out, faults)
                }
            };
        for (thread, (to, rule, barriers, divergence, a)) in out {
            let Some(id) = ids.get(to) else {
                graph.truncated = true;
                continue;
            };
            graph.edges.push(Edge {
                from: next,
                to: id,
                thread,
                rule,
                barriers,
                racy: false,
                race_first: false,
                divergence,
            });
            acc.push(a);
        }
        graph.nodes.push(node(launch, &state, faults));
        next += 1;
    }
    for e in &graph.edges {
        if let Some(d) = &e.divergence {
            if !graph.nodes[e.to].divergences.contains(d) {
                graph.nodes[e.to].divergences.push(d.clone());
            }
        }
    }
    mark_races(launch, &mut graph, &ids.states, &acc);
    (graph, ids.states)
}

/// The part of the state space that ksim's exhaustive explorer ([`crate::explore::exhaustive`],
/// state caching at barrier points and source-DPOR with sleep sets) visits: every step the
/// search executes, between the configurations it runs from and reaches, equal
/// configurations reached along different paths being one node as in [`reachable`]. Nodes
/// and edges are labelled exactly as there (the faults a node lists and whether an edge is
/// racy are properties of the configuration, computed the same way), so the two graphs can
/// be compared node for node: this one is a subgraph of the full one.
///
/// Why it has every final configuration of the full graph: the explorer visits one
/// execution of each Mazurkiewicz class of maximal executions (source-DPOR, Theorem 7.5 of
/// Abdulla et al.), and equivalent executions end in the same state; a barrier state
/// already explored is not explored again, but its future — its final configurations
/// included — is already in the graph, reached from the same node. A racy step is judged
/// by the same local test as in [`reachable`], so the graph shows the racy steps the search
/// ran; the races the explorer itself found (between any two steps of one barrier
/// interval, adjacent or not) are in its summary. (`tests/teach_cli.rs` compares both
/// graphs on small kernels.)
///
/// The explorer's summary comes with the graph: its executions, pruned ones (cache hits,
/// sleep-set blocked) and verdict say what the reduction saved.
pub fn explored(launch: &Launch, max_states: usize) -> (Graph, crate::Summary) {
    let mut ids = Ids::new(State::initial(launch), max_states);
    // Per configuration number: the threads the search ran from it, in order.
    let mut ran: Vec<Vec<usize>> = Vec::new();
    let mut truncated = false;
    let cfg = crate::Config::default();
    let summary = crate::explore::dpor::exhaustive_visiting(launch, &cfg, &mut |state, t| {
        let Some(id) = ids.get(state.clone()) else {
            truncated = true;
            return false;
        };
        ran.resize(ran.len().max(id + 1), Vec::new());
        if !ran[id].contains(&t) {
            ran[id].push(t);
        }
        true
    });
    // The edges, and the configurations they reach, numbered breadth-first from the
    // initial one as in `reachable` (the search found them depth-first).
    let (mut graph, states) = breadth_first(
        launch,
        State::initial(launch),
        max_states,
        truncated,
        |state, _| {
            (ids.ids.get(state).and_then(|&id| ran.get(id)))
                .cloned()
                .unwrap_or_default()
        },
    );
    // Raciness is a property of the semantics, not of the part explored: a step is racy
    // when it completes a race in some execution, explored or not. So it is taken from the
    // full graph, where that has the step (within `max_states`).
    let (full, full_states) = reachable_states(launch, max_states);
    let racy: HashMap<(&State, Option<usize>), (bool, bool)> = (full.edges.iter())
        .map(|e| ((&full_states[e.from], e.thread), (e.racy, e.race_first)))
        .collect();
    for e in &mut graph.edges {
        if let Some(&(second, first)) = racy.get(&(&states[e.from], e.thread)) {
            (e.racy, e.race_first) = (second, first);
        }
    }
    (graph, summary)
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
        threads: (0..launch.threads())
            .map(|t| thread_view(launch, state, t))
            .collect(),
        epochs: (0..launch.groups).map(|g| state.epoch(g)).collect(),
        is_final: state.is_final(),
        faults,
        divergences: Vec::new(),
    }
}
