//! Checking dispatch arguments against a kernel's bindings, making bind groups, and
//! [`Gpu::dispatch`].

use std::panic::Location;

use super::buffer::{Arg, BindArg, Resource};
use super::gpu::Gpu;
use super::pipeline::Kernel;
use wgsl_dsl_core::kernel::{BindingDesc, BindingKind};
use wgsl_dsl_core::types::Ty;
use wgsl_dsl_exec::{ArgShape, check_bindings, check_grid};
use wgsl_dsl_exec::{DispatchError, DispatchErrorKind};

impl Gpu {
    /// Run `kernel` over `workgroups` workgroups with `args` bound to its bindings, in
    /// declaration order, and submit. Returns once submitted, without waiting: read a buffer
    /// back (or call [`Gpu::wait`]) to wait for the result.
    ///
    /// Before anything is submitted, each argument is checked against its binding (see
    /// [`Gpu::check`]) and each workgroup count against `max_compute_workgroups_per_dimension`.
    /// A count of zero in any dimension is a no-op.
    ///
    /// # Errors
    /// [`DispatchErrorKind::ArgCount`], [`DispatchErrorKind::Binding`], [`DispatchErrorKind::TooSmall`],
    /// [`DispatchErrorKind::Aliased`], [`DispatchErrorKind::ExceedsDevice`] (a binding larger than the
    /// device's binding size limit), [`DispatchErrorKind::Limit`] (a workgroup count),
    /// [`DispatchErrorKind::WrongDevice`]; [`DispatchErrorKind::Wgpu`] for errors wgpu reports while recording or submitting.
    #[track_caller]
    pub fn dispatch(
        &self,
        kernel: &Kernel,
        args: &[&dyn BindArg],
        workgroups: [u32; 3],
    ) -> Result<(), DispatchError> {
        let caller = Location::caller();
        let mut rec = self.recorder();
        rec.dispatch(kernel, args, workgroups)?;
        rec.submit().map_err(|e| e.called_at(caller))
    }

    /// Check `args` against `kernel`'s bindings without dispatching, as [`Gpu::dispatch`] and
    /// [`Recorder::dispatch`](super::Recorder::dispatch) do. Per binding `b` and argument `a`
    /// (a buffer of `len` elements of host type `T`):
    /// - there are as many arguments as bindings, each made on this `Gpu`;
    /// - `array<E>` (runtime-sized): `T` is `E`, or `E` is `atomic<T>`; `size_of::<T>()`
    ///   equals the WGSL array stride;
    /// - `array<E, N>`: `T` is `E` (or `E` is `atomic<T>`), stride as above, or `T` is the
    ///   whole array type; the buffer holds at least the array's bytes;
    /// - any other type (scalar, struct, `atomic<S>`): `T` is the type (`S` for
    ///   `atomic<S>`), and the buffer holds at least the type's WGSL size in bytes;
    /// - the buffer fits `max_storage_buffer_binding_size` or
    ///   `max_uniform_buffer_binding_size` ([`DispatchErrorKind::ExceedsDevice`], as
    ///   [`Gpu::compile`] reports a fixed-size binding beyond them);
    /// - a buffer bound twice is bound read-only both times (WebGPU forbids a `read_write`
    ///   binding aliasing another).
    ///
    /// Whether a binding is storage (read or read-write) or uniform needs no check: every
    /// [`GpuBuffer`](super::GpuBuffer) has both usages.
    ///
    /// # Errors
    /// The first failed check, naming the kernel and binding: [`DispatchErrorKind::ArgCount`],
    /// [`DispatchErrorKind::Binding`], [`DispatchErrorKind::TooSmall`], [`DispatchErrorKind::Aliased`],
    /// [`DispatchErrorKind::ExceedsDevice`], [`DispatchErrorKind::WrongDevice`].
    #[track_caller]
    pub fn check(&self, kernel: &Kernel, args: &[&dyn BindArg]) -> Result<(), DispatchError> {
        let caller = Location::caller();
        if kernel.gpu_id != self.id {
            return Err(
                DispatchError::from(DispatchErrorKind::WrongDevice("the kernel")).called_at(caller),
            );
        }
        let args: Vec<Arg<'_>> = args.iter().map(|a| a.arg()).collect();
        check_args(self, kernel, &args).map_err(|e| e.called_at(caller))
    }

    /// Check `kernel`, `args` and `workgroups`, and give the bind group: from the cache when
    /// this kernel was dispatched with these buffers before (their checks passed then, and a
    /// buffer's type and size never change), else checked, made and cached. `None` for an
    /// empty grid (nothing to run).
    pub(crate) fn prepare(
        &self,
        kernel: &Kernel,
        args: &[&dyn BindArg],
        workgroups: [u32; 3],
    ) -> Result<Option<wgpu::BindGroup>, DispatchError> {
        if kernel.gpu_id != self.id {
            return Err(DispatchError::from(DispatchErrorKind::WrongDevice(
                "the kernel",
            )));
        }
        check_grid(
            &kernel.signature.name,
            workgroups,
            self.limits().max_compute_workgroups_per_dimension,
        )?;
        // The key: the pipeline's id, then each buffer's (ids are unique in the process).
        let mut stack = [0u64; KEY_ON_STACK];
        let mut heap = Vec::new();
        let key: &mut [u64] = if args.len() < KEY_ON_STACK {
            &mut stack[..=args.len()]
        } else {
            heap.resize(args.len() + 1, 0);
            &mut heap
        };
        key[0] = kernel.compiled.id;
        for (slot, a) in key[1..].iter_mut().zip(args) {
            *slot = a.arg().id;
        }
        let key: &[u64] = key;
        let cached = self.bind_groups.lock().ok().and_then(|mut c| c.get(key));
        if let Some(group) = cached {
            return Ok((!workgroups.contains(&0)).then_some(group));
        }
        let args: Vec<Arg<'_>> = args.iter().map(|a| a.arg()).collect();
        check_args(self, kernel, &args)?;
        if workgroups.contains(&0) {
            return Ok(None);
        }
        let entries: Vec<wgpu::BindGroupEntry<'_>> = kernel
            .signature
            .bindings
            .iter()
            .zip(&args)
            .map(|(b, a)| wgpu::BindGroupEntry {
                binding: b.binding,
                resource: match a.resource {
                    Resource::Buffer(buffer) => buffer.as_entire_binding(),
                    Resource::Texture { view, .. } => wgpu::BindingResource::TextureView(view),
                },
            })
            .collect();
        let group = self.validated(|| {
            self.device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some(&kernel.signature.name),
                layout: &kernel.compiled.bind_group_layout,
                entries: &entries,
            })
        })?;
        if let Ok(mut cache) = self.bind_groups.lock() {
            let alive: Vec<&std::sync::Arc<()>> = args.iter().map(|a| a.alive).collect();
            cache.insert(key, group.clone(), &alive);
        }
        Ok(Some(group))
    }
}

/// Cache keys of dispatches with fewer arguments than this are built on the stack.
const KEY_ON_STACK: usize = 16;

fn check_args(gpu: &Gpu, kernel: &Kernel, args: &[Arg<'_>]) -> Result<(), DispatchError> {
    // Count first, then the device of every buffer and texture, then the shared checks.
    if args.len() == kernel.signature.bindings.len()
        && let Some(a) = args.iter().find(|a| a.gpu_id != gpu.id)
    {
        return Err(DispatchError::from(DispatchErrorKind::WrongDevice(
            match a.resource {
                Resource::Texture { .. } => "a texture argument",
                Resource::Buffer(_) => "a buffer argument",
            },
        )));
    }
    if args.len() == kernel.signature.bindings.len() {
        for (b, a) in kernel.signature.bindings.iter().zip(args) {
            check_resource(&kernel.signature.name, b, a)?;
        }
    }
    let shapes: Vec<ArgShape> = args
        .iter()
        .map(|a| ArgShape {
            ty: (a.ty)(),
            elem_size: a.elem_size,
            len: a.len,
            bound_bytes: match a.resource {
                Resource::Buffer(buffer) => buffer.size(),
                Resource::Texture { .. } => 0,
            },
            id: a.id,
        })
        .collect();
    check_bindings(
        &kernel.signature,
        &kernel.compiled.layouts,
        &shapes,
        &gpu.device_limits(),
    )
}

/// A texture binding takes a texture its type accepts ([`TextureTy::accepts`]); any other
/// binding takes a buffer (checked further by [`check_bindings`]).
///
/// [`TextureTy::accepts`]: wgsl_dsl_core::types::TextureTy::accepts
fn check_resource(kernel: &str, b: &BindingDesc, a: &Arg<'_>) -> Result<(), DispatchError> {
    let found = match a.resource {
        Resource::Texture { format, size, .. } => {
            if let Ty::Texture(t) = &b.ty
                && t.accepts(format)
            {
                return Ok(());
            }
            format!(
                "a {}x{} texture of {}",
                size[0],
                size[1],
                format.wgsl_name()
            )
        }
        Resource::Buffer(buffer) => match &b.ty {
            Ty::Texture(_) => format!("a buffer of {}", (a.ty)().wgsl_name()),
            _ => return check_usage(kernel, b, buffer.usage()),
        },
    };
    let expected = match &b.ty {
        Ty::Texture(t) => match t {
            wgsl_dsl_core::types::TextureTy::Storage { format, .. } => {
                format!("a texture of {} ({})", format.wgsl_name(), t.wgsl_name())
            }
            wgsl_dsl_core::types::TextureTy::Sampled(s) => format!(
                "a texture of a format with {} channels ({})",
                s.wgsl_name(),
                t.wgsl_name()
            ),
        },
        other => format!("a buffer of {}", other.wgsl_name()),
    };
    Err(DispatchError::new(
        kernel.to_string(),
        DispatchErrorKind::Resource {
            binding: b.name.clone(),
            index: b.binding,
            expected,
            found,
        },
    ))
}

/// A buffer bound to `b` has the usage its kind needs (`UNIFORM` or `STORAGE`): always true
/// of the runtime's own buffers, not of a caller's ([`GpuBuffer::from_wgpu`](super::GpuBuffer::from_wgpu)).
fn check_usage(
    kernel: &str,
    b: &BindingDesc,
    found: wgpu::BufferUsages,
) -> Result<(), DispatchError> {
    let needed = match b.kind {
        BindingKind::Uniform => wgpu::BufferUsages::UNIFORM,
        _ => wgpu::BufferUsages::STORAGE,
    };
    if found.contains(needed) {
        Ok(())
    } else {
        Err(DispatchError::from(DispatchErrorKind::Usage {
            what: format!("kernel `{kernel}`, binding {} `{}`", b.binding, b.name),
            needed: format!("{needed:?}"),
            found: format!("{found:?}"),
        }))
    }
}
