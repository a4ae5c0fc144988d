//! Views of the reachable-configuration graph ([`crate::graph`]) for `ksim graph`: node
//! labels, Graphviz DOT, JSON, and SVG: the DOT graph laid out by Graphviz's `dot` where it
//! is installed, else by the `layout-rs` crate (a Sugiyama layout in Rust), so that no
//! drawing of ksim's own places labels on top of each other.

use crate::explore::model::plural;
use crate::graph::{Edge, Graph, Node};
use crate::text::{elem_name, SourceText};
use crate::Summary;
use interp::stepper::Status;
use interp::Launch;
use serde_json::json;
use std::fmt::Write as _;

/// What the graph holds, in one line: its size, and for the explored part
/// ([`crate::graph::explored`], with the explorer's `summary`) what the reductions saved.
pub fn legend(g: &Graph, summary: Option<&Summary>) -> String {
    let count = |n: usize, one: &str, many: &str| plural(n as u64, one, many);
    let mut size = format!(
        "{} ({} final), {} ({} racy, {} of a race)",
        count(g.nodes.len(), "configuration", "configurations"),
        g.nodes.iter().filter(|n| n.is_final).count(),
        count(g.edges.len(), "step", "steps"),
        g.edges.iter().filter(|e| e.racy).count(),
        count(
            g.edges.iter().filter(|e| e.race_first).count(),
            "first access",
            "first accesses"
        )
    );
    let divergent = g.edges.iter().filter(|e| e.divergence.is_some()).count();
    if divergent > 0 {
        let _ = write!(
            size,
            ", {divergent} firing a divergent barrier (barrier divergence: undefined on a device)"
        );
    }
    let Some(s) = summary else {
        return format!("--reduce none: every interleaving; {size}");
    };
    let mut line = format!(
        "--reduce por: what ksim explore --exhaustive visits (state caching at barrier \
         points, partial-order reduction); {size}; {}, {} pruned ({} barrier-state \
         cache {}, {} sleep-set blocked), {} found, {}",
        plural(s.complete, "execution", "executions"),
        s.pruned,
        s.cache_hits,
        if s.cache_hits == 1 { "hit" } else { "hits" },
        s.sleep_blocked,
        plural(s.races.len() as u64, "race", "races"),
        s.verdict
    );
    for off in [s.caching_off, s.reduction_off].into_iter().flatten() {
        let _ = write!(line, "; off: {off}");
    }
    line
}

/// The graph as JSON (docs/json.md, `ksim graph --format json`); `summary` is the
/// explorer's, for `--reduce por`.
pub fn json(
    launch: &Launch,
    g: &Graph,
    labels: &[String],
    summary: Option<&Summary>,
    legend: &str,
) -> serde_json::Value {
    let nodes: Vec<_> = (g.nodes.iter().zip(labels).enumerate())
        .map(|(id, (n, l))| {
            json!({"id": id, "label": l, "final": n.is_final,
            "points": n.points, "threads": threads_json(n), "epochs": n.epochs,
            "faults": n.faults,
            "divergences": n.divergences,
            "arrays": arrays_json(launch, n)})
        })
        .collect();
    let explorer = summary.map(|s| {
        json!({"complete": s.complete, "pruned": s.pruned, "cache_hits": s.cache_hits,
            "sleep_blocked": s.sleep_blocked, "races": s.races.len(),
            "verdict": s.verdict.to_string()})
    });
    let reduce = if summary.is_some() { "por" } else { "none" };
    json!({"kernel": launch.kernel.name, "reduce": reduce, "legend": legend,
        "explorer": explorer, "nodes": nodes, "edges": g.edges, "truncated": g.truncated})
}

/// Per thread: its variables (values in the paper's notation) and next statement.
fn threads_json(n: &Node) -> serde_json::Value {
    (n.threads.iter())
        .map(|t| {
            let vars: Vec<_> = (t.vars.iter())
                .map(|(name, v)| json!([name, interp::notation::value(v)]))
                .collect();
            json!({"vars": vars, "next": t.next.as_ref().map(|(text, _)| text)})
        })
        .collect()
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

/// A node's label, the configuration (σ_A, K) of Figure 7: `x = 0 1` per array instance,
/// then a line per thread with its variables and where it stands (`@3: x[0] := tid`, the
/// next statement in core form; `barrier@5`; `done`; `@helper.h:3` in an included file),
/// then the faults its threads' steps raise.
pub fn label(src: SourceText<'_>, launch: &Launch, n: &Node) -> String {
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
    let threads: Vec<(String, String)> = (n.threads.iter())
        .map(|t| {
            let vars: Vec<String> = (t.vars.iter())
                .map(|(name, v)| format!("{name}={}", interp::notation::value(v)))
                .collect();
            let at = match (&t.status, &t.next) {
                (Status::Done, _) => "done".to_string(),
                (Status::AtBarrier { span }, _) => format!("barrier@{}", src.at(span.start)),
                (Status::Enabled { .. }, Some((text, span))) => {
                    // A step that would fault has no core form: its source.
                    let text = if text.is_empty() {
                        src.statement(span)
                    } else {
                        text.clone()
                    };
                    format!("@{}: {text}", src.at(span.start))
                }
                (Status::Enabled { .. }, None) => "enabled".to_string(),
            };
            let name = format!("t{}", t.thread);
            match vars.is_empty() {
                true => (name, at),
                false => (format!("{name} {}", vars.join(" ")), at),
            }
        })
        .collect();
    let width = threads
        .iter()
        .map(|(v, _)| v.chars().count())
        .max()
        .unwrap_or(0);
    for (vars, at) in threads {
        lines.push(format!("{}  {at}", crate::pad::left(&vars, width)));
    }
    for f in &n.faults {
        lines.push(format!("fault: {}", f.kind));
    }
    for d in &n.divergences {
        lines.push(format!("fault: barrier divergence: {d}"));
    }
    lines.join("\n")
}

/// An edge's label: `t0 S-ARRAY`, `K-BARRIER` (`K-BARRIER g1` with several work-groups),
/// and what makes it red: `(divergent)`, `(race: 1st access)`, `(race: 2nd access)`.
fn edge_label(e: &Edge, groups: usize) -> String {
    let mut label = match e.thread {
        Some(t) => format!("t{t} {}", e.rule),
        None if groups > 1 => {
            let g: Vec<String> = e.barriers.iter().map(|g| format!("g{g}")).collect();
            format!("{} {}", e.rule, g.join(","))
        }
        None => e.rule.to_string(),
    };
    if e.divergence.is_some() {
        label.push_str(" (divergent)");
    }
    if e.race_first {
        label.push_str(" (race: 1st access)");
    }
    if e.racy {
        label.push_str(" (race: 2nd access)");
    }
    label
}

fn quote(s: &str) -> String {
    format!(
        "\"{}\"",
        s.replace('\\', "\\\\")
            .replace('"', "\\\"")
            .replace('\n', "\\n")
    )
}

/// The graph in Graphviz's DOT: final configurations are double-bordered; steps of a race
/// (both accesses) and K-BARRIERs that diverge are red; K-BARRIER steps are bold.
pub fn dot(launch: &Launch, g: &Graph, labels: &[String], legend: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "digraph {} {{", quote(&launch.kernel.name));
    let _ = writeln!(s, "  labelloc=t;\n  label={};", quote(legend));
    let _ = writeln!(s, "  node [shape=box, fontname=\"monospace\"];");
    let _ = writeln!(s, "  edge [fontname=\"monospace\", fontsize=12];");
    for (id, (n, l)) in g.nodes.iter().zip(labels).enumerate() {
        let extra = if n.is_final { ", peripheries=2" } else { "" };
        // `\l`: lines left-justified, as the columns of the label are.
        let l = format!("{}\\l", l.replace('\n', "\\l"));
        let _ = writeln!(s, "  n{id} [label=\"{}\"{extra}];", escape(&l));
    }
    for e in &g.edges {
        let mut attrs = String::new();
        if e.thread.is_none() {
            attrs.push_str(", style=bold");
        }
        if e.racy || e.race_first || e.divergence.is_some() {
            attrs.push_str(", color=red, fontcolor=red");
        }
        let _ = writeln!(
            s,
            "  n{} -> n{} [label={}{attrs}];",
            e.from,
            e.to,
            quote(&edge_label(e, launch.groups))
        );
    }
    s.push_str("}\n");
    s
}

/// `s` inside a DOT string: quotes and backslashes escaped, except the `\l` line ends.
fn escape(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace("\\\\l", "\\l")
        .replace('"', "\\\"")
}

/// Which layout engine drew an SVG.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// Graphviz's `dot`, found on the `PATH`.
    Graphviz,
    /// The `layout-rs` crate, where Graphviz is not installed.
    LayoutRs,
}

/// The DOT graph `dot_text` ([`dot`]) as SVG, laid out by Graphviz's `dot` where it is
/// installed (`KSIM_DOT` names another program; `KSIM_DOT=none` skips it), else by
/// `layout-rs`; with the engine that drew it.
pub fn svg(dot_text: &str) -> Result<(String, Layout), String> {
    let program = std::env::var("KSIM_DOT").unwrap_or_else(|_| "dot".into());
    if program != "none" {
        if let Some(svg) = graphviz(&program, dot_text)? {
            return Ok((svg, Layout::Graphviz));
        }
    }
    layout_rs(dot_text).map(|svg| (svg, Layout::LayoutRs))
}

/// Runs Graphviz: `None` when the program is not installed.
fn graphviz(program: &str, dot_text: &str) -> Result<Option<String>, String> {
    use std::io::Write as _;
    use std::process::{Command, Stdio};
    let child = Command::new(program)
        .arg("-Tsvg")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot run Graphviz's `{program}`: {e}")),
    };
    let mut stdin = child.stdin.take().expect("piped stdin");
    let input = dot_text.to_string();
    // Written from another thread: `dot` may fill its output pipe before reading all input.
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child
        .wait_with_output()
        .map_err(|e| format!("Graphviz's `{program}` failed: {e}"))?;
    let _ = writer.join();
    if !out.status.success() {
        return Err(format!(
            "Graphviz's `{program}` failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    String::from_utf8(out.stdout)
        .map(Some)
        .map_err(|_| format!("Graphviz's `{program}` wrote SVG that is not UTF-8"))
}

/// Lays the DOT graph out with `layout-rs`.
fn layout_rs(dot_text: &str) -> Result<String, String> {
    use layout::backends::svg::SVGWriter;
    use layout::gv::{DotParser, GraphBuilder};
    let graph = DotParser::new(dot_text)
        .process()
        .map_err(|e| format!("layout-rs cannot read the graph: {e}"))?;
    let mut builder = GraphBuilder::new();
    builder.visit_graph(&graph);
    let mut visual = builder.get();
    let mut svg = SVGWriter::new();
    visual.do_it(false, false, false, &mut svg);
    Ok(svg.finalize())
}
