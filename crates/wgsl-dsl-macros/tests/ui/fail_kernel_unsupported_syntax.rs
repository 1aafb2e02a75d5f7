use wgsl_dsl::prelude::*;

#[kernel(workgroup_size = 64)]
fn k(#[storage(read_write)] y: &mut [f32], #[builtin(global_invocation_id)] gid: Vec3<u32>) {
    let i = gid.x;
    match i {
        0 if i > 2 => {}
        5.. => {}
        _ => {}
    }
    match i {
        0 => {}
    }
    let (a, b) = (1.0, 2.0);
    y[i] = if i > 3 { 1.0 };
    #[unroll]
    for j in 0..i {
        y[j] = 0.0;
    }
    #[unroll]
    for j in 0..4u32 {
        if y[j] > 0.0 {
            break;
        }
    }
    #[unroll]
    while i > 0 {}
    for j in y {}
    println!("{}", i);
}

fn main() {
    // The stub keeps the signature: this call adds no error of its own.
    let _ = k();
}
