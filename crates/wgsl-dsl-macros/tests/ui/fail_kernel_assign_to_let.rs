use wgsl_dsl::prelude::*;

#[kernel(workgroup_size = 64)]
fn k(#[storage(read_write)] y: &mut [f32], #[builtin(global_invocation_id)] gid: Vec3<u32>) {
    let i = gid.x;
    let total = 0.0;
    total = y[i];
    y[i] = total;
    break;
}

fn main() {}
