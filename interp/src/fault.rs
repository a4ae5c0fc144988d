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
    /// An access through a null pointer (`offset`: elements past null it was moved).
    NullPointer { offset: i64 },
    /// An access through a pointer into `array` (of `elem` elements) as another type.
    PointerType {
        array: String,
        offset: i64,
        elem: &'static str,
        access: &'static str,
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
            FaultKind::NullPointer { offset: 0 } => write!(f, "null pointer dereference"),
            FaultKind::NullPointer { offset } => {
                write!(f, "null pointer dereference (null + {offset})")
            }
            FaultKind::PointerType {
                array,
                offset,
                elem,
                access,
            } => write!(
                f,
                "a `{access}` access through a pointer to {array}[{offset}], an array of `{elem}`"
            ),
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
            FaultKind::Annotation { annotation, values }
                if lang::core::PermOp::ALL
                    .iter()
                    .any(|p| p.name() == annotation) =>
            {
                let op = lang::core::PermOp::ALL
                    .into_iter()
                    .find(|p| p.name() == annotation)
                    .expect("a permission statement");
                write!(f, "{} (`{annotation}`)", crate::perm::describe(op))?;
                if !values.is_empty() {
                    write!(f, ": {}", values.join(", "))?;
                }
                Ok(())
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

impl FaultKind {
    /// The kind's name, as in JSON (`out-of-bounds`, ...): with the statement, what makes
    /// two faults the same one in [`Faults`].
    pub fn name(&self) -> &'static str {
        match self {
            FaultKind::OutOfBounds { .. } => "out-of-bounds",
            FaultKind::NullPointer { .. } => "null-pointer",
            FaultKind::PointerType { .. } => "pointer-type",
            FaultKind::DivisionByZero { .. } => "division-by-zero",
            FaultKind::ShiftRange { .. } => "shift-range",
            FaultKind::Uninitialised { .. } => "uninitialised",
            FaultKind::StepBound { .. } => "step-bound",
            FaultKind::Annotation { .. } => "annotation",
        }
    }

    /// Whether an execution can go on past this fault (unless `--stop-at-first-fault`),
    /// as Oclgrind does: an out-of-bounds read gives the element type's zero (the
    /// identity for `T`), an out-of-bounds write or atomic writes nothing (an atomic's
    /// result is that zero), an uninitialised read gives what the memory holds (see
    /// [`crate::undef`]), and a division by zero or a shift count out of range gives
    /// zero. A step bound and a false annotation (`__assert`, `__requires`, a null or
    /// misaligned pointer, ...) end the execution.
    pub fn continues(&self) -> bool {
        matches!(
            self,
            FaultKind::OutOfBounds { .. }
                | FaultKind::DivisionByZero { .. }
                | FaultKind::ShiftRange { .. }
                | FaultKind::Uninitialised { .. }
        )
    }
}

/// One distinct fault of an execution (its statement and kind) with the number of times
/// it happened; `fault` is the first occurrence, with its thread and values.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct FaultCount {
    #[serde(flatten)]
    pub fault: Fault,
    pub count: u64,
}

/// Every fault of an execution, each (statement, kind) once with its count, in the order
/// of first occurrence; at most [`Faults::CAP`] are listed, the others only counted.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Faults {
    pub list: Vec<FaultCount>,
    /// Distinct faults beyond the cap, not listed.
    pub unlisted: u64,
    /// Where each distinct fault's count is: its index in `list`, `None` beyond the cap.
    #[serde(skip)]
    index: std::collections::HashMap<(Option<Span>, &'static str), Option<usize>>,
}

impl Faults {
    /// The most distinct faults listed.
    pub const CAP: usize = 100;

    /// Counts one occurrence of `fault`.
    pub fn record(&mut self, fault: Fault) {
        let key = (fault.span.clone(), fault.kind.name());
        match self.index.get(&key) {
            Some(Some(i)) => self.list[*i].count += 1,
            Some(None) => {}
            None if self.list.len() < Self::CAP => {
                self.index.insert(key, Some(self.list.len()));
                self.list.push(FaultCount { fault, count: 1 });
            }
            None => {
                self.index.insert(key, None);
                self.unlisted += 1;
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// The first fault of the execution.
    pub fn first(&self) -> Option<&Fault> {
        self.list.first().map(|f| &f.fault)
    }
}
