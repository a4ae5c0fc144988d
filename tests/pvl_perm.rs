//! Issue 27, item 2: permissions of `.pvl` programs checked at run time. A `par` block's
//! precondition splits what the method holds, a barrier exchanges what its threads give
//! it, a read needs a positive fraction and a write the whole permission; a violation is
//! a fault (exit 1) naming the clause, the thread, the location, the fraction held and
//! the fraction needed.

use std::path::{Path, PathBuf};

mod common;
use common::{ksim, text, tmp};

const ROT: &str = "tests/kernels/pvl/left_rotation.pvl";
const RACY: &str = "tests/kernels/pvl/left_rotation_racy.pvl";

/// A PVL program written to a temporary file.
fn program(name: &str, text: &str) -> PathBuf {
    let p = tmp(name).join(format!("{name}.pvl"));
    std::fs::write(&p, text).unwrap();
    p
}

/// `ksim run FILE -D n=N` with its exit code and text.
fn run(file: &Path, n: usize) -> (Option<i32>, String) {
    let o = ksim(&["run", file.to_str().unwrap(), "-D", &format!("n={n}")]);
    (o.status.code(), text(&o))
}

/// Every thread asks for half of `a[0]`: two threads may, three may not.
const SPLIT: &str = "class C {
  context_everywhere a != null && a.length == n;
  void k(int[] a, int n) {
    par blk (int t = 0 .. n)
      requires Perm(a[0], 1\\2);
    {
      int x = a[0];
    }
  }
}
";

#[test]
fn a_par_block_splits_what_the_method_holds() {
    let p = program("perm_split", SPLIT);
    let (code, t) = run(&p, 2);
    assert_eq!(code, Some(0), "{t}");
    let (code, t) = run(&p, 3);
    assert_eq!(code, Some(1), "{t}");
    assert!(t.contains("perm_split.pvl:5:16"), "the clause: {t}");
    assert!(
        t.contains("location a[0], held 0, needed 1/2 in thread 2"),
        "{t}"
    );
}

#[test]
fn the_method_precondition_bounds_what_the_threads_get() {
    // The method holds half of each element: threads asking for all of theirs fault.
    let src = "class C {
  context_everywhere a != null && a.length == n;
  requires (\\forall* int i; 0 <= i && i < n; Perm(a[i], 1\\2));
  void k(int[] a, int n) {
    par blk (int t = 0 .. n)
      requires Perm(a[t], 1);
    {
      a[t] = 1;
    }
  }
}
";
    let p = program("perm_method", src);
    let (code, t) = run(&p, 4);
    assert_eq!(code, Some(1), "{t}");
    assert!(t.contains("perm_method.pvl:6:16"), "{t}");
    assert!(
        t.contains("location a[0], held 1/2, needed 1 in thread 0"),
        "{t}"
    );
    // Half each is what it holds: the write then lacks the other half.
    let p = program(
        "perm_method_half",
        &src.replace("Perm(a[t], 1)", "Perm(a[t], 1\\2)"),
    );
    let (code, t) = run(&p, 4);
    assert_eq!(code, Some(1), "{t}");
    assert!(t.contains("a write without the whole permission"), "{t}");
    assert!(t.contains("perm_method_half.pvl:8:7"), "{t}");
}

/// Each thread writes its element, then (after the barrier) reads its right neighbour's.
const EXCHANGE: &str = "class C {
  context_everywhere a != null && a.length == n;
  void k(int[] a, int n) {
    par blk (int t = 0 .. n)
      requires Perm(a[t], 1);
    {
      a[t] = t;
      barrier(blk)
        requires Perm(a[t], 1);
        ensures Perm(a[(t + 1) % n], 1\\2);
      { }
      int x = a[(t + 1) % n];
    }
  }
}
";

#[test]
fn a_barrier_hands_out_what_its_threads_gave_it() {
    let p = program("perm_exchange", EXCHANGE);
    let (code, t) = run(&p, 4);
    assert_eq!(code, Some(0), "{t}");
    // Handing out more than was given is a fault at the barrier's postcondition, even
    // though the method still holds the rest.
    let p = program(
        "perm_exchange_more",
        &EXCHANGE.replace(
            "requires Perm(a[t], 1);\n        ensures",
            "requires Perm(a[t], 1\\4);\n        ensures",
        ),
    );
    let (code, t) = run(&p, 4);
    assert_eq!(code, Some(1), "{t}");
    assert!(
        t.contains("a barrier hands out more permission than its threads gave it"),
        "{t}"
    );
    assert!(t.contains("perm_exchange_more.pvl:10:17"), "{t}");
    assert!(t.contains("held 1/4, needed 1/2"), "{t}");
}

#[test]
fn a_read_needs_a_positive_fraction() {
    let src = "class C {
  context_everywhere a != null && a.length == n;
  void k(int[] a, int n) {
    par blk (int t = 0 .. n)
      requires Perm(a[t], 1);
    {
      if (t + 1 < n) { a[t] = a[t + 1]; }
    }
  }
}
";
    let p = program("perm_read", src);
    let (code, t) = run(&p, 4);
    assert_eq!(code, Some(1), "{t}");
    assert!(t.contains("a read without permission"), "{t}");
    assert!(
        t.contains("location a[1], held 0, needed > 0 in thread 0"),
        "{t}"
    );
    // Guarded reads are checked only when evaluated: the last thread reads nothing.
    let guarded = src.replace(
        "requires Perm(a[t], 1);",
        "requires Perm(a[t], 1);\n      requires t + 1 < n ==> Perm(a[t + 1], 1\\2);",
    );
    let p = program("perm_read_guarded", &guarded);
    let (code, t) = run(&p, 1);
    assert_eq!(code, Some(0), "{t}");
}

#[test]
fn a_racy_program_fails_its_permissions_before_its_race() {
    let o = ksim(&["run", RACY, "-D", "size=8", "--input", "array=iota"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(t.contains("a write without the whole permission"), "{t}");
    assert!(t.contains("held 1/2, needed 1"), "{t}");
    assert!(!t.contains("data race"), "{t}");
    // The same program without its permissions shows the race.
    let src = std::fs::read_to_string(RACY).unwrap();
    let bare: String = src
        .lines()
        .filter(|l| !l.contains("Perm("))
        .map(|l| format!("{l}\n"))
        .collect();
    let p = program("perm_racy_bare", &bare);
    let o = ksim(&[
        "run",
        p.to_str().unwrap(),
        "-D",
        "size=8",
        "--input",
        "array=iota",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("race"), "{}", text(&o));
}

/// A left rotation of `n` elements by `s`, with its permissions.
fn rotation(s: usize) -> String {
    format!(
        "class R {{
  context_everywhere a != null && a.length == n;
  void rot(int[] a, int n) {{
    par blk (int t = 0 .. n)
      requires Perm(a[t], 1\\2) ** Perm(a[(t + {s}) % n], 1\\2);
      ensures Perm(a[t], 1);
    {{
      int v = a[(t + {s}) % n];
      barrier(blk)
        requires Perm(a[t], 1\\2) ** Perm(a[(t + {s}) % n], 1\\2);
        ensures Perm(a[t], 1);
      {{ }}
      a[t] = v;
    }}
  }}
}}
"
    )
}

/// Property (issue 27, item 3): an execution whose permissions all check has no data
/// race; removing the barrier (the exchange that makes the write safe) is a permission
/// fault. Over every shift of rotations of 2 to 5 elements.
#[test]
fn rotations_whose_permissions_check_have_no_race() {
    for n in 2..=5usize {
        for s in 1..n {
            let src = rotation(s);
            let p = program(&format!("perm_rot_{n}_{s}"), &src);
            let f = p.to_str().unwrap();
            let nn = format!("n={n}");
            let o = ksim(&["races", f, "-D", &nn, "--input", "a=iota"]);
            assert_eq!(o.status.code(), Some(0), "n={n} s={s}: {}", text(&o));
            let o = ksim(&["explore", f, "-D", &nn, "--random", "20"]);
            assert_eq!(o.status.code(), Some(0), "n={n} s={s}: {}", text(&o));
            let start = src.find("      barrier(blk)").unwrap();
            let end = src.find("{ }\n").unwrap() + 4;
            let racy = format!("{}{}", &src[..start], &src[end..]);
            let p = program(&format!("perm_rot_racy_{n}_{s}"), &racy);
            let o = ksim(&["run", p.to_str().unwrap(), "-D", &nn]);
            assert_eq!(o.status.code(), Some(1), "n={n} s={s}: {}", text(&o));
            assert!(
                text(&o).contains("a write without the whole permission"),
                "n={n} s={s}: {}",
                text(&o)
            );
        }
    }
}

#[test]
fn the_seed_rotation_runs_clean_with_its_permissions_checked() {
    let o = ksim(&["races", ROT, "-D", "size=8", "--input", "array=iota"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}
