//! Kernel AD of workgroup memory and barriers.
//!
//! - **Phases in reverse.** The derived kernel's forward pass runs the primal's workgroup
//!   stores and barriers as the primal does (into the primal's workgroup arrays, redeclared),
//!   so each load of workgroup memory reads what the primal read. The reverse pass runs the
//!   items backwards; a barrier's adjoint is a barrier at the same place, so the
//!   barrier-separated phases run in reverse order.
//! - **Adjoint arrays.** Each `f32` workgroup array `t` gets `d_t` in workgroup memory
//!   (`array<atomic<u32>, N>`, the `f32`'s bits; workgroup memory starts zeroed). The adjoint
//!   of a load `v = t[i]` is added into `d_t[i]` with the compare-exchange loop: several
//!   invocations read one element (a tile of a product, the other half of a reduction), so the
//!   accumulation is atomic, never exclusive. The adjoint of a store `t[i] = e` is
//!   `atomicExchange(&d_t[i], 0)`: what the loads after it (and before the next store to that
//!   element, whose own adjoint cleared it) summed, passed into `e`. The forward kernel is
//!   race-free (each phase stores an element or reads it, never both from two invocations),
//!   so between two barriers of the reverse pass the exchanges and the accumulations touch
//!   different elements or are atomic.
//! - **Kept, not recomputed.** Each value loaded from workgroup memory is a `let` of the
//!   forward pass, saved in a private `var` (declared at the top of the kernel): where the
//!   reverse pass recomputes a branch, it reads the saved value, since workgroup memory then
//!   holds later phases' values. Nothing else about workgroup memory is stored.
//! - **Where.** Barriers at the top level of the entry point (or of loops unrolled when the
//!   kernel is built), as uniformity requires anyway; workgroup loads and stores anywhere
//!   outside loops with run-time trip counts. Refused at their Rust line otherwise.

use std::rc::Rc;

use super::backward::Emit;
use super::error::NotDifferentiable;
use super::make::{At, Block, bind, declare_workgroup as declare, load, local, node, u32_ty};
use super::program::{Item, Shared, Workgroup};
use crate::exp::{ExprKind, Lit, NodeRef, PlaceKind, PlaceNode, PlaceRef};
use crate::handle::{GlobalHandle, ValueId};
use crate::kernel::stmt::{AtomicOp, Stmt, VarInit};
use crate::kernel::{GlobalKind, KernelBuilder};
use crate::site::CallSite;
use crate::types::{ScalarTy, Ty};

/// Bytes of workgroup memory the globals of `b` declare, if every type's size is known here
/// (scalars, vectors, atomics and arrays of them).
pub(crate) fn workgroup_bytes(b: &KernelBuilder) -> Option<u32> {
    fn size(ty: &Ty) -> Option<u32> {
        Some(match ty {
            Ty::Scalar(s) | Ty::Atomic(s) => match s {
                ScalarTy::F16 => 2,
                _ => 4,
            },
            Ty::Vector(n, s) => {
                let e = size(&Ty::Scalar(*s))?;
                e * if *n == 3 { 4 } else { u32::from(*n) }
            }
            Ty::Array { elem, len: Some(n) } => size(elem)?.checked_mul(*n)?,
            _ => return None,
        })
    }
    b.globals
        .iter()
        .filter(|g| matches!(g.kind, GlobalKind::Workgroup))
        .try_fold(0u32, |sum, g| sum.checked_add(size(&g.ty)?))
}

/// The primal's workgroup variable `name: ty` redeclared in `b`, with its adjoint array
/// `d_<name>` if it is an `array<f32, N>`.
pub(crate) fn redeclare(b: &mut KernelBuilder, name: &str, ty: &Ty, site: CallSite) -> Workgroup {
    let handle = declare(b, name, ty.clone(), site);
    let adjoint = match ty {
        Ty::Array { elem, len: Some(n) } if **elem == Ty::Scalar(ScalarTy::F32) => Some(declare(
            b,
            &format!("d_{name}"),
            Ty::Array {
                elem: Box::new(Ty::Atomic(ScalarTy::U32)),
                len: Some(*n),
            },
            site,
        )),
        _ => None,
    };
    Workgroup { handle, adjoint }
}

/// The element of the adjoint array `adjoint` at the index of `place` (`t[i]`).
fn adjoint_cell(place: &PlaceRef, adjoint: GlobalHandle, site: CallSite) -> Option<PlaceRef> {
    let PlaceKind::Index(base, index) = &place.kind else {
        return None;
    };
    let n = match &base.ty {
        Ty::Array { len, .. } => *len,
        _ => None,
    };
    let array = Rc::new(PlaceNode {
        kind: PlaceKind::Global(adjoint),
        ty: Ty::Array {
            elem: Box::new(Ty::Atomic(ScalarTy::U32)),
            len: n,
        },
        site,
    });
    Some(Rc::new(PlaceNode {
        kind: PlaceKind::Index(array, index.clone()),
        ty: Ty::Atomic(ScalarTy::U32),
        site,
    }))
}

fn bits_to_f32(v: NodeRef, site: CallSite) -> NodeRef {
    node(
        ExprKind::As {
            value: v,
            kind: naga::ScalarKind::Float,
            convert: None,
        },
        Ty::Scalar(ScalarTy::F32),
        site,
    )
}

/// `cell += value` (an `atomic<u32>` holding an `f32`'s bits): the compare-exchange loop
/// `atomic_add_f32` lowers to.
fn cas_add(cell: PlaceRef, value: NodeRef, site: CallSite, out: &mut Block) {
    out.extend(crate::kernel::collective::atomic_add_f32_loop(
        cell, value, site,
    ));
}

/// The saved `var`s of the workgroup loads of `items`, declared (at the top of the kernel).
pub(crate) fn declare_saved(items: &[Item], out: &mut Block) {
    for item in items {
        match item {
            Item::Shared(s) => {
                if let Shared::Load {
                    var,
                    name,
                    place,
                    site,
                    ..
                } = &**s
                {
                    out.push((
                        Stmt::Var {
                            id: *var,
                            name: format!("{name}_saved"),
                            ty: place.ty.clone(),
                            init: VarInit::Declared,
                        },
                        *site,
                    ));
                }
            }
            Item::If {
                then, otherwise, ..
            } => {
                declare_saved(then, out);
                declare_saved(otherwise, out);
            }
            _ => {}
        }
    }
}

/// Barriers under a run-time condition, workgroup operations in a run-time loop: the first
/// one's refusal.
pub(crate) fn check_placement(items: &[Item], depth: usize) -> Result<(), NotDifferentiable> {
    for item in items {
        match item {
            Item::Shared(s) => {
                if let Shared::Barrier { site, .. } = &**s
                    && depth > 0
                {
                    return Err(NotDifferentiable {
                        operation: "a barrier under a condition known only at run time".into(),
                        reason: "kernel AD derives barriers at the top level of the kernel (or of \
                                 loops unrolled when it is built), where every invocation of the \
                                 workgroup reaches them"
                            .into(),
                        site: *site,
                    });
                }
            }
            Item::If {
                then, otherwise, ..
            } => {
                check_placement(then, depth + 1)?;
                check_placement(otherwise, depth + 1)?;
            }
            Item::Loop(l) => {
                if let Some(site) = first_shared(&l.body) {
                    return Err(NotDifferentiable {
                        operation: "workgroup memory or a barrier in a loop whose trip count is \
                                    known only at run time"
                            .into(),
                        reason: "not derived yet; unroll the loop (a Rust constant bound) or give \
                                 the kernel a custom derivative (`Backward::custom`)"
                            .into(),
                        site,
                    });
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// A bounded loop in a kernel with barriers: refused (its invocations that run past the bound
/// return, and the barriers after would not be reached by the whole workgroup).
pub(crate) fn check_loops_and_barriers(items: &[Item]) -> Result<(), NotDifferentiable> {
    let barrier = items
        .iter()
        .any(|i| matches!(i, Item::Shared(s) if matches!(**s, Shared::Barrier { .. })));
    match first_loop(items) {
        Some(site) if barrier => Err(NotDifferentiable {
            operation: "a loop bounded by `max_iterations` in a kernel with barriers".into(),
            reason: "an invocation past the bound leaves the backward kernel early, before \
                     barriers the whole workgroup must reach; not derived yet"
                .into(),
            site,
        }),
        _ => Ok(()),
    }
}

fn first_loop(items: &[Item]) -> Option<CallSite> {
    items.iter().find_map(|i| match i {
        Item::Loop(l) => Some(l.site),
        Item::If {
            then, otherwise, ..
        } => first_loop(then).or_else(|| first_loop(otherwise)),
        _ => None,
    })
}

fn first_shared(items: &[Item]) -> Option<CallSite> {
    items.iter().find_map(|i| match i {
        Item::Shared(s) => Some(match &**s {
            Shared::Load { site, .. }
            | Shared::Store { site, .. }
            | Shared::Barrier { site, .. } => *site,
        }),
        Item::If {
            then, otherwise, ..
        } => first_shared(then).or_else(|| first_shared(otherwise)),
        Item::Loop(l) => first_shared(&l.body),
        _ => None,
    })
}

impl Shared {
    /// The forward pass of a workgroup operation. `primal`: the pass that runs the primal's
    /// phases (stores, barriers, loads saved); otherwise a recomputation (loads read the saved
    /// values, nothing else is done).
    pub(crate) fn forward(&self, primal: bool, out: &mut Block) {
        match self {
            Shared::Load {
                id,
                var,
                name,
                place,
                site,
                ..
            } => {
                let saved = local(*var, &place.ty, *site);
                if primal {
                    out.push((
                        Stmt::Let {
                            id: *id,
                            name: name.clone(),
                            value: load(place, *site),
                        },
                        *site,
                    ));
                    out.push((
                        Stmt::Store {
                            place: saved,
                            value: node(ExprKind::Bound(*id), place.ty.clone(), *site),
                        },
                        *site,
                    ));
                } else {
                    out.push((
                        Stmt::Let {
                            id: *id,
                            name: name.clone(),
                            value: load(&saved, *site),
                        },
                        *site,
                    ));
                }
            }
            Shared::Store {
                place, value, site, ..
            } if primal => out.push((
                Stmt::Store {
                    place: place.clone(),
                    value: value.clone(),
                },
                *site,
            )),
            Shared::Barrier { barrier, site } if primal => {
                out.push((Stmt::Barrier(*barrier), *site))
            }
            _ => {}
        }
    }
}

impl Emit<'_> {
    /// The reverse pass of a workgroup operation.
    pub(crate) fn reverse_shared(
        &self,
        s: &Shared,
        pending: &mut std::collections::HashMap<ValueId, Vec<NodeRef>>,
        out: &mut Block,
    ) -> Result<(), NotDifferentiable> {
        match s {
            Shared::Barrier { barrier, site } => out.push((Stmt::Barrier(*barrier), *site)),
            Shared::Load {
                id,
                place,
                adjoint: Some(adjoint),
                site,
                ..
            } => {
                if let Some(a) = pending.remove(id).and_then(|t| At(*site).sum(t))
                    && let Some(cell) = adjoint_cell(place, *adjoint, *site)
                {
                    let a = bind(out, "g", a, *site);
                    cas_add(cell, a, *site, out);
                }
            }
            Shared::Store {
                place,
                value,
                adjoint: Some(adjoint),
                site,
            } => {
                let Some(cell) = adjoint_cell(place, *adjoint, *site) else {
                    return Ok(());
                };
                let result = ValueId::fresh();
                out.push((
                    Stmt::Atomic {
                        result,
                        place: cell,
                        fun: AtomicOp::Exchange,
                        value: node(ExprKind::Literal(Lit::U32(0)), u32_ty(), *site),
                        compare: None,
                    },
                    *site,
                ));
                let a = bind(
                    out,
                    "seed",
                    bits_to_f32(node(ExprKind::Bound(result), u32_ty(), *site), *site),
                    *site,
                );
                self.propagate(value, a, false, pending, out)?;
            }
            _ => {}
        }
        Ok(())
    }
}
