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
    /// What `ksim explore --exhaustive` visits: state caching at barrier points and
    /// partial-order reduction (source-DPOR with sleep sets).
    Por,
}

#[derive(Args, Debug)]
pub struct GraphArgs {
    #[command(flatten)]
    pub launch: LaunchArgs,
    #[command(flatten)]
    pub policy: PolicyArgs,
    /// Which graph: `none` is the full interleaving graph; `por` the part of it that the
    /// exhaustive explorer visits, to show what its reductions save.
    #[arg(long, value_enum, default_value = "none")]
    pub reduce: Reduce,
    /// Stop after this many configurations (the graph is then marked truncated).
    #[arg(long, default_value_t = 2000)]
    pub max_states: usize,
    #[arg(long, value_enum, default_value = "dot")]
    pub format: GraphFormat,
}

pub fn graph(args: &GraphArgs) -> CmdResult {
    let (src, launch) = args.policy.launch(&args.launch)?;
    if args.max_states == 0 {
        return Err(Failure::usage("--max-states must be at least 1"));
    }
    let (g, summary) = match args.reduce {
        Reduce::None => (sim::graph::reachable(&launch, args.max_states), None),
        Reduce::Por => {
            let (g, s) = sim::graph::explored(&launch, args.max_states);
            (g, Some(s))
        }
    };
    let legend = graph_view::legend(&g, summary.as_ref());
    let labels: Vec<String> = (g.nodes.iter())
        .map(|n| graph_view::label(src.view(), &launch, n))
        .collect();
    match args.format {
        GraphFormat::Dot => print!("{}", graph_view::dot(&launch, &g, &labels, &legend)),
        GraphFormat::Svg => print!("{}", graph_view::svg(&g, &labels, &legend)),
        GraphFormat::Json => {
            let doc = graph_view::json(&launch, &g, &labels, summary.as_ref(), &legend);
            println!("{}", serde_json::to_string_pretty(&doc).expect("JSON"));
        }
    }
    if g.truncated {
        eprintln!(
            "graph truncated at {} configurations (--max-states)",
            args.max_states
        );
    }
    eprintln!("{legend}");
    Ok(EXIT_OK)
}
