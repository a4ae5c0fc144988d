//! `ksim races`: the exact race check of one input ([`sim::outcome::check_races`]). Each
//! race gets a replayable race report: the canonical schedule up to the race, run on the
//! reference semantics (`sim::report::canonical_race_schedules`).

use super::common::*;
use clap::Args;
use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Mutex;

#[derive(Args, Debug)]
pub struct RacesArgs {
    #[command(flatten)]
    pub launch: LaunchArgs,
    #[command(flatten)]
    pub policy: PolicyArgs,
    /// Threads for the fast executor (0: all cores).
    #[arg(long, default_value_t = 0, value_parser = super::limits::parse_jobs)]
    pub jobs: usize,
    /// Print a JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Where race reports are written.
    #[arg(long, value_name = "DIR", default_value = "ksim-reports")]
    pub report_dir: PathBuf,
    /// Do not write race reports.
    #[arg(long)]
    pub no_reports: bool,
}

pub fn races(args: &RacesArgs) -> CmdResult {
    let (src, launch) = args.policy.launch(&args.launch)?;
    let mut report = sim::outcome::check_races(&launch, args.jobs);
    let found: Vec<interp::Race> = report.races.iter().map(|r| r.race.race.clone()).collect();
    for (r, path) in report
        .races
        .iter_mut()
        .zip(write_reports(args, &src, &launch, &found))
    {
        r.report = path;
    }
    let mut text = report.text(&launch, src.view());
    other_orders(args, &src, &launch, &mut report, &mut text);
    if args.json {
        println!("{}", sim::outcome::to_json(&report));
    } else {
        eprint!("{}", text.err);
        print!("{}", text.out);
    }
    Ok(exit_code(report.is_clean()))
}

/// Under `--race-policy same-value`, a canonical run whose only races are benign does not
/// decide the input: in another order a benign pair can be harmful (a write that stored
/// the element's value in one order changes it in another). Every order is then explored
/// ([`sim::explore::orders`]); the harmful races it finds join the report (exit 1). When
/// the exploration cannot cover every schedule, the verdict line says that it holds for
/// the canonical schedule only (never "no harmful race for this input") and `race_free`
/// is false; the exit code is 0, as for a kernel with atomics, whose canonical run does not
/// decide the other schedules either.
fn other_orders(
    args: &RacesArgs,
    src: &Source,
    launch: &interp::Launch,
    report: &mut sim::outcome::RacesReport,
    text: &mut sim::text::Text,
) {
    let benign = report.races.iter().filter(|r| r.race.race.benign()).count();
    if benign == 0 || !report.is_clean() {
        return;
    }
    let s = match sim::explore::orders::every_order(launch) {
        Ok(s) => s,
        Err(why) => {
            canonical_only(report, text, benign, &why);
            return;
        }
    };
    let harmful: Vec<_> = s.races.iter().filter(|r| !r.race.benign()).collect();
    let clean_line = "no harmful race for this input (";
    if !harmful.is_empty() {
        let options = args.launch.options().ok();
        let recorded = args.launch.recorded(src);
        let warned = Mutex::new(HashSet::new());
        for r in &harmful {
            let path = options.as_ref().filter(|_| !args.no_reports).and_then(|o| {
                files::ensure_writable_dir(&args.report_dir).ok()?;
                super::explore::write_report(
                    src,
                    &recorded,
                    launch,
                    o,
                    r,
                    "exhaustive (races --race-policy same-value, other schedules)",
                    &args.report_dir,
                    &warned,
                )
            });
            let mut notes = vec![format!(
                "harmful in another schedule ({} steps: {}); the canonical run met this pair, or \
                 its statements, as benign",
                r.schedule.len(),
                sim::explore::model::short_schedule(&r.schedule, 12)
            )];
            if let Some(p) = &path {
                notes.push(format!("report: {p} (replay: ksim replay {p})"));
            }
            text.err.push_str(&src.view().race(launch, &r.race, &notes));
            report.races.push(sim::outcome::CountedRace {
                race: sim::outcome::RaceView::of(launch, &r.race),
                count: None,
                report: path,
            });
        }
        report.race_free = false;
        text.out = text.out.replacen(
            clean_line,
            &format!(
                "{} harmful race(s) in other schedules: the canonical run's {benign} benign race(s) \
                 are harmful in another order (every order explored, {}; ",
                harmful.len(),
                s.verdict
            ),
            1,
        );
        return;
    }
    if sim::explore::orders::covers_every_schedule(&s) {
        text.out = text.out.replacen(
            clean_line,
            &format!(
                "no harmful race for this input (every order of the benign pairs explored: {} \
                 executions, {}; ",
                s.executions(),
                s.verdict
            ),
            1,
        );
        return;
    }
    canonical_only(
        report,
        text,
        benign,
        &sim::explore::orders::why_not_covered(&s),
    );
}

/// The verdict holds for the canonical schedule only: says so, and why.
fn canonical_only(
    report: &mut sim::outcome::RacesReport,
    text: &mut sim::text::Text,
    benign: usize,
    why: &str,
) {
    report.race_free = false;
    text.out = text.out.replacen(
        "no harmful race for this input (",
        &format!(
            "no harmful race in the canonical schedule only: its {benign} benign race(s) may be \
             harmful in another order, and {why} (`ksim explore --exhaustive --race-policy \
             same-value` on a smaller launch checks every order; "
        ),
        1,
    );
}

/// Writes a race report per race (the canonical schedule up to it); per race, its path.
fn write_reports(
    args: &RacesArgs,
    src: &Source,
    launch: &interp::Launch,
    races: &[interp::Race],
) -> Vec<Option<String>> {
    if args.no_reports || races.is_empty() {
        return vec![None; races.len()];
    }
    if let Err(e) = files::ensure_writable_dir(&args.report_dir) {
        eprintln!(
            "warning: race reports cannot be written to `{}` ({e})",
            args.report_dir.display()
        );
        return vec![None; races.len()];
    }
    let Ok(options) = args.launch.options() else {
        return vec![None; races.len()];
    };
    let keys: Vec<_> = races.iter().map(|r| r.key()).collect();
    let found = sim::report::canonical_race_schedules(launch, &keys);
    let warned = Mutex::new(HashSet::new());
    let recorded = args.launch.recorded(src);
    keys.iter()
        .map(|k| {
            let f = found.iter().find(|f| f.race.key() == *k)?;
            super::explore::write_report(
                src,
                &recorded,
                launch,
                &options,
                f,
                "races (canonical schedule)",
                &args.report_dir,
                &warned,
            )
        })
        .collect()
}
