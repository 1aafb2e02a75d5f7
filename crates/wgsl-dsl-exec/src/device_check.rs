//! A kernel checked against the device it runs on: [`check_limits`], run by the runtime's
//! `Gpu::compile` and the interpreter's `compile` before anything is created, so that a kernel
//! built for other limits is refused with the limit, the kernel's need and the device's value
//! instead of running, or failing in a driver.

use naga::valid::Capabilities;

use crate::error::{DispatchError, DispatchErrorKind};
use crate::limits::{DeviceLimit, Limits};
use wgsl_dsl_core::kernel::BindingKind;
use wgsl_dsl_core::shader::Shader;

/// Check `shader` against a device's `limits` and `capabilities`, from the module itself
/// (what runs, whatever its signature says), in this order: capabilities
/// ([`KernelSignature::capabilities`](wgsl_dsl_core::KernelSignature::capabilities)), workgroup size
/// per dimension, invocations per workgroup, workgroup memory, binding numbers, storage and
/// uniform bindings per stage, then each binding's size. Every [`DeviceLimit`] is checked.
///
/// The runtime's `Gpu::compile` runs it with the device's limits; run it with
/// [`Limits::default()`] to know whether a kernel fits every WebGPU device.
///
/// # Errors
/// [`DispatchErrorKind::MissingCapability`], or [`DispatchErrorKind::ExceedsDevice`] for the first
/// limit exceeded, with the kernel's need and the device's value.
pub fn check_limits(
    shader: &Shader,
    limits: &Limits,
    capabilities: Capabilities,
) -> Result<(), DispatchError> {
    let kernel = || shader.signature.name.clone();
    check_device(shader, limits, capabilities).map_err(|e| match e {
        Shortfall::Capabilities(needed) => {
            DispatchError::new(kernel(), DispatchErrorKind::MissingCapability { needed })
        }
        Shortfall::Limit {
            limit,
            binding,
            needed,
            device,
        } => DispatchError::new(
            kernel(),
            DispatchErrorKind::ExceedsDevice {
                limit,
                binding,
                needed,
                device,
            },
        ),
    })
}

/// What [`check_device`] found missing: capabilities, or the first limit exceeded (with the
/// binding concerned, the kernel's need and the device's value).
#[derive(Clone, Debug, PartialEq)]
pub enum Shortfall {
    /// Capabilities the kernel needs and the device lacks.
    Capabilities(Capabilities),
    /// The first limit the kernel exceeds.
    Limit {
        /// Which limit.
        limit: DeviceLimit,
        /// The binding concerned (its number and name), for the per-binding limits.
        binding: Option<String>,
        /// What the kernel needs.
        needed: u64,
        /// The device's value of the limit.
        device: u64,
    },
}

/// [`check_limits`]'s checks, in its order, returning what is missing rather than an error:
/// for the errors of the runtime's two stages ([`DispatchError`] when compiling,
/// [`DeviceError`](crate::DeviceError) when a caller's device is wrapped by
/// `Gpu::from_wgpu`).
///
/// # Errors
/// The first [`Shortfall`].
pub fn check_device(
    shader: &Shader,
    limits: &Limits,
    capabilities: Capabilities,
) -> Result<(), Shortfall> {
    let sig = &shader.signature;
    let missing = sig.capabilities - capabilities;
    if !missing.is_empty() {
        return Err(Shortfall::Capabilities(missing));
    }
    let check = |limit: DeviceLimit, binding: Option<&wgsl_dsl_core::BindingDesc>, needed: u64| {
        let device = limit.of(limits);
        if needed > device {
            Err(Shortfall::Limit {
                limit,
                binding: binding.map(|b| format!("{} `{}`", b.binding, b.name)),
                needed,
                device,
            })
        } else {
            Ok(())
        }
    };

    let module = &shader.module;
    let size = shader.entry_workgroup_size();
    check(DeviceLimit::WorkgroupSizeX, None, size[0].into())?;
    check(DeviceLimit::WorkgroupSizeY, None, size[1].into())?;
    check(DeviceLimit::WorkgroupSizeZ, None, size[2].into())?;
    let invocations = size.iter().map(|&s| u64::from(s)).product();
    check(DeviceLimit::InvocationsPerWorkgroup, None, invocations)?;

    // A module whose types cannot be laid out has no sizes to check; compiling it reports
    // that (DispatchErrorKind::Layout).
    let mut layouter = naga::proc::Layouter::default();
    let laid_out = layouter.update(module.to_ctx()).is_ok();
    if laid_out {
        let bytes = shader.workgroup_bytes(&layouter);
        check(DeviceLimit::WorkgroupStorageSize, None, bytes)?;
    }

    let bindings = &sig.bindings;
    if let Some(b) = bindings.iter().max_by_key(|b| b.binding) {
        check(
            DeviceLimit::BindingsPerBindGroup,
            Some(b),
            u64::from(b.binding) + 1,
        )?;
    }
    let count = |f: &dyn Fn(&wgsl_dsl_core::kernel::BindingDesc) -> bool| {
        bindings.iter().filter(|b| f(b)).count() as u64
    };
    let uniform = count(&|b| b.kind == BindingKind::Uniform);
    let storage = count(&|b| {
        matches!(
            b.kind,
            BindingKind::StorageRead | BindingKind::StorageReadWrite
        )
    });
    use wgsl_dsl_core::types::{TextureTy, Ty};
    let storage_textures = count(&|b| matches!(b.ty, Ty::Texture(TextureTy::Storage { .. })));
    let sampled_textures = count(&|b| matches!(b.ty, Ty::Texture(TextureTy::Sampled(_))));
    check(DeviceLimit::StorageBuffersPerShaderStage, None, storage)?;
    check(DeviceLimit::UniformBuffersPerShaderStage, None, uniform)?;
    check(
        DeviceLimit::StorageTexturesPerShaderStage,
        None,
        storage_textures,
    )?;
    check(
        DeviceLimit::SampledTexturesPerShaderStage,
        None,
        sampled_textures,
    )?;

    if laid_out {
        for b in bindings {
            let want = naga::ResourceBinding {
                group: b.group,
                binding: b.binding,
            };
            // A declared binding missing from the module is reported by compiling it.
            let Some((_, var)) = module
                .global_variables
                .iter()
                .find(|(_, v)| v.binding.as_ref() == Some(&want))
            else {
                continue;
            };
            let limit = match b.kind {
                BindingKind::Uniform => DeviceLimit::UniformBufferBindingSize,
                // A texture's size is its texture's, checked when it is created.
                BindingKind::Texture => continue,
                _ => DeviceLimit::StorageBufferBindingSize,
            };
            check(limit, Some(b), layouter[var.ty].size.into())?;
        }
    }
    Ok(())
}
