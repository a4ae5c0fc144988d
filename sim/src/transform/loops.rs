//! Loop unrolling (Alpinist Section 4.1, Fig. 5) and iteration merging (Section 4.4) of a
//! counted `for` loop named by its line.
//!
//! Unrolling K times copies the body K times before the loop, each copy followed by the
//! loop's step; the condition is not tested before the copies, so every entry of the loop
//! must run at least K iterations. Merging K iterations puts K copies of the body in one
//! pass, separated by the step; the condition is tested once per K iterations, so every
//! trip count must be a multiple of K. Alpinist computes the trip count from the loop
//! invariants' bounds; here it is counted on the launch given ([`trip_counts`]).

use super::{indent_at, reindent, walk, Edit, TransformError, Transformed, Unit};
use interp::exec::Observer;
use interp::reference::{Rule, StepInfo};
use lang::ast::{Stmt, StmtKind};
use std::collections::HashMap;

/// The parts of `for (init; cond; step) body`.
struct Counted<'a> {
    stmt: &'a Stmt,
    init: &'a Stmt,
    cond: &'a lang::ast::Expr,
    step: &'a Stmt,
    body: &'a Stmt,
}

/// The loop that starts on `line`, as a counted `for` loop.
fn find<'a>(unit: &'a Unit<'_>, line: usize) -> Result<Counted<'a>, TransformError> {
    let mut found = None;
    walk::stmts(&unit.ast.body, &mut |s| {
        let is_loop = matches!(s.kind, StmtKind::For { .. } | StmtKind::While { .. });
        if is_loop && found.is_none() && super::line_of(unit.src, s.span.start) == line {
            found = Some(s);
        }
    });
    let s =
        found.ok_or_else(|| TransformError::Refused(format!("no loop starts on line {line}")))?;
    match &s.kind {
        StmtKind::For {
            init: Some(init),
            cond: Some(cond),
            step: Some(step),
            body,
        } => Ok(Counted {
            stmt: s,
            init,
            cond,
            step,
            body,
        }),
        _ => Err(TransformError::Refused(format!(
            "the loop on line {line} is not a counted loop `for (init; condition; step)` with \
             all three parts"
        ))),
    }
}

/// Counts, on the canonical execution of the launch, the iterations of every entry of the
/// loop whose statement starts at `start`: the smallest count and every count seen.
struct TripCounts {
    start: usize,
    running: HashMap<(usize, usize), usize>,
    counts: Vec<usize>,
}

impl Observer for TripCounts {
    fn step(&mut self, info: &StepInfo) {
        if info.span.start != self.start {
            return;
        }
        let thread = (info.thread.group, info.thread.local);
        match info.rule {
            Rule::SLoopT => *self.running.entry(thread).or_default() += 1,
            Rule::SLoopF => {
                let n = self.running.remove(&thread).unwrap_or(0);
                self.counts.push(n);
            }
            _ => {}
        }
    }
}

/// The trip counts of every entry of the loop at `stmt` on the canonical execution of the
/// launch; refused when the run does not finish cleanly or never reaches the loop.
fn trip_counts(unit: &Unit<'_>, stmt: &Stmt) -> Result<Vec<usize>, TransformError> {
    let launch = unit.launch()?;
    let mut obs = TripCounts {
        start: stmt.span.start,
        running: HashMap::new(),
        counts: Vec::new(),
    };
    let (out, _) = crate::schedule::run(&launch, &crate::Scheduler::Canonical, &mut obs);
    if let Some(f) = out.fault {
        return Err(TransformError::Refused(format!(
            "the original kernel faults on {} ({f}), so the loop's trip count cannot be \
             checked",
            unit.launch_words()
        )));
    }
    if obs.counts.is_empty() {
        return Err(TransformError::Refused(format!(
            "no thread reaches the loop on {}, so its trip count cannot be checked",
            unit.launch_words()
        )));
    }
    Ok(obs.counts)
}

/// `--unroll LINE:K`.
pub fn unroll(unit: &Unit<'_>, line: usize, k: usize) -> Result<Transformed, TransformError> {
    if k == 0 {
        return Err(TransformError::Refused(
            "unrolling 0 times changes nothing".into(),
        ));
    }
    let l = find(unit, line)?;
    let counts = trip_counts(unit, l.stmt)?;
    let min = *counts.iter().min().expect("one count at least");
    if min < k {
        return Err(TransformError::Refused(format!(
            "the loop on line {line} runs only {min} time{} on {} (some entry of some \
             thread), fewer than the {k} unrolled iterations",
            if min == 1 { "" } else { "s" },
            unit.launch_words()
        )));
    }
    let indent = indent_at(unit.src, l.stmt.span.start);
    let inner = format!("{indent}    ");
    let body = reindent(unit.text(&l.body.span), "    ");
    let step = unit.text(&l.step.span);
    let mut text = format!(
        "{{\n{inner}// ksim transform --unroll {line}:{k}: the loop runs at least {k} times \
         (checked on {}: at least {min})\n{inner}{};\n",
        unit.launch_words(),
        unit.text(&l.init.span)
    );
    for _ in 0..k {
        text.push_str(&format!("{inner}{body}\n{inner}{step};\n"));
    }
    text.push_str(&format!(
        "{inner}for (; {}; {step}) {body}\n{indent}}}",
        unit.text(&l.cond.span)
    ));
    Ok(Transformed {
        text: super::apply(unit.src, vec![Edit::new(l.stmt.span.clone(), text)]),
        notes: vec![format!(
            "the loop on line {line} runs at least {min} times on {}; unrolled {k}",
            unit.launch_words()
        )],
    })
}

/// `--merge-iterations LINE:K`.
pub fn merge(unit: &Unit<'_>, line: usize, k: usize) -> Result<Transformed, TransformError> {
    if k < 2 {
        return Err(TransformError::Refused(
            "merging needs at least 2 iterations per pass".into(),
        ));
    }
    let l = find(unit, line)?;
    let counts = trip_counts(unit, l.stmt)?;
    if let Some(bad) = counts.iter().find(|&&c| c % k != 0) {
        return Err(TransformError::Refused(format!(
            "the loop on line {line} runs {bad} times on {} (some entry of some thread), \
             not a multiple of {k}",
            unit.launch_words()
        )));
    }
    let indent = indent_at(unit.src, l.stmt.span.start);
    let inner = format!("{indent}    ");
    let body = reindent(unit.text(&l.body.span), "    ");
    let step = unit.text(&l.step.span);
    let copies: Vec<String> = (0..k).map(|_| format!("{inner}{body}\n")).collect();
    let text = format!(
        "// ksim transform --merge-iterations {line}:{k}: every trip count is a multiple of \
         {k} (checked on {})\n{indent}{} {{\n{}{indent}}}",
        unit.launch_words(),
        unit.text(&(l.stmt.span.start..l.body.span.start))
            .trim_end(),
        copies.join(&format!("{inner}{step};\n"))
    );
    Ok(Transformed {
        text: super::apply(unit.src, vec![Edit::new(l.stmt.span.clone(), text)]),
        notes: vec![format!(
            "the loop on line {line} runs {} times on {}; {k} iterations per pass",
            counts_text(&counts),
            unit.launch_words()
        )],
    })
}

/// The distinct trip counts, `3` or `2, 4`.
fn counts_text(counts: &[usize]) -> String {
    let mut c = counts.to_vec();
    c.sort_unstable();
    c.dedup();
    let c: Vec<String> = c.iter().map(|n| n.to_string()).collect();
    c.join(", ")
}
