//! The teaching options of `ksim trace` (issue 12): core-form statements, reads, thread and
//! step filters, per-barrier snapshots of the arrays (POPL 2014, Figure 3), and the steps
//! of a race marked.
//!
//! The trace's observer sees steps, not states, so it keeps a shadow copy of the arrays,
//! updated from each step's write: that gives the values a step read and the arrays at
//! every K-BARRIER.

use super::common::elem_name;
use clap::Args;
use interp::exec::Quiet;
use interp::notation;
use interp::reference::{BarrierInfo, StepInfo};
use interp::{Launch, Memory};
use sim::Scheduler;
use std::collections::BTreeMap;
use std::ops::Range;

#[derive(Args, Debug, Default, Clone)]
pub struct TraceView {
    /// Show statements in the core form of Figure 4 (`while`, `:=`), the form the rules
    /// are stated over, instead of the source text.
    #[arg(long)]
    pub core: bool,
    /// Show the elements each step read, with their values, beside its writes.
    #[arg(long)]
    pub reads: bool,
    /// Show only the steps of this thread (global index, as in `--schedule`); the
    /// K-BARRIER lines of its work-group stay.
    #[arg(long, value_name = "T")]
    pub thread: Option<usize>,
    /// Show only steps A to B-1 (`--steps 10..20`; `10..` to the end).
    #[arg(long, value_name = "A..B", value_parser = parse_steps)]
    pub steps: Option<Range<u64>>,
    /// Instead of one line per step, print the arrays the kernel writes after every
    /// K-BARRIER, one row per barrier epoch (as Figure 3 of the POPL 2014 paper).
    #[arg(long)]
    pub snapshots: bool,
}

fn parse_steps(s: &str) -> Result<Range<u64>, String> {
    let (a, b) = s
        .split_once("..")
        .ok_or_else(|| format!("`{s}` is not A..B"))?;
    let num = |x: &str, default: u64| -> Result<u64, String> {
        if x.trim().is_empty() {
            Ok(default)
        } else {
            x.trim()
                .parse()
                .map_err(|_| format!("`{x}` in `{s}` is not a step number"))
        }
    };
    let (a, b) = (num(a, 0)?, num(b, u64::MAX)?);
    if a > b {
        return Err(format!("`{s}` is empty: {a} > {b}"));
    }
    Ok(a..b)
}

impl TraceView {
    /// Whether step `index` of `thread` (global) is shown.
    pub fn shows_step(&self, index: u64, thread: usize) -> bool {
        self.thread.is_none_or(|t| t == thread)
            && self.steps.as_ref().is_none_or(|r| r.contains(&index))
            && !self.snapshots
    }

    /// Whether a K-BARRIER of `group` fired after `steps` K-STEPs is shown.
    pub fn shows_barrier(&self, launch: &Launch, steps: u64, group: usize) -> bool {
        self.thread.is_none_or(|t| t / launch.local_size == group)
            && self
                .steps
                .as_ref()
                .is_none_or(|r| steps > r.start && steps <= r.end)
            && !self.snapshots
    }
}

/// The steps taking part in a race, with a note naming the race: found by running the same
/// schedule once beforehand (every scheduler is deterministic), so that the first access
/// can be marked although the race is only known at the second.
pub fn racing_steps(launch: &Launch, scheduler: &Scheduler) -> BTreeMap<u64, String> {
    let (out, _) = sim::run(launch, scheduler, &mut Quiet);
    let mut marks = BTreeMap::new();
    for r in &out.races {
        let elem = elem_name(launch, r.array, r.instance, &r.index);
        marks
            .entry(r.first.step)
            .or_insert_with(|| format!("RACE on {elem} with step {}", r.second.step));
        marks
            .entry(r.second.step)
            .or_insert_with(|| format!("RACE on {elem} with step {}", r.first.step));
    }
    marks
}

/// The arrays as the trace goes: the launch's initial arrays plus every step's write.
pub struct Shadow {
    memory: Memory,
}

impl Shadow {
    pub fn new(launch: &Launch) -> Shadow {
        Shadow {
            memory: launch.initial_memory(),
        }
    }

    /// `reads out[0]=1 out[1]=2`, the values before the step.
    pub fn reads(&self, launch: &Launch, info: &StepInfo) -> String {
        if info.reads.is_empty() {
            return String::new();
        }
        let items: Vec<String> = info
            .reads
            .iter()
            .map(|e| {
                let v = &self.memory.arrays[e.array][e.instance][e.offset];
                format!(
                    "{}={}",
                    elem_name(launch, e.array, e.instance, &e.index),
                    notation::value(v)
                )
            })
            .collect();
        format!("reads {}", items.join(" "))
    }

    pub fn apply(&mut self, info: &StepInfo) {
        if let (Some(e), Some((_, new))) = (&info.write, &info.elem_change) {
            self.memory.arrays[e.array][e.instance][e.offset] = new.clone();
        }
    }

    /// One snapshot row: the arrays the kernel writes (not `const`), as group `group` sees
    /// them (its copy of each `local` array).
    pub fn row(&self, launch: &Launch, group: usize) -> Vec<String> {
        launch
            .kernel
            .arrays
            .iter()
            .enumerate()
            .filter(|(_, a)| !a.is_const)
            .map(|(a, _)| {
                let inst = launch.instance_of(a, group);
                self.memory.arrays[a][inst]
                    .iter()
                    .map(notation::value)
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect()
    }
}

/// The `--snapshots` table: a row for the initial arrays, one per K-BARRIER, one for the
/// end.
#[derive(Default)]
pub struct Snapshots {
    rows: Vec<(String, String, Vec<String>)>,
}

impl Snapshots {
    pub fn initial(&mut self, launch: &Launch, shadow: &Shadow) {
        self.rows
            .push(("initial".into(), String::new(), shadow.row(launch, 0)));
    }

    pub fn barrier(&mut self, launch: &Launch, shadow: &Shadow, number: u64, b: &BarrierInfo) {
        let group = if launch.groups > 1 {
            format!("g{} ", b.group)
        } else {
            String::new()
        };
        self.rows.push((
            format!("B{number}"),
            format!("{group}{}", b.epoch),
            shadow.row(launch, b.group),
        ));
    }

    pub fn print(&self, launch: &Launch, shadow: &Shadow) {
        let names: Vec<&str> = launch
            .kernel
            .arrays
            .iter()
            .filter(|a| !a.is_const)
            .map(|a| a.name.as_str())
            .collect();
        let mut rows = self.rows.clone();
        rows.push(("end".into(), String::new(), shadow.row(launch, 0)));
        let widths: Vec<usize> = (0..names.len())
            .map(|c| {
                rows.iter()
                    .map(|r| r.2[c].chars().count())
                    .chain([names[c].len()])
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let mut header = format!("{:<9} {:<6}", "K-BARRIER", "epoch");
        for (n, w) in names.iter().zip(&widths) {
            header.push_str(&format!(" | {n:<w$}"));
        }
        println!("{}", header.trim_end());
        for (label, epoch, cells) in &rows {
            let mut line = format!("{label:<9} {epoch:<6}");
            for (c, w) in cells.iter().zip(&widths) {
                let pad = w.saturating_sub(c.chars().count());
                line.push_str(&format!(" | {c}{}", " ".repeat(pad)));
            }
            println!("{}", line.trim_end());
        }
    }
}
