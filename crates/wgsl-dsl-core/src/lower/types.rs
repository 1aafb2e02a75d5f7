//! Lowering [`Ty`] into `naga::Type`s, with WGSL's host-shareable layout for struct members and
//! array strides (WGSL spec §14.4 "Memory Layout"), as naga's `Layouter` computes it.

use naga::{Handle, Module, Span, Type, TypeInner};

use crate::error::BuildError;
use crate::site::CallSite;
use crate::types::Ty;

/// Types of one module, with their layouts.
#[derive(Debug, Default)]
pub(crate) struct TypeLowerer {
    layouter: naga::proc::Layouter,
}

impl TypeLowerer {
    pub fn lower(
        &mut self,
        module: &mut Module,
        ty: &Ty,
        site: CallSite,
    ) -> Result<Handle<Type>, BuildError> {
        let inner = match ty {
            Ty::Scalar(s) => TypeInner::Scalar(s.naga()),
            Ty::Vector(n, s) => TypeInner::Vector {
                size: vector_size(*n),
                scalar: s.naga(),
            },
            Ty::Matrix {
                columns,
                rows,
                scalar,
            } => TypeInner::Matrix {
                columns: vector_size(*columns),
                rows: vector_size(*rows),
                scalar: scalar.naga(),
            },
            Ty::Atomic(s) => TypeInner::Atomic(s.naga()),
            Ty::Texture(t) => TypeInner::Image {
                dim: naga::ImageDimension::D2,
                arrayed: false,
                class: match *t {
                    crate::types::TextureTy::Storage { format, access } => {
                        naga::ImageClass::Storage {
                            format: format.naga(),
                            access: access.naga(),
                        }
                    }
                    crate::types::TextureTy::Sampled(s) => naga::ImageClass::Sampled {
                        kind: s.naga().kind,
                        multi: false,
                    },
                },
            },
            Ty::CoopMatrix {
                rows,
                columns,
                scalar,
                role,
            } => TypeInner::CooperativeMatrix {
                columns: coop_size(*columns),
                rows: coop_size(*rows),
                scalar: scalar.naga(),
                role: role.naga(),
            },
            Ty::Array { elem, len } => {
                let base = self.lower(module, elem, site)?;
                let stride = self.layout(module, base, site)?.to_stride();
                let size = match len {
                    Some(0) => {
                        return Err(BuildError::Type {
                            message: "arrays of zero elements are not allowed in WGSL".into(),
                            site,
                        });
                    }
                    Some(n) => naga::ArraySize::Constant(
                        std::num::NonZeroU32::new(*n).expect("checked non-zero above"),
                    ),
                    None => naga::ArraySize::Dynamic,
                };
                TypeInner::Array { base, size, stride }
            }
            Ty::Struct { name, members }
                if *name == crate::exp::decompose::MODF_RESULT
                    || *name == crate::exp::decompose::FREXP_RESULT =>
            {
                // naga's predeclared result types of `modf` and `frexp`.
                let (size, scalar) = match members.first() {
                    Some((_, Ty::Scalar(s))) => (None, s.naga()),
                    Some((_, Ty::Vector(n, s))) => (Some(vector_size(*n)), s.naga()),
                    _ => {
                        return Err(BuildError::Type {
                            message: format!("{name} of a non-float type"),
                            site,
                        });
                    }
                };
                let predeclared = if *name == crate::exp::decompose::MODF_RESULT {
                    naga::PredeclaredType::ModfResult { size, scalar }
                } else {
                    naga::PredeclaredType::FrexpResult { size, scalar }
                };
                return Ok(module.generate_predeclared_type(predeclared));
            }
            Ty::Struct { members, .. } => {
                let mut offset = 0u32;
                let mut max_align = naga::proc::Alignment::ONE;
                let mut out = Vec::with_capacity(members.len());
                for (field, ty) in members {
                    let handle = self.lower(module, ty, site)?;
                    let layout = self.layout(module, handle, site)?;
                    offset = layout.alignment.round_up(offset);
                    max_align = max_align.max(layout.alignment);
                    out.push(naga::StructMember {
                        name: Some(field.to_string()),
                        ty: handle,
                        binding: None,
                        offset,
                    });
                    offset += layout.size;
                }
                TypeInner::Struct {
                    members: out,
                    span: max_align.round_up(offset),
                }
            }
        };
        let name = match ty {
            Ty::Struct { name, .. } => Some(name.to_string()),
            _ => None,
        };
        Ok(module.types.insert(Type { name, inner }, Span::UNDEFINED))
    }

    fn layout(
        &mut self,
        module: &Module,
        ty: Handle<Type>,
        site: CallSite,
    ) -> Result<naga::proc::TypeLayout, BuildError> {
        self.layouter
            .update(module.to_ctx())
            .map_err(|e| BuildError::Type {
                message: e.to_string(),
                site,
            })?;
        Ok(self.layouter[ty])
    }
}

pub(crate) fn coop_size(n: u8) -> naga::CooperativeSize {
    if n == 8 {
        naga::CooperativeSize::Eight
    } else {
        naga::CooperativeSize::Sixteen
    }
}

pub(crate) fn vector_size(n: u8) -> naga::VectorSize {
    match n {
        2 => naga::VectorSize::Bi,
        3 => naga::VectorSize::Tri,
        _ => naga::VectorSize::Quad,
    }
}
