//! [`PendingRead`]: a read-back that has been queued and is waited for later, so the host can
//! record and submit more work while the GPU finishes what came before the copy.

use std::marker::PhantomData;

use bytemuck::Pod;

use super::buffer::GpuBuffer;
use super::gpu::{Gpu, MapRequest, take_mapped};
use wgsl_dsl_core::types::WgslType;
use wgsl_dsl_exec::{DeviceError, DispatchError, DispatchErrorKind};

/// A copy of a buffer's contents on its way to the host: made by [`GpuBuffer::read_async`],
/// collected by [`PendingRead::wait`]. The copy is ordered after all work submitted before
/// `read_async` and before all work submitted after it, so waiting for it does not wait for
/// later submissions: the GPU keeps running them.
///
/// Dropping a `PendingRead` discards the copy.
#[must_use = "a read-back is collected with `wait`"]
pub struct PendingRead<T> {
    staging: wgpu::Buffer,
    index: wgpu::SubmissionIndex,
    mapped: MapRequest,
    bytes: usize,
    gpu_id: u64,
    _elem: PhantomData<fn() -> T>,
}

impl<T> std::fmt::Debug for PendingRead<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PendingRead")
            .field("elem", &std::any::type_name::<T>())
            .field("bytes", &self.bytes)
            .finish_non_exhaustive()
    }
}

impl<T: Pod + WgslType> GpuBuffer<T> {
    /// Queue a copy of the contents to the host without waiting: a copy into a new staging
    /// buffer, submitted now, and `map_async` on it. Collect it with [`PendingRead::wait`].
    ///
    /// # Errors
    /// [`DeviceError::WrongDevice`], [`DeviceError::Lost`], [`DeviceError::Map`] when wgpu
    /// rejects the copy.
    pub fn read_async(&self, gpu: &Gpu) -> Result<PendingRead<T>, DeviceError> {
        let (gpu_id, _) = self.ids();
        if gpu.id != gpu_id {
            return Err(DeviceError::WrongDevice);
        }
        let size = self.raw().size();
        let submitted = gpu.scoped(|| {
            let staging = gpu.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("wgsl-dsl read-back"),
                size,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            let mut encoder = gpu.device.create_command_encoder(&Default::default());
            encoder.copy_buffer_to_buffer(self.raw(), 0, &staging, 0, size);
            let index = gpu.queue.submit([encoder.finish()]);
            let mapped = Gpu::request_map(&staging);
            (staging, index, mapped)
        });
        let (staging, index, mapped) = submitted.map_err(|e| match e {
            DispatchError {
                kind: DispatchErrorKind::Device(d),
                ..
            } => d,
            other => DeviceError::Map(other.to_string()),
        })?;
        Ok(PendingRead {
            staging,
            index,
            mapped,
            bytes: self.byte_len() as usize,
            gpu_id,
            _elem: PhantomData,
        })
    }
}

impl<T: Pod + WgslType> PendingRead<T> {
    /// Block until the copy has landed (not later submissions), then return the contents. Gives
    /// up after the [`Gpu`]'s read-back timeout.
    ///
    /// # Errors
    /// [`DeviceError::WrongDevice`] for another `gpu` than the buffer's,
    /// [`DeviceError::Lost`], [`DeviceError::Timeout`], [`DeviceError::Map`].
    pub fn wait(self, gpu: &Gpu) -> Result<Vec<T>, DeviceError> {
        if gpu.id != self.gpu_id {
            return Err(DeviceError::WrongDevice);
        }
        gpu.await_map(&self.mapped, Some(self.index))?;
        take_mapped(&self.staging, self.bytes)
    }
}
