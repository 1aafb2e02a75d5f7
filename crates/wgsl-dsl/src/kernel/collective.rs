//! Operations across invocations: atomics (WGSL spec §17.8), subgroup operations (WGSL
//! `enable subgroups;`) and workgroup reductions.

use super::stmt::{AtomicOp, Stmt, SubgroupOp};
use super::{KernelBuilder, Place, ReadWrite};
use crate::exp::{Exp, ExprKind, IntoExp, Node};
use crate::site::CallSite;
use crate::types::*;

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
        let id = self.id();
        self.push(
            Stmt::Atomic {
                result: Some(id),
                place: place.node.clone(),
                fun,
                value: value.node,
                compare: compare.map(|c| c.node),
            },
            site,
        );
        Exp::from_node(Node {
            kind: ExprKind::Bound(id),
            ty: T::ty(),
            site,
        })
    }

    /// `atomicAdd(&place, value)`: returns the old value (WGSL spec §17.8.3).
    #[track_caller]
    pub fn atomic_add<T: AtomicScalar>(
        &mut self,
        place: &Place<Atomic<T>, ReadWrite>,
        value: impl IntoExp<T>,
    ) -> Exp<T> {
        self.atomic(place, AtomicOp::Add, value.into_exp(), None)
    }

    /// `atomicSub(&place, value)`: returns the old value (WGSL spec §17.8.3).
    #[track_caller]
    pub fn atomic_sub<T: AtomicScalar>(
        &mut self,
        place: &Place<Atomic<T>, ReadWrite>,
        value: impl IntoExp<T>,
    ) -> Exp<T> {
        self.atomic(place, AtomicOp::Sub, value.into_exp(), None)
    }

    /// `atomicMin(&place, value)`: returns the old value (WGSL spec §17.8.3).
    #[track_caller]
    pub fn atomic_min<T: AtomicScalar>(
        &mut self,
        place: &Place<Atomic<T>, ReadWrite>,
        value: impl IntoExp<T>,
    ) -> Exp<T> {
        self.atomic(place, AtomicOp::Min, value.into_exp(), None)
    }

    /// `atomicMax(&place, value)`: returns the old value (WGSL spec §17.8.3).
    #[track_caller]
    pub fn atomic_max<T: AtomicScalar>(
        &mut self,
        place: &Place<Atomic<T>, ReadWrite>,
        value: impl IntoExp<T>,
    ) -> Exp<T> {
        self.atomic(place, AtomicOp::Max, value.into_exp(), None)
    }

    /// `atomicAnd(&place, value)`: returns the old value (WGSL spec §17.8.3).
    #[track_caller]
    pub fn atomic_and<T: AtomicScalar>(
        &mut self,
        place: &Place<Atomic<T>, ReadWrite>,
        value: impl IntoExp<T>,
    ) -> Exp<T> {
        self.atomic(place, AtomicOp::And, value.into_exp(), None)
    }

    /// `atomicOr(&place, value)`: returns the old value (WGSL spec §17.8.3).
    #[track_caller]
    pub fn atomic_or<T: AtomicScalar>(
        &mut self,
        place: &Place<Atomic<T>, ReadWrite>,
        value: impl IntoExp<T>,
    ) -> Exp<T> {
        self.atomic(place, AtomicOp::Or, value.into_exp(), None)
    }

    /// `atomicXor(&place, value)`: returns the old value (WGSL spec §17.8.3).
    #[track_caller]
    pub fn atomic_xor<T: AtomicScalar>(
        &mut self,
        place: &Place<Atomic<T>, ReadWrite>,
        value: impl IntoExp<T>,
    ) -> Exp<T> {
        self.atomic(place, AtomicOp::Xor, value.into_exp(), None)
    }

    /// `atomicExchange(&place, value)`: returns the old value (WGSL spec §17.8.4).
    #[track_caller]
    pub fn atomic_exchange<T: AtomicScalar>(
        &mut self,
        place: &Place<Atomic<T>, ReadWrite>,
        value: impl IntoExp<T>,
    ) -> Exp<T> {
        self.atomic(place, AtomicOp::Exchange, value.into_exp(), None)
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
        self.push(
            Stmt::Store {
                place: place.node.clone(),
                value: value.node,
            },
            site,
        );
    }

    // ---- subgroups (WGSL `enable subgroups;`) ----

    #[track_caller]
    fn subgroup<T: ScalarOrVector>(
        &mut self,
        op: SubgroupOp,
        arg: Exp<T>,
        index: Option<Exp<u32>>,
    ) -> Exp<T> {
        let site = CallSite::caller();
        self.capabilities |= naga::valid::Capabilities::SUBGROUP;
        let id = self.id();
        self.push(
            Stmt::Subgroup {
                result: id,
                op,
                arg: arg.node,
                index: index.map(|i| i.node),
                ty: T::ty(),
            },
            site,
        );
        Exp::from_node(Node {
            kind: ExprKind::Bound(id),
            ty: T::ty(),
            site,
        })
    }

    /// `subgroupAdd(value)`: the sum over the active invocations of the subgroup.
    /// Needs the subgroup capability (checked by the runtime against the adapter).
    #[track_caller]
    pub fn subgroup_add<T: Numeric + ScalarOrVector>(&mut self, value: impl IntoExp<T>) -> Exp<T> {
        use naga::{CollectiveOperation::Reduce, SubgroupOperation::Add};
        self.subgroup(SubgroupOp::Collective(Add, Reduce), value.into_exp(), None)
    }
    /// `subgroupMax(value)` over the active invocations of the subgroup.
    #[track_caller]
    pub fn subgroup_max<T: Numeric + ScalarOrVector>(&mut self, value: impl IntoExp<T>) -> Exp<T> {
        use naga::{CollectiveOperation::Reduce, SubgroupOperation::Max};
        self.subgroup(SubgroupOp::Collective(Max, Reduce), value.into_exp(), None)
    }
    /// `subgroupMin(value)` over the active invocations of the subgroup.
    #[track_caller]
    pub fn subgroup_min<T: Numeric + ScalarOrVector>(&mut self, value: impl IntoExp<T>) -> Exp<T> {
        use naga::{CollectiveOperation::Reduce, SubgroupOperation::Min};
        self.subgroup(SubgroupOp::Collective(Min, Reduce), value.into_exp(), None)
    }
    /// `subgroupExclusiveAdd(value)`: prefix sum over lower lanes.
    #[track_caller]
    pub fn subgroup_exclusive_add<T: Numeric + ScalarOrVector>(
        &mut self,
        value: impl IntoExp<T>,
    ) -> Exp<T> {
        use naga::{CollectiveOperation::ExclusiveScan, SubgroupOperation::Add};
        self.subgroup(
            SubgroupOp::Collective(Add, ExclusiveScan),
            value.into_exp(),
            None,
        )
    }
    /// `subgroupBroadcastFirst(value)`: the value of the lowest active lane.
    #[track_caller]
    pub fn subgroup_broadcast_first<T: ScalarOrVector>(
        &mut self,
        value: impl IntoExp<T>,
    ) -> Exp<T> {
        self.subgroup(SubgroupOp::BroadcastFirst, value.into_exp(), None)
    }
    /// `subgroupShuffle(value, lane)`: the value of lane `lane`.
    #[track_caller]
    pub fn subgroup_shuffle<T: ScalarOrVector>(
        &mut self,
        value: impl IntoExp<T>,
        lane: impl IntoExp<u32>,
    ) -> Exp<T> {
        self.subgroup(SubgroupOp::Shuffle, value.into_exp(), Some(lane.into_exp()))
    }

    /// A tree reduction over one workgroup (WGSL spec §17.11.3 for the barriers): every
    /// invocation stores `value` into `scratch[local_index]`, then `log2(N)` rounds combine
    /// `scratch[i] = op(scratch[i], scratch[i + stride])` for `i < stride`, each round followed
    /// by `workgroupBarrier()`. Returns `scratch[0]`, the reduction of the `N` values, valid in
    /// every invocation after this call. `N` must be a power of two equal to the number of
    /// invocations of the workgroup, otherwise the result is a
    /// [`BuildError::Invalid`](crate::BuildError::Invalid). Every invocation must reach this
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
        let invocations = self
            .workgroup_size
            .iter()
            .fold(1usize, |n, &s| n.saturating_mul(s as usize));
        if !N.is_power_of_two() || N != invocations {
            return Exp::from_kind(
                ExprKind::Invalid(format!(
                    "workgroup_reduce needs a power-of-two scratch array of one element per \
                     invocation: {N} elements for {invocations} invocations"
                )),
                site,
            );
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
