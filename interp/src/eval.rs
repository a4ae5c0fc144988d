//! Expression evaluation ⟦e⟧ over an environment, shared by the reference semantics and by
//! launch-time evaluation of sizes. Reads of array elements go through [`Env::load`], so
//! the caller sees every element an expression reads (Definition 5.2's accesses).

use crate::codec::Repr;
use crate::fault::FaultKind;
use crate::launch::Launch;
use crate::monoid::Monoid;
use crate::value::{OpError, Value};
use lang::ast::BinOp;
use lang::core::{ArrayId, Builtin, Expr, ExprKind, IntFn, Lit, ParamId, Ty, VarId};

/// What an expression can read.
pub trait Env {
    /// A variable's value; an error when it is read before any assignment
    /// ([`crate::undef`]).
    fn var(&mut self, var: VarId) -> Result<Value, FaultKind>;
    fn param(&self, param: ParamId) -> Value;
    fn builtin(&self, builtin: Builtin) -> Value;
    fn monoid(&self) -> Monoid;
    /// Reads one element; `index` holds one entry per dimension, not yet bounds-checked.
    fn load(&mut self, array: ArrayId, index: &[i64]) -> Result<Value, FaultKind>;
    /// The launch the expression runs in (its arrays' element types and shapes).
    fn launch(&self) -> &Launch;
    /// A fault in the expression: `Err` stops the evaluation with it; `Ok` records it
    /// and goes on with the value [`crate::fault::FaultKind::continues`] gives.
    fn fault(&mut self, kind: FaultKind) -> Result<(), FaultKind> {
        Err(kind)
    }
}

pub fn lit(l: Lit) -> Value {
    match l {
        Lit::Int(v) => Value::Int(v),
        Lit::Uint(v) => Value::Uint(v),
        Lit::Bool(b) => Value::Bool(b),
        Lit::Float(f) => Value::float(f),
        Lit::Long(v) => Value::Long(v),
        Lit::Ulong(v) => Value::Ulong(v),
        Lit::Double(f) => Value::double(f),
    }
}

pub fn eval(e: &Expr, env: &mut impl Env) -> Result<Value, FaultKind> {
    Ok(match &e.kind {
        ExprKind::Lit(l) => lit(*l),
        ExprKind::Identity => env.monoid().identity(),
        ExprKind::Var(v) => env.var(*v)?,
        ExprKind::Param(p) => env.param(*p),
        ExprKind::Builtin(b) => env.builtin(*b),
        ExprKind::Load { array, index } => {
            let idx = eval_index(index, env)?;
            env.load(*array, &idx)?
        }
        ExprKind::Null => Value::Ptr(None, 0),
        ExprKind::Addr { array, offset } => {
            let off = eval(offset, env)?.as_i64().unwrap_or(0);
            Value::Ptr(Some(*array as u32), off)
        }
        ExprKind::PtrAdd(p, k) => {
            let k = eval(k, env)?.as_i64().unwrap_or(0);
            match eval(p, env)? {
                Value::Ptr(array, off) => Value::Ptr(array, off.wrapping_add(k)),
                v => unreachable!("the checker gives `+` on a pointer a pointer, not {v:?}"),
            }
        }
        ExprKind::Deref(p) => {
            let p = eval(p, env)?;
            match pointee(env.launch(), &p, e.ty) {
                Ok((array, idx)) => env.load(array, &idx)?,
                Err(kind) => {
                    env.fault(kind)?;
                    Value::default_of(e.ty, env.monoid())
                }
            }
        }
        ExprKind::Unary(op, a) => Value::unary(*op, &eval(a, env)?),
        ExprKind::Binary(BinOp::LogAnd, a, b) => {
            Value::Bool(eval(a, env)?.truthy() && eval(b, env)?.truthy())
        }
        ExprKind::Binary(BinOp::LogOr, a, b) => {
            Value::Bool(eval(a, env)?.truthy() || eval(b, env)?.truthy())
        }
        ExprKind::Binary(BinOp::Combine, a, b) => {
            let (x, y) = (eval(a, env)?, eval(b, env)?);
            env.monoid().combine(&x, &y)
        }
        ExprKind::Binary(op, a, b) => {
            let (x, y) = (eval(a, env)?, eval(b, env)?);
            match Value::binary(*op, &x, &y) {
                Ok(v) => v,
                Err(err) => {
                    env.fault(match err {
                        OpError::DivisionByZero => FaultKind::DivisionByZero {
                            dividend: x.to_string(),
                        },
                        OpError::ShiftRange(count) => FaultKind::ShiftRange { count },
                    })?;
                    Value::default_of(e.ty, env.monoid())
                }
            }
        }
        ExprKind::Cond(c, a, b) => {
            if eval(c, env)?.truthy() {
                eval(a, env)?
            } else {
                eval(b, env)?
            }
        }
        ExprKind::Cast(a) => eval(a, env)?.cast(e.ty),
        ExprKind::Bits(a) => {
            let v = eval(a, env)?;
            v.reinterpret(e.ty)
                .expect("the checker gives `Bits` a number of the result's size")
        }
        ExprKind::Log2(a) => log2(&eval(a, env)?, e.ty),
        ExprKind::Min(a, b) => min_max(true, eval(a, env)?, eval(b, env)?),
        ExprKind::Max(a, b) => min_max(false, eval(a, env)?, eval(b, env)?),
        ExprKind::Math(f, args) => {
            let mut xs = [0f32; 3];
            for (x, a) in xs.iter_mut().zip(args) {
                *x = match eval(a, env)? {
                    Value::Float(bits) => f32::from_bits(bits),
                    v => v.as_i64().unwrap_or(0) as f32,
                };
            }
            Value::Float(f.apply(&xs).to_bits())
        }
        ExprKind::IntFn(f, args) => {
            let vals: Vec<Value> = args
                .iter()
                .map(|a| eval(a, env))
                .collect::<Result<_, _>>()?;
            int_fn(*f, &vals, e.ty)
        }
    })
}

/// Integer function `f` on operands of one integer type (`upsample`: `hi`'s first),
/// giving a value of type `ty`: [`IntFn::apply`] on their bit patterns.
pub fn int_fn(f: IntFn, args: &[Value], ty: Ty) -> Value {
    let int_ty = |v: &Value| match v {
        Value::Char(_) => Ty::Char,
        Value::Uchar(_) => Ty::Uchar,
        Value::Short(_) => Ty::Short,
        Value::Ushort(_) => Ty::Ushort,
        Value::Int(_) => Ty::Int,
        Value::Uint(_) => Ty::Uint,
        Value::Long(_) => Ty::Long,
        _ => Ty::Ulong,
    };
    let word = |v: &Value| {
        Repr::of(int_ty(v), Monoid::IntAdd)
            .and_then(|r| r.encode(v))
            .expect("an integer operand")
    };
    let gen = int_ty(&args[0]);
    let words: Vec<u64> = args.iter().map(word).collect();
    let r = Repr::of(ty, Monoid::IntAdd).expect("an integer result");
    r.decode(f.apply(gen, &words))
}

/// `log2(v)` as a value of type `ty`: the floor of the base-2 logarithm, 0 for `v <= 0`.
pub fn log2(v: &Value, ty: Ty) -> Value {
    let v = v.as_i64().unwrap_or(0);
    let l = if v <= 0 {
        0
    } else {
        63 - v.leading_zeros() as i64
    };
    Value::Int(l as i32).cast(ty)
}

/// `min(x, y)` (`min` true) or `max(x, y)` on two values of the same type.
pub fn min_max(min: bool, x: Value, y: Value) -> Value {
    let x_less = Value::binary(BinOp::Lt, &x, &y)
        .map(|v| v.truthy())
        .unwrap_or(false);
    if min == x_less {
        x
    } else {
        y
    }
}

pub fn eval_index(index: &[Expr], env: &mut impl Env) -> Result<Vec<i64>, FaultKind> {
    index
        .iter()
        .map(|i| Ok(eval(i, env)?.as_i64().unwrap_or(0)))
        .collect()
}

/// The element a pointer value `p` points at, for an access of type `ty` through it: its
/// array and per-dimension index (row-major from the pointer's element offset; not yet
/// bounds-checked: the access checks it as `A[i]` does). A null pointer, or an access of
/// another type than the array's elements, is a fault.
pub fn pointee(launch: &Launch, p: &Value, ty: Ty) -> Result<(ArrayId, Vec<i64>), FaultKind> {
    let &Value::Ptr(array, off) = p else {
        unreachable!("the checker dereferences pointers only, not {p:?}")
    };
    let Some(array) = array else {
        return Err(FaultKind::NullPointer { offset: off });
    };
    let array = array as usize;
    let decl = &launch.kernel.arrays[array];
    if decl.elem != ty {
        return Err(FaultKind::PointerType {
            array: decl.name.clone(),
            offset: off,
            elem: decl.elem.name(),
            access: ty.name(),
        });
    }
    Ok((array, unflatten(off, &launch.dims[array])))
}

/// The per-dimension index of element offset `off` in an array of shape `dims`
/// (row-major); an offset before the array gives a negative first index.
pub fn unflatten(off: i64, dims: &[usize]) -> Vec<i64> {
    let mut index = vec![0; dims.len().max(1)];
    let mut rest = off;
    for (k, &d) in dims.iter().enumerate().skip(1).rev() {
        let d = d.max(1) as i64;
        index[k] = rest.rem_euclid(d);
        rest = rest.div_euclid(d);
    }
    index[0] = rest;
    index
}

/// Row-major offset of `index` in an array of shape `dims`, or `None` when out of bounds.
pub fn offset(index: &[i64], dims: &[usize]) -> Option<usize> {
    let mut off = 0usize;
    for (&i, &d) in index.iter().zip(dims) {
        if i < 0 || i as u64 >= d as u64 {
            return None;
        }
        off = off * d + i as usize;
    }
    Some(off)
}
