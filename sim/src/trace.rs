//! The trace view of an execution (`ksim trace`, `ksim replay --trace`): one line, or one
//! JSON record (docs/json.md), per rule application. The caller prints each line as the
//! execution goes (a trace can be longer than memory should hold).
//!
//! The teaching options of issue 12 ([`Options`]) live here too: statements in the core
//! form, each step's reads, thread and step filters, numbered K-BARRIER steps, per-barrier
//! snapshots of the arrays (POPL 2014, Figure 3) and the steps of a race marked. The view
//! sees steps, not states, so it keeps a shadow copy of the arrays, updated from each
//! step's write: that gives the values a step read and the arrays at every K-BARRIER.

use crate::pad;
use crate::text::{elem_name, SourceText};
use crate::Scheduler;
use interp::exec::Quiet;
use interp::notation;
use interp::reference::{BarrierInfo, Rule, StepInfo, WarpStep};
use interp::{Launch, Memory};
use serde::Serialize;
use std::collections::BTreeMap;
use std::ops::Range;

/// What a trace shows beyond one source line per step (the teaching options of `trace`).
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Statements in the core form of Figure 4 (`while`, `:=`), the form the rules are
    /// stated over, instead of the source text.
    pub core: bool,
    /// Each step's reads, with their values, beside its writes.
    pub reads: bool,
    /// Only the steps of this thread (global index, as in schedules); the K-BARRIER lines
    /// of its work-group stay.
    pub thread: Option<usize>,
    /// Only steps A to B-1.
    pub steps: Option<Range<u64>>,
    /// No step lines: the arrays after every K-BARRIER ([`TraceView::snapshot_table`]).
    pub snapshots: bool,
}

impl Options {
    /// Whether step `index` of `thread` (global) is shown.
    fn shows_step(&self, index: u64, thread: usize) -> bool {
        self.thread.is_none_or(|t| t == thread)
            && self.steps.as_ref().is_none_or(|r| r.contains(&index))
            && !self.snapshots
    }

    /// Whether a K-BARRIER of `group` fired after `steps` K-STEPs is shown.
    fn shows_barrier(&self, launch: &Launch, steps: u64, group: usize) -> bool {
        self.thread.is_none_or(|t| t / launch.local_size == group)
            && (self.steps.as_ref()).is_none_or(|r| steps > r.start && steps <= r.end)
            && !self.snapshots
    }
}

/// `A..B`, `A..` (to the end) or `..B` as a range of step numbers.
pub fn parse_steps(s: &str) -> Result<Range<u64>, String> {
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

/// The steps taking part in a race, with a note naming the race: found by running the same
/// schedule once beforehand (every scheduler is deterministic), so that the first access
/// can be marked although the race is only known at the second.
pub fn racing_steps(launch: &Launch, scheduler: &Scheduler) -> BTreeMap<u64, String> {
    let (out, _) = crate::run(launch, scheduler, &mut Quiet);
    race_marks(launch, &out.races)
}

/// Both steps of every race, each with a note naming the race and the other step.
pub fn race_marks(launch: &Launch, races: &[interp::Race]) -> BTreeMap<u64, String> {
    let mut marks = BTreeMap::new();
    for r in races {
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

/// One snapshot row: the arrays the kernel writes (not `const`), as work-group `group`
/// sees them (its copy of each `local` array), each as its values in the paper's notation.
pub fn snapshot_row(launch: &Launch, memory: &Memory, group: usize) -> Vec<String> {
    (launch.kernel.arrays.iter().enumerate())
        .filter(|(_, a)| !a.is_const)
        .map(|(a, _)| {
            let inst = launch.instance_of(a, group);
            (memory.arrays[a][inst].iter())
                .map(notation::value)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

/// Renders steps and barriers, numbering the steps (K-STEPs, as schedules and race reports
/// count them) and the K-BARRIER applications (B1, B2, ...).
pub struct TraceView<'a> {
    src: SourceText<'a>,
    launch: &'a Launch,
    json: bool,
    step: u64,
    opts: Options,
    /// Steps taking part in a race, with a note ([`racing_steps`]).
    racing: BTreeMap<u64, String>,
    shadow: Memory,
    barriers: u64,
    /// `(label, epoch, cells per written array)`: the initial arrays, then one row per
    /// K-BARRIER.
    snapshots: Vec<(String, String, Vec<String>)>,
}

#[derive(Serialize, schemars::JsonSchema)]
pub(crate) struct StepRecord<'a> {
    event: &'static str,
    step: u64,
    group: usize,
    thread: usize,
    rule: Rule,
    statement: &'a str,
    core: &'a str,
    /// The statement's line in its file: the kernel's, or `file`.
    line: usize,
    /// The `#include`d file holding the statement (`null`: the kernel's own file).
    file: Option<&'a str>,
    change: &'a str,
    race: Option<&'a str>,
    reads: Option<&'a str>,
}

/// One warp instruction (`--warp-size`): its active lanes and each lane's changes.
#[derive(Serialize, schemars::JsonSchema)]
pub(crate) struct WarpRecord<'a> {
    event: &'static str,
    step: u64,
    group: usize,
    /// The warp's number within its work-group.
    warp: usize,
    /// The active lanes' local thread ids, increasing.
    threads: Vec<usize>,
    /// One character per lane of the warp, lane 0 first: `1` active, `0` masked.
    mask: &'a str,
    /// The rule every active lane took, or `S-ITE-T/F` / `S-LOOP-T/F` when they diverged.
    rule: &'a str,
    divergent: bool,
    statement: &'a str,
    core: &'a str,
    /// The statement's line in its file: the kernel's, or `file`.
    line: usize,
    /// The `#include`d file holding the statement (`null`: the kernel's own file).
    file: Option<&'a str>,
    /// Every lane's changes, `tN: ...`, separated by `, `.
    change: &'a str,
    race: Option<&'a str>,
    reads: Option<&'a str>,
}

#[derive(Serialize, schemars::JsonSchema)]
pub(crate) struct BarrierRecord<'a> {
    event: &'static str,
    rule: &'static str,
    number: u64,
    group: usize,
    epoch: u64,
    fence: lang::core::Fence,
    /// Each work-item's fence (local id order), when the barrier's flags are computed at
    /// run time; left out otherwise.
    #[serde(default, skip_serializing_if = "<[_]>::is_empty")]
    fences: &'a [lang::core::Fence],
    divergence: &'a Option<String>,
}

/// Each work-item's fence of a barrier whose flags are computed at run time, as runs of
/// local ids: `t0 local, t1..t1023 none`.
fn item_fences(fences: &[lang::core::Fence]) -> String {
    let name = |f: lang::core::Fence| match (f.local, f.global) {
        (true, true) => "local|global",
        (true, false) => "local",
        (false, true) => "global",
        (false, false) => "none",
    };
    let mut runs: Vec<(usize, usize, lang::core::Fence)> = Vec::new();
    for (t, &f) in fences.iter().enumerate() {
        match runs.last_mut() {
            Some((_, end, g)) if *g == f => *end = t,
            _ => runs.push((t, t, f)),
        }
    }
    let runs: Vec<String> = runs
        .into_iter()
        .map(|(a, b, f)| match a == b {
            true => format!("t{a} {}", name(f)),
            false => format!("t{a}..t{b} {}", name(f)),
        })
        .collect();
    runs.join(", ")
}

/// A JSON record with its keys in alphabetical order, on one line.
fn record(r: &impl Serialize) -> String {
    serde_json::to_value(r).expect("JSON").to_string()
}

impl<'a> TraceView<'a> {
    /// `json`: JSON Lines instead of a text table.
    pub fn new(src: SourceText<'a>, launch: &'a Launch, json: bool) -> Self {
        let mut view = TraceView {
            src,
            launch,
            json,
            step: 0,
            opts: Options::default(),
            racing: BTreeMap::new(),
            shadow: launch.initial_memory(),
            barriers: 0,
            snapshots: Vec::new(),
        };
        let row = view.row(0);
        view.snapshots.push(("initial".into(), String::new(), row));
        view
    }

    /// With the teaching options and the racing steps to mark.
    pub fn with_options(mut self, opts: Options, racing: BTreeMap<u64, String>) -> Self {
        self.opts = opts;
        self.racing = racing;
        self
    }

    /// The table header of the text form (none for JSON or snapshots).
    pub fn header(&self) -> Option<String> {
        (!self.json && !self.opts.snapshots).then(|| {
            format!(
                "{:>6}  {:<9} {:<10} {:<44} changes",
                "step",
                if self.launch.warp_size.is_some() {
                    "warp"
                } else {
                    "thread"
                },
                "rule",
                "statement"
            )
        })
    }

    /// The line of a step, or `None` when the options filter it out.
    pub fn step(&mut self, info: &StepInfo) -> Option<String> {
        let index = self.step;
        self.step += 1;
        let global = info.thread.group * self.launch.local_size + info.thread.local;
        let line = self
            .opts
            .shows_step(index, global)
            .then(|| self.step_line(index, info));
        self.apply(info);
        line
    }

    /// The line of a warp instruction (`--warp-size`), or `None` when the options filter
    /// it out: the warp, its active mask, the rule, the statement, each lane's changes. With
    /// `--thread` the instructions in which that thread is active are shown.
    pub fn warp(&mut self, step: &WarpStep) -> Option<String> {
        let index = self.step;
        self.step += 1;
        let local_size = self.launch.local_size;
        let shown = (step.lanes.iter())
            .any(|i| (self.opts).shows_step(index, i.thread.group * local_size + i.thread.local));
        let line = shown.then(|| self.warp_line(index, step));
        for info in &step.lanes {
            self.apply(info);
        }
        line
    }

    fn warp_line(&self, index: u64, step: &WarpStep) -> String {
        let first = &step.lanes[0];
        let size = self.launch.warp_size.unwrap_or(1);
        let base = first.thread.local / size * size;
        let mut mask = vec![b'0'; size.min(self.launch.local_size - base)];
        for info in &step.lanes {
            mask[info.thread.local - base] = b'1';
        }
        let mask = String::from_utf8(mask).expect("ASCII");
        let rule = if !step.divergent {
            first.rule.name()
        } else if matches!(first.rule, Rule::SIteT | Rule::SIteF) {
            "S-ITE-T/F"
        } else {
            "S-LOOP-T/F"
        };
        let changes: Vec<String> = (step.lanes.iter())
            .filter_map(|info| {
                let c = self.change(info);
                (!c.is_empty()).then(|| format!("t{}: {c}", info.thread.local))
            })
            .collect();
        let change = changes.join(", ");
        let k = &self.launch.kernel;
        let stmt = self.src.statement(&first.span);
        let core = notation::find_stmt(k, &first.span, first.rule)
            .map(|s| notation::stmt(k, s))
            .unwrap_or_else(|| stmt.clone());
        let reads = self.opts.reads.then(|| {
            let all: Vec<String> = (step.lanes.iter())
                .map(|i| self.reads(i))
                .filter(|r| !r.is_empty())
                .collect();
            all.join(", ")
        });
        let race = self.racing.get(&index).map(String::as_str);
        let threads: Vec<usize> = step.lanes.iter().map(|i| i.thread.local).collect();
        if self.json {
            return record(&WarpRecord {
                event: "warp",
                step: index,
                group: first.thread.group,
                warp: base / size,
                threads,
                mask: &mask,
                rule,
                divergent: step.divergent,
                statement: &stmt,
                core: &core,
                line: self.src.line(first.span.start),
                file: self.src.included_file(first.span.start),
                change: &change,
                race,
                reads: reads.as_deref(),
            });
        }
        let notes: Vec<&str> = [Some(change.as_str()), reads.as_deref(), race]
            .into_iter()
            .flatten()
            .filter(|s| !s.is_empty())
            .collect();
        let line = format!(
            "{:>6}  g{}.w{:<5} {:<10} {:<44} mask {mask}; {}",
            index,
            first.thread.group,
            base / size,
            rule,
            if self.opts.core { &core } else { &stmt },
            notes.join("; ")
        );
        line.trim_end().trim_end_matches(';').to_string()
    }

    /// What a step changed: the element written, the variable assigned (`a[1]: 0 -> 2,
    /// x: 1 -> 2`).
    fn change(&self, info: &StepInfo) -> String {
        let k = &self.launch.kernel;
        // S-ATOMIC changes both: the element, then the variable given its old value.
        let elem = match (&info.write, &info.elem_change) {
            (Some(e), Some((old, new))) => Some(format!(
                "{}: {} -> {}",
                elem_name(self.launch, e.array, e.instance, &e.index),
                notation::value(old),
                notation::value(new)
            )),
            _ => None,
        };
        // A temporary of `--atomicity access` is no variable of the source: an S-READ
        // shows the element it read and the value, other steps on temporaries nothing.
        let var = info.var_change.as_ref().and_then(|(v, old, new)| {
            if !interp::atomicity::is_temporary(k, *v) {
                Some(format!(
                    "{}: {} -> {}",
                    k.vars[*v].name,
                    notation::value(old),
                    notation::value(new)
                ))
            } else {
                (info.rule == interp::reference::Rule::SRead)
                    .then_some(())
                    .and(info.reads.last())
                    .map(|e| {
                        format!(
                            "read {}: {}",
                            elem_name(self.launch, e.array, e.instance, &e.index),
                            notation::value(new)
                        )
                    })
            }
        });
        elem.into_iter().chain(var).collect::<Vec<_>>().join(", ")
    }

    fn step_line(&self, index: u64, info: &StepInfo) -> String {
        let k = &self.launch.kernel;
        let change = self.change(info);
        let stmt = self.src.statement(&info.span);
        let core = notation::find_stmt(k, &info.span, info.rule)
            .map(|s| notation::stmt(k, s))
            .unwrap_or_else(|| stmt.clone());
        let reads = self.opts.reads.then(|| self.reads(info));
        let race = self.racing.get(&index).map(String::as_str);
        if self.json {
            return record(&StepRecord {
                event: "step",
                step: index,
                group: info.thread.group,
                thread: info.thread.local,
                rule: info.rule,
                statement: &stmt,
                core: &core,
                line: self.src.line(info.span.start),
                file: self.src.included_file(info.span.start),
                change: &change,
                race,
                reads: reads.as_deref(),
            });
        }
        // A statement of an included file says where it is.
        let shown = if self.opts.core { &core } else { &stmt };
        let shown = match self.src.included_file(info.span.start) {
            Some(_) => format!("{}: {shown}", self.src.at(info.span.start)),
            None => shown.clone(),
        };
        let notes: Vec<&str> = [Some(change.as_str()), reads.as_deref(), race]
            .into_iter()
            .flatten()
            .filter(|s| !s.is_empty())
            .collect();
        let line = format!(
            "{:>6}  g{}.t{:<5} {:<10} {:<44} {}",
            index,
            info.thread.group,
            info.thread.local,
            info.rule.name(),
            shown,
            notes.join("; ")
        );
        line.trim_end().to_string()
    }

    /// `reads out[0]=1 out[1]=2`, the values before the step.
    fn reads(&self, info: &StepInfo) -> String {
        if info.reads.is_empty() {
            return String::new();
        }
        let items: Vec<String> = (info.reads.iter())
            .map(|e| {
                let v = &self.shadow.arrays[e.array][e.instance][e.offset];
                let name = elem_name(self.launch, e.array, e.instance, &e.index);
                format!("{name}={}", notation::value(v))
            })
            .collect();
        format!("reads {}", items.join(" "))
    }

    fn apply(&mut self, info: &StepInfo) {
        if let (Some(e), Some((_, new))) = (&info.write, &info.elem_change) {
            self.shadow.arrays[e.array][e.instance][e.offset] = new.clone();
        }
    }

    /// The line of a K-BARRIER application, or `None` when the options filter it out.
    pub fn barrier(&mut self, info: &BarrierInfo) -> Option<String> {
        self.barriers += 1;
        let group = if self.launch.groups > 1 {
            format!("g{} ", info.group)
        } else {
            String::new()
        };
        let row = self.row(info.group);
        self.snapshots.push((
            format!("B{}", self.barriers),
            format!("{group}{}", info.epoch),
            row,
        ));
        if !(self.opts).shows_barrier(self.launch, self.step, info.group) {
            return None;
        }
        if self.json {
            return Some(record(&BarrierRecord {
                event: "barrier",
                rule: "K-BARRIER",
                number: self.barriers,
                group: info.group,
                epoch: info.epoch,
                fence: info.fence,
                fences: &info.fences,
                divergence: &info.divergence,
            }));
        }
        Some(format!(
            "{:>6}  g{:<8} {:<10} epoch {} begins{}{}",
            format!("B{}", self.barriers),
            info.group,
            "K-BARRIER",
            info.epoch,
            // A barrier that orders one memory space only says which; one whose flags are
            // computed at run time gives each work-item's fence.
            if !info.fences.is_empty() {
                format!(" (fence per work-item: {})", item_fences(&info.fences))
            } else if info.fence == lang::core::Fence::BOTH {
                String::new()
            } else {
                format!(" ({}: orders only that memory space)", info.fence.ksim())
            },
            info.divergence
                .as_ref()
                .map(|d| format!(" (divergence: {d})"))
                .unwrap_or_default()
        ))
    }

    fn row(&self, group: usize) -> Vec<String> {
        snapshot_row(self.launch, &self.shadow, group)
    }

    /// The `--snapshots` table (Figure 3 of the POPL 2014 paper): a row for the initial
    /// arrays, one per K-BARRIER (with its group and the epoch it begins), one for the end.
    pub fn snapshot_table(&self) -> String {
        let names: Vec<&str> = (self.launch.kernel.arrays.iter())
            .filter(|a| !a.is_const)
            .map(|a| a.name.as_str())
            .collect();
        let mut rows = self.snapshots.clone();
        rows.push(("end".into(), String::new(), self.row(0)));
        let widths: Vec<usize> = (0..names.len())
            .map(|c| {
                (rows.iter().map(|r| r.2[c].chars().count()))
                    .chain([names[c].len()])
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let mut out = String::new();
        let mut header = format!("{:<9} {:<6}", "K-BARRIER", "epoch");
        for (n, w) in names.iter().zip(&widths) {
            header.push_str(&format!(" | {}", pad::left(n, *w)));
        }
        out.push_str(header.trim_end());
        out.push('\n');
        for (label, epoch, cells) in &rows {
            let mut line = format!("{label:<9} {epoch:<6}");
            for (c, w) in cells.iter().zip(&widths) {
                let pad = w.saturating_sub(c.chars().count());
                line.push_str(&format!(" | {c}{}", " ".repeat(pad)));
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }
}
