//! Every race report replays (issue 25, items 1 and 2): for each kind of kernel file
//! (`.ksim`, `.cl` with `-D`, `.cl` with an `#include`d header and `-I`, `.sim`), race ->
//! report -> the report moved, the kernel and every file it read deleted -> `replay` from
//! another directory reproduces it (exit 1); after a fix, `replay --force` says the race
//! no longer occurs and why (exit 0); a changed header is refused with its diff (exit 2).

mod common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::Output;

/// The one report in `dir`.
fn report_in(dir: &Path) -> PathBuf {
    let mut reps: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(reps.len(), 1, "{reps:?}");
    reps.remove(0)
}

/// Runs `ksim ARGS` in `work` (which writes its report into `work/r`), checks it found a
/// race, and moves the report into a fresh folder `moved`; returns the moved report.
fn race_report(name: &str, work: &Path, args: &[&str]) -> PathBuf {
    let o = ksim_in(work, args);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let rep = report_in(&work.join("r"));
    let moved = tmp(&format!("{name}-moved"));
    let to = moved.join("report.json");
    std::fs::rename(&rep, &to).unwrap();
    to
}

/// `ksim replay ARGS...` from a fresh directory.
fn replay_elsewhere(name: &str, args: &[&str]) -> Output {
    let elsewhere = tmp(&format!("{name}-elsewhere"));
    let mut all = vec!["replay"];
    all.extend(args);
    ksim_in(&elsewhere, &all)
}

fn assert_reproduced(o: &Output) {
    assert_eq!(o.status.code(), Some(1), "{}", text(o));
    // The launch rebuilt is the one recorded (by its hash).
    assert!(!text(o).contains("bug in ksim"), "{}", text(o));
    assert!(stdout(o).contains("race reproduced"), "{}", text(o));
    assert!(
        text(o).contains("copy of its source kept in the report"),
        "{}",
        text(o)
    );
}

/// Exit 0, "NOT reproduced" and the reason.
fn assert_fixed(o: &Output) {
    assert_eq!(o.status.code(), Some(0), "{}", text(o));
    let out = stdout(o);
    assert!(
        out.contains("NOT reproduced: the schedule stops being feasible at step")
            || out.contains("NOT reproduced: the schedule runs through"),
        "{}",
        text(o)
    );
    assert!(text(o).contains("has changed since the report was written"));
}

const KSIM_RACY: &str = "\
kernel shift(local int a[n], global int b[n])
    launch(groups = 1, local_size = n)
{
    a[tid] = a[tid] + 1;
    if (tid > 0) b[tid] = a[tid - 1];
}
";

const KSIM_FIXED: &str = "\
kernel shift(local int a[n], global int b[n])
    launch(groups = 1, local_size = n)
{
    a[tid] = a[tid] + 1;
    barrier();
    if (tid > 0) b[tid] = a[tid - 1];
}
";

#[test]
fn a_ksim_report_replays_with_the_kernel_and_input_file_gone() {
    let work = tmp("rp-ksim");
    std::fs::write(work.join("k.ksim"), KSIM_RACY).unwrap();
    std::fs::write(work.join("a.txt"), "5\n6\n7\n8\n").unwrap();
    let args = [
        "explore",
        "--exhaustive",
        "k.ksim",
        "-D",
        "n=4",
        "--input",
        "a=@a.txt",
        "--report-dir",
        "r",
        "-q",
    ];
    let rep = race_report("rp-ksim", &work, &args);
    let r = rep.to_str().unwrap();
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&rep).unwrap()).unwrap();
    assert_eq!(doc["format_version"], 3);
    assert_eq!(doc["files"][0]["text"], "5\n6\n7\n8\n", "{doc}");
    std::fs::remove_file(work.join("k.ksim")).unwrap();
    std::fs::remove_file(work.join("a.txt")).unwrap();
    assert_reproduced(&replay_elsewhere("rp-ksim", &[r]));
    // A format 2 report (no flags, no files) of the same launch with inline inputs.
    let mut v2 = doc.clone();
    let m = v2.as_object_mut().unwrap();
    m.remove("flags");
    m.remove("files");
    m.insert("format_version".into(), 2.into());
    m["launch"]["inputs"] = serde_json::json!([["a", "5,6,7,8"]]);
    let old = rep.with_file_name("v2.json");
    std::fs::write(&old, v2.to_string()).unwrap();
    assert_reproduced(&replay_elsewhere("rp-ksim", &[old.to_str().unwrap()]));
    // Fixed (as `ksim fix` would), the file back in place: --force says why the race is gone.
    std::fs::write(work.join("k.ksim"), KSIM_FIXED).unwrap();
    std::fs::write(work.join("a.txt"), "5\n6\n7\n8\n").unwrap();
    let o = replay_elsewhere("rp-ksim", &[r]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("+    barrier();"), "{}", text(&o));
    assert_fixed(&replay_elsewhere("rp-ksim", &["--force", r]));
}

#[test]
fn a_cl_report_keeps_its_defines() {
    let work = tmp("rp-cl");
    let src = std::fs::read_to_string(root().join("examples/opencl/kogge_stone.cl")).unwrap();
    std::fs::write(work.join("kogge_stone.cl"), &src).unwrap();
    let args = [
        "races",
        "--report-dir",
        "r",
        "kogge_stone.cl",
        "-D",
        "RACY",
        "--global",
        "8",
        "--local",
        "8",
        "--input",
        "in=iota:8",
        "--input",
        "out=zeros:8",
    ];
    let rep = race_report("rp-cl", &work, &args);
    let r = rep.to_str().unwrap();
    std::fs::remove_file(work.join("kogge_stone.cl")).unwrap();
    assert_reproduced(&replay_elsewhere("rp-cl", &[r]));
    // Fixed by hand: the barrier no longer depends on RACY.
    let fixed = src
        .replace("#ifndef RACY\n", "")
        .replace("#endif\n        if", "        if");
    assert_ne!(fixed, src);
    std::fs::write(work.join("kogge_stone.cl"), &fixed).unwrap();
    assert_fixed(&replay_elsewhere("rp-cl", &["--force", r]));
}

const CL_WITH_HEADER: &str = "\
#include \"sync.h\"
__kernel void shift(__global int *a, __global int *b) {
    __local int t[4];
    size_t l = get_local_id(0);
    t[l] = a[l];
    SYNC();
    if (l > 0) b[l] = t[l - 1];
}
";

#[test]
fn a_cl_report_keeps_its_headers() {
    let work = tmp("rp-inc");
    std::fs::create_dir_all(work.join("src")).unwrap();
    std::fs::create_dir_all(work.join("inc")).unwrap();
    std::fs::write(work.join("src/k.cl"), CL_WITH_HEADER).unwrap();
    let racy_header = "#define SYNC()\n";
    std::fs::write(work.join("inc/sync.h"), racy_header).unwrap();
    std::fs::write(work.join("a.json"), "[1, 2, 3, 4]").unwrap();
    let args = [
        "explore",
        "--exhaustive",
        "src/k.cl",
        "-I",
        "inc",
        "--global",
        "4",
        "--local",
        "4",
        "--input",
        "a=@a.json",
        "--input",
        "b=zeros:4",
        "--report-dir",
        "r",
        "-q",
    ];
    let rep = race_report("rp-inc", &work, &args);
    let r = rep.to_str().unwrap();
    // Only the header changed: refused, with its diff.
    std::fs::write(work.join("inc/sync.h"), "#define SYNC() /* edited */\n").unwrap();
    let o = replay_elsewhere("rp-inc", &[r]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let t = text(&o);
    assert!(t.contains("sync.h` has changed"), "{t}");
    assert!(
        t.contains("-#define SYNC()\n+#define SYNC() /* edited */"),
        "{t}"
    );
    // Kernel, header and input gone: they come from the report.
    std::fs::remove_dir_all(work.join("src")).unwrap();
    std::fs::remove_dir_all(work.join("inc")).unwrap();
    std::fs::remove_file(work.join("a.json")).unwrap();
    assert_reproduced(&replay_elsewhere("rp-inc", &[r]));
    // The header fixed by hand (the kernel still gone).
    std::fs::create_dir_all(work.join("inc")).unwrap();
    let fixed = "#define SYNC() barrier(CLK_LOCAL_MEM_FENCE)\n";
    std::fs::write(work.join("inc/sync.h"), fixed).unwrap();
    assert_fixed(&replay_elsewhere("rp-inc", &["--force", r]));
}

const SIM: &str = "\
rotate.cl
rotate
4 1 1
4 1 1
<size=16 dump>
1 2
3 4
<size=16>
";

const SIM_CL: &str = "\
__kernel void rotate(__global int *data, __local int *tmp) {
    size_t l = get_local_id(0);
    size_t g = get_global_id(0);
    tmp[l] = data[g];
    data[g] = tmp[(l + 1) % get_local_size(0)];
}
";

#[test]
fn a_sim_report_keeps_its_sim_file_and_program() {
    let work = tmp("rp-sim");
    std::fs::write(work.join("rotate.sim"), SIM).unwrap();
    std::fs::write(work.join("rotate.cl"), SIM_CL).unwrap();
    // Oclgrind's files leave `__local` memory undefined; the race needs it read.
    let args = [
        "races",
        "rotate.sim",
        "--uninit",
        "zero",
        "--report-dir",
        "r",
    ];
    let rep = race_report("rp-sim", &work, &args);
    let r = rep.to_str().unwrap();
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&rep).unwrap()).unwrap();
    assert_eq!(doc["kernel_path"], "rotate.sim", "{doc}");
    std::fs::remove_file(work.join("rotate.sim")).unwrap();
    std::fs::remove_file(work.join("rotate.cl")).unwrap();
    assert_reproduced(&replay_elsewhere("rp-sim", &[r]));
    // The program fixed by hand, the .sim file still gone.
    let fixed = SIM_CL.replace(
        "    data[g] =",
        "    barrier(CLK_LOCAL_MEM_FENCE);\n    data[g] =",
    );
    std::fs::write(work.join("rotate.cl"), fixed).unwrap();
    assert_fixed(&replay_elsewhere("rp-sim", &["--force", r]));
}

/// An invalid report is exit 2; a report that an unchanged kernel does not reproduce (here
/// a tampered schedule) is said to be a bug in ksim, exit 2, never 0.
#[test]
fn invalid_and_unreproducible_reports_exit_2() {
    let work = tmp("rp-bad");
    std::fs::write(work.join("bad.json"), "{\"format\": \"nope\"}").unwrap();
    let o = ksim_in(&work, &["replay", "bad.json"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    std::fs::write(work.join("k.ksim"), KSIM_RACY).unwrap();
    let args = [
        "explore",
        "--exhaustive",
        "k.ksim",
        "-D",
        "n=4",
        "--input",
        "a=iota",
        "--report-dir",
        "r",
        "-q",
    ];
    let o = ksim_in(&work, &args);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let rep = report_in(&work.join("r"));
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&rep).unwrap()).unwrap();
    doc["schedule"]["runs"] = serde_json::json!([[3, 1]]);
    std::fs::write(&rep, doc.to_string()).unwrap();
    let o = ksim_in(&work, &["replay", rep.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("this is a bug in ksim"), "{}", text(&o));
}

/// A folder moved whole (kernel, header and report): the kernel is found next to the
/// report, and its header moves with it; nothing is read from the report's copies.
#[test]
fn a_kernel_folder_moved_with_its_report_replays_from_its_files() {
    let work = tmp("rp-folder");
    let proj = work.join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    std::fs::write(proj.join("k.cl"), CL_WITH_HEADER).unwrap();
    std::fs::write(proj.join("sync.h"), "#define SYNC()\n").unwrap();
    let args = [
        "races",
        "k.cl",
        "--global",
        "4",
        "--local",
        "4",
        "--input",
        "a=iota:4",
        "--input",
        "b=zeros:4",
        "--report-dir",
        "r",
    ];
    let o = ksim_in(&proj, &args);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let moved = work.join("moved");
    std::fs::rename(&proj, &moved).unwrap();
    let rep = report_in(&moved.join("r"));
    // A changed header in the moved folder is noticed.
    std::fs::write(
        moved.join("sync.h"),
        "#define SYNC() barrier(CLK_LOCAL_MEM_FENCE)\n",
    )
    .unwrap();
    let o = replay_elsewhere("rp-folder", &[rep.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("moved/sync.h` has changed"),
        "{}",
        text(&o)
    );
    std::fs::write(moved.join("sync.h"), "#define SYNC()\n").unwrap();
    let o = replay_elsewhere("rp-folder", &[rep.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(!text(&o).contains("copy of its source"), "{}", text(&o));
    assert!(!text(&o).contains("bug in ksim"), "{}", text(&o));
}
