//! Oclgrind's simulator file format (`.sim`): the program file, the kernel, the NDRange,
//! the work-group size and every kernel argument, read the way Oclgrind's
//! `Simulation::load` reads them, so that an Oclgrind user can point ksim at the `.sim`
//! files they already have:
//!
//! ```text
//! # comment (to the end of the line, anywhere)
//! kernel.cl            # program file, relative to the .sim file
//! vecadd               # kernel name
//! 16 1 1               # NDRange
//! 4 1 1                # work-group size
//! <size=64 fill=1>     # one argument per kernel parameter, in order
//! <size=64 range=0:1:15>
//! <size=64 dump>
//! 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15
//! <size=4> 16          # a scalar: its bytes
//! <size=256>           # a __local pointer: its size
//! ```
//!
//! Values are read as C++ streams read them (`>>`): whitespace separated tokens across
//! lines, decimal integers (hexadecimal after `hex`) range-checked for signed types and
//! wrapped for a negative unsigned value, decimal floats, and the 1-byte types read as an
//! `int` that must fit. The argument's data are bytes in the header's type (default: the
//! parameter's element type, by Oclgrind's prefix rule), so `<size=8 char>` may fill an
//! `int` buffer byte by byte; [`to_flags`] decodes them in the parameter's own type.
//! Errors carry the span of the offending token in the `.sim` text.

use super::ast::{AddrSpace, Base, Unit};
use super::lower::KernelInfo;
use super::simstruct::{self, Layout, Member};
use crate::ast::{Span, TypeName};
use crate::diag::Diagnostic;

/// The type of an argument's data: a header token, or the default from the parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DataType {
    Char,
    Uchar,
    Short,
    Ushort,
    Int,
    Uint,
    Long,
    Ulong,
    Float,
    Double,
}

impl DataType {
    /// Every type, in the order Oclgrind tries them as prefixes of a parameter's type.
    const ALL: [DataType; 10] = [
        DataType::Char,
        DataType::Uchar,
        DataType::Short,
        DataType::Ushort,
        DataType::Int,
        DataType::Uint,
        DataType::Long,
        DataType::Ulong,
        DataType::Float,
        DataType::Double,
    ];

    pub fn name(self) -> &'static str {
        match self {
            DataType::Char => "char",
            DataType::Uchar => "uchar",
            DataType::Short => "short",
            DataType::Ushort => "ushort",
            DataType::Int => "int",
            DataType::Uint => "uint",
            DataType::Long => "long",
            DataType::Ulong => "ulong",
            DataType::Float => "float",
            DataType::Double => "double",
        }
    }

    /// Bytes per value.
    pub fn size(self) -> usize {
        match self {
            DataType::Char | DataType::Uchar => 1,
            DataType::Short | DataType::Ushort => 2,
            DataType::Int | DataType::Uint | DataType::Float => 4,
            DataType::Long | DataType::Ulong | DataType::Double => 8,
        }
    }

    fn is_float(self) -> bool {
        matches!(self, DataType::Float | DataType::Double)
    }

    fn is_signed(self) -> bool {
        matches!(
            self,
            DataType::Char | DataType::Short | DataType::Int | DataType::Long
        )
    }

    fn from_token(t: &str) -> Option<DataType> {
        Self::ALL.into_iter().find(|d| d.name() == t)
    }

    /// Oclgrind's default: the first type that the parameter's type name starts with
    /// (`int*` and `int4*` give `int`), and bytes for `void*`.
    fn default_for(type_name: &str) -> Option<DataType> {
        Self::ALL
            .into_iter()
            .find(|d| type_name.starts_with(d.name()))
            .or_else(|| type_name.starts_with("void*").then_some(DataType::Uchar))
    }

    /// The data type of an OpenCL scalar type as it lies in memory (`size_t` is 8 bytes,
    /// as on Oclgrind's 64-bit device); `None` for types that are no number.
    pub(super) fn of_base(b: &Base) -> Option<DataType> {
        Some(match b {
            Base::Char { unsigned: false } => DataType::Char,
            Base::Char { unsigned: true } => DataType::Uchar,
            Base::Short { unsigned: false } => DataType::Short,
            Base::Short { unsigned: true } => DataType::Ushort,
            Base::Int { unsigned: false } => DataType::Int,
            Base::Int { unsigned: true } => DataType::Uint,
            Base::Long { unsigned: false } | Base::Size { signed: true } => DataType::Long,
            Base::Long { unsigned: true } | Base::Size { signed: false } => DataType::Ulong,
            Base::Float => DataType::Float,
            Base::Double => DataType::Double,
            Base::Vector(e, _) => return DataType::of_base(e),
            _ => return None,
        })
    }

    /// The little-endian bytes of `v` in this type (integers wrap, as C's conversions do).
    fn encode(self, v: Num, out: &mut Vec<u8>) {
        match (self, v) {
            (DataType::Float, Num::F(f)) => out.extend((f as f32).to_le_bytes()),
            (DataType::Double, Num::F(f)) => out.extend(f.to_le_bytes()),
            (DataType::Float, Num::I(i)) => out.extend((i as f32).to_le_bytes()),
            (DataType::Double, Num::I(i)) => out.extend((i as f64).to_le_bytes()),
            (_, Num::I(i)) => out.extend(&i.to_le_bytes()[..self.size()]),
            (_, Num::F(f)) => out.extend(&(f as i128).to_le_bytes()[..self.size()]),
        }
    }

    /// The value of `bytes` (exactly [`DataType::size`] of them) read in this type.
    fn decode(self, bytes: &[u8]) -> Num {
        let mut b = [0u8; 16];
        b[..bytes.len()].copy_from_slice(bytes);
        match self {
            DataType::Float => Num::F(f32::from_le_bytes(b[..4].try_into().unwrap()) as f64),
            DataType::Double => Num::F(f64::from_le_bytes(b[..8].try_into().unwrap())),
            _ => {
                let unsigned = i128::from_le_bytes(b);
                let bits = 8 * self.size() as u32;
                let sign = 1i128 << (bits - 1);
                Num::I(if self.is_signed() && unsigned & sign != 0 {
                    unsigned - (sign << 1)
                } else {
                    unsigned
                })
            }
        }
    }
}

/// A number read from the file or from memory.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Num {
    I(i128),
    F(f64),
}

/// A kernel parameter as the format sees it: its name, address space and type.
#[derive(Clone, Debug, PartialEq)]
pub struct ArgInfo {
    pub name: String,
    /// The pointee's address space for a pointer, `Private` for a scalar.
    pub space: AddrSpace,
    pub pointer: bool,
    /// The scalar type, or the pointee's type.
    pub base: Base,
    /// For a struct type: its layout in the device's memory, or why a `.sim` file cannot
    /// give its bytes ([`simstruct`](super::simstruct)).
    pub layout: Option<Result<Layout, String>>,
}

impl ArgInfo {
    /// The type name Oclgrind's introspection gives (`int*`, `float`, `uint4*`).
    fn type_name(&self) -> String {
        format!(
            "{}{}",
            self.base.name(),
            if self.pointer { "*" } else { "" }
        )
    }

    /// A `__global` or `__constant` buffer (what `dump`, `null`, `noinit` apply to).
    fn is_memory(&self) -> bool {
        self.pointer && matches!(self.space, AddrSpace::Global | AddrSpace::Constant)
    }
}

/// The parameters of kernel `name` of `unit`, in order (`None`: no such kernel).
pub fn kernel_args(unit: &Unit, name: &str) -> Option<Vec<ArgInfo>> {
    let f = super::lower::kernels(unit)
        .into_iter()
        .find(|f| f.name.name == name)?;
    Some(
        f.params
            .iter()
            .map(|p| ArgInfo {
                name: p.name.as_ref().map_or_else(String::new, |n| n.name.clone()),
                space: if p.ty.pointers.is_empty() {
                    AddrSpace::Private
                } else {
                    p.ty.space
                },
                pointer: !p.ty.pointers.is_empty(),
                base: p.ty.base.clone(),
                layout: match &p.ty.base {
                    Base::Struct(tag) => Some(super::simstruct::layout(unit, tag)),
                    _ => None,
                },
            })
            .collect(),
    )
}

/// A string with its span in the `.sim` text.
#[derive(Clone, Debug, PartialEq)]
pub struct Word {
    pub text: String,
    pub span: Span,
}

/// The launch part of a `.sim` file.
#[derive(Clone, Debug, PartialEq)]
pub struct Header {
    /// The program file as written (relative to the `.sim` file's directory).
    pub program: Word,
    pub kernel: Word,
    /// Global size per dimension.
    pub ndrange: [usize; 3],
    /// Work-group size per dimension.
    pub wgsize: [usize; 3],
    /// The six numbers.
    pub span: Span,
}

/// What one argument's header and data give.
#[derive(Clone, Debug, PartialEq)]
pub enum ArgKind {
    /// A `__global`/`__constant` buffer: its bytes.
    Buffer {
        bytes: Vec<u8>,
        /// `dump`: print it after the run.
        dump: bool,
        /// `hex`: values were read, and are dumped, in hexadecimal.
        hex: bool,
        /// `noinit`: no contents given (a device leaves them undefined).
        noinit: bool,
    },
    /// `null`: a null pointer.
    Null,
    /// A `__local` pointer: the size of the memory it points to.
    Local { size: usize },
    /// A scalar: its bytes.
    Scalar { bytes: Vec<u8> },
}

/// One argument of the file.
#[derive(Clone, Debug, PartialEq)]
pub struct SimArg {
    pub name: String,
    /// The argument header `<...>`.
    pub span: Span,
    /// The type its data were read in (and are dumped in).
    pub ty: DataType,
    pub kind: ArgKind,
}

/// A reader of a `.sim` text: Oclgrind's line buffer, one line at a time with `#`
/// comments removed, values read from it as a C++ stream reads them.
pub struct SimParser<'a> {
    text: &'a str,
    /// The current line: `pos` in it, its end before any comment, and where the next line starts.
    pos: usize,
    end: usize,
    next: usize,
    /// What is being read, for messages (`NDRange`, `argument 1: out`).
    parsing: String,
    hex: bool,
    /// The buffers' elements so far, and the caller's check of them
    /// ([`SimParser::with_budget`]).
    elements: u64,
    budget: Option<Budget<'a>>,
}

/// Says whether buffers of this many elements in all fit the launch (its error: why not).
type Budget<'a> = Box<dyn Fn(u64) -> Result<(), String> + 'a>;

type Res<T> = Result<T, Diagnostic>;

/// C's `isspace`, which a stream skips.
fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

impl<'a> SimParser<'a> {
    pub fn new(text: &'a str) -> SimParser<'a> {
        SimParser {
            text,
            pos: 0,
            end: 0,
            next: 0,
            parsing: String::new(),
            hex: false,
            elements: 0,
            budget: None,
        }
    }

    /// Checks every buffer with `fits` (given the elements of all buffers so far) before
    /// its data are allocated: a file may ask for any size, and the launch's memory limit
    /// is to refuse it, not an allocation failure.
    pub fn with_budget(mut self, fits: impl Fn(u64) -> Result<(), String> + 'a) -> Self {
        self.budget = Some(Box::new(fits));
        self
    }

    fn err(&self, what: impl std::fmt::Display, span: Span) -> Diagnostic {
        Diagnostic::new(format!("{what} ({})", self.parsing), span)
    }

    /// The start of the next token, going to the following lines as needed.
    fn token_start(&mut self) -> Res<usize> {
        let bytes = self.text.as_bytes();
        loop {
            while self.pos < self.end && is_space(bytes[self.pos]) {
                self.pos += 1;
            }
            if self.pos < self.end {
                return Ok(self.pos);
            }
            if self.next > self.text.len() {
                let n = self.text.len();
                return Err(self.err("unexpected end of file", n..n));
            }
            let start = self.next;
            let nl = self.text[start..]
                .find('\n')
                .map_or(self.text.len(), |i| start + i);
            self.end = self.text[start..nl].find('#').map_or(nl, |i| start + i);
            self.pos = start;
            self.next = nl + 1;
        }
    }

    /// A whitespace-delimited word (`>> string`).
    fn word(&mut self) -> Res<Word> {
        let start = self.token_start()?;
        let bytes = self.text.as_bytes();
        while self.pos < self.end && !is_space(bytes[self.pos]) {
            self.pos += 1;
        }
        Ok(Word {
            text: self.text[start..self.pos].to_string(),
            span: start..self.pos,
        })
    }

    /// The span of the token at `start` (to the next white space), for messages.
    fn token_span(&self, start: usize) -> Span {
        let bytes = self.text.as_bytes();
        let mut e = start;
        while e < self.end && !is_space(bytes[e]) {
            e += 1;
        }
        start..e
    }

    /// A size (`>> size_t`): a decimal natural number.
    fn size(&mut self) -> Res<usize> {
        let start = self.token_start()?;
        let mut pos = self.pos;
        let v = read_num(self.text, &mut pos, self.end, DataType::Ulong, false);
        match v {
            Ok(Num::I(n)) if n >= 0 && !self.text[start..pos].starts_with('-') => {
                self.pos = pos;
                usize::try_from(n).map_err(|_| self.err("too large", start..pos))
            }
            _ => Err(self.err(
                format!(
                    "failed to parse `{}`: not a size",
                    &self.text[self.token_span(start)]
                ),
                self.token_span(start),
            )),
        }
    }

    /// The program file, kernel name, NDRange and work-group size.
    pub fn header(&mut self) -> Res<Header> {
        self.parsing = "program file".into();
        let program = self.word()?;
        self.parsing = "kernel".into();
        let kernel = self.word()?;
        self.parsing = "NDRange".into();
        let first = self.token_start()?;
        let mut ndrange = [0; 3];
        for n in &mut ndrange {
            *n = self.size()?;
        }
        self.parsing = "work-group size".into();
        let mut wgsize = [0; 3];
        for n in &mut wgsize {
            *n = self.size()?;
        }
        let span = first..self.pos;
        if let Some(d) = (0..3).find(|&d| wgsize[d] == 0 || ndrange[d] % wgsize[d] != 0) {
            return Err(Diagnostic::new(
                format!(
                    "work-group size must divide NDRange exactly: dimension {d} has NDRange {} \
                     and work-group size {}",
                    ndrange[d], wgsize[d]
                ),
                span,
            ));
        }
        Ok(Header {
            program,
            kernel,
            ndrange,
            wgsize,
            span,
        })
    }

    /// One argument per parameter, in order, then the end of the file.
    pub fn arguments(&mut self, params: &[ArgInfo]) -> Res<Vec<SimArg>> {
        let args = params
            .iter()
            .enumerate()
            .map(|(i, p)| self.argument(i, p))
            .collect::<Res<Vec<_>>>()?;
        self.parsing = "end of file".into();
        if let Ok(start) = self.token_start() {
            let span = self.token_span(start);
            return Err(Diagnostic::new(
                format!(
                    "unexpected token `{}` (expected end of file: the kernel has {} argument{})",
                    &self.text[span.clone()],
                    params.len(),
                    if params.len() == 1 { "" } else { "s" }
                ),
                span,
            ));
        }
        Ok(args)
    }

    fn argument(&mut self, index: usize, p: &ArgInfo) -> Res<SimArg> {
        self.parsing = format!("argument {index}: {}", p.name);
        let start = self.token_start()?;
        if self.text.as_bytes()[start] != b'<' {
            return Err(self.err("expected argument header <...>", self.token_span(start)));
        }
        let Some(close) = self.text[start + 1..self.end].rfind('>') else {
            return Err(self.err("missing '>' at end of argument header", start..self.end));
        };
        let close = start + 1 + close;
        self.pos = close + 1;
        let span = start..close + 1;
        let mut ty = None;
        let (mut size, mut dump, mut hex, mut noinit, mut null) =
            (None, false, false, false, false);
        let (mut fill, mut range) = (None, None);
        let (mut ro, mut wo) = (false, false);
        let header = &self.text[start + 1..close];
        let mut off = start + 1;
        for tok in header.split(|c: char| c.is_ascii() && is_space(c as u8)) {
            let tspan = off..off + tok.len();
            off += tok.len() + 1;
            if tok.is_empty() {
                continue;
            }
            let buffer_only = |what: &str| -> Res<()> {
                if p.is_memory() {
                    Ok(())
                } else {
                    Err(self.err(
                        format!("'{what}' only valid for buffer arguments"),
                        tspan.clone(),
                    ))
                }
            };
            let global_only = |what: &str| -> Res<()> {
                if p.pointer && p.space == AddrSpace::Global {
                    Ok(())
                } else {
                    Err(self.err(
                        format!("'{what}' only valid for global memory buffers"),
                        tspan.clone(),
                    ))
                }
            };
            if let Some(t) = DataType::from_token(tok) {
                if ty.is_some() {
                    return Err(self.err("argument type defined multiple times", tspan));
                }
                ty = Some(t);
            } else if tok.starts_with("dump") {
                dump = true;
            } else if let Some(rest) = tok.strip_prefix("fill") {
                match rest.strip_prefix('=') {
                    Some(v) if !v.is_empty() => fill = Some((v, tspan.start + 5)),
                    _ => return Err(self.err("expected =VALUE after 'fill'", tspan)),
                }
            } else if tok == "hex" {
                hex = true;
            } else if tok == "noinit" {
                buffer_only("noinit")?;
                noinit = true;
            } else if tok == "null" {
                buffer_only("null")?;
                null = true;
            } else if let Some(rest) = tok.strip_prefix("range") {
                match rest.strip_prefix('=') {
                    Some(v) if !v.is_empty() => range = Some((v, tspan.start + 6)),
                    _ => return Err(self.err("expected =START:INC:END after 'range'", tspan)),
                }
            } else if tok == "ro" || tok == "wo" {
                if (tok == "ro" && wo) || (tok == "wo" && ro) {
                    return Err(self.err("'ro' and 'wo' are mutually exclusive", tspan));
                }
                global_only(tok)?;
                ro |= tok == "ro";
                wo |= tok == "wo";
            } else if let Some(rest) = tok.strip_prefix("size") {
                let Some(v) = rest.strip_prefix('=') else {
                    return Err(self.err("expected = after 'size'", tspan));
                };
                match v.parse::<usize>() {
                    Ok(n) if v.bytes().all(|b| b.is_ascii_digit()) => size = Some(n),
                    _ => return Err(self.err("invalid value for 'size'", tspan)),
                }
            } else {
                return Err(self.err(format!("unrecognised header token '{tok}'"), tspan));
            }
        }
        let size = if null {
            if size.is_some() || fill.is_some() || range.is_some() || noinit || dump {
                return Err(self.err("'null' not valid with other argument descriptors", span));
            }
            0
        } else {
            size.ok_or_else(|| self.err("size required (<size=BYTES ...>)", span.clone()))?
        };
        let ty = match ty {
            Some(t) => t,
            None => DataType::default_for(&p.type_name()).ok_or_else(|| {
                self.err(
                    format!(
                        "invalid default kernel argument type `{}`: name the data's type in \
                         the header (e.g. <size={size} int>)",
                        p.type_name()
                    ),
                    span.clone(),
                )
            })?,
        };
        if !size.is_multiple_of(ty.size()) {
            return Err(self.err(
                format!(
                    "initialiser type must exactly divide argument size ({size} bytes of {})",
                    ty.name()
                ),
                span,
            ));
        }
        if dump && !p.is_memory() {
            return Err(self.err("'dump' only valid for memory objects", span));
        }
        if [noinit, fill.is_some(), range.is_some()]
            .iter()
            .filter(|b| **b)
            .count()
            > 1
        {
            return Err(self.err("multiple initializers present", span));
        }
        if p.is_memory() {
            let elem = DataType::of_base(&p.base).map_or(ty.size(), DataType::size);
            self.elements = self.elements.saturating_add((size / elem) as u64);
            if let Some(fits) = &self.budget {
                fits(self.elements).map_err(|e| Diagnostic::new(e, span.clone()))?;
            }
        }
        let name = p.name.clone();
        if p.pointer && p.space == AddrSpace::Local {
            return Ok(SimArg {
                name,
                span,
                ty,
                kind: ArgKind::Local { size },
            });
        }
        if null {
            return Ok(SimArg {
                name,
                span,
                ty,
                kind: ArgKind::Null,
            });
        }
        self.hex = hex;
        let count = size / ty.size();
        let mut bytes = Vec::with_capacity(size);
        if noinit {
            bytes.resize(size, 0);
        } else if let Some((text, at)) = fill {
            let v = self.whole_value(text, at, ty, "invalid fill value")?;
            for _ in 0..count {
                ty.encode(v, &mut bytes);
            }
        } else if let Some((text, at)) = range {
            self.range(text, at, ty, size, &mut bytes)?;
        } else {
            for _ in 0..count {
                let v = self.value(ty)?;
                ty.encode(v, &mut bytes);
            }
        }
        self.hex = false;
        let kind = if p.pointer {
            ArgKind::Buffer {
                bytes,
                dump,
                hex,
                noinit,
            }
        } else {
            ArgKind::Scalar { bytes }
        };
        Ok(SimArg {
            name,
            span,
            ty,
            kind,
        })
    }

    /// The next value of the data, from this or a following line.
    fn value(&mut self, ty: DataType) -> Res<Num> {
        let start = self.token_start()?;
        let mut pos = start;
        match read_num(self.text, &mut pos, self.end, ty, self.hex) {
            Ok(v) => {
                self.pos = pos;
                Ok(v)
            }
            Err(e) => {
                let span = self.token_span(start);
                Err(self.err(e.message(&self.text[span.clone()], ty), span))
            }
        }
    }

    /// A `fill=` value: one value that is the whole text.
    fn whole_value(&self, text: &str, at: usize, ty: DataType, what: &str) -> Res<Num> {
        let mut pos = 0;
        let span = at..at + text.len();
        match read_num(text, &mut pos, text.len(), ty, self.hex) {
            Ok(v) if pos == text.len() => Ok(v),
            Err(NumError::Char) => Err(self.err(NumError::Char.message(text, ty), span)),
            _ => Err(self.err(format!("{what} `{text}` for {}", ty.name()), span)),
        }
    }

    /// `range=START:INC:END`: START, START+INC, ... up to END, which must fill the
    /// argument exactly; the arithmetic is the type's own (as Oclgrind's, in `T`).
    fn range(
        &self,
        text: &str,
        at: usize,
        ty: DataType,
        size: usize,
        out: &mut Vec<u8>,
    ) -> Res<()> {
        let span = at..at + text.len();
        let bad = || {
            self.err(
                format!("invalid range format `{text}` (START:INC:END)"),
                span.clone(),
            )
        };
        let mut vals = [Num::I(0); 3];
        let mut pos = 0;
        for (i, v) in vals.iter_mut().enumerate() {
            *v = read_num(text, &mut pos, text.len(), ty, self.hex).map_err(|e| match e {
                NumError::Char => self.err(NumError::Char.message(text, ty), span.clone()),
                _ => bad(),
            })?;
            if i < 2 {
                if text.as_bytes().get(pos) != Some(&b':') {
                    return Err(bad());
                }
                pos += 1;
            }
        }
        if pos != text.len() {
            return Err(bad());
        }
        let [start, inc, end] = vals.map(|v| wrap(v, ty));
        // (end - start + inc) / (double)inc, in T's arithmetic (C's promotions for the
        // 1- and 2-byte types, which cannot overflow there).
        let num = match (start, inc, end) {
            (Num::F(s), Num::F(i), Num::F(e)) => {
                let sum = if ty == DataType::Float {
                    ((e as f32 - s as f32) + i as f32) as f64
                } else {
                    e - s + i
                };
                sum / i
            }
            (Num::I(s), Num::I(i), Num::I(e)) => {
                let sum = if ty.size() < 4 {
                    Num::I(e - s + i)
                } else {
                    wrap(Num::I(e - s + i), ty)
                };
                let Num::I(sum) = sum else { unreachable!() };
                sum as f64 / i as f64
            }
            _ => unreachable!("one type"),
        };
        if num.ceil() != num || num * ty.size() as f64 != size as f64 {
            return Err(self.err(
                format!(
                    "range `{text}` doesn't produce correct buffer size ({} values of {} \
                     for {size} bytes)",
                    size / ty.size(),
                    ty.name()
                ),
                span,
            ));
        }
        let mut v = start;
        for _ in 0..size / ty.size() {
            ty.encode(v, out);
            v = wrap(
                match (v, inc) {
                    (Num::F(a), Num::F(b)) if ty == DataType::Float => {
                        Num::F((a as f32 + b as f32) as f64)
                    }
                    (Num::F(a), Num::F(b)) => Num::F(a + b),
                    (Num::I(a), Num::I(b)) => Num::I(a + b),
                    _ => unreachable!("one type"),
                },
                ty,
            );
        }
        Ok(())
    }
}

/// `v` as a value of `ty`: integers modulo 2^bits, floats rounded to `float`.
fn wrap(v: Num, ty: DataType) -> Num {
    let mut b = Vec::new();
    ty.encode(v, &mut b);
    ty.decode(&b)
}

/// Why a value could not be read.
#[derive(Clone, Copy, Debug, PartialEq)]
enum NumError {
    /// Not a number of the type (or out of a signed type's range): the stream fails.
    Parse,
    /// A 1-byte type's value outside its range (Oclgrind's "Invalid char value").
    Char,
}

impl NumError {
    fn message(self, token: &str, ty: DataType) -> String {
        match self {
            NumError::Parse => format!("failed to parse `{token}` as {}", ty.name()),
            NumError::Char => format!("invalid char value `{token}` for {}", ty.name()),
        }
    }
}

/// Reads one value of `ty` at `*pos` (after white space) as `stream >> value` does in
/// the C locale, leaving `*pos` after the characters it took.
fn read_num(
    text: &str,
    pos: &mut usize,
    end: usize,
    ty: DataType,
    hex: bool,
) -> Result<Num, NumError> {
    let b = text.as_bytes();
    while *pos < end && is_space(b[*pos]) {
        *pos += 1;
    }
    let start = *pos;
    let mut p = start;
    let at = |p: usize| if p < end { b[p] } else { 0 };
    if at(p) == b'+' || at(p) == b'-' {
        p += 1;
    }
    if ty.is_float() {
        let digits = |p: &mut usize| {
            let s = *p;
            while at(*p).is_ascii_digit() {
                *p += 1;
            }
            *p - s
        };
        let mut n = digits(&mut p);
        if at(p) == b'.' {
            p += 1;
            n += digits(&mut p);
        }
        if n == 0 {
            return Err(NumError::Parse);
        }
        if at(p) == b'e' || at(p) == b'E' {
            p += 1;
            if at(p) == b'+' || at(p) == b'-' {
                p += 1;
            }
            if digits(&mut p) == 0 {
                return Err(NumError::Parse);
            }
        }
        let s = &text[start..p];
        let v = if ty == DataType::Float {
            s.parse::<f32>().map(|v| v as f64)
        } else {
            s.parse::<f64>()
        }
        .map_err(|_| NumError::Parse)?;
        if v.is_infinite() {
            return Err(NumError::Parse);
        }
        *pos = p;
        return Ok(Num::F(v));
    }
    let negative = at(start) == b'-';
    let radix = if hex { 16 } else { 10 };
    let mut found = false;
    if hex && at(p) == b'0' && (at(p + 1) == b'x' || at(p + 1) == b'X') {
        p += 2;
        found = true;
    }
    let mut mag: u128 = 0;
    while let Some(d) = (at(p) as char).to_digit(radix) {
        mag = (mag * radix as u128 + d as u128).min(u128::MAX >> 8);
        p += 1;
        found = true;
    }
    if !found {
        return Err(NumError::Parse);
    }
    *pos = p;
    // The 1-byte types are read as an `int` that must then fit.
    let read_as = if ty.size() == 1 { DataType::Int } else { ty };
    let bits = 8 * read_as.size() as u32;
    let v = if read_as.is_signed() {
        let limit = 1u128 << (bits - 1);
        if (negative && mag > limit) || (!negative && mag >= limit) {
            return Err(NumError::Parse);
        }
        if negative {
            -(mag as i128)
        } else {
            mag as i128
        }
    } else {
        if mag > (1u128 << bits) - 1 {
            return Err(NumError::Parse);
        }
        // A negative value of an unsigned type wraps, as `strtoul` does.
        let m = mag as i128;
        let wrapped = if negative { (1i128 << bits) - m } else { m };
        wrapped & ((1i128 << bits) - 1)
    };
    if ty.size() == 1 {
        let ok = match ty {
            DataType::Char => (-128..=127).contains(&v),
            _ => (0..=255).contains(&v),
        };
        if !ok {
            return Err(NumError::Char);
        }
    }
    Ok(Num::I(v))
}

/// The `.sim` launch in the terms of ksim's command-line launch of a `.cl` kernel (the
/// one launch builder serves both): NDRange and work-group size per dimension (trailing
/// 1s dropped), `--input NAME=SPEC` for each buffer and `--arg NAME=VALUE` for each scalar.
#[derive(Clone, Debug, PartialEq)]
pub struct FlagLaunch {
    pub global: Vec<usize>,
    pub local: Vec<usize>,
    pub inputs: Vec<(String, String)>,
    pub args: Vec<(String, String)>,
}

/// Decodes every argument's bytes in its parameter's type and writes them as ksim's launch
/// values; a value ksim's lowered type cannot hold (a `size_t` above 2^32, a `double`) is
/// an error at the argument's header.
pub fn to_flags(
    header: &Header,
    args: &[SimArg],
    params: &[ArgInfo],
    info: &KernelInfo,
) -> Res<FlagLaunch> {
    // Trailing dimensions of 1 in both are left out; the two keep the same number of
    // dimensions (`8 2 2` with `4 1 1` is a 3-D launch).
    let used = |d: [usize; 3]| d.iter().rposition(|&x| x != 1).map_or(1, |i| i + 1);
    let n = used(header.ndrange).max(used(header.wgsize));
    let mut out = FlagLaunch {
        global: header.ndrange[..n].to_vec(),
        local: header.wgsize[..n].to_vec(),
        inputs: Vec::new(),
        args: Vec::new(),
    };
    for (a, p) in args.iter().zip(params) {
        let elem = |found: Option<TypeName>| {
            found.ok_or_else(|| {
                Diagnostic::new(
                    format!("kernel `{}` has no parameter `{}`", info.name, a.name),
                    a.span.clone(),
                )
            })
        };
        if let Some(layout) = &p.layout {
            struct_flags(a, p, layout, info, &mut out)?;
            continue;
        }
        if let (ArgKind::Scalar { bytes }, Base::Vector(e, n)) = (&a.kind, &p.base) {
            let dt = DataType::of_base(e).expect("a vector of numbers");
            let lanes = *n as usize;
            let member = Member {
                path: String::new(),
                ty: dt,
                lanes,
                offset: 0,
            };
            let size = dt.size() * simstruct::slots(lanes);
            scalar_members(a, &p.base.name(), size, bytes, &[member], info, &mut out)?;
            continue;
        }
        let Some(dt) = DataType::of_base(&p.base) else {
            return Err(Diagnostic::new(
                format!(
                    "parameter `{}` has type `{}`, which has no numeric contents",
                    a.name,
                    p.type_name()
                ),
                a.span.clone(),
            ));
        };
        let values = |bytes: &[u8], ty: TypeName| -> Res<Vec<String>> {
            if !bytes.len().is_multiple_of(dt.size()) {
                return Err(Diagnostic::new(
                    format!(
                        "{} bytes are not a whole number of `{}` elements ({} bytes each)",
                        bytes.len(),
                        p.base.name(),
                        dt.size()
                    ),
                    a.span.clone(),
                ));
            }
            bytes
                .chunks(dt.size())
                .map(|c| ksim_value(dt.decode(c), ty, dt))
                .collect::<Result<Vec<_>, String>>()
                .map_err(|e| Diagnostic::new(format!("argument `{}`: {e}", a.name), a.span.clone()))
        };
        let buffer_elem = || {
            elem(
                info.buffers
                    .iter()
                    .find(|b| b.name == a.name)
                    .map(|b| b.elem),
            )
        };
        match &a.kind {
            ArgKind::Buffer { bytes, noinit, .. } => {
                let ty = buffer_elem()?;
                let spec = if *noinit {
                    // No contents: undefined under `--uninit check`, as on a device.
                    format!("undef:{}", bytes.len() / dt.size())
                } else if bytes.is_empty() {
                    values(bytes, ty)?;
                    format!("zeros:{}", bytes.len() / dt.size())
                } else {
                    values(bytes, ty)?.join(",")
                };
                out.inputs.push((a.name.clone(), spec));
            }
            ArgKind::Local { size } => {
                buffer_elem()?;
                if !size.is_multiple_of(dt.size()) {
                    return Err(Diagnostic::new(
                        format!(
                            "{size} bytes are not a whole number of `{}` elements",
                            p.base.name()
                        ),
                        a.span.clone(),
                    ));
                }
                // `__local` memory starts undefined on a device.
                out.inputs
                    .push((a.name.clone(), format!("undef:{}", size / dt.size())));
            }
            ArgKind::Null => {
                return Err(Diagnostic::new(
                    format!(
                        "a null buffer (`{}`) is not supported: ksim's buffers are arrays",
                        a.name
                    ),
                    a.span.clone(),
                ))
            }
            ArgKind::Scalar { bytes } => {
                let ty = elem(info.scalars.iter().find(|s| s.name == a.name).map(|s| s.ty))?;
                if bytes.len() != dt.size() {
                    return Err(Diagnostic::new(
                        format!(
                            "scalar `{}` is a {}-byte `{}`, but its header gives size={}",
                            a.name,
                            dt.size(),
                            p.base.name(),
                            bytes.len()
                        ),
                        a.span.clone(),
                    ));
                }
                let v = values(bytes, ty)?.remove(0);
                out.args.push((a.name.clone(), v));
            }
        }
    }
    Ok(out)
}

/// A struct argument: a buffer (or `__local` memory) of structs as one input per member
/// buffer `NAME.member`, the members' values cut out of each struct's bytes; a struct by
/// value as one scalar per member.
fn struct_flags(
    a: &SimArg,
    p: &ArgInfo,
    layout: &Result<Layout, String>,
    info: &KernelInfo,
    out: &mut FlagLaunch,
) -> Res<()> {
    let err = |m: String| Diagnostic::new(m, a.span.clone());
    let layout = layout.as_ref().map_err(|why| {
        err(format!(
            "parameter `{}` has type `{}`, whose bytes a .sim file cannot give: {why}",
            a.name,
            p.type_name()
        ))
    })?;
    let (bytes, undef) = match &a.kind {
        ArgKind::Buffer { bytes, noinit, .. } => (bytes.as_slice(), *noinit),
        ArgKind::Local { size } => (&vec![0; *size][..], true),
        ArgKind::Scalar { bytes } => {
            return scalar_members(
                a,
                &p.base.name(),
                layout.size,
                bytes,
                &layout.members,
                info,
                out,
            )
        }
        ArgKind::Null => {
            return Err(err(format!(
                "a null buffer (`{}`) is not supported: ksim's buffers are arrays",
                a.name
            )))
        }
    };
    if !bytes.len().is_multiple_of(layout.size) {
        return Err(err(format!(
            "{} bytes are not a whole number of `{}` ({} bytes each)",
            bytes.len(),
            p.base.name(),
            layout.size
        )));
    }
    let n = bytes.len() / layout.size;
    for m in &layout.members {
        let name = format!("{}.{}", a.name, m.path);
        // A member the kernel never uses has no buffer.
        let Some(b) = info.buffers.iter().find(|b| b.name == name) else {
            continue;
        };
        let slots = simstruct::slots(m.lanes);
        let spec = if undef {
            format!("undef:{}", n * slots)
        } else {
            let mut values = Vec::with_capacity(n * slots);
            for i in 0..n {
                for l in 0..slots {
                    let at = i * layout.size + m.offset + l * m.ty.size();
                    let v = m.ty.decode(&bytes[at..at + m.ty.size()]);
                    values.push(
                        ksim_value(v, b.elem, m.ty)
                            .map_err(|e| err(format!("argument `{name}`: {e}")))?,
                    );
                }
            }
            values.join(",")
        };
        out.inputs.push((name, spec));
    }
    Ok(())
}

/// A vector or struct passed by value: its `size` bytes as one scalar argument per
/// component (`v.x`, `s.a`, `s.b.y`), as ksim's lowering names them.
fn scalar_members(
    a: &SimArg,
    ty: &str,
    size: usize,
    bytes: &[u8],
    members: &[Member],
    info: &KernelInfo,
    out: &mut FlagLaunch,
) -> Res<()> {
    let err = |m: String| Diagnostic::new(m, a.span.clone());
    if bytes.len() != size {
        return Err(err(format!(
            "`{}` is a {size}-byte `{ty}`, but its header gives size={}",
            a.name,
            bytes.len()
        )));
    }
    for m in members {
        for l in 0..m.lanes {
            let mut name = a.name.clone();
            if !m.path.is_empty() {
                name = format!("{name}.{}", m.path);
            }
            if m.lanes > 1 {
                name = format!("{name}.{}", simstruct::component(l, m.lanes));
            }
            let Some(s) = info.scalars.iter().find(|s| s.name == name) else {
                continue;
            };
            let at = m.offset + l * m.ty.size();
            let v = m.ty.decode(&bytes[at..at + m.ty.size()]);
            let v =
                ksim_value(v, s.ty, m.ty).map_err(|e| err(format!("argument `{name}`: {e}")))?;
            out.args.push((name, v));
        }
    }
    Ok(())
}

/// `v` (of the OpenCL type `dt`) as ksim's launch text for its lowered type `ty`.
fn ksim_value(v: Num, ty: TypeName, dt: DataType) -> Result<String, String> {
    let range = |lo: i128, hi: i128, what: &str| match v {
        Num::I(i) if (lo..=hi).contains(&i) => Ok(i.to_string()),
        _ => Err(format!(
            "the {} value {} does not fit ksim's {what}",
            dt.name(),
            show(v)
        )),
    };
    match ty {
        TypeName::Int => range(i32::MIN as i128, i32::MAX as i128, "32-bit int"),
        TypeName::Uint => range(0, u32::MAX as i128, "32-bit uint"),
        TypeName::Bool => range(0, 1, "bool"),
        TypeName::Float => match v {
            Num::F(f) if dt == DataType::Float || f as f32 as f64 == f || f.is_nan() => {
                Ok((f as f32).to_string())
            }
            _ => Err(format!(
                "the {} value {} is not a 32-bit float",
                dt.name(),
                show(v)
            )),
        },
        TypeName::Char => range(i8::MIN as i128, i8::MAX as i128, "char"),
        TypeName::Uchar => range(0, u8::MAX as i128, "uchar"),
        TypeName::Short => range(i16::MIN as i128, i16::MAX as i128, "short"),
        TypeName::Ushort => range(0, u16::MAX as i128, "ushort"),
        TypeName::Long => range(i64::MIN as i128, i64::MAX as i128, "long"),
        TypeName::Ulong => range(0, u64::MAX as i128, "ulong"),
        TypeName::Double => match v {
            Num::F(f) => Ok(format!("{f:?}")),
            Num::I(i) => Ok(format!("{:?}", i as f64)),
        },
        TypeName::Generic => Err("a generic parameter cannot be bound from a .sim file".into()),
        TypeName::Ptr => Err("a pointer cannot be bound from a .sim file".into()),
    }
}

fn show(v: Num) -> String {
    match v {
        Num::I(i) => i.to_string(),
        Num::F(f) => f.to_string(),
    }
}

/// A dumped buffer's final bytes from ksim's values of its parameter's type.
pub fn encode(p: &ArgInfo, values: &[Num]) -> Vec<u8> {
    let dt = DataType::of_base(&p.base).unwrap_or(DataType::Uchar);
    let mut out = Vec::with_capacity(values.len() * dt.size());
    for v in values {
        dt.encode(*v, &mut out);
    }
    out
}

/// Oclgrind's dump of one argument after the run: an empty line, `Argument 'NAME': N
/// bytes`, one `  NAME[i] = V` line per value of the argument's data type, and an empty
/// line. Values are printed as C++'s `cout` prints them (1-byte types as `int`, floats as
/// `%g`; with `hex`, `0x` and the value zero-padded to two digits per byte).
pub fn dump(arg: &SimArg, bytes: &[u8]) -> String {
    let ty = arg.ty;
    let hex = matches!(arg.kind, ArgKind::Buffer { hex: true, .. });
    let mut s = format!("\nArgument '{}': {} bytes\n", arg.name, bytes.len());
    for (i, c) in bytes.chunks_exact(ty.size()).enumerate() {
        let v = ty.decode(c);
        let text = match v {
            Num::F(f) => c_g(f),
            Num::I(i) if hex => {
                // `cout << hex` prints a signed value as its unsigned bit pattern, at the
                // width of the type printed (`int` for the 1-byte types).
                let bits = 8 * if ty.size() == 1 { 4 } else { ty.size() as u32 };
                format!("{:x}", (i as u128) & ((1u128 << bits) - 1))
            }
            Num::I(i) => i.to_string(),
        };
        let text = if hex {
            format!("0x{text:0>width$}", width = 2 * ty.size())
        } else {
            text
        };
        s.push_str(&format!("  {}[{i}] = {text}\n", arg.name));
    }
    s.push('\n');
    s
}

/// C's `%g` with precision 6 (what `cout << double` prints by default).
pub fn c_g(v: f64) -> String {
    const P: i32 = 6;
    if v.is_nan() {
        return if v.is_sign_negative() { "-nan" } else { "nan" }.into();
    }
    if v.is_infinite() {
        return if v < 0.0 { "-inf" } else { "inf" }.into();
    }
    if v == 0.0 {
        return if v.is_sign_negative() { "-0" } else { "0" }.into();
    }
    let sci = format!("{:.*e}", (P - 1) as usize, v);
    let (mant, exp) = sci.split_once('e').expect("exponent form");
    let exp: i32 = exp.parse().expect("an exponent");
    let trim = |s: &str| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s.to_string()
        }
    };
    if !(-4..P).contains(&exp) {
        format!(
            "{}e{}{:02}",
            trim(mant),
            if exp < 0 { '-' } else { '+' },
            exp.abs()
        )
    } else {
        trim(&format!("{:.*}", (P - 1 - exp) as usize, v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int_ptr(name: &str, space: AddrSpace) -> ArgInfo {
        ArgInfo {
            name: name.into(),
            space,
            pointer: true,
            base: Base::Int { unsigned: false },
            layout: None,
        }
    }

    fn scalar(name: &str, base: Base) -> ArgInfo {
        ArgInfo {
            name: name.into(),
            space: AddrSpace::Private,
            pointer: false,
            base,
            layout: None,
        }
    }

    const HEAD: &str = "k.cl\nk\n4 1 1\n4 1 1\n";

    fn args(body: &str, params: &[ArgInfo]) -> Res<Vec<SimArg>> {
        let text = format!("{HEAD}{body}");
        let mut p = SimParser::new(&text);
        p.header().unwrap();
        p.arguments(params)
    }

    #[test]
    fn buffers_are_checked_against_the_budget_before_allocation() {
        let text = format!("{HEAD}<size=64 fill=0>\n<size=17179869184 fill=0 dump>\n");
        let params = [
            int_ptr("a", AddrSpace::Global),
            int_ptr("b", AddrSpace::Global),
        ];
        let asked = std::cell::RefCell::new(Vec::new());
        let mut p = SimParser::new(&text).with_budget(|n| {
            asked.borrow_mut().push(n);
            if n > 1000 {
                Err(format!("{n} elements: too many"))
            } else {
                Ok(())
            }
        });
        p.header().unwrap();
        let e = p.arguments(&params).unwrap_err();
        assert!(
            e.message.contains("4294967312 elements: too many"),
            "{}",
            e.message
        );
        assert_eq!(*asked.borrow(), [16, 16 + (1 << 32)]);
    }

    fn ints(a: &SimArg) -> Vec<i128> {
        let ArgKind::Buffer { bytes, .. } = &a.kind else {
            panic!("not a buffer: {a:?}")
        };
        bytes
            .chunks(a.ty.size())
            .map(|c| match a.ty.decode(c) {
                Num::I(i) => i,
                Num::F(f) => f as i128,
            })
            .collect()
    }

    fn err(body: &str, params: &[ArgInfo]) -> String {
        args(body, params).unwrap_err().message
    }

    #[test]
    fn header_with_comments_across_lines() {
        let text = "# a comment\n  prog.cl # the program\nvecadd\n16 2\n 1 4 # wg\n2 1\n";
        let h = SimParser::new(text).header().unwrap();
        assert_eq!(h.program.text, "prog.cl");
        assert_eq!(&text[h.program.span.clone()], "prog.cl");
        assert_eq!(h.kernel.text, "vecadd");
        assert_eq!(h.ndrange, [16, 2, 1]);
        assert_eq!(h.wgsize, [4, 2, 1]);
    }

    #[test]
    fn header_errors_point_at_the_token() {
        let text = "p.cl\nk\n16 x 1\n";
        let e = SimParser::new(text).header().unwrap_err();
        assert_eq!(&text[e.span.clone()], "x");
        assert!(e.message.contains("NDRange"), "{}", e.message);
        let e = SimParser::new("p.cl\nk\n16 1 1\n").header().unwrap_err();
        assert!(
            e.message.contains("end of file (work-group size)"),
            "{}",
            e.message
        );
        let e = SimParser::new("p.cl k 16 1 1 3 1 1").header().unwrap_err();
        assert!(e.message.contains("must divide NDRange"), "{}", e.message);
    }

    #[test]
    fn list_values_span_lines_and_comments() {
        let a = args(
            "<size=16>\n1 2 # two\n-3\n  4\n",
            &[int_ptr("a", AddrSpace::Global)],
        )
        .unwrap();
        assert_eq!(ints(&a[0]), [1, 2, -3, 4]);
        // Values need no white space between them when the stream stops at a sign.
        let a = args("<size=8> 5-6", &[int_ptr("a", AddrSpace::Global)]).unwrap();
        assert_eq!(ints(&a[0]), [5, -6]);
    }

    #[test]
    fn fill_range_and_types() {
        let p = [int_ptr("a", AddrSpace::Global)];
        assert_eq!(ints(&args("<size=12 fill=7>", &p).unwrap()[0]), [7, 7, 7]);
        assert_eq!(
            ints(&args("<size=16 range=0:2:6>", &p).unwrap()[0]),
            [0, 2, 4, 6]
        );
        assert_eq!(
            ints(&args("<size=16 range=3:-1:0>", &p).unwrap()[0]),
            [3, 2, 1, 0]
        );
        let a = &args("<size=4 uchar range=250:1:253>", &p).unwrap()[0];
        assert_eq!(a.ty, DataType::Uchar);
        assert_eq!(ints(a), [250, 251, 252, 253]);
        let f = [ArgInfo {
            base: Base::Float,
            ..int_ptr("f", AddrSpace::Global)
        }];
        let a = &args("<size=12 range=0.5:0.25:1>", &f).unwrap()[0];
        assert_eq!(a.ty, DataType::Float);
        let ArgKind::Buffer { bytes, .. } = &a.kind else {
            panic!()
        };
        let vals: Vec<f32> = bytes
            .chunks(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(vals, [0.5, 0.75, 1.0]);
        assert!(err("<size=12 range=0:1:3>", &p).contains("doesn't produce correct buffer size"));
        assert!(err("<size=12 range=0:1>", &p).contains("invalid range format"));
        assert!(err("<size=12 fill=1.5>", &p).contains("invalid fill value"));
        assert!(err("<size=12 fill=1 range=0:1:2>", &p).contains("multiple initializers"));
    }

    #[test]
    fn char_values_must_fit_and_hex_reads_hexadecimal() {
        let p = [int_ptr("a", AddrSpace::Global)];
        assert!(err("<size=4 char> 1 2 3 200", &p).contains("invalid char value `200`"));
        assert!(err("<size=4 uchar> 1 2 3 -1", &p).contains("invalid char value"));
        assert_eq!(
            ints(&args("<size=4 char> 1 2 3 -128", &p).unwrap()[0]),
            [1, 2, 3, -128]
        );
        assert_eq!(
            ints(&args("<size=8 hex> ff 0x10", &p).unwrap()[0]),
            [255, 16]
        );
        // Without `hex`, `0x10` reads 0 and leaves `x10`, which is no number.
        assert!(err("<size=8> 0x10", &p).contains("failed to parse `x10` as int"));
        // Signed types are range-checked; a negative unsigned value wraps (strtoul).
        assert!(err("<size=4> 2147483648", &p).contains("failed to parse"));
        assert_eq!(
            ints(&args("<size=4 uint> -1", &p).unwrap()[0]),
            [4294967295]
        );
        assert!(err("<size=4> 'a'", &p).contains("failed to parse `'a'`"));
    }

    #[test]
    fn local_scalar_null_and_header_errors() {
        let p = [
            int_ptr("l", AddrSpace::Local),
            scalar("n", Base::Int { unsigned: false }),
            int_ptr("g", AddrSpace::Global),
        ];
        let a = args("<size=64>\n<size=4> 16\n<null>", &p).unwrap();
        assert_eq!(a[0].kind, ArgKind::Local { size: 64 });
        assert_eq!(
            a[1].kind,
            ArgKind::Scalar {
                bytes: 16i32.to_le_bytes().to_vec()
            }
        );
        assert_eq!(a[2].kind, ArgKind::Null);
        let g = [int_ptr("g", AddrSpace::Global)];
        assert!(err("<fill=1>", &g).contains("size required"));
        assert!(err("size=4", &g).contains("expected argument header"));
        assert!(err("<size=4 dump", &g).contains("missing '>'"));
        assert!(err("<size=4 bogus>", &g).contains("unrecognised header token 'bogus'"));
        assert!(err("<size=6>", &g).contains("must exactly divide"));
        assert!(err("<size=4 int float>", &g).contains("defined multiple times"));
        assert!(err("<size=x4>", &g).contains("invalid value for 'size'"));
        assert!(err("<size=4> 1 2", &g).contains("unexpected token `2`"));
        assert!(err("<size=4>", &g).contains("unexpected end of file (argument 0: g)"));
        assert!(err("<null dump>", &g).contains("'null' not valid"));
        let l = [int_ptr("l", AddrSpace::Local)];
        assert!(err("<size=4 dump>", &l).contains("'dump' only valid for memory objects"));
        assert!(err("<size=4 null>", &l).contains("'null' only valid for buffer"));
        let s = [scalar("s", Base::Struct("S".into()))];
        assert!(err("<size=4>", &s).contains("invalid default kernel argument type `struct S`"));
        // The error's span is the header on its line.
        let text = format!("{HEAD}<size=4 bogus>");
        let mut pp = SimParser::new(&text);
        pp.header().unwrap();
        let e = pp.arguments(&g).unwrap_err();
        assert_eq!(&text[e.span], "bogus");
    }

    #[test]
    fn to_flags_decodes_in_the_parameter_type() {
        use crate::ast::Space;
        use crate::cl::lower::{Buffer, Scalar};
        let params = [
            int_ptr("a", AddrSpace::Global),
            scalar("n", Base::Size { signed: false }),
            int_ptr("l", AddrSpace::Local),
        ];
        let info = KernelInfo {
            name: "k".into(),
            buffers: vec![
                Buffer {
                    name: "a".into(),
                    array: "a".into(),
                    size_param: "a.len".into(),
                    space: Space::Global,
                    elem: TypeName::Int,
                    lanes: 1,
                },
                Buffer {
                    name: "l".into(),
                    array: "l".into(),
                    size_param: "l.len".into(),
                    space: Space::Local,
                    elem: TypeName::Int,
                    lanes: 1,
                },
            ],
            scalars: vec![Scalar {
                name: "n".into(),
                param: "n".into(),
                ty: TypeName::Uint,
            }],
            notes: Vec::new(),
            vector_arrays: Vec::new(),
            byte_arrays: Vec::new(),
            images: Vec::new(),
            samplers: Vec::new(),
        };
        let text = "k.cl k 8 2 1 4 1 1\n<size=8 uchar> 1 0 0 0 255 255 255 255\n<size=8 ulong> 9\n<size=32>";
        let mut p = SimParser::new(text);
        let h = p.header().unwrap();
        let a = p.arguments(&params).unwrap();
        let f = to_flags(&h, &a, &params, &info).unwrap();
        assert_eq!(f.global, [8, 2]);
        // As many dimensions as the NDRange: `4 1 1` is `4,1` here, not `4`.
        assert_eq!(f.local, [4, 1]);
        assert_eq!(
            f.inputs,
            [("a".into(), "1,-1".into()), ("l".into(), "undef:8".into())]
        );
        assert_eq!(f.args, [("n".to_string(), "9".to_string())]);
        let text = "k.cl k 4 1 1 4 1 1\n<size=4> 1\n<size=8 long> -1\n<size=32>";
        let mut p = SimParser::new(text);
        let h = p.header().unwrap();
        let a = p.arguments(&params).unwrap();
        let e = to_flags(&h, &a, &params, &info).unwrap_err();
        assert!(
            e.message.contains("does not fit ksim's 32-bit uint"),
            "{}",
            e.message
        );
        let text = "k.cl k 4 1 1 4 1 1\n<size=4> 1\n<size=4 uint> 1\n<size=32>";
        let mut p = SimParser::new(text);
        let h = p.header().unwrap();
        let a = p.arguments(&params).unwrap();
        let e = to_flags(&h, &a, &params, &info).unwrap_err();
        assert!(e.message.contains("8-byte `size_t`"), "{}", e.message);
    }

    #[test]
    fn dump_format_is_oclgrinds() {
        let arg = |ty, hex| SimArg {
            name: "data".into(),
            span: 0..0,
            ty,
            kind: ArgKind::Buffer {
                bytes: Vec::new(),
                dump: true,
                hex,
                noinit: false,
            },
        };
        let bytes: Vec<u8> = [0i32, -1, 42]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        assert_eq!(
            dump(&arg(DataType::Int, false), &bytes),
            "\nArgument 'data': 12 bytes\n  data[0] = 0\n  data[1] = -1\n  data[2] = 42\n\n"
        );
        assert_eq!(
            dump(&arg(DataType::Int, true), &bytes),
            "\nArgument 'data': 12 bytes\n  data[0] = 0x00000000\n  data[1] = 0xffffffff\n  data[2] = 0x0000002a\n\n"
        );
        assert_eq!(
            dump(&arg(DataType::Char, true), &[5, 0xff]),
            "\nArgument 'data': 2 bytes\n  data[0] = 0x05\n  data[1] = 0xffffffff\n\n"
        );
        assert_eq!(
            dump(&arg(DataType::Uchar, false), &[200]),
            "\nArgument 'data': 1 bytes\n  data[0] = 200\n\n"
        );
        let fl: Vec<u8> = [1.5f32, 0.1, 1e10, -2.0]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        assert_eq!(
            dump(&arg(DataType::Float, false), &fl),
            "\nArgument 'data': 16 bytes\n  data[0] = 1.5\n  data[1] = 0.1\n  data[2] = 1e+10\n  data[3] = -2\n\n"
        );
    }

    #[test]
    fn percent_g_as_c_prints_it() {
        for (v, s) in [
            (0.0, "0"),
            (1.0, "1"),
            (100000.0, "100000"),
            (1000000.0, "1e+06"),
            (123456789.0, "1.23457e+08"),
            (0.0001, "0.0001"),
            (0.00001234, "1.234e-05"),
            (1.23456789, "1.23457"),
            (-0.5, "-0.5"),
            (f64::INFINITY, "inf"),
            (1e100, "1e+100"),
            (0.1f32 as f64, "0.1"),
            // An exact tie rounds to even, as glibc's printf does.
            (1234565.0, "1.23456e+06"),
            (2.5, "2.5"),
        ] {
            assert_eq!(c_g(v), s, "{v}");
        }
    }
}
