//! The command-line commands, one module per group of commands.

pub mod circuit;
pub mod common;
pub mod equiv;
pub mod explore;
pub mod fix;
pub mod gpu;
pub mod graph;
pub mod limits;
pub mod native;
pub mod opencl;
pub mod pvl;
pub mod race_views;
pub mod races;
pub mod run;
pub mod serve;
pub mod simfile;
pub mod step;
pub mod trace_view;
pub mod transform;
pub mod verify;
