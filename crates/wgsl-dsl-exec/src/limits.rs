//! The device limits kernels and dispatches are checked against: [`Limits`], the executors'
//! own type (the runtime converts wgpu's with `Gpu::device_limits`), and [`DeviceLimit`], one
//! of them by name.

/// The device limits the executors check kernels and dispatches against: the fields of
/// WebGPU's `GPUSupportedLimits` (WebGPU spec §3.6.2 "Limits") that a compute kernel can
/// exceed, named as `wgpu::Limits` names them. [`Limits::default`] is WebGPU's defaults, the
/// limits every WebGPU device has.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Limits {
    /// Bytes of `var<workgroup>` memory an entry point may use.
    pub max_compute_workgroup_storage_size: u32,
    /// Invocations per workgroup (the product of the workgroup size).
    pub max_compute_invocations_per_workgroup: u32,
    /// Workgroup size along x.
    pub max_compute_workgroup_size_x: u32,
    /// Workgroup size along y.
    pub max_compute_workgroup_size_y: u32,
    /// Workgroup size along z.
    pub max_compute_workgroup_size_z: u32,
    /// Workgroups per dimension of one dispatch.
    pub max_compute_workgroups_per_dimension: u32,
    /// Storage buffer bindings (read-only or read-write) per shader stage.
    pub max_storage_buffers_per_shader_stage: u32,
    /// Uniform buffer bindings per shader stage.
    pub max_uniform_buffers_per_shader_stage: u32,
    /// Storage texture bindings per shader stage.
    pub max_storage_textures_per_shader_stage: u32,
    /// Sampled texture bindings per shader stage.
    pub max_sampled_textures_per_shader_stage: u32,
    /// The largest binding number plus one.
    pub max_bindings_per_bind_group: u32,
    /// Bytes of one storage buffer binding.
    pub max_storage_buffer_binding_size: u64,
    /// Bytes of one uniform buffer binding.
    pub max_uniform_buffer_binding_size: u64,
}

impl Default for Limits {
    /// WebGPU's default limits (WebGPU spec §3.6.2, `wgpu::Limits::default()`): 16 KiB of
    /// workgroup memory, 256 invocations per workgroup (256 x 256 x 64), 65535 workgroups per
    /// dimension, 8 storage and 12 uniform buffers, 4 storage and 16 sampled textures per
    /// stage, 1000 bindings per bind group, 128 MiB storage and 64 KiB uniform bindings: the
    /// limits [`TargetLimits::default`](wgsl_dsl_core::TargetLimits) builds for.
    fn default() -> Self {
        Limits {
            max_compute_workgroup_storage_size: 16384,
            max_compute_invocations_per_workgroup: 256,
            max_compute_workgroup_size_x: 256,
            max_compute_workgroup_size_y: 256,
            max_compute_workgroup_size_z: 64,
            max_compute_workgroups_per_dimension: 65535,
            max_storage_buffers_per_shader_stage: 8,
            max_uniform_buffers_per_shader_stage: 12,
            max_storage_textures_per_shader_stage: 4,
            max_sampled_textures_per_shader_stage: 16,
            max_bindings_per_bind_group: 1000,
            max_storage_buffer_binding_size: 128 << 20,
            max_uniform_buffer_binding_size: 64 << 10,
        }
    }
}

/// The limits an interpreter (`wgsl_dsl::interp::Interpreter`) checks by default
/// (`wgsl_dsl::interp::InterpOptions::limits`): WebGPU's defaults ([`Limits::default`]),
/// except the number of bindings (storage and uniform buffers per shader stage, bindings per
/// bind group), which the interpreter does not restrict: kernels of more than WebGPU's 8
/// storage bindings (the MLP's fused updates bind 10 or 11) run on most native GPUs, and on
/// the interpreter.
pub fn interpreter_limits() -> Limits {
    Limits {
        max_storage_buffers_per_shader_stage: u32::MAX,
        max_uniform_buffers_per_shader_stage: u32::MAX,
        max_bindings_per_bind_group: u32::MAX,
        ..Limits::default()
    }
}

/// A device limit a kernel can exceed, by its [`Limits`] field (WebGPU spec §3.6.2
/// "Limits", `GPUSupportedLimits`, in camel case there).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DeviceLimit {
    /// `max_compute_workgroup_storage_size`: bytes of `var<workgroup>` memory the entry point
    /// uses, each variable's size rounded up to 16 (WebGPU spec, `createComputePipeline`).
    WorkgroupStorageSize,
    /// `max_compute_invocations_per_workgroup`: the product of the workgroup size.
    InvocationsPerWorkgroup,
    /// `max_compute_workgroup_size_x`.
    WorkgroupSizeX,
    /// `max_compute_workgroup_size_y`.
    WorkgroupSizeY,
    /// `max_compute_workgroup_size_z`.
    WorkgroupSizeZ,
    /// `max_storage_buffers_per_shader_stage`: storage bindings, read-only or read-write.
    StorageBuffersPerShaderStage,
    /// `max_uniform_buffers_per_shader_stage`: uniform bindings.
    UniformBuffersPerShaderStage,
    /// `max_storage_textures_per_shader_stage`: `texture_storage_2d` bindings.
    StorageTexturesPerShaderStage,
    /// `max_sampled_textures_per_shader_stage`: `texture_2d` bindings.
    SampledTexturesPerShaderStage,
    /// `max_bindings_per_bind_group`: the largest binding number plus one.
    BindingsPerBindGroup,
    /// `max_storage_buffer_binding_size`: bytes of a storage binding's store type; for a
    /// runtime-sized array, of its fixed part (one element: a longer buffer is checked when
    /// it is bound, the same [`DispatchErrorKind::ExceedsDevice`](crate::DispatchErrorKind::ExceedsDevice)).
    StorageBufferBindingSize,
    /// `max_uniform_buffer_binding_size`: bytes of a uniform binding's store type.
    UniformBufferBindingSize,
}

impl DeviceLimit {
    /// The [`Limits`] (and `wgpu::Limits`) field.
    pub fn name(self) -> &'static str {
        match self {
            DeviceLimit::WorkgroupStorageSize => "max_compute_workgroup_storage_size",
            DeviceLimit::InvocationsPerWorkgroup => "max_compute_invocations_per_workgroup",
            DeviceLimit::WorkgroupSizeX => "max_compute_workgroup_size_x",
            DeviceLimit::WorkgroupSizeY => "max_compute_workgroup_size_y",
            DeviceLimit::WorkgroupSizeZ => "max_compute_workgroup_size_z",
            DeviceLimit::StorageBuffersPerShaderStage => "max_storage_buffers_per_shader_stage",
            DeviceLimit::UniformBuffersPerShaderStage => "max_uniform_buffers_per_shader_stage",
            DeviceLimit::StorageTexturesPerShaderStage => "max_storage_textures_per_shader_stage",
            DeviceLimit::SampledTexturesPerShaderStage => "max_sampled_textures_per_shader_stage",
            DeviceLimit::BindingsPerBindGroup => "max_bindings_per_bind_group",
            DeviceLimit::StorageBufferBindingSize => "max_storage_buffer_binding_size",
            DeviceLimit::UniformBufferBindingSize => "max_uniform_buffer_binding_size",
        }
    }

    /// What the limit counts.
    pub fn unit(self) -> &'static str {
        match self {
            DeviceLimit::WorkgroupStorageSize => "bytes of workgroup memory",
            DeviceLimit::InvocationsPerWorkgroup => "invocations per workgroup",
            DeviceLimit::WorkgroupSizeX => "invocations along x",
            DeviceLimit::WorkgroupSizeY => "invocations along y",
            DeviceLimit::WorkgroupSizeZ => "invocations along z",
            DeviceLimit::StorageBuffersPerShaderStage => "storage buffer bindings",
            DeviceLimit::UniformBuffersPerShaderStage => "uniform buffer bindings",
            DeviceLimit::StorageTexturesPerShaderStage => "storage texture bindings",
            DeviceLimit::SampledTexturesPerShaderStage => "sampled texture bindings",
            DeviceLimit::BindingsPerBindGroup => "binding numbers",
            DeviceLimit::StorageBufferBindingSize | DeviceLimit::UniformBufferBindingSize => {
                "bytes"
            }
        }
    }

    /// The device's value of this limit.
    pub fn of(self, limits: &Limits) -> u64 {
        match self {
            DeviceLimit::WorkgroupStorageSize => limits.max_compute_workgroup_storage_size.into(),
            DeviceLimit::InvocationsPerWorkgroup => {
                limits.max_compute_invocations_per_workgroup.into()
            }
            DeviceLimit::WorkgroupSizeX => limits.max_compute_workgroup_size_x.into(),
            DeviceLimit::WorkgroupSizeY => limits.max_compute_workgroup_size_y.into(),
            DeviceLimit::WorkgroupSizeZ => limits.max_compute_workgroup_size_z.into(),
            DeviceLimit::StorageBuffersPerShaderStage => {
                limits.max_storage_buffers_per_shader_stage.into()
            }
            DeviceLimit::UniformBuffersPerShaderStage => {
                limits.max_uniform_buffers_per_shader_stage.into()
            }
            DeviceLimit::StorageTexturesPerShaderStage => {
                limits.max_storage_textures_per_shader_stage.into()
            }
            DeviceLimit::SampledTexturesPerShaderStage => {
                limits.max_sampled_textures_per_shader_stage.into()
            }
            DeviceLimit::BindingsPerBindGroup => limits.max_bindings_per_bind_group.into(),
            DeviceLimit::StorageBufferBindingSize => limits.max_storage_buffer_binding_size,
            DeviceLimit::UniformBufferBindingSize => limits.max_uniform_buffer_binding_size,
        }
    }
}

impl std::fmt::Display for DeviceLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
