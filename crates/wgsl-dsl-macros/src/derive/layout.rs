//! WGSL memory layout (WGSL spec §14.4 "Memory Layout") as `const` expressions, folded to
//! numbers where the macro knows them, and the checks comparing it with Rust's `repr(C)`.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};

use super::ast::WTy;

/// A `usize`: known to the macro, or a `const` expression for the compiler.
#[derive(Clone, Debug)]
pub enum Num {
    Lit(u64),
    Expr(TokenStream),
}

impl Num {
    pub fn tokens(&self) -> TokenStream {
        match self {
            Num::Lit(n) => {
                let n = *n as usize;
                quote!(#n)
            }
            Num::Expr(e) => e.clone(),
        }
    }
    pub fn add(&self, o: &Num) -> Num {
        match (self, o) {
            (Num::Lit(a), Num::Lit(b)) => Num::Lit(a + b),
            _ => {
                let (a, b) = (self.tokens(), o.tokens());
                Num::Expr(quote!((#a + #b)))
            }
        }
    }
    pub fn mul(&self, o: &Num) -> Num {
        match (self, o) {
            (Num::Lit(a), Num::Lit(b)) => Num::Lit(a * b),
            _ => {
                let (a, b) = (self.tokens(), o.tokens());
                Num::Expr(quote!((#a * #b)))
            }
        }
    }
    /// `roundUp(align, self)` (WGSL spec §14.4.1).
    pub fn round_up(&self, align: &Num) -> Num {
        match (self, align) {
            (Num::Lit(a), Num::Lit(k)) => Num::Lit(a.div_ceil(*k) * k),
            _ => {
                let (a, k) = (self.tokens(), align.tokens());
                Num::Expr(quote!((usize::div_ceil(#a, #k) * #k)))
            }
        }
    }
    pub fn max(&self, o: &Num) -> Num {
        match (self, o) {
            (Num::Lit(a), Num::Lit(b)) => Num::Lit(*a.max(b)),
            _ => {
                let (a, b) = (self.tokens(), o.tokens());
                Num::Expr(quote!({
                    let (a, b) = (#a, #b);
                    if a > b { a } else { b }
                }))
            }
        }
    }
}

/// `AlignOf` and `SizeOf` of a WGSL type (WGSL spec §14.4.1, table "Alignment and size").
#[derive(Clone, Debug)]
pub struct Layout {
    pub align: Num,
    pub size: Num,
}

pub fn layout(w: &WTy) -> Layout {
    match w {
        WTy::Scalar(_) => Layout {
            align: Num::Lit(4),
            size: Num::Lit(4),
        },
        WTy::Vector(n, _) => Layout {
            align: Num::Lit(if *n == 2 { 8 } else { 16 }),
            size: Num::Lit(4 * *n as u64),
        },
        WTy::Matrix(c, r) => {
            let col = if *r == 2 { 8 } else { 16 };
            Layout {
                align: Num::Lit(col),
                size: Num::Lit(*c as u64 * col),
            }
        }
        WTy::Array(e, len) => {
            let el = layout(e);
            let stride = el.size.round_up(&el.align);
            let len = match len {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Int(i),
                    ..
                }) => i
                    .base10_parse()
                    .map(Num::Lit)
                    .unwrap_or_else(|_| Num::Expr(quote!((#len)))),
                _ => Num::Expr(quote!(((#len) as usize))),
            };
            Layout {
                align: el.align,
                size: len.mul(&stride),
            }
        }
        WTy::Struct(p) => Layout {
            align: Num::Expr(quote!(#p::__WGSL_ALIGN)),
            size: Num::Expr(quote!(#p::__WGSL_SIZE)),
        },
    }
}

/// Member offsets, struct alignment and size (WGSL spec §14.4.1: each member at the next
/// multiple of its alignment; the size rounded up to the struct's alignment).
pub struct StructLayout {
    pub offsets: Vec<Num>,
    pub align: Num,
    pub size: Num,
}

pub fn struct_layout(fields: &[&WTy]) -> StructLayout {
    let mut end = Num::Lit(0);
    let mut align = Num::Lit(1);
    let mut offsets = Vec::new();
    for w in fields {
        let l = layout(w);
        let off = end.round_up(&l.align);
        end = off.add(&l.size);
        align = align.max(&l.align);
        offsets.push(off);
    }
    StructLayout {
        offsets,
        size: end.round_up(&align),
        align,
    }
}

/// The Rust size of a field's host type when the macro knows it (`None` for nested structs and
/// named lengths). Host types hold only 4-byte scalars, so `repr(C)` adds no padding
/// (`bytemuck::Pod` also requires none) and a field's Rust offset is the sum of the sizes before it.
pub fn host_size(w: &WTy) -> Option<u64> {
    match w {
        WTy::Scalar(_) => Some(4),
        WTy::Vector(n, _) => Some(4 * *n as u64),
        WTy::Matrix(c, r) => Some(4 * *c as u64 * *r as u64),
        WTy::Array(
            e,
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(i),
                ..
            }),
        ) => Some(i.base10_parse::<u64>().ok()? * host_size(e)?),
        _ => None,
    }
}

/// The padding fields to suggest for `words` 4-byte words (separate `u32`s in uniform structs,
/// where an array of `u32` would break the 16-byte stride rule).
pub fn padding_fields(pad_name: &str, words: u64, uniform: bool) -> String {
    if uniform {
        (0..words)
            .map(|i| format!("{pad_name}{i}: u32"))
            .collect::<Vec<_>>()
            .join(", ")
    } else if words == 1 {
        format!("{pad_name}: u32")
    } else {
        format!("{pad_name}: [u32; {words}]")
    }
}

/// Panics (in `const` evaluation) when the Rust offset `rust` differs from the WGSL offset
/// `wgsl`; `msg(Some(words))` says which padding to add for a gap of 1 to 3 words,
/// `msg(None)` covers any other difference.
pub fn padding_check(
    rust: TokenStream,
    wgsl: TokenStream,
    msg: impl Fn(Option<u64>) -> String,
    span: Span,
) -> TokenStream {
    let lit = |s: String| syn::LitStr::new(&s, span);
    let (m1, m2, m3, other) = (
        lit(msg(Some(1))),
        lit(msg(Some(2))),
        lit(msg(Some(3))),
        lit(msg(None)),
    );
    quote_spanned! {span=>
        let rust: usize = #rust;
        let wgsl: usize = #wgsl;
        if rust != wgsl {
            if rust < wgsl {
                match (wgsl - rust) / 4 {
                    1 => ::core::panic!(#m1),
                    2 => ::core::panic!(#m2),
                    3 => ::core::panic!(#m3),
                    _ => ::core::panic!(#other),
                }
            } else {
                ::core::panic!(#other)
            }
        }
    }
}
