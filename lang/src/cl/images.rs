//! Images and samplers (OpenCL C 1.2 §6.12.14), lowered to arrays and arithmetic:
//!
//! - An `image1d_t`/`image2d_t`/`image3d_t` kernel parameter `img` is a `global` array of
//!   texels, 4 slots per texel (RGBA: channel order `CL_RGBA`), texel `(x, y, z)` at slots
//!   `4 × ((z × height + y) × width + x) + c`, with size parameters `img.width`,
//!   `img.height`, `img.depth` (as its dimensions have) and `img.len` (slots) bound by the
//!   launch ([`Image`]). The slots hold the values the kernel reads and writes: `float` for
//!   `read_imagef`/`write_imagef`, `int` for `..i`, `uint` for `..ui` (an image used with two
//!   of them is an error); channel data types (normalised `uchar`, `half`, ...) are not
//!   modelled. Races on texels are races on these slots, as for a `float4` buffer.
//! - Access qualifiers: a read of a `__write_only` image and a write of a `__read_only` one
//!   (an image without a qualifier is read-only) are load errors.
//! - A `sampler_t` is a `uint` of the sampler bits (clang's values: normalised coordinates
//!   1, addressing `NONE` 0, `CLAMP_TO_EDGE` 2, `CLAMP` 4, `REPEAT` 6, `MIRRORED_REPEAT` 8,
//!   filter `NEAREST` 0x10, `LINEAR` 0x20). A read's sampler is a constant the lowering
//!   folds (a `CLK_...` expression, a `const sampler_t` variable) or a sampler parameter of
//!   the kernel, whose value the launch checks ([`sampler_value`]); the lowering generates
//!   the one addressing mode of a constant, and every mode chosen by the bits of a
//!   parameter. Only `CLK_FILTER_NEAREST` is modelled: a read with a `LINEAR` sampler is a
//!   load error (a `LINEAR` sampler that is never read with is fine).
//! - Coordinates (the spec's §8.2 formulas, nearest filter): integer coordinates are
//!   converted to `float` and sampled like float ones. Normalised coordinates are scaled
//!   by the image size; `REPEAT` and `MIRRORED_REPEAT` wrap normalised coordinates
//!   (unnormalised ones are divided by the size first: OpenCL leaves them undefined);
//!   `CLAMP_TO_EDGE` clamps the texel index; `CLAMP` reads outside the image as the border
//!   colour (0, 0, 0, 0); `NONE`, a read without a sampler (integer coordinates only) and
//!   any write outside the image are undefined in OpenCL: ksim makes them an out-of-bounds
//!   access of the texel array (slot `img.len` onwards), a fault.
//! - `get_image_width/height/depth` are the size parameters; `get_image_dim` their vector.
//!
//! Images are parameters of the kernel or of a helper it calls (bound to the kernel's
//! image); image arrays, image variables and `image*_array_t`/`image1d_buffer_t` are not.

use super::*;
use crate::core::MathFn;

/// An image parameter of the kernel: a texel array and its size parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct Image {
    /// The OpenCL parameter name.
    pub name: String,
    /// The lowered array holding the texels, 4 slots each.
    pub array: String,
    /// The size parameter holding the array's length in slots (4 × texels).
    pub size_param: String,
    /// The size parameters of its dimensions: width, then height, then depth.
    pub dims: Vec<String>,
    /// The slots' type: `float`, `int` or `uint`, from the read/write functions used.
    pub elem: TypeName,
    /// Whether the kernel may read it and may write it.
    pub readable: bool,
    pub writable: bool,
}

impl Image {
    /// The launch's bindings of the size parameters for an image of `sizes` (width,
    /// height, depth: one per dimension); the number of slots comes last.
    pub fn defines(&self, sizes: &[usize]) -> Result<Vec<(String, String)>, String> {
        if sizes.len() != self.dims.len() || sizes.contains(&0) {
            let want = ["W", "WxH", "WxHxD"][self.dims.len() - 1];
            return Err(format!(
                "image `{}` has {} dimension(s): give its size as {want} (each at least 1)",
                self.name,
                self.dims.len()
            ));
        }
        let mut v: Vec<(String, String)> = (self.dims.iter().cloned())
            .zip(sizes.iter().map(|s| s.to_string()))
            .collect();
        let slots = sizes
            .iter()
            .try_fold(4usize, |a, &s| a.checked_mul(s))
            .filter(|&n| n <= i32::MAX as usize)
            .ok_or_else(|| format!("image `{}` is too large", self.name))?;
        v.push((self.size_param.clone(), slots.to_string()));
        Ok(v)
    }
}

/// The sampler bits of a launch argument: a number, or `CLK_...` names joined by `|`.
/// Refuses values that are no sampler and `CLK_FILTER_LINEAR`, which ksim does not model.
pub fn sampler_value(spec: &str) -> Result<u32, String> {
    let mut bits = 0u64;
    for w in spec.split('|').map(str::trim) {
        let v = match super::builtins::constant(w) {
            Some(k::ExprKind::Int { value, .. }) if w.starts_with("CLK_") => value,
            _ => parse_int(w).ok_or_else(|| {
                format!("`{w}` is not a sampler value (a number or CLK_... names joined by |)")
            })?,
        };
        bits |= v;
    }
    check_bits(bits)?;
    Ok(bits as u32)
}

/// Why `bits` is no sampler ksim runs, if it is none.
fn check_bits(bits: u64) -> Result<(), String> {
    if bits & !0x3f != 0 || bits & 0xe > 8 {
        return Err(format!("{bits:#x} is not a sampler value"));
    }
    match bits & 0x30 {
        0x10 => Ok(()),
        0x20 => Err("not supported yet: `CLK_FILTER_LINEAR` samplers (ksim models `CLK_FILTER_NEAREST` reads only)".into()),
        _ => Err(format!("{bits:#x} is not a sampler value (it names no filter mode)")),
    }
}

const NONE: u64 = 0;
const CLAMP_TO_EDGE: u64 = 2;
const CLAMP: u64 = 4;
const REPEAT: u64 = 6;
const MIRRORED_REPEAT: u64 = 8;
const MODES: [u64; 5] = [NONE, CLAMP_TO_EDGE, CLAMP, REPEAT, MIRRORED_REPEAT];

/// A read's sampler: known bits, or a `uint` variable holding the bits of a sampler
/// parameter (checked at launch); `None`: a read without a sampler.
enum Sampler {
    Known(u64),
    Param(String),
}

fn int(v: i64, span: &Span) -> k::Expr {
    ex(
        k::ExprKind::Int {
            value: v as u64,
            unsigned: false,
        },
        span,
    )
}

fn float(v: f32, span: &Span) -> k::Expr {
    ex(k::ExprKind::Float(v), span)
}

fn bin(op: BinOp, a: k::Expr, b: k::Expr, span: &Span) -> k::Expr {
    ex(k::ExprKind::Binary(op, Box::new(a), Box::new(b)), span)
}

fn cond(c: k::Expr, a: k::Expr, b: k::Expr, span: &Span) -> k::Expr {
    ex(
        k::ExprKind::Cond(Box::new(c), Box::new(a), Box::new(b)),
        span,
    )
}

fn cast(t: TypeName, e: k::Expr, span: &Span) -> k::Expr {
    ex(k::ExprKind::Cast(t, Box::new(e)), span)
}

fn math(f: MathFn, e: k::Expr, span: &Span) -> k::Expr {
    ex(
        k::ExprKind::Call {
            func: ident(f.name(), span),
            args: vec![e],
        },
        span,
    )
}

fn is_image(t: &cl::Type) -> bool {
    t.pointers.is_empty() && matches!(&t.base, cl::Base::Opaque(n) if n.starts_with("image"))
}

/// Whether `t` is `sampler_t`.
pub(super) fn is_sampler(t: &cl::Type) -> bool {
    t.pointers.is_empty() && t.arrays.is_empty() && t.base == cl::Base::Opaque("sampler_t".into())
}

/// The dimensions of an image type ksim models.
fn image_dims(t: &cl::Type) -> Option<usize> {
    match &t.base {
        cl::Base::Opaque(n) => match n.as_str() {
            "image1d_t" => Some(1),
            "image2d_t" => Some(2),
            "image3d_t" => Some(3),
            _ => None,
        },
        _ => None,
    }
}

impl Lowerer<'_> {
    /// Whether `t` is an image type (of a parameter).
    pub(super) fn is_image_type(t: &cl::Type) -> bool {
        is_image(t)
    }

    /// An image parameter of the kernel: its texel array and size parameters.
    pub(super) fn image_param(
        &mut self,
        name: &cl::Ident,
        lowered: String,
        ty: &cl::Type,
        span: &Span,
        params: &mut Vec<k::Param>,
    ) -> Res<()> {
        let Some(n) = image_dims(ty) else {
            return unsupported(format!("`{}` images", ty.base.name()), &ty.span);
        };
        if !ty.arrays.is_empty() {
            return unsupported("arrays of images", &ty.span);
        }
        let size_param = format!("{lowered}.len");
        let dims: Vec<String> = ["width", "height", "depth"][..n]
            .iter()
            .map(|d| format!("{lowered}.{d}"))
            .collect();
        for d in &dims {
            params.push(k::Param::Scalar {
                ty: TypeName::Int,
                name: ident(d, &name.span),
                span: span.clone(),
            });
            self.types.insert(d.clone(), TypeName::Int);
        }
        let (readable, writable) = match ty.access {
            cl::Access::Default | cl::Access::ReadOnly => (true, false),
            cl::Access::WriteOnly => (false, true),
            cl::Access::ReadWrite => (true, true),
        };
        params.push(k::Param::Array {
            is_const: !writable,
            space: Space::Global,
            // Settled by the first read or write ([`Self::image_elem`]); patched at the end.
            elem: TypeName::Float,
            name: ident(&lowered, &name.span),
            dims: vec![name_expr(&size_param, &name.span)],
            span: span.clone(),
        });
        self.arrays.insert(lowered.clone(), (TypeName::Float, 1));
        self.vec_arrays.insert(lowered.clone(), 4);
        self.info.images.push(Image {
            name: name.name.clone(),
            array: lowered.clone(),
            size_param,
            dims,
            elem: TypeName::Float,
            readable,
            writable,
        });
        self.image_used.insert(lowered.clone(), None);
        self.bind(&name.name, Binding::Image(lowered));
        Ok(())
    }

    /// Sets the element type of the image arrays to what their reads and writes use.
    pub(super) fn patch_images(&mut self, params: &mut [k::Param]) {
        for p in params {
            if let k::Param::Array { name, elem, .. } = p {
                if let Some(im) = self.info.images.iter().find(|i| i.array == name.name) {
                    *elem = im.elem;
                }
            }
        }
    }

    /// Records the value of a `sampler_t` variable `lowered` initialised with `init`, if
    /// the lowering can fold it (or it holds a sampler parameter's value).
    pub(super) fn note_sampler(&mut self, ty: &cl::Type, lowered: &str, init: Option<&cl::Expr>) {
        if !is_sampler(ty) {
            return;
        }
        if let Some(s) = init.and_then(|e| self.fold_sampler(e)) {
            let v = match s {
                Sampler::Known(b) => Some(b),
                Sampler::Param(_) => None,
            };
            self.samplers.insert(lowered.to_string(), v);
        }
    }

    /// The sampler `e` names, if the lowering knows it.
    fn fold_sampler(&self, e: &cl::Expr) -> Option<Sampler> {
        use cl::ExprKind as E;
        match &e.kind {
            E::Int { value, .. } => Some(Sampler::Known(*value)),
            E::Name(n) => match self.lookup(n) {
                Some(Binding::Scalar(v)) => match self.samplers.get(v)? {
                    Some(b) => Some(Sampler::Known(*b)),
                    None => Some(Sampler::Param(v.clone())),
                },
                Some(_) => None,
                None => match builtins::constant(n)? {
                    k::ExprKind::Int { value, .. } => Some(Sampler::Known(value)),
                    _ => None,
                },
            },
            E::Binary(BinOp::BitOr | BinOp::Add, a, b) => {
                match (self.fold_sampler(a)?, self.fold_sampler(b)?) {
                    (Sampler::Known(x), Sampler::Known(y)) => Some(Sampler::Known(x | y)),
                    _ => None,
                }
            }
            E::Cast(_, a) | E::Plus(a) => self.fold_sampler(a),
            _ => None,
        }
    }

    /// The image the first argument of `func` names.
    fn image_arg(&self, func: &cl::Ident, args: &[cl::Expr]) -> Res<Image> {
        let found = match args.first().map(|a| &a.kind) {
            Some(cl::ExprKind::Name(n)) => match self.lookup(n) {
                Some(Binding::Image(a)) => self.info.images.iter().find(|i| &i.array == a),
                _ => None,
            },
            _ => None,
        };
        found.cloned().ok_or_else(|| {
            Diagnostic::new(
                format!(
                    "`{}` needs an image parameter as its first argument",
                    func.name
                ),
                args.first().map_or(func.span.clone(), |a| a.span.clone()),
            )
        })
    }

    /// The slot type a read/write function works on (`read_imagei`: `int`).
    fn family(name: &str) -> TypeName {
        if name.ends_with("ui") {
            TypeName::Uint
        } else if name.ends_with('i') {
            TypeName::Int
        } else {
            TypeName::Float
        }
    }

    /// Settles (first use) or checks the slot type of `im` for a call of `func`.
    fn image_elem(&mut self, im: &Image, func: &cl::Ident) -> Res<TypeName> {
        let want = Self::family(&func.name);
        match self.image_used.get(&im.array).cloned().flatten() {
            Some((t, _)) if t == want => Ok(t),
            Some((t, first)) => Err(Diagnostic::new(
                format!(
                    "image `{}` is used with `{first}` (its texels are {}), so `{}` cannot read or write it",
                    im.name,
                    ty_of(t).name(),
                    func.name
                ),
                func.span.clone(),
            )),
            None => {
                self.image_used
                    .insert(im.array.clone(), Some((want, func.name.clone())));
                if let Some(i) = self.info.images.iter_mut().find(|i| i.array == im.array) {
                    i.elem = want;
                }
                self.arrays.insert(im.array.clone(), (want, 1));
                Ok(want)
            }
        }
    }

    /// The shape of a vector an image built-in returns (`read_imagef`: `float4`).
    pub(super) fn image_shape(&self, name: &str, args: &[cl::Expr]) -> Option<(TypeName, u8)> {
        if name.starts_with("read_image") {
            return Some((Self::family(name), 4));
        }
        if name == "get_image_dim" {
            let func = cl::Ident {
                name: name.into(),
                span: 0..0,
            };
            let im = self.image_arg(&func, args).ok()?;
            return (im.dims.len() > 1)
                .then_some((TypeName::Int, if im.dims.len() == 2 { 2 } else { 4 }));
        }
        None
    }

    /// A call of an image built-in that gives a scalar or nothing: a write or a size query.
    pub(super) fn image_call(
        &mut self,
        func: &cl::Ident,
        args: &[cl::Expr],
        span: &Span,
        pre: &mut Vec<k::Stmt>,
    ) -> Res<Option<k::Expr>> {
        let im = self.image_arg(func, args)?;
        let query = |d: usize| -> Res<Option<k::Expr>> {
            if args.len() != 1 {
                return Err(Diagnostic::new(
                    format!("`{}` takes one argument", func.name),
                    span.clone(),
                ));
            }
            match im.dims.get(d) {
                Some(p) => Ok(Some(name_expr(p, span))),
                None => Err(Diagnostic::new(
                    format!("image `{}` has {} dimension(s)", im.name, im.dims.len()),
                    span.clone(),
                )),
            }
        };
        match func.name.as_str() {
            "get_image_width" => query(0),
            "get_image_height" => query(1),
            "get_image_depth" => query(2),
            "get_image_dim" if im.dims.len() == 1 => Err(Diagnostic::new(
                "`get_image_dim` of a 1D image: use `get_image_width`",
                span.clone(),
            )),
            n if n.starts_with("write_image") => {
                self.write_image(&im, func, args, span, pre)?;
                Ok(None)
            }
            _ => Err(Diagnostic::new(
                format!("`{}` gives a vector where a scalar is needed", func.name),
                span.clone(),
            )),
        }
    }

    /// A vector result of an image built-in: a read's texel or `get_image_dim`.
    pub(super) fn image_vec(
        &mut self,
        func: &cl::Ident,
        args: &[cl::Expr],
        span: &Span,
        pre: &mut Vec<k::Stmt>,
    ) -> Res<Vec<k::Expr>> {
        let im = self.image_arg(func, args)?;
        if func.name == "get_image_dim" {
            let mut v: Vec<_> = im.dims.iter().map(|d| name_expr(d, span)).collect();
            if v.len() == 3 {
                v.push(int(0, span));
            }
            return Ok(v);
        }
        self.read_image(&im, func, args, span, pre)
    }

    /// The coordinate argument: one `int` or `float` expression per dimension of `im`,
    /// and whether they are floats.
    fn coords(
        &mut self,
        im: &Image,
        c: &cl::Expr,
        pre: &mut Vec<k::Stmt>,
    ) -> Res<(Vec<k::Expr>, bool)> {
        let n = im.dims.len();
        let comps = match self.vec_shape(c) {
            Some((t, len)) => {
                let want = if n == 3 { 4 } else { n as u8 };
                if len != want || !matches!(t, TypeName::Int | TypeName::Float) {
                    return Err(Diagnostic::new(
                        format!(
                            "image `{}` takes `int{want}` or `float{want}` coordinates here, not `{}`",
                            im.name,
                            vector::vec_name(t, len)
                        ),
                        c.span.clone(),
                    ));
                }
                let v = self.vec_expr(c, pre)?;
                (v.comps.into_iter().take(n).collect(), t == TypeName::Float)
            }
            None => {
                let e = self.expr(c, pre)?;
                let t = self.type_of(&e);
                if n != 1 || !matches!(t, Some(TypeName::Int | TypeName::Float)) {
                    return Err(Diagnostic::new(
                        format!(
                            "image `{}` takes {} coordinates here",
                            im.name,
                            if n == 1 {
                                "`int` or `float`".to_string()
                            } else {
                                format!("`int{0}` or `float{0}`", if n == 3 { 4 } else { n })
                            }
                        ),
                        c.span.clone(),
                    ));
                }
                (vec![e], t == Some(TypeName::Float))
            }
        };
        let mut out = Vec::new();
        for e in comps.0 {
            let span = e.span.clone();
            let ty = if comps.1 {
                TypeName::Float
            } else {
                TypeName::Int
            };
            let t = self.temp("coord", ty, Some(e), &span, pre);
            out.push(name_expr(&t, &span));
        }
        Ok((out, comps.1))
    }

    /// The slot of component 0 of texel `idx` (one index per dimension, each in range).
    fn texel(im: &Image, idx: &[k::Expr], span: &Span) -> k::Expr {
        let mut at = idx[idx.len() - 1].clone();
        for d in (0..idx.len() - 1).rev() {
            at = bin(
                BinOp::Add,
                bin(BinOp::Mul, at, name_expr(&im.dims[d], span), span),
                idx[d].clone(),
                span,
            );
        }
        bin(BinOp::Mul, at, int(4, span), span)
    }

    /// Whether every integer index is inside its dimension.
    fn inside(im: &Image, idx: &[k::Expr], span: &Span) -> k::Expr {
        let mut all: Option<k::Expr> = None;
        for (d, i) in idx.iter().enumerate() {
            let lo = bin(BinOp::Ge, i.clone(), int(0, span), span);
            let hi = bin(BinOp::Lt, i.clone(), name_expr(&im.dims[d], span), span);
            let c = and(lo, hi);
            all = Some(match all {
                None => c,
                Some(a) => and(a, c),
            });
        }
        all.expect("an image has a dimension")
    }

    /// `write_image{f,i,ui}(img, coord, color)`: four slot stores; a coordinate outside
    /// the image stores at `img.len` onwards (out of bounds: a fault).
    fn write_image(
        &mut self,
        im: &Image,
        func: &cl::Ident,
        args: &[cl::Expr],
        span: &Span,
        pre: &mut Vec<k::Stmt>,
    ) -> Res<()> {
        if args.len() != 3 {
            return Err(Diagnostic::new(
                format!(
                    "`{}` takes 3 arguments (image, coordinates, colour)",
                    func.name
                ),
                span.clone(),
            ));
        }
        if !im.writable {
            return Err(Diagnostic::new(
                format!(
                    "image `{}` is read-only (`__read_only`, or no access qualifier): `{}` cannot write it",
                    im.name, func.name
                ),
                func.span.clone(),
            ));
        }
        let elem = self.image_elem(im, func)?;
        let (idx, is_float) = self.coords(im, &args[1], pre)?;
        if is_float {
            return Err(Diagnostic::new(
                format!("`{}` takes integer coordinates", func.name),
                args[1].span.clone(),
            ));
        }
        let color = self.vec_value(&args[2], (elem, 4), pre)?;
        let mut vals = Vec::new();
        for c in color {
            let s = c.span.clone();
            let t = self.temp("texel", elem, Some(c), &s, pre);
            vals.push(name_expr(&t, &s));
        }
        let base = cond(
            Self::inside(im, &idx, span),
            Self::texel(im, &idx, span),
            name_expr(&im.size_param, span),
            span,
        );
        let base = name_expr(
            &self.temp("slot", TypeName::Int, Some(base), span, pre),
            span,
        );
        for (c, v) in vals.into_iter().enumerate() {
            let at = bin(BinOp::Add, base.clone(), int(c as i64, span), span);
            pre.push(st(
                k::StmtKind::Assign {
                    target: k::LValue::Elem {
                        array: ident(&im.array, span),
                        indices: vec![at],
                    },
                    op: k::AssignOp::Set,
                    value: v,
                },
                span,
            ));
        }
        Ok(())
    }

    /// `read_image{f,i,ui}(img, [sampler,] coord)`: the four slots of the texel the
    /// sampler picks, in fresh variables.
    fn read_image(
        &mut self,
        im: &Image,
        func: &cl::Ident,
        args: &[cl::Expr],
        span: &Span,
        pre: &mut Vec<k::Stmt>,
    ) -> Res<Vec<k::Expr>> {
        if !im.readable {
            return Err(Diagnostic::new(
                format!(
                    "image `{}` is `__write_only`: `{}` cannot read it",
                    im.name, func.name
                ),
                func.span.clone(),
            ));
        }
        let (sampler, coord) = match args {
            [_, c] => (None, c),
            [_, s, c] => {
                let folded = self.fold_sampler(s).ok_or_else(|| {
                    Diagnostic::new(
                        "not supported yet: a sampler computed at run time (ksim reads with a \
                         constant sampler or a sampler parameter of the kernel)",
                        s.span.clone(),
                    )
                })?;
                if let Sampler::Known(b) = folded {
                    check_bits(b).map_err(|m| Diagnostic::new(m, s.span.clone()))?;
                }
                (Some(folded), c)
            }
            _ => {
                return Err(Diagnostic::new(
                    format!(
                        "`{}` takes 2 or 3 arguments (image, [sampler,] coordinates)",
                        func.name
                    ),
                    span.clone(),
                ))
            }
        };
        let elem = self.image_elem(im, func)?;
        let (coords, is_float) = self.coords(im, coord, pre)?;
        let Some(sampler) = sampler else {
            if is_float {
                return Err(Diagnostic::new(
                    format!(
                        "`{}` without a sampler takes integer coordinates",
                        func.name
                    ),
                    coord.span.clone(),
                ));
            }
            return Ok(self.fetch(im, elem, &coords, None, None, span, pre));
        };
        // Float coordinates, then one texel index per dimension.
        let coords: Vec<k::Expr> = coords
            .into_iter()
            .map(|c| {
                if is_float {
                    c
                } else {
                    let s = c.span.clone();
                    cast(TypeName::Float, c, &s)
                }
            })
            .collect();
        let (mode, norm) = match &sampler {
            Sampler::Known(b) => (int((b & 0xe) as i64, span), boolean(b & 1 == 1, span)),
            Sampler::Param(v) => (
                cast(
                    TypeName::Int,
                    bin(BinOp::BitAnd, name_expr(v, span), int(0xe, span), span),
                    span,
                ),
                bin(
                    BinOp::Ne,
                    bin(BinOp::BitAnd, name_expr(v, span), int(1, span), span),
                    int(0, span),
                    span,
                ),
            ),
        };
        let modes: Vec<u64> = match &sampler {
            Sampler::Known(b) => vec![b & 0xe],
            Sampler::Param(_) => MODES.to_vec(),
        };
        let mode = name_expr(
            &self.temp("mode", TypeName::Int, Some(mode), span, pre),
            span,
        );
        let norm = name_expr(
            &self.temp("normalized", TypeName::Bool, Some(norm), span, pre),
            span,
        );
        let mut idx = Vec::new();
        let mut raw = Vec::new();
        for (d, c) in coords.iter().enumerate() {
            let size = cast(TypeName::Float, name_expr(&im.dims[d], span), span);
            let s_int = name_expr(&im.dims[d], span);
            let floor_int = |e: k::Expr| cast(TypeName::Int, math(MathFn::Floor, e, span), span);
            // Unnormalised for NONE, CLAMP, CLAMP_TO_EDGE; normalised for the repeats.
            let u = cond(
                norm.clone(),
                bin(BinOp::Mul, c.clone(), size.clone(), span),
                c.clone(),
                span,
            );
            let i_raw = floor_int(u);
            let r = name_expr(
                &self.temp("texel_i", TypeName::Int, Some(i_raw), span, pre),
                span,
            );
            let cn = cond(
                norm.clone(),
                c.clone(),
                bin(BinOp::Div, c.clone(), size.clone(), span),
                span,
            );
            let mut by_mode = Vec::new();
            for &m in &modes {
                let e = match m {
                    CLAMP_TO_EDGE => cond(
                        bin(BinOp::Lt, r.clone(), int(0, span), span),
                        int(0, span),
                        cond(
                            bin(BinOp::Ge, r.clone(), s_int.clone(), span),
                            bin(BinOp::Sub, s_int.clone(), int(1, span), span),
                            r.clone(),
                            span,
                        ),
                        span,
                    ),
                    REPEAT => {
                        let frac = bin(
                            BinOp::Sub,
                            cn.clone(),
                            math(MathFn::Floor, cn.clone(), span),
                            span,
                        );
                        let i = floor_int(bin(BinOp::Mul, frac, size.clone(), span));
                        let t = name_expr(
                            &self.temp("repeat_i", TypeName::Int, Some(i), span, pre),
                            span,
                        );
                        cond(
                            bin(BinOp::Ge, t.clone(), s_int.clone(), span),
                            bin(BinOp::Sub, t.clone(), s_int.clone(), span),
                            t,
                            span,
                        )
                    }
                    MIRRORED_REPEAT => {
                        let half = bin(BinOp::Mul, float(0.5, span), cn.clone(), span);
                        let even = bin(
                            BinOp::Mul,
                            float(2.0, span),
                            math(MathFn::Rint, half, span),
                            span,
                        );
                        let dist =
                            math(MathFn::Fabs, bin(BinOp::Sub, cn.clone(), even, span), span);
                        let i = floor_int(bin(BinOp::Mul, dist, size.clone(), span));
                        let t = name_expr(
                            &self.temp("mirror_i", TypeName::Int, Some(i), span, pre),
                            span,
                        );
                        cond(
                            bin(BinOp::Ge, t.clone(), s_int.clone(), span),
                            bin(BinOp::Sub, s_int.clone(), int(1, span), span),
                            t,
                            span,
                        )
                    }
                    _ => r.clone(),
                };
                by_mode.push((m, e));
            }
            let mut e = by_mode.pop().expect("a mode").1;
            while let Some((m, alt)) = by_mode.pop() {
                e = cond(
                    bin(BinOp::Eq, mode.clone(), int(m as i64, span), span),
                    alt,
                    e,
                    span,
                );
            }
            idx.push(name_expr(
                &self.temp("texel_at", TypeName::Int, Some(e), span, pre),
                span,
            ));
            raw.push(r);
        }
        let uses = |m: u64| modes.contains(&m);
        // Outside the image under CLAMP: the border colour; under NONE: undefined.
        let border = uses(CLAMP).then(|| {
            and(
                bin(BinOp::Eq, mode.clone(), int(CLAMP as i64, span), span),
                not(Self::inside(im, &raw, span)),
            )
        });
        let undefined = match uses(NONE) {
            true => and(
                bin(BinOp::Eq, mode.clone(), int(NONE as i64, span), span),
                not(Self::inside(im, &raw, span)),
            ),
            false => boolean(false, span),
        };
        Ok(self.fetch(im, elem, &idx, border, Some(undefined), span, pre))
    }

    /// The four slots of texel `idx` in fresh variables: zeros where `border` holds, a
    /// read out of bounds where `undefined` holds (`None`: wherever `idx` is outside the
    /// image, as for a read without a sampler).
    #[allow(clippy::too_many_arguments)]
    fn fetch(
        &mut self,
        im: &Image,
        elem: TypeName,
        idx: &[k::Expr],
        border: Option<k::Expr>,
        undefined: Option<k::Expr>,
        span: &Span,
        pre: &mut Vec<k::Stmt>,
    ) -> Vec<k::Expr> {
        let undefined = undefined.unwrap_or_else(|| not(Self::inside(im, idx, span)));
        let base = cond(
            undefined,
            name_expr(&im.size_param, span),
            Self::texel(im, idx, span),
            span,
        );
        let base = name_expr(
            &self.temp("slot", TypeName::Int, Some(base), span, pre),
            span,
        );
        let zero = || match elem {
            TypeName::Float => float(0.0, span),
            t => cast(t, int(0, span), span),
        };
        let names: Vec<String> = (0..4)
            .map(|_| self.temp("texel", elem, Some(zero()), span, pre))
            .collect();
        let loads: Vec<k::Stmt> = names
            .iter()
            .enumerate()
            .map(|(c, n)| {
                let at = bin(BinOp::Add, base.clone(), int(c as i64, span), span);
                let v = ex(
                    k::ExprKind::Index {
                        array: ident(&im.array, span),
                        indices: vec![at],
                    },
                    span,
                );
                set(n, v, span)
            })
            .collect();
        match border {
            Some(b) => pre.push(if_then(not(b), loads, None, span)),
            None => pre.extend(loads),
        }
        names.iter().map(|n| name_expr(n, span)).collect()
    }
}

/// An integer literal's value, its `u`/`l` suffixes ignored: decimal, `0x` hex, `0` octal.
fn parse_int(text: &str) -> Option<u64> {
    let t = text.trim_end_matches(['u', 'U', 'l', 'L']);
    if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        u64::from_str_radix(h, 16).ok()
    } else if t.len() > 1 && t.starts_with('0') {
        u64::from_str_radix(&t[1..], 8).ok()
    } else {
        t.parse().ok()
    }
}
