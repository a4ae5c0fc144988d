//! Tests on a real OpenCL device (PoCL in CI). Without an OpenCL platform they print why
//! and pass, unless KSIM_REQUIRE_OPENCL=1, where they fail.

mod common;

use common::*;
use gpu::{compare, device_or_skip, run, Storage};
use interp::{Monoid, Value};

#[test]
fn a_loader_without_platforms_gives_the_install_hint() {
    // The ICD loader reads its platforms from $OCL_ICD_VENDORS: an empty directory is a
    // machine with the loader but no OpenCL implementation. Run in a child process, since
    // the loader reads the variable once per process.
    if let Ok(expect_none) = std::env::var("KSIM_OPENCL_CHILD") {
        match gpu::devices() {
            Err(e) => assert_eq!(e, gpu::GpuError::NoPlatform, "{e}"),
            Ok(list) => assert!(expect_none != "1", "devices found: {list:?}"),
        }
        let err = gpu::open(None).err().map(|e| e.to_string());
        if expect_none == "1" {
            let msg = err.expect("no device without a platform");
            assert!(msg.contains("install pocl-opencl-icd"), "{msg}");
        }
        return;
    }
    let empty = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "a_loader_without_platforms_gives_the_install_hint",
            "--exact",
            "--nocapture",
        ])
        .env("OCL_ICD_VENDORS", empty.path())
        .env("KSIM_OPENCL_CHILD", "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn doubles_on_the_device() {
    let Some(dev) = device_or_skip("doubles_on_the_device") else {
        return;
    };
    let l = launch(
        double_it(),
        &[("n", 64)],
        Monoid::IntAdd,
        None,
        &[("in", "iota")],
    );
    let r = run(&l, &dev, 3).unwrap();
    let out: Vec<Value> = (0..64).map(|i| Value::Int(2 * i)).collect();
    assert_eq!(r.memory.arrays[1][0], out);
    assert_eq!(r.memory.arrays[0][0], l.initial[0]);
    assert_eq!(r.timings.len(), 3);
    assert!(r.timings.iter().all(|t| t.total_ns >= t.kernel_ns));
}

#[test]
fn kogge_stone_several_groups_and_monoids() {
    let Some(dev) = device_or_skip("kogge_stone_several_groups_and_monoids") else {
        return;
    };
    for (m, input) in [
        (Monoid::IntAdd, "random:3"),
        (Monoid::IntMax, "random:4"),
        (Monoid::IntMul, "random:5"),
        (Monoid::FloatAdd, "random:6"),
        (Monoid::Interval, "iota"),
        (Monoid::Voigt1, "random:7"),
        (Monoid::Voigt2, "random:8"),
    ] {
        let l = launch(kogge_stone(), &[("n", 32)], m, Some(3), &[("in", input)]);
        let r = run(&l, &dev, 1).unwrap();
        // Inclusive scan of `in`, computed sequentially, in every group's `out`.
        let mut acc = m.identity();
        let expect: Vec<Value> = l.initial[0]
            .iter()
            .map(|x| {
                acc = m.combine(&acc, x);
                acc.clone()
            })
            .collect();
        let mut sim = l.initial_memory();
        sim.arrays[1] = vec![expect; 3];
        let c = compare(&sim, &r.memory, &l, 10);
        assert!(c.is_match(), "{m}: {c}");
    }
}

#[test]
fn interval_scan_detects_order() {
    let Some(dev) = device_or_skip("interval_scan_detects_order") else {
        return;
    };
    let l = launch(
        kogge_stone(),
        &[("n", 16)],
        Monoid::Interval,
        Some(1),
        &[("in", "iota")],
    );
    let r = run(&l, &dev, 1).unwrap();
    for (i, v) in r.memory.arrays[1][0].iter().enumerate() {
        assert_eq!(*v, Value::Interval(interp::Interval::Range(0, i as u32)));
    }
}

#[test]
fn work_group_too_large_is_refused() {
    let Some(dev) = device_or_skip("work_group_too_large_is_refused") else {
        return;
    };
    let n = dev.info.max_work_group_size * 2;
    let l = launch(double_it(), &[("n", n)], Monoid::IntAdd, None, &[]);
    let e = run(&l, &dev, 1).unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains(&n.to_string()) && msg.contains(&dev.info.max_work_group_size.to_string()),
        "{msg}"
    );
    assert!(msg.contains("the simulator has no such limit"), "{msg}");
}

#[test]
fn names_reserved_in_opencl_are_renamed_and_build() {
    let Some(dev) = device_or_skip("names_reserved_in_opencl_are_renamed_and_build") else {
        return;
    };
    // An array named like an OpenCL builtin must not reach the device compiler as is.
    let mut k = double_it();
    k.arrays[1].name = "barrier".into();
    let l = launch(k, &[("n", 4)], Monoid::IntAdd, None, &[("in", "iota")]);
    let r = run(&l, &dev, 1).unwrap();
    let param = r
        .source
        .lines()
        .find(|l| l.contains("// global barrier[4]"))
        .unwrap_or_else(|| panic!("no parameter line for `barrier`:\n{}", r.source));
    let ident = param
        .split("*restrict")
        .nth(1)
        .and_then(|rest| {
            rest.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .find(|w| !w.is_empty())
        })
        .unwrap_or_else(|| panic!("no pointer parameter in `{param}`"));
    assert_ne!(ident, "barrier", "{param}");
    let out: Vec<Value> = (0..4).map(|i| Value::Int(2 * i)).collect();
    assert_eq!(r.memory.arrays[1][0], out);
}

/// Whether two floats are within `ulps` units in the last place (OpenCL C allows 2.5 ULP
/// for single-precision division without `-cl-fp32-correctly-rounded-divide-sqrt`).
fn close(a: f32, b: f32, ulps: u32) -> bool {
    if a == b {
        return true;
    }
    let key = |x: f32| {
        let i = x.to_bits() as i32;
        if i < 0 {
            i32::MIN.wrapping_sub(i) as i64
        } else {
            i as i64
        }
    };
    (key(a) - key(b)).unsigned_abs() <= ulps as u64
}

#[test]
fn corner_cases_match_the_reference_values() {
    let Some(dev) = device_or_skip("corner_cases_match_the_reference_values") else {
        return;
    };
    let xs: [i32; 8] = [i32::MIN, -1, 0, 1, 7, 65535, i32::MAX, -77];
    let fs: [f32; 8] = [1.5, -2.25, 3e30, 0.0, -0.0, 7.0, 100.5, -1e-3];
    let zs = [true, false, false, true, false, false, true, false];
    let list = |v: &[String]| v.join(",");
    let l = launch(
        corner_cases(),
        &[("n", 8)],
        Monoid::IntAdd,
        None,
        &[
            ("a", &list(&xs.map(|x| x.to_string()))),
            ("f", &list(&fs.map(|x| format!("{x:e}")))),
            ("z", &list(&zs.map(|x| x.to_string()))),
        ],
    );
    let r = run(&l, &dev, 1).unwrap();
    // Expected values from the OpenCL C definitions (ksim's documented choices where C
    // leaves a case undefined: signed arithmetic wraps, INT_MIN / -1 = INT_MIN with
    // remainder 0, log2 is the floor of the binary logarithm), computed with Rust's own
    // integer and float operations, not with ksim's.
    let mem = &r.memory.arrays;
    for t in 0..8 {
        let x = xs[t];
        let a = x.wrapping_mul(65536).wrapping_add(i32::MAX);
        assert_eq!(mem[0][0][t], Value::Int(a), "a[{t}]");
        let m0 = x.wrapping_neg().wrapping_sub(i32::MIN);
        assert_eq!(mem[4][0][t], Value::Int(m0), "m[0][{t}]");
        let dv = if t == 0 { -1 } else { t as i32 + 1 };
        let m1 = x.wrapping_div(dv).wrapping_add(x.wrapping_rem(dv));
        assert_eq!(mem[4][0][8 + t], Value::Int(m1), "m[1][{t}]");
        let ux = x as u32;
        let log2 = (t as u32 + 1).ilog2();
        let u = 0u32.wrapping_sub(ux).wrapping_add((ux >> 3) ^ log2);
        assert_eq!(mem[1][0][t], Value::Uint(u), "u[{t}]");
        let q = fs[t] / (x as f32 + 0.5);
        // min/max, not clamp: a NaN goes to 1e30, as with fmin/fmax.
        #[allow(clippy::manual_clamp)]
        let want_f = q.min(1e30).max(-3.5);
        match &mem[2][0][t] {
            Value::Float(bits) => {
                let got = f32::from_bits(*bits);
                assert!(close(got, want_f, 3), "f[{t}]: {got} vs {want_f}");
            }
            other => panic!("f[{t}] is {other:?}"),
        }
        // `&&` and `||` short-circuit: the cast of 3e30 (t = 2) is never evaluated.
        let z = !(zs[t] || (x > 10 && (fs[t] as i32) < 100));
        assert_eq!(mem[3][0][t], Value::Bool(z), "z[{t}]");
    }
}

/// One stage of a pipeline on the simulator (the fast executor with race checking): its
/// final memory, or why the stage is not a clean execution.
fn simulate_stage(l: &interp::Launch) -> Result<interp::Memory, String> {
    let out = interp::fast::run(
        l,
        &interp::fast::FastOptions {
            jobs: 1,
            track_races: true,
        },
    )
    .map_err(|e| e.to_string())?;
    if let Some(f) = out.fault {
        return Err(format!("fault: {f}"));
    }
    if !out.races.is_empty() || !out.divergences.is_empty() {
        return Err(format!(
            "races {:?} divergences {:?}",
            out.races, out.divergences
        ));
    }
    Ok(out.memory)
}

#[test]
fn scan_pipelines_match_the_simulated_pipeline() {
    let Some(dev) = device_or_skip("scan_pipelines_match_the_simulated_pipeline") else {
        return;
    };
    for storage in [Storage::Tree1d, Storage::Tree2d] {
        for (m, n, max_local, spec) in [
            (Monoid::IntAdd, 1 << 12, 16, "random:9"),
            (Monoid::Interval, 256, 4, "iota"),
            (Monoid::IntAdd, 8, 64, "random:9"),
            (Monoid::FloatAdd, 512, 8, "random:9"),
        ] {
            let ctx = format!("{storage:?} {m} n={n} max_local={max_local}");
            let input = interp::launch::parse_input(spec, n, lang::core::Ty::Generic, m).unwrap();
            let p = gpu::scan_pipeline(storage, input.clone(), max_local, m).unwrap();
            assert!(
                p.stages.len() > 1 || n <= 2 * max_local,
                "{ctx}: several stages"
            );
            // Every buffer of every stage, simulator against device (floats within the
            // comparison's ULP tolerance: both sum in the same tree order).
            let sim = gpu::simulate(&p, simulate_stage).unwrap_or_else(|e| panic!("{ctx}: {e}"));
            let dev_run = gpu::run_pipeline(&p, &dev, 2).unwrap();
            let c = gpu::compare_pipeline(&sim, &dev_run.memory, &p, 5);
            assert!(c.is_match(), "{ctx}: {c}");
            // And the simulated pipeline computes the exclusive scan (exactly, except for
            // float sums, which associate differently from the sequential loop).
            if m != Monoid::FloatAdd {
                let data = p.buffer("data").unwrap();
                let want = gpu::scan::exclusive_scan(&input, m);
                assert_eq!(sim.buffers[data], want, "{ctx}");
            }
        }
    }
}
