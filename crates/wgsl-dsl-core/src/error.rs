//! The compiler's error types: [`BuildError`] (why a kernel could not be built) and the details
//! of its uniformity variant, [`NonUniformControlFlow`]. Every stage returns them (expressions,
//! const-evaluation, the builder, lowering, the uniformity analysis, validation), so they live
//! below all of them; `shader` re-exports them where users name them (`wgsl_dsl::shader::BuildError`).

use naga::valid::Capabilities;

use crate::site::CallSite;

/// Why a kernel could not be built. Every variant that comes from a node of the kernel names
/// the Rust call site that built it.
///
/// `Debug` prints the message too (as `Display` does), so that `fn main() -> Result<(),
/// BuildError>` (or `Box<dyn Error>`) ending in an error shows the Rust location and the
/// problem rather than a struct dump:
///
/// ```text
/// Error: src/main.rs:9:23: invalid kernel name `my kernel`: it may contain only ASCII letters, digits and `_`
/// ```
#[derive(Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// naga rejected the module. `site` is the Rust call that built the offending expression
    /// or statement, when naga's error points at one.
    #[error("kernel `{kernel}`: invalid{}: {message}", site.map(|s| format!(" at {s}")).unwrap_or_default())]
    Validation {
        /// The kernel.
        kernel: String,
        /// naga's message, with its chain of causes.
        message: String,
        /// Where the offending node was built.
        site: Option<CallSite>,
        /// naga's error itself, the `source` of this one.
        #[source]
        cause: ValidationCause,
    },
    /// A float literal was NaN or infinite; WGSL has no spelling for these.
    #[error("{site}: the literal {value} is not finite; WGSL cannot express NaN or infinity")]
    NonFiniteLiteral {
        /// The value given.
        value: f32,
        /// Where it was given.
        site: CallSite,
    },
    /// An operation whose operands are all literals is a WGSL *const-expression*, evaluated
    /// when the shader is created, and WGSL rejects this one then (WGSL spec §8.1.1 "const
    /// Expressions"): a floating-point result that overflows or is NaN, an argument outside a
    /// built-in's domain (`sqrt(-1.0)`, `log(0.0)`), integer division by zero, `i32::MIN / -1`,
    /// a shift by 32 or more, `clamp` with `low > high`, an out-of-bounds literal index, ...
    /// `site` is the Rust call that built the operation; `rule` names the spec's rule.
    #[error(
        "{site}: {reason}; WGSL rejects this const-expression when the shader is created ({rule})"
    )]
    ConstExpression {
        /// The operation, its literal operands, and what is wrong.
        reason: String,
        /// The rule of the WGSL spec.
        rule: &'static str,
        /// Where the operation was built.
        site: CallSite,
    },
    /// A `let`, `var` or a statement result was used outside the block that declared it.
    #[error("{site}: `{name}` is used outside the block that declares it (declared at {declared})")]
    OutOfScope {
        /// Its name, or a description.
        name: String,
        /// Where it was used.
        site: CallSite,
        /// Where it was declared.
        declared: CallSite,
    },
    /// Two globals of one kernel (bindings, workgroup variables) have the same name. WGSL
    /// would rename one, but a binding is found by its name: by typed arguments, by the
    /// gradient checker's data, and by a derived kernel's `d_` bindings.
    #[error("{site}: `{name}` is declared twice in this kernel (first at {first})")]
    DuplicateName {
        /// The name.
        name: String,
        /// The second declaration.
        site: CallSite,
        /// The first declaration.
        first: CallSite,
    },
    /// An entry-point-only value (a built-in such as `global_invocation_id`) was used in a
    /// helper function.
    #[error(
        "{site}: built-in `{name}` is only available in the kernel's entry point, not in helper functions"
    )]
    BuiltinOutsideEntryPoint {
        /// The built-in.
        name: &'static str,
        /// Where it was used.
        site: CallSite,
    },
    /// The kernel name is not a usable WGSL entry point name.
    #[error("{site}: invalid kernel name `{name}`: {reason}")]
    InvalidName {
        /// The name.
        name: String,
        /// What is wrong.
        reason: &'static str,
        /// Where the kernel was created.
        site: CallSite,
    },
    /// The workgroup size is zero somewhere or beyond the target's limits.
    #[error("{site}: workgroup size {size:?} is out of limits: {reason}")]
    WorkgroupSize {
        /// The requested size.
        size: [u32; 3],
        /// Which limit.
        reason: String,
        /// Where the kernel was created.
        site: CallSite,
    },
    /// The kernel declares more workgroup memory than the target allows.
    #[error(
        "{site}: kernel `{kernel}` declares {bytes} bytes of workgroup memory; the limit is {limit} (this declaration crosses it)"
    )]
    WorkgroupMemory {
        /// The kernel.
        kernel: String,
        /// Bytes declared.
        bytes: u32,
        /// The limit.
        limit: u32,
        /// The workgroup variable whose declaration crosses the limit.
        site: CallSite,
    },
    /// The kernel needs a capability the target lacks.
    #[error(
        "{site}: kernel `{kernel}` needs {needed:?}, which the target does not support{}",
        capability_hint(*needed)
    )]
    MissingCapability {
        /// The kernel.
        kernel: String,
        /// The capabilities missing.
        needed: Capabilities,
        /// The first node that needs one of them (the kernel's creation for a capability
        /// declared with [`KernelBuilder::require`](crate::KernelBuilder::require)).
        site: CallSite,
    },
    /// A type cannot be laid out or is not allowed where used.
    #[error("{site}: {message}")]
    Type {
        /// What is wrong.
        message: String,
        /// Where the type was used.
        site: CallSite,
    },
    /// A node recorded an error when it was built (e.g. a struct member of the wrong type).
    #[error("{site}: {message}")]
    Invalid {
        /// What is wrong.
        message: String,
        /// Where the node was built.
        site: CallSite,
    },
    /// A barrier or subgroup operation is reached in control flow that depends on a value
    /// that may differ between the invocations of a workgroup (WGSL spec §15.2 "Uniformity
    /// Analysis"). On a GPU such a barrier is undefined behaviour (a hang or corrupted
    /// memory); naga does not reject it.
    #[error("{0}")]
    NonUniformControlFlow(Box<NonUniformControlFlow>),
    /// A derivative was asked for through a node that cannot be differentiated
    /// ([`crate::autodiff`]): `operation` (a bitcast to float, an atomic, a load of memory the
    /// kernel stores values depending on the variables into, ...) built at `site`, and why.
    #[error(
        "{site}: cannot differentiate {operation}: {reason} (differentiated at {differentiated_at})"
    )]
    NotDifferentiable {
        /// The operation.
        operation: String,
        /// Why it has no derivative here.
        reason: String,
        /// Where the node was built.
        site: CallSite,
        /// The call of `vjp`, `jvp` or `grad` (or the kernel derived) that needed it.
        differentiated_at: CallSite,
    },
    /// An option given to kernel AD ([`crate::autodiff::Derive`]) names no binding of the
    /// kernel, or one it cannot apply to (an accumulation for a binding that is not a
    /// differentiable input).
    #[error("{site}: Derive::{option}(\"{binding}\"): {reason}")]
    DeriveOption {
        /// `no_diff` or `accumulate`.
        option: &'static str,
        /// The name given.
        binding: String,
        /// What is wrong.
        reason: String,
        /// Where the option was given.
        site: CallSite,
    },
    /// A [`debug_print`](crate::KernelBuilder::debug_print) (or `debug_print!`) whose format string
    /// does not fit its arguments: a count of `{}` placeholders other than the number of
    /// arguments, or a brace that is neither `{}`, `{{` nor `}}`.
    #[error("{site}: debug_print: {message}")]
    DebugFormat {
        /// What is wrong, with the format string.
        message: String,
        /// The `{}` placeholders of the format string.
        placeholders: usize,
        /// The arguments given.
        arguments: usize,
        /// The `debug_print` call.
        site: CallSite,
    },
    /// Several mistakes were recorded while building (each with its call site), in program
    /// order.
    #[error("{} errors:{}", .0.len(), .0.iter().map(|e| format!("\n  {e}")).collect::<String>())]
    Several(Vec<BuildError>),
    /// naga's WGSL writer failed.
    #[error("{site}: kernel `{kernel}`: WGSL emission failed: {message}")]
    Emit {
        /// The kernel.
        kernel: String,
        /// The writer's message.
        message: String,
        /// Where the kernel was created.
        site: CallSite,
    },
}

impl std::fmt::Debug for BuildError {
    /// The message, as `Display` writes it (see the type's docs).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}

/// Details of [`BuildError::NonUniformControlFlow`]: an operation that needs uniform control
/// flow, and why the flow reaching it is not uniform, with Rust call sites.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NonUniformControlFlow {
    /// The kernel.
    pub kernel: String,
    /// The operation (`workgroupBarrier`, `subgroupAdd`, ...).
    pub operation: &'static str,
    /// Where the operation was built.
    pub site: Option<CallSite>,
    /// The control flow statement (`if`, loop, `return`, call) that made the flow
    /// non-uniform.
    pub branch: Option<CallSite>,
    /// Where the non-uniform value the flow depends on was built.
    pub value: Option<CallSite>,
    /// What that value is (`local_invocation_index`, a load from workgroup memory, ...).
    pub value_kind: &'static str,
}

impl std::fmt::Display for NonUniformControlFlow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "kernel `{}`: {} at {} must be reached in uniform control flow (WGSL spec §15.2), but ",
            self.kernel,
            self.operation,
            crate::site::OptSite(self.site)
        )?;
        let value = match self.value {
            Some(v) => format!("{} (built at {v})", self.value_kind),
            None => self.value_kind.to_string(),
        };
        match self.branch {
            Some(b) => write!(f, "the control flow at {b} depends on {value}"),
            None => write!(f, "its control flow depends on {value}"),
        }
    }
}

/// What to do about missing capabilities, for messages.
pub fn capability_hint(needed: Capabilities) -> &'static str {
    if needed.contains(Capabilities::COOPERATIVE_MATRIX) {
        " (cooperative matrices need an adapter with wgpu's EXPERIMENTAL_COOPERATIVE_MATRIX, such as \
         NVIDIA GPUs through Vulkan, opened with `GpuOptions::cooperative_matrix`; Mesa's lavapipe \
         has none)"
    } else {
        ""
    }
}

/// naga's validation error, kept typed as the cause ([`std::error::Error::source`]) of
/// [`BuildError::Validation`]: `err.source()` downcasts to it, and `.0` is naga's
/// `WithSpan<ValidationError>`. Shared (`Arc`) so that the error stays cheap to clone; two
/// causes are equal when their messages are.
#[derive(Clone, Debug)]
pub struct ValidationCause(pub std::sync::Arc<naga::WithSpan<naga::valid::ValidationError>>);

impl PartialEq for ValidationCause {
    fn eq(&self, other: &Self) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0) || self.0.to_string() == other.0.to_string()
    }
}

impl std::fmt::Display for ValidationCause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&self.0, f)
    }
}

impl std::error::Error for ValidationCause {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}
