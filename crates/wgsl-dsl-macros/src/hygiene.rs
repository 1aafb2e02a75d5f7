//! Every identifier the macros generate is hygienic (issue 21, item 3): a parameter of any
//! kind may take any name the expansion uses for its own locals, parameters and generic
//! parameters.
//!
//! The names are read from the macros' own output: every kernel of
//! `tests/ui/pass_kernel_syntax.rs` (every statement and expression form) and the samples
//! below (the typed interface's forms, `#[derive(Bindings)]`) are expanded, and every
//! identifier of the output that the author did not write and that resolves by scope (not a
//! path segment after `::`, a field or method after `.`, a lifetime, a keyword) is a name to
//! try. `wgsl-dsl`'s `tests/ui/pass/hygiene.rs` (compiled and run by its trybuild test, with
//! the runtime, whose typed interface is most of the expansion) declares kernels whose
//! parameters take every such name, in every parameter kind, and helper functions whose
//! parameters do, and a kernel whose const parameters take every generated generic
//! parameter's name. This test renders that file from the names and fails if the checked-in
//! one differs: regenerate it with
//! `WGSL_DSL_HYGIENE=overwrite cargo test -p wgsl-dsl-macros hygiene` and review the diff.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use proc_macro2::{TokenStream, TokenTree};
use quote::{ToTokens, quote};

use crate::interface::idents;

/// Rust's keywords (strict and reserved), which are no parameter names, and the prelude's
/// value constructors, which a parameter pattern would match rather than bind.
const NOT_NAMES: &[&str] = &[
    "_", "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum",
    "extern", "false", "fn", "for", "if", "impl", "in", "let", "loop", "match", "mod", "move",
    "mut", "pub", "ref", "return", "self", "Self", "static", "struct", "super", "trait", "true",
    "type", "unsafe", "use", "where", "while", "abstract", "become", "box", "do", "final", "gen",
    "macro", "override", "priv", "typeof", "unsized", "virtual", "yield", "try", "None", "Some",
    "Ok", "Err",
];

/// Names an author might expect a macro to use (issue 21 lists `size`, `gpu`, `args`, `k`,
/// `self_`), tried with the generated ones.
const EXPECTED_NAMES: &[&str] = &[
    "size",
    "gpu",
    "args",
    "k",
    "self_",
    "kernel",
    "builder",
    "def",
    "cpu",
    "interp",
    "rec",
    "buffer",
    "bindings",
    "workgroups",
    "grid",
    "executor",
];

/// Identifiers of `tokens` that resolve by scope, into `out`: not after `.` (a field or
/// method) or `::` (a path segment) or `'` (a lifetime).
fn scoped_idents(tokens: &TokenStream, out: &mut BTreeSet<String>) {
    let mut prev: [Option<char>; 2] = [None, None];
    for t in tokens.clone() {
        match &t {
            TokenTree::Ident(i) => {
                let after_path = prev == [Some(':'), Some(':')];
                if !after_path && prev[1] != Some('.') && prev[1] != Some('\'') {
                    out.insert(i.to_string());
                }
                prev = [None, None];
            }
            TokenTree::Punct(p) => prev = [prev[1], Some(p.as_char())],
            TokenTree::Group(g) => {
                scoped_idents(&g.stream(), out);
                prev = [None, None];
            }
            TokenTree::Literal(_) => prev = [None, None],
        }
    }
}

/// What the items of `file` declare (inside the typed interface's `__with_runtime! { .. }`
/// too): into `generics` the type and const parameters, into `items` the names of the items
/// and of their members (structs, functions, methods, associated types), the API the
/// expansion is for rather than names it uses.
fn declarations(file: &syn::File, generics: &mut BTreeSet<String>, items: &mut BTreeSet<String>) {
    let mut add = |g: &syn::Generics| {
        for p in &g.params {
            match p {
                syn::GenericParam::Type(t) => generics.insert(t.ident.to_string()),
                syn::GenericParam::Const(c) => generics.insert(c.ident.to_string()),
                syn::GenericParam::Lifetime(_) => false,
            };
        }
    };
    let mut nested = Vec::new();
    for item in &file.items {
        match item {
            syn::Item::Struct(s) => {
                add(&s.generics);
                items.insert(s.ident.to_string());
            }
            syn::Item::Fn(f) => {
                add(&f.sig.generics);
                items.insert(f.sig.ident.to_string());
            }
            syn::Item::Trait(t) => {
                add(&t.generics);
                items.insert(t.ident.to_string());
            }
            syn::Item::Impl(i) => {
                add(&i.generics);
                for member in &i.items {
                    match member {
                        syn::ImplItem::Fn(f) => {
                            add(&f.sig.generics);
                            items.insert(f.sig.ident.to_string());
                        }
                        syn::ImplItem::Type(t) => {
                            add(&t.generics);
                            items.insert(t.ident.to_string());
                        }
                        _ => {}
                    }
                }
            }
            syn::Item::Macro(m) => {
                nested.push(syn::parse2::<syn::File>(m.mac.tokens.clone()).expect("items"));
            }
            _ => {}
        }
    }
    for f in &nested {
        declarations(f, generics, items);
    }
}

/// `(input, output)` of every expansion the names are read from.
fn expansions() -> Vec<(TokenStream, TokenStream)> {
    let mut cases: Vec<(TokenStream, TokenStream)> = Vec::new();
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/ui/pass_kernel_syntax.rs"
    );
    let source = std::fs::read_to_string(path).expect("the syntax case");
    let file: syn::File = syn::parse_str(&source).expect("parses");
    for item in file.items {
        let syn::Item::Fn(mut f) = item else { continue };
        let Some(at) = f.attrs.iter().position(|a| a.path().is_ident("kernel")) else {
            continue;
        };
        let attr = f.attrs.remove(at);
        let args = match attr.meta {
            syn::Meta::List(l) => l.tokens,
            _ => TokenStream::new(),
        };
        let item = f.to_token_stream();
        let output = crate::kernel::expand(args.clone(), item.clone());
        cases.push((quote!(#args #item), output));
    }
    let samples = [
        (
            quote!(workgroup_size = 64),
            quote! {
                fn plain(#[storage(read_write)] out: &mut [u32], x: u32) { out[0] = x; }
            },
        ),
        (
            quote!(workgroup_size = 1),
            quote!(
                fn unbound() {}
            ),
        ),
        (
            quote!(
                workgroup_size = [8, 8],
                grid = |n: usize| [n as u32, 1, 1],
                def = Custom
            ),
            quote! {
                fn gridded<const N: usize>(
                    #[uniform] u: u32,
                    #[storage(read)] a: &[f32; N],
                    #[storage(read_write)] b: &mut [f32],
                    #[workgroup] w: &mut [f32; 4],
                    #[builtin(global_invocation_id)] g: Vec3<u32>,
                    x: u32,
                ) {
                    let i = g.x;
                    let c = i < b.len() && a[i] > 0.0 || x > 3;
                    let v = if x > 2 { 1.0 } else { a[i] };
                    if x > 1 { b[i] += 1.0; }
                    if c { b[i] = v + w[0]; }
                    for _ in 0..2u32 { b[i] -= 1.0; }
                }
            },
        ),
    ];
    for (args, item) in samples {
        cases.push((quote!(#args #item), crate::kernel::expand(args, item)));
    }
    let bindings = quote! {
        struct SampleBindings {
            #[uniform]
            u: Place<f32, ReadOnly>,
            x: Buffer<f32, ReadWrite>,
        }
    };
    cases.push((bindings.clone(), crate::bindings::expand(bindings)));
    cases
}

/// The value names (locals, parameters, everything that resolves by scope) and the generic
/// parameter names the expansions generate.
fn generated_names() -> (BTreeSet<String>, BTreeSet<String>) {
    let mut values = BTreeSet::new();
    let mut generics = BTreeSet::new();
    for (input, output) in expansions() {
        let mut written = BTreeSet::new();
        idents(&input, &mut written);
        let mut scoped = BTreeSet::new();
        scoped_idents(&output, &mut scoped);
        let file: syn::File = syn::parse2(output).expect("the expansion parses as items");
        let (mut declared, mut items) = (BTreeSet::new(), BTreeSet::new());
        declarations(&file, &mut declared, &mut items);
        generics.extend(declared.difference(&written).cloned());
        values.extend(
            scoped
                .difference(&written)
                .filter(|n| !items.contains(*n))
                .cloned(),
        );
    }
    values.retain(|n| !NOT_NAMES.contains(&n.as_str()) && !generics.contains(n));
    values.extend(EXPECTED_NAMES.iter().map(|n| n.to_string()));
    (values, generics)
}

/// The parameter kinds each name is tried as, with how the body reads the parameter.
const KINDS: [(&str, &str, &str); 5] = [
    ("", "u32", ""),
    ("#[storage(read_write)] ", "&mut [u32]", "[0u32]"),
    ("#[uniform] ", "u32", ""),
    ("#[workgroup] ", "&mut [u32; 4]", "[0u32]"),
    ("#[builtin(local_invocation_index)] ", "u32", ""),
];

/// The pass case: for rotation `r`, kernel `names_r` takes every value name, name `i` as
/// kind `(i + r) % 5`, and adds them all up; helper functions take the names six at a time;
/// `generic_names` takes the generic names as const parameters. `main` builds them all.
fn render(values: &BTreeSet<String>, generics: &BTreeSet<String>) -> String {
    let mut s = String::new();
    s.push_str(
        "//! Every identifier the `#[kernel]` and `#[derive(Bindings)]` expansions generate, as the\n\
         //! name of a parameter of every kind and of a helper function's parameter, and every\n\
         //! generated generic parameter's name as a const parameter: all compile, build and\n\
         //! validate (issue 21, item 3). Generated from the macros' own expansions by\n\
         //! `crates/wgsl-dsl-macros/src/hygiene.rs`; regenerate with\n\
         //! `WGSL_DSL_HYGIENE=overwrite cargo test -p wgsl-dsl-macros hygiene`.\n\
         #![allow(non_snake_case, non_camel_case_types, non_upper_case_globals, unused)]\n\n\
         use wgsl_dsl::prelude::*;\n",
    );
    let names: Vec<&String> = values.iter().collect();
    let helpers: Vec<&[&String]> = names.chunks(6).collect();
    for (h, chunk) in helpers.iter().enumerate() {
        let params: Vec<String> = chunk.iter().map(|n| format!("{n}: u32")).collect();
        let sum: Vec<&str> = chunk.iter().map(|n| n.as_str()).collect();
        let _ = write!(
            s,
            "\n#[kernel(helper)]\nfn helper_{h}({}) -> u32 {{\n    {}\n}}\n",
            params.join(", "),
            sum.join(" + ")
        );
    }
    for r in 0..KINDS.len() {
        let _ = write!(
            s,
            "\n#[kernel(workgroup_size = 64)]\nfn names_{r}(\n    \
             #[storage(read_write)] hygiene_sink: &mut [u32],\n"
        );
        for (i, n) in names.iter().enumerate() {
            let (attr, ty, _) = KINDS[(i + r) % KINDS.len()];
            let _ = writeln!(s, "    {attr}{n}: {ty},");
        }
        s.push_str(") {\n    let mut hygiene_total = 0u32;\n");
        for (i, n) in names.iter().enumerate() {
            let (_, _, read) = KINDS[(i + r) % KINDS.len()];
            let _ = writeln!(s, "    hygiene_total += {n}{read};");
        }
        if r == 0 {
            for (h, chunk) in helpers.iter().enumerate() {
                let args = vec!["hygiene_total"; chunk.len()].join(", ");
                let _ = writeln!(s, "    hygiene_total += helper_{h}({args});");
            }
        }
        s.push_str("    hygiene_sink[0u32] = hygiene_total;\n}\n");
    }
    let consts: Vec<String> = generics
        .iter()
        .map(|g| format!("const {g}: usize"))
        .collect();
    s.push_str("\n#[kernel(workgroup_size = 64)]\n");
    let _ = write!(
        s,
        "fn generic_names<{}>(\n    #[storage(read_write)] hygiene_sink: &mut [u32],\n",
        consts.join(", ")
    );
    for (i, g) in generics.iter().enumerate() {
        let _ = writeln!(s, "    #[storage(read)] sized_{i}: &[u32; {g}],");
    }
    let reads: Vec<String> = (0..generics.len())
        .map(|i| format!("sized_{i}[0u32]"))
        .collect();
    let _ = write!(
        s,
        ") {{\n    hygiene_sink[0u32] = {};\n}}\n",
        if reads.is_empty() {
            "0u32".to_string()
        } else {
            reads.join(" + ")
        }
    );
    s.push_str("\nfn main() {\n");
    let zeros = vec!["0"; names.len()];
    for r in 0..KINDS.len() {
        let plain = names
            .iter()
            .enumerate()
            .filter(|(i, _)| (i + r) % KINDS.len() == 0)
            .count();
        let _ = writeln!(
            s,
            "    names_{r}({}).build().expect(\"names_{r} builds\");",
            zeros[..plain].join(", ")
        );
    }
    let sizes: Vec<String> = (1..=generics.len()).map(|n| n.to_string()).collect();
    let _ = writeln!(
        s,
        "    generic_names::<{}>().build().expect(\"generic_names builds\");",
        sizes.join(", ")
    );
    s.push_str("}\n");
    s
}

#[test]
fn hygiene_case_tries_every_generated_name() {
    let (values, generics) = generated_names();
    // The expansion's own locals are among them; had the reading of names failed, they would
    // not be.
    for known in ["__kernel", "__k", "size", "f"] {
        assert!(values.contains(known), "`{known}` not found in {values:?}");
    }
    for known in crate::interface::GENERIC_NAMES {
        assert!(
            generics.contains(known) || known == "__b",
            "`{known}` not found in {generics:?}"
        );
    }
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../wgsl-dsl/tests/ui/pass/hygiene.rs"
    );
    let want = render(&values, &generics);
    if std::env::var("WGSL_DSL_HYGIENE").as_deref() == Ok("overwrite") {
        std::fs::write(path, &want).expect("writes the pass case");
        return;
    }
    let have = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        have == want,
        "{path} does not try every name the macros generate (now {} value names, {} generic \
         names); regenerate it: WGSL_DSL_HYGIENE=overwrite cargo test -p wgsl-dsl-macros hygiene",
        values.len(),
        generics.len()
    );
}
