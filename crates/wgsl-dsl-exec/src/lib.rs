//! What both executors of wgsl-dsl share (ARCHITECTURE.md, *One executor contract*): the
//! runtime (`wgsl-dsl-runtime`, kernels on wgpu) and the CPU interpreter (`wgsl-dsl-interp`)
//! depend on this crate, and neither on the other.
//!
//! - [`Executor`]: compile, upload, dispatch, read back, implemented by the runtime's `Gpu`
//!   and the interpreter's `Interpreter`; code that runs kernels on either is written once.
//! - The typed interfaces `#[kernel]` and `#[derive(Bindings)]` write ([`KernelDef`],
//!   [`KernelArgs`], [`ExecutorBuffers`]), and [`check_interface`], which each executor's
//!   `compile_typed` runs.
//! - The checks every dispatch passes on every executor ([`check_bindings`], [`check_grid`],
//!   [`check_limits`]), against the binding layouts ([`binding_layouts`]) and the device's
//!   [`Limits`] (a type of its own: no wgpu here), with one set of errors ([`DispatchError`],
//!   [`DeviceError`]).
//!
//! Users reach these items as `wgsl_dsl::exec` (and, as before, `wgsl_dsl::runtime`, which
//! re-exports them).

mod checks;
mod device_check;
mod error;
mod executor;
mod interface;
mod layout;
mod limits;

pub use checks::{
    ArgShape, COPY_BUFFER_ALIGNMENT, MIN_BUFFER_BYTES, ceil_div, check_bindings, check_grid,
    padded_size, vec4_length, view_length,
};
pub use device_check::{Shortfall, check_device, check_limits};
pub use error::{DeviceError, DispatchError, DispatchErrorKind, error_chain};
pub use executor::Executor;
pub use interface::{
    ArgBinding, ArgsOn, ExecutorBuffers, KernelArgs, KernelDef, NoTexture, PlaceArg, TextureArg,
    check_interface, workgroups_covering,
};
pub use layout::{BindingLayout, binding_layouts};
pub use limits::{DeviceLimit, Limits, interpreter_limits};
