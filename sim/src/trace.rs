//! The trace view of an execution (`ksim trace`, `ksim replay --trace`): one line, or one
//! JSON record (docs/json.md), per rule application. The caller prints each line as the
//! execution goes (a trace can be longer than memory should hold).

use crate::text::{elem_name, SourceText};
use interp::reference::{BarrierInfo, Rule, StepInfo};
use interp::Launch;
use serde::Serialize;

/// Renders steps and barriers, numbering the steps.
pub struct TraceView<'a> {
    src: SourceText<'a>,
    launch: &'a Launch,
    json: bool,
    step: u64,
}

#[derive(Serialize)]
struct StepRecord<'a> {
    event: &'static str,
    step: u64,
    group: usize,
    thread: usize,
    rule: Rule,
    statement: &'a str,
    line: usize,
    change: &'a str,
}

#[derive(Serialize)]
struct BarrierRecord<'a> {
    event: &'static str,
    rule: &'static str,
    group: usize,
    epoch: u64,
    fence: lang::core::Fence,
    divergence: &'a Option<String>,
}

/// A JSON record with its keys in alphabetical order, on one line.
fn record(r: &impl Serialize) -> String {
    serde_json::to_value(r).expect("JSON").to_string()
}

impl<'a> TraceView<'a> {
    /// `json`: JSON Lines instead of a text table.
    pub fn new(src: SourceText<'a>, launch: &'a Launch, json: bool) -> Self {
        TraceView {
            src,
            launch,
            json,
            step: 0,
        }
    }

    /// The table header of the text form.
    pub fn header(&self) -> Option<String> {
        (!self.json).then(|| {
            format!(
                "{:>6}  {:<9} {:<10} {:<44} changes",
                "step", "thread", "rule", "statement"
            )
        })
    }

    pub fn step(&mut self, info: &StepInfo) -> String {
        let k = &self.launch.kernel;
        // S-ATOMIC changes both: the element, then the variable given its old value.
        let elem = match (&info.write, &info.elem_change) {
            (Some(e), Some((old, new))) => Some(format!(
                "{}: {old} -> {new}",
                elem_name(self.launch, e.array, e.instance, &e.index)
            )),
            _ => None,
        };
        // A temporary of `--atomicity access` is no variable of the source: an S-READ
        // shows the element it read and the value, other steps on temporaries nothing.
        let var = info.var_change.as_ref().and_then(|(v, old, new)| {
            if !interp::atomicity::is_temporary(k, *v) {
                Some(format!("{}: {old} -> {new}", k.vars[*v].name))
            } else {
                (info.rule == interp::reference::Rule::SRead)
                    .then_some(())
                    .and(info.reads.last())
                    .map(|e| {
                        format!(
                            "read {}: {new}",
                            elem_name(self.launch, e.array, e.instance, &e.index)
                        )
                    })
            }
        });
        let change = elem.into_iter().chain(var).collect::<Vec<_>>().join(", ");
        let stmt = self.src.statement(&info.span);
        let line = if self.json {
            record(&StepRecord {
                event: "step",
                step: self.step,
                group: info.thread.group,
                thread: info.thread.local,
                rule: info.rule,
                statement: &stmt,
                line: lang::render::line_col(self.src.text, info.span.start).0,
                change: &change,
            })
        } else {
            format!(
                "{:>6}  g{}.t{:<5} {:<10} {:<44} {}",
                self.step,
                info.thread.group,
                info.thread.local,
                info.rule.name(),
                stmt,
                change
            )
        };
        self.step += 1;
        line
    }

    pub fn barrier(&self, info: &BarrierInfo) -> String {
        if self.json {
            return record(&BarrierRecord {
                event: "barrier",
                rule: "K-BARRIER",
                group: info.group,
                epoch: info.epoch,
                fence: info.fence,
                divergence: &info.divergence,
            });
        }
        format!(
            "{:>6}  g{:<8} {:<10} epoch {} begins{}{}",
            "--",
            info.group,
            "K-BARRIER",
            info.epoch,
            // A barrier that orders one memory space only says which.
            if info.fence == lang::core::Fence::BOTH {
                String::new()
            } else {
                format!(" ({}: orders only that memory space)", info.fence.ksim())
            },
            info.divergence
                .as_ref()
                .map(|d| format!(" (divergence: {d})"))
                .unwrap_or_default()
        )
    }
}
