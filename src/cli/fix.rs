//! `ksim fix`: barrier placements that remove a kernel's races, each checked on the patched
//! kernel ([`sim::fix::fix`]), printed as a unified diff; `--write` patches the file.

use super::common::*;
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct FixArgs {
    #[command(flatten)]
    pub launch: LaunchArgs,
    /// Write the patched kernel over FILE (atomically), keeping the original as FILE.orig.
    #[arg(long)]
    pub write: bool,
    /// Threads for the fast executor (0: all cores).
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

/// Keeps the original as FILE.orig, then replaces FILE atomically.
fn write(file: &std::path::Path, original: &str, patched: &str) -> Result<(), Failure> {
    let mut orig = file.as_os_str().to_owned();
    orig.push(".orig");
    let orig = PathBuf::from(orig);
    let fail = |p: &std::path::Path, e: std::io::Error| Failure {
        message: format!("cannot write `{}`: {e}", p.display()),
        code: EXIT_FOUND,
    };
    files::write_atomic(&orig, original.as_bytes()).map_err(|e| fail(&orig, e))?;
    files::write_atomic(file, patched.as_bytes()).map_err(|e| fail(file, e))?;
    eprintln!(
        "wrote {} (the original is in {})",
        file.display(),
        orig.display()
    );
    Ok(())
}
