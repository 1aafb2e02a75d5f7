//! What the builder records for differentiation (`crate::autodiff`) as it goes: the definition
//! of every statement result ([`ValueDef`]) and the loads derivatives treated as constants
//! ([`MemoryCheck`]). Plain data, below both the builder and `autodiff`, which reads it.

use crate::exp::{NodeRef, PlaceRef};
use crate::handle::{FunctionHandle, ValueId};
use crate::site::CallSite;

use super::stmt::{AtomicOp, Stmt, SubgroupOp};

/// What a [`ValueId`] names: recorded by `KernelBuilder::bind` for every statement result.
#[derive(Debug, Clone)]
pub(crate) enum ValueDef {
    /// `let name = value;`
    Let { name: String, value: NodeRef },
    /// The result of calling a helper function.
    Call {
        function: FunctionHandle,
        args: Vec<NodeRef>,
    },
    /// An atomic, subgroup operation or `workgroupUniformLoad`: differentiation does not see
    /// through it.
    Opaque {
        operation: String,
        operands: Vec<NodeRef>,
        place: Option<PlaceRef>,
    },
}

impl ValueDef {
    /// The value a statement defines and its definition, if it defines one.
    pub(crate) fn of(stmt: &Stmt) -> Option<(ValueId, ValueDef)> {
        let id = match stmt {
            Stmt::Let { id, .. } => *id,
            Stmt::Call { result, .. }
            | Stmt::Atomic { result, .. }
            | Stmt::Subgroup { result, .. }
            | Stmt::WorkgroupUniformLoad { result, .. } => *result,
            _ => return None,
        };
        let def = match stmt {
            Stmt::Let { name, value, .. } => ValueDef::Let {
                name: name.clone(),
                value: value.clone(),
            },
            Stmt::Call { function, args, .. } => ValueDef::Call {
                function: *function,
                args: args.clone(),
            },
            Stmt::Atomic {
                place,
                fun,
                value,
                compare,
                ..
            } => ValueDef::Opaque {
                operation: atomic_name(*fun, compare.is_some()).into(),
                operands: std::iter::once(value.clone())
                    .chain(compare.iter().cloned())
                    .collect(),
                place: Some(place.clone()),
            },
            Stmt::Subgroup { op, arg, index, .. } => ValueDef::Opaque {
                operation: subgroup_name(*op),
                operands: std::iter::once(arg.clone())
                    .chain(index.iter().cloned())
                    .collect(),
                place: None,
            },
            Stmt::WorkgroupUniformLoad { place, .. } => ValueDef::Opaque {
                operation: "workgroupUniformLoad".into(),
                operands: Vec::new(),
                place: Some(place.clone()),
            },
            _ => return None,
        };
        Some((id, def))
    }
}

fn atomic_name(op: AtomicOp, compare: bool) -> &'static str {
    match op {
        AtomicOp::Add => "atomicAdd",
        AtomicOp::Sub => "atomicSub",
        AtomicOp::Min => "atomicMin",
        AtomicOp::Max => "atomicMax",
        AtomicOp::And => "atomicAnd",
        AtomicOp::Or => "atomicOr",
        AtomicOp::Xor => "atomicXor",
        AtomicOp::Exchange if compare => "atomicCompareExchangeWeak",
        AtomicOp::Exchange => "atomicExchange",
    }
}

fn subgroup_name(op: SubgroupOp) -> String {
    use naga::{CollectiveOperation as C, SubgroupOperation as S};
    match op {
        SubgroupOp::Collective(s, c) => {
            let name = match s {
                S::All => "All",
                S::Any => "Any",
                S::Add => "Add",
                S::Mul => "Mul",
                S::Min => "Min",
                S::Max => "Max",
                S::And => "And",
                S::Or => "Or",
                S::Xor => "Xor",
            };
            match c {
                C::Reduce => format!("subgroup{name}"),
                C::InclusiveScan => format!("subgroupInclusive{name}"),
                C::ExclusiveScan => format!("subgroupExclusive{name}"),
            }
        }
        SubgroupOp::BroadcastFirst => "subgroupBroadcastFirst".into(),
        SubgroupOp::Shuffle => "subgroupShuffle".into(),
        SubgroupOp::Gather(g) => format!("subgroup gather {g:?}"),
        SubgroupOp::QuadSwap(d) => format!("quadSwap{d:?}"),
        SubgroupOp::Ballot => "subgroupBallot".into(),
    }
}

/// Loads a derivative treated as constants because nothing that depends on the variables was
/// stored where they read when it was taken: checked again by `build`, over every store.
#[derive(Debug)]
pub(crate) struct MemoryCheck {
    pub(crate) loads: Vec<NodeRef>,
    pub(crate) wrt: Vec<NodeRef>,
    pub(crate) site: CallSite,
}
