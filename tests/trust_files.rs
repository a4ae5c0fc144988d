//! Issue 25, item 3: every file ksim writes can be shared and goes where the user pointed,
//! and nothing the user wrote is lost (findings #9, #11, #12, #13, #16, #18, #32).

mod common;

use common::{ksim, ksim_in, text, tmp};
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::Path;
use std::process::{Command, Output, Stdio};

const HEADER: &str = "kernel,device,param,size,groups,local_size,launches,monoid,input,\
harness,check,repeat,kernel_median_ns,kernel_mean_ns,kernel_min_ns,kernel_max_ns,\
kernel_q1_ns,kernel_q3_ns,total_median_ns,total_mean_ns,total_min_ns,total_max_ns,\
total_q1_ns,total_q3_ns,sim_threads,sim_steps,sim_intervals,sim_warp_size,\
sim_warp_instructions,sim_lane_steps,sim_divergent_branches,kernel_samples_ns,\
total_samples_ns";

/// A CSV row as `gpu bench` writes it: kernel `k`, size `n`, `steps` simulated, every
/// kernel-time statistic `t` ns.
fn row(k: &str, n: u64, steps: u64, t: &str) -> String {
    format!(
        "{k},dev,n,{n},1,{n},1,int-add,in=random:1,,ok,1,{t},{t},{t},{t},{t},{t},\
         900,900,900,900,900,900,{n},{steps},1,,,,,5,900"
    )
}

fn csv(dir: &Path, name: &str, rows: &[String]) -> String {
    let p = dir.join(name);
    std::fs::write(&p, format!("{HEADER}\n{}\n", rows.join("\n"))).unwrap();
    p.display().to_string()
}

fn good_csv(dir: &Path) -> String {
    let rows: Vec<String> = (1..=3)
        .map(|e| row("k", 1 << e, 10 << e, &format!("{}", 100 << e)))
        .collect();
    csv(dir, "good.csv", &rows)
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o7777
}

/// `ksim ARGS` under `umask`, in `dir`.
fn ksim_umask(dir: &Path, umask: &str, args: &[&str]) -> Output {
    Command::new("sh")
        .arg("-c")
        .arg(format!("umask {umask}; exec \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_ksim"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

#[test]
fn new_outputs_get_the_mode_the_umask_gives() {
    let d = tmp("files-umask");
    let c = good_csv(&d);
    for (umask, want) in [("022", 0o644), ("027", 0o640)] {
        let out = format!("o{umask}.svg");
        let o = ksim_umask(&d, umask, &["plot", &c, "--plot", &out]);
        assert!(o.status.success(), "{}", text(&o));
        assert_eq!(mode(&d.join(&out)), want, "umask {umask}");
    }
}

#[test]
fn a_replaced_output_keeps_its_mode() {
    let d = tmp("files-keepmode");
    let c = good_csv(&d);
    let out = d.join("o.png");
    std::fs::write(&out, "old").unwrap();
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o604)).unwrap();
    let o = ksim(&["plot", &c, "--plot", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(mode(&out), 0o604);
    assert!(std::fs::read(&out).unwrap().starts_with(b"\x89PNG"));
}

#[test]
fn a_symlinked_output_writes_its_target_and_keeps_the_link() {
    let d = tmp("files-symlink");
    let c = good_csv(&d);
    std::fs::write(d.join("target.svg"), "").unwrap();
    std::os::unix::fs::symlink("target.svg", d.join("link.svg")).unwrap();
    let o = ksim_in(&d, &["plot", &c, "--plot", "link.svg"]);
    assert!(o.status.success(), "{}", text(&o));
    let link = std::fs::symlink_metadata(d.join("link.svg")).unwrap();
    assert!(link.file_type().is_symlink());
    let svg = std::fs::read_to_string(d.join("target.svg")).unwrap();
    assert!(svg.contains("<svg"), "target not written");
}

#[test]
fn a_fifo_output_is_written_in_place() {
    let d = tmp("files-fifo");
    let c = good_csv(&d);
    let fifo = d.join("fifo.svg");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    let o = ksim(&["plot", &c, "--plot", fifo.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    // Checked before joining: a replaced FIFO would leave the reader waiting.
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
    assert!(reader.join().unwrap().contains("<svg"));
}

/// `ksim step K` with `script` on standard input.
fn step(dir: &Path, script: &str) -> Output {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_ksim"))
        .args(["step", "k.ksim", "--local-size", "2"])
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(script.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

const KERNEL: &str = "kernel k(global int A[2]) {\n  A[tid] = 1;\n}\n";

#[test]
fn step_save_writes_a_device_in_place_and_creates_no_directory() {
    let d = tmp("files-step");
    std::fs::write(d.join("k.ksim"), KERNEL).unwrap();
    let o = step(
        &d,
        "save /dev/null\nsave nosuch/dir/s.json\nsave s.json\nquit\n",
    );
    let out = text(&o);
    assert!(
        std::fs::metadata("/dev/null")
            .unwrap()
            .file_type()
            .is_char_device(),
        "/dev/null was replaced"
    );
    assert!(out.contains("saved to /dev/null"), "{out}");
    assert!(out.contains("cannot write nosuch/dir/s.json"), "{out}");
    assert!(!d.join("nosuch").exists(), "a directory was created");
    assert!(d.join("s.json").is_file(), "{out}");
}

#[test]
fn a_directory_as_output_is_a_clear_error() {
    let d = tmp("files-dir");
    let c = good_csv(&d);
    std::fs::create_dir(d.join("dir.svg")).unwrap();
    let o = ksim_in(&d, &["plot", &c, "--plot", "dir.svg"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("is a directory"), "{}", text(&o));
    let o = ksim_in(&d, &["plot", &c, "--plot", "nosuch/o.svg"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(!d.join("nosuch").exists(), "a directory was created");
}

fn racy_kernel(dir: &Path, name: &str) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::copy(
        common::root().join("examples/blelloch_missing_barrier.ksim"),
        &p,
    )
    .unwrap();
    p
}

#[test]
fn fix_write_keeps_the_mode_of_the_file_and_its_original() {
    let d = tmp("fix-mode");
    let k = racy_kernel(&d, "k.ksim");
    std::fs::set_permissions(&k, std::fs::Permissions::from_mode(0o664)).unwrap();
    let o = ksim_umask(&d, "022", &["fix", "k.ksim", "-D", "n=8", "--write"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(mode(&k), 0o664);
    assert_eq!(mode(&d.join("k.ksim.orig")), 0o664);
}

#[test]
fn fix_write_patches_a_links_target_and_keeps_the_link() {
    let d = tmp("fix-link");
    let real = racy_kernel(&d, "real.ksim");
    let before = std::fs::read_to_string(&real).unwrap();
    std::os::unix::fs::symlink("real.ksim", d.join("link.ksim")).unwrap();
    let o = ksim_in(&d, &["fix", "link.ksim", "-D", "n=8", "--write"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(std::fs::symlink_metadata(d.join("link.ksim"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert_ne!(std::fs::read_to_string(&real).unwrap(), before);
    assert_eq!(
        std::fs::read_to_string(d.join("real.ksim.orig")).unwrap(),
        before
    );
    assert!(text(&o).contains("real.ksim.orig"), "{}", text(&o));
}

#[test]
fn fix_write_never_overwrites_an_earlier_original() {
    let d = tmp("fix-orig");
    let k = racy_kernel(&d, "k.ksim");
    let first = std::fs::read_to_string(&k).unwrap();
    let o = ksim_in(&d, &["fix", "k.ksim", "-D", "n=8", "--write"]);
    assert!(o.status.success(), "{}", text(&o));
    // The user edits the file back into a racy one, with a comment, and fixes it again.
    let second = format!("// edited\n{first}");
    std::fs::write(&k, &second).unwrap();
    let o = ksim_in(&d, &["fix", "k.ksim", "-D", "n=8", "--write"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("k.ksim.orig.1"), "{}", text(&o));
    assert_eq!(
        std::fs::read_to_string(d.join("k.ksim.orig")).unwrap(),
        first
    );
    assert_eq!(
        std::fs::read_to_string(d.join("k.ksim.orig.1")).unwrap(),
        second
    );
}

#[test]
fn fix_write_refuses_a_read_only_file() {
    let d = tmp("fix-ro");
    let k = racy_kernel(&d, "ro.ksim");
    let before = std::fs::read_to_string(&k).unwrap();
    std::fs::set_permissions(&k, std::fs::Permissions::from_mode(0o444)).unwrap();
    let o = ksim_in(&d, &["fix", "ro.ksim", "-D", "n=8", "--write"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("read-only"), "{}", text(&o));
    assert_eq!(std::fs::read_to_string(&k).unwrap(), before);
    assert_eq!(mode(&k), 0o444);
    assert!(!d.join("ro.ksim.orig").exists());
}

#[test]
fn fix_and_bench_refuse_a_sim_file() {
    let d = tmp("files-sim");
    std::fs::write(d.join("x.sim"), "k.cl\nk\n").unwrap();
    for args in [
        &["fix", "x.sim"][..],
        &["gpu", "bench", "x.sim", "-D", "n=2..4", "--csv", "o.csv"],
    ] {
        let o = ksim_in(&d, args);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        assert!(text(&o).contains(".sim file"), "{args:?}: {}", text(&o));
        assert!(!text(&o).contains("top level"), "{}", text(&o));
    }
}

#[test]
fn bench_bounds_its_run_counts() {
    let k = "examples/blelloch_tree1d.ksim";
    for (flag, value) in [("--warmup", "18446744073709551615"), ("--repeat", "0")] {
        let o = ksim(&[
            "gpu",
            "bench",
            k,
            "-D",
            "n=2..4",
            flag,
            value,
            "--csv",
            "/dev/null",
        ]);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        assert!(text(&o).contains("number of runs"), "{}", text(&o));
    }
}

#[test]
fn bench_refuses_an_input_array_the_kernel_lacks() {
    if gpu::device_or_skip("bench --in nosuch").is_none() {
        return;
    }
    let d = tmp("bench-in");
    let k = common::root().join("examples/blelloch_tree1d.ksim");
    let k = k.to_str().unwrap();
    let o = ksim_in(
        &d,
        &[
            "gpu", "bench", k, "-D", "n=2..4", "--in", "nosuch", "--csv", "o.csv",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("no array `nosuch`"), "{}", text(&o));
    assert!(!d.join("o.csv").exists());
}

#[test]
fn sim_vs_real_has_no_fit_through_points_of_equal_cost() {
    let d = tmp("plot-ident");
    let same: Vec<String> = (0..100).map(|_| row("k", 8, 17, "9194")).collect();
    let c = csv(&d, "ident.csv", &same);
    let o = ksim_in(&d, &["plot", &c, "--sim-vs-real", "--plot", "o.svg"]);
    assert!(
        text(&o).contains("no fit: all 100 points have the same simulated cost (17 steps)"),
        "{}",
        text(&o)
    );
    assert!(!text(&o).contains("R²"), "{}", text(&o));
}

#[test]
fn plot_refuses_non_finite_times_with_their_line() {
    let d = tmp("plot-inf");
    for bad in ["inf", "NaN", "1e300"] {
        let rows = [row("k", 2, 10, "100"), row("k", 4, 20, bad)];
        let c = csv(&d, "bad.csv", &rows);
        let o = ksim_in(&d, &["plot", &c, "--plot", "o.svg"]);
        assert_eq!(o.status.code(), Some(2), "{bad}: {}", text(&o));
        assert!(
            text(&o).contains("line 3: kernel_median_ns"),
            "{}",
            text(&o)
        );
    }
}

#[test]
fn plot_draws_times_spanning_hundreds_of_decades() {
    // 1e-300 ns beside 1e19 ns made the log axis' ticks endless (a hang).
    let d = tmp("plot-extreme");
    let rows = [row("k", 2, 10, "1e-300"), row("k", 4, 20, "1e19")];
    let c = csv(&d, "extreme.csv", &rows);
    for out in ["o.svg", "o.png"] {
        let o = Command::new("timeout")
            .args(["60", env!("CARGO_BIN_EXE_ksim"), "plot", &c, "--plot", out])
            .current_dir(&d)
            .output()
            .unwrap();
        assert!(o.status.success(), "{out}: {}", text(&o));
        let o = Command::new("timeout")
            .args([
                "60",
                env!("CARGO_BIN_EXE_ksim"),
                "plot",
                &c,
                "--sim-vs-real",
                "--plot",
                out,
            ])
            .current_dir(&d)
            .output()
            .unwrap();
        assert!(o.status.success(), "{out}: {}", text(&o));
    }
}

#[test]
fn plot_refuses_labels_for_no_kernel() {
    let d = tmp("plot-label");
    let c = good_csv(&d);
    for label in ["nosuch=X", "=X", "k="] {
        let o = ksim_in(&d, &["plot", &c, "--plot", "o.svg", "--label", label]);
        assert_eq!(o.status.code(), Some(2), "{label}: {}", text(&o));
        assert!(text(&o).contains("--label"), "{}", text(&o));
    }
    let o = ksim_in(&d, &["plot", &c, "--plot", "o.svg", "--label", "k=Mine"]);
    assert!(o.status.success(), "{}", text(&o));
}
