use wgsl_dsl::prelude::*;

#[kernel(workgroup_size = 64)]
fn k(#[storage(read_write)] y: &mut [f32], #[builtin(global_id)] gid: Vec3<u32>) {
    let i = gid.x;
    y[i] = y[i].frobnicate();
    y[i] = y[i].sqr();
    y[i] = y[i].inverse_sqr();
}

fn main() {}
