//! Typed kernel interfaces (wgsl-dsl's `runtime::KernelArgs`), written by `#[kernel]` from the
//! function's parameters and by `#[derive(Bindings)]` from a struct of binding declarations:
//! an argument struct with one field per binding, in binding order. Everything here is wrapped
//! in `::wgsl_dsl::__with_runtime!`, since it names the runtime's buffer type.

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::{quote, quote_spanned};

/// One field of an argument struct.
pub struct ArgField {
    /// The binding's (and the field's) name.
    pub ident: syn::Ident,
    /// Where the binding is declared: errors about the field point here.
    pub span: Span,
    /// The field's type, with the lifetime `'a`.
    pub ty: TokenStream,
    /// An expression of type `::wgsl_dsl::runtime::ArgBinding` describing the binding.
    pub binding: TokenStream,
}

/// The argument struct `ident<'a, generics>` and its `KernelArgs` impl (not wrapped).
pub fn args_struct(
    vis: &syn::Visibility,
    ident: &syn::Ident,
    generics: &syn::Generics,
    fields: &[ArgField],
    doc: &str,
) -> TokenStream {
    let params = &generics.params;
    let (_, ty_generics, where_clause) = generics.split_for_impl();
    let ty_args = generic_args(generics);
    let decls = fields.iter().map(|f| {
        let (name, ty) = (&f.ident, &f.ty);
        let fdoc = format!("Binding `{name}`.");
        quote_spanned!(f.span=> #[doc = #fdoc] pub #name: #ty)
    });
    let bindings = fields.iter().map(|f| &f.binding);
    let args = fields.iter().map(|f| {
        let name = &f.ident;
        quote_spanned!(f.span=> &*self.#name as &dyn ::wgsl_dsl::runtime::BindArg)
    });
    let _ = ty_generics;
    // Every field borrows for `'a`; a kernel without bindings has no lifetime to carry.
    let lifetime = (!fields.is_empty()).then(|| quote!('a,));
    quote! {
        #[doc = #doc]
        #[derive(Debug)]
        #vis struct #ident<#lifetime #params> #where_clause {
            #(#decls,)*
        }
        impl<#lifetime #params> ::wgsl_dsl::runtime::KernelArgs for #ident<#lifetime #ty_args> #where_clause {
            fn bindings() -> ::std::vec::Vec<::wgsl_dsl::runtime::ArgBinding> {
                ::std::vec![#(#bindings),*]
            }
            fn with_bind_args<R>(
                &self,
                f: impl ::core::ops::FnOnce(&[&dyn ::wgsl_dsl::runtime::BindArg]) -> R,
            ) -> R {
                f(&[#(#args),*])
            }
        }
    }
}

/// The generic arguments of `generics` (names only), without angle brackets.
pub fn generic_args(generics: &syn::Generics) -> TokenStream {
    let args = generics.params.iter().map(|p| match p {
        syn::GenericParam::Type(t) => {
            let i = &t.ident;
            quote!(#i)
        }
        syn::GenericParam::Const(c) => {
            let i = &c.ident;
            quote!(#i)
        }
        syn::GenericParam::Lifetime(l) => {
            let l = &l.lifetime;
            quote!(#l)
        }
    });
    quote!(#(#args),*)
}

/// True if the identifier `ident` occurs anywhere in `tokens`.
pub fn mentions(tokens: &TokenStream, ident: &syn::Ident) -> bool {
    tokens.clone().into_iter().any(|t| match t {
        TokenTree::Ident(i) => i == *ident,
        TokenTree::Group(g) => mentions(&g.stream(), ident),
        _ => false,
    })
}

/// `snake_case` -> `CamelCase`.
pub fn camel_case(snake: &str) -> String {
    snake
        .split('_')
        .filter(|s| !s.is_empty())
        .map(|s| {
            let mut c = s.chars();
            match c.next() {
                Some(f) => f.to_uppercase().chain(c).collect(),
                None => String::new(),
            }
        })
        .collect()
}

/// Wrap `items` so that they exist only with wgsl-dsl's `runtime` feature.
pub fn with_runtime(items: TokenStream) -> TokenStream {
    quote!(::wgsl_dsl::__with_runtime! { #items })
}
