//! Print the WGSL of the README's kernel: `cargo run -p wgsl-dsl --example print_wgsl`.
use wgsl_dsl::prelude::*;

#[path = "kernels/saxpy.rs"]
mod saxpy;

fn main() -> Result<(), BuildError> {
    let shader = saxpy::saxpy().build()?;
    print!("{}", shader.wgsl);
    Ok(())
}
