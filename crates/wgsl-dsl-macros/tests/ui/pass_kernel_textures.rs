//! `#[texture]` parameters and `debug_print!` compile without the runtime (no typed
//! interface then).
use wgsl_dsl::prelude::*;
use wgsl_dsl::types::{R32Float, Rgba8Unorm};

#[kernel(workgroup_size = [8, 8])]
fn k(
    #[texture] src: Texture2d<f32>,
    #[texture] gain: StorageTexture2d<R32Float, ReadOnly>,
    #[texture] dst: StorageTexture2d<Rgba8Unorm, WriteOnly>,
    #[builtin(global_invocation_id)] gid: Vec3<u32>,
) {
    let p = gid.xy;
    let size = dst.dimensions();
    if p.x < size.x && p.y < size.y {
        let v = src.load(p, 0u32) * gain.load(p).x;
        debug_print!("texel {} of {}: {}", p, size, v);
        dst.store(p, v);
    }
}

#[derive(Bindings)]
struct B {
    #[texture]
    src: Texture2d<u32>,
    #[texture]
    dst: StorageTexture2d<R32Float, ReadWrite>,
}

fn main() {
    let shader = k().build().unwrap();
    assert!(shader.wgsl.contains("textureStore(dst, p, "));
    assert_eq!(shader.debug_prints(), 1);
    let mut b = KernelBuilder::new("b", [1, 1, 1]);
    let B { src, dst } = b.bindings();
    let d = src.dimensions();
    b.texture_store(&dst, vec2(lit(0u32), lit(0u32)), vec4(d.x().to_f32(), lit(0.0f32), lit(0.0f32), lit(1.0f32)));
    assert!(b.build().unwrap().wgsl.contains("var src: texture_2d<u32>;"));
}
