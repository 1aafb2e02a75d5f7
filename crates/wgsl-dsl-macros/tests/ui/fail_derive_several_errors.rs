use wgsl_dsl::prelude::*;

#[derive(Clone, Copy, WgslStruct)]
struct Bad {
    flag: bool,
    big: u64,
    #[wgsl(mat)]
    m: [[f32; 3]; 3],
    #[wgsl(vec)]
    v: [f32; 5],
}

fn main() {}
