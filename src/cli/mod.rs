//! The command-line commands, one module per group of commands.

pub mod common;
pub mod engine;
pub mod explore;
pub mod fix;
pub mod gpu;
pub mod limits;
pub mod opencl;
pub mod races;
pub mod run;
pub mod verify;
