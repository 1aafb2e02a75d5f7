use wgsl_dsl::prelude::*;
use wgsl_dsl::types::R32Float;

fn main() {
    let mut k = KernelBuilder::new("k", [8, 8, 1]);
    let out = k.storage_texture::<R32Float, WriteOnly>("out");
    let p = global_invocation_id().xy();
    let _texel = k.let_("texel", out.load(p));
}
