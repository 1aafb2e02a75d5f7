//! The texture kernel (WGSL spec §6.5 "Texture and Sampler Types", §17.7 "Texture Built-in
//! Functions"), for the snapshot test and the GPU test of `tests/textures.rs`.

use wgsl_dsl::KernelBuilder;
use wgsl_dsl::prelude::*;
use wgsl_dsl::types::{R32Float, R32Uint, Rgba32Float};

/// Workgroup size of [`texture_ops`]: 4 x 4, so that 7 x 5 textures leave partial workgroups.
pub const WG: [u32; 3] = [4, 4, 1];

/// Every texture binding kind and built-in in one kernel, over the texels `(x, y)` inside
/// `out` (`textureDimensions(out)`):
///
/// - binding 0 `src: texture_2d<f32>` (an `rgba8unorm` texture), read with `textureLoad` at
///   level 0;
/// - binding 1 `gain: texture_storage_2d<r32float, read>`;
/// - binding 2 `counts: texture_storage_2d<r32uint, read_write>`: `c = counts[x, y].r` (loaded
///   at `vec2<i32>` coordinates), then `counts[x, y] = (3 c + x + y, 0, 0, 1)`;
/// - binding 3 `out: texture_storage_2d<rgba32float, write>`: `out[x, y] = src[x, y] *
///   gain[x, y].r`;
/// - binding 4 `dims: array<u32>`: invocation `(0, 0)` writes `textureDimensions` of `src`,
///   `gain`, `counts` (six values).
pub fn texture_ops() -> KernelBuilder {
    let mut k = KernelBuilder::new("texture_ops", WG);
    let src = k.texture::<f32>("src");
    let gain = k.storage_texture::<R32Float, ReadOnly>("gain");
    let counts = k.storage_texture::<R32Uint, ReadWrite>("counts");
    let out = k.storage_texture::<Rgba32Float, WriteOnly>("out");
    let dims = k.storage::<RuntimeArray<u32>, ReadWrite>("dims");
    let p = k.let_("p", global_invocation_id().xy());
    let size = k.let_("size", out.dimensions());
    k.if_(p.x().lt(size.x()).and(p.y().lt(size.y())), |k| {
        let v = src.load(&p, 0u32) * gain.load(&p).x();
        k.texture_store(&out, &p, v);
        let c = k.let_("c", counts.load(p.to_i32()).x());
        let next = c * 3u32 + p.x() + p.y();
        k.texture_store(&counts, &p, vec4(next, lit(0u32), lit(0u32), lit(1u32)));
    });
    k.if_(p.x().eq(0u32).and(p.y().eq(0u32)), |k| {
        let all = [src.dimensions(), gain.dimensions(), counts.dimensions()];
        for (i, d) in all.into_iter().enumerate() {
            let d = k.let_("d", d);
            k.store(&dims.at(2 * i as u32), d.x());
            k.store(&dims.at(2 * i as u32 + 1), d.y());
        }
    });
    k
}
