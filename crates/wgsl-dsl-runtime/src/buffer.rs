//! [`GpuBuffer<T>`]: a typed buffer on a [`Gpu`], and [`BindArg`], what dispatches take.

use std::marker::PhantomData;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use bytemuck::Pod;

use super::gpu::{Gpu, NEXT_ID};
use wgsl_dsl_core::types::{Scalar, Ty, Vector, WgslType};
use wgsl_dsl_exec::{DeviceError, DispatchError, DispatchErrorKind};
use wgsl_dsl_exec::{padded_size, vec4_length, view_length};

/// A buffer of `len` elements of `T` on one [`Gpu`].
///
/// `T` is a plain-old-data host type (`bytemuck::Pod`) standing for a WGSL type
/// ([`WgslType`]): `f32`, `u32`, `i32`, or a `#[derive(WgslStruct)]` struct whose Rust layout
/// matches its WGSL layout (dispatch checks sizes and strides). Elements are stored packed,
/// as in `&[T]`.
///
/// The allocation is the byte size rounded up to a multiple of 4 (`wgpu::COPY_BUFFER_ALIGNMENT`),
/// and at least 16 bytes and one element, so a zero-length buffer exists and can be bound; a kernel's
/// `arrayLength` then sees the padding (e.g. 4 elements of `f32` for an empty buffer).
///
/// Usages: `STORAGE | UNIFORM | COPY_SRC | COPY_DST`, so any buffer may be bound as a storage
/// buffer (read or read-write) or as a uniform.
pub struct GpuBuffer<T> {
    buffer: wgpu::Buffer,
    len: usize,
    gpu_id: u64,
    id: u64,
    /// Dropped with the buffer: the [`Gpu`]'s bind group cache holds a `Weak` of it and drops
    /// its bind groups (which keep the wgpu buffer alive) once the buffer is gone.
    alive: Arc<()>,
    _elem: PhantomData<fn() -> T>,
}

impl<T> std::fmt::Debug for GpuBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuBuffer")
            .field("elem", &std::any::type_name::<T>())
            .field("len", &self.len)
            .field("bytes", &self.buffer.size())
            .finish()
    }
}

impl<T: Pod + WgslType> GpuBuffer<T> {
    fn allocate(gpu: &Gpu, len: usize, init: Option<&[u8]>) -> Result<Self, DispatchError> {
        // Memory held by the bind groups of dropped buffers goes back before allocating more.
        gpu.sweep_bind_groups();
        let bytes = (len as u64).saturating_mul(size_of::<T>() as u64);
        let size = padded_size(bytes, size_of::<T>() as u64);
        let limit = gpu.limits().max_buffer_size;
        if size > limit {
            return Err(DispatchError::from(DispatchErrorKind::Limit {
                what: format!("buffer of {len} x {}", std::any::type_name::<T>()),
                value: size,
                limit,
            }));
        }
        let buffer = gpu.scoped(|| {
            let buffer = gpu.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(std::any::type_name::<T>()),
                size,
                usage: wgpu::BufferUsages::STORAGE
                    | wgpu::BufferUsages::UNIFORM
                    | wgpu::BufferUsages::COPY_SRC
                    | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: init.is_some(),
            });
            if let Some(data) = init {
                buffer
                    .slice(..)
                    .get_mapped_range_mut()
                    .map(|mut view| view.slice(..data.len()).copy_from_slice(data))
                    .map_err(|e| e.to_string())?;
                buffer.unmap();
            }
            Ok::<_, String>(buffer)
        })?;
        let buffer = buffer.map_err(|e| DispatchError::from(DispatchErrorKind::Wgpu(e)))?;
        Ok(GpuBuffer {
            buffer,
            len,
            gpu_id: gpu.id,
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            alive: Arc::new(()),
            _elem: PhantomData,
        })
    }

    /// A buffer holding a copy of `data`.
    ///
    /// # Errors
    /// [`DispatchErrorKind::Limit`] beyond the device's `max_buffer_size`; [`DispatchErrorKind::Wgpu`]
    /// if wgpu refuses the allocation (e.g. out of memory).
    pub fn from_slice(gpu: &Gpu, data: &[T]) -> Result<Self, DispatchError> {
        Self::allocate(gpu, data.len(), Some(bytemuck::cast_slice(data)))
    }

    /// A buffer holding one value: convenient for uniforms (`var<uniform> n: u32`).
    ///
    /// # Errors
    /// As [`GpuBuffer::from_slice`].
    pub fn from_value(gpu: &Gpu, value: T) -> Result<Self, DispatchError> {
        Self::from_slice(gpu, std::slice::from_ref(&value))
    }

    /// A buffer of `len` elements whose bytes are all zero.
    ///
    /// # Errors
    /// As [`GpuBuffer::from_slice`].
    pub fn zeroed(gpu: &Gpu, len: usize) -> Result<Self, DispatchError> {
        Self::allocate(gpu, len, None)
    }

    /// A caller's wgpu buffer, made on `gpu`'s device, as a buffer of
    /// `buffer.size() / size_of::<T>()` elements of `T` (ARCHITECTURE.md decision *Bring your own device*): bound whole, so
    /// a kernel's `arrayLength` counts every element. The buffer is shared, not copied: work
    /// the caller records on it and the kernels dispatched with it are ordered by wgpu as
    /// usual. A storage binding needs `STORAGE` usage, a uniform binding `UNIFORM`
    /// (checked at every dispatch, [`DispatchErrorKind::Usage`]); [`GpuBuffer::read`] needs
    /// `COPY_SRC` and [`GpuBuffer::write`] `COPY_DST`, which wgpu checks.
    ///
    /// That `buffer` belongs to `gpu`'s device cannot be checked here: a buffer of another
    /// device is refused by wgpu when it is bound ([`DispatchErrorKind::Wgpu`]).
    ///
    /// # Errors
    /// [`DispatchErrorKind::Usage`] if the buffer has neither `STORAGE` nor `UNIFORM` usage;
    /// [`DispatchErrorKind::NotWholeElements`] if its size is not a multiple of
    /// `size_of::<T>()`.
    pub fn from_wgpu(gpu: &Gpu, buffer: wgpu::Buffer) -> Result<Self, DispatchError> {
        let bindable = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::UNIFORM;
        if !buffer.usage().intersects(bindable) {
            return Err(DispatchError::from(DispatchErrorKind::Usage {
                what: format!("a wgpu buffer as GpuBuffer<{}>", std::any::type_name::<T>()),
                needed: format!("{bindable:?}"),
                found: format!("{:?}", buffer.usage()),
            }));
        }
        let elem = size_of::<T>() as u64;
        let bytes = buffer.size();
        if elem == 0 || !bytes.is_multiple_of(elem) {
            return Err(DispatchError::from(DispatchErrorKind::NotWholeElements {
                bytes,
                elem: std::any::type_name::<T>(),
                elem_size: elem,
            }));
        }
        Ok(GpuBuffer {
            len: (bytes / elem) as usize,
            buffer,
            gpu_id: gpu.id,
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            alive: Arc::new(()),
            _elem: PhantomData,
        })
    }

    /// Replace the contents with `data` (queued: ordered before work submitted after it).
    ///
    /// # Errors
    /// [`DispatchErrorKind::Length`] unless `data.len() == self.len()`;
    /// [`DispatchErrorKind::WrongDevice`] if `gpu` did not create this buffer;
    /// [`DispatchErrorKind::Wgpu`] if wgpu rejects the write.
    pub fn write(&self, gpu: &Gpu, data: &[T]) -> Result<(), DispatchError> {
        if gpu.id != self.gpu_id {
            return Err(DispatchError::from(DispatchErrorKind::WrongDevice(
                "the buffer",
            )));
        }
        DispatchError::check_length("GpuBuffer::write", self.len, data.len())?;
        let bytes: &[u8] = bytemuck::cast_slice(data);
        if bytes.is_empty() {
            return Ok(());
        }
        let padded;
        let bytes = if bytes.len().is_multiple_of(4) {
            bytes
        } else {
            padded = pad4(bytes);
            &padded
        };
        gpu.scoped(|| gpu.queue.write_buffer(&self.buffer, 0, bytes))
    }

    /// Copy the contents back to the host: [`GpuBuffer::read_async`], then
    /// [`PendingRead::wait`](super::PendingRead::wait), which gives up after the [`Gpu`]'s
    /// read-back timeout. Waits for all work submitted before it. Any number of threads may read
    /// back from one [`Gpu`] at once.
    ///
    /// # Errors
    /// [`DeviceError::WrongDevice`], [`DeviceError::Lost`], [`DeviceError::Timeout`],
    /// [`DeviceError::Map`] (also when wgpu rejects the copy).
    pub fn read(&self, gpu: &Gpu) -> Result<Vec<T>, DeviceError> {
        if gpu.id != self.gpu_id {
            return Err(DeviceError::WrongDevice);
        }
        if self.byte_len() == 0 {
            return Ok(Vec::new());
        }
        self.read_async(gpu)?.wait(gpu)
    }
}

impl<T> GpuBuffer<T> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True if there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes of the elements (`len * size_of::<T>()`), without padding.
    pub fn byte_len(&self) -> u64 {
        (self.len as u64).saturating_mul(size_of::<T>() as u64)
    }

    /// The wgpu buffer (its size includes padding), for advanced use.
    pub fn raw(&self) -> &wgpu::Buffer {
        &self.buffer
    }

    pub(crate) fn ids(&self) -> (u64, u64) {
        (self.gpu_id, self.id)
    }
}

/// A buffer of `4 n` scalars seen as `n` four-component vectors, to bind where a kernel declares
/// `array<vec4<T>>` (vector loads): made by [`GpuBuffer::as_vec4`]. The [`View`] of four
/// scalars per `vec4<T>`.
pub type Vec4View<'a, T> = View<'a, T, Vector<T, 4>>;

impl<T: Pod + Scalar> GpuBuffer<T> {
    /// This buffer as `len / 4` vectors `vec4<T>`: element `i` of the view is elements
    /// `4 i .. 4 i + 4` of the buffer ([`GpuBuffer::view`] with `per = 4`).
    ///
    /// # Errors
    /// [`DispatchErrorKind::Length`] unless `len` is a multiple of 4.
    pub fn as_vec4(&self) -> Result<Vec4View<'_, T>, DispatchError> {
        vec4_length("GpuBuffer::as_vec4 (a multiple of 4 elements)", self.len)?;
        Ok(View {
            buffer: self,
            per: 4,
            ty: PhantomData,
        })
    }
}

/// A buffer of scalars seen as elements of the WGSL type `U`, each the bytes of `per`
/// consecutive scalars, to bind where a kernel declares `array<U>`: made by
/// [`GpuBuffer::view`]. E.g. `f16` seen as `vec4<u32>` or as `array<vec4<f16>, 2>` (`per = 8`):
/// 16-byte elements, read by one 16-byte load each.
pub struct View<'a, T, U> {
    buffer: &'a GpuBuffer<T>,
    per: usize,
    ty: PhantomData<U>,
}

impl<T, U> std::fmt::Debug for View<'_, T, U> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("View")
            .field("buffer", self.buffer)
            .field("per", &self.per)
            .finish()
    }
}

impl<T: Pod + Scalar> GpuBuffer<T> {
    /// This buffer as `len / per` elements of `U`: element `i` of the view holds the bytes of
    /// elements `per i .. per (i + 1)` of the buffer, reinterpreted (no conversion). A
    /// dispatch checks that `U`'s WGSL stride is `per * size_of::<T>()` bytes.
    ///
    /// # Errors
    /// [`DispatchErrorKind::Length`] unless `per > 0` and `len` is a multiple of `per`.
    pub fn view<U: WgslType>(&self, per: usize) -> Result<View<'_, T, U>, DispatchError> {
        view_length(
            "GpuBuffer::view (a multiple of `per` elements)",
            self.len,
            per,
        )?;
        Ok(View {
            buffer: self,
            per,
            ty: PhantomData,
        })
    }
}

impl<T: Pod + Scalar, U: WgslType> BindArg for View<'_, T, U> {
    fn arg(&self) -> Arg<'_> {
        let mut arg = self.buffer.arg();
        arg.ty = U::ty;
        arg.elem_size *= self.per as u64;
        arg.len /= self.per;
        arg
    }
}

fn pad4(bytes: &[u8]) -> Vec<u8> {
    let mut v = bytes.to_vec();
    v.resize(bytes.len().next_multiple_of(4), 0);
    v
}

/// What an argument binds: a buffer, or a texture (its view, format and size).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Resource<'a> {
    Buffer(&'a wgpu::Buffer),
    Texture {
        view: &'a wgpu::TextureView,
        format: wgsl_dsl_core::types::TexelFormat,
        size: [u32; 2],
    },
}

/// One dispatch argument, as seen by the checks: made by [`BindArg::arg`].
#[derive(Debug, Clone, Copy)]
pub struct Arg<'a> {
    pub(crate) resource: Resource<'a>,
    pub(crate) ty: fn() -> Ty,
    pub(crate) elem_size: u64,
    pub(crate) len: usize,
    pub(crate) gpu_id: u64,
    pub(crate) id: u64,
    pub(crate) alive: &'a Arc<()>,
}

/// Something that can be bound to a kernel's binding: any [`GpuBuffer<T>`] or
/// [`GpuTexture<F>`](super::GpuTexture).
///
/// Dispatches take `&[&dyn BindArg]`, so buffers of different element types go in one list:
/// `gpu.dispatch(&kernel, &[&n, &x, &y], workgroups)`.
pub trait BindArg: std::fmt::Debug {
    /// The buffer, its element type and length, for the checks.
    fn arg(&self) -> Arg<'_>;
}

impl<T: Pod + WgslType> BindArg for GpuBuffer<T> {
    fn arg(&self) -> Arg<'_> {
        Arg {
            resource: Resource::Buffer(&self.buffer),
            ty: T::ty,
            elem_size: size_of::<T>() as u64,
            len: self.len,
            gpu_id: self.gpu_id,
            id: self.id,
            alive: &self.alive,
        }
    }
}
