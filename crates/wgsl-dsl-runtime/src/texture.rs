//! [`GpuTexture<F>`]: a 2-D texture of texel format `F` on a [`Gpu`], bound to a kernel's
//! `texture_storage_2d<F, access>` or `texture_2d<T>` bindings (WGSL spec §6.5).

use std::marker::PhantomData;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use bytemuck::Pod;

use super::buffer::{Arg, BindArg, Resource};
use super::gpu::{Gpu, NEXT_ID};
use wgsl_dsl_core::types::{Format, SampledType, TexelFormat, TextureAccess, TextureTy, Ty};
use wgsl_dsl_exec::{DeviceError, DispatchError, DispatchErrorKind};

/// wgpu's format for a texel format (the same name in WebGPU).
pub(crate) fn wgpu_format(f: TexelFormat) -> wgpu::TextureFormat {
    use wgpu::TextureFormat as W;
    match f {
        TexelFormat::R32Float => W::R32Float,
        TexelFormat::R32Uint => W::R32Uint,
        TexelFormat::R32Sint => W::R32Sint,
        TexelFormat::Rgba8Unorm => W::Rgba8Unorm,
        TexelFormat::Rgba32Float => W::Rgba32Float,
        TexelFormat::Rgba32Uint => W::Rgba32Uint,
        TexelFormat::Rgba32Sint => W::Rgba32Sint,
    }
}

/// The bind group layout entry type of a texture binding.
pub(crate) fn binding_type(t: TextureTy) -> wgpu::BindingType {
    match t {
        TextureTy::Storage { format, access } => wgpu::BindingType::StorageTexture {
            access: match access {
                TextureAccess::Read => wgpu::StorageTextureAccess::ReadOnly,
                TextureAccess::Write => wgpu::StorageTextureAccess::WriteOnly,
                TextureAccess::ReadWrite => wgpu::StorageTextureAccess::ReadWrite,
            },
            format: wgpu_format(format),
            view_dimension: wgpu::TextureViewDimension::D2,
        },
        TextureTy::Sampled(s) => wgpu::BindingType::Texture {
            sample_type: match s {
                wgsl_dsl_core::types::ScalarTy::I32 => wgpu::TextureSampleType::Sint,
                wgsl_dsl_core::types::ScalarTy::U32 => wgpu::TextureSampleType::Uint,
                // `textureLoad` needs no filtering: r32float binds too.
                _ => wgpu::TextureSampleType::Float { filterable: false },
            },
            view_dimension: wgpu::TextureViewDimension::D2,
            multisampled: false,
        },
    }
}

/// A 2-D texture of `width x height` texels of format `F` (one mip level) on one [`Gpu`].
///
/// Texels are given and read back row by row (`y` rows of `width` texels, `x` across), as
/// [`Format::Texel`]s: `f32` for [`R32Float`](wgsl_dsl_core::types::R32Float), `[u8; 4]` for
/// [`Rgba8Unorm`](wgsl_dsl_core::types::Rgba8Unorm), ... It binds to a `texture_storage_2d<F, _>` of
/// its format (any access) and to a `texture_2d<T>` whose `T` is its channel type; the
/// dispatch checks say which binding takes which texture ([`DispatchErrorKind::Resource`]).
///
/// Usages: `STORAGE_BINDING | TEXTURE_BINDING | COPY_SRC | COPY_DST`.
pub struct GpuTexture<F> {
    texture: wgpu::Texture,
    view: wgpu::TextureView,
    size: [u32; 2],
    gpu_id: u64,
    id: u64,
    alive: Arc<()>,
    _f: PhantomData<fn() -> F>,
}

impl<F: Format> std::fmt::Debug for GpuTexture<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuTexture")
            .field("format", &F::FORMAT.wgsl_name())
            .field("size", &self.size)
            .finish()
    }
}

impl<F: Format> GpuTexture<F>
where
    F::Texel: Pod,
{
    fn allocate(
        gpu: &Gpu,
        size: [u32; 2],
        init: Option<&[F::Texel]>,
    ) -> Result<Self, DispatchError> {
        gpu.sweep_bind_groups();
        let limit = gpu.limits().max_texture_dimension_2d;
        if let Some(&d) = size.iter().find(|&&d| d == 0 || d > limit) {
            return Err(DispatchError::from(DispatchErrorKind::Limit {
                what: format!(
                    "texture of {}x{} {} (each side from 1 to the limit)",
                    size[0],
                    size[1],
                    F::FORMAT.wgsl_name()
                ),
                value: u64::from(d),
                limit: u64::from(limit),
            }));
        }
        let texels = size[0] as usize * size[1] as usize;
        if let Some(data) = init {
            DispatchError::check_length(
                "GpuTexture::from_texels (width * height texels)",
                texels,
                data.len(),
            )?;
        }
        let made = gpu.scoped(|| {
            let texture = gpu.device.create_texture(&wgpu::TextureDescriptor {
                label: Some(F::FORMAT.wgsl_name()),
                size: extent(size),
                mip_level_count: 1,
                sample_count: 1,
                dimension: wgpu::TextureDimension::D2,
                format: wgpu_format(F::FORMAT),
                usage: wgpu::TextureUsages::STORAGE_BINDING
                    | wgpu::TextureUsages::TEXTURE_BINDING
                    | wgpu::TextureUsages::COPY_SRC
                    | wgpu::TextureUsages::COPY_DST,
                view_formats: &[],
            });
            let view = texture.create_view(&Default::default());
            (texture, view)
        })?;
        let t = GpuTexture {
            texture: made.0,
            view: made.1,
            size,
            gpu_id: gpu.id,
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            alive: Arc::new(()),
            _f: PhantomData,
        };
        if let Some(data) = init {
            t.write(gpu, data)?;
        }
        Ok(t)
    }

    /// A texture of `size = [width, height]` holding `data` (`width * height` texels, row by
    /// row).
    ///
    /// # Errors
    /// [`DispatchErrorKind::Length`] unless `data` has `width * height` texels;
    /// [`DispatchErrorKind::Limit`] for a side of 0 or beyond `max_texture_dimension_2d`;
    /// [`DispatchErrorKind::Wgpu`] if wgpu refuses the texture.
    pub fn from_texels(
        gpu: &Gpu,
        size: [u32; 2],
        data: &[F::Texel],
    ) -> Result<Self, DispatchError> {
        Self::allocate(gpu, size, Some(data))
    }

    /// A texture of `size = [width, height]` whose bytes are all zero.
    ///
    /// # Errors
    /// As [`GpuTexture::from_texels`].
    pub fn zeroed(gpu: &Gpu, size: [u32; 2]) -> Result<Self, DispatchError> {
        Self::allocate(gpu, size, None)
    }

    /// Replace the texels with `data` (queued: ordered before work submitted after it).
    ///
    /// # Errors
    /// [`DispatchErrorKind::Length`] unless `data` has `width * height` texels;
    /// [`DispatchErrorKind::WrongDevice`]; [`DispatchErrorKind::Wgpu`] if wgpu rejects the write.
    pub fn write(&self, gpu: &Gpu, data: &[F::Texel]) -> Result<(), DispatchError> {
        if gpu.id != self.gpu_id {
            return Err(DispatchError::from(DispatchErrorKind::WrongDevice(
                "the texture",
            )));
        }
        DispatchError::check_length(
            "GpuTexture::write (width * height texels)",
            self.texels(),
            data.len(),
        )?;
        let bytes: &[u8] = bytemuck::cast_slice(data);
        gpu.scoped(|| {
            gpu.queue.write_texture(
                self.texture.as_image_copy(),
                bytes,
                wgpu::TexelCopyBufferLayout {
                    offset: 0,
                    bytes_per_row: Some(self.row_bytes()),
                    rows_per_image: Some(self.size[1]),
                },
                extent(self.size),
            );
        })
    }

    /// Copy the texels back to the host, row by row: a copy into a staging buffer (rows
    /// padded to 256 bytes, as WebGPU requires), `map_async`, and a blocking poll that gives
    /// up after the [`Gpu`]'s read-back timeout. Waits for all work submitted before it.
    ///
    /// # Errors
    /// [`DeviceError::WrongDevice`], [`DeviceError::Lost`], [`DeviceError::Timeout`],
    /// [`DeviceError::Map`] (also when wgpu rejects the copy).
    pub fn read(&self, gpu: &Gpu) -> Result<Vec<F::Texel>, DeviceError> {
        if gpu.id != self.gpu_id {
            return Err(DeviceError::WrongDevice);
        }
        let row = self.row_bytes();
        let padded = row.next_multiple_of(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT);
        let [_, height] = self.size;
        let submitted = gpu.scoped(|| {
            let staging = gpu.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("wgsl-dsl texture read-back"),
                size: u64::from(padded) * u64::from(height),
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            let mut encoder = gpu.device.create_command_encoder(&Default::default());
            encoder.copy_texture_to_buffer(
                self.texture.as_image_copy(),
                wgpu::TexelCopyBufferInfo {
                    buffer: &staging,
                    layout: wgpu::TexelCopyBufferLayout {
                        offset: 0,
                        bytes_per_row: Some(padded),
                        rows_per_image: Some(height),
                    },
                },
                extent(self.size),
            );
            let index = gpu.queue.submit([encoder.finish()]);
            (staging, index)
        });
        let (staging, index) = submitted.map_err(|e| match e {
            DispatchError {
                kind: DispatchErrorKind::Device(d),
                ..
            } => d,
            other => DeviceError::Map(other.to_string()),
        })?;
        gpu.map_read(&staging, Some(index))?;
        let out = {
            let view = staging
                .slice(..)
                .get_mapped_range()
                .map_err(|e| DeviceError::Map(e.to_string()))?;
            let mut bytes = Vec::with_capacity(row as usize * height as usize);
            for r in view.chunks(padded as usize).take(height as usize) {
                bytes.extend_from_slice(&r[..row as usize]);
            }
            bytemuck::pod_collect_to_vec(&bytes)
        };
        staging.unmap();
        Ok(out)
    }
}

impl<F: Format> GpuTexture<F> {
    /// `[width, height]` in texels.
    pub fn size(&self) -> [u32; 2] {
        self.size
    }

    fn texels(&self) -> usize {
        self.size[0] as usize * self.size[1] as usize
    }

    fn row_bytes(&self) -> u32 {
        self.size[0] * F::FORMAT.bytes_per_texel()
    }

    /// The wgpu texture, for advanced use.
    pub fn raw(&self) -> &wgpu::Texture {
        &self.texture
    }
}

fn extent([width, height]: [u32; 2]) -> wgpu::Extent3d {
    wgpu::Extent3d {
        width,
        height,
        depth_or_array_layers: 1,
    }
}

/// The type a texture argument reports to the checks: a storage texture of its format.
fn texture_ty<F: Format>() -> Ty {
    Ty::Texture(TextureTy::Storage {
        format: F::FORMAT,
        access: TextureAccess::ReadWrite,
    })
}

impl<F: Format> BindArg for GpuTexture<F> {
    fn arg(&self) -> Arg<'_> {
        Arg {
            resource: Resource::Texture {
                view: &self.view,
                format: F::FORMAT,
                size: self.size,
            },
            ty: texture_ty::<F>,
            elem_size: 0,
            len: 0,
            gpu_id: self.gpu_id,
            id: self.id,
            alive: &self.alive,
        }
    }
}

/// A texture whose texels have channel type `T`, of any format: what a `texture_2d<T>`
/// binding takes (the field type of a sampled texture in an argument struct is
/// `&dyn TextureOf<T>`, so `&GpuTexture<Rgba8Unorm>` and `&GpuTexture<R32Float>` both fit a
/// `texture_2d<f32>`).
pub trait TextureOf<T: SampledType>: BindArg {}

impl<F: Format> TextureOf<F::Channel> for GpuTexture<F> where F::Channel: SampledType {}
