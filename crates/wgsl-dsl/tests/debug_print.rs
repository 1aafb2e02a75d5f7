//! `debug_print` (issue 26): the interpreter records every print with its invocation, its
//! Rust line and its values, in the documented order (workgroup in dispatch order, then
//! `local_invocation_index`, then the invocation's own order), checked against a CPU loop
//! that walks the dispatch in that order; the GPU's kernel is the same WGSL as the kernel
//! without the prints; format strings are checked at the call; `debug_print!` in `#[kernel]`.

use wgsl_dsl::interp::{DebugRecord, DebugValue, HostBuffer, InterpError, Interpreter};
use wgsl_dsl::prelude::*;

/// Workgroup size and grid of the tests: 3 x 2 invocations per workgroup, 2 x 2 workgroups,
/// so that the order has every dimension to get wrong.
const WG: [u32; 3] = [3, 2, 1];
const GRID: [u32; 3] = [2, 2, 1];
/// Elements of `data`: fewer than the 24 invocations, so that some return before printing.
const N: u32 = 19;

/// Deterministic data of odd values (not all zero).
fn data() -> Vec<f32> {
    (0..N).map(|i| (i as f32) * 0.75 - 4.125).collect()
}

/// The lines of the `debug_print`s in [`kernel`], filled in as it is built.
#[derive(Default, Debug)]
struct Lines {
    first: u32,
    in_loop: u32,
    in_helper: u32,
}

/// For every invocation `i` (row-major index of its global id in a 6-wide grid) below `N`:
/// print `i` and `data[i]`; in a loop of `i % 3` iterations print `j` and a `vec2`; from a
/// helper print `-x > 0.0` for odd `i`; then `data[i] *= 2`. With `prints` false, the same
/// kernel without the prints.
fn kernel(prints: bool, lines: &mut Lines) -> KernelBuilder {
    let mut k = KernelBuilder::new("show", WG);
    let data = k.storage::<RuntimeArray<f32>, ReadWrite>("data");
    let gid = k.let_("gid", global_invocation_id());
    let i = k.let_("i", gid.y() * (WG[0] * GRID[0]) + gid.x());
    k.if_(i.ge(N), |k| k.return_());
    let x = k.let_("x", data.at(&i).load());
    if prints {
        k.debug_print("i = {}, data[i] = {}", (&i, &x));
        lines.first = line!() - 1;
    }
    let in_loop = &mut lines.in_loop;
    k.for_range("j", 0u32, i.clone() % 3u32, |k, j| {
        if prints {
            k.debug_print("j = {} of {}: {}", (&j, &i, vec2(x.clone(), j.to_f32())));
            *in_loop = line!() - 1;
        }
    });
    let in_helper = &mut lines.in_helper;
    let negative = k.function::<(f32,), f32>("negative", ["v"], |k, (v,)| {
        if prints {
            k.debug_print("-v > 0 is {{{}}}", (-v.clone()).gt(0.0f32));
            *in_helper = line!() - 1;
        }
        -v
    });
    k.if_((i.clone() % 2u32).eq(1u32), |k| {
        let _ = k.call(&negative, (x.clone(),));
    });
    k.store(&data.at(&i), x.clone() * 2.0f32);
    k
}

/// What the prints of [`kernel`] must record, walked on the CPU in the documented order:
/// workgroups in dispatch order (`x` fastest), invocations by local index, each
/// invocation's prints in program order.
fn expected(lines: &Lines, data: &[f32]) -> Vec<(wgsl_dsl::interp::Invocation, u32, String)> {
    let mut out = Vec::new();
    for wy in 0..GRID[1] {
        for wx in 0..GRID[0] {
            for ly in 0..WG[1] {
                for lx in 0..WG[0] {
                    let g = [wx * WG[0] + lx, wy * WG[1] + ly, 0];
                    let i = g[1] * (WG[0] * GRID[0]) + g[0];
                    if i >= N {
                        continue;
                    }
                    let inv = wgsl_dsl::interp::Invocation {
                        global_id: g,
                        workgroup_id: [wx, wy, 0],
                        local_id: [lx, ly, 0],
                    };
                    let x = data[i as usize];
                    out.push((inv, lines.first, format!("i = {i}, data[i] = {x:?}")));
                    for j in 0..i % 3 {
                        let v = format!("vec2({x:?}, {:?})", j as f32);
                        out.push((inv, lines.in_loop, format!("j = {j} of {i}: {v}")));
                    }
                    if i % 2 == 1 {
                        out.push((inv, lines.in_helper, format!("-v > 0 is {{{}}}", -x > 0.0)));
                    }
                }
            }
        }
    }
    out
}

fn run(cpu: &Interpreter, k: &KernelBuilder) -> Vec<f32> {
    let program = cpu.compile(&k.build().unwrap()).unwrap();
    let buf = HostBuffer::from_slice(&data());
    cpu.dispatch(&program, &[&buf], GRID).unwrap();
    buf.read()
}

#[test]
fn the_interpreter_records_each_print_with_its_invocation_line_and_values_in_order() {
    let mut lines = Lines::default();
    let k = kernel(true, &mut lines);
    let cpu = Interpreter::new();
    let result = run(&cpu, &k);
    let records = cpu.take_debug_output();
    let want = expected(&lines, &data());
    assert_eq!(records.len(), want.len());
    for (r, (inv, line, message)) in records.iter().zip(&want) {
        assert_eq!(r.invocation, *inv, "{r}");
        assert_eq!((r.site.file, r.site.line), (file!(), *line), "{r}");
        assert_eq!(&r.message, message, "{r}");
        assert_eq!(r.kernel, "show");
        assert_eq!(r.dispatch, 0);
        // The line a reader sees: file:line:col, the kernel, the invocation, the message.
        assert_eq!(
            r.to_string(),
            format!("{}: kernel `show` {inv}: {message}", r.site)
        );
    }
    // Structured values: the first print of invocation (4, 0, 0) (i = 4).
    let data = data();
    let r = records
        .iter()
        .find(|r| r.invocation.global_id == [4, 0, 0] && r.site.line == lines.first)
        .unwrap();
    assert_eq!(r.values, vec![DebugValue::U32(4), DebugValue::F32(data[4])]);
    let r = records
        .iter()
        .find(|r| r.invocation.global_id == [5, 0, 0] && r.site.line == lines.in_loop)
        .unwrap();
    assert_eq!(
        r.values[2],
        DebugValue::Vector(vec![DebugValue::F32(data[5]), DebugValue::F32(0.0)])
    );
    // The prints change nothing: the results are those of the kernel without them.
    let plain = run(&Interpreter::new(), &kernel(false, &mut Lines::default()));
    assert_eq!(result, plain);
    let want: Vec<f32> = data.iter().map(|x| x * 2.0).collect();
    assert_eq!(result, want);
    // Taken: nothing left; a second dispatch is numbered 1.
    assert!(cpu.take_debug_output().is_empty());
    run(&cpu, &k);
    let again = cpu.take_debug_output();
    assert_eq!(again.len(), want_len(&lines));
    assert!(again.iter().all(|r| r.dispatch == 1));
}

fn want_len(lines: &Lines) -> usize {
    expected(lines, &data()).len()
}

#[test]
fn the_gpu_build_is_the_kernel_without_its_prints() {
    let mut lines = Lines::default();
    let with = kernel(true, &mut lines).build().unwrap();
    let without = kernel(false, &mut Lines::default()).build().unwrap();
    assert_eq!(with.wgsl, without.wgsl);
    assert!(!with.wgsl.contains("debug_print"), "{}", with.wgsl);
    assert_eq!(with.module.functions.len(), without.module.functions.len());
    assert_eq!(with.signature, without.signature);
    assert_eq!(with.debug_prints(), 3);
    assert_eq!(without.debug_prints(), 0);
}

#[test]
fn format_strings_are_checked_at_the_call() {
    let mut k = KernelBuilder::new("bad", [1, 1, 1]);
    let i = k.let_("i", local_invocation_index());
    k.debug_print("{} and {}", &i);
    let line = line!() - 1;
    match k.build() {
        Err(BuildError::DebugFormat {
            placeholders: 2,
            arguments: 1,
            site,
            message,
        }) => {
            assert_eq!((site.file, site.line), (file!(), line));
            assert!(
                message.contains("2 `{}` placeholders but 1 argument is given"),
                "{message}"
            );
        }
        other => panic!("expected DebugFormat, got {other:?}"),
    }
    let mut k = KernelBuilder::new("bad", [1, 1, 1]);
    let i = k.let_("i", local_invocation_index());
    k.debug_print("i = {i}", &i);
    k.debug_print("no values", ());
    k.debug_print("{{}} {}", ());
    let err = k.build().unwrap_err();
    let BuildError::Several(errors) = &err else {
        panic!("expected two errors, got {err:?}");
    };
    assert_eq!(errors.len(), 2, "{err}");
    assert!(
        matches!(&errors[0], BuildError::DebugFormat { message, .. } if message.contains("only `{}` placeholders")),
        "{err}"
    );
    assert!(
        matches!(
            &errors[1],
            BuildError::DebugFormat {
                placeholders: 1,
                arguments: 0,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn a_failing_dispatch_keeps_the_prints_made_before_its_error() {
    let mut k = KernelBuilder::new("oob", [4, 1, 1]);
    let data = k.storage::<RuntimeArray<u32>, ReadWrite>("data");
    let i = k.let_("i", local_invocation_index());
    k.debug_print("about to write data[{}]", &i);
    k.store(&data.at(i.clone() * 2u32), i.clone());
    let cpu = Interpreter::new();
    let program = cpu.compile(&k.build().unwrap()).unwrap();
    let buf = HostBuffer::from_slice(&[u32::MAX; 5]);
    let err = cpu.dispatch(&program, &[&buf], [1, 1, 1]).unwrap_err();
    assert!(matches!(err, InterpError::OutOfBounds { .. }), "{err}");
    let records: Vec<String> = cpu
        .take_debug_output()
        .iter()
        .map(|r| r.message.clone())
        .collect();
    assert_eq!(
        records,
        (0..4)
            .map(|i| format!("about to write data[{i}]"))
            .collect::<Vec<_>>()
    );
    // The failed run wrote nothing back.
    assert_eq!(buf.read(), vec![u32::MAX; 5]);
}

#[test]
fn values_of_every_scalar_kind_print_as_rust_writes_them() {
    let mut k = KernelBuilder::new("kinds", [1, 1, 1]);
    let out = k.storage::<RuntimeArray<i32>, ReadWrite>("out");
    let n = k.let_("n", out.at(0u32).load());
    k.debug_print(
        "{} {} {} {} {}",
        (
            &n,
            n.to_u32(),
            n.to_f32() / 4.0f32,
            n.lt(0i32),
            vec3(n.clone(), n.clone() + 1i32, -n.clone()),
        ),
    );
    let cpu = Interpreter::new();
    let program = cpu.compile(&k.build().unwrap()).unwrap();
    cpu.dispatch(&program, &[&HostBuffer::from_slice(&[-6i32])], [1, 1, 1])
        .unwrap();
    let records: Vec<DebugRecord> = cpu.take_debug_output();
    assert_eq!(records.len(), 1);
    assert_eq!(
        records[0].message,
        format!("-6 {} -1.5 true vec3(-6, -5, 6)", (-6i32) as u32)
    );
}

// ---- `debug_print!` in `#[kernel]` ----

#[kernel(workgroup_size = 4)]
fn scaled(
    #[storage(read_write)] y: &mut [f32],
    #[builtin(global_invocation_id)] gid: Vec3<u32>,
    factor: f32,
) {
    let i = gid.x;
    if i < y.len() {
        let v = y[i] * factor;
        debug_print!("y[{}] = {} * {} = {}", i, y[i], factor, v);
        y[i] = v;
    }
}

#[kernel(workgroup_size = 4, name = "scaled")]
fn scaled_quietly(
    #[storage(read_write)] y: &mut [f32],
    #[builtin(global_invocation_id)] gid: Vec3<u32>,
    factor: f32,
) {
    let i = gid.x;
    if i < y.len() {
        let v = y[i] * factor;
        y[i] = v;
    }
}

#[test]
fn debug_print_in_a_kernel_prints_with_the_kernels_line() {
    let source = include_str!("debug_print.rs");
    let line = source
        .lines()
        .position(|l| l.trim_start().starts_with("debug_print!(\"y[{}]"))
        .unwrap() as u32
        + 1;
    let loud = scaled(1.5).build().unwrap();
    assert_eq!(loud.wgsl, scaled_quietly(1.5).build().unwrap().wgsl);
    let cpu = Interpreter::new();
    let program = cpu.compile(&loud).unwrap();
    let y: Vec<f32> = (0..7).map(|i| i as f32 - 2.5).collect();
    let buf = HostBuffer::from_slice(&y);
    cpu.dispatch(&program, &[&buf], [2, 1, 1]).unwrap();
    let records = cpu.take_debug_output();
    assert_eq!(records.len(), 7);
    for (i, r) in records.iter().enumerate() {
        assert_eq!((r.site.file, r.site.line), (file!(), line), "{r}");
        assert_eq!(r.invocation.global_id, [i as u32, 0, 0]);
        let v = y[i] * 1.5;
        assert_eq!(
            r.message,
            format!("y[{i}] = {:?} * 1.5 = {v:?}", y[i]),
            "{r}"
        );
    }
}
