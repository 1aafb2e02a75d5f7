/// Hyperparameters of a momentum SGD step, shared by the host and the kernel.
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable, WgslStruct)]
#[repr(C)]
#[wgsl(uniform)]
struct Sgd {
    learning_rate: f32,
    momentum: f32,
    len: u32,
    _pad: u32,
}

#[kernel(workgroup_size = 64)]
fn sgd_step(
    #[uniform] hp: Sgd,
    #[storage(read)] grads: &[f32],
    #[storage(read_write)] params: &mut [f32],
    #[storage(read_write)] velocity: &mut [f32],
    #[builtin(global_invocation_id)] gid: Vec3<u32>,
) {
    let i = gid.x;
    if i >= hp.len {
        return;
    }
    let v = hp.momentum * velocity[i] + grads[i];
    velocity[i] = v;
    params[i] -= hp.learning_rate * v;
}
