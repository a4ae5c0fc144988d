//! Benchmark results as CSV: `kernel,size,device,repeat,kernel_ns,total_ns`, one row per
//! timed repetition. Files are written atomically (a temporary file in the same folder,
//! then a rename), so an interrupted benchmark never leaves a truncated CSV.

use std::fmt;
use std::path::Path;

/// The CSV header line.
pub const CSV_HEADER: &str = "kernel,size,device,repeat,kernel_ns,total_ns";

/// One timed repetition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BenchRow {
    /// The kernel (or pipeline) name, e.g. the file stem `blelloch_tree1d`.
    pub kernel: String,
    /// The problem size (the swept parameter, e.g. `n`).
    pub size: u64,
    /// The device name.
    pub device: String,
    /// 0-based repetition number (after warm-up).
    pub repeat: usize,
    /// Kernel time from OpenCL profiling events.
    pub kernel_ns: u64,
    /// Wall time including transfers.
    pub total_ns: u64,
}

/// A CSV that cannot be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CsvError(pub String);

impl fmt::Display for CsvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for CsvError {}

fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The CSV text for `rows`, header included.
pub fn to_csv(rows: &[BenchRow]) -> String {
    let mut s = String::from(CSV_HEADER);
    s.push('\n');
    for r in rows {
        s.push_str(&format!(
            "{},{},{},{},{},{}\n",
            field(&r.kernel),
            r.size,
            field(&r.device),
            r.repeat,
            r.kernel_ns,
            r.total_ns
        ));
    }
    s
}

/// Writes `rows` to `path` atomically.
pub fn write_csv(rows: &[BenchRow], path: &Path) -> std::io::Result<()> {
    files::write_atomic(path, to_csv(rows).as_bytes())
}

/// Splits one CSV line (RFC 4180 quoting; no embedded newlines).
fn split_line(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => out.push(std::mem::take(&mut cur)),
            _ => cur.push(c),
        }
    }
    out.push(cur);
    out
}

/// Parses CSV text written by [`to_csv`] (columns are found by header name, so extra
/// columns are ignored).
pub fn parse_csv(text: &str) -> Result<Vec<BenchRow>, CsvError> {
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let (_, header) = lines
        .next()
        .ok_or_else(|| CsvError("empty CSV: expected the header line".into()))?;
    let cols = split_line(header.trim_end_matches('\r'));
    let col = |name: &str| {
        cols.iter().position(|c| c.trim() == name).ok_or_else(|| {
            CsvError(format!(
                "CSV header lacks the column `{name}` (expected {CSV_HEADER})"
            ))
        })
    };
    let (ck, cs, cd, cr, ckn, ct) = (
        col("kernel")?,
        col("size")?,
        col("device")?,
        col("repeat")?,
        col("kernel_ns")?,
        col("total_ns")?,
    );
    let mut rows = Vec::new();
    for (no, line) in lines {
        let f = split_line(line.trim_end_matches('\r'));
        let get = |i: usize| f.get(i).map(|s| s.trim()).unwrap_or("");
        let num = |i: usize, what: &str| -> Result<u64, CsvError> {
            get(i).parse::<u64>().map_err(|_| {
                CsvError(format!(
                    "line {}: `{}` is not a valid {what}",
                    no + 1,
                    get(i)
                ))
            })
        };
        rows.push(BenchRow {
            kernel: get(ck).to_string(),
            size: num(cs, "size")?,
            device: get(cd).to_string(),
            repeat: num(cr, "repeat")? as usize,
            kernel_ns: num(ckn, "kernel_ns")?,
            total_ns: num(ct, "total_ns")?,
        });
    }
    Ok(rows)
}

/// Reads a CSV file written by [`write_csv`].
pub fn read_csv(path: &Path) -> Result<Vec<BenchRow>, CsvError> {
    let text =
        files::read_to_string(path, files::TEXT_LIMIT).map_err(|e| CsvError(e.to_string()))?;
    parse_csv(&text)
}

/// Parses a size sweep `A..B` (powers of two from A to B inclusive, e.g. `2..1024`), a
/// comma list `2,4,8`, or a single number.
pub fn parse_sweep(spec: &str) -> Result<Vec<u64>, String> {
    let spec = spec.trim();
    if let Some((a, b)) = spec.split_once("..") {
        let a: u64 = a
            .trim()
            .parse()
            .map_err(|_| format!("`{a}` is not a size"))?;
        let b: u64 = b
            .trim()
            .trim_start_matches('=')
            .parse()
            .map_err(|_| format!("`{b}` is not a size"))?;
        if a == 0 || a > b {
            return Err(format!("`{spec}`: expected 1 <= A <= B in A..B"));
        }
        let mut out = Vec::new();
        let mut x = a;
        while x <= b {
            out.push(x);
            x = match x.checked_mul(2) {
                Some(y) => y,
                None => break,
            };
        }
        return Ok(out);
    }
    spec.split(',')
        .map(|s| {
            s.trim()
                .parse::<u64>()
                .map_err(|_| format!("`{s}` is not a size"))
        })
        .collect()
}

/// The rows for one (kernel, size) point from its timings.
pub fn rows_for(kernel: &str, size: u64, device: &str, timings: &[crate::Timing]) -> Vec<BenchRow> {
    timings
        .iter()
        .enumerate()
        .map(|(repeat, t)| BenchRow {
            kernel: kernel.to_string(),
            size,
            device: device.to_string(),
            repeat,
            kernel_ns: t.kernel_ns,
            total_ns: t.total_ns,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_round_trip() {
        let rows = vec![
            BenchRow {
                kernel: "blelloch_tree1d".into(),
                size: 1024,
                device: "cpu, \"pthread\"".into(),
                repeat: 0,
                kernel_ns: 1234,
                total_ns: 5678,
            },
            BenchRow {
                kernel: "k2".into(),
                size: 2,
                device: "gpu".into(),
                repeat: 9,
                kernel_ns: 1,
                total_ns: 2,
            },
        ];
        let text = to_csv(&rows);
        assert!(text.starts_with(CSV_HEADER));
        assert_eq!(parse_csv(&text).unwrap(), rows);
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("b.csv");
        write_csv(&rows, &p).unwrap();
        assert_eq!(read_csv(&p).unwrap(), rows);
        // No temporary file is left behind.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn sweeps() {
        assert_eq!(parse_sweep("2..16").unwrap(), vec![2, 4, 8, 16]);
        assert_eq!(parse_sweep("3..20").unwrap(), vec![3, 6, 12]);
        assert_eq!(parse_sweep("5").unwrap(), vec![5]);
        assert_eq!(parse_sweep("1,3").unwrap(), vec![1, 3]);
        assert!(parse_sweep("8..2").is_err());
        assert!(parse_csv("kernel,size\n").is_err());
    }
}
