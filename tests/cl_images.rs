//! OpenCL C images and samplers (lang/src/cl/images.rs): texel arrays, the sampler's
//! addressing modes with the nearest filter, access qualifiers, queries, races on texels.
//! Every kernel runs on the reference semantics and the fast executor, which must agree;
//! the `cli_*` tests run `ksim run` with `--input img=WxH:CONTENTS`.

mod common;
use common::cl::{run_with_images, Ran};
use common::{ksim, stdout, text};

/// Runs `src` with `groups` × `local` work-items; images as `(name, sizes, contents)`,
/// buffers as `(name, size, spec)`, scalars as `(name, value)` (samplers by bits).
fn run(
    src: &str,
    groups: &[usize],
    local: &[usize],
    images: &[(&str, &[usize], &str)],
    bufs: &[(&str, usize, &str)],
    args: &[(&str, &str)],
) -> Ran {
    run_with_images(src, groups, local, images, bufs, args)
}

const COPY: &str = "__kernel void k(__write_only image2d_t dest, image2d_t src) {
  const sampler_t sampler = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST;
  write_imagef(dest, (int2)(get_global_id(0), get_global_id(1)),
    read_imagef(src, sampler, (int2)(get_global_id(0), get_global_id(1))));
}";

#[test]
fn a_2d_image_copy_copies_every_texel_without_races() {
    let r = run(
        COPY,
        &[2, 1],
        &[2, 2],
        &[("dest", &[4, 2], "zeros"), ("src", &[4, 2], "iota")],
        &[],
        &[],
    );
    assert_eq!(r.fault, None);
    assert_eq!(r.races.len(), 0);
    let want: Vec<String> = (0..32).map(|i| format!("{i}")).collect();
    let got: Vec<String> = r
        .array("dest")
        .iter()
        .map(|v| v.trim_end_matches(".0").to_string())
        .collect();
    assert_eq!(got, want);
}

#[test]
fn writes_of_one_texel_by_several_work_items_race() {
    // GPUVerify's fail2dimagecopy: every work-item of a row writes texel (0, y).
    let src = COPY.replace(
        "(int2)(get_global_id(0), get_global_id(1)),\n",
        "(int2)(0, get_global_id(1)),\n",
    );
    let r = run(
        &src,
        &[1, 1],
        &[4, 2],
        &[("dest", &[4, 2], "zeros"), ("src", &[4, 2], "iota")],
        &[],
        &[],
    );
    assert!(!r.races.is_empty(), "a race on dest");
}

/// Reads component `c` of the texel a 1D image of 4 texels (iota: texel t holds
/// 4t .. 4t+3) gives at float coordinate `x` with sampler `bits`, into `out[0]`.
fn sample(bits: &str, x: f32, c: &str) -> Ran {
    let src = format!(
        "__kernel void k(image1d_t img, __global float *out) {{
           const sampler_t s = {bits};
           out[0] = read_imagef(img, s, {x:?}f).{c};
         }}"
    );
    run(
        &src,
        &[1],
        &[1],
        &[("img", &[4], "iota")],
        &[("out", 1, "zeros")],
        &[],
    )
}

fn sampled(bits: &str, x: f32) -> f32 {
    let r = sample(bits, x, "x");
    assert_eq!(r.fault, None, "{bits} at {x}");
    r.array("out")[0].parse().expect("a float")
}

#[test]
fn addressing_modes_pick_the_texels_of_the_spec() {
    let edge = "CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST";
    assert_eq!(sampled(edge, -3.0), 0.0);
    assert_eq!(sampled(edge, 1.5), 4.0);
    assert_eq!(sampled(edge, 9.0), 12.0);
    let edge_norm = "CLK_NORMALIZED_COORDS_TRUE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST";
    assert_eq!(sampled(edge_norm, 0.6), 8.0); // 0.6 × 4 = 2.4
    let repeat = "CLK_NORMALIZED_COORDS_TRUE | CLK_ADDRESS_REPEAT | CLK_FILTER_NEAREST";
    assert_eq!(sampled(repeat, 1.25), 4.0); // frac 0.25 → texel 1
    assert_eq!(sampled(repeat, -0.25), 12.0); // frac 0.75 → texel 3
    let mirror = "CLK_NORMALIZED_COORDS_TRUE | CLK_ADDRESS_MIRRORED_REPEAT | CLK_FILTER_NEAREST";
    assert_eq!(sampled(mirror, 1.25), 12.0); // |1.25 - 2| = 0.75 → texel 3
    assert_eq!(sampled(mirror, -0.3), 4.0); // 0.3 × 4 = 1.2 → texel 1
    let clamp = "CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP | CLK_FILTER_NEAREST";
    assert_eq!(sampled(clamp, 2.2), 8.0);
    // Outside: the border colour (0, 0, 0, 0), where texel 0's y would be 1.
    let r = sample(clamp, -1.0, "y");
    assert_eq!(r.fault, None);
    assert_eq!(r.array("out")[0], "0");
    let r = sample(clamp, 0.0, "y");
    assert_eq!(r.array("out")[0], "1");
}

#[test]
fn undefined_reads_and_writes_outside_the_image_are_faults() {
    let none = "CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_NONE | CLK_FILTER_NEAREST";
    assert_eq!(sampled(none, 3.5), 12.0);
    let r = sample(none, 4.0, "x");
    let f = r
        .fault
        .expect("a fault outside the image under CLK_ADDRESS_NONE");
    assert!(f.contains("img"), "{f}");
    // A read without a sampler and a write outside the image.
    for body in [
        "out[0] = read_imagef(img, (int2)(4, 0)).x;",
        "write_imagef(img2, (int2)(0, 2), (float4)(1.0f));",
    ] {
        let src = format!(
            "__kernel void k(image2d_t img, __write_only image2d_t img2, __global float *out) {{ {body} }}"
        );
        let r = run(
            &src,
            &[1],
            &[1],
            &[("img", &[4, 2], "iota"), ("img2", &[4, 2], "zeros")],
            &[("out", 1, "zeros")],
            &[],
        );
        assert!(r.fault.is_some(), "{body}");
    }
}

#[test]
fn integer_coordinates_are_sampled_like_float_ones() {
    // testsampler2: normalised coordinates with REPEAT and integer coordinates; an
    // integer x is x.0 normalised, which repeats to texel 0.
    let src = "const sampler_t samp = CLK_NORMALIZED_COORDS_TRUE | CLK_ADDRESS_REPEAT | CLK_FILTER_NEAREST;
      __kernel void k(__read_only image2d_t img, __global float *out) {
        int2 idx = (int2)(get_global_id(0), get_global_id(1));
        float4 x = read_imagef(img, samp, idx);
        out[get_global_id(1) * 4 + get_global_id(0)] = x.x + x.w;
      }";
    let r = run(
        src,
        &[1, 1],
        &[4, 2],
        &[("img", &[4, 2], "iota")],
        &[("out", 8, "zeros")],
        &[],
    );
    assert_eq!(r.fault, None);
    assert!(
        r.array("out").iter().all(|v| v == "3"),
        "{:?}",
        r.array("out")
    );
}

#[test]
fn sampler_parameters_choose_the_mode_at_run_time() {
    let src = "__kernel void k(image1d_t img, sampler_t s, __global float *out) {
        out[get_global_id(0)] = read_imagef(img, s, (float)get_global_id(0) - 1.0f).y;
      }";
    let edge = lang::cl::lower::sampler_value(
        "CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST",
    )
    .expect("a sampler");
    let clamp =
        lang::cl::lower::sampler_value("CLK_ADDRESS_CLAMP|CLK_FILTER_NEAREST").expect("a sampler");
    for (bits, want) in [(edge, ["1", "1", "5"]), (clamp, ["0", "1", "5"])] {
        let r = run(
            src,
            &[1],
            &[3],
            &[("img", &[4], "iota")],
            &[("out", 3, "zeros")],
            &[("s", &bits.to_string())],
        );
        assert_eq!(r.fault, None);
        assert_eq!(r.array("out"), want);
    }
    assert!(lang::cl::lower::sampler_value("CLK_FILTER_LINEAR")
        .unwrap_err()
        .contains("LINEAR"));
    assert!(lang::cl::lower::sampler_value("0x40").is_err());
    assert!(lang::cl::lower::sampler_value("CLK_ADDRESS_CLAMP").is_err()); // no filter
}

#[test]
fn integer_images_and_queries() {
    let src =
        "__kernel void k(__read_only image2d_t a, __write_only image2d_t b, __global int *out) {
        int x = get_global_id(0), y = get_global_id(1);
        uint4 v = read_imageui(a, (int2)(x, y));
        write_imageui(b, (int2)(get_image_width(a) - 1 - x, y), v + (uint4)(100));
        if (x == 0 && y == 0) {
          int2 d = get_image_dim(a);
          out[0] = d.x; out[1] = d.y; out[2] = get_image_height(b);
        }
      }";
    let r = run(
        src,
        &[1, 1],
        &[2, 2],
        &[("a", &[2, 2], "iota"), ("b", &[2, 2], "zeros")],
        &[("out", 3, "zeros")],
        &[],
    );
    assert_eq!(r.fault, None);
    assert_eq!(r.races.len(), 0);
    assert_eq!(r.array("out"), ["2", "2", "2"]);
    let b: Vec<String> = [104, 105, 106, 107, 100, 101, 102, 103]
        .iter()
        .chain(&[112, 113, 114, 115, 108, 109, 110, 111])
        .map(|v| v.to_string())
        .collect();
    assert_eq!(r.array("b"), b);
}

#[test]
fn images_pass_to_helpers_and_samplers_to_prototypes() {
    // testsampler3: samplers (one LINEAR, never read with) passed to a function without a
    // body; an image read through a helper.
    let src = "constant sampler_t lin = CLK_ADDRESS_CLAMP_TO_EDGE | CLK_NORMALIZED_COORDS_TRUE | CLK_FILTER_LINEAR;
      void bar(sampler_t s);
      float first(image2d_t im, sampler_t s) { return read_imagef(im, s, (int2)(0, 0)).x; }
      kernel void foo(image2d_t img, sampler_t smp_par, global float *out) {
        sampler_t smp = CLK_ADDRESS_CLAMP_TO_EDGE | CLK_NORMALIZED_COORDS_FALSE | CLK_FILTER_NEAREST;
        bar(smp); bar(lin); bar(smp_par); bar(5);
        out[get_global_id(0)] = first(img, smp) + first(img, smp_par);
      }";
    let r = run(
        src,
        &[1],
        &[2],
        &[("img", &[2, 2], "ones")],
        &[("out", 2, "zeros")],
        &[("smp_par", "18")],
    );
    assert_eq!(r.fault, None);
    assert_eq!(r.array("out"), ["2", "2"]);
}

#[test]
fn misuse_of_images_is_a_load_error_with_a_span() {
    let cases = [
        (
            "__kernel void k(__write_only image2d_t a, __global float *o) { o[0] = read_imagef(a, (int2)(0)).x; }",
            "no matching function for call to 'read_imagef'",
            "read_imagef",
        ),
        (
            "__kernel void k(image2d_t a) { write_imagef(a, (int2)(0), (float4)(0.0f)); }",
            "no matching function for call to 'write_imagef'",
            "write_imagef",
        ),
        (
            "__kernel void k(__read_write image2d_t a, __global float *o) { write_imagei(a, (int2)(0), (int4)(0)); o[0] = read_imagef(a, (int2)(0)).x; }",
            "access qualifier '__read_write' can not be used for '__read_write image2d_t' prior to OpenCL C version 2.0",
            "__read_write",
        ),
        (
            "__kernel void k(image2d_t a, __global float *o) { const sampler_t s = CLK_FILTER_LINEAR; o[0] = read_imagef(a, s, (float2)(0.5f)).x; }",
            "CLK_FILTER_LINEAR",
            "s",
        ),
        (
            "__kernel void k(image2d_t a, __global float *o) { o[0] = read_imagef(a, (float2)(0.5f)).x; }",
            "no matching function for call to 'read_imagef'",
            "read_imagef",
        ),
        (
            "__kernel void k(image2d_t a, __global float *o) { o[0] = read_imagef(a, (int4)(0)).x; }",
            "no matching function for call to 'read_imagef'",
            "read_imagef",
        ),
    ];
    for (src, message, at) in cases {
        let mut map = lang::cl::SourceMap::new("t.cl", src.to_string());
        let e = lang::cl::compile(
            &mut map,
            &lang::cl::ClOptions::default(),
            &mut |p: &std::path::Path| lang::cl::read_file(p),
        )
        .expect_err(src);
        assert!(e[0].message.contains(message), "{src}: {}", e[0].message);
        assert_eq!(&src[e[0].span.clone()], at, "{src}: {}", e[0].message);
    }
}

const KERNEL: &str = "tests/kernels/cl_image_copy.cl";

#[test]
fn cli_runs_an_image_kernel_with_sized_image_inputs() {
    for engine in ["reference", "fast"] {
        let o = ksim(&[
            "run",
            KERNEL,
            "--global",
            "2,2",
            "--local",
            "2,1",
            "--input",
            "src=2x2:iota",
            "--input",
            "dest=2x2:zeros",
            "--arg",
            "s=CLK_ADDRESS_CLAMP_TO_EDGE|CLK_FILTER_NEAREST",
            "--engine",
            engine,
        ]);
        assert!(o.status.success(), "{}", text(&o));
        assert!(
            stdout(&o).lines().any(|l| l.starts_with("dest ")
                && l.ends_with("= 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15")),
            "{}",
            text(&o)
        );
    }
    let o = ksim(&["check", KERNEL]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        stdout(&o).contains("--input dest=WxH:SPEC --input src=WxH:SPEC --arg s=SAMPLER"),
        "{}",
        text(&o)
    );
    for (bad, why) in [
        ("src=2:iota", "2 dimension"),
        ("src=2x2:1,2,3", "3 values for 16 slots"),
        ("src=iota", "W[xH[xD]]:CONTENTS"),
    ] {
        let o = ksim(&[
            "run",
            KERNEL,
            "--global",
            "2,2",
            "--local",
            "2,1",
            "--input",
            bad,
            "--input",
            "dest=2x2:zeros",
            "--arg",
            "s=18",
        ]);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        assert!(text(&o).contains(why), "{}", text(&o));
    }
    let o = ksim(&[
        "run",
        KERNEL,
        "--global",
        "2,2",
        "--local",
        "2,1",
        "--input",
        "src=2x2:iota",
        "--input",
        "dest=2x2:zeros",
        "--arg",
        "s=CLK_FILTER_LINEAR",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("CLK_FILTER_LINEAR"), "{}", text(&o));
}
