//! Proc macros for wgsl-dsl (in progress).

mod derive;
mod errors;
mod kernel;
#[cfg(test)]
mod snapshots;

use proc_macro::TokenStream;

/// Derive `WgslType`, `Constructible` and `WgslStruct` for a `#[repr(C)]` struct.
#[proc_macro_derive(WgslStruct, attributes(wgsl))]
pub fn derive_wgsl_struct(input: TokenStream) -> TokenStream {
    derive::expand(input.into()).into()
}

/// Write a kernel in Rust syntax.
#[proc_macro_attribute]
pub fn kernel(attr: TokenStream, item: TokenStream) -> TokenStream {
    kernel::expand(attr.into(), item.into()).into()
}
