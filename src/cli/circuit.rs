//! `ksim circuit`: the prefix-sum circuit of a kernel (POPL 2014, Figure 8), with its
//! depth, size and fanout (Table 2). The derivation is [`interp::circuit`], the
//! drawings [`sim::circuit_view`]; this module wires them.

use super::common::*;
use clap::Args;
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

pub fn circuit(args: &CircuitArgs) -> CmdResult {
    let (_, launch) = args.launch.launch()?;
    let c = interp::circuit::derive(&launch).map_err(Failure::usage)?;
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
