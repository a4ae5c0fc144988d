//! Differential test: on random small kernels (generated as source text) and random inputs,
//! the fast executor agrees with the reference semantics under the canonical schedule on
//! the final store (when no fault), the fault, the number of steps and the races (the first
//! race of every key, in order), whatever the number of workers.
//! The reference side is `interp::exec::run_canonical`.

use interp::fast::{self, FastOptions};
use interp::{Launch, LaunchOptions, Monoid};
use proptest::prelude::*;
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use std::sync::Arc;

/// A random kernel over `local int A[8]`, `global int B[8]`, `local T C[8]`.
struct Gen<'a> {
    rng: &'a mut StdRng,
    loops: usize,
    depth: usize,
}

impl Gen<'_> {
    fn pick(&mut self, n: usize) -> usize {
        self.rng.random_range(0..n)
    }

    fn index(&mut self) -> String {
        match self.pick(7) {
            0 => "tid".into(),
            1 => format!("(tid + {}) % 8", self.pick(8)),
            2 => format!("{}", self.pick(8)),
            3 => "(x & 7)".into(),
            4 => "(gid % 8)".into(),
            5 => format!("tid + {}", self.pick(6)), // may be out of bounds
            _ => format!("({} * tid) % 8", 1 + self.pick(3)),
        }
    }

    fn int_expr(&mut self, d: usize) -> String {
        if d == 0 {
            return match self.pick(6) {
                0 => format!("{}", self.pick(10) as i32 - 3),
                1 => "tid".into(),
                2 => "x".into(),
                3 => "y".into(),
                4 => "gid".into(),
                _ => format!("A[{}]", self.index()),
            };
        }
        match self.pick(9) {
            0 => format!("B[{}]", self.index()),
            1 => format!("A[{}]", self.index()),
            2 => {
                let op = ["+", "-", "*", "&", "|", "^"][self.pick(6)];
                format!("({} {op} {})", self.int_expr(d - 1), self.int_expr(d - 1))
            }
            3 => {
                let op = ["/", "%", "<<", ">>"][self.pick(4)];
                format!("({} {op} {})", self.int_expr(d - 1), self.int_expr(d - 1))
            }
            4 => format!(
                "({} ? {} : {})",
                self.cond(d - 1),
                self.int_expr(d - 1),
                self.int_expr(d - 1)
            ),
            5 => format!("min({}, {})", self.int_expr(d - 1), self.int_expr(d - 1)),
            _ => self.int_expr(0),
        }
    }

    fn cond(&mut self, d: usize) -> String {
        match self.pick(4) {
            0 => format!("{} < {}", self.int_expr(d), self.int_expr(d)),
            1 => format!(
                "tid {} {}",
                ["<", ">=", "==", "!="][self.pick(4)],
                self.pick(6)
            ),
            2 => format!("({} && {})", self.cond(0), self.cond(0)),
            _ => format!("{} != {}", self.int_expr(d), self.int_expr(0)),
        }
    }

    fn stmt(&mut self, out: &mut String) {
        let d = self.depth;
        match self.pick(if d < 2 { 10 } else { 7 }) {
            0 | 1 => out.push_str(&format!("x = {};\n", self.int_expr(2))),
            2 => out.push_str(&format!("y = {};\n", self.int_expr(1))),
            3 => out.push_str(&format!("A[{}] = {};\n", self.index(), self.int_expr(1))),
            4 => out.push_str(&format!("B[{}] = {};\n", self.index(), self.int_expr(1))),
            5 => {
                let (i, j) = (self.index(), self.index());
                match self.pick(3) {
                    0 => out.push_str(&format!("C[{i}] = C[{j}] <+> C[{i}];\n")),
                    1 => out.push_str(&format!("C[{i}] = identity;\n")),
                    _ => out.push_str(&format!("C[{i}] = C[{j}];\n")),
                }
            }
            6 => out.push_str("barrier();\n"),
            7 => {
                let c = self.cond(1);
                out.push_str(&format!("if ({c}) {{\n"));
                self.block(out);
                out.push_str("} else {\n");
                self.block(out);
                out.push_str("}\n");
            }
            _ => {
                let v = format!("i{}", self.loops);
                self.loops += 1;
                let bound = match self.pick(3) {
                    0 => format!("{}", self.pick(4)),
                    1 => "tid".into(),
                    _ => "(x & 3)".into(),
                };
                out.push_str(&format!("for (int {v} = 0; {v} < {bound}; {v}++) {{\n"));
                self.block(out);
                out.push_str("}\n");
            }
        }
    }

    fn block(&mut self, out: &mut String) {
        self.depth += 1;
        for _ in 0..1 + self.pick(3) {
            self.stmt(out);
        }
        self.depth -= 1;
    }
}

fn kernel(rng: &mut StdRng) -> String {
    let mut g = Gen {
        rng,
        loops: 0,
        depth: 0,
    };
    let mut body = String::new();
    for _ in 0..2 + g.pick(6) {
        g.stmt(&mut body);
    }
    format!(
        "kernel k(local int A[8], global int B[8], local T C[8]) {{\nint x = 0;\nint y = 0;\n{body}}}\n"
    )
}

fn check(seed: u64) -> Result<(), TestCaseError> {
    std::env::set_var("KSIM_FAST_PAR_MIN", "64");
    let mut rng = StdRng::seed_from_u64(seed);
    let src = kernel(&mut rng);
    let k = match lang::check::compile(&src) {
        Ok(k) => k,
        Err(e) => panic!("generated kernel does not compile: {e:?}\n{src}"),
    };
    let monoid = [
        Monoid::IntAdd,
        Monoid::Interval,
        Monoid::Voigt2,
        Monoid::FloatAdd,
    ][rng.random_range(0..4)];
    let opts = LaunchOptions {
        groups: Some(1 + rng.random_range(0..2)),
        local_size: Some(if rng.random_range(0..4) == 0 {
            64 + rng.random_range(0..200)
        } else {
            1 + rng.random_range(0..6)
        }),
        monoid,
        inputs: vec![
            ("A".into(), format!("random:{seed}")),
            ("B".into(), format!("random:{}", seed + 1)),
            ("C".into(), format!("random:{}", seed + 2)),
        ],
        max_steps: Some(300 + rng.random_range(0..600)),
        ..Default::default()
    };
    let l = Launch::new(Arc::new(k), &opts).expect("launch");
    let reference = interp::exec::run_canonical(&l);
    for jobs in [1, 2] {
        let out = fast::run(
            &l,
            &FastOptions {
                jobs,
                track_races: true,
            },
        )
        .expect("supported");
        let ctx = format!(
            "jobs {jobs}, {monoid}, {} groups of {}, max_steps {}, fault {:?}\n{src}",
            l.groups, l.local_size, l.max_steps, reference.fault
        );
        prop_assert_eq!(&out.fault, &reference.fault, "fault; {}", ctx);
        if reference.fault.is_none() {
            prop_assert_eq!(&out.memory, &reference.memory, "memory; {}", ctx);
        }
        prop_assert_eq!(out.steps, reference.steps, "steps; {}", ctx);
        let races: Vec<_> = out.races.iter().map(|r| r.race.clone()).collect();
        prop_assert_eq!(&races, &reference.races, "races; {}", ctx);
        prop_assert_eq!(
            &out.divergences,
            &reference.divergences,
            "divergence; {}",
            ctx
        );
        let plain = fast::run(
            &l,
            &FastOptions {
                jobs,
                track_races: false,
            },
        )
        .expect("supported");
        prop_assert_eq!(&plain.fault, &reference.fault, "fault untracked; {}", ctx);
        prop_assert_eq!(
            &plain.divergences,
            &reference.divergences,
            "divergence untracked; {}",
            ctx
        );
        if reference.fault.is_none() {
            prop_assert_eq!(
                &plain.memory,
                &reference.memory,
                "memory untracked; {}",
                ctx
            );
        }
    }
    Ok(())
}

proptest! {
    // Small groups run in parallel chunks of 64 threads here (see `KSIM_FAST_PAR_MIN`).
    #![proptest_config(ProptestConfig { cases: 1500, ..ProptestConfig::default() })]
    #[test]
    fn fast_agrees_with_reference(seed in 0u64..1_000_000) {
        check(seed)?;
    }
}
