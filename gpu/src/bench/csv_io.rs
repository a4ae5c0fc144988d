//! A benchmark series as files: a CSV with one row per (kernel, size) point, written and
//! read through the `csv` crate, and a JSON sidecar (`NAME.meta.json` beside `NAME.csv`)
//! with where and how it was measured ([`BenchMeta`]). Both are written atomically (a
//! temporary file in the same folder, then a rename), so an interrupted benchmark never
//! leaves a truncated file.
//!
//! Columns: `kernel, device, param, size, groups, local_size, launches, monoid, input,
//! harness, check, repeat`, then for the kernel time (profiling events) and the total time
//! (host clock, transfers included) `*_median_ns, *_mean_ns, *_min_ns, *_max_ns, *_q1_ns,
//! *_q3_ns`, then the simulator's measures `sim_threads, sim_steps, sim_intervals`, the
//! SIMT cost with `--warp-size W` (empty without) `sim_warp_size, sim_warp_instructions,
//! sim_lane_steps, sim_divergent_branches`, then every timed run: `kernel_samples_ns`, `total_samples_ns` (space-separated). Readers find
//! columns by name, so columns may be added later.

use super::{BenchMeta, BenchPoint, BenchSeries, Check, SimMeasures, Stats, WarpCost};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::{Path, PathBuf};

/// A CSV (or its sidecar) that cannot be read or written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CsvError(pub String);

impl fmt::Display for CsvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for CsvError {}

/// One CSV row: a [`BenchPoint`] flattened (the `csv` crate writes flat records only).
#[derive(Debug, Serialize, Deserialize)]
struct Row {
    kernel: String,
    device: String,
    param: String,
    size: u64,
    groups: usize,
    local_size: usize,
    launches: usize,
    monoid: String,
    input: String,
    harness: String,
    check: Check,
    repeat: usize,
    kernel_median_ns: f64,
    kernel_mean_ns: f64,
    kernel_min_ns: f64,
    kernel_max_ns: f64,
    kernel_q1_ns: f64,
    kernel_q3_ns: f64,
    total_median_ns: f64,
    total_mean_ns: f64,
    total_min_ns: f64,
    total_max_ns: f64,
    total_q1_ns: f64,
    total_q3_ns: f64,
    sim_threads: u64,
    sim_steps: u64,
    sim_intervals: u64,
    // Absent from CSVs written before `--warp-size`, empty without it.
    #[serde(default)]
    sim_warp_size: Option<usize>,
    #[serde(default)]
    sim_warp_instructions: Option<u64>,
    #[serde(default)]
    sim_lane_steps: Option<u64>,
    #[serde(default)]
    sim_divergent_branches: Option<u64>,
    kernel_samples_ns: String,
    total_samples_ns: String,
}

fn join(v: &[u64]) -> String {
    v.iter().map(u64::to_string).collect::<Vec<_>>().join(" ")
}

fn split(s: &str, what: &str, line: u64) -> Result<Vec<u64>, CsvError> {
    s.split_whitespace()
        .map(|x| {
            x.parse().map_err(|_| {
                CsvError(format!(
                    "line {line}: `{x}` in {what} is not a number of ns"
                ))
            })
        })
        .collect()
}

impl From<&BenchPoint> for Row {
    fn from(p: &BenchPoint) -> Row {
        let (k, t) = (&p.kernel_ns, &p.total_ns);
        Row {
            kernel: p.kernel.clone(),
            device: p.device.clone(),
            param: p.param.clone(),
            size: p.size,
            groups: p.groups,
            local_size: p.local_size,
            launches: p.launches,
            monoid: p.monoid.clone(),
            input: p.input.clone(),
            harness: p.harness.clone(),
            check: p.check,
            repeat: p.kernel_samples_ns.len(),
            kernel_median_ns: k.median,
            kernel_mean_ns: k.mean,
            kernel_min_ns: k.min,
            kernel_max_ns: k.max,
            kernel_q1_ns: k.q1,
            kernel_q3_ns: k.q3,
            total_median_ns: t.median,
            total_mean_ns: t.mean,
            total_min_ns: t.min,
            total_max_ns: t.max,
            total_q1_ns: t.q1,
            total_q3_ns: t.q3,
            sim_threads: p.sim.threads,
            sim_steps: p.sim.steps,
            sim_intervals: p.sim.intervals,
            sim_warp_size: p.sim.warp.map(|w| w.warp_size),
            sim_warp_instructions: p.sim.warp.map(|w| w.instructions),
            sim_lane_steps: p.sim.warp.map(|w| w.lane_steps),
            sim_divergent_branches: p.sim.warp.map(|w| w.divergent_branches),
            kernel_samples_ns: join(&p.kernel_samples_ns),
            total_samples_ns: join(&p.total_samples_ns),
        }
    }
}

impl Row {
    fn into_point(self, line: u64) -> Result<BenchPoint, CsvError> {
        let times = [
            ("kernel_median_ns", self.kernel_median_ns),
            ("kernel_mean_ns", self.kernel_mean_ns),
            ("kernel_min_ns", self.kernel_min_ns),
            ("kernel_max_ns", self.kernel_max_ns),
            ("kernel_q1_ns", self.kernel_q1_ns),
            ("kernel_q3_ns", self.kernel_q3_ns),
            ("total_median_ns", self.total_median_ns),
            ("total_mean_ns", self.total_mean_ns),
            ("total_min_ns", self.total_min_ns),
            ("total_max_ns", self.total_max_ns),
            ("total_q1_ns", self.total_q1_ns),
            ("total_q3_ns", self.total_q3_ns),
        ];
        // `gpu bench` measures whole nanoseconds in a u64: anything beyond is not a time.
        let max = u64::MAX as f64;
        if let Some((column, v)) = times.iter().find(|(_, v)| !v.is_finite() || v.abs() > max) {
            return Err(CsvError(format!(
                "line {line}: {column} is {v:e}: a measured time must be a finite number of \
                 nanoseconds, at most {max:e}"
            )));
        }
        Ok(BenchPoint {
            kernel_samples_ns: split(&self.kernel_samples_ns, "kernel_samples_ns", line)?,
            total_samples_ns: split(&self.total_samples_ns, "total_samples_ns", line)?,
            kernel: self.kernel,
            device: self.device,
            param: self.param,
            size: self.size,
            groups: self.groups,
            local_size: self.local_size,
            launches: self.launches,
            monoid: self.monoid,
            input: self.input,
            harness: self.harness,
            check: self.check,
            kernel_ns: Stats {
                median: self.kernel_median_ns,
                mean: self.kernel_mean_ns,
                min: self.kernel_min_ns,
                max: self.kernel_max_ns,
                q1: self.kernel_q1_ns,
                q3: self.kernel_q3_ns,
            },
            total_ns: Stats {
                median: self.total_median_ns,
                mean: self.total_mean_ns,
                min: self.total_min_ns,
                max: self.total_max_ns,
                q1: self.total_q1_ns,
                q3: self.total_q3_ns,
            },
            sim: SimMeasures {
                threads: self.sim_threads,
                steps: self.sim_steps,
                intervals: self.sim_intervals,
                warp: match (
                    self.sim_warp_size,
                    self.sim_warp_instructions,
                    self.sim_lane_steps,
                    self.sim_divergent_branches,
                ) {
                    (Some(warp_size), Some(instructions), Some(lane_steps), Some(divergent)) => {
                        Some(WarpCost {
                            warp_size,
                            instructions,
                            lane_steps,
                            divergent_branches: divergent,
                        })
                    }
                    _ => None,
                },
            },
        })
    }
}

/// The CSV text of `points`, header included.
pub fn to_csv(points: &[BenchPoint]) -> Result<String, CsvError> {
    let mut w = csv::Writer::from_writer(Vec::new());
    for p in points {
        w.serialize(Row::from(p))
            .map_err(|e| CsvError(format!("cannot write the CSV: {e}")))?;
    }
    let bytes = w
        .into_inner()
        .map_err(|e| CsvError(format!("cannot write the CSV: {e}")))?;
    String::from_utf8(bytes).map_err(|e| CsvError(e.to_string()))
}

/// Parses CSV text written by [`to_csv`].
pub fn parse_csv(text: &str) -> Result<Vec<BenchPoint>, CsvError> {
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let mut points = Vec::new();
    for rec in r.deserialize::<Row>() {
        let row = rec.map_err(|e| {
            CsvError(format!(
                "not a CSV written by `ksim gpu bench`: {e} (columns: {})",
                HEADER
            ))
        })?;
        let line = points.len() as u64 + 2;
        points.push(row.into_point(line)?);
    }
    if points.is_empty() {
        return Err(CsvError(
            "the CSV has no benchmark rows (expected a CSV written by `ksim gpu bench`)".into(),
        ));
    }
    Ok(points)
}

/// The header line, for error messages and documentation.
pub const HEADER: &str = "kernel,device,param,size,groups,local_size,launches,monoid,input,\
harness,check,repeat,kernel_{median,mean,min,max,q1,q3}_ns,total_{...}_ns,sim_threads,\
sim_steps,sim_intervals,sim_warp_size,sim_warp_instructions,sim_lane_steps,\
sim_divergent_branches,kernel_samples_ns,total_samples_ns";

/// The sidecar of a CSV: `NAME.meta.json` for `NAME.csv`.
pub fn meta_path(csv: &Path) -> PathBuf {
    csv.with_extension("meta.json")
}

/// Writes the series' points to `path` and its metadata to [`meta_path`], atomically;
/// returns the sidecar's path. A CSV written in place (a FIFO, `/dev/stdout`) has no
/// sidecar: there is no file to put it beside.
pub fn write_csv(series: &BenchSeries, path: &Path) -> Result<Option<PathBuf>, CsvError> {
    let io = |p: &Path| {
        let p = p.display().to_string();
        move |e: std::io::Error| CsvError(format!("cannot write `{p}`: {e}"))
    };
    files::write_atomic(path, to_csv(&series.points)?.as_bytes()).map_err(io(path))?;
    if files::writes_in_place(path) {
        return Ok(None);
    }
    let meta = serde_json::to_string_pretty(&series.meta).map_err(|e| CsvError(e.to_string()))?;
    let mp = meta_path(path);
    files::write_atomic(&mp, format!("{meta}\n").as_bytes()).map_err(io(&mp))?;
    Ok(Some(mp))
}

/// Reads a CSV written by [`write_csv`], with its sidecar when there is one (a CSV
/// without it reads with empty metadata).
pub fn read_csv(path: &Path) -> Result<BenchSeries, CsvError> {
    let text =
        files::read_to_string(path, files::TEXT_LIMIT).map_err(|e| CsvError(e.to_string()))?;
    let points = parse_csv(&text).map_err(|e| CsvError(format!("{}: {}", path.display(), e.0)))?;
    let mp = meta_path(path);
    let meta = if mp.exists() {
        let t =
            files::read_to_string(&mp, files::TEXT_LIMIT).map_err(|e| CsvError(e.to_string()))?;
        serde_json::from_str(&t).map_err(|e| {
            CsvError(format!(
                "{}: not ksim's benchmark metadata: {e}",
                mp.display()
            ))
        })?
    } else {
        BenchMeta::default()
    };
    Ok(BenchSeries {
        meta,
        points,
        left_out: Vec::new(),
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A point with the given kernel samples (total = kernel + 1000 ns).
    pub(crate) fn point(kernel: &str, size: u64, samples: &[u64]) -> BenchPoint {
        let total: Vec<u64> = samples.iter().map(|s| s + 1000).collect();
        BenchPoint {
            kernel: kernel.into(),
            device: "cpu, \"pthread\"".into(),
            param: "n".into(),
            size,
            groups: 1,
            local_size: size as usize / 2,
            launches: 1,
            monoid: "int-add".into(),
            input: "in=random:1".into(),
            harness: "copy-in in; copy-out out".into(),
            check: Check::Ok,
            kernel_ns: Stats::of(samples).unwrap(),
            total_ns: Stats::of(&total).unwrap(),
            sim: SimMeasures {
                threads: size / 2,
                steps: size * 7,
                intervals: 3,
                warp: None,
            },
            kernel_samples_ns: samples.to_vec(),
            total_samples_ns: total,
        }
    }

    #[test]
    fn csv_and_sidecar_round_trip() {
        let series = BenchSeries {
            meta: BenchMeta {
                device: "PoCL CPU".into(),
                command_line: "ksim gpu bench x.ksim -D n=2..4".into(),
                git_hash: "abc123".into(),
                ..Default::default()
            },
            points: vec![
                point("blelloch_tree1d", 2, &[1234, 1000, 5000]),
                point("k,2", 4, &[7]),
            ],
            left_out: Vec::new(),
        };
        let mut series = series;
        series.points[1].sim.warp = Some(WarpCost {
            warp_size: 32,
            instructions: 9,
            lane_steps: 250,
            divergent_branches: 1,
        });
        let text = to_csv(&series.points).unwrap();
        assert!(text.starts_with("kernel,device,param,size,groups,local_size,launches,monoid"));
        assert!(text.contains("\"k,2\""), "quoted by the csv crate: {text}");
        assert_eq!(parse_csv(&text).unwrap(), series.points);
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("b.csv");
        write_csv(&series, &p).unwrap();
        assert_eq!(read_csv(&p).unwrap(), series);
        assert!(dir.path().join("b.meta.json").exists());
        // No temporary file is left behind.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    }

    #[test]
    fn a_csv_from_before_the_warp_columns_reads_without_a_simt_cost() {
        let text = to_csv(&[point("k", 2, &[5])]).unwrap();
        let mut r = csv::Reader::from_reader(text.as_bytes());
        let header = r.headers().unwrap().clone();
        let keep: Vec<usize> = (0..header.len())
            .filter(|&i| {
                !["warp", "sim_lane", "divergent"]
                    .iter()
                    .any(|w| header[i].contains(w))
            })
            .collect();
        assert_eq!(keep.len() + 4, header.len());
        let mut w = csv::Writer::from_writer(Vec::new());
        w.write_record(keep.iter().map(|&i| &header[i])).unwrap();
        for rec in r.records() {
            let rec = rec.unwrap();
            w.write_record(keep.iter().map(|&i| &rec[i])).unwrap();
        }
        let old = String::from_utf8(w.into_inner().unwrap()).unwrap();
        let points = parse_csv(&old).unwrap();
        assert_eq!(points, vec![point("k", 2, &[5])]);
        assert_eq!(points[0].sim.warp, None);
    }

    #[test]
    fn bad_csvs_are_explained() {
        let e = parse_csv("kernel,size\nx,1\n").unwrap_err();
        assert!(e.0.contains("not a CSV written by `ksim gpu bench`"), "{e}");
        let good = to_csv(&[point("k", 2, &[5])]).unwrap();
        assert!(
            parse_csv(good.lines().next().unwrap()).is_err(),
            "header only"
        );
        let bad = good.replace("1005", "10x5");
        assert!(parse_csv(&bad).is_err());
    }
}
