//! The C preprocessor of OpenCL C (C99 §6.10): `#define` (object- and function-like, `#`,
//! `##`, `__VA_ARGS__`), `#undef`, `#if`/`#ifdef`/`#ifndef`/`#elif`/`#else`/`#endif` with
//! constant expressions and `defined`, `#include "..."` (relative to the including file,
//! then each `-I` directory), `#pragma` (recorded), `#error`, and `-D NAME[=VALUE]`.
//!
//! It works on tokens, not text, so that every token keeps the span of the characters it
//! came from: a token of a macro's argument keeps its own span, a token of a macro's body
//! takes the span of the macro use (`F(a, b)` as a whole). A diagnostic about expanded code
//! therefore points at the line of the original file where the macro was used.
//! Expansion follows Prosser's algorithm (hide sets), as C99 describes rescanning.
//!
//! Why not a crate: the one maintained C preprocessor on crates.io with `#`/`##` and `#if`
//! (`rucc-pp`) is a layer of a C compiler, with its own token, diagnostic and header-search
//! types and GCC's include rules; ksim's parser needs its own tokens with source-map spans,
//! and the subset OpenCL kernels use is small.

use super::lex::{char_value, lex, Tok, Token};
use super::SourceMap;
use crate::ast::Span;
use crate::diag::Diagnostic;
use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// Preprocessor options: OpenCL build options `-D` and `-I`.
#[derive(Clone, Debug, Default)]
pub struct PpOptions {
    /// `-D NAME` (value `1`) or `-D NAME=VALUE`.
    pub defines: Vec<(String, Option<String>)>,
    pub include_dirs: Vec<PathBuf>,
}

/// A `#pragma` line: its text and where it was written.
#[derive(Clone, Debug, PartialEq)]
pub struct Pragma {
    pub text: String,
    pub span: Span,
}

/// The preprocessed translation unit.
#[derive(Debug)]
pub struct Preprocessed {
    pub tokens: Vec<Token>,
    pub pragmas: Vec<Pragma>,
}

/// Reads an included file: its text, or a message saying why not (for a path that is no
/// file on disk, taken as "not found": the next candidate is tried).
pub type Loader<'a> = dyn FnMut(&Path) -> Result<String, String> + 'a;

#[derive(Clone, Debug)]
struct Macro {
    /// `None` for an object-like macro.
    params: Option<Vec<Rc<str>>>,
    body: Vec<Token>,
}

/// Macro uses expanded in one translation unit before expansion is refused: a guard
/// against exponential macros (`#define A B B` chains), not a limit real kernels meet.
const MAX_EXPANSIONS: usize = 200_000;
const MAX_INCLUDE_DEPTH: usize = 64;
/// Tokens the preprocessed program (and any one macro expansion) may have: a guard against
/// macros that expand to huge texts without many expansions (`#define A1 A0 A0 ...` over a
/// long `A0`), far above real kernels (the largest have tens of thousands).
const MAX_TOKENS: usize = 1_000_000;

/// The predefined macros of an OpenCL C 1.2 compiler that kernels test.
const PREDEFINED: [(&str, &str); 6] = [
    ("__OPENCL_VERSION__", "120"),
    ("__OPENCL_C_VERSION__", "120"),
    ("CL_VERSION_1_0", "100"),
    ("CL_VERSION_1_1", "110"),
    ("CL_VERSION_1_2", "120"),
    ("__ENDIAN_LITTLE__", "1"),
];

/// The limits and math constants of OpenCL C 1.2 §6.12.3 (integer limits), §6.12.2
/// (`FLT_*`, `DBL_*`, `M_*`), with the spellings of clang's `opencl-c-base.h`.
const LIMITS: [(&str, &str); 64] = [
    ("CHAR_BIT", "8"),
    ("SCHAR_MAX", "127"),
    ("SCHAR_MIN", "(-127-1)"),
    ("CHAR_MAX", "SCHAR_MAX"),
    ("CHAR_MIN", "SCHAR_MIN"),
    ("UCHAR_MAX", "255"),
    ("SHRT_MAX", "32767"),
    ("SHRT_MIN", "(-32767-1)"),
    ("USHRT_MAX", "65535"),
    ("INT_MAX", "2147483647"),
    ("INT_MIN", "(-2147483647-1)"),
    ("UINT_MAX", "0xffffffff"),
    ("LONG_MAX", "0x7fffffffffffffffL"),
    ("LONG_MIN", "(-0x7fffffffffffffffL-1)"),
    ("ULONG_MAX", "0xffffffffffffffffUL"),
    ("FLT_DIG", "6"),
    ("FLT_MANT_DIG", "24"),
    ("FLT_MAX_10_EXP", "+38"),
    ("FLT_MAX_EXP", "+128"),
    ("FLT_MIN_10_EXP", "-37"),
    ("FLT_MIN_EXP", "-125"),
    ("FLT_RADIX", "2"),
    ("FLT_MAX", "0x1.fffffep127f"),
    ("FLT_MIN", "0x1.0p-126f"),
    ("FLT_EPSILON", "0x1.0p-23f"),
    ("DBL_DIG", "15"),
    ("DBL_MANT_DIG", "53"),
    ("DBL_MAX_10_EXP", "+308"),
    ("DBL_MAX_EXP", "+1024"),
    ("DBL_MIN_10_EXP", "-307"),
    ("DBL_MIN_EXP", "-1021"),
    ("DBL_MAX", "0x1.fffffffffffffp1023"),
    ("DBL_MIN", "0x1.0p-1022"),
    ("DBL_EPSILON", "0x1.0p-52"),
    ("M_E_F", "2.71828182845904523536028747135266250f"),
    ("M_LOG2E_F", "1.44269504088896340735992468100189214f"),
    ("M_LOG10E_F", "0.434294481903251827651128918916605082f"),
    ("M_LN2_F", "0.693147180559945309417232121458176568f"),
    ("M_LN10_F", "2.30258509299404568401799145468436421f"),
    ("M_PI_F", "3.14159265358979323846264338327950288f"),
    ("M_PI_2_F", "1.57079632679489661923132169163975144f"),
    ("M_PI_4_F", "0.785398163397448309615660845819875721f"),
    ("M_1_PI_F", "0.318309886183790671537767526745028724f"),
    ("M_2_PI_F", "0.636619772367581343075535053490057448f"),
    ("M_2_SQRTPI_F", "1.12837916709551257389615890312154517f"),
    ("M_SQRT2_F", "1.41421356237309504880168872420969808f"),
    ("M_SQRT1_2_F", "0.707106781186547524400844362104849039f"),
    ("M_E", "0x1.5bf0a8b145769p+1"),
    ("M_LOG2E", "0x1.71547652b82fep+0"),
    ("M_LOG10E", "0x1.bcb7b1526e50ep-2"),
    ("M_LN2", "0x1.62e42fefa39efp-1"),
    ("M_LN10", "0x1.26bb1bbb55516p+1"),
    ("M_PI", "0x1.921fb54442d18p+1"),
    ("M_PI_2", "0x1.921fb54442d18p+0"),
    ("M_PI_4", "0x1.921fb54442d18p-1"),
    ("M_1_PI", "0x1.45f306dc9c883p-2"),
    ("M_2_PI", "0x1.45f306dc9c883p-1"),
    ("M_2_SQRTPI", "0x1.20dd750429b6dp+0"),
    ("M_SQRT2", "0x1.6a09e667f3bcdp+0"),
    ("M_SQRT1_2", "0x1.6a09e667f3bcdp-1"),
    ("MAXFLOAT", "0x1.fffffep127f"),
    ("FP_ILOGB0", "INT_MIN"),
    ("FP_ILOGBNAN", "INT_MAX"),
    ("DBL_RADIX", "2"),
];

/// GPUVerify's `DECLARE_UF_BINARY(NAME, OUT, IN1, IN2)`: a function without a body.
const UF_BINARY: &str = "DECLARE_UF_BINARY(NAME, OUT, IN1, IN2) OUT NAME(IN1, IN2)";

struct Cond {
    /// This branch is being copied.
    active: bool,
    /// Some branch of this `#if` chain has been taken.
    taken: bool,
    seen_else: bool,
    /// The enclosing text is active.
    outer: bool,
    span: Span,
}

struct Pp<'a, 'l> {
    map: &'a mut SourceMap,
    opts: &'a PpOptions,
    load: &'a mut Loader<'l>,
    macros: HashMap<Rc<str>, Macro>,
    pragmas: Vec<Pragma>,
    expansions: usize,
}

/// Preprocesses file 0 of `map` (the main file); included files are added to `map`.
pub fn preprocess(
    map: &mut SourceMap,
    opts: &PpOptions,
    load: &mut Loader<'_>,
) -> Result<Preprocessed, Vec<Diagnostic>> {
    let mut pp = Pp {
        map,
        opts,
        load,
        macros: HashMap::new(),
        pragmas: Vec::new(),
        expansions: 0,
    };
    pp.predefine().map_err(|d| vec![d])?;
    let mut out = Vec::new();
    pp.file(0, 0, &mut out).map_err(|d| vec![d])?;
    Ok(Preprocessed {
        tokens: out,
        pragmas: pp.pragmas,
    })
}

fn err<T>(msg: impl Into<String>, span: &Span) -> Result<T, Diagnostic> {
    Err(Diagnostic::new(msg, span.clone()))
}

impl Pp<'_, '_> {
    fn predefine(&mut self) -> Result<(), Diagnostic> {
        let cmdline: Vec<_> = self
            .opts
            .defines
            .iter()
            .map(|(n, v)| (n.clone(), v.clone().unwrap_or_else(|| "1".into())))
            .collect();
        let builtin = PREDEFINED
            .iter()
            .chain(&LIMITS)
            .map(|(n, v)| (n.to_string(), v.to_string()));
        for (name, value) in builtin.chain(cmdline) {
            let valid = name
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !valid {
                return err(format!("-D {name}: `{name}` is not a macro name"), &(0..0));
            }
            let mut body = lex(&value, 0)
                .map_err(|d| Diagnostic::new(format!("-D {name}={value}: {}", d.message), 0..0))?;
            for t in &mut body {
                t.span = 0..0;
            }
            self.macros
                .insert(Rc::from(name.as_str()), Macro { params: None, body });
        }
        // GPUVerify's header declares an uninterpreted binary function with this macro; a
        // prototype is what ksim runs as one (`cl/uf.rs`).
        let mut uf = lex(UF_BINARY, 0)?;
        for t in &mut uf {
            t.span = 0..0;
        }
        self.define(&uf, &(0..0))
    }

    /// Preprocesses file `f` of the source map into `out`.
    fn file(&mut self, f: usize, depth: usize, out: &mut Vec<Token>) -> Result<(), Diagnostic> {
        let toks = lex(&self.map.files[f].text, self.map.files[f].base)?;
        let mut conds: Vec<Cond> = Vec::new();
        let mut text: Vec<Token> = Vec::new();
        let mut i = 0;
        while i < toks.len() {
            let active = conds.last().is_none_or(|c| c.active);
            if !(toks[i].bol && toks[i].is("#")) {
                if active {
                    text.push(toks[i].clone());
                }
                i += 1;
                continue;
            }
            // A directive: `#` to the end of its line.
            let hash = toks[i].span.clone();
            let mut end = i + 1;
            while end < toks.len() && !toks[end].bol {
                end += 1;
            }
            let line = &toks[i + 1..end];
            i = end;
            let Some(name) = line.first() else { continue }; // the null directive
            let args = &line[1..];
            let dspan = hash.start..line.last().map_or(hash.end, |t| t.span.end);
            match &*name.text {
                "if" | "ifdef" | "ifndef" => {
                    let value = if !active {
                        false
                    } else if &*name.text == "if" {
                        self.condition(args, &dspan)?
                    } else {
                        let [m] = args else {
                            return err(format!("#{} takes one macro name", name.text), &dspan);
                        };
                        self.macros.contains_key(&m.text) == (&*name.text == "ifdef")
                    };
                    conds.push(Cond {
                        active: value,
                        taken: value,
                        seen_else: false,
                        outer: active,
                        span: dspan,
                    });
                }
                "elif" | "else" => {
                    let Some(c) = conds.last() else {
                        return err(format!("#{} without #if", name.text), &dspan);
                    };
                    if c.seen_else {
                        return err(format!("#{} after #else", name.text), &dspan);
                    }
                    let (outer, taken) = (c.outer, c.taken);
                    let value = if &*name.text == "else" {
                        outer && !taken
                    } else {
                        outer && !taken && self.condition(args, &dspan)?
                    };
                    let c = conds.last_mut().expect("checked");
                    c.active = value;
                    c.taken |= value;
                    c.seen_else = &*name.text == "else";
                }
                "endif" => {
                    if conds.pop().is_none() {
                        return err("#endif without #if", &dspan);
                    }
                }
                _ if !active => {}
                "define" => self.define(args, &dspan)?,
                "undef" => {
                    let [m] = args else {
                        return err("#undef takes one macro name", &dspan);
                    };
                    self.macros.remove(&m.text);
                }
                "include" => {
                    out.extend(self.expand(std::mem::take(&mut text))?);
                    self.include(f, args, &dspan, depth, out)?;
                }
                "pragma" => {
                    let text: Vec<&str> = args.iter().map(|t| &*t.text).collect();
                    self.pragmas.push(Pragma {
                        text: text.join(" "),
                        span: dspan,
                    });
                }
                "error" => {
                    let text: Vec<&str> = args.iter().map(|t| &*t.text).collect();
                    return err(format!("#error {}", text.join(" ")), &dspan);
                }
                "line" | "warning" => {}
                other => return err(format!("unknown directive `#{other}`"), &name.span),
            }
        }
        if let Some(c) = conds.last() {
            return err("#if without #endif", &c.span);
        }
        out.extend(self.expand(text)?);
        if out.len() > MAX_TOKENS {
            return err(
                format!("the preprocessed program exceeds {MAX_TOKENS} tokens"),
                &(self.map.files[f].base..self.map.files[f].base),
            );
        }
        Ok(())
    }

    fn include(
        &mut self,
        from: usize,
        args: &[Token],
        span: &Span,
        depth: usize,
        out: &mut Vec<Token>,
    ) -> Result<(), Diagnostic> {
        // Another form is macro-expanded first (C11 §6.10.2p4): `#include H`.
        let expanded;
        let args = match args {
            [t] if t.kind == Tok::Str => args,
            [t, ..] if t.is("<") => args,
            _ => {
                expanded = self.expand(args.to_vec())?;
                &expanded[..]
            }
        };
        let name =
            match args {
                [t] if t.kind == Tok::Str => t.text[1..t.text.len() - 1].to_string(),
                [t, ..] if t.is("<") => return err(
                    "#include <...>: OpenCL C has no system headers; use #include \"...\" with -I",
                    span,
                ),
                _ => return err("#include takes a file name in quotes", span),
            };
        if depth >= MAX_INCLUDE_DEPTH {
            return err(
                format!("#include nested more than {MAX_INCLUDE_DEPTH} deep"),
                span,
            );
        }
        let here = self.map.files[from]
            .path
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let candidates: Vec<PathBuf> = std::iter::once(here)
            .chain(self.opts.include_dirs.iter().cloned())
            .map(|d| d.join(&name))
            .collect();
        let mut why = Vec::new();
        // Every candidate is asked of the loader, which may know files the disk lacks (a
        // race report's saved copies); its error means "not found" unless the file is there.
        for path in candidates {
            if path.exists() && !path.is_file() {
                return err(
                    format!(
                        "#include \"{name}\": {} is not a regular file",
                        path.display()
                    ),
                    span,
                );
            }
            match (self.load)(&path) {
                Ok(text) => {
                    let f = self.map.add(path, text);
                    return self.file(f, depth + 1, out);
                }
                Err(e) if path.is_file() => return Err(Diagnostic::new(e, span.clone())),
                Err(_) => why.push(path.display().to_string()),
            }
        }
        err(
            format!(
                "#include \"{name}\": not found (looked for {})",
                why.join(", ")
            ),
            span,
        )
    }

    fn define(&mut self, args: &[Token], span: &Span) -> Result<(), Diagnostic> {
        let Some(name) = args.first().filter(|t| t.kind == Tok::Ident) else {
            return err("#define needs a macro name", span);
        };
        if &*name.text == "defined" {
            return err("`defined` cannot be a macro name", &name.span);
        }
        let mut rest = &args[1..];
        let params = if rest.first().is_some_and(|t| t.is("(") && !t.space) {
            let mut params = Vec::new();
            let mut k = 1;
            loop {
                let Some(t) = rest.get(k) else {
                    return err("unterminated macro parameter list", span);
                };
                if t.is(")") && params.is_empty() {
                    k += 1;
                    break;
                }
                if t.is("...") {
                    params.push(Rc::from("__VA_ARGS__"));
                } else if t.kind == Tok::Ident {
                    if params.contains(&t.text) {
                        return err(format!("duplicate macro parameter `{}`", t.text), &t.span);
                    }
                    params.push(t.text.clone());
                } else {
                    return err("expected a macro parameter name", &t.span);
                }
                match rest.get(k + 1) {
                    Some(t) if t.is(",") && &*params[params.len() - 1] != "__VA_ARGS__" => k += 2,
                    Some(t) if t.is(")") => {
                        k += 2;
                        break;
                    }
                    _ => return err("expected `,` or `)` in the macro parameter list", span),
                }
            }
            rest = &rest[k..];
            Some(params)
        } else {
            None
        };
        let body = rest.to_vec();
        if let Some(p) = body.first().filter(|t| t.is("##")) {
            return err("`##` cannot start a macro body", &p.span);
        }
        if let Some(p) = body.last().filter(|t| t.is("##")) {
            return err("`##` cannot end a macro body", &p.span);
        }
        if let Some(ps) = &params {
            for (k, t) in body.iter().enumerate() {
                if t.is("#") && !body.get(k + 1).is_some_and(|n| ps.contains(&n.text)) {
                    return err("`#` must be followed by a macro parameter", &t.span);
                }
            }
        }
        self.macros
            .insert(name.text.clone(), Macro { params, body });
        Ok(())
    }

    /// Expands every macro use in `input` (C99 §6.10.3.4 rescanning, with hide sets).
    fn expand(&mut self, input: Vec<Token>) -> Result<Vec<Token>, Diagnostic> {
        let mut queue: VecDeque<Token> = input.into();
        let mut out = Vec::new();
        while let Some(t) = queue.pop_front() {
            if t.kind == Tok::Ident
                && matches!(&*t.text, "__LINE__" | "__FILE__")
                && !self.macros.contains_key(&t.text)
            {
                out.push(self.location(t));
                continue;
            }
            let m = match self.macros.get(&t.text) {
                Some(m) if t.kind == Tok::Ident && !t.hide.contains(&t.text) => m.clone(),
                _ => {
                    out.push(t);
                    continue;
                }
            };
            self.expansions += 1;
            if self.expansions > MAX_EXPANSIONS {
                return err(
                    format!("more than {MAX_EXPANSIONS} macro expansions: is a macro exponential?"),
                    &t.span,
                );
            }
            let (args, hide, span) = match &m.params {
                None => (Vec::new(), with(&t.hide, &t.text), t.span.clone()),
                Some(params) => {
                    if !queue.front().is_some_and(|n| n.is("(")) {
                        out.push(t);
                        continue;
                    }
                    let (args, rparen) = collect_args(&mut queue, &t)?;
                    let n = params.len();
                    let variadic = params.last().is_some_and(|p| &**p == "__VA_ARGS__");
                    let args = fit_args(args, n, variadic).ok_or_else(|| {
                        Diagnostic::new(
                            format!("macro `{}` takes {n} argument{}", t.text, plural(n)),
                            t.span.start..rparen.span.end,
                        )
                    })?;
                    let common: Vec<Rc<str>> = t
                        .hide
                        .iter()
                        .filter(|h| rparen.hide.contains(h))
                        .cloned()
                        .collect();
                    (
                        args,
                        with(&Rc::new(common), &t.text),
                        t.span.start..rparen.span.end,
                    )
                }
            };
            let body = self.substitute(&m, &args, &span)?;
            for mut b in body.into_iter().rev() {
                let mut h = (*b.hide).clone();
                for x in hide.iter() {
                    if !h.contains(x) {
                        h.push(x.clone());
                    }
                }
                b.hide = Rc::new(h);
                queue.push_front(b);
            }
            if let Some(first) = queue.front_mut() {
                first.space |= t.space;
            }
            if out.len() + queue.len() > MAX_TOKENS {
                return err(
                    format!("the preprocessed program exceeds {MAX_TOKENS} tokens: is a macro too large?"),
                    &t.span,
                );
            }
        }
        Ok(out)
    }

    /// `__LINE__` or `__FILE__` (C11 §6.10.8.1) at token `t`: the line, or the path in
    /// quotes, of the file where it (or the macro use it came out of) is written.
    fn location(&self, mut t: Token) -> Token {
        let (f, offset) = self.map.locate(t.span.start);
        if &*t.text == "__LINE__" {
            let line = f.text[..offset].matches('\n').count() + 1;
            t.kind = Tok::Number;
            t.text = Rc::from(line.to_string().as_str());
        } else {
            let path = f.path.display().to_string();
            let quoted = path.replace('\\', "\\\\").replace('"', "\\\"");
            t.kind = Tok::Str;
            t.text = Rc::from(format!("\"{quoted}\"").as_str());
        }
        t
    }

    /// The body of `m` with its parameters replaced (`#` stringifies, `##` pastes); body
    /// tokens take the span of the macro use.
    fn substitute(
        &mut self,
        m: &Macro,
        args: &[Vec<Token>],
        span: &Span,
    ) -> Result<Vec<Token>, Diagnostic> {
        let params: &[Rc<str>] = m.params.as_deref().unwrap_or(&[]);
        let param = |t: &Token| {
            (t.kind == Tok::Ident)
                .then(|| params.iter().position(|p| *p == t.text))
                .flatten()
        };
        let mut res: Vec<Token> = Vec::new();
        let body = &m.body;
        let mut k = 0;
        // The piece left of a `##` was an empty argument (C99's placemarker).
        let mut empty_left = false;
        while k < body.len() {
            let t = &body[k];
            if t.is("#") && m.params.is_some() {
                let p = param(&body[k + 1]).expect("checked at #define");
                res.push(stringify(&args[p], span, t.space));
                empty_left = false;
                k += 2;
                continue;
            }
            if t.is("##") {
                let next = &body[k + 1];
                let right: Vec<Token> = match param(next) {
                    Some(p) => args[p].clone(),
                    None => vec![relocated(next, span)],
                };
                let right_empty = right.is_empty();
                let mut right = right.into_iter();
                match (right.next(), empty_left) {
                    (Some(r), false) => {
                        let l = res.pop().expect("a token left of `##`");
                        res.push(paste(&l, &r, span)?);
                    }
                    (Some(r), true) => res.push(r),
                    (None, _) => {}
                }
                res.extend(right);
                empty_left = empty_left && right_empty;
                k += 2;
                continue;
            }
            match param(t) {
                Some(p) => {
                    let before_paste = body.get(k + 1).is_some_and(|n| n.is("##"));
                    let mut arg = if before_paste {
                        args[p].clone()
                    } else {
                        self.expand(args[p].clone())?
                    };
                    if let Some(first) = arg.first_mut() {
                        first.space = t.space;
                    }
                    empty_left = before_paste && arg.is_empty();
                    res.extend(arg);
                }
                None => {
                    empty_left = false;
                    res.push(relocated(t, span));
                }
            }
            k += 1;
        }
        for r in &mut res {
            r.bol = false;
        }
        Ok(res)
    }

    /// Evaluates the condition of `#if`/`#elif`.
    fn condition(&mut self, args: &[Token], span: &Span) -> Result<bool, Diagnostic> {
        // `defined X` and `defined(X)` are replaced before expansion.
        let mut pre = Vec::new();
        let mut k = 0;
        while k < args.len() {
            let t = &args[k];
            if t.is("defined") {
                let (name, next) = match (args.get(k + 1), args.get(k + 2), args.get(k + 3)) {
                    (Some(p), Some(n), Some(c)) if p.is("(") && c.is(")") => (n, k + 4),
                    (Some(n), _, _) if n.kind == Tok::Ident => (n, k + 2),
                    _ => return err("`defined` needs a macro name", &t.span),
                };
                let mut one = t.clone();
                one.kind = Tok::Number;
                one.text = Rc::from(if self.macros.contains_key(&name.text) {
                    "1"
                } else {
                    "0"
                });
                pre.push(one);
                k = next;
            } else {
                pre.push(t.clone());
                k += 1;
            }
        }
        let toks = self.expand(pre)?;
        if toks.is_empty() {
            return err("#if needs an expression", span);
        }
        let mut e = CondExpr {
            toks: &toks,
            pos: 0,
            span,
            depth: 0,
        };
        let v = e.ternary(true)?;
        if e.pos < toks.len() {
            return err("unexpected token in #if expression", &toks[e.pos].span);
        }
        Ok(v.is_true())
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

fn with(hide: &Rc<Vec<Rc<str>>>, name: &Rc<str>) -> Rc<Vec<Rc<str>>> {
    let mut h = (**hide).clone();
    h.push(name.clone());
    Rc::new(h)
}

fn relocated(t: &Token, span: &Span) -> Token {
    let mut t = t.clone();
    t.span = span.clone();
    t
}

/// Reads `( a, b, ... )` after a function-like macro's name: the raw arguments (split at
/// top-level commas) and the closing parenthesis.
fn collect_args(
    queue: &mut VecDeque<Token>,
    name: &Token,
) -> Result<(Vec<Vec<Token>>, Token), Diagnostic> {
    queue.pop_front(); // `(`
    let mut args = vec![Vec::new()];
    let mut depth = 0;
    loop {
        let Some(t) = queue.pop_front() else {
            return err(
                format!("unterminated use of macro `{}`: missing `)`", name.text),
                &name.span,
            );
        };
        if t.is(")") && depth == 0 {
            return Ok((args, t));
        }
        if t.is("(") {
            depth += 1;
        } else if t.is(")") {
            depth -= 1;
        } else if t.is(",") && depth == 0 {
            args.push(Vec::new());
            continue;
        }
        let mut t = t;
        t.bol = false;
        args.last_mut().expect("one").push(t);
    }
}

/// Matches the arguments to `n` parameters: `F()` is one empty argument or none; the
/// variadic parameter takes the rest, commas included.
fn fit_args(mut args: Vec<Vec<Token>>, n: usize, variadic: bool) -> Option<Vec<Vec<Token>>> {
    if n == 0 {
        return (args.len() == 1 && args[0].is_empty()).then(Vec::new);
    }
    if variadic && args.len() >= n {
        let rest = args.split_off(n - 1);
        let mut joined = Vec::new();
        for (k, a) in rest.into_iter().enumerate() {
            if k > 0 {
                let mut comma = a.first().cloned().unwrap_or_else(|| joined_last(&joined));
                comma.kind = Tok::Punct;
                comma.text = Rc::from(",");
                joined.push(comma);
            }
            joined.extend(a);
        }
        args.push(joined);
        return Some(args);
    }
    if variadic && args.len() == n - 1 {
        args.push(Vec::new());
        return Some(args);
    }
    (args.len() == n).then_some(args)
}

fn joined_last(joined: &[Token]) -> Token {
    joined.last().cloned().unwrap_or_else(|| Token {
        kind: Tok::Punct,
        text: Rc::from(","),
        span: 0..0,
        bol: false,
        space: false,
        hide: Rc::new(Vec::new()),
    })
}

fn stringify(arg: &[Token], span: &Span, space: bool) -> Token {
    let mut s = String::from("\"");
    for (k, t) in arg.iter().enumerate() {
        if k > 0 && t.space {
            s.push(' ');
        }
        if matches!(t.kind, Tok::Str | Tok::Char) {
            for c in t.text.chars() {
                if c == '"' || c == '\\' {
                    s.push('\\');
                }
                s.push(c);
            }
        } else {
            s.push_str(&t.text);
        }
    }
    s.push('"');
    Token {
        kind: Tok::Str,
        text: Rc::from(s.as_str()),
        span: span.clone(),
        bol: false,
        space,
        hide: Rc::new(Vec::new()),
    }
}

fn paste(l: &Token, r: &Token, span: &Span) -> Result<Token, Diagnostic> {
    let text = format!("{}{}", l.text, r.text);
    match lex(&text, 0).as_deref() {
        Ok([t]) => Ok(Token {
            kind: t.kind,
            text: t.text.clone(),
            span: span.clone(),
            bol: false,
            space: l.space,
            hide: l.hide.clone(),
        }),
        _ => err(
            format!(
                "pasting `{}` and `{}` does not give a valid token",
                l.text, r.text
            ),
            span,
        ),
    }
}

/// Nesting (parentheses, `?:` and the right operands of binary operators) of an `#if`
/// expression beyond which it is refused: the evaluator recurses on it.
const MAX_IF_DEPTH: usize = 5_000;

/// A value of an `#if` expression: C11 §6.10.1 computes in `intmax_t` and `uintmax_t`
/// (64 bits here), with the usual arithmetic conversions between them.
#[derive(Clone, Copy, Debug, PartialEq)]
struct PpInt {
    bits: u64,
    unsigned: bool,
}

impl PpInt {
    fn signed(v: i64) -> PpInt {
        PpInt {
            bits: v as u64,
            unsigned: false,
        }
    }

    fn truth(b: bool) -> PpInt {
        PpInt::signed(b as i64)
    }

    fn is_true(self) -> bool {
        self.bits != 0
    }
}

/// The constant expression of `#if` (C11 §6.10.1): `intmax_t`/`uintmax_t` arithmetic;
/// names left after expansion are 0. `&&`, `||` and `?:` do not evaluate the operand they
/// skip (no division by zero there), though it must still be well formed.
struct CondExpr<'t> {
    toks: &'t [Token],
    pos: usize,
    span: &'t Span,
    depth: usize,
}

impl CondExpr<'_> {
    fn peek(&self) -> Option<&Token> {
        self.toks.get(self.pos)
    }

    fn eat(&mut self, p: &str) -> bool {
        if self
            .peek()
            .is_some_and(|t| t.kind == Tok::Punct && &*t.text == p)
        {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn enter(&mut self) -> Result<(), Diagnostic> {
        self.depth += 1;
        if self.depth > MAX_IF_DEPTH {
            return err(
                format!("#if expression nested more than {MAX_IF_DEPTH} deep"),
                self.here(),
            );
        }
        Ok(())
    }

    /// `c ? a : b`; `live`: the value is used (else only its form is checked).
    fn ternary(&mut self, live: bool) -> Result<PpInt, Diagnostic> {
        let c = self.binary(0, live)?;
        if !self.eat("?") {
            return Ok(c);
        }
        self.enter()?;
        let a = self.ternary(live && c.is_true())?;
        if !self.eat(":") {
            return err("expected `:` in #if expression", self.here());
        }
        let b = self.ternary(live && !c.is_true())?;
        self.depth -= 1;
        // The type is the common type of both arms, whichever is taken.
        let v = if c.is_true() { a } else { b };
        Ok(PpInt {
            bits: v.bits,
            unsigned: a.unsigned || b.unsigned,
        })
    }

    fn here(&self) -> &Span {
        self.peek().map_or(self.span, |t| &t.span)
    }

    fn binary(&mut self, min: u8, live: bool) -> Result<PpInt, Diagnostic> {
        let mut a = self.unary(live)?;
        loop {
            let Some(t) = self.peek().filter(|t| t.kind == Tok::Punct) else {
                return Ok(a);
            };
            let prec = match &*t.text {
                "*" | "/" | "%" => 10,
                "+" | "-" => 9,
                "<<" | ">>" => 8,
                "<" | "<=" | ">" | ">=" => 7,
                "==" | "!=" => 6,
                "&" => 5,
                "^" => 4,
                "|" => 3,
                "&&" => 2,
                "||" => 1,
                _ => return Ok(a),
            };
            if prec <= min {
                return Ok(a);
            }
            let op = t.text.clone();
            let op_span = t.span.clone();
            self.pos += 1;
            let right_live = match &*op {
                "&&" => live && a.is_true(),
                "||" => live && !a.is_true(),
                _ => live,
            };
            self.enter()?;
            let b = self.binary(prec, right_live)?;
            self.depth -= 1;
            a = if live {
                apply(&op, a, b)
                    .ok_or_else(|| Diagnostic::new("division by zero in #if expression", op_span))?
            } else {
                PpInt::signed(0)
            };
        }
    }

    fn unary(&mut self, live: bool) -> Result<PpInt, Diagnostic> {
        // Prefix operators in a loop, not by recursion: `!!!...!1` may be long.
        let mut ops = Vec::new();
        while let Some(t) = self
            .peek()
            .filter(|t| t.kind == Tok::Punct && matches!(&*t.text, "-" | "+" | "!" | "~"))
        {
            ops.push(t.text.clone());
            self.pos += 1;
        }
        let mut v = self.operand(live)?;
        for op in ops.iter().rev() {
            v = match &**op {
                "-" => PpInt {
                    bits: v.bits.wrapping_neg(),
                    ..v
                },
                "!" => PpInt::truth(!v.is_true()),
                "~" => PpInt { bits: !v.bits, ..v },
                _ => v,
            };
        }
        Ok(v)
    }

    fn operand(&mut self, live: bool) -> Result<PpInt, Diagnostic> {
        if self.eat("(") {
            self.enter()?;
            let v = self.ternary(live)?;
            self.depth -= 1;
            if !self.eat(")") {
                return err("expected `)` in #if expression", self.here());
            }
            return Ok(v);
        }
        let Some(t) = self.peek().cloned() else {
            return err("#if expression ends early", self.span);
        };
        self.pos += 1;
        match t.kind {
            Tok::Ident => Ok(PpInt::signed(0)),
            Tok::Number => pp_number(&t.text)
                .ok_or_else(|| Diagnostic::new(format!("`{}` is not an integer", t.text), t.span)),
            Tok::Char => char_value(&t.text)
                .map(PpInt::signed)
                .map_err(|m| Diagnostic::new(m, t.span)),
            _ => err(
                format!("unexpected `{}` in #if expression", t.text),
                &t.span,
            ),
        }
    }
}

/// An integer literal in `#if`: `uintmax_t` with a `u` suffix or when it does not fit in
/// `intmax_t`, else `intmax_t`.
fn pp_number(text: &str) -> Option<PpInt> {
    let bits = parse_int(text)?;
    let suffix = text.trim_start_matches(|c: char| !matches!(c, 'u' | 'U' | 'l' | 'L'));
    Some(PpInt {
        bits,
        unsigned: suffix.contains(['u', 'U']) || bits > i64::MAX as u64,
    })
}

/// `a op b` with the usual arithmetic conversions (unsigned if either is); `None` for a
/// division by zero.
fn apply(op: &str, a: PpInt, b: PpInt) -> Option<PpInt> {
    let unsigned = a.unsigned || b.unsigned;
    let (x, y) = (a.bits, b.bits);
    let (sx, sy) = (x as i64, y as i64);
    let cmp = |u: bool, s: bool| Some(PpInt::truth(if unsigned { u } else { s }));
    let arith = |bits: u64| Some(PpInt { bits, unsigned });
    match op {
        "*" => arith(x.wrapping_mul(y)),
        "/" | "%" if y == 0 => None,
        "/" if unsigned => arith(x / y),
        "/" => arith(sx.wrapping_div(sy) as u64),
        "%" if unsigned => arith(x % y),
        "%" => arith(sx.wrapping_rem(sy) as u64),
        "+" => arith(x.wrapping_add(y)),
        "-" => arith(x.wrapping_sub(y)),
        // A shift has the type of its left operand.
        "<<" => Some(PpInt {
            bits: x.wrapping_shl(y as u32),
            ..a
        }),
        ">>" if a.unsigned => Some(PpInt {
            bits: x.wrapping_shr(y as u32),
            ..a
        }),
        ">>" => Some(PpInt {
            bits: sx.wrapping_shr(y as u32) as u64,
            ..a
        }),
        "<" => cmp(x < y, sx < sy),
        "<=" => cmp(x <= y, sx <= sy),
        ">" => cmp(x > y, sx > sy),
        ">=" => cmp(x >= y, sx >= sy),
        "==" => Some(PpInt::truth(x == y)),
        "!=" => Some(PpInt::truth(x != y)),
        "&" => arith(x & y),
        "^" => arith(x ^ y),
        "|" => arith(x | y),
        "&&" => Some(PpInt::truth(a.is_true() && b.is_true())),
        _ => Some(PpInt::truth(a.is_true() || b.is_true())),
    }
}

/// An integer literal's value, its `u`/`l` suffixes ignored: decimal, `0x` hex, `0` octal.
pub fn parse_int(text: &str) -> Option<u64> {
    let t = text.trim_end_matches(['u', 'U', 'l', 'L']);
    if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        u64::from_str_radix(h, 16).ok()
    } else if t.len() > 1 && t.starts_with('0') {
        u64::from_str_radix(&t[1..], 8).ok()
    } else {
        t.parse().ok()
    }
}
