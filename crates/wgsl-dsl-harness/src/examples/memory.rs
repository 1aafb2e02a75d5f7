//! Examples of memory: workgroup variables and barriers, atomics, `arrayLength`.

use wgsl_dsl::prelude::*;

use super::support::{WG, case_1d, invocation_below};
use crate::{Case, Data, Example, groups_1d, random_f32, random_u32};

/// One partial sum per workgroup: a tree reduction in workgroup memory.
fn workgroup_reduce() -> KernelBuilder {
    let mut k = KernelBuilder::new("workgroup_reduce", [WG, 1, 1]);
    let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    let sums = k.storage::<RuntimeArray<f32>, ReadWrite>("sums");
    let partial = k.workgroup::<Array<f32, 64>>("partial");
    let lid = k.let_("lid", local_invocation_index());
    let gid = k.let_("gid", global_invocation_id().x());
    // Out-of-range invocations contribute 0 and stay in the barrier's uniform control flow.
    let v = k.var("v", 0.0f32);
    k.if_(gid.lt(x.len()), |k| k.store(&v, x.at(&gid).load()));
    k.store(&partial.at(&lid), v.load());
    k.workgroup_barrier();
    let stride = k.var("stride", WG / 2);
    k.while_(stride.load().gt(0u32), |k| {
        k.if_(lid.lt(stride.load()), |k| {
            let other = partial.at(&lid + stride.load()).load();
            k.update(&partial.at(&lid), |p| p + other);
        });
        k.workgroup_barrier();
        k.update(&stride, |s| s / 2u32);
    });
    k.if_(lid.eq(0u32), |k| {
        k.store(&sums.at(workgroup_id().x()), partial.at(0u32).load());
    });
    k
}

/// A histogram with `atomicAdd`, and every other atomic read-modify-write on a few cells;
/// all are commutative so the result does not depend on invocation order.
fn atomics() -> KernelBuilder {
    let mut k = KernelBuilder::new("atomics", [WG, 1, 1]);
    let values = k.storage::<RuntimeArray<u32>, ReadOnly>("values");
    let bins = k.storage::<RuntimeArray<Atomic<u32>>, ReadWrite>("bins");
    let cells = k.storage::<RuntimeArray<Atomic<u32>>, ReadWrite>("cells");
    let i = invocation_below(&mut k, values.len());
    let v = k.let_("v", values.at(&i).load());
    let _ = k.atomic_add(&bins.at(&v % 16u32), 1u32);
    let _ = k.atomic_max(&cells.at(0u32), v.clone());
    let _ = k.atomic_min(&cells.at(1u32), v.clone());
    let _ = k.atomic_or(&cells.at(2u32), lit(1u32) << (&v % 32u32));
    let _ = k.atomic_xor(&cells.at(3u32), v.clone());
    let _ = k.atomic_and(&cells.at(4u32), !(lit(1u32) << (&v % 32u32)));
    let _ = k.atomic_sub(&cells.at(5u32), 2u32);
    // An increment through a compare-exchange loop.
    k.loop_(|k| {
        let old = k.let_("old", cells.at(6u32).load());
        let (_, exchanged) = k.atomic_compare_exchange_weak(&cells.at(6u32), &old, &old + 1u32);
        k.if_(exchanged, |k| k.break_());
    });
    k.if_(i.eq(0u32), |k| {
        let seen = cells.at(7u32).load();
        k.atomic_store(&cells.at(7u32), seen + 1000u32);
    });
    k
}

/// `out[0] = arrayLength(x)`, `out[1 + i] = x[len - 1 - i]`.
fn array_length() -> KernelBuilder {
    let mut k = KernelBuilder::new("array_length", [WG, 1, 1]);
    let x = k.storage::<RuntimeArray<u32>, ReadOnly>("x");
    let out = k.storage::<RuntimeArray<u32>, ReadWrite>("out");
    let n = k.let_("n", x.len());
    let i = k.let_("i", global_invocation_id().x());
    k.if_(i.eq(0u32), |k| k.store(&out.at(0u32), &n));
    k.if_(i.lt(&n), |k| {
        k.store(&out.at(&i + 1u32), x.at(&n - 1u32 - &i).load());
    });
    k
}

pub(super) fn examples() -> Vec<Example> {
    vec![
        Example {
            name: "workgroup_reduce",
            build: workgroup_reduce,
            case: |rng| {
                let n = 1001;
                let groups = groups_1d(n, WG);
                Case {
                    buffers: vec![
                        Data::F32(random_f32(rng, n, -1.0, 1.0)),
                        Data::poisoned_f32(groups[0] as usize),
                    ],
                    workgroups: groups,
                }
            },
            reference: |b| {
                let x = b[0].f32().clone();
                for (g, out) in b[1].f32().iter_mut().enumerate() {
                    let chunk = &x[g * WG as usize..((g + 1) * WG as usize).min(x.len())];
                    *out = chunk.iter().map(|&v| f64::from(v)).sum::<f64>() as f32;
                }
            },
            tolerance: 1e-5,
            needs_subgroups: false,
        },
        Example {
            name: "atomics",
            build: atomics,
            case: |rng| {
                let n = 999;
                let mut cells = random_u32(rng, 8, 1 << 20);
                cells[0] = 0;
                cells[1] = u32::MAX;
                cells[4] = u32::MAX;
                case_1d(
                    n,
                    vec![
                        Data::U32(random_u32(rng, n, 1 << 16)),
                        Data::U32(random_u32(rng, 16, 100)),
                        Data::U32(cells),
                    ],
                )
            },
            reference: |b| {
                let values = b[0].u32().clone();
                for &v in &values {
                    b[1].u32()[(v % 16) as usize] += 1;
                }
                let c = b[2].u32();
                c[7] += 1000;
                for &v in &values {
                    c[0] = c[0].max(v);
                    c[1] = c[1].min(v);
                    c[2] |= 1 << (v % 32);
                    c[3] ^= v;
                    c[4] &= !(1 << (v % 32));
                    c[5] = c[5].wrapping_sub(2);
                    c[6] += 1;
                }
            },
            tolerance: 0.0,
            needs_subgroups: false,
        },
        Example {
            name: "array_length",
            build: array_length,
            case: |rng| {
                let n = 333;
                case_1d(
                    n,
                    vec![
                        Data::U32(random_u32(rng, n, u32::MAX)),
                        Data::poisoned_u32(n + 1),
                    ],
                )
            },
            reference: |b| {
                let x = b[0].u32().clone();
                let out = b[1].u32();
                out[0] = x.len() as u32;
                for (i, v) in x.iter().rev().enumerate() {
                    out[i + 1] = *v;
                }
            },
            tolerance: 0.0,
            needs_subgroups: false,
        },
    ]
}
