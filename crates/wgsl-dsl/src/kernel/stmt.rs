//! Statements recorded by the builder: what lowering turns into a `naga::Block`.

use crate::exp::{NodeRef, PlaceRef};
use crate::handle::{FunctionHandle, ValueId};
use crate::site::CallSite;
use crate::types::Ty;

#[derive(Debug)]
pub(crate) enum Stmt {
    /// `let name = value;` bound to id.
    Let {
        id: ValueId,
        name: String,
        value: NodeRef,
    },
    /// `var name: ty = init;`
    Var {
        id: ValueId,
        name: String,
        ty: Ty,
        init: Option<NodeRef>,
    },
    Store {
        place: PlaceRef,
        value: NodeRef,
    },
    If {
        condition: NodeRef,
        accept: Vec<(Stmt, CallSite)>,
        reject: Vec<(Stmt, CallSite)>,
    },
    Loop {
        body: Vec<(Stmt, CallSite)>,
        continuing: Vec<(Stmt, CallSite)>,
    },
    Break,
    Continue,
    Return(Option<NodeRef>),
    Barrier(naga::Barrier),
    Call {
        result: ValueId,
        function: FunctionHandle,
        args: Vec<NodeRef>,
    },
    Atomic {
        result: ValueId,
        place: PlaceRef,
        fun: AtomicOp,
        value: NodeRef,
        /// The `cmp` operand of `atomicCompareExchangeWeak`.
        compare: Option<NodeRef>,
    },
    /// `coopStore`/`coopStoreT`: `value` written from `place` on, rows or columns `stride`
    /// elements apart.
    CoopStore {
        value: NodeRef,
        place: PlaceRef,
        stride: NodeRef,
        row_major: bool,
    },
    Subgroup {
        result: ValueId,
        op: SubgroupOp,
        arg: NodeRef,
        /// The lane of `subgroupShuffle`.
        index: Option<NodeRef>,
        ty: Ty,
    },
}

#[derive(Clone, Copy, Debug)]
pub(crate) enum AtomicOp {
    Add,
    Sub,
    Min,
    Max,
    And,
    Or,
    Xor,
    Exchange,
}

impl AtomicOp {
    pub(crate) fn naga(
        self,
        compare: Option<naga::Handle<naga::Expression>>,
    ) -> naga::AtomicFunction {
        use naga::AtomicFunction as F;
        match self {
            AtomicOp::Add => F::Add,
            AtomicOp::Sub => F::Subtract,
            AtomicOp::Min => F::Min,
            AtomicOp::Max => F::Max,
            AtomicOp::And => F::And,
            AtomicOp::Or => F::InclusiveOr,
            AtomicOp::Xor => F::ExclusiveOr,
            AtomicOp::Exchange => F::Exchange { compare },
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub(crate) enum SubgroupOp {
    Collective(naga::SubgroupOperation, naga::CollectiveOperation),
    BroadcastFirst,
    Shuffle,
}
