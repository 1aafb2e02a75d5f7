//! The oracles: build (a), naga's round trip (b), interpreter against GPU (c), constant folding
//! against run time (d). [`check`] runs one program through all of them.

use std::cell::RefCell;
use std::panic::{AssertUnwindSafe, catch_unwind};

use half::f16;
use wgsl_dsl::interp::{HostArg, HostBuffer, InterpOptions, Interpreter};
use wgsl_dsl::runtime::{BindArg, Gpu, GpuBuffer, GpuOptions};
use wgsl_dsl::{BuildError, ConstValue, Shader, TargetLimits};

use crate::analysis::{Analysis, CAS_SLOT, F32_SLOT, Info, Num, analyze, out_buffer};
use crate::ast::{Program, Scalar, Ty};
use crate::emit::{Binding, Emitted, OUT_BUFFERS, emit};

/// Which oracle failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Oracle {
    /// The generator made a program its own analysis refuses (a bug of the fuzzer).
    Analysis,
    /// (a): building panicked, or failed (or a planted mistake was accepted, or its error is
    /// not located).
    Build,
    /// (b): the WGSL does not re-parse, validate, or re-emit the same.
    RoundTrip,
    /// (c): an executor failed, or the interpreter and the GPU (or the bounds) disagree.
    Executors,
    /// (d): a folded constant differs from the value computed at run time.
    ConstFold,
}

impl std::fmt::Display for Oracle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Oracle::Analysis => "analysis",
            Oracle::Build => "(a) build",
            Oracle::RoundTrip => "(b) naga round trip",
            Oracle::Executors => "(c) interpreter vs GPU",
            Oracle::ConstFold => "(d) constant folding",
        })
    }
}

/// A failed check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// The oracle.
    pub oracle: Oracle,
    /// What went wrong.
    pub message: String,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.oracle, self.message)
    }
}

fn fail<T>(oracle: Oracle, message: impl Into<String>) -> Result<T, Failure> {
    Err(Failure {
        oracle,
        message: message.into(),
    })
}

/// What one passing case did.
#[derive(Clone, Copy, Debug, Default)]
pub struct Passed {
    /// It ran on the GPU.
    pub gpu: bool,
    /// A planted mistake was rejected with a located error.
    pub mistake: bool,
    /// Output slots compared.
    pub slots: u64,
    /// Constant outputs compared with their folded values.
    pub consts: u64,
    /// Oracle (b): naga re-emitted the DSL's WGSL text itself (the module has nothing naga's
    /// front end folds or lowers; otherwise only the re-emission's fixed point is checked).
    pub text_identical: bool,
}

/// Where kernels run.
#[derive(Debug)]
pub struct Targets {
    /// The GPU, unless `--no-gpu`.
    pub gpu: Option<Gpu>,
    /// Its subgroup size (the interpreter uses the same).
    pub subgroup_size: u32,
    /// Whether the GPU has cooperative matrices.
    pub gpu_coop: bool,
    /// The interpreter.
    pub interp: Interpreter,
    /// The interpreter for cooperative-matrix kernels (32 invocations per subgroup).
    pub coop_interp: Interpreter,
}

impl Targets {
    /// The interpreter only.
    pub fn interpreter_only() -> Targets {
        Targets {
            gpu: None,
            subgroup_size: 8,
            gpu_coop: false,
            interp: Interpreter::with_options(InterpOptions {
                subgroup_size: 8,
                ..InterpOptions::default()
            }),
            coop_interp: Interpreter::with_options(InterpOptions {
                subgroup_size: crate::coop::INVOCATIONS,
                ..InterpOptions::default()
            }),
        }
    }

    /// The GPU `Gpu::with_options` opens (cooperative matrices where it has them) and the
    /// interpreter with its subgroup size.
    ///
    /// # Errors
    /// No adapter.
    pub fn with_gpu() -> Result<Targets, String> {
        let gpu = Gpu::with_options(&GpuOptions {
            cooperative_matrix: true,
            ..GpuOptions::from_env()
        })
        .or_else(|_| Gpu::new())
        .map_err(|e| e.to_string())?;
        let subgroup_size = probe_subgroup_size(&gpu).unwrap_or(8);
        let gpu_coop = gpu
            .capabilities()
            .contains(wgsl_dsl::naga::valid::Capabilities::COOPERATIVE_MATRIX)
            && !gpu.cooperative_shapes().is_empty();
        let mut t = Targets::interpreter_only();
        t.subgroup_size = subgroup_size;
        t.gpu_coop = gpu_coop;
        t.interp = Interpreter::with_options(InterpOptions {
            subgroup_size,
            limits: gpu.device_limits(),
            ..InterpOptions::default()
        });
        t.gpu = Some(gpu);
        Ok(t)
    }

    /// Whether generated kernels may use subgroup operations.
    pub fn subgroups(&self) -> bool {
        match &self.gpu {
            Some(g) => g
                .capabilities()
                .contains(wgsl_dsl::naga::valid::Capabilities::SUBGROUP),
            None => true,
        }
    }

    /// A one-line description.
    pub fn describe(&self) -> String {
        match &self.gpu {
            Some(g) => format!(
                "{} ({:?}), subgroup size {}, cooperative matrices {}",
                g.adapter_info().name,
                g.adapter_info().backend,
                self.subgroup_size,
                if self.gpu_coop { "yes" } else { "no" }
            ),
            None => "interpreter only (--no-gpu)".into(),
        }
    }

    fn target_limits(&self) -> TargetLimits {
        self.gpu
            .as_ref()
            .map_or_else(TargetLimits::default, Gpu::target_limits)
    }
}

fn probe_subgroup_size(gpu: &Gpu) -> Option<u32> {
    use wgsl_dsl::prelude::*;
    if !gpu
        .capabilities()
        .contains(wgsl_dsl::naga::valid::Capabilities::SUBGROUP)
    {
        return None;
    }
    let mut k = KernelBuilder::new("subgroup_size_probe", [64, 1, 1]);
    let out = k.storage::<RuntimeArray<u32>, ReadWrite>("out");
    k.store(&out.at(local_invocation_index()), subgroup_size());
    let kernel = gpu.compile(&k.build_for(&gpu.target_limits()).ok()?).ok()?;
    let buf = GpuBuffer::from_slice(gpu, &[0u32; 64]).ok()?;
    gpu.dispatch(&kernel, &[&buf], [1, 1, 1]).ok()?;
    let v = buf.read(gpu).ok()?;
    (v.iter().all(|&s| s == v[0]) && v[0] > 0).then_some(v[0])
}

thread_local! {
    static PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
    static QUIET: RefCell<bool> = const { RefCell::new(false) };
}

/// Run `f`, turning a panic into its message and location.
pub fn catch<R>(f: impl FnOnce() -> R) -> Result<R, String> {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if QUIET.with(|q| *q.borrow()) {
                let loc = info
                    .location()
                    .map(|l| format!(" at {}:{}:{}", l.file(), l.line(), l.column()))
                    .unwrap_or_default();
                let msg = info
                    .payload()
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| info.payload().downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "a panic".into());
                PANIC.with(|p| *p.borrow_mut() = Some(format!("panicked{loc}: {msg}")));
            } else {
                default(info);
            }
        }));
    });
    QUIET.with(|q| *q.borrow_mut() = true);
    let r = catch_unwind(AssertUnwindSafe(f));
    QUIET.with(|q| *q.borrow_mut() = false);
    r.map_err(|_| {
        PANIC
            .with(|p| p.borrow_mut().take())
            .unwrap_or_else(|| "a panic".into())
    })
}

/// naga's WGSL front end and validator on `wgsl`, then its WGSL writer.
fn reparse(
    wgsl: &str,
) -> Result<
    (
        wgsl_dsl::naga::Module,
        wgsl_dsl::naga::valid::ModuleInfo,
        String,
    ),
    String,
> {
    use wgsl_dsl::naga;
    let module = naga::front::wgsl::parse_str(wgsl).map_err(|e| e.emit_to_string(wgsl))?;
    let info = naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::all(),
    )
    .validate(&module)
    .map_err(|e| {
        let mut m = format!("re-parsed module invalid: {}", e.as_inner());
        let mut source = std::error::Error::source(e.as_inner());
        while let Some(c) = source {
            m.push_str(&format!(": {c}"));
            source = c.source();
        }
        m
    })?;
    let text =
        naga::back::wgsl::write_string(&module, &info, naga::back::wgsl::WriterFlags::empty())
            .map_err(|e| format!("re-emission failed: {e}"))?;
    Ok((module, info, text))
}

/// Oracle (b): naga's WGSL front end parses the emitted `shader.wgsl` and its validator
/// accepts it; the re-parsed module comes back as a shader, to be run beside the DSL's own
/// module (the same results are required, within the analysis's bounds).
///
/// The re-emitted text is compared by [`text_check`]: naga 30's front end and writer are
/// not inverse on naga's own output (it folds const-expressions, renames and renumbers,
/// lowers `&&`/`||`, adds `return;`, drops some `enable`s: FUZZING.md, "naga"), so the
/// comparison undoes exactly those behaviours.
///
/// # Errors
/// naga's message.
pub fn round_trip(shader: &Shader) -> Result<Shader, String> {
    let (module, info, again) = reparse(&shader.wgsl)?;
    let mut reparsed = shader.clone();
    reparsed.module = module;
    reparsed.info = info;
    reparsed.wgsl = again;
    if let Some(ep) = reparsed.module.entry_points.first() {
        reparsed.signature.name = ep.name.clone();
    }
    Ok(reparsed)
}

/// Whether naga's front end rewrites some of `module` when it re-parses the module's WGSL:
/// a const-expression other than a literal, a zero value, a constant or a composite of them
/// (the front end folds it: `vec3<i32>().z` is re-emitted `i32()`, `2i + 3i` as `5i`), an
/// index that is a const-expression (`a[0u]` is re-emitted `a[0]`), a component of a
/// unary operation (naga finding 7: `(-v).y` is written `-(v).y`, which parses as `-(v.y)`),
/// a
/// `let` of a const-expression (inlined), or a `&&`/`||` (lowered to an `if` over a
/// `var local: bool`, as WGSL's short-circuiting needs). FUZZING.md, naga finding 2.
pub fn front_end_rewrites(module: &wgsl_dsl::naga::Module) -> bool {
    use wgsl_dsl::naga::{BinaryOperator as B, Expression as E, proc::ExpressionKindTracker};
    module
        .functions
        .iter()
        .map(|(_, f)| f)
        .chain(module.entry_points.iter().map(|ep| &ep.function))
        .any(|f| {
            let kinds = ExpressionKindTracker::from_arena(&f.expressions);
            f.named_expressions.keys().any(|&h| kinds.is_const(h))
                || f.expressions.iter().any(|(h, e)| {
                    matches!(
                        e,
                        E::Binary {
                            op: B::LogicalAnd | B::LogicalOr,
                            ..
                        }
                    ) || matches!(e, E::Access { index, .. } if kinds.is_const(*index))
                        || matches!(
                            e,
                            E::Access { base, .. } | E::AccessIndex { base, .. }
                                | E::Swizzle { vector: base, .. }
                                if matches!(f.expressions[*base], E::Unary { .. })
                        )
                        || (kinds.is_const(h)
                            && !matches!(
                                e,
                                E::Literal(_)
                                    | E::ZeroValue(_)
                                    | E::Constant(_)
                                    | E::Compose { .. }
                            ))
                })
        })
}

/// Oracle (b)'s text checks. naga's re-emissions reach a fixed point: parsed and written
/// again, one of the first eight is the same text as the one before (up to the rules of
/// [`crate::roundtrip`]).
/// Where naga's front end rewrites nothing of the DSL's module ([`front_end_rewrites`]), the
/// re-emission is the DSL's text itself (up to the same rules); the result says whether that
/// held (`false`: the module has a construct the front end folds or lowers).
///
/// # Errors
/// The first line that differs.
pub fn text_check(shader: &Shader, reparsed: &Shader) -> Result<bool, String> {
    // naga's front end folds an inlined `let` only on the next round (finding 2), one level
    // of nesting a round (`let a = 0f; let b = a * a; x = u32(b)` takes three): the
    // re-emission must reach its fixed point by round `ROUNDS`.
    const ROUNDS: usize = 8;
    let mut prev = reparsed.wgsl.clone();
    for round in 2..=ROUNDS {
        let (_, _, next) = reparse(&crate::roundtrip::restore_directives(&shader.wgsl, &prev))
            .map_err(|e| {
                format!(
                    "naga's re-emission (round {}) does not re-parse: {e}",
                    round - 1
                )
            })?;
        match same_text(&prev, &next) {
            Ok(()) => break,
            Err(e) if round == ROUNDS => {
                return Err(format!(
                    "naga's round trip is not a fixed point by round {ROUNDS}: {e}"
                ));
            }
            Err(_) => prev = next,
        }
    }
    if front_end_rewrites(&shader.module) {
        return Ok(false);
    }
    same_text(&shader.wgsl, &reparsed.wgsl)?;
    Ok(true)
}

/// Oracle (b)'s text check: naga's re-emission of `wgsl` is `wgsl` again, up to the rules
/// of [`crate::roundtrip`] (each a pinned naga behaviour).
///
/// # Errors
/// The first line that differs.
pub fn same_text(wgsl: &str, again: &str) -> Result<(), String> {
    let (a, b) = crate::roundtrip::canonical(wgsl, again);
    match crate::roundtrip::first_difference(&a, &b) {
        None => Ok(()),
        Some((line, x, y)) => Err(format!(
            "naga re-emits other text: line {line} (names canonical) `{}` is `{}` again",
            x.trim(),
            y.trim()
        )),
    }
}

/// The poison every output element starts with.
pub const POISON: u32 = 0x7fc0_dead;
const POISON_F16: u16 = 0x7e01;

/// What a run leaves in the written buffers (as bits; `f16` in the low half).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Outputs {
    /// `out_f32`, `out_i32`, `out_u32`, `out_f16`, by [`OUT_BUFFERS`].
    pub out: [Vec<u32>; 4],
    /// `atom`.
    pub atom: Vec<u32>,
    /// A cooperative-matrix kernel's `d`.
    pub coop: Vec<f32>,
}

fn atom_init(len: usize) -> Vec<u32> {
    (0..len as u32)
        .map(|i| i.wrapping_mul(2_654_435_761) ^ 0x5bd1_e995)
        .collect()
}

/// The data each binding starts with.
enum Data {
    F32(Vec<f32>),
    I32(Vec<i32>),
    U32(Vec<u32>),
    F16(Vec<f16>),
}

fn initial(em: &Emitted, prog: &Program) -> Vec<(Binding, Data)> {
    let total = prog.total_invocations() as usize;
    em.bindings
        .iter()
        .map(|b| {
            let d = match b {
                Binding::Input(Scalar::F32) => Data::F32(prog.inputs.f32.clone()),
                Binding::Input(Scalar::I32) => Data::I32(prog.inputs.i32.clone()),
                Binding::Input(Scalar::U32) => Data::U32(prog.inputs.u32.clone()),
                Binding::Input(_) => {
                    Data::F16(prog.inputs.f16.iter().map(|&b| f16::from_bits(b)).collect())
                }
                Binding::Param => Data::U32(vec![prog.inputs.param]),
                Binding::Out(s) => {
                    let n = total * em.slots[crate::emit::out_index(*s)] as usize;
                    match s {
                        Scalar::F32 => Data::F32(vec![f32::from_bits(POISON); n]),
                        Scalar::I32 => Data::I32(vec![POISON as i32; n]),
                        Scalar::F16 => Data::F16(vec![f16::from_bits(POISON_F16); n]),
                        _ => Data::U32(vec![POISON; n]),
                    }
                }
                Binding::Atomics => Data::U32(atom_init(
                    total * em.atomics.0 as usize + em.atomics.1 as usize,
                )),
                Binding::CoopA | Binding::CoopB => {
                    let c = prog.coop.as_ref().expect("coop");
                    let v = if *b == Binding::CoopA { &c.a } else { &c.b };
                    Data::F16(v.iter().map(|&x| f16::from_bits(x)).collect())
                }
                Binding::CoopC => Data::F32(prog.coop.as_ref().expect("coop").c.clone()),
                Binding::CoopD => Data::F32(vec![f32::from_bits(POISON); 256]),
                Binding::TextureSrc | Binding::TextureDst => Data::U32(Vec::new()),
            };
            (*b, d)
        })
        .collect()
}

fn collect(bindings: &[Binding], read: Vec<Vec<u32>>) -> Outputs {
    let mut o = Outputs::default();
    for (b, v) in bindings.iter().zip(read) {
        match b {
            Binding::Out(s) => o.out[crate::emit::out_index(*s)] = v,
            Binding::Atomics => o.atom = v,
            Binding::CoopD => o.coop = v.into_iter().map(f32::from_bits).collect(),
            _ => {}
        }
    }
    o
}

fn writes(b: &Binding) -> bool {
    matches!(b, Binding::Out(_) | Binding::Atomics | Binding::CoopD)
}

enum Host {
    F32(HostBuffer<f32>),
    I32(HostBuffer<i32>),
    U32(HostBuffer<u32>),
    F16(HostBuffer<f16>),
}

fn run_interp(
    interp: &Interpreter,
    shader: &Shader,
    em: &Emitted,
    prog: &Program,
) -> Result<Outputs, String> {
    let program = interp.compile(shader).map_err(|e| e.to_string())?;
    let bufs: Vec<Host> = initial(em, prog)
        .into_iter()
        .map(|(_, d)| match d {
            Data::F32(v) => Host::F32(HostBuffer::from_slice(&v)),
            Data::I32(v) => Host::I32(HostBuffer::from_slice(&v)),
            Data::U32(v) => Host::U32(HostBuffer::from_slice(&v)),
            Data::F16(v) => Host::F16(HostBuffer::from_slice(&v)),
        })
        .collect();
    let args: Vec<&dyn HostArg> = bufs
        .iter()
        .map(|b| match b {
            Host::F32(h) => h as &dyn HostArg,
            Host::I32(h) => h as &dyn HostArg,
            Host::U32(h) => h as &dyn HostArg,
            Host::F16(h) => h as &dyn HostArg,
        })
        .collect();
    interp
        .dispatch(&program, &args, prog.grid)
        .map_err(|e| e.to_string())?;
    let read = bufs
        .iter()
        .zip(&em.bindings)
        .map(|(b, binding)| {
            if !writes(binding) {
                return Vec::new();
            }
            match b {
                Host::F32(h) => h.read().into_iter().map(f32::to_bits).collect(),
                Host::I32(h) => h.read().into_iter().map(|v| v as u32).collect(),
                Host::U32(h) => h.read(),
                Host::F16(h) => h
                    .read()
                    .into_iter()
                    .map(|v| u32::from(v.to_bits()))
                    .collect(),
            }
        })
        .collect();
    Ok(collect(&em.bindings, read))
}

fn run_gpu(gpu: &Gpu, shader: &Shader, em: &Emitted, prog: &Program) -> Result<Outputs, String> {
    let kernel = gpu.compile(shader).map_err(|e| e.to_string())?;
    let data = initial(em, prog);
    let mut f32s = Vec::new();
    let mut i32s = Vec::new();
    let mut u32s = Vec::new();
    let mut f16s = Vec::new();
    let mut order = Vec::new();
    for (_, d) in data {
        match d {
            Data::F32(v) => {
                order.push((0, f32s.len()));
                f32s.push(GpuBuffer::from_slice(gpu, &v).map_err(|e| e.to_string())?);
            }
            Data::I32(v) => {
                order.push((1, i32s.len()));
                i32s.push(GpuBuffer::from_slice(gpu, &v).map_err(|e| e.to_string())?);
            }
            Data::U32(v) => {
                order.push((2, u32s.len()));
                u32s.push(GpuBuffer::from_slice(gpu, &v).map_err(|e| e.to_string())?);
            }
            Data::F16(v) => {
                order.push((3, f16s.len()));
                f16s.push(GpuBuffer::from_slice(gpu, &v).map_err(|e| e.to_string())?);
            }
        }
    }
    let args: Vec<&dyn BindArg> = order
        .iter()
        .map(|&(k, i)| match k {
            0 => &f32s[i] as &dyn BindArg,
            1 => &i32s[i] as &dyn BindArg,
            2 => &u32s[i] as &dyn BindArg,
            _ => &f16s[i] as &dyn BindArg,
        })
        .collect();
    gpu.dispatch(&kernel, &args, prog.grid)
        .map_err(|e| e.to_string())?;
    let mut read = Vec::new();
    for (&(k, i), b) in order.iter().zip(&em.bindings) {
        if !writes(b) {
            read.push(Vec::new());
            continue;
        }
        let e = |e: wgsl_dsl::runtime::DeviceError| e.to_string();
        read.push(match k {
            0 => f32s[i]
                .read(gpu)
                .map_err(e)?
                .into_iter()
                .map(f32::to_bits)
                .collect(),
            1 => i32s[i]
                .read(gpu)
                .map_err(e)?
                .into_iter()
                .map(|v| v as u32)
                .collect(),
            2 => u32s[i].read(gpu).map_err(e)?,
            _ => f16s[i]
                .read(gpu)
                .map_err(e)?
                .into_iter()
                .map(|v| u32::from(v.to_bits()))
                .collect(),
        });
    }
    Ok(collect(&em.bindings, read))
}

/// Check `prog` with every oracle on `targets`.
///
/// # Errors
/// The first failure.
pub fn check(prog: &Program, targets: &Targets) -> Result<Passed, Failure> {
    let an = match analyze(prog) {
        Ok(a) => a,
        Err(e) => {
            return fail(
                Oracle::Analysis,
                format!("the generated program is refused: {e}"),
            );
        }
    };
    let em = catch(|| emit(prog, &an)).or_else(|e| fail(Oracle::Build, format!("building {e}")))?;
    // Cooperative-matrix kernels run on the interpreter where the GPU has none: built for
    // the default target, which has every capability.
    let target = if prog.coop.is_some() && !targets.gpu_coop {
        TargetLimits::default()
    } else {
        targets.target_limits()
    };
    let built = catch(|| em.kernel.build_for(&target))
        .or_else(|e| fail(Oracle::Build, format!("build() {e}")))?;
    let mut passed = Passed::default();
    if an.mistake {
        return match built {
            Ok(_) => fail(Oracle::Build, "a planted mistake was accepted"),
            Err(e) if located(&e) => {
                passed.mistake = true;
                Ok(passed)
            }
            Err(e) => fail(
                Oracle::Build,
                format!("a planted mistake's error is not located: {e}"),
            ),
        };
    }
    let shader = built.or_else(|e| fail(Oracle::Build, format!("build() failed: {e}")))?;
    let reparsed = round_trip(&shader).or_else(|e| fail(Oracle::RoundTrip, e))?;
    passed.text_identical =
        text_check(&shader, &reparsed).or_else(|e| fail(Oracle::RoundTrip, e))?;
    if let Some(c) = &prog.coop {
        return check_coop(prog, c, &shader, &em, targets, passed);
    }
    if let Some(t) = &prog.texture {
        if let Some(gpu) = &targets.gpu {
            let got = catch(|| run_texture(gpu, &shader, t, prog))
                .unwrap_or_else(|p| Err(format!("GPU {p}")))
                .or_else(|e| fail(Oracle::Executors, format!("GPU: {e}")))?;
            let want = crate::texture::reference(t);
            if let Some(i) = (0..want.len()).find(|&i| got[i] != want[i]) {
                return fail(
                    Oracle::Executors,
                    format!(
                        "GPU: texel {i} is {:#x}, the reference {:#x}",
                        got[i], want[i]
                    ),
                );
            }
            passed.gpu = true;
            passed.slots += want.len() as u64;
        }
        return Ok(passed);
    }
    let a = catch(|| run_interp(&targets.interp, &shader, &em, prog))
        .unwrap_or_else(|p| Err(format!("interpreter {p}")))
        .or_else(|e| fail(Oracle::Executors, format!("interpreter: {e}")))?;
    passed.slots += compare_bounds(written_slots(&a, &an, &em, prog), "interpreter")?;
    passed.consts += compare_consts(written_slots(&a, &an, &em, prog), &em, "interpreter")?;
    let r = catch(|| run_interp(&targets.interp, &reparsed, &em, prog))
        .unwrap_or_else(|p| Err(format!("interpreter {p}")))
        .or_else(|e| {
            fail(
                Oracle::RoundTrip,
                format!("the re-parsed WGSL on the interpreter: {e}"),
            )
        })?;
    compare_executors(&a, &r, &an, &em, prog, "the re-parsed WGSL").map_err(|f| Failure {
        oracle: Oracle::RoundTrip,
        ..f
    })?;
    if let Some(gpu) = &targets.gpu {
        let b = catch(|| run_gpu(gpu, &shader, &em, prog))
            .unwrap_or_else(|p| Err(format!("GPU {p}")))
            .or_else(|e| fail(Oracle::Executors, format!("GPU: {e}")))?;
        compare_bounds(written_slots(&b, &an, &em, prog), "GPU")?;
        compare_consts(written_slots(&b, &an, &em, prog), &em, "GPU")?;
        compare_executors(&a, &b, &an, &em, prog, "GPU")?;
        passed.gpu = true;
    }
    Ok(passed)
}

fn check_coop(
    prog: &Program,
    c: &crate::ast::Coop,
    shader: &Shader,
    em: &Emitted,
    targets: &Targets,
    mut passed: Passed,
) -> Result<Passed, Failure> {
    let (d, bound) = crate::coop::reference(c);
    let check = |who: &str, got: &[f32]| -> Result<(), Failure> {
        for (i, (&g, (&w, &b))) in got.iter().zip(d.iter().zip(&bound)).enumerate() {
            if !(f64::from(g) - w).abs().le(&b) {
                return fail(
                    Oracle::Executors,
                    format!(
                        "{who}: coopMultiplyAdd d[{i}] = {g:e}, the reference {w:e} (bound {b:e})"
                    ),
                );
            }
        }
        Ok(())
    };
    let a = catch(|| run_interp(&targets.coop_interp, shader, em, prog))
        .unwrap_or_else(|p| Err(format!("interpreter {p}")))
        .or_else(|e| fail(Oracle::Executors, format!("interpreter: {e}")))?;
    check("interpreter", &a.coop)?;
    passed.slots += a.coop.len() as u64;
    if let (Some(gpu), true) = (&targets.gpu, targets.gpu_coop) {
        let b = catch(|| run_gpu(gpu, shader, em, prog))
            .unwrap_or_else(|p| Err(format!("GPU {p}")))
            .or_else(|e| fail(Oracle::Executors, format!("GPU: {e}")))?;
        check("GPU", &b.coop)?;
        passed.gpu = true;
    }
    Ok(passed)
}

fn run_texture(
    gpu: &Gpu,
    shader: &Shader,
    t: &crate::ast::TextureCase,
    prog: &Program,
) -> Result<Vec<u32>, String> {
    use wgsl_dsl::runtime::GpuTexture;
    use wgsl_dsl::types::R32Uint;
    let kernel = gpu.compile(shader).map_err(|e| e.to_string())?;
    let src =
        GpuTexture::<R32Uint>::from_texels(gpu, t.size, &t.texels).map_err(|e| e.to_string())?;
    let poison = vec![POISON; t.texels.len()];
    let dst =
        GpuTexture::<R32Uint>::from_texels(gpu, t.size, &poison).map_err(|e| e.to_string())?;
    gpu.dispatch(&kernel, &[&src, &dst], prog.grid)
        .map_err(|e| e.to_string())?;
    dst.read(gpu).map_err(|e| e.to_string())
}

/// Whether a build error names a Rust call site of the fuzzer's emitter.
fn located(e: &BuildError) -> bool {
    e.to_string().contains("emit.rs:")
}

fn value_of(bits: u32, s: Scalar) -> f64 {
    match s {
        Scalar::F32 => f64::from(f32::from_bits(bits)),
        Scalar::F16 => f64::from(f16::from_bits(bits as u16).to_f32()),
        Scalar::I32 => f64::from(bits as i32),
        _ => f64::from(bits),
    }
}

fn poison(s: Scalar) -> u32 {
    if s == Scalar::F16 {
        u32::from(POISON_F16)
    } else {
        POISON
    }
}

/// One slot's value of one invocation: `((buffer, slot), invocation, info, bits)`.
type SlotValue<'a> = ((Scalar, u32), u32, &'a Info, u32);

/// Every slot's value of every invocation.
fn each_slot<'a>(
    o: &'a Outputs,
    an: &'a Analysis,
    em: &'a Emitted,
    prog: &'a Program,
) -> impl Iterator<Item = SlotValue<'a>> + 'a {
    let total = prog.total_invocations();
    an.slots.iter().flat_map(move |(&(buf, slot), info)| {
        let i = crate::emit::out_index(buf);
        let stride = em.slots[i];
        (0..total).filter_map(move |inv| {
            o.out[i]
                .get((inv * stride + slot) as usize)
                .map(|&bits| ((buf, slot), inv, info, bits))
        })
    })
}

/// [`each_slot`] but the slots an invocation did not write (holding the poison).
fn written_slots<'a>(
    o: &'a Outputs,
    an: &'a Analysis,
    em: &'a Emitted,
    prog: &'a Program,
) -> impl Iterator<Item = SlotValue<'a>> + 'a {
    each_slot(o, an, em, prog).filter(|&((buf, _), _, _, bits)| bits != poison(buf))
}

/// Each of `slots` within its bounds: how many there were.
fn compare_bounds<'a>(
    slots: impl Iterator<Item = SlotValue<'a>>,
    who: &str,
) -> Result<u64, Failure> {
    let mut n = 0;
    for ((buf, slot), inv, info, bits) in slots {
        n += 1;
        let v = value_of(bits, buf);
        let ok = match info.num {
            Num::Float(f) => {
                v.is_finite() && v >= f.lo - f.err - 1e-30 && v <= f.hi + f.err + 1e-30
            }
            Num::Int { lo, hi } => (v as i64) >= lo && (v as i64) <= hi,
            Num::Bool => bits <= 1,
        };
        if !ok {
            return fail(
                Oracle::Executors,
                format!(
                    "{who}: out_{}[slot {slot}] of invocation {inv} is {v:e} (bits {bits:#x}), outside what the analysis proves ({:?})",
                    buf.rust(),
                    info.num
                ),
            );
        }
    }
    Ok(n)
}

fn compare_executors(
    a: &Outputs,
    b: &Outputs,
    an: &Analysis,
    em: &Emitted,
    prog: &Program,
    who: &str,
) -> Result<(), Failure> {
    let total = prog.total_invocations();
    for (((buf, slot), inv, info, x), (_, _, _, y)) in
        each_slot(a, an, em, prog).zip(each_slot(b, an, em, prog))
    {
        if x == y {
            continue;
        }
        let (vx, vy) = (value_of(x, buf), value_of(y, buf));
        let ok = match info.num {
            Num::Float(f) => {
                (x == poison(buf)) == (y == poison(buf)) && (vx - vy).abs() <= 2.0 * f.err
            }
            _ => false,
        };
        if !ok {
            let err = info.float().map_or(0.0, |f| f.err);
            return fail(
                Oracle::Executors,
                format!(
                    "out_{}[slot {slot}] of invocation {inv}: interpreter {vx:e} ({x:#x}), {who} {vy:e} ({y:#x}); allowed difference {:e} ({:?})",
                    buf.rust(),
                    2.0 * err,
                    info.ty
                ),
            );
        }
    }
    for (i, (x, y)) in a.atom.iter().zip(&b.atom).enumerate() {
        let own = (i as u32) < total * em.atomics.0;
        if own && em.atomics.0 > CAS_SLOT && i as u32 % em.atomics.0 == CAS_SLOT {
            continue;
        }
        // The f32 slot: a NaN start stays NaN, with the executor's payload.
        if own
            && em.atomics.0 > F32_SLOT
            && i as u32 % em.atomics.0 == F32_SLOT
            && f32::from_bits(*x).is_nan()
            && f32::from_bits(*y).is_nan()
        {
            continue;
        }
        if x != y {
            return fail(
                Oracle::Executors,
                format!("atom[{i}]: interpreter {x:#x}, {who} {y:#x}"),
            );
        }
    }
    let _ = OUT_BUFFERS;
    Ok(())
}

fn const_f64(c: &ConstValue) -> Option<f64> {
    Some(match c {
        ConstValue::Bool(b) => f64::from(u8::from(*b)),
        ConstValue::I32(v) => f64::from(*v),
        ConstValue::U32(v) => f64::from(*v),
        ConstValue::F32(v) => f64::from(*v),
        ConstValue::F16(v) => f64::from(v.to_f32()),
        _ => return None,
    })
}

/// Each of `slots` that is a constant equal to its value folded by the DSL: how many there
/// were.
fn compare_consts<'a>(
    slots: impl Iterator<Item = SlotValue<'a>>,
    em: &Emitted,
    who: &str,
) -> Result<u64, Failure> {
    let mut n = 0;
    for ((buf, slot), inv, info, bits) in slots {
        let Some(c) = em.consts.get(&(buf, slot)) else {
            continue;
        };
        let Some(want) = const_f64(c) else { continue };
        let got = value_of(bits, buf);
        n += 1;
        let tol = info.float().map_or(0.0, |f| 2.0 * f.err);
        if (got - want).abs() > tol {
            return fail(
                Oracle::ConstFold,
                format!(
                    "out_{}[slot {slot}] of invocation {inv}: the DSL folds the constant to {c}, the {who} computes {got:e} (allowed difference {tol:e})",
                    buf.rust()
                ),
            );
        }
    }
    let _ = out_buffer;
    let _ = Ty::S;
    Ok(n)
}
