//! Validation and emission: from a lowered `naga::Module` to a [`Shader`], or a [`BuildError`]
//! naming the Rust call site at fault.

use naga::valid::{Capabilities, ValidationFlags, Validator};

pub use crate::error::{BuildError, NonUniformControlFlow, ValidationCause};
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
    /// (`wgsl_dsl::interp::Interpreter::compile`).
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
pub(crate) struct DebugModule {
    pub module: naga::Module,
    pub info: naga::valid::ModuleInfo,
    pub sites: crate::lower::SiteTable,
    pub prints: Vec<crate::lower::DebugPrintDecl>,
}

impl Shader {
    /// The Rust call site that built the naga expression or statement with this span (every
    /// expression and statement of the module has one; see ARCHITECTURE.md decision *Call sites through spans*).
    pub fn call_site(&self, span: naga::Span) -> Option<CallSite> {
        self.sites.lookup(span)
    }

    /// The index in `module.entry_points` of the entry point named as the signature.
    fn entry_index(&self) -> Option<usize> {
        self.module
            .entry_points
            .iter()
            .position(|e| e.name == self.signature.name)
    }

    /// The workgroup size of the module's entry point, as the WebGPU limits count it
    /// (`maxComputeWorkgroupSize*`, `maxComputeInvocationsPerWorkgroup`); the signature's
    /// where the module has no entry point of its name.
    pub fn entry_workgroup_size(&self) -> [u32; 3] {
        self.entry_index()
            .map_or(self.signature.workgroup_size, |i| {
                self.module.entry_points[i].workgroup_size
            })
    }

    /// Bytes of `var<workgroup>` memory the kernel's entry point needs, as WebGPU counts them
    /// against `maxComputeWorkgroupStorageSize` (WebGPU spec, `createComputePipeline`
    /// validation: the sum of `roundUp(16, SizeOf(T))` over the type `T` of each variable in
    /// the `workgroup` address space that the entry point statically uses; `SizeOf` as in
    /// WGSL spec §14.4 "Memory Layout"). Every workgroup variable counts where the module has
    /// no entry point of the signature's name.
    ///
    /// `layouter` must have laid out this shader's `module`
    /// (`naga::proc::Layouter::update(module.to_ctx())`).
    pub fn workgroup_bytes(&self, layouter: &naga::proc::Layouter) -> u64 {
        let used = self.entry_index().map(|i| self.info.get_entry_point(i));
        self.module
            .global_variables
            .iter()
            .filter(|(_, v)| v.space == naga::AddressSpace::WorkGroup)
            .filter(|(h, _)| used.is_none_or(|u| !u[*h].is_empty()))
            .map(|(_, v)| u64::from(layouter[v.ty].size).next_multiple_of(16))
            .sum()
    }

    /// How many [`debug_print`](KernelBuilder::debug_print)s the kernel has. `module` and
    /// `wgsl` (what the GPU runs) have none of them; the interpreter runs a second module,
    /// built and validated with them (see [`crate::kernel::debug`]).
    pub fn debug_prints(&self) -> usize {
        self.debug.as_ref().map_or(0, |d| d.prints.len())
    }

    /// The shader the interpreter runs: this one, or for a kernel with `debug_print`s the
    /// same with the module that has them; and the prints of that module.
    #[doc(hidden)]
    pub fn for_interpreter(&self) -> (Shader, Vec<crate::lower::DebugPrintDecl>) {
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
/// device's own target is `wgsl_dsl::runtime::Gpu::target_limits`.
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
        let info = self.validate(&module, signature.capabilities, &lowered.sites)?;
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

    /// naga's validation of `module` with `capabilities`; its error names the Rust line of the
    /// first span naga points at (`sites`).
    fn validate(
        &self,
        module: &naga::Module,
        capabilities: naga::valid::Capabilities,
        sites: &crate::lower::SiteTable,
    ) -> Result<naga::valid::ModuleInfo, BuildError> {
        Validator::new(ValidationFlags::all(), capabilities)
            .validate(module)
            .map_err(|e| {
                let site = e.spans().filter_map(|(span, _)| sites.lookup(*span)).next();
                BuildError::Validation {
                    kernel: self.name.clone(),
                    message: error_chain(&e),
                    site,
                    cause: crate::error::ValidationCause(std::sync::Arc::new(e)),
                }
            })
    }

    /// The module with the `debug_print`s (each a call of an empty function), validated as
    /// the GPU's is, for the interpreter.
    fn debug_module(&self) -> Result<DebugModule, BuildError> {
        let lowered = crate::lower::lower(self, crate::lower::Prints::Keep)?;
        let info = self.validate(
            &lowered.module,
            lowered.signature.capabilities,
            &lowered.sites,
        )?;
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
    /// the interpreter's run-time check (`wgsl_dsl::interp` reports a barrier that some
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
