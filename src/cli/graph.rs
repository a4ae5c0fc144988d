//! `ksim graph`: the reachable configurations of one launch as a graph ([`sim::graph`]),
//! written as DOT (for Graphviz) or JSON.

use super::common::*;
use clap::{Args, ValueEnum};
use interp::Launch;
use serde_json::json;
use sim::graph::{Graph, Node, Point};
use std::fmt::Write as _;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum GraphFormat {
    /// Graphviz: `ksim graph ... | dot -Tsvg > graph.svg`.
    Dot,
    Json,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Reduce {
    /// Every interleaving: the full graph of the semantics.
    None,
}

#[derive(Args, Debug)]
pub struct GraphArgs {
    #[command(flatten)]
    pub launch: LaunchArgs,
    /// Which graph: `none` is the full interleaving graph (partial-order reduction is not
    /// offered yet).
    #[arg(long, value_enum, default_value = "none")]
    pub reduce: Reduce,
    /// Stop after this many configurations (the graph is then marked truncated).
    #[arg(long, default_value_t = 2000)]
    pub max_states: usize,
    #[arg(long, value_enum, default_value = "dot")]
    pub format: GraphFormat,
}

pub fn graph(args: &GraphArgs) -> CmdResult {
    let (src, launch) = args.launch.launch()?;
    if args.max_states == 0 {
        return Err(Failure::usage("--max-states must be at least 1"));
    }
    let g = sim::graph::reachable(&launch, args.max_states);
    let labels: Vec<String> = g.nodes.iter().map(|n| label(&src, &launch, n)).collect();
    match args.format {
        GraphFormat::Dot => print!("{}", dot(&launch, &g, &labels)),
        GraphFormat::Json => {
            let nodes: Vec<_> = g
                .nodes
                .iter()
                .zip(&labels)
                .enumerate()
                .map(|(id, (n, l))| {
                    json!({"id": id, "label": l, "final": n.is_final,
                    "points": n.points, "epochs": n.epochs, "faults": n.faults,
                    "arrays": arrays_json(&launch, n)})
                })
                .collect();
            let doc = json!({"kernel": launch.kernel.name, "nodes": nodes, "edges": g.edges,
                "truncated": g.truncated});
            println!("{}", serde_json::to_string_pretty(&doc).expect("JSON"));
        }
    }
    if g.truncated {
        eprintln!(
            "graph truncated at {} configurations (--max-states)",
            args.max_states
        );
    }
    eprintln!(
        "{} configurations ({} final), {} steps ({} racy)",
        g.nodes.len(),
        g.nodes.iter().filter(|n| n.is_final).count(),
        g.edges.len(),
        g.edges.iter().filter(|e| e.racy).count()
    );
    Ok(EXIT_OK)
}

fn arrays_json(launch: &Launch, n: &Node) -> serde_json::Value {
    let m: serde_json::Map<String, serde_json::Value> = launch
        .kernel
        .arrays
        .iter()
        .enumerate()
        .map(|(a, d)| (d.name.clone(), json!(n.memory.arrays[a])))
        .collect();
    serde_json::Value::Object(m)
}

/// `x = 0 1` per array instance, then `t0 @3  t1 barrier@5  t2 done` (source lines).
fn label(src: &Source, launch: &Launch, n: &Node) -> String {
    let mut lines = Vec::new();
    for (a, instances) in n.memory.arrays.iter().enumerate() {
        for (inst, values) in instances.iter().enumerate() {
            let cells: Vec<String> = values.iter().map(interp::notation::value).collect();
            lines.push(format!(
                "{} = {}",
                elem_name(launch, a, inst, &[]),
                cells.join(" ")
            ));
        }
    }
    let line = |off: usize| lang::render::line_col(&src.text, off).0;
    let points: Vec<String> = n
        .points
        .iter()
        .enumerate()
        .map(|(t, p)| match p {
            Point::At(off) => format!("t{t} @{}", line(*off)),
            Point::Barrier(off) => format!("t{t} barrier@{}", line(*off)),
            Point::Done => format!("t{t} done"),
        })
        .collect();
    lines.push(points.join("  "));
    for f in &n.faults {
        lines.push(format!("fault: {}", f.kind));
    }
    lines.join("\n")
}

fn quote(s: &str) -> String {
    format!(
        "\"{}\"",
        s.replace('\\', "\\\\")
            .replace('"', "\\\"")
            .replace('\n', "\\n")
    )
}

/// Final configurations are double-bordered, racy steps red, steps that fired a
/// K-BARRIER bold with the rule in their label.
fn dot(launch: &Launch, g: &Graph, labels: &[String]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "digraph {} {{", quote(&launch.kernel.name));
    let _ = writeln!(s, "  node [shape=box, fontname=\"monospace\"];");
    for (id, (n, l)) in g.nodes.iter().zip(labels).enumerate() {
        let extra = if n.is_final { ", peripheries=2" } else { "" };
        let _ = writeln!(s, "  n{id} [label={}{extra}];", quote(l));
    }
    for e in &g.edges {
        let mut label = format!("t{} {}", e.thread, e.rule);
        let mut attrs = String::new();
        if !e.barriers.is_empty() {
            label.push_str(" + K-BARRIER");
            attrs.push_str(", style=bold");
        }
        if e.racy {
            label.push_str(" (race)");
            attrs.push_str(", color=red, fontcolor=red");
        }
        let _ = writeln!(
            s,
            "  n{} -> n{} [label={}{attrs}];",
            e.from,
            e.to,
            quote(&label)
        );
    }
    s.push_str("}\n");
    s
}
