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
    assert!(t.contains("    B1  g0        K-BARRIER  epoch 1 begins"), "{t}");
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
    assert!(t.lines().filter(|l| l.contains(" S-")).all(|l| l.contains("g0.t2")), "{t}");
    let bad = ksim(&["trace", "examples/kogge_stone.ksim", "-D", "n=4", "--steps", "9..3"]);
    assert_eq!(bad.status.code(), Some(2), "{}", text(&bad));
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
    assert!(t.contains("out[1]: ε -> [1,1]"), "{t}");
}

/// `ksim circuit` first line: depth, size, fanout.
fn measures(kernel: &str, n: usize) -> (usize, usize, usize) {
    let o = ksim(&["circuit", &format!("examples/{kernel}.ksim"), "-D", &format!("n={n}"), "--json"]);
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
        assert_eq!(measures("kogge_stone", n), (lg, n * lg - n + 1, 2), "Kogge-Stone n={n}");
        assert_eq!(measures("sklansky", n), (lg, n / 2 * lg, n / 2 + 1), "Sklansky n={n}");
        assert_eq!(measures("sequential_scan", n), (n - 1, n - 1, 2), "sequential n={n}");
        // Table 2's formulas; at n = 8 counted by hand on the kernels' circuits (see
        // docs/teaching.md): Brent-Kung has levels up 1,2,3 and down 4,5 with 4+2+1 and
        // 1+3 nodes; Blelloch up 1,2,3 and down 4,5,6 with 4+2+1 and 1+2+4 nodes.
        assert_eq!(measures("brent_kung", n), (2 * lg - 1, 2 * n - lg - 2, 2), "Brent-Kung n={n}");
        assert_eq!(measures("blelloch", n), (2 * lg, 2 * (n - 1), 2), "Blelloch n={n}");
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
    let racy = ksim(&["circuit", "examples/kogge_stone_racy.ksim", "-D", "n=4"]);
    assert_eq!(racy.status.code(), Some(2));
    assert!(text(&racy).contains("data race"), "{}", text(&racy));
}
