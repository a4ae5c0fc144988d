//! Pointer values in the core (issue 26, item 2, first step): `ptr` variables and array
//! elements, `__addr(A, i)` (`&A[i]`), `__null()`, `p + k`, comparisons, `__deref_T(p)`
//! (`*p`) and `__store_T(p, v)` (`*p = v`), run by the reference semantics. An access
//! through a pointer is the same access as the direct one: same values, same race report
//! naming the array and element (replayable), and a bad pointer is a fault naming the
//! array, the offset and the thread. Kernels in `tests/kernels/ptrval_*.ksim`.

mod common;

use common::{json, ksim, ksim_in, text, tmp};

fn ints(v: &serde_json::Value, array: &str) -> Vec<i64> {
    v["arrays"][array][0]
        .as_array()
        .unwrap_or_else(|| panic!("array {array} in {v}"))
        .iter()
        .map(|x| x.as_i64().expect("an int"))
        .collect()
}

fn write(dir: &std::path::Path, name: &str, src: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, src).expect("write kernel");
    path.to_string_lossy().into_owned()
}

#[test]
fn a_pointer_chosen_at_run_time_reads_and_writes_the_chosen_buffer() {
    let k = "tests/kernels/ptrval_select.ksim";
    for (c, a, b, out) in [
        ("0", [100, 101, 102, 103], [1, 1, 1, 1], [0, 10, 20, 30]),
        ("1", [0, 1, 2, 3], [100, 101, 102, 103], [10, 10, 10, 10]),
    ] {
        let arg = format!("c={c}");
        let o = ksim(&[
            "run", k, "--input", "a=iota", "--input", "b=ones", "-D", &arg, "--json",
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        let v = json(&o);
        assert_eq!(ints(&v, "a"), a, "c={c}");
        assert_eq!(ints(&v, "b"), b, "c={c}");
        assert_eq!(ints(&v, "out"), out, "c={c}");
    }
}

#[test]
fn pointers_stored_in_a_local_array_are_loaded_compared_and_followed() {
    let o = ksim(&[
        "run",
        "tests/kernels/ptrval_table.ksim",
        "--input",
        "a=iota",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    // Thread t writes a[t+1] += 10t; thread 3's pointer (&a[0]) is not above &a[0].
    assert_eq!(ints(&json(&o), "a"), [0, 1, 12, 23]);
}

#[test]
fn the_core_printer_shows_pointer_nodes_as_c_writes_them() {
    let o = ksim(&["check", "--core", "tests/kernels/ptrval_select.ksim"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let t = text(&o);
    for want in [
        "var q : ptr",
        "p := &a[0];",
        "q := p + tid;",
        "*(int *)q",
        "*q := tid + 100;",
    ] {
        assert!(t.contains(want), "{want} in {t}");
    }
}

#[test]
fn a_race_through_pointers_names_the_element_and_replays() {
    let dir = tmp("ptrval-race");
    let k = write(
        &dir,
        "race.ksim",
        "kernel race(global int a[4]) launch(groups = 1, local_size = 4) {\n\
         \x20   ptr p = __addr(a, 3) - 2;\n\
         \x20   __store_int(p, tid);\n}\n",
    );
    let o = ksim_in(&dir, &["races", &k, "--report-dir", "rep"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let t = text(&o);
    assert!(t.contains("data race on a[1]"), "{t}");
    assert!(t.contains("thread 0 writes a[1]"), "{t}");
    let report = std::fs::read_dir(dir.join("rep"))
        .expect("reports")
        .next()
        .expect("one report")
        .expect("entry")
        .path();
    let o = ksim_in(&dir, &["replay", &report.to_string_lossy()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("race reproduced: a[1]"), "{}", text(&o));
}

#[test]
fn a_bad_pointer_is_a_fault_naming_the_array_offset_and_thread() {
    let dir = tmp("ptrval-faults");
    let cases = [
        (
            "oob",
            "kernel oob(global int a[4]) launch(groups = 1, local_size = 2) {\n\
             \x20   ptr p = __addr(a, 0) + 3 * tid + 2;\n\
             \x20   a[tid] = __deref_int(p);\n}\n",
            "out-of-bounds access a[5]: a has size [4] in thread 1",
        ),
        (
            "null",
            "kernel nul(global int a[4]) launch(groups = 1, local_size = 2) {\n\
             \x20   ptr n = __null();\n\
             \x20   if (tid == 1) { __store_int(n + 1, 3); }\n}\n",
            "null pointer dereference (null + 1) in thread 1",
        ),
        (
            "type",
            "kernel ty(global int a[4], global float f[2]) launch(groups = 1, local_size = 1) {\n\
             \x20   a[0] = __deref_int(__addr(f, 1));\n}\n",
            "a `int` access through a pointer to f[1], an array of `float` in thread 0",
        ),
    ];
    for (name, src, want) in cases {
        let k = write(&dir, &format!("{name}.ksim"), src);
        let o = ksim(&["run", &k, "--input", "a=iota"]);
        assert_eq!(o.status.code(), Some(1), "{name}: {}", text(&o));
        assert!(text(&o).contains(want), "{name}: {}", text(&o));
    }
}

#[test]
fn misused_pointers_are_type_errors() {
    let dir = tmp("ptrval-check");
    let cases = [
        ("p * 2", "int x = p * 2;", "`*` of a `ptr` and a `int`"),
        (
            "to int",
            "int x = p;",
            "a pointer converts to no other type",
        ),
        (
            "deref",
            "int x = __deref_int(3);",
            "`__deref_int` takes a pointer",
        ),
        ("addr", "ptr q = __addr(x0, 1);", "`x0` is no array"),
    ];
    for (name, stmt, want) in cases {
        let src = format!(
            "kernel k(global int a[4]) {{\n    int x0 = 0;\n    ptr p = __addr(a, 1);\n    {stmt}\n}}\n"
        );
        let k = write(&dir, "k.ksim", &src);
        let o = ksim(&["check", &k]);
        assert_eq!(o.status.code(), Some(2), "{name}: {}", text(&o));
        assert!(text(&o).contains(want), "{name}: {}", text(&o));
    }
}

#[test]
fn the_opencl_generator_refuses_pointer_values_clearly() {
    let o = ksim(&[
        "gpu",
        "emit",
        "tests/kernels/ptrval_table.ksim",
        "--input",
        "a=iota",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("cannot generate OpenCL for yet"),
        "{}",
        text(&o)
    );
}

#[test]
fn the_fast_executor_says_why_it_does_not_run_pointer_values() {
    let o = ksim(&["run", "tests/kernels/ptrval_table.ksim", "--engine", "fast"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("pointer values"), "{}", text(&o));
}
