//! naga's view of a `#[derive(WgslStruct)]` struct: its WGSL declaration, the member offsets
//! and span naga computes for it, and naga's validation of it in a `var<uniform>`. Shared by
//! this crate's `tests/layout.rs` and the workspace's `tests/struct_layouts.rs`
//! (`#[path = ".../common/naga_layout.rs"] mod naga_layout;`).

use wgsl_dsl::types::{Ty, WgslStruct};

/// WGSL declarations for `ty` and the structs it contains, dependencies first.
fn declare(ty: &Ty, out: &mut Vec<String>) {
    match ty {
        Ty::Array { elem, .. } => declare(elem, out),
        Ty::Struct { name, members } => {
            for (_, m) in members {
                declare(m, out);
            }
            let body: Vec<String> = members
                .iter()
                .map(|(n, t)| format!("    {n}: {},", t.wgsl_name()))
                .collect();
            let decl = format!("struct {name} {{\n{}\n}}", body.join("\n"));
            if !out.contains(&decl) {
                out.push(decl);
            }
        }
        _ => {}
    }
}

/// A module declaring `S` (and the structs it contains) and a `var<space>` of it.
pub fn wgsl_for<S: WgslStruct>(space: &str) -> String {
    let mut decls = Vec::new();
    declare(&S::ty(), &mut decls);
    let name = S::ty().wgsl_name();
    format!(
        "{}\n@group(0) @binding(0) var<{space}> v: {name};\n@compute @workgroup_size(1) fn main() {{ _ = v; }}\n",
        decls.join("\n")
    )
}

/// naga's member offsets and span of `S`, from its WGSL declaration.
pub fn naga_layout<S: WgslStruct>() -> (Vec<(String, u32)>, u32) {
    let src = wgsl_for::<S>("storage");
    let module = naga::front::wgsl::parse_str(&src).unwrap_or_else(|e| panic!("{src}\n{e}"));
    let name = S::ty().wgsl_name();
    let (_, ty) = module
        .types
        .iter()
        .find(|(_, t)| t.name.as_deref() == Some(name.as_str()))
        .expect("struct declared");
    let naga::TypeInner::Struct { members, span } = &ty.inner else {
        panic!("{name} is not a struct in naga")
    };
    let members = members
        .iter()
        .map(|m| (m.name.clone().unwrap_or_default(), m.offset))
        .collect();
    (members, *span)
}

/// naga's validation of a `var<uniform>` of `S`; the error has the WGSL and naga's reason.
pub fn uniform_validation<S: WgslStruct>() -> Result<(), String> {
    let src = wgsl_for::<S>("uniform");
    let module = naga::front::wgsl::parse_str(&src).unwrap_or_else(|e| panic!("{src}\n{e}"));
    naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::empty(),
    )
    .validate(&module)
    .map(|_| ())
    .map_err(|e| format!("{src}\n{e:?}"))
}

/// `S`'s host field offsets (the derive's `__WGSL_HOST_OFFSETS`) and `size_of` equal naga's
/// member offsets and span.
#[track_caller]
pub fn assert_naga_layout<S: WgslStruct>(host_offsets: &[(&str, usize)]) {
    let (naga_members, naga_span) = naga_layout::<S>();
    let name = S::ty().wgsl_name();
    let host: Vec<(String, u32)> = host_offsets
        .iter()
        .map(|(n, o)| (n.to_string(), *o as u32))
        .collect();
    assert_eq!(host, naga_members, "offsets of {name}");
    assert_eq!(std::mem::size_of::<S>() as u32, naga_span, "size of {name}");
}
