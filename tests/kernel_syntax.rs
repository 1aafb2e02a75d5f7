//! The `#[kernel]` syntax forms beyond the basic ones, each checked on the GPU against the
//! same Rust run on the CPU: loops over `i32` and `u32`, inclusive ranges, `.rev()`,
//! `.step_by()` and their compositions (also at the limits of the counter type), `match` on
//! integers (statement and value, ranges, `|`, `break`/`continue` in arms), `if` as a value
//! (`select` and `var` forms), `#[unroll]` loops, and an entry point whose name ends in a digit.
//!
//! One kernel computes every form per invocation into its own output slot (`SLOTS` per
//! invocation), so the whole file is one pipeline and one dispatch; the CPU reference is
//! [`reference`], the same loops in plain Rust with WGSL's wrapping arithmetic.

#[path = "common/slots.rs"]
mod slots;

use rand::{Rng, SeedableRng};
use slots::{assert_slots_eq, dispatch_poisoned};
use wgsl_dsl::prelude::*;
use wgsl_dsl::runtime::{Gpu, GpuBuffer};

const SLOTS: u32 = 16;
const TAPS: u32 = 4;

#[kernel(workgroup_size = 64)]
fn syntax2(
    #[uniform] count: u32,
    #[storage(read)] x: &[i32],
    #[storage(read_write)] out: &mut [i32],
    #[builtin(global_invocation_id)] gid: Vec3<u32>,
) {
    let i = gid.x;
    // Not `x.len()`: a buffer of 1 element is allocated (and `arrayLength`ed) as 4.
    let n = count;
    if i >= n {
        return;
    }
    let a = x[i];
    let b = x[(i + 1) % n];
    let lo = a.min(b);
    let hi = a.max(b);
    let o = i * SLOTS;

    // 0: an inclusive range of negative literals (an `i32` counter).
    let mut acc = 0;
    for d in -1..=1 {
        acc += a * d + d;
    }
    out[o] = acc;

    // 1: `lo..=hi`.
    let mut acc = 0;
    for j in lo..=hi {
        acc += j;
    }
    out[o + 1] = acc;

    // 2: `(lo..hi).rev()`: the order shows in the hash.
    let mut acc = 0;
    for j in (lo..hi).rev() {
        acc = acc * 3 + j;
    }
    out[o + 2] = acc;

    // 3: `(lo..=hi).rev().step_by(3)`.
    let mut acc = 0;
    for j in (lo..=hi).rev().step_by(3) {
        acc = acc * 3 + j;
    }
    out[o + 3] = acc;

    // 4: `(lo..hi).step_by(2).rev()`.
    let mut acc = 0;
    for j in (lo..hi).step_by(2).rev() {
        acc = acc * 3 + j;
    }
    out[o + 4] = acc;

    // 5: `(lo..hi).step_by(4)` (WGSL's `for` shape).
    let mut acc = 0;
    for j in (lo..hi).step_by(4) {
        acc = acc * 5 + j;
    }
    out[o + 5] = acc;

    // 6: a `u32` counter, `(0..k).rev()` with `k` from the data, and `(k..=k + 3).step_by(2)`.
    let k = (a & 15).to_u32();
    let mut acc = 0u32;
    for j in (0..k).rev() {
        acc = acc * 7 + j;
    }
    for j in (k..=k + 3).step_by(2) {
        acc = acc * 7 + j;
    }
    out[o + 6] = acc.to_i32();

    // 7: inclusive ranges ending at the type's maximum end (Rust semantics, no wrap).
    let mut count = 0;
    for _j in (2147483647 - (a & 3))..=2147483647 {
        count += 1;
    }
    for _j in (4294967295u32 - (b & 3).to_u32())..=4294967295u32 {
        count += 10;
    }
    for j in ((2147483647 - 5)..=2147483647).step_by(4) {
        count += j - 2147483640;
    }
    out[o + 7] = count;

    // 8: `match` as a value: literals, negative literals, ranges, `|`, `_`.
    let m = match a {
        -3..=3 => 1,
        10 | 11 | -10 => 2,
        12..15 => a * 2,
        _ => 3,
    };
    out[o + 8] = m;

    // 9: `match` as a statement in a loop: `break` and `continue` leave and continue the loop.
    let mut acc = 0;
    for j in 0..10 {
        match (a + j) & 7 {
            0 => break,
            1 | 2 => continue,
            3 => {
                acc += 100;
            }
            _ => {}
        }
        acc += j;
    }
    out[o + 9] = acc;

    // 10: `if` as a value of plain expressions (`select`).
    let v = if a > b { a } else { b - 1 };
    out[o + 10] = v;

    // 11: `if` / `else if` as a value with statements in an arm (a `var`).
    let w = if a > 5 {
        let t = a * 2;
        t + 1
    } else if a < -5 {
        -a
    } else {
        7
    };
    out[o + 11] = w;

    // 12: `#[unroll]`: the body recorded once per tap, the tap a literal.
    let mut acc = 0;
    #[unroll]
    for t in 0..TAPS {
        acc += x[(i + t) % n] * (t as i32 + 1);
    }
    out[o + 12] = acc;

    // 13: parentheses before a method (no `unused_parens` from the expansion).
    out[o + 13] = (a + b - 1).clamp(-5, 5);

    // 14: a value `match` inside an unrolled loop, and a nested value `if`.
    let mut acc = 0;
    #[unroll]
    for t in (0..3).rev() {
        acc = acc * 4
            + match (a + t) & 3 {
                0 => {
                    if b > 0 {
                        1
                    } else {
                        2
                    }
                }
                _ => 3,
            };
    }
    out[o + 14] = acc;

    // 15: a `match` whose arms run loops, in a `while`.
    let mut acc = 0;
    let mut j = 0;
    while j < 4 {
        match j {
            0 => {
                for q in 0..=(a & 3) {
                    acc += q;
                }
            }
            1..=2 => acc *= 2,
            _ => acc -= 1,
        }
        j += 1;
    }
    out[o + 15] = acc;
}

/// The same computation in plain Rust, with WGSL's wrapping integer arithmetic.
fn reference(x: &[i32]) -> Vec<i32> {
    let n = x.len();
    let mut out = vec![0; n * SLOTS as usize];
    for i in 0..n {
        let a = x[i];
        let b = x[(i + 1) % n];
        let (lo, hi) = (a.min(b), a.max(b));
        let o = &mut out[i * SLOTS as usize..(i + 1) * SLOTS as usize];
        o[0] = (-1..=1).map(|d| a * d + d).sum();
        o[1] = (lo..=hi).sum();
        o[2] = (lo..hi)
            .rev()
            .fold(0i32, |h, j| h.wrapping_mul(3).wrapping_add(j));
        o[3] = (lo..=hi)
            .rev()
            .step_by(3)
            .fold(0i32, |h, j| h.wrapping_mul(3).wrapping_add(j));
        o[4] = (lo..hi)
            .step_by(2)
            .rev()
            .fold(0i32, |h, j| h.wrapping_mul(3).wrapping_add(j));
        o[5] = (lo..hi)
            .step_by(4)
            .fold(0i32, |h, j| h.wrapping_mul(5).wrapping_add(j));
        let k = (a & 15) as u32;
        let mut acc = (0..k)
            .rev()
            .fold(0u32, |h, j| h.wrapping_mul(7).wrapping_add(j));
        for j in (k..=k + 3).step_by(2) {
            acc = acc.wrapping_mul(7).wrapping_add(j);
        }
        o[6] = acc as i32;
        let mut count = ((i32::MAX - (a & 3))..=i32::MAX).count() as i32;
        count += 10 * ((u32::MAX - (b & 3) as u32)..=u32::MAX).count() as i32;
        for j in ((i32::MAX - 5)..=i32::MAX).step_by(4) {
            count += j - 2147483640;
        }
        o[7] = count;
        o[8] = match a {
            -3..=3 => 1,
            10 | 11 | -10 => 2,
            12..15 => a * 2,
            _ => 3,
        };
        let mut acc = 0;
        for j in 0..10 {
            match (a + j) & 7 {
                0 => break,
                1 | 2 => continue,
                3 => acc += 100,
                _ => {}
            }
            acc += j;
        }
        o[9] = acc;
        o[10] = if a > b { a } else { b - 1 };
        o[11] = if a > 5 {
            a * 2 + 1
        } else if a < -5 {
            -a
        } else {
            7
        };
        o[12] = (0..TAPS as usize)
            .map(|t| x[(i + t) % n] * (t as i32 + 1))
            .sum();
        o[13] = (a + b - 1).clamp(-5, 5);
        let mut acc = 0;
        for t in (0..3).rev() {
            let v = match (a + t) & 3 {
                0 => {
                    if b > 0 {
                        1
                    } else {
                        2
                    }
                }
                _ => 3,
            };
            acc = acc * 4 + v;
        }
        o[14] = acc;
        let mut acc = 0;
        for j in 0..4 {
            match j {
                0 => acc += (0..=(a & 3)).sum::<i32>(),
                1..=2 => acc *= 2,
                _ => acc -= 1,
            }
        }
        o[15] = acc;
    }
    out
}

#[test]
fn syntax_forms_match_rust_on_the_gpu() {
    let gpu = Gpu::new().expect("a GPU adapter (CI installs lavapipe)");
    let kernel = gpu.compile_typed(Syntax2).expect("compiles");
    // The entry point's name ends in a digit: naga writes it `syntax2_`, the runtime runs it.
    let shader = syntax2().build().expect("builds");
    assert_eq!(shader.signature.name, "syntax2");
    assert_eq!(shader.signature.entry_point, "syntax2_");
    assert!(shader.wgsl.contains("fn syntax2_("));
    let mut rng = rand::rngs::StdRng::seed_from_u64(13);
    for n in [1usize, 37, 65] {
        let x: Vec<i32> = (0..n).map(|_| rng.random_range(-20..20)).collect();
        let xb = GpuBuffer::from_slice(&gpu, &x).expect("upload");
        let count = GpuBuffer::from_value(&gpu, n as u32).expect("upload");
        let got = dispatch_poisoned(&gpu, n * SLOTS as usize, i32::MIN, |out| {
            let args = Syntax2Args {
                count: &count,
                x: &xb,
                out,
            };
            kernel.dispatch(&gpu, args, [n as u32, 1, 1])
        });
        let want = reference(&x);
        assert_slots_eq(&got, &want, SLOTS as usize, |inv| {
            format!(
                "n = {n}, invocation {inv} (x = {}, next {})",
                x[inv],
                x[(inv + 1) % n]
            )
        });
    }
}

#[test]
fn unrolled_loops_fold_their_first_offset() {
    let wgsl = syntax2().build().expect("builds").wgsl;
    // The first tap reads `x[(i + 0u) % n]`: the `+ 0u` the expansion produced is folded.
    assert!(!wgsl.contains("+ 0u)"), "{wgsl}");
    assert!(wgsl.contains("x[(i % n)]"), "{wgsl}");
}
