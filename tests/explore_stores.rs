//! `ksim explore`'s account of distinct final stores (issue 11 item 4): which elements
//! differ and in how many stores, and the store a race-free run gives (the canonical
//! execution's, when it meets no race), in text and JSON.

mod common;
use common::{json, ksim, stdout, text};
use serde_json::Value;

fn explore(args: &[&str]) -> (String, Value) {
    let mut all = vec!["explore", "--exhaustive", "--no-reports"];
    all.extend_from_slice(args);
    let t = ksim(&all);
    assert_eq!(t.status.code(), Some(1), "{}", text(&t));
    all.push("--json");
    let j = ksim(&all);
    (stdout(&t), json(&j))
}

#[test]
fn differences_count_the_stores_each_element_differs_in() {
    let (t, j) = explore(&[
        "examples/kogge_stone_racy.ksim",
        "-D",
        "n=4",
        "--input",
        "in=ones",
    ]);
    let stores = j["final_stores"].as_array().unwrap();
    assert!(stores.len() > 1, "{j:#}");
    let diffs = j["final_store_differences"].as_array().unwrap();
    assert_eq!(diffs.len(), 1, "only out differs: {diffs:?}");
    assert_eq!(diffs[0]["array"], "out");
    // Recount from the stores themselves.
    // A one-instance array is one flat list.
    let first = &stores[0]["arrays"]["out"];
    for e in diffs[0]["elements"].as_array().unwrap() {
        let k = e["offset"].as_u64().unwrap() as usize;
        let n = stores
            .iter()
            .filter(|s| s["arrays"]["out"][k] != first[k])
            .count();
        assert!(n > 0);
        assert_eq!(e["stores"].as_u64().unwrap() as usize, n, "{e}");
        assert_eq!(e["element"], format!("out[{k}]"));
        assert!(t.contains(&format!("[{k}] in {n}")), "{t}");
    }
    // Element 0 is copied before any race: the same everywhere.
    assert!(diffs[0]["elements"]
        .as_array()
        .unwrap()
        .iter()
        .all(|e| e["offset"] != 0));
    // The canonical execution of this kernel races itself: no store can be named.
    let c = &j["canonical_store"];
    assert_eq!(c["race_free"], false, "{c}");
    assert_eq!(c["store"], Value::Null);
    assert!(
        c["why_none"]
            .as_str()
            .unwrap()
            .contains("canonical execution races"),
        "{c}"
    );
    // In the text, `ksim fix`'s verified barrier already names the race-free store, so the
    // canonical run's "none can be named" is not printed beside it (it would contradict it).
    assert!(
        t.contains("(`ksim fix`) the kernel is race-free and ends in store #"),
        "{t}"
    );
    assert!(!t.contains("no store can be named"), "{t}");
}

#[test]
fn a_race_free_canonical_run_names_its_store() {
    // Thread 0 first (canonical): it takes ticket 0, thread 1 writes nothing, y[0] = 0.
    // Thread 1 first: it writes x[0] = 5, racing with thread 0's read.
    let (t, j) = explore(&["tests/kernels/ticket_race.ksim"]);
    assert!(!j["races"].as_array().unwrap().is_empty(), "{j:#}");
    let c = &j["canonical_store"];
    assert_eq!(c["race_free"], true, "{c}");
    assert_eq!(c["why_none"], Value::Null);
    let k = c["store"].as_u64().expect("a store") as usize;
    let store = &j["final_stores"][k - 1]["arrays"];
    assert_eq!(store["x"][0], 0, "{store}");
    assert_eq!(store["y"][0], 0, "{store}");
    assert!(
        t.contains(&format!(
            "a race-free run (the canonical execution, which meets no race) ends in store #{k}"
        )),
        "{t}"
    );
    assert!(
        t.lines()
            .any(|l| l.contains(&format!("#{k} ("))
                && l.contains("the race-free canonical run's store")),
        "{t}"
    );
}
