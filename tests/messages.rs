//! Every message true (issue 11, item 5): one regression test per item of the issue's
//! "untrue or misleading output" list that is fixed here.

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use common::{ksim, ksim_in, stdout, text};

fn tmp(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ksim-messages-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("tmp dir");
    for (f, t) in files {
        std::fs::write(d.join(f), t).expect("write");
    }
    d
}

/// Every `╭─[ file:L:C ]` / `├─[ file:L:C ]` section header names the line of the first
/// source line shown under it.
fn assert_headers_match_snippets(out: &str) -> usize {
    let lines: Vec<&str> = out.lines().collect();
    let mut checked = 0;
    for (i, l) in lines.iter().enumerate() {
        let Some(at) = l.find("─[ ") else { continue };
        let loc = l[at + "─[ ".len()..]
            .trim_end()
            .trim_end_matches(']')
            .trim_end();
        let header_line: usize = loc.rsplit(':').nth(1).unwrap().parse().unwrap();
        let snippet_line: usize = lines[i + 1..]
            .iter()
            .find_map(|s| {
                let (n, rest) = s.trim_start().split_once(' ')?;
                if rest.starts_with('│') {
                    n.parse().ok()
                } else {
                    None
                }
            })
            .expect("a snippet under the header");
        assert_eq!(header_line, snippet_line, "header `{l}` in:\n{out}");
        checked += 1;
    }
    checked
}

#[test]
fn diagnostic_section_headers_name_their_snippets_line() {
    let k = "examples/blelloch_missing_barrier.ksim";
    let mut sections = 0;
    for args in [
        &["races", k, "-D", "n=8", "--no-reports"][..],
        &["run", k, "-D", "n=8"],
        &["explore", "--random", "3", k, "-D", "n=4", "--no-reports"],
        &["verify-scan", k, "-D", "n=8", "--exclusive"],
    ] {
        let o = ksim(args);
        sections += assert_headers_match_snippets(&String::from_utf8_lossy(&o.stderr));
    }
    // `races` alone shows several diagnostics with a second section (the earlier line
    // after the later one); the test must see them.
    assert!(sections >= 8, "{sections} section headers checked");
    let o = ksim(&["races", k, "-D", "n=8", "--no-reports"]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("├─["));
}

#[test]
fn verify_scan_names_a_renamed_input_array() {
    let src = std::fs::read_to_string("examples/scan_off_by_one.ksim").unwrap();
    let renamed = src.replace("in[", "src[").replace("T in[n]", "T src[n]");
    let d = tmp("rename", &[("sob.ksim", &renamed)]);
    let o = ksim_in(&d, &["verify-scan", "sob.ksim", "--in", "src", "-D", "n=8"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let out = stdout(&o);
    assert!(
        out.contains("src[1] ⊕ ... ⊕ src[4], missing src[0]"),
        "{out}"
    );
    assert!(out.contains("(src[i] = [i]"), "{out}");
    assert!(!out.contains("in["), "{out}");
    let _ = std::fs::remove_dir_all(&d);
}

/// On a terminal, stdout and stderr interleave in the order written: the race diagnostics
/// must come before the summary, not between "races: 1 distinct" and its list.
#[test]
fn explore_writes_its_diagnostics_before_the_summary() {
    let o = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "'{}' explore --exhaustive examples/kogge_stone_racy.ksim -D n=4 --no-reports 2>&1",
            env!("CARGO_BIN_EXE_ksim")
        ))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let all = stdout(&o);
    let diag = all.find("data race on").expect("a diagnostic");
    let summary = all.find("ksim explore:").expect("a summary");
    assert!(diag < summary, "{all}");
    let races = all.find("races: 1 distinct").unwrap();
    let list = all[races..].lines().nth(1).unwrap();
    assert!(
        list.contains("write at") || list.contains("read at"),
        "{all}"
    );
}

#[test]
fn run_random_header_states_the_seed() {
    let o = ksim(&[
        "run",
        "examples/kogge_stone.ksim",
        "-D",
        "n=4",
        "--schedule",
        "random",
        "--seed",
        "7",
    ]);
    let first = stdout(&o).lines().next().unwrap().to_string();
    assert!(first.contains("schedule random (seed 7)"), "{first}");
}

#[test]
fn the_monoid_is_named_only_for_generic_kernels() {
    let o = ksim(&["run", "tests/kernels/two_barriers.ksim", "-D", "n=4"]);
    let first = stdout(&o).lines().next().unwrap().to_string();
    assert!(!first.contains("monoid"), "{first}");
    let o = ksim(&[
        "explore",
        "--exhaustive",
        "tests/kernels/two_barriers.ksim",
        "-D",
        "n=2",
    ]);
    let first = stdout(&o).lines().next().unwrap().to_string();
    assert!(!first.contains("monoid"), "{first}");
    let o = ksim(&["run", "examples/kogge_stone.ksim", "-D", "n=4"]);
    let first = stdout(&o).lines().next().unwrap().to_string();
    assert!(first.contains("monoid int-add"), "{first}");
    assert!(first.contains("1 group of 4 threads"), "{first}");
}

#[test]
fn one_barrier_interval_is_singular() {
    let d = tmp(
        "interval",
        &[(
            "k.ksim",
            "kernel k(global int a[2]) launch(local_size = 2) { a[tid] = 1; }\n",
        )],
    );
    let o = ksim_in(&d, &["races", "k.ksim"]);
    let out = stdout(&o);
    assert!(out.contains("1 barrier interval,"), "{out}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn races_help_points_to_the_readme_not_to_a_rust_module() {
    let o = ksim(&["races", "--help"]);
    let out = stdout(&o);
    assert!(!out.contains("interp::"), "{out}");
    assert!(out.contains("README"), "{out}");
}

/// The same non-termination is "non-terminating" in `run`, `races` and `explore`.
#[test]
fn non_termination_has_one_name() {
    let spin = "kernel spin(global int a[1]) launch(local_size = 2) {\n\
        int i = 0; while (i >= 0) { i = i + 1; if (i > 1000) i = 0; }\n}\n";
    let d = tmp("spin", &[("spin.ksim", spin)]);
    let run = ksim_in(&d, &["run", "spin.ksim", "--max-steps", "3000"]);
    assert!(text(&run).contains("non-terminating: did not terminate within 3000 steps"));
    assert!(!text(&run).contains("runtime fault"), "{}", text(&run));
    let races = ksim_in(&d, &["races", "spin.ksim", "--max-steps", "3000"]);
    assert!(
        stdout(&races).contains("no verdict: non-terminating"),
        "{}",
        text(&races)
    );
    let ex = ksim_in(
        &d,
        &[
            "explore",
            "--exhaustive",
            "spin.ksim",
            "--max-steps",
            "3000",
        ],
    );
    let out = stdout(&ex);
    assert!(out.contains("non-terminating executions: 1"), "{out}");
    assert!(out.contains("runtime faults: none"), "{out}");
    for o in [&run, &races, &ex] {
        assert_eq!(o.status.code(), Some(1));
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// One step-bound default for every command: 10^7 + 1000 per thread, as README and
/// `--help` say. A 2-group kernel of about 2 × 60 000 steps terminates; explore's old default
/// (10^5 + 1000 per thread) called it non-terminating.
#[test]
fn every_command_uses_the_same_step_bound() {
    let long = "kernel longer(global int a[2]) launch(groups = 2, local_size = 1) {\n\
        int i = 0; while (i < 30000) { i = i + 1; }\n a[gid] = i;\n}\n";
    let d = tmp("bound", &[("long.ksim", long)]);
    let run = ksim_in(&d, &["run", "long.ksim", "--json"]);
    let ex = ksim_in(
        &d,
        &["explore", "--exhaustive", "long.ksim", "--json", "-q"],
    );
    let (rj, ej): (serde_json::Value, serde_json::Value) = (
        serde_json::from_slice(&run.stdout).unwrap(),
        serde_json::from_slice(&ex.stdout).unwrap(),
    );
    assert_eq!(rj["launch"]["max_steps"], 10_002_000);
    assert_eq!(ej["launch"]["max_steps"], rj["launch"]["max_steps"]);
    assert_eq!(ej["non_terminating"]["count"], 0, "{ej}");
    assert_eq!(ej["verdict"], "EXHAUSTIVE");
    assert_eq!(ex.status.code(), Some(0));
    for cmd in ["run", "races", "explore", "verify-scan"] {
        let h = stdout(&ksim(&[cmd, "--help"]));
        assert!(h.contains("default: 10^7 + 1000 per thread"), "{cmd}: {h}");
    }
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"));
    assert!(readme.unwrap().contains("(default 10^7 + 1000 per thread)"));
    let _ = std::fs::remove_dir_all(&d);
}
