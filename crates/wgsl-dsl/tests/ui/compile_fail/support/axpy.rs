// `y = a x + y`: the kernel of the typed_* cases (and of `axpy_matches_builder` in
// `crates/wgsl-dsl-macros/tests/kernels_match_builder.rs`).
#[kernel(workgroup_size = [64, 1, 1])]
fn axpy(
    #[uniform] a: f32,
    #[storage(read)] x: &[f32],
    #[storage(read_write)] y: &mut [f32],
    #[builtin(global_invocation_id)] gid: Vec3<u32>,
) {
    let i = gid.x;
    if i < y.len() {
        y[i] = a * x[i] + y[i];
    }
}
