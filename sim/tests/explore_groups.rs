//! State caching with several work-groups (issue 11.2): sound where no element is shared
//! by two groups with a write, off (and said so) where one is, and in both cases the same
//! findings as the naive explorer.

use interp::{Launch, LaunchOptions};
use sim::explore::dpor::CACHING_OFF_SHARED;
use sim::explore::{exhaustive, naive, Config, Summary, Verdict};
use std::sync::Arc;

fn launch_of(text: &str, defines: &[(&str, &str)]) -> Launch {
    let k = lang::parse::parse(text)
        .and_then(|k| lang::check::check(&k))
        .expect("valid kernel");
    let opts = LaunchOptions {
        defines: defines
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect(),
        max_steps: Some(100_000),
        ..Default::default()
    };
    Launch::new(Arc::new(k), &opts).expect("launch")
}

fn tickets(barriers: usize) -> Launch {
    let path = format!(
        "{}/../tests/kernels/group_tickets.ksim",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(path).expect("kernel");
    launch_of(&text, &[("n", "2"), ("b", &barriers.to_string())])
}

fn same(a: &Summary, b: &Summary) {
    assert_eq!(a.final_memories(), b.final_memories(), "final stores");
    assert_eq!(a.race_keys(), b.race_keys(), "races");
    assert_eq!(a.fault_keys(), b.fault_keys(), "faults");
}

#[test]
fn race_free_two_group_executions_do_not_grow_with_the_barriers() {
    let cfg = Config::default();
    let runs: Vec<Summary> = [1, 4, 8]
        .iter()
        .map(|&b| exhaustive(&tickets(b), &cfg, None))
        .collect();
    for s in &runs {
        assert_eq!(s.verdict, Verdict::Exhaustive);
        assert_eq!(s.caching_off, None, "caching is on");
        assert!(s.races.is_empty() && s.faults.is_empty());
        assert_eq!(s.finals.len(), 1);
        assert!(
            s.cache_hits > 0,
            "orders of the tickets meet again at barriers"
        );
    }
    // Without caching every interval of every group doubles the executions (2^(2b)).
    assert_eq!(runs[1].complete, runs[0].complete);
    assert_eq!(runs[2].complete, runs[0].complete);
    // One distinct state per barrier of each group, plus the start and the end of group 0.
    assert!(runs[2].states > runs[1].states);
}

#[test]
fn caching_with_two_groups_agrees_with_naive() {
    let text = "kernel t(local int c[1], global int out[4]) launch(groups = 2, local_size = 2) {\n\
        atomic_inc(c[0]);\n barrier();\n out[gid] = c[0];\n atomic_inc(c[0]);\n barrier();\n}\n";
    let l = launch_of(text, &[]);
    let e = exhaustive(&l, &Config::default(), None);
    let n = naive(&l, &Config::default(), None);
    assert_eq!(n.verdict, Verdict::Exhaustive, "the naive search finished");
    assert_eq!(e.verdict, Verdict::Exhaustive);
    assert_eq!(e.caching_off, None);
    assert!(e.cache_hits > 0);
    same(&e, &n);
}

/// A `global` element written by both groups in the canonical execution: no caching.
#[test]
fn a_global_element_written_by_two_groups_turns_caching_off() {
    let text = "kernel w(global int A[1]) launch(groups = 2, local_size = 2) {\n\
        A[0] = tid;\n barrier();\n A[0] = tid + 1;\n}\n";
    let l = launch_of(text, &[]);
    let e = exhaustive(&l, &Config::default(), None);
    assert_eq!(e.caching_off, Some(CACHING_OFF_SHARED));
    same(&e, &naive(&l, &Config::default(), None));
}

/// The groups share an element only on a schedule other than the canonical one (which
/// element group 0 writes depends on its local race): the search meets it, starts again
/// without caching, and says so.
#[test]
fn sharing_found_during_the_search_restarts_it_without_caching() {
    let text =
        "kernel cross(local int l[1], global int out[2]) launch(groups = 2, local_size = 2) {\n\
        l[0] = tid;\n\
        barrier();\n\
        if (tid == 0) { out[(group_id + l[0]) % 2] = 1; }\n}\n";
    let l = launch_of(text, &[]);
    // The canonical execution alone does not share an element.
    let canonical = interp::exec::run_canonical(&l);
    assert!(canonical
        .races
        .iter()
        .all(|r| r.first.thread.group == r.second.thread.group));
    let e = exhaustive(&l, &Config::default(), None);
    assert_eq!(e.verdict, Verdict::Exhaustive);
    assert_eq!(e.caching_off, Some(CACHING_OFF_SHARED));
    let n = naive(&l, &Config::default(), None);
    same(&e, &n);
    assert!(
        e.races
            .iter()
            .any(|r| r.race.first.thread.group != r.race.second.thread.group),
        "the cross-group race on `out` is found"
    );
}
