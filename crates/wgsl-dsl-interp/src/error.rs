//! What the interpreter reports: [`InterpError`] (the run stopped: a bad argument, or a bug the
//! GPU would have hidden) and [`Warning`] (the run completed, but relied on something
//! suspicious). Every finding names the kernel, the invocation and the Rust call site of the
//! offending node.

use std::fmt;

use wgsl_dsl_core::CallSite;
use wgsl_dsl_exec::{DispatchError, DispatchErrorKind};

/// One invocation of a dispatch: its ids as the kernel sees them (WGSL spec §13.3.1.1
/// "Built-in Inputs and Outputs").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Invocation {
    /// `global_invocation_id`.
    pub global_id: [u32; 3],
    /// `workgroup_id`.
    pub workgroup_id: [u32; 3],
    /// `local_invocation_id`.
    pub local_id: [u32; 3],
}

impl fmt::Display for Invocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [x, y, z] = self.global_id;
        let [wx, wy, wz] = self.workgroup_id;
        let [lx, ly, lz] = self.local_id;
        write!(
            f,
            "invocation ({x}, {y}, {z}) (workgroup ({wx}, {wy}, {wz}), local ({lx}, {ly}, {lz}))"
        )
    }
}

/// A Rust call site when the module has one for the node, for messages.
pub(crate) struct Site(pub Option<CallSite>);

impl fmt::Display for Site {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(s) => write!(f, "{s}"),
            None => write!(f, "<no Rust call site>"),
        }
    }
}

/// How an invocation touched memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AccessKind {
    /// A load.
    Read,
    /// A store.
    Write,
}

impl fmt::Display for AccessKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AccessKind::Read => "reads",
            AccessKind::Write => "writes",
        })
    }
}

/// One side of a data race: who touched the element, how, and where in the Rust code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryAccess {
    /// The invocation.
    pub invocation: Invocation,
    /// Load or store.
    pub kind: AccessKind,
    /// The Rust call site of the load or store.
    pub site: Option<CallSite>,
}

impl fmt::Display for MemoryAccess {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} it at {}",
            self.invocation,
            self.kind,
            Site(self.site)
        )
    }
}

/// Why a run on the interpreter failed. Besides the argument checks shared with
/// `Gpu::dispatch`, these are bugs a GPU does not report.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum InterpError {
    /// An argument failed the checks every executor makes (count, types, sizes, aliasing,
    /// limits): the same error `Gpu::dispatch` returns.
    #[error(transparent)]
    Dispatch(#[from] DispatchError),
    /// An index outside its array, vector or matrix (the GPU would clamp the index or return
    /// zero, silently).
    #[error(
        "kernel `{kernel}`: out-of-bounds access at {}: index {index} into {target} of length {len}, by {invocation}",
        Site(*site)
    )]
    OutOfBounds {
        /// The kernel.
        kernel: String,
        /// The Rust call site of the indexing.
        site: Option<CallSite>,
        /// The invocation.
        invocation: Invocation,
        /// The index (negative for a negative `i32` index).
        index: i64,
        /// The number of elements.
        len: u64,
        /// What was indexed, e.g. ``buffer `x` (binding 1)``.
        target: String,
    },
    /// Two invocations touched one memory element between barriers (in one workgroup), or in
    /// two workgroups of one dispatch, at least one writing, not both atomically (WGSL spec
    /// "Memory Model", `#memory-model`: the result of a data race is undefined).
    #[error(
        "kernel `{kernel}`: data race on {memory}: {first}, and {second}, with no barrier between them{}",
        if first.invocation.workgroup_id != second.invocation.workgroup_id { " (different workgroups: no barrier orders them)" } else { "" }
    )]
    DataRace {
        /// The kernel.
        kernel: String,
        /// The element, e.g. ``element 3 of buffer `y` (binding 2)``.
        memory: String,
        /// The earlier access.
        first: Box<MemoryAccess>,
        /// The access that conflicts with it.
        second: Box<MemoryAccess>,
    },
    /// A barrier reached by some invocations of a workgroup and not by others (WGSL spec
    /// §17.11: barriers must be executed in uniform control flow; on a GPU this hangs or
    /// corrupts memory).
    #[error(
        "kernel `{kernel}`: divergent barrier at {}: {reached} reached it, {missed} did not ({why})",
        Site(*barrier)
    )]
    DivergentBarrier {
        /// The kernel.
        kernel: String,
        /// The Rust call site of the barrier (or subgroup operation).
        barrier: Option<CallSite>,
        /// An invocation that reached it.
        reached: Box<Invocation>,
        /// An invocation of the same workgroup that did not.
        missed: Box<Invocation>,
        /// Where the second one went instead, with the Rust call site.
        why: String,
    },
    /// A cooperative-matrix operation (`coopLoad`, `coopStore`, `coopMultiplyAdd`) executed by
    /// some invocations of a subgroup and not by others. naga's SPIR-V backend gives
    /// cooperative matrices `Subgroup` scope, and SPV_KHR_cooperative_matrix requires that
    /// "all invocations in a given scope instance must be active or all must be inactive"
    /// (on a GPU the result is undefined, or the subgroup hangs).
    #[error(
        "kernel `{kernel}`: divergent {op} at {}: {reached} executed it, {missed} of the same subgroup did not ({why})",
        Site(*site)
    )]
    DivergentCooperative {
        /// The kernel.
        kernel: String,
        /// `coopLoad`, `coopStore` or `coopMultiplyAdd`.
        op: &'static str,
        /// The Rust call site of the operation.
        site: Option<CallSite>,
        /// An invocation that executed it.
        reached: Box<Invocation>,
        /// An invocation of the same subgroup that did not.
        missed: Box<Invocation>,
        /// Where the second one went instead, with the Rust call site.
        why: String,
    },
    /// A cooperative-matrix operation whose operands (pointer, stride, matrices) differ
    /// between the invocations of one subgroup (SPV_KHR_cooperative_matrix: "all operands of
    /// this instruction must be the same for all invocations in a given scope instance"; a
    /// matrix differs when it was assigned in divergent control flow).
    #[error(
        "kernel `{kernel}`: {op} at {} with a non-uniform {operand}: {first} and {second}, of the same subgroup, pass different values",
        Site(*site)
    )]
    NonUniformCooperative {
        /// The kernel.
        kernel: String,
        /// `coopLoad`, `coopStore` or `coopMultiplyAdd`.
        op: &'static str,
        /// The Rust call site of the operation.
        site: Option<CallSite>,
        /// Which operand: `pointer`, `stride`, `matrix a`...
        operand: &'static str,
        /// The subgroup's first invocation.
        first: Box<Invocation>,
        /// An invocation of the same subgroup that passes another value.
        second: Box<Invocation>,
    },
    /// A loop ran more iterations than [`InterpOptions::max_loop_iterations`](super::InterpOptions)
    /// in one execution (probably endless).
    #[error(
        "kernel `{kernel}`: the loop at {} ran {iterations} iterations in {invocation} without ending (the limit is InterpOptions::max_loop_iterations)",
        Site(*site)
    )]
    LoopLimit {
        /// The kernel.
        kernel: String,
        /// The Rust call site of the loop.
        site: Option<CallSite>,
        /// An invocation still in the loop.
        invocation: Invocation,
        /// Iterations run.
        iterations: u64,
    },
    /// The kernel binds a texture: the interpreter does not execute textures (`textureLoad`,
    /// `textureStore`, `textureDimensions`; run such kernels on the GPU runtime). `binding`
    /// is the first texture binding, `ty` its WGSL type (`texture_2d<f32>`,
    /// `texture_storage_2d<rgba8unorm, write>`), `site` its declaration.
    #[error(
        "kernel `{kernel}`: the interpreter does not execute textures: binding {binding} `{name}` is a {ty}{} (run texture kernels on the GPU runtime)",
        site.map(|s| format!(" declared at {s}")).unwrap_or_default()
    )]
    UnsupportedTexture {
        /// The kernel.
        kernel: String,
        /// The binding's name.
        name: String,
        /// Its `@binding` number.
        binding: u32,
        /// Its WGSL type.
        ty: String,
        /// Where it was declared.
        site: Option<CallSite>,
    },
    /// The module uses something the interpreter does not execute (e.g. arithmetic on
    /// cooperative matrices other than `coopMultiplyAdd`).
    #[error("kernel `{kernel}`: the interpreter does not support {what}{}", site.map(|s| format!(" (at {s})")).unwrap_or_default())]
    Unsupported {
        /// The kernel.
        kernel: String,
        /// What.
        what: String,
        /// Where it was built, if known.
        site: Option<CallSite>,
    },
    /// A dispatch through the [`Executor`](wgsl_dsl_exec::Executor) contract gave a warning
    /// (which [`Interpreter::dispatch`](super::Interpreter::dispatch) returns in its report):
    /// there, code written for either executor cannot read a report, so the first warning
    /// fails the dispatch ([`Warning::PaddingAccess`] excepted: see the interpreter's
    /// `Executor::dispatch`).
    #[error("{0} (a warning, which the executor contract makes an error)")]
    Warning(Box<Warning>),
}

/// Something suspicious the kernel did in a run that completed.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Warning {
    /// A variable (function `var` or `var<workgroup>`) was read before anything was written
    /// to it: WGSL gives the zero value, which may not be what the kernel meant.
    UninitializedRead {
        /// The kernel.
        kernel: String,
        /// The variable.
        variable: String,
        /// The Rust call site of the read.
        site: Option<CallSite>,
        /// The first invocation seen doing it.
        invocation: Invocation,
    },
    /// A storage buffer was read or written past its elements, inside the padding the
    /// allocation adds (a buffer is at least 16 bytes and a multiple of 4, on the GPU as here:
    /// an empty `HostBuffer<f32>` holds 4 elements' bytes, and `arrayLength` counts them). Reads
    /// there give 0 and writes are not part of the buffer's contents as `read` returns them,
    /// on either executor; a kernel that does either is most likely off by one.
    PaddingAccess {
        /// The kernel.
        kernel: String,
        /// The buffer (``buffer `x` (binding 1)``).
        buffer: String,
        /// Whether it was a write.
        write: bool,
        /// The element accessed (in the binding's elements).
        element: u64,
        /// The buffer's elements.
        len: u64,
        /// The Rust call site of the access.
        site: Option<CallSite>,
        /// The first invocation seen doing it.
        invocation: Invocation,
    },
    /// A subgroup operation read a lane that was inactive or outside the subgroup: WGSL gives
    /// an indeterminate value (the interpreter gives 0).
    IndeterminateLane {
        /// The kernel.
        kernel: String,
        /// The Rust call site of the subgroup operation.
        site: Option<CallSite>,
        /// The invocation that read it.
        invocation: Invocation,
        /// The lane it asked for.
        lane: u32,
    },
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::UninitializedRead {
                kernel,
                variable,
                site,
                invocation,
            } => write!(
                f,
                "kernel `{kernel}`: {variable} is read at {} before anything was written to it \
                 (the zero value is read), first by {invocation}",
                Site(*site)
            ),
            Warning::PaddingAccess {
                kernel,
                buffer,
                write,
                element,
                len,
                site,
                invocation,
            } => write!(
                f,
                "kernel `{kernel}`: {buffer} holds {len} element{}; the {} at {} by \
                 {invocation} is of element {element}, inside the allocation's padding \
                 ({})",
                if *len == 1 { "" } else { "s" },
                if *write { "write" } else { "read" },
                Site(*site),
                if *write {
                    "lost: not part of the buffer's contents"
                } else {
                    "it reads 0"
                }
            ),
            Warning::IndeterminateLane {
                kernel,
                site,
                invocation,
                lane,
            } => write!(
                f,
                "kernel `{kernel}`: the subgroup operation at {} by {invocation} reads lane \
                 {lane}, which is inactive or outside the subgroup (indeterminate value)",
                Site(*site)
            ),
        }
    }
}

/// A kernel that did not build, as the runtime reports it: [`DispatchErrorKind::Build`].
impl From<wgsl_dsl_core::BuildError> for InterpError {
    fn from(e: wgsl_dsl_core::BuildError) -> Self {
        InterpError::Dispatch(DispatchError::from(DispatchErrorKind::Build(Box::new(e))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_error_stays_small() {
        assert!(
            std::mem::size_of::<InterpError>() <= 160,
            "{}",
            std::mem::size_of::<InterpError>()
        );
    }
}
