//! The ceiling kernel on a device: [`open_gpu`] opens one that runs it, [`CeilingKernel`]
//! compiles one tile's module through wgpu's SPIR-V passthrough, binds it to buffers
//! ([`CeilingBinding`]), dispatches and times it with wgpu calls of its own (the runtime's
//! `Recorder` dispatches DSL kernels only).

use std::borrow::Cow;
use std::time::Duration;

use half::f16;
use wgsl_dsl::runtime::{Gpu, GpuBuffer, GpuOptions, wgpu};

use super::error::CeilingError;
use super::tile::{CeilingTile, SUBGROUP_SIZE, WORKGROUP_SIZE};
use crate::{GemmDims, Problem};

/// The multiply-add shape the kernel uses.
fn shape_16x16x16_f16_f32(p: &wgpu::CooperativeMatrixProperties) -> bool {
    (p.m_size, p.n_size, p.k_size) == (16, 16, 16)
        && p.ab_type == wgpu::CooperativeScalarType::F16
        && p.cr_type == wgpu::CooperativeScalarType::F32
}

/// A device that runs the ceiling kernel: the adapter `options` select (as `gemm` selects it),
/// opened with cooperative matrices, the features [`Gpu::with_options`] asks for by default
/// and `PASSTHROUGH_SHADERS`.
///
/// # Errors
/// [`CeilingError::Unsupported`] when the adapter is not Vulkan or lacks cooperative matrices
/// with 16x16x16 `f16 -> f32` multiply-adds, `SHADER_F16` or passthrough shaders (Mesa lavapipe
/// has no cooperative matrices); [`CeilingError::SubgroupSize`]; [`CeilingError::Device`] when
/// no adapter is found or the device does not open.
pub fn open_gpu(options: &GpuOptions) -> Result<Gpu, CeilingError> {
    let options = GpuOptions {
        cooperative_matrix: true,
        ..options.clone()
    };
    // Opened once with the default features to learn them, then again with passthrough.
    let probe = Gpu::with_options(&options)?;
    let info = probe.adapter_info().clone();
    let unsupported = |missing: &str| CeilingError::Unsupported {
        adapter: info.name.clone(),
        missing: missing.to_string(),
    };
    if info.backend != wgpu::Backend::Vulkan {
        return Err(unsupported("Vulkan (the module is SPIR-V)"));
    }
    let features = probe.features();
    if !features.contains(wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX) {
        return Err(unsupported(
            "cooperative matrices (VK_KHR_cooperative_matrix, wgpu's EXPERIMENTAL_COOPERATIVE_MATRIX)",
        ));
    }
    if !probe
        .adapter()
        .cooperative_matrix_properties()
        .iter()
        .any(shape_16x16x16_f16_f32)
    {
        return Err(unsupported(
            "the 16x16x16 cooperative multiply-add of f16 inputs with f32 accumulators",
        ));
    }
    if !features.contains(wgpu::Features::SHADER_F16) {
        return Err(unsupported("SHADER_F16"));
    }
    if !probe
        .adapter()
        .features()
        .contains(wgpu::Features::PASSTHROUGH_SHADERS)
    {
        return Err(unsupported("PASSTHROUGH_SHADERS"));
    }
    let (min, max) = (info.subgroup_min_size, info.subgroup_max_size);
    if (min, max) != (SUBGROUP_SIZE, SUBGROUP_SIZE) {
        return Err(CeilingError::SubgroupSize { min, max });
    }
    drop(probe);
    Ok(Gpu::with_options(&GpuOptions {
        features: Some(features | wgpu::Features::PASSTHROUGH_SHADERS),
        ..options
    })?)
}

/// The ceiling kernel of one tile, compiled on a [`Gpu`] from [`open_gpu`].
#[derive(Debug)]
pub struct CeilingKernel {
    tile: CeilingTile,
    pipeline: wgpu::ComputePipeline,
    layout: wgpu::BindGroupLayout,
}

/// A [`CeilingKernel`]'s buffers for one problem: the bind group and the grid.
#[derive(Debug)]
pub struct CeilingBinding {
    group: wgpu::BindGroup,
    grid: [u32; 3],
}

impl CeilingKernel {
    /// Compile the module of `tile` on `gpu`.
    ///
    /// # Errors
    /// [`CeilingError::NoModule`] for a tile not in [`CEILING_TILES`](super::CEILING_TILES);
    /// [`CeilingError::Unsupported`] on a device opened without `PASSTHROUGH_SHADERS` or
    /// cooperative matrices (use [`open_gpu`]); [`CeilingError::WorkgroupMemory`];
    /// [`CeilingError::NotSpirv`]; [`CeilingError::Wgpu`] when wgpu or the driver refuses the
    /// module or the pipeline.
    pub fn new(gpu: &Gpu, tile: CeilingTile) -> Result<CeilingKernel, CeilingError> {
        let bytes = tile.spirv().ok_or(CeilingError::NoModule { tile })?;
        let needed = wgpu::Features::PASSTHROUGH_SHADERS
            | wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX
            | wgpu::Features::SHADER_F16;
        if !gpu.features().contains(needed) {
            return Err(CeilingError::Unsupported {
                adapter: gpu.adapter_info().name.clone(),
                missing: format!(
                    "the device features {:?} (open it with ceiling::open_gpu)",
                    needed - gpu.features()
                ),
            });
        }
        let limit = gpu.limits().max_compute_workgroup_storage_size;
        if tile.workgroup_bytes() > limit {
            return Err(CeilingError::WorkgroupMemory {
                tile,
                needed: tile.workgroup_bytes(),
                limit,
            });
        }
        let words = spirv_words(bytes)?;
        let device = gpu.device();
        let (pipeline, layout) = scoped(device, || {
            // SAFETY: wgpu passes the module to the driver unchecked. It is one of the modules
            // compiled from shaders/ceiling.comp by glslang (valid SPIR-V for Vulkan 1.3: run
            // spirv-val on it), whose interface is the layout below; it reads and writes only
            // inside buffers of the sizes `bind` checks (M, N, K multiples of the tile).
            #[allow(unsafe_code)]
            let module = unsafe {
                device.create_shader_module_passthrough(wgpu::ShaderModuleDescriptorPassthrough {
                    label: Some(&tile.name()),
                    entry_points: Cow::Owned(vec![wgpu::PassthroughShaderEntryPoint {
                        name: Cow::Borrowed("main"),
                        workgroup_size: (WORKGROUP_SIZE, 1, 1),
                    }]),
                    spirv: Some(words),
                    ..Default::default()
                })
            };
            let entry = |binding: u32, ty: wgpu::BufferBindingType| wgpu::BindGroupLayoutEntry {
                binding,
                visibility: wgpu::ShaderStages::COMPUTE,
                ty: wgpu::BindingType::Buffer {
                    ty,
                    has_dynamic_offset: false,
                    min_binding_size: None,
                },
                count: None,
            };
            let storage = |read_only| wgpu::BufferBindingType::Storage { read_only };
            let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                label: Some("ceiling"),
                entries: &[
                    entry(0, wgpu::BufferBindingType::Uniform),
                    entry(1, storage(true)),
                    entry(2, storage(true)),
                    entry(3, storage(false)),
                ],
            });
            let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some("ceiling"),
                bind_group_layouts: &[Some(&layout)],
                immediate_size: 0,
            });
            let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(&tile.name()),
                layout: Some(&pipeline_layout),
                module: &module,
                entry_point: Some("main"),
                compilation_options: Default::default(),
                cache: None,
            });
            (pipeline, layout)
        })?;
        Ok(CeilingKernel {
            tile,
            pipeline,
            layout,
        })
    }

    /// The tile.
    pub fn tile(&self) -> CeilingTile {
        self.tile
    }

    /// Bind `dims` (holding `problem.dims()`), `a` (`[M, K]`), `b` (`[K, N]`) and `c`
    /// (`[M, N]`, written) for `problem`.
    ///
    /// # Errors
    /// [`CeilingError::Incompatible`] unless the tile divides `problem`;
    /// [`CeilingError::ShortBuffer`]; [`CeilingError::Wgpu`] (e.g. a buffer of another device).
    pub fn bind(
        &self,
        gpu: &Gpu,
        problem: &Problem,
        dims: &GpuBuffer<GemmDims>,
        a: &GpuBuffer<f16>,
        b: &GpuBuffer<f16>,
        c: &GpuBuffer<f32>,
    ) -> Result<CeilingBinding, CeilingError> {
        if !self.tile.divides(problem) {
            return Err(CeilingError::Incompatible {
                tile: self.tile,
                problem: *problem,
            });
        }
        for (name, len, needed) in [
            ("a", a.len(), problem.a_len()),
            ("b", b.len(), problem.b_len()),
            ("c", c.len(), problem.c_len()),
        ] {
            if len < needed {
                return Err(CeilingError::ShortBuffer {
                    name,
                    len,
                    needed,
                    problem: *problem,
                });
            }
        }
        let group = scoped(gpu.device(), || {
            let buffers = [dims.raw(), a.raw(), b.raw(), c.raw()];
            let entries: Vec<wgpu::BindGroupEntry<'_>> = buffers
                .iter()
                .enumerate()
                .map(|(i, buffer)| wgpu::BindGroupEntry {
                    binding: i as u32,
                    resource: buffer.as_entire_binding(),
                })
                .collect();
            gpu.device().create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("ceiling"),
                layout: &self.layout,
                entries: &entries,
            })
        })?;
        Ok(CeilingBinding {
            group,
            grid: self.tile.grid(problem),
        })
    }

    /// Record one dispatch of the kernel on `bound` into `pass`.
    pub fn record(&self, pass: &mut wgpu::ComputePass<'_>, bound: &CeilingBinding) {
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, &bound.group, &[]);
        let [x, y, z] = bound.grid;
        pass.dispatch_workgroups(x, y, z);
    }

    /// One dispatch on `bound`, submitted and waited for.
    ///
    /// # Errors
    /// [`CeilingError::Wgpu`] if wgpu refuses the commands; [`CeilingError::Device`] if the
    /// wait fails.
    pub fn run(&self, gpu: &Gpu, bound: &CeilingBinding) -> Result<(), CeilingError> {
        self.time(gpu, bound, 1).map(|_| ())
    }

    /// One compute pass of `reps` dispatches on `bound`, as `gemm bench` times the DSL kernels
    /// (`Gpu::time` around a `Recorder`'s pass): GPU timestamps written when the pass begins
    /// and ends, submitted and waited for. wgpu puts a barrier between two dispatches, since
    /// each writes `c`, so they do not overlap. `Ok(None)` when the device lacks
    /// `TIMESTAMP_QUERY` (the work still runs).
    ///
    /// # Errors
    /// As [`CeilingKernel::run`].
    pub fn time(
        &self,
        gpu: &Gpu,
        bound: &CeilingBinding,
        reps: usize,
    ) -> Result<Option<Duration>, CeilingError> {
        let device = gpu.device();
        let timed = gpu.features().contains(wgpu::Features::TIMESTAMP_QUERY);
        let readback = scoped(device, || {
            let queries = timed.then(|| {
                device.create_query_set(&wgpu::QuerySetDescriptor {
                    label: Some("ceiling timestamps"),
                    ty: wgpu::QueryType::Timestamp,
                    count: 2,
                })
            });
            let mut encoder = device.create_command_encoder(&Default::default());
            {
                let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("ceiling pass"),
                    timestamp_writes: queries.as_ref().map(|q| wgpu::ComputePassTimestampWrites {
                        query_set: q,
                        beginning_of_pass_write_index: Some(0),
                        end_of_pass_write_index: Some(1),
                    }),
                });
                for _ in 0..reps {
                    self.record(&mut pass, bound);
                }
            }
            let readback = queries.map(|q| {
                let buffer = |usage| {
                    device.create_buffer(&wgpu::BufferDescriptor {
                        label: Some("ceiling timestamps"),
                        size: 2 * wgpu::QUERY_SIZE as u64,
                        usage,
                        mapped_at_creation: false,
                    })
                };
                let resolve =
                    buffer(wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC);
                let readback = buffer(wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST);
                encoder.resolve_query_set(&q, 0..2, &resolve, 0);
                encoder.copy_buffer_to_buffer(&resolve, 0, &readback, 0, resolve.size());
                readback
            });
            gpu.queue().submit([encoder.finish()]);
            readback
        })?;
        let Some(readback) = readback else {
            gpu.wait()?;
            return Ok(None);
        };
        readback.slice(..).map_async(wgpu::MapMode::Read, |_| {});
        gpu.wait()?;
        let ticks: Vec<u64> = {
            let view = readback
                .slice(..)
                .get_mapped_range()
                .map_err(|e| CeilingError::Wgpu(e.to_string()))?;
            bytemuck::pod_collect_to_vec(&view[..])
        };
        readback.unmap();
        let [start, end] = ticks[..] else {
            return Err(CeilingError::Wgpu(format!(
                "read back {} timestamps, not 2",
                ticks.len()
            )));
        };
        let period = f64::from(gpu.queue().get_timestamp_period());
        let elapsed = end.saturating_sub(start) as f64 * period;
        Ok(Some(Duration::from_nanos(elapsed as u64)))
    }
}

/// Run `f` inside wgpu error scopes (validation, out of memory, internal) on `device`: the
/// first error wgpu reports becomes [`CeilingError::Wgpu`].
fn scoped<R>(device: &wgpu::Device, f: impl FnOnce() -> R) -> Result<R, CeilingError> {
    let internal = device.push_error_scope(wgpu::ErrorFilter::Internal);
    let oom = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
    let validation = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let r = f();
    let errors = [
        pollster::block_on(validation.pop()),
        pollster::block_on(oom.pop()),
        pollster::block_on(internal.pop()),
    ];
    match errors.into_iter().flatten().next() {
        Some(e) => Err(CeilingError::Wgpu(e.to_string())),
        None => Ok(r),
    }
}

/// The module's words, after checking that `bytes` is SPIR-V (a whole number of words
/// starting with the magic number, in either byte order).
///
/// # Errors
/// [`CeilingError::NotSpirv`] otherwise.
pub fn spirv_words(bytes: &[u8]) -> Result<Cow<'static, [u32]>, CeilingError> {
    const MAGIC: u32 = 0x0723_0203;
    if bytes.len() < 20 || !bytes.len().is_multiple_of(4) {
        return Err(CeilingError::NotSpirv(format!(
            "a SPIR-V module is a whole number of 4-byte words, at least 5; got {} bytes",
            bytes.len()
        )));
    }
    let mut words: Vec<u32> = bytemuck::pod_collect_to_vec(bytes);
    if words[0] == MAGIC.swap_bytes() {
        words.iter_mut().for_each(|w| *w = w.swap_bytes());
    }
    if words[0] != MAGIC {
        return Err(CeilingError::NotSpirv(format!(
            "the first word is {:#010x}, not the magic number {MAGIC:#010x}",
            words[0]
        )));
    }
    Ok(Cow::Owned(words))
}
