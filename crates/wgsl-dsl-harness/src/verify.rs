//! [`VerifiedOp`] (a kernel and its specification), [`run`] (a case through an executor) and
//! [`verify`] (run, then compare every binding with the specification), [`agree`] (two
//! executors, compared with each other).

use wgsl_dsl::{BindingKind, KernelBuilder};

use crate::data::{Case, Data, Expected};
use crate::executor::{Buffers, Error, UploadStruct};

/// A kernel paired with its specification (the project's "verified op", ARCHITECTURE.md decision *A kernel comes with its specification*).
pub trait VerifiedOp {
    /// The kernel's entry point name.
    fn name(&self) -> &str;
    /// Build the kernel.
    fn kernel(&self) -> KernelBuilder;
    /// What the bindings hold after the kernel ran on `case`, computed on the CPU: the final
    /// contents of every binding the kernel writes (its `read_write` storage bindings), in
    /// binding order, or of every binding.
    fn spec(&self, case: &Case) -> Vec<Expected>;
    /// Relative tolerance of floats: `|actual - expected| <= tol * max(1, |expected|)`; 0 asks
    /// for the exact `f32` bits.
    fn tolerance(&self) -> f64 {
        1e-5
    }
}

/// Upload every binding of `case`, dispatch `kernel` once over `case.workgroups`, and read
/// every binding back, in binding order.
///
/// # Errors
/// The executor's errors.
pub fn run<E: UploadStruct>(exec: &E, kernel: &E::Kernel, case: &Case) -> Result<Vec<Data>, Error> {
    let buffers = case
        .buffers
        .iter()
        .map(|d| Buffers::upload(exec, d))
        .collect::<Result<Vec<_>, _>>()?;
    let args: Vec<&E::Arg> = buffers.iter().map(Buffers::arg).collect();
    exec.dispatch(kernel, &args, case.workgroups)?;
    buffers.iter().map(|b| b.read(exec)).collect()
}

/// Compile `op`'s kernel for `exec` and [`run`] `case` through it: the compiled kernel and
/// every binding's final contents.
///
/// # Errors
/// The executor's error, prefixed with the op's name.
fn compile_and_run<E: UploadStruct>(
    exec: &E,
    op: &(impl VerifiedOp + ?Sized),
    case: &Case,
) -> Result<(E::Kernel, Vec<Data>), String> {
    let fail = |e: Error| format!("{}: {e}", op.name());
    let kernel = exec
        .build_and_compile(&op.kernel())
        .map_err(|e| fail(e.into()))?;
    let actual = run(exec, &kernel, case).map_err(fail)?;
    Ok((kernel, actual))
}

/// Run `case` through `exec` and compare: the bindings the kernel writes with
/// [`VerifiedOp::spec`], the others with their initial contents (a kernel must not change
/// them, and a read-only binding that changed means the executor bound the wrong buffer).
///
/// # Errors
/// A message naming the op, the binding and the first element that differs, or the
/// executor's error.
pub fn verify<E: UploadStruct>(
    exec: &E,
    op: &(impl VerifiedOp + ?Sized),
    case: &Case,
) -> Result<(), String> {
    let name = op.name();
    let (kernel, actual) = compile_and_run(exec, op, case)?;
    let bindings = &E::signature(&kernel).bindings;
    if bindings.len() != case.buffers.len() {
        return Err(format!(
            "{name}: the case has {} buffers for {} bindings",
            case.buffers.len(),
            bindings.len()
        ));
    }
    let written: Vec<usize> = (0..bindings.len())
        .filter(|&i| bindings[i].kind == BindingKind::StorageReadWrite)
        .collect();
    let spec = op.spec(case);
    let mut expected: Vec<Expected> = case.buffers.iter().map(Expected::from).collect();
    if spec.len() == written.len() {
        for (&i, e) in written.iter().zip(spec) {
            expected[i] = e;
        }
    } else if spec.len() == bindings.len() {
        expected = spec;
    } else {
        return Err(format!(
            "{name}: the spec gives {} bindings; the kernel writes {} of {}",
            spec.len(),
            written.len(),
            bindings.len()
        ));
    }
    for (b, (a, e)) in bindings.iter().zip(actual.iter().zip(&expected)) {
        let tol = if written.contains(&(b.binding as usize)) {
            op.tolerance()
        } else {
            0.0
        };
        compare(a, e, tol).map_err(|m| format!("{name}: binding {} `{}`{m}", b.binding, b.name))?;
    }
    Ok(())
}

/// Run `case` through two executors (the GPU and the interpreter) and compare every binding
/// of `b`'s results with `a`'s: floats within [`VerifiedOp::tolerance`] relative (0: the same
/// bits), everything else exactly. [`verify`] compares each with the specification; this
/// compares them with each other, so a difference the specification's tolerance hides (an
/// operation rounded differently, a NaN in a binding the specification does not fix) shows.
///
/// `a` compiles and runs the case before `b` does; the first error stops it.
///
/// # Errors
/// A message naming the op, the binding and the first element that differs, or either
/// executor's error.
pub fn agree<A: UploadStruct, B: UploadStruct>(
    a: &A,
    b: &B,
    op: &(impl VerifiedOp + ?Sized),
    case: &Case,
) -> Result<(), String> {
    let name = op.name();
    let (ka, ra) = compile_and_run(a, op, case)?;
    let (_, rb) = compile_and_run(b, op, case)?;
    for (binding, (x, y)) in A::signature(&ka).bindings.iter().zip(ra.iter().zip(&rb)) {
        compare(y, &Expected::from(x), op.tolerance()).map_err(|m| {
            format!(
                "{name}: binding {} `{}`{m} (the second executor against the first)",
                binding.binding, binding.name
            )
        })?;
    }
    Ok(())
}

/// Compare one binding's contents with what is expected: floats within `tol` relative (0:
/// the same `f32` bits; NaN never passes otherwise), everything else exactly.
///
/// # Errors
/// `"[i]: got .., expected .."` for the first element that differs, or a length or kind
/// mismatch.
pub fn compare(actual: &Data, expected: &Expected, tol: f64) -> Result<(), String> {
    fn first_diff<T: PartialEq + std::fmt::Debug>(a: &[T], e: &[T]) -> Result<(), String> {
        match (0..a.len().max(e.len())).find(|&i| a.get(i) != e.get(i)) {
            Some(i) => Err(format!(
                "[{i}]: got {:?}, expected {:?}",
                a.get(i),
                e.get(i)
            )),
            None => Ok(()),
        }
    }
    match (actual, expected) {
        (Data::F32(a), Expected::F64(e)) => {
            compare_floats(a, e.len(), |i| (e[i], e[i] as f32), tol)
        }
        (Data::F32(a), Expected::F32(e)) => {
            compare_floats(a, e.len(), |i| (f64::from(e[i]), e[i]), tol)
        }
        (Data::U32(a), Expected::U32(e)) => first_diff(a, e),
        (Data::I32(a), Expected::I32(e)) => first_diff(a, e),
        (Data::Struct(a), Expected::Bytes(e)) => first_diff(&a.bytes, e),
        (a, e) => Err(format!(": the kernel left {a:?}, the spec expects {e:?}")),
    }
}

/// `a` against the expected values `e(i)` (as `f64`, and as the `f32` to match bit for bit):
/// within `tol` relative, or at `tol` 0 the same `f32` bits (NaN included).
fn compare_floats(
    a: &[f32],
    len: usize,
    e: impl Fn(usize) -> (f64, f32),
    tol: f64,
) -> Result<(), String> {
    if a.len() != len {
        return Err(format!(": {} values, expected {len}", a.len()));
    }
    for (i, &x) in a.iter().enumerate() {
        let (y, y32) = e(i);
        let ok = if tol == 0.0 {
            x.to_bits() == y32.to_bits()
        } else {
            (f64::from(x) - y).abs() / y.abs().max(1.0) <= tol
        };
        if !ok {
            return Err(format!(
                "[{i}]: got {x}, expected {y} (relative tolerance {tol:e})"
            ));
        }
    }
    Ok(())
}
