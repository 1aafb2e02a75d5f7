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
//!
//! A store inside loops of a run-time trip count ([`super::loops`]) runs once per iteration:
//! - at an index that no enclosing loop changes (`y[i]` in a loop over `j`), each iteration
//!   overwrites the one before: the store is its own later store, and so is every store before
//!   it in a loop they share (it runs again in the next iteration), so only the last store that
//!   ran keeps its seed (the reverse pass meets it first);
//! - at an index that one loop's counter moves by a nonzero step (`y[base + j]`), every
//!   iteration stores another element: no overwriting among them, and any other store into
//!   the output must be at a provably different element;
//! - anything else (an index that may repeat across iterations, nested loops that both move
//!   it) is refused at the store's line rather than guessed.

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use super::element::{Relation, element, relation};
use super::error::NotDifferentiable;
use super::make::{At, Block, as_u32, load, local, node, u32_ty};
use super::program::{Item, Loop};
use crate::exp::{ExprKind, Lit, NodeRef, PlaceNode, PlaceRef};
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

struct Store<'i> {
    key: Key,
    global: usize,
    index: NodeRef,
    /// The blocks (by number) that enclose it, outermost first.
    path: Vec<usize>,
    /// The run-time loops that enclose it, outermost first.
    loops: Vec<&'i Loop>,
    site: CallSite,
}

fn collect<'i>(
    items: &'i [Item],
    path: &mut Vec<usize>,
    loops: &mut Vec<&'i Loop>,
    next: &mut usize,
    out: &mut Vec<Store<'i>>,
) {
    for item in items {
        match item {
            // Additions (`atomic_add_f32`) neither overwrite nor are overwritten.
            Item::Output { adds: true, .. } => {}
            Item::Output { seed, site, .. } => {
                if let Some((global, index)) = element(seed) {
                    out.push(Store {
                        key: Rc::as_ptr(seed),
                        global,
                        index,
                        path: path.clone(),
                        loops: loops.clone(),
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
                    collect(block, path, loops, next, out);
                    path.pop();
                }
            }
            // A run-time loop's body may run no time: its stores are conditional, as an `if`'s.
            Item::Loop(l) => {
                *next += 1;
                path.push(*next);
                loops.push(l);
                collect(&l.body, path, loops, next, out);
                loops.pop();
                path.pop();
            }
            // Workgroup memory holds no output.
            Item::Let { .. } | Item::Shared(_) => {}
        }
    }
}

impl Overwrites {
    /// The plan for the stores of `items`. Every output store is of an element `d_y[i]`
    /// (outputs are `array<f32>`); any other is refused rather than guessed.
    pub(crate) fn plan(items: &[Item]) -> Result<Self, NotDifferentiable> {
        refuse_other_places(items)?;
        let mut stores = Vec::new();
        collect(items, &mut Vec::new(), &mut Vec::new(), &mut 0, &mut stores);
        let mut plan = Overwrites::default();
        // Stores in run-time loops: their own later stores, or one element per iteration.
        for (n, s) in stores.iter().enumerate() {
            let Some(varies) = in_loops(s)? else {
                continue;
            };
            if varies {
                for other in &stores {
                    if other.key != s.key
                        && other.global == s.global
                        && relation(&s.index, &other.index) != Relation::Distinct
                    {
                        return Err(refuse_in_loop(
                            s.site,
                            "another store into the same output may be at the same element",
                        ));
                    }
                }
            } else {
                plan.flags.entry(s.key).or_insert_with(|| {
                    (
                        Flag {
                            ran: ValueId::fresh(),
                            at: None,
                        },
                        s.index.clone(),
                        s.site,
                    )
                });
                plan.killers.entry(s.key).or_default().push((s.key, true));
                // The stores before it in a loop they share run again in later iterations:
                // they may overwrite it too (those after it are paired below, as anywhere).
                for earlier in &stores[..n] {
                    let shared = earlier
                        .loops
                        .iter()
                        .any(|l| s.loops.iter().any(|m| std::ptr::eq(*l, *m)));
                    let rel = relation(&s.index, &earlier.index);
                    if !shared || earlier.global != s.global || rel == Relation::Distinct {
                        continue;
                    }
                    let entry = plan.flags.entry(earlier.key).or_insert_with(|| {
                        (
                            Flag {
                                ran: ValueId::fresh(),
                                at: None,
                            },
                            earlier.index.clone(),
                            earlier.site,
                        )
                    });
                    let same = rel == Relation::Same;
                    if !same && entry.0.at.is_none() {
                        entry.0.at = Some(ValueId::fresh());
                    }
                    plan.killers
                        .entry(s.key)
                        .or_default()
                        .push((earlier.key, same));
                }
            }
        }
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
        let flagged: Vec<&Store<'_>> = stores
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
        // A store in a run-time loop is its own later store: its mask reads the flag as the
        // later iterations left it, so it sets the flag after the mask is taken.
        let own = self
            .killers
            .get(&key)
            .is_some_and(|k| k.iter().any(|(later, _)| *later == key));
        let mut flag_stores = Vec::new();
        if let Some((flag, index, s)) = self.flags.get(&key) {
            flag_stores.push((
                Stmt::Store {
                    place: local(flag.ran, &bool_ty, *s),
                    value: node(ExprKind::Literal(Lit::Bool(true)), bool_ty.clone(), *s),
                },
                *s,
            ));
            if let Some(at) = flag.at {
                flag_stores.push((
                    Stmt::Store {
                        place: local(at, &u32_ty(), *s),
                        value: as_u32(index, *s),
                    },
                    *s,
                ));
            }
        }
        if !own {
            out.append(&mut flag_stores);
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
            let ran = load(&local(flag.ran, &bool_ty, site), site);
            let this = match (same, flag.at, &index) {
                (false, Some(v), Some(i)) => {
                    let at_later = load(&local(v, &u32_ty(), site), site);
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
        let seed = at.select(&killed, &zero, &gradient);
        if own {
            let seed = super::make::bind(out, "seed", seed, site);
            out.extend(flag_stores);
            return Some((seed, true));
        }
        Some((seed, true))
    }
}

/// For a store in run-time loops: `None` outside them; whether an enclosing loop moves its
/// index (`Some(true)`: then one loop's counter moves it by a nonzero step, each iteration
/// another element) or none does (`Some(false)`: each iteration overwrites the last).
fn in_loops(s: &Store<'_>) -> Result<Option<bool>, NotDifferentiable> {
    let Some(&innermost) = s.loops.last() else {
        return Ok(None);
    };
    let moved: Vec<(&Loop, HashSet<ValueId>)> = s
        .loops
        .iter()
        .map(|&l| (l, defined_in(l)))
        .filter(|(_, defined)| depends(&s.index, defined))
        .collect();
    match moved.as_slice() {
        [] => Ok(Some(false)),
        [(l, defined)] if std::ptr::eq(*l, innermost) && steps(&s.index, l, defined) => {
            Ok(Some(true))
        }
        _ => Err(refuse_in_loop(
            s.site,
            "its index may repeat across the loop's iterations (kernel AD derives stores in a \
             run-time loop at an index the loop does not change, or at `base + counter`, \
             `base + counter * k` with `k` odd, in the innermost loop)",
        )),
    }
}

fn refuse_in_loop(site: CallSite, reason: &str) -> NotDifferentiable {
    NotDifferentiable {
        operation: "a store into an output inside a loop of a run-time trip count".into(),
        reason: format!("{reason}; which store wins is not known when the kernel is derived"),
        site,
    }
}

/// The values the loop `l` defines: its carried values' (at the start of an iteration and
/// after the loop) and every value of its body, nested loops' included.
fn defined_in(l: &Loop) -> HashSet<ValueId> {
    fn items(body: &[Item], out: &mut HashSet<ValueId>) {
        for item in body {
            match item {
                Item::Let { id, .. } => {
                    out.insert(*id);
                }
                Item::If {
                    then,
                    otherwise,
                    merges,
                    ..
                } => {
                    items(then, out);
                    items(otherwise, out);
                    out.extend(merges.iter().map(|m| m.id));
                }
                Item::Loop(l) => {
                    out.extend(defined_in(l));
                }
                Item::Shared(s) => {
                    if let super::program::Shared::Load { id, .. } = &**s {
                        out.insert(*id);
                    }
                }
                Item::Output { .. } => {}
            }
        }
    }
    let mut out: HashSet<ValueId> = l.carried.iter().flat_map(|c| [c.phi, c.exit]).collect();
    out.insert(l.count);
    items(&l.body, &mut out);
    out
}

/// True if `n` reads a value of `defined`.
fn depends(n: &NodeRef, defined: &HashSet<ValueId>) -> bool {
    super::subst::any_node(
        n,
        |n| matches!(&n.kind, ExprKind::Bound(id) if defined.contains(id)),
    )
}

/// True if `index` is a loop-invariant base plus the loop's counter times an odd constant
/// (`c`, `base + c`, `c + base`, `base + c * k`): each iteration a different element (the
/// counter moves by a nonzero literal step each iteration; odd `k` keeps `c * k` distinct
/// modulo `2^32`).
fn steps(index: &NodeRef, l: &Loop, defined: &HashSet<ValueId>) -> bool {
    let counter = |n: &NodeRef| match &n.kind {
        ExprKind::Bound(id) => l.carried.iter().any(|c| c.phi == *id && moves(l, c, *id)),
        _ => false,
    };
    let odd = |n: &NodeRef| {
        matches!(&n.kind, ExprKind::Literal(Lit::U32(k)) if k % 2 == 1)
            || matches!(&n.kind, ExprKind::Literal(Lit::I32(k)) if k % 2 != 0)
    };
    let scaled = |n: &NodeRef| {
        counter(n)
            || matches!(&n.kind, ExprKind::Binary(naga::BinaryOperator::Multiply, a, b)
                if (counter(a) && odd(b)) || (odd(a) && counter(b)))
    };
    match &index.kind {
        ExprKind::Binary(naga::BinaryOperator::Add, a, b) => {
            (scaled(a) && !depends(b, defined)) || (scaled(b) && !depends(a, defined))
        }
        _ => scaled(index),
    }
}

/// True if the carried value `c` (at `phi`) is a counter: its next value is `phi + k` or
/// `phi - k` for a nonzero literal `k`.
fn moves(l: &Loop, c: &super::program::Carried, phi: ValueId) -> bool {
    let is_phi = |n: &NodeRef| matches!(&n.kind, ExprKind::Bound(id) if *id == phi);
    let nonzero = |n: &NodeRef| {
        matches!(&n.kind, ExprKind::Literal(Lit::U32(k)) if *k != 0)
            || matches!(&n.kind, ExprKind::Literal(Lit::I32(k)) if *k != 0)
    };
    // The next value is usually a `let` of the body (the continuing block's store).
    let mut next = c.next.clone();
    while let ExprKind::Bound(id) = &next.kind {
        let Some(value) = l.body.iter().find_map(|i| match i {
            Item::Let { id: d, value, .. } if d == id => Some(value.clone()),
            _ => None,
        }) else {
            break;
        };
        next = value;
    }
    match &next.kind {
        ExprKind::Binary(naga::BinaryOperator::Add, a, b) => {
            (is_phi(a) && nonzero(b)) || (nonzero(a) && is_phi(b))
        }
        ExprKind::Binary(naga::BinaryOperator::Subtract, a, b) => is_phi(a) && nonzero(b),
        _ => false,
    }
}

/// Output stores are of elements `d_y[i]`; anything else would escape the plan.
fn refuse_other_places(items: &[Item]) -> Result<(), NotDifferentiable> {
    for item in items {
        match item {
            Item::Output {
                seed,
                site,
                adds: false,
                ..
            } if element(seed).is_none() => {
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
            Item::Loop(l) => refuse_other_places(&l.body)?,
            _ => {}
        }
    }
    Ok(())
}
