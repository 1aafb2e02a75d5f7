//! Forward mode: the tangent of a root from the tangents of the variables (Jacobian-vector
//! products).
//!
//! Two passes over the graph: parents first, marking the nodes whose tangent the root's needs
//! (operands a derivative flows through, [`linearize`]); then operands first, each needed
//! node's tangent from its operands' (`J t` of each operand's [`Lin`], summed). Each node's
//! tangent is built once.

use naga::{FastHashMap as HashMap, FastHashSet as HashSet};

use super::error::NotDifferentiable;
use super::graph::{Graph, Key, key};
use super::linear::Lin;
use super::make::At;
use super::rules::linearize;
use crate::exp::{ExprKind, NodeRef};

/// The tangent of `root` given the tangents of the variables of `g` (by key); `None` if it
/// does not depend on them. `bind` names the tangents of `let`s as
/// [`super::reverse::reverse`]'s hook names adjoints. With `absolute`, every linear map is
/// replaced by its magnitudes ([`Lin::absolute`]; the variables' tangents are then
/// non-negative): the result bounds the magnitudes of the chain rule's contributions.
pub(crate) fn forward(
    g: &Graph<'_>,
    root: &NodeRef,
    tangents: &HashMap<Key, NodeRef>,
    bind: super::reverse::BindAdjoint<'_>,
    absolute: bool,
) -> Result<Option<NodeRef>, NotDifferentiable> {
    if !g.depends(root) {
        return Ok(None);
    }
    let mut needed: HashSet<Key> = HashSet::from_iter([key(root)]);
    let mut terms: HashMap<Key, Vec<(NodeRef, Lin)>> = HashMap::default();
    for n in g.order.iter().rev() {
        let k = key(n);
        if !needed.contains(&k) || g.is_wrt(n) {
            continue;
        }
        let ts = linearize(n, g)?;
        for (c, _) in &ts {
            needed.insert(key(c));
        }
        terms.insert(k, ts);
    }
    let mut tangent: HashMap<Key, NodeRef> = HashMap::default();
    for n in &g.order {
        let k = key(n);
        if !needed.contains(&k) {
            continue;
        }
        if g.is_wrt(n) {
            if let Some(t) = tangents.get(&k) {
                tangent.insert(k, t.clone());
            }
            continue;
        }
        let at = At(n.site);
        let ts = terms.remove(&k).unwrap_or_default();
        let t = match &n.kind {
            // Vectors composed of parts, and `select`: one node of the operands' tangents.
            ExprKind::Compose(parts) => {
                let mut any = false;
                let ts: Vec<NodeRef> = parts
                    .iter()
                    .map(|p| match tangent.get(&key(p)) {
                        Some(t) if ts.iter().any(|(c, _)| std::rc::Rc::ptr_eq(c, p)) => {
                            any = true;
                            t.clone()
                        }
                        _ => at.zero(&p.ty),
                    })
                    .collect();
                any.then(|| at.compose(&n.ty, ts))
            }
            ExprKind::Select {
                condition,
                accept,
                reject,
            } => {
                let get = |c: &NodeRef| {
                    ts.iter()
                        .any(|(o, _)| std::rc::Rc::ptr_eq(o, c))
                        .then(|| tangent.get(&key(c)).cloned())
                        .flatten()
                };
                match (get(accept), get(reject)) {
                    (None, None) => None,
                    (a, r) => Some(at.select(
                        condition,
                        &a.unwrap_or_else(|| at.float(&n.ty, 0.0)),
                        &r.unwrap_or_else(|| at.float(&n.ty, 0.0)),
                    )),
                }
            }
            _ => {
                let mut parts: Vec<NodeRef> = Vec::new();
                for (c, lin) in &ts {
                    let Some(t) = tangent.get(&key(c)) else {
                        continue;
                    };
                    let lin = if absolute {
                        lin.absolute(at).ok_or_else(|| NotDifferentiable {
                            operation: "a product with a matrix".into(),
                            reason: "the magnitude kernel takes the magnitudes of each \
                                     derivative's coefficients, and WGSL has no `abs` of a \
                                     matrix"
                                .into(),
                            site: n.site,
                        })?
                    } else {
                        lin.clone()
                    };
                    parts.push(lin.apply(t, &c.ty, &n.ty, at));
                }
                at.sum(parts)
            }
        };
        if let Some(t) = t {
            let t = if g.let_name(n).is_some() {
                bind(n, t)
            } else {
                t
            };
            tangent.insert(k, t);
        }
    }
    Ok(tangent.remove(&key(root)))
}
