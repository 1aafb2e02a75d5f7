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
//! - **Atomic, reduced in the workgroup**: where every invocation of a workgroup adds to the
//!   same element (a read at an index known when the kernel is built: `b[0]`, `w[3]` of an
//!   unrolled loop, a scalar parameter), each invocation sums its additions to that element
//!   in a private `var`, and at the end of the kernel the workgroup adds those up in
//!   workgroup memory (a tree, `log2` of the workgroup's size barriers) and one invocation
//!   adds the workgroup's sum with the compare-exchange loop: one atomic per workgroup and
//!   element instead of one per invocation and read. Done for up to [`MAX_REDUCED`] elements
//!   per kernel (the rest as above), in kernels without `return` or bounded run-time loops
//!   (whose invocations return past the bound; the reduction's barriers need every
//!   invocation to reach the end) and with more than one invocation per
//!   workgroup, as long as the partial sums fit in WebGPU's default 16 KiB of workgroup
//!   memory beside the kernel's own.
//!
//! [`Derive::accumulate`](super::Derive::accumulate) overrides the choice per binding.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use super::error::NotDifferentiable;

use super::make::{At, Block, as_u32, bind, load, local, node, u32_lit, u32_ty};
use crate::consteval::ConstValue;
use crate::exp::{BuiltinValue, ExprKind, NodeRef, PlaceKind, PlaceNode, PlaceRef};
use crate::handle::{GlobalHandle, ValueId};
use crate::kernel::stmt::{Stmt, VarInit};
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

/// The most gradient elements a derived kernel reduces in workgroup memory (each a private
/// `var` and a reduction at the end of the kernel); further ones use the compare-exchange
/// loop at their read.
pub const MAX_REDUCED: usize = 64;

/// WebGPU's default `maxComputeWorkgroupStorageSize`: the workgroup memory the reductions may
/// bring a derived kernel to.
const WORKGROUP_BYTES: u32 = 16384;

/// An element of an atomic gradient every invocation of a workgroup adds to, summed in a
/// private `var` and reduced at the end of the kernel.
#[derive(Debug)]
struct Reduced {
    grad: GlobalHandle,
    word: u32,
    var: ValueId,
    site: CallSite,
}

/// How the derived kernel may reduce atomic additions at constant elements
/// ([`Gradients::reduce_in_workgroups`]).
#[derive(Debug, Clone, Copy)]
struct Reduction {
    /// Invocations per workgroup.
    invocations: u32,
    /// Elements reduced per round (the partial sums' array holds `per_round * invocations`).
    per_round: u32,
}

/// The gradient buffers of a derived kernel, by the (derived kernel's) global of their input.
#[derive(Debug, Default)]
pub(crate) struct Gradients {
    inputs: HashMap<usize, InputGradient>,
    reduction: Option<Reduction>,
    reduced: RefCell<Vec<Reduced>>,
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

    /// Reduce atomic additions at constant elements in workgroup memory (module docs) in a
    /// kernel of `workgroup_size` that declares `workgroup_bytes` of workgroup memory, unless
    /// some invocation may not reach its end (`returns`: a `return`, a bounded loop); nothing
    /// where that cannot be done.
    pub(crate) fn reduce_in_workgroups(
        &mut self,
        workgroup_size: [u32; 3],
        workgroup_bytes: Option<u32>,
        returns: bool,
    ) {
        let invocations = workgroup_size.iter().product::<u32>();
        let Some(used) = workgroup_bytes else { return };
        if returns || invocations < 2 {
            return;
        }
        let per_round = (WORKGROUP_BYTES.saturating_sub(used) / (4 * invocations)).min(8);
        if per_round > 0 {
            self.reduction = Some(Reduction {
                invocations,
                per_round,
            });
        }
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
                let word = as_u32(element, site);
                if let Some(var) = self.reduced_var(input.grad, &word, site) {
                    let sum = local(var, &f32_ty(), site);
                    let value = At(site).add(&load(&sum, site), &a);
                    out.push((Stmt::Store { place: sum, value }, site));
                    return Ok(());
                }
                cas_add(input.grad, word, a, site, out);
                Ok(())
            }
        }
    }
}

impl Gradients {
    /// The private sum of the additions to element `word` of `grad`, when they are reduced in
    /// the workgroup: `word` a constant, the kernel allowing it, fewer than [`MAX_REDUCED`]
    /// elements so far.
    fn reduced_var(&self, grad: GlobalHandle, word: &NodeRef, site: CallSite) -> Option<ValueId> {
        self.reduction?;
        let Ok(Some(ConstValue::U32(w))) = crate::consteval::eval_tree(word) else {
            return None;
        };
        let mut reduced = self.reduced.borrow_mut();
        if let Some(r) = reduced.iter().find(|r| r.grad == grad && r.word == w) {
            return Some(r.var);
        }
        if reduced.len() >= MAX_REDUCED {
            return None;
        }
        let var = ValueId::fresh();
        reduced.push(Reduced {
            grad,
            word: w,
            var,
            site,
        });
        Some(var)
    }

    /// The elements of `grad` whose additions are reduced in the workgroup.
    pub(crate) fn reduced_elements(&self, grad: GlobalHandle) -> Vec<u32> {
        self.reduced
            .borrow()
            .iter()
            .filter(|r| r.grad == grad)
            .map(|r| r.word)
            .collect()
    }

    /// The private sums' declarations (zero), to put before the reverse pass.
    pub(crate) fn declare_reduced(&self, out: &mut Block) {
        for (n, r) in self.reduced.borrow().iter().enumerate() {
            out.push((
                Stmt::Var {
                    id: r.var,
                    name: format!("d_sum_{n}"),
                    ty: f32_ty(),
                    init: VarInit::Zero,
                },
                r.site,
            ));
        }
    }

    /// The end of the kernel: the private sums reduced in workgroup memory, `per_round`
    /// elements a round, each workgroup's sum added by invocation 0 with the compare-exchange
    /// loop. Declares the partial sums' array in `b`.
    pub(crate) fn reduce_at_end(&self, b: &mut crate::KernelBuilder, out: &mut Block) {
        let reduced = self.reduced.borrow();
        let (Some(red), Some(first)) = (self.reduction, reduced.first()) else {
            return;
        };
        let site = first.site;
        let at = At(site);
        let n = red.invocations;
        let rounds: Vec<&[Reduced]> = reduced.chunks(red.per_round as usize).collect();
        let width = rounds.iter().map(|r| r.len()).max().unwrap_or(1) as u32;
        let partial = super::make::declare_array(b, "d_partial", width * n, site);
        let lid = node(
            ExprKind::Builtin(BuiltinValue::LocalInvocationIndex),
            u32_ty(),
            site,
        );
        let cell = |slot: u32, offset: NodeRef| -> PlaceRef {
            let index = at.add(&u32_lit(slot * n, site), &offset);
            Rc::new(PlaceNode {
                kind: PlaceKind::Index(partial.clone(), index),
                ty: f32_ty(),
                site,
            })
        };
        let barrier = || (Stmt::Barrier(naga::Barrier::WORK_GROUP), site);
        let half = n.next_power_of_two() / 2;
        for round in rounds {
            for (slot, r) in round.iter().enumerate() {
                let value = load(&local(r.var, &f32_ty(), site), site);
                out.push((
                    Stmt::Store {
                        place: cell(slot as u32, lid.clone()),
                        value,
                    },
                    site,
                ));
            }
            out.push(barrier());
            // A tree over the next power of two: partial[i] += partial[i + stride] where
            // both are in the workgroup.
            let mut stride = half;
            while stride > 0 {
                let other = at.add(&lid, &u32_lit(stride, site));
                let lower = at.cmp(naga::BinaryOperator::Less, &lid, &u32_lit(stride, site));
                let inside = if n.is_power_of_two() {
                    lower
                } else {
                    at.and(
                        &lower,
                        &at.cmp(naga::BinaryOperator::Less, &other, &u32_lit(n, site)),
                    )
                };
                let mut accept = Vec::new();
                for slot in 0..round.len() as u32 {
                    let mine = cell(slot, lid.clone());
                    let sum = at.add(
                        &node(ExprKind::Load(mine.clone()), f32_ty(), site),
                        &node(ExprKind::Load(cell(slot, other.clone())), f32_ty(), site),
                    );
                    accept.push((
                        Stmt::Store {
                            place: mine,
                            value: sum,
                        },
                        site,
                    ));
                }
                out.push((
                    Stmt::If {
                        condition: inside,
                        accept,
                        reject: Vec::new(),
                    },
                    site,
                ));
                out.push(barrier());
                stride /= 2;
            }
            let mut accept = Vec::new();
            for (slot, r) in round.iter().enumerate() {
                let total = node(
                    ExprKind::Load(cell(slot as u32, u32_lit(0, site))),
                    f32_ty(),
                    site,
                );
                cas_add(r.grad, u32_lit(r.word, site), total, r.site, &mut accept);
            }
            out.push((
                Stmt::If {
                    condition: at.cmp(naga::BinaryOperator::Equal, &lid, &u32_lit(0, site)),
                    accept,
                    reject: Vec::new(),
                },
                site,
            ));
            // Every invocation is past the additions before the array is written again.
            out.push(barrier());
        }
    }
}

fn f32_ty() -> Ty {
    Ty::Scalar(ScalarTy::F32)
}

fn unsupported(site: CallSite) -> NotDifferentiable {
    NotDifferentiable {
        operation: "a read of a differentiable input".into(),
        reason: "atomic accumulation takes reads of `x[i]` only".into(),
        site,
    }
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
