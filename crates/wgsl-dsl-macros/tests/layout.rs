//! `#[derive(WgslStruct)]` layouts against naga: for every sample struct, the Rust field offsets
//! and size (`offset_of!`, `size_of`) equal the member offsets and span naga's WGSL front end
//! computes (with `naga::proc::Layouter`) for the struct's WGSL declaration, and the derive's
//! uniform verdict equals naga's validation of a `var<uniform>` of it.
//!
//! To check another struct, add `check!(Type)` to `every_struct_matches_naga`.

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

fn wgsl_for<S: WgslStruct>(space: &str) -> String {
    let mut decls = Vec::new();
    declare(&S::ty(), &mut decls);
    let name = S::ty().wgsl_name();
    format!(
        "{}\n@group(0) @binding(0) var<{space}> v: {name};\n@compute @workgroup_size(1) fn main() {{ _ = v; }}\n",
        decls.join("\n")
    )
}

/// naga's member offsets and span of `S`, from its WGSL declaration.
fn naga_layout<S: WgslStruct>() -> (Vec<(String, u32)>, u32) {
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

fn valid_as_uniform<S: WgslStruct>() -> bool {
    let src = wgsl_for::<S>("uniform");
    let module = naga::front::wgsl::parse_str(&src).unwrap_or_else(|e| panic!("{src}\n{e}"));
    naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::empty(),
    )
    .validate(&module)
    .is_ok()
}

macro_rules! check {
    ($t:ty) => {{
        let (naga_members, naga_span) = naga_layout::<$t>();
        let host: Vec<(String, u32)> = <$t>::__WGSL_HOST_OFFSETS
            .iter()
            .map(|(n, o)| (n.to_string(), *o as u32))
            .collect();
        assert_eq!(host, naga_members, "offsets of {}", stringify!($t));
        assert_eq!(
            std::mem::size_of::<$t>() as u32,
            naga_span,
            "size of {}",
            stringify!($t)
        );
        assert_eq!(
            <$t>::__WGSL_UNIFORM_OK,
            valid_as_uniform::<$t>(),
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
