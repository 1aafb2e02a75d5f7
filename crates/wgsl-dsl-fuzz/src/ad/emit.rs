//! An [`AdProgram`] built with the DSL's builder ([`emit`]), and printed as the same
//! builder calls ([`print()`]), for a shrunk failure.

use std::collections::HashMap;
use std::fmt::Write;

use wgsl_dsl::kernel::{Function, Var};
use wgsl_dsl::prelude::*;

use super::program::{AdProgram, Bin, Cond, E, Index, S, Un};

type Input = Place<RuntimeArray<f32>, ReadOnly>;
type Output = Place<RuntimeArray<f32>, ReadWrite>;

struct Ctx<'p> {
    p: &'p AdProgram,
    inputs: Vec<Input>,
    outputs: Vec<Output>,
    counts: Option<Place<RuntimeArray<u32>, ReadOnly>>,
    acc: Option<Place<RuntimeArray<Atomic<u32>>, ReadWrite>>,
    helpers: Vec<Function<(f32, f32), f32>>,
    gid: [Exp<u32>; 3],
    g: Exp<u32>,
    lets: HashMap<usize, Exp<f32>>,
    staged: Option<Exp<f32>>,
    vars: HashMap<usize, Var<f32>>,
    counter: Option<Exp<u32>>,
}

fn unary(op: Un, a: Exp<f32>) -> Exp<f32> {
    match op {
        Un::Neg => -a,
        Un::Sin => sin(a),
        Un::Cos => cos(a),
        Un::Tanh => tanh(a),
        Un::Abs => abs(a),
        Un::SoftSqrt => sqrt(1.0f32 + &a * &a),
        Un::ExpTanh => exp(tanh(a)),
        Un::Floor => floor(a),
    }
}

fn binary(op: Bin, a: Exp<f32>, b: Exp<f32>) -> Exp<f32> {
    match op {
        Bin::Add => a + b,
        Bin::Sub => a - b,
        Bin::Mul => a * b,
        Bin::SafeDiv => a / (1.0f32 + &b * &b),
        Bin::Max => max(a, b),
        Bin::Min => min(a, b),
    }
}

/// The expression of a helper function's body (`params`: its parameters and `t`).
fn helper_exp(e: &E, params: &[Exp<f32>]) -> Exp<f32> {
    let r = |e: &E| helper_exp(e, params);
    match e {
        E::Param(i) => params.get(*i).cloned().unwrap_or_else(|| lit(0.5f32)),
        E::Un(op, a) => unary(*op, r(a)),
        E::Bin(op, a, b) => binary(*op, r(a), r(b)),
        E::Select(c, a, b) => select(r(b), r(a), compare(r(&c.a), c.less, r(&c.b))),
        E::GuardedSqrt(a) => {
            let a = r(a);
            select(0.0f32, sqrt(max(a.clone(), 0.0f32)), a.gt(0.0f32))
        }
        E::Lit(v) => lit(*v),
        _ => lit(0.5f32),
    }
}

fn compare(a: Exp<f32>, less: bool, b: Exp<f32>) -> Exp<bool> {
    if less { a.lt(b) } else { a.gt(b) }
}

impl Ctx<'_> {
    fn index(&self, index: &Index, len: u32) -> Exp<u32> {
        match index {
            Index::Linear { a, b } => (&self.g * *a + *b) % len,
            Index::Coord { dim, a, b } => (&self.gid[*dim] * *a + *b) % len,
            Index::Counter { b } => match &self.counter {
                Some(c) => (&self.g + c + *b) % len,
                None => (&self.g + *b) % len,
            },
            Index::Const { b } => lit(*b % len),
        }
    }

    fn exp(&self, k: &mut KernelBuilder, e: &E) -> Exp<f32> {
        match e {
            E::Lit(v) => lit(*v),
            E::In { buf, index } => {
                let len = self.p.inputs[*buf];
                self.inputs[*buf].at(self.index(index, len)).load()
            }
            E::Let(i) => self.lets.get(i).cloned().unwrap_or_else(|| lit(0.5f32)),
            E::Var(i) => self.vars.get(i).map_or_else(|| lit(0.5f32), |v| v.load()),
            E::Counter => self
                .counter
                .as_ref()
                .map_or_else(|| lit(0.0f32), |c| c.to_f32()),
            E::Un(op, a) => unary(*op, self.exp(k, a)),
            E::Bin(op, a, b) => binary(*op, self.exp(k, a), self.exp(k, b)),
            E::Select(c, a, b) => {
                let cond = self.cond(k, c);
                select(self.exp(k, b), self.exp(k, a), cond)
            }
            E::GuardedSqrt(a) => {
                let a = self.exp(k, a);
                select(0.0f32, sqrt(max(a.clone(), 0.0f32)), a.gt(0.0f32))
            }
            E::Call(h, a, b) => {
                let (a, b) = (self.exp(k, a), self.exp(k, b));
                match self.helpers.get(*h) {
                    Some(f) => k.call(f, (a, b)),
                    None => a + b,
                }
            }
            E::Param(_) => lit(0.5f32),
            E::Staged => self.staged.clone().unwrap_or_else(|| lit(0.5f32)),
        }
    }

    fn cond(&self, k: &mut KernelBuilder, c: &Cond) -> Exp<bool> {
        compare(self.exp(k, &c.a), c.less, self.exp(k, &c.b))
    }

    fn block(&mut self, k: &mut KernelBuilder, body: &[S]) {
        let (lets, vars) = (self.lets.clone(), self.vars.clone());
        for s in body {
            self.stmt(k, s);
        }
        self.lets = lets;
        self.vars = vars;
    }

    fn stmt(&mut self, k: &mut KernelBuilder, s: &S) {
        match s {
            S::Let(id, e) => {
                let v = self.exp(k, e);
                let l = k.let_(&format!("l{id}"), v);
                self.lets.insert(*id, l);
            }
            S::Var(id, e) => {
                let v = self.exp(k, e);
                let var = k.var(&format!("v{id}"), v);
                self.vars.insert(*id, var);
            }
            S::Assign(id, e) => {
                let v = self.exp(k, e);
                if let Some(var) = self.vars.get(id) {
                    k.store(var, v);
                }
            }
            S::Store { out, value } => {
                let v = self.exp(k, value);
                let sc = &self.p.scatters[*out];
                let n = self.p.invocations();
                let at = (&self.g * sc.a + sc.b) % n;
                k.store(&self.outputs[*out].at(at), v);
            }
            S::Accumulate { bin, value } => {
                let v = self.exp(k, value);
                if let Some(acc) = &self.acc {
                    let at = self.index(bin, self.p.bins);
                    k.atomic_add_f32(&acc.at(at), v);
                }
            }
            S::If {
                cond,
                then,
                otherwise,
            } => {
                let c = self.cond(k, cond);
                if otherwise.is_empty() {
                    k.if_(c, |k| self.block(k, then));
                } else {
                    // Two closures cannot both borrow `self`: the branches are recorded
                    // one after the other through a cell.
                    let me = std::cell::RefCell::new(&mut *self);
                    k.if_else(
                        c,
                        |k| me.borrow_mut().block(k, then),
                        |k| me.borrow_mut().block(k, otherwise),
                    );
                }
            }
            S::Switch { modulus, arms } => {
                let selector = &self.g % *modulus;
                let me = std::cell::RefCell::new(&mut *self);
                k.switch(selector, |sw| {
                    for (i, arm) in arms.iter().enumerate() {
                        if i + 1 == arms.len() {
                            sw.default(|k| me.borrow_mut().block(k, arm));
                        } else {
                            sw.case([i as u32], |k| me.borrow_mut().block(k, arm));
                        }
                    }
                });
            }
            S::Loop {
                trips,
                run_time,
                body,
            } => {
                let outer = self.counter.clone();
                let end = match (&self.counts, run_time) {
                    (Some(counts), true) => {
                        let len = self.p.counts.len() as u32;
                        k.max_iterations(*trips);
                        min(counts.at(&self.g % len).load(), *trips)
                    }
                    _ => lit(*trips),
                };
                k.for_range("c", 0u32, end, |k, c| {
                    self.counter = Some(c);
                    self.block(k, body);
                });
                self.counter = outer;
            }
        }
    }
}

/// `p` as a kernel named `ad_case`.
pub fn emit(p: &AdProgram) -> KernelBuilder {
    let mut k = KernelBuilder::new("ad_case", p.workgroup);
    let inputs: Vec<Input> = (0..p.inputs.len())
        .map(|i| k.storage::<RuntimeArray<f32>, ReadOnly>(&format!("in{i}")))
        .collect();
    let outputs: Vec<Output> = (0..p.outputs)
        .map(|i| k.storage::<RuntimeArray<f32>, ReadWrite>(&format!("out{i}")))
        .collect();
    let counts = p
        .has_run_time_loop()
        .then(|| k.storage::<RuntimeArray<u32>, ReadOnly>("counts"));
    let acc = (p.bins > 0).then(|| k.storage::<RuntimeArray<Atomic<u32>>, ReadWrite>("acc"));
    let helpers = p
        .helpers
        .iter()
        .enumerate()
        .map(|(i, (first, second))| {
            k.function::<(f32, f32), f32>(&format!("h{i}"), ["p0", "p1"], |k, (p0, p1)| {
                let t = k.let_("t", helper_exp(first, &[p0.clone(), p1.clone()]));
                helper_exp(second, &[p0, p1, t])
            })
        })
        .collect();
    let gid = global_invocation_id();
    let gx = k.let_("gx", gid.x());
    let gy = k.let_("gy", gid.y());
    let gz = k.let_("gz", gid.z());
    let [nx, ny, nz] = p.extent;
    let inside = gx.lt(nx).and(gy.lt(ny)).and(gz.lt(nz));
    // Workgroup memory: every invocation stores, a barrier at the top level, each reads a
    // neighbour's value back.
    let staged = p.stage.as_ref().map(|s| {
        let size: u32 = p.workgroup.iter().product();
        let tile = k.workgroup_array::<f32>("tile", size);
        let lid = k.let_("lid", local_invocation_index());
        let all = k.let_("g_all", &gx + &gy * nx + &gz * (nx * ny));
        let len = p.inputs[s.buf];
        k.store(
            &tile.at(&lid),
            inputs[s.buf].at((&all * s.a + s.b) % len).load(),
        );
        k.workgroup_barrier();
        k.let_("staged", tile.at((&lid * s.p + s.q) % size).load())
    });
    k.if_(inside, |k| {
        let g = k.let_("g", &gx + &gy * nx + &gz * (nx * ny));
        let mut ctx = Ctx {
            p,
            inputs,
            outputs,
            counts,
            acc,
            helpers,
            gid: [gx.clone(), gy.clone(), gz.clone()],
            g,
            lets: HashMap::new(),
            staged,
            vars: HashMap::new(),
            counter: None,
        };
        ctx.block(k, &p.body);
    });
    k
}

// ---- printing ----

fn p_unary(op: Un, a: String) -> String {
    match op {
        Un::Neg => format!("-({a})"),
        Un::Sin => format!("sin({a})"),
        Un::Cos => format!("cos({a})"),
        Un::Tanh => format!("tanh({a})"),
        Un::Abs => format!("abs({a})"),
        Un::SoftSqrt => format!("sqrt(1.0f32 + ({a}) * ({a}))"),
        Un::ExpTanh => format!("exp(tanh({a}))"),
        Un::Floor => format!("floor({a})"),
    }
}

fn p_binary(op: Bin, a: String, b: String) -> String {
    match op {
        Bin::Add => format!("({a}) + ({b})"),
        Bin::Sub => format!("({a}) - ({b})"),
        Bin::Mul => format!("({a}) * ({b})"),
        Bin::SafeDiv => format!("({a}) / (1.0f32 + ({b}) * ({b}))"),
        Bin::Max => format!("max({a}, {b})"),
        Bin::Min => format!("min({a}, {b})"),
    }
}

struct Printer<'p> {
    p: &'p AdProgram,
    out: String,
    lets: Vec<usize>,
    vars: Vec<usize>,
    in_loop: bool,
}

impl Printer<'_> {
    fn index(&self, index: &Index, len: u32) -> String {
        match index {
            Index::Linear { a, b } => format!("(&g * {a}u32 + {b}u32) % {len}u32"),
            Index::Coord { dim, a, b } => {
                format!("(&g{} * {a}u32 + {b}u32) % {len}u32", ["x", "y", "z"][*dim])
            }
            Index::Counter { b } if self.in_loop => format!("(&g + &c + {b}u32) % {len}u32"),
            Index::Counter { b } => format!("(&g + {b}u32) % {len}u32"),
            Index::Const { b } => format!("lit({}u32)", b % len),
        }
    }

    fn exp(&self, e: &E) -> String {
        match e {
            E::Lit(v) => format!("{v:?}f32"),
            E::In { buf, index } => {
                let i = self.index(index, self.p.inputs[*buf]);
                format!("in{buf}.at({i}).load()")
            }
            E::Let(i) if self.lets.contains(i) => format!("l{i}.clone()"),
            E::Var(i) if self.vars.contains(i) => format!("v{i}.load()"),
            E::Let(_) | E::Var(_) | E::Param(_) => "lit(0.5f32)".into(),
            E::Counter if self.in_loop => "c.to_f32()".into(),
            E::Counter => "lit(0.0f32)".into(),
            E::Un(op, a) => p_unary(*op, self.exp(a)),
            E::Bin(op, a, b) => p_binary(*op, self.exp(a), self.exp(b)),
            E::Select(c, a, b) => {
                format!("select({}, {}, {})", self.exp(b), self.exp(a), self.cond(c))
            }
            E::GuardedSqrt(a) => {
                let a = self.exp(a);
                format!("select(0.0f32, sqrt(max({a}, 0.0f32)), ({a}).gt(0.0f32))")
            }
            E::Call(h, a, b) => format!("k.call(&h{h}, ({}, {}))", self.exp(a), self.exp(b)),
            E::Staged if self.p.stage.is_some() => "staged.clone()".into(),
            E::Staged => "lit(0.5f32)".into(),
        }
    }

    fn cond(&self, c: &Cond) -> String {
        format!(
            "({}).{}({})",
            self.exp(&c.a),
            if c.less { "lt" } else { "gt" },
            self.exp(&c.b)
        )
    }

    fn line(&mut self, depth: usize, s: &str) {
        let _ = writeln!(self.out, "{}{s}", "    ".repeat(depth));
    }

    fn block(&mut self, depth: usize, body: &[S]) {
        let (lets, vars) = (self.lets.len(), self.vars.len());
        for s in body {
            self.stmt(depth, s);
        }
        self.lets.truncate(lets);
        self.vars.truncate(vars);
    }

    fn stmt(&mut self, d: usize, s: &S) {
        match s {
            S::Let(id, e) => {
                let l = format!("let l{id} = k.let_(\"l{id}\", {});", self.exp(e));
                self.line(d, &l);
                self.lets.push(*id);
            }
            S::Var(id, e) => {
                let l = format!("let v{id} = k.var(\"v{id}\", {});", self.exp(e));
                self.line(d, &l);
                self.vars.push(*id);
            }
            S::Assign(id, e) => {
                if self.vars.contains(id) {
                    let l = format!("k.store(&v{id}, {});", self.exp(e));
                    self.line(d, &l);
                }
            }
            S::Store { out, value } => {
                let sc = &self.p.scatters[*out];
                let n = self.p.invocations();
                let l = format!(
                    "k.store(&out{out}.at((&g * {}u32 + {}u32) % {n}u32), {});",
                    sc.a,
                    sc.b,
                    self.exp(value)
                );
                self.line(d, &l);
            }
            S::Accumulate { bin, value } => {
                let l = format!(
                    "k.atomic_add_f32(&acc.at({}), {});",
                    self.index(bin, self.p.bins),
                    self.exp(value)
                );
                self.line(d, &l);
            }
            S::If {
                cond,
                then,
                otherwise,
            } => {
                let c = self.cond(cond);
                if otherwise.is_empty() {
                    self.line(d, &format!("k.if_({c}, |k| {{"));
                    self.block(d + 1, then);
                    self.line(d, "});");
                } else {
                    self.line(d, &format!("k.if_else({c}, |k| {{"));
                    self.block(d + 1, then);
                    self.line(d, "}, |k| {");
                    self.block(d + 1, otherwise);
                    self.line(d, "});");
                }
            }
            S::Switch { modulus, arms } => {
                self.line(d, &format!("k.switch(&g % {modulus}u32, |s| {{"));
                for (i, arm) in arms.iter().enumerate() {
                    if i + 1 == arms.len() {
                        self.line(d + 1, "s.default(|k| {");
                    } else {
                        self.line(d + 1, &format!("s.case([{i}u32], |k| {{"));
                    }
                    self.block(d + 2, arm);
                    self.line(d + 1, "});");
                }
                self.line(d, "});");
            }
            S::Loop {
                trips,
                run_time,
                body,
            } => {
                let len = self.p.counts.len();
                let line = if *run_time {
                    format!(
                        "k.max_iterations({trips}).for_range(\"c\", 0u32, min(counts.at(&g % {len}u32).load(), {trips}u32), |k, c| {{"
                    )
                } else {
                    format!("k.for_range(\"c\", 0u32, {trips}u32, |k, c| {{")
                };
                self.line(d, &line);
                let outer = self.in_loop;
                self.in_loop = true;
                self.block(d + 1, body);
                self.in_loop = outer;
                self.line(d, "});");
            }
        }
    }
}

/// `p` as the Rust builder calls [`emit`] makes, with its grid and buffer lengths.
pub fn print(p: &AdProgram) -> String {
    let mut pr = Printer {
        p,
        out: String::new(),
        lets: Vec::new(),
        vars: Vec::new(),
        in_loop: false,
    };
    let n = p.invocations();
    pr.line(
        0,
        &format!(
            "// grid extent {:?} ({n} invocations), workgroups {:?} of {:?}; inputs' lengths {:?}, outputs' {n}",
            p.extent,
            p.workgroups(),
            p.workgroup,
            p.inputs
        ),
    );
    pr.line(
        0,
        &format!(
            "let mut k = KernelBuilder::new(\"ad_case\", {:?});",
            p.workgroup
        ),
    );
    for i in 0..p.inputs.len() {
        pr.line(
            0,
            &format!("let in{i} = k.storage::<RuntimeArray<f32>, ReadOnly>(\"in{i}\");"),
        );
    }
    for i in 0..p.outputs {
        pr.line(
            0,
            &format!("let out{i} = k.storage::<RuntimeArray<f32>, ReadWrite>(\"out{i}\");"),
        );
    }
    if p.has_run_time_loop() {
        pr.line(
            0,
            "let counts = k.storage::<RuntimeArray<u32>, ReadOnly>(\"counts\");",
        );
    }
    if p.bins > 0 {
        pr.line(
            0,
            "let acc = k.storage::<RuntimeArray<Atomic<u32>>, ReadWrite>(\"acc\");",
        );
    }
    for (i, (first, second)) in p.helpers.iter().enumerate() {
        let params = |e: &E| helper_print(e);
        pr.line(
            0,
            &format!(
                "let h{i} = k.function::<(f32, f32), f32>(\"h{i}\", [\"p0\", \"p1\"], |k, (p0, p1)| {{ let t = k.let_(\"t\", {}); {} }});",
                params(first),
                params(second)
            ),
        );
    }
    pr.line(0, "let gx = k.let_(\"gx\", global_invocation_id().x());");
    pr.line(0, "let gy = k.let_(\"gy\", global_invocation_id().y());");
    pr.line(0, "let gz = k.let_(\"gz\", global_invocation_id().z());");
    let [nx, ny, nz] = p.extent;
    if let Some(s) = &p.stage {
        let size: u32 = p.workgroup.iter().product();
        let len = p.inputs[s.buf];
        for l in [
            format!("let tile = k.workgroup_array::<f32>(\"tile\", {size});"),
            "let lid = k.let_(\"lid\", local_invocation_index());".to_string(),
            format!(
                "let g_all = k.let_(\"g_all\", &gx + &gy * {nx}u32 + &gz * {}u32);",
                nx * ny
            ),
            format!(
                "k.store(&tile.at(&lid), in{}.at((&g_all * {}u32 + {}u32) % {len}u32).load());",
                s.buf, s.a, s.b
            ),
            "k.workgroup_barrier();".to_string(),
            format!(
                "let staged = k.let_(\"staged\", tile.at((&lid * {}u32 + {}u32) % {size}u32).load());",
                s.p, s.q
            ),
        ] {
            pr.line(0, &l);
        }
    }
    pr.line(
        0,
        &format!("k.if_(gx.lt({nx}u32).and(gy.lt({ny}u32)).and(gz.lt({nz}u32)), |k| {{"),
    );
    pr.line(
        1,
        &format!(
            "let g = k.let_(\"g\", &gx + &gy * {nx}u32 + &gz * {}u32);",
            nx * ny
        ),
    );
    pr.block(1, &p.body);
    pr.line(0, "});");
    pr.out
}

fn helper_print(e: &E) -> String {
    let r = helper_print;
    match e {
        E::Param(0) => "p0.clone()".into(),
        E::Param(1) => "p1.clone()".into(),
        E::Param(2) => "t.clone()".into(),
        E::Un(op, a) => p_unary(*op, r(a)),
        E::Bin(op, a, b) => p_binary(*op, r(a), r(b)),
        E::Select(c, a, b) => format!(
            "select({}, {}, ({}).{}({}))",
            r(b),
            r(a),
            r(&c.a),
            if c.less { "lt" } else { "gt" },
            r(&c.b)
        ),
        E::GuardedSqrt(a) => {
            let a = r(a);
            format!("select(0.0f32, sqrt(max({a}, 0.0f32)), ({a}).gt(0.0f32))")
        }
        E::Lit(v) => format!("{v:?}f32"),
        _ => "lit(0.5f32)".into(),
    }
}
