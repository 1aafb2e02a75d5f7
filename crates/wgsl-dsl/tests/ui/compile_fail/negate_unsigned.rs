use wgsl_dsl::prelude::*;

fn main() {
    let x: Exp<u32> = lit(3u32);
    let _ = -x;
}
