//! Issue 25 ("Trust"), item 4: crashes, hangs, resources and lost output. Each test
//! checks a refusal or a bound with a small launch; none builds the large thing it refuses.

mod common;
use common::{ksim, stdout, text, tmp};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// `ksim ARGS` with `input` on standard input (a scripted `ksim step` session).
fn ksim_with_input(args: &[&str], input: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ksim"))
        .args(args)
        .current_dir(common::root())
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ksim starts");
    let mut stdin = child.stdin.take().expect("stdin");
    let input = input.to_vec();
    // Written from another thread: ksim may answer before it has read everything.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().expect("ksim runs");
    writer.join().expect("writer");
    out
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

fn no_panic(o: &Output, what: &str) {
    assert_ne!(o.status.code(), Some(101), "{what}: {}", text(o));
    assert!(!text(o).contains("panicked"), "{what}: {}", text(o));
    assert!(o.status.code().is_some(), "{what}: killed by a signal");
}

/// Two threads race on `x[0]` after `iterations` loop iterations each; `x` has `len`
/// elements.
fn late_race(iterations: u32, len: u32) -> String {
    format!(
        "kernel late(global int x[{len}]) launch(groups = 1, local_size = 2)\n{{\n    \
         int i = 0;\n    while (i < {iterations}) {{\n        i = i + 1;\n    }}\n    x[0] = tid;\n}}\n"
    )
}

// #10: a page refused after the work keeps the race, the summary and the verdict.
#[test]
fn a_refused_page_keeps_the_race_and_the_verdict() {
    let dir = tmp("limits-page-race");
    // 40,000 elements in every one of ~200 configurations: far over the page's bound.
    let k = write(&dir, "big.ksim", &late_race(20, 40_000));
    let page = dir.join("p.html");
    let p = page.to_str().unwrap();
    let o = ksim(&["explore", "--random", "1", "--no-reports", &k, "--html", p]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("warning: --html"), "{err}");
    assert!(err.contains("data race"), "{err}");
    assert!(!stdout(&o).is_empty(), "the summary is printed");
    assert!(!page.exists());

    let o = ksim(&["trace", &k, "--html", p]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("warning: --html"), "{}", text(&o));
    assert!(stdout(&o).contains("steps"), "{}", text(&o));
    assert!(!page.exists());
}

// #24 (and #10): the timeline has a size cap; the verdict is not lost.
#[test]
fn a_long_timeline_is_refused_and_the_race_kept() {
    let dir = tmp("limits-timeline");
    // About 60,000 K-STEPs before the race.
    let k = write(&dir, "late.ksim", &late_race(15_000, 1));
    let svg = dir.join("t.svg");
    let o = ksim(&[
        "explore",
        "--random",
        "1",
        "--no-reports",
        &k,
        "--timeline",
        svg.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("warning: --timeline"), "{}", text(&o));
    assert!(!stdout(&o).is_empty());
    assert!(!svg.exists());
}

// #23: the page is bounded by what it would hold, refused before it is built.
#[test]
fn a_long_trace_page_is_refused_early() {
    let dir = tmp("limits-page-long");
    let k = write(
        &dir,
        "loop.ksim",
        "kernel loop(global int a[1]) launch(groups = 1, local_size = 1)\n{\n    int i = 0;\n    \
         while (i < 20000) {\n        i = i + 1;\n    }\n    a[0] = i;\n}\n",
    );
    let page = dir.join("p.html");
    let o = ksim(&["trace", &k, "--html", page.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(text(&o).contains("warning: --html"), "{}", text(&o));
    assert!(!page.exists());
}

// #30: kernel text cannot end or comment out the page's data block.
#[test]
fn kernel_text_is_escaped_in_the_page_data() {
    let dir = tmp("limits-page-escape");
    let k = write(
        &dir,
        "x.ksim",
        "// <!-- <script> </script>\nkernel x(global int a[2]) launch(groups = 1, local_size = 2)\n{\n    a[tid] = tid;\n}\n",
    );
    let page = dir.join("p.html");
    let o = ksim(&["trace", &k, "--html", page.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let html = std::fs::read_to_string(&page).unwrap();
    let open = r#"<script id="ksim-data" type="application/json">"#;
    let start = html.find(open).expect("data block") + open.len();
    let len = html[start..]
        .find("</script>")
        .expect("end of the data block");
    let data = &html[start..start + len];
    for bad in ["<!--", "<script", "</script"] {
        assert!(!data.contains(bad), "{bad} in the data block");
    }
    let v: serde_json::Value = serde_json::from_str(data).expect("the data block is JSON");
    assert!(v.to_string().contains("// <!-- <script> </script>"));
}

// #15: Rust's format width is below 65,536: names and cells beyond it do not panic.
#[test]
fn very_long_array_names_do_not_panic() {
    let dir = tmp("limits-longname");
    let name = format!("v{}", "x".repeat(70_000));
    let k = write(
        &dir,
        "long.ksim",
        &format!(
            "kernel longname(global int {name}[2]) launch(groups = 1, local_size = 2)\n{{\n    \
             {name}[tid] = tid;\n    barrier();\n}}\n"
        ),
    );
    for args in [
        vec!["run", &k],
        vec!["trace", &k],
        vec!["trace", &k, "--snapshots"],
        vec!["step", &k],
    ] {
        let o = ksim(&args);
        no_panic(&o, &args.join(" "));
        assert_eq!(o.status.code(), Some(0), "{}: {}", args[0], text(&o));
        assert!(stdout(&o).contains(&name), "{}", args.join(" "));
    }
}

/// A `.cl` kernel writing its 3-D global id, and a `.sim` file launching it.
fn sim_files(dir: &Path, ndrange: &str, wgsize: &str, buffer: &str) -> String {
    write(
        dir,
        "k.cl",
        "__kernel void k(__global int *out) {\n    size_t g = get_global_id(0) + get_global_size(0) \
         * (get_global_id(1) + get_global_size(1) * get_global_id(2));\n    out[g] = (int)g;\n}\n",
    );
    write(
        dir,
        "k.sim",
        &format!("k.cl\nk\n{ndrange}\n{wgsize}\n{buffer}\n"),
    )
}

// #17: a `.sim` buffer is checked against the launch memory limit before it is allocated.
#[test]
fn a_huge_sim_buffer_is_refused_before_allocation() {
    let dir = tmp("limits-sim-huge");
    let sim = sim_files(&dir, "8 1 1", "4 1 1", "<size=17179869184 fill=0 dump>");
    let o = ksim(&["run", &sim]);
    no_panic(&o, "run");
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("more than ksim's limit of 2.0 GiB"),
        "{}",
        text(&o)
    );
}

// #29: `8 2 2` with a work-group of `4 1 1` is a 3-D launch, and runs.
#[test]
fn a_sim_ndrange_in_three_dimensions_with_trailing_ones_runs() {
    let dir = tmp("limits-sim-3d");
    let sim = sim_files(&dir, "8 2 2", "4 1 1", "<size=128 fill=0 dump>");
    let o = ksim(&["run", &sim]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(stdout(&o).contains("31"), "{}", text(&o));
    assert!(!text(&o).contains("--global"), "{}", text(&o));
}

// #21: `step` refuses a launch too large to print at every command.
#[test]
fn step_refuses_a_launch_too_large_to_show() {
    let o = ksim_with_input(
        &[
            "step",
            "examples/kogge_stone.ksim",
            "-D",
            "n=65536",
            "--input",
            "in=iota",
        ],
        b"quit\n",
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(o.stdout.len() < 10_000, "{} bytes printed", o.stdout.len());
    assert!(
        text(&o).contains("too large for `ksim step`"),
        "{}",
        text(&o)
    );
}

// #21: a command line is read with a length bound, and not echoed whole.
#[test]
fn step_bounds_the_lines_it_reads() {
    let mut input = vec![b'x'; 200_000];
    input.extend(b"\nstate\nquit\n");
    let o = ksim_with_input(
        &[
            "step",
            "examples/kogge_stone_racy.ksim",
            "-D",
            "n=4",
            "--input",
            "in=iota",
        ],
        &input,
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(o.stdout.len() < 20_000, "{} bytes printed", o.stdout.len());
    assert!(text(&o).contains("too long"), "{}", text(&o));
    assert!(stdout(&o).contains("> state"), "the session goes on");
}

// #31: a line of invalid UTF-8 is an error for that line; the script goes on.
#[test]
fn step_reports_invalid_utf8_and_goes_on() {
    let o = ksim_with_input(
        &[
            "step",
            "examples/kogge_stone_racy.ksim",
            "-D",
            "n=4",
            "--input",
            "in=iota",
        ],
        b"t0\n\xff\nt1\nstate\n",
    );
    assert!(text(&o).contains("not valid UTF-8"), "{}", text(&o));
    assert!(stdout(&o).contains("> t1"), "{}", text(&o));
    assert!(stdout(&o).contains("> state"), "{}", text(&o));
}

// #32: the threads of a launch are named as an inclusive range.
#[test]
fn no_such_thread_names_the_last_thread() {
    let o = ksim_with_input(
        &[
            "step",
            "examples/kogge_stone_racy.ksim",
            "-D",
            "n=4",
            "--input",
            "in=iota",
        ],
        b"t99\n",
    );
    assert!(
        stdout(&o).contains("there is no thread 99: the launch has threads 0 to 3"),
        "{}",
        text(&o)
    );
    let o = ksim(&[
        "trace",
        "examples/kogge_stone_racy.ksim",
        "-D",
        "n=4",
        "--input",
        "in=iota",
        "--thread",
        "99",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).contains("--thread 99: the launch has threads 0 to 3"),
        "{}",
        text(&o)
    );
}

// #22: `circuit` refuses a launch too large to derive and draw.
#[test]
fn circuit_refuses_a_large_launch() {
    let o = ksim(&["circuit", "examples/kogge_stone.ksim", "-D", "n=2048"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("at most 1024"), "{}", text(&o));
    let o = ksim(&["circuit", "examples/kogge_stone.ksim", "-D", "n=8"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}

// #25: more workers than the machine runs at once are capped, with a note.
#[test]
fn jobs_beyond_the_cores_are_capped() {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let jobs = (cores + 1).to_string();
    let o = ksim(&[
        "races",
        "--jobs",
        &jobs,
        "--no-reports",
        "examples/kogge_stone.ksim",
        "-D",
        "n=8",
        "--input",
        "in=iota",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let note = format!("using {cores}");
    assert!(text(&o).contains(&note), "{}", text(&o));
}
