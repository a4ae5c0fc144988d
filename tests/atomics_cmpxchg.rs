//! A failed `atomic_cmpxchg` writes nothing (issue 26): its access is an *atomic read*,
//! which does not race with other atomics nor with plain reads, and races with a plain
//! write as a read does (C11 7.17.7.4 and 5.1.2.4, which OpenCL 2.0 adopts: a failed
//! compare-exchange is an atomic load; Oclgrind's race detector records an atomic load and
//! no store). Both
//! engines, lock-step warps, `races` and `explore --exhaustive` agree, and the access kind
//! is named `atomic-read` in JSON and "atomically reads" in text.

mod common;
use common::{json, ksim, ksim_in, text, tmp};
use std::path::PathBuf;

/// Every thread tries `atomic_cmpxchg(&x[0], 0, 1)`: one succeeds, the others fail.
const ALL_CMPXCHG: &str = "__kernel void k(__global int *x, __global int *out) {
  int old = atomic_cmpxchg(&x[0], 0, 1);
  out[get_global_id(0)] = old;
}
";

/// Plain reads of `x[0]` next to compare-exchanges that all fail (`x[0]` stays 0):
/// race-free, where ksim reported each pair as a race.
const READ_AND_FAILED: &str = "__kernel void k(__global int *x, __global int *out) {
  int g = get_global_id(0);
  int seen = x[0];
  int old = atomic_cmpxchg(&x[0], 7, g);
  out[g] = seen + old;
}
";

/// The same on `__local` memory, with the `atom_` name of the extension.
const LOCAL_READ_AND_FAILED: &str =
    "#pragma OPENCL EXTENSION cl_khr_local_int32_base_atomics : enable
__kernel void k(__global int *out, __local int *s) {
  int l = get_local_id(0);
  if (l == 0) s[0] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  int seen = s[0];
  int old = atom_cmpxchg(&s[0], -1, l);
  out[l] = seen + old;
}
";

/// A plain write and compare-exchanges that fail: still a race (write against atomic read).
const WRITE_AND_FAILED: &str = "__kernel void k(__global int *x) {
  if (get_global_id(0) == 0) x[0] = 7;
  else atomic_cmpxchg(&x[0], 5, 1);
}
";

/// A compare-exchange that succeeds writes: it races with the plain reads of the others.
const READ_AND_SUCCEEDED: &str = "__kernel void k(__global int *x, __global int *out) {
  int g = get_global_id(0);
  atomic_cmpxchg(&x[0], 0, 1);
  out[g] = x[0];
}
";

fn kernel(dir: &std::path::Path, name: &str, src: &str) -> PathBuf {
    let f = dir.join(format!("{name}.cl"));
    std::fs::write(&f, src).unwrap();
    f
}

/// The launch arguments of the kernels above: one group of 4 work-items.
const LAUNCH: [&str; 10] = [
    "--global",
    "4",
    "--local",
    "4",
    "--input",
    "x=zeros:1",
    "--input",
    "out=zeros:4",
    "--input",
    "s=zeros:1",
];

/// The launch arguments a kernel takes (only the buffers it has).
fn launch(src: &str) -> Vec<&'static str> {
    let mut a = LAUNCH[..4].to_vec();
    for pair in LAUNCH[4..].chunks(2) {
        let name = pair[1].split('=').next().unwrap();
        if src.contains(&format!("*{name}")) {
            a.extend_from_slice(pair);
        }
    }
    a
}

/// The races `run --json` reports, as `(first kind, second kind)`, with the exit code.
fn run_races(file: &str, src: &str, extra: &[&str]) -> (Option<i32>, Vec<(String, String)>) {
    let mut args = vec!["run", file, "--json"];
    args.extend(launch(src));
    args.extend_from_slice(extra);
    let o = ksim(&args);
    let doc = json(&o);
    let races = doc["races"]
        .as_array()
        .unwrap_or_else(|| panic!("{args:?}: no races array: {}", text(&o)))
        .iter()
        .map(|r| {
            (
                r["first"]["kind"].as_str().unwrap().to_string(),
                r["second"]["kind"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    (o.status.code(), races)
}

/// Every way ksim runs a kernel: both engines, with and without lock-step warps.
const MODES: [&[&str]; 4] = [
    &["--engine", "reference"],
    &["--engine", "fast"],
    &["--engine", "reference", "--warp-size", "2"],
    &["--engine", "fast", "--warp-size", "2"],
];

#[test]
fn failed_cmpxchg_next_to_atomics_and_reads_is_race_free() {
    let d = tmp("cmpxchg-free");
    for (name, src) in [
        ("all", ALL_CMPXCHG),
        ("read", READ_AND_FAILED),
        ("local", LOCAL_READ_AND_FAILED),
    ] {
        let f = kernel(&d, name, src);
        let f = f.to_str().unwrap();
        for mode in MODES {
            let (code, races) = run_races(f, src, mode);
            assert_eq!((code, races), (Some(0), vec![]), "{name} {mode:?}");
        }
        let mut args = vec!["races", f, "--json", "--no-reports"];
        args.extend(launch(src));
        let o = ksim(&args);
        assert_eq!(o.status.code(), Some(0), "races {name}: {}", text(&o));
        assert_eq!(json(&o)["races"], serde_json::json!([]), "{name}");
        let mut args = vec!["explore", f, "--exhaustive", "--report-dir", "r"];
        args.extend(launch(src));
        let o = ksim_in(&d, &args);
        assert_eq!(o.status.code(), Some(0), "explore {name}: {}", text(&o));
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn plain_write_and_failed_cmpxchg_race_as_write_and_atomic_read() {
    let d = tmp("cmpxchg-write");
    let f = kernel(&d, "write", WRITE_AND_FAILED);
    let f = f.to_str().unwrap();
    for mode in MODES {
        let (code, races) = run_races(f, WRITE_AND_FAILED, mode);
        assert_eq!(code, Some(1), "{mode:?}");
        assert_eq!(
            races,
            vec![("write".to_string(), "atomic-read".to_string())],
            "{mode:?}"
        );
    }
    let mut args = vec!["run", f];
    args.extend(launch(WRITE_AND_FAILED));
    let o = ksim(&args);
    assert!(text(&o).contains("atomically reads x[0]"), "{}", text(&o));

    // `races` writes a report naming the atomic read, and replay reproduces the race.
    let mut args = vec!["races", f, "--json", "--report-dir", "r"];
    args.extend(launch(WRITE_AND_FAILED));
    let o = ksim_in(&d, &args);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let rep = d.join(json(&o)["races"][0]["report"].as_str().expect("a report"));
    let body = std::fs::read_to_string(&rep).unwrap();
    assert!(body.contains("\"atomic-read\""), "{body}");
    let o = ksim_in(&d, &["replay", rep.to_str().unwrap()]);
    assert!(text(&o).contains("race reproduced"), "{}", text(&o));

    let mut args = vec!["explore", f, "--exhaustive", "--report-dir", "e"];
    args.extend(launch(WRITE_AND_FAILED));
    let o = ksim_in(&d, &args);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("atomically reads"), "{}", text(&o));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn succeeded_cmpxchg_still_races_with_plain_reads() {
    let d = tmp("cmpxchg-success");
    let f = kernel(&d, "success", READ_AND_SUCCEEDED);
    let f = f.to_str().unwrap();
    for mode in MODES {
        let (code, races) = run_races(f, READ_AND_SUCCEEDED, mode);
        assert_eq!(code, Some(1), "{mode:?}");
        assert!(
            races
                .iter()
                .all(|(a, b)| [a, b].contains(&&"atomic".to_string())),
            "{mode:?}: {races:?}"
        );
    }
    let _ = std::fs::remove_dir_all(&d);
}
