//! Operations across invocations: atomics (WGSL spec §17.8) and workgroup reductions; the
//! subgroup operations are in `subgroup.rs`.

use super::stmt::{AtomicOp, Stmt};
use super::{KernelBuilder, Place, ReadWrite};
use crate::exp::{Exp, ExprKind, IntoExp, NodeRef, PlaceRef};
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

    /// `place += value` for an `f32` kept as its bits in an `atomic<u32>` (WGSL has no float
    /// atomics, spec §6.2.8): a compare-exchange loop (§17.8.5) that retries until no other
    /// invocation changed the word between its load and its exchange:
    ///
    /// ```text
    /// var old = atomicLoad(&place);
    /// loop {
    ///     let r = atomicCompareExchangeWeak(&place, old, bitcast<u32>(bitcast<f32>(old) + value));
    ///     if r.exchanged { break; }
    ///     old = r.old_value;
    /// }
    /// ```
    ///
    /// Additions from several invocations never race, but their order (and so the rounding of
    /// the sum) varies from run to run. Read the result as `f32::from_bits`. Kernel AD
    /// ([`crate::autodiff::derive`]) differentiates it: a binding only added into this way
    /// is an output whose incoming gradient is an `array<f32>`, and the added value's adjoint
    /// is that gradient at `place` (each addition's, whatever the order).
    #[track_caller]
    pub fn atomic_add_f32(
        &mut self,
        place: &Place<Atomic<u32>, ReadWrite>,
        value: impl IntoExp<f32>,
    ) {
        let site = CallSite::caller();
        self.check_place(&place.node, site);
        let value = self.let_("value", value);
        self.push(
            Stmt::AtomicAddF32 {
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

/// The statements of `cell += value` for the `f32` whose bits the `atomic<u32>` `cell` holds
/// (a compare-exchange loop, [`KernelBuilder::atomic_add_f32`]); `value` is evaluated once
/// per attempt, so bind it first.
pub(crate) fn atomic_add_f32_loop(
    cell: PlaceRef,
    value: NodeRef,
    site: CallSite,
) -> Vec<(Stmt, CallSite)> {
    use std::rc::Rc;

    use super::stmt::VarInit;
    use crate::exp::{Node, PlaceKind, PlaceNode};
    use crate::handle::ValueId;

    let node = |kind: ExprKind, ty: Ty| Rc::new(Node { kind, ty, site });
    let u32_ty = Ty::Scalar(ScalarTy::U32);
    let f32_ty = Ty::Scalar(ScalarTy::F32);
    let old = ValueId::fresh();
    let old_place = Rc::new(PlaceNode {
        kind: PlaceKind::Local(old),
        ty: u32_ty.clone(),
        site,
    });
    let old_value = node(ExprKind::Load(old_place.clone()), u32_ty.clone());
    let as_f32 = node(
        ExprKind::As {
            value: old_value.clone(),
            kind: naga::ScalarKind::Float,
            convert: None,
        },
        f32_ty.clone(),
    );
    let sum = node(
        ExprKind::Binary(naga::BinaryOperator::Add, as_f32, value),
        f32_ty,
    );
    let new = node(
        ExprKind::As {
            value: sum,
            kind: naga::ScalarKind::Uint,
            convert: None,
        },
        u32_ty.clone(),
    );
    let result = ValueId::fresh();
    let result_node = node(ExprKind::Bound(result), u32_ty.clone());
    let exchanged = node(
        ExprKind::AccessIndex(result_node.clone(), 1),
        Ty::Scalar(ScalarTy::Bool),
    );
    let old_again = node(ExprKind::AccessIndex(result_node, 0), u32_ty.clone());
    vec![
        (
            Stmt::Var {
                id: old,
                name: "old".into(),
                ty: u32_ty.clone(),
                init: VarInit::Value(node(ExprKind::Load(cell.clone()), u32_ty)),
            },
            site,
        ),
        (
            Stmt::Loop {
                body: vec![
                    (
                        Stmt::Atomic {
                            result,
                            place: cell,
                            fun: AtomicOp::Exchange,
                            value: new,
                            compare: Some(old_value),
                        },
                        site,
                    ),
                    (
                        Stmt::If {
                            condition: exchanged,
                            accept: vec![(Stmt::Break, site)],
                            reject: Vec::new(),
                        },
                        site,
                    ),
                    (
                        Stmt::Store {
                            place: old_place,
                            value: old_again,
                        },
                        site,
                    ),
                ],
                continuing: Vec::new(),
                bound: None,
            },
            site,
        ),
    ]
}
