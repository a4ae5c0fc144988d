//! Code generation: a bound [`Launch`] → OpenCL C 1.2.
//!
//! The generated program is meant to be read: it keeps the kernel's names (renamed only
//! where they would clash with OpenCL C), one statement per line, indented blocks, and a
//! header comment that says how every ksim construct was translated. The translation:
//!
//! - **Parameters** (`-D`) become typed constants at the top of the kernel
//!   (`const int n = 1024;`); array sizes are the evaluated numbers.
//! - **Builtins**: `tid` → `get_local_id(0)`, `gid` → `get_global_id(0)`, `group_id` →
//!   `get_group_id(0)`, `local_size` → `get_local_size(0)`, `num_groups` →
//!   `get_num_groups(0)`, each bound once to an `int` constant of the same name; in a
//!   launch of 2 or 3 dimensions the flat ones are linearised, dimension 0 fastest
//!   (`tid` → `get_local_id(0) + get_local_size(0) * get_local_id(1)`). `get_local_id(d)`
//!   and the other per-dimension queries keep their OpenCL name, bound to `local_id_d`...
//! - **Global arrays** are `__global` buffer arguments. **Local arrays** are declared in
//!   the kernel (`__local T out[N]`), as OpenCL requires. Since ksim lets the host give a
//!   local array initial contents (`--input in=...`) and reports its final contents, a
//!   local array that has non-default initial contents, or whose final contents are
//!   wanted, also gets a `__global` *backing buffer* argument `NAME_g` holding one copy
//!   per work-group: at kernel start every thread copies a strided part of its group's
//!   copy into the `__local` array, then `barrier`; at the end, `barrier`, then the
//!   strided copy back. A local array that starts with default contents is filled with
//!   the default instead of being copied in.
//! - **2D arrays** are linearised row-major: `A[i][j]` → `A[i * W + j]`.
//! - `barrier()` → `barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)`, `barrier(local)`
//!   → `barrier(CLK_LOCAL_MEM_FENCE)`, `barrier(global)` → `barrier(CLK_GLOBAL_MEM_FENCE)`.
//! - **Atomics**: `old = atomic_add(A[i], v)` → `old = atomic_add(&A[i], v);` (OpenCL 1.1
//!   32-bit atomics on a pointer to the element; the element's buffer is `volatile`).
//! - **Integers** wrap as in ksim: signed `+ - *`, unary `-` and `<<` are computed on
//!   `uint` and cast back (`(int)((uint)a + (uint)b)`), so the emitted code has no
//!   signed-overflow undefined behaviour. Signed `/` and `%` go through `ks_div`/`ks_rem`
//!   unless the divisor is a literal other than 0 and -1 (they give `INT_MIN / -1 ==
//!   INT_MIN` as ksim does). Division by zero is a fault in the simulator; on the device
//!   it is undefined, and the helpers return 0 (rather than trap: PoCL on x86 would kill
//!   the host process with SIGFPE). Shift counts outside 0 to 31 are a fault in the
//!   simulator; OpenCL C takes the count modulo 32. Out-of-bounds accesses are a fault
//!   in the simulator and undefined behaviour on the device.
//! - **Floats**: `#pragma OPENCL FP_CONTRACT OFF` (no fused multiply-add), so `+ - *` are
//!   correctly rounded as in the simulator; `/` may differ by the device's ULP allowance
//!   (see [`crate::compare`]). Float → int/uint casts saturate and send NaN to 0
//!   (`convert_int_sat`), as Rust's `as` does. Math functions (`sqrt`, `exp`, `pow`, ...)
//!   are OpenCL C's own, within the device's ULP bounds of the simulator's values.
//! - **`&&`, `||`, `?:`** keep their C short-circuit semantics, as in ksim.
//! - **The generic type `T`** is a `typedef` chosen by the monoid and `⊕` is the helper
//!   `combine(a, b)`: `int` for the int monoids, `float` for `float-add`, `uchar` for
//!   Voigtländer's operators, and for the interval monoid a `ulong` encoding `[i,j]` as
//!   `(i << 32) | j` with reserved encodings `IV_ID` for 1 and `IV_TOP` for ⊤ (both have
//!   i > j, so neither is an interval) and the helper `iv_combine`, as in the POPL 2014
//!   artifact. The list monoid has no fixed-size encoding and is refused.

use crate::repr::{Bytes, Repr, IV_ID, IV_TOP};
use interp::{Launch, Monoid, Value};
use lang::ast::{BinOp, Space, UnOp};
use lang::core::{ArrayId, Builtin, DimQuery, Expr, ExprKind, Fence, Kernel, Lit, StmtKind, Ty};
use std::collections::{BTreeSet, HashSet};
use std::fmt::{self, Write};

/// Why a launch cannot be translated to OpenCL C.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EmitError {
    /// The monoid has no fixed-size device encoding (the list monoid).
    UnsupportedMonoid(Monoid),
    /// The kernel has pointer values (`ptr` variables or elements, `&A[i]`, `*p`), which
    /// the generated OpenCL does not express yet.
    PointerValues,
}

impl fmt::Display for EmitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EmitError::UnsupportedMonoid(m) => write!(
                f,
                "the {m} monoid cannot run on an OpenCL device: its elements have no \
                 fixed-size encoding (use int-add, int-max, int-min, int-mul, bit-or, \
                 float-add, interval, voigt1 or voigt2)"
            ),
            EmitError::PointerValues => write!(
                f,
                "this kernel has pointer values (a pointer stored in a variable or an array, \
                 `&A[i]`, `*p`), which ksim cannot generate OpenCL for yet: run it with \
                 `ksim run` or `ksim races` instead"
            ),
        }
    }
}

impl std::error::Error for EmitError {}

/// Choices the runtime makes about the emitted program.
#[derive(Clone, Debug)]
pub struct EmitOptions {
    /// Copy non-const `local` arrays back to their backing buffers at the end, so that
    /// their final contents can be read (true for `compare`; a pipeline stage's local
    /// arrays are scratch and are not read back).
    pub local_copy_out: bool,
    /// Local arrays left out of the copy-out even with `local_copy_out` (a benchmark's
    /// timed kernel copies out only the arrays that hold its result).
    pub no_copy_out: Vec<ArrayId>,
    /// Local arrays with default initial contents that are *not* filled with the default
    /// at kernel start: a benchmark's timed kernel leaves the fill out where the
    /// simulator showed that the results do not depend on it (see [`crate::bench`]).
    pub no_fill: Vec<ArrayId>,
}

impl Default for EmitOptions {
    fn default() -> Self {
        EmitOptions {
            local_copy_out: true,
            no_copy_out: Vec::new(),
            no_fill: Vec::new(),
        }
    }
}

/// The emitted program and how to call it.
#[derive(Clone, Debug)]
pub struct Emitted {
    /// OpenCL C 1.2 source.
    pub source: String,
    /// The `__kernel` function's name.
    pub kernel_name: String,
    /// The kernel's arguments, in order.
    pub args: Vec<KernelArg>,
    /// Per kernel array: how it travels between host and device.
    pub plans: Vec<ArrayPlan>,
    /// Bytes of `__local` memory the kernel declares.
    pub local_bytes: usize,
}

/// One `__global` buffer argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelArg {
    pub array: ArrayId,
    /// For a `global` array, the array itself (one instance); for a `local` array, its
    /// backing buffer (one instance per work-group, concatenated).
    pub space: Space,
}

/// How one kernel array travels between host and device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArrayPlan {
    /// Index into [`Emitted::args`], if the array has a buffer argument.
    pub arg: Option<usize>,
    /// The host writes the initial contents into the buffer.
    pub write: bool,
    /// The host reads the final contents back (otherwise they equal the initial contents,
    /// for const arrays, or are not observable).
    pub read: bool,
    pub repr: Repr,
}

/// The OpenCL C program for a launch (see the module documentation for the translation).
pub fn emit(launch: &Launch) -> Result<String, EmitError> {
    emit_with(launch, &EmitOptions::default()).map(|e| e.source)
}

/// [`emit`] with options, also returning the argument layout the runtime needs.
pub fn emit_with(launch: &Launch, opts: &EmitOptions) -> Result<Emitted, EmitError> {
    Emitter::new(launch, opts)?.run()
}

/// OpenCL C keywords, types and the builtins the generated code uses. A kernel name that is
/// [`reserved`] gets the prefix [`RENAME_PREFIX`] (see [`Names::fresh`]).
const RESERVED: &[&str] = &[
    "auto",
    "break",
    "case",
    "char",
    "const",
    "continue",
    "default",
    "do",
    "double",
    "else",
    "enum",
    "extern",
    "float",
    "for",
    "goto",
    "if",
    "inline",
    "int",
    "long",
    "register",
    "restrict",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "struct",
    "switch",
    "typedef",
    "union",
    "unsigned",
    "void",
    "volatile",
    "while",
    "bool",
    "uchar",
    "ushort",
    "uint",
    "ulong",
    "half",
    "size_t",
    "ptrdiff_t",
    "intptr_t",
    "uintptr_t",
    "kernel",
    "global",
    "local",
    "constant",
    "private",
    "read_only",
    "write_only",
    "read_write",
    "image1d_t",
    "image2d_t",
    "image3d_t",
    "sampler_t",
    "event_t",
    "true",
    "false",
    "min",
    "max",
    "clz",
    "barrier",
    "combine",
    "iv_combine",
    "voigt1",
    "voigt2",
    "T",
    "NAN",
    "INFINITY",
    "INT_MIN",
    "INT_MAX",
    "IV_ID",
    "IV_TOP",
    "main",
    "as_float",
    "asm",
    "complex",
    "imaginary",
    "vec_step",
    "typeof",
    "_Bool",
    "_Complex",
    "_Imaginary",
];

/// The prefix given to a kernel's name that is [`reserved`]: no reserved word or prefix
/// starts with it, so a renamed name is never reserved, whatever it was (`get_x` becomes
/// `k_get_x`, `__x` becomes `k___x`, `int` becomes `k_int`).
const RENAME_PREFIX: &str = "k_";

/// Whether a name is taken in OpenCL C or by the generated code: a keyword, type or builtin
/// function, a name of the reserved prefixes (`ks_` is the generated code's own namespace;
/// `get_`, `convert_`, `as_`, `CLK_`, `cl_` are OpenCL's; `__` and `_X` are C's), or a
/// vector type.
fn reserved(name: &str) -> bool {
    let mut chars = name.chars();
    let underscore_upper =
        chars.next() == Some('_') && chars.next().is_some_and(|c| c.is_ascii_uppercase());
    if RESERVED.contains(&name)
        || underscore_upper
        || name.starts_with("ks_")
        || name.starts_with("get_")
        || name.starts_with("convert_")
        || name.starts_with("as_")
        || name.starts_with("__")
        || name.starts_with("CLK_")
        || name.starts_with("cl_")
    {
        return true;
    }
    // Vector types: int2, float4, uchar16...
    let base = name.trim_end_matches(|c: char| c.is_ascii_digit());
    base.len() < name.len()
        && [
            "char", "uchar", "short", "ushort", "int", "uint", "long", "ulong", "float", "double",
            "half", "bool",
        ]
        .contains(&base)
        && ["2", "3", "4", "8", "16"].contains(&&name[base.len()..])
}

/// Hands out unique C identifiers, keeping the kernel's names where possible.
struct Names {
    used: HashSet<String>,
}

impl Names {
    /// A C identifier for `want`, unique among those handed out: `want` itself where it is
    /// a free C name; otherwise its characters made C-safe, [`RENAME_PREFIX`] in front of a
    /// [`reserved`] name, and `_1`, `_2`, ... after a name already used. A suffix keeps a
    /// name unreserved (no reserved word ends in `_` and a digit, and prefixes are
    /// unchanged), so the search ends after at most `used.len()` tries.
    fn fresh(&mut self, want: &str) -> String {
        let mut base: String = want
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        if base.is_empty() || base.starts_with(|c: char| c.is_ascii_digit()) {
            base.insert(0, '_');
        }
        if reserved(&base) {
            base.insert_str(0, RENAME_PREFIX);
        }
        debug_assert!(!reserved(&base), "{base}");
        let mut name = base.clone();
        let mut k = 1;
        while self.used.contains(&name) {
            name = format!("{base}_{k}");
            k += 1;
        }
        debug_assert!(!reserved(&name), "{name}");
        self.used.insert(name.clone());
        name
    }
}

struct Emitter<'a> {
    launch: &'a Launch,
    k: &'a Kernel,
    opts: &'a EmitOptions,
    /// The C type of `T` (empty when `T` is unused and the monoid is the list monoid).
    generic: Option<Repr>,
    params: Vec<String>,
    arrays: Vec<String>,
    backing: Vec<Option<String>>,
    vars: Vec<String>,
    builtins: Vec<(Builtin, String)>,
    helpers: BTreeSet<Helper>,
    /// Long `else if` chains emitted so far (each gets its own `ks_doneN` flag).
    chains: usize,
    out: String,
}

/// The longest `else if` chain emitted as `else if`. Device compilers parse an `else if`
/// as an `if` nested in the `else` branch, recursively (clang, in PoCL and in GPU drivers,
/// overflows the host's stack at some thousands of arms), so a longer chain is emitted as
/// a flat sequence of `if`s guarded by a flag: `if (!ks_done1 && (c)) { ks_done1 = true;
/// ... }`, which evaluates the same conditions in the same order.
const MAX_ELSE_IF: usize = 256;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Helper {
    Div,
    Udiv,
    Log2,
    Log2u,
    Fminmax,
    Dminmax,
}

/// C precedence levels used to parenthesise: higher binds tighter.
const P_ATOM: u8 = 20;
const P_UNARY: u8 = 14;
const P_COND: u8 = 0;

fn bin_prec(op: BinOp) -> u8 {
    op.precedence()
}

fn paren(s: String, p: u8, need: u8) -> String {
    if p < need {
        format!("({s})")
    } else {
        s
    }
}

impl<'a> Emitter<'a> {
    fn new(launch: &'a Launch, opts: &'a EmitOptions) -> Result<Self, EmitError> {
        let k: &Kernel = &launch.kernel;
        let generic = Repr::of(Ty::Generic, launch.monoid);
        let uses_generic = k.generic
            || k.arrays.iter().any(|a| a.elem == Ty::Generic)
            || k.vars.iter().any(|v| v.ty == Ty::Generic);
        if uses_generic && generic.is_none() {
            return Err(EmitError::UnsupportedMonoid(launch.monoid));
        }
        if uses_pointers(k) {
            return Err(EmitError::PointerValues);
        }
        let mut names = Names {
            used: HashSet::new(),
        };
        // Builtins first, so that they keep their ksim spelling.
        let mut used_builtins = BTreeSet::new();
        let mut note = |e: &Expr| {
            visit(e, &mut |e| {
                if let ExprKind::Builtin(b) = e.kind {
                    used_builtins.insert(builtin_order(b));
                }
            })
        };
        for block in &k.blocks {
            for s in block {
                match &s.kind {
                    StmtKind::Assign { value, .. } => note(value),
                    StmtKind::Store { index, value, .. } => {
                        index.iter().for_each(&mut note);
                        note(value)
                    }
                    StmtKind::If { cond, .. } | StmtKind::While { cond, .. } => note(cond),
                    StmtKind::Atomic { index, args, .. } => {
                        index.iter().for_each(&mut note);
                        args.iter().for_each(&mut note)
                    }
                    // Annotations are not emitted (see `block`); pointer values are refused.
                    StmtKind::Barrier { .. }
                    | StmtKind::Check { .. }
                    | StmtKind::Perm { .. }
                    | StmtKind::StoreAt { .. } => {}
                }
            }
        }
        let builtins = used_builtins
            .into_iter()
            .map(|o| (builtin_at(o), names.fresh(&builtin_name(builtin_at(o)))))
            .collect();
        let params = k.params.iter().map(|p| names.fresh(&p.name)).collect();
        let arrays: Vec<String> = k.arrays.iter().map(|a| names.fresh(&a.name)).collect();
        let backing = k
            .arrays
            .iter()
            .zip(&arrays)
            .map(|(a, n)| (a.space == Space::Local).then(|| names.fresh(&format!("{n}_g"))))
            .collect();
        let vars = k.vars.iter().map(|v| names.fresh(&v.name)).collect();
        Ok(Emitter {
            launch,
            k,
            opts,
            generic,
            params,
            arrays,
            backing,
            vars,
            builtins,
            helpers: BTreeSet::new(),
            chains: 0,
            out: String::new(),
        })
    }

    fn repr(&self, ty: Ty) -> Repr {
        Repr::of(ty, self.launch.monoid)
            .or(self.generic)
            .unwrap_or(Repr::I32)
    }

    /// The C type of a private variable or expression of type `ty`.
    fn c_ty(&self, ty: Ty) -> &'static str {
        ty.name()
    }

    /// The C type of an array element in memory.
    fn mem_ty(&self, ty: Ty) -> &'static str {
        match ty {
            Ty::Generic => "T",
            _ => self.repr(ty).c_type(),
        }
    }

    fn run(mut self) -> Result<Emitted, EmitError> {
        let k = self.k;
        let launch = self.launch;
        // Plans and arguments.
        let mut args = Vec::new();
        let mut plans = Vec::new();
        let mut local_bytes = 0;
        for (a, decl) in k.arrays.iter().enumerate() {
            let repr = self.repr(decl.elem);
            let default = Value::default_of(decl.elem, launch.monoid);
            match decl.space {
                Space::Global => {
                    args.push(KernelArg {
                        array: a,
                        space: Space::Global,
                    });
                    plans.push(ArrayPlan {
                        arg: Some(args.len() - 1),
                        write: true,
                        read: !decl.is_const,
                        repr,
                    });
                }
                Space::Local => {
                    local_bytes += launch.len(a) * repr.size();
                    let write = launch.initial[a].iter().any(|v| *v != default);
                    let read = !decl.is_const
                        && self.opts.local_copy_out
                        && !self.opts.no_copy_out.contains(&a);
                    let arg = (write || read).then(|| {
                        args.push(KernelArg {
                            array: a,
                            space: Space::Local,
                        });
                        args.len() - 1
                    });
                    plans.push(ArrayPlan {
                        arg,
                        write,
                        read,
                        repr,
                    });
                }
            }
        }

        // The body first (it decides which helpers are needed).
        let mut body = String::new();
        self.block(Kernel::BODY, 1, &mut body);

        let mut o = String::new();
        self.header(&mut o);
        let kname = {
            let mut names = Names {
                used: self
                    .arrays
                    .iter()
                    .chain(&self.params)
                    .chain(&self.vars)
                    .cloned()
                    .collect(),
            };
            names.fresh(&k.name)
        };
        let [lx, ly, lz] = launch.local_dims;
        let _ = writeln!(
            o,
            "__kernel __attribute__((reqd_work_group_size({lx}, {ly}, {lz})))"
        );
        let _ = writeln!(o, "void {kname}(");
        for (i, arg) in args.iter().enumerate() {
            let decl = &k.arrays[arg.array];
            let ty = self.mem_ty(decl.elem);
            let sep = if i + 1 < args.len() { "," } else { "" };
            match arg.space {
                Space::Global => {
                    let c = if decl.is_const { "const " } else { "" };
                    let _ = writeln!(
                        o,
                        "    __global {c}{ty} *restrict {}{sep}  // {}",
                        self.arrays[arg.array],
                        shape_comment(&decl.name, &launch.dims[arg.array], "global")
                    );
                }
                Space::Local => {
                    let _ = writeln!(
                        o,
                        "    __global {ty} *restrict {}{sep}  // backing for local {}, {} copies",
                        self.backing[arg.array].as_ref().unwrap(),
                        decl.name,
                        launch.groups
                    );
                }
            }
        }
        if args.is_empty() {
            o.push_str("    void\n");
        }
        o.push_str(")\n{\n");
        // Parameters.
        for (p, decl) in k.params.iter().enumerate() {
            let v = &launch.params[p];
            let _ = writeln!(
                o,
                "    const {} {} = {};",
                self.c_ty(decl.ty),
                self.params[p],
                self.value(v, decl.ty)
            );
        }
        let flat = Flat::of(launch.work_dim);
        for (b, name) in &self.builtins {
            let f: String = match b {
                Builtin::LocalId => flat.local_id.clone(),
                Builtin::GlobalId if launch.work_dim == 1 => "get_global_id(0)".into(),
                Builtin::GlobalId => format!(
                    "({} * {} + {})",
                    flat.group_id, flat.local_size, flat.local_id
                ),
                Builtin::GroupId => flat.group_id.clone(),
                Builtin::LocalSize => flat.local_size.clone(),
                Builtin::NumGroups => flat.num_groups.clone(),
                Builtin::WorkDim => "get_work_dim()".into(),
                Builtin::Dim(q, d) => format!("{}({d})", q.name()),
            };
            let _ = writeln!(o, "    const int {name} = (int){f};");
        }
        // Local arrays and their copy-in.
        let locals: Vec<ArrayId> = (0..k.arrays.len())
            .filter(|&a| k.arrays[a].space == Space::Local)
            .collect();
        for &a in &locals {
            let decl = &k.arrays[a];
            let unfilled = !plans[a].write && self.opts.no_fill.contains(&a);
            let _ = writeln!(
                o,
                "    __local {} {}[{}];  // {}{}",
                self.mem_ty(decl.elem),
                self.arrays[a],
                launch.len(a).max(1),
                shape_comment(&decl.name, &launch.dims[a], "local"),
                if unfilled {
                    " (not filled: the results do not depend on its initial contents)"
                } else {
                    ""
                }
            );
        }
        // Thread-private variables.
        for (v, decl) in k.vars.iter().enumerate() {
            let init = Value::default_of(decl.ty, launch.monoid);
            let _ = writeln!(
                o,
                "    {} {} = {};",
                self.c_ty(decl.ty),
                self.vars[v],
                self.value(&init, decl.ty)
            );
        }
        let filled: Vec<ArrayId> = locals
            .iter()
            .copied()
            .filter(|&a| plans[a].write || !self.opts.no_fill.contains(&a))
            .collect();
        if !filled.is_empty() {
            o.push_str(
                "\n    // Copy in: every thread copies a strided part of its group's copy.\n",
            );
            for &a in &filled {
                let n = launch.len(a);
                let name = &self.arrays[a];
                let src = if plans[a].write {
                    format!(
                        "{}[{} * {n} + ks_i]",
                        self.backing[a].as_ref().unwrap(),
                        flat.group_id
                    )
                } else {
                    self.value(
                        &Value::default_of(k.arrays[a].elem, launch.monoid),
                        k.arrays[a].elem,
                    )
                };
                let _ = writeln!(
                    o,
                    "    for (int ks_i = (int){}; ks_i < {n}; ks_i += (int){}) {{\n        {name}[ks_i] = {src};\n    }}",
                    flat.local_id, flat.local_size
                );
            }
            o.push_str("    barrier(CLK_LOCAL_MEM_FENCE);\n\n");
        }
        o.push_str(&body);
        let outs: Vec<ArrayId> = locals.iter().copied().filter(|&a| plans[a].read).collect();
        if !outs.is_empty() {
            o.push_str(
                "\n    // Copy out: every thread copies a strided part back to its group's copy.\n",
            );
            o.push_str("    barrier(CLK_LOCAL_MEM_FENCE);\n");
            for &a in &outs {
                let n = launch.len(a);
                let _ = writeln!(
                    o,
                    "    for (int ks_i = (int){}; ks_i < {n}; ks_i += (int){}) {{\n        {}[{} * {n} + ks_i] = {}[ks_i];\n    }}",
                    flat.local_id,
                    flat.local_size,
                    self.backing[a].as_ref().unwrap(),
                    flat.group_id,
                    self.arrays[a]
                );
            }
        }
        o.push_str("}\n");
        self.out = o;
        Ok(Emitted {
            source: self.out,
            kernel_name: kname,
            args,
            plans,
            local_bytes,
        })
    }

    fn header(&self, o: &mut String) {
        let k = self.k;
        let l = self.launch;
        let _ = writeln!(
            o,
            "// OpenCL C 1.2 generated by ksim from kernel `{}`: {} work-group(s) of {} work-items, monoid {}.",
            k.name, l.groups, l.local_size, l.monoid
        );
        o.push_str(
            "//\n\
             // Translation notes:\n\
             // - Parameters are constants; tid/gid/group_id/local_size/num_groups are\n\
             //   get_local_id(0)/get_global_id(0)/get_group_id(0)/get_local_size(0)/get_num_groups(0)\n\
             //   (linearised over the dimensions of a 2D/3D launch, dimension 0 fastest).\n\
             // - barrier() orders both memory spaces; barrier(local)/barrier(global) one fence.\n\
             //   Atomics are OpenCL's atomic_* on a pointer to the element.\n\
             // - Local arrays live in __local memory. ksim lets the host give them initial contents\n\
             //   and reads their final contents, so such an array has a __global backing buffer\n\
             //   NAME_g with one copy per work-group: each thread copies a strided part in at\n\
             //   kernel start (then barrier) and back out at the end (barrier first). A local\n\
             //   array whose initial contents are the default is filled with it instead.\n\
             // - 2D arrays are stored row-major: A[i][j] is A[i * width + j].\n\
             // - int + - * << and unary - are computed on uint and cast back, so they wrap as in\n\
             //   ksim; signed / and % use ks_div/ks_rem (INT_MIN / -1 wraps). Division by zero\n\
             //   and out-of-bounds accesses are faults in the simulator but undefined on the\n\
             //   device (here x / 0 gives 0, to avoid a hardware trap); OpenCL takes shift\n\
             //   counts modulo 32 where the simulator reports a fault.\n\
             // - No floating-point contraction; float -> int casts saturate (NaN -> 0).\n",
        );
        o.push('\n');
        o.push_str("#pragma OPENCL FP_CONTRACT OFF\n\n");
        if uses_double(self.k) {
            o.push_str("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n\n");
        }
        let long_atomics = self.k.blocks.iter().flatten().any(|s| match s.kind {
            StmtKind::Atomic { array, .. } => {
                matches!(self.k.arrays[array].elem, Ty::Long | Ty::Ulong)
            }
            _ => false,
        });
        if long_atomics {
            o.push_str(
                "#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable\n\
                 #pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable\n\n",
            );
        }
        if let Some(r) = self.generic {
            self.monoid_prelude(o, r);
        }
        for h in &self.helpers {
            o.push_str(match h {
                Helper::Div => {
                    "// Signed division as in ksim: wraps for INT_MIN / -1; x / 0 is undefined (0 here).\n\
                     static inline int ks_div(int a, int b) { return b == 0 ? 0 : b == -1 ? (int)(0u - (uint)a) : a / b; }\n\
                     static inline int ks_rem(int a, int b) { return (b == 0 || b == -1) ? 0 : a % b; }\n\n"
                }
                Helper::Udiv => {
                    "// Unsigned division; x / 0 is undefined (0 here).\n\
                     static inline uint ks_udiv(uint a, uint b) { return b == 0u ? 0u : a / b; }\n\
                     static inline uint ks_urem(uint a, uint b) { return b == 0u ? 0u : a % b; }\n\n"
                }
                Helper::Log2 => {
                    "// ksim's log2: floor of the base-2 logarithm, 0 for x <= 0.\n\
                     static inline int ks_log2(int x) { return x <= 0 ? 0 : 31 - (int)clz(x); }\n\n"
                }
                Helper::Log2u => {
                    "// ksim's log2 on uint: floor of the base-2 logarithm, 0 for x == 0.\n\
                     static inline int ks_log2u(uint x) { return x == 0u ? 0 : 31 - (int)clz(x); }\n\n"
                }
                Helper::Fminmax => {
                    "// ksim's min/max on float: min(a, b) = a < b ? a : b, max(a, b) = a < b ? b : a.\n\
                     static inline float ks_fmin(float a, float b) { return a < b ? a : b; }\n\
                     static inline float ks_fmax(float a, float b) { return a < b ? b : a; }\n\n"
                }
                Helper::Dminmax => {
                    "// ksim's min/max on double, as on float.\n\
                     static inline double ks_dmin(double a, double b) { return a < b ? a : b; }\n\
                     static inline double ks_dmax(double a, double b) { return a < b ? b : a; }\n\n"
                }
            });
        }
    }

    fn monoid_prelude(&self, o: &mut String, r: Repr) {
        let m = self.launch.monoid;
        let _ = writeln!(
            o,
            "// The generic type T and its operator <+> for the {m} monoid."
        );
        match m {
            Monoid::Interval => {
                let _ = write!(
                    o,
                    "// Interval of summations (POPL 2014, Definition 4.3): [i,j] is (i << 32) | j;\n\
                     // the identity 1 and the absorbing top are reserved encodings with i > j.\n\
                     typedef ulong T;\n\
                     #define IV_ID ((ulong)0x{IV_ID:016X}UL)\n\
                     #define IV_TOP ((ulong)0x{IV_TOP:016X}UL)\n\
                     static inline T iv_combine(T a, T b)\n\
                     {{\n\
                     \x20   if (a == IV_ID) return b;\n\
                     \x20   if (b == IV_ID) return a;\n\
                     \x20   if (a == IV_TOP || b == IV_TOP) return IV_TOP;\n\
                     \x20   /* [i1,i2] <+> [i3,i4] = [i1,i4] if i2 + 1 == i3, else top */\n\
                     \x20   if ((ulong)(uint)a + 1UL == (b >> 32)) return (a & 0xFFFFFFFF00000000UL) | (b & 0xFFFFFFFFUL);\n\
                     \x20   return IV_TOP;\n\
                     }}\n\
                     static inline T combine(T a, T b) {{ return iv_combine(a, b); }}\n\n"
                );
            }
            _ => {
                let _ = writeln!(o, "typedef {} T;", r.c_type());
                let body = match m {
                    Monoid::IntAdd => "return (int)((uint)a + (uint)b);",
                    Monoid::IntMax => "return max(a, b);",
                    Monoid::IntMin => "return min(a, b);",
                    Monoid::IntMul => "return (int)((uint)a * (uint)b);",
                    Monoid::BitOr => "return a | b;",
                    Monoid::FloatAdd => "return a + b;",
                    Monoid::Voigt1 => {
                        "return b == 0 ? a : (a == 0 && b == 1) ? (uchar)1 : (uchar)2;"
                    }
                    Monoid::Voigt2 => "return b == 0 ? a : b;",
                    Monoid::Interval | Monoid::List => unreachable!(),
                };
                let _ = writeln!(o, "static inline T combine(T a, T b) {{ {body} }}\n");
            }
        }
    }

    /// A C literal for `v` of type `ty`.
    fn value(&self, v: &Value, ty: Ty) -> String {
        match v {
            Value::Int(x) => int_lit(*x),
            Value::Uint(x) => format!("{x}u"),
            Value::Bool(b) => b.to_string(),
            Value::Float(bits) => float_lit(*bits),
            Value::Interval(iv) => match iv {
                interp::Interval::Id => "IV_ID".into(),
                interp::Interval::Top => "IV_TOP".into(),
                iv => format!("0x{:016X}UL", crate::repr::encode_interval(*iv)),
            },
            Value::Ternary(t) => format!("(uchar){t}"),
            Value::Ptr(..) => unreachable!("pointer values are refused (new)"),
            Value::List(_) => {
                let _ = ty;
                "0".into()
            }
            Value::Char(x) => format!("(char)({x})"),
            Value::Uchar(x) => format!("(uchar){x}"),
            Value::Short(x) => format!("(short)({x})"),
            Value::Ushort(x) => format!("(ushort){x}"),
            Value::Long(x) => long_lit(*x),
            Value::Ulong(x) => format!("{x}UL"),
            Value::Double(bits) => double_lit(f64::from_bits(*bits)),
        }
    }

    fn block(&mut self, b: usize, depth: usize, out: &mut String) {
        let ind = "    ".repeat(depth);
        for s in &self.k.blocks[b] {
            match &s.kind {
                StmtKind::Assign { var, value } => {
                    let v = self.expr_top(value);
                    let _ = writeln!(out, "{ind}{} = {v};", self.vars[*var]);
                }
                StmtKind::StoreAt { .. } => unreachable!("pointer values are refused (new)"),
                StmtKind::Store {
                    array,
                    index,
                    value,
                } => {
                    let lhs = self.element(*array, index);
                    let v = self.expr_top(value);
                    let _ = writeln!(out, "{ind}{lhs} = {v};");
                }
                StmtKind::If { cond, then, els } => {
                    // The arms of an `else if` chain, collected in a loop: a chain of any
                    // length costs no stack here.
                    let mut arms = vec![(cond, *then)];
                    let mut els = *els;
                    while let Some(StmtKind::If {
                        cond,
                        then,
                        els: next,
                    }) = self.k.else_if(els).map(|s| &s.kind)
                    {
                        arms.push((cond, *then));
                        els = *next;
                    }
                    let has_else = !self.k.blocks[els].is_empty();
                    if arms.len() <= MAX_ELSE_IF {
                        for (k, (cond, then)) in arms.into_iter().enumerate() {
                            let c = self.expr_top(cond);
                            let kw = if k == 0 { "" } else { "} else " };
                            let _ = writeln!(out, "{ind}{kw}if ({c}) {{");
                            self.block(then, depth + 1, out);
                        }
                        if has_else {
                            let _ = writeln!(out, "{ind}}} else {{");
                            self.block(els, depth + 1, out);
                        }
                        let _ = writeln!(out, "{ind}}}");
                    } else {
                        self.chains += 1;
                        let done = format!("ks_done{}", self.chains);
                        let _ = writeln!(out, "{ind}bool {done} = false;");
                        for (k, (cond, then)) in arms.into_iter().enumerate() {
                            let c = self.expr_top(cond);
                            if k == 0 {
                                let _ = writeln!(out, "{ind}if ({c}) {{");
                            } else {
                                let _ = writeln!(out, "{ind}if (!{done} && ({c})) {{");
                            }
                            let _ = writeln!(out, "{ind}    {done} = true;");
                            self.block(then, depth + 1, out);
                            let _ = writeln!(out, "{ind}}}");
                        }
                        if has_else {
                            let _ = writeln!(out, "{ind}if (!{done}) {{");
                            self.block(els, depth + 1, out);
                            let _ = writeln!(out, "{ind}}}");
                        }
                    }
                }
                StmtKind::While { cond, body } => {
                    let c = self.expr_top(cond);
                    let _ = writeln!(out, "{ind}while ({c}) {{");
                    self.block(*body, depth + 1, out);
                    let _ = writeln!(out, "{ind}}}");
                }
                // Flags computed at run time: the user's barrier with each work-item's own
                // flags (OpenCL 1.2 wants them equal in every work-item; see
                // docs/language.md for how ksim reads a kernel where they differ).
                StmtKind::Barrier { flags: Some(v), .. } => {
                    let _ = writeln!(out, "{ind}barrier({});", self.vars[*v]);
                }
                StmtKind::Barrier { fence, .. } => {
                    let flags = match *fence {
                        Fence::LOCAL => "CLK_LOCAL_MEM_FENCE",
                        Fence::GLOBAL => "CLK_GLOBAL_MEM_FENCE",
                        _ => "CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE",
                    };
                    let _ = writeln!(out, "{ind}barrier({flags});");
                }
                // A specification annotation is ksim's check, not device code: the
                // device runs the kernel as a compiler that ignores it would.
                StmtKind::Check { annotation, .. } => {
                    let _ = writeln!(
                        out,
                        "{ind}// {}(...) is checked by ksim, not on the device",
                        annotation.name()
                    );
                }
                StmtKind::Perm { op, .. } => {
                    let _ = writeln!(
                        out,
                        "{ind}// {}(...) is checked by ksim, not on the device",
                        op.name()
                    );
                }
                StmtKind::Atomic {
                    op,
                    array,
                    index,
                    args,
                    result,
                } => {
                    let elem = self.element(*array, index);
                    // 64-bit elements take the `atom_*` names of cl_khr_int64_*_atomics.
                    let name = if matches!(self.k.arrays[*array].elem, Ty::Long | Ty::Ulong) {
                        op.name().replacen("atomic_", "atom_", 1)
                    } else {
                        op.name().to_string()
                    };
                    let mut call = format!("{name}(&{elem}");
                    for a in args {
                        let _ = write!(call, ", {}", self.expr_top(a));
                    }
                    call.push(')');
                    match result {
                        Some(v) => {
                            let _ = writeln!(out, "{ind}{} = {call};", self.vars[*v]);
                        }
                        None => {
                            let _ = writeln!(out, "{ind}{call};");
                        }
                    }
                }
            }
        }
    }

    fn element(&mut self, a: ArrayId, index: &[Expr]) -> String {
        let dims = &self.launch.dims[a];
        let idx = if index.len() == 2 && dims.len() == 2 {
            if let ExprKind::Lit(Lit::Int(r)) = index[0].kind {
                // A constant row: fold the row offset.
                let (j, pj) = self.expr(&index[1]);
                let off = r as i64 * dims[1] as i64;
                return format!(
                    "{}[{}]",
                    self.arrays[a],
                    if off == 0 {
                        j
                    } else {
                        format!("{off} + {}", paren(j, pj, bin_prec(BinOp::Add) + 1))
                    }
                );
            }
            let (i, pi) = self.expr(&index[0]);
            let (j, pj) = self.expr(&index[1]);
            let i = paren(i, pi, bin_prec(BinOp::Mul));
            let j = paren(j, pj, bin_prec(BinOp::Add) + 1);
            format!("{i} * {} + {j}", dims[1])
        } else {
            self.expr_top(&index[0])
        };
        format!("{}[{idx}]", self.arrays[a])
    }

    fn expr_top(&mut self, e: &Expr) -> String {
        self.expr(e).0
    }

    /// An expression and its precedence.
    fn expr(&mut self, e: &Expr) -> (String, u8) {
        use ExprKind as K;
        match &e.kind {
            K::Null | K::Addr { .. } | K::PtrAdd(..) | K::Deref(..) => {
                unreachable!("pointer values are refused (new)")
            }
            K::Lit(l) => match l {
                Lit::Int(v) => (int_lit(*v), P_ATOM),
                Lit::Uint(v) => (format!("{v}u"), P_ATOM),
                Lit::Bool(b) => (b.to_string(), P_ATOM),
                Lit::Float(f) => (float_lit(f.to_bits()), P_ATOM),
                Lit::Long(v) => (long_lit(*v), P_ATOM),
                Lit::Ulong(v) => (format!("{v}UL"), P_ATOM),
                Lit::Double(f) => (double_lit(*f), P_ATOM),
            },
            K::Identity => {
                let v = self.launch.monoid.identity();
                (self.value(&v, Ty::Generic), P_ATOM)
            }
            K::Var(v) => (self.vars[*v].clone(), P_ATOM),
            K::Param(p) => (self.params[*p].clone(), P_ATOM),
            K::Builtin(b) => (
                self.builtins
                    .iter()
                    .find(|(x, _)| x == b)
                    .map(|(_, n)| n.clone())
                    .unwrap_or_default(),
                P_ATOM,
            ),
            K::Load { array, index } => (self.element(*array, index), P_ATOM),
            K::Unary(op, a) => {
                if *op == UnOp::Neg && e.ty == Ty::Int {
                    return self.wrapped(e);
                }
                if *op == UnOp::Neg && e.ty == Ty::Long {
                    // Computed on `ulong` so that -LONG_MIN wraps as in ksim.
                    let (s, p) = self.expr(a);
                    return (format!("(long)(-(ulong){})", paren(s, p, P_UNARY)), P_UNARY);
                }
                let (s, p) = self.expr(a);
                let sym = match op {
                    UnOp::Neg => "-",
                    UnOp::Not => "!",
                    UnOp::BitNot => "~",
                };
                (format!("{sym}{}", paren(s, p, P_ATOM)), P_UNARY)
            }
            K::Binary(op, a, b) => {
                let ty = a.ty;
                match op {
                    BinOp::Combine => {
                        let (x, y) = (self.expr_top(a), self.expr_top(b));
                        (format!("combine({x}, {y})"), P_ATOM)
                    }
                    BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Shl if ty == Ty::Int => {
                        self.wrapped(e)
                    }
                    // `long` arithmetic wraps as in ksim: computed on `ulong`.
                    BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Shl if ty == Ty::Long => {
                        let (x, px) = self.expr(a);
                        let (y, py) = self.expr(b);
                        let y = if *op == BinOp::Shl {
                            paren(y, py, P_UNARY)
                        } else {
                            format!("(ulong){}", paren(y, py, P_UNARY))
                        };
                        (
                            format!(
                                "(long)((ulong){} {} {y})",
                                paren(x, px, P_UNARY),
                                op.symbol()
                            ),
                            P_UNARY,
                        )
                    }
                    BinOp::Div | BinOp::Rem if ty == Ty::Int || ty == Ty::Uint => {
                        let safe = matches!(b.kind, K::Lit(Lit::Int(v)) if v != 0 && v != -1)
                            || matches!(b.kind, K::Lit(Lit::Uint(v)) if v != 0);
                        if safe {
                            self.binary(*op, a, b)
                        } else {
                            let (x, y) = (self.expr_top(a), self.expr_top(b));
                            let f = match (ty, op) {
                                (Ty::Int, BinOp::Div) => "ks_div",
                                (Ty::Int, _) => "ks_rem",
                                (_, BinOp::Div) => "ks_udiv",
                                _ => "ks_urem",
                            };
                            self.helpers.insert(if ty == Ty::Int {
                                Helper::Div
                            } else {
                                Helper::Udiv
                            });
                            (format!("{f}({x}, {y})"), P_ATOM)
                        }
                    }
                    _ => self.binary(*op, a, b),
                }
            }
            K::Cond(c, a, b) => {
                let (c, pc) = self.expr(c);
                let (x, px) = self.expr(a);
                let (y, py) = self.expr(b);
                (
                    format!(
                        "{} ? {} : {}",
                        paren(c, pc, P_COND + 1),
                        paren(x, px, P_COND + 1),
                        paren(y, py, P_COND)
                    ),
                    P_COND,
                )
            }
            K::Cast(a) => {
                let (from, to) = (a.ty, e.ty);
                let (s, p) = self.expr(a);
                if from == to {
                    return (s, p);
                }
                let s = match (from, to) {
                    // Saturating, NaN -> 0, as ksim's conversion.
                    (f, i) if f.is_float() && i.is_integer() => {
                        format!("convert_{}_sat({s})", self.c_ty(i))
                    }
                    _ => format!("({}){}", self.c_ty(to), paren(s, p, P_UNARY)),
                };
                let p = if s.starts_with("convert_") {
                    P_ATOM
                } else {
                    P_UNARY
                };
                (s, p)
            }
            // OpenCL C's own reinterpretation (§6.2.4.2): the same bits, as ksim's.
            K::Bits(a) => {
                let x = self.expr_top(a);
                (format!("as_{}({x})", self.c_ty(e.ty)), P_ATOM)
            }
            K::Log2(a) => {
                let (f, h) = if a.ty == Ty::Uint {
                    ("ks_log2u", Helper::Log2u)
                } else {
                    ("ks_log2", Helper::Log2)
                };
                self.helpers.insert(h);
                let x = self.expr_top(a);
                let s = format!("{f}({x})");
                if e.ty == Ty::Int {
                    (s, P_ATOM)
                } else {
                    (format!("({}){s}", self.c_ty(e.ty)), P_UNARY)
                }
            }
            K::Min(a, b) | K::Max(a, b) => {
                let is_min = matches!(e.kind, K::Min(..));
                let (x, y) = (self.expr_top(a), self.expr_top(b));
                let f = if a.ty == Ty::Float {
                    self.helpers.insert(Helper::Fminmax);
                    if is_min {
                        "ks_fmin"
                    } else {
                        "ks_fmax"
                    }
                } else if a.ty == Ty::Double {
                    self.helpers.insert(Helper::Dminmax);
                    if is_min {
                        "ks_dmin"
                    } else {
                        "ks_dmax"
                    }
                } else if is_min {
                    "min"
                } else {
                    "max"
                };
                (format!("{f}({x}, {y})"), P_ATOM)
            }
            // OpenCL C's own function of the same name and meaning (§6.12.2).
            K::Math(f, args) => {
                let args: Vec<String> = args.iter().map(|a| self.expr_top(a)).collect();
                (format!("{}({})", f.name(), args.join(", ")), P_ATOM)
            }
            // OpenCL C's own function (§6.12.3); its operands' types pick the overload.
            K::IntFn(f, args) => {
                let args: Vec<String> = args
                    .iter()
                    .map(|a| {
                        let (s, p) = self.expr(a);
                        format!("({}){}", self.c_ty(a.ty), paren(s, p, P_UNARY))
                    })
                    .collect();
                (format!("{}({})", f.name(), args.join(", ")), P_ATOM)
            }
        }
    }

    fn binary(&mut self, op: BinOp, a: &Expr, b: &Expr) -> (String, u8) {
        let p = bin_prec(op);
        let (x, px) = self.expr(a);
        let (y, py) = self.expr(b);
        // Parenthesise beyond C's rules where mixing operators reads ambiguously
        // (bitwise/logical operators and shifts next to other operators).
        let clarify = |child: &Expr, pc: u8| -> u8 {
            match child.kind {
                ExprKind::Binary(cop, ..)
                    if cop != op
                        && (p <= 5 || p == 8 || bin_prec(cop) <= 5 || bin_prec(cop) == 8) =>
                {
                    pc.max(p) + 1
                }
                _ => p,
            }
        };
        let nx = clarify(a, px);
        let ny = clarify(b, py).max(p + 1);
        (
            format!("{} {} {}", paren(x, px, nx), op.symbol(), paren(y, py, ny)),
            p,
        )
    }

    /// An `int` expression built from `+ - * << unary-`, computed on `uint` and cast back.
    fn wrapped(&mut self, e: &Expr) -> (String, u8) {
        let (s, p) = self.uexpr(e);
        (format!("(int)({})", paren(s, p, 0)), P_UNARY)
    }

    /// `e` (of type `int`) as a `uint` expression.
    fn uexpr(&mut self, e: &Expr) -> (String, u8) {
        use ExprKind as K;
        if e.ty == Ty::Int {
            match &e.kind {
                K::Binary(op @ (BinOp::Add | BinOp::Sub | BinOp::Mul), a, b) => {
                    let p = bin_prec(*op);
                    let (x, px) = self.uexpr(a);
                    let (y, py) = self.uexpr(b);
                    return (
                        format!(
                            "{} {} {}",
                            paren(x, px, p),
                            op.symbol(),
                            paren(y, py, p + 1)
                        ),
                        p,
                    );
                }
                K::Binary(BinOp::Shl, a, b) => {
                    let p = bin_prec(BinOp::Shl);
                    let (x, px) = self.uexpr(a);
                    let (y, py) = self.expr(b);
                    return (
                        format!("{} << {}", paren(x, px, P_UNARY), paren(y, py, P_UNARY)),
                        p,
                    );
                }
                K::Unary(UnOp::Neg, a) => {
                    let (x, px) = self.uexpr(a);
                    return (
                        format!("0u - {}", paren(x, px, bin_prec(BinOp::Sub) + 1)),
                        bin_prec(BinOp::Sub),
                    );
                }
                K::Lit(Lit::Int(v)) => return (format!("{}u", *v as u32), P_ATOM),
                _ => {}
            }
        }
        let (s, p) = self.expr(e);
        (format!("(uint){}", paren(s, p, P_UNARY)), P_UNARY)
    }
}

const FLAT: [Builtin; 6] = [
    Builtin::LocalId,
    Builtin::GlobalId,
    Builtin::GroupId,
    Builtin::LocalSize,
    Builtin::NumGroups,
    Builtin::WorkDim,
];

/// The position of a builtin in the order of declaration: the flat ones, then
/// per-dimension queries by query and dimension.
fn builtin_order(b: Builtin) -> usize {
    match b {
        Builtin::Dim(q, d) => {
            let qi = DimQuery::ALL.iter().position(|x| *x == q).unwrap();
            FLAT.len() + qi * 3 + d as usize
        }
        _ => FLAT.iter().position(|x| *x == b).unwrap(),
    }
}

fn builtin_at(order: usize) -> Builtin {
    match FLAT.get(order) {
        Some(&b) => b,
        None => {
            let k = order - FLAT.len();
            Builtin::Dim(DimQuery::ALL[k / 3], (k % 3) as u8)
        }
    }
}

/// The name of the constant a builtin is bound to: its ksim name (`tid`), or for
/// `get_local_id(1)` `local_id_1`.
fn builtin_name(b: Builtin) -> String {
    match b {
        Builtin::WorkDim => "work_dim".into(),
        Builtin::Dim(q, d) => format!("{}_{d}", q.name().trim_start_matches("get_")),
        b => b.text(),
    }
}

/// OpenCL C expressions for the flat (linearised) work-item numbers of a launch of
/// `work_dim` dimensions, dimension 0 fastest.
struct Flat {
    local_id: String,
    group_id: String,
    local_size: String,
    num_groups: String,
}

impl Flat {
    fn of(work_dim: usize) -> Flat {
        let lin = |id: &str, size: &str| {
            let mut e = format!("{id}({})", work_dim - 1);
            for d in (0..work_dim - 1).rev() {
                e = format!("{id}({d}) + {size}({d}) * ({e})");
            }
            e
        };
        let product = |size: &str| {
            (0..work_dim)
                .map(|d| format!("{size}({d})"))
                .collect::<Vec<_>>()
                .join(" * ")
        };
        // Compound expressions come parenthesised, so that they can be used as operands.
        let atom = |e: String| if e.contains(' ') { format!("({e})") } else { e };
        Flat {
            local_id: atom(lin("get_local_id", "get_local_size")),
            group_id: atom(lin("get_group_id", "get_num_groups")),
            local_size: atom(product("get_local_size")),
            num_groups: atom(product("get_num_groups")),
        }
    }
}

fn visit(e: &Expr, f: &mut impl FnMut(&Expr)) {
    f(e);
    use ExprKind as K;
    match &e.kind {
        K::Load { index, .. } => index.iter().for_each(|i| visit(i, f)),
        K::Unary(_, a)
        | K::Cast(a)
        | K::Bits(a)
        | K::Log2(a)
        | K::Deref(a)
        | K::Addr { offset: a, .. } => visit(a, f),
        K::Binary(_, a, b) | K::Min(a, b) | K::Max(a, b) | K::PtrAdd(a, b) => {
            visit(a, f);
            visit(b, f)
        }
        K::Math(_, args) | K::IntFn(_, args) => args.iter().for_each(|a| visit(a, f)),
        K::Cond(c, a, b) => {
            visit(c, f);
            visit(a, f);
            visit(b, f)
        }
        K::Lit(_) | K::Identity | K::Var(_) | K::Param(_) | K::Builtin(_) | K::Null => {}
    }
}

/// Whether the kernel has pointer values anywhere ([`EmitError::PointerValues`]).
fn uses_pointers(k: &Kernel) -> bool {
    let mut found = false;
    let mut note = |e: &Expr| visit(e, &mut |e| found |= e.ty == Ty::Ptr);
    for s in k.blocks.iter().flatten() {
        match &s.kind {
            StmtKind::Assign { value, .. } => note(value),
            StmtKind::Store { index, value, .. } => {
                index.iter().for_each(&mut note);
                note(value)
            }
            StmtKind::StoreAt { .. } => return true,
            StmtKind::If { cond, .. } | StmtKind::While { cond, .. } => note(cond),
            StmtKind::Atomic { index, args, .. } => index.iter().chain(args).for_each(&mut note),
            StmtKind::Check { cond, .. } => note(cond),
            StmtKind::Perm { index, amount, .. } => index.iter().chain(amount).for_each(&mut note),
            StmtKind::Barrier { .. } => {}
        }
    }
    found
        || k.vars.iter().any(|v| v.ty == Ty::Ptr)
        || k.arrays.iter().any(|a| a.elem == Ty::Ptr)
        || k.params.iter().any(|p| p.ty == Ty::Ptr)
}

fn shape_comment(name: &str, dims: &[usize], space: &str) -> String {
    let d: String = dims.iter().map(|d| format!("[{d}]")).collect();
    format!("{space} {name}{d}")
}

fn int_lit(v: i32) -> String {
    if v == i32::MIN {
        "(-2147483647 - 1)".into()
    } else if v < 0 {
        format!("({v})")
    } else {
        v.to_string()
    }
}

/// Whether the kernel computes or stores a `double` anywhere (the device then needs
/// `cl_khr_fp64`, enabled by a pragma).
fn uses_double(k: &Kernel) -> bool {
    fn expr(e: &Expr) -> bool {
        use ExprKind as K;
        e.ty == Ty::Double
            || match &e.kind {
                K::Load { index, .. } => index.iter().any(expr),
                K::Unary(_, a) | K::Cast(a) | K::Bits(a) | K::Log2(a) => expr(a),
                K::Binary(_, a, b) | K::Min(a, b) | K::Max(a, b) => expr(a) || expr(b),
                K::Cond(c, a, b) => expr(c) || expr(a) || expr(b),
                _ => false,
            }
    }
    k.vars.iter().any(|v| v.ty == Ty::Double)
        || k.arrays.iter().any(|a| a.elem == Ty::Double)
        || k.params.iter().any(|p| p.ty == Ty::Double)
        || k.blocks.iter().flatten().any(|s| match &s.kind {
            StmtKind::Assign { value, .. } => expr(value),
            StmtKind::Store { index, value, .. } => index.iter().any(expr) || expr(value),
            StmtKind::StoreAt { ptr, value } => expr(ptr) || expr(value),
            StmtKind::If { cond, .. } | StmtKind::While { cond, .. } => expr(cond),
            StmtKind::Atomic { index, args, .. } => index.iter().chain(args).any(expr),
            StmtKind::Check { cond, .. } => expr(cond),
            StmtKind::Barrier { .. } | StmtKind::Perm { .. } => false,
        })
}

/// A `long` literal (LONG_MIN has none of its own).
fn long_lit(v: i64) -> String {
    if v == i64::MIN {
        "(-9223372036854775807L - 1)".into()
    } else if v < 0 {
        format!("({v}L)")
    } else {
        format!("{v}L")
    }
}

/// A C `double` literal with exactly the bits of the `f64`.
fn double_lit(f: f64) -> String {
    if f.is_nan() {
        format!("as_double(0x{:016X}UL)", f.to_bits())
    } else if f.is_infinite() {
        if f > 0.0 {
            "((double)INFINITY)".into()
        } else {
            "(-(double)INFINITY)".into()
        }
    } else {
        finite_lit(format!("{f:?}"), f.is_sign_negative(), "")
    }
}

/// A C literal with exactly the bits of the `f32`.
fn float_lit(bits: u32) -> String {
    let f = f32::from_bits(bits);
    if f.is_nan() {
        format!("as_float(0x{bits:08X}u)")
    } else if f.is_infinite() {
        if f > 0.0 {
            "INFINITY".into()
        } else {
            "(-INFINITY)".into()
        }
    } else {
        finite_lit(format!("{f:?}"), f.is_sign_negative(), "f")
    }
}

/// A finite floating literal from Rust's shortest round-trip text (`{:?}`), given a point
/// when it has none (C reads `1` as an integer) and `suffix`, in parentheses when negative.
fn finite_lit(digits: String, negative: bool, suffix: &str) -> String {
    let s = if digits.contains(['.', 'e', 'E']) {
        digits
    } else {
        format!("{digits}.0")
    };
    if negative {
        format!("({s}{suffix})")
    } else {
        format!("{s}{suffix}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_literals_are_exact() {
        assert_eq!(float_lit(1.0f32.to_bits()), "1.0f");
        assert_eq!(float_lit((-1.5f32).to_bits()), "(-1.5f)");
        assert_eq!(float_lit(1e-7f32.to_bits()), "1e-7f");
        assert_eq!(float_lit(f32::INFINITY.to_bits()), "INFINITY");
        assert_eq!(float_lit(f32::NAN.to_bits()), "as_float(0x7FC00000u)");
        for x in [0.1f32, 3.4028235e38, f32::MIN_POSITIVE, 1e-45] {
            let s = float_lit(x.to_bits());
            let t = s.trim_end_matches('f');
            assert_eq!(t.parse::<f32>().unwrap().to_bits(), x.to_bits(), "{s}");
        }
    }

    #[test]
    fn reserved_names() {
        assert!(reserved("int"));
        assert!(reserved("float4"));
        assert!(reserved("get_x"));
        assert!(!reserved("out"));
        assert!(!reserved("int5"));
        let mut n = Names {
            used: HashSet::new(),
        };
        assert_eq!(n.fresh("x"), "x");
        assert_eq!(n.fresh("x"), "x_1");
        assert_eq!(n.fresh("min"), "k_min");
        assert_eq!(n.fresh("k_min"), "k_min_1");
        assert_eq!(n.fresh("min"), "k_min_2");
    }

    /// Every reserved prefix and word is renamed to a name that is not reserved, and never
    /// to a name handed out before (the renaming once looped forever on `get_x`).
    #[test]
    fn renaming_ends_and_never_collides() {
        let mut n = Names {
            used: HashSet::new(),
        };
        let mut seen = HashSet::new();
        let prefixes = ["get_", "ks_", "as_", "convert_", "cl_", "__", "CLK_", "_Q"];
        let words = RESERVED.iter().map(|w| w.to_string());
        let wants: Vec<String> = prefixes
            .iter()
            .flat_map(|p| [format!("{p}x"), p.to_string(), format!("k_{p}x")])
            .chain(words)
            .chain(["int4".into(), "k_int4".into()])
            .collect();
        for _ in 0..3 {
            for w in &wants {
                let name = n.fresh(w);
                assert!(!reserved(&name), "{w} -> {name}");
                assert!(seen.insert(name.clone()), "{w} -> {name} twice");
            }
        }
    }
}
