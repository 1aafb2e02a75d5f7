//! Statements and blocks: Rust syntax -> `KernelBuilder` calls.
//!
//! Blocks of `if` and loops become closures `|__k| { ... }` that receive the builder; names
//! declared inside are scoped as in Rust (and WGSL).

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote, quote_spanned};
use syn::spanned::Spanned;

use super::ctx::{Cat, Ctx, Tr};
use super::expr::{paren, place_root};

impl Ctx {
    /// A block's statements, in a new scope. `tail` receives the tail expression of a helper's
    /// body (its result); elsewhere a tail expression must be a statement.
    pub fn block(&mut self, b: &syn::Block, tail: Option<&mut Option<TokenStream>>) -> TokenStream {
        self.push_scope();
        let mut out = TokenStream::new();
        let n = b.stmts.len();
        let mut tail = tail;
        for (i, s) in b.stmts.iter().enumerate() {
            let last = i + 1 == n;
            match s {
                syn::Stmt::Expr(e, None) if last && tail.is_some() && is_value_expr(e) => {
                    let mut pre = Vec::new();
                    let t = self.expr(e, &mut pre);
                    let v = self.val(&t);
                    out.extend(pre);
                    **tail.as_mut().expect("checked") = Some(v);
                }
                syn::Stmt::Expr(syn::Expr::Return(r), _)
                    if last && tail.is_some() && self.in_value == 0 =>
                {
                    match &r.expr {
                        Some(e) => {
                            let mut pre = Vec::new();
                            let t = self.expr(e, &mut pre);
                            let v = self.val(&t);
                            out.extend(pre);
                            **tail.as_mut().expect("checked") = Some(v);
                        }
                        None => self.err(r.span(), "a helper function returns a value"),
                    }
                }
                _ => out.extend(self.stmt(s)),
            }
        }
        self.pop_scope();
        out
    }

    fn stmt(&mut self, s: &syn::Stmt) -> TokenStream {
        match s {
            syn::Stmt::Local(l) => self.local(l),
            syn::Stmt::Item(syn::Item::Const(c)) => {
                self.declare(&c.ident, Cat::Rust);
                c.to_token_stream()
            }
            syn::Stmt::Item(i) => {
                self.err(i.span(), "only `const` items may appear in a kernel body");
                TokenStream::new()
            }
            syn::Stmt::Macro(m) if m.mac.path.is_ident("debug_print") => self.debug_print(&m.mac),
            syn::Stmt::Macro(m) => {
                self.err(
                    m.mac.path.span(),
                    "macros are not supported in kernel bodies (except `debug_print!`)",
                );
                TokenStream::new()
            }
            syn::Stmt::Expr(e, semi) => {
                if semi.is_none() && !is_statement_expr(e) {
                    self.err(
                        e.span(),
                        "this value is not used: kernel blocks do not produce values (add `;` or assign it)",
                    );
                    return TokenStream::new();
                }
                self.expr_stmt(e)
            }
        }
    }

    fn local(&mut self, l: &syn::Local) -> TokenStream {
        let k = self.k.clone();
        let (pat, ty) = match &l.pat {
            syn::Pat::Type(pt) => (&*pt.pat, Some(&*pt.ty)),
            p => (p, None),
        };
        if let (syn::Pat::Wild(_), Some(init)) = (pat, &l.init) {
            // `let _ = helper(x);`: evaluated for its effect.
            return self.expr_stmt(&init.expr);
        }
        let syn::Pat::Ident(pi) = pat else {
            self.err(
                l.pat.span(),
                "kernels bind one name per `let` (no patterns)",
            );
            return TokenStream::new();
        };
        if pi.by_ref.is_some() || pi.subpat.is_some() {
            self.err(
                pi.span(),
                "kernels bind one name per `let` (no `ref`, no `@` patterns)",
            );
            return TokenStream::new();
        }
        let Some(init) = &l.init else {
            self.err(l.span(), "give the `let` an initial value");
            return TokenStream::new();
        };
        if let Some((else_, _)) = &init.diverge {
            self.err(else_.span(), "`let ... else` is not supported in kernels");
            return TokenStream::new();
        }
        let ident = &pi.ident;
        let name = ident.to_string();
        // `let v = if ..` / `match ..`: the value's `var` (or `let`) takes the name.
        let conditional = matches!(
            strip_paren(&init.expr),
            syn::Expr::If(_) | syn::Expr::Match(_)
        );
        if conditional {
            self.value_name = Some(name.clone());
        }
        let mut pre = Vec::new();
        let t = self.expr(&init.expr, &mut pre);
        self.value_name = None;
        let v = self.val(&t);
        let turbofish = ty.map(|ty| {
            let ty = super::params::dsl_type(ty);
            quote!(::<#ty>)
        });
        let span = l.span();
        let decl = if pi.mutability.is_some() {
            self.declare(ident, Cat::Place);
            quote_spanned!(span=> let #ident = #k.var #turbofish(#name, #v);)
        } else if conditional {
            // Already a `let` (a `select`) or the `var` each arm assigned.
            self.declare(ident, Cat::Value);
            let annotation = ty.map(|ty| {
                let ty = super::params::dsl_type(ty);
                quote!(: ::wgsl_dsl::Exp<#ty>)
            });
            quote_spanned!(span=> let #ident #annotation = #v;)
        } else {
            self.declare(ident, Cat::Value);
            quote_spanned!(span=> let #ident = #k.let_ #turbofish(#name, #v);)
        };
        quote!(#(#pre)* #decl)
    }

    /// A place to write: `x`, `y[i]`, `s.field` rooted at a `let mut` or a binding.
    fn place(&mut self, e: &syn::Expr, pre: &mut Vec<TokenStream>) -> Option<TokenStream> {
        let t = self.expr(e, pre);
        match t.cat {
            Cat::Place => {
                if let Some(msg) = place_root(e).and_then(|r| self.read_only_binding(r)) {
                    self.err(e.span(), msg);
                    return None;
                }
                Some(t.tokens)
            }
            Cat::Value => {
                self.err(
                    e.span(),
                    "cannot assign to this: it is a value (a `let`, a parameter, a vector component); declare it with `let mut`",
                );
                None
            }
            Cat::Rust => {
                self.err(e.span(), "cannot assign to a Rust value in a kernel");
                None
            }
            Cat::Texture => {
                self.err(
                    e.span(),
                    "cannot assign to a texture: write a texel with `t.store(coords, value);`",
                );
                None
            }
        }
    }

    fn expr_stmt(&mut self, e: &syn::Expr) -> TokenStream {
        let k = self.k.clone();
        let span = e.span();
        let mut pre = Vec::new();
        let stmt = match e {
            syn::Expr::Assign(a) => {
                let Some(p) = self.place(&a.left, &mut pre) else {
                    return TokenStream::new();
                };
                let r = self.expr(&a.right, &mut pre);
                let v = self.val(&r);
                quote_spanned!(span=> #k.store(&#p, #v);)
            }
            syn::Expr::Binary(b) if compound_op(&b.op).is_some() => {
                let op = compound_op(&b.op).expect("checked");
                let op_span = b.op.span();
                let Some(p) = self.place(&b.left, &mut pre) else {
                    return TokenStream::new();
                };
                let r = self.expr(&b.right, &mut pre);
                let v = self.val(&r);
                // `x /= a * b` is `x = x / (a * b)`.
                let v = match &*b.right {
                    syn::Expr::Binary(_) => quote_spanned!(b.right.span()=> (#v)),
                    _ => v,
                };
                let old = syn::Ident::new("__old", Span::mixed_site());
                let shift = matches!(b.op, syn::BinOp::ShlAssign(_) | syn::BinOp::ShrAssign(_));
                // `x += 1` with an `f32` `x`: the literal takes `x`'s scalar type, so that the
                // error is rustc's "expected `f32`, found integer" with its fix, `1.0`.
                let op = respan(op, op_span);
                if !shift && super::expr::is_unsuffixed_int(&b.right) {
                    let lit = syn::Ident::new("__literal", Span::mixed_site());
                    let like = quote_spanned!(b.right.span()=>
                        ::wgsl_dsl::exp::literal_like(&#old, #v));
                    quote_spanned!(span=> #k.update(&#p, |#old| {
                        let #lit = #like;
                        #old #op #lit
                    });)
                } else {
                    quote_spanned!(span=> #k.update(&#p, |#old| #old #op #v);)
                }
            }
            syn::Expr::Macro(m) if m.mac.path.is_ident("debug_print") => {
                return self.debug_print(&m.mac);
            }
            syn::Expr::If(i) => self.if_stmt(i, &mut pre),
            syn::Expr::Match(m) => self.match_stmt(m, &mut pre, None),
            syn::Expr::ForLoop(f) => self.for_stmt(f, &mut pre),
            syn::Expr::While(w) => {
                if let Some(l) = &w.label {
                    self.err(l.span(), "loop labels are not supported in kernels");
                }
                let mut cpre = Vec::new();
                let c = self.expr(&w.cond, &mut cpre);
                let c = self.val(&c);
                let bound = self.loop_attrs(&w.attrs);
                self.loops.push(false);
                let body = self.block(&w.body, None);
                self.loops.pop();
                if cpre.is_empty() {
                    quote_spanned!(span=> #bound #k.while_(#c, |#k| { #body });)
                } else {
                    // The condition calls functions: evaluate it at the top of each iteration.
                    quote_spanned!(span=> #bound #k.loop_(|#k| {
                        #(#cpre)*
                        #k.if_(::wgsl_dsl::IntoExp::<bool>::into_exp(#c).not(), |#k| #k.break_());
                        #body
                    });)
                }
            }
            syn::Expr::Loop(l) => {
                if let Some(l) = &l.label {
                    self.err(l.span(), "loop labels are not supported in kernels");
                }
                let bound = self.loop_attrs(&l.attrs);
                self.loops.push(false);
                let body = self.block(&l.body, None);
                self.loops.pop();
                quote_spanned!(span=> #bound #k.loop_(|#k| { #body });)
            }
            syn::Expr::Break(b) => {
                if b.label.is_some() || b.expr.is_some() {
                    self.err(
                        span,
                        "`break` with a label or a value is not supported in kernels",
                    );
                }
                if let Err(m) = self.check_loop_exit("break") {
                    self.err(span, m);
                }
                quote_spanned!(span=> #k.break_();)
            }
            syn::Expr::Continue(c) => {
                if c.label.is_some() {
                    self.err(span, "loop labels are not supported in kernels");
                }
                if let Err(m) = self.check_loop_exit("continue") {
                    self.err(span, m);
                }
                quote_spanned!(span=> #k.continue_();)
            }
            syn::Expr::Return(r) => match (&r.expr, self.helper_name.is_some()) {
                (None, false) => quote_spanned!(span=> #k.return_();),
                (Some(e), true) => {
                    let t = self.expr(e, &mut pre);
                    let v = self.val(&t);
                    quote_spanned!(span=> #k.return_value(#v);)
                }
                (Some(e), false) => {
                    self.err(e.span(), "a kernel returns nothing: write `return;`");
                    return TokenStream::new();
                }
                (None, true) => {
                    self.err(span, "a helper function returns a value: `return value;`");
                    return TokenStream::new();
                }
            },
            syn::Expr::Block(b) => {
                if b.label.is_some() {
                    self.err(span, "block labels are not supported in kernels");
                }
                let body = self.block(&b.block, None);
                quote!({ #body })
            }
            syn::Expr::Call(c) => {
                let t = self.call(c, &mut pre, true);
                // A helper call's result is bound in `pre`; nothing else to do.
                let _ = t;
                TokenStream::new()
            }
            syn::Expr::MethodCall(m) if m.method == "atomic_store" => {
                let recv = self.expr(&m.receiver, &mut pre);
                let args: Vec<TokenStream> = m
                    .args
                    .iter()
                    .map(|a| {
                        let t = self.expr(a, &mut pre);
                        self.val(&t)
                    })
                    .collect();
                if recv.cat != Cat::Place {
                    self.err(
                        m.receiver.span(),
                        "`atomic_store` applies to an atomic binding or workgroup variable",
                    );
                } else if let Some(msg) =
                    place_root(&m.receiver).and_then(|r| self.read_only_binding(r))
                {
                    self.err(m.receiver.span(), msg);
                }
                let p = &recv.tokens;
                quote_spanned!(span=> #k.atomic_store(&#p, #(#args),*);)
            }
            syn::Expr::MethodCall(m)
                if super::builtins::ATOMIC_METHODS.contains(&m.method.to_string().as_str()) =>
            {
                let _ = self.expr(e, &mut pre);
                TokenStream::new()
            }
            _ => {
                let t = self.expr(e, &mut pre);
                if !matches!(t.tokens.to_string().as_str(), "()") {
                    self.err(
                        span,
                        "this expression has no effect in a kernel (assign it, or bind it with `let`)",
                    );
                }
                TokenStream::new()
            }
        };
        quote!(#(#pre)* #stmt)
    }

    /// `debug_print!("x = {}, y = {}", x, y);`: `KernelBuilder::debug_print` with the values
    /// (a debugging aid the interpreter prints and the GPU build drops). The format string's
    /// `{}` placeholders are counted here: a count other than the arguments' is a compile error
    /// at the string.
    fn debug_print(&mut self, mac: &syn::Macro) -> TokenStream {
        use syn::parse::Parser;
        let k = self.k.clone();
        let span = mac.span();
        let parser = syn::punctuated::Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated;
        let parts = match parser.parse2(mac.tokens.clone()) {
            Ok(p) => p,
            Err(e) => {
                self.errs.add(e);
                return TokenStream::new();
            }
        };
        let mut parts = parts.into_iter();
        let format = match parts.next() {
            Some(syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            })) => s,
            other => {
                self.err(
                    other.as_ref().map_or(span, |e| e.span()),
                    "`debug_print!` takes a format string literal first: `debug_print!(\"x = {}\", x)`",
                );
                return TokenStream::new();
            }
        };
        let args: Vec<syn::Expr> = parts.collect();
        match debug_placeholders(&format.value()) {
            Ok(n) if n == args.len() => {}
            Ok(n) => {
                let plural = |n: usize, one: &str, many: &str| {
                    if n == 1 {
                        one.to_string()
                    } else {
                        format!("{n} {many}")
                    }
                };
                self.err(
                    format.span(),
                    format!(
                        "`debug_print!`: the format string has {} but {} given",
                        plural(n, "1 `{}` placeholder", "`{}` placeholders"),
                        if args.len() == 1 {
                            "1 argument is".to_string()
                        } else {
                            format!("{} arguments are", args.len())
                        }
                    ),
                );
                return TokenStream::new();
            }
            Err(reason) => {
                self.err(format.span(), format!("`debug_print!`: {reason}"));
                return TokenStream::new();
            }
        }
        let mut pre = Vec::new();
        let values: Vec<TokenStream> = args
            .iter()
            .map(|a| {
                let t = self.expr(a, &mut pre);
                match t.cat {
                    Cat::Rust => {
                        let tokens = &t.tokens;
                        quote_spanned!(t.span=> ::wgsl_dsl::lit(#tokens))
                    }
                    _ => self.val(&t),
                }
            })
            .collect();
        let call = quote_spanned!(span=> #k.debug_print(#format, (#(#values,)*)););
        quote!(#(#pre)* #call)
    }

    /// `if c { .. } else { .. }` as a statement: a WGSL `if`, or, for a Rust `c` (a
    /// constant, a plain parameter, an `#[unroll]` counter), a Rust `if` that records only
    /// the arm `c` picks, as Rust runs only that arm (`if j > 0 { x[j - 1] }` computes no
    /// `j - 1` for `j == 0`).
    fn if_stmt(&mut self, i: &syn::ExprIf, pre: &mut Vec<TokenStream>) -> TokenStream {
        let k = self.k.clone();
        let span = i.if_token.span;
        let c = self.expr(&i.cond, pre);
        let rust = c.cat == Cat::Rust;
        let c = self.val(&c);
        let then = self.block(&i.then_branch, None);
        match &i.else_branch {
            None if rust => quote_spanned!(span=> if #c { #then }),
            None => quote_spanned!(span=> #k.if_(#c, |#k| { #then });),
            Some((_, e)) => {
                let otherwise = match &**e {
                    syn::Expr::Block(b) => self.block(&b.block, None),
                    syn::Expr::If(elif) => {
                        let mut epre = Vec::new();
                        let s = self.if_stmt(elif, &mut epre);
                        quote!(#(#epre)* #s)
                    }
                    other => {
                        self.err(other.span(), "expected a block or `if` after `else`");
                        TokenStream::new()
                    }
                };
                if rust {
                    quote_spanned!(span=> if #c { #then } else { #otherwise })
                } else {
                    quote_spanned!(span=> #k.if_else(#c, |#k| { #then }, |#k| { #otherwise });)
                }
            }
        }
    }

    fn for_stmt(&mut self, f: &syn::ExprForLoop, pre: &mut Vec<TokenStream>) -> TokenStream {
        let k = self.k.clone();
        let span = f.for_token.span;
        if let Some(l) = &f.label {
            self.err(l.span(), "loop labels are not supported in kernels");
        }
        let mut unroll = false;
        let mut bound = None;
        for a in &f.attrs {
            if a.path().is_ident("unroll") && matches!(a.meta, syn::Meta::Path(_)) {
                unroll = true;
            } else if let Some(n) = self.max_iterations(a) {
                bound = n.or(bound);
            } else {
                self.err(
                    a.span(),
                    "the attributes a kernel loop takes are `#[unroll]` and `#[max_iterations(n)]`",
                );
            }
        }
        if let (true, Some(_)) = (unroll, &bound) {
            self.err(
                f.for_token.span,
                "an `#[unroll]` loop has a trip count known when the kernel is built: it takes no \
                 `#[max_iterations(n)]`",
            );
        }
        let bound = bound.map(|n| quote_spanned!(span=> #k.max_iterations(#n);));
        let ident = match &*f.pat {
            syn::Pat::Ident(pi) if pi.mutability.is_none() && pi.subpat.is_none() => {
                pi.ident.clone()
            }
            syn::Pat::Wild(_) => syn::Ident::new("_i", Span::mixed_site()),
            p => {
                self.err(
                    p.span(),
                    "the loop counter must be a plain name (`for i in a..b`)",
                );
                return TokenStream::new();
            }
        };
        // Peel the adapters: `(a..b).rev().step_by(s)`, kept in the order they apply.
        let mut adapters = Vec::new();
        let mut e = strip_paren(&f.expr);
        loop {
            match e {
                syn::Expr::MethodCall(m) if m.method == "rev" && m.args.is_empty() => {
                    adapters.push(None);
                    e = strip_paren(&m.receiver);
                }
                syn::Expr::MethodCall(m) if m.method == "step_by" && m.args.len() == 1 => {
                    adapters.push(Some(&m.args[0]));
                    e = strip_paren(&m.receiver);
                }
                _ => break,
            }
        }
        adapters.reverse();
        let syn::Expr::Range(r) = e else {
            self.err(
                f.expr.span(),
                "kernels loop over integer ranges: `a..b` or `a..=b`, with `.rev()` and `.step_by(s)`",
            );
            return TokenStream::new();
        };
        let inclusive = matches!(r.limits, syn::RangeLimits::Closed(_));
        let (Some(start_e), Some(end_e)) = (&r.start, &r.end) else {
            self.err(r.span(), "the range needs both ends: `a..b` or `a..=b`");
            return TokenStream::new();
        };
        let start = self.expr(start_e, pre);
        let end = self.expr(end_e, pre);
        let steps: Vec<Option<Tr>> = adapters
            .iter()
            .map(|a| a.map(|s| self.expr(s, pre)))
            .collect();
        if unroll {
            return self.unrolled_for(f, &ident, (start, end, inclusive), &steps, &adapters);
        }
        let (start, end) = (self.val(&start), self.val(&end));
        let steps: Vec<Option<TokenStream>> = steps
            .iter()
            .map(|s| s.as_ref().map(|s| self.val(s)))
            .collect();
        let name = ident.to_string();
        self.push_scope();
        self.declare(&ident, Cat::Value);
        self.loops.push(false);
        let body = self.block(&f.body, None);
        self.loops.pop();
        self.pop_scope();
        match (inclusive, steps.as_slice()) {
            // `a..b` and `(a..b).step_by(s)`: WGSL's `for` shape.
            (false, []) => quote_spanned!(span=> #bound
                #k.for_range(#name, #start, #end, |#k, #ident| { #body });),
            (false, [Some(s)]) => quote_spanned!(span=> #bound
                #k.for_step(#name, #start, #end, #s, |#k, #ident| { #body });),
            _ => {
                let ctor = if inclusive {
                    quote!(inclusive)
                } else {
                    quote!(new)
                };
                let adapters = steps.iter().map(|s| match s {
                    None => quote!(.rev()),
                    Some(s) => quote!(.step_by(#s)),
                });
                quote_spanned!(span=> #bound #k.for_in(
                    #name,
                    ::wgsl_dsl::kernel::LoopRange::#ctor(#start, #end) #(#adapters)*,
                    |#k, #ident| { #body },
                );)
            }
        }
    }

    /// `#[unroll] for i in a..b { .. }`: a Rust loop that records the body once per element,
    /// `i` a Rust value (so `x[base + i]` becomes `x[base + 2u]` in the third copy).
    fn unrolled_for(
        &mut self,
        f: &syn::ExprForLoop,
        ident: &syn::Ident,
        (start, end, inclusive): (Tr, Tr, bool),
        steps: &[Option<Tr>],
        adapters: &[Option<&syn::Expr>],
    ) -> TokenStream {
        let span = f.for_token.span;
        let build_time = "an `#[unroll]` loop is expanded when the kernel is built: its bounds \
                          and step are Rust values (literals, consts, plain parameters), not kernel values";
        for t in [&start, &end].into_iter().chain(steps.iter().flatten()) {
            if t.cat != Cat::Rust {
                self.err(t.span, build_time);
            }
        }
        let _ = adapters;
        let (s, e) = (&start.tokens, &end.tokens);
        let range = if inclusive {
            quote!(#s..=#e)
        } else {
            quote!(#s..#e)
        };
        let range = if steps.is_empty() {
            range
        } else {
            let range = paren(range, f.expr.span());
            let adapters = steps.iter().map(|s| match s {
                None => quote!(.rev()),
                Some(s) => {
                    let s = &s.tokens;
                    quote!(.step_by(::wgsl_dsl::kernel::unroll_step(#s)))
                }
            });
            quote!(#range #(#adapters)*)
        };
        self.push_scope();
        self.declare(ident, Cat::Rust);
        self.loops.push(true);
        let body = self.block(&f.body, None);
        self.loops.pop();
        self.pop_scope();
        quote_spanned!(span=> for #ident in #range { #body })
    }

    /// The attributes of a `while` or `loop`: `#[max_iterations(n)]` (the statement that
    /// states the bound, `KernelBuilder::max_iterations(n)`); `#[unroll]` belongs on `for`
    /// loops only.
    fn loop_attrs(&mut self, attrs: &[syn::Attribute]) -> TokenStream {
        let mut out = TokenStream::new();
        for a in attrs {
            if let Some(n) = self.max_iterations(a) {
                if let Some(n) = n {
                    let k = &self.k;
                    out = quote_spanned!(a.span()=> #k.max_iterations(#n););
                }
                continue;
            }
            let msg = if a.path().is_ident("unroll") {
                "`#[unroll]` applies to `for` loops over ranges known when the kernel is built"
            } else {
                "a `while` or `loop` takes one attribute, `#[max_iterations(n)]`"
            };
            self.err(a.span(), msg);
        }
        out
    }

    /// `#[max_iterations(n)]`: `n`, a Rust expression (Slang's `[MaxIters(n)]`: the most
    /// iterations the loop runs per invocation, which kernel AD needs to derive a loop whose
    /// trip count is known only at run time). `None` for any other attribute, `Some(None)`
    /// for a malformed one (reported here).
    fn max_iterations(&mut self, a: &syn::Attribute) -> Option<Option<syn::Expr>> {
        if !a.path().is_ident("max_iterations") {
            return None;
        }
        match a.parse_args::<syn::Expr>() {
            Ok(n) => Some(Some(n)),
            Err(_) => {
                self.err(
                    a.span(),
                    "`#[max_iterations(n)]` takes one Rust expression of type u32",
                );
                Some(None)
            }
        }
    }

    /// `match selector { .. }` on an `i32` / `u32`: a WGSL `switch`. `value` is the `var` a
    /// `match` used as a value assigns in each arm.
    pub fn match_stmt(
        &mut self,
        m: &syn::ExprMatch,
        pre: &mut Vec<TokenStream>,
        value: Option<&syn::Ident>,
    ) -> TokenStream {
        let k = self.k.clone();
        let span = m.match_token.span;
        let sel = self.expr(&m.expr, pre);
        let sel = self.val(&sel);
        let s = syn::Ident::new("__s", Span::mixed_site());
        let mut arms = Vec::new();
        let mut has_default = false;
        for arm in &m.arms {
            if let Some((if_, _)) = &arm.guard {
                self.err(
                    if_.span(),
                    "match guards are not supported in kernels: test inside the arm",
                );
            }
            let pattern = self.case_values(&arm.pat);
            let body = self.arm_body(&arm.body, value);
            let arm_span = arm.pat.span();
            match pattern {
                Some(Pattern::Default) => {
                    has_default = true;
                    arms.push(quote_spanned!(arm_span=> #s.default(|#k| { #body });));
                }
                Some(Pattern::Values(v)) => {
                    arms.push(quote_spanned!(arm_span=> #s.case(#v, |#k| { #body });));
                }
                None => {}
            }
        }
        if !has_default {
            self.err(
                span,
                "a kernel `match` on an integer needs a `_ =>` arm (WGSL's `default`)",
            );
        }
        quote_spanned!(span=> #k.switch(#sel, |#s| { #(#arms)* });)
    }

    /// The body of a `match` arm; with `value`, it ends by assigning the arm's value to it.
    fn arm_body(&mut self, body: &syn::Expr, value: Option<&syn::Ident>) -> TokenStream {
        let k = self.k.clone();
        let diverges = matches!(
            body,
            syn::Expr::Return(_) | syn::Expr::Break(_) | syn::Expr::Continue(_)
        );
        match (body, value) {
            (syn::Expr::Block(b), None) if b.label.is_none() => self.block(&b.block, None),
            (syn::Expr::Tuple(t), None) if t.elems.is_empty() => TokenStream::new(),
            (e, None) => {
                self.push_scope();
                let t = self.expr_stmt(e);
                self.pop_scope();
                t
            }
            (e, Some(_)) if diverges => {
                self.push_scope();
                let t = self.expr_stmt(e);
                self.pop_scope();
                t
            }
            (e, Some(v)) => {
                let (stmts, tail) = self.value_block(e);
                match tail {
                    Some(t) => quote_spanned!(e.span()=> #stmts #k.store(&#v, #t);),
                    None => stmts,
                }
            }
        }
    }

    /// The values a `match` pattern lists, as an iterator expression; `None` after an error.
    fn case_values(&mut self, pat: &syn::Pat) -> Option<Pattern> {
        let span = pat.span();
        match pat {
            syn::Pat::Wild(_) => Some(Pattern::Default),
            syn::Pat::Paren(p) => self.case_values(&p.pat),
            syn::Pat::Lit(l) => match &l.lit {
                syn::Lit::Int(_) => Some(Pattern::Values(quote_spanned!(span=>
                    ::core::iter::once(#l)))),
                _ => {
                    self.err(span, "kernel `match` arms take integer patterns");
                    None
                }
            },
            syn::Pat::Path(p) => Some(Pattern::Values(quote_spanned!(span=>
                ::core::iter::once(#p)))),
            syn::Pat::Ident(pi)
                if pi.subpat.is_none()
                    && pi.by_ref.is_none()
                    && pi.mutability.is_none()
                    && pi
                        .ident
                        .to_string()
                        .starts_with(|c: char| c.is_ascii_uppercase()) =>
            {
                // A constant, as Rust reads an upper-case name in a pattern.
                let i = &pi.ident;
                Some(Pattern::Values(
                    quote_spanned!(span=> ::core::iter::once(#i)),
                ))
            }
            syn::Pat::Range(r) => match (&r.start, &r.end) {
                (Some(a), Some(b)) => {
                    let range = match r.limits {
                        syn::RangeLimits::Closed(_) => quote!(#a..=#b),
                        syn::RangeLimits::HalfOpen(_) => quote!(#a..#b),
                    };
                    Some(Pattern::Values(range))
                }
                _ => {
                    self.err(
                        span,
                        "kernel `match` ranges need both ends (`a..=b`): each value is a `case`",
                    );
                    None
                }
            },
            syn::Pat::Or(o) => {
                let mut parts = Vec::new();
                for c in &o.cases {
                    match self.case_values(c) {
                        Some(Pattern::Values(v)) => parts.push(v),
                        Some(Pattern::Default) => return Some(Pattern::Default),
                        None => return None,
                    }
                }
                Some(Pattern::Values(quote_spanned!(span=>
                    ::core::iter::empty() #(.chain(#parts))*)))
            }
            _ => {
                self.err(
                    span,
                    "kernel `match` arms take integer literals, constants, ranges `a..=b`, `|` and `_` (a WGSL `switch`)",
                );
                None
            }
        }
    }
}

fn strip_paren(e: &syn::Expr) -> &syn::Expr {
    match e {
        syn::Expr::Paren(p) => strip_paren(&p.expr),
        syn::Expr::Group(g) => strip_paren(&g.expr),
        e => e,
    }
}

/// Expressions that give a value at the end of a block: not statements, or an `if` / `else`
/// whose arms end in values, or a `match`.
fn is_value_expr(e: &syn::Expr) -> bool {
    match e {
        syn::Expr::If(i) => i.else_branch.is_some() && block_has_value(&i.then_branch),
        syn::Expr::Match(_) => true,
        syn::Expr::Block(b) => b.label.is_none() && block_has_value(&b.block),
        e => !is_statement_expr(e),
    }
}

fn block_has_value(b: &syn::Block) -> bool {
    matches!(b.stmts.last(), Some(syn::Stmt::Expr(e, None)) if is_value_expr(e))
}

/// Expressions that are statements without a `;` in Rust.
fn is_statement_expr(e: &syn::Expr) -> bool {
    matches!(
        e,
        syn::Expr::If(_)
            | syn::Expr::ForLoop(_)
            | syn::Expr::While(_)
            | syn::Expr::Loop(_)
            | syn::Expr::Block(_)
            | syn::Expr::Match(_)
    )
}

fn respan(ts: TokenStream, span: Span) -> TokenStream {
    ts.into_iter()
        .map(|mut t| {
            t.set_span(span);
            t
        })
        .collect()
}

/// `+=` -> `+`, ...
fn compound_op(op: &syn::BinOp) -> Option<TokenStream> {
    use syn::BinOp::*;
    Some(match op {
        AddAssign(_) => quote!(+),
        SubAssign(_) => quote!(-),
        MulAssign(_) => quote!(*),
        DivAssign(_) => quote!(/),
        RemAssign(_) => quote!(%),
        BitAndAssign(_) => quote!(&),
        BitOrAssign(_) => quote!(|),
        BitXorAssign(_) => quote!(^),
        ShlAssign(_) => quote!(<<),
        ShrAssign(_) => quote!(>>),
        _ => return None,
    })
}

/// What a `match` arm's pattern matches.
pub enum Pattern {
    /// `_`
    Default,
    /// An iterator expression over the values.
    Values(TokenStream),
}

/// The `{}` placeholders of a `debug_print!` format string (`{{` and `}}` are braces), or
/// what is wrong with it: the rule `KernelBuilder::debug_print` applies when the kernel is
/// built, checked here at compile time.
fn debug_placeholders(format: &str) -> Result<usize, String> {
    let mut n = 0;
    let mut chars = format.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('{', Some('{')) | ('}', Some('}')) => {
                chars.next();
            }
            ('{', Some('}')) => {
                chars.next();
                n += 1;
            }
            ('{', _) => {
                return Err(
                    "only `{}` placeholders are supported (no names, positions or format specs); write `{{` for a literal `{`".into(),
                );
            }
            ('}', _) => return Err("unmatched `}`; write `}}` for a literal `}`".into()),
            _ => {}
        }
    }
    Ok(n)
}
