use wgsl_dsl::prelude::*;

#[kernel(workgroup_size = 64)]
fn k(
    #[uniform] scale: f32,
    #[storage(read_write)] y: &mut [f32],
    #[builtin(global_invocation_id)] gid: Vec3<u32>,
) {
    let i = gid.x;
    y[i] = scale + i;
}

fn main() {}
