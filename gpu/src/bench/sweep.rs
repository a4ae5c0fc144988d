//! The size sweep of `ksim gpu bench -D NAME=RANGE`: which parameter is swept, over which
//! sizes, and the parameters that stay fixed.

/// A parsed `-D` list: one swept parameter and the fixed ones.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sweep {
    /// The swept parameter's name (e.g. `n`).
    pub param: String,
    pub sizes: Vec<u64>,
    /// `NAME=VALUE` parameters that keep one value.
    pub fixed: Vec<(String, String)>,
}

impl Sweep {
    /// Splits `-D` definitions into the swept parameter and fixed ones: the swept one is
    /// the definition with a range (`A..B`) or a list (`A,B`), or else `n`.
    pub fn from_defines(defines: &[String]) -> Result<Sweep, String> {
        let mut swept = None;
        let mut fixed = Vec::new();
        for d in defines {
            let (k, v) = d
                .split_once('=')
                .ok_or_else(|| format!("-D {d}: expected NAME=RANGE"))?;
            let k = k.trim();
            if v.contains("..") || v.contains(',') || swept.is_none() && k == "n" {
                if swept.is_some() {
                    return Err("only one -D parameter can be swept".into());
                }
                let sizes = parse_sweep(v).map_err(|e| format!("-D {d}: {e}"))?;
                swept = Some((k.to_string(), sizes));
            } else {
                fixed.push((k.to_string(), v.to_string()));
            }
        }
        let (param, sizes) = swept.ok_or("bench needs a swept parameter, e.g. -D n=2..1024")?;
        Ok(Sweep {
            param,
            sizes,
            fixed,
        })
    }

    /// The `-D` definitions of one point of the sweep.
    pub fn defines(&self, size: u64) -> Vec<(String, String)> {
        let mut d = self.fixed.clone();
        d.push((self.param.clone(), size.to_string()));
        d
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sweeps() {
        assert_eq!(parse_sweep("2..16").unwrap(), vec![2, 4, 8, 16]);
        assert_eq!(parse_sweep("3..20").unwrap(), vec![3, 6, 12]);
        assert_eq!(parse_sweep("5").unwrap(), vec![5]);
        assert_eq!(parse_sweep("1,3").unwrap(), vec![1, 3]);
        assert!(parse_sweep("8..2").is_err());
        assert!(parse_sweep("x").is_err());
    }

    #[test]
    fn defines_split_into_swept_and_fixed() {
        let s = Sweep::from_defines(&["m=3".into(), "n=2..8".into()]).unwrap();
        assert_eq!(s.param, "n");
        assert_eq!(s.sizes, vec![2, 4, 8]);
        assert_eq!(s.fixed, vec![("m".to_string(), "3".to_string())]);
        assert_eq!(s.defines(4).last().unwrap(), &("n".into(), "4".into()));
        // A bare `n=16` is swept (one size); another bare parameter is fixed.
        let s = Sweep::from_defines(&["n=16".into(), "k=2".into()]).unwrap();
        assert_eq!((s.param.as_str(), s.sizes.as_slice()), ("n", &[16][..]));
        assert!(Sweep::from_defines(&["n=2..4".into(), "m=1,2".into()]).is_err());
        assert!(Sweep::from_defines(&["k=2".into()]).is_err());
        assert!(Sweep::from_defines(&["n".into()]).is_err());
    }
}
