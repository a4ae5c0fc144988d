//! Shrinking a race's schedule to the happens-before past of the race (`explore --shrink`,
//! for races found by random or PCT sampling; the exhaustive search does the same inside
//! its search, see `dpor::Dpor::race_past`).
//!
//! Replaying a schedule that ends with the second access b of a race (a, b), the events a
//! schedule must contain to reach that race with the same two steps are: a and its
//! happens-before past, the earlier steps of b's thread and their pasts, and every write to
//! an element b reads, with its past (b must read the same values to access the same
//! elements). Happens-before is program order, the order of two steps accessing a common
//! element (one writing it) and, per work-group, K-BARRIER; it is tracked with vector
//! clocks. The set is closed under happens-before, so its steps in the order of the
//! original schedule are an execution in which every step reads what it read before and
//! does the same (the Mazurkiewicz argument of `dpor`): the same race, in the fewest steps
//! of any schedule equivalent to the original one. (A schedule that is not equivalent,
//! with other values read, may be shorter still: only the exhaustive search sees those.)

use super::{FoundRace, Summary};
use crate::schedule::{self, Schedule, Scheduler};
use interp::exec::Observer;
use interp::race::Race;
use interp::reference::{BarrierInfo, StepInfo};
use interp::Launch;
use std::collections::HashMap;

/// Records the steps and barriers of a replay with their vector clocks.
struct Clocks<'a> {
    launch: &'a Launch,
    /// Per thread: its clock (events of each thread that happen before its next step).
    thread: Vec<Vec<u32>>,
    /// Per element: the clock of its last write, and the join of the reads since.
    elems: HashMap<(usize, usize, usize), WriteReads>,
    /// Per step: its thread and its index among that thread's steps (1-based).
    events: Vec<(usize, u32)>,
    /// Steps whose clock is kept, and the clocks.
    watch: (u64, u64),
    first_clock: Option<Vec<u32>>,
    /// The past of the last watched step (see the module documentation).
    past: Option<Vec<u32>>,
}

fn join(a: &mut [u32], b: &[u32]) {
    for (x, y) in a.iter_mut().zip(b) {
        *x = (*x).max(*y);
    }
}

impl Observer for Clocks<'_> {
    fn step(&mut self, info: &StepInfo) {
        let n = self.launch.threads();
        let t = info.thread.group * self.launch.local_size + info.thread.local;
        let step = self.events.len() as u64;
        let mut c = self.thread[t].clone();
        c[t] += 1;
        let before_b = c.clone();
        let mut rf = vec![0u32; n];
        for r in &info.reads {
            if let Some((w, _)) = self.elems.get(&(r.array, r.instance, r.offset)) {
                join(&mut c, w);
                join(&mut rf, w);
            }
        }
        if let Some(w) = &info.write {
            if let Some((lw, reads)) = self.elems.get(&(w.array, w.instance, w.offset)) {
                join(&mut c, lw);
                join(&mut c, reads);
            }
        }
        for r in &info.reads {
            let e = self
                .elems
                .entry((r.array, r.instance, r.offset))
                .or_insert_with(|| (vec![0; n], vec![0; n]));
            join(&mut e.1, &c);
        }
        if let Some(w) = &info.write {
            self.elems
                .insert((w.array, w.instance, w.offset), (c.clone(), vec![0; n]));
        }
        if step == self.watch.0 {
            self.first_clock = Some(c.clone());
        }
        if step == self.watch.1 {
            let mut past = before_b;
            join(&mut past, &rf);
            if let Some(a) = &self.first_clock {
                join(&mut past, a);
            }
            self.past = Some(past);
        }
        self.events.push((t, c[t]));
        self.thread[t] = c;
    }

    fn barrier(&mut self, info: &BarrierInfo) {
        let ls = self.launch.local_size;
        let range = info.group * ls..(info.group + 1) * ls;
        let mut j = vec![0u32; self.launch.threads()];
        for t in range.clone() {
            join(&mut j, &self.thread[t]);
        }
        for t in range {
            self.thread[t] = j.clone();
        }
    }
}

/// The shortest schedule equivalent to `found`'s that reaches the same race (see the module
/// documentation), checked by replaying it; `None` if the replay does not reproduce the
/// race (it always should) or the schedule is already that short.
pub fn shrink(launch: &Launch, found: &FoundRace) -> Option<FoundRace> {
    let (a, b) = (found.race.first.step, found.race.second.step);
    let mut clocks = Clocks {
        launch,
        thread: vec![vec![0; launch.threads()]; launch.threads()],
        elems: HashMap::new(),
        events: Vec::new(),
        watch: (a, b),
        first_clock: None,
        past: None,
    };
    let upto = found.schedule.prefix(b + 1);
    schedule::run(launch, &Scheduler::Replay(upto), &mut clocks);
    let past = clocks.past?;
    let mut sched = Schedule::default();
    for &(t, own) in clocks.events.iter().take(b as usize + 1) {
        if own <= past[t] {
            sched.push(t);
        }
    }
    if sched.len() >= found.schedule.len() {
        return None;
    }
    let (out, _) = schedule::run(
        launch,
        &Scheduler::Replay(sched.clone()),
        &mut interp::exec::Quiet,
    );
    let race: Race = out
        .races
        .into_iter()
        .find(|r| r.key() == found.race.key())?;
    let schedule = sched.prefix(race.second.step + 1);
    Some(FoundRace { race, schedule })
}

/// Shrinks every race of a sampling summary (`--shrink`); returns how many got shorter.
pub fn shrink_races(launch: &Launch, summary: &mut Summary) -> usize {
    let mut shorter = 0;
    for r in &mut summary.races {
        if let Some(s) = shrink(launch, r) {
            *r = s;
            shorter += 1;
        }
    }
    shorter
}

/// An element's clocks: of its last write, and the join of the reads since.
type WriteReads = (Vec<u32>, Vec<u32>);
