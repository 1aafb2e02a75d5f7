//! Kernel AD of loops whose trip count is known only at run time (a uniform, a buffer's
//! length, a `while` condition), bounded by the author ([`KernelBuilder::max_iterations`],
//! Slang's `[MaxIters]`).
//!
//! **Tape per loop level, recomputation across levels.** The forward pass runs the loop as
//! the primal does, its loop-carried values (the `var`s its body stores into) in `var`s, and
//! records each iteration's carried values at its start on a *tape*: a private
//! `array<T, max_iterations>` per carried value (private memory per invocation; on a GPU it
//! lives in the invocation's scratch memory). The reverse pass runs the iterations backwards:
//! it restores iteration `j`'s carried values from the tape, recomputes the body's values
//! from them (the body's `let`s are not kept), and takes the adjoints of the values carried
//! out of iteration `j` into the body, which gives those carried into it. So each iteration
//! costs one forward and one recomputed forward plus its reverse, and memory is
//! `max_iterations` values per carried value, not per value the body computes. A loop
//! nested in a loop body is recomputed (with its tape refilled) in each iteration of the
//! outer loop's reverse pass. Recomputing the whole loop from its start for each iteration
//! instead (no tape) would cost `O(n^2)` per invocation; a tape of every body value would
//! cost memory per `let`.
//!
//! **The bound.** A loop that reaches iteration `max_iterations` in the backward kernel
//! does not write past its tape: the invocation raises the iteration-limit flag
//! ([`Role::IterationLimit`]: `atomicMax` of the loop's number into the flag's word) and
//! returns, adding no gradient. Whoever runs the pass reads the flag; the gradient checker
//! returns [`IterationLimitExceeded`] as an error. Never a truncated gradient without a flag.
//!
//! **Shape.** The loop's first statement is its exit test, `if c { break; }` (what
//! `for_range`, `for_step`, a forward `for_in` and `while_` build); no other `break`, no
//! `return` inside, `continue` only where nothing follows it.
//!
//! [`KernelBuilder::max_iterations`]: crate::KernelBuilder::max_iterations
//! [`Role::IterationLimit`]: super::Role::IterationLimit

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::rc::Rc;

use super::accumulate::Gradients;
use super::backward::{Emit, forward, has_output, reaches};
use super::error::NotDifferentiable;
use super::make::{At, Block, bind, float_scalar, load, local, node, u32_lit, u32_ty};
use super::program::{Carried, Item, Loop};
use crate::exp::{ExprKind, NodeRef, PlaceKind, PlaceNode, PlaceRef};
use crate::handle::{GlobalHandle, ValueId};
use crate::kernel::stmt::{AtomicOp, Stmt, VarInit};
use crate::site::CallSite;
use crate::types::{ScalarTy, Ty};

/// A loop of a backward kernel bounded by its author: what its flag value means.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BoundedLoop {
    /// The loop's Rust call site (in the forward kernel's code).
    pub site: CallSite,
    /// The bound stated with `max_iterations`.
    pub max_iterations: u32,
}

/// A loop of a backward pass ran past the bound its author stated: the gradients of that
/// dispatch are wrong (the invocations that ran past it added none).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IterationLimitExceeded {
    /// The backward kernel.
    pub kernel: String,
    /// The loop (the highest-numbered one that ran past its bound, if several did).
    pub site: CallSite,
    /// Its bound.
    pub max_iterations: u32,
}

impl fmt::Display for IterationLimitExceeded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: the loop ran more than its max_iterations({}) in the backward kernel `{}`; its \
             gradients are not computed (raise the bound)",
            self.site, self.max_iterations, self.kernel
        )
    }
}

impl std::error::Error for IterationLimitExceeded {}

/// Numbers the run-time loops of `items` (program order) and gives them the flag; their
/// sites and bounds, in number order.
pub(crate) fn number_loops(items: &mut [Item], flag: Option<GlobalHandle>) -> Vec<BoundedLoop> {
    let mut out = Vec::new();
    walk_loops(items, &mut |l| {
        out.push(BoundedLoop {
            site: l.site,
            max_iterations: l.max_iterations,
        });
        l.number = out.len() as u32;
        l.flag = flag;
    });
    out
}

fn walk_loops(items: &mut [Item], f: &mut dyn FnMut(&mut Loop)) {
    for item in items {
        match item {
            Item::Loop(l) => {
                f(l);
                walk_loops(&mut l.body, f);
            }
            Item::If {
                then, otherwise, ..
            } => {
                walk_loops(then, f);
                walk_loops(otherwise, f);
            }
            _ => {}
        }
    }
}

fn tape_ty(c: &Carried, n: u32) -> Ty {
    Ty::Array {
        elem: Box::new(c.ty.clone()),
        len: Some(n),
    }
}

/// Element `j` of a carried value's tape.
fn tape_at(c: &Carried, n: u32, j: &NodeRef, site: CallSite) -> PlaceRef {
    Rc::new(PlaceNode {
        kind: PlaceKind::Index(local(c.tape, &tape_ty(c, n), site), j.clone()),
        ty: c.ty.clone(),
        site,
    })
}

fn if_break(condition: NodeRef, site: CallSite) -> (Stmt, CallSite) {
    (
        Stmt::If {
            condition,
            accept: vec![(Stmt::Break, site)],
            reject: Vec::new(),
        },
        site,
    )
}

impl Loop {
    /// The forward pass of a run-time loop: the loop, its carried values in `var`s, recorded
    /// on their tapes; after it, the carried values' exits and the iteration count as `let`s.
    pub(crate) fn forward(&self, out: &mut Block) {
        let site = self.site;
        let n = self.max_iterations;
        for c in &self.carried {
            out.push((
                Stmt::Var {
                    id: c.var,
                    name: c.name.clone(),
                    ty: c.ty.clone(),
                    init: VarInit::Value(c.init.clone()),
                },
                site,
            ));
            out.push((
                Stmt::Var {
                    id: c.tape,
                    name: format!("{}_tape", c.name),
                    ty: tape_ty(c, n),
                    init: VarInit::Declared,
                },
                site,
            ));
        }
        let counter = local(self.counter, &u32_ty(), site);
        out.push((
            Stmt::Var {
                id: self.counter,
                name: "iterations".into(),
                ty: u32_ty(),
                init: VarInit::Value(u32_lit(0, site)),
            },
            site,
        ));
        let mut body: Block = Vec::new();
        for c in &self.carried {
            body.push((
                Stmt::Let {
                    id: c.phi,
                    name: c.name.clone(),
                    value: load(&local(c.var, &c.ty, site), site),
                },
                site,
            ));
        }
        body.push(if_break(self.exit.clone(), site));
        let count = bind(&mut body, "iteration", load(&counter, site), site);
        // Past the bound: raise the flag, add no gradient.
        let mut over: Block = Vec::new();
        if let Some(flag) = self.flag {
            let global = Rc::new(PlaceNode {
                kind: PlaceKind::Global(flag),
                ty: Ty::Array {
                    elem: Box::new(Ty::Atomic(ScalarTy::U32)),
                    len: None,
                },
                site,
            });
            over.push((
                Stmt::Atomic {
                    result: ValueId::fresh(),
                    place: Rc::new(PlaceNode {
                        kind: PlaceKind::Index(global, u32_lit(0, site)),
                        ty: Ty::Atomic(ScalarTy::U32),
                        site,
                    }),
                    fun: AtomicOp::Max,
                    value: u32_lit(self.number, site),
                    compare: None,
                },
                site,
            ));
        }
        over.push((Stmt::Return(None), site));
        body.push((
            Stmt::If {
                condition: At(site).cmp(
                    naga::BinaryOperator::GreaterEqual,
                    &count,
                    &u32_lit(n, site),
                ),
                accept: over,
                reject: Vec::new(),
            },
            site,
        ));
        for c in &self.carried {
            body.push((
                Stmt::Store {
                    place: tape_at(c, n, &count, site),
                    value: node(ExprKind::Bound(c.phi), c.ty.clone(), site),
                },
                site,
            ));
        }
        body.extend(forward(&self.body));
        for c in &self.carried {
            body.push((
                Stmt::Store {
                    place: local(c.var, &c.ty, site),
                    value: c.next.clone(),
                },
                site,
            ));
        }
        body.push((
            Stmt::Store {
                place: counter.clone(),
                value: At(site).add(&count, &u32_lit(1, site)),
            },
            site,
        ));
        out.push((
            Stmt::Loop {
                body,
                continuing: Vec::new(),
                bound: None,
            },
            site,
        ));
        for c in &self.carried {
            out.push((
                Stmt::Let {
                    id: c.exit,
                    name: c.name.clone(),
                    value: load(&local(c.var, &c.ty, site), site),
                },
                site,
            ));
        }
        out.push((
            Stmt::Let {
                id: self.count,
                name: "iterations".into(),
                value: load(&counter, site),
            },
            site,
        ));
    }

    /// The active values of a run-time loop: its body's, and the carried values an active
    /// value reaches through any number of iterations (a fixed point).
    pub(crate) fn active(&self, gradients: &Gradients, out: &mut HashSet<ValueId>) {
        loop {
            let before = out.len();
            for c in &self.carried {
                if float_scalar(&c.ty).is_some()
                    && (reaches(&c.init, gradients, out) || reaches(&c.next, gradients, out))
                {
                    out.insert(c.phi);
                }
            }
            super::backward::active(&self.body, gradients, out);
            if out.len() == before {
                break;
            }
        }
        for c in &self.carried {
            if out.contains(&c.phi) {
                out.insert(c.exit);
            }
        }
    }

    /// Names of a loop's values, for the adjoints' names and program order.
    pub(crate) fn names(&self, out: &mut HashMap<ValueId, (String, usize)>) {
        for c in &self.carried {
            let n = out.len();
            out.insert(c.phi, (c.name.clone(), n));
        }
        super::backward::names(&self.body, out);
        for c in &self.carried {
            let n = out.len();
            out.insert(c.exit, (c.name.clone(), n));
        }
    }
}

type Pending = HashMap<ValueId, Vec<NodeRef>>;

impl Emit<'_> {
    /// The reverse pass of a run-time loop: its iterations backwards, each restoring its
    /// carried values from the tapes, recomputing its body, taking the adjoints of the
    /// values carried out into the body and out of it into those carried in.
    pub(crate) fn reverse_loop(
        &self,
        l: &Loop,
        pending: &mut Pending,
        out: &mut Block,
    ) -> Result<(), NotDifferentiable> {
        let site = l.site;
        let at = At(site);
        let active: Vec<&Carried> = l
            .carried
            .iter()
            .filter(|c| self.active.contains(&c.phi))
            .collect();
        let mut exits = Vec::new();
        for c in &active {
            let adjoint = pending.remove(&c.exit).and_then(|t| at.sum(t));
            exits.push(adjoint);
        }
        if exits.iter().all(Option::is_none) && !has_output(&l.body) {
            return Ok(());
        }
        // The carried values' adjoints, from those of their exits.
        let mut adj = Vec::new();
        for (c, exit) in active.iter().zip(exits) {
            let var = ValueId::fresh();
            out.push((
                Stmt::Var {
                    id: var,
                    name: format!("adj_{}", c.name),
                    ty: c.ty.clone(),
                    init: exit.map_or(VarInit::Zero, VarInit::Value),
                },
                site,
            ));
            adj.push(local(var, &c.ty, site));
        }
        let j_var = ValueId::fresh();
        let j_place = local(j_var, &u32_ty(), site);
        out.push((
            Stmt::Var {
                id: j_var,
                name: "iteration".into(),
                ty: u32_ty(),
                init: VarInit::Value(node(ExprKind::Bound(l.count), u32_ty(), site)),
            },
            site,
        ));
        let mut block: Block = Vec::new();
        block.push(if_break(
            at.cmp(
                naga::BinaryOperator::Equal,
                &load(&j_place, site),
                &u32_lit(0, site),
            ),
            site,
        ));
        let j = bind(
            &mut block,
            "iteration",
            at.sub(&load(&j_place, site), &u32_lit(1, site)),
            site,
        );
        block.push((
            Stmt::Store {
                place: j_place.clone(),
                value: j.clone(),
            },
            site,
        ));
        for c in &l.carried {
            block.push((
                Stmt::Let {
                    id: c.phi,
                    name: c.name.clone(),
                    value: load(&tape_at(c, l.max_iterations, &j, site), site),
                },
                site,
            ));
        }
        block.extend(forward(&l.body));
        let seeds: Vec<NodeRef> = adj
            .iter()
            .map(|p| bind(&mut block, "seed", load(p, site), site))
            .collect();
        let mut inner = Pending::new();
        for (c, s) in active.iter().zip(seeds) {
            self.propagate(&c.next, s, false, &mut inner, &mut block)?;
        }
        self.reverse(&l.body, &mut inner, &mut block)?;
        let carried_in: Vec<NodeRef> = active
            .iter()
            .map(|c| {
                let sum = inner.remove(&c.phi).and_then(|t| at.sum(t));
                match sum {
                    Some(s) => bind(&mut block, &format!("d_{}", c.name), s, site),
                    None => at.zero(&c.ty),
                }
            })
            .collect();
        for (p, v) in adj.iter().zip(carried_in) {
            block.push((
                Stmt::Store {
                    place: p.clone(),
                    value: v,
                },
                site,
            ));
        }
        // Adjoints of values defined before the loop, summed over its iterations.
        let mut left: Vec<(ValueId, Vec<NodeRef>)> = inner.into_iter().collect();
        left.sort_by_key(|(id, _)| self.order_of(*id));
        for (id, terms) in left {
            let Some(sum) = at.sum(terms) else { continue };
            let ty = sum.ty.clone();
            let var = ValueId::fresh();
            out.push((
                Stmt::Var {
                    id: var,
                    name: format!(
                        "adj_{}",
                        self.names.get(&id).map_or("value", |(n, _)| n.as_str())
                    ),
                    ty: ty.clone(),
                    init: VarInit::Zero,
                },
                site,
            ));
            let place = local(var, &ty, site);
            block.push((
                Stmt::Store {
                    place: place.clone(),
                    value: at.add(&load(&place, site), &sum),
                },
                site,
            ));
            pending.entry(id).or_default().push(load(&place, site));
        }
        out.push((
            Stmt::Loop {
                body: block,
                continuing: Vec::new(),
                bound: None,
            },
            site,
        ));
        // Into the values before the loop.
        for (c, p) in active.iter().zip(&adj) {
            let a = bind(out, &format!("d_{}", c.name), load(p, site), site);
            self.propagate(&c.init, a, false, pending, out)?;
        }
        Ok(())
    }
}

/// Drop the run-time loops that contribute nothing to a gradient: no output store or
/// workgroup operation in their body, and no value they leave (a carried value after the loop)
/// read by anything else in the program. Such a loop (the loss's loop that stores the
/// `no_diff` probabilities, whose stores the derived kernel does not repeat) would only be run,
/// taped and flagged for nothing; a loop past its bound that is dropped loses no gradient.
/// Repeated until none is left (dropping one may leave another's values unread).
pub(crate) fn drop_dead_loops(items: &mut Vec<Item>) {
    loop {
        let mut dead: Option<*const Loop> = None;
        find_dead(items, items, &mut dead);
        let Some(dead) = dead else {
            return;
        };
        remove_loop(items, dead);
    }
}

/// The first dead loop of `block` (nested blocks included), judged against the whole
/// program `all`.
fn find_dead(all: &[Item], block: &[Item], dead: &mut Option<*const Loop>) {
    for item in block {
        if dead.is_some() {
            return;
        }
        match item {
            Item::Loop(l) => {
                let leaves: HashSet<ValueId> = l.carried.iter().map(|c| c.exit).collect();
                let read_elsewhere = leaves
                    .iter()
                    .any(|id| reads_value(all, *id, &**l as *const Loop));
                if !has_output(&l.body) && !super::program::has_shared(&l.body) && !read_elsewhere {
                    *dead = Some(&**l as *const Loop);
                    return;
                }
                find_dead(all, &l.body, dead);
            }
            Item::If {
                then, otherwise, ..
            } => {
                find_dead(all, then, dead);
                find_dead(all, otherwise, dead);
            }
            _ => {}
        }
    }
}

/// True if a node of `items`, outside the loop `skip`, reads the value `id`.
fn reads_value(items: &[Item], id: ValueId, skip: *const Loop) -> bool {
    let reads = |n: &NodeRef| {
        super::subst::any_node(n, |m| matches!(m.kind, ExprKind::Bound(b) if b == id))
    };
    items.iter().any(|item| match item {
        Item::Let { value, .. } => reads(value),
        Item::Output { seed, value, .. } => {
            let mut v = vec![value.clone()];
            crate::exp::place_indices(seed, &mut v);
            v.iter().any(reads)
        }
        Item::If {
            condition,
            then,
            otherwise,
            merges,
            ..
        } => {
            reads(condition)
                || merges
                    .iter()
                    .any(|m| reads(&m.then_value) || reads(&m.else_value))
                || reads_value(then, id, skip)
                || reads_value(otherwise, id, skip)
        }
        Item::Loop(l) if std::ptr::eq(&**l, skip) => false,
        Item::Loop(l) => l.roots().iter().any(reads) || reads_value(&l.body, id, skip),
        Item::Shared(s) => s.roots().iter().any(reads),
    })
}

fn remove_loop(block: &mut Vec<Item>, dead: *const Loop) -> bool {
    if let Some(i) = block
        .iter()
        .position(|item| matches!(item, Item::Loop(l) if std::ptr::eq(&**l, dead)))
    {
        block.remove(i);
        return true;
    }
    block.iter_mut().any(|item| match item {
        Item::Loop(l) => remove_loop(&mut l.body, dead),
        Item::If {
            then, otherwise, ..
        } => remove_loop(then, dead) || remove_loop(otherwise, dead),
        _ => false,
    })
}
