//! The CPU specification of the product and the error the kernels may make.
//!
//! `C[i][j] = sum_p op(A)[i][p] op(B)[p][j]`, computed in `f64` from the operands as the kernel
//! reads them (for `f16` inputs, the `f16` values). A kernel's result is accepted when, for
//! every element,
//!
//! `|C_gpu - C_exact| <= bound * sum_p |op(A)[i][p] op(B)[p][j]|`
//!
//! (the `f64` result stands for the exact one; its own error is far below the bounds).
//! For a sum of `K` products accumulated in floating point with unit roundoff `u`, in any order
//! and with or without fused multiply-adds, `bound = gamma_K = K u / (1 - K u)`
//! (Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., §3.1, eq. 3.5):
//!
//! - SIMT `f32`: `u = 2^-24` ([`simt_bound`]).
//! - Tensor cores, `f16` inputs: the products of two `f16` are exact in `f32`; the
//!   accumulation is `f32` but NVIDIA's tensor cores do not round each addition to nearest
//!   (they align and truncate within a multiply-add), so the bound takes `u = 2^-22`, four
//!   times `f32`'s ([`coop_bound`]).
//! - Tensor cores with `f32` inputs rounded to `f16` on the way in: against the product of the
//!   `f32` inputs, each product is also off by up to `2 u16 + u16^2`, `u16 = 2^-11`
//!   ([`coop_f32_input_bound`]).

use crate::Problem;

/// `gamma_k(u) = k u / (1 - k u)` (Higham eq. 3.5); infinite when `k u >= 1`.
pub fn gamma(k: u32, u: f64) -> f64 {
    let ku = f64::from(k) * u;
    if ku >= 1.0 {
        f64::INFINITY
    } else {
        ku / (1.0 - ku)
    }
}

/// The bound for the SIMT `f32` kernel: `gamma_K(2^-24)`.
pub fn simt_bound(k: u32) -> f64 {
    gamma(k, 2f64.powi(-24))
}

/// The bound for the tensor-core kernel against the product of its `f16` inputs:
/// `gamma_K(2^-22)`.
pub fn coop_bound(k: u32) -> f64 {
    gamma(k, 2f64.powi(-22))
}

/// The bound for the tensor-core kernel reading `f32` inputs, against the product of those
/// `f32` inputs: `2 u16 + u16^2 + gamma_K(2^-22)`, `u16 = 2^-11`.
pub fn coop_f32_input_bound(k: u32) -> f64 {
    let u16 = 2f64.powi(-11);
    2.0 * u16 + u16 * u16 + coop_bound(k)
}

/// Element `(i, j)` of `op(A) op(B)` and `sum_p |op(A)[i][p] op(B)[p][j]|`, in `f64`. `a` and
/// `b` are stored as the problem's layout says (row-major, transposed operands as
/// transposes).
pub fn element(problem: &Problem, a: &[f64], b: &[f64], i: usize, j: usize) -> (f64, f64) {
    let (m, n, k) = (problem.m as usize, problem.n as usize, problem.k as usize);
    let (mut sum, mut abs) = (0.0, 0.0);
    for p in 0..k {
        let x = if problem.layout.a_transposed() {
            a[p * m + i]
        } else {
            a[i * k + p]
        };
        let y = if problem.layout.b_transposed() {
            b[j * k + p]
        } else {
            b[p * n + j]
        };
        sum += x * y;
        abs += (x * y).abs();
    }
    (sum, abs)
}

/// The whole of `op(A) op(B)` `[M, N]` and the sums of absolute products, in `f64`.
pub fn product(problem: &Problem, a: &[f64], b: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let (m, n) = (problem.m as usize, problem.n as usize);
    let mut c = Vec::with_capacity(m * n);
    let mut abs = Vec::with_capacity(m * n);
    for i in 0..m {
        for j in 0..n {
            let (s, a) = element(problem, a, b, i, j);
            c.push(s);
            abs.push(a);
        }
    }
    (c, abs)
}

/// The worst element of a comparison: where, and its error relative to the element's sum of
/// absolute products.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Worst {
    /// Row.
    pub row: usize,
    /// Column.
    pub col: usize,
    /// The GPU's value.
    pub got: f32,
    /// The `f64` value.
    pub want: f64,
    /// `|got - want| / sum |products|` (0 where that sum is 0 and the values agree).
    pub relative: f64,
}

/// Compare the GPU's `c` with the specification at the elements `cells` (all of them when
/// `None`): the worst relative error, or the first element beyond `bound` (or not finite).
///
/// # Errors
/// A message naming the element, the values and the bound.
pub fn check(
    problem: &Problem,
    a: &[f64],
    b: &[f64],
    c: &[f32],
    bound: f64,
    cells: Option<&[(usize, usize)]>,
) -> Result<Worst, String> {
    let n = problem.n as usize;
    let all: Vec<(usize, usize)>;
    let cells = match cells {
        Some(c) => c,
        None => {
            all = (0..problem.m as usize)
                .flat_map(|i| (0..n).map(move |j| (i, j)))
                .collect();
            &all
        }
    };
    let mut worst = Worst {
        row: 0,
        col: 0,
        got: 0.0,
        want: 0.0,
        relative: 0.0,
    };
    for &(i, j) in cells {
        let (want, abs) = element(problem, a, b, i, j);
        let got = c[i * n + j];
        let err = (f64::from(got) - want).abs();
        let relative = if abs > 0.0 {
            err / abs
        } else if err == 0.0 {
            0.0
        } else {
            f64::INFINITY
        };
        if !got.is_finite() || relative > bound {
            return Err(format!(
                "C[{i}][{j}] = {got}, the specification gives {want} (error {err:.3e} = {relative:.3e} of the sum of |products| {abs:.3e}; bound {bound:.3e})"
            ));
        }
        if relative >= worst.relative {
            worst = Worst {
                row: i,
                col: j,
                got,
                want,
                relative,
            };
        }
    }
    Ok(worst)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Layout;

    #[test]
    fn the_layouts_read_the_stored_transposes() {
        // op(A) = [[1, 2], [3, 4]] (2x2), op(B) = [[5], [6]] (2x1).
        let ab = Problem::new(2, 1, 2, Layout::AB);
        let (c, abs) = product(&ab, &[1.0, 2.0, 3.0, 4.0], &[5.0, 6.0]);
        assert_eq!(c, vec![17.0, 39.0]);
        assert_eq!(abs, vec![17.0, 39.0]);
        let at_bt = Problem {
            layout: Layout::AtBt,
            ..ab
        };
        // A stored [K, M] = [[1, 3], [2, 4]]; B stored [N, K] = [[5, 6]].
        let (c, _) = product(&at_bt, &[1.0, 3.0, 2.0, 4.0], &[5.0, 6.0]);
        assert_eq!(c, vec![17.0, 39.0]);
    }

    #[test]
    fn check_accepts_rounding_and_rejects_errors_and_poison() {
        let p = Problem::new(1, 2, 3, Layout::AB);
        let a = [0.1, -0.2, 0.3];
        let b = [1.0, 2.0, -1.0, 0.5, 3.0, 1.5];
        let (c, _) = product(&p, &a, &b);
        let rounded: Vec<f32> = c.iter().map(|&x| x as f32).collect();
        assert!(check(&p, &a, &b, &rounded, simt_bound(3), None).is_ok());
        let mut wrong = rounded.clone();
        wrong[1] += 1e-3;
        assert!(check(&p, &a, &b, &wrong, simt_bound(3), None).is_err());
        let poisoned = vec![f32::NAN; 2];
        assert!(check(&p, &a, &b, &poisoned, 1.0, None).is_err());
    }

    #[test]
    fn bounds_grow_with_k_and_the_unit_roundoff() {
        assert!((simt_bound(1) / 2f64.powi(-24) - 1.0).abs() < 1e-6);
        assert!(coop_bound(4096) > simt_bound(4096) * 3.9);
        assert!(coop_f32_input_bound(64) > 2.0 * 2f64.powi(-11));
        assert!(gamma(1 << 25, 2f64.powi(-24)).is_infinite());
    }
}
