// An integer literal beside an `f32` names the fix, `10.0`, not a conversion (issue 21,
// item 6): in an operation and in a compound assignment.
use wgsl_dsl::prelude::*;

#[kernel(workgroup_size = 64)]
fn shift_up(
    #[storage(read)] a: &[f32],
    #[storage(read_write)] y: &mut [f32],
    #[builtin(global_invocation_id)] gid: Vec3<u32>,
) {
    let i = gid.x;
    if i < y.len() {
        y[i] = a[i] + 10;
        y[i] += 1;
    }
}

fn main() {}
