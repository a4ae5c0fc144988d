//! Resource test: every command, at the largest sizes and most extreme options it accepts,
//! under `ulimit -v 4000000` (4 GB of address space, as a user's shell may set), either
//! finishes or refuses with exit code 2. Never exit 101 (panic), 134 (abort, e.g. an
//! allocation failure or a stack overflow) or 139 (segfault), and never a hang: each run
//! is killed after [`LIMIT`] and that is a failure. Where only a refusal is right (an
//! array size that overflows, a file without end) the case asks for exit 2.
//!
//! Each test collects every failing case before failing, so that one run lists them all.
//! The whole file takes about a minute when every case is refused or bounded as it
//! should be.

mod support;

use std::path::{Path, PathBuf};
use std::time::Duration;
use support::{ksim_limited, root, Exit};

/// The address-space limit of every run, in KiB.
const MEM_KIB: u64 = 4_000_000;
/// Killed after this long: a hang.
const LIMIT: Duration = Duration::from_secs(60);
/// 2^28, the documented limit on elements and threads.
const MAX_ELEMENTS: &str = "268435456";

#[derive(Clone, Copy, PartialEq)]
enum Expect {
    /// Finishes (0 or 1) or refuses (2), in time.
    Orderly,
    /// Refuses with exit code 2, in time.
    Refused,
}

/// One command line and what it may do.
struct Case {
    args: Vec<String>,
    expect: Expect,
    /// Most bytes of standard output allowed.
    max_stdout: Option<u64>,
    /// Most peak resident memory allowed, in MiB (where the point is a bound far below
    /// the address-space limit: a failed allocation under the limit can be a graceful
    /// error, so the limit alone would not tell a bounded run from an unbounded one).
    max_rss_mib: Option<u64>,
}

fn case(args: &[&str], expect: Expect) -> Case {
    Case {
        args: args.iter().map(|s| s.to_string()).collect(),
        expect,
        max_stdout: None,
        max_rss_mib: None,
    }
}

impl Case {
    fn max_stdout(mut self, bytes: u64) -> Case {
        self.max_stdout = Some(bytes);
        self
    }

    fn max_rss_mib(mut self, mib: u64) -> Case {
        self.max_rss_mib = Some(mib);
        self
    }
}

fn example(name: &str) -> String {
    root().join("examples").join(name).display().to_string()
}

/// Runs every case in `dir`; fails with the list of every case that misbehaved.
fn run_all(test: &str, dir: &Path, cases: Vec<Case>) {
    let mut failures = Vec::new();
    for c in &cases {
        let e: Exit = ksim_limited(dir, MEM_KIB, &c.args, LIMIT);
        let cmd = format!(
            "(ulimit -v {MEM_KIB}; ksim {})",
            c.args
                .iter()
                .map(|a| if a.contains(' ') {
                    format!("'{a}'")
                } else {
                    a.clone()
                })
                .collect::<Vec<_>>()
                .join(" ")
        );
        eprintln!(
            "{test}: {cmd}: {} in {:.1} s, peak {} MiB",
            if e.timed_out {
                "TIMED OUT".to_string()
            } else if let Some(s) = e.signal {
                format!("signal {s}")
            } else {
                format!("exit {:?}", e.code)
            },
            e.elapsed.as_secs_f64(),
            e.max_rss_kib >> 10
        );
        let ok = match c.expect {
            Expect::Orderly => e.is_orderly(),
            Expect::Refused => !e.timed_out && e.code == Some(2),
        };
        if !ok {
            let want = match c.expect {
                Expect::Orderly => "exit 0, 1 or 2 in time",
                Expect::Refused => "exit 2 (refused) in time",
            };
            failures.push(format!("{cmd}\n  wanted {want}; got {}", e.describe()));
        } else if let Some(max) = c.max_stdout.filter(|&m| e.stdout_len > m) {
            failures.push(format!(
                "{cmd}\n  printed {} bytes, more than {max}",
                e.stdout_len
            ));
        } else if let Some(max) = c.max_rss_mib.filter(|&m| e.max_rss_kib >> 10 > m) {
            failures.push(format!(
                "{cmd}\n  used {} MiB of memory at its peak, more than {max} MiB",
                e.max_rss_kib >> 10
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{test}: {} of {} cases failed:\n\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n\n")
    );
}

/// A temporary directory holding the kernels the cases use.
fn kernels(files: &[(&str, String)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).expect("write kernel");
    }
    dir
}

/// A thread that never terminates (thread 0 of one group of one).
const SPIN: &str = "kernel spin(global int a[1]) launch(local_size = 1)
{
    int i = 0;
    while (i >= 0) {
        i = i + 1;
        if (i > 1000) i = 0;
    }
}
";

/// Sizes at and over the limits: 2^28 threads or elements (1D, 2D, derived sizes), sizes
/// whose arithmetic overflows 32 bits, geometry over the limit. Issue 13, items 3 and 9.
#[test]
fn huge_sizes_are_refused_or_run() {
    let dir = kernels(&[
        (
            "sq.ksim",
            "kernel sq(local int a[n * n]) launch(local_size = 1) { a[0] = 1; }\n".into(),
        ),
        (
            "cube.ksim",
            "kernel cube(local int a[n * n * n]) launch(local_size = 1) { a[0] = 1; }\n".into(),
        ),
        (
            "one.ksim",
            "kernel one(local int a[n]) launch(local_size = 1) { a[0] = 1; }\n".into(),
        ),
        (
            "four.ksim",
            "kernel four(local int a[4]) { a[0] = 1; }\n".into(),
        ),
    ]);
    let ks = example("kogge_stone.ksim");
    let t2d = example("blelloch_tree2d.ksim");
    let n = format!("n={MAX_ELEMENTS}");
    let mut cases = Vec::new();
    // 2^28 threads, every command that runs a launch.
    for cmd in [
        &["run"][..],
        &["trace"],
        &["run", "--engine", "fast"],
        &["races"],
        &["explore", "--exhaustive"],
        &["explore", "--random", "2"],
        &["verify-scan"],
        &["gpu", "emit"],
    ] {
        let mut a: Vec<&str> = cmd.to_vec();
        a.extend([ks.as_str(), "-D", &n]);
        cases.push(case(&a, Expect::Orderly));
    }
    // One array of 2^28 elements, one thread.
    cases.push(case(&["run", "one.ksim", "-D", &n], Expect::Orderly));
    cases.push(case(&["races", "one.ksim", "-D", &n], Expect::Orderly));
    // A 2D array within the limit: (log2(n) + 1) * n = 24 * 2^23 elements, on the fast
    // executor (the reference semantics would take hours for 2^23 threads, memory
    // permitting) and the emitter.
    cases.push(case(&["races", &t2d, "-D", "n=8388608"], Expect::Orderly));
    cases.push(case(
        &["gpu", "emit", &t2d, "-D", "n=8388608"],
        Expect::Orderly,
    ));
    // Size arithmetic that overflows 32 bits is an error (item 3).
    cases.push(case(&["run", "sq.ksim", "-D", "n=65536"], Expect::Refused));
    cases.push(case(&["check", "sq.ksim"], Expect::Orderly));
    cases.push(case(&["run", "cube.ksim", "-D", "n=1626"], Expect::Refused));
    cases.push(case(
        &["gpu", "emit", "sq.ksim", "-D", "n=65536"],
        Expect::Refused,
    ));
    // Exactly the limit through a product.
    cases.push(case(&["run", "sq.ksim", "-D", "n=16384"], Expect::Orderly));
    // Values beyond 32 bits, geometry beyond the limit.
    cases.push(case(&["run", &ks, "-D", "n=4294967296"], Expect::Refused));
    cases.push(case(
        &[
            "run",
            "four.ksim",
            "--groups",
            MAX_ELEMENTS,
            "--local-size",
            "1",
        ],
        Expect::Orderly,
    ));
    cases.push(case(
        &[
            "run",
            "four.ksim",
            "--groups",
            "1",
            "--local-size",
            "4294967296",
        ],
        Expect::Refused,
    ));
    cases.push(case(
        &[
            "run",
            "four.ksim",
            "--groups",
            "18446744073709551615",
            "--local-size",
            "18446744073709551615",
        ],
        Expect::Refused,
    ));
    run_all("huge_sizes_are_refused_or_run", dir.path(), cases);
}

/// An execution keeps bounded memory, whatever its length: an infinite loop up to a large
/// `--max-steps` is reported as non-termination, not an allocation failure (item 10).
#[test]
fn long_executions_keep_memory_bounded() {
    let dir = kernels(&[("spin.ksim", SPIN.into())]);
    let cases = vec![
        // 6 million steps of exploration (about 800 bytes a step before the fix: 4.8 GB).
        case(
            &[
                "explore",
                "--exhaustive",
                "spin.ksim",
                "--max-steps",
                "6000000",
            ],
            Expect::Orderly,
        )
        .max_rss_mib(1024),
        // 20 million steps of `run` (8 bytes a step before the fix: 160 MB).
        case(
            &["run", "spin.ksim", "--max-steps", "20000000"],
            Expect::Orderly,
        )
        .max_rss_mib(128),
        case(
            &[
                "trace",
                "spin.ksim",
                "--max-steps",
                "300000",
                "--format",
                "json",
            ],
            Expect::Orderly,
        )
        .max_rss_mib(128),
        case(
            &[
                "run",
                "spin.ksim",
                "--engine",
                "fast",
                "--max-steps",
                "100000000",
            ],
            Expect::Orderly,
        )
        .max_rss_mib(128),
    ];
    run_all("long_executions_keep_memory_bounded", dir.path(), cases);
}

/// Extreme option values (item 8): refused, or honoured without panic or allocation
/// failure.
#[test]
fn extreme_options_are_refused_or_honoured() {
    let dir = kernels(&[]);
    let ks = example("kogge_stone.ksim");
    let racy = example("kogge_stone_racy.ksim");
    let umax = u64::MAX.to_string();
    let launch = |pre: &[&str], file: &str, post: &[&str]| {
        let mut a: Vec<String> = pre.iter().map(|s| s.to_string()).collect();
        a.extend([file.to_string(), "-D".into(), "n=8".into()]);
        a.extend(post.iter().map(|s| s.to_string()));
        a
    };
    let mut cases = Vec::new();
    for (pre, file, post) in [
        (
            &["explore", "--pct", "5"][..],
            &racy,
            &["--depth", "4294967295"][..],
        ),
        (&["explore", "--random", "20"], &racy, &["--jobs", "100000"]),
        (
            &["explore", "--pct", "20"],
            &racy,
            &["--depth", "3", "--jobs", "100000"],
        ),
        (&["races"], &ks, &["--jobs", "100000"]),
        (&["run", "--engine", "fast"], &ks, &["--jobs", "100000"]),
        (&["explore", "--exhaustive"], &racy, &["--timeout", "1e20"]),
        (
            &["explore", "--exhaustive"],
            &racy,
            &["--timeout", "1e-300"],
        ),
        (&["verify-scan"], &ks, &["--timeout", "1e20"]),
        (&["run"], &ks, &["--max-steps", umax.as_str()]),
        (&["trace"], &ks, &["--max-steps", umax.as_str()]),
        (&["races"], &ks, &["--max-steps", umax.as_str()]),
        (
            &["explore", "--exhaustive"],
            &racy,
            &["--max-steps", umax.as_str()],
        ),
        (
            &["explore", "--exhaustive"],
            &racy,
            &["--max-executions", umax.as_str()],
        ),
        (
            &["explore", "--exhaustive"],
            &racy,
            &["--max-states", umax.as_str()],
        ),
        (
            &["explore", "--random", umax.as_str()],
            &racy,
            &["--max-executions", "50"],
        ),
        (
            &["explore", "--random", "5"],
            &racy,
            &["--seed", umax.as_str()],
        ),
        (
            &["run", "--schedule", "random", "--seed", umax.as_str()],
            &racy,
            &[],
        ),
    ] {
        let args = launch(pre, file, post);
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        cases.push(case(&refs, Expect::Orderly));
    }
    run_all("extreme_options_are_refused_or_honoured", dir.path(), cases);
}

/// Files are read with a bound (item 11): a kernel, `@FILE` input, report or schedule
/// without end, or far larger than what it describes, is refused.
#[test]
fn unbounded_files_are_refused() {
    let dir = kernels(&[]);
    // 1 GB of zero bytes (sparse: no disk space) for a 4-element array.
    let big: PathBuf = dir.path().join("big.txt");
    std::fs::File::create(&big)
        .and_then(|f| f.set_len(1 << 30))
        .expect("sparse file");
    let ks = example("kogge_stone.ksim");
    let at_big = format!("in=@{}", big.display());
    let cases: Vec<Case> = [
        case(&["check", "/dev/zero"], Expect::Refused),
        case(&["run", "/dev/zero", "-D", "n=4"], Expect::Refused),
        case(
            &["run", &ks, "-D", "n=4", "--input", "in=@/dev/zero"],
            Expect::Refused,
        ),
        case(
            &["run", &ks, "-D", "n=4", "--input", &at_big],
            Expect::Refused,
        ),
        case(
            &["run", &ks, "-D", "n=4", "--schedule", "@/dev/zero"],
            Expect::Refused,
        ),
        case(&["replay", "/dev/zero"], Expect::Refused),
        case(&["plot", "/dev/zero", "--plot", "x.svg"], Expect::Refused),
    ]
    .into_iter()
    // Refused after a bounded read, not after filling memory (under the address-space
    // limit, reading until allocation fails is also an error, exit 2).
    .map(|c| c.max_rss_mib(512))
    .collect();
    run_all("unbounded_files_are_refused", dir.path(), cases);
}

/// Long `else if` chains and deep nesting (item 7): refused by the nesting guard or
/// handled, never a stack overflow; `check --core` and `gpu emit` print output linear in
/// the input (a chain is emitted flat).
#[test]
fn long_chains_and_deep_nesting() {
    const N: usize = 100_000;
    let head =
        "kernel d(global int a[4]) launch(local_size = 1)\n{\n    int x = 1;\n    int y = 0;\n";
    let chain: String = format!(
        "{head}    if (x == 0) y = 0;\n{}    a[0] = y;\n}}\n",
        (1..15_000)
            .map(|i| format!("    else if (x == {i}) y = {i};\n"))
            .collect::<String>()
    );
    let files = [
        ("chain.ksim", chain),
        (
            "parens.ksim",
            format!(
                "{head}    a[0] = {}1{};\n}}\n",
                "(".repeat(N),
                ")".repeat(N)
            ),
        ),
        (
            "unary.ksim",
            format!("{head}    a[0] = {}1;\n}}\n", "- ".repeat(N)),
        ),
        (
            "sum.ksim",
            format!("{head}    a[0] = {};\n}}\n", vec!["x"; N].join(" + ")),
        ),
        (
            "blocks.ksim",
            format!("{head}{}y = 2;{}\n}}\n", "{".repeat(N), "}".repeat(N)),
        ),
        (
            "ifs.ksim",
            format!("{head}{}y = 2;\n}}\n", "if (x) ".repeat(N)),
        ),
        (
            "index.ksim",
            format!("{head}    y = {}0{};\n}}\n", "a[".repeat(N), "]".repeat(N)),
        ),
    ];
    let chain_len = files[0].1.len() as u64;
    let dir = kernels(
        &files
            .iter()
            .map(|(n, t)| (*n, t.clone()))
            .collect::<Vec<_>>(),
    );
    let mut cases = Vec::new();
    for (name, _) in &files {
        cases.push(case(&["check", name], Expect::Orderly));
        cases.push(case(&["run", name], Expect::Orderly));
    }
    for cmd in [&["check", "--core"][..], &["gpu", "emit"]] {
        let mut a = cmd.to_vec();
        a.push("chain.ksim");
        cases.push(case(&a, Expect::Orderly).max_stdout(20 * chain_len + (64 << 10)));
    }
    cases.push(case(
        &["explore", "--exhaustive", "chain.ksim"],
        Expect::Orderly,
    ));
    cases.push(case(&["races", "chain.ksim"], Expect::Orderly));
    run_all("long_chains_and_deep_nesting", dir.path(), cases);
}

/// The device commands at sizes over the limits (item 9), where an OpenCL platform is
/// present (PoCL here); skipped without one unless `KSIM_REQUIRE_OPENCL=1`.
#[test]
fn gpu_sizes_are_refused_or_run() {
    if !support::opencl_available("gpu_sizes_are_refused_or_run") {
        return;
    }
    let dir = kernels(&[]);
    let ks = example("kogge_stone.ksim");
    let n = format!("n={MAX_ELEMENTS}");
    let cases = vec![
        case(
            &["gpu", "compare", "scan:tree1d", "-D", "n=2147483648"],
            Expect::Orderly,
        ),
        case(
            &["gpu", "compare", "scan:tree2d", "-D", "n=2147483648"],
            Expect::Orderly,
        ),
        case(&["gpu", "compare", &ks, "-D", &n], Expect::Orderly),
        case(
            &[
                "gpu",
                "bench",
                &ks,
                "-D",
                "n=268435456",
                "--repeat",
                "1",
                "--csv",
                "b.csv",
            ],
            Expect::Orderly,
        ),
    ];
    run_all("gpu_sizes_are_refused_or_run", dir.path(), cases);
}
