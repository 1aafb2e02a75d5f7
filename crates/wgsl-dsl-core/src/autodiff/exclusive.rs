//! Which inputs' gradients a derived kernel may add to without atomics: a proof from the map
//! of every invocation of the grid to the elements it reads.
//!
//! The backward kernel adds the adjoint of each read `x[e]` into `d_x[e]`. Plain
//! read-modify-writes are race-free only if no two invocations of the grid (all three
//! dimensions of `global_invocation_id`, every workgroup) read one element of `x`. Nothing
//! about the grid is known when the kernel is derived (the dispatch size is not), but one fact
//! is: the forward kernel is race-free, so **each element of an output is stored by one
//! invocation at most** (the rule every kernel derived must follow). Hence:
//!
//! `x` is **exclusive** if there is one output `y` such that every read `x[e]` happens in an
//! invocation that also stores `y[e]`, at the same index value `e` (the same expression of the
//! invocation's values), whenever it makes the read (the store is in the read's block or one
//! enclosing it, or in both branches of an `if` there). Two invocations reading `x[e]` would
//! then both store `y[e]`: a race of the forward kernel. This covers elementwise kernels
//! (`y[i] = f(x[i])`, on grids of any dimension) and rows owned by one invocation
//! (`y[r n + j] = g(x[r n + j], ..)` in an unrolled loop over `j`).
//!
//! Anything else is **atomic**; the reason names the first read that is not proven exclusive
//! (e.g. `x[c]` in `out[r * n + c] = x[c] * s[r]` on a 2-D grid: every row reads `x[c]`).
//! `global_invocation_id().x` alone proves nothing: a grid with more than one invocation in
//! `y` or `z` gives several invocations one `x`.

use std::collections::HashSet;
use std::rc::Rc;

use super::element::{Relation, element, relation};
use super::program::Item;
use crate::exp::{ExprKind, NodeRef, PlaceKind, PlaceRef};
use crate::site::CallSite;

/// A read of the input, and the output elements its invocation stores whenever it makes it.
struct Read {
    index: Option<NodeRef>,
    site: CallSite,
    stored: Rc<Vec<(usize, NodeRef)>>,
}

/// Why the gradient of an input may be exclusive, or not.
pub(crate) enum Proof {
    /// Every read is at an element of this output (the derived kernel's global index of its
    /// incoming gradient) that the reading invocation stores.
    Owned { output: usize, reads: usize },
    /// The input is not read.
    Unread,
    /// This read (its Rust line) is not proven to be made by one invocation only.
    Shared(CallSite),
}

/// The proof for the input at the derived kernel's global `input`.
pub(crate) fn prove(items: &[Item], input: usize) -> Proof {
    let mut reads = Vec::new();
    walk(items, &Rc::new(Vec::new()), input, &mut reads);
    if reads.is_empty() {
        return Proof::Unread;
    }
    let mut candidates: Option<HashSet<usize>> = None;
    for r in &reads {
        let here: HashSet<usize> = match &r.index {
            Some(e) => r
                .stored
                .iter()
                .filter(|(_, i)| relation(i, e) == Relation::Same)
                .map(|(g, _)| *g)
                .collect(),
            None => HashSet::new(),
        };
        let next: HashSet<usize> = match candidates {
            None => here,
            Some(c) => c.intersection(&here).copied().collect(),
        };
        if next.is_empty() {
            return Proof::Shared(r.site);
        }
        candidates = Some(next);
    }
    let output = candidates
        .and_then(|c| c.into_iter().min())
        .expect("a non-empty set");
    Proof::Owned {
        output,
        reads: reads.len(),
    }
}

/// The output elements every run of `items` stores: its own stores, and those of both
/// branches of its `if`s.
fn must_store(items: &[Item]) -> Vec<(usize, NodeRef)> {
    let mut out = Vec::new();
    for item in items {
        match item {
            // An addition proves no ownership: several invocations may add into one element.
            Item::Output { adds: true, .. } => {}
            Item::Output { seed, .. } => out.extend(element(seed)),
            Item::If {
                then, otherwise, ..
            } => {
                let t = must_store(then);
                let e = must_store(otherwise);
                out.extend(t.into_iter().filter(|(g, i)| {
                    e.iter()
                        .any(|(h, j)| g == h && relation(i, j) == Relation::Same)
                }));
            }
            // A run-time loop's body may run no time; workgroup memory holds no output.
            Item::Let { .. } | Item::Loop(_) | Item::Shared(_) => {}
        }
    }
    out
}

fn with(outer: &Rc<Vec<(usize, NodeRef)>>, items: &[Item]) -> Rc<Vec<(usize, NodeRef)>> {
    let mine = must_store(items);
    if mine.is_empty() {
        return outer.clone();
    }
    let mut all = (**outer).clone();
    all.extend(mine);
    Rc::new(all)
}

fn walk(items: &[Item], outer: &Rc<Vec<(usize, NodeRef)>>, input: usize, out: &mut Vec<Read>) {
    let here = with(outer, items);
    for item in items {
        match item {
            Item::Let { value, .. } => visit(value, &here, input, out),
            Item::Output { seed, value, .. } => {
                visit(value, &here, input, out);
                let mut idx = Vec::new();
                crate::exp::place_indices(seed, &mut idx);
                for i in &idx {
                    visit(i, &here, input, out);
                }
            }
            Item::If {
                condition,
                then,
                otherwise,
                merges,
                ..
            } => {
                visit(condition, &here, input, out);
                walk(then, &here, input, out);
                walk(otherwise, &here, input, out);
                let (t, e) = (with(&here, then), with(&here, otherwise));
                for m in merges {
                    visit(&m.then_value, &t, input, out);
                    visit(&m.else_value, &e, input, out);
                }
            }
            // A read in an iteration is proven exclusive by the stores that iteration must
            // make (or those around the loop); the loop's own values by those around it.
            Item::Loop(l) => {
                for n in l.roots() {
                    visit(&n, &here, input, out);
                }
                walk(&l.body, &here, input, out);
            }
            Item::Shared(sh) => {
                for n in sh.roots() {
                    visit(&n, &here, input, out);
                }
            }
        }
    }
}

fn root(place: &PlaceRef) -> Option<usize> {
    match &place.kind {
        PlaceKind::Index(b, _) | PlaceKind::Field(b, _) => root(b),
        PlaceKind::Global(g) => Some(g.index),
        PlaceKind::Local(_) => None,
    }
}

fn visit(n: &NodeRef, stored: &Rc<Vec<(usize, NodeRef)>>, input: usize, out: &mut Vec<Read>) {
    let mut seen = HashSet::new();
    let mut stack = vec![n.clone()];
    while let Some(n) = stack.pop() {
        if !seen.insert(Rc::as_ptr(&n)) {
            continue;
        }
        if let ExprKind::Load(p) = &n.kind
            && root(p) == Some(input)
        {
            out.push(Read {
                index: element(p).map(|(_, i)| i),
                site: n.site,
                stored: stored.clone(),
            });
        }
        stack.extend(crate::exp::operands(&n));
    }
}
