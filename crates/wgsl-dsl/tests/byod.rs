//! Bring your own device (ARCHITECTURE.md decision *Bring your own device*), on lavapipe in CI: the `byod` example (a plain
//! wgpu program running a DSL kernel among its own passes) run as is; a DSL kernel recorded
//! between two passes of the caller's own encoder, and inside the caller's own compute pass,
//! on the caller's buffers, against a CPU reference on random data of odd size with the
//! output poisoned; the typed errors for a device opened without what a kernel needs, and
//! for buffers without the usages their bindings need.

use rand::{Rng, SeedableRng};
use wgsl_dsl::prelude::*;
use wgsl_dsl::runtime::{
    DeviceError, DeviceLimit, DispatchError, DispatchErrorKind, Gpu, GpuBuffer, KernelDef, wgpu,
};

#[allow(dead_code)] // its `main` is not called here
#[path = "../examples/byod.rs"]
mod byod;

#[test]
fn the_byod_example_runs_a_dsl_kernel_among_its_own_passes() {
    let out = byod::run().expect("the byod example");
    assert_eq!(out.z.len(), byod::N);
    let e_z = byod::max_rel_error(&out.z, &out.z_cpu);
    let e_y = byod::max_rel_error(&out.y_plain, &out.y_cpu);
    assert!(e_z < 1e-6, "z: max relative error {e_z}");
    assert!(
        e_y < 1e-6,
        "y without the runtime: max relative error {e_y}"
    );
}

/// `b[i] = a[i] * a[i] - c.offset`, `c` a uniform struct.
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable, WgslStruct)]
#[repr(C)]
#[wgsl(uniform)]
struct Shift {
    offset: f32,
    len: u32,
    _pad0: u32,
    _pad1: u32,
}

#[kernel(workgroup_size = 32)]
fn square_shift(
    #[uniform] c: Shift,
    #[storage(read)] a: &[f32],
    #[storage(read_write)] b: &mut [f32],
    #[builtin(global_invocation_id)] gid: Vec3<u32>,
) {
    let i = gid.x;
    if i < c.len {
        b[i] = a[i] * a[i] - c.offset;
    }
}

/// The caller's own shaders: `a = 3 x + 1` before the DSL kernel, `d = b + x` after it.
const CALLER_WGSL: &str = r#"
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<storage, read> b: array<f32>;

@compute @workgroup_size(64)
fn before(@builtin(global_invocation_id) gid: vec3<u32>) {
    if gid.x < arrayLength(&out) {
        out[gid.x] = 3.0 * x[gid.x] + 1.0;
    }
}

@compute @workgroup_size(64)
fn after(@builtin(global_invocation_id) gid: vec3<u32>) {
    if gid.x < arrayLength(&out) {
        out[gid.x] = b[gid.x] + x[gid.x];
    }
}
"#;

struct Caller {
    adapter: wgpu::Adapter,
    device: wgpu::Device,
    queue: wgpu::Queue,
}

/// The caller's device, opened as a plain wgpu program would, with `limits` and `features`.
fn open(limits: wgpu::Limits, features: wgpu::Features) -> Caller {
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle_from_env();
    desc.backends = wgpu::Backends::from_env().unwrap_or(wgpu::Backends::PRIMARY);
    let instance = wgpu::Instance::new(desc);
    let adapter = pollster::block_on(instance.request_adapter(&Default::default()))
        .expect("an adapter (install mesa-vulkan-drivers for lavapipe)");
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        label: Some("caller"),
        required_features: features,
        required_limits: limits,
        ..Default::default()
    }))
    .expect("a device");
    Caller {
        adapter,
        device,
        queue,
    }
}

fn storage(c: &Caller, n: usize, usage: wgpu::BufferUsages) -> wgpu::Buffer {
    c.device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: (n * 4) as u64,
        usage,
        mapped_at_creation: false,
    })
}

fn read(c: &Caller, buffer: &wgpu::Buffer) -> Vec<f32> {
    let staging = storage(
        c,
        buffer.size() as usize / 4,
        wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
    );
    let mut encoder = c.device.create_command_encoder(&Default::default());
    encoder.copy_buffer_to_buffer(buffer, 0, &staging, 0, buffer.size());
    c.queue.submit([encoder.finish()]);
    staging.map_async(wgpu::MapMode::Read, .., |r| r.expect("mapped"));
    c.device
        .poll(wgpu::PollType::Wait {
            submission_index: None,
            timeout: None,
        })
        .expect("poll");
    let data = bytemuck::pod_collect_to_vec(&staging.slice(..).get_mapped_range().expect("view"));
    staging.unmap();
    data
}

struct Pipelines {
    before: wgpu::ComputePipeline,
    after: wgpu::ComputePipeline,
}

fn caller_pipelines(c: &Caller) -> Pipelines {
    let module = c.device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("caller"),
        source: wgpu::ShaderSource::Wgsl(CALLER_WGSL.into()),
    });
    let p = |entry| {
        c.device
            .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(entry),
                layout: None,
                module: &module,
                entry_point: Some(entry),
                compilation_options: Default::default(),
                cache: None,
            })
    };
    Pipelines {
        before: p("before"),
        after: p("after"),
    }
}

fn group(
    c: &Caller,
    p: &wgpu::ComputePipeline,
    entries: &[(u32, &wgpu::Buffer)],
) -> wgpu::BindGroup {
    let entries: Vec<_> = entries
        .iter()
        .map(|&(binding, b)| wgpu::BindGroupEntry {
            binding,
            resource: b.as_entire_binding(),
        })
        .collect();
    c.device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &p.get_bind_group_layout(0),
        entries: &entries,
    })
}

/// Random `x` of `n` (odd) elements, the caller's buffers `x`, `a`, `b`, `d` (`b` and `d`
/// poisoned with NaN), and the f64 reference `d = (3x + 1)^2 - offset + x`.
struct Case {
    n: usize,
    offset: f32,
    x: wgpu::Buffer,
    a: wgpu::Buffer,
    b: wgpu::Buffer,
    d: wgpu::Buffer,
    expected: Vec<f64>,
}

fn case(c: &Caller, n: usize, seed: u64) -> Case {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let host: Vec<f32> = (0..n).map(|_| rng.random_range(-2.0f32..2.0)).collect();
    let offset = rng.random_range(0.5f32..1.5);
    let usage =
        wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST;
    let [x, a, b, d] = [(); 4].map(|()| storage(c, n, usage));
    c.queue.write_buffer(&x, 0, bytemuck::cast_slice(&host));
    let poison = vec![f32::NAN; n];
    for buf in [&a, &b, &d] {
        c.queue.write_buffer(buf, 0, bytemuck::cast_slice(&poison));
    }
    let expected = host
        .iter()
        .map(|&x| {
            let x = f64::from(x);
            let a = 3.0 * x + 1.0;
            a * a - f64::from(offset) + x
        })
        .collect();
    Case {
        n,
        offset,
        x,
        a,
        b,
        d,
        expected,
    }
}

/// The caller's kernels' dispatch over `n` elements, in one of its compute passes.
struct CallerDispatch<'a> {
    pipeline: &'a wgpu::ComputePipeline,
    group: wgpu::BindGroup,
    groups: u32,
}

impl CallerDispatch<'_> {
    fn dispatch(&self, pass: &mut wgpu::ComputePass<'_>) {
        pass.set_pipeline(self.pipeline);
        pass.set_bind_group(0, &self.group, &[]);
        pass.dispatch_workgroups(self.groups, 1, 1);
    }
}

impl Pipelines {
    /// `before` (`x -> a`) and `after` (`x, b -> d`) bound to `case`'s buffers.
    fn groups(&self, c: &Caller, case: &Case) -> (CallerDispatch<'_>, CallerDispatch<'_>) {
        let groups = (case.n as u32).div_ceil(64);
        let before = group(c, &self.before, &[(0, &case.x), (1, &case.a)]);
        let after = group(c, &self.after, &[(0, &case.x), (1, &case.d), (2, &case.b)]);
        (
            CallerDispatch {
                pipeline: &self.before,
                group: before,
                groups,
            },
            CallerDispatch {
                pipeline: &self.after,
                group: after,
                groups,
            },
        )
    }
}

/// The DSL kernel's buffers over `case`'s: its uniform, and `a` and `b` the caller's.
struct DslBuffers {
    shift: GpuBuffer<Shift>,
    a: GpuBuffer<f32>,
    b: GpuBuffer<f32>,
}

impl DslBuffers {
    fn new(gpu: &Gpu, case: &Case) -> Self {
        let uniform = Shift {
            offset: case.offset,
            len: case.n as u32,
            _pad0: 0,
            _pad1: 0,
        };
        Self {
            shift: GpuBuffer::from_value(gpu, uniform).expect("uniform"),
            a: GpuBuffer::<f32>::from_wgpu(gpu, case.a.clone()).expect("a"),
            b: GpuBuffer::<f32>::from_wgpu(gpu, case.b.clone()).expect("b"),
        }
    }

    fn args(&mut self) -> SquareShiftArgs<'_> {
        SquareShiftArgs {
            c: &self.shift,
            a: &self.a,
            b: &mut self.b,
        }
    }
}

#[track_caller]
fn assert_close(got: &[f32], expected: &[f64]) {
    assert_eq!(got.len(), expected.len());
    for (i, (&g, &e)) in got.iter().zip(expected).enumerate() {
        let tol = 1e-5 * e.abs().max(1.0);
        assert!((f64::from(g) - e).abs() <= tol, "element {i}: {g} vs {e}");
    }
}

#[test]
fn a_dsl_kernel_runs_between_two_passes_of_the_callers_encoder() {
    let c = open(wgpu::Limits::default(), wgpu::Features::empty());
    let p = caller_pipelines(&c);
    let shader = SquareShift.build().build().expect("builds");
    let gpu = Gpu::from_wgpu(&c.adapter, &c.device, &c.queue, &[&shader]).expect("suitable");
    let kernel = gpu.compile_typed(SquareShift).expect("compiles");
    for (n, seed) in [(1037, 1), (45, 2)] {
        let case = case(&c, n, seed);
        let mut dsl = DslBuffers::new(&gpu, &case);
        assert_eq!((dsl.a.len(), dsl.b.len()), (case.n, case.n));
        let (before, after) = p.groups(&c, &case);
        let mut encoder = c.device.create_command_encoder(&Default::default());
        before.dispatch(&mut encoder.begin_compute_pass(&Default::default()));
        kernel
            .record_in_encoder(&gpu, &mut encoder, dsl.args(), [n as u32, 1, 1])
            .expect("recorded");
        after.dispatch(&mut encoder.begin_compute_pass(&Default::default()));
        // Nothing ran yet: the caller submits.
        c.queue.submit([encoder.finish()]);
        assert_close(&read(&c, &case.d), &case.expected);
    }
}

#[test]
fn a_dsl_kernel_runs_inside_the_callers_compute_pass() {
    let c = open(wgpu::Limits::default(), wgpu::Features::empty());
    let p = caller_pipelines(&c);
    let gpu = Gpu::from_wgpu(&c.adapter, &c.device, &c.queue, &[]).expect("suitable");
    let kernel = gpu.compile_typed(SquareShift).expect("compiles");
    let n = 333;
    let case = case(&c, n, 7);
    let mut dsl = DslBuffers::new(&gpu, &case);
    let (before, after) = p.groups(&c, &case);
    let mut encoder = c.device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        before.dispatch(&mut pass);
        kernel
            .record_in_pass(&gpu, &mut pass, dsl.args(), [n as u32, 1, 1])
            .expect("recorded");
        // The kernel set the pass's pipeline and bind group 0: the caller sets its own again.
        after.dispatch(&mut pass);
    }
    c.queue.submit([encoder.finish()]);
    assert_close(&read(&c, &case.d), &case.expected);
    // The runtime's own read-back works on the caller's buffer too.
    let b_ref: Vec<f64> = case
        .expected
        .iter()
        .zip(read(&c, &case.x))
        .map(|(d, x)| d - f64::from(x))
        .collect();
    assert_close(&dsl.b.read(&gpu).expect("read"), &b_ref);
}

/// 4 KiB of workgroup memory.
fn wide_reduction() -> Shader {
    let mut k = KernelBuilder::new("wide", [64, 1, 1]);
    let out = k.storage::<RuntimeArray<f32>, ReadWrite>("out");
    let tile = k.workgroup::<Array<f32, 1024>>("tile");
    let lid = k.let_("lid", local_invocation_index());
    k.store(&tile.at(&lid), lit(1.0f32));
    k.workgroup_barrier();
    k.store(&out.at(&lid), tile.at(&lid).load());
    k.build().expect("builds")
}

#[test]
fn a_device_opened_with_too_little_is_refused_with_the_limit() {
    let c = open(
        wgpu::Limits {
            max_compute_workgroup_storage_size: 1024,
            ..wgpu::Limits::downlevel_defaults()
        },
        wgpu::Features::empty(),
    );
    let shader = wide_reduction();
    match Gpu::from_wgpu(&c.adapter, &c.device, &c.queue, &[&shader]) {
        Err(DeviceError::InsufficientLimit {
            kernel,
            limit: DeviceLimit::WorkgroupStorageSize,
            needed: 4096,
            device: 1024,
            ..
        }) => assert_eq!(kernel, "wide"),
        other => panic!("expected InsufficientLimit, got {other:?}"),
    }
    // Without the kernel the device is taken, and compiling the kernel is refused as usual.
    let gpu = Gpu::from_wgpu(&c.adapter, &c.device, &c.queue, &[]).expect("taken");
    assert!(matches!(
        gpu.compile(&shader),
        Err(DispatchError {
            kind: DispatchErrorKind::ExceedsDevice {
                limit: DeviceLimit::WorkgroupStorageSize,
                ..
            },
            ..
        })
    ));
}

#[test]
fn a_device_opened_without_a_kernels_features_is_refused_with_the_features() {
    let c = open(wgpu::Limits::default(), wgpu::Features::empty());
    let mut k = KernelBuilder::new("halves", [64, 1, 1]);
    let out = k.storage::<RuntimeArray<half::f16>, ReadWrite>("out");
    let i = k.let_("i", global_invocation_id().x());
    k.if_(i.lt(out.len()), |k| {
        k.store(&out.at(&i), lit(half::f16::ONE))
    });
    let shader = k
        .build()
        .expect("builds for the default target, which has f16");
    let err = Gpu::from_wgpu(&c.adapter, &c.device, &c.queue, &[&shader]).expect_err("refused");
    match &err {
        DeviceError::MissingFeatures {
            kernel, features, ..
        } => {
            assert_eq!(kernel, "halves");
            // wgpu's names of the features (the executors' errors hold no wgpu type).
            assert_eq!(*features, format!("{:?}", wgpu::Features::SHADER_F16));
        }
        other => panic!("expected MissingFeatures, got {other:?}"),
    }
    assert!(err.to_string().contains("SHADER_F16"), "{err}");
}

#[test]
fn buffers_without_the_usages_their_bindings_need_are_refused() {
    let c = open(wgpu::Limits::default(), wgpu::Features::empty());
    let gpu = Gpu::from_wgpu(&c.adapter, &c.device, &c.queue, &[]).expect("taken");
    // Not bindable at all.
    let mappable = storage(
        &c,
        8,
        wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
    );
    assert!(matches!(
        GpuBuffer::<f32>::from_wgpu(&gpu, mappable),
        Err(DispatchError {
            kind: DispatchErrorKind::Usage { .. },
            ..
        })
    ));
    // Not a whole number of elements.
    let odd = c.device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: 12,
        usage: wgpu::BufferUsages::STORAGE,
        mapped_at_creation: false,
    });
    assert!(matches!(
        GpuBuffer::<Shift>::from_wgpu(&gpu, odd),
        Err(DispatchError {
            kind: DispatchErrorKind::NotWholeElements {
                bytes: 12,
                elem_size: 16,
                ..
            },
            ..
        })
    ));
    // A storage-only buffer where the kernel takes a uniform: refused before recording.
    let kernel = gpu.compile_typed(SquareShift).expect("compiles");
    let usage = wgpu::BufferUsages::STORAGE;
    let not_uniform = c.device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: 16,
        usage,
        mapped_at_creation: false,
    });
    let shift = GpuBuffer::<Shift>::from_wgpu(&gpu, not_uniform).expect("wrapped");
    let a = GpuBuffer::<f32>::from_wgpu(&gpu, storage(&c, 8, usage)).expect("a");
    let mut b = GpuBuffer::<f32>::from_wgpu(&gpu, storage(&c, 8, usage)).expect("b");
    let mut encoder = c.device.create_command_encoder(&Default::default());
    let args = SquareShiftArgs {
        c: &shift,
        a: &a,
        b: &mut b,
    };
    match kernel.record_in_encoder(&gpu, &mut encoder, args, [8, 1, 1]) {
        Err(DispatchError {
            kind: DispatchErrorKind::Usage { what, needed, .. },
            ..
        }) => {
            assert_eq!(needed, format!("{:?}", wgpu::BufferUsages::UNIFORM));
            assert!(what.contains("binding 0 `c`"), "{what}");
        }
        other => panic!("expected Usage, got {other:?}"),
    }
}
