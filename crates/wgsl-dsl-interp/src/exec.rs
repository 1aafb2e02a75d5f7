//! The executor: runs a [`Compiled`] module over a dispatch grid, one workgroup at a time.
//!
//! The invocations of a workgroup run in lockstep, as a GPU's SIMD lanes do: each statement
//! is executed once for the set of lanes ([`Mask`]) that reach it, each operation loops over
//! those lanes. An `if` runs its branches with the lanes whose condition is true and false;
//! a loop runs until no lane is left in it; `break`, `continue` and `return` take lanes out
//! of the current set. So a barrier is simply reached by the lanes present: all of the
//! workgroup's (it separates two phases of the race check), or fewer (a divergent barrier,
//! reported with where the missing lanes went). For programs without data races and
//! divergent barriers this order of evaluation is one WGSL allows, so results are those of
//! any conforming GPU.

use std::collections::HashSet;
use std::ops::Range;

use naga::Span;

use super::checks::{Acc, Conflict, Shadow};
use super::error::{AccessKind, InterpError, Invocation, MemoryAccess, Warning};
use super::mask::Mask;
use super::ops::{self, Lanes};
use super::options::InterpOptions;
use super::program::*;
use super::semantics::{self as sem, Kind};
use wgsl_dsl_core::shader::Shader;

/// The state of one function's activation (functions are not recursive in WGSL, so one per
/// function suffices).
#[derive(Debug, Default)]
pub(crate) struct Frame {
    regs: Vec<u32>,
    locals: Vec<u32>,
    /// Per local word and lane: written since the function was entered.
    init: Vec<bool>,
    /// Lanes that executed `return`.
    returned: Mask,
}

#[derive(Clone, Copy)]
enum Ctl {
    Loop { brk: Mask, cont: Mask },
    Switch { brk: Mask },
}

#[derive(Clone, Copy)]
struct PathEntry {
    span: Span,
    mask: Mask,
    what: &'static str,
}

pub(crate) struct Exec<'p> {
    p: &'p Compiled,
    shader: &'p Shader,
    opts: &'p InterpOptions,
    lanes: usize,
    full: Mask,
    /// The bytes of every global (bindings are copies of the host buffers).
    pub mem: Vec<Vec<u8>>,
    /// Per global: the bytes of its elements and the size of one, for a storage buffer
    /// bound to a host buffer (accesses past them, inside the allocation's padding, are
    /// [`Warning::PaddingAccess`]); `None` for the others.
    data: Vec<Option<(u64, u64)>>,
    /// Shadow memory of read-write globals, when checks are on (empty otherwise).
    shadow: Vec<Vec<Shadow>>,
    frames: Vec<Frame>,
    grid: [u32; 3],
    wg: [u32; 3],
    wg_linear: u32,
    phase_storage: u32,
    phase_workgroup: u32,
    ctl: Vec<Ctl>,
    path: Vec<PathEntry>,
    /// Per lane: the last `break`, `continue` or `return` it executed.
    away: Vec<Option<(Span, &'static str)>>,
    pub warnings: Vec<Warning>,
    warned: HashSet<(u8, u32)>,
    /// The `debug_print`s executed, with the workgroup (linear, in dispatch order) and lane
    /// that executed each, in execution order.
    pub prints: Vec<(u32, u32, super::DebugRecord)>,
    /// This dispatch's number, for the records.
    pub dispatch: u64,
}

type R<T = ()> = Result<T, InterpError>;

impl<'p> Exec<'p> {
    pub fn new(
        p: &'p Compiled,
        shader: &'p Shader,
        opts: &'p InterpOptions,
        mem: Vec<Vec<u8>>,
        data: Vec<Option<(u64, u64)>>,
        grid: [u32; 3],
    ) -> Self {
        let lanes = p.lanes;
        let shadow = p
            .globals
            .iter()
            .zip(&mem)
            .map(|(g, m)| match g.space {
                Space::Storage { write: true } | Space::Workgroup if opts.checks => {
                    vec![Shadow::default(); m.len().max(g.size as usize) >> g.shift]
                }
                _ => Vec::new(),
            })
            .collect();
        let frames = p
            .functions
            .iter()
            .map(|f| {
                let mut regs = vec![0u32; f.regs];
                for &(off, w) in &f.consts {
                    regs[off as usize] = w;
                }
                Frame {
                    regs,
                    locals: vec![0; f.local_words as usize * lanes],
                    init: vec![false; f.local_words as usize * lanes],
                    returned: Mask::EMPTY,
                }
            })
            .collect();
        Exec {
            p,
            shader,
            opts,
            lanes,
            full: Mask::first(lanes),
            mem,
            data,
            shadow,
            frames,
            grid,
            wg: [0; 3],
            wg_linear: 0,
            phase_storage: 0,
            phase_workgroup: 0,
            ctl: Vec::new(),
            path: Vec::new(),
            away: vec![None; lanes],
            warnings: Vec::new(),
            warned: HashSet::new(),
            prints: Vec::new(),
            dispatch: 0,
        }
    }

    // ---- identities and messages ----

    fn local_id(&self, lane: usize) -> [u32; 3] {
        let [sx, sy, _] = self.p.workgroup_size;
        let l = lane as u32;
        [l % sx, (l / sx) % sy, l / (sx * sy)]
    }

    fn invocation_of(&self, wg: [u32; 3], lane: usize) -> Invocation {
        let local = self.local_id(lane);
        let s = self.p.workgroup_size;
        Invocation {
            global_id: [0, 1, 2].map(|d| wg[d] * s[d] + local[d]),
            workgroup_id: wg,
            local_id: local,
        }
    }

    fn invocation(&self, lane: usize) -> Invocation {
        self.invocation_of(self.wg, lane)
    }

    /// The invocation of a shadow access.
    fn invocation_of_acc(&self, a: Acc) -> Invocation {
        let i = (a.inv - 1) as usize;
        let linear = (i / self.lanes) as u32;
        let [gx, gy, _] = self.grid;
        let wg = [linear % gx, (linear / gx) % gy, linear / (gx * gy)];
        self.invocation_of(wg, i % self.lanes)
    }

    fn site(&self, span: Span) -> Option<wgsl_dsl_core::CallSite> {
        self.shader.call_site(span)
    }

    fn name(&self) -> String {
        self.p.name.clone()
    }

    fn warn_once(&mut self, kind: u8, span: Span, w: impl FnOnce(&Self) -> Warning) {
        let key = span.to_range().map_or(0, |r| r.start as u32);
        if self.warned.insert((kind, key)) {
            let warning = w(self);
            self.warnings.push(warning);
        }
    }

    // ---- the dispatch ----

    /// Run every workgroup of the grid, in order.
    pub fn run(&mut self) -> R {
        let [gx, gy, gz] = self.grid;
        let total = u64::from(gx) * u64::from(gy) * u64::from(gz) * self.lanes as u64;
        if self.opts.checks && total >= u64::from(u32::MAX) {
            return Err(InterpError::Unsupported {
                kernel: self.name(),
                what: format!("checked dispatches of {total} invocations (fewer than 2^32)"),
                site: None,
            });
        }
        for z in 0..gz {
            for y in 0..gy {
                for x in 0..gx {
                    self.workgroup([x, y, z])?;
                }
            }
        }
        Ok(())
    }

    fn workgroup(&mut self, wg: [u32; 3]) -> R {
        let p = self.p;
        self.wg = wg;
        self.wg_linear = wg[0] + self.grid[0] * (wg[1] + self.grid[1] * wg[2]);
        self.phase_storage = 0;
        self.phase_workgroup = 0;
        self.away.iter_mut().for_each(|a| *a = None);
        for (i, g) in p.globals.iter().enumerate() {
            if g.space == Space::Workgroup {
                self.mem[i].iter_mut().for_each(|b| *b = 0);
                self.shadow[i]
                    .iter_mut()
                    .for_each(|s| *s = Shadow::default());
            }
        }
        let e = p.entry();
        let f = &p.functions[e];
        let mut fr = std::mem::take(&mut self.frames[e]);
        for &(off, b) in &f.builtins {
            self.builtin(&mut fr.regs, off as usize, b);
        }
        self.enter(f, &mut fr, &self.full.clone());
        let result = self.block(f, &mut fr, &f.body, self.full);
        self.frames[e] = fr;
        result.map(|_| ())
    }

    fn builtin(&self, regs: &mut [u32], off: usize, b: Builtin) {
        let n = self.lanes;
        let size = self.p.workgroup_size;
        let sg = self.opts.subgroup_size.max(1) as usize;
        for l in 0..n {
            let local = self.local_id(l);
            let vec3 = |regs: &mut [u32], v: [u32; 3]| {
                for (c, x) in v.into_iter().enumerate() {
                    regs[off + c * n + l] = x;
                }
            };
            match b {
                Builtin::GlobalId => vec3(regs, [0, 1, 2].map(|d| self.wg[d] * size[d] + local[d])),
                Builtin::LocalId => vec3(regs, local),
                Builtin::LocalIndex => regs[off + l] = l as u32,
                Builtin::WorkgroupId => vec3(regs, self.wg),
                Builtin::NumWorkgroups => vec3(regs, self.grid),
                Builtin::WorkgroupSize => vec3(regs, size),
                Builtin::SubgroupSize => regs[off + l] = sg as u32,
                Builtin::SubgroupInvocationId => regs[off + l] = (l % sg) as u32,
                Builtin::SubgroupId => regs[off + l] = (l / sg) as u32,
                Builtin::NumSubgroups => regs[off + l] = n.div_ceil(sg) as u32,
            }
        }
    }

    /// Entering a function for `mask`: its locals are zero (or their initial value) and not
    /// yet written.
    fn enter(&self, f: &Func, fr: &mut Frame, mask: &Mask) {
        let n = self.lanes;
        fr.returned = Mask::EMPTY;
        for local in &f.locals {
            for j in 0..local.words {
                let base = (local.off + j) as usize * n;
                let value = local.init.as_ref().map_or(0, |v| v[j as usize]);
                mask.for_each(0, |l| {
                    fr.locals[base + l] = value;
                    fr.init[base + l] = local.init.is_some();
                });
            }
        }
    }

    // ---- statements ----

    /// Execute `block` for the lanes of `mask`; returns the lanes that reach its end.
    fn block(&mut self, f: &'p Func, fr: &mut Frame, block: &'p [St], mut mask: Mask) -> R<Mask> {
        for st in block {
            if mask.is_empty() {
                break;
            }
            mask = self.statement(f, fr, st, mask)?;
        }
        Ok(mask)
    }

    fn full_count(&self, mask: &Mask) -> usize {
        if *mask == self.full { self.lanes } else { 0 }
    }

    fn split(&self, regs: &[u32], cond: Src, mask: Mask) -> (Mask, Mask) {
        let mut t = Mask::EMPTY;
        mask.for_each(self.full_count(&mask), |l| {
            if regs[cond.idx(0, l)] != 0 {
                t.insert(l);
            }
        });
        (t, mask.minus(&t))
    }

    fn statement(&mut self, f: &'p Func, fr: &mut Frame, st: &'p St, mask: Mask) -> R<Mask> {
        match *st {
            St::Ops(ref range) => {
                let ln = Lanes {
                    mask: &mask,
                    full: self.full_count(&mask),
                    n: self.lanes,
                };
                for op in &f.ops[range.clone()] {
                    if !ops::eval(op, &mut fr.regs, &ln) {
                        self.memory_op(f, fr, op, &mask)?;
                    }
                }
                Ok(mask)
            }
            St::If {
                cond,
                ref accept,
                ref reject,
                span,
            } => {
                let (t, e) = self.split(&fr.regs, cond, mask);
                let mut out = Mask::EMPTY;
                for (lanes, body) in [(t, accept), (e, reject)] {
                    let what = "took the other branch of the `if` at";
                    if !lanes.is_empty() {
                        self.path.push(PathEntry {
                            span,
                            mask: lanes,
                            what,
                        });
                        out = out.union(&self.block(f, fr, body, lanes)?);
                        self.path.pop();
                    }
                }
                Ok(out)
            }
            St::Switch {
                selector,
                ref cases,
                span,
            } => {
                let full = self.full_count(&mask);
                // The lanes selecting each case, decided before any case runs.
                let selected: Vec<Mask> = cases
                    .iter()
                    .map(|(v, _, _)| {
                        let mut m = Mask::EMPTY;
                        if let Some(v) = v {
                            mask.for_each(full, |l| {
                                if fr.regs[selector.idx(0, l)] == *v {
                                    m.insert(l);
                                }
                            });
                        }
                        m
                    })
                    .collect();
                let matched = selected.iter().fold(Mask::EMPTY, |a, m| a.union(m));
                let default = mask.minus(&matched);
                self.ctl.push(Ctl::Switch { brk: Mask::EMPTY });
                let mut falling = Mask::EMPTY;
                let mut out = Mask::EMPTY;
                for ((v, body, fall_through), sel) in cases.iter().zip(&selected) {
                    let lanes = match v {
                        Some(_) => falling.union(sel),
                        None => falling.union(&default),
                    };
                    if lanes.is_empty() {
                        falling = Mask::EMPTY;
                        continue;
                    }
                    self.path.push(PathEntry {
                        span,
                        mask: lanes,
                        what: "took another case of the `switch` at",
                    });
                    let end = self.block(f, fr, body, lanes)?;
                    self.path.pop();
                    if *fall_through {
                        falling = end;
                    } else {
                        falling = Mask::EMPTY;
                        out = out.union(&end);
                    }
                }
                let brk = match self.ctl.pop() {
                    Some(Ctl::Switch { brk }) => brk,
                    _ => Mask::EMPTY,
                };
                Ok(out.union(&falling).union(&brk))
            }
            St::Loop {
                ref body,
                ref continuing,
                break_if,
                span,
            } => self.looped(f, fr, body, continuing, break_if, span, mask),
            St::Break(span) => {
                for l in mask.iter() {
                    self.away[l] = Some((span, "left the loop at the `break` at"));
                }
                match self.ctl.last_mut() {
                    Some(Ctl::Loop { brk, .. }) | Some(Ctl::Switch { brk }) => {
                        *brk = brk.union(&mask)
                    }
                    None => {}
                }
                Ok(Mask::EMPTY)
            }
            St::Continue(span) => {
                for l in mask.iter() {
                    self.away[l] =
                        Some((span, "skipped to the next iteration at the `continue` at"));
                }
                if let Some(Ctl::Loop { cont, .. }) = self
                    .ctl
                    .iter_mut()
                    .rev()
                    .find(|c| matches!(c, Ctl::Loop { .. }))
                {
                    *cont = cont.union(&mask);
                }
                Ok(Mask::EMPTY)
            }
            St::Return { value, span } => {
                if let (Some((src, width)), Some((ret, _))) = (value, f.ret) {
                    for c in 0..width {
                        let d = ret as usize + c as usize * self.lanes;
                        mask.for_each(0, |l| fr.regs[d + l] = fr.regs[src.idx(c, l)]);
                    }
                }
                for l in mask.iter() {
                    self.away[l] = Some((span, "returned at the `return` at"));
                }
                fr.returned = fr.returned.union(&mask);
                Ok(Mask::EMPTY)
            }
            St::Store(ref st) => {
                self.store(f, fr, st, &mask)?;
                Ok(mask)
            }
            St::Call {
                function,
                ref args,
                result,
                span,
            } => {
                self.call(fr, function, args, result, span, &mask)?;
                Ok(mask)
            }
            St::Atomic(ref a) => {
                self.atomic(fr, a, &mask)?;
                Ok(mask)
            }
            St::Barrier { flags, span } => {
                self.barrier_reached(span, &mask)?;
                if flags.contains(naga::Barrier::STORAGE) {
                    self.phase_storage += 1;
                }
                if flags.contains(naga::Barrier::WORK_GROUP) {
                    self.phase_workgroup += 1;
                }
                Ok(mask)
            }
            St::WorkgroupUniformLoad {
                global,
                ptr,
                plan,
                n,
                dst,
                span,
            } => {
                self.barrier_reached(span, &mask)?;
                self.phase_workgroup += 1;
                self.load_global(f, fr, global, ptr, plan, n, dst, span, &mask)?;
                self.phase_workgroup += 1;
                Ok(mask)
            }
            St::Subgroup(ref s) => {
                self.subgroup(fr, s, &mask);
                Ok(mask)
            }
            St::CoopStore { mem, value, span } => {
                self.coop_store(fr, mem, value, span, &mask)?;
                Ok(mask)
            }
            St::DebugPrint { print, ref args } => {
                self.debug_print(fr, print, args, &mask);
                Ok(mask)
            }
            St::Ballot { predicate, dst } => {
                let sg = self.opts.subgroup_size.max(1) as usize;
                let n = self.lanes;
                for first in (0..n).step_by(sg) {
                    let mut bits = [0u32; 4];
                    for l in first..(first + sg).min(n) {
                        let p = predicate.is_none_or(|p| fr.regs[p.idx(0, l)] != 0);
                        if mask.contains(l) && p {
                            let i = l - first;
                            bits[i / 32] |= 1 << (i % 32);
                        }
                    }
                    for l in first..(first + sg).min(n) {
                        if mask.contains(l) {
                            for (c, b) in bits.iter().enumerate() {
                                fr.regs[dst as usize + c * n + l] = *b;
                            }
                        }
                    }
                }
                Ok(mask)
            }
        }
    }

    /// A barrier must be reached by every invocation of the workgroup.
    fn barrier_reached(&self, span: Span, mask: &Mask) -> R {
        if *mask == self.full {
            return Ok(());
        }
        let (Some(reached), Some(missed)) = (mask.lowest(), self.full.minus(mask).lowest()) else {
            return Ok(());
        };
        Err(InterpError::DivergentBarrier {
            kernel: self.name(),
            barrier: self.site(span),
            reached: Box::new(self.invocation(reached)),
            missed: Box::new(self.invocation(missed)),
            why: self.why_missed(missed),
        })
    }

    /// Where `lane`, absent from the statement being executed, went instead.
    fn why_missed(&self, lane: usize) -> String {
        match self.path.iter().find(|p| !p.mask.contains(lane)) {
            Some(p) => format!("it {} {}", p.what, super::error::Site(self.site(p.span))),
            None => match self.away[lane] {
                Some((s, what)) => format!("it {what} {}", super::error::Site(self.site(s))),
                None => "it is elsewhere in the kernel".to_string(),
            },
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn looped(
        &mut self,
        f: &'p Func,
        fr: &mut Frame,
        body: &'p [St],
        continuing: &'p [St],
        break_if: Option<Src>,
        span: Span,
        mask: Mask,
    ) -> R<Mask> {
        let mut active = mask;
        let mut broke = Mask::EMPTY;
        let mut iterations = 0u64;
        while !active.is_empty() {
            iterations += 1;
            if iterations > self.opts.max_loop_iterations {
                let lane = active.lowest().unwrap_or(0);
                return Err(InterpError::LoopLimit {
                    kernel: self.name(),
                    site: self.site(span),
                    invocation: self.invocation(lane),
                    iterations: iterations - 1,
                });
            }
            self.ctl.push(Ctl::Loop {
                brk: Mask::EMPTY,
                cont: Mask::EMPTY,
            });
            self.path.push(PathEntry {
                span,
                mask: active,
                what: "had already left the loop at",
            });
            let end = self.block(f, fr, body, active)?;
            let (brk, cont) = match self.ctl.pop() {
                Some(Ctl::Loop { brk, cont }) => (brk, cont),
                _ => (Mask::EMPTY, Mask::EMPTY),
            };
            broke = broke.union(&brk);
            let next = end.union(&cont);
            let after = self.block(f, fr, continuing, next)?;
            self.path.pop();
            active = match break_if {
                Some(cond) => {
                    let (t, e) = self.split(&fr.regs, cond, after);
                    broke = broke.union(&t);
                    e
                }
                None => after,
            };
        }
        Ok(broke)
    }

    fn call(
        &mut self,
        fr: &mut Frame,
        function: usize,
        args: &[(Src, u32)],
        result: Option<u32>,
        span: Span,
        mask: &Mask,
    ) -> R {
        let p = self.p;
        let g = &p.functions[function];
        let mut callee = std::mem::take(&mut self.frames[function]);
        let n = self.lanes;
        for (&(src, width), &(off, _)) in args.iter().zip(&g.args) {
            for c in 0..width {
                let d = off as usize + c as usize * n;
                mask.for_each(0, |l| callee.regs[d + l] = fr.regs[src.idx(c, l)]);
            }
        }
        self.enter(g, &mut callee, mask);
        self.path.push(PathEntry {
            span,
            mask: *mask,
            what: "did not make the call at",
        });
        let saved_ctl = std::mem::take(&mut self.ctl);
        let r = self.block(g, &mut callee, &g.body, *mask);
        self.ctl = saved_ctl;
        self.path.pop();
        if r.is_ok()
            && let (Some(dst), Some((ret, width))) = (result, g.ret)
        {
            for c in 0..width {
                let (d, s) = (dst as usize + c as usize * n, ret as usize + c as usize * n);
                mask.for_each(0, |l| fr.regs[d + l] = callee.regs[s + l]);
            }
        }
        self.frames[function] = callee;
        r.map(|_| ())
    }

    /// Record `debug_print` number `print` for every lane of `mask`.
    fn debug_print(&mut self, fr: &Frame, print: usize, args: &[(Src, Kind, u32)], mask: &Mask) {
        let Some(info) = self.p.prints.get(print) else {
            return;
        };
        for l in mask.iter() {
            let values: Vec<super::DebugValue> = args
                .iter()
                .map(|&(src, kind, comps)| {
                    let c = |c: u32| super::DebugValue::scalar(kind, fr.regs[src.idx(c, l)]);
                    if comps == 1 {
                        c(0)
                    } else {
                        super::DebugValue::Vector((0..comps).map(c).collect())
                    }
                })
                .collect();
            let record = super::DebugRecord {
                kernel: self.p.name.clone(),
                dispatch: self.dispatch,
                invocation: self.invocation(l),
                site: info.site,
                message: super::debug::fill(&info.pieces, &values),
                values,
            };
            self.prints.push((self.wg_linear, l as u32, record));
        }
    }

    // ---- memory ----

    fn memory_op(&mut self, f: &'p Func, fr: &mut Frame, op: &Op, mask: &Mask) -> R {
        match *op {
            Op::ValueIndex {
                base,
                index,
                signed,
                elem,
                len,
                dst,
                span,
            } => {
                let n = self.lanes;
                mask.try_for_each(self.full_count(mask), |l| {
                    let i = self.index_value(fr.regs[index.idx(0, l)], signed);
                    if i < 0 || i >= i64::from(len) {
                        return Err(self.out_of_bounds(
                            span,
                            l,
                            i,
                            u64::from(len),
                            "a value".into(),
                        ));
                    }
                    for j in 0..elem {
                        fr.regs[dst as usize + j as usize * n + l] =
                            fr.regs[base.idx(i as u32 * elem + j, l)];
                    }
                    Ok(())
                })
            }
            Op::PtrIndex {
                base,
                index,
                signed,
                stride,
                len,
                root,
                dst,
                span,
            } => mask.try_for_each(self.full_count(mask), |l| {
                let b = fr.regs[base.idx(0, l)];
                let i = self.index_value(fr.regs[index.idx(0, l)], signed);
                let len = match len {
                    Len::Fixed(n) => u64::from(n),
                    Len::Runtime { global } => {
                        (self.mem[global].len() as u64).saturating_sub(u64::from(b))
                            / u64::from(stride.max(1))
                    }
                };
                if i < 0 || i as u64 >= len {
                    let target = match root {
                        Root::Global(g) => self.p.globals[g].what.clone(),
                        Root::Local(v) => format!("local variable `{}`", f.locals[v].name),
                    };
                    return Err(self.out_of_bounds(span, l, i, len, target));
                }
                fr.regs[dst as usize + l] = b + i as u32 * stride;
                Ok(())
            }),
            Op::PtrAdd { base, add, dst } => {
                mask.for_each(self.full_count(mask), |l| {
                    fr.regs[dst as usize + l] = fr.regs[base.idx(0, l)] + add
                });
                Ok(())
            }
            Op::Load {
                root,
                ptr,
                plan,
                n,
                dst,
                span,
            } => match root {
                Root::Global(g) => self.load_global(f, fr, g, ptr, plan, n, dst, span, mask),
                Root::Local(v) => {
                    let lanes = self.lanes;
                    let local = &f.locals[v];
                    let mut uninit = None;
                    mask.for_each(self.full_count(mask), |l| {
                        let o = fr.regs[ptr.idx(0, l)];
                        for j in 0..n {
                            let at = (local.off + o + j) as usize * lanes + l;
                            fr.regs[dst as usize + j as usize * lanes + l] = fr.locals[at];
                            if !fr.init[at] && uninit.is_none() {
                                uninit = Some(l);
                            }
                        }
                    });
                    if let Some(l) = uninit
                        && self.opts.checks
                    {
                        self.warn_once(0, span, |e| Warning::UninitializedRead {
                            kernel: e.name(),
                            variable: format!("local variable `{}`", local.name),
                            site: e.site(span),
                            invocation: e.invocation(l),
                        });
                    }
                    Ok(())
                }
            },
            Op::ArrayLength {
                global,
                ptr,
                stride,
                dst,
            } => {
                let bytes = self.mem[global].len() as u64;
                mask.for_each(self.full_count(mask), |l| {
                    let b = u64::from(fr.regs[ptr.idx(0, l)]);
                    fr.regs[dst as usize + l] =
                        u32::try_from(bytes.saturating_sub(b) / u64::from(stride.max(1)))
                            .unwrap_or(u32::MAX);
                });
                Ok(())
            }
            Op::CoopLoad { mem, dst, span } => self.coop_load(fr, mem, dst, span, mask),
            Op::CoopMulAdd {
                a,
                b,
                c,
                m,
                n,
                k,
                input,
                acc,
                dst,
                span,
            } => {
                let op = "coopMultiplyAdd";
                let groups = self.coop_groups(op, span, mask)?;
                let (m, n, k) = (usize::from(m), usize::from(n), usize::from(k));
                if self.opts.checks {
                    for (src, words, name) in [
                        (a, m * k, "matrix a"),
                        (b, k * n, "matrix b"),
                        (c, m * n, "matrix c"),
                    ] {
                        self.coop_uniform(op, span, &fr.regs, &groups, src, words, name)?;
                    }
                }
                let lanes = self.lanes;
                let mut out = vec![0u32; m * n];
                for g in groups {
                    let l0 = g.start;
                    let regs = &fr.regs;
                    sem::coop_multiply_add(
                        (m, n, k),
                        input,
                        acc,
                        |i| regs[a.idx(i as u32, l0)],
                        |i| regs[b.idx(i as u32, l0)],
                        |i| regs[c.idx(i as u32, l0)],
                        &mut out,
                    );
                    for (e, &v) in out.iter().enumerate() {
                        let d = dst as usize + e * lanes;
                        fr.regs[d + g.start..d + g.end].fill(v);
                    }
                }
                Ok(())
            }
            _ => Err(InterpError::Unsupported {
                kernel: self.name(),
                what: format!("the operation {op:?}"),
                site: None,
            }),
        }
    }

    fn index_value(&self, raw: u32, signed: bool) -> i64 {
        if signed {
            i64::from(raw as i32)
        } else {
            i64::from(raw)
        }
    }

    fn out_of_bounds(
        &self,
        span: Span,
        lane: usize,
        index: i64,
        len: u64,
        target: String,
    ) -> InterpError {
        InterpError::OutOfBounds {
            kernel: self.name(),
            site: self.site(span),
            invocation: self.invocation(lane),
            index,
            len,
            target,
        }
    }

    fn race(
        &self,
        global: usize,
        byte: u32,
        c: Conflict,
        lane: usize,
        span: Span,
        write: bool,
    ) -> InterpError {
        let g = &self.p.globals[global];
        let first = MemoryAccess {
            invocation: self.invocation_of_acc(c.earlier),
            kind: if c.earlier_wrote {
                AccessKind::Write
            } else {
                AccessKind::Read
            },
            site: self.site(Span::new(c.earlier.span, c.earlier.span + 1)),
        };
        let second = MemoryAccess {
            invocation: self.invocation(lane),
            kind: if write {
                AccessKind::Write
            } else {
                AccessKind::Read
            },
            site: self.site(span),
        };
        InterpError::DataRace {
            kernel: self.name(),
            memory: format!("byte {byte} of {}", g.what),
            first: Box::new(first),
            second: Box::new(second),
        }
    }

    fn memory_fault(&self, global: usize, byte: usize, lane: usize, span: Span) -> InterpError {
        self.out_of_bounds(
            span,
            lane,
            byte as i64,
            self.mem[global].len() as u64,
            format!("the bytes of {}", self.p.globals[global].what),
        )
    }

    /// The access of `lane` to global `g` now, for the race check.
    fn acc(&self, lane: usize, g: usize, span: Span) -> Acc {
        let phase = if self.p.globals[g].space == Space::Workgroup {
            self.phase_workgroup
        } else {
            self.phase_storage
        };
        Acc {
            inv: self.wg_linear * self.lanes as u32 + lane as u32 + 1,
            phase,
            span: span.to_range().map_or(0, |r| r.start as u32),
        }
    }

    /// Warn (once per site) when `lane`'s access of the bytes at `at` of global `g` lies past
    /// its host buffer's elements (inside the allocation's padding). Checks on only.
    fn check_padding(&mut self, g: usize, at: usize, lane: usize, span: Span, write: bool) {
        let Some((bytes, elem)) = self.data[g] else {
            return;
        };
        if (at as u64) < bytes || !self.opts.checks {
            return;
        }
        self.warn_once(3, span, |e| Warning::PaddingAccess {
            kernel: e.name(),
            buffer: e.p.globals[g].what.clone(),
            write,
            element: at as u64 / elem.max(1),
            len: bytes / elem.max(1),
            site: e.site(span),
            invocation: e.invocation(lane),
        });
    }

    /// Warn (once per site) that `lane` read global `g` before anything wrote it, when `g` is
    /// a workgroup variable (a buffer's contents come from the host).
    fn warn_uninit_global(&mut self, g: usize, span: Span, lane: usize) {
        if self.p.globals[g].space == Space::Workgroup {
            self.warn_once(1, span, |e| Warning::UninitializedRead {
                kernel: e.name(),
                variable: e.p.globals[g].what.clone(),
                site: e.site(span),
                invocation: e.invocation(lane),
            });
        }
    }

    fn fault(&self, g: usize, fault: Fault, span: Span, write: bool) -> InterpError {
        match fault {
            Fault::Race { conflict, lane, at } => self.race(g, at, conflict, lane, span, write),
            Fault::Memory { lane, at } => self.memory_fault(g, at as usize, lane, span),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn load_global(
        &mut self,
        f: &'p Func,
        fr: &mut Frame,
        g: usize,
        ptr: Src,
        plan: u32,
        n: u32,
        dst: u32,
        span: Span,
        mask: &Mask,
    ) -> R {
        let plan = &f.plans[plan as usize];
        let lanes = self.lanes;
        let shift = self.p.globals[g].shift;
        let proto = self.acc(0, g, span);
        let full = self.full_count(mask);
        let mem = &self.mem[g];
        let shadow = &mut self.shadow[g];
        let checked = !shadow.is_empty();
        let data = self.data[g].map_or(u64::MAX, |(bytes, _)| bytes);
        let mut uninit = None;
        let mut padding = None;
        let r = mask.try_for_each(full, |l| {
            let base = fr.regs[ptr.idx(0, l)] as usize;
            for (j, &(off, kind)) in plan.iter().enumerate().take(n as usize) {
                let at = base + off as usize;
                let word = read(mem, at, kind).ok_or(Fault::Memory {
                    lane: l,
                    at: at as u32,
                })?;
                if at as u64 >= data && padding.is_none() {
                    padding = Some((l, at));
                }
                fr.regs[dst as usize + j * lanes + l] = word;
                if checked
                    && kind != MemKind::Atomic
                    && shadow_access(shadow, shift, proto, l, at, lanes, Shadow::read)?
                    && uninit.is_none()
                {
                    uninit = Some(l);
                }
            }
            Ok(())
        });
        if let Err(fault) = r {
            return Err(self.fault(g, fault, span, false));
        }
        if let Some(l) = uninit {
            self.warn_uninit_global(g, span, l);
        }
        if let Some((l, at)) = padding {
            self.check_padding(g, at, l, span, false);
        }
        Ok(())
    }

    fn store(&mut self, f: &'p Func, fr: &mut Frame, st: &StoreSt, mask: &Mask) -> R {
        let StoreSt {
            root,
            ptr,
            plan,
            n,
            value,
            span,
        } = *st;
        let lanes = self.lanes;
        let full = self.full_count(mask);
        match root {
            Root::Local(v) => {
                let local = &f.locals[v];
                mask.for_each(full, |l| {
                    let o = fr.regs[ptr.idx(0, l)];
                    for j in 0..n {
                        let at = (local.off + o + j) as usize * lanes + l;
                        fr.locals[at] = fr.regs[value.idx(j, l)];
                        fr.init[at] = true;
                    }
                });
                Ok(())
            }
            Root::Global(g) => {
                let plan = &f.plans[plan as usize];
                let shift = self.p.globals[g].shift;
                let proto = self.acc(0, g, span);
                let data = self.data[g].map_or(u64::MAX, |(bytes, _)| bytes);
                let mut padding = None;
                let mem = &mut self.mem[g];
                let shadow = &mut self.shadow[g];
                let checked = !shadow.is_empty();
                let r = mask.try_for_each(full, |l| {
                    let base = fr.regs[ptr.idx(0, l)] as usize;
                    for (j, &(off, kind)) in plan.iter().enumerate().take(n as usize) {
                        let at = base + off as usize;
                        if at as u64 >= data && padding.is_none() {
                            padding = Some((l, at));
                        }
                        if checked && kind != MemKind::Atomic {
                            shadow_access(shadow, shift, proto, l, at, lanes, Shadow::write)?;
                        }
                        if !write(mem, at, kind, fr.regs[value.idx(j as u32, l)]) {
                            return Err(Fault::Memory {
                                lane: l,
                                at: at as u32,
                            });
                        }
                    }
                    Ok(())
                });
                r.map_err(|fault| self.fault(g, fault, span, true))?;
                if let Some((l, at)) = padding {
                    self.check_padding(g, at, l, span, true);
                }
                Ok(())
            }
        }
    }

    /// Atomic read-modify-write (WGSL spec §17.8), lane by lane in increasing order (one of
    /// the orders the spec allows).
    fn atomic(&mut self, fr: &mut Frame, a: &AtomicSt, mask: &Mask) -> R {
        use naga::AtomicFunction as A;
        let AtomicSt {
            global: g,
            ptr,
            fun,
            signed,
            value,
            compare,
            result,
            span,
        } = *a;
        let lanes = self.lanes;
        for l in mask.iter() {
            let at = fr.regs[ptr.idx(0, l)] as usize;
            let Some(old) = read(&self.mem[g], at, MemKind::Atomic) else {
                return Err(self.memory_fault(g, at, l, span));
            };
            self.check_padding(g, at, l, span, true);
            let v = fr.regs[value.idx(0, l)];
            let (new, exchanged) = match fun {
                A::Add => (sem::int_add(old, v), false),
                A::Subtract => (sem::int_sub(old, v), false),
                A::And => (old & v, false),
                A::InclusiveOr => (old | v, false),
                A::ExclusiveOr => (old ^ v, false),
                A::Min if signed => ((old as i32).min(v as i32) as u32, false),
                A::Min => (old.min(v), false),
                A::Max if signed => ((old as i32).max(v as i32) as u32, false),
                A::Max => (old.max(v), false),
                A::Exchange { compare: None } => (v, false),
                A::Exchange { compare: Some(_) } => {
                    let cmp = compare.map_or(old, |c| fr.regs[c.idx(0, l)]);
                    if cmp == old { (v, true) } else { (old, false) }
                }
            };
            write(&mut self.mem[g], at, MemKind::Atomic, new);
            if let Some(dst) = result {
                fr.regs[dst as usize + l] = old;
                if compare.is_some() {
                    fr.regs[dst as usize + lanes + l] = sem::b(exchanged);
                }
            }
        }
        Ok(())
    }

    // ---- cooperative matrices ----

    /// The subgroups executing a cooperative-matrix operation for `mask`, as lane ranges:
    /// each subgroup must be wholly in `mask` or wholly out of it (naga gives cooperative
    /// matrices `Subgroup` scope).
    fn coop_groups(&self, op: &'static str, span: Span, mask: &Mask) -> R<Vec<Range<usize>>> {
        let sg = self.opts.subgroup_size.max(1) as usize;
        let mut groups = Vec::new();
        for first in (0..self.lanes).step_by(sg) {
            let g = first..(first + sg).min(self.lanes);
            let reached = g.clone().find(|&l| mask.contains(l));
            let missed = g.clone().find(|&l| !mask.contains(l));
            match (reached, missed) {
                (Some(reached), Some(missed)) => {
                    return Err(InterpError::DivergentCooperative {
                        kernel: self.name(),
                        op,
                        site: self.site(span),
                        reached: Box::new(self.invocation(reached)),
                        missed: Box::new(self.invocation(missed)),
                        why: self.why_missed(missed),
                    });
                }
                (Some(_), None) => groups.push(g),
                _ => {}
            }
        }
        Ok(groups)
    }

    /// The `words` words of `src` must be the same in every lane of each group.
    #[allow(clippy::too_many_arguments)]
    fn coop_uniform(
        &self,
        op: &'static str,
        span: Span,
        regs: &[u32],
        groups: &[Range<usize>],
        src: Src,
        words: usize,
        operand: &'static str,
    ) -> R {
        for g in groups {
            for w in 0..words as u32 {
                let first = regs[src.idx(w, g.start)];
                if let Some(l) = g.clone().find(|&l| regs[src.idx(w, l)] != first) {
                    return Err(InterpError::NonUniformCooperative {
                        kernel: self.name(),
                        op,
                        site: self.site(span),
                        operand,
                        first: Box::new(self.invocation(g.start)),
                        second: Box::new(self.invocation(l)),
                    });
                }
            }
        }
        Ok(())
    }

    fn coop_load(&mut self, fr: &mut Frame, mem: CoopMem, dst: u32, span: Span, mask: &Mask) -> R {
        let op = "coopLoad";
        let groups = self.coop_groups(op, span, mask)?;
        self.coop_uniform(op, span, &fr.regs, &groups, mem.ptr, 1, "pointer")?;
        self.coop_uniform(op, span, &fr.regs, &groups, mem.stride, 1, "stride")?;
        let lanes = self.lanes;
        let mut vals = vec![0u32; usize::from(mem.rows) * usize::from(mem.cols)];
        for g in groups {
            self.coop_access(&fr.regs, mem, g.clone(), span, false, &mut vals)?;
            for (e, &v) in vals.iter().enumerate() {
                let d = dst as usize + e * lanes;
                fr.regs[d + g.start..d + g.end].fill(v);
            }
        }
        Ok(())
    }

    fn coop_store(
        &mut self,
        fr: &mut Frame,
        mem: CoopMem,
        value: Src,
        span: Span,
        mask: &Mask,
    ) -> R {
        let op = "coopStore";
        let groups = self.coop_groups(op, span, mask)?;
        let words = usize::from(mem.rows) * usize::from(mem.cols);
        self.coop_uniform(op, span, &fr.regs, &groups, mem.ptr, 1, "pointer")?;
        self.coop_uniform(op, span, &fr.regs, &groups, mem.stride, 1, "stride")?;
        if self.opts.checks {
            self.coop_uniform(op, span, &fr.regs, &groups, value, words, "matrix")?;
        }
        let mut vals = vec![0u32; words];
        for g in groups {
            for (e, v) in vals.iter_mut().enumerate() {
                *v = fr.regs[value.idx(e as u32, g.start)];
            }
            self.coop_access(&fr.regs, mem, g, span, true, &mut vals)?;
        }
        Ok(())
    }

    /// Load (`write` false: into `vals`) or store (`vals`) the matrix of `mem` for the
    /// subgroup of lanes `g`, with the bounds and race checks of every element.
    fn coop_access(
        &mut self,
        regs: &[u32],
        mem: CoopMem,
        g: Range<usize>,
        span: Span,
        write_it: bool,
        vals: &mut [u32],
    ) -> R {
        let gi = mem.global;
        let l0 = g.start;
        let base = u64::from(regs[mem.ptr.idx(0, l0)]);
        let stride = u64::from(regs[mem.stride.idx(0, l0)]);
        let width: u64 = if mem.kind == MemKind::H16 { 2 } else { 4 };
        let (rows, cols) = (u64::from(mem.rows), u64::from(mem.cols));
        let lanes = self.lanes as u32;
        let shift = self.p.globals[gi].shift;
        let x = self.acc(l0, gi, span);
        let y = self.acc((l0 + 1).min(g.end - 1), gi, span);
        let checked = !self.shadow[gi].is_empty();
        let mut uninit = false;
        for r in 0..rows {
            for c in 0..cols {
                let scalar = if mem.row_major {
                    r * stride * u64::from(mem.vec) + c
                } else {
                    c * stride * u64::from(mem.vec) + r
                };
                let at = base + scalar * width;
                let len = self.mem[gi].len() as u64;
                if at + width > len {
                    let target = format!(
                        "{} (in scalars; element ({r}, {c}) of the {rows}x{cols} matrix, \
                         stride {stride})",
                        self.p.globals[gi].what
                    );
                    return Err(self.out_of_bounds(
                        span,
                        l0,
                        i64::try_from(at / width).unwrap_or(i64::MAX),
                        len / width,
                        target,
                    ));
                }
                let at = at as usize;
                if checked {
                    let cell = &mut self.shadow[gi][at >> shift];
                    match cell.subgroup(write_it, x, y, lanes) {
                        Ok(unwritten) => uninit |= unwritten,
                        Err((conflict, a)) => {
                            let lane = (a.inv - x.inv) as usize + l0;
                            return Err(self.race(gi, at as u32, conflict, lane, span, write_it));
                        }
                    }
                }
                let e = (r * cols + c) as usize;
                self.check_padding(gi, at, l0, span, write_it);
                if write_it {
                    write(&mut self.mem[gi], at, mem.kind, vals[e]);
                } else {
                    vals[e] = read(&self.mem[gi], at, mem.kind).unwrap_or(0);
                }
            }
        }
        if uninit && !write_it {
            self.warn_uninit_global(gi, span, l0);
        }
        Ok(())
    }

    // ---- subgroups ----

    /// A subgroup operation over the active lanes of each subgroup (consecutive local
    /// invocation indices, `subgroup_size` at a time).
    fn subgroup(&mut self, fr: &mut Frame, s: &SubgroupSt, mask: &Mask) {
        let SubgroupSt {
            op,
            kind,
            n,
            arg,
            dst,
            span,
        } = *s;
        let sg = self.opts.subgroup_size.max(1) as usize;
        let lanes = self.lanes;
        let mut out = vec![0u32; usize::from(n) * lanes];
        let mut bad = None;
        for first in (0..lanes).step_by(sg) {
            let members: Vec<usize> = (first..(first + sg).min(lanes))
                .filter(|&l| mask.contains(l))
                .collect();
            if members.is_empty() {
                continue;
            }
            for c in 0..u32::from(n) {
                let val = |l: usize| fr.regs[arg.idx(c, l)];
                match op {
                    SubgroupKind::Collective(o, coll) => {
                        let mut acc: Option<u32> = None;
                        for &l in &members {
                            let before = acc;
                            acc = Some(match acc {
                                None => val(l),
                                Some(a) => combine(o, kind, a, val(l)),
                            });
                            out[c as usize * lanes + l] = match coll {
                                naga::CollectiveOperation::InclusiveScan => acc.unwrap_or(0),
                                naga::CollectiveOperation::ExclusiveScan => {
                                    before.unwrap_or_else(|| identity(o, kind))
                                }
                                naga::CollectiveOperation::Reduce => 0,
                            };
                        }
                        if coll == naga::CollectiveOperation::Reduce {
                            for &l in &members {
                                out[c as usize * lanes + l] = acc.unwrap_or(0);
                            }
                        }
                    }
                    SubgroupKind::Gather(mode, index) => {
                        for &l in &members {
                            let me = l - first;
                            let i = index.map_or(0, |s| fr.regs[s.idx(0, l)]) as usize;
                            let from = match mode {
                                GatherMode::BroadcastFirst => Some(members[0] - first),
                                GatherMode::Broadcast | GatherMode::Shuffle => Some(i),
                                GatherMode::ShuffleDown => me.checked_add(i),
                                GatherMode::ShuffleUp => me.checked_sub(i),
                                GatherMode::ShuffleXor => Some(me ^ i),
                                GatherMode::QuadBroadcast => Some(me / 4 * 4 + i),
                                GatherMode::QuadSwap(d) => Some(me ^ (d as usize + 1)),
                            };
                            let src = from
                                .map(|s| first + s)
                                .filter(|&s| s < (first + sg).min(lanes) && mask.contains(s));
                            out[c as usize * lanes + l] = match src {
                                Some(s) => val(s),
                                None => {
                                    bad.get_or_insert((l, from.unwrap_or(usize::MAX)));
                                    0
                                }
                            };
                        }
                    }
                }
            }
        }
        for c in 0..usize::from(n) {
            for l in mask.iter() {
                fr.regs[dst as usize + c * lanes + l] = out[c * lanes + l];
            }
        }
        if let Some((l, lane)) = bad {
            self.warn_once(2, span, |e| Warning::IndeterminateLane {
                kernel: e.name(),
                site: e.site(span),
                invocation: e.invocation(l),
                lane: u32::try_from(lane).unwrap_or(u32::MAX),
            });
        }
    }
}

/// The identity of a subgroup operation (the value of an exclusive scan for the first lane).
fn identity(op: naga::SubgroupOperation, kind: Kind) -> u32 {
    use naga::SubgroupOperation as O;
    match (op, kind) {
        (O::Add | O::Or | O::Xor | O::Any, k) if k.is_float() => sem::from_f32(k, 0.0),
        (O::Add | O::Or | O::Xor | O::Any, _) => 0,
        (O::Mul, k) if k.is_float() => sem::from_f32(k, 1.0),
        (O::Mul, _) => 1,
        (O::And | O::All, Kind::Bool) => 1,
        (O::And | O::All, _) => u32::MAX,
        (O::Min, k) if k.is_float() => sem::from_f32(k, f32::INFINITY),
        (O::Min, Kind::I32) => i32::MAX as u32,
        (O::Min, _) => u32::MAX,
        (O::Max, k) if k.is_float() => sem::from_f32(k, f32::NEG_INFINITY),
        (O::Max, Kind::I32) => i32::MIN as u32,
        (O::Max, _) => 0,
    }
}

fn combine(op: naga::SubgroupOperation, kind: Kind, a: u32, b: u32) -> u32 {
    use naga::SubgroupOperation as O;
    match (op, kind) {
        (O::Add, k) if k.is_float() => sem::float2(k, a, b, |x, y| x + y),
        (O::Add, _) => sem::int_add(a, b),
        (O::Mul, k) if k.is_float() => sem::float2(k, a, b, |x, y| x * y),
        (O::Mul, _) => sem::int_mul(a, b),
        (O::Min, k) if k.is_float() => sem::float2(k, a, b, sem::float_min),
        (O::Min, Kind::I32) => (a as i32).min(b as i32) as u32,
        (O::Min, _) => a.min(b),
        (O::Max, k) if k.is_float() => sem::float2(k, a, b, sem::float_max),
        (O::Max, Kind::I32) => (a as i32).max(b as i32) as u32,
        (O::Max, _) => a.max(b),
        (O::And | O::All, _) => a & b,
        (O::Or | O::Any, _) => a | b,
        (O::Xor, _) => a ^ b,
    }
}

/// Why a memory access stopped the run.
enum Fault {
    Race {
        conflict: Conflict,
        lane: usize,
        at: u32,
    },
    Memory {
        lane: usize,
        at: u32,
    },
}

/// Lane `l`'s access (`Shadow::read` or `Shadow::write`) to the word at byte `at` of a
/// checked variable whose shadow is `shadow` (one entry per `1 << shift` bytes); `proto` is
/// the access of lane 0. A race, or a word past the shadow, is a fault.
#[inline(always)]
fn shadow_access<T>(
    shadow: &mut [Shadow],
    shift: u8,
    proto: Acc,
    l: usize,
    at: usize,
    lanes: usize,
    access: impl FnOnce(&mut Shadow, Acc, u32) -> Result<T, Conflict>,
) -> Result<T, Fault> {
    let a = Acc {
        inv: proto.inv + l as u32,
        ..proto
    };
    let cell = shadow.get_mut(at >> shift).ok_or(Fault::Memory {
        lane: l,
        at: at as u32,
    })?;
    access(cell, a, lanes as u32).map_err(|conflict| Fault::Race {
        conflict,
        lane: l,
        at: at as u32,
    })
}

/// One word of memory at byte `at`.
#[inline(always)]
fn read(mem: &[u8], at: usize, kind: MemKind) -> Option<u32> {
    match kind {
        MemKind::H16 => {
            let b = mem.get(at..at + 2)?;
            Some(u32::from(u16::from_le_bytes([b[0], b[1]])))
        }
        _ => {
            let b = mem.get(at..at + 4)?;
            Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        }
    }
}

#[inline(always)]
fn write(mem: &mut [u8], at: usize, kind: MemKind, word: u32) -> bool {
    match kind {
        MemKind::H16 => match mem.get_mut(at..at + 2) {
            Some(b) => {
                b.copy_from_slice(&(word as u16).to_le_bytes());
                true
            }
            None => false,
        },
        _ => match mem.get_mut(at..at + 4) {
            Some(b) => {
                b.copy_from_slice(&word.to_le_bytes());
                true
            }
            None => false,
        },
    }
}
