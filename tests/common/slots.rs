//! Comparing a kernel's output of a fixed number of slots per invocation with the expected
//! values (`#[path = "common/slots.rs"] mod slots;` in a test).

use std::fmt::Debug;

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
