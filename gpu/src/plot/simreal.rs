//! Simulated vs real: does the simulator's cost model predict the device?
//!
//! The cost of a point is its simulated work ([`Cost`], `--cost`): the number of K-STEP
//! applications of the canonical run (statements executed, summed over all work-items; see
//! docs/semantics.md, "Cost model"), or the warp instructions it issues with lock-step
//! warps (`ksim gpu bench --warp-size W`, [`interp::warp`]). [`fit`] regresses the measured time on it in log–log
//! space, `log10 t = a + b · log10 steps`, over every point of every kernel, and reports
//! R² and whether, size by size, the kernels are ordered the same way by cost and by time.
//! [`plot`] draws one panel per kernel (time and cost against size, on two y axes) and a
//! scatter of time against cost with the fitted line.

use super::{draw_err, render, time_unit, Cost, Figure, PlotError, OKABE_ITO};
use crate::bench::{BenchPoint, BenchSeries};
use plotters::coord::Shift;
use plotters::prelude::*;
use serde::Serialize;
use std::path::Path;

/// The least-squares fit of measured time on simulated cost, in log–log space.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SimRealFit {
    /// Points used (those with a positive cost and time).
    pub points: usize,
    /// The simulated cost regressed on: `steps` or `warp instructions`.
    pub cost: String,
    /// `log10 t[ns] = intercept + slope · log10 cost`.
    pub intercept: f64,
    pub slope: f64,
    /// Coefficient of determination of the fit (1 = the cost explains all variation).
    pub r2: f64,
    /// Sizes measured for two or more kernels, and among them those where ordering the
    /// kernels by simulated cost gives the same order as by measured time.
    pub sizes_compared: usize,
    pub sizes_ranked_alike: usize,
}

/// The simulated cost of `p` the figure plots (0 when the point has none).
fn cost(p: &BenchPoint, fig: &Figure) -> u64 {
    match fig.cost {
        Cost::Steps => p.sim.steps,
        Cost::WarpInstructions => p.sim.warp.map_or(0, |w| w.instructions),
    }
}

fn time_of(p: &BenchPoint, fig: &Figure) -> f64 {
    p.metric(fig.metric).get(fig.stat)
}

/// Why there is no fit.
#[derive(Clone, Debug, PartialEq)]
pub enum NoFit {
    /// Fewer than two points have a positive simulated cost and time.
    TooFewPoints { cost: String },
    /// Every usable point has the same simulated cost: no line through them has a slope
    /// (least squares would fit rounding noise).
    SameCost {
        cost: String,
        value: u64,
        points: usize,
    },
}

impl std::fmt::Display for NoFit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoFit::TooFewPoints { cost } => write!(
                f,
                "no fit: fewer than two points with a simulated cost ({cost}) and a time above 0"
            ),
            NoFit::SameCost {
                cost,
                value,
                points,
            } => write!(
                f,
                "no fit: all {points} points have the same simulated cost ({value} {cost})"
            ),
        }
    }
}

/// The fit over `series` (see the module documentation), or why there is none: fewer
/// than two usable points, or no spread in cost.
pub fn fit(series: &BenchSeries, fig: &Figure) -> Result<SimRealFit, NoFit> {
    let cost_name = fig.cost.name().to_string();
    let usable: Vec<&BenchPoint> = series
        .points
        .iter()
        .filter(|p| cost(p, fig) > 0 && time_of(p, fig) > 0.0)
        .collect();
    if usable.len() < 2 {
        return Err(NoFit::TooFewPoints { cost: cost_name });
    }
    // Decided on the integer costs: their logarithms' spread may be rounding noise.
    let first = cost(usable[0], fig);
    if usable.iter().all(|p| cost(p, fig) == first) {
        return Err(NoFit::SameCost {
            cost: cost_name,
            value: first,
            points: usable.len(),
        });
    }
    let xy: Vec<(f64, f64)> = usable
        .iter()
        .map(|p| ((cost(p, fig) as f64).log10(), time_of(p, fig).log10()))
        .collect();
    let n = xy.len() as f64;
    let mx = xy.iter().map(|p| p.0).sum::<f64>() / n;
    let my = xy.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = xy.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = xy.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let syy: f64 = xy.iter().map(|p| (p.1 - my).powi(2)).sum();
    let slope = sxy / sxx;
    let intercept = my - slope * mx;
    let sse: f64 = xy
        .iter()
        .map(|p| (p.1 - intercept - slope * p.0).powi(2))
        .sum();
    let r2 = if syy == 0.0 { 1.0 } else { 1.0 - sse / syy };
    let mut sizes: Vec<u64> = series.points.iter().map(|p| p.size).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let (mut compared, mut alike) = (0, 0);
    for s in sizes {
        let at: Vec<&BenchPoint> = series.points.iter().filter(|p| p.size == s).collect();
        if at.len() < 2 {
            continue;
        }
        compared += 1;
        let order = |key: &dyn Fn(&BenchPoint) -> f64| {
            let mut v: Vec<(f64, &str)> = at.iter().map(|p| (key(p), p.kernel.as_str())).collect();
            v.sort_by(|a, b| a.0.total_cmp(&b.0));
            v.into_iter().map(|x| x.1).collect::<Vec<_>>()
        };
        if order(&|p| cost(p, fig) as f64) == order(&|p| time_of(p, fig)) {
            alike += 1;
        }
    }
    Ok(SimRealFit {
        cost: cost_name,
        points: xy.len(),
        intercept,
        slope,
        r2,
        sizes_compared: compared,
        sizes_ranked_alike: alike,
    })
}

impl std::fmt::Display for SimRealFit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "time ∝ {c}^{:.2} (log–log least squares over {} points), R² = {:.3}; \
             kernels ranked alike by simulated {c} and measured time at {} of {} sizes",
            self.slope,
            self.points,
            self.r2,
            self.sizes_ranked_alike,
            self.sizes_compared,
            c = self.cost
        )
    }
}

/// Draws the sim-vs-real figure of `series` to `path` (`.png`, `.svg` or `.pdf`).
pub fn plot(series: &BenchSeries, path: &Path, fig: &Figure) -> Result<(), PlotError> {
    if series.points.is_empty() {
        return Err(PlotError("nothing to plot: no benchmark points".into()));
    }
    if series.points.iter().all(|p| cost(p, fig) == 0) {
        return Err(PlotError(match fig.cost {
            Cost::Steps => {
                "the CSV has no simulated measures (sim_steps): rerun `ksim gpu bench`".into()
            }
            Cost::WarpInstructions => "the CSV has no SIMT cost (sim_warp_instructions): \
                                       rerun `ksim gpu bench --warp-size W`"
                .into(),
        }));
    }
    fits(kernels(series).len(), fig)?;
    render(path, fig, &|root| draw(root, series, fig), &|root| {
        draw(root, series, fig)
    })
}

/// The least size of one panel, `(width, height)` in points: a panel's right axis
/// description ("simulated warp instructions, dashed") runs along its height, at about half
/// an em per character, beside its title, tick labels, x-axis description and margins; its
/// two y-axes' labels take most of its width. Below it neighbouring panels' labels overlap
/// (seen at 9 × 2.6 in with five kernels).
fn panel_size(fig: &Figure) -> (f64, f64) {
    let desc = format!("simulated {}, dashed", fig.cost.name())
        .chars()
        .count();
    (fig.font_pt * 16.0, fig.font_pt * (0.55 * desc as f64 + 5.5))
}

/// Points of the figure's width and of its height below the title.
fn room(fig: &Figure) -> (f64, f64) {
    let pt = |px: u32| px as f64 * 72.0 / fig.dpi;
    let title = if fig.title.as_deref() == Some("") {
        0.0
    } else {
        fig.font_pt * 2.0
    };
    (pt(fig.width_px), pt(fig.height_px) - title)
}

/// Rows and columns of panels for `kernels` kernels and the scatter: up to three columns,
/// as many as the width holds (a one-column figure stacks its panels).
fn grid(kernels: usize, fig: &Figure) -> (usize, usize) {
    let panels = kernels + 1;
    let fit = (room(fig).0 / panel_size(fig).0).floor() as usize;
    let cols = panels.min(fit.clamp(1, 3));
    (panels.div_ceil(cols), cols)
}

/// Refuses a figure whose panels are too small for their axes, with a size that fits.
fn fits(kernels: usize, fig: &Figure) -> Result<(), PlotError> {
    let (rows, cols) = grid(kernels, fig);
    let (need_w, need_h) = panel_size(fig);
    let (width, height) = room(fig);
    let (have_w, have_h) = (width / cols as f64, height / rows as f64);
    if have_h >= need_h && have_w >= need_w {
        return Ok(());
    }
    let inches = |v: f64| (v / 72.0 * 10.0).ceil() / 10.0;
    let title = fig.height_px as f64 * 72.0 / fig.dpi - height;
    Err(PlotError(format!(
        "the figure is too small for {kernels} kernel{}: {rows} x {cols} panels of {:.1} x {:.1} in \
         each, and a panel needs {:.1} x {:.1} in at {} pt; give --size {}x{}in (or a smaller \
         --font-size, or fewer kernels)",
        if kernels == 1 { "" } else { "s" },
        have_w / 72.0,
        have_h / 72.0,
        need_w / 72.0,
        need_h / 72.0,
        fig.font_pt,
        inches((need_w * cols as f64).max(width)),
        inches((need_h * rows as f64 + title).max(height + title)),
    )))
}

fn kernels(series: &BenchSeries) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for p in &series.points {
        if !out.contains(&p.kernel) {
            out.push(p.kernel.clone());
        }
    }
    out
}

fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    series: &BenchSeries,
    fig: &Figure,
) -> Result<(), PlotError>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(draw_err)?;
    let fitted = fit(series, fig);
    let title = fig
        .title
        .clone()
        .unwrap_or_else(|| format!("Simulated cost vs {}", fig.metric.describe()));
    let area = if title.is_empty() {
        root.clone()
    } else {
        root.titled(&title, ("sans-serif", fig.font(fig.font_pt * 1.15)))
            .map_err(draw_err)?
    };
    let names = kernels(series);
    let (rows, cols) = grid(names.len(), fig);
    let cells = area.split_evenly((rows, cols));
    for (i, name) in names.iter().enumerate() {
        let pts: Vec<&BenchPoint> = series.points.iter().filter(|p| &p.kernel == name).collect();
        panel(&cells[i], &pts, i, fig)?;
    }
    scatter(&cells[names.len()], series, &names, fitted.as_ref(), fig)?;
    root.present().map_err(draw_err)?;
    Ok(())
}

/// One kernel: measured time (left axis, the kernel's colour) and simulated steps (right
/// axis, black, dashed) against size.
fn panel<DB: DrawingBackend>(
    cell: &DrawingArea<DB, Shift>,
    pts: &[&BenchPoint],
    index: usize,
    fig: &Figure,
) -> Result<(), PlotError>
where
    DB::ErrorType: 'static,
{
    let color = OKABE_ITO[index % OKABE_ITO.len()];
    let font = fig.font(fig.font_pt);
    let name = fig.label_of(&pts[0].kernel);
    let cell = cell.titled(&name, ("sans-serif", font)).map_err(draw_err)?;
    let (kmin, kmax) = super::size_range(pts);
    let times: Vec<f64> = pts.iter().map(|p| time_of(p, fig)).collect();
    let tmax = times.iter().copied().fold(1.0, f64::max);
    let tmin = times
        .iter()
        .copied()
        .filter(|v| *v > 0.0)
        .fold(tmax, f64::min);
    let tmin = super::log_axis_floor(tmin, tmax);
    let (uname, scale) = time_unit(tmax);
    let smax = pts.iter().map(|p| cost(p, fig)).max().unwrap_or(1).max(1) as f64;
    let smin = pts
        .iter()
        .map(|p| cost(p, fig))
        .filter(|s| *s > 0)
        .min()
        .unwrap_or(1) as f64;
    let mut chart = ChartBuilder::on(&cell)
        .margin(fig.px(4.0))
        .margin_left(fig.px(fig.font_pt))
        .margin_right(fig.px(fig.font_pt))
        .x_label_area_size(fig.px(fig.font_pt * 2.6))
        .y_label_area_size(fig.px(fig.font_pt * 3.6))
        .right_y_label_area_size(fig.px(fig.font_pt * 3.6))
        .build_cartesian_2d(
            kmin..kmax,
            (tmin / scale / 1.3..tmax / scale * 1.3).log_scale(),
        )
        .map_err(draw_err)?
        .set_secondary_coord(kmin..kmax, (smin / 1.3..smax * 1.3).log_scale());
    let every = if kmax - kmin > 8 { 2 } else { 1 };
    chart
        .configure_mesh()
        .x_labels((kmax - kmin + 1) as usize)
        .y_labels(4)
        .x_label_formatter(&|k| {
            if (kmax - k) % every == 0 {
                super::power_of_two(*k)
            } else {
                String::new()
            }
        })
        .y_label_formatter(&|v| super::tick(*v))
        .x_desc(pts[0].param.as_str())
        .y_desc(format!("time ({uname}), solid"))
        .label_style(("sans-serif", font))
        .axis_desc_style(("sans-serif", font))
        .light_line_style(WHITE.mix(0.0))
        .bold_line_style(BLACK.mix(0.1))
        .draw()
        .map_err(draw_err)?;
    chart
        .configure_secondary_axes()
        .y_labels(4)
        .y_label_formatter(&|v| si(*v))
        .y_desc(format!("simulated {}, dashed", fig.cost.name()))
        .label_style(("sans-serif", font))
        .axis_desc_style(("sans-serif", font))
        .draw()
        .map_err(draw_err)?;
    let at = |n: u64| (n.max(1) as f64).log2().round() as i32;
    let stroke = fig.px(1.2);
    let time: Vec<(i32, f64)> = pts
        .iter()
        .map(|p| (at(p.size), time_of(p, fig) / scale))
        .collect();
    chart
        .draw_series(LineSeries::new(time.clone(), color.stroke_width(stroke)))
        .map_err(draw_err)?;
    let mark = fig.px(2.2) as i32;
    chart
        .draw_series(
            time.into_iter()
                .map(|p| EmptyElement::at(p) + super::marker::<DB>(index, mark, color)),
        )
        .map_err(draw_err)?;
    let steps: Vec<(i32, f64)> = pts
        .iter()
        .map(|p| (at(p.size), cost(p, fig) as f64))
        .collect();
    chart
        .draw_secondary_series(DashedLineSeries::new(
            steps,
            fig.px(4.0),
            fig.px(2.5),
            BLACK.stroke_width(stroke),
        ))
        .map_err(draw_err)?;
    Ok(())
}

/// `12k`, `3.4M`: compact step counts.
fn si(v: f64) -> String {
    let (d, s) = if v >= 1e9 {
        (1e9, "G")
    } else if v >= 1e6 {
        (1e6, "M")
    } else if v >= 1e3 {
        (1e3, "k")
    } else {
        (1.0, "")
    };
    format!("{}{s}", super::tick(v / d))
}

/// Measured time against simulated steps, every point, with the log–log fit and R².
fn scatter<DB: DrawingBackend>(
    cell: &DrawingArea<DB, Shift>,
    series: &BenchSeries,
    names: &[String],
    fitted: Result<&SimRealFit, &NoFit>,
    fig: &Figure,
) -> Result<(), PlotError>
where
    DB::ErrorType: 'static,
{
    let font = fig.font(fig.font_pt);
    let caption = match fitted {
        Ok(f) => format!("fit: R² = {:.3}, slope {:.2}", f.r2, f.slope),
        Err(NoFit::TooFewPoints { .. }) => "no fit (too few points)".into(),
        Err(NoFit::SameCost { .. }) => "no fit (all points have the same cost)".into(),
    };
    let cell = cell
        .titled(&caption, ("sans-serif", font))
        .map_err(draw_err)?;
    let pts: Vec<&BenchPoint> = series.points.iter().filter(|p| cost(p, fig) > 0).collect();
    let tmax = pts.iter().map(|p| time_of(p, fig)).fold(1.0, f64::max);
    let tmin = pts
        .iter()
        .map(|p| time_of(p, fig))
        .filter(|v| *v > 0.0)
        .fold(tmax, f64::min);
    let tmin = super::log_axis_floor(tmin, tmax);
    let (uname, scale) = time_unit(tmax);
    let smax = pts.iter().map(|p| cost(p, fig)).max().unwrap_or(1) as f64;
    let smin = pts.iter().map(|p| cost(p, fig)).min().unwrap_or(1) as f64;
    let mut chart = ChartBuilder::on(&cell)
        .margin(fig.px(4.0))
        .margin_right(fig.px(8.0))
        .x_label_area_size(fig.px(fig.font_pt * 2.6))
        .y_label_area_size(fig.px(fig.font_pt * 3.6))
        .build_cartesian_2d(
            (smin / 1.5..smax * 1.5).log_scale(),
            (tmin / scale / 1.5..tmax / scale * 1.5).log_scale(),
        )
        .map_err(draw_err)?;
    chart
        .configure_mesh()
        .x_labels(4)
        .y_labels(5)
        .x_label_formatter(&|v| si(*v))
        .y_label_formatter(&|v| super::tick(*v))
        .x_desc(format!("simulated {}", fig.cost.name()))
        .y_desc(format!("time ({uname})"))
        .label_style(("sans-serif", font))
        .axis_desc_style(("sans-serif", font))
        .light_line_style(WHITE.mix(0.0))
        .bold_line_style(BLACK.mix(0.1))
        .draw()
        .map_err(draw_err)?;
    if let Ok(f) = fitted {
        let line: Vec<(f64, f64)> = [smin / 1.5, smax * 1.5]
            .iter()
            .map(|&s| (s, 10f64.powf(f.intercept + f.slope * s.log10()) / scale))
            .collect();
        chart
            .draw_series(LineSeries::new(
                line,
                BLACK.mix(0.6).stroke_width(fig.px(1.0)),
            ))
            .map_err(draw_err)?;
    }
    let mark = fig.px(2.2) as i32;
    for (i, name) in names.iter().enumerate() {
        let color = OKABE_ITO[i % OKABE_ITO.len()];
        chart
            .draw_series(pts.iter().filter(|p| &p.kernel == name).map(|p| {
                EmptyElement::at((cost(p, fig) as f64, time_of(p, fig) / scale))
                    + super::marker::<DB>(i, mark, color)
            }))
            .map_err(draw_err)?
            .label(fig.label_of(name))
            .legend(move |(x, y)| EmptyElement::at((x, y)) + super::marker::<DB>(i, mark, color));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .label_font(("sans-serif", font))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.4))
        .draw()
        .map_err(draw_err)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::{SimMeasures, Stats, WarpCost};

    fn p(kernel: &str, size: u64, steps: u64, ns: u64) -> BenchPoint {
        BenchPoint {
            kernel: kernel.into(),
            device: "d".into(),
            param: "n".into(),
            size,
            groups: 1,
            local_size: 1,
            launches: 1,
            monoid: "int-add".into(),
            input: String::new(),
            harness: "none".into(),
            check: crate::bench::Check::Ok,
            kernel_ns: Stats::of(&[ns]).unwrap(),
            total_ns: Stats::of(&[ns]).unwrap(),
            sim: SimMeasures {
                threads: 1,
                steps,
                intervals: 1,
                warp: None,
            },
            kernel_samples_ns: vec![ns],
            total_samples_ns: vec![ns],
        }
    }

    #[test]
    fn a_power_law_fits_exactly_and_rankings_are_compared() {
        // t = 5 · steps^1.5 exactly: slope 1.5, R² = 1.
        let mut s = BenchSeries::default();
        for (k, base) in [("a", 10u64), ("b", 40)] {
            for e in 1..=4u32 {
                let steps = base * 4u64.pow(e);
                let t = 5.0 * (steps as f64).powf(1.5);
                s.points.push(p(k, 1 << e, steps, t.round() as u64));
            }
        }
        let f = fit(&s, &Figure::default()).unwrap();
        assert!((f.slope - 1.5).abs() < 1e-3, "{f:?}");
        assert!((f.r2 - 1.0).abs() < 1e-6, "{f:?}");
        assert_eq!((f.sizes_compared, f.sizes_ranked_alike), (4, 4));
        // Swap the times of one size: that size ranks differently, R² drops.
        let (i, j) = (0, 4);
        let ti = s.points[i].kernel_ns;
        s.points[i].kernel_ns = s.points[j].kernel_ns;
        s.points[j].kernel_ns = ti;
        let f = fit(&s, &Figure::default()).unwrap();
        assert_eq!((f.sizes_compared, f.sizes_ranked_alike), (4, 3));
        assert!(f.r2 < 0.99, "{f:?}");
        assert!(matches!(
            fit(&BenchSeries::default(), &Figure::default()),
            Err(NoFit::TooFewPoints { .. })
        ));
    }

    #[test]
    fn identical_costs_have_no_fit() {
        // One measured point copied 100 times, and points of two kernels with equal cost:
        // least squares on the logarithms fitted rounding noise (finding #9).
        let mut s = BenchSeries::default();
        for _ in 0..100 {
            s.points.push(p("a", 1024, 123_457, 98_765));
        }
        let e = fit(&s, &Figure::default()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "no fit: all 100 points have the same simulated cost (123457 steps)"
        );
        s.points = vec![
            p("a", 2, 50, 1000),
            p("b", 2, 50, 3000),
            p("a", 4, 50, 2000),
        ];
        assert!(matches!(
            fit(&s, &Figure::default()),
            Err(NoFit::SameCost { .. })
        ));
        s.points = vec![p("a", 2, 50, 1000)];
        let e = fit(&s, &Figure::default()).unwrap_err();
        assert!(e.to_string().contains("fewer than two points"), "{e}");
    }

    #[test]
    fn the_warp_instruction_cost_is_fitted_when_the_points_have_it() {
        // t = 3 · instructions^0.8, with steps unrelated to time.
        let mut s = BenchSeries::default();
        for e in 1..=5u32 {
            let instructions = 7 * 3u64.pow(e);
            let t = 3.0 * (instructions as f64).powf(0.8);
            let mut point = p("a", 1 << e, 1000 - 100 * e as u64, t.round() as u64);
            point.sim.warp = Some(WarpCost {
                warp_size: 32,
                instructions,
                lane_steps: 32 * instructions,
                divergent_branches: 0,
            });
            s.points.push(point);
        }
        let fig = Figure {
            cost: Cost::WarpInstructions,
            ..Figure::default()
        };
        let f = fit(&s, &fig).unwrap();
        assert!((f.slope - 0.8).abs() < 1e-2, "{f:?}");
        assert!(f.r2 > 0.999, "{f:?}");
        assert!(
            f.to_string().starts_with("time ∝ warp instructions^0.80"),
            "{f}"
        );
        assert!(fit(&s, &Figure::default()).unwrap().slope < 0.0);
        for point in &mut s.points {
            point.sim.warp = None;
        }
        assert!(matches!(fit(&s, &fig), Err(NoFit::TooFewPoints { .. })));
        let dir = tempfile::tempdir().unwrap();
        let e = plot(&s, &dir.path().join("x.svg"), &fig).unwrap_err();
        assert!(e.0.contains("--warp-size"), "{}", e.0);
    }

    #[test]
    fn panels_too_small_for_their_axes_are_refused_with_a_size_that_fits() {
        let at = |w: f64, h: f64, cost| Figure {
            width_px: (w * 100.0) as u32,
            height_px: (h * 100.0) as u32,
            dpi: 100.0,
            cost,
            ..Figure::default()
        };
        // Five kernels at 9 x 2.6 in: two rows of 1.2 in panels, where the axes overlapped.
        let e = fits(5, &at(9.0, 2.6, Cost::Steps)).expect_err("too small");
        assert!(e.0.contains("2 x 3 panels"), "{e}");
        let size =
            e.0.split("--size ")
                .nth(1)
                .expect("a size")
                .split("in")
                .next();
        let (w, h) = size.and_then(|s| s.split_once('x')).expect("WxH");
        let (w, h): (f64, f64) = (w.parse().unwrap(), h.parse().unwrap());
        assert!(
            fits(5, &at(w, h, Cost::Steps)).is_ok(),
            "the suggested {w}x{h}in fits"
        );
        assert!(fits(5, &at(9.0, 5.0, Cost::Steps)).is_ok());
        // Two kernels in one row, as scripts/gpu-figures.sh draws the storage figure.
        assert!(fits(2, &at(7.0, 2.6, Cost::Steps)).is_ok());
        // The warp cost's longer axis description needs more height.
        assert!(fits(5, &at(9.0, 5.0, Cost::WarpInstructions)).is_err());
    }
}
