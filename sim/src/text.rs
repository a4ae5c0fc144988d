//! Text views shared by every result model: a race or a runtime fault as a compiler-style
//! diagnostic against the kernel's source, a divergent barrier as one line, an element by
//! name. The CLI prints what these return; nothing here writes to a terminal.

use interp::fault::Faults;
use interp::reference::BarrierInfo;
use interp::{AccessKind, Fault, Launch, Race, ThreadId};
use lang::diag::Diagnostic;

/// The kernel's source as the views need it: its path, its text, whether to colour, and
/// the files it `#include`s (an OpenCL C kernel's spans run on past the main file into
/// each included file's text at its base offset).
#[derive(Clone, Copy, Debug)]
pub struct SourceText<'a> {
    pub path: &'a str,
    pub text: &'a str,
    pub color: bool,
    /// `(path, text, base offset)` of each included file, in increasing base order.
    pub includes: &'a [(String, String, usize)],
}

impl SourceText<'_> {
    /// The file holding a span's start: its path, its text, and its base offset.
    fn file_of(&self, offset: usize) -> (&str, &str, usize) {
        self.includes
            .iter()
            .rev()
            .find(|(_, _, base)| *base <= offset)
            .map_or((self.path, self.text, 0), |(p, t, b)| (p, t, *b))
    }

    /// Renders diagnostics against this source; a diagnostic in an included file is
    /// rendered against that file (with the labels that lie in it).
    pub fn render(&self, diags: &[Diagnostic]) -> String {
        let mut out = String::new();
        for d in diags {
            let (path, text, base) = self.file_of(d.span.start);
            let shift =
                |s: &lang::ast::Span| s.start.saturating_sub(base)..s.end.saturating_sub(base);
            let mut d = d.clone();
            d.span = shift(&d.span);
            d.labels = (d.labels.iter())
                .filter(|(s, _)| self.file_of(s.start).2 == base)
                .map(|(s, t)| (shift(s), t.clone()))
                .collect();
            out.push_str(&lang::render::render(&[d], path, text, self.color));
        }
        out
    }

    /// `file:line:col` of a byte offset.
    pub fn location(&self, offset: usize) -> String {
        let (path, text, base) = self.file_of(offset);
        let (line, col) = lang::render::line_col(text, offset - base);
        format!("{path}:{line}:{col}")
    }

    /// The line of a byte offset, in the file that holds it.
    pub fn line(&self, offset: usize) -> usize {
        let (_, text, base) = self.file_of(offset);
        lang::render::line_col(text, offset - base).0
    }

    /// Where the teaching views (`trace`, `step`, `graph`, the page, the timeline) say a
    /// statement is: its line (`7`) in the main file, `file:line` (`helper.h:3`) in an
    /// `#include`d file.
    pub fn at(&self, offset: usize) -> String {
        let (path, text, base) = self.file_of(offset);
        let line = lang::render::line_col(text, offset - base).0;
        if base == 0 {
            line.to_string()
        } else {
            format!("{path}:{line}")
        }
    }

    /// The whole source as one listing, as the HTML page shows it: the main file's lines,
    /// then for each included file a heading row and its lines; each row is the line
    /// number to show (empty for a heading) and the text. [`SourceText::row`] finds a
    /// statement's row in it.
    pub fn listing(&self) -> Vec<(String, String)> {
        let mut rows: Vec<(String, String)> = (self.text.lines().enumerate())
            .map(|(i, l)| ((i + 1).to_string(), l.to_string()))
            .collect();
        for (path, text, _) in self.includes {
            rows.push((String::new(), format!("// #include \"{path}\"")));
            rows.extend(
                (text.lines().enumerate()).map(|(i, l)| ((i + 1).to_string(), l.to_string())),
            );
        }
        rows
    }

    /// The row (from 1) of [`SourceText::listing`] that holds a byte offset.
    pub fn row(&self, offset: usize) -> usize {
        let (_, text, base) = self.file_of(offset);
        let line = lang::render::line_col(text, offset - base).0;
        if base == 0 {
            return line;
        }
        let mut row = self.text.lines().count();
        for (_, t, b) in self.includes {
            row += 1; // the heading
            if *b == base {
                return row + line;
            }
            row += t.lines().count();
        }
        line
    }

    /// The path of the file holding a byte offset, when it is an included file (`None` for
    /// the main file).
    pub fn included_file(&self, offset: usize) -> Option<&str> {
        let (path, _, base) = self.file_of(offset);
        (base != 0).then_some(path)
    }

    /// The first line of a statement's source text: what traces and summaries show.
    pub fn statement(&self, span: &lang::ast::Span) -> String {
        let (_, text, base) = self.file_of(span.start);
        let text = (text.get(span.start - base..span.end.saturating_sub(base))).unwrap_or("");
        let first = text.lines().next().unwrap_or("").trim();
        first.trim_end_matches('{').trim_end().to_string()
    }

    /// A race: both statements highlighted, threads and element named, plus the plain
    /// `file:line:col` of both accesses and the `extra` notes.
    pub fn race(&self, launch: &Launch, race: &Race, extra: &[String]) -> String {
        let elem = elem_name(launch, race.array, race.instance, &race.index);
        let (a, b) = (&race.first, &race.second);
        let benign = race.benign();
        let message = if benign {
            format!("benign data race on {elem} (tolerated by the same-value race policy)")
        } else {
            format!("data race on {elem}")
        };
        let space = match launch.kernel.arrays[race.array].space {
            lang::ast::Space::Local => "local",
            lang::ast::Space::Global => "global",
        };
        let between = if a.thread.group != b.thread.group {
            "in another work-group (a barrier orders only the threads of its own group)".to_string()
        } else if launch.kernel.has_item_fences() {
            format!(
                "with no barrier ordering {space} memory in between for {}'s earlier access \
                 (a barrier orders a thread's earlier accesses only where its own fence flags \
                 name the space)",
                thread_name(launch, a.thread)
            )
        } else if !launch.kernel.barriers_order_both() {
            format!("with no barrier ordering {space} memory in between")
        } else {
            "with no barrier in between".to_string()
        };
        let mut d = Diagnostic::new(message, b.span.clone())
            .with_label(
                b.span.clone(),
                format!("{} {} {elem}", thread_name(launch, b.thread), verb(b.kind)),
            )
            .with_note(format!(
                "first access:  {} {} {elem} at {}",
                thread_name(launch, a.thread),
                verb(a.kind),
                self.location(a.span.start)
            ))
            .with_note(format!(
                "second access: {} {} {elem} at {}, {}",
                thread_name(launch, b.thread),
                verb(b.kind),
                self.location(b.span.start),
                between
            ));
        if a.span != b.span {
            d = d.with_label(
                a.span.clone(),
                format!("{} {} {elem}", thread_name(launch, a.thread), verb(a.kind)),
            );
        }
        if benign {
            d = d.with_note(benign_reason(a, b)).as_warning();
        }
        for e in extra {
            d = d.with_note(e.clone());
        }
        self.render(&[d])
    }

    /// A runtime fault with its statement highlighted (a step bound has none).
    pub fn fault(&self, launch: &Launch, fault: &Fault) -> String {
        match &fault.span {
            Some(span) => {
                let who = fault
                    .thread
                    .map(|t| format!(" in {}", thread_name(launch, t)))
                    .unwrap_or_default();
                let mut d =
                    Diagnostic::new(format!("runtime fault: {}{who}", fault.kind), span.clone())
                        .with_label(span.clone(), format!("{}", fault.kind))
                        .with_note(format!("at {}", self.location(span.start)));
                if let Some(note) = vector_fault_note(launch, &fault.kind) {
                    d = d.with_note(note);
                }
                self.render(&[d])
            }
            None if matches!(fault.kind, interp::fault::FaultKind::StepBound { .. }) => {
                format!("non-terminating: {fault} (the step bound; see --max-steps)\n")
            }
            None => format!("runtime fault: {fault}\n"),
        }
    }

    /// Every fault of an execution ([`interp::fault::Faults`]): each distinct one as
    /// [`SourceText::fault`] shows it, with its count when it happened more than once,
    /// then the ones beyond the cap and a summary when the run went on past faults.
    /// Without any, the fault `fault` alone (a report from before fault lists).
    pub fn faults(&self, launch: &Launch, fault: Option<&Fault>, faults: &Faults) -> String {
        if faults.is_empty() {
            return fault.map(|f| self.fault(launch, f)).unwrap_or_default();
        }
        let mut s = String::new();
        let mut occurrences = 0;
        for f in &faults.list {
            s.push_str(&self.fault(launch, &f.fault));
            occurrences += f.count;
            if f.count > 1 {
                s.push_str(&format!(
                    "  = {} times in this execution (the first shown)\n",
                    f.count
                ));
            }
        }
        if faults.unlisted > 0 {
            s.push_str(&format!(
                "{} more distinct fault(s) not listed: at most {} are\n",
                faults.unlisted,
                Faults::CAP
            ));
        }
        if faults.list.len() > 1 || occurrences > 1 || faults.unlisted > 0 {
            let ended = fault.filter(|f| !f.kind.continues() || !launch.continue_after_faults);
            let how = match ended {
                Some(f) => format!("the execution ended at: {}", f.kind),
                None => "the execution went on past them".to_string(),
            };
            s.push_str(&format!(
                "{} distinct fault(s), {occurrences} occurrence(s) listed; {how}\n",
                faults.list.len() as u64 + faults.unlisted
            ));
        }
        s
    }

    /// A divergent barrier: each `barrier` statement waited at highlighted with its
    /// threads, the terminated threads in a note (the same from every engine: both report
    /// [`BarrierInfo::sides`]).
    pub fn divergence(&self, launch: &Launch, d: &BarrierInfo) -> String {
        let threads = |ts: &[usize]| {
            let list: Vec<String> = ts.iter().map(|t| t.to_string()).collect();
            let who = if ts.len() == 1 { "thread" } else { "threads" };
            if launch.groups > 1 {
                format!("{who} {} of group {}", list.join(", "), d.group)
            } else {
                format!("{who} {}", list.join(", "))
            }
        };
        let waits = |ts: &[usize]| if ts.len() == 1 { "waits" } else { "wait" };
        let Some(first) = d.sides.iter().find_map(|s| s.barrier.clone()) else {
            return format!("{}\n", divergence_message(d));
        };
        let mut diag = Diagnostic::new(divergence_message(d), first);
        for side in &d.sides {
            match &side.barrier {
                Some(span) => {
                    diag = diag
                        .with_label(
                            span.clone(),
                            format!("{} {} here", threads(&side.threads), waits(&side.threads)),
                        )
                        .with_note(format!(
                            "{} {} at the barrier at {}",
                            threads(&side.threads),
                            waits(&side.threads),
                            self.location(span.start)
                        ));
                }
                None => {
                    diag = diag.with_note(format!(
                        "{} {} terminated (left the kernel without reaching a barrier)",
                        threads(&side.threads),
                        if side.threads.len() == 1 {
                            "has"
                        } else {
                            "have"
                        }
                    ));
                }
            }
        }
        self.render(&[diag])
    }
}

/// The one-line report of a divergent barrier, the same from every command and engine.
pub fn divergence_message(d: &BarrierInfo) -> String {
    format!(
        "barrier divergence: {} (the paper's K-BARRIER still fires; on a device this is undefined)",
        d.divergence.as_deref().unwrap_or("")
    )
}

/// `out[3]`, `tree[1][2]`, or `out[3] (group 1)` for a local array of a multi-group launch;
/// a slot of an array of OpenCL vectors also as the source names it: `G[13] (G[3].y)`, and
/// a byte of an array holding bytes as its element and byte: `L[13] (L[3] byte 1)`.
pub fn elem_name(launch: &Launch, array: usize, instance: usize, index: &[usize]) -> String {
    let idx: String = index.iter().map(|i| format!("[{i}]")).collect();
    let decl = &launch.kernel.arrays[array];
    let name = &decl.name;
    let mut out = format!("{name}{idx}");
    if let Some((&last, rows)) = index.split_last().filter(|_| decl.lanes > 1) {
        out += &format!(" ({})", vector_slot(name, rows, last, decl.lanes));
    }
    if let (Some((&last, rows)), Some(size)) =
        (index.split_last(), decl.byte_elem.and_then(|t| t.size()))
    {
        let rows: String = rows.iter().map(|i| format!("[{i}]")).collect();
        let size = size as usize;
        out += &format!(" ({name}{rows}[{}] byte {})", last / size, last % size);
    }
    if launch.instances(array) > 1 {
        out += &format!(" (group {instance})");
    }
    out
}

/// For an out-of-bounds slot of an array of vectors: the element and component it would
/// be, `G[21] is G[5].y (G holds float4 components: 4 slots per vector)`.
fn vector_fault_note(launch: &Launch, kind: &interp::fault::FaultKind) -> Option<String> {
    let interp::fault::FaultKind::OutOfBounds { array, index, .. } = kind else {
        return None;
    };
    let decl = &launch.kernel.arrays[launch.kernel.array(array)?];
    let index: Vec<usize> = index
        .iter()
        .map(|&i| usize::try_from(i).ok())
        .collect::<Option<_>>()?;
    let (&last, rows) = index.split_last().filter(|_| decl.lanes > 1)?;
    let idx: String = index.iter().map(|i| format!("[{i}]")).collect();
    Some(format!(
        "{array}{idx} is {} ({array} holds {}{} components: {} slots per vector)",
        vector_slot(array, rows, last, decl.lanes),
        decl.elem.name(),
        decl.lanes,
        lang::cl::lower::vector_stride(decl.lanes)
    ))
}

/// `G[3].y` for slot 13 of a `float4` array `G` (OpenCL's layout: 4 slots per 3-vector, the
/// 4th of which is padding); `rows` are the indices before the last.
fn vector_slot(name: &str, rows: &[usize], slot: usize, lanes: u8) -> String {
    let stride = lang::cl::lower::vector_stride(lanes) as usize;
    let (elem, comp) = (slot / stride, slot % stride);
    let rows: String = rows.iter().map(|i| format!("[{i}]")).collect();
    if comp >= lanes as usize {
        return format!("the padding after {name}{rows}[{elem}]");
    }
    let comp = if lanes <= 4 {
        ["x", "y", "z", "w"][comp].to_string()
    } else {
        format!("s{comp:x}")
    };
    format!("{name}{rows}[{elem}].{comp}")
}

/// `thread 3`, or `thread 3 of group 1` when the launch has several groups.
pub fn thread_name(launch: &Launch, t: ThreadId) -> String {
    if launch.groups > 1 {
        format!("thread {} of group {}", t.local, t.group)
    } else {
        format!("thread {}", t.local)
    }
}

pub(crate) fn verb(kind: AccessKind) -> &'static str {
    match kind {
        AccessKind::Read => "reads",
        AccessKind::Write => "writes",
        AccessKind::Atomic => "atomically updates",
        AccessKind::AtomicRead => "atomically reads",
    }
}

/// What a view prints: `out` on stdout (results), `err` on stderr (findings, notes).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Text {
    pub out: String,
    pub err: String,
}

/// Why the same-value race policy tolerates a pair ([`interp::policy::benign`]).
fn benign_reason(a: &interp::Access, b: &interp::Access) -> String {
    let stored = |x: &interp::Access| x.stored.as_ref().map(|s| (s.value.to_string(), s.silent));
    match (stored(a), stored(b)) {
        (Some((v, _)), Some((w, _))) if v == w => {
            format!("both writes store {v}: the order does not matter")
        }
        (Some((v, true)), _) | (_, Some((v, true))) => {
            format!("the write stores {v}, the value the element already held")
        }
        _ => "the pair is benign under the same-value race policy".into(),
    }
}
