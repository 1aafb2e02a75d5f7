//! Delta debugging over a program's structure: a failing [`Program`] is reduced while it
//! still fails the same oracle. Passes, repeated until none helps (or the budget of checks is
//! spent): remove chunks of statements (halves, then single statements, in every block),
//! inline a block in place of its `if`/loop/`switch`, replace expressions by one of their
//! operands or by a literal-indexed input, drop helper functions no call uses, and shrink the
//! dispatch grid. Every candidate must pass the analysis (it stays UB-free) before it is run.

use crate::analysis::analyze;
use crate::ast::*;
use crate::generator::replace;
use crate::oracle::{Failure, Oracle, Targets, check};

/// How many candidate programs the shrinker runs at most.
pub const MAX_CHECKS: usize = 400;

/// A smaller program failing `oracle` as `prog` does, and how many checks it took.
pub fn shrink(prog: &Program, oracle: Oracle, targets: &Targets) -> (Program, usize) {
    let mut s = Shrinker {
        best: prog.clone(),
        oracle,
        targets,
        checks: 0,
    };
    loop {
        let before = size(&s.best);
        s.statements();
        s.expressions();
        s.grid();
        if size(&s.best) >= before || s.checks >= MAX_CHECKS {
            break;
        }
    }
    (s.best, s.checks)
}

struct Shrinker<'t> {
    best: Program,
    oracle: Oracle,
    targets: &'t Targets,
    checks: usize,
}

/// Statements and expression nodes: what the shrinker minimises.
pub fn size(p: &Program) -> usize {
    let mut n = 0;
    let mut body = p.body.clone();
    for f in &p.funcs {
        body.extend(f.body.clone());
    }
    for_each_block(&mut body, &mut |b| n += b.len());
    let mut e = 0;
    for_each_expr(&mut p.clone(), &mut |_| e += 1);
    n * 4 + e + p.funcs.len() * 4 + p.total_invocations() as usize / 8
}

impl Shrinker<'_> {
    fn try_(&mut self, cand: Program) -> bool {
        if self.checks >= MAX_CHECKS || analyze(&cand).is_err() {
            return false;
        }
        self.checks += 1;
        match check(&cand, self.targets) {
            Err(Failure { oracle, .. }) if oracle == self.oracle => {
                self.best = cand;
                true
            }
            _ => false,
        }
    }

    fn statements(&mut self) {
        // Blocks in preorder; chunks of each removed, halves first.
        let mut b = 0;
        while b < count_blocks(&self.best) {
            let len = block_len(&self.best, b);
            let mut chunk = len.max(1);
            while chunk >= 1 {
                let mut start = 0;
                while start < block_len(&self.best, b) {
                    let mut cand = self.best.clone();
                    edit_block(&mut cand, b, |v| {
                        let end = (start + chunk).min(v.len());
                        v.drain(start..end);
                    });
                    if !self.try_(cand) {
                        start += chunk;
                    }
                }
                if chunk == 1 {
                    break;
                }
                chunk /= 2;
            }
            // Inline nested blocks in place of their statement.
            let mut i = 0;
            while i < block_len(&self.best, b) {
                let mut inlined = Vec::new();
                edit_block(&mut self.best.clone(), b, |v| {
                    if let Some(s) = v.get(i) {
                        match s {
                            Stmt::If(_, a, e) => {
                                inlined.push(a.clone());
                                inlined.push(e.clone());
                            }
                            Stmt::Switch(_, arms, d) => {
                                inlined.extend(arms.iter().map(|(_, a)| a.clone()));
                                inlined.extend(d.clone());
                            }
                            _ => {}
                        }
                    }
                });
                let mut done = false;
                for inner in inlined {
                    let mut cand = self.best.clone();
                    edit_block(&mut cand, b, |v| {
                        v.splice(i..=i, inner.clone());
                    });
                    if self.try_(cand) {
                        done = true;
                        break;
                    }
                }
                if !done {
                    i += 1;
                }
            }
            b += 1;
        }
        // Helper functions: drop the last while no call needs it.
        while !self.best.funcs.is_empty() {
            let mut cand = self.best.clone();
            cand.funcs.pop();
            if !self.try_(cand) {
                break;
            }
        }
    }

    fn expressions(&mut self) {
        let mut i = 0;
        loop {
            let n = count_exprs(&self.best);
            if i >= n || self.checks >= MAX_CHECKS {
                break;
            }
            let mut replacements = Vec::new();
            nth_expr(&mut self.best.clone(), i, |e| {
                replacements = children(e);
                for s in [Scalar::F32, Scalar::I32, Scalar::U32, Scalar::F16] {
                    replacements.push(Expr::Input(s, Box::new(Expr::Lit(Lit::U32(0)))));
                }
                replacements.push(Expr::Lit(Lit::Bool(true)));
                replacements.push(Expr::Lit(Lit::U32(0)));
            });
            let mut changed = false;
            for r in replacements {
                let mut cand = self.best.clone();
                nth_expr(&mut cand, i, |e| *e = r.clone());
                if cand != self.best && self.try_(cand) {
                    changed = true;
                    break;
                }
            }
            if !changed {
                i += 1;
            }
        }
    }

    fn grid(&mut self) {
        for d in 0..3 {
            while self.best.grid[d] > 1 {
                let mut cand = self.best.clone();
                cand.grid[d] -= 1;
                if !self.try_(cand) {
                    break;
                }
            }
        }
    }
}

fn children(e: &Expr) -> Vec<Expr> {
    let mut v = Vec::new();
    e.for_each_child(&mut |a| v.push(a.clone()));
    v
}

fn count_blocks(p: &Program) -> usize {
    let mut n = 0;
    let mut body = p.body.clone();
    for_each_block(&mut body, &mut |_| n += 1);
    n
}

fn block_len(p: &Program, b: usize) -> usize {
    let mut n = 0;
    let mut len = 0;
    let mut body = p.body.clone();
    for_each_block(&mut body, &mut |v| {
        if n == b {
            len = v.len();
        }
        n += 1;
    });
    len
}

fn edit_block(p: &mut Program, b: usize, mut f: impl FnMut(&mut Vec<Stmt>)) {
    let mut n = 0;
    for_each_block(&mut p.body, &mut |v| {
        if n == b {
            f(v);
        }
        n += 1;
    });
}

/// Every expression of `p`, statement by statement, parents first.
pub fn for_each_expr(p: &mut Program, f: &mut dyn FnMut(&mut Expr)) {
    fn stmts(body: &mut [Stmt], f: &mut dyn FnMut(&mut Expr)) {
        for s in body {
            match s {
                Stmt::Let(_, e)
                | Stmt::Assign(_, e)
                | Stmt::Update(_, _, e)
                | Stmt::Out(_, _, e)
                | Stmt::WgStore(e)
                | Stmt::Return(e) => replace(e, f),
                Stmt::Var(_, _, VarInit::Value(e)) => replace(e, f),
                Stmt::If(c, a, b) => {
                    replace(c, f);
                    stmts(a, f);
                    stmts(b, f);
                }
                Stmt::IfValue(_, _, c, (a, va), (b, vb)) => {
                    replace(c, f);
                    stmts(a, f);
                    replace(va, f);
                    stmts(b, f);
                    replace(vb, f);
                }
                Stmt::Loop(l) => {
                    replace(&mut l.end, f);
                    stmts(&mut l.body, f);
                }
                Stmt::Switch(sel, arms, d) => {
                    replace(sel, f);
                    for (_, b) in arms {
                        stmts(b, f);
                    }
                    if let Some(d) = d {
                        stmts(d, f);
                    }
                }
                Stmt::Call(_, _, args) => args.iter_mut().for_each(|a| replace(a, f)),
                Stmt::Atomic(_, _, _, v, c) => {
                    replace(v, f);
                    if let Some(c) = c {
                        replace(c, f);
                    }
                }
                Stmt::Subgroup(_, _, a, x) => {
                    replace(a, f);
                    if let Some(x) = x {
                        replace(x, f);
                    }
                }
                _ => {}
            }
        }
    }
    for func in &mut p.funcs {
        stmts(&mut func.body, f);
        replace(&mut func.result, f);
    }
    stmts(&mut p.body, f);
}

fn count_exprs(p: &Program) -> usize {
    let mut n = 0;
    for_each_expr(&mut p.clone(), &mut |_| n += 1);
    n
}

fn nth_expr(p: &mut Program, i: usize, mut f: impl FnMut(&mut Expr)) {
    let mut n = 0;
    let mut done = false;
    for_each_expr(p, &mut |e| {
        if !done && n == i {
            f(e);
            done = true;
        }
        n += 1;
    });
}
