//! What the interpreter records of `debug_print` ([`wgsl_dsl_core::kernel::debug`]): one
//! [`DebugRecord`] per print executed by an invocation.
//!
//! # Order
//! The records of one dispatch are sorted by workgroup, in dispatch order (`workgroup_id.x`
//! fastest, then `y`, then `z`), then by `local_invocation_index`, then in the order the
//! invocation executed its prints (program order, loop iterations in turn). So the output of
//! a kernel does not depend on how the interpreter schedules invocations, and the prints of
//! one invocation read as that invocation ran. Dispatches follow each other in the order they
//! ran; a dispatch that fails (out of bounds, a race, ...) keeps the records made before the
//! error, which are often what explains it.
//!
//! # Where they go
//! The interpreter collects them (library code does not print, ARCHITECTURE.md):
//! [`Interpreter::take_debug_output`](super::Interpreter::take_debug_output) returns and
//! clears them; each record's `Display` is its line,
//! `file:line:col: kernel `name` invocation (x, y, z) (workgroup (..), local (..)): message`.
//! With [`InterpOptions::echo_debug_prints`](super::InterpOptions::echo_debug_prints), each
//! dispatch also writes its lines to stderr when it ends.

use std::fmt;

use super::error::Invocation;
use super::semantics::{self as sem, Kind};
use wgsl_dsl_core::CallSite;

/// A value `debug_print` printed.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum DebugValue {
    /// An `f32`.
    F32(f32),
    /// An `f16`, as the `f32` of the same value (exact).
    F16(f32),
    /// An `i32`.
    I32(i32),
    /// A `u32`.
    U32(u32),
    /// A `bool`.
    Bool(bool),
    /// A vector of scalars of one of the kinds above.
    Vector(Vec<DebugValue>),
}

impl DebugValue {
    pub(crate) fn scalar(kind: Kind, word: u32) -> Self {
        match kind {
            Kind::F32 => DebugValue::F32(sem::f(word)),
            Kind::F16 => DebugValue::F16(sem::to_f32(Kind::F16, word)),
            Kind::I32 => DebugValue::I32(word as i32),
            Kind::U32 => DebugValue::U32(word),
            Kind::Bool => DebugValue::Bool(word != 0),
        }
    }
}

impl fmt::Display for DebugValue {
    /// Floats as Rust's `{:?}` writes them (`1.0`, `-0.0`, `NaN`, `inf`, shortest round trip),
    /// `f16`s with an `h` suffix, integers and `bool`s as Rust writes them, vectors as
    /// `vec3(1.0, 2.0, 3.0)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DebugValue::F32(x) => write!(f, "{x:?}"),
            DebugValue::F16(x) => write!(f, "{x:?}h"),
            DebugValue::I32(x) => write!(f, "{x}"),
            DebugValue::U32(x) => write!(f, "{x}"),
            DebugValue::Bool(x) => write!(f, "{x}"),
            DebugValue::Vector(v) => {
                write!(f, "vec{}(", v.len())?;
                for (i, c) in v.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{c}")?;
                }
                f.write_str(")")
            }
        }
    }
}

/// One `debug_print` executed by one invocation.
#[derive(Clone, Debug, PartialEq)]
pub struct DebugRecord {
    /// The kernel.
    pub kernel: String,
    /// Which dispatch of this interpreter (and its clones) made it: 0 for the first that ran
    /// (dispatches of zero workgroups and refused ones are not counted).
    pub dispatch: u64,
    /// The invocation (global, workgroup and local ids).
    pub invocation: Invocation,
    /// The Rust call of `debug_print` (or the `debug_print!` in a `#[kernel]`).
    pub site: CallSite,
    /// The values, in argument order.
    pub values: Vec<DebugValue>,
    /// The format string with the values in its placeholders.
    pub message: String,
}

impl fmt::Display for DebugRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: kernel `{}` {}: {}",
            self.site, self.kernel, self.invocation, self.message
        )
    }
}

/// The format string's pieces with `values` between them.
pub(crate) fn fill(pieces: &[String], values: &[DebugValue]) -> String {
    let mut s = String::new();
    for (i, piece) in pieces.iter().enumerate() {
        s.push_str(piece);
        if let Some(v) = values.get(i) {
            s.push_str(&v.to_string());
        }
    }
    s
}
