//! Views of the reachable-configuration graph ([`crate::graph`]) for `ksim graph`: node
//! labels, Graphviz DOT, JSON, and an SVG laid out by ksim itself (no Graphviz needed).

use crate::graph::{Graph, Node, Point};
use crate::text::{elem_name, SourceText};
use crate::timeline::esc;
use crate::Summary;
use interp::Launch;
use serde_json::json;
use std::fmt::Write as _;

/// What the graph holds, in one line: its size, and for the explored part
/// ([`crate::graph::explored`], with the explorer's `summary`) what the reductions saved.
pub fn legend(g: &Graph, summary: Option<&Summary>) -> String {
    let mut size = format!(
        "{} configurations ({} final), {} steps ({} racy)",
        g.nodes.len(),
        g.nodes.iter().filter(|n| n.is_final).count(),
        g.edges.len(),
        g.edges.iter().filter(|e| e.racy).count()
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
         points, partial-order reduction); {size}; {} executions, {} pruned ({} barrier-state \
         cache hits, {} sleep-set blocked), {} races found, {}",
        s.complete,
        s.pruned,
        s.cache_hits,
        s.sleep_blocked,
        s.races.len(),
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
            "points": n.points, "epochs": n.epochs, "faults": n.faults,
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

/// A node's label: `x = 0 1` per array instance, then `t0 @3  t1 barrier@5  t2 done`
/// (source lines; `t0 @helper.h:3` in an included file), then the faults its threads' steps raise.
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
    let line = |off: usize| src.at(off);
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
    for d in &n.divergences {
        lines.push(format!("fault: barrier divergence: {d}"));
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

/// The graph in Graphviz's DOT: final configurations are double-bordered, racy steps and
/// steps that fired a divergent barrier red, steps that fired a K-BARRIER bold with the
/// rule in their label.
pub fn dot(launch: &Launch, g: &Graph, labels: &[String], legend: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "digraph {} {{", quote(&launch.kernel.name));
    let _ = writeln!(s, "  labelloc=t;\n  label={};", quote(legend));
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
        if e.divergence.is_some() {
            label.push_str(" (divergent)");
        }
        if e.racy {
            label.push_str(" (race)");
        }
        if e.racy || e.divergence.is_some() {
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

/// A layered drawing: a configuration's row is the number of K-STEPs from the initial
/// one (breadth-first depth), boxes in discovery order within a row, edges as straight
/// lines from the bottom of one box to the top of the next, labelled two thirds down.
pub fn svg(g: &Graph, labels: &[String], legend: &str) -> String {
    const CHAR: f64 = 7.5;
    const LINE: f64 = 15.0;
    const GAP_X: f64 = 30.0;
    const GAP_Y: f64 = 70.0;
    let mut level = vec![usize::MAX; g.nodes.len()];
    if !level.is_empty() {
        level[0] = 0;
    }
    // Edges are recorded in breadth-first order of their source.
    for e in &g.edges {
        if level[e.to] == usize::MAX {
            level[e.to] = level[e.from] + 1;
        }
    }
    let rows = level
        .iter()
        .filter(|&&l| l != usize::MAX)
        .max()
        .map_or(0, |m| m + 1);
    let size = |l: &str| {
        let w = l.lines().map(|x| x.chars().count()).max().unwrap_or(0) as f64 * CHAR + 16.0;
        let h = l.lines().count() as f64 * LINE + 10.0;
        (w, h)
    };
    let box_w = labels.iter().map(|l| size(l).0).fold(0.0, f64::max);
    let box_h = labels.iter().map(|l| size(l).1).fold(0.0, f64::max);
    let mut in_row: Vec<Vec<usize>> = vec![Vec::new(); rows];
    for (n, &l) in level.iter().enumerate() {
        if l != usize::MAX {
            in_row[l].push(n);
        }
    }
    let widest = in_row.iter().map(Vec::len).max().unwrap_or(1) as f64;
    // The legend above the graph, a line per `;`-separated part.
    let legend: Vec<&str> = legend.split("; ").collect();
    let legend_w = legend.iter().map(|l| l.chars().count()).max().unwrap_or(0) as f64 * CHAR;
    let width = (widest * (box_w + GAP_X) + GAP_X).max(legend_w + 16.0);
    let top = LINE * (legend.len() as f64 + 0.5);
    let height = top + rows as f64 * (box_h + GAP_Y) + GAP_Y / 2.0;
    let mut pos = vec![(0.0, 0.0); g.nodes.len()];
    for (r, nodes) in in_row.iter().enumerate() {
        let row_w = nodes.len() as f64 * (box_w + GAP_X) - GAP_X;
        for (i, &n) in nodes.iter().enumerate() {
            let x = (width - row_w) / 2.0 + i as f64 * (box_w + GAP_X);
            let y = top + GAP_Y / 2.0 + r as f64 * (box_h + GAP_Y);
            pos[n] = (x, y);
        }
    }
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="monospace" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    for (i, line) in legend.iter().enumerate() {
        let y = LINE * (i as f64 + 1.0);
        let _ = writeln!(s, r#"<text x="8" y="{y}">{}</text>"#, esc(line));
    }
    for e in &g.edges {
        let (fx, fy) = pos[e.from];
        let (tx, ty) = pos[e.to];
        let (x1, y1, x2, y2) = (fx + box_w / 2.0, fy + box_h, tx + box_w / 2.0, ty);
        let color = if e.racy || e.divergence.is_some() {
            "red"
        } else {
            "black"
        };
        let stroke = if e.barriers.is_empty() { 1.2 } else { 3.0 };
        let mut label = format!("t{} {}", e.thread, e.rule);
        if !e.barriers.is_empty() {
            label.push_str(" + K-BARRIER");
        }
        if e.divergence.is_some() {
            label.push_str(" (divergent)");
        }
        if e.racy {
            label.push_str(" (race)");
        }
        let _ = writeln!(
            s,
            r#"<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" stroke="{color}" stroke-width="{stroke}"/><circle cx="{x2}" cy="{y2}" r="3" fill="{color}"/><text x="{}" y="{}" fill="{color}" text-anchor="middle" font-size="10">{}</text>"#,
            // Two thirds of the way down: edges leaving one box diverge, so their labels
            // do not overlap there as they would at the common start.
            x1 + (x2 - x1) * 2.0 / 3.0,
            y1 + (y2 - y1) * 2.0 / 3.0,
            esc(&label)
        );
    }
    for (n, node) in g.nodes.iter().enumerate() {
        if level[n] == usize::MAX {
            continue;
        }
        let (x, y) = pos[n];
        let _ = writeln!(
            s,
            r#"<rect x="{x}" y="{y}" width="{box_w}" height="{box_h}" fill="white" stroke="black"/>"#
        );
        if node.is_final {
            let _ = writeln!(
                s,
                r#"<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="black"/>"#,
                x + 3.0,
                y + 3.0,
                box_w - 6.0,
                box_h - 6.0
            );
        }
        for (i, line) in labels[n].lines().enumerate() {
            let _ = writeln!(
                s,
                r#"<text x="{}" y="{}">{}</text>"#,
                x + 8.0,
                y + 5.0 + LINE * (i as f64 + 0.8),
                esc(line)
            );
        }
    }
    s.push_str("</svg>\n");
    s
}
