//! Statements and blocks: Rust syntax -> `KernelBuilder` calls.
//!
//! Blocks of `if` and loops become closures `|__k| { ... }` that receive the builder; names
//! declared inside are scoped as in Rust (and WGSL).

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote, quote_spanned};
use syn::spanned::Spanned;

use super::ctx::{Cat, Ctx};

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
                syn::Stmt::Expr(e, None) if last && tail.is_some() && !is_statement_expr(e) => {
                    let mut pre = Vec::new();
                    let t = self.expr(e, &mut pre);
                    let v = self.val(&t);
                    out.extend(pre);
                    **tail.as_mut().expect("checked") = Some(v);
                }
                syn::Stmt::Expr(syn::Expr::Return(r), _) if last && tail.is_some() => {
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
            syn::Stmt::Macro(m) => {
                self.err(
                    m.mac.path.span(),
                    "macros are not supported in kernel bodies",
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
        let mut pre = Vec::new();
        let t = self.expr(&init.expr, &mut pre);
        let v = self.val(&t);
        let ident = &pi.ident;
        let name = ident.to_string();
        let turbofish = ty.map(|ty| {
            let ty = super::params::dsl_type(ty);
            quote!(::<#ty>)
        });
        let span = l.span();
        let decl = if pi.mutability.is_some() {
            self.declare(ident, Cat::Place);
            quote_spanned!(span=> let #ident = #k.var #turbofish(#name, #v);)
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
            Cat::Place => Some(t.tokens),
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
                let op = respan(op, op_span);
                quote_spanned!(span=> #k.update(&#p, |#old| #old #op #v);)
            }
            syn::Expr::If(i) => self.if_stmt(i, &mut pre),
            syn::Expr::ForLoop(f) => self.for_stmt(f, &mut pre),
            syn::Expr::While(w) => {
                if let Some(l) = &w.label {
                    self.err(l.span(), "loop labels are not supported in kernels");
                }
                let mut cpre = Vec::new();
                let c = self.expr(&w.cond, &mut cpre);
                let c = self.val(&c);
                self.loop_depth += 1;
                let body = self.block(&w.body, None);
                self.loop_depth -= 1;
                if cpre.is_empty() {
                    quote_spanned!(span=> #k.while_(#c, |#k| { #body });)
                } else {
                    // The condition calls functions: evaluate it at the top of each iteration.
                    quote_spanned!(span=> #k.loop_(|#k| {
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
                self.loop_depth += 1;
                let body = self.block(&l.body, None);
                self.loop_depth -= 1;
                quote_spanned!(span=> #k.loop_(|#k| { #body });)
            }
            syn::Expr::Break(b) => {
                if b.label.is_some() || b.expr.is_some() {
                    self.err(
                        span,
                        "`break` with a label or a value is not supported in kernels",
                    );
                }
                if self.loop_depth == 0 {
                    self.err(span, "`break` outside a loop");
                }
                quote_spanned!(span=> #k.break_();)
            }
            syn::Expr::Continue(c) => {
                if c.label.is_some() {
                    self.err(span, "loop labels are not supported in kernels");
                }
                if self.loop_depth == 0 {
                    self.err(span, "`continue` outside a loop");
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

    fn if_stmt(&mut self, i: &syn::ExprIf, pre: &mut Vec<TokenStream>) -> TokenStream {
        let k = self.k.clone();
        let span = i.if_token.span;
        let c = self.expr(&i.cond, pre);
        let c = self.val(&c);
        let then = self.block(&i.then_branch, None);
        match &i.else_branch {
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
                quote_spanned!(span=> #k.if_else(#c, |#k| { #then }, |#k| { #otherwise });)
            }
        }
    }

    fn for_stmt(&mut self, f: &syn::ExprForLoop, pre: &mut Vec<TokenStream>) -> TokenStream {
        let k = self.k.clone();
        let span = f.for_token.span;
        if let Some(l) = &f.label {
            self.err(l.span(), "loop labels are not supported in kernels");
        }
        let ident = match &*f.pat {
            syn::Pat::Ident(pi) if pi.mutability.is_none() && pi.subpat.is_none() => {
                pi.ident.clone()
            }
            syn::Pat::Wild(w) => syn::Ident::new("_i", w.span()),
            p => {
                self.err(
                    p.span(),
                    "the loop counter must be a plain name (`for i in a..b`)",
                );
                return TokenStream::new();
            }
        };
        let (range, step) = match &*f.expr {
            syn::Expr::MethodCall(m) if m.method == "step_by" && m.args.len() == 1 => {
                (strip_paren(&m.receiver), Some(&m.args[0]))
            }
            e => (strip_paren(e), None),
        };
        let syn::Expr::Range(r) = range else {
            self.err(
                f.expr.span(),
                "kernels loop over ranges only: `for i in a..b` or `for i in (a..b).step_by(s)`",
            );
            return TokenStream::new();
        };
        if let syn::RangeLimits::Closed(c) = r.limits {
            self.err(
                c.span(),
                "use a half-open range `a..b` (WGSL for-loops compare with `<`)",
            );
        }
        let (Some(start), Some(end)) = (&r.start, &r.end) else {
            self.err(r.span(), "the range needs both ends: `a..b`");
            return TokenStream::new();
        };
        let start = self.expr(start, pre);
        let start = self.val(&start);
        let end = self.expr(end, pre);
        let end = self.val(&end);
        let step = step.map(|s| {
            let t = self.expr(s, pre);
            self.val(&t)
        });
        let name = ident.to_string();
        self.push_scope();
        self.declare(&ident, Cat::Value);
        self.loop_depth += 1;
        let body = self.block(&f.body, None);
        self.loop_depth -= 1;
        self.pop_scope();
        match step {
            None => {
                quote_spanned!(span=> #k.for_range(#name, #start, #end, |#k, #ident| { #body });)
            }
            Some(s) => {
                quote_spanned!(span=> #k.for_step(#name, #start, #end, #s, |#k, #ident| { #body });)
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
