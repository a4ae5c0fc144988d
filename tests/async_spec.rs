//! Asynchronous copies by OpenCL C 1.2 §6.12.10 (issue 26, item 6): the copied data is
//! there only after `wait_group_events` (reading the destination before the wait races
//! with the copy), and a kernel that finishes with a copy never waited for is the fault
//! "finished without waiting for events", at the copy's call, on both engines.

mod common;
use common::{json, ksim, text, tmp};

/// `src` as a file, run with `args` and `--json` on `engine`: exit code and document.
fn run(name: &str, src: &str, engine: &str, args: &[&str]) -> (Option<i32>, serde_json::Value) {
    let d = tmp(&format!("async-{name}-{engine}"));
    let f = d.join("k.cl");
    std::fs::write(&f, src).unwrap();
    let mut a = vec!["run", f.to_str().unwrap(), "--json", "--engine", engine];
    a.extend_from_slice(args);
    let o = ksim(&a);
    let mut doc = json(&o);
    // The schedule is long and says nothing the assertions need.
    doc["schedule"] = serde_json::Value::Null;
    let _ = std::fs::remove_dir_all(&d);
    (o.status.code(), doc)
}

const LAUNCH: [&str; 6] = ["--global", "16", "--local", "8", "--input", "p=iota:16"];

/// The copy out of `__local` memory is never waited for.
const NEVER_WAITED: &str = "kernel void k(global int *p) {
  local int a[8];
  a[get_local_id(0)] = 1;
  barrier(CLK_LOCAL_MEM_FENCE);
  event_t e = async_work_group_copy(p + 8 * get_group_id(0), a, 8, 0);
}
";

#[test]
fn a_copy_never_waited_for_is_a_fault_at_the_copy() {
    let at = NEVER_WAITED.find("async_work_group_copy").unwrap();
    for engine in ["reference", "fast"] {
        let (code, doc) = run("never", NEVER_WAITED, engine, &LAUNCH);
        assert_eq!(code, Some(1), "{engine}: {doc}");
        let fault = &doc["fault"];
        assert_eq!(fault["annotation"], "__waited", "{engine}: {fault}");
        assert_eq!(fault["span"]["start"], at, "{engine}: {fault}");
    }
    // The text names the fault as the specification's wording does.
    let d = tmp("async-never-text");
    let f = d.join("k.cl");
    std::fs::write(&f, NEVER_WAITED).unwrap();
    let mut a = vec!["run", f.to_str().unwrap()];
    a.extend_from_slice(&LAUNCH);
    let o = ksim(&a);
    assert!(
        text(&o).contains("finished without waiting for events"),
        "{}",
        text(&o)
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_copy_not_made_needs_no_wait() {
    // The copy's call is not reached (`n` is 0 in every work-item): nothing is in flight.
    let src = NEVER_WAITED
        .replace("global int *p)", "global int *p, int n)")
        .replace("event_t e = async", "if (n > 0) async");
    let mut args = LAUNCH.to_vec();
    args.extend(["--arg", "n=0"]);
    for engine in ["reference", "fast"] {
        let (code, doc) = run("notmade", &src, engine, &args);
        assert_eq!(code, Some(0), "{engine}: {doc}");
        assert!(doc["fault"].is_null(), "{engine}: {doc}");
    }
}

#[test]
fn the_destination_is_there_after_the_wait_and_a_barrier_only() {
    let waited = "kernel void k(global int *p) {
  local int a[8];
  event_t e = async_work_group_copy(a, p + 8 * get_group_id(0), 8, 0);
  wait_group_events(1, &e);
  barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
  p[get_global_id(0)] = 2 * a[get_local_id(0)];
}
";
    for engine in ["reference", "fast"] {
        let (code, doc) = run("waited", waited, engine, &LAUNCH);
        assert_eq!(code, Some(0), "{engine}: {doc}");
        let p: Vec<i64> = doc["arrays"]["p"][0]
            .as_array()
            .unwrap_or_else(|| panic!("{doc}"))
            .iter()
            .map(|v| v.as_i64().unwrap())
            .collect();
        assert_eq!(p, (0..16).map(|i| 2 * i).collect::<Vec<i64>>(), "{engine}");
    }
    // Reading the destination before the wait: nothing is there yet (an uninitialised
    // read under the default `--uninit check`) and, with `__local` memory started at zero,
    // a race with the copy's writes (same barrier interval), on both engines.
    let early = waited.replace(
        "  wait_group_events(1, &e);\n  barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);\n  p[get_global_id(0)] = 2 * a[get_local_id(0)];\n",
        "  int v = a[get_local_id(0)];\n  wait_group_events(1, &e);\n  barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);\n  p[get_global_id(0)] = v;\n",
    );
    assert_ne!(early, waited);
    let mut zero = LAUNCH.to_vec();
    zero.extend(["--uninit", "zero"]);
    for engine in ["reference", "fast"] {
        let (code, doc) = run("early", &early, engine, &LAUNCH);
        assert_eq!(code, Some(1), "{engine}: {doc}");
        assert_eq!(doc["fault"]["kind"], "uninitialised", "{engine}: {doc}");
        assert_eq!(doc["fault"]["name"], "a", "{engine}: {doc}");
        let (code, doc) = run("early", &early, engine, &zero);
        assert_eq!(code, Some(1), "{engine}: {doc}");
        let on_a = doc["races"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["array"] == "a");
        assert!(on_a, "{engine}: {doc}");
    }
}
