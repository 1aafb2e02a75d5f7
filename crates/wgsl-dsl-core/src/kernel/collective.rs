//! Operations across invocations: atomics (WGSL spec §17.8) and workgroup reductions; the
//! subgroup operations are in `subgroup.rs`.

use super::stmt::{AtomicOp, Stmt};
use super::{KernelBuilder, Place, ReadWrite};
use crate::exp::{Exp, ExprKind, IntoExp};
use crate::site::CallSite;
use crate::types::*;

/// The atomic read-modify-write operations, one method each (WGSL spec §17.8.3, §17.8.4):
/// `atomicOp(&place, value)`, returning the old value.
macro_rules! atomic_rmw {
    ($($wgsl:literal $name:ident => $op:ident, $section:literal;)*) => {
        impl KernelBuilder {$(
            #[doc = concat!("`", $wgsl, "(&place, value)`: returns the old value (WGSL spec ", $section, ").")]
            #[track_caller]
            pub fn $name<T: AtomicScalar>(
                &mut self,
                place: &Place<Atomic<T>, ReadWrite>,
                value: impl IntoExp<T>,
            ) -> Exp<T> {
                self.atomic(place, AtomicOp::$op, value.into_exp(), None)
            }
        )*}
    };
}

atomic_rmw! {
    "atomicAdd" atomic_add => Add, "§17.8.3";
    "atomicSub" atomic_sub => Sub, "§17.8.3";
    "atomicMin" atomic_min => Min, "§17.8.3";
    "atomicMax" atomic_max => Max, "§17.8.3";
    "atomicAnd" atomic_and => And, "§17.8.3";
    "atomicOr" atomic_or => Or, "§17.8.3";
    "atomicXor" atomic_xor => Xor, "§17.8.3";
    "atomicExchange" atomic_exchange => Exchange, "§17.8.4";
}

impl KernelBuilder {
    // ---- atomics (WGSL spec §17.8) ----

    #[track_caller]
    fn atomic<T: AtomicScalar>(
        &mut self,
        place: &Place<Atomic<T>, ReadWrite>,
        fun: AtomicOp,
        value: Exp<T>,
        compare: Option<Exp<T>>,
    ) -> Exp<T> {
        let site = CallSite::caller();
        self.check_place(&place.node, site);
        self.bind(site, |result| Stmt::Atomic {
            result,
            place: place.node.clone(),
            fun,
            value: value.node,
            compare: compare.map(|c| c.node),
        })
    }

    /// `atomicCompareExchangeWeak(&place, compare, value)` (WGSL spec §17.8.5): returns
    /// `(old_value, exchanged)`.
    #[track_caller]
    pub fn atomic_compare_exchange_weak<T: AtomicScalar>(
        &mut self,
        place: &Place<Atomic<T>, ReadWrite>,
        compare: impl IntoExp<T>,
        value: impl IntoExp<T>,
    ) -> (Exp<T>, Exp<bool>) {
        let site = CallSite::caller();
        let compare = compare.into_exp();
        let result = self.atomic(place, AtomicOp::Exchange, value.into_exp(), Some(compare));
        let old = Exp::from_kind(ExprKind::AccessIndex(result.node.clone(), 0), site);
        let exchanged = Exp::from_kind(ExprKind::AccessIndex(result.node, 1), site);
        (old, exchanged)
    }
    /// `atomicStore(&place, value)` (WGSL spec §17.8.2).
    #[track_caller]
    pub fn atomic_store<T: AtomicScalar>(
        &mut self,
        place: &Place<Atomic<T>, ReadWrite>,
        value: impl IntoExp<T>,
    ) {
        let site = CallSite::caller();
        let value = value.into_exp();
        self.check_place(&place.node, site);
        self.push(
            Stmt::Store {
                place: place.node.clone(),
                value: value.node,
            },
            site,
        );
    }

    /// A tree reduction over one workgroup (WGSL spec §17.11.3 for the barriers): every
    /// invocation stores `value` into `scratch[local_index]`, then `log2(N)` rounds combine
    /// `scratch[i] = op(scratch[i], scratch[i + stride])` for `i < stride`, each round followed
    /// by `workgroupBarrier()`. Returns `scratch[0]`, the reduction of the `N` values, valid in
    /// every invocation after this call. `N` must be a power of two equal to the number of
    /// invocations of the workgroup, otherwise [`KernelBuilder::build`] returns a
    /// [`BuildError::Invalid`](crate::BuildError::Invalid) naming this call. Every invocation must reach this
    /// call (uniform control flow): naga does not check uniformity, and a divergent barrier is
    /// undefined behaviour on the GPU.
    #[track_caller]
    pub fn workgroup_reduce<T: Numeric, const N: usize>(
        &mut self,
        scratch: &Place<Array<T, N>, ReadWrite>,
        local_index: &Exp<u32>,
        value: impl IntoExp<T>,
        op: impl Fn(Exp<T>, Exp<T>) -> Exp<T>,
    ) -> Exp<T> {
        let site = CallSite::caller();
        let invocations = self.invocations();
        if !N.is_power_of_two() || N != invocations {
            let message = format!(
                "workgroup_reduce needs a power-of-two scratch array of one element per \
                 invocation: {N} elements for {invocations} invocations"
            );
            return self.invalid(message, site);
        }
        self.store(&scratch.at(local_index), value);
        self.workgroup_barrier();
        let mut stride = (N / 2) as u32;
        while stride > 0 {
            self.if_(local_index.lt(stride), |k| {
                let combined = op(
                    scratch.at(local_index).load(),
                    scratch.at(local_index + stride).load(),
                );
                k.store(&scratch.at(local_index), combined);
            });
            self.workgroup_barrier();
            stride /= 2;
        }
        scratch.at(0u32).load()
    }
}
