//! The one table of OpenCL C built-in names and what each lowers to: work-item functions to
//! ksim's builtins, synchronisation to `barrier`, integer built-ins to exact expressions over
//! core operators, GPUVerify's annotations (checked at run time by `cl/spec.rs`), and every built-in
//! ksim knows but cannot run yet (named in the error). Wiring a new core construct (2D ids,
//! fences, atomics) in means changing an entry here and its case in [`super::lower`].

use crate::ast::{BinOp, Expr, ExprKind, Ident, Span, TypeName, UnOp};

/// What a built-in function lowers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Builtin {
    /// `get_local_id(d)`, ..., `get_work_dim()`: the core's work-item queries
    /// ([`super::ndrange`]).
    WorkItem,
    /// `barrier(flags)` / `work_group_barrier(flags)`: K-BARRIER.
    Barrier,
    /// `mem_fence(flags)` and friends: order a work-item's own accesses only; no step.
    MemFence,
    /// A GPUVerify annotation (`__assert`, `__requires`, ...): checked at run time
    /// (`cl/spec.rs`).
    Annotation,
    /// GPUVerify's `__writes_to(p)` / `__reads_from(p)` in a specification function: the
    /// call's accesses through `p` (`cl/access_spec.rs`).
    AccessSpec,
    /// `atomic_add(p, v)`, `atom_inc(p)`, ...: S-ATOMIC on the element `p` reaches.
    Atomic(crate::core::AtomicOp),
    /// An integer (or exact) built-in expanded into core operators.
    Exact(Exact),
    /// `async_work_group_copy`, `async_work_group_strided_copy`, `wait_group_events`:
    /// element copies and barriers (`cl/async_copy.rs`).
    AsyncCopy,
    /// `convert_T` and `as_T`: conversions and reinterpretations (scalar or vector).
    Convert,
    /// `any` and `all`: tests of the sign bits of a vector's components.
    VectorTest,
    /// `shuffle(x, mask)`, `shuffle2(x, y, mask)`: components picked by a mask vector.
    Shuffle,
    /// A floating-point math built-in (`cl/math.rs`).
    Math(Math),
    /// `read_image{f,i,ui}`, `write_image{f,i,ui}`, `get_image_{width,height,depth,dim}`:
    /// texel accesses and queries of an image parameter (`cl/images.rs`).
    Image,
    /// `vstoreN(data, offset, p)`: a statement (`cl/vecmem.rs`; `vloadN` is rewritten to a
    /// vector literal when clang's tree is converted).
    VStore,
    /// `vload_half(offset, p)`: a `half` read as a `float` (`cl/half.rs`).
    VLoadHalf,
    /// Known, not lowered yet: the category named in the error.
    Unsupported(&'static str),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exact {
    Min,
    Max,
    Clamp,
    Abs,
    AbsDiff,
    AddSat,
    SubSat,
    Hadd,
    Rhadd,
    Select,
    /// `bitselect(a, b, c)`: each bit from `b` where `c`'s is set, else from `a`
    /// (§6.12.6; on the bits of a `float` or `double`).
    BitSelect,
    Mad,
    Mul24,
    Mad24,
    IsNan,
    /// A function the core computes itself (`clz`, `mul_hi`, `rotate`, ...).
    Core(crate::core::IntFn),
}

impl Exact {
    pub fn arity(self) -> usize {
        use Exact::*;
        match self {
            Abs | IsNan => 1,
            Min | Max | AbsDiff | AddSat | SubSat | Hadd | Rhadd | Mul24 => 2,
            Clamp | Select | BitSelect | Mad | Mad24 => 3,
            Core(f) => f.arity(),
        }
    }
}

/// A floating-point math built-in and what it lowers to (`cl/math.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Math {
    /// The core's math function (`sqrt`, ...); `native_` and `half_` forms, which allow
    /// less precision, run the precise one.
    Fn(crate::core::MathFn),
    /// `pown(x, n)`: `pow(x, (float)n)`.
    Pown,
    /// `sincos(x, cosval)`: stores `cos(x)` through the pointer, returns `sin(x)`.
    SinCos,
    /// `native_recip(x)`, `half_recip(x)`: `1.0f / x`.
    Recip,
    /// `native_divide(x, y)`, `half_divide(x, y)`: `x / y`.
    Divide,
    /// `isinf(x)`, `isfinite(x)`: `fabs(x) == INFINITY`, `fabs(x) < INFINITY`, as `int`.
    IsInf,
    IsFinite,
}

impl Math {
    pub fn arity(self) -> usize {
        match self {
            Math::Fn(f) => f.arity(),
            Math::Pown | Math::SinCos | Math::Divide => 2,
            Math::Recip | Math::IsInf | Math::IsFinite => 1,
        }
    }
}

/// The math built-in `name`, if ksim runs it.
pub fn math(name: &str) -> Option<Math> {
    let base = name
        .strip_prefix("native_")
        .or_else(|| name.strip_prefix("half_"));
    Some(match (base, name) {
        (Some("recip"), _) => Math::Recip,
        (Some("divide"), _) => Math::Divide,
        (Some(b), _) => Math::Fn(crate::core::MathFn::from_name(b)?),
        (None, "pown") => Math::Pown,
        (None, "sincos") => Math::SinCos,
        (None, "isinf") => Math::IsInf,
        (None, "isfinite") => Math::IsFinite,
        (None, n) => Math::Fn(crate::core::MathFn::from_name(n)?),
    })
}

/// GPUVerify's specification statements (`cl/spec.rs` says what each becomes).
const ANNOTATIONS: [&str; 21] = [
    "__assert",
    "__assume",
    "__requires",
    "__ensures",
    "__invariant",
    "__global_invariant",
    "__global_assert",
    "__global_requires",
    "__global_ensures",
    "__candidate_invariant",
    "__candidate_global_invariant",
    "__barrier_invariant",
    "__barrier_invariant_binary",
    "__function_wide_invariant",
    "__function_wide_candidate_invariant",
    "__read_permission",
    "__write_permission",
    "__non_temporal_loads_begin",
    "__non_temporal_loads_end",
    "__assert_with_msg",
    "__requires_fresh_array",
];

const FLOAT_MATH: [&str; 40] = [
    "fmin",
    "fmax",
    "fabs",
    "sqrt",
    "rsqrt",
    "native_sqrt",
    "native_rsqrt",
    "exp",
    "exp2",
    "log",
    "log2",
    "log10",
    "pow",
    "pown",
    "powr",
    "sin",
    "cos",
    "tan",
    "native_sin",
    "native_cos",
    "floor",
    "ceil",
    "round",
    "trunc",
    "fma",
    "isinf",
    "isfinite",
    "sign",
    "copysign",
    "fmod",
    "native_divide",
    "native_recip",
    "native_exp",
    "native_log",
    "half_sqrt",
    "atan",
    "atan2",
    "asin",
    "acos",
    "hypot",
];

/// What `name` lowers to, if it is an OpenCL built-in function ksim knows.
pub fn lookup(name: &str) -> Option<Builtin> {
    use Builtin::*;
    Some(match name {
        _ if super::ndrange::is_work_item(name) => WorkItem,
        "barrier" | "work_group_barrier" => Barrier,
        "mem_fence" | "read_mem_fence" | "write_mem_fence" => MemFence,
        "min" => Exact(self::Exact::Min),
        "max" => Exact(self::Exact::Max),
        "clamp" => Exact(self::Exact::Clamp),
        "abs" => Exact(self::Exact::Abs),
        "abs_diff" => Exact(self::Exact::AbsDiff),
        "add_sat" => Exact(self::Exact::AddSat),
        "sub_sat" => Exact(self::Exact::SubSat),
        "hadd" => Exact(self::Exact::Hadd),
        "rhadd" => Exact(self::Exact::Rhadd),
        "select" => Exact(self::Exact::Select),
        "bitselect" => Exact(self::Exact::BitSelect),
        "mad" => Exact(self::Exact::Mad),
        "mul24" => Exact(self::Exact::Mul24),
        "mad24" => Exact(self::Exact::Mad24),
        "isnan" => Exact(self::Exact::IsNan),
        _ if ANNOTATIONS.contains(&name) || super::lower::is_barrier_invariant(name) => Annotation,
        _ if super::lower::atomic_op(name).is_some() => {
            Atomic(super::lower::atomic_op(name).expect("checked"))
        }
        _ if name.starts_with("atomic_") || name.starts_with("atom_") => Unsupported("atomics"),
        "async_work_group_copy" | "async_work_group_strided_copy" | "wait_group_events" => {
            AsyncCopy
        }
        "prefetch" => Unsupported("async work-group copies"),
        _ if super::lower::vecmem_form(name, "vstore").is_some() => VStore,
        "vload_half" | "vloada_half" => VLoadHalf,
        _ if name.starts_with("vload") || name.starts_with("vstore") => {
            Unsupported("vector loads and stores")
        }
        _ if name.starts_with("convert_") || name.starts_with("as_") => Convert,
        "any" | "all" => VectorTest,
        "read_imagef" | "read_imagei" | "read_imageui" | "write_imagef" | "write_imagei"
        | "write_imageui" | "get_image_width" | "get_image_height" | "get_image_depth"
        | "get_image_dim" => Image,
        _ if name.starts_with("read_image")
            || name.starts_with("write_image")
            || name.starts_with("get_image_") =>
        {
            Unsupported("images")
        }
        _ if crate::core::IntFn::from_name(name).is_some() => Exact(self::Exact::Core(
            crate::core::IntFn::from_name(name).expect("checked"),
        )),
        "shuffle" | "shuffle2" => Shuffle,
        "dot" | "cross" | "length" | "normalize" | "distance" => Unsupported("vector built-ins"),
        "printf" => Unsupported("printf"),
        _ if math(name).is_some() => Math(math(name).expect("checked")),
        _ if FLOAT_MATH.contains(&name)
            || name.starts_with("native_")
            || name.starts_with("half_")
            || matches!(
                name,
                "sincos"
                    | "fract"
                    | "modf"
                    | "frexp"
                    | "ldexp"
                    | "cbrt"
                    | "erf"
                    | "tanh"
                    | "sinh"
                    | "cosh"
            ) =>
        {
            Unsupported("floating-point math built-ins")
        }
        // GPUVerify's built-ins without a dynamic meaning (docs/language.md).
        "__array_snapshot" => {
            Unsupported("GPUVerify's ghost arrays (no dynamic meaning: ksim has no ghost state)")
        }
        "__read_offset_bytes" | "__write_offset_bytes" | "__ptr_offset_bytes" | "__read"
        | "__write" | "__no_read" | "__no_write" | "__read_implies" | "__write_implies" => {
            Unsupported("GPUVerify's access-log built-ins outside annotations (no dynamic meaning: ksim keeps no access log a kernel can read)")
        }
        "__atomic_has_taken_value" => Unsupported(
            "GPUVerify's refined atomic abstraction (no dynamic meaning: it speaks of every value an atomic ever returned)",
        ),
        "__writes_to" | "__writes_to_local" | "__writes_to_global" | "__reads_from"
        | "__reads_from_local" | "__reads_from_global" => AccessSpec,
        _ if name.starts_with("__") => Unsupported("GPUVerify built-ins outside annotations"),
        _ => return None,
    })
}

/// Named constants of OpenCL C by name (`INFINITY`, `NAN`, sampler bits, `true`/`false`;
/// the limits are macros of clang's `opencl-c-base.h`).
pub fn constant(name: &str) -> Option<ExprKind> {
    let uint = |v: u64| ExprKind::Int {
        value: v,
        unsigned: true,
    };
    Some(match name {
        "true" => ExprKind::Bool(true),
        "false" => ExprKind::Bool(false),
        "INFINITY" | "HUGE_VALF" => ExprKind::Float(f32::INFINITY),
        "NAN" => ExprKind::Float(f32::NAN),
        // Sampler bits, as clang's and PoCL's `opencl-c-base.h` define them.
        "CLK_NORMALIZED_COORDS_FALSE" | "CLK_ADDRESS_NONE" => uint(0),
        "CLK_NORMALIZED_COORDS_TRUE" => uint(1),
        "CLK_ADDRESS_CLAMP_TO_EDGE" => uint(2),
        "CLK_ADDRESS_CLAMP" => uint(4),
        "CLK_ADDRESS_REPEAT" => uint(6),
        "CLK_ADDRESS_MIRRORED_REPEAT" => uint(8),
        "CLK_FILTER_NEAREST" => uint(0x10),
        "CLK_FILTER_LINEAR" => uint(0x20),
        _ => return None,
    })
}

/// Barrier fence flags: which memory spaces `barrier(flags)` orders.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Fence {
    pub local: bool,
    pub global: bool,
}

/// The bits of a fence flag name as a value of `cl_mem_fence_flags` (as OpenCL
/// implementations define them).
pub fn fence_bits(name: &str) -> u64 {
    match name {
        "CLK_LOCAL_MEM_FENCE" => 1,
        "CLK_GLOBAL_MEM_FENCE" => 2,
        _ => 4,
    }
}

/// The value of a fence flag name.
pub fn fence_flag(name: &str) -> Option<Fence> {
    Some(match name {
        "CLK_LOCAL_MEM_FENCE" => Fence {
            local: true,
            global: false,
        },
        "CLK_GLOBAL_MEM_FENCE" => Fence {
            local: false,
            global: true,
        },
        "CLK_IMAGE_MEM_FENCE" => Fence::default(),
        _ => return None,
    })
}

fn e(kind: ExprKind, span: &Span) -> Expr {
    Expr {
        kind,
        span: span.clone(),
    }
}

fn bin(op: BinOp, a: Expr, b: Expr, span: &Span) -> Expr {
    e(ExprKind::Binary(op, Box::new(a), Box::new(b)), span)
}

fn cond(c: Expr, a: Expr, b: Expr, span: &Span) -> Expr {
    e(ExprKind::Cond(Box::new(c), Box::new(a), Box::new(b)), span)
}

fn cast(t: TypeName, a: Expr, span: &Span) -> Expr {
    e(ExprKind::Cast(t, Box::new(a)), span)
}

fn call(f: &str, args: Vec<Expr>, span: &Span) -> Expr {
    e(
        ExprKind::Call {
            func: Ident {
                name: f.into(),
                span: span.clone(),
            },
            args,
        },
        span,
    )
}

/// The literal `v` of integer type `t` (a 64-bit one as the cast of its bit pattern).
fn int_lit(v: i64, t: TypeName, span: &Span) -> Expr {
    if matches!(t, TypeName::Long | TypeName::Ulong) {
        let bits = e(
            ExprKind::Int {
                value: v as u64,
                unsigned: true,
            },
            span,
        );
        return cast(t, bits, span);
    }
    if v < 0 {
        let pos = int_lit(-v, t, span);
        return e(ExprKind::Unary(UnOp::Neg, Box::new(pos)), span);
    }
    e(
        ExprKind::Int {
            value: v as u32 as u64,
            unsigned: t == TypeName::Uint,
        },
        span,
    )
}

/// The range of a `char`, `uchar`, `short` or `ushort`: the types whose values an `int`
/// holds with room to spare (C's integer promotion computes them as `int`).
fn small_range(t: TypeName) -> Option<(i64, i64)> {
    match t {
        TypeName::Char => Some((i8::MIN.into(), i8::MAX.into())),
        TypeName::Uchar => Some((0, u8::MAX.into())),
        TypeName::Short => Some((i16::MIN.into(), i16::MAX.into())),
        TypeName::Ushort => Some((0, u16::MAX.into())),
        _ => None,
    }
}

/// Expands an exact built-in over arguments that are pure (evaluating one twice is
/// harmless). `gen` is the arguments' type (OpenCL's `gentype`), `t` its promoted type, in
/// which the expansion computes. Definitions from the OpenCL C 1.2 specification,
/// §6.12.3 (integer functions) and §6.12.4/6.12.6 (common, relational): each expansion is
/// exact for every `int`/`uint` input (wrapping arithmetic is used only where the result is
/// known to fit). On `char`/`short` (signed or not) the exact `int` result is saturated
/// (`add_sat`, `sub_sat`) or converted back to `gen` (to its unsigned type for `abs` and
/// `abs_diff`), as the built-in returns a `gen`. `Err` names what is not supported.
pub fn expand(
    f: Exact,
    args: Vec<Expr>,
    gen: TypeName,
    t: TypeName,
    span: &Span,
) -> Result<Expr, String> {
    use Exact::*;
    use TypeName::*;
    if let (Some((lo, hi)), AddSat | SubSat) = (small_range(gen), f) {
        // The exact result fits in the `int` the operands promote to: clamp it.
        let mut a = args.into_iter();
        let (x, y) = (a.next().expect("arity"), a.next().expect("arity"));
        let op = if f == AddSat { BinOp::Add } else { BinOp::Sub };
        let r = bin(op, cast(Int, x, span), cast(Int, y, span), span);
        let (lo, hi) = (int_lit(lo, Int, span), int_lit(hi, Int, span));
        let over = bin(BinOp::Gt, r.clone(), hi.clone(), span);
        let under = bin(BinOp::Lt, r.clone(), lo.clone(), span);
        return Ok(cast(
            gen,
            cond(over, hi, cond(under, lo, r, span), span),
            span,
        ));
    }
    let back = match (small_range(gen), f) {
        (None, _) | (_, Select | Mad | Mul24 | Mad24 | IsNan | Core(_)) => None,
        (_, Abs | AbsDiff) => Some(match gen {
            Char | Uchar => Uchar,
            _ => Ushort,
        }),
        _ => Some(gen),
    };
    let e = expand_promoted(f, args, t, span)?;
    Ok(match back {
        Some(g) => cast(g, e, span),
        None => e,
    })
}

/// [`expand`] in the promoted type `t`.
fn expand_promoted(f: Exact, args: Vec<Expr>, t: TypeName, span: &Span) -> Result<Expr, String> {
    use Exact::*;
    use TypeName::*;
    let mut a = args.into_iter();
    let mut next = || a.next().expect("arity checked");
    let integer = matches!(t, Int | Uint | Long | Ulong);
    let unsigned = if matches!(t, Long | Ulong) {
        Ulong
    } else {
        Uint
    };
    Ok(match f {
        Min => call("min", vec![next(), next()], span),
        Max => call("max", vec![next(), next()], span),
        // clamp(x, lo, hi) = min(max(x, lo), hi)
        Clamp => {
            let (x, lo, hi) = (next(), next(), next());
            call("min", vec![call("max", vec![x, lo], span), hi], span)
        }
        // abs(x) is |x| as the unsigned type for integer x (abs(INT_MIN) = 2^31).
        Abs => {
            let x = next();
            if !integer {
                return Err("`abs` on a non-integer (use fabs)".into());
            }
            let neg = bin(BinOp::Lt, x.clone(), int_lit(0, t, span), span);
            let v = cond(
                neg,
                e(ExprKind::Unary(UnOp::Neg, Box::new(x.clone())), span),
                x,
                span,
            );
            cast(unsigned, v, span)
        }
        // abs_diff(x, y) = |x - y| without overflow, in the unsigned type.
        AbsDiff => {
            let (x, y) = (next(), next());
            if !integer {
                return Err("`abs_diff` on a non-integer".into());
            }
            let (ux, uy) = (
                cast(unsigned, x.clone(), span),
                cast(unsigned, y.clone(), span),
            );
            let gt = bin(BinOp::Gt, x, y, span);
            cond(
                gt,
                bin(BinOp::Sub, ux.clone(), uy.clone(), span),
                bin(BinOp::Sub, uy, ux, span),
                span,
            )
        }
        // add_sat / sub_sat: the exact result clamped to the type's range.
        AddSat | SubSat => {
            let (x, y) = (next(), next());
            let op = if f == AddSat { BinOp::Add } else { BinOp::Sub };
            let r = bin(op, x.clone(), y.clone(), span);
            match t {
                Uint | Ulong => {
                    // Wrapped iff the result is smaller (add) / larger (sub) than x.
                    let wrapped = bin(
                        if f == AddSat { BinOp::Lt } else { BinOp::Gt },
                        r.clone(),
                        x,
                        span,
                    );
                    let max = if t == Ulong { -1 } else { u32::MAX as i64 };
                    let limit = int_lit(if f == AddSat { max } else { 0 }, t, span);
                    cond(wrapped, limit, r, span)
                }
                Int | Long => {
                    // x + y overflows iff y > 0 and x > INT_MAX - y (or y < 0 and
                    // x < INT_MIN - y); x - y iff y < 0 and x > INT_MAX + y (or y > 0 and
                    // x < INT_MIN + y). The bounds themselves never overflow.
                    let zero = int_lit(0, t, span);
                    let (max, min) = if t == Long {
                        (int_lit(i64::MAX, t, span), int_lit(i64::MIN, t, span))
                    } else {
                        (
                            int_lit(i32::MAX as i64, t, span),
                            int_lit(i32::MIN as i64, t, span),
                        )
                    };
                    let (hi_y, lo_y, bound_op) = if f == AddSat {
                        (BinOp::Gt, BinOp::Lt, BinOp::Sub)
                    } else {
                        (BinOp::Lt, BinOp::Gt, BinOp::Add)
                    };
                    let over = bin(
                        BinOp::LogAnd,
                        bin(hi_y, y.clone(), zero.clone(), span),
                        bin(
                            BinOp::Gt,
                            x.clone(),
                            bin(bound_op, max.clone(), y.clone(), span),
                            span,
                        ),
                        span,
                    );
                    let under = bin(
                        BinOp::LogAnd,
                        bin(lo_y, y.clone(), zero, span),
                        bin(BinOp::Lt, x, bin(bound_op, min.clone(), y, span), span),
                        span,
                    );
                    cond(over, max, cond(under, min, r, span), span)
                }
                _ => return Err(format!("`{}` on a non-integer", name_of(f))),
            }
        }
        // hadd(x, y) = (x + y) >> 1 without overflow: (x >> 1) + (y >> 1) + (x & y & 1);
        // rhadd rounds up: ... + ((x | y) & 1).
        Hadd | Rhadd => {
            let (x, y) = (next(), next());
            if !integer {
                return Err(format!("`{}` on a non-integer", name_of(f)));
            }
            let one = int_lit(1, t, span);
            let half = |v: Expr| bin(BinOp::Shr, v, one.clone(), span);
            let low = if f == Hadd {
                bin(
                    BinOp::BitAnd,
                    bin(BinOp::BitAnd, x.clone(), y.clone(), span),
                    one.clone(),
                    span,
                )
            } else {
                bin(
                    BinOp::BitAnd,
                    bin(BinOp::BitOr, x.clone(), y.clone(), span),
                    one.clone(),
                    span,
                )
            };
            bin(
                BinOp::Add,
                bin(BinOp::Add, half(x), half(y), span),
                low,
                span,
            )
        }
        // select(a, b, c) = c ? b : a for scalars (nonzero c picks b).
        Select => {
            let (a, b, c) = (next(), next(), next());
            cond(c, b, a, span)
        }
        // bitselect(a, b, c) = (a & ~c) | (b & c), on the bits of a floating-point type.
        BitSelect => {
            let (a, b, c) = (next(), next(), next());
            let pick = |a: Expr, b: Expr, c: Expr| {
                let not_c = e(ExprKind::Unary(UnOp::BitNot, Box::new(c.clone())), span);
                bin(
                    BinOp::BitOr,
                    bin(BinOp::BitAnd, a, not_c, span),
                    bin(BinOp::BitAnd, b, c, span),
                    span,
                )
            };
            let (to, back) = match t {
                Float => ("as_uint", "as_float"),
                Double => ("as_ulong", "as_double"),
                _ => return Ok(pick(a, b, c)),
            };
            let bits = |x: Expr| call(to, vec![x], span);
            call(back, vec![pick(bits(a), bits(b), bits(c))], span)
        }
        // mad(a, b, c) = a * b + c (the specification allows any precision for mad).
        Mad => {
            let (x, y, z) = (next(), next(), next());
            bin(BinOp::Add, bin(BinOp::Mul, x, y, span), z, span)
        }
        // mul24/mad24: defined only for operands of 24 bits, where they equal x * y (+ z).
        Mul24 | Mad24 => {
            if !matches!(t, Int | Uint) {
                return Err(format!("`{}` on a non-integer", name_of(f)));
            }
            let p = bin(BinOp::Mul, next(), next(), span);
            if f == Mad24 {
                bin(BinOp::Add, p, next(), span)
            } else {
                p
            }
        }
        // The core's own function, on the operands' own type (`clz` counts a `uchar`'s
        // 8 bits).
        Core(g) => call(g.name(), (0..g.arity()).map(|_| next()).collect(), span),
        // isnan(x) = x != x, as an `int` (scalar relational functions return 0 or 1).
        IsNan => {
            let x = next();
            cast(Int, bin(BinOp::Ne, x.clone(), x, span), span)
        }
    })
}

fn name_of(f: Exact) -> &'static str {
    match f {
        Exact::AddSat => "add_sat",
        Exact::SubSat => "sub_sat",
        Exact::Hadd => "hadd",
        Exact::Rhadd => "rhadd",
        Exact::Mul24 => "mul24",
        Exact::Mad24 => "mad24",
        _ => "built-in",
    }
}
