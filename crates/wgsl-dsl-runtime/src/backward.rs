//! Backward passes on the GPU with typed arguments: what `#[kernel(differentiable)]` makes
//! for a kernel's derived backward pass, as [`KernelDef`] and its argument struct are for the
//! forward kernel.
//!
//! - [`DifferentiableDef`]: a kernel definition whose backward pass can be made
//!   (`Backward`, derived or custom) and whose backward arguments are a struct
//!   ([`DifferentiableDef::BackwardArgs`]): the forward kernel's bindings by name, then
//!   `d_<output>` (the incoming gradient of each output, read) and `d_<input>` (the gradient
//!   of each input, `f32`s the pass **adds into**: zero them for a fresh gradient).
//! - [`Gpu::compile_backward`] compiles every kernel of the pass; [`TypedBackward::dispatch`]
//!   binds each kernel's bindings by their role from the struct and runs the pass over the
//!   forward kernel's problem size (the same `size` as its typed dispatch, not a workgroup
//!   count). A gradient the pass accumulates atomically (`array<atomic<u32>>` of `f32` bits)
//!   is bound from the same `GpuBuffer<f32>`: the bits are the `f32`s.
//!
//! `#[kernel(differentiable)] fn name` implements [`DifferentiableDef`] for `Name` and writes
//! `NameBackwardArgs<'a>` (see `wgsl_dsl::autodiff` for the rules of what is an input and an
//! output).

use wgsl_dsl_core::autodiff::{Accumulation, Backward, IterationLimitExceeded, Role};
use wgsl_dsl_core::types::WgslType;

use super::buffer::{Arg, BindArg, GpuBuffer};
use super::gpu::Gpu;
use super::pipeline::Kernel;
use super::recorder::Recorder;
use wgsl_dsl_exec::KernelDef;
use wgsl_dsl_exec::{DispatchError, DispatchErrorKind};

/// The arguments of a backward pass, by role: what each binding of its kernels is bound to.
/// Written by `#[kernel(differentiable)]` as `NameBackwardArgs<'a>`.
pub trait BackwardArgs {
    /// The forward kernel's binding `binding` ([`Role::Data`]).
    fn data(&self, binding: &str) -> Option<&dyn BindArg>;
    /// The incoming gradient of the forward kernel's output `output`
    /// ([`Role::OutputGradient`]).
    fn output_gradient(&self, output: &str) -> Option<&dyn BindArg>;
    /// The gradient of the forward kernel's input `input`, which the pass adds into
    /// ([`Role::InputGradient`]).
    fn input_gradient(&self, input: &str) -> Option<&GpuBuffer<f32>>;
}

/// A kernel definition with a backward pass: [`KernelDef`] plus the pass and the type of its
/// arguments. `#[kernel(differentiable)]` implements it.
pub trait DifferentiableDef: KernelDef {
    /// The backward pass's argument struct over GPU buffers (`NameBackwardArgs<'a>`).
    type BackwardArgs<'a>: BackwardArgs;
    /// The backward pass (derived: `wgsl_dsl::autodiff::derive` with the attribute's options).
    ///
    /// # Errors
    /// The `BuildError` of a kernel that cannot be derived, at the author's line.
    fn backward(&self) -> Result<Backward, wgsl_dsl_core::BuildError>;
}

/// A `GpuBuffer<f32>` bound where a backward kernel declares `array<atomic<u32>>`: an
/// atomically accumulated gradient, whose `u32`s are the bits of its `f32`s.
#[derive(Debug)]
struct AtomicBits<'a>(&'a GpuBuffer<f32>);

impl BindArg for AtomicBits<'_> {
    fn arg(&self) -> Arg<'_> {
        let mut arg = self.0.arg();
        arg.ty = <u32 as WgslType>::ty;
        arg
    }
}

/// What one binding of a backward kernel is bound to.
#[derive(Debug)]
enum Bound<'a> {
    Buffer(&'a dyn BindArg),
    Bits(AtomicBits<'a>),
}

impl BindArg for Bound<'_> {
    fn arg(&self) -> Arg<'_> {
        match self {
            Bound::Buffer(b) => b.arg(),
            Bound::Bits(b) => b.arg(),
        }
    }
}

/// One compiled kernel of a backward pass.
#[derive(Debug)]
struct PassKernel {
    kernel: Kernel,
    roles: Vec<(String, Role)>,
    /// Its iteration-limit flag, if it has bounded loops (zeroed before each pass).
    flag: Option<GpuBuffer<u32>>,
}

/// A [`DifferentiableDef`]'s backward pass compiled for one [`Gpu`]: dispatches take its
/// argument struct and the forward kernel's problem size. Made by [`Gpu::compile_backward`].
#[derive(Debug)]
pub struct TypedBackward<D> {
    def: D,
    backward: Backward,
    kernels: Vec<PassKernel>,
}

impl Gpu {
    /// Make `def`'s backward pass and compile each of its kernels for this device.
    ///
    /// # Errors
    /// [`DispatchErrorKind::Build`] if the pass cannot be made or a kernel does not build; the
    /// errors of [`Gpu::compile`].
    pub fn compile_backward<D: DifferentiableDef>(
        &self,
        def: D,
    ) -> Result<TypedBackward<D>, DispatchError> {
        let backward = def.backward()?;
        let mut kernels = Vec::new();
        for bk in &backward.kernels {
            let shader = bk.kernel.build_for(&self.target_limits())?;
            let bounded = bk
                .roles
                .iter()
                .any(|(_, r)| matches!(r, Role::IterationLimit { .. }));
            kernels.push(PassKernel {
                kernel: self.compile(&shader)?,
                roles: bk.roles.clone(),
                flag: if bounded {
                    Some(GpuBuffer::zeroed(self, 1)?)
                } else {
                    None
                },
            });
        }
        Ok(TypedBackward {
            def,
            backward,
            kernels,
        })
    }
}

impl<D: DifferentiableDef> TypedBackward<D> {
    /// The definition it was compiled from.
    pub fn def(&self) -> &D {
        &self.def
    }

    /// The backward pass: its kernels, each binding's role, and for each gradient the
    /// accumulation chosen and why (`Display` prints them).
    pub fn backward(&self) -> &Backward {
        &self.backward
    }

    /// Record the pass into `rec`: the iteration-limit flag zeroed (if the pass has bounded
    /// loops), then each kernel over the workgroups covering `size` (as the forward kernel's
    /// typed dispatch), its bindings bound by role from `args`. The gradients `d_<input>` are
    /// added into. After the submission, [`TypedBackward::check_iteration_limit`] says whether
    /// a bounded loop ran past its bound.
    ///
    /// # Errors
    /// [`DispatchErrorKind::Interface`] for a role `args` has no buffer for (an argument struct
    /// that does not match the pass), or a gradient whose length is not its value's (`d_x`
    /// and `x`, `d_y` and `y`); the errors of [`Recorder::dispatch`].
    #[track_caller]
    pub fn record(
        &self,
        rec: &mut Recorder<'_>,
        args: &D::BackwardArgs<'_>,
        size: D::Size,
    ) -> Result<(), DispatchError> {
        let caller = std::panic::Location::caller();
        self.record_kernels(rec, args, size)
            .map_err(|e| e.called_at(caller))
    }

    /// [`TypedBackward::record`], its errors without the caller.
    fn record_kernels(
        &self,
        rec: &mut Recorder<'_>,
        args: &D::BackwardArgs<'_>,
        size: D::Size,
    ) -> Result<(), DispatchError> {
        let workgroups = self.def.workgroups(size);
        for pk in &self.kernels {
            if let Some(flag) = &pk.flag {
                rec.clear(flag)?;
            }
            let missing = |binding: &str, what: &str| {
                DispatchError::new(
                    pk.kernel.signature().name.clone(),
                    DispatchErrorKind::Interface {
                        message: format!(
                            "binding `{binding}` ({what}) has no buffer in the backward argument struct"
                        ),
                    },
                )
            };
            // A gradient has its value's length (a shorter one would be written past its end,
            // which robust buffer access drops: a silently wrong gradient).
            let same_length = |gradient: &str, of: &str, len: usize| match args.data(of) {
                Some(value) if value.arg().len != len => Err(DispatchError::new(
                    pk.kernel.signature().name.clone(),
                    DispatchErrorKind::Interface {
                        message: format!(
                            "`{gradient}` holds {len} elements, `{of}` {}: a gradient has the \
                         length of its value",
                            value.arg().len
                        ),
                    },
                )),
                _ => Ok(()),
            };
            let mut bound = Vec::new();
            for (name, role) in &pk.roles {
                bound.push(match role {
                    Role::Data { binding } => Bound::Buffer(
                        args.data(binding)
                            .ok_or_else(|| missing(name, "the forward kernel's data"))?,
                    ),
                    Role::OutputGradient { output } => {
                        let g = args
                            .output_gradient(output)
                            .ok_or_else(|| missing(name, "an output's incoming gradient"))?;
                        same_length(name, output, g.arg().len)?;
                        Bound::Buffer(g)
                    }
                    Role::InputGradient {
                        input,
                        accumulation,
                    } => {
                        let g = args
                            .input_gradient(input)
                            .ok_or_else(|| missing(name, "an input's gradient"))?;
                        same_length(name, input, g.len())?;
                        if *accumulation == Accumulation::Atomic {
                            Bound::Bits(AtomicBits(g))
                        } else {
                            Bound::Buffer(g)
                        }
                    }
                    Role::IterationLimit { .. } => Bound::Buffer(
                        pk.flag
                            .as_ref()
                            .ok_or_else(|| missing(name, "the iteration-limit flag"))?,
                    ),
                });
            }
            let list: Vec<&dyn BindArg> = bound.iter().map(|b| b as &dyn BindArg).collect();
            rec.dispatch(&pk.kernel, &list, workgroups)?;
        }
        Ok(())
    }

    /// Run the pass ([`TypedBackward::record`]), submit it and wait, then check the
    /// iteration-limit flag.
    ///
    /// # Errors
    /// As [`TypedBackward::record`]; [`DispatchErrorKind::IterationLimit`] when a bounded loop ran
    /// past its bound (the gradients are then wrong).
    #[track_caller]
    pub fn dispatch(
        &self,
        gpu: &Gpu,
        args: &D::BackwardArgs<'_>,
        size: D::Size,
    ) -> Result<(), DispatchError> {
        let caller = std::panic::Location::caller();
        let run = || {
            let mut rec = gpu.recorder();
            self.record_kernels(&mut rec, args, size)?;
            rec.submit()?;
            self.check_iteration_limit(gpu)
        };
        run().map_err(|e| e.called_at(caller))
    }

    /// After a recorded pass was submitted: [`DispatchErrorKind::IterationLimit`] if one of its
    /// bounded loops ran past its bound (reads the flag back; `Ok` for a pass without bounded
    /// loops).
    ///
    /// # Errors
    /// [`DispatchErrorKind::IterationLimit`]; [`DispatchErrorKind::Device`] if the read-back fails.
    pub fn check_iteration_limit(&self, gpu: &Gpu) -> Result<(), DispatchError> {
        for (pk, bk) in self.kernels.iter().zip(&self.backward.kernels) {
            if let Some(flag) = &pk.flag {
                bk.check_iteration_limit(flag.read(gpu)?[0]).map_err(
                    |e: IterationLimitExceeded| {
                        DispatchError::from(DispatchErrorKind::IterationLimit(e))
                    },
                )?;
            }
        }
        Ok(())
    }
}
