//! Lowering of an OpenCL C kernel to ksim's surface syntax tree ([`crate::ast`]), which the
//! existing checker then types and lowers to the core form. Going through the `.ksim` tree
//! reuses the checker's typing (C's conversions, genericity, const arrays, bounds of sizes)
//! instead of writing it twice; what the `.ksim` language lacks is desugared here:
//!
//! - `__global`/`__constant`/`__local` pointer parameters become arrays whose length is a
//!   size parameter `NAME.len`, bound by the launch (see [`Buffer`]); `__local` arrays
//!   (and scalars) declared in a body become `local` arrays of the kernel.
//! - helper functions are inlined at each call (arguments by value into fresh variables,
//!   pointer arguments by the array they name); recursion is an error.
//! - `return`, `break` and `continue` set a flag variable, and the statements after one are
//!   guarded by the flags it may have set; loops test the flags in their condition. A work-
//!   item that returned early therefore skips a later `barrier()` that others reach, which
//!   the semantics reports as barrier divergence, as on a device.
//! - `for`, `do`/`while` and `switch` become `while` and `if`; `++`, `--`, assignments,
//!   comma expressions and calls inside expressions are hoisted into statements before it
//!   (C leaves the order of unsequenced side effects open, so hoisting is one valid order;
//!   `&&`, `||` and `?:` keep their short-circuit order).
//! - built-ins are mapped by the one table in [`super::builtins`].
//!
//! Anything else is an error naming the construct: "not supported yet: ...".

use super::ast as cl;
use super::builtins::{self, Builtin, Fence};
use crate::ast::{self as k, ex, ident, set, st, BinOp, Space, Span, TypeName, UnOp};
use crate::check::{name_of, ty_of};
use crate::core::Ty;
use crate::diag::Diagnostic;
use std::collections::{HashMap, HashSet};

#[path = "atomic.rs"]
mod atomic;
pub use atomic::op as atomic_op;
#[path = "pointer.rs"]
mod pointer;

#[path = "access_spec.rs"]
mod access_spec;
#[path = "arrays.rs"]
mod arrays;
#[path = "async_copy.rs"]
mod async_copy;
#[path = "bitcast.rs"]
mod bitcast;
#[path = "bytes.rs"]
mod bytes;
#[path = "fences.rs"]
mod fences;
#[path = "half.rs"]
mod half;
#[path = "images.rs"]
mod images;
pub use images::{sampler_value, Image};
#[path = "math.rs"]
mod math;
#[path = "private.rs"]
mod private;
#[path = "ptrmem.rs"]
mod ptrmem;
#[path = "spec.rs"]
mod spec;
#[path = "stmt_expr.rs"]
mod stmt_expr;
#[path = "structptr.rs"]
mod structptr;
#[path = "structs.rs"]
mod structs;
#[path = "structval.rs"]
mod structval;
#[path = "uf.rs"]
mod uf;
#[path = "vecdyn.rs"]
mod vecdyn;
#[path = "vecmem.rs"]
mod vecmem;
pub use vecmem::{form as vecmem_form, vload};
#[path = "vecptr.rs"]
mod vecptr;
#[path = "vector.rs"]
mod vector;
pub use spec::is_barrier_invariant;

pub use vector::stride as vector_stride;

/// A pointer parameter of the kernel: an array whose length comes from the launch.
#[derive(Clone, Debug, PartialEq)]
pub struct Buffer {
    /// The OpenCL parameter name.
    pub name: String,
    /// The array's name in the lowered kernel.
    pub array: String,
    /// The size parameter holding its length in elements of `elem`.
    pub size_param: String,
    pub space: Space,
    pub elem: TypeName,
    /// Components per element for a vector element type (`float4`: 4; 1 for a scalar). The
    /// array holds the components in memory order, 4 slots per 3-vector, so the launch's
    /// input for it lists components.
    pub lanes: u8,
}

/// A scalar parameter of the kernel.
#[derive(Clone, Debug, PartialEq)]
pub struct Scalar {
    pub name: String,
    /// Its parameter name in the lowered kernel.
    pub param: String,
    pub ty: TypeName,
}

/// An approximation the lowering made, for the user to know (e.g. fence flags).
#[derive(Clone, Debug, PartialEq)]
pub struct Note {
    pub span: Span,
    pub text: String,
}

/// What the launch needs to know about the OpenCL kernel beyond the core form.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KernelInfo {
    pub name: String,
    /// In parameter order.
    pub buffers: Vec<Buffer>,
    pub scalars: Vec<Scalar>,
    pub notes: Vec<Note>,
    /// The lowered arrays that hold vectors (buffers and `__local` arrays) and their
    /// components per element, for [`crate::core::ArrayDecl::lanes`].
    pub vector_arrays: Vec<(String, u8)>,
    /// The lowered `__local` arrays that hold the bytes of their elements, and the element
    /// type the source declared, for [`crate::core::ArrayDecl::byte_elem`].
    pub byte_arrays: Vec<(String, TypeName)>,
    /// Image parameters, in parameter order: texel arrays bound by the launch ([`Image`]),
    /// not listed in `buffers`.
    pub images: Vec<Image>,
    /// The `sampler_t` parameters among `scalars` (by name): the launch checks their
    /// values with [`sampler_value`].
    pub samplers: Vec<String>,
}

type Res<T> = Result<T, Diagnostic>;

fn unsupported<T>(what: impl std::fmt::Display, span: &Span) -> Res<T> {
    Err(Diagnostic::new(
        format!("not supported yet: {what}"),
        span.clone(),
    ))
}

/// The kernels of a unit, by name.
pub fn kernels(unit: &cl::Unit) -> Vec<&cl::Function> {
    unit.items
        .iter()
        .filter_map(|i| match i {
            cl::Item::Function(f) if f.is_kernel && f.body.is_some() => Some(f),
            _ => None,
        })
        .collect()
}

/// Lowers kernel `name` (or the only kernel) of `unit`.
pub fn lower(
    unit: &cl::Unit,
    name: Option<&str>,
) -> Result<(k::Kernel, KernelInfo), Vec<Diagnostic>> {
    let ks = kernels(unit);
    let kernel = match name {
        Some(n) => ks
            .iter()
            .find(|f| f.name.name == n)
            .copied()
            .ok_or_else(|| {
                let names: Vec<_> = ks.iter().map(|f| f.name.name.as_str()).collect();
                vec![Diagnostic::new(
                    format!(
                        "no kernel `{n}` in this file (its kernels: {})",
                        if names.is_empty() {
                            "none".into()
                        } else {
                            names.join(", ")
                        }
                    ),
                    0..0,
                )]
            })?,
        None => match ks.as_slice() {
            [one] => *one,
            [] => return Err(vec![Diagnostic::new("no kernel in this file", 0..0)]),
            many => {
                let names: Vec<_> = many.iter().map(|f| f.name.name.as_str()).collect();
                return Err(vec![Diagnostic::new(
                    format!(
                        "this file has {} kernels ({}): choose one with --kernel NAME",
                        many.len(),
                        names.join(", ")
                    ),
                    many[1].name.span.clone(),
                )]);
            }
        },
    };
    let program_vars: Vec<_> = unit
        .items
        .iter()
        .filter_map(|i| match i {
            cl::Item::Global(d) => Some(d),
            _ => None,
        })
        .collect();
    let mut funcs = HashMap::new();
    for item in &unit.items {
        if let cl::Item::Function(f) = item {
            if f.body.is_some() || !funcs.contains_key(f.name.name.as_str()) {
                funcs.insert(f.name.name.as_str(), f);
            }
        }
    }
    // A pass that finds a pointer variable needing a target chosen at run time records it
    // and fails; the next pass lowers that variable as a dynamic pointer ([`pointer`]).
    // Each failed pass grows a finite set (pointer variables by their targets), so the
    // passes end; the bound only guards against a lowering that does not repeat itself.
    let mut dynamic = pointer::Dynamic::new();
    let mut bytewise = HashSet::new();
    for _ in 0..64 {
        let mut lw = Lowerer {
            funcs: funcs.clone(),
            used: RESERVED.iter().map(|s| s.to_string()).collect(),
            scopes: vec![HashMap::new()],
            types: HashMap::new(),
            arrays: HashMap::new(),
            vec_arrays: HashMap::new(),
            flat: HashMap::new(),
            per_thread: HashSet::new(),
            readonly: HashSet::new(),
            globals: HashMap::new(),
            program_vars: program_vars.clone(),
            local_arrays: Vec::new(),
            frames: Vec::new(),
            targets: Vec::new(),
            pointers: pointer::Pointers::new(std::mem::take(&mut dynamic)),
            bytewise: std::mem::take(&mut bytewise),
            bytes_grown: false,
            byte_arrays: HashMap::new(),
            local_spans: HashMap::new(),
            structs: unit.structs.iter().map(|d| (d.tag.as_str(), d)).collect(),
            fences: HashMap::new(),
            samplers: HashMap::new(),
            image_used: HashMap::new(),
            copies: async_copy::Copies::default(),
            struct_result: None,
            info: KernelInfo {
                name: kernel.name.name.clone(),
                ..KernelInfo::default()
            },
        };
        match lw.kernel(kernel) {
            Err(_) if lw.pointers.grown || lw.bytes_grown => {
                dynamic = std::mem::take(&mut lw.pointers.dynamic);
                bytewise = std::mem::take(&mut lw.bytewise);
            }
            r => return r.map_err(|d| vec![d]),
        }
    }
    Err(vec![Diagnostic::new(
        "not supported yet: pointer variables whose targets the lowering could not settle",
        kernel.name.span.clone(),
    )])
}

/// Names the `.ksim` checker reserves (its builtins).
const RESERVED: [&str; 5] = ["tid", "gid", "group_id", "local_size", "num_groups"];

/// Where an assignment stores: an lvalue of the core, or a place through a pointer cast
/// (the array, its indices and the view, see [`bytes`]).
enum Place {
    Plain(k::LValue),
    View(k::Ident, Vec<k::Expr>, bytes::View),
}

#[derive(Clone, Debug)]
enum Binding {
    /// A scalar variable or parameter, by its lowered name.
    Scalar(String),
    /// An array (a buffer, a `__local` array), by its lowered name.
    Array(String),
    /// A `__local` scalar: element 0 of a one-element local array.
    Cell(String),
    /// A pointer variable, by the lowered name of its offset variable ([`pointer`]).
    Ptr(String),
    /// A private vector: one scalar variable per component (see [`vector`]).
    Vector { comps: Vec<String>, elem: TypeName },
    /// A pointer to a private vector (the vector's binding, see [`vecptr`]).
    VecPtr(Box<Binding>),
    /// A struct (or an array of structs, `dims` deep, or a buffer of them): its members are
    /// bound under `NAME.member` (see [`structs`]).
    Struct { tag: String, dims: usize },
    /// A pointer to a struct, bound to its target's members ([`structval`]).
    StructPtr(structval::StructPtr),
    /// A pointer member of a buffer of structs: its hidden buffers (see [`structptr`]).
    PtrMember(Box<structptr::PtrMember>),
    /// An image parameter, by its lowered texel array ([`images`]).
    Image(String),
}

struct Frame {
    name: String,
    /// Set by a `return` that is not the function's last statement.
    ret_flag: Option<String>,
    /// The struct receiving a returned struct: its tag, key and bindings ([`structval`]).
    sresult: Option<StructResult>,
    /// The variable receiving the returned value.
    result: Option<(String, TypeName)>,
    /// The variables receiving a returned vector's components.
    vresult: Option<(Vec<String>, TypeName)>,
    /// `__ensures` conditions, checked at the function's exit ([`spec`]).
    ensures: Vec<(cl::Expr, Span)>,
    /// Every `__ensures` condition seen so far, checked or not: what a specification's
    /// accesses are built from ([`access_spec`]).
    contract: Vec<cl::Expr>,
    /// The function is a specification (its body holds `__writes_to`/`__reads_from`):
    /// its `__ensures` are assumptions about ksim's interpretation ([`access_spec`]).
    spec: bool,
    /// Source names assigned somewhere in the function's body: a variable among them has
    /// no static value (fence flags, [`Lowerer::static_fence`]).
    written: HashSet<String>,
}

/// A helper's struct result: its tag, the key it is bound under, its bindings.
type StructResult = (String, String, HashMap<String, Binding>);

/// A segment of a switch body: its labels (`None`: `default`), its statements, its span.
type Segment<'a> = (Vec<Option<&'a cl::Expr>>, Vec<&'a cl::Stmt>, Span);

/// What `break` / `continue` refer to.
struct Target {
    brk: Option<String>,
    cont: Option<String>,
    is_switch: bool,
}

struct Lowerer<'u> {
    funcs: HashMap<&'u str, &'u cl::Function>,
    used: HashSet<String>,
    scopes: Vec<HashMap<String, Binding>>,
    /// Types of the lowered scalar names.
    types: HashMap<String, TypeName>,
    /// Element type and number of dimensions of the lowered arrays.
    arrays: HashMap<String, (TypeName, usize)>,
    /// Arrays of vectors: components per element (see [`vector`]).
    vec_arrays: HashMap<String, u8>,
    /// Arrays of more than two dimensions, flattened: their dimensions after the second
    /// (see [`arrays`]).
    flat: HashMap<String, Vec<k::Expr>>,
    /// Private arrays and `__constant` tables: one row per thread (see [`private`]).
    per_thread: HashSet<String>,
    /// Lowered names of the `__constant` tables and variables, which cannot be written.
    readonly: HashSet<String>,
    /// Bindings of the program-scope variables, visible in every function.
    globals: HashMap<String, Binding>,
    program_vars: Vec<&'u cl::Decl>,
    /// `__local` declarations of the body, which become kernel arrays.
    local_arrays: Vec<k::Param>,
    frames: Vec<Frame>,
    targets: Vec<Target>,
    info: KernelInfo,
    /// Pointer variables and what is known of pointer values ([`pointer`]).
    pointers: pointer::Pointers,
    /// Declarations (by span) of the `__local` arrays an earlier pass found written byte
    /// by byte: they hold bytes ([`bytes`]).
    bytewise: HashSet<Span>,
    /// Whether this pass found another such array: the lowering runs again.
    bytes_grown: bool,
    /// The arrays holding bytes, with the element type the source declared.
    byte_arrays: HashMap<String, TypeName>,
    /// The declaration of each `__local` array of the body (not a scalar), by lowered name.
    local_spans: HashMap<String, Span>,
    /// Struct and union definitions, by tag (see [`structs`]).
    structs: HashMap<&'u str, &'u cl::StructDef>,
    /// Variables holding fence flags known at lowering time (a parameter or a variable
    /// never assigned after its initialiser), by lowered name.
    fences: HashMap<String, Fence>,
    /// `sampler_t` variables by lowered name: their bits when the lowering knows them,
    /// `None` for a copy of a sampler parameter (checked at launch) ([`images`]).
    samplers: HashMap<String, Option<u64>>,
    /// Image arrays and the slot type their first read or write settled, with that
    /// function's name ([`images`]).
    image_used: HashMap<String, Option<(TypeName, String)>>,
    /// The asynchronous copies and waits lowered so far ([`async_copy`]).
    copies: async_copy::Copies,
    /// The struct result of the helper being inlined, taken by its frame ([`structval`]).
    struct_result: Option<StructResult>,
}

/// Which jumps can leave a statement: `break`/`continue` of an enclosing loop or switch
/// (not those caught by a loop or switch inside it) and `return`.
#[derive(Clone, Copy, Default, Debug)]
struct Exits {
    brk: bool,
    cont: bool,
    ret: bool,
}

fn exits(s: &cl::Stmt) -> Exits {
    use cl::StmtKind::*;
    let or = |a: Exits, b: Exits| Exits {
        brk: a.brk || b.brk,
        cont: a.cont || b.cont,
        ret: a.ret || b.ret,
    };
    match &s.kind {
        Break => Exits {
            brk: true,
            ..Exits::default()
        },
        Continue => Exits {
            cont: true,
            ..Exits::default()
        },
        Return(_) => Exits {
            ret: true,
            ..Exits::default()
        },
        If { then, els, .. } => or(exits(then), els.as_deref().map(exits).unwrap_or_default()),
        While { body, .. } | DoWhile { body, .. } | For { body, .. } => Exits {
            ret: exits(body).ret,
            ..Exits::default()
        },
        Switch { body, .. } => Exits {
            brk: false,
            ..exits(body)
        },
        Case(_, s) | Default(s) | Label(_, s) => exits(s),
        Block(b) => b.stmts.iter().map(exits).fold(Exits::default(), or),
        Decl(_) | Expr(_) | Empty | Goto(_) => Exits::default(),
    }
}

fn count_returns(s: &cl::Stmt) -> usize {
    use cl::StmtKind::*;
    match &s.kind {
        Return(_) => 1,
        If { then, els, .. } => count_returns(then) + els.as_deref().map_or(0, count_returns),
        While { body, .. } | DoWhile { body, .. } | For { body, .. } | Switch { body, .. } => {
            count_returns(body)
        }
        Case(_, s) | Default(s) | Label(_, s) => count_returns(s),
        Block(b) => b.stmts.iter().map(count_returns).sum(),
        Decl(_) | Expr(_) | Empty | Goto(_) | Break | Continue => 0,
    }
}

/// Whether a function body needs a flag for `return`: some `return` is not its last
/// top-level statement.
fn needs_ret_flag(body: &cl::Block) -> bool {
    let total: usize = body.stmts.iter().map(count_returns).sum();
    let last = matches!(
        body.stmts.last().map(|s| &s.kind),
        Some(cl::StmtKind::Return(_))
    );
    total > usize::from(last)
}

/// Names a statement assigns to (`x = ...`, `x++`, `&x`): parameters among them get a
/// writable copy.
fn assigned_names(s: &cl::Stmt, out: &mut HashSet<String>) {
    use cl::StmtKind::*;
    match &s.kind {
        Decl(ds) => {
            for d in ds {
                if let Some(i) = &d.init {
                    init_assigned(i, out);
                }
            }
        }
        Expr(e) | Return(Some(e)) => expr_assigned(e, out),
        If { cond, then, els } => {
            expr_assigned(cond, out);
            assigned_names(then, out);
            if let Some(e) = els {
                assigned_names(e, out);
            }
        }
        While { cond, body } | DoWhile { body, cond } | Switch { value: cond, body } => {
            expr_assigned(cond, out);
            assigned_names(body, out);
        }
        For {
            init,
            cond,
            step,
            body,
        } => {
            if let Some(i) = init {
                assigned_names(i, out);
            }
            for e in [cond, step].into_iter().flatten() {
                expr_assigned(e, out);
            }
            assigned_names(body, out);
        }
        Case(_, s) | Default(s) | Label(_, s) => assigned_names(s, out),
        Block(b) => b.stmts.iter().for_each(|s| assigned_names(s, out)),
        Return(None) | Empty | Goto(_) | Break | Continue => {}
    }
}

fn init_assigned(i: &cl::Init, out: &mut HashSet<String>) {
    match i {
        cl::Init::Expr(e) => expr_assigned(e, out),
        cl::Init::List(l, _) => l.iter().for_each(|i| init_assigned(i, out)),
    }
}

/// The vector variable under `v.x`, `v.lo.y`, `v.s01` (a component written assigns the
/// variable); `None` for anything else, a struct member `q.i` included (whose own path
/// [`structs::member_path`] records).
fn component_root(e: &cl::Expr) -> Option<&str> {
    let component = |f: &str| {
        matches!(f, "lo" | "hi" | "even" | "odd")
            || (!f.is_empty() && f.chars().all(|c| "xyzw".contains(c)))
            || (f.len() > 1
                && (f.starts_with('s') || f.starts_with('S'))
                && f[1..].chars().all(|c| c.is_ascii_hexdigit()))
    };
    match &e.kind {
        cl::ExprKind::Member {
            base,
            field,
            arrow: false,
        } if component(&field.name) => match &base.kind {
            cl::ExprKind::Name(n) => Some(n),
            _ => component_root(base),
        },
        _ => None,
    }
}

fn expr_assigned(e: &cl::Expr, out: &mut HashSet<String>) {
    use cl::ExprKind::*;
    match &e.kind {
        Assign { target, value, .. } => {
            if let Some(n) = structs::member_path(target) {
                out.insert(n);
            }
            if let Some(n) = component_root(target) {
                out.insert(n.to_string());
            }
            expr_assigned(target, out);
            expr_assigned(value, out);
        }
        IncDec(_, a) | AddrOf(a) => {
            if let Some(n) = structs::member_path(a) {
                out.insert(n);
            }
            if let Some(n) = component_root(a) {
                out.insert(n.to_string());
            }
            expr_assigned(a, out);
        }
        Index(a, b) | Binary(_, a, b) | Comma(a, b) => {
            expr_assigned(a, out);
            expr_assigned(b, out);
        }
        Cond(a, b, c) => {
            for x in [a, b, c] {
                expr_assigned(x, out);
            }
        }
        Call { args, .. } | VecLit(_, args) => args.iter().for_each(|a| expr_assigned(a, out)),
        Member { base: a, .. } | Unary(_, a) | Plus(a) | Deref(a) | Cast(_, a) | SizeofExpr(a) => {
            expr_assigned(a, out)
        }
        StmtExpr(stmts, value) => {
            stmts.iter().for_each(|s| assigned_names(s, out));
            value.iter().for_each(|v| expr_assigned(v, out));
        }
        Int { .. } | Float { .. } | Char(_) | Str(_) | Name(_) | SizeofType(_) => {}
    }
}

fn name_expr(n: &str, span: &Span) -> k::Expr {
    ex(k::ExprKind::Name(n.to_string()), span)
}

fn not(e: k::Expr) -> k::Expr {
    let span = e.span.clone();
    ex(k::ExprKind::Unary(UnOp::Not, Box::new(e)), &span)
}

fn and(a: k::Expr, b: k::Expr) -> k::Expr {
    let span = a.span.start.min(b.span.start)..a.span.end.max(b.span.end);
    ex(
        k::ExprKind::Binary(BinOp::LogAnd, Box::new(a), Box::new(b)),
        &span,
    )
}

fn boolean(b: bool, span: &Span) -> k::Expr {
    ex(k::ExprKind::Bool(b), span)
}

fn block(stmts: Vec<k::Stmt>, span: &Span) -> k::Stmt {
    st(
        k::StmtKind::Block(k::Block {
            stmts,
            span: span.clone(),
        }),
        span,
    )
}

fn if_then(cond: k::Expr, then: Vec<k::Stmt>, els: Option<Vec<k::Stmt>>, span: &Span) -> k::Stmt {
    st(
        k::StmtKind::If {
            arms: vec![k::IfArm {
                cond,
                then: block(then, span),
                span: span.clone(),
            }],
            els: els.map(|e| Box::new(block(e, span))),
        },
        span,
    )
}

/// The checker's type of `c ? a : b` (C's usual arithmetic conversions, one type kept).
fn common(a: TypeName, b: TypeName) -> TypeName {
    if a == b {
        a
    } else {
        name_of(Ty::common(ty_of(a), ty_of(b)))
    }
}

/// C's integer promotion (`bool`, `char`, `short` compute as `int`).
fn promote(t: TypeName) -> TypeName {
    name_of(ty_of(t).promote())
}

/// The bits of an integer type (`int` for the types that are not integers).
fn int_bits(t: TypeName) -> u64 {
    match t {
        TypeName::Char | TypeName::Uchar => 8,
        TypeName::Short | TypeName::Ushort => 16,
        TypeName::Long | TypeName::Ulong => 64,
        _ => 32,
    }
}

/// The count of shift `op` (other operators: `count` unchanged). OpenCL C §6.3.j: a shift
/// uses only the low log2(N) bits of its count, N the bits of the left operand's type
/// (`left`: after integer promotion for a scalar, its element type for a vector), so that
/// no count is out of range as in C; the core, which faults on such counts, gets the
/// masked count.
fn shift_count(op: BinOp, left: Option<TypeName>, count: k::Expr, span: &Span) -> k::Expr {
    match (op, left) {
        (BinOp::Shl | BinOp::Shr, Some(t)) => ex(
            k::ExprKind::Binary(
                BinOp::BitAnd,
                Box::new(count),
                Box::new(ex(
                    k::ExprKind::Int {
                        value: int_bits(t) - 1,
                        unsigned: false,
                    },
                    span,
                )),
            ),
            span,
        ),
        _ => count,
    }
}

/// Size in bytes of an OpenCL type, for `sizeof` (`size_t` is 32 bits in ksim).
fn size_of(t: &cl::Type) -> Option<u64> {
    if !t.pointers.is_empty() {
        return Some(4);
    }
    fn base(b: &cl::Base) -> Option<u64> {
        use cl::Base::*;
        Some(match b {
            Char { .. } => 1,
            Short { .. } | Half => 2,
            Int { .. } | Float | Size { .. } => 4,
            Long { .. } | Double => 8,
            Vector(e, n) => base(e)? * if *n == 3 { 4 } else { *n as u64 },
            Bool | Void | Struct(_) | Opaque(_) => return None,
        })
    }
    let mut n = base(&t.base)?;
    for d in &t.arrays {
        match d.as_ref().map(|e| &e.kind) {
            Some(cl::ExprKind::Int { value, .. }) => n = n.checked_mul(*value)?,
            _ => return None,
        }
    }
    Some(n)
}

fn type_size(t: TypeName) -> u64 {
    ty_of(t).size().unwrap_or(4)
}

impl<'u> Lowerer<'u> {
    fn fresh(&mut self, want: &str) -> String {
        let mut name = want.to_string();
        let mut n = 1;
        while self.used.contains(&name) {
            name = format!("{want}_{n}");
            n += 1;
        }
        self.used.insert(name.clone());
        name
    }

    fn bind(&mut self, name: &str, b: Binding) {
        self.scopes
            .last_mut()
            .expect("a scope is open")
            .insert(name.to_string(), b);
    }

    fn lookup(&self, name: &str) -> Option<&Binding> {
        if let Some(p) = name.strip_prefix('*') {
            // The vector a pointer to a private vector points at ([`vecptr`]), or the
            // pointer variable a pointer to a pointer is ([`ptrmem`]).
            return match self.lookup(p)? {
                Binding::VecPtr(v) => Some(v),
                _ => None,
            };
        }
        self.scopes.iter().rev().find_map(|s| s.get(name))
    }

    /// A scalar type ksim models, or an error naming the type.
    fn scalar(&self, t: &cl::Type) -> Res<TypeName> {
        if !t.pointers.is_empty() {
            return unsupported(
                "a pointer type here (a helper returning a pointer, a pointer converted to a value)",
                &t.span,
            );
        }
        if !t.arrays.is_empty() {
            return unsupported("private arrays", &t.span);
        }
        self.base(&t.base, &t.span)
    }

    fn base(&self, b: &cl::Base, span: &Span) -> Res<TypeName> {
        use cl::Base::*;
        Ok(match b {
            Bool => TypeName::Bool,
            Int { unsigned: false } | Size { signed: true } => TypeName::Int,
            Int { unsigned: true } | Size { signed: false } => TypeName::Uint,
            Float => TypeName::Float,
            Vector(..) => return unsupported(format!("vector types (`{}`)", b.name()), span),
            Struct(tag) => {
                return unsupported(
                    format!(
                        "a struct here (`struct {tag}`: ksim has struct variables, parameters \
                         and buffers, used through their members)"
                    ),
                    span,
                )
            }
            // Events are ints: the copies' ids (`async_copy`).
            Opaque(n) if n == "event_t" => TypeName::Int,
            Opaque(n) if n == "cl_mem_fence_flags" => TypeName::Uint,
            // Samplers are their bits ([`images`]).
            Opaque(n) if n == "sampler_t" => TypeName::Uint,
            Opaque(n) => return unsupported(format!("`{n}`"), span),
            Void => return Err(Diagnostic::new("`void` is not a value type", span.clone())),
            Char { unsigned: false } => TypeName::Char,
            Char { unsigned: true } => TypeName::Uchar,
            Short { unsigned: false } => TypeName::Short,
            Short { unsigned: true } => TypeName::Ushort,
            Long { unsigned: false } => TypeName::Long,
            Long { unsigned: true } => TypeName::Ulong,
            Double => TypeName::Double,
            Half => return unsupported(format!("the type `{}`", b.name()), span),
        })
    }

    fn declare_scalar(&mut self, name: &str, ty: TypeName) -> String {
        let lowered = self.fresh(name);
        self.types.insert(lowered.clone(), ty);
        lowered
    }

    fn kernel(&mut self, f: &'u cl::Function) -> Res<(k::Kernel, KernelInfo)> {
        let body = f.body.as_ref().expect("kernels have bodies");
        if f.ret.base != cl::Base::Void || !f.ret.pointers.is_empty() {
            return Err(Diagnostic::new(
                "a kernel must return `void`",
                f.ret.span.clone(),
            ));
        }
        // Parameters take their own names (unless a ksim builtin has it); locals and
        // temporaries are renamed around them.
        let mut claimed = Vec::new();
        for p in &f.params {
            if let Some(n) = &p.name {
                let name = self.fresh(&n.name);
                claimed.push(name);
            }
        }
        let mut claimed = claimed.into_iter();
        let mut written = HashSet::new();
        for s in &body.stmts {
            assigned_names(s, &mut written);
        }
        let mut params = Vec::new();
        let mut prologue = Vec::new();
        self.scopes.push(HashMap::new());
        for p in &f.params {
            let Some(name) = &p.name else {
                return Err(Diagnostic::new(
                    "a kernel parameter needs a name",
                    p.span.clone(),
                ));
            };
            let param = claimed.next().expect("one name per parameter");
            self.param(
                name,
                param,
                &p.ty,
                &p.span,
                &written,
                &mut params,
                &mut prologue,
            )?;
        }
        let program_vars = std::mem::take(&mut self.program_vars);
        self.program_scope(&program_vars, &mut prologue)?;
        let ret_flag =
            needs_ret_flag(body).then(|| self.declare_scalar("returned", TypeName::Bool));
        if let Some(r) = &ret_flag {
            prologue.push(st(
                k::StmtKind::Decl {
                    ty: TypeName::Bool,
                    name: ident(r, &f.name.span),
                    init: Some(boolean(false, &f.name.span)),
                },
                &f.name.span,
            ));
        }
        self.frames.push(Frame {
            name: f.name.name.clone(),
            ret_flag,
            sresult: None,
            result: None,
            vresult: None,
            ensures: Vec::new(),
            contract: Vec::new(),
            spec: false,
            written: written.clone(),
        });
        let mut stmts = prologue;
        self.block(&body.stmts, &mut stmts)?;
        self.finish_copies(&mut stmts)?;
        self.ensures(&mut stmts)?;
        self.frames.pop();
        params.append(&mut self.local_arrays);
        self.patch_images(&mut params);
        let kernel = k::Kernel {
            name: ident(&f.name.name, &f.name.span),
            params,
            launch: Vec::new(),
            body: k::Block {
                stmts,
                span: body.span.clone(),
            },
            span: f.span.clone(),
        };
        let mut vector_arrays: Vec<_> = self.vec_arrays.clone().into_iter().collect();
        vector_arrays.sort();
        self.info.vector_arrays = vector_arrays;
        let mut byte_arrays: Vec<_> = self.byte_arrays.clone().into_iter().collect();
        byte_arrays.sort_by(|a, b| a.0.cmp(&b.0));
        self.info.byte_arrays = byte_arrays;
        Ok((kernel, std::mem::take(&mut self.info)))
    }

    /// One kernel parameter `name` (lowered as `lowered`) of type `ty`: a scalar, a buffer,
    /// or a struct's members ([`structs`]).
    #[allow(clippy::too_many_arguments)]
    fn param(
        &mut self,
        name: &cl::Ident,
        lowered: String,
        ty: &cl::Type,
        span: &Span,
        written: &HashSet<String>,
        params: &mut Vec<k::Param>,
        prologue: &mut Vec<k::Stmt>,
    ) -> Res<()> {
        if !ty.arrays.is_empty() {
            return unsupported("array parameters", &ty.span);
        }
        match ty.pointers.len() {
            0 if Self::is_image_type(ty) => {
                return self.image_param(name, lowered, ty, span, params);
            }
            0 if matches!(ty.base, cl::Base::Vector(..)) => {
                let shape = self.vec_base(&ty.base, &ty.span)?.expect("a vector");
                let written = written.contains(&name.name);
                self.vec_param(name, shape, written, params, prologue);
            }
            0 => {
                if let cl::Base::Struct(tag) = &ty.base {
                    return self.struct_param(tag, name, span, written, params, prologue);
                }
                let param = lowered;
                let t = self.base(&ty.base, &ty.span)?;
                self.types.insert(param.clone(), t);
                params.push(k::Param::Scalar {
                    ty: t,
                    name: ident(&param, &name.span),
                    span: span.clone(),
                });
                self.info.scalars.push(Scalar {
                    name: name.name.clone(),
                    param: param.clone(),
                    ty: t,
                });
                if images::is_sampler(ty) {
                    self.info.samplers.push(name.name.clone());
                    self.samplers.insert(param.clone(), None);
                }
                if written.contains(&name.name) {
                    // A written parameter: a private copy, as in C.
                    let copy = self.declare_scalar(&name.name, t);
                    prologue.push(st(
                        k::StmtKind::Decl {
                            ty: t,
                            name: ident(&copy, &name.span),
                            init: Some(name_expr(&param, &name.span)),
                        },
                        &name.span,
                    ));
                    self.bind(&name.name, Binding::Scalar(copy));
                } else {
                    self.bind(&name.name, Binding::Scalar(param));
                }
            }
            1 => {
                let space = match ty.space {
                    cl::AddrSpace::Global | cl::AddrSpace::Constant => Space::Global,
                    cl::AddrSpace::Local => Space::Local,
                    cl::AddrSpace::Private => {
                        return Err(Diagnostic::new(
                            "a kernel's pointer parameter must be `__global`, `__constant` or `__local`",
                            ty.span.clone(),
                        ))
                    }
                };
                if let cl::Base::Struct(tag) = &ty.base {
                    return self.struct_buffer(tag, name, ty, span, written, params, prologue);
                }
                let shape = self.vec_base(&ty.base, &ty.span)?;
                let elem = match shape.map_or_else(
                    || match ty.base {
                        // A half in memory is its bits, for `vload_half` (`cl/half.rs`).
                        cl::Base::Half => Ok(TypeName::Ushort),
                        _ => self.base(&ty.base, &ty.span),
                    },
                    |s| Ok(s.0),
                ) {
                    Ok(t) => t,
                    Err(mut d) => {
                        d.message = format!("{} (as a buffer's element type)", d.message);
                        return Err(d);
                    }
                };
                let array = lowered;
                let size_param = format!("{array}.len");
                params.push(k::Param::Array {
                    is_const: ty.is_const || ty.space == cl::AddrSpace::Constant,
                    space,
                    elem,
                    name: ident(&array, &name.span),
                    dims: vec![name_expr(&size_param, &name.span)],
                    span: span.clone(),
                });
                self.arrays.insert(array.clone(), (elem, 1));
                let lanes = shape.map_or(1, |s| s.1);
                if lanes > 1 {
                    self.vec_arrays.insert(array.clone(), lanes);
                }
                self.info.buffers.push(Buffer {
                    name: name.name.clone(),
                    array: array.clone(),
                    size_param,
                    space,
                    elem,
                    lanes,
                });
                if written.contains(&name.name) {
                    // A pointer parameter the kernel moves: a pointer variable.
                    let p = pointer::Ptr {
                        array,
                        offset: None,
                        view: None,
                    };
                    let key = (name.span.clone(), name.name.clone());
                    let var = self.pointer_var(
                        &name.name,
                        (elem, lanes),
                        pointer::PVal::One(p),
                        key,
                        &name.span,
                        prologue,
                    )?;
                    self.bind(&name.name, Binding::Ptr(var));
                } else {
                    self.bind(&name.name, Binding::Array(array));
                }
            }
            _ => return unsupported("pointers to pointers", &ty.span),
        }
        Ok(())
    }

    fn note(&mut self, span: &Span, text: String) {
        if !self.info.notes.iter().any(|n| n.text == text) {
            self.info.notes.push(Note {
                span: span.clone(),
                text,
            });
        }
    }

    // ----- statements -----

    /// Lowers a statement list; after a statement that may `break`, `continue` or `return`,
    /// the rest runs under a guard on the flags it may have set.
    fn block(&mut self, stmts: &[cl::Stmt], out: &mut Vec<k::Stmt>) -> Res<()> {
        for (i, s) in stmts.iter().enumerate() {
            self.stmt(s, out)?;
            let rest = &stmts[i + 1..];
            if rest.is_empty() {
                break;
            }
            if let Some(guard) = self.guard_after(exits(s), &s.span) {
                let mut inner = Vec::new();
                self.block(rest, &mut inner)?;
                let span = rest[0].span.start..rest[rest.len() - 1].span.end;
                out.push(if_then(guard, inner, None, &span));
                return Ok(());
            }
        }
        Ok(())
    }

    /// `!flag1 && !flag2 ...` for the flags a statement with these exits may set.
    fn guard_after(&self, e: Exits, span: &Span) -> Option<k::Expr> {
        let mut flags = Vec::new();
        if e.brk {
            flags.extend(self.targets.last().and_then(|t| t.brk.clone()));
        }
        if e.cont {
            flags.extend(
                self.targets
                    .iter()
                    .rev()
                    .find(|t| !t.is_switch)
                    .and_then(|t| t.cont.clone()),
            );
        }
        if e.ret {
            flags.extend(self.frames.last().and_then(|f| f.ret_flag.clone()));
        }
        flags
            .into_iter()
            .map(|f| not(name_expr(&f, span)))
            .reduce(and)
    }

    fn scoped(&mut self, s: &cl::Stmt) -> Res<Vec<k::Stmt>> {
        self.scopes.push(HashMap::new());
        let mut out = Vec::new();
        let r = match &s.kind {
            cl::StmtKind::Block(b) => self.block(&b.stmts, &mut out),
            _ => self.stmt(s, &mut out),
        };
        self.scopes.pop();
        r.map(|()| out)
    }

    fn stmt(&mut self, s: &cl::Stmt, out: &mut Vec<k::Stmt>) -> Res<()> {
        use cl::StmtKind as S;
        let span = &s.span;
        match &s.kind {
            S::Decl(decls) => {
                for d in decls {
                    self.decl(d, out)?;
                }
            }
            S::Expr(e) => self.effect(e, out)?,
            S::If { cond, then, els } => {
                let c = self.expr(cond, out)?;
                let then = self.scoped(then)?;
                let els = els.as_deref().map(|e| self.scoped(e)).transpose()?;
                out.push(if_then(c, then, els, span));
            }
            S::While { cond, body } => {
                self.looping(None, Some(cond), None, body, false, span, out)?
            }
            S::DoWhile { body, cond } => {
                self.looping(None, Some(cond), None, body, true, span, out)?
            }
            S::For {
                init,
                cond,
                step,
                body,
            } => {
                self.scopes.push(HashMap::new());
                let r = self.looping(
                    init.as_deref(),
                    cond.as_ref(),
                    step.as_ref(),
                    body,
                    false,
                    span,
                    out,
                );
                self.scopes.pop();
                r?
            }
            S::Switch { value, body } => self.switch(value, body, span, out)?,
            S::Case(..) | S::Default(_) => {
                return unsupported(
                    "a `case` label that is not directly in the body of its `switch`",
                    span,
                )
            }
            S::Break => {
                let Some(t) = self.targets.last() else {
                    return Err(Diagnostic::new(
                        "`break` outside a loop or switch",
                        span.clone(),
                    ));
                };
                if let Some(f) = t.brk.clone() {
                    out.push(set(&f, boolean(true, span), span));
                }
            }
            S::Continue => {
                let Some(t) = self.targets.iter().rev().find(|t| !t.is_switch) else {
                    return Err(Diagnostic::new("`continue` outside a loop", span.clone()));
                };
                if let Some(f) = t.cont.clone() {
                    out.push(set(&f, boolean(true, span), span));
                }
            }
            S::Return(Some(e)) if self.frames.last().is_some_and(|f| f.sresult.is_some()) => {
                self.return_struct(e, span, out)?;
                if let Some(f) = self.frames.last().and_then(|f| f.ret_flag.clone()) {
                    out.push(set(&f, boolean(true, span), span));
                }
            }
            S::Return(Some(e)) if self.desugar(e)?.is_some() => {
                let e = self.desugar(e)?.expect("a struct member");
                let s = cl::Stmt {
                    kind: S::Return(Some(e)),
                    span: span.clone(),
                };
                return self.stmt(&s, out);
            }
            S::Return(Some(e)) if self.frames.last().is_some_and(|f| f.vresult.is_some()) => {
                let frame = self.frames.last().expect("in a function");
                let (comps, elem) = frame.vresult.clone().expect("a vector result");
                let flag = frame.ret_flag.clone();
                let vals = self.vec_value(e, (elem, comps.len() as u8), out)?;
                for (c, v) in comps.iter().zip(vals) {
                    out.push(set(c, v, span));
                }
                if let Some(f) = flag {
                    out.push(set(&f, boolean(true, span), span));
                }
            }
            S::Return(e) => {
                let frame = self.frames.last().expect("in a function");
                let (result, flag, fname) = (
                    frame.result.clone(),
                    frame.ret_flag.clone(),
                    frame.name.clone(),
                );
                let frame_vector = frame.vresult.clone();
                match (e, result) {
                    (Some(e), Some((r, _))) if self.is_pointer_var(&r) => {
                        self.return_pointer(&r, e, span, out)?;
                    }
                    (Some(e), Some((r, _))) => {
                        let v = self.expr(e, out)?;
                        out.push(set(&r, v, span));
                    }
                    (None, None) if frame_vector.is_none() => {}
                    (None, None) => {
                        return Err(Diagnostic::new(
                            format!("`{fname}` must return a value"),
                            span.clone(),
                        ))
                    }
                    (Some(e), None) => {
                        return Err(Diagnostic::new(
                            format!("`{fname}` returns `void` but this `return` has a value"),
                            e.span.clone(),
                        ))
                    }
                    (None, Some(_)) => {
                        return Err(Diagnostic::new(
                            format!("`{fname}` must return a value"),
                            span.clone(),
                        ))
                    }
                }
                if let Some(f) = flag {
                    out.push(set(&f, boolean(true, span), span));
                }
            }
            S::Block(_) => {
                let stmts = self.scoped(s)?;
                out.push(block(stmts, span));
            }
            S::Empty => {}
            S::Goto(_) | S::Label(..) => return unsupported("`goto` and labels", span),
        }
        Ok(())
    }

    fn decl(&mut self, d: &cl::Decl, out: &mut Vec<k::Stmt>) -> Res<()> {
        let span = &d.span;
        if let cl::Base::Struct(tag) = &d.ty.base {
            if d.ty.pointers.is_empty() {
                return self.struct_decl(tag, d, out);
            }
            if d.ty.pointers.len() == 1 && d.ty.arrays.is_empty() {
                return self.struct_ptr_decl(tag, d, out);
            }
        }
        if let Some(cl::Init::Expr(e)) = &d.init {
            if let Some(e) = self.desugar(e)? {
                let d = cl::Decl {
                    init: Some(cl::Init::Expr(e)),
                    ..d.clone()
                };
                return self.decl(&d, out);
            }
        }
        if !d.ty.pointers.is_empty() {
            return self.pointer_decl(d, out);
        }
        match d.ty.space {
            cl::AddrSpace::Local => return self.local_decl(d),
            cl::AddrSpace::Global | cl::AddrSpace::Constant if d.ty.pointers.is_empty() => {
                return Err(Diagnostic::new(
                    "a variable in a function cannot be `__global` or `__constant`",
                    span.clone(),
                ))
            }
            _ => {}
        }
        if d.ty.pointers.is_empty() && !d.ty.arrays.is_empty() {
            return self.private_array_decl(d, out);
        }
        if let Some(shape) = self.type_shape(&d.ty)? {
            return self.vec_decl(d, shape, out);
        }
        let ty = self.scalar(&d.ty)?;
        let init = match &d.init {
            None => None,
            Some(cl::Init::Expr(e)) => Some(self.expr(e, out)?),
            Some(cl::Init::List(_, s)) => return unsupported("initialiser lists", s),
        };
        let name = self.declare_scalar(&d.name.name, ty);
        out.push(st(
            k::StmtKind::Decl {
                ty,
                name: ident(&name, &d.name.span),
                init,
            },
            span,
        ));
        if let Some(cl::Init::Expr(e)) = &d.init {
            let fence = self.static_fence(e);
            let fixed = self
                .frames
                .last()
                .is_some_and(|f| !f.written.contains(&d.name.name));
            if let (Some(fence), true) = (fence, fixed) {
                self.fences.insert(name.clone(), fence);
            }
            if fixed {
                self.note_sampler(&d.ty, &name, Some(e));
            }
        }
        self.bind(&d.name.name, Binding::Scalar(name));
        Ok(())
    }

    /// A `__local` declaration in a function body: a `local` array of the kernel.
    fn local_decl(&mut self, d: &cl::Decl) -> Res<()> {
        if d.init.is_some() {
            return Err(Diagnostic::new(
                "a `__local` variable cannot have an initialiser",
                d.span.clone(),
            ));
        }
        let shape = self.vec_base(&d.ty.base, &d.ty.span)?;
        let elem = match shape {
            Some((t, _)) => t,
            None => self.base(&d.ty.base, &d.ty.span)?,
        };
        let mut dims = Vec::new();
        for size in &d.ty.arrays {
            let Some(size) = size else {
                return Err(Diagnostic::new(
                    "a `__local` array needs a size",
                    d.ty.span.clone(),
                ));
            };
            let mut pre = Vec::new();
            let e = self.expr(size, &mut pre)?;
            if !pre.is_empty() || mentions_names(&e) {
                return Err(Diagnostic::new(
                    "a `__local` array's size must be a constant expression",
                    size.span.clone(),
                ));
            }
            dims.push(e);
        }
        let logical = dims.len().max(1);
        let (mut dims, inner) = if dims.len() > 2 {
            let (d, inner) = arrays::flatten(dims);
            (d, Some(inner))
        } else {
            (dims, None)
        };
        let cell = dims.is_empty();
        if cell {
            dims.push(ex(
                k::ExprKind::Int {
                    value: 1,
                    unsigned: false,
                },
                &d.name.span,
            ));
        }
        if let Some((_, n)) = shape {
            // Vector elements: `stride(n)` slots each in the last dimension.
            let last = dims.pop().expect("a dimension");
            let s = ex(
                k::ExprKind::Int {
                    value: vector::stride(n) as u64,
                    unsigned: false,
                },
                &d.name.span,
            );
            dims.push(ex(
                k::ExprKind::Binary(BinOp::Mul, Box::new(last), Box::new(s)),
                &d.name.span,
            ));
        }
        let name = self.fresh(&d.name.name);
        if let Some((_, n)) = shape {
            self.vec_arrays.insert(name.clone(), n);
        }
        if let Some(inner) = inner {
            self.flattened(&name, inner, &d.ty.span);
        }
        let mut stored = elem;
        if !cell && shape.is_none() {
            self.local_spans.insert(name.clone(), d.span.clone());
            if self.bytewise.contains(&d.span) {
                // Its bytes: `size` slots per element along the last dimension.
                let last = dims.pop().expect("a dimension");
                let size = ex(
                    k::ExprKind::Int {
                        value: type_size(elem),
                        unsigned: false,
                    },
                    &d.name.span,
                );
                dims.push(ex(
                    k::ExprKind::Binary(BinOp::Mul, Box::new(last), Box::new(size)),
                    &d.name.span,
                ));
                self.byte_arrays.insert(name.clone(), elem);
                stored = TypeName::Uchar;
            }
        }
        self.arrays.insert(name.clone(), (stored, logical));
        self.local_arrays.push(k::Param::Array {
            is_const: false,
            space: Space::Local,
            elem: stored,
            name: ident(&name, &d.name.span),
            dims,
            span: d.span.clone(),
        });
        self.bind(
            &d.name.name,
            if cell {
                Binding::Cell(name)
            } else {
                Binding::Array(name)
            },
        );
        Ok(())
    }

    /// `while`, `do`/`while` and `for` as a core `while`:
    /// `init; while (!brk && !ret && cond) { cont = false; body; if (!brk && !ret) step }`,
    /// where a condition with side effects (or a `do` loop's) is evaluated inside the body
    /// and sets `brk` when it fails.
    #[allow(clippy::too_many_arguments)]
    fn looping(
        &mut self,
        init: Option<&cl::Stmt>,
        cond: Option<&cl::Expr>,
        step: Option<&cl::Expr>,
        body: &cl::Stmt,
        do_while: bool,
        span: &Span,
        out: &mut Vec<k::Stmt>,
    ) -> Res<()> {
        if let Some(init) = init {
            self.stmt(init, out)?;
        }
        let head = cond.map_or(span.clone(), |c| c.span.clone());
        let ex_body = exits(body);
        let ret = if ex_body.ret {
            self.frames.last().and_then(|f| f.ret_flag.clone())
        } else {
            None
        };
        let mut cond_pre = Vec::new();
        let c = cond.map(|c| self.expr(c, &mut cond_pre)).transpose()?;
        let inside = do_while || !cond_pre.is_empty();
        let brk = (ex_body.brk || inside).then(|| self.declare_scalar("break", TypeName::Bool));
        let cont = ex_body
            .cont
            .then(|| self.declare_scalar("continue", TypeName::Bool));
        if let Some(b) = &brk {
            out.push(st(
                k::StmtKind::Decl {
                    ty: TypeName::Bool,
                    name: ident(b, &head),
                    init: Some(boolean(false, &head)),
                },
                &head,
            ));
        }
        if let Some(c) = &cont {
            out.push(st(
                k::StmtKind::Decl {
                    ty: TypeName::Bool,
                    name: ident(c, &head),
                    init: Some(boolean(false, &head)),
                },
                &head,
            ));
        }
        self.targets.push(Target {
            brk: brk.clone(),
            cont: cont.clone(),
            is_switch: false,
        });
        let inner = self.scoped(body);
        self.targets.pop();
        let mut inner = inner?;
        // After the body: the step (for) or the condition (do) run unless it broke out.
        let stop = [brk.as_ref().filter(|_| ex_body.brk), ret.as_ref()]
            .into_iter()
            .flatten()
            .map(|f| not(name_expr(f, &head)))
            .reduce(and);
        let mut after = Vec::new();
        if let Some(step) = step {
            self.effect(step, &mut after)?;
        }
        if do_while {
            let c = c.clone().expect("do has a condition");
            after.extend(cond_pre.clone());
            let b = brk.clone().expect("do loops have a break flag");
            after.push(if_then(
                not(c),
                vec![set(&b, boolean(true, &head), &head)],
                None,
                &head,
            ));
        }
        if !after.is_empty() {
            match stop {
                Some(g) => inner.push(if_then(g, after, None, &head)),
                None => inner.extend(after),
            }
        }
        let mut body_stmts = Vec::new();
        if let Some(c) = &cont {
            body_stmts.push(set(c, boolean(false, &head), &head));
        }
        let mut while_cond: Vec<k::Expr> = Vec::new();
        if let Some(b) = &brk {
            while_cond.push(not(name_expr(b, &head)));
        }
        if let Some(r) = &ret {
            while_cond.push(not(name_expr(r, &head)));
        }
        if inside && !do_while {
            let b = brk.clone().expect("a break flag");
            body_stmts.extend(cond_pre);
            let c = c.expect("a condition");
            body_stmts.push(if_then(
                not(c),
                vec![set(&b, boolean(true, &head), &head)],
                Some(inner),
                &head,
            ));
        } else {
            body_stmts.extend(inner);
            if !do_while {
                if let Some(c) = c {
                    while_cond.push(c);
                }
            }
        }
        let cond = while_cond
            .into_iter()
            .reduce(and)
            .unwrap_or(boolean(true, &head));
        let loop_span = span.start..body.span.start.max(span.start);
        out.push(st(
            k::StmtKind::While {
                cond,
                body: Box::new(block(body_stmts, &body.span)),
            },
            &loop_span,
        ));
        Ok(())
    }

    /// `switch (v) { case a: ...; case b: ...; default: ... }` as a sequence of
    /// `if (fall || v == a) { fall = true; ... }`, the default's test being that no case
    /// matches; `break` sets the switch's flag, which guards the rest.
    fn switch(
        &mut self,
        value: &cl::Expr,
        body: &cl::Stmt,
        span: &Span,
        out: &mut Vec<k::Stmt>,
    ) -> Res<()> {
        let v = self.expr(value, out)?;
        let ty = self.type_of(&v).unwrap_or(TypeName::Int);
        let sw = self.declare_scalar("switch", ty);
        out.push(st(
            k::StmtKind::Decl {
                ty,
                name: ident(&sw, &value.span),
                init: Some(v),
            },
            &value.span,
        ));
        let stmts: &[cl::Stmt] = match &body.kind {
            cl::StmtKind::Block(b) => &b.stmts,
            _ => std::slice::from_ref(body),
        };
        // Segments: the labels and the statements up to the next label.
        let mut segs: Vec<Segment> = Vec::new();
        for s in stmts {
            let mut labels = Vec::new();
            let mut cur = s;
            loop {
                match &cur.kind {
                    cl::StmtKind::Case(e, inner) => {
                        labels.push(Some(e));
                        cur = inner;
                    }
                    cl::StmtKind::Default(inner) => {
                        labels.push(None);
                        cur = inner;
                    }
                    _ => break,
                }
            }
            if labels.is_empty() {
                match segs.last_mut() {
                    Some(seg) => seg.1.push(cur),
                    None if matches!(cur.kind, cl::StmtKind::Empty) => {}
                    None => {
                        return unsupported(
                            "statements before the first `case` of a switch",
                            &cur.span,
                        )
                    }
                }
            } else {
                segs.push((labels, vec![cur], s.span.clone()));
            }
        }
        let mut values = Vec::new();
        for (labels, _, _) in &segs {
            for e in labels.iter().flatten() {
                let mut pre = Vec::new();
                let v = self.expr(e, &mut pre)?;
                if !pre.is_empty() {
                    return Err(Diagnostic::new(
                        "a `case` value must be a constant",
                        e.span.clone(),
                    ));
                }
                values.push(v);
            }
        }
        let eq = |v: &k::Expr| {
            ex(
                k::ExprKind::Binary(
                    BinOp::Eq,
                    Box::new(name_expr(&sw, &v.span)),
                    Box::new(v.clone()),
                ),
                &v.span,
            )
        };
        let or = |a: k::Expr, b: k::Expr| {
            let span = a.span.start.min(b.span.start)..a.span.end.max(b.span.end);
            ex(
                k::ExprKind::Binary(BinOp::LogOr, Box::new(a), Box::new(b)),
                &span,
            )
        };
        let no_case = values
            .iter()
            .map(eq)
            .reduce(or)
            .map(not)
            .unwrap_or(boolean(true, span));
        let fall = self.declare_scalar("fallthrough", TypeName::Bool);
        out.push(st(
            k::StmtKind::Decl {
                ty: TypeName::Bool,
                name: ident(&fall, span),
                init: Some(boolean(false, span)),
            },
            span,
        ));
        let any_break = stmts.iter().any(|s| exits(s).brk);
        let brk = any_break.then(|| self.declare_scalar("break", TypeName::Bool));
        if let Some(b) = &brk {
            out.push(st(
                k::StmtKind::Decl {
                    ty: TypeName::Bool,
                    name: ident(b, span),
                    init: Some(boolean(false, span)),
                },
                span,
            ));
        }
        self.targets.push(Target {
            brk,
            cont: None,
            is_switch: true,
        });
        self.scopes.push(HashMap::new());
        let mut vi = 0;
        let mut lowered = Vec::new();
        for (labels, body, lspan) in &segs {
            let mut test = name_expr(&fall, lspan);
            for l in labels {
                let t = match l {
                    Some(_) => {
                        vi += 1;
                        eq(&values[vi - 1])
                    }
                    None => no_case.clone(),
                };
                test = or(test, t);
            }
            let mut inner = vec![set(&fall, boolean(true, lspan), lspan)];
            let seg_exits = body
                .iter()
                .map(|s| exits(s))
                .fold(Exits::default(), |a, b| Exits {
                    brk: a.brk || b.brk,
                    cont: a.cont || b.cont,
                    ret: a.ret || b.ret,
                });
            let owned: Vec<cl::Stmt> = body.iter().map(|s| (*s).clone()).collect();
            let r = self.block(&owned, &mut inner);
            if let Err(e) = r {
                self.scopes.pop();
                self.targets.pop();
                return Err(e);
            }
            lowered.push((if_then(test, inner, None, lspan), seg_exits));
        }
        self.scopes.pop();
        // Chain the segments: after one that may jump, the rest is guarded.
        let mut rest: Vec<k::Stmt> = Vec::new();
        for (seg, e) in lowered.into_iter().rev() {
            let guard = self.guard_after(e, &seg.span);
            let mut here = vec![seg];
            if !rest.is_empty() {
                let span = rest[0].span.start..rest[rest.len() - 1].span.end;
                match guard {
                    Some(g) => here.push(if_then(g, rest, None, &span)),
                    None => here.extend(rest),
                }
            }
            rest = here;
        }
        self.targets.pop();
        out.push(block(rest, span));
        Ok(())
    }

    // ----- expressions -----

    /// Lowers an expression evaluated for its side effects only.
    fn effect(&mut self, e: &cl::Expr, out: &mut Vec<k::Stmt>) -> Res<()> {
        use cl::ExprKind as E;
        let span = &e.span;
        if let Some(e) = self.desugar(e)? {
            return self.effect(&e, out);
        }
        if self.struct_assignment(e, out)?.is_some() || self.ptr_member_store(e, out)?.is_some() {
            return Ok(());
        }
        if self.vec_shape(e).is_some() {
            return self.vec_effect(e, out);
        }
        match &e.kind {
            E::Assign { op, target, value } if self.pointer_name(target).is_some() => {
                let var = self.pointer_name(target).expect("a pointer variable");
                self.pointer_assign(&var, *op, value, span, out)?;
            }
            E::Assign { op, target, value } => {
                let v = self.expr(value, out)?;
                self.store(*op, target, v, span, out)?;
            }
            E::IncDec(op, target) => {
                let places = self.lvalue_places(target, out)?;
                let mut arms = Vec::new();
                let decrement = matches!(op, cl::IncDec::PreDec | cl::IncDec::PostDec);
                for (when, place) in places {
                    let stmts = match place {
                        Place::Plain(lv) => {
                            vec![st(
                                k::StmtKind::Step {
                                    target: lv,
                                    decrement,
                                },
                                span,
                            )]
                        }
                        Place::View(array, index, view) => {
                            let old = bytes::view_read(array.clone(), index.clone(), view, span);
                            let one = ex(
                                k::ExprKind::Int {
                                    value: 1,
                                    unsigned: false,
                                },
                                span,
                            );
                            let op = if decrement { BinOp::Sub } else { BinOp::Add };
                            let v = ex(k::ExprKind::Binary(op, Box::new(old), Box::new(one)), span);
                            self.view_write(array, index, view, v, span)?
                        }
                    };
                    arms.push((when, stmts));
                }
                out.extend(pointer::chain(arms, span));
            }
            E::Comma(a, b) => {
                self.effect(a, out)?;
                self.effect(b, out)?;
            }
            E::Call { func, args } if !self.funcs.contains_key(func.name.as_str()) => {
                match builtins::lookup(&func.name) {
                    // The flags decide which memory spaces the barrier orders.
                    Some(Builtin::Barrier) => self.barrier(args, span, out)?,
                    Some(Builtin::MemFence) => {}
                    Some(Builtin::Atomic(op)) => {
                        self.atomic(op, func, args, false, span, out)?;
                    }
                    Some(Builtin::Annotation) => self.annotation(func, args, span, out)?,
                    Some(Builtin::AccessSpec) => self.access_spec(func, args, span, out)?,
                    Some(Builtin::VStore) => self.vstore(func, args, span, out)?,
                    _ => {
                        let _ = self.call(func, args, span, out)?;
                    }
                }
            }
            E::Call { func, args } => {
                let _ = self.call(func, args, span, out)?;
            }
            E::Binary(op @ (BinOp::LogAnd | BinOp::LogOr), a, b) => {
                let mut rhs = Vec::new();
                self.effect(b, &mut rhs)?;
                let a = self.expr(a, out)?;
                if !rhs.is_empty() {
                    let c = if *op == BinOp::LogAnd { a } else { not(a) };
                    out.push(if_then(c, rhs, None, span));
                }
            }
            E::Cond(c, a, b) => {
                let (mut ta, mut tb) = (Vec::new(), Vec::new());
                self.effect(a, &mut ta)?;
                self.effect(b, &mut tb)?;
                let c = self.expr(c, out)?;
                if !(ta.is_empty() && tb.is_empty()) {
                    out.push(if_then(c, ta, Some(tb), span));
                }
            }
            E::Cast(t, a) if t.base == cl::Base::Void && t.pointers.is_empty() => {
                self.effect(a, out)?
            }
            E::StmtExpr(stmts, value) => {
                self.stmt_expr(stmts, value.as_deref(), true, span, out)?;
            }
            _ => {
                // A value computed and dropped: only its side effects matter.
                let _ = self.expr(e, out)?;
            }
        }
        Ok(())
    }

    /// Stores the lowered value `v` into `target` (`op`: a compound assignment's operator).
    fn store(
        &mut self,
        op: Option<BinOp>,
        target: &cl::Expr,
        v: k::Expr,
        span: &Span,
        out: &mut Vec<k::Stmt>,
    ) -> Res<()> {
        let places = self.lvalue_places(target, out)?;
        let v = match (op, places.first()) {
            (Some(op), Some((_, Place::Plain(lv)))) => {
                let left = self.type_of(&Self::lvalue_expr(lv, span)).map(promote);
                shift_count(op, left, v, span)
            }
            _ => v,
        };
        let mut arms = Vec::new();
        for (when, place) in places {
            let stmts = match place {
                Place::Plain(lv) => vec![st(
                    k::StmtKind::Assign {
                        target: lv,
                        op: op.map_or(k::AssignOp::Set, k::AssignOp::Compound),
                        value: v.clone(),
                    },
                    span,
                )],
                Place::View(array, index, view) => {
                    let v = match op {
                        None => v.clone(),
                        Some(op) => {
                            let old = bytes::view_read(array.clone(), index.clone(), view, span);
                            let left = Some(promote(view.unit));
                            let count = shift_count(op, left, v.clone(), span);
                            ex(
                                k::ExprKind::Binary(op, Box::new(old), Box::new(count)),
                                span,
                            )
                        }
                    };
                    self.view_write(array, index, view, v, span)?
                }
            };
            arms.push((when, stmts));
        }
        out.extend(pointer::chain(arms, span));
        Ok(())
    }

    /// The fence flags `e` denotes, if known at lowering time: `CLK_LOCAL_MEM_FENCE`,
    /// `CLK_GLOBAL_MEM_FENCE`, `0`, their `|`, or a variable or helper parameter holding
    /// such a value and never assigned (after inlining, `f(CLK_LOCAL_MEM_FENCE)` makes the
    /// helper's `barrier(flags)` a local barrier).
    fn static_fence(&self, e: &cl::Expr) -> Option<Fence> {
        match &e.kind {
            cl::ExprKind::Name(n) => match self.lookup(n) {
                Some(Binding::Scalar(v)) => self.fences.get(v).copied(),
                Some(_) => None,
                None => builtins::fence_flag(n),
            },
            cl::ExprKind::Binary(BinOp::BitOr, a, b) => {
                let (a, b) = (self.static_fence(a)?, self.static_fence(b)?);
                Some(Fence {
                    local: a.local || b.local,
                    global: a.global || b.global,
                })
            }
            cl::ExprKind::Int { value: 0, .. } => Some(Fence::default()),
            cl::ExprKind::Cast(_, a) => self.static_fence(a),
            _ => None,
        }
    }

    /// The places an assignment's target may be, each with the condition choosing it
    /// (several for a pointer whose target is chosen at run time, see [`pointer`]).
    fn lvalue_places(
        &mut self,
        e: &cl::Expr,
        pre: &mut Vec<k::Stmt>,
    ) -> Res<Vec<(Option<k::Expr>, Place)>> {
        use cl::ExprKind as E;
        if let Some(places) = self.component_places(e, pre)? {
            return Ok(places);
        }
        if !matches!(e.kind, E::Index(..) | E::Deref(_)) || self.vec_shape(e).is_some() {
            return Ok(vec![(None, Place::Plain(self.lvalue(e, pre)?.0))]);
        }
        let (arms, _) = self.element_places(e, pre)?;
        let mut out = Vec::new();
        for a in arms {
            self.writable(&a.array.name, &e.span)?;
            if let Some(view) = a.view {
                out.push((a.when, Place::View(a.array, a.index, view)));
                continue;
            }
            let lv = if a.index.is_empty() {
                k::LValue::Var(a.array)
            } else {
                k::LValue::Elem {
                    array: a.array,
                    indices: a.index,
                }
            };
            out.push((a.when, Place::Plain(lv)));
        }
        Ok(out)
    }

    fn lvalue(&mut self, e: &cl::Expr, pre: &mut Vec<k::Stmt>) -> Res<(k::LValue, TypeName)> {
        use cl::ExprKind as E;
        if let Some(e) = self.desugar(e)? {
            return self.lvalue(&e, pre);
        }
        if self.is_struct(e)? {
            return unsupported(
                "assigning a whole struct here (only as a statement `a = b;`)",
                &e.span,
            );
        }
        match &e.kind {
            E::Name(n) => match self.lookup(n).cloned() {
                Some(Binding::Scalar(v)) => {
                    self.writable(&v, &e.span)?;
                    let t = self.types[&v];
                    Ok((k::LValue::Var(ident(&v, &e.span)), t))
                }
                Some(Binding::Cell(a)) => {
                    let t = self.arrays[&a].0;
                    let zero = ex(
                        k::ExprKind::Int {
                            value: 0,
                            unsigned: false,
                        },
                        &e.span,
                    );
                    Ok((
                        k::LValue::Elem {
                            array: ident(&a, &e.span),
                            indices: vec![zero],
                        },
                        t,
                    ))
                }
                Some(Binding::Ptr(v)) => {
                    self.movable(&v, &e.span)?;
                    Ok((k::LValue::Var(ident(&v, &e.span)), TypeName::Int))
                }
                Some(Binding::Array(_)) => Err(Diagnostic::new(
                    format!("`{n}` is an array: it cannot be assigned"),
                    e.span.clone(),
                )),
                Some(Binding::Image(_)) => Err(Diagnostic::new(
                    format!("`{n}` is an image: it cannot be assigned"),
                    e.span.clone(),
                )),
                Some(Binding::Vector { .. }) => self.not_scalar(e),
                Some(Binding::Struct { .. } | Binding::StructPtr(_)) => self.struct_value(e),
                Some(Binding::VecPtr(_)) => unsupported(
                    format!("changing `{n}`, a pointer to a private vector or pointer variable"),
                    &e.span,
                ),
                Some(Binding::PtrMember(_)) => self.ptr_members_whole(n, &e.span),
                None => Err(Diagnostic::new(
                    format!("unknown variable `{n}`"),
                    e.span.clone(),
                )),
            },
            E::Index(..) | E::Deref(_) if self.vec_shape(e).is_some() => self.not_scalar(e),
            E::Index(..) | E::Deref(_) => {
                let (a, indices) = self.element(e, pre)?;
                self.writable(&a.name, &e.span)?;
                if indices.is_empty() {
                    // Through a pointer to a private variable (see `pointer`).
                    let t = self.types[&a.name];
                    return Ok((k::LValue::Var(a), t));
                }
                let t = self.arrays[&a.name].0;
                Ok((k::LValue::Elem { array: a, indices }, t))
            }
            E::Member { base, .. } if self.vec_shape(base).is_some() => {
                self.component_lvalue(e, pre)
            }
            E::Member { .. } => unsupported("struct members and vector components", &e.span),
            _ => unsupported("assigning to this kind of expression", &e.span),
        }
    }

    /// `A[i]`, `A[i][j]`, `*A`, `*(A + i)`, `p[i]`, `*p`: the array and its indices
    /// (a pointer's offset added to the index, see [`pointer`]); no indices for a pointer
    /// to a private variable, the variable itself.
    fn element(&mut self, e: &cl::Expr, pre: &mut Vec<k::Stmt>) -> Res<(k::Ident, Vec<k::Expr>)> {
        let (mut arms, _) = self.element_places(e, pre)?;
        if arms.len() != 1 {
            return unsupported(
                "this access through a pointer whose target is chosen at run time (or null)",
                &e.span,
            );
        }
        let a = arms.pop().expect("one place");
        if a.view.is_some() {
            return unsupported(
                "this use of an element through a pointer cast (only reads and writes)",
                &e.span,
            );
        }
        Ok((a.array, a.index))
    }

    /// The places an access `A[i]`, `p[i]`, `*p`, ... may reach (several for a pointer
    /// whose target is chosen at run time, see [`pointer`]) and the element type; the
    /// checks that must hold first go to `pre`.
    fn element_places(
        &mut self,
        e: &cl::Expr,
        pre: &mut Vec<k::Stmt>,
    ) -> Res<(Vec<pointer::Arm>, TypeName)> {
        use cl::ExprKind as E;
        let one = |this: &Self, array: k::Ident, index: Vec<k::Expr>| {
            let elem = this.arrays[&array.name].0;
            let view = this
                .byte_arrays
                .get(&array.name)
                .map(|&unit| bytes::View { unit, elem });
            (
                vec![pointer::Arm {
                    when: None,
                    array,
                    index,
                    view,
                }],
                view.map_or(elem, |v| v.unit),
            )
        };
        if let Some((arr, base, indices)) = self.flattened_chain(e) {
            let mut out = Vec::new();
            for i in indices {
                out.push(self.expr(i, pre)?);
            }
            let out = self.thread_row(&arr, out, &base.span);
            let out = self.flat_index(&arr, out)?;
            return Ok(one(self, ident(&arr, &base.span), out));
        }
        match &e.kind {
            E::Index(a, j) => {
                if let E::Index(base, i) = &a.kind {
                    if let Some(arr) = self.array_of_dims(base, 2) {
                        let i = self.expr(i, pre)?;
                        let j = self.expr(j, pre)?;
                        return Ok(one(self, ident(&arr, &base.span), vec![i, j]));
                    }
                }
                if let E::Name(n) = &a.kind {
                    match self.lookup(n) {
                        Some(Binding::Cell(_))
                        | Some(Binding::Scalar(_))
                        | Some(Binding::Vector { .. }) => {
                            return Err(Diagnostic::new(
                                format!("`{n}` is not an array or pointer"),
                                a.span.clone(),
                            ))
                        }
                        None => {
                            return Err(Diagnostic::new(
                                format!("unknown name `{n}`"),
                                a.span.clone(),
                            ))
                        }
                        _ => {}
                    }
                }
                if !self.is_pointer(a) {
                    return unsupported(
                        "indexing something other than an array or pointer",
                        &a.span,
                    );
                }
                let p = self.pointer_value(a, pre)?;
                let j = self.expr(j, pre)?;
                self.places(p, Some(j), &e.span, pre)
            }
            E::Deref(p) => {
                if !self.is_pointer(p) {
                    return unsupported("dereferencing something that is not a pointer", &p.span);
                }
                let p = self.pointer_value(p, pre)?;
                self.places(p, None, &e.span, pre)
            }
            _ => unsupported("this kind of memory access", &e.span),
        }
    }

    fn lvalue_expr(lv: &k::LValue, span: &Span) -> k::Expr {
        match lv {
            k::LValue::Var(v) => name_expr(&v.name, span),
            k::LValue::Elem { array, indices } => ex(
                k::ExprKind::Index {
                    array: array.clone(),
                    indices: indices.clone(),
                },
                span,
            ),
        }
    }

    /// A temporary holding `value` (declared in `pre`), as an expression.
    fn temp(
        &mut self,
        what: &str,
        ty: TypeName,
        value: Option<k::Expr>,
        span: &Span,
        pre: &mut Vec<k::Stmt>,
    ) -> String {
        let t = self.declare_scalar(what, ty);
        pre.push(st(
            k::StmtKind::Decl {
                ty,
                name: ident(&t, span),
                init: value,
            },
            span,
        ));
        t
    }

    /// Lowers an expression to a pure `.ksim` expression; its side effects go to `pre`.
    fn expr(&mut self, e: &cl::Expr, pre: &mut Vec<k::Stmt>) -> Res<k::Expr> {
        use cl::ExprKind as E;
        let span = &e.span;
        if let Some(e) = self.desugar(e)? {
            return self.expr(&e, pre);
        }
        if self.is_struct(e)? {
            return self.struct_value(e);
        }
        let mk = |kind| ex(kind, span);
        Ok(match &e.kind {
            E::Int {
                value,
                unsigned,
                long,
            } => {
                let lit = mk(k::ExprKind::Int {
                    value: *value,
                    unsigned: *unsigned,
                });
                // `5L`, `5UL`: at least `long`; the checker makes a literal too large
                // for `int` (`uint`) a `long` (`ulong`) by itself.
                match (long, unsigned) {
                    (false, _) => lit,
                    (true, false) => mk(k::ExprKind::Cast(TypeName::Long, Box::new(lit))),
                    (true, true) => mk(k::ExprKind::Cast(TypeName::Ulong, Box::new(lit))),
                }
            }
            // C: an unsuffixed floating literal is a `double`, `1.5f` a `float`.
            E::Float {
                value,
                single: true,
            } => mk(k::ExprKind::Float(*value as f32)),
            E::Float { value, .. } => mk(k::ExprKind::Double(*value)),
            E::Char(c) => {
                let lit = mk(k::ExprKind::Int {
                    value: c.unsigned_abs(),
                    unsigned: false,
                });
                if *c < 0 {
                    mk(k::ExprKind::Unary(UnOp::Neg, Box::new(lit)))
                } else {
                    lit
                }
            }
            E::Str(_) => return unsupported("string literals", span),
            E::Name(_) if self.vec_shape(e).is_some() => return self.not_scalar(e),
            E::Name(n) => match self.lookup(n).cloned() {
                Some(Binding::Scalar(v)) => name_expr(&v, span),
                Some(Binding::Vector { .. }) => return self.not_scalar(e),
                Some(Binding::Struct { .. } | Binding::StructPtr(_)) => return self.struct_value(e),
                Some(Binding::PtrMember(_)) => return self.ptr_members_whole(n, span),
                Some(Binding::Cell(a)) => mk(k::ExprKind::Index {
                    array: ident(&a, span),
                    indices: vec![mk(k::ExprKind::Int {
                        value: 0,
                        unsigned: false,
                    })],
                }),
                Some(Binding::Array(_)) | Some(Binding::Ptr(_)) | Some(Binding::VecPtr(_)) => {
                    return unsupported(
                        format!(
                            "using the pointer `{n}` as a value (only dereferenced, indexed, \
                             moved or passed to a function)"
                        ),
                        span,
                    )
                }
                Some(Binding::Image(_)) => {
                    return unsupported(
                        format!(
                            "using the image `{n}` as a value (only passed to image built-ins \
                             and to helper functions with a body)"
                        ),
                        span,
                    )
                }
                None => match builtins::constant(n) {
                    Some(kind) => mk(kind),
                    // Fence flags as values: OpenCL's `cl_mem_fence_flags` bits.
                    None if builtins::fence_flag(n).is_some() => mk(k::ExprKind::Int {
                        value: builtins::fence_bits(n),
                        unsigned: true,
                    }),
                    None if n == "NULL" => return unsupported("null pointers", span),
                    None => {
                        return Err(Diagnostic::new(format!("unknown name `{n}`"), span.clone()))
                    }
                },
            },
            E::Index(..) | E::Deref(_) if self.vec_shape(e).is_some() => return self.not_scalar(e),
            E::Index(..) | E::Deref(_) => {
                let (arms, elem) = self.element_places(e, pre)?;
                Self::read_places(arms, elem, span)
            }
            E::Call { func, args } => match self.call(func, args, span, pre)? {
                Some(v) => v,
                None => {
                    return Err(Diagnostic::new(
                        format!("`{}` returns no value", func.name),
                        span.clone(),
                    ))
                }
            },
            E::Member { base, .. } if self.vec_shape(base).is_some() => self.component(e, pre)?,
            E::Member { .. } => return unsupported("struct members and vector components", span),
            E::Unary(op, a) => {
                let a = self.expr(a, pre)?;
                mk(k::ExprKind::Unary(*op, Box::new(a)))
            }
            E::Plus(a) => self.expr(a, pre)?,
            E::IncDec(..) | E::Assign { .. } if self.is_pointer(e) => {
                return unsupported(
                    "using a pointer as a value (only dereferenced, indexed, moved or passed to a function)",
                    span,
                )
            }
            E::IncDec(op, target) => {
                let (lv, ty) = self.lvalue(target, pre)?;
                let dec = matches!(op, cl::IncDec::PreDec | cl::IncDec::PostDec);
                let step = st(
                    k::StmtKind::Step {
                        target: lv.clone(),
                        decrement: dec,
                    },
                    span,
                );
                match op {
                    cl::IncDec::PreInc | cl::IncDec::PreDec => {
                        pre.push(step);
                        Self::lvalue_expr(&lv, span)
                    }
                    _ => {
                        let old = Self::lvalue_expr(&lv, span);
                        let t = self.temp("old", ty, Some(old), span, pre);
                        pre.push(step);
                        name_expr(&t, span)
                    }
                }
            }
            E::AddrOf(_) => {
                return unsupported(
                    "using an address `&...` as a value (only dereferenced, indexed or passed to a function)",
                    span,
                )
            }
            E::Binary(op @ (BinOp::LogAnd | BinOp::LogOr), a, b) => {
                let a = self.expr(a, pre)?;
                let mut rhs = Vec::new();
                let b = self.expr(b, &mut rhs)?;
                if rhs.is_empty() {
                    mk(k::ExprKind::Binary(*op, Box::new(a), Box::new(b)))
                } else {
                    let t = self.temp("cond", TypeName::Bool, Some(a), span, pre);
                    rhs.push(set(&t, b, span));
                    let test = name_expr(&t, span);
                    let test = if *op == BinOp::LogAnd {
                        test
                    } else {
                        not(test)
                    };
                    pre.push(if_then(test, rhs, None, span));
                    name_expr(&t, span)
                }
            }
            E::Binary(
                op @ (BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge),
                a,
                b,
            ) if self.is_pointer(a) || self.is_pointer(b) => {
                self.pointer_compare(*op, a, b, span, pre)?
            }
            E::Binary(op, a, b) => {
                let a = self.expr(a, pre)?;
                let b = self.expr(b, pre)?;
                let b = shift_count(*op, self.type_of(&a).map(promote), b, span);
                mk(k::ExprKind::Binary(*op, Box::new(a), Box::new(b)))
            }
            E::Assign { .. } => {
                let target = match &e.kind {
                    E::Assign { target, .. } => target,
                    _ => unreachable!(),
                };
                self.effect(e, pre)?;
                let mut again = Vec::new();
                let (lv, _) = self.lvalue(target, &mut again)?;
                if !again.is_empty() {
                    return unsupported(
                        "an assignment's value when its target has side effects",
                        span,
                    );
                }
                Self::lvalue_expr(&lv, span)
            }
            E::Cond(c, a, b) => {
                let c = self.expr(c, pre)?;
                let (mut pa, mut pb) = (Vec::new(), Vec::new());
                let a = self.expr(a, &mut pa)?;
                let b = self.expr(b, &mut pb)?;
                if pa.is_empty() && pb.is_empty() {
                    mk(k::ExprKind::Cond(Box::new(c), Box::new(a), Box::new(b)))
                } else {
                    let ty = match (self.type_of(&a), self.type_of(&b)) {
                        (Some(x), Some(y)) => common(x, y),
                        _ => return unsupported("this `?:` with side effects in a branch", span),
                    };
                    let t = self.temp("cond", ty, None, span, pre);
                    pa.push(set(&t, a, span));
                    pb.push(set(&t, b, span));
                    pre.push(if_then(c, pa, Some(pb), span));
                    name_expr(&t, span)
                }
            }
            E::Cast(t, a) => {
                let ty = self.scalar(t).map_err(|mut d| {
                    d.message = format!("{} (in a cast)", d.message);
                    d
                })?;
                let a = self.expr(a, pre)?;
                mk(k::ExprKind::Cast(ty, Box::new(a)))
            }
            E::VecLit(..) if self.vec_shape(e).is_some() => return self.not_scalar(e),
            E::VecLit(t, _) => {
                return unsupported(format!("vector literals (`{}`)", t.base.name()), span)
            }
            E::Comma(a, b) => {
                self.effect(a, pre)?;
                self.expr(b, pre)?
            }
            E::SizeofType(t) => match size_of(t) {
                Some(n) => mk(k::ExprKind::Int {
                    value: n,
                    unsigned: true,
                }),
                None => return unsupported(format!("sizeof of `{}`", t.base.name()), span),
            },
            E::SizeofExpr(a) if self.vec_shape(a).is_some() => {
                let (elem, n) = self.vec_shape(a).expect("a vector");
                mk(k::ExprKind::Int {
                    value: type_size(elem) * vector::stride(n) as u64,
                    unsigned: true,
                })
            }
            E::StmtExpr(stmts, value) => self
                .stmt_expr(stmts, value.as_deref(), false, span, pre)?
                .expect("a value"),
            E::SizeofExpr(a) => {
                let mut ignored = Vec::new();
                let v = self.expr(a, &mut ignored)?;
                match self.type_of(&v) {
                    Some(t) => mk(k::ExprKind::Int {
                        value: type_size(t),
                        unsigned: true,
                    }),
                    None => return unsupported("sizeof of this expression", span),
                }
            }
        })
    }

    /// A call: an inlined helper or a built-in. `None` for `void`.
    fn call(
        &mut self,
        func: &cl::Ident,
        args: &[cl::Expr],
        span: &Span,
        pre: &mut Vec<k::Stmt>,
    ) -> Res<Option<k::Expr>> {
        if let Some(f) = self.funcs.get(func.name.as_str()).copied() {
            return self.inline(f, args, span, pre);
        }
        if let Some(e) = self.predicate(func, args, span, pre)? {
            return Ok(Some(e));
        }
        if func.name == "signbit" {
            return self.signbit(args, span, pre).map(Some);
        }
        let Some(b) = builtins::lookup(&func.name) else {
            return Err(Diagnostic::new(
                format!("unknown function `{}`", func.name),
                func.span.clone(),
            ));
        };
        match b {
            Builtin::WorkItem => super::ndrange::lower(&func.name, args, span).map(Some),
            Builtin::Barrier
            | Builtin::MemFence
            | Builtin::Annotation
            | Builtin::AccessSpec
            | Builtin::VStore => Err(Diagnostic::new(
                format!("`{}` is a statement, not a value", func.name),
                span.clone(),
            )),
            Builtin::Atomic(op) => self.atomic(op, func, args, true, span, pre),
            Builtin::AsyncCopy if func.name == "wait_group_events" => {
                self.wait_events(args, span, pre).map(Some)
            }
            Builtin::AsyncCopy => self.async_copy(func, args, span, pre).map(Some),
            Builtin::Image => self.image_call(func, args, span, pre),
            Builtin::VLoadHalf => self.vload_half(args, span, pre).map(Some),
            Builtin::Unsupported(what) => {
                unsupported(format!("{what} (`{}`)", func.name), &func.span)
            }
            Builtin::Shuffle => Err(Diagnostic::new(
                format!("`{}` gives a vector where a scalar is needed", func.name),
                span.clone(),
            )),
            Builtin::Convert | Builtin::VectorTest => {
                if self
                    .vec_shape(&cl::Expr {
                        kind: cl::ExprKind::Call {
                            func: func.clone(),
                            args: args.to_vec(),
                        },
                        span: span.clone(),
                    })
                    .is_some()
                {
                    return Err(Diagnostic::new(
                        format!("`{}` gives a vector where a scalar is needed", func.name),
                        span.clone(),
                    ));
                }
                self.vector_builtin(func, args, span, pre).map(Some)
            }
            Builtin::Math(_) if args.iter().any(|a| self.vec_shape(a).is_some()) => {
                Err(Diagnostic::new(
                    format!(
                        "`{}` of a vector gives a vector where a scalar is needed",
                        func.name
                    ),
                    span.clone(),
                ))
            }
            Builtin::Math(m) => self.math_call(m, func, args, span, pre).map(Some),
            Builtin::Exact(_) if args.iter().any(|a| self.vec_shape(a).is_some()) => {
                Err(Diagnostic::new(
                    format!(
                        "`{}` of a vector gives a vector where a scalar is needed",
                        func.name
                    ),
                    span.clone(),
                ))
            }
            Builtin::Exact(f) => {
                if args.len() != f.arity() {
                    return Err(Diagnostic::new(
                        format!("`{}` takes {} arguments", func.name, f.arity()),
                        span.clone(),
                    ));
                }
                let mut lowered = Vec::new();
                for a in args {
                    let v = self.expr(a, pre)?;
                    // Arguments are used more than once by some expansions: evaluate each
                    // once into a temporary unless it is a name or a literal.
                    let v = if matches!(
                        v.kind,
                        k::ExprKind::Name(_)
                            | k::ExprKind::Int { .. }
                            | k::ExprKind::Float(_)
                            | k::ExprKind::Bool(_)
                    ) {
                        v
                    } else {
                        let Some(t) = self.type_of(&v) else {
                            return unsupported(
                                format!("this argument of `{}`", func.name),
                                &a.span,
                            );
                        };
                        let tmp = self.temp("arg", t, Some(v), &a.span, pre);
                        name_expr(&tmp, &a.span)
                    };
                    lowered.push(v);
                }
                let types: Vec<TypeName> = lowered
                    .iter()
                    .map(|v| self.type_of(v).unwrap_or(TypeName::Int))
                    .collect();
                // OpenCL's `gentype`: the arguments' one type (mixed types compute in
                // their common type).
                let gen = types
                    .iter()
                    .copied()
                    .reduce(common)
                    .unwrap_or(TypeName::Int);
                let t = match f {
                    builtins::Exact::Select => common(types[0], types[1]),
                    _ => promote(gen),
                };
                builtins::expand(f, lowered, gen, t, span)
                    .map(Some)
                    .map_err(|m| Diagnostic::new(format!("not supported yet: {m}"), span.clone()))
            }
        }
    }

    /// Inlines a helper function: by-value parameters become fresh variables, pointer
    /// parameters name the caller's array; the body runs in a block of its own.
    fn inline(
        &mut self,
        f: &'u cl::Function,
        args: &[cl::Expr],
        span: &Span,
        pre: &mut Vec<k::Stmt>,
    ) -> Res<Option<k::Expr>> {
        if !f.ret.pointers.is_empty() {
            // Its result is a pointer value, which `pointer_value` reads.
            self.inline_pointer(f, args, span, pre)?;
            return Ok(None);
        }
        if self.is_struct_call(&cl::Expr {
            kind: cl::ExprKind::Call {
                func: f.name.clone(),
                args: args.to_vec(),
            },
            span: span.clone(),
        }) {
            // Its result is a struct, which only a struct assignment reads.
            self.inline_struct(f, args, span, pre)?;
            return Ok(None);
        }
        let result = if f.ret.base == cl::Base::Void {
            None
        } else {
            let ty = self.scalar(&f.ret)?;
            let r = self.temp(&format!("{}_result", f.name.name), ty, None, span, pre);
            Some((r, ty))
        };
        self.inline_with(f, args, span, pre, result.clone(), None)?;
        Ok(result.map(|(r, _)| name_expr(&r, span)))
    }

    /// Inlines `f` with its result going to `result` (a scalar) or `vresult` (a vector's
    /// components), both declared by the caller.
    fn inline_with(
        &mut self,
        f: &'u cl::Function,
        args: &[cl::Expr],
        span: &Span,
        pre: &mut Vec<k::Stmt>,
        result: Option<(String, TypeName)>,
        vresult: Option<(Vec<String>, TypeName)>,
    ) -> Res<()> {
        if self.frames.iter().any(|fr| fr.name == f.name.name) {
            let chain: Vec<_> = self.frames.iter().map(|fr| fr.name.as_str()).collect();
            return Err(Diagnostic::new(
                format!(
                    "recursive call of `{}` ({} -> {}): OpenCL C does not allow recursion",
                    f.name.name,
                    chain.join(" -> "),
                    f.name.name
                ),
                span.clone(),
            ));
        }
        if f.is_kernel {
            return unsupported("calling a kernel from a kernel", span);
        }
        if args.len() != f.params.len() {
            return Err(Diagnostic::new(
                format!(
                    "`{}` takes {} arguments, not {}",
                    f.name.name,
                    f.params.len(),
                    args.len()
                ),
                span.clone(),
            ));
        }
        let sresult = self.struct_result.take();
        let Some(body) = &f.body else {
            if sresult.is_some() {
                return unsupported("a helper without a body returning a struct", span);
            }
            return self.uninterpreted(f, args, span, pre, result, vresult);
        };
        let mut scope = HashMap::new();
        let mut stmts = Vec::new();
        let mut written = HashSet::new();
        for s in &body.stmts {
            assigned_names(s, &mut written);
        }
        for (p, a) in f.params.iter().zip(args) {
            let pname = p.name.as_ref().map_or("arg", |n| n.name.as_str());
            if Self::is_image_type(&p.ty) {
                // The kernel's image itself: images are passed by handle.
                let b = match &a.kind {
                    cl::ExprKind::Name(n) => self.lookup(n).cloned(),
                    _ => None,
                };
                let Some(b @ Binding::Image(_)) = b else {
                    return Err(Diagnostic::new(
                        "an image argument must be an image parameter",
                        a.span.clone(),
                    ));
                };
                scope.insert(pname.to_string(), b);
                continue;
            }
            if let (cl::Base::Struct(tag), true, true) =
                (&p.ty.base, p.ty.pointers.len() <= 1, p.ty.arrays.is_empty())
            {
                self.struct_argument(tag, p, a, &written, &mut scope, &mut stmts, pre)?;
                continue;
            }
            if p.ty.pointers.len() > 1 && p.ty.arrays.is_empty() {
                let b = self.pointer_alias(a, &p.ty)?;
                if p.name.is_some() {
                    scope.insert(pname.to_string(), b);
                }
                continue;
            }
            if p.ty.pointers.len() == 1 && p.ty.arrays.is_empty() {
                let b = self.pointer_argument(p, a, &written, &mut stmts, pre)?;
                if p.name.is_some() {
                    scope.insert(pname.to_string(), b);
                }
                continue;
            }
            if let Some((elem, n)) = self.type_shape(&p.ty)? {
                let vals = self.vec_value(a, (elem, n), pre)?;
                let comps = self.declare_vector(pname, elem, n);
                for (c, v) in comps.iter().zip(vals) {
                    stmts.push(st(
                        k::StmtKind::Decl {
                            ty: elem,
                            name: ident(c, &a.span),
                            init: Some(v),
                        },
                        &a.span,
                    ));
                }
                if p.name.is_some() {
                    scope.insert(pname.to_string(), Binding::Vector { comps, elem });
                }
                continue;
            }
            let ty = self.scalar(&p.ty)?;
            let fence = self.static_fence(a).filter(|_| !written.contains(pname));
            let v = self.expr(a, pre)?;
            let var = self.declare_scalar(pname, ty);
            if let Some(fence) = fence {
                self.fences.insert(var.clone(), fence);
            }
            if !written.contains(pname) {
                self.note_sampler(&p.ty, &var, Some(a));
            }
            stmts.push(st(
                k::StmtKind::Decl {
                    ty,
                    name: ident(&var, &a.span),
                    init: Some(v),
                },
                &a.span,
            ));
            if p.name.is_some() {
                scope.insert(pname.to_string(), Binding::Scalar(var));
            }
        }
        let ret_flag = needs_ret_flag(body)
            .then(|| self.declare_scalar(&format!("{}_returned", f.name.name), TypeName::Bool));
        if let Some(r) = &ret_flag {
            stmts.push(st(
                k::StmtKind::Decl {
                    ty: TypeName::Bool,
                    name: ident(r, span),
                    init: Some(boolean(false, span)),
                },
                span,
            ));
        }
        // The callee sees its parameters and nothing of the caller.
        let saved_scopes = std::mem::replace(&mut self.scopes, vec![self.globals.clone(), scope]);
        let saved_targets = std::mem::take(&mut self.targets);
        self.frames.push(Frame {
            name: f.name.name.clone(),
            ret_flag,
            sresult,
            result,
            vresult,
            ensures: Vec::new(),
            contract: Vec::new(),
            spec: false,
            written: written.clone(),
        });
        let r = self
            .block(&body.stmts, &mut stmts)
            .and_then(|()| self.ensures(&mut stmts));
        self.frames.pop();
        self.scopes = saved_scopes;
        self.targets = saved_targets;
        r?;
        pre.push(block(stmts, span));
        Ok(())
    }

    /// The type the checker will give a lowered expression (C's usual conversions), where
    /// the lowering needs it for a temporary; `None` if unknown.
    fn type_of(&self, e: &k::Expr) -> Option<TypeName> {
        use k::ExprKind as E;
        Some(match &e.kind {
            E::Int {
                value,
                unsigned: true,
            } if *value > u32::MAX as u64 => TypeName::Ulong,
            E::Int { unsigned: true, .. } => TypeName::Uint,
            E::Int { value, .. } if *value > i32::MAX as u64 => TypeName::Long,
            E::Int { .. } => TypeName::Int,
            E::Float(_) => TypeName::Float,
            E::Double(_) => TypeName::Double,
            E::Bool(_) => TypeName::Bool,
            E::Identity => TypeName::Generic,
            E::Name(n) => *self.types.get(n)?,
            E::Index { array, .. } => self.arrays.get(&array.name)?.0,
            E::Unary(UnOp::Not, _) => TypeName::Bool,
            E::Unary(_, a) => promote(self.type_of(a)?),
            E::Binary(op, a, b) => match op {
                BinOp::Lt
                | BinOp::Le
                | BinOp::Gt
                | BinOp::Ge
                | BinOp::Eq
                | BinOp::Ne
                | BinOp::LogAnd
                | BinOp::LogOr => TypeName::Bool,
                BinOp::Shl | BinOp::Shr => promote(self.type_of(a)?),
                _ => promote(common(self.type_of(a)?, self.type_of(b)?)),
            },
            E::Cond(_, a, b) => common(self.type_of(a)?, self.type_of(b)?),
            E::Cast(t, _) => *t,
            E::Call { func, args } => match func.name.as_str() {
                "min" | "max" => promote(common(self.type_of(&args[0])?, self.type_of(&args[1])?)),
                f if crate::core::MathFn::from_name(f).is_some() => TypeName::Float,
                f => f
                    .strip_prefix("as_")
                    .and_then(bitcast::scalar_type)
                    .unwrap_or(TypeName::Int),
            },
        })
    }
}

/// Whether a lowered expression mentions a name (not a constant).
fn mentions_names(e: &k::Expr) -> bool {
    use k::ExprKind as E;
    match &e.kind {
        E::Name(_) | E::Index { .. } | E::Call { .. } => true,
        E::Unary(_, a) | E::Cast(_, a) => mentions_names(a),
        E::Binary(_, a, b) => mentions_names(a) || mentions_names(b),
        E::Cond(a, b, c) => mentions_names(a) || mentions_names(b) || mentions_names(c),
        E::Int { .. } | E::Float(_) | E::Double(_) | E::Bool(_) | E::Identity => false,
    }
}
