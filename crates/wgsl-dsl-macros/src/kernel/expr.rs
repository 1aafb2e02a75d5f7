//! Expressions: Rust syntax -> `Exp` / `Place` code.
//!
//! Each expression is translated to a [`Tr`]: a place (read with `.load()` where a value is
//! needed), a value (`Exp<T>`), or a plain Rust value (literals, consts), which the DSL turns
//! into a WGSL literal where it meets an `Exp`. Calls that are statements in the builder
//! (helper calls, atomics, subgroup operations) are hoisted into `pre`, in evaluation order.
//! Generated tokens carry the span of the Rust they come from, so type errors (`f32 + u32`)
//! point at the author's expression.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote, quote_spanned};
use syn::spanned::Spanned;

use super::builtins::*;
use super::ctx::{Cat, Ctx, Tr};

fn rust(tokens: TokenStream, span: Span) -> Tr {
    Tr {
        cat: Cat::Rust,
        tokens,
        span,
    }
}

fn value(tokens: TokenStream, span: Span) -> Tr {
    Tr {
        cat: Cat::Value,
        tokens,
        span,
    }
}

/// A stand-in after an error; never compiled (the stub replaces the body).
fn dummy(span: Span) -> Tr {
    rust(quote!(()), span)
}

/// `(tokens)` with parentheses that belong to the expansion, located at `span` for messages:
/// lints about the author's code (`unused_parens`) do not apply to them.
pub fn paren(tokens: TokenStream, span: Span) -> TokenStream {
    let mut g = proc_macro2::Group::new(proc_macro2::Delimiter::Parenthesis, tokens);
    g.set_span(Span::mixed_site().located_at(span));
    g.into_token_stream()
}

/// The binding or `var` a place expression (`x`, `x[i]`, `s.f[i]`) is rooted at.
pub fn place_root(e: &syn::Expr) -> Option<&syn::Ident> {
    match e {
        syn::Expr::Path(p) if p.qself.is_none() => p.path.get_ident(),
        syn::Expr::Index(i) => place_root(&i.expr),
        syn::Expr::Field(f) => place_root(&f.base),
        syn::Expr::Paren(p) => place_root(&p.expr),
        syn::Expr::Group(g) => place_root(&g.expr),
        _ => None,
    }
}

/// True if `e` is an integer literal without a suffix (`10`, `-3`, `(7)`): Rust gives it a
/// type from where it is used.
pub fn is_unsuffixed_int(e: &syn::Expr) -> bool {
    match e {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) => i.suffix().is_empty(),
        syn::Expr::Paren(p) => is_unsuffixed_int(&p.expr),
        syn::Expr::Group(g) => is_unsuffixed_int(&g.expr),
        syn::Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => is_unsuffixed_int(&u.expr),
        _ => false,
    }
}

/// True if `e` can be a method receiver without parentheses.
fn is_postfix(e: &syn::Expr) -> bool {
    matches!(
        e,
        syn::Expr::Path(_)
            | syn::Expr::Paren(_)
            | syn::Expr::Lit(_)
            | syn::Expr::Index(_)
            | syn::Expr::Field(_)
            | syn::Expr::MethodCall(_)
            | syn::Expr::Call(_)
    )
}

impl Ctx {
    /// The value of `t`: places are loaded.
    pub fn val(&self, t: &Tr) -> TokenStream {
        let tokens = &t.tokens;
        match t.cat {
            Cat::Place => quote_spanned!(t.span=> #tokens.load()),
            _ => tokens.clone(),
        }
    }

    /// The value of `t` as an `Exp` receiver: places loaded, Rust values made literals.
    fn recv(&self, t: &Tr, src: &syn::Expr) -> TokenStream {
        let tokens = &t.tokens;
        match t.cat {
            Cat::Place => quote_spanned!(t.span=> #tokens.load()),
            Cat::Value if is_postfix(src) => tokens.clone(),
            Cat::Value => paren(tokens.clone(), t.span),
            Cat::Rust => quote_spanned!(t.span=> ::wgsl_dsl::lit(#tokens)),
            Cat::Texture => tokens.clone(),
        }
    }

    /// Translate an expression used as a value or place.
    pub fn expr(&mut self, e: &syn::Expr, pre: &mut Vec<TokenStream>) -> Tr {
        let span = e.span();
        match e {
            syn::Expr::Lit(l) => self.lit(l),
            syn::Expr::Path(p) => {
                if p.qself.is_none()
                    && let Some(id) = p.path.get_ident()
                {
                    match self.lookup(id) {
                        Cat::Place => Tr {
                            cat: Cat::Place,
                            tokens: id.to_token_stream(),
                            span,
                        },
                        Cat::Value => value(quote_spanned!(span=> #id.clone()), span),
                        Cat::Rust => rust(id.to_token_stream(), span),
                        Cat::Texture => Tr {
                            cat: Cat::Texture,
                            tokens: id.to_token_stream(),
                            span,
                        },
                    }
                } else {
                    rust(p.to_token_stream(), span)
                }
            }
            syn::Expr::Paren(p) => {
                let inner = self.expr(&p.expr, pre);
                let t = &inner.tokens;
                Tr {
                    tokens: paren(t.clone(), span),
                    ..inner
                }
            }
            syn::Expr::Group(g) => self.expr(&g.expr, pre),
            syn::Expr::Unary(u) => {
                let inner = self.expr(&u.expr, pre);
                let op = &u.op;
                match u.op {
                    syn::UnOp::Neg(_) | syn::UnOp::Not(_) => {
                        if inner.cat == Cat::Rust {
                            let t = &inner.tokens;
                            rust(quote!(#op #t), span)
                        } else {
                            let v = self.val(&inner);
                            value(quote_spanned!(span=> #op #v), span)
                        }
                    }
                    _ => {
                        self.err(
                            span,
                            "`*` (dereference) is not supported in kernels: bindings and `let`s are used by name",
                        );
                        dummy(span)
                    }
                }
            }
            syn::Expr::Binary(b) => self.binary(b, pre),
            syn::Expr::Cast(c) => {
                let inner = self.expr(&c.expr, pre);
                let ty = &c.ty;
                let target = ["f32", "i32", "u32", "bool"]
                    .into_iter()
                    .find(|s| matches!(&**ty, syn::Type::Path(p) if p.path.is_ident(s)));
                match (target, inner.cat) {
                    (_, Cat::Rust) => {
                        let t = &inner.tokens;
                        rust(quote!(#t as #ty), span)
                    }
                    (Some(s), _) => {
                        let m = syn::Ident::new(&format!("to_{s}"), ty.span());
                        let r = self.recv(&inner, &c.expr);
                        value(quote_spanned!(span=> #r.#m()), span)
                    }
                    (None, _) => {
                        self.err(
                            ty.span(),
                            "kernels cast only to `f32`, `i32`, `u32` or `bool` (WGSL value conversions)",
                        );
                        dummy(span)
                    }
                }
            }
            syn::Expr::Index(ix) => {
                let base = self.expr(&ix.expr, pre);
                let index = self.expr(&ix.index, pre);
                let i = self.val(&index);
                let b = &base.tokens;
                match base.cat {
                    Cat::Place => Tr {
                        cat: Cat::Place,
                        tokens: quote_spanned!(span=> #b.at(#i)),
                        span,
                    },
                    Cat::Value => {
                        let r = self.recv(&base, &ix.expr);
                        value(quote_spanned!(span=> #r.index(#i)), span)
                    }
                    Cat::Texture => {
                        self.err(
                            ix.expr.span(),
                            "a texture is not indexed: read a texel with `t.load(coords)` (a storage texture) or `t.load(coords, level)` (a sampled one), write one with `t.store(coords, value);`",
                        );
                        dummy(span)
                    }
                    Cat::Rust if index.cat == Cat::Rust => rust(quote!(#b[#i]), span),
                    Cat::Rust => {
                        self.err(
                            ix.expr.span(),
                            "a Rust value cannot be indexed by a kernel value; bind it to a `let` first",
                        );
                        dummy(span)
                    }
                }
            }
            syn::Expr::Field(f) => {
                let base = self.expr(&f.base, pre);
                let syn::Member::Named(name) = &f.member else {
                    self.err(f.member.span(), "tuple fields are not supported in kernels");
                    return dummy(span);
                };
                let b = &base.tokens;
                let is_swizzle = SWIZZLES.contains(&name.to_string().as_str());
                match base.cat {
                    Cat::Rust => rust(quote!(#b.#name), span),
                    Cat::Place if !is_swizzle => Tr {
                        cat: Cat::Place,
                        tokens: quote_spanned!(span=> #b.#name()),
                        span,
                    },
                    _ => {
                        let r = self.recv(&base, &f.base);
                        value(quote_spanned!(span=> #r.#name()), span)
                    }
                }
            }
            syn::Expr::MethodCall(m) => self.method(m, pre),
            syn::Expr::Call(c) => self.call(c, pre, false),
            syn::Expr::If(i) => self.if_value(i, pre),
            syn::Expr::Match(m) => {
                let k = self.k.clone();
                let name = self.value_name.take().unwrap_or_else(|| "value".into());
                let var = self.temp();
                pre.push(quote_spanned!(span=> let #var = #k.var_declared(#name);));
                let stmt = self.match_stmt(m, pre, Some(&var));
                pre.push(stmt);
                value(quote_spanned!(span=> #var.load()), span)
            }
            syn::Expr::Block(b) if b.label.is_none() => {
                // `{ stmts; value }` as a value: a Rust block recording the statements first.
                self.value_name = None;
                let (stmts, tail) = self.value_block(e);
                match tail {
                    Some(t) => {
                        let v = self.temp();
                        pre.push(quote_spanned!(span=> let #v = { #stmts #t };));
                        value(v.to_token_stream(), span)
                    }
                    None => dummy(span),
                }
            }
            syn::Expr::Reference(_) => {
                self.err(
                    span,
                    "references are not supported in kernels: use bindings and `let`s by name",
                );
                dummy(span)
            }
            syn::Expr::Macro(m) if m.mac.path.is_ident("debug_print") => {
                self.err(
                    m.mac.path.span(),
                    "`debug_print!` is a statement: write it on its own line",
                );
                dummy(span)
            }
            syn::Expr::Macro(m) => {
                self.err(
                    m.mac.path.span(),
                    "macros are not supported in kernel bodies (except `debug_print!`, a statement)",
                );
                dummy(span)
            }
            _ => {
                self.err(
                    span,
                    "unsupported expression in a kernel (supported: literals, names, operators, `as`, indexing, fields, built-in calls and methods, helper calls)",
                );
                dummy(span)
            }
        }
    }

    /// `if c { a } else { b }` as a value: `KernelBuilder::if_value` (a `select` when both
    /// arms are plain expressions, a `var` otherwise).
    fn if_value(&mut self, i: &syn::ExprIf, pre: &mut Vec<TokenStream>) -> Tr {
        let k = self.k.clone();
        let span = i.if_token.span;
        let name = self.value_name.take().unwrap_or_else(|| "value".into());
        let Some((_, otherwise)) = &i.else_branch else {
            self.err(span, "an `if` used as a value needs an `else`");
            return dummy(span);
        };
        let c = self.expr(&i.cond, pre);
        let rust = c.cat == Cat::Rust;
        let c = self.val(&c);
        let then = syn::Expr::Block(syn::ExprBlock {
            attrs: Vec::new(),
            label: None,
            block: i.then_branch.clone(),
        });
        let (then_stmts, then_tail) = self.value_block(&then);
        let (else_stmts, else_tail) = match &**otherwise {
            syn::Expr::If(elif) => {
                let mut epre = Vec::new();
                let t = self.if_value(elif, &mut epre);
                (quote!(#(#epre)*), Some(t.tokens))
            }
            e => self.value_block(e),
        };
        let (Some(a), Some(b)) = (then_tail, else_tail) else {
            return dummy(span);
        };
        let t = self.temp();
        if rust {
            // A Rust condition picks its arm when the kernel is built, as Rust runs one arm;
            // the value is a `let`, evaluated once, here.
            pre.push(quote_spanned!(span=>
                let #t = if #c {
                    #then_stmts #k.let_(#name, ::wgsl_dsl::IntoExp::into_exp(#a))
                } else {
                    #else_stmts #k.let_(#name, ::wgsl_dsl::IntoExp::into_exp(#b))
                };
            ));
            return value(t.to_token_stream(), span);
        }
        pre.push(quote_spanned!(span=>
            let #t = #k.if_value(
                #name,
                #c,
                |#k| { #then_stmts ::wgsl_dsl::IntoExp::into_exp(#a) },
                |#k| { #else_stmts ::wgsl_dsl::IntoExp::into_exp(#b) },
            );
        ));
        value(t.to_token_stream(), span)
    }

    /// A block (or expression) used as a value: its statements, and its value (`None` after an
    /// error). Names declared inside are scoped to it.
    pub fn value_block(&mut self, e: &syn::Expr) -> (TokenStream, Option<TokenStream>) {
        let syn::Expr::Block(b) = e else {
            let mut pre = Vec::new();
            let t = self.expr(e, &mut pre);
            let v = self.val(&t);
            return (quote!(#(#pre)*), Some(v));
        };
        if b.label.is_some() {
            self.err(b.span(), "block labels are not supported in kernels");
        }
        let mut tail = None;
        self.in_value += 1;
        let stmts = self.block(&b.block, Some(&mut tail));
        self.in_value -= 1;
        if tail.is_none() {
            self.err(
                b.block.brace_token.span.close(),
                "this block gives no value: end it with an expression (no `;`)",
            );
        }
        (stmts, tail)
    }

    fn lit(&mut self, l: &syn::ExprLit) -> Tr {
        let span = l.span();
        match &l.lit {
            syn::Lit::Float(f) => match f.suffix() {
                "" => {
                    let lit = syn::LitFloat::new(&format!("{}f32", f.base10_digits()), span);
                    rust(lit.to_token_stream(), span)
                }
                "f32" => rust(f.to_token_stream(), span),
                s => {
                    self.err(span, format!("WGSL has no `{s}`: use `f32`"));
                    dummy(span)
                }
            },
            syn::Lit::Int(i) => match i.suffix() {
                "" | "u32" | "i32" => rust(i.to_token_stream(), span),
                "f32" => rust(i.to_token_stream(), span),
                s => {
                    self.err(
                        span,
                        format!("WGSL has no `{s}`: use `u32`, `i32` or `f32`"),
                    );
                    dummy(span)
                }
            },
            syn::Lit::Bool(b) => rust(b.to_token_stream(), span),
            _ => {
                self.err(span, "only number and `bool` literals exist in WGSL");
                dummy(span)
            }
        }
    }

    /// `a && b` / `a || b`: `b` evaluated only where Rust evaluates it. A Rust `a` (a
    /// constant, a plain parameter) decides when the kernel is built; a `b` that records
    /// statements (helper calls, atomics, subgroup operations, `if` values) is recorded in the
    /// arm of a `KernelBuilder::if_value` on `a`; otherwise `Exp::and` / `Exp::or`, which
    /// branch where `b` loads.
    fn logical(&mut self, b: &syn::ExprBinary, pre: &mut Vec<TokenStream>, and: bool) -> Tr {
        let span = b.span();
        let k = self.k.clone();
        let l = self.expr(&b.left, pre);
        let mut rpre = Vec::new();
        let r = self.expr(&b.right, &mut rpre);
        let rv = self.val(&r);
        let rv = quote_spanned!(r.span=> ::wgsl_dsl::IntoExp::<bool>::into_exp(#rv));
        let decided = if and {
            quote_spanned!(span=> ::wgsl_dsl::lit(false))
        } else {
            quote_spanned!(span=> ::wgsl_dsl::lit(true))
        };
        match (l.cat, r.cat) {
            (Cat::Rust, Cat::Rust) => {
                let (lt, rt, op) = (&l.tokens, &r.tokens, &b.op);
                pre.extend(rpre);
                return rust(quote!(#lt #op #rt), span);
            }
            (Cat::Rust, _) => {
                let lt = &l.tokens;
                let t = self.temp();
                let (open, shut) = if and {
                    (quote!(#lt), decided)
                } else {
                    (quote!(!(#lt)), decided)
                };
                pre.push(quote_spanned!(span=>
                    let #t = if #open { #(#rpre)* #rv } else { #shut };));
                return value(t.to_token_stream(), span);
            }
            _ => {}
        }
        let lv = self.val(&l);
        if rpre.is_empty() {
            let m = syn::Ident::new(if and { "and" } else { "or" }, b.op.span());
            let recv = self.recv(&l, &b.left);
            return value(quote_spanned!(span=> #recv.#m(#rv)), span);
        }
        let t = self.temp();
        let name = if and { "and" } else { "or" };
        let (then, otherwise) = if and {
            (quote!(|#k| { #(#rpre)* #rv }), quote!(|_| #decided))
        } else {
            (quote!(|_| #decided), quote!(|#k| { #(#rpre)* #rv }))
        };
        pre.push(quote_spanned!(span=>
            let #t = #k.if_value(#name, #lv, #then, #otherwise);));
        value(t.to_token_stream(), span)
    }

    fn binary(&mut self, b: &syn::ExprBinary, pre: &mut Vec<TokenStream>) -> Tr {
        use syn::BinOp::*;
        if let And(_) | Or(_) = b.op {
            return self.logical(b, pre, matches!(b.op, And(_)));
        }
        let span = b.span();
        let l = self.expr(&b.left, pre);
        let r = self.expr(&b.right, pre);
        let op = &b.op;
        if l.cat == Cat::Rust && r.cat == Cat::Rust {
            let (lt, rt) = (&l.tokens, &r.tokens);
            return rust(quote!(#lt #op #rt), span);
        }
        let (method, flipped) = match op {
            Lt(_) => (Some("lt"), "gt"),
            Le(_) => (Some("le"), "ge"),
            Gt(_) => (Some("gt"), "lt"),
            Ge(_) => (Some("ge"), "le"),
            Eq(_) => (Some("eq"), "eq"),
            Ne(_) => (Some("ne"), "ne"),
            Add(_) | Sub(_) | Mul(_) | Div(_) | Rem(_) | BitAnd(_) | BitOr(_) | BitXor(_)
            | Shl(_) | Shr(_) => (None, ""),
            _ => {
                self.err(
                    op.span(),
                    "compound assignment is a statement: write it on its own line",
                );
                return dummy(span);
            }
        };
        // An integer literal without suffix beside a kernel value takes the value's scalar type
        // (`literal_like`), so that `x + 10` with an `f32` `x` is rustc's "expected `f32`,
        // found integer", which suggests `10.0`. Not a shift amount: that is a `u32` whatever
        // the shifted type.
        let shift = matches!(op, Shl(_) | Shr(_));
        let literal_left = !shift && l.cat == Cat::Rust && is_unsuffixed_int(&b.left);
        let literal_right = !shift && r.cat == Cat::Rust && is_unsuffixed_int(&b.right);
        let other = syn::Ident::new("__operand", Span::mixed_site());
        let like = |lit: &TokenStream| quote!(::wgsl_dsl::exp::literal_like(&#other, #lit));
        match method {
            None => {
                let (lv, rv) = (self.val(&l), self.val(&r));
                if literal_right {
                    let lit = like(&rv);
                    let literal = syn::Ident::new("__literal", Span::mixed_site());
                    let e = quote_spanned!(span=> {
                        let #other = #lv;
                        let #literal = #lit;
                        #other #op #literal
                    });
                    return value(paren(e, span), span);
                }
                if literal_left {
                    let lit = like(&lv);
                    let e = quote_spanned!(span=> { let #other = #rv; #lit #op #other });
                    return value(paren(e, span), span);
                }
                value(quote!(#lv #op #rv), span)
            }
            Some(m) => {
                // `a < b` is `a.lt(b)`; with a Rust value on the left, `b.gt(a)` (operands are
                // pure expressions, so the order does not matter).
                let (recv, arg, m, literal) = if l.cat == Cat::Rust {
                    (self.recv(&r, &b.right), self.val(&l), flipped, literal_left)
                } else {
                    (self.recv(&l, &b.left), self.val(&r), m, literal_right)
                };
                let m = syn::Ident::new(m, op.span());
                if literal {
                    let lit = like(&arg);
                    let e = quote_spanned!(span=> { let #other = #recv; #other.#m(#lit) });
                    return value(paren(e, span), span);
                }
                value(quote_spanned!(span=> #recv.#m(#arg)), span)
            }
        }
    }

    fn args(
        &mut self,
        args: &syn::punctuated::Punctuated<syn::Expr, syn::Token![,]>,
        pre: &mut Vec<TokenStream>,
    ) -> Vec<TokenStream> {
        args.iter()
            .map(|a| {
                let t = self.expr(a, pre);
                self.val(&t)
            })
            .collect()
    }

    fn method(&mut self, m: &syn::ExprMethodCall, pre: &mut Vec<TokenStream>) -> Tr {
        let span = m.span();
        let recv = self.expr(&m.receiver, pre);
        let name = &m.method;
        let sname = name.to_string();
        let args = self.args(&m.args, pre);
        let turbofish = &m.turbofish;
        let k = self.k.clone();
        if recv.cat == Cat::Texture {
            return self.texture_method(m, &recv, args, pre);
        }
        if recv.cat == Cat::Place {
            let p = &recv.tokens;
            if sname == "len" || sname == "load" {
                return value(quote_spanned!(span=> #p.#name()), span);
            }
            if ATOMIC_METHODS.contains(&sname.as_str()) {
                if let Some(msg) = place_root(&m.receiver).and_then(|r| self.read_only_binding(r)) {
                    self.err(m.receiver.span(), msg);
                    return dummy(span);
                }
                let t = self.temp();
                pre.push(quote_spanned!(span=> let #t = #k.#name(&#p, #(#args),*);));
                return value(t.to_token_stream(), span);
            }
        }
        if let Some(b) = method_builtin(&sname) {
            let f = syn::Ident::new(b, name.span());
            let r = self.val(&recv);
            return value(
                quote_spanned!(span=> ::wgsl_dsl::exp::builtins::#f(#r, #(#args),*)),
                span,
            );
        }
        if EXP_METHODS.contains(&sname.as_str()) {
            let r = self.recv(&recv, &m.receiver);
            return value(quote_spanned!(span=> #r.#name #turbofish(#(#args),*)), span);
        }
        if sname == "atomic_store" {
            self.err(
                name.span(),
                "`atomic_store` is a statement: write it on its own line",
            );
        } else if ATOMIC_METHODS.contains(&sname.as_str()) || sname == "len" {
            self.err(
                m.receiver.span(),
                format!(
                    "`{sname}` applies to a binding or workgroup variable (a place), not to a value"
                ),
            );
        } else {
            self.err(
                name.span(),
                match closest_method(&sname) {
                    Some(m) => format!(
                        "unknown method `{sname}`: not a WGSL built-in; did you mean `{m}`? (the methods are listed in the `#[kernel]` syntax reference, `wgsl_dsl::kernel_syntax`)"
                    ),
                    None => format!(
                        "unknown method `{sname}`: not a WGSL built-in (the methods are listed in the `#[kernel]` syntax reference, `wgsl_dsl::kernel_syntax`)"
                    ),
                },
            );
        }
        dummy(span)
    }

    /// A method of a texture binding: `t.load(coords)` (a storage texture),
    /// `t.load(coords, level)` (a sampled one), `t.dimensions()`, and the statement
    /// `t.store(coords, value);` (WGSL spec §17.7).
    fn texture_method(
        &mut self,
        m: &syn::ExprMethodCall,
        recv: &Tr,
        args: Vec<TokenStream>,
        pre: &mut Vec<TokenStream>,
    ) -> Tr {
        let span = m.span();
        let t = &recv.tokens;
        let name = &m.method;
        let k = self.k.clone();
        match name.to_string().as_str() {
            "load" | "dimensions" => value(quote_spanned!(span=> #t.#name(#(#args),*)), span),
            "store" => {
                // A read-only or sampled texture is a Rust type error at the call
                // (`TextureWritable`, whose message says how to declare it).
                pre.push(quote_spanned!(span=> #k.texture_store(&#t, #(#args),*);));
                rust(quote!(()), span)
            }
            other => {
                self.err(
                    name.span(),
                    format!(
                        "unknown texture method `{other}`: a texture has `load(coords)` (storage) or `load(coords, level)` (sampled), `dimensions()` and `store(coords, value)`"
                    ),
                );
                dummy(span)
            }
        }
    }

    /// A call: a built-in function or value, a vector constructor, a builder statement
    /// (barrier, subgroup operation), or a helper function. `stmt` is true at statement level,
    /// where barriers are allowed.
    pub fn call(&mut self, c: &syn::ExprCall, pre: &mut Vec<TokenStream>, stmt: bool) -> Tr {
        let span = c.span();
        let syn::Expr::Path(fp) = &*c.func else {
            self.err(
                c.func.span(),
                "only named functions can be called in kernels",
            );
            return dummy(span);
        };
        let path = &fp.path;
        let k = self.k.clone();
        if path.is_ident("workgroup_uniform_load") {
            // `workgroupUniformLoad(&p)` takes the place itself, not its value.
            let place = match c.args.len() {
                1 => Some(self.expr(&c.args[0], pre)),
                _ => None,
            };
            return match place {
                Some(Tr {
                    cat: Cat::Place,
                    tokens,
                    ..
                }) => {
                    let t = self.temp();
                    pre.push(quote_spanned!(span=> let #t = #k.workgroup_uniform_load(&#tokens);));
                    value(t.to_token_stream(), span)
                }
                _ => {
                    self.err(
                        span,
                        "`workgroup_uniform_load` takes one workgroup variable or an element of one: `workgroup_uniform_load(count[0])`",
                    );
                    dummy(span)
                }
            };
        }
        let args = self.args(&c.args, pre);
        if let Some(id) = path.get_ident() {
            let s = id.to_string();
            let s = s.as_str();
            if BUILTIN_FNS.contains(&s) {
                return value(
                    quote_spanned!(span=> ::wgsl_dsl::exp::builtins::#id(#(#args),*)),
                    span,
                );
            }
            if VECTOR_FNS.contains(&s) {
                return value(
                    quote_spanned!(span=> ::wgsl_dsl::exp::vector::#id(#(#args),*)),
                    span,
                );
            }
            if BUILTIN_VALUES.contains(&s) {
                return value(quote_spanned!(span=> ::wgsl_dsl::kernel::#id()), span);
            }
            if BARRIERS.contains(&s) {
                if !stmt {
                    self.err(
                        span,
                        format!("`{s}()` is a statement: write it on its own line"),
                    );
                }
                pre.push(quote_spanned!(span=> #k.#id();));
                return rust(quote!(()), span);
            }
            if SUBGROUP_FNS.contains(&s) {
                let t = self.temp();
                pre.push(quote_spanned!(span=> let #t = #k.#id(#(#args),*);));
                return value(t.to_token_stream(), span);
            }
            if self.helper_name.as_deref() == Some(s) {
                self.err(span, "recursion is not allowed in WGSL (spec §11)");
                return dummy(span);
            }
        }
        if args.is_empty() {
            self.err(
                span,
                "helper functions take at least one argument (wgsl-dsl helper functions have 1 to 6 parameters)",
            );
            return dummy(span);
        }
        let f = self.helper(path);
        let t = self.temp();
        pre.push(quote_spanned!(span=>
            let #t = #k.call(&#f, (#(::wgsl_dsl::IntoExp::into_exp(#args),)*));
        ));
        value(t.to_token_stream(), span)
    }
}
