// The kernels of the typed_swapped_buffer* cases: a builder-written one
// (`#[derive(Bindings)]`) gathering a batch of `f32` features and `u32` labels, and a
// `#[kernel]` stepping parameters (written) by gradients (only read).
#[derive(Bindings)]
struct GatherBindings {
    images: Buffer<f32, ReadOnly>,
    labels: Buffer<u32, ReadOnly>,
    x: Buffer<f32, ReadWrite>,
    batch_labels: Buffer<u32, ReadWrite>,
}

#[kernel(workgroup_size = 64)]
fn sgd(
    #[storage(read)] grads: &[f32],
    #[storage(read_write)] params: &mut [f32],
    #[builtin(global_invocation_id)] gid: Vec3<u32>,
) {
    let i = gid.x;
    if i < params.len() {
        params[i] -= 0.1 * grads[i];
    }
}
