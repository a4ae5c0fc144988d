//! `ksim serve`'s JSON API over loopback: a step shows the rule, the values and the cell
//! written; back and forward; a race marked on both its steps; the files it saves are the
//! ones `ksim run --schedule` and `ksim replay` read; every bound and bad input answers with
//! a message, never a crash.

mod common;
mod serve_support;

use serde_json::{json, Value};
use serve_support::{racy, Server};

fn step(s: &Server, id: &str, t: usize) -> (u16, Value) {
    s.json(
        "POST",
        &format!("/api/sessions/{id}/step"),
        Some(&json!({ "thread": t })),
    )
}

fn run(s: &Server, id: &str, until: &str) -> (u16, Value) {
    s.json(
        "POST",
        &format!("/api/sessions/{id}/run"),
        Some(&json!({ "until": until })),
    )
}

#[test]
fn a_step_shows_its_rule_the_values_and_the_cell_it_wrote() {
    let s = Server::start(&[]);
    let (id, v) = s.open(&racy());
    assert_eq!(v["steps"], 0);
    assert_eq!(v["threads"].as_array().unwrap().len(), 4);
    assert_eq!(v["threads"][2]["status"], "enabled");
    assert_eq!(v["threads"][2]["rule"], "S-ARRAY");
    let (status, v) = step(&s, &id, 2);
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["steps"], 1);
    let last = &v["log"][0];
    assert_eq!(last["thread"], 2);
    assert_eq!(last["rule"], "S-ARRAY");
    assert!(
        last["text"].as_str().unwrap().contains("out[2]: 0 -> 3"),
        "{last}"
    );
    let out = v["arrays"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "out")
        .unwrap();
    assert_eq!(out["values"], json!(["0", "0", "3", "0"]));
    assert_eq!(out["changed"], json!([2]));
    // Thread 2 now waits at the barrier; it cannot step.
    assert_eq!(v["threads"][2]["status"], "at barrier");
    let (status, e) = step(&s, &id, 2);
    assert_eq!(status, 409);
    assert!(
        e["error"].as_str().unwrap().contains("waits at a barrier"),
        "{e}"
    );
}

#[test]
fn back_undoes_a_step_and_forward_takes_it_again() {
    let s = Server::start(&[]);
    let (id, _) = s.open(&racy());
    step(&s, &id, 3);
    step(&s, &id, 1);
    let (_, v) = s.json("POST", &format!("/api/sessions/{id}/back"), None);
    assert_eq!(v["steps"], 1);
    assert_eq!(v["forward"], 1);
    assert_eq!(v["threads"][1]["status"], "enabled");
    let (_, v) = s.json("POST", &format!("/api/sessions/{id}/forward"), None);
    assert_eq!(v["steps"], 2);
    assert_eq!(v["log"][1]["thread"], 1);
    assert_eq!(v["forward"], 0);
    // Another choice after going back forgets the step undone.
    s.json("POST", &format!("/api/sessions/{id}/back"), None);
    let (_, v) = step(&s, &id, 0);
    assert_eq!(v["forward"], 0);
    assert_eq!(v["log"][1]["thread"], 0);
    s.json("POST", &format!("/api/sessions/{id}/back"), None);
    s.json("POST", &format!("/api/sessions/{id}/back"), None);
    let (status, e) = s.json("POST", &format!("/api/sessions/{id}/back"), None);
    assert_eq!(status, 409, "{e}");
    assert!(e["error"]
        .as_str()
        .unwrap()
        .contains("initial configuration"));
}

#[test]
fn a_race_is_marked_on_both_its_steps() {
    let s = Server::start(&[]);
    let (id, _) = s.open(&racy());
    let (status, v) = run(&s, &id, "race");
    assert_eq!(status, 200, "{v}");
    let race = &v["races"][0];
    let (first, second) = (
        race["first_step"].as_u64().unwrap(),
        race["second_step"].as_u64().unwrap(),
    );
    assert!(first < second);
    assert_eq!(v["steps"].as_u64().unwrap(), second + 1);
    for k in [first, second] {
        assert_eq!(v["log"][k as usize]["races"], json!([0]), "step {k}");
    }
    let marked: Vec<u64> = (v["log"].as_array().unwrap().iter())
        .filter(|r| !r["races"].as_array().unwrap().is_empty())
        .map(|r| r["index"].as_u64().unwrap())
        .collect();
    assert_eq!(marked, vec![first, second]);
    assert!(race["message"]
        .as_str()
        .unwrap()
        .contains("data race on out["));
    let out = (v["arrays"].as_array().unwrap().iter())
        .find(|a| a["name"] == "out")
        .unwrap();
    assert!(!out["raced"].as_array().unwrap().is_empty(), "{out}");
    // Going back over the second step forgets the race.
    let (_, v) = s.json("POST", &format!("/api/sessions/{id}/back"), None);
    assert_eq!(v["races"], json!([]));
    assert_eq!(v["log"][first as usize]["races"], json!([]));
}

#[test]
fn the_saved_schedule_and_race_report_replay() {
    let s = Server::start(&[]);
    let (id, _) = s.open(&racy());
    let (_, v) = run(&s, &id, "race");
    let dir = common::tmp("serve-files");
    let (status, schedule) = s.request("GET", &format!("/api/sessions/{id}/schedule"), None);
    assert_eq!(status, 200);
    let sched_path = dir.join("schedule.json");
    std::fs::write(&sched_path, &schedule).unwrap();
    let o = common::ksim(&[
        "run",
        "examples/kogge_stone_racy.ksim",
        "-D",
        "n=4",
        "--input",
        "in=1,2,3,4",
        "--schedule",
        &format!("@{}", sched_path.display()),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", common::text(&o));
    assert!(common::text(&o).contains("data race"));

    let (status, report) = s.request("GET", &format!("/api/sessions/{id}/report/0"), None);
    assert_eq!(status, 200, "{report}");
    let rep_path = dir.join("race.json");
    std::fs::write(&rep_path, &report).unwrap();
    let o = common::ksim(&["replay", rep_path.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", common::text(&o));

    // Opening the report gives a new session at the race; opening the schedule in a fresh
    // session takes the same steps.
    let (status, r) = s.json("POST", "/api/open", Some(&json!({ "text": report })));
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["view"]["steps"], v["steps"]);
    assert_eq!(
        r["view"]["races"][0]["first_step"],
        v["races"][0]["first_step"]
    );
    let (fresh, _) = s.open(&racy());
    let (status, r) = s.json(
        "POST",
        "/api/open",
        Some(&json!({ "session": fresh, "text": schedule })),
    );
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["view"]["log"], v["log"]);
    let (status, e) = s.json("POST", "/api/open", Some(&json!({ "text": schedule })));
    assert_eq!(status, 400);
    assert!(
        e["error"].as_str().unwrap().contains("open one first"),
        "{e}"
    );
}

#[test]
fn the_state_graph_and_the_race_timeline_are_svg() {
    let s = Server::start(&[]);
    let mut req = racy();
    req["defines"] = json!(["n=2"]);
    req["inputs"] = json!(["in=1,2"]);
    let (id, _) = s.open(&req);
    let (status, g) = s.request("GET", &format!("/api/sessions/{id}/graph"), None);
    assert_eq!(status, 200, "{g}");
    assert!(g.contains("<svg"), "{g}");
    let (id, _) = s.open(&racy());
    run(&s, &id, "race");
    let (status, t) = s.request("GET", &format!("/api/sessions/{id}/timeline"), None);
    assert_eq!(status, 200, "{t}");
    assert!(t.contains("race-first") && t.contains("race-second"), "{t}");
    // A launch too large to draw is refused with the reason.
    req["defines"] = json!(["n=8"]);
    req["inputs"] = json!(["in=iota"]);
    let (id, _) = s.open(&req);
    let (status, e) = s.json("GET", &format!("/api/sessions/{id}/graph"), None);
    assert_eq!(status, 400);
    assert!(e["error"].as_str().unwrap().contains("at most"), "{e}");
}

#[test]
fn a_kernel_that_does_not_load_answers_its_diagnostic_with_the_line() {
    let s = Server::start(&[]);
    let mut req = racy();
    let broken = req["source"]
        .as_str()
        .unwrap()
        .replace("barrier();\n    for", "barrier()\n    for");
    req["source"] = json!(broken);
    let (status, e) = s.json("POST", "/api/sessions", Some(&req));
    assert_eq!(status, 400, "{e}");
    let msg = e["error"].as_str().unwrap();
    assert!(msg.contains("kogge_stone_racy.ksim:"), "{msg}");
    assert!(!msg.contains('\u{1b}'), "colour codes: {msg}");
    let line = 1 + broken[..broken.find("barrier()\n    for").unwrap()]
        .lines()
        .count();
    assert!(
        (line - 1..=line + 1).contains(&(e["line"].as_u64().unwrap() as usize)),
        "line {} for the statement on line {line}",
        e["line"]
    );
    // Launch options are checked as on the command line.
    let mut req = racy();
    req["defines"] = json!(["n=x"]);
    let (status, e) = s.json("POST", "/api/sessions", Some(&req));
    assert_eq!(status, 400, "{e}");
    // The server reads no file for a student.
    req["defines"] = json!(["n=4"]);
    req["inputs"] = json!(["in=@/etc/passwd"]);
    let (status, e) = s.json("POST", "/api/sessions", Some(&req));
    assert_eq!(status, 400, "{e}");
    assert!(
        e["error"].as_str().unwrap().contains("reads no file"),
        "{e}"
    );
    req["inputs"] = json!([]);
    req["file"] = json!("../x.ksim");
    let (status, _) = s.json("POST", "/api/sessions", Some(&req));
    assert_eq!(status, 400);
    // Not JSON, an unknown session, a body too large.
    let (status, e) = s.request("POST", "/api/sessions", Some("{"));
    assert_eq!(status, 400, "{e}");
    let (status, e) = s.json("GET", "/api/sessions/feedfeedfeedfeed", None);
    assert_eq!(status, 404);
    assert!(e["error"]
        .as_str()
        .unwrap()
        .contains("open the kernel again"));
    let big = json!({ "file": "k.ksim", "source": "x".repeat(600 * 1024) }).to_string();
    let (status, _) = s.request("POST", "/api/sessions", Some(&big));
    assert_eq!(status, 413);
    let (id, _) = s.open(&racy());
    let (status, e) = step(&s, &id, 99);
    assert_eq!(status, 409);
    assert!(e["error"].as_str().unwrap().contains("no thread 99"), "{e}");
    let (status, _) = s.request("GET", &format!("/api/sessions/{id}/report/3"), None);
    assert_eq!(status, 404);
}

#[test]
fn sessions_and_steps_are_bounded() {
    let s = Server::start(&["--max-sessions", "2", "--idle-timeout", "2"]);
    let spin = json!({
        "file": "spin.ksim",
        "source": "kernel spin(local int a[1])\n    launch(groups = 1, local_size = 1)\n{\n    int i = 0;\n    while (i >= 0) {\n        a[0] = i;\n    }\n}\n",
    });
    let (id, _) = s.open(&spin);
    let (status, v) = run(&s, &id, "end");
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["steps"], v["max_steps"]);
    let (status, e) = run(&s, &id, "step");
    assert_eq!(status, 409);
    assert!(
        e["error"].as_str().unwrap().contains("the most a session"),
        "{e}"
    );
    s.open(&racy());
    let (status, e) = s.json("POST", "/api/sessions", Some(&racy()));
    assert_eq!(status, 503, "{e}");
    assert!(e["error"].as_str().unwrap().contains("--max-sessions"));
    // Idle sessions expire, and then a new one is kept.
    std::thread::sleep(std::time::Duration::from_secs(4));
    let (status, _) = s.json("GET", &format!("/api/sessions/{id}"), None);
    assert_eq!(status, 404);
    s.open(&racy());
}
