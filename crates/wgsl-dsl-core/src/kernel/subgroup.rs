//! Subgroup and quad operations (WGSL `enable subgroups;`, WGSL spec §17.12 "Subgroup
//! Built-in Functions" and §17.13 "Quad Operations").
//!
//! Each is a statement bound like a `let` (evaluated once, where it is called) and makes the
//! kernel need the subgroup capability. The broadcasts, shuffles and quad operations take
//! numbers (scalars or vectors of `i32`, `u32`, `f32`, `f16`), as WGSL's do; `bool`s go
//! through `subgroup_ballot`, `subgroup_all` and `subgroup_any`. "Active" invocations are those of the subgroup that
//! reach the call; the results below are over them. The operations need no uniform control
//! flow of the workgroup, but a subgroup whose invocations diverge gets results over the
//! active ones only.

use super::KernelBuilder;
use super::stmt::{GatherKind, Stmt, SubgroupOp};
use crate::exp::{Exp, ExprKind, IntoExp};
use crate::site::CallSite;
use crate::types::*;
use SubgroupOp::{Ballot, BroadcastFirst, Collective, Gather, QuadSwap, Shuffle};
use naga::{CollectiveOperation as C, Direction, SubgroupOperation as S};

/// The subgroup and quad operations of one value (with the lane, mask or delta of a shuffle),
/// one method each, written as its signature (every operand an `impl IntoExp`) and its
/// [`SubgroupOp`]. They need the subgroup capability (checked by the runtime against the
/// adapter).
macro_rules! subgroup_ops {
    (@index) => { None };
    (@index $index:ident) => { Some($index.into_exp()) };
    ($($(#[$doc:meta])*
        fn $name:ident $(<T: $bound:ident $(+ $bounds:ident)*>)?
            ($arg:ident: $arg_ty:ty $(, $index:ident: u32)?) -> $ret:ty = $op:expr;
    )*) => {
        impl KernelBuilder {$(
            $(#[$doc])*
            #[track_caller]
            pub fn $name $(<T: $bound $(+ $bounds)*>)? (
                &mut self,
                $arg: impl IntoExp<$arg_ty>,
                $($index: impl IntoExp<u32>,)?
            ) -> Exp<$ret> {
                let index = subgroup_ops!(@index $($index)?);
                self.subgroup_op($op, $arg.into_exp(), index, CallSite::caller())
            }
        )*}
    };
}

subgroup_ops! {
    /// `subgroupAdd(value)`: the sum over the active invocations of the subgroup.
    fn subgroup_add<T: Numeric + ScalarOrVector>(value: T) -> T = Collective(S::Add, C::Reduce);
    /// `subgroupMax(value)`: the maximum over the active invocations of the subgroup.
    fn subgroup_max<T: Numeric + ScalarOrVector>(value: T) -> T = Collective(S::Max, C::Reduce);
    /// `subgroupMin(value)`: the minimum over the active invocations of the subgroup.
    fn subgroup_min<T: Numeric + ScalarOrVector>(value: T) -> T = Collective(S::Min, C::Reduce);
    /// `subgroupExclusiveAdd(value)`: the sum over the lower active lanes (an exclusive
    /// prefix sum).
    fn subgroup_exclusive_add<T: Numeric + ScalarOrVector>(value: T) -> T
        = Collective(S::Add, C::ExclusiveScan);
    /// `subgroupInclusiveAdd(value)`: the sum of `value` over the active invocations whose
    /// `subgroup_invocation_id` is at most this one's (WGSL spec §17.12).
    fn subgroup_inclusive_add<T: Numeric + ScalarOrVector>(value: T) -> T
        = Collective(S::Add, C::InclusiveScan);
    /// `subgroupInclusiveMul(value)`: the product over the active invocations up to this one
    /// (WGSL spec §17.12).
    fn subgroup_inclusive_mul<T: Numeric + ScalarOrVector>(value: T) -> T
        = Collective(S::Mul, C::InclusiveScan);
    /// `subgroupExclusiveMul(value)`: the product over the active invocations below this one,
    /// `1` for the first (WGSL spec §17.12).
    fn subgroup_exclusive_mul<T: Numeric + ScalarOrVector>(value: T) -> T
        = Collective(S::Mul, C::ExclusiveScan);
    /// `subgroupMul(value)`: the product over the active invocations (WGSL spec §17.12).
    fn subgroup_mul<T: Numeric + ScalarOrVector>(value: T) -> T = Collective(S::Mul, C::Reduce);
    /// `subgroupAnd(value)`: the bitwise and over the active invocations (WGSL spec §17.12).
    fn subgroup_and<T: Integer + ScalarOrVector>(value: T) -> T = Collective(S::And, C::Reduce);
    /// `subgroupOr(value)`: the bitwise or over the active invocations (WGSL spec §17.12).
    fn subgroup_or<T: Integer + ScalarOrVector>(value: T) -> T = Collective(S::Or, C::Reduce);
    /// `subgroupXor(value)`: the bitwise exclusive or over the active invocations (WGSL spec
    /// §17.12).
    fn subgroup_xor<T: Integer + ScalarOrVector>(value: T) -> T = Collective(S::Xor, C::Reduce);
    /// `subgroupAll(value)`: true if `value` is true in every active invocation (WGSL spec
    /// §17.12).
    fn subgroup_all(value: bool) -> bool = Collective(S::All, C::Reduce);
    /// `subgroupAny(value)`: true if `value` is true in some active invocation (WGSL spec
    /// §17.12).
    fn subgroup_any(value: bool) -> bool = Collective(S::Any, C::Reduce);
    /// `subgroupBallot(predicate)`: bit `i` of the 128-bit result (`x` holds bits 0..32, `y`
    /// 32..64, ...) is set when the active invocation with `subgroup_invocation_id` `i` has a
    /// true predicate (WGSL spec §17.12).
    fn subgroup_ballot(predicate: bool) -> Vec4<u32> = Ballot;
    /// `subgroupBroadcastFirst(value)`: the value of the lowest active lane.
    fn subgroup_broadcast_first<T: Numeric + ScalarOrVector>(value: T) -> T = BroadcastFirst;
    /// `subgroupShuffle(value, lane)`: the value of lane `lane`.
    fn subgroup_shuffle<T: Numeric + ScalarOrVector>(value: T, lane: u32) -> T = Shuffle;
    /// `subgroupShuffleXor(value, mask)`: `value` of the invocation whose id is this one's
    /// `^ mask` (WGSL spec §17.12). The mask must be subgroup-uniform and below the subgroup
    /// size; the source must be active.
    fn subgroup_shuffle_xor<T: Numeric + ScalarOrVector>(value: T, mask: u32) -> T
        = Gather(GatherKind::ShuffleXor);
    /// `subgroupShuffleUp(value, delta)`: `value` of the invocation `delta` ids below (WGSL
    /// spec §17.12). `delta` must be subgroup-uniform; the result is undefined where the
    /// source id is below 0.
    fn subgroup_shuffle_up<T: Numeric + ScalarOrVector>(value: T, delta: u32) -> T
        = Gather(GatherKind::ShuffleUp);
    /// `subgroupShuffleDown(value, delta)`: `value` of the invocation `delta` ids above (WGSL
    /// spec §17.12). `delta` must be subgroup-uniform; the result is undefined where the
    /// source id is at or past the subgroup size.
    fn subgroup_shuffle_down<T: Numeric + ScalarOrVector>(value: T, delta: u32) -> T
        = Gather(GatherKind::ShuffleDown);
    /// `quadSwapX(value)`: `value` of the quad neighbour whose index differs in bit 0
    /// (WGSL spec §17.13).
    fn quad_swap_x<T: Numeric + ScalarOrVector>(value: T) -> T = QuadSwap(Direction::X);
    /// `quadSwapY(value)`: `value` of the quad neighbour whose index differs in bit 1
    /// (WGSL spec §17.13).
    fn quad_swap_y<T: Numeric + ScalarOrVector>(value: T) -> T = QuadSwap(Direction::Y);
    /// `quadSwapDiagonal(value)`: `value` of the quad invocation whose index differs in both
    /// bits (WGSL spec §17.13).
    fn quad_swap_diagonal<T: Numeric + ScalarOrVector>(value: T) -> T = QuadSwap(Direction::Diagonal);
}

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
        super::control::binary(naga::BinaryOperator::Equal, &first, &id, site)
    }

    /// `subgroupBroadcast(value, lane)`: `value` of the invocation whose
    /// `subgroup_invocation_id` is `lane` (WGSL spec §17.12; the lane is a const-expression,
    /// hence a Rust value here). That invocation must be active.
    #[track_caller]
    pub fn subgroup_broadcast<T: Numeric + ScalarOrVector>(
        &mut self,
        value: impl IntoExp<T>,
        lane: u32,
    ) -> Exp<T> {
        let site = CallSite::caller();
        let lane = Exp::<u32>::from_kind(ExprKind::Literal(crate::exp::Lit::U32(lane)), site);
        let op = SubgroupOp::Gather(GatherKind::Broadcast);
        self.subgroup_op(op, value.into_exp(), Some(lane), site)
    }

    /// `quadBroadcast(value, id)`: `value` of the invocation of this quad (the group of four
    /// consecutive subgroup ids `4q .. 4q + 3`) whose index in the quad is `id` (0 to 3; a
    /// const-expression, hence a Rust value) (WGSL spec §17.13).
    #[track_caller]
    pub fn quad_broadcast<T: Numeric + ScalarOrVector>(
        &mut self,
        value: impl IntoExp<T>,
        id: u32,
    ) -> Exp<T> {
        let site = CallSite::caller();
        let id = Exp::<u32>::from_kind(ExprKind::Literal(crate::exp::Lit::U32(id)), site);
        let op = SubgroupOp::Gather(GatherKind::QuadBroadcast);
        self.subgroup_op(op, value.into_exp(), Some(id), site)
    }
}
