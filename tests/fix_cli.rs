//! Issue 11, item 3, through the binary: `ksim fix` proposes barriers that remove races,
//! checks each on the patched kernel, prints a unified diff, and `--write` patches the file.

use std::path::{Path, PathBuf};

mod common;
use common::{ksim, ksim_in, stdout, text};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A fresh directory holding a copy of `examples/NAME`.
fn copy_example(name: &str) -> (PathBuf, PathBuf) {
    let d = std::env::temp_dir().join(format!("ksim-fix-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("tmp dir");
    let f = d.join(name);
    std::fs::copy(root().join("examples").join(name), &f).expect("copy");
    (d, f)
}

/// The kernel's code from `kernel` on, without comment lines and blank lines, with the
/// kernel's name removed: what must equal between a patched example and its correct twin.
fn code(path: &Path) -> Vec<String> {
    let t = std::fs::read_to_string(path).expect("read");
    let from = t.find("\nkernel ").expect("a kernel");
    t[from..]
        .lines()
        .map(|l| l.split("//").next().unwrap().trim_end().to_string())
        .filter(|l| !l.trim().is_empty())
        .map(|l| match l.strip_prefix("kernel ") {
            Some(rest) => rest.split_once('(').unwrap().1.to_string(),
            None => l,
        })
        .collect()
}

#[test]
fn blelloch_missing_barrier_gets_one_verified_barrier_that_makes_it_a_scan() {
    let (dir, f) = copy_example("blelloch_missing_barrier.ksim");
    let original = std::fs::read_to_string(&f).unwrap();
    let name = "blelloch_missing_barrier.ksim";
    let o = ksim_in(&dir, &["fix", name, "-D", "n=8", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let j: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("JSON");
    let races = j["races"].as_array().unwrap().len();
    assert!(races > 1, "{}", text(&o));
    let proposals = j["proposals"].as_array().unwrap();
    assert_eq!(proposals.len(), 1, "{}", text(&o));
    assert_eq!(proposals[0]["races"].as_array().unwrap().len(), races);
    assert_eq!(j["patched_race_free"], true);

    let o = ksim_in(&dir, &["fix", name, "-D", "n=8"]);
    let out = stdout(&o);
    assert!(
        out.contains(&format!(
            "all {races} races disappear with one barrier after line"
        )),
        "{out}"
    );
    assert!(out.contains(&format!("+++ b/{name}")), "{out}");
    let added: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with('+') && !l.starts_with("+++"))
        .collect();
    assert_eq!(added, ["+        barrier();"], "{out}");
    // Printing does not touch the file.
    assert_eq!(std::fs::read_to_string(&f).unwrap(), original);

    let o = ksim_in(&dir, &["fix", name, "-D", "n=8", "--write"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let orig = dir.join(format!("{name}.orig"));
    assert_eq!(std::fs::read_to_string(&orig).unwrap(), original);
    let patched = std::fs::read_to_string(&f).unwrap();
    assert_eq!(patched.lines().count(), original.lines().count() + 1);
    for n in ["n=8", "n=16"] {
        let o = ksim_in(&dir, &["races", name, "-D", n, "--no-reports"]);
        assert_eq!(o.status.code(), Some(0), "races {n}: {}", text(&o));
    }
    let o = ksim_in(&dir, &["verify-scan", name, "-D", "n=8", "--exclusive"]);
    assert_eq!(o.status.code(), Some(0), "verify-scan: {}", text(&o));
    // The fixed kernel has nothing left to fix.
    let o = ksim_in(&dir, &["fix", name, "-D", "n=8"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(stdout(&o).contains("nothing to fix"), "{}", text(&o));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn kogge_stone_racy_fix_restores_the_removed_barrier() {
    let (dir, f) = copy_example("kogge_stone_racy.ksim");
    let o = ksim_in(
        &dir,
        &["fix", "kogge_stone_racy.ksim", "-D", "n=8", "--write"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        stdout(&o).contains("with one barrier after line 33"),
        "{}",
        text(&o)
    );
    assert_eq!(code(&f), code(&root().join("examples/kogge_stone.ksim")));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn races_between_work_groups_have_no_barrier_fix() {
    let d = std::env::temp_dir().join(format!("ksim-fix-groups-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let f = d.join("groups.ksim");
    std::fs::write(
        &f,
        "kernel groups(global int A[1]) launch(groups = 2, local_size = 1) {\n    A[0] = tid;\n}\n",
    )
    .unwrap();
    let o = ksim_in(&d, &["fix", "groups.ksim", "--write"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let t = text(&o);
    assert!(t.contains("1 race no single barrier removes"), "{t}");
    assert!(t.contains("never different work-groups"), "{t}");
    assert!(t.contains("not written"), "{t}");
    assert!(!d.join("groups.ksim.orig").exists());
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn opencl_kernels_are_refused_with_the_reason() {
    let cl = std::fs::read_dir(root().join("examples/opencl"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "cl"))
        .expect("an OpenCL example");
    let o = ksim(&["fix", cl.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("patches .ksim kernels only"),
        "{}",
        text(&o)
    );
}

#[test]
fn a_kernel_that_faults_is_not_patched() {
    let d = std::env::temp_dir().join(format!("ksim-fix-fault-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(
        d.join("oob.ksim"),
        "kernel oob(local int A[2]) launch(groups = 1, local_size = 2) {\n    A[tid + 1] = 1;\n    A[0] = A[1];\n}\n",
    )
    .unwrap();
    let o = ksim_in(&d, &["fix", "oob.ksim"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        stdout(&o).contains("no fix searched: the kernel faults"),
        "{}",
        text(&o)
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// Issue 11, item 4: `explore` marks the final store the race-free kernel gives.
#[test]
fn explore_marks_the_store_of_the_race_free_kernel() {
    let args = [
        "explore",
        "--exhaustive",
        "examples/kogge_stone_racy.ksim",
        "-D",
        "n=4",
        "--input",
        "in=iota",
        "--no-reports",
    ];
    let o = ksim(&[&args[..], &["--json"]].concat());
    let j: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("JSON");
    let stores = j["final_stores"].as_array().unwrap();
    assert!(stores.len() > 1, "{}", text(&o));
    let k = j["race_free_store"]["store"]
        .as_u64()
        .expect("a marked store") as usize;
    // The inclusive scan of 0 1 2 3.
    assert_eq!(
        stores[k - 1]["arrays"]["out"],
        serde_json::json!([0, 1, 3, 6])
    );
    assert_eq!(
        j["race_free_store"]["barriers"],
        serde_json::json!(["after line 33"])
    );
    let o = ksim(&args);
    let out = stdout(&o);
    assert!(
        out.contains(&format!(
            "with a barrier after line 33 (`ksim fix`) the kernel is race-free and ends in store #{k}"
        )),
        "{out}"
    );
    assert!(
        out.lines()
            .any(|l| l.trim_start().starts_with(&format!("#{k} ("))
                && l.contains("the race-free store")),
        "{out}"
    );
    // A race-free kernel has nothing to mark.
    let o = ksim(&[
        "explore",
        "--exhaustive",
        "examples/kogge_stone.ksim",
        "-D",
        "n=4",
        "--json",
        "--no-reports",
    ]);
    let j: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("JSON");
    assert!(j["race_free_store"].is_null(), "{}", text(&o));
}

/// Races that need different barriers get one proposal each, together in one diff; an
/// absolute path heads the diff as it is.
#[test]
fn two_missing_barriers_are_two_groups_in_one_diff() {
    let d = std::env::temp_dir().join(format!("ksim-fix-two-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let f = d.join("two.ksim");
    std::fs::write(
        &f,
        "kernel two(local int A[n], local int B[n]) launch(groups = 1, local_size = n)\n{\n    \
         A[tid] = tid;\n    B[tid] = A[(tid + 1) % n];\n    A[tid] = B[(tid + 1) % n];\n}\n",
    )
    .unwrap();
    let path = f.to_str().unwrap();
    let o = ksim(&["fix", path, "-D", "n=4"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let out = stdout(&o);
    assert!(
        out.contains("2 races disappear with one barrier after line 4"),
        "{out}"
    );
    assert!(
        out.contains("1 race disappears with one barrier after line 3"),
        "{out}"
    );
    assert!(out.contains(&format!("--- {path}\n+++ {path}\n")), "{out}");
    let added = out.lines().filter(|l| *l == "+    barrier();").count();
    assert_eq!(added, 2, "{out}");
    let _ = std::fs::remove_dir_all(&d);
}
