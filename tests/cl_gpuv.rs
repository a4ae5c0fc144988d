//! GPUVerify's access specifications (`__writes_to`, `__reads_from` in a `__spec_*`
//! helper) and built-ins outside annotations (`__add_noovfl`), lowered to core accesses and
//! expressions: each construct on both engines (`common::cl::run` checks that they agree),
//! races with a specification's accesses found at its statement, and the built-ins that
//! have no dynamic meaning refused with an error naming them.

mod common;
use common::cl::{compile, Ran};

fn run(src: &str, local: usize, bufs: &[(&str, usize, &str)], args: &[(&str, &str)]) -> Ran {
    common::cl::run(src, &[1], &[local], bufs, args)
}

#[test]
fn a_write_pinned_by_write_implies_touches_only_that_element() {
    // The suite's simple_spec: the call writes A[gid] only, so the kernel's own write of
    // A[gid] after it is no race; the value is arbitrary (a hash), then overwritten.
    let src = "void __spec_bar(__global int* p) {
        __ensures(__write_implies(p, __write_offset_bytes(p)/sizeof(int) == get_global_id(0)));
        __writes_to(p);
    }
    kernel void foo(__global int* A) {
        __spec_bar(A);
        A[get_global_id(0)] = get_global_id(0);
    }";
    let r = run(src, 8, &[("A", 8, "zeros")], &[]);
    assert!(r.races.is_empty(), "{:?}", r.race_arrays());
    assert!(r.fault.is_none(), "{:?}", r.fault);
    assert_eq!(r.ints("A"), (0..8).collect::<Vec<_>>());
}

#[test]
fn a_spec_write_stores_an_arbitrary_value_that_differs_per_work_item() {
    // No kernel write after the call: the hash stays, one value per work-item.
    let src = "void __spec_bar(__global int* p) {
        __ensures(__write_implies(p, __write_offset_bytes(p) == get_global_id(0) * 4));
        __writes_to(p);
    }
    kernel void foo(__global int* A) { __spec_bar(A); }";
    let r = run(src, 4, &[("A", 4, "zeros")], &[]);
    let a = r.ints("A");
    assert!(a.iter().all(|&v| v != 0), "{a:?}");
    let mut d = a.clone();
    d.sort();
    d.dedup();
    assert_eq!(d.len(), 4, "{a:?}");
    // The same run again gives the same values: it is one interpretation.
    assert_eq!(run(src, 4, &[("A", 4, "zeros")], &[]).ints("A"), a);
}

#[test]
fn an_ensures_naming_the_value_is_what_the_call_writes() {
    // The suite's value_related_spec: p[gid] becomes its old value plus one.
    let src = "void __spec_bar(__global int* p) {
        __requires(p[get_global_id(0)] == get_global_id(0));
        __ensures(p[get_global_id(0)] == __old_int(p[get_global_id(0)] + 1));
        __ensures(__write_implies(p, __write_offset_bytes(p)/sizeof(int) == get_global_id(0)));
        __writes_to(p);
    }
    kernel void foo(__global int* A) {
        A[get_global_id(0)] = get_global_id(0);
        __spec_bar(A);
        __assert(A[get_global_id(0)] == get_global_id(0) + 1);
    }";
    let r = run(src, 8, &[("A", 8, "zeros")], &[]);
    assert!(r.fault.is_none(), "{:?}", r.fault);
    assert!(r.races.is_empty(), "{:?}", r.race_arrays());
    assert_eq!(r.ints("A"), (1..9).collect::<Vec<_>>());
}

#[test]
fn an_unpinned_write_races_and_is_located_at_the_specification() {
    // The suite's race_from_bodiless_call: __writes_to(p) with nothing pinning the element
    // writes p[0] with a value per work-item: the writes race with each other and with
    // work-item 0's read of A[0].
    let src = "void __spec_foo(__local int * p) {
        __writes_to(p);
    }
    void baz(int x);
    kernel void bar(__local int * A) {
        __spec_foo(A);
        baz(A[get_local_id(0)]);
    }";
    let r = run(src, 4, &[("A", 4, "zeros")], &[]);
    assert_eq!(r.race_arrays().first().map(String::as_str), Some("A"));
    let race = &r.races[0];
    let spans = [&race.first.span, &race.second.span];
    assert!(
        spans
            .iter()
            .any(|s| src[(*s).clone()].starts_with("__writes_to(p)")),
        "{spans:?}"
    );
}

#[test]
fn reads_from_reads_and_races_with_a_write_of_another_work_item() {
    // The suite's bad_write: the call reads p[0]; work-item 0 then writes A[0] with a new
    // value (the input is iota + 1, so 0 is a new value there).
    let src = "void __spec_bar(__global int* p) {
        __reads_from(p);
    }
    kernel void foo(__global int* A) {
        __spec_bar(A);
        A[get_global_id(0)] = get_global_id(0);
    }";
    let r = run(src, 4, &[("A", 4, "random:1")], &[]);
    assert_eq!(r.race_arrays(), vec!["A".to_string()]);
    // Pinned by __read_implies to the work-item's own element: no race.
    let src = "void __spec_bar(__global int* p) {
        __ensures(__read_implies(p, __read_offset_bytes(p)/sizeof(int) == get_global_id(0)));
        __reads_from(p);
    }
    kernel void foo(__global int* A) {
        __spec_bar(A);
        A[get_global_id(0)] = get_global_id(0);
    }";
    let r = run(src, 4, &[("A", 4, "random:1")], &[]);
    assert!(r.races.is_empty(), "{:?}", r.race_arrays());
}

#[test]
fn an_ensures_the_interpretation_breaks_blames_the_run() {
    // The written value is a hash, so `p[gid] == 7` fails: an assumption about the
    // specification's code, not a kernel bug.
    let src = "void __spec_bar(__global int* p) {
        __ensures(__write_implies(p, __write_offset_bytes(p)/sizeof(int) == get_global_id(0)));
        __ensures(p[get_global_id(0)] + 0 == 7);
        __writes_to(p);
    }
    kernel void foo(__global int* A) { __spec_bar(A); }";
    let r = run(src, 2, &[("A", 2, "zeros")], &[]);
    let f = r.raw_fault.expect("the hash is not 7");
    assert!(f.kind.blames_launch(), "{f}");
    assert!(f.to_string().contains("__assume"), "{f}");
}

#[test]
fn access_specifications_outside_a_helper_or_of_other_forms_are_errors() {
    let e = compile("kernel void k(__global int *A) { __writes_to(A); }").unwrap_err();
    assert!(e.contains("helper function's contract"), "{e}");
    let e = compile(
        "void __spec_f(__global int *p) {
            __ensures(__write_implies(p, __write_offset_bytes(p) > 4));
            __writes_to(p);
        }
        kernel void k(__global int *A) { __spec_f(A); }",
    )
    .unwrap_err();
    assert!(
        e.contains("not supported yet") && e.contains("__write_implies"),
        "{e}"
    );
    let e = compile(
        "void __spec_f(__global int *p) { int x = __writes_to(p); }
        kernel void k(__global int *A) { __spec_f(A); }",
    )
    .unwrap_err();
    assert!(e.contains("is a statement"), "{e}");
}

#[test]
fn add_noovfl_is_true_when_no_partial_sum_overflows() {
    // The suite's test_nooverflowing_add_predicate, with values chosen per work-item.
    let src = "kernel void foo(__global int *R, unsigned x, unsigned y, int a, int b) {
        unsigned i = get_local_id(0);
        R[0] = __add_noovfl(x, y, i);
        R[1] = __add_noovfl(x, y);
        R[2] = __add_noovfl(a, b);
        R[3] = __add_noovfl(a, -b, b);
        R[4] = __add_noovfl(x);
    }";
    let r = run(
        src,
        1,
        &[("R", 5, "zeros")],
        &[
            ("x", "4294967290"),
            ("y", "5"),
            ("a", "2147483647"),
            ("b", "1"),
        ],
    );
    // x + y = 2^32 - 1 fits; + 0 fits. a + b overflows; a - b + b does not.
    assert_eq!(r.ints("R"), vec![1, 1, 0, 1, 1]);
    let r = run(
        src,
        2,
        &[("R", 5, "zeros")],
        &[("x", "4294967290"), ("y", "6"), ("a", "-5"), ("b", "1")],
    );
    assert_eq!(r.ints("R"), vec![0, 0, 1, 1, 1]);
    // As a precondition: a launch that overflows violates it.
    let src = "kernel void foo(unsigned x, unsigned y, unsigned z) {
        __requires(__add_noovfl(x, y, z));
        unsigned w = x + y + z;
        __assert(w >= x && w >= y && w >= z);
    }";
    let r = run(src, 2, &[], &[("x", "1"), ("y", "2"), ("z", "3")]);
    assert!(r.fault.is_none(), "{:?}", r.fault);
    let r = run(src, 2, &[], &[("x", "4294967295"), ("y", "2"), ("z", "3")]);
    assert!(r.raw_fault.expect("overflow").kind.blames_launch());
}

#[allow(dead_code)]
#[path = "../examples/conformance/runner.rs"]
mod runner;

#[test]
fn the_runner_gives_open_launch_sizes_the_largest_the_scaling_keeps() {
    let launch = |second: &str| {
        let h = runner::header(&format!("//pass\n//{second}\n")).expect("a header");
        assert!(h.unusual.is_none(), "{second}");
        runner::launch(&h).expect("a launch")
    };
    // 128 work-items per group (a divisor of the global size), 4 groups.
    assert_eq!(
        launch("--local_size=* --global_size=1024"),
        (vec![128], vec![4])
    );
    assert_eq!(
        launch("--local_size=* --global_size=96"),
        (vec![96], vec![1])
    );
    assert_eq!(
        launch("--local_size=* --global_size=200"),
        (vec![100], vec![2])
    );
    // A work-group size the header fixes is run as written (issue 26, item 9).
    assert_eq!(
        launch("--local_size=1024 --num_groups=*"),
        (vec![1024], vec![4])
    );
    assert_eq!(
        launch("--local_size=16 --global_size=*"),
        (vec![16], vec![4])
    );
    // Anything else that is not a number still gives no launch.
    let h = runner::header("//pass\n//--local_size=n\n").expect("a header");
    assert!(h.unusual.is_some());
}

/// Runs the conformance runner over kernels written to a fresh folder: each row's line.
fn corpus(kernels: &[(&str, &str)]) -> Vec<(String, bool, bool)> {
    let dir = std::env::temp_dir().join(format!("ksim-cl-gpuv-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for (name, src) in kernels {
        let d = dir.join(name);
        std::fs::create_dir_all(&d).expect("a temporary folder");
        std::fs::write(d.join("kernel.cl"), src).expect("a kernel file");
    }
    let report = runner::run(&dir).expect("the runner runs");
    let _ = std::fs::remove_dir_all(&dir);
    (report.rows.iter())
        .map(|r| (r.line(), r.agree, r.loaded()))
        .collect()
}

#[test]
fn a_kernel_whose_every_run_violates_an_assume_runs_vacuously() {
    let rows = corpus(&[
        (
            "a_false",
            "//pass\n//--local_size=64 --num_groups=64\n\
             __kernel void foo() { __assume(false); __assert(false); }",
        ),
        (
            "b_ids",
            "//pass\n//--local_size=1024 --num_groups=1\n\
             __kernel void foo(__local int *A, int offset) {\n\
               __requires(offset > get_local_size(0));\n\
               __assume(get_local_id(0) < 10);\n\
               A[get_local_id(0)] = A[get_local_id(0) + offset];\n\
             }",
        ),
        (
            "c_xfail",
            "//xfail:NOT_ALL_VERIFIED\n//--local_size=64 --num_groups=64\n\
             __kernel void foo() { __assume(false); __assert(false); }",
        ),
        (
            "d_requires",
            "//pass\n//--local_size=64 --num_groups=1\n\
             __kernel void foo(int n) { __requires(2 * n == 12345); }",
        ),
    ]);
    let vacuous = |l: &str| l.contains("ran vacuously: no run satisfies the assumptions");
    // `__assume(false)`: vacuous, agrees with pass.
    assert!(
        vacuous(&rows[0].0) && rows[0].1 && rows[0].2,
        "{:?}",
        rows[0]
    );
    // Thread 10 violates `__assume(tid < 10)` once the `__requires` holds (offset 129): an
    // assumption that excludes work-items, which GPUVerify reads per pair: (b), not agreement.
    assert!(vacuous(&rows[1].0) && !rows[1].1, "{:?}", rows[1]);
    assert!(rows[1].0.contains("thread 10"), "{:?}", rows[1]);
    assert!(rows[1].0.starts_with("DIFF (b)"), "{:?}", rows[1]);
    // Vacuous disagrees with an expected error.
    assert!(vacuous(&rows[2].0) && !rows[2].1, "{:?}", rows[2]);
    // A `__requires` no rule meets (no integer, not even the constant it names) is still no
    // launch, not vacuous.
    assert!(
        rows[3].0.contains("no launch") && !rows[3].2,
        "{:?}",
        rows[3]
    );
}
