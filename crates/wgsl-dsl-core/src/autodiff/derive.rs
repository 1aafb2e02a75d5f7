//! Kernel AD: a kernel's backward kernel ([`derive()`]), and the same interface for
//! derivatives authors write ([`Backward::custom`], Slang's `[BackwardDerivative]`).

use std::collections::HashMap;

use super::accumulate::{Accumulation, Gradients};
use super::backward::{Emit, names};
use super::exclusive::Proof;
use super::graph::Root;
use super::loops::{BoundedLoop, IterationLimitExceeded};
use super::overwrite::Overwrites;
use super::program::GlobalRole;
use super::symbolic::Symbolic;
use crate::error::BuildError;
use crate::handle::GlobalHandle;
use crate::kernel::stmt::Stmt;
use crate::kernel::{BindingKind, GlobalKind, KernelBuilder};
use crate::site::CallSite;
use crate::types::{ScalarTy, Ty};

/// What [`derive()`] differentiates, and how it accumulates.
///
/// By default every read-only storage buffer of `f32`s (`array<f32>`) is a differentiable
/// input, and every read-write `array<f32>` the kernel stores into is an output. Uniforms,
/// integer buffers and the rest are data (constants).
///
/// The names given are checked by [`derive()`]: a name that is no binding of the kernel, or an
/// accumulation for a binding that is not a differentiable input, is a
/// [`BuildError::DeriveOption`] at the Rust line of the option.
#[derive(Clone, Debug, Default)]
pub struct Derive {
    no_diff: Vec<(String, CallSite)>,
    schemes: Vec<(String, Accumulation, CallSite)>,
}

impl Derive {
    /// The defaults above.
    pub fn new() -> Self {
        Derive::default()
    }

    /// Treat the binding `name` as data: no gradient for it (Slang's `no_diff`). `name` must
    /// be a binding of the kernel (checked by [`derive()`]).
    #[track_caller]
    pub fn no_diff(mut self, name: &str) -> Self {
        self.no_diff.push((name.to_string(), CallSite::caller()));
        self
    }

    /// Accumulate the gradient of the input `name` with `scheme` instead of the one chosen
    /// (exclusive where proven race-free, atomic otherwise: [`Accumulation`]).
    /// [`Accumulation::Exclusive`] for an input whose elements several invocations read is a
    /// data race (the interpreter reports it). `name` must be a differentiable input: a
    /// read-only `array<f32>` not marked [`Derive::no_diff`] (checked by [`derive()`]).
    #[track_caller]
    pub fn accumulate(mut self, name: &str, scheme: Accumulation) -> Self {
        self.schemes
            .push((name.to_string(), scheme, CallSite::caller()));
        self
    }

    /// Every name given is a binding of `primal`, and every accumulation is for one of its
    /// differentiable inputs.
    fn check(&self, primal: &KernelBuilder) -> Result<(), BuildError> {
        let binding = |name: &str| {
            primal
                .globals
                .iter()
                .find(|g| g.name == name && matches!(g.kind, GlobalKind::Binding(..)))
        };
        for (name, site) in &self.no_diff {
            if binding(name).is_none() {
                return Err(BuildError::DeriveOption {
                    option: "no_diff",
                    binding: name.clone(),
                    reason: format!("the kernel `{}` has no binding of that name", primal.name),
                    site: *site,
                });
            }
        }
        for (name, scheme, site) in &self.schemes {
            let reason = match binding(name) {
                None => format!("the kernel `{}` has no binding of that name", primal.name),
                Some(_) if self.no_diff.iter().any(|(n, _)| n == name) => {
                    "it is also marked `no_diff`: it has no gradient".to_string()
                }
                Some(g) => match g.kind {
                    GlobalKind::Binding(BindingKind::StorageRead, _) if float_buffer(&g.ty) => {
                        if *scheme == Accumulation::Write {
                            "a derived kernel adds its gradients (`Exclusive` or `Atomic`); \
                             `Write` is for custom derivatives"
                                .to_string()
                        } else {
                            continue;
                        }
                    }
                    _ => format!(
                        "it is not a differentiable input (a read-only `array<f32>`): it is {} \
                         `{}`, data without a gradient",
                        binding_kind_words(&g.kind),
                        g.ty.wgsl_name()
                    ),
                },
            };
            return Err(BuildError::DeriveOption {
                option: "accumulate",
                binding: name.clone(),
                reason,
                site: *site,
            });
        }
        Ok(())
    }
}

fn binding_kind_words(kind: &GlobalKind) -> &'static str {
    match kind {
        GlobalKind::Binding(BindingKind::StorageRead, _) => "a read-only storage buffer of",
        GlobalKind::Binding(BindingKind::StorageReadWrite, _) => "a read-write storage buffer of",
        GlobalKind::Binding(BindingKind::Uniform, _) => "a uniform of",
        GlobalKind::Binding(..) => "a binding of",
        GlobalKind::Workgroup => "workgroup memory of",
    }
}

/// Why a derived kernel accumulates an input's gradient as it does ([`Backward::choices`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Choice {
    /// The forward kernel's input binding.
    pub input: String,
    /// The scheme.
    pub accumulation: Accumulation,
    /// Why: the proof of exclusivity, the read that may be shared, or the author's override.
    pub reason: String,
}

/// What a binding of a backward kernel holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Role {
    /// The forward kernel's binding of this name, with the same contents (inputs, uniforms).
    Data {
        /// The forward kernel's binding.
        binding: String,
    },
    /// The incoming gradient of the forward kernel's output `output`: its shape, read-only.
    OutputGradient {
        /// The forward kernel's output binding.
        output: String,
    },
    /// The gradient of the forward kernel's input `input`, of its length: `f32`s
    /// (`Exclusive`, `Write`), or their bits as `u32`s (`Atomic`, an `array<atomic<u32>>`).
    InputGradient {
        /// The forward kernel's input binding.
        input: String,
        /// How the kernel writes it.
        accumulation: Accumulation,
    },
    /// The iteration-limit flag of the kernel's bounded loops
    /// ([`crate::KernelBuilder::max_iterations`]): one `u32` (an `array<atomic<u32>>` of
    /// length 1), zeroed before the dispatch. After it, 0: every loop stayed within its
    /// bound; `k > 0`: the loop `loops[k - 1]` ran past its bound in some invocation, whose
    /// gradients are then missing ([`BackwardKernel::check_iteration_limit`] says so).
    IterationLimit {
        /// The bounded loops, by number.
        loops: Vec<BoundedLoop>,
    },
}

/// One kernel of a backward pass, with the role of each of its bindings (in binding order).
#[derive(Debug)]
pub struct BackwardKernel {
    /// The kernel (dispatched over the forward kernel's grid).
    pub kernel: KernelBuilder,
    /// `(binding name, role)` for each binding, in order.
    pub roles: Vec<(String, Role)>,
}

/// The backward pass of a kernel: kernels to dispatch in order, each over the same grid as
/// the forward kernel. Derived ([`derive()`]) or written by the author ([`Backward::custom`]).
#[derive(Debug)]
pub struct Backward {
    /// The kernels, in dispatch order.
    pub kernels: Vec<BackwardKernel>,
    /// True if [`derive()`] made it.
    pub derived: bool,
    /// For each gradient a derived kernel accumulates, the scheme and why it was chosen
    /// (empty for custom passes). [`Backward`]'s `Display` prints them.
    pub choices: Vec<Choice>,
}

impl Backward {
    /// A backward pass the author writes, as Slang's `[BackwardDerivative]`: for kernels
    /// that are not derived (workgroup memory, barriers, tiled products) or whose
    /// derivative is better written by hand. `kernels` are dispatched in order over the
    /// forward kernel's grid; each binding's role says what it holds. Check it like a
    /// derived one (`wgsl_dsl::autodiff::check`).
    pub fn custom(kernels: Vec<BackwardKernel>) -> Self {
        Backward {
            kernels,
            derived: false,
            choices: Vec::new(),
        }
    }
}

impl std::fmt::Display for Backward {
    /// The kernels and their bindings' roles: what each gradient buffer holds and how it is
    /// accumulated.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for k in &self.kernels {
            writeln!(
                f,
                "{} ({})",
                k.kernel.name(),
                if self.derived { "derived" } else { "custom" }
            )?;
            for (name, role) in &k.roles {
                match role {
                    Role::Data { binding } => {
                        writeln!(f, "  {name}: the forward kernel's `{binding}`")?
                    }
                    Role::OutputGradient { output } => {
                        writeln!(f, "  {name}: incoming gradient of output `{output}`")?
                    }
                    Role::InputGradient {
                        input,
                        accumulation,
                    } => {
                        writeln!(f, "  {name}: gradient of `{input}`, {accumulation}")?;
                        if let Some(c) = self.choices.iter().find(|c| c.input == *input) {
                            writeln!(f, "    because {}", c.reason)?;
                        }
                    }
                    Role::IterationLimit { loops } => writeln!(
                        f,
                        "  {name}: iteration-limit flag of {} bounded loop(s)",
                        loops.len()
                    )?,
                }
            }
        }
        Ok(())
    }
}

/// True for `array<f32>`: the buffers kernel AD differentiates (the runtime binds buffers of
/// scalars; vectors and `f16` are differentiated inside kernels).
fn float_buffer(ty: &Ty) -> bool {
    matches!(ty, Ty::Array { elem, len: None } if **elem == Ty::Scalar(ScalarTy::F32))
}

/// The backward kernel of `primal`: `<name>_backward`, dispatched over the same grid, which
/// reads the incoming gradient of each output and adds the gradient of each differentiable
/// input into its buffer (see [`Derive`] for which are which, [`Accumulation`] for how).
///
/// Its bindings: the primal's bindings other than the outputs, in order (same names and
/// contents), then `d_<output>` for each output (read-only, the output's shape), then
/// `d_<input>` for each differentiable input (read-write). [`Backward`]'s `roles` list them.
///
/// What is derived: straight-line code, `let`s and `var`s, `if` (its branches recomputed in
/// the reverse pass), `return` anywhere outside loops, helper functions (inlined), loops whose
/// trip count is known when the kernel is built (**unrolled**: no loop-carried value is
/// stored; each iteration's values are `let`s), loops bounded by their author
/// ([`KernelBuilder::max_iterations`]; a tape per loop, see `autodiff/loops.rs`), workgroup
/// memory and barriers (phases reversed, adjoint arrays in workgroup memory, see
/// `autodiff/shared.rs`), `switch` on build-time values. Each output element must be stored by
/// one invocation at most (as a race-free kernel does) and never read; one invocation may
/// store it several times: the last store wins (the adjoint of a value overwritten is zero,
/// through `if`s and unrolled loops, at indices compared at run time where they may be
/// equal). The expression rules are [`crate::autodiff`]'s; the untaken operand of a `select`
/// gets an exact zero that reaches no non-finite derivative.
///
/// Each gradient is [`Accumulation::Exclusive`] where every read of its input is at an
/// element of one output that the reading invocation stores, [`Accumulation::Atomic`]
/// otherwise; [`Backward::choices`] says which and why.
///
/// # Errors
/// [`BuildError::NotDifferentiable`] at the Rust call site of what cannot be derived:
/// barriers under a run-time condition, workgroup memory in a run-time loop, atomics,
/// subgroup and cooperative-matrix operations, textures, loops whose trip count is not known
/// when the kernel is built and that have no `max_iterations`, reads of outputs, stores into
/// part of a `var`, and every
/// expression [`KernelBuilder::vjp`] refuses; and any mistake recorded in `primal` (the
/// derivation needs a kernel that builds). [`BuildError::DeriveOption`] for a name in
/// `options` that is no binding of `primal`, or an accumulation for one that is not a
/// differentiable input. Build the result with `kernels[0].kernel.build()`.
#[track_caller]
pub fn derive(primal: &KernelBuilder, options: &Derive) -> Result<Backward, BuildError> {
    let site = CallSite::caller();
    if let Some(e) = primal.errors.first() {
        return Err(e.clone());
    }
    options.check(primal)?;
    let mut b = KernelBuilder::new(format!("{}_backward", primal.name), primal.workgroup_size);
    b.site = site;
    b.capabilities |= primal.capabilities;
    b.check_uniformity = primal.check_uniformity;

    // Which globals are inputs, outputs and data.
    let stored: std::collections::HashSet<usize> = super::graph::stores(primal)
        .keys()
        .filter_map(|r| match r {
            Root::Global(i) => Some(*i),
            Root::Local(_) => None,
        })
        .collect();
    // The `array<atomic<u32>>` bindings added into with `atomic_add_f32`: outputs.
    let mut added = std::collections::HashSet::new();
    for body in primal.recorded_bodies() {
        super::graph::for_each_stmt(body, &mut |s, _| {
            if let Stmt::AtomicAddF32 { place, .. } = s
                && let Some(Root::Global(i)) = super::graph::root(primal, place)
            {
                added.insert(i);
            }
        });
    }
    let mut roles = Vec::new();
    let mut role_list = Vec::new();
    let mut outputs = Vec::new();
    let mut inputs = Vec::new();
    for (index, g) in primal.globals.iter().enumerate() {
        let diff = !options.no_diff.iter().any(|(n, _)| *n == g.name);
        let role = match g.kind {
            GlobalKind::Workgroup => {
                GlobalRole::Workgroup(super::shared::redeclare(&mut b, &g.name, &g.ty, g.site))
            }
            GlobalKind::Binding(kind, _) => {
                let float = float_buffer(&g.ty);
                match kind {
                    BindingKind::StorageRead if diff && float => {
                        let h = b.declare_binding(
                            &g.name,
                            g.ty.clone(),
                            BindingKind::StorageRead,
                            g.site,
                        );
                        role_list.push((
                            g.name.clone(),
                            Role::Data {
                                binding: g.name.clone(),
                            },
                        ));
                        inputs.push((index, h));
                        GlobalRole::Input(h)
                    }
                    BindingKind::StorageReadWrite
                        if diff
                            && ((float && stored.contains(&index))
                                || (super::is_accumulated(&g.ty) && added.contains(&index))) =>
                    {
                        outputs.push(index);
                        // Declared with the incoming gradients below.
                        GlobalRole::Output(GlobalHandle {
                            builder: b.id,
                            index: usize::MAX,
                        })
                    }
                    _ => {
                        let h = b.declare_binding(&g.name, g.ty.clone(), kind, g.site);
                        role_list.push((
                            g.name.clone(),
                            Role::Data {
                                binding: g.name.clone(),
                            },
                        ));
                        GlobalRole::Data {
                            handle: h,
                            written: stored.contains(&index),
                        }
                    }
                }
            }
        };
        roles.push(role);
    }
    for &index in &outputs {
        let g = &primal.globals[index];
        let name = format!("d_{}", g.name);
        // An output added into as `f32` bits has an incoming gradient of `f32`s.
        let ty = if super::is_accumulated(&g.ty) {
            Ty::Array {
                elem: Box::new(Ty::Scalar(ScalarTy::F32)),
                len: None,
            }
        } else {
            g.ty.clone()
        };
        let h = b.declare_binding(&name, ty, BindingKind::StorageRead, g.site);
        roles[index] = GlobalRole::Output(h);
        role_list.push((
            name,
            Role::OutputGradient {
                output: g.name.clone(),
            },
        ));
    }

    let mut symbolic = Symbolic::new(primal, roles.clone());
    let mut items = symbolic.entry().map_err(|e| e.at(site))?;
    super::loops::drop_dead_loops(&mut items);
    super::shared::check_placement(&items, 0).map_err(|e| e.at(site))?;
    super::shared::check_loops_and_barriers(&items).map_err(|e| e.at(site))?;
    let defs = std::mem::take(&mut symbolic.defs);

    // The inputs' gradients: exclusive where proven race-free (`exclusive`), else atomic.
    let mut gradients = Gradients::default();
    let mut choices = Vec::new();
    // Each choice's gradient binding.
    let mut grads = Vec::new();
    for &(index, h) in &inputs {
        let g = &primal.globals[index];
        let (chosen, why) = match super::exclusive::prove(&items, h.index) {
            Proof::Owned { output, reads } => (
                Accumulation::Exclusive,
                format!(
                    "each of its {reads} reads is at an element of `{}` that the reading \
                     invocation stores, and the forward kernel stores each element from one \
                     invocation at most: no two invocations add to one element of `d_{}`",
                    b.globals[output].name.trim_start_matches("d_"),
                    g.name
                ),
            ),
            Proof::Unread => (
                Accumulation::Exclusive,
                "it is never read: nothing is added".to_string(),
            ),
            Proof::Shared(at) => (
                Accumulation::Atomic,
                format!(
                    "the read of `{}` at {at} is not proven to be made by one invocation only \
                     (it is not at the index of an output element that the reading invocation \
                     stores), so invocations may add to one element of `d_{}`",
                    g.name, g.name
                ),
            ),
        };
        let (scheme, reason) = match options.schemes.iter().rev().find(|(n, _, _)| *n == g.name) {
            Some((_, s, at)) if *s != chosen => (
                *s,
                format!(
                    "`Derive::accumulate` at {at} chose it (derive would have chosen {chosen:?}: {why})"
                ),
            ),
            _ => (chosen, why),
        };
        choices.push(Choice {
            input: g.name.clone(),
            accumulation: scheme,
            reason,
        });
        let name = format!("d_{}", g.name);
        let ty = match scheme {
            Accumulation::Atomic => Ty::Array {
                elem: Box::new(Ty::Atomic(ScalarTy::U32)),
                len: None,
            },
            _ => g.ty.clone(),
        };
        let grad = b.declare_binding(&name, ty, BindingKind::StorageReadWrite, g.site);
        gradients.add(h, grad, scheme);
        grads.push(grad);
        role_list.push((
            name,
            Role::InputGradient {
                input: g.name.clone(),
                accumulation: scheme,
            },
        ));
    }

    declare_flag(&mut b, &mut items, &mut role_list);
    b.value_defs.extend(defs);
    let mut value_names = HashMap::new();
    names(&items, &mut value_names);
    let mut overwrites = Overwrites::plan(&items).map_err(|e| e.at(site))?;
    // Atomic additions at constant elements are reduced in workgroup memory where every
    // invocation reaches the end of the kernel: no `return` in the entry point, and no bounded
    // loop (whose invocations return when they pass the bound).
    let mut returns = role_list
        .iter()
        .any(|(_, r)| matches!(r, Role::IterationLimit { .. }));
    super::graph::for_each_stmt(primal.entry_body(), &mut |s, _| {
        returns |= matches!(s, Stmt::Return(_));
    });
    gradients.reduce_in_workgroups(
        b.workgroup_size,
        super::shared::workgroup_bytes(&b),
        returns,
    );
    let mut body = Vec::new();
    super::shared::declare_saved(&items, &mut body);
    body.extend(super::backward::forward_primal(&items));
    overwrites.declare(&mut body);
    {
        let mut active = std::collections::HashSet::new();
        super::backward::active(&items, &gradients, &mut active);
        let emit = Emit {
            b: &b,
            gradients: &gradients,
            names: value_names,
            active,
            masked: Default::default(),
            overwrites,
        };
        let mut pending = HashMap::new();
        emit.reverse(&items, &mut pending, &mut body)
            .map_err(|e| e.at(site))?;
    }
    let mut sums = Vec::new();
    gradients.declare_reduced(&mut sums);
    body.splice(0..0, sums);
    gradients.reduce_at_end(&mut b, &mut body);
    for (choice, grad) in choices.iter_mut().zip(&grads) {
        let elements = gradients.reduced_elements(*grad);
        if !elements.is_empty() {
            choice.reason.push_str(&format!(
                "; the additions to its element{} {} (an index known when the kernel is \
                 built, the same for every invocation) are summed in each workgroup first: \
                 one atomic addition per workgroup and element",
                if elements.len() == 1 { "" } else { "s" },
                elements
                    .iter()
                    .map(|e| e.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    for (stmt, s) in body {
        b.push(stmt, s);
    }
    Ok(Backward {
        kernels: vec![BackwardKernel {
            kernel: b,
            roles: role_list,
        }],
        derived: true,
        choices,
    })
}

impl KernelBuilder {
    /// [`derive()`] with the default [`Derive`]: this kernel's backward pass.
    ///
    /// # Errors
    /// As [`derive()`].
    #[track_caller]
    pub fn derive_backward(&self) -> Result<Backward, BuildError> {
        derive(self, &Derive::new())
    }
}

impl BackwardKernel {
    /// The loops of this kernel bounded by their authors, if it has an iteration-limit flag
    /// ([`Role::IterationLimit`]).
    pub fn bounded_loops(&self) -> Option<&[BoundedLoop]> {
        self.roles.iter().find_map(|(_, r)| match r {
            Role::IterationLimit { loops } => Some(loops.as_slice()),
            _ => None,
        })
    }

    /// Read the iteration-limit flag after a dispatch: `flag` is the word of the binding of
    /// role [`Role::IterationLimit`] (zeroed before the dispatch).
    ///
    /// # Errors
    /// [`IterationLimitExceeded`] if a loop ran past its bound (`flag != 0`).
    pub fn check_iteration_limit(&self, flag: u32) -> Result<(), IterationLimitExceeded> {
        if flag == 0 {
            return Ok(());
        }
        let l = self
            .bounded_loops()
            .and_then(|loops| loops.get(flag as usize - 1));
        Err(IterationLimitExceeded {
            kernel: self.kernel.name().to_string(),
            site: l.map_or(self.kernel.site, |l| l.site),
            max_iterations: l.map_or(0, |l| l.max_iterations),
        })
    }
}

/// With run-time loops in `items`: the iteration-limit flag binding `iteration_limit` of the
/// derived kernel `b` (declared now, its role added), the loops numbered and given it.
pub(crate) fn declare_flag(
    b: &mut crate::KernelBuilder,
    items: &mut [super::program::Item],
    roles: &mut Vec<(String, Role)>,
) {
    if super::loops::number_loops(items, None).is_empty() {
        return;
    }
    let name = "iteration_limit";
    let flag = b.declare_binding(
        name,
        crate::types::Ty::Array {
            elem: Box::new(crate::types::Ty::Atomic(crate::types::ScalarTy::U32)),
            len: None,
        },
        crate::kernel::BindingKind::StorageReadWrite,
        b.site,
    );
    let loops = super::loops::number_loops(items, Some(flag));
    roles.push((name.to_string(), Role::IterationLimit { loops }));
}
