//! Typed dispatch on the interpreter: a `#[kernel]`'s argument struct over `HostBuffer`s
//! (`ScaleArgs<'_, Interpreter>`), compiled with `Interpreter::compile_typed`. It was the
//! example of `wgsl-dsl-interp`'s `typed.rs`; it is here because `#[kernel]` expands to the
//! facade's paths (`wgsl_dsl::runtime`), whose runtime would bring wgpu into the interpreter's
//! tests (`cargo tree -p wgsl-dsl-interp` has no wgpu, `.ci/crate_graph.py`). No GPU needed.

use wgsl_dsl::interp::{HostBuffer, Interpreter};
use wgsl_dsl::prelude::*;

#[kernel(workgroup_size = 64)]
fn scale(
    #[uniform] factor: f32,
    #[storage(read)] x: &[f32],
    #[storage(read_write)] y: &mut [f32],
    #[builtin(global_invocation_id)] gid: Vec3<u32>,
) {
    let i = gid.x;
    if i < y.len() {
        y[i] = factor * x[i];
    }
}

#[test]
fn a_kernel_s_argument_struct_over_host_buffers() -> Result<(), Box<dyn std::error::Error>> {
    let cpu = Interpreter::new();
    let kernel = cpu.compile_typed(Scale)?;
    let factor = HostBuffer::from_value(3.0f32);
    let x = HostBuffer::from_slice(&[1.0f32, 2.0, 3.0]);
    let mut y = HostBuffer::from_slice(&[f32::NAN; 3]);
    kernel.dispatch(
        &cpu,
        ScaleArgs {
            factor: &factor,
            x: &x,
            y: &mut y,
        },
        [3, 1, 1],
    )?;
    assert_eq!(y.read(), vec![3.0, 6.0, 9.0]);
    Ok(())
}
