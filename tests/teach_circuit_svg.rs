//! `ksim circuit --svg` drawn as POPL 2014 Figure 8 (issue 30 item 3): vertical wires, a
//! dot per ⊕, each value passed across on a diagonal from the level above its node (it
//! travels down its own wire first), and the caption clear of the output labels.

mod common;
use common::{ksim, text};

/// `ksim circuit KERNEL -D n=8 --svg`: the SVG's parsed lines `(x1, y1, x2, y2, stroke)`,
/// and texts `(x, y, text)`.
type Lines = Vec<(f64, f64, f64, f64, String)>;
type Texts = Vec<(f64, f64, String)>;

fn drawing(kernel: &str) -> (Lines, Texts) {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("c.svg");
    let o = ksim(&[
        "circuit",
        kernel,
        "-D",
        "n=8",
        "--svg",
        svg.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let s = std::fs::read_to_string(&svg).unwrap();
    let doc = roxmltree::Document::parse(&s).expect("SVG parses");
    let num = |n: roxmltree::Node, a: &str| n.attribute(a).unwrap().parse::<f64>().unwrap();
    let lines = (doc.descendants().filter(|n| n.has_tag_name("line")))
        .map(|n| {
            let stroke = n.attribute("stroke").unwrap_or("").to_string();
            (
                num(n, "x1"),
                num(n, "y1"),
                num(n, "x2"),
                num(n, "y2"),
                stroke,
            )
        })
        .collect();
    let texts = (doc.descendants().filter(|n| n.has_tag_name("text")))
        .map(|n| (num(n, "x"), num(n, "y"), n.text().unwrap_or("").to_string()))
        .collect();
    (lines, texts)
}

#[test]
fn kogge_stone_passes_each_value_across_from_the_level_above() {
    let (lines, _) = drawing("examples/kogge_stone.ksim");
    let wires: Vec<_> = lines.iter().filter(|l| l.4 == "gray").collect();
    assert_eq!(wires.len(), 8);
    assert!(wires.iter().all(|w| w.0 == w.2), "wires are vertical");
    let diagonals: Vec<_> = lines.iter().filter(|l| l.4 == "black").collect();
    // Kogge-Stone at n = 8: 7 + 6 + 4 nodes, each with one operand from another wire.
    assert_eq!(diagonals.len(), 17);
    // Every diagonal spans one level (48 px), going down: in Figure 8 no value jumps
    // levels (before, in[0] ran straight to depth 2 and depth 3).
    for d in &diagonals {
        assert_eq!(d.3 - d.1, 48.0, "{d:?}");
        assert!(d.2 > d.0, "a value passes to a higher wire: {d:?}");
    }
}

#[test]
fn the_caption_is_below_the_output_labels() {
    for k in [
        "examples/sklansky.ksim",
        "examples/kogge_stone.ksim",
        "examples/blelloch.ksim",
    ] {
        let (_, texts) = drawing(k);
        let caption = texts
            .iter()
            .find(|t| t.2.starts_with("depth "))
            .expect("caption");
        let outs: Vec<_> = texts.iter().filter(|t| t.2.starts_with("out[")).collect();
        assert_eq!(outs.len(), 8, "{k}");
        for o in outs {
            // 12 px text: the caption's top is below the labels' baseline.
            assert!(caption.1 - 12.0 > o.1, "{k}: {caption:?} overlaps {o:?}");
        }
    }
}
