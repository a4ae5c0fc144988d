//! `--timeline FILE.svg` and `--html FILE`: the race timeline (`sim::timeline`) and the
//! HTML trace page (`sim::page`) of an execution, written atomically.
//!
//! They are drawn after the work they show is done: a view that cannot be made (too
//! large, an unwritable file) is a warning on stderr, and the command still prints its
//! summary and verdict and exits with the code of what it found.

use super::common::*;
use interp::{Launch, Race};
use sim::Schedule;
use std::path::{Path, PathBuf};

/// The files a command writes for a race, when asked.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct RaceViewArgs {
    /// Write the race as an SVG timeline for slides: threads as lanes, steps as marks,
    /// barrier epochs as bands, the two racing accesses joined (the first race found).
    #[arg(long, value_name = "FILE.svg")]
    pub timeline: Option<PathBuf>,
    /// Write the execution up to the race as one self-contained HTML page (no network):
    /// source, configuration at every step, timeline lanes, snapshots (docs/teaching.md).
    #[arg(long, value_name = "FILE.html")]
    pub html: Option<PathBuf>,
}

impl RaceViewArgs {
    /// Writes the requested files for `race`, reached by `schedule`; with no race, says
    /// on stderr that there is nothing to draw. A file that cannot be made is a warning.
    pub fn write(&self, src: &Source, launch: &Launch, race: Option<(&Race, &Schedule)>) {
        if self.timeline.is_none() && self.html.is_none() {
            return;
        }
        if let Err(e) = single_threads(launch) {
            eprintln!("warning: {}", e.message);
            return;
        }
        let Some((race, schedule)) = race else {
            eprintln!("note: no race found: --timeline and --html write nothing");
            return;
        };
        if let Some(path) = &self.timeline {
            let svg = sim::timeline::check_size(launch, schedule.len()).map(|()| {
                let t =
                    sim::timeline::Timeline::of_schedule(src.view(), launch, schedule, Some(race));
                t.svg(src.view(), launch)
            });
            warn_unless_written("--timeline", path, svg, "race timeline");
        }
        if let Some(path) = &self.html {
            write_page(path, src, launch, schedule);
        }
    }
}

/// The HTML trace page of the execution following `schedule` (a warning if it cannot be
/// made).
pub fn write_page(path: &Path, src: &Source, launch: &Launch, schedule: &Schedule) {
    let page = single_threads(launch)
        .map_err(|e| e.message)
        .and_then(|()| sim::page::render(src.view(), launch, schedule));
    warn_unless_written("--html", path, page, "HTML trace page");
}

/// The timeline and the page step threads one by one: a schedule of warps is refused.
pub fn single_threads(launch: &Launch) -> Result<(), Failure> {
    match launch.warp_size {
        Some(_) => Err(Failure::usage(
            "--timeline and --html draw threads one by one: not available with --warp-size",
        )),
        None => Ok(()),
    }
}

/// Writes `text` to `path`, or says on stderr why the file of `flag` is not written.
fn warn_unless_written(flag: &str, path: &Path, text: Result<String, String>, what: &str) {
    let written = text.and_then(|text| {
        files::write_atomic(path, text.as_bytes())
            .map_err(|e| format!("cannot write {}: {e}", path.display()))
    });
    match written {
        Ok(()) => eprintln!("{what} written to {}", path.display()),
        Err(e) => eprintln!("warning: {flag}: {e}; {} not written", path.display()),
    }
}
