//! The GPUVerify conformance runner: `cargo run --release --example conformance -- DIR
//! [--write docs/conformance.md]`. See `runner.rs` for the rules.

mod runner;
mod vercors;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(dir) = args.first() else {
        eprintln!("usage: conformance CORPUS_DIR [--write FILE]");
        std::process::exit(2);
    };
    let write = args
        .iter()
        .position(|a| a == "--write")
        .and_then(|i| args.get(i + 1));
    if dir == "--vercors" {
        let Some(dir) = args.get(1) else {
            eprintln!("usage: conformance --vercors CORPUS_DIR [--write FILE]");
            std::process::exit(2);
        };
        if let Err(e) = vercors::main(std::path::Path::new(dir), write) {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
        return;
    }
    let report = match runner::run(std::path::Path::new(dir)) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    };
    for row in &report.rows {
        println!("{}", row.line());
    }
    println!("{}", report.summary());
    for p in report.stale_exceptions() {
        println!("stale exception (the kernel agrees now): {p}");
    }
    if let Some(path) = write {
        let old = std::fs::read_to_string(path).unwrap_or_default();
        let text = report.document(&old);
        if let Err(e) = files::write_atomic(path.as_ref(), text.as_bytes()) {
            eprintln!("error: cannot write {path}: {e}");
            std::process::exit(2);
        }
        println!("wrote {path}");
    }
}
