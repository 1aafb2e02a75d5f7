//! Kernel AD: a kernel's backward kernel ([`derive()`]), and the same interface for
//! derivatives authors write ([`Backward::custom`], Slang's `[BackwardDerivative]`).

use std::collections::HashMap;

use super::accumulate::{Accumulation, Gradients, own_index};
use super::backward::{Emit, names};
use super::graph::Root;
use super::symbolic::{GlobalRole, Item, Symbolic};
use crate::error::BuildError;
use crate::exp::{ExprKind, NodeRef, PlaceKind, PlaceRef};
use crate::handle::GlobalHandle;
use crate::kernel::{BindingKind, GlobalKind, KernelBuilder};
use crate::site::CallSite;
use crate::types::{ScalarTy, Ty};

/// What [`derive()`] differentiates, and how it accumulates.
///
/// By default every read-only storage buffer of `f32`s (`array<f32>`) is a differentiable
/// input, and every read-write `array<f32>` the kernel stores into is an output. Uniforms,
/// integer buffers and the rest are data (constants).
#[derive(Clone, Debug, Default)]
pub struct Derive {
    no_diff: Vec<String>,
    schemes: Vec<(String, Accumulation)>,
}

impl Derive {
    /// The defaults above.
    pub fn new() -> Self {
        Derive::default()
    }

    /// Treat the binding `name` as data: no gradient for it (Slang's `no_diff`).
    pub fn no_diff(mut self, name: &str) -> Self {
        self.no_diff.push(name.to_string());
        self
    }

    /// Accumulate the gradient of the input `name` with `scheme` instead of the one chosen
    /// (exclusive where every read is at the invocation's own index, atomic otherwise).
    /// [`Accumulation::Exclusive`] for an input read at other indices is a data race
    /// (the interpreter reports it).
    pub fn accumulate(mut self, name: &str, scheme: Accumulation) -> Self {
        self.schemes.push((name.to_string(), scheme));
        self
    }
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
        loops: Vec<super::loops::BoundedLoop>,
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
                    } => writeln!(f, "  {name}: gradient of `{input}`, {accumulation}")?,
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
/// `autodiff/shared.rs`), `switch` on build-time values. Each output
/// element must be written at most once per dispatch (as a race-free kernel does) and never
/// read. The expression rules are [`crate::autodiff`]'s.
///
/// # Errors
/// [`BuildError::NotDifferentiable`] at the Rust call site of what cannot be derived:
/// barriers under a run-time condition, workgroup memory in a run-time loop, atomics,
/// subgroup and cooperative-matrix operations, textures, loops whose trip count is not known
/// when the kernel is built and that have no `max_iterations`, reads of outputs, stores into
/// part of a `var`, and every
/// expression [`KernelBuilder::vjp`] refuses; and any mistake recorded in `primal` (the
/// derivation needs a kernel that builds). Build the result with `kernels[0].kernel.build()`.
#[track_caller]
pub fn derive(primal: &KernelBuilder, options: &Derive) -> Result<Backward, BuildError> {
    let site = CallSite::caller();
    if let Some(e) = primal.errors.first() {
        return Err(e.clone());
    }
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
    let mut roles = Vec::new();
    let mut role_list = Vec::new();
    let mut outputs = Vec::new();
    let mut inputs = Vec::new();
    for (index, g) in primal.globals.iter().enumerate() {
        let diff = !options.no_diff.contains(&g.name);
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
                    BindingKind::StorageReadWrite if diff && float && stored.contains(&index) => {
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
        let h = b.declare_binding(&name, g.ty.clone(), BindingKind::StorageRead, g.site);
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
    super::shared::check_placement(&items, 0).map_err(|e| e.at(site))?;
    super::shared::check_loops_and_barriers(&items).map_err(|e| e.at(site))?;
    let defs = std::mem::take(&mut symbolic.defs);

    // The inputs' gradients: exclusive where every read is at the invocation's own index.
    let mut reads: HashMap<usize, Vec<PlaceRef>> = HashMap::new();
    collect_reads(&items, &mut reads);
    let mut gradients = Gradients::default();
    for &(index, h) in &inputs {
        let g = &primal.globals[index];
        let places = reads.get(&h.index).map(Vec::as_slice).unwrap_or(&[]);
        let own = places
            .iter()
            .all(|p| element_index(p).is_some_and(|i| own_index(&i, &defs)));
        let chosen = if own {
            Accumulation::Exclusive
        } else {
            Accumulation::Atomic
        };
        let scheme = options
            .schemes
            .iter()
            .rev()
            .find(|(n, _)| *n == g.name)
            .map_or(chosen, |(_, s)| *s);
        if scheme == Accumulation::Write {
            return Err(BuildError::NotDifferentiable {
                operation: format!("the gradient of `{}`", g.name),
                reason: "a derived kernel adds its gradients (`Exclusive` or `Atomic`); \
                         `Write` is for custom derivatives"
                    .into(),
                site: g.site,
                differentiated_at: site,
            });
        }
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
        role_list.push((
            name,
            Role::InputGradient {
                input: g.name.clone(),
                accumulation: scheme,
            },
        ));
    }

    super::loops::declare_flag(&mut b, &mut items, &mut role_list);
    b.value_defs.extend(defs);
    let mut value_names = HashMap::new();
    names(&items, &mut value_names);
    let mut body = Vec::new();
    super::shared::declare_saved(&items, &mut body);
    body.extend(super::backward::forward_primal(&items));
    {
        let mut active = std::collections::HashSet::new();
        super::backward::active(&items, &gradients, &mut active);
        let emit = Emit {
            b: &b,
            gradients: &gradients,
            names: value_names,
            active,
        };
        let mut pending = HashMap::new();
        emit.reverse(&items, &mut pending, &mut body)
            .map_err(|e| e.at(site))?;
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
    })
}

/// The index of the buffer element a place reads: `i` of `x[i]`.
fn element_index(place: &PlaceRef) -> Option<NodeRef> {
    match &place.kind {
        PlaceKind::Index(base, i) if matches!(base.kind, PlaceKind::Global(_)) => Some(i.clone()),
        _ => None,
    }
}

/// Every load of a global in the items, by the global's index.
fn collect_reads(items: &[Item], out: &mut HashMap<usize, Vec<PlaceRef>>) {
    let mut reads = Reads {
        seen: std::collections::HashSet::new(),
        out,
    };
    reads.walk(items);
}

struct Reads<'a> {
    seen: std::collections::HashSet<*const crate::exp::Node>,
    out: &'a mut HashMap<usize, Vec<PlaceRef>>,
}

impl Reads<'_> {
    fn visit(&mut self, root: &NodeRef) {
        let mut stack = vec![root.clone()];
        while let Some(n) = stack.pop() {
            if !self.seen.insert(std::rc::Rc::as_ptr(&n)) {
                continue;
            }
            if let ExprKind::Load(p) = &n.kind
                && let Some(g) = global_of(p)
            {
                self.out.entry(g).or_default().push(p.clone());
            }
            stack.extend(super::subst::operands(&n));
        }
    }

    fn walk(&mut self, items: &[Item]) {
        for item in items {
            match item {
                Item::Let { value, .. } => self.visit(value),
                Item::Output { seed, value, .. } => {
                    self.visit(value);
                    let mut idx = Vec::new();
                    super::subst::place_indices(seed, &mut idx);
                    for i in &idx {
                        self.visit(i);
                    }
                }
                Item::If {
                    condition,
                    then,
                    otherwise,
                    merges,
                    ..
                } => {
                    self.visit(condition);
                    self.walk(then);
                    self.walk(otherwise);
                    for m in merges {
                        self.visit(&m.then_value);
                        self.visit(&m.else_value);
                    }
                }
                Item::Loop(l) => {
                    for n in super::loops::roots(l) {
                        self.visit(&n);
                    }
                    self.walk(&l.body);
                }
                Item::Shared(s) => {
                    for n in super::shared::roots(s) {
                        self.visit(&n);
                    }
                }
            }
        }
    }
}

fn global_of(place: &PlaceRef) -> Option<usize> {
    match &place.kind {
        PlaceKind::Index(b, _) | PlaceKind::Field(b, _) => global_of(b),
        PlaceKind::Global(g) => Some(g.index),
        PlaceKind::Local(_) => None,
    }
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
