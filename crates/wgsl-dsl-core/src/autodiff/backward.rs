//! Kernel AD, step two: the derived kernel's body from the symbolic program ([`Item`]s).
//!
//! The body is the forward pass (the primal's values recomputed: its `let`s, and a `var` per
//! merge of an `if`; no stores into outputs) followed by the reverse pass: the items in
//! reverse order, each output store becoming the read of its incoming gradient (the *seed*),
//! each `let`'s summed adjoint passed into its value once (expression reverse mode,
//! [`super::reverse`]), each load of a differentiable input an accumulation into its gradient
//! buffer ([`super::accumulate`]).
//!
//! An `if` of the primal is an `if` of the reverse pass on the same condition (a `let` of the
//! forward pass): each branch first recomputes its own values (they are not in scope after
//! the forward pass's `if`: recomputation, as Slang's `[PreferRecompute]`), then takes the
//! adjoints of the merges into its values, then reverses its items. Adjoints it makes for
//! values defined before the `if` are summed into `var`s declared before it (`adj_<name>`)
//! and read after it. Nested `if`s recompute their branches once per level.

use std::collections::HashMap;
use std::rc::Rc;

use super::accumulate::Gradients;
use super::error::NotDifferentiable;
use super::graph::{Graph, key};
use super::make::{At, Block, bind, load, local};
use super::program::{Item, Merge, Shared};
use crate::exp::{ExprKind, NodeRef};
use crate::handle::ValueId;
use crate::kernel::KernelBuilder;
use crate::kernel::stmt::{Stmt, VarInit};
use crate::site::CallSite;

/// Adjoint contributions to values (`let`s and merges), not yet summed.
type Pending = HashMap<ValueId, Vec<NodeRef>>;

pub(crate) struct Emit<'a> {
    /// The derived kernel (its value definitions; statements are pushed by the caller).
    pub b: &'a KernelBuilder,
    pub gradients: &'a Gradients,
    /// Names of the values, for the adjoints' names, and their order in the program.
    pub names: HashMap<ValueId, (String, usize)>,
    /// The values a differentiable input reaches ([`active`]): the reverse pass's variables.
    pub active: std::collections::HashSet<ValueId>,
    /// The values whose adjoints may be masked zeros ([`super::masked`]).
    pub masked: std::cell::RefCell<std::collections::HashSet<ValueId>>,
    /// Which output stores are overwritten later ([`super::overwrite`]).
    pub overwrites: super::overwrite::Overwrites,
}

/// True if `n` reads (not through values) an active value or a differentiable input.
pub(crate) fn reaches(
    n: &NodeRef,
    gradients: &Gradients,
    active: &std::collections::HashSet<ValueId>,
) -> bool {
    super::subst::any_node(n, |n| match &n.kind {
        ExprKind::Bound(id) => active.contains(id),
        ExprKind::Load(place) => gradients.is_input(place),
        _ => false,
    })
}

/// The values of `items` that depend on a load of a differentiable input (through other
/// values): only their adjoints are computed.
pub(crate) fn active(
    items: &[Item],
    gradients: &Gradients,
    out: &mut std::collections::HashSet<ValueId>,
) {
    for item in items {
        match item {
            Item::Let { id, value, .. } => {
                if reaches(value, gradients, out) {
                    out.insert(*id);
                }
            }
            Item::If {
                then,
                otherwise,
                merges,
                ..
            } => {
                active(then, gradients, out);
                active(otherwise, gradients, out);
                for m in merges {
                    if reaches(&m.then_value, gradients, out)
                        || reaches(&m.else_value, gradients, out)
                    {
                        out.insert(m.id);
                    }
                }
            }
            Item::Output { .. } => {}
            Item::Loop(l) => l.active(gradients, out),
            Item::Shared(s) => {
                if let Shared::Load {
                    id,
                    adjoint: Some(_),
                    ..
                } = &**s
                {
                    out.insert(*id);
                }
            }
        }
    }
}

/// Items' names and program order, for the adjoints of their values.
pub(crate) fn names(items: &[Item], out: &mut HashMap<ValueId, (String, usize)>) {
    for item in items {
        match item {
            Item::Let { id, name, .. } => {
                let n = out.len();
                out.insert(*id, (name.clone(), n));
            }
            Item::If {
                then,
                otherwise,
                merges,
                ..
            } => {
                names(then, out);
                names(otherwise, out);
                for m in merges {
                    let n = out.len();
                    out.insert(m.id, (m.name.clone(), n));
                }
            }
            Item::Output { .. } => {}
            Item::Loop(l) => l.names(out),
            Item::Shared(s) => {
                if let Shared::Load { id, name, .. } = &**s {
                    let n = out.len();
                    out.insert(*id, (name.clone(), n));
                }
            }
        }
    }
}

pub(crate) fn has_output(items: &[Item]) -> bool {
    items.iter().any(|i| match i {
        Item::Output { .. } => true,
        Item::If {
            then, otherwise, ..
        } => has_output(then) || has_output(otherwise),
        Item::Let { .. } => false,
        Item::Loop(l) => has_output(&l.body),
        Item::Shared(s) => matches!(
            &**s,
            Shared::Store {
                adjoint: Some(_),
                ..
            }
        ),
    })
}

/// The forward pass of `items`: their values, without the stores into outputs (a
/// recomputation: workgroup loads read their saved values, see [`super::shared`]).
pub(crate) fn forward(items: &[Item]) -> Block {
    forward_in(items, false)
}

/// The derived kernel's first forward pass: [`forward`], and the primal's workgroup stores
/// and barriers, its workgroup loads saved.
pub(crate) fn forward_primal(items: &[Item]) -> Block {
    forward_in(items, true)
}

fn forward_in(items: &[Item], primal: bool) -> Block {
    let mut out = Vec::new();
    for item in items {
        match item {
            Item::Let {
                id,
                name,
                value,
                site,
            } => out.push((
                Stmt::Let {
                    id: *id,
                    name: name.clone(),
                    value: value.clone(),
                },
                *site,
            )),
            Item::Output { .. } => {}
            Item::Loop(l) => l.forward(&mut out),
            Item::Shared(s) => s.forward(primal, &mut out),
            // The forward pass has no effects: an `if` that leaves no value after it is
            // recomputed where the reverse pass needs its values, not here (unless it holds
            // the primal's workgroup operations).
            Item::If {
                merges,
                then,
                otherwise,
                ..
            } if merges.is_empty()
                && !(primal
                    && (super::program::has_shared(then)
                        || super::program::has_shared(otherwise))) => {}
            Item::If {
                condition,
                then,
                otherwise,
                merges,
                site,
            } => {
                for m in merges {
                    out.push((
                        Stmt::Var {
                            id: m.var,
                            name: m.name.clone(),
                            ty: m.ty.clone(),
                            init: VarInit::Declared,
                        },
                        *site,
                    ));
                }
                let arm = |items: &[Item], value: fn(&Merge) -> &NodeRef| {
                    let mut block = forward_in(items, primal);
                    for m in merges {
                        block.push((
                            Stmt::Store {
                                place: local(m.var, &m.ty, *site),
                                value: value(m).clone(),
                            },
                            *site,
                        ));
                    }
                    block
                };
                out.push((
                    Stmt::If {
                        condition: condition.clone(),
                        accept: arm(then, |m| &m.then_value),
                        reject: arm(otherwise, |m| &m.else_value),
                    },
                    *site,
                ));
                for m in merges {
                    out.push((
                        Stmt::Let {
                            id: m.id,
                            name: m.name.clone(),
                            value: load(&local(m.var, &m.ty, *site), *site),
                        },
                        *site,
                    ));
                }
            }
        }
    }
    out
}

impl Emit<'_> {
    /// The reverse pass of `items` into `out`, with `pending` the adjoint contributions
    /// made so far (by the items after these); those left are for values defined before.
    pub(crate) fn reverse(
        &self,
        items: &[Item],
        pending: &mut Pending,
        out: &mut Block,
    ) -> Result<(), NotDifferentiable> {
        for item in items.iter().rev() {
            match item {
                Item::Output {
                    seed, value, site, ..
                } => {
                    // Last store wins: the seed of a store overwritten later is zero.
                    let Some((s, masked)) =
                        self.overwrites.seed(seed, load(seed, *site), *site, out)
                    else {
                        continue;
                    };
                    let s = bind(out, "seed", s, *site);
                    self.propagate(value, s, masked, pending, out)?;
                }
                Item::Let {
                    id,
                    name,
                    value,
                    site,
                } => {
                    if let Some(terms) = pending.remove(id)
                        && let Some(adjoint) = At(*site).sum(terms)
                    {
                        let a = bind(out, &format!("d_{name}"), adjoint, *site);
                        let masked = self.masked.borrow().contains(id);
                        self.propagate(value, a, masked, pending, out)?;
                    }
                }
                Item::If {
                    condition,
                    then,
                    otherwise,
                    merges,
                    site,
                } => self.reverse_if(condition, then, otherwise, merges, *site, pending, out)?,
                Item::Loop(l) => self.reverse_loop(l, pending, out)?,
                Item::Shared(s) => self.reverse_shared(s, pending, out)?,
            }
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn reverse_if(
        &self,
        condition: &NodeRef,
        then: &[Item],
        otherwise: &[Item],
        merges: &[Merge],
        site: CallSite,
        pending: &mut Pending,
        out: &mut Block,
    ) -> Result<(), NotDifferentiable> {
        let mut then_seeds = Vec::new();
        let mut else_seeds = Vec::new();
        for m in merges {
            if let Some(terms) = pending.remove(&m.id)
                && let Some(adjoint) = At(site).sum(terms)
            {
                let a = bind(out, &format!("d_{}", m.name), adjoint, site);
                let masked = self.masked.borrow().contains(&m.id);
                then_seeds.push((m.then_value.clone(), a.clone(), masked));
                else_seeds.push((m.else_value.clone(), a, masked));
            }
        }
        if then_seeds.is_empty() && !has_output(then) && !has_output(otherwise) {
            return Ok(());
        }
        let (mut accept, then_outer) = self.branch(then, &then_seeds)?;
        let (mut reject, else_outer) = self.branch(otherwise, &else_seeds)?;
        // Adjoints of values defined before the `if`, in the order first met.
        let mut outer: Vec<ValueId> = then_outer.iter().map(|(id, _)| *id).collect();
        for (id, _) in &else_outer {
            if !outer.contains(id) {
                outer.push(*id);
            }
        }
        for id in outer {
            let terms: Vec<&NodeRef> = then_outer
                .iter()
                .chain(&else_outer)
                .filter(|(i, _)| *i == id)
                .flat_map(|(_, t)| t)
                .collect();
            let ty = terms[0].ty.clone();
            let var = ValueId::fresh();
            let name = format!(
                "adj_{}",
                self.names.get(&id).map_or("value", |(n, _)| n.as_str())
            );
            out.push((
                Stmt::Var {
                    id: var,
                    name,
                    ty: ty.clone(),
                    init: VarInit::Zero,
                },
                site,
            ));
            let place = local(var, &ty, site);
            for (side, block) in [(&then_outer, &mut accept), (&else_outer, &mut reject)] {
                let terms: Vec<NodeRef> = side
                    .iter()
                    .filter(|(i, _)| *i == id)
                    .flat_map(|(_, t)| t.iter().cloned())
                    .collect();
                if let Some(sum) = At(site).sum(terms) {
                    block.push((
                        Stmt::Store {
                            place: place.clone(),
                            value: At(site).add(&load(&place, site), &sum),
                        },
                        site,
                    ));
                }
            }
            pending.entry(id).or_default().push(load(&place, site));
        }
        out.push((
            Stmt::If {
                condition: condition.clone(),
                accept,
                reject,
            },
            site,
        ));
        Ok(())
    }

    /// A branch of the reverse pass: its values recomputed, the merges' adjoints taken into
    /// them (`seeds`), its items reversed. Returns the block and the adjoints left for
    /// values defined before the branch.
    #[allow(clippy::type_complexity)]
    fn branch(
        &self,
        items: &[Item],
        seeds: &[(NodeRef, NodeRef, bool)],
    ) -> Result<(Block, Vec<(ValueId, Vec<NodeRef>)>), NotDifferentiable> {
        let mut block = forward(items);
        let mut pending = Pending::new();
        for (value, adjoint, masked) in seeds {
            self.propagate(value, adjoint.clone(), *masked, &mut pending, &mut block)?;
        }
        self.reverse(items, &mut pending, &mut block)?;
        let mut left: Vec<(ValueId, Vec<NodeRef>)> = pending.into_iter().collect();
        left.sort_by_key(|(id, _)| self.order_of(*id));
        Ok((block, left))
    }

    /// The program order of a value (deterministic, unlike its id).
    pub(crate) fn order_of(&self, id: ValueId) -> usize {
        self.names.get(&id).map_or(usize::MAX, |(_, n)| *n)
    }

    /// Reverse mode through `root` (one expression of the symbolic program) with `seed`:
    /// adjoints of the values it uses go to `pending`, those of the loads of differentiable
    /// inputs into their gradients (statements into `out`). `masked`: `seed` may be a masked
    /// zero ([`super::masked`]).
    pub(crate) fn propagate(
        &self,
        root: &NodeRef,
        seed: NodeRef,
        masked: bool,
        pending: &mut Pending,
        out: &mut Block,
    ) -> Result<(), NotDifferentiable> {
        let leaves = self.leaves(root);
        let g = Graph::new(self.b, std::slice::from_ref(root), &leaves);
        let mut bind_shared =
            |n: &NodeRef, a: NodeRef| bind(out, &super::graph::adjoint_name(&g, n), a, n.site);
        let (adjoints, masked_keys) =
            super::reverse::reverse_masked(&g, &[(root.clone(), seed, masked)], &mut bind_shared)?;
        for leaf in &leaves {
            let Some(adjoint) = adjoints.get(&key(leaf)) else {
                continue;
            };
            match &leaf.kind {
                ExprKind::Bound(id) => {
                    if masked_keys.contains(&key(leaf)) {
                        self.masked.borrow_mut().insert(*id);
                    }
                    pending.entry(*id).or_default().push(adjoint.clone())
                }
                ExprKind::Load(place) => {
                    self.gradients
                        .accumulate(place, adjoint.clone(), leaf.site, out)?;
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// The values (`Bound` nodes) and loads of differentiable inputs `root` reads: the
    /// variables of one expression of the reverse pass. Not through values.
    fn leaves(&self, root: &NodeRef) -> Vec<NodeRef> {
        let mut out = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let mut stack = vec![root.clone()];
        while let Some(n) = stack.pop() {
            if !seen.insert(Rc::as_ptr(&n)) {
                continue;
            }
            match &n.kind {
                ExprKind::Bound(id) if self.active.contains(id) => out.push(n.clone()),
                // A value no differentiable input reaches: a constant (its definition is
                // not looked into either).
                ExprKind::Bound(_) => {}
                ExprKind::Load(place) if self.gradients.is_input(place) => out.push(n.clone()),
                _ => stack.extend(crate::exp::operands(&n)),
            }
        }
        out
    }
}
