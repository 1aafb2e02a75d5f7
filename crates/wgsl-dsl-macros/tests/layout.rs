//! `#[derive(WgslStruct)]` layouts against naga: for every sample struct, the Rust field offsets
//! and size (`offset_of!`, `size_of`) equal the member offsets and span naga's WGSL front end
//! computes (with `naga::proc::Layouter`) for the struct's WGSL declaration, and the derive's
//! uniform verdict equals naga's validation of a `var<uniform>` of it.
//!
//! To check another struct, add `check!(Type)` to `every_struct_matches_naga`.

#[path = "common/naga_layout.rs"]
mod naga_layout;

use naga_layout::{assert_naga_layout, uniform_validation, wgsl_for};
use wgsl_dsl::types::{Ty, WgslStruct, WgslType};
use wgsl_dsl_macros::WgslStruct;

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable, WgslStruct)]
#[repr(C)]
#[wgsl(uniform)]
struct AdamParams {
    learning_rate: f32,
    beta1: f32,
    beta2: f32,
    epsilon: f32,
    step: u32,
    len: u32,
    _pad0: u32,
    _pad1: u32,
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable, WgslStruct)]
#[repr(C)]
struct Vectors {
    a: f32,
    _pad_b: f32,
    #[wgsl(vec)]
    b: [f32; 2],
    #[wgsl(vec)]
    c: [i32; 3],
    d: f32,
    #[wgsl(vec)]
    e: [u32; 4],
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable, WgslStruct)]
#[repr(C)]
#[wgsl(uniform)]
struct Matrices {
    #[wgsl(mat)]
    m44: [[f32; 4]; 4],
    #[wgsl(mat)]
    m22: [[f32; 2]; 2],
    #[wgsl(mat)]
    m42: [[f32; 2]; 4],
    #[wgsl(mat)]
    m24: [[f32; 4]; 2],
}

const N: usize = 5;

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable, WgslStruct)]
#[repr(C)]
struct Arrays {
    scalars: [f32; N],
    ints: [[i32; 2]; 3],
    _pad: u32,
    #[wgsl(vec)]
    vecs: [[f32; 4]; 2],
    tail: u32,
    _pad_end: [u32; 3],
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable, WgslStruct)]
#[repr(C)]
#[wgsl(uniform)]
struct Inner {
    #[wgsl(vec)]
    dir: [f32; 3],
    scale: f32,
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable, WgslStruct)]
#[repr(C)]
#[wgsl(uniform)]
struct Outer {
    count: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
    inner: Inner,
    many: [Inner; 3],
    #[wgsl(vec)]
    rows: [[f32; 4]; 2],
    last: f32,
    _pad3: u32,
    _pad4: u32,
    _pad5: u32,
}

/// Fine in storage buffers, invalid in uniform ones (stride 4 arrays).
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable, WgslStruct)]
#[repr(C)]
struct StorageOnly {
    n: u32,
    weights: [f32; 3],
}

/// Fine in storage buffers; in uniform ones a struct member must be 16-byte aligned.
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable, WgslStruct)]
#[repr(C)]
struct Small {
    a: f32,
    b: f32,
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable, WgslStruct)]
#[repr(C)]
struct NestedStorage {
    x: f32,
    small: Small,
    y: f32,
}

macro_rules! check {
    ($t:ty) => {{
        assert_naga_layout::<$t>(&<$t>::__WGSL_HOST_OFFSETS);
        assert_eq!(
            <$t>::__WGSL_UNIFORM_OK,
            uniform_validation::<$t>().is_ok(),
            "uniform verdict for {}\n{}",
            stringify!($t),
            wgsl_for::<$t>("uniform")
        );
        <$t>::__WGSL_UNIFORM_OK
    }};
}

#[test]
fn every_struct_matches_naga() {
    assert!(check!(AdamParams));
    assert!(check!(Matrices));
    assert!(check!(Inner));
    assert!(check!(Outer));
    assert!(check!(Vectors));
    assert!(!check!(Arrays));
    assert!(!check!(StorageOnly));
    assert!(check!(Small));
    assert!(!check!(NestedStorage));
}

#[test]
fn members_and_names_are_the_wgsl_struct() {
    let Ty::Struct { name, members } = Outer::ty() else {
        panic!("a struct")
    };
    assert_eq!(name, "Outer");
    let names: Vec<&str> = members.iter().map(|(n, _)| *n).collect();
    assert_eq!(names[..5], ["count", "_pad0", "_pad1", "_pad2", "inner"]);
    assert_eq!(members[5].1.wgsl_name(), "array<Inner, 3>");
    assert_eq!(members[6].1.wgsl_name(), "array<vec4<f32>, 2>");
    assert_eq!(Matrices::members()[2].1.wgsl_name(), "mat4x2<f32>");
}
