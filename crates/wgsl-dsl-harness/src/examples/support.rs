//! The examples' shared helpers: the workgroup size, the cases of one-dimensional kernels, the
//! bounds check every kernel starts with, the host element types. Below the families of
//! examples (`math`, `control`, `memory`, `packing`) and the registry (`examples`) that
//! collects them.

use wgsl_dsl::prelude::*;
use wgsl_dsl::types::Scalar;

use crate::{Case, Data, Rng, groups_1d, random_f32};

/// The workgroup size of the examples' one-dimensional kernels.
pub(super) const WG: u32 = 64;

/// A one-dimensional case of `n` elements: `buffers` in binding order, and the workgroups of
/// [`WG`] invocations covering `n`.
pub(super) fn case_1d(n: usize, buffers: Vec<Data>) -> Case {
    Case {
        buffers,
        workgroups: groups_1d(n, WG),
    }
}

/// A case of 1001 elements: `inputs` bindings of `f32`s uniform in `[lo, hi)`, then the
/// output binding `out(1001)` (poisoned).
pub(super) fn case_f32_inputs(
    rng: &mut Rng,
    inputs: usize,
    lo: f32,
    hi: f32,
    out: impl FnOnce(usize) -> Data,
) -> Case {
    let n = 1001;
    let mut buffers: Vec<Data> = (0..inputs)
        .map(|_| Data::F32(random_f32(rng, n, lo, hi)))
        .collect();
    buffers.push(out(n));
    case_1d(n, buffers)
}

/// [`case_f32_inputs`] with an `f32` output of `per` values per element.
pub(super) fn case_f32(rng: &mut Rng, inputs: usize, per: usize, lo: f32, hi: f32) -> Case {
    case_f32_inputs(rng, inputs, lo, hi, |n| Data::poisoned_f32(n * per))
}

/// The invocation's index `i` (`global_invocation_id.x`, bound with `let`), after returning
/// from the invocations at or past `bound`.
pub(super) fn invocation_below(k: &mut KernelBuilder, bound: Exp<u32>) -> Exp<u32> {
    let i = k.let_("i", global_invocation_id().x());
    k.if_(i.ge(bound), |k| k.return_());
    i
}

/// A binding's element type on the host.
pub(super) trait Element: Copy {
    /// The contents of `d`; panics (test code) if it holds another type.
    fn of(d: &mut Data) -> &mut Vec<Self>;
}

impl Element for f32 {
    fn of(d: &mut Data) -> &mut Vec<f32> {
        d.f32()
    }
}

impl Element for u32 {
    fn of(d: &mut Data) -> &mut Vec<u32> {
        d.u32()
    }
}

impl Element for i32 {
    fn of(d: &mut Data) -> &mut Vec<i32> {
        d.i32()
    }
}

/// Stores the `per` values of invocation `i`'s row: `out[i * per + j] = values[j]`.
pub(super) fn store_row<T: Scalar>(
    k: &mut KernelBuilder,
    out: &Place<RuntimeArray<T>, ReadWrite>,
    i: &Exp<u32>,
    per: u32,
    values: impl IntoIterator<Item = Exp<T>>,
) {
    let mut count = 0;
    for (j, v) in values.into_iter().enumerate() {
        k.store(&out.at(i * per + j as u32), v);
        count += 1;
    }
    assert_eq!(
        count,
        per,
        "example {}: wrong output count (a row of {per} values holds {count})",
        k.name()
    );
}
