//! Statements recorded by the builder: what lowering turns into a `naga::Block`.

use crate::exp::{NodeRef, PlaceRef};
use crate::handle::{FunctionHandle, ValueId};
use crate::site::CallSite;
use crate::types::Ty;

#[derive(Clone, Debug)]
pub(crate) enum Stmt {
    /// `let name = value;` bound to id.
    Let {
        id: ValueId,
        name: String,
        value: NodeRef,
    },
    /// `var name: ty;`, with the store `init` says.
    Var {
        id: ValueId,
        name: String,
        ty: Ty,
        init: VarInit,
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
        /// The bound stated with [`KernelBuilder::max_iterations`](crate::KernelBuilder::max_iterations)
        /// for this loop (kernel AD derives it as a loop of a run-time trip count); `None`
        /// otherwise. Not lowered: the kernel itself is unchanged.
        bound: Option<u32>,
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
    /// `place += value` on the `f32` whose bits the `atomic<u32>` at `place` holds
    /// ([`KernelBuilder::atomic_add_f32`](super::KernelBuilder::atomic_add_f32)): lowered to
    /// a compare-exchange loop ([`atomic_add_f32_loop`](super::collective::atomic_add_f32_loop)),
    /// kept as one statement so that kernel AD sees the addition.
    AtomicAddF32 {
        place: PlaceRef,
        value: NodeRef,
    },
    /// `coopStore`/`coopStoreT`: `value` written from `place` on, rows or columns `stride`
    /// elements apart.
    CoopStore {
        value: NodeRef,
        place: PlaceRef,
        stride: NodeRef,
        row_major: bool,
    },
    /// `loop { body continuing { continuing; break if break_if; } }`: `break_if` is evaluated
    /// at the end of the continuing block, in its scope.
    LoopBreakIf {
        body: Vec<(Stmt, CallSite)>,
        continuing: Vec<(Stmt, CallSite)>,
        break_if: NodeRef,
        /// As [`Stmt::Loop`]'s.
        bound: Option<u32>,
    },
    /// `switch selector { case values: { body } ... default: { body } }`.
    Switch {
        selector: NodeRef,
        cases: Vec<SwitchArm>,
    },
    /// A mistake found while recording, reported by `build` at the statement's site.
    Invalid(String),
    /// `textureStore(texture, coords, value);` (WGSL spec §17.7.6)
    TextureStore {
        texture: PlaceRef,
        coords: NodeRef,
        value: NodeRef,
    },
    /// `let result = workgroupUniformLoad(&place);`
    WorkgroupUniformLoad {
        result: ValueId,
        place: PlaceRef,
    },
    /// `debug_print(format, args)`: lowered only into the interpreter's module (a call of an
    /// empty function), dropped from the GPU's. `pieces` are the format string's literal
    /// parts around its placeholders (`args.len() + 1` of them).
    DebugPrint {
        pieces: Vec<String>,
        args: Vec<NodeRef>,
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

impl Stmt {
    /// A copy of this statement with each of its nested blocks (an `if`'s branches, a loop's
    /// body and continuing block, a `switch`'s arms) replaced by `f` of it; a statement with
    /// no nested block is cloned.
    pub(crate) fn try_map_blocks<E>(
        &self,
        mut f: impl FnMut(&[(Stmt, CallSite)]) -> Result<Vec<(Stmt, CallSite)>, E>,
    ) -> Result<Stmt, E> {
        Ok(match self {
            Stmt::If {
                condition,
                accept,
                reject,
            } => Stmt::If {
                condition: condition.clone(),
                accept: f(accept)?,
                reject: f(reject)?,
            },
            Stmt::Loop {
                body,
                continuing,
                bound,
            } => Stmt::Loop {
                body: f(body)?,
                continuing: f(continuing)?,
                bound: *bound,
            },
            Stmt::LoopBreakIf {
                body,
                continuing,
                break_if,
                bound,
            } => Stmt::LoopBreakIf {
                body: f(body)?,
                continuing: f(continuing)?,
                break_if: break_if.clone(),
                bound: *bound,
            },
            Stmt::Switch { selector, cases } => Stmt::Switch {
                selector: selector.clone(),
                cases: cases
                    .iter()
                    .map(|arm| {
                        Ok(SwitchArm {
                            values: arm.values.clone(),
                            default: arm.default,
                            body: f(&arm.body)?,
                            site: arm.site,
                        })
                    })
                    .collect::<Result<_, E>>()?,
            },
            // No nested block (a new statement with one adds its arm above).
            other => other.clone(),
        })
    }
}

/// The store a [`Stmt::Var`] makes where it is declared.
#[derive(Clone, Debug)]
pub(crate) enum VarInit {
    /// `name = value;`
    Value(NodeRef),
    /// `name = T();`: the zero value, stored explicitly.
    Zero,
    /// No store (WGSL still zero-initialises the `var`): for a `var` every path assigns
    /// before reading.
    Declared,
}

/// One arm of a [`Stmt::Switch`]: its case values (empty for `default`), and its body.
#[derive(Clone, Debug)]
pub(crate) struct SwitchArm {
    pub values: Vec<crate::exp::Lit>,
    pub default: bool,
    pub body: Vec<(Stmt, CallSite)>,
    pub site: CallSite,
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
    /// `subgroupBroadcast`, `subgroupShuffleXor/Up/Down`, `quadBroadcast`: the lane (or
    /// mask, delta, quad index) is `index`.
    Gather(GatherKind),
    /// `quadSwapX/Y/Diagonal`.
    QuadSwap(naga::Direction),
    /// `subgroupBallot(arg)`: the result is a `vec4<u32>`.
    Ballot,
}

/// A gather whose lane comes from the `index` operand.
#[derive(Clone, Copy, Debug)]
pub(crate) enum GatherKind {
    Broadcast,
    ShuffleXor,
    ShuffleUp,
    ShuffleDown,
    QuadBroadcast,
}
