//! Examples of statements and control flow.

use wgsl_dsl::prelude::*;

use super::support::{WG, case_1d, case_f32, invocation_below};
use crate::{Data, Example, random_f32, random_u32};

/// Steps of the Collatz map to reach 1: `var`, `while`, `if`/`else`, assignment.
fn collatz() -> KernelBuilder {
    let mut k = KernelBuilder::new("collatz", [WG, 1, 1]);
    let start = k.storage::<RuntimeArray<u32>, ReadOnly>("start");
    let steps_out = k.storage::<RuntimeArray<u32>, ReadWrite>("steps");
    let i = invocation_below(&mut k, start.len());
    let n = k.var("n", start.at(&i).load());
    let steps = k.var("count", 0u32);
    k.while_(n.load().ne(1u32), |k| {
        k.if_else(
            (n.load() % 2u32).eq(0u32),
            |k| k.update(&n, |n| n / 2u32),
            |k| k.update(&n, |n| n * 3u32 + 1u32),
        );
        k.update(&steps, |s| s + 1u32);
    });
    k.store(&steps_out.at(&i), steps.load());
    k
}

/// `out[2i] = sum of x[j] for j in (i..n).step_by(7)`;
/// `out[2i+1] = number of even j < i % 13 with x[j] > 0.5`, with `loop`, `continue`, `break`.
fn strided_sum() -> KernelBuilder {
    let mut k = KernelBuilder::new("strided_sum", [WG, 1, 1]);
    let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    let out = k.storage::<RuntimeArray<f32>, ReadWrite>("out");
    let i = invocation_below(&mut k, x.len());
    let sum = k.var("sum", 0.0f32);
    k.for_step("j", &i, x.len(), 7u32, |k, j| {
        k.update(&sum, |s| s + x.at(j).load());
    });
    k.store(&out.at(&i * 2u32), sum.load());
    let limit = k.let_("limit", &i % 13u32);
    let count = k.var("count", 0.0f32);
    let j = k.var("j", 0u32);
    k.loop_(|k| {
        k.if_(j.load().ge(&limit), |k| k.break_());
        let jj = k.let_("jj", j.load());
        k.store(&j, &jj + 1u32);
        k.if_((&jj & 1u32).eq(1u32), |k| k.continue_());
        k.if_(x.at(&jj).load().gt(0.5), |k| k.update(&count, |c| c + 1.0));
    });
    k.store(&out.at(&i * 2u32 + 1u32), count.load());
    k
}

/// Helper functions with parameters, results and an early `return`.
fn helper_functions() -> KernelBuilder {
    let mut k = KernelBuilder::new("helper_functions", [WG, 1, 1]);
    let poly = k.function::<(f32,), f32>("ramp_poly", ["x"], |k, (x,)| {
        k.if_(x.lt(0.0), |k| k.return_value(0.0f32));
        let x2 = k.let_("x2", &x * &x);
        x2 * 0.5 + x * 2.0 + 1.0
    });
    let hypot =
        k.function::<(f32, f32), f32>("hypot", ["a", "b"], |_, (a, b)| sqrt(&a * &a + &b * &b));
    let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    let y = k.storage::<RuntimeArray<f32>, ReadOnly>("y");
    let out = k.storage::<RuntimeArray<f32>, ReadWrite>("out");
    let i = invocation_below(&mut k, x.len());
    let p = k.call(&poly, (x.at(&i).load(),));
    let h = k.call(&hypot, (x.at(&i).load(), y.at(&i).load()));
    k.store(&out.at(&i), p + h);
    k
}

pub(super) fn examples() -> Vec<Example> {
    vec![
        Example {
            name: "collatz",
            build: collatz,
            case: |rng| {
                let n = 513;
                let start = random_u32(rng, n, 5000)
                    .into_iter()
                    .map(|v| v + 1)
                    .collect();
                case_1d(n, vec![Data::U32(start), Data::poisoned_u32(n)])
            },
            reference: |b| {
                let start = b[0].u32().clone();
                for (out, mut n) in b[1].u32().iter_mut().zip(start) {
                    let mut steps = 0;
                    while n != 1 {
                        n = if n % 2 == 0 { n / 2 } else { n * 3 + 1 };
                        steps += 1;
                    }
                    *out = steps;
                }
            },
            tolerance: 0.0,
            needs_subgroups: false,
        },
        Example {
            name: "strided_sum",
            build: strided_sum,
            case: |rng| {
                let n = 301;
                case_1d(
                    n,
                    vec![
                        Data::F32(random_f32(rng, n, 0.0, 1.0)),
                        Data::poisoned_f32(2 * n),
                    ],
                )
            },
            reference: |b| {
                let x = b[0].f32().clone();
                let out = b[1].f32();
                for i in 0..x.len() {
                    out[2 * i] = (i..x.len()).step_by(7).map(|j| x[j]).sum();
                    out[2 * i + 1] =
                        (0..i % 13).filter(|j| j % 2 == 0 && x[*j] > 0.5).count() as f32;
                }
            },
            tolerance: 1e-5,
            needs_subgroups: false,
        },
        Example {
            name: "helper_functions",
            build: helper_functions,
            case: |rng| case_f32(rng, 2, 1, -3.0, 3.0),
            reference: |b| {
                let x = b[0].f32().clone();
                let y = b[1].f32().clone();
                for (i, out) in b[2].f32().iter_mut().enumerate() {
                    let (x, y) = (f64::from(x[i]), f64::from(y[i]));
                    let p = if x < 0.0 {
                        0.0
                    } else {
                        x * x * 0.5 + x * 2.0 + 1.0
                    };
                    *out = (p + x.hypot(y)) as f32;
                }
            },
            tolerance: 1e-5,
            needs_subgroups: false,
        },
    ]
}
