//! Kernels of the building blocks (scans, subgroup and quad operations), for the snapshot
//! test and the GPU tests of `tests/scans.rs` and `tests/subgroups.rs`.

use wgsl_dsl::KernelBuilder;
use wgsl_dsl::kernel::scan::{ScanKind, ScanOp, add_block_offsets, scan_blocks};
use wgsl_dsl::prelude::*;

/// Output slots per invocation of [`subgroup_ops`].
pub const SUBGROUP_SLOTS: u32 = 24;
const WG: u32 = 64;

/// Every building-block kernel whose WGSL is pinned, by name.
pub fn all() -> Vec<(String, KernelBuilder)> {
    let mut v = vec![
        scan_blocks::<u32, 64>(&ScanOp::add(), ScanKind::Exclusive, false),
        scan_blocks::<u32, 64>(&ScanOp::add(), ScanKind::Inclusive, true),
        scan_blocks::<f32, 256>(&ScanOp::max(), ScanKind::Inclusive, false),
        add_block_offsets::<u32, 64>(&ScanOp::add()),
        subgroup_ops(),
    ];
    v.drain(..).map(|k| (k.name().to_string(), k)).collect()
}

/// One kernel running every subgroup and quad operation on `x[i]` for the active
/// invocations `i < n`, writing `SUBGROUP_SLOTS` results per invocation into `out`: slot 0
/// the subgroup invocation id, slot 1 `subgroupBroadcastFirst(i)` (a key of the subgroup),
/// then (in order) inclusive add, inclusive mul, exclusive mul, mul (of `x % 3 + 1`), and,
/// or, xor, all (`x > 50`), any (`x > 95`), ballot (`x` odd, four words), elect,
/// broadcast of lane 0, shuffle xor 1, up 1, down 1, quad broadcast 1, quad swaps x, y,
/// diagonal.
pub fn subgroup_ops() -> KernelBuilder {
    let mut k = KernelBuilder::new("subgroup_ops", [WG, 1, 1]);
    // The operations are checked over the *active* invocations (WGSL spec §17.12), so they run
    // in non-uniform control flow on purpose: the static uniformity check would refuse them.
    k.skip_uniformity_check();
    let n = k.uniform::<u32>("n");
    let x = k.storage::<RuntimeArray<u32>, ReadOnly>("x");
    let out = k.storage::<RuntimeArray<u32>, ReadWrite>("out");
    let i = k.let_("i", global_invocation_id().x());
    k.if_(i.lt(n.load()), |k| {
        let v = k.let_("v", x.at(&i).load());
        let small = k.let_("small", v.clone() % 3u32 + 1u32);
        let o = &i * SUBGROUP_SLOTS;
        // Slot `s` gets the result of `op`, which may emit statements first.
        let put = |k: &mut KernelBuilder, s: u32, op: &dyn Fn(&mut KernelBuilder) -> Exp<u32>| {
            let r = op(k);
            k.store(&out.at(&o + s), r);
        };
        put(k, 0, &|_| subgroup_invocation_id());
        put(k, 1, &|k| k.subgroup_broadcast_first(i.clone()));
        put(k, 2, &|k| k.subgroup_inclusive_add(v.clone()));
        put(k, 3, &|k| k.subgroup_inclusive_mul(small.clone()));
        put(k, 4, &|k| k.subgroup_exclusive_mul(small.clone()));
        put(k, 5, &|k| k.subgroup_mul(small.clone()));
        put(k, 6, &|k| k.subgroup_and(v.clone()));
        put(k, 7, &|k| k.subgroup_or(v.clone()));
        put(k, 8, &|k| k.subgroup_xor(v.clone()));
        put(k, 9, &|k| k.subgroup_all(v.gt(50u32)).select(1u32, 0u32));
        put(k, 10, &|k| k.subgroup_any(v.gt(95u32)).select(1u32, 0u32));
        let ballot = k.subgroup_ballot((&v & 1u32).eq(1u32));
        put(k, 11, &|_| ballot.x());
        put(k, 12, &|_| ballot.y());
        put(k, 13, &|_| ballot.z());
        put(k, 14, &|_| ballot.w());
        put(k, 15, &|k| k.subgroup_elect().select(1u32, 0u32));
        put(k, 16, &|k| k.subgroup_broadcast(v.clone(), 0));
        put(k, 17, &|k| k.subgroup_shuffle_xor(v.clone(), 1u32));
        put(k, 18, &|k| k.subgroup_shuffle_up(v.clone(), 1u32));
        put(k, 19, &|k| k.subgroup_shuffle_down(v.clone(), 1u32));
        put(k, 20, &|k| k.quad_broadcast(v.clone(), 1));
        put(k, 21, &|k| k.quad_swap_x(v.clone()));
        put(k, 22, &|k| k.quad_swap_y(v.clone()));
        put(k, 23, &|k| k.quad_swap_diagonal(v.clone()));
    });
    k
}
