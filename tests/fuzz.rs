//! Fuzz targets on the stable toolchain: proptests of arbitrary and mutated input into every
//! reader of user input. The property is always the same: no panic. In-process targets call
//! the library directly (fast; a panic fails the case); where only the command line holds
//! the code (argument parsing, `--schedule @FILE`, `replay`), the `ksim` binary is run
//! and must exit 0, 1 or 2: never 101 (panic), never a signal (134 abort, 139 segfault),
//! never a hang (killed after [`LIMIT`]). Those runs are under `ulimit -v 4000000`, as a
//! user's shell may set, so that an unchecked size shows as an allocation failure.
//!
//! Targets: the parser and checker (bytes, token soups, mutated kernels), the input-spec
//! parser (`--input NAME=SPEC`) and `-D` values, the race-report reader (`ksim replay`)
//! and the schedule reader (`ksim run --schedule @FILE`).
//!
//! Case counts: `KSIM_FUZZ_CASES` (default 256) for in-process targets, a tenth of it for
//! targets that run the binary; `KSIM_GEN_SEED` replays a run.

mod support;

use interp::launch::parse_input;
use interp::{Launch, LaunchOptions, Monoid};
use lang::core::Ty;
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::select;
use proptest::test_runner::TestCaseError;
use serde_json::Value;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use support::{check_property, gen, ksim_limited, root, Exit};

/// Time limit of one run of the binary (every input here takes milliseconds).
const LIMIT: Duration = Duration::from_secs(30);
/// `ulimit -v` for runs of the binary, in KiB.
const MEM_KIB: u64 = 4_000_000;

fn cases() -> u32 {
    support::cases("KSIM_FUZZ_CASES", 256)
}

fn binary_cases() -> u32 {
    (cases() / 10).max(4)
}

/// Parse, check, and print what was accepted: nothing may panic.
fn front_end(src: &str) {
    if let Ok(ast) = lang::parse::parse(src) {
        let _ = lang::print_kernel(&ast);
        if let Ok(k) = lang::check::check(&ast) {
            let _ = lang::print_core::print_core(&k);
        }
    }
}

/// The language's vocabulary, and things near it, for token soups.
const TOKENS: &[&str] = &[
    "kernel",
    "launch",
    "groups",
    "local_size",
    "const",
    "local",
    "global",
    "int",
    "uint",
    "bool",
    "float",
    "T",
    "if",
    "else",
    "while",
    "for",
    "barrier",
    "true",
    "false",
    "identity",
    "do",
    "return",
    "break",
    "void",
    "__kernel",
    "__global",
    "unsigned",
    "x",
    "y",
    "n",
    "k",
    "a",
    "tid",
    "gid",
    "group_id",
    "num_groups",
    "log2",
    "min",
    "max",
    "get_local_id",
    "get_x",
    "0",
    "1",
    "017",
    "42",
    "0x2A",
    "0x",
    "4294967295u",
    "4294967296u",
    "2147483648",
    "99999999999999999999",
    "1.5",
    "1e39",
    "1e",
    "1f",
    ".5",
    "2.",
    "1.0f",
    "<+>=",
    "<<=",
    ">>=",
    "<+>",
    "⊕",
    "⊕=",
    "<<",
    ">>",
    "<=",
    ">=",
    "==",
    "!=",
    "&&",
    "||",
    "++",
    "--",
    "+=",
    "-=",
    "*=",
    "/=",
    "%=",
    "&=",
    "^=",
    "|=",
    "->",
    "+",
    "-",
    "*",
    "/",
    "%",
    "<",
    ">",
    "=",
    "!",
    "~",
    "&",
    "^",
    "|",
    "?",
    ":",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ";",
    ",",
    "/*",
    "*/",
    "//",
    "\n",
    "#include",
    "\"",
    "'",
    "\\",
    "∀",
    "\u{0}",
    "\u{FEFF}",
    "é",
    " ",
    "(int)",
    "(uint)",
    "(float)",
    "(bool)",
    "(T)",
];

fn soup() -> impl Strategy<Value = String> {
    (vec(select(TOKENS), 0..80), any::<bool>())
        .prop_map(|(toks, spaced)| toks.join(if spaced { " " } else { "" }))
}

/// A soup inside a kernel header and body, to reach statement parsing and checking.
fn soup_in_kernel() -> impl Strategy<Value = String> {
    (soup(), soup()).prop_map(|(params, body)| {
        format!("kernel k(local int a[n], {params}) launch(local_size = 2) {{ {body} }}")
    })
}

/// A mutation of a source text: (position, length, replacement), positions taken modulo
/// the text's length.
type Mutation = (usize, usize, String);

fn mutation() -> impl Strategy<Value = Mutation> {
    (
        any::<usize>(),
        0usize..12,
        prop_oneof![
            Just(String::new()),
            select(TOKENS).prop_map(str::to_string),
            any::<char>().prop_map(|c| c.to_string()),
        ],
    )
}

fn mutate(src: &str, muts: &[Mutation]) -> String {
    let mut s: Vec<char> = src.chars().collect();
    for (at, len, with) in muts {
        let at = at % (s.len() + 1);
        let end = (at + len).min(s.len());
        s.splice(at..end, with.chars());
    }
    s.into_iter().collect()
}

fn examples() -> &'static [String] {
    static EX: OnceLock<Vec<String>> = OnceLock::new();
    EX.get_or_init(|| {
        let mut v: Vec<PathBuf> = std::fs::read_dir(root().join("examples"))
            .expect("examples/")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "ksim"))
            .collect();
        v.sort();
        v.iter()
            .map(|p| std::fs::read_to_string(p).expect("example"))
            .collect()
    })
}

#[test]
fn front_end_never_panics_on_bytes() {
    check_property(
        "front_end_never_panics_on_bytes",
        vec(any::<u8>(), 0..512),
        cases() * 4,
        |bytes| {
            front_end(&String::from_utf8_lossy(&bytes));
            Ok(())
        },
        |b| format!("{:?}", String::from_utf8_lossy(b)),
    );
}

#[test]
fn front_end_never_panics_on_token_soups() {
    check_property(
        "front_end_never_panics_on_token_soups",
        prop_oneof![soup(), soup_in_kernel()],
        cases() * 4,
        |src| {
            front_end(&src);
            Ok(())
        },
        |s| s.clone(),
    );
}

#[test]
fn front_end_never_panics_on_mutated_kernels() {
    let base = prop_oneof![
        (0..examples().len()).prop_map(|i| examples()[i].clone()),
        gen::kernel().prop_map(|k| k.source()),
    ];
    check_property(
        "front_end_never_panics_on_mutated_kernels",
        (base, vec(mutation(), 1..6)),
        cases() * 2,
        |(src, muts)| {
            front_end(&mutate(&src, &muts));
            Ok(())
        },
        |(src, muts)| mutate(src, muts),
    );
}

// ----- the input-spec parser and -D values -----

/// Text near input specs and -D values, and arbitrary text.
fn spec_text() -> impl Strategy<Value = String> {
    let piece = select(vec![
        "iota",
        "zeros",
        "ones",
        "random",
        "random:",
        "random:18446744073709551616",
        "0",
        "1",
        "-",
        "--8",
        "-0x-8",
        "0x",
        "0xFFFFFFFF",
        "4294967295",
        "4294967296",
        "2147483648",
        "-2147483649",
        "1e40",
        "1e39",
        "-1e-45",
        "nan",
        "inf",
        "-inf",
        "NaN",
        "1.5",
        ".",
        "e",
        ",",
        ",,",
        " ",
        "\t",
        "\n",
        "[",
        "]",
        "[0,3]",
        "[3,0]",
        "⊤",
        "top",
        "id",
        "1",
        "0.1.2",
        "..",
        "true",
        "false",
        "2",
        "3",
        "+",
        "_",
        "∞",
        "١",
        "\u{0}",
    ]);
    prop_oneof![vec(piece, 0..12).prop_map(|p| p.concat()), any::<String>(),]
        // `@FILE` reads a file: arbitrary paths are not fuzzed here (see resources.rs).
        .prop_map(|s| s.trim_start().trim_start_matches('@').to_string())
}

const TYPES: [Ty; 5] = [Ty::Int, Ty::Uint, Ty::Bool, Ty::Float, Ty::Generic];

#[test]
fn input_spec_parser_never_panics() {
    check_property(
        "input_spec_parser_never_panics",
        (
            spec_text(),
            0usize..9,
            select(TYPES.to_vec()),
            select(Monoid::ALL.to_vec()),
        ),
        cases() * 4,
        |(spec, len, ty, monoid)| {
            if let Ok(v) = parse_input(&spec, len, ty, monoid) {
                prop_assert_eq!(v.len(), len, "{:?} accepted with the wrong length", spec);
            }
            Ok(())
        },
        |v| format!("{v:?}"),
    );
}

/// A kernel with a size parameter whose value does not change the sizes (so that any
/// accepted value allocates four elements) and a scalar parameter of every type.
const DEFINES_KERNEL: &str = "kernel d(local int a[n - n + 4], int s, uint v, float w, bool b)
    launch(local_size = 2)
{
    a[tid] = s + (int)v + (int)w + (int)b;
}
";

#[test]
fn defines_never_panic() {
    let kernel = Arc::new(lang::check::compile(DEFINES_KERNEL).expect("kernel"));
    let name = select(vec!["n", "s", "v", "w", "b", "x", "", "n "]);
    check_property(
        "defines_never_panic",
        vec((name, spec_text()), 0..6),
        cases() * 4,
        |defines| {
            let opts = LaunchOptions {
                defines: defines
                    .iter()
                    .map(|(n, v)| (n.to_string(), v.clone()))
                    .collect(),
                ..Default::default()
            };
            let _ = Launch::new(kernel.clone(), &opts);
            Ok(())
        },
        |v| format!("{v:?}"),
    );
}

/// `-D` and `--input` through the command line (clap included): arbitrary argument text,
/// valid UTF-8 or not.
#[test]
fn launch_options_on_the_command_line_never_crash() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("d.ksim"), DEFINES_KERNEL).expect("kernel");
    let arg = prop_oneof![
        3 => spec_text().prop_map(|s| s.into_bytes()),
        1 => vec(any::<u8>(), 0..24),
    ];
    let opt = select(vec![
        "-D",
        "--input",
        "--groups",
        "--local-size",
        "--monoid",
        "--max-steps",
    ]);
    let cmd = select(vec!["run", "races", "trace", "check"]);
    check_property(
        "launch_options_on_the_command_line_never_crash",
        (
            cmd,
            vec((opt, select(vec!["", "n=", "s=", "a=", "w="]), arg), 0..5),
        ),
        binary_cases(),
        |(cmd, opts)| {
            use std::os::unix::ffi::OsStringExt;
            let mut args: Vec<std::ffi::OsString> = vec![cmd.into(), "d.ksim".into()];
            for (o, prefix, value) in &opts {
                args.push(o.into());
                let mut v = prefix.as_bytes().to_vec();
                // An argument cannot hold a NUL byte.
                v.extend(value.iter().filter(|&&b| b != 0));
                args.push(std::ffi::OsString::from_vec(v));
            }
            let e = ksim_limited(dir.path(), MEM_KIB, &args, LIMIT);
            orderly(&e, &format!("ksim {args:?}"))
        },
        |v| format!("{v:?}"),
    );
}

fn orderly(e: &Exit, what: &str) -> Result<(), TestCaseError> {
    if e.is_orderly() {
        Ok(())
    } else {
        Err(TestCaseError::fail(format!("{what}\n{}", e.describe())))
    }
}

// ----- race reports and schedules -----

/// A race report written by `ksim explore` for the racy Kogge-Stone at n = 4, with the
/// kernel path relative to the repository root.
fn report() -> &'static Value {
    static REPORT: OnceLock<Value> = OnceLock::new();
    REPORT.get_or_init(|| {
        let dir = tempfile::tempdir().expect("temp dir");
        let out = dir.path().to_str().expect("utf-8 temp dir").to_string();
        let e = support::ksim_in(
            &root(),
            &[
                "explore",
                "--exhaustive",
                "examples/kogge_stone_racy.ksim",
                "-D",
                "n=4",
                "--input",
                "in=iota",
                "--report-dir",
                &out,
            ],
            LIMIT,
        );
        assert_eq!(e.code, Some(1), "{}", e.describe());
        let file = std::fs::read_dir(dir.path())
            .expect("report dir")
            .filter_map(|f| f.ok())
            .find(|f| f.file_name().to_string_lossy().ends_with(".json"))
            .expect("a report");
        serde_json::from_str(&std::fs::read_to_string(file.path()).expect("report"))
            .expect("report JSON")
    })
}

/// Every JSON pointer of a document, parents before children.
fn pointers(v: &Value, at: String, out: &mut Vec<String>) {
    out.push(at.clone());
    match v {
        Value::Array(xs) => {
            for (i, x) in xs.iter().enumerate() {
                pointers(x, format!("{at}/{i}"), out);
            }
        }
        Value::Object(m) => {
            for (k, x) in m {
                pointers(
                    x,
                    format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")),
                    out,
                );
            }
        }
        _ => {}
    }
}

/// Replacement values: wrong types, extremes, edge strings.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        select(vec![
            0i64,
            1,
            -1,
            2,
            3,
            4,
            7,
            8,
            255,
            65536,
            104000,
            2147483647,
            2147483648,
            4294967296,
            i64::MAX,
            i64::MIN,
        ])
        .prop_map(Value::from),
        Just(Value::from(u64::MAX)),
        select(vec![0.5f64, -0.0, 1e308, -1e308, 1e-320]).prop_map(Value::from),
        select(vec![
            "",
            "x",
            "n",
            "in",
            "out",
            "4",
            "iota",
            "int-add",
            "list",
            "interval",
            "read",
            "write",
            "ksim-race-report",
            "examples/kogge_stone.ksim",
            "examples/kogge_stone_racy.ksim",
            "/",
            "..",
            "nonexistent.ksim",
            // Sizes at and over the documented limit, and a file without end.
            "268435456",
            "4294967296",
            "-8",
            "/dev/zero",
        ])
        .prop_map(Value::from),
        any::<String>().prop_map(Value::from),
    ];
    leaf.prop_recursive(2, 8, 3, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..3).prop_map(Value::Array),
            vec(("[a-z_]{1,8}", inner), 0..3)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

#[derive(Clone, Debug)]
enum JsonEdit {
    Replace(usize, Value),
    Remove(usize),
    /// A number plus a small delta (off-by-one spans, steps, threads).
    Nudge(usize, i64),
}

fn edits() -> impl Strategy<Value = Vec<JsonEdit>> {
    vec(
        prop_oneof![
            2 => (any::<usize>(), json_value()).prop_map(|(i, v)| JsonEdit::Replace(i, v)),
            1 => any::<usize>().prop_map(JsonEdit::Remove),
            2 => (any::<usize>(), -3i64..4).prop_map(|(i, d)| JsonEdit::Nudge(i, d)),
        ],
        1..4,
    )
}

fn apply(doc: &Value, edits: &[JsonEdit]) -> Value {
    let mut doc = doc.clone();
    for e in edits {
        let mut ptrs = Vec::new();
        pointers(&doc, String::new(), &mut ptrs);
        let pick = |i: usize| ptrs[i % ptrs.len()].clone();
        match e {
            JsonEdit::Replace(i, v) => {
                let p = pick(*i);
                if p.is_empty() {
                    doc = v.clone();
                } else if let Some(slot) = doc.pointer_mut(&p) {
                    *slot = v.clone();
                }
            }
            JsonEdit::Remove(i) => {
                let p = pick(*i);
                if let Some((parent, last)) = p.rsplit_once('/') {
                    let key = last.replace("~1", "/").replace("~0", "~");
                    match doc.pointer_mut(parent) {
                        Some(Value::Object(m)) => {
                            m.remove(&key);
                        }
                        Some(Value::Array(xs)) => {
                            if let Ok(k) = key.parse::<usize>() {
                                if k < xs.len() {
                                    xs.remove(k);
                                }
                            }
                        }
                        _ => {}
                    }
                }
            }
            JsonEdit::Nudge(i, d) => {
                let p = pick(*i);
                if let Some(slot) = doc.pointer_mut(&p) {
                    if let Some(n) = slot.as_i64() {
                        *slot = Value::from(n.saturating_add(*d));
                    } else if let Some(n) = slot.as_u64() {
                        *slot = Value::from(n.saturating_add_signed(*d));
                    }
                }
            }
        }
    }
    doc
}

/// Text of a report: a mutated report (as JSON or cut short), or arbitrary text.
fn report_text() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => edits().prop_map(|e| serde_json::to_string_pretty(&apply(report(), &e)).expect("JSON")),
        1 => (edits(), any::<usize>()).prop_map(|(e, cut)| {
            let s = serde_json::to_string(&apply(report(), &e)).expect("JSON");
            let cut = cut % (s.len() + 1);
            let cut = (0..=cut).rev().find(|&c| s.is_char_boundary(c)).unwrap_or(0);
            s[..cut].to_string()
        }),
        1 => any::<String>(),
    ]
}

#[test]
fn report_reader_never_panics() {
    check_property(
        "report_reader_never_panics",
        report_text(),
        cases() * 2,
        |text| {
            if let Ok(r) = sim::report::RaceReport::parse(&text) {
                let _ = r.key();
                let _ = r.launch.options();
                let _ = r.to_json();
            }
            Ok(())
        },
        |t| t.clone(),
    );
}

/// `ksim replay` on mutated reports, from the repository root (where the report's kernel
/// path leads), with and without `--force`.
#[test]
fn replay_never_crashes() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("report.json");
    check_property(
        "replay_never_crashes",
        (report_text(), any::<bool>()),
        binary_cases(),
        |(text, force)| {
            std::fs::write(&file, &text).expect("write report");
            let mut args = vec!["replay".to_string(), file.display().to_string()];
            if force {
                args.push("--force".into());
            }
            let e = ksim_limited(&root(), MEM_KIB, &args, LIMIT);
            orderly(&e, &format!("ksim {} on\n{text}", args.join(" ")))
        },
        |(t, f)| format!("--force {f}\n{t}"),
    );
}

/// A schedule document: mutations of `{"runs": [[thread, count], ...]}` or of a whole
/// `run --json` output, or arbitrary text.
fn schedule_text() -> impl Strategy<Value = String> {
    let runs = vec(
        (
            prop_oneof![4 => 0u64..5, 1 => Just(u64::MAX), 1 => Just(1u64 << 32)],
            prop_oneof![4 => 0u64..20, 1 => Just(u64::MAX), 1 => Just(u64::MAX / 2 + 1)],
        ),
        0..12,
    );
    prop_oneof![
        3 => (runs, edits()).prop_map(|(r, e)| {
            let doc = serde_json::json!({"schedule": {"runs": r}});
            serde_json::to_string(&apply(&doc, &e)).expect("JSON")
        }),
        1 => edits().prop_map(|e| serde_json::to_string(&apply(report(), &e)).expect("JSON")),
        1 => any::<String>(),
    ]
}

/// The schedule reader and the replay of what it read, through the binary: the reader is
/// in the command line only.
#[test]
fn schedule_reader_never_crashes() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("schedule.json");
    let kernel = root().join("examples/kogge_stone_racy.ksim");
    check_property(
        "schedule_reader_never_crashes",
        schedule_text(),
        binary_cases(),
        |text| {
            std::fs::write(&file, &text).expect("write schedule");
            let args = [
                "run".to_string(),
                kernel.display().to_string(),
                "-D".into(),
                "n=4".into(),
                "--schedule".into(),
                format!("@{}", file.display()),
            ];
            let e = ksim_limited(dir.path(), MEM_KIB, &args, LIMIT);
            orderly(&e, &format!("ksim {} with\n{text}", args.join(" ")))
        },
        |t| t.clone(),
    );
}

/// The same schedules replayed in-process (many more cases).
#[test]
fn schedule_replay_never_panics() {
    let src =
        std::fs::read_to_string(root().join("examples/kogge_stone_racy.ksim")).expect("kernel");
    let k = Arc::new(lang::check::compile(&src).expect("kernel"));
    let opts = LaunchOptions {
        defines: vec![("n".into(), "4".into())],
        max_steps: Some(10_000),
        ..Default::default()
    };
    let launch = Launch::new(k, &opts).expect("launch");
    check_property(
        "schedule_replay_never_panics",
        schedule_text(),
        cases(),
        |text| {
            let doc: Result<Value, _> = serde_json::from_str(&text);
            if let Ok(doc) = doc {
                let obj = doc.get("schedule").cloned().unwrap_or(doc);
                if let Ok(s) = serde_json::from_value::<sim::Schedule>(obj) {
                    let _ = s.len();
                    let _ = sim::run(
                        &launch,
                        &sim::Scheduler::Replay(s),
                        &mut interp::exec::Quiet,
                    );
                }
            }
            Ok(())
        },
        |t| t.clone(),
    );
}
