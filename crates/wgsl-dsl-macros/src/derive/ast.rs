//! Parse: the struct, its attributes, and each field's host type mapped to a WGSL type.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote};
use syn::spanned::Spanned;

use crate::errors::Errors;

/// The WGSL type a host field stands for.
#[derive(Clone, Debug)]
pub enum WTy {
    /// `f32`, `i32`, `u32`
    Scalar(&'static str),
    /// `vecN<S>`: host `[S; N]` with `#[wgsl(vec)]`.
    Vector(u8, &'static str),
    /// `matCxR<f32>`: host `[[f32; R]; C]` with `#[wgsl(mat)]`.
    Matrix(u8, u8),
    /// `array<E, N>`: host `[E; N]`.
    Array(Box<WTy>, syn::Expr),
    /// A nested `#[derive(WgslStruct)]` struct.
    Struct(syn::Path),
}

impl WTy {
    /// The DSL marker type (`::wgsl_dsl::types::...`) for this WGSL type.
    pub fn dsl_type(&self) -> TokenStream {
        match self {
            WTy::Scalar(s) => {
                let s = syn::Ident::new(s, Span::call_site());
                quote!(#s)
            }
            WTy::Vector(n, s) => {
                let s = syn::Ident::new(s, Span::call_site());
                let n = *n as usize;
                quote!(::wgsl_dsl::types::Vector<#s, #n>)
            }
            WTy::Matrix(c, r) => {
                let (c, r) = (*c as usize, *r as usize);
                quote!(::wgsl_dsl::types::Mat<#c, #r>)
            }
            WTy::Array(e, len) => {
                let e = e.dsl_type();
                match len {
                    syn::Expr::Lit(_) => quote!(::wgsl_dsl::types::Array<#e, #len>),
                    _ => quote!(::wgsl_dsl::types::Array<#e, { #len }>),
                }
            }
            WTy::Struct(p) => p.to_token_stream(),
        }
    }

    /// The WGSL spelling, for messages.
    pub fn wgsl_name(&self) -> String {
        match self {
            WTy::Scalar(s) => s.to_string(),
            WTy::Vector(n, s) => format!("vec{n}<{s}>"),
            WTy::Matrix(c, r) => format!("mat{c}x{r}<f32>"),
            WTy::Array(e, len) => format!("array<{}, {}>", e.wgsl_name(), len.to_token_stream()),
            WTy::Struct(p) => p.to_token_stream().to_string().replace(' ', ""),
        }
    }
}

/// One field of the struct.
#[derive(Debug)]
pub struct Field {
    pub ident: syn::Ident,
    pub wty: WTy,
    pub span: Span,
}

/// The parsed struct.
#[derive(Debug)]
pub struct Input {
    pub ident: syn::Ident,
    pub vis: syn::Visibility,
    pub uniform: bool,
    pub fields: Vec<Field>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Plain,
    Vec,
    Mat,
}

/// Parse the derive input, collecting every error.
pub fn parse(input: &syn::DeriveInput, errs: &mut Errors) -> Option<Input> {
    let mut uniform = false;
    let mut repr_c = false;
    for attr in &input.attrs {
        if attr.path().is_ident("repr") {
            let _ = attr.parse_nested_meta(|m| {
                if m.path.is_ident("C") {
                    repr_c = true;
                } else {
                    errs.push(m.path.span(), "#[derive(WgslStruct)] needs plain `#[repr(C)]`: other representations change the layout");
                }
                Ok(())
            });
        } else if attr.path().is_ident("wgsl") {
            let r = attr.parse_nested_meta(|m| {
                if m.path.is_ident("uniform") {
                    uniform = true;
                    Ok(())
                } else {
                    Err(m.error("unknown struct attribute; expected `#[wgsl(uniform)]`"))
                }
            });
            if let Err(e) = r {
                errs.add(e);
            }
        }
    }
    if !repr_c {
        errs.push(
            input.ident.span(),
            "#[derive(WgslStruct)] needs `#[repr(C)]` so that Rust lays the fields out in declaration order",
        );
    }
    if !input.generics.params.is_empty() {
        errs.push(
            input.generics.span(),
            "#[derive(WgslStruct)] does not support generic structs",
        );
    }
    let data = match &input.data {
        syn::Data::Struct(s) => s,
        _ => {
            errs.push(
                input.ident.span(),
                "#[derive(WgslStruct)] applies to structs with named fields",
            );
            return None;
        }
    };
    let named = match &data.fields {
        syn::Fields::Named(n) if !n.named.is_empty() => n,
        _ => {
            errs.push(
                input.ident.span(),
                "#[derive(WgslStruct)] needs a struct with at least one named field (WGSL structs have named members)",
            );
            return None;
        }
    };
    let mut fields = Vec::new();
    for f in &named.named {
        let ident = f.ident.clone().expect("named fields have identifiers");
        let mut mode = Mode::Plain;
        for attr in &f.attrs {
            if attr.path().is_ident("wgsl") {
                let r = attr.parse_nested_meta(|m| {
                    if m.path.is_ident("vec") {
                        mode = Mode::Vec;
                        Ok(())
                    } else if m.path.is_ident("mat") {
                        mode = Mode::Mat;
                        Ok(())
                    } else {
                        Err(m.error(
                            "unknown field attribute; expected `#[wgsl(vec)]` or `#[wgsl(mat)]`",
                        ))
                    }
                });
                if let Err(e) = r {
                    errs.add(e);
                }
            }
        }
        match map_ty(&f.ty, mode) {
            Ok(wty) => {
                if uniform && let Some(msg) = uniform_stride_error(&wty, &f.ty) {
                    errs.push(f.ty.span(), msg);
                }
                let span = ident.span();
                fields.push(Field { ident, wty, span })
            }
            Err(e) => errs.add(e),
        }
    }
    Some(Input {
        ident: input.ident.clone(),
        vis: input.vis.clone(),
        uniform,
        fields,
    })
}

fn scalar_name(ty: &syn::Type) -> Option<&'static str> {
    let syn::Type::Path(p) = ty else { return None };
    if p.qself.is_some() {
        return None;
    }
    let id = p.path.get_ident()?;
    ["f32", "i32", "u32"].into_iter().find(|s| id == s)
}

const HOST_TYPES: &str = "supported field types: `f32`, `i32`, `u32`, arrays `[T; N]` of supported types \
     (`array<T, N>`), `[S; 2|3|4]` with `#[wgsl(vec)]` (`vecN<S>`), `[[f32; R]; C]` with `#[wgsl(mat)]` \
     (`matCxR<f32>`), and structs deriving `WgslStruct`";

fn map_ty(ty: &syn::Type, mode: Mode) -> syn::Result<WTy> {
    if let Some(s) = scalar_name(ty) {
        if mode != Mode::Plain {
            return Err(syn::Error::new(
                ty.span(),
                "`#[wgsl(vec)]` / `#[wgsl(mat)]` apply to array types (`[f32; 4]`, `[[f32; 4]; 4]`)",
            ));
        }
        return Ok(WTy::Scalar(s));
    }
    match ty {
        syn::Type::Array(a) => {
            let elem = &*a.elem;
            let len = literal_len(&a.len);
            if mode == Mode::Vec
                && let Some(s) = scalar_name(elem)
            {
                return match len {
                    Some(n @ 2..=4) => Ok(WTy::Vector(n as u8, s)),
                    _ => Err(syn::Error::new(
                        a.len.span(),
                        "`#[wgsl(vec)]` needs a literal length 2, 3 or 4 (`vec2`, `vec3`, `vec4`)",
                    )),
                };
            }
            if mode == Mode::Mat
                && let syn::Type::Array(col) = elem
                && scalar_name(&col.elem).is_some()
            {
                if scalar_name(&col.elem) != Some("f32") {
                    return Err(syn::Error::new(
                        col.elem.span(),
                        "WGSL matrices hold `f32`: use `[[f32; R]; C]`",
                    ));
                }
                let (c, r) = (len, literal_len(&col.len));
                return match (c, r) {
                    (Some(c @ 2..=4), Some(3)) => Err(syn::Error::new(
                        col.span(),
                        format!(
                            "`mat{c}x3<f32>` pads each column to 16 bytes, so no `[[f32; 3]; {c}]` matches it: \
                             use `[[f32; 4]; {c}]` (`mat{c}x4<f32>`) and leave the 4th row unused"
                        ),
                    )),
                    (Some(c @ 2..=4), Some(r @ (2 | 4))) => Ok(WTy::Matrix(c as u8, r as u8)),
                    _ => Err(syn::Error::new(
                        ty.span(),
                        "`#[wgsl(mat)]` needs `[[f32; R]; C]` with literal C and R in 2..=4",
                    )),
                };
            }
            let e = map_ty(elem, mode)?;
            if let WTy::Vector(3, s) = e {
                return Err(syn::Error::new(
                    elem.span(),
                    format!(
                        "`array<vec3<{s}>, N>` has a stride of 16 bytes in WGSL but `[{s}; 3]` is 12 bytes: \
                         use `[{s}; 4]` (`vec4<{s}>`) elements and leave the 4th component unused"
                    ),
                ));
            }
            Ok(WTy::Array(Box::new(e), a.len.clone()))
        }
        syn::Type::Path(p)
            if p.qself.is_none() && p.path.segments.iter().all(|s| s.arguments.is_none()) =>
        {
            let last = &p.path.segments.last().expect("paths are non-empty").ident;
            let name = last.to_string();
            let msg = match name.as_str() {
                "bool" => {
                    Some("`bool` is not host-shareable in WGSL (spec §14.4): use `u32` (0 or 1)")
                }
                "f64" | "i64" | "u64" | "i8" | "u8" | "i16" | "u16" | "usize" | "isize"
                | "i128" | "u128" => Some("WGSL has no such scalar: use `f32`, `i32` or `u32`"),
                _ => None,
            };
            match msg {
                Some(m) => Err(syn::Error::new(ty.span(), m)),
                None if mode != Mode::Plain => Err(syn::Error::new(
                    ty.span(),
                    "`#[wgsl(vec)]` / `#[wgsl(mat)]` apply to array types",
                )),
                None => Ok(WTy::Struct(p.path.clone())),
            }
        }
        _ => Err(syn::Error::new(
            ty.span(),
            format!("unsupported field type for #[derive(WgslStruct)]; {HOST_TYPES}"),
        )),
    }
}

fn literal_len(e: &syn::Expr) -> Option<u64> {
    match e {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) => i.base10_parse().ok(),
        _ => None,
    }
}

/// WGSL spec §14.4.4: in the uniform address space an array's stride is a multiple of 16.
/// Known here for arrays of scalars, vectors and matrices; arrays of structs are checked in
/// `const` code.
fn uniform_stride_error(w: &WTy, ty: &syn::Type) -> Option<String> {
    let WTy::Array(e, len) = w else { return None };
    let stride = match &**e {
        WTy::Scalar(_) => 4,
        WTy::Vector(n, _) => {
            if *n == 2 {
                8
            } else {
                16
            }
        }
        WTy::Matrix(c, r) => *c as u32 * if *r == 2 { 8 } else { 16 },
        // The inner array's stride is checked first; if it is a multiple of 16, so is its size.
        WTy::Array(..) => return uniform_stride_error(e, ty),
        WTy::Struct(_) => return None,
    };
    if stride % 16 == 0 {
        return None;
    }
    let hint = match &**e {
        WTy::Scalar(s) => format!(
            ": use `[[{s}; 4]; {}]` with `#[wgsl(vec)]` (`array<vec4<{s}>, ..>`) and index it as `v[i / 4][i % 4]`",
            len_div4(len)
        ),
        _ => String::new(),
    };
    Some(format!(
        "in the uniform address space an array's element stride must be a multiple of 16 bytes \
         (WGSL spec §14.4.4), but `{}` has a stride of {stride}{hint}",
        ty.to_token_stream().to_string().replace(' ', "")
    ))
}

fn len_div4(len: &syn::Expr) -> String {
    match literal_len(len) {
        Some(n) => n.div_ceil(4).to_string(),
        None => format!("({}) / 4", len.to_token_stream()),
    }
}
