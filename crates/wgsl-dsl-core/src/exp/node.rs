//! The untyped core under [`Exp<T>`](super::Exp): what lowering consumes.

use std::rc::Rc;

use crate::handle::{FunctionId, GlobalHandle, ValueId};
use crate::site::CallSite;
use crate::types::Ty;

/// Deepest expression tree lowered or const-evaluated: both walk a [`Node`] tree recursively.
pub(crate) const MAX_DEPTH: usize = 2048;

/// A literal value. `F32` keeps the bits so that `-0.0` and NaN stay distinguishable.
#[derive(Clone, Copy, Debug, PartialEq)]
#[doc(hidden)]
pub enum Lit {
    Bool(bool),
    I32(i32),
    U32(u32),
    F32(f32),
    #[cfg_attr(not(feature = "f16"), allow(dead_code))]
    F16(u16),
}

/// Values the entry point receives from the pipeline (WGSL spec §13.3.1.1 "Built-in Values").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BuiltinValue {
    /// `global_invocation_id`: `vec3<u32>`
    GlobalInvocationId,
    /// `local_invocation_id`: `vec3<u32>`
    LocalInvocationId,
    /// `local_invocation_index`: `u32`
    LocalInvocationIndex,
    /// `workgroup_id`: `vec3<u32>`
    WorkgroupId,
    /// `num_workgroups`: `vec3<u32>`
    NumWorkgroups,
    /// `subgroup_size`: `u32` (needs the subgroup capability)
    SubgroupSize,
    /// `subgroup_invocation_id`: `u32` (needs the subgroup capability)
    SubgroupInvocationId,
}

impl BuiltinValue {
    pub(crate) fn naga(self) -> naga::BuiltIn {
        match self {
            BuiltinValue::GlobalInvocationId => naga::BuiltIn::GlobalInvocationId,
            BuiltinValue::LocalInvocationId => naga::BuiltIn::LocalInvocationId,
            BuiltinValue::LocalInvocationIndex => naga::BuiltIn::LocalInvocationIndex,
            BuiltinValue::WorkgroupId => naga::BuiltIn::WorkGroupId,
            BuiltinValue::NumWorkgroups => naga::BuiltIn::NumWorkGroups,
            BuiltinValue::SubgroupSize => naga::BuiltIn::SubgroupSize,
            BuiltinValue::SubgroupInvocationId => naga::BuiltIn::SubgroupInvocationId,
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            BuiltinValue::GlobalInvocationId => "global_id",
            BuiltinValue::LocalInvocationId => "local_id",
            BuiltinValue::LocalInvocationIndex => "local_index",
            BuiltinValue::WorkgroupId => "workgroup_id",
            BuiltinValue::NumWorkgroups => "num_workgroups",
            BuiltinValue::SubgroupSize => "subgroup_size",
            BuiltinValue::SubgroupInvocationId => "subgroup_invocation_id",
        }
    }
}

/// An expression node. Immutable once built; shared by `Rc`.
#[derive(Debug)]
#[doc(hidden)]
pub struct Node {
    pub kind: ExprKind,
    pub ty: Ty,
    pub site: CallSite,
}

#[doc(hidden)]
pub type NodeRef = Rc<Node>;

#[derive(Debug)]
#[doc(hidden)]
pub enum ExprKind {
    Literal(Lit),
    Binary(naga::BinaryOperator, NodeRef, NodeRef),
    Unary(naga::UnaryOperator, NodeRef),
    Math(naga::MathFunction, Vec<NodeRef>),
    Relational(naga::RelationalFunction, NodeRef),
    Select {
        condition: NodeRef,
        accept: NodeRef,
        reject: NodeRef,
    },
    /// `As`: conversion (`convert = Some(width)`) or bitcast (`None`).
    As {
        value: NodeRef,
        kind: naga::ScalarKind,
        convert: Option<u8>,
    },
    Compose(Vec<NodeRef>),
    Splat(naga::VectorSize, NodeRef),
    Swizzle(naga::VectorSize, [naga::SwizzleComponent; 4], NodeRef),
    /// Constant index into a vector, array or struct value.
    AccessIndex(NodeRef, u32),
    /// Dynamic index into a vector or array value.
    Access(NodeRef, NodeRef),
    Load(PlaceRef),
    ArrayLength(PlaceRef),
    Builtin(BuiltinValue),
    /// A value bound by `let` (or produced by a statement: call, atomic, subgroup op).
    Bound(ValueId),
    /// Parameter `index` of the helper function `function`.
    Param {
        function: FunctionId,
        index: u32,
    },
    ZeroValue,
    /// `coopLoad`/`coopLoadT`: a cooperative matrix (the node's type) read from `place`, a
    /// pointer to its first element, rows or columns `stride` elements apart.
    CoopLoad {
        place: PlaceRef,
        stride: NodeRef,
        row_major: bool,
    },
    /// `coopMultiplyAdd(a, b, c)`: `a * b + c`.
    CoopMultiplyAdd(NodeRef, NodeRef, NodeRef),
    /// `textureLoad(texture, coords[, level])` (WGSL spec §17.7.4); `level` for a
    /// `texture_2d`, none for a storage texture.
    TextureLoad {
        texture: PlaceRef,
        coords: NodeRef,
        level: Option<NodeRef>,
    },
    /// `textureDimensions(texture[, level])` (WGSL spec §17.7.1).
    TextureDimensions {
        texture: PlaceRef,
        level: Option<NodeRef>,
    },
    /// An error recorded at construction time, reported when the kernel is built.
    Invalid(String),
}

/// A memory location (a WGSL reference/pointer): what `store` writes and `load` reads.
#[derive(Debug)]
#[doc(hidden)]
pub struct PlaceNode {
    pub kind: PlaceKind,
    /// The type stored at this place.
    pub ty: Ty,
    pub site: CallSite,
}

#[doc(hidden)]
pub type PlaceRef = Rc<PlaceNode>;

#[derive(Debug)]
#[doc(hidden)]
pub enum PlaceKind {
    /// A binding or workgroup variable.
    Global(GlobalHandle),
    /// A `var`.
    Local(ValueId),
    Index(PlaceRef, NodeRef),
    Field(PlaceRef, u32),
}

/// True if evaluating `node` can be observed only through its value: it reads no memory
/// (no `Load`, cooperative or texture load) and indexes nothing with a run-time index (which
/// the interpreter checks, and may find out of bounds). Such an operand can be evaluated
/// eagerly where Rust would not evaluate it (`&&`, `||`, the arms of an `if` value) without
/// anything differing; any other is evaluated only where Rust evaluates it. Expression trees
/// have no other effects: calls, atomics and subgroup operations are statements, their
/// results [`ExprKind::Bound`] values.
pub(crate) fn is_pure(node: &NodeRef) -> bool {
    let mut seen = std::collections::HashSet::new();
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        if !seen.insert(Rc::as_ptr(n)) {
            continue;
        }
        match &n.kind {
            ExprKind::Load(_)
            | ExprKind::CoopLoad { .. }
            | ExprKind::TextureLoad { .. }
            | ExprKind::Access(..) => return false,
            ExprKind::Literal(_)
            | ExprKind::Builtin(_)
            | ExprKind::Bound(_)
            | ExprKind::Param { .. }
            | ExprKind::ZeroValue
            | ExprKind::ArrayLength(_)
            | ExprKind::TextureDimensions { level: None, .. }
            | ExprKind::Invalid(_) => {}
            ExprKind::TextureDimensions { level: Some(l), .. } => stack.push(l),
            ExprKind::Binary(_, a, b) => stack.extend([a, b]),
            ExprKind::Unary(_, a)
            | ExprKind::Relational(_, a)
            | ExprKind::As { value: a, .. }
            | ExprKind::Splat(_, a)
            | ExprKind::Swizzle(_, _, a)
            | ExprKind::AccessIndex(a, _) => stack.push(a),
            ExprKind::Math(_, args) | ExprKind::Compose(args) => stack.extend(args),
            ExprKind::Select {
                condition,
                accept,
                reject,
            } => stack.extend([condition, accept, reject]),
            ExprKind::CoopMultiplyAdd(a, b, c) => stack.extend([a, b, c]),
        }
    }
    true
}

/// The index expressions of a place (outermost last).
pub(crate) fn place_indices(place: &PlaceRef, out: &mut Vec<NodeRef>) {
    match &place.kind {
        PlaceKind::Index(base, index) => {
            place_indices(base, out);
            out.push(index.clone());
        }
        PlaceKind::Field(base, _) => place_indices(base, out),
        PlaceKind::Global(_) | PlaceKind::Local(_) => {}
    }
}

/// The operands of a node, the indices of the places it reads included.
pub(crate) fn operands(n: &NodeRef) -> Vec<NodeRef> {
    let mut v = Vec::new();
    let place = |p: &PlaceRef, v: &mut Vec<NodeRef>| place_indices(p, v);
    match &n.kind {
        ExprKind::Binary(_, a, b) | ExprKind::Access(a, b) => v.extend([a.clone(), b.clone()]),
        ExprKind::Unary(_, a)
        | ExprKind::Relational(_, a)
        | ExprKind::As { value: a, .. }
        | ExprKind::Splat(_, a)
        | ExprKind::Swizzle(_, _, a)
        | ExprKind::AccessIndex(a, _) => v.push(a.clone()),
        ExprKind::Math(_, args) | ExprKind::Compose(args) => v.extend(args.iter().cloned()),
        ExprKind::Select {
            condition,
            accept,
            reject,
        } => v.extend([condition.clone(), accept.clone(), reject.clone()]),
        ExprKind::Load(p) | ExprKind::ArrayLength(p) => place(p, &mut v),
        ExprKind::CoopLoad {
            place: p, stride, ..
        } => {
            v.push(stride.clone());
            place(p, &mut v);
        }
        ExprKind::CoopMultiplyAdd(a, b, c) => v.extend([a.clone(), b.clone(), c.clone()]),
        ExprKind::TextureLoad { coords, level, .. } => {
            v.push(coords.clone());
            v.extend(level.iter().cloned());
        }
        ExprKind::TextureDimensions { level, .. } => v.extend(level.iter().cloned()),
        ExprKind::Literal(_)
        | ExprKind::Builtin(_)
        | ExprKind::Bound(_)
        | ExprKind::Param { .. }
        | ExprKind::ZeroValue
        | ExprKind::Invalid(_) => {}
    }
    v
}
