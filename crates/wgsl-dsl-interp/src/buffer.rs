//! [`HostBuffer<T>`]: a buffer in host memory that the interpreter binds like a
//! `GpuBuffer<T>`, with the same padding, and [`HostArg`], what
//! [`Interpreter::dispatch`](super::Interpreter::dispatch) takes.

use std::cell::RefCell;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU64, Ordering};

use bytemuck::Pod;

use wgsl_dsl_core::types::{Scalar, Ty, Vector, WgslType};
use wgsl_dsl_exec::DispatchError;

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// A buffer of `len` elements of `T` in host memory, for the interpreter.
///
/// It mirrors `GpuBuffer<T>`: the same constructors, `write` and
/// `read`, and the same allocation (the byte size rounded up to 4, at least one element and
/// 16 bytes), so `arrayLength` sees the same padding on both executors. The positional
/// dispatch ([`Interpreter::dispatch`](crate::Interpreter::dispatch)) takes `&HostBuffer` even
/// for buffers the kernel writes, as on the GPU (the typed dispatch takes `&mut` for them, as
/// its argument struct says); the contents change only when the whole dispatch succeeds.
pub struct HostBuffer<T> {
    bytes: RefCell<Vec<u8>>,
    len: usize,
    id: u64,
    _elem: PhantomData<fn() -> T>,
}

impl<T> std::fmt::Debug for HostBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostBuffer")
            .field("elem", &std::any::type_name::<T>())
            .field("len", &self.len)
            .finish()
    }
}

impl<T: Pod + WgslType> HostBuffer<T> {
    fn allocate(len: usize, init: Option<&[u8]>) -> Self {
        let elem = size_of::<T>() as u64;
        let size = wgsl_dsl_exec::padded_size((len as u64).saturating_mul(elem), elem);
        let mut bytes = vec![0u8; usize::try_from(size).unwrap_or(usize::MAX)];
        if let Some(data) = init {
            bytes[..data.len()].copy_from_slice(data);
        }
        HostBuffer {
            bytes: RefCell::new(bytes),
            len,
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            _elem: PhantomData,
        }
    }

    /// A buffer holding a copy of `data`.
    pub fn from_slice(data: &[T]) -> Self {
        Self::allocate(data.len(), Some(bytemuck::cast_slice(data)))
    }

    /// A buffer holding one value (for uniforms).
    pub fn from_value(value: T) -> Self {
        Self::from_slice(std::slice::from_ref(&value))
    }

    /// A buffer of `len` elements whose bytes are all zero.
    pub fn zeroed(len: usize) -> Self {
        Self::allocate(len, None)
    }

    /// Replace the contents with `data`.
    ///
    /// # Errors
    /// [`DispatchErrorKind::Length`](wgsl_dsl_exec::DispatchErrorKind::Length) unless `data.len() == self.len()`.
    pub fn write(&self, data: &[T]) -> Result<(), DispatchError> {
        DispatchError::check_length("HostBuffer::write", self.len, data.len())?;
        let src: &[u8] = bytemuck::cast_slice(data);
        self.bytes.borrow_mut()[..src.len()].copy_from_slice(src);
        Ok(())
    }

    /// A copy of the contents.
    pub fn read(&self) -> Vec<T> {
        let bytes = self.bytes.borrow();
        bytemuck::pod_collect_to_vec(&bytes[..self.len * size_of::<T>()])
    }
}

impl<T: Pod + Scalar> HostBuffer<T> {
    /// The buffer bound as `array<vec4<T>>`, as
    /// the runtime's `GpuBuffer::as_vec4` does: for kernels that read
    /// it four elements at a time ([`HostBuffer::view`] with `per = 4`).
    ///
    /// # Errors
    /// [`DispatchErrorKind::Length`](wgsl_dsl_exec::DispatchErrorKind::Length) unless the length is a multiple of 4.
    pub fn as_vec4(&self) -> Result<HostVec4<'_, T>, DispatchError> {
        wgsl_dsl_exec::vec4_length("HostBuffer::as_vec4 (a multiple of 4 elements)", self.len)?;
        Ok(HostView {
            buffer: self,
            per: 4,
            ty: PhantomData,
        })
    }
}

/// A [`HostBuffer<T>`] bound as `array<vec4<T>>` ([`HostBuffer::as_vec4`]): the [`HostView`]
/// of four scalars per `vec4<T>`.
pub type HostVec4<'a, T> = HostView<'a, T, Vector<T, 4>>;

/// A [`HostBuffer<T>`] seen as elements of the WGSL type `U`, each the bytes of `per`
/// consecutive scalars ([`HostBuffer::view`]), as the runtime's `GpuBuffer::view` does.
pub struct HostView<'a, T, U> {
    buffer: &'a HostBuffer<T>,
    per: usize,
    ty: PhantomData<U>,
}

impl<T, U> std::fmt::Debug for HostView<'_, T, U> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostView")
            .field("buffer", self.buffer)
            .field("per", &self.per)
            .finish()
    }
}

impl<T: Pod + Scalar> HostBuffer<T> {
    /// The buffer bound as `array<U>`, element `i` holding the bytes of elements
    /// `per i .. per (i + 1)` (no conversion), as the runtime's `GpuBuffer::view` does. A
    /// dispatch checks that `U`'s WGSL stride is `per * size_of::<T>()` bytes.
    ///
    /// # Errors
    /// [`DispatchErrorKind::Length`](wgsl_dsl_exec::DispatchErrorKind::Length) unless `per > 0`
    /// and the length is a multiple of `per`.
    pub fn view<U: WgslType>(&self, per: usize) -> Result<HostView<'_, T, U>, DispatchError> {
        wgsl_dsl_exec::view_length(
            "HostBuffer::view (a multiple of `per` elements)",
            self.len,
            per,
        )?;
        Ok(HostView {
            buffer: self,
            per,
            ty: PhantomData,
        })
    }
}

impl<T: Pod + Scalar, U: WgslType> HostArg for HostView<'_, T, U> {
    fn host_arg(&self) -> HostArgRef<'_> {
        let mut arg = self.buffer.host_arg();
        arg.ty = U::ty;
        arg.elem_size *= self.per as u64;
        arg.len /= self.per;
        arg
    }
}

impl<T> HostBuffer<T> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True if there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// One dispatch argument as the interpreter sees it.
#[derive(Debug, Clone, Copy)]
pub struct HostArgRef<'a> {
    pub(crate) bytes: &'a RefCell<Vec<u8>>,
    pub(crate) ty: fn() -> Ty,
    pub(crate) elem_size: u64,
    pub(crate) len: usize,
    pub(crate) id: u64,
}

/// Something the interpreter can bind to a kernel's binding: any [`HostBuffer<T>`].
pub trait HostArg: std::fmt::Debug {
    /// The buffer, its element type and length, for the checks and the run.
    fn host_arg(&self) -> HostArgRef<'_>;
}

impl<T: Pod + WgslType> HostArg for HostBuffer<T> {
    fn host_arg(&self) -> HostArgRef<'_> {
        HostArgRef {
            bytes: &self.bytes,
            ty: T::ty,
            elem_size: size_of::<T>() as u64,
            len: self.len,
            id: self.id,
        }
    }
}
