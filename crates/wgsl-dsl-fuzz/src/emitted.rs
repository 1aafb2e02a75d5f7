//! What emitting a program gives ([`Emitted`]: the builder and its [`Binding`]s): the output
//! of [`crate::emit`] and of the kernels it delegates to ([`crate::coop`], [`crate::texture`]),
//! below all three. `emit` re-exports both.

use std::collections::HashMap;

use wgsl_dsl::{ConstValue, KernelBuilder};

use crate::ast::Scalar;

/// A binding of a generated kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Binding {
    /// `in_<s>`: read-only storage.
    Input(Scalar),
    /// `param`: a uniform `u32`.
    Param,
    /// `out_<s>`: read-write storage.
    Out(Scalar),
    /// `atom`: `array<atomic<u32>>`.
    Atomics,
    /// Cooperative-matrix kernels: `a`, `b` (`f16`), `c` (`f32`, read), `d` (`f32`, written).
    CoopA,
    /// See [`Binding::CoopA`].
    CoopB,
    /// See [`Binding::CoopA`].
    CoopC,
    /// See [`Binding::CoopA`].
    CoopD,
    /// Texture kernels: `src` (`texture_2d<u32>`).
    TextureSrc,
    /// Texture kernels: `dst` (`texture_storage_2d<r32uint, write>`).
    TextureDst,
}

/// A built kernel's builder and what the host needs to run it.
#[derive(Debug)]
pub struct Emitted {
    /// The builder, every statement recorded.
    pub kernel: KernelBuilder,
    /// The bindings in order.
    pub bindings: Vec<Binding>,
    /// Slots per invocation of each output buffer (by [`OUT_BUFFERS`](crate::emit::OUT_BUFFERS) order).
    pub slots: [u32; 4],
    /// Atomics per invocation, and shared ones after them.
    pub atomics: (u32, u32),
    /// The values the DSL's constant folding gives the constant output slots (oracle (d)).
    pub consts: HashMap<(Scalar, u32), ConstValue>,
}
