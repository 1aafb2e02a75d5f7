//! [`Gpu::compile`]: a [`Shader`] becomes a [`Kernel`]: a compute pipeline with an explicit
//! bind group layout built from the kernel's declared bindings, cached per [`Gpu`] by the
//! kernel's WGSL text, so a kernel is compiled once per device.

use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::gpu::{Compiled, Gpu};
use wgsl_dsl_core::kernel::{BindingKind, KernelSignature};
use wgsl_dsl_core::shader::Shader;
use wgsl_dsl_exec::binding_layouts;
use wgsl_dsl_exec::ceil_div;
use wgsl_dsl_exec::{DispatchError, DispatchErrorKind};

/// A compiled kernel, ready to dispatch on the [`Gpu`] that compiled it. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Kernel {
    pub(crate) compiled: Arc<Compiled>,
    pub(crate) signature: KernelSignature,
    pub(crate) gpu_id: u64,
}

impl Kernel {
    /// The kernel's signature: entry point, workgroup size, bindings, capabilities.
    pub fn signature(&self) -> &KernelSignature {
        &self.signature
    }

    /// The entry point name.
    pub fn name(&self) -> &str {
        &self.signature.name
    }

    /// `@workgroup_size(x, y, z)`.
    pub fn workgroup_size(&self) -> [u32; 3] {
        self.signature.workgroup_size
    }

    /// Workgroups covering a grid of `size` invocations: `ceil_div(size[d], workgroup_size[d])`
    /// per dimension. E.g. `[37, 1, 1]` with `@workgroup_size(64)` gives `[1, 1, 1]`.
    pub fn workgroups_for(&self, size: [u32; 3]) -> [u32; 3] {
        let w = self.signature.workgroup_size;
        [
            ceil_div(size[0], w[0]),
            ceil_div(size[1], w[1]),
            ceil_div(size[2], w[2]),
        ]
    }

    /// True if both kernels use the same compiled pipeline (a cache hit).
    pub fn shares_pipeline_with(&self, other: &Kernel) -> bool {
        Arc::ptr_eq(&self.compiled, &other.compiled)
    }

    /// The wgpu pipeline, for advanced use.
    pub fn pipeline(&self) -> &wgpu::ComputePipeline {
        &self.compiled.pipeline
    }

    /// Record into `pass` a dispatch of this kernel over `workgroups` with bind group 0
    /// `group` (made for it by `Gpu::prepare`): sets the pass's pipeline and bind group 0.
    pub(crate) fn record(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        group: &wgpu::BindGroup,
        workgroups: [u32; 3],
    ) {
        pass.set_pipeline(&self.compiled.pipeline);
        pass.set_bind_group(0, group, &[]);
        let [x, y, z] = workgroups;
        pass.dispatch_workgroups(x, y, z);
    }
}

impl Gpu {
    /// Compile `shader` into a compute pipeline on this device, or return the cached one
    /// (keyed by the WGSL text and entry point). The shader module is created from the
    /// validated `naga::Module` (`wgpu::ShaderSource::Naga`); the bind group layout comes
    /// from `shader.signature.bindings` (group 0; storage read, storage read-write,
    /// uniform, storage texture or sampled texture per binding; compute stage), never from wgpu's automatic layout.
    ///
    /// # Errors
    /// [`DispatchErrorKind::MissingCapability`] if the kernel needs a capability this device lacks
    /// (see [`Gpu::capabilities`]); [`DispatchErrorKind::ExceedsDevice`] if it needs more of a
    /// device limit than [`Gpu::limits`] has (workgroup size and memory, bindings per stage,
    /// binding sizes: [`check_limits`](super::check_limits));
    /// [`DispatchErrorKind::UnsupportedCooperativeShape`] if it
    /// multiplies cooperative matrices in a configuration the adapter does not list
    /// ([`Gpu::cooperative_shapes`]); [`DispatchErrorKind::Layout`] if a declared binding is missing
    /// from the module or its types cannot be laid out; [`DispatchErrorKind::Wgpu`] if wgpu rejects
    /// the module or pipeline; [`DispatchErrorKind::Device`] if the device is lost.
    pub fn compile(&self, shader: &Shader) -> Result<Kernel, DispatchError> {
        let sig = &shader.signature;
        wgsl_dsl_exec::check_limits(shader, &self.device_limits(), self.capabilities())?;
        if !sig.cooperative_shapes.is_empty() {
            let supported = self.cooperative_shapes();
            if let Some(shape) = sig
                .cooperative_shapes
                .iter()
                .find(|s| !supported.contains(s))
            {
                return Err(DispatchError::new(
                    sig.name.clone(),
                    DispatchErrorKind::UnsupportedCooperativeShape {
                        shape: *shape,
                        supported,
                    },
                ));
            }
        }
        let key = format!("{}\n{}", sig.name, shader.wgsl);
        let cached = self
            .pipelines
            .lock()
            .ok()
            .and_then(|c| c.get(&key).cloned());
        let compiled = match cached {
            Some(c) => c,
            None => {
                let c = Arc::new(self.build_pipeline(shader)?);
                self.compiles.fetch_add(1, Ordering::Relaxed);
                if let Ok(mut cache) = self.pipelines.lock() {
                    Arc::clone(cache.entry(key).or_insert(c))
                } else {
                    c
                }
            }
        };
        Ok(Kernel {
            compiled,
            signature: sig.clone(),
            gpu_id: self.id,
        })
    }

    fn build_pipeline(&self, shader: &Shader) -> Result<Compiled, DispatchError> {
        let sig = &shader.signature;
        let layouts = binding_layouts(shader)?;
        let entries = layout_entries(sig)?;
        let label = Some(sig.name.as_str());
        self.scoped(|| {
            let module = self
                .device
                .create_shader_module(wgpu::ShaderModuleDescriptor {
                    label,
                    source: wgpu::ShaderSource::Naga(Cow::Owned(shader.module.clone())),
                });
            let bind_group_layout =
                self.device
                    .create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                        label,
                        entries: &entries,
                    });
            let layout = self
                .device
                .create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                    label,
                    bind_group_layouts: &[Some(&bind_group_layout)],
                    immediate_size: 0,
                });
            let pipeline = self
                .device
                .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                    label,
                    layout: Some(&layout),
                    module: &module,
                    entry_point: Some(&sig.name),
                    compilation_options: Default::default(),
                    cache: None,
                });
            Compiled {
                id: super::gpu::NEXT_ID.fetch_add(1, Ordering::Relaxed),
                pipeline,
                bind_group_layout,
                layouts,
            }
        })
    }
}

/// The bind group layout entries of a kernel's bindings, in order: group 0 only; storage
/// read, storage read-write, uniform, storage texture or sampled texture per binding, compute
/// stage, no dynamic offsets or minimum sizes (the dispatch checks sizes).
///
/// # Errors
/// [`DispatchErrorKind::Layout`] for a binding outside group 0 or a texture binding of a
/// non-texture type.
pub(crate) fn layout_entries(
    sig: &KernelSignature,
) -> Result<Vec<wgpu::BindGroupLayoutEntry>, DispatchError> {
    if let Some(b) = sig.bindings.iter().find(|b| b.group != 0) {
        return Err(DispatchError::new(
            sig.name.clone(),
            DispatchErrorKind::Layout {
                message: format!(
                    "binding `{}` is in group {}; the runtime binds group 0 only",
                    b.name, b.group
                ),
            },
        ));
    }
    sig.bindings
        .iter()
        .map(|b| {
            let buffer = |ty| wgpu::BindingType::Buffer {
                ty,
                has_dynamic_offset: false,
                min_binding_size: None,
            };
            Ok(wgpu::BindGroupLayoutEntry {
                binding: b.binding,
                visibility: wgpu::ShaderStages::COMPUTE,
                ty: match (b.kind, &b.ty) {
                    (BindingKind::Texture, wgsl_dsl_core::types::Ty::Texture(t)) => {
                        super::texture::binding_type(*t)
                    }
                    (BindingKind::StorageRead, _) => {
                        buffer(wgpu::BufferBindingType::Storage { read_only: true })
                    }
                    (BindingKind::Uniform, _) => buffer(wgpu::BufferBindingType::Uniform),
                    (BindingKind::StorageReadWrite, _) => {
                        buffer(wgpu::BufferBindingType::Storage { read_only: false })
                    }
                    (BindingKind::Texture, other) => {
                        return Err(DispatchError::new(
                            sig.name.clone(),
                            DispatchErrorKind::Layout {
                                message: format!(
                                    "binding `{}` is a texture binding of type {}",
                                    b.name,
                                    other.wgsl_name()
                                ),
                            },
                        ));
                    }
                },
                count: None,
            })
        })
        .collect()
}
