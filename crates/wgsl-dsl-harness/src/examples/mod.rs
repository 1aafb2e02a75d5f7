//! The registry of example kernels. Every family of built-ins and every statement kind of the
//! DSL appears in at least one example.
//!
//! | example | covers |
//! |---|---|
//! | `saxpy` | uniform, `fma`, `if`/`return`, `let` |
//! | `activations` | `max min clamp saturate step` |
//! | `transcendental` | `exp exp2 log log2 pow sqrt inverseSqrt` |
//! | `trigonometry` | `sin cos tan asin acos atan atan2 sinh cosh tanh asinh acosh atanh` |
//! | `rounding` | `floor ceil round trunc fract sign abs` |
//! | `interpolation` | `mix smoothstep`, vector-scalar arithmetic |
//! | `vector_geometry` | vector construction, components, `dot cross length distance normalize` |
//! | `matrix_transform` | matrix construction, `mat * vec`, `transpose` |
//! | `integer_arith` | `i32` `/ % -`, `abs min max` |
//! | `defined_math` | `square powi` (scalars, vectors, integers), `to_i32_saturating to_u32_saturating` on NaN, infinities, range edges |
//! | `bit_ops` | `& \| ^ << >> ~`, `countOneBits countLeadingZeros countTrailingZeros firstLeadingBit firstTrailingBit reverseBits extractBits insertBits` |
//! | `conversions` | `f32() i32() u32() bitcast` |
//! | `logic_select` | `&& \|\| !`, `select`, vector comparisons, `any all` |
//! | `collatz` | `var`, `while`, `if`/`else`, assignment |
//! | `strided_sum` | `for` with a step, `loop`, `break`, `continue` |
//! | `helper_functions` | helper functions with parameters, results, early `return` |
//! | `workgroup_reduce` | `var<workgroup>`, `workgroupBarrier`, local/workgroup ids |
//! | `atomics` | `atomicAdd Sub Min Max And Or Xor Load Store CompareExchangeWeak` |
//! | `array_length` | `arrayLength`, reversed indexing |
//! | `packing` | `pack4x8snorm pack4x8unorm pack2x16snorm pack2x16unorm pack2x16float pack4xI8 pack4xU8 pack4xI8Clamp pack4xU8Clamp`, their `unpack*`, `dot4I8Packed dot4U8Packed` |
//! | `float_parts` | `modf frexp` (scalar and vector, struct results), `ldexp quantizeToF16` |
//! | `reflection` | `faceForward reflect refract`, `determinant` (2x2, 3x3, 4x4) |

mod control;
mod math;
mod memory;
mod packing;
mod support;

use crate::SeedableRng;

use crate::{Case, Example, Rng};

/// The seeds of the random cases every example is checked on.
pub const SEEDS: [u64; 2] = [1, 2];

/// Every example kernel.
pub fn all() -> Vec<Example> {
    let mut v = Vec::new();
    v.extend(math::examples());
    v.extend(control::examples());
    v.extend(memory::examples());
    v.extend(packing::examples());
    v
}

/// Runs `check` on the case of each of [`SEEDS`] of every example that `selected` keeps, and
/// panics listing every error `check` returns (with its seed) and how many examples failed.
#[track_caller]
pub fn check_all(
    selected: impl Fn(&Example) -> bool,
    check: impl Fn(&Example, &Case) -> Vec<String>,
) {
    let all = all();
    let mut failed = 0;
    let mut failures = Vec::new();
    for e in all.iter().filter(|e| selected(e)) {
        let before = failures.len();
        for seed in SEEDS {
            let case = (e.case)(&mut Rng::seed_from_u64(seed));
            failures.extend(
                check(e, &case)
                    .into_iter()
                    .map(|m| format!("{m} (seed {seed})")),
            );
        }
        failed += usize::from(failures.len() > before);
    }
    assert!(
        failures.is_empty(),
        "{failed} of {} examples failed:\n{}",
        all.len(),
        failures.join("\n")
    );
}
