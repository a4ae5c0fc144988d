//! From race to fix (`ksim fix`): the barrier placements that remove a kernel's races, each
//! *checked* by re-running the exact race check on the patched kernel.
//!
//! Definition 5.2 makes two accesses race when no K-BARRIER of their work-group lies
//! between them; a `barrier()` that every thread of the group reaches (a uniform program
//! point) on every path from one access to the other orders them. Which program points are
//! uniform, and whether a point lies on every path, depends on the data and on the loop
//! structure, so the search does not decide it statically: it generates candidates and
//! lets the semantics judge.
//!
//! - **Candidates** are the gaps between the statements of a `{ ... }` block (a barrier is
//!   a statement, so only a statement list can take one without rewriting the code around
//!   it) that lie between the two racing statements in the source, or anywhere in the body
//!   of a loop that holds both (a race across iterations is cut anywhere in the body
//!   between the later access of one iteration and the earlier one of the next).
//! - **Check.** Each candidate is inserted into the source text, the patched kernel is
//!   parsed, checked and run on every launch with the exact race check
//!   ([`crate::outcome::check_races`]: one canonical execution decides race-freedom for
//!   every schedule of a race-free kernel without atomics). A candidate counts only if
//!   the patched kernel neither faults nor has a divergent barrier (a barrier that not
//!   every thread of a group reaches is undefined on a device, so such a proposal is never
//!   shown) and has no race the original did not have; what it removes is the set of the
//!   original's races (by their pair of statements, spans mapped back across the
//!   insertion) that the patched run no longer has.
//! - **Grouping.** Races that one barrier removes together are one group: a greedy set
//!   cover picks the candidate removing the most races still open (ties: the first gap
//!   after the last racing statement, where the missing barrier most often was, else the
//!   nearest gap before it), until no candidate removes another race.
//! - The chosen barriers are inserted together and checked once more; that check's
//!   verdict is the one reported.

use crate::outcome::{check_races, LaunchInfo, RaceView, RacesReport};
use interp::launch::{Launch, LaunchOptions};
use interp::race::RaceKey;
use lang::ast::{Block, Span, Stmt, StmtKind};
use lang::diag::Diagnostic;
use serde::Serialize;
use std::collections::BTreeSet;
use std::sync::Arc;

/// Why no fix can be searched for.
#[derive(Debug)]
pub enum FixError {
    /// The source does not parse or type-check.
    Invalid(Vec<Diagnostic>),
    /// A launch cannot be bound (sizes, inputs).
    Launch(String),
}

/// One verified barrier insertion and the races it removes.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Proposal {
    /// Byte offset in the original source where the text is inserted.
    pub offset: usize,
    /// The inserted text (`barrier();` with its indentation and line break).
    pub text: String,
    /// The 1-based line of the original source the barrier goes after (its own new line),
    /// or on (when the gap is inside a line).
    pub line: usize,
    /// Whether the barrier gets its own line after `line` (else it is inserted on `line`).
    pub own_line: bool,
    /// Indices into [`FixReport::races`] that this barrier removes (given the barriers
    /// chosen before it).
    pub races: Vec<usize>,
}

impl Proposal {
    /// Where the barrier goes, in words: "after line 61" or "on line 12".
    pub fn place(&self) -> String {
        if self.own_line {
            format!("after line {}", self.line)
        } else {
            format!("on line {}", self.line)
        }
    }
}

/// The result of `ksim fix`: the races of the original, the verified proposals, and the
/// patched source with its check.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct FixReport {
    pub kernel: String,
    pub launches: Vec<LaunchInfo>,
    /// The original's distinct races (by pair of statements), over all launches.
    pub races: Vec<RaceView>,
    /// Why nothing was searched (the original faults or has a divergent barrier: fix that
    /// first, since every check would stop there too).
    pub blocked: Option<String>,
    /// Gaps that were inserted and checked.
    pub candidates_checked: usize,
    /// The chosen barriers, in the order the set cover picked them.
    pub proposals: Vec<Proposal>,
    /// Indices into `races` that no single verified barrier removes.
    pub unfixed: Vec<usize>,
    /// The source with every proposal inserted (absent when there is none).
    pub patched: Option<String>,
    /// Whether the patched source passed the race check on every launch: no race, no
    /// fault, no divergent barrier.
    pub patched_race_free: bool,
    /// The kernel uses atomics: the checks ran the canonical execution only, which does not
    /// decide every schedule (`ksim explore --exhaustive` does).
    pub atomics: bool,
}

impl FixReport {
    /// Every race has a verified barrier and the patched kernel passed the check (or there
    /// was no race): exit code 0.
    pub fn is_fixed(&self) -> bool {
        self.blocked.is_none()
            && self.unfixed.is_empty()
            && (self.races.is_empty() || self.patched_race_free)
    }

    /// The unified diff from `original` to the patched source, headed with `path` (as
    /// `git diff` heads a relative path: `a/PATH`, `b/PATH`; an absolute one as it is).
    pub fn diff(&self, original: &str, path: &str) -> Option<String> {
        let patched = self.patched.as_ref()?;
        let (a, b) = if std::path::Path::new(path).is_absolute() {
            (path.to_string(), path.to_string())
        } else {
            (format!("a/{path}"), format!("b/{path}"))
        };
        Some(
            similar::TextDiff::from_lines(original, patched.as_str())
                .unified_diff()
                .context_radius(3)
                .header(&a, &b)
                .to_string(),
        )
    }

    /// The text view: the grouped proposals and the verdict, then the diff.
    pub fn text(&self, original: &str, path: &str) -> String {
        let mut out = String::new();
        let n = self.races.len();
        let plural = |k: usize| if k == 1 { "" } else { "s" };
        if let Some(why) = &self.blocked {
            out.push_str(&format!("no fix searched: {why}\n"));
            return out;
        }
        if n == 0 {
            out.push_str(&format!(
                "{}: no race on {}; nothing to fix\n",
                self.kernel,
                launches_text(self.launches.len())
            ));
            return out;
        }
        out.push_str(&format!(
            "{}: {n} distinct race{} on {}; {} barrier placement{} checked\n",
            self.kernel,
            plural(n),
            launches_text(self.launches.len()),
            self.candidates_checked,
            plural(self.candidates_checked),
        ));
        for p in &self.proposals {
            let k = p.races.len();
            let lead = if k == n {
                format!("all {n} races disappear")
            } else if k == 1 {
                "1 race disappears".to_string()
            } else {
                format!("{k} races disappear")
            };
            let lead = if n == 1 {
                "the race disappears".to_string()
            } else {
                lead
            };
            out.push_str(&format!(
                "{lead} with one barrier {} (checked on the patched kernel: no new race, no divergent barrier)\n",
                p.place()
            ));
            for &r in &p.races {
                out.push_str(&format!("  {}\n", race_line(&self.races[r], original)));
            }
        }
        if !self.unfixed.is_empty() {
            out.push_str(&format!(
                "{} race{} no single barrier removes{}:\n",
                self.unfixed.len(),
                plural(self.unfixed.len()),
                if self
                    .unfixed
                    .iter()
                    .any(|&r| self.races[r].race.first.thread.group != self.races[r].race.second.thread.group)
                {
                    " (a barrier orders the threads of its own work-group only, never different work-groups)"
                } else {
                    ""
                }
            ));
            for &r in &self.unfixed {
                out.push_str(&format!("  {}\n", race_line(&self.races[r], original)));
            }
        }
        if self.patched.is_some() {
            out.push_str(&format!(
                "patched kernel: {}\n",
                if self.patched_race_free && self.atomics {
                    "no race in the canonical execution (the kernel uses atomics: `ksim explore --exhaustive` checks every schedule)"
                } else if self.patched_race_free {
                    "race-free on every launch checked"
                } else {
                    "still has races"
                }
            ));
            if let Some(d) = self.diff(original, path) {
                out.push_str(&d);
            }
        }
        out
    }
}

fn launches_text(k: usize) -> String {
    if k == 1 {
        "this launch".into()
    } else {
        format!("{k} launches")
    }
}

/// `out: write at line 53 / read at line 59` for a race, by its statements.
fn race_line(r: &RaceView, text: &str) -> String {
    let line = |s: &Span| lang::render::line_col(text, s.start).0;
    let (a, b) = (&r.race.first, &r.race.second);
    format!(
        "{}: {} at line {} / {} at line {}",
        r.array,
        a.kind.name(),
        line(&a.span),
        b.kind.name(),
        line(&b.span)
    )
}

/// A gap between statements of a block where `barrier();` can go.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Gap {
    /// Where `text` is inserted, a byte offset of the original source.
    offset: usize,
    /// `barrier();` with its indentation and line break (or spaces, inside a line).
    text: String,
    /// As in [`Proposal`].
    line: usize,
    own_line: bool,
}

impl Gap {
    fn apply(&self, src: &str) -> String {
        let mut s = String::with_capacity(src.len() + self.text.len());
        s.push_str(&src[..self.offset]);
        s.push_str(&self.text);
        s.push_str(&src[self.offset..]);
        s
    }
}

/// Searches and checks barrier placements for the races of the kernel in `text` on every
/// launch in `launches` (see the module documentation).
pub fn fix(text: &str, launches: &[LaunchOptions], jobs: usize) -> Result<FixReport, FixError> {
    let ast = lang::parse::parse(text).map_err(FixError::Invalid)?;
    let kernel = Arc::new(lang::check::check(&ast).map_err(FixError::Invalid)?);
    let bound: Vec<Launch> = launches
        .iter()
        .map(|o| Launch::new(kernel.clone(), o).map_err(|e| FixError::Launch(e.0)))
        .collect::<Result<_, _>>()?;
    let mut report = FixReport {
        kernel: kernel.name.clone(),
        launches: bound.iter().map(LaunchInfo::of).collect(),
        races: Vec::new(),
        blocked: None,
        candidates_checked: 0,
        proposals: Vec::new(),
        unfixed: Vec::new(),
        patched: None,
        patched_race_free: false,
        atomics: kernel.has_atomics(),
    };
    let mut keys: Vec<RaceKey> = Vec::new();
    for launch in &bound {
        let r = check_races(launch, jobs);
        if let Some(why) = blocker(&r) {
            report.blocked = Some(why);
            return Ok(report);
        }
        for c in r.races {
            let k = c.race.race.key();
            if !keys.contains(&k) {
                keys.push(k);
                report.races.push(c.race);
            }
        }
    }
    if keys.is_empty() {
        return Ok(report);
    }
    // Each candidate: the set of original races it removes, if it passes the check.
    let gaps = candidate_gaps(text, &ast.body, &keys);
    report.candidates_checked = gaps.len();
    let verified: Vec<(Gap, BTreeSet<usize>)> = gaps
        .into_iter()
        .filter_map(|g| {
            let left = remaining_races(&g.apply(text), &[&g], launches, &keys, jobs)?;
            let removed: BTreeSet<usize> = (0..keys.len()).filter(|i| !left.contains(i)).collect();
            (!removed.is_empty()).then_some((g, removed))
        })
        .collect();
    let last_end = keys.iter().map(|k| k.0.end.max(k.2.end)).max().unwrap_or(0);
    let mut open: BTreeSet<usize> = (0..keys.len()).collect();
    let mut chosen: Vec<Gap> = Vec::new();
    loop {
        let best = verified
            .iter()
            .filter(|(g, _)| !chosen.contains(g))
            .map(|(g, rm)| (g, rm.intersection(&open).copied().collect::<Vec<_>>()))
            .filter(|(_, rm)| !rm.is_empty())
            .max_by_key(|(g, rm)| (rm.len(), std::cmp::Reverse(preference(g.offset, last_end))));
        let Some((g, rm)) = best else { break };
        for r in &rm {
            open.remove(r);
        }
        report.proposals.push(Proposal {
            offset: g.offset,
            text: g.text.clone(),
            line: g.line,
            own_line: g.own_line,
            races: rm,
        });
        chosen.push(g.clone());
    }
    report.unfixed = open.into_iter().collect();
    if !chosen.is_empty() {
        // Insert from the last offset back so that earlier offsets stay valid.
        let mut order: Vec<&Gap> = chosen.iter().collect();
        order.sort_by_key(|g| std::cmp::Reverse(g.offset));
        let patched = order.iter().fold(text.to_string(), |s, g| g.apply(&s));
        report.patched_race_free =
            remaining_races(&patched, &order, launches, &keys, jobs).is_some_and(|l| l.is_empty());
        report.patched = Some(patched);
    }
    Ok(report)
}

/// The final store of the kernel as [`fix`] patches it, and which of an exploration's
/// distinct final stores equals it: `ksim explore` marks "the store a race-free run
/// gives" with it.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct RaceFreeStore {
    /// Where the barriers go that make the kernel race-free ([`Proposal::place`]).
    pub barriers: Vec<String>,
    /// The 1-based number of the explored final store equal to the race-free kernel's
    /// (`None`: no explored execution ends in it).
    pub store: Option<usize>,
}

/// The store of `text` patched by [`fix`] on the launch `options`, matched against
/// `finals`; `None` when the races have no verified fix, or the kernel uses atomics (a
/// race-free kernel with atomics has no single final store to mark). The patched kernel
/// is race-free, so by Lemma 5.4 every schedule ends in the store of its canonical
/// execution.
pub fn race_free_store<'a>(
    text: &str,
    options: &LaunchOptions,
    finals: impl IntoIterator<Item = &'a interp::Memory>,
) -> Option<RaceFreeStore> {
    let report = fix(text, std::slice::from_ref(options), 1).ok()?;
    if !report.is_fixed() || report.atomics {
        return None;
    }
    let kernel = Arc::new(lang::check::compile(report.patched.as_ref()?).ok()?);
    let launch = Launch::new(kernel, options).ok()?;
    let run = interp::canonical::run_preferred(
        &launch,
        &interp::canonical::Options {
            jobs: 1,
            track_races: false,
        },
    );
    let memory = run.execution.memory;
    Some(RaceFreeStore {
        barriers: report.proposals.iter().map(Proposal::place).collect(),
        store: finals.into_iter().position(|m| *m == memory).map(|i| i + 1),
    })
}

/// Orders tied gaps: the first gap at or after the end of the last racing statement, then
/// the nearest before it.
fn preference(offset: usize, last_end: usize) -> (bool, usize) {
    if offset >= last_end {
        (false, offset - last_end)
    } else {
        (true, last_end - offset)
    }
}

/// Why a launch's race check cannot judge a fix: it faulted or has a divergent barrier.
fn blocker(r: &RacesReport) -> Option<String> {
    if let Some(f) = &r.fault {
        return Some(format!(
            "the kernel faults on this launch ({}); fix the fault first",
            f.kind
        ));
    }
    (!r.divergences.is_empty()).then(|| {
        "the kernel has a divergent barrier on this launch; fix that first (`ksim races`)".into()
    })
}

/// The indices in `keys` of the original races that the patched source `text` (made by
/// inserting `gaps`) still has on every launch, or `None` when the patched kernel is not
/// acceptable: it does not compile or bind, faults, has a divergent barrier, or has a race
/// the original did not have.
fn remaining_races(
    text: &str,
    gaps: &[&Gap],
    launches: &[LaunchOptions],
    keys: &[RaceKey],
    jobs: usize,
) -> Option<BTreeSet<usize>> {
    let kernel = Arc::new(lang::check::compile(text).ok()?);
    let mut left = BTreeSet::new();
    for o in launches {
        let launch = Launch::new(kernel.clone(), o).ok()?;
        let r = check_races(&launch, jobs);
        if blocker(&r).is_some() {
            return None;
        }
        for c in &r.races {
            let (a, ak, b, bk, benign) = c.race.race.key();
            let k = interp::race::key_of((unshift(a, gaps), ak), (unshift(b, gaps), bk), benign);
            left.insert(keys.iter().position(|x| *x == k)?);
        }
    }
    Some(left)
}

/// A span of the patched source mapped back to the original, undoing the insertions.
fn unshift(s: Span, gaps: &[&Gap]) -> Span {
    // Offsets in the patched text: an insertion at original offset o shifts everything
    // from o on by its length, plus the lengths of the insertions before it.
    let mut sorted: Vec<&&Gap> = gaps.iter().collect();
    sorted.sort_by_key(|g| g.offset);
    let back = |x: usize| {
        let mut shift = 0;
        for g in &sorted {
            if x >= g.offset + shift + g.text.len() {
                shift += g.text.len();
            } else {
                break;
            }
        }
        x - shift
    };
    back(s.start)..back(s.end)
}

/// The gaps of every block that lie between two racing statements or in the body of a
/// loop holding both.
fn candidate_gaps(text: &str, body: &Block, keys: &[RaceKey]) -> Vec<Gap> {
    let mut all = Vec::new();
    collect_gaps(text, body, &mut Vec::new(), &mut all);
    all.into_iter()
        .filter(|(gap, loops)| {
            keys.iter().any(|(a, _, b, _, _)| {
                let (lo, hi) = (a.start.min(b.start), a.end.max(b.end));
                (lo..=hi).contains(&gap.offset)
                    || loops
                        .iter()
                        .any(|l| l.start <= lo && hi <= l.end && l.contains(&gap.offset))
            })
        })
        .map(|(gap, _)| gap)
        .collect()
}

/// Every gap of `block` and of the blocks inside it, with the spans of the loops around it.
fn collect_gaps(text: &str, block: &Block, loops: &mut Vec<Span>, out: &mut Vec<(Gap, Vec<Span>)>) {
    let n = block.stmts.len();
    for i in 0..n {
        out.push((gap_before(text, &block.stmts[i]), loops.clone()));
    }
    if let Some(last) = block.stmts.last() {
        out.push((gap_after(text, last), loops.clone()));
    }
    for s in &block.stmts {
        collect_in_stmt(text, s, loops, out);
    }
}

fn collect_in_stmt(text: &str, s: &Stmt, loops: &mut Vec<Span>, out: &mut Vec<(Gap, Vec<Span>)>) {
    match &s.kind {
        StmtKind::Block(b) => collect_gaps(text, b, loops, out),
        StmtKind::If { arms, els } => {
            for a in arms {
                collect_in_stmt(text, &a.then, loops, out);
            }
            if let Some(e) = els {
                collect_in_stmt(text, e, loops, out);
            }
        }
        StmtKind::While { body, .. } | StmtKind::For { body, .. } => {
            loops.push(s.span.clone());
            collect_in_stmt(text, body, loops, out);
            loops.pop();
        }
        _ => {}
    }
}

/// The start of the line holding `offset`.
fn line_start(text: &str, offset: usize) -> usize {
    text[..offset].rfind('\n').map_or(0, |i| i + 1)
}

/// The gap just before statement `s`: a line of its own above it when `s` starts its line
/// (same indentation), else `barrier(); ` in front of it.
fn gap_before(text: &str, s: &Stmt) -> Gap {
    let ls = line_start(text, s.span.start);
    let indent = &text[ls..s.span.start];
    let line = lang::render::line_col(text, s.span.start).0;
    if indent.chars().all(char::is_whitespace) {
        Gap {
            offset: ls,
            text: format!("{indent}barrier();\n"),
            line: line - 1,
            own_line: true,
        }
    } else {
        Gap {
            offset: s.span.start,
            text: "barrier(); ".into(),
            line,
            own_line: false,
        }
    }
}

/// The gap just after the last statement `s` of a block: a line of its own below it when
/// the rest of its line is blank or a comment, else ` barrier();` right after it.
fn gap_after(text: &str, s: &Stmt) -> Gap {
    let end = s.span.end;
    let line_end = text[end..].find('\n').map(|i| end + i);
    let rest = &text[end..line_end.unwrap_or(text.len())];
    let rest = rest.trim();
    let line = lang::render::line_col(text, end.saturating_sub(1)).0;
    let ls = line_start(text, s.span.start);
    let indent: String = text[ls..]
        .chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .collect();
    match line_end {
        Some(le) if rest.is_empty() || rest.starts_with("//") => Gap {
            offset: le + 1,
            text: format!("{indent}barrier();\n"),
            line,
            own_line: true,
        },
        _ => Gap {
            offset: end,
            text: " barrier();".into(),
            line,
            own_line: false,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gap(offset: usize, text: &str) -> Gap {
        Gap {
            offset,
            text: text.into(),
            line: 0,
            own_line: true,
        }
    }

    #[test]
    fn spans_of_a_twice_patched_source_map_back_to_the_original() {
        let original = "a;\nb;\nc;\n";
        let (g1, g2) = (gap(3, "X;\n"), gap(6, "YY;\n"));
        let patched = g1.apply(&g2.apply(original));
        assert_eq!(patched, "a;\nX;\nb;\nYY;\nc;\n");
        let gaps = [&g2, &g1];
        for (stmt, at) in [("a;", 0), ("b;", 3), ("c;", 6)] {
            let p = patched.find(stmt).unwrap();
            assert_eq!(unshift(p..p + 2, &gaps), at..at + 2, "{stmt}");
        }
    }

    #[test]
    fn a_race_inside_a_divergent_branch_gets_a_uniform_barrier() {
        // Thread 0 writes A[0] inside an `if`; thread 1 reads it after. A barrier inside
        // the `if` would be divergent: the fix must go between the `if` and the read.
        let src = "kernel k(local int A[1], local int B[2]) launch(groups = 1, local_size = 2) \
                   {\n    if (tid == 0) {\n        A[0] = 1;\n    }\n    B[tid] = A[0];\n}\n";
        let opts = LaunchOptions {
            defines: Vec::new(),
            groups: None,
            local_size: None,
            group_dims: Vec::new(),
            local_dims: Vec::new(),
            monoid: "int-add".parse().unwrap(),
            inputs: Vec::new(),
            max_steps: None,
            uninit: Default::default(),
            continue_after_faults: false,
        };
        // The barrier inside the `if` does not pass the check.
        let inside = gap(src.find("    }\n").unwrap(), "        barrier();\n");
        let keys = [interp::race::key_of(
            (
                src.find("A[0] = 1;").unwrap()..src.find("A[0] = 1;").unwrap() + 9,
                interp::AccessKind::Write,
            ),
            (
                src.find("B[tid]").unwrap()..src.find("B[tid]").unwrap() + 14,
                interp::AccessKind::Read,
            ),
            false,
        )];
        // (The keys are right: a uniform barrier before both accesses leaves the race.)
        let early = gap(src.find("    if").unwrap(), "    barrier();\n");
        let left = remaining_races(
            &early.apply(src),
            &[&early],
            std::slice::from_ref(&opts),
            &keys,
            1,
        );
        assert_eq!(left, Some(BTreeSet::from([0])));
        let patched = inside.apply(src);
        assert!(patched.contains("A[0] = 1;\n        barrier();\n    }"));
        assert_eq!(
            remaining_races(&patched, &[&inside], std::slice::from_ref(&opts), &keys, 1),
            None
        );
        let r = fix(src, &[opts], 1).unwrap_or_else(|_| panic!("fix runs"));
        assert_eq!(r.races.len(), 1, "{r:?}");
        assert_eq!(r.proposals.len(), 1, "{r:?}");
        assert_eq!(r.proposals[0].line, 4);
        assert!(r.patched_race_free && r.is_fixed());
        assert!(r
            .patched
            .unwrap()
            .contains("    }\n    barrier();\n    B[tid] = A[0];"));
    }
}
