//! Reverse mode: the adjoints of the variables from seeds at the roots (vector-Jacobian
//! products).
//!
//! Nodes are visited once, parents before operands (the reverse of the graph's post-order),
//! so a node reached along several paths (a shared `Rc`, a `let` used many times) sums its
//! adjoint contributions first (a balanced sum, [`At::sum`]) and passes the sum on once: the
//! derivative has a number of nodes linear in the size of the DAG.

use naga::FastHashMap as HashMap;

use super::error::NotDifferentiable;
use super::graph::{Graph, Key, key};
use super::make::At;
use super::rules::linearize;
use crate::exp::NodeRef;

/// How an adjoint used more than once is named (that of a `let`, or of a node with several
/// operands depending on the variables): the hook gets the node and its summed adjoint and
/// returns the node to propagate (a new `let` of it, or the adjoint itself).
pub(crate) type BindAdjoint<'a> = &'a mut dyn FnMut(&NodeRef, NodeRef) -> NodeRef;

/// The adjoint of every variable of `g` that the seeded roots reach, by key. `roots` pairs
/// each root with its seed (of the root's type).
pub(crate) fn reverse(
    g: &Graph<'_>,
    roots: &[(NodeRef, NodeRef)],
    bind: BindAdjoint<'_>,
) -> Result<HashMap<Key, NodeRef>, NotDifferentiable> {
    let roots: Vec<(NodeRef, NodeRef, bool)> = roots
        .iter()
        .map(|(r, s)| (r.clone(), s.clone(), false))
        .collect();
    reverse_masked(g, &roots, bind).map(|(adjoints, _)| adjoints)
}

/// [`reverse`], each root with a flag saying that its seed may be a masked zero (see
/// [`super::masked`]); also returns the keys of the variables whose adjoints may be.
pub(crate) fn reverse_masked(
    g: &Graph<'_>,
    roots: &[(NodeRef, NodeRef, bool)],
    bind: BindAdjoint<'_>,
) -> Result<(HashMap<Key, NodeRef>, std::collections::HashSet<Key>), NotDifferentiable> {
    let mut contributions: HashMap<Key, Vec<NodeRef>> = HashMap::default();
    let mut masked = std::collections::HashSet::new();
    for (root, seed, is_masked) in roots {
        if g.depends(root) {
            contributions
                .entry(key(root))
                .or_default()
                .push(seed.clone());
            if *is_masked {
                masked.insert(key(root));
            }
        }
    }
    let mut adjoints = HashMap::default();
    for n in g.order.iter().rev() {
        let k = key(n);
        let Some(terms) = contributions.remove(&k) else {
            continue;
        };
        let at = At(n.site);
        let Some(adjoint) = at.sum(terms) else {
            continue;
        };
        if g.is_wrt(n) {
            adjoints.insert(k, adjoint);
            continue;
        }
        let terms = linearize(n, g)?;
        // Named where it is used more than once: a `let`'s, or one passed to several
        // operands, so that the emitted code stays linear in the DAG too.
        let adjoint = if g.let_name(n).is_some() || terms.len() >= 2 {
            bind(n, adjoint)
        } else {
            adjoint
        };
        let from_masked = masked.contains(&k);
        for (operand, lin) in terms {
            let mut c = lin.transpose(&adjoint, &operand.ty, &n.ty, at);
            if from_masked {
                c = super::masked::guard(&lin, &adjoint, c, at);
            }
            if from_masked || super::masked::masks(&lin) {
                masked.insert(key(&operand));
            }
            contributions.entry(key(&operand)).or_default().push(c);
        }
    }
    let masked = masked
        .into_iter()
        .filter(|k| adjoints.contains_key(k))
        .collect();
    Ok((adjoints, masked))
}
