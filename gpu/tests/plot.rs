//! Figures: PNG, SVG and PDF are drawn without fontconfig or system fonts (the font is
//! embedded; the test re-runs itself in a child process with an empty fontconfig
//! environment), a paper-sized figure has legible text, and a CSV redraws the same.

use gpu::bench::csv_io::parse_csv;
use gpu::{BenchSeries, Figure};
use std::path::Path;
use std::process::Command;

/// Two kernels, three sizes, three runs each: median, spread and simulated steps.
fn series() -> BenchSeries {
    let mut points = Vec::new();
    for (kernel, scale, steps) in [("blelloch_tree1d", 1.0, 7u64), ("blelloch_tree2d", 3.5, 19)] {
        for (n, base) in [(2u64, 1000.0), (64, 4000.0), (1024, 90000.0)] {
            let samples: Vec<u64> = [0.9, 1.0, 1.3]
                .iter()
                .map(|f| (base * scale * f) as u64)
                .collect();
            let total: Vec<u64> = samples.iter().map(|s| s + 5000).collect();
            points.push(gpu::BenchPoint {
                kernel: kernel.into(),
                device: "PoCL CPU".into(),
                param: "n".into(),
                size: n,
                groups: 1,
                local_size: n as usize / 2,
                launches: 1,
                monoid: "int-add".into(),
                input: "in=random:1".into(),
                harness: "copy-in in; copy-out out".into(),
                check: gpu::Check::Ok,
                kernel_ns: gpu::Stats::of(&samples).unwrap(),
                total_ns: gpu::Stats::of(&total).unwrap(),
                sim: gpu::bench::SimMeasures {
                    threads: n,
                    steps: steps * n * (64 - n.leading_zeros() as u64),
                    intervals: 2 * (64 - n.leading_zeros() as u64),
                    warp: None,
                },
                kernel_samples_ns: samples,
                total_samples_ns: total,
            });
        }
    }
    BenchSeries {
        points,
        ..Default::default()
    }
}

/// Every `font-size="…"` in an SVG, in user units.
fn font_sizes(svg: &str) -> Vec<f64> {
    svg.split("font-size=\"")
        .skip(1)
        .map(|s| s[..s.find('"').unwrap()].parse().unwrap())
        .collect()
}

fn render_into(dir: &Path) {
    let s = series();
    let fig = Figure::default();
    for name in ["t.png", "t.svg", "t.pdf", "s.png", "s.svg", "s.pdf"] {
        let path = dir.join(name);
        if name.starts_with('t') {
            gpu::plot(&s, &path, &fig).unwrap();
        } else {
            gpu::plot::simreal::plot(&s, &path, &fig).unwrap();
        }
        let bytes = std::fs::read(&path).unwrap();
        match &name[2..] {
            "png" => {
                assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
                assert!(bytes.len() > 10_000, "a PNG with text and lines");
            }
            "pdf" => {
                assert!(bytes.starts_with(b"%PDF-"), "{name}");
                assert!(bytes.len() > 5_000, "a PDF with an embedded font");
            }
            _ => {
                let svg = String::from_utf8(bytes).unwrap();
                assert!(svg.contains("<svg"));
                for k in ["blelloch_tree1d", "blelloch_tree2d"] {
                    assert!(svg.contains(k), "the legend names {k}");
                }
                assert!(svg.contains("2¹⁰"), "sizes as powers of two");
            }
        }
    }
    let svg = std::fs::read_to_string(dir.join("t.svg")).unwrap();
    assert!(
        svg.contains("PoCL CPU"),
        "the default title names the device"
    );
    assert!(svg.contains("µs"), "SI unit on the time axis");
    assert!(gpu::plot(&s, &dir.join("x.jpg"), &fig).is_err());
    assert!(gpu::plot(&BenchSeries::default(), &dir.join("x.png"), &fig).is_err());
}

#[test]
fn renders_png_svg_and_pdf_without_system_fonts() {
    if let Ok(dir) = std::env::var("KSIM_PLOT_CHILD_DIR") {
        render_into(Path::new(&dir));
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    std::fs::create_dir(&home).unwrap();
    let exe = std::env::current_exe().unwrap();
    let out = Command::new(exe)
        .args([
            "renders_png_svg_and_pdf_without_system_fonts",
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
    assert!(tmp.path().join("t.pdf").exists());
    // Keep copies for a human to look at when asked.
    if let Ok(keep) = std::env::var("KSIM_KEEP_PLOT") {
        for f in ["t.png", "s.png"] {
            std::fs::copy(tmp.path().join(f), Path::new(&keep).join(f)).unwrap();
        }
    }
}

#[test]
fn a_one_column_figure_has_text_of_at_least_7_points() {
    let dir = tempfile::tempdir().unwrap();
    let dpi = 300.0;
    // The simulated-vs-real figure stacks its three panels two by two in one column's
    // width, so it is taller.
    for (sim, size) in [(false, "3.3x2.2in"), (true, "3.3x3.8in")] {
        let (w, h) = gpu::plot::parse_size(size).unwrap();
        let fig = Figure {
            width_px: (w * dpi) as u32,
            height_px: (h * dpi) as u32,
            dpi,
            font_pt: 7.0,
            ..Figure::default()
        };
        let path = dir.path().join(if sim { "s.svg" } else { "t.svg" });
        if sim {
            gpu::plot::simreal::plot(&series(), &path, &fig).unwrap();
        } else {
            gpu::plot(&series(), &path, &fig).unwrap();
        }
        let svg = std::fs::read_to_string(&path).unwrap();
        let physical = format!("width=\"{w:.3}in\" height=\"{h:.3}in\"");
        assert!(svg.contains(&physical), "physical size {physical}");
        let sizes = font_sizes(&svg);
        assert!(sizes.len() > 10, "ticks, labels, legend: {sizes:?}");
        // The SVG is 990 user units for 3.3 in: one point is 300 / 72 units.
        let smallest = sizes.iter().copied().fold(f64::INFINITY, f64::min) * 72.0 / dpi;
        assert!(
            smallest >= 7.0 - 1e-9,
            "smallest text {smallest:.2} pt in {path:?}"
        );
    }
}

#[test]
fn a_csv_redraws_the_same_points() {
    let dir = tempfile::tempdir().unwrap();
    let s = series();
    let csv = dir.path().join("s.csv");
    gpu::write_csv(&s, &csv).unwrap();
    let back = gpu::read_csv(&csv).unwrap();
    assert_eq!(back.points, s.points);
    let text = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(parse_csv(&text).unwrap(), s.points);
    let a = dir.path().join("a.svg");
    let b = dir.path().join("b.svg");
    gpu::plot(&s, &a, &Figure::default()).unwrap();
    gpu::plot(&back, &b, &Figure::default()).unwrap();
    assert_eq!(std::fs::read(a).unwrap(), std::fs::read(b).unwrap());
}
