//! The recursive multi-work-group exclusive scan of the 2015 paper (section 4.5), as a
//! [`Pipeline`], for both tree storages of sections 4.2–4.4.
//!
//! For n inputs and at most `B = 2 × max_local_size` elements per work-group:
//! 1. `scan_blocks_*` (one launch, n / B work-groups): each group scans its block of
//!    `data` in `local` memory (Blelloch: up-sweep, clear the root, down-sweep) and
//!    stores the block's total in `sums[group_id]`;
//! 2. if there was more than one block, the same pipeline scans `sums` (recursively,
//!    until one work-group suffices);
//! 3. `add_sums` (n / B groups) adds `sums[group_id]` — now the total of all earlier
//!    blocks — in front of every element of the block (`sums[g] ⊕ data[i]`, left operand
//!    first, so non-commutative monoids such as the interval monoid work).
//!
//! The two block-scan kernels differ only in how the tree is stored:
//! - [`Storage::Tree1d`]: a heap `tree[2B]` (root at 1, children of i at 2i and 2i+1);
//!   at each level only the threads with `tid < m` work — branch divergence.
//! - [`Storage::Tree2d`]: a level × node array `x[log2(B) + 1][B]`; every thread works at
//!   every level (the threads beyond a level's width compute unused values), so there
//!   is no divergence, at the price of more local memory.
//!
//! In ksim syntax the 1D block scan reads (the builder below constructs exactly this):
//! ```text
//! kernel scan_blocks_tree1d(global T data[n], global T sums[n / b], local T tree[2 * b])
//!     launch(groups = n / b, local_size = b / 2)
//! {
//!     int base = group_id * b;
//!     tree[b + 2 * tid] = data[base + 2 * tid];
//!     tree[b + 2 * tid + 1] = data[base + 2 * tid + 1];
//!     barrier();
//!     int m = b / 2;
//!     while (m > 0) {                       // up-sweep, level of m nodes
//!         if (tid < m) { int i = m + tid; tree[i] = tree[2 * i] ⊕ tree[2 * i + 1]; }
//!         barrier();
//!         m = m / 2;
//!     }
//!     if (tid == 0) { sums[group_id] = tree[1]; tree[1] = identity; }
//!     barrier();
//!     m = 1;
//!     while (m < b) {                       // down-sweep
//!         if (tid < m) {
//!             int i = m + tid;
//!             tree[2 * i + 1] = tree[i] ⊕ tree[2 * i];
//!             tree[2 * i] = tree[i];
//!         }
//!         barrier();
//!         m = m * 2;
//!     }
//!     data[base + 2 * tid] = tree[b + 2 * tid];
//!     data[base + 2 * tid + 1] = tree[b + 2 * tid + 1];
//! }
//! ```
//! and the 2D one:
//! ```text
//! kernel scan_blocks_tree2d(global T data[n], global T sums[n / b], local T x[log2(b) + 1][b])
//!     launch(groups = n / b, local_size = b / 2)
//! {
//!     int base = group_id * b;
//!     int levels = log2(b);
//!     x[0][2 * tid] = data[base + 2 * tid];
//!     x[0][2 * tid + 1] = data[base + 2 * tid + 1];
//!     barrier();
//!     int d = 1;
//!     while (d <= levels) {                 // up-sweep: every thread, every level
//!         x[d][tid] = x[d - 1][2 * tid] ⊕ x[d - 1][2 * tid + 1];
//!         barrier();
//!         d = d + 1;
//!     }
//!     if (tid == 0) { sums[group_id] = x[levels][0]; x[levels][0] = identity; }
//!     barrier();
//!     d = levels;
//!     while (d >= 1) {                      // down-sweep
//!         T t = x[d][tid];
//!         x[d - 1][2 * tid + 1] = t ⊕ x[d - 1][2 * tid];
//!         x[d - 1][2 * tid] = t;
//!         barrier();
//!         d = d - 1;
//!     }
//!     data[base + 2 * tid] = x[0][2 * tid];
//!     data[base + 2 * tid + 1] = x[0][2 * tid + 1];
//! }
//!
//! kernel add_sums(global T data[n], const global T sums[n / b])
//!     launch(groups = n / b, local_size = b / 2)
//! {
//!     int i = group_id * b + 2 * tid;
//!     T s = sums[group_id];
//!     data[i] = s ⊕ data[i];
//!     data[i + 1] = s ⊕ data[i + 1];
//! }
//! ```

use crate::builder::*;
use crate::pipeline::Pipeline;
use crate::runtime::GpuError;
use interp::{Launch, LaunchOptions, Monoid, Value};
use lang::ast::Space;
use lang::core::{Kernel, Ty};
use std::sync::Arc;

/// How the scan tree of one work-group is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Storage {
    /// A 1D heap: divergent.
    Tree1d,
    /// A 2D level × node array: not divergent.
    Tree2d,
}

impl Storage {
    pub fn name(self) -> &'static str {
        match self {
            Storage::Tree1d => "tree1d",
            Storage::Tree2d => "tree2d",
        }
    }
}

/// The block-scan kernel for `storage` (parameters `n`, `b`).
pub fn scan_blocks_kernel(storage: Storage) -> Kernel {
    let mut k = KernelBuilder::new(&format!("scan_blocks_{}", storage.name()));
    let n = k.size_param("n");
    let b = k.size_param("b");
    let data = k.array("data", Ty::Generic, Space::Global, false, vec![n.clone()]);
    let sums = k.array(
        "sums",
        Ty::Generic,
        Space::Global,
        false,
        vec![div(n.clone(), b.clone())],
    );
    k.launch(
        Some(div(n.clone(), b.clone())),
        Some(div(b.clone(), int(2))),
    );
    let two_tid = || mul(int(2), tid());
    let base = k.let_("base", mul(group_id(), b.clone()));
    let at = |k: &KernelBuilder, off: i32| add(add(k.get(base), two_tid()), int(off));
    match storage {
        Storage::Tree1d => {
            let tree = k.array(
                "tree",
                Ty::Generic,
                Space::Local,
                false,
                vec![mul(int(2), b.clone())],
            );
            for off in 0..2 {
                let v = k.load(data, vec![at(&k, off)]);
                k.store(tree, vec![add(add(b.clone(), two_tid()), int(off))], v);
            }
            k.barrier();
            let m = k.let_("m", div(b.clone(), int(2)));
            let i = k.var("i", Ty::Int);
            k.while_(gt(k.get(m), int(0)), |k| {
                k.if_(lt(tid(), k.get(m)), |k| {
                    k.assign(i, add(k.get(m), tid()));
                    let l = k.load(tree, vec![mul(int(2), k.get(i))]);
                    let r = k.load(tree, vec![add(mul(int(2), k.get(i)), int(1))]);
                    k.store(tree, vec![k.get(i)], combine(l, r));
                });
                k.barrier();
                k.assign(m, div(k.get(m), int(2)));
            });
            k.if_(eq(tid(), int(0)), |k| {
                let root = k.load(tree, vec![int(1)]);
                k.store(sums, vec![group_id()], root);
                k.store(tree, vec![int(1)], identity());
            });
            k.barrier();
            k.assign(m, int(1));
            k.while_(lt(k.get(m), b.clone()), |k| {
                k.if_(lt(tid(), k.get(m)), |k| {
                    k.assign(i, add(k.get(m), tid()));
                    let parent = k.load(tree, vec![k.get(i)]);
                    let left = k.load(tree, vec![mul(int(2), k.get(i))]);
                    k.store(
                        tree,
                        vec![add(mul(int(2), k.get(i)), int(1))],
                        combine(parent.clone(), left),
                    );
                    k.store(tree, vec![mul(int(2), k.get(i))], parent);
                });
                k.barrier();
                k.assign(m, mul(k.get(m), int(2)));
            });
            for off in 0..2 {
                let v = k.load(tree, vec![add(add(b.clone(), two_tid()), int(off))]);
                k.store(data, vec![at(&k, off)], v);
            }
        }
        Storage::Tree2d => {
            let x = k.array(
                "x",
                Ty::Generic,
                Space::Local,
                false,
                vec![add(log2(b.clone()), int(1)), b.clone()],
            );
            let levels = k.let_("levels", log2(b.clone()));
            for off in 0..2 {
                let v = k.load(data, vec![at(&k, off)]);
                k.store(x, vec![int(0), add(two_tid(), int(off))], v);
            }
            k.barrier();
            let d = k.let_("d", int(1));
            k.while_(le(k.get(d), k.get(levels)), |k| {
                let dm1 = sub(k.get(d), int(1));
                let l = k.load(x, vec![dm1.clone(), two_tid()]);
                let r = k.load(x, vec![dm1, add(two_tid(), int(1))]);
                k.store(x, vec![k.get(d), tid()], combine(l, r));
                k.barrier();
                k.assign(d, add(k.get(d), int(1)));
            });
            k.if_(eq(tid(), int(0)), |k| {
                let root = k.load(x, vec![k.get(levels), int(0)]);
                k.store(sums, vec![group_id()], root);
                k.store(x, vec![k.get(levels), int(0)], identity());
            });
            k.barrier();
            k.assign(d, k.get(levels));
            let t = k.var("t", Ty::Generic);
            k.while_(bin(lang::ast::BinOp::Ge, k.get(d), int(1)), |k| {
                let v = k.load(x, vec![k.get(d), tid()]);
                k.assign(t, v);
                let dm1 = sub(k.get(d), int(1));
                let left = k.load(x, vec![dm1.clone(), two_tid()]);
                k.store(
                    x,
                    vec![dm1.clone(), add(two_tid(), int(1))],
                    combine(k.get(t), left),
                );
                k.store(x, vec![dm1, two_tid()], k.get(t));
                k.barrier();
                k.assign(d, sub(k.get(d), int(1)));
            });
            for off in 0..2 {
                let v = k.load(x, vec![int(0), add(two_tid(), int(off))]);
                k.store(data, vec![at(&k, off)], v);
            }
        }
    }
    k.finish()
}

/// The kernel that adds each block's offset (parameters `n`, `b`).
pub fn add_sums_kernel() -> Kernel {
    let mut k = KernelBuilder::new("add_sums");
    let n = k.size_param("n");
    let b = k.size_param("b");
    let data = k.array("data", Ty::Generic, Space::Global, false, vec![n.clone()]);
    let sums = k.array(
        "sums",
        Ty::Generic,
        Space::Global,
        true,
        vec![div(n.clone(), b.clone())],
    );
    k.launch(Some(div(n, b.clone())), Some(div(b.clone(), int(2))));
    let i = k.let_("i", add(mul(group_id(), b), mul(int(2), tid())));
    let s0 = k.load(sums, vec![group_id()]);
    let s = k.let_("s", s0);
    for off in 0..2 {
        let idx = add(k.get(i), int(off));
        let v = k.load(data, vec![idx.clone()]);
        k.store(data, vec![idx], combine(k.get(s), v));
    }
    k.finish()
}

/// The local size for the scan pipeline on a device: the largest power of two, at most
/// 1024 and the device's work-group maximum, whose 2D block tree `x[log2(2L) + 1][2L]`
/// fits the device's local memory. Both storages use it, so that they are compared on
/// equal blocks (on a GPU with 48 KiB of local memory: 512 work-items, blocks of 1024).
pub fn fitting_local_size(info: &crate::runtime::DeviceInfo, monoid: Monoid) -> usize {
    use crate::repr::Bytes;
    let elem = crate::repr::Repr::of(Ty::Generic, monoid).map_or(4, |r| r.size()) as u64;
    let max = info.max_work_group_size.clamp(1, 1024);
    let mut l = 1usize << (usize::BITS - 1 - max.leading_zeros());
    while l > 1 {
        let b = 2 * l as u64;
        if (u64::from(b.trailing_zeros()) + 1) * b * elem <= info.local_mem_size {
            break;
        }
        l /= 2;
    }
    l
}

/// The multi-work-group exclusive scan of `input` (n = its length, a power of two ≥ 2)
/// with at most `max_local_size` work-items per group. Buffers: `data` (input, then the
/// exclusive scan), `sums1`, `sums2`, … (block totals of each level, then their scans)
/// and `total` (the sum of everything).
pub fn scan_pipeline(
    storage: Storage,
    input: Vec<Value>,
    max_local_size: usize,
    monoid: Monoid,
) -> Result<Pipeline, GpuError> {
    let n = input.len();
    if n < 2 || !n.is_power_of_two() {
        return Err(GpuError::Pipeline(format!(
            "the scan pipeline needs a power of two n >= 2 (got {n})"
        )));
    }
    if max_local_size == 0 {
        return Err(GpuError::Pipeline(
            "max local size must be at least 1".into(),
        ));
    }
    let block_max = 2 * (1usize << (usize::BITS - 1 - max_local_size.leading_zeros()));
    let scan_k = Arc::new(scan_blocks_kernel(storage));
    let add_k = Arc::new(add_sums_kernel());
    let launch = |k: &Arc<Kernel>, n: usize, b: usize| -> Result<Launch, GpuError> {
        Launch::new(
            k.clone(),
            &LaunchOptions {
                defines: vec![("n".into(), n.to_string()), ("b".into(), b.to_string())],
                monoid,
                ..Default::default()
            },
        )
        .map_err(|e| GpuError::Pipeline(e.to_string()))
    };
    let mut p = Pipeline::new(&format!("scan_{}", storage.name()));
    let id = monoid.identity();
    let mut data = p.add_buffer("data", Ty::Generic, input);
    let mut levels = Vec::new();
    let mut len = n;
    loop {
        let b = len.min(block_max);
        let groups = len / b;
        let name = if groups == 1 {
            "total".to_string()
        } else {
            format!("sums{}", levels.len() + 1)
        };
        let sums = p.add_buffer(&name, Ty::Generic, vec![id.clone(); groups]);
        p.add_stage(launch(&scan_k, len, b)?, &[("data", data), ("sums", sums)])?;
        if groups == 1 {
            break;
        }
        levels.push((len, b, data, sums));
        data = sums;
        len = groups;
    }
    for &(len, b, data, sums) in levels.iter().rev() {
        p.add_stage(launch(&add_k, len, b)?, &[("data", data), ("sums", sums)])?;
    }
    Ok(p)
}

/// The exclusive scan of `input` under `monoid`, sequentially (for checking).
pub fn exclusive_scan(input: &[Value], monoid: Monoid) -> Vec<Value> {
    let mut acc = monoid.identity();
    input
        .iter()
        .map(|x| {
            let out = acc.clone();
            acc = monoid.combine(&acc, x);
            out
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn device(max_work_group_size: usize, local_kib: u64) -> crate::runtime::DeviceInfo {
        crate::runtime::DeviceInfo {
            index: 0,
            platform: "p".into(),
            name: "d".into(),
            kind: "GPU".into(),
            version: String::new(),
            driver: String::new(),
            max_work_group_size,
            local_mem_size: local_kib * 1024,
            global_mem_size: 1 << 30,
            compute_units: 1,
        }
    }

    #[test]
    fn the_local_size_fits_the_2d_tree_in_local_memory() {
        // 48 KiB: blocks of 2048 ints need 12 × 2048 × 4 = 96 KiB, blocks of 1024 need 44 KiB.
        assert_eq!(fitting_local_size(&device(1024, 48), Monoid::IntAdd), 512);
        assert_eq!(fitting_local_size(&device(4096, 512), Monoid::IntAdd), 1024);
        assert_eq!(fitting_local_size(&device(256, 512), Monoid::IntAdd), 256);
        // Intervals take 8 bytes: blocks of 1024 need 88 KiB.
        assert_eq!(fitting_local_size(&device(1024, 48), Monoid::Interval), 256);
        assert_eq!(fitting_local_size(&device(1000, 1024), Monoid::IntAdd), 512);
    }
}
