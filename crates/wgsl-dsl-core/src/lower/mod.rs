//! Lowering a [`KernelBuilder`] straight into a `naga::Module`.
//!
//! - Types go through [`types::TypeLowerer`] (naga's `UniqueArena` deduplicates them).
//! - Expressions are appended to the function's arena while a `naga::proc::Emitter` runs;
//!   expressions naga considers pre-emitted (literals, arguments, variables) and statement
//!   results interrupt it. Each statement flushes the emitter into an `Emit` before itself.
//! - Every expression and statement gets a `naga::Span` whose start is an index into the
//!   kernel's [`SiteTable`], so that a validation error maps back to a Rust call site.
//! - Within one statement, a node reached twice (the same `Rc`) is lowered once.
//! - Identities with a literal operand (`i + 0u`, `x * 1.0`) are folded ([`fold`]).

mod ctx;
mod expr;
mod fold;
mod stmt;
mod types;

use crate::error::BuildError;
use crate::exp::BuiltinValue;
use crate::kernel::{BindingDesc, GlobalKind, KernelBuilder, KernelSignature};
use crate::site::CallSite;
use crate::types::Ty;
use types::TypeLowerer;

pub use ctx::DebugPrintDecl;
pub(crate) use ctx::{ModuleCtx, Prints, SiteTable};

pub(crate) struct Lowered {
    pub module: naga::Module,
    pub sites: SiteTable,
    pub signature: KernelSignature,
    /// Bytes of each workgroup variable, in declaration order, with its declaration.
    pub workgroup_sites: Vec<(u32, CallSite)>,
    /// Capabilities needed, with the first node that needs them, in lowering order.
    pub capability_sites: Vec<(naga::valid::Capabilities, CallSite)>,
    /// The `debug_print`s, each a call of an empty function (empty unless lowered with them).
    pub prints: Vec<DebugPrintDecl>,
}

pub(crate) fn lower(kernel: &KernelBuilder, prints: Prints) -> Result<Lowered, BuildError> {
    let mut cx = ModuleCtx {
        prints_mode: prints,
        prints: Vec::new(),
        kernel,
        module: naga::Module::default(),
        types: TypeLowerer::default(),
        sites: SiteTable::default(),
        globals: Vec::new(),
        functions: Vec::new(),
        capabilities: kernel.capabilities,
        cooperative_shapes: Vec::new(),
        capability_sites: Vec::new(),
    };
    let mut workgroup_sites = Vec::new();

    let mut bindings = Vec::new();
    let mut workgroup_memory = 0u32;
    for g in &kernel.globals {
        let ty = cx.ty(&g.ty, g.site)?;
        let (space, binding) = match g.kind {
            GlobalKind::Binding(kind, binding) => {
                bindings.push(BindingDesc {
                    name: g.name.clone(),
                    group: 0,
                    binding,
                    kind,
                    ty: g.ty.clone(),
                    site: g.site,
                });
                let space = match kind {
                    crate::kernel::BindingKind::StorageRead => naga::AddressSpace::Storage {
                        access: naga::StorageAccess::LOAD,
                    },
                    crate::kernel::BindingKind::StorageReadWrite => naga::AddressSpace::Storage {
                        access: naga::StorageAccess::LOAD | naga::StorageAccess::STORE,
                    },
                    crate::kernel::BindingKind::Uniform => naga::AddressSpace::Uniform,
                    // Textures are handles (WGSL spec §7.2: module-scope `var` of a texture type).
                    crate::kernel::BindingKind::Texture => naga::AddressSpace::Handle,
                };
                (space, Some(naga::ResourceBinding { group: 0, binding }))
            }
            GlobalKind::Workgroup => {
                let mut layouter = naga::proc::Layouter::default();
                layouter
                    .update(cx.module.to_ctx())
                    .map_err(|e| BuildError::Type {
                        message: e.to_string(),
                        site: g.site,
                    })?;
                workgroup_memory = workgroup_memory.saturating_add(layouter[ty].size);
                workgroup_sites.push((layouter[ty].size, g.site));
                (naga::AddressSpace::WorkGroup, None)
            }
        };
        let span = cx.sites.span(g.site);
        let handle = cx.module.global_variables.append(
            naga::GlobalVariable {
                name: Some(g.name.clone()),
                space,
                binding,
                ty,
                init: None,
                memory_decorations: naga::MemoryDecorations::empty(),
            },
            span,
        );
        cx.globals.push(handle);
    }

    for f in &kernel.functions {
        let function = stmt::lower_function(&mut cx, f)?;
        let span = cx.sites.span(f.site);
        let handle = cx.module.functions.append(function, span);
        cx.functions.push(handle);
    }

    let entry = stmt::lower_entry(&mut cx, kernel.entry_body())?;
    cx.module.entry_points.push(naga::EntryPoint {
        name: kernel.name.clone(),
        stage: naga::ShaderStage::Compute,
        early_depth_test: None,
        workgroup_size: kernel.workgroup_size,
        workgroup_size_overrides: None,
        function: entry,
        mesh_info: None,
        task_payload: None,
        incoming_ray_payload: None,
    });

    Ok(Lowered {
        signature: KernelSignature {
            name: kernel.name.clone(),
            entry_point: kernel.name.clone(),
            workgroup_size: kernel.workgroup_size,
            bindings,
            workgroup_memory,
            capabilities: cx.capabilities,
            cooperative_shapes: cx.cooperative_shapes,
        },
        module: cx.module,
        sites: cx.sites,
        workgroup_sites,
        capability_sites: cx.capability_sites,
        prints: cx.prints,
    })
}

/// The naga type of a built-in value.
pub(crate) fn builtin_ty(b: BuiltinValue) -> Ty {
    use crate::types::ScalarTy::U32;
    match b {
        BuiltinValue::LocalInvocationIndex
        | BuiltinValue::SubgroupSize
        | BuiltinValue::SubgroupInvocationId => Ty::Scalar(U32),
        _ => Ty::Vector(3, U32),
    }
}
