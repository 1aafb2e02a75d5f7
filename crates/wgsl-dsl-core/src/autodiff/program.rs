//! The symbolic program: what [`super::symbolic`] executes a primal kernel into, and what
//! every later step of kernel AD reads (the proofs of [`super::exclusive`] and
//! [`super::overwrite`]) and emits (the passes of [`super::backward`], [`super::loops`] and
//! [`super::shared`]). Data only: the types and the queries over them that need nothing else.

use crate::exp::{NodeRef, PlaceRef};
use crate::handle::{GlobalHandle, ValueId};
use crate::site::CallSite;
use crate::types::Ty;

/// A statement of the symbolic program.
#[derive(Debug, Clone)]
pub(crate) enum Item {
    /// `let id = value;` (a `let` of the primal, or the value of a `var` after a store).
    Let {
        id: ValueId,
        name: String,
        value: NodeRef,
        site: CallSite,
    },
    /// A store of `value` into an output element (`adds`: an addition into it,
    /// `atomic_add_f32`); `seed` is the same element of the output's incoming gradient.
    /// An addition is never overwritten and proves no ownership of the element (several
    /// invocations may add into it).
    Output {
        seed: PlaceRef,
        value: NodeRef,
        adds: bool,
        site: CallSite,
    },
    /// `if condition { then } else { otherwise }`, and the values the branches leave
    /// different.
    If {
        condition: NodeRef,
        then: Vec<Item>,
        otherwise: Vec<Item>,
        merges: Vec<Merge>,
        site: CallSite,
    },
    /// A loop whose trip count is known only at run time, bounded by its author
    /// ([`Loop`], emitted by [`super::loops`]).
    Loop(Box<Loop>),
    /// A load, store or barrier of workgroup memory ([`Shared`], emitted by [`super::shared`]).
    Shared(Box<Shared>),
}

/// A value an `if`'s branches leave different: `id` after the `if`, `var` in the derived
/// code (assigned `then_value` or `else_value` at the end of each branch).
#[derive(Debug, Clone)]
pub(crate) struct Merge {
    pub id: ValueId,
    pub var: ValueId,
    pub name: String,
    pub ty: Ty,
    pub then_value: NodeRef,
    pub else_value: NodeRef,
}

/// What a global of the primal kernel becomes in the derived one.
#[derive(Debug, Clone, Copy)]
pub(crate) enum GlobalRole {
    /// A differentiable input, redeclared read-only at this handle.
    Input(GlobalHandle),
    /// An output; its incoming gradient is at this handle.
    Output(GlobalHandle),
    /// Data the derivative reads (uniforms, integer buffers, inputs not differentiated),
    /// redeclared at this handle. `written`: the primal kernel stores into it (the derived
    /// kernel does not, and cannot read it).
    Data { handle: GlobalHandle, written: bool },
    /// A workgroup variable, redeclared ([`super::shared`]).
    Workgroup(Workgroup),
}

/// A loop-carried value: a `var` of the primal stored into by the loop's body.
#[derive(Debug, Clone)]
pub(crate) struct Carried {
    pub name: String,
    pub ty: Ty,
    /// The derived kernel's `var` of it in the forward pass.
    pub var: ValueId,
    /// Its tape: `array<ty, max_iterations>`.
    pub tape: ValueId,
    /// Its value at the start of an iteration (a `let` in the loop's body).
    pub phi: ValueId,
    /// Its value after the loop.
    pub exit: ValueId,
    /// Its value before the loop.
    pub init: NodeRef,
    /// Its value at the end of an iteration (in terms of the body's values and `phi`).
    pub next: NodeRef,
}

/// A run-time loop of the symbolic program.
#[derive(Debug, Clone)]
pub(crate) struct Loop {
    pub carried: Vec<Carried>,
    /// The exit test: the loop ends when it is true (checked before each iteration).
    pub exit: NodeRef,
    pub body: Vec<Item>,
    pub max_iterations: u32,
    /// The iteration counter `var` of the forward pass.
    pub counter: ValueId,
    /// The iterations run (a `let` after the forward pass's loop).
    pub count: ValueId,
    /// Its number (1-based) among the kernel's bounded loops: the flag's value.
    pub number: u32,
    /// The iteration-limit flag (set by [`number_loops`]).
    pub flag: Option<GlobalHandle>,
    pub site: CallSite,
}

/// A workgroup-memory operation of the symbolic program.
#[derive(Debug, Clone)]
pub(crate) enum Shared {
    /// `let id = place;` (saved in `var`).
    Load {
        id: ValueId,
        var: ValueId,
        name: String,
        place: PlaceRef,
        /// The adjoint array of the place's workgroup array, if it is differentiated.
        adjoint: Option<GlobalHandle>,
        site: CallSite,
    },
    /// `place = value;`.
    Store {
        place: PlaceRef,
        value: NodeRef,
        adjoint: Option<GlobalHandle>,
        site: CallSite,
    },
    /// A barrier.
    Barrier {
        barrier: naga::Barrier,
        site: CallSite,
    },
}

/// A workgroup array of the primal in the derived kernel: its copy, and the adjoint array of
/// an `array<f32, N>`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Workgroup {
    pub handle: GlobalHandle,
    pub adjoint: Option<GlobalHandle>,
}

impl Loop {
    /// Every node a loop reads outside its body's items (for the walks over items).
    pub(crate) fn roots(&self) -> Vec<NodeRef> {
        let mut v = vec![self.exit.clone()];
        for c in &self.carried {
            v.push(c.init.clone());
            v.push(c.next.clone());
        }
        v
    }
}

impl Shared {
    /// The nodes a workgroup operation reads (for the walks over items).
    pub(crate) fn roots(&self) -> Vec<NodeRef> {
        let mut v = Vec::new();
        match self {
            Shared::Load { place, .. } => crate::exp::place_indices(place, &mut v),
            Shared::Store { place, value, .. } => {
                crate::exp::place_indices(place, &mut v);
                v.push(value.clone());
            }
            Shared::Barrier { .. } => {}
        }
        v
    }
}

/// True if `items` hold a workgroup operation (the primal pass must run them).
pub(crate) fn has_shared(items: &[Item]) -> bool {
    items.iter().any(|i| match i {
        Item::Shared(_) => true,
        Item::If {
            then, otherwise, ..
        } => has_shared(then) || has_shared(otherwise),
        Item::Loop(l) => has_shared(&l.body),
        _ => false,
    })
}
