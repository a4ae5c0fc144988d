//! ksim's kernel language: the data-parallel language of Chong, Donaldson & Ketema
//! (POPL 2014, Figure 4 plus `barrier`) with a C/OpenCL-like surface syntax.
//!
//! Source text → [`parse`] → [`ast::Kernel`] → [`check`] → [`core::Kernel`].

pub mod ast;
pub mod check;
pub mod cl;
pub mod core;
pub mod diag;
pub mod int_fn;
pub mod parse;
pub mod print;
pub mod print_core;
pub mod pvl;
pub mod render;
pub mod summary;

pub use parse::parse;
pub use print::{erase_spans, print_expr, print_kernel, print_stmt_head};
pub use render::{line_col, render};
