//! `ksim step`: the interactive stepper. The state machine is [`interp::stepper`], the
//! text of configurations and steps [`sim::step_view`]; this module reads commands.
//!
//! On a terminal, commands are read with `rustyline` (a readline-style line editor:
//! history with the arrow keys, Emacs/vi editing, Ctrl-R search), which keeps the
//! configuration in the terminal's scrollback where a lecturer can scroll back and point
//! at it, unlike a full-screen view. When standard input is not a terminal, commands are
//! read one per line and echoed, so a session is a script and its output a transcript.

use super::common::*;
use clap::Args;
use interp::stepper::{Step, Stepper, Until};
use interp::Launch;
use sim::step_view::StepView;
use std::io::{BufRead, IsTerminal, Read};
use std::path::Path;

#[derive(Args, Debug)]
pub struct StepArgs {
    #[command(flatten)]
    pub launch: LaunchArgs,
}

const HELP: &str = "\
commands:
  tN         K-STEP thread N (global index; `t3`)
  (Enter)    K-STEP the canonical choice: the lowest enabled thread
  barrier    canonical steps until the next K-BARRIER fires
  race       canonical steps until the next race is found
  end        canonical steps until every thread has terminated
  back       undo the last step (replays the schedule without it)
  state      print the configuration
  rules      print the rules of the semantics (POPL 2014, Figures 6 and 7)
  schedule   print the schedule so far, for `ksim run --schedule @FILE`
  save FILE  write the schedule so far to FILE
  help       this list
  quit       leave (also Ctrl-D)
Enabled barriers fire at once after the step that enables them (K-BARRIER).";

const RULES: &str = "\
POPL 2014, Figure 6 (one thread; σ_v variables, σ_A arrays, ss statements):
  S-ASSIGN   (σ_v, σ_A, v := e; ss)       →s (σ_v[v ↦ ⟦e⟧], σ_A, ss)
  S-ARRAY    (σ_v, σ_A, A[e1] := e2; ss)  →s (σ_v, σ_A[A[⟦e1⟧] ↦ ⟦e2⟧], ss)
  S-ITE-T    ⟦e⟧ true:  (σ_v, σ_A, if e then ss1 else ss2; ss) →s (σ_v, σ_A, ss1 · ss)
  S-ITE-F    ⟦e⟧ false: (σ_v, σ_A, if e then ss1 else ss2; ss) →s (σ_v, σ_A, ss2 · ss)
  S-LOOP-T   ⟦e⟧ true:  (σ_v, σ_A, while e do ss1; ss) →s (σ_v, σ_A, ss1 · while e do ss1; ss)
  S-LOOP-F   ⟦e⟧ false: (σ_v, σ_A, while e do ss1; ss) →s (σ_v, σ_A, ss)
Figure 7 (kernel state (σ_A, K), K(t) = (σ_v, ss) per thread t):
  K-STEP     K(t) = (σ_v, ss) and (σ_v, σ_A, ss) →s (σ_v', σ_A', ss')
             ⟹ (σ_A, K) →k (σ_A', K[t ↦ (σ_v', ss')])   (any enabled t: your choice)
  K-BARRIER  every thread is at `barrier; ss_t` or has terminated (ε), and one is at a
             barrier ⟹ every waiting thread moves past its barrier, σ_A unchanged
ksim applies K-BARRIER per work-group, as soon as it is enabled.";

pub fn step(args: &StepArgs) -> CmdResult {
    let (src, mut launch) = args.launch.launch()?;
    // Stepping by hand ends at the first fault (`back` undoes it).
    launch.continue_after_faults = false;
    sim::step_view::check_size(&launch).map_err(Failure::usage)?;
    let mut stepper = Stepper::new(&launch);
    let mut session = Session {
        src: &src,
        launch: &launch,
    };
    println!(
        "kernel {}: {} group(s) of {} threads, monoid {}; `help` lists the commands",
        launch.kernel.name, launch.groups, launch.local_size, launch.monoid
    );
    for b in stepper.initial_barriers() {
        println!("{}", session.view().barrier_line(b));
    }
    print!("{}", session.view().config(&stepper.config()));
    let terminal = std::io::stdin().is_terminal();
    let mut lines = CommandLines::new(terminal)?;
    let mut number = 0;
    while let Some(line) = lines.next() {
        number += 1;
        let line = match line {
            Ok(line) => line,
            Err(why) => {
                println!("error: line {number} {why}; skipped");
                continue;
            }
        };
        if !terminal {
            println!("> {line}");
        }
        if !session.command(&mut stepper, line.trim())? {
            break;
        }
    }
    let found = !stepper.races().is_empty()
        || stepper.fault().is_some()
        || !stepper.divergences().is_empty();
    Ok(if found { EXIT_FOUND } else { EXIT_OK })
}

/// The longest line read as a command when standard input is not a terminal: a longer
/// one is skipped unread, neither held in memory nor echoed.
const MAX_LINE: usize = 4096;

/// Commands from the line editor or, when standard input is not a terminal, its lines.
enum CommandLines {
    Editor(rustyline::DefaultEditor),
    Plain(std::io::StdinLock<'static>),
}

impl CommandLines {
    fn new(terminal: bool) -> Result<CommandLines, Failure> {
        if terminal {
            let editor = rustyline::DefaultEditor::new()
                .map_err(|e| Failure::usage(format!("cannot start the line editor: {e}")))?;
            Ok(CommandLines::Editor(editor))
        } else {
            Ok(CommandLines::Plain(std::io::stdin().lock()))
        }
    }

    /// The next line; `Err` (why) for one that is no command: too long, or not UTF-8.
    fn next(&mut self) -> Option<Result<String, String>> {
        match self {
            CommandLines::Editor(ed) => match ed.readline("step> ") {
                Ok(line) => {
                    if !line.trim().is_empty() {
                        let _ = ed.add_history_entry(line.as_str());
                    }
                    Some(Ok(line))
                }
                Err(_) => None, // Ctrl-D, Ctrl-C or a terminal error: leave
            },
            CommandLines::Plain(input) => read_line(input),
        }
    }
}

/// One line of `input` without its line end, read at most [`MAX_LINE`] bytes at a time;
/// `None` at the end of the input (or a read error).
fn read_line(input: &mut impl BufRead) -> Option<Result<String, String>> {
    let mut buf = Vec::new();
    let n = (input.by_ref().take(MAX_LINE as u64 + 1))
        .read_until(b'\n', &mut buf)
        .ok()?;
    if n == 0 {
        return None;
    }
    if buf.last() == Some(&b'\n') {
        buf.pop();
        if buf.last() == Some(&b'\r') {
            buf.pop();
        }
    } else if buf.len() > MAX_LINE {
        skip_line(input);
        return Some(Err(format!(
            "is longer than {MAX_LINE} bytes, too long for a command"
        )));
    }
    Some(String::from_utf8(buf).map_err(|_| "is not valid UTF-8".to_string()))
}

/// Consumes `input` up to and including the next line end, without keeping it.
fn skip_line(input: &mut impl BufRead) {
    while let Ok(buf) = input.fill_buf() {
        if buf.is_empty() {
            return;
        }
        match buf.iter().position(|&b| b == b'\n') {
            Some(i) => return input.consume(i + 1),
            None => {
                let n = buf.len();
                input.consume(n);
            }
        }
    }
}

struct Session<'a> {
    src: &'a Source,
    launch: &'a Launch,
}

impl Session<'_> {
    /// Runs one command; false to leave.
    fn command(&mut self, st: &mut Stepper, cmd: &str) -> Result<bool, Failure> {
        let (word, rest) = cmd.split_once(char::is_whitespace).unwrap_or((cmd, ""));
        match word {
            "" => match st.canonical() {
                Some(t) => self.step(st, t),
                None => println!("no thread is enabled: {}", end_reason(st)),
            },
            "barrier" | "race" | "end" => {
                let until = match word {
                    "barrier" => Until::Barrier,
                    "race" => Until::Race,
                    _ => Until::End,
                };
                if st.canonical().is_none() {
                    println!("no thread is enabled: {}", end_reason(st));
                    return Ok(true);
                }
                let run = st.run(until);
                println!("ran {} step(s){}", run.steps, run_summary(&run.schedule));
                for s in &run.events {
                    self.events(s);
                }
                if let Some(f) = &run.fault {
                    print!("{}", render_fault(self.src, self.launch, f));
                }
                let raced = run.events.last().is_some_and(|s| !s.races.is_empty());
                if until == Until::Race && !raced {
                    println!("no new race on the canonical path from here");
                }
                print!("{}", self.view().config(&st.config()));
            }
            "back" => {
                if st.back() {
                    println!("back to step {}", st.steps());
                    print!("{}", self.view().config(&st.config()));
                } else {
                    println!("already at the initial configuration");
                }
            }
            "state" => print!("{}", self.view().config(&st.config())),
            "rules" => println!("{RULES}"),
            "schedule" => println!("{}", schedule_json(st)),
            "save" => {
                let path = rest.trim();
                if path.is_empty() {
                    println!("usage: save FILE");
                } else {
                    match files::write_atomic(Path::new(path), schedule_json(st).as_bytes()) {
                        Ok(()) => println!(
                            "schedule of {} step(s) saved to {path}; replay with `ksim run ... --schedule @{path}`",
                            st.steps()
                        ),
                        Err(e) => println!("cannot write {path}: {e}"),
                    }
                }
            }
            "help" | "?" => println!("{HELP}"),
            "quit" | "q" | "exit" => return Ok(false),
            _ => match parse_thread(word) {
                Some(t) => self.step(st, t),
                None => println!("unknown command `{cmd}`; `help` lists the commands"),
            },
        }
        Ok(true)
    }

    fn step(&self, st: &mut Stepper, t: usize) {
        match st.step(t) {
            Err(refusal) => println!("cannot step: {refusal}"),
            Ok(Err(fault)) => {
                print!("{}", render_fault(self.src, self.launch, &fault));
                print!("{}", self.view().config(&st.config()));
            }
            Ok(Ok(s)) => {
                println!("{}", self.view().step_line(&s));
                self.events(&s);
                print!("{}", self.view().config(&st.config()));
            }
        }
    }

    /// What a step caused beyond itself: barriers fired, divergence, races.
    fn events(&self, s: &Step) {
        for b in &s.barriers {
            println!("{}", self.view().barrier_line(b));
            if b.divergence.is_some() {
                println!("{}", divergence_message(b));
            }
        }
        for r in &s.races {
            print!("{}", render_race(self.src, self.launch, r, &[]));
        }
    }

    fn view(&self) -> StepView<'_> {
        StepView {
            source: self.src.view(),
            launch: self.launch,
        }
    }
}

fn parse_thread(word: &str) -> Option<usize> {
    word.strip_prefix('t').and_then(|n| n.parse().ok())
}

fn schedule_json(st: &Stepper) -> String {
    serde_json::to_string(st.schedule()).expect("a schedule is JSON")
}

fn end_reason(st: &Stepper) -> &'static str {
    if st.fault().is_some() {
        "the execution stopped at a fault (`back` to undo)"
    } else {
        "every thread has terminated"
    }
}

/// `: t0×3 t1×2`: the threads a run stepped, run-length encoded.
fn run_summary(s: &interp::exec::Schedule) -> String {
    if s.runs.is_empty() {
        return String::new();
    }
    let runs: Vec<String> = s
        .runs
        .iter()
        .take(12)
        .map(|(t, n)| format!("t{t}×{n}"))
        .collect();
    let more = if s.runs.len() > 12 { " ..." } else { "" };
    format!(": {}{more}", runs.join(" "))
}
