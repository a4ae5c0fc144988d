//! The teaching options of `ksim trace` (issue 12) as command-line flags; the view itself
//! is `sim::trace`.

use clap::Args;
use std::ops::Range;

#[derive(Args, Debug, Default, Clone)]
pub struct TraceOptions {
    /// Show statements in the core form of Figure 4 (`while`, `:=`), the form the rules
    /// are stated over, instead of the source text.
    #[arg(long)]
    pub core: bool,
    /// Show the elements each step read, with their values, beside its writes.
    #[arg(long)]
    pub reads: bool,
    /// Show only the steps of this thread (global index, as in `--schedule`); the
    /// K-BARRIER lines of its work-group stay.
    #[arg(long, value_name = "T")]
    pub thread: Option<usize>,
    /// Show only steps A to B-1 (`--steps 10..20`; `10..` to the end).
    #[arg(long, value_name = "A..B", value_parser = sim::trace::parse_steps)]
    pub steps: Option<Range<u64>>,
    /// Instead of one line per step, print the arrays the kernel writes after every
    /// K-BARRIER, one row per barrier epoch (as Figure 3 of the POPL 2014 paper).
    #[arg(long)]
    pub snapshots: bool,
}

impl From<&TraceOptions> for sim::trace::Options {
    fn from(o: &TraceOptions) -> Self {
        sim::trace::Options {
            core: o.core,
            reads: o.reads,
            thread: o.thread,
            steps: o.steps.clone(),
            snapshots: o.snapshots,
        }
    }
}
