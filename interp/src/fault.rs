//! Runtime faults: reported with the thread, the statement and the values involved; never
//! a panic.

use lang::ast::Span;
use serde::Serialize;
use std::fmt;

/// A thread of a launch: its work-group and its local id (`tid`).
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, schemars::JsonSchema,
)]
pub struct ThreadId {
    pub group: usize,
    pub local: usize,
}

impl fmt::Display for ThreadId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "thread {} of group {}", self.local, self.group)
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum FaultKind {
    /// An array index outside the array's bounds.
    OutOfBounds {
        array: String,
        index: Vec<i64>,
        dims: Vec<usize>,
    },
    /// `/` or `%` with a zero divisor.
    DivisionByZero { dividend: String },
    /// A shift count outside 0 to 31 (both 32-bit integer types).
    ShiftRange { count: i64 },
    /// A read of memory nothing defined (`--uninit check`, [`crate::undef`]): a variable
    /// before its first assignment (`index` empty), or an array element that neither the
    /// launch nor a write gave a value.
    Uninitialised { name: String, index: Vec<i64> },
    /// The execution did not terminate within the step bound (`--max-steps`).
    StepBound { steps: u64 },
    /// A specification annotation (`__assert`, `__requires`, ...) is false (S-ASSERT).
    /// `values`: `name = value` of each variable and parameter the condition reads, in
    /// order of first mention. For `__requires` and `__assume` the launch or its inputs
    /// are at fault, not the kernel ([`FaultKind::blames_launch`]).
    Annotation {
        annotation: String,
        values: Vec<String>,
    },
}

impl FaultKind {
    /// The fault says the launch (its geometry, scalars or inputs) violates what the
    /// kernel requires (`__requires`, `__assume`), not that the kernel is wrong.
    pub fn blames_launch(&self) -> bool {
        match self {
            FaultKind::Annotation { annotation, .. } => lang::core::Annotation::ALL
                .iter()
                .any(|a| a.name() == annotation && a.blames_launch()),
            _ => false,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, schemars::JsonSchema)]
pub struct Fault {
    #[serde(flatten)]
    pub kind: FaultKind,
    /// The faulting thread (none for a step bound, which concerns the whole execution).
    pub thread: Option<ThreadId>,
    /// The faulting statement.
    pub span: Option<Span>,
}

impl Fault {
    /// The execution did not terminate within `steps` K-STEPs (`--max-steps`): a fault of
    /// the whole execution, with no thread or statement.
    pub fn step_bound(steps: u64) -> Fault {
        Fault {
            kind: FaultKind::StepBound { steps },
            thread: None,
            span: None,
        }
    }
}

impl fmt::Display for FaultKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FaultKind::OutOfBounds { array, index, dims } => {
                let idx: String = index.iter().map(|i| format!("[{i}]")).collect();
                let bounds: String = dims.iter().map(|d| format!("[{d}]")).collect();
                write!(
                    f,
                    "out-of-bounds access {array}{idx}: {array} has size {bounds}"
                )
            }
            FaultKind::DivisionByZero { dividend } => {
                write!(f, "division by zero ({dividend} / 0)")
            }
            FaultKind::ShiftRange { count } => {
                write!(f, "shift count {count} outside 0 to 31")
            }
            FaultKind::StepBound { steps } => {
                write!(f, "did not terminate within {steps} steps")
            }
            FaultKind::Uninitialised { name, index } if index.is_empty() => write!(
                f,
                "uninitialised read of `{name}`: the variable is read before anything is \
                 assigned to it since its declaration was last reached"
            ),
            FaultKind::Uninitialised { name, index } => {
                let idx: String = index.iter().map(|i| format!("[{i}]")).collect();
                write!(
                    f,
                    "uninitialised read of {name}{idx}: neither the launch's input nor a \
                     write gave this element a value"
                )
            }
            FaultKind::Annotation { annotation, values } => {
                use lang::core::Annotation as A;
                let what = match A::ALL.iter().find(|a| a.name() == annotation) {
                    Some(A::Requires) => "the launch violates the kernel's precondition",
                    Some(A::Assume) => "the run violates an assumption",
                    Some(A::CallRequires) => "a call violates its function's precondition",
                    Some(A::Ensures) => "a postcondition does not hold at the function's exit",
                    Some(A::Invariant) => "a loop invariant does not hold at the loop head",
                    Some(A::NonNull) => "null pointer dereference",
                    Some(A::Initialised) => "a pointer is used before it is given a value",
                    Some(A::Aligned) => {
                        "a misaligned pointer (OpenCL C requires natural alignment)"
                    }
                    Some(A::Event) => "an event that no asynchronous copy returned",
                    Some(A::Waited) => {
                        "finished without waiting for events: an asynchronous copy was never \
                         completed by `wait_group_events`"
                    }
                    _ => "an assertion does not hold",
                };
                write!(f, "{what} (`{annotation}`)")?;
                if !values.is_empty() {
                    write!(f, " with {}", values.join(", "))?;
                }
                Ok(())
            }
        }
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.kind)?;
        if let Some(t) = self.thread {
            write!(f, " in {t}")?;
        }
        Ok(())
    }
}
