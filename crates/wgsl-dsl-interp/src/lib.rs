//! Running kernels on the CPU: an interpreter of the built module that reports the bugs a GPU
//! hides (ARCHITECTURE.md decision *One module, two executors*).
//!
//! [`Interpreter`] executes a [`Shader`]'s validated `naga::Module`, the very module the GPU
//! runs, for a dispatch grid over [`HostBuffer`]s, after the same argument checks as
//! `Gpu::dispatch`. Every workgroup and invocation runs;
//! workgroup memory starts zeroed in each workgroup; barriers separate phases; atomics,
//! loops, helper functions, `f16`, subgroup operations (with a configurable subgroup size) and
//! cooperative matrices (below) are executed with WGSL's semantics ([`semantics`], each rule citing the spec). Besides the
//! results, a run reports what no GPU does, as an [`InterpError`] naming the kernel, the
//! invocation and the Rust `file:line:col` of the node at fault:
//!
//! - an index out of bounds ([`InterpError::OutOfBounds`]);
//! - a data race: two invocations touching one element of storage or workgroup memory with
//!   no barrier between, at least one writing, not both atomic ([`InterpError::DataRace`],
//!   both Rust call sites named);
//! - a barrier some invocations of a workgroup reach and others do not
//!   ([`InterpError::DivergentBarrier`]);
//! - a cooperative-matrix operation some invocations of a subgroup execute and others do not
//!   ([`InterpError::DivergentCooperative`]), or with a pointer, stride or matrix that differs
//!   between them ([`InterpError::NonUniformCooperative`]);
//! - and, as a [`Warning`] in the [`Report`], a variable read before anything was written to it
//!   (WGSL reads the zero value), and a storage buffer read or written past its elements inside
//!   the padding its allocation adds ([`Warning::PaddingAccess`]: in bounds for `arrayLength`,
//!   here and on the GPU, so neither reports it as out of bounds; a `max` over `i <
//!   arrayLength` of negative values would read a 0 there). Through the
//!   [`Executor`](wgsl_dsl_exec::Executor) contract the other warnings fail the dispatch;
//!   this one does not, since `if i < arrayLength(&y)` reaches the padding of a buffer under
//!   16 bytes without a bug.
//!
//! It also runs what the GPU does not: the kernel's `debug_print`s
//! ([`wgsl_dsl_core::kernel::debug`]), recorded with their invocation and Rust line
//! ([`Interpreter::take_debug_output`], [`DebugRecord`]). It does not execute textures
//! ([`InterpError::UnsupportedTexture`]).
//!
//! ```
//! # // The facade's paths, without the facade (whose runtime brings wgpu into this crate's tests).
//! # mod wgsl_dsl { pub use wgsl_dsl_core::prelude; pub use wgsl_dsl_interp as interp; }
//! use wgsl_dsl::prelude::*;
//! use wgsl_dsl::interp::{HostBuffer, Interpreter, InterpError};
//!
//! // Every invocation writes out[0]: a data race.
//! let mut k = KernelBuilder::new("last_writer_wins", [64, 1, 1]);
//! let out = k.storage::<RuntimeArray<u32>, ReadWrite>("out");
//! let i = k.let_("i", global_invocation_id().x());
//! k.store(&out.at(0u32), i);
//! let shader = k.build()?;
//!
//! let cpu = Interpreter::new();
//! let program = cpu.compile(&shader)?;
//! let out_buf = HostBuffer::from_slice(&[0u32; 4]);
//! let err = cpu.dispatch(&program, &[&out_buf], [1, 1, 1]).unwrap_err();
//! assert!(matches!(err, InterpError::DataRace { .. }));
//! assert!(err.to_string().contains(file!()), "{err}");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # How it runs
//! The module is resolved once ([`Interpreter::compile`]) into a compact form: expressions
//! become register slots or constants, each emitted expression an operation that loops over
//! the active invocations. The invocations of a workgroup run in lockstep, like a GPU's SIMD
//! lanes, with a set of active lanes per statement (`exec.rs`), so that each operation is
//! dispatched once per workgroup rather than once per invocation, and a barrier is a point
//! all lanes reach together, or a divergence to report. Workgroups run one after another.
//!
//! # Cooperative matrices
//! `coopLoad`/`coopLoadT`, `coopMultiplyAdd` and `coopStore`/`coopStoreT` (wgpu's
//! `wgpu_cooperative_matrix` extension; naga's `CooperativeLoad`, `CooperativeMultiplyAdd`,
//! `CooperativeStore`) run with the scope naga's SPIR-V backend gives them, `Subgroup`
//! (SPV_KHR_cooperative_matrix): a matrix is one value shared by the invocations of a
//! subgroup ([`InterpOptions::subgroup_size`] consecutive local invocation indices), each
//! operation executed once per subgroup by all of its invocations together, which must all
//! execute it, with the same operands (checked, as barriers are). In registers every invocation
//! holds the whole matrix. Memory: element `(r, c)` of an `R x C` matrix is scalar
//! `r * stride * v + c` (row-major, `coopLoadT`) or `c * stride * v + r` (column-major) after
//! the pointer's, `v` the components of the pointed-to type (the stride counts `vec4`s when
//! the array holds `vec4`s), in storage or workgroup memory; every element is checked for
//! bounds (an [`InterpError::OutOfBounds`] names the element and the matrix) and races (the
//! access is the whole subgroup's: it races with any other invocation's access in the phase,
//! the subgroup's own included, since a GPU spreads the elements over the invocations in a
//! way of its own). `coopMultiplyAdd` multiplies `f16` (or `f32`) inputs exactly in `f32` and
//! adds in `f32` in order, one rounding per addition, the result rounded to the accumulator's
//! type ([`semantics`]); against the exact product its error is within `gamma_K(2^-24)`
//! (Higham §3.1) of the sum of absolute products, inside the `gamma_K(2^-22)` tensor cores
//! are held to (`crates/gemm/src/spec.rs`). Arithmetic on matrices other than
//! `coopMultiplyAdd` (`+`, `*` by a scalar), which the DSL does not emit, is refused
//! ([`InterpError::Unsupported`]).
//!
//! The interpreter shares the runtime's argument checks, limits and error types through the
//! executor contract, `wgsl-dsl-exec`, which both depend on; it depends on neither the runtime
//! nor wgpu, and needs no GPU or driver at run time. Users reach this crate as
//! `wgsl_dsl::interp`.

mod buffer;
mod checks;
mod compile;
mod debug;
mod error;
mod exec;
mod executor;
mod mask;
mod ops;
mod options;
mod program;
pub mod semantics;
mod typed;

use std::sync::{Arc, Mutex};

pub use buffer::{HostArg, HostArgRef, HostBuffer, HostVec4, HostView};
pub use debug::{DebugRecord, DebugValue};
pub use error::{AccessKind, InterpError, Invocation, MemoryAccess, Warning};
pub use options::InterpOptions;
pub use typed::{HostArgs, TypedProgram};

use wgsl_dsl_core::shader::Shader;
use wgsl_dsl_exec::{ArgShape, BindingLayout};

/// Runs kernels on the CPU: [`Interpreter::compile`] a [`Shader`] once, then
/// [`Interpreter::dispatch`] it like `Gpu::dispatch`.
///
/// It collects what the kernels' `debug_print`s print ([`Interpreter::take_debug_output`]);
/// a clone shares the collection.
#[derive(Clone, Debug, Default)]
pub struct Interpreter {
    options: InterpOptions,
    debug: Arc<Mutex<DebugOutput>>,
}

/// The `debug_print` records collected so far, and the dispatches run.
#[derive(Debug, Default)]
struct DebugOutput {
    records: Vec<DebugRecord>,
    dispatches: u64,
}

/// A shader resolved for the interpreter, ready to dispatch. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Program {
    compiled: Arc<program::Compiled>,
    shader: Arc<Shader>,
    layouts: Arc<Vec<BindingLayout>>,
}

/// What a successful run reports besides the buffers' new contents.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// Suspicious things the kernel did (each kind and call site once).
    pub warnings: Vec<Warning>,
    /// Workgroups run.
    pub workgroups: u64,
    /// Invocations run.
    pub invocations: u64,
}

impl Interpreter {
    /// An interpreter with the default [`InterpOptions`].
    pub fn new() -> Self {
        Interpreter::default()
    }

    /// An interpreter with `options`.
    pub fn with_options(options: InterpOptions) -> Self {
        Interpreter {
            options,
            debug: Arc::default(),
        }
    }

    /// Its options.
    pub fn options(&self) -> &InterpOptions {
        &self.options
    }

    /// Resolve `shader`'s module for execution (once per shader).
    ///
    /// # Errors
    /// [`InterpError::UnsupportedTexture`] if the kernel binds a texture (naming the first);
    /// [`InterpError::Unsupported`] if the module uses something else the interpreter does not
    /// execute (64-bit types, arithmetic on cooperative matrices other than
    /// `coopMultiplyAdd`); [`InterpError::Dispatch`] ([`DispatchErrorKind::Layout`](wgsl_dsl_exec::DispatchErrorKind::Layout)) if a
    /// binding's type cannot be laid out;
    /// [`InterpError::Dispatch`] ([`DispatchErrorKind::ExceedsDevice`](wgsl_dsl_exec::DispatchErrorKind::ExceedsDevice)) if the kernel needs more of
    /// a limit than [`InterpOptions::limits`] has, as `Gpu::compile`
    /// checks its device's ([`check_limits`](wgsl_dsl_exec::check_limits)), the workgroup's
    /// own limits (size, invocations, workgroup memory) being those the shader was built for
    /// ([`Shader::target`]).
    pub fn compile(&self, shader: &Shader) -> Result<Program, InterpError> {
        // A kernel with `debug_print`s runs as its module with them.
        let (shader, prints) = shader.for_interpreter();
        // Every capability a kernel can declare is executed here or refused above.
        wgsl_dsl_exec::check_limits(
            &shader,
            &self.limits_for(&shader),
            naga::valid::Capabilities::all(),
        )?;
        let compiled = compile::compile(&shader, &prints)?;
        let layouts = wgsl_dsl_exec::binding_layouts(&shader)?;
        Ok(Program {
            compiled: Arc::new(compiled),
            shader: Arc::new(shader),
            layouts: Arc::new(layouts),
        })
    }

    /// Take the records of the `debug_print`s executed since the last call (or since this
    /// interpreter, or a clone of it, was made), leaving none: for each dispatch in the order
    /// they ran, its records sorted by workgroup (in dispatch order, `x` fastest), then by
    /// `local_invocation_index`, then in the order the invocation executed them. A failed
    /// dispatch keeps those made before its error. Each record's `Display` is its line
    /// (`file:line:col: kernel `k` invocation (x, y, z) (workgroup (..), local (..)): message`).
    ///
    /// ```
    /// # // The facade's paths, without the facade (whose runtime brings wgpu into this crate's tests).
    /// # mod wgsl_dsl { pub use wgsl_dsl_core::prelude; pub use wgsl_dsl_interp as interp; }
    /// use wgsl_dsl::prelude::*;
    /// use wgsl_dsl::interp::{DebugValue, HostBuffer, Interpreter};
    ///
    /// let mut k = KernelBuilder::new("show", [2, 1, 1]);
    /// let out = k.storage::<RuntimeArray<u32>, ReadWrite>("out");
    /// let i = k.let_("i", global_invocation_id().x());
    /// k.debug_print("i = {}, 2i = {}", (&i, i.clone() * 2u32)); let line = line!();
    /// k.store(&out.at(&i), i.clone());
    ///
    /// let cpu = Interpreter::new();
    /// let program = cpu.compile(&k.build()?)?;
    /// cpu.dispatch(&program, &[&HostBuffer::from_slice(&[7u32; 4])], [2, 1, 1])?;
    /// let out = cpu.take_debug_output();
    /// assert_eq!(out.len(), 4); // 2 workgroups of 2 invocations
    /// assert_eq!(out[3].invocation.global_id, [3, 0, 0]);
    /// assert_eq!(out[3].invocation.workgroup_id, [1, 0, 0]);
    /// assert_eq!(out[3].values, vec![DebugValue::U32(3), DebugValue::U32(6)]);
    /// assert_eq!(out[3].message, "i = 3, 2i = 6");
    /// assert_eq!((out[3].site.file, out[3].site.line), (file!(), line));
    /// assert!(cpu.take_debug_output().is_empty());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn take_debug_output(&self) -> Vec<DebugRecord> {
        let mut out = self.debug.lock().unwrap_or_else(|e| e.into_inner());
        std::mem::take(&mut out.records)
    }

    /// Keep the records of a dispatch (in the documented order), and echo them if asked.
    fn keep_prints(&self, mut prints: Vec<(u32, u32, DebugRecord)>) {
        if prints.is_empty() {
            return;
        }
        // Stable: an invocation's own records stay in the order it executed them.
        prints.sort_by_key(|&(workgroup, lane, _)| (workgroup, lane));
        if self.options.echo_debug_prints {
            use std::io::Write;
            let mut err = std::io::stderr().lock();
            for (_, _, r) in &prints {
                let _ = writeln!(err, "{r}");
            }
        }
        let mut out = self.debug.lock().unwrap_or_else(|e| e.into_inner());
        out.records.extend(prints.into_iter().map(|(_, _, r)| r));
    }

    /// [`InterpOptions::limits`] with the workgroup's limits of the target `shader` was built
    /// for.
    fn limits_for(&self, shader: &Shader) -> wgsl_dsl_exec::Limits {
        let t = &shader.target;
        wgsl_dsl_exec::Limits {
            max_compute_invocations_per_workgroup: t.max_invocations_per_workgroup,
            max_compute_workgroup_size_x: t.max_workgroup_size[0],
            max_compute_workgroup_size_y: t.max_workgroup_size[1],
            max_compute_workgroup_size_z: t.max_workgroup_size[2],
            max_compute_workgroup_storage_size: t.max_workgroup_storage_size,
            ..self.options.limits
        }
    }

    /// Check `args` against `program`'s bindings as `Gpu::check`
    /// does, without running anything.
    ///
    /// # Errors
    /// [`InterpError::Dispatch`] with the same [`DispatchError`](wgsl_dsl_exec::DispatchError) the GPU runtime gives.
    #[track_caller]
    pub fn check(&self, program: &Program, args: &[&dyn HostArg]) -> Result<(), InterpError> {
        let caller = std::panic::Location::caller();
        let shapes: Vec<ArgShape> = args
            .iter()
            .map(|a| {
                let a = a.host_arg();
                ArgShape {
                    ty: (a.ty)(),
                    elem_size: a.elem_size,
                    len: a.len,
                    bound_bytes: a.bytes.borrow().len() as u64,
                    id: a.id,
                }
            })
            .collect();
        wgsl_dsl_exec::check_bindings(
            &program.shader.signature,
            &program.layouts,
            &shapes,
            &self.options.limits,
        )
        .map_err(|e| e.called_at(caller))?;
        Ok(())
    }

    /// Run `program` over `workgroups` workgroups with `args` bound to its bindings in
    /// declaration order. The buffers the kernel writes are updated when the whole run
    /// succeeds, and left unchanged otherwise. A count of zero in any dimension is a no-op.
    ///
    /// # Errors
    /// [`InterpError::Dispatch`] for an argument the GPU runtime would refuse too (checked
    /// before anything runs); [`InterpError::OutOfBounds`], [`InterpError::DataRace`],
    /// [`InterpError::DivergentBarrier`], [`InterpError::DivergentCooperative`],
    /// [`InterpError::NonUniformCooperative`], [`InterpError::LoopLimit`] for bugs found while
    /// running.
    #[track_caller]
    pub fn dispatch(
        &self,
        program: &Program,
        args: &[&dyn HostArg],
        workgroups: [u32; 3],
    ) -> Result<Report, InterpError> {
        let caller = std::panic::Location::caller();
        self.check(program, args)?;
        let sig = &program.shader.signature;
        wgsl_dsl_exec::check_grid(
            &sig.name,
            workgroups,
            self.options.limits.max_compute_workgroups_per_dimension,
        )
        .map_err(|e| e.called_at(caller))?;
        if workgroups.contains(&0) {
            return Ok(Report::default());
        }
        let p = &program.compiled;
        let args: Vec<HostArgRef<'_>> = args.iter().map(|a| a.host_arg()).collect();
        let mem: Vec<Vec<u8>> = p
            .globals
            .iter()
            .map(|g| match g.arg {
                Some(i) => args[i].bytes.borrow().clone(),
                None => vec![0; g.size as usize],
            })
            .collect();
        // A storage buffer's elements, in bytes, and one element's size (the allocation may
        // be longer: `padded_size`).
        let data = p
            .globals
            .iter()
            .map(|g| match (g.arg, g.space) {
                (Some(i), program::Space::Storage { .. }) => {
                    let elem = args[i].elem_size;
                    Some(((args[i].len as u64).saturating_mul(elem), elem))
                }
                _ => None,
            })
            .collect();
        let mut exec = exec::Exec::new(p, &program.shader, &self.options, mem, data, workgroups);
        {
            let mut out = self.debug.lock().unwrap_or_else(|e| e.into_inner());
            exec.dispatch = out.dispatches;
            out.dispatches += 1;
        }
        let run = exec.run();
        self.keep_prints(std::mem::take(&mut exec.prints));
        run?;
        // Copy back what the kernel may have written.
        for (g, bytes) in p.globals.iter().zip(&exec.mem) {
            if let (Some(i), program::Space::Storage { write: true }) = (g.arg, g.space) {
                args[i].bytes.borrow_mut().copy_from_slice(bytes);
            }
        }
        let groups = workgroups.iter().map(|&n| u64::from(n)).product::<u64>();
        Ok(Report {
            warnings: exec.warnings,
            workgroups: groups,
            invocations: groups * p.lanes as u64,
        })
    }
}

impl Program {
    /// The kernel's signature (entry point, workgroup size, bindings).
    pub fn signature(&self) -> &wgsl_dsl_core::KernelSignature {
        &self.shader.signature
    }

    /// Workgroups covering a grid of `size` invocations, as
    /// `Kernel::workgroups_for`.
    pub fn workgroups_for(&self, size: [u32; 3]) -> [u32; 3] {
        let w = self.shader.signature.workgroup_size;
        [0, 1, 2].map(|d| wgsl_dsl_exec::ceil_div(size[d], w[d]))
    }
}
