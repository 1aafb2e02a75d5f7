use wgsl_dsl::prelude::*;

#[kernel(workgroup_size = 64)]
fn k(#[storage(read_write)] y: &mut [f32], #[builtin(global_invocation_id)] gid: Vec3<f32>) {
    y[0u32] = gid.x;
}

fn main() {}
