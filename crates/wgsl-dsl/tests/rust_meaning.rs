//! The DSL means what the Rust says (issue 21, items 1, 2, 4, 5 and 6), on the interpreter,
//! whose strict out-of-bounds check sees an operand evaluated that Rust would not evaluate:
//!
//! - `&&` / `||` evaluate their right operand only when Rust would, when it loads, calls or has
//!   an effect (a branch in the WGSL); pure right operands stay WGSL's `&&` / `||`;
//! - an `if` used as a value whose arms load is a branch, not a `select`;
//! - `select` keeps WGSL's eager meaning: both operands are evaluated, and an out-of-bounds
//!   read in the one not chosen is still reported;
//! - a kernel built for a GPU's limits (1024 invocations) runs on the interpreter;
//! - `#[kernel]`'s typed interface (and `#[derive(Bindings)]`'s) dispatches on the
//!   interpreter with the same argument structs, over `HostBuffer`s (item 4);
//! - an `if` whose condition is a constant (an `#[unroll]` counter's) keeps only the arm it
//!   picks, in Rust (no `j - 1` for `j == 0`) and in the WGSL (no `if true`) (item 6).
//!
//! Every buffer has an odd length (37) and the grid covers more invocations (64), so that the
//! invocations past the end are the ones a guard must stop; outputs are poisoned first.

use wgsl_dsl::interp::{HostBuffer, InterpError, Interpreter};
use wgsl_dsl::prelude::*;
use wgsl_dsl::runtime::{DispatchError, DispatchErrorKind, KernelDef};
use wgsl_dsl::{CallSite, TargetLimits};

const N: usize = 37;

/// `N` values in `[-1, 1)`, about half of them positive, none zero.
fn values() -> Vec<f32> {
    (0..N as u32)
        .map(|i| ((i.wrapping_mul(2_654_435_761) >> 7) % 1000) as f32 / 500.0 - 0.999)
        .collect()
}

/// Runs `k` (bindings `a: array<f32>` read, `out: array<u32>` written) over one workgroup
/// of 64 invocations on `a = values()`, and returns `out` (poisoned with `u32::MAX` first).
fn run(k: &KernelBuilder) -> Result<Vec<u32>, Box<InterpError>> {
    let cpu = Interpreter::new();
    let program = cpu.compile(&k.build().expect("builds")).expect("compiles");
    let a = HostBuffer::from_slice(&values());
    let out = HostBuffer::from_slice(&[u32::MAX; N]);
    cpu.dispatch(&program, &[&a, &out], [1, 1, 1])
        .map_err(Box::new)?;
    Ok(out.read())
}

/// The kernel `name`: `out[i] = select(0, 1, flag(i, a))` for every `i < arrayLength(&out)`,
/// `flag` computed (and bound to a `let`) by every invocation of the grid.
fn flag_kernel(
    name: &str,
    flag: impl FnOnce(&Exp<u32>, &Place<RuntimeArray<f32>, ReadOnly>) -> Exp<bool>,
) -> KernelBuilder {
    let mut k = KernelBuilder::new(name, [64, 1, 1]);
    let a = k.storage::<RuntimeArray<f32>, ReadOnly>("a");
    let out = k.storage::<RuntimeArray<u32>, ReadWrite>("out");
    let i = k.let_("i", global_invocation_id().x());
    let f = k.let_("flag", flag(&i, &a));
    k.if_(i.lt(out.len()), |k| {
        k.store(&out.at(&i), f.select(1u32, 0u32))
    });
    k
}

fn expected(flag: impl Fn(f32) -> bool) -> Vec<u32> {
    values().into_iter().map(|v| u32::from(flag(v))).collect()
}

#[test]
fn and_with_a_load_on_the_right_reads_only_where_the_left_is_true() {
    let k = flag_kernel("guarded_and", |i, a| {
        i.lt(a.len()).and(a.at(i).load().gt(0.0f32))
    });
    assert_eq!(run(&k).unwrap(), expected(|v| v > 0.0));
    // The load is in a branch on the left operand: no `&&` evaluating both.
    assert!(!k.build().unwrap().wgsl.contains("&&"));
}

#[test]
fn or_with_a_load_on_the_right_reads_only_where_the_left_is_false() {
    let k = flag_kernel("guarded_or", |i, a| {
        i.ge(a.len()).or(a.at(i).load().le(0.0f32))
    });
    assert_eq!(run(&k).unwrap(), expected(|v| v <= 0.0));
    assert!(!k.build().unwrap().wgsl.contains("||"));
}

#[test]
fn and_of_pure_operands_stays_a_wgsl_and() {
    // `i` and `n` are `let`s: evaluating `i < n` eagerly is unobservable.
    let k = flag_kernel("pure_and", |i, a| {
        let _ = a;
        i.lt(40u32).and(i.ge(3u32))
    });
    let want: Vec<u32> = (0..N as u32).map(|i| u32::from(i >= 3)).collect();
    assert_eq!(run(&k).unwrap(), want);
    assert!(k.build().unwrap().wgsl.contains("&&"));
}

#[test]
fn and_nested_in_an_expression_evaluates_its_load_only_when_needed() {
    // The `&&` is inside a `select` inside a comparison: the branch goes before the statement.
    let k = flag_kernel("nested_and", |i, a| {
        let guarded = i.lt(a.len()).and(a.at(i).load().gt(0.5f32));
        select(2u32, 1u32, guarded).eq(1u32).or(i.ge(a.len()))
    });
    assert_eq!(run(&k).unwrap(), expected(|v| v > 0.5));
}

#[test]
fn if_value_with_a_load_in_an_arm_is_a_branch() {
    let mut k = KernelBuilder::new("guarded_value", [64, 1, 1]);
    let a = k.storage::<RuntimeArray<f32>, ReadOnly>("a");
    let out = k.storage::<RuntimeArray<u32>, ReadWrite>("out");
    let i = k.let_("i", global_invocation_id().x());
    let v = k.if_value("v", i.lt(a.len()), |_| a.at(&i).load(), |_| lit(-5.0f32));
    k.if_(i.lt(out.len()), |k| {
        k.store(&out.at(&i), (v + 2.0f32).to_u32())
    });
    let want: Vec<u32> = values().iter().map(|v| (v + 2.0) as u32).collect();
    assert_eq!(run(&k).unwrap(), want);
    assert!(!k.build().unwrap().wgsl.contains("select("));
}

#[kernel(workgroup_size = 64)]
fn guarded_in_rust_syntax(
    #[storage(read)] a: &[f32],
    #[storage(read_write)] out: &mut [u32],
    #[builtin(global_invocation_id)] gid: Vec3<u32>,
) {
    let i = gid.x;
    let v = if i < a.len() { a[i] } else { 0.0 };
    let positive = i < a.len() && a[i] > 0.0;
    if i < out.len() {
        out[i] = (v + 2.0) as u32 + if positive { 10u32 } else { 0u32 };
    }
}

#[test]
fn kernel_if_value_and_and_with_loads_read_only_where_rust_does() {
    let k = guarded_in_rust_syntax();
    let want: Vec<u32> = values()
        .iter()
        .map(|&v| (v + 2.0) as u32 + if v > 0.0 { 10 } else { 0 })
        .collect();
    assert_eq!(run(&k).unwrap(), want);
}

#[kernel(workgroup_size = 64)]
fn counts_where_rust_would(
    #[storage(read)] a: &[f32],
    #[storage(read_write)] calls: &mut [Atomic<u32>],
    #[builtin(global_invocation_id)] gid: Vec3<u32>,
) {
    let i = gid.x;
    // The atomic is the right operand's effect: Rust runs it for `i < a.len()` only.
    if i < a.len() && calls[0].atomic_add(1u32) < 1000u32 {
        let _ = calls[1].atomic_add(1u32);
    }
    if i >= 40u32 || calls[2].atomic_add(1u32) > 1000u32 {
        let _ = calls[3].atomic_add(1u32);
    }
}

#[test]
fn kernel_and_or_with_an_effect_on_the_right_run_it_only_where_rust_does() {
    let cpu = Interpreter::new();
    let program = cpu
        .compile(&counts_where_rust_would().build().expect("builds"))
        .expect("compiles");
    let a = HostBuffer::from_slice(&values());
    let calls = HostBuffer::from_slice(&[0u32; 4]);
    cpu.dispatch(&program, &[&a, &calls], [1, 1, 1]).unwrap();
    // `&&`: 37 invocations have i < 37; `||`: 40 have i < 40, and none passes `> 1000`, so
    // the 24 with i >= 40 take the branch.
    assert_eq!(calls.read(), vec![37, 37, 40, 24]);
}

#[test]
fn select_is_eager_and_an_out_of_bounds_read_in_it_is_reported() {
    let mut line = 0;
    let k = flag_kernel("eager_select", |i, a| {
        line = line!() + 1;
        let v = a.at(i).load();
        select(0.0f32, v, i.lt(a.len())).gt(0.0f32)
    });
    let err = run(&k).unwrap_err();
    let InterpError::OutOfBounds {
        site, index, len, ..
    } = &*err
    else {
        panic!("expected out of bounds, got {err}");
    };
    assert_eq!(
        site.map(|s: CallSite| (s.file, s.line)),
        Some((file!(), line))
    );
    assert_eq!((*index, *len), (N as i64, N as u64), "{err}");
}

/// What `Gpu::target_limits` gives for a desktop GPU (lavapipe's, the H200's): 1024
/// invocations per workgroup.
fn gpu_like() -> TargetLimits {
    TargetLimits {
        max_invocations_per_workgroup: 1024,
        max_workgroup_size: [1024, 1024, 64],
        max_workgroup_storage_size: 32768,
        ..TargetLimits::default()
    }
}

#[test]
fn a_kernel_built_for_a_gpus_limits_runs_on_the_interpreter() {
    let mut k = KernelBuilder::new("wide", [1024, 1, 1]);
    let out = k.storage::<RuntimeArray<u32>, ReadWrite>("out");
    let tile = k.workgroup::<Array<u32, 1024>>("tile");
    let l = k.let_("l", local_invocation_index());
    k.store(&tile.at(&l), &l * 3u32);
    k.workgroup_barrier();
    k.store(&out.at(&l), tile.at(1023u32 - &l).load());
    let shader = k
        .build_for(&gpu_like())
        .expect("builds for 1024 invocations");
    let cpu = Interpreter::new();
    let program = cpu
        .compile(&shader)
        .expect("the interpreter takes the shader's limits");
    let buf = HostBuffer::from_slice(&[u32::MAX; 1024]);
    let report = cpu.dispatch(&program, &[&buf], [1, 1, 1]).unwrap();
    assert_eq!(report.invocations, 1024);
    let want: Vec<u32> = (0..1024u32).map(|l| (1023 - l) * 3).collect();
    assert_eq!(buf.read(), want);
    // Built for WebGPU's defaults, the same kernel is refused by `build` (256 invocations).
    assert!(matches!(k.build(), Err(BuildError::WorkgroupSize { .. })));
}

include!("kernels/step.rs");

/// `params[i] -= lr * grads[i]` for `i < len`.
#[kernel(workgroup_size = 64, grid = |len: usize| [(len as u32).div_ceil(64), 1, 1])]
fn descend(
    #[uniform] step: Step,
    #[storage(read)] grads: &[f32],
    #[storage(read_write)] params: &mut [f32],
    #[builtin(global_invocation_id)] gid: Vec3<u32>,
) {
    let i = gid.x;
    if i < step.len {
        params[i] -= step.lr * grads[i];
    }
}

#[test]
fn a_kernel_dispatches_through_its_argument_struct_on_the_interpreter() {
    let cpu = Interpreter::new();
    let kernel = cpu.compile_typed(Descend).expect("compiles");
    let (g, p) = (
        values(),
        values().iter().map(|v| v * 3.0).collect::<Vec<_>>(),
    );
    let step = HostBuffer::from_value(Step {
        lr: 0.5,
        len: N as u32,
        _pad0: 0,
        _pad1: 0,
    });
    let grads = HostBuffer::from_slice(&g);
    let mut params = HostBuffer::from_slice(&p);
    // The struct `gpu.compile_typed(Descend)` dispatches, over host buffers.
    let args = DescendArgs {
        step: &step,
        grads: &grads,
        params: &mut params,
    };
    let report = kernel.dispatch(&cpu, args, N).expect("runs");
    assert_eq!(report.invocations, 64);
    let want: Vec<f32> = p.iter().zip(&g).map(|(p, g)| p - 0.5 * g).collect();
    assert_eq!(params.read(), want);
}

#[derive(Debug, Bindings)]
struct ScaleBindings {
    #[uniform]
    factor: Place<f32, ReadOnly>,
    x: Buffer<f32, ReadOnly>,
    y: Buffer<f32, ReadWrite>,
}

/// `y[i] = factor * x[i]`, written with the builder; `swapped` declares `y` before `x`,
/// which its argument struct does not.
#[derive(Clone, Debug)]
struct Scale {
    swapped: bool,
}

impl KernelDef for Scale {
    type Args<'a> = ScaleArgs<'a>;
    type Size = usize;
    fn build(&self) -> KernelBuilder {
        let mut k = KernelBuilder::new("scale", [64, 1, 1]);
        let (factor, x, y) = if self.swapped {
            let factor = k.uniform::<f32>("factor");
            let y = k.storage::<RuntimeArray<f32>, ReadWrite>("y");
            let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
            (factor, x, y)
        } else {
            let ScaleBindings { factor, x, y } = k.bindings();
            (factor, x, y)
        };
        let i = k.let_("i", global_invocation_id().x());
        k.if_(i.lt(y.len()), |k| {
            k.store(&y.at(&i), factor.load() * x.at(&i).load())
        });
        k
    }
    fn workgroups(&self, n: usize) -> [u32; 3] {
        [(n as u32).div_ceil(64), 1, 1]
    }
}

#[test]
fn a_builder_kernel_dispatches_through_its_bindings_struct_on_the_interpreter() {
    let cpu = Interpreter::new();
    let kernel = cpu
        .compile_typed(Scale { swapped: false })
        .expect("compiles");
    let factor = HostBuffer::from_value(-2.0f32);
    let x = HostBuffer::from_slice(&values());
    let mut y = HostBuffer::from_slice(&[f32::NAN; N]);
    let args = ScaleArgs {
        factor: &factor,
        x: &x,
        y: &mut y,
    };
    kernel.dispatch(&cpu, args, N).expect("runs");
    let want: Vec<f32> = values().iter().map(|v| -2.0 * v).collect();
    assert_eq!(y.read(), want);
    // A kernel whose bindings are not its argument struct's is refused, as on the GPU.
    match cpu.compile_typed(Scale { swapped: true }) {
        Err(InterpError::Dispatch(DispatchError {
            kind: DispatchErrorKind::Interface { message, .. },
            ..
        })) => {
            assert!(message.contains("binding 1"), "{message}");
        }
        other => panic!("expected an interface error, got {:?}", other.map(|_| ())),
    }
}

/// Sums `x[j - 1]` for `j` in `1..4` of an unrolled loop; the condition `j > 0` is a Rust
/// value, so `j - 1` (a `u32`) is never computed for `j == 0`.
#[kernel(workgroup_size = 1)]
fn unrolled_guard(#[storage(read)] x: &[f32], #[storage(read_write)] out: &mut [f32]) {
    let mut acc = 0.0;
    #[unroll]
    for j in 0..4u32 {
        if j > 0 {
            acc += x[j - 1];
        } else {
            acc += 100.0;
        }
        let w = if j == 3 { 2.0 } else { 1.0 };
        acc *= w;
    }
    out[0] = acc;
}

#[test]
fn constant_conditions_of_an_unrolled_loop_pick_their_arm_in_rust_and_in_the_wgsl() {
    let k = unrolled_guard();
    let wgsl = k.build().expect("builds").wgsl;
    for dead in ["if true", "if false", "select(", "100f * 0f"] {
        assert!(!wgsl.contains(dead), "`{dead}` in:\n{wgsl}");
    }
    let cpu = Interpreter::new();
    let program = cpu.compile(&k.build().unwrap()).unwrap();
    let x = HostBuffer::from_slice(&values());
    let out = HostBuffer::from_slice(&[f32::NAN]);
    cpu.dispatch(&program, &[&x, &out], [1, 1, 1]).unwrap();
    let v = values();
    let want = (100.0 + v[0] + v[1] + v[2]) * 2.0;
    assert_eq!(out.read(), vec![want]);
}

#[test]
fn an_if_whose_condition_folds_to_a_constant_keeps_only_its_arm() {
    let mut k = KernelBuilder::new("folded", [1, 1, 1]);
    let out = k.storage::<RuntimeArray<u32>, ReadWrite>("out");
    let two = k.let_("two", lit(2u32));
    k.if_else(
        lit(1u32).lt(&two),
        |k| k.store(&out.at(0u32), 7u32),
        |k| k.store(&out.at(0u32), 8u32),
    );
    k.if_(lit(false).or(two.eq(3u32)), |k| {
        k.store(&out.at(1u32), 9u32)
    });
    k.store(&out.at(1u32), 5u32);
    let wgsl = k.build().expect("builds").wgsl;
    assert!(
        !wgsl.contains("if ") && !wgsl.contains("8u") && !wgsl.contains("9u"),
        "{wgsl}"
    );
    assert!(wgsl.contains("= 7u;"), "{wgsl}");
}
