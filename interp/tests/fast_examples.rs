//! The fast executor against the reference semantics (canonical schedule) on every example
//! kernel: identical final stores, faults, steps and races (first race per key, in order).

use interp::exec::run_canonical;
use interp::fast::{self, FastOptions};
use interp::{Launch, LaunchOptions, Monoid};
use std::path::PathBuf;
use std::sync::Arc;

fn examples() -> Vec<(String, String)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("examples directory") {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "ksim") {
            let name = path.file_stem().unwrap().to_string_lossy().to_string();
            out.push((name, std::fs::read_to_string(&path).unwrap()));
        }
    }
    out.sort();
    out
}

/// The launch of an example at size `n`, or why it cannot be launched (some examples need
/// a power of two, or a minimum size).
fn launch(src: &str, n: usize, monoid: Monoid, seed: u64) -> Result<Launch, String> {
    let kernel = lang::check::compile(src).map_err(|e| format!("{e:?}"))?;
    let inputs = kernel
        .arrays
        .iter()
        .filter(|a| a.name == "in" || a.name == "array")
        .map(|a| (a.name.clone(), format!("random:{seed}")))
        .collect();
    let opts = LaunchOptions {
        defines: vec![("n".into(), n.to_string())],
        monoid,
        inputs,
        max_steps: Some(1 << 24),
        ..Default::default()
    };
    Launch::new(Arc::new(kernel), &opts).map_err(|e| e.to_string())
}

/// Compares one launch; returns whether the reference found races.
pub fn compare(name: &str, l: &Launch) -> bool {
    let reference = run_canonical(l);
    for jobs in [1, 2] {
        for track in [true, false] {
            let fast = fast::run(
                l,
                &FastOptions {
                    jobs,
                    track_races: track,
                },
            )
            .unwrap_or_else(|e| panic!("{name}: {e}"));
            let what = format!("{name} n={} jobs={jobs} track={track}", l.threads());
            assert_eq!(fast.fault, reference.fault, "{what}: fault");
            if reference.fault.is_none() {
                assert_eq!(fast.memory, reference.memory, "{what}: memory");
            }
            assert_eq!(fast.steps, reference.steps, "{what}: steps");
            assert_eq!(
                fast.divergences, reference.divergences,
                "{what}: divergence"
            );
            if track {
                let races: Vec<_> = fast.races.iter().map(|r| r.race.clone()).collect();
                assert_eq!(races, reference.races, "{what}: races");
                assert!(fast.races.iter().all(|r| r.count >= 1));
            } else {
                assert!(fast.races.is_empty());
            }
        }
    }
    !reference.races.is_empty()
}

#[test]
fn examples_agree_with_reference() {
    let examples = examples();
    assert!(!examples.is_empty());
    let (mut checked, mut racy) = (0, std::collections::BTreeSet::new());
    for (name, src) in &examples {
        for n in [1usize, 2, 4, 8, 16, 64] {
            for monoid in [Monoid::IntAdd, Monoid::Interval, Monoid::Voigt1] {
                if let Ok(l) = launch(src, n, monoid, n as u64) {
                    if compare(name, &l) {
                        racy.insert(name.clone());
                    }
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 50, "only {checked} launches checked");
    assert!(racy.contains("kogge_stone_racy"), "{racy:?}");
    assert!(racy.contains("blelloch_missing_barrier"), "{racy:?}");
    assert!(!racy.contains("kogge_stone"), "{racy:?}");
}

#[test]
fn examples_agree_at_256() {
    // Every example launches at 256 (a power of two within every example's limits): a
    // launch that fails is a broken example, not one to skip.
    for (name, src) in &examples() {
        let l = launch(src, 256, Monoid::IntAdd, 7).unwrap_or_else(|e| panic!("{name}: {e}"));
        compare(name, &l);
    }
}

#[test]
fn racy_kogge_stone_reports_both_lines() {
    let src = examples()
        .into_iter()
        .find(|(n, _)| n == "kogge_stone_racy")
        .expect("kogge_stone_racy.ksim")
        .1;
    let l = launch(&src, 4096, Monoid::IntAdd, 1).unwrap();
    let out = fast::run(
        &l,
        &FastOptions {
            jobs: 2,
            track_races: true,
        },
    )
    .unwrap();
    assert!(out.fault.is_none());
    assert!(!out.races.is_empty());
    let lines: Vec<&str> = src.lines().collect();
    let line_of = |off: usize| src[..off].matches('\n').count();
    let r = &out.races[0].race;
    let first = lines[line_of(r.first.span.start)];
    let second = lines[line_of(r.second.span.start)];
    let both = format!("{first}\n{second}");
    assert!(both.contains("temp = out[tid - offset]"), "{both}");
    assert!(both.contains("out[tid] = temp ⊕ out[tid]"), "{both}");
}
