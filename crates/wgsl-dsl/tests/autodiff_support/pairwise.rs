//! The sum of many terms as a balanced tree (shared by `tests/autodiff_sharing.rs`, through
//! `autodiff_support`, and `benches/autodiff.rs`, by `#[path]`).

use wgsl_dsl::prelude::*;

/// `terms` summed pairwise, level by level (a tree of depth `log2(terms.len())`, not a chain).
/// `None` for no terms.
pub fn pairwise_sum(mut terms: Vec<Exp<f32>>) -> Option<Exp<f32>> {
    while terms.len() > 1 {
        let mut next = Vec::with_capacity(terms.len().div_ceil(2));
        let mut it = terms.into_iter();
        while let Some(a) = it.next() {
            next.push(match it.next() {
                Some(b) => a + b,
                None => a,
            });
        }
        terms = next;
    }
    terms.pop()
}
