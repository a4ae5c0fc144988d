//! The teaching views on a kernel whose racy statements are in an `#include`d header
//! (`tests/kernels/included_race.cl` includes `shift_helper.h`): trace (text, JSON, the
//! HTML page), `step`, `graph` and the race timeline point at the header's lines.

mod common;
use common::{ksim, stdout, text, tmp};
use scraper::{Html, Selector};
use serde_json::Value;

const KERNEL: [&str; 9] = [
    "tests/kernels/included_race.cl",
    "--global",
    "2",
    "--local",
    "2",
    "--input",
    "data=1,2",
    "--input",
    "tmp=zeros:2",
];

/// The header's racy lines: line 4 writes `tmp[l]`, line 5 reads the neighbour's slot.
const WRITE: &str = "shift_helper.h:4";
const READ: &str = "shift_helper.h:5";

fn run(cmd: &[&str], extra: &[&str]) -> std::process::Output {
    let mut all = cmd.to_vec();
    all.extend_from_slice(&KERNEL);
    all.extend_from_slice(extra);
    ksim(&all)
}

#[test]
fn trace_text_and_json_name_the_header_and_its_lines() {
    let o = run(&["trace"], &[]);
    let t = stdout(&o);
    assert!(
        t.lines()
            .any(|l| l.contains(&format!("{WRITE}: tmp[l] = data[l]"))),
        "{t}"
    );
    assert!(
        t.lines().any(|l| l.contains(&format!("{READ}: data[l] ="))),
        "{t}"
    );
    // The kernel's own statements keep the plain form.
    assert!(t.contains(" l = get_local_id(0) "), "{t}");
    assert!(!t.contains("included_race.cl:"), "{t}");

    let o = run(&["trace"], &["--format", "json"]);
    let records: Vec<Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|r: &Value| r["event"] == "step")
        .collect();
    let write = records
        .iter()
        .find(|r| r["statement"] == "tmp[l] = data[l]")
        .expect("the header's write is a step");
    assert!(write["file"].as_str().unwrap().ends_with("shift_helper.h"));
    assert_eq!(write["line"], 4);
    let own = records
        .iter()
        .find(|r| r["statement"] == "l = get_local_id(0)")
        .expect("the kernel's own statement");
    assert_eq!(own["file"], Value::Null);
    assert_eq!(own["line"], 6);
}

#[test]
fn the_html_page_lists_the_header_and_links_its_lines() {
    let dir = tmp("include-page");
    let page = dir.join("page.html");
    let o = run(&["trace"], &["--html", page.to_str().unwrap()]);
    assert!(page.is_file(), "{}", text(&o));
    let html = Html::parse_document(&std::fs::read_to_string(&page).unwrap());
    let data: String = html
        .select(&Selector::parse("#ksim-data").unwrap())
        .flat_map(|e| e.text())
        .collect();
    let data: Value = serde_json::from_str(&data).unwrap();
    let rows: Vec<(String, String)> = serde_json::from_value(data["source"].clone()).unwrap();
    // The kernel's 8 lines, a heading, the header's 6 lines.
    assert_eq!(rows.len(), 8 + 1 + 6, "{rows:?}");
    assert!(rows[8].1.contains("shift_helper.h"), "{rows:?}");
    assert_eq!(rows[8].0, "");
    assert_eq!(rows[12].0, "4");
    // Every step's row holds its statement, the header's included.
    for s in data["steps"].as_array().unwrap() {
        let row = &rows[s["line"].as_u64().unwrap() as usize - 1];
        assert!(
            row.1.contains(s["statement"].as_str().unwrap()),
            "step {s} is not on row {row:?}"
        );
    }
    // The race's accesses link to the header's rows 13 (line 4) and 14 (line 5).
    let race = &data["races"][0];
    let mut lines = [
        race["first"]["line"].as_u64(),
        race["second"]["line"].as_u64(),
    ];
    lines.sort();
    assert_eq!(lines, [Some(13), Some(14)], "{race}");
    assert!(race["first"]["what"]
        .as_str()
        .unwrap()
        .contains("shift_helper.h:"));
    // The timeline's marks say where, in their titles.
    let page_text = std::fs::read_to_string(&page).unwrap();
    assert!(
        page_text.contains(&format!("line tests/kernels/{WRITE}")),
        "titles"
    );
}

#[test]
fn step_shows_the_header_line_of_the_next_statement() {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_ksim"));
    cmd.arg("step")
        .args(KERNEL)
        .current_dir(common::root())
        .env("NO_COLOR", "1")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    use std::io::Write;
    // Thread 0's first three steps (`int l = ...` and the call's arguments) lead into the
    // helper; its fourth is the helper's write.
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"t0\nt0\nt0\nt0\nquit\n")
        .unwrap();
    let o = child.wait_with_output().unwrap();
    let t = text(&o);
    assert!(
        t.contains(&format!(
            "line tests/kernels/{WRITE}: tmp[l_1] := data[l_1]"
        )),
        "the configuration: {t}"
    );
    assert!(
        t.contains(&format!(
            "step 3: t0 S-ARRAY  tests/kernels/{WRITE}: tmp[l_1] := data[l_1]"
        )),
        "the step: {t}"
    );
    assert!(t.contains("line 6: "), "the kernel's own line: {t}");
}

#[test]
fn graph_labels_and_the_race_timeline_point_into_the_header() {
    let o = run(&["graph"], &["--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let g: Value = serde_json::from_slice(&o.stdout).unwrap();
    let labels: Vec<&str> = (g["nodes"].as_array().unwrap().iter())
        .map(|n| n["label"].as_str().unwrap())
        .collect();
    assert!(
        labels
            .iter()
            .any(|l| l.contains(&format!("@tests/kernels/{READ}"))),
        "{labels:?}"
    );

    let dir = tmp("include-timeline");
    let svg = dir.join("race.svg");
    let o = run(
        &["explore"],
        &[
            "--exhaustive",
            "--no-reports",
            "--timeline",
            svg.to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let s = std::fs::read_to_string(&svg).unwrap_or_else(|e| panic!("{e}: {}", text(&o)));
    assert!(s.contains(&format!("line tests/kernels/{WRITE}")), "{s}");
    assert!(s.contains(&format!("at tests/kernels/{READ}")), "{s}");
}
