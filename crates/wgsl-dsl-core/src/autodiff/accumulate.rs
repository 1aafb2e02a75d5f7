//! How a derived kernel adds an adjoint into a gradient buffer without races
//! ([`Accumulation`]):
//!
//! - **Exclusive**: `d_x[i] = d_x[i] + a`, a plain read-modify-write. Chosen where it is
//!   proven that no two invocations of the grid read one element of `x`: every read of `x` is
//!   at the index of an element of one output that the reading invocation stores (and the
//!   forward kernel stores each element from one invocation at most), see
//!   [`super::exclusive`].
//! - **Atomic**: a compare-exchange loop on the `f32`'s bits, the gradient buffer an
//!   `array<atomic<u32>>` (WGSL has no float atomics, §6.2.8):
//!   ```text
//!   var old = atomicLoad(&d_x[w]);
//!   loop {
//!       let r = atomicCompareExchangeWeak(&d_x[w], old, bitcast<u32>(bitcast<f32>(old) + a));
//!       if r.exchanged { break; }
//!       old = r.old_value;
//!   }
//!   ```
//!   Chosen otherwise (elements shared by invocations, such as weights read by every row).
//!   Atomics never race (WGSL spec §17.8), but the order of the additions, and so the
//!   rounding of the sum, varies from run to run.
//!
//! [`Derive::accumulate`](super::Derive::accumulate) overrides the choice per binding.

use std::collections::HashMap;
use std::rc::Rc;

use super::error::NotDifferentiable;

use super::make::{At, Block, bind, node};
use crate::exp::{ExprKind, NodeRef, PlaceKind, PlaceNode, PlaceRef};
use crate::handle::GlobalHandle;
use crate::kernel::stmt::Stmt;
use crate::site::CallSite;
use crate::types::{ScalarTy, Ty};

/// How a derived kernel's gradient buffer receives adjoints: exclusive read-modify-writes, or
/// an atomic compare-exchange loop (WGSL has no float atomics, spec §6.2.8). The derived gradient is added to what the buffer holds, so several
/// kernels' (or dispatches') gradients accumulate; zero it for a fresh gradient.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Accumulation {
    /// `d_x[i] = d_x[i] + a`: every invocation adds only to its own elements (derived where
    /// every read of `x` is at an element of one output that the reading invocation stores).
    Exclusive,
    /// A compare-exchange loop on the bits of `f32`s, into an `array<atomic<u32>>`.
    Atomic,
    /// The kernel writes each element of the gradient once, replacing what was there (a
    /// custom derivative's choice; derived kernels add).
    Write,
}

impl std::fmt::Display for Accumulation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Accumulation::Exclusive => "exclusive: each invocation adds to its own elements",
            Accumulation::Atomic => {
                "atomic: a compare-exchange loop on the f32 bits (array<atomic<u32>>)"
            }
            Accumulation::Write => "written: each element once",
        })
    }
}

#[derive(Debug)]
struct InputGradient {
    grad: GlobalHandle,
    scheme: Accumulation,
}

/// The gradient buffers of a derived kernel, by the (derived kernel's) global of their input.
#[derive(Debug, Default)]
pub(crate) struct Gradients {
    inputs: HashMap<usize, InputGradient>,
}

/// The root global of a place.
fn root_global(place: &PlaceRef) -> Option<GlobalHandle> {
    match &place.kind {
        PlaceKind::Index(b, _) | PlaceKind::Field(b, _) => root_global(b),
        PlaceKind::Global(g) => Some(*g),
        PlaceKind::Local(_) => None,
    }
}

impl Gradients {
    pub(crate) fn add(&mut self, input: GlobalHandle, grad: GlobalHandle, scheme: Accumulation) {
        self.inputs
            .insert(input.index, InputGradient { grad, scheme });
    }

    pub(crate) fn is_input(&self, place: &PlaceRef) -> bool {
        root_global(place).is_some_and(|g| self.inputs.contains_key(&g.index))
    }

    /// `gradient(place) += adjoint` with the binding's scheme, statements into `out`.
    pub(crate) fn accumulate(
        &self,
        place: &PlaceRef,
        adjoint: NodeRef,
        site: CallSite,
        out: &mut Block,
    ) -> Result<(), NotDifferentiable> {
        let input = root_global(place)
            .and_then(|g| self.inputs.get(&g.index))
            .expect("accumulate is called for inputs");
        let a = bind(out, "g", adjoint, site);
        match input.scheme {
            Accumulation::Exclusive | Accumulation::Write => {
                let gp = reroot(place, input.grad);
                let at = At(site);
                out.push((
                    Stmt::Store {
                        place: gp.clone(),
                        value: at.add(&node(ExprKind::Load(gp.clone()), gp.ty.clone(), site), &a),
                    },
                    site,
                ));
                Ok(())
            }
            Accumulation::Atomic => {
                let PlaceKind::Index(base, element) = &place.kind else {
                    return Err(unsupported(site));
                };
                if !matches!(base.kind, PlaceKind::Global(_)) {
                    return Err(unsupported(site));
                }
                cas_add(input.grad, as_u32(element, site), a, site, out);
                Ok(())
            }
        }
    }
}

fn unsupported(site: CallSite) -> NotDifferentiable {
    NotDifferentiable {
        operation: "a read of a differentiable input".into(),
        reason: "atomic accumulation takes reads of `x[i]` only".into(),
        site,
    }
}

fn as_u32(i: &NodeRef, site: CallSite) -> NodeRef {
    if i.ty == Ty::Scalar(ScalarTy::U32) {
        return i.clone();
    }
    node(
        ExprKind::As {
            value: i.clone(),
            kind: naga::ScalarKind::Uint,
            convert: None,
        },
        Ty::Scalar(ScalarTy::U32),
        site,
    )
}

/// `place` with its root global replaced by `global` (same indices).
fn reroot(place: &PlaceRef, global: GlobalHandle) -> PlaceRef {
    let kind = match &place.kind {
        PlaceKind::Index(b, i) => PlaceKind::Index(reroot(b, global), i.clone()),
        PlaceKind::Field(b, f) => PlaceKind::Field(reroot(b, global), *f),
        PlaceKind::Global(_) => PlaceKind::Global(global),
        PlaceKind::Local(v) => PlaceKind::Local(*v),
    };
    Rc::new(PlaceNode {
        kind,
        ty: place.ty.clone(),
        site: place.site,
    })
}

/// The compare-exchange loop adding the `f32` `value` to word `word` of `grad` (the one
/// `atomic_add_f32` lowers to).
fn cas_add(grad: GlobalHandle, word: NodeRef, value: NodeRef, site: CallSite, out: &mut Block) {
    let word = bind(out, "word", word, site);
    let global = Rc::new(PlaceNode {
        kind: PlaceKind::Global(grad),
        ty: Ty::Array {
            elem: Box::new(Ty::Atomic(ScalarTy::U32)),
            len: None,
        },
        site,
    });
    let cell = Rc::new(PlaceNode {
        kind: PlaceKind::Index(global, word),
        ty: Ty::Atomic(ScalarTy::U32),
        site,
    });
    out.extend(crate::kernel::collective::atomic_add_f32_loop(
        cell, value, site,
    ));
}
