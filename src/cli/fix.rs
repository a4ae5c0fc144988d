//! `ksim fix`: barrier placements that remove a kernel's races, each checked on the patched
//! kernel ([`sim::fix::fix`]), printed as a unified diff; `--write` patches the file.

use super::common::*;
use clap::Args;

#[derive(Args, Debug)]
pub struct FixArgs {
    #[command(flatten)]
    pub launch: LaunchArgs,
    /// Write the patched kernel over FILE (atomically, keeping its mode; a symlink's target
    /// is patched), keeping the original as FILE.orig (FILE.orig.1, .2, ... if that exists).
    /// Refused if FILE is read-only or changed while fix ran.
    #[arg(long)]
    pub write: bool,
    /// Threads for the fast executor (0: all cores; more than the cores are capped at the
    /// cores, with a note).
    #[arg(long, default_value_t = 0, value_parser = super::limits::parse_jobs)]
    pub jobs: usize,
    /// Print a JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

pub fn fix(args: &FixArgs) -> CmdResult {
    let file = &args.launch.file;
    if super::opencl::is_cl(file) {
        return Err(Failure::usage(format!(
            "`{}`: ksim fix patches .ksim kernels only; an OpenCL C kernel's statements are \
             known after preprocessing, not as places in the file (run `ksim races` on it and \
             add the barrier by hand)",
            file.display()
        )));
    }
    if super::simfile::is_sim(file) {
        return Err(Failure::usage(format!(
            "`{}`: ksim fix patches .ksim kernels only; a .sim file names an OpenCL C kernel \
             (run `ksim races` on it and add the barrier to the .cl file by hand)",
            file.display()
        )));
    }
    let options = args.launch.options()?;
    let src = Source::read(file)?;
    let report = match sim::fix::fix(&src.text, &[options], args.jobs) {
        Ok(r) => r,
        Err(sim::fix::FixError::Invalid(d)) => return Err(Failure::usage(src.render(&d))),
        Err(sim::fix::FixError::Launch(e)) => return Err(Failure::usage(e)),
    };
    if args.json {
        println!("{}", sim::outcome::to_json(&report));
    } else {
        print!("{}", report.text(&src.text, &src.path));
    }
    if args.write {
        match &report.patched {
            Some(patched) if report.patched_race_free => write(file, &src.text, patched)?,
            Some(_) => eprintln!("not written: the patched kernel still has races"),
            None => eprintln!("not written: no verified fix"),
        }
    }
    Ok(exit_code(report.is_fixed()))
}

/// Patches FILE through [`files::patch_file`]: refused, with nothing written, when FILE
/// changed since it was read or is read-only; the original is kept in a new FILE.orig (or
/// FILE.orig.N) beside the file a symlink points to.
fn write(file: &std::path::Path, original: &str, patched: &str) -> Result<(), Failure> {
    let orig = files::patch_file(file, original, patched).map_err(|e| {
        let code = match e {
            files::PatchError::Io(..) => EXIT_FOUND,
            _ => EXIT_USAGE,
        };
        Failure {
            message: e.to_string(),
            code,
        }
    })?;
    eprintln!(
        "wrote {} (the original is in {})",
        file.display(),
        orig.display()
    );
    Ok(())
}
