//! `ksim replay`: the files a report's launch reads (from disk, else from the report's
//! copies, and whether they changed), re-running the recorded schedule and deciding whether
//! the race was reproduced, and if not, why.

use crate::report::{self, RaceReport};
use crate::schedule::{self, Infeasible, Scheduler};
use interp::exec::{Observer, Outcome};
use interp::race::Race;
use interp::Launch;
use std::cell::RefCell;
use std::path::{Component, Path, PathBuf};

/// Where the loaders of kernel files read files: the disk for every command, a race
/// report's saved copies for `ksim replay` ([`ReportFiles`]). Replay rebuilds a launch
/// with the very code that built it, only reading through another `Files`.
pub trait Files {
    /// The text of the file at `path`, or why it cannot be read.
    fn read(&self, path: &Path) -> Result<String, String>;
}

/// The files on disk.
pub struct Disk;

impl Files for Disk {
    fn read(&self, path: &Path) -> Result<String, String> {
        files::read_to_string(path, files::TEXT_LIMIT).map_err(|e| e.to_string())
    }
}

/// `path` made absolute, with `.` and `..` taken out by its text (the same on recording
/// and on replay, where the files may be gone): how reports name files.
pub fn normal_path(path: &Path) -> PathBuf {
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut out = PathBuf::new();
    for c in abs.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            c => out.push(c),
        }
    }
    out
}

/// What a replay read differently from the files the report was written from.
#[derive(Clone, Debug, PartialEq)]
pub enum Difference {
    /// The file is gone: the report's copy was read.
    FromReport(PathBuf),
    /// The file differs from the report's copy: its unified diff (or a note, for a
    /// report of format 1, which keeps no copy to compare with).
    Changed { path: PathBuf, diff: String },
}

/// A file a report keeps: its path (as [`normal_path`] names it), hash and text (format 1
/// reports keep no text).
struct Kept {
    path: PathBuf,
    hash: String,
    text: Option<String>,
}

/// The files of a race report: a file on disk is read from there (and compared with the
/// report's copy), a file that is gone from the report's copy. A kernel file that moved
/// with the report (found relative to it) takes the files of its folder along.
pub struct ReportFiles {
    kept: Vec<Kept>,
    /// The kernel file's folder when the report was written, and where it is now.
    recorded_dir: PathBuf,
    found_dir: PathBuf,
    /// The kernel file to load: where it was found, else its recorded path.
    pub kernel: PathBuf,
    differences: RefCell<Vec<Difference>>,
}

impl ReportFiles {
    /// The files of `rep`, read from `report`: the kernel file is looked for relative to
    /// the report's folder, by its absolute path, as given.
    pub fn new(rep: &RaceReport, report: &Path) -> ReportFiles {
        let recorded = normal_path(Path::new(
            rep.kernel_path_absolute
                .as_deref()
                .unwrap_or(&rep.kernel_path),
        ));
        let found = rep
            .kernel_candidates(report)
            .into_iter()
            .find(|p| p.is_file())
            .map(|p| normal_path(&p));
        let dir = |p: &Path| p.parent().map(Path::to_path_buf).unwrap_or_default();
        let mut kept = vec![Kept {
            path: recorded.clone(),
            hash: rep.source_hash.clone(),
            text: rep.source.clone(),
        }];
        kept.extend(rep.files.iter().map(|f| Kept {
            path: normal_path(Path::new(&f.path)),
            hash: f.hash.clone(),
            text: Some(f.text.clone()),
        }));
        ReportFiles {
            kept,
            recorded_dir: dir(&recorded),
            found_dir: dir(found.as_ref().unwrap_or(&recorded)),
            kernel: found.unwrap_or(recorded),
            differences: RefCell::new(Vec::new()),
        }
    }

    /// Where a path recorded in the report is now: moved along with the kernel file if it
    /// was in the kernel file's folder.
    pub fn locate(&self, recorded: &Path) -> PathBuf {
        let p = normal_path(recorded);
        match p.strip_prefix(&self.recorded_dir) {
            Ok(rel) => self.found_dir.join(rel),
            Err(_) => p,
        }
    }

    /// The files read that are gone or differ from the report's copies, in the order read.
    pub fn differences(&self) -> Vec<Difference> {
        self.differences.borrow().clone()
    }

    /// Whether a file read differs from the report's copy.
    pub fn changed(&self) -> bool {
        (self.differences.borrow().iter()).any(|d| matches!(d, Difference::Changed { .. }))
    }

    fn note(&self, d: Difference) {
        let mut ds = self.differences.borrow_mut();
        if !ds.contains(&d) {
            ds.push(d);
        }
    }
}

impl Files for ReportFiles {
    fn read(&self, path: &Path) -> Result<String, String> {
        let here = normal_path(path);
        let key = match here.strip_prefix(&self.found_dir) {
            Ok(rel) => self.recorded_dir.join(rel),
            Err(_) => here.clone(),
        };
        let kept = self.kept.iter().find(|k| k.path == key);
        if !path.is_file() {
            return match kept.and_then(|k| k.text.clone()) {
                Some(text) => {
                    self.note(Difference::FromReport(here));
                    Ok(text)
                }
                None => Err(format!(
                    "`{}` is not found and the report keeps no copy of it",
                    path.display()
                )),
            };
        }
        let text = Disk.read(path)?;
        if let Some(k) = kept.filter(|k| report::source_hash(&text) != k.hash) {
            let diff = match &k.text {
                Some(old) => {
                    let shown = std::fs::canonicalize(path).unwrap_or(here.clone());
                    report::source_diff(
                        old,
                        &text,
                        "source in the report",
                        &shown.display().to_string(),
                    )
                }
                None => "(the report, of format 1, keeps no copy of the source to compare with)\n"
                    .to_string(),
            };
            self.note(Difference::Changed { path: here, diff });
        }
        Ok(text)
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
        match &self.reproduced {
            Some(r) => {
                if let Some(i) = &self.infeasible {
                    o += &format!(
                        "the schedule stops being feasible at step {}: {}\n",
                        i.step, i.reason
                    );
                }
                o += &format!(
                    "race reproduced: {} at step {}\n",
                    elem(launch, r),
                    r.second.step
                );
            }
            None => o += &format!("the recorded race was NOT reproduced: {}\n", self.why_not()),
        }
        if self.continued {
            o += "final arrays:\n";
            let arrays = crate::outcome::Arrays::of(launch, self.outcome.memory.clone());
            o += &arrays.text(launch, &[]);
        }
        o
    }
}

impl Replay {
    /// Why the recorded race did not occur: where the schedule stopped being feasible, a
    /// fault that ended the run, or a schedule that ran through without it.
    pub fn why_not(&self) -> String {
        if let Some(i) = &self.infeasible {
            format!(
                "the schedule stops being feasible at step {}: {}",
                i.step, i.reason
            )
        } else if self.outcome.fault.is_some() {
            format!(
                "the run stops at a runtime fault after {} steps",
                self.outcome.steps
            )
        } else {
            format!(
                "the schedule runs through its {} steps without the race",
                self.recorded
            )
        }
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
