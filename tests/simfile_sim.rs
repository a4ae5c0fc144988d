//! `.sim` files in full (issue 26 item 7): the `# build:` options applied to the program,
//! struct buffers, every NDRange Oclgrind accepts, and `ksim check X.sim`.

mod common;
use common::{ksim, stdout, text, tmp};
use std::path::{Path, PathBuf};

/// Writes `kernel.cl` and `k.sim` into a fresh directory; the path of `k.sim`.
fn files(name: &str, cl: &str, sim: &str) -> PathBuf {
    let d = tmp(name);
    std::fs::write(d.join("kernel.cl"), cl).unwrap();
    std::fs::write(d.join("k.sim"), sim).unwrap();
    d.join("k.sim")
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

const SCALE: &str = "__kernel void k(__global int *a) { a[get_global_id(0)] *= N; }\n";

#[test]
fn the_build_comment_defines_the_programs_macros() {
    let sim = files(
        "build-defines",
        SCALE,
        "# build: -DN=3 -cl-fast-relaxed-math\nkernel.cl\nk\n4 1 1\n2 1 1\n<size=16 dump>\n1 2 3 4\n",
    );
    let o = ksim(&["run", s(&sim)]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(stdout(&o).contains("a[3] = 12"), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("build option `-cl-fast-relaxed-math` ignored"),
        "{err}"
    );
}

#[test]
fn the_command_lines_defines_replace_the_build_comment() {
    let sim = files(
        "build-override",
        SCALE,
        "# build: -DN=3\nkernel.cl\nk\n4 1 1\n2 1 1\n<size=16 dump>\n1 2 3 4\n",
    );
    let o = ksim(&["run", s(&sim), "-DN=5"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(stdout(&o).contains("a[3] = 20"), "{}", text(&o));
    assert!(text(&o).contains("are not applied"), "{}", text(&o));
}

#[test]
fn the_build_comments_include_directory_is_relative_to_the_sim_file() {
    let sim = files(
        "build-include",
        "#include \"n.h\"\n__kernel void k(__global int *a) { a[get_global_id(0)] *= N; }\n",
        "# build: -I inc\nkernel.cl\nk\n4 1 1\n2 1 1\n<size=16 dump>\n1 2 3 4\n",
    );
    let inc = sim.parent().unwrap().join("inc");
    std::fs::create_dir_all(&inc).unwrap();
    std::fs::write(inc.join("n.h"), "#define N 2\n").unwrap();
    let o = ksim(&["run", s(&sim)]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(stdout(&o).contains("a[3] = 8"), "{}", text(&o));
}

#[test]
fn an_unsupported_build_option_is_a_usage_error_in_the_sim_file() {
    let sim = files(
        "build-bad",
        SCALE,
        "# build: -DN=3 -O2\nkernel.cl\nk\n4 1 1\n2 1 1\n<size=16 dump>\n1 2 3 4\n",
    );
    let o = ksim(&["run", s(&sim)]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("unsupported build option `-O2`"),
        "{}",
        text(&o)
    );
    assert!(text(&o).contains("k.sim:1"), "{}", text(&o));
}
