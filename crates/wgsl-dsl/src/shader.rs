//! Validation and emission: from a lowered `naga::Module` to a [`Shader`], or a [`BuildError`]
//! naming the Rust call site at fault.

use naga::valid::{Capabilities, ValidationFlags, Validator};

use crate::kernel::{KernelBuilder, KernelSignature};
use crate::site::CallSite;

/// A validated kernel: its naga module and analysis, the WGSL naga writes for it, and the
/// signature the runtime checks dispatches against.
#[derive(Debug, Clone)]
pub struct Shader {
    /// The module, as lowered.
    pub module: naga::Module,
    /// naga's analysis of the module (what the backends need).
    pub info: naga::valid::ModuleInfo,
    /// WGSL text written by `naga::back::wgsl`.
    pub wgsl: String,
    /// Entry point, workgroup size, bindings.
    pub signature: KernelSignature,
    /// The limits it was built for (what [`KernelBuilder::build_for`] was given;
    /// [`TargetLimits::default`] for [`KernelBuilder::build`]): its workgroup size and
    /// workgroup memory are within them. The interpreter runs it for these limits
    /// ([`Interpreter::compile`](crate::interp::Interpreter::compile)).
    pub target: TargetLimits,
    /// The Rust call sites of the module's expressions and statements (through their spans).
    pub(crate) sites: crate::lower::SiteTable,
    /// For a kernel with `debug_print`s: the module with them, which the interpreter runs.
    pub(crate) debug: Option<std::sync::Arc<DebugModule>>,
}

/// The interpreter's module of a kernel with `debug_print`s: `module` has each print as a call
/// of an empty function (`prints` says which), and is otherwise the GPU's module; validated
/// as it is.
#[derive(Debug)]
#[cfg_attr(not(feature = "runtime"), allow(dead_code))] // read by the interpreter
pub(crate) struct DebugModule {
    pub module: naga::Module,
    pub info: naga::valid::ModuleInfo,
    pub sites: crate::lower::SiteTable,
    pub prints: Vec<crate::lower::DebugPrintDecl>,
}

impl Shader {
    /// The Rust call site that built the naga expression or statement with this span (every
    /// expression and statement of the module has one; see ARCHITECTURE decision 3).
    pub fn call_site(&self, span: naga::Span) -> Option<CallSite> {
        self.sites.lookup(span)
    }

    /// How many [`debug_print`](KernelBuilder::debug_print)s the kernel has. `module` and
    /// `wgsl` (what the GPU runs) have none of them; the interpreter runs a second module,
    /// built and validated with them (see [`crate::kernel::debug`]).
    pub fn debug_prints(&self) -> usize {
        self.debug.as_ref().map_or(0, |d| d.prints.len())
    }

    /// The shader the interpreter runs: this one, or for a kernel with `debug_print`s the
    /// same with the module that has them; and the prints of that module.
    #[cfg(feature = "runtime")]
    pub(crate) fn for_interpreter(&self) -> (Shader, Vec<crate::lower::DebugPrintDecl>) {
        match &self.debug {
            None => (self.clone(), Vec::new()),
            Some(d) => (
                Shader {
                    module: d.module.clone(),
                    info: d.info.clone(),
                    wgsl: self.wgsl.clone(),
                    signature: self.signature.clone(),
                    target: self.target,
                    sites: d.sites.clone(),
                    debug: None,
                },
                d.prints.clone(),
            ),
        }
    }
}

/// Limits a kernel is built against. The defaults are WebGPU's default limits
/// (`maxComputeInvocationsPerWorkgroup` = 256, sizes 256 x 256 x 64, 16 KiB workgroup storage)
/// and every capability the DSL can express (subgroups, f16, cooperative matrices): a
/// device's own target is [`Gpu::target_limits`](crate::runtime::Gpu::target_limits).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TargetLimits {
    /// Most invocations in one workgroup.
    pub max_invocations_per_workgroup: u32,
    /// Largest workgroup size per dimension.
    pub max_workgroup_size: [u32; 3],
    /// Most bytes of `var<workgroup>` memory.
    pub max_workgroup_storage_size: u32,
    /// Capabilities beyond portable WGSL the target has (subgroups, f16, cooperative matrices;
    /// and `SHADER_FLOAT16_IN_FLOAT32`, which `quantizeToF16`, `pack2x16float` and
    /// `unpack2x16float` need and every target but WebGL has).
    pub capabilities: Capabilities,
}

impl Default for TargetLimits {
    fn default() -> Self {
        TargetLimits {
            max_invocations_per_workgroup: 256,
            max_workgroup_size: [256, 256, 64],
            max_workgroup_storage_size: 16384,
            capabilities: Capabilities::SUBGROUP
                | Capabilities::SUBGROUP_BARRIER
                | Capabilities::SHADER_FLOAT16
                | Capabilities::COOPERATIVE_MATRIX
                | Capabilities::SHADER_FLOAT16_IN_FLOAT32,
        }
    }
}

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
        /// declared with [`KernelBuilder::require`]).
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
    /// A [`debug_print`](KernelBuilder::debug_print) (or `debug_print!`) whose format string
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

impl KernelBuilder {
    /// Lower, validate and emit the kernel against the default [`TargetLimits`].
    ///
    /// # Errors
    /// First the mistakes recorded while building (atomics in read-only storage, a binding or
    /// helper function of another builder, a malformed `workgroup_reduce`): the one, or all of
    /// them as [`BuildError::Several`] in program order, whether or not the values they concern
    /// are used. Then any other [`BuildError`]: limits, names, literals, scope errors, and naga
    /// validation errors. Each names the Rust call site that built the offending node.
    pub fn build(&self) -> Result<Shader, BuildError> {
        self.build_for(&TargetLimits::default())
    }

    /// Lower, validate and emit the kernel against `target`'s limits and capabilities.
    ///
    /// # Errors
    /// As [`KernelBuilder::build`]; also [`BuildError::MissingCapability`].
    pub fn build_for(&self, target: &TargetLimits) -> Result<Shader, BuildError> {
        match self.errors.as_slice() {
            [] => {}
            [one] => return Err(one.clone()),
            several => return Err(BuildError::Several(several.to_vec())),
        }
        crate::autodiff::check_memory(self)?;
        self.check_name()?;
        self.check_workgroup_size(target)?;
        let lowered = crate::lower::lower(self, crate::lower::Prints::Drop)?;
        let signature = lowered.signature;
        if signature.workgroup_memory > target.max_workgroup_storage_size {
            let limit = target.max_workgroup_storage_size;
            let mut total = 0u32;
            let site = lowered
                .workgroup_sites
                .iter()
                .find(|(bytes, _)| {
                    total = total.saturating_add(*bytes);
                    total > limit
                })
                .map_or(self.site, |(_, site)| *site);
            return Err(BuildError::WorkgroupMemory {
                kernel: self.name.clone(),
                bytes: signature.workgroup_memory,
                limit,
                site,
            });
        }
        let missing = signature.capabilities - target.capabilities;
        if !missing.is_empty() {
            let site = lowered
                .capability_sites
                .iter()
                .find(|(caps, _)| caps.intersects(missing))
                .map_or(self.site, |(_, site)| *site);
            return Err(BuildError::MissingCapability {
                kernel: self.name.clone(),
                needed: missing,
                site,
            });
        }
        let module = lowered.module;
        let info = Validator::new(ValidationFlags::all(), signature.capabilities)
            .validate(&module)
            .map_err(|e| BuildError::Validation {
                kernel: self.name.clone(),
                message: error_chain(&e),
                site: e
                    .spans()
                    .filter_map(|(span, _)| lowered.sites.lookup(*span))
                    .next(),
            })?;
        if self.check_uniformity {
            crate::uniformity::check(&self.name, &module, &lowered.sites)?;
        }
        let mut signature = signature;
        signature.entry_point = emitted_entry_point(&module);
        let wgsl =
            naga::back::wgsl::write_string(&module, &info, naga::back::wgsl::WriterFlags::empty())
                .map_err(|e| BuildError::Emit {
                    kernel: self.name.clone(),
                    message: e.to_string(),
                    site: self.site,
                })?;
        let debug = if self.debug_prints > 0 {
            Some(std::sync::Arc::new(self.debug_module()?))
        } else {
            None
        };
        Ok(Shader {
            module,
            info,
            wgsl,
            signature,
            target: *target,
            sites: lowered.sites,
            debug,
        })
    }

    /// The module with the `debug_print`s (each a call of an empty function), validated as
    /// the GPU's is, for the interpreter.
    fn debug_module(&self) -> Result<DebugModule, BuildError> {
        let lowered = crate::lower::lower(self, crate::lower::Prints::Keep)?;
        let info = Validator::new(ValidationFlags::all(), lowered.signature.capabilities)
            .validate(&lowered.module)
            .map_err(|e| BuildError::Validation {
                kernel: self.name.clone(),
                message: error_chain(&e),
                site: e
                    .spans()
                    .filter_map(|(span, _)| lowered.sites.lookup(*span))
                    .next(),
            })?;
        Ok(DebugModule {
            module: lowered.module,
            info,
            sites: lowered.sites,
            prints: lowered.prints,
        })
    }

    /// Build even if a barrier or subgroup operation is reached in non-uniform control flow
    /// ([`BuildError::NonUniformControlFlow`] is not returned). For kernels the static
    /// analysis rejects although their control flow is uniform at run time, and for testing
    /// the interpreter's run-time check ([`crate::interp`] reports a barrier that some
    /// invocations of a workgroup miss). On a GPU, a divergent barrier is undefined
    /// behaviour.
    pub fn skip_uniformity_check(&mut self) {
        self.check_uniformity = false;
    }

    /// The name must be an identifier: ASCII letters, digits and `_`, not starting with a
    /// digit, not `_` alone. Any such name works: naga's namer writes names WGSL reserves or
    /// that end in a digit with a `_` appended, and the signature's
    /// [`entry_point`](KernelSignature::entry_point) carries the name it wrote.
    fn check_name(&self) -> Result<(), BuildError> {
        let name = &self.name;
        let bad = |reason| {
            Err(BuildError::InvalidName {
                name: name.clone(),
                reason,
                site: self.site,
            })
        };
        let mut chars = name.chars();
        match chars.next() {
            None => return bad("it is empty"),
            Some(c) if !(c.is_ascii_alphabetic() || c == '_') => {
                return bad("it must start with an ASCII letter or `_`");
            }
            _ => {}
        }
        if !chars.all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return bad("it may contain only ASCII letters, digits and `_`");
        }
        if name == "_" {
            return bad("`_` alone is not an identifier");
        }
        Ok(())
    }

    fn check_workgroup_size(&self, target: &TargetLimits) -> Result<(), BuildError> {
        let size = self.workgroup_size;
        let err = |reason: String| {
            Err(BuildError::WorkgroupSize {
                size,
                reason,
                site: self.site,
            })
        };
        if size.contains(&0) {
            return err("every dimension must be at least 1".into());
        }
        for (d, (s, max)) in size.iter().zip(target.max_workgroup_size).enumerate() {
            if *s > max {
                return err(format!("dimension {d} is {s}, the limit is {max}"));
            }
        }
        let total = size.iter().map(|&s| u128::from(s)).product::<u128>();
        if total > u128::from(target.max_invocations_per_workgroup) {
            return err(format!(
                "{total} invocations per workgroup, the limit is {}",
                target.max_invocations_per_workgroup
            ));
        }
        Ok(())
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
pub(crate) fn capability_hint(needed: Capabilities) -> &'static str {
    if needed.contains(Capabilities::COOPERATIVE_MATRIX) {
        " (cooperative matrices need an adapter with wgpu's EXPERIMENTAL_COOPERATIVE_MATRIX, such as \
         NVIDIA GPUs through Vulkan, opened with `GpuOptions::cooperative_matrix`; Mesa's lavapipe \
         has none)"
    } else {
        ""
    }
}

/// The name naga's WGSL writer gives the entry point: its namer, reset as the writer resets
/// it (WGSL's reserved words and built-in function names, the reserved prefixes `__` and
/// `_naga`), appends `_` to names ending in a digit or reserved, and `_1` ... to repeated names.
fn emitted_entry_point(module: &naga::Module) -> String {
    wgsl_names(module)
        .remove(&naga::proc::NameKey::EntryPoint(0))
        .unwrap_or_default()
}

/// Every name naga's WGSL writer gives `module`'s items (entry points, global variables,
/// struct types and members, ...): its namer, reset as the writer resets it.
pub(crate) fn wgsl_names(module: &naga::Module) -> naga::FastHashMap<naga::proc::NameKey, String> {
    let mut names = naga::FastHashMap::default();
    naga::proc::Namer::default().reset(
        module,
        &naga::keywords::wgsl::RESERVED_SET,
        &naga::keywords::wgsl::BUILTIN_IDENTIFIER_SET,
        naga::proc::CaseInsensitiveKeywordSet::empty(),
        &["__", "_naga"],
        &mut names,
    );
    names
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        s.push_str(": ");
        s.push_str(&cause.to_string());
        source = cause.source();
    }
    s
}
