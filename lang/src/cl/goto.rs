//! `goto` and labels, restructured into `if`, `do`-`while` and `break` by the goto
//! elimination of Erosa and Hendren ("Taming control flow: a structured approach to
//! eliminating goto statements", ICCL 1994), so that the lowering and the core see only
//! structured statements and traces keep naming the paper's rules.
//!
//! Each label `L` that some `goto` targets gets a flag `__goto_L` (an `int` of the function,
//! 0 at its start, set to 0 again where `L:` is reached). `goto L;` becomes `__goto_L = 1;`
//! followed by the *conditional* goto "if `__goto_L`, go to `L`", which is then moved,
//! one step at a time, until it stands right before its label and is dropped:
//!
//! - **outward**, while it is nested in a statement that does not hold the label: out of a
//!   loop or `switch` as `if (__goto_L) break;`, out of a block or a branch of an `if` by
//!   guarding the rest of it with `if (!__goto_L) { ... }`; the conditional goto then
//!   follows that statement;
//! - **forward**, in the list that holds (or leads to) the label: the statements between
//!   it and the label are guarded with `if (!__goto_L) { ... }`;
//! - **backward**: the statements from the label's statement to the goto become the body
//!   of `do { ... } while (__goto_L);`, the conditional goto first in it (so, forward);
//! - **inward**, into the statement that holds the label: the conditional goto goes first
//!   in its block, in the branch of an `if` whose condition becomes `__goto_L || c` (then)
//!   or `!__goto_L && c` (else), in a loop's body whose condition becomes `__goto_L || c`
//!   (a `for`'s initialisation first runs only under `!__goto_L`).
//!
//! No statement is copied: a barrier stays one barrier, reached by the work-items that reach
//! it in the original program, so a barrier that the gotos make divergent stays divergent
//! (the flags are per work-item private variables). Declarations whose scope a move would
//! cut (in a guarded or looped range) are hoisted before it, their initialisers kept in
//! place as assignments. Two forms of Erosa and Hendren's paper are not needed here:
//! `break` and `continue` that a new `do`-`while` would capture become gotos to fresh
//! labels after the loop (or at the end of its body), restructured the same way. Refused
//! with a span: a `goto` into a `switch` or across its `case` labels, across a declaration
//! initialised with a list, and labels inside statement expressions.

use super::ast::*;
use crate::ast::{BinOp, Span, UnOp};
use crate::diag::Diagnostic;
use std::collections::HashSet;

type Res<T> = Result<T, Diagnostic>;

/// Where a statement is: the `(index, child list)` steps from the function's body down to
/// its list, then its index there.
#[derive(Clone, Debug, PartialEq)]
struct Path {
    steps: Vec<(usize, usize)>,
    at: usize,
}

/// Restructures the gotos of a function body (nothing changes in a body without labels).
///
/// The gotos are moved one at a time, each until it is gone, as in Erosa and Hendren's
/// algorithm. Moving whichever goto came first in the source at each step (as this once
/// did) interleaved them, and then no measure decreases: a move of one can undo another's
/// progress (a backward move wraps a partly moved goto in a new `do`-`while`, or guards,
/// that it must leave again), and on generated programs the moves cycled
/// (`tests/kernels/goto_cycle.cl`). One goto alone always finishes: it moves outward at
/// most once per statement that holds it, then at most once backward (after which it is
/// first in the list that leads to its label, so never outward again), then forward and
/// inward at most twice per statement that holds the label (a `for` with an initialisation
/// first becomes a block). A backward move first turns each `break` and `continue` it would
/// capture into a goto to a fresh label, one step each; those gotos only ever move outward
/// and forward, so they capture nothing, and the number of gotos is finite. `move_bound`
/// counts these moves; exceeding it would be a fault of this module, reported as one
/// instead of a hang.
pub fn eliminate(body: &mut Block) -> Res<()> {
    if !body.stmts.iter().any(has_label) {
        return Ok(());
    }
    let mut targets = HashSet::new();
    body.stmts
        .iter()
        .for_each(|s| goto_targets(s, &mut targets));
    let mut stmts = Vec::new();
    for s in std::mem::take(&mut body.stmts) {
        flatten(s, &targets, &mut stmts);
    }
    let mut e = Eliminator { fresh: 0, targets };
    while let Some((g, label)) = find_goto(&stmts, None, &mut Vec::new()) {
        // The goto being moved is marked (its label renamed) so that it is found again
        // after each move, whatever the moves of the others did.
        set_goto_name(&mut stmts, &g, MOVING);
        let bound = move_bound(&stmts);
        let mut moves = 0;
        while let Some((g, _)) = find_goto(&stmts, Some(MOVING), &mut Vec::new()) {
            moves += 1;
            if moves > bound {
                return Err(Diagnostic::new(
                    format!(
                        "internal error: the goto elimination did not finish moving this                          `goto {}` within {bound} moves (please report it)",
                        label.name
                    ),
                    label.span,
                ));
            }
            let Some(l) = find_label(&stmts, &label.name, &mut Vec::new()) else {
                return Err(Diagnostic::new(
                    format!(
                        "not supported yet: the label `{}` of this `goto` inside a statement \
                         expression",
                        label.name
                    ),
                    label.span,
                ));
            };
            e.step(&mut stmts, &g, &l, &label)?;
        }
    }
    let mut flags: Vec<_> = e.targets.into_iter().collect();
    flags.sort();
    let span = body.span.start..body.span.start + 1;
    body.stmts = flags
        .iter()
        .map(|l| decl(&flag_name(l), Some(int(0, &span)), &span))
        .collect();
    body.stmts.extend(strip_labels(stmts));
    Ok(())
}

/// The label name that marks the goto being moved (no C identifier has a space).
const MOVING: &str = " moving";

/// More moves than one goto can make in `stmts` (see [`eliminate`]): outward, forward and
/// inward at most twice per nesting level each, one backward move, and one per `break`
/// or `continue` it may capture.
fn move_bound(stmts: &[Stmt]) -> usize {
    let (depth, escapes) = shape(stmts);
    6 * (depth + 2) + escapes
}

/// The nesting depth of statement lists in `stmts` and its number of `break` and
/// `continue` statements.
fn shape(stmts: &[Stmt]) -> (usize, usize) {
    let mut out = (0, 0);
    for s in stmts {
        if matches!(s.kind, StmtKind::Break | StmtKind::Continue) {
            out.1 += 1;
        }
        for c in 0..child_count(s) {
            let (d, n) = shape(child(s, c));
            out = (out.0.max(d + 1), out.1 + n);
        }
    }
    out
}

/// Renames the label of the goto at `g`.
fn set_goto_name(root: &mut Vec<Stmt>, g: &Path, name: &str) {
    if let StmtKind::Goto(l) = &mut list_mut(root, &g.steps)[g.at].kind {
        l.name = name.to_string();
    }
}

struct Eliminator {
    /// A number for fresh labels (`__break_N`, `__continue_N`).
    fresh: usize,
    /// The labels that gotos target (each has a flag).
    targets: HashSet<String>,
}

impl Eliminator {
    /// One move of the conditional goto at `g` towards its label at `l`.
    fn step(&mut self, root: &mut Vec<Stmt>, g: &Path, l: &Path, label: &Ident) -> Res<()> {
        let common = g
            .steps
            .iter()
            .zip(&l.steps)
            .take_while(|(a, b)| a == b)
            .count();
        if common < g.steps.len() {
            outward(root, g, label);
            return Ok(());
        }
        let i = g.at;
        let (j, deeper) = match l.steps.get(common) {
            Some(&(j, c)) => (j, Some(c)),
            None => (l.at, None),
        };
        if j < i {
            if self.escapes_to_labels(root, g, j)? {
                return Ok(());
            }
            let list = list_mut(root, &g.steps);
            return backward(list, j, i, label);
        }
        let list = list_mut(root, &g.steps);
        if j > i + 1 {
            // The skipped statements guarded, the goto after them, right before the label's.
            let goto = list.remove(i);
            let after = guard(list, i..j - 1, label)?;
            list.insert(after, goto);
            return Ok(());
        }
        match deeper {
            None => {
                list.remove(i);
                Ok(())
            }
            Some(c) => inward(list, i, c, label),
        }
    }

    /// Before the statements `j..g.at` of the goto's list become a loop's body: a `break`
    /// or `continue` among them that leaves that list becomes a goto to a fresh label
    /// (after the loop or `switch` it leaves, at the end of the loop's body it continues).
    /// Whether there was one (the paths changed).
    fn escapes_to_labels(&mut self, root: &mut Vec<Stmt>, g: &Path, j: usize) -> Res<bool> {
        let (mut brk, mut cont) = (None, None);
        let range = j..g.at;
        for s in &list_mut(root, &g.steps)[range.clone()] {
            find_escapes(s, true, true, &mut brk, &mut cont);
        }
        let Some((is_break, span)) = brk.map(|s| (true, s)).or(cont.map(|s| (false, s))) else {
            return Ok(false);
        };
        // The statement `break` (or `continue`) refers to: the innermost enclosing one.
        let target = (0..g.steps.len()).rev().find(|&k| {
            let (idx, _) = g.steps[k];
            match &list_mut(root, &g.steps[..k])[idx].kind {
                StmtKind::While { .. } | StmtKind::DoWhile { .. } | StmtKind::For { .. } => true,
                StmtKind::Switch { .. } => is_break,
                _ => false,
            }
        });
        let Some(k) = target else {
            return Err(Diagnostic::new(
                "`break` or `continue` outside a loop",
                span,
            ));
        };
        self.fresh += 1;
        let name = format!(
            "__{}_{}",
            if is_break { "break" } else { "continue" },
            self.fresh
        );
        self.targets.insert(name.clone());
        let list = list_mut(root, &g.steps);
        for s in &mut list[range] {
            replace_escapes(s, is_break, &name, true, true);
        }
        let new_label = [label_stmt(&name, &span), set_flag(&name, 0, &span)];
        let (idx, child) = g.steps[k];
        let parent = list_mut(root, &g.steps[..k]);
        if is_break {
            parent.splice(idx + 1..idx + 1, new_label);
        } else {
            child_mut(&mut parent[idx], child).extend(new_label);
        }
        Ok(true)
    }
}

/// Moves the conditional goto at `g` (to `label`) out of the statement that holds its list.
fn outward(root: &mut Vec<Stmt>, g: &Path, label: &Ident) {
    let (&(pi, c), parent_steps) = g.steps.split_last().expect("a nested goto");
    let plist = list_mut(root, parent_steps);
    let breaks = matches!(
        plist[pi].kind,
        StmtKind::While { .. }
            | StmtKind::DoWhile { .. }
            | StmtKind::For { .. }
            | StmtKind::Switch { .. }
    );
    let list = child_mut(&mut plist[pi], c);
    let goto = list.remove(g.at);
    let span = goto.span.clone();
    if breaks {
        let brk = Stmt {
            kind: StmtKind::Break,
            span: span.clone(),
        };
        list.insert(g.at, if_stmt(flag(&label.name, &span), vec![brk], &span));
    } else {
        let rest: Vec<_> = list.drain(g.at..).collect();
        if !rest.is_empty() {
            list.push(if_stmt(not_flag(&label.name, &span), rest, &span));
        }
    }
    plist.insert(pi + 1, goto);
}

/// Guards `range` of `list` (the statements a forward goto skips) with `if (!__goto_L)`;
/// the index after the guard.
fn guard(list: &mut Vec<Stmt>, range: std::ops::Range<usize>, label: &Ident) -> Res<usize> {
    let start = range.start;
    let stmts: Vec<_> = list.drain(range).collect();
    let (mut out, stmts) = hoist(stmts, label)?;
    out.push(if_stmt(
        not_flag(&label.name, &label.span),
        stmts,
        &label.span,
    ));
    let after = start + out.len();
    list.splice(start..start, out);
    Ok(after)
}

/// `L: ... goto L;` (the label at or in `list[j]`, the goto at `list[i]`): the statements
/// `j..i` become `do { if (__goto_L) goto L; ... } while (__goto_L);`.
fn backward(list: &mut Vec<Stmt>, j: usize, i: usize, label: &Ident) -> Res<()> {
    let goto = list.remove(i);
    let stmts: Vec<_> = list.drain(j..i).collect();
    let (mut out, mut stmts) = hoist(stmts, label)?;
    let span = &label.span;
    stmts.insert(0, goto);
    out.push(Stmt {
        kind: StmtKind::DoWhile {
            body: Box::new(block_stmt(stmts, span)),
            cond: flag(&label.name, span),
        },
        span: span.clone(),
    });
    list.splice(j..j, out);
    Ok(())
}

/// Moves the conditional goto at `list[i]` into child `c` of `list[i + 1]`, which holds
/// its label.
fn inward(list: &mut Vec<Stmt>, i: usize, c: usize, label: &Ident) -> Res<()> {
    let span = label.span.clone();
    let name = &label.name;
    let goto = list.remove(i);
    let target = &mut list[i];
    match &mut target.kind {
        StmtKind::Block(b) => b.stmts.insert(0, goto),
        StmtKind::If { cond, .. } => {
            let old = std::mem::replace(cond, int(0, &span));
            *cond = if c == 0 {
                binary(BinOp::LogOr, flag(name, &span), old)
            } else {
                binary(BinOp::LogAnd, not_flag(name, &span), old)
            };
            child_mut(target, c).insert(0, goto);
        }
        StmtKind::While { cond, .. } => {
            let old = std::mem::replace(cond, int(0, &span));
            *cond = binary(BinOp::LogOr, flag(name, &span), old);
            child_mut(target, 0).insert(0, goto);
        }
        StmtKind::DoWhile { .. } => child_mut(target, 0).insert(0, goto),
        StmtKind::For { init, .. } if init.is_some() => {
            // `for (init; c; s) b` → `{ decls; if (!__goto_L) init; for (; c; s) b }`.
            let init = *init.take().expect("an initialisation");
            let (mut stmts, init) = hoist(vec![init], label)?;
            stmts.push(if_stmt(not_flag(name, &span), init, &span));
            let for_span = target.span.clone();
            let for_stmt = std::mem::replace(target, block_stmt(Vec::new(), &for_span));
            stmts.push(for_stmt);
            *child_mut(target, 0) = stmts;
            list.insert(i, goto);
        }
        StmtKind::For { cond, .. } => {
            *cond = cond
                .take()
                .map(|old| binary(BinOp::LogOr, flag(name, &span), old));
            child_mut(target, 0).insert(0, goto);
        }
        _ => {
            return Err(Diagnostic::new(
                format!("not supported yet: a `goto` into a `switch` (to `{name}`)"),
                goto.span,
            ))
        }
    }
    Ok(())
}

/// The declarations among `stmts` (at their level), without their initialisers, and the
/// statements with each initialiser turned into an assignment: the declarations can then
/// move before a guard or loop that encloses the statements.
fn hoist(stmts: Vec<Stmt>, label: &Ident) -> Res<(Vec<Stmt>, Vec<Stmt>)> {
    let (mut decls, mut rest) = (Vec::new(), Vec::new());
    for s in stmts {
        match s.kind {
            StmtKind::Decl(ds) => {
                for mut d in ds {
                    match d.init.take() {
                        Some(Init::Expr(e)) => rest.push(Stmt {
                            span: d.span.clone(),
                            kind: StmtKind::Expr(Expr {
                                span: d.span.clone(),
                                kind: ExprKind::Assign {
                                    op: None,
                                    target: Box::new(Expr {
                                        kind: ExprKind::Name(d.name.name.clone()),
                                        span: d.name.span.clone(),
                                    }),
                                    value: Box::new(e),
                                },
                            }),
                        }),
                        Some(Init::List(..)) => {
                            return Err(Diagnostic::new(
                                format!(
                                    "not supported yet: a `goto` (to `{}`) across the declaration \
                                     of `{}`, initialised with a list",
                                    label.name, d.name.name
                                ),
                                d.span,
                            ))
                        }
                        None => {}
                    }
                    // The assignment that replaces the initialiser writes a `const` too.
                    match d.ty.pointers.last_mut() {
                        Some(p) => p.is_const = false,
                        None => d.ty.is_const = false,
                    }
                    decls.push(Stmt {
                        span: d.span.clone(),
                        kind: StmtKind::Decl(vec![d]),
                    });
                }
            }
            StmtKind::Case(..) | StmtKind::Default(_) => {
                return Err(Diagnostic::new(
                    format!(
                    "not supported yet: a `goto` (to `{}`) across the `case` labels of a `switch`",
                    label.name
                ),
                    s.span,
                ))
            }
            _ => rest.push(s),
        }
    }
    Ok((decls, rest))
}

// ----- normal form: every body a block, labels and gotos statements of a list -----

/// Appends `s` to `out` in the normal form: a label is `L:` alone, followed (for a target)
/// by `__goto_L = 0;` and then its statement; `goto L` is `__goto_L = 1;` and the
/// conditional goto; every body of `if`, loops and `switch` is a block.
fn flatten(s: Stmt, targets: &HashSet<String>, out: &mut Vec<Stmt>) {
    let span = s.span.clone();
    let body = |b: Box<Stmt>| {
        let mut stmts = Vec::new();
        let span = b.span.clone();
        match b.kind {
            StmtKind::Block(bl) => bl
                .stmts
                .into_iter()
                .for_each(|s| flatten(s, targets, &mut stmts)),
            _ => flatten(*b, targets, &mut stmts),
        }
        Box::new(block_stmt(stmts, &span))
    };
    let kind = match s.kind {
        StmtKind::Label(l, inner) => {
            out.push(label_stmt(&l.name, &l.span));
            if targets.contains(&l.name) {
                out.push(set_flag(&l.name, 0, &l.span));
            }
            return flatten(*inner, targets, out);
        }
        StmtKind::Goto(l) => {
            out.push(set_flag(&l.name, 1, &span));
            StmtKind::Goto(l)
        }
        // `case 1: s` with a label or goto in `s`: the `case` alone, then `s` (the same
        // thing in a `switch`'s body).
        StmtKind::Case(e, inner) if has_label(&inner) || has_goto(&inner) => {
            out.push(Stmt {
                kind: StmtKind::Case(e, Box::new(empty(&span))),
                span,
            });
            return flatten(*inner, targets, out);
        }
        StmtKind::Default(inner) if has_label(&inner) || has_goto(&inner) => {
            out.push(Stmt {
                kind: StmtKind::Default(Box::new(empty(&span))),
                span,
            });
            return flatten(*inner, targets, out);
        }
        StmtKind::Block(b) => {
            let mut stmts = Vec::new();
            b.stmts
                .into_iter()
                .for_each(|s| flatten(s, targets, &mut stmts));
            StmtKind::Block(Block {
                stmts,
                span: b.span,
            })
        }
        StmtKind::If { cond, then, els } => StmtKind::If {
            cond,
            then: body(then),
            els: els.map(body),
        },
        StmtKind::While { cond, body: b } => StmtKind::While {
            cond,
            body: body(b),
        },
        StmtKind::DoWhile { body: b, cond } => StmtKind::DoWhile {
            body: body(b),
            cond,
        },
        StmtKind::For {
            init,
            cond,
            step,
            body: b,
        } => StmtKind::For {
            init,
            cond,
            step,
            body: body(b),
        },
        StmtKind::Switch { value, body: b } => StmtKind::Switch {
            value,
            body: body(b),
        },
        k => k,
    };
    out.push(Stmt { kind, span });
}

/// The statements with every label replaced by the statement it labels (after the
/// restructuring, a label is only a place).
fn strip_labels(stmts: Vec<Stmt>) -> Vec<Stmt> {
    let mut out = Vec::new();
    for mut s in stmts {
        if let StmtKind::Label(..) = s.kind {
            continue;
        }
        for c in 0..child_count(&s) {
            let list = std::mem::take(child_mut(&mut s, c));
            *child_mut(&mut s, c) = strip_labels(list);
        }
        out.push(s);
    }
    out
}

// ----- paths -----

/// The number of statement lists directly in `s` (in the normal form).
fn child_count(s: &Stmt) -> usize {
    match &s.kind {
        StmtKind::If { els: Some(_), .. } => 2,
        StmtKind::Block(_)
        | StmtKind::If { .. }
        | StmtKind::While { .. }
        | StmtKind::DoWhile { .. }
        | StmtKind::For { .. }
        | StmtKind::Switch { .. } => 1,
        _ => 0,
    }
}

fn child(s: &Stmt, c: usize) -> &Vec<Stmt> {
    let b = match (&s.kind, c) {
        (StmtKind::Block(b), _) => return &b.stmts,
        (StmtKind::If { then, .. }, 0) => then,
        (StmtKind::If { els: Some(e), .. }, _) => e,
        (StmtKind::While { body, .. }, _)
        | (StmtKind::DoWhile { body, .. }, _)
        | (StmtKind::For { body, .. }, _)
        | (StmtKind::Switch { body, .. }, _) => body,
        _ => unreachable!("a statement with lists"),
    };
    match &b.kind {
        StmtKind::Block(b) => &b.stmts,
        _ => unreachable!("a body in the normal form"),
    }
}

fn child_mut(s: &mut Stmt, c: usize) -> &mut Vec<Stmt> {
    let b = match (&mut s.kind, c) {
        (StmtKind::Block(b), _) => return &mut b.stmts,
        (StmtKind::If { then, .. }, 0) => then,
        (StmtKind::If { els: Some(e), .. }, _) => e,
        (StmtKind::While { body, .. }, _)
        | (StmtKind::DoWhile { body, .. }, _)
        | (StmtKind::For { body, .. }, _)
        | (StmtKind::Switch { body, .. }, _) => body,
        _ => unreachable!("a statement with lists"),
    };
    match &mut b.kind {
        StmtKind::Block(b) => &mut b.stmts,
        _ => unreachable!("a body in the normal form"),
    }
}

fn list_mut<'a>(mut list: &'a mut Vec<Stmt>, steps: &[(usize, usize)]) -> &'a mut Vec<Stmt> {
    for &(i, c) in steps {
        list = child_mut(&mut list[i], c);
    }
    list
}

/// The first conditional goto (in source order; with `name`, the first to that label) and
/// its label.
fn find_goto(
    list: &[Stmt],
    name: Option<&str>,
    steps: &mut Vec<(usize, usize)>,
) -> Option<(Path, Ident)> {
    for (i, s) in list.iter().enumerate() {
        match &s.kind {
            StmtKind::Goto(l) if name.is_none_or(|n| n == l.name) => {
                let path = Path {
                    steps: steps.clone(),
                    at: i,
                };
                return Some((path, l.clone()));
            }
            _ => {}
        }
        for c in 0..child_count(s) {
            steps.push((i, c));
            let found = find_goto(child(s, c), name, steps);
            steps.pop();
            if found.is_some() {
                return found;
            }
        }
    }
    None
}

fn find_label(list: &[Stmt], name: &str, steps: &mut Vec<(usize, usize)>) -> Option<Path> {
    for (i, s) in list.iter().enumerate() {
        if matches!(&s.kind, StmtKind::Label(l, _) if l.name == name) {
            return Some(Path {
                steps: steps.clone(),
                at: i,
            });
        }
        for c in 0..child_count(s) {
            steps.push((i, c));
            let found = find_label(child(s, c), name, steps);
            steps.pop();
            if found.is_some() {
                return found;
            }
        }
    }
    None
}

/// The span of a `break` (`continue`) in `s` that leaves it, where `brk` (`cont`) says
/// whether one at this depth would.
fn find_escapes(
    s: &Stmt,
    brk: bool,
    cont: bool,
    found_brk: &mut Option<Span>,
    found_cont: &mut Option<Span>,
) {
    match &s.kind {
        StmtKind::Break if brk => {
            found_brk.get_or_insert(s.span.clone());
        }
        StmtKind::Continue if cont => {
            found_cont.get_or_insert(s.span.clone());
        }
        StmtKind::While { .. } | StmtKind::DoWhile { .. } | StmtKind::For { .. } => {}
        StmtKind::Switch { .. } => {
            child(s, 0)
                .iter()
                .for_each(|x| find_escapes(x, false, cont, found_brk, found_cont));
        }
        _ => {
            for c in 0..child_count(s) {
                child(s, c)
                    .iter()
                    .for_each(|x| find_escapes(x, brk, cont, found_brk, found_cont));
            }
        }
    }
}

/// Replaces each `break` (`is_break`) or `continue` in `s` that leaves it by a goto to
/// `label`.
fn replace_escapes(s: &mut Stmt, is_break: bool, label: &str, brk: bool, cont: bool) {
    let (brk, cont) = match &s.kind {
        StmtKind::While { .. } | StmtKind::DoWhile { .. } | StmtKind::For { .. } => return,
        StmtKind::Switch { .. } => (false, cont),
        _ => (brk, cont),
    };
    for c in 0..child_count(s) {
        let list = std::mem::take(child_mut(s, c));
        let mut out = Vec::new();
        for mut x in list {
            let hit = match x.kind {
                StmtKind::Break => is_break && brk,
                StmtKind::Continue => !is_break && cont,
                _ => false,
            };
            if hit {
                let id = Ident {
                    name: label.to_string(),
                    span: x.span.clone(),
                };
                out.push(set_flag(label, 1, &x.span));
                out.push(Stmt {
                    kind: StmtKind::Goto(id),
                    span: x.span,
                });
            } else {
                replace_escapes(&mut x, is_break, label, brk, cont);
                out.push(x);
            }
        }
        *child_mut(s, c) = out;
    }
}

// ----- queries on the source form -----

fn has_label(s: &Stmt) -> bool {
    any_stmt(s, &|s| matches!(s.kind, StmtKind::Label(..)))
}

fn has_goto(s: &Stmt) -> bool {
    any_stmt(s, &|s| matches!(s.kind, StmtKind::Goto(_)))
}

fn goto_targets(s: &Stmt, out: &mut HashSet<String>) {
    if let StmtKind::Goto(l) = &s.kind {
        out.insert(l.name.clone());
    }
    sub_stmts(s).into_iter().for_each(|x| goto_targets(x, out));
}

fn any_stmt(s: &Stmt, f: &dyn Fn(&Stmt) -> bool) -> bool {
    f(s) || sub_stmts(s).into_iter().any(|x| any_stmt(x, f))
}

/// The statements directly in `s` (before the normal form).
fn sub_stmts(s: &Stmt) -> Vec<&Stmt> {
    match &s.kind {
        StmtKind::If { then, els, .. } => std::iter::once(&**then).chain(els.as_deref()).collect(),
        StmtKind::While { body, .. }
        | StmtKind::DoWhile { body, .. }
        | StmtKind::For { body, .. }
        | StmtKind::Switch { body, .. }
        | StmtKind::Case(_, body)
        | StmtKind::Default(body)
        | StmtKind::Label(_, body) => vec![body],
        StmtKind::Block(b) => b.stmts.iter().collect(),
        _ => Vec::new(),
    }
}

// ----- building the syntax tree -----

fn flag_name(label: &str) -> String {
    format!("__goto_{label}")
}

fn name(n: &str, span: &Span) -> Expr {
    Expr {
        kind: ExprKind::Name(n.to_string()),
        span: span.clone(),
    }
}

fn int(v: u64, span: &Span) -> Expr {
    Expr {
        kind: ExprKind::Int {
            value: v,
            unsigned: false,
            long: false,
        },
        span: span.clone(),
    }
}

fn flag(label: &str, span: &Span) -> Expr {
    name(&flag_name(label), span)
}

fn not_flag(label: &str, span: &Span) -> Expr {
    Expr {
        kind: ExprKind::Unary(UnOp::Not, Box::new(flag(label, span))),
        span: span.clone(),
    }
}

fn binary(op: BinOp, a: Expr, b: Expr) -> Expr {
    let span = a.span.start.min(b.span.start)..a.span.end.max(b.span.end);
    Expr {
        kind: ExprKind::Binary(op, Box::new(a), Box::new(b)),
        span,
    }
}

fn set_flag(label: &str, v: u64, span: &Span) -> Stmt {
    Stmt {
        kind: StmtKind::Expr(Expr {
            kind: ExprKind::Assign {
                op: None,
                target: Box::new(flag(label, span)),
                value: Box::new(int(v, span)),
            },
            span: span.clone(),
        }),
        span: span.clone(),
    }
}

fn decl(n: &str, init: Option<Expr>, span: &Span) -> Stmt {
    Stmt {
        kind: StmtKind::Decl(vec![Decl {
            ty: Type {
                base: Base::Int { unsigned: false },
                space: AddrSpace::Private,
                is_const: false,
                is_volatile: false,
                access: Access::Default,
                pointers: Vec::new(),
                arrays: Vec::new(),
                span: span.clone(),
            },
            name: Ident {
                name: n.to_string(),
                span: span.clone(),
            },
            init: init.map(Init::Expr),
            span: span.clone(),
        }]),
        span: span.clone(),
    }
}

fn label_stmt(label: &str, span: &Span) -> Stmt {
    Stmt {
        kind: StmtKind::Label(
            Ident {
                name: label.to_string(),
                span: span.clone(),
            },
            Box::new(empty(span)),
        ),
        span: span.clone(),
    }
}

fn empty(span: &Span) -> Stmt {
    Stmt {
        kind: StmtKind::Empty,
        span: span.clone(),
    }
}

fn block_stmt(stmts: Vec<Stmt>, span: &Span) -> Stmt {
    Stmt {
        kind: StmtKind::Block(Block {
            stmts,
            span: span.clone(),
        }),
        span: span.clone(),
    }
}

fn if_stmt(cond: Expr, then: Vec<Stmt>, span: &Span) -> Stmt {
    Stmt {
        kind: StmtKind::If {
            cond,
            then: Box::new(block_stmt(then, span)),
            els: None,
        },
        span: span.clone(),
    }
}
