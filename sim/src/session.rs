//! One student's stepping session of `ksim serve`: the [`interp::stepper`] state machine
//! (the one `ksim step` drives) with a record of the steps taken, the steps undone (for
//! going forward again), and views of it as JSON for the page. Nothing here is a second
//! semantics: every step is [`Stepper::step`], every view is read from the stepper.
//!
//! Every request is bounded: a session takes at most [`MAX_STEPS`] K-STEPs in all (a run
//! to the end stops there), its launch has at most [`crate::step_view::MAX_VALUES`]
//! values, and its state graph is drawn only for a tiny launch ([`GRAPH_MAX_THREADS`],
//! [`GRAPH_MAX_STATES`]).

use crate::report::{LaunchSpec, RaceReport, Recorded};
use crate::step_view::StepView;
use crate::text::{elem_name, SourceText};
use crate::timeline::Timeline;
use interp::exec::Schedule;
use interp::stepper::{Status, Step, Stepper};
use interp::{notation, Launch, Race};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::sync::Arc;

/// The most K-STEPs one session takes: its step log is kept and sent whole, and `back`
/// replays the schedule from the start.
pub const MAX_STEPS: u64 = 5_000;
/// The most threads of a launch whose state graph a session draws.
pub const GRAPH_MAX_THREADS: usize = 4;
/// The most configurations of a session's state graph.
pub const GRAPH_MAX_STATES: usize = 300;

/// A kernel as a session shows it: its file name, its text and the files it included.
#[derive(Clone, Debug)]
pub struct Source {
    pub path: String,
    pub text: String,
    pub includes: Vec<(String, String, usize)>,
}

impl Source {
    pub fn view(&self) -> SourceText<'_> {
        SourceText {
            path: &self.path,
            text: &self.text,
            color: false,
            includes: &self.includes,
        }
    }
}

/// What the page asks to open: a kernel's text under a file name and the launch, as the
/// command line's options (`-D`, sizes, `--input`) would give it.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct LaunchRequest {
    /// The file name: its extension says the language (`.ksim`, `.cl`, `.cu`, `.pvl`).
    pub file: String,
    pub source: String,
    /// `-D` options, each `NAME=VALUE` (or `NAME` for a C macro).
    pub defines: Vec<String>,
    pub groups: Option<String>,
    pub local_size: Option<String>,
    /// `--input` options, each `ARRAY=SPEC`.
    pub inputs: Vec<String>,
    /// `--arg` options of a `.cl` kernel, each `NAME=VALUE`.
    pub args: Vec<String>,
    pub global: Option<String>,
    pub local: Option<String>,
    pub kernel: Option<String>,
}

impl LaunchRequest {
    /// The request that opens the kernel and launch a race report recorded.
    pub fn of_report(report: &RaceReport) -> Result<LaunchRequest, String> {
        let source = report.source.clone().ok_or(
            "this race report keeps no kernel source (format 1): replay it with `ksim replay`",
        )?;
        let file = Path::new(&report.kernel_path)
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_else(|| report.kernel_path.clone());
        let mut r = LaunchRequest {
            file,
            source,
            ..LaunchRequest::default()
        };
        if let Some(f) = &report.flags {
            r.defines = (f.defines.iter())
                .map(|(n, v)| match v {
                    Some(v) => format!("{n}={v}"),
                    None => n.clone(),
                })
                .collect();
            r.groups = f.groups.clone();
            r.local_size = f.local_size.clone();
            r.inputs = (f.inputs.iter()).map(|(n, s)| format!("{n}={s}")).collect();
            r.args = (f.args.iter()).map(|(n, v)| format!("{n}={v}")).collect();
            r.global = f.global.clone();
            r.local = f.local.clone();
            r.kernel = f.kernel.clone();
        }
        Ok(r)
    }
}

/// A kernel loaded and launched (by the CLI, which owns the front ends), with what a race
/// report of it records.
pub struct Loaded {
    pub source: Source,
    pub launch: Launch,
    pub recorded: Recorded,
    pub spec: LaunchSpec,
}

self_cell::self_cell!(
    /// The launch and the stepper that borrows it, kept together for the session's life.
    struct Live {
        owner: Arc<Launch>,
        #[covariant]
        dependent: Stepper,
    }
);

/// One K-STEP as the page lists it, with the K-BARRIERs it enabled.
#[derive(Clone, Debug, Serialize)]
pub struct LogRow {
    pub index: u64,
    pub thread: usize,
    pub rule: String,
    /// `step 4: t1 S-ARRAY  out[tid] := ...   out[1]: 1 -> 2`
    pub text: String,
    /// The statement's line in the kernel's file.
    pub line: usize,
    /// The K-BARRIER lines that followed the step.
    pub barriers: Vec<String>,
    /// The races (indices into [`View::races`]) this step is one of the two accesses of.
    pub races: Vec<usize>,
}

/// A race found so far: the two steps and the diagnostic.
#[derive(Clone, Debug, Serialize)]
pub struct RaceRow {
    pub element: String,
    pub first_step: u64,
    pub second_step: u64,
    pub first_line: usize,
    pub second_line: usize,
    /// The race as `ksim step` prints it: both statements highlighted.
    pub message: String,
}

/// One thread of the configuration.
#[derive(Clone, Debug, Serialize)]
pub struct ThreadRow {
    pub thread: usize,
    pub name: String,
    pub vars: Vec<(String, String)>,
    /// `enabled`, `at barrier` or `done`.
    pub status: String,
    /// The next statement in core form (empty when done).
    pub next: String,
    /// Its line (0 when done).
    pub line: usize,
    /// The rule its next K-STEP applies, or the fault it would raise.
    pub rule: String,
    pub enabled: bool,
}

/// One array instance of σ_A.
#[derive(Clone, Debug, Serialize)]
pub struct ArrayRow {
    pub name: String,
    pub values: Vec<String>,
    /// Offsets the last K-STEP wrote.
    pub changed: Vec<usize>,
    /// Offsets of a race found so far.
    pub raced: Vec<usize>,
}

/// Everything the page shows of a session.
#[derive(Clone, Debug, Serialize)]
pub struct View {
    pub file: String,
    pub source: String,
    pub kernel: String,
    /// `2 group(s) of 2 threads, monoid int-add`
    pub launch: String,
    pub steps: u64,
    pub max_steps: u64,
    pub epochs: Vec<u64>,
    pub is_final: bool,
    /// The fault that stopped the execution, as a diagnostic.
    pub fault: Option<String>,
    /// K-BARRIERs enabled in the initial configuration.
    pub initial_barriers: Vec<String>,
    pub threads: Vec<ThreadRow>,
    pub arrays: Vec<ArrayRow>,
    pub log: Vec<LogRow>,
    pub races: Vec<RaceRow>,
    /// Steps undone by `back` that `forward` takes again.
    pub forward: usize,
    /// The thread canonical scheduling runs next.
    pub canonical: Option<usize>,
}

/// Where a run of canonical steps stops.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Until {
    /// One step.
    Step,
    /// After the next K-BARRIER fires.
    Barrier,
    /// After the step that completes a new race.
    Race,
    /// At the end of the execution (or [`MAX_STEPS`]).
    End,
}

/// A stepping session.
pub struct Session {
    source: Source,
    live: Live,
    recorded: Recorded,
    spec: LaunchSpec,
    log: Vec<LogRow>,
    /// Every race of the steps in `log`, in the order found.
    races: Vec<Race>,
    /// The choices `back` undid, the next one last.
    undone: Vec<usize>,
    graph: Option<Result<String, String>>,
}

impl Session {
    /// A session at the initial configuration of `loaded`; refuses a launch too large to
    /// show.
    pub fn new(loaded: Loaded) -> Result<Session, String> {
        let Loaded {
            source,
            mut launch,
            recorded,
            spec,
        } = loaded;
        // Stepping by hand ends at the first fault (`back` undoes it), as in `ksim step`.
        launch.continue_after_faults = false;
        crate::step_view::check_size(&launch)
            .map_err(|e| e.replace("`ksim step`", "`ksim serve`"))?;
        let live = Live::new(Arc::new(launch), |l| Stepper::new(l));
        Ok(Session {
            source,
            live,
            recorded,
            spec,
            log: Vec::new(),
            races: Vec::new(),
            undone: Vec::new(),
            graph: None,
        })
    }

    fn launch(&self) -> &Launch {
        self.live.borrow_owner()
    }

    fn stepper(&self) -> &Stepper<'_> {
        self.live.borrow_dependent()
    }

    pub fn steps(&self) -> u64 {
        self.stepper().steps()
    }

    pub fn schedule(&self) -> &Schedule {
        self.stepper().schedule()
    }

    /// K-STEP for thread `t`; `Err` says why it was refused. A different choice than the
    /// one `back` undid forgets the undone steps.
    pub fn step(&mut self, t: usize) -> Result<(), String> {
        if self.undone.last() == Some(&t) {
            self.undone.pop();
        } else {
            self.undone.clear();
        }
        self.take(t)
    }

    fn take(&mut self, t: usize) -> Result<(), String> {
        if self.steps() >= MAX_STEPS {
            return Err(format!(
                "this session has taken {MAX_STEPS} steps, the most a session of `ksim serve` \
                 takes; use `ksim trace` or `ksim run` for longer executions"
            ));
        }
        let stepped = self
            .live
            .with_dependent_mut(|_, st| st.step(t))
            .map_err(|refusal| format!("cannot step thread {t}: {refusal}"))?;
        if let Ok(step) = stepped {
            self.record(&step);
        }
        Ok(())
    }

    fn record(&mut self, s: &Step) {
        let (line, text, barriers) = {
            let view = self.step_view();
            (
                self.source.view().line(s.info.span.start),
                view.step_line(s),
                (s.barriers.iter()).map(|b| view.barrier_line(b)).collect(),
            )
        };
        self.log.push(LogRow {
            index: s.index,
            thread: s.thread,
            rule: s.info.rule.to_string(),
            text,
            line,
            barriers,
            races: Vec::new(),
        });
        for r in &s.races {
            let id = self.races.len();
            for step in [r.first.step, r.second.step] {
                if let Some(row) = self.log.get_mut(step as usize) {
                    if !row.races.contains(&id) {
                        row.races.push(id);
                    }
                }
            }
            self.races.push(r.clone());
        }
    }

    /// Canonical steps (the lowest enabled thread) until `until` holds, the execution ends
    /// or the session's step bound is reached; `Err` when not one step could be taken.
    pub fn run(&mut self, until: Until) -> Result<(), String> {
        let mut taken = 0;
        loop {
            let Some(t) = self.stepper().canonical() else {
                if taken == 0 {
                    return Err(self.end_reason());
                }
                return Ok(());
            };
            let (steps, races) = (self.steps(), self.races.len());
            match self.step(t) {
                Err(e) if taken == 0 => return Err(e),
                Err(_) => return Ok(()),
                Ok(()) => taken += 1,
            }
            let stop = match until {
                Until::Step => true,
                Until::Barrier => self.log.last().is_some_and(|r| !r.barriers.is_empty()),
                Until::Race => self.races.len() > races,
                Until::End => false,
            };
            if stop || self.steps() == steps {
                return Ok(()); // the condition holds, or a fault took no step
            }
        }
    }

    fn end_reason(&self) -> String {
        if self.stepper().fault().is_some() {
            "the execution stopped at a fault (go back to undo it)".into()
        } else {
            "every thread has terminated".into()
        }
    }

    /// Undoes the last K-STEP (or the fault that stopped the execution); false at the
    /// initial configuration.
    pub fn back(&mut self) -> bool {
        let faulted = self.stepper().fault().is_some();
        let last = self.stepper().schedule().choices().last();
        if !self.live.with_dependent_mut(|_, st| st.back()) {
            return false;
        }
        if !faulted {
            if let Some(t) = last {
                self.undone.push(t);
            }
            if let Some(row) = self.log.pop() {
                let gone = row.index;
                self.races
                    .retain(|r| r.second.step != gone && r.first.step != gone);
                for row in &mut self.log {
                    row.races.clear();
                }
                for (id, r) in self.races.iter().enumerate() {
                    for step in [r.first.step, r.second.step] {
                        if let Some(row) = self.log.get_mut(step as usize) {
                            row.races.push(id);
                        }
                    }
                }
            }
        }
        true
    }

    /// Takes again the last step `back` undid; false when there is none.
    pub fn forward(&mut self) -> Result<bool, String> {
        match self.undone.pop() {
            None => Ok(false),
            Some(t) => self.take(t).map(|_| true),
        }
    }

    /// Follows `schedule` from the initial configuration (a saved schedule, or a race
    /// report's).
    pub fn replay(&mut self, schedule: &Schedule) -> Result<(), String> {
        if schedule.len() > MAX_STEPS {
            return Err(format!(
                "the schedule has {} steps; a session of `ksim serve` takes at most {MAX_STEPS}",
                schedule.len()
            ));
        }
        schedule.check(self.launch())?;
        let launch = self.live.borrow_owner().clone();
        self.live = Live::new(launch, |l| Stepper::new(l));
        self.log.clear();
        self.races.clear();
        self.undone.clear();
        for (k, t) in schedule.choices().enumerate() {
            self.take(t)
                .map_err(|e| format!("step {k} of the schedule: {e}"))?;
            if self.stepper().fault().is_some() {
                break;
            }
        }
        Ok(())
    }

    fn step_view(&self) -> StepView<'_> {
        StepView {
            source: self.source.view(),
            launch: self.launch(),
        }
    }

    fn thread_name(&self, t: usize) -> String {
        let l = self.launch();
        if l.groups > 1 {
            format!("t{t} (g{}.t{})", t / l.local_size, t % l.local_size)
        } else {
            format!("t{t}")
        }
    }

    /// The page's view of the session.
    pub fn view(&self) -> View {
        let launch = self.launch();
        let st = self.stepper();
        let src = self.source.view();
        let view = self.step_view();
        let c = st.config();
        let threads = (c.threads.iter())
            .map(|t| {
                let (status, rule, enabled) = match &t.status {
                    Status::Done => ("done", String::new(), false),
                    Status::AtBarrier { .. } => ("at barrier", String::new(), false),
                    Status::Enabled { rule } => (
                        "enabled",
                        match rule {
                            Ok(r) => r.to_string(),
                            Err(f) => format!("faults: {f}"),
                        },
                        true,
                    ),
                };
                let (next, line) = match &t.next {
                    Some((text, span)) => (
                        if text.is_empty() {
                            src.statement(span)
                        } else {
                            text.clone()
                        },
                        src.line(span.start),
                    ),
                    None => (String::new(), 0),
                };
                ThreadRow {
                    thread: t.thread,
                    name: self.thread_name(t.thread),
                    vars: (t.vars.iter())
                        .map(|(n, v)| (n.clone(), notation::value(v)))
                        .collect(),
                    status: status.into(),
                    next,
                    line,
                    rule,
                    enabled: enabled && st.fault().is_none(),
                }
            })
            .collect();
        let arrays = (c.arrays.iter())
            .map(|a| ArrayRow {
                name: elem_name(launch, a.array, a.instance, &[]),
                values: a.values.iter().map(notation::value).collect(),
                changed: a.changed.clone(),
                raced: (self.races.iter())
                    .filter(|r| r.array == a.array && r.instance == a.instance)
                    .map(|r| offset(launch, r))
                    .collect(),
            })
            .collect();
        let races = (self.races.iter())
            .map(|r| RaceRow {
                element: elem_name(launch, r.array, r.instance, &r.index),
                first_step: r.first.step,
                second_step: r.second.step,
                first_line: src.line(r.first.span.start),
                second_line: src.line(r.second.span.start),
                message: src.race(launch, r, &[]),
            })
            .collect();
        View {
            file: self.source.path.clone(),
            source: self.source.text.clone(),
            kernel: launch.kernel.name.clone(),
            launch: format!(
                "{} group(s) of {} threads, monoid {}",
                launch.groups, launch.local_size, launch.monoid
            ),
            steps: c.steps,
            max_steps: MAX_STEPS,
            epochs: c.epochs.clone(),
            is_final: c.is_final,
            fault: st.fault().map(|f| src.fault(launch, f)),
            initial_barriers: (st.initial_barriers().iter())
                .map(|b| view.barrier_line(b))
                .collect(),
            threads,
            arrays,
            log: self.log.clone(),
            races,
            forward: self.undone.len(),
            canonical: if st.fault().is_some() {
                None
            } else {
                st.canonical()
            },
        }
    }

    /// The schedule so far, as `ksim run --schedule @FILE` reads it.
    pub fn schedule_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self.schedule()).expect("a schedule is JSON");
        s.push('\n');
        s
    }

    /// A race report of race `id` (an index into [`View::races`]), as `ksim replay`
    /// reads it, with its file name.
    pub fn report(&self, id: usize) -> Result<(String, String), String> {
        let race = self
            .races
            .get(id)
            .ok_or_else(|| format!("there is no race {id}: {} found so far", self.races.len()))?;
        let found = crate::explore::FoundRace {
            race: race.clone(),
            schedule: self.schedule().prefix(race.second.step + 1),
        };
        let rep = RaceReport::new(
            self.source.view(),
            self.recorded.clone(),
            self.launch(),
            self.spec.clone(),
            &found,
            "ksim serve",
            Path::new("."),
        );
        Ok((rep.file_name_for(self.source.view()), rep.to_json()))
    }

    /// The race timeline of the steps so far, with the first race found drawn.
    pub fn timeline(&self) -> Result<String, String> {
        let launch = self.launch();
        crate::timeline::check_size(launch, self.steps())?;
        let t = Timeline::of_schedule(
            self.source.view(),
            launch,
            self.schedule(),
            self.races.first(),
        );
        Ok(t.svg(self.source.view(), launch))
    }

    /// The state graph of the launch (every interleaving), for a tiny launch; computed
    /// once per session.
    pub fn graph(&mut self) -> Result<String, String> {
        if self.graph.is_none() {
            self.graph = Some(self.draw_graph());
        }
        self.graph.clone().expect("just computed")
    }

    fn draw_graph(&self) -> Result<String, String> {
        let launch = self.launch();
        if launch.threads() > GRAPH_MAX_THREADS {
            return Err(format!(
                "the launch has {} threads; the page draws the state graph of a launch of at \
                 most {GRAPH_MAX_THREADS} threads (make it smaller with the sizes or -D)",
                launch.threads()
            ));
        }
        let g = crate::graph::reachable(launch, GRAPH_MAX_STATES);
        let legend = crate::graph_view::legend(&g, None);
        let labels: Vec<String> = (g.nodes.iter())
            .map(|n| crate::graph_view::label(self.source.view(), launch, n))
            .collect();
        let dot = crate::graph_view::dot(launch, &g, &labels, &legend);
        let (svg, _) = crate::graph_view::svg(&dot)?;
        // Graphviz starts with an XML prolog and a DOCTYPE, which have no place in the page.
        let mut svg = svg[svg.find("<svg").unwrap_or(0)..].to_string();
        if g.truncated {
            svg = format!("<p>truncated at {GRAPH_MAX_STATES} configurations</p>\n{svg}");
        }
        Ok(svg)
    }
}

/// The row-major offset of a race's element in its array instance.
fn offset(launch: &Launch, r: &Race) -> usize {
    (r.index.iter().zip(launch.dims[r.array].iter())).fold(0, |acc, (i, d)| acc * d + i)
}
