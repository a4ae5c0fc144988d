//! Uninitialised reads (`--uninit`, interp/src/undef.rs): a read of memory nothing defined
//! is a fault naming the thread, the statement and the array or variable, found alike by
//! the reference semantics and the fast executor (threads one by one and lock-step warps);
//! `.cl` checks by default, `.ksim` starts at zero unless `--uninit check` is given.

mod common;
use common::{json, ksim_in, text, tmp};
use interp::fast::{self, FastOptions};
use interp::launch::{Launch, LaunchOptions};
use interp::{Fault, Uninit};
use std::sync::Arc;

/// The canonical run's fault on both engines, which must agree on it (kind, thread and
/// statement) and on the memory when there is none; `warp`: `--warp-size`.
fn fault_of(
    kernel: &lang::core::Kernel,
    opts: &LaunchOptions,
    warp: Option<usize>,
) -> Option<Fault> {
    let mut launch = Launch::new(Arc::new(kernel.clone()), opts).expect("launch");
    launch.warp_size = warp;
    let reference = interp::exec::run_canonical(&launch);
    for jobs in [1, 2] {
        let fast = fast::run(
            &launch,
            &FastOptions {
                jobs,
                track_races: true,
            },
        )
        .expect("the fast executor runs it");
        assert_eq!(reference.fault, fast.fault, "engines agree on the fault");
        if reference.fault.is_none() {
            assert_eq!(reference.memory, fast.memory, "engines agree on memory");
        }
        assert_eq!(
            reference.races.len(),
            fast.races.len(),
            "engines agree on races"
        );
    }
    reference.fault
}

fn cl(src: &str) -> (lang::core::Kernel, lang::cl::lower::KernelInfo) {
    let c = common::cl::compile(src).unwrap_or_else(|e| panic!("{e}\n{src}"));
    (c.kernel, c.info)
}

/// A `.cl` launch: `groups` × `local` work-items, buffers `(name, size, spec)` (spec
/// `None`: no contents), local arrays' inputs `(array, spec)`.
fn cl_opts(
    info: &lang::cl::lower::KernelInfo,
    groups: usize,
    local: usize,
    bufs: &[(&str, usize, Option<&str>)],
    inputs: &[(&str, &str)],
    uninit: Uninit,
) -> LaunchOptions {
    let mut defines = Vec::new();
    let mut all = Vec::new();
    for b in &info.buffers {
        let (_, n, spec) = bufs
            .iter()
            .find(|(name, _, _)| *name == b.name)
            .expect("buffer");
        defines.push((b.size_param.clone(), n.to_string()));
        if let Some(spec) = spec {
            all.push((b.array.clone(), spec.to_string()));
        }
    }
    all.extend(inputs.iter().map(|(a, s)| (a.to_string(), s.to_string())));
    LaunchOptions {
        defines,
        groups: Some(groups),
        local_size: Some(local),
        inputs: all,
        uninit,
        ..LaunchOptions::default()
    }
}

/// Every engine configuration: threads one by one, and warps of 4 and of 1.
fn all_faults(kernel: &lang::core::Kernel, opts: &LaunchOptions) -> Vec<Option<Fault>> {
    [None, Some(4), Some(1)]
        .into_iter()
        .map(|w| fault_of(kernel, opts, w))
        .collect()
}

const LOCAL_SHIFT: &str = r#"
    kernel void k(__global int *out) {
        __local int tmp[8];
        int l = get_local_id(0);
        tmp[l] = l;
        SYNC
        out[get_global_id(0)] = tmp[(l + 1) % 8];
    }
"#;

#[test]
fn a_local_array_read_before_its_write_is_found_with_thread_and_name() {
    let (k, info) = cl(&LOCAL_SHIFT.replace("SYNC", ""));
    let opts = cl_opts(
        &info,
        1,
        8,
        &[("out", 8, Some("zeros"))],
        &[],
        Uninit::Check,
    );
    // One by one (and warps of 1), thread 0 reads tmp[1] before thread 1 writes it; in
    // warps of 4 every lane of warp 0 has written before any reads, so lane 3 is the first
    // to read an element nothing wrote, tmp[4].
    for (warp, element, thread) in [(None, 1, 0), (Some(1), 1, 0), (Some(4), 4, 3)] {
        let f = fault_of(&k, &opts, warp).expect("an uninitialised read");
        assert_eq!(
            f.kind,
            interp::FaultKind::Uninitialised {
                name: "tmp".into(),
                index: vec![element]
            },
            "{f}"
        );
        assert_eq!(
            f.thread.map(|t| (t.group, t.local)),
            Some((0, thread)),
            "{f}"
        );
        assert!(
            f.to_string()
                .contains(&format!("uninitialised read of tmp[{element}]")),
            "{f}"
        );
    }
}

#[test]
fn after_a_barrier_ordered_write_there_is_no_fault() {
    let (k, info) = cl(&LOCAL_SHIFT.replace("SYNC", "barrier(CLK_LOCAL_MEM_FENCE);"));
    let opts = cl_opts(
        &info,
        2,
        8,
        &[("out", 16, Some("zeros"))],
        &[],
        Uninit::Check,
    );
    for f in all_faults(&k, &opts) {
        assert_eq!(f, None);
    }
}

#[test]
fn an_input_defines_a_local_array_and_zero_mode_starts_it_at_zero() {
    let (k, info) = cl(&LOCAL_SHIFT.replace("SYNC", ""));
    let with_input = cl_opts(
        &info,
        1,
        8,
        &[("out", 8, Some("zeros"))],
        &[("tmp", "iota")],
        Uninit::Check,
    );
    // Without a barrier the read races with the write, but reads defined data.
    for f in all_faults(&k, &with_input) {
        assert_eq!(f, None);
    }
    let zero = cl_opts(&info, 1, 8, &[("out", 8, Some("zeros"))], &[], Uninit::Zero);
    for f in all_faults(&k, &zero) {
        assert_eq!(f, None);
    }
}

#[test]
fn a_private_variable_read_before_assignment_is_found() {
    let (k, info) = cl(r#"
        kernel void k(__global int *out) {
            int x;
            if (get_local_id(0) > 1) x = 3;
            out[get_global_id(0)] = x + 1;
        }
    "#);
    let opts = cl_opts(
        &info,
        1,
        4,
        &[("out", 4, Some("zeros"))],
        &[],
        Uninit::Check,
    );
    for f in all_faults(&k, &opts) {
        let f = f.expect("an uninitialised read");
        assert_eq!(f.kind, interp::undef::variable("x"), "{f}");
        assert_eq!(f.thread.map(|t| t.local), Some(0), "{f}");
    }
}

#[test]
fn a_buffer_without_contents_and_a_private_array_are_undefined() {
    let (k, info) = cl(r#"
        kernel void k(__global int *in, __global int *out) {
            int g = get_global_id(0);
            int a[4];
            a[g % 4] = 1;
            out[g] = a[g % 4] + in[g];
        }
    "#);
    let no_input = cl_opts(
        &info,
        1,
        2,
        &[("in", 2, None), ("out", 2, Some("zeros"))],
        &[],
        Uninit::Check,
    );
    let f = fault_of(&k, &no_input, None).expect("an uninitialised read");
    assert!(f.to_string().contains("uninitialised read of in[0]"), "{f}");
    let with_input = cl_opts(
        &info,
        1,
        2,
        &[("in", 2, Some("iota")), ("out", 2, Some("zeros"))],
        &[],
        Uninit::Check,
    );
    assert_eq!(fault_of(&k, &with_input, Some(2)), None);
    let (k, info) = cl(r#"
        kernel void k(__global int *out) {
            int a[4];
            a[0] = 1;
            out[get_global_id(0)] = a[1];
        }
    "#);
    let opts = cl_opts(
        &info,
        1,
        2,
        &[("out", 2, Some("zeros"))],
        &[],
        Uninit::Check,
    );
    for f in all_faults(&k, &opts) {
        let f = f.expect("an uninitialised read");
        assert!(
            f.to_string()
                .contains("uninitialised read of a.private[0][1]"),
            "{f}"
        );
    }
}

#[test]
fn atomics_and_constant_tables() {
    let (k, info) = cl(r#"
        __constant int T[4] = {0, 5, 0, 7};
        kernel void k(__global int *count, __global int *out) {
            int g = get_global_id(0);
            out[g] = T[g % 4] + atomic_inc(&count[0]);
        }
    "#);
    let undefined = cl_opts(
        &info,
        1,
        4,
        &[("count", 1, None), ("out", 4, Some("zeros"))],
        &[],
        Uninit::Check,
    );
    for f in all_faults(&k, &undefined) {
        let f = f.expect("an atomic reads its element");
        assert!(
            f.to_string().contains("uninitialised read of count[0]"),
            "{f}"
        );
    }
    let defined = cl_opts(
        &info,
        1,
        4,
        &[("count", 1, Some("zeros")), ("out", 4, Some("zeros"))],
        &[],
        Uninit::Check,
    );
    for f in all_faults(&k, &defined) {
        assert_eq!(f, None, "a table's zero elements are defined");
    }
}

#[test]
fn under_warps_a_lane_does_not_see_a_store_of_its_own_instruction() {
    // Lanes of one warp instruction read the memory of before it: lane 1 reads tmp[0],
    // which lane 0 stores in the same instruction, so it is still undefined; threads one
    // by one (and warps of 1) see lane 0's store first.
    let (k, info) = cl(r#"
        kernel void k(__global int *out) {
            __local int tmp[9];
            int l = get_local_id(0);
            tmp[0] = 1;
            tmp[l + 1] = tmp[l];
            out[l] = tmp[l + 1];
        }
    "#);
    let opts = cl_opts(
        &info,
        1,
        4,
        &[("out", 4, Some("zeros"))],
        &[],
        Uninit::Check,
    );
    assert_eq!(fault_of(&k, &opts, None), None);
    assert_eq!(fault_of(&k, &opts, Some(1)), None);
    let f = fault_of(&k, &opts, Some(4)).expect("an uninitialised read in lock-step");
    assert!(
        f.to_string().contains("uninitialised read of tmp[1]"),
        "{f}"
    );
    assert_eq!(f.thread.map(|t| t.local), Some(1), "{f}");
}

const KSIM: &str =
    "kernel k(global int out[n], local int tmp[n]) launch(groups = 1, local_size = n) {
    out[tid] = tmp[tid];
}
";

#[test]
fn ksim_starts_at_zero_unless_asked_to_check() {
    let k = lang::check::compile(KSIM).expect("compiles");
    let opts = |uninit| LaunchOptions {
        defines: vec![("n".into(), "4".into())],
        inputs: vec![("out".into(), "zeros".into())],
        uninit,
        ..LaunchOptions::default()
    };
    for f in all_faults(&k, &opts(Uninit::Zero)) {
        assert_eq!(f, None);
    }
    for f in all_faults(&k, &opts(Uninit::Check)) {
        assert!(f.is_some_and(|f| f.to_string().contains("tmp[0]")));
    }
    // On the command line: the default for .ksim is zero, `--uninit check` turns it on.
    let dir = tmp("uninit-ksim");
    std::fs::write(dir.join("k.ksim"), KSIM).unwrap();
    let plain = ksim_in(&dir, &["run", "k.ksim", "-D", "n=4"]);
    assert_eq!(plain.status.code(), Some(0), "{}", text(&plain));
    for engine in ["fast", "reference"] {
        let o = ksim_in(
            &dir,
            &[
                "run", "k.ksim", "-D", "n=4", "--uninit", "check", "--engine", engine,
            ],
        );
        assert_eq!(o.status.code(), Some(1), "{}", text(&o));
        assert!(
            text(&o).contains("uninitialised read of tmp[0]"),
            "{}",
            text(&o)
        );
        assert!(text(&o).contains("in thread 0"), "{}", text(&o));
    }
    let bad = ksim_in(&dir, &["run", "k.ksim", "-D", "n=4", "--uninit", "maybe"]);
    assert_eq!(bad.status.code(), Some(2), "{}", text(&bad));
}

#[test]
fn cl_checks_by_default_and_the_json_names_the_fault() {
    let dir = tmp("uninit-cl");
    let src = "kernel void k(__global int *out) {\n    __local int tmp[8];\n    \
               out[get_global_id(0)] = tmp[get_local_id(0)];\n}\n";
    std::fs::write(dir.join("k.cl"), src).unwrap();
    let args = [
        "run",
        "k.cl",
        "--global",
        "8",
        "--local",
        "8",
        "--input",
        "out=zeros:8",
    ];
    let o = ksim_in(&dir, &[&args[..], &["--json"]].concat());
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let fault = &json(&o)["fault"];
    assert_eq!(fault["kind"], "uninitialised", "{fault}");
    assert_eq!(fault["name"], "tmp", "{fault}");
    assert_eq!(fault["index"], serde_json::json!([0]), "{fault}");
    let zero = ksim_in(&dir, &[&args[..], &["--uninit", "zero"]].concat());
    assert_eq!(zero.status.code(), Some(0), "{}", text(&zero));
}

#[test]
fn explore_finds_the_read_before_the_write_and_replay_keeps_the_mode() {
    // Thread 1 reads tmp[0], which thread 0 writes with no barrier: read first, it is an
    // uninitialised read; written first, a race whose report keeps `--uninit check`.
    let dir = tmp("uninit-explore");
    let src = "kernel void k(__global int *out) {\n    __local int tmp[2];\n    \
               int l = get_local_id(0);\n    if (l == 0) tmp[0] = 5;\n    \
               if (l == 1) out[0] = tmp[0];\n}\n";
    std::fs::write(dir.join("k.cl"), src).unwrap();
    let o = ksim_in(
        &dir,
        &[
            "explore",
            "--exhaustive",
            "k.cl",
            "--global",
            "2",
            "--local",
            "2",
            "--input",
            "out=zeros:1",
            "--report-dir",
            "r",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("uninitialised read of tmp[0]"),
        "{}",
        text(&o)
    );
    assert!(text(&o).contains("data race on tmp[0]"), "{}", text(&o));
    let reports: Vec<_> = std::fs::read_dir(dir.join("r"))
        .expect("reports")
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(reports.len(), 1, "{reports:?}");
    let rep: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&reports[0]).unwrap()).unwrap();
    assert_eq!(rep["launch"]["uninit"], "check", "{rep}");
    let p = reports[0].display().to_string();
    let r = ksim_in(&dir, &["replay", &p]);
    assert_eq!(r.status.code(), Some(1), "{}", text(&r));
    assert!(text(&r).contains("race reproduced"), "{}", text(&r));
}

/// C11 6.2.4p6: a variable declared without initialiser in a loop body is indeterminate
/// each time its declaration is reached, so a value left by the previous iteration is an
/// uninitialised read, in `for`, `while` and `do` loops and in nested ones.
#[test]
fn a_loop_body_declaration_is_undefined_at_each_iteration() {
    let loops = [
        "for (int j = 0; j < 2; j++) { int x; if (j == 0) x = 7; acc += x; }",
        "int j = 0; while (j < 2) { int x; if (j == 0) x = 7; acc += x; j++; }",
        "int j = 0; do { int x; if (j == 0) x = 7; acc += x; j++; } while (j < 2);",
        "for (int i = 0; i < 2; i++) { int x; for (int j = 0; j < 2; j++) { if (i == 0) x = 7; acc += x; } }",
    ];
    for body in loops {
        let src = format!(
            "kernel void k(__global int *out) {{\n    int acc = 0;\n    {body}\n    \
             out[get_global_id(0)] = acc;\n}}\n"
        );
        let (k, info) = cl(&src);
        let opts = cl_opts(
            &info,
            1,
            2,
            &[("out", 2, Some("zeros"))],
            &[],
            Uninit::Check,
        );
        for f in all_faults(&k, &opts) {
            let f = f.unwrap_or_else(|| panic!("an uninitialised read in {body}"));
            assert_eq!(f.kind, interp::undef::variable("x"), "{body}: {f}");
        }
    }
}

/// A loop-body variable assigned before its read in every iteration stays clean, the one
/// declared outside the loop keeps its value across iterations, and `--uninit zero` keeps
/// the previous iteration's value as before.
#[test]
fn a_loop_body_declaration_assigned_each_iteration_is_clean() {
    let src = "kernel void k(__global int *out) {\n    int acc = 0;\n    int y;\n    \
               for (int j = 0; j < 3; j++) {\n        int x;\n        x = j;\n        \
               if (j == 0) y = 5;\n        acc += x + y;\n    }\n    \
               out[get_global_id(0)] = acc;\n}\n";
    let (k, info) = cl(src);
    let opts = cl_opts(
        &info,
        1,
        2,
        &[("out", 2, Some("zeros"))],
        &[],
        Uninit::Check,
    );
    for f in all_faults(&k, &opts) {
        assert_eq!(f, None, "{src}");
    }
    let src = "kernel void k(__global int *out) {\n    int acc = 0;\n    \
               for (int j = 0; j < 2; j++) { int x; if (j == 0) x = 7; acc += x; }\n    \
               out[get_global_id(0)] = acc;\n}\n";
    let (k, info) = cl(src);
    let opts = cl_opts(&info, 1, 2, &[("out", 2, Some("zeros"))], &[], Uninit::Zero);
    for f in all_faults(&k, &opts) {
        assert_eq!(f, None, "{src}");
    }
    let launch = Launch::new(Arc::new(k), &opts).expect("launch");
    let out = interp::exec::run_canonical(&launch);
    let a = launch.kernel.array("out").expect("out");
    assert_eq!(out.memory.arrays[a][0][0], interp::Value::Int(14), "7 kept");
}

/// The same for `.ksim` under `--uninit check`, through the command line, in `run` and in
/// the exhaustive explorer.
#[test]
fn ksim_loop_body_declaration_under_uninit_check() {
    let dir = tmp("uninit-loop");
    let src = "kernel k(global int out[n]) launch(groups = 1, local_size = n) {\n  int acc = 0;\n  int j = 0;\n  \
               while (j < 2) {\n    int x;\n    if (j == 0) {\n      x = 7;\n    }\n    \
               acc = acc + x;\n    j = j + 1;\n  }\n  out[tid] = acc;\n}\n";
    std::fs::write(dir.join("k.ksim"), src).unwrap();
    for cmd in [
        &["run"][..],
        &["explore", "--exhaustive", "--no-reports"][..],
    ] {
        let mut args = cmd.to_vec();
        args.extend(["k.ksim", "-D", "n=2", "--uninit", "check"]);
        let o = ksim_in(&dir, &args);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", text(&o));
        assert!(
            text(&o).contains("uninitialised read of `x`: the variable is read before anything is assigned to it since its declaration was last reached"),
            "{}",
            text(&o)
        );
        args.truncate(args.len() - 2);
        let o = ksim_in(&dir, &args);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", text(&o));
    }
}
