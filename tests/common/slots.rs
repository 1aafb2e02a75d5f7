//! Running a kernel on a poisoned output of a fixed number of slots per invocation, and
//! comparing what it wrote with the expected values (`#[path = "common/slots.rs"] mod slots;`
//! in a test).

use std::fmt::Debug;
use wgsl_dsl::runtime::{DispatchError, Gpu, GpuBuffer};
use wgsl_dsl::types::WgslType;

/// Uploads `len` copies of `poison` as the output (a slot the kernel does not write keeps it),
/// lets `dispatch` run the kernel writing it, and returns what was read back.
pub fn dispatch_poisoned<T: bytemuck::Pod + WgslType>(
    gpu: &Gpu,
    len: usize,
    poison: T,
    dispatch: impl FnOnce(&mut GpuBuffer<T>) -> Result<(), DispatchError>,
) -> Vec<T> {
    let mut out = GpuBuffer::from_slice(gpu, &vec![poison; len]).expect("poisoned output");
    dispatch(&mut out).expect("dispatch");
    out.read(gpu).expect("read back")
}

/// Asserts `got == want` element by element, where invocation `inv` wrote the elements
/// `inv * slots..(inv + 1) * slots`; a failure names `context(inv)` and the slot.
#[track_caller]
pub fn assert_slots_eq<T: PartialEq + Debug>(
    got: &[T],
    want: &[T],
    slots: usize,
    context: impl Fn(usize) -> String,
) {
    assert_eq!(got.len(), want.len(), "values read back and expected");
    for (idx, (g, w)) in got.iter().zip(want).enumerate() {
        let (inv, slot) = (idx / slots, idx % slots);
        assert_eq!(g, w, "{}, slot {slot}", context(inv));
    }
}
