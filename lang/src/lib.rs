//! ksim's kernel language: the data-parallel language of Chong, Donaldson & Ketema
//! (POPL 2014, Figure 4 plus `barrier`) with a C/OpenCL-like surface syntax.
//!
//! Source text → [`parse`] → [`ast::Kernel`] → [`check`] → [`core::Kernel`].

pub mod ast;
pub mod core;
pub mod diag;
