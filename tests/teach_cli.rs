//! The teaching additions of issue 12 to `trace`, and `ksim circuit`: Figure 3's snapshot
//! table, the core form, reads, filters, racing steps, and Table 2's circuit measures.

mod common;
use common::{ksim, stdout, text};

fn trace(args: &[&str]) -> String {
    let mut all = vec!["trace"];
    all.extend_from_slice(args);
    stdout(&ksim(&all))
}

#[test]
fn snapshots_of_kogge_stone_on_ones_are_the_rows_of_figure_3() {
    let t = trace(&[
        "examples/kogge_stone.ksim",
        "-D",
        "n=8",
        "--input",
        "in=ones",
        "--snapshots",
    ]);
    // One row per barrier epoch; the paper's Figure 3 shows the array after the copy and
    // after each round (offset 1, 2, 4). Each round has two barriers, so each of its rows
    // appears twice: once after the reads, once after the writes.
    let rows: Vec<(String, String)> = t
        .lines()
        .filter_map(|l| l.split_once(" | "))
        .map(|(label, cells)| (label.trim().to_string(), cells.trim().to_string()))
        .collect();
    let cells: Vec<&str> = rows.iter().map(|r| r.1.as_str()).collect();
    assert_eq!(
        cells,
        [
            "out",
            "0 0 0 0 0 0 0 0",
            "1 1 1 1 1 1 1 1",
            "1 1 1 1 1 1 1 1",
            "1 2 2 2 2 2 2 2",
            "1 2 2 2 2 2 2 2",
            "1 2 3 4 4 4 4 4",
            "1 2 3 4 4 4 4 4",
            "1 2 3 4 5 6 7 8",
            "1 2 3 4 5 6 7 8",
        ],
        "{t}"
    );
    assert_eq!(rows[2].0, "B1        1");
    assert_eq!(rows[8].0, "B7        7");
    // No per-step lines.
    assert!(!t.contains("S-ASSIGN"), "{t}");
}

#[test]
fn core_form_reads_and_the_racing_steps_are_shown() {
    let t = trace(&[
        "examples/kogge_stone_racy.ksim",
        "-D",
        "n=4",
        "--input",
        "in=ones",
        "--core",
        "--reads",
    ]);
    // `for (int offset = 1; ...)` is `offset := 1` then `while`, as in Figure 4.
    assert!(t.contains("S-LOOP-T   while (offset < n) {…}"), "{t}");
    assert!(t.contains("offset := offset * 2"), "{t}");
    assert!(!t.contains("for ("), "{t}");
    // Thread 1 writes out[1] at step 13, thread 2 reads it at step 17: both are marked.
    let line = |n: &str| {
        t.lines()
            .find(|l| l.trim_start().starts_with(&format!("{n} ")))
            .unwrap_or_else(|| panic!("no step {n} in\n{t}"))
            .to_string()
    };
    assert!(line("13").contains("out[1]: 1 -> 2; reads out[1]=1; RACE on out[1] with step 17"));
    assert!(line("17").contains("temp: 0 -> 2; reads out[1]=2; RACE on out[1] with step 13"));
    // K-BARRIER lines are numbered.
    assert!(
        t.contains("    B1  g0        K-BARRIER  epoch 1 begins"),
        "{t}"
    );
}

#[test]
fn thread_and_step_filters() {
    let t = trace(&[
        "examples/kogge_stone.ksim",
        "-D",
        "n=4",
        "--input",
        "in=ones",
        "--thread",
        "2",
        "--steps",
        "10..40",
    ]);
    let steps: Vec<u64> = t
        .lines()
        .filter(|l| l.contains(" S-"))
        .map(|l| l.split_whitespace().next().unwrap().parse().unwrap())
        .collect();
    assert!(!steps.is_empty(), "{t}");
    assert!(steps.iter().all(|s| (10..40).contains(s)), "{t}");
    assert!(
        t.lines()
            .filter(|l| l.contains(" S-"))
            .all(|l| l.contains("g0.t2")),
        "{t}"
    );
    let bad = ksim(&[
        "trace",
        "examples/kogge_stone.ksim",
        "-D",
        "n=4",
        "--steps",
        "9..3",
    ]);
    assert_eq!(bad.status.code(), Some(2), "{}", text(&bad));
    let bad = ksim(&[
        "trace",
        "examples/kogge_stone.ksim",
        "-D",
        "n=4",
        "--thread",
        "4",
    ]);
    assert_eq!(bad.status.code(), Some(2), "{}", text(&bad));
    assert!(text(&bad).contains("--thread 4: the launch has threads 0 to 3"));
}

#[test]
fn interval_identity_prints_as_epsilon_in_the_trace() {
    let t = trace(&[
        "examples/kogge_stone.ksim",
        "-D",
        "n=2",
        "--monoid",
        "interval",
        "--input",
        "in=iota",
    ]);
    assert!(t.contains("out[1]: 1_I -> [1,1]"), "{t}");
}

/// `ksim circuit` first line: depth, size, fanout.
fn measures(kernel: &str, n: usize) -> (usize, usize, usize) {
    let o = ksim(&[
        "circuit",
        &format!("examples/{kernel}.ksim"),
        "-D",
        &format!("n={n}"),
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let c: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let get = |k: &str| c[k].as_u64().unwrap() as usize;
    assert_eq!(get("width"), n);
    (get("depth"), get("size"), get("fanout"))
}

#[test]
fn circuits_have_the_measures_of_table_2() {
    for n in [8usize, 16, 32] {
        let lg = n.trailing_zeros() as usize;
        assert_eq!(
            measures("kogge_stone", n),
            (lg, n * lg - n + 1, 2),
            "Kogge-Stone n={n}"
        );
        assert_eq!(
            measures("sklansky", n),
            (lg, n / 2 * lg, n / 2 + 1),
            "Sklansky n={n}"
        );
        assert_eq!(
            measures("sequential_scan", n),
            (n - 1, n - 1, 2),
            "sequential n={n}"
        );
        // Table 2's formulas; at n = 8 counted by hand on the kernels' circuits (see
        // docs/teaching.md): Brent-Kung has levels up 1,2,3 and down 4,5 with 4+2+1 and
        // 1+3 nodes; Blelloch up 1,2,3 and down 4,5,6 with 4+2+1 and 1+2+4 nodes.
        assert_eq!(
            measures("brent_kung", n),
            (2 * lg - 1, 2 * n - lg - 2, 2),
            "Brent-Kung n={n}"
        );
        assert_eq!(
            measures("blelloch", n),
            (2 * lg, 2 * (n - 1), 2),
            "Blelloch n={n}"
        );
    }
}

#[test]
fn circuit_draws_figure_8_and_refuses_racy_kernels() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("ks.svg");
    let o = ksim(&[
        "circuit",
        "examples/sklansky.ksim",
        "-D",
        "n=8",
        "--svg",
        svg.to_str().unwrap(),
    ]);
    let t = stdout(&o);
    assert!(t.contains("depth 3, size 12, fanout 5"), "{t}");
    // Sklansky's rows: 4 nodes at each level, on the wires of Figure 8.
    assert!(t.contains("depth 1  │ ● │ ● │ ● │ ●"), "{t}");
    assert!(t.contains("depth 2  │ │ ● ● │ │ ● ●"), "{t}");
    assert!(t.contains("depth 3  │ │ │ │ ● ● ● ●"), "{t}");
    assert!(t.contains("#8: out[4], depth 3 = #5 ⊕ in[4]"), "{t}");
    let s = std::fs::read_to_string(&svg).unwrap();
    assert!(s.starts_with("<svg") && s.trim_end().ends_with("</svg>"));
    assert_eq!(s.matches("<circle").count(), 12);
    // A race is a finding (exit 1, as everywhere in ksim), not a usage error.
    let racy = ksim(&["circuit", "examples/kogge_stone_racy.ksim", "-D", "n=4"]);
    assert_eq!(racy.status.code(), Some(1));
    assert!(text(&racy).contains("data race"), "{}", text(&racy));
}

#[test]
fn graph_of_two_shared_writes_has_the_configurations_counted_by_hand() {
    // `x[0] = tid;` by two threads: from the initial configuration either thread writes
    // first (2 configurations, each with one thread done), then the other (2 final
    // configurations: the last writer's tid is left in x[0], 0 or 1, so they differ).
    // 1 + 2 + 2 = 5 configurations, 2 + 2 = 4 steps; the two second steps are racy (each
    // completes the race with the other thread's write, as race reports mark it).
    let o = ksim(&[
        "graph",
        "tests/kernels/shared_write.ksim",
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let g: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let nodes = g["nodes"].as_array().unwrap();
    let edges = g["edges"].as_array().unwrap();
    assert_eq!(nodes.len(), 5);
    assert_eq!(edges.len(), 4);
    let finals: Vec<&serde_json::Value> = nodes.iter().filter(|n| n["final"] == true).collect();
    assert_eq!(finals.len(), 2);
    let mut last: Vec<i64> = finals
        .iter()
        .map(|n| n["arrays"]["x"][0][0].as_i64().unwrap())
        .collect();
    last.sort();
    assert_eq!(last, [0, 1]);
    let racy: Vec<_> = edges.iter().filter(|e| e["racy"] == true).collect();
    assert_eq!(racy.len(), 2);
    assert!(racy.iter().all(|e| e["from"] != 0));
    assert!(edges.iter().all(|e| e["rule"] == "S-ARRAY"));
}

#[test]
fn graph_with_a_barrier_and_its_dot_output_parses() {
    // Each thread writes its x cell, waits, reads the other's into y: 1 initial, 2 with
    // one thread at the barrier, 1 with both there, 1 after the K-BARRIER (its own step,
    // as in Figure 7), 2 with one thread done, 1 final = 8 configurations; steps
    // 2 + 2 + 1 + 2 + 2 = 9, one of them the K-BARRIER; none racy.
    let o = ksim(&["graph", "tests/kernels/swap_halves.ksim", "--format", "dot"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let dot = stdout(&o);
    let parsed = graphviz_rust::parse(&dot).expect("DOT parses");
    let graphviz_rust::dot_structures::Graph::DiGraph { stmts, .. } = parsed else {
        panic!("a digraph")
    };
    use graphviz_rust::dot_structures::Stmt;
    let nodes = stmts.iter().filter(|s| matches!(s, Stmt::Node(_))).count();
    let edges = stmts.iter().filter(|s| matches!(s, Stmt::Edge(_))).count();
    assert_eq!((nodes, edges), (8, 9), "{dot}");
    assert_eq!(
        dot.matches("[label=\"K-BARRIER\", style=bold]").count(),
        1,
        "{dot}"
    );
    assert_eq!(dot.matches("peripheries=2").count(), 1, "{dot}");
    assert!(!dot.contains("(race"), "{dot}");
    assert!(
        dot.contains("x = 1 2\\ly = 2 1\\lt0  done\\lt1  done\\l"),
        "{dot}"
    );
}

#[test]
fn graph_never_calls_two_atomic_accesses_racy() {
    let graph = |args: &[&str]| -> serde_json::Value {
        let mut all = vec!["graph"];
        all.extend_from_slice(args);
        all.extend(["--format", "json"]);
        let o = ksim(&all);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        serde_json::from_slice(&o.stdout).unwrap()
    };
    let racy = |g: &serde_json::Value| -> Vec<serde_json::Value> {
        (g["edges"].as_array().unwrap().iter())
            .filter(|e| e["racy"] == true)
            .cloned()
            .collect()
    };
    // Two tickets taken with atomic_inc, then written to distinct cells: no race at all.
    let g = graph(&[
        "tests/kernels/atomic_counter.ksim",
        "-D",
        "n=2",
        "-D",
        "g=1",
    ]);
    assert!(g["edges"].as_array().unwrap().len() > 2);
    assert_eq!(racy(&g), Vec::<serde_json::Value>::new());
    // Both threads' first steps are atomic_add on c[0]: not racy with each other; thread
    // 0's later plain read of c[0] races with thread 1's atomic_add.
    let g = graph(&["tests/kernels/atomic_plain_race.ksim", "-D", "n=2"]);
    let racy = racy(&g);
    assert!(
        !racy.is_empty(),
        "the plain read and the atomic update race"
    );
    assert!(racy.iter().all(|e| e["from"] != 0), "{racy:?}");
}
