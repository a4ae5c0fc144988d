//! CUDA through clang: a `.cu` file is parsed by clang as CUDA device code
//! (`-x cuda --cuda-device-only`) with ksim's own header (`cuda.h`), and its C++ tree is
//! converted into the same OpenCL syntax tree as a `.cl` file, so that one lowering gives
//! both their semantics. What is CUDA's own is mapped here, name by name:
//!
//! - `__global__` functions are kernels (their pointer parameters `__global` buffers),
//!   `__device__` functions helpers; `__shared__` variables are `__local` (a sizeless
//!   `extern __shared__` array takes its size from `--shared-bytes`, passed to clang as
//!   the macro [`SHARED_BYTES`]), `__constant__` ones `__constant`;
//! - `threadIdx.x` is `get_local_id(0)`, `blockIdx` the group id, `blockDim` the local
//!   size, `gridDim` the number of groups (as `unsigned int`, CUDA's type);
//! - `__syncthreads()` is a barrier on local and global memory, `__threadfence*()` a
//!   fence on both; the atomics and math functions are their OpenCL namesakes;
//! - template instances are named as a launch names them (`scan<int,256>`).
//!
//! CUDA that has no counterpart in the core (textures, curand, dynamic parallelism, inline
//! PTX, ...) is refused with its name and span, never misread.

use super::convert::Converter;
use super::json::Node;
use crate::ast::{BinOp, Span};
use crate::cl::ast::*;
use crate::diag::Diagnostic;
use std::path::{Path, PathBuf};

/// The macro that carries `--shared-bytes N` to clang and to the converter.
pub const SHARED_BYTES: &str = "KSIM_SHARED_BYTES";

/// ksim's CUDA headers, by the name `#include <...>` gives them.
const HEADERS: [(&str, &str); 6] = [
    ("cuda.h", include_str!("cuda.h")),
    ("cuda_runtime.h", "#include \"cuda.h\"\n"),
    ("stdio.h", "#include \"cuda.h\"\n"),
    ("curand_kernel.h", "#include \"cuda.h\"\n"),
    ("curand.h", "#include \"curand_kernel.h\"\n"),
    ("cooperative_groups.h", "#include \"cuda.h\"\n"),
];

/// Whether a file is CUDA (by extension).
pub fn is_cuda(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "cu")
}

/// The folder holding ksim's CUDA headers, written once per content to the temporary folder.
pub fn header_dir() -> Result<PathBuf, String> {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    HEADERS.hash(&mut h);
    let dir = std::env::temp_dir().join(format!("ksim-cuda-{:016x}", h.finish()));
    let fail =
        |e: std::io::Error| format!("cannot write ksim's CUDA headers {}: {e}", dir.display());
    if HEADERS
        .iter()
        .all(|(n, t)| std::fs::read_to_string(dir.join(n)).is_ok_and(|x| x == *t))
    {
        return Ok(dir);
    }
    std::fs::create_dir_all(&dir).map_err(fail)?;
    for (name, text) in HEADERS {
        let path = dir.join(name);
        let tmp = path.with_extension(format!("{}.tmp", std::process::id()));
        std::fs::write(&tmp, text)
            .and_then(|_| std::fs::rename(&tmp, &path))
            .map_err(fail)?;
    }
    Ok(dir)
}

/// clang's arguments for CUDA device code, with ksim's headers in `dir`.
pub fn clang_args(dir: &Path) -> Vec<std::ffi::OsString> {
    let mut args: Vec<std::ffi::OsString> = [
        "-x",
        "cuda",
        "--cuda-device-only",
        "--cuda-gpu-arch=sm_70",
        "-nocudainc",
        "-nocudalib",
        "-std=c++17",
    ]
    .iter()
    .map(Into::into)
    .collect();
    args.push("-isystem".into());
    args.push(dir.into());
    args.push("-include".into());
    args.push(dir.join("cuda.h").into());
    args
}

/// The OpenCL query for a built-in variable: `threadIdx` → `get_local_id`, ...
fn dim_query(var: &str) -> Option<&'static str> {
    Some(match var {
        "threadIdx" => "get_local_id",
        "blockIdx" => "get_group_id",
        "blockDim" => "get_local_size",
        "gridDim" => "get_num_groups",
        _ => return None,
    })
}

/// What a CUDA function becomes.
enum Call {
    /// Its OpenCL namesake.
    Rename(&'static str),
    /// `__syncthreads()`: a barrier on local and global memory.
    Barrier,
    /// `__threadfence*()`: a fence on local and global memory.
    Fence,
    /// `exp10f(x)`, `__exp10f(x)`: `pow(10.0f, x)` (OpenCL C 1.2 has `exp10`, the core
    /// `pow`; CUDA documents `__exp10f` as the faster, less precise `exp10f`).
    Exp10,
    /// `memcpy` (`set`: `memset`): a loop over whole elements (`memcopy.rs`).
    Mem { set: bool },
    /// `atomicInc` (`inc`) or `atomicDec`: a compare-and-swap loop (`wrap_atomic.rs`).
    Wrap { inc: bool },
}

/// The CUDA built-in `name` (`Ok(None)`: not one, a call of the kernel's own function), or
/// the reason it is refused.
fn builtin_call(name: &str) -> Result<Option<Call>, String> {
    use Call::*;
    let renamed = |n| Ok(Some(Rename(n)));
    match name {
        "__syncthreads" => Ok(Some(Barrier)),
        "memcpy" | "__builtin_memcpy" => Ok(Some(Mem { set: false })),
        "memset" | "__builtin_memset" => Ok(Some(Mem { set: true })),
        "__threadfence" | "__threadfence_block" | "__threadfence_system" => Ok(Some(Fence)),
        "atomicAdd" => renamed("atomic_add"),
        "atomicSub" => renamed("atomic_sub"),
        "atomicExch" => renamed("atomic_xchg"),
        "atomicMin" => renamed("atomic_min"),
        "atomicMax" => renamed("atomic_max"),
        "atomicAnd" => renamed("atomic_and"),
        "atomicOr" => renamed("atomic_or"),
        "atomicXor" => renamed("atomic_xor"),
        "atomicCAS" => renamed("atomic_cmpxchg"),
        "atomicInc" => Ok(Some(Wrap { inc: true })),
        "atomicDec" => Ok(Some(Wrap { inc: false })),
        "__fdividef" => renamed("native_divide"),
        "__expf" => renamed("native_exp"),
        "__logf" => renamed("native_log"),
        "__sinf" => renamed("native_sin"),
        "__cosf" => renamed("native_cos"),
        "__powf" => renamed("pow"),
        "__exp10f" | "exp10f" => Ok(Some(Exp10)),
        "__mul24" | "__umul24" => renamed("mul24"),
        "__popc" | "__popcll" => renamed("popcount"),
        "__clz" | "__clzll" => renamed("clz"),
        "fmaf" => renamed("fma"),
        "__syncthreads_count"
        | "__syncthreads_and"
        | "__syncthreads_or"
        | "__syncwarp"
        | "__shfl_sync"
        | "__shfl_up_sync"
        | "__shfl_down_sync"
        | "__shfl_xor_sync"
        | "__ballot_sync"
        | "__any_sync"
        | "__all_sync"
        | "__activemask" => Err(format!("`{name}`")),
        "tex1D" | "tex2D" | "tex3D" | "tex1Dfetch" => Err(format!("textures (`{name}`)")),
        _ if ["surf1D", "surf2D", "surf3D"]
            .iter()
            .any(|p| name.starts_with(p)) =>
        {
            Err(format!("surfaces (`{name}`)"))
        }
        _ if name.starts_with("curand") => Err(format!("curand (`{name}`)")),
        "this_grid" => Err("grid-wide synchronisation (`this_grid`)".into()),
        // `synchronize(block)`: the block's barrier (a grid's is refused by its type).
        "synchronize" => Ok(Some(Barrier)),
        // `__return_val_funptr(T)` (GPUVerify's, a template call in ksim's header): the
        // value the function returns, as `__return_val_int()`.
        _ if name.starts_with("__ksim_return_val") => renamed("__return_val_funptr"),
        // `sqrtf` → `sqrt`, ...: the single-precision names of the C math functions.
        _ => Ok(name
            .strip_suffix('f')
            .and_then(|b| FLOAT_NAMES.iter().find(|n| **n == b).copied())
            .map(Rename)),
    }
}

/// The C math functions whose `f`-suffixed CUDA name is the OpenCL name without the `f`.
const FLOAT_NAMES: [&str; 31] = [
    "sqrt", "rsqrt", "exp", "exp2", "log", "log2", "log10", "sin", "cos", "tan", "fabs", "floor",
    "ceil", "round", "trunc", "atan", "asin", "acos", "tanh", "sinh", "cosh", "cbrt", "erf", "pow",
    "fmin", "fmax", "fmod", "atan2", "hypot", "copysign", "fma",
];

/// The name of a type CUDA-only memory cannot be modelled with (textures, curand states).
fn refused_type(text: &str) -> Option<&'static str> {
    if text.contains("texture<") {
        Some("textures")
    } else if text.contains("surface<") {
        Some("surfaces")
    } else if text.contains("curandState") {
        Some("curand")
    } else if text.contains("grid_group") {
        Some("grid-wide synchronisation (`grid_group`)")
    } else {
        None
    }
}

/// `name<int,256>` for a template instance (a function with template arguments).
pub fn instance_name(d: &Node) -> Option<String> {
    let args: Vec<String> = d
        .inner
        .iter()
        .filter(|c| c.kind == "TemplateArgument")
        .map(|a| match (&a.ty, &a.value) {
            (Some(t), _) => t.qual_type.clone(),
            (None, Some(v)) => v.to_string().trim_matches('"').to_string(),
            (None, None) => "?".into(),
        })
        .collect();
    if args.is_empty() {
        return None;
    }
    Some(format!(
        "{}<{}>",
        d.name.as_deref().unwrap_or(""),
        args.join(",")
    ))
}

fn refuse<T>(what: &str, span: &Span) -> Result<T, Diagnostic> {
    Err(Diagnostic::new(
        format!("not supported: CUDA's {what}"),
        span.clone(),
    ))
}

/// Whether a printed type is a cooperative group of one block (`thread_block`), which
/// holds nothing the core needs: its variables are dropped, its `sync` is a barrier.
pub fn is_block_group(ty: &str) -> bool {
    ty.trim_start_matches("const ")
        .trim_start_matches("cooperative_groups::")
        == "thread_block"
}

pub(super) fn name_expr(name: &str, span: &Span) -> Expr {
    Expr {
        kind: ExprKind::Name(name.into()),
        span: span.clone(),
    }
}

pub(super) fn call(func: &str, args: Vec<Expr>, span: &Span) -> ExprKind {
    ExprKind::Call {
        func: Ident {
            name: func.into(),
            span: span.clone(),
        },
        args,
    }
}

/// `CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE`.
fn both_fences(span: &Span) -> Expr {
    Expr {
        kind: ExprKind::Binary(
            BinOp::BitOr,
            Box::new(name_expr("CLK_LOCAL_MEM_FENCE", span)),
            Box::new(name_expr("CLK_GLOBAL_MEM_FENCE", span)),
        ),
        span: span.clone(),
    }
}

/// The size in bytes of a scalar base type (for `extern __shared__`).
pub(super) fn base_bytes(b: &Base) -> Option<u64> {
    Some(match b {
        Base::Bool | Base::Char { .. } => 1,
        Base::Short { .. } | Base::Half => 2,
        Base::Int { .. } | Base::Float => 4,
        Base::Long { .. } | Base::Double | Base::Size { .. } => 8,
        Base::Vector(e, n) => base_bytes(e)? * u64::from(if *n == 3 { 4 } else { *n }),
        _ => return None,
    })
}

/// File-scope `__shared__` variables, which OpenCL C declares inside a kernel: moved to
/// the start of every kernel (each block has its own, as each work-group its `__local`).
pub fn shared_into_kernels(items: &mut Vec<Item>) {
    let mut shared = Vec::new();
    items.retain(|i| match i {
        Item::Global(d) if d.ty.space == AddrSpace::Local => {
            shared.push(d.clone());
            false
        }
        _ => true,
    });
    if shared.is_empty() {
        return;
    }
    for item in items {
        if let Item::Function(Function {
            is_kernel: true,
            body: Some(body),
            ..
        }) = item
        {
            let span = body.span.clone();
            body.stmts.insert(
                0,
                Stmt {
                    kind: StmtKind::Decl(shared.clone()),
                    span,
                },
            );
        }
    }
}

impl Converter<'_> {
    /// `threadIdx.x` and its kin: the OpenCL query, as CUDA's `unsigned int`.
    pub(super) fn cuda_member(&mut self, e: &Node, span: &Span) -> Option<ExprKind> {
        if e.kind != "MemberExpr" {
            return None;
        }
        let base = super::convert::strip_implicit(e.inner.first()?);
        let var = base.referenced_decl.as_ref()?.name.as_deref()?;
        let query = dim_query(var)?;
        let dim = match e.name.as_deref()? {
            "x" => 0,
            "y" => 1,
            "z" => 2,
            _ => return None,
        };
        let arg = Expr {
            kind: ExprKind::Int {
                value: dim,
                unsigned: true,
                long: false,
            },
            span: span.clone(),
        };
        let q = Expr {
            kind: call(query, vec![arg], span),
            span: span.clone(),
        };
        Some(ExprKind::Cast(
            Box::new(Type {
                base: Base::Int { unsigned: true },
                space: AddrSpace::Private,
                is_const: false,
                is_volatile: false,
                access: Access::Default,
                pointers: Vec::new(),
                arrays: Vec::new(),
                span: span.clone(),
            }),
            Box::new(q),
        ))
    }

    /// A call of a CUDA built-in (`None`: a call of the kernel's own function).
    pub(super) fn cuda_call(
        &mut self,
        name: &str,
        callee: &Node,
        args: &[Node],
        span: &Span,
    ) -> Result<Option<ExprKind>, Diagnostic> {
        let c = match builtin_call(name) {
            Ok(Some(c)) => c,
            Ok(None) => return Ok(None),
            Err(what) => return refuse(&what, span),
        };
        Ok(Some(match c {
            Call::Barrier => call("barrier", vec![both_fences(span)], span),
            Call::Fence => call("mem_fence", vec![both_fences(span)], span),
            Call::Mem { set } => self.mem_call(name, args, set, span)?,
            Call::Wrap { inc } => self.wrap_atomic(name, args, inc, span)?,
            Call::Exp10 => {
                let ten = Expr {
                    kind: ExprKind::Float {
                        value: 10.0,
                        single: true,
                    },
                    span: span.clone(),
                };
                let x = args.first().map(|a| self.expr(a)).transpose()?;
                call("pow", [ten].into_iter().chain(x).collect(), span)
            }
            Call::Rename(to) => {
                let ty = callee.ty.as_ref().map_or("", |t| t.qual_type.as_str());
                if to.starts_with("atomic_") && ty.starts_with("float") && to != "atomic_xchg" {
                    return refuse(
                        &format!("`{name}` on `float` (the core's atomics add integers)"),
                        span,
                    );
                }
                let args = args
                    .iter()
                    .map(|a| self.expr(a))
                    .collect::<Result<_, _>>()?;
                call(to, args, span)
            }
        }))
    }

    /// `block.sync()` on a cooperative group of one block: its barrier; `None` for another
    /// member call.
    pub(super) fn cuda_member_call(&mut self, e: &Node, span: &Span) -> Option<ExprKind> {
        let member = super::convert::strip_implicit(e.inner.first()?);
        let object = member.inner.first()?;
        let ty = object.ty.as_ref()?.qual_type.as_str();
        (member.name.as_deref() == Some("sync") && is_block_group(ty))
            .then(|| call("barrier", vec![both_fences(span)], span))
    }

    /// Refuses a declaration of CUDA that ksim does not model, by name.
    pub(super) fn cuda_check_decl(&self, d: &Node, span: &Span) -> Result<(), Diagnostic> {
        if d.inner.iter().any(|c| c.kind == "HIPManagedAttr") {
            return refuse("`__managed__` memory", span);
        }
        let ty = d.ty.as_ref().map_or("", |t| t.qual_type.as_str());
        match refused_type(ty) {
            Some(what) => refuse(what, span),
            None => Ok(()),
        }
    }

    /// The memory of a CUDA variable: `__shared__` is `__local`, `__constant__` is
    /// `__constant`; `extern __shared__ T s[]` gets its size from `--shared-bytes`.
    pub(super) fn cuda_var(&self, d: &Node, decl: &mut Decl) -> Result<(), Diagnostic> {
        let has = |k: &str| d.inner.iter().any(|c| c.kind == k);
        if has("CUDASharedAttr") {
            decl.ty.space = AddrSpace::Local;
            if decl.ty.arrays.first().is_some_and(Option::is_none) {
                let bytes = self.shared_bytes.ok_or_else(|| {
                    Diagnostic::new(
                        format!(
                            "`extern __shared__ {}[]` is sized by the launch: pass \
                             --shared-bytes N",
                            decl.name.name
                        ),
                        decl.span.clone(),
                    )
                })?;
                let elem = base_bytes(&decl.ty.base)
                    .filter(|_| decl.ty.pointers.is_empty() && decl.ty.arrays.len() == 1)
                    .ok_or_else(|| {
                        Diagnostic::new(
                            "not supported yet: an `extern __shared__` array of this type",
                            decl.span.clone(),
                        )
                    })?;
                decl.ty.arrays[0] = Some(Expr {
                    kind: ExprKind::Int {
                        value: (bytes / elem).max(1),
                        unsigned: false,
                        long: false,
                    },
                    span: decl.span.clone(),
                });
            }
        } else if has("CUDAConstantAttr") {
            decl.ty.space = AddrSpace::Constant;
        }
        Ok(())
    }

    /// Refuses a statement or expression kind of CUDA that ksim does not model, by name.
    pub(super) fn cuda_refused(&self, kind: &str, span: &Span) -> Result<(), Diagnostic> {
        match kind {
            "CUDAKernelCallExpr" => refuse("dynamic parallelism (a launch inside a kernel)", span),
            "GCCAsmStmt" | "MSAsmStmt" => refuse("inline PTX (`asm`)", span),
            "CXXThrowExpr" | "CXXTryStmt" => refuse("exceptions", span),
            _ => Ok(()),
        }
    }
}
