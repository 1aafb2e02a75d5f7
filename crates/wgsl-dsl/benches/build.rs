//! Build + validate + emit time of a 100-statement kernel, against the peer path of writing the
//! same kernel as WGSL text and having naga parse, validate and re-emit it.
//!
//! `cargo bench -p wgsl-dsl --bench build`

use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use wgsl_dsl::prelude::*;

/// A kernel of 100 statements: 97 `let`s / stores in a chain, plus guards.
fn hundred_statements() -> KernelBuilder {
    let mut k = KernelBuilder::new("chain", [64, 1, 1]);
    let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    let y = k.storage::<RuntimeArray<f32>, ReadWrite>("y");
    let i = k.let_("i", global_invocation_id().x());
    k.if_(i.ge(x.len()), |k| k.return_());
    let mut v = k.let_("v0", x.at(&i).load());
    for s in 1..97 {
        let next = if s % 3 == 0 {
            max(&v * 0.5 + 1.0, exp(-&v))
        } else {
            fma(&v, &v, s as f32)
        };
        v = k.let_(&format!("v{s}"), next);
    }
    k.store(&y.at(&i), v);
    k
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("build_100_statements");
    g.bench_function("wgsl-dsl builder -> naga IR -> validate -> WGSL", |b| {
        b.iter(|| black_box(hundred_statements().build().expect("valid")))
    });
    let wgsl = hundred_statements().build().expect("valid").wgsl;
    g.bench_function("peer: naga WGSL front end -> validate -> WGSL", |b| {
        b.iter(|| {
            let module = naga::front::wgsl::parse_str(black_box(&wgsl)).expect("parses");
            let info = naga::valid::Validator::new(
                naga::valid::ValidationFlags::all(),
                naga::valid::Capabilities::empty(),
            )
            .validate(&module)
            .expect("valid");
            black_box(
                naga::back::wgsl::write_string(
                    &module,
                    &info,
                    naga::back::wgsl::WriterFlags::empty(),
                )
                .expect("writes"),
            )
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
