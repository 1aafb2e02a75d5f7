//! Dispatch mistakes come back as errors (never panics), read-back works for odd and zero
//! lengths, pipelines are cached, and a `Recorder` runs many dispatches and copies in one
//! submit with the right result. Runs on Mesa lavapipe in CI.
//!
//! Not testable through this API: a read-only vs read-write mismatch between a buffer and a
//! binding. Every `GpuBuffer` has `STORAGE | UNIFORM` usage, so any buffer is valid for any
//! binding kind; what remains (a buffer bound writable twice, or writable and read) is the
//! aliasing check tested below.

use bytemuck::{Pod, Zeroable};
use rand::{Rng, SeedableRng, rngs::StdRng};
use wgsl_dsl::naga::valid::Capabilities;
use wgsl_dsl::prelude::*;

mod common;
use common::{compiled_on, gpu};

use wgsl_dsl::runtime::{
    DeviceError, DispatchError, DispatchErrorKind, Gpu, GpuBuffer, GpuOptions, Kernel,
    TimestampMethod, ceil_div,
};

fn random_f32(rng: &mut StdRng, n: usize) -> Vec<f32> {
    (0..n).map(|_| rng.random_range(-1.0..1.0)).collect()
}

fn compile(k: &KernelBuilder) -> Kernel {
    compiled_on(gpu(), k)
}

fn saxpy_cpu(a: f32, x: &[f32], y: &[f32]) -> Vec<f32> {
    x.iter().zip(y).map(|(x, y)| a * x + y).collect()
}

fn assert_close(got: &[f32], want: &[f32]) {
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= 1e-5 * w.abs().max(1.0),
            "[{i}]: {g} vs {w}"
        );
    }
}

#[test]
fn saxpy_runs_and_matches_the_cpu() {
    let gpu = gpu();
    let kernel = compile(&common::saxpy());
    let mut rng = StdRng::seed_from_u64(1);
    let n = 61;
    let (x, y) = (random_f32(&mut rng, n), random_f32(&mut rng, n));
    let a = GpuBuffer::from_value(gpu, 1.5f32).unwrap();
    let xb = GpuBuffer::from_slice(gpu, &x).unwrap();
    let yb = GpuBuffer::from_slice(gpu, &y).unwrap();
    common::dispatch_over(gpu, &kernel, &[&a, &xb, &yb], n);
    assert_close(&yb.read(gpu).unwrap(), &saxpy_cpu(1.5, &x, &y));
}

#[test]
fn wrong_element_type_is_a_binding_error() {
    let gpu = gpu();
    let kernel = compile(&common::saxpy());
    let a = GpuBuffer::from_value(gpu, 1.0f32).unwrap();
    let x = GpuBuffer::from_slice(gpu, &[1u32, 2, 3]).unwrap();
    let y = GpuBuffer::<f32>::zeroed(gpu, 3).unwrap();
    let err = gpu.dispatch(&kernel, &[&a, &x, &y], [1, 1, 1]).unwrap_err();
    match &err {
        DispatchError {
            kernel: Some(kernel),
            kind:
                DispatchErrorKind::Binding {
                    binding,
                    index,
                    expected,
                    found,
                },
            ..
        } => {
            assert_eq!(
                (kernel.as_str(), binding.as_str(), *index),
                ("saxpy", "x", 1)
            );
            assert_eq!((expected.as_str(), found.as_str()), ("array<f32>", "u32"));
        }
        other => panic!("expected a binding error, got {other:?}"),
    }
    assert!(err.to_string().contains("`x`"), "{err}");
    // A uniform of the wrong scalar type.
    let a_u32 = GpuBuffer::from_value(gpu, 1u32).unwrap();
    let x = GpuBuffer::<f32>::zeroed(gpu, 3).unwrap();
    let err = gpu
        .dispatch(&kernel, &[&a_u32, &x, &y], [1, 1, 1])
        .unwrap_err();
    assert!(
        matches!(&err, DispatchError { kind: DispatchErrorKind::Binding { index: 0, binding, .. }, .. } if binding == "a"),
        "{err:?}"
    );
}

#[test]
fn wrong_argument_count_is_an_error() {
    let gpu = gpu();
    let kernel = compile(&common::saxpy());
    let a = GpuBuffer::from_value(gpu, 1.0f32).unwrap();
    let x = GpuBuffer::<f32>::zeroed(gpu, 3).unwrap();
    let y = GpuBuffer::<f32>::zeroed(gpu, 3).unwrap();
    for args in [vec![&a, &x], vec![&a, &x, &y, &y]] {
        let args: Vec<&dyn wgsl_dsl::runtime::BindArg> = args.into_iter().map(|b| b as _).collect();
        let err = gpu.dispatch(&kernel, &args, [1, 1, 1]).unwrap_err();
        assert_eq!(
            err,
            DispatchError::new(
                "saxpy",
                DispatchErrorKind::ArgCount {
                    expected: 3,
                    found: args.len()
                }
            )
        );
    }
}

#[test]
fn fixed_size_array_binding_needs_the_whole_array() {
    let gpu = gpu();
    let mut k = KernelBuilder::new("lookup", [64, 1, 1]);
    let table = k.storage::<Array<f32, 16>, ReadOnly>("table");
    let idx = k.storage::<RuntimeArray<u32>, ReadOnly>("idx");
    let out = k.storage::<RuntimeArray<f32>, ReadWrite>("out");
    let i = k.let_("i", global_invocation_id().x());
    k.if_(i.lt(out.len()), |k| {
        k.store(&out.at(&i), table.at(idx.at(&i).load() % 16u32).load());
    });
    let kernel = compile(&k);
    let mut rng = StdRng::seed_from_u64(2);
    let n = 37;
    let idx_host: Vec<u32> = (0..n).map(|_| rng.random_range(0..16)).collect();
    let idx_buf = GpuBuffer::from_slice(gpu, &idx_host).unwrap();
    let out = GpuBuffer::from_slice(gpu, &vec![f32::NAN; n]).unwrap();

    let short = GpuBuffer::<f32>::zeroed(gpu, 15).unwrap();
    let err = gpu
        .dispatch(&kernel, &[&short, &idx_buf, &out], [1, 1, 1])
        .unwrap_err();
    assert_eq!(
        err,
        DispatchError::new(
            "lookup",
            DispatchErrorKind::TooSmall {
                binding: "table".into(),
                index: 0,
                needed: 64,
                found: 60
            }
        )
    );
    // The message, then the Rust line of the dispatch (tests/dispatch_caller.rs checks it).
    let caller = err.caller().expect("the dispatch's caller");
    assert!(caller.file().ends_with("runtime_dispatch.rs"), "{caller}");
    assert_eq!(
        err.to_string(),
        format!(
            "kernel `lookup`, binding 0 `table`: needs at least 64 bytes, the buffer has 60 \
             (called at {caller})"
        )
    );
    // Nothing ran: the output is still poisoned.
    assert!(out.read(gpu).unwrap().iter().all(|v| v.is_nan()));

    let table_host = random_f32(&mut rng, 16);
    let table_buf = GpuBuffer::from_slice(gpu, &table_host).unwrap();
    common::dispatch_over(gpu, &kernel, &[&table_buf, &idx_buf, &out], n);
    let want: Vec<f32> = idx_host.iter().map(|&j| table_host[j as usize]).collect();
    assert_eq!(out.read(gpu).unwrap(), want);
}

/// A uniform struct `{ n: u32, scale: f32 }` (WGSL size 8).
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable, WgslStruct)]
#[repr(C)]
struct Params {
    n: u32,
    scale: f32,
}

#[test]
fn uniform_struct_must_match_and_be_long_enough() {
    let gpu = gpu();
    let mut k = KernelBuilder::new("scale_prefix", [64, 1, 1]);
    let p = k.uniform::<Params>("params");
    let y = k.storage::<RuntimeArray<f32>, ReadWrite>("y");
    let i = k.let_("i", global_invocation_id().x());
    k.if_(i.lt(p.n().load()), |k| {
        k.store(&y.at(&i), y.at(&i).load() * p.scale().load());
    });
    let kernel = compile(&k);
    let mut rng = StdRng::seed_from_u64(3);
    let len = 45;
    let y_host = random_f32(&mut rng, len);
    let y = GpuBuffer::from_slice(gpu, &y_host).unwrap();

    let scalar = GpuBuffer::from_value(gpu, 7u32).unwrap();
    let err = gpu
        .dispatch(&kernel, &[&scalar, &y], [1, 1, 1])
        .unwrap_err();
    assert!(
        matches!(&err, DispatchError { kind: DispatchErrorKind::Binding { expected, found, .. }, .. } if expected == "Params" && found == "u32"),
        "{err:?}"
    );
    let empty = GpuBuffer::<Params>::zeroed(gpu, 0).unwrap();
    let err = gpu.dispatch(&kernel, &[&empty, &y], [1, 1, 1]).unwrap_err();
    assert!(
        matches!(
            err,
            DispatchError {
                kind: DispatchErrorKind::TooSmall {
                    needed: 8,
                    found: 0,
                    index: 0,
                    ..
                },
                ..
            }
        ),
        "{err:?}"
    );

    let params = Params { n: 31, scale: -2.5 };
    let pb = GpuBuffer::from_value(gpu, params).unwrap();
    common::dispatch_over(gpu, &kernel, &[&pb, &y], len);
    let want: Vec<f32> = y_host
        .iter()
        .enumerate()
        .map(|(i, &v)| if i < 31 { v * -2.5 } else { v })
        .collect();
    assert_eq!(y.read(gpu).unwrap(), want);
}

#[test]
fn too_many_workgroups_is_an_error_and_zero_is_a_no_op() {
    let gpu = gpu();
    let kernel = compile(&common::saxpy());
    let a = GpuBuffer::from_value(gpu, 1.0f32).unwrap();
    let x = GpuBuffer::from_slice(gpu, &[1.0f32; 5]).unwrap();
    let y = GpuBuffer::from_slice(gpu, &[f32::NAN; 5]).unwrap();
    let limit = gpu.limits().max_compute_workgroups_per_dimension;
    for groups in [[limit + 1, 1, 1], [1, 1, limit + 1]] {
        let err = gpu.dispatch(&kernel, &[&a, &x, &y], groups).unwrap_err();
        assert!(
            matches!(err, DispatchError { kind: DispatchErrorKind::Limit { value, limit: l, .. }, .. } if value == u64::from(limit) + 1 && l == u64::from(limit)),
            "{err:?}"
        );
    }
    gpu.dispatch(&kernel, &[&a, &x, &y], [0, 1, 1]).unwrap();
    assert!(y.read(gpu).unwrap().iter().all(|v| v.is_nan()));
}

#[test]
fn grid_helpers_round_up() {
    let kernel = compile(&common::saxpy());
    assert_eq!(kernel.workgroups_for([1, 1, 1]), [1, 1, 1]);
    assert_eq!(kernel.workgroups_for([64, 3, 1]), [1, 3, 1]);
    assert_eq!(kernel.workgroups_for([65, 1, 0]), [2, 1, 0]);
    for n in [0u32, 1, 37, 63, 64, 65, 1001] {
        let g = ceil_div(n, 64);
        assert!(g * 64 >= n && (g == 0 || (g - 1) * 64 < n), "{n}");
    }
}

#[test]
fn aliasing_a_read_write_binding_is_an_error() {
    let gpu = gpu();
    let kernel = compile(&common::saxpy());
    let a = GpuBuffer::from_value(gpu, 2.0f32).unwrap();
    let y = GpuBuffer::from_slice(gpu, &[1.0f32, 2.0, 3.0]).unwrap();
    let err = gpu.dispatch(&kernel, &[&a, &y, &y], [1, 1, 1]).unwrap_err();
    assert!(
        matches!(
            &err,
            DispatchError {
                kind: DispatchErrorKind::Aliased {
                    first: 1,
                    second: 2,
                    ..
                },
                ..
            }
        ),
        "{err:?}"
    );
    // The same buffer in two read-only bindings (uniform + storage read) is fine.
    let k = common::guarded_map::<f32, f32, f32>("double_bind", ["s", "t", "out"], |s, t, _, _| {
        s.load() + t.at(0u32).load()
    });
    let kernel = compile(&k);
    let st = GpuBuffer::from_value(gpu, 4.5f32).unwrap();
    let out = GpuBuffer::from_slice(gpu, &[f32::NAN; 3]).unwrap();
    gpu.dispatch(&kernel, &[&st, &st, &out], [1, 1, 1]).unwrap();
    assert_eq!(out.read(gpu).unwrap(), vec![9.0; 3]);
}

#[test]
fn write_checks_the_length() {
    let gpu = gpu();
    let b = GpuBuffer::from_slice(gpu, &[1i32, 2, 3]).unwrap();
    let err = b.write(gpu, &[1, 2]).unwrap_err();
    assert_eq!(
        err,
        DispatchError::from(DispatchErrorKind::Length {
            what: "GpuBuffer::write",
            expected: 3,
            found: 2
        })
    );
    b.write(gpu, &[-4, 5, -6]).unwrap();
    assert_eq!(b.read(gpu).unwrap(), vec![-4, 5, -6]);
}

#[test]
fn missing_capability_is_an_error() {
    let gpu = gpu();
    let mut shader = common::saxpy().build_for(&gpu.target_limits()).unwrap();
    // A capability the runtime never grants (64-bit integers), as if the kernel needed it.
    shader.signature.capabilities |= Capabilities::SHADER_INT64;
    assert!(!gpu.capabilities().contains(Capabilities::SHADER_INT64));
    let err = gpu.compile(&shader).unwrap_err();
    assert!(
        matches!(&err, DispatchError { kernel: Some(kernel), kind: DispatchErrorKind::MissingCapability { needed }, .. } if kernel == "saxpy" && *needed == Capabilities::SHADER_INT64),
        "{err:?}"
    );
}

#[test]
fn wgpu_validation_errors_are_returned_not_panicked() {
    let gpu = gpu();
    let mut shader = common::saxpy().build_for(&gpu.target_limits()).unwrap();
    // Tamper with the validated module: a workgroup beyond the device's limits, which the
    // device check finds in the module itself, whatever the signature says.
    let too_big = gpu.limits().max_compute_invocations_per_workgroup * 2;
    let mut tampered = shader.clone();
    tampered.module.entry_points[0].workgroup_size = [too_big, 1, 1];
    tampered.wgsl.push_str("// tampered\n"); // a different cache key
    let err = gpu.compile(&tampered).unwrap_err();
    assert!(
        matches!(
            err,
            DispatchError {
                kind: DispatchErrorKind::ExceedsDevice { .. },
                ..
            }
        ),
        "{err:?}"
    );
    // A bind group layout that contradicts the module (a storage array declared uniform in
    // the signature), which wgpu rejects when it creates the pipeline.
    shader.signature.bindings[1].kind = wgsl_dsl::BindingKind::Uniform;
    shader.wgsl.push_str("// tampered layout\n");
    let err = gpu.compile(&shader).unwrap_err();
    assert!(
        matches!(
            err,
            DispatchError {
                kind: DispatchErrorKind::Wgpu(_),
                ..
            }
        ),
        "{err:?}"
    );

    // Copying a buffer onto itself.
    let b = GpuBuffer::from_slice(gpu, &[1.0f32; 3]).unwrap();
    let mut rec = gpu.recorder();
    assert!(rec.copy(&b, &b).is_err());
    let c = GpuBuffer::<f32>::zeroed(gpu, 4).unwrap();
    assert!(matches!(
        rec.copy(&b, &c),
        Err(DispatchError {
            kind: DispatchErrorKind::Length {
                expected: 3,
                found: 4,
                ..
            },
            ..
        })
    ));
    rec.submit().unwrap();
}

#[test]
fn read_back_works_for_odd_and_zero_lengths() {
    let gpu = gpu();
    let mut rng = StdRng::seed_from_u64(4);
    for n in [0usize, 1, 3, 37, 1001] {
        let f = random_f32(&mut rng, n);
        let u: Vec<u32> = (0..n).map(|_| rng.random()).collect();
        let i: Vec<i32> = (0..n).map(|_| rng.random()).collect();
        assert_eq!(
            GpuBuffer::from_slice(gpu, &f).unwrap().read(gpu).unwrap(),
            f
        );
        assert_eq!(
            GpuBuffer::from_slice(gpu, &u).unwrap().read(gpu).unwrap(),
            u
        );
        assert_eq!(
            GpuBuffer::from_slice(gpu, &i).unwrap().read(gpu).unwrap(),
            i
        );
        let z = GpuBuffer::<u32>::zeroed(gpu, n).unwrap();
        assert_eq!((z.len(), z.is_empty()), (n, n == 0));
        assert_eq!(z.read(gpu).unwrap(), vec![0; n]);
    }
    // An empty buffer can be bound and dispatched over.
    let kernel = compile(&common::saxpy());
    let a = GpuBuffer::from_value(gpu, 1.0f32).unwrap();
    let e1 = GpuBuffer::<f32>::zeroed(gpu, 0).unwrap();
    let e2 = GpuBuffer::<f32>::zeroed(gpu, 0).unwrap();
    gpu.dispatch(&kernel, &[&a, &e1, &e2], [1, 1, 1]).unwrap();
    assert_eq!(e2.read(gpu).unwrap(), Vec::<f32>::new());
}

/// `y[i] *= a`: a kernel no other test compiles.
fn cache_probe() -> KernelBuilder {
    let mut k = KernelBuilder::new("cache_probe", [32, 1, 1]);
    let a = k.uniform::<f32>("a");
    let y = k.storage::<RuntimeArray<f32>, ReadWrite>("y");
    let i = k.let_("i", global_invocation_id().x());
    k.if_(i.lt(y.len()), |k| {
        k.store(&y.at(&i), y.at(&i).load() * a.load())
    });
    k
}

#[test]
fn pipelines_are_compiled_once_per_kernel() {
    let gpu = gpu();
    let before = gpu.pipelines_compiled();
    let k = cache_probe();
    let first = compile(&k);
    let second = compile(&k);
    // Built again from scratch: the same WGSL, so the same pipeline.
    let rebuilt = compile(&cache_probe());
    assert!(first.shares_pipeline_with(&second));
    assert!(first.shares_pipeline_with(&rebuilt));
    assert!(!first.shares_pipeline_with(&compile(&common::saxpy())));
    // Other tests compile concurrently, so only a lower bound on the count is ours.
    assert!(gpu.pipelines_compiled() > before);
    // The cached kernel runs.
    let a = GpuBuffer::from_value(gpu, 3.0f32).unwrap();
    let y = GpuBuffer::from_slice(gpu, &[1.0f32, -2.0, 0.5]).unwrap();
    gpu.dispatch(&rebuilt, &[&a, &y], [1, 1, 1]).unwrap();
    assert_eq!(y.read(gpu).unwrap(), vec![3.0, -6.0, 1.5]);
}

/// `y += x`, and `z *= 2`.
fn add_and_double() -> (Kernel, Kernel) {
    let mut k = KernelBuilder::new("add_into", [64, 1, 1]);
    let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    let y = k.storage::<RuntimeArray<f32>, ReadWrite>("y");
    let i = k.let_("i", global_invocation_id().x());
    k.if_(i.lt(y.len()), |k| {
        k.update(&y.at(&i), |old| old + x.at(&i).load())
    });
    let add = compile(&k);
    let mut k = KernelBuilder::new("double", [64, 1, 1]);
    let z = k.storage::<RuntimeArray<f32>, ReadWrite>("z");
    let i = k.let_("i", global_invocation_id().x());
    k.if_(i.lt(z.len()), |k| k.update(&z.at(&i), |old| old * 2.0));
    (add, compile(&k))
}

#[test]
fn recorder_runs_many_dependent_dispatches_and_copies_in_one_submit() {
    let gpu = gpu();
    let (add, double) = add_and_double();
    let mut rng = StdRng::seed_from_u64(5);
    let n = 45;
    let (x, y0) = (random_f32(&mut rng, n), random_f32(&mut rng, n));
    let xb = GpuBuffer::from_slice(gpu, &x).unwrap();
    let yb = GpuBuffer::from_slice(gpu, &y0).unwrap();
    let zb = GpuBuffer::from_slice(gpu, &vec![f32::NAN; n]).unwrap();
    let groups = add.workgroups_for([n as u32, 1, 1]);

    let mut rec = gpu.recorder();
    for _ in 0..20 {
        rec.dispatch(&add, &[&xb, &yb], groups).unwrap();
    }
    assert_eq!((rec.passes(), rec.dispatches()), (1, 20));
    rec.copy(&yb, &zb).unwrap();
    for _ in 0..5 {
        rec.dispatch(&double, &[&zb], groups).unwrap();
    }
    // A failed dispatch records nothing and leaves the recorder usable.
    assert!(rec.dispatch(&double, &[&xb, &zb], groups).is_err());
    assert_eq!((rec.passes(), rec.dispatches()), (2, 25));
    rec.submit().unwrap();

    let mut y = y0.clone();
    for _ in 0..20 {
        for (y, x) in y.iter_mut().zip(&x) {
            *y += x;
        }
    }
    let z: Vec<f32> = y.iter().map(|v| v * 32.0).collect();
    assert_close(&yb.read(gpu).unwrap(), &y);
    assert_close(&zb.read(gpu).unwrap(), &z);
}

#[test]
fn timing_returns_a_duration_when_the_adapter_has_timestamps() {
    let gpu = gpu();
    let (add, _) = add_and_double();
    let n = 1001;
    let xb = GpuBuffer::from_slice(gpu, &vec![1.0f32; n]).unwrap();
    let yb = GpuBuffer::from_slice(gpu, &vec![0.0f32; n]).unwrap();
    let groups = add.workgroups_for([n as u32, 1, 1]);
    let t = gpu
        .time(|rec| {
            for _ in 0..10 {
                rec.dispatch(&add, &[&xb, &yb], groups)?;
            }
            Ok(())
        })
        .unwrap();
    let has = gpu
        .features()
        .contains(wgsl_dsl::runtime::wgpu::Features::TIMESTAMP_QUERY);
    assert_eq!(t.is_some(), has, "{t:?}");
    assert_eq!(yb.read(gpu).unwrap(), vec![10.0; n]);
}

#[test]
fn profile_labels_every_dispatch_with_its_kernel_and_time() {
    let gpu = gpu();
    let (add, double) = add_and_double();
    let n = 77;
    let xb = GpuBuffer::from_slice(gpu, &vec![1.5f32; n]).unwrap();
    let yb = GpuBuffer::from_slice(gpu, &vec![0.25f32; n]).unwrap();
    let zb = GpuBuffer::from_slice(gpu, &vec![f32::NAN; n]).unwrap();
    let groups = add.workgroups_for([n as u32, 1, 1]);
    let Some(method) = gpu.timestamp_method() else {
        // Without TIMESTAMP_QUERY the work still runs and there is no profile.
        let p = gpu
            .profile(|rec| rec.dispatch(&add, &[&xb, &yb], groups))
            .unwrap();
        assert!(p.is_none());
        assert_eq!(yb.read(gpu).unwrap(), vec![1.75; n]);
        return;
    };
    let profile = gpu
        .profile(|rec| {
            for _ in 0..3 {
                rec.dispatch(&add, &[&xb, &yb], groups)?;
            }
            rec.copy(&yb, &zb)?;
            rec.dispatch(&double, &[&zb], groups)?;
            rec.dispatch(&add, &[&xb, &yb], groups)?;
            rec.dispatch(&double, &[&zb], [0, 1, 1])?; // empty: not recorded
            Ok(())
        })
        .unwrap()
        .expect("a profile");
    assert_eq!(profile.method, method);
    let labels: Vec<&str> = profile.dispatches.iter().map(|d| &*d.label).collect();
    assert_eq!(
        labels,
        ["add_into", "add_into", "add_into", "double", "add_into"]
    );
    assert!(profile.dispatches.iter().all(|d| d.workgroups == groups));
    assert!(
        profile
            .dispatches
            .iter()
            .all(|d| d.time > std::time::Duration::ZERO)
    );
    let per: Vec<(String, usize)> = profile
        .per_label()
        .iter()
        .map(|l| (l.label.to_string(), l.dispatches))
        .collect();
    assert_eq!(
        per,
        [("add_into".to_string(), 4), ("double".to_string(), 1)]
    );
    assert_eq!(
        profile
            .per_label()
            .iter()
            .map(|l| l.total)
            .sum::<std::time::Duration>(),
        profile.total()
    );
    assert_eq!(yb.read(gpu).unwrap(), vec![0.25 + 4.0 * 1.5; n]);
    assert_eq!(zb.read(gpu).unwrap(), vec![2.0 * (0.25 + 3.0 * 1.5); n]);
}

#[test]
fn profile_with_a_pass_per_dispatch_spans_several_query_sets() {
    let gpu = gpu();
    let (add, _) = add_and_double();
    let yb = GpuBuffer::from_slice(gpu, &[0.0f32; 3]).unwrap();
    let xb = GpuBuffer::from_slice(gpu, &[1.0f32; 3]).unwrap();
    // Two timestamps per dispatch: 2100 dispatches need 4200 queries, two sets of 4096.
    let count = 2100;
    let profile = gpu
        .profile_with(TimestampMethod::PassPerDispatch, |rec| {
            for _ in 0..count {
                rec.dispatch(&add, &[&xb, &yb], [1, 1, 1])?;
            }
            assert_eq!(rec.passes(), count);
            Ok(())
        })
        .unwrap()
        .expect("a profile");
    assert_eq!(profile.dispatches.len(), count);
    assert!(
        profile
            .dispatches
            .iter()
            .all(|d| d.time > std::time::Duration::ZERO)
    );
    assert_eq!(yb.read(gpu).unwrap(), vec![count as f32; 3]);
}

#[test]
fn bind_groups_are_made_once_per_kernel_and_buffers_and_dropped_with_them() {
    // A Gpu of its own: other tests dispatch concurrently on the shared one.
    let gpu = Gpu::new().unwrap();
    let kernel = compiled_on(&gpu, &cache_probe());
    let a = GpuBuffer::from_value(&gpu, 2.0f32).unwrap();
    let y = GpuBuffer::from_slice(&gpu, &[1.0f32, 3.0]).unwrap();
    let mut rec = gpu.recorder();
    for _ in 0..10 {
        rec.dispatch(&kernel, &[&a, &y], [1, 1, 1]).unwrap();
    }
    rec.submit().unwrap();
    let stats = gpu.bind_group_stats();
    assert_eq!((stats.entries, stats.hits, stats.misses), (1, 9, 1));
    assert_eq!(y.read(&gpu).unwrap(), vec![1024.0, 3072.0]);
    // Another buffer: another bind group, checked on its first use like the first one.
    let y2 = GpuBuffer::from_slice(&gpu, &[1.0f32]).unwrap();
    gpu.dispatch(&kernel, &[&a, &y2], [1, 1, 1]).unwrap();
    let wrong = GpuBuffer::from_slice(&gpu, &[1u32]).unwrap();
    assert!(matches!(
        gpu.dispatch(&kernel, &[&a, &wrong], [1, 1, 1]),
        Err(DispatchError {
            kind: DispatchErrorKind::Binding { .. },
            ..
        })
    ));
    assert_eq!(gpu.bind_group_stats().entries, 2);
    // A dropped buffer's bind group goes at the next allocation.
    drop(y2);
    let _other = GpuBuffer::<f32>::zeroed(&gpu, 4).unwrap();
    assert_eq!(gpu.bind_group_stats().entries, 1);
    // The cached group still runs.
    gpu.dispatch(&kernel, &[&a, &y], [1, 1, 1]).unwrap();
    assert_eq!(y.read(&gpu).unwrap(), vec![2048.0, 6144.0]);
}

#[test]
fn buffers_and_kernels_stay_on_their_gpu() {
    let gpu = gpu();
    let other = Gpu::new().unwrap();
    let kernel = compile(&common::saxpy());
    let a = GpuBuffer::from_value(gpu, 1.0f32).unwrap();
    let x = GpuBuffer::from_slice(gpu, &[1.0f32; 3]).unwrap();
    let y_other = GpuBuffer::from_slice(&other, &[1.0f32; 3]).unwrap();
    let err = gpu
        .dispatch(&kernel, &[&a, &x, &y_other], [1, 1, 1])
        .unwrap_err();
    assert_eq!(
        err,
        DispatchError::from(DispatchErrorKind::WrongDevice("a buffer argument"))
    );
    assert_eq!(y_other.read(gpu).unwrap_err(), DeviceError::WrongDevice);
    let err = other
        .dispatch(&kernel, &[&a, &x, &y_other], [1, 1, 1])
        .unwrap_err();
    assert!(
        matches!(
            err,
            DispatchError {
                kind: DispatchErrorKind::WrongDevice(_),
                ..
            }
        ),
        "{err:?}"
    );
}

#[test]
fn a_lost_device_is_an_error() {
    let gpu = Gpu::new().unwrap();
    let b = GpuBuffer::from_slice(&gpu, &[1u32, 2, 3]).unwrap();
    gpu.device().destroy();
    let err = b.read(&gpu).unwrap_err();
    assert!(matches!(err, DeviceError::Lost(_)), "{err:?}");
    let err = b.write(&gpu, &[4, 5, 6]).unwrap_err();
    assert!(
        matches!(
            err,
            DispatchError {
                kind: DispatchErrorKind::Device(DeviceError::Lost(_)),
                ..
            }
        ),
        "{err:?}"
    );
}

#[test]
fn no_matching_adapter_says_what_to_install() {
    let options = GpuOptions {
        adapter_name: Some("no-such-adapter-0d1e".into()),
        ..GpuOptions::default()
    };
    let err = Gpu::with_options(&options).unwrap_err();
    assert!(matches!(err, DeviceError::NoAdapter { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(msg.contains("apt-get install mesa-vulkan-drivers"), "{msg}");
    assert!(msg.contains("no-such-adapter-0d1e"), "{msg}");
}

#[test]
fn runtime_types_can_be_shared_between_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Gpu>();
    send_sync::<Kernel>();
    send_sync::<GpuBuffer<f32>>();
    send_sync::<DispatchError>();
    send_sync::<DeviceError>();
    // A buffer made on one thread, filled by a kernel dispatched on another.
    let gpu = gpu();
    let kernel = compile(&common::saxpy());
    let a = GpuBuffer::from_value(gpu, 2.0f32).unwrap();
    let x = GpuBuffer::from_slice(gpu, &[1.0f32, 2.0, 3.0]).unwrap();
    let y = GpuBuffer::from_slice(gpu, &[0.5f32; 3]).unwrap();
    std::thread::scope(|s| {
        s.spawn(|| gpu.dispatch(&kernel, &[&a, &x, &y], [1, 1, 1]).unwrap());
    });
    assert_eq!(y.read(gpu).unwrap(), vec![2.5, 4.5, 6.5]);
}

/// `Recorder::clear` zeroes a whole buffer between dispatches: `y += x` after a clear of a
/// poisoned `y` gives `x`; a second clear and two more `y += x` give `2 x`.
#[test]
fn recorder_clears_a_buffer_between_dispatches() {
    let gpu = gpu();
    let (add, _) = add_and_double();
    let mut rng = StdRng::seed_from_u64(11);
    let n = 37;
    let x = random_f32(&mut rng, n);
    let xb = GpuBuffer::from_slice(gpu, &x).unwrap();
    let yb = GpuBuffer::from_slice(gpu, &vec![f32::NAN; n]).unwrap();
    let groups = add.workgroups_for([n as u32, 1, 1]);
    let mut rec = gpu.recorder();
    rec.clear(&yb).unwrap();
    rec.dispatch(&add, &[&xb, &yb], groups).unwrap();
    rec.submit().unwrap();
    assert_eq!(yb.read(gpu).unwrap(), x);
    let mut rec = gpu.recorder();
    rec.dispatch(&add, &[&xb, &yb], groups).unwrap();
    rec.clear(&yb).unwrap();
    rec.dispatch(&add, &[&xb, &yb], groups).unwrap();
    rec.dispatch(&add, &[&xb, &yb], groups).unwrap();
    assert_eq!(rec.passes(), 2);
    rec.submit().unwrap();
    let twice: Vec<f32> = x.iter().map(|v| v + v).collect();
    assert_eq!(yb.read(gpu).unwrap(), twice);
}
