//! Pointers stored in private memory (`lang/src/cl/ptrmem.rs`, issue 26 item 2): arrays
//! of pointers and pointers to pointer variables, on the clang front end. Each kernel's
//! values are worked out by hand in its comment, checked on both engines (which must
//! agree) and, where an OpenCL device is installed, against it with `gpu compare`.
//! Skipped without Debian's `clang-15`.

mod common;
use common::{has_clang, ksim_clang, text};

const N: usize = 4;

/// `ksim ARGS` on `src` written to `k.cl` in a fresh folder named after `test`, with
/// `N` work-items in one group and each buffer of `bufs` `N` zeros.
fn ksim_on(test: &str, src: &str, cmd: &[&str], bufs: &[&str]) -> std::process::Output {
    let d = common::tmp(test);
    std::fs::write(d.join("k.cl"), src).expect("write kernel");
    let n = N.to_string();
    let inputs: Vec<String> = bufs.iter().map(|b| format!("{b}=zeros:{N}")).collect();
    let mut args: Vec<&str> = cmd.to_vec();
    args.extend(["k.cl", "--global", &n, "--local", &n]);
    for i in &inputs {
        args.extend(["--input", i]);
    }
    ksim_clang(&d, &args)
}

/// The buffers `bufs` after `ksim run` on both engines (which must agree), and the same
/// launch compared with the OpenCL device where there is one.
fn run_buffers(test: &str, src: &str, bufs: &[&str]) -> Vec<Vec<i64>> {
    let mut outs = Vec::new();
    for engine in ["reference", "fast"] {
        let o = ksim_on(test, src, &["run", "--engine", engine], bufs);
        assert!(o.status.success(), "{engine}:\n{}", text(&o));
        let out = common::stdout(&o);
        let values: Vec<Vec<i64>> = bufs
            .iter()
            .map(|b| {
                let prefix = format!("{b} = ");
                let line = out
                    .lines()
                    .find_map(|l| l.strip_prefix(&prefix))
                    .unwrap_or_else(|| panic!("no buffer {b}: {out}"));
                line.split_whitespace()
                    .map(|v| v.parse().expect("an integer"))
                    .collect()
            })
            .collect();
        outs.push(values);
    }
    assert_eq!(outs[0], outs[1], "the engines differ");
    if gpu::device_or_skip(test).is_some() {
        let o = ksim_on(test, src, &["gpu", "compare"], bufs);
        assert!(o.status.success(), "{}", text(&o));
        assert!(common::stdout(&o).starts_with("match"), "{}", text(&o));
    }
    outs.remove(0)
}

/// The message of a kernel ksim refuses (exit 2).
fn refusal(test: &str, src: &str) -> String {
    let d = common::tmp(test);
    std::fs::write(d.join("k.cl"), src).expect("write kernel");
    let o = ksim_clang(&d, &["check", "k.cl"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    text(&o)
}

const ARRAY: &str = "
kernel void k(global int *a, global int *b, global int *o) {
  int i = get_global_id(0);
  global int *ps[3] = {a, b};
  ps[0][i] = 10 + i;
  *(ps[1] + i) = 20 + i;
  ps[2] = i % 2 ? ps[1] : ps[0];
  ps[2] += i;
  o[i] = *ps[2] + (ps[2] == a + i) + 100 * (ps[2] != 0);
}
";

#[test]
fn an_array_of_pointers_holds_reads_and_writes_through_its_elements() {
    if !has_clang() {
        return;
    }
    // a[i] = 10 + i, b[i] = 20 + i; ps[2] is &a[i] for even i (10 + i + 1 + 100), &b[i]
    // for odd i (20 + i + 100).
    assert_eq!(
        run_buffers("ptrmem-array", ARRAY, &["a", "b", "o"]),
        [
            vec![10, 11, 12, 13],
            vec![20, 21, 22, 23],
            vec![111, 121, 113, 123]
        ]
    );
}

#[test]
fn an_element_the_list_does_not_give_is_null_and_faults_when_followed() {
    if !has_clang() {
        return;
    }
    let src = "kernel void k(global int *a) {
  global int *ps[2] = {a};
  *ps[1] = 1;
}
";
    let o = ksim_on("ptrmem-null", src, &["run"], &["a"]);
    let t = text(&o);
    assert_ne!(o.status.code(), Some(0), "{t}");
    assert!(t.contains("null pointer dereference"), "{t}");
    assert!(t.contains("ps.1"), "{t}");
}

const POINTER_TO_POINTER: &str = "
void retarget(global int **q, global int *to) { *q = to; }
void bump(global int **q) { *q += 1; }
kernel void k(global int *a, global int *b) {
  int i = get_global_id(0);
  global int *p = a;
  global int **pp = &p;
  if (i % 2) retarget(&p, b);
  (*pp)[i] = 5 + i;
  bump(pp);
  global int *ps[2] = {a, b};
  global int **qq = &ps[1];
  *qq = ps[0];
  if (i == 0) { *ps[1] = *ps[1] * 2; }
}
";

#[test]
fn a_pointer_to_a_pointer_variable_reads_and_sets_it_also_in_a_helper() {
    if !has_clang() {
        return;
    }
    // p is `a` for even i, `b` for odd i (set through `retarget(&p, b)`), so `(*pp)[i]`
    // writes a[i] = 5 + i or b[i] = 5 + i; `bump(pp)` moves p (unused afterwards). Then
    // `ps[1]` is set to `a` through `qq`, and item 0 doubles a[0] through it.
    assert_eq!(
        run_buffers("ptrmem-pp", POINTER_TO_POINTER, &["a", "b"]),
        [vec![10, 0, 7, 0], vec![0, 6, 0, 8]]
    );
}

#[test]
fn a_race_through_a_pointer_to_a_pointer_names_the_buffer_and_element() {
    if !has_clang() {
        return;
    }
    // Items 0 and 2 both move p to &a[1] and write it.
    let src = "kernel void k(global int *a) {
  global int *p = a;
  global int **pp = &p;
  *pp += 1;
  **pp = get_global_id(0);
}
";
    let o = ksim_on("ptrmem-race", src, &["run"], &["a"]);
    let t = text(&o);
    assert!(t.contains("race"), "{t}");
    assert!(t.contains("a[1]"), "{t}");
}

#[test]
fn what_ptrmem_does_not_model_is_refused_by_name() {
    if !has_clang() {
        return;
    }
    for (src, want) in [
        (
            "kernel void k(global int *a) { global int *ps[2] = {a, a}; int j = get_global_id(0); ps[j][0] = 1; }",
            "this index into the array of pointers `ps`",
        ),
        (
            "kernel void k(global int *a) { global int **pp; }",
            "a pointer to a pointer without the address it holds",
        ),
        (
            "kernel void k(global int *a) { global int *p = a, *q = a; global int **pp = &p; pp = &q; }",
            "using an address `&...` as a value",
        ),
        (
            "kernel void k(global int *a) { global int *ps[2][2]; }",
            "this array of pointers (`ps`",
        ),
    ] {
        let t = refusal("ptrmem-refused", &format!("{src}\n"));
        assert!(t.contains("not supported yet"), "{src}: {t}");
        assert!(t.contains(want), "{src}: {t}");
    }
}

/// In the style of CLsmith's generated programs (Lidbury et al., PLDI 2015), written here:
/// private variables reached through arrays of pointers, pointers to them (three levels)
/// and a struct with a pointer member, and a helper that sets its caller's pointer.
const CLSMITH_STYLE: &str = "
struct S0 { int f0; int *f1; };
void func_2(int **p_3, int *p_4) { *p_3 = p_4; }
kernel void k(global int *o) {
  int l_1 = 7;
  int l_2 = 9;
  int *l_5[3] = {&l_1, &l_1, &l_2};
  int **l_6 = &l_5[1];
  struct S0 l_7 = {3, &l_2};
  **l_6 = 11;
  int ***l_8 = &l_6;
  ***l_8 += 1;
  func_2(&l_5[0], l_7.f1);
  *l_5[0] += *l_7.f1 + l_7.f0;
  *l_7.f1 += (l_5[0] == l_5[2]);
  o[get_global_id(0)] = l_1 * 100 + l_2;
}
";

#[test]
fn a_clsmith_style_program_of_pointers_to_private_variables_runs() {
    if !has_clang() {
        return;
    }
    // l_1 = 11 through l_5[1], 12 through l_8; l_5[0] becomes &l_2 (func_2); l_2 = 9 + 9
    // + 3 = 21, then 22 (l_5[0] == l_5[2], both &l_2): o = 12 * 100 + 22 in every item.
    assert_eq!(
        run_buffers("ptrmem-clsmith", CLSMITH_STYLE, &["o"]),
        [vec![1222; N]]
    );
}
