//! Bugs a GPU hides, planted in small kernels, each reported by the interpreter (or by
//! `build()`'s uniformity check) with the Rust line that built the offending node.

use wgsl_dsl::interp::{AccessKind, HostBuffer, InterpError, Interpreter, Warning};
use wgsl_dsl::prelude::*;
use wgsl_dsl::{BuildError, CallSite};

/// `(file, line)` of a reported call site.
fn at(site: Option<CallSite>) -> Option<(&'static str, u32)> {
    site.map(|s| (s.file, s.line))
}

fn this(line: u32) -> Option<(&'static str, u32)> {
    Some((file!(), line))
}

#[test]
fn an_out_of_bounds_read_names_the_index_line_and_the_invocation() {
    let mut k = KernelBuilder::new("reads_one_past_the_end", [64, 1, 1]);
    let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    let y = k.storage::<RuntimeArray<f32>, ReadWrite>("y");
    let i = k.let_("i", global_invocation_id().x());
    let mut bad = 0;
    k.if_(i.lt(y.len()), |k| {
        bad = line!() + 1;
        let v = x.at(&i + 1u32).load(); // x has as many elements as y: the last reads x[n]
        k.store(&y.at(&i), v);
    });
    let cpu = Interpreter::new();
    let program = cpu.compile(&k.build().unwrap()).unwrap();
    let xs = HostBuffer::from_slice(&[1.0f32; 37]);
    let ys = HostBuffer::from_slice(&[f32::NAN; 37]);
    let err = cpu.dispatch(&program, &[&xs, &ys], [1, 1, 1]).unwrap_err();
    let msg = err.to_string();
    let InterpError::OutOfBounds {
        site,
        invocation,
        index,
        len,
        ref target,
        ..
    } = err
    else {
        panic!("expected an out-of-bounds error, got {msg}")
    };
    assert_eq!(at(site), this(bad), "{msg}");
    assert_eq!((index, len), (37, 37), "{msg}");
    assert_eq!(invocation.global_id, [36, 0, 0], "{msg}");
    assert!(target.contains("`x`"), "{msg}");
    assert!(msg.contains(&format!("{}:{bad}:", file!())), "{msg}");
    // The run failed: nothing was written back.
    assert!(ys.read().iter().all(|v| v.is_nan()));
}

#[test]
fn two_invocations_writing_one_element_is_a_race_with_both_sites() {
    let mut k = KernelBuilder::new("everyone_writes_zero", [64, 1, 1]);
    let out = k.storage::<RuntimeArray<u32>, ReadWrite>("out");
    let i = k.let_("i", global_invocation_id().x());
    let line = line!() + 1;
    k.store(&out.at(&i / 2u32), i.clone()); // invocations 2j and 2j + 1 both write out[j]
    let cpu = Interpreter::new();
    let program = cpu.compile(&k.build().unwrap()).unwrap();
    let buf = HostBuffer::from_slice(&[0u32; 32]);
    let err = cpu.dispatch(&program, &[&buf], [1, 1, 1]).unwrap_err();
    let msg = err.to_string();
    let InterpError::DataRace {
        ref memory,
        ref first,
        ref second,
        ..
    } = err
    else {
        panic!("expected a data race, got {msg}")
    };
    assert_eq!(
        (first.kind, second.kind),
        (AccessKind::Write, AccessKind::Write)
    );
    assert_eq!(at(first.site), this(line), "{msg}");
    assert_eq!(at(second.site), this(line), "{msg}");
    assert_eq!(first.invocation.local_id, [0, 0, 0], "{msg}");
    assert_eq!(second.invocation.local_id, [1, 0, 0], "{msg}");
    assert!(memory.contains("byte 0 of buffer `out`"), "{msg}");
}

/// A shift in workgroup memory: `tile[l] = x[l]`, then `y[l] = tile[l + 1]`; with the
/// barrier between it is correct, without it a race.
fn shift_kernel(barrier: bool) -> (KernelBuilder, u32, u32) {
    let mut k = KernelBuilder::new("shift_left", [64, 1, 1]);
    let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    let y = k.storage::<RuntimeArray<f32>, ReadWrite>("y");
    let tile = k.workgroup::<Array<f32, 65>>("tile");
    let l = k.let_("l", local_invocation_index());
    let g = k.let_("g", global_invocation_id().x());
    let write = line!() + 1;
    k.store(&tile.at(&l), x.at(&g).load());
    if barrier {
        k.workgroup_barrier();
    }
    let read = line!() + 1;
    let next = tile.at(&l + 1u32).load();
    k.if_(l.lt(63u32), |k| k.store(&y.at(&g), next));
    (k, write, read)
}

#[test]
fn a_missing_workgroup_barrier_is_a_race_between_the_store_and_the_load() {
    let cpu = Interpreter::new();
    let xs = HostBuffer::from_slice(&(0..128).map(|v| v as f32).collect::<Vec<_>>());
    let ys = HostBuffer::from_slice(&[f32::NAN; 128]);

    let (k, _, _) = shift_kernel(true);
    let fine = cpu.compile(&k.build().unwrap()).unwrap();
    let report = cpu.dispatch(&fine, &[&xs, &ys], [2, 1, 1]).unwrap();
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    assert_eq!(report.invocations, 128);
    let y = ys.read();
    assert_eq!(y[0], 1.0);
    assert_eq!(y[64 + 62], 127.0);

    let (k, write, read) = shift_kernel(false);
    let racy = cpu.compile(&k.build().unwrap()).unwrap();
    let err = cpu.dispatch(&racy, &[&xs, &ys], [2, 1, 1]).unwrap_err();
    let msg = err.to_string();
    let InterpError::DataRace {
        ref memory,
        ref first,
        ref second,
        ..
    } = err
    else {
        panic!("expected a data race, got {msg}")
    };
    assert!(memory.contains("workgroup variable `tile`"), "{msg}");
    // Invocation 1 wrote tile[1]; invocation 0 reads it with no barrier between.
    assert_eq!(
        (first.kind, at(first.site)),
        (AccessKind::Write, this(write)),
        "{msg}"
    );
    assert_eq!(
        (second.kind, at(second.site)),
        (AccessKind::Read, this(read)),
        "{msg}"
    );
    assert_eq!(first.invocation.local_id, [1, 0, 0], "{msg}");
    assert_eq!(second.invocation.local_id, [0, 0, 0], "{msg}");
}

#[test]
fn workgroups_race_on_storage_whatever_their_barriers() {
    // Each workgroup accumulates into out[0] non-atomically, with barriers: the barrier
    // orders nothing across workgroups.
    let mut k = KernelBuilder::new("unsynchronised_total", [4, 1, 1]);
    let out = k.storage::<RuntimeArray<u32>, ReadWrite>("out");
    let l = k.let_("l", local_invocation_index());
    k.storage_barrier();
    k.if_(l.eq(0u32), |k| k.update(&out.at(0u32), |v| v + 1u32));
    let cpu = Interpreter::new();
    let program = cpu.compile(&k.build().unwrap()).unwrap();
    let buf = HostBuffer::from_slice(&[0u32; 1]);
    assert!(cpu.dispatch(&program, &[&buf], [1, 1, 1]).is_ok());
    let err = cpu.dispatch(&program, &[&buf], [2, 1, 1]).unwrap_err();
    let InterpError::DataRace { first, second, .. } = &err else {
        panic!("expected a data race, got {err}")
    };
    assert_eq!(first.invocation.workgroup_id, [0, 0, 0]);
    assert_eq!(second.invocation.workgroup_id, [1, 0, 0]);
    assert!(err.to_string().contains("different workgroups"), "{err}");
}

#[test]
fn atomics_do_not_race() {
    let mut k = KernelBuilder::new("count_all", [64, 1, 1]);
    let counter = k.storage::<RuntimeArray<Atomic<u32>>, ReadWrite>("counter");
    let _ = k.atomic_add(&counter.at(0u32), 1u32);
    let cpu = Interpreter::new();
    let program = cpu.compile(&k.build().unwrap()).unwrap();
    let buf = HostBuffer::from_slice(&[5u32]);
    cpu.dispatch(&program, &[&buf], [3, 1, 1]).unwrap();
    assert_eq!(buf.read(), vec![5 + 192]);
}

#[test]
fn a_barrier_after_an_early_return_is_divergent_at_run_time() {
    // The static check would reject this kernel; skip it to test the run-time check.
    let mut k = KernelBuilder::new("returns_before_the_barrier", [64, 1, 1]);
    let x = k.storage::<RuntimeArray<f32>, ReadWrite>("x");
    let i = k.let_("i", global_invocation_id().x());
    let ret = line!() + 1;
    k.if_(i.ge(x.len()), |k| k.return_());
    let barrier = line!() + 1;
    k.workgroup_barrier();
    k.store(&x.at(&i), 1.0f32);
    k.skip_uniformity_check();
    let cpu = Interpreter::new();
    let program = cpu.compile(&k.build().unwrap()).unwrap();
    // 64 elements: every invocation reaches the barrier.
    let full = HostBuffer::from_slice(&[0.0f32; 64]);
    cpu.dispatch(&program, &[&full], [1, 1, 1]).unwrap();
    // 37 elements: invocations 37..63 return first.
    let short = HostBuffer::from_slice(&[0.0f32; 37]);
    let err = cpu.dispatch(&program, &[&short], [1, 1, 1]).unwrap_err();
    let msg = err.to_string();
    let InterpError::DivergentBarrier {
        barrier: site,
        reached,
        missed,
        ref why,
        ..
    } = err
    else {
        panic!("expected a divergent barrier, got {msg}")
    };
    assert_eq!(at(site), this(barrier), "{msg}");
    assert_eq!(reached.local_id, [0, 0, 0]);
    assert_eq!(missed.local_id, [37, 0, 0]);
    assert!(
        why.contains("returned") && why.contains(&format!("{}:{ret}:", file!())),
        "{msg}"
    );
}

#[test]
fn a_barrier_inside_a_branch_on_the_invocation_id_is_divergent_at_run_time() {
    let mut k = KernelBuilder::new("half_a_barrier", [64, 1, 1]);
    let l = k.let_("l", local_invocation_index());
    let branch = line!() + 1;
    k.if_(l.lt(32u32), |k| k.workgroup_barrier());
    k.skip_uniformity_check();
    let cpu = Interpreter::new();
    let program = cpu.compile(&k.build().unwrap()).unwrap();
    let err = cpu.dispatch(&program, &[], [1, 1, 1]).unwrap_err();
    let msg = err.to_string();
    let InterpError::DivergentBarrier { barrier, why, .. } = &err else {
        panic!("expected a divergent barrier, got {msg}")
    };
    assert_eq!(at(*barrier), this(branch), "{msg}");
    assert!(why.contains("other branch"), "{msg}");
}

#[test]
fn a_non_uniform_barrier_is_rejected_when_built() {
    let mut k = KernelBuilder::new("half_a_barrier", [64, 1, 1]);
    let value = line!() + 1;
    let l = k.let_("l", local_invocation_index());
    let branch = line!() + 1;
    k.if_(l.lt(32u32), |k| {
        let _half = k.let_("half", 1u32);
        k.workgroup_barrier();
    });
    let barrier = branch + 2;
    let err = k.build().unwrap_err();
    let msg = err.to_string();
    let BuildError::NonUniformControlFlow(e) = err else {
        panic!("expected a uniformity error, got {msg}")
    };
    assert_eq!(e.operation, "workgroupBarrier");
    assert_eq!(at(e.site), this(barrier), "{msg}");
    assert_eq!(at(e.branch), this(branch), "{msg}");
    assert_eq!(at(e.value), this(value), "{msg}");
    assert_eq!(e.value_kind, "local_invocation_index");
}

#[test]
fn reading_workgroup_memory_before_any_write_is_a_warning() {
    let mut k = KernelBuilder::new("reads_zeroes", [8, 1, 1]);
    let out = k.storage::<RuntimeArray<f32>, ReadWrite>("out");
    let scratch = k.workgroup::<Array<f32, 8>>("scratch");
    let l = k.let_("l", local_invocation_index());
    let read = line!() + 1;
    k.store(&out.at(&l), scratch.at(&l).load());
    let cpu = Interpreter::new();
    let program = cpu.compile(&k.build().unwrap()).unwrap();
    let buf = HostBuffer::from_slice(&[f32::NAN; 8]);
    let report = cpu.dispatch(&program, &[&buf], [1, 1, 1]).unwrap();
    assert_eq!(buf.read(), vec![0.0; 8]);
    match report.warnings.as_slice() {
        [Warning::UninitializedRead { variable, site, .. }] => {
            assert!(variable.contains("`scratch`"));
            assert_eq!(at(*site), this(read));
        }
        other => panic!("expected one warning, got {other:?}"),
    }
}

#[test]
fn an_endless_loop_is_reported() {
    let mut k = KernelBuilder::new("spins", [1, 1, 1]);
    let out = k.storage::<RuntimeArray<u32>, ReadWrite>("out");
    let line = line!() + 1;
    k.loop_(|k| k.update(&out.at(0u32), |v| v + 1u32));
    let cpu = Interpreter::with_options(wgsl_dsl::interp::InterpOptions {
        max_loop_iterations: 1000,
        ..Default::default()
    });
    let program = cpu.compile(&k.build().unwrap()).unwrap();
    let buf = HostBuffer::from_slice(&[0u32]);
    let err = cpu.dispatch(&program, &[&buf], [1, 1, 1]).unwrap_err();
    let InterpError::LoopLimit {
        site, iterations, ..
    } = err
    else {
        panic!("expected a loop limit, got {err}")
    };
    assert_eq!((at(site), iterations), (this(line), 1000));
}

#[test]
fn arguments_are_checked_as_on_the_gpu() {
    use wgsl_dsl::runtime::DispatchError;
    let mut k = KernelBuilder::new("saxpy", [64, 1, 1]);
    let a = k.uniform::<f32>("a");
    let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    let y = k.storage::<RuntimeArray<f32>, ReadWrite>("y");
    let i = k.let_("i", global_invocation_id().x());
    k.if_(i.lt(y.len()), |k| {
        k.store(&y.at(&i), a.load() * x.at(&i).load() + y.at(&i).load())
    });
    let cpu = Interpreter::new();
    let program = cpu.compile(&k.build().unwrap()).unwrap();
    let (a, x, y) = (
        HostBuffer::from_value(2.0f32),
        HostBuffer::from_slice(&[1.0f32; 3]),
        HostBuffer::from_slice(&[0.5f32; 3]),
    );
    let ints = HostBuffer::from_slice(&[1u32; 3]);
    let err = cpu.dispatch(&program, &[&a, &x], [1, 1, 1]).unwrap_err();
    assert!(
        matches!(err, InterpError::Dispatch(DispatchError::ArgCount { .. })),
        "{err}"
    );
    let err = cpu
        .dispatch(&program, &[&a, &ints, &y], [1, 1, 1])
        .unwrap_err();
    assert!(
        matches!(
            err,
            InterpError::Dispatch(DispatchError::Binding { index: 1, .. })
        ),
        "{err}"
    );
    let err = cpu
        .dispatch(&program, &[&a, &y, &y], [1, 1, 1])
        .unwrap_err();
    assert!(
        matches!(err, InterpError::Dispatch(DispatchError::Aliased { .. })),
        "{err}"
    );
    let err = cpu
        .dispatch(&program, &[&a, &x, &y], [70000, 1, 1])
        .unwrap_err();
    assert!(
        matches!(err, InterpError::Dispatch(DispatchError::Limit { .. })),
        "{err}"
    );
    cpu.dispatch(&program, &[&a, &x, &y], [1, 1, 1]).unwrap();
    assert_eq!(y.read(), vec![2.5; 3]);
}
