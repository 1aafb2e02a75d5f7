//! The argument checks every executor runs before a dispatch ([`check_bindings`],
//! [`check_grid`]), the typed interface check ([`check_interface`]), and the buffer sizes both
//! executors allocate ([`padded_size`]): one set of checks, the same errors on the GPU and on
//! the interpreter.

use crate::error::{DispatchError, DispatchErrorKind};
use crate::layout::BindingLayout;
use crate::limits::{DeviceLimit, Limits};
use wgsl_dsl_core::kernel::{BindingDesc, BindingKind, KernelSignature};
use wgsl_dsl_core::types::Ty;

/// `ceil(n / d)`: how many groups of `d` cover `n` items. `d = 0` is treated as 1.
pub fn ceil_div(n: u32, d: u32) -> u32 {
    n.div_ceil(d.max(1))
}

/// The alignment of a buffer's size and of copies into and out of it, in bytes (WebGPU's
/// `COPY_BUFFER_ALIGNMENT`, `wgpu::COPY_BUFFER_ALIGNMENT`).
pub const COPY_BUFFER_ALIGNMENT: u64 = 4;

/// The smallest buffer either executor allocates, in bytes.
pub const MIN_BUFFER_BYTES: u64 = 16;

/// `bytes` rounded up to [`COPY_BUFFER_ALIGNMENT`], and at least one element (`elem` bytes) and
/// [`MIN_BUFFER_BYTES`], so an empty buffer can still be bound to an `array<T>` binding: the
/// size of a buffer of `bytes` on either executor.
pub fn padded_size(bytes: u64, elem: u64) -> u64 {
    bytes
        .max(elem)
        .div_ceil(COPY_BUFFER_ALIGNMENT)
        .saturating_mul(COPY_BUFFER_ALIGNMENT)
        .max(MIN_BUFFER_BYTES)
}

/// `Ok` if a buffer of `len` scalars can be seen as `len / 4` vectors (the `as_vec4` of the
/// runtime's `GpuBuffer` and of the interpreter's `HostBuffer`, named by `what`).
///
/// # Errors
/// [`DispatchErrorKind::Length`] unless `len` is a multiple of 4.
pub fn vec4_length(what: &'static str, len: usize) -> Result<(), DispatchError> {
    view_length(what, len, 4)
}

/// `Ok` if a buffer of `len` scalars can be seen as `len / per` elements of `per` scalars'
/// bytes each (the `view` of the runtime's `GpuBuffer` and of the interpreter's
/// `HostBuffer`, named by `what`).
///
/// # Errors
/// [`DispatchErrorKind::Length`] unless `per > 0` and `len` is a multiple of `per`.
pub fn view_length(what: &'static str, len: usize, per: usize) -> Result<(), DispatchError> {
    if per == 0 || !len.is_multiple_of(per) {
        return Err(DispatchError::from(DispatchErrorKind::Length {
            what,
            expected: len.next_multiple_of(per.max(1)),
            found: len,
        }));
    }
    Ok(())
}

/// One dispatch argument as the checks see it, whichever executor runs the kernel (the GPU
/// runtime or the CPU interpreter, `wgsl_dsl::interp`).
#[derive(Clone, Debug)]
pub struct ArgShape {
    /// The WGSL type of the host elements.
    pub ty: Ty,
    /// `size_of` one host element.
    pub elem_size: u64,
    /// Number of elements.
    pub len: usize,
    /// Bytes bound (the allocation, padding included), checked against the binding size limits.
    pub bound_bytes: u64,
    /// Unique buffer id: the same id twice is the same buffer bound twice.
    pub id: u64,
}

/// The argument checks of the runtime's `Gpu::check`, shared by every executor: count, element types and
/// strides, minimum sizes, binding size limits, aliasing of read-write bindings.
pub fn check_bindings(
    sig: &KernelSignature,
    layouts: &[BindingLayout],
    args: &[ArgShape],
    limits: &Limits,
) -> Result<(), DispatchError> {
    if args.len() != sig.bindings.len() {
        return Err(DispatchError::new(
            sig.name.clone(),
            DispatchErrorKind::ArgCount {
                expected: sig.bindings.len(),
                found: args.len(),
            },
        ));
    }
    for ((b, layout), a) in sig.bindings.iter().zip(layouts).zip(args) {
        check_one(&sig.name, b, layout, a)?;
        let limit = match b.kind {
            BindingKind::Uniform => DeviceLimit::UniformBufferBindingSize,
            _ => DeviceLimit::StorageBufferBindingSize,
        };
        let device = limit.of(limits);
        if a.bound_bytes > device {
            return Err(DispatchError::new(
                sig.name.clone(),
                DispatchErrorKind::ExceedsDevice {
                    limit,
                    binding: Some(format!("{} `{}`", b.binding, b.name)),
                    needed: a.bound_bytes,
                    device,
                },
            ));
        }
    }
    for (i, (bi, ai)) in sig.bindings.iter().zip(args).enumerate() {
        for (bj, aj) in sig.bindings.iter().zip(args).skip(i + 1) {
            let writes = |b: &BindingDesc| match &b.ty {
                Ty::Texture(t) => t.writes(),
                _ => b.kind == BindingKind::StorageReadWrite,
            };
            if ai.id == aj.id && (writes(bi) || writes(bj)) {
                return Err(DispatchError::new(
                    sig.name.clone(),
                    DispatchErrorKind::Aliased {
                        first: bi.binding,
                        first_name: bi.name.clone(),
                        second: bj.binding,
                        second_name: bj.name.clone(),
                    },
                ));
            }
        }
    }
    Ok(())
}

/// The grid check shared by every executor: each workgroup count within
/// `max_compute_workgroups_per_dimension`.
pub fn check_grid(kernel: &str, workgroups: [u32; 3], limit: u32) -> Result<(), DispatchError> {
    if let Some(&n) = workgroups.iter().find(|&&n| n > limit) {
        return Err(DispatchError::new(
            kernel,
            DispatchErrorKind::Limit {
                what: format!("workgroup count {workgroups:?}"),
                value: u64::from(n),
                limit: u64::from(limit),
            },
        ));
    }
    Ok(())
}

/// `t` with an `atomic<S>` replaced by `S`: what the host stores for it.
fn host_of(t: &Ty) -> &Ty {
    static U32: Ty = Ty::Scalar(wgsl_dsl_core::types::ScalarTy::U32);
    static I32: Ty = Ty::Scalar(wgsl_dsl_core::types::ScalarTy::I32);
    match t {
        Ty::Atomic(wgsl_dsl_core::types::ScalarTy::U32) => &U32,
        Ty::Atomic(wgsl_dsl_core::types::ScalarTy::I32) => &I32,
        other => other,
    }
}

fn check_one(
    kernel: &str,
    b: &BindingDesc,
    layout: &BindingLayout,
    a: &ArgShape,
) -> Result<(), DispatchError> {
    if let Ty::Texture(_) = b.ty {
        // The executor that binds textures checked the argument (`check_resource`); the CPU
        // interpreter runs no kernel with textures.
        return Ok(());
    }
    let found = a.ty.clone();
    let mismatch = |expected: String, found: String| {
        DispatchError::new(
            kernel.to_string(),
            DispatchErrorKind::Binding {
                binding: b.name.clone(),
                index: b.binding,
                expected,
                found,
            },
        )
    };
    let elem_matches = match &b.ty {
        Ty::Array { elem, .. } => *host_of(elem) == found,
        _ => false,
    };
    if elem_matches {
        // Elements of the host type must sit at the WGSL stride.
        if let Some(stride) = layout.stride
            && stride != a.elem_size
        {
            return Err(mismatch(
                format!("{} (elements every {stride} bytes)", b.ty.wgsl_name()),
                format!(
                    "{} of {} bytes each (the host type's size must equal the WGSL stride)",
                    found.wgsl_name(),
                    a.elem_size
                ),
            ));
        }
    } else if *host_of(&b.ty) != found || matches!(b.ty, Ty::Array { len: None, .. }) {
        return Err(mismatch(b.ty.wgsl_name(), found.wgsl_name()));
    }
    let bytes = (a.len as u64).saturating_mul(a.elem_size);
    let needed = match &b.ty {
        Ty::Array { len: None, .. } => 0,
        _ => layout.min_size,
    };
    if bytes < needed {
        return Err(DispatchError::new(
            kernel.to_string(),
            DispatchErrorKind::TooSmall {
                binding: b.name.clone(),
                index: b.binding,
                needed,
                found: bytes,
            },
        ));
    }
    Ok(())
}
