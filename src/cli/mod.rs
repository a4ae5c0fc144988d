//! The command-line commands, one module per group of commands.

pub mod common;
pub mod run;
