//! A refused dispatch names the Rust line that made it (`DispatchError::caller`, shown as
//! `(called at file:line:column)`), on both executors: the GPU's `dispatch`, `check` and
//! `Recorder::dispatch`, the interpreter's `dispatch` and `check`, the `Executor` trait from
//! generic code, and the typed dispatches of both and `record`. Each call is written on the line whose
//! `line!()` the test compares with.

use wgsl_dsl::exec::{DispatchError, DispatchErrorKind, Executor};
use wgsl_dsl::interp::{HostArg, HostBuffer, InterpError, Interpreter};
use wgsl_dsl::prelude::*;
use wgsl_dsl::runtime::{BindArg, GpuBuffer, KernelDef};

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
    assert!(
        err.to_string()
            .starts_with("kernel `double` declares 2 bindings, 1 argument was given (called at "),
        "{err}"
    );
    assert_reported_at(err, line);
    // Where an error was reported is not part of what it is.
    let plain = DispatchError::new("double", err.kind.clone());
    assert_eq!(*err, plain);
    assert!(plain.caller().is_none() && !plain.to_string().contains("called at"));
}

/// `err` names `line` of this file as its caller, at the end of its message.
fn assert_reported_at(err: &DispatchError, line: u32) {
    let caller = err.caller().unwrap_or_else(|| panic!("no caller in {err}"));
    assert!(caller.file().ends_with("dispatch_caller.rs"), "{caller}");
    assert_eq!(caller.line(), line, "{err}");
    let end = format!("dispatch_caller.rs:{line}:{})", caller.column());
    assert!(err.to_string().ends_with(&end), "{err}");
}

/// `out[i] = 1` for `i` below `out`'s length; its grid grows along y, `n / 64` workgroups, so
/// a large `n` passes the device's 65535 workgroups per dimension.
#[derive(Bindings)]
struct OnesBindings {
    out: Buffer<f32, ReadWrite>,
}

#[derive(Clone, Copy, Debug)]
struct Ones;

impl KernelDef for Ones {
    type Args<'a> = OnesArgs<'a>;
    type Size = usize;
    fn build(&self) -> KernelBuilder {
        let mut k = KernelBuilder::new("ones", [64, 1, 1]);
        let OnesBindings { out } = k.bindings();
        let i = k.let_(
            "i",
            global_invocation_id().y() * 64u32 + local_invocation_id().x(),
        );
        k.if_(i.lt(out.len()), |k| k.store(&out.at(&i), 1.0f32));
        k
    }
    fn workgroups(&self, n: usize) -> [u32; 3] {
        [1, (n as u32).div_ceil(64), 1]
    }
}

/// More rows of workgroups than a device takes.
const TOO_MANY: usize = 64 * 70_000;

/// `err` is the grid limit of `ones`, reported at `line` of this file.
fn assert_grid_refused_here(err: &DispatchError, line: u32) {
    assert!(matches!(err.kind, DispatchErrorKind::Limit { .. }), "{err}");
    assert_eq!(err.kernel(), Some("ones"), "{err}");
    assert_reported_at(err, line);
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

#[test]
fn typed_dispatches_name_their_caller() {
    // The typed forms reach the positional dispatch through a closure over the arguments:
    // the caller is still the user's line.
    let gpu = gpu();
    let kernel = gpu.compile_typed(Ones).expect("compiles");
    let mut out = GpuBuffer::from_slice(gpu, &[f32::NAN; 5]).unwrap();
    let args = OnesArgs { out: &mut out };
    let (err, line) = (kernel.dispatch(gpu, args, TOO_MANY).unwrap_err(), line!());
    assert_grid_refused_here(&err, line);
    let mut r = gpu.recorder();
    let args = OnesArgs { out: &mut out };
    let (err, line) = (kernel.record(&mut r, args, TOO_MANY).unwrap_err(), line!());
    assert_grid_refused_here(&err, line);
    let cpu = Interpreter::new();
    let program = cpu.compile_typed(Ones).expect("compiles");
    let mut host = HostBuffer::from_slice(&[f32::NAN; 5]);
    let args = OnesArgs { out: &mut host };
    let (err, line) = (program.dispatch(&cpu, args, TOO_MANY).unwrap_err(), line!());
    assert_grid_refused_here(&interp_dispatch_error(err), line);
}

#[test]
fn a_scan_and_an_encoder_recording_name_their_caller() {
    use wgsl_dsl::kernel::scan::{ScanKind, ScanOp};
    use wgsl_dsl::runtime::PrefixScan;
    let gpu = gpu();
    let scan = PrefixScan::<u32, 64>::new(gpu, &ScanOp::add(), ScanKind::Exclusive).unwrap();
    let input = GpuBuffer::from_slice(gpu, &[1u32; 9]).unwrap();
    let mut short = GpuBuffer::<u32>::zeroed(gpu, 8).unwrap();
    let (err, line) = (scan.run(gpu, &input, &mut short).unwrap_err(), line!());
    assert!(
        matches!(err.kind, DispatchErrorKind::Length { .. }),
        "{err}"
    );
    assert_reported_at(&err, line);
    // A dispatch recorded into the caller's own encoder, refused before anything is recorded.
    let kernel = compiled_on(gpu, &double());
    let x = GpuBuffer::from_slice(gpu, &[1.0f32; 5]).unwrap();
    let mut enc = gpu.device().create_command_encoder(&Default::default());
    let one: &[&dyn BindArg] = &[&x];
    let (err, line) = (gpu.record_in_encoder(&mut enc, &kernel, one, G), line!());
    assert_called_here(&err.unwrap_err(), line);
}
