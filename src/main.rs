//! `ksim`: an executable semantics and simulator for GPU kernels.

mod cli;

use clap::{Parser, Subcommand};
use cli::common::{Failure, EXIT_USAGE};

#[derive(Parser, Debug)]
#[command(
    name = "ksim",
    version,
    about = "Executable semantics and simulator for GPU kernels (Chong, Donaldson & Ketema, POPL 2014)",
    after_help = "Exit codes: 0 all is well; 1 a race, runtime fault or failed verification was found; \
                  2 usage error or invalid kernel."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Parse and type-check a kernel.
    Check(cli::run::CheckArgs),
    /// Run a kernel under one schedule and print every array, race and fault.
    Run(cli::run::RunArgs),
    /// Run a kernel and print every step with the rule that fired.
    Trace(cli::run::TraceArgs),
    /// Step through an execution interactively: see every thread's variables and next
    /// statement (core form, with the rule that fires), choose the next thread, undo, and
    /// save the schedule for `run --schedule @FILE`. Scripted when stdin is not a terminal.
    Step(cli::step::StepArgs),
    /// Step through executions in a web page, for the lecture hall: a local web server
    /// (127.0.0.1 unless --bind) where a student opens a kernel (the bundled examples, the
    /// FILEs given, or source pasted in the page), sets the launch, clicks the thread to
    /// run next and sees the rule, the configuration, races on both steps, the state graph
    /// and the race timeline; saves the schedule or a race report, and opens one.
    Serve(cli::serve::ServeArgs),
    /// Derive the prefix-sum circuit a scan kernel computes from one execution (POPL 2014,
    /// Figure 8): depth, size and fanout (Table 2), as text and optionally SVG.
    Circuit(cli::circuit::CircuitArgs),
    /// The reachable configurations of a tiny launch (2-3 threads) as a graph: nodes are
    /// configurations, edges K-STEPs labelled with thread and rule; DOT, SVG (laid out by ksim) or JSON.
    Graph(cli::graph::GraphArgs),
    /// Explore the schedules of a launch: exhaustively (state caching + partial-order
    /// reduction), at random, or with PCT; every race is written as a replayable report.
    Explore(cli::explore::ExploreArgs),
    /// Re-run the schedule of a race report and stop at the race.
    ///
    /// The launch is rebuilt as the report recorded it (kernel file, -D, -I, sizes,
    /// arguments, inputs), from any directory; a file that is gone is read from the
    /// report's copy, one that changed is refused with its difference unless --force.
    /// Exit codes: 1 the race is reproduced; 0 (--force, after a fix) the race no longer
    /// occurs, and why; 2 an invalid report, a changed file without --force, or a race that
    /// unchanged files and launch do not reproduce (a bug in ksim, said so).
    Replay(cli::explore::ReplayArgs),
    /// Decide race-freedom for one input with the fast executor (one canonical execution
    /// decides it for every schedule; README, "Races at real sizes"); every race is written as a
    /// replayable report.
    Races(cli::races::RacesArgs),
    /// Propose barrier placements that remove the races of a `.ksim` kernel, each checked by
    /// re-running the race check on the patched kernel; print them as a unified diff
    /// (`--write` patches the file, keeping FILE.orig). Exit 0 when every race has a
    /// verified fix (or there is none), 1 otherwise.
    Fix(cli::fix::FixArgs),
    /// Run kernels on an OpenCL device: list devices, emit OpenCL C, compare with the
    /// simulator, benchmark and plot.
    Gpu(cli::gpu::GpuArgs),
    /// Redraw figures (time, or `--sim-vs-real`) from CSVs written by `ksim gpu bench`.
    Plot(cli::gpu::PlotArgs),
    /// Verify a generic prefix sum for every monoid with one test: race-freedom plus the
    /// interval-of-summations monoid on the singleton input (POPL 2014, Theorem 4.5), or
    /// Voigtländer's O(n²) tests (`--method voigtlaender|both`).
    VerifyScan(cli::verify::VerifyArgs),
}

fn main() {
    // Die quietly on a closed pipe (`ksim trace ... | head`) instead of panicking.
    #[cfg(unix)]
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse();
    // On this thread where a thread with a large stack cannot be made (a tight `ulimit -v`).
    let code = std::thread::Builder::new()
        .name("ksim".into())
        .stack_size(STACK_BYTES)
        .spawn(move || run(&cli))
        .map_or_else(
            |_| run(&Cli::parse()),
            // A panic has been reported by the hook already: exit as a panic does.
            |t| t.join().unwrap_or(101),
        );
    std::process::exit(code);
}

/// The stack of the thread that runs a command. The front ends, the checker, the executors
/// and `Drop` recurse on expressions, and a flat C chain such as a 3,000-term `1+1+...`
/// (which real code has) is a tree thousands of levels deep: the main thread's 8 MiB stack
/// overflows on it. The OpenCL front end bounds nesting well below what this stack holds
/// ([`lang::cl::nesting::MAX_DEPTH`]); memory is only committed as the stack is used.
const STACK_BYTES: usize = 1 << 30;

/// Runs the command `cli` names; its exit code.
fn run(cli: &Cli) -> i32 {
    let result = match &cli.command {
        Command::Check(a) => cli::run::check(a),
        Command::Run(a) => cli::run::run(a),
        Command::Trace(a) => cli::run::trace(a),
        Command::Step(a) => cli::step::step(a),
        Command::Serve(a) => cli::serve::serve(a),
        Command::Circuit(a) => cli::circuit::circuit(a),
        Command::Graph(a) => cli::graph::graph(a),
        Command::Explore(a) => cli::explore::explore(a),
        Command::Replay(a) => cli::explore::replay(a),
        Command::Races(a) => cli::races::races(a),
        Command::Fix(a) => cli::fix::fix(a),
        Command::Gpu(a) => cli::gpu::gpu(a),
        Command::Plot(a) => cli::gpu::plot(a),
        Command::VerifyScan(a) => cli::verify::verify_scan(a),
    };
    match result {
        Ok(code) => code,
        Err(Failure { message, code }) => {
            let msg = message.trim_end();
            if code == EXIT_USAGE && !msg.contains('\n') {
                eprintln!("error: {msg}");
            } else {
                eprintln!("{msg}");
            }
            code
        }
    }
}
