//! Buffers of structs in `.sim` files. A `.sim` file gives a buffer of structs as the bytes
//! of the array of structs in the device's memory (Oclgrind's format has no struct syntax:
//! `<size=8192 int>` lists the members as `int`s, padding included), while ksim holds such
//! a buffer as one buffer per member (`G.a`, `G.b`: [`structs`](super::structs)). This
//! module gives the C layout of a struct on Oclgrind's 64-bit device (each scalar and
//! vector aligned to its size, a 3-vector as a 4-vector, a struct to its most aligned
//! member, its size rounded up to that), so that the bytes can be split into the members'
//! buffers and put back together for a dump.
//!
//! Refused, with the reason: unions (members share bytes), pointer members (a pointer's
//! value is no number a file can give) and array members (ksim's buffers of structs do not
//! hold them).

use super::ast::{Base, StructDef, Unit};
use super::simfile::DataType;

/// One scalar or vector member of a struct (nested structs flattened).
#[derive(Clone, Debug, PartialEq)]
pub struct Member {
    /// Its path from the struct (`a`, `inner.b`): the buffer `G.a` of a buffer `G`.
    pub path: String,
    pub ty: DataType,
    /// Components (1 for a scalar); a 3-vector takes the 4 slots of a 4-vector.
    pub lanes: usize,
    /// Byte offset in the struct.
    pub offset: usize,
}

/// A struct's size in bytes and its members, in order.
#[derive(Clone, Debug, PartialEq)]
pub struct Layout {
    pub size: usize,
    pub align: usize,
    pub members: Vec<Member>,
}

/// The layout of `struct tag` of `unit`, or why a `.sim` file cannot give its bytes.
pub fn layout(unit: &Unit, tag: &str) -> Result<Layout, String> {
    let def = find(unit, tag)?;
    let mut members = Vec::new();
    let (size, align) = place(unit, def, "", 0, &mut members, 0)?;
    Ok(Layout {
        size,
        align,
        members,
    })
}

fn find<'u>(unit: &'u Unit, tag: &str) -> Result<&'u StructDef, String> {
    unit.structs
        .iter()
        .find(|s| s.tag == tag)
        .ok_or_else(|| format!("struct {tag} is not defined"))
}

fn round_up(n: usize, align: usize) -> usize {
    n.div_ceil(align) * align
}

/// Places the members of `def` from byte `base` (paths under `prefix`); its size and
/// alignment.
fn place(
    unit: &Unit,
    def: &StructDef,
    prefix: &str,
    base: usize,
    out: &mut Vec<Member>,
    depth: usize,
) -> Result<(usize, usize), String> {
    if def.is_union {
        return Err(format!("union {} (its members share bytes)", def.tag));
    }
    if depth > 32 {
        return Err(format!("struct {} nests too deeply", def.tag));
    }
    let (mut offset, mut align) = (0, 1);
    for f in &def.fields {
        let path = format!("{prefix}{}", f.name.name);
        if !f.ty.pointers.is_empty() {
            return Err(format!("the pointer member `{path}`"));
        }
        if !f.ty.arrays.is_empty() {
            return Err(format!("the array member `{path}`"));
        }
        let (size, a) = match &f.ty.base {
            Base::Struct(tag) => {
                let inner = find(unit, tag)?;
                // Nested members are placed once the struct's own alignment is known.
                let mut probe = Vec::new();
                let (_, a) = place(unit, inner, "", 0, &mut probe, depth + 1)?;
                offset = round_up(offset, a);
                place(
                    unit,
                    inner,
                    &format!("{path}."),
                    base + offset,
                    out,
                    depth + 1,
                )?
            }
            b => {
                let (ty, lanes) = match b {
                    Base::Vector(e, n) => (scalar(e, &path)?, *n as usize),
                    _ => (scalar(b, &path)?, 1),
                };
                let size = ty.size() * slots(lanes);
                offset = round_up(offset, size);
                out.push(Member {
                    path,
                    ty,
                    lanes,
                    offset: base + offset,
                });
                (size, size)
            }
        };
        offset = round_up(offset, a) + size;
        align = align.max(a);
    }
    Ok((round_up(offset.max(1), align), align))
}

/// The slots a vector of `lanes` components takes in memory (a 3-vector: 4).
pub fn slots(lanes: usize) -> usize {
    if lanes == 3 {
        4
    } else {
        lanes
    }
}

/// The name of component `l` of a vector of `n`, as ksim names a vector parameter's
/// scalars (`v.x` ... `v.w`, or `v.s0` ... `v.sf`).
pub fn component(l: usize, n: usize) -> String {
    if n <= 4 {
        ["x", "y", "z", "w"][l].to_string()
    } else {
        format!("s{l:x}")
    }
}

fn scalar(b: &Base, path: &str) -> Result<DataType, String> {
    DataType::of_base(b).ok_or_else(|| format!("the member `{path}` of type `{}`", b.name()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cl::SourceMap;

    fn unit(src: &str) -> Unit {
        let mut map = SourceMap::new("k.cl", src.to_string());
        crate::cl::parse_unit(&mut map, &Default::default(), &mut |_| Err("none".into())).unwrap()
    }

    fn offsets(l: &Layout) -> Vec<(&str, usize)> {
        l.members
            .iter()
            .map(|m| (m.path.as_str(), m.offset))
            .collect()
    }

    #[test]
    fn members_are_aligned_to_their_size_and_the_struct_to_its_largest() {
        let u = unit(
            "typedef struct { float w; long a; float c; } P; struct Q { char c; float3 v; P p; };",
        );
        let p = layout(&u, "(anonymous 1)").unwrap();
        assert_eq!((p.size, p.align), (24, 8));
        assert_eq!(offsets(&p), [("w", 0), ("a", 8), ("c", 16)]);
        let q = layout(&u, "Q").unwrap();
        assert_eq!(
            offsets(&q),
            [("c", 0), ("v", 16), ("p.w", 32), ("p.a", 40), ("p.c", 48)]
        );
        assert_eq!((q.size, q.align), (64, 16));
        assert_eq!(q.members[1].lanes, 3);
    }

    #[test]
    fn unions_pointer_and_array_members_are_refused_with_the_reason() {
        let u = unit(
            "union U { int a; float b; }; struct S { __global int *p; }; struct T { int a[2]; };",
        );
        assert!(layout(&u, "U").unwrap_err().contains("share bytes"));
        assert!(layout(&u, "S").unwrap_err().contains("pointer member `p`"));
        assert!(layout(&u, "T").unwrap_err().contains("array member `a`"));
    }
}
