//! [`Recorder`]: many dispatches and copies in one command encoder, consecutive dispatches in
//! one compute pass, one submit. On an H200 through Vulkan small dependent dispatches cost
//! ~4 us each inside one compute pass and ~23 us each with a pass per dispatch.

use std::time::Duration;

use bytemuck::Pod;

use super::buffer::{BindArg, GpuBuffer};
use super::error::{DeviceError, DispatchError};
use super::gpu::Gpu;
use super::pipeline::Kernel;
use crate::types::WgslType;

/// Records dispatches and buffer copies for one submit. Consecutive dispatches share one
/// compute pass; a copy ends the pass (copies cannot happen inside one) and the next dispatch
/// opens another. wgpu orders the recorded commands and inserts the barriers between
/// dependent dispatches.
///
/// Nothing runs until [`Recorder::submit`]; dropping a recorder discards what it recorded.
pub struct Recorder<'g> {
    gpu: &'g Gpu,
    encoder: wgpu::CommandEncoder,
    pass: Option<wgpu::ComputePass<'static>>,
    timer: Option<Timer>,
    passes: usize,
    dispatches: usize,
}

/// Timestamp queries: index 0 at the start of the first pass, 1 at the end of each pass
/// (the last one written wins).
struct Timer {
    queries: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    readback: wgpu::Buffer,
}

impl std::fmt::Debug for Recorder<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorder")
            .field("passes", &self.passes)
            .field("dispatches", &self.dispatches)
            .field("timed", &self.timer.is_some())
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
            timer: None,
            passes: 0,
            dispatches: 0,
        }
    }

    /// Record with `record`, submit, wait, and return the GPU time from the start of the
    /// first compute pass to the end of the last one, measured with timestamp queries.
    /// `Ok(None)` when the device lacks `TIMESTAMP_QUERY` or nothing was dispatched (the work
    /// still runs).
    ///
    /// # Errors
    /// Any error of `record`, of [`Recorder::submit`], or of waiting ([`DispatchError::Device`]).
    pub fn time(
        &self,
        record: impl FnOnce(&mut Recorder<'_>) -> Result<(), DispatchError>,
    ) -> Result<Option<Duration>, DispatchError> {
        let mut rec = self.recorder();
        if self.features().contains(wgpu::Features::TIMESTAMP_QUERY) {
            rec.timer = Some(self.scoped(|| Timer::new(self))?);
        }
        record(&mut rec)?;
        let timer = rec.timer.take().filter(|_| rec.passes > 0);
        let Some(timer) = timer else {
            rec.submit()?;
            self.wait()?;
            return Ok(None);
        };
        rec.end_pass()?;
        rec.encoder
            .resolve_query_set(&timer.queries, 0..2, &timer.resolve, 0);
        rec.encoder
            .copy_buffer_to_buffer(&timer.resolve, 0, &timer.readback, 0, 16);
        rec.submit()?;
        let (tx, rx) = std::sync::mpsc::channel();
        timer.readback.map_async(wgpu::MapMode::Read, .., move |r| {
            let _ = tx.send(r);
        });
        self.wait()?;
        match rx.try_recv() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(DeviceError::Map(e.to_string()).into()),
            Err(_) => return Err(DeviceError::Map("the map callback did not run".into()).into()),
        }
        let ticks: Vec<u64> = {
            let view = timer
                .readback
                .slice(..)
                .get_mapped_range()
                .map_err(|e| DeviceError::Map(e.to_string()))?;
            bytemuck::pod_collect_to_vec(&view[..16])
        };
        timer.readback.unmap();
        let period = f64::from(self.queue.get_timestamp_period());
        let ns = ticks[1].saturating_sub(ticks[0]) as f64 * period;
        Ok(Some(Duration::from_nanos(ns as u64)))
    }
}

impl Timer {
    fn new(gpu: &Gpu) -> Timer {
        let d = &gpu.device;
        Timer {
            queries: d.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("wgsl-dsl timer"),
                ty: wgpu::QueryType::Timestamp,
                count: 2,
            }),
            resolve: d.create_buffer(&wgpu::BufferDescriptor {
                label: Some("wgsl-dsl timer resolve"),
                size: 16,
                usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            }),
            readback: d.create_buffer(&wgpu::BufferDescriptor {
                label: Some("wgsl-dsl timer read-back"),
                size: 16,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }),
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
    pub fn dispatch(
        &mut self,
        kernel: &Kernel,
        args: &[&dyn BindArg],
        workgroups: [u32; 3],
    ) -> Result<(), DispatchError> {
        let Some(group) = self.gpu.prepare(kernel, args, workgroups)? else {
            return Ok(());
        };
        if self.pass.is_none() {
            let timestamp_writes = self
                .timer
                .as_ref()
                .map(|t| wgpu::ComputePassTimestampWrites {
                    query_set: &t.queries,
                    beginning_of_pass_write_index: (self.passes == 0).then_some(0),
                    end_of_pass_write_index: Some(1),
                });
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
            pass.set_pipeline(&kernel.compiled.pipeline);
            pass.set_bind_group(0, &group, &[]);
            let [x, y, z] = workgroups;
            pass.dispatch_workgroups(x, y, z);
            self.dispatches += 1;
        }
        Ok(())
    }

    /// Record a copy of all of `src` into `dst`. Ends the current compute pass.
    ///
    /// # Errors
    /// [`DispatchError::Length`] if the lengths differ; [`DispatchError::Wgpu`] if `src` and
    /// `dst` are the same buffer (WebGPU forbids it); [`DispatchError::WrongDevice`].
    pub fn copy<T: Pod + WgslType>(
        &mut self,
        src: &GpuBuffer<T>,
        dst: &GpuBuffer<T>,
    ) -> Result<(), DispatchError> {
        let ((sg, si), (dg, di)) = (src.ids(), dst.ids());
        if sg != self.gpu.id || dg != self.gpu.id {
            return Err(DispatchError::WrongDevice("a copied buffer"));
        }
        if src.len() != dst.len() {
            return Err(DispatchError::Length {
                what: "Recorder::copy",
                expected: src.len(),
                found: dst.len(),
            });
        }
        if si == di {
            return Err(DispatchError::Wgpu(
                "a buffer cannot be copied onto itself".into(),
            ));
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

    fn end_pass(&mut self) -> Result<(), DispatchError> {
        if let Some(pass) = self.pass.take() {
            self.gpu.scoped(|| drop(pass))?;
        }
        Ok(())
    }

    /// End the pass, finish the encoder and submit it. Returns without waiting.
    ///
    /// # Errors
    /// [`DispatchError::Wgpu`] for errors wgpu reports for the recorded commands;
    /// [`DispatchError::Device`] if the device is lost.
    pub fn submit(mut self) -> Result<(), DispatchError> {
        self.end_pass()?;
        let Recorder { gpu, encoder, .. } = self;
        gpu.scoped(|| {
            gpu.queue.submit([encoder.finish()]);
        })
    }
}
