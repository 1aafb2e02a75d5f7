//! Reverse mode through a subexpression shared by 1k, 10k and 100k uses: the time of
//! `KernelBuilder::grad`, linear in the uses (each node's adjoint is summed, then passed on,
//! once). `cargo bench -p wgsl-dsl --bench autodiff`.

use criterion::{BatchSize, BenchmarkId, Criterion, criterion_group, criterion_main};
use wgsl_dsl::prelude::*;

#[path = "../tests/autodiff_support/pairwise.rs"]
mod pairwise;

use pairwise::pairwise_sum;

/// The kernel so far and `y = sum_j c_j s`, `s` a subtree of 30 nodes shared by `uses` uses
/// (summed pairwise), with the variable `x`.
fn setup(uses: usize) -> (KernelBuilder, Exp<f32>, Exp<f32>) {
    let mut k = KernelBuilder::new("shared", [1, 1, 1]);
    let input = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    let x = k.let_("x", input.at(0u32).load());
    let mut s = x.clone();
    for _ in 0..10 {
        s = sin(&s) * &x + &s * 0.5f32;
    }
    let y = pairwise_sum((0..uses).map(|j| &s * (1.0 + j as f32)).collect()).expect("uses > 0");
    (k, x, y)
}

fn shared_uses(c: &mut Criterion) {
    let mut group = c.benchmark_group("grad_of_shared_subexpression");
    group.sample_size(10);
    for uses in [1_000usize, 10_000, 100_000] {
        group.bench_with_input(BenchmarkId::from_parameter(uses), &uses, |b, &uses| {
            b.iter_batched(
                || setup(uses),
                |(mut k, x, y)| {
                    let dx = k.grad(&y, &x);
                    (k, dx)
                },
                BatchSize::LargeInput,
            );
        });
    }
    group.finish();
}

criterion_group!(benches, shared_uses);
criterion_main!(benches);
