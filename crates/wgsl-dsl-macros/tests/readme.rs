//! The README's example is the one `cargo run -p wgsl-dsl-macros --example readme` runs (issue
//! 26: "the macros crate's example runs as its README says"): the README's Rust is the
//! example's code, and the WGSL pasted under it is what the example prints, in this crate's
//! README.

use wgsl_dsl::prelude::*;

// The example's code, copied: `the_readmes_show_the_example_and_its_output` checks that it is
// the example's, word for word (the example's items are private to it).
// --- the example's code ---
/// Hyperparameters of a momentum SGD step, shared by the host and the kernel.
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable, WgslStruct)]
#[repr(C)]
#[wgsl(uniform)]
struct Sgd {
    learning_rate: f32,
    momentum: f32,
    len: u32,
    _pad: u32,
}

#[kernel(workgroup_size = 64)]
fn sgd_step(
    #[uniform] hp: Sgd,
    #[storage(read)] grads: &[f32],
    #[storage(read_write)] params: &mut [f32],
    #[storage(read_write)] velocity: &mut [f32],
    #[builtin(global_invocation_id)] gid: Vec3<u32>,
) {
    let i = gid.x;
    if i >= hp.len {
        return;
    }
    let v = hp.momentum * velocity[i] + grads[i];
    velocity[i] = v;
    params[i] -= hp.learning_rate * v;
}
// --- end ---

/// The fenced blocks of `lang` in `markdown`, in order.
fn blocks<'a>(markdown: &'a str, lang: &str) -> Vec<&'a str> {
    let fence = format!("```{lang}\n");
    markdown
        .split(&fence)
        .skip(1)
        .filter_map(|rest| rest.split("\n```").next())
        .collect()
}

/// The code of the example between its imports and its `main`.
fn example_code() -> String {
    let source = include_str!("../examples/readme.rs");
    let start = source
        .find("/// Hyperparameters")
        .expect("the example's struct");
    let end = source.find("fn main()").expect("the example's main");
    source[start..end].trim().to_string()
}

/// This file's copy of it.
fn copied_code() -> String {
    let source = include_str!("readme.rs");
    let marker = "// --- the example's code ---\n";
    let start = source.find(marker).expect("the marker") + marker.len();
    let end = source.find("// --- end ---").expect("the end marker");
    source[start..end].trim().to_string()
}

#[test]
fn the_readme_shows_the_example_and_its_output() {
    assert_eq!(
        copied_code(),
        example_code(),
        "this test's copy of the example is stale"
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
