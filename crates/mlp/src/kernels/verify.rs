//! "Verified ops": every kernel paired with its CPU specification as one value.
//!
//! A [`VerifiedOp`] knows how to build its kernel, how to make a random [`Case`] (the host
//! data for every binding, in binding order, and the workgroup grid) for given sizes, and
//! what the outputs must be ([`VerifiedOp::spec`], computed in `f64` with
//! [`crate::reference`]). One generic test runs every op of [`super::all`] on the GPU and
//! compares: a kernel cannot be added without its specification.

use bytemuck::Pod;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use wgsl_dsl::KernelBuilder;
use wgsl_dsl::runtime::{BindArg, Gpu, GpuBuffer};
use wgsl_dsl::types::WgslType;

use super::uniforms::*;

/// Sizes a random case is made for. Use odd sizes that are not multiples of the tile size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CaseSizes {
    /// Rows of the batch.
    pub batch: usize,
    /// Input features of a layer.
    pub inputs: usize,
    /// Output features of a layer.
    pub outputs: usize,
    /// Classes of the loss.
    pub classes: usize,
}

impl Default for CaseSizes {
    /// Batch 37, inputs 61, outputs 45, classes 11.
    fn default() -> Self {
        CaseSizes {
            batch: 37,
            inputs: 61,
            outputs: 45,
            classes: 11,
        }
    }
}

/// How a storage binding is used by the kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Only read.
    Input,
    /// Only written, every element: the runner poisons it (NaN, `0xDEADBEEF`) first.
    Output,
    /// Read and (partly) written: starts with the case's data; the spec gives its whole
    /// final contents, so elements that must not change are checked too.
    InOut,
}

/// A uniform value of one of the kernels' uniform structs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum UniformValue {
    /// [`LinearDims`]
    Linear(LinearDims),
    /// [`LossDims`]
    Loss(LossDims),
    /// [`GatherParams`]
    Gather(GatherParams),
    /// [`SgdParams`]
    Sgd(SgdParams),
    /// [`AdamParams`]
    Adam(AdamParams),
    /// [`EvalParams`]
    Eval(EvalParams),
}

/// The host data for one binding.
#[derive(Clone, Debug, PartialEq)]
pub enum CaseArg {
    /// `var<uniform>` of a uniform struct.
    Uniform(UniformValue),
    /// `array<f32>`.
    F32(Vec<f32>, Role),
    /// `array<u32>`.
    U32(Vec<u32>, Role),
    /// `array<atomic<u32>>`.
    AtomicU32(Vec<u32>, Role),
}

/// One run of a kernel: an argument per binding, in binding order, and the workgroup grid.
#[derive(Clone, Debug, PartialEq)]
pub struct Case {
    /// One per binding.
    pub args: Vec<CaseArg>,
    /// Workgroups to dispatch.
    pub workgroups: [u32; 3],
}

/// The expected (or actual) contents of an output binding.
#[derive(Clone, Debug, PartialEq)]
pub enum Values {
    /// Floats, compared with a relative tolerance.
    F32(Vec<f64>),
    /// Integers, compared exactly.
    U32(Vec<u32>),
}

/// The uniform structs, for typed access to a case's uniforms.
pub trait Uniform: Pod + WgslType {
    /// Wrap.
    fn wrap(self) -> UniformValue;
    /// Unwrap, if `v` holds this type.
    fn unwrap(v: &UniformValue) -> Option<Self>;
}
macro_rules! uniform_kind {
    ($($t:ident => $v:ident),*) => {$(
        impl Uniform for $t {
            fn wrap(self) -> UniformValue { UniformValue::$v(self) }
            fn unwrap(v: &UniformValue) -> Option<Self> {
                match v { UniformValue::$v(x) => Some(*x), _ => None }
            }
        }
    )*};
}
uniform_kind!(LinearDims => Linear, LossDims => Loss, GatherParams => Gather,
    SgdParams => Sgd, AdamParams => Adam, EvalParams => Eval);

impl Case {
    /// The uniform at binding `i`. Panics if it is not a `T`: cases are made by the op
    /// itself, so that is a bug in the op.
    pub fn uniform<T: Uniform>(&self, i: usize) -> T {
        match &self.args[i] {
            CaseArg::Uniform(u) => T::unwrap(u),
            _ => None,
        }
        .unwrap_or_else(|| panic!("binding {i} is not a {}", std::any::type_name::<T>()))
    }

    /// The `f32` data at binding `i`, widened to `f64`.
    pub fn f64s(&self, i: usize) -> Vec<f64> {
        match &self.args[i] {
            CaseArg::F32(v, _) => v.iter().map(|&x| f64::from(x)).collect(),
            other => panic!("binding {i} is not an f32 buffer: {other:?}"),
        }
    }

    /// The `u32` data at binding `i`.
    pub fn u32s(&self, i: usize) -> &[u32] {
        match &self.args[i] {
            CaseArg::U32(v, _) | CaseArg::AtomicU32(v, _) => v,
            other => panic!("binding {i} is not a u32 buffer: {other:?}"),
        }
    }

    /// Indices of the bindings the kernel writes ([`Role::Output`] and [`Role::InOut`]).
    pub fn outputs(&self) -> Vec<usize> {
        self.args
            .iter()
            .enumerate()
            .filter(|(_, a)| {
                matches!(
                    a,
                    CaseArg::F32(_, Role::Output | Role::InOut)
                        | CaseArg::U32(_, Role::Output | Role::InOut)
                        | CaseArg::AtomicU32(_, Role::Output | Role::InOut)
                )
            })
            .map(|(i, _)| i)
            .collect()
    }
}

/// A GPU kernel and the CPU function it must equal.
pub trait VerifiedOp {
    /// The kernel's entry point name (stable: snapshots are named after it).
    fn name(&self) -> &'static str;
    /// Build the kernel.
    fn build(&self) -> KernelBuilder;
    /// Random inputs for `sizes`, with the grid to dispatch.
    fn case(&self, rng: &mut ChaCha8Rng, sizes: &CaseSizes) -> Case;
    /// The expected contents of every written binding ([`Case::outputs`], in that order),
    /// from the `f64` reference.
    fn spec(&self, case: &Case) -> Vec<Values>;
}

/// Compare `actual` with `expected`: floats within `|a - e| <= tol * max(1, |e|)` (NaN
/// never passes), integers exactly. On failure, a message naming the first bad element.
pub fn compare(name: &str, actual: &[Values], expected: &[Values], tol: f64) -> Result<(), String> {
    if actual.len() != expected.len() {
        return Err(format!(
            "{name}: {} outputs, expected {}",
            actual.len(),
            expected.len()
        ));
    }
    for (o, (a, e)) in actual.iter().zip(expected).enumerate() {
        match (a, e) {
            (Values::F32(a), Values::F32(e)) => {
                if a.len() != e.len() {
                    return Err(format!(
                        "{name} output {o}: {} values, expected {}",
                        a.len(),
                        e.len()
                    ));
                }
                let mut worst = 0.0f64;
                for (i, (&x, &y)) in a.iter().zip(e).enumerate() {
                    let err = (x - y).abs() / y.abs().max(1.0);
                    if err.is_nan() || err > tol {
                        return Err(format!(
                            "{name} output {o}[{i}]: got {x}, expected {y} (relative error {err:e} > {tol:e})"
                        ));
                    }
                    worst = worst.max(err);
                }
                log::debug!("{name} output {o}: worst relative error {worst:e}");
            }
            (Values::U32(a), Values::U32(e)) => {
                if let Some(i) = (0..a.len().max(e.len())).find(|&i| a.get(i) != e.get(i)) {
                    return Err(format!(
                        "{name} output {o}[{i}]: got {:?}, expected {:?}",
                        a.get(i),
                        e.get(i)
                    ));
                }
            }
            _ => return Err(format!("{name} output {o}: mismatched kinds")),
        }
    }
    Ok(())
}

/// `n` values uniform in `[lo, hi)`.
pub fn uniform_f32(rng: &mut ChaCha8Rng, n: usize, lo: f32, hi: f32) -> Vec<f32> {
    (0..n).map(|_| rng.random_range(lo..hi)).collect()
}

/// `n` values uniform in `0..bound`.
pub fn uniform_u32(rng: &mut ChaCha8Rng, n: usize, bound: u32) -> Vec<u32> {
    (0..n).map(|_| rng.random_range(0..bound)).collect()
}

/// `[x, 1, 1]` workgroups of `size` invocations covering `n`.
pub fn grid_1d(n: usize, size: u32) -> [u32; 3] {
    [n.div_ceil(size as usize).max(1) as u32, 1, 1]
}

/// Run `case` on `gpu`: upload every argument (outputs poisoned with NaN or `0xDEADBEEF`),
/// dispatch the op's kernel once, and read back every written binding, in order.
///
/// # Errors
/// [`MlpError::Build`] if the kernel does not build for this device; dispatch and device
/// errors of the runtime.
pub fn run_case(
    gpu: &Gpu,
    op: &dyn VerifiedOp,
    case: &Case,
) -> Result<Vec<Values>, crate::error::MlpError> {
    let kernel = gpu.compile(&op.build().build_for(&gpu.target_limits())?)?;
    enum Buf {
        F32(GpuBuffer<f32>),
        U32(GpuBuffer<u32>),
        Other(Box<dyn BindArg>),
    }
    let poison_f32 = |v: &[f32], role: Role| match role {
        Role::Output => vec![f32::NAN; v.len()],
        _ => v.to_vec(),
    };
    let poison_u32 = |v: &[u32], role: Role| match role {
        Role::Output => vec![0xDEAD_BEEF; v.len()],
        _ => v.to_vec(),
    };
    let mut bufs = Vec::with_capacity(case.args.len());
    for arg in &case.args {
        bufs.push(match arg {
            CaseArg::F32(v, role) => Buf::F32(GpuBuffer::from_slice(gpu, &poison_f32(v, *role))?),
            CaseArg::U32(v, role) | CaseArg::AtomicU32(v, role) => {
                Buf::U32(GpuBuffer::from_slice(gpu, &poison_u32(v, *role))?)
            }
            CaseArg::Uniform(u) => Buf::Other(match *u {
                UniformValue::Linear(x) => Box::new(GpuBuffer::from_value(gpu, x)?),
                UniformValue::Loss(x) => Box::new(GpuBuffer::from_value(gpu, x)?),
                UniformValue::Gather(x) => Box::new(GpuBuffer::from_value(gpu, x)?),
                UniformValue::Sgd(x) => Box::new(GpuBuffer::from_value(gpu, x)?),
                UniformValue::Adam(x) => Box::new(GpuBuffer::from_value(gpu, x)?),
                UniformValue::Eval(x) => Box::new(GpuBuffer::from_value(gpu, x)?),
            }),
        });
    }
    let args: Vec<&dyn BindArg> = bufs
        .iter()
        .map(|b| match b {
            Buf::F32(b) => b as &dyn BindArg,
            Buf::U32(b) => b as &dyn BindArg,
            Buf::Other(b) => b.as_ref(),
        })
        .collect();
    gpu.dispatch(&kernel, &args, case.workgroups)?;
    let mut out = Vec::new();
    for i in case.outputs() {
        out.push(match &bufs[i] {
            Buf::F32(b) => Values::F32(b.read(gpu)?.into_iter().map(f64::from).collect()),
            Buf::U32(b) => Values::U32(b.read(gpu)?),
            Buf::Other(_) => unreachable!("uniforms are never outputs"),
        });
    }
    Ok(out)
}
