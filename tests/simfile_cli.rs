//! Oclgrind simulator files (`.sim`) through the command line: a clean and a racy file,
//! Oclgrind's dump format on standard output, the `.sim` launch being the flags launch,
//! errors pointing into the `.sim` file, and `gpu compare` running the program as written.

mod common;
use common::{ksim, ksim_in, stdout, text};

const CLEAN: &str = "tests/kernels/reverse_scale.sim";
const RACY: &str = "tests/kernels/rotate_racy.sim";

#[test]
fn run_prints_the_dumps_in_oclgrinds_format() {
    let o = ksim(&["run", CLEAN]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(
        stdout(&o),
        "\nArgument 'out': 32 bytes\n  out[0] = 9\n  out[1] = 6\n  out[2] = 3\n  out[3] = 0\n  \
         out[4] = 21\n  out[5] = 18\n  out[6] = 15\n  out[7] = 12\n\n",
        "standard output is Oclgrind's, line for line"
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("kernel reverse_scale, 2 groups of 4 threads"),
        "{err}"
    );
    assert!(err.contains("no race, fault or divergence"), "{err}");
}

#[test]
fn a_sim_launch_is_the_flags_launch() {
    let sim = ksim(&["run", "--json", CLEAN]);
    let flags = ksim(&[
        "run",
        "--json",
        "tests/kernels/reverse_scale.cl",
        "--global",
        "8",
        "--local",
        "4",
        "--input",
        "in=iota:8",
        "--input",
        "out=zeros:8",
        "--arg",
        "factor=3",
        "--input",
        "tmp=zeros:4",
    ]);
    assert!(
        sim.status.success() && flags.status.success(),
        "{}{}",
        text(&sim),
        text(&flags)
    );
    assert_eq!(stdout(&sim), stdout(&flags));
}

#[test]
fn the_racy_file_races_in_every_command() {
    // The kernel reads `tmp` (a `__local` argument, undefined at the start) where it races:
    // `--uninit zero` leaves the race as the finding.
    let o = ksim(&["races", "--no-reports", "--uninit", "zero", RACY]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("data race on tmp["), "{}", text(&o));
    assert!(
        text(&o).contains("rotate_racy.cl:7:"),
        "the race points into the program: {}",
        text(&o)
    );
    let o = ksim(&["run", "--uninit", "zero", RACY]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert_eq!(
        stdout(&o),
        "\nArgument 'data': 16 bytes\n  data[0] = 0\n  data[1] = 0\n  data[2] = 0\n  data[3] = 1\n\n"
    );
    let o = ksim(&[
        "explore",
        "--exhaustive",
        "--no-reports",
        "--uninit",
        "zero",
        RACY,
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(stdout(&o).contains("EXHAUSTIVE"), "{}", text(&o));
    let o = ksim(&["trace", RACY]);
    assert!(stdout(&o).contains("tmp[l] = data[g]"), "{}", text(&o));
}

#[test]
fn errors_point_into_the_sim_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy("tests/kernels/reverse_scale.cl", dir.path().join("k.cl")).unwrap();
    let cases = [
        (
            "k.cl\nreverse_scale\n8 1 1\n4 1 1\n<size=32 range=0:1:7>\n<size=32 fill=0 dump>\n<size=4 bogus> 3\n<size=16>\n",
            "bad.sim:7:9",
            "unrecognised header token 'bogus' (argument 2: factor)",
        ),
        (
            "k.cl\nnope\n8 1 1\n4 1 1\n",
            "bad.sim:2:1",
            "no kernel `nope`",
        ),
        (
            "missing.cl\nk\n8 1 1\n4 1 1\n",
            "bad.sim:1:1",
            "cannot use the program file",
        ),
        (
            "k.cl\nreverse_scale\n8 1 1\n3 1 1\n",
            "bad.sim:3:1",
            "work-group size must divide NDRange exactly",
        ),
        (
            "k.cl\nreverse_scale\n8 1 1\n4 1 1\n<size=32 range=0:1:7>\n<size=32>\n1 2 3\n",
            "bad.sim",
            "unexpected end of file (argument 1: out)",
        ),
    ];
    for (sim, at, msg) in cases {
        std::fs::write(dir.path().join("bad.sim"), sim).unwrap();
        let o = ksim_in(dir.path(), &["run", "bad.sim"]);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        assert!(text(&o).contains(at), "{at} in {}", text(&o));
        assert!(text(&o).contains(msg), "{msg} in {}", text(&o));
    }
    let o = ksim(&["run", CLEAN, "--global", "8"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("gives the kernel and its whole launch"),
        "{}",
        text(&o)
    );
}

#[test]
fn gpu_compare_runs_the_program_as_written() {
    if gpu::device_or_skip("gpu compare of a .sim file").is_none() {
        return;
    }
    let o = ksim(&["gpu", "compare", CLEAN]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        stdout(&o).contains("match (16 elements compared")
            && stdout(&o).contains(
                "the program as written (tests/kernels/reverse_scale.cl, built with -I tests/kernels)"
            ),
        "{}",
        text(&o)
    );
    // A `.cl` kernel with -D: the macro reaches the simulation and the device build alike
    // (a device build without it would compute other values and mismatch).
    let o = ksim(&[
        "gpu",
        "compare",
        "tests/kernels/reverse_scale.cl",
        "-D",
        "OFFSET=100",
        "--global",
        "8",
        "--local",
        "4",
        "--input",
        "in=iota:8",
        "--input",
        "out=zeros:8",
        "--arg",
        "factor=3",
        "--input",
        "tmp=zeros:4",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        stdout(&o).contains("built with -I tests/kernels -D OFFSET=100"),
        "{}",
        text(&o)
    );
}
