//! clang's printed types (`__global float4 *__private`, `const __local int[16][16]`,
//! `struct S`, a typedef name) as OpenCL syntax-tree [`Type`]s.
//!
//! clang's JSON gives a type only as the text it prints. The OpenCL names (`uint`,
//! `float4`, `size_t`, `image2d_t`, ...) are kept as written; the kernel's own typedefs
//! are resolved through [`Types::typedefs`].

use crate::ast::Span;
use crate::cl::ast::{Access, AddrSpace, Base, Expr, ExprKind, Pointer, Type};
use std::collections::HashMap;

/// What a typedef name stands for.
#[derive(Clone, Debug)]
pub enum Typedef {
    /// The printed type it names.
    Text(String),
    /// A struct or union, by the tag ksim gives it.
    Struct(String),
}

/// The kernel's typedefs and the tags of its anonymous structs.
#[derive(Debug, Default)]
pub struct Types {
    pub typedefs: HashMap<String, Typedef>,
    /// `(unnamed struct at FILE:LINE:COL)` (as clang prints it) → the tag ksim gives it.
    pub unnamed: HashMap<String, String>,
    /// An enum's tag (or `(unnamed enum at FILE:LINE:COL)`, or the typedef name clang
    /// prints for `typedef enum { ... } T`) → whether its type is `unsigned int`: clang,
    /// as GCC, gives an enum without negative constants the type `unsigned int`, else
    /// `int`.
    pub enums: HashMap<String, bool>,
    /// CUDA: a function pointer is an `int`, the number of the device function it points
    /// to ([`super::funcptr`]); OpenCL C has none.
    pub fn_ptrs: bool,
}

/// `int4` → (int, 4) for the vector type names of OpenCL C.
pub fn vector_type(w: &str) -> Option<(Base, u8)> {
    let digits = w.trim_start_matches(|c: char| c.is_ascii_alphabetic());
    let n: u8 = digits
        .parse()
        .ok()
        .filter(|n| [2, 3, 4, 8, 16].contains(n))?;
    let elem = scalar_base(&w[..w.len() - digits.len()])?;
    Some((elem, n))
}

fn scalar_base(w: &str) -> Option<Base> {
    Some(match w {
        "char" => Base::Char { unsigned: false },
        "uchar" => Base::Char { unsigned: true },
        "short" => Base::Short { unsigned: false },
        "ushort" => Base::Short { unsigned: true },
        "int" => Base::Int { unsigned: false },
        "uint" => Base::Int { unsigned: true },
        "long" => Base::Long { unsigned: false },
        "ulong" => Base::Long { unsigned: true },
        "half" => Base::Half,
        "float" => Base::Float,
        "double" => Base::Double,
        _ => return None,
    })
}

const OPAQUE: [&str; 10] = [
    "event_t",
    "cl_mem_fence_flags",
    "sampler_t",
    "image1d_t",
    "image2d_t",
    "image3d_t",
    "image1d_array_t",
    "image2d_array_t",
    "image1d_buffer_t",
    "queue_t",
];

/// Splits printed type text into words and the punctuation `* [ ] ( ) ,`.
fn tokens(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in s.char_indices() {
        let word = c.is_ascii_alphanumeric() || c == '_';
        if word {
            start.get_or_insert(i);
            continue;
        }
        if let Some(st) = start.take() {
            out.push(&s[st..i]);
        }
        if !c.is_whitespace() {
            out.push(&s[i..i + c.len_utf8()]);
        }
    }
    if let Some(st) = start {
        out.push(&s[st..]);
    }
    out
}

/// `__attribute__((...))` taken out of printed type text.
fn strip_attributes(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(at) = rest.find("__attribute__((") {
        out.push_str(&rest[..at]);
        let mut depth = 0;
        let mut end = rest.len();
        for (i, c) in rest[at..].char_indices() {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        end = at + i + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

impl Types {
    /// The syntax-tree type of printed type `text`, spanning `span`.
    pub fn parse(&self, text: &str, span: &Span) -> Result<Type, String> {
        self.parse_depth(text, span, 0)
    }

    fn parse_depth(&self, text: &str, span: &Span, depth: usize) -> Result<Type, String> {
        let unsupported = || format!("not supported yet: the type `{text}`");
        if depth > 64 {
            return Err(unsupported());
        }
        let clean = strip_attributes(text);
        if self.fn_ptrs && super::funcptr::pointee(&clean).is_some() {
            return self.parse_depth("int", span, depth + 1);
        }
        let toks = tokens(&clean);
        let mut ty = Type {
            base: Base::Void,
            space: AddrSpace::Private,
            is_const: false,
            is_volatile: false,
            access: Access::Default,
            pointers: Vec::new(),
            arrays: Vec::new(),
            span: span.clone(),
        };
        let (mut unsigned, mut signed, mut longs, mut short) = (false, false, 0, false);
        let mut base: Option<Base> = None;
        let mut typedef: Option<Type> = None;
        let mut i = 0;
        // Specifiers and qualifiers, up to the first `*`, `[` or `(`.
        while i < toks.len() && !matches!(toks[i], "*" | "[" | "(") {
            let w = toks[i];
            i += 1;
            match w {
                "const" => ty.is_const = true,
                "volatile" => ty.is_volatile = true,
                "restrict" | "__restrict" | "static" | "extern" | "inline" => {}
                "__global" | "global" => ty.space = AddrSpace::Global,
                "__local" | "local" => ty.space = AddrSpace::Local,
                "__constant" | "constant" => ty.space = AddrSpace::Constant,
                "__private" | "private" => ty.space = AddrSpace::Private,
                "__read_only" | "read_only" => ty.access = Access::ReadOnly,
                "__write_only" | "write_only" => ty.access = Access::WriteOnly,
                "__read_write" | "read_write" => ty.access = Access::ReadWrite,
                "unsigned" => unsigned = true,
                "signed" => signed = true,
                "long" => longs += 1,
                "short" => short = true,
                "int" => base = base.or(Some(Base::Int { unsigned: false })),
                "char" => base = Some(Base::Char { unsigned: false }),
                "_Bool" | "bool" => base = Some(Base::Bool),
                "void" => base = Some(Base::Void),
                "size_t" | "uintptr_t" | "__size_t" => base = Some(Base::Size { signed: false }),
                "ptrdiff_t" | "intptr_t" => base = Some(Base::Size { signed: true }),
                "struct" | "union" => {
                    let tag = match toks.get(i) {
                        Some(&"(") => {
                            // `struct (unnamed struct at FILE:LINE:COL)`.
                            let close = clean.find(')').ok_or_else(unsupported)?;
                            let open = clean.find('(').expect("a `(` token");
                            let key = &clean[open..=close];
                            let tag = self.unnamed.get(key).cloned().ok_or_else(unsupported)?;
                            let rest = &clean[close + 1..];
                            i = toks.len() - tokens(rest).len();
                            tag
                        }
                        Some(t) => {
                            i += 1;
                            t.to_string()
                        }
                        None => return Err(unsupported()),
                    };
                    base = Some(Base::Struct(tag));
                }
                "enum" => {
                    let key = match toks.get(i) {
                        Some(&"(") => {
                            let close = clean.find(')').ok_or_else(unsupported)?;
                            let open = clean.find('(').expect("a `(` token");
                            i = toks.len() - tokens(&clean[close + 1..]).len();
                            clean[open..=close].to_string()
                        }
                        Some(t) => {
                            i += 1;
                            t.to_string()
                        }
                        None => return Err(unsupported()),
                    };
                    let unsigned = *self.enums.get(&key).ok_or_else(unsupported)?;
                    base = Some(Base::Int { unsigned });
                }
                _ => {
                    if let Some(b) = scalar_base(w) {
                        base = Some(b);
                    } else if let Some((e, n)) = vector_type(w) {
                        base = Some(Base::Vector(Box::new(e), n));
                    } else if OPAQUE.contains(&w) {
                        base = Some(Base::Opaque(w.to_string()));
                    } else {
                        match self.typedefs.get(w) {
                            Some(Typedef::Struct(tag)) => base = Some(Base::Struct(tag.clone())),
                            Some(Typedef::Text(t)) => {
                                typedef = Some(self.parse_depth(t, span, depth + 1)?)
                            }
                            None => return Err(unsupported()),
                        }
                    }
                }
            }
        }
        if let Some(mut td) = typedef {
            // Qualifiers written with a typedef name add to the ones inside it.
            if ty.space != AddrSpace::Private {
                td.space = ty.space;
            }
            td.is_const |= ty.is_const;
            td.is_volatile |= ty.is_volatile;
            if ty.access != Access::Default {
                td.access = ty.access;
            }
            if !(td.pointers.is_empty() && td.arrays.is_empty()) && i < toks.len() {
                return Err(unsupported());
            }
            ty = Type {
                span: ty.span,
                ..td
            };
        } else {
            ty.base = match base {
                Some(Base::Char { .. }) if unsigned || signed => Base::Char { unsigned },
                Some(b) if !(unsigned || signed || longs > 0 || short) => b,
                Some(Base::Int { .. }) | None if short => Base::Short { unsigned },
                Some(Base::Int { .. }) | None if longs > 0 => Base::Long { unsigned },
                Some(Base::Int { .. }) | None if unsigned || signed => Base::Int { unsigned },
                _ => return Err(unsupported()),
            };
        }
        // Declarator: `*` with the pointer's own qualifiers, then `[N]` suffixes.
        while i < toks.len() && toks[i] == "*" {
            i += 1;
            let mut p = Pointer { is_const: false };
            while let Some(&w) = toks.get(i) {
                match w {
                    "const" => p.is_const = true,
                    "volatile" | "restrict" | "__restrict" | "__private" | "__global"
                    | "__local" | "__constant" | "__generic" => {}
                    _ => break,
                }
                i += 1;
            }
            ty.pointers.push(p);
        }
        while i < toks.len() && toks[i] == "[" {
            let n = toks.get(i + 1).ok_or_else(unsupported)?;
            let size = if *n == "]" {
                i += 2;
                None
            } else {
                if toks.get(i + 2) != Some(&"]") {
                    return Err(unsupported());
                }
                i += 3;
                let value: u64 = n.parse().map_err(|_| unsupported())?;
                Some(Expr {
                    kind: ExprKind::Int {
                        value,
                        unsigned: false,
                        long: false,
                    },
                    span: span.clone(),
                })
            };
            ty.arrays.push(size);
        }
        if i < toks.len() {
            return Err(unsupported());
        }
        Ok(ty)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Type {
        Types::default().parse(s, &(0..0)).unwrap()
    }

    #[test]
    fn reads_printed_types() {
        let p = t("__global float4 *__private");
        assert_eq!(p.space, AddrSpace::Global);
        assert_eq!(p.pointers.len(), 1);
        assert_eq!(p.base, Base::Vector(Box::new(Base::Float), 4));
        let a = t("__local unsigned int[16][8]");
        assert_eq!(a.base, Base::Int { unsigned: true });
        assert_eq!(a.space, AddrSpace::Local);
        assert_eq!(a.arrays.len(), 2);
        assert_eq!(t("unsigned long").base, Base::Long { unsigned: true });
        assert_eq!(t("__private size_t").base, Base::Size { signed: false });
        let c = t("const __global int *const __private");
        assert!(c.is_const && c.pointers[0].is_const);
        assert_eq!(
            t("__read_only image2d_t").access,
            Access::ReadOnly,
            "image access"
        );
        assert!(Types::default().parse("int (*)(int)", &(0..0)).is_err());
    }
}
