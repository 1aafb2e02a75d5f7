//! The lowering's state: [`ModuleCtx`] (module-wide, shared by the functions being lowered),
//! [`SiteTable`] (naga spans back to Rust call sites) and the `debug_print`s ([`Prints`],
//! [`DebugPrintDecl`]). Below the stage's entry point
//! (`lower::lower`) and the expression and statement lowering that use it.

use std::collections::HashMap;

use naga::{Handle, Span};

use crate::error::BuildError;
use crate::kernel::KernelBuilder;
use crate::site::CallSite;
use crate::types::Ty;

use super::types::TypeLowerer;

/// Maps naga spans back to Rust call sites.
#[derive(Clone, Debug, Default)]
pub(crate) struct SiteTable {
    sites: Vec<CallSite>,
    index: HashMap<CallSite, u32>,
}

impl SiteTable {
    pub fn span(&mut self, site: CallSite) -> Span {
        let i = *self.index.entry(site).or_insert_with(|| {
            self.sites.push(site);
            self.sites.len() as u32
        });
        Span::new(i, i + 1)
    }

    pub fn lookup(&self, span: Span) -> Option<CallSite> {
        let range = span.to_range()?;
        self.sites.get(range.start.checked_sub(1)?).copied()
    }
}

/// One `debug_print` of the interpreter's module: the empty function its calls call (taking
/// the printed values), the format string's literal pieces, the Rust call.
#[derive(Clone, Debug)]
pub struct DebugPrintDecl {
    pub function: Handle<naga::Function>,
    pub pieces: Vec<String>,
    pub site: CallSite,
}

/// Which module to lower: the GPU's (`debug_print`s dropped) or the interpreter's (each a call
/// of an empty function).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Prints {
    Drop,
    Keep,
}

/// Module-wide lowering state, shared by the functions being lowered.
pub(crate) struct ModuleCtx<'k> {
    pub kernel: &'k KernelBuilder,
    pub module: naga::Module,
    pub types: TypeLowerer,
    pub sites: SiteTable,
    pub globals: Vec<Handle<naga::GlobalVariable>>,
    pub functions: Vec<Handle<naga::Function>>,
    pub capabilities: naga::valid::Capabilities,
    /// Multiply-add configurations met so far, each once.
    pub cooperative_shapes: Vec<crate::types::CoopShape>,
    pub capability_sites: Vec<(naga::valid::Capabilities, CallSite)>,
    /// Whether `debug_print`s are lowered.
    pub prints_mode: Prints,
    pub prints: Vec<DebugPrintDecl>,
}

impl ModuleCtx<'_> {
    /// Record that the node built at `site` needs `caps`.
    pub fn need(&mut self, caps: naga::valid::Capabilities, site: CallSite) {
        if !self.capabilities.contains(caps)
            || !self.capability_sites.iter().any(|(c, _)| c.contains(caps))
        {
            self.capability_sites.push((caps, site));
        }
        self.capabilities |= caps;
    }

    pub fn ty(&mut self, ty: &Ty, site: CallSite) -> Result<Handle<naga::Type>, BuildError> {
        let caps = ty.capabilities();
        if !caps.is_empty() {
            self.need(caps, site);
        }
        self.types.lower(&mut self.module, ty, site)
    }
}
