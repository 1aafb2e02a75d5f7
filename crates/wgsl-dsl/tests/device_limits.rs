//! A kernel is checked against the device it runs on (issue 12 §2): `Gpu::compile`,
//! `Gpu::compile_typed` and the interpreter's `compile` refuse a kernel that needs more of a
//! device limit than the device has, with one error naming the limit, the kernel's need and
//! the device's value (the interpreter takes the workgroup's limits from the target the
//! kernel was built for, issue 21). Each limit has a test on lavapipe: a kernel built for larger limits
//! than the device's (`build_for` a bigger `TargetLimits`, or bindings a device opened with
//! WebGPU's default limits does not have), and, where cheap, one exactly at the limit that
//! compiles.

use std::sync::OnceLock;

use naga::valid::Capabilities;
use wgsl_dsl::interp::{InterpError, InterpOptions, Interpreter};
use wgsl_dsl::prelude::*;
use wgsl_dsl::runtime::{
    DeviceLimit, DispatchError, DispatchErrorKind, Gpu, GpuBuffer, GpuOptions, Vec4View, wgpu,
};
use wgsl_dsl::{Shader, TargetLimits};

mod common;
use common::gpu;

/// The same adapter opened with `limits` (lower than its own) and the features the runtime
/// asks for.
fn gpu_with(limits: wgpu::Limits) -> Gpu {
    Gpu::with_options(&GpuOptions {
        limits: Some(limits),
        ..GpuOptions::from_env()
    })
    .expect("the adapter opens a device with limits below its own")
}

/// The adapter's device opened with WebGPU's default limits (8 storage buffers per stage,
/// 12 uniform buffers, 16 KiB of workgroup memory, 256 invocations per workgroup, ...).
fn webgpu_default() -> &'static Gpu {
    static GPU: OnceLock<Gpu> = OnceLock::new();
    GPU.get_or_init(|| gpu_with(wgpu::Limits::default()))
}

/// Limits far beyond any device's, to build kernels that only the device check refuses.
fn unbounded() -> TargetLimits {
    TargetLimits {
        max_invocations_per_workgroup: u32::MAX,
        max_workgroup_size: [u32::MAX; 3],
        max_workgroup_storage_size: u32::MAX,
        ..TargetLimits::default()
    }
}

/// The error `compile` gives, which must be `ExceedsDevice` for `limit`, its message naming
/// the kernel, the limit, the need and the device's value; returns the need and the value.
fn exceeded<T>(result: Result<T, DispatchError>, limit: DeviceLimit) -> (u64, u64) {
    let Err(err) = result else {
        panic!("expected ExceedsDevice for {limit}, the kernel compiled");
    };
    let message = err.to_string();
    match err {
        DispatchError {
            kernel: Some(kernel),
            kind:
                DispatchErrorKind::ExceedsDevice {
                    limit: l,
                    needed,
                    device,
                    ..
                },
            ..
        } if l == limit => {
            for part in [
                kernel,
                limit.name().to_string(),
                needed.to_string(),
                device.to_string(),
            ] {
                assert!(message.contains(&part), "{part} not in: {message}");
            }
            (needed, device)
        }
        other => panic!("expected ExceedsDevice for {limit}, got {other:?}"),
    }
}

/// A kernel of `size` whose invocations each write their local index.
fn sized(size: [u32; 3]) -> Shader {
    let mut k = KernelBuilder::new("sized", size);
    let out = k.storage::<RuntimeArray<u32>, ReadWrite>("out");
    k.store(&out.at(local_invocation_index()), 1u32);
    k.build_for(&unbounded())
        .expect("builds for unbounded limits")
}

#[test]
fn workgroup_size_per_dimension_is_checked_against_the_device() {
    // WebGPU's defaults: 256 along x and y, 64 along z, 256 in all.
    let small = webgpu_default();
    let l = small.limits();
    let maxima = [
        l.max_compute_workgroup_size_x,
        l.max_compute_workgroup_size_y,
        l.max_compute_workgroup_size_z,
    ];
    assert_eq!(maxima, [256, 256, 64]);
    let limits = [
        DeviceLimit::WorkgroupSizeX,
        DeviceLimit::WorkgroupSizeY,
        DeviceLimit::WorkgroupSizeZ,
    ];
    for (d, (max, limit)) in maxima.into_iter().zip(limits).enumerate() {
        let mut size = [1; 3];
        size[d] = max + 1;
        let (needed, device) = exceeded(small.compile(&sized(size)), limit);
        assert_eq!((needed, device), (u64::from(max) + 1, u64::from(max)));
        size[d] = max;
        small
            .compile(&sized(size))
            .unwrap_or_else(|e| panic!("{size:?} is within the device's limits: {e}"));
    }
    // The adapter's own limits are larger than WebGPU's on lavapipe: the same kernel that
    // the small device refuses compiles there.
    let big = [257, 1, 1];
    if gpu().limits().max_compute_workgroup_size_x >= 257
        && gpu().limits().max_compute_invocations_per_workgroup >= 257
    {
        gpu()
            .compile(&sized(big))
            .expect("within the adapter's limits");
    }
}

#[test]
fn invocations_per_workgroup_are_checked_against_the_device() {
    // WebGPU's defaults: 256 invocations, 256 along x and y.
    let small = webgpu_default();
    assert_eq!(small.limits().max_compute_invocations_per_workgroup, 256);
    // Each dimension within its own limit, the product beyond the total.
    let (needed, device) = exceeded(
        small.compile(&sized([128, 3, 1])),
        DeviceLimit::InvocationsPerWorkgroup,
    );
    assert_eq!((needed, device), (384, 256));
    small
        .compile(&sized([128, 2, 1]))
        .expect("256 invocations fit");
    small
        .compile(&sized([16, 4, 4]))
        .expect("256 invocations fit");
}

/// A kernel declaring `N` `f32`s of workgroup memory, all used.
fn tile<const N: usize>() -> Shader {
    let mut k = KernelBuilder::new("tile", [1, 1, 1]);
    let tile = k.workgroup::<Array<f32, N>>("tile");
    let out = k.storage::<RuntimeArray<f32>, ReadWrite>("out");
    k.store(&tile.at(N as u32 - 1), 2.0f32);
    k.store(&out.at(0u32), tile.at(N as u32 - 1).load());
    k.build_for(&unbounded())
        .expect("builds for unbounded limits")
}

#[test]
fn workgroup_memory_is_checked_against_the_device() {
    // 64 KiB: more than lavapipe's (and WebGPU's 16 KiB default).
    let gpu = gpu();
    let device = gpu.limits().max_compute_workgroup_storage_size;
    assert!(
        device < 65536,
        "this test needs a device with less than 64 KiB: {device}"
    );
    let (needed, got) = exceeded(
        gpu.compile(&tile::<16384>()),
        DeviceLimit::WorkgroupStorageSize,
    );
    assert_eq!((needed, got), (65536, u64::from(device)));

    // At WebGPU's 16 KiB: exactly the limit compiles; 4 more bytes are 16 more (each
    // variable's size is rounded up to 16, as WebGPU counts it).
    let small = webgpu_default();
    small
        .compile(&tile::<4096>())
        .expect("16384 bytes fit 16 KiB");
    let (needed, got) = exceeded(
        small.compile(&tile::<4097>()),
        DeviceLimit::WorkgroupStorageSize,
    );
    assert_eq!((needed, got), (16400, 16384));
}

/// A kernel with `storage` read-write storage bindings and `uniform` uniform ones, all used.
fn bindings(storage: usize, uniform: usize) -> KernelBuilder {
    let mut k = KernelBuilder::new("many_bindings", [1, 1, 1]);
    let mut sum = lit(0.0f32);
    for u in 0..uniform {
        sum = sum + k.uniform::<f32>(&format!("u_{u}_value")).load();
    }
    for s in 0..storage {
        let b = k.storage::<RuntimeArray<f32>, ReadWrite>(&format!("s_{s}_values"));
        k.store(&b.at(0u32), sum.clone());
    }
    k
}

/// `bindings(fits)` compiles on `gpu`, and `bindings(over)` is refused for `limit`; returns
/// the need and the device's value of the refusal (see [`exceeded`]).
fn bindings_limit(
    gpu: &Gpu,
    fits: (usize, usize),
    over: (usize, usize),
    limit: DeviceLimit,
) -> (u64, u64) {
    gpu.compile(&bindings(fits.0, fits.1).build().expect("builds"))
        .unwrap_or_else(|e| panic!("{fits:?} (storage, uniform) bindings fit: {e}"));
    exceeded(
        gpu.compile(&bindings(over.0, over.1).build().expect("builds")),
        limit,
    )
}

#[test]
fn storage_buffers_per_stage_are_checked_against_the_device() {
    let small = webgpu_default();
    let max = small.limits().max_storage_buffers_per_shader_stage;
    assert_eq!(max, 8);
    let limit = DeviceLimit::StorageBuffersPerShaderStage;
    assert_eq!(bindings_limit(small, (8, 0), (9, 0), limit), (9, 8));
}

#[test]
fn uniform_buffers_per_stage_are_checked_against_the_device() {
    let small = webgpu_default();
    let max = small.limits().max_uniform_buffers_per_shader_stage;
    assert_eq!(max, 12);
    let limit = DeviceLimit::UniformBuffersPerShaderStage;
    assert_eq!(bindings_limit(small, (1, 12), (1, 13), limit), (13, 12));
}

#[test]
fn bindings_per_bind_group_are_checked_against_the_device() {
    let few = gpu_with(wgpu::Limits {
        max_bindings_per_bind_group: 4,
        ..wgpu::Limits::default()
    });
    let limit = DeviceLimit::BindingsPerBindGroup;
    assert_eq!(bindings_limit(&few, (4, 0), (5, 0), limit), (5, 4));
}

#[test]
fn storage_binding_size_is_checked_against_the_device() {
    let small = gpu_with(wgpu::Limits {
        max_storage_buffer_binding_size: 4096,
        ..wgpu::Limits::default()
    });
    let fixed = |k: &mut KernelBuilder| {
        let a = k.storage::<Array<f32, 1025>, ReadWrite>("big");
        k.store(&a.at(0u32), 1.0f32);
    };
    let mut k = KernelBuilder::new("fixed_storage", [1, 1, 1]);
    fixed(&mut k);
    let err = small.compile(&k.build().expect("builds"));
    assert!(
        matches!(&err, Err(DispatchError { kind: DispatchErrorKind::ExceedsDevice { binding: Some(b), .. }, .. }) if b.contains("big")),
        "{err:?}"
    );
    let (needed, device) = exceeded(err, DeviceLimit::StorageBufferBindingSize);
    assert_eq!((needed, device), (4100, 4096));
    // A runtime-sized array needs one element here; its length is checked when bound.
    small
        .compile(&bindings(1, 0).build().expect("builds"))
        .expect("a runtime-sized array fits");
}

/// A kernel reading a uniform `array<vec4<f32>, N>`.
fn uniform_table<const N: usize>() -> Shader {
    let mut k = KernelBuilder::new("big_uniform", [1, 1, 1]);
    let table = k.uniform::<Array<Vec4<f32>, N>>("table");
    let out = k.storage::<RuntimeArray<Vec4<f32>>, ReadWrite>("out");
    k.store(&out.at(0u32), table.at(N as u32 - 1).load());
    k.build().expect("builds")
}

#[test]
fn uniform_binding_size_is_checked_against_the_device() {
    // WebGPU's default: 64 KiB, 4096 vec4<f32>.
    let small = webgpu_default();
    assert_eq!(small.limits().max_uniform_buffer_binding_size, 65536);
    small
        .compile(&uniform_table::<4096>())
        .expect("64 KiB of uniform data fit");
    let err = small.compile(&uniform_table::<4097>());
    assert!(
        matches!(&err, Err(DispatchError { kind: DispatchErrorKind::ExceedsDevice { binding: Some(b), .. }, .. }) if b.contains("table")),
        "{err:?}"
    );
    let (needed, got) = exceeded(err, DeviceLimit::UniformBufferBindingSize);
    assert_eq!((needed, got), (65552, 65536));
}

#[test]
fn binding_sizes_are_checked_when_buffers_are_bound() {
    // Storage: a runtime-sized array is as long as its buffer, known when it is bound.
    let small = gpu_with(wgpu::Limits {
        max_storage_buffer_binding_size: 4096,
        ..wgpu::Limits::default()
    });
    let kernel = small
        .compile(&bindings(1, 0).build().expect("builds"))
        .expect("compiles");
    let fits = GpuBuffer::from_slice(&small, &[f32::NAN; 1024]).expect("uploads");
    small
        .dispatch(&kernel, &[&fits], [1, 1, 1])
        .expect("4096 bytes fit");
    assert_eq!(fits.read(&small).expect("reads back")[0], 0.0);
    let long = GpuBuffer::from_slice(&small, &[0.0f32; 1025]).expect("uploads");
    let (needed, device) = exceeded(
        small.dispatch(&kernel, &[&long], [1, 1, 1]),
        DeviceLimit::StorageBufferBindingSize,
    );
    assert_eq!((needed, device), (4100, 4096));

    // Uniform: a buffer longer than its binding's type is bound whole.
    let small = webgpu_default();
    let kernel = small.compile(&uniform_table::<4>()).expect("compiles");
    let out = GpuBuffer::from_slice(small, &[f32::NAN; 4]).expect("uploads");
    let fits = GpuBuffer::from_slice(small, &[1.0f32; 4 * 4096]).expect("uploads");
    fn vec4(b: &GpuBuffer<f32>) -> Vec4View<'_, f32> {
        b.as_vec4().expect("a multiple of 4")
    }
    small
        .dispatch(&kernel, &[&vec4(&fits), &vec4(&out)], [1, 1, 1])
        .expect("64 KiB fit");
    assert_eq!(out.read(small).expect("reads back"), vec![1.0; 4]);
    let long = GpuBuffer::from_slice(small, &[1.0f32; 4 * 4097]).expect("uploads");
    let (needed, device) = exceeded(
        small.dispatch(&kernel, &[&vec4(&long), &vec4(&out)], [1, 1, 1]),
        DeviceLimit::UniformBufferBindingSize,
    );
    assert_eq!((needed, device), (65552, 65536));
}

#[test]
fn capabilities_are_checked_against_the_device() {
    let plain = Gpu::with_options(&GpuOptions {
        features: Some(wgpu::Features::empty()),
        ..GpuOptions::from_env()
    })
    .expect("a device without optional features");
    assert!(
        !plain.capabilities().contains(Capabilities::SUBGROUP),
        "{:?}",
        plain.capabilities()
    );
    let mut k = KernelBuilder::new("needs_subgroups", [64, 1, 1]);
    let out = k.storage::<RuntimeArray<u32>, ReadWrite>("out");
    let total = k.subgroup_add(1u32);
    k.store(&out.at(local_invocation_index()), total);
    let shader = k
        .build()
        .expect("builds for the default target (subgroups allowed)");
    let err = plain.compile(&shader).unwrap_err();
    assert!(
        matches!(&err, DispatchError { kind: DispatchErrorKind::MissingCapability { needed, .. }, .. } if needed.contains(Capabilities::SUBGROUP)),
        "{err:?}"
    );
    // The adapter's device, opened with the features the runtime asks for, has them on
    // lavapipe and compiles the same kernel.
    if gpu().capabilities().contains(Capabilities::SUBGROUP) {
        gpu().compile(&shader).expect("the adapter has subgroups");
    }
}

#[kernel(workgroup_size = 1)]
fn nine_outputs(
    #[storage(read_write)] a: &mut [f32],
    #[storage(read_write)] b: &mut [f32],
    #[storage(read_write)] c: &mut [f32],
    #[storage(read_write)] d: &mut [f32],
    #[storage(read_write)] e: &mut [f32],
    #[storage(read_write)] f: &mut [f32],
    #[storage(read_write)] g: &mut [f32],
    #[storage(read_write)] h: &mut [f32],
    #[storage(read_write)] k: &mut [f32],
) {
    a[0u32] = 1.0;
    b[0u32] = 1.0;
    c[0u32] = 1.0;
    d[0u32] = 1.0;
    e[0u32] = 1.0;
    f[0u32] = 1.0;
    g[0u32] = 1.0;
    h[0u32] = 1.0;
    k[0u32] = 1.0;
}

#[test]
fn compile_typed_checks_the_device_too() {
    let small = webgpu_default();
    let (needed, device) = exceeded(
        small.compile_typed(NineOutputs),
        DeviceLimit::StorageBuffersPerShaderStage,
    );
    assert_eq!((needed, device), (9, 8));
    gpu()
        .compile_typed(NineOutputs)
        .expect("the adapter's own limits allow 9");
}

/// The executors' own limits type: its default is wgpu's (WebGPU's), field by field, and a
/// device's converts to it unchanged.
#[test]
fn the_executors_limits_are_wgpus() {
    let ours = wgsl_dsl::exec::Limits::default();
    assert_eq!(wgsl_dsl::runtime::limits_of(&wgpu::Limits::default()), ours);
    let gpu = gpu();
    let device = gpu.device_limits();
    let l = gpu.limits();
    assert_eq!(
        [
            device.max_compute_workgroup_storage_size,
            device.max_compute_invocations_per_workgroup,
            device.max_compute_workgroups_per_dimension,
            device.max_storage_buffers_per_shader_stage,
        ],
        [
            l.max_compute_workgroup_storage_size,
            l.max_compute_invocations_per_workgroup,
            l.max_compute_workgroups_per_dimension,
            l.max_storage_buffers_per_shader_stage,
        ]
    );
    assert_eq!(
        device.max_storage_buffer_binding_size,
        l.max_storage_buffer_binding_size
    );
    // The interpreter's defaults: WebGPU's, with the binding counts unlimited.
    let interp = wgsl_dsl::runtime::interpreter_limits();
    assert_eq!(interp.max_storage_buffers_per_shader_stage, u32::MAX);
    assert_eq!(
        interp.max_compute_workgroup_storage_size,
        ours.max_compute_workgroup_storage_size
    );
}

#[test]
fn the_interpreter_checks_its_limits_too() {
    // Opened with WebGPU's defaults, as a device would be: 8 storage buffers per stage.
    let shader = bindings(9, 0).build().expect("builds");
    let webgpu = Interpreter::with_options(InterpOptions {
        limits: wgsl_dsl::exec::Limits::default(),
        ..InterpOptions::default()
    });
    let limit = DeviceLimit::StorageBuffersPerShaderStage;
    assert_eq!(exceeded(refusal(webgpu.compile(&shader)), limit), (9, 8));
    webgpu
        .compile(&bindings(8, 0).build().expect("builds"))
        .expect("8 storage buffers fit");
    // By default the number of bindings is not limited; the rest is WebGPU's.
    let cpu = Interpreter::new();
    cpu.compile(&shader)
        .expect("the interpreter's default allows 9");
    // The workgroup's own limits are those the kernel was built for (here beyond any
    // device's), whatever the options say (issue 21, item 5): 16400 bytes of workgroup
    // memory and 65 invocations along z, more than WebGPU's defaults, run.
    for interpreter in [&cpu, &webgpu] {
        interpreter
            .compile(&tile::<4097>())
            .expect("built for more than 16 KiB");
        interpreter
            .compile(&sized([1, 1, 65]))
            .expect("built for more than 64 along z");
    }
    // Built for WebGPU's defaults, such a kernel is refused by `build`, before any executor.
    let mut k = KernelBuilder::new("sized", [1, 1, 65]);
    let out = k.storage::<RuntimeArray<u32>, ReadWrite>("out");
    k.store(&out.at(local_invocation_index()), 1u32);
    assert!(matches!(k.build(), Err(BuildError::WorkgroupSize { .. })));
}

/// The interpreter's compile result with its error as the `DispatchError` it must be.
fn refusal<T: std::fmt::Debug>(result: Result<T, InterpError>) -> Result<T, DispatchError> {
    result.map_err(|e| match e {
        InterpError::Dispatch(e) => e,
        other => panic!("expected a DispatchError, got {other:?}"),
    })
}
