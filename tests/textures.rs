//! Textures (WGSL spec §6.5, §17.7): the texture kernel on the GPU against a CPU loop, on a
//! 7 x 5 texture (partial 4 x 4 workgroups) with the outputs poisoned first; the dispatch
//! checks of texture bindings; the CPU interpreter's refusal of textures; textures in
//! `#[kernel]` and `#[derive(Bindings)]` (issue 26).

use wgsl_dsl::interp::{InterpError, InterpOptions, Interpreter};
use wgsl_dsl::prelude::*;
use wgsl_dsl::runtime::DeviceLimit;
use wgsl_dsl::runtime::KernelDef;
use wgsl_dsl::runtime::{
    DeviceError, DispatchError, DispatchErrorKind, Gpu, GpuBuffer, GpuTexture, Kernel,
};
use wgsl_dsl::types::{R32Float, R32Uint, Rgba8Unorm, Rgba32Float};
use wgsl_dsl_harness::SeedableRng;
use wgsl_dsl_workspace_tests::textures::{
    Tint, TintArgs, TintBuilderArgs, WG, texture_ops, tint, tint_builder,
};
use wgsl_dsl_workspace_tests::{Rng, gpu, random_f32, random_u32};

const W: u32 = 7;
const H: u32 = 5;

/// The texel the outputs are filled with before a dispatch: no result equals it.
const POISON: [f32; 4] = [f32::NAN, -7.5e30, f32::INFINITY, 1.0e-30];

/// `n` random `Rgba8Unorm` texels.
fn random_rgba8(rng: &mut Rng, n: usize) -> Vec<[u8; 4]> {
    random_u32(rng, 4 * n, 256)
        .chunks(4)
        .map(|c| [c[0] as u8, c[1] as u8, c[2] as u8, c[3] as u8])
        .collect()
}

/// The shared GPU and `texture_ops` compiled for it, or `None` when GPU tests are off.
fn gpu_and_kernel() -> Option<(&'static Gpu, Kernel)> {
    let gpu = gpu()?;
    let kernel = gpu
        .compile(&texture_ops().build_for(&gpu.target_limits()).unwrap())
        .unwrap();
    Some((gpu, kernel))
}

#[test]
fn texture_loads_stores_and_dimensions_match_a_cpu_loop() {
    let Some((gpu, kernel)) = gpu_and_kernel() else {
        return;
    };
    let n = (W * H) as usize;
    let mut rng = Rng::seed_from_u64(13);
    let src = random_rgba8(&mut rng, n);
    let gain = random_f32(&mut rng, n, -2.0, 2.0);
    let counts = random_u32(&mut rng, n, 1 << 20);
    let src_t = GpuTexture::<Rgba8Unorm>::from_texels(gpu, [W, H], &src).unwrap();
    let gain_t = GpuTexture::<R32Float>::from_texels(gpu, [W, H], &gain).unwrap();
    let counts_t = GpuTexture::<R32Uint>::from_texels(gpu, [W, H], &counts).unwrap();
    let out_t = GpuTexture::<Rgba32Float>::from_texels(gpu, [W, H], &vec![POISON; n]).unwrap();
    let dims = GpuBuffer::from_slice(gpu, &[u32::MAX; 6]).unwrap();
    let groups = [W.div_ceil(WG[0]), H.div_ceil(WG[1]), 1];
    gpu.dispatch(
        &kernel,
        &[&src_t, &gain_t, &counts_t, &out_t, &dims],
        groups,
    )
    .unwrap();

    let out = out_t.read(gpu).unwrap();
    let counts_after = counts_t.read(gpu).unwrap();
    for y in 0..H {
        for x in 0..W {
            let i = (y * W + x) as usize;
            for c in 0..4 {
                // rgba8unorm reads byte / 255 (WGSL spec §6.5.6), then one f32 product.
                let want = (f32::from(src[i][c]) / 255.0) * gain[i];
                let got = out[i][c];
                assert!(
                    (got - want).abs() <= 1e-6 * want.abs().max(1.0),
                    "out[{x}, {y}][{c}] = {got}, expected {want}"
                );
            }
            let want = counts[i].wrapping_mul(3).wrapping_add(x + y);
            assert_eq!(counts_after[i], want, "counts[{x}, {y}]");
        }
    }
    assert_eq!(dims.read(gpu).unwrap(), vec![W, H, W, H, W, H]);
}

#[test]
fn textures_stay_on_their_gpu() {
    let Some((gpu, kernel)) = gpu_and_kernel() else {
        return;
    };
    let other = Gpu::new().unwrap();
    let src_t = GpuTexture::<Rgba8Unorm>::zeroed(gpu, [W, H]).unwrap();
    let gain_other = GpuTexture::<R32Float>::zeroed(&other, [W, H]).unwrap();
    let counts_t = GpuTexture::<R32Uint>::zeroed(gpu, [W, H]).unwrap();
    let out_t = GpuTexture::<Rgba32Float>::zeroed(gpu, [W, H]).unwrap();
    let dims = GpuBuffer::<u32>::zeroed(gpu, 6).unwrap();
    let err = gpu
        .dispatch(
            &kernel,
            &[&src_t, &gain_other, &counts_t, &out_t, &dims],
            [1, 1, 1],
        )
        .unwrap_err();
    assert_eq!(
        err,
        DispatchError::from(DispatchErrorKind::WrongDevice("a texture argument"))
    );
    assert!(err.to_string().contains("a texture argument"), "{err}");
    assert_eq!(gain_other.read(gpu).unwrap_err(), DeviceError::WrongDevice);
}

#[test]
fn texture_bindings_are_checked_before_dispatch() {
    let Some((gpu, kernel)) = gpu_and_kernel() else {
        return;
    };
    let rgba8 = GpuTexture::<Rgba8Unorm>::zeroed(gpu, [W, H]).unwrap();
    let r32f = GpuTexture::<R32Float>::zeroed(gpu, [W, H]).unwrap();
    let r32u = GpuTexture::<R32Uint>::zeroed(gpu, [W, H]).unwrap();
    let rgba32f = GpuTexture::<Rgba32Float>::zeroed(gpu, [W, H]).unwrap();
    let dims = GpuBuffer::<u32>::zeroed(gpu, 6).unwrap();
    let floats = GpuBuffer::<f32>::zeroed(gpu, 6).unwrap();
    let resource = |r: Result<(), DispatchError>, index: u32, needle: &str| match r {
        Err(DispatchError {
            kind: DispatchErrorKind::Resource {
                index: i, found, ..
            },
            ..
        }) if i == index => assert!(found.contains(needle), "{found}"),
        other => panic!("expected a Resource error at binding {index}, got {other:?}"),
    };
    // A storage texture takes its own format only.
    resource(
        gpu.check(&kernel, &[&rgba8, &r32u, &r32u, &rgba32f, &dims]),
        1,
        "r32uint",
    );
    // A texture_2d<f32> takes any format of f32 channels, not u32 ones.
    gpu.check(&kernel, &[&r32f, &r32f, &r32u, &rgba32f, &dims])
        .unwrap();
    resource(
        gpu.check(&kernel, &[&r32u, &r32f, &r32u, &rgba32f, &dims]),
        0,
        "r32uint",
    );
    // A buffer for a texture, a texture for a buffer.
    resource(
        gpu.check(&kernel, &[&rgba8, &r32f, &r32u, &floats, &dims]),
        3,
        "a buffer of f32",
    );
    resource(
        gpu.check(&kernel, &[&rgba8, &r32f, &r32u, &rgba32f, &r32u]),
        4,
        "texture of r32uint",
    );
    // A texture written by the kernel bound twice.
    match gpu.check(&kernel, &[&rgba32f, &r32f, &r32u, &rgba32f, &dims]) {
        Err(DispatchError {
            kind:
                DispatchErrorKind::Aliased {
                    first: 0,
                    second: 3,
                    ..
                },
            ..
        }) => {}
        other => panic!("expected Aliased, got {other:?}"),
    }
    // Texel counts and sizes.
    assert!(matches!(
        GpuTexture::<R32Float>::from_texels(gpu, [W, H], &[0.0; 3]),
        Err(DispatchError {
            kind: DispatchErrorKind::Length {
                expected: 35,
                found: 3,
                ..
            },
            ..
        })
    ));
    assert!(matches!(
        GpuTexture::<R32Float>::zeroed(gpu, [0, H]),
        Err(DispatchError {
            kind: DispatchErrorKind::Limit { value: 0, .. },
            ..
        })
    ));
}

/// The interpreter refuses a kernel with textures, naming the first texture binding, its
/// type and where it was declared, for builder kernels and `#[kernel]`s alike.
#[test]
fn the_interpreter_refuses_textures_naming_the_binding() {
    for (shader, line) in [
        (
            texture_ops().build().unwrap(),
            "let src = k.texture::<f32>(\"src\");",
        ),
        (tint().build().unwrap(), "#[texture] src: Texture2d<f32>,"),
    ] {
        let source = include_str!("../crates/wgsl-dsl-harness/src/textures.rs");
        let line = source.lines().position(|l| l.trim() == line).unwrap() as u32 + 1;
        let err = Interpreter::new().compile(&shader).unwrap_err();
        match &err {
            InterpError::UnsupportedTexture {
                kernel,
                name,
                binding: 0,
                ty,
                site: Some(site),
            } => {
                assert_eq!(kernel, &shader.signature.name);
                assert_eq!((name.as_str(), ty.as_str()), ("src", "texture_2d<f32>"));
                assert!(site.file.ends_with("textures.rs"), "{site}");
                assert_eq!(site.line, line, "{err}");
            }
            other => panic!("expected UnsupportedTexture, got {other:?}"),
        }
        assert!(
            err.to_string().contains(
                "the interpreter does not execute textures: binding 0 `src` is a texture_2d<f32>"
            ),
            "{err}"
        );
    }
    // The typed layer too.
    assert!(matches!(
        Interpreter::new().compile_typed(Tint),
        Err(InterpError::UnsupportedTexture { .. })
    ));
}

/// `#[kernel]` with a sampled texture, a read-only and a write-only storage texture and a
/// uniform, dispatched through its typed interface on the GPU, against a CPU loop; 7 x 5
/// texels (partial 4 x 4 workgroups), the output poisoned first.
#[test]
fn a_kernel_with_textures_matches_a_cpu_loop() {
    let Some(gpu) = gpu() else {
        return;
    };
    let n = (W * H) as usize;
    let mut rng = Rng::seed_from_u64(26);
    let src = random_rgba8(&mut rng, n);
    let weight = random_f32(&mut rng, n, -3.0, 3.0);
    let gain = -1.75f32;
    let src_t = GpuTexture::<Rgba8Unorm>::from_texels(gpu, [W, H], &src).unwrap();
    let weight_t = GpuTexture::<R32Float>::from_texels(gpu, [W, H], &weight).unwrap();
    let mut out_t = GpuTexture::<Rgba32Float>::from_texels(gpu, [W, H], &vec![POISON; n]).unwrap();
    let gain_b = GpuBuffer::from_value(gpu, gain).unwrap();
    let check = |out: Vec<[f32; 4]>| {
        for y in 0..H {
            for x in 0..W {
                let i = (y * W + x) as usize;
                for c in 0..4 {
                    // rgba8unorm reads byte / 255 (WGSL spec §6.5.6); then `* gain + w`.
                    let want = (f32::from(src[i][c]) / 255.0) * gain + weight[i];
                    let got = out[i][c];
                    assert!(
                        (got - want).abs() <= 1e-6 * want.abs().max(1.0),
                        "out[{x}, {y}][{c}] = {got}, expected {want}"
                    );
                }
            }
        }
    };
    let kernel = gpu.compile_typed(Tint).unwrap();
    kernel
        .dispatch(
            gpu,
            TintArgs {
                src: &src_t,
                weight: &weight_t,
                out: &mut out_t,
                gain: &gain_b,
            },
            [W, H, 1],
        )
        .unwrap();
    check(out_t.read(gpu).unwrap());

    // The same kernel written with the builder and `#[derive(Bindings)]`, through its own
    // argument struct.
    out_t.write(gpu, &vec![POISON; n]).unwrap();
    let kernel = gpu.compile_typed(TintBuilderDef).unwrap();
    kernel
        .dispatch(
            gpu,
            TintBuilderArgs {
                src: &src_t,
                weight: &weight_t,
                out: &mut out_t,
                gain: &gain_b,
            },
            [W, H],
        )
        .unwrap();
    check(out_t.read(gpu).unwrap());
}

/// The definition of [`tint_builder`] (a builder kernel implements `KernelDef` by hand).
struct TintBuilderDef;

impl KernelDef for TintBuilderDef {
    type Args<'a> = TintBuilderArgs<'a>;
    type Size = [u32; 2];
    fn build(&self) -> KernelBuilder {
        tint_builder()
    }
    fn workgroups(&self, [w, h]: [u32; 2]) -> [u32; 3] {
        [w.div_ceil(4), h.div_ceil(4), 1]
    }
}

/// `#[kernel]`'s `#[texture]` parameters and `#[derive(Bindings)]`'s `#[texture]` fields
/// declare the same bindings, and the two kernels are the same WGSL.
#[test]
fn kernel_and_derive_bindings_declare_the_same_textures() {
    let a = tint().build().unwrap();
    let b = tint_builder().build().unwrap();
    assert_eq!(a.wgsl, b.wgsl);
    let kinds = |s: &wgsl_dsl::Shader| -> Vec<(String, String)> {
        s.signature
            .bindings
            .iter()
            .map(|b| (b.name.clone(), b.ty.wgsl_name()))
            .collect()
    };
    assert_eq!(kinds(&a), kinds(&b));
    assert_eq!(
        kinds(&a),
        [
            ("src", "texture_2d<f32>"),
            ("weight", "texture_storage_2d<r32float, read>"),
            ("out", "texture_storage_2d<rgba32float, write>"),
            ("gain", "f32"),
        ]
        .map(|(n, t)| (n.to_string(), t.to_string()))
    );
}

/// Textures count against the texture limits, not the storage buffer ones: the texture kernel
/// (three storage textures, one sampled, one storage buffer) passes a limit of one storage
/// buffer, and five storage textures exceed WebGPU's default of four.
#[test]
fn textures_count_against_the_texture_limits() {
    let shader = texture_ops().build().unwrap();
    let mut options = InterpOptions::default();
    options.limits.max_storage_buffers_per_shader_stage = 1;
    options.limits.max_storage_textures_per_shader_stage = 3;
    options.limits.max_sampled_textures_per_shader_stage = 1;
    match Interpreter::with_options(options.clone()).compile(&shader) {
        Err(InterpError::UnsupportedTexture { .. }) => {}
        other => panic!("expected UnsupportedTexture, got {:?}", other.map(|_| ())),
    }
    for (storage, sampled, limit, used) in [
        (2, 1, DeviceLimit::StorageTexturesPerShaderStage, 3),
        (3, 0, DeviceLimit::SampledTexturesPerShaderStage, 1),
    ] {
        let mut options = options.clone();
        options.limits.max_storage_textures_per_shader_stage = storage;
        options.limits.max_sampled_textures_per_shader_stage = sampled;
        match Interpreter::with_options(options).compile(&shader) {
            Err(InterpError::Dispatch(DispatchError {
                kind:
                    DispatchErrorKind::ExceedsDevice {
                        limit: l, needed, ..
                    },
                ..
            })) if l == limit => assert_eq!(needed, used),
            other => panic!(
                "expected ExceedsDevice for {limit}, got {:?}",
                other.map(|_| ())
            ),
        }
    }
    let mut k = KernelBuilder::new("five", [1, 1, 1]);
    let ts: Vec<_> = (0..5)
        .map(|i| k.storage_texture::<R32Float, WriteOnly>(&format!("t{i}")))
        .collect();
    for t in &ts {
        k.texture_store(
            t,
            vec2(lit(0u32), lit(0u32)),
            vec4(lit(1.0f32), lit(0.0f32), lit(0.0f32), lit(1.0f32)),
        );
    }
    match Interpreter::new().compile(&k.build().unwrap()) {
        Err(InterpError::Dispatch(DispatchError {
            kind:
                DispatchErrorKind::ExceedsDevice {
                    limit: DeviceLimit::StorageTexturesPerShaderStage,
                    needed: 5,
                    device: 4,
                    ..
                },
            ..
        })) => {}
        other => panic!("expected ExceedsDevice, got {:?}", other.map(|_| ())),
    }
}
