//! The gradient checker of wgsl-dsl ([`check`]; users reach it as `wgsl_dsl::autodiff::check`):
//! a backward pass (derived or custom) against central differences of its forward kernel and
//! the adjoint identity, on the interpreter or the GPU; and [`run_backward`].
//!
//! With random incoming gradients `dy` for the outputs, the backward pass's gradient of each
//! input element `x_j` must equal `dL/dx_j` for `L = sum_k dy_k y_k` (the outputs' elements the
//! forward kernel writes). The checker runs the backward pass once (its gradient buffers
//! holding random values first, so that accumulation is checked too), then the forward kernel
//! twice per input element, at `x_j +- h` with `h = step * max(1, |x_j|)` (rounded to `f32`;
//! the difference divides by the rounded step), and reports, for each gradient buffer, the
//! element where `|derived - central| / max(1, |central|)` is largest. On the interpreter every
//! dispatch also passes its race, bounds and barrier checks (a failure is an error here).
//!
//! Central differences of `f32` kernels are good to about `1e-3` relative with the default
//! step; across a kink (`max(x, 0)` within `h` of 0) they are not derivatives at all, so
//! check on inputs away from kinks.
//!
//! It runs kernels on any [`Executor`] (written once against the contract, `wgsl-dsl-exec`);
//! it depends on the interpreter (`wgsl-dsl-interp`) for its errors and for the interpreter's
//! second run of a pass checked on another executor, not on the GPU runtime.
//! `wgsl_dsl::autodiff` re-exports its items.

use std::fmt;

use wgsl_dsl_core::BuildError;
use wgsl_dsl_core::autodiff::{Accumulation, Backward, Role, TangentRole};
use wgsl_dsl_core::kernel::{BindingKind, KernelBuilder};
use wgsl_dsl_core::shader::Shader;
use wgsl_dsl_core::types::{ScalarTy, Ty};
pub use wgsl_dsl_exec::Executor;
use wgsl_dsl_exec::{DeviceError, DispatchError};
use wgsl_dsl_interp::{InterpError, Interpreter};

/// The contents of one binding: an array (or, for a scalar uniform, one element).
#[derive(Clone, Debug, PartialEq)]
pub enum Data {
    /// `f32`s: an `array<f32>`, an `f32` uniform.
    F32(Vec<f32>),
    /// `u32`s: an `array<u32>` (or `array<atomic<u32>>`), a `u32` uniform.
    U32(Vec<u32>),
    /// `i32`s.
    I32(Vec<i32>),
}

impl Data {
    fn len(&self) -> usize {
        match self {
            Data::F32(v) => v.len(),
            Data::U32(v) => v.len(),
            Data::I32(v) => v.len(),
        }
    }
}

/// The checker's settings.
#[derive(Clone, Copy, Debug)]
pub struct CheckOptions {
    /// The central differences' step, relative: `h = step * max(1, |x|)`. Default `2e-3`.
    pub step: f64,
    /// Seed of the random incoming gradients, tangents and initial gradient contents.
    /// Default 1.
    pub seed: u64,
    /// The largest difference error ([`WorstError::error`]) an element [`Verdict::Agrees`]
    /// with; beyond it plus the differences' uncertainty, it is [`Verdict::Wrong`].
    /// Default `2e-3`.
    pub tolerance: f64,
    /// Check the differences of at most this many elements of each input (spread evenly
    /// over it); `None`: all. Default `None`.
    pub elements: Option<usize>,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            step: 2e-3,
            seed: 1,
            tolerance: 2e-3,
            elements: None,
        }
    }
}

/// What the central differences say of one element's derivative.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verdict {
    /// Within the tolerance of the difference, which resolves the derivative.
    Agrees,
    /// The differences at three steps disagree with each other by more than the tolerance
    /// (rounding of the `f32` forward, a kink within the steps, ill-conditioning): they
    /// cannot tell, and the adjoint identity decides.
    Unresolvable,
    /// Off by more than the tolerance plus the differences' own uncertainty: wrong.
    Wrong,
}

/// The worst element of one gradient buffer: the worst verdict, then the largest error.
#[derive(Clone, Debug, PartialEq)]
pub struct WorstError {
    /// The gradient binding (`d_x`).
    pub gradient: String,
    /// The forward kernel's input it is the gradient of.
    pub input: String,
    /// The element's index in the input.
    pub index: usize,
    /// The backward pass's value.
    pub derived: f64,
    /// The central difference at the step `h` ([`CheckOptions::step`]).
    pub central: f64,
    /// `|derived - central| / max(1, |central|)`.
    pub error: f64,
    /// How far the central differences at `h / 2` and `2 h` are from the one at `h`,
    /// relative as `error`: their own error, estimated.
    pub uncertainty: f64,
    /// What the differences say.
    pub verdict: Verdict,
}

/// What [`check`] found.
#[derive(Clone, Debug, PartialEq)]
pub struct GradientReport {
    /// The forward kernel.
    pub kernel: String,
    /// Where it ran.
    pub executor: &'static str,
    /// The adjoint identity between forward mode and the backward pass.
    pub adjoint: Adjoint,
    /// The worst element of each gradient buffer, in binding order.
    pub worst: Vec<WorstError>,
    /// Forward dispatches run for the central differences.
    pub forward_dispatches: usize,
    /// [`CheckOptions::tolerance`].
    pub difference_tolerance: f64,
    /// The outputs the forward kernel left partly NaN over the grid, in binding order: an
    /// element still NaN after the run was not written (outputs are poisoned with NaN first),
    /// or was written NaN. Neither side of the check sees those elements, so their
    /// derivatives are not checked; a grid that covers too few invocations shows here.
    pub unwritten: Vec<Unwritten>,
}

/// An output the forward run left partly NaN ([`GradientReport::unwritten`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unwritten {
    /// The output binding.
    pub output: String,
    /// Its elements still NaN after the forward run.
    pub elements: usize,
    /// Its length.
    pub len: usize,
}

impl GradientReport {
    /// The largest difference error over every gradient buffer (0 without any).
    pub fn max_error(&self) -> f64 {
        self.worst.iter().map(|w| w.error).fold(0.0, f64::max)
    }

    /// True if the adjoint identity holds (or forward mode could not be made) and no
    /// element's differences say [`Verdict::Wrong`].
    pub fn passed(&self) -> bool {
        self.identity_holds() && self.worst.iter().all(|w| w.verdict != Verdict::Wrong)
    }

    /// True unless the adjoint identity was checked and fails.
    pub fn identity_holds(&self) -> bool {
        match &self.adjoint {
            Adjoint::Checked(a) => a.holds(),
            Adjoint::NotMade(_) => true,
        }
    }
}

impl fmt::Display for GradientReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "gradient check of `{}` on {} ({} forward dispatches):",
            self.kernel, self.executor, self.forward_dispatches
        )?;
        match &self.adjoint {
            Adjoint::Checked(a) => writeln!(
                f,
                "  adjoint identity: <u, J v> = {:.9e}, <J^T u, v> = {:.9e}, error {:.1e} of magnitude {:.3e} (contributions {}; tolerance {:.1e}): {}",
                a.forward,
                a.backward,
                a.error,
                a.magnitude,
                a.contributions
                    .map_or_else(|| "not bounded".to_string(), |c| format!("{c:.3e}")),
                a.tolerance,
                if a.holds() { "holds" } else { "FAILS" }
            )?,
            Adjoint::NotMade(why) => writeln!(
                f,
                "  adjoint identity: not checked (no forward mode: {why})"
            )?,
        }
        for w in &self.worst {
            writeln!(
                f,
                "  {:<12} worst at {}[{}]: derived {:>13.6e}, central difference {:>13.6e}, error {:.1e}, uncertainty {:.1e}: {:?}",
                w.gradient,
                w.input,
                w.index,
                w.derived,
                w.central,
                w.error,
                w.uncertainty,
                w.verdict
            )?;
        }
        for u in &self.unwritten {
            writeln!(
                f,
                "  note: {} of the {} elements of `{}` are NaN after the forward run (not written over this grid, or written NaN): their derivatives are not checked",
                u.elements, u.len, u.output
            )?;
        }
        Ok(())
    }
}

/// Why a check could not be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CheckError {
    /// A kernel did not build.
    #[error(transparent)]
    Build(#[from] BuildError),
    /// The interpreter refused or stopped a dispatch (a race, an index out of bounds, ...).
    #[error(transparent)]
    Interp(Box<InterpError>),
    /// The GPU refused a dispatch.
    #[error(transparent)]
    Dispatch(#[from] DispatchError),
    /// The GPU failed.
    #[error(transparent)]
    Device(#[from] DeviceError),
    /// An executor other than the interpreter and the GPU failed.
    #[error(transparent)]
    Executor(Box<dyn std::error::Error + Send + Sync>),
    /// A bounded loop of the backward pass ran past its `max_iterations`: its gradients are
    /// not computed.
    #[error(transparent)]
    IterationLimit(#[from] wgsl_dsl_core::autodiff::IterationLimitExceeded),
    /// A binding of the forward kernel has no data.
    #[error("no data for binding `{0}`")]
    MissingData(String),
    /// An output of the forward kernel has no incoming gradient ([`run_backward`]).
    #[error("no incoming gradient for output `{0}`")]
    MissingGradient(String),
    /// An incoming gradient's length is not its output's ([`run_backward`], where the output's
    /// contents are among the data).
    #[error("the incoming gradient of `{output}` holds {found} elements, `{output}` {expected}")]
    GradientLength {
        /// The output.
        output: String,
        /// The output's length.
        expected: usize,
        /// The gradient's.
        found: usize,
    },
    /// A binding's data is not of its type.
    #[error(
        "binding `{binding}` holds {ty}; its data is not of that element type (the checker takes f32, u32 and i32 scalars and arrays)"
    )]
    WrongData {
        /// The binding.
        binding: String,
        /// Its WGSL type.
        ty: String,
    },
    /// A gradient buffer that should be added into was not: started from random contents,
    /// the backward pass left other values than its gradient (computed from zeros) added to
    /// them (it overwrote them, or added twice).
    #[error(
        "`{gradient}[{index}]`: from {initial} the backward pass left {after}, where adding its gradient {gradient_value} gives {expected} (is `{gradient}` written instead of added into?)"
    )]
    Accumulation {
        /// The gradient binding.
        gradient: String,
        /// The element.
        index: usize,
        /// Its contents before the pass.
        initial: f32,
        /// After it.
        after: f32,
        /// The pass's gradient there, from zeroed contents.
        gradient_value: f64,
        /// `initial + gradient_value`.
        expected: f64,
    },
    /// A backward kernel's binding has a role the forward kernel does not match.
    #[error(
        "backward kernel `{kernel}`: binding `{binding}` refers to `{forward}`, which the forward kernel has not (as that kind of binding)"
    )]
    Role {
        /// The backward kernel.
        kernel: String,
        /// Its binding.
        binding: String,
        /// The forward binding named.
        forward: String,
    },
}

/// Random values in `[-1, 1)`: SplitMix64 (Steele, Lea, Flood 2014), enough for test data.
struct Random(u64);

impl Random {
    fn next(&mut self) -> f32 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        // 24 random bits, as a float in [-1, 1).
        ((z >> 40) as f32 / (1u64 << 23) as f32) - 1.0
    }
}

impl From<InterpError> for CheckError {
    fn from(e: InterpError) -> Self {
        CheckError::Interp(Box::new(e))
    }
}

/// An executor's error as the checker reports it: the interpreter's as [`CheckError::Interp`],
/// the runtime's as [`CheckError::Dispatch`], another executor's as [`CheckError::Executor`].
fn executor_error<X: std::error::Error + Send + Sync + 'static>(e: X) -> CheckError {
    let e: Box<dyn std::error::Error + Send + Sync> = Box::new(e);
    match e.downcast::<InterpError>() {
        Ok(e) => CheckError::Interp(e),
        Err(e) => match e.downcast::<DispatchError>() {
            Ok(e) => CheckError::Dispatch(*e),
            Err(e) => CheckError::Executor(e),
        },
    }
}

/// A kernel compiled for an executor, with the shader it was compiled from.
struct Compiled<E: Executor> {
    kernel: E::Kernel,
    shader: Shader,
}

/// One binding's buffer on an executor.
enum Buf<E: Executor> {
    F32(E::Buffer<f32>),
    U32(E::Buffer<u32>),
    I32(E::Buffer<i32>),
}

fn compile<E: Executor>(k: &KernelBuilder, on: &E) -> Result<Compiled<E>, CheckError> {
    let shader = k.build_for(&on.target_limits())?;
    Ok(Compiled {
        kernel: on.compile(&shader).map_err(executor_error)?,
        shader,
    })
}

impl<E: Executor> Compiled<E> {
    fn shader(&self) -> &Shader {
        &self.shader
    }

    /// Dispatch over `data` (one per binding, in order); the bindings' contents after.
    fn run(&self, on: &E, data: &[Data], grid: [u32; 3]) -> Result<Vec<Data>, CheckError> {
        let bufs: Vec<Buf<E>> = data
            .iter()
            .map(|d| -> Result<Buf<E>, CheckError> {
                Ok(match d {
                    Data::F32(v) => Buf::F32(on.upload(v).map_err(executor_error)?),
                    Data::U32(v) => Buf::U32(on.upload(v).map_err(executor_error)?),
                    Data::I32(v) => Buf::I32(on.upload(v).map_err(executor_error)?),
                })
            })
            .collect::<Result<_, _>>()?;
        let args: Vec<&E::Arg> = bufs
            .iter()
            .map(|b| match b {
                Buf::F32(b) => E::arg(b),
                Buf::U32(b) => E::arg(b),
                Buf::I32(b) => E::arg(b),
            })
            .collect();
        on.dispatch(&self.kernel, &args, grid)
            .map_err(executor_error)?;
        bufs.iter()
            .map(|b| -> Result<Data, CheckError> {
                Ok(match b {
                    Buf::F32(b) => Data::F32(on.read(b).map_err(executor_error)?),
                    Buf::U32(b) => Data::U32(on.read(b).map_err(executor_error)?),
                    Buf::I32(b) => Data::I32(on.read(b).map_err(executor_error)?),
                })
            })
            .collect()
    }
}

/// An output's values as `f32`s: an `array<f32>`'s, or the bits of an `array<atomic<u32>>`
/// added into with `atomic_add_f32`.
fn floats(d: &Data) -> Option<Vec<f32>> {
    match d {
        Data::F32(v) => Some(v.clone()),
        Data::U32(v) => Some(v.iter().map(|b| f32::from_bits(*b)).collect()),
        Data::I32(_) => None,
    }
}

/// An output's contents before a run: NaN where it is stored into (an element the kernel
/// does not write stays NaN), `0.0` where it is added into (`array<atomic<u32>>`, as bits).
fn poisoned(ty: &Ty, n: usize) -> Data {
    match ty {
        Ty::Array { elem, .. } if **elem == Ty::Atomic(ScalarTy::U32) => Data::U32(vec![0; n]),
        _ => Data::F32(vec![f32::NAN; n]),
    }
}

/// The scalar element of a binding's type, for the data check.
fn element(ty: &Ty) -> Option<ScalarTy> {
    match ty {
        Ty::Scalar(s) | Ty::Atomic(s) => Some(*s),
        Ty::Array { elem, .. } => element(elem),
        _ => None,
    }
}

fn check_type(binding: &str, ty: &Ty, d: &Data) -> Result<(), CheckError> {
    let ok = matches!(
        (element(ty), d),
        (Some(ScalarTy::F32), Data::F32(_))
            | (Some(ScalarTy::U32), Data::U32(_))
            | (Some(ScalarTy::I32), Data::I32(_))
    );
    if ok {
        Ok(())
    } else {
        Err(CheckError::WrongData {
            binding: binding.to_string(),
            ty: ty.wgsl_name(),
        })
    }
}

/// `L = sum_k dy_k y_k` over the elements the forward kernel wrote (not NaN: outputs are
/// poisoned with NaN first).
fn objective(outputs: &[(usize, Vec<f32>)], after: &[Data]) -> f64 {
    let mut l = 0.0;
    for (i, dy) in outputs {
        if let Some(y) = floats(&after[*i]) {
            for (a, b) in y.iter().zip(dy) {
                if !a.is_nan() {
                    l += f64::from(*a) * f64::from(*b);
                }
            }
        }
    }
    l
}

/// The contents of one gradient buffer over a backward pass: `(gradient binding, input,
/// scheme, contents before, contents after)`.
struct GradientBuffer {
    gradient: String,
    input: String,
    scheme: Accumulation,
    initial: Data,
    current: Data,
}

impl GradientBuffer {
    /// The backward pass's gradient: what it added (or wrote, for `Write`).
    fn derived(&self) -> Vec<f64> {
        let as_f32 = |d: &Data| -> Vec<f32> {
            match d {
                Data::F32(v) => v.clone(),
                Data::U32(v) => v.iter().map(|b| f32::from_bits(*b)).collect(),
                Data::I32(v) => v.iter().map(|b| *b as f32).collect(),
            }
        };
        let (g0, g1) = (as_f32(&self.initial), as_f32(&self.current));
        g1.iter()
            .zip(&g0)
            .map(|(a, b)| match self.scheme {
                Accumulation::Write => f64::from(*a),
                _ => f64::from(*a) - f64::from(*b),
            })
            .collect()
    }
}

/// The run from random contents `before` added `accumulated` where the run from zeros gives
/// `g.derived()`: equal to within the rounding of the additions into contents of magnitude
/// `|before| + |gradient|` (a kernel that overwrote instead of adding is off by `before`).
fn check_accumulation(
    g: &GradientBuffer,
    accumulated: &[f64],
    before: &Data,
) -> Result<(), CheckError> {
    if g.scheme == Accumulation::Write {
        return Ok(());
    }
    let before: Vec<f32> = match before {
        Data::F32(v) => v.clone(),
        Data::U32(v) => v.iter().map(|b| f32::from_bits(*b)).collect(),
        Data::I32(v) => v.iter().map(|b| *b as f32).collect(),
    };
    for (index, ((acc, precise), b)) in accumulated.iter().zip(g.derived()).zip(before).enumerate()
    {
        let scale = f64::from(b).abs() + precise.abs();
        // 2^-12 of the magnitude: far above the rounding of any count of additions the
        // checker's sizes make, far below a missing `before` (uniform in [-1, 1)).
        if (acc - precise).abs() > scale / 4096.0 || acc.is_nan() != precise.is_nan() {
            return Err(CheckError::Accumulation {
                gradient: g.gradient.clone(),
                index,
                initial: b,
                after: (f64::from(b) + acc) as f32,
                gradient_value: precise,
                expected: f64::from(b) + precise,
            });
        }
    }
    Ok(())
}

/// The forward kernel's data and what the check derives from it.
struct Setup<'a> {
    sig: &'a wgsl_dsl_core::kernel::KernelSignature,
    /// The forward kernel's bindings' contents, outputs poisoned with NaN.
    base: Vec<Data>,
    /// The incoming gradient `u` of each output, by binding index.
    outputs: Vec<(usize, Vec<f32>)>,
}

impl Setup<'_> {
    /// The forward kernel's data for the binding named `binding`, whatever its kind.
    fn data_of(&self, binding: &str) -> Option<Data> {
        let i = self.sig.bindings.iter().position(|b| b.name == *binding)?;
        Some(self.base[i].clone())
    }

    fn index_of(&self, name: &str, kinds: &[BindingKind]) -> Option<usize> {
        self.sig
            .bindings
            .iter()
            .position(|b| b.name == name && kinds.contains(&b.kind))
    }
}

/// The gradients a backward pass computed ([`run_backward`]), by input.
#[derive(Clone, Debug, PartialEq)]
pub struct Gradients {
    /// `(input binding, gradient)` for each input the pass differentiates, in the order its
    /// kernels first bind them; each gradient has the input's length.
    pub by_input: Vec<(String, Vec<f32>)>,
}

impl Gradients {
    /// The gradient of the input binding `input`, if the pass computes one.
    pub fn get(&self, input: &str) -> Option<&[f32]> {
        self.by_input
            .iter()
            .find(|(n, _)| n == input)
            .map(|(_, g)| g.as_slice())
    }
}

/// Run a backward pass (derived by [`derive()`](wgsl_dsl_core::autodiff::derive) or custom) in one
/// call: every kernel of `backward` over the forward kernel's grid `workgroups` (a count of
/// workgroups per dimension, as [`check`] and the untyped `dispatch`es take), each binding
/// bound by its [`Role`]: the forward kernel's data from `data` (by the forward binding's
/// name: the bindings the roles read, and each differentiated input, whose length is its
/// gradient's), the incoming gradient of each output from `output_gradients` (by the
/// output's name, of its length: a derived pass takes the output's length from it, so a
/// shorter one gives a part of the gradients without an error; give the output's contents in
/// `data` too to have the lengths compared), each gradient buffer zeroed first (an `Atomic` one as
/// `u32` bits) and shared by name between the kernels, each iteration-limit flag zeroed and
/// read back after. Returns each input's gradient as `f32`s, whatever the accumulation
/// scheme. On the interpreter every kernel also passes the race, bounds and
/// barrier checks.
///
/// # Errors
/// [`CheckError::MissingData`] for a forward binding a role needs without data;
/// [`CheckError::MissingGradient`] for an output without an incoming gradient;
/// [`CheckError::GradientLength`] for an incoming gradient of another length than its
/// output's contents in `data`;
/// [`CheckError::IterationLimit`] when a bounded loop ran past its `max_iterations` (the
/// gradients are then not computed); [`CheckError::Build`], [`CheckError::Interp`] (an
/// argument of the wrong type or length, a race), [`CheckError::Dispatch`],
/// [`CheckError::Device`] from building and running the kernels.
pub fn run_backward<E: Executor>(
    backward: &Backward,
    data: &[(&str, Data)],
    output_gradients: &[(&str, Vec<f32>)],
    workgroups: [u32; 3],
    on: &E,
) -> Result<Gradients, CheckError> {
    // A derived pass reads an output's length from its incoming gradient (`arrayLength(&d_y)`
    // where the forward kernel read `arrayLength(&y)`), so a shorter gradient computes a part
    // of the gradients without any error: compare where the output is among the data.
    for (output, gradient) in output_gradients {
        if let Some((_, y)) = data.iter().find(|(n, _)| n == output)
            && y.len() != gradient.len()
        {
            return Err(CheckError::GradientLength {
                output: output.to_string(),
                expected: y.len(),
                found: gradient.len(),
            });
        }
    }
    let named = Named {
        data,
        output_gradients,
    };
    let mut gradients = Vec::new();
    backward_pass(
        backward,
        &named,
        on,
        workgroups,
        &mut |_, n| vec![0.0; n],
        &mut gradients,
    )?;
    let mut by_input: Vec<(String, Vec<f32>)> = Vec::new();
    for g in &gradients {
        let d: Vec<f32> = g.derived().iter().map(|v| *v as f32).collect();
        match by_input.iter_mut().find(|(n, _)| *n == g.input) {
            // Two gradient bindings of one input (a pass that splits it): their sum.
            Some((_, sum)) => sum.iter_mut().zip(&d).for_each(|(a, b)| *a += b),
            None => by_input.push((g.input.clone(), d)),
        }
    }
    Ok(Gradients { by_input })
}

/// Where a backward pass's bindings come from: the checker's [`Setup`] (bindings of the
/// forward kernel it compiled) or [`run_backward`]'s data by name.
trait PassData {
    /// The forward kernel's contents of `binding` ([`Role::Data`]).
    fn data(&self, binding: &str) -> Option<Data>;
    /// The incoming gradient of `output` ([`Role::OutputGradient`]).
    fn output_gradient(&self, output: &str) -> Option<Vec<f32>>;
    /// The length of the input `input` ([`Role::InputGradient`]).
    fn input_len(&self, input: &str) -> Option<usize>;
    /// The error for a role whose forward binding (`forward`) has nothing here.
    fn missing(&self, kernel: &str, binding: &str, forward: &str) -> CheckError;
    /// The error for an output without an incoming gradient.
    fn missing_gradient(&self, kernel: &str, binding: &str, output: &str) -> CheckError {
        self.missing(kernel, binding, output)
    }
}

impl PassData for Setup<'_> {
    fn data(&self, binding: &str) -> Option<Data> {
        self.data_of(binding)
    }

    fn output_gradient(&self, output: &str) -> Option<Vec<f32>> {
        let i = self.index_of(output, &[BindingKind::StorageReadWrite])?;
        let (_, u) = self.outputs.iter().find(|(j, _)| *j == i)?;
        Some(u.clone())
    }

    fn input_len(&self, input: &str) -> Option<usize> {
        let i = self.index_of(input, &[BindingKind::StorageRead])?;
        Some(self.base[i].len())
    }

    fn missing(&self, kernel: &str, binding: &str, forward: &str) -> CheckError {
        CheckError::Role {
            kernel: kernel.to_string(),
            binding: binding.to_string(),
            forward: forward.to_string(),
        }
    }
}

/// [`run_backward`]'s data: the forward kernel's bindings and the outputs' incoming
/// gradients, by name.
struct Named<'a> {
    data: &'a [(&'a str, Data)],
    output_gradients: &'a [(&'a str, Vec<f32>)],
}

impl PassData for Named<'_> {
    fn data(&self, binding: &str) -> Option<Data> {
        let (_, d) = self.data.iter().find(|(n, _)| *n == binding)?;
        Some(d.clone())
    }

    fn output_gradient(&self, output: &str) -> Option<Vec<f32>> {
        let (_, u) = self.output_gradients.iter().find(|(n, _)| *n == output)?;
        Some(u.clone())
    }

    fn input_len(&self, input: &str) -> Option<usize> {
        self.data(input).map(|d| d.len())
    }

    fn missing(&self, _kernel: &str, _binding: &str, forward: &str) -> CheckError {
        CheckError::MissingData(forward.to_string())
    }

    fn missing_gradient(&self, _kernel: &str, _binding: &str, output: &str) -> CheckError {
        CheckError::MissingGradient(output.to_string())
    }
}

/// Run the backward pass on `on`, its gradient buffers shared by name between its kernels
/// and starting from their `initial` contents (`initial(scheme, length)` on the first run;
/// kept for the next).
fn backward_pass<E: Executor>(
    backward: &Backward,
    pass: &dyn PassData,
    on: &E,
    workgroups: [u32; 3],
    initial: &mut dyn FnMut(Accumulation, usize) -> Vec<f32>,
    gradients: &mut Vec<GradientBuffer>,
) -> Result<(), CheckError> {
    for g in gradients.iter_mut() {
        g.current = g.initial.clone();
    }
    for bk in &backward.kernels {
        let compiled = compile(&bk.kernel, on)?;
        let mut args = Vec::new();
        for (name, role) in &bk.roles {
            let err = |forward: &str| pass.missing(bk.kernel.name(), name, forward);
            let d = match role {
                Role::Data { binding } => pass.data(binding).ok_or_else(|| err(binding))?,
                Role::OutputGradient { output } => Data::F32(
                    pass.output_gradient(output)
                        .ok_or_else(|| pass.missing_gradient(bk.kernel.name(), name, output))?,
                ),
                Role::InputGradient {
                    input,
                    accumulation,
                } => {
                    if let Some(g) = gradients.iter().find(|g| g.gradient == *name) {
                        g.current.clone()
                    } else {
                        let n = pass.input_len(input).ok_or_else(|| err(input))?;
                        let initial = initial(*accumulation, n);
                        let d = match accumulation {
                            Accumulation::Atomic => {
                                Data::U32(initial.iter().map(|v| v.to_bits()).collect())
                            }
                            _ => Data::F32(initial),
                        };
                        gradients.push(GradientBuffer {
                            gradient: name.clone(),
                            input: input.clone(),
                            scheme: *accumulation,
                            initial: d.clone(),
                            current: d.clone(),
                        });
                        d
                    }
                }
                Role::IterationLimit { .. } => Data::U32(vec![0]),
            };
            args.push(d);
        }
        let after = compiled.run(on, &args, workgroups)?;
        for ((name, role), d) in bk.roles.iter().zip(after) {
            if let (Role::IterationLimit { .. }, Data::U32(flag)) = (role, &d) {
                bk.check_iteration_limit(flag[0])?;
            }
            if let Some(g) = gradients.iter_mut().find(|g| g.gradient == *name) {
                g.current = d;
            }
        }
    }
    Ok(())
}

/// How far apart the adjoint identity's two sides may be, in units of `f32::EPSILON` times
/// their magnitude ([`AdjointCheck::magnitude`]: the magnitudes of their terms, or of every
/// chain-rule contribution, cancelled ones included): each side is a sum of products of
/// values each computed in `f32` (a few roundings each, and the kernel's own arithmetic), so
/// a right derivative is within a few dozen roundings of the magnitudes; a wrong one is off
/// by a fraction of them.
pub const IDENTITY_ULPS: f64 = 256.0;

/// The adjoint identity `<u, J v> = <J^T u, v>` between the forward kernel's tangent kernel
/// (forward mode, [`derive_tangent`](wgsl_dsl_core::autodiff::derive_tangent)) and the backward
/// pass, for random `u` (the outputs' incoming gradients) and `v` (the inputs' tangents).
#[derive(Clone, Debug, PartialEq)]
pub struct AdjointCheck {
    /// `<u, J v>`: the incoming gradients times the tangent kernel's output tangents, over
    /// the elements the forward kernel writes.
    pub forward: f64,
    /// `<J^T u, v>`: the backward pass's gradients times the inputs' tangents.
    pub backward: f64,
    /// The scale of the two sides' rounding: the sum of the magnitudes of both sides' terms,
    /// or twice [`AdjointCheck::contributions`], whichever is larger.
    pub magnitude: f64,
    /// `sum_k |u_k| (M |v|)_k`, with `M |v|` the magnitude kernel's outputs
    /// ([`derive_tangent_magnitude`](wgsl_dsl_core::autodiff::derive_tangent_magnitude)): the
    /// magnitudes of every chain-rule contribution to either side, including those that
    /// cancel inside one gradient element (`x - x`: each side is 0, but a GPU that contracts
    /// `u * a - u * a` into a fused multiply-add leaves one rounding of `u * a`). `None`
    /// where that kernel cannot be made (a product with a matrix).
    pub contributions: Option<f64>,
    /// `|forward - backward| / magnitude` (infinite where a side is not finite).
    pub error: f64,
    /// The most `error` a right derivative reaches: [`IDENTITY_ULPS`] `* f32::EPSILON`.
    pub tolerance: f64,
}

impl AdjointCheck {
    /// True if the two sides agree within the tolerance.
    pub fn holds(&self) -> bool {
        self.error <= self.tolerance
    }
}

/// The adjoint identity's outcome.
#[derive(Clone, Debug, PartialEq)]
pub enum Adjoint {
    /// Checked.
    Checked(AdjointCheck),
    /// Forward mode could not be made of the forward kernel (the check then rests on the
    /// differences alone): why.
    NotMade(String),
}

/// Check `backward` against `forward` over the grid `workgroups`, with `data` the contents
/// of the forward kernel's bindings by name (every binding; an output's data gives its
/// length, its contents are replaced by NaN, or by `0.0` for an `array<atomic<u32>>` output that
/// `atomic_add_f32` adds into). Two checks that do not share a mistake:
///
/// - **The adjoint identity** `<u, J v> = <J^T u, v>` ([`AdjointCheck`]): the forward
///   kernel's tangent kernel (forward mode, statement by statement) gives `J v` for random
///   `v`, the backward pass gives `J^T u` for random incoming gradients `u`; the two inner
///   products agree to rounding for a right backward pass, at every point (kinks and
///   ill-conditioned points included), with no step to choose.
/// - **Central differences** of the forward kernel, element by element ([`WorstError`]).
///
/// `on` is any [`Executor`]: `&Interpreter::new()`, a `&Gpu`. The backward pass runs once on
/// `on` (its gradient buffers holding random values first, so that accumulation is checked
/// too), and, when `on` is not the interpreter, once more on the interpreter, whose race, bounds and barrier checks it must pass (a race that the GPU's
/// sums happen to hide is still an error here).
///
/// ```
/// use wgsl_dsl::prelude::*;
/// use wgsl_dsl::autodiff::{check, CheckOptions, Data};
/// use wgsl_dsl::interp::Interpreter;
///
/// let mut k = KernelBuilder::new("square", [64, 1, 1]);
/// let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
/// let y = k.storage::<RuntimeArray<f32>, ReadWrite>("y");
/// let i = k.let_("i", global_invocation_id().x());
/// k.if_(i.lt(x.len()), |k| {
///     let v = k.let_("v", x.at(&i).load());
///     k.store(&y.at(&i), &v * sin(&v));
/// });
/// let backward = k.derive_backward()?;
/// let xs: Vec<f32> = (0..37).map(|j| j as f32 * 0.1 - 1.5).collect();
/// let report = check(
///     &k,
///     &backward,
///     &[("x", Data::F32(xs)), ("y", Data::F32(vec![0.0; 37]))],
///     [1, 1, 1],
///     &Interpreter::new(),
///     CheckOptions::default(),
/// )?;
/// assert!(report.passed(), "{report}");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// [`CheckError`]: a kernel that does not build, an interpreter finding (race, bounds,
/// barrier) in any dispatch (the backward pass's on the interpreter always), a dispatch or
/// device failure, data missing or of the wrong type, a role naming no binding of the
/// forward kernel.
pub fn check<E: Executor>(
    forward: &KernelBuilder,
    backward: &Backward,
    data: &[(&str, Data)],
    workgroups: [u32; 3],
    on: &E,
    options: CheckOptions,
) -> Result<GradientReport, CheckError> {
    let mut rng = Random(options.seed);
    let fwd = compile(forward, on)?;
    let sig = fwd.shader().signature.clone();
    // The forward kernel's data, in binding order; outputs poisoned.
    let mut base = Vec::new();
    let mut outputs: Vec<(usize, Vec<f32>)> = Vec::new();
    for (i, b) in sig.bindings.iter().enumerate() {
        let d = data
            .iter()
            .find(|(n, _)| *n == b.name)
            .map(|(_, d)| d.clone())
            .ok_or_else(|| CheckError::MissingData(b.name.clone()))?;
        check_type(&b.name, &b.ty, &d)?;
        let is_output = backward.kernels.iter().any(|k| {
            k.roles
                .iter()
                .any(|(_, r)| matches!(r, Role::OutputGradient { output } if *output == b.name))
        });
        if is_output {
            let n = d.len();
            outputs.push((i, (0..n).map(|_| rng.next()).collect()));
            base.push(poisoned(&b.ty, n));
        } else {
            base.push(d);
        }
    }
    let setup = Setup {
        sig: &sig,
        base,
        outputs,
    };

    // The backward pass, on the interpreter too (its race and bounds checks).
    let mut gradients: Vec<GradientBuffer> = Vec::new();
    // Gradient buffers start from random contents (a written one from NaN), so that the
    // accumulation is checked too.
    let mut random_initial = |scheme: Accumulation, n: usize| match scheme {
        Accumulation::Write => vec![f32::NAN; n],
        _ => (0..n).map(|_| rng.next()).collect(),
    };
    if !on.checks_accesses() {
        backward_pass::<Interpreter>(
            backward,
            &setup,
            &Interpreter::new(),
            workgroups,
            &mut random_initial,
            &mut gradients,
        )?;
    }
    // The pass on `on`, from the gradient buffers' `initial` contents.
    let mut pass_on = |gradients: &mut Vec<GradientBuffer>| {
        backward_pass(
            backward,
            &setup,
            on,
            workgroups,
            &mut random_initial,
            gradients,
        )
    };
    pass_on(&mut gradients)?;
    // Again from zeroed gradient buffers: the gradient itself at full precision (what a pass
    // adds to random contents of magnitude ~1 keeps only the bits above their last place: a
    // gradient of 1e-5 would keep 6 of its 24, and the adjoint identity would then blame a
    // right gradient). The first run checks the accumulation against it.
    let accumulated: Vec<Vec<f64>> = gradients.iter().map(GradientBuffer::derived).collect();
    let initial: Vec<Data> = gradients.iter().map(|g| g.initial.clone()).collect();
    for g in &mut gradients {
        if g.scheme != Accumulation::Write {
            g.initial = match &g.initial {
                Data::F32(v) => Data::F32(vec![0.0; v.len()]),
                Data::U32(v) => Data::U32(vec![0; v.len()]),
                Data::I32(v) => Data::I32(vec![0; v.len()]),
            };
        }
    }
    pass_on(&mut gradients)?;
    for ((g, acc), before) in gradients.iter().zip(&accumulated).zip(&initial) {
        check_accumulation(g, acc, before)?;
    }

    let adjoint = adjoint_identity(forward, &setup, &gradients, on, workgroups, &mut rng)?;
    let unwritten = unwritten_outputs(&setup, &fwd.run(on, &setup.base, workgroups)?);

    // Central differences, element by element.
    let mut worst = Vec::new();
    let mut dispatches = 0;
    for gb in &gradients {
        let derived = gb.derived();
        let i = setup
            .index_of(&gb.input, &[BindingKind::StorageRead])
            .expect("checked above");
        let Data::F32(x) = setup.base[i].clone() else {
            return Err(CheckError::WrongData {
                binding: gb.input.clone(),
                ty: sig.bindings[i].ty.wgsl_name(),
            });
        };
        let mut w: Option<WorstError> = None;
        let every = options
            .elements
            .map_or(1, |m| x.len().div_ceil(m.max(1)).max(1));
        for j in (0..x.len()).step_by(every) {
            let derived = derived[j];
            let mut at = |v: f64| -> Result<f64, CheckError> {
                let mut d = setup.base.clone();
                if let Data::F32(xs) = &mut d[i] {
                    xs[j] = v as f32;
                }
                dispatches += 1;
                Ok(objective(&setup.outputs, &fwd.run(on, &d, workgroups)?))
            };
            let mut central_at = |h: f64| -> Result<f64, CheckError> {
                // The steps as rounded to f32: the difference divides by them.
                let plus = f64::from((f64::from(x[j]) + h) as f32);
                let minus = f64::from((f64::from(x[j]) - h) as f32);
                Ok((at(plus)? - at(minus)?) / (plus - minus))
            };
            let h = options.step * f64::from(x[j]).abs().max(1.0);
            let central = central_at(h)?;
            let (half, double) = (central_at(h / 2.0)?, central_at(2.0 * h)?);
            let scale = central.abs().max(1.0);
            let error = (derived - central).abs() / scale;
            let uncertainty = (half - central).abs().max((double - central).abs()) / scale;
            let (error, uncertainty) = (
                if error.is_nan() { f64::INFINITY } else { error },
                if uncertainty.is_nan() {
                    f64::INFINITY
                } else {
                    uncertainty
                },
            );
            let verdict = if error <= options.tolerance {
                Verdict::Agrees
            } else if error <= options.tolerance + 2.0 * uncertainty || !central.is_finite() {
                Verdict::Unresolvable
            } else {
                Verdict::Wrong
            };
            if w.as_ref()
                .is_none_or(|w| (verdict, error) > (w.verdict, w.error))
            {
                w = Some(WorstError {
                    gradient: gb.gradient.clone(),
                    input: gb.input.clone(),
                    index: j,
                    derived,
                    central,
                    error,
                    uncertainty,
                    verdict,
                });
            }
        }
        worst.extend(w);
    }
    Ok(GradientReport {
        kernel: forward.name().to_string(),
        executor: on.name(),
        adjoint,
        worst,
        forward_dispatches: dispatches,
        difference_tolerance: options.tolerance,
        unwritten,
    })
}

/// The outputs of `after` (a forward run from `setup.base`) with elements still NaN.
fn unwritten_outputs(setup: &Setup<'_>, after: &[Data]) -> Vec<Unwritten> {
    setup
        .outputs
        .iter()
        .filter_map(|(i, _)| {
            let Data::F32(y) = &after[*i] else {
                return None;
            };
            let elements = y.iter().filter(|v| v.is_nan()).count();
            (elements > 0).then(|| Unwritten {
                output: setup.sig.bindings[*i].name.clone(),
                elements,
                len: y.len(),
            })
        })
        .collect()
}

/// `<u, J v>` from the tangent kernel against `<J^T u, v>` from the backward pass's
/// gradients, for random tangents `v` of the inputs that have gradients.
fn adjoint_identity<E: Executor>(
    forward: &KernelBuilder,
    setup: &Setup<'_>,
    gradients: &[GradientBuffer],
    on: &E,
    workgroups: [u32; 3],
    rng: &mut Random,
) -> Result<Adjoint, CheckError> {
    let inputs: Vec<&str> = gradients.iter().map(|g| g.input.as_str()).collect();
    let outputs: Vec<&str> = setup
        .outputs
        .iter()
        .map(|(i, _)| setup.sig.bindings[*i].name.as_str())
        .collect();
    let tangent = match wgsl_dsl_core::autodiff::derive_tangent(forward, &inputs, &outputs) {
        Ok(t) => t,
        Err(e) => return Ok(Adjoint::NotMade(e.to_string())),
    };
    // `v`, one random tangent per input.
    let mut v: Vec<(String, Vec<f32>)> = Vec::new();
    for (_, role) in &tangent.roles {
        if let TangentRole::InputTangent { input } = role
            && let Some(i) = setup.index_of(input, &[BindingKind::StorageRead])
        {
            v.push((
                input.clone(),
                (0..setup.base[i].len()).map(|_| rng.next()).collect(),
            ));
        }
    }
    let mut magnitude = 0.0;
    let forward_side = tangent_pairs(&tangent, setup, &v, on, workgroups)?
        .into_iter()
        .map(|(u, jv)| {
            let term = f64::from(u) * f64::from(jv);
            magnitude += term.abs();
            term
        })
        .sum::<f64>();
    let mut backward_side = 0.0;
    for g in gradients {
        let Some((_, t)) = v.iter().find(|(n, _)| *n == g.input) else {
            continue;
        };
        for (a, b) in g.derived().iter().zip(t) {
            let term = a * f64::from(*b);
            backward_side += term;
            magnitude += term.abs();
        }
    }
    // The magnitudes of the contributions: the magnitude kernel run on `|v|`, against `|u|`.
    let contributions =
        match wgsl_dsl_core::autodiff::derive_tangent_magnitude(forward, &inputs, &outputs) {
            Ok(m) => {
                let abs_v: Vec<(String, Vec<f32>)> = v
                    .iter()
                    .map(|(n, t)| (n.clone(), t.iter().map(|x| x.abs()).collect()))
                    .collect();
                let pairs = tangent_pairs(&m, setup, &abs_v, on, workgroups)?;
                Some(
                    pairs
                        .into_iter()
                        .map(|(u, m)| f64::from(u).abs() * f64::from(m))
                        .sum::<f64>(),
                )
            }
            Err(_) => None,
        };
    if let Some(c) = contributions {
        magnitude = magnitude.max(2.0 * c);
    }
    let difference = (forward_side - backward_side).abs();
    let error = if !difference.is_finite() || !magnitude.is_finite() {
        f64::INFINITY
    } else if difference == 0.0 {
        0.0
    } else {
        difference / magnitude.max(f64::MIN_POSITIVE)
    };
    Ok(Adjoint::Checked(AdjointCheck {
        forward: forward_side,
        backward: backward_side,
        magnitude,
        contributions,
        error,
        tolerance: IDENTITY_ULPS * f64::from(f32::EPSILON),
    }))
}

/// Run a tangent kernel (or the magnitude kernel) with the input tangents `v` (by input
/// name) and return, for every output element the forward kernel writes, its incoming
/// gradient `u` and its tangent (elements it does not write keep the NaN they start with
/// and are left out).
fn tangent_pairs<E: Executor>(
    tangent: &wgsl_dsl_core::autodiff::TangentKernel,
    setup: &Setup<'_>,
    v: &[(String, Vec<f32>)],
    on: &E,
    workgroups: [u32; 3],
) -> Result<Vec<(f32, f32)>, CheckError> {
    let compiled = compile(&tangent.kernel, on)?;
    let mut args = Vec::new();
    for (name, role) in &tangent.roles {
        let err = |forward: &str| CheckError::Role {
            kernel: tangent.kernel.name().to_string(),
            binding: name.clone(),
            forward: forward.to_string(),
        };
        args.push(match role {
            TangentRole::Primal { binding } => {
                setup.data_of(binding).ok_or_else(|| err(binding))?
            }
            TangentRole::InputTangent { input } => {
                let (_, t) = v
                    .iter()
                    .find(|(n, _)| n == input)
                    .ok_or_else(|| err(input))?;
                Data::F32(t.clone())
            }
            TangentRole::OutputTangent { output } => {
                let i = setup
                    .index_of(output, &[BindingKind::StorageReadWrite])
                    .ok_or_else(|| err(output))?;
                poisoned(&setup.sig.bindings[i].ty, setup.base[i].len())
            }
        });
    }
    let after = compiled.run(on, &args, workgroups)?;
    let mut pairs = Vec::new();
    for ((_, role), d) in tangent.roles.iter().zip(&after) {
        let TangentRole::OutputTangent { output } = role else {
            continue;
        };
        let (Some(o), Some(jv)) = (
            setup.index_of(output, &[BindingKind::StorageReadWrite]),
            floats(d),
        ) else {
            continue;
        };
        let (Some(y), Some((_, u))) = (
            floats(&after[o]),
            setup.outputs.iter().find(|(j, _)| *j == o),
        ) else {
            continue;
        };
        for k in 0..y.len() {
            if !y[k].is_nan() {
                pairs.push((u[k], jv[k]));
            }
        }
    }
    Ok(pairs)
}
