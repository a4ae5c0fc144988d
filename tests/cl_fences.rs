//! `barrier(flags)` with fence flags computed at run time (docs/language.md, "Fences"):
//! each work-item's fence is its own flags, and a work-item's accesses before the barrier
//! are ordered with every later access of its group exactly when its own flags name the
//! accessed memory space (GPUVerify's reading). The four kernels of GPUVerify's
//! `inter_group_and_barrier_flag_tests` that compute their flags, written small; the
//! canonical run, the exhaustive explorer (source-DPOR) and the naive explorer must find
//! the same races. Constant flags keep the fixed-fence barrier and run on both engines.

mod common;
use common::cl::{compile, run};
use common::{ksim, stdout, text, tmp};
use interp::launch::{Launch, LaunchOptions};
use lang::core::StmtKind;
use sim::explore::{enumerate, exhaustive, Config, Verdict};
use std::sync::Arc;

/// `pass/read_then_write`: only work-item 0 reads `p[0]`, and its flags order `local`.
const READ_THEN_WRITE: &str = r#"
__kernel void foo(__local int* p) {
  volatile int x, y;
  x = get_local_id(0) == 0 ? CLK_LOCAL_MEM_FENCE : 0;
  if (get_local_id(0) == 0) {
    y = p[0];
  }
  barrier(x);
  if (get_local_id(0) == 1) {
    p[0] = 0;
  }
}
"#;

/// `fail/bad_read_then_write`: every work-item reads `p[0]`; work-items 2.. have no fence,
/// so their reads race with work-item 1's write after the barrier.
const BAD_READ_THEN_WRITE: &str = r#"
__kernel void foo(__local int* p) {
  volatile int x, y;
  x = get_local_id(0) == 0 ? CLK_LOCAL_MEM_FENCE : 0;
  y = p[0];
  barrier(x);
  if (get_local_id(0) == 1) {
    p[0] = 0;
  }
}
"#;

/// `pass/write_then_read`: work-item 0 writes with a `local` fence.
const WRITE_THEN_READ: &str = r#"
__kernel void foo(__local int* p) {
  volatile int x, y;
  x = get_local_id(0) == 0 ? CLK_LOCAL_MEM_FENCE : 0;
  if (get_local_id(0) == 0) {
    p[0] = get_local_id(0);
  }
  barrier(x);
  if (get_local_id(0) == 1) {
    y = p[0];
  }
}
"#;

/// `fail/bad_write_then_read`: work-item 0 writes, but its own flags are 0.
const BAD_WRITE_THEN_READ: &str = r#"
__kernel void foo(__local int* p) {
  volatile int x, y;
  x = get_local_id(0) == 0 ? 0 : CLK_LOCAL_MEM_FENCE;
  if (get_local_id(0) == 0) {
    p[0] = get_local_id(0);
  }
  barrier(x);
  if (get_local_id(0) == 1) {
    y = p[0];
  }
}
"#;

/// The launch of `src` with `groups` groups of `local` work-items and buffers as
/// `(name, size, spec)`.
fn launch(src: &str, groups: usize, local: usize, bufs: &[(&str, usize, &str)]) -> Launch {
    let c = compile(src).unwrap_or_else(|e| panic!("{e}\n{src}"));
    let mut defines = Vec::new();
    let mut inputs = Vec::new();
    for b in &c.info.buffers {
        let (_, n, spec) = (bufs.iter())
            .find(|(name, _, _)| *name == b.name)
            .unwrap_or_else(|| panic!("no spec for buffer {}", b.name));
        defines.push((b.size_param.clone(), n.to_string()));
        inputs.push((b.array.clone(), spec.to_string()));
    }
    let opts = LaunchOptions {
        defines,
        group_dims: vec![groups],
        local_dims: vec![local],
        inputs,
        max_steps: Some(100_000),
        ..LaunchOptions::default()
    };
    Launch::new(Arc::new(c.kernel), &opts).expect("launch")
}

/// The race keys of the canonical run, the exhaustive explorer and the naive explorer
/// (memoised), checked equal; whether there is a race.
fn races_everywhere(src: &str, groups: usize, local: usize) -> bool {
    let l = launch(src, groups, local, &[("p", 2, "zeros")]);
    let canonical = interp::exec::run_canonical(&l);
    assert!(canonical.fault.is_none(), "{:?}", canonical.fault);
    let cfg = Config::default();
    let dpor = exhaustive(&l, &cfg, None);
    let brute = enumerate(&l, &cfg);
    assert_eq!(dpor.verdict, Verdict::Exhaustive);
    assert_eq!(brute.verdict, Verdict::Exhaustive);
    assert_eq!(dpor.race_keys(), brute.race_keys(), "both explorers agree");
    assert_eq!(dpor.final_memories(), brute.final_memories());
    let keys: std::collections::HashSet<_> = canonical.races.iter().map(|r| r.key()).collect();
    assert_eq!(keys, dpor.race_keys(), "the canonical run finds them all");
    !keys.is_empty()
}

#[test]
fn the_earlier_access_is_ordered_when_its_own_work_item_fenced_its_space() {
    for (groups, local) in [(1, 2), (1, 3), (2, 2)] {
        assert!(!races_everywhere(READ_THEN_WRITE, groups, local));
        assert!(!races_everywhere(WRITE_THEN_READ, groups, local));
        assert!(races_everywhere(BAD_WRITE_THEN_READ, groups, local));
    }
}

#[test]
fn reads_of_work_items_without_a_fence_race_with_a_later_write() {
    // Two work-items: work-item 0 fences `local`, work-item 1 writes (its own read is its
    // own program order): no race. From three, work-item 2 read with no fence: a race.
    assert!(!races_everywhere(BAD_READ_THEN_WRITE, 1, 2));
    assert!(races_everywhere(BAD_READ_THEN_WRITE, 1, 3));
    let l = launch(BAD_READ_THEN_WRITE, 1, 4, &[("p", 2, "zeros")]);
    let out = interp::exec::run_canonical(&l);
    assert_eq!(out.races.len(), 1);
    let r = &out.races[0];
    assert_eq!(r.first.kind, interp::race::AccessKind::Read);
    assert_eq!(r.first.thread.local, 2, "the first read without a fence");
    assert_eq!(r.second.kind, interp::race::AccessKind::Write);
    assert_eq!(r.second.thread.local, 1);
}

#[test]
fn a_work_item_fencing_the_other_space_does_not_order_its_access() {
    // Work-item 0 fences `global` only, the others `local`: its write of a `local` array
    // stays unordered with work-item 1's read after the barrier; with the fences swapped
    // it is ordered.
    let src = |zero: &str, others: &str| {
        format!(
            r#"
            __kernel void foo(__local int* p, __global int* out) {{
              uint f = get_local_id(0) == 0 ? {zero} : {others};
              if (get_local_id(0) == 0) {{ p[0] = 7; }}
              barrier(f);
              if (get_local_id(0) == 1) {{ out[0] = p[0]; }}
            }}"#
        )
    };
    let run_of = |s: &str| {
        let l = launch(s, 1, 2, &[("p", 1, "zeros"), ("out", 1, "zeros")]);
        let out = interp::exec::run_canonical(&l);
        let dpor = exhaustive(&l, &Config::default(), None);
        let keys: std::collections::HashSet<_> = out.races.iter().map(|r| r.key()).collect();
        assert_eq!(keys, dpor.race_keys());
        (out.races.len(), out.memory)
    };
    let (races, _) = run_of(&src("CLK_GLOBAL_MEM_FENCE", "CLK_LOCAL_MEM_FENCE"));
    assert_eq!(races, 1);
    let (races, mem) = run_of(&src("CLK_LOCAL_MEM_FENCE", "CLK_GLOBAL_MEM_FENCE"));
    assert_eq!(races, 0);
    assert_eq!(
        mem.arrays[1][0][0].to_string(),
        "7",
        "the barrier still synchronises"
    );
}

#[test]
fn flags_computed_at_run_time_but_equal_everywhere_act_as_the_constant_barrier() {
    // `n` is a kernel argument: the flags are the same for every work-item, but not known
    // at lowering time. Same races as the constant barrier, with `n` = 1 (local) and 0.
    let dynamic = r#"
        __kernel void k(__local int* p, int n) {
          uint f = n > 0 ? CLK_LOCAL_MEM_FENCE : 0;
          p[get_local_id(0)] = 1;
          barrier(f);
          p[get_local_id(0) + 1] = 2;
        }"#;
    let fixed = |flags: &str| {
        format!(
            r#"
            __kernel void k(__local int* p) {{
              p[get_local_id(0)] = 1;
              barrier({flags});
              p[get_local_id(0) + 1] = 2;
            }}"#
        )
    };
    for (n, flags) in [("1", "CLK_LOCAL_MEM_FENCE"), ("0", "0")] {
        let c = compile(dynamic).expect("lowers");
        let bufs = [("p", 5usize, "zeros")];
        let fixed_launch = launch(&fixed(flags), 1, 4, &bufs);
        let defines = vec![
            (c.info.buffers[0].size_param.clone(), "5".to_string()),
            (c.info.scalars[0].param.clone(), n.to_string()),
        ];
        let opts = LaunchOptions {
            defines,
            group_dims: vec![1],
            local_dims: vec![4],
            inputs: vec![(c.info.buffers[0].array.clone(), "zeros".into())],
            ..LaunchOptions::default()
        };
        let l = Launch::new(Arc::new(c.kernel), &opts).expect("launch");
        let a = interp::exec::run_canonical(&l);
        let b = interp::exec::run_canonical(&fixed_launch);
        let kinds = |o: &interp::exec::Outcome| {
            (o.races.iter())
                .map(|r| (r.first.kind, r.second.kind))
                .collect::<Vec<_>>()
        };
        assert_eq!(kinds(&a), kinds(&b), "n = {n}");
        assert_eq!(a.memory, b.memory);
        assert_eq!(a.races.is_empty(), n == "1");
    }
}

#[test]
fn constant_flags_keep_the_fixed_fence_and_both_engines() {
    // A flags variable never assigned after its initialiser is still a constant.
    let src = r#"
        __kernel void k(__local int* p) {
          cl_mem_fence_flags f = CLK_LOCAL_MEM_FENCE;
          p[get_local_id(0)] = 1;
          barrier(f);
          p[get_local_id(0) + 1] = 2;
        }"#;
    let c = compile(src).expect("lowers");
    let barriers: Vec<_> = (c.kernel.blocks.iter().flatten())
        .filter_map(|s| match s.kind {
            StmtKind::Barrier { fence, flags } => Some((fence, flags)),
            _ => None,
        })
        .collect();
    assert_eq!(barriers, [(lang::core::Fence::LOCAL, None)]);
    assert!(!c.kernel.has_item_fences());
    // `common::cl::run` checks that the reference semantics and the fast executor agree.
    let r = run(src, &[1], &[4], &[("p", 5, "zeros")], &[]);
    assert!(r.races.is_empty());
    let r = run(
        &src.replace("CLK_LOCAL_MEM_FENCE", "CLK_GLOBAL_MEM_FENCE"),
        &[1],
        &[4],
        &[("p", 5, "zeros")],
        &[],
    );
    assert_eq!(r.race_arrays(), ["p"]);
}

#[test]
fn the_fast_executor_refuses_and_the_reference_semantics_decides() {
    let l = launch(BAD_READ_THEN_WRITE, 1, 4, &[("p", 2, "zeros")]);
    let opts = interp::fast::FastOptions {
        jobs: 1,
        track_races: true,
    };
    let why = interp::fast::run(&l, &opts)
        .expect_err("refused")
        .to_string();
    assert!(why.contains("fence flags computed at run time"), "{why}");
    let c = interp::canonical::run_preferred(
        &l,
        &interp::canonical::Options {
            jobs: 1,
            track_races: true,
        },
    );
    assert_eq!(c.engine, interp::canonical::Engine::Reference);
    assert!(c
        .fallback
        .is_some_and(|f| f.contains("computed at run time")));
    assert_eq!(c.execution.races.len(), 1);
}

#[test]
fn the_trace_shows_each_work_items_fence() {
    let path = tmp("fences-trace").join("k.cl");
    std::fs::write(&path, READ_THEN_WRITE).expect("write");
    let p = path.to_str().expect("utf-8");
    let args = [
        "trace",
        p,
        "--local",
        "4",
        "--global",
        "4",
        "--input",
        "p=zeros:2",
    ];
    let o = ksim(&args);
    assert!(o.status.success(), "{}", text(&o));
    let out = stdout(&o);
    assert!(
        out.contains("K-BARRIER  epoch 1 begins (fence per work-item: t0 local, t1..t3 none)"),
        "{out}"
    );
    let o = ksim(&[&args[..], &["--format", "json"]].concat());
    let barrier = (stdout(&o).lines())
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("JSON"))
        .find(|v| v["event"] == "barrier")
        .expect("a barrier record");
    let fences = barrier["fences"].as_array().expect("per work-item fences");
    assert_eq!(fences.len(), 4);
    assert_eq!(fences[0]["local"], true);
    assert_eq!(fences[1]["local"], false);
}

#[test]
fn the_opencl_generator_passes_each_work_items_flags() {
    let l = launch(READ_THEN_WRITE, 1, 4, &[("p", 2, "zeros")]);
    let cl = gpu::emit::emit(&l).expect("emits");
    let lines: Vec<&str> = cl.lines().map(str::trim).collect();
    let at = (lines.iter())
        .position(|l| *l == "barrier(fence_flags);")
        .unwrap_or_else(|| panic!("the user's barrier with its flags:\n{cl}"));
    assert_eq!(lines[at - 1], "fence_flags = (uint)x;", "{cl}");
}

#[test]
fn ksim_kernels_take_a_variable_as_barrier_flags() {
    let ok = "kernel k(local int a[4]) { uint f = tid == 0 ? 1 : 0; a[tid] = 1; barrier(f); }";
    let k = lang::parse::parse(ok).and_then(|k| lang::check::check(&k));
    let k = k.expect("valid");
    assert!(k.has_item_fences());
    assert!(!k.barriers_order_both());
    let bad = "kernel k() { barrier(tid + 1); }";
    let err = lang::parse::parse(bad)
        .and_then(|k| lang::check::check(&k))
        .expect_err("not a variable");
    assert!(
        err[0]
            .message
            .contains("an integer variable holding OpenCL fence flags"),
        "{}",
        err[0].message
    );
}

/// The race message does not say "no barrier" where a barrier stands between the two
/// accesses: it names the work-item whose own flags left its earlier access unordered.
#[test]
fn the_race_message_names_whose_fence_left_the_access_unordered() {
    let dir = tmp("fences-message");
    let path = dir.join("k.cl");
    std::fs::write(&path, BAD_READ_THEN_WRITE).expect("write");
    let p = path.to_str().expect("utf-8");
    let reports = dir.join("r");
    let r = reports.to_str().expect("utf-8");
    let o = ksim(&[
        "races",
        p,
        "--local",
        "4",
        "--global",
        "4",
        "--input",
        "p=zeros:2",
        "--report-dir",
        r,
    ]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(
        t.contains(
            "with no barrier ordering local memory in between for thread 2's earlier access \
             (a barrier orders a thread's earlier accesses only where its own fence flags name \
             the space)"
        ),
        "{t}"
    );
}
