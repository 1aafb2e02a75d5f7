use wgsl_dsl::prelude::*;

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable, WgslStruct)]
#[repr(C)]
struct Params {
    n: u32,
}

#[kernel(workgroup_size = 64)]
fn k(
    #[uniform] p: Params,
    #[storage(read)] x: &[f32],
    #[storage(read)] counts: &[Atomic<u32>],
    #[builtin(global_invocation_id)] gid: Vec3<u32>,
) {
    let i = gid.x;
    x[i] = 1.0;
    x[i] += 2.0;
    p.n = 3;
    let _ = counts[i].atomic_add(1u32);
}

fn main() {}
