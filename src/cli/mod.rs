//! The command-line commands, one module per group of commands.

pub mod common;
pub mod engine;
pub mod explore;
pub mod gpu;
pub mod limits;
pub mod native;
pub mod opencl;
pub mod races;
pub mod run;
pub mod simfile;
pub mod verify;
