//! Race reports: one JSON file per distinct race, enough to re-run the exact execution
//! from any directory, and to tell whether the kernel changed since.
//!
//! ```json
//! {
//!   "format": "ksim-race-report",
//!   "format_version": 3,
//!   "ksim_version": "0.1.0",
//!   "source_hash": "fnv1a64:5f1c2d3e4a5b6c7d",   // FNV-1a 64 of the kernel file's bytes
//!   "kernel": "kogge_stone_racy",
//!   "kernel_path": "examples/kogge_stone_racy.ksim", // as given on the command line
//!   "kernel_path_absolute": "/home/me/ksim/examples/kogge_stone_racy.ksim",
//!   "kernel_path_from_report": "../examples/kogge_stone_racy.ksim",
//!   "source": "kernel kogge_stone_racy(...) ...",  // the whole kernel file
//!   "launch_hash": "fnv1a64:0123456789abcdef",     // resolved launch and initial arrays
//!   "launch": {                                     // the launch options as given
//!     "defines": [["n", "4"]], "groups": null, "local_size": null,
//!     "monoid": "int-add", "inputs": [["in", "iota"]], "max_steps": 10004000
//!   },
//!   "resolved": { "groups": 1, "local_size": 4, "params": {"n": 4}, ... },
//!   "race": { "array": "out", "index": [1], "first": {...}, "second": {...},
//!             "key": {"first": {"span": [s, e], "kind": "read"}, "second": {...}} },
//!   "schedule": { "runs": [[0, 2], [1, 5], ...] },  // ends with the step completing the race
//!   "found_by": "exhaustive"
//! }
//! ```
//!
//! `max_steps` is the bound the explorer actually used, so a replay runs under the same
//! launch. The source hash is FNV-1a (64-bit, offset basis 0xcbf29ce484222325, prime
//! 0x100000001b3) over the raw bytes of the kernel file, printed as 16 hex digits: stable
//! across platforms and ksim versions, no dependency. The launch hash is the same hash of
//! the resolved launch and the initial contents of every array (so `-D n=4` and `-D n=8`,
//! or two `--input` files, give different file names). Format 1 reports (no paths other
//! than `kernel_path`, no source, no launch hash) and format 2 reports (no `flags`, no
//! `files`) are still read. Reports are written atomically (a temporary file, then a
//! rename) by the command line.
//!
//! Format 3 adds what rebuilding a `.cl` or `.sim` launch needs: `flags`, the launch
//! options as given (`-D`, `-I`, `--kernel`, sizes, `--arg`, `--input`; paths made
//! absolute), and `files`, every other file the launch read (the `.sim` file's program,
//! `#include`d headers, `@FILE` inputs) with its absolute path, hash and text:
//!
//! ```json
//!   "flags": { "defines": [["RACY", null]], "include": ["/home/me/inc"], "kernel": null,
//!              "global": "8", "local": "8", "groups": null, "local_size": null,
//!              "args": [], "inputs": [["in", "iota:8"], ["out", "zeros:8"]] },
//!   "files": [ { "path": "/home/me/inc/h.h", "hash": "fnv1a64:...", "text": "..." } ]
//! ```

use crate::explore::model::{LaunchModel, RaceModel};
use crate::explore::FoundRace;
use crate::schedule::Schedule;
use crate::text::SourceText;
use interp::race::{AccessKind, Race, RaceKey};
use interp::{Atomicity, Launch, LaunchOptions, Monoid, RacePolicy};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

pub const FORMAT: &str = "ksim-race-report";
pub const FORMAT_VERSION: u32 = 3;

/// FNV-1a, 64 bits.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The source hash stored in reports: `fnv1a64:` and 16 hex digits.
pub fn source_hash(text: &str) -> String {
    format!("fnv1a64:{:016x}", fnv1a64(text.as_bytes()))
}

/// The hash of a resolved launch and its initial arrays, `fnv1a64:` and 16 hex digits.
pub fn launch_hash(launch: &Launch) -> String {
    let text = serde_json::to_string(&(LaunchModel::new(launch), &launch.initial)).expect("JSON");
    format!("fnv1a64:{:016x}", fnv1a64(text.as_bytes()))
}

/// The difference between two versions of a kernel source, as a unified diff.
pub fn source_diff(old: &str, new: &str, old_name: &str, new_name: &str) -> String {
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(2)
        .header(old_name, new_name)
        .to_string()
}

/// The canonical schedule up to each race of `keys` (the races `ksim races` found with the
/// fast executor, which decides them on the canonical schedule): the reference semantics
/// runs the canonical schedule and stops once every key has been seen. Keys it does not
/// meet get no entry.
pub fn canonical_race_schedules(launch: &Launch, keys: &[RaceKey]) -> Vec<FoundRace> {
    use std::cell::Cell;
    struct Watch<'a> {
        keys: &'a [RaceKey],
        found: Vec<Race>,
        done: &'a Cell<bool>,
    }
    impl interp::exec::Observer for Watch<'_> {
        fn race(&mut self, race: &Race) {
            if self.keys.contains(&race.key()) && !self.found.iter().any(|r| r.key() == race.key())
            {
                self.found.push(race.clone());
                self.done.set(self.found.len() == self.keys.len());
            }
        }
    }
    let done = Cell::new(keys.is_empty());
    let mut watch = Watch {
        keys,
        found: Vec::new(),
        done: &done,
    };
    let out = interp::exec::run(
        launch,
        |_, r| if done.get() { None } else { r.first() },
        &mut watch,
    );
    watch
        .found
        .into_iter()
        .map(|race| FoundRace {
            schedule: out.schedule.prefix(race.second.step + 1),
            race,
        })
        .collect()
}

/// The launch options as the user gave them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LaunchSpec {
    pub defines: Vec<(String, String)>,
    pub groups: Option<usize>,
    pub local_size: Option<usize>,
    /// A multi-dimensional launch's groups and work-group size per dimension (absent for
    /// one dimension).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub group_dims: Vec<usize>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub local_dims: Vec<usize>,
    pub monoid: String,
    pub inputs: Vec<(String, String)>,
    pub max_steps: u64,
    /// The race policy the race was judged under (absent: `strict`).
    #[serde(default, skip_serializing_if = "is_strict")]
    pub race_policy: RacePolicy,
    /// The atomicity the race was found under (absent: `statement`).
    #[serde(default, skip_serializing_if = "is_statement")]
    pub atomicity: Atomicity,
    /// The warp size the race was found under (`--warp-size`; absent: threads interleave).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warp_size: Option<usize>,
    /// What memory nothing wrote held (`--uninit`; absent: `zero`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub uninit: interp::Uninit,
    /// The run went on past faults (absent: it stopped at the first, as before
    /// `--stop-at-first-fault` existed).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub continue_after_faults: bool,
}

fn is_zero(u: &interp::Uninit) -> bool {
    *u == interp::Uninit::Zero
}

fn is_statement(a: &Atomicity) -> bool {
    *a == Atomicity::Statement
}

fn is_strict(p: &RacePolicy) -> bool {
    *p == RacePolicy::Strict
}

impl LaunchSpec {
    /// The spec of a launch built from `o` (with `max_steps` resolved), judged under the
    /// race policy `race_policy`.
    pub fn from_options(o: &LaunchOptions, max_steps: u64, race_policy: RacePolicy) -> LaunchSpec {
        LaunchSpec {
            defines: o.defines.clone(),
            groups: o.groups,
            local_size: o.local_size,
            group_dims: o.group_dims.clone(),
            local_dims: o.local_dims.clone(),
            monoid: o.monoid.name().to_string(),
            inputs: o.inputs.clone(),
            max_steps,
            race_policy,
            atomicity: Atomicity::Statement,
            warp_size: None,
            uninit: o.uninit,
            continue_after_faults: o.continue_after_faults,
        }
    }

    pub fn options(&self) -> Result<LaunchOptions, String> {
        let monoid: Monoid = self.monoid.parse()?;
        Ok(LaunchOptions {
            defines: self.defines.clone(),
            groups: self.groups,
            local_size: self.local_size,
            group_dims: self.group_dims.clone(),
            local_dims: self.local_dims.clone(),
            monoid,
            inputs: self.inputs.clone(),
            max_steps: Some(self.max_steps),
            uninit: self.uninit,
            continue_after_faults: self.continue_after_faults,
        })
    }
}

/// The launch options as given on the command line (format 3): with the kernel file and
/// [`LaunchSpec`]'s monoid, step bound and `--uninit`, they rebuild the launch of any kind
/// of kernel file. Paths (`-I`, `@FILE` inputs) are absolute.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LaunchFlags {
    /// `-D NAME` (value `null`) and `-D NAME=VALUE`.
    pub defines: Vec<(String, Option<String>)>,
    /// `-I DIR`.
    pub include: Vec<String>,
    /// `--kernel NAME`.
    pub kernel: Option<String>,
    pub global: Option<String>,
    pub local: Option<String>,
    pub groups: Option<String>,
    pub local_size: Option<String>,
    /// `--arg NAME=VALUE`.
    pub args: Vec<(String, String)>,
    /// `--input NAME=SPEC`.
    pub inputs: Vec<(String, String)>,
    /// `--no-specs` (`.pvl`): the program ran without checking its specifications, so a
    /// replay must not check them either (their faults would come before the race).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_specs: bool,
}

/// A file a launch read besides the kernel file, kept in the report (format 3).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SavedFile {
    /// The absolute path it was read from.
    pub path: String,
    /// [`source_hash`] of its text.
    pub hash: String,
    pub text: String,
}

impl SavedFile {
    pub fn new(path: &Path, text: &str) -> SavedFile {
        SavedFile {
            path: path.display().to_string(),
            hash: source_hash(text),
            text: text.to_string(),
        }
    }
}

/// What a report records of the files and options of a launch.
#[derive(Clone, Debug)]
pub struct Recorded {
    /// The kernel file (`.ksim`, `.cl` or `.sim`) as given on the command line, and its text.
    pub path: String,
    pub text: String,
    pub flags: LaunchFlags,
    /// Every other file the launch read.
    pub files: Vec<SavedFile>,
}

/// One side of a race key.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct KeySide {
    pub span: (usize, usize),
    /// `read`, `write` or `atomic`.
    pub kind: String,
}

/// A [`RaceKey`] in JSON.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct KeySpec {
    pub first: KeySide,
    pub second: KeySide,
    /// The race policy judged the pair benign ([`interp::policy`]); absent when not.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub benign: bool,
}

impl KeySpec {
    pub fn from_key(k: &RaceKey) -> KeySpec {
        KeySpec {
            first: KeySide {
                span: (k.0.start, k.0.end),
                kind: k.1.name().into(),
            },
            second: KeySide {
                span: (k.2.start, k.2.end),
                kind: k.3.name().into(),
            },
            benign: k.4,
        }
    }

    pub fn to_key(&self) -> RaceKey {
        let kind = |s: &str| match s {
            "write" => AccessKind::Write,
            "atomic" => AccessKind::Atomic,
            "atomic-read" => AccessKind::AtomicRead,
            _ => AccessKind::Read,
        };
        (
            self.first.span.0..self.first.span.1,
            kind(&self.first.kind),
            self.second.span.0..self.second.span.1,
            kind(&self.second.kind),
            self.benign,
        )
    }

    /// A short stable name for file names.
    pub fn tag(&self) -> String {
        let text = format!(
            "{}-{}-{}-{}-{}-{}",
            self.first.span.0,
            self.first.span.1,
            self.first.kind,
            self.second.span.0,
            self.second.span.1,
            self.second.kind
        );
        // A benign pair of the same statements as a harmful one gets its own file.
        let text = if self.benign { text + "-benign" } else { text };
        format!("{:08x}", fnv1a64(text.as_bytes()) as u32)
    }
}

/// The longest kernel name kept whole in a report's file name (the rest of the name takes
/// at most 70 bytes, which keeps it under the 255 bytes of common file systems).
pub const KERNEL_NAME_BYTES: usize = 100;

/// A race report (see the module documentation for the format).
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RaceReport {
    pub format: String,
    pub format_version: u32,
    pub ksim_version: String,
    pub source_hash: String,
    pub kernel: String,
    /// The kernel file as given on the command line that found the race.
    pub kernel_path: String,
    /// The kernel file's absolute path (format 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_path_absolute: Option<String>,
    /// The kernel file's path relative to the report's folder (format 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_path_from_report: Option<String>,
    /// The whole kernel source (format 2): replay without the file, and the difference
    /// when the file changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The hash of the resolved launch and its initial arrays ([`launch_hash`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launch_hash: Option<String>,
    pub launch: LaunchSpec,
    /// The resolved launch (sizes, parameters), for people reading the report.
    #[schemars(with = "crate::explore::model::LaunchModel")]
    pub resolved: serde_json::Value,
    /// The race: elements, both accesses (thread, group, kind, span, step, epoch), and its
    /// `key` (the pair of statements and kinds).
    #[schemars(with = "crate::schema::ReportRace")]
    pub race: serde_json::Value,
    pub schedule: Schedule,
    pub found_by: String,
    /// The launch options as given (format 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flags: Option<LaunchFlags>,
    /// Every file the launch read besides the kernel file (format 3).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<SavedFile>,
}

impl RaceReport {
    /// The race key stored under `race.key`.
    pub fn key(&self) -> Option<RaceKey> {
        let k: KeySpec = serde_json::from_value(self.race.get("key")?.clone()).ok()?;
        Some(k.to_key())
    }

    /// A report of race `found` of `launch` (from the files and options of `recorded`,
    /// launched with `spec`; `src` is the kernel source its spans point into), to be
    /// written into the folder `dir`.
    pub fn new(
        src: SourceText,
        recorded: Recorded,
        launch: &Launch,
        spec: LaunchSpec,
        found: &FoundRace,
        found_by: &str,
        dir: &Path,
    ) -> RaceReport {
        let mut race =
            serde_json::to_value(RaceModel::new(src, launch, &found.race)).expect("JSON");
        race["key"] = serde_json::to_value(KeySpec::from_key(&found.race.key())).expect("JSON");
        let absolute = std::path::absolute(&recorded.path).ok();
        let from_report = absolute.as_ref().and_then(|k| {
            let d = std::path::absolute(dir).ok()?;
            pathdiff::diff_paths(k, d)
        });
        RaceReport {
            format: FORMAT.into(),
            format_version: FORMAT_VERSION,
            ksim_version: env!("CARGO_PKG_VERSION").into(),
            source_hash: source_hash(&recorded.text),
            kernel: launch.kernel.name.clone(),
            kernel_path: recorded.path,
            kernel_path_absolute: absolute.map(|p| p.display().to_string()),
            kernel_path_from_report: from_report.map(|p| p.display().to_string()),
            source: Some(recorded.text),
            launch_hash: Some(launch_hash(launch)),
            launch: spec,
            resolved: serde_json::to_value(LaunchModel::new(launch)).expect("JSON"),
            race,
            schedule: found.schedule.clone(),
            found_by: found_by.into(),
            flags: Some(recorded.flags),
            files: recorded.files,
        }
    }

    /// Where the kernel file may be, in the order tried: relative to the report's folder,
    /// the absolute path, the path as given (relative to the current directory).
    pub fn kernel_candidates(&self, report: &Path) -> Vec<PathBuf> {
        let dir = report.parent().unwrap_or(Path::new(""));
        let mut c = Vec::new();
        if let Some(p) = &self.kernel_path_from_report {
            c.push(dir.join(p));
        }
        if let Some(p) = &self.kernel_path_absolute {
            c.push(PathBuf::from(p));
        }
        c.push(PathBuf::from(&self.kernel_path));
        c.push(dir.join(&self.kernel_path));
        c
    }

    /// `race-KERNEL-LINE1-LINE2-TAG-LAUNCH.json` (see [`RaceReport::file_name`]).
    pub fn file_name_for(&self, src: SourceText) -> String {
        let lines = self
            .key()
            .map(|k| (src.line(k.0.start), src.line(k.2.start)))
            .unwrap_or((0, 0));
        self.file_name(lines.0, lines.1)
    }

    /// `race-KERNEL-LINE1-LINE2-TAG-LAUNCH.json`, LAUNCH the first 8 hex digits of the
    /// launch hash. File systems refuse names over 255 bytes, so a
    /// kernel name longer than [`KERNEL_NAME_BYTES`] is cut there and followed by `~` and
    /// the hash of the whole name (names stay distinct and the file name short).
    pub fn file_name(&self, line1: usize, line2: usize) -> String {
        let tag = self
            .race
            .get("key")
            .and_then(|k| serde_json::from_value::<KeySpec>(k.clone()).ok())
            .map(|k| k.tag())
            .unwrap_or_default();
        let name = if self.kernel.len() > KERNEL_NAME_BYTES {
            let mut cut = KERNEL_NAME_BYTES;
            while !self.kernel.is_char_boundary(cut) {
                cut -= 1;
            }
            format!(
                "{}~{:08x}",
                &self.kernel[..cut],
                fnv1a64(self.kernel.as_bytes()) as u32
            )
        } else {
            self.kernel.clone()
        };
        let launch = self
            .launch_hash
            .as_deref()
            .and_then(|h| h.strip_prefix("fnv1a64:"))
            .map(|h| format!("-{}", &h[..h.len().min(8)]))
            .unwrap_or_default();
        format!("race-{name}-L{line1}-L{line2}-{tag}{launch}.json")
    }

    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("JSON");
        s.push('\n');
        s
    }

    /// Parses a report, checking its format.
    pub fn parse(text: &str) -> Result<RaceReport, String> {
        let r: RaceReport =
            serde_json::from_str(text).map_err(|e| format!("not a ksim race report: {e}"))?;
        if r.format != FORMAT {
            return Err(format!("not a ksim race report (format `{}`)", r.format));
        }
        if r.format_version > FORMAT_VERSION {
            return Err(format!(
                "race report format version {} is newer than this ksim understands ({FORMAT_VERSION})",
                r.format_version
            ));
        }
        Ok(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(kernel: &str) -> RaceReport {
        RaceReport {
            format: FORMAT.into(),
            format_version: FORMAT_VERSION,
            ksim_version: String::new(),
            source_hash: String::new(),
            kernel: kernel.into(),
            kernel_path: String::new(),
            kernel_path_absolute: None,
            kernel_path_from_report: None,
            source: None,
            launch_hash: Some("fnv1a64:0123456789abcdef".into()),
            launch: LaunchSpec {
                defines: Vec::new(),
                groups: None,
                local_size: None,
                group_dims: Vec::new(),
                local_dims: Vec::new(),
                monoid: "int-add".into(),
                inputs: Vec::new(),
                max_steps: 1,
                race_policy: RacePolicy::Strict,
                atomicity: Atomicity::Statement,
                warp_size: None,
                uninit: interp::Uninit::Zero,
                continue_after_faults: false,
            },
            resolved: serde_json::Value::Null,
            race: serde_json::Value::Null,
            schedule: Schedule::default(),
            found_by: String::new(),
            flags: None,
            files: Vec::new(),
        }
    }

    #[test]
    fn long_kernel_names_give_short_distinct_file_names() {
        let (a, b) = ("k".repeat(300), format!("{}x", "k".repeat(299)));
        let (fa, fb) = (
            report(&a).file_name(usize::MAX, usize::MAX),
            report(&b).file_name(usize::MAX, usize::MAX),
        );
        assert!(fa.len() <= 255 && fb.len() <= 255, "{fa}");
        assert_ne!(fa, fb);
        assert_eq!(
            report("scan").file_name(3, 4),
            "race-scan-L3-L4--01234567.json"
        );
    }
}
