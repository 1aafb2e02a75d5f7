use wgsl_dsl::prelude::*;

fn main() {
    let _ = sqrt(lit(4u32));
}
