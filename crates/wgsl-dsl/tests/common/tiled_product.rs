//! The tiled product of `crates/wgsl-dsl/tests/autodiff_shared.rs` and of
//! `wgsl_dsl_harness::derived` (which includes this file).

use wgsl_dsl::prelude::*;

/// The side of a tile.
pub const TILE: u32 = 4;

/// `c = a b` (`m x k` by `k x n`, row-major) with `TILE x TILE` tiles of `a` and `b` staged
/// in workgroup memory, a barrier after each staging and each use.
pub fn tiled_product(m: u32, n: u32, kk: u32) -> KernelBuilder {
    let mut k = KernelBuilder::new(format!("tiled_product_{m}x{n}x{kk}"), [TILE, TILE, 1]);
    let a = k.storage::<RuntimeArray<f32>, ReadOnly>("a");
    let b = k.storage::<RuntimeArray<f32>, ReadOnly>("b");
    let c = k.storage::<RuntimeArray<f32>, ReadWrite>("c");
    let ta = k.workgroup_array::<f32>("tile_a", TILE * TILE);
    let tb = k.workgroup_array::<f32>("tile_b", TILE * TILE);
    let local = local_invocation_id();
    let (lx, ly) = (k.let_("lx", local.x()), k.let_("ly", local.y()));
    let col = k.let_("col", workgroup_id().x() * TILE + &lx);
    let row = k.let_("row", workgroup_id().y() * TILE + &ly);
    let acc = k.var("acc", 0.0f32);
    for t in 0..kk.div_ceil(TILE) {
        let (ac, br) = (k.let_("ac", &lx + t * TILE), k.let_("br", &ly + t * TILE));
        let a_ok = row.lt(m).and(ac.lt(kk));
        let b_ok = br.lt(kk).and(col.lt(n));
        // Zeros outside the matrices (the loads only where in bounds).
        let a_val = k.var("a_val", 0.0f32);
        k.if_(a_ok, |k| k.store(&a_val, a.at(&row * kk + &ac).load()));
        let b_val = k.var("b_val", 0.0f32);
        k.if_(b_ok, |k| k.store(&b_val, b.at(&br * n + &col).load()));
        k.store(&ta.at(&ly * TILE + &lx), a_val.load());
        k.store(&tb.at(&ly * TILE + &lx), b_val.load());
        k.workgroup_barrier();
        for j in 0..TILE {
            k.store(
                &acc,
                acc.load() + ta.at(&ly * TILE + j).load() * tb.at(&lx + j * TILE).load(),
            );
        }
        k.workgroup_barrier();
    }
    k.if_(row.lt(m).and(col.lt(n)), |k| {
        k.store(&c.at(&row * n + &col), acc.load())
    });
    k
}
