//! The README's example: `cargo run -p wgsl-dsl-macros --example readme` prints the WGSL
//! pasted next to it.
use wgsl_dsl::prelude::*;

// The README shows this file (`the_readme_shows_the_example_and_its_output` checks it).
include!("sgd_step.rs");

fn main() -> Result<(), BuildError> {
    print!("{}", sgd_step().build()?.wgsl);
    Ok(())
}
