//! What an execution keeps is bounded (issue 13 item 10): a thread spinning for 500,000
//! steps under `explore --exhaustive` used to need about 820 bytes per step (410 MB here)
//! and now about 155; the run is made under a 300 MB address-space limit (`ulimit -v`),
//! which the old explorer exceeded. It must report the non-termination, exit 1.

use std::process::Command;

#[test]
fn exhaustive_exploration_of_a_long_execution_fits_in_300_mb() {
    let kernel = std::env::temp_dir().join(format!("ksim-spin-{}.ksim", std::process::id()));
    std::fs::write(
        &kernel,
        "kernel spin(local int a[1]) launch(groups = 1, local_size = 1)\n\
         { int i = 0; while (i >= 0) { i = i + 1; if (i > 1000) i = 0; } }\n",
    )
    .expect("write kernel");
    let script = format!(
        "ulimit -v 300000 && exec '{}' explore --exhaustive -q --no-reports --max-steps 500000 '{}'",
        env!("CARGO_BIN_EXE_ksim"),
        kernel.display()
    );
    let out = Command::new("sh")
        .arg("-c")
        .arg(script)
        .output()
        .expect("run ksim");
    let _ = std::fs::remove_file(&kernel);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("non-terminating executions: 1"), "{stdout}");
}
