//! The static uniformity check (WGSL spec §15.2 "Uniformity Analysis", `#uniformity`): a
//! barrier or a subgroup operation must be reached in uniform control flow, i.e. control flow
//! that does not depend on values that may differ between the invocations of a workgroup.
//! naga accepts a barrier inside a branch on the invocation id; on a GPU that is undefined
//! behaviour (a hang, or corrupted memory). [`check`] rejects it when the kernel is built,
//! naming the Rust call sites of the barrier and of the non-uniform value.
//!
//! The analysis follows the spec's rules, over the lowered naga module:
//! - **Non-uniform values** are the invocation's own ids (`local_invocation_id`,
//!   `local_invocation_index`, `global_invocation_id`, `subgroup_invocation_id`,
//!   `subgroup_id`), loads from read-write storage and from workgroup memory (other
//!   invocations may write them), results of atomics and of subgroup operations, and
//!   anything computed from those. Uniform buffers, read-only storage, `workgroup_id`,
//!   `num_workgroups` and the sizes are uniform.
//! - **Local variables** are tracked through the control flow: a `var` holds a non-uniform
//!   value after a non-uniform store, or after any store made in non-uniform control flow.
//!   Loops are analysed to a fixed point, so a loop counter stepped uniformly stays uniform.
//! - **Control flow** becomes non-uniform inside an `if`, `switch` or loop exit that depends on
//!   a non-uniform value, and after a `return`, `break` or `continue` taken in non-uniform
//!   control flow (for the rest of the function, or of the loop). It reconverges after the
//!   construct otherwise.
//! - **Helper functions** are summarised: which barriers they contain and on which parameters
//!   the control flow reaching them depends, and on which parameters their result depends; a
//!   call is checked against the summary.

use naga::{Expression as E, Handle, Span, Statement as S};

use crate::error::{BuildError, NonUniformControlFlow};
use crate::lower::SiteTable;

/// Where a value's non-uniformity comes from: the expression, and what it is.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Origin {
    span: Span,
    what: &'static str,
}

/// The uniformity of a value or of the control flow: non-uniform because of `origin`, or
/// because it depends on the helper function's parameters in `params` (bit `i` for
/// parameter `i`), or uniform.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Taint {
    origin: Option<Origin>,
    params: u64,
}

impl Taint {
    fn join(self, other: Taint) -> Taint {
        Taint {
            origin: self.origin.or(other.origin),
            params: self.params | other.params,
        }
    }
    fn of(span: Span, what: &'static str) -> Taint {
        Taint {
            origin: Some(Origin { span, what }),
            params: 0,
        }
    }
    fn is_uniform(&self) -> bool {
        self.origin.is_none() && self.params == 0
    }
}

/// The control flow reaching a point: its uniformity, and the statement that made it
/// non-uniform (an `if`, loop, `return`...).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Flow {
    taint: Taint,
    branch: Option<Span>,
}

impl Flow {
    fn join(self, t: Taint, branch: Span) -> Flow {
        if t.is_uniform() {
            self
        } else {
            Flow {
                taint: self.taint.join(t),
                branch: self.branch.or(Some(branch)),
            }
        }
    }
    fn merge(self, other: Flow) -> Flow {
        Flow {
            taint: self.taint.join(other.taint),
            branch: self.branch.or(other.branch),
        }
    }
}

/// An operation needing uniform control flow inside a helper function, reached in control
/// flow that depends on the parameters `params`.
#[derive(Clone, Copy, Debug)]
struct Requirement {
    op: &'static str,
    span: Span,
    params: u64,
}

#[derive(Clone, Debug, Default)]
struct Summary {
    requires: Vec<Requirement>,
    result: Taint,
}

/// Check every function of `module`; `sites` maps spans to Rust call sites.
pub(crate) fn check(
    kernel: &str,
    module: &naga::Module,
    sites: &SiteTable,
) -> Result<(), BuildError> {
    let mut summaries: Vec<Summary> = Vec::with_capacity(module.functions.len());
    let cx = Cx {
        kernel,
        module,
        sites,
    };
    for (_, f) in module.functions.iter() {
        let s = Analysis::new(&cx, f, false, &summaries).run()?;
        summaries.push(s);
    }
    for ep in &module.entry_points {
        Analysis::new(&cx, &ep.function, true, &summaries).run()?;
    }
    Ok(())
}

struct Cx<'a> {
    kernel: &'a str,
    module: &'a naga::Module,
    sites: &'a SiteTable,
}

struct Loop {
    brk: Option<Vec<Taint>>,
    cont: Option<Vec<Taint>>,
    /// Non-uniform exits (break, continue, return) taken in the loop.
    exits: Flow,
}

struct Analysis<'a> {
    cx: &'a Cx<'a>,
    f: &'a naga::Function,
    entry: bool,
    summaries: &'a [Summary],
    expr: Vec<Taint>,
    requires: Vec<Requirement>,
    result: Taint,
    loops: Vec<Loop>,
}

/// What a block did besides falling through: the flow at its non-uniform exits.
#[derive(Clone, Copy, Default)]
struct Exits {
    /// Non-uniform `return`s.
    ret: Flow,
    /// Non-uniform `break`s and `continue`s (of the innermost loop or switch).
    jump: Flow,
}

impl<'a> Analysis<'a> {
    fn new(cx: &'a Cx<'a>, f: &'a naga::Function, entry: bool, summaries: &'a [Summary]) -> Self {
        Analysis {
            cx,
            f,
            entry,
            summaries,
            expr: vec![Taint::default(); f.expressions.len()],
            requires: Vec::new(),
            result: Taint::default(),
            loops: Vec::new(),
        }
    }

    fn run(mut self) -> Result<Summary, BuildError> {
        for (h, e) in self.f.expressions.iter() {
            if let Some(t) = self.pre_emitted(h, e) {
                self.expr[h.index()] = t;
            }
        }
        let mut locals = vec![Taint::default(); self.f.local_variables.len()];
        self.block(&self.f.body, Flow::default(), &mut locals)?;
        Ok(Summary {
            requires: self.requires,
            result: self.result,
        })
    }

    fn t(&self, h: Handle<naga::Expression>) -> Taint {
        self.expr[h.index()]
    }

    fn span(&self, h: Handle<naga::Expression>) -> Span {
        self.f.expressions.get_span(h)
    }

    /// Taints of expressions not evaluated by an `Emit`.
    fn pre_emitted(&self, h: Handle<naga::Expression>, e: &E) -> Option<Taint> {
        Some(match *e {
            E::FunctionArgument(i) => {
                if !self.entry {
                    return Some(Taint {
                        origin: None,
                        params: 1u64.checked_shl(i).unwrap_or(0),
                    });
                }
                use naga::BuiltIn as B;
                let what = match self.f.arguments[i as usize].binding {
                    Some(naga::Binding::BuiltIn(b)) => match b {
                        B::LocalInvocationId => "local_invocation_id",
                        B::LocalInvocationIndex => "local_invocation_index",
                        B::GlobalInvocationId => "global_invocation_id",
                        B::SubgroupInvocationId => "subgroup_invocation_id",
                        B::SubgroupId => "subgroup_id",
                        _ => return Some(Taint::default()),
                    },
                    _ => "an entry point argument",
                };
                Taint::of(self.span(h), what)
            }
            E::Literal(_)
            | E::Constant(_)
            | E::Override(_)
            | E::ZeroValue(_)
            | E::GlobalVariable(_)
            | E::LocalVariable(_) => Taint::default(),
            _ => return None,
        })
    }

    /// The variable a pointer expression points into, and whether it is the whole variable.
    fn root(&self, mut h: Handle<naga::Expression>) -> Option<(E, bool)> {
        let mut whole = true;
        loop {
            match self.f.expressions[h] {
                E::Access { base, .. } | E::AccessIndex { base, .. } => {
                    whole = false;
                    h = base;
                }
                ref e @ (E::GlobalVariable(_) | E::LocalVariable(_)) => {
                    return Some((e.clone(), whole));
                }
                _ => return None,
            }
        }
    }

    fn emitted(&mut self, h: Handle<naga::Expression>, locals: &[Taint]) {
        let t = |a: Handle<naga::Expression>| self.expr[a.index()];
        let taint = match self.f.expressions[h] {
            E::Access { base, index } => t(base).join(t(index)),
            E::AccessIndex { base, .. } => t(base),
            E::Splat { value, .. } => t(value),
            E::Swizzle { vector, .. } => t(vector),
            E::Compose { ref components, .. } => components
                .iter()
                .fold(Taint::default(), |a, &c| a.join(t(c))),
            E::Load { pointer } => {
                let base = t(pointer);
                match self.root(pointer) {
                    Some((E::GlobalVariable(g), _)) => {
                        let space = self.cx.module.global_variables[g].space;
                        match space {
                            naga::AddressSpace::Storage { access }
                                if access.contains(naga::StorageAccess::STORE) =>
                            {
                                Taint::of(self.span(h), "a load from read_write storage")
                            }
                            naga::AddressSpace::WorkGroup => {
                                Taint::of(self.span(h), "a load from workgroup memory")
                            }
                            _ => base,
                        }
                    }
                    Some((E::LocalVariable(v), _)) => base.join(locals[v.index()]),
                    _ => Taint::of(self.span(h), "a load through a pointer"),
                }
            }
            E::Unary { expr, .. } => t(expr),
            E::Binary { left, right, .. } => t(left).join(t(right)),
            E::Select {
                condition,
                accept,
                reject,
            } => t(condition).join(t(accept)).join(t(reject)),
            E::Relational { argument, .. } => t(argument),
            E::Math {
                arg,
                arg1,
                arg2,
                arg3,
                ..
            } => [Some(arg), arg1, arg2, arg3]
                .into_iter()
                .flatten()
                .fold(Taint::default(), |a, x| a.join(t(x))),
            E::As { expr, .. } => t(expr),
            E::ArrayLength(p) => t(p),
            // Results are set by their statements; other expressions do not occur in
            // compute kernels this crate builds, and are treated as non-uniform.
            E::CallResult(_)
            | E::AtomicResult { .. }
            | E::SubgroupOperationResult { .. }
            | E::SubgroupBallotResult
            | E::WorkGroupUniformLoadResult { .. } => self.expr[h.index()],
            _ => Taint::of(self.span(h), "a value of unknown uniformity"),
        };
        self.expr[h.index()] = taint;
    }

    fn error(&self, op: &'static str, span: Span, flow: Flow) -> BuildError {
        let lookup = |s: Span| self.cx.sites.lookup(s);
        let origin = flow.taint.origin;
        BuildError::NonUniformControlFlow(Box::new(NonUniformControlFlow {
            kernel: self.cx.kernel.to_string(),
            operation: op,
            site: lookup(span),
            branch: flow.branch.and_then(lookup),
            value: origin.and_then(|o| lookup(o.span)),
            value_kind: origin.map_or("a parameter", |o| o.what),
        }))
    }

    /// `op` at `span` needs uniform control flow; `flow` reaches it.
    fn require(&mut self, op: &'static str, span: Span, flow: Flow) -> Result<(), BuildError> {
        if flow.taint.origin.is_some() {
            return Err(self.error(op, span, flow));
        }
        self.requires.push(Requirement {
            op,
            span,
            params: flow.taint.params,
        });
        Ok(())
    }

    fn block(
        &mut self,
        block: &'a naga::Block,
        mut flow: Flow,
        locals: &mut Vec<Taint>,
    ) -> Result<Exits, BuildError> {
        let mut exits = Exits::default();
        for (stmt, &span) in block.span_iter() {
            let e = self.statement(stmt, span, flow, locals)?;
            exits.ret = exits.ret.merge(e.ret);
            exits.jump = exits.jump.merge(e.jump);
            // After a non-uniform exit, the rest of the block runs in non-uniform flow.
            flow = flow.merge(e.ret).merge(e.jump);
        }
        Ok(exits)
    }

    fn join_into(target: &mut Option<Vec<Taint>>, state: &[Taint]) {
        match target {
            Some(t) => t.iter_mut().zip(state).for_each(|(a, b)| *a = a.join(*b)),
            None => *target = Some(state.to_vec()),
        }
    }

    fn statement(
        &mut self,
        stmt: &'a S,
        span: Span,
        flow: Flow,
        locals: &mut Vec<Taint>,
    ) -> Result<Exits, BuildError> {
        let nonuniform = |f: Flow| {
            if f.taint.is_uniform() {
                Flow::default()
            } else {
                f
            }
        };
        match *stmt {
            S::Emit(ref range) => {
                for h in range.clone() {
                    self.emitted(h, locals);
                }
            }
            S::Block(ref b) => return self.block(b, flow, locals),
            S::If {
                condition,
                ref accept,
                ref reject,
            } => {
                let inner = flow.join(self.t(condition), span);
                let mut other = locals.clone();
                let a = self.block(accept, inner, locals)?;
                let r = self.block(reject, inner, &mut other)?;
                locals
                    .iter_mut()
                    .zip(&other)
                    .for_each(|(x, y)| *x = x.join(*y));
                return Ok(Exits {
                    ret: a.ret.merge(r.ret),
                    jump: a.jump.merge(r.jump),
                });
            }
            S::Switch {
                selector,
                ref cases,
            } => {
                let inner = flow.join(self.t(selector), span);
                let entry = locals.clone();
                let mut out = Exits::default();
                let mut falling: Option<Vec<Taint>> = None;
                let mut merged: Option<Vec<Taint>> = None;
                for case in cases {
                    let mut state = entry.clone();
                    if let Some(f) = &falling {
                        state.iter_mut().zip(f).for_each(|(x, y)| *x = x.join(*y));
                    }
                    // A `break` in a switch leaves the switch: it is a non-uniform exit of
                    // the case only.
                    let e = self.block(&case.body, inner, &mut state)?;
                    out.ret = out.ret.merge(e.ret);
                    if case.fall_through {
                        falling = Some(state);
                    } else {
                        falling = None;
                        Self::join_into(&mut merged, &state);
                    }
                }
                if let Some(m) = merged {
                    *locals = m;
                }
                return Ok(out);
            }
            S::Loop {
                ref body,
                ref continuing,
                break_if,
            } => {
                let mut head = locals.clone();
                let mut loop_flow = flow;
                loop {
                    self.loops.push(Loop {
                        brk: None,
                        cont: None,
                        exits: Flow::default(),
                    });
                    let mut state = head.clone();
                    let e = self.block(body, loop_flow, &mut state)?;
                    let after_body = loop_flow.merge(e.ret).merge(e.jump);
                    let l = self.loops.last_mut().expect("pushed above");
                    if let Some(c) = &l.cont {
                        state.iter_mut().zip(c).for_each(|(x, y)| *x = x.join(*y));
                    }
                    let cont_flow = after_body.merge(l.exits);
                    let ec = self.block(continuing, cont_flow, &mut state)?;
                    let mut l = self.loops.pop().expect("pushed above");
                    let mut exits = l.exits.merge(nonuniform(e.ret)).merge(ec.ret);
                    if let Some(b) = break_if {
                        let t = self.t(b);
                        exits = exits.merge(nonuniform(cont_flow.join(t, span)));
                        Self::join_into(&mut l.brk, &state);
                    }
                    let next_flow = loop_flow.merge(exits);
                    let mut next_head = head.clone();
                    next_head
                        .iter_mut()
                        .zip(&state)
                        .for_each(|(x, y)| *x = x.join(*y));
                    if next_head == head && next_flow == loop_flow {
                        if let Some(b) = l.brk {
                            *locals = b;
                        }
                        // Control flow reconverges after the loop, except after a
                        // non-uniform return inside it.
                        return Ok(Exits {
                            ret: nonuniform(e.ret).merge(ec.ret),
                            jump: Flow::default(),
                        });
                    }
                    head = next_head;
                    loop_flow = next_flow;
                }
            }
            S::Break | S::Continue => {
                let is_break = matches!(stmt, S::Break);
                if let Some(l) = self.loops.last_mut() {
                    let slot = if is_break { &mut l.brk } else { &mut l.cont };
                    Self::join_into(slot, locals);
                    l.exits = l.exits.merge(nonuniform(flow));
                }
                return Ok(Exits {
                    ret: Flow::default(),
                    jump: nonuniform(flow),
                });
            }
            S::Return { value } => {
                let mut t = flow.taint;
                if let Some(v) = value {
                    t = t.join(self.t(v));
                }
                self.result = self.result.join(t);
                return Ok(Exits {
                    ret: nonuniform(flow),
                    jump: Flow::default(),
                });
            }
            S::Store { pointer, value } => {
                if let Some((E::LocalVariable(v), whole)) = self.root(pointer) {
                    let t = self.t(value).join(self.t(pointer)).join(flow.taint);
                    let slot = &mut locals[v.index()];
                    *slot = if whole { t } else { slot.join(t) };
                }
            }
            S::ControlBarrier(flags) | S::MemoryBarrier(flags) => {
                if matches!(stmt, S::ControlBarrier(_)) {
                    self.require(barrier_name(flags), span, flow)?;
                }
            }
            S::WorkGroupUniformLoad { result, .. } => {
                self.require("workgroupUniformLoad", span, flow)?;
                self.expr[result.index()] = Taint::default();
            }
            S::Call {
                function,
                ref arguments,
                result,
            } => {
                let summary = &self.summaries[function.index()];
                for r in summary.requires.clone() {
                    // The callee's operation needs the call in uniform flow, and the
                    // arguments its flow depends on to be uniform.
                    let mut need = flow;
                    for (i, &a) in arguments.iter().enumerate() {
                        if r.params >> i & 1 == 1 {
                            need = need.join(self.t(a), self.span(a));
                        }
                    }
                    if need.taint.origin.is_some() {
                        let mut e = self.error(r.op, r.span, need);
                        if let BuildError::NonUniformControlFlow(d) = &mut e {
                            d.branch = d.branch.or(self.cx.sites.lookup(span));
                        }
                        return Err(e);
                    }
                    self.requires.push(Requirement {
                        op: r.op,
                        span: r.span,
                        params: need.taint.params,
                    });
                }
                if let Some(res) = result {
                    let s = summary.result;
                    let mut t = Taint {
                        origin: s.origin,
                        params: 0,
                    };
                    for (i, &a) in arguments.iter().enumerate() {
                        if s.params >> i & 1 == 1 {
                            t = t.join(self.t(a));
                        }
                    }
                    self.expr[res.index()] = t;
                }
            }
            S::Atomic {
                result: Some(r), ..
            } => {
                self.expr[r.index()] = Taint::of(span, "the result of an atomic operation");
            }
            S::SubgroupCollectiveOperation {
                op,
                collective_op,
                result,
                ..
            } => {
                self.require(collective_name(op, collective_op), span, flow)?;
                self.expr[result.index()] = Taint::of(span, "the result of a subgroup operation");
            }
            S::SubgroupGather { mode, result, .. } => {
                self.require(gather_name(mode), span, flow)?;
                self.expr[result.index()] = Taint::of(span, "the result of a subgroup operation");
            }
            S::SubgroupBallot { result, .. } => {
                self.require("subgroupBallot", span, flow)?;
                self.expr[result.index()] = Taint::of(span, "the result of a subgroup operation");
            }
            _ => {}
        }
        Ok(Exits::default())
    }
}

fn barrier_name(flags: naga::Barrier) -> &'static str {
    if flags.contains(naga::Barrier::WORK_GROUP) {
        "workgroupBarrier"
    } else if flags.contains(naga::Barrier::STORAGE) {
        "storageBarrier"
    } else if flags.contains(naga::Barrier::TEXTURE) {
        "textureBarrier"
    } else {
        "subgroupBarrier"
    }
}

fn collective_name(op: naga::SubgroupOperation, c: naga::CollectiveOperation) -> &'static str {
    use naga::CollectiveOperation as C;
    use naga::SubgroupOperation as O;
    match (op, c) {
        (O::All, _) => "subgroupAll",
        (O::Any, _) => "subgroupAny",
        (O::Add, C::Reduce) => "subgroupAdd",
        (O::Add, C::InclusiveScan) => "subgroupInclusiveAdd",
        (O::Add, C::ExclusiveScan) => "subgroupExclusiveAdd",
        (O::Mul, C::Reduce) => "subgroupMul",
        (O::Mul, C::InclusiveScan) => "subgroupInclusiveMul",
        (O::Mul, C::ExclusiveScan) => "subgroupExclusiveMul",
        (O::Min, _) => "subgroupMin",
        (O::Max, _) => "subgroupMax",
        (O::And, _) => "subgroupAnd",
        (O::Or, _) => "subgroupOr",
        (O::Xor, _) => "subgroupXor",
    }
}

fn gather_name(mode: naga::GatherMode) -> &'static str {
    use naga::GatherMode as G;
    match mode {
        G::BroadcastFirst => "subgroupBroadcastFirst",
        G::Broadcast(_) => "subgroupBroadcast",
        G::Shuffle(_) => "subgroupShuffle",
        G::ShuffleDown(_) => "subgroupShuffleDown",
        G::ShuffleUp(_) => "subgroupShuffleUp",
        G::ShuffleXor(_) => "subgroupShuffleXor",
        G::QuadBroadcast(_) => "quadBroadcast",
        G::QuadSwap(_) => "quadSwap",
    }
}
