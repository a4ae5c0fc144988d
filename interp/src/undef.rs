//! Uninitialised reads (`--uninit`): which memory a launch defines, and the shadow state
//! that finds a read of memory nothing defined.
//!
//! On a device, a `__local` array, a private variable or array, and a buffer given no
//! contents hold whatever was there before: a kernel that reads them before writing them
//! computes garbage. Under [`Uninit::Check`] ksim does not silently define that memory:
//! at the start of a launch an array is *defined* when the launch gives it contents
//! (`--input`, a `.sim` file's data) or it is a program-scope `__constant` table (its
//! contents are the program's); every other array element and every thread-local variable
//! starts *undefined*. A write defines an element (an assignment a variable); a read of
//! an undefined element or variable is the fault [`FaultKind::Uninitialised`] with the
//! thread, the statement and the name. An atomic reads its element; an annotation's
//! condition reads what it mentions. Under [`Uninit::Zero`], the `.ksim` teaching dialect's
//! documented start, everything starts at zero (the identity for `T`) and nothing is
//! tracked, so that engine runs cost nothing extra.

use crate::fault::FaultKind;
use serde::{Deserialize, Serialize};

/// What memory nothing wrote holds (`--uninit`).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Uninit {
    /// Zero (the identity for `T`), untracked: `.ksim`'s documented start.
    #[default]
    Zero,
    /// Undefined: reading it is a fault (the default for `.cl` and `.sim`).
    Check,
}

impl Uninit {
    /// The name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Uninit::Zero => "zero",
            Uninit::Check => "check",
        }
    }

    /// Parses a name of [`Uninit::name`].
    pub fn parse(s: &str) -> Result<Uninit, String> {
        match s {
            "zero" => Ok(Uninit::Zero),
            "check" => Ok(Uninit::Check),
            _ => Err(format!("unknown --uninit `{s}` (expected check or zero)")),
        }
    }
}

/// Whether array `name` of a kernel is a program-scope `__constant` table of the OpenCL
/// front end (`T.constant`, or `T.constant_1` when renamed; filled by the program itself
/// over a zero row): it starts defined whatever the mode. No source name has a `.`.
pub fn is_table(name: &str) -> bool {
    name.contains(".constant")
}

/// The fault of a read of variable `name` before any assignment.
pub fn variable(name: &str) -> FaultKind {
    FaultKind::Uninitialised {
        name: name.to_string(),
        index: Vec::new(),
    }
}

/// The fault of a read of element `index` of array `name` that nothing defined.
pub fn element(name: &str, index: Vec<i64>) -> FaultKind {
    FaultKind::Uninitialised {
        name: name.to_string(),
        index,
    }
}

/// The reference semantics' shadow of the array store: per array instance, which
/// elements are defined; `None` for an instance whose elements all are (the instance
/// started defined, or the check is off). Persistent, so that cloning a state stays O(1)
/// and states that differ only in what is defined differ.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct Shadow {
    slots: imbl::Vector<Option<imbl::Vector<bool>>>,
}

impl Shadow {
    /// The shadow at the start of `launch`, one entry per array instance in the state's
    /// order (array by array, instance by instance).
    pub fn initial(launch: &crate::Launch) -> Shadow {
        let mut slots = imbl::Vector::new();
        for a in 0..launch.kernel.arrays.len() {
            let entry = (!launch.starts_defined(a)).then(|| {
                (0..launch.len(a))
                    .map(|_| false)
                    .collect::<imbl::Vector<bool>>()
            });
            for _ in 0..launch.instances(a) {
                slots.push_back(entry.clone());
            }
        }
        Shadow { slots }
    }

    pub fn is_defined(&self, slot: usize, offset: usize) -> bool {
        self.slots
            .get(slot)
            .and_then(|s| s.as_ref())
            .is_none_or(|s| s[offset])
    }

    pub fn define(&mut self, slot: usize, offset: usize) {
        if let Some(Some(s)) = self.slots.get_mut(slot) {
            if !s[offset] {
                s.set(offset, true);
            }
        }
    }
}
