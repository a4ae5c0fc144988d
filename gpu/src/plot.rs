//! Line charts of benchmark results with `plotters`: log2 x axis of the size, time on
//! the y axis, one line per kernel (the mean over repetitions) with a min–max band, and
//! a title naming the device. PNG or SVG, chosen by the file extension.
//!
//! Text is drawn with the embedded DejaVu Sans (`assets/DejaVuSans.ttf`, licence in
//! `assets/DejaVuSans-LICENSE`) registered through plotters' `ab_glyph` backend, so
//! plotting needs no fontconfig and no system fonts.

use crate::bench::BenchRow;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

static DEJAVU_SANS: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");

/// Registers the embedded font as `sans-serif` (and `DejaVu Sans`), once.
pub fn register_fonts() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        for name in ["sans-serif", "DejaVu Sans"] {
            if plotters::style::register_font(name, FontStyle::Normal, DEJAVU_SANS).is_err() {
                // The font is compiled in and valid; a failure here is a build problem.
                panic!("the embedded DejaVu Sans font is not a valid TrueType font");
            }
        }
    });
}

/// Which timing to plot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Metric {
    /// Kernel time from profiling events.
    #[default]
    Kernel,
    /// Wall time including transfers.
    Total,
}

/// Plot options.
#[derive(Clone, Debug, Default)]
pub struct PlotOptions {
    pub metric: Metric,
    /// Replaces the default title ("kernel time on DEVICE").
    pub title: Option<String>,
    /// Pixel size (default 1024 × 640).
    pub size: Option<(u32, u32)>,
}

/// Why a plot could not be drawn.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlotError(pub String);

impl fmt::Display for PlotError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PlotError {}

impl From<std::io::Error> for PlotError {
    fn from(e: std::io::Error) -> PlotError {
        PlotError(format!("cannot write the plot: {e}"))
    }
}

/// One plotted line: per size, (mean, min, max) in nanoseconds.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    pub label: String,
    pub points: Vec<(u64, f64, f64, f64)>,
}

/// Aggregates rows into one series per kernel (per kernel and device when the rows
/// come from several devices), sorted by size.
pub fn series(rows: &[BenchRow], metric: Metric) -> Vec<Series> {
    let devices: std::collections::BTreeSet<&str> =
        rows.iter().map(|r| r.device.as_str()).collect();
    let many = devices.len() > 1;
    let mut order: Vec<String> = Vec::new();
    let mut groups: BTreeMap<String, BTreeMap<u64, Vec<f64>>> = BTreeMap::new();
    for r in rows {
        let label = if many {
            format!("{} ({})", r.kernel, r.device)
        } else {
            r.kernel.clone()
        };
        if !order.contains(&label) {
            order.push(label.clone());
        }
        let v = match metric {
            Metric::Kernel => r.kernel_ns,
            Metric::Total => r.total_ns,
        } as f64;
        groups
            .entry(label)
            .or_default()
            .entry(r.size)
            .or_default()
            .push(v);
    }
    order
        .into_iter()
        .map(|label| {
            let points = groups[&label]
                .iter()
                .map(|(&size, vs)| {
                    let mean = vs.iter().sum::<f64>() / vs.len() as f64;
                    let min = vs.iter().copied().fold(f64::INFINITY, f64::min);
                    let max = vs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                    (size, mean, min, max)
                })
                .collect();
            Series { label, points }
        })
        .collect()
}

/// Draws `rows` to `path` (`.png` or `.svg`) with default options.
pub fn plot(rows: &[BenchRow], path: &Path) -> Result<(), PlotError> {
    plot_with(rows, path, &PlotOptions::default())
}

/// The image format of a plot file, from its extension: `.png` or `.svg`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlotFormat {
    Png,
    Svg,
}

/// The format `path` asks for, or why it cannot be drawn; checked before any benchmark
/// runs, so that a bad `--plot` name does not waste a sweep.
pub fn plot_format(path: &Path) -> Result<PlotFormat, PlotError> {
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "png" => Ok(PlotFormat::Png),
        "svg" => Ok(PlotFormat::Svg),
        _ => Err(PlotError(format!(
            "cannot plot to {}: the file name must end in .png or .svg",
            path.display()
        ))),
    }
}

/// Draws `rows` to `path` (`.png` or `.svg`), atomically: a reader never sees half a
/// picture and a failed drawing leaves the old file in place.
pub fn plot_with(rows: &[BenchRow], path: &Path, opts: &PlotOptions) -> Result<(), PlotError> {
    let format = plot_format(path)?;
    if rows.is_empty() {
        return Err(PlotError("nothing to plot: no benchmark rows".into()));
    }
    register_fonts();
    let size = opts.size.unwrap_or((1024, 640));
    let suffix = match format {
        PlotFormat::Png => ".png",
        PlotFormat::Svg => ".svg",
    };
    files::write_atomic_via(path, suffix, |tmp| match format {
        PlotFormat::Png => draw(
            BitMapBackend::new(tmp, size).into_drawing_area(),
            rows,
            opts,
        ),
        PlotFormat::Svg => draw(SVGBackend::new(tmp, size).into_drawing_area(), rows, opts),
    })
}

/// The time unit that makes `max_ns` read well.
fn unit(max_ns: f64) -> (&'static str, f64) {
    if max_ns >= 1e9 {
        ("s", 1e9)
    } else if max_ns >= 1e6 {
        ("ms", 1e6)
    } else if max_ns >= 1e3 {
        ("µs", 1e3)
    } else {
        ("ns", 1.0)
    }
}

fn size_label(k: i32) -> String {
    if k < 0 {
        return String::new();
    }
    let n = 1u64 << k;
    if n < 100_000 {
        n.to_string()
    } else {
        format!("2^{k}")
    }
}

fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    rows: &[BenchRow],
    opts: &PlotOptions,
) -> Result<(), PlotError>
where
    DB::ErrorType: 'static,
{
    let err =
        |e: DrawingAreaErrorKind<DB::ErrorType>| PlotError(format!("cannot draw the plot: {e}"));
    let all = series(rows, opts.metric);
    let mut devices: Vec<&str> = Vec::new();
    for r in rows {
        if !devices.contains(&r.device.as_str()) {
            devices.push(&r.device);
        }
    }
    let what = match opts.metric {
        Metric::Kernel => "kernel time",
        Metric::Total => "total time (with transfers)",
    };
    let title = opts
        .title
        .clone()
        .unwrap_or_else(|| format!("{what} on {}", devices.join(", ")));

    let log2 = |n: u64| -> f64 { (n.max(1) as f64).log2() };
    let xs: Vec<f64> = all
        .iter()
        .flat_map(|s| s.points.iter().map(|p| log2(p.0)))
        .collect();
    let kmin = xs.iter().copied().fold(f64::INFINITY, f64::min).floor() as i32;
    let kmax = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max).ceil() as i32;
    let (kmin, kmax) = if kmin == kmax {
        (kmin - 1, kmax + 1)
    } else {
        (kmin, kmax)
    };
    let ymax_ns = all
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.3))
        .fold(1.0f64, f64::max);
    let ymin_ns = all
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.2))
        .fold(f64::INFINITY, f64::min)
        .max(1.0);
    let (uname, scale) = unit(ymax_ns);
    let log_y = ymax_ns / ymin_ns > 100.0;

    root.fill(&WHITE).map_err(err)?;
    let mut builder = ChartBuilder::on(&root);
    builder
        .caption(&title, ("sans-serif", 26))
        .margin(16)
        .margin_right(40)
        .x_label_area_size(48)
        .y_label_area_size(80);
    let x_desc = "size n (log2 scale)";
    let y_desc = format!(
        "{what} ({uname}{}, mean with min–max band)",
        if log_y { ", log scale" } else { "" }
    );
    let palette = [
        RGBColor(31, 119, 180),
        RGBColor(214, 39, 40),
        RGBColor(44, 160, 44),
        RGBColor(255, 127, 14),
        RGBColor(148, 103, 189),
        RGBColor(140, 86, 75),
        RGBColor(227, 119, 194),
        RGBColor(127, 127, 127),
    ];
    let x_labels = (kmax - kmin + 1).clamp(2, 24) as usize;

    macro_rules! body {
        ($chart:ident, $y:expr) => {{
            $chart
                .configure_mesh()
                .x_labels(x_labels)
                .x_label_formatter(&|k| size_label(*k))
                .x_desc(x_desc)
                .y_desc(y_desc.as_str())
                .label_style(("sans-serif", 16))
                .axis_desc_style(("sans-serif", 18))
                .draw()
                .map_err(err)?;
            for (i, s) in all.iter().enumerate() {
                let color = palette[i % palette.len()];
                let pts = |f: fn(&(u64, f64, f64, f64)) -> f64| -> Vec<(i32, f64)> {
                    s.points
                        .iter()
                        .map(|p| (log2(p.0).round() as i32, $y(f(p))))
                        .collect()
                };
                let upper = pts(|p| p.3);
                let mut lower = pts(|p| p.2);
                lower.reverse();
                let band: Vec<(i32, f64)> = upper.iter().chain(lower.iter()).copied().collect();
                $chart
                    .draw_series(std::iter::once(Polygon::new(
                        band,
                        color.mix(0.18).filled(),
                    )))
                    .map_err(err)?;
                $chart
                    .draw_series(LineSeries::new(pts(|p| p.1), color.stroke_width(2)))
                    .map_err(err)?
                    .label(s.label.clone())
                    .legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 24, y)], color.stroke_width(2))
                    });
                $chart
                    .draw_series(
                        pts(|p| p.1)
                            .into_iter()
                            .map(|p| Circle::new(p, 3, color.filled())),
                    )
                    .map_err(err)?;
            }
            $chart
                .configure_series_labels()
                .position(SeriesLabelPosition::UpperLeft)
                .label_font(("sans-serif", 16))
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK)
                .draw()
                .map_err(err)?;
        }};
    }

    if log_y {
        let lo = ymin_ns / scale / 1.5;
        let hi = ymax_ns / scale * 1.5;
        let mut chart = builder
            .build_cartesian_2d(kmin..kmax, (lo..hi).log_scale())
            .map_err(err)?;
        body!(chart, |v: f64| (v / scale).max(lo));
    } else {
        let hi = ymax_ns / scale * 1.1;
        let mut chart = builder
            .build_cartesian_2d(kmin..kmax, 0.0..hi)
            .map_err(err)?;
        body!(chart, |v: f64| v / scale);
    }
    root.present().map_err(err)?;
    Ok(())
}
