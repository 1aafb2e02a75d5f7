//! Kernel AD, step one: the primal kernel's body executed symbolically, once per invocation,
//! into a tree of [`Item`]s in SSA form.
//!
//! - A `var` is a value: each store makes its new value a `let` (loads of the `var` read the
//!   value last stored), so straight-line code needs no memory at all, and each value (and
//!   its adjoint) is computed once.
//! - An `if` whose condition is known when the kernel is built takes its branch; otherwise
//!   both branches are executed and each `var` they leave different becomes a *merge*: a
//!   `var` assigned at the end of each branch in the derived code, read once after the `if`.
//! - Loops are **unrolled**: their conditions (a `for` counter against its end, `break if`)
//!   must be known when the kernel is built, iteration after iteration (at most
//!   [`MAX_UNROLLED`] iterations); the loop-carried values are then ordinary SSA values.
//! - `return` sets a flag (a `var` too): the statements after an `if` that returns on some
//!   paths run under `if !returned`.
//! - Helper function calls are inlined: their parameters are the call's arguments, their
//!   `return value` a `var` of the call.
//! - Stores into an output binding are [`Item::Output`]s; loads of inputs stay loads (the
//!   derivative's variables); uniforms and non-differentiable buffers are constants.
//!
//! Workgroup memory and barriers: [`super::shared`]; loops bounded by their author:
//! [`super::loops`].
//!
//! Refused, each a `NotDifferentiable` at its Rust call site: barriers under run-time conditions,
//! atomics, subgroup operations, cooperative matrices, textures, reading an output (or a
//! buffer the kernel writes), stores into part of a `var`, loops whose trip count is not known
//! when the kernel is built, `break`/`continue`/`return` under such conditions inside loops,
//! `switch` on a value known only at run time.

use std::collections::HashMap;
use std::rc::Rc;

mod runtime_loop;

use super::error::NotDifferentiable;
use super::make::{At, node};
use super::program::{GlobalRole, Item, Merge, Shared};
use super::subst::{Rewrite, rebuild};
use crate::exp::{ExprKind, Lit, NodeRef, PlaceKind, PlaceNode, PlaceRef};
use crate::handle::{FunctionId, ValueId};
use crate::kernel::KernelBuilder;
use crate::kernel::stmt::{Stmt, VarInit};
use crate::kernel::values::ValueDef;
use crate::site::CallSite;
use crate::types::{ScalarTy, Ty};

/// Most iterations one loop is unrolled to.
pub const MAX_UNROLLED: usize = 4096;

/// How control leaves a block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Flow {
    Normal,
    Break,
    Continue,
    Return,
    /// Some paths returned (the frame's `returned` flag says which).
    PartialReturn,
}

/// An inlined helper function call (or the entry point).
struct Frame {
    function: Option<FunctionId>,
    args: Vec<NodeRef>,
    /// The pseudo-`var` that says whether this frame returned.
    returned: ValueId,
    /// The pseudo-`var` of the returned value (helper functions).
    result: Option<ValueId>,
    /// Loops open in this frame.
    loops: usize,
}

pub(crate) struct Symbolic<'k> {
    k: &'k KernelBuilder,
    roles: Vec<GlobalRole>,
    /// The current value of every `var` (and pseudo-`var`) in scope.
    env: HashMap<ValueId, NodeRef>,
    /// Names and types of the `var`s.
    vars: HashMap<ValueId, (String, Ty)>,
    /// The `var`s in the order they were declared (merges are made in this order).
    var_order: Vec<ValueId>,
    /// Primal `let`s and call results: their values in the derived kernel.
    bound: HashMap<ValueId, NodeRef>,
    frames: Vec<Frame>,
    /// Loops bounded by `max_iterations` around the statement being rewritten.
    bounded_loops: u32,
    /// Definitions of the `let`s made, for differentiation.
    pub defs: HashMap<ValueId, ValueDef>,
    /// Nodes rewritten in the current statement.
    memo: HashMap<*const crate::exp::Node, NodeRef>,
    places: HashMap<*const PlaceNode, PlaceRef>,
    /// The statement being executed.
    site: CallSite,
    /// Loads of workgroup memory made while rewriting the current statement: `let`s put
    /// before its items.
    hoisted: Vec<Item>,
}

fn refuse(
    operation: impl Into<String>,
    reason: impl Into<String>,
    site: CallSite,
) -> NotDifferentiable {
    NotDifferentiable {
        operation: operation.into(),
        reason: reason.into(),
        site,
    }
}

fn bool_ty() -> Ty {
    Ty::Scalar(ScalarTy::Bool)
}

impl<'k> Symbolic<'k> {
    pub(crate) fn new(k: &'k KernelBuilder, roles: Vec<GlobalRole>) -> Self {
        Symbolic {
            k,
            roles,
            env: HashMap::new(),
            vars: HashMap::new(),
            var_order: Vec::new(),
            bound: HashMap::new(),
            frames: Vec::new(),
            bounded_loops: 0,
            defs: HashMap::new(),
            memo: HashMap::new(),
            places: HashMap::new(),
            site: k.site,
            hoisted: Vec::new(),
        }
    }

    /// The entry point's body as items.
    pub(crate) fn entry(&mut self) -> Result<Vec<Item>, NotDifferentiable> {
        let returned = self.pseudo_var("returned", bool_ty(), Lit::Bool(false));
        self.frames.push(Frame {
            function: None,
            args: Vec::new(),
            returned,
            result: None,
            loops: 0,
        });
        let (items, _) = self.block(self.k.entry_body())?;
        self.frames.pop();
        Ok(items)
    }

    fn pseudo_var(&mut self, name: &str, ty: Ty, init: Lit) -> ValueId {
        let id = ValueId::fresh();
        self.declare(id, name, ty.clone());
        self.env
            .insert(id, node(ExprKind::Literal(init), ty, self.site));
        id
    }

    fn declare(&mut self, id: ValueId, name: &str, ty: Ty) {
        // A `var` of an unrolled loop's body is declared once per iteration.
        if self.vars.insert(id, (name.to_string(), ty)).is_none() {
            self.var_order.push(id);
        }
    }

    fn frame(&mut self) -> &mut Frame {
        self.frames.last_mut().expect("a frame is open")
    }

    /// `value` as a literal where it is an integer or `bool` the kernel's build knows (loop
    /// counters, conditions): keeps unrolled indices short.
    fn fold(&self, value: NodeRef) -> NodeRef {
        if !matches!(
            value.ty,
            Ty::Scalar(ScalarTy::Bool | ScalarTy::I32 | ScalarTy::U32)
        ) {
            return value;
        }
        if matches!(value.kind, ExprKind::Literal(_)) {
            return value;
        }
        match crate::consteval::eval_tree(&value) {
            Ok(Some(crate::ConstValue::Bool(b))) => node(
                ExprKind::Literal(Lit::Bool(b)),
                value.ty.clone(),
                value.site,
            ),
            Ok(Some(crate::ConstValue::I32(v))) => {
                node(ExprKind::Literal(Lit::I32(v)), value.ty.clone(), value.site)
            }
            Ok(Some(crate::ConstValue::U32(v))) => {
                node(ExprKind::Literal(Lit::U32(v)), value.ty.clone(), value.site)
            }
            _ => value,
        }
    }

    /// The `bool` a condition has when the kernel is built, if it has one.
    fn known(&self, condition: &NodeRef) -> Option<bool> {
        match self.fold(condition.clone()).kind {
            ExprKind::Literal(Lit::Bool(b)) => Some(b),
            _ => None,
        }
    }

    /// The node of a value in the derived kernel: a `let` made here (named `name`), unless
    /// it is a literal or already a value.
    fn bind(
        &mut self,
        name: &str,
        value: NodeRef,
        site: CallSite,
        items: &mut Vec<Item>,
    ) -> NodeRef {
        let value = self.fold(value);
        if matches!(
            value.kind,
            ExprKind::Literal(_) | ExprKind::Bound(_) | ExprKind::ZeroValue | ExprKind::Builtin(_)
        ) {
            return value;
        }
        let id = ValueId::fresh();
        self.defs.insert(
            id,
            ValueDef::Let {
                name: name.to_string(),
                value: value.clone(),
            },
        );
        let ty = value.ty.clone();
        items.push(Item::Let {
            id,
            name: name.to_string(),
            value,
            site,
        });
        node(ExprKind::Bound(id), ty, site)
    }

    /// Rewrite a primal expression for the derived kernel, at the current statement.
    fn expr(&mut self, n: &NodeRef) -> Result<NodeRef, NotDifferentiable> {
        Rewrite::expr(self, n)
    }

    fn block(
        &mut self,
        stmts: &[(Stmt, CallSite)],
    ) -> Result<(Vec<Item>, Flow), NotDifferentiable> {
        let outer = std::mem::take(&mut self.hoisted);
        let result = self.block_items(stmts);
        self.hoisted = outer;
        result
    }

    fn block_items(
        &mut self,
        stmts: &[(Stmt, CallSite)],
    ) -> Result<(Vec<Item>, Flow), NotDifferentiable> {
        let mut items = Vec::new();
        for (i, (stmt, site)) in stmts.iter().enumerate() {
            self.site = *site;
            self.memo.clear();
            self.places.clear();
            let mut own = Vec::new();
            let flow = self.stmt(stmt, *site, &mut own)?;
            items.append(&mut self.hoisted);
            items.extend(own);
            match flow {
                Flow::Normal => {}
                Flow::Break | Flow::Continue | Flow::Return => return Ok((items, flow)),
                Flow::PartialReturn => {
                    let rest = &stmts[i + 1..];
                    if !rest.is_empty() {
                        let returned = self.frame().returned;
                        let flag = self.env[&returned].clone();
                        let alive = node(
                            ExprKind::Unary(naga::UnaryOperator::LogicalNot, flag),
                            bool_ty(),
                            *site,
                        );
                        // Some paths returned before the rest, whatever the rest does.
                        let (more, _) = self.branch(alive, rest, &[], *site)?;
                        items.extend(more);
                    }
                    return Ok((items, Flow::PartialReturn));
                }
            }
        }
        Ok((items, Flow::Normal))
    }

    /// `if condition { then } else { otherwise }` with `condition` already rewritten.
    fn branch(
        &mut self,
        condition: NodeRef,
        then: &[(Stmt, CallSite)],
        otherwise: &[(Stmt, CallSite)],
        site: CallSite,
    ) -> Result<(Vec<Item>, Flow), NotDifferentiable> {
        if let Some(taken) = self.known(&condition) {
            return self.block(if taken { then } else { otherwise });
        }
        let mut items = Vec::new();
        let condition = self.bind("condition", condition, site, &mut items);
        let before = self.env.clone();
        let (then_items, then_flow) = self.block(then)?;
        let after_then = std::mem::replace(&mut self.env, before.clone());
        let (else_items, else_flow) = self.block(otherwise)?;
        let after_else = std::mem::take(&mut self.env);
        // `if c { break }`: how `while`, `for` and `for_range` end a loop (or the author's own
        // exit): refused for the loop's trip count, at the line of the loop (or the `if`).
        if matches!(then, [(Stmt::Break, _)]) && otherwise.is_empty() {
            if self.bounded_loops > 0 {
                // A second exit inside a bounded loop (its first is its exit test).
                return Err(refuse(
                    "a `break` under a condition known only at run time",
                    "in a loop bounded by `k.max_iterations(n)` (`#[max_iterations(n)]`) only its first statement, \
                     `if c { break; }`, may leave it",
                    site,
                ));
            }
            return Err(unknown_trip_count(site));
        }
        for flow in [then_flow, else_flow] {
            if matches!(flow, Flow::Break | Flow::Continue) {
                return Err(refuse(
                    "a `break` or `continue` under a condition known only at run time",
                    "a loop without a stated bound is unrolled when the kernel is derived, so its \
                     trip count must be known when it is built (state the most iterations it \
                     runs with `k.max_iterations(n)` before it, `#[max_iterations(n)]` in a `#[kernel]`); in a bounded loop only its \
                     first statement, `if c { break; }`, may leave it",
                    site,
                ));
            }
        }
        let flow = match (then_flow, else_flow) {
            (Flow::Normal, Flow::Normal) => Flow::Normal,
            (Flow::Return, Flow::Return) => Flow::Return,
            _ => Flow::PartialReturn,
        };
        if flow == Flow::PartialReturn && self.frames.last().is_some_and(|f| f.loops > 0) {
            return Err(refuse(
                "a `return` under a condition known only at run time, inside a loop",
                "unrolled loops cannot stop on a value known only at run time",
                site,
            ));
        }
        // Values the branches leave different (of `var`s declared before the `if`).
        let mut merges = Vec::new();
        let mut env = before;
        let ids: Vec<ValueId> = self
            .var_order
            .iter()
            .copied()
            .filter(|id| env.contains_key(id))
            .collect();
        for id in ids {
            let (Some(t), Some(e)) = (after_then.get(&id), after_else.get(&id)) else {
                continue;
            };
            if Rc::ptr_eq(t, e) {
                env.insert(id, t.clone());
                continue;
            }
            let (name, ty) = self.vars[&id].clone();
            let m = ValueId::fresh();
            merges.push(Merge {
                id: m,
                var: ValueId::fresh(),
                name: name.clone(),
                ty: ty.clone(),
                then_value: t.clone(),
                else_value: e.clone(),
            });
            env.insert(id, node(ExprKind::Bound(m), ty, site));
        }
        self.env = env;
        items.push(Item::If {
            condition,
            then: then_items,
            otherwise: else_items,
            merges,
            site,
        });
        Ok((items, flow))
    }

    fn stmt(
        &mut self,
        stmt: &Stmt,
        site: CallSite,
        items: &mut Vec<Item>,
    ) -> Result<Flow, NotDifferentiable> {
        match stmt {
            Stmt::Let { id, name, value } => {
                let v = self.expr(value)?;
                let b = self.bind(name, v, site, items);
                self.bound.insert(*id, b);
            }
            Stmt::Var { id, name, ty, init } => {
                let value = match init {
                    VarInit::Value(v) => self.expr(v)?,
                    VarInit::Zero | VarInit::Declared => {
                        node(ExprKind::ZeroValue, ty.clone(), site)
                    }
                };
                let value = self.fold(value);
                self.declare(*id, name, ty.clone());
                self.env.insert(*id, value);
            }
            Stmt::Store { place, value } => self.store(place, value, site, items)?,
            Stmt::If {
                condition,
                accept,
                reject,
            } => {
                let c = self.expr(condition)?;
                let (more, flow) = self.branch(c, accept, reject, site)?;
                items.extend(more);
                return Ok(flow);
            }
            Stmt::Loop {
                body,
                continuing,
                bound,
            } => {
                if let Some(n) = *bound {
                    return self.runtime_loop(body, continuing, None, n, site, items);
                }
                return self.unroll(body, continuing, None, site, items);
            }
            Stmt::LoopBreakIf {
                body,
                continuing,
                break_if,
                bound,
            } => {
                if let Some(n) = *bound {
                    return self.runtime_loop(body, continuing, Some(break_if), n, site, items);
                }
                return self.unroll(body, continuing, Some(break_if), site, items);
            }
            Stmt::Break => return Ok(Flow::Break),
            Stmt::Continue => return Ok(Flow::Continue),
            Stmt::Return(value) => {
                if let Some(v) = value {
                    let v = self.expr(v)?;
                    if let Some(result) = self.frame().result {
                        self.env.insert(result, v);
                    }
                }
                let returned = self.frame().returned;
                self.env.insert(
                    returned,
                    node(ExprKind::Literal(Lit::Bool(true)), bool_ty(), site),
                );
                return Ok(Flow::Return);
            }
            Stmt::Call {
                result,
                function,
                args,
            } => {
                let value = self.call(*function, args, site, items)?;
                self.bound.insert(*result, value);
            }
            Stmt::Switch { selector, cases } => {
                let s = self.expr(selector)?;
                let s = self.fold(s);
                let ExprKind::Literal(lit) = s.kind else {
                    return Err(refuse(
                        "a `switch` on a value known only at run time",
                        "write it as `if`s (kernel AD takes `switch` only on values known when \
                         the kernel is built)",
                        site,
                    ));
                };
                let arm = cases
                    .iter()
                    .find(|a| a.values.contains(&lit))
                    .or_else(|| cases.iter().find(|a| a.default));
                if let Some(arm) = arm {
                    let (more, flow) = self.block(&arm.body)?;
                    items.extend(more);
                    return Ok(flow);
                }
            }
            // A print changes nothing the derivatives see; derived kernels have none (the
            // primal kernel keeps its own).
            Stmt::DebugPrint { .. } => {}
            Stmt::Barrier(barrier) => items.push(Item::Shared(Box::new(Shared::Barrier {
                barrier: *barrier,
                site,
            }))),
            // An atomic on data that is not differentiated (counters, histograms, flags): an
            // effect the derived kernel does not repeat, as the primal's other writes. Its
            // result (the old value, which depends on the order of the invocations) cannot be
            // used: a use is refused where it is.
            Stmt::Atomic { place, .. }
                if matches!(
                    base_root(place),
                    Root::Global(index)
                        if matches!(self.roles.get(index), Some(GlobalRole::Data { .. }))
                ) => {}
            Stmt::AtomicAddF32 { place, value } => match self.roles.get(match base_root(place) {
                Root::Global(index) => index,
                Root::Local => usize::MAX,
            }) {
                Some(GlobalRole::Output(_)) => {
                    let seed = as_f32_place(&self.place(place)?);
                    let value = self.expr(value)?;
                    items.push(Item::Output {
                        seed,
                        value,
                        adds: true,
                        site,
                    });
                }
                // Not differentiated (`no_diff`): an effect the derived kernel does not repeat.
                Some(GlobalRole::Data { .. }) => {}
                _ => {
                    return Err(refuse(
                        "an `f32` atomic addition into workgroup memory",
                        "kernel AD takes `atomic_add_f32` into storage buffers (outputs)",
                        site,
                    ));
                }
            },
            Stmt::Atomic { place, .. }
                if matches!(
                    base_root(place),
                    Root::Global(index)
                        if matches!(self.roles.get(index), Some(GlobalRole::Output(_)))
                ) =>
            {
                return Err(refuse(
                    "an integer atomic on an output added into",
                    "an `array<atomic<u32>>` output is derived when `atomic_add_f32` is all \
                     that writes it",
                    site,
                ));
            }
            Stmt::Atomic { .. } => {
                return Err(refuse(
                    "an atomic operation on workgroup memory",
                    "kernel AD takes atomics only on storage buffers it does not differentiate \
                     (integer counters, flags)",
                    site,
                ));
            }
            Stmt::Subgroup { .. } => {
                return Err(refuse(
                    "a subgroup operation",
                    "it has no derivative rule",
                    site,
                ));
            }
            Stmt::WorkgroupUniformLoad { .. } => {
                return Err(refuse(
                    "workgroupUniformLoad",
                    "kernels with workgroup memory are not derived; give the kernel a custom \
                     derivative (`Backward::custom`)",
                    site,
                ));
            }
            Stmt::CoopStore { .. } => {
                return Err(refuse(
                    "a cooperative-matrix store",
                    "cooperative matrices are not differentiated; give the kernel a custom \
                     derivative (`Backward::custom`)",
                    site,
                ));
            }
            Stmt::TextureStore { .. } => {
                return Err(refuse(
                    "a texture store",
                    "textures are not differentiated",
                    site,
                ));
            }
            Stmt::Invalid(message) => {
                return Err(refuse("an invalid statement", message.clone(), site));
            }
        }
        Ok(Flow::Normal)
    }

    fn store(
        &mut self,
        place: &PlaceRef,
        value: &NodeRef,
        site: CallSite,
        items: &mut Vec<Item>,
    ) -> Result<(), NotDifferentiable> {
        match &place.kind {
            PlaceKind::Local(id) => {
                // The new value is a `let` (named after the `var`): computed once in the
                // forward pass, its adjoint summed once in the reverse pass.
                let v = self.expr(value)?;
                let name = self
                    .vars
                    .get(id)
                    .map_or("value".to_string(), |(n, _)| n.clone());
                let v = self.bind(&name, v, site, items);
                self.env.insert(*id, v);
                Ok(())
            }
            PlaceKind::Index(base, _) | PlaceKind::Field(base, _)
                if matches!(base_root(base), Root::Local) =>
            {
                Err(refuse(
                    "a store into part of a `var`",
                    "kernel AD takes `var`s stored whole; build the new value (`vec3(..)`) and \
                     store it",
                    site,
                ))
            }
            _ => {
                let Root::Global(index) = base_root(place) else {
                    unreachable!("locals handled above")
                };
                match self.roles.get(index).copied() {
                    Some(GlobalRole::Output(_)) if matches!(place.ty, Ty::Atomic(_)) => {
                        Err(refuse(
                            "an atomic store into an output added into",
                            "an `array<atomic<u32>>` output is derived when `atomic_add_f32` \
                             is all that writes it",
                            site,
                        ))
                    }
                    Some(GlobalRole::Output(_)) => {
                        let seed = self.place(place)?;
                        let value = self.expr(value)?;
                        items.push(Item::Output {
                            seed,
                            value,
                            adds: false,
                            site,
                        });
                        Ok(())
                    }
                    // The derived kernel computes gradients only: the primal's other writes
                    // are not repeated.
                    Some(GlobalRole::Data { .. }) => Ok(()),
                    Some(GlobalRole::Workgroup(w)) => {
                        let place = self.place(place)?;
                        let value = self.expr(value)?;
                        items.push(Item::Shared(Box::new(Shared::Store {
                            place,
                            value,
                            adjoint: w.adjoint,
                            site,
                        })));
                        Ok(())
                    }
                    Some(GlobalRole::Input(_)) | None => Err(refuse(
                        "a store into a binding of another kernel",
                        "it is not a binding of the kernel derived",
                        site,
                    )),
                }
            }
        }
    }

    /// A loop, unrolled: its body and `continuing` block executed until a `break` (or the
    /// `break_if` condition) known when the kernel is built stops it.
    fn unroll(
        &mut self,
        body: &[(Stmt, CallSite)],
        continuing: &[(Stmt, CallSite)],
        break_if: Option<&NodeRef>,
        site: CallSite,
        items: &mut Vec<Item>,
    ) -> Result<Flow, NotDifferentiable> {
        self.frame().loops += 1;
        let result = (|| {
            for _ in 0..MAX_UNROLLED {
                let (more, flow) = self.block(body)?;
                items.extend(more);
                match flow {
                    Flow::Break => return Ok(Flow::Normal),
                    Flow::Return => return Ok(Flow::Return),
                    Flow::PartialReturn => unreachable!("refused inside loops by `branch`"),
                    Flow::Normal | Flow::Continue => {}
                }
                let (more, flow) = self.block(continuing)?;
                items.extend(more);
                if flow != Flow::Normal {
                    return Err(refuse(
                        "control flow in a loop's `continuing` block",
                        "it is not supported by kernel AD",
                        site,
                    ));
                }
                if let Some(b) = break_if {
                    self.memo.clear();
                    self.places.clear();
                    let c = self.expr(b)?;
                    match self.known(&c) {
                        Some(true) => return Ok(Flow::Normal),
                        Some(false) => {}
                        None => return Err(unknown_trip_count(site)),
                    }
                }
            }
            Err(refuse(
                "a loop",
                format!(
                    "it did not end within {MAX_UNROLLED} iterations when unrolled (loops are \
                     unrolled when the kernel is derived)"
                ),
                site,
            ))
        })();
        self.frame().loops -= 1;
        result
    }

    /// A call of a helper function, inlined: its body executed with the arguments for the
    /// parameters; the value it returns.
    fn call(
        &mut self,
        function: crate::handle::FunctionHandle,
        args: &[NodeRef],
        site: CallSite,
        items: &mut Vec<Item>,
    ) -> Result<NodeRef, NotDifferentiable> {
        let decl = (function.builder == self.k.id)
            .then(|| self.k.functions.get(function.index))
            .flatten()
            .ok_or_else(|| refuse("a call", "of a helper function of another kernel", site))?;
        let mut values = Vec::with_capacity(args.len());
        for a in args {
            let v = self.expr(a)?;
            values.push(self.bind(&format!("{}_arg", decl.name), v, site, items));
        }
        let result_ty = decl.result.clone().unwrap_or(bool_ty());
        let result = ValueId::fresh();
        self.declare(result, &format!("{}_result", decl.name), result_ty.clone());
        self.env
            .insert(result, node(ExprKind::ZeroValue, result_ty, site));
        let returned = self.pseudo_var(
            &format!("{}_returned", decl.name),
            bool_ty(),
            Lit::Bool(false),
        );
        self.frames.push(Frame {
            function: Some(decl.id),
            args: values,
            returned,
            result: Some(result),
            loops: 0,
        });
        let outcome = self.block(&decl.body);
        self.frames.pop();
        items.extend(outcome?.0);
        let value = self.env.remove(&result).expect("the result pseudo-var");
        self.env.remove(&returned);
        Ok(value)
    }
}

fn unknown_trip_count(site: CallSite) -> NotDifferentiable {
    refuse(
        "a loop whose trip count is not known when the kernel is built",
        "kernel AD unrolls loops that end on values known when the kernel is built (bounds \
         that are Rust constants or literals); for a loop that ends on a value read at run time \
         (a uniform, a buffer element, a value computed from them), state the most iterations \
         it runs: `k.max_iterations(n)` before it (`#[max_iterations(n)]` on the loop in a \
         `#[kernel]`; a tape per loop), or give the kernel a custom \
         derivative (`Backward::custom`)",
        site,
    )
}

enum Root {
    Global(usize),
    Local,
}

/// `p` (a place in an `array<atomic<u32>>` output, rerooted at its incoming gradient) with
/// the types of the incoming gradient, an `array<f32>`: each `atomic<u32>` an `f32`.
fn as_f32_place(p: &PlaceRef) -> PlaceRef {
    fn f32_ty(ty: &Ty) -> Ty {
        match ty {
            Ty::Atomic(ScalarTy::U32) => Ty::Scalar(ScalarTy::F32),
            Ty::Array { elem, len } => Ty::Array {
                elem: Box::new(f32_ty(elem)),
                len: *len,
            },
            other => other.clone(),
        }
    }
    let kind = match &p.kind {
        PlaceKind::Index(b, i) => PlaceKind::Index(as_f32_place(b), i.clone()),
        PlaceKind::Field(b, f) => PlaceKind::Field(as_f32_place(b), *f),
        PlaceKind::Global(g) => PlaceKind::Global(*g),
        PlaceKind::Local(v) => PlaceKind::Local(*v),
    };
    Rc::new(PlaceNode {
        kind,
        ty: f32_ty(&p.ty),
        site: p.site,
    })
}

fn base_root(place: &PlaceRef) -> Root {
    match &place.kind {
        PlaceKind::Index(b, _) | PlaceKind::Field(b, _) => base_root(b),
        PlaceKind::Global(g) => Root::Global(g.index),
        PlaceKind::Local(_) => Root::Local,
    }
}

impl Rewrite for Symbolic<'_> {
    type Error = NotDifferentiable;

    fn expr(&mut self, n: &NodeRef) -> Result<NodeRef, NotDifferentiable> {
        let ptr = Rc::as_ptr(n);
        if let Some(m) = self.memo.get(&ptr) {
            return Ok(m.clone());
        }
        let m = match &n.kind {
            ExprKind::Load(place) => match base_root(place) {
                Root::Local => self.load_var(place)?,
                Root::Global(index) => {
                    match self.roles.get(index).copied() {
                        Some(GlobalRole::Output(_)) => {
                            return Err(refuse(
                                "a load of an output",
                                "a derived kernel's outputs are written, never read (store the \
                                 value in a `let` or `var` and use that)",
                                n.site,
                            ));
                        }
                        Some(GlobalRole::Data { written: true, .. }) => {
                            return Err(refuse(
                                "a load of a buffer the kernel writes",
                                "kernel AD reads only buffers the kernel does not write",
                                n.site,
                            ));
                        }
                        Some(GlobalRole::Workgroup(w)) => {
                            let place = self.place(place)?;
                            let (id, var) = (ValueId::fresh(), ValueId::fresh());
                            let name = self.k.globals[index].name.clone();
                            self.defs.insert(
                                id,
                                ValueDef::Let {
                                    name: name.clone(),
                                    value: node(
                                        ExprKind::Load(place.clone()),
                                        place.ty.clone(),
                                        n.site,
                                    ),
                                },
                            );
                            self.hoisted.push(Item::Shared(Box::new(Shared::Load {
                                id,
                                var,
                                name,
                                place,
                                adjoint: w.adjoint,
                                site: n.site,
                            })));
                            let m = node(ExprKind::Bound(id), n.ty.clone(), n.site);
                            self.memo.insert(ptr, m.clone());
                            return Ok(m);
                        }
                        _ => {}
                    }
                    rebuild(self, n)?
                }
            },
            ExprKind::Bound(id) => match self.bound.get(id) {
                Some(v) => v.clone(),
                None => {
                    if let Some(ValueDef::Opaque { operation, .. }) = self.k.value_defs.get(id) {
                        return Err(refuse(
                            format!("the result of `{operation}`"),
                            "it depends on the order in which invocations ran, which the \
                             backward kernel does not replay (kernel AD takes atomics for their \
                             effect on data it does not differentiate, not their results)",
                            n.site,
                        ));
                    }
                    return Err(refuse(
                        "a value the derivation does not know",
                        "it is not a `let` or call result of this kernel",
                        n.site,
                    ));
                }
            },
            ExprKind::Param { function, index } => {
                let frame = self.frames.last().expect("a frame is open");
                match (
                    frame.function == Some(*function),
                    frame.args.get(*index as usize),
                ) {
                    (true, Some(a)) => a.clone(),
                    _ => {
                        return Err(refuse(
                            "a parameter of another function",
                            "it is out of scope",
                            n.site,
                        ));
                    }
                }
            }
            ExprKind::TextureLoad { .. } | ExprKind::TextureDimensions { .. } => {
                return Err(refuse(
                    "a texture",
                    "textures are not differentiated",
                    n.site,
                ));
            }
            ExprKind::CoopLoad { .. } | ExprKind::CoopMultiplyAdd(..) => {
                return Err(refuse(
                    "a cooperative-matrix operation",
                    "cooperative matrices are not differentiated; give the kernel a custom \
                     derivative (`Backward::custom`)",
                    n.site,
                ));
            }
            _ => rebuild(self, n)?,
        };
        self.memo.insert(ptr, m.clone());
        Ok(m)
    }

    fn place(&mut self, p: &PlaceRef) -> Result<PlaceRef, NotDifferentiable> {
        let ptr = Rc::as_ptr(p);
        if let Some(q) = self.places.get(&ptr) {
            return Ok(q.clone());
        }
        let q = match &p.kind {
            PlaceKind::Global(g) => {
                let handle = match self.roles.get(g.index).copied() {
                    Some(GlobalRole::Input(h) | GlobalRole::Output(h))
                    | Some(GlobalRole::Data { handle: h, .. }) => h,
                    Some(GlobalRole::Workgroup(w)) => w.handle,
                    None => {
                        return Err(refuse(
                            "a binding of another kernel",
                            "it is not a binding of the kernel derived",
                            p.site,
                        ));
                    }
                };
                // An output's place becomes its incoming gradient's, of the same type.
                Rc::new(PlaceNode {
                    kind: PlaceKind::Global(handle),
                    ty: p.ty.clone(),
                    site: p.site,
                })
            }
            _ => super::subst::rebuild_place(self, p)?,
        };
        self.places.insert(ptr, q.clone());
        Ok(q)
    }
}

impl Symbolic<'_> {
    /// A load of a `var` or of part of one: the value last stored.
    fn load_var(&mut self, place: &PlaceRef) -> Result<NodeRef, NotDifferentiable> {
        match &place.kind {
            PlaceKind::Local(id) => self.env.get(id).cloned().ok_or_else(|| {
                refuse(
                    "a `var` out of scope",
                    "it is not declared where it is read",
                    place.site,
                )
            }),
            PlaceKind::Index(base, index) => {
                let b = self.load_var(base)?;
                let i = self.expr(index)?;
                let i = self.fold(i);
                let at = At(place.site);
                Ok(match (&b.ty, &i.kind) {
                    (Ty::Vector(..), ExprKind::Literal(Lit::U32(c))) => at.component(&b, *c),
                    (Ty::Vector(..), ExprKind::Literal(Lit::I32(c))) if *c >= 0 => {
                        at.component(&b, *c as u32)
                    }
                    _ => node(ExprKind::Access(b, i), place.ty.clone(), place.site),
                })
            }
            PlaceKind::Field(base, f) => {
                let b = self.load_var(base)?;
                Ok(node(
                    ExprKind::AccessIndex(b, *f),
                    place.ty.clone(),
                    place.site,
                ))
            }
            PlaceKind::Global(_) => unreachable!("a `var` place"),
        }
    }
}
