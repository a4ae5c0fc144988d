//! `ksim step`: the interactive stepper. The state machine is [`interp::stepper`]; this
//! module reads commands and renders configurations as text.
//!
//! On a terminal, commands are read with `rustyline` (a readline-style line editor:
//! history with the arrow keys, Emacs/vi editing, Ctrl-R search), which keeps the
//! configuration in the terminal's scrollback where a lecturer can scroll back and point
//! at it, unlike a full-screen view. When standard input is not a terminal, commands are
//! read one per line and echoed, so a session is a script and its output a transcript.

use super::common::*;
use clap::Args;
use interp::notation;
use interp::stepper::{Config, Status, Step, Stepper, Until};
use interp::Launch;
use std::fmt::Write as _;
use std::io::{BufRead, IsTerminal};
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
    let (src, launch) = args.launch.launch()?;
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
        println!("{}", session.barrier_line(b));
    }
    print!("{}", session.config(&stepper.config()));
    let terminal = std::io::stdin().is_terminal();
    let mut lines = CommandLines::new(terminal)?;
    while let Some(line) = lines.next() {
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

/// Commands from the line editor or, when standard input is not a terminal, its lines.
enum CommandLines {
    Editor(rustyline::DefaultEditor),
    Plain(std::io::Lines<std::io::StdinLock<'static>>),
}

impl CommandLines {
    fn new(terminal: bool) -> Result<CommandLines, Failure> {
        if terminal {
            let editor = rustyline::DefaultEditor::new()
                .map_err(|e| Failure::usage(format!("cannot start the line editor: {e}")))?;
            Ok(CommandLines::Editor(editor))
        } else {
            Ok(CommandLines::Plain(std::io::stdin().lock().lines()))
        }
    }

    fn next(&mut self) -> Option<String> {
        match self {
            CommandLines::Editor(ed) => match ed.readline("step> ") {
                Ok(line) => {
                    if !line.trim().is_empty() {
                        let _ = ed.add_history_entry(line.as_str());
                    }
                    Some(line)
                }
                Err(_) => None, // Ctrl-D, Ctrl-C or a terminal error: leave
            },
            CommandLines::Plain(lines) => lines.next().and_then(Result::ok),
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
                print!("{}", self.config(&st.config()));
            }
            "back" => {
                if st.back() {
                    println!("back to step {}", st.steps());
                    print!("{}", self.config(&st.config()));
                } else {
                    println!("already at the initial configuration");
                }
            }
            "state" => print!("{}", self.config(&st.config())),
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
                print!("{}", self.config(&st.config()));
            }
            Ok(Ok(s)) => {
                println!("{}", self.step_line(&s));
                self.events(&s);
                print!("{}", self.config(&st.config()));
            }
        }
    }

    /// What a step caused beyond itself: barriers fired, divergence, races.
    fn events(&self, s: &Step) {
        for b in &s.barriers {
            println!("{}", self.barrier_line(b));
            if b.divergence.is_some() {
                println!("{}", divergence_message(b));
            }
        }
        for r in &s.races {
            print!("{}", render_race(self.src, self.launch, r, &[]));
        }
    }

    fn barrier_line(&self, b: &interp::reference::BarrierInfo) -> String {
        format!(
            "K-BARRIER fires in group {}: epoch {} begins",
            b.group, b.epoch
        )
    }

    /// `step 4: t1 S-ARRAY  out[tid] := ...   out[1]: 1 -> 2`
    fn step_line(&self, s: &Step) -> String {
        let k = &self.launch.kernel;
        let info = &s.info;
        let stmt = notation::find_stmt(k, &info.span, info.rule)
            .map(|x| notation::stmt(k, x))
            .unwrap_or_else(|| self.src.view().statement(&info.span));
        // A statement of an included file says where it is, as in `trace`.
        let stmt = match self.src.view().included_file(info.span.start) {
            Some(_) => format!("{}: {stmt}", self.line(info.span.start)),
            None => stmt,
        };
        let change = if let Some((v, old, new)) = &info.var_change {
            format!(
                "{}: {} -> {}",
                notation::var_name(k, *v),
                notation::value(old),
                notation::value(new)
            )
        } else if let (Some(e), Some((old, new))) = (&info.write, &info.elem_change) {
            format!(
                "{}: {} -> {}",
                sim::text::elem_name(self.launch, e.array, e.instance, &e.index),
                notation::value(old),
                notation::value(new)
            )
        } else {
            String::new()
        };
        format!(
            "step {}: {} {}  {stmt}   {change}",
            s.index,
            self.thread_name(s.thread),
            info.rule
        )
        .trim_end()
        .to_string()
    }

    fn thread_name(&self, t: usize) -> String {
        if self.launch.groups > 1 {
            format!(
                "t{t} (g{}.t{})",
                t / self.launch.local_size,
                t % self.launch.local_size
            )
        } else {
            format!("t{t}")
        }
    }

    /// The configuration as text: one line per thread, one per array instance; cells the
    /// last step wrote are marked `*`.
    fn config(&self, c: &Config) -> String {
        let mut out = String::new();
        let epochs: Vec<String> = c.epochs.iter().map(|e| e.to_string()).collect();
        let _ = writeln!(
            out,
            "-- configuration after {} step(s), barrier epoch {}{}",
            c.steps,
            epochs.join("/"),
            if c.is_final { ", final" } else { "" }
        );
        let names: Vec<String> = c
            .threads
            .iter()
            .map(|t| self.thread_name(t.thread))
            .collect();
        let width = names.iter().map(|n| n.len()).max().unwrap_or(2);
        for (t, name) in c.threads.iter().zip(&names) {
            let vars: Vec<String> = t
                .vars
                .iter()
                .map(|(n, v)| format!("{n}={}", notation::value(v)))
                .collect();
            let (status, next) = match &t.status {
                Status::Done => ("done".to_string(), String::new()),
                Status::AtBarrier { span } => (
                    format!("at barrier (line {})", self.line(span.start)),
                    String::new(),
                ),
                Status::Enabled { rule } => {
                    let (text, span) = t.next.clone().unwrap_or_default();
                    let text = if text.is_empty() {
                        self.src.view().statement(&span)
                    } else {
                        text
                    };
                    let rule = match rule {
                        Ok(r) => r.to_string(),
                        Err(f) => format!("faults: {f}"),
                    };
                    (
                        "enabled".to_string(),
                        format!("line {}: {text}   [{rule}]", self.line(span.start)),
                    )
                }
            };
            let _ = writeln!(
                out,
                "  {name:width$}  {status:<21} {:<24} {next}",
                vars.join(" ")
            );
        }
        let labels: Vec<String> = c
            .arrays
            .iter()
            .map(|a| sim::text::elem_name(self.launch, a.array, a.instance, &[]))
            .collect();
        let aw = labels.iter().map(|l| l.len()).max().unwrap_or(0);
        for (a, label) in c.arrays.iter().zip(labels) {
            let cells: Vec<String> = a
                .values
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    let mark = if a.changed.contains(&i) { "*" } else { "" };
                    format!("{}{mark}", notation::value(v))
                })
                .collect();
            let _ = writeln!(out, "  {label:aw$} = {}", cells.join(" "));
        }
        out.push_str(self.findings_line(c).as_str());
        out
    }

    fn findings_line(&self, c: &Config) -> String {
        let enabled = c
            .threads
            .iter()
            .filter(|t| matches!(t.status, Status::Enabled { .. }))
            .count();
        if c.is_final {
            String::new()
        } else {
            format!("  {enabled} thread(s) enabled; Enter steps the lowest\n")
        }
    }

    /// The line of a statement (`file:line` in an included file).
    fn line(&self, offset: usize) -> String {
        self.src.view().at(offset)
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
