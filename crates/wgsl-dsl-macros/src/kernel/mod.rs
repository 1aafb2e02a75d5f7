//! `#[kernel]`: parse the attribute and the function -> translate the body (statements in
//! [`stmt`], expressions in [`expr`]) -> emit a function that builds the kernel.
//!
//! Any error (unsupported syntax, unknown built-in, ...) is reported with its span, all
//! together, and the function is replaced by a stub with the same signature so that callers do
//! not add a cascade of errors.

mod builtins;
mod ctx;
mod expr;
mod params;
mod stmt;

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote, quote_spanned};
use syn::spanned::Spanned;

use crate::errors::Errors;
use crate::interface::{
    ArgField, Generics, args_struct, camel_case, generic_args, mentions, with_runtime,
};
use ctx::{Cat, Ctx};
use params::dsl_type;

/// `#[kernel(...)]` arguments.
#[derive(Default)]
struct Args {
    workgroup_size: Option<syn::Expr>,
    name: Option<syn::LitStr>,
    helper: Option<Span>,
    /// `grid = |size: Size| [x, y, z]`: the workgroups for a problem size.
    grid: Option<syn::ExprClosure>,
    /// `def = Name`: the name of the generated definition (default: the function's name in
    /// CamelCase).
    def: Option<syn::Ident>,
    /// `differentiable`: also generate `<name>_backward`, the derived backward pass.
    differentiable: Option<Span>,
    /// `differentiable(no_diff(a, ..), accumulate(w = Atomic, ..))`: the `Derive` options,
    /// as calls chained on `Derive::new()` (each spanned at its name in the attribute).
    derive_options: Vec<TokenStream>,
    /// The bindings `differentiable(no_diff(..))` names.
    no_diff: Vec<String>,
}

fn parse_args(attr: TokenStream, errs: &mut Errors) -> Args {
    let mut args = Args::default();
    let parser = syn::meta::parser(|m| {
        if m.path.is_ident("workgroup_size") {
            args.workgroup_size = Some(m.value()?.parse()?);
        } else if m.path.is_ident("name") {
            args.name = Some(m.value()?.parse()?);
        } else if m.path.is_ident("helper") {
            args.helper = Some(m.path.span());
        } else if m.path.is_ident("grid") {
            args.grid = Some(m.value()?.parse()?);
        } else if m.path.is_ident("def") {
            args.def = Some(m.value()?.parse()?);
        } else if m.path.is_ident("differentiable") {
            args.differentiable = Some(m.path.span());
            if m.input.peek(syn::token::Paren) {
                let (options, no_diff) = (&mut args.derive_options, &mut args.no_diff);
                m.parse_nested_meta(|o| derive_option(&o, options, no_diff))?;
            }
        } else {
            return Err(m.error(
                "unknown `#[kernel]` argument; expected `workgroup_size = [x, y, z]`, `name = \"..\"`, `grid = |size: T| [x, y, z]`, `def = Name`, `differentiable` (or `differentiable(no_diff(..), accumulate(name = Atomic, ..))`) or `helper`",
            ));
        }
        Ok(())
    });
    if let Err(e) = syn::parse::Parser::parse2(parser, attr) {
        errs.add(e);
    }
    args
}

/// One option of `differentiable(..)`: `no_diff(a, b)` or `accumulate(w = Atomic, ..)`.
fn derive_option(
    o: &syn::meta::ParseNestedMeta<'_>,
    out: &mut Vec<TokenStream>,
    no_diff: &mut Vec<String>,
) -> syn::Result<()> {
    if o.path.is_ident("no_diff") {
        o.parse_nested_meta(|b| {
            let name = b.path.require_ident()?;
            let text = name.to_string();
            no_diff.push(text.clone());
            out.push(quote_spanned!(name.span()=> .no_diff(#text)));
            Ok(())
        })
    } else if o.path.is_ident("accumulate") {
        o.parse_nested_meta(|b| {
            let name = b.path.require_ident()?;
            let text = name.to_string();
            let scheme: syn::Ident = b.value()?.parse()?;
            if !["Exclusive", "Atomic", "Write"].contains(&scheme.to_string().as_str()) {
                return Err(syn::Error::new(
                    scheme.span(),
                    "expected an `Accumulation`: `Exclusive`, `Atomic` or `Write`",
                ));
            }
            out.push(quote_spanned!(name.span()=>
                .accumulate(#text, ::wgsl_dsl::autodiff::Accumulation::#scheme)));
            Ok(())
        })
    } else {
        Err(o.error(
            "unknown `differentiable` option; expected `no_diff(binding, ..)` or \
             `accumulate(binding = Exclusive | Atomic, ..)`",
        ))
    }
}

/// Expand `#[kernel(attr)] item`.
pub fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let f: syn::ItemFn = match syn::parse2(item) {
        Ok(f) => f,
        Err(e) => return e.to_compile_error(),
    };
    let mut errs = Errors::default();
    let args = parse_args(attr, &mut errs);
    check_signature(&f.sig, &mut errs);
    let (out, ctx_errs) = if args.helper.is_some() {
        let kernel_only = [
            (
                args.workgroup_size.as_ref().map(|w| w.span()),
                "a workgroup size",
            ),
            (args.grid.as_ref().map(|g| g.span()), "a grid"),
            (args.def.as_ref().map(|d| d.span()), "a typed interface"),
            (args.differentiable, "derived backward pass of its own"),
        ];
        for (span, what) in kernel_only {
            if let Some(span) = span {
                errs.push(span, format!("a helper function has no {what}"));
            }
        }
        expand_helper(&f)
    } else {
        expand_kernel(&f, &args)
    };
    errs.extend(ctx_errs);
    match errs.finish() {
        Some(e) => {
            let stub = stub(&f, args.helper.is_some());
            quote!(#e #stub)
        }
        None => out,
    }
}

fn check_signature(sig: &syn::Signature, errs: &mut Errors) {
    if let Some(a) = &sig.asyncness {
        errs.push(a.span(), "kernels cannot be `async`");
    }
    if let Some(u) = &sig.unsafety {
        errs.push(u.span(), "kernels cannot be `unsafe`");
    }
    if let Some(v) = &sig.variadic {
        errs.push(v.span(), "kernels cannot be variadic");
    }
}

/// The generated kernel function: `fn name(<rust params>) -> ::wgsl_dsl::KernelBuilder`.
fn expand_kernel(f: &syn::ItemFn, args: &Args) -> (TokenStream, Errors) {
    let mut ctx = Ctx::new(None);
    if let syn::ReturnType::Type(arrow, _) = &f.sig.output {
        ctx.err(
            arrow.span(),
            "a kernel returns nothing: it writes its results to storage buffers",
        );
    }
    let sig = params::kernel_params(&mut ctx, &f.sig);
    let body = ctx.block(&f.block, None);
    let k = ctx.k.clone();
    let helpers = helper_registrations(&ctx);
    let decls = &sig.decls;
    let name = kernel_name(f, args, &mut ctx).to_token_stream();
    let size = match &args.workgroup_size {
        None => {
            ctx.err(
                Span::call_site(),
                "missing workgroup size: `#[kernel(workgroup_size = [64, 1, 1])]`",
            );
            quote!([1, 1, 1])
        }
        Some(syn::Expr::Array(a)) if a.elems.len() == 3 => quote!(#a),
        Some(syn::Expr::Array(a)) => {
            let mut e = a.elems.iter();
            match (e.next(), e.next(), e.next()) {
                (Some(x), None, _) => quote!([#x, 1, 1]),
                (Some(x), Some(y), None) => quote!([#x, #y, 1]),
                _ => {
                    ctx.err(a.span(), "a workgroup size has 1 to 3 dimensions");
                    quote!([1, 1, 1])
                }
            }
        }
        Some(e) => quote!([#e, 1, 1]),
    };
    let attrs = &f.attrs;
    let vis = &f.vis;
    let ident = &f.sig.ident;
    let generics = &f.sig.generics;
    let where_clause = &f.sig.generics.where_clause;
    let rust_params = &sig.rust_params;
    let interface = typed_interface(f, args, &sig, &size, &mut ctx);
    let backward = args
        .differentiable
        .map(|span| backward_fn(f, &sig, span, &args.derive_options))
        .unwrap_or_default();
    let typed_backward = args
        .differentiable
        .map(|_| typed_backward(f, args, &sig))
        .unwrap_or_default();
    let doc_span = f.sig.ident.span();
    // Mixed-site, as every local the expansion declares: a parameter of the same name is
    // another variable.
    let kernel = syn::Ident::new("__kernel", Span::mixed_site());
    let out = quote_spanned! {doc_span=>
        #(#attrs)*
        #[must_use = "build the kernel with `.build()`"]
        #vis fn #ident #generics (#(#rust_params),*) -> ::wgsl_dsl::KernelBuilder #where_clause {
            let mut #kernel = ::wgsl_dsl::KernelBuilder::new(#name, #size);
            {
                let #k = &mut #kernel;
                #(#helpers)*
                #(#decls)*
                #body
            }
            #kernel
        }
        #interface
        #backward
        #typed_backward
    };
    (out, ctx.errs)
}

/// `#[kernel(differentiable)]`'s typed backward interface (for a kernel without generic
/// parameters or textures): the argument struct `NameBackwardArgs<'a>` (every binding of the
/// forward kernel by name, borrowed read-only; then `d_<output>` for each `&mut [f32]`
/// binding, the incoming gradient, and `d_<input>` for each `&[f32]` binding, the gradient the
/// pass adds into; bindings named in `no_diff` have neither), its `BackwardArgs` impl, and
/// `DifferentiableDef` for the definition `Name`. The inputs and outputs are `derive`'s
/// defaults (`array<f32>` read-only and read-write); the pass's roles are matched against
/// the fields when it is dispatched.
fn typed_backward(f: &syn::ItemFn, args: &Args, sig: &params::Signature) -> TokenStream {
    if !f.sig.generics.params.is_empty() || sig.bindings.iter().any(|b| b.texture) {
        return TokenStream::new();
    }
    let ident = &f.sig.ident;
    let vis = &f.vis;
    let def = def_ident(f, args);
    let args_ident = syn::Ident::new(&format!("{def}BackwardArgs"), ident.span());
    let backward_fn = syn::Ident::new(&format!("{ident}_backward"), ident.span());
    let floats = |b: &params::Binding| {
        !b.uniform
            && !args.no_diff.contains(&b.ident.to_string())
            && b.store.to_string().replace(' ', "") == "::wgsl_dsl::types::RuntimeArray<f32>"
    };
    let mut fields = Vec::new();
    let mut data_arms = Vec::new();
    let mut output_arms = Vec::new();
    let mut input_arms = Vec::new();
    for b in &sig.bindings {
        let (name, store, span) = (&b.ident, &b.store, b.span);
        let text = name.to_string();
        let doc = format!("The forward kernel's binding `{text}`, as it was dispatched.");
        fields.push(quote_spanned!(span=>
            #[doc = #doc]
            pub #name: &'a ::wgsl_dsl::runtime::GpuBuffer<
                <#store as ::wgsl_dsl::types::HostShareable>::Host>
        ));
        data_arms.push(quote!(#text => ::core::option::Option::Some(self.#name),));
    }
    for b in sig.bindings.iter().filter(|b| floats(b)) {
        let text = b.ident.to_string();
        let d = syn::Ident::new(&format!("d_{text}"), b.span);
        if b.writable {
            let doc = format!(
                "The incoming gradient of the output `{text}` (dL/d{text}, of its length)."
            );
            fields.push(quote_spanned!(b.span=>
                #[doc = #doc]
                pub #d: &'a ::wgsl_dsl::runtime::GpuBuffer<f32>
            ));
            output_arms.push(quote!(#text => ::core::option::Option::Some(self.#d),));
        } else {
            let doc = format!(
                "The gradient of the input `{text}` (dL/d{text}, of its length), which the pass \
                 adds into: zero it for a fresh gradient."
            );
            fields.push(quote_spanned!(b.span=>
                #[doc = #doc]
                pub #d: &'a mut ::wgsl_dsl::runtime::GpuBuffer<f32>
            ));
            input_arms.push(quote!(#text => ::core::option::Option::Some(&*self.#d),));
        }
    }
    let names: Vec<&syn::Ident> = plain_params(sig).into_iter().map(|(i, _)| i).collect();
    let kernel_name = entry_name(f, args);
    let doc = format!(
        "The arguments of kernel `{kernel_name}`'s backward pass ([`{def}`], \
         `Gpu::compile_backward`): the forward kernel's bindings, the outputs' incoming \
         gradients `d_<output>` and the inputs' gradients `d_<input>` (added into). Generated \
         by `#[kernel(differentiable)]`."
    );
    let binding = syn::Ident::new("binding", Span::mixed_site());
    let items = quote! {
        #[doc = #doc]
        #[derive(Debug)]
        #vis struct #args_ident<'a> {
            #(#fields,)*
        }

        impl ::wgsl_dsl::runtime::BackwardArgs for #args_ident<'_> {
            fn data(&self, #binding: &str)
                -> ::core::option::Option<&dyn ::wgsl_dsl::runtime::BindArg>
            {
                match #binding {
                    #(#data_arms)*
                    _ => ::core::option::Option::None,
                }
            }
            fn output_gradient(&self, #binding: &str)
                -> ::core::option::Option<&dyn ::wgsl_dsl::runtime::BindArg>
            {
                match #binding {
                    #(#output_arms)*
                    _ => ::core::option::Option::None,
                }
            }
            fn input_gradient(&self, #binding: &str)
                -> ::core::option::Option<&::wgsl_dsl::runtime::GpuBuffer<f32>>
            {
                match #binding {
                    #(#input_arms)*
                    _ => ::core::option::Option::None,
                }
            }
        }

        impl ::wgsl_dsl::runtime::DifferentiableDef for #def {
            type BackwardArgs<'a> = #args_ident<'a>;
            fn backward(&self)
                -> ::core::result::Result<::wgsl_dsl::autodiff::Backward, ::wgsl_dsl::BuildError>
            {
                #backward_fn(#(::core::clone::Clone::clone(&self.#names)),*)
            }
        }
    };
    with_runtime(items)
}

/// `#[kernel(differentiable)]`: `fn <name>_backward(<rust params>)`, the kernel's derived
/// backward pass (`wgsl_dsl::autodiff::derive` with the default `Derive`, or the options of
/// `differentiable(no_diff(..), accumulate(..))`).
fn backward_fn(
    f: &syn::ItemFn,
    sig: &params::Signature,
    span: Span,
    options: &[TokenStream],
) -> TokenStream {
    let ident = &f.sig.ident;
    let vis = &f.vis;
    let backward = syn::Ident::new(&format!("{ident}_backward"), ident.span());
    let generics = &f.sig.generics;
    let (_, ty_generics, where_clause) = generics.split_for_impl();
    let turbofish = ty_generics.as_turbofish();
    let rust_params = &sig.rust_params;
    let names: Vec<&syn::Ident> = plain_params(sig).into_iter().map(|(i, _)| i).collect();
    // Mixed-site: a parameter of the same name is another variable.
    let local = syn::Ident::new("__derive_options", Span::mixed_site());
    let doc = format!(
        "The backward pass of kernel [`{ident}`], derived (`#[kernel(differentiable)]`): \
         `wgsl_dsl::autodiff::derive` with the `Derive` of its attribute (by default read-only float buffers are \
         the inputs, float buffers the kernel writes the outputs)."
    );
    quote_spanned! {span=>
        #[doc = #doc]
        ///
        /// # Errors
        /// `BuildError::NotDifferentiable` at what cannot be derived (see
        /// `wgsl_dsl::autodiff::derive`).
        #[track_caller]
        #vis fn #backward #generics (#(#rust_params),*)
            -> ::core::result::Result<::wgsl_dsl::autodiff::Backward, ::wgsl_dsl::BuildError>
            #where_clause
        {
            // Built in a closure (not `track_caller`): an option's error names its line in
            // the attribute, not the caller of this function.
            #[allow(clippy::redundant_closure, clippy::redundant_closure_call)]
            let #local = (|| ::wgsl_dsl::autodiff::Derive::new() #(#options)*)();
            ::wgsl_dsl::autodiff::derive(&#ident #turbofish (#(#names),*), &#local)
        }
    }
}

/// The kernel definition's type: `def = Name`, else the function's name in CamelCase.
fn def_ident(f: &syn::ItemFn, args: &Args) -> syn::Ident {
    let ident = &f.sig.ident;
    args.def
        .clone()
        .unwrap_or_else(|| syn::Ident::new(&camel_case(&ident.to_string()), ident.span()))
}

/// The entry point's name as the docs give it: `name = ".."`, else the function's.
fn entry_name(f: &syn::ItemFn, args: &Args) -> String {
    args.name
        .as_ref()
        .map(|n| n.value())
        .unwrap_or_else(|| f.sig.ident.to_string())
}

/// The plain Rust parameters (those baked into the kernel, not bindings), by name and type.
fn plain_params(sig: &params::Signature) -> Vec<(&syn::Ident, &syn::Type)> {
    sig.rust_params
        .iter()
        .filter_map(|p| match p {
            syn::FnArg::Typed(pt) => match &*pt.pat {
                syn::Pat::Ident(pi) => Some((&pi.ident, &*pt.ty)),
                _ => None,
            },
            syn::FnArg::Receiver(_) => None,
        })
        .collect()
}

/// The entry point's name (`name = ".."`, else the function's), checked at compile time: an
/// identifier of ASCII letters, digits and `_`. Any such name works (naga's WGSL writer appends
/// `_` where WGSL needs it, and the signature says so); others are errors here, at the name.
fn kernel_name(f: &syn::ItemFn, args: &Args, ctx: &mut Ctx) -> String {
    use syn::ext::IdentExt;
    let (name, span, what) = match &args.name {
        Some(lit) => (lit.value(), lit.span(), "the kernel name"),
        None => (
            f.sig.ident.unraw().to_string(),
            f.sig.ident.span(),
            "the kernel's name",
        ),
    };
    let mut chars = name.chars();
    let valid = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && name != "_";
    if !valid {
        ctx.err(
            span,
            format!(
                "{what} `{name}` cannot name a WGSL entry point: use ASCII letters, digits and \
                 `_`, not starting with a digit (or give `#[kernel(name = \"..\")]`)"
            ),
        );
    }
    name
}

/// The kernel's typed interface: the definition `Name` (the plain Rust parameters as fields,
/// `KernelDef`) and the argument struct `NameArgs<'a>` (one field per binding). None for a
/// kernel with type or lifetime parameters.
fn typed_interface(
    f: &syn::ItemFn,
    args: &Args,
    sig: &params::Signature,
    workgroup_size: &TokenStream,
    ctx: &mut Ctx,
) -> TokenStream {
    let generics = &f.sig.generics;
    if generics
        .params
        .iter()
        .any(|p| !matches!(p, syn::GenericParam::Const(_)))
    {
        return TokenStream::new();
    }
    let ident = &f.sig.ident;
    let vis = &f.vis;
    let def = def_ident(f, args);
    let base = def.to_string();
    let args_ident = syn::Ident::new(&format!("{base}Args"), ident.span());
    // The argument struct carries the const parameters its binding types mention.
    let mut args_generics = generics.clone();
    args_generics.params = generics
        .params
        .iter()
        .filter(|p| match p {
            syn::GenericParam::Const(c) => {
                sig.bindings.iter().any(|b| mentions(&b.store, &c.ident))
            }
            _ => false,
        })
        .cloned()
        .collect();
    args_generics.where_clause = None;
    let names = Generics::avoiding(&f.sig.to_token_stream());
    let fields: Vec<ArgField> = sig
        .bindings
        .iter()
        .map(|b| {
            let (name, store, span) = (b.ident.to_string(), &b.store, b.span);
            if b.texture {
                let (ty, bind) = names.texture_field(store, span);
                return ArgField {
                    ident: b.ident.clone(),
                    span,
                    ty,
                    binding: quote_spanned!(span=>
                        ::wgsl_dsl::runtime::ArgBinding::texture::<#store>(#name)),
                    bind: Some(bind),
                };
            }
            let host = quote_spanned!(span=> <#store as ::wgsl_dsl::types::HostShareable>::Host);
            let ty = names.buffer_field(host, b.writable, span);
            let access = if b.writable {
                quote!(::wgsl_dsl::ReadWrite)
            } else {
                quote!(::wgsl_dsl::ReadOnly)
            };
            let uniform = b.uniform;
            ArgField {
                ident: b.ident.clone(),
                span,
                ty,
                binding: quote_spanned!(span=>
                    ::wgsl_dsl::runtime::ArgBinding::of::<#store, #access>(#name, #uniform)),
                bind: None,
            }
        })
        .collect();
    let kernel_name = entry_name(f, args);
    let args_doc = format!(
        "The arguments of kernel `{kernel_name}` ([`{def}`]), one field per binding in binding \
         order (generated by `#[kernel]`)."
    );
    let args_struct = args_struct(vis, &args_ident, &args_generics, &names, &fields, &args_doc);
    let args_ty_generics = generic_args(&args_generics);
    let lifetime = (!fields.is_empty()).then(|| quote!('a,));
    let args_ty = quote!(#args_ident<#lifetime #args_ty_generics>);

    // The definition: the plain parameters as public fields.
    let plain = plain_params(sig);
    let field_decls = plain.iter().map(|(i, t)| {
        let doc = format!("The kernel's parameter `{i}`, baked into its WGSL.");
        quote!(#[doc = #doc] pub #i: #t)
    });
    let body = if plain.is_empty() {
        quote!(;)
    } else {
        quote!({ #(#field_decls,)* })
    };
    let names: Vec<&syn::Ident> = plain.iter().map(|(i, _)| *i).collect();
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();
    let turbofish = ty_generics.as_turbofish();
    // The problem size: mixed-site, so that a plain parameter named `size` (bound below for
    // the grid's use) is another variable.
    let size = syn::Ident::new("size", Span::mixed_site());
    let (size_ty, grid) = match &args.grid {
        None => (
            quote!([u32; 3]),
            quote!(::wgsl_dsl::runtime::workgroups_covering(#size, #workgroup_size)),
        ),
        Some(closure) => match (closure.inputs.len(), closure.inputs.first()) {
            (1, Some(syn::Pat::Type(pt))) => {
                let (pat, ty, body) = (&pt.pat, &pt.ty, &closure.body);
                (quote!(#ty), quote!({ let #pat: #ty = #size; #body }))
            }
            _ => {
                ctx.err(
                    closure.or1_token.span,
                    "`grid` takes a closure of one parameter with its type: `|len: usize| [x, y, z]`",
                );
                (quote!(()), quote!([1, 1, 1]))
            }
        },
    };
    let def_doc = format!(
        "Kernel `{kernel_name}` with its typed interface: arguments [`{args_ident}`], problem \
         size `{}` (generated by `#[kernel]` from [`{ident}`]).",
        size_ty.to_string().replace(' ', "")
    );
    let def_name = def.to_string();
    let formatter = syn::Ident::new("f", Span::mixed_site());
    let items = quote! {
        #[doc = #def_doc]
        #[derive(Clone)]
        #vis struct #def #generics #where_clause #body

        impl #impl_generics ::core::fmt::Debug for #def #ty_generics #where_clause {
            fn fmt(&self, #formatter: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                #formatter.write_str(#def_name)
            }
        }

        impl #impl_generics ::wgsl_dsl::runtime::KernelDef for #def #ty_generics #where_clause {
            type Args<'a> = #args_ty;
            type Size = #size_ty;
            fn build(&self) -> ::wgsl_dsl::KernelBuilder {
                #ident #turbofish (#(::core::clone::Clone::clone(&self.#names)),*)
            }
            #[allow(unused_variables)]
            fn workgroups(&self, #size: Self::Size) -> [u32; 3] {
                #(let #names = ::core::clone::Clone::clone(&self.#names);)*
                #grid
            }
        }

        #args_struct
    };
    with_runtime(items)
}

fn helper_registrations(ctx: &Ctx) -> Vec<TokenStream> {
    let k = &ctx.k;
    ctx.helpers
        .iter()
        .map(|h| {
            let (var, path) = (&h.var, &h.path);
            quote_spanned!(path.span()=> let #var = #path(#k);)
        })
        .collect()
}

/// The parameter types of a helper as DSL types, and its result type.
fn helper_types(
    f: &syn::ItemFn,
    ctx: &mut Ctx,
) -> (Vec<syn::Ident>, Vec<TokenStream>, TokenStream) {
    let mut names = Vec::new();
    let mut types = Vec::new();
    for arg in &f.sig.inputs {
        match arg {
            syn::FnArg::Typed(pt) => {
                if let Some(a) = pt.attrs.first() {
                    ctx.err(
                        a.span(),
                        "helper function parameters are values: no attributes",
                    );
                }
                match &*pt.pat {
                    syn::Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => {
                        names.push(pi.ident.clone())
                    }
                    p => ctx.err(p.span(), "helper parameters are plain names"),
                }
                types.push(dsl_type(&pt.ty));
            }
            syn::FnArg::Receiver(r) => ctx.err(r.span(), "helper functions take no `self`"),
        }
    }
    if names.is_empty() || names.len() > 6 {
        ctx.err(
            f.sig.paren_token.span.join(),
            "helper functions take 1 to 6 parameters (wgsl-dsl `FnArgs`)",
        );
    }
    let result = match &f.sig.output {
        syn::ReturnType::Type(_, t) => dsl_type(t),
        syn::ReturnType::Default => {
            ctx.err(
                f.sig.ident.span(),
                "helper functions return a value (`-> f32`): wgsl-dsl has no functions without a result",
            );
            quote!(())
        }
    };
    (names, types, result)
}

/// `#[kernel(helper)] fn f(a: A, ..) -> R { .. }` becomes
/// `fn f(k: &mut KernelBuilder) -> Function<(A, ..), R>`, which defines the WGSL function in `k`.
fn expand_helper(f: &syn::ItemFn) -> (TokenStream, Errors) {
    let mut ctx = Ctx::new(Some(f.sig.ident.to_string()));
    let (names, types, result) = helper_types(f, &mut ctx);
    for n in &names {
        ctx.declare(n, Cat::Value);
    }
    let mut tail = None;
    let body = ctx.block(&f.block, Some(&mut tail));
    let tail = match tail {
        Some(t) => t,
        None => {
            ctx.err(
                f.block.brace_token.span.close(),
                "a helper function ends with its result: an expression or `return value;`",
            );
            quote!(())
        }
    };
    let k = ctx.k.clone();
    let helpers = helper_registrations(&ctx);
    let name = f.sig.ident.to_string();
    let names_str: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    let attrs = &f.attrs;
    let vis = &f.vis;
    let ident = &f.sig.ident;
    let out = quote! {
        #(#attrs)*
        #vis fn #ident(#k: &mut ::wgsl_dsl::KernelBuilder) -> ::wgsl_dsl::Function<(#(#types,)*), #result> {
            #(#helpers)*
            #k.function::<(#(#types,)*), #result>(#name, [#(#names_str),*], |#k, (#(#names,)*)| {
                #body
                #tail
            })
        }
    };
    (out, ctx.errs)
}

/// After an error: the same signature with an unreachable body, so uses of the kernel do not
/// add errors of their own.
fn stub(f: &syn::ItemFn, helper: bool) -> TokenStream {
    let vis = &f.vis;
    let ident = &f.sig.ident;
    let attrs = &f.attrs;
    if helper {
        let mut ctx = Ctx::new(None);
        let (_, types, result) = helper_types(f, &mut ctx);
        quote! {
            #(#attrs)*
            #[allow(unused_variables)]
            #vis fn #ident(_: &mut ::wgsl_dsl::KernelBuilder) -> ::wgsl_dsl::Function<(#(#types,)*), #result> {
                ::core::unreachable!("#[kernel] reported an error")
            }
        }
    } else {
        let generics = &f.sig.generics;
        let where_clause = &f.sig.generics.where_clause;
        let plain: Vec<syn::FnArg> = f
            .sig
            .inputs
            .iter()
            .filter_map(|a| match a {
                syn::FnArg::Typed(pt) if pt.attrs.is_empty() => Some(a.clone()),
                _ => None,
            })
            .collect();
        quote! {
            #(#attrs)*
            #[allow(unused_variables)]
            #vis fn #ident #generics (#(#plain),*) -> ::wgsl_dsl::KernelBuilder #where_clause {
                ::core::unreachable!("#[kernel] reported an error")
            }
        }
    }
}
