//! Lowering statements and functions.

use std::collections::HashMap;

use naga::{Block, Expression, Handle, Statement};

use super::ctx::ModuleCtx;
use crate::error::BuildError;
use crate::exp::{BuiltinValue, Node};
use crate::handle::{FunctionId, ValueId};
use crate::kernel::FunctionDecl;
use crate::kernel::stmt::{Stmt, SubgroupOp, VarInit};
use crate::site::CallSite;

/// Lowering state of one function.
pub(crate) struct FnLower<'a, 'k> {
    pub cx: &'a mut ModuleCtx<'k>,
    pub func: naga::Function,
    pub emitter: naga::proc::Emitter,
    /// `let`s and statement results in scope: id -> (handle, declaration site).
    pub bound: HashMap<ValueId, (Handle<Expression>, CallSite)>,
    /// `var`s in scope.
    pub locals: HashMap<ValueId, (Handle<naga::LocalVariable>, CallSite)>,
    /// Names of everything declared so far, for messages.
    pub names: HashMap<ValueId, String>,
    /// Ids declared in each open block, dropped from scope when it closes.
    scopes: Vec<Vec<ValueId>>,
    /// Built-in arguments of the entry point; `None` in helper functions.
    pub builtins: Option<HashMap<BuiltinValue, u32>>,
    /// Nodes lowered in the current statement.
    pub cache: HashMap<*const Node, Handle<Expression>>,
    /// Values of the const-expressions (literal-only nodes) lowered in the current statement.
    pub const_values: HashMap<*const Node, crate::consteval::ConstValue>,
    /// `let`s of a literal or zero value: naga's WGSL writer inlines them, so their uses are
    /// const-expressions in the WGSL text.
    pub bound_consts: HashMap<crate::handle::ValueId, crate::consteval::ConstValue>,
    /// The statement being lowered.
    pub site: CallSite,
    /// The helper function being lowered; `None` for the entry point.
    pub function: Option<FunctionId>,
    /// Depth of the expression being lowered, to bound recursion.
    pub depth: usize,
    /// The loops and `switch`es around the statement being lowered, innermost last.
    breakable: Vec<Breakable>,
}

/// What a `break` leaves in WGSL: a loop, or a `switch` (which a Rust `break` in a `match`
/// arm does not leave: it sets the flag and leaves the `switch`, and the loop is left after).
enum Breakable {
    Loop,
    Switch {
        flag: Option<Handle<naga::LocalVariable>>,
    },
}

pub(crate) fn lower_entry(
    cx: &mut ModuleCtx<'_>,
    body: &[(Stmt, CallSite)],
) -> Result<naga::Function, BuildError> {
    let site = cx.kernel.site;
    let mut f = FnLower::new(cx, Some(HashMap::new()), site);
    f.func.name = Some(f.cx.kernel.name.clone());
    let block = f.block(body)?;
    f.func.body = block;
    Ok(f.func)
}

pub(crate) fn lower_function(
    cx: &mut ModuleCtx<'_>,
    decl: &FunctionDecl,
) -> Result<naga::Function, BuildError> {
    let mut f = FnLower::new(cx, None, decl.site);
    f.function = Some(decl.id);
    f.func.name = Some(decl.name.clone());
    for (name, ty) in &decl.params {
        let ty = f.cx.ty(ty, decl.site)?;
        f.func.arguments.push(naga::FunctionArgument {
            name: Some(name.clone()),
            ty,
            binding: None,
        });
    }
    if let Some(result) = &decl.result {
        let ty = f.cx.ty(result, decl.site)?;
        f.func.result = Some(naga::FunctionResult { ty, binding: None });
    }
    let block = f.block(&decl.body)?;
    f.func.body = block;
    Ok(f.func)
}

impl<'a, 'k> FnLower<'a, 'k> {
    fn new(
        cx: &'a mut ModuleCtx<'k>,
        builtins: Option<HashMap<BuiltinValue, u32>>,
        site: CallSite,
    ) -> Self {
        FnLower {
            cx,
            func: naga::Function::default(),
            emitter: naga::proc::Emitter::default(),
            bound: HashMap::new(),
            locals: HashMap::new(),
            names: HashMap::new(),
            scopes: Vec::new(),
            builtins,
            cache: HashMap::new(),
            const_values: HashMap::new(),
            bound_consts: HashMap::new(),
            site,
            function: None,
            depth: 0,
            breakable: Vec::new(),
        }
    }

    pub fn span(&mut self, site: CallSite) -> naga::Span {
        self.cx.sites.span(site)
    }

    /// Close the running emitter into `block`, then push `stmt`.
    pub(super) fn push(&mut self, block: &mut Block, stmt: Statement, site: CallSite) {
        self.flush(block);
        let span = self.span(site);
        block.push(stmt, span);
    }

    fn declare(&mut self, id: ValueId, name: &str) {
        self.names.insert(id, name.to_string());
        if let Some(scope) = self.scopes.last_mut() {
            scope.push(id);
        }
    }

    /// A function-scope `var name: ty;`, stored to by the statements that follow.
    pub(super) fn local_variable(
        &mut self,
        name: &str,
        ty: Handle<naga::Type>,
        site: CallSite,
    ) -> Handle<naga::LocalVariable> {
        self.func.local_variables.append(
            naga::LocalVariable {
                name: Some(name.to_string()),
                ty,
                init: None,
            },
            self.cx.sites.span(site),
        )
    }

    /// The value `id` is the expression `h` from here to the end of its block.
    fn bind(&mut self, id: ValueId, h: Handle<Expression>, site: CallSite, name: &str) {
        self.bound.insert(id, (h, site));
        self.declare(id, name);
    }

    /// Close the running emitter into `block`, append the expression `result` (a call's,
    /// an atomic's, ... result), push the statement `stmt` makes with it, and bind the value
    /// `id` (named `name`) to it.
    fn push_with_result(
        &mut self,
        block: &mut Block,
        site: CallSite,
        (id, name): (ValueId, &str),
        result: Expression,
        stmt: impl FnOnce(Handle<Expression>) -> Result<Statement, BuildError>,
    ) -> Result<(), BuildError> {
        self.flush(block);
        let span = self.span(site);
        let h = self.func.expressions.append(result, span);
        block.push(stmt(h)?, span);
        self.bind(id, h, site, name);
        Ok(())
    }

    fn block(&mut self, stmts: &[(Stmt, CallSite)]) -> Result<Block, BuildError> {
        self.scopes.push(Vec::new());
        let mut block = Block::new();
        for (stmt, site) in stmts {
            self.site = *site;
            self.cache.clear();
            self.const_values.clear();
            self.emitter.start(&self.func.expressions);
            self.stmt(stmt, *site, &mut block)?;
            if self.emitter.is_running() {
                block.extend(self.emitter.finish(&self.func.expressions));
            }
        }
        for id in self.scopes.pop().unwrap_or_default() {
            self.bound.remove(&id);
            self.locals.remove(&id);
        }
        Ok(block)
    }

    fn nested(&mut self, stmts: &[(Stmt, CallSite)]) -> Result<Block, BuildError> {
        let saved = self.site;
        let b = self.block(stmts);
        self.site = saved;
        b
    }

    /// Close the emitter into `block`, if it is running.
    pub(super) fn flush(&mut self, block: &mut Block) {
        if self.emitter.is_running() {
            block.extend(self.emitter.finish(&self.func.expressions));
        }
    }

    /// A block, then `tail` evaluated in its scope (a loop's `continuing` and its `break if`).
    fn block_then(
        &mut self,
        stmts: &[(Stmt, CallSite)],
        tail: &crate::exp::NodeRef,
    ) -> Result<(Block, Handle<Expression>), BuildError> {
        self.scopes.push(Vec::new());
        let mut block = Block::new();
        let result = (|| {
            for (stmt, site) in stmts {
                self.site = *site;
                self.cache.clear();
                self.emitter.start(&self.func.expressions);
                self.stmt(stmt, *site, &mut block)?;
                if self.emitter.is_running() {
                    block.extend(self.emitter.finish(&self.func.expressions));
                }
            }
            self.cache.clear();
            self.emitter.start(&self.func.expressions);
            let h = self.expr(tail, &mut block)?;
            block.extend(self.emitter.finish(&self.func.expressions));
            Ok(h)
        })();
        for id in self.scopes.pop().unwrap_or_default() {
            self.bound.remove(&id);
            self.locals.remove(&id);
        }
        Ok((block, result?))
    }

    /// `break`: WGSL's own where the innermost construct is a loop; inside a `switch`, set
    /// the `switch`'s flag and leave it (the loop is left after the `switch`).
    fn break_(&mut self, block: &mut Block, site: CallSite) -> Result<(), BuildError> {
        let Some(top) = self.breakable.len().checked_sub(1) else {
            return Err(BuildError::Invalid {
                message: "`break` outside a loop".into(),
                site,
            });
        };
        if matches!(self.breakable[top], Breakable::Loop) {
            self.push(block, Statement::Break, site);
            return Ok(());
        }
        if !self.breakable.iter().any(|b| matches!(b, Breakable::Loop)) {
            return Err(BuildError::Invalid {
                message: "`break` outside a loop (a `switch` arm does not take `break`)".into(),
                site,
            });
        }
        let flag = match self.breakable[top] {
            Breakable::Switch { flag: Some(f) } => f,
            _ => {
                let ty = self.cx.ty(
                    &crate::types::Ty::Scalar(crate::types::ScalarTy::Bool),
                    site,
                )?;
                let f = self.local_variable("break_loop", ty, site);
                self.breakable[top] = Breakable::Switch { flag: Some(f) };
                f
            }
        };
        let pointer = self.append(Expression::LocalVariable(flag), site, block);
        let value = self.append(Expression::Literal(naga::Literal::Bool(true)), site, block);
        self.push(block, Statement::Store { pointer, value }, site);
        self.emitter.start(&self.func.expressions);
        self.push(block, Statement::Break, site);
        Ok(())
    }

    fn switch(
        &mut self,
        selector: &crate::exp::NodeRef,
        arms: &[crate::kernel::stmt::SwitchArm],
        site: CallSite,
        block: &mut Block,
    ) -> Result<(), BuildError> {
        let selector = self.expr(selector, block)?;
        self.flush(block);
        self.breakable.push(Breakable::Switch { flag: None });
        let mut cases = Vec::new();
        let mut lowered = Ok(());
        for arm in arms {
            let body = match self.nested(&arm.body) {
                Ok(b) => b,
                Err(e) => {
                    lowered = Err(e);
                    break;
                }
            };
            if arm.default {
                cases.push(naga::SwitchCase {
                    value: naga::SwitchValue::Default,
                    body,
                    fall_through: false,
                });
                continue;
            }
            let n = arm.values.len();
            let mut body = Some(body);
            for (i, v) in arm.values.iter().enumerate() {
                let value = match *v {
                    crate::exp::Lit::I32(v) => naga::SwitchValue::I32(v),
                    crate::exp::Lit::U32(v) => naga::SwitchValue::U32(v),
                    _ => {
                        lowered = Err(BuildError::Invalid {
                            message: "a `switch` case value is an `i32` or `u32`".into(),
                            site: arm.site,
                        });
                        break;
                    }
                };
                let last = i + 1 == n;
                cases.push(naga::SwitchCase {
                    value,
                    body: if last {
                        body.take().unwrap_or_default()
                    } else {
                        Block::new()
                    },
                    fall_through: !last,
                });
            }
        }
        let flag = match self.breakable.pop() {
            Some(Breakable::Switch { flag }) => flag,
            _ => None,
        };
        lowered?;
        if !arms.iter().any(|a| a.default) {
            cases.push(naga::SwitchCase {
                value: naga::SwitchValue::Default,
                body: Block::new(),
                fall_through: false,
            });
        }
        self.emitter.start(&self.func.expressions);
        if let Some(flag) = flag {
            let pointer = self.append(Expression::LocalVariable(flag), site, block);
            let value = self.append(Expression::Literal(naga::Literal::Bool(false)), site, block);
            self.push(block, Statement::Store { pointer, value }, site);
        }
        self.flush(block);
        let span = self.span(site);
        block.push(Statement::Switch { selector, cases }, span);
        if let Some(flag) = flag {
            // The arm asked to leave the loop: leave it (or the next `switch` out) now.
            self.emitter.start(&self.func.expressions);
            let pointer = self.append(Expression::LocalVariable(flag), site, block);
            let condition = self.append(Expression::Load { pointer }, site, block);
            self.flush(block);
            let mut accept = Block::new();
            self.emitter.start(&self.func.expressions);
            self.break_(&mut accept, site)?;
            self.flush(&mut accept);
            let span = self.span(site);
            block.push(
                Statement::If {
                    condition,
                    accept,
                    reject: Block::new(),
                },
                span,
            );
        }
        Ok(())
    }

    fn stmt(&mut self, stmt: &Stmt, site: CallSite, block: &mut Block) -> Result<(), BuildError> {
        match stmt {
            Stmt::Let { id, name, value } => {
                let h = self.expr(value, block)?;
                if self.func.expressions[h].needs_pre_emit()
                    && let Some(v) = self.const_values.get(&std::rc::Rc::as_ptr(value))
                {
                    self.bound_consts.insert(*id, v.clone());
                }
                block.extend(self.emitter.finish(&self.func.expressions));
                // A `let` of a value already named (another `let`) keeps the first name.
                self.func
                    .named_expressions
                    .entry(h)
                    .or_insert_with(|| name.clone());
                self.bind(*id, h, site, name);
            }
            Stmt::Var { id, name, ty, init } => {
                let ty = self.cx.ty(ty, site)?;
                let var = self.local_variable(name, ty, site);
                let value = match init {
                    VarInit::Value(init) => Some(self.expr(init, block)?),
                    VarInit::Zero => Some(self.append(Expression::ZeroValue(ty), site, block)),
                    VarInit::Declared => None,
                };
                if let Some(value) = value {
                    let pointer = self.append(Expression::LocalVariable(var), site, block);
                    self.push(block, Statement::Store { pointer, value }, site);
                }
                self.locals.insert(*id, (var, site));
                self.declare(*id, name);
            }
            Stmt::Store { place, value } => {
                let pointer = self.place(place, block)?;
                let value = self.expr(value, block)?;
                self.push(block, Statement::Store { pointer, value }, site);
            }
            Stmt::TextureStore {
                texture,
                coords,
                value,
            } => {
                let image = self.place(texture, block)?;
                let coordinate = self.expr(coords, block)?;
                let value = self.expr(value, block)?;
                self.push(
                    block,
                    Statement::ImageStore {
                        image,
                        coordinate,
                        array_index: None,
                        value,
                    },
                    site,
                );
            }
            Stmt::If {
                condition: condition_node,
                accept,
                reject,
            } => {
                let condition = self.expr(condition_node, block)?;
                block.extend(self.emitter.finish(&self.func.expressions));
                // A condition that folds to a constant (an `#[unroll]` copy's `if j < 2`, a
                // `let` of a literal): only its arm runs, so only its arm is lowered, in its
                // own scope, in place of the `if`. What the other arm would have found when
                // lowered (a literal WGSL rejects, a value out of scope) is not reported, as
                // for any expression that is built and not used.
                let known = self
                    .const_values
                    .get(&std::rc::Rc::as_ptr(condition_node))
                    .cloned();
                if let Some(crate::consteval::ConstValue::Bool(taken)) = known {
                    let mut arm = self.nested(if taken { accept } else { reject })?;
                    block.append(&mut arm);
                    return Ok(());
                }
                let accept = self.nested(accept)?;
                let reject = self.nested(reject)?;
                let span = self.span(site);
                block.push(
                    Statement::If {
                        condition,
                        accept,
                        reject,
                    },
                    span,
                );
            }
            Stmt::Loop {
                body, continuing, ..
            } => {
                block.extend(self.emitter.finish(&self.func.expressions));
                self.breakable.push(Breakable::Loop);
                let body = self.nested(body);
                self.breakable.pop();
                let body = body?;
                let continuing = self.nested(continuing)?;
                let span = self.span(site);
                block.push(
                    Statement::Loop {
                        body,
                        continuing,
                        break_if: None,
                    },
                    span,
                );
            }
            Stmt::LoopBreakIf {
                body,
                continuing,
                break_if,
                ..
            } => {
                block.extend(self.emitter.finish(&self.func.expressions));
                self.breakable.push(Breakable::Loop);
                let body = self.nested(body);
                self.breakable.pop();
                let body = body?;
                let saved = self.site;
                let (continuing, break_if) = self.block_then(continuing, break_if)?;
                self.site = saved;
                let span = self.span(site);
                block.push(
                    Statement::Loop {
                        body,
                        continuing,
                        break_if: Some(break_if),
                    },
                    span,
                );
            }
            Stmt::Switch { selector, cases } => self.switch(selector, cases, site, block)?,
            Stmt::WorkgroupUniformLoad { result, place } => {
                let pointer = self.place(place, block)?;
                let ty = self.cx.ty(&place.ty, site)?;
                self.push_with_result(
                    block,
                    site,
                    (*result, "workgroupUniformLoad result"),
                    Expression::WorkGroupUniformLoadResult { ty },
                    |h| Ok(Statement::WorkGroupUniformLoad { pointer, result: h }),
                )?;
            }
            Stmt::Invalid(message) => {
                return Err(BuildError::Invalid {
                    message: message.clone(),
                    site,
                });
            }
            Stmt::Break => self.break_(block, site)?,
            Stmt::Continue => self.push(block, Statement::Continue, site),
            Stmt::Return(value) => {
                let value = self.opt_expr(value.as_ref(), block)?;
                self.push(block, Statement::Return { value }, site);
            }
            Stmt::Barrier(flags) => self.push(block, Statement::ControlBarrier(*flags), site),
            Stmt::Call {
                result,
                function,
                args,
            } => {
                let arguments = args
                    .iter()
                    .map(|a| self.expr(a, block))
                    .collect::<Result<Vec<_>, _>>()?;
                // The builder records calls of its own functions only, each defined before
                // the body calling it (and lowered before it).
                let Some(&function) = self.cx.functions.get(function.index) else {
                    return Err(BuildError::Invalid {
                        message: "a helper function is called before it is defined".into(),
                        site,
                    });
                };
                self.push_with_result(
                    block,
                    site,
                    (*result, "call result"),
                    Expression::CallResult(function),
                    |h| {
                        Ok(Statement::Call {
                            function,
                            arguments,
                            result: Some(h),
                        })
                    },
                )?;
            }
            Stmt::Atomic {
                result,
                place,
                fun,
                value,
                compare,
            } => {
                let pointer = self.place(place, block)?;
                let value = self.expr(value, block)?;
                let compare_h = self.opt_expr(compare.as_ref(), block)?;
                let scalar = match &place.ty {
                    crate::types::Ty::Atomic(s) => s.naga(),
                    other => {
                        return Err(BuildError::Type {
                            message: format!("atomic operation on {}", other.wgsl_name()),
                            site,
                        });
                    }
                };
                let ty = if compare.is_some() {
                    self.cx.module.generate_predeclared_type(
                        naga::PredeclaredType::AtomicCompareExchangeWeakResult(scalar),
                    )
                } else {
                    self.cx
                        .ty(&crate::types::Ty::Scalar(scalar_ty(scalar)), site)?
                };
                self.push_with_result(
                    block,
                    site,
                    (*result, "atomic result"),
                    Expression::AtomicResult {
                        ty,
                        comparison: compare.is_some(),
                    },
                    |h| {
                        Ok(Statement::Atomic {
                            pointer,
                            fun: fun.naga(compare_h),
                            value,
                            result: Some(h),
                        })
                    },
                )?;
            }
            Stmt::AtomicAddF32 { place, value } => {
                let expanded = crate::kernel::collective::atomic_add_f32_loop(
                    place.clone(),
                    value.clone(),
                    site,
                );
                block.extend(self.emitter.finish(&self.func.expressions));
                let body = self.nested(&expanded)?;
                let span = self.span(site);
                block.push(Statement::Block(body), span);
            }
            Stmt::CoopStore {
                value,
                place,
                stride,
                row_major,
            } => {
                // Operands first: naga's SPIR-V writer needs them emitted before the store.
                let target = self.expr(value, block)?;
                let pointer = self.place(place, block)?;
                let stride = self.expr(stride, block)?;
                self.push(
                    block,
                    Statement::CooperativeStore {
                        target,
                        data: naga::CooperativeData {
                            pointer,
                            stride,
                            row_major: *row_major,
                        },
                    },
                    site,
                );
            }
            Stmt::DebugPrint { pieces, args } => {
                if self.cx.prints_mode == super::Prints::Drop {
                    return Ok(());
                }
                let arguments = args
                    .iter()
                    .map(|a| self.expr(a, block))
                    .collect::<Result<Vec<_>, _>>()?;
                let mut params = Vec::with_capacity(args.len());
                for (i, a) in args.iter().enumerate() {
                    params.push(naga::FunctionArgument {
                        name: Some(format!("value{i}")),
                        ty: self.cx.ty(&a.ty, site)?,
                        binding: None,
                    });
                }
                let span = self.span(site);
                let name = format!("debug_print_{}", self.cx.prints.len());
                let function = self.cx.module.functions.append(
                    naga::Function {
                        name: Some(name),
                        arguments: params,
                        ..naga::Function::default()
                    },
                    span,
                );
                self.cx.prints.push(super::DebugPrintDecl {
                    function,
                    pieces: pieces.clone(),
                    site,
                });
                self.push(
                    block,
                    Statement::Call {
                        function,
                        arguments,
                        result: None,
                    },
                    site,
                );
            }
            Stmt::Subgroup {
                result,
                op,
                arg,
                index,
                ty,
            } => {
                self.cx.need(naga::valid::Capabilities::SUBGROUP, site);
                let argument = self.expr(arg, block)?;
                let index = self.opt_expr(index.as_ref(), block)?;
                let ty = self.cx.ty(ty, site)?;
                let result_expr = match op {
                    SubgroupOp::Ballot => Expression::SubgroupBallotResult,
                    _ => Expression::SubgroupOperationResult { ty },
                };
                self.push_with_result(
                    block,
                    site,
                    (*result, "subgroup result"),
                    result_expr,
                    |result| subgroup_statement(*op, argument, index, result, site),
                )?;
            }
        }
        Ok(())
    }
}

/// The statement of the subgroup operation `op` of `argument` (`index`: the lane of a
/// shuffle or broadcast), its value `result`.
fn subgroup_statement(
    op: SubgroupOp,
    argument: Handle<Expression>,
    index: Option<Handle<Expression>>,
    result: Handle<Expression>,
    site: CallSite,
) -> Result<Statement, BuildError> {
    let gather = |mode| Statement::SubgroupGather {
        mode,
        argument,
        result,
    };
    let lane = || {
        index.ok_or_else(|| BuildError::Invalid {
            message: "a subgroup gather without its lane".into(),
            site,
        })
    };
    Ok(match op {
        SubgroupOp::Collective(op, collective_op) => Statement::SubgroupCollectiveOperation {
            op,
            collective_op,
            argument,
            result,
        },
        SubgroupOp::BroadcastFirst => gather(naga::GatherMode::BroadcastFirst),
        SubgroupOp::Shuffle => gather(naga::GatherMode::Shuffle(lane()?)),
        SubgroupOp::Gather(kind) => {
            use crate::kernel::stmt::GatherKind as G;
            let i = lane()?;
            gather(match kind {
                G::Broadcast => naga::GatherMode::Broadcast(i),
                G::ShuffleXor => naga::GatherMode::ShuffleXor(i),
                G::ShuffleUp => naga::GatherMode::ShuffleUp(i),
                G::ShuffleDown => naga::GatherMode::ShuffleDown(i),
                G::QuadBroadcast => naga::GatherMode::QuadBroadcast(i),
            })
        }
        SubgroupOp::QuadSwap(direction) => gather(naga::GatherMode::QuadSwap(direction)),
        SubgroupOp::Ballot => Statement::SubgroupBallot {
            result,
            predicate: Some(argument),
        },
    })
}

fn scalar_ty(s: naga::Scalar) -> crate::types::ScalarTy {
    use crate::types::ScalarTy;
    match s.kind {
        naga::ScalarKind::Sint => ScalarTy::I32,
        naga::ScalarKind::Uint => ScalarTy::U32,
        naga::ScalarKind::Bool => ScalarTy::Bool,
        _ if s.width == 2 => ScalarTy::F16,
        _ => ScalarTy::F32,
    }
}
