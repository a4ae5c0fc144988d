//! `ksim graph --reduce por` (issue 12 item 2): the part of the state space the exhaustive
//! explorer visits, compared with the full interleaving graph (`--reduce none`).

mod common;
use common::{ksim, stdout, text};
use std::collections::BTreeSet;

fn graph(args: &[&str]) -> serde_json::Value {
    let mut all = vec!["graph"];
    all.extend_from_slice(args);
    all.extend(["--format", "json"]);
    let o = ksim(&all);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&o)))
}

fn both(args: &[&str]) -> (serde_json::Value, serde_json::Value) {
    let mut none = args.to_vec();
    none.extend(["--reduce", "none"]);
    let mut por = args.to_vec();
    por.extend(["--reduce", "por"]);
    (graph(&none), graph(&por))
}

fn nodes(g: &serde_json::Value) -> &Vec<serde_json::Value> {
    g["nodes"].as_array().unwrap()
}

fn edges(g: &serde_json::Value) -> &Vec<serde_json::Value> {
    g["edges"].as_array().unwrap()
}

/// The labels of the final configurations (arrays and program points).
fn finals(g: &serde_json::Value) -> BTreeSet<String> {
    (nodes(g).iter())
        .filter(|n| n["final"] == true)
        .map(|n| n["label"].as_str().unwrap().to_string())
        .collect()
}

/// Each edge as (source label, thread (none for a K-BARRIER), target label, racy):
/// comparable across graphs, whose node numbers differ.
fn labelled_edges(g: &serde_json::Value) -> BTreeSet<(String, Option<u64>, String, bool)> {
    let label = |i: &serde_json::Value| {
        nodes(g)[i.as_u64().unwrap() as usize]["label"]
            .as_str()
            .unwrap()
            .to_string()
    };
    (edges(g).iter())
        .map(|e| {
            (
                label(&e["from"]),
                e["thread"].as_u64(),
                label(&e["to"]),
                e["racy"] == true,
            )
        })
        .collect()
}

/// What every reduced graph must be: a subgraph of the full one (same labels, same racy
/// marks) with the same final configurations.
fn assert_reduction_of(none: &serde_json::Value, por: &serde_json::Value) {
    assert_eq!(por["reduce"], "por");
    assert_eq!(none["reduce"], "none");
    assert_eq!(finals(none), finals(por), "final configurations differ");
    let full = labelled_edges(none);
    for e in labelled_edges(por) {
        assert!(full.contains(&e), "{e:?} is not a step of the full graph");
    }
    let full_nodes: BTreeSet<&str> = nodes(none)
        .iter()
        .map(|n| n["label"].as_str().unwrap())
        .collect();
    for n in nodes(por) {
        assert!(full_nodes.contains(n["label"].as_str().unwrap()), "{n}");
    }
    assert_eq!(nodes(por)[0]["label"], nodes(none)[0]["label"], "same root");
}

#[test]
fn por_on_a_race_free_kernel_with_a_barrier_has_fewer_configurations() {
    // swap_halves: 8 configurations in all (tests/teach_cli.rs counts them). Race-free, so
    // source-DPOR runs each barrier interval along one interleaving: t0 writes, t1 writes,
    // the K-BARRIER fires (its own step), then t0 and t1 read and write: 6 configurations,
    // 5 steps, one of them the K-BARRIER.
    let (none, por) = both(&["tests/kernels/swap_halves.ksim"]);
    assert_eq!(nodes(&none).len(), 8);
    assert_eq!(nodes(&por).len(), 6, "{por:#}");
    assert_eq!(edges(&por).len(), 5);
    let fired = (edges(&por).iter())
        .filter(|e| e["rule"] == "K-BARRIER" && e["thread"].is_null())
        .count();
    assert_eq!(fired, 1);
    assert_reduction_of(&none, &por);
    assert_eq!(por["explorer"]["verdict"], "EXHAUSTIVE");
    assert_eq!(por["explorer"]["complete"], 1);
    assert_eq!(por["explorer"]["races"], 0);
    assert!(none["explorer"].is_null());
}

#[test]
fn por_on_kogge_stone_for_two_threads_keeps_the_one_final_configuration() {
    let args = [
        "examples/kogge_stone.ksim",
        "-D",
        "n=2",
        "--input",
        "in=1,2",
    ];
    let (none, por) = both(&args);
    assert!(
        nodes(&por).len() < nodes(&none).len(),
        "{} vs {}",
        nodes(&por).len(),
        nodes(&none).len()
    );
    assert_reduction_of(&none, &por);
    assert_eq!(finals(&por).len(), 1);
    assert!(finals(&por).iter().next().unwrap().contains("out = 1 3"));
}

#[test]
fn por_on_a_racy_kernel_keeps_the_racy_steps_and_both_outcomes() {
    // shared_write: both writes enabled at the start race; the explorer runs both orders.
    let (none, por) = both(&["tests/kernels/shared_write.ksim"]);
    assert_reduction_of(&none, &por);
    assert_eq!(finals(&por).len(), 2);
    let racy = edges(&por).iter().filter(|e| e["racy"] == true).count();
    assert_eq!(racy, 2, "{por:#}");
    assert_eq!(por["explorer"]["races"], 1);
    // Here nothing can be saved: the two orders are the two executions.
    assert_eq!(nodes(&por).len(), nodes(&none).len());
}

#[test]
fn por_follows_the_atomicity_the_explorer_judges() {
    // Under `--atomicity access` both reads of x[0] can come before both writes: an update
    // is lost (final x[0] = 1) besides the serial outcome 2. Under the paper's statement
    // atomicity, every execution ends with 2.
    let finals_x = |g: &serde_json::Value| -> BTreeSet<i64> {
        (nodes(g).iter())
            .filter(|n| n["final"] == true)
            .map(|n| n["arrays"]["x"][0][0].as_i64().unwrap())
            .collect()
    };
    let (none, por) = both(&["tests/kernels/lost_update.ksim", "--atomicity", "access"]);
    assert_reduction_of(&none, &por);
    assert_eq!(finals_x(&por), BTreeSet::from([1, 2]));
    assert!(edges(&por).iter().any(|e| e["racy"] == true));
    let (none, por) = both(&["tests/kernels/lost_update.ksim"]);
    assert_reduction_of(&none, &por);
    assert_eq!(finals_x(&por), BTreeSet::from([2]));
}

#[test]
fn por_says_what_was_reduced_in_every_format() {
    let run = |format: &str| {
        let o = ksim(&[
            "graph",
            "tests/kernels/swap_halves.ksim",
            "--reduce",
            "por",
            "--format",
            format,
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        (stdout(&o), String::from_utf8_lossy(&o.stderr).into_owned())
    };
    let (dot, err) = run("dot");
    assert!(err.contains("--reduce por"), "{err}");
    assert!(
        err.contains("6 configurations (1 final), 5 steps (0 racy, 0 first accesses of a race)"),
        "{err}"
    );
    assert!(err.contains("1 execution, 0 pruned"), "{err}");
    let parsed = graphviz_rust::parse(&dot).expect("DOT parses");
    assert!(matches!(
        parsed,
        graphviz_rust::dot_structures::Graph::DiGraph { .. }
    ));
    assert!(dot.contains("label=\"--reduce por: what ksim explore --exhaustive visits"));
    let (svg, _) = run("svg");
    // Graphviz writes each `-` as `&#45;`.
    assert!(svg.contains("reduce por: what ksim explore &#45;&#45;exhaustive visits"));
    let g = graph(&["tests/kernels/swap_halves.ksim", "--reduce", "por"]);
    assert!(g["legend"]
        .as_str()
        .unwrap()
        .contains("partial-order reduction"));
}

#[test]
fn por_with_a_small_max_states_is_truncated() {
    let g = graph(&[
        "examples/kogge_stone.ksim",
        "-D",
        "n=2",
        "--reduce",
        "por",
        "--max-states",
        "3",
    ]);
    assert_eq!(g["truncated"], true);
    assert!(nodes(&g).len() <= 3);
    assert!(g["explorer"]["verdict"]
        .as_str()
        .unwrap()
        .starts_with("INCOMPLETE"));
}
