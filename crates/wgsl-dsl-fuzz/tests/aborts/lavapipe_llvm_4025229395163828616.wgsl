enable f16;
@group(0) @binding(0) 
var<storage> in_f32_: array<f32>;
@group(0) @binding(1) 
var<storage> in_i32_: array<i32>;
@group(0) @binding(2) 
var<storage> in_u32_: array<u32>;
@group(0) @binding(3) 
var<storage> in_f16_: array<f16>;
@group(0) @binding(4) 
var<uniform> param: u32;
@group(0) @binding(5) 
var<storage, read_write> out_f32_: array<f32>;
@group(0) @binding(6) 
var<storage, read_write> out_u32_: array<u32>;
@group(0) @binding(7) 
var<storage, read_write> out_f16_: array<f16>;
fn f0_(a: vec2<f16>) -> vec2<f16> {
    return tanh(clamp(vec2(f16(false)), vec2(-4h), vec2(4h)));
}
@compute @workgroup_size(32, 1, 1) 
fn fuzz_4025229395163828616_(@builtin(workgroup_id) workgroup_id: vec3<u32>, @builtin(num_workgroups) num_workgroups: vec3<u32>, @builtin(local_invocation_index) local_index: u32, @builtin(local_invocation_id) local_id: vec3<u32>, @builtin(global_invocation_id) global_id: vec3<u32>) {
    let gi = ((((((workgroup_id.z * num_workgroups.y) + workgroup_id.y) * num_workgroups.x) + workgroup_id.x) * 32u) + local_index);
    let _e221 = in_u32_[(1u % arrayLength((&in_u32_)))];
    let _e231 = in_u32_[(4u % arrayLength((&in_u32_)))];
    let _e241 = subgroupBallot((false != array<bool, 4>((_e221 != 0u), false, (_e231 != 0u), true)[((param * 0u + 255u) % 4u)]));
    let _e253 = in_f16_[(15u % arrayLength((&in_f16_)))];
    let _e263 = in_f16_[(30u % arrayLength((&in_f16_)))];
    let _e275 = in_f16_[(global_id.x % arrayLength((&in_f16_)))];
    let _e282 = in_f16_[(17u % arrayLength((&in_f16_)))];
    let _e289 = in_f16_[(4u % arrayLength((&in_f16_)))];
    let _e296 = in_f16_[(31u % arrayLength((&in_f16_)))];
    let _e304 = in_f16_[(0u % arrayLength((&in_f16_)))];
    out_f16_[gi] = atan2(pow((abs(_e253) + 0.5h), clamp(_e263, -3h, 3h)), (abs((_e275 * (fma(_e282, _e289, _e296) * _e304))) + 0.5h));
    let _e317 = in_u32_[(5u % arrayLength((&in_u32_)))];
    let _e324 = in_u32_[(18u % arrayLength((&in_u32_)))];
    let _e331 = in_u32_[(2u % arrayLength((&in_u32_)))];
    let v10_ = vec3<u32>(_e317, _e324, _e331);
    out_u32_[((gi * 8u) + 5u)] = v10_.x;
    let _e360 = in_f32_[(4u % arrayLength((&in_f32_)))];
    let _e367 = in_f32_[(11u % arrayLength((&in_f32_)))];
    let _e381 = in_f32_[(4u % arrayLength((&in_f32_)))];
    let _e388 = in_f32_[(11u % arrayLength((&in_f32_)))];
    let _e397 = subgroupBroadcastFirst((acosh((abs(vec3<f32>(_e360, _e367, 1f)) + vec3(1.5f))) * acosh((abs(vec3<f32>(_e381, _e388, 1f)) + vec3(1.5f)))));
    let _e404 = in_f32_[(7u % arrayLength((&in_f32_)))];
    let _e414 = in_u32_[(3u % arrayLength((&in_u32_)))];
    let _e419 = in_f32_[(_e414 % arrayLength((&in_f32_)))];
    let _e428 = in_f32_[(11u % arrayLength((&in_f32_)))];
    let _e436 = in_f32_[(global_id.x % arrayLength((&in_f32_)))];
    let v12_ = sinh(clamp(vec3<f32>((ceil(_e404) - _e419), min(_e397, vec3<f32>(0.5f, _e428, _e436)).y, f32((true == false))), vec3(-4f), vec3(4f)));
    out_f32_[(gi * 3u)] = v12_.x;
    out_f32_[((gi * 3u) + 1u)] = v12_.y;
    loop {
        let _e502 = in_i32_[(9u % arrayLength((&in_i32_)))];
        let _e514 = in_u32_[(3u % arrayLength((&in_u32_)))];
        let _e521 = in_u32_[(12u % arrayLength((&in_u32_)))];
        switch (select(_e521, _e514, false) % 3u) {
            default: {
            }
        }
    }
}
