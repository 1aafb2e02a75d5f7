//! Bugs a GPU hides, planted in small kernels, each reported by the interpreter (or by
//! `build()`'s uniformity check) with the Rust line that built the offending node.

use wgsl_dsl::interp::{
    AccessKind, HostArg, HostBuffer, InterpError, InterpOptions, Interpreter, Invocation,
    MemoryAccess, Program, Report, Warning,
};
use wgsl_dsl::prelude::*;
use wgsl_dsl::{BuildError, CallSite};

mod common;

/// `(file, line)` of a reported call site.
fn at(site: Option<CallSite>) -> Option<(&'static str, u32)> {
    site.map(|s| (s.file, s.line))
}

fn this(line: u32) -> Option<(&'static str, u32)> {
    Some((file!(), line))
}

/// `k`, built and compiled for an interpreter with the default options.
fn interpret(k: &KernelBuilder) -> (Interpreter, Program) {
    let cpu = Interpreter::new();
    let program = cpu.compile(&k.build().unwrap()).unwrap();
    (cpu, program)
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
    let (cpu, program) = interpret(&k);
    let xs = HostBuffer::from_slice(&[1.0f32; 37]);
    let ys = HostBuffer::from_slice(&[f32::NAN; 37]);
    let (invocation, msg) = out_of_bounds(&cpu, &program, &[&xs, &ys], &ys, bad, 37, &["`x`"]);
    assert_eq!(invocation.global_id, [36, 0, 0], "{msg}");
    assert!(msg.contains(&format!("{}:{bad}:", file!())), "{msg}");
}

/// Runs `program` on `args`, which must stop at an out-of-bounds access built at `line` of
/// this file: index `n` into a target of length `n` whose description contains each of
/// `target_has`. The run failed, so nothing was written back: `out` is still all NaN. Returns
/// the invocation and the message.
fn out_of_bounds(
    cpu: &Interpreter,
    program: &Program,
    args: &[&dyn HostArg],
    out: &HostBuffer<f32>,
    line: u32,
    n: u64,
    target_has: &[&str],
) -> (Invocation, String) {
    let err = cpu.dispatch(program, args, [1, 1, 1]).unwrap_err();
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
    assert_eq!(at(site), this(line), "{msg}");
    assert_eq!((index, len), (n as i64, n), "{msg}");
    for part in target_has {
        assert!(target.contains(part), "{part} not in: {msg}");
    }
    assert!(out.read().iter().all(|v| v.is_nan()));
    (invocation, msg)
}

/// The data race `run` must have stopped at: the memory, the two accesses, and the message.
fn data_race(
    run: Result<Report, InterpError>,
) -> (String, Box<MemoryAccess>, Box<MemoryAccess>, String) {
    let err = run.unwrap_err();
    let msg = err.to_string();
    let InterpError::DataRace {
        memory,
        first,
        second,
        ..
    } = err
    else {
        panic!("expected a data race, got {msg}")
    };
    (memory, first, second, msg)
}

#[test]
fn two_invocations_writing_one_element_is_a_race_with_both_sites() {
    let mut k = KernelBuilder::new("everyone_writes_zero", [64, 1, 1]);
    let out = k.storage::<RuntimeArray<u32>, ReadWrite>("out");
    let i = k.let_("i", global_invocation_id().x());
    let line = line!() + 1;
    k.store(&out.at(&i / 2u32), i.clone()); // invocations 2j and 2j + 1 both write out[j]
    let (cpu, program) = interpret(&k);
    let buf = HostBuffer::from_slice(&[0u32; 32]);
    let (memory, first, second, msg) = data_race(cpu.dispatch(&program, &[&buf], [1, 1, 1]));
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

/// The `race` example's kernel: `shift_kernel(barrier)` and the file its lines are in.
#[path = "../examples/kernels/shift.rs"]
mod shift;
use shift::shift_kernel;

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
    let (memory, first, second, msg) = data_race(cpu.dispatch(&racy, &[&xs, &ys], [2, 1, 1]));
    assert!(memory.contains("workgroup variable `tile`"), "{msg}");
    // Invocation 1 wrote tile[1]; invocation 0 reads it with no barrier between.
    assert_eq!(
        (first.kind, at(first.site)),
        (AccessKind::Write, Some((shift::FILE, write))),
        "{msg}"
    );
    assert_eq!(
        (second.kind, at(second.site)),
        (AccessKind::Read, Some((shift::FILE, read))),
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
    let (cpu, program) = interpret(&k);
    let buf = HostBuffer::from_slice(&[0u32; 1]);
    assert!(cpu.dispatch(&program, &[&buf], [1, 1, 1]).is_ok());
    let (_, first, second, msg) = data_race(cpu.dispatch(&program, &[&buf], [2, 1, 1]));
    assert_eq!(first.invocation.workgroup_id, [0, 0, 0]);
    assert_eq!(second.invocation.workgroup_id, [1, 0, 0]);
    assert!(msg.contains("different workgroups"), "{msg}");
}

#[test]
fn atomics_do_not_race() {
    let mut k = KernelBuilder::new("count_all", [64, 1, 1]);
    let counter = k.storage::<RuntimeArray<Atomic<u32>>, ReadWrite>("counter");
    let _ = k.atomic_add(&counter.at(0u32), 1u32);
    let (cpu, program) = interpret(&k);
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
    let (cpu, program) = interpret(&k);
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
    let (cpu, program) = interpret(&k);
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
    let (cpu, program) = interpret(&k);
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
fn accesses_past_a_buffers_elements_inside_its_padding_are_warnings() {
    // One f32 is allocated as 16 bytes (on the GPU too), so `arrayLength` says 4 and reading
    // element 2 is in bounds: it reads 0, and a write there is not part of the buffer.
    let mut k = KernelBuilder::new("off_by_one", [1, 1, 1]);
    let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    let out = k.storage::<RuntimeArray<f32>, ReadWrite>("out");
    let n = k.let_("n", out.len());
    let read = line!() + 1;
    let past = k.let_("past", x.at(2u32).load());
    let write = line!() + 1;
    k.store(&out.at(&n - 1u32), past + 1.0);
    let (cpu, program) = interpret(&k);
    let (xs, outs) = (
        HostBuffer::from_slice(&[5.0f32]),
        HostBuffer::from_slice(&[7.0f32; 2]),
    );
    let report = cpu.dispatch(&program, &[&xs, &outs], [1, 1, 1]).unwrap();
    assert_eq!(
        outs.read(),
        vec![7.0, 7.0],
        "the write landed in the padding"
    );
    let mut saw = (false, false);
    for w in &report.warnings {
        let Warning::PaddingAccess {
            buffer,
            write: wrote,
            element,
            len,
            site,
            ..
        } = w
        else {
            panic!("unexpected warning {w:?}");
        };
        let text = w.to_string();
        if *wrote {
            assert!(buffer.contains("`out`"), "{text}");
            assert_eq!((*element, *len, at(*site)), (3, 2, this(write)), "{text}");
            assert!(
                text.contains("holds 2 elements") && text.contains("write"),
                "{text}"
            );
            saw.1 = true;
        } else {
            assert!(buffer.contains("`x`"), "{text}");
            assert_eq!((*element, *len, at(*site)), (2, 1, this(read)), "{text}");
            assert!(
                text.contains("holds 1 element;") && text.contains("reads 0"),
                "{text}"
            );
            saw.0 = true;
        }
    }
    assert_eq!(saw, (true, true), "{:?}", report.warnings);
    // Inside the elements: no warning.
    let mut k = KernelBuilder::new("in_bounds", [1, 1, 1]);
    let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    let out = k.storage::<RuntimeArray<f32>, ReadWrite>("out");
    k.store(&out.at(1u32), x.at(0u32).load());
    let (cpu, program) = interpret(&k);
    let report = cpu.dispatch(&program, &[&xs, &outs], [1, 1, 1]).unwrap();
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    assert_eq!(outs.read(), vec![7.0, 5.0]);
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

/// With the default options an endless loop is reported too (a newcomer waited 122 s in a
/// debug build for the former default of 2^24 iterations), and the message names the option.
#[test]
fn an_endless_loop_is_reported_soon_with_the_default_options() {
    let mut k = KernelBuilder::new("spins", [1, 1, 1]);
    let out = k.storage::<RuntimeArray<u32>, ReadWrite>("out");
    k.loop_(|k| k.update(&out.at(0u32), |v| v + 1u32));
    let (cpu, program) = interpret(&k);
    let started = std::time::Instant::now();
    let err = cpu
        .dispatch(&program, &[&HostBuffer::from_slice(&[0u32])], [1, 1, 1])
        .unwrap_err();
    eprintln!("reported after {:?}: {err}", started.elapsed());
    assert!(
        err.to_string()
            .contains("InterpOptions::max_loop_iterations"),
        "{err}"
    );
    let InterpError::LoopLimit { iterations, .. } = err else {
        panic!("expected a loop limit, got {err}")
    };
    assert_eq!(iterations, InterpOptions::default().max_loop_iterations);
}

#[test]
fn arguments_are_checked_as_on_the_gpu() {
    use wgsl_dsl::runtime::{DispatchError, DispatchErrorKind};
    let (cpu, program) = interpret(&common::saxpy());
    let (a, x, y) = (
        HostBuffer::from_value(2.0f32),
        HostBuffer::from_slice(&[1.0f32; 3]),
        HostBuffer::from_slice(&[0.5f32; 3]),
    );
    let ints = HostBuffer::from_slice(&[1u32; 3]);
    /// What is wrong, the arguments, the grid, and the error expected.
    type Refused<'a> = (
        &'a str,
        &'a [&'a dyn HostArg],
        [u32; 3],
        fn(&DispatchError) -> bool,
    );
    let refused: [Refused<'_>; 4] = [
        ("two arguments", &[&a, &x], [1, 1, 1], |e| {
            matches!(
                e,
                DispatchError {
                    kind: DispatchErrorKind::ArgCount { .. },
                    ..
                }
            )
        }),
        ("u32 for f32", &[&a, &ints, &y], [1, 1, 1], |e| {
            matches!(
                e,
                DispatchError {
                    kind: DispatchErrorKind::Binding { index: 1, .. },
                    ..
                }
            )
        }),
        ("y twice", &[&a, &y, &y], [1, 1, 1], |e| {
            matches!(
                e,
                DispatchError {
                    kind: DispatchErrorKind::Aliased { .. },
                    ..
                }
            )
        }),
        ("70000 workgroups", &[&a, &x, &y], [70000, 1, 1], |e| {
            matches!(
                e,
                DispatchError {
                    kind: DispatchErrorKind::Limit { .. },
                    ..
                }
            )
        }),
    ];
    for (case, args, workgroups, expected) in refused {
        let err = cpu.dispatch(&program, args, workgroups).unwrap_err();
        assert!(
            matches!(&err, InterpError::Dispatch(e) if expected(e)),
            "{case}: {err}"
        );
    }
    cpu.dispatch(&program, &[&a, &x, &y], [1, 1, 1]).unwrap();
    assert_eq!(y.read(), vec![2.5; 3]);
}

// ---- cooperative matrices (subgroups of 32, the interpreter's default) ----

mod coop {
    use super::*;
    use half::f16;
    use wgsl_dsl::types::{Accumulator, CoopLayout, CoopMat, MatrixA, MatrixB};

    type A16 = CoopMat<f16, 16, 16, MatrixA>;
    type B16 = CoopMat<f16, 16, 16, MatrixB>;
    type C16 = CoopMat<f32, 16, 16, Accumulator>;

    fn small_ints(len: usize, seed: usize) -> Vec<f16> {
        (0..len)
            .map(|i| f16::from_f32(((i * 7 + seed * 3) % 5) as f32 - 2.0))
            .collect()
    }

    #[test]
    fn a_multiply_add_loads_and_stores_as_laid_out() {
        // Two subgroups. Subgroup s: A row-major from `a` (vec4<f16>, 6 vectors = 24 scalars a
        // row) starting at vector s; B column-major from `b` (f16, 20 a column); C row-major
        // from `c0` (16 a row); the result stored column-major at out[256 s..].
        let mut k = KernelBuilder::new("mad_layouts", [64, 1, 1]);
        let a = k.storage::<RuntimeArray<Vec4<f16>>, ReadOnly>("a");
        let b = k.storage::<RuntimeArray<f16>, ReadOnly>("b");
        let c0 = k.storage::<RuntimeArray<f32>, ReadOnly>("c0");
        let out = k.storage::<RuntimeArray<f32>, ReadWrite>("out");
        let s = k.let_("s", local_invocation_index() / 32u32);
        let x: Exp<A16> = k.let_("x", a.at(&s).coop_load(6u32, CoopLayout::RowMajor));
        let y: Exp<B16> = k.let_("y", b.at(0u32).coop_load(20u32, CoopLayout::ColumnMajor));
        let z: Exp<C16> = k.let_("z", c0.at(0u32).coop_load(16u32, CoopLayout::RowMajor));
        let d = k.let_("d", coop_multiply_add(&x, &y, &z));
        k.coop_store(&d, &out.at(&s * 256u32), 16u32, CoopLayout::ColumnMajor);
        let (cpu, program) = interpret(&k);
        // Small integers: every product and sum is exact, so the result is too.
        let av = small_ints(16 * 24, 1);
        let bv = small_ints(16 * 20, 2);
        let cv: Vec<f32> = (0..256).map(|i| (i % 9) as f32 - 4.0).collect();
        let (ab, bb, cb) = (
            HostBuffer::from_slice(&av),
            HostBuffer::from_slice(&bv),
            HostBuffer::from_slice(&cv),
        );
        let ob = HostBuffer::from_slice(&[f32::NAN; 512]);
        let a4 = ab.as_vec4().unwrap();
        cpu.dispatch(&program, &[&a4, &bb, &cb, &ob], [1, 1, 1])
            .unwrap();
        let got = ob.read();
        for s in 0..2 {
            for r in 0..16 {
                for c in 0..16 {
                    let mut want = cv[r * 16 + c];
                    for p in 0..16 {
                        want += av[r * 24 + 4 * s + p].to_f32() * bv[c * 20 + p].to_f32();
                    }
                    assert_eq!(got[256 * s + c * 16 + r], want, "subgroup {s} ({r}, {c})");
                }
            }
        }
    }

    #[test]
    fn an_out_of_bounds_load_names_the_element_and_the_line() {
        let mut k = KernelBuilder::new("loads_past_the_end", [32, 1, 1]);
        let b = k.storage::<RuntimeArray<f16>, ReadOnly>("b");
        let out = k.storage::<RuntimeArray<f32>, ReadWrite>("out");
        let line = line!() + 1;
        let y: Exp<B16> = k.let_("y", b.at(0u32).coop_load(16u32, CoopLayout::RowMajor));
        let zero = Exp::<C16>::zero();
        let x: Exp<A16> = k.let_("x", b.at(0u32).coop_load(16u32, CoopLayout::RowMajor));
        let d = k.let_("d", coop_multiply_add(&x, &y, &zero));
        k.coop_store(&d, &out.at(0u32), 16u32, CoopLayout::RowMajor);
        let (cpu, program) = interpret(&k);
        // 250 elements: row 15 of the 16x16 matrix ends past them.
        let bb = HostBuffer::from_slice(&small_ints(250, 0));
        let ob = HostBuffer::from_slice(&[f32::NAN; 256]);
        let target = ["`b`", "(15, 10)"];
        out_of_bounds(&cpu, &program, &[&bb, &ob], &ob, line, 250, &target);
    }

    /// A kernel of two subgroups that loads and stores a matrix for the invocations whose
    /// index is below `limit`. naga's uniformity analysis rejects a cooperative operation in a
    /// branch on the invocation index when the kernel is built, so the branch is built on a
    /// uniform value, `bound`, and its load is replaced by the invocation index afterwards:
    /// a module the static check would have missed, for the run-time check.
    fn partial(limit: u32) -> (wgsl_dsl::Shader, u32, u32) {
        let mut k = KernelBuilder::new("some_subgroups", [64, 1, 1]);
        let bound = k.uniform::<u32>("bound");
        let src = k.storage::<RuntimeArray<f32>, ReadOnly>("src");
        let out = k.storage::<RuntimeArray<f32>, ReadWrite>("out");
        let l = k.let_("l", local_invocation_index());
        let v = k.let_("v", bound.load());
        let branch = line!() + 2;
        let load = line!() + 3;
        k.if_(v.lt(limit), |k| {
            let s = k.let_("s", &l / 32u32);
            let m: Exp<C16> = k.let_("m", src.at(0u32).coop_load(16u32, CoopLayout::RowMajor));
            k.coop_store(&m, &out.at(&s * 256u32), 16u32, CoopLayout::RowMajor);
        });
        let mut shader = k.build().unwrap();
        let f = &mut shader.module.entry_points[0].function;
        let index = f
            .arguments
            .iter()
            .position(|a| {
                a.binding == Some(naga::Binding::BuiltIn(naga::BuiltIn::LocalInvocationIndex))
            })
            .unwrap() as u32;
        let (h, _) = f
            .expressions
            .iter()
            .find(|(_, e)| match e {
                naga::Expression::Load { pointer } => matches!(
                    f.expressions[*pointer],
                    naga::Expression::GlobalVariable(g)
                        if shader.module.global_variables[g].name.as_deref() == Some("bound")
                ),
                _ => false,
            })
            .unwrap();
        f.expressions[h] = naga::Expression::FunctionArgument(index);
        (shader, branch, load)
    }

    #[test]
    fn a_matrix_operation_in_half_a_subgroup_is_divergent() {
        let cpu = Interpreter::new();
        let bound = HostBuffer::from_value(0u32);
        let src = HostBuffer::from_slice(&(0..256).map(|i| i as f32).collect::<Vec<_>>());
        // The first subgroup only: uniform within each subgroup, so fine.
        let (shader, _, _) = partial(32);
        let program = cpu.compile(&shader).unwrap();
        let out = HostBuffer::from_slice(&[f32::NAN; 512]);
        cpu.dispatch(&program, &[&bound, &src, &out], [1, 1, 1])
            .unwrap();
        let got = out.read();
        assert_eq!(&got[..256], &src.read()[..]);
        assert!(got[256..].iter().all(|v| v.is_nan()));
        // Half of the first subgroup: divergent.
        let (shader, branch, load) = partial(16);
        let program = cpu.compile(&shader).unwrap();
        let err = cpu
            .dispatch(&program, &[&bound, &src, &out], [1, 1, 1])
            .unwrap_err();
        let msg = err.to_string();
        let InterpError::DivergentCooperative {
            op,
            site,
            reached,
            missed,
            ref why,
            ..
        } = err
        else {
            panic!("expected a divergent cooperative load, got {msg}")
        };
        assert_eq!((op, at(site)), ("coopLoad", this(load)), "{msg}");
        assert_eq!((reached.local_id[0], missed.local_id[0]), (0, 16), "{msg}");
        assert!(
            why.contains("other branch") && why.contains(&format!("{}:{branch}:", file!())),
            "{msg}"
        );
    }

    /// Subgroup 0 stores a matrix to workgroup memory; every invocation then copies element
    /// `l` of it to `out`, after a barrier or not.
    fn store_then_read(barrier: bool) -> (KernelBuilder, u32, u32) {
        let mut k = KernelBuilder::new("stage_a_matrix", [32, 1, 1]);
        let src = k.storage::<RuntimeArray<f32>, ReadOnly>("src");
        let out = k.storage::<RuntimeArray<f32>, ReadWrite>("out");
        let tile = k.workgroup::<Array<f32, 256>>("tile");
        let l = k.let_("l", local_invocation_index());
        let m: Exp<C16> = k.let_("m", src.at(0u32).coop_load(16u32, CoopLayout::RowMajor));
        let store = line!() + 1;
        k.coop_store(&m, &tile.at(0u32), 16u32, CoopLayout::ColumnMajor);
        if barrier {
            k.workgroup_barrier();
        }
        let read = line!() + 1;
        k.store(&out.at(&l), tile.at(&l).load());
        (k, store, read)
    }

    #[test]
    fn reading_a_stored_matrix_without_a_barrier_is_a_race() {
        let cpu = Interpreter::new();
        let src = HostBuffer::from_slice(&(0..256).map(|i| i as f32).collect::<Vec<_>>());
        let (k, _, _) = store_then_read(true);
        let program = cpu.compile(&k.build().unwrap()).unwrap();
        let out = HostBuffer::from_slice(&[f32::NAN; 32]);
        cpu.dispatch(&program, &[&src, &out], [1, 1, 1]).unwrap();
        // Column-major: element l of the tile is (l % 16, l / 16) of the matrix.
        let want: Vec<f32> = (0..32).map(|l| ((l % 16) * 16 + l / 16) as f32).collect();
        assert_eq!(out.read(), want);
        // Without the barrier: the subgroup's store may be done by any of its invocations.
        let (k, store, read) = store_then_read(false);
        let program = cpu.compile(&k.build().unwrap()).unwrap();
        let (_, first, second, msg) = data_race(cpu.dispatch(&program, &[&src, &out], [1, 1, 1]));
        assert_eq!(first.kind, AccessKind::Write, "{msg}");
        assert_eq!(at(first.site), this(store), "{msg}");
        assert_eq!(at(second.site), this(read), "{msg}");
    }

    #[test]
    fn a_stride_that_differs_within_a_subgroup_is_reported() {
        let mut k = KernelBuilder::new("lane_strides", [32, 1, 1]);
        let src = k.storage::<RuntimeArray<f32>, ReadOnly>("src");
        let out = k.storage::<RuntimeArray<f32>, ReadWrite>("out");
        let l = k.let_("l", local_invocation_index());
        let stride = k.let_("stride", 16u32 + &l / 16u32);
        let line = line!() + 1;
        let m: Exp<C16> = k.let_("m", src.at(0u32).coop_load(&stride, CoopLayout::RowMajor));
        k.coop_store(&m, &out.at(0u32), 16u32, CoopLayout::RowMajor);
        k.skip_uniformity_check();
        let (cpu, program) = interpret(&k);
        let src = HostBuffer::from_slice(&[1.0f32; 512]);
        let out = HostBuffer::from_slice(&[f32::NAN; 256]);
        let err = cpu
            .dispatch(&program, &[&src, &out], [1, 1, 1])
            .unwrap_err();
        let msg = err.to_string();
        let InterpError::NonUniformCooperative {
            operand,
            site,
            second,
            ..
        } = &err
        else {
            panic!("expected a non-uniform stride, got {msg}")
        };
        assert_eq!((*operand, at(*site)), ("stride", this(line)), "{msg}");
        assert_eq!(second.local_id[0], 16, "{msg}");
    }
}
