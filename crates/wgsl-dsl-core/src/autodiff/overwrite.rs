//! Stores into an output element that a later store of the same invocation overwrites: the
//! value stored first never reaches the output, so its adjoint is zero (last store wins).
//!
//! Each store of the symbolic program is paired with every later store into the same output
//! (in program order, loops unrolled, through `if`s):
//! - indices provably different ([`Relation::Distinct`]): no interaction;
//! - the same index, and the later store runs whenever the earlier one does (it is in the
//!   same block or an enclosing one): the earlier store is **dead**, its seed is not read;
//! - otherwise (a later store under an `if`, or at an index known only at run time) the
//!   reverse pass records, where it reverses the later store, that it ran and at which index
//!   (`var`s `overwritten_<n>` and `overwritten_at_<n>`), and the earlier store's seed is
//!   `select(seed, 0, overwritten && at == index)`: a masked zero ([`super::masked`]).

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use super::element::{Relation, element, relation};
use super::error::NotDifferentiable;
use super::make::{At, Block, node};
use super::program::Item;
use crate::exp::{ExprKind, Lit, NodeRef, PlaceKind, PlaceNode, PlaceRef};
use crate::handle::ValueId;
use crate::kernel::stmt::{Stmt, VarInit};
use crate::site::CallSite;
use crate::types::{ScalarTy, Ty};

type Key = *const PlaceNode;

/// The `var`s of a later store the reverse pass sets where it reverses it.
#[derive(Debug, Clone, Copy)]
struct Flag {
    /// `true` once the store was reversed (it ran).
    ran: ValueId,
    /// Its index, as a `u32`, where some earlier store needs to compare it.
    at: Option<ValueId>,
}

/// The plan: dead stores, and for each other store the later ones that may overwrite it.
#[derive(Debug, Default)]
pub(crate) struct Overwrites {
    dead: HashSet<Key>,
    flags: HashMap<Key, (Flag, NodeRef, CallSite)>,
    /// For a store, its later stores that may overwrite it: (later store, same index).
    killers: HashMap<Key, Vec<(Key, bool)>>,
    /// Declarations of the flags, in program order.
    declarations: Vec<(Stmt, CallSite)>,
}

struct Store {
    key: Key,
    global: usize,
    index: NodeRef,
    /// The blocks (by number) that enclose it, outermost first.
    path: Vec<usize>,
    site: CallSite,
}

fn collect(items: &[Item], path: &mut Vec<usize>, next: &mut usize, out: &mut Vec<Store>) {
    for item in items {
        match item {
            Item::Output { seed, site, .. } => {
                if let Some((global, index)) = element(seed) {
                    out.push(Store {
                        key: Rc::as_ptr(seed),
                        global,
                        index,
                        path: path.clone(),
                        site: *site,
                    });
                }
            }
            Item::If {
                then, otherwise, ..
            } => {
                for block in [then, otherwise] {
                    *next += 1;
                    path.push(*next);
                    collect(block, path, next, out);
                    path.pop();
                }
            }
            // A run-time loop's body may run no time: its stores are conditional, as an `if`'s.
            Item::Loop(l) => {
                *next += 1;
                path.push(*next);
                collect(&l.body, path, next, out);
                path.pop();
            }
            // Workgroup memory holds no output.
            Item::Let { .. } | Item::Shared(_) => {}
        }
    }
}

fn u32_ty() -> Ty {
    Ty::Scalar(ScalarTy::U32)
}

fn as_u32(i: &NodeRef, site: CallSite) -> NodeRef {
    if i.ty == u32_ty() {
        return i.clone();
    }
    node(
        ExprKind::As {
            value: i.clone(),
            kind: naga::ScalarKind::Uint,
            convert: None,
        },
        u32_ty(),
        site,
    )
}

fn local(id: ValueId, ty: Ty, site: CallSite) -> PlaceRef {
    Rc::new(PlaceNode {
        kind: PlaceKind::Local(id),
        ty,
        site,
    })
}

impl Overwrites {
    /// The plan for the stores of `items`. Every output store is of an element `d_y[i]`
    /// (outputs are `array<f32>`); any other is refused rather than guessed.
    pub(crate) fn plan(items: &[Item]) -> Result<Self, NotDifferentiable> {
        refuse_other_places(items)?;
        let mut stores = Vec::new();
        collect(items, &mut Vec::new(), &mut 0, &mut stores);
        let mut plan = Overwrites::default();
        // Dead: overwritten at the same index by a later store that runs whenever it does.
        for (k, earlier) in stores.iter().enumerate() {
            if stores[k + 1..].iter().any(|later| {
                later.global == earlier.global
                    && earlier.path.starts_with(&later.path)
                    && relation(&earlier.index, &later.index) == Relation::Same
            }) {
                plan.dead.insert(earlier.key);
            }
        }
        for (k, earlier) in stores.iter().enumerate() {
            if plan.dead.contains(&earlier.key) {
                continue;
            }
            for later in &stores[k + 1..] {
                if later.global != earlier.global {
                    continue;
                }
                let rel = relation(&earlier.index, &later.index);
                if rel == Relation::Distinct {
                    continue;
                }
                let same = rel == Relation::Same;
                let entry = plan.flags.entry(later.key).or_insert_with(|| {
                    (
                        Flag {
                            ran: ValueId::fresh(),
                            at: None,
                        },
                        later.index.clone(),
                        later.site,
                    )
                });
                if !same && entry.0.at.is_none() {
                    entry.0.at = Some(ValueId::fresh());
                }
                plan.killers
                    .entry(earlier.key)
                    .or_default()
                    .push((later.key, same));
            }
        }
        let flagged: Vec<&Store> = stores
            .iter()
            .filter(|s| plan.flags.contains_key(&s.key))
            .collect();
        let mut declarations = Vec::new();
        for (n, s) in flagged.iter().enumerate() {
            let (flag, _, site) = plan.flags[&s.key];
            declarations.push((
                Stmt::Var {
                    id: flag.ran,
                    name: format!("overwritten_{n}"),
                    ty: Ty::Scalar(ScalarTy::Bool),
                    init: VarInit::Value(node(
                        ExprKind::Literal(Lit::Bool(false)),
                        Ty::Scalar(ScalarTy::Bool),
                        site,
                    )),
                },
                site,
            ));
            if let Some(at) = flag.at {
                declarations.push((
                    Stmt::Var {
                        id: at,
                        name: format!("overwritten_at_{n}"),
                        ty: u32_ty(),
                        init: VarInit::Zero,
                    },
                    site,
                ));
            }
        }
        plan.declarations = declarations;
        Ok(plan)
    }

    /// The `var`s the reverse pass sets, to declare before it.
    pub(crate) fn declare(&mut self, out: &mut Block) {
        out.append(&mut self.declarations);
    }

    /// Where the reverse pass reaches the store whose seed place is `seed` (its incoming
    /// gradient `gradient`): records that it ran (statements into `out`), and returns the
    /// seed to propagate and whether it may be a masked zero; `None` for a dead store.
    pub(crate) fn seed(
        &self,
        seed: &PlaceRef,
        gradient: NodeRef,
        site: CallSite,
        out: &mut Block,
    ) -> Option<(NodeRef, bool)> {
        let key = Rc::as_ptr(seed);
        let bool_ty = Ty::Scalar(ScalarTy::Bool);
        if let Some((flag, index, s)) = self.flags.get(&key) {
            out.push((
                Stmt::Store {
                    place: local(flag.ran, bool_ty.clone(), *s),
                    value: node(ExprKind::Literal(Lit::Bool(true)), bool_ty.clone(), *s),
                },
                *s,
            ));
            if let Some(at) = flag.at {
                out.push((
                    Stmt::Store {
                        place: local(at, u32_ty(), *s),
                        value: as_u32(index, *s),
                    },
                    *s,
                ));
            }
        }
        if self.dead.contains(&key) {
            return None;
        }
        let Some(killers) = self.killers.get(&key) else {
            return Some((gradient, false));
        };
        let at = At(site);
        let index = element(seed).map(|(_, i)| i);
        let mut killed: Option<NodeRef> = None;
        for (later, same) in killers {
            let (flag, _, _) = &self.flags[later];
            let ran = node(
                ExprKind::Load(local(flag.ran, bool_ty.clone(), site)),
                bool_ty.clone(),
                site,
            );
            let this = match (same, flag.at, &index) {
                (false, Some(v), Some(i)) => {
                    let at_later = node(ExprKind::Load(local(v, u32_ty(), site)), u32_ty(), site);
                    at.and(
                        &ran,
                        &at.cmp(naga::BinaryOperator::Equal, &at_later, &as_u32(i, site)),
                    )
                }
                _ => ran,
            };
            killed = Some(match killed {
                None => this,
                Some(k) => node(
                    ExprKind::Binary(naga::BinaryOperator::InclusiveOr, k, this),
                    bool_ty.clone(),
                    site,
                ),
            });
        }
        let killed = killed.expect("a store with killers has one");
        let zero = at.float(&gradient.ty, 0.0);
        Some((at.select(&killed, &zero, &gradient), true))
    }
}

/// Output stores are of elements `d_y[i]`; anything else would escape the plan.
fn refuse_other_places(items: &[Item]) -> Result<(), NotDifferentiable> {
    for item in items {
        match item {
            Item::Output { seed, site, .. } if element(seed).is_none() => {
                return Err(NotDifferentiable {
                    operation: "a store into an output".into(),
                    reason: "kernel AD follows stores of whole elements `y[i]` of an \
                             `array<f32>` output only"
                        .into(),
                    site: *site,
                });
            }
            Item::If {
                then, otherwise, ..
            } => {
                refuse_other_places(then)?;
                refuse_other_places(otherwise)?;
            }
            _ => {}
        }
    }
    Ok(())
}
