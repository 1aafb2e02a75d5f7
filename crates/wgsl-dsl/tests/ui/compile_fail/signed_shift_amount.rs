use wgsl_dsl::prelude::*;

fn main() {
    let x: Exp<u32> = lit(3u32);
    let s: Exp<i32> = lit(1i32);
    let _ = x << s;
}
