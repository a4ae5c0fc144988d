//! Plotting works without fontconfig or system fonts (the font is embedded): the test
//! re-runs itself in a child process with an empty fontconfig environment.

use gpu::bench::{parse_csv, write_csv};
use std::process::Command;

const CSV: &str = "kernel,size,device,repeat,kernel_ns,total_ns
blelloch_tree1d,2,PoCL CPU,0,1000,5000
blelloch_tree1d,2,PoCL CPU,1,1200,5100
blelloch_tree1d,64,PoCL CPU,0,4000,9000
blelloch_tree1d,64,PoCL CPU,1,4600,9900
blelloch_tree1d,1024,PoCL CPU,0,90000,120000
blelloch_tree1d,1024,PoCL CPU,1,110000,130000
blelloch_tree2d,2,PoCL CPU,0,900,4900
blelloch_tree2d,2,PoCL CPU,1,950,5000
blelloch_tree2d,64,PoCL CPU,0,2500,7000
blelloch_tree2d,64,PoCL CPU,1,2700,7100
blelloch_tree2d,1024,PoCL CPU,0,40000,70000
blelloch_tree2d,1024,PoCL CPU,1,45000,72000
";

fn render_into(dir: &std::path::Path) {
    let rows = parse_csv(CSV).unwrap();
    let png = dir.join("storage.png");
    let svg = dir.join("storage.svg");
    gpu::plot(&rows, &png).unwrap();
    gpu::plot(&rows, &svg).unwrap();
    let png_bytes = std::fs::read(&png).unwrap();
    assert_eq!(&png_bytes[..8], b"\x89PNG\r\n\x1a\n");
    assert!(png_bytes.len() > 10_000, "a PNG with text and lines");
    let svg_text = std::fs::read_to_string(&svg).unwrap();
    assert!(svg_text.contains("<svg"));
    assert!(svg_text.contains("blelloch_tree1d") && svg_text.contains("blelloch_tree2d"));
    assert!(svg_text.contains("PoCL CPU"), "the title names the device");
    // Redrawing from a written CSV gives the same rows.
    let csv = dir.join("storage.csv");
    write_csv(&rows, &csv).unwrap();
    assert_eq!(gpu::read_csv(&csv).unwrap(), rows);
    assert!(gpu::plot(&rows, &dir.join("x.jpg")).is_err());
    assert!(gpu::plot(&[], &dir.join("x.png")).is_err());
}

#[test]
fn renders_png_and_svg_without_system_fonts() {
    if let Ok(dir) = std::env::var("KSIM_PLOT_CHILD_DIR") {
        render_into(std::path::Path::new(&dir));
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    std::fs::create_dir(&home).unwrap();
    let exe = std::env::current_exe().unwrap();
    let out = Command::new(exe)
        .args([
            "renders_png_and_svg_without_system_fonts",
            "--exact",
            "--nocapture",
        ])
        .env_clear()
        .env("FONTCONFIG_FILE", "/dev/null")
        .env("FONTCONFIG_PATH", tmp.path())
        .env("XDG_DATA_HOME", tmp.path())
        .env("HOME", &home)
        .env("KSIM_PLOT_CHILD_DIR", tmp.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "child failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(tmp.path().join("storage.png").exists());
    // Keep a copy for a human to look at when asked.
    if let Ok(keep) = std::env::var("KSIM_KEEP_PLOT") {
        std::fs::copy(tmp.path().join("storage.png"), keep).unwrap();
    }
}
