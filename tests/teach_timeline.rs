//! The race timeline of issue 12 (`explore --timeline`, `replay --timeline`): the SVG
//! parses, has one lane per thread and one mark per step, and draws the two racing
//! accesses joined.

mod common;
use common::{ksim, text};

/// Checks a timeline of `threads` threads and returns the racing marks' steps.
fn check_timeline(svg: &str, threads: usize) -> (u64, u64) {
    let doc = roxmltree::Document::parse(svg).expect("the timeline is well-formed XML");
    let class = |n: &roxmltree::Node, c: &str| n.attribute("class") == Some(c);
    let lanes: Vec<usize> = (doc.descendants())
        .filter(|n| class(n, "lane"))
        .map(|n| n.attribute("data-thread").unwrap().parse().unwrap())
        .collect();
    assert_eq!(
        lanes,
        (0..threads).collect::<Vec<_>>(),
        "one lane per thread"
    );
    let steps = doc.descendants().filter(|n| class(n, "step")).count();
    assert!(steps > 0, "steps as marks");
    assert!(
        doc.descendants().any(|n| class(&n, "barrier")),
        "K-BARRIER lines"
    );
    let by_id = |id: &str| {
        (doc.descendants())
            .find(|n| n.attribute("id") == Some(id))
            .unwrap_or_else(|| panic!("#{id} in\n{svg}"))
    };
    let (a, b) = (by_id("race-first"), by_id("race-second"));
    let centre = |n: roxmltree::Node| {
        let f = |k| n.attribute(k).unwrap().parse::<f64>().unwrap();
        (f("cx"), f("cy"))
    };
    // The link starts at the first access and ends at the second.
    let d: Vec<f64> = (by_id("race-link")
        .attribute("d")
        .unwrap()
        .split_whitespace())
    .filter_map(|w| w.parse().ok())
    .collect();
    assert_eq!((d[0], d[1]), centre(a), "link starts at the first access");
    assert_eq!((d[4], d[5]), centre(b), "link ends at the second access");
    // Each racing mark sits on its thread's lane, at its step's column.
    for n in [a, b] {
        let step = n.attribute("data-step").unwrap();
        let thread = n.attribute("data-thread").unwrap();
        let mark = (doc.descendants())
            .find(|m| {
                class(m, "step")
                    && m.attribute("data-step") == Some(step)
                    && m.attribute("data-thread") == Some(thread)
            })
            .unwrap_or_else(|| panic!("the mark of step {step} on thread {thread}'s lane"));
        let f = |k| mark.attribute(k).unwrap().parse::<f64>().unwrap();
        assert_eq!(f("x") + f("width") / 2.0, centre(n).0);
    }
    let label: String = (by_id("race-label").descendants())
        .filter(|n| n.is_text())
        .map(|n| n.text().unwrap())
        .collect();
    assert!(label.contains("data race on"), "{label}");
    assert!(
        label.contains("kogge_stone_racy.ksim:"),
        "source location: {label}"
    );
    let step = |n: roxmltree::Node| n.attribute("data-step").unwrap().parse().unwrap();
    (step(a), step(b))
}

#[test]
fn explore_and_replay_draw_the_race_timeline() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("race.svg");
    let reports = dir.path().join("reports");
    let o = ksim(&[
        "explore",
        "examples/kogge_stone_racy.ksim",
        "-D",
        "n=4",
        "--exhaustive",
        "--stop-on-race",
        "--report-dir",
        reports.to_str().unwrap(),
        "--timeline",
        svg.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let explored = std::fs::read_to_string(&svg).unwrap();
    let (first, second) = check_timeline(&explored, 4);
    assert!(first < second);

    let report = std::fs::read_dir(&reports)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let replayed = dir.path().join("replayed.svg");
    let o = ksim(&[
        "replay",
        report.to_str().unwrap(),
        "--timeline",
        replayed.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let replayed = std::fs::read_to_string(&replayed).unwrap();
    assert_eq!(check_timeline(&replayed, 4), (first, second));
}

#[test]
fn no_race_writes_no_timeline() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("race.svg");
    let o = ksim(&[
        "explore",
        "examples/kogge_stone.ksim",
        "-D",
        "n=4",
        "--exhaustive",
        "--no-reports",
        "--timeline",
        svg.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(text(&o).contains("no race found"), "{}", text(&o));
    assert!(!svg.exists());
}
