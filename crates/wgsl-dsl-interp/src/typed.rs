//! Typed dispatch on the interpreter: the argument structs `#[kernel]` and
//! `#[derive(Bindings)]` write, over [`HostBuffer`]s (ARCHITECTURE.md decision *A kernel's interface is written once*, on the second
//! executor). `SgdArgs<'a>` is `SgdArgs<'a, Gpu>`; `SgdArgs<'a, Interpreter>` has the same
//! fields over `HostBuffer`s, with the same checks at compile time (a missing, swapped or
//! wrongly typed buffer, a read-only borrow where the kernel writes) and, at
//! [`Interpreter::compile_typed`], the kernel's bindings against the struct's.
//!
//! The example, `#[kernel] fn scale` dispatched with `ScaleArgs<'_, Interpreter>`, is
//! `tests/interp_typed.rs` at the workspace's root: `#[kernel]` expands to the facade's paths
//! (`wgsl_dsl::runtime`), and the facade's runtime would bring wgpu into this crate's tests.

use bytemuck::Pod;

use super::{HostArg, HostBuffer, InterpError, Interpreter, Program, Report};
use wgsl_dsl_core::TargetLimits;
use wgsl_dsl_core::types::{Format, SampledType, WgslType};
use wgsl_dsl_exec::{DispatchError, ExecutorBuffers, KernelArgs, KernelDef, NoTexture};

impl ExecutorBuffers for Interpreter {
    type Buffer<T: 'static> = HostBuffer<T>;
    type Arg = dyn HostArg;
    fn arg<T: Pod + WgslType>(buffer: &HostBuffer<T>) -> &Self::Arg {
        buffer
    }
    // The interpreter refuses kernels with textures (`InterpError::UnsupportedTexture`).
    type Texture<F: Format> = NoTexture;
    type SampledTexture<T: SampledType> = NoTexture;
    fn texture_arg<F: Format>(texture: &NoTexture) -> &Self::Arg {
        match *texture {}
    }
    fn sampled_texture_arg<T: SampledType>(texture: &NoTexture) -> &Self::Arg {
        match *texture {}
    }
}

/// The argument struct of the kernel definition `K` over host buffers: for
/// `K::Args<'a> = SgdArgs<'a>`, `SgdArgs<'a, Interpreter>`.
pub type HostArgs<'a, K> = <<K as KernelDef>::Args<'a> as KernelArgs>::With<'a, Interpreter>;

/// A compiled [`KernelDef`] on the interpreter: dispatches take its argument struct over
/// [`HostBuffer`]s and the problem size. Made by [`Interpreter::compile_typed`].
#[derive(Clone, Debug)]
pub struct TypedProgram<K> {
    def: K,
    program: Program,
}

impl<K: KernelDef> TypedProgram<K> {
    /// The definition it was compiled from.
    pub fn def(&self) -> &K {
        &self.def
    }

    /// The untyped program, for the positional layer.
    pub fn program(&self) -> &Program {
        &self.program
    }

    /// Run the kernel on `cpu` over the workgroups covering `size` (see
    /// [`Interpreter::dispatch`]: the arguments are still checked against the bindings, for
    /// sizes and limits).
    ///
    /// # Errors
    /// As [`Interpreter::dispatch`].
    #[track_caller]
    pub fn dispatch(
        &self,
        cpu: &Interpreter,
        args: HostArgs<'_, K>,
        size: K::Size,
    ) -> Result<Report, InterpError> {
        let caller = std::panic::Location::caller();
        let workgroups = self.def.workgroups(size);
        args.with_bind_args(|a| cpu.dispatch(&self.program, a, workgroups))
            .map_err(|e| match e {
                InterpError::Dispatch(e) => InterpError::Dispatch(e.called_at(caller)),
                other => other,
            })
    }
}

impl Interpreter {
    /// Build `def`'s kernel for WebGPU's default limits ([`TargetLimits::default`], as
    /// [`KernelBuilder::build`](wgsl_dsl_core::KernelBuilder::build)), compile it (see
    /// [`Interpreter::compile`]) and check that its bindings are exactly those of `K::Args`, in
    /// order, as `Gpu::compile_typed` does.
    ///
    /// # Errors
    /// [`InterpError::Dispatch`] with [`DispatchErrorKind::Build`](wgsl_dsl_exec::DispatchErrorKind::Build) if the kernel does not build,
    /// with [`DispatchErrorKind::Interface`](wgsl_dsl_exec::DispatchErrorKind::Interface) if its bindings differ from its argument struct's;
    /// the errors of [`Interpreter::compile`].
    pub fn compile_typed<K: KernelDef>(&self, def: K) -> Result<TypedProgram<K>, InterpError> {
        self.compile_typed_for(def, &TargetLimits::default())
    }

    /// [`Interpreter::compile_typed`], the kernel built for `target`: a GPU's
    /// (`Gpu::target_limits`) to run what that GPU runs.
    ///
    /// # Errors
    /// As [`Interpreter::compile_typed`].
    pub fn compile_typed_for<K: KernelDef>(
        &self,
        def: K,
        target: &TargetLimits,
    ) -> Result<TypedProgram<K>, InterpError> {
        let shader = def.build().build_for(target).map_err(DispatchError::from)?;
        let program = self.compile(&shader)?;
        wgsl_dsl_exec::check_interface(program.signature(), &K::Args::bindings())?;
        Ok(TypedProgram { def, program })
    }
}
