//! Drawings of a prefix-sum circuit ([`interp::circuit`]) for `ksim circuit`: one row per
//! depth as text, and SVG drawn like POPL 2014 Figure 8 (one wire per input, top to
//! bottom, one dot per ⊕, diagonal wires for values passed across).

use interp::circuit::{Circuit, Prov};
use std::fmt::Write as _;

fn prov_name(c: &Circuit, p: Prov) -> String {
    match p {
        Prov::Input(i) => format!("{}[{i}]", c.input),
        // The identity of the generic monoid X of Section 4 (the paper's 1_X).
        Prov::Identity => "1_X".into(),
        Prov::Node(n) => format!("#{n}"),
    }
}

/// One row per depth, one column per wire (`●` a node, `│` a wire), then every node with
/// its operands.
pub fn text_drawing(c: &Circuit) -> String {
    let mut out = String::new();
    let w = c.width.to_string().len().max(1) + 1;
    let mut header = format!("{:>7} ", "wire");
    for i in 0..c.width {
        let _ = write!(header, "{i:>w$}");
    }
    let _ = writeln!(out, "{}", header.trim_end());
    for d in 1..=c.depth {
        let mut row = format!("{:>7} ", format!("depth {d}"));
        for i in 0..c.width {
            let here = c
                .nodes
                .iter()
                .filter(|n| n.depth == d && n.wire == i)
                .count();
            let mark = match here {
                0 => "│",
                1 => "●",
                _ => "◉", // more than one node drawn at the same place
            };
            let _ = write!(row, "{mark:>w$}");
        }
        let _ = writeln!(out, "{}", row.trim_end());
    }
    let _ = writeln!(out, "nodes (#k: wire, depth = left ⊕ right):");
    for (k, n) in c.nodes.iter().enumerate() {
        let _ = writeln!(
            out,
            "  #{k}: {}[{}], depth {} = {} ⊕ {}",
            c.output,
            n.wire,
            n.depth,
            prov_name(c, n.left),
            prov_name(c, n.right)
        );
    }
    let outs: Vec<String> = c.outputs.iter().map(|&p| prov_name(c, p)).collect();
    let _ = writeln!(out, "{} = {}", c.output, outs.join(" "));
    out
}

/// Figure 8 style: vertical wires, a dot per node at (wire, depth), and for an operand from
/// another wire a diagonal from that wire one level above the node: the value travels down
/// its own wire first, as Figure 8 draws Kogge-Stone. (Where the operand's wire was
/// overwritten in between, the diagonal starts at the operand's own node, so the drawing
/// never shows a value the wire no longer holds.) The caption is below the output labels.
pub fn svg(c: &Circuit) -> String {
    const GAP: f64 = 48.0;
    const TOP: f64 = 40.0;
    let x = |wire: usize| 40.0 + wire as f64 * GAP;
    let y = |depth: usize| TOP + depth as f64 * GAP;
    let bottom = y(c.depth + 1);
    let caption = format!("depth {}, size {}, fanout {}", c.depth, c.size, c.fanout);
    let width = (x(c.width) + 10.0).max(16.0 + caption.chars().count() as f64 * 7.0);
    let height = bottom + 50.0;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    for i in 0..c.width {
        let _ = writeln!(
            s,
            r#"<line x1="{0}" y1="{1}" x2="{0}" y2="{bottom}" stroke="gray" stroke-width="1.5"/><text x="{0}" y="{2}" text-anchor="middle">{3}[{i}]</text>"#,
            x(i),
            TOP,
            TOP - 10.0,
            c.input
        );
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}" text-anchor="middle">{}[{i}]</text>"#,
            x(i),
            bottom + 16.0,
            c.output
        );
    }
    // Where an operand's value is on its wire: (wire, depth), inputs at depth 0.
    let at = |p: Prov| -> Option<(usize, usize)> {
        match p {
            Prov::Input(i) => Some((i, 0)),
            Prov::Identity => None,
            Prov::Node(n) => Some((c.nodes[n].wire, c.nodes[n].depth)),
        }
    };
    for n in &c.nodes {
        for p in [n.left, n.right] {
            let Some((wire, depth)) = at(p) else { continue };
            if wire == n.wire {
                continue;
            }
            let overwritten =
                (c.nodes.iter()).any(|m| m.wire == wire && m.depth > depth && m.depth < n.depth);
            let from = if overwritten {
                depth
            } else {
                depth.max(n.depth - 1)
            };
            let _ = writeln!(
                s,
                r#"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="black" stroke-width="1.5"/>"#,
                x(wire),
                y(from),
                x(n.wire),
                y(n.depth)
            );
        }
    }
    for n in &c.nodes {
        let _ = writeln!(
            s,
            r#"<circle cx="{}" cy="{}" r="6" fill="black"/>"#,
            x(n.wire),
            y(n.depth)
        );
    }
    let _ = writeln!(s, r#"<text x="8" y="{}">{caption}</text>"#, bottom + 40.0);
    s.push_str("</svg>\n");
    s
}
