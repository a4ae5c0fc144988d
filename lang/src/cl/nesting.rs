//! How deep a kernel's syntax tree may nest.

/// Nesting depth (statements and expressions, each operator of a chain such as `1+1+...`
/// one level) beyond which reading clang's tree stops with an error. Every pass over the
/// tree recurses on it: `ksim` runs them on a thread whose stack holds this depth with
/// room to spare (`src/main.rs`); the main thread's 8 MiB held 2,000 levels. The bound
/// also keeps the time of passes that are quadratic in the depth to seconds.
pub const MAX_DEPTH: usize = 5_000;
