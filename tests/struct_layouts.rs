//! Every `#[derive(WgslStruct)]` struct of the workspace outside the macros crate's own samples
//! (the MLP's uniforms) has the layout naga computes for its WGSL declaration: the Rust field
//! offsets and size equal naga's member offsets and span, and the struct is valid in a
//! `var<uniform>` as naga validates it. (The macros crate checks its samples in its own
//! `tests/layout.rs`.)

#[path = "../crates/wgsl-dsl-macros/tests/common/naga_layout.rs"]
mod naga_layout;

use mlp::kernels::uniforms::{
    AdamParams, EvalParams, GatherParams, LinearDims, LossDims, SgdParams,
};
use naga_layout::{assert_naga_layout, uniform_validation};
use wgsl_dsl::types::WgslStruct;

fn check<S: WgslStruct>(host_offsets: &[(&str, usize)]) {
    uniform_validation::<S>().unwrap_or_else(|e| panic!("not valid as a uniform:\n{e}"));
    assert_naga_layout::<S>(host_offsets);
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
