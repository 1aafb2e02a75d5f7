//! Texture kernels: `dst[p] = src[p] * m + textureDimensions(src).x` for every texel `p` of an
//! `r32uint` texture read as a `texture_2d<u32>` and written as a write-only storage texture
//! (`textureLoad`, `textureDimensions`, `textureStore`). The interpreter does not execute
//! textures, so these are checked by oracles (a) and (b), and on a GPU against the host's
//! integer reference, bit for bit.

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use wgsl_dsl::KernelBuilder;
use wgsl_dsl::prelude::*;
use wgsl_dsl::types::R32Uint;

use crate::ast::{Inputs, Program, TextureCase};
use crate::emitted::{Binding, Emitted};

pub(crate) fn generate(seed: u64, rng: &mut ChaCha8Rng) -> Program {
    let size: [u32; 2] = [rng.random_range(1..=19), rng.random_range(1..=11)];
    let texels = (0..size[0] * size[1]).map(|_| rng.random()).collect();
    Program {
        seed,
        workgroup: [8, 4, 1],
        grid: [size[0].div_ceil(8), size[1].div_ceil(4), 1],
        subgroups: false,
        inputs: Inputs::default(),
        funcs: Vec::new(),
        body: Vec::new(),
        coop: None,
        texture: Some(TextureCase {
            size,
            texels,
            factor: rng.random(),
        }),
    }
}

pub(crate) fn emit(prog: &Program, t: &TextureCase) -> Emitted {
    let mut k = KernelBuilder::new(format!("fuzz_texture_{}", prog.seed), prog.workgroup);
    let src = k.texture::<u32>("src");
    let dst = k.storage_texture::<R32Uint, WriteOnly>("dst");
    let dims = k.let_("dims", src.dimensions());
    let p = k.let_("p", global_invocation_id().xy());
    let inside = p.x().lt(dims.x()).and(p.y().lt(dims.y()));
    k.if_(inside, |k| {
        let v = src.load(&p, 0u32);
        let w = v * t.factor + Exp::<Vec4<u32>>::splat(dst.dimensions().x());
        k.texture_store(&dst, &p, w);
    });
    Emitted {
        kernel: k,
        bindings: vec![Binding::TextureSrc, Binding::TextureDst],
        slots: [0; 4],
        atomics: (0, 0),
        consts: Default::default(),
    }
}

/// The texels `dst` must hold.
pub fn reference(t: &TextureCase) -> Vec<u32> {
    t.texels
        .iter()
        .map(|&v| v.wrapping_mul(t.factor).wrapping_add(t.size[0]))
        .collect()
}
