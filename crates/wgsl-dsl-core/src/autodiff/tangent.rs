//! Kernel forward mode ([`derive_tangent`]): a kernel's tangent kernel, which computes the
//! Jacobian-vector product `J v` of the kernel (its outputs' changes when its inputs move
//! along `v`), for the gradient checker's adjoint identity `<u, J v> = <J^T u, v>`.
//!
//! Forward mode follows the primal's statements as they are, one by one (dual numbers at the
//! statement level), so it needs none of the reverse pass's machinery (no symbolic
//! execution, no unrolling, no accumulation), and the identity checks that machinery
//! against something that does not share it:
//! - the primal's statements are kept, in order, with their control flow (`if`, loops,
//!   `switch`, `return`, barriers);
//! - each `let` whose value depends on an input gets a tangent `let` (`t_<name>`), computed
//!   by expression forward mode ([`super::forward`]) with the `let`s, `var`s and loads it
//!   reads as the variables;
//! - each `var` of floats (scalars, vectors, arrays of them), and each workgroup variable of
//!   floats, gets a tangent `var` of its type; each store into it also stores the tangent of
//!   the value (computed before the store, so that the store does not change what it reads);
//! - each load of a differentiable input reads its tangent buffer at the same index;
//! - each store into an output also stores the tangent of its value into the output's
//!   tangent buffer at the same index (so an element stored twice keeps the tangent of the
//!   value stored last, as the output keeps the value).
//!
//! Helper functions are called as they are; a call's result is differentiated as the
//! function's body when that is `let`s and one `return` (as [`crate::KernelBuilder::jvp`]
//! does), and refused otherwise where its result depends on an input.

use std::collections::HashMap;
use std::rc::Rc;

use super::error::NotDifferentiable;
use super::graph::{Graph, Key, for_each_stmt, key};
use super::make::{At, Block, bind, node};
use crate::error::BuildError;
use crate::exp::{ExprKind, NodeRef, PlaceKind, PlaceNode, PlaceRef};
use crate::handle::{GlobalHandle, ValueId};
use crate::kernel::stmt::{Stmt, VarInit};
use crate::kernel::values::ValueDef;
use crate::kernel::{BindingKind, GlobalDecl, GlobalKind, KernelBuilder};
use crate::site::CallSite;
use crate::types::{ScalarTy, Ty};

/// What a binding of a tangent kernel holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TangentRole {
    /// The forward kernel's binding of this name, with the same contents (its outputs are
    /// written as the forward kernel writes them).
    Primal {
        /// The forward kernel's binding.
        binding: String,
    },
    /// The tangent `v` of the input `input`: its shape, read-only.
    InputTangent {
        /// The forward kernel's input binding.
        input: String,
    },
    /// The tangent of the output `output` (`J v`), written where the output is written.
    OutputTangent {
        /// The forward kernel's output binding.
        output: String,
    },
}

/// A kernel's tangent kernel ([`derive_tangent`]), dispatched over the forward kernel's grid.
#[derive(Debug)]
pub struct TangentKernel {
    /// The kernel, named `<name>_tangent`.
    pub kernel: KernelBuilder,
    /// `(binding name, role)` for each binding, in order: the forward kernel's bindings, then
    /// `t_<input>` for each input, then `t_<output>` for each output.
    pub roles: Vec<(String, TangentRole)>,
}

/// True for the types that have tangents: float scalars and vectors, arrays of them.
fn has_tangent(ty: &Ty) -> bool {
    match ty {
        Ty::Scalar(ScalarTy::F32 | ScalarTy::F16)
        | Ty::Vector(_, ScalarTy::F32 | ScalarTy::F16) => true,
        Ty::Array { elem, .. } => has_tangent(elem),
        _ => false,
    }
}

fn refuse(operation: &str, reason: &str, site: CallSite) -> NotDifferentiable {
    NotDifferentiable {
        operation: operation.to_string(),
        reason: reason.to_string(),
        site,
    }
}

/// The tangent kernel of `primal` with respect to the read-only `array<f32>` bindings
/// `inputs`, for the read-write `array<f32>` bindings `outputs` (see the module docs for what
/// it computes). Its bindings are the forward kernel's (same names, same contents), then
/// `t_<input>` (`v`, read-only) for each input, then `t_<output>` (read-write, written
/// where the output is) for each output; [`TangentKernel::roles`] lists them.
///
/// # Errors
/// [`BuildError::NotDifferentiable`]: an input or output that is not a binding of that kind
/// and type (at this call), a value depending on an input that forward mode cannot follow
/// (at its Rust call site: the expression rules of [`crate::autodiff`], a helper function
/// that is not `let`s and one `return`, a subgroup operation or `workgroupUniformLoad` of
/// floats, a helper function storing into an output or workgroup memory); and any mistake
/// recorded in `primal`.
#[track_caller]
pub fn derive_tangent(
    primal: &KernelBuilder,
    inputs: &[&str],
    outputs: &[&str],
) -> Result<TangentKernel, BuildError> {
    tangent_kernel(primal, inputs, outputs, false, CallSite::caller())
}

/// The magnitude kernel of `primal`: its tangent kernel ([`derive_tangent`], the same
/// bindings and roles, named `<name>_magnitude`) with every local derivative replaced by its
/// magnitude (`|p| t` for `p t`, `t / |d|` for `t / d`, `dot(|w|, t)` for `dot(w, t)`).
/// Given non-negative input tangents `|v|`, it writes for each output element a bound of
/// `sum over the chain rule's paths of |product of the local derivatives| |v|`: the
/// magnitudes of every contribution to `J v`, including those that cancel. A derivative's
/// rounding error scales with that, not with `J v` itself: `x - x` has derivative 0, but
/// its derived gradient is `u - u`, which an FMA-contracting GPU leaves at one rounding of
/// `u` (the gradient checker's adjoint identity takes its tolerance from this kernel,
/// [`crate::autodiff`]'s checker docs).
///
/// # Errors
/// As [`derive_tangent`]'s, and [`BuildError::NotDifferentiable`] for a product of a
/// matrix with a value that depends on an input (WGSL has no `abs` of a matrix).
#[track_caller]
pub fn derive_tangent_magnitude(
    primal: &KernelBuilder,
    inputs: &[&str],
    outputs: &[&str],
) -> Result<TangentKernel, BuildError> {
    tangent_kernel(primal, inputs, outputs, true, CallSite::caller())
}

fn tangent_kernel(
    primal: &KernelBuilder,
    inputs: &[&str],
    outputs: &[&str],
    absolute: bool,
    site: CallSite,
) -> Result<TangentKernel, BuildError> {
    if let Some(e) = primal.errors.first() {
        return Err(e.clone());
    }
    let float_array = |ty: &Ty| matches!(ty, Ty::Array { elem, len: None } if **elem == Ty::Scalar(ScalarTy::F32));
    let find = |name: &str, kind: BindingKind| {
        primal.globals.iter().position(|g| {
            g.name == name
                && matches!(g.kind, GlobalKind::Binding(k, _) if k == kind)
                && (float_array(&g.ty)
                    || (kind == BindingKind::StorageReadWrite && super::is_accumulated(&g.ty)))
        })
    };
    let mut input_index = Vec::new();
    for name in inputs {
        input_index.push(find(name, BindingKind::StorageRead).ok_or_else(|| {
            refuse(
                &format!("the input `{name}`"),
                "the forward kernel has no read-only `array<f32>` binding of that name",
                site,
            )
            .at(site)
        })?);
    }
    let mut output_index = Vec::new();
    for name in outputs {
        output_index.push(find(name, BindingKind::StorageReadWrite).ok_or_else(|| {
            refuse(
                &format!("the output `{name}`"),
                "the forward kernel has no read-write `array<f32>` binding of that name (or \
                 `array<atomic<u32>>` added into by `atomic_add_f32`)",
                site,
            )
            .at(site)
        })?);
    }

    let suffix = if absolute { "magnitude" } else { "tangent" };
    let mut b = KernelBuilder::new(format!("{}_{suffix}", primal.name), primal.workgroup_size);
    // The primal's handles stay valid: same builder id, globals and functions in order.
    b.id = primal.id;
    b.site = site;
    b.capabilities |= primal.capabilities;
    b.check_uniformity = primal.check_uniformity;
    b.debug_prints = primal.debug_prints;
    b.value_defs = primal.value_defs.clone();
    let mut roles = Vec::new();
    for g in &primal.globals {
        match g.kind {
            GlobalKind::Binding(kind, _) => {
                b.declare_binding(&g.name, g.ty.clone(), kind, g.site);
                roles.push((
                    g.name.clone(),
                    TangentRole::Primal {
                        binding: g.name.clone(),
                    },
                ));
            }
            GlobalKind::Workgroup => b.globals.push(GlobalDecl {
                name: g.name.clone(),
                ty: g.ty.clone(),
                kind: GlobalKind::Workgroup,
                site: g.site,
            }),
        }
    }
    let mut tangents: HashMap<usize, GlobalHandle> = HashMap::new();
    for (&i, name) in input_index.iter().zip(inputs) {
        let g = &primal.globals[i];
        let h = b.declare_binding(
            &format!("t_{name}"),
            g.ty.clone(),
            BindingKind::StorageRead,
            g.site,
        );
        tangents.insert(i, h);
        roles.push((
            format!("t_{name}"),
            TangentRole::InputTangent {
                input: name.to_string(),
            },
        ));
    }
    for (&i, name) in output_index.iter().zip(outputs) {
        let g = &primal.globals[i];
        let h = b.declare_binding(
            &format!("t_{name}"),
            g.ty.clone(),
            BindingKind::StorageReadWrite,
            g.site,
        );
        tangents.insert(i, h);
        roles.push((
            format!("t_{name}"),
            TangentRole::OutputTangent {
                output: name.to_string(),
            },
        ));
    }
    for (i, g) in primal.globals.iter().enumerate() {
        if matches!(g.kind, GlobalKind::Workgroup) && has_tangent(&g.ty) {
            b.globals.push(GlobalDecl {
                name: format!("t_{}", g.name),
                ty: g.ty.clone(),
                kind: GlobalKind::Workgroup,
                site: g.site,
            });
            tangents.insert(
                i,
                GlobalHandle {
                    builder: b.id,
                    index: b.globals.len() - 1,
                },
            );
        }
    }
    for f in &primal.functions {
        let mut stores_tangent = None;
        for_each_stmt(&f.body, &mut |s, at| {
            if let Stmt::Store { place, .. } | Stmt::AtomicAddF32 { place, .. } = s
                && let Some(super::graph::Root::Global(i)) = super::graph::root(primal, place)
                && tangents.contains_key(&i)
            {
                stores_tangent.get_or_insert(at);
            }
        });
        if let Some(at) = stores_tangent {
            return Err(refuse(
                "a store in a helper function",
                "forward mode follows stores into outputs and workgroup memory in the kernel's \
                 entry point only; store the helper function's result there",
                at,
            )
            .at(site));
        }
        b.functions.push(f.clone());
    }

    let mut t = Transform {
        b,
        globals: tangents,
        vars: HashMap::new(),
        lets: HashMap::new(),
        absolute,
    };
    let body = t.block(primal.entry_body()).map_err(|e| e.at(site))?;
    let mut b = t.b;
    let mut defs = Vec::new();
    for_each_stmt(&body, &mut |s, _| defs.extend(ValueDef::of(s)));
    b.value_defs.extend(defs);
    for (stmt, at) in body {
        b.push(stmt, at);
    }
    Ok(TangentKernel { kernel: b, roles })
}

struct Transform {
    /// The tangent kernel (its globals and value definitions; the body is pushed at the end).
    b: KernelBuilder,
    /// The tangent global of each primal global that has one (inputs, outputs, workgroup
    /// variables of floats), by the primal global's index.
    globals: HashMap<usize, GlobalHandle>,
    /// The tangent `var` of each `var` of floats.
    vars: HashMap<ValueId, ValueId>,
    /// The tangent of each `let` that depends on an input.
    lets: HashMap<ValueId, NodeRef>,
    /// The magnitude kernel: each local derivative's magnitude ([`derive_tangent_magnitude`]).
    absolute: bool,
}

impl Transform {
    fn block(&mut self, stmts: &[(Stmt, CallSite)]) -> Result<Block, NotDifferentiable> {
        let mut out = Vec::new();
        for (s, at) in stmts {
            self.stmt(s, *at, &mut out)?;
        }
        Ok(out)
    }

    fn stmt(&mut self, s: &Stmt, at: CallSite, out: &mut Block) -> Result<(), NotDifferentiable> {
        match s {
            Stmt::Let { id, name, value } => {
                let t = self.tangent(value, out)?;
                out.push((s.clone(), at));
                if let Some(t) = t {
                    let t = bind(out, &format!("t_{name}"), t, at);
                    self.lets.insert(*id, t);
                }
            }
            Stmt::Var { id, name, ty, init } => {
                let t = match init {
                    VarInit::Value(v) if has_tangent(ty) => self.tangent(v, out)?,
                    _ => None,
                };
                out.push((s.clone(), at));
                if has_tangent(ty) {
                    let tid = ValueId::fresh();
                    self.vars.insert(*id, tid);
                    let init = match (init, t) {
                        (VarInit::Declared, _) => VarInit::Declared,
                        (_, Some(t)) => VarInit::Value(t),
                        (_, None) => VarInit::Zero,
                    };
                    out.push((
                        Stmt::Var {
                            id: tid,
                            name: format!("t_{name}"),
                            ty: ty.clone(),
                            init,
                        },
                        at,
                    ));
                }
            }
            Stmt::AtomicAddF32 { place, value } => {
                let (tangent_place, t) = self.store_tangent(place, value, at, out)?;
                out.push((s.clone(), at));
                // The tangent of a sum is the sum of the tangents, added the same way.
                if let (Some(tp), Some(t)) = (tangent_place, t) {
                    out.push((
                        Stmt::AtomicAddF32 {
                            place: tp,
                            value: t,
                        },
                        at,
                    ));
                }
            }
            Stmt::Store { place, .. } | Stmt::Atomic { place, .. }
                if matches!(place.ty, Ty::Atomic(_)) && self.tangent_place(place).is_some() =>
            {
                return Err(refuse(
                    "an integer atomic on an output",
                    "forward mode follows an `array<atomic<u32>>` output only through \
                     `atomic_add_f32`",
                    at,
                ));
            }
            Stmt::Store { place, value } => {
                let (tangent_place, t) = self.store_tangent(place, value, at, out)?;
                out.push((s.clone(), at));
                if let Some(tp) = tangent_place {
                    let value = t.unwrap_or_else(|| At(at).zero(&place.ty));
                    out.push((Stmt::Store { place: tp, value }, at));
                }
            }
            Stmt::If { .. }
            | Stmt::Loop { .. }
            | Stmt::LoopBreakIf { .. }
            | Stmt::Switch { .. } => {
                let s = s.try_map_blocks(|b| self.block(b))?;
                out.push((s, at));
            }
            Stmt::Subgroup { arg, ty, .. } => {
                if has_tangent(ty) && self.tangent(arg, &mut Vec::new())?.is_some() {
                    return Err(refuse(
                        "a subgroup operation",
                        "forward mode has no rule for subgroup operations of values that \
                         depend on an input",
                        at,
                    ));
                }
                out.push((s.clone(), at));
            }
            Stmt::WorkgroupUniformLoad { place, .. } if self.tangent_place(place).is_some() => {
                return Err(refuse(
                    "workgroupUniformLoad",
                    "forward mode does not follow `workgroupUniformLoad` of floats",
                    at,
                ));
            }
            Stmt::CoopStore { place, .. } | Stmt::TextureStore { texture: place, .. }
                if self.tangent_place(place).is_some() =>
            {
                return Err(refuse(
                    "a cooperative-matrix store",
                    "forward mode does not follow cooperative-matrix stores into outputs",
                    at,
                ));
            }
            _ => out.push((s.clone(), at)),
        }
        Ok(())
    }

    /// For a store (or an addition) of `value` into `place`: the tangent place, if `place` has
    /// one, and the tangent of `value` bound to a `let` (computed before the store, so that the
    /// store does not change what it reads), if it depends on an input.
    fn store_tangent(
        &mut self,
        place: &PlaceRef,
        value: &NodeRef,
        at: CallSite,
        out: &mut Block,
    ) -> Result<(Option<PlaceRef>, Option<NodeRef>), NotDifferentiable> {
        let tangent_place = self.tangent_place(place);
        let t = match &tangent_place {
            Some(_) => self
                .tangent(value, out)?
                .map(|t| bind(out, "t_value", t, at)),
            None => None,
        };
        Ok((tangent_place, t))
    }

    /// The tangent of `place`: the same path from the tangent of its root, if it has one.
    fn tangent_place(&self, place: &PlaceRef) -> Option<PlaceRef> {
        let kind = match &place.kind {
            PlaceKind::Global(h) if h.builder == self.b.id => {
                PlaceKind::Global(*self.globals.get(&h.index)?)
            }
            PlaceKind::Global(_) => return None,
            PlaceKind::Local(id) => PlaceKind::Local(*self.vars.get(id)?),
            PlaceKind::Index(base, i) => PlaceKind::Index(self.tangent_place(base)?, i.clone()),
            PlaceKind::Field(base, f) => PlaceKind::Field(self.tangent_place(base)?, *f),
        };
        Some(Rc::new(PlaceNode {
            kind,
            ty: place.ty.clone(),
            site: place.site,
        }))
    }

    /// True if a load of `place` reads memory the kernel can write, or an input: a variable
    /// of forward mode (its tangent is that of the place, or none).
    fn is_leaf_place(&self, place: &PlaceRef) -> bool {
        match super::graph::root(&self.b, place) {
            Some(super::graph::Root::Local(_)) => true,
            Some(super::graph::Root::Global(i)) => {
                self.globals.contains_key(&i)
                    || self.b.globals.get(i).is_some_and(|g| {
                        !matches!(
                            g.kind,
                            GlobalKind::Binding(BindingKind::StorageRead | BindingKind::Uniform, _)
                        )
                    })
            }
            None => false,
        }
    }

    /// The tangent of `e` at this point of the kernel (`None` where it does not depend on an
    /// input); the `let`s it needs go into `out`.
    fn tangent(
        &mut self,
        e: &NodeRef,
        out: &mut Block,
    ) -> Result<Option<NodeRef>, NotDifferentiable> {
        // The variables: the `let`s with tangents, loads of memory the kernel writes or of
        // inputs, and the results of statements differentiation does not see through.
        let lets: Vec<NodeRef> = self
            .lets
            .keys()
            .map(|id| node(ExprKind::Bound(*id), Ty::Scalar(ScalarTy::F32), e.site))
            .collect();
        let leaves: Vec<NodeRef> = {
            let g = Graph::new(&self.b, std::slice::from_ref(e), &lets);
            g.order
                .iter()
                .filter(|n| match &n.kind {
                    ExprKind::Bound(id) => {
                        self.lets.contains_key(id)
                            || matches!(self.b.value_defs.get(id), Some(ValueDef::Opaque { .. }))
                    }
                    ExprKind::Load(place) => self.is_leaf_place(place),
                    _ => false,
                })
                .cloned()
                .collect()
        };
        if leaves.is_empty() {
            return Ok(None);
        }
        let mut given: naga::FastHashMap<Key, NodeRef> = naga::FastHashMap::default();
        for leaf in &leaves {
            let t = match &leaf.kind {
                ExprKind::Bound(id) => self.lets.get(id).cloned(),
                ExprKind::Load(place) => self
                    .tangent_place(place)
                    .map(|p| node(ExprKind::Load(p.clone()), p.ty.clone(), leaf.site)),
                _ => None,
            };
            if let Some(t) = t {
                given.insert(key(leaf), t);
            }
        }
        let g = Graph::new(&self.b, std::slice::from_ref(e), &leaves);
        let mut bind_let = |n: &NodeRef, t: NodeRef| {
            let name = format!("t_{}", g.let_name(n).unwrap_or("value"));
            bind(out, &name, t, n.site)
        };
        super::forward::forward(&g, e, &given, &mut bind_let, self.absolute)
    }
}
