//! `ksim circuit`: the prefix-sum circuit of a kernel (POPL 2014, Figure 8), with its
//! depth, size and fanout (Table 2). The derivation is [`interp::circuit`], the
//! drawings [`sim::circuit_view`]; this module wires them.

use super::common::*;
use clap::Args;
use interp::circuit::NoCircuit;
use sim::circuit_view::{svg, text_drawing};
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct CircuitArgs {
    #[command(flatten)]
    pub launch: LaunchArgs,
    /// Also draw the circuit as SVG into this file: one wire per input, top to bottom,
    /// one dot per ⊕, diagonal wires for values passed across.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    /// Print the circuit as JSON (nodes with their operands, outputs, measures).
    #[arg(long)]
    pub json: bool,
}

/// The most threads and array elements (each a wire) of a launch `circuit` derives and
/// draws: the derivation and the text drawing grow faster than the wires (n = 1024 takes
/// 0.4 s, 2048 1.3 s, 4096 16 s), and a drawing of more wires is no picture.
const MAX_WIRES: usize = 1024;

pub fn circuit(args: &CircuitArgs) -> CmdResult {
    let (_, launch) = args.launch.launch()?;
    let k = &launch.kernel;
    let widest = (0..k.arrays.len())
        .map(|a| launch.len(a))
        .max()
        .unwrap_or(0);
    if launch.threads().max(widest) > MAX_WIRES {
        return Err(Failure::usage(format!(
            "this launch is too large to draw as a circuit: {} threads and arrays of up to {widest} \
             elements (at most {MAX_WIRES} wires)",
            launch.threads()
        )));
    }
    let c = interp::circuit::derive(&launch).map_err(|e| match e {
        NoCircuit::Unfit(m) => Failure::usage(m),
        NoCircuit::Found(m) => Failure {
            message: m,
            code: EXIT_FOUND,
        },
    })?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&c).expect("JSON"));
    } else {
        println!(
            "circuit of {} ({} -> {}, width {}, from the canonical execution): depth {}, size {}, fanout {} (longest ⊕ chain {})",
            launch.kernel.name, c.input, c.output, c.width, c.depth, c.size, c.fanout, c.chain
        );
        print!("{}", text_drawing(&c));
    }
    if let Some(path) = &args.svg {
        files::write_atomic(path, svg(&c).as_bytes())
            .map_err(|e| Failure::usage(format!("cannot write {}: {e}", path.display())))?;
        if !args.json {
            println!("SVG written to {}", path.display());
        }
    }
    Ok(EXIT_OK)
}
