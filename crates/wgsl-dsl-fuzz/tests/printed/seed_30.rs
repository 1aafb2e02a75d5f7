// seed 30: dispatch [1, 2, 2] workgroups of @workgroup_size[3, 3, 3]
use half::f16;
use wgsl_dsl::kernel::LoopRange;
use wgsl_dsl::prelude::*;

/// Inputs: in_f32 = [1.125, 0.5, 1.0, 4.75, 2.125, 7.5625, 3.0625, -0.5, 7.6875, 2.625, -1.0, 3.0, -4.3125, -8.0, 1.0, -0.0, 7.875, 2.4375, 7.0, 3.0, 1.875, -4.0625, 6.8125];
/// in_i32 = [368471519, 1674195820, 2141954170, -2080428155, 32, 9, -1570738017, 256, 1274340150];
/// in_u32 = [2535101324, 7, 0, 0, 31, 2, 2183290697, 2445286328, 10, 15, 3449589425, 256, 3229201587];
/// in_f16 (bits) = [16384, 18224, 18432, 46336, 50864, 18112, 17904, 48128, 16000, 17824, 16128, 14720, 50352, 17792, 50880, 17776, 18336, 49504, 18080, 51040, 32768, 50688, 32768, 49472, 17184, 49376, 18112, 15360, 16992, 16608, 32768, 17152, 15360, 11264, 50240]; param = 3;
#[allow(unused_variables, clippy::all)]
pub fn kernel() -> KernelBuilder {
    let mut k = KernelBuilder::new("fuzz_30", [3, 3, 3]);
    let in_f32 = k.storage::<RuntimeArray<f32>, ReadOnly>("in_f32");
    let in_i32 = k.storage::<RuntimeArray<i32>, ReadOnly>("in_i32");
    let in_u32 = k.storage::<RuntimeArray<u32>, ReadOnly>("in_u32");
    let in_f16 = k.storage::<RuntimeArray<f16>, ReadOnly>("in_f16");
    let out_f32 = k.storage::<RuntimeArray<f32>, ReadWrite>("out_f32");
    let out_u32 = k.storage::<RuntimeArray<u32>, ReadWrite>("out_u32");
    let out_f16 = k.storage::<RuntimeArray<f16>, ReadWrite>("out_f16");
    let atom = k.storage::<RuntimeArray<Atomic<u32>>, ReadWrite>("atom");
    let wg_atomic = k.workgroup::<Atomic<u32>>("wg_atomic");
    let f0 = k.function::<(Vec3<i32>, Vec3<i32>, Vec3<i32>,), Vec3<i32>>("f0", ["a", "b", "c"], |k, (v1, v2, v3,)| {
        array([Exp::<Vec4<_>>::splat(lit(31i32)).xyz(), ((v1.clone() << Exp::<Vec3<_>>::splat(in_u32.at(lit(6u32) % in_u32.len()).load())) & max(v1.clone(), vec3(in_i32.at(in_u32.at(lit(1u32) % in_u32.len()).load() % in_i32.len()).load(), lit(1i32), in_i32.at(lit(2u32) % in_i32.len()).load()))), v1.clone(), vec3(in_i32.at(lit(0u32) % in_i32.len()).load(), in_i32.at(lit(3u32) % in_i32.len()).load(), in_i32.at(lit(5u32) % in_i32.len()).load())]).index((pack4x_i8_clamp(Exp::<Vec4<_>>::splat(in_i32.at(lit(1u32) % in_i32.len()).load())) % lit(4u32)))
    });
    let (wid, nwg) = (workgroup_id(), num_workgroups());
    let gi = k.let_("gi", ((wid.z() * nwg.y() + wid.y()) * nwg.x() + wid.x()) * 27u32 + local_invocation_index());
    k.if_(vec4(lit(true), lit(true), lit(false), lit(false)).all().and(in_u32.at(lit(1u32) % in_u32.len()).load().ne(lit(0u32))), |k| {
        k.store(&out_u32.at(gi.clone() * 2u32 + 0u32), in_i32.at(lit(6u32) % in_i32.len()).load().bitcast::<u32>());
    });
    let c4 = k.var::<u32>("c4", lit(2u32));
    k.loop_(|k| {
        k.if_(c4.load().ge(lit(4u32)), |k| k.break_());
        let v4 = k.let_("i4", c4.load());
        k.store(&c4, v4.clone() + lit(1u32));
        k.store(&out_f32.at(gi.clone() * 7u32 + 0u32), ldexp(step(((in_f32.at(global_invocation_id().x() % in_f32.len()).load() * in_f32.at(lit(22u32) % in_f32.len()).load()) + (in_f32.at(lit(17u32) % in_f32.len()).load() + in_f32.at(lit(18u32) % in_f32.len()).load())), (square(v4.clone()) & lit(1023u32)).to_f32()), clamp((lit(-8i32) * (abs(Exp::<Vec2<_>>::splat(in_f32.at(lit(1u32) % in_f32.len()).load())) + Exp::<Vec2<_>>::splat(lit(1.0f32))).bitcast::<Vec2<i32>>().x()), lit(-4i32), lit(4i32))));
        let v5 = k.let_("v5", Exp::<Vec2<_>>::splat(in_f16.at(lit(1u32) % in_f16.len()).load()));
        k.store(&out_f16.at(gi.clone() * 6u32 + 0u32), v5.clone().x());
        k.store(&out_f16.at(gi.clone() * 6u32 + 1u32), v5.clone().y());
    });
    k.store(&out_u32.at(gi.clone() * 2u32 + 1u32), select(0u32, 1u32, lit(true)));
    let v6 = k.let_("v6", Exp::<Vec4<_>>::splat(lit(f16::from_bits(0x3800))));
    let _ = k.atomic_add(&wg_atomic, (!(in_u32.at(lit(12u32) % in_u32.len()).load() | in_u32.at(lit(4u32) % in_u32.len()).load())));
    let v7 = k.let_("v7", count_one_bits(vec3(in_u32.at(lit(5u32) % in_u32.len()).load(), in_u32.at(lit(1u32) % in_u32.len()).load(), in_u32.at(lit(11u32) % in_u32.len()).load()).index((lit(2147483648u32) % lit(3u32)))));
    let v8 = k.let_("v8", v6.clone());
    k.store(&out_f16.at(gi.clone() * 6u32 + 2u32), v8.clone().x());
    k.store(&out_f16.at(gi.clone() * 6u32 + 3u32), v8.clone().y());
    k.store(&out_f16.at(gi.clone() * 6u32 + 4u32), v8.clone().z());
    k.store(&out_f16.at(gi.clone() * 6u32 + 5u32), v8.clone().w());
    k.store(&out_f32.at(gi.clone() * 7u32 + 1u32), max(select(acosh((abs(lit(7.6875f32)) + lit(1.5f32))), quantize_to_f16(clamp(lit(1.125f32), lit(-1000.0f32), lit(1000.0f32))), lit(false).and(lit(false))), lit(2.4375f32)));
    k.store(&out_f32.at(gi.clone() * 7u32 + 2u32), max(select(acosh((abs(in_f32.at(lit(8u32) % in_f32.len()).load()) + lit(1.5f32))), quantize_to_f16(clamp(in_f32.at(lit(0u32) % in_f32.len()).load(), lit(-1000.0f32), lit(1000.0f32))), lit(false).and(lit(false))), in_f32.at(lit(17u32) % in_f32.len()).load()));
    let v9 = k.atomic_min(&atom.at(gi.clone() * 1u32 + 0u32), dot(vec4(v7.clone(), v7.clone(), in_u32.at(lit(11u32) % in_u32.len()).load(), in_u32.at(lit(6u32) % in_u32.len()).load()), (abs(Exp::<Vec4<_>>::splat(in_f32.at(lit(18u32) % in_f32.len()).load())) + Exp::<Vec4<_>>::splat(lit(1.0f32))).bitcast::<Vec4<u32>>()));
    let v10 = k.let_("v10", (square(saturate(unpack4x8snorm(in_u32.at(lit(10u32) % in_u32.len()).load()))) - log((abs(((Exp::<Vec4<_>>::splat(v7.clone()) & Exp::<Vec4<_>>::splat(lit(8388607u32))) | Exp::<Vec4<_>>::splat(lit(1065353216u32))).bitcast::<Vec4<f32>>()) + Exp::<Vec4<_>>::splat(lit(0.5f32))))));
    k.store(&out_f32.at(gi.clone() * 7u32 + 3u32), v10.clone().x());
    k.store(&out_f32.at(gi.clone() * 7u32 + 4u32), v10.clone().y());
    k.store(&out_f32.at(gi.clone() * 7u32 + 5u32), v10.clone().z());
    k.store(&out_f32.at(gi.clone() * 7u32 + 6u32), v10.clone().w());
    k
}

