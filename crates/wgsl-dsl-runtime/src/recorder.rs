//! [`Recorder`]: many dispatches, copies and clears in one command encoder, consecutive dispatches in
//! one compute pass, one submit. On an H200 through Vulkan small dependent dispatches cost
//! ~4 us each inside one compute pass and ~23 us each with a pass per dispatch.

use bytemuck::Pod;

use super::buffer::{BindArg, GpuBuffer};
use super::gpu::Gpu;
use super::pipeline::Kernel;
use super::timing::Timing;
use wgsl_dsl_core::types::WgslType;
use wgsl_dsl_exec::{DispatchError, DispatchErrorKind};

/// Records dispatches and buffer copies for one submit. Consecutive dispatches share one
/// compute pass; a copy ends the pass (copies cannot happen inside one) and the next dispatch
/// opens another. wgpu orders the recorded commands and inserts the barriers between
/// dependent dispatches.
///
/// A dispatch of a kernel with buffers it was dispatched with before costs a cache lookup
/// (the bind group and the argument checks are made on first use, see
/// [`Gpu::bind_group_stats`]) and wgpu's own recording.
///
/// Nothing runs until [`Recorder::submit`]; dropping a recorder discards what it recorded.
pub struct Recorder<'g> {
    gpu: &'g Gpu,
    encoder: wgpu::CommandEncoder,
    pass: Option<wgpu::ComputePass<'static>>,
    pub(crate) timing: Option<Timing>,
    passes: usize,
    dispatches: usize,
}

impl std::fmt::Debug for Recorder<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorder")
            .field("passes", &self.passes)
            .field("dispatches", &self.dispatches)
            .field("timed", &self.timing.is_some())
            .finish_non_exhaustive()
    }
}

impl Gpu {
    /// A [`Recorder`] for many dispatches and copies in one submit.
    pub fn recorder(&self) -> Recorder<'_> {
        Recorder {
            gpu: self,
            encoder: self
                .device
                .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                    label: Some("wgsl-dsl recorder"),
                }),
            pass: None,
            timing: None,
            passes: 0,
            dispatches: 0,
        }
    }
}

impl Recorder<'_> {
    /// Record a dispatch of `kernel` over `workgroups` with `args`, into the current compute
    /// pass (opening one if needed). The same checks as [`Gpu::dispatch`], made now; on error
    /// nothing is recorded and the recorder stays usable.
    ///
    /// # Errors
    /// As [`Gpu::dispatch`].
    #[track_caller]
    pub fn dispatch(
        &mut self,
        kernel: &Kernel,
        args: &[&dyn BindArg],
        workgroups: [u32; 3],
    ) -> Result<(), DispatchError> {
        let caller = std::panic::Location::caller();
        self.record_dispatch(kernel, args, workgroups)
            .map_err(|e| e.called_at(caller))
    }

    /// [`Recorder::dispatch`], its errors without the caller.
    fn record_dispatch(
        &mut self,
        kernel: &Kernel,
        args: &[&dyn BindArg],
        workgroups: [u32; 3],
    ) -> Result<(), DispatchError> {
        let Some(group) = self.gpu.prepare(kernel, args, workgroups)? else {
            return Ok(());
        };
        let device = &self.gpu.device;
        if self.timing.as_ref().is_some_and(Timing::pass_per_dispatch) {
            self.end_pass()?;
        }
        if self.pass.is_none() {
            let timestamp_writes = self
                .timing
                .as_mut()
                .and_then(|t| t.pass_writes(device, self.passes));
            let pass = self
                .encoder
                .begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("wgsl-dsl pass"),
                    timestamp_writes,
                })
                .forget_lifetime();
            self.passes += 1;
            self.pass = Some(pass);
        }
        if let Some(pass) = self.pass.as_mut() {
            if let Some(t) = self.timing.as_mut() {
                t.before_dispatch(device, pass);
            }
            kernel.record(pass, &group, workgroups);
            if let Some(t) = self.timing.as_mut() {
                t.after_dispatch(device, pass, &kernel.signature.name, workgroups);
            }
            self.dispatches += 1;
        }
        Ok(())
    }

    /// Record the zeroing of all of `buffer` (wgpu's `clear_buffer`): for a gradient that a
    /// derived backward pass adds into (`Accumulation::Exclusive` or `Atomic`). Ends the
    /// current compute pass; the dispatches recorded after it see zeros.
    ///
    /// # Errors
    /// [`DispatchErrorKind::WrongDevice`] if `buffer` belongs to another [`Gpu`].
    #[track_caller]
    pub fn clear<T: Pod + WgslType>(&mut self, buffer: &GpuBuffer<T>) -> Result<(), DispatchError> {
        if buffer.ids().0 != self.gpu.id {
            return Err(
                DispatchError::from(DispatchErrorKind::WrongDevice("a cleared buffer"))
                    .called_at(std::panic::Location::caller()),
            );
        }
        if buffer.is_empty() {
            return Ok(());
        }
        self.end_pass()?;
        self.encoder.clear_buffer(buffer.raw(), 0, None);
        Ok(())
    }

    /// Record a copy of all of `src` into `dst`. Ends the current compute pass.
    ///
    /// # Errors
    /// [`DispatchErrorKind::Length`] if the lengths differ; [`DispatchErrorKind::Wgpu`] if `src` and
    /// `dst` are the same buffer (WebGPU forbids it); [`DispatchErrorKind::WrongDevice`].
    #[track_caller]
    pub fn copy<T: Pod + WgslType>(
        &mut self,
        src: &GpuBuffer<T>,
        dst: &GpuBuffer<T>,
    ) -> Result<(), DispatchError> {
        let caller = std::panic::Location::caller();
        let ((sg, si), (dg, di)) = (src.ids(), dst.ids());
        if sg != self.gpu.id || dg != self.gpu.id {
            return Err(
                DispatchError::from(DispatchErrorKind::WrongDevice("a copied buffer"))
                    .called_at(caller),
            );
        }
        DispatchError::check_length("Recorder::copy", src.len(), dst.len())
            .map_err(|e| e.called_at(caller))?;
        if si == di {
            return Err(DispatchError::from(DispatchErrorKind::Wgpu(
                "a buffer cannot be copied onto itself".into(),
            ))
            .called_at(caller));
        }
        if src.is_empty() {
            return Ok(());
        }
        self.end_pass()?;
        self.encoder
            .copy_buffer_to_buffer(src.raw(), 0, dst.raw(), 0, src.raw().size());
        Ok(())
    }

    /// Compute passes opened so far.
    pub fn passes(&self) -> usize {
        self.passes
    }

    /// Dispatches recorded so far (empty grids are not recorded).
    pub fn dispatches(&self) -> usize {
        self.dispatches
    }

    pub(crate) fn encoder_mut(&mut self) -> &mut wgpu::CommandEncoder {
        &mut self.encoder
    }

    pub(crate) fn end_pass(&mut self) -> Result<(), DispatchError> {
        if let Some(pass) = self.pass.take() {
            self.gpu.scoped(|| drop(pass))?;
        }
        Ok(())
    }

    /// End the pass, finish the encoder and submit it. Returns without waiting.
    ///
    /// # Errors
    /// [`DispatchErrorKind::Wgpu`] for errors wgpu reports for the recorded commands;
    /// [`DispatchErrorKind::Device`] if the device is lost.
    pub fn submit(mut self) -> Result<(), DispatchError> {
        self.end_pass()?;
        let Recorder { gpu, encoder, .. } = self;
        gpu.scoped(|| {
            gpu.queue.submit([encoder.finish()]);
        })
    }
}
