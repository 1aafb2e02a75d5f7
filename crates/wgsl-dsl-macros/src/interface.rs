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
    /// The field's type, with the lifetime `'a` and the executor [`executor`].
    pub ty: TokenStream,
    /// An expression of type `::wgsl_dsl::runtime::ArgBinding` describing the binding.
    pub binding: TokenStream,
    /// How the field becomes the executor's positional argument: a texture field's
    /// `<T as ::wgsl_dsl::runtime::TextureArg>::bind::<E>`; `None` for a buffer
    /// (`ExecutorBuffers::arg`).
    pub bind: Option<TokenStream>,
}

/// The generic parameters an argument struct and its `KernelArgs` impl declare: the
/// executor (`wgsl_dsl::runtime::ExecutorBuffers`, the GPU by default), `KernelArgs::With`'s
/// lifetime and executor, and `with_bind_args`'s result. Generic parameters are not hygienic
/// (they resolve at the call site, whatever their span), so each takes a name that no
/// identifier of the author's declaration has (`__Executor`, else `__Executor_`, ...): a
/// const parameter or a constant in a binding's type of the same name stays the author's.
/// `wgsl-dsl`'s `tests/ui/pass/hygiene.rs` tries every generated name as a parameter name.
pub struct Generics {
    /// The struct's executor type parameter.
    pub executor: syn::Ident,
    /// `With`'s executor.
    pub other: syn::Ident,
    /// `with_bind_args`'s result type.
    pub result: syn::Ident,
    /// `With`'s lifetime.
    pub lifetime: syn::Lifetime,
}

/// The base names of [`Generics`], before they are made to avoid the author's names.
pub const GENERIC_NAMES: [&str; 4] = ["__Executor", "__E", "__R", "__b"];

impl Generics {
    /// Names avoiding every identifier in `declaration` (the kernel's signature, the
    /// bindings struct).
    pub fn avoiding(declaration: &TokenStream) -> Self {
        let mut taken = std::collections::BTreeSet::new();
        idents(declaration, &mut taken);
        let fresh = |base: &str| {
            let mut name = base.to_string();
            while taken.contains(&name) {
                name.push('_');
            }
            name
        };
        let ident = |base| syn::Ident::new(&fresh(base), Span::call_site());
        Generics {
            executor: ident(GENERIC_NAMES[0]),
            other: ident(GENERIC_NAMES[1]),
            result: ident(GENERIC_NAMES[2]),
            lifetime: syn::Lifetime::new(
                &format!("'{}", fresh(GENERIC_NAMES[3])),
                Span::call_site(),
            ),
        }
    }

    /// A texture field of type `texture` (`Texture2d<f32>`, `StorageTexture2d<F, A>`): its
    /// type (`&'a` or `&'a mut` the executor's texture) and how it binds.
    pub fn texture_field(&self, texture: &TokenStream, span: Span) -> (TokenStream, TokenStream) {
        let e = &self.executor;
        (
            quote_spanned!(span=> <#texture as ::wgsl_dsl::runtime::TextureArg>::Arg<'a, #e>),
            quote_spanned!(span=> <#texture as ::wgsl_dsl::runtime::TextureArg>::bind::<#e>),
        )
    }

    /// `&'a [mut] <executor as ExecutorBuffers>::Buffer<host>`: a field borrowing a buffer
    /// of `host` elements of the struct's executor.
    pub fn buffer_field(&self, host: TokenStream, writable: bool, span: Span) -> TokenStream {
        let e = &self.executor;
        let buffer =
            quote_spanned!(span=> <#e as ::wgsl_dsl::runtime::ExecutorBuffers>::Buffer<#host>);
        if writable {
            quote_spanned!(span=> &'a mut #buffer)
        } else {
            quote_spanned!(span=> &'a #buffer)
        }
    }
}

/// Every identifier (and lifetime name) in `tokens`, into `out`.
pub fn idents(tokens: &TokenStream, out: &mut std::collections::BTreeSet<String>) {
    for t in tokens.clone() {
        match t {
            TokenTree::Ident(i) => {
                out.insert(i.to_string());
            }
            TokenTree::Group(g) => idents(&g.stream(), out),
            _ => {}
        }
    }
}

/// The argument struct `ident<'a, generics, __Executor = Gpu>` and its `KernelArgs` impl
/// (not wrapped).
pub fn args_struct(
    vis: &syn::Visibility,
    ident: &syn::Ident,
    generics: &syn::Generics,
    names: &Generics,
    fields: &[ArgField],
    doc: &str,
) -> TokenStream {
    let params = &generics.params;
    let comma = (!params.is_empty()).then(|| quote!(,));
    let where_clause = &generics.where_clause;
    let ty_args = generic_args(generics);
    let Generics {
        executor: e,
        other,
        result,
        lifetime: b,
    } = names;
    let executors = quote!(::wgsl_dsl::runtime::ExecutorBuffers);
    let decls = fields.iter().map(|f| {
        let (name, ty) = (&f.ident, &f.ty);
        let fdoc = format!("Binding `{name}`.");
        quote_spanned!(f.span=> #[doc = #fdoc] pub #name: #ty)
    });
    let bindings = fields.iter().map(|f| &f.binding);
    let args = fields.iter().map(|f| {
        let name = &f.ident;
        match &f.bind {
            Some(bind) => quote_spanned!(f.span=> #bind(&*self.#name)),
            None => quote_spanned!(f.span=> <#e as #executors>::arg(&*self.#name)),
        }
    });
    let f = syn::Ident::new("__f", Span::mixed_site());
    let doc = format!(
        "{doc}\n\nOn the GPU by default (`{ident}<'a>` borrows `GpuBuffer`s); \
         `{ident}<'a, Interpreter>` borrows the interpreter's `HostBuffer`s."
    );
    // Every field borrows for `'a`; a kernel without bindings has no lifetime to carry, and
    // holds its executor in a `PhantomData` (made with `Default`).
    let (lifetime, with_lifetime, body, default) = if fields.is_empty() {
        (
            None,
            None,
            quote!((::core::marker::PhantomData<fn() -> #e>) #where_clause;),
            Some(quote! {
                impl<#params #comma #e: #executors> ::core::default::Default
                    for #ident<#ty_args #comma #e> #where_clause
                {
                    fn default() -> Self {
                        Self(::core::marker::PhantomData)
                    }
                }
            }),
        )
    } else {
        (
            Some(quote!('a,)),
            Some(quote!(#b,)),
            quote!(#where_clause { #(#decls,)* }),
            None,
        )
    };
    quote! {
        #[doc = #doc]
        #[derive(Debug)]
        #vis struct #ident<#lifetime #params #comma #e: #executors = ::wgsl_dsl::runtime::Gpu>
            #body
        #default
        impl<#lifetime #params #comma #e: #executors> ::wgsl_dsl::runtime::KernelArgs
            for #ident<#lifetime #ty_args #comma #e> #where_clause
        {
            type Executor = #e;
            type With<#b, #other: #executors> = #ident<#with_lifetime #ty_args #comma #other>;
            fn bindings() -> ::std::vec::Vec<::wgsl_dsl::runtime::ArgBinding> {
                ::std::vec![#(#bindings),*]
            }
            fn with_bind_args<#result>(
                &self,
                #f: impl ::core::ops::FnOnce(&[&<#e as #executors>::Arg]) -> #result,
            ) -> #result {
                #f(&[#(#args),*])
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
