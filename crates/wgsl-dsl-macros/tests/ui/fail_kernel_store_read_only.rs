use wgsl_dsl::prelude::*;

#[kernel(workgroup_size = 64)]
fn k(#[storage(read)] x: &[f32], #[builtin(global_invocation_id)] gid: Vec3<u32>) {
    let i = gid.x;
    x[i] = 1.0;
}

fn main() {}
