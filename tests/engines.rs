//! `ksim run --engine fast` and `--engine reference` print the same thing for every
//! example (issue: identical output at n = 256).

use std::path::PathBuf;
use std::process::Command;

fn run(engine: &str, file: &str, input: &str) -> (Option<i32>, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_ksim"))
        .args([
            "run", file, "-D", "n=256", "--input", input, "--engine", engine,
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("NO_COLOR", "1")
        .output()
        .expect("ksim runs");
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into(),
        String::from_utf8_lossy(&o.stderr).into(),
    )
}

#[test]
fn fast_and_reference_engines_print_the_same_for_every_example() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "ksim"))
        .collect();
    files.sort();
    assert!(files.len() >= 13);
    for path in files {
        let file = path.to_str().unwrap();
        let src = std::fs::read_to_string(&path).unwrap();
        // left_rotation keeps the paper's single array `array`.
        let input = if src.contains(" in[") {
            "in=random:5"
        } else {
            "array=iota"
        };
        let fast = run("fast", file, input);
        let reference = run("reference", file, input);
        assert_eq!(fast, reference, "{file}");
        assert!(matches!(fast.0, Some(0 | 1)), "{file}: {}", fast.2);
    }
}
