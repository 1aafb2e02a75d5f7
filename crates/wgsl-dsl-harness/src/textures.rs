//! The texture kernel (WGSL spec §6.5 "Texture and Sampler Types", §17.7 "Texture Built-in
//! Functions"), for the snapshot test and the GPU test of `tests/textures.rs`.

use wgsl_dsl::KernelBuilder;
use wgsl_dsl::prelude::*;
use wgsl_dsl::types::{R32Float, R32Uint, Rgba32Float};

#[allow(unused_imports)] // for the docs of `tint`
use wgsl_dsl::runtime::{GpuBuffer, GpuTexture, TextureOf};

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

/// `#[kernel]` with textures (issue 26): `out[x, y] = src[x, y] * gain + weight[x, y].r`
/// (every channel) over the texels inside `out`, with
///
/// - `src: texture_2d<f32>` (a sampled texture, read with `textureLoad` at level 0; an
///   `rgba8unorm` texture in the tests),
/// - `weight: texture_storage_2d<r32float, read>`,
/// - `out: texture_storage_2d<rgba32float, write>`,
/// - `gain`: a uniform `f32`.
///
/// Its typed interface is `TintArgs { src: &dyn TextureOf<f32>, weight: &GpuTexture<R32Float>,
/// out: &mut GpuTexture<Rgba32Float>, gain: &GpuBuffer<f32> }`.
#[kernel(workgroup_size = [4, 4, 1])]
pub fn tint(
    #[texture] src: Texture2d<f32>,
    #[texture] weight: StorageTexture2d<R32Float, ReadOnly>,
    #[texture] out: StorageTexture2d<Rgba32Float, WriteOnly>,
    #[uniform] gain: f32,
    #[builtin(global_invocation_id)] gid: Vec3<u32>,
) {
    let p = gid.xy;
    let size = out.dimensions();
    if p.x < size.x && p.y < size.y {
        let w = weight.load(p).x;
        let v = src.load(p, 0u32) * gain + w;
        out.store(p, v);
    }
}

/// The bindings of [`tint_builder`], declared once (`#[derive(Bindings)]` with textures); the
/// derive writes `TintBuilderArgs<'a>`.
#[derive(Debug, Bindings)]
pub struct TintBuilderBindings {
    /// `texture_2d<f32>`.
    #[texture]
    pub src: Texture2d<f32>,
    /// `texture_storage_2d<r32float, read>`.
    #[texture]
    pub weight: StorageTexture2d<R32Float, ReadOnly>,
    /// `texture_storage_2d<rgba32float, write>`.
    #[texture]
    pub out: StorageTexture2d<Rgba32Float, WriteOnly>,
    /// The gain.
    #[uniform]
    pub gain: Place<f32, ReadOnly>,
}

/// [`tint`] written with the builder and [`TintBuilderBindings`]: the same WGSL.
pub fn tint_builder() -> KernelBuilder {
    let mut k = KernelBuilder::new("tint", [4, 4, 1]);
    let TintBuilderBindings {
        src,
        weight,
        out,
        gain,
    } = k.bindings();
    let p = k.let_("p", global_invocation_id().xy());
    let size = k.let_("size", out.dimensions());
    k.if_(p.x().lt(size.x()).and(p.y().lt(size.y())), |k| {
        let w = k.let_("w", weight.load(&p).x());
        let v = k.let_("v", src.load(&p, 0u32) * gain.load() + w);
        k.texture_store(&out, &p, v);
    });
    k
}
