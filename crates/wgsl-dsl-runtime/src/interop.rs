//! Kernels inside a wgpu program that is not this runtime's (ARCHITECTURE.md decision *Bring your own device*): dispatches
//! recorded into the caller's command encoder or compute pass, and, for programs that use
//! no part of the runtime, what wgpu needs to run a [`Shader`] by itself ([`WgpuShader`]).
//!
//! A caller's device becomes a [`Gpu`] with [`Gpu::from_wgpu`] (its buffers become
//! [`GpuBuffer`](super::GpuBuffer)s with [`GpuBuffer::from_wgpu`](super::GpuBuffer::from_wgpu));
//! every dispatch recorded here is checked as [`Gpu::dispatch`] checks it, before anything is
//! recorded, and nothing is submitted: the caller submits its encoder when it wants.
//!
//! ```
//! use wgsl_dsl::prelude::*;
//! use wgsl_dsl::runtime::{Gpu, GpuBuffer, KernelDef, wgpu};
//!
//! #[kernel(workgroup_size = 64)]
//! fn double(
//!     #[storage(read_write)] y: &mut [f32],
//!     #[builtin(global_invocation_id)] gid: Vec3<u32>,
//! ) {
//!     let i = gid.x;
//!     if i < y.len() {
//!         y[i] = 2.0 * y[i];
//!     }
//! }
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let owned = Gpu::new()?; // stands for the caller's own adapter, device and queue
//! # let (adapter, device, queue) = (owned.adapter(), owned.device(), owned.queue());
//! // The caller's adapter, device and queue; the kernels it will run are checked against them.
//! let shader = Double.build().build()?;
//! let gpu = Gpu::from_wgpu(adapter, device, queue, &[&shader])?;
//! let kernel = gpu.compile_typed(Double)?;
//!
//! let mut y = GpuBuffer::from_slice(&gpu, &[1.0f32, 2.0, 3.0])?;
//! let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
//! // ... the caller's passes ...
//! kernel.record_in_encoder(&gpu, &mut encoder, DoubleArgs { y: &mut y }, [3, 1, 1])?;
//! // ... more of the caller's passes ...
//! queue.submit([encoder.finish()]);
//! assert_eq!(y.read(&gpu)?, vec![2.0, 4.0, 6.0]);
//! # Ok(())
//! # }
//! ```

use std::borrow::Cow;

use super::buffer::BindArg;
use super::gpu::Gpu;
use super::pipeline::{Kernel, layout_entries};
use super::typed::{GpuArgs, TypedKernel};
use wgsl_dsl_core::shader::Shader;
use wgsl_dsl_exec::DispatchError;
use wgsl_dsl_exec::{KernelArgs, KernelDef};

impl Gpu {
    /// Record a dispatch of `kernel` over `workgroups` with `args` into the caller's compute
    /// `pass`, checked first as [`Gpu::dispatch`] checks it (nothing is recorded on error).
    /// The pass must belong to an encoder of this `Gpu`'s device. It sets the pass's
    /// pipeline and bind group 0: a caller dispatching its own pipeline afterwards sets both
    /// again, as it would after any other pipeline. A grid with a zero records nothing.
    ///
    /// # Errors
    /// As [`Gpu::dispatch`]; wgpu's own validation of the recorded commands is reported to
    /// the caller, by the encoder's `finish` or its error scopes, as for any command it
    /// records.
    #[track_caller]
    pub fn record_in_pass(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        kernel: &Kernel,
        args: &[&dyn BindArg],
        workgroups: [u32; 3],
    ) -> Result<(), DispatchError> {
        let caller = std::panic::Location::caller();
        let prepared = self.prepare(kernel, args, workgroups);
        let Some(group) = prepared.map_err(|e| e.called_at(caller))? else {
            return Ok(());
        };
        kernel.record(pass, &group, workgroups);
        Ok(())
    }

    /// Record a dispatch of `kernel` into the caller's command `encoder`, in a compute pass of
    /// its own (labelled with the kernel's name) between the commands recorded before and
    /// after it; checked first as [`Gpu::dispatch`] checks it. wgpu orders it after the
    /// encoder's earlier passes and copies and before its later ones, with the barriers the
    /// buffers need. Nothing is submitted.
    ///
    /// # Errors
    /// As [`Gpu::dispatch`], and [`DispatchErrorKind::Wgpu`](wgsl_dsl_exec::DispatchErrorKind::Wgpu) for an error wgpu reports when the
    /// pass ends.
    #[track_caller]
    pub fn record_in_encoder(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        kernel: &Kernel,
        args: &[&dyn BindArg],
        workgroups: [u32; 3],
    ) -> Result<(), DispatchError> {
        let caller = std::panic::Location::caller();
        let prepared = self.prepare(kernel, args, workgroups);
        let Some(group) = prepared.map_err(|e| e.called_at(caller))? else {
            return Ok(());
        };
        self.scoped(|| {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some(kernel.name()),
                timestamp_writes: None,
            });
            kernel.record(&mut pass, &group, workgroups);
        })
        .map_err(|e| e.called_at(caller))
    }
}

impl<K: KernelDef> TypedKernel<K> {
    /// Record a dispatch over the workgroups covering `size` into the caller's compute pass
    /// ([`Gpu::record_in_pass`]: checked first; sets the pass's pipeline and bind group 0).
    ///
    /// # Errors
    /// As [`Gpu::record_in_pass`].
    #[track_caller]
    pub fn record_in_pass(
        &self,
        gpu: &Gpu,
        pass: &mut wgpu::ComputePass<'_>,
        args: GpuArgs<'_, K>,
        size: K::Size,
    ) -> Result<(), DispatchError> {
        let caller = std::panic::Location::caller();
        let workgroups = self.def().workgroups(size);
        args.with_bind_args(|a| gpu.record_in_pass(pass, self.kernel(), a, workgroups))
            .map_err(|e| e.called_at(caller))
    }

    /// Record a dispatch over the workgroups covering `size` into the caller's command
    /// encoder, in a compute pass of its own ([`Gpu::record_in_encoder`]).
    ///
    /// # Errors
    /// As [`Gpu::record_in_encoder`].
    #[track_caller]
    pub fn record_in_encoder(
        &self,
        gpu: &Gpu,
        encoder: &mut wgpu::CommandEncoder,
        args: GpuArgs<'_, K>,
        size: K::Size,
    ) -> Result<(), DispatchError> {
        let caller = std::panic::Location::caller();
        let workgroups = self.def().workgroups(size);
        args.with_bind_args(|a| gpu.record_in_encoder(encoder, self.kernel(), a, workgroups))
            .map_err(|e| e.called_at(caller))
    }
}

/// What a wgpu program needs to run a [`Shader`] without this runtime: its shader module,
/// its bind group layout, its entry point. Bindings are all in group 0, numbered in
/// declaration order (ARCHITECTURE.md decision *The kernel is its ABI*); WebGPU's own checks then
/// apply, and this runtime's (element types, sizes, aliasing) do not.
///
/// ```
/// use wgsl_dsl::prelude::*;
/// use wgsl_dsl::runtime::{WgpuShader, wgpu};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let gpu = wgsl_dsl::runtime::Gpu::new()?;
/// # let device = gpu.device(); // stands for the caller's device
/// let mut k = KernelBuilder::new("fill", [64, 1, 1]);
/// let out = k.storage::<RuntimeArray<u32>, ReadWrite>("out");
/// let i = k.let_("i", global_invocation_id().x());
/// k.if_(i.lt(out.len()), |k| k.store(&out.at(&i), i.clone()));
/// let shader = k.build()?;
///
/// let module = device.create_shader_module(shader.module_descriptor());
/// let entries = shader.bind_group_layout_entries()?;
/// let bind_group_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
///     label: None,
///     entries: &entries,
/// });
/// let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
///     label: None,
///     bind_group_layouts: &[Some(&bind_group_layout)],
///     immediate_size: 0,
/// });
/// let _pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
///     label: None,
///     layout: Some(&layout),
///     module: &module,
///     entry_point: Some(shader.entry_point()),
///     compilation_options: Default::default(),
///     cache: None,
/// });
/// # Ok(())
/// # }
/// ```
pub trait WgpuShader {
    /// The shader module: the WGSL naga wrote ([`Shader::wgsl`]), labelled with the kernel's
    /// name. WGSL source needs only wgpu's default `wgsl` feature; its entry point is
    /// [`WgpuShader::entry_point`].
    fn module_descriptor(&self) -> wgpu::ShaderModuleDescriptor<'_>;

    /// The bind group layout entries, one per binding in order, in group 0, visible to the
    /// compute stage: `Storage { read_only: true }` for `var<storage, read>`, `Storage {
    /// read_only: false }` for `var<storage, read_write>`, `Uniform`, `StorageTexture` or
    /// `Texture` for texture bindings; no dynamic offsets or minimum binding sizes.
    ///
    /// # Errors
    /// [`DispatchErrorKind::Layout`](wgsl_dsl_exec::DispatchErrorKind::Layout) for a binding outside group 0, which no kernel built by
    /// [`KernelBuilder`](wgsl_dsl_core::KernelBuilder) has.
    fn bind_group_layout_entries(&self) -> Result<Vec<wgpu::BindGroupLayoutEntry>, DispatchError>;

    /// The entry point's name in the WGSL ([`KernelSignature::entry_point`](wgsl_dsl_core::KernelSignature::entry_point):
    /// the kernel's name, or what naga's namer made of it, e.g. `layer1_` for `layer1`).
    fn entry_point(&self) -> &str;
}

impl WgpuShader for Shader {
    fn module_descriptor(&self) -> wgpu::ShaderModuleDescriptor<'_> {
        wgpu::ShaderModuleDescriptor {
            label: Some(&self.signature.name),
            source: wgpu::ShaderSource::Wgsl(Cow::Borrowed(&self.wgsl)),
        }
    }

    fn bind_group_layout_entries(&self) -> Result<Vec<wgpu::BindGroupLayoutEntry>, DispatchError> {
        layout_entries(&self.signature)
    }

    fn entry_point(&self) -> &str {
        &self.signature.entry_point
    }
}
