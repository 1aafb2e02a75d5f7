//! A refused dispatch names the Rust line that made it (`DispatchError::caller`, shown as
//! `(called at file:line:column)`), on both executors and through every entry point: the
//! GPU's `dispatch`, `check` and `Recorder::dispatch`, the interpreter's `dispatch` and
//! `check`, and the `Executor` trait from generic code. Each call is written on the line whose
//! `line!()` the test compares with.

use wgsl_dsl::exec::{DispatchError, DispatchErrorKind, Executor};
use wgsl_dsl::interp::{HostArg, HostBuffer, InterpError, Interpreter};
use wgsl_dsl::prelude::*;
use wgsl_dsl::runtime::{BindArg, GpuBuffer};

mod common;
use common::{compiled_on, gpu};

/// One workgroup.
const G: [u32; 3] = [1, 1, 1];

/// `out[i] = 2 x[i]`, over `out`'s length: a kernel of two bindings.
fn double() -> KernelBuilder {
    let mut k = KernelBuilder::new("double", [64, 1, 1]);
    let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    let out = k.storage::<RuntimeArray<f32>, ReadWrite>("out");
    let i = k.let_("i", global_invocation_id().x());
    k.if_(i.lt(out.len()), |k| {
        k.store(&out.at(&i), x.at(&i).load() * 2.0f32);
    });
    k
}

/// `err` is an argument-count error of `double` reported at `line` of this file, and says so.
fn assert_called_here(err: &DispatchError, line: u32) {
    assert!(
        matches!(
            err.kind,
            DispatchErrorKind::ArgCount {
                expected: 2,
                found: 1
            }
        ),
        "{err}"
    );
    let caller = err.caller().unwrap_or_else(|| panic!("no caller in {err}"));
    assert!(caller.file().ends_with("dispatch_caller.rs"), "{caller}");
    assert_eq!(caller.line(), line, "{err}");
    let message = err.to_string();
    assert!(
        message
            .starts_with("kernel `double` declares 2 bindings, 1 arguments were given (called at ")
            && message.ends_with(&format!("dispatch_caller.rs:{line}:{})", caller.column())),
        "{message}"
    );
    // Where an error was reported is not part of what it is.
    let plain = DispatchError::new("double", err.kind.clone());
    assert_eq!(*err, plain);
    assert!(plain.caller().is_none() && !plain.to_string().contains("called at"));
}

fn interp_dispatch_error(e: InterpError) -> DispatchError {
    match e {
        InterpError::Dispatch(e) => e,
        other => panic!("expected a dispatch error, got {other}"),
    }
}

#[test]
fn gpu_dispatch_check_and_record_name_their_caller() {
    let gpu = gpu();
    let kernel = compiled_on(gpu, &double());
    let x = GpuBuffer::from_slice(gpu, &[1.0f32; 5]).unwrap();
    let one: &[&dyn BindArg] = &[&x];
    let (err, line) = (gpu.dispatch(&kernel, one, G).unwrap_err(), line!());
    assert_called_here(&err, line);
    let (err, line) = (gpu.check(&kernel, one).unwrap_err(), line!());
    assert_called_here(&err, line);
    let mut rec = gpu.recorder();
    let (err, line) = (rec.dispatch(&kernel, one, G).unwrap_err(), line!());
    assert_called_here(&err, line);
}

#[test]
fn interpreter_dispatch_and_check_name_their_caller() {
    let cpu = Interpreter::new();
    let program = cpu.compile(&double().build().unwrap()).unwrap();
    let x = HostBuffer::from_slice(&[1.0f32; 5]);
    let one: &[&dyn HostArg] = &[&x];
    let (err, line) = (cpu.dispatch(&program, one, G).unwrap_err(), line!());
    assert_called_here(&interp_dispatch_error(err), line);
    let (err, line) = (cpu.check(&program, one).unwrap_err(), line!());
    assert_called_here(&interp_dispatch_error(err), line);
}

/// Dispatch `double` with one argument on `executor` through the `Executor` trait: the error
/// names this function's line, which made the call.
fn dispatch_generic<E: Executor>(executor: &E) -> (E::Error, u32) {
    let kernel = executor.build_and_compile(&double()).unwrap();
    let x = executor.upload(&[1.0f32; 5]).unwrap();
    let arg = E::arg(&x);
    (executor.dispatch(&kernel, &[arg], G).unwrap_err(), line!())
}

#[test]
fn the_executor_trait_names_the_generic_caller() {
    let (err, line) = dispatch_generic(gpu());
    assert_called_here(&err, line);
    let (err, line) = dispatch_generic(&Interpreter::new());
    assert_called_here(&interp_dispatch_error(err), line);
}
