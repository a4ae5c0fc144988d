//! The prefix-sum circuit a kernel computes, derived from one execution (POPL 2014,
//! Figure 8 and Table 2).
//!
//! The canonical execution is run with the reference semantics, and beside every value of
//! type `T` — each array element and each thread's variables — a *provenance* is kept: the
//! input element it is, the identity, or the ⊕ node that produced it. Before each
//! S-ASSIGN or S-ARRAY the right-hand side is walked over the current state: a variable or
//! array element gives its provenance, `1_T` the identity, `c ? a : b` the branch taken,
//! and `a ⊕ b` a new node whose two operands are the provenances of `a` and `b`. Copies
//! move provenances without making nodes, so the circuit is the data flow of the ⊕
//! applications, whatever the kernel's loops and indices.
//!
//! The circuit is laid out in levels as the kernel's barriers order it, which is how
//! Figure 8 draws it: a node sits one level below its operands and below every node of an
//! earlier barrier epoch (inputs are at level 0). Its *depth* is the number of levels
//! (for Brent-Kung 2 lg n − 1, although its longest chain of ⊕ is shorter: that is
//! reported too); its *size* the number of ⊕ applications (Table 2 counts them all:
//! Blelloch's up-sweep root, later overwritten by the identity, is one); the *fanout* of a
//! node the wires leaving it: one down its own wire, and one diagonal to each node on
//! another wire one level below that takes it as an operand. A value taken further down
//! is carried there by its wire, a pass-through as Figure 8 draws Kogge-Stone, and does
//! not count.

use crate::eval::{eval, eval_index, offset, Env};
use crate::fault::FaultKind;
use crate::launch::Launch;
use crate::monoid::Monoid;
use crate::reference::Rule;
use crate::stepper::Stepper;
use crate::value::Value;
use lang::ast::BinOp;
use lang::core::{ArrayId, Builtin, Expr, ExprKind, ParamId, StmtKind, Ty, VarId};
use serde::Serialize;

/// Where a value of type `T` came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, schemars::JsonSchema)]
pub enum Prov {
    /// Element `index` of the input array (the kernel's `const` array of `T`).
    Input(usize),
    /// The identity `1_T`, or an element no one wrote that is not an input.
    Identity,
    /// The result of node `k`.
    Node(usize),
}

/// One ⊕ application.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct Node {
    pub left: Prov,
    pub right: Prov,
    /// Level (see the module documentation), from 1.
    pub depth: usize,
    /// Longest chain of ⊕ ending here (data dependences only).
    pub chain: usize,
    /// The barrier epoch it was computed in.
    pub epoch: u64,
    /// The column it is drawn in: the output element its result was first stored to (the
    /// storing thread's global index if it never was).
    pub wire: usize,
    /// Global index of the thread that applied it.
    pub thread: usize,
}

#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct Circuit {
    /// Number of input wires.
    pub width: usize,
    pub input: String,
    pub output: String,
    pub nodes: Vec<Node>,
    /// The provenance of every output element at the end.
    pub outputs: Vec<Prov>,
    pub depth: usize,
    /// The longest chain of ⊕ (at most `depth`).
    pub chain: usize,
    pub size: usize,
    pub fanout: usize,
}

/// Why no circuit was derived.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NoCircuit {
    /// The kernel or launch is not a scan a circuit can be derived from.
    Unfit(String),
    /// The canonical execution races or faults (a finding: `ksim circuit` exits 1).
    Found(String),
}

impl std::fmt::Display for NoCircuit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoCircuit::Unfit(m) | NoCircuit::Found(m) => f.write_str(m),
        }
    }
}

/// Derives the circuit from the canonical execution of `launch`: one work-group, one
/// `const` input array of `T`, one other array of `T` as output.
pub fn derive(launch: &Launch) -> Result<Circuit, NoCircuit> {
    let k = &launch.kernel;
    let of_t: Vec<ArrayId> = (0..k.arrays.len())
        .filter(|&a| k.arrays[a].elem == Ty::Generic)
        .collect();
    let inputs: Vec<ArrayId> = of_t
        .iter()
        .copied()
        .filter(|&a| k.arrays[a].is_const)
        .collect();
    let outputs: Vec<ArrayId> = of_t
        .iter()
        .copied()
        .filter(|&a| !k.arrays[a].is_const)
        .collect();
    let (&[input], &[output]) = (inputs.as_slice(), outputs.as_slice()) else {
        return Err(NoCircuit::Unfit(format!(
            "a circuit needs one `const` input array of T and one output array of T; `{}` has {} and {}",
            k.name,
            inputs.len(),
            outputs.len()
        )));
    };
    if launch.groups != 1 {
        return Err(NoCircuit::Unfit(
            "a circuit is derived from a launch of one work-group".into(),
        ));
    }
    let mut arrays: Vec<Vec<Prov>> = (0..k.arrays.len())
        .map(|a| {
            (0..launch.len(a))
                .map(|i| {
                    if a == input {
                        Prov::Input(i)
                    } else {
                        Prov::Identity
                    }
                })
                .collect()
        })
        .collect();
    let mut vars = vec![vec![Prov::Identity; k.vars.len()]; launch.threads()];
    let mut nodes: Vec<Node> = Vec::new();
    let mut st = Stepper::new(launch);
    let mut levels = Levels::default();
    while let Some(t) = st.canonical() {
        levels.epoch(st.state().epoch(0), &nodes);
        // The statement about to run, from a dry run of the step (which also names the
        // rule); a fault is left to the real step to report.
        let stmt = match st.state().step(launch, t) {
            Ok((_, info)) if matches!(info.rule, Rule::SAssign | Rule::SArray) => {
                crate::notation::find_stmt(k, &info.span, info.rule)
            }
            _ => None,
        };
        if let Some(stmt) = stmt {
            let mut env = ProvEnv {
                launch,
                stepper: &st,
                t,
                arrays: &arrays,
                vars: &vars[t],
                nodes: &mut nodes,
                floor: levels.floor,
                epoch: levels.current,
            };
            match &stmt.kind {
                StmtKind::Assign { var, value } if value.ty == Ty::Generic => {
                    let p = env
                        .prov(value)
                        .map_err(|f| NoCircuit::Found(f.to_string()))?;
                    vars[t][*var] = p;
                }
                StmtKind::Store {
                    array,
                    index,
                    value,
                } if value.ty == Ty::Generic => {
                    let idx =
                        eval_index(index, &mut env).map_err(|f| NoCircuit::Found(f.to_string()))?;
                    let p = env
                        .prov(value)
                        .map_err(|f| NoCircuit::Found(f.to_string()))?;
                    if let Some(off) = offset(&idx, &launch.dims[*array]) {
                        if let (Prov::Node(n), true) = (p, *array == output) {
                            if nodes[n].wire == usize::MAX {
                                nodes[n].wire = off;
                            }
                        }
                        arrays[*array][off] = p;
                    }
                }
                _ => {}
            }
        }
        match st.step(t) {
            Ok(Ok(_)) => {}
            Ok(Err(fault)) => {
                return Err(NoCircuit::Found(format!("the execution faults: {fault}")))
            }
            Err(refusal) => return Err(NoCircuit::Unfit(refusal.to_string())),
        }
    }
    if !st.races().is_empty() {
        return Err(NoCircuit::Found(format!(
            "the canonical execution has a data race on {}: the circuit of a racy kernel depends on the schedule",
            k.arrays[st.races()[0].array].name
        )));
    }
    for n in &mut nodes {
        if n.wire == usize::MAX {
            n.wire = n.thread;
        }
    }
    let outs = arrays[output].clone();
    let mut fanout = vec![1usize; nodes.len()];
    for n in &nodes {
        let mut from: Vec<usize> = [n.left, n.right]
            .into_iter()
            .filter_map(|p| match p {
                Prov::Node(m) => Some(m),
                _ => None,
            })
            .collect();
        from.dedup();
        for m in from {
            if nodes[m].wire != n.wire && nodes[m].depth + 1 == n.depth {
                fanout[m] += 1;
            }
        }
    }
    Ok(Circuit {
        width: launch.len(input),
        input: k.arrays[input].name.clone(),
        output: k.arrays[output].name.clone(),
        depth: nodes.iter().map(|n| n.depth).max().unwrap_or(0),
        chain: nodes.iter().map(|n| n.chain).max().unwrap_or(0),
        size: nodes.len(),
        fanout: fanout.into_iter().max().unwrap_or(0),
        nodes,
        outputs: outs,
    })
}

/// Evaluates index and condition expressions over the stepper's state, and follows the
/// provenance of `T` expressions.
struct ProvEnv<'a, 'l> {
    launch: &'l Launch,
    stepper: &'a Stepper<'l>,
    t: usize,
    arrays: &'a [Vec<Prov>],
    vars: &'a [Prov],
    nodes: &'a mut Vec<Node>,
    /// Nodes go below this level: the deepest node of an earlier barrier epoch.
    floor: usize,
    epoch: u64,
}

/// The deepest level of the earlier barrier epochs.
#[derive(Default)]
struct Levels {
    current: u64,
    floor: usize,
}

impl Levels {
    fn epoch(&mut self, epoch: u64, nodes: &[Node]) {
        if epoch != self.current {
            self.current = epoch;
            self.floor = nodes.iter().map(|n| n.depth).max().unwrap_or(0);
        }
    }
}

impl ProvEnv<'_, '_> {
    fn depth(&self, p: Prov) -> (usize, usize) {
        match p {
            Prov::Node(n) => (self.nodes[n].depth, self.nodes[n].chain),
            _ => (0, 0),
        }
    }

    fn prov(&mut self, e: &Expr) -> Result<Prov, FaultKind> {
        Ok(match &e.kind {
            ExprKind::Var(v) => self.vars[*v],
            ExprKind::Load { array, index } => {
                let idx = eval_index(index, self)?;
                offset(&idx, &self.launch.dims[*array])
                    .map(|o| self.arrays[*array][o])
                    .unwrap_or(Prov::Identity)
            }
            ExprKind::Cond(c, a, b) => {
                if eval(c, self)?.truthy() {
                    self.prov(a)?
                } else {
                    self.prov(b)?
                }
            }
            ExprKind::Binary(BinOp::Combine, a, b) => {
                let (left, right) = (self.prov(a)?, self.prov(b)?);
                let ((dl, cl), (dr, cr)) = (self.depth(left), self.depth(right));
                self.nodes.push(Node {
                    left,
                    right,
                    depth: 1 + dl.max(dr).max(self.floor),
                    chain: 1 + cl.max(cr),
                    epoch: self.epoch,
                    wire: usize::MAX,
                    thread: self.t,
                });
                Prov::Node(self.nodes.len() - 1)
            }
            _ => Prov::Identity,
        })
    }
}

impl Env for ProvEnv<'_, '_> {
    fn var(&mut self, v: VarId) -> Result<Value, FaultKind> {
        Ok(self.stepper.state().var(self.t, v).clone())
    }
    fn param(&self, p: ParamId) -> Value {
        self.launch.params[p].clone()
    }
    fn builtin(&self, b: Builtin) -> Value {
        self.launch.builtin(
            b,
            self.t / self.launch.local_size,
            self.t % self.launch.local_size,
        )
    }
    fn monoid(&self) -> Monoid {
        self.launch.monoid
    }
    fn launch(&self) -> &Launch {
        self.launch
    }
    fn load(&mut self, array: ArrayId, idx: &[i64]) -> Result<Value, FaultKind> {
        // Only index and condition expressions come here, on small launches: reading the
        // whole store is simple and cheap enough.
        let off = offset(idx, &self.launch.dims[array]).ok_or(FaultKind::OutOfBounds {
            array: self.launch.kernel.arrays[array].name.clone(),
            index: idx.to_vec(),
            dims: self.launch.dims[array].clone(),
        })?;
        let inst = self
            .launch
            .instance_of(array, self.t / self.launch.local_size);
        Ok(self.stepper.state().memory(self.launch).arrays[array][inst][off].clone())
    }
}
