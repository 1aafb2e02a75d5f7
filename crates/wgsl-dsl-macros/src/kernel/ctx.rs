//! Translation state: the names in scope and what they are, collected errors, helper
//! functions called, temporaries.

use std::collections::HashMap;

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, format_ident};

use crate::errors::Errors;

/// What a name or an expression is, in the generated code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cat {
    /// A `Place<T, A>`: a binding, a `var`, a workgroup variable, or an element or member of
    /// one. Read with `.load()`, written with `store`.
    Place,
    /// An `Exp<T>`: a `let`, a built-in value, a loop counter, a helper parameter, a computed
    /// value.
    Value,
    /// A plain Rust value (a literal, a `const`, a kernel argument baked into the WGSL).
    Rust,
    /// A texture binding (`#[texture]`): a `Texture2d<T>` or `StorageTexture2d<F, A>`, used
    /// through its methods `load`, `dimensions` and `store`.
    Texture,
}

/// A translated expression.
#[derive(Clone, Debug)]
pub struct Tr {
    pub cat: Cat,
    pub tokens: TokenStream,
    pub span: Span,
}

/// One helper function called from the body; registered once, before the body.
#[derive(Debug)]
pub struct HelperUse {
    pub key: String,
    pub path: syn::Path,
    pub var: syn::Ident,
}

#[derive(Debug)]
pub struct Ctx {
    pub errs: Errors,
    scopes: Vec<HashMap<String, Cat>>,
    /// The builder variable (`&mut KernelBuilder`), mixed-site so user names cannot clash.
    pub k: syn::Ident,
    tmp: usize,
    pub helpers: Vec<HelperUse>,
    /// The helper being translated (its own name, to reject recursion), if any.
    pub helper_name: Option<String>,
    /// The loops around the statement being translated, innermost last: `true` for an
    /// `#[unroll]` loop (expanded in Rust, so `break` / `continue` cannot leave it).
    pub loops: Vec<bool>,
    /// The name of the `let` whose value is being translated: an `if` or `match` value takes
    /// it for its `var` (or `let`).
    pub value_name: Option<String>,
    /// How many value blocks (`if` / `match` arms used as values) enclose the statement: a
    /// `return e;` ending one is not its value.
    pub in_value: usize,
    /// Read-only bindings (`#[storage(read)]`, `#[uniform]`): name -> how to make it writable.
    pub read_only: HashMap<String, String>,
}

impl Ctx {
    pub fn new(helper_name: Option<String>) -> Self {
        Ctx {
            errs: Errors::default(),
            scopes: vec![HashMap::new()],
            k: syn::Ident::new("__k", Span::mixed_site()),
            tmp: 0,
            helpers: Vec::new(),
            helper_name,
            loops: Vec::new(),
            value_name: None,
            in_value: 0,
            read_only: HashMap::new(),
        }
    }

    pub fn err(&mut self, span: Span, msg: impl std::fmt::Display) {
        self.errs.push(span, msg);
    }

    pub fn push_scope(&mut self) {
        self.scopes.push(HashMap::new());
    }

    pub fn pop_scope(&mut self) {
        self.scopes.pop();
    }

    pub fn declare(&mut self, name: &syn::Ident, cat: Cat) {
        self.scopes
            .last_mut()
            .expect("scope stack is never empty")
            .insert(name.to_string(), cat);
    }

    /// What `name` is; names not declared in the kernel are Rust values (consts, arguments).
    pub fn lookup(&self, name: &syn::Ident) -> Cat {
        let name = name.to_string();
        self.scopes
            .iter()
            .rev()
            .find_map(|s| s.get(&name).copied())
            .unwrap_or(Cat::Rust)
    }

    /// If assigning through `root` writes a read-only binding: what to say.
    pub fn read_only_binding(&self, root: &syn::Ident) -> Option<String> {
        let name = root.to_string();
        // The binding itself, not a `let mut` of the same name declared in the body.
        let depth = self.scopes.iter().rposition(|s| s.contains_key(&name))?;
        if depth != 0 {
            return None;
        }
        self.read_only.get(&name).cloned()
    }

    /// `Err(message)` if `break` / `continue` (`what`) cannot appear here.
    pub fn check_loop_exit(&self, what: &str) -> Result<(), String> {
        match self.loops.last() {
            None => Err(format!("`{what}` outside a loop")),
            Some(true) => Err(format!(
                "`{what}` in an `#[unroll]` loop: the loop is expanded when the kernel is built, \
                 so there is no loop to leave; use a runtime loop (no `#[unroll]`)"
            )),
            Some(false) => Ok(()),
        }
    }

    /// A fresh mixed-site temporary.
    pub fn temp(&mut self) -> syn::Ident {
        self.tmp += 1;
        syn::Ident::new(&format!("__t{}", self.tmp), Span::mixed_site())
    }

    /// The variable holding the registered helper `path`.
    pub fn helper(&mut self, path: &syn::Path) -> syn::Ident {
        let key = path.to_token_stream().to_string();
        if let Some(h) = self.helpers.iter().find(|h| h.key == key) {
            return h.var.clone();
        }
        let last = &path.segments.last().expect("paths are non-empty").ident;
        let var = format_ident!("__fn_{}", last, span = Span::mixed_site());
        let var = if self.helpers.iter().any(|h| h.var == var) {
            format_ident!(
                "__fn_{}_{}",
                last,
                self.helpers.len(),
                span = Span::mixed_site()
            )
        } else {
            var
        };
        self.helpers.push(HelperUse {
            key,
            path: path.clone(),
            var: var.clone(),
        });
        var
    }
}
