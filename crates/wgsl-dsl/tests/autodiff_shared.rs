//! Kernel AD of workgroup memory and barriers: a block reduction
//! (`KernelBuilder::workgroup_reduce` of a nonlinear function), a tiled product, a permutation
//! through a shared tile. Each derived backward pass against central differences of its
//! forward kernel (`autodiff::check`) at odd sizes on the interpreter (race, bounds and
//! barrier checks on) and on the GPU; the product's and the permutation's gradients also
//! against `f64` closed forms; a barrier under a run-time condition refused at its line.

mod common;

use common::kernel_ad::{
    Case, TOLERANCE, assert_close, check_case, gradient, refused, run_backward, uniform,
};
use common::tiled_product::{TILE, tiled_product};

use rand::SeedableRng;
use rand::rngs::StdRng;
use wgsl_dsl::autodiff::{Backward, CheckOptions, Data, Derive, Executor, check, derive};
use wgsl_dsl::interp::Interpreter;
use wgsl_dsl::prelude::*;

/// `y[w] = sum over the workgroup's elements of sin(x) x` (zero past the end), by a tree
/// reduction in workgroup memory: six barrier-separated phases.
fn block_sum() -> KernelBuilder {
    let mut k = KernelBuilder::new("block_sum", [64, 1, 1]);
    let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    let y = k.storage::<RuntimeArray<f32>, ReadWrite>("y");
    let scratch = k.workgroup::<Array<f32, 64>>("scratch");
    let gid = k.let_("gid", global_invocation_id().x());
    let lid = k.let_("lid", local_invocation_index());
    let v = k.var("v", 0.0f32);
    k.if_(gid.lt(x.len()), |k| {
        let xi = k.let_("xi", x.at(&gid).load());
        k.store(&v, sin(&xi) * &xi);
    });
    let total = k.workgroup_reduce(&scratch, &lid, v.load(), |a, b| a + b);
    let total = k.let_("total", total);
    k.if_(lid.eq(0u32), |k| k.store(&y.at(workgroup_id().x()), &total));
    k
}

/// `y[l] = x[63 - l]` through a tile in workgroup memory (one workgroup).
fn reversed() -> KernelBuilder {
    let mut k = KernelBuilder::new("reversed", [64, 1, 1]);
    let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    let y = k.storage::<RuntimeArray<f32>, ReadWrite>("y");
    let tile = k.workgroup::<Array<f32, 64>>("tile");
    let l = k.let_("l", local_invocation_index());
    k.store(&tile.at(&l), x.at(&l).load());
    k.workgroup_barrier();
    k.store(&y.at(&l), tile.at(63u32 - &l).load());
    k
}

fn cases() -> Vec<Case> {
    let r = &mut StdRng::seed_from_u64(32);
    let n = 150;
    let (m, nn, kk) = (13u32, 11u32, 7u32);
    vec![
        Case {
            name: "block_sum",
            forward: block_sum(),
            backward: derive(&block_sum(), &Derive::new()).expect("derives"),
            data: vec![
                ("x", Data::F32(uniform(r, n, 2.0))),
                ("y", Data::F32(vec![0.0; 3])),
            ],
            grid: [3, 1, 1],
        },
        Case {
            name: "tiled_product",
            forward: tiled_product(m, nn, kk),
            backward: derive(&tiled_product(m, nn, kk), &Derive::new()).expect("derives"),
            data: vec![
                ("a", Data::F32(uniform(r, (m * kk) as usize, 1.0))),
                ("b", Data::F32(uniform(r, (kk * nn) as usize, 1.0))),
                ("c", Data::F32(vec![0.0; (m * nn) as usize])),
            ],
            grid: [nn.div_ceil(TILE), m.div_ceil(TILE), 1],
        },
        Case {
            name: "reversed",
            forward: reversed(),
            backward: derive(&reversed(), &Derive::new()).expect("derives"),
            data: vec![
                ("x", Data::F32(uniform(r, 64, 1.0))),
                ("y", Data::F32(vec![0.0; 64])),
            ],
            grid: [1, 1, 1],
        },
    ]
}

#[test]
fn workgroup_memory_kernels_match_central_differences_on_the_interpreter() {
    for c in cases() {
        check_case(&c, &Interpreter::new());
    }
}

#[test]
fn workgroup_memory_kernels_match_central_differences_on_the_gpu() {
    let gpu = common::gpu();
    for c in cases() {
        check_case(&c, gpu);
    }
}

/// The derived backward of the tiled product: `d_a = d_c b^T`, `d_b = a^T d_c` in `f64`.
#[test]
fn the_tiled_products_derived_gradient_matches_f64() {
    let r = &mut StdRng::seed_from_u64(8);
    let (m, n, kk) = (9usize, 13usize, 6usize);
    let (a, b, dc) = (
        uniform(r, m * kk, 1.0),
        uniform(r, kk * n, 1.0),
        uniform(r, m * n, 1.0),
    );
    let back = derive(
        &tiled_product(m as u32, n as u32, kk as u32),
        &Derive::new(),
    )
    .expect("derives");
    let g = run_backward(
        &back,
        &[
            ("a", Data::F32(a.clone())),
            ("b", Data::F32(b.clone())),
            ("d_c", Data::F32(dc.clone())),
        ],
        [(n as u32).div_ceil(TILE), (m as u32).div_ceil(TILE), 1],
    );
    let mut da = vec![0.0f64; m * kk];
    let mut db = vec![0.0f64; kk * n];
    for i in 0..m {
        for j in 0..n {
            let d = f64::from(dc[i * n + j]);
            for q in 0..kk {
                da[i * kk + q] += d * f64::from(b[q * n + j]);
                db[q * n + j] += f64::from(a[i * kk + q]) * d;
            }
        }
    }
    assert_close("d_a", gradient(&g, "d_a"), &da);
    assert_close("d_b", gradient(&g, "d_b"), &db);
}

/// Through the tile, `d_x[l] = d_y[63 - l]` exactly.
#[test]
fn a_permutation_through_workgroup_memory_permutes_the_gradient() {
    let r = &mut StdRng::seed_from_u64(9);
    let dy = uniform(r, 64, 1.0);
    let back = derive(&reversed(), &Derive::new()).expect("derives");
    let g = run_backward(
        &back,
        &[
            ("x", Data::F32(uniform(r, 64, 1.0))),
            ("d_y", Data::F32(dy.clone())),
        ],
        [1, 1, 1],
    );
    let want: Vec<f64> = (0..64).map(|l| f64::from(dy[63 - l])).collect();
    assert_close("d_x", gradient(&g, "d_x"), &want);
}

/// A barrier under a condition known only at run time is refused at its line.
#[test]
fn a_barrier_under_a_run_time_condition_is_refused_at_its_line() {
    let mut k = KernelBuilder::new("divergent", [64, 1, 1]);
    let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    let y = k.storage::<RuntimeArray<f32>, ReadWrite>("y");
    let tile = k.workgroup::<Array<f32, 64>>("tile");
    let l = k.let_("l", local_invocation_index());
    k.store(&tile.at(&l), x.at(&l).load());
    let mut line = 0;
    k.if_(x.at(0u32).load().gt(0.0f32), |k| {
        line = line!() + 1;
        k.workgroup_barrier();
    });
    k.store(&y.at(&l), tile.at(63u32 - &l).load());
    refused(&k, "barrier", line);
}

/// `y[i] = sin(x[i]) x[i]`, counting the invocations and a histogram of `x` with integer
/// atomics on buffers that are not differentiated.
fn counted() -> KernelBuilder {
    let mut k = KernelBuilder::new("counted", [16, 1, 1]);
    let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    let count = k.storage::<RuntimeArray<Atomic<u32>>, ReadWrite>("count");
    let hist = k.storage::<RuntimeArray<Atomic<u32>>, ReadWrite>("hist");
    let y = k.storage::<RuntimeArray<f32>, ReadWrite>("y");
    let i = k.let_("i", global_invocation_id().x());
    k.if_(i.lt(y.len()), |k| {
        let v = k.let_("v", x.at(&i).load());
        let _ = k.atomic_add(&count.at(0u32), 1u32);
        let bin = k.let_("bin", clamp((&v + 2.0f32).to_u32(), 0u32, 3u32));
        let _ = k.atomic_add(&hist.at(&bin), 1u32);
        k.store(&y.at(&i), sin(&v) * &v);
    });
    k
}

/// Integer atomics on data that is not differentiated are effects the backward kernel does
/// not repeat: the gradient is checked; using an atomic's result is refused at its line.
#[test]
fn integer_atomics_on_data_are_derived_and_their_results_refused() {
    let r = &mut StdRng::seed_from_u64(33);
    let n = 37;
    let forward = counted();
    let backward = derive(&forward, &Derive::new()).expect("derives");
    fn checked<X: Executor>(on: &X, forward: &KernelBuilder, backward: &Backward, x: Vec<f32>) {
        let n = x.len();
        let report = check(
            forward,
            backward,
            &[
                ("x", Data::F32(x)),
                ("count", Data::U32(vec![0])),
                ("hist", Data::U32(vec![0; 4])),
                ("y", Data::F32(vec![0.0; n])),
            ],
            [3, 1, 1],
            on,
            CheckOptions::default(),
        )
        .expect("checks");
        assert!(!report.worst.is_empty());
        assert!(report.max_error() < TOLERANCE, "{} {report}", on.name());
    }
    checked(&Interpreter::new(), &forward, &backward, uniform(r, n, 1.9));
    checked(common::gpu(), &forward, &backward, uniform(r, n, 1.9));

    let mut k = KernelBuilder::new("slots", [16, 1, 1]);
    let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    let next = k.storage::<RuntimeArray<Atomic<u32>>, ReadWrite>("next");
    let y = k.storage::<RuntimeArray<f32>, ReadWrite>("y");
    let i = k.let_("i", global_invocation_id().x());
    let (slot, line) = (k.atomic_add(&next.at(0u32), 1u32), line!());
    k.store(&y.at(slot), x.at(&i).load());
    refused(&k, "atomicAdd", line);
}

/// An `array<atomic<u32>>` output is derived when `atomic_add_f32` is all that writes it
/// (`tests/autodiff_kernels.rs` checks such a kernel); an integer atomic or an
/// `atomicStore` into it as well is refused at the author's line, as is an `f32` atomic
/// addition into workgroup memory.
#[test]
fn other_writes_into_an_output_added_into_are_refused_at_their_line() {
    let kernel = |k: &mut KernelBuilder| {
        let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
        let out = k.storage::<RuntimeArray<Atomic<u32>>, ReadWrite>("out");
        let i = k.let_("i", global_invocation_id().x());
        k.atomic_add_f32(&out.at(&i % 3u32), x.at(&i).load());
        (out, i)
    };
    let mut k = KernelBuilder::new("mixed_integer", [16, 1, 1]);
    let (out, _) = kernel(&mut k);
    let line = line!() + 1;
    let _ = k.atomic_add(&out.at(0u32), 1u32);
    refused(&k, "integer atomic on an output", line);

    let mut k = KernelBuilder::new("mixed_store", [16, 1, 1]);
    let (out, i) = kernel(&mut k);
    let line = line!() + 1;
    k.atomic_store(&out.at(&i), 0u32);
    refused(&k, "atomic store into an output", line);

    let mut k = KernelBuilder::new("shared_add", [16, 1, 1]);
    let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    let y = k.storage::<RuntimeArray<f32>, ReadWrite>("y");
    let tile = k.workgroup::<Array<Atomic<u32>, 16>>("tile");
    let i = k.let_("i", global_invocation_id().x());
    let line = line!() + 1;
    k.atomic_add_f32(&tile.at(0u32), x.at(&i).load());
    k.workgroup_barrier();
    k.store(&y.at(&i), x.at(&i).load());
    refused(&k, "workgroup memory", line);
}
