//! `--timeline FILE.svg` and `--html FILE`: the race timeline (`sim::timeline`) and the
//! HTML trace page (`sim::page`) of an execution, written atomically.

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
    /// on stderr that there is nothing to draw.
    pub fn write(
        &self,
        src: &Source,
        launch: &Launch,
        race: Option<(&Race, &Schedule)>,
    ) -> Result<(), Failure> {
        if self.timeline.is_none() && self.html.is_none() {
            return Ok(());
        }
        single_threads(launch)?;
        let Some((race, schedule)) = race else {
            eprintln!("note: no race found: --timeline and --html write nothing");
            return Ok(());
        };
        if let Some(path) = &self.timeline {
            let t = sim::timeline::Timeline::of_schedule(src.view(), launch, schedule, Some(race));
            write(path, &t.svg(src.view(), launch), "race timeline")?;
        }
        if let Some(path) = &self.html {
            write_page(path, src, launch, schedule)?;
        }
        Ok(())
    }
}

/// The HTML trace page of the execution following `schedule`.
pub fn write_page(
    path: &Path,
    src: &Source,
    launch: &Launch,
    schedule: &Schedule,
) -> Result<(), Failure> {
    single_threads(launch)?;
    let page = sim::page::render(src.view(), launch, schedule)
        .map_err(|e| Failure::usage(format!("--html: {e}")))?;
    write(path, &page, "HTML trace page")
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

fn write(path: &Path, text: &str, what: &str) -> Result<(), Failure> {
    files::write_atomic(path, text.as_bytes())
        .map_err(|e| Failure::usage(format!("cannot write {}: {e}", path.display())))?;
    eprintln!("{what} written to {}", path.display());
    Ok(())
}
