//! Issue 27, third step: PVL methods that are more than one `par` block (statements around
//! them, `parallel` regions, blocks joined with `and`, class fields, `invariant` and
//! `atomic` blocks, `new` arrays) and `--no-specs`.

use std::path::PathBuf;

mod common;
use common::{ksim, text, tmp};

/// A PVL program written to a temporary file.
fn program(name: &str, text: &str) -> PathBuf {
    let p = tmp(name).join(format!("{name}.pvl"));
    std::fs::write(&p, text).unwrap();
    p
}

const REGIONS: &str = "class C {
  int x;
  context_everywhere ar.length == N;
  context Perm(x, 1);
  context (\\forall* int i; 0 <= i && i < N; Perm(ar[i], write));
  ensures x == 7 && (\\forall int i; 0 <= i && i < N; ar[i] == i);
  void m(int N, int[N] ar) {
    int k = 7;
    parallel {
      par context Perm(x, 1); ensures x == k; { x = k; }
      par (int i = 0 .. N) context Perm(ar[i], write); ensures ar[i] == i; { ar[i] = i; }
    }
    assert x == k;
  }
}
";

#[test]
fn a_parallel_region_runs_its_blocks_side_by_side_after_the_methods_statements() {
    let p = program("pvl-regions", REGIONS);
    let o = ksim(&["run", p.to_str().unwrap(), "-D", "N=4"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    // One block of one thread and one of N: N + 1 work-items.
    assert!(t.contains("1 group of 5 threads"), "{t}");
    assert!(t.contains("ar = 0 1 2 3"), "{t}");
    assert!(t.contains("x  = 7"), "{t}");
}

#[test]
fn two_blocks_writing_a_field_race() {
    let p = program(
        "pvl-field-race",
        "class C {\n  int x;\n  void m() {\n    par { x = 1; } and par { x = 2; }\n  }\n}\n",
    );
    let o = ksim(&["run", p.to_str().unwrap()]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(t.contains("data race on x[0]"), "{t}");
}

#[test]
fn a_block_without_the_permission_to_a_field_is_a_violation() {
    let src = REGIONS.replace("par context Perm(x, 1); ensures", "par ensures");
    let p = program("pvl-field-perm", &src);
    let o = ksim(&["run", p.to_str().unwrap(), "-D", "N=4"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(t.contains("location x[0], held 0, needed 1"), "{t}");
}

const INVARIANT: &str = "class Main {
  int x, y, z;
  context Perm(x, write) ** Perm(y, write) ** Perm(z, write);
  ensures x + y == z;
  void swap() {
    x = 0; y = 1; z = 1;
    invariant inv(Perm(x, 1\\2) ** Perm(y, 1\\2) ** Perm(z, 1\\2) ** x + y == z) {
      atomic(inv) {
        int tmp = x;
        x = y;
        y = tmp;
      }
    }
  }
}
";

#[test]
fn an_atomic_section_must_restore_its_invariant() {
    let p = program("pvl-inv", INVARIANT);
    let o = ksim(&["run", p.to_str().unwrap()]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    // The atomic section is named: ksim runs it as plain statements.
    assert!(
        t.contains("pvl-inv.pvl:8:7: `atomic` section run as plain statements"),
        "{t}"
    );
    let p = program(
        "pvl-inv-broken",
        &INVARIANT.replace("y = tmp;", "y = tmp + 1;"),
    );
    let o = ksim(&["run", p.to_str().unwrap()]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(t.contains("an assertion does not hold"), "{t}");
    assert!(t.contains("pvl-inv-broken.pvl:7:"), "{t}");
}

#[test]
fn arrays_the_method_allocates_are_lent_to_its_blocks() {
    let src = "class C {
  void m() {
    int[4] a = new int[4];
    par fst(int i = 0 .. 4) context Perm(a[i], 1); { a[i] = i; }
    par snd(int j = 0 .. 4) context Perm(a[j], 1\\2); { int v = a[j]; }
  }
}
";
    let p = program("pvl-new", src);
    let o = ksim(&["run", p.to_str().unwrap()]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(t.contains("a = 0 1 2 3"), "{t}");
    // Writing with half of the permission is a violation.
    let p = program(
        "pvl-new-half",
        &src.replace("{ int v = a[j]; }", "{ a[j] = 0; }"),
    );
    let o = ksim(&["run", p.to_str().unwrap()]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(t.contains("held 1/2, needed 1"), "{t}");
}

#[test]
fn no_specs_runs_the_program_without_its_specifications() {
    let p = program(
        "pvl-nospecs",
        &INVARIANT.replace("y = tmp;", "y = tmp + 1;"),
    );
    let f = p.to_str().unwrap();
    let o = ksim(&["run", f, "--no-specs"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(!t.contains("permissions are checked"), "{t}");
    let o = ksim(&["check", f, "--no-specs"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}

#[test]
fn a_barrier_in_a_block_that_shares_its_work_group_is_refused() {
    let p = program(
        "pvl-shared-barrier",
        "class C {\n  void m(int[4] a) {\n    par b (int t = 0 .. 2) { barrier(b) {} } and par (int u = 0 .. 2) { }\n  }\n}\n",
    );
    let o = ksim(&["check", p.to_str().unwrap()]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(
        t.contains("a barrier stands only in a `par` block that runs alone"),
        "{t}"
    );
}

/// A method that calls another (`inc(n, 5, a);`): the callee is inlined, its
/// precondition checked at the call, its postcondition (with `\old`) at the return.
const CALLS: &str = "class C {
  requires (\\forall* int i; 0 <= i && i < n; Perm(a[i], write));
  requires (\\forall int i; 0 <= i && i < n; a[i] == k);
  ensures (\\forall* int i; 0 <= i && i < n; Perm(a[i], write));
  ensures a[0] == \\old(a[0]) + 1;
  void inc(int n, int k, int[n] a) {
    par (int t = 0 .. n)
      requires Perm(a[t], write);
      ensures Perm(a[t], write);
    { a[t] = a[t] + 1; }
  }

  requires (\\forall* int i; 0 <= i && i < n; Perm(a[i], write));
  ensures (\\forall* int i; 0 <= i && i < n; Perm(a[i], write));
  void twice(int n, int[n] a) {
    par (int t = 0 .. n)
      requires Perm(a[t], write);
      ensures Perm(a[t], write);
    { a[t] = 5; }
    inc(n, 5, a);
    inc(n, 6, a);
    assert a[0] == 7;
  }
}
";

#[test]
fn a_method_call_runs_the_callee_with_its_contract_checked() {
    let p = program("pvl-calls", CALLS);
    let f = p.to_str().unwrap();
    let o = ksim(&["run", f, "--kernel", "twice", "-D", "n=4"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(t.contains("a = 7 7 7 7"), "{t}");
    // The second call's precondition (a[i] == 5) fails at the call.
    let p = program(
        "pvl-calls-pre",
        &CALLS.replace("inc(n, 6, a)", "inc(n, 5, a)"),
    );
    let o = ksim(&["run", p.to_str().unwrap(), "--kernel", "twice", "-D", "n=4"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(
        t.contains("a call violates its function's precondition (`__call_requires`)"),
        "{t}"
    );
    assert!(t.contains("pvl-calls-pre.pvl:3:3"), "{t}");
    // A postcondition the callee does not meet fails at the return.
    let p = program(
        "pvl-calls-post",
        &CALLS.replace("\\old(a[0]) + 1", "\\old(a[0]) + 2"),
    );
    let o = ksim(&["run", p.to_str().unwrap(), "--kernel", "twice", "-D", "n=4"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(t.contains("a postcondition does not hold"), "{t}");
    assert!(t.contains("pvl-calls-post.pvl:5:3"), "{t}");
    // A caller that holds half of each element cannot lend the callee the whole.
    let callee_end = CALLS.find("\n\n").unwrap() + 2;
    let half = format!(
        "{}  requires (\\forall* int i; 0 <= i && i < n; Perm(a[i], 1\\2));\n  void once(int n, int[n] a) {{\n    inc(n, 0, a);\n  }}\n}}\n",
        &CALLS[..callee_end]
    );
    let p = program("pvl-calls-perm", &half);
    let o = ksim(&["run", p.to_str().unwrap(), "--kernel", "once", "-D", "n=4"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(t.contains("held 1/2, needed 1"), "{t}");
    // A caller without permissions: the callee's are named as not checked.
    let bare = half.replace(
        "  requires (\\forall* int i; 0 <= i && i < n; Perm(a[i], 1\\2));\n  void once",
        "  void once",
    );
    assert_ne!(bare, half);
    let p = program("pvl-calls-bare", &bare);
    let o = ksim(&["run", p.to_str().unwrap(), "--kernel", "once", "-D", "n=4"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(
        t.contains("the permissions in `inc`'s specifications are not checked: the calling method has none"),
        "{t}"
    );
}

#[test]
fn a_call_of_a_method_without_a_body_is_refused_by_name() {
    let p = program(
        "pvl-nobody",
        "class C {\n  int f();\n  void m(int[4] a) {\n    par (int t = 0 .. 4) { a[t] = f(); }\n  }\n}\n",
    );
    let o = ksim(&["check", p.to_str().unwrap()]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(
        t.contains("`f` has no body: ksim cannot run a call of it"),
        "{t}"
    );
    assert!(t.contains("pvl-nobody.pvl:4:35"), "{t}");
}
