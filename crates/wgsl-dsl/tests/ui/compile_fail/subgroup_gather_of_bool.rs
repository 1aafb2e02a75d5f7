// Found by the kernel fuzzer (crates/wgsl-dsl-fuzz): WGSL's subgroup broadcasts, shuffles and
// quad operations take numbers, and naga's validator rejected a `bool` the DSL had accepted.
use wgsl_dsl::prelude::*;

fn main() {
    let mut k = KernelBuilder::new("k", [32, 1, 1]);
    let flag = local_invocation_index().lt(4u32);
    let _ = k.subgroup_broadcast_first(flag.clone());
    let _ = k.quad_swap_x(flag);
}
