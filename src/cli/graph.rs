//! `ksim graph`: the reachable configurations of one launch as a graph ([`sim::graph`]),
//! written as DOT (for Graphviz), SVG or JSON ([`sim::graph_view`]).

use super::common::*;
use clap::{Args, ValueEnum};
use sim::graph_view;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum GraphFormat {
    /// Graphviz: `ksim graph ... | dot -Tsvg > graph.svg`.
    Dot,
    /// Laid out by ksim (one row per number of steps taken), no Graphviz needed.
    Svg,
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
    let labels: Vec<String> = (g.nodes.iter())
        .map(|n| graph_view::label(src.view(), &launch, n))
        .collect();
    match args.format {
        GraphFormat::Dot => print!("{}", graph_view::dot(&launch, &g, &labels)),
        GraphFormat::Svg => print!("{}", graph_view::svg(&g, &labels)),
        GraphFormat::Json => {
            let doc = graph_view::json(&launch, &g, &labels);
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
