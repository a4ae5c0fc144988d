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

/// A buffer of structs with padding (`long` aligned to 8): the file gives the bytes of the
/// array of structs, as Oclgrind reads them.
const POINTS: &str = "typedef struct { float w; long a; float c; } P;\n\
    __kernel void k(__global P *p, __global float *o) {\n\
    size_t i = get_global_id(0); o[i] = p[i].w * p[i].c + (float)p[i].a; }\n";

#[test]
fn a_buffer_of_structs_is_read_in_the_devices_layout() {
    // Two structs of 24 bytes, given as ints: w at 0, a at 8, c at 16 (bytes 4..8 and
    // 20..24 are padding, 99 here). 2.0f, 5.0f, 0.5f and 4.0f are 0x40000000, 0x40a00000,
    // 0x3f000000 and 0x40800000.
    let sim = files(
        "struct-buffer",
        POINTS,
        "kernel.cl\nk\n2 1 1\n2 1 1\n<size=48 int>\n1073741824 99 3 0 1084227584 99\n\
         1056964608 99 7 0 1082130432 99\n<size=8 float dump>\n0 0\n",
    );
    let o = ksim(&["run", s(&sim)]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        stdout(&o).contains("o[0] = 13\n  o[1] = 9\n"),
        "2 * 5 + 3 and 0.5 * 4 + 7: {}",
        text(&o)
    );
}

#[test]
fn a_buffer_of_structs_that_is_not_whole_structs_or_is_dumped_is_refused() {
    let sim = files(
        "struct-buffer-bad",
        POINTS,
        "kernel.cl\nk\n2 1 1\n2 1 1\n<size=40 int fill=0>\n<size=8 float>\n0 0\n",
    );
    let o = ksim(&["run", s(&sim)]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o)
            .contains("40 bytes are not a whole number of `struct (anonymous 1)` (24 bytes each)"),
        "{}",
        text(&o)
    );
    let sim = files(
        "struct-buffer-dump",
        POINTS,
        "kernel.cl\nk\n2 1 1\n2 1 1\n<size=48 int fill=0 dump>\n<size=8 float>\n0 0\n",
    );
    let o = ksim(&["run", s(&sim)]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("not supported yet: `dump` of `p`"),
        "{}",
        text(&o)
    );
}

#[test]
fn vectors_and_structs_by_value_are_their_bytes() {
    let sim = files(
        "by-value",
        "struct S { int a; float b; };\n\
         __kernel void k(__global float *o, float4 v, struct S q, int3 w) {\n\
         o[0] = v.y; o[1] = q.a + q.b; o[2] = w.z; o[3] = v.w; }\n",
        "kernel.cl\nk\n1 1 1\n1 1 1\n<size=16 float dump>\n0 0 0 0\n\
         <size=16> 1.5 2.5 3.5 4.5\n<size=8 int> 7 1069547520\n<size=16> 10 20 30 0\n",
    );
    let o = ksim(&["run", s(&sim)]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    // q.b is 1.5f (0x3fc00000 = 1069547520).
    assert!(
        stdout(&o).contains("o[0] = 2.5\n  o[1] = 8.5\n  o[2] = 30\n  o[3] = 4.5\n"),
        "{}",
        text(&o)
    );
}

#[test]
fn check_loads_and_validates_the_launch_of_a_sim_file() {
    let o = ksim(&["check", "tests/kernels/reverse_scale.sim"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        stdout(&o).contains("kernel `reverse_scale` of tests/kernels/reverse_scale.cl, 2 groups of 4 work-items (8)"),
        "{}",
        text(&o)
    );
    // A launch that does not bind (an argument missing) is a usage error in the file.
    let sim = files(
        "check-bad",
        SCALE,
        "# build: -DN=2\nkernel.cl\nk\n4 1 1\n2 1 1\n",
    );
    let o = ksim(&["check", s(&sim)]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("unexpected end of file"), "{}", text(&o));
}
