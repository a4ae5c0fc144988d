//! The exhaustive explorer's race schedules are the shortest of all schedules (issue 11,
//! item 1), checked against brute force: a breadth-first search over every schedule, level
//! by level (all schedules of k steps, then k + 1), with configurations that cannot differ
//! in their future merged. A configuration is the state together with the accesses the
//! race tracker still remembers (those since the group's last barrier; all of them with
//! several groups), which is exactly what decides every later race, so the first level at
//! which a race key appears is the fewest steps of any schedule reaching it.

use interp::race::{AccessKind, RaceKey, RaceTracker};
use interp::reference::State;
use interp::{Launch, LaunchOptions};
use sim::explore::{exhaustive, Config, Verdict};
use sim::{Schedule, Scheduler};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

fn launch_of(text: &str, defines: &[(&str, &str)], inputs: &[(&str, &str)]) -> Launch {
    let k = lang::parse::parse(text)
        .and_then(|k| lang::check::check(&k))
        .expect("valid kernel");
    let opts = LaunchOptions {
        defines: defines
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect(),
        inputs: inputs
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect(),
        max_steps: Some(10_000),
        ..Default::default()
    };
    Launch::new(Arc::new(k), &opts).expect("launch")
}

fn example(file: &str) -> String {
    std::fs::read_to_string(format!("{}/../examples/{file}", env!("CARGO_MANIFEST_DIR")))
        .expect("example")
}

type Remembered = (
    (usize, usize, usize),
    (usize, usize),
    AccessKind,
    (usize, usize),
    u64,
);

/// Per race key, the fewest steps of a schedule that reaches it (brute force).
fn brute_force_minimum(launch: &Launch, max_depth: usize) -> HashMap<RaceKey, u64> {
    let mut state = State::initial(launch);
    let mut tracker = RaceTracker::for_launch(launch);
    for b in sim::explore::fire_all(&mut state, launch) {
        tracker.fired(&b);
    }
    let mut level: Vec<(State, RaceTracker, imbl::OrdSet<Remembered>)> =
        vec![(state, tracker, imbl::OrdSet::new())];
    let mut seen: HashSet<(State, imbl::OrdSet<Remembered>)> = HashSet::new();
    let mut best: HashMap<RaceKey, u64> = HashMap::new();
    for depth in 1..=max_depth as u64 {
        let mut next = Vec::new();
        for (state, tracker, mem) in &level {
            for t in state.runnable().to_vec() {
                let Ok((mut s, info)) = state.step(launch, t) else {
                    continue;
                };
                let mut tr = tracker.clone();
                let mut m = mem.clone();
                let epochs = state.thread_epochs(launch, t);
                for (e, a) in info.accesses(launch, depth - 1, epochs) {
                    m.insert((
                        (e.array, e.instance, e.offset),
                        (info.thread.group, info.thread.local),
                        a.kind,
                        (info.span.start, info.span.end),
                        a.epoch,
                    ));
                    for race in tr.access(e.array, e.instance, e.offset, &e.index, a) {
                        best.entry(race.key()).or_insert(depth);
                    }
                }
                let fired = sim::explore::fire_all(&mut s, launch);
                for b in &fired {
                    tr.fired(b);
                }
                if !fired.is_empty() && launch.groups == 1 {
                    m = imbl::OrdSet::new();
                }
                if seen.insert((s.clone(), m.clone())) {
                    next.push((s, tr, m));
                }
            }
        }
        if next.is_empty() {
            break;
        }
        level = next;
    }
    best
}

/// Explores `launch` exhaustively and checks every race's schedule: it replays to the race,
/// and its length is the brute-force minimum. Returns the lengths.
fn check_minimal(launch: &Launch, max_depth: usize) -> Vec<u64> {
    let s = exhaustive(launch, &Config::default(), None);
    assert_eq!(s.verdict, Verdict::Exhaustive);
    assert!(!s.races.is_empty(), "a racy kernel");
    let best = brute_force_minimum(launch, max_depth);
    let mut lens = Vec::new();
    for r in &s.races {
        let key = r.race.key();
        let (out, _) = sim::run(
            launch,
            &Scheduler::Replay(r.schedule.clone()),
            &mut interp::exec::Quiet,
        );
        assert!(
            out.races.iter().any(|x| x.key() == key),
            "the schedule {:?} reproduces its race",
            r.schedule
        );
        assert_eq!(r.race.second.step + 1, r.schedule.len());
        let min = *best
            .get(&key)
            .unwrap_or_else(|| panic!("brute force finds every race within {max_depth} steps"));
        assert_eq!(
            r.schedule.len(),
            min,
            "race {:?}: schedule {:?} is not the shortest",
            key,
            r.schedule
        );
        lens.push(min);
    }
    assert_eq!(best.len(), s.races.len(), "the same race keys");
    lens
}

#[test]
fn kogge_stone_racy_n4_race_schedule_is_the_shortest() {
    let l = launch_of(
        &example("kogge_stone_racy.ksim"),
        &[("n", "4")],
        &[("in", "iota")],
    );
    let lens = check_minimal(&l, 30);
    // The hand-written schedule has 14 steps: 0 1 2 3 1×6 2×4.
    assert_eq!(lens, vec![14]);
}

#[test]
fn blelloch_missing_barrier_race_schedules_are_the_shortest() {
    let l = launch_of(
        &example("blelloch_missing_barrier.ksim"),
        &[("n", "4")],
        &[("in", "iota")],
    );
    check_minimal(&l, 60);
}

/// Two groups (no state caching, one search segment) and an index that depends on a value
/// read: the write's element is decided by what the read returned.
#[test]
fn two_group_data_dependent_race_schedules_are_the_shortest() {
    let text = "kernel dd(global int a[4], global int b[4]) launch(groups = 2, local_size = 2) {\n\
        int x = a[tid];\n\
        barrier();\n\
        b[x % 4] = tid;\n\
        if (tid == 3) a[0] = 1;\n}\n";
    let l = launch_of(text, &[], &[("a", "0,1,1,3")]);
    check_minimal(&l, 40);
}

/// A schedule of the race found by random sampling, shrunk (`--shrink`), still reaches the
/// race, is no longer than before, and is not shorter than the minimum.
#[test]
fn shrunk_sampled_schedules_reach_the_race_and_are_no_longer() {
    let l = launch_of(
        &example("kogge_stone_racy.ksim"),
        &[("n", "4")],
        &[("in", "iota")],
    );
    let mut s = sim::explore::random(&l, 20, 3, &Config::default(), None);
    let before: Vec<Schedule> = s.races.iter().map(|r| r.schedule.clone()).collect();
    sim::explore::shrink_races(&l, &mut s);
    let best = brute_force_minimum(&l, 30);
    for (r, old) in s.races.iter().zip(&before) {
        assert!(r.schedule.len() <= old.len());
        assert!(r.schedule.len() >= best[&r.race.key()]);
        let (out, _) = sim::run(
            &l,
            &Scheduler::Replay(r.schedule.clone()),
            &mut interp::exec::Quiet,
        );
        assert!(out.races.iter().any(|x| x.key() == r.race.key()));
    }
    // Random schedules interleave the threads; the race needs only a few of them.
    assert!(s
        .races
        .iter()
        .zip(&before)
        .any(|(r, o)| r.schedule.len() < o.len()));
}
