//! Issue 31, item 3, through the binary: `ksim equiv ORIGINAL TRANSFORMED` runs both
//! kernels on the inputs given and on random inputs, under the canonical schedule and a
//! bounded exploration, and reports the first difference (exit 1) or what it tried (exit 0).

mod common;
use common::{json, ksim, stdout, text};

const ALP: &str = "tests/kernels/alpinist";

#[test]
fn a_kernel_is_equivalent_to_itself_on_every_input_and_schedule_tried() {
    let o = ksim(&[
        "equiv",
        "examples/kogge_stone.ksim",
        "examples/kogge_stone.ksim",
        "-D",
        "n=8",
        "--input",
        "in=iota",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(
        stdout(&o),
        "ksim equiv: examples/kogge_stone.ksim (original) vs examples/kogge_stone.ksim (transformed)\n\
         compared: in, out\n\
         tried the inputs given: canonical schedule; explored 1 + 1 executions (every schedule)\n\
         tried random inputs (seed 1): canonical schedule; explored 1 + 1 executions (every schedule)\n\
         tried random inputs (seed 2): canonical schedule; explored 1 + 1 executions (every schedule)\n\
         tried random inputs (seed 3): canonical schedule; explored 1 + 1 executions (every schedule)\n\
         equivalent on everything tried\n"
    );
}

#[test]
fn a_wrong_result_is_reported_with_the_element_both_values_and_the_schedule() {
    let o = ksim(&[
        "equiv",
        "examples/kogge_stone.ksim",
        "examples/scan_off_by_one.ksim",
        "-D",
        "n=8",
        "--input",
        "in=ones",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        stdout(&o).ends_with(
            "DIFFERENT: out[4] is 5 in the original, 4 in the transformed kernel\n  \
             with the inputs given, schedule canonical\n"
        ),
        "{}",
        text(&o)
    );
}

#[test]
fn random_inputs_find_what_the_inputs_given_hide() {
    // All-zero inputs (none given) make every scan's output zero; seed 1 tells an inclusive
    // scan from an exclusive one.
    let o = ksim(&[
        "equiv",
        "examples/kogge_stone.ksim",
        "examples/blelloch.ksim",
        "-D",
        "n=8",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let j = json(&o);
    let d = &j["difference"];
    assert_eq!(d["kind"], "array");
    assert_eq!(d["inputs"]["kind"], "random");
    assert_eq!(d["inputs"]["seed"], 1);
    assert_eq!(d["element"], "out[0]");
    assert_eq!(
        d["values"][1], "0",
        "an exclusive scan starts at the identity"
    );
    assert_eq!(j["trials"].as_array().unwrap().len(), 2);
}

#[test]
fn a_new_race_is_a_difference() {
    let o = ksim(&[
        "equiv",
        "examples/kogge_stone.ksim",
        "examples/kogge_stone_racy.ksim",
        "-D",
        "n=8",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let d = &json(&o)["difference"];
    assert_eq!(d["kind"], "race");
    assert_eq!(d["schedule"], "canonical");
    assert!(d["message"]
        .as_str()
        .unwrap()
        .starts_with("a data race on out["));
}

#[test]
fn a_store_only_another_schedule_reaches_is_found_by_exploration_and_replays() {
    let (a, b) = (
        format!("{ALP}/identity_copy.ksim"),
        format!("{ALP}/ticket_copy.ksim"),
    );
    // The canonical schedule alone sees no difference.
    let o = ksim(&["equiv", &a, &b, "-D", "n=2", "--max-executions", "0"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let o = ksim(&["equiv", &a, &b, "-D", "n=2"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let out = stdout(&o);
    assert!(
        out.contains("not compared: count (only in the transformed kernel)\n"),
        "{out}"
    );
    assert!(
        out.ends_with(
            "DIFFERENT: out[0] is 0 in the original, 1 in the transformed kernel\n  \
             with the inputs given, schedule '1×2 0×2'\n"
        ),
        "{out}"
    );
    // The schedule reproduces the transformed store.
    let r = ksim(&["run", &b, "-D", "n=2", "--schedule", "1×2 0×2"]);
    assert!(stdout(&r).contains("out   = 1 0"), "{}", text(&r));
}

#[test]
fn usage_errors_exit_2() {
    let o = ksim(&["equiv", "examples/kogge_stone.ksim"]);
    assert_eq!(o.status.code(), Some(2));
    let o = ksim(&["equiv", "examples/kogge_stone.ksim", "no/such.ksim"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("no/such.ksim"), "{}", text(&o));
    // No array in common: nothing to compare is refused, not called equivalent.
    let other = common::tmp("equiv-no-common").join("k.ksim");
    std::fs::write(
        &other,
        "kernel k(global int res[n]) launch(groups = 1, local_size = n) { res[tid] = 1; }\n",
    )
    .unwrap();
    let o = ksim(&[
        "equiv",
        "examples/kogge_stone.ksim",
        other.to_str().unwrap(),
        "-D",
        "n=4",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("no array in common"), "{}", text(&o));
}
