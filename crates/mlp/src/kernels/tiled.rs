//! The unfused linear kernels' product (the forward and the two backward products): the one
//! tiled product of [`wgsl_gemm::tiled`] with its [`LARGE`] tiles (32 x 32 outputs per workgroup,
//! 4 x 4 per invocation, `K` walked 16 at a time), over the whole of `K`, operands read from
//! storage buffers row-major or transposed.
//!
//! Elements outside `[M, K]` or `[K, N]` are loaded as zero and outputs outside `[M, N]` are
//! not stored, so any sizes work. Measured on lavapipe (2 cores), a default-model training
//! step at batch 128 takes about 60 ms with these tiles, 160 ms with 16 x 16 tiles and 2 x 2
//! per invocation, and 300 ms with 16 x 16 and one output per invocation.

use wgsl_dsl::prelude::*;

use wgsl_gemm::tiled::{LARGE, Output, Source, product, store_only};

/// The workgroup size of the unfused linear kernels: [`LARGE`]'s, `[8, 8, 1]`.
pub const WORKGROUP: [u32; 3] = [LARGE.tn / LARGE.rn, LARGE.tm / LARGE.rm, LARGE.kg];

/// Emit `C = A B` for `a [M, K]` and `b [K, N]` into `k`; `epilogue` is called for each of an
/// invocation's outputs inside `[M, N]` (`Output::inside`), to store it. Dispatch
/// [`tile_grid`]`(M, N)` workgroups of [`WORKGROUP`].
pub(crate) fn tiled_product(
    k: &mut KernelBuilder,
    a: Source<'_>,
    b: Source<'_>,
    epilogue: impl Fn(&mut KernelBuilder, &Output),
) {
    let k_end = a.cols.clone();
    product(
        k,
        LARGE,
        a,
        b,
        lit(0u32),
        k_end,
        store_only(|k: &mut KernelBuilder, out: &Output, _| {
            k.if_(out.inside.clone(), |k| epilogue(k, out));
        }),
    );
}

/// `[x, y, 1]` workgroups covering `C [rows, cols]` with [`LARGE`] tiles (`x` along columns).
pub fn tile_grid(rows: usize, cols: usize) -> [u32; 3] {
    LARGE.grid(rows, cols)
}
