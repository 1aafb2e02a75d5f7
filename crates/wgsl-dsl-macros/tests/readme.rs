//! The README's example is the one `cargo run -p wgsl-dsl-macros --example readme` runs (issue
//! 26: "the macros crate's example runs as its README says"): the README's Rust is the
//! example's code, and the WGSL pasted under it is what the example prints, in this crate's
//! README.

use wgsl_dsl::prelude::*;

// The example's code: `cargo run -p wgsl-dsl-macros --example readme` runs this same file.
include!("../examples/readme/sgd_step.rs");

/// The fenced blocks of `lang` in `markdown`, in order.
fn blocks<'a>(markdown: &'a str, lang: &str) -> Vec<&'a str> {
    let fence = format!("```{lang}\n");
    markdown
        .split(&fence)
        .skip(1)
        .filter_map(|rest| rest.split("\n```").next())
        .collect()
}

/// The code of the example, between its imports and its `main`.
fn example_code() -> String {
    include_str!("../examples/readme/sgd_step.rs")
        .trim()
        .to_string()
}

#[test]
fn the_readme_shows_the_example_and_its_output() {
    assert!(
        include_str!("../examples/readme/main.rs").contains("include!(\"sgd_step.rs\");"),
        "the example runs the code this test builds"
    );
    let wgsl = sgd_step().build().expect("the example builds").wgsl;
    // The crate's README (the repository's README, rewritten for newcomers, shows saxpy
    // instead, and no longer this example: checking it there failed on main).
    let (name, markdown) = (
        "crates/wgsl-dsl-macros/README.md",
        include_str!("../README.md"),
    );
    let code = example_code();
    assert!(
        blocks(markdown, "rust").iter().any(|b| b.trim() == code),
        "{name}: no Rust block is the example's code:\n{code}"
    );
    let printed = blocks(markdown, "wgsl");
    assert!(
        printed.iter().any(|b| b.trim_end() == wgsl.trim_end()),
        "{name}: no WGSL block is the example's output:\n{wgsl}"
    );
    assert!(
        markdown.contains("cargo run -p wgsl-dsl-macros --example readme"),
        "{name} gives the command"
    );
}
