//! Support shared by the whole-program property tests (`differential_gen.rs`, `fuzz.rs`,
//! `resources.rs`): running the `ksim` binary with a time limit, case counts from the
//! environment, and the random kernel generator ([`gen`]).
//!
//! Each test crate includes this module with `mod support;` and uses a part of it, so the
//! parts another crate uses are dead code in each one: hence the `allow` below.
#![allow(dead_code)]

pub mod gen;

use std::ffi::OsStr;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What a finished (or killed) child process left.
#[derive(Debug)]
pub struct Exit {
    /// The exit code; `None` when a signal ended it (or it was killed on time-out).
    pub code: Option<i32>,
    /// The signal that ended it, if any.
    pub signal: Option<i32>,
    pub timed_out: bool,
    /// The head of each stream (the rest is read and counted).
    pub stdout: String,
    pub stderr: String,
    /// Total bytes written to stdout.
    pub stdout_len: u64,
    /// Peak resident memory of the process, in KiB, as `wait4` reports it. This includes
    /// the test process's own peak at the time of the spawn (the child starts in its
    /// address space), so it means something only above that: keep the test small.
    pub max_rss_kib: u64,
    pub elapsed: Duration,
}

/// Bytes of each output stream kept for assertions (JSON documents of explorations).
pub const KEEP: usize = 64 << 20;
/// Bytes kept where only exit codes and messages matter (a small test process keeps peak
/// memory measurements of its children meaningful; see [`Exit::max_rss_kib`]).
pub const KEEP_SMALL: usize = 1 << 20;

impl Exit {
    /// Exit code, signal or time-out, and the head of both streams: for failure messages.
    pub fn describe(&self) -> String {
        let mut how = if self.timed_out {
            format!("TIMED OUT after {:.1} s", self.elapsed.as_secs_f64())
        } else if let Some(s) = self.signal {
            format!("killed by signal {s}")
        } else {
            format!("exit code {:?}", self.code)
        };
        how.push_str(&format!(" (peak memory {} MiB)", self.max_rss_kib >> 10));
        let head = |s: &str| s.chars().take(3000).collect::<String>();
        format!(
            "{how}\n--- stdout ({} bytes) ---\n{}\n--- stderr ---\n{}",
            self.stdout_len,
            head(&self.stdout),
            head(&self.stderr)
        )
    }

    /// Ended by itself with exit code 0, 1 or 2: no panic (101), abort (134), signal or hang.
    pub fn is_orderly(&self) -> bool {
        !self.timed_out && matches!(self.code, Some(0..=2))
    }

    pub fn text(&self) -> String {
        format!("{}{}", self.stdout, self.stderr)
    }
}

/// The `ksim` binary under test.
pub fn ksim_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_ksim"))
}

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Reads a stream to its end, keeping the first `keep` bytes; returns them and the total.
fn drain(
    mut r: impl Read + Send + 'static,
    keep: usize,
) -> std::thread::JoinHandle<(Vec<u8>, u64)> {
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        let mut total = 0u64;
        let mut buf = [0u8; 65536];
        loop {
            match r.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(k) => {
                    total += k as u64;
                    let room = keep.saturating_sub(kept.len());
                    kept.extend_from_slice(&buf[..k.min(room)]);
                }
            }
        }
        (kept, total)
    })
}

/// Waits for a child with `wait4`, which also gives its peak memory (resident set).
/// Returns the raw wait status and the peak in KiB.
fn wait_with_rusage(pid: libc::pid_t) -> (libc::c_int, u64) {
    loop {
        let mut status: libc::c_int = 0;
        // SAFETY: plain system call on our own child; `ru` is fully written by the kernel.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
        if r == pid {
            return (status, ru.ru_maxrss.max(0) as u64);
        }
        if r == -1 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
            continue;
        }
        panic!("wait4({pid}): {}", std::io::Error::last_os_error());
    }
}

/// Runs a command in `dir` with a time limit (killed when it runs out), stdin closed,
/// keeping the first `keep` bytes of each output stream.
pub fn run_cmd(mut cmd: Command, dir: &Path, timeout: Duration, keep: usize) -> Exit {
    cmd.current_dir(dir)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let start = Instant::now();
    #[allow(clippy::zombie_processes)] // reaped by `wait_with_rusage` below
    let mut child = cmd.spawn().expect("the command starts");
    let out = drain(child.stdout.take().expect("piped"), keep);
    let err = drain(child.stderr.take().expect("piped"), keep);
    // The child is reaped by this thread (never by `Child::wait`), so that its resource
    // usage can be read.
    let pid = child.id() as libc::pid_t;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(wait_with_rusage(pid));
    });
    let ((status, max_rss_kib), timed_out) = match rx.recv_timeout(timeout) {
        Ok(r) => (r, false),
        Err(_) => {
            // Not reaped yet (the waiter holds the only wait), so the pid is still ours.
            let _ = child.kill();
            (rx.recv().expect("waiter"), true)
        }
    };
    let elapsed = start.elapsed();
    let (stdout, stdout_len) = out.join().expect("reader");
    let (stderr, _) = err.join().expect("reader");
    let (code, signal) = if libc::WIFEXITED(status) {
        (Some(libc::WEXITSTATUS(status)), None)
    } else if libc::WIFSIGNALED(status) {
        (None, Some(libc::WTERMSIG(status)))
    } else {
        (None, None)
    };
    Exit {
        code,
        signal,
        timed_out,
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
        stdout_len,
        max_rss_kib,
        elapsed,
    }
}

/// `ksim ARGS` in `dir`, with a time limit.
pub fn ksim_in<S: AsRef<OsStr>>(dir: &Path, args: &[S], timeout: Duration) -> Exit {
    let mut cmd = Command::new(ksim_bin());
    cmd.args(args);
    run_cmd(cmd, dir, timeout, KEEP)
}

/// `ksim ARGS` in `dir` under `ulimit -v KIB` (address space, as a user's shell limit),
/// with a time limit.
pub fn ksim_limited<S: AsRef<OsStr>>(dir: &Path, kib: u64, args: &[S], timeout: Duration) -> Exit {
    let mut cmd = Command::new("bash");
    cmd.arg("-c")
        .arg(format!("ulimit -v {kib} && exec \"$0\" \"$@\""))
        .arg(ksim_bin())
        .args(args);
    run_cmd(cmd, dir, timeout, KEEP_SMALL)
}

/// A case count: the environment variable `var` if set (and a number), else `default`.
pub fn cases(var: &str, default: u32) -> u32 {
    match std::env::var(var) {
        Ok(v) => v
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{var}={v:?} is not a number of cases")),
        Err(_) => default,
    }
}

/// Whether an OpenCL platform with a device is present (`ksim gpu devices` succeeds).
/// Without one, OpenCL checks are skipped, unless `KSIM_REQUIRE_OPENCL=1`, which makes a
/// missing platform a failure.
pub fn opencl_available(test: &str) -> bool {
    let e = ksim_in(&root(), &["gpu", "devices"], Duration::from_secs(60));
    if e.code == Some(0) {
        return true;
    }
    if std::env::var("KSIM_REQUIRE_OPENCL").is_ok_and(|v| v == "1") {
        panic!(
            "{test}: KSIM_REQUIRE_OPENCL=1 but no OpenCL device: {}",
            e.describe()
        );
    }
    eprintln!(
        "{test}: skipping the OpenCL part: no OpenCL device ({})",
        e.text().trim()
    );
    false
}

/// Runs a property over `cases` inputs from `strategy` with proptest (shrinking included),
/// from the seed in `KSIM_GEN_SEED` if set, else a fresh one, printed so that a failure
/// can be replayed. On failure, panics with the reason and `show` of the smallest failing
/// input found.
/// The seed of the generated cases when `KSIM_GEN_SEED` is not set.
pub const DEFAULT_SEED: u64 = 20261126;

pub fn check_property<S, F, D>(name: &str, strategy: S, cases: u32, test: F, show: D)
where
    S: proptest::strategy::Strategy,
    F: Fn(S::Value) -> Result<(), proptest::test_runner::TestCaseError>,
    D: Fn(&S::Value) -> String,
{
    use proptest::test_runner::{Config, RngSeed, TestError, TestRunner};
    let seed = match std::env::var("KSIM_GEN_SEED") {
        Ok(v) => v.trim().parse().expect("KSIM_GEN_SEED is a number"),
        // A fixed default keeps CI deterministic; set KSIM_GEN_SEED for other kernels.
        Err(_) => DEFAULT_SEED,
    };
    eprintln!("{name}: {cases} cases, seed {seed} (replay with KSIM_GEN_SEED={seed})");
    let config = Config {
        cases,
        rng_seed: RngSeed::Fixed(seed),
        failure_persistence: None,
        // A failing case is shrunk for at most two minutes.
        max_shrink_time: 120_000,
        max_shrink_iters: 2000,
        ..Config::default()
    };
    let mut runner = TestRunner::new(config);
    match runner.run(&strategy, test) {
        Ok(()) => {}
        Err(TestError::Fail(reason, value)) => panic!(
            "{name} failed (seed {seed}): {reason}\nsmallest failing input:\n{}",
            show(&value)
        ),
        Err(TestError::Abort(reason)) => panic!("{name} aborted (seed {seed}): {reason}"),
    }
}
