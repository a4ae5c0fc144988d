//! Robustness of the explorers (issue 13): executions cut by the step bound, interruption
//! inside one long execution, races handed out as soon as they are found.

use interp::{Launch, LaunchOptions};
use sim::explore::{enumerate, exhaustive, naive, random, Config, Incomplete, Verdict};
use std::sync::Arc;

fn compile(src: &str, local: usize, max_steps: u64) -> Launch {
    let k = lang::parse::parse(src)
        .and_then(|k| lang::check::check(&k))
        .expect("valid kernel");
    let opts = LaunchOptions {
        local_size: Some(local),
        max_steps: Some(max_steps),
        ..Default::default()
    };
    Launch::new(Arc::new(k), &opts).expect("launch")
}

/// Thread 0 never terminates; threads 1 and 2 race on `a[0]` (issue 13, item 1).
const SPIN_THEN_RACE: &str = "kernel looper(global int a[1]) {\n\
    if (tid == 0) { int i = 0; while (i >= 0) { i = i + 1; if (i > 1000) i = 0; } }\n\
    if (tid == 1) a[0] = 1;\n\
    if (tid == 2) a[0] = 2;\n}\n";

#[test]
fn a_thread_at_the_step_bound_does_not_hide_the_race_of_the_others() {
    // The default step bound of `explore` for 4 threads, and small ones the naive explorer
    // can cover.
    for (local, bound) in [(4, 104_000), (3, 12), (3, 16)] {
        let l = compile(SPIN_THEN_RACE, local, bound);
        let e = exhaustive(&l, &Config::default(), None);
        assert_eq!(e.verdict, Verdict::Exhaustive, "bound {bound}");
        assert_eq!(e.races.len(), 1, "bound {bound}: {e:?}");
        assert!(e.non_terminating > 0);
        if bound < 100 {
            let n = naive(&l, &Config::default(), None);
            assert_eq!(n.verdict, Verdict::Exhaustive);
            assert_eq!(e.race_keys(), n.race_keys(), "bound {bound}");
            assert_eq!(e.final_memories(), n.final_memories(), "bound {bound}");
            let en = enumerate(&l, &Config::default());
            assert_eq!(e.race_keys(), en.race_keys(), "bound {bound}");
        }
    }
}
