//! The SIMT `f32` kernel: `C = op(A) op(B)` on the ordinary arithmetic units, the tiled product
//! of [`crate::tiled`] (the one the MLP's kernels are built from) over storage buffers.
//!
//! Bindings: `dims: GemmDims` (uniform), `a`, `b` (read-only storage, `array<vec4<f32>>` where
//! the stored rows are multiples of 4 long ([`SimtConfig::vector_a`]), else `array<f32>`,
//! stored as the [`Layout`](crate::Layout) says), `c` (read-write storage, `array<f32>`). Grid:
//! [`TileConfig::grid`](crate::config::TileConfig::grid), one workgroup per `tm x tn` tile of `C`, handed out in groups of
//! [`GROUP_M`](crate::config::GROUP_M) tile rows (as the tensor-core kernel does), so that
//! workgroups running together share rows of `A` and columns of `B` in the L2 cache.
//!
//! Everything else is [`tiled::product_at`]: each invocation computes `rm x rn` elements of its
//! workgroup's tile in registers, `K` walked `kg * tk` at a time through padded tiles of
//! workgroup memory, the next step's elements read into registers during the multiply-adds;
//! elements outside the matrices are zero and outputs outside `C` are not stored. With
//! [`SimtConfig::whole_tiles`] (problems the tiles divide) none of that is checked: no
//! per-element bounds, and the prefetch past the last step is one branch per step.
//! Accumulation: one `fma` per product, in `f32`, in `k` order within an invocation (and the
//! `kg` groups' partial sums added in group order).

use wgsl_dsl::prelude::*;

use crate::config::SimtConfig;
use crate::stage::{Global, Start};
use crate::tiled::{self, Output, Source, TileMemory, store_only};
use crate::{GemmDims, Problem};

/// Build the kernel for `config` (see the [module docs](self)). Check the configuration first
/// with [`TileConfig::valid`](crate::config::TileConfig::valid); an invalid one panics (a bug in the configuration, not user
/// input).
pub fn build(config: &SimtConfig) -> KernelBuilder {
    let c = *config;
    let mut k = KernelBuilder::new(c.kernel_name(), c.tiles.workgroup());
    let dims = k.uniform::<GemmDims>("dims");
    let a = Global::<f32>::declare(&mut k, "a", c.vector_a);
    let b = Global::<f32>::declare(&mut k, "b", c.vector_b);
    let out = k.storage::<RuntimeArray<f32>, ReadWrite>("c");
    let start = Start::new(&mut k, &dims);
    let (m, n, depth) = (start.m.clone(), start.n.clone(), start.depth.clone());
    // op(A) [M, K] is stored [M, K] row-major, or [K, M] when transposed; op(B) likewise.
    let a = source(&a, m.clone(), depth.clone(), !c.layout.a_transposed());
    let b = source(&b, depth.clone(), n.clone(), !c.layout.b_transposed());
    let (a, b) = if c.whole_tiles {
        (a.whole_tiles(), b.whole_tiles())
    } else {
        (a, b)
    };
    let memory = TileMemory::declare(&mut k, &[c.tiles]);
    tiled::product_at(
        &mut k,
        c.tiles,
        &memory,
        [start.tile_m.clone(), start.tile_n.clone()],
        a,
        b,
        lit(0u32),
        depth,
        store_only(|k: &mut KernelBuilder, o: &Output, _| {
            let store = |k: &mut KernelBuilder| {
                k.store(&out.at(&o.row * &n + &o.col), o.value.clone());
            };
            if c.whole_tiles {
                store(k);
            } else {
                k.if_(o.inside.clone(), store);
            }
        }),
    );
    k
}

/// The operand `[rows, cols]` in `global`, row-major if `cols_contiguous`, else transposed.
fn source(
    global: &Global<f32>,
    rows: Exp<u32>,
    cols: Exp<u32>,
    cols_contiguous: bool,
) -> Source<'_> {
    match global {
        Global::Scalar(b) => Source::buffer(b, rows, cols, None, cols_contiguous),
        Global::Vec4(b) => Source::buffer_vec4(b, rows, cols, cols_contiguous),
        Global::Pairs(_) | Global::Words(..) => {
            unreachable!("the SIMT kernel declares its operands by `Global::declare`")
        }
    }
}

/// [`build`] for the configuration [`SimtConfig::choose`] picks for `problem` on `target`.
pub fn build_for(problem: &Problem, target: &wgsl_dsl::TargetLimits) -> KernelBuilder {
    build(&SimtConfig::choose(problem, target))
}
