//! A race as a picture for slides (issue 12): the race timeline of Definition 5.2. Threads
//! are lanes, each K-STEP a mark on its thread's lane, each work-group's barrier epochs
//! shaded bands between its K-BARRIER lines, and the two racing accesses joined and
//! labelled with their source locations: the picture shows that no K-BARRIER separates
//! them. Rendered as a self-contained SVG (`ksim explore --timeline`, `ksim replay
//! --timeline`) and embedded in the HTML trace page (`crate::page`).

use crate::text::{elem_name, thread_name, verb, SourceText};
use crate::{Schedule, Scheduler};
use interp::exec::Observer;
use interp::reference::{BarrierInfo, Rule, StepInfo};
use interp::{Launch, Race};
use std::fmt::Write;

/// The most lanes and marks (threads and K-STEPs together) a timeline draws: each is a
/// line of SVG of about 250 bytes, so a timeline stays under about 12 MB. A longer
/// execution is no picture for a slide, and drawing it would only fill memory and disk.
pub const MAX_ITEMS: u64 = 50_000;

/// Refuses, before anything is recorded, a timeline of `steps` K-STEPs of `launch` larger
/// than [`MAX_ITEMS`].
pub fn check_size(launch: &Launch, steps: u64) -> Result<(), String> {
    let threads = launch.threads() as u64;
    if steps.saturating_add(threads) > MAX_ITEMS {
        return Err(format!(
            "the timeline would draw {steps} K-STEPs on {threads} lanes (at most {MAX_ITEMS} \
             together): use a smaller launch or a shorter schedule"
        ));
    }
    Ok(())
}

/// One K-STEP: its position, its thread (global index) and rule, its source line.
#[derive(Clone, Debug)]
pub struct Mark {
    pub step: u64,
    pub thread: usize,
    pub rule: Rule,
    /// The row of the source listing ([`SourceText::listing`]) that the HTML page links to.
    pub line: usize,
    /// The line as the title shows it ([`SourceText::at`]: `file:line` when included).
    pub at: String,
}

/// A K-BARRIER application: after `after` K-STEPs, work-group `group` entered `epoch`.
#[derive(Clone, Debug)]
pub struct BarrierLine {
    pub after: u64,
    pub group: usize,
    pub epoch: u64,
}

/// The steps and barriers of one execution, and the race to draw.
#[derive(Clone, Debug)]
pub struct Timeline {
    pub threads: usize,
    pub local_size: usize,
    pub groups: usize,
    pub marks: Vec<Mark>,
    pub barriers: Vec<BarrierLine>,
    pub race: Option<Race>,
}

struct Recorder<'a> {
    src: SourceText<'a>,
    local_size: usize,
    marks: Vec<Mark>,
    barriers: Vec<BarrierLine>,
}

impl Observer for Recorder<'_> {
    fn step(&mut self, info: &StepInfo) {
        self.marks.push(Mark {
            step: self.marks.len() as u64,
            thread: info.thread.group * self.local_size + info.thread.local,
            rule: info.rule,
            line: self.src.row(info.span.start),
            at: self.src.at(info.span.start),
        });
    }

    fn barrier(&mut self, info: &BarrierInfo) {
        self.barriers.push(BarrierLine {
            after: self.marks.len() as u64,
            group: info.group,
            epoch: info.epoch,
        });
    }
}

impl Timeline {
    /// Runs `schedule` (a race report's, or any recorded one) and keeps its steps and
    /// barriers; `race` is the race to draw (its steps lie in the schedule).
    pub fn of_schedule(
        src: SourceText<'_>,
        launch: &Launch,
        schedule: &Schedule,
        race: Option<&Race>,
    ) -> Timeline {
        let mut rec = Recorder {
            src,
            local_size: launch.local_size,
            marks: Vec::new(),
            barriers: Vec::new(),
        };
        crate::run(launch, &Scheduler::Replay(schedule.clone()), &mut rec);
        Timeline {
            threads: launch.threads(),
            local_size: launch.local_size,
            groups: launch.groups,
            marks: rec.marks,
            barriers: rec.barriers,
            race: race.cloned(),
        }
    }

    /// The SVG drawing (see the module documentation). Every mark carries `data-step`,
    /// `data-thread` and `data-line`, each lane `data-thread`, each K-BARRIER line
    /// `data-after`; the racing accesses are `#race-first` and `#race-second`, joined by
    /// `#race-link`: the HTML page and the tests find them by these names.
    pub fn svg(&self, src: SourceText<'_>, launch: &Launch) -> String {
        // The label's longest line is about a file path and a statement long.
        let label = self.race.as_ref().map_or(0, |r| {
            let loc = |a: &interp::race::Access| src.location(a.span.start).chars().count();
            48 + loc(&r.first).max(loc(&r.second))
        });
        let geo = Geometry::new(self, label);
        let mut s = String::new();
        let _ = writeln!(
            s,
            r#"<svg xmlns="http://www.w3.org/2000/svg" class="timeline" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="DejaVu Sans, sans-serif" font-size="14">"#,
            w = geo.width,
            h = geo.height
        );
        let _ = writeln!(
            s,
            r##"<rect width="100%" height="100%" fill="#ffffff"/><text x="8" y="22" font-size="16" font-weight="bold">{}: {} K-STEPs, {} K-BARRIERs</text>"##,
            esc(&launch.kernel.name),
            self.marks.len(),
            self.barriers.len()
        );
        self.bands(&mut s, &geo);
        for t in 0..self.threads {
            let y = geo.lane_y(t);
            let _ = writeln!(
                s,
                r##"<g class="lane" data-thread="{t}"><line x1="{x0}" y1="{y}" x2="{x1}" y2="{y}" stroke="#999999" stroke-width="1"/><text x="8" y="{ty}">{name}</text></g>"##,
                x0 = geo.left,
                x1 = geo.width - geo.right,
                ty = y + 5.0,
                name = esc(&lane_name(launch, t)),
            );
        }
        for b in &self.barriers {
            let x = geo.boundary_x(b.after);
            let (y0, y1) = geo.group_span(b.group);
            let _ = writeln!(
                s,
                r##"<g class="barrier" data-after="{a}" data-group="{g}"><line x1="{x}" y1="{y0}" x2="{x}" y2="{y1}" stroke="#1f4e9c" stroke-width="2"/><text x="{tx}" y="{ty}" fill="#1f4e9c" font-size="11">K-BARRIER → epoch {e}</text></g>"##,
                a = b.after,
                g = b.group,
                tx = x + 3.0,
                ty = y0 + 10.0,
                e = b.epoch,
            );
        }
        for m in &self.marks {
            let (x, y) = geo.mark_xy(m.step, m.thread);
            let _ = writeln!(
                s,
                r##"<rect class="step" data-step="{k}" data-thread="{t}" data-line="{l}" x="{rx}" y="{ry}" width="{w}" height="12" fill="#555555"><title>step {k}: thread {t}, {r}, line {at}</title></rect>"##,
                k = m.step,
                t = m.thread,
                l = m.line,
                at = esc(&m.at),
                rx = x - geo.mark_w / 2.0,
                ry = y - 6.0,
                w = geo.mark_w,
                r = m.rule.name(),
            );
        }
        if let Some(r) = &self.race {
            self.race_marks(&mut s, &geo, src, launch, r);
        }
        s.push_str("</svg>\n");
        s
    }

    /// Each work-group's barrier epochs as alternately shaded bands across its lanes.
    fn bands(&self, s: &mut String, geo: &Geometry) {
        for g in 0..self.groups {
            let mut cuts: Vec<u64> = vec![0];
            cuts.extend(
                self.barriers
                    .iter()
                    .filter(|b| b.group == g)
                    .map(|b| b.after),
            );
            cuts.push(self.marks.len() as u64);
            let (y0, y1) = geo.group_span(g);
            for (i, w) in cuts.windows(2).enumerate() {
                let (x0, x1) = (geo.boundary_x(w[0]), geo.boundary_x(w[1]));
                let fill = if i % 2 == 0 { "#eef3fb" } else { "#f9f9f2" };
                let _ = writeln!(
                    s,
                    r#"<rect class="epoch" data-group="{g}" data-epoch="{i}" x="{x0}" y="{y0}" width="{w}" height="{h}" fill="{fill}"/>"#,
                    w = (x1 - x0).max(0.0),
                    h = y1 - y0,
                );
            }
        }
    }

    fn race_marks(
        &self,
        s: &mut String,
        geo: &Geometry,
        src: SourceText<'_>,
        launch: &Launch,
        r: &Race,
    ) {
        let elem = elem_name(launch, r.array, r.instance, &r.index);
        let global = |t: interp::ThreadId| t.group * launch.local_size + t.local;
        let (a, b) = (&r.first, &r.second);
        let (xa, ya) = geo.mark_xy(a.step, global(a.thread));
        let (xb, yb) = geo.mark_xy(b.step, global(b.thread));
        // A curve above the straight line, so that it clears the marks between them.
        let (mx, my) = ((xa + xb) / 2.0, ya.min(yb) - geo.lane_h * 0.8);
        let _ = writeln!(
            s,
            r##"<path id="race-link" class="race-link" d="M {xa} {ya} Q {mx} {my} {xb} {yb}" fill="none" stroke="#c0392b" stroke-width="3"/>"##
        );
        for (id, acc, x, y) in [("race-first", a, xa, ya), ("race-second", b, xb, yb)] {
            let _ = writeln!(
                s,
                r##"<circle id="{id}" class="race-access" data-step="{k}" data-thread="{t}" data-line="{l}" cx="{x}" cy="{y}" r="8" fill="#c0392b"><title>step {k}: {who} {v} {e} at {loc}</title></circle>"##,
                k = acc.step,
                t = global(acc.thread),
                l = src.row(acc.span.start),
                who = esc(&thread_name(launch, acc.thread)),
                v = verb(acc.kind),
                e = esc(&elem),
                loc = esc(&src.location(acc.span.start)),
            );
        }
        let access = |k: u64, acc: &interp::race::Access| {
            format!(
                "step {k}: {} {} it at {}",
                thread_name(launch, acc.thread),
                verb(acc.kind),
                src.location(acc.span.start)
            )
        };
        let lines = [
            format!("data race on {elem}, no K-BARRIER between:"),
            access(a.step, a),
            access(b.step, b),
        ];
        let _ = write!(
            s,
            r##"<text id="race-label" x="8" y="{y}" fill="#c0392b" font-weight="bold">"##,
            y = geo.label_y()
        );
        for (i, l) in lines.iter().enumerate() {
            let _ = write!(
                s,
                r#"<tspan x="8" dy="{}">{}</tspan>"#,
                if i == 0 { 0 } else { 18 },
                esc(l)
            );
        }
        s.push_str("</text>\n");
    }
}

/// `t3`, or `g1.t3` when the launch has several groups.
fn lane_name(launch: &Launch, t: usize) -> String {
    if launch.groups > 1 {
        format!("g{}.t{}", t / launch.local_size, t % launch.local_size)
    } else {
        format!("t{t}")
    }
}

/// Where things go: a column per K-STEP, a lane per thread.
struct Geometry {
    left: f64,
    right: f64,
    top: f64,
    lane_h: f64,
    dx: f64,
    mark_w: f64,
    local_size: usize,
    width: f64,
    height: f64,
}

impl Geometry {
    /// `label`: characters of the widest line of the race label.
    fn new(t: &Timeline, label: usize) -> Geometry {
        let steps = t.marks.len().max(1) as f64;
        // About a slide's width, but never less than 4 px per step.
        let dx = (1000.0 / steps).clamp(4.0, 28.0);
        let (left, right, top, lane_h) = (70.0, 20.0, 60.0, 32.0);
        Geometry {
            left,
            right,
            top,
            lane_h,
            dx,
            mark_w: (dx * 0.6).clamp(2.0, 12.0),
            local_size: t.local_size,
            width: (left + right + dx * steps).max(16.0 + 8.5 * label as f64),
            height: top + lane_h * t.threads as f64 + if label > 0 { 80.0 } else { 20.0 },
        }
    }

    /// The baseline of the race label's first line, below the lanes.
    fn label_y(&self) -> f64 {
        self.height - 50.0
    }

    fn lane_y(&self, t: usize) -> f64 {
        self.top + self.lane_h * (t as f64 + 0.5)
    }

    /// The centre of step `k`'s mark on thread `t`'s lane.
    fn mark_xy(&self, k: u64, t: usize) -> (f64, f64) {
        (self.left + self.dx * (k as f64 + 0.5), self.lane_y(t))
    }

    /// The boundary after `k` K-STEPs.
    fn boundary_x(&self, k: u64) -> f64 {
        self.left + self.dx * k as f64
    }

    /// The vertical extent of work-group `g`'s lanes.
    fn group_span(&self, g: usize) -> (f64, f64) {
        let y0 = self.top + self.lane_h * (g * self.local_size) as f64;
        (y0, y0 + self.lane_h * self.local_size as f64)
    }
}

/// Text for SVG and HTML: the five characters XML reserves, escaped.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}
