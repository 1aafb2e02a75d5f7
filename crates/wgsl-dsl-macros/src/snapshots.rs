//! Expansion snapshots: the code `#[kernel]` and `#[derive(WgslStruct)]` generate for one
//! sample each, formatted with prettyplease, in `snapshots/macros@<case>.snap` at the
//! repository root. A change in generated code shows in review.

use quote::quote;

fn pretty(tokens: proc_macro2::TokenStream) -> String {
    let file: syn::File = syn::parse2(tokens).expect("the expansion parses as items");
    prettyplease::unparse(&file)
}

macro_rules! snapshot {
    ($name:literal, $value:expr) => {
        insta::with_settings!({
            snapshot_path => concat!(env!("CARGO_MANIFEST_DIR"), "/../../snapshots"),
            prepend_module_to_snapshot => false,
        }, {
            insta::assert_snapshot!($name, $value);
        })
    };
}

#[test]
fn kernel_saxpy_expansion() {
    let out = crate::kernel::expand(
        quote!(workgroup_size = [64, 1, 1]),
        quote! {
            /// `y[i] = a * x[i] + y[i]`.
            pub fn saxpy(
                #[uniform] a: f32,
                #[storage(read)] x: &[f32],
                #[storage(read_write)] y: &mut [f32],
                #[builtin(global_invocation_id)] gid: Vec3<u32>,
            ) {
                let i = gid.x;
                if i >= y.len() {
                    return;
                }
                let mut acc = 0.0;
                for j in 0..4u32 {
                    acc += relu(j as f32);
                }
                y[i] = a * x[i] + y[i] + acc;
            }
        },
    );
    snapshot!("macros@kernel_saxpy", pretty(out));
}

#[test]
fn kernel_textures_debug_print_expansion() {
    let out = crate::kernel::expand(
        quote!(workgroup_size = [8, 8]),
        quote! {
            /// Textures and `debug_print!` (issue 26).
            pub fn tint(
                #[texture] src: Texture2d<f32>,
                #[texture] out: StorageTexture2d<Rgba32Float, WriteOnly>,
                #[builtin(global_invocation_id)] gid: Vec3<u32>,
            ) {
                let p = gid.xy;
                let v = src.load(p, 0u32);
                debug_print!("p = {}, v = {}", p, v);
                out.store(p, v);
            }
        },
    );
    snapshot!("macros@kernel_textures_debug_print", pretty(out));
}

#[test]
fn derive_params_expansion() {
    let out = crate::derive::expand(quote! {
        #[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable, WgslStruct)]
        #[repr(C)]
        #[wgsl(uniform)]
        pub struct Params {
            pub lr: f32,
            pub step: u32,
            pub _pad0: u32,
            pub _pad1: u32,
            #[wgsl(vec)]
            pub dir: [f32; 4],
        }
    });
    snapshot!("macros@derive_params", pretty(out));
}

#[test]
fn errors_replace_the_kernel_by_a_stub() {
    let out = crate::kernel::expand(
        quote!(workgroup_size = 64),
        quote! {
            fn k(#[storage(read_write)] y: &mut [f32], n: u32) {
                let t = (n, n);
                y[0] = println!();
            }
        },
    );
    let text = out.to_string();
    assert_eq!(text.matches("compile_error").count(), 2, "{text}");
    assert!(text.contains("unreachable"), "{text}");
    assert!(text.contains("fn k (n : u32)"), "{text}");
}
