//! The GPUVerify conformance runner as a test: it completes over the corpus, the number of
//! kernels clang-15 refuses as invalid OpenCL C 1.2 (class (e)) is the one measured, the
//! numbers of valid kernels that load and agree do not fall below the figures measured
//! (docs/conformance.md), and no disagreement among them is a possible ksim bug
//! (class (a): unreviewed, or reviewed as a bug), and every reviewed exception still classifies a
//! disagreement.

#[allow(dead_code)]
#[path = "../examples/conformance/runner.rs"]
mod runner;

use std::path::Path;

/// Measured with `cargo run --release --example conformance -- ../shared/corpora/gpuverify-opencl`:
/// of the 486 kernels, 4 are invalid OpenCL C 1.2 (clang-15 refuses them, as PoCL and
/// Oclgrind do); the floors count the 482 valid ones.
const INVALID: usize = 4;
const LOADED_AT_LEAST: usize = 463;
const AGREE_AT_LEAST: usize = 411;

#[test]
fn gpuverify_corpus_loads_agrees_and_has_no_class_a() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpora/gpuverify-opencl");
    if !dir.is_dir() {
        assert!(
            std::env::var_os("KSIM_REQUIRE_CORPUS").is_none(),
            "KSIM_REQUIRE_CORPUS is set but {} is missing",
            dir.display()
        );
        eprintln!("skipped: no corpus at {}", dir.display());
        return;
    }
    let report = runner::run(&dir).expect("the runner completes");
    let c = report.counts();
    assert_eq!(c.total, 486, "the corpus has 486 kernels");
    assert_eq!(c.invalid, INVALID, "{}", report.summary());
    assert!(c.loaded >= LOADED_AT_LEAST, "{}", report.summary());
    assert!(c.agree >= AGREE_AT_LEAST, "{}", report.summary());
    let class_a: Vec<String> = report
        .rows
        .iter()
        .filter(|r| matches!(r.class, Some((runner::Class::A, _))))
        .map(|r| r.line())
        .collect();
    assert!(
        class_a.is_empty(),
        "possible ksim bugs:\n{}",
        class_a.join("\n")
    );
    let stale = report.stale_exceptions();
    assert!(
        stale.is_empty(),
        "EXCEPTIONS entries that classify no disagreement (remove them):\n{}",
        stale.join("\n")
    );
}

#[test]
fn a_work_group_size_the_header_fixes_is_run_as_it_is() {
    let h = runner::header("//pass\n//--local_size=256 --num_groups=8\n").unwrap();
    assert_eq!(runner::launch(&h).unwrap(), (vec![256], vec![4]));
    let h = runner::header("//pass\n//--local_size=* --num_groups=8\n").unwrap();
    assert_eq!(
        runner::launch(&h).unwrap().0,
        vec![128],
        "an open size is scaled"
    );
    let h = runner::header("//pass\n//--local_size=512,512,512 --num_groups=2\n").unwrap();
    assert_eq!(
        runner::launch(&h).unwrap().0,
        vec![128, 1, 1],
        "a launch beyond 2^16 work-items is scaled"
    );
    let h = runner::header(
        "//pass\n//--local_size=64 --num_groups=2\n\
         __kernel __attribute__((reqd_work_group_size(16, 1, 1))) void k() {}\n",
    )
    .unwrap();
    assert_eq!(runner::launch(&h).unwrap().0, vec![16]);
}
