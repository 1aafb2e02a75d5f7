//! The kinds of the nodes a builder recorded, by name: what the differential fuzzer
//! (`crates/wgsl-dsl-fuzz`) checks its generator against ("every expression and statement kind
//! is generated"). Not part of the DSL's interface.

use std::collections::{BTreeSet, HashSet};

use super::KernelBuilder;
use super::stmt::{Stmt, VarInit};
use crate::exp::{ExprKind, Node, NodeRef, PlaceRef};
use crate::site::CallSite;

/// Every expression kind's name, as [`KernelBuilder::node_kinds`] writes it (`expr::` and the
/// variant of the builder's untyped expression node).
#[doc(hidden)]
pub const EXPR_KINDS: &[&str] = &[
    "expr::Literal",
    "expr::Binary",
    "expr::Unary",
    "expr::Math",
    "expr::Relational",
    "expr::Select",
    "expr::As",
    "expr::Compose",
    "expr::Splat",
    "expr::Swizzle",
    "expr::AccessIndex",
    "expr::Access",
    "expr::Load",
    "expr::ArrayLength",
    "expr::Builtin",
    "expr::Bound",
    "expr::Param",
    "expr::ZeroValue",
    "expr::CoopLoad",
    "expr::CoopMultiplyAdd",
    "expr::TextureLoad",
    "expr::TextureDimensions",
    "expr::Invalid",
];

/// Every statement kind's name (`stmt::` and the variant of the builder's statement) that
/// reaches the GPU: `stmt::DebugPrint` (`debug_print`, which only the interpreter's module
/// has, and which changes no buffer) is not listed, so the differential fuzzer, which compares
/// the executors' buffers, is not asked to generate it.
#[doc(hidden)]
pub const STMT_KINDS: &[&str] = &[
    "stmt::Let",
    "stmt::Var",
    "stmt::Store",
    "stmt::If",
    "stmt::Loop",
    "stmt::Break",
    "stmt::Continue",
    "stmt::Return",
    "stmt::Barrier",
    "stmt::Call",
    "stmt::Atomic",
    "stmt::AtomicAddF32",
    "stmt::CoopStore",
    "stmt::LoopBreakIf",
    "stmt::Switch",
    "stmt::Invalid",
    "stmt::TextureStore",
    "stmt::WorkgroupUniformLoad",
    "stmt::Subgroup",
];

fn expr_kind(kind: &ExprKind) -> &'static str {
    match kind {
        ExprKind::Literal(_) => "expr::Literal",
        ExprKind::Binary(..) => "expr::Binary",
        ExprKind::Unary(..) => "expr::Unary",
        ExprKind::Math(..) => "expr::Math",
        ExprKind::Relational(..) => "expr::Relational",
        ExprKind::Select { .. } => "expr::Select",
        ExprKind::As { .. } => "expr::As",
        ExprKind::Compose(_) => "expr::Compose",
        ExprKind::Splat(..) => "expr::Splat",
        ExprKind::Swizzle(..) => "expr::Swizzle",
        ExprKind::AccessIndex(..) => "expr::AccessIndex",
        ExprKind::Access(..) => "expr::Access",
        ExprKind::Load(_) => "expr::Load",
        ExprKind::ArrayLength(_) => "expr::ArrayLength",
        ExprKind::Builtin(_) => "expr::Builtin",
        ExprKind::Bound(_) => "expr::Bound",
        ExprKind::Param { .. } => "expr::Param",
        ExprKind::ZeroValue => "expr::ZeroValue",
        ExprKind::CoopLoad { .. } => "expr::CoopLoad",
        ExprKind::CoopMultiplyAdd(..) => "expr::CoopMultiplyAdd",
        ExprKind::TextureLoad { .. } => "expr::TextureLoad",
        ExprKind::TextureDimensions { .. } => "expr::TextureDimensions",
        ExprKind::Invalid(_) => "expr::Invalid",
    }
}

fn stmt_kind(stmt: &Stmt) -> &'static str {
    match stmt {
        Stmt::Let { .. } => "stmt::Let",
        Stmt::Var { .. } => "stmt::Var",
        Stmt::Store { .. } => "stmt::Store",
        Stmt::If { .. } => "stmt::If",
        Stmt::Loop { .. } => "stmt::Loop",
        Stmt::Break => "stmt::Break",
        Stmt::Continue => "stmt::Continue",
        Stmt::Return(_) => "stmt::Return",
        Stmt::Barrier(_) => "stmt::Barrier",
        Stmt::Call { .. } => "stmt::Call",
        Stmt::Atomic { .. } => "stmt::Atomic",
        Stmt::AtomicAddF32 { .. } => "stmt::AtomicAddF32",
        Stmt::CoopStore { .. } => "stmt::CoopStore",
        Stmt::LoopBreakIf { .. } => "stmt::LoopBreakIf",
        Stmt::Switch { .. } => "stmt::Switch",
        Stmt::Invalid(_) => "stmt::Invalid",
        Stmt::TextureStore { .. } => "stmt::TextureStore",
        Stmt::WorkgroupUniformLoad { .. } => "stmt::WorkgroupUniformLoad",
        Stmt::Subgroup { .. } => "stmt::Subgroup",
        Stmt::DebugPrint { .. } => "stmt::DebugPrint",
    }
}

/// Collects kinds, visiting each shared node once.
#[derive(Default)]
struct Walk {
    kinds: BTreeSet<&'static str>,
    seen: HashSet<*const Node>,
}

impl Walk {
    fn expr(&mut self, node: &NodeRef) {
        if !self.seen.insert(std::rc::Rc::as_ptr(node)) {
            return;
        }
        self.kinds.insert(expr_kind(&node.kind));
        for operand in crate::exp::operands(node) {
            self.expr(&operand);
        }
    }

    /// The index expressions of `place` (places themselves have no kinds).
    fn place(&mut self, place: &PlaceRef) {
        let mut indices = Vec::new();
        crate::exp::place_indices(place, &mut indices);
        for index in &indices {
            self.expr(index);
        }
    }

    fn block(&mut self, block: &[(Stmt, CallSite)]) {
        for (stmt, _) in block {
            self.stmt(stmt);
        }
    }

    fn stmt(&mut self, stmt: &Stmt) {
        self.kinds.insert(stmt_kind(stmt));
        match stmt {
            Stmt::Let { value, .. } => self.expr(value),
            Stmt::Var { init, .. } => {
                if let VarInit::Value(v) = init {
                    self.expr(v);
                }
            }
            Stmt::Store { place, value } => {
                self.place(place);
                self.expr(value);
            }
            Stmt::If {
                condition,
                accept,
                reject,
            } => {
                self.expr(condition);
                self.block(accept);
                self.block(reject);
            }
            Stmt::Loop {
                body, continuing, ..
            } => {
                self.block(body);
                self.block(continuing);
            }
            Stmt::LoopBreakIf {
                body,
                continuing,
                break_if,
                ..
            } => {
                self.block(body);
                self.block(continuing);
                self.expr(break_if);
            }
            Stmt::Break
            | Stmt::Continue
            | Stmt::Barrier(_)
            | Stmt::Invalid(_)
            | Stmt::Return(None) => {}
            Stmt::Return(Some(v)) => self.expr(v),
            Stmt::Call { args, .. } => args.iter().for_each(|a| self.expr(a)),
            Stmt::Atomic {
                place,
                value,
                compare,
                ..
            } => {
                self.place(place);
                self.expr(value);
                compare.iter().for_each(|c| self.expr(c));
            }
            Stmt::AtomicAddF32 { place, value } => {
                self.place(place);
                self.expr(value);
            }
            Stmt::CoopStore {
                value,
                place,
                stride,
                ..
            } => {
                self.expr(value);
                self.place(place);
                self.expr(stride);
            }
            Stmt::Switch { selector, cases } => {
                self.expr(selector);
                for arm in cases {
                    self.block(&arm.body);
                }
            }
            Stmt::TextureStore {
                texture,
                coords,
                value,
            } => {
                self.place(texture);
                self.expr(coords);
                self.expr(value);
            }
            Stmt::WorkgroupUniformLoad { place, .. } => self.place(place),
            Stmt::Subgroup { arg, index, .. } => {
                self.expr(arg);
                index.iter().for_each(|i| self.expr(i));
            }
            Stmt::DebugPrint { args, .. } => args.iter().for_each(|a| self.expr(a)),
        }
    }
}

impl KernelBuilder {
    /// The kinds of every expression and statement node recorded so far, in the entry point
    /// and the helper functions, named as in [`EXPR_KINDS`] and [`STMT_KINDS`]. For the
    /// fuzzer's coverage test; not part of the DSL's interface.
    #[doc(hidden)]
    pub fn node_kinds(&self) -> BTreeSet<&'static str> {
        let mut walk = Walk::default();
        walk.block(self.entry_body());
        for f in &self.functions {
            walk.block(&f.body);
        }
        walk.kinds
    }
}
