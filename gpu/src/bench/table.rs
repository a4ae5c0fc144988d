//! The terminal view of a benchmark series: one line per size, one column per kernel with
//! the chosen statistic and the min–max range, the ratio of the first two kernels, and
//! the points left out with why.

use super::{BenchSeries, Metric, Statistic};
use std::fmt::Write;

/// Kernel labels in the order they first appear.
pub fn kernels(series: &BenchSeries) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for p in &series.points {
        if !out.contains(&p.kernel) {
            out.push(p.kernel.clone());
        }
    }
    out
}

/// Formats `ns` in µs with 3 significant digits at least (`0.512`, `12.3`, `1234`).
fn micros(ns: f64) -> String {
    let us = ns / 1e3;
    if us >= 100.0 {
        format!("{us:.0}")
    } else if us >= 10.0 {
        format!("{us:.1}")
    } else if us >= 1.0 {
        format!("{us:.2}")
    } else {
        format!("{us:.3}")
    }
}

/// The table (see the module documentation).
pub fn render(series: &BenchSeries, metric: Metric, stat: Statistic) -> String {
    let mut o = String::new();
    let names = kernels(series);
    if names.is_empty() {
        o.push_str("no point was timed\n");
        left_out(series, &mut o);
        return o;
    }
    let param = series
        .points
        .first()
        .map_or("size", |p| p.param.as_str())
        .to_string();
    let runs = series
        .points
        .first()
        .map_or(0, |p| p.kernel_samples_ns.len());
    let _ = writeln!(
        o,
        "{} in µs: {stat} [min–max] of {runs} run(s) after {} warm-up(s); {}",
        metric.describe(),
        series.meta.warmup,
        if series.meta.timed.contains("--include-harness") {
            "harness included"
        } else {
            "ksim's harness left out of the timed kernel"
        }
    );
    let width = 26;
    let _ = write!(o, "{param:>10}");
    for n in &names {
        let _ = write!(o, " {n:>width$}");
    }
    let ratio = names.len() == 2;
    if ratio {
        let _ = write!(o, " {:>10}", "ratio");
    }
    o.push('\n');
    let mut sizes: Vec<u64> = series.points.iter().map(|p| p.size).collect();
    sizes.sort_unstable();
    sizes.dedup();
    for s in sizes {
        let _ = write!(o, "{s:>10}");
        let mut vals = Vec::new();
        for n in &names {
            match series.points.iter().find(|p| p.size == s && &p.kernel == n) {
                Some(p) => {
                    let st = p.metric(metric);
                    let mark = match p.check {
                        super::Check::Ok => "",
                        super::Check::Race => " (race)",
                        super::Check::Mismatch => " (mismatch)",
                    };
                    let cell = format!(
                        "{} [{}–{}]{mark}",
                        micros(st.get(stat)),
                        micros(st.min),
                        micros(st.max)
                    );
                    let _ = write!(o, " {cell:>width$}");
                    vals.push(Some(st.get(stat)));
                }
                None => {
                    let _ = write!(o, " {:>width$}", "—");
                    vals.push(None);
                }
            }
        }
        if ratio {
            match (vals[0], vals[1]) {
                (Some(a), Some(b)) if b > 0.0 => {
                    let _ = write!(o, " {:>10.2}", a / b);
                }
                _ => {
                    let _ = write!(o, " {:>10}", "—");
                }
            }
        }
        o.push('\n');
    }
    if ratio {
        let _ = writeln!(o, "ratio = {} / {} ({stat})", names[0], names[1]);
    }
    left_out(series, &mut o);
    o
}

fn left_out(series: &BenchSeries, o: &mut String) {
    if !series.left_out.is_empty() {
        let _ = writeln!(o, "left out ({}):", series.left_out.len());
        for l in &series.left_out {
            let _ = writeln!(o, "  {} {}={}: {}", l.kernel, l.param, l.size, l.reason);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::csv_io::tests::point;
    use super::super::{BenchSeries, LeftOut};
    use super::*;

    #[test]
    fn the_table_names_the_statistic_and_gives_the_ratio() {
        let series = BenchSeries {
            points: vec![
                point("a", 2, &[1000, 2000, 9000]),
                point("b", 2, &[4000, 4000, 4000]),
                point("a", 4, &[3000]),
            ],
            left_out: vec![LeftOut {
                kernel: "b".into(),
                param: "n".into(),
                size: 4,
                reason: "the simulator found a data race".into(),
            }],
            ..Default::default()
        };
        let t = render(&series, Metric::Kernel, Statistic::Median);
        assert!(
            t.contains("kernel time in µs: median [min–max] of 3 run(s)"),
            "{t}"
        );
        assert!(t.contains("2.00 [1.00–9.00]"), "{t}");
        assert!(t.contains("0.50"), "median ratio 2 / 4: {t}");
        assert!(t.contains("b n=4: the simulator found a data race"), "{t}");
        let t = render(&series, Metric::Kernel, Statistic::Mean);
        assert!(
            t.contains("4.00 [1.00–9.00]"),
            "the mean of 1, 2, 9 µs: {t}"
        );
    }
}
