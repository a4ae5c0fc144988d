//! Summary statistics of repeated timings: median, mean, extremes and quartiles.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A summary of repeated measurements (nanoseconds).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    pub median: f64,
    pub mean: f64,
    pub min: f64,
    pub max: f64,
    /// First and third quartiles (linear interpolation between order statistics, the
    /// "type 7" of R and NumPy's default), so the interquartile range is `q3 - q1`.
    pub q1: f64,
    pub q3: f64,
}

impl Stats {
    /// The summary of `samples`; `None` when there are none.
    pub fn of(samples: &[u64]) -> Option<Stats> {
        if samples.is_empty() {
            return None;
        }
        let mut v: Vec<f64> = samples.iter().map(|&x| x as f64).collect();
        v.sort_by(f64::total_cmp);
        let q = |p: f64| {
            let h = (v.len() - 1) as f64 * p;
            let (lo, hi) = (h.floor() as usize, h.ceil() as usize);
            v[lo] + (h - lo as f64) * (v[hi] - v[lo])
        };
        Some(Stats {
            median: q(0.5),
            mean: v.iter().sum::<f64>() / v.len() as f64,
            min: v[0],
            max: v[v.len() - 1],
            q1: q(0.25),
            q3: q(0.75),
        })
    }

    /// The value of one statistic.
    pub fn get(&self, s: Statistic) -> f64 {
        match s {
            Statistic::Median => self.median,
            Statistic::Mean => self.mean,
            Statistic::Min => self.min,
        }
    }
}

/// The statistic a table or a figure shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Statistic {
    #[default]
    Median,
    Mean,
    Min,
}

impl fmt::Display for Statistic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Statistic::Median => "median",
            Statistic::Mean => "mean",
            Statistic::Min => "min",
        })
    }
}

/// The spread drawn around a statistic: an error band in figures.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Spread {
    /// From the fastest to the slowest run.
    #[default]
    MinMax,
    /// From the first to the third quartile.
    Iqr,
    None,
}

impl Spread {
    /// The band's (low, high) ends, if any.
    pub fn band(self, s: &Stats) -> Option<(f64, f64)> {
        match self {
            Spread::MinMax => Some((s.min, s.max)),
            Spread::Iqr => Some((s.q1, s.q3)),
            Spread::None => None,
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            Spread::MinMax => "min–max band",
            Spread::Iqr => "interquartile band",
            Spread::None => "no band",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries() {
        let s = Stats::of(&[5, 1, 3, 2, 4]).unwrap();
        assert_eq!((s.median, s.mean, s.min, s.max), (3.0, 3.0, 1.0, 5.0));
        assert_eq!((s.q1, s.q3), (2.0, 4.0));
        // Even counts interpolate: the median of 1, 2, 3, 10 is 2.5, not the mean 4.
        let s = Stats::of(&[10, 1, 3, 2]).unwrap();
        assert_eq!((s.median, s.mean), (2.5, 4.0));
        assert_eq!((s.q1, s.q3), (1.75, 4.75));
        assert_eq!(s.get(Statistic::Min), 1.0);
        assert_eq!(Stats::of(&[7]).unwrap().q3, 7.0);
        assert!(Stats::of(&[]).is_none());
        assert_eq!(Spread::Iqr.band(&s), Some((1.75, 4.75)));
    }
}
