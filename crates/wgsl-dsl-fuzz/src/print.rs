//! A [`Program`] as Rust source: the builder calls [`crate::emit`] makes, so that a shrunk
//! failing case can be pasted into a test (`fn kernel() -> KernelBuilder`, with the inputs
//! and the dispatch grid beside it).

use std::fmt::Write;

use crate::analysis::{analyze, out_buffer};
use crate::ast::*;
use crate::emit::{OUT_BUFFERS, out_index};

/// The Rust source of `prog`.
pub fn program(prog: &Program) -> String {
    let mut p = Printer {
        out: String::new(),
        indent: 1,
        prog,
        slots: [0; 4],
        atomics: 0,
    };
    p.program();
    p.out
}

struct Printer<'p> {
    out: String,
    indent: usize,
    prog: &'p Program,
    slots: [u32; 4],
    atomics: u32,
}

fn lit(l: &Lit) -> String {
    match l {
        Lit::Bool(b) => format!("lit({b})"),
        Lit::I32(v) => format!("lit({v}i32)"),
        Lit::U32(v) => format!("lit({v}u32)"),
        Lit::F32(v) => format!("lit({v:?}f32)"),
        Lit::F16(b) => format!("lit(f16::from_bits({b:#06x}))"),
    }
}

fn builtin(b: Builtin) -> &'static str {
    match b {
        Builtin::GlobalId => "global_invocation_id()",
        Builtin::LocalId => "local_invocation_id()",
        Builtin::LocalIndex => "local_invocation_index()",
        Builtin::WorkgroupId => "workgroup_id()",
        Builtin::NumWorkgroups => "num_workgroups()",
        Builtin::SubgroupSize => "subgroup_size()",
        Builtin::SubgroupId => "subgroup_invocation_id()",
    }
}

fn bin_op(op: Bin) -> &'static str {
    match op {
        Bin::Add => "+",
        Bin::Sub => "-",
        Bin::Mul => "*",
        Bin::Div => "/",
        Bin::Rem => "%",
        Bin::And => "&",
        Bin::Or => "|",
        Bin::Xor => "^",
        Bin::Shl => "<<",
        Bin::Shr => ">>",
    }
}

/// The Rust source of an expression.
pub fn expr(e: &Expr) -> String {
    match e {
        Expr::Lit(l) => lit(l),
        Expr::Zero(t) => format!("Exp::<{}>::zero()", t.rust()),
        Expr::Input(s, i) => {
            let b = format!("in_{}", s.rust());
            format!("{b}.at({} % {b}.len()).load()", expr(i))
        }
        Expr::Param => "param.load()".into(),
        Expr::Builtin(b) => builtin(*b).into(),
        Expr::Value(id) => format!("v{id}.clone()"),
        Expr::Var(id) => format!("x{id}.load()"),
        Expr::Wg(i) => format!("wg.at({}).load()", expr(i)),
        Expr::WgAtomic => "wg_atomic.load()".into(),
        Expr::Un(Un::Neg, a) => format!("(-{})", expr(a)),
        Expr::Un(Un::BitNot, a) => format!("(!{})", expr(a)),
        Expr::Un(Un::Not, a) => format!("{}.not()", expr(a)),
        Expr::Bin(op, a, b) => format!("({} {} {})", expr(a), bin_op(*op), expr(b)),
        Expr::Cmp(op, a, b) => {
            let m = match op {
                Cmp::Lt => "lt",
                Cmp::Le => "le",
                Cmp::Gt => "gt",
                Cmp::Ge => "ge",
                Cmp::Eq => "eq",
                Cmp::Ne => "ne",
            };
            format!("{}.{m}({})", expr(a), expr(b))
        }
        Expr::Logic(and, a, b) => {
            format!(
                "{}.{}({})",
                expr(a),
                if *and { "and" } else { "or" },
                expr(b)
            )
        }
        Expr::Math(Fun::Powi(n), args) => format!("powi({}, {n})", expr(&args[0])),
        Expr::Math(f, args) => {
            let a: Vec<String> = args.iter().map(expr).collect();
            format!("{}({})", f.name(), a.join(", "))
        }
        Expr::Select(vector, p) => {
            let [c, a, r] = &**p;
            if *vector {
                format!("{}.select({}, {})", expr(c), expr(a), expr(r))
            } else {
                format!("select({}, {}, {})", expr(r), expr(a), expr(c))
            }
        }
        Expr::Conv(Conv::To(s), a) => format!("{}.to_{}()", expr(a), s.rust()),
        Expr::Conv(Conv::Bitcast(t), a) => format!("{}.bitcast::<{}>()", expr(a), t.rust()),
        Expr::Conv(Conv::Saturating(s), a) => {
            format!("{}.to_{}_saturating()", expr(a), s.rust())
        }
        Expr::Splat(n, a) => format!("Exp::<Vec{n}<_>>::splat({})", expr(a)),
        Expr::Compose(parts) => {
            let a: Vec<String> = parts.iter().map(expr).collect();
            if let Some(Expr::Compose(_)) = parts.first() {
                format!("mat([{}])", a.join(", "))
            } else {
                format!("vec{}({})", parts.len(), a.join(", "))
            }
        }
        Expr::Swizzle(2, a) => format!("{}.xy()", expr(a)),
        Expr::Swizzle(_, a) => format!("{}.xyz()", expr(a)),
        Expr::Component(i, a) => format!("{}.{}()", expr(a), ["x", "y", "z", "w"][*i as usize]),
        Expr::Index(v, i) => format!("{}.index({})", expr(v), expr(i)),
        Expr::ArrayPick(elems, i) => {
            let a: Vec<String> = elems.iter().map(expr).collect();
            format!("array([{}]).index({})", a.join(", "), expr(i))
        }
        Expr::AnyAll(any, v) => format!("{}.{}()", expr(v), if *any { "any" } else { "all" }),
        Expr::Split(part, a) => {
            let (f, m) = match part {
                Part::ModfFract => ("modf", "fract"),
                Part::ModfWhole => ("modf", "whole"),
                Part::FrexpFract => ("frexp", "fract"),
                Part::FrexpExp => ("frexp", "exp"),
            };
            format!("{f}({}).{m}()", expr(a))
        }
    }
}

impl Printer<'_> {
    fn line(&mut self, s: &str) {
        for _ in 0..self.indent {
            self.out.push_str("    ");
        }
        self.out.push_str(s);
        self.out.push('\n');
    }

    fn program(&mut self) {
        let prog = self.prog;
        let _ = writeln!(
            self.out,
            "// seed {}: dispatch {:?} workgroups of @workgroup_size{:?}",
            prog.seed, prog.grid, prog.workgroup
        );
        let _ = writeln!(self.out, "use half::f16;");
        let _ = writeln!(self.out, "use wgsl_dsl::kernel::LoopRange;");
        let _ = writeln!(self.out, "use wgsl_dsl::prelude::*;\n");
        let _ = writeln!(self.out, "/// Inputs: in_f32 = {:?};", prog.inputs.f32);
        let _ = writeln!(self.out, "/// in_i32 = {:?};", prog.inputs.i32);
        let _ = writeln!(self.out, "/// in_u32 = {:?};", prog.inputs.u32);
        let _ = writeln!(
            self.out,
            "/// in_f16 (bits) = {:?}; param = {};",
            prog.inputs.f16, prog.inputs.param
        );
        let _ = writeln!(self.out, "#[allow(unused_variables, clippy::all)]");
        let _ = writeln!(self.out, "pub fn kernel() -> KernelBuilder {{");
        if prog.texture.is_some() {
            self.line("// a texture kernel: see crates/wgsl-dsl-fuzz/src/texture.rs");
            self.line(&format!(
                "KernelBuilder::new(\"fuzz_texture_{}\", {:?})",
                prog.seed, prog.workgroup
            ));
            self.out.push_str("}\n");
            return;
        }
        if prog.coop.is_some() {
            self.line("// a cooperative-matrix kernel: see crates/wgsl-dsl-fuzz/src/coop.rs");
            self.line(&format!(
                "KernelBuilder::new(\"fuzz_coop_{}\", {:?})",
                prog.seed, prog.workgroup
            ));
            self.out.push_str("}\n");
            return;
        }
        self.line(&format!(
            "let mut k = KernelBuilder::new(\"fuzz_{}\", {:?});",
            prog.seed, prog.workgroup
        ));
        let an = analyze(prog).ok();
        let uses = an.as_ref().map(|a| a.uses.clone()).unwrap_or_default();
        for s in [Scalar::F32, Scalar::I32, Scalar::U32, Scalar::F16] {
            if uses.inputs.contains(&s) {
                let n = s.rust();
                self.line(&format!(
                    "let in_{n} = k.storage::<RuntimeArray<{n}>, ReadOnly>(\"in_{n}\");"
                ));
            }
        }
        if uses.param {
            self.line("let param = k.uniform::<u32>(\"param\");");
        }
        if let Some(an) = &an {
            for &(s, slot) in an.slots.keys() {
                let i = out_index(s);
                self.slots[i] = self.slots[i].max(slot + 1);
            }
            self.atomics = an.own_atomics;
        }
        for (i, s) in OUT_BUFFERS.iter().enumerate() {
            if self.slots[i] > 0 {
                let n = s.rust();
                self.line(&format!(
                    "let out_{n} = k.storage::<RuntimeArray<{n}>, ReadWrite>(\"out_{n}\");"
                ));
            }
        }
        if uses.atomics {
            self.line("let atom = k.storage::<RuntimeArray<Atomic<u32>>, ReadWrite>(\"atom\");");
        }
        if uses.wg {
            self.line(&format!(
                "let wg = k.workgroup_array::<u32>(\"wg\", {});",
                prog.invocations()
            ));
        }
        if uses.wg_atomic {
            self.line("let wg_atomic = k.workgroup::<Atomic<u32>>(\"wg_atomic\");");
        }
        for (n, f) in prog.funcs.iter().enumerate() {
            let t = f.ty.rust();
            let types = vec![t.clone(); f.params.len()].join(", ");
            let names: Vec<String> = ["a", "b", "c"][..f.params.len()]
                .iter()
                .map(|s| format!("\"{s}\""))
                .collect();
            let params: Vec<String> = f.params.iter().map(|p| format!("v{p}")).collect();
            self.line(&format!(
                "let f{n} = k.function::<({types},), {t}>(\"f{n}\", [{}], |k, ({},)| {{",
                names.join(", "),
                params.join(", ")
            ));
            self.indent += 1;
            self.block(&f.body);
            self.line(&expr(&f.result));
            self.indent -= 1;
            self.line("});");
        }
        if self.slots.iter().any(|&s| s > 0) || uses.atomics {
            self.line("let (wid, nwg) = (workgroup_id(), num_workgroups());");
            self.line(&format!(
                "let gi = k.let_(\"gi\", ((wid.z() * nwg.y() + wid.y()) * nwg.x() + wid.x()) * {}u32 + local_invocation_index());",
                prog.invocations()
            ));
        }
        self.block(&prog.body);
        self.line("k");
        self.out.push_str("}\n");
    }

    fn block(&mut self, body: &[Stmt]) {
        for s in body {
            self.stmt(s);
        }
    }

    fn closure(&mut self, head: &str, body: &[Stmt], tail: &str) {
        self.line(&format!("{head} {{"));
        self.indent += 1;
        self.block(body);
        self.indent -= 1;
        self.line(&format!("}}{tail}"));
    }

    fn atomic_place(&self, t: AtomicTarget) -> String {
        match t {
            AtomicTarget::Own(slot) => {
                format!("&atom.at(gi.clone() * {}u32 + {slot}u32)", self.atomics)
            }
            AtomicTarget::Shared(slot) => format!(
                "&atom.at(lit({}u32))",
                self.prog.total_invocations() * self.atomics + slot
            ),
            AtomicTarget::Workgroup => "&wg_atomic".into(),
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::Let(id, e) => self.line(&format!("let v{id} = k.let_(\"v{id}\", {});", expr(e))),
            Stmt::Var(id, c, init) => {
                let t = c.ty.rust();
                self.line(&match init {
                    VarInit::Value(e) => format!("let x{id} = k.var::<{t}>(\"x{id}\", {});", expr(e)),
                    VarInit::Zero => format!("let x{id} = k.var_zeroed::<{t}>(\"x{id}\");"),
                    VarInit::Declared => format!("let x{id} = k.var_declared::<{t}>(\"x{id}\");"),
                })
            }
            Stmt::Assign(id, e) => self.line(&format!("k.store(&x{id}, {});", expr(e))),
            Stmt::Update(id, op, e) => self.line(&format!(
                "k.update(&x{id}, |old| old {} {});",
                bin_op(*op),
                expr(e)
            )),
            Stmt::Out(s, slot, e) => {
                let n = self.slots[out_index(*s)];
                let buf = format!("out_{}", out_buffer(*s).rust());
                let value = if *s == Scalar::Bool {
                    format!("select(0u32, 1u32, {})", expr(e))
                } else {
                    expr(e)
                };
                self.line(&format!(
                    "k.store(&{buf}.at(gi.clone() * {n}u32 + {slot}u32), {value});"
                ));
            }
            Stmt::If(c, a, b) => {
                if b.is_empty() {
                    self.closure(&format!("k.if_({}, |k|", expr(c)), a, ");");
                } else {
                    self.closure(&format!("k.if_else({}, |k|", expr(c)), a, ", |k| {");
                    self.indent += 1;
                    self.block(b);
                    self.indent -= 1;
                    self.line("});");
                }
            }
            Stmt::IfValue(id, t, c, (a, va), (b, vb)) => {
                self.line(&format!(
                    "let v{id} = k.if_value::<{}>(\"v{id}\", {}, |k| {{",
                    t.rust(),
                    expr(c)
                ));
                self.indent += 1;
                self.block(a);
                self.line(&expr(va));
                self.indent -= 1;
                self.line("}, |k| {");
                self.indent += 1;
                self.block(b);
                self.line(&expr(vb));
                self.indent -= 1;
                self.line("});");
            }
            Stmt::Loop(l) => {
                let (counter, start, end, form, body) = (l.counter, l.start, &l.end, &l.form, &l.body);
                let t = l.scalar.rust();
                let st = format!("lit({start}{t})");
                let e = expr(end);
                let head = match form {
                    LoopForm::Range => format!("k.for_range(\"i{counter}\", {st}, {e}, |k, v{counter}|"),
                    LoopForm::Step(s) => format!(
                        "k.for_step(\"i{counter}\", {st}, {e}, lit({s}{t}), |k, v{counter}|"
                    ),
                    LoopForm::InclusiveIn { rev, step } => {
                        let mut r = format!("LoopRange::inclusive({st}, {e} - lit(1{t}))");
                        if let Some(s) = step {
                            let _ = write!(r, ".step_by(lit({s}{t}))");
                        }
                        if *rev {
                            r.push_str(".rev()");
                        }
                        format!("k.for_in(\"i{counter}\", {r}, |k, v{counter}|")
                    }
                    LoopForm::RevIn => format!(
                        "k.for_in(\"i{counter}\", LoopRange::new({st}, {e}).rev(), |k, v{counter}|"
                    ),
                    LoopForm::While | LoopForm::Loop => {
                        self.line(&format!("let c{counter} = k.var::<{t}>(\"c{counter}\", {st});"));
                        let head = if *form == LoopForm::While {
                            format!("k.while_(c{counter}.load().lt({e}), |k|")
                        } else {
                            "k.loop_(|k|".to_string()
                        };
                        self.line(&format!("{head} {{"));
                        self.indent += 1;
                        if *form == LoopForm::Loop {
                            self.line(&format!("k.if_(c{counter}.load().ge({e}), |k| k.break_());"));
                        }
                        self.line(&format!("let v{counter} = k.let_(\"i{counter}\", c{counter}.load());"));
                        self.line(&format!("k.store(&c{counter}, v{counter}.clone() + lit(1{t}));"));
                        self.block(body);
                        self.indent -= 1;
                        self.line("});");
                        return;
                    }
                };
                self.closure(&head, body, ");");
            }
            Stmt::Break => self.line("k.break_();"),
            Stmt::Continue => self.line("k.continue_();"),
            Stmt::Switch(sel, arms, default) => {
                self.line(&format!("k.switch({}, |s| {{", expr(sel)));
                self.indent += 1;
                for (values, body) in arms {
                    let v: Vec<String> = values.iter().map(|v| v.to_string()).collect();
                    self.closure(&format!("s.case([{}], |k|", v.join(", ")), body, ");");
                }
                if let Some(d) = default {
                    self.closure("s.default(|k|", d, ");");
                }
                self.indent -= 1;
                self.line("});");
            }
            Stmt::Barrier(true) => self.line("k.workgroup_barrier();"),
            Stmt::Barrier(false) => self.line("k.storage_barrier();"),
            Stmt::WgStore(e) => {
                self.line(&format!("k.store(&wg.at(local_invocation_index()), {});", expr(e)))
            }
            Stmt::WgUniformLoad(id, i) => self.line(&format!(
                "let v{id} = k.workgroup_uniform_load(&wg.at(lit({i}u32)));"
            )),
            Stmt::Call(id, f, args) => {
                let a: Vec<String> = args.iter().map(expr).collect();
                self.line(&format!("let v{id} = k.call(&f{f}, ({},));", a.join(", ")));
            }
            Stmt::Atomic(id, t, op, v, cmp) => {
                let p = self.atomic_place(*t);
                let name = match op {
                    AtomicOp::Add => "atomic_add",
                    AtomicOp::Sub => "atomic_sub",
                    AtomicOp::Min => "atomic_min",
                    AtomicOp::Max => "atomic_max",
                    AtomicOp::And => "atomic_and",
                    AtomicOp::Or => "atomic_or",
                    AtomicOp::Xor => "atomic_xor",
                    AtomicOp::Exchange => "atomic_exchange",
                    AtomicOp::CompareExchange => "atomic_compare_exchange_weak",
                    AtomicOp::Store => "atomic_store",
                    AtomicOp::AddF32 => "atomic_add_f32",
                };
                let call = match (cmp, op) {
                    (Some(c), _) => format!("k.{name}({p}, {}, {})", expr(c), expr(v)),
                    (None, AtomicOp::AddF32) => {
                        format!("k.{name}({p}, (({}) & 1023u32 | 1u32).to_f32())", expr(v))
                    }
                    (None, _) => format!("k.{name}({p}, {})", expr(v)),
                };
                self.line(&match (id, op) {
                    (_, AtomicOp::Store | AtomicOp::AddF32) => format!("{call};"),
                    (Some(id), AtomicOp::CompareExchange) => format!("let (v{id}, _) = {call};"),
                    (Some(id), _) => format!("let v{id} = {call};"),
                    (None, _) => format!("let _ = {call};"),
                });
            }
            Stmt::Subgroup(id, op, arg, extra) => {
                use SubgroupOp as O;
                let a = expr(arg);
                let c = || match extra {
                    Some(Expr::Lit(Lit::U32(v))) => v.to_string(),
                    Some(e) => expr(e),
                    None => String::new(),
                };
                let call = match op {
                    O::Add => format!("k.subgroup_add({a})"),
                    O::Mul => format!("k.subgroup_mul({a})"),
                    O::Min => format!("k.subgroup_min({a})"),
                    O::Max => format!("k.subgroup_max({a})"),
                    O::And => format!("k.subgroup_and({a})"),
                    O::Or => format!("k.subgroup_or({a})"),
                    O::Xor => format!("k.subgroup_xor({a})"),
                    O::InclusiveAdd => format!("k.subgroup_inclusive_add({a})"),
                    O::ExclusiveAdd => format!("k.subgroup_exclusive_add({a})"),
                    O::InclusiveMul => format!("k.subgroup_inclusive_mul({a})"),
                    O::ExclusiveMul => format!("k.subgroup_exclusive_mul({a})"),
                    O::All => format!("k.subgroup_all({a})"),
                    O::Any => format!("k.subgroup_any({a})"),
                    O::Ballot => format!("k.subgroup_ballot({a})"),
                    O::BroadcastFirst => format!("k.subgroup_broadcast_first({a})"),
                    O::Broadcast => format!("k.subgroup_broadcast({a}, {})", c()),
                    O::Shuffle => format!("k.subgroup_shuffle({a}, {})", c()),
                    O::ShuffleXor => format!("k.subgroup_shuffle_xor({a}, lit({}u32))", c()),
                    O::ShuffleUp => format!(
                        "{{ let x = {a}; let s = k.subgroup_shuffle_up(&x, lit({d}u32)); select(s, x, subgroup_invocation_id().lt({d}u32)) }}",
                        d = c()
                    ),
                    O::ShuffleDown => format!(
                        "{{ let x = {a}; let s = k.subgroup_shuffle_down(&x, lit({d}u32)); select(s, x, (subgroup_invocation_id() + {d}u32).ge(subgroup_size())) }}",
                        d = c()
                    ),
                    O::QuadSwapX => format!("k.quad_swap_x({a})"),
                    O::QuadSwapY => format!("k.quad_swap_y({a})"),
                    O::QuadSwapDiagonal => format!("k.quad_swap_diagonal({a})"),
                    O::QuadBroadcast => format!("k.quad_broadcast({a}, {})", c()),
                    O::Elect => "k.subgroup_elect()".into(),
                };
                self.line(&format!("let v{id} = {call};"));
            }
            Stmt::Return(e) => self.line(&format!("k.return_value({});", expr(e))),
            Stmt::Mistake(Mistake::RevStepRev) => self.line(
                "k.for_in(\"bad\", LoopRange::new(0u32, 4u32).rev().step_by(2u32).rev(), |_, _| {}); // a planted mistake",
            ),
            Stmt::Mistake(Mistake::ForeignCall) => {
                self.line("let mut other = KernelBuilder::new(\"other\", [1, 1, 1]); // a planted mistake");
                self.line("let g = other.function::<(u32,), u32>(\"g\", [\"x\"], |_, (x,)| x);");
                self.line("let r = k.call(&g, (lit(1u32),));");
                self.line("let _ = k.let_(\"foreign\", r);");
            }
        }
    }
}
