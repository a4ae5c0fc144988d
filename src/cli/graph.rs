//! `ksim graph`: the reachable configurations of one launch as a graph ([`sim::graph`]),
//! written as DOT (for Graphviz), SVG or JSON ([`sim::graph_view`]).

use super::common::*;
use clap::{Args, ValueEnum};
use sim::graph_view;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum GraphFormat {
    /// Graphviz: `ksim graph ... | dot -Tsvg > graph.svg`.
    Dot,
    /// The DOT graph laid out by Graphviz's `dot` where installed, else by the
    /// `layout-rs` crate.
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
    /// Stop after this many configurations (the graph is then marked truncated); at most
    /// 20000.
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
    check_size(&launch, args.max_states)?;
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
        GraphFormat::Svg => {
            let dot = graph_view::dot(&launch, &g, &labels, &legend);
            let (svg, layout) = graph_view::svg(&dot).map_err(Failure::usage)?;
            print!("{svg}");
            eprintln!(
                "laid out by {}",
                match layout {
                    graph_view::Layout::Graphviz => "Graphviz's dot",
                    graph_view::Layout::LayoutRs => "layout-rs (Graphviz's dot is not installed)",
                }
            );
        }
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

/// The most configurations a graph may have: every one is kept with its whole state and
/// drawn with its arrays (100,000 took 1.8 GB and gave a 159 MB SVG; 1,000,000 aborted).
pub const MAX_STATES: usize = 20_000;
/// The most threads of a graph's launch: every configuration steps each of them (the
/// command is for two or three threads; 16,384 did not finish 10 configurations in 120 s).
pub const MAX_THREADS: usize = 64;
/// The most array elements of a graph's launch: every configuration's label lists them.
pub const MAX_ELEMENTS: usize = 4096;

/// Refuses a graph too large to build or draw (exit 2), with the limit that was passed.
fn check_size(launch: &interp::Launch, max_states: usize) -> Result<(), Failure> {
    if max_states > MAX_STATES {
        return Err(Failure::usage(format!(
            "--max-states {max_states}: at most {MAX_STATES} (a graph keeps and draws every \
             configuration; for larger searches use `ksim explore --exhaustive`)"
        )));
    }
    if launch.threads() > MAX_THREADS {
        return Err(Failure::usage(format!(
            "the launch has {} threads; `ksim graph` draws every interleaving of a tiny launch \
             (at most {MAX_THREADS} threads): make it smaller with -D, --groups or \
             --local-size, or use `ksim explore --exhaustive`",
            launch.threads()
        )));
    }
    let elements: usize = (0..launch.kernel.arrays.len())
        .map(|a| launch.len(a).saturating_mul(launch.instances(a)))
        .fold(0, usize::saturating_add);
    if elements > MAX_ELEMENTS {
        return Err(Failure::usage(format!(
            "the launch's arrays have {elements} elements; every configuration of the graph \
             lists them (at most {MAX_ELEMENTS}): make them smaller with -D"
        )));
    }
    Ok(())
}
