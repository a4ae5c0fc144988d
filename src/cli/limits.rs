//! Numeric options shared by several commands, parsed by clap up front, so that an
//! extreme value is a usage error (exit 2) with a clear message instead of a panic, an
//! allocation failure, or a silent change of behaviour later.

use std::time::Duration;

/// The longest `--timeout` accepted, in seconds (one year): beyond it no run ends anyway,
/// and `Duration` cannot hold every `f64`.
pub const MAX_TIMEOUT_SECS: f64 = 365.0 * 24.0 * 3600.0;

/// The most worker threads accepted (`--jobs`, `--threads`): far more than the cores of
/// any machine ksim runs on, and few enough that the system can start them.
pub const MAX_JOBS: usize = 1024;

/// `--timeout SECS` of `explore` and `verify-scan`: a positive, finite number of seconds,
/// at most [`MAX_TIMEOUT_SECS`].
pub fn parse_timeout(s: &str) -> Result<Duration, String> {
    let secs: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a number of seconds"))?;
    if !(secs > 0.0 && secs.is_finite()) {
        return Err(format!(
            "`{s}`: the timeout must be a positive number of seconds"
        ));
    }
    if secs > MAX_TIMEOUT_SECS {
        return Err(format!(
            "`{s}`: the timeout must be at most {MAX_TIMEOUT_SECS} seconds (one year)"
        ));
    }
    Duration::try_from_secs_f64(secs).map_err(|e| format!("`{s}`: {e}"))
}

/// A number of worker threads: at most [`MAX_JOBS`] (0 keeps the meaning each command
/// gives it), and no more than the machine runs at once ([`cap_jobs`], with a note).
pub fn parse_jobs(s: &str) -> Result<usize, String> {
    let n: usize = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a number of threads"))?;
    if n > MAX_JOBS {
        return Err(format!("{n} threads: at most {MAX_JOBS} are accepted"));
    }
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    let (jobs, note) = cap_jobs(n, cores);
    if let Some(note) = note {
        eprintln!("{note}");
    }
    Ok(jobs)
}

/// `n` workers on a machine that runs `cores` threads at once: more workers than cores only
/// contend (`--jobs 1024` on 2 cores was 90 times slower than `--jobs 2`), so they are
/// capped at `cores`, with a note saying so.
pub fn cap_jobs(n: usize, cores: usize) -> (usize, Option<String>) {
    if n > cores {
        let note = format!(
            "note: {n} worker threads asked for, but this machine runs {cores} at once: using {cores}"
        );
        (cores, Some(note))
    } else {
        (n, None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_are_positive_finite_and_bounded() {
        assert_eq!(parse_timeout("1.5"), Ok(Duration::from_millis(1500)));
        for bad in ["0", "-1", "nan", "inf", "1e20", "x", ""] {
            assert!(parse_timeout(bad).is_err(), "{bad}");
        }
        assert!(parse_timeout(&MAX_TIMEOUT_SECS.to_string()).is_ok());
    }

    #[test]
    fn jobs_are_bounded() {
        assert_eq!(parse_jobs("0"), Ok(0));
        assert_eq!(parse_jobs("1"), Ok(1));
        assert!(parse_jobs("100000").is_err());
        assert!(parse_jobs("-1").is_err());
    }

    #[test]
    fn jobs_are_capped_at_the_cores() {
        assert_eq!(cap_jobs(4, 8), (4, None));
        assert_eq!(cap_jobs(8, 8), (8, None));
        let (n, note) = cap_jobs(1024, 2);
        assert_eq!(n, 2);
        assert!(note.unwrap().contains("using 2"));
    }
}
