//! Figures of benchmark series with `plotters`, sized for papers: the size on a log2 axis
//! labelled with powers of two, time on a log (default) or linear axis in the SI unit
//! that suits it, one line per kernel (the chosen statistic) with a band for the spread,
//! the Okabe–Ito colour-blind-safe palette with a marker shape per kernel, and text sizes
//! given in points at the figure's physical size (`--size 3.3x2.2in --dpi 300`).
//!
//! PNG and SVG come from plotters' bitmap and SVG backends; PDF from the SVG through
//! `svg2pdf` (plotters has no PDF backend), with the embedded font subset into the PDF.
//! The SVG's root element carries the physical size (`width="3.3in"`), so it drops into a
//! document at the intended size.
//!
//! Text is drawn with the embedded DejaVu Sans (`assets/DejaVuSans.ttf`, licence in
//! `assets/DejaVuSans-LICENSE`), registered through plotters' `ab_glyph` backend, so
//! plotting needs no fontconfig and no system fonts.

pub mod simreal;

use crate::bench::{BenchPoint, BenchSeries, Metric, Spread, Statistic};
use plotters::coord::Shift;
use plotters::prelude::*;
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

/// The Okabe–Ito palette (Okabe & Ito 2008, "Color Universal Design"), without its
/// yellow (too light on white) and black (kept for text and fits), in an order that keeps
/// the first two lines far apart for every kind of colour vision.
pub const OKABE_ITO: [RGBColor; 6] = [
    RGBColor(0, 114, 178),   // blue
    RGBColor(213, 94, 0),    // vermillion
    RGBColor(0, 158, 115),   // bluish green
    RGBColor(230, 159, 0),   // orange
    RGBColor(204, 121, 167), // reddish purple
    RGBColor(86, 180, 233),  // sky blue
];

/// How a figure looks. Sizes are physical: `width_px / dpi` inches wide, text in points.
#[derive(Clone, Debug)]
pub struct Figure {
    /// `None`: a default naming the metric and the device; `Some("")`: no title.
    pub title: Option<String>,
    pub xlabel: Option<String>,
    pub ylabel: Option<String>,
    pub width_px: u32,
    pub height_px: u32,
    pub dpi: f64,
    /// Size of tick labels, axis labels and legend, in points (the title is 15 % larger).
    pub font_pt: f64,
    pub metric: Metric,
    pub stat: Statistic,
    pub spread: Spread,
    pub log_y: bool,
    /// Legend names by kernel label (the kernel's own name otherwise).
    pub labels: Vec<(String, String)>,
    /// The simulated cost of the sim-vs-real figure ([`simreal`]).
    pub cost: Cost,
}

/// Which simulated cost the sim-vs-real figure sets against device time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Cost {
    /// K-STEP applications: statements executed, summed over the work-items.
    #[default]
    Steps,
    /// Warp instructions issued with lock-step warps (`ksim gpu bench --warp-size W`).
    WarpInstructions,
}

impl Cost {
    /// The cost in words, for axes and the fit.
    pub fn name(self) -> &'static str {
        match self {
            Cost::Steps => "steps",
            Cost::WarpInstructions => "warp instructions",
        }
    }
}

impl Default for Figure {
    /// 6.4 × 4 in at 160 dpi (1024 × 640 pixels), 9 pt text, median with min–max band,
    /// log y axis.
    fn default() -> Self {
        Figure {
            title: None,
            xlabel: None,
            ylabel: None,
            width_px: 1024,
            height_px: 640,
            dpi: 160.0,
            font_pt: 9.0,
            metric: Metric::Kernel,
            stat: Statistic::Median,
            spread: Spread::MinMax,
            log_y: true,
            labels: Vec::new(),
            cost: Cost::Steps,
        }
    }
}

impl Figure {
    /// Pixels per point.
    fn px_per_pt(&self) -> f64 {
        self.dpi / 72.0
    }

    /// The plotters font size (plotters draws a font of size `s` with an em of `s / 1.24`
    /// pixels) for `pt` points.
    fn font(&self, pt: f64) -> f64 {
        // Backends round the size to whole pixels: round up, never below `pt`.
        (pt * self.px_per_pt() * 1.24).ceil()
    }

    /// Pixels for a length given in points (line widths, margins, marker sizes).
    fn px(&self, pt: f64) -> u32 {
        (pt * self.px_per_pt()).round().max(1.0) as u32
    }

    /// The legend name of a kernel label.
    pub fn label_of(&self, kernel: &str) -> String {
        self.labels
            .iter()
            .find(|(k, _)| k == kernel)
            .map_or_else(|| kernel.to_string(), |(_, n)| n.clone())
    }
}

/// Parses a physical size `WxHin` (or `WxHcm`, `WxHmm`) into inches.
pub fn parse_size(s: &str) -> Result<(f64, f64), String> {
    let s = s.trim();
    let (num, per_inch) = if let Some(x) = s.strip_suffix("in") {
        (x, 1.0)
    } else if let Some(x) = s.strip_suffix("cm") {
        (x, 2.54)
    } else if let Some(x) = s.strip_suffix("mm") {
        (x, 25.4)
    } else {
        return Err(format!(
            "`{s}`: expected WIDTHxHEIGHT with a unit, e.g. 3.3x2.2in or 8x5cm"
        ));
    };
    let (w, h) = num
        .split_once(['x', 'X', '×'])
        .ok_or_else(|| format!("`{s}`: expected WIDTHxHEIGHT, e.g. 3.3x2.2in"))?;
    let p = |v: &str| {
        v.trim()
            .parse::<f64>()
            .ok()
            .filter(|v| *v > 0.0 && v.is_finite())
            .ok_or_else(|| format!("`{s}`: `{v}` is not a positive length"))
    };
    Ok((p(w)? / per_inch, p(h)? / per_inch))
}

/// Why a figure could not be drawn.
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
        PlotError(format!("cannot write the figure: {e}"))
    }
}

/// The image format of a figure file, from its extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlotFormat {
    Png,
    Svg,
    Pdf,
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
        "pdf" => Ok(PlotFormat::Pdf),
        _ => Err(PlotError(format!(
            "cannot plot to {}: the file name must end in .png, .svg or .pdf",
            path.display()
        ))),
    }
}

/// A drawing on the SVG backend (also the source of a PDF) and on the bitmap backend.
type SvgDraw<'f> = &'f dyn for<'b> Fn(DrawingArea<SVGBackend<'b>, Shift>) -> Result<(), PlotError>;
type PngDraw<'f> =
    &'f dyn for<'b> Fn(DrawingArea<BitMapBackend<'b>, Shift>) -> Result<(), PlotError>;

/// Draws with `draw` on a backend for `path`'s format and writes the file atomically: a
/// reader never sees half a picture and a failed drawing leaves the old file in place.
pub(crate) fn render(
    path: &Path,
    fig: &Figure,
    draw: SvgDraw<'_>,
    draw_png: PngDraw<'_>,
) -> Result<(), PlotError> {
    let format = plot_format(path)?;
    register_fonts();
    let size = (fig.width_px, fig.height_px);
    let io = |e: std::io::Error| PlotError(format!("cannot write `{}`: {e}", path.display()));
    match format {
        PlotFormat::Png => files::write_atomic_via(path, ".png", |tmp| {
            draw_png(BitMapBackend::new(tmp, size).into_drawing_area())
        }),
        PlotFormat::Svg | PlotFormat::Pdf => {
            let mut svg = String::new();
            draw(SVGBackend::with_string(&mut svg, size).into_drawing_area())?;
            let svg = physical_size(&svg, fig);
            let bytes = if format == PlotFormat::Pdf {
                svg_to_pdf(&svg, fig)?
            } else {
                svg.into_bytes()
            };
            files::write_atomic(path, &bytes).map_err(io)
        }
    }
}

/// Gives the SVG's root element its physical size in inches (the view box keeps the
/// pixel coordinates).
fn physical_size(svg: &str, fig: &Figure) -> String {
    let from = format!(
        "<svg width=\"{}\" height=\"{}\"",
        fig.width_px, fig.height_px
    );
    let to = format!(
        "<svg width=\"{:.3}in\" height=\"{:.3}in\"",
        fig.width_px as f64 / fig.dpi,
        fig.height_px as f64 / fig.dpi
    );
    svg.replacen(&from, &to, 1)
}

/// Converts the SVG to a one-page PDF of the figure's physical size.
fn svg_to_pdf(svg: &str, fig: &Figure) -> Result<Vec<u8>, PlotError> {
    use svg2pdf::usvg;
    let mut db = usvg::fontdb::Database::new();
    db.load_font_data(DEJAVU_SANS.to_vec());
    db.set_sans_serif_family("DejaVu Sans");
    let opts = usvg::Options {
        fontdb: std::sync::Arc::new(db),
        font_family: "DejaVu Sans".into(),
        ..Default::default()
    };
    let tree = usvg::Tree::from_str(svg, &opts)
        .map_err(|e| PlotError(format!("cannot convert the figure to PDF: {e}")))?;
    // The tree has the physical size (in CSS pixels, 96 per inch): 96 dpi keeps it.
    let _ = fig;
    svg2pdf::to_pdf(
        &tree,
        svg2pdf::ConversionOptions::default(),
        svg2pdf::PageOptions { dpi: 96.0 },
    )
    .map_err(|e| PlotError(format!("cannot convert the figure to PDF: {e}")))
}

/// The SI time unit (name, nanoseconds per unit) for values up to `max_ns`.
pub fn time_unit(max_ns: f64) -> (&'static str, f64) {
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

/// A tick value without trailing zeros: `1`, `2.5`, `0.03`, `1000`.
pub fn tick(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let digits = (3 - v.abs().log10().floor() as i32 - 1).clamp(0, 6) as usize;
    let s = format!("{v:.digits$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// `2ᵏ` with superscript digits (powers of two for doubling sizes).
pub fn power_of_two(k: i32) -> String {
    const SUP: [char; 10] = ['⁰', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹'];
    let mut s = String::from("2");
    if k < 0 {
        s.push('⁻');
    }
    for d in k.unsigned_abs().to_string().bytes() {
        s.push(SUP[(d - b'0') as usize]);
    }
    s
}

/// One point of a drawn line: size, statistic, and the band's (low, high), in ns.
pub type LinePoint = (u64, f64, Option<(f64, f64)>);

/// One drawn line.
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    pub kernel: String,
    pub points: Vec<LinePoint>,
}

/// One line per kernel (per kernel and device when the points come from several
/// devices), in first-seen order, sorted by size.
pub fn lines(points: &[&BenchPoint], fig: &Figure) -> Vec<Line> {
    let mut devices: Vec<&str> = points.iter().map(|p| p.device.as_str()).collect();
    devices.sort_unstable();
    devices.dedup();
    let many = devices.len() > 1;
    let mut out: Vec<Line> = Vec::new();
    for p in points {
        let name = if many {
            format!("{} ({})", fig.label_of(&p.kernel), p.device)
        } else {
            fig.label_of(&p.kernel)
        };
        let s = p.metric(fig.metric);
        let entry = (p.size, s.get(fig.stat), fig.spread.band(s));
        match out.iter_mut().find(|l| l.kernel == name) {
            Some(l) => l.points.push(entry),
            None => out.push(Line {
                kernel: name,
                points: vec![entry],
            }),
        }
    }
    for l in &mut out {
        l.points.sort_by_key(|p| p.0);
    }
    out
}

/// The most decades a logarithmic time axis spans: the axis' ticks are made decade by
/// decade, and a span such as 1e-300 to 1e300 ns made them endless. Values further below
/// the largest are drawn off the axis.
const MAX_DECADES: i32 = 12;

/// The lower end of a logarithmic axis from `min` to `max` (both positive and finite).
pub(crate) fn log_axis_floor(min: f64, max: f64) -> f64 {
    min.max(max / 10f64.powi(MAX_DECADES))
}

/// The log2 range of the sizes, widened to at least two ticks.
pub(crate) fn size_range(points: &[&BenchPoint]) -> (i32, i32) {
    let k = |n: u64| (n.max(1) as f64).log2();
    let lo = points
        .iter()
        .map(|p| k(p.size))
        .fold(f64::INFINITY, f64::min)
        .floor() as i32;
    let hi = points
        .iter()
        .map(|p| k(p.size))
        .fold(f64::NEG_INFINITY, f64::max)
        .ceil() as i32;
    if lo == hi {
        (lo - 1, hi + 1)
    } else {
        (lo, hi)
    }
}

/// A marker of shape `i` (circle, triangle, square, cross) centred on the point it is
/// added to.
pub(crate) fn marker<DB: DrawingBackend>(
    i: usize,
    r: i32,
    color: RGBColor,
) -> DynElement<'static, DB, (i32, i32)> {
    match i % 4 {
        0 => Circle::new((0, 0), r, color.filled()).into_dyn(),
        1 => TriangleMarker::new((0, 0), r + 1, color.filled()).into_dyn(),
        2 => Rectangle::new([(-r, -r), (r, r)], color.filled()).into_dyn(),
        _ => Cross::new((0, 0), r, color.stroke_width(2)).into_dyn(),
    }
}

/// Draws `series` to `path` (`.png`, `.svg` or `.pdf`): time against size.
pub fn plot(series: &BenchSeries, path: &Path, fig: &Figure) -> Result<(), PlotError> {
    if series.points.is_empty() {
        return Err(PlotError("nothing to plot: no benchmark points".into()));
    }
    render(path, fig, &|root| draw_time(root, series, fig), &|root| {
        draw_time(root, series, fig)
    })
}

pub(crate) fn draw_err<E: std::error::Error + Send + Sync>(
    e: DrawingAreaErrorKind<E>,
) -> PlotError {
    PlotError(format!("cannot draw the figure: {e}"))
}

/// The default title: metric and device(s).
pub(crate) fn default_title(series: &BenchSeries, fig: &Figure) -> String {
    let mut devices: Vec<&str> = series.points.iter().map(|p| p.device.as_str()).collect();
    devices.dedup();
    let what = fig.metric.describe();
    let what = what[..1].to_uppercase() + &what[1..];
    format!("{what} on {}", devices.join(", "))
}

fn draw_time<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    series: &BenchSeries,
    fig: &Figure,
) -> Result<(), PlotError>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(draw_err)?;
    let title = fig
        .title
        .clone()
        .unwrap_or_else(|| default_title(series, fig));
    let area = if title.is_empty() {
        root.clone()
    } else {
        root.titled(&title, ("sans-serif", fig.font(fig.font_pt * 1.15)))
            .map_err(draw_err)?
    };
    let points: Vec<&BenchPoint> = series.points.iter().collect();
    time_chart(&area, &points, fig, true)?;
    root.present().map_err(draw_err)?;
    Ok(())
}

/// A time-against-size chart of `points` on `area` (also a panel of the sim-vs-real
/// figure).
pub(crate) fn time_chart<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    points: &[&BenchPoint],
    fig: &Figure,
    legend: bool,
) -> Result<(), PlotError>
where
    DB::ErrorType: 'static,
{
    let all = lines(points, fig);
    let (kmin, kmax) = size_range(points);
    let vals = all
        .iter()
        .flat_map(|l| l.points.iter())
        .flat_map(|&(_, v, b)| [Some(v), b.map(|b| b.0), b.map(|b| b.1)])
        .flatten()
        .filter(|v| *v > 0.0);
    let (ymin, ymax) = vals.fold((f64::INFINITY, 0.0f64), |(a, b), v| (a.min(v), b.max(v)));
    let ymin = if ymin.is_finite() { ymin } else { 1.0 };
    let ymax = ymax.max(ymin * 1.01);
    let ymin = log_axis_floor(ymin, ymax);
    let (uname, scale) = time_unit(ymax);
    let param = points.first().map_or("size", |p| p.param.as_str());
    let xlabel = fig.xlabel.clone().unwrap_or_else(|| param.to_string());
    let ylabel = fig
        .ylabel
        .clone()
        .unwrap_or_else(|| format!("{}, {} ({uname})", fig.metric.describe(), fig.stat));
    let font = fig.font(fig.font_pt);
    let mut builder = ChartBuilder::on(area);
    builder
        .margin(fig.px(6.0))
        .margin_right(fig.px(10.0))
        .x_label_area_size(fig.px(fig.font_pt * 2.8))
        .y_label_area_size(fig.px(fig.font_pt * 4.2));
    let every = if kmax - kmin > 12 { 2 } else { 1 };
    let x_labels = ((kmax - kmin) / every + 1) as usize;
    let stroke = fig.px(1.2);
    let mark = fig.px(2.2) as i32;

    macro_rules! body {
        ($chart:ident, $y:expr) => {{
            $chart
                .configure_mesh()
                .x_labels(x_labels)
                .y_labels(6)
                .x_label_formatter(&|k| {
                    if (kmax - k) % every == 0 {
                        power_of_two(*k)
                    } else {
                        String::new()
                    }
                })
                .y_label_formatter(&|v| tick(*v))
                .x_desc(xlabel.as_str())
                .y_desc(ylabel.as_str())
                .label_style(("sans-serif", font))
                .axis_desc_style(("sans-serif", font))
                .light_line_style(WHITE.mix(0.0))
                .bold_line_style(BLACK.mix(0.12))
                .draw()
                .map_err(draw_err)?;
            for (i, l) in all.iter().enumerate() {
                let color = OKABE_ITO[i % OKABE_ITO.len()];
                let at = |n: u64| (n.max(1) as f64).log2().round() as i32;
                if l.points.iter().all(|p| p.2.is_some()) && l.points.len() > 1 {
                    let mut band: Vec<(i32, f64)> = l
                        .points
                        .iter()
                        .map(|p| (at(p.0), $y(p.2.unwrap().1)))
                        .collect();
                    band.extend(l.points.iter().rev().map(|p| (at(p.0), $y(p.2.unwrap().0))));
                    $chart
                        .draw_series(std::iter::once(Polygon::new(band, color.mix(0.2).filled())))
                        .map_err(draw_err)?;
                } else {
                    for p in &l.points {
                        if let Some((lo, hi)) = p.2 {
                            $chart
                                .draw_series(std::iter::once(PathElement::new(
                                    vec![(at(p.0), $y(lo)), (at(p.0), $y(hi))],
                                    color.stroke_width(stroke),
                                )))
                                .map_err(draw_err)?;
                        }
                    }
                }
                let pts: Vec<(i32, f64)> = l.points.iter().map(|p| (at(p.0), $y(p.1))).collect();
                let s = $chart
                    .draw_series(LineSeries::new(pts.clone(), color.stroke_width(stroke)))
                    .map_err(draw_err)?;
                if legend {
                    let r = mark;
                    s.label(l.kernel.clone()).legend(move |(x, y)| {
                        EmptyElement::at((x, y))
                            + PathElement::new(
                                vec![(-2 * r, 0), (2 * r, 0)],
                                color.stroke_width(stroke),
                            )
                            + marker::<DB>(i, r, color)
                    });
                }
                $chart
                    .draw_series(
                        pts.into_iter()
                            .map(|p| EmptyElement::at(p) + marker::<DB>(i, mark, color)),
                    )
                    .map_err(draw_err)?;
            }
            if legend {
                $chart
                    .configure_series_labels()
                    .position(SeriesLabelPosition::UpperLeft)
                    .label_font(("sans-serif", font))
                    .legend_area_size(fig.px(fig.font_pt * 2.0) as i32)
                    .background_style(WHITE.mix(0.85))
                    .border_style(BLACK.mix(0.4))
                    .draw()
                    .map_err(draw_err)?;
            }
        }};
    }

    if fig.log_y {
        let lo = ymin / scale / 1.3;
        let hi = ymax / scale * 1.3;
        let mut chart = builder
            .build_cartesian_2d(kmin..kmax, (lo..hi).log_scale())
            .map_err(draw_err)?;
        body!(chart, |v: f64| (v / scale).max(lo));
    } else {
        let hi = ymax / scale * 1.1;
        let mut chart = builder
            .build_cartesian_2d(kmin..kmax, 0.0..hi)
            .map_err(draw_err)?;
        body!(chart, |v: f64| v / scale);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_and_units() {
        assert_eq!(power_of_two(10), "2¹⁰");
        assert_eq!(power_of_two(1), "2¹");
        assert_eq!(tick(1.0), "1");
        assert_eq!(tick(10.0), "10");
        assert_eq!(tick(2.5), "2.5");
        assert_eq!(tick(0.03), "0.03");
        assert_eq!(tick(1000.0), "1000");
        assert_eq!(time_unit(5e5), ("µs", 1e3));
        assert_eq!(time_unit(2e9).0, "s");
        assert_eq!(parse_size("3.3x2.2in").unwrap(), (3.3, 2.2));
        let (w, _) = parse_size("8.89x5cm").unwrap();
        assert!((w - 3.5).abs() < 1e-9);
        assert!(parse_size("3x2").is_err());
        assert!(parse_size("0x2in").is_err());
    }
}
