//! Bring your own device: a plain wgpu program that opens its own adapter, device and queue,
//! runs passes of its own WGSL, and runs a DSL kernel among them, on its own buffers:
//!
//! ```text
//! cargo run -p wgsl-dsl --example byod
//! ```
//!
//! 1. The program's pass `ramp` writes `x[i] = 0.37 i - 19` into its buffer `x`.
//! 2. The DSL kernel `softsign` (`y[i] = gain * x[i] / (1 + |x[i]|)`) is recorded into the
//!    program's command encoder through its typed interface, on the program's buffers `x`
//!    and `y` ([`Gpu::from_wgpu`], [`GpuBuffer::from_wgpu`], `record_in_encoder`).
//! 3. The program's pass `square` writes `z[i] = y[i] * y[i]`.
//!
//! One submit, then `z` is read back and compared with the CPU. Then the program runs the
//! same kernel with no part of the runtime, from what the `Shader` gives
//! ([`WgpuShader`]: shader module, bind group layout entries, entry point), and compares
//! again. Exits with status 1 if a result differs from the CPU's by more than 1e-6
//! (relative). `tests/byod.rs` runs this same code.

use std::error::Error;

use wgsl_dsl::prelude::*;
use wgsl_dsl::runtime::{Gpu, GpuBuffer, KernelDef, WgpuShader, wgpu};

/// `y[i] = gain * x[i] / (1 + |x[i]|)`.
#[kernel(workgroup_size = 64)]
fn softsign(
    #[uniform] gain: f32,
    #[storage(read)] x: &[f32],
    #[storage(read_write)] y: &mut [f32],
    #[builtin(global_invocation_id)] gid: Vec3<u32>,
) {
    let i = gid.x;
    if i < y.len() {
        y[i] = gain * x[i] / (1.0 + abs(x[i]));
    }
}

/// The program's own shaders (its WGSL, not the DSL's).
const APP_WGSL: &str = r#"
@group(0) @binding(0) var<storage, read_write> x: array<f32>;
@group(0) @binding(1) var<storage, read> y: array<f32>;
@group(0) @binding(2) var<storage, read_write> z: array<f32>;

@compute @workgroup_size(64)
fn ramp(@builtin(global_invocation_id) gid: vec3<u32>) {
    if gid.x < arrayLength(&x) {
        x[gid.x] = 0.37 * f32(gid.x) - 19.0;
    }
}

@compute @workgroup_size(64)
fn square(@builtin(global_invocation_id) gid: vec3<u32>) {
    if gid.x < arrayLength(&z) {
        z[gid.x] = y[gid.x] * y[gid.x];
    }
}
"#;

/// Elements: odd, not a multiple of the workgroup size.
pub const N: usize = 1037;
/// The kernel's uniform.
pub const GAIN: f32 = 1.5;

/// What [`run`] measured.
#[derive(Debug)]
pub struct Outcome {
    /// The adapter the program opened.
    pub adapter: String,
    /// `z` from the program's passes around the DSL kernel.
    pub z: Vec<f32>,
    /// `y` from the same kernel run without the runtime ([`WgpuShader`]).
    pub y_plain: Vec<f32>,
    /// The CPU's `z` (in f64).
    pub z_cpu: Vec<f64>,
    /// The CPU's `y` (in f64).
    pub y_cpu: Vec<f64>,
}

/// Largest `|a - b| / max(1, |b|)`.
pub fn max_rel_error(a: &[f32], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(&a, &b)| (f64::from(a) - b).abs() / b.abs().max(1.0))
        .fold(0.0, f64::max)
}

/// The whole program; see the module docs.
///
/// # Errors
/// No adapter or device, a kernel that does not build or fit the device, a failed dispatch
/// or read-back.
pub fn run() -> Result<Outcome, Box<dyn Error>> {
    // The program's own instance, adapter and device (WebGPU's default limits, no features).
    let backends = wgpu::Backends::from_env().unwrap_or(wgpu::Backends::PRIMARY);
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle_from_env();
    desc.backends = backends;
    let instance = wgpu::Instance::new(desc);
    let adapter = pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
        power_preference: wgpu::PowerPreference::HighPerformance,
        ..Default::default()
    }))?;
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        label: Some("byod"),
        ..Default::default()
    }))?;
    let app = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("app"),
        source: wgpu::ShaderSource::Wgsl(APP_WGSL.into()),
    });
    let app_pipeline = |entry: &str| {
        device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(entry),
            layout: None,
            module: &app,
            entry_point: Some(entry),
            compilation_options: Default::default(),
            cache: None,
        })
    };
    let (ramp, square) = (app_pipeline("ramp"), app_pipeline("square"));
    let bytes = (N * size_of::<f32>()) as u64;
    let storage = |label| {
        device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: bytes,
            usage: wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_SRC
                | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        })
    };
    let (x, y, z) = (storage("x"), storage("y"), storage("z"));
    let app_group = |pipeline: &wgpu::ComputePipeline, buffers: &[(u32, &wgpu::Buffer)]| {
        let entries: Vec<wgpu::BindGroupEntry<'_>> = buffers
            .iter()
            .map(|&(binding, b)| wgpu::BindGroupEntry {
                binding,
                resource: b.as_entire_binding(),
            })
            .collect();
        device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &pipeline.get_bind_group_layout(0),
            entries: &entries,
        })
    };
    let ramp_group = app_group(&ramp, &[(0, &x)]);
    let square_group = app_group(&square, &[(1, &y), (2, &z)]);
    let groups = (N as u32).div_ceil(64);

    // The DSL side: the program's device, checked against the kernel; its buffers wrapped.
    let shader = Softsign.build().build()?;
    let gpu = Gpu::from_wgpu(&adapter, &device, &queue, &[&shader])?;
    let softsign = gpu.compile_typed(Softsign)?;
    let gain = GpuBuffer::from_value(&gpu, GAIN)?;
    let x_dsl = GpuBuffer::<f32>::from_wgpu(&gpu, x.clone())?;
    let mut y_dsl = GpuBuffer::<f32>::from_wgpu(&gpu, y.clone())?;

    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&ramp);
        pass.set_bind_group(0, &ramp_group, &[]);
        pass.dispatch_workgroups(groups, 1, 1);
    }
    let args = SoftsignArgs {
        gain: &gain,
        x: &x_dsl,
        y: &mut y_dsl,
    };
    softsign.record_in_encoder(&gpu, &mut encoder, args, [N as u32, 1, 1])?;
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&square);
        pass.set_bind_group(0, &square_group, &[]);
        pass.dispatch_workgroups(groups, 1, 1);
    }
    let z_read = read_back(&device, &queue, encoder, &z)?;

    // The same kernel with no part of the runtime: module, layout and entry point from the
    // Shader, buffers and bind group the program's own.
    let module = device.create_shader_module(shader.module_descriptor());
    let entries = shader.bind_group_layout_entries()?;
    let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some("softsign"),
        entries: &entries,
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("softsign"),
        layout: Some(
            &device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: None,
                bind_group_layouts: &[Some(&layout)],
                immediate_size: 0,
            }),
        ),
        module: &module,
        entry_point: Some(shader.entry_point()),
        compilation_options: Default::default(),
        cache: None,
    });
    let gain_plain = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("gain"),
        size: 16,
        usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    queue.write_buffer(&gain_plain, 0, &GAIN.to_le_bytes());
    let y_plain = storage("y_plain");
    let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &layout,
        entries: &[
            wgpu::BindGroupEntry {
                binding: 0,
                resource: gain_plain.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 1,
                resource: x.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 2,
                resource: y_plain.as_entire_binding(),
            },
        ],
    });
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &group, &[]);
        pass.dispatch_workgroups(groups, 1, 1);
    }
    let y_plain = read_back(&device, &queue, encoder, &y_plain)?;

    let y_cpu: Vec<f64> = (0..N)
        .map(|i| {
            let x = f64::from(0.37f32 * i as f32 - 19.0);
            f64::from(GAIN) * x / (1.0 + x.abs())
        })
        .collect();
    let z_cpu = y_cpu.iter().map(|y| y * y).collect();
    Ok(Outcome {
        adapter: adapter.get_info().name,
        z: z_read,
        y_plain,
        z_cpu,
        y_cpu,
    })
}

/// Copy `buffer` into a mapped staging buffer at the end of `encoder`, submit, wait, read.
fn read_back(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    mut encoder: wgpu::CommandEncoder,
    buffer: &wgpu::Buffer,
) -> Result<Vec<f32>, Box<dyn Error>> {
    let staging = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("read-back"),
        size: buffer.size(),
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    encoder.copy_buffer_to_buffer(buffer, 0, &staging, 0, buffer.size());
    queue.submit([encoder.finish()]);
    let (tx, rx) = std::sync::mpsc::channel();
    staging.map_async(wgpu::MapMode::Read, .., move |r| {
        let _ = tx.send(r);
    });
    device.poll(wgpu::PollType::Wait {
        submission_index: None,
        timeout: None,
    })?;
    rx.recv()??;
    let data = {
        let view = staging
            .slice(..)
            .get_mapped_range()
            .map_err(|e| e.to_string())?;
        bytemuck::pod_collect_to_vec(&view)
    };
    staging.unmap();
    Ok(data)
}

#[allow(dead_code)] // tests/byod.rs includes this file for `run`.
fn main() -> std::process::ExitCode {
    match run() {
        Ok(out) => {
            let e_z = max_rel_error(&out.z, &out.z_cpu);
            let e_y = max_rel_error(&out.y_plain, &out.y_cpu);
            println!("adapter: {}", out.adapter);
            println!(
                "ramp -> softsign (DSL, typed, recorded in the program's encoder) -> square: \
                 {N} elements, max relative error {e_z:.2e}"
            );
            println!(
                "softsign without the runtime (module, layout, entry point from the Shader): \
                 max relative error {e_y:.2e}"
            );
            if e_z > 1e-6 || e_y > 1e-6 {
                eprintln!("error: results differ from the CPU's");
                return std::process::ExitCode::FAILURE;
            }
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
