//! `ksim replay`: finding a race report's kernel, deciding whether it may be replayed,
//! re-running the recorded schedule and deciding whether the race was reproduced.

use crate::report::{self, RaceReport};
use crate::schedule::{self, Infeasible, Scheduler};
use interp::exec::{Observer, Outcome};
use interp::race::Race;
use interp::Launch;
use std::path::Path;

/// The kernel source a replay uses.
#[derive(Clone, Debug)]
pub struct KernelSource {
    /// The file read, or the report itself when the kernel file was not found.
    pub path: String,
    pub text: String,
    /// No kernel file was found: the source is the copy stored in the report.
    pub from_report: bool,
    /// The file differs from the source the report was written from: its unified diff
    /// (or a note when the report, of format 1, holds no copy to compare with).
    pub changed: Option<String>,
}

/// Finds the kernel of `rep` (read from `report`): relative to the report's folder, by its
/// absolute path, as given; else the copy of the source kept in the report. Errors when no
/// file is found and the report holds no source.
pub fn kernel_source(rep: &RaceReport, report: &Path) -> Result<KernelSource, String> {
    let found = rep
        .kernel_candidates(report)
        .into_iter()
        .find(|p| p.is_file())
        .map(|p| {
            // Shown in diagnostics: without the `..` of a path relative to the report.
            let shown = std::fs::canonicalize(&p).unwrap_or_else(|_| p.clone());
            files::read_to_string(&p, files::TEXT_LIMIT)
                .map(|t| (shown.display().to_string(), t))
                .map_err(|e| e.to_string())
        })
        .transpose()?;
    match (found, &rep.source) {
        (Some((path, text)), stored) => {
            let changed = (report::source_hash(&text) != rep.source_hash).then(|| match stored {
                Some(old) => report::source_diff(old, &text, "source in the report", &path),
                None => "(the report, of format 1, keeps no copy of the source to compare with)\n"
                    .to_string(),
            });
            Ok(KernelSource {
                path,
                text,
                from_report: false,
                changed,
            })
        }
        (None, Some(text)) => Ok(KernelSource {
            path: report.display().to_string(),
            text: text.clone(),
            from_report: true,
            changed: None,
        }),
        (None, None) => Err(format!(
            "the kernel file `{}` is not found (tried {}) and the report keeps no copy of it",
            rep.kernel_path,
            rep.kernel_candidates(report)
                .iter()
                .map(|p| format!("`{}`", p.display()))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// What a replay did.
#[derive(Clone, Debug)]
pub struct Replay {
    pub outcome: Outcome,
    pub infeasible: Option<Infeasible>,
    /// Steps of the recorded schedule.
    pub recorded: u64,
    /// The recorded race, as reproduced (the first race of the report's key, or the first
    /// race at all for a report without a key).
    pub reproduced: Option<Race>,
    /// `--continue`: the run went on with the canonical schedule to the end of the kernel.
    pub continued: bool,
}

/// Replays `rep`'s schedule on `launch` (and with `continue_canonical`, goes on to the end
/// of the kernel with the canonical schedule).
pub fn replay(
    launch: &Launch,
    rep: &RaceReport,
    continue_canonical: bool,
    obs: &mut dyn Observer,
) -> Replay {
    let scheduler = if continue_canonical {
        Scheduler::ReplayThenCanonical(rep.schedule.clone())
    } else {
        Scheduler::Replay(rep.schedule.clone())
    };
    let (outcome, infeasible) = schedule::run(launch, &scheduler, obs);
    let want = rep.key();
    let reproduced = outcome
        .races
        .iter()
        .find(|r| want.is_none() || Some(r.key()) == want)
        .cloned();
    Replay {
        outcome,
        infeasible: infeasible.filter(|i| i.thread.is_some()),
        recorded: rep.schedule.len(),
        reproduced,
        continued: continue_canonical,
    }
}

impl Replay {
    /// The diagnostics of `ksim replay` (stderr, before the summary): the fault, then the
    /// reproduced race (else every race the replay met).
    pub fn diagnostics(&self, src: crate::text::SourceText, launch: &Launch) -> String {
        let mut o = String::new();
        if let Some(f) = &self.outcome.fault {
            o += &src.fault(launch, f);
        }
        match &self.reproduced {
            Some(r) => {
                let note = format!(
                    "reproduced at step {} of the recorded schedule",
                    r.second.step
                );
                o += &src.race(launch, r, &[note]);
            }
            None => {
                for r in &self.outcome.races {
                    o += &src.race(launch, r, &[]);
                }
            }
        }
        o
    }

    /// The summary lines of `ksim replay` (stdout), with the final arrays after
    /// `--continue`.
    pub fn text(&self, report: &str, launch: &Launch) -> String {
        let mut o = format!(
            "replay of {report}: kernel {}{}, {} steps of {} recorded{}, race policy {}\n",
            launch.kernel.name,
            launch
                .warp_size
                .map(|w| format!(" in warps of {w}"))
                .unwrap_or_default(),
            self.outcome.steps.min(self.recorded),
            self.recorded,
            if self.continued && self.outcome.steps > self.recorded {
                format!(
                    ", then {} steps of the canonical schedule to the end of the kernel",
                    self.outcome.steps - self.recorded
                )
            } else {
                String::new()
            },
            launch.race_policy.name()
        );
        if let Some(i) = &self.infeasible {
            o += &format!(
                "the schedule stops being feasible at step {}: {}\n",
                i.step, i.reason
            );
        }
        match &self.reproduced {
            Some(r) => {
                o += &format!(
                    "race reproduced: {} at step {}\n",
                    elem(launch, r),
                    r.second.step
                );
            }
            None => o += "the recorded race was NOT reproduced\n",
        }
        if self.continued {
            o += "final arrays:\n";
            let arrays = crate::outcome::Arrays::of(launch, self.outcome.memory.clone());
            o += &arrays.text(launch, &[]);
        }
        o
    }
}

fn elem(launch: &Launch, r: &Race) -> String {
    let idx: String = r.index.iter().map(|i| format!("[{i}]")).collect();
    let name = &launch.kernel.arrays[r.array].name;
    if launch.instances(r.array) > 1 {
        format!("{name}{idx} (group {})", r.instance)
    } else {
        format!("{name}{idx}")
    }
}
