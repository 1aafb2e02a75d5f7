use wgsl_dsl::prelude::*;

// Any Rust identifier of ASCII letters, digits and `_` names a kernel (`layer1` is written
// `layer1_` by naga, and the signature says so); these cannot name a WGSL entry point.
#[kernel(workgroup_size = 64, name = "my kernel")]
fn spaced(#[storage(read_write)] y: &mut [f32]) {
    y[0] = 1.0;
}

#[kernel(workgroup_size = 64)]
fn café(#[storage(read_write)] y: &mut [f32]) {
    y[0] = 1.0;
}

fn main() {}
