//! [`Executor`]: what running a kernel means, whichever executor runs it (the runtime's `Gpu`,
//! the interpreter's `Interpreter`): compile, upload, dispatch, read back. Code that runs
//! kernels on either one (the gradient checker, the verified-op harness, the tests) is written
//! once against it.

use bytemuck::Pod;

use crate::error::DispatchError;
use crate::interface::ExecutorBuffers;
use wgsl_dsl_core::kernel::{KernelBuilder, KernelSignature};
use wgsl_dsl_core::shader::Shader;
use wgsl_dsl_core::types::WgslType;
use wgsl_dsl_core::{BuildError, TargetLimits};

/// An executor of kernels: compile a [`Shader`], upload host data into its buffers
/// ([`ExecutorBuffers::Buffer`]), dispatch a kernel over a grid of workgroups with one
/// argument per binding (checked as [`check_bindings`](crate::check_bindings) says, the same
/// checks on every executor), and read buffers back.
///
/// ```
/// use wgsl_dsl::exec::Executor;
/// use wgsl_dsl::interp::Interpreter;
/// use wgsl_dsl::prelude::*;
///
/// /// `y = 2 x` on any executor.
/// fn double<E: Executor>(on: &E, x: &[f32]) -> Result<Vec<f32>, E::Error> {
///     let mut k = KernelBuilder::new("double", [64, 1, 1]);
///     let xs = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
///     let ys = k.storage::<RuntimeArray<f32>, ReadWrite>("y");
///     let i = k.let_("i", global_invocation_id().x());
///     k.if_(i.lt(ys.len()), |k| k.store(&ys.at(&i), xs.at(&i).load() * 2.0));
///     let kernel = on.build_and_compile(&k)?;
///     let (xb, yb) = (on.upload(x)?, on.upload(&vec![f32::NAN; x.len()])?);
///     on.dispatch(&kernel, &[E::arg(&xb), E::arg(&yb)], [x.len().div_ceil(64) as u32, 1, 1])?;
///     on.read(&yb)
/// }
///
/// assert_eq!(double(&Interpreter::new(), &[1.0, 2.5, -3.0])?, vec![2.0, 5.0, -6.0]);
/// # Ok::<(), wgsl_dsl::interp::InterpError>(())
/// ```
pub trait Executor: ExecutorBuffers + Sized {
    /// A compiled kernel (the runtime's `Kernel`, the interpreter's `Program`).
    type Kernel;
    /// What can go wrong: the runtime's [`DispatchError`], the interpreter's `InterpError`
    /// (which wraps it, and adds what only the interpreter finds: races, out-of-bounds
    /// accesses, divergent barriers).
    type Error: std::error::Error + From<DispatchError> + From<BuildError> + Send + Sync + 'static;

    /// How error messages name the executor: `"the GPU"`, `"the interpreter"`.
    fn name(&self) -> &'static str;

    /// Whether a dispatch checks every access for bounds and every pair of accesses for a
    /// data race, failing on the first (the interpreter does, a GPU does not). Code that runs
    /// kernels to check them (the gradient checker) also runs them on such an executor when
    /// this one does not check.
    fn checks_accesses(&self) -> bool {
        false
    }

    /// The limits kernels are built for to run here ([`KernelBuilder::build_for`]): the
    /// device's on the GPU, WebGPU's defaults on the interpreter.
    fn target_limits(&self) -> TargetLimits;

    /// Compile `shader`, checked against the executor's limits and capabilities
    /// ([`check_limits`](crate::check_limits)).
    ///
    /// # Errors
    /// [`DispatchErrorKind::ExceedsDevice`](crate::DispatchErrorKind::ExceedsDevice), [`DispatchErrorKind::MissingCapability`](crate::DispatchErrorKind::MissingCapability), and the
    /// executor's own (wgpu's validation, a construct the interpreter does not run).
    fn compile(&self, shader: &Shader) -> Result<Self::Kernel, Self::Error>;

    /// The signature of a compiled kernel: entry point, workgroup size, bindings.
    fn signature(kernel: &Self::Kernel) -> &KernelSignature;

    /// A buffer holding `data` (one element per `T`; an empty slice makes a buffer of one
    /// zeroed element's padding, bindable to an `array<T>`).
    ///
    /// # Errors
    /// Out of memory, or a buffer larger than the device allows ([`DispatchErrorKind::Limit`](crate::DispatchErrorKind::Limit)).
    fn upload<T: Pod + WgslType>(&self, data: &[T]) -> Result<Self::Buffer<T>, Self::Error>;

    /// Run `kernel` over `workgroups` with `args` bound to its bindings, in declaration order
    /// (on the GPU: submitted, not waited for); a [`read`](Self::read) after it sees its
    /// writes. On the interpreter, a dispatch that
    /// gives warnings (a read of an unwritten variable, of an inactive lane) fails with the
    /// first.
    ///
    /// # Errors
    /// The argument checks' [`DispatchError`]s (naming the Rust line that called this:
    /// [`DispatchError::caller`]), and what the executor finds running it.
    #[track_caller]
    fn dispatch(
        &self,
        kernel: &Self::Kernel,
        args: &[&Self::Arg],
        workgroups: [u32; 3],
    ) -> Result<(), Self::Error>;

    /// The contents of `buffer`.
    ///
    /// # Errors
    /// A device lost or timed out while reading back (the GPU).
    fn read<T: Pod + WgslType>(&self, buffer: &Self::Buffer<T>) -> Result<Vec<T>, Self::Error>;

    /// Build `kernel` for [`Self::target_limits`] and [`compile`](Self::compile) it.
    ///
    /// # Errors
    /// The builder's [`BuildError`], or [`compile`](Self::compile)'s errors.
    fn build_and_compile(&self, kernel: &KernelBuilder) -> Result<Self::Kernel, Self::Error> {
        let shader = kernel.build_for(&self.target_limits())?;
        self.compile(&shader)
    }
}
