use wgsl_dsl::prelude::*;

#[kernel(workgroup_size = 64, tile = 4)]
fn k(
    #[storage(read)] y: &mut [f32],
    #[uniform] a: &f32,
    #[builtin(global_invocation_id)] gid: Vec3<f32>,
) {
    y[0u32] = a;
}

fn main() {}
