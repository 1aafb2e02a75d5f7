//! The static analysis of a [`Program`]: types, and what every value may be on a conforming
//! implementation ([`Info`]: integer ranges, float intervals with error bounds
//! ([`crate::accuracy`]), whether a value is a const-expression or workgroup-uniform). It is
//! the definition of "free of undefined behaviour by construction": the generator only makes
//! programs it accepts, the shrinker keeps only reductions it accepts, and the oracle takes
//! its bounds from it.
//!
//! What it refuses (each with a reason):
//! - operations outside their domain, or whose result could overflow or be non-finite
//!   (`sqrt` of a possibly negative value, a divisor not bounded away from 0, `exp` of a large
//!   value, ...);
//! - float operations whose result jumps (`floor`, comparisons, `step`, conversions and
//!   bitcasts to integers, packing) on inexact operands: every integer and `bool` is the same
//!   on every conforming implementation;
//! - WGSL const-expression errors the DSL reports at build time (`x / 0`, shifts by 32 or
//!   more with literal amounts, literal `clamp` bounds that cross, literal `extractBits`
//!   ranges past 32 bits), except where a [`Mistake`] is planted on purpose;
//! - indices not provably in range (vector and array values: `i % n`; buffers: the emitter
//!   reduces every input index by the buffer's length);
//! - loops without a bound (the bound's range bounds the trip count) and loop bounds that
//!   read `var`s or memory;
//! - data races: output slots are per invocation, the workgroup array is written at
//!   `local_invocation_index` only in one phase and read anywhere only in the next (a
//!   `workgroupBarrier` between), shared atomics take one commutative operation each;
//! - barriers, `workgroupUniformLoad` and subgroup operations outside uniform control flow,
//!   and subgroup operations where the kernel has none;
//! - values used outside the block that declares them.

use std::collections::{HashMap, HashSet};

use crate::accuracy::{F, Fmt, Ops, Reject};
use crate::ast::*;
pub use crate::info::{Contract, Info, Num, full};

fn int(lo: i64, hi: i64) -> Num {
    Num::Int { lo, hi }
}

/// `[lo, hi]` if it fits `s`, else its full range (the operation wrapped).
fn wrap(s: Scalar, lo: i64, hi: i64) -> Num {
    let Num::Int { lo: fl, hi: fh } = full(s) else {
        unreachable!()
    };
    if lo >= fl && hi <= fh && lo <= hi {
        int(lo, hi)
    } else {
        full(s)
    }
}

/// The workgroup array and atomic: written in one phase, read in the next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Each invocation reads and writes its own element; the workgroup atomic is added to.
    Own,
    /// Everyone reads any element and the atomic; nobody writes.
    Read,
}

/// Where a statement is.
#[derive(Clone, Copy, Debug)]
pub struct Ctx {
    /// Inside a loop (of this function).
    pub in_loop: bool,
    /// Control flow is uniform here.
    pub uniform_cf: bool,
    /// Inside helper function `n`.
    pub in_func: Option<usize>,
    /// The workgroup memory phase.
    pub phase: Phase,
}

/// An output slot's buffer: `bool` values go to `out_u32`.
pub fn out_buffer(s: Scalar) -> Scalar {
    if s == Scalar::Bool { Scalar::U32 } else { s }
}

/// What the analysis found about a whole program: the bound of every output slot.
#[derive(Clone, Debug, Default)]
pub struct Analysis {
    /// `(buffer, slot)` -> the stored value's description.
    pub slots: HashMap<(Scalar, u32), Info>,
    /// Slots of the per-invocation atomics used.
    pub own_atomics: u32,
    /// Shared atomic slots used.
    pub shared_atomics: u32,
    /// Whether the workgroup array, atomic, storage atomics, the uniform and each input
    /// buffer are used.
    pub uses: Uses,
    /// Whether a [`Mistake`] is planted (the build must fail).
    pub mistake: bool,
}

/// The globals a program uses.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Uses {
    /// Input buffers read, by scalar.
    pub inputs: Vec<Scalar>,
    /// The uniform parameter.
    pub param: bool,
    /// The workgroup array.
    pub wg: bool,
    /// The workgroup atomic.
    pub wg_atomic: bool,
    /// Storage atomics.
    pub atomics: bool,
}

/// The most iterations a loop may run.
pub const MAX_TRIPS: i64 = 8;
/// Subgroup sizes the analysis allows for (float sums over a subgroup, lanes).
pub const MAX_SUBGROUP: u8 = 64;
/// The smallest subgroup size assumed (lanes and masks stay below it).
pub const MIN_SUBGROUP: u32 = 4;

/// Scopes and slots at a point of the analysis ([`Analyzer::mark`]).
#[derive(Clone, Debug)]
pub struct Mark {
    values: usize,
    vars: usize,
    slots: HashMap<(Scalar, u32), Info>,
}

/// The analysis state.
#[derive(Clone, Debug)]
pub struct Analyzer<'p> {
    prog: &'p Program,
    /// In-scope values, innermost last.
    values: Vec<(Id, Info)>,
    /// In-scope vars and their contracts.
    vars: Vec<(Id, Contract)>,
    /// Helper functions' results.
    func_results: Vec<Info>,
    /// Literal `let`s (the DSL treats them as the literal).
    literal_lets: HashMap<Id, Lit>,
    /// `let`s of constants (naga's front end folds them).
    konst_lets: HashSet<Id>,
    /// `let`s of vectors composed of parts (`vec4(x, 255u, ..)`, `splat`): naga's validator
    /// looks through the `let` at the composed expression and checks its constant parts as
    /// a shift amount or divisor (FUZZING.md naga finding 4).
    compose_lets: HashMap<Id, Expr>,
    /// The result.
    pub out: Analysis,
}

fn lit_info(l: Lit) -> Info {
    let num = match l {
        Lit::Bool(_) => Num::Bool,
        Lit::I32(v) => int(i64::from(v), i64::from(v)),
        Lit::U32(v) => int(i64::from(v), i64::from(v)),
        Lit::F32(_) | Lit::F16(_) => Num::Float(F::lit(l.as_f64())),
    };
    Info {
        ty: Ty::S(l.scalar()),
        num,
        konst: true,
        uniform: true,
    }
}

/// The literal parts of an operand: itself if a literal, the literal components of a
/// `Compose` or `Splat` (the DSL checks those for `x / 0`-like const errors too).
fn literal_parts(e: &Expr, lets: &HashMap<Id, Lit>, out: &mut Vec<Lit>) {
    match e {
        Expr::Lit(l) => out.push(*l),
        Expr::Value(id) => {
            if let Some(l) = lets.get(id) {
                out.push(*l);
            }
        }
        Expr::Splat(_, a) => literal_parts(a, lets, out),
        Expr::Compose(parts) => parts.iter().for_each(|p| literal_parts(p, lets, out)),
        _ => {}
    }
}

/// Every leaf a literal or a zero value (a `let` of a literal counts as one).
fn syn_konst(e: &Expr, lets: &HashMap<Id, Lit>, konst_lets: &HashSet<Id>) -> bool {
    let mut k = true;
    visit(e, &mut |x| match x {
        Expr::Value(id) if !lets.contains_key(id) && !konst_lets.contains(id) => k = false,
        Expr::Input(..)
        | Expr::Param
        | Expr::Builtin(_)
        | Expr::Var(_)
        | Expr::Wg(_)
        | Expr::WgAtomic => k = false,
        _ => {}
    });
    k
}

/// The components of `e` that are constants are literals (the DSL checks a constant divisor's
/// or shift amount's components one by one, and only literal ones can be checked here).
///
/// A `let` of a constant counts as a constant: it is no const-expression in WGSL (nor for
/// the DSL), but naga's WGSL front end folds it as one and then refuses `x << v` or `x / v`
/// where `v` is out of range (FUZZING.md, "naga"); such kernels are not generated.
fn constant_parts_are_literals(
    e: &Expr,
    lets: &HashMap<Id, Lit>,
    konst_lets: &HashSet<Id>,
) -> bool {
    match e {
        Expr::Lit(_) => true,
        Expr::Value(id) if lets.contains_key(id) => true,
        Expr::Splat(_, a) => constant_parts_are_literals(a, lets, konst_lets),
        Expr::Compose(parts) => parts
            .iter()
            .all(|p| constant_parts_are_literals(p, lets, konst_lets)),
        _ => !syn_konst(e, lets, konst_lets),
    }
}

fn ops(ty: Ty) -> Ops {
    Ops::of(ty.scalar())
}

/// The description of the elements of an input buffer: the join of its contents (the
/// element at a literal index: that element).
fn input_info(prog: &Program, s: Scalar, index: Option<u32>) -> Result<Num, Reject> {
    fn floats(v: impl Iterator<Item = f64>) -> Num {
        let mut f: Option<F> = None;
        for x in v {
            let l = F::lit(x);
            f = Some(f.map_or(l, |f| f.join(l)));
        }
        // Zero padding of the buffer is read by arrayLength-reduced indices too.
        let z = F::lit(0.0);
        Num::Float(f.map_or(z, |f| f.join(z)))
    }
    let i = |len: usize| index.map(|i| i as usize % len.max(1));
    Ok(match s {
        Scalar::F32 => match i(prog.inputs.f32.len()) {
            Some(i) => Num::Float(F::lit(f64::from(*prog.inputs.f32.get(i).ok_or("empty")?))),
            None => floats(prog.inputs.f32.iter().map(|&v| f64::from(v))),
        },
        Scalar::F16 => {
            let h = |b: u16| f64::from(half::f16::from_bits(b).to_f32());
            // An odd number of f16s is padded to a whole word: arrayLength counts it.
            let len = prog.inputs.f16.len().next_multiple_of(2);
            match index.map(|i| i as usize % len.max(1)) {
                Some(i) => Num::Float(F::lit(prog.inputs.f16.get(i).map_or(0.0, |&b| h(b)))),
                None => floats(prog.inputs.f16.iter().map(|&b| h(b))),
            }
        }
        Scalar::I32 => match i(prog.inputs.i32.len()) {
            Some(i) => {
                let v = i64::from(*prog.inputs.i32.get(i).ok_or("empty")?);
                int(v, v)
            }
            None => {
                let (lo, hi) = prog.inputs.i32.iter().fold((0i64, 0i64), |(l, h), &v| {
                    (l.min(v.into()), h.max(v.into()))
                });
                int(lo, hi)
            }
        },
        Scalar::U32 => match i(prog.inputs.u32.len()) {
            Some(i) => {
                let v = i64::from(*prog.inputs.u32.get(i).ok_or("empty")?);
                int(v, v)
            }
            None => {
                let hi = prog
                    .inputs
                    .u32
                    .iter()
                    .map(|&v| i64::from(v))
                    .max()
                    .unwrap_or(0);
                int(0, hi)
            }
        },
        Scalar::Bool => return Err("no bool input buffer".into()),
    })
}

impl<'p> Analyzer<'p> {
    /// An analyzer of `prog` (call [`Analyzer::program`]).
    pub fn new(prog: &'p Program) -> Self {
        Analyzer {
            prog,
            values: Vec::new(),
            vars: Vec::new(),
            func_results: Vec::new(),
            literal_lets: HashMap::new(),
            konst_lets: HashSet::new(),
            compose_lets: HashMap::new(),
            out: Analysis::default(),
        }
    }

    /// The program this analyzes.
    pub fn prog(&self) -> &'p Program {
        self.prog
    }

    /// Analyze the whole program: helper functions, then the body.
    ///
    /// # Errors
    /// The first thing the analysis refuses, with where.
    pub fn program(mut self) -> Result<Analysis, Reject> {
        if self.prog.coop.is_some() || self.prog.texture.is_some() {
            return Ok(self.out);
        }
        self.funcs()?;
        self.block(&self.prog.body, Self::entry_ctx())?;
        check_compare_exchange(&self.prog.body)?;
        Ok(self.out)
    }

    /// Analyze the helper functions (before statements that call them).
    ///
    /// # Errors
    /// What the analysis refuses in them.
    pub fn funcs(&mut self) -> Result<(), Reject> {
        self.func_results.clear();
        for (n, f) in self.prog.funcs.iter().enumerate() {
            let r = self.func(n, f).map_err(|e| format!("helper f{n}: {e}"))?;
            self.func_results.push(r);
        }
        Ok(())
    }

    /// The result of helper `n` (after [`Analyzer::funcs`]).
    pub fn func_result(&self, n: usize) -> Option<Info> {
        self.func_results.get(n).copied()
    }

    /// Where the entry point's body starts.
    pub fn entry_ctx() -> Ctx {
        Ctx {
            in_loop: false,
            uniform_cf: true,
            in_func: None,
            phase: Phase::Own,
        }
    }

    /// The scopes and slots now, to return to with [`Analyzer::restore`].
    pub fn mark(&self) -> Mark {
        Mark {
            values: self.values.len(),
            vars: self.vars.len(),
            slots: self.out.slots.clone(),
        }
    }

    /// Forget what was analyzed since `m`.
    pub fn restore(&mut self, m: &Mark) {
        self.values.truncate(m.values);
        self.vars.truncate(m.vars);
        self.out.slots = m.slots.clone();
    }

    /// Bring a value into scope (a helper's parameter, for generating its body).
    pub fn push_value(&mut self, id: Id, info: Info) {
        self.values.push((id, info));
    }

    /// The values in scope, innermost last.
    pub fn values(&self) -> &[(Id, Info)] {
        &self.values
    }

    /// The vars in scope, innermost last.
    pub fn vars(&self) -> &[(Id, Contract)] {
        &self.vars
    }

    fn func(&mut self, n: usize, f: &Func) -> Result<Info, Reject> {
        if f.params.is_empty() || f.params.len() > 3 || f.contract.ty != f.ty {
            return Err("a helper's parameters".into());
        }
        let mark = (self.values.len(), self.vars.len());
        for &p in &f.params {
            let mut c = f.contract;
            c.konst = false;
            self.values.push((p, c));
        }
        let ctx = Ctx {
            in_loop: false,
            uniform_cf: true,
            in_func: Some(n),
            phase: Phase::Own,
        };
        let mut result = None;
        self.func_block(&f.body, ctx, f.ty, &mut result, true)?;
        let last = self.expr(&f.result, ctx)?;
        if last.ty != f.ty {
            return Err("a helper's result type".into());
        }
        self.values.truncate(mark.0);
        self.vars.truncate(mark.1);
        let mut r = result.map_or(last, |r: Info| r.join(&last));
        r.konst = false;
        Ok(r)
    }

    /// A helper's statements: `let`s, `var`s, `if`s whose arms may return.
    fn func_block(
        &mut self,
        body: &[Stmt],
        ctx: Ctx,
        ty: Ty,
        result: &mut Option<Info>,
        keep: bool,
    ) -> Result<(), Reject> {
        let mark = (self.values.len(), self.vars.len());
        for s in body {
            match s {
                Stmt::Return(e) => {
                    let i = self.expr(e, ctx)?;
                    if i.ty != ty {
                        return Err("a return of another type".into());
                    }
                    *result = Some(result.map_or(i, |r| r.join(&i)));
                }
                Stmt::If(c, a, b) => {
                    let ci = self.expr(c, ctx)?;
                    if ci.ty != Ty::S(Scalar::Bool) {
                        return Err("an if condition that is not a bool".into());
                    }
                    self.func_block(a, ctx, ty, result, false)?;
                    self.func_block(b, ctx, ty, result, false)?;
                }
                Stmt::Let(..) | Stmt::Var(..) | Stmt::Assign(..) | Stmt::Update(..) => {
                    self.stmt(s, ctx)?;
                }
                _ => return Err("a statement helpers do not take".into()),
            }
        }
        if !keep {
            self.values.truncate(mark.0);
            self.vars.truncate(mark.1);
        }
        Ok(())
    }

    fn value(&self, id: Id) -> Result<Info, Reject> {
        innermost(&self.values, id).ok_or_else(|| format!("value v{id} out of scope"))
    }

    fn var(&self, id: Id) -> Result<Contract, Reject> {
        innermost(&self.vars, id).ok_or_else(|| format!("var x{id} out of scope"))
    }

    /// Analyze a block; the values it declares go out of scope after it. Returns whether a
    /// `break`, `continue` or `return` was taken in non-uniform control flow, and the phase.
    fn block(&mut self, body: &[Stmt], mut ctx: Ctx) -> Result<(bool, Phase), Reject> {
        let mark = (self.values.len(), self.vars.len());
        let mut diverged = false;
        for s in body {
            let (d, phase) = self.stmt(s, ctx)?;
            ctx.phase = phase;
            if d {
                diverged = true;
                ctx.uniform_cf = false;
            }
        }
        self.values.truncate(mark.0);
        self.vars.truncate(mark.1);
        Ok((diverged, ctx.phase))
    }

    fn bind(&mut self, id: Id, info: Info) -> Result<(), Reject> {
        if self.values.iter().any(|(i, _)| *i == id) || self.vars.iter().any(|(i, _)| *i == id) {
            return Err(format!("v{id} bound twice"));
        }
        self.values.push((id, info));
        Ok(())
    }

    fn slot(&mut self, s: Scalar, slot: u32, info: Info) -> Result<(), Reject> {
        let key = (out_buffer(s), slot);
        if self.out.slots.contains_key(&key) {
            return Err(format!("output slot {slot} stored twice"));
        }
        self.out.slots.insert(key, info);
        Ok(())
    }

    /// Analyze one statement.
    pub fn stmt(&mut self, s: &Stmt, ctx: Ctx) -> Result<(bool, Phase), Reject> {
        let entry_only = |what: &str| -> Result<(), Reject> {
            if ctx.in_func.is_some() {
                Err(format!("{what} in a helper function"))
            } else {
                Ok(())
            }
        };
        match s {
            Stmt::Let(id, e) => {
                let mut i = self.expr(e, ctx)?;
                if i.konst {
                    self.konst_lets.insert(*id);
                }
                if let Expr::Lit(l) = e {
                    self.literal_lets.insert(*id, *l);
                } else {
                    i.konst = false;
                }
                if matches!(e, Expr::Compose(_) | Expr::Splat(..)) {
                    self.compose_lets.insert(*id, e.clone());
                }
                self.bind(*id, i)?;
            }
            Stmt::Var(id, contract, init) => {
                if !contract.ty.is_sv() && !matches!(contract.ty, Ty::M(_)) {
                    return Err("a var type".into());
                }
                match init {
                    VarInit::Value(e) => {
                        let i = self.expr(e, ctx)?;
                        if !i.fits(contract) {
                            return Err(format!("x{id}'s initial value does not fit it"));
                        }
                    }
                    VarInit::Zero | VarInit::Declared => {
                        let z = self.expr(&Expr::Zero(contract.ty), ctx)?;
                        if !z.fits(contract) {
                            return Err(format!("x{id}'s zero value does not fit it"));
                        }
                    }
                }
                if contract.uniform && !ctx.uniform_cf {
                    return Err("a uniform var declared in non-uniform control flow".into());
                }
                if self.values.iter().any(|(i, _)| i == id)
                    || self.vars.iter().any(|(i, _)| i == id)
                {
                    return Err(format!("x{id} declared twice"));
                }
                let mut c = *contract;
                c.konst = false;
                self.vars.push((*id, c));
            }
            Stmt::Assign(id, e) | Stmt::Update(id, _, e) => {
                let c = self.var(*id)?;
                let value = match s {
                    Stmt::Update(_, op, _) => {
                        Expr::Bin(*op, Box::new(Expr::Var(*id)), Box::new(e.clone()))
                    }
                    _ => e.clone(),
                };
                let i = self.expr(&value, ctx)?;
                if !i.fits(&c) || (c.uniform && !ctx.uniform_cf) {
                    return Err(format!("a store into x{id} that does not fit it"));
                }
            }
            Stmt::Out(sc, slot, e) => {
                entry_only("an output store")?;
                let i = self.expr(e, ctx)?;
                if i.ty != Ty::S(*sc) {
                    return Err("an output of another type".into());
                }
                let sc = *sc;
                self.slot(sc, *slot, i)?;
            }
            Stmt::If(c, a, b) => {
                let (_, inner) = self.if_condition(c, ctx)?;
                let (da, pa) = self.block(a, inner)?;
                let (db, pb) = self.block(b, inner)?;
                if pa != ctx.phase || pb != ctx.phase {
                    return Err("a barrier inside an if".into());
                }
                return Ok((da || db, ctx.phase));
            }
            Stmt::IfValue(id, ty, c, (a, va), (b, vb)) => {
                let (ci, inner) = self.if_condition(c, ctx)?;
                let mark = (self.values.len(), self.vars.len());
                let (da, pa) = self.block_keep(a, inner)?;
                let ia = self.expr(va, inner)?;
                self.values.truncate(mark.0);
                self.vars.truncate(mark.1);
                let (db, pb) = self.block_keep(b, inner)?;
                let ib = self.expr(vb, inner)?;
                self.values.truncate(mark.0);
                self.vars.truncate(mark.1);
                if da || db || pa != ctx.phase || pb != ctx.phase {
                    return Err("control flow or barriers in an if_value arm".into());
                }
                if ia.ty != ib.ty || ia.ty != *ty {
                    return Err("if_value arms of different types".into());
                }
                let mut r = ia.join(&ib);
                r.uniform = r.uniform && ci.uniform;
                r.konst = false;
                self.bind(*id, r)?;
            }
            Stmt::Loop(l) => {
                if !l.scalar.is_int() {
                    return Err("a loop counter that is not an integer".into());
                }
                if l.scalar == Scalar::U32 && l.start < 0 {
                    return Err("a negative u32 start".into());
                }
                if reads_memory(&l.end) {
                    return Err("a loop bound that reads a var or memory".into());
                }
                let ei = self.expr(&l.end, ctx)?;
                let Some((elo, ehi)) = ei.range().filter(|_| ei.ty == Ty::S(l.scalar)) else {
                    return Err("a loop bound of another type".into());
                };
                let start = i64::from(l.start);
                if ehi - start > MAX_TRIPS {
                    return Err(format!("a loop of up to {} trips", ehi - start));
                }
                match l.form {
                    LoopForm::InclusiveIn { .. } if elo < start + 1 => {
                        return Err("an inclusive range whose end may precede its start".into());
                    }
                    LoopForm::InclusiveIn { step: Some(0), .. } | LoopForm::Step(0) => {
                        return Err("a zero step".into());
                    }
                    _ => {}
                }
                let cinfo = Info {
                    ty: Ty::S(l.scalar),
                    num: int(start.min(ehi - 1), (ehi - 1).max(start)),
                    konst: false,
                    uniform: ei.uniform && ctx.uniform_cf,
                };
                let inner = Ctx {
                    in_loop: true,
                    uniform_cf: ctx.uniform_cf && ei.uniform,
                    ..ctx
                };
                let mark = (self.values.len(), self.vars.len());
                self.bind(l.counter, cinfo)?;
                let snapshot = self.out.slots.clone();
                let mut r = self.block(&l.body, inner);
                if let Ok((true, _)) = r {
                    // A non-uniform exit: every iteration after it is non-uniform.
                    self.out.slots = snapshot;
                    r = self.block(
                        &l.body,
                        Ctx {
                            uniform_cf: false,
                            ..inner
                        },
                    );
                }
                let (diverged, phase) = r?;
                self.values.truncate(mark.0);
                self.vars.truncate(mark.1);
                if phase != ctx.phase {
                    return Err("a loop body that changes the workgroup phase".into());
                }
                return Ok((diverged, ctx.phase));
            }
            Stmt::Break | Stmt::Continue => {
                if !ctx.in_loop {
                    return Err("break or continue outside a loop".into());
                }
                return Ok((!ctx.uniform_cf, ctx.phase));
            }
            Stmt::Switch(sel, arms, default) => {
                let si = self.expr(sel, ctx)?;
                let Ty::S(sc) = si.ty else {
                    return Err("a switch selector".into());
                };
                if !sc.is_int() {
                    return Err("a switch selector that is not an integer".into());
                }
                let mut seen = std::collections::HashSet::new();
                for (values, _) in arms {
                    if values.is_empty() {
                        return Err("an empty case".into());
                    }
                    for v in values {
                        if !seen.insert(*v) || (sc == Scalar::U32 && *v < 0) {
                            return Err("a repeated or negative case value".into());
                        }
                    }
                }
                let inner = Ctx {
                    uniform_cf: ctx.uniform_cf && si.uniform,
                    ..ctx
                };
                let mut diverged = false;
                for b in arms.iter().map(|(_, b)| b).chain(default.iter()) {
                    let (d, p) = self.block(b, inner)?;
                    if p != ctx.phase {
                        return Err("a barrier inside a switch".into());
                    }
                    diverged |= d;
                }
                return Ok((diverged, ctx.phase));
            }
            Stmt::Barrier(workgroup) => {
                entry_only("a barrier")?;
                if !ctx.uniform_cf {
                    return Err("a barrier in non-uniform control flow".into());
                }
                if *workgroup {
                    let next = match ctx.phase {
                        Phase::Own => Phase::Read,
                        Phase::Read => Phase::Own,
                    };
                    return Ok((false, next));
                }
            }
            Stmt::WgStore(e) => {
                entry_only("a workgroup store")?;
                self.out.uses.wg = true;
                let i = self.expr(e, ctx)?;
                if i.ty != Ty::S(Scalar::U32) {
                    return Err("a workgroup store of another type".into());
                }
                if ctx.phase != Phase::Own {
                    return Err("a workgroup store in the read phase".into());
                }
            }
            Stmt::WgUniformLoad(id, index) => {
                entry_only("workgroupUniformLoad")?;
                self.out.uses.wg = true;
                if !ctx.uniform_cf || *index >= self.prog.invocations() {
                    return Err("workgroupUniformLoad in non-uniform control flow".into());
                }
                self.bind(*id, Info::new(Ty::S(Scalar::U32), full(Scalar::U32)))?;
                return Ok((false, Phase::Read));
            }
            Stmt::Call(id, f, args) => {
                entry_only("a call")?;
                let func = self
                    .prog
                    .funcs
                    .get(*f)
                    .ok_or("a call of a missing helper")?;
                let result = *self
                    .func_results
                    .get(*f)
                    .ok_or("a call of a later helper")?;
                if args.len() != func.params.len() {
                    return Err("a call with the wrong arity".into());
                }
                let mut uniform = true;
                for a in args {
                    let ai = self.expr(a, ctx)?;
                    let mut c = func.contract;
                    c.uniform = false;
                    if !ai.fits(&c) {
                        return Err(format!(
                            "an argument of f{f} that does not fit its contract"
                        ));
                    }
                    uniform &= ai.uniform;
                }
                self.bind(
                    *id,
                    Info {
                        uniform,
                        konst: false,
                        ..result
                    },
                )?;
            }
            Stmt::Atomic(id, target, op, value, cmp) => {
                entry_only("an atomic")?;
                let vi = self.expr(value, ctx)?;
                if vi.ty != Ty::S(Scalar::U32) {
                    return Err("an atomic operand of another type".into());
                }
                if let Some(c) = cmp {
                    let ci = self.expr(c, ctx)?;
                    if ci.ty != Ty::S(Scalar::U32) || *op != AtomicOp::CompareExchange {
                        return Err("a comparand".into());
                    }
                } else if *op == AtomicOp::CompareExchange {
                    return Err("compare-exchange without a comparand".into());
                }
                if *op == AtomicOp::CompareExchange
                    && (ctx.in_loop || *target != AtomicTarget::Own(CAS_SLOT))
                {
                    return Err("a compare-exchange in a loop or on another slot".into());
                }
                if (*op == AtomicOp::AddF32) != (*target == AtomicTarget::Own(F32_SLOT))
                    || (*op == AtomicOp::AddF32 && id.is_some())
                {
                    return Err("an f32 addition on another slot, or another op on its slot".into());
                }
                match target {
                    AtomicTarget::Own(slot) => {
                        self.out.uses.atomics = true;
                        self.out.own_atomics = self.out.own_atomics.max(slot + 1);
                    }
                    AtomicTarget::Shared(slot) => {
                        self.out.uses.atomics = true;
                        self.out.shared_atomics = self.out.shared_atomics.max(slot + 1);
                        if !shared_op_ok(*slot, *op) || id.is_some() {
                            return Err("a shared atomic with another operation".into());
                        }
                    }
                    AtomicTarget::Workgroup => {
                        self.out.uses.wg_atomic = true;
                        if *op != AtomicOp::Add || id.is_some() || ctx.phase != Phase::Own {
                            return Err("a workgroup atomic other than an add".into());
                        }
                    }
                }
                if let Some(id) = id {
                    if *op == AtomicOp::Store {
                        return Err("a store has no result".into());
                    }
                    let mut i = Info::new(Ty::S(Scalar::U32), full(Scalar::U32));
                    i.uniform = false;
                    self.bind(*id, i)?;
                }
            }
            Stmt::Subgroup(id, op, arg, extra) => {
                entry_only("a subgroup operation")?;
                if !self.prog.subgroups || !ctx.uniform_cf {
                    return Err(
                        "a subgroup operation without subgroups or in non-uniform control flow"
                            .into(),
                    );
                }
                let r = self.subgroup(*op, arg, extra.as_ref(), ctx)?;
                self.bind(*id, r)?;
            }
            Stmt::Return(_) => return Err("a return in the entry point".into()),
            Stmt::Mistake(_) => {
                self.out.mistake = true;
            }
        }
        Ok((false, ctx.phase))
    }

    /// An `if`'s condition `c` in `ctx`, and the context of its arms.
    fn if_condition(&mut self, c: &Expr, ctx: Ctx) -> Result<(Info, Ctx), Reject> {
        let ci = self.expr(c, ctx)?;
        if ci.ty != Ty::S(Scalar::Bool) {
            return Err("an if condition that is not a bool".into());
        }
        let inner = Ctx {
            uniform_cf: ctx.uniform_cf && ci.uniform,
            ..ctx
        };
        Ok((ci, inner))
    }

    /// A block whose declarations stay in scope (an `if_value` arm, whose value follows).
    fn block_keep(&mut self, body: &[Stmt], mut ctx: Ctx) -> Result<(bool, Phase), Reject> {
        let mut diverged = false;
        for s in body {
            let (d, p) = self.stmt(s, ctx)?;
            ctx.phase = p;
            diverged |= d;
        }
        Ok((diverged, ctx.phase))
    }

    fn subgroup(
        &mut self,
        op: SubgroupOp,
        arg: &Expr,
        extra: Option<&Expr>,
        ctx: Ctx,
    ) -> Result<Info, Reject> {
        use SubgroupOp as O;
        let a = self.expr(arg, ctx)?;
        let s = a.ty.scalar();
        if matches!(a.ty, Ty::M(_)) || s == Scalar::F16 {
            return Err("a subgroup operand type".into());
        }
        let constant = |e: Option<&Expr>, below: u32| -> Result<(), Reject> {
            match e {
                Some(Expr::Lit(Lit::U32(v))) if *v < below => Ok(()),
                _ => Err("a subgroup lane that is not a small constant".into()),
            }
        };
        let same = |a: Info| Info {
            uniform: false,
            konst: false,
            ..a
        };
        // An operation of integers only, its result anywhere in their range.
        let of_ints = |why: &str| -> Result<Info, Reject> {
            if !s.is_int() {
                return Err(why.into());
            }
            Ok(Info {
                num: full(s),
                ..same(a)
            })
        };
        let of_bool = |why: &str| -> Result<(), Reject> {
            if a.ty != Ty::S(Scalar::Bool) {
                return Err(why.into());
            }
            Ok(())
        };
        let r = match op {
            O::Add | O::InclusiveAdd | O::ExclusiveAdd => {
                if s == Scalar::Bool {
                    return Err("a sum of bools".into());
                }
                let num = match a.num {
                    Num::Float(f) => {
                        let o = ops(a.ty);
                        let mut acc = f;
                        for _ in 1..MAX_SUBGROUP {
                            acc = o.add(acc, f)?;
                        }
                        // A scan's first lane (or an exclusive one's) is smaller: 0 included.
                        Num::Float(acc.join(F::lit(0.0)))
                    }
                    _ => full(s),
                };
                Info {
                    num,
                    uniform: false,
                    konst: false,
                    ty: a.ty,
                }
            }
            O::Mul | O::InclusiveMul | O::ExclusiveMul => {
                of_ints("a product over a subgroup that is not of integers")?
            }
            O::Min | O::Max => {
                if s == Scalar::Bool {
                    return Err("min of bools".into());
                }
                same(a)
            }
            O::And | O::Or | O::Xor => of_ints("a bit operation of non-integers")?,
            O::All | O::Any => {
                of_bool("all/any of a non-bool")?;
                same(a)
            }
            O::Ballot => {
                of_bool("a ballot of a non-bool")?;
                Info {
                    ty: Ty::V(Scalar::U32, 4),
                    num: full(Scalar::U32),
                    ..same(a)
                }
            }
            O::Elect => Info {
                ty: Ty::S(Scalar::Bool),
                num: Num::Bool,
                konst: false,
                uniform: false,
            },
            _ if s == Scalar::Bool => {
                return Err("a subgroup gather of bools (WGSL takes numbers)".into());
            }
            O::BroadcastFirst | O::QuadSwapX | O::QuadSwapY | O::QuadSwapDiagonal => same(a),
            O::Broadcast | O::QuadBroadcast => {
                constant(extra, MIN_SUBGROUP)?;
                same(a)
            }
            O::ShuffleXor | O::ShuffleUp | O::ShuffleDown => {
                constant(extra, 3)?;
                if extra == Some(&Expr::Lit(Lit::U32(0))) {
                    return Err("a zero shuffle".into());
                }
                same(a)
            }
            O::Shuffle => {
                let e = extra.ok_or("a shuffle without a lane")?;
                let li = self.expr(e, ctx)?;
                match li.range() {
                    Some((0, hi))
                        if li.ty == Ty::S(Scalar::U32) && hi < i64::from(MIN_SUBGROUP) => {}
                    _ => return Err("a shuffle lane not below the subgroup size".into()),
                }
                same(a)
            }
        };
        if !matches!(op, O::Shuffle)
            && extra.is_some()
            && !matches!(
                op,
                O::Broadcast | O::QuadBroadcast | O::ShuffleXor | O::ShuffleUp | O::ShuffleDown
            )
        {
            return Err("an extra operand".into());
        }
        Ok(r)
    }

    /// Analyze an expression at `ctx`.
    ///
    /// # Errors
    /// What the analysis refuses about it.
    pub fn expr(&mut self, e: &Expr, ctx: Ctx) -> Result<Info, Reject> {
        let b = Ty::S(Scalar::Bool);
        let u = Ty::S(Scalar::U32);
        Ok(match e {
            Expr::Lit(l) => {
                if let Lit::F32(v) = l
                    && !v.is_finite()
                {
                    return Err("a non-finite literal".into());
                }
                lit_info(*l)
            }
            Expr::Zero(ty) => {
                let num = match ty.scalar() {
                    Scalar::Bool => Num::Bool,
                    s if s.is_int() => int(0, 0),
                    _ => Num::Float(F::lit(0.0)),
                };
                Info {
                    ty: *ty,
                    num,
                    konst: true,
                    uniform: true,
                }
            }
            Expr::Input(s, index) => {
                let ii = self.expr(index, ctx)?;
                if ii.ty != u {
                    return Err("an input index that is not a u32".into());
                }
                if !self.out.uses.inputs.contains(s) {
                    self.out.uses.inputs.push(*s);
                }
                let at = match **index {
                    Expr::Lit(Lit::U32(i)) => Some(i),
                    _ => None,
                };
                Info {
                    ty: Ty::S(*s),
                    num: input_info(self.prog, *s, at)?,
                    konst: false,
                    uniform: ii.uniform,
                }
            }
            Expr::Param => {
                self.out.uses.param = true;
                Info::new(u, full(Scalar::U32))
            }
            Expr::Builtin(bv) => {
                if ctx.in_func.is_some() {
                    return Err("a built-in value in a helper".into());
                }
                let inv = i64::from(self.prog.invocations());
                let wg = self.prog.workgroup.iter().copied().max().unwrap_or(1);
                let grid = self.prog.grid.iter().copied().max().unwrap_or(1);
                let total = i64::from(wg) * i64::from(grid);
                let v3 = Ty::V(Scalar::U32, 3);
                let (ty, lo, hi, uniform) = match bv {
                    Builtin::GlobalId => (v3, 0, total - 1, false),
                    Builtin::LocalId => (v3, 0, i64::from(wg) - 1, false),
                    Builtin::LocalIndex => (u, 0, inv - 1, false),
                    Builtin::WorkgroupId => (v3, 0, i64::from(grid) - 1, true),
                    Builtin::NumWorkgroups => (v3, 1, i64::from(grid), true),
                    Builtin::SubgroupSize | Builtin::SubgroupId if !self.prog.subgroups => {
                        return Err("a subgroup built-in without subgroups".into());
                    }
                    Builtin::SubgroupSize => (u, 1, 128, true),
                    Builtin::SubgroupId => (u, 0, 127, false),
                };
                Info {
                    ty,
                    num: int(lo, hi),
                    konst: false,
                    uniform,
                }
            }
            Expr::Value(id) => {
                let mut i = self.value(*id)?;
                i.konst = self.literal_lets.contains_key(id);
                i
            }
            Expr::Var(id) => self.var(*id)?,
            Expr::Wg(index) => {
                if ctx.in_func.is_some() {
                    return Err("workgroup memory in a helper".into());
                }
                self.out.uses.wg = true;
                let ii = self.expr(index, ctx)?;
                let own = **index == Expr::Builtin(Builtin::LocalIndex);
                match ctx.phase {
                    Phase::Own if own => {}
                    Phase::Read => match ii.range() {
                        Some((lo, hi))
                            if ii.ty == u && lo >= 0 && hi < i64::from(self.prog.invocations()) => {
                        }
                        _ => return Err("a workgroup index not in range".into()),
                    },
                    Phase::Own => return Err("a read of another's workgroup element".into()),
                }
                Info {
                    ty: u,
                    num: full(Scalar::U32),
                    konst: false,
                    uniform: false,
                }
            }
            Expr::WgAtomic => {
                if ctx.in_func.is_some() || ctx.phase != Phase::Read {
                    return Err("a workgroup atomic load outside the read phase".into());
                }
                self.out.uses.wg_atomic = true;
                Info {
                    ty: u,
                    num: full(Scalar::U32),
                    konst: false,
                    uniform: false,
                }
            }
            Expr::Un(op, a) => {
                let a = self.expr(a, ctx)?;
                let s = a.ty.scalar();
                let num = match (op, a.num) {
                    (Un::Neg, Num::Int { lo, hi }) if s == Scalar::I32 && a.ty.is_sv() => {
                        wrap(s, -hi, -lo)
                    }
                    (Un::Neg, Num::Float(f)) if a.ty.is_sv() => Num::Float(ops(a.ty).neg(f)),
                    (Un::BitNot, Num::Int { .. }) if matches!(a.ty, Ty::S(_)) => full(s),
                    (Un::Not, Num::Bool) if a.ty == b => Num::Bool,
                    _ => return Err(format!("{op:?} of {:?}", a.ty)),
                };
                Info { num, ..a }
            }
            Expr::Bin(op, x, y) => self.bin(*op, x, y, ctx)?,
            Expr::Cmp(op, x, y) => {
                let xi = self.expr(x, ctx)?;
                let yi = self.expr(y, ctx)?;
                if xi.ty != yi.ty || !xi.ty.is_sv() {
                    return Err("a comparison of different types".into());
                }
                if xi.ty.scalar() == Scalar::Bool && !matches!(op, Cmp::Eq | Cmp::Ne) {
                    return Err("an ordering of bools".into());
                }
                if let (Some(fx), Some(fy)) = (xi.float(), yi.float())
                    && !(fx.is_exact() && fy.is_exact())
                {
                    let d = ops(xi.ty).sub(fx, fy)?;
                    if d.min_mag() == 0.0 {
                        return Err("a comparison of inexact floats that may be close".into());
                    }
                }
                Info {
                    ty: xi.ty.with_scalar(Scalar::Bool),
                    num: Num::Bool,
                    konst: xi.konst && yi.konst,
                    uniform: xi.uniform && yi.uniform,
                }
            }
            Expr::Logic(_, x, y) => {
                let xi = self.expr(x, ctx)?;
                let yi = self.expr(y, ctx)?;
                if xi.ty != b || yi.ty != b {
                    return Err("and/or of non-bools".into());
                }
                Info {
                    konst: xi.konst && yi.konst,
                    uniform: xi.uniform && yi.uniform,
                    ..xi
                }
            }
            Expr::Math(fun, args) => {
                let mut infos = Vec::with_capacity(args.len());
                for a in args {
                    infos.push(self.expr(a, ctx)?);
                }
                let mut r = crate::analysis_math::math(*fun, args, &infos, &self.literal_lets)?;
                r.konst = infos.iter().all(|i| i.konst);
                r.uniform = infos.iter().all(|i| i.uniform);
                r
            }
            Expr::Select(vector, parts) => {
                let [c, a, r] = &**parts;
                let ci = self.expr(c, ctx)?;
                let ai = self.expr(a, ctx)?;
                let ri = self.expr(r, ctx)?;
                if ai.ty != ri.ty || !ai.ty.is_sv() {
                    return Err("select of different types".into());
                }
                let cond_ok = if *vector {
                    matches!(ci.ty, Ty::V(..)) && ci.ty == ai.ty.with_scalar(Scalar::Bool)
                } else {
                    ci.ty == b
                };
                if !cond_ok || ci.ty.scalar() != Scalar::Bool {
                    return Err("a select condition of another shape".into());
                }
                let mut j = ai.join(&ri);
                j.konst = ci.konst && ai.konst && ri.konst;
                j.uniform = ci.uniform && j.uniform;
                j
            }
            Expr::Conv(c, a) => {
                let ai = self.expr(a, ctx)?;
                let mut r = crate::analysis_math::convert(*c, &ai)?;
                r.konst = ai.konst;
                r.uniform = ai.uniform;
                r
            }
            Expr::Splat(n, a) => {
                let ai = self.expr(a, ctx)?;
                let Ty::S(s) = ai.ty else {
                    return Err("a splat of a vector".into());
                };
                if !(2..=4).contains(n) {
                    return Err("a splat width".into());
                }
                Info {
                    ty: Ty::V(s, *n),
                    ..ai
                }
            }
            Expr::Compose(parts) => {
                let mut infos = Vec::new();
                for p in parts {
                    infos.push(self.expr(p, ctx)?);
                }
                let n = infos.len() as u8;
                let first = *infos.first().ok_or("an empty compose")?;
                if !(2..=4).contains(&n) || infos.iter().any(|i| i.ty != first.ty) {
                    return Err("a compose of mixed parts".into());
                }
                let ty = match first.ty {
                    Ty::S(s) => Ty::V(s, n),
                    Ty::V(Scalar::F32, m) if m == n => Ty::M(n),
                    _ => return Err("a compose of vectors".into()),
                };
                let mut j = infos.iter().skip(1).fold(first, |a, b| a.join(b));
                j.ty = ty;
                j
            }
            Expr::Swizzle(n, a) => {
                let ai = self.expr(a, ctx)?;
                match (n, ai.ty) {
                    (2, Ty::V(s, _)) => Info {
                        ty: Ty::V(s, 2),
                        ..ai
                    },
                    (3, Ty::V(s, 4)) => Info {
                        ty: Ty::V(s, 3),
                        ..ai
                    },
                    _ => return Err("a swizzle".into()),
                }
            }
            Expr::Component(i, a) => {
                let ai = self.expr(a, ctx)?;
                match ai.ty {
                    Ty::V(s, n) if *i < n => Info { ty: Ty::S(s), ..ai },
                    _ => return Err("a component".into()),
                }
            }
            Expr::Index(v, i) => {
                let vi = self.expr(v, ctx)?;
                let ii = self.expr(i, ctx)?;
                let Ty::V(s, n) = vi.ty else {
                    return Err("an index into a non-vector".into());
                };
                in_range(&ii, n as i64)?;
                Info {
                    ty: Ty::S(s),
                    konst: vi.konst && ii.konst,
                    uniform: vi.uniform && ii.uniform,
                    ..vi
                }
            }
            Expr::ArrayPick(elems, i) => {
                let mut infos = Vec::new();
                for p in elems {
                    infos.push(self.expr(p, ctx)?);
                }
                let ii = self.expr(i, ctx)?;
                if infos.len() != 4
                    || infos.iter().any(|x| x.ty != infos[0].ty)
                    || !infos[0].ty.is_sv()
                {
                    return Err("an array of mixed elements".into());
                }
                in_range(&ii, 4)?;
                let mut j = infos.iter().skip(1).fold(infos[0], |a, b| a.join(b));
                j.konst = j.konst && ii.konst;
                j.uniform = j.uniform && ii.uniform;
                j
            }
            Expr::AnyAll(_, v) => {
                let vi = self.expr(v, ctx)?;
                match vi.ty {
                    Ty::V(Scalar::Bool, _) => Info { ty: b, ..vi },
                    _ => return Err("any/all of a non-bool vector".into()),
                }
            }
            Expr::Split(part, a) => {
                let ai = self.expr(a, ctx)?;
                let mut r = crate::analysis_math::split(*part, &ai)?;
                r.konst = ai.konst;
                r.uniform = ai.uniform;
                r
            }
        })
    }

    fn bin(&mut self, op: Bin, x: &Expr, y: &Expr, ctx: Ctx) -> Result<Info, Reject> {
        let xi = self.expr(x, ctx)?;
        let yi = self.expr(y, ctx)?;
        let konst = xi.konst && yi.konst;
        let uniform = xi.uniform && yi.uniform;
        // A `let` of a composed vector: naga's validator checks the composed expression's
        // constant parts (a `let` is no const-expression in WGSL, §8.9, but naga refuses
        // `x << v` with `let v = vec4(a, 255u, 31u, b)`: "Shift amount exceeds the bit
        // width"; H200 differential run of seed 20261206, case 5378828363366603443,
        // FUZZING.md naga finding 4). Such an amount or divisor is checked as if written
        // in place.
        let y = match y {
            Expr::Value(id) if matches!(op, Bin::Div | Bin::Rem | Bin::Shl | Bin::Shr) => {
                self.compose_lets.get(id).unwrap_or(y)
            }
            _ => y,
        };
        let mut lits = Vec::new();
        literal_parts(y, &self.literal_lets, &mut lits);
        if matches!(op, Bin::Div | Bin::Rem | Bin::Shl | Bin::Shr)
            && !constant_parts_are_literals(y, &self.literal_lets, &self.konst_lets)
        {
            return Err(
                "a divisor or shift amount with constant parts that are not literals".into(),
            );
        }
        if op == Bin::Shl
            && syn_konst(x, &self.literal_lets, &self.konst_lets)
            && syn_konst(y, &self.literal_lets, &self.konst_lets)
        {
            // `let v = 2147483647i / 2i; .. v << 28u` is a run-time shift in WGSL (a `let` is
            // no const-expression), but naga's front end folds `v`, its writer prints
            // `1073741823i << 28u`, and that text is refused ("<< operation overflowed",
            // §8.9). Case 1438706623654173776 of the H200 run of seed 3434 (oracle (b));
            // FUZZING.md naga finding 3.
            return Err("a left shift of a constant `let` by a constant (naga folds it)".into());
        }
        if matches!(xi.ty, Ty::V(Scalar::I32 | Scalar::U32, _))
            && (unpacks_4x8(x) && divides(y) || unpacks_4x8(y) && divides(x))
        {
            // NVIDIA's Vulkan driver (H200, 580.159.04) drops this store and every later one
            // of the invocation: `(unpack4xI8(u) + vec4(x) / vec4(3i)).z`, found by the fuzzer
            // (case 12121527670108094070); each half alone, and the unpack by bit operations,
            // compute right. FUZZING.md NVIDIA finding 1, pinned by
            // `tests/lavapipe_findings.rs` `packed_4x8_integer_forms_on_the_gpu`.
            return Err(
                "an integer vector operation of an unpack4xI8/U8 and a division (NVIDIA drops the store)"
                    .into(),
            );
        }
        let r = crate::analysis_math::binary(op, x == y, &xi, &yi, &lits)?;
        Ok(Info {
            konst,
            uniform,
            ..r
        })
    }
}

/// `i`'s values are valid indices below `n`.
fn in_range(i: &Info, n: i64) -> Result<(), Reject> {
    match i.range() {
        Some((lo, hi)) if i.ty.is_sv() && matches!(i.ty, Ty::S(_)) && lo >= 0 && hi < n => Ok(()),
        _ => Err(format!("an index not provably below {n}")),
    }
}

/// The per-invocation atomic slot `atomicCompareExchangeWeak` takes. A weak compare-exchange
/// may fail spuriously (WGSL spec §17.8.5), so this slot is used by one such statement, outside
/// loops, and its final contents are not compared; its old value is.
pub const CAS_SLOT: u32 = 3;

/// The per-invocation atomic slot `atomic_add_f32` takes, and nothing else: its words are
/// `f32` bits. It starts from arbitrary bits; each addition adds a whole number in 1..=1023,
/// so a denormal start (which a GPU may flush) is lost in the rounding on both executors;
/// a NaN start stays NaN, its payload the executor's (compared as "both NaN").
pub const F32_SLOT: u32 = 4;

fn check_compare_exchange(body: &[Stmt]) -> Result<(), Reject> {
    let mut n = 0;
    let mut own_cas_slot = 0;
    let mut body = body.to_vec();
    crate::ast::for_each_block(&mut body, &mut |b| {
        for s in b.iter() {
            if let Stmt::Atomic(_, AtomicTarget::Own(slot), op, ..) = s {
                if *op == AtomicOp::CompareExchange {
                    n += 1;
                } else if *slot == CAS_SLOT {
                    own_cas_slot += 1;
                }
            }
        }
    });
    // Top level only: a compare-exchange nested anywhere is refused in `stmt`.
    if n > 1 || own_cas_slot > 0 {
        return Err("a compare-exchange slot used twice".into());
    }
    Ok(())
}

/// Whether a shared atomic slot takes `op`: slot `% 6` picks add/sub, min, max, and, or,
/// xor.
pub fn shared_op_ok(slot: u32, op: AtomicOp) -> bool {
    use AtomicOp::*;
    match slot % 6 {
        0 => matches!(op, Add | Sub),
        1 => op == Min,
        2 => op == Max,
        3 => op == And,
        4 => op == Or,
        _ => op == Xor,
    }
}

/// Whether `e` reads a `var` or memory other than the read-only inputs.
pub fn reads_memory(e: &Expr) -> bool {
    let mut found = false;
    visit(e, &mut |e| {
        if matches!(e, Expr::Var(_) | Expr::Wg(_) | Expr::WgAtomic) {
            found = true;
        }
    });
    found
}

/// `e` has an `unpack4xI8` or `unpack4xU8` in it.
fn unpacks_4x8(e: &Expr) -> bool {
    let mut found = false;
    visit(e, &mut |e| {
        found |= matches!(e, Expr::Math(Fun::Unpack4xI8 | Fun::Unpack4xU8, _));
    });
    found
}

/// `e` has an integer division or remainder in it.
fn divides(e: &Expr) -> bool {
    let mut found = false;
    visit(e, &mut |e| {
        found |= matches!(e, Expr::Bin(Bin::Div | Bin::Rem, _, _))
    });
    found
}

/// The innermost declaration of `id` in `scope` (declarations in order).
fn innermost(scope: &[(Id, Info)], id: Id) -> Option<Info> {
    scope.iter().rev().find(|(i, _)| *i == id).map(|(_, v)| *v)
}

/// Visit `e` and its subexpressions, parents first.
pub fn visit(e: &Expr, f: &mut dyn FnMut(&Expr)) {
    f(e);
    e.for_each_child(&mut |a| visit(a, f));
}

/// Analyze `prog`.
///
/// # Errors
/// What the analysis refuses.
pub fn analyze(prog: &Program) -> Result<Analysis, Reject> {
    Analyzer::new(prog).program()
}

/// The format of a float type (for bounds in its ULPs).
pub fn fmt_of(s: Scalar) -> Fmt {
    Fmt::of(s)
}
