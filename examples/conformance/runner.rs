//! Runs ksim over GPUVerify's OpenCL test suite (or its CUDA one: `.cu` kernels, whose
//! headers say `--blockDim=` and `--gridDim=` for `--local_size=` and `--num_groups=`) and
//! compares its verdicts with the suite's headers (`//pass`, `//xfail:CODE`).
//!
//! Rules, the same for every kernel (per-kernel exceptions are only in [`EXCEPTIONS`], each
//! with its reason; no verdict is ever set by hand):
//! - **Macros**: the header's `-D` flags.
//! - **Launch**: the header's dimensions (1D, 2D or 3D; a missing dimension is 1). The
//!   work-group size the header fixes (`--local_size`, or the kernel's
//!   `reqd_work_group_size`) is run as it is: a kernel may depend on it. Only an open one
//!   (`*`), or one whose launch would exceed 2^16 work-items, is scaled: per dimension
//!   `min(local_size[d], 128 / (product of the scaled earlier dimensions))`,
//!   so at most 128 work-items per group, dimension 0 kept first (where the suite puts the
//!   thread distance of its races). Groups per dimension
//!   `min(num_groups[d], 4, max(1, 16 / (product of the earlier ones)))` (so a test with
//!   several groups keeps several; 1D: `min(num_groups, 4)`). `--global_size` gives the
//!   groups (`global[d] / local[d]`). A launch OpenCL itself rejects (a global size that is
//!   not a multiple of the local size, global and local sizes of different dimensions, both
//!   `--num_groups` and `--global_size`) is rejected, as ksim's command line rejects it.
//!   A size the header leaves open (`--local_size=*`, `--num_groups=*`, `--global_size=*`:
//!   GPUVerify checks every size) is the largest the scaling keeps: 128 work-items per
//!   group (the largest divisor of the global size up to 128, when that is given) and 4
//!   groups.
//! - **Buffers**: `max(16 × (scaled global size) + 1024, 65536)` elements each. GPUVerify
//!   models buffers as unbounded (it checks bounds only with `--check-array-bounds`), so an
//!   access outside them counts for the verdict only under that flag.
//! - **Images**: the scaled global size per dimension (1 beyond the launch's dimensions),
//!   with the same contents as buffers; a sampler parameter is
//!   `CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST`.
//! - **Scalars**: the header's `--kernel-args` values (a struct parameter's value is its
//!   bytes, little-endian: its members, 32-bit each in ksim, take 4 bytes each in order),
//!   else the scaled work-group size
//!   (`1.0` for floats, `true` for bools); a launch with such open integer scalars is also
//!   run with them all set to 0 and to 1 when it finds nothing (also where the work-group size
//!   violates the precondition and a value tried after it meets it; GPUVerify treats an open scalar as arbitrary, so
//!   its verdict speaks of every value; an offset, index or pointer choice degenerates at
//!   0 or 1), a finding at those values counting like one at the work-group size and
//!   marked with the value (`race on A (open scalars = 0)`); then likewise at each integer
//!   constant (above 1) the kernel compares with (`tid == 15`, `x < 1000`) and at the
//!   differences of two of them, at most 16 values (an index `tid + x` meets the element
//!   another work-item writes when x is the distance between two work-items the kernel
//!   singles out: `tid == 15`, `tid == 200`, x = 185); a run that violates the
//!   precondition there being no run. When a run violates the kernel's own
//!   precondition (`__requires`, `__assume`: the launch is at fault, not the kernel), the
//!   runs are repeated with the integer scalars the header leaves open set to 0, then 1,
//!   then the work-group size plus one, then distinct values (the work-group size plus the
//!   scalar's position), then each integer constant (above 1) written in the kernel's
//!   `__requires` (all open scalars, struct members included, set to it: a precondition
//!   such as `__requires(q.a == 5)`); when all of these violate it, no launch by the rules
//!   meets the precondition.
//! - **Assumptions**: when the launch meets the `__requires` but every run violates an
//!   `__assume` (`__assume(false)`, or `__assume(tid < 10)` in a group of 128), the kernel
//!   is counted as run *vacuously*: no execution at the launch satisfies the assumptions,
//!   so ksim has nothing to check and no counter-example. GPUVerify's `pass` claims
//!   only that no execution satisfying the assumptions fails, so a vacuous run whose
//!   first work-item (thread 0 of group 0) already violates the assumption agrees with
//!   `pass`; one where only later work-items violate it is (b): GPUVerify reads an
//!   `__assume` per pair of work-items, so a thread-id assumption excludes threads and
//!   GPUVerify checks the others, while ksim's runs include every work-item of the launch
//!   and check nothing. A vacuous run disagrees with `xfail`; each one is listed as vacuous.
//! - **Warps**: `--warp-sync=N` runs the launch with warps of N work-items in lock-step
//!   (ksim's `--warp-size N`).
//! - **Inputs**: two runs, all-zero buffers and random contents, each array its own seed
//!   (`random:1`, `random:2`, ... in the launch's order, so that no two arrays hold the same
//!   pattern); a step bound of 10^8, which every terminating kernel of the suite stays far
//!   below. An input
//!   that violates the kernel's precondition (`__requires(A[i] == 0)`) is no run of the
//!   kernel and is dropped; the launch counts when at least one input meets it.
//! - **Race policy**: GPUVerify tolerates benign races (a write of the value the element
//!   holds, or of the same value as the write it races with) unless the header passes
//!   `--no-benign-tolerance`, or `--adversarial-abstraction` (array contents arbitrary, so
//!   no two writes are known to store the same value): ksim judges with
//!   `--race-policy same-value`, and with `strict` under those flags; benign pairs are not
//!   findings.
//! - **Verdict**: the fast race check of each run (one canonical execution decides races
//!   for every schedule): a race (one within a work-group when there is one, else one
//!   between work-groups, marked so), barrier divergence or fault in either run is "found",
//!   matching `xfail:NOT_ALL_VERIFIED`; none matches `pass`. A kernel that ksim rejects
//!   with a language error matches GPUVerify's front-end errors (`CLANG_ERROR`, ...).
//! - **Classes**: a disagreement's class is given by a check, not a guess: termination
//!   (b) only when the step bound is the only finding of a `pass` kernel; out of bounds (b)
//!   only when all findings are out of the runner's buffers and the header has no
//!   `--check-array-bounds`; an unchecked annotation (d) only when the lowering noted one in
//!   an `xfail` kernel; a mode flag (b) only when the flag explains the findings
//!   (`--only-log`: none checked; `--only-divergence`: no divergence found;
//!   `--only-intra-group`: only races between work-groups); else the reviewed
//!   [`EXCEPTIONS`], else (a).
//! - No schedule exploration: when the canonical execution is race-free, every schedule
//!   gives the same result (POPL 2014's determinism for race-free kernels), and when it is
//!   not, the race is already the verdict; exploration would only cost time here.

use interp::fast::{self, FastOptions};
use interp::launch::{Launch, LaunchOptions};
use interp::{FaultKind, RacePolicy};
use lang::ast::TypeName;
use lang::cl::{ClOptions, SourceMap};
use std::cell::Cell;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

const MAX_LOCAL: usize = 128;
/// The most work-items a launch at a header's fixed work-group size may have (with the
/// scaled groups); beyond it (`--local_size=512,512,512`) the work-group size is scaled.
const MAX_FIXED_THREADS: usize = 1 << 16;
const MAX_GROUPS: usize = 4;
/// Work-groups in all, for a 2D or 3D launch.
const MAX_GROUPS_ALL: usize = 16;
const MIN_BUFFER: usize = 1 << 16;
/// The sampler parameters' value: unnormalised coordinates, `CLAMP_TO_EDGE`, `NEAREST`.
const SAMPLER: &str = "CLK_NORMALIZED_COORDS_FALSE|CLK_ADDRESS_CLAMP_TO_EDGE|CLK_FILTER_NEAREST";
/// Large enough that the suite's terminating kernels finish (five of them need more than
/// 10^6 steps, which the runner's bound was).
const MAX_STEPS: u64 = 100_000_000;

/// Disagreement classes (docs/conformance.md explains them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Class {
    /// A ksim bug.
    A,
    /// GPUVerify's mode or policy, which ksim reads differently.
    B,
    /// Imprecision of the static verifier (no input exhibits the reported error).
    C,
    /// Not loadable (or not checkable) yet: the construct.
    D,
    /// Invalid OpenCL C 1.2: clang-15 refuses it, as PoCL and Oclgrind do (the error carries
    /// [`lang::cl::clang::INVALID_OPENCL`]). Not counted among the valid kernels.
    E,
}

impl Class {
    pub fn label(self) -> &'static str {
        match self {
            Class::A => "(a) ksim bug",
            Class::B => "(b) GPUVerify mode/policy",
            Class::C => "(c) static-verifier imprecision",
            Class::D => "(d) not supported yet",
            Class::E => "(e) invalid OpenCL C 1.2: clang-15 refuses it, as PoCL and Oclgrind do",
        }
    }
}

/// Reviewed per-kernel exceptions: the kernel (path under the corpus), its class, and why.
/// Each entry was looked at by hand; a disagreement that is not here and that no general
/// rule classifies counts as a possible ksim bug, class (a).
pub const EXCEPTIONS: &[(&str, Class, &str)] = &[
    (
        "abstract_add/associativity/kernel.cl",
        Class::D,
        "the verdict rests on the axioms of the header's `--boogie-file` (axioms.bpl: A and A1 associative and equal), which ksim does not read; ksim runs one interpretation of the uninterpreted functions (a hash of the arguments, docs/language.md), which does not satisfy them",
    ),
    (
        "abstract_add/associativity_char/kernel.cl",
        Class::D,
        "the verdict rests on the axioms of the header's `--boogie-file` (axioms.bpl: A and A1 associative and equal, A(x, y) >= x, y), which ksim does not read; ksim runs one interpretation of the uninterpreted functions (a hash of the arguments, docs/language.md), which does not satisfy them",
    ),
    (
        "abstract_add/associativity_short/kernel.cl",
        Class::D,
        "the verdict rests on the axioms of the header's `--boogie-file` (axioms.bpl: A and A1 associative and equal, A(x, y) >= x, y), which ksim does not read; ksim runs one interpretation of the uninterpreted functions (a hash of the arguments, docs/language.md), which does not satisfy them",
    ),
    (
        "abstract_add/zero/kernel.cl",
        Class::D,
        "the verdict rests on the axioms of the header's `--boogie-file` (axioms.bpl: A(x, 0) == x, A(x, y) >= x, y), which ksim does not read; ksim runs one interpretation of the uninterpreted functions (a hash of the arguments, docs/language.md), which does not satisfy them",
    ),
    (
        "bpl_integration/pass/kernel.cl",
        Class::D,
        "the verdict rests on the axioms of the header's `--boogie-file` (axioms.bpl: f(x, y) == g(x, y)), which ksim does not read; ksim runs one interpretation of the uninterpreted functions (a hash of the arguments, docs/language.md), which does not satisfy them",
    ),
    (
        "fail_bodiless_procedure/kernel.cl",
        Class::D,
        "GPUVerify fails the assertion bar(x, y) >= x && bar(x, y) >= y because some function bar violates it; ksim runs one interpretation of the bodiless bar (a hash of the arguments, docs/language.md), which satisfies it at the rule's x = y = 64",
    ),
    (
        "array_bounds_tests/negative_index_multi_dim/kernel.cl",
        Class::B,
        "L[0][j] with j up to the global size: GPUVerify's --check-array-bounds checks the flattened offset into the 10 x 10 array; ksim checks each index against its dimension, as C's array bounds are",
    ),
    (
        "array_bounds_tests/realign_simple_fail/kernel.cl",
        Class::D,
        "the out-of-bounds byte needs global id 256 (the 64 ints of L are 256 bytes), beyond the scaled launch of 4 groups of 20; with the header's 16 groups ksim reports it (`ksim run kernel.cl --global 320 --local 20`: out-of-bounds access L[256])",
    ),
    (
        "report_global_id/test1/kernel.cl",
        Class::D,
        "the race needs work-item (8, 13, 21), beyond the scaled launch, and the scalar x = 0 (p[x] against p[0]); GPUVerify treats x as arbitrary, the rule binds scalars to the work-group size",
    ),
    (
        "checkarrays/pass/specifyone/kernel.cl",
        Class::B,
        "`--vcgen-opt=/checkArrays:B` makes GPUVerify check array B only; ksim's race is on A",
    ),
    (
        "multidimarrays/test5/kernel.cl",
        Class::B,
        "every work-item writes 0 to A[0] and reads it back: with the random input the first write changes A[0], so a read of another work-item is a harmful pair even under same-value; GPUVerify's --equality-abstraction tolerates it",
    ),
    (
        "k-induction/alldifferent-k-too-small/kernel.cl",
        Class::C,
        "the same kernel as k-induction/alldifferent (which passes) with `--k-induction-depth=2`: the rotation of a, b, c keeps them distinct, so the assertion holds in every run; GPUVerify's induction is too shallow to prove it",
    ),
    (
        "reducedstrengthnonloopbug/kernel.cl",
        Class::C,
        "the error GPUVerify expects is in `notInvoked`, which the kernel never calls: no execution exhibits it",
    ),
    (
        "annotation_tests/global_requires/fail/kernel.cl",
        Class::D,
        "a `__global_requires` in a helper must hold for every work-item of the group, called or not (GPUVerify); ksim checks it only in the work-items that call the helper",
    ),
    (
        "annotation_tests/invariants_as_candidates/kernel.cl",
        Class::B,
        "`--invariants-as-candidates`: GPUVerify drops an `__invariant` that does not hold; ksim checks every invariant and reports the failing one",
    ),
    (
        "annotation_tests/no_annotations/kernel.cl",
        Class::B,
        "`--no-annotations`: GPUVerify ignores the annotations; ksim checks `__invariant(0)` and reports it",
    ),
    (
        "annotation_tests/only_requires/kernel.cl",
        Class::B,
        "`--only-requires`: GPUVerify keeps only the `__requires`; ksim checks the loop invariants too and reports the failing one",
    ),
    (
        "annotation_tests/specification_tests/pass/vacuous_spec/kernel.cl",
        Class::B,
        "a `__spec_*` helper is a specification for GPUVerify (its impossible `__requires`/`__ensures` are assumed, so the kernel verifies vacuously); ksim runs it as code and reports the `__assert(false)` after it",
    ),
    (
        "benign_race_tests/pass/readafterwrite/kernel.cl",
        Class::B,
        "`--equality-abstraction`: the read of A[j] sees the value every work-item writes to A[i], which GPUVerify's abstraction accepts; under Definition 5.2 (and ksim's same-value policy, which judges write-write pairs) the read races with the writes when i = j",
    ),
    (
        "get_global_offset/kernel.cl",
        Class::B,
        "`--global_offset=64`: the kernel asserts the offset; ksim's launches have no global offset (`get_global_offset` is 0), so the assertions fail",
    ),
    (
        "sourcelocation_tests/ensures/fail/kernel.cl",
        Class::C,
        "`bar`'s postcondition a/2 > 0 does not follow from its precondition a > 0 (a = 1 breaks it), which a modular verifier reports; the kernel calls it with 5 and 6 only, so no run fails",
    ),
    (
        "predicated_undef/kernel.cl",
        Class::B,
        "the kernel stores the uninitialised private `temp` (built with -Wno-uninitialized): GPUVerify gives it an arbitrary value and checks only races, ksim reports the uninitialised read (issue 9 item 3)",
    ),
    (
        "struct/kernel.cu",
        Class::B,
        "the kernel reads the member `x` of the uninitialised private struct `f4`: GPUVerify gives it an arbitrary value and checks only races, ksim reports the uninitialised read (as predicated_undef/kernel.cl)",
    ),
    (
        "warpsync/intragroup_scan/kernel.cu",
        Class::B,
        "`int temp[32]` is private (one per thread): thread 31 of each warp writes its own `temp[tid / 32]`, and the threads of warp 0 then read `temp[tid - 1]`, ... of their own, never written; GPUVerify gives it arbitrary values and checks only races, ksim reports the uninitialised read",
    ),
    (
        "misc/fail/miscfail5/kernel.cu",
        Class::B,
        "the kernel writes `__constant__` memory, which GPUVerify reports as a verification error; ksim refuses it as a language error before running (`global_constant` is `__constant`: it cannot be written), the same finding in another channel",
    ),
    (
        "globalarray/fail/kernel.cu",
        Class::D,
        "the `__constant__` array's initialiser is the host's first value, which the host may change (`cudaMemcpyToSymbol`), as GPUVerify's comment says; ksim lowers a program-scope `__constant` array with its initialiser as fixed data (OpenCL C's rule), so the run with A[i] == i is clean",
    ),
];

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expect {
    Pass,
    NotAllVerified,
    /// A front-end error of GPUVerify's tool chain (`CLANG_ERROR`, ...).
    FrontEnd(String),
}

#[derive(Clone, Debug)]
pub struct Header {
    pub expect: Expect,
    pub local: Vec<usize>,
    pub groups: Vec<usize>,
    pub global: Option<Vec<usize>>,
    /// Whether the header gives `--num_groups` (besides or instead of `--global_size`).
    pub groups_given: bool,
    pub defines: Vec<(String, Option<String>)>,
    /// Other flags (`--no-inline`, `--only-intra-group`, ...).
    pub flags: Vec<String>,
    /// A launch flag that is not a list of numbers nor `*`.
    pub unusual: Option<String>,
    /// The launch sizes the header leaves open (`--global_size=*`: `global_size`).
    pub any: Vec<&'static str>,
    /// `--kernel-args=KERNEL,v1,...`: values of the scalar parameters, in order.
    pub scalar_args: Vec<u64>,
}

fn dims(v: &str) -> Option<Vec<usize>> {
    v.trim_matches(|c| c == '[' || c == ']')
        .split(',')
        .map(|d| d.trim().parse().ok())
        .collect()
}

pub fn header(text: &str) -> Result<Header, String> {
    let mut lines = text.lines();
    let first = lines.next().unwrap_or("").trim();
    let expect = if first.to_ascii_lowercase().starts_with("//pass") {
        Expect::Pass
    } else if let Some(code) = first.strip_prefix("//xfail:") {
        match code.trim() {
            "NOT_ALL_VERIFIED" => Expect::NotAllVerified,
            c => Expect::FrontEnd(c.to_string()),
        }
    } else {
        return Err(format!("no //pass or //xfail header: `{first}`"));
    };
    let second = lines.next().unwrap_or("").trim().trim_start_matches("//");
    let mut h = Header {
        expect,
        local: vec![1],
        groups: vec![1],
        global: None,
        groups_given: false,
        defines: Vec::new(),
        flags: Vec::new(),
        unusual: None,
        any: Vec::new(),
        scalar_args: Vec::new(),
    };
    let words: Vec<&str> = second.split_whitespace().collect();
    let mut k = 0;
    while k < words.len() {
        // CUDA's names of the launch (GPUVerify's CUDA suite).
        let cuda = words[k]
            .strip_prefix("--blockDim=")
            .map(|v| format!("--local_size={v}"))
            .or_else(|| {
                words[k]
                    .strip_prefix("--gridDim=")
                    .map(|v| format!("--num_groups={v}"))
            });
        let w = cuda.as_deref().unwrap_or(words[k]);
        let launch_flag = ["--local_size=", "--num_groups=", "--global_size="]
            .into_iter()
            .find_map(|f| w.strip_prefix(f).map(|v| (f, v)));
        if let Some((f, v)) = launch_flag {
            if v == "*" {
                h.any.push(f.trim_start_matches("--").trim_end_matches('='));
                k += 1;
                continue;
            }
            match dims(v) {
                Some(d) if f == "--local_size=" => h.local = d,
                Some(d) if f == "--num_groups=" => {
                    h.groups = d;
                    h.groups_given = true;
                }
                Some(d) => h.global = Some(d),
                None => h.unusual = Some(w.to_string()),
            }
        } else if let Some(v) = w.strip_prefix("--kernel-args=") {
            h.scalar_args = v
                .split(',')
                .skip(1)
                .filter_map(|x| u64::from_str_radix(x.trim_start_matches("0x"), 16).ok())
                .collect();
        } else if let Some(d) = w.strip_prefix("-D") {
            let d = if d.is_empty() {
                k += 1;
                words.get(k).copied().unwrap_or("")
            } else {
                d
            };
            h.defines.push(match d.split_once('=') {
                Some((n, v)) => (n.to_string(), Some(v.to_string())),
                None => (d.to_string(), None),
            });
        } else {
            h.flags.push(w.to_string());
        }
        k += 1;
    }
    // `__attribute__((reqd_work_group_size(X, Y, Z)))` fixes the work-group size.
    if let Some(at) = text.find("reqd_work_group_size(") {
        let rest = &text[at + "reqd_work_group_size(".len()..];
        if let Some(d) = rest.split(')').next().and_then(dims) {
            let used = d.iter().rposition(|&x| x != 1).map_or(1, |i| i + 1);
            h.local = d[..used].to_vec();
        }
    }
    // A size GPUVerify leaves open (`*`: it checks every one) gets the largest the
    // scaling rule keeps: `MAX_LOCAL` work-items per group (the largest divisor of the
    // global size up to it, when that is given), `MAX_GROUPS` groups per dimension.
    for f in h.any.clone() {
        match f {
            "local_size" => {
                h.local = match &h.global {
                    Some(g) => g
                        .iter()
                        .map(|&g| {
                            (1..=MAX_LOCAL.min(g.max(1)))
                                .rev()
                                .find(|l| g % l == 0)
                                .unwrap_or(1)
                        })
                        .collect(),
                    None => vec![MAX_LOCAL; h.groups.len()],
                }
            }
            "num_groups" => {
                h.groups = vec![MAX_GROUPS; h.local.len()];
                h.groups_given = true;
            }
            _ => {
                h.global = None;
                h.groups = vec![MAX_GROUPS; h.local.len()];
            }
        }
    }
    Ok(h)
}

/// What ksim did with a kernel.
#[derive(Clone, Debug)]
pub enum Outcome {
    /// "not supported yet: CONSTRUCT" (or a GPUVerify extension ksim does not read).
    NotLoadable(String),
    /// A language error (the kernel is not valid OpenCL C for ksim).
    Rejected(String),
    /// clang-15 refuses the kernel as invalid OpenCL C 1.2 (its error carries
    /// [`lang::cl::clang::INVALID_OPENCL`]).
    Invalid(String),
    /// The launch could not be built by the rules (e.g. a 2D NDRange).
    NoLaunch(String),
    /// Ran, but every run violates an `__assume` (with a launch that meets the
    /// `__requires`): no execution satisfies the assumptions. The violation.
    Vacuous(String),
    /// Ran: what it found (empty when clean), and the lowering's notes.
    Ran {
        found: Vec<String>,
        notes: Vec<String>,
    },
}

#[derive(Clone, Debug)]
pub struct Row {
    pub path: String,
    pub expect: Expect,
    pub outcome: Outcome,
    pub agree: bool,
    /// For a disagreement (or a kernel that does not load): its class and why.
    pub class: Option<(Class, String)>,
}

fn expect_text(e: &Expect) -> String {
    match e {
        Expect::Pass => "pass".into(),
        Expect::NotAllVerified => "xfail".into(),
        Expect::FrontEnd(c) => format!("xfail:{c}"),
    }
}

impl Row {
    pub fn line(&self) -> String {
        let what = match &self.outcome {
            Outcome::NotLoadable(c) => format!("not loadable: {c}"),
            Outcome::Rejected(m) => format!("rejected: {m}"),
            Outcome::Invalid(m) => format!("invalid OpenCL C 1.2: {m}"),
            Outcome::NoLaunch(m) => format!("no launch: {m}"),
            Outcome::Vacuous(m) => format!("ran vacuously: no run satisfies the assumptions: {m}"),
            Outcome::Ran { found, .. } if found.is_empty() => "ran: clean".into(),
            Outcome::Ran { found, .. } => format!("ran: {}", found.join("; ")),
        };
        let verdict = if self.agree {
            "AGREE   ".to_string()
        } else {
            match &self.class {
                Some((c, _)) => format!("DIFF {} ", &c.label()[..3]),
                None => "DIFF    ".into(),
            }
        };
        format!(
            "{verdict}{:<12} {}  ({what})",
            expect_text(&self.expect),
            self.path
        )
    }

    pub fn loaded(&self) -> bool {
        matches!(self.outcome, Outcome::Ran { .. } | Outcome::Vacuous(_))
    }
}

pub struct Report {
    pub rows: Vec<Row>,
}

/// Every `.cl` and `.cu` file under `dir`, sorted.
fn kernels(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d)? {
            let p = e?.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "cl" || x == "cu") {
                out.push(p);
            }
        }
    }
    out.sort();
    Ok(out)
}

pub fn run(dir: &Path) -> Result<Report, String> {
    let files = kernels(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    if files.is_empty() {
        return Err(format!("no .cl or .cu files under {}", dir.display()));
    }
    let mut rows = Vec::new();
    for f in files {
        let rel = f.strip_prefix(dir).unwrap_or(&f).display().to_string();
        let text = std::fs::read_to_string(&f).map_err(|e| format!("{rel}: {e}"))?;
        let h = header(&text).map_err(|e| format!("{rel}: {e}"))?;
        let outcome = run_one(&f, text, &h);
        rows.push(judge(rel, h, outcome));
    }
    Ok(Report { rows })
}

fn run_one(path: &Path, text: String, h: &Header) -> Outcome {
    if h.unusual.is_none() {
        if let Err(m) = launch(h) {
            return Outcome::Rejected(format!("launch: {m}"));
        }
    }
    let constants = precondition_constants(&text);
    let compared = compared_values(&text);
    let mut map = SourceMap::new(path, text);
    let opts = ClOptions {
        pp: lang::cl::options::PpOptions {
            defines: h.defines.clone(),
            include_dirs: Vec::new(),
        },
        kernel: None,
    };
    let compiled = lang::cl::compile(&mut map, &opts, &mut |p: &Path| lang::cl::read_file(p));
    let c = match compiled {
        Ok(c) => c,
        Err(diags) => {
            let m = diags[0].message.clone();
            // CUDA's refusals (textures, curand, ...) say "not supported: ".
            let rest = m
                .strip_prefix("not supported yet: ")
                .or_else(|| m.strip_prefix("not supported: "));
            if let Some(rest) = rest {
                return Outcome::NotLoadable(rest.to_string());
            }
            let (f, off) = map.locate(diags[0].span.start);
            let (line, _) = lang::line_col(&f.text, off);
            let m = format!("line {line}: {m}");
            if diags[0]
                .notes
                .iter()
                .any(|n| n == lang::cl::clang::INVALID_OPENCL)
            {
                return Outcome::Invalid(m);
            }
            return Outcome::Rejected(m);
        }
    };
    if let Some(w) = &h.unusual {
        return Outcome::NoLaunch(format!("the header's `{w}` gives no launch"));
    }
    let (local, groups) = match launch(h) {
        Ok(l) => l,
        Err(m) => return Outcome::Rejected(m),
    };
    let global: usize = local.iter().product::<usize>() * groups.iter().product::<usize>();
    let size = (16 * global + 1024).max(MIN_BUFFER);
    let w = local.iter().product::<usize>();
    let mut violated = Vec::new();
    let mut vacuous = None;
    let tried = OpenScalars::ALL
        .into_iter()
        .chain(constants.into_iter().map(OpenScalars::Constant));
    for open in tried {
        let used = Cell::new(false);
        let value = |k| {
            used.set(true);
            open.value(k, w)
        };
        match run_launch(&c, h, &local, &groups, size, value) {
            Ok(mut found) => {
                // The samples also where the work-group size violated the precondition
                // and a later value met it (`__requires(offset < 1024)` at 1024 threads).
                if found.is_empty() && used.get() {
                    let samples = OpenScalars::SAMPLES
                        .into_iter()
                        .chain(compared.iter().map(|&v| OpenScalars::Compared(v)));
                    for other in samples.filter(|&o| o != open) {
                        let Ok(more) =
                            run_launch(&c, h, &local, &groups, size, |k| other.value(k, w))
                        else {
                            continue;
                        };
                        for f in more {
                            let f = format!("{f} (open scalars = {})", other.name(w));
                            if !found.contains(&f) {
                                found.push(f);
                            }
                        }
                    }
                }
                return Outcome::Ran {
                    found,
                    notes: c.info.notes.iter().map(|n| n.text.clone()).collect(),
                };
            }
            Err(RunError::NoLaunch(m)) => return Outcome::NoLaunch(m),
            Err(RunError::Precondition { fault, assume }) => {
                if assume {
                    vacuous.get_or_insert_with(|| fault.clone());
                }
                violated.push(format!("{}: {fault}", open.name(w)));
            }
        }
    }
    if let Some(f) = vacuous {
        return Outcome::Vacuous(f);
    }
    Outcome::NoLaunch(format!(
        "every launch the rules choose violates the kernel's precondition (open scalars = {})",
        violated.join("; ")
    ))
}

/// The values tried, in order, for the integer scalars a header leaves open: the scaled
/// work-group size first; when every input of that launch violates the kernel's
/// precondition, 0, then 1, then one more than the work-group size (preconditions that
/// bound a scalar by the group size), then distinct values (`W`, `W+1`, ... by position,
/// for preconditions that ask scalars to differ), then each integer constant written in
/// the kernel's `__requires` (preconditions that fix a scalar or a struct member:
/// `__requires(q.a == 5)`), in the order they appear.
#[derive(Clone, Copy, PartialEq)]
enum OpenScalars {
    GroupSize,
    Zero,
    One,
    AboveGroupSize,
    Distinct,
    /// An integer constant of the kernel's `__requires` (`__requires(q.a == 5)`), for
    /// every open scalar.
    Constant(u64),
    /// A value from the kernel's comparisons ([`compared_values`]), for every open scalar.
    Compared(u64),
}

impl OpenScalars {
    /// The other values a launch at the first value that meets the precondition (the
    /// work-group size, else the next of [`OpenScalars::ALL`]) is also run with: GPUVerify treats
    /// an open scalar as arbitrary, so its verdict speaks of every value, and the values
    /// where an offset, an index or a pointer choice degenerates (0, 1) are where kernels
    /// differ most from the work-group size.
    const SAMPLES: [OpenScalars; 2] = [OpenScalars::Zero, OpenScalars::One];

    const ALL: [OpenScalars; 5] = [
        OpenScalars::GroupSize,
        OpenScalars::Zero,
        OpenScalars::One,
        OpenScalars::AboveGroupSize,
        OpenScalars::Distinct,
    ];

    /// The value of the `k`-th scalar parameter for work-group size `w`.
    fn value(self, k: usize, w: usize) -> String {
        match self {
            OpenScalars::GroupSize => w,
            OpenScalars::Zero => 0,
            OpenScalars::One => 1,
            OpenScalars::AboveGroupSize => w + 1,
            OpenScalars::Distinct => w + k,
            OpenScalars::Constant(v) | OpenScalars::Compared(v) => return v.to_string(),
        }
        .to_string()
    }

    fn name(self, w: usize) -> String {
        match self {
            OpenScalars::Distinct => format!("{w}, {}, ... by position", w + 1),
            s => s.value(0, w),
        }
    }
}

/// The most values [`compared_values`] gives (a kernel with many constants is run with
/// the first of them).
const MAX_COMPARED: usize = 16;

/// The decimal integer constants (above 1) that `text` compares with (`tid == 15`,
/// `x < 1000`), then the positive differences of two of them, each once, at most
/// [`MAX_COMPARED`]: an index `tid + x` meets the element another work-item writes when x
/// is the distance between two work-items the kernel singles out (`tid == 15` and
/// `tid == 200`: x = 185).
fn compared_values(text: &str) -> Vec<u64> {
    const OPS: [&str; 6] = ["==", "!=", "<=", ">=", "<", ">"];
    let bytes = text.as_bytes();
    let is_word = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'.';
    let mut consts: Vec<u64> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if !bytes[i].is_ascii_digit() || (i > 0 && is_word(bytes[i - 1])) {
            i += 1;
            continue;
        }
        let j = i + bytes[i..].iter().take_while(|b| b.is_ascii_digit()).count();
        let before = text[..i].trim_end();
        let after = text[j..].trim_start();
        // `a < 3` but not `a << 3` nor `a -> b`.
        let shift = |t: &str| {
            ["<<", ">>", "->"]
                .iter()
                .any(|x| t.starts_with(x) || t.ends_with(x))
        };
        let next_op = !shift(after) && OPS.iter().any(|op| after.starts_with(op));
        let prev_op = !shift(before) && OPS.iter().any(|op| before.ends_with(op));
        let suffix_ok = bytes.get(j).is_none_or(|b| !is_word(*b));
        if (next_op || prev_op) && suffix_ok {
            if let Ok(v) = text[i..j].parse::<u64>() {
                if v > 1 && !consts.contains(&v) {
                    consts.push(v);
                }
            }
        }
        i = j;
    }
    let mut out = consts.clone();
    for (k, a) in consts.iter().enumerate() {
        for b in &consts[k + 1..] {
            let d = a.abs_diff(*b);
            if d > 1 && !out.contains(&d) {
                out.push(d);
            }
        }
    }
    out.truncate(MAX_COMPARED);
    out
}

/// The decimal integer constants inside the `__requires(...)` of `text`, each once, in
/// order (those the earlier rules try, 0 and 1, left out).
fn precondition_constants(text: &str) -> Vec<u64> {
    let mut out = Vec::new();
    for (start, _) in text.match_indices("__requires(") {
        let body = &text[start + "__requires(".len()..];
        let mut depth = 1;
        let end = body
            .char_indices()
            .find(|&(_, c)| {
                depth += match c {
                    '(' => 1,
                    ')' => -1,
                    _ => 0,
                };
                depth == 0
            })
            .map_or(body.len(), |(i, _)| i);
        let body = &body[..end];
        let bytes = body.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            let word = i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
            if word && bytes[i].is_ascii_digit() {
                let j = i + bytes[i..].iter().take_while(|b| b.is_ascii_digit()).count();
                let suffix_ok = bytes
                    .get(j)
                    .is_none_or(|b| !(b.is_ascii_alphanumeric() || *b == b'_' || *b == b'.'));
                if let (true, Ok(v)) = (suffix_ok, body[i..j].parse::<u64>()) {
                    if v > 1 && !out.contains(&v) {
                        out.push(v);
                    }
                }
                i = j;
            } else {
                i += 1;
            }
        }
    }
    out
}

/// Why a launch gave no verdict.
enum RunError {
    /// The launch cannot be built.
    NoLaunch(String),
    /// Every run violated the kernel's precondition (`__requires`, `__assume`): the
    /// first fault, and whether each run violated an `__assume` (not a `__requires`).
    Precondition { fault: String, assume: bool },
}

/// Runs the kernel with both inputs, the scalars the header leaves open set to `open`;
/// the findings of the two runs.
fn run_launch(
    c: &lang::cl::Compiled,
    h: &Header,
    local: &[usize],
    groups: &[usize],
    size: usize,
    open: impl Fn(usize) -> String,
) -> Result<Vec<String>, RunError> {
    let mut found = Vec::new();
    let mut violated = None;
    let mut assume = true;
    let mut met = false;
    for input in ["zeros", "random"] {
        // Each array its own seeded contents (`random:1`, `random:2`, ... in the order of
        // the launch's inputs), so that no two arrays hold the same pattern.
        let mut seed = 0;
        let mut contents = || match input {
            "random" => {
                seed += 1;
                format!("random:{seed}")
            }
            _ => input.to_string(),
        };
        let mut defines = Vec::new();
        let mut inputs = Vec::new();
        for b in &c.info.buffers {
            defines.push((b.size_param.clone(), size.to_string()));
            inputs.push((b.array.clone(), contents()));
        }
        for im in &c.info.images {
            let sizes: Vec<usize> = (0..im.dims.len())
                .map(|d| local.get(d).unwrap_or(&1) * groups.get(d).unwrap_or(&1))
                .collect();
            defines.extend(im.defines(&sizes).map_err(RunError::NoLaunch)?);
            inputs.push((im.array.clone(), contents()));
        }
        // GPUVerify treats `__local` memory as arbitrary at the start, as it does buffers:
        // each is given the same contents. Private variables and arrays stay undefined
        // (`--uninit check`): reading one before writing it is an uninitialised read.
        for a in &c.kernel.arrays {
            let private = a.name.contains(".private") || interp::undef::is_table(&a.name);
            let given = inputs.iter().any(|(n, _)| *n == a.name);
            if a.space == lang::ast::Space::Local && !private && !given {
                inputs.push((a.name.clone(), contents()));
            }
        }
        let mut position = (0, 0);
        let mut previous: Option<&str> = None;
        for s in &c.info.scalars {
            // The members of a struct parameter (`q.a`, `q.b`) share its one value.
            let (root, member) = match s.name.split_once('.') {
                Some((root, _)) => (root, true),
                None => (s.name.as_str(), false),
            };
            if let Some(p) = previous {
                position = if member && p == root {
                    (position.0, position.1 + 1)
                } else {
                    (position.0 + 1, 0)
                };
            }
            previous = Some(root);
            let arg = h.scalar_args.get(position.0).map(|v| match member {
                true => v.checked_shr(32 * position.1).unwrap_or(0) & 0xffff_ffff,
                false => *v,
            });
            let v = match (s.ty, arg) {
                _ if c.info.samplers.contains(&s.name) => lang::cl::lower::sampler_value(SAMPLER)
                    .map_err(RunError::NoLaunch)?
                    .to_string(),
                (TypeName::Int | TypeName::Uint, Some(v)) => v.to_string(),
                (TypeName::Float, _) => "1.0".to_string(),
                (TypeName::Bool, _) => "true".to_string(),
                _ => open(position.0),
            };
            defines.push((s.param.clone(), v));
        }
        let lo = LaunchOptions {
            defines,
            group_dims: groups.to_vec(),
            local_dims: local.to_vec(),
            inputs,
            max_steps: Some(MAX_STEPS),
            uninit: interp::Uninit::Check,
            ..LaunchOptions::default()
        };
        let mut launch = match Launch::new(Arc::new(c.kernel.clone()), &lo) {
            Ok(l) => l,
            Err(e) => return Err(RunError::NoLaunch(e.0)),
        };
        // `--warp-sync=N`: the work-items of a warp of N execute in lock-step (ksim's
        // `--warp-size N`, the same within-instruction race rule as GPUVerify's).
        launch.warp_size = h
            .flags
            .iter()
            .find_map(|f| f.strip_prefix("--warp-sync=")?.parse().ok());
        launch.race_policy = if h
            .flags
            .iter()
            .any(|f| f == "--no-benign-tolerance" || f == "--adversarial-abstraction")
        {
            RacePolicy::Strict
        } else {
            RacePolicy::SameValue
        };
        let (races, fault, divergences) = match fast::run(
            &launch,
            &FastOptions {
                jobs: 1,
                track_races: true,
            },
        ) {
            Ok(o) => (
                o.races.into_iter().map(|r| r.race).collect::<Vec<_>>(),
                o.fault,
                o.divergences,
            ),
            Err(_) => {
                let o = interp::exec::run_canonical(&launch);
                (o.races, o.fault, o.divergences)
            }
        };
        let mut here = Vec::new();
        // One race per run, one within a work-group when there is one (`--only-intra-group`
        // is judged by whether all are between groups).
        let harmful = || races.iter().filter(|r| !r.benign());
        let first = (harmful().find(|r| r.first.thread.group == r.second.thread.group))
            .or_else(|| harmful().next());
        if let Some(r) = first {
            let name = &launch.kernel.arrays[r.array].name;
            let between = r.first.thread.group != r.second.thread.group;
            here.push(match between {
                true => format!("race on {name} {INTER_GROUP}"),
                false => format!("race on {name}"),
            });
        }
        if !divergences.is_empty() {
            here.push(DIVERGENCE.into());
        }
        if let Some(f) = fault {
            if f.kind.blames_launch() {
                // This input violates the kernel's precondition: it is no run of the kernel.
                violated.get_or_insert(f.to_string());
                assume &= matches!(&f.kind, FaultKind::Annotation { annotation, .. }
                    if annotation == lang::core::Annotation::Assume.name());
                continue;
            }
            here.push(match f.kind {
                FaultKind::StepBound { .. } => "non-termination (step bound)".into(),
                FaultKind::OutOfBounds { array, .. } => format!("out of bounds on {array}"),
                FaultKind::Uninitialised { name, .. } => format!("uninitialised read of {name}"),
                k => format!("fault: {k}"),
            });
        }
        met = true;
        for x in here {
            if !found.contains(&x) {
                found.push(x);
            }
        }
    }
    match violated {
        Some(fault) if !met => Err(RunError::Precondition { fault, assume }),
        _ => Ok(found),
    }
}

/// The scaled launch of a header, `(local, groups)` per dimension, by the rules at the top;
/// `Err` for a launch OpenCL rejects.
pub fn launch(h: &Header) -> Result<(Vec<usize>, Vec<usize>), String> {
    let header_groups = match &h.global {
        Some(_) if h.groups_given => {
            return Err("the launch gives both --num_groups and --global_size".into())
        }
        Some(g) if g.len() != h.local.len() => {
            return Err(format!(
                "the global size has {} dimensions and the local size {}",
                g.len(),
                h.local.len()
            ))
        }
        Some(g) => g
            .iter()
            .zip(&h.local)
            .map(|(&g, &l)| {
                if l == 0 || g % l != 0 {
                    Err(format!(
                        "global size {g} is not a multiple of local size {l}"
                    ))
                } else {
                    Ok(g / l)
                }
            })
            .collect::<Result<Vec<usize>, String>>()?,
        None => h.groups.clone(),
    };
    let scale = |dims: &[usize], cap: usize, per_dim: usize| {
        let mut prod = 1;
        dims.iter()
            .map(|&d| {
                let d = d.max(1).min(per_dim).min((cap / prod).max(1));
                prod *= d;
                d
            })
            .collect::<Vec<usize>>()
    };
    // A work-group size the header fixes is the kernel's (its code may depend on it, as
    // on `reqd_work_group_size`): only an open one (`*`) is scaled.
    let groups = scale(&header_groups, MAX_GROUPS_ALL, MAX_GROUPS);
    let threads = h.local.iter().chain(&groups).product::<usize>();
    let local = if h.any.contains(&"local_size") || threads > MAX_FIXED_THREADS {
        scale(&h.local, MAX_LOCAL, MAX_LOCAL)
    } else {
        h.local.clone()
    };
    Ok((local, groups))
}

/// The heading of the CUDA section of docs/conformance.md (the OpenCL report comes before it).
const CUDA_HEADING: &str = "## CUDA: GPUVerify's CUDA test suite";

/// Why the figures changed when the runner was made honest (issue 26 item 9), for the
/// report's readers.
const CHANGES: &str = "Since issue 26 (item 1) `.cl` kernels are read by clang-15 alone \
(was ksim's own preprocessor and parser). Four kernels that parser accepted are invalid \
OpenCL C 1.2, refused by clang as PoCL and Oclgrind refuse them, and are class (e), outside \
the valid kernels: `async_work_group_copy/fail/test3` (`event_t + 1`; it agreed), \
`atomics/refined_atomic_abstraction/check_used_treated_ok` (a `size_t` kernel parameter; \
it was (d)), `test_structs/store_ptr_array_element` (it agreed) and \
`test_structs/use_ptr_array_element` (it was (d)), both struct kernel parameters holding \
pointers. Figures before: 465 load and 413 agree of 486; now 463 load and 411 agree of the \
482 valid ones.\n\n\
Since issue 26 (item 9) the runner's step bound is 10^8 (was 10^6), a \
work-group size the header fixes is run as it is (was scaled to 128 work-items), each array \
has its own random seed (was one pattern for all), and every class is given by a check of \
the findings (was: the first rule whose flag or word matched). Against the figures before \
(465 load, 404 agree; (b) 45, (c) 3, (d) 34): five kernels blamed on termination finish \
and agree (`barrier_invariants/all_different_loop`, `function_wide/pass/as_candidates`, \
`function_wide/pass/candidates`, `return_tests/multiloop_return`, \
`skeletonbinomialoptions`); four whose (b) reason was the scaled launch agree at the \
header's size (`annotation_tests/test_axiom`, `global_size/simple`, \
`unconstrained_sizes/global_size`, `unconstrained_sizes/num_groups`); \
`async_work_group_copy/fail/test13` agrees now that `__local` memory and the buffers hold \
different data (its reason said so); `asymmetric_asserts/fail` and `no_log/fail` move from \
(b) to (d): the mode flag was not why, an annotation ksim does not check (`__other_bool`, \
`__write`) is; `annotation_tests/test_candidate_global_invariant` moves from agree to (b): at \
its header's 1024 work-items per group it indexes its `__local` array beyond the runner's \
buffers (the reason is checked: out of bounds is its only finding).\n";

/// A mode flag of the header that explains a disagreement, checked against what ksim
/// found: `--only-divergence` (GPUVerify checks barrier divergence only) when ksim's
/// findings of a `pass` kernel are no divergence, `--only-intra-group` (races within a
/// work-group only) when they are all races between work-groups.
fn mode_reason(h: &Header, expect: &Expect, found: &[String]) -> Option<String> {
    let flag = |m: &str| h.flags.iter().any(|f| f == m);
    if *expect != Expect::Pass || found.is_empty() {
        return None;
    }
    if flag("--only-log") {
        return Some("`--only-log`: GPUVerify only logs the accesses and checks nothing".into());
    }
    if flag("--only-divergence") && !found.iter().any(|f| f == DIVERGENCE) {
        return Some(
            "`--only-divergence`: GPUVerify checks barrier divergence only; ksim's findings \
             are not divergence"
                .into(),
        );
    }
    if flag("--only-intra-group") && found.iter().all(|f| f.ends_with(INTER_GROUP)) {
        return Some(
            "`--only-intra-group`: GPUVerify checks races within a work-group only; ksim's \
             races are all between work-groups"
                .into(),
        );
    }
    None
}

const DIVERGENCE: &str = "barrier divergence";
/// The end of a race finding whose two accesses are in different work-groups.
const INTER_GROUP: &str = "between work-groups";

/// The end of a precondition fault raised by the first work-item the canonical schedule
/// runs (see "Assumptions" above).
const FIRST_WORK_ITEM: &str = "in thread 0 of group 0";

fn judge(path: String, h: Header, outcome: Outcome) -> Row {
    let mut class = None;
    let agree = match (&h.expect, &outcome) {
        (_, Outcome::NotLoadable(c)) => {
            class = Some((Class::D, c.clone()));
            false
        }
        (_, Outcome::NoLaunch(m)) => {
            class = Some((Class::D, format!("no launch by the rules: {m}")));
            false
        }
        (Expect::Pass, Outcome::Vacuous(m)) if m.ends_with(FIRST_WORK_ITEM) => true,
        (Expect::Pass, Outcome::Vacuous(m)) => {
            class = Some((
                Class::B,
                format!("the assumption excludes some work-items, not the run: GPUVerify reads an `__assume` per pair of work-items (and checks the pairs that satisfy it); ksim's runs include every work-item of the launch, so none satisfies it and nothing is checked ({m})"),
            ));
            false
        }
        (_, Outcome::Vacuous(m)) => {
            class = Some((
                Class::D,
                format!("GPUVerify finds an error in executions that satisfy the assumptions; ksim's runs at the launch violate them ({m})"),
            ));
            false
        }
        (Expect::FrontEnd(_), Outcome::Rejected(_) | Outcome::Invalid(_)) => true,
        (_, Outcome::Invalid(m)) => {
            class = Some((
                Class::E,
                format!("clang-15 refuses it as OpenCL C 1.2, as PoCL and Oclgrind do: {m}"),
            ));
            false
        }
        (Expect::FrontEnd(code), Outcome::Ran { .. }) => {
            class = Some((
                Class::B,
                format!("GPUVerify's tool chain stops with {code}; ksim reads and runs the kernel"),
            ));
            false
        }
        (_, Outcome::Rejected(m)) => {
            class = Some((
                Class::A,
                format!("ksim rejects a kernel GPUVerify reads: {m}"),
            ));
            false
        }
        (Expect::Pass, Outcome::Ran { found, .. }) if found.is_empty() => true,
        (Expect::NotAllVerified, Outcome::Ran { found, .. })
            if !found.is_empty()
                && (h.flags.iter().any(|f| f == "--check-array-bounds")
                    || !found.iter().all(|f| f.starts_with("out of bounds"))) =>
        {
            true
        }
        (expect, Outcome::Ran { found, notes }) => {
            let bounds = h.flags.iter().any(|f| f == "--check-array-bounds");
            let only = |p: &str| !found.is_empty() && found.iter().all(|f| f.starts_with(p));
            class = Some(if *expect == Expect::Pass && only("non-termination") {
                (Class::B, "the run exceeds the runner's step bound (10^8 steps), and that is ksim's only finding; GPUVerify does not check termination".into())
            } else if only("out of bounds") && !bounds {
                (
                    Class::B,
                    "ksim's only finding is an access outside its scaled buffers; GPUVerify's \
                     buffers are unbounded unless --check-array-bounds"
                        .into(),
                )
            } else if let Some(n) = notes
                .iter()
                .find(|n| *expect == Expect::NotAllVerified && n.contains("is not checked"))
            {
                (Class::D, format!("an annotation is not checked: {n}"))
            } else if let Some(why) = mode_reason(&h, expect, found) {
                (Class::B, why)
            } else {
                (
                    Class::A,
                    "unreviewed disagreement: a possible ksim bug".into(),
                )
            });
            false
        }
    };
    let class = if agree {
        None
    } else {
        match EXCEPTIONS.iter().find(|(p, _, _)| *p == path) {
            Some((_, c, why)) => Some((*c, why.to_string())),
            None => class,
        }
    };
    Row {
        path,
        expect: h.expect,
        outcome,
        agree,
        class,
    }
}

/// The construct of a "not supported yet" message, without the instance: `vector types
/// (`float4`) (as a buffer's element type)` → `vector types`.
pub fn construct(why: &str) -> String {
    if why.starts_with("the type `") {
        return "the types char, short, long, half, double".into();
    }
    let mut w = why.trim_end_matches(" (as a buffer's element type)");
    if let Some(i) = w.find(" (`") {
        w = &w[..i];
    }
    w.to_string()
}

/// Counts for the summary and the CI test.
#[derive(Debug, Default)]
pub struct Counts {
    pub total: usize,
    /// Invalid OpenCL C 1.2 (class (e)): the other figures are over the rest.
    pub invalid: usize,
    pub loaded: usize,
    pub agree: usize,
    /// Agreements among the kernels that ran.
    pub agree_loaded: usize,
    pub by_class: BTreeMap<Class, usize>,
}

impl Report {
    /// The [`EXCEPTIONS`] entries that classify no disagreement (their kernel agrees now, or
    /// is not in the corpus): reasons that no longer describe anything, to be removed.
    pub fn stale_exceptions(&self) -> Vec<&'static str> {
        // Only those of this corpus's language: the OpenCL entries say nothing of a CUDA
        // run, and the CUDA ones nothing of an OpenCL run.
        let ext = |p: &str| Path::new(p).extension().map(|e| e.to_owned());
        EXCEPTIONS
            .iter()
            .map(|(p, _, _)| *p)
            .filter(|p| self.rows.iter().any(|r| ext(&r.path) == ext(p)))
            .filter(|p| !self.rows.iter().any(|r| r.path == *p && !r.agree))
            .collect()
    }

    pub fn counts(&self) -> Counts {
        let mut c = Counts {
            total: self.rows.len(),
            ..Counts::default()
        };
        for r in &self.rows {
            c.loaded += r.loaded() as usize;
            c.agree += r.agree as usize;
            c.agree_loaded += (r.agree && r.loaded()) as usize;
            if let Some((k, _)) = &r.class {
                *c.by_class.entry(*k).or_default() += 1;
            }
        }
        c.invalid = c.by_class.get(&Class::E).copied().unwrap_or(0);
        c
    }

    pub fn summary(&self) -> String {
        let c = self.counts();
        let mut s = format!(
            "{} kernels, {} valid OpenCL C 1.2: {} load and run, {} agree with GPUVerify ({} of those that run)",
            c.total,
            c.total - c.invalid,
            c.loaded,
            c.agree,
            c.agree_loaded
        );
        for (k, n) in &c.by_class {
            let _ = write!(s, "; {} {n}", k.label());
        }
        s
    }

    /// Kernels not loadable yet, counted by construct, most frequent first.
    pub fn constructs(&self) -> Vec<(String, usize)> {
        let mut m: BTreeMap<String, usize> = BTreeMap::new();
        for r in &self.rows {
            if let Some((Class::D, why)) = &r.class {
                if !r.loaded() {
                    *m.entry(construct(why)).or_default() += 1;
                }
            }
        }
        let mut v: Vec<_> = m.into_iter().collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        v
    }

    /// Whether the corpus is CUDA's (its kernels are `.cu` files).
    pub fn is_cuda(&self) -> bool {
        self.rows.iter().any(|r| r.path.ends_with(".cu"))
    }

    /// The text of docs/conformance.md after this run, `old` its text before: the OpenCL
    /// report followed by the CUDA section, each run replacing its own part.
    pub fn document(&self, old: &str) -> String {
        let (opencl, cuda) = match old.find(CUDA_HEADING) {
            Some(i) => (&old[..i], &old[i..]),
            None => (old, ""),
        };
        if self.is_cuda() {
            format!("{}\n{}", opencl.trim_end(), self.cuda_section())
        } else {
            format!("{}\n{cuda}", self.markdown().trim_end())
        }
    }

    /// The CUDA section of docs/conformance.md: counts, classes and every kernel that does
    /// not agree.
    pub fn cuda_section(&self) -> String {
        let c = self.counts();
        let mut s = String::new();
        let _ = writeln!(s, "{CUDA_HEADING}\n");
        let _ = writeln!(
            s,
            "Written by `cargo run --release --example conformance -- ../shared/corpora/gpuverify-cuda \
             --write docs/conformance.md` over GPUVerify's CUDA test suite (123 kernels; headers \
             `--blockDim=`, `--gridDim=` read as `--local_size=`, `--num_groups=`), by the same rules \
             and classes as the OpenCL suite above.\n"
        );
        let _ = writeln!(s, "| | kernels |\n|---|---|");
        let _ = writeln!(s, "| in the corpus | {} |", c.total);
        let _ = writeln!(s, "| load and run | {} |", c.loaded);
        let _ = writeln!(s, "| agree with the header | {} |", c.agree);
        let _ = writeln!(s, "| agree, among those that run | {} |", c.agree_loaded);
        for (k, n) in &c.by_class {
            let _ = writeln!(s, "| disagree or not loadable: {} | {n} |", k.label());
        }
        let _ = writeln!(
            s,
            "\n### CUDA kernels that do not agree\n\n| kernel | expected | ksim | class | why |\n|---|---|---|---|---|"
        );
        for r in self.rows.iter().filter(|r| !r.agree) {
            let ksim = match &r.outcome {
                Outcome::Ran { found, .. } if found.is_empty() => "clean".to_string(),
                Outcome::Ran { found, .. } => found.join("; "),
                Outcome::Rejected(m) => format!("rejected: {m}"),
                Outcome::Invalid(m) => format!("invalid OpenCL C 1.2: {m}"),
                Outcome::Vacuous(m) => format!("vacuous: {m}"),
                Outcome::NotLoadable(m) => format!("not loadable: {m}"),
                Outcome::NoLaunch(m) => format!("no launch: {m}"),
            };
            let (k, why) = r.class.clone().unwrap_or((Class::A, String::new()));
            let _ = writeln!(
                s,
                "| `{}` | {} | {} | {} | {} |",
                r.path,
                expect_text(&r.expect),
                ksim.replace('|', "\\|"),
                k.label(),
                why.replace('|', "\\|")
            );
        }
        s
    }

    pub fn markdown(&self) -> String {
        let c = self.counts();
        let mut s = String::new();
        let _ = writeln!(s, "# GPUVerify conformance\n");
        let _ = writeln!(
            s,
            "Written by `cargo run --release --example conformance -- ../shared/corpora/gpuverify-opencl --write docs/conformance.md` \
             over GPUVerify's OpenCL test suite (see `../shared/corpora/README.md`). The rules (macros, \
             launch scaling, buffer sizes, scalar values, inputs, verdict) are at the top of \
             `examples/conformance/runner.rs`; per-kernel exceptions are its `EXCEPTIONS` table.\n"
        );
        let _ = writeln!(s, "{CHANGES}");
        let _ = writeln!(s, "| | kernels |\n|---|---|");
        let _ = writeln!(s, "| in the corpus | {} |", c.total);
        let _ = writeln!(
            s,
            "| valid OpenCL C 1.2 (the figures below count these) | {} |",
            c.total - c.invalid
        );
        let _ = writeln!(s, "| load and run | {} |", c.loaded);
        let _ = writeln!(s, "| agree with the header | {} |", c.agree);
        let _ = writeln!(s, "| agree, among those that run | {} |", c.agree_loaded);
        for (k, n) in &c.by_class {
            let _ = writeln!(s, "| disagree or not loadable: {} | {n} |", k.label());
        }
        let _ = writeln!(s, "\nClasses: (a) a ksim bug (to fix; an unreviewed disagreement counts here); \
             (b) GPUVerify's mode or policy that ksim reads differently (a front-end error of its tool \
             chain on a kernel ksim runs, a mode flag, termination); (c) imprecision of the static \
             verifier (`NOT_ALL_VERIFIED` that no input exhibits); (d) not loadable or not checkable yet; \
             (e) invalid OpenCL C 1.2: clang-15, ksim's front end, refuses the kernel, as PoCL and \
             Oclgrind (which use clang) do, decided by the note clang's error carries in ksim (not \
             by kernel name); these are not counted among the valid kernels.\n");
        let _ = writeln!(
            s,
            "## Not loadable yet, by construct\n\nThe first construct ksim stops at in each kernel \
             (a kernel may need more than one).\n\n| construct | kernels |\n|---|---|"
        );
        for (k, n) in self.constructs() {
            let _ = writeln!(s, "| {} | {n} |", k.replace('|', "\\|"));
        }
        let _ = writeln!(
            s,
            "\n## Invalid OpenCL C 1.2\n\nclang-15's error on each (PoCL and Oclgrind refuse them \
             too).\n\n| kernel | expected | clang-15 |\n|---|---|---|"
        );
        for r in &self.rows {
            if let Outcome::Invalid(m) = &r.outcome {
                let m = m.replace('|', "\\|");
                let _ = writeln!(s, "| `{}` | {} | {m} |", r.path, expect_text(&r.expect));
            }
        }
        let _ = writeln!(s, "\n## Disagreements among the kernels that run\n\n| kernel | expected | ksim | class | why |\n|---|---|---|---|---|");
        for r in self.rows.iter().filter(|r| !r.agree) {
            let ksim = match &r.outcome {
                Outcome::Ran { found, .. } if found.is_empty() => "clean".to_string(),
                Outcome::Ran { found, .. } => found.join("; "),
                Outcome::Rejected(m) => format!("rejected: {m}"),
                Outcome::Vacuous(m) => format!("vacuous: {m}"),
                _ => continue,
            };
            let (k, why) = r.class.clone().unwrap_or((Class::A, String::new()));
            let _ = writeln!(
                s,
                "| `{}` | {} | {} | {} | {} |",
                r.path,
                expect_text(&r.expect),
                ksim.replace('|', "\\|"),
                k.label(),
                why.replace('|', "\\|")
            );
        }
        let _ = writeln!(s, "\n## Every kernel\n\n```");
        for r in &self.rows {
            let _ = writeln!(s, "{}", r.line());
        }
        let _ = writeln!(s, "```");
        s
    }
}
