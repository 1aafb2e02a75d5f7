//! Subgroup and quad operations beyond the basic ones of `collective.rs` (WGSL `enable
//! subgroups;`, WGSL spec §17.12 "Subgroup Built-in Functions" and §17.13 "Quad Operations").
//!
//! Each is a statement bound like a `let` (evaluated once, where it is called) and makes the
//! kernel need the subgroup capability. "Active" invocations are those of the subgroup that
//! reach the call; the results below are over them. The operations need no uniform control
//! flow of the workgroup, but a subgroup whose invocations diverge gets results over the
//! active ones only.

use super::KernelBuilder;
use super::stmt::{GatherKind, Stmt, SubgroupOp};
use crate::exp::{Exp, ExprKind, IntoExp};
use crate::site::CallSite;
use crate::types::*;
use naga::{CollectiveOperation as C, SubgroupOperation as S};

impl KernelBuilder {
    /// The subgroup operation `op` of `arg` (and the lane `index` of a gather), bound like a
    /// `let`; the kernel needs the subgroup capability.
    pub(super) fn subgroup_op<T: WgslType, A: WgslType>(
        &mut self,
        op: SubgroupOp,
        arg: Exp<A>,
        index: Option<Exp<u32>>,
        site: CallSite,
    ) -> Exp<T> {
        self.capabilities |= naga::valid::Capabilities::SUBGROUP;
        self.bind(site, |result| Stmt::Subgroup {
            result,
            op,
            arg: arg.node,
            index: index.map(|i| i.node),
            ty: T::ty(),
        })
    }

    /// `subgroupInclusiveAdd(value)`: the sum of `value` over the active invocations whose
    /// `subgroup_invocation_id` is at most this one's (WGSL spec §17.12).
    #[track_caller]
    pub fn subgroup_inclusive_add<T: Numeric + ScalarOrVector>(
        &mut self,
        value: impl IntoExp<T>,
    ) -> Exp<T> {
        let site = CallSite::caller();
        let op = SubgroupOp::Collective(S::Add, C::InclusiveScan);
        self.subgroup_op(op, value.into_exp(), None, site)
    }

    /// `subgroupInclusiveMul(value)`: the product over the active invocations up to this one
    /// (WGSL spec §17.12).
    #[track_caller]
    pub fn subgroup_inclusive_mul<T: Numeric + ScalarOrVector>(
        &mut self,
        value: impl IntoExp<T>,
    ) -> Exp<T> {
        let site = CallSite::caller();
        let op = SubgroupOp::Collective(S::Mul, C::InclusiveScan);
        self.subgroup_op(op, value.into_exp(), None, site)
    }

    /// `subgroupExclusiveMul(value)`: the product over the active invocations below this one,
    /// `1` for the first (WGSL spec §17.12).
    #[track_caller]
    pub fn subgroup_exclusive_mul<T: Numeric + ScalarOrVector>(
        &mut self,
        value: impl IntoExp<T>,
    ) -> Exp<T> {
        let site = CallSite::caller();
        let op = SubgroupOp::Collective(S::Mul, C::ExclusiveScan);
        self.subgroup_op(op, value.into_exp(), None, site)
    }

    /// `subgroupMul(value)`: the product over the active invocations (WGSL spec §17.12).
    #[track_caller]
    pub fn subgroup_mul<T: Numeric + ScalarOrVector>(&mut self, value: impl IntoExp<T>) -> Exp<T> {
        let site = CallSite::caller();
        let op = SubgroupOp::Collective(S::Mul, C::Reduce);
        self.subgroup_op(op, value.into_exp(), None, site)
    }

    /// `subgroupAnd(value)`: the bitwise and over the active invocations (WGSL spec §17.12).
    #[track_caller]
    pub fn subgroup_and<T: Integer + ScalarOrVector>(&mut self, value: impl IntoExp<T>) -> Exp<T> {
        let site = CallSite::caller();
        let op = SubgroupOp::Collective(S::And, C::Reduce);
        self.subgroup_op(op, value.into_exp(), None, site)
    }

    /// `subgroupOr(value)`: the bitwise or over the active invocations (WGSL spec §17.12).
    #[track_caller]
    pub fn subgroup_or<T: Integer + ScalarOrVector>(&mut self, value: impl IntoExp<T>) -> Exp<T> {
        let site = CallSite::caller();
        let op = SubgroupOp::Collective(S::Or, C::Reduce);
        self.subgroup_op(op, value.into_exp(), None, site)
    }

    /// `subgroupXor(value)`: the bitwise exclusive or over the active invocations (WGSL spec
    /// §17.12).
    #[track_caller]
    pub fn subgroup_xor<T: Integer + ScalarOrVector>(&mut self, value: impl IntoExp<T>) -> Exp<T> {
        let site = CallSite::caller();
        let op = SubgroupOp::Collective(S::Xor, C::Reduce);
        self.subgroup_op(op, value.into_exp(), None, site)
    }

    /// `subgroupAll(value)`: true if `value` is true in every active invocation (WGSL spec
    /// §17.12).
    #[track_caller]
    pub fn subgroup_all(&mut self, value: impl IntoExp<bool>) -> Exp<bool> {
        let site = CallSite::caller();
        let op = SubgroupOp::Collective(S::All, C::Reduce);
        self.subgroup_op(op, value.into_exp(), None, site)
    }

    /// `subgroupAny(value)`: true if `value` is true in some active invocation (WGSL spec
    /// §17.12).
    #[track_caller]
    pub fn subgroup_any(&mut self, value: impl IntoExp<bool>) -> Exp<bool> {
        let site = CallSite::caller();
        let op = SubgroupOp::Collective(S::Any, C::Reduce);
        self.subgroup_op(op, value.into_exp(), None, site)
    }

    /// `subgroupBallot(predicate)`: bit `i` of the 128-bit result (`x` holds bits 0..32, `y`
    /// 32..64, ...) is set when the active invocation with `subgroup_invocation_id` `i` has a
    /// true predicate (WGSL spec §17.12).
    #[track_caller]
    pub fn subgroup_ballot(&mut self, predicate: impl IntoExp<bool>) -> Exp<Vec4<u32>> {
        let site = CallSite::caller();
        self.subgroup_op(SubgroupOp::Ballot, predicate.into_exp(), None, site)
    }

    /// True in exactly one active invocation of the subgroup, the one with the lowest
    /// `subgroup_invocation_id` (WGSL's `subgroupElect`, spec §17.12). naga 30 has no
    /// `subgroupElect`; this is `subgroupBroadcastFirst(id) == id` with the invocation's id,
    /// which is the same predicate.
    #[track_caller]
    pub fn subgroup_elect(&mut self) -> Exp<bool> {
        let site = CallSite::caller();
        let id = Exp::<u32>::from_kind(
            ExprKind::Builtin(crate::exp::BuiltinValue::SubgroupInvocationId),
            site,
        );
        let first: Exp<u32> = self.subgroup_op(SubgroupOp::BroadcastFirst, id.clone(), None, site);
        Exp::from_kind(
            ExprKind::Binary(naga::BinaryOperator::Equal, first.node, id.node),
            site,
        )
    }

    /// `subgroupBroadcast(value, lane)`: `value` of the invocation whose
    /// `subgroup_invocation_id` is `lane` (WGSL spec §17.12; the lane is a const-expression,
    /// hence a Rust value here). That invocation must be active.
    #[track_caller]
    pub fn subgroup_broadcast<T: ScalarOrVector>(
        &mut self,
        value: impl IntoExp<T>,
        lane: u32,
    ) -> Exp<T> {
        let site = CallSite::caller();
        let lane = Exp::<u32>::from_kind(ExprKind::Literal(crate::exp::Lit::U32(lane)), site);
        let op = SubgroupOp::Gather(GatherKind::Broadcast);
        self.subgroup_op(op, value.into_exp(), Some(lane), site)
    }

    /// `subgroupShuffleXor(value, mask)`: `value` of the invocation whose id is this one's
    /// `^ mask` (WGSL spec §17.12). The mask must be subgroup-uniform and below the subgroup
    /// size; the source must be active.
    #[track_caller]
    pub fn subgroup_shuffle_xor<T: ScalarOrVector>(
        &mut self,
        value: impl IntoExp<T>,
        mask: impl IntoExp<u32>,
    ) -> Exp<T> {
        let site = CallSite::caller();
        let op = SubgroupOp::Gather(GatherKind::ShuffleXor);
        self.subgroup_op(op, value.into_exp(), Some(mask.into_exp()), site)
    }

    /// `subgroupShuffleUp(value, delta)`: `value` of the invocation `delta` ids below (WGSL
    /// spec §17.12). `delta` must be subgroup-uniform; the result is undefined where the
    /// source id is below 0.
    #[track_caller]
    pub fn subgroup_shuffle_up<T: ScalarOrVector>(
        &mut self,
        value: impl IntoExp<T>,
        delta: impl IntoExp<u32>,
    ) -> Exp<T> {
        let site = CallSite::caller();
        let op = SubgroupOp::Gather(GatherKind::ShuffleUp);
        self.subgroup_op(op, value.into_exp(), Some(delta.into_exp()), site)
    }

    /// `subgroupShuffleDown(value, delta)`: `value` of the invocation `delta` ids above (WGSL
    /// spec §17.12). `delta` must be subgroup-uniform; the result is undefined where the
    /// source id is at or past the subgroup size.
    #[track_caller]
    pub fn subgroup_shuffle_down<T: ScalarOrVector>(
        &mut self,
        value: impl IntoExp<T>,
        delta: impl IntoExp<u32>,
    ) -> Exp<T> {
        let site = CallSite::caller();
        let op = SubgroupOp::Gather(GatherKind::ShuffleDown);
        self.subgroup_op(op, value.into_exp(), Some(delta.into_exp()), site)
    }

    /// `quadBroadcast(value, id)`: `value` of the invocation of this quad (the group of four
    /// consecutive subgroup ids `4q .. 4q + 3`) whose index in the quad is `id` (0 to 3; a
    /// const-expression, hence a Rust value) (WGSL spec §17.13).
    #[track_caller]
    pub fn quad_broadcast<T: ScalarOrVector>(&mut self, value: impl IntoExp<T>, id: u32) -> Exp<T> {
        let site = CallSite::caller();
        let id = Exp::<u32>::from_kind(ExprKind::Literal(crate::exp::Lit::U32(id)), site);
        let op = SubgroupOp::Gather(GatherKind::QuadBroadcast);
        self.subgroup_op(op, value.into_exp(), Some(id), site)
    }

    /// `quadSwapX(value)`: `value` of the quad neighbour whose index differs in bit 0
    /// (WGSL spec §17.13).
    #[track_caller]
    pub fn quad_swap_x<T: ScalarOrVector>(&mut self, value: impl IntoExp<T>) -> Exp<T> {
        let site = CallSite::caller();
        let op = SubgroupOp::QuadSwap(naga::Direction::X);
        self.subgroup_op(op, value.into_exp(), None, site)
    }

    /// `quadSwapY(value)`: `value` of the quad neighbour whose index differs in bit 1
    /// (WGSL spec §17.13).
    #[track_caller]
    pub fn quad_swap_y<T: ScalarOrVector>(&mut self, value: impl IntoExp<T>) -> Exp<T> {
        let site = CallSite::caller();
        let op = SubgroupOp::QuadSwap(naga::Direction::Y);
        self.subgroup_op(op, value.into_exp(), None, site)
    }

    /// `quadSwapDiagonal(value)`: `value` of the quad invocation whose index differs in both
    /// bits (WGSL spec §17.13).
    #[track_caller]
    pub fn quad_swap_diagonal<T: ScalarOrVector>(&mut self, value: impl IntoExp<T>) -> Exp<T> {
        let site = CallSite::caller();
        let op = SubgroupOp::QuadSwap(naga::Direction::Diagonal);
        self.subgroup_op(op, value.into_exp(), None, site)
    }
}
