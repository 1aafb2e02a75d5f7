//! The memory layout of a kernel's bindings ([`BindingLayout`], from naga's layouter): what the
//! dispatch checks of both executors (the GPU's and the interpreter's) compare arguments with.

use super::error::{DispatchError, DispatchErrorKind};
use wgsl_dsl_core::shader::Shader;

/// Sizes the dispatch checks need, per binding, from the module's WGSL memory layout
/// (WGSL spec §14.4 "Memory Layout", computed by naga's `Layouter`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BindingLayout {
    /// Bytes of the store type; for a runtime-sized array, one element's stride.
    pub min_size: u64,
    /// Element stride for a runtime-sized (`array<E>`) or fixed-size array binding.
    pub stride: Option<u64>,
}

/// The size and stride of each declared binding's store type, from the module.
pub fn binding_layouts(shader: &Shader) -> Result<Vec<BindingLayout>, DispatchError> {
    let module = &shader.module;
    let kernel = || shader.signature.name.clone();
    let mut layouter = naga::proc::Layouter::default();
    layouter.update(module.to_ctx()).map_err(|e| {
        DispatchError::new(
            kernel(),
            DispatchErrorKind::Layout {
                message: e.to_string(),
            },
        )
    })?;
    shader
        .signature
        .bindings
        .iter()
        .map(|b| {
            let want = naga::ResourceBinding {
                group: b.group,
                binding: b.binding,
            };
            let (_, var) = module
                .global_variables
                .iter()
                .find(|(_, v)| v.binding.as_ref() == Some(&want))
                .ok_or_else(|| {
                    DispatchError::new(
                        kernel(),
                        DispatchErrorKind::Layout {
                            message: format!(
                                "binding {} `{}` is declared but not in the module",
                                b.binding, b.name
                            ),
                        },
                    )
                })?;
            let stride = match module.types[var.ty].inner {
                naga::TypeInner::Array { stride, .. } => Some(u64::from(stride)),
                _ => None,
            };
            Ok(BindingLayout {
                min_size: u64::from(layouter[var.ty].size),
                stride,
            })
        })
        .collect()
}
