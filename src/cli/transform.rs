//! `ksim transform`: one of Alpinist's optimisations applied to a `.ksim` kernel, its
//! applicability checked on the launch given ([`sim::transform`]); the transformed source
//! to standard output or `-o OUT`.

use super::common::*;
use clap::{ArgGroup, Args};
use sim::transform::{Opt, TransformError};
use std::path::PathBuf;

#[derive(Args, Debug)]
#[command(group(ArgGroup::new("optimisation").required(true).multiple(false)))]
pub struct TransformArgs {
    #[command(flatten)]
    pub launch: LaunchArgs,
    /// Unroll the first K iterations of the `for` loop that starts on LINE (it must run
    /// at least K times on the launch).
    #[arg(long, value_name = "LINE:K", value_parser = parse_loop, group = "optimisation")]
    pub unroll: Option<(usize, usize)>,
    /// Run K iterations of the `for` loop on LINE per pass (every trip count on the launch
    /// must be a multiple of K).
    #[arg(long, value_name = "LINE:K", value_parser = parse_loop, group = "optimisation")]
    pub merge_iterations: Option<(usize, usize)>,
    /// Store the 2D array ARRAY row-major in one dimension.
    #[arg(long, value_name = "ARRAY", group = "optimisation")]
    pub linearize: Option<String>,
    /// Store the 1D array ARRAY as a 2D array with COLS columns (an expression over the
    /// kernel's parameters, such as `n`).
    #[arg(long, value_name = "ARRAY:COLS", group = "optimisation")]
    pub delinearize: Option<String>,
    /// Write the transformed kernel to OUT instead of standard output.
    #[arg(short = 'o', value_name = "OUT")]
    pub out: Option<PathBuf>,
}

/// `LINE:K`, both positive.
fn parse_loop(s: &str) -> Result<(usize, usize), String> {
    let (line, k) = s
        .split_once(':')
        .ok_or_else(|| format!("`{s}` is not LINE:K"))?;
    let num = |x: &str| {
        x.trim()
            .parse::<usize>()
            .ok()
            .filter(|&n| n > 0)
            .ok_or_else(|| format!("`{x}` is not a positive number"))
    };
    Ok((num(line)?, num(k)?))
}

pub fn transform(args: &TransformArgs) -> CmdResult {
    let file = &args.launch.file;
    if file.extension().and_then(|e| e.to_str()) != Some("ksim") {
        return Err(Failure::usage(format!(
            "`{}`: ksim transform edits .ksim kernels only (OpenCL C, CUDA and PVL are not \
             supported yet)",
            file.display()
        )));
    }
    let opt = if let Some((line, k)) = args.unroll {
        Opt::Unroll { line, k }
    } else if let Some((line, k)) = args.merge_iterations {
        Opt::MergeIterations { line, k }
    } else if let Some(a) = &args.linearize {
        Opt::Linearize(a.clone())
    } else {
        let spec = args
            .delinearize
            .as_deref()
            .expect("one optimisation is required");
        let (array, cols) = spec.split_once(':').ok_or_else(|| {
            Failure::usage(format!("--delinearize {spec}: give ARRAY:COLS (`tree:n`)"))
        })?;
        Opt::Delinearize {
            array: array.to_string(),
            cols: cols.to_string(),
        }
    };
    let options = args.launch.options()?;
    let src = Source::read(file)?;
    let out = sim::transform::transform(&src.text, &opt, &options).map_err(|e| match e {
        TransformError::Invalid(d) => Failure::usage(src.render(&d)),
        TransformError::Launch(m) => Failure::usage(m),
        TransformError::Refused(why) => Failure::usage(format!("not applied: {why}")),
    })?;
    for note in &out.notes {
        eprintln!("{note}");
    }
    match &args.out {
        Some(path) => std::fs::write(path, &out.text)
            .map_err(|e| Failure::usage(format!("cannot write `{}`: {e}", path.display())))?,
        None => print!("{}", out.text),
    }
    Ok(EXIT_OK)
}
