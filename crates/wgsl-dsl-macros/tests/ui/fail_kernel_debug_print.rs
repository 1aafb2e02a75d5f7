use wgsl_dsl::prelude::*;

#[kernel(workgroup_size = 64)]
fn k(#[storage(read_write)] y: &mut [f32], #[builtin(global_invocation_id)] gid: Vec3<u32>) {
    let i = gid.x;
    debug_print!("{} and {}", i);
    debug_print!("i = {i}", i);
    debug_print!(i);
    let v = debug_print!("{}", i);
    y[i] = 1.0;
}

fn main() {}
