use wgsl_dsl::prelude::*;

fn main() {
    let a = vec3(1.0f32, 2.0f32, 3.0f32);
    let b = vec4(1.0f32, 2.0f32, 3.0f32, 4.0f32);
    let _ = a + b;
}
