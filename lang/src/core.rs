//! The core form: the paper's Figure 4 language (plus `barrier`), typed and resolved.
//!
//! Every engine (the reference semantics, the fast executor, the OpenCL code generator) runs
//! this form, never the surface syntax. Declarations, `for`, compound assignments and `x++`
//! are desugared away; names are resolved to slots; every implicit conversion is an explicit
//! [`ExprKind::Cast`], so both operands of a binary operator have the same type. Statements
//! live in numbered blocks so that a thread's continuation is a small stack of
//! `(block, index)` pairs that can be hashed and compared.

use crate::ast::{BinOp, Space, Span, UnOp};
use serde::Serialize;

pub use crate::int_fn::IntFn;

/// A value type of the core language. The integer types are OpenCL C's, two's complement
/// and wrapping at their width; `char` and `short` values only live in variables and
/// memory: the checker promotes them to `int` before any operator (C's integer
/// promotions), so operators see `int`, `uint`, `long`, `ulong`, `float` and `double`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum Ty {
    /// 32-bit two's complement, wrapping.
    Int,
    /// 32-bit unsigned, wrapping.
    Uint,
    Bool,
    /// IEEE binary32.
    Float,
    /// The generic monoid type 𝕊_X, instantiated at launch by a monoid.
    Generic,
    /// 8-bit signed (OpenCL's `char` is signed).
    Char,
    /// 8-bit unsigned.
    Uchar,
    /// 16-bit signed.
    Short,
    /// 16-bit unsigned.
    Ushort,
    /// 64-bit two's complement, wrapping.
    Long,
    /// 64-bit unsigned, wrapping.
    Ulong,
    /// IEEE binary64.
    Double,
    /// A pointer value: an array and an element offset into it, or null (docs/language.md,
    /// "Pointer values"). The address space is the array's. The pointee's type is not part
    /// of the type (so that `Ty` stays `Copy` and flat): a load through a pointer carries
    /// the type it reads ([`ExprKind::Deref`]'s expression type), and the engines check it
    /// against the target array's element type where the access happens.
    Ptr,
}

impl Ty {
    pub fn name(self) -> &'static str {
        match self {
            Ty::Int => "int",
            Ty::Uint => "uint",
            Ty::Bool => "bool",
            Ty::Float => "float",
            Ty::Generic => "T",
            Ty::Char => "char",
            Ty::Uchar => "uchar",
            Ty::Short => "short",
            Ty::Ushort => "ushort",
            Ty::Long => "long",
            Ty::Ulong => "ulong",
            Ty::Double => "double",
            Ty::Ptr => "ptr",
        }
    }

    /// Whether the type is an integer type (`bool` is not).
    pub fn is_integer(self) -> bool {
        self.int_bits().is_some()
    }

    /// Width and signedness of an integer type.
    pub fn int_bits(self) -> Option<(u32, bool)> {
        Some(match self {
            Ty::Char => (8, true),
            Ty::Uchar => (8, false),
            Ty::Short => (16, true),
            Ty::Ushort => (16, false),
            Ty::Int => (32, true),
            Ty::Uint => (32, false),
            Ty::Long => (64, true),
            Ty::Ulong => (64, false),
            _ => return None,
        })
    }

    /// Whether the type is `float` or `double`.
    pub fn is_float(self) -> bool {
        matches!(self, Ty::Float | Ty::Double)
    }

    /// C's integer promotion: `bool`, `char`, `short` (signed or not) compute as `int`
    /// (every value of theirs fits in an `int`); other types are unchanged.
    pub fn promote(self) -> Ty {
        match self {
            Ty::Bool | Ty::Char | Ty::Uchar | Ty::Short | Ty::Ushort => Ty::Int,
            t => t,
        }
    }

    /// C's usual arithmetic conversions for two non-generic operands: the promoted type of
    /// higher rank (`int` < `uint` < `long` < `ulong` < `float` < `double`).
    pub fn common(a: Ty, b: Ty) -> Ty {
        let rank = |t: Ty| match t {
            Ty::Uint => 1,
            Ty::Long => 2,
            Ty::Ulong => 3,
            Ty::Float => 4,
            Ty::Double => 5,
            Ty::Generic => 6,
            _ => 0,
        };
        let (a, b) = (a.promote(), b.promote());
        if rank(a) >= rank(b) {
            a
        } else {
            b
        }
    }

    /// Size in bytes of a value in memory (`sizeof`); `T` has none.
    pub fn size(self) -> Option<u64> {
        Some(match self {
            Ty::Bool | Ty::Char | Ty::Uchar => 1,
            Ty::Short | Ty::Ushort => 2,
            Ty::Int | Ty::Uint | Ty::Float => 4,
            Ty::Long | Ty::Ulong | Ty::Double | Ty::Ptr => 8,
            Ty::Generic => return None,
        })
    }
}

pub type VarId = usize;
pub type ArrayId = usize;
pub type ParamId = usize;
pub type BlockId = usize;

/// A typed, resolved kernel.
#[derive(Clone, Debug, Serialize)]
pub struct Kernel {
    pub name: String,
    /// Launch parameters bound with `-D name=value`: size parameters (free names in array
    /// sizes and launch defaults, type `int`) and scalar parameters.
    pub params: Vec<ParamDecl>,
    pub arrays: Vec<ArrayDecl>,
    /// Thread-local variables, one slot each; every thread starts with each at its type's
    /// default (see [`Ty`] defaults in the interpreter).
    pub vars: Vec<VarDecl>,
    /// `blocks[0]` is the kernel body.
    pub blocks: Vec<Vec<Stmt>>,
    /// Default number of work-groups, if declared; an expression over parameters.
    pub groups: Option<Expr>,
    /// Default work-group size, if declared; an expression over parameters.
    pub local_size: Option<Expr>,
    /// Declared sizes of dimensions 1 and 2 (`launch(groups = (2, 2), local_size = (16, 2))`):
    /// `groups` and `local_size` hold dimension 0; these hold the rest (empty for a
    /// one-dimensional declaration).
    pub groups_more: Vec<Expr>,
    pub local_size_more: Vec<Expr>,
    /// Whether the kernel mentions the generic type `T` anywhere.
    pub generic: bool,
}

impl Kernel {
    pub const BODY: BlockId = 0;

    pub fn array(&self, name: &str) -> Option<ArrayId> {
        self.arrays.iter().position(|a| a.name == name)
    }

    pub fn param(&self, name: &str) -> Option<ParamId> {
        self.params.iter().position(|p| p.name == name)
    }

    /// Whether every `barrier` of the kernel orders both memory spaces (`barrier()`), so
    /// that a K-BARRIER of a single work-group ends every possible race.
    pub fn barriers_order_both(&self) -> bool {
        self.blocks.iter().flatten().all(|s| match s.kind {
            StmtKind::Barrier { fence, flags } => fence == Fence::BOTH && flags.is_none(),
            _ => true,
        })
    }

    /// Whether some `barrier` takes its fence from a variable (per thread, at run time):
    /// the race check then keeps barrier epochs per thread, not per work-group.
    pub fn has_item_fences(&self) -> bool {
        self.blocks
            .iter()
            .flatten()
            .any(|s| matches!(s.kind, StmtKind::Barrier { flags: Some(_), .. }))
    }

    /// Whether the kernel moves or checks permissions ([`StmtKind::Perm`]): only the
    /// reference semantics keeps their table.
    pub fn has_permissions(&self) -> bool {
        self.blocks
            .iter()
            .flatten()
            .any(|s| matches!(s.kind, StmtKind::Perm { .. }))
    }

    /// Whether the kernel has an atomic statement. Atomics are not races, but two of them
    /// on one element do not commute: a race-free kernel with atomics may end in several
    /// final stores, so one execution does not decide the others.
    pub fn has_atomics(&self) -> bool {
        self.blocks
            .iter()
            .flatten()
            .any(|s| matches!(s.kind, StmtKind::Atomic { .. }))
    }

    /// The `if` statement that is the whole of block `b`, if it is one. An `else` block of
    /// this shape is an `else if` of the source: printers and compilers continue the chain
    /// in a loop rather than by recursion, so that thousands of `else if` arms neither
    /// exhaust the stack nor nest their output.
    pub fn else_if(&self, b: BlockId) -> Option<&Stmt> {
        match self.blocks[b].as_slice() {
            [s @ Stmt {
                kind: StmtKind::If { .. },
                ..
            }] => Some(s),
            _ => None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum ParamKind {
    /// Used in array sizes or launch defaults.
    Size,
    /// Declared as a scalar kernel parameter.
    Scalar,
}

#[derive(Clone, Debug, Serialize)]
pub struct ParamDecl {
    pub name: String,
    pub ty: Ty,
    pub kind: ParamKind,
    pub span: Span,
}

#[derive(Clone, Debug, Serialize)]
pub struct ArrayDecl {
    pub name: String,
    pub elem: Ty,
    pub space: Space,
    pub is_const: bool,
    /// One expression per dimension (1 or 2), over parameters only; row-major.
    pub dims: Vec<Expr>,
    pub span: Span,
    /// Components per element when the array holds OpenCL vectors (`float4`: 4), 1
    /// otherwise. The array's slots are then the components in memory order, 4 per
    /// 3-vector, along the last dimension; only messages use it, to name a slot as the
    /// source sees it (`A[21]` is `A[5].y`).
    pub lanes: u8,
    /// The element type the source declared when the array holds its bytes instead (a
    /// `__local` array the kernel writes byte by byte through a pointer cast, see
    /// docs/language.md, "Byte-level views"): slot `s` is byte `s % size` of element
    /// `s / size`. Only messages use it, to name a slot as the source sees it.
    pub byte_elem: Option<Ty>,
}

#[derive(Clone, Debug, Serialize)]
pub struct VarDecl {
    pub name: String,
    pub ty: Ty,
    pub span: Span,
    /// For a variable declared without initialiser inside a loop body: that body (the
    /// innermost loop's). C11 6.2.4p6 makes such a variable indeterminate each time its
    /// declaration is reached, so under `--uninit check` every entry into the body (each
    /// S-LOOP-T) makes it undefined again: a value left by the previous iteration is not
    /// read silently. `None` elsewhere (a declaration reached once per thread).
    pub fresh_in: Option<BlockId>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Stmt {
    pub kind: StmtKind,
    /// The source statement this came from (for a desugared `for`, the part it came from).
    pub span: Span,
}

#[derive(Clone, Debug, Serialize)]
pub enum StmtKind {
    /// `v := e` (S-ASSIGN).
    Assign { var: VarId, value: Expr },
    /// `A[e1] := e2` (S-ARRAY); two indices for a 2D array.
    Store {
        array: ArrayId,
        index: Vec<Expr>,
        value: Expr,
    },
    /// `*p := e`: a store through a pointer value (S-ARRAY on the element `p` points at:
    /// the same access, race check and messages as `A[i] := e`). The value has the type
    /// the store writes, checked against the target array's element type at run time.
    StoreAt { ptr: Expr, value: Expr },
    /// `if (e) {ss1} else {ss2}` (S-ITE-T / S-ITE-F).
    If {
        cond: Expr,
        then: BlockId,
        els: BlockId,
    },
    /// `while (e) {ss}` (S-LOOP-T / S-LOOP-F).
    While { cond: Expr, body: BlockId },
    /// `barrier` (K-BARRIER): every thread of the work-group waits here; for race
    /// detection it orders only the accesses to the memory spaces in `fence`. With `flags`
    /// (OpenCL's `barrier(x)` with `x` computed at run time) each thread's fence is the
    /// value of that variable when the barrier fires ([`Fence::from_bits`]), and orders the
    /// accesses that thread made before it; `fence` is then empty.
    Barrier { fence: Fence, flags: Option<VarId> },
    /// `[v =] atomic_op(A[e], args...)` (S-ATOMIC): one indivisible read-modify-write of
    /// an `int`/`uint`/`long`/`ulong` element; `result` receives the old value. `args` holds the operands
    /// (none for inc/dec, two for cmpxchg: the compared value, then the new value), each
    /// of the element's type; `result`, if any, has the element's type too.
    Atomic {
        op: AtomicOp,
        array: ArrayId,
        index: Vec<Expr>,
        args: Vec<Expr>,
        result: Option<VarId>,
    },
    /// `__assert(e)`, `__requires(e)`, ... (S-ASSERT): a specification annotation checked
    /// where it stands; a false `cond` is a fault of its own kind. Reading `cond` is not an
    /// access for races (an annotation observes the state, it is not part of the program).
    Check { annotation: Annotation, cond: Expr },
    /// `__perm_take(A[e], num, den)`, ... : a transfer of the fraction `num/den` of the
    /// permission to element `A[e]` (VerCors's `Perm(A[e], num\den)`), or the check that
    /// the thread holds enough of it for an access ([`PermOp`]). Run by the reference
    /// semantics only (the fast executor falls back to it); a thread without the fraction
    /// it needs is a fault. Not an access for races: it reads no element.
    Perm {
        op: PermOp,
        array: ArrayId,
        index: Vec<Expr>,
        amount: [Expr; 2],
    },
}

/// What a [`StmtKind::Perm`] does with a fraction of a permission. Permissions are held by
/// each thread, by a pool of what the kernel holds and no thread does (all of every
/// element when the launch starts), and by the launch's caller (what the kernel's
/// precondition leaves out); see `interp::perm`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum PermOp {
    /// Caller → pool: the kernel's precondition (`__perm_lend`).
    Lend,
    /// Pool → caller: the kernel's postcondition, and all of every element before a
    /// kernel's precondition is lent (`__perm_reclaim`).
    Reclaim,
    /// Pool → thread: a thread's precondition (`__perm_take`).
    Take,
    /// Thread → pool: a thread's postcondition (`__perm_give`).
    Give,
    /// Thread → its work-group's barrier: a barrier's precondition (`__perm_arrive`).
    Arrive,
    /// Work-group's barrier → thread: a barrier's postcondition (`__perm_depart`).
    Depart,
    /// The thread holds a positive fraction: before a read (`__perm_read`).
    Read,
    /// The thread holds all of it: before a write (`__perm_write`).
    Write,
}

impl PermOp {
    pub const ALL: [PermOp; 8] = [
        PermOp::Lend,
        PermOp::Reclaim,
        PermOp::Take,
        PermOp::Give,
        PermOp::Arrive,
        PermOp::Depart,
        PermOp::Read,
        PermOp::Write,
    ];

    /// The spelling in the core and in `.ksim`.
    pub fn name(self) -> &'static str {
        match self {
            PermOp::Lend => "__perm_lend",
            PermOp::Reclaim => "__perm_reclaim",
            PermOp::Take => "__perm_take",
            PermOp::Give => "__perm_give",
            PermOp::Arrive => "__perm_arrive",
            PermOp::Depart => "__perm_depart",
            PermOp::Read => "__perm_read",
            PermOp::Write => "__perm_write",
        }
    }

    /// Whether the statement carries a fraction (`A[e], num, den`) rather than `A[e]`
    /// alone.
    pub fn moves(self) -> bool {
        !matches!(self, PermOp::Read | PermOp::Write)
    }
}

/// GPUVerify's specification annotations, checked at run time by S-ASSERT. The front ends
/// place each where it is checked: `__ensures` at every exit of its function,
/// `__invariant` at each arrival at its loop's head, `__requires` at the function's entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum Annotation {
    /// `__assert(e)` (and `__global_assert`): a claim about the kernel.
    Assert,
    /// `__requires(e)` of the kernel: the launch's precondition. A violation is the
    /// launch's (or input's) fault, not the kernel's.
    Requires,
    /// `__requires(e)` of a helper function, checked at each call (spelled
    /// `__call_requires` in the core): the caller's fault.
    CallRequires,
    /// `__ensures(e)`: checked when the function (the thread, for a kernel) exits.
    Ensures,
    /// `__invariant(e)`: checked each time the loop head is reached.
    Invariant,
    /// `__assume(e)`: an assumption; a run that violates it is outside the runs the
    /// kernel's author considers, like a launch that violates a precondition.
    Assume,
    /// `__non_null(p != 0)`: placed by the OpenCL front end before a dereference through a
    /// pointer whose target is chosen at run time; the condition reads the pointer's target
    /// tag, 0 for null (see docs/language.md, "Pointer values").
    NonNull,
    /// `__initialised(p != -1)`: placed before a use of such a pointer that may not have
    /// been given a value yet (tag -1).
    Initialised,
    /// `__aligned(off % n == 0)`: placed by the OpenCL front end where a pointer cast makes
    /// a pointer to a wider type (`(int *)(c + 1)` of a `char *` into an `int` buffer):
    /// OpenCL C requires natural alignment (see docs/language.md, "Byte-level views").
    Aligned,
    /// `__event(0 < e && e <= issued)`: placed by the OpenCL front end where an
    /// asynchronous copy joins an event or `wait_group_events` names one: the event must be
    /// one an earlier copy returned (see docs/language.md, asynchronous copies).
    Event,
    /// `__waited(!pending)`: placed by the OpenCL front end at the kernel's end for each
    /// asynchronous copy call site: a kernel must not finish with a copy that no
    /// `wait_group_events` completed (OpenCL C 1.2 §6.12.10).
    Waited,
}

impl Annotation {
    pub const ALL: [Annotation; 11] = [
        Annotation::Assert,
        Annotation::Requires,
        Annotation::CallRequires,
        Annotation::Ensures,
        Annotation::Invariant,
        Annotation::Assume,
        Annotation::NonNull,
        Annotation::Initialised,
        Annotation::Aligned,
        Annotation::Event,
        Annotation::Waited,
    ];

    /// The spelling of the annotation in the core and in `.ksim`.
    pub fn name(self) -> &'static str {
        match self {
            Annotation::Assert => "__assert",
            Annotation::Requires => "__requires",
            Annotation::CallRequires => "__call_requires",
            Annotation::Ensures => "__ensures",
            Annotation::Invariant => "__invariant",
            Annotation::Assume => "__assume",
            Annotation::NonNull => "__non_null",
            Annotation::Initialised => "__initialised",
            Annotation::Aligned => "__aligned",
            Annotation::Event => "__event",
            Annotation::Waited => "__waited",
        }
    }

    /// Whether a violation says the launch or its inputs are outside what the kernel
    /// expects (rather than that the kernel is wrong).
    pub fn blames_launch(self) -> bool {
        matches!(self, Annotation::Requires | Annotation::Assume)
    }
}

/// The memory spaces whose accesses a barrier orders (OpenCL's `CLK_LOCAL_MEM_FENCE` and
/// `CLK_GLOBAL_MEM_FENCE`). Every barrier synchronises the whole work-group whatever its
/// fence; the fence decides only which accesses it separates for Definition 5.2.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, schemars::JsonSchema)]
pub struct Fence {
    pub local: bool,
    pub global: bool,
}

impl Fence {
    /// `barrier()`: both spaces (the paper's barrier).
    pub const BOTH: Fence = Fence {
        local: true,
        global: true,
    };
    pub const LOCAL: Fence = Fence {
        local: true,
        global: false,
    };
    pub const GLOBAL: Fence = Fence {
        local: false,
        global: true,
    };

    /// Whether accesses to arrays of `space` are ordered by this barrier.
    pub fn orders(self, space: Space) -> bool {
        match space {
            Space::Local => self.local,
            Space::Global => self.global,
        }
    }

    /// A fence from OpenCL's `cl_mem_fence_flags` bits: 1 (`CLK_LOCAL_MEM_FENCE`) orders
    /// `local`, 2 (`CLK_GLOBAL_MEM_FENCE`) orders `global`; other bits order nothing.
    pub fn from_bits(bits: u64) -> Fence {
        Fence {
            local: bits & 1 != 0,
            global: bits & 2 != 0,
        }
    }

    /// OpenCL's `cl_mem_fence_flags` bits of this fence ([`Fence::from_bits`]).
    pub fn bits(self) -> u64 {
        self.local as u64 | (self.global as u64) << 1
    }

    /// The spaces of either fence.
    pub fn union(self, other: Fence) -> Fence {
        Fence {
            local: self.local || other.local,
            global: self.global || other.global,
        }
    }

    /// The `.ksim` spelling of the barrier: `barrier()`, `barrier(local)`, `barrier(global)`.
    pub fn ksim(self) -> &'static str {
        match (self.local, self.global) {
            (true, false) => "barrier(local)",
            (false, true) => "barrier(global)",
            _ => "barrier()",
        }
    }
}

/// An atomic read-modify-write (OpenCL 1.2's `atomic_*`): the new value of the element
/// from its old value `old` and the operands. Every one returns `old`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum AtomicOp {
    /// `old + v` (wrapping)
    Add,
    /// `old - v` (wrapping)
    Sub,
    /// `v`
    Xchg,
    /// `old + 1` (wrapping)
    Inc,
    /// `old - 1` (wrapping)
    Dec,
    /// `old == cmp ? v : old`
    CmpXchg,
    /// `min(old, v)` (signed for `int`, unsigned for `uint`)
    Min,
    /// `max(old, v)`
    Max,
    /// `old & v`
    And,
    /// `old | v`
    Or,
    /// `old ^ v`
    Xor,
}

impl AtomicOp {
    pub const ALL: [AtomicOp; 11] = [
        AtomicOp::Add,
        AtomicOp::Sub,
        AtomicOp::Xchg,
        AtomicOp::Inc,
        AtomicOp::Dec,
        AtomicOp::CmpXchg,
        AtomicOp::Min,
        AtomicOp::Max,
        AtomicOp::And,
        AtomicOp::Or,
        AtomicOp::Xor,
    ];

    /// The OpenCL name, `atomic_add` etc.
    pub fn name(self) -> &'static str {
        match self {
            AtomicOp::Add => "atomic_add",
            AtomicOp::Sub => "atomic_sub",
            AtomicOp::Xchg => "atomic_xchg",
            AtomicOp::Inc => "atomic_inc",
            AtomicOp::Dec => "atomic_dec",
            AtomicOp::CmpXchg => "atomic_cmpxchg",
            AtomicOp::Min => "atomic_min",
            AtomicOp::Max => "atomic_max",
            AtomicOp::And => "atomic_and",
            AtomicOp::Or => "atomic_or",
            AtomicOp::Xor => "atomic_xor",
        }
    }

    /// Number of operands after the element.
    pub fn operands(self) -> usize {
        match self {
            AtomicOp::Inc | AtomicOp::Dec => 0,
            AtomicOp::CmpXchg => 2,
            _ => 1,
        }
    }

    /// The new value of an `int` element (`uint` elements use the same bits, except that
    /// `min`/`max` compare unsigned: see [`AtomicOp::apply_u32`]).
    pub fn apply_i32(self, old: i32, args: &[i32]) -> i32 {
        let v = args.first().copied().unwrap_or(0);
        match self {
            AtomicOp::Min => old.min(v),
            AtomicOp::Max => old.max(v),
            AtomicOp::CmpXchg => {
                if old == v {
                    args[1]
                } else {
                    old
                }
            }
            _ => self.apply_u32(old as u32, &[v as u32]) as i32,
        }
    }

    /// The new value of a `long` element (OpenCL's `atom_*` of `cl_khr_int64_*_atomics`).
    pub fn apply_i64(self, old: i64, args: &[i64]) -> i64 {
        let v = args.first().copied().unwrap_or(0);
        match self {
            AtomicOp::Min => old.min(v),
            AtomicOp::Max => old.max(v),
            _ => self.apply_u64(
                old as u64,
                &[v as u64, args.get(1).copied().unwrap_or(0) as u64],
            ) as i64,
        }
    }

    /// The new value of a `ulong` element.
    pub fn apply_u64(self, old: u64, args: &[u64]) -> u64 {
        let v = args.first().copied().unwrap_or(0);
        match self {
            AtomicOp::Add => old.wrapping_add(v),
            AtomicOp::Sub => old.wrapping_sub(v),
            AtomicOp::Xchg => v,
            AtomicOp::Inc => old.wrapping_add(1),
            AtomicOp::Dec => old.wrapping_sub(1),
            AtomicOp::CmpXchg => {
                if old == v {
                    args[1]
                } else {
                    old
                }
            }
            AtomicOp::Min => old.min(v),
            AtomicOp::Max => old.max(v),
            AtomicOp::And => old & v,
            AtomicOp::Or => old | v,
            AtomicOp::Xor => old ^ v,
        }
    }

    /// The new value of a `uint` element: the `ulong` operation on the zero-extended values,
    /// truncated (exact for every operation: wrapping add/sub truncate, min/max keep the order).
    pub fn apply_u32(self, old: u32, args: &[u32]) -> u32 {
        let arg = |i: usize| args.get(i).map_or(0, |&a| u64::from(a));
        self.apply_u64(u64::from(old), &[arg(0), arg(1)]) as u32
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Expr {
    pub kind: ExprKind,
    pub ty: Ty,
    pub span: Span,
}

/// Work-item builtins. The first five are flat (one-dimensional) numberings, `.ksim`'s
/// `tid`, `gid`, `group_id`, `local_size`, `num_groups`: with a multi-dimensional launch the
/// local id is linearised with dimension 0 fastest (OpenCL's
/// `x + sx * (y + sy * z)`), and so is the group id. The others are OpenCL's per-dimension
/// queries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum Builtin {
    /// `tid`: the flat local id within the work-group (the paper's name).
    LocalId,
    /// `gid`: `group_id * local_size + tid` (flat).
    GlobalId,
    /// Flat work-group id.
    GroupId,
    /// Threads per work-group (all dimensions).
    LocalSize,
    /// Work-groups in the launch (all dimensions).
    NumGroups,
    /// `get_work_dim()`: the launch's number of dimensions, 1 to 3.
    WorkDim,
    /// `get_local_id(d)`, `get_global_size(d)`, ...: `dim` is 0, 1 or 2.
    Dim(DimQuery, u8),
}

impl Builtin {
    /// The `.ksim` spelling: `tid`, ..., `get_work_dim()`, `get_local_id(1)`.
    pub fn text(self) -> String {
        match self {
            Builtin::LocalId => "tid".into(),
            Builtin::GlobalId => "gid".into(),
            Builtin::GroupId => "group_id".into(),
            Builtin::LocalSize => "local_size".into(),
            Builtin::NumGroups => "num_groups".into(),
            Builtin::WorkDim => "get_work_dim()".into(),
            Builtin::Dim(q, d) => format!("{}({d})", q.name()),
        }
    }
}

/// A per-dimension work-item query of OpenCL.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum DimQuery {
    /// `get_local_id(d)`
    LocalId,
    /// `get_global_id(d)` = group id × local size + local id, in dimension `d`.
    GlobalId,
    /// `get_group_id(d)`
    GroupId,
    /// `get_local_size(d)`
    LocalSize,
    /// `get_num_groups(d)`
    NumGroups,
    /// `get_global_size(d)` = num groups × local size, in dimension `d`.
    GlobalSize,
    /// `get_global_offset(d)`: always 0 (ksim launches have no offset).
    GlobalOffset,
}

impl DimQuery {
    pub const ALL: [DimQuery; 7] = [
        DimQuery::LocalId,
        DimQuery::GlobalId,
        DimQuery::GroupId,
        DimQuery::LocalSize,
        DimQuery::NumGroups,
        DimQuery::GlobalSize,
        DimQuery::GlobalOffset,
    ];

    /// The OpenCL function name.
    pub fn name(self) -> &'static str {
        match self {
            DimQuery::LocalId => "get_local_id",
            DimQuery::GlobalId => "get_global_id",
            DimQuery::GroupId => "get_group_id",
            DimQuery::LocalSize => "get_local_size",
            DimQuery::NumGroups => "get_num_groups",
            DimQuery::GlobalSize => "get_global_size",
            DimQuery::GlobalOffset => "get_global_offset",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub enum Lit {
    Int(i32),
    Uint(u32),
    Bool(bool),
    Float(f32),
    Long(i64),
    Ulong(u64),
    Double(f64),
}

#[derive(Clone, Debug, Serialize)]
pub enum ExprKind {
    Lit(Lit),
    /// The monoid identity 1_X.
    Identity,
    Var(VarId),
    Param(ParamId),
    Builtin(Builtin),
    /// `A[e]` / `A[e1][e2]`.
    Load {
        array: ArrayId,
        index: Vec<Expr>,
    },
    /// The null pointer (type `ptr`).
    Null,
    /// `&A[e]`: a pointer to element `e` of `array`, counted in elements over the whole
    /// array (row-major for a 2D array). Not an access.
    Addr {
        array: ArrayId,
        offset: Box<Expr>,
    },
    /// `p + e`: the pointer `e` elements further (`e` an `int` or `long`; negative moves
    /// back). Null stays null plus the offset, which faults when it is dereferenced.
    PtrAdd(Box<Expr>, Box<Expr>),
    /// `*p`: a load through a pointer of the expression's type, the same access as
    /// `A[i]` on the element it points at (a null pointer, an offset outside the array or
    /// a type other than the array's element type is a fault).
    Deref(Box<Expr>),
    /// Operand and result have the expression's type (`!` works on `bool`).
    Unary(UnOp, Box<Expr>),
    /// Both operands have the same type (the checker inserts casts); comparisons give
    /// `bool`; `&&`/`||` take `bool` and short-circuit; `Combine` is ⊕ on `T`.
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `c ? a : b`; only the chosen branch is evaluated.
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
    /// Conversion to the expression's type (C semantics; `x != 0` for conversion to bool).
    Cast(Box<Expr>),
    /// `as_T(e)` (OpenCL C §6.2.4.2): the bits of the operand read as the expression's
    /// type, of the same size: `int`/`uint`/`float` or `long`/`ulong`/`double`
    /// (`as_int(1.0f)` is `0x3f800000`; a NaN keeps its payload). The byte views of float
    /// data are built from it (docs/language.md, "Byte-level views").
    Bits(Box<Expr>),
    /// `log2(e)`: floor of the base-2 logarithm of a positive integer.
    Log2(Box<Expr>),
    /// `min(a, b)` / `max(a, b)` on `int`, `uint` or `float`.
    Min(Box<Expr>, Box<Expr>),
    Max(Box<Expr>, Box<Expr>),
    /// A floating-point math function of OpenCL C (`sqrt(x)`, `pow(x, y)`, `fma(a, b, c)`):
    /// `float` operands (as many as [`MathFn::arity`]) and result.
    Math(MathFn, Vec<Expr>),
    /// An integer function of OpenCL C (`clz(x)`, `mul_hi(x, y)`, `rotate(v, i)`, ...):
    /// operands of one integer type (for `upsample`, `hi`'s and its unsigned type), the
    /// type [`IntFn::apply`] reads them at; the result has [`IntFn::result`]'s type.
    IntFn(IntFn, Vec<Expr>),
}

/// OpenCL C's floating-point math functions (§6.12.2) on `float`. [`MathFn::apply`] is the
/// one definition both engines run: exact operations (`fabs`, `floor`, `fmin`, `fmod`,
/// `copysign`, ...) and `sqrt`/`fma` are correctly rounded in `f32`; the others are computed
/// in `f64` and rounded to `f32`, which is within 1 ULP (correctly rounded but for rare
/// double roundings), inside the specification's bounds (3 to 16 ULP).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum MathFn {
    Fabs,
    Floor,
    Ceil,
    Trunc,
    /// Half-way cases away from zero.
    Round,
    /// Half-way cases to even (the default rounding mode).
    Rint,
    Sqrt,
    Rsqrt,
    Cbrt,
    Exp,
    Exp2,
    Exp10,
    Expm1,
    Log,
    Log2,
    Log10,
    Log1p,
    Sin,
    Cos,
    Tan,
    Asin,
    Acos,
    Atan,
    Sinh,
    Cosh,
    Tanh,
    Asinh,
    Acosh,
    Atanh,
    Pow,
    /// `pow` for `x >= 0` only (NaN otherwise, and for `0^0`, `inf^0`, `1^inf`).
    Powr,
    /// The non-NaN operand if one is NaN.
    Fmin,
    Fmax,
    Fmod,
    Fdim,
    Atan2,
    Hypot,
    Copysign,
    Fma,
}

impl MathFn {
    pub const ALL: [MathFn; 39] = [
        MathFn::Fabs,
        MathFn::Floor,
        MathFn::Ceil,
        MathFn::Trunc,
        MathFn::Round,
        MathFn::Rint,
        MathFn::Sqrt,
        MathFn::Rsqrt,
        MathFn::Cbrt,
        MathFn::Exp,
        MathFn::Exp2,
        MathFn::Exp10,
        MathFn::Expm1,
        MathFn::Log,
        MathFn::Log2,
        MathFn::Log10,
        MathFn::Log1p,
        MathFn::Sin,
        MathFn::Cos,
        MathFn::Tan,
        MathFn::Asin,
        MathFn::Acos,
        MathFn::Atan,
        MathFn::Sinh,
        MathFn::Cosh,
        MathFn::Tanh,
        MathFn::Asinh,
        MathFn::Acosh,
        MathFn::Atanh,
        MathFn::Pow,
        MathFn::Powr,
        MathFn::Fmin,
        MathFn::Fmax,
        MathFn::Fmod,
        MathFn::Fdim,
        MathFn::Atan2,
        MathFn::Hypot,
        MathFn::Copysign,
        MathFn::Fma,
    ];

    /// The OpenCL C name (also the `.ksim` and core spelling).
    pub fn name(self) -> &'static str {
        use MathFn::*;
        match self {
            Fabs => "fabs",
            Floor => "floor",
            Ceil => "ceil",
            Trunc => "trunc",
            Round => "round",
            Rint => "rint",
            Sqrt => "sqrt",
            Rsqrt => "rsqrt",
            Cbrt => "cbrt",
            Exp => "exp",
            Exp2 => "exp2",
            Exp10 => "exp10",
            Expm1 => "expm1",
            Log => "log",
            Log2 => "log2",
            Log10 => "log10",
            Log1p => "log1p",
            Sin => "sin",
            Cos => "cos",
            Tan => "tan",
            Asin => "asin",
            Acos => "acos",
            Atan => "atan",
            Sinh => "sinh",
            Cosh => "cosh",
            Tanh => "tanh",
            Asinh => "asinh",
            Acosh => "acosh",
            Atanh => "atanh",
            Pow => "pow",
            Powr => "powr",
            Fmin => "fmin",
            Fmax => "fmax",
            Fmod => "fmod",
            Fdim => "fdim",
            Atan2 => "atan2",
            Hypot => "hypot",
            Copysign => "copysign",
            Fma => "fma",
        }
    }

    /// The function named `name` (OpenCL C's name; `log2` is the float logarithm only
    /// where the caller says so: `.ksim`'s `log2` is the integer one).
    pub fn from_name(name: &str) -> Option<MathFn> {
        MathFn::ALL.into_iter().find(|f| f.name() == name)
    }

    pub fn arity(self) -> usize {
        use MathFn::*;
        match self {
            Pow | Powr | Fmin | Fmax | Fmod | Fdim | Atan2 | Hypot | Copysign => 2,
            Fma => 3,
            _ => 1,
        }
    }

    /// The result for operands `a` (only the first [`MathFn::arity`] are used).
    pub fn apply(self, a: &[f32]) -> f32 {
        use MathFn::*;
        let x = a[0];
        let y = || a[1];
        let d = x as f64;
        let wide = |f: fn(f64) -> f64| f(d) as f32;
        match self {
            Fabs => x.abs(),
            Floor => x.floor(),
            Ceil => x.ceil(),
            Trunc => x.trunc(),
            Round => x.round(),
            Rint => x.round_ties_even(),
            Sqrt => x.sqrt(),
            Rsqrt => (1.0 / d.sqrt()) as f32,
            Cbrt => wide(f64::cbrt),
            Exp => wide(f64::exp),
            Exp2 => wide(f64::exp2),
            Exp10 => wide(|v| 10f64.powf(v)),
            Expm1 => wide(f64::exp_m1),
            Log => wide(f64::ln),
            Log2 => wide(f64::log2),
            Log10 => wide(f64::log10),
            Log1p => wide(f64::ln_1p),
            Sin => wide(f64::sin),
            Cos => wide(f64::cos),
            Tan => wide(f64::tan),
            Asin => wide(f64::asin),
            Acos => wide(f64::acos),
            Atan => wide(f64::atan),
            Sinh => wide(f64::sinh),
            Cosh => wide(f64::cosh),
            Tanh => wide(f64::tanh),
            Asinh => wide(f64::asinh),
            Acosh => wide(f64::acosh),
            Atanh => wide(f64::atanh),
            Pow => d.powf(y() as f64) as f32,
            // OpenCL C §7.5.1's special cases: a NaN operand gives NaN (`powr(1, NaN)`
            // and `powr(NaN, 0)` too, unlike `pow`), and `powr(±0, y)` is +inf or +0
            // whatever the sign of the zero.
            Powr => {
                let y = y();
                let undefined = x < 0.0
                    || x.is_nan()
                    || y.is_nan()
                    || ((x == 0.0 || x.is_infinite()) && y == 0.0)
                    || (x == 1.0 && y.is_infinite());
                if undefined {
                    f32::NAN
                } else if x == 0.0 {
                    if y < 0.0 {
                        f32::INFINITY
                    } else {
                        0.0
                    }
                } else {
                    d.powf(y as f64) as f32
                }
            }
            Fmin => x.min(y()),
            Fmax => x.max(y()),
            Fmod => x % y(),
            Fdim => {
                let y = y();
                if x.is_nan() || y.is_nan() {
                    f32::NAN
                } else if x > y {
                    x - y
                } else {
                    0.0
                }
            }
            Atan2 => d.atan2(y() as f64) as f32,
            Hypot => d.hypot(y() as f64) as f32,
            Copysign => x.copysign(y()),
            Fma => x.mul_add(a[1], a[2]),
        }
    }
}
