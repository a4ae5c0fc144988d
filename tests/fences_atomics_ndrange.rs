//! The core language's OpenCL extensions through every engine (issue 9 items 4, 6 and 7):
//! barrier fences decide which races exist, atomics are one indivisible step that races
//! only with plain accesses, and 2D launches number their work-items as OpenCL does. The
//! reference semantics (`run`), the fast executor (`run --engine fast`, `races`), the
//! exhaustive explorer and, where an OpenCL device is present, the device agree.

mod common;
use common::{ksim, ksim_in, stdout, text};
use serde_json::Value;
use std::collections::BTreeSet;

fn json(args: &[&str]) -> (Value, Option<i32>) {
    let o = ksim(args);
    let v =
        serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{args:?}: {e}\n{}", text(&o)));
    (v, o.status.code())
}

/// The races of a `run`/`races` JSON document as (array, first kind, second kind).
fn race_arrays(doc: &Value) -> BTreeSet<(String, String, String)> {
    doc["races"]
        .as_array()
        .expect("races")
        .iter()
        .map(|r| {
            (
                r["array"].as_str().unwrap().to_string(),
                r["first"]["kind"].as_str().unwrap().to_string(),
                r["second"]["kind"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// A kernel file under `tests/kernels` with `from` replaced by `to`, in a temp dir.
fn variant(file: &str, from: &str, to: &str) -> (tempfile::TempDir, String) {
    let src = std::fs::read_to_string(format!("tests/kernels/{file}")).unwrap();
    assert!(src.contains(from), "{file} has {from}");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(file);
    std::fs::write(&path, src.replace(from, to)).unwrap();
    (dir, path.to_str().unwrap().to_string())
}

fn set(items: &[(&str, &str, &str)]) -> BTreeSet<(String, String, String)> {
    items
        .iter()
        .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
        .collect()
}

#[test]
fn a_barrier_orders_only_the_spaces_of_its_fence() {
    let (_d, both) = variant("fence_local.ksim", "barrier(local)", "barrier()");
    let cases = [
        (
            "tests/kernels/fence_local.ksim",
            set(&[("G", "write", "read")]),
        ),
        (
            "tests/kernels/fence_global.ksim",
            set(&[("A", "write", "read")]),
        ),
        (both.as_str(), set(&[])),
    ];
    // 4 threads: sequential; 300: lock-step batches; 5000: parallel chunks (the fast
    // executor's paths), in 1 and 2 work-groups.
    for (file, expected) in &cases {
        for (n, groups) in [
            ("n=4", "g=1"),
            ("n=300", "g=1"),
            ("n=5000", "g=1"),
            ("n=4", "g=2"),
        ] {
            let launch = ["-D", n, "-D", groups];
            let mut run = vec!["run", file, "--json"];
            run.extend(launch);
            let (rf, rf_code) = json(&run);
            run.extend(["--engine", "fast"]);
            let (fa, fa_code) = json(&run);
            let mut races = vec!["races", file, "--json"];
            races.extend(launch);
            let (ra, ra_code) = json(&races);
            let ctx = format!("{file} {n} groups {groups}");
            assert_eq!(&race_arrays(&rf), expected, "reference: {ctx}");
            assert_eq!(rf["races"], fa["races"], "fast vs reference: {ctx}");
            assert_eq!(rf["arrays"], fa["arrays"], "{ctx}");
            assert_eq!(&race_arrays(&ra), expected, "races: {ctx}");
            let code = if expected.is_empty() { 0 } else { 1 };
            assert_eq!(
                (rf_code, fa_code, ra_code),
                (Some(code), Some(code), Some(code))
            );
            assert_eq!(ra["race_free"], expected.is_empty(), "{ctx}");
            if n == "n=300" {
                // Every thread reads its neighbour's element: n conflicting pairs.
                let count = ra["races"]
                    .as_array()
                    .unwrap()
                    .first()
                    .map(|r| r["count"].clone());
                assert_eq!(
                    count,
                    (!expected.is_empty()).then(|| Value::from(300)),
                    "{ctx}"
                );
            }
        }
        // Every schedule (the explorer does not cache at a barrier that leaves a space
        // unordered).
        let (ex, _) = json(&[
            "explore",
            "--exhaustive",
            file,
            "-D",
            "n=3",
            "-D",
            "g=1",
            "--json",
            "--no-reports",
        ]);
        assert_eq!(ex["verdict"], "EXHAUSTIVE", "{file}");
        let arrays: BTreeSet<String> = ex["races"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["array"].as_str().unwrap().to_string())
            .collect();
        let want: BTreeSet<String> = expected.iter().map(|r| r.0.clone()).collect();
        assert_eq!(arrays, want, "explore {file}");
    }
}

#[test]
fn the_race_note_names_the_unordered_space() {
    let o = ksim(&[
        "races",
        "tests/kernels/fence_local.ksim",
        "-D",
        "n=4",
        "-D",
        "g=1",
    ]);
    assert!(
        text(&o).contains("with no barrier ordering global memory in between"),
        "{}",
        text(&o)
    );
}

#[test]
fn atomics_do_not_race_with_each_other_but_do_not_commute() {
    let file = "tests/kernels/atomic_counter.ksim";
    for (n, groups) in [
        ("n=4", "g=1"),
        ("n=300", "g=1"),
        ("n=5000", "g=1"),
        ("n=4", "g=3"),
    ] {
        let ctx = format!("{n} {groups}");
        let threads: usize =
            n[2..].parse::<usize>().unwrap() * groups[2..].parse::<usize>().unwrap();
        let launch = ["-D", n, "-D", groups, "--json"];
        let mut args = vec!["run", file];
        args.extend(launch);
        let (rf, code) = json(&args);
        assert_eq!(code, Some(0), "{ctx}");
        args.extend(["--engine", "fast"]);
        let (fa, _) = json(&args);
        assert_eq!(rf["arrays"], fa["arrays"], "{ctx}");
        assert_eq!(
            rf["arrays"]["count"],
            serde_json::json!([[threads]]),
            "{ctx}"
        );
        let mut races = vec!["races", file];
        races.extend(launch);
        let (ra, code) = json(&races);
        assert_eq!(code, Some(0), "{ctx}");
        assert_eq!(ra["races"], serde_json::json!([]), "{ctx}");
        // One execution does not decide the others: never "race-free for this input".
        assert_eq!(ra["race_free"], false, "{ctx}");
        assert_eq!(ra["atomics"], true, "{ctx}");
        // Every ticket is taken once.
        let mut out: Vec<u64> = rf["arrays"]["out"][0]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect();
        out.sort_unstable();
        assert_eq!(out, (0..threads as u64).collect::<Vec<_>>(), "{ctx}");
    }
    let o = ksim(&["races", file, "-D", "n=4", "-D", "g=1"]);
    assert!(
        stdout(&o).contains("no race in the canonical execution"),
        "{}",
        text(&o)
    );
    // Every order of the three tickets: 3! final stores, no race.
    let (ex, _) = json(&[
        "explore",
        "--exhaustive",
        file,
        "-D",
        "n=3",
        "-D",
        "g=1",
        "--json",
        "--no-reports",
    ]);
    assert_eq!(ex["verdict"], "EXHAUSTIVE");
    assert_eq!(ex["races"], serde_json::json!([]));
    let outs: BTreeSet<String> = ex["final_stores"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["arrays"]["out"].to_string())
        .collect();
    assert_eq!(outs.len(), 6, "{outs:?}");
}

#[test]
fn an_atomic_and_a_plain_access_race_unless_a_barrier_orders_them() {
    let file = "tests/kernels/atomic_plain_race.ksim";
    let want = set(&[("c", "atomic", "read")]);
    for engine in ["reference", "fast"] {
        let (doc, code) = json(&["run", file, "-D", "n=4", "--engine", engine, "--json"]);
        assert_eq!(code, Some(1), "{engine}");
        // The canonical order: thread 0's read comes after its own atomic and before
        // thread 1's.
        let got: BTreeSet<_> = race_arrays(&doc)
            .into_iter()
            .map(|(a, x, y)| {
                let (x, y) = if x < y { (x, y) } else { (y, x) };
                (a, x, y)
            })
            .collect();
        assert_eq!(got, want, "{engine}");
    }
    let (_d, fenced) = variant(
        "atomic_plain_race.ksim",
        "atomic_add(c[0], 2);",
        "atomic_add(c[0], 2);\n    barrier(global);",
    );
    for engine in ["reference", "fast"] {
        let (doc, code) = json(&["run", &fenced, "-D", "n=4", "--engine", engine, "--json"]);
        assert_eq!(
            (code, doc["races"].clone()),
            (Some(0), serde_json::json!([]))
        );
        assert_eq!(doc["arrays"]["out"], serde_json::json!([[8]]), "{engine}");
    }
    // A local-only fence does not order the global counter.
    let (_d, local) = variant(
        "atomic_plain_race.ksim",
        "atomic_add(c[0], 2);",
        "atomic_add(c[0], 2);\n    barrier(local);",
    );
    let (doc, code) = json(&["races", &local, "-D", "n=4", "--json"]);
    assert_eq!(code, Some(1));
    assert_eq!(doc["races"].as_array().unwrap().len(), 1, "{doc}");
}

/// The OpenCL 1.2 definitions (section 6.12.11), computed here by hand: old value 10 (or
/// -7, or 4000000000u), operand 3 (cmpxchg: compare with 10 or 5, new value 3).
#[test]
fn every_atomic_operation_follows_the_opencl_definition() {
    let src =
        "kernel ops(global int A[14], global int old[14], global uint U[2], global uint uold[2]) \
               launch(local_size = 1) {
        old[0] = atomic_add(A[0], 3);
        old[1] = atomic_sub(A[1], 3);
        old[2] = atomic_xchg(A[2], 3);
        old[3] = atomic_inc(A[3]);
        old[4] = atomic_dec(A[4]);
        old[5] = atomic_cmpxchg(A[5], 10, 3);
        old[6] = atomic_cmpxchg(A[6], 5, 3);
        old[7] = atomic_min(A[7], 3);
        old[8] = atomic_max(A[8], 3);
        old[9] = atomic_and(A[9], 3);
        old[10] = atomic_or(A[10], 3);
        old[11] = atomic_xor(A[11], 3);
        old[12] = atomic_min(A[12], 3);
        old[13] = atomic_add(A[13], 1);
        uold[0] = atomic_min(U[0], 3u);
        uold[1] = atomic_max(U[1], 3u);
    }";
    // `old[k] = atomic_...` is not allowed (the result goes to a variable): rewrite each
    // line as `{ int o = ...; old[k] = o; }`.
    let src: String = src
        .lines()
        .map(|l| {
            let t = l.trim();
            match t.split_once(" = atomic_") {
                Some((lhs, rhs)) if t.ends_with(';') => {
                    let ty = if lhs.starts_with("uold") {
                        "uint"
                    } else {
                        "int"
                    };
                    format!("    {{ {ty} o = atomic_{rhs} {lhs} = o; }}\n")
                }
                _ => format!("{l}\n"),
            }
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("ops.ksim"), &src).unwrap();
    let a = "10,10,10,10,10,10,10,10,10,10,10,10,-7,2147483647";
    for engine in ["reference", "fast"] {
        let o = ksim_in(
            dir.path(),
            &[
                "run",
                "ops.ksim",
                "--input",
                &format!("A={a}"),
                "--input",
                "U=4000000000,1",
                "--engine",
                engine,
                "--json",
            ],
        );
        let doc: Value =
            serde_json::from_slice(&o.stdout).unwrap_or_else(|_| panic!("{}", text(&o)));
        let new = serde_json::json!([[13, 7, 3, 11, 9, 3, 10, 3, 10, 2, 11, 9, -7, -2147483648]]);
        let old =
            serde_json::json!([[10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, -7, 2147483647]]);
        assert_eq!(doc["arrays"]["A"], new, "{engine}\n{src}");
        assert_eq!(doc["arrays"]["old"], old, "{engine}");
        // uint min/max compare unsigned.
        assert_eq!(doc["arrays"]["U"], serde_json::json!([[3, 3]]), "{engine}");
        assert_eq!(
            doc["arrays"]["uold"],
            serde_json::json!([[4000000000u32, 1]]),
            "{engine}"
        );
    }
}

#[test]
fn atomics_are_named_steps_in_a_trace() {
    let o = ksim(&[
        "trace",
        "tests/kernels/atomic_counter.ksim",
        "-D",
        "n=2",
        "-D",
        "g=1",
    ]);
    let t = stdout(&o);
    assert!(
        t.contains("S-ATOMIC   int ticket = atomic_inc(count[0]);           count[0]: 1 -> 2, ticket: 0 -> 1"),
        "{t}"
    );
}

/// OpenCL's numbering, written out: dimension 0 fastest for flat ids.
fn expected_ids(
    groups: [usize; 2],
    local: [usize; 2],
) -> Vec<(usize, usize, usize, usize, usize, usize)> {
    let size_x = groups[0] * local[0];
    let total = size_x * groups[1] * local[1];
    let mut v = vec![(0, 0, 0, 0, 0, 0); total];
    for gy in 0..groups[1] {
        for gx in 0..groups[0] {
            for ly in 0..local[1] {
                for lx in 0..local[0] {
                    let (x, y) = (gx * local[0] + lx, gy * local[1] + ly);
                    let tid = lx + local[0] * ly;
                    let group = gx + groups[0] * gy;
                    let gid = group * local[0] * local[1] + tid;
                    v[y * size_x + x] = (gid, lx, ly, gx, gy, tid);
                }
            }
        }
    }
    v
}

#[test]
fn two_dimensional_launches_number_work_items_as_opencl() {
    // The declared launch (2 x 2 groups of 4 x 2), and the same 32 work-items given on
    // the command line in other shapes.
    for (groups, local, args) in [
        ([2, 2], [4, 2], vec![]),
        (
            [4, 1],
            [2, 4],
            vec!["--groups", "4,1", "--local-size", "2,4"],
        ),
        ([1, 4], [8, 1], vec!["--groups", "1,4", "--local", "8,1"]),
    ] {
        let want = expected_ids(groups, local);
        for engine in ["reference", "fast"] {
            let mut a = vec![
                "run",
                "tests/kernels/ids_2d.ksim",
                "--json",
                "--engine",
                engine,
            ];
            a.extend(&args);
            let (doc, code) = json(&a);
            assert_eq!(code, Some(0), "{a:?}");
            let col = |name: &str| -> Vec<usize> {
                doc["arrays"][name][0]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_u64().unwrap() as usize)
                    .collect()
            };
            let ctx = format!("{a:?}");
            assert_eq!(
                col("flat"),
                want.iter().map(|w| w.0).collect::<Vec<_>>(),
                "{ctx}"
            );
            assert_eq!(
                col("lx"),
                want.iter().map(|w| w.1).collect::<Vec<_>>(),
                "{ctx}"
            );
            assert_eq!(
                col("ly"),
                want.iter().map(|w| w.2).collect::<Vec<_>>(),
                "{ctx}"
            );
            assert_eq!(
                col("gx"),
                want.iter().map(|w| w.3).collect::<Vec<_>>(),
                "{ctx}"
            );
            assert_eq!(
                col("gy"),
                want.iter().map(|w| w.4).collect::<Vec<_>>(),
                "{ctx}"
            );
            let sizes: Vec<usize> = want
                .iter()
                .map(|w| 20000 + local[1] * 1000 + groups[1] * 100 + w.5 * 10)
                .collect();
            assert_eq!(col("sizes"), sizes, "{ctx}");
        }
    }
}

#[test]
fn bad_launch_shapes_are_usage_errors() {
    for (args, msg) in [
        (vec!["--local-size", "2,2,2,2"], "at most 3"),
        (vec!["--groups", "2,x"], "is not a size"),
        (
            vec!["--local-size", "4,0"],
            "at least one group and one thread",
        ),
    ] {
        let mut a = vec!["run", "tests/kernels/ids_2d.ksim"];
        a.extend(&args);
        let o = ksim(&a);
        assert_eq!(o.status.code(), Some(2), "{a:?}: {}", text(&o));
        assert!(text(&o).contains(msg), "{a:?}: {}", text(&o));
    }
}

#[test]
fn the_device_agrees_on_fences_atomics_and_2d_ids() {
    if gpu::device_or_skip("compare of 2D ids, atomics and fences").is_none() {
        return;
    }
    for args in [
        vec!["gpu", "compare", "tests/kernels/ids_2d.ksim"],
        vec![
            "gpu",
            "compare",
            "tests/kernels/ids_2d.ksim",
            "--groups",
            "1,4",
            "--local-size",
            "8,1",
        ],
        // One ticket per thread: the sum of `out` does not depend on the order.
        vec![
            "gpu",
            "compare",
            "tests/kernels/atomic_counter.ksim",
            "-D",
            "n=1",
            "-D",
            "g=1",
        ],
    ] {
        let o = ksim(&args);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", text(&o));
        assert!(stdout(&o).contains("match"), "{args:?}: {}", text(&o));
    }
    let o = ksim(&[
        "gpu",
        "emit",
        "tests/kernels/fence_local.ksim",
        "-D",
        "n=4",
        "-D",
        "g=1",
    ]);
    assert!(
        stdout(&o).contains("    barrier(CLK_LOCAL_MEM_FENCE);\n    out[gid]"),
        "{}",
        stdout(&o)
    );
    let o = ksim(&[
        "gpu",
        "emit",
        "tests/kernels/atomic_counter.ksim",
        "-D",
        "n=4",
        "-D",
        "g=1",
    ]);
    assert!(
        stdout(&o).contains("ticket = atomic_inc(&count[0]);"),
        "{}",
        stdout(&o)
    );
}
