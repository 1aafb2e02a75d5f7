//! Kernels with backward passes (`wgsl_dsl::autodiff`): derived ones, one per construct kernel
//! AD handles (straight-line code, `let`/`var`, `if`, early `return`s, helper functions,
//! unrolled loops, both accumulation schemes), and a tiled product with workgroup memory whose
//! backward pass is written by hand ([`Backward::custom`]). Each has random data of odd sizes
//! and its grid.
//!
//! `tests/autodiff_kernels.rs` checks every backward pass against central differences of its
//! forward kernel with `wgsl_dsl::autodiff::check`, on the interpreter (its race, bounds and
//! barrier checks passing) and on the GPU; `tests/snapshots.rs` pins every backward kernel's
//! WGSL (suite `derived`).

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use wgsl_dsl::autodiff::{Accumulation, Backward, BackwardKernel, Data, Derive, Role, derive};
use wgsl_dsl::prelude::*;
use wgsl_dsl::{BuildError, KernelBuilder};

/// The kernels of `crates/wgsl-dsl/examples/fit.rs` (a model fitted by gradient descent
/// with a derived gradient).
#[path = "../../wgsl-dsl/examples/fit_model/mod.rs"]
pub mod fit;

/// Data for every binding of a forward kernel, by name, and the grid to dispatch it over.
pub type CaseData = (Vec<(&'static str, Data)>, [u32; 3]);

/// A forward kernel, its backward pass, and data to check them on.
#[derive(Debug, Clone, Copy)]
pub struct DerivedCase {
    /// The forward kernel's name.
    pub name: &'static str,
    /// Builds the forward kernel.
    pub forward: fn() -> KernelBuilder,
    /// Its backward pass.
    pub backward: fn() -> Result<Backward, BuildError>,
    /// Data for every binding of the forward kernel (odd sizes, values away from kinks), and
    /// the grid.
    pub data: fn(&mut StdRng) -> CaseData,
}

/// Every case.
pub fn all() -> Vec<DerivedCase> {
    vec![
        DerivedCase {
            name: "branches",
            forward: branches,
            backward: || derive(&branches(), &Derive::new()),
            data: |r| {
                let n = 77;
                (
                    vec![
                        ("x", Data::F32(away_from_zero(r, n, 2.0))),
                        ("w", Data::F32(uniform(r, n, 1.0))),
                        ("scale", Data::F32(vec![1.25])),
                        ("y", Data::F32(vec![0.0; n])),
                    ],
                    [2, 1, 1],
                )
            },
        },
        DerivedCase {
            name: "dense_tanh",
            forward: || dense_tanh(5),
            // Each invocation reads its own row of `w`: exclusive is race-free there too
            // (the interpreter checks), where the automatic choice is atomic.
            backward: || {
                derive(
                    &dense_tanh(5),
                    &Derive::new().accumulate("w", Accumulation::Exclusive),
                )
            },
            data: |r| {
                let (rows, k) = (45, 5);
                (
                    vec![
                        ("w", Data::F32(uniform(r, rows * k, 0.5))),
                        ("x", Data::F32(uniform(r, k, 1.0))),
                        ("b", Data::F32(uniform(r, rows, 0.5))),
                        ("y", Data::F32(vec![0.0; rows])),
                    ],
                    [1, 1, 1],
                )
            },
        },
        DerivedCase {
            name: "returns",
            forward: returns,
            backward: || derive(&returns(), &Derive::new()),
            data: |r| {
                let n = 53;
                // away from the branch points -1, 1 and 1.5
                let x = (0..n)
                    .map(|_| {
                        loop {
                            let v: f32 = r.random_range(-2.5..2.5);
                            if [-1.0f32, 1.0, 1.5].iter().all(|k| (v - k).abs() > 0.05) {
                                break v;
                            }
                        }
                    })
                    .collect();
                (
                    vec![("x", Data::F32(x)), ("y", Data::F32(vec![0.0; n]))],
                    [1, 1, 1],
                )
            },
        },
        DerivedCase {
            name: "horner",
            forward: || horner(6),
            backward: || derive(&horner(6), &Derive::new()),
            data: |r| {
                let n = 39;
                (
                    vec![
                        ("x", Data::F32(uniform(r, n, 1.2))),
                        ("c", Data::F32(uniform(r, 6, 1.0))),
                        ("y", Data::F32(vec![0.0; n])),
                    ],
                    [1, 1, 1],
                )
            },
        },
        DerivedCase {
            name: "fit_squared_error",
            forward: fit::squared_error,
            backward: fit::squared_error_backward,
            data: |r| {
                let n = 41;
                (
                    vec![
                        ("p", Data::F32(vec![1.0, 1.6, 0.2, -0.1])),
                        ("x", Data::F32(uniform(r, n, 3.0))),
                        ("t", Data::F32(uniform(r, n, 2.0))),
                        ("loss", Data::F32(vec![0.0; n])),
                    ],
                    [1, 1, 1],
                )
            },
        },
        DerivedCase {
            name: "scatter_add",
            forward: scatter_add,
            backward: || derive(&scatter_add(), &Derive::new()),
            data: |r| {
                let (n, bins) = (37, SCATTER_BINS);
                let idx = (0..n).map(|_| r.random_range(0..bins as u32)).collect();
                (
                    vec![
                        ("x", Data::F32(uniform(r, n, 2.0))),
                        ("s", Data::F32(uniform(r, SCATTER_PERIOD, 1.0))),
                        ("idx", Data::U32(idx)),
                        ("out", Data::U32(vec![0; bins])),
                    ],
                    [5, 1, 1],
                )
            },
        },
        DerivedCase {
            name: "tiled_product_13x11x7",
            forward: || tiled_product(PRODUCT),
            backward: || Ok(product_backward(PRODUCT)),
            data: |r| {
                let Shape { m, n, k } = PRODUCT;
                (
                    vec![
                        ("a", Data::F32(uniform(r, m * k, 1.0))),
                        ("b", Data::F32(uniform(r, k * n, 1.0))),
                        ("c", Data::F32(vec![0.0; m * n])),
                    ],
                    product_grid(PRODUCT),
                )
            },
        },
    ]
}

/// Every kernel here, for the snapshot test: each case's forward kernel and backward
/// kernels, and the fit example's step kernel.
pub fn snapshot_kernels() -> Result<Vec<KernelBuilder>, BuildError> {
    let mut v = Vec::new();
    for case in all() {
        v.push((case.forward)());
        v.extend((case.backward)()?.kernels.into_iter().map(|b| b.kernel));
    }
    v.push(fit::descend());
    Ok(v)
}

fn uniform(r: &mut StdRng, n: usize, scale: f32) -> Vec<f32> {
    (0..n).map(|_| r.random_range(-scale..scale)).collect()
}

fn away_from_zero(r: &mut StdRng, n: usize, scale: f32) -> Vec<f32> {
    (0..n)
        .map(|_| {
            let v: f32 = r.random_range(0.05..scale);
            if r.random_bool(0.5) { v } else { -v }
        })
        .collect()
}

/// The bins [`scatter_add`]'s data adds into, and the period of its weights `s`.
pub const SCATTER_BINS: usize = 6;
/// See [`SCATTER_BINS`].
pub const SCATTER_PERIOD: usize = 5;

/// `out[idx[i]] += sin(x[i]) * s[i % 5]` for every `i < len(x)`, one invocation each (a
/// weighted histogram: many invocations add into one bin): `f32` additions into an
/// `array<atomic<u32>>` of bits (`atomic_add_f32`), `idx` integer data. Its derived gradients:
/// `d_x[i] = d_out[idx[i]] cos(x[i]) s[i % 5]`, `d_s[j] = sum over i % 5 = j of
/// d_out[idx[i]] sin(x[i])`.
pub fn scatter_add() -> KernelBuilder {
    let mut k = KernelBuilder::new("scatter_add", [8, 1, 1]);
    let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    let s = k.storage::<RuntimeArray<f32>, ReadOnly>("s");
    let idx = k.storage::<RuntimeArray<u32>, ReadOnly>("idx");
    let out = k.storage::<RuntimeArray<Atomic<u32>>, ReadWrite>("out");
    let i = k.let_("i", global_invocation_id().x());
    k.if_(i.lt(x.len()), |k| {
        let bin = k.let_("bin", idx.at(&i).load());
        let w = s.at(&i % SCATTER_PERIOD as u32).load();
        k.atomic_add_f32(&out.at(&bin), sin(x.at(&i).load()) * w);
    });
    k
}

/// A random generator for a case's data.
pub fn rng(seed: u64) -> StdRng {
    StdRng::seed_from_u64(seed)
}

/// `y[i] = smooth(acc) + x[i] w[i]` with `acc` a `var` set by an `if` on `x[i]`, `smooth` a
/// helper function with its own `var` and `if`, after a guard that returns.
pub fn branches() -> KernelBuilder {
    let mut k = KernelBuilder::new("branches", [64, 1, 1]);
    let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    let w = k.storage::<RuntimeArray<f32>, ReadOnly>("w");
    let scale = k.uniform::<f32>("scale");
    let y = k.storage::<RuntimeArray<f32>, ReadWrite>("y");
    let smooth = k.function::<(f32,), f32>("smooth", ["a"], |k, (a,)| {
        let r = k.var("r", a.clone());
        k.if_(a.gt(1.0f32), |k| k.store(&r, log(&a) + 1.0f32));
        r.load() * r.load()
    });
    let i = k.let_("i", global_invocation_id().x());
    k.if_(i.ge(y.len()), |k| k.return_());
    let v = k.let_("v", x.at(&i).load());
    let wi = k.let_("wi", w.at(&i).load());
    let acc = k.var("acc", &v * &wi);
    k.if_else(
        v.gt(0.0f32),
        |k| k.store(&acc, acc.load() + exp(-&v) * scale.load()),
        |k| k.store(&acc, acc.load() * 0.5f32 + sin(&wi)),
    );
    let h = k.call(&smooth, (acc.load(),));
    k.store(&y.at(&i), h + &v * &wi);
    k
}

/// `y[i] = tanh(sum_{j < K} w[i K + j] x[j] + b[i])`, the loop over `j` unrolled (`K` is a
/// Rust value, known when the kernel is built).
pub fn dense_tanh(k_len: u32) -> KernelBuilder {
    let mut k = KernelBuilder::new("dense_tanh", [64, 1, 1]);
    let w = k.storage::<RuntimeArray<f32>, ReadOnly>("w");
    let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    let b = k.storage::<RuntimeArray<f32>, ReadOnly>("b");
    let y = k.storage::<RuntimeArray<f32>, ReadWrite>("y");
    let i = k.let_("i", global_invocation_id().x());
    k.if_(i.lt(y.len()), |k| {
        let acc = k.var("acc", b.at(&i).load());
        k.for_range("j", 0u32, k_len, |k, j| {
            k.store(
                &acc,
                acc.load() + w.at(&i * k_len + &j).load() * x.at(&j).load(),
            );
        });
        k.store(&y.at(&i), tanh(acc.load()));
    });
    k
}

/// Early `return`s at two depths: `y[i]` is `0.5 x` below -1, `sqrt(x)` above 1.5,
/// `2 x^2 + x` in `(1, 1.5]`, `x^2 + x` elsewhere.
pub fn returns() -> KernelBuilder {
    let mut k = KernelBuilder::new("returns", [64, 1, 1]);
    let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    let y = k.storage::<RuntimeArray<f32>, ReadWrite>("y");
    let i = k.let_("i", global_invocation_id().x());
    k.if_(i.ge(y.len()), |k| k.return_());
    let v = k.let_("v", x.at(&i).load());
    k.if_(v.lt(-1.0f32), |k| {
        k.store(&y.at(&i), &v * 0.5f32);
        k.return_();
    });
    let t = k.var("t", &v * &v);
    k.if_(v.gt(1.0f32), |k| {
        k.if_(v.gt(1.5f32), |k| {
            k.store(&y.at(&i), sqrt(&v));
            k.return_();
        });
        k.store(&t, t.load() * 2.0f32);
    });
    k.store(&y.at(&i), t.load() + &v);
    k
}

/// Horner's rule `y[i] = sum_j c[j] x[i]^j` over `degree` coefficients, counting down
/// (`(0..degree).rev()`: a `loop` with `break if`, unrolled).
pub fn horner(degree: u32) -> KernelBuilder {
    let mut k = KernelBuilder::new("horner", [64, 1, 1]);
    let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    let c = k.storage::<RuntimeArray<f32>, ReadOnly>("c");
    let y = k.storage::<RuntimeArray<f32>, ReadWrite>("y");
    let i = k.let_("i", global_invocation_id().x());
    k.if_(i.lt(y.len()), |k| {
        let v = k.let_("v", x.at(&i).load());
        let acc = k.var("acc", 0.0f32);
        k.for_in(
            "j",
            wgsl_dsl::kernel::LoopRange::new(0u32, degree).rev(),
            |k, j| k.store(&acc, acc.load() * &v + c.at(&j).load()),
        );
        k.store(&y.at(&i), acc.load());
    });
    k
}

/// The sizes of a product `C[m, n] = A[m, k] B[k, n]` (row-major).
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    /// Rows of `A` and `C`.
    pub m: usize,
    /// Columns of `B` and `C`.
    pub n: usize,
    /// The inner dimension.
    pub k: usize,
}

/// The product the case checks: odd sizes, `k <= n`, `k <= m` (its backward kernels run over
/// the forward grid).
pub const PRODUCT: Shape = Shape { m: 13, n: 11, k: 7 };

/// The kernel, shared with `crates/wgsl-dsl/tests/autodiff_shared.rs`.
#[path = "../../wgsl-dsl/tests/common/tiled_product.rs"]
mod tiled;

use tiled::TILE;

/// Workgroups of the tiled product: one per `TILE x TILE` tile of `C`.
pub fn product_grid(s: Shape) -> [u32; 3] {
    [(s.n as u32).div_ceil(TILE), (s.m as u32).div_ceil(TILE), 1]
}

/// `c = a b` with `TILE x TILE` tiles of `a` and `b` staged in workgroup memory, a barrier
/// after each staging. Kernel AD derives it (phases reversed, adjoint tiles in workgroup
/// memory, `docs/autodiff.md`); [`product_backward`] is its backward pass written by hand,
/// which the derived one is checked and timed against (`ad_product_bench`).
pub fn tiled_product(s: Shape) -> KernelBuilder {
    tiled::tiled_product(s.m as u32, s.n as u32, s.k as u32)
}

/// The backward pass of [`tiled_product`], written by hand (a custom derivative, Slang's
/// `[BackwardDerivative]`): `d_a = d_c b^T` and `d_b = a^T d_c`, each element written once by
/// the invocation at its position in the forward grid.
pub fn product_backward(s: Shape) -> Backward {
    let (m, n, kk) = (s.m as u32, s.n as u32, s.k as u32);
    let size = [TILE, TILE, 1];
    // d_a[r, j] = sum_q d_c[r, q] b[j, q], at the invocation (x = j, y = r).
    let mut ka = KernelBuilder::new(format!("tiled_product_{m}x{n}x{kk}_backward_a"), size);
    let b = ka.storage::<RuntimeArray<f32>, ReadOnly>("b");
    let dc = ka.storage::<RuntimeArray<f32>, ReadOnly>("d_c");
    let da = ka.storage::<RuntimeArray<f32>, ReadWrite>("d_a");
    let j = ka.let_("j", global_invocation_id().x());
    let r = ka.let_("r", global_invocation_id().y());
    ka.if_(r.lt(m).and(j.lt(kk)), |k| {
        let acc = k.var("acc", 0.0f32);
        k.for_range("q", 0u32, n, |k, q| {
            k.store(
                &acc,
                acc.load() + dc.at(&r * n + &q).load() * b.at(&j * n + &q).load(),
            );
        });
        k.store(&da.at(&r * kk + &j), acc.load());
    });
    // d_b[j, q] = sum_r a[r, j] d_c[r, q], at the invocation (x = q, y = j).
    let mut kb = KernelBuilder::new(format!("tiled_product_{m}x{n}x{kk}_backward_b"), size);
    let a = kb.storage::<RuntimeArray<f32>, ReadOnly>("a");
    let dc = kb.storage::<RuntimeArray<f32>, ReadOnly>("d_c");
    let db = kb.storage::<RuntimeArray<f32>, ReadWrite>("d_b");
    let q = kb.let_("q", global_invocation_id().x());
    let j = kb.let_("j", global_invocation_id().y());
    kb.if_(j.lt(kk).and(q.lt(n)), |k| {
        let acc = k.var("acc", 0.0f32);
        k.for_range("r", 0u32, m, |k, r| {
            k.store(
                &acc,
                acc.load() + a.at(&r * kk + &j).load() * dc.at(&r * n + &q).load(),
            );
        });
        k.store(&db.at(&j * n + &q), acc.load());
    });
    let data = |b: &str| {
        (
            b.to_string(),
            Role::Data {
                binding: b.to_string(),
            },
        )
    };
    let grad_c = || {
        (
            "d_c".to_string(),
            Role::OutputGradient { output: "c".into() },
        )
    };
    Backward::custom(vec![
        BackwardKernel {
            kernel: ka,
            roles: vec![
                data("b"),
                grad_c(),
                (
                    "d_a".into(),
                    Role::InputGradient {
                        input: "a".into(),
                        accumulation: Accumulation::Write,
                    },
                ),
            ],
        },
        BackwardKernel {
            kernel: kb,
            roles: vec![
                data("a"),
                grad_c(),
                (
                    "d_b".into(),
                    Role::InputGradient {
                        input: "b".into(),
                        accumulation: Accumulation::Write,
                    },
                ),
            ],
        },
    ])
}
