// seed 11: dispatch [2, 2, 1] workgroups of @workgroup_size[32, 1, 1]
use half::f16;
use wgsl_dsl::kernel::LoopRange;
use wgsl_dsl::prelude::*;

/// Inputs: in_f32 = [3.0, 7.75, 2.0, 7.8125, 4.0, 6.0625, 0.5, 0.0, -7.25, -2.625, 2.9375, -4.1875, -0.5, -5.8125, 3.9375, -3.9375, -0.0, -3.75, 2.625, -1.9375, 5.875, -6.9375, 1.3125, -1.0, 7.125, -0.5, 1.125, -4.875, 1.0, 5.0625, -1.0, -8.0, 3.0, 7.6875, -2.8125];
/// in_i32 = [2, 2147483647, 1790384920, 2144079083, 19870465, -433371566, 14, 31, 32, -174587235, 32, -2080261149, 2147483647, 255, 1515954167, -2147483648, 1997297606, 8, 0, -1701166064, -1895407640, 1612330652, 2147483647, 1520679618, 32, -948793927, 13, 8, 2047662004, -292040081, -2121988478, 11, 1, -656853338, -1586402790, -1034728502, 630215250, 17023478, -1];
/// in_u32 = [2784252500, 2, 931919561, 1672036072, 1292926191, 1, 9, 1202651904, 12, 3600473017, 3443543710, 1343026541, 10, 1355065914, 2764918110, 12, 6, 2147483648, 4, 1, 9, 1, 2, 2170301905, 709319074, 4101079820, 0, 1247536804, 473458783, 3793550423, 2147483647, 1, 4071886362, 13, 3965017887];
/// in_f16 (bits) = [16896, 47104, 51200, 51200, 11264, 16384, 50848, 16384, 16384, 48128, 15232, 50144, 49216, 0, 17984, 14336, 16384, 17584, 17920, 49760, 50640, 50960, 14336, 17664, 49408, 47104, 17648, 16896, 15424, 17184, 17600, 50720, 18432, 0, 32768, 16384, 17472]; param = 456782174;
#[allow(unused_variables, clippy::all)]
pub fn kernel() -> KernelBuilder {
    let mut k = KernelBuilder::new("fuzz_11", [32, 1, 1]);
    let in_f32 = k.storage::<RuntimeArray<f32>, ReadOnly>("in_f32");
    let in_i32 = k.storage::<RuntimeArray<i32>, ReadOnly>("in_i32");
    let in_u32 = k.storage::<RuntimeArray<u32>, ReadOnly>("in_u32");
    let in_f16 = k.storage::<RuntimeArray<f16>, ReadOnly>("in_f16");
    let param = k.uniform::<u32>("param");
    let out_f32 = k.storage::<RuntimeArray<f32>, ReadWrite>("out_f32");
    let out_i32 = k.storage::<RuntimeArray<i32>, ReadWrite>("out_i32");
    let out_u32 = k.storage::<RuntimeArray<u32>, ReadWrite>("out_u32");
    let atom = k.storage::<RuntimeArray<Atomic<u32>>, ReadWrite>("atom");
    let wg = k.workgroup_array::<u32>("wg", 32);
    let (wid, nwg) = (workgroup_id(), num_workgroups());
    let gi = k.let_("gi", ((wid.z() * nwg.y() + wid.y()) * nwg.x() + wid.x()) * 32u32 + local_invocation_index());
    let x1 = k.var_zeroed::<Vec4<f32>>("x1");
    let v2 = k.let_("v2", vec2(in_u32.at(lit(2u32) % in_u32.len()).load(), in_u32.at(lit(20u32) % in_u32.len()).load()));
    k.store(&out_u32.at(gi.clone() * 7u32 + 0u32), v2.clone().x());
    k.store(&out_u32.at(gi.clone() * 7u32 + 1u32), v2.clone().y());
    let v3 = k.let_("v3", ldexp(select(clamp(in_f16.at(lit(23u32) % in_f16.len()).load(), lit(f16::from_bits(0xe3d0)), lit(f16::from_bits(0x63d0))).to_f32(), min(in_f32.at(lit(33u32) % in_f32.len()).load(), in_f32.at(lit(30u32) % in_f32.len()).load()), in_f32.at(lit(3u32) % in_f32.len()).load().to_bool()), clamp(array([(in_i32.at(lit(27u32) % in_i32.len()).load() / in_i32.at(lit(25u32) % in_i32.len()).load()), in_i32.at(lit(35u32) % in_i32.len()).load(), select(in_i32.at(param.load() % in_i32.len()).load(), in_i32.at(lit(31u32) % in_i32.len()).load(), in_u32.at(lit(28u32) % in_u32.len()).load().ne(lit(0u32))), select(lit(-2147483648i32), in_i32.at(lit(18u32) % in_i32.len()).load(), lit(false))]).index((in_u32.at(lit(21u32) % in_u32.len()).load() % lit(4u32))), lit(-4i32), lit(4i32))));
    k.workgroup_barrier();
    k.store(&out_f32.at(gi.clone() * 1u32 + 0u32), quantize_to_f16(clamp(asinh(abs((vec4(v3.clone(), v3.clone(), in_f32.at(lit(28u32) % in_f32.len()).load(), in_f32.at(lit(0u32) % in_f32.len()).load()).index((in_u32.at(lit(10u32) % in_u32.len()).load() % lit(4u32))) * (in_f32.at(lit(3u32) % in_f32.len()).load() + in_f32.at(lit(23u32) % in_f32.len()).load())))), lit(-1000.0f32), lit(1000.0f32))));
    k.store(&out_u32.at(gi.clone() * 7u32 + 2u32), (in_u32.at(lit(32u32) % in_u32.len()).load() & (lit(8u32) + in_u32.at(lit(5u32) % in_u32.len()).load())));
    k.workgroup_barrier();
    let v4 = k.let_("v4", mix(in_f16.at(global_invocation_id().x() % in_f16.len()).load(), cos(clamp(clamp(in_i32.at(lit(15u32) % in_i32.len()).load(), lit(-1000i32), lit(1000i32)).to_f16(), lit(f16::from_bits(0xc200)), lit(f16::from_bits(0x4200)))), saturate((in_f16.at(lit(2u32) % in_f16.len()).load() - select(in_f16.at(lit(0u32) % in_f16.len()).load(), in_f16.at(lit(17u32) % in_f16.len()).load(), in_u32.at(lit(34u32) % in_u32.len()).load().ne(lit(0u32)))))));
    let v5 = k.let_("v5", vec4(in_i32.at(lit(14u32) % in_i32.len()).load().lt(in_i32.at(lit(26u32) % in_i32.len()).load()), lit(31u32).to_bool(), lit(true), square(in_f32.at(lit(5u32) % in_f32.len()).load()).lt(array([v3.clone(), in_f32.at(in_u32.at(lit(19u32) % in_u32.len()).load() % in_f32.len()).load(), v3.clone(), in_f32.at(global_invocation_id().x() % in_f32.len()).load()]).index((in_u32.at(lit(32u32) % in_u32.len()).load() % lit(4u32)))).eq(in_f16.at(in_u32.at(lit(31u32) % in_u32.len()).load() % in_f16.len()).load().ne(in_f16.at(in_u32.at(lit(26u32) % in_u32.len()).load() % in_f16.len()).load()).not())));
    k.store(&out_u32.at(gi.clone() * 7u32 + 3u32), select(0u32, 1u32, v5.clone().x()));
    k.store(&out_u32.at(gi.clone() * 7u32 + 4u32), select(0u32, 1u32, v5.clone().y()));
    k.store(&out_u32.at(gi.clone() * 7u32 + 5u32), select(0u32, 1u32, v5.clone().z()));
    k.store(&out_u32.at(gi.clone() * 7u32 + 6u32), select(0u32, 1u32, v5.clone().w()));
    k.store(&out_i32.at(gi.clone() * 2u32 + 0u32), (array([sign(frexp(in_f32.at(lit(28u32) % in_f32.len()).load()).exp()), (dot4_i8_packed(in_u32.at(local_invocation_index() % in_u32.len()).load(), in_u32.at(lit(21u32) % in_u32.len()).load()) * lit(0i32)), in_i32.at(lit(32u32) % in_i32.len()).load(), clamp(in_i32.at(lit(35u32) % in_i32.len()).load(), lit(2i32), lit(6i32))]).index((clamp(in_u32.at(lit(10u32) % in_u32.len()).load(), lit(5u32), lit(13u32)) % lit(4u32))) * in_i32.at(lit(33u32) % in_i32.len()).load()));
    k.store(&out_i32.at(gi.clone() * 2u32 + 1u32), first_trailing_bit(in_i32.at(lit(26u32) % in_i32.len()).load()));
    k.if_else(select(select(lit(true), lit(false), in_u32.at(lit(7u32) % in_u32.len()).load().ne(lit(0u32))), lit(false).ne(lit(true)), vec2(in_u32.at(lit(27u32) % in_u32.len()).load().ne(lit(0u32)), lit(false)).all()), |k| {
        let v6 = k.let_("v6", (extract_bits(in_i32.at(lit(24u32) % in_i32.len()).load(), in_u32.at(lit(1u32) % in_u32.len()).load(), in_u32.at(lit(9u32) % in_u32.len()).load()) % clamp(in_i32.at(lit(10u32) % in_i32.len()).load(), lit(9i32), lit(10i32))));
    }, |k| {
        let v7 = k.let_("v7", Exp::<Vec4<_>>::splat(in_i32.at(lit(17u32) % in_i32.len()).load()));
        let (v8, _) = k.atomic_compare_exchange_weak(&atom.at(gi.clone() * 4u32 + 3u32), (vec3(lit(3u32), in_u32.at(lit(5u32) % in_u32.len()).load(), in_u32.at(global_invocation_id().x() % in_u32.len()).load()).index((in_u32.at(lit(23u32) % in_u32.len()).load() % lit(3u32))) - dot(Exp::<Vec2<_>>::splat(in_u32.at(lit(33u32) % in_u32.len()).load()), vec2(in_u32.at(lit(9u32) % in_u32.len()).load(), in_u32.at(lit(5u32) % in_u32.len()).load()))), (in_u32.at(lit(30u32) % in_u32.len()).load() & in_u32.at(lit(8u32) % in_u32.len()).load()));
    });
    k.if_(select(in_u32.at(lit(2u32) % in_u32.len()).load().ne(lit(0u32)), in_u32.at(lit(27u32) % in_u32.len()).load().ne(in_u32.at(lit(29u32) % in_u32.len()).load()), select(lit(false), in_u32.at(lit(11u32) % in_u32.len()).load().ne(lit(0u32)), lit(true))), |k| {
        let v9 = k.let_("v9", in_u32.at(lit(20u32) % in_u32.len()).load());
        let c10 = k.var::<i32>("c10", lit(-3i32));
        k.while_(c10.load().lt(lit(1i32)), |k| {
            let v10 = k.let_("i10", c10.load());
            k.store(&c10, v10.clone() + lit(1i32));
            k.store(&wg.at(local_invocation_index()), lit(2147483648u32));
        });
    });
    k
}

