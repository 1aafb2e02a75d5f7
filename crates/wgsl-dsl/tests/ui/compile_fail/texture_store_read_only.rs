use wgsl_dsl::prelude::*;
use wgsl_dsl::types::R32Float;

fn main() {
    let mut k = KernelBuilder::new("k", [8, 8, 1]);
    let gain = k.storage_texture::<R32Float, ReadOnly>("gain");
    let p = global_invocation_id().xy();
    k.texture_store(&gain, p, vec4(1.0f32, 0.0, 0.0, 1.0));
}
