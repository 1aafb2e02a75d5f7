//! Helpers shared by the test files of this directory (each file is its own crate: one that
//! does not use a helper would warn about it, hence the `allow(dead_code)`s).

#[allow(dead_code)]
pub mod kernel_ad;
#[allow(dead_code)]
pub mod tiled_product;

use std::sync::OnceLock;

use wgsl_dsl::prelude::*;
use wgsl_dsl::runtime::{BindArg, Gpu, Kernel};
use wgsl_dsl::types::Constructible;
use wgsl_dsl::{CallSite, TargetLimits};

/// One device for the whole test binary. No adapter is a failure, not a skip: CI installs
/// lavapipe.
#[allow(dead_code)]
pub fn gpu() -> &'static Gpu {
    static GPU: OnceLock<Gpu> = OnceLock::new();
    GPU.get_or_init(|| Gpu::new().unwrap_or_else(|e| panic!("no wgpu adapter: {e}")))
}

/// `$body` with `$on` bound to the interpreter, then to the GPU ([`gpu`]): two types of
/// `wgsl_dsl::exec::Executor`, so that the body is written once and compiled for each.
#[macro_export]
macro_rules! on_each_executor {
    (|$on:ident| $body:block) => {{
        {
            let $on = &wgsl_dsl::interp::Interpreter::new();
            $body
        }
        {
            let $on = $crate::common::gpu();
            $body
        }
    }};
}

/// `k` built for `gpu`'s limits and compiled there.
#[allow(dead_code)]
pub fn compiled_on(gpu: &Gpu, k: &KernelBuilder) -> Kernel {
    gpu.compile(&k.build_for(&gpu.target_limits()).expect("builds"))
        .expect("compiles")
}

/// Builds `k` for a target without any optional capability (WebGL) and returns the call site
/// and the capabilities of the `MissingCapability` error it must give.
#[allow(dead_code)]
#[track_caller]
pub fn missing_capability(k: &KernelBuilder) -> (CallSite, naga::valid::Capabilities) {
    let webgl = TargetLimits {
        capabilities: naga::valid::Capabilities::empty(),
        ..TargetLimits::default()
    };
    match k.build_for(&webgl) {
        Err(BuildError::MissingCapability { site, needed, .. }) => (site, needed),
        other => panic!("expected MissingCapability, got {other:?}"),
    }
}

/// A kernel `name` of 64 invocations a workgroup over three bindings, named by `names`: a
/// uniform `U`, a read-only `array<X>` and a read-write `array<O>`, `out`. Each invocation
/// `i < arrayLength(out)` stores `value(uniform, input, out, i)` at `out[i]`.
#[allow(dead_code)]
pub fn guarded_map<U: Constructible, X: WgslType, O: Constructible>(
    name: &str,
    names: [&str; 3],
    value: impl FnOnce(
        &Place<U, ReadOnly>,
        &Place<RuntimeArray<X>, ReadOnly>,
        &Place<RuntimeArray<O>, ReadWrite>,
        &Exp<u32>,
    ) -> Exp<O>,
) -> KernelBuilder {
    let mut k = KernelBuilder::new(name, [64, 1, 1]);
    let uniform = k.uniform::<U>(names[0]);
    let input = k.storage::<RuntimeArray<X>, ReadOnly>(names[1]);
    let out = k.storage::<RuntimeArray<O>, ReadWrite>(names[2]);
    let i = k.let_("i", global_invocation_id().x());
    k.if_(i.lt(out.len()), |k| {
        k.store(&out.at(&i), value(&uniform, &input, &out, &i));
    });
    k
}

/// `y[i] = a * x[i] + y[i]` for `i < arrayLength(y)`; bindings: `a` (uniform f32), `x`
/// (read), `y` (read_write).
#[allow(dead_code)]
pub fn saxpy() -> KernelBuilder {
    guarded_map::<f32, f32, f32>("saxpy", ["a", "x", "y"], |a, x, y, i| {
        a.load() * x.at(i).load() + y.at(i).load()
    })
}

/// Dispatches `kernel` on `args` with one invocation for each of `0..n` in x (as many
/// workgroups as [`Kernel::workgroups_for`] gives).
#[allow(dead_code)]
pub fn dispatch_over(gpu: &Gpu, kernel: &Kernel, args: &[&dyn BindArg], n: usize) {
    let workgroups = kernel.workgroups_for([n as u32, 1, 1]);
    gpu.dispatch(kernel, args, workgroups).expect("dispatch");
}
