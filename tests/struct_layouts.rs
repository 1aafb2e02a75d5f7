//! Every `#[derive(WgslStruct)]` struct of the workspace outside the macros crate's own samples
//! (the MLP's uniforms) has the layout naga computes for its WGSL declaration: the Rust field
//! offsets and size equal naga's member offsets and span, and the struct is valid in a
//! `var<uniform>` as naga validates it. (The macros crate checks its samples in its own
//! `tests/layout.rs`.)

use mlp::kernels::uniforms::{
    AdamParams, EvalParams, GatherParams, LinearDims, LossDims, SgdParams,
};
use wgsl_dsl::types::{Ty, WgslStruct};

fn declaration<S: WgslStruct>(space: &str) -> String {
    let Ty::Struct { name, members } = S::ty() else {
        unreachable!("a WgslStruct is a struct")
    };
    let body: Vec<String> = members
        .iter()
        .map(|(n, t)| format!("    {n}: {},", t.wgsl_name()))
        .collect();
    format!(
        "struct {name} {{\n{}\n}}\n@group(0) @binding(0) var<{space}> v: {name};\n\
         @compute @workgroup_size(1) fn main() {{ _ = v; }}\n",
        body.join("\n")
    )
}

fn check<S: WgslStruct>(host_offsets: &[(&str, usize)]) {
    let src = declaration::<S>("uniform");
    let module = naga::front::wgsl::parse_str(&src).unwrap_or_else(|e| panic!("{src}\n{e}"));
    naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::empty(),
    )
    .validate(&module)
    .unwrap_or_else(|e| panic!("not valid as a uniform:\n{src}\n{e:?}"));
    let name = S::ty().wgsl_name();
    let (_, ty) = module
        .types
        .iter()
        .find(|(_, t)| t.name.as_deref() == Some(name.as_str()))
        .expect("struct declared");
    let naga::TypeInner::Struct { members, span } = &ty.inner else {
        panic!("{name} is not a struct in naga")
    };
    let naga_offsets: Vec<(String, u32)> = members
        .iter()
        .map(|m| (m.name.clone().unwrap_or_default(), m.offset))
        .collect();
    let host: Vec<(String, u32)> = host_offsets
        .iter()
        .map(|(n, o)| (n.to_string(), *o as u32))
        .collect();
    assert_eq!(host, naga_offsets, "member offsets of {name}");
    assert_eq!(std::mem::size_of::<S>() as u32, *span, "size of {name}");
}

#[test]
fn mlp_uniforms_match_naga_layouts() {
    check::<LinearDims>(&LinearDims::__WGSL_HOST_OFFSETS);
    check::<LossDims>(&LossDims::__WGSL_HOST_OFFSETS);
    check::<GatherParams>(&GatherParams::__WGSL_HOST_OFFSETS);
    check::<SgdParams>(&SgdParams::__WGSL_HOST_OFFSETS);
    check::<AdamParams>(&AdamParams::__WGSL_HOST_OFFSETS);
    check::<EvalParams>(&EvalParams::__WGSL_HOST_OFFSETS);
}
