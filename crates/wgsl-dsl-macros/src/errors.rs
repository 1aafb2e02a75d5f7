//! Several spanned errors reported together (like serde_derive's `Ctxt`).

use proc_macro2::{Span, TokenStream};

/// Collects `syn::Error`s; [`Errors::finish`] combines them into one.
#[derive(Default, Debug)]
pub struct Errors(Option<syn::Error>);

impl Errors {
    /// Record an error at `span`.
    pub fn push(&mut self, span: Span, msg: impl std::fmt::Display) {
        self.add(syn::Error::new(span, msg));
    }

    /// Record an error.
    pub fn add(&mut self, e: syn::Error) {
        match &mut self.0 {
            Some(all) => all.combine(e),
            None => self.0 = Some(e),
        }
    }

    /// Record all of `other`'s errors.
    pub fn extend(&mut self, other: Errors) {
        if let Some(e) = other.0 {
            self.add(e);
        }
    }

    /// The combined errors as `compile_error!` invocations, if any.
    pub fn finish(self) -> Option<TokenStream> {
        self.0.map(|e| e.to_compile_error())
    }
}
