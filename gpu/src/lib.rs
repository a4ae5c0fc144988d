//! placeholder until the gpu crate lands
