//! `ksim graph` as a lecturer shows it (issue 30 item 2): every configuration's label is the
//! configuration of Figure 7 (distinct configurations never look alike), K-BARRIER is its
//! own step, both steps of a race are marked, and the SVG is laid out by a real layout
//! engine (Graphviz's `dot`, or `layout-rs` where it is absent) with no label drawn over
//! another.

mod common;
use common::{ksim, stdout, text};
use std::collections::BTreeSet;
use std::process::Command;

fn graph_json(args: &[&str]) -> serde_json::Value {
    let mut all = vec!["graph"];
    all.extend_from_slice(args);
    all.extend(["--format", "json"]);
    let o = ksim(&all);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&o)))
}

fn list(v: &serde_json::Value) -> &Vec<serde_json::Value> {
    v.as_array().expect("an array")
}

/// The launches the tests draw: a race, a barrier, and a loop whose configurations differ
/// only in the threads' variables and next statements.
const LAUNCHES: &[&[&str]] = &[
    &["tests/kernels/shared_write.ksim"],
    &["tests/kernels/swap_halves.ksim"],
    &[
        "examples/kogge_stone.ksim",
        "-D",
        "n=2",
        "--input",
        "in=ones",
    ],
    &[
        "examples/kogge_stone_racy.ksim",
        "-D",
        "n=2",
        "--input",
        "in=ones",
    ],
];

#[test]
fn distinct_configurations_have_distinct_labels() {
    for args in LAUNCHES {
        for reduce in ["none", "por"] {
            let mut a = args.to_vec();
            a.extend(["--reduce", reduce]);
            let g = graph_json(&a);
            let labels: Vec<&str> = list(&g["nodes"])
                .iter()
                .map(|n| n["label"].as_str().unwrap())
                .collect();
            let distinct: BTreeSet<&str> = labels.iter().copied().collect();
            assert_eq!(
                distinct.len(),
                labels.len(),
                "{args:?} {reduce}: {labels:#?}"
            );
        }
    }
    // Kogge-Stone at n = 2 reaches configurations that differ only in a thread's `offset`
    // (line 23 is `offset = 1` and `offset < n`); the label shows the variable and the
    // next statement in core form.
    let g = graph_json(LAUNCHES[2]);
    let labels: Vec<&str> = list(&g["nodes"])
        .iter()
        .map(|n| n["label"].as_str().unwrap())
        .collect();
    assert!(labels
        .iter()
        .any(|l| l.contains("t0 offset=1 temp=0  @23: while (offset < n)")));
    assert!(labels
        .iter()
        .any(|l| l.contains("t0 offset=0 temp=0  @23: offset := 1")));
    let first = &list(&g["nodes"])[0]["threads"][0];
    assert_eq!(first["next"], "out[tid] := in[tid]", "{first}");
    assert_eq!(
        first["vars"][0],
        serde_json::json!(["offset", "0"]),
        "{first}"
    );
}

#[test]
fn k_barrier_is_a_step_of_its_own_from_the_configuration_that_enables_it() {
    let g = graph_json(&["tests/kernels/swap_halves.ksim"]);
    let nodes = list(&g["nodes"]);
    let barrier: Vec<&serde_json::Value> = list(&g["edges"])
        .iter()
        .filter(|e| e["rule"] == "K-BARRIER")
        .collect();
    assert_eq!(barrier.len(), 1, "{g:#}");
    let e = barrier[0];
    assert!(e["thread"].is_null(), "{e}");
    assert_eq!(e["barriers"], serde_json::json!([0]));
    // Its source is K-BARRIER's premise: every thread at the barrier; it is that
    // configuration's only step, and no thread step fires a barrier.
    let from = &nodes[e["from"].as_u64().unwrap() as usize];
    assert!(
        list(&from["points"])
            .iter()
            .all(|p| p.get("barrier").is_some()),
        "{from}"
    );
    let out = list(&g["edges"])
        .iter()
        .filter(|x| x["from"] == e["from"])
        .count();
    assert_eq!(out, 1);
    for x in list(&g["edges"])
        .iter()
        .filter(|x| x["rule"] != "K-BARRIER")
    {
        assert!(list(&x["barriers"]).is_empty(), "{x}");
    }
}

/// Node numbers reachable from `from` along the edges (itself included).
fn reachable(g: &serde_json::Value, from: u64) -> BTreeSet<u64> {
    let mut seen = BTreeSet::from([from]);
    let mut todo = vec![from];
    while let Some(n) = todo.pop() {
        for e in list(&g["edges"]).iter().filter(|e| e["from"] == n) {
            let to = e["to"].as_u64().unwrap();
            if seen.insert(to) {
                todo.push(to);
            }
        }
    }
    seen
}

#[test]
fn both_steps_of_a_race_are_marked() {
    // shared_write: both threads write x[0]; in each execution the first write is the
    // race's first access and the second write completes it.
    let g = graph_json(&["tests/kernels/shared_write.ksim"]);
    let edges = list(&g["edges"]);
    let first: Vec<_> = edges.iter().filter(|e| e["race_first"] == true).collect();
    let second: Vec<_> = edges.iter().filter(|e| e["racy"] == true).collect();
    assert_eq!((first.len(), second.len()), (2, 2), "{g:#}");
    for e in &first {
        assert_eq!(
            e["from"], 0,
            "the first writes leave the initial configuration: {e}"
        );
    }
    // Every second access has a first access on a path to it, by the other thread.
    for s in &second {
        let ok = first.iter().any(|f| {
            reachable(&g, f["to"].as_u64().unwrap()).contains(&s["from"].as_u64().unwrap())
                && f["thread"] != s["thread"]
        });
        assert!(ok, "{s}");
    }
    // A race-free kernel marks nothing.
    let g = graph_json(&["tests/kernels/swap_halves.ksim"]);
    assert!(list(&g["edges"])
        .iter()
        .all(|e| e["race_first"] == false && e["racy"] == false));
    // In the DOT graph both are red and say which access they make.
    let o = ksim(&["graph", "tests/kernels/shared_write.ksim"]);
    let dot = stdout(&o);
    assert_eq!(
        dot.matches("(race: 1st access)\", color=red").count(),
        2,
        "{dot}"
    );
    assert_eq!(
        dot.matches("(race: 2nd access)\", color=red").count(),
        2,
        "{dot}"
    );
}

/// The box of each `<text>` of an SVG placed at a point (x0, y0, x1, y1), estimated from
/// its anchor, font size and length as a monospace or proportional font sets it (0.6 em per
/// character, at most), with the text. (layout-rs writes edge labels along their edge's
/// path, `<textPath>`, with no point: left out.)
fn text_boxes(svg: &str) -> Vec<([f64; 4], String)> {
    let opts = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..Default::default()
    };
    let doc = roxmltree::Document::parse_with_options(svg, opts).expect("SVG parses");
    let mut boxes = Vec::new();
    for t in doc.descendants().filter(|n| n.has_tag_name("text")) {
        let num = |n: roxmltree::Node, a: &str| n.attribute(a).and_then(|v| v.parse::<f64>().ok());
        let size = num(t, "font-size").unwrap_or(14.0);
        // layout-rs writes one `<tspan>` per line, each `dy` one em below the last.
        let lines: Vec<(String, f64)> = match t.children().any(|c| c.has_tag_name("tspan")) {
            true => t
                .children()
                .filter(|c| c.has_tag_name("tspan"))
                .enumerate()
                .map(|(i, c)| (c.text().unwrap_or("").to_string(), (i + 1) as f64 * size))
                .collect(),
            false => vec![(t.text().unwrap_or("").to_string(), 0.0)],
        };
        let (Some(x), Some(y)) = (num(t, "x"), num(t, "y")) else {
            continue;
        };
        for (line, dy) in lines {
            if line.trim().is_empty() {
                continue;
            }
            let w = line.chars().count() as f64 * size * 0.6;
            let x0 = match t.attribute("text-anchor") {
                Some("middle") => x - w / 2.0,
                Some("end") => x - w,
                _ => x,
            };
            let base = y + dy;
            boxes.push(([x0, base - size * 0.75, x0 + w, base + size * 0.2], line));
        }
    }
    boxes
}

/// Asserts that no two text boxes of `svg` overlap.
fn assert_no_overlap(svg: &str, what: &str) {
    let boxes = text_boxes(svg);
    assert!(!boxes.is_empty(), "{what}: no text");
    for (i, (a, ta)) in boxes.iter().enumerate() {
        for (b, tb) in &boxes[i + 1..] {
            let overlap = a[0] < b[2] && b[0] < a[2] && a[1] < b[3] && b[1] < a[3];
            assert!(!overlap, "{what}: {ta:?} {a:?} overlaps {tb:?} {b:?}");
        }
    }
}

fn has_graphviz() -> bool {
    let found = Command::new("dot").arg("-V").output().is_ok();
    assert!(
        found || std::env::var_os("KSIM_REQUIRE_GRAPHVIZ").is_none(),
        "KSIM_REQUIRE_GRAPHVIZ is set but Graphviz's dot is not installed"
    );
    found
}

/// `ksim graph --format svg` with `KSIM_DOT` set to `dot` (`None`: left to ksim).
fn svg(args: &[&str], dot: Option<&str>) -> (String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ksim"));
    cmd.arg("graph").args(args).args(["--format", "svg"]);
    if let Some(d) = dot {
        cmd.env("KSIM_DOT", d);
    }
    let o = cmd.output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    (stdout(&o), String::from_utf8_lossy(&o.stderr).into_owned())
}

#[test]
fn graphviz_draws_every_configuration_and_step_with_no_label_over_another() {
    if !has_graphviz() {
        eprintln!("skipped: Graphviz's dot is not installed");
        return;
    }
    for args in LAUNCHES {
        let g = graph_json(args);
        let (s, err) = svg(args, None);
        assert!(err.contains("laid out by Graphviz's dot"), "{err}");
        assert_eq!(s.matches("class=\"node\"").count(), list(&g["nodes"]).len());
        assert_eq!(s.matches("class=\"edge\"").count(), list(&g["edges"]).len());
        assert_no_overlap(&s, &format!("{args:?}"));
        // Every label line is drawn (Graphviz writes `&#160;` for runs of spaces).
        let drawn: BTreeSet<String> = text_boxes(&s)
            .into_iter()
            .map(|(_, t)| t.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect();
        for n in list(&g["nodes"]) {
            for line in n["label"].as_str().unwrap().lines() {
                let line = line.split_whitespace().collect::<Vec<_>>().join(" ");
                assert!(drawn.contains(&line), "{args:?}: {line:?} not drawn");
            }
        }
    }
    // The racy steps (both accesses) are red: their lines and their labels.
    let (s, _) = svg(LAUNCHES[0], None);
    assert_eq!(
        s.matches("<path fill=\"none\" stroke=\"red\"").count(),
        4,
        "{s}"
    );
    assert_eq!(s.matches("fill=\"red\">t").count(), 4, "{s}");
}

#[test]
fn layout_rs_draws_the_graph_where_graphviz_is_absent_with_no_node_label_over_another() {
    for args in LAUNCHES {
        let g = graph_json(args);
        let (s, err) = svg(args, Some("none"));
        assert!(err.contains("laid out by layout-rs"), "{err}");
        assert!(s.contains("<svg") && s.trim_end().ends_with("</svg>"));
        assert_no_overlap(&s, &format!("layout-rs {args:?}"));
        for n in list(&g["nodes"]) {
            let first = n["label"].as_str().unwrap().lines().last().unwrap();
            assert!(
                s.contains(&first.replace('>', "&gt;").replace('<', "&lt;")),
                "{first}"
            );
        }
    }
}

#[test]
#[should_panic(expected = "overlaps")]
fn the_overlap_check_sees_two_edge_labels_drawn_at_one_place() {
    // Two edge labels at the same point, as ksim's own layout drew converging edges'
    // labels before (docs/img/swap_halves_graph.svg: "t1 S-ARRAY" over "t0 S-ARRAY").
    assert_no_overlap(
        r#"<svg xmlns="http://www.w3.org/2000/svg"><text x="100" y="50" text-anchor="middle" font-size="10">t1 S-ARRAY</text><text x="104" y="52" text-anchor="middle" font-size="10">t0 S-ARRAY</text></svg>"#,
        "two labels",
    );
}
