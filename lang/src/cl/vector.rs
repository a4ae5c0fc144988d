//! OpenCL C vector types (OpenCL C 1.2 §6.1.2, §6.1.6, §6.1.7, §6.3), scalarised by the
//! lowering: the core has no vector values, so a vector is its components.
//!
//! - A private `int4 v` is four scalar variables `v.x`, `v.y`, `v.z`, `v.w` (`v.s0` ...
//!   `v.sf` for 8 and 16 components); a by-value vector parameter of a helper and a helper's
//!   vector result likewise.
//! - An array of vectors (`__global float4 *G`, `__local int2 t[64]`) is an array of the
//!   element type, with OpenCL's memory layout: component `j` of element `i` is at
//!   `s*i + j`, where `s` is the number of components, or 4 for a 3-component vector
//!   (§6.1.5: a 3-vector takes the room of a 4-vector). A buffer's launch input therefore
//!   lists scalar components in memory order, `s` per vector. Races and bounds are checked
//!   per component: a vector store is one access per component, so two work-items writing
//!   different components of one element do not race (as with byte ranges on a device).
//!   The core array records its `lanes` so that messages name a slot as `G[3].y`. A
//!   pointer variable `float4 *r` into such an array counts whole vectors; a `float *` view
//!   of it sees the slots. Private and `__constant` arrays of vectors have the same layout.
//! - A by-value vector kernel parameter is one scalar parameter per component (`mask.x`).
//! - `shuffle`/`shuffle2` pick components by the low bits of a mask vector.
//! - Component access, swizzles and `.lo/.hi/.even/.odd` pick components; a swizzle with a
//!   repeated component cannot be assigned to (§6.1.7). Literals `(int4)(a, (int2)(b, c), d)`
//!   and a single scalar (splat), element-wise operators with a scalar operand widened to
//!   every component (§6.2.6); relational, equality and logical operators and `!` give -1
//!   (true) or 0 per component in an `int` vector (§6.3), and a vector condition of `?:`
//!   selects per component by the condition's most significant bit, like `select` (§6.3.i).
//! - `convert_T` (default rounding only: as a C cast) and `as_T` between `int` and `uint`
//!   vectors of one length (the same bits); the element-wise built-ins of
//!   [`super::builtins::Exact`] component by component; `any`/`all`.
//!
//! An assignment of a vector evaluates every component of the value before it stores the
//! first one, so `v = v.yx` swaps.

use super::vecdyn::VecPlaces;
use super::*;

/// A vector value: one pure expression per component.
pub(super) struct VecVal {
    pub elem: TypeName,
    pub comps: Vec<k::Expr>,
}

/// Scalar slots in memory per element of an `n`-vector (§6.1.5).
pub fn stride(n: u8) -> u8 {
    if n == 3 {
        4
    } else {
        n
    }
}

/// The OpenCL spelling of a scalar type, for messages.
fn scalar_name(t: TypeName) -> &'static str {
    crate::check::ty_of(t).name()
}

/// The OpenCL spelling of a vector type, for messages.
pub(super) fn vec_name(elem: TypeName, n: u8) -> String {
    format!("{}{n}", scalar_name(elem))
}

/// The name of component `i` of an `n`-vector variable.
fn comp_name(i: usize, n: u8) -> String {
    if n <= 4 {
        ["x", "y", "z", "w"][i].to_string()
    } else {
        format!("s{i:x}")
    }
}

/// The components (indices) that `.field` names on an `n`-vector (§6.1.7).
pub(super) fn swizzle(field: &str, n: u8) -> Result<Vec<usize>, String> {
    let n = n as usize;
    let half = n.div_ceil(2);
    let picked: Vec<usize> = match field {
        "lo" => (0..half).collect(),
        "hi" => (half..2 * half).collect(),
        "even" => (0..half).map(|i| 2 * i).collect(),
        "odd" => (0..half).map(|i| 2 * i + 1).collect(),
        _ if field.len() > 1 && (field.starts_with('s') || field.starts_with('S')) => field[1..]
            .chars()
            .map(|c| {
                c.to_digit(16)
                    .map(|d| d as usize)
                    .ok_or_else(|| format!("`.{field}` is not a component of a vector"))
            })
            .collect::<Result<_, _>>()?,
        _ => field
            .chars()
            .map(|c| {
                "xyzw"
                    .find(c)
                    .ok_or_else(|| format!("`.{field}` is not a component of a vector"))
            })
            .collect::<Result<_, _>>()?,
    };
    if let Some(&bad) = picked.iter().find(|&&i| i >= n) {
        return Err(if n == 3 && bad == 3 {
            format!("`.{field}` of a 3-component vector names its undefined 4th component")
        } else {
            format!("`.{field}` names a component a {n}-component vector does not have")
        });
    }
    if ![1, 2, 3, 4, 8, 16].contains(&picked.len()) {
        return Err(format!(
            "`.{field}` picks {} components (a vector has 2, 3, 4, 8 or 16)",
            picked.len()
        ));
    }
    Ok(picked)
}

/// `int`, `uint`, `float4`, ... as in `convert_T` and `as_T`: element type name and length
/// (`None` for a scalar).
fn type_word(w: &str) -> Option<(&str, Option<u8>)> {
    let digits = w.trim_start_matches(|c: char| c.is_ascii_alphabetic());
    let name = &w[..w.len() - digits.len()];
    let n = match digits {
        "" => None,
        d => Some(
            d.parse::<u8>()
                .ok()
                .filter(|n| [2, 3, 4, 8, 16].contains(n))?,
        ),
    };
    [
        "char", "uchar", "short", "ushort", "int", "uint", "long", "ulong", "half", "float",
        "double", "bool",
    ]
    .contains(&name)
    .then_some((name, n))
}

fn is_relational(op: BinOp) -> bool {
    use BinOp::*;
    matches!(op, Lt | Le | Gt | Ge | Eq | Ne | LogAnd | LogOr)
}

fn int(value: i64, span: &Span) -> k::Expr {
    if value < 0 {
        ex(
            k::ExprKind::Unary(
                UnOp::Neg,
                Box::new(ex(
                    k::ExprKind::Int {
                        value: value.unsigned_abs(),
                        unsigned: false,
                    },
                    span,
                )),
            ),
            span,
        )
    } else {
        ex(
            k::ExprKind::Int {
                value: value as u64,
                unsigned: false,
            },
            span,
        )
    }
}

/// `c ? -1 : 0`: a vector relational result component (§6.3).
/// The component type of a vector comparison (also `!`, `&&`, `||`, `isnan`) of `elem`
/// vectors: the signed integer type of `elem`'s size (OpenCL C 1.2 §6.3.d-g).
pub(super) fn rel_type(elem: TypeName) -> TypeName {
    use TypeName::*;
    match elem {
        Char | Uchar => Char,
        Short | Ushort => Short,
        Long | Ulong | Double => Long,
        _ => Int,
    }
}

/// A vector comparison's component: -1 where condition `c` holds, 0 where not, of the
/// comparison type of `elem` vectors.
fn mask(c: k::Expr, elem: TypeName, span: &Span) -> k::Expr {
    let m = ex(
        k::ExprKind::Cond(Box::new(c), Box::new(int(-1, span)), Box::new(int(0, span))),
        span,
    );
    match rel_type(elem) {
        TypeName::Int => m,
        t => ex(k::ExprKind::Cast(t, Box::new(m)), span),
    }
}

fn bin(op: BinOp, a: k::Expr, b: k::Expr, span: &Span) -> k::Expr {
    ex(k::ExprKind::Binary(op, Box::new(a), Box::new(b)), span)
}

fn is_literal(e: &k::Expr) -> bool {
    matches!(
        e.kind,
        k::ExprKind::Int { .. } | k::ExprKind::Float(_) | k::ExprKind::Bool(_)
    )
}

/// Whether evaluating `e` may read one of `vars` or (with `memory`) an array element.
fn reads(e: &k::Expr, vars: &HashSet<String>, memory: bool) -> bool {
    use k::ExprKind as E;
    match &e.kind {
        E::Name(n) => vars.contains(n),
        E::Index { indices, .. } => memory || indices.iter().any(|i| reads(i, vars, memory)),
        E::Unary(_, a) | E::Cast(_, a) => reads(a, vars, memory),
        E::Binary(_, a, b) => reads(a, vars, memory) || reads(b, vars, memory),
        E::Cond(a, b, c) => [a, b, c].iter().any(|x| reads(x, vars, memory)),
        E::Call { args, .. } => args.iter().any(|x| reads(x, vars, memory)),
        E::Int { .. } | E::Float(_) | E::Double(_) | E::Bool(_) | E::Identity => false,
    }
}

/// `++`/`--` of each of the slots `lvs`.
fn steps(lvs: &[k::LValue], decrement: bool, span: &Span) -> Vec<k::Stmt> {
    (lvs.iter())
        .map(|lv| {
            st(
                k::StmtKind::Step {
                    target: lv.clone(),
                    decrement,
                },
                span,
            )
        })
        .collect()
}

/// The name under `A[i]...`, `*A`, `*(A + i)` and the number of subscripts.
fn subscripted(e: &cl::Expr) -> Option<(&str, usize)> {
    use cl::ExprKind as E;
    let mut depth = 0;
    let mut cur = e;
    loop {
        match &cur.kind {
            E::Index(a, _) => {
                depth += 1;
                cur = a;
            }
            E::Deref(p) => {
                depth += 1;
                cur = match &p.kind {
                    E::Binary(BinOp::Add | BinOp::Sub, a, _) => a,
                    _ => p,
                };
            }
            E::Name(n) => return (depth > 0).then_some((n.as_str(), depth)),
            _ => return None,
        }
    }
}

impl<'u> Lowerer<'u> {
    /// `(element, n)` of a vector base type; an error if its element type is not modelled.
    pub(super) fn vec_base(&self, b: &cl::Base, span: &Span) -> Res<Option<(TypeName, u8)>> {
        let cl::Base::Vector(e, n) = b else {
            return Ok(None);
        };
        let t = self.base(e, span).map_err(|mut d| {
            d.message = format!("{} (as the element type of `{}`)", d.message, b.name());
            d
        })?;
        if t == TypeName::Bool {
            return Err(Diagnostic::new(
                "OpenCL C has no `bool` vectors",
                span.clone(),
            ));
        }
        Ok(Some((t, *n)))
    }

    /// The vector shape of a full type: a vector, not a pointer or array of them.
    pub(super) fn type_shape(&self, t: &cl::Type) -> Res<Option<(TypeName, u8)>> {
        if !t.pointers.is_empty() || !t.arrays.is_empty() {
            return Ok(None);
        }
        self.vec_base(&t.base, &t.span)
    }

    /// A helper's pointer parameter of type `param` may name `array` only if both see the
    /// memory as elements of one length: a `float *` view of a `float4` buffer is a pointer
    /// cast, not supported yet.
    pub(super) fn same_lanes(&self, param: &cl::Type, array: &str, span: &Span) -> Res<()> {
        let want = self.vec_base(&param.base, &param.span)?.map_or(1, |s| s.1);
        let have = self.vec_arrays.get(array).copied().unwrap_or(1);
        if want != have {
            return unsupported(
                "passing a pointer as one to another element type (pointer casts)",
                span,
            );
        }
        Ok(())
    }

    /// The vector type of an OpenCL expression, if it has one (decided before lowering it).
    pub(super) fn vec_shape(&self, e: &cl::Expr) -> Option<(TypeName, u8)> {
        use cl::ExprKind as E;
        match &e.kind {
            E::Name(n) => match self.lookup(n)? {
                Binding::Vector { elem, comps } => Some((*elem, comps.len() as u8)),
                Binding::Cell(a) => self.vec_arrays.get(a).map(|n| (self.arrays[a].0, *n)),
                _ => None,
            },
            E::Index(..) | E::Deref(_) => {
                let (name, depth) = subscripted(e)?;
                match self.lookup(name)? {
                    Binding::Array(a) => {
                        let (elem, dims) = self.arrays.get(a)?;
                        let n = *self.vec_arrays.get(a)?;
                        (depth == *dims).then_some((*elem, n))
                    }
                    // A pointer sees its target's elements as its own type says.
                    Binding::Ptr(v) => {
                        let p = self.pointers.vars.get(v)?;
                        (depth == 1 && p.lanes > 1).then_some((p.elem, p.lanes))
                    }
                    _ => None,
                }
            }
            E::Member {
                base,
                field,
                arrow: false,
            } => {
                let (t, n) = self.vec_shape(base)?;
                let len = swizzle(&field.name, n).ok()?.len();
                (len > 1).then_some((t, len as u8))
            }
            E::VecLit(t, _) | E::Cast(t, _) => self.type_shape(t).ok().flatten(),
            E::Unary(UnOp::Not, a) => self.vec_shape(a).map(|(t, n)| (rel_type(t), n)),
            E::Unary(_, a) | E::Plus(a) | E::IncDec(_, a) => self.vec_shape(a),
            E::Binary(op, a, b) => {
                let (t, n) = self.vec_shape(a).or_else(|| self.vec_shape(b))?;
                Some((if is_relational(*op) { rel_type(t) } else { t }, n))
            }
            E::Assign { target, .. } => self.vec_shape(target),
            E::Cond(c, a, b) => self
                .vec_shape(a)
                .or_else(|| self.vec_shape(b))
                .or_else(|| self.vec_shape(c)),
            E::Comma(_, b) => self.vec_shape(b),
            E::Call { func, args } => self.call_shape(&func.name, args),
            _ => None,
        }
    }

    fn call_shape(&self, name: &str, args: &[cl::Expr]) -> Option<(TypeName, u8)> {
        if let Some(f) = self.funcs.get(name) {
            return self.type_shape(&f.ret).ok().flatten();
        }
        if name.starts_with("__return_val_") {
            return self.returned_vector().map(|(c, t)| (t, c.len() as u8));
        }
        match builtins::lookup(name)? {
            Builtin::Image => self.image_shape(name, args),
            Builtin::Convert if name.starts_with("as_") => {
                let (elem, n) = type_word(&name["as_".len()..])?;
                Some((super::bitcast::scalar_type(elem)?, n?))
            }
            Builtin::Convert => {
                let word = name.split('_').nth(1)?;
                let (elem, n) = type_word(word)?;
                let base = match elem {
                    "int" => TypeName::Int,
                    "uint" => TypeName::Uint,
                    "float" => TypeName::Float,
                    _ => return None,
                };
                Some((base, n?))
            }
            Builtin::Exact(builtins::Exact::IsNan) => {
                self.vec_shape(args.first()?).map(|(t, n)| (rel_type(t), n))
            }
            Builtin::Exact(builtins::Exact::Core(f)) => {
                // `upsample` widens: `upsample(char4, uchar4)` is a `short4`.
                use TypeName::*;
                let (t, n) = args.iter().find_map(|a| self.vec_shape(a))?;
                if f != crate::core::IntFn::Upsample {
                    return Some((t, n));
                }
                let wide = match t {
                    Char => Short,
                    Uchar => Ushort,
                    Short => Int,
                    Ushort => Uint,
                    Int => Long,
                    Uint => Ulong,
                    _ => return None,
                };
                Some((wide, n))
            }
            Builtin::Exact(_) => args.iter().find_map(|a| self.vec_shape(a)),
            Builtin::Shuffle => {
                let (elem, _) = self.vec_shape(args.first()?)?;
                let (_, n) = self.vec_shape(args.last()?)?;
                Some((elem, n))
            }
            Builtin::Math(m) => {
                let (_, n) = args.iter().find_map(|a| self.vec_shape(a))?;
                let int = matches!(m, builtins::Math::IsInf | builtins::Math::IsFinite);
                Some((if int { TypeName::Int } else { TypeName::Float }, n))
            }
            _ => None,
        }
    }

    /// The variables receiving the vector the current helper returns, if it returns one.
    fn returned_vector(&self) -> Option<(Vec<String>, TypeName)> {
        let frame = self.frames.last().filter(|_| self.frames.len() > 1)?;
        frame.vresult.clone()
    }

    /// The error for a vector where the language needs a scalar.
    pub(super) fn not_scalar<T>(&self, e: &cl::Expr) -> Res<T> {
        let what = self.vec_shape(e).map_or("a vector".to_string(), |(t, n)| {
            format!("a vector (`{}`)", vec_name(t, n))
        });
        Err(Diagnostic::new(
            format!("{what} where a scalar is needed"),
            e.span.clone(),
        ))
    }

    /// `e` itself if evaluating it again is free and reads nothing that can change (a
    /// name or a literal), else a temporary holding it.
    pub(super) fn once(
        &mut self,
        e: k::Expr,
        fallback: TypeName,
        pre: &mut Vec<k::Stmt>,
    ) -> k::Expr {
        if is_literal(&e) || matches!(e.kind, k::ExprKind::Name(_)) {
            return e;
        }
        let span = e.span.clone();
        let ty = self.type_of(&e).unwrap_or(fallback);
        let t = self.temp("v", ty, Some(e), &span, pre);
        name_expr(&t, &span)
    }

    /// `e` converted to `to` (C's conversion) unless it already has that type.
    fn conv(&self, e: k::Expr, to: TypeName) -> k::Expr {
        if self.type_of(&e) == Some(to) {
            return e;
        }
        let span = e.span.clone();
        ex(k::ExprKind::Cast(to, Box::new(e)), &span)
    }

    /// The value of `e` as an `n`-vector of `elem`: a vector of exactly that type, or a
    /// scalar converted and widened to every component (§6.2.6).
    pub(super) fn vec_value(
        &mut self,
        e: &cl::Expr,
        (elem, n): (TypeName, u8),
        pre: &mut Vec<k::Stmt>,
    ) -> Res<Vec<k::Expr>> {
        if self.vec_shape(e).is_some() {
            let v = self.vec_expr(e, pre)?;
            if v.elem != elem || v.comps.len() != n as usize {
                return Err(Diagnostic::new(
                    format!(
                        "a `{}` where a `{}` is needed (vector types convert only with `convert_{}`)",
                        vec_name(v.elem, v.comps.len() as u8),
                        vec_name(elem, n),
                        vec_name(elem, n)
                    ),
                    e.span.clone(),
                ));
            }
            return Ok(v.comps);
        }
        let x = self.expr(e, pre)?;
        let x = self.conv(x, elem);
        let x = self.once(x, elem, pre);
        Ok(vec![x; n as usize])
    }

    /// Per-component index lists of element `indices` of vector array `array`.
    pub(super) fn slots(
        &mut self,
        array: &str,
        mut indices: Vec<k::Expr>,
        pre: &mut Vec<k::Stmt>,
    ) -> Vec<Vec<k::Expr>> {
        let n = self.vec_arrays[array];
        let last = indices.pop().expect("an array has a dimension");
        let span = last.span.clone();
        let last = self.once(last, TypeName::Int, pre);
        let base = bin(BinOp::Mul, last, int(stride(n) as i64, &span), &span);
        (0..n as i64)
            .map(|c| {
                let mut idx = indices.clone();
                idx.push(if c == 0 {
                    base.clone()
                } else {
                    bin(BinOp::Add, base.clone(), int(c, &span), &span)
                });
                idx
            })
            .collect()
    }

    /// A vector expression, lowered to its components; side effects go to `pre`.
    pub(super) fn vec_expr(&mut self, e: &cl::Expr, pre: &mut Vec<k::Stmt>) -> Res<VecVal> {
        use cl::ExprKind as E;
        let span = &e.span;
        let Some((elem, n)) = self.vec_shape(e) else {
            return Err(Diagnostic::new("a vector is needed here", span.clone()));
        };
        let comps = match &e.kind {
            E::Name(_) | E::Index(..) | E::Deref(_) => self.vec_places(e, pre)?.read(span),
            E::Member { base, field, .. } => {
                let v = self.vec_expr(base, pre)?;
                let idx = swizzle(&field.name, v.comps.len() as u8)
                    .map_err(|m| Diagnostic::new(m, field.span.clone()))?;
                idx.into_iter().map(|i| v.comps[i].clone()).collect()
            }
            E::VecLit(_, items) => self.vec_items(items, (elem, n), span, pre)?,
            E::Cast(_, a) => {
                if self.vec_shape(a).is_some() {
                    return Err(Diagnostic::new(
                        format!(
                            "a cast between vector types: use `convert_{}`",
                            vec_name(elem, n)
                        ),
                        span.clone(),
                    ));
                }
                self.vec_value(a, (elem, n), pre)?
            }
            E::Unary(op, a) => {
                let v = self.vec_expr(a, pre)?;
                v.comps
                    .into_iter()
                    .map(|c| match op {
                        UnOp::Not => mask(
                            ex(k::ExprKind::Unary(UnOp::Not, Box::new(c)), span),
                            v.elem,
                            span,
                        ),
                        _ => ex(k::ExprKind::Unary(*op, Box::new(c)), span),
                    })
                    .collect()
            }
            E::Plus(a) => self.vec_expr(a, pre)?.comps,
            E::IncDec(op, target) => {
                let places = self.vec_places(target, pre)?;
                self.vec_writable(&places, span)?;
                let dec = matches!(op, cl::IncDec::PreDec | cl::IncDec::PostDec);
                let post = matches!(op, cl::IncDec::PostInc | cl::IncDec::PostDec);
                let mut old = Vec::new();
                if post {
                    for v in places.read(span) {
                        let t = self.temp("old", places.elem, Some(v), span, pre);
                        old.push(name_expr(&t, span));
                    }
                }
                pre.extend(places.write(span, |lvs| steps(lvs, dec, span)));
                if post {
                    old
                } else {
                    places.read(span)
                }
            }
            E::Binary(op, a, b) => self.vec_binary(*op, a, b, span, pre)?,
            E::Assign { .. } => self.vec_assign(e, pre)?.read(span),
            E::Cond(c, a, b) => self.vec_cond(c, a, b, (elem, n), span, pre)?,
            E::Comma(a, b) => {
                self.effect(a, pre)?;
                self.vec_expr(b, pre)?.comps
            }
            E::Call { func, args } => self.vec_call(func, args, (elem, n), span, pre)?,
            _ => return self.not_scalar(e),
        };
        Ok(VecVal { elem, comps })
    }

    /// The components of a vector literal `(T)(items)` (§6.1.6).
    fn vec_items(
        &mut self,
        items: &[cl::Expr],
        (elem, n): (TypeName, u8),
        span: &Span,
        pre: &mut Vec<k::Stmt>,
    ) -> Res<Vec<k::Expr>> {
        if let [one] = items {
            if self.vec_shape(one).is_none() {
                return self.vec_value(one, (elem, n), pre);
            }
        }
        let mut comps = Vec::new();
        for it in items {
            if let Some((t, m)) = self.vec_shape(it) {
                comps.extend(self.vec_value(it, (elem, m), pre).map_err(|_| {
                    Diagnostic::new(
                        format!(
                            "a `{}` in a `{}` literal (its parts must have its element type)",
                            vec_name(t, m),
                            vec_name(elem, n)
                        ),
                        it.span.clone(),
                    )
                })?);
            } else {
                let x = self.expr(it, pre)?;
                comps.push(self.conv(x, elem));
            }
        }
        if comps.len() != n as usize {
            return Err(Diagnostic::new(
                format!(
                    "a `{}` literal needs {n} components; these give {}",
                    vec_name(elem, n),
                    comps.len()
                ),
                span.clone(),
            ));
        }
        Ok(comps)
    }

    fn vec_binary(
        &mut self,
        op: BinOp,
        a: &cl::Expr,
        b: &cl::Expr,
        span: &Span,
        pre: &mut Vec<k::Stmt>,
    ) -> Res<Vec<k::Expr>> {
        let (sa, sb) = (self.vec_shape(a), self.vec_shape(b));
        let shape = match (sa, sb) {
            (Some(x), Some(y)) if x != y => {
                return Err(Diagnostic::new(
                    format!(
                        "`{}` between a `{}` and a `{}` (vector operands must have one type)",
                        op.symbol(),
                        vec_name(x.0, x.1),
                        vec_name(y.0, y.1)
                    ),
                    span.clone(),
                ))
            }
            (Some(x), _) | (None, Some(x)) => x,
            (None, None) => unreachable!("a vector operand"),
        };
        let va = self.vec_value(a, shape, pre)?;
        let vb = self.vec_value(b, shape, pre)?;
        Ok(va
            .into_iter()
            .zip(vb)
            .map(|(x, y)| {
                let r = bin(op, x, shift_count(op, Some(shape.0), y, span), span);
                if is_relational(op) {
                    mask(r, shape.0, span)
                } else {
                    r
                }
            })
            .collect())
    }

    /// The most significant bit of an integer component, as a condition.
    fn msb(&self, c: k::Expr, span: &Span) -> Res<k::Expr> {
        use TypeName::*;
        match self.type_of(&c) {
            Some(Char | Short | Int | Long) => Ok(bin(BinOp::Lt, c, int(0, span), span)),
            Some(t @ (Uchar | Ushort | Uint | Ulong)) => {
                // Signed, the component is negative exactly when its top bit is set.
                let signed = ex(k::ExprKind::Cast(rel_type(t), Box::new(c)), span);
                Ok(bin(BinOp::Lt, signed, int(0, span), span))
            }
            _ => Err(Diagnostic::new(
                "a vector condition must have an integer element type",
                span.clone(),
            )),
        }
    }

    fn vec_cond(
        &mut self,
        c: &cl::Expr,
        a: &cl::Expr,
        b: &cl::Expr,
        shape: (TypeName, u8),
        span: &Span,
        pre: &mut Vec<k::Stmt>,
    ) -> Res<Vec<k::Expr>> {
        if let Some((_, m)) = self.vec_shape(c) {
            // §6.3.i: `c ? a : b` with a vector `c` is `select(b, a, c)`: every operand is
            // evaluated and each component chosen by the most significant bit of `c`'s.
            let vc = self.vec_expr(c, pre)?;
            if m != shape.1 {
                return Err(Diagnostic::new(
                    "the condition and the values of `?:` must have one length",
                    span.clone(),
                ));
            }
            let va = self.vec_value(a, shape, pre)?;
            let vb = self.vec_value(b, shape, pre)?;
            let mut out = Vec::new();
            for ((x, y), z) in vc.comps.into_iter().zip(va).zip(vb) {
                let x = self.once(x, TypeName::Int, pre);
                let t = self.msb(x, span)?;
                out.push(ex(
                    k::ExprKind::Cond(Box::new(t), Box::new(y), Box::new(z)),
                    span,
                ));
            }
            return Ok(out);
        }
        let c = self.expr(c, pre)?;
        let c = self.once(c, TypeName::Bool, pre);
        let (mut pa, mut pb) = (Vec::new(), Vec::new());
        let va = self.vec_value(a, shape, &mut pa)?;
        let vb = self.vec_value(b, shape, &mut pb)?;
        if pa.is_empty() && pb.is_empty() {
            return Ok(va
                .into_iter()
                .zip(vb)
                .map(|(x, y)| {
                    ex(
                        k::ExprKind::Cond(Box::new(c.clone()), Box::new(x), Box::new(y)),
                        span,
                    )
                })
                .collect());
        }
        let mut out = Vec::new();
        for (x, y) in va.into_iter().zip(vb) {
            let t = self.temp("cond", shape.0, None, span, pre);
            pa.push(set(&t, x, span));
            pb.push(set(&t, y, span));
            out.push(name_expr(&t, span));
        }
        pre.push(if_then(c, pa, Some(pb), span));
        Ok(out)
    }

    /// A call with a vector result: an inlined helper, a conversion, an element-wise
    /// built-in.
    fn vec_call(
        &mut self,
        func: &cl::Ident,
        args: &[cl::Expr],
        (elem, n): (TypeName, u8),
        span: &Span,
        pre: &mut Vec<k::Stmt>,
    ) -> Res<Vec<k::Expr>> {
        if let Some(f) = self.funcs.get(func.name.as_str()).copied() {
            let comps = self.inline_vec(f, args, (elem, n), span, pre)?;
            return Ok(comps.iter().map(|c| name_expr(c, span)).collect());
        }
        if func.name.starts_with("__return_val_") {
            // `__return_val_int4()` in a helper's `__ensures`: the vector it returns.
            let (comps, _) = self.returned_vector().expect("vec_shape found it");
            return Ok(comps.iter().map(|c| name_expr(c, span)).collect());
        }
        match builtins::lookup(&func.name) {
            Some(Builtin::Shuffle) => self.shuffle(func, args, span, pre),
            Some(Builtin::Image) => self.image_vec(func, args, span, pre),
            Some(Builtin::Convert) if func.name.starts_with("as_") => {
                self.as_bits(func, args, n, span, pre)
            }
            Some(Builtin::Convert) => {
                let (from, comps) = self.conversion_arg(func, args, Some(n), span, pre)?;
                self.convert(func, from, elem, comps, span)
            }
            Some(Builtin::Exact(f)) => {
                if args.len() != f.arity() {
                    return Err(Diagnostic::new(
                        format!("`{}` takes {} arguments", func.name, f.arity()),
                        span.clone(),
                    ));
                }
                let shape = args
                    .iter()
                    .find_map(|a| self.vec_shape(a))
                    .expect("a vector argument");
                let mut lowered = Vec::new();
                for a in args {
                    let s = match self.vec_shape(a) {
                        Some(s) => s,
                        // A scalar argument keeps its own type (e.g. `clamp(v, 0.0f, 1.0f)`).
                        None => (shape.0, shape.1),
                    };
                    let comps = self.vec_value(a, s, pre)?;
                    let mut once = Vec::new();
                    for c in comps {
                        once.push(self.once(c, s.0, pre));
                    }
                    lowered.push(once);
                }
                let mut out = Vec::new();
                for i in 0..shape.1 as usize {
                    let at: Vec<k::Expr> = lowered.iter().map(|a| a[i].clone()).collect();
                    out.push(match f {
                        builtins::Exact::Select => {
                            let t = self.msb(at[2].clone(), span)?;
                            ex(
                                k::ExprKind::Cond(
                                    Box::new(t),
                                    Box::new(at[1].clone()),
                                    Box::new(at[0].clone()),
                                ),
                                span,
                            )
                        }
                        builtins::Exact::IsNan => {
                            let r = builtins::expand(f, at, shape.0, promote(shape.0), span)
                                .map_err(|m| {
                                    Diagnostic::new(format!("not supported yet: {m}"), span.clone())
                                })?;
                            mask(r, shape.0, span)
                        }
                        _ => builtins::expand(f, at, shape.0, promote(shape.0), span).map_err(
                            |m| Diagnostic::new(format!("not supported yet: {m}"), span.clone()),
                        )?,
                    });
                }
                Ok(out)
            }
            Some(Builtin::Math(m)) => self.math_vec(m, func, args, n, span, pre),
            _ => unsupported(format!("vector built-ins (`{}`)", func.name), &func.span),
        }
    }

    /// The argument of `convert_T`/`as_T`/`any`/`all`: its element type and components
    /// (one for a scalar); `want` is the result's length, which the argument must have.
    pub(super) fn conversion_arg(
        &mut self,
        func: &cl::Ident,
        args: &[cl::Expr],
        want: Option<u8>,
        span: &Span,
        pre: &mut Vec<k::Stmt>,
    ) -> Res<(TypeName, Vec<k::Expr>)> {
        let [a] = args else {
            return Err(Diagnostic::new(
                format!("`{}` takes one argument", func.name),
                span.clone(),
            ));
        };
        let (from, comps) = match self.vec_shape(a) {
            Some(_) => {
                let v = self.vec_expr(a, pre)?;
                (v.elem, v.comps)
            }
            None => {
                let x = self.expr(a, pre)?;
                let t = self.type_of(&x).unwrap_or(TypeName::Int);
                (t, vec![x])
            }
        };
        if let Some(n) = want {
            if comps.len() != n as usize {
                return Err(Diagnostic::new(
                    format!(
                        "`{}` needs an argument of {n} components; this one has {}",
                        func.name,
                        comps.len()
                    ),
                    a.span.clone(),
                ));
            }
        }
        Ok((from, comps))
    }

    /// `convert_T(x)` (default rounding: a C cast, §6.2.3; `as_T` is [`super::bitcast`]).
    fn convert(
        &mut self,
        func: &cl::Ident,
        from: TypeName,
        to: TypeName,
        comps: Vec<k::Expr>,
        span: &Span,
    ) -> Res<Vec<k::Expr>> {
        let name = func.name.as_str();
        let mut parts = name.splitn(3, '_').skip(1);
        let word = parts.next().unwrap_or("");
        if let Some(mode) = parts.next() {
            return unsupported(format!("conversions with `_{mode}` (`{name}`)"), &func.span);
        }
        let Some((base, _)) = type_word(word) else {
            return Err(Diagnostic::new(
                format!("unknown function `{name}`"),
                func.span.clone(),
            ));
        };
        if !["int", "uint", "float"].contains(&base) {
            return unsupported(format!("the type `{base}` (in `{name}`)"), &func.span);
        }
        if from == TypeName::Bool || from == TypeName::Generic {
            return Err(Diagnostic::new(
                format!("`{name}` of a `{}`", scalar_name(from)),
                span.clone(),
            ));
        }
        Ok(comps
            .into_iter()
            .map(|c| {
                if from == to {
                    c
                } else {
                    ex(k::ExprKind::Cast(to, Box::new(c)), span)
                }
            })
            .collect())
    }

    /// The scalar-valued vector-related built-ins: `convert_T`/`as_T` of a scalar,
    /// `any`/`all` (1 if the most significant bit of any/every component is set, §6.12.6).
    pub(super) fn vector_builtin(
        &mut self,
        func: &cl::Ident,
        args: &[cl::Expr],
        span: &Span,
        pre: &mut Vec<k::Stmt>,
    ) -> Res<k::Expr> {
        let name = func.name.as_str();
        if name == "any" || name == "all" {
            let (_, comps) = self.conversion_arg(func, args, None, span, pre)?;
            let mut tests = Vec::new();
            for c in comps {
                let c = self.once(c, TypeName::Int, pre);
                tests.push(self.msb(c, span)?);
            }
            let op = if name == "any" {
                BinOp::LogOr
            } else {
                BinOp::LogAnd
            };
            let t = tests
                .into_iter()
                .reduce(|a, b| bin(op, a, b, span))
                .expect("one component at least");
            return Ok(ex(
                k::ExprKind::Cond(Box::new(t), Box::new(int(1, span)), Box::new(int(0, span))),
                span,
            ));
        }
        if name.starts_with("as_") {
            let mut v = self.as_bits(func, args, 1, span, pre)?;
            return Ok(v.remove(0));
        }
        let word = name.split('_').nth(1).unwrap_or("");
        let to = match type_word(word) {
            Some(("int", None)) => TypeName::Int,
            Some(("uint", None)) => TypeName::Uint,
            Some(("float", None)) => TypeName::Float,
            Some((_, Some(_))) => {
                return Err(Diagnostic::new(
                    format!("`{name}` gives a vector where a scalar is needed"),
                    span.clone(),
                ))
            }
            Some((base, None)) => {
                return unsupported(format!("the type `{base}` (in `{name}`)"), &func.span)
            }
            None => {
                return Err(Diagnostic::new(
                    format!("unknown function `{name}`"),
                    func.span.clone(),
                ))
            }
        };
        let (from, comps) = self.conversion_arg(func, args, Some(1), span, pre)?;
        let mut v = self.convert(func, from, to, comps, span)?;
        Ok(v.remove(0))
    }

    /// The slots a vector lvalue names, one per component, and its element type.
    pub(super) fn vec_lvalue(
        &mut self,
        e: &cl::Expr,
        pre: &mut Vec<k::Stmt>,
    ) -> Res<(Vec<k::LValue>, TypeName)> {
        use cl::ExprKind as E;
        let span = &e.span;
        match &e.kind {
            E::Name(n) => match self.lookup(n).cloned() {
                Some(Binding::Vector { comps, elem }) => Ok((
                    comps
                        .iter()
                        .map(|c| k::LValue::Var(ident(c, span)))
                        .collect(),
                    elem,
                )),
                Some(Binding::Cell(a)) if self.vec_arrays.contains_key(&a) => {
                    let slots = self.slots(&a, vec![int(0, span)], pre);
                    Ok((
                        slots
                            .into_iter()
                            .map(|indices| k::LValue::Elem {
                                array: ident(&a, span),
                                indices,
                            })
                            .collect(),
                        self.arrays[&a].0,
                    ))
                }
                _ => self.not_vector(e),
            },
            E::Index(..) | E::Deref(_) | E::Member { .. } => {
                match self.vec_places(e, pre)?.single() {
                    Some(one) => Ok(one),
                    None => unsupported(
                        "the value of an assignment or of `++`/`--` through a pointer whose \
                         target is chosen at run time (or null), used inside an expression",
                        span,
                    ),
                }
            }
            _ => self.not_vector(e),
        }
    }

    fn not_vector<T>(&self, e: &cl::Expr) -> Res<T> {
        Err(Diagnostic::new(
            "this cannot be assigned to as a vector",
            e.span.clone(),
        ))
    }

    /// `target = value` / `target op= value` for a vector target; the slots assigned.
    /// Every component of the value is computed before the first store.
    pub(super) fn vec_assign(&mut self, e: &cl::Expr, out: &mut Vec<k::Stmt>) -> Res<VecPlaces> {
        let cl::ExprKind::Assign { op, target, value } = &e.kind else {
            unreachable!("an assignment")
        };
        let span = &e.span;
        let shape = self.vec_shape(target).expect("a vector target");
        let vals = self.vec_value(value, shape, out)?;
        let vals: Vec<k::Expr> = match op {
            Some(op) => (vals.into_iter())
                .map(|v| shift_count(*op, Some(shape.0), v, span))
                .collect(),
            None => vals,
        };
        let places = self.vec_places(target, out)?;
        self.vec_writable(&places, span)?;
        let mut vars = HashSet::new();
        let mut memory = false;
        for lv in places.all() {
            match lv {
                k::LValue::Var(v) => {
                    vars.insert(v.name.clone());
                }
                k::LValue::Elem { .. } => memory = true,
            }
        }
        let mut ready = Vec::new();
        for v in vals {
            ready.push(if places.lanes > 1 && reads(&v, &vars, memory) {
                let ty = self.type_of(&v).unwrap_or(shape.0);
                let t = self.temp("v", ty, Some(v), span, out);
                name_expr(&t, span)
            } else {
                v
            });
        }
        let assign_op = op.map_or(k::AssignOp::Set, k::AssignOp::Compound);
        out.extend(places.write(span, |lvs| {
            (lvs.iter().zip(&ready))
                .map(|(lv, v)| {
                    st(
                        k::StmtKind::Assign {
                            target: lv.clone(),
                            op: assign_op,
                            value: v.clone(),
                        },
                        span,
                    )
                })
                .collect()
        }));
        Ok(places)
    }

    /// A vector expression statement: an assignment, `++`/`--`, or a value dropped.
    pub(super) fn vec_effect(&mut self, e: &cl::Expr, out: &mut Vec<k::Stmt>) -> Res<()> {
        match &e.kind {
            cl::ExprKind::Assign { .. } => {
                self.vec_assign(e, out)?;
            }
            cl::ExprKind::IncDec(op, target) => {
                let places = self.vec_places(target, out)?;
                self.vec_writable(&places, &e.span)?;
                let dec = matches!(op, cl::IncDec::PreDec | cl::IncDec::PostDec);
                out.extend(places.write(&e.span, |lvs| steps(lvs, dec, &e.span)));
            }
            _ => {
                self.vec_expr(e, out)?;
            }
        }
        Ok(())
    }

    /// One component `v.x` of a vector, as a scalar expression.
    pub(super) fn component(&mut self, e: &cl::Expr, pre: &mut Vec<k::Stmt>) -> Res<k::Expr> {
        let cl::ExprKind::Member { base, field, .. } = &e.kind else {
            unreachable!("a member")
        };
        let v = self.vec_expr(base, pre)?;
        match swizzle(&field.name, v.comps.len() as u8)
            .map_err(|m| Diagnostic::new(m, field.span.clone()))?
            .as_slice()
        {
            [i] => Ok(v.comps[*i].clone()),
            _ => self.not_scalar(e),
        }
    }

    /// One component `v.x` of a vector as an assignment target.
    pub(super) fn component_lvalue(
        &mut self,
        e: &cl::Expr,
        pre: &mut Vec<k::Stmt>,
    ) -> Res<(k::LValue, TypeName)> {
        let (lvs, elem) = self.vec_lvalue(e, pre)?;
        match <[k::LValue; 1]>::try_from(lvs) {
            Ok([lv]) => Ok((lv, elem)),
            Err(_) => self.not_scalar(e),
        }
    }

    /// `T v = init;` for a vector type: one variable per component.
    pub(super) fn vec_decl(
        &mut self,
        d: &cl::Decl,
        (elem, n): (TypeName, u8),
        out: &mut Vec<k::Stmt>,
    ) -> Res<()> {
        let span = &d.span;
        let init = match &d.init {
            None => None,
            Some(cl::Init::Expr(e)) => Some(self.vec_value(e, (elem, n), out)?),
            Some(cl::Init::List(items, s)) => {
                let mut exprs = Vec::new();
                for i in items {
                    match i {
                        cl::Init::Expr(e) => exprs.push(e.clone()),
                        cl::Init::List(_, s) => {
                            return Err(Diagnostic::new(
                                "a vector's initialiser list holds expressions",
                                s.clone(),
                            ))
                        }
                    }
                }
                Some(self.vec_items(&exprs, (elem, n), s, out)?)
            }
        };
        let comps = self.declare_vector(&d.name.name, elem, n);
        for (i, c) in comps.iter().enumerate() {
            out.push(st(
                k::StmtKind::Decl {
                    ty: elem,
                    name: ident(c, &d.name.span),
                    init: init.as_ref().map(|v| v[i].clone()),
                },
                span,
            ));
        }
        self.bind(&d.name.name, Binding::Vector { comps, elem });
        Ok(())
    }

    /// Fresh variables for the components of vector `name`.
    pub(super) fn declare_vector(&mut self, name: &str, elem: TypeName, n: u8) -> Vec<String> {
        (0..n as usize)
            .map(|i| self.declare_scalar(&format!("{name}.{}", comp_name(i, n)), elem))
            .collect()
    }

    /// A by-value vector parameter `T v` of the kernel: one scalar parameter per
    /// component, named `v.x`, `v.y`, ... (`v.s0` ... for 8 and 16 components), each bound
    /// by its own `--arg`; a parameter the kernel writes gets private copies, as in C.
    pub(super) fn vec_param(
        &mut self,
        name: &cl::Ident,
        (elem, n): (TypeName, u8),
        written: bool,
        params: &mut Vec<k::Param>,
        prologue: &mut Vec<k::Stmt>,
    ) {
        let span = &name.span;
        let comps = self.declare_vector(&name.name, elem, n);
        for (i, c) in comps.iter().enumerate() {
            params.push(k::Param::Scalar {
                ty: elem,
                name: ident(c, span),
                span: span.clone(),
            });
            self.info.scalars.push(Scalar {
                name: format!("{}.{}", name.name, comp_name(i, n)),
                param: c.clone(),
                ty: elem,
            });
        }
        let comps = if written {
            let copies = self.declare_vector(&name.name, elem, n);
            for (copy, c) in copies.iter().zip(&comps) {
                prologue.push(st(
                    k::StmtKind::Decl {
                        ty: elem,
                        name: ident(copy, span),
                        init: Some(name_expr(c, span)),
                    },
                    span,
                ));
            }
            copies
        } else {
            comps
        };
        self.bind(&name.name, Binding::Vector { comps, elem });
    }

    /// `shuffle(x, mask)` and `shuffle2(x, y, mask)` (§6.12.12): component `i` of the
    /// result is component `mask_i` of `x` (of `x` then `y` for `shuffle2`), only the low
    /// bits of `mask_i` that can index it counted. Every component of the sources is read
    /// once, whichever the mask picks.
    fn shuffle(
        &mut self,
        func: &cl::Ident,
        args: &[cl::Expr],
        span: &Span,
        pre: &mut Vec<k::Stmt>,
    ) -> Res<Vec<k::Expr>> {
        let sources = if func.name == "shuffle2" { 2 } else { 1 };
        if args.len() != sources + 1 {
            return Err(Diagnostic::new(
                format!("`{}` takes {} arguments", func.name, sources + 1),
                span.clone(),
            ));
        }
        let vector = |a: &cl::Expr| {
            self.vec_shape(a).filter(|(_, m)| *m != 3).ok_or_else(|| {
                Diagnostic::new(
                    format!("`{}` takes vectors of 2, 4, 8 or 16 components", func.name),
                    a.span.clone(),
                )
            })
        };
        let shape = vector(&args[0])?;
        let (mask_elem, _) = vector(&args[sources])?;
        if mask_elem != TypeName::Uint {
            return Err(Diagnostic::new(
                format!(
                    "the mask of `{}` must be an unsigned integer vector (`uint2`, `uint4`, ...)",
                    func.name
                ),
                args[sources].span.clone(),
            ));
        }
        let mut src = Vec::new();
        for a in &args[..sources] {
            for c in self.vec_value(a, shape, pre)? {
                src.push(self.once(c, shape.0, pre));
            }
        }
        let mask = self.vec_expr(&args[sources], pre)?;
        let uint = |v: usize| {
            ex(
                k::ExprKind::Int {
                    value: v as u64,
                    unsigned: true,
                },
                span,
            )
        };
        let mut out = Vec::new();
        for m in mask.comps {
            let pick = bin(BinOp::BitAnd, m, uint(src.len() - 1), span);
            let pick = self.once(pick, TypeName::Uint, pre);
            let last = src.last().expect("a vector has components").clone();
            let chosen =
                src[..src.len() - 1]
                    .iter()
                    .enumerate()
                    .rev()
                    .fold(last, |rest, (j, c)| {
                        ex(
                            k::ExprKind::Cond(
                                Box::new(bin(BinOp::Eq, pick.clone(), uint(j), span)),
                                Box::new(c.clone()),
                                Box::new(rest),
                            ),
                            span,
                        )
                    });
            out.push(chosen);
        }
        Ok(out)
    }

    /// Inlines a helper returning a vector; the variables holding its components.
    fn inline_vec(
        &mut self,
        f: &'u cl::Function,
        args: &[cl::Expr],
        (elem, n): (TypeName, u8),
        span: &Span,
        pre: &mut Vec<k::Stmt>,
    ) -> Res<Vec<String>> {
        let comps = self.declare_vector(&format!("{}_result", f.name.name), elem, n);
        for c in &comps {
            pre.push(st(
                k::StmtKind::Decl {
                    ty: elem,
                    name: ident(c, span),
                    init: None,
                },
                span,
            ));
        }
        self.inline_with(f, args, span, pre, None, Some((comps.clone(), elem)))?;
        Ok(comps)
    }
}
