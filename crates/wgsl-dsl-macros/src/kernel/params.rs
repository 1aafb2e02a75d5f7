//! The kernel's signature: parameters that are bindings (`#[uniform]`, `#[storage(..)]`,
//! `#[texture]`),
//! workgroup variables (`#[workgroup]`), built-in values (`#[builtin(..)]`), and plain Rust
//! parameters (values baked into the WGSL as constants).

use proc_macro2::TokenStream;
use quote::{ToTokens, quote, quote_spanned};
use syn::spanned::Spanned;

use super::builtins::BUILTIN_VALUES;
use super::ctx::{Cat, Ctx};

/// The DSL type for a Rust type in a signature or annotation: `[T]` is `RuntimeArray<T>`,
/// `[T; N]` is `Array<T, N>`, anything else is used as written (`f32`, `Vec3<u32>`, `Params`).
pub fn dsl_type(ty: &syn::Type) -> TokenStream {
    let span = ty.span();
    match ty {
        syn::Type::Slice(s) => {
            let e = dsl_type(&s.elem);
            quote_spanned!(span=> ::wgsl_dsl::types::RuntimeArray<#e>)
        }
        syn::Type::Array(a) => {
            let e = dsl_type(&a.elem);
            let len = &a.len;
            match len {
                // A literal or a name (a `const`, a const generic `usize`) as it is; other
                // expressions as a block (not for const generics: that needs
                // `generic_const_exprs`).
                syn::Expr::Lit(_) => quote_spanned!(span=> ::wgsl_dsl::types::Array<#e, #len>),
                syn::Expr::Path(_) => quote_spanned!(span=> ::wgsl_dsl::types::Array<#e, { #len }>),
                _ => quote_spanned!(span=> ::wgsl_dsl::types::Array<#e, { (#len) as usize }>),
            }
        }
        syn::Type::Paren(p) => dsl_type(&p.elem),
        t => quote!(#t),
    }
}

/// What the generated function keeps from the signature.
pub struct Signature {
    /// Declarations of bindings, workgroup variables and built-ins, in order.
    pub decls: Vec<TokenStream>,
    /// Plain Rust parameters, kept as the generated function's parameters.
    pub rust_params: Vec<syn::FnArg>,
    /// The bindings (uniform and storage parameters), in order.
    pub bindings: Vec<Binding>,
}

/// A binding parameter, for the typed interface.
pub struct Binding {
    /// The parameter's name.
    pub ident: syn::Ident,
    /// The parameter's span.
    pub span: proc_macro2::Span,
    /// `#[uniform]`.
    pub uniform: bool,
    /// `#[storage(read_write)]`.
    pub writable: bool,
    /// The DSL store type (`::wgsl_dsl::types::RuntimeArray<f32>` for `&[f32]`); for a
    /// texture, its type as written (`Texture2d<f32>`, `StorageTexture2d<R32Float, WriteOnly>`).
    pub store: TokenStream,
    /// `#[texture]`.
    pub texture: bool,
}

enum Kind {
    Uniform,
    Texture,
    Storage(Option<bool>),
    Workgroup,
    Builtin(syn::Ident),
}

fn param_kind(ctx: &mut Ctx, pt: &syn::PatType) -> Option<Kind> {
    let mut kind = None;
    for attr in &pt.attrs {
        let path = attr.path();
        let k = if path.is_ident("uniform") {
            if !matches!(attr.meta, syn::Meta::Path(_)) {
                ctx.err(attr.span(), "`#[uniform]` takes no arguments");
            }
            Kind::Uniform
        } else if path.is_ident("workgroup") {
            Kind::Workgroup
        } else if path.is_ident("texture") {
            if !matches!(attr.meta, syn::Meta::Path(_)) {
                ctx.err(
                    attr.span(),
                    "`#[texture]` takes no arguments: the type says which texture (`Texture2d<f32>`, `StorageTexture2d<Rgba8Unorm, WriteOnly>`)",
                );
            }
            Kind::Texture
        } else if path.is_ident("storage") {
            match &attr.meta {
                syn::Meta::Path(_) => Kind::Storage(None),
                _ => match attr.parse_args::<syn::Ident>() {
                    Ok(id) if id == "read" => Kind::Storage(Some(false)),
                    Ok(id) if id == "read_write" => Kind::Storage(Some(true)),
                    Ok(id) => {
                        ctx.err(
                            id.span(),
                            "expected `#[storage(read)]` or `#[storage(read_write)]`",
                        );
                        Kind::Storage(None)
                    }
                    Err(e) => {
                        ctx.errs.add(e);
                        Kind::Storage(None)
                    }
                },
            }
        } else if path.is_ident("builtin") {
            match attr.parse_args::<syn::Ident>() {
                Ok(id) => {
                    if !BUILTIN_VALUES.contains(&id.to_string().as_str()) {
                        ctx.err(
                            id.span(),
                            format!(
                                "unknown built-in value `{id}`; expected one of: {}",
                                BUILTIN_VALUES.join(", ")
                            ),
                        );
                    }
                    Kind::Builtin(id)
                }
                Err(e) => {
                    ctx.errs.add(e);
                    return None;
                }
            }
        } else {
            ctx.err(
                attr.span(),
                "unknown parameter attribute; expected `#[uniform]`, `#[storage(read)]`, `#[storage(read_write)]`, `#[texture]`, `#[workgroup]` or `#[builtin(name)]`",
            );
            continue;
        };
        if kind.is_some() {
            ctx.err(
                attr.span(),
                "a parameter takes one of `#[uniform]`, `#[storage]`, `#[texture]`, `#[workgroup]`, `#[builtin]`",
            );
        }
        kind = Some(k);
    }
    kind
}

/// Parse the kernel's parameters, declaring their names in `ctx`.
pub fn kernel_params(ctx: &mut Ctx, sig: &syn::Signature) -> Signature {
    let k = ctx.k.clone();
    let mut decls = Vec::new();
    let mut rust_params = Vec::new();
    let mut bindings = Vec::new();
    for arg in &sig.inputs {
        let syn::FnArg::Typed(pt) = arg else {
            ctx.err(arg.span(), "kernels take no `self`");
            continue;
        };
        let ident = match &*pt.pat {
            syn::Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => pi.ident.clone(),
            p => {
                ctx.err(p.span(), "kernel parameters are plain names");
                continue;
            }
        };
        let name = ident.to_string();
        let span = pt.span();
        let ty = &*pt.ty;
        match param_kind(ctx, pt) {
            None => {
                let mut plain = pt.clone();
                plain.attrs.clear();
                rust_params.push(syn::FnArg::Typed(plain));
                ctx.declare(&ident, Cat::Rust);
            }
            Some(Kind::Uniform) => {
                if let syn::Type::Reference(r) = ty {
                    ctx.err(
                        r.and_token.span(),
                        "a `#[uniform]` parameter is written by value: `p: Params`",
                    );
                }
                let t = dsl_type(ty);
                ctx.read_only.insert(
                    name.clone(),
                    format!(
                        "cannot assign to `{name}`: it is a `#[uniform]` binding, which WGSL makes \
                         read-only; write results to a `#[storage(read_write)]` binding"
                    ),
                );
                decls.push(quote_spanned!(span=> let #ident = #k.uniform::<#t>(#name);));
                ctx.declare(&ident, Cat::Place);
                bindings.push(Binding {
                    ident: ident.clone(),
                    span,
                    uniform: true,
                    writable: false,
                    store: t,
                    texture: false,
                });
            }
            Some(Kind::Storage(access)) => {
                let syn::Type::Reference(r) = ty else {
                    ctx.err(ty.span(), "a `#[storage]` parameter is a reference: `&[T]` (read) or `&mut [T]` (read_write)");
                    continue;
                };
                let writable = r.mutability.is_some();
                match access {
                    Some(false) if writable => ctx.err(
                        r.span(),
                        "`#[storage(read)]` is a shared reference: write `&[T]`, or use `#[storage(read_write)]`",
                    ),
                    Some(true) if !writable => ctx.err(
                        r.span(),
                        "`#[storage(read_write)]` is a mutable reference: write `&mut [T]`",
                    ),
                    _ => {}
                }
                let t = dsl_type(&r.elem);
                if !writable {
                    let elem = tidy(&r.elem.to_token_stream().to_string());
                    ctx.read_only.insert(
                        name.clone(),
                        format!(
                            "cannot assign to `{name}`: it is a read-only storage binding; declare it \
                             writable: `#[storage(read_write)] {name}: &mut {elem}`"
                        ),
                    );
                }
                let access = if writable {
                    quote!(::wgsl_dsl::ReadWrite)
                } else {
                    quote!(::wgsl_dsl::ReadOnly)
                };
                decls.push(quote_spanned!(span=> let #ident = #k.storage::<#t, #access>(#name);));
                ctx.declare(&ident, Cat::Place);
                bindings.push(Binding {
                    ident: ident.clone(),
                    span,
                    uniform: false,
                    writable,
                    store: t,
                    texture: false,
                });
            }
            Some(Kind::Texture) => {
                if let syn::Type::Reference(r) = ty {
                    ctx.err(
                        r.and_token.span(),
                        "a `#[texture]` parameter is written by value: `src: Texture2d<f32>`, `out: StorageTexture2d<Rgba8Unorm, WriteOnly>`",
                    );
                }
                decls.push(quote_spanned!(span=> let #ident = #k.texture_binding::<#ty>(#name);));
                ctx.declare(&ident, Cat::Texture);
                bindings.push(Binding {
                    ident: ident.clone(),
                    span,
                    uniform: false,
                    writable: false,
                    store: quote!(#ty),
                    texture: true,
                });
            }
            Some(Kind::Workgroup) => {
                let syn::Type::Reference(r) = ty else {
                    ctx.err(
                        ty.span(),
                        "a `#[workgroup]` parameter is a mutable reference: `&mut [f32; 256]`",
                    );
                    continue;
                };
                if r.mutability.is_none() {
                    ctx.err(
                        r.span(),
                        "a `#[workgroup]` parameter is a mutable reference: `&mut [f32; 256]`",
                    );
                }
                let t = dsl_type(&r.elem);
                decls.push(quote_spanned!(span=> let #ident = #k.workgroup::<#t>(#name);));
                ctx.declare(&ident, Cat::Place);
            }
            Some(Kind::Builtin(b)) => {
                let t = dsl_type(ty);
                decls.push(quote_spanned!(span=> let #ident: ::wgsl_dsl::Exp<#t> = ::wgsl_dsl::kernel::#b();));
                ctx.declare(&ident, Cat::Value);
            }
        }
    }
    Signature {
        decls,
        rust_params,
        bindings,
    }
}

/// A type's tokens as written: `Vec4<f32>`, not `Vec4 < f32 >`.
fn tidy(tokens: &str) -> String {
    tokens
        .replace(" < ", "<")
        .replace("< ", "<")
        .replace(" >", ">")
        .replace(" ,", ",")
        .replace(" ;", ";")
}
