//! `y[g] = x[g + 1]` within each workgroup of 64, through workgroup memory: the `race`
//! example's kernel, and the interpreter's race test (`tests/interp_checks.rs`, `#[path]`).

use wgsl_dsl::prelude::*;

/// The file the kernel's lines are in (its statements' call sites name it).
pub const FILE: &str = file!();

/// `tile[l] = x[g]`, then `y[g] = tile[l + 1]` for `l < 63` (`l` the local invocation
/// index, `g` the global one). With the workgroup barrier between the store and the load it
/// is correct; without it, a race. Returns the kernel and the lines of that store and load.
pub fn shift_kernel(barrier: bool) -> (KernelBuilder, u32, u32) {
    let mut k = KernelBuilder::new("shift_left", [64, 1, 1]);
    let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    let y = k.storage::<RuntimeArray<f32>, ReadWrite>("y");
    let tile = k.workgroup::<Array<f32, 65>>("tile");
    let l = k.let_("l", local_invocation_index());
    let g = k.let_("g", global_invocation_id().x());
    let write = line!() + 1;
    k.store(&tile.at(&l), x.at(&g).load());
    if barrier {
        k.workgroup_barrier();
    }
    let read = line!() + 1;
    let next = tile.at(&l + 1u32).load();
    k.if_(l.lt(63u32), |k| k.store(&y.at(&g), next));
    (k, write, read)
}
