//! Cooperative-matrix kernels: `d = a * b + c` on 16x16 tiles (`f16` inputs, `f32`
//! accumulator), one subgroup of 32 invocations. The interpreter runs them everywhere (with 32
//! invocations per subgroup), a GPU where it has cooperative matrices; both are checked
//! against an `f64` reference within `gamma_(K+1)(2^-22)` of the sum of absolute products
//! (Higham §3.1; the bound tensor cores are held to in `crates/gemm/src/spec.rs`).

use half::f16;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use wgsl_dsl::KernelBuilder;
use wgsl_dsl::prelude::*;

use crate::ast::{Coop, Inputs, Program};
use crate::emitted::{Binding, Emitted};

/// Tile size.
pub const N: usize = 16;
/// Invocations of the kernel (one subgroup).
pub const INVOCATIONS: u32 = 32;

pub(crate) fn generate(seed: u64, rng: &mut ChaCha8Rng) -> Program {
    let tile = |rng: &mut ChaCha8Rng| -> Vec<u16> {
        (0..N * N)
            .map(|_| f16::from_f32(rng.random_range(-64i32..=64) as f32 / 16.0).to_bits())
            .collect()
    };
    let a = tile(rng);
    let b = tile(rng);
    let c = (0..N * N)
        .map(|_| rng.random_range(-256i32..=256) as f32 / 8.0)
        .collect();
    Program {
        seed,
        workgroup: [INVOCATIONS, 1, 1],
        grid: [1, 1, 1],
        subgroups: false,
        inputs: Inputs::default(),
        funcs: Vec::new(),
        body: Vec::new(),
        texture: None,
        coop: Some(Coop {
            a,
            b,
            c,
            a_col_major: rng.random_bool(0.5),
            load_c: rng.random_bool(0.7),
        }),
    }
}

type F16 = f16;

pub(crate) fn emit(prog: &Program, c: &Coop) -> Emitted {
    let mut k = KernelBuilder::new(format!("fuzz_coop_{}", prog.seed), prog.workgroup);
    let a = k.storage::<RuntimeArray<F16>, ReadOnly>("a");
    let b = k.storage::<RuntimeArray<F16>, ReadOnly>("b");
    let cc = k.storage::<RuntimeArray<f32>, ReadOnly>("c");
    let d = k.storage::<RuntimeArray<f32>, ReadWrite>("d");
    let layout_a = if c.a_col_major {
        CoopLayout::ColumnMajor
    } else {
        CoopLayout::RowMajor
    };
    let x: Exp<CoopMat<F16, 16, 16, MatrixA>> = k.let_("x", a.at(0u32).coop_load(16u32, layout_a));
    let y: Exp<CoopMat<F16, 16, 16, MatrixB>> =
        k.let_("y", b.at(0u32).coop_load(16u32, CoopLayout::RowMajor));
    let z: Exp<CoopMat<f32, 16, 16, Accumulator>> = if c.load_c {
        k.let_("z", cc.at(0u32).coop_load(16u32, CoopLayout::RowMajor))
    } else {
        Exp::zero()
    };
    let r = k.let_("r", coop_multiply_add(&x, &y, &z));
    k.coop_store(&r, &d.at(0u32), 16u32, CoopLayout::RowMajor);
    Emitted {
        kernel: k,
        bindings: vec![
            Binding::CoopA,
            Binding::CoopB,
            Binding::CoopC,
            Binding::CoopD,
        ],
        slots: [0; 4],
        atomics: (0, 0),
        consts: Default::default(),
    }
}

/// The reference `d` and each element's bound.
pub fn reference(c: &Coop) -> (Vec<f64>, Vec<f64>) {
    let h = |v: u16| f64::from(f16::from_bits(v).to_f32());
    let a = |i: usize, k: usize| {
        if c.a_col_major {
            h(c.a[k * N + i])
        } else {
            h(c.a[i * N + k])
        }
    };
    let b = |k: usize, j: usize| h(c.b[k * N + j]);
    let mut d = vec![0.0; N * N];
    let mut bound = vec![0.0; N * N];
    let u = 2f64.powi(-22);
    let kk = (N + 1) as f64;
    let gamma = kk * u / (1.0 - kk * u);
    for i in 0..N {
        for j in 0..N {
            let acc = if c.load_c {
                f64::from(c.c[i * N + j])
            } else {
                0.0
            };
            let mut s = acc;
            let mut abs = acc.abs();
            for k in 0..N {
                let p = a(i, k) * b(k, j);
                s += p;
                abs += p.abs();
            }
            d[i * N + j] = s;
            bound[i * N + j] = gamma * abs + f64::from(f32::MIN_POSITIVE);
        }
    }
    (d, bound)
}
