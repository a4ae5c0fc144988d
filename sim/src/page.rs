//! The HTML trace page for the lecture hall (issue 12, `ksim trace --html`, `ksim explore
//! --html`): one self-contained file — the page template (`page.html`, kept as a file),
//! the execution as embedded JSON, script and CSS inline, no network.
//!
//! The execution is followed with [`interp::stepper::Stepper`], the state machine of `ksim
//! step`, so that the configuration after every step (each thread's variables, next
//! statement in core form and status; the arrays with the cells the step wrote) is the
//! one `ksim step` shows; the step records are those of `ksim trace --format json`
//! ([`crate::trace::TraceView`]) and the lanes are the race timeline ([`crate::timeline`]).

use crate::text::{elem_name, SourceText};
use crate::timeline::{esc, Timeline};
use crate::trace::{race_marks, snapshot_row, Options, TraceView};
use crate::Schedule;
use interp::stepper::{Config, Status, Step, Stepper};
use interp::{notation, Fault, Launch};
use serde::Serialize;

/// The page's template: HTML, CSS and script, with `{{TITLE}}`, `{{TIMELINE}}` and
/// `{{DATA}}` to fill in.
const TEMPLATE: &str = include_str!("page.html");

/// The most bytes of data (the JSON of every configuration and step record) a page
/// embeds: 8 MiB. The page holds the configuration after every step, so it grows with
/// steps × (variables + elements); past this a browser struggles, and building it would
/// take many times as much memory.
pub const MAX_DATA_BYTES: usize = 8 << 20;

/// Bytes of a step record in the page data, about (the records are made last).
const STEP_RECORD_BYTES: usize = 200;

#[derive(Serialize)]
struct Data {
    kernel: String,
    path: String,
    /// The source listing ([`SourceText::listing`]): `[number shown, text]` per row; every
    /// `line` of the page data (the step records' included) is a row of it.
    source: Vec<(String, String)>,
    threads: usize,
    groups: usize,
    steps: Vec<serde_json::Value>,
    /// Indexed by the number of steps taken: `configs[k]` is the configuration after k
    /// K-STEPs (and the K-BARRIERs they enabled).
    configs: Vec<PageConfig>,
    races: Vec<PageRace>,
    snapshots: Snapshots,
    /// The fault that ended the execution, if any.
    fault: Option<String>,
}

#[derive(Serialize)]
struct PageConfig {
    threads: Vec<PageThread>,
    arrays: Vec<PageArray>,
    epochs: Vec<u64>,
}

#[derive(Serialize)]
struct PageThread {
    label: String,
    status: String,
    next: String,
    /// Row of the source listing of the next statement (0: none).
    line: usize,
    vars: Vec<(String, String)>,
}

#[derive(Serialize)]
struct PageArray {
    name: String,
    /// Each element's name as traces print it (`out[1]`).
    elems: Vec<String>,
    values: Vec<String>,
    changed: Vec<usize>,
}

#[derive(Serialize)]
struct PageAccess {
    step: u64,
    thread: usize,
    line: usize,
    what: String,
}

#[derive(Serialize)]
struct PageRace {
    elem: String,
    first: PageAccess,
    second: PageAccess,
}

#[derive(Serialize)]
struct Snapshots {
    names: Vec<String>,
    /// `(label, epoch, cells per array, after how many steps)`.
    rows: Vec<(String, String, Vec<String>, u64)>,
}

/// The page of the execution that follows `schedule` from the initial configuration.
/// Errors: the schedule does not fit the launch, or the page would be too large
/// ([`MAX_DATA_BYTES`], [`crate::timeline::MAX_ITEMS`]): refused from the first
/// configuration's size before anything is built, and while it is built if the
/// configurations grow.
pub fn render(src: SourceText<'_>, launch: &Launch, schedule: &Schedule) -> Result<String, String> {
    let k = &launch.kernel;
    crate::timeline::check_size(launch, schedule.len())
        .map_err(|e| e.replacen("the timeline", "the page's timeline", 1))?;
    let mut stepper = Stepper::new(launch);
    let first = page_config(src, launch, &stepper.config());
    let per_step = weight(&first) + STEP_RECORD_BYTES;
    let estimate = per_step.saturating_mul(schedule.len() as usize + 1);
    let too_large = |bytes: usize| {
        format!(
            "the page would hold about {} MiB of data ({} steps × about {per_step} bytes; at \
             most {} MiB): use a smaller launch or a shorter schedule",
            bytes >> 20,
            schedule.len(),
            MAX_DATA_BYTES >> 20
        )
    };
    if estimate > MAX_DATA_BYTES {
        return Err(too_large(estimate));
    }
    let mut bytes = weight(&first);
    let mut configs = vec![first];
    let initial = launch.initial_memory();
    let mut rows = vec![(
        "initial".to_string(),
        String::new(),
        snapshot_row(launch, &initial, 0),
        0,
    )];
    let mut barriers = 0;
    let mut snapshot = |b: &interp::reference::BarrierInfo, memory: &interp::Memory, after: u64| {
        barriers += 1;
        let group = if launch.groups > 1 {
            format!("g{} ", b.group)
        } else {
            String::new()
        };
        rows.push((
            format!("B{barriers}"),
            format!("{group}{}", b.epoch),
            snapshot_row(launch, memory, b.group),
            after,
        ));
        serde_json::json!({"number": barriers, "group": b.group, "epoch": b.epoch})
    };
    let memory = stepper.state().memory(launch);
    for b in stepper.initial_barriers() {
        snapshot(b, &memory, 0);
    }
    let mut steps: Vec<(Step, Vec<serde_json::Value>)> = Vec::new();
    let mut fault: Option<Fault> = None;
    for (i, t) in schedule.choices().enumerate() {
        match stepper.step(t) {
            Ok(Ok(step)) => {
                let memory = stepper.state().memory(launch);
                let fired = (step.barriers.iter())
                    .map(|b| snapshot(b, &memory, step.index + 1))
                    .collect();
                steps.push((step, fired));
            }
            Ok(Err(f)) => {
                fault = Some(f);
                break;
            }
            Err(why) => return Err(format!("step {i} of the schedule (thread {t}): {why}")),
        }
        let config = page_config(src, launch, &stepper.config());
        bytes += weight(&config) + STEP_RECORD_BYTES;
        if bytes > MAX_DATA_BYTES {
            return Err(too_large(estimate.max(bytes)));
        }
        configs.push(config);
    }
    rows.push((
        "end".into(),
        String::new(),
        snapshot_row(launch, &stepper.state().memory(launch), 0),
        steps.len() as u64,
    ));
    // The step records of `trace --format json` (with reads), each with the K-BARRIERs
    // its step enabled.
    let mut view = TraceView::new(src, launch, true).with_options(
        Options {
            reads: true,
            ..Options::default()
        },
        race_marks(launch, stepper.races()),
    );
    let records = (steps.iter())
        .map(|(s, fired)| {
            let line = view.step(&s.info).expect("no filter");
            let mut rec: serde_json::Value = serde_json::from_str(&line).expect("a trace record");
            rec["barriers"] = fired.clone().into();
            // The row of the page's listing, which holds the included files too.
            rec["line"] = src.row(s.info.span.start).into();
            rec
        })
        .collect();
    let races = stepper
        .races()
        .iter()
        .map(|r| {
            let access = |a: &interp::race::Access| PageAccess {
                step: a.step,
                thread: a.thread.group * launch.local_size + a.thread.local,
                line: src.row(a.span.start),
                what: format!(
                    "{} {} at {}",
                    crate::text::thread_name(launch, a.thread),
                    crate::text::verb(a.kind),
                    src.location(a.span.start)
                ),
            };
            PageRace {
                elem: elem_name(launch, r.array, r.instance, &r.index),
                first: access(&r.first),
                second: access(&r.second),
            }
        })
        .collect();
    let data = Data {
        kernel: k.name.clone(),
        path: src.path.to_string(),
        source: src.listing(),
        threads: launch.threads(),
        groups: launch.groups,
        steps: records,
        configs,
        races,
        snapshots: Snapshots {
            names: (k.arrays.iter())
                .filter(|a| !a.is_const)
                .map(|a| a.name.clone())
                .collect(),
            rows,
        },
        fault: fault
            .or_else(|| stepper.fault().cloned())
            .map(|f| f.kind.to_string()),
    };
    let timeline = Timeline::of_schedule(src, launch, schedule, stepper.races().first());
    // Kernel text in the embedded JSON must not end its script element (`</script`) or
    // open an HTML comment (`<!--`, which makes `</script>` no longer end it): `<` occurs
    // only inside JSON strings, where `\u003c` is the same character.
    let json = serde_json::to_string(&data)
        .expect("JSON")
        .replace('<', "\\u003c");
    Ok(TEMPLATE
        .replace("{{TITLE}}", &esc(&format!("{} — ksim trace", k.name)))
        .replace("{{TIMELINE}}", &timeline.svg(src, launch))
        .replace("{{DATA}}", &json))
}

fn page_config(src: SourceText<'_>, launch: &Launch, c: &Config) -> PageConfig {
    let line = |span: &lang::ast::Span| src.row(span.start);
    let threads = (c.threads.iter())
        .map(|t| PageThread {
            label: if launch.groups > 1 {
                format!("g{}.t{}", t.group, t.local)
            } else {
                format!("t{}", t.thread)
            },
            status: match &t.status {
                Status::Enabled { rule: Ok(r) } => format!("enabled ({})", r.name()),
                Status::Enabled { rule: Err(f) } => format!("enabled (faults: {f})"),
                Status::AtBarrier { span } => format!("at barrier (line {})", src.at(span.start)),
                Status::Done => "done".into(),
            },
            next: t.next.as_ref().map(|n| n.0.clone()).unwrap_or_default(),
            line: t.next.as_ref().map(|n| line(&n.1)).unwrap_or(0),
            vars: (t.vars.iter())
                .map(|(n, v)| (n.clone(), notation::value(v)))
                .collect(),
        })
        .collect();
    let arrays = (c.arrays.iter())
        .map(|a| {
            let decl = &launch.kernel.arrays[a.array];
            let name = if launch.instances(a.array) > 1 {
                format!("{} (group {})", decl.name, a.instance)
            } else {
                decl.name.clone()
            };
            let dims = &launch.dims[a.array];
            PageArray {
                name,
                elems: (0..a.values.len())
                    .map(|o| elem_name(launch, a.array, a.instance, &unflatten(o, dims)))
                    .collect(),
                values: a.values.iter().map(notation::value).collect(),
                changed: a.changed.clone(),
            }
        })
        .collect();
    PageConfig {
        threads,
        arrays,
        epochs: c.epochs.clone(),
    }
}

/// About the bytes `c` takes in the page's JSON: its strings and a little per field.
fn weight(c: &PageConfig) -> usize {
    let threads: usize = (c.threads.iter())
        .map(|t| {
            64 + t.label.len()
                + t.status.len()
                + t.next.len()
                + (t.vars.iter())
                    .map(|(n, v)| n.len() + v.len() + 8)
                    .sum::<usize>()
        })
        .sum();
    let arrays: usize = (c.arrays.iter())
        .map(|a| {
            48 + a.name.len()
                + a.elems.iter().map(|e| e.len() + 3).sum::<usize>()
                + a.values.iter().map(|v| v.len() + 3).sum::<usize>()
                + a.changed.len() * 8
        })
        .sum();
    threads + arrays + c.epochs.len() * 8
}

/// A row-major offset as one index per dimension.
pub(crate) fn unflatten(mut offset: usize, dims: &[usize]) -> Vec<usize> {
    let mut index = vec![0; dims.len()];
    for (i, d) in dims.iter().enumerate().rev() {
        index[i] = offset % d.max(&1);
        offset /= d.max(&1);
    }
    index
}
