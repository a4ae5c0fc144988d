//! `ksim step`'s text: the configuration of Figure 7 (per thread its variables, status and
//! next statement with the rule that would fire; the arrays with the cells the last step
//! wrote marked), the line of one K-STEP, and K-BARRIER lines. The stepper itself is
//! [`interp::stepper`]; the CLI reads commands and prints these.

use crate::pad;
use crate::text::SourceText;
use interp::notation;
use interp::reference::BarrierInfo;
use interp::stepper::{Config, Status, Step};
use interp::Launch;
use std::fmt::Write as _;

/// The most values (every thread's variables and every array element) `ksim step` shows:
/// it prints the whole configuration after every command, so a larger launch would print
/// megabytes per command (2^20 threads: 114 MB), no view for a person to read.
pub const MAX_VALUES: u64 = 20_000;

/// Refuses a launch whose configuration has more than [`MAX_VALUES`] values.
pub fn check_size(launch: &Launch) -> Result<(), String> {
    let k = &launch.kernel;
    let vars = launch.threads() as u64 * k.vars.len() as u64;
    let elements: u64 = (0..k.arrays.len())
        .map(|a| (launch.len(a) * launch.instances(a)) as u64)
        .sum();
    if vars + elements > MAX_VALUES {
        return Err(format!(
            "this launch is too large for `ksim step`, which prints the whole configuration \
             after every command: {} threads with {vars} variables and {elements} array \
             elements (at most {MAX_VALUES} values together); step a smaller launch, or use \
             `ksim trace`",
            launch.threads()
        ));
    }
    Ok(())
}

/// Renders a stepping session's configurations and steps against its source.
pub struct StepView<'a> {
    pub source: SourceText<'a>,
    pub launch: &'a Launch,
}

impl StepView<'_> {
    /// `K-BARRIER fires in group 0: epoch 1 begins`
    pub fn barrier_line(&self, b: &BarrierInfo) -> String {
        format!(
            "K-BARRIER fires in group {}: epoch {} begins",
            b.group, b.epoch
        )
    }

    /// `step 4: t1 S-ARRAY  out[tid] := ...   out[1]: 1 -> 2`
    pub fn step_line(&self, s: &Step) -> String {
        let k = &self.launch.kernel;
        let info = &s.info;
        let stmt = notation::find_stmt(k, &info.span, info.rule)
            .map(|x| notation::stmt(k, x))
            .unwrap_or_else(|| self.source.statement(&info.span));
        // A statement of an included file says where it is, as in `trace`.
        let stmt = match self.source.included_file(info.span.start) {
            Some(_) => format!("{}: {stmt}", self.line(info.span.start)),
            None => stmt,
        };
        let change = if let Some((v, old, new)) = &info.var_change {
            format!(
                "{}: {} -> {}",
                notation::var_name(k, *v),
                notation::value(old),
                notation::value(new)
            )
        } else if let (Some(e), Some((old, new))) = (&info.write, &info.elem_change) {
            format!(
                "{}: {} -> {}",
                crate::text::elem_name(self.launch, e.array, e.instance, &e.index),
                notation::value(old),
                notation::value(new)
            )
        } else {
            String::new()
        };
        format!(
            "step {}: {} {}  {stmt}   {change}",
            s.index,
            self.thread_name(s.thread),
            info.rule
        )
        .trim_end()
        .to_string()
    }

    fn thread_name(&self, t: usize) -> String {
        if self.launch.groups > 1 {
            format!(
                "t{t} (g{}.t{})",
                t / self.launch.local_size,
                t % self.launch.local_size
            )
        } else {
            format!("t{t}")
        }
    }

    /// The configuration as text: one line per thread, one per array instance; cells the
    /// last step wrote are marked `*`.
    pub fn config(&self, c: &Config) -> String {
        let mut out = String::new();
        let epochs: Vec<String> = c.epochs.iter().map(|e| e.to_string()).collect();
        let _ = writeln!(
            out,
            "-- configuration after {} step(s), barrier epoch {}{}",
            c.steps,
            epochs.join("/"),
            if c.is_final { ", final" } else { "" }
        );
        let names: Vec<String> = c
            .threads
            .iter()
            .map(|t| self.thread_name(t.thread))
            .collect();
        let width = names.iter().map(|n| n.len()).max().unwrap_or(2);
        for (t, name) in c.threads.iter().zip(&names) {
            let vars: Vec<String> = t
                .vars
                .iter()
                .map(|(n, v)| format!("{n}={}", notation::value(v)))
                .collect();
            let (status, next) = match &t.status {
                Status::Done => ("done".to_string(), String::new()),
                Status::AtBarrier { span } => (
                    format!("at barrier (line {})", self.line(span.start)),
                    String::new(),
                ),
                Status::Enabled { rule } => {
                    let (text, span) = t.next.clone().unwrap_or_default();
                    let text = if text.is_empty() {
                        self.source.statement(&span)
                    } else {
                        text
                    };
                    let rule = match rule {
                        Ok(r) => r.to_string(),
                        Err(f) => format!("faults: {f}"),
                    };
                    (
                        "enabled".to_string(),
                        format!("line {}: {text}   [{rule}]", self.line(span.start)),
                    )
                }
            };
            let _ = writeln!(
                out,
                "  {}  {status:<21} {} {next}",
                pad::left(name, width),
                pad::left(&vars.join(" "), 24)
            );
        }
        let labels: Vec<String> = c
            .arrays
            .iter()
            .map(|a| crate::text::elem_name(self.launch, a.array, a.instance, &[]))
            .collect();
        let aw = labels.iter().map(|l| l.len()).max().unwrap_or(0);
        for (a, label) in c.arrays.iter().zip(labels) {
            let cells: Vec<String> = a
                .values
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    let mark = if a.changed.contains(&i) { "*" } else { "" };
                    format!("{}{mark}", notation::value(v))
                })
                .collect();
            let _ = writeln!(out, "  {} = {}", pad::left(&label, aw), cells.join(" "));
        }
        out.push_str(self.findings_line(c).as_str());
        out
    }

    fn findings_line(&self, c: &Config) -> String {
        let enabled = c
            .threads
            .iter()
            .filter(|t| matches!(t.status, Status::Enabled { .. }))
            .count();
        if c.is_final {
            String::new()
        } else {
            format!("  {enabled} thread(s) enabled; Enter steps the lowest\n")
        }
    }

    /// The line of a statement (`file:line` in an included file).
    fn line(&self, offset: usize) -> String {
        self.source.at(offset)
    }
}
