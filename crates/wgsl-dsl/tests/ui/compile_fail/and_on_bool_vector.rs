use wgsl_dsl::prelude::*;

fn main() {
    let v = vec2(1.0f32, 2.0f32).gt(vec2(0.0f32, 3.0f32));
    let w = vec2(1.0f32, 2.0f32).lt(vec2(0.0f32, 3.0f32));
    let _ = v.and(w);
}
