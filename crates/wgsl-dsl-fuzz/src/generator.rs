//! The generator: a random [`Program`] from a seed (ChaCha8, so the same seed gives the same
//! program on every machine).
//!
//! It builds expressions top-down for a wanted type, choosing among every producer of that
//! type (operators, built-ins, conversions, constructors, values in scope, loads), and checks
//! each candidate with the [`Analyzer`]; an operand outside an operation's domain is
//! reconditioned first, as wgslsmith does (`sqrt(abs(x) + 0.5)`, `a / (abs(b) + 0.5)`,
//! `clamp(x, -3, 3)` before `exp`, indices `% n`, loop bounds `min(x, start + k)`), and a
//! candidate the analysis still refuses is replaced by a leaf, which it always accepts.
//! Statements are checked the same way, so the program is UB-free by construction.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::accuracy::F;
use crate::analysis::{
    Analyzer, CAS_SLOT, Contract, Ctx, F32_SLOT, Info, Num, Phase, full, shared_op_ok,
};
use crate::ast::*;
use crate::emit::out_index;

/// What the generator makes, in proportions.
#[derive(Clone, Debug)]
pub struct GenOptions {
    /// Probability of a cooperative-matrix kernel.
    pub coop: f64,
    /// Probability of a texture kernel.
    pub texture: f64,
    /// Probability of a planted mistake (oracle (a)'s failure path).
    pub mistake: f64,
    /// Probability that the kernel uses subgroup operations (where the target has them).
    pub subgroups: f64,
    /// Statements per kernel (at most).
    pub statements: i32,
}

impl Default for GenOptions {
    fn default() -> Self {
        GenOptions {
            coop: 0.02,
            texture: 0.02,
            mistake: 0.01,
            subgroups: 0.35,
            statements: 24,
        }
    }
}

fn bx(e: Expr) -> Box<Expr> {
    Box::new(e)
}
fn lu(v: u32) -> Expr {
    Expr::Lit(Lit::U32(v))
}
fn li(v: i32) -> Expr {
    Expr::Lit(Lit::I32(v))
}
/// The literal `v` of float scalar `s`.
pub fn lf(s: Scalar, v: f32) -> Expr {
    match s {
        Scalar::F16 => Expr::Lit(Lit::F16(half::f16::from_f32(v).to_bits())),
        _ => Expr::Lit(Lit::F32(v)),
    }
}
fn m(f: Fun, args: Vec<Expr>) -> Expr {
    Expr::Math(f, args)
}
fn bin(op: Bin, a: Expr, b: Expr) -> Expr {
    Expr::Bin(op, bx(a), bx(b))
}
/// `v` of the scalar type `s`, splat to `ty`'s width where `ty` is a vector (for `clamp`
/// bounds, which take the operand's type).
fn lit_like(ty: Ty, v: f64) -> Expr {
    let s = ty.scalar();
    let l = match s {
        Scalar::F32 | Scalar::F16 => lf(s, v as f32),
        Scalar::I32 => li(v as i32),
        Scalar::U32 => lu(v.max(0.0) as u32),
        Scalar::Bool => Expr::Lit(Lit::Bool(v != 0.0)),
    };
    match ty {
        Ty::V(_, n) => Expr::Splat(n, bx(l)),
        _ => l,
    }
}

fn float_ty(t: Ty) -> bool {
    t.is_sv() && t.scalar().is_float()
}

/// Generates one program.
#[derive(Debug)]
pub struct Gen<'p> {
    rng: ChaCha8Rng,
    next: Id,
    an: Analyzer<'p>,
    ctx: Ctx,
    slots: [u32; 4],
    budget: i32,
    exact: bool,
    twin: bool,
    own_atomic: u32,
    cas_used: bool,
}

/// Generate the program of `seed`.
pub fn generate(seed: u64, opts: &GenOptions, subgroups_available: bool) -> Program {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    if rng.random_bool(opts.coop) {
        return crate::coop::generate(seed, &mut rng);
    }
    if rng.random_bool(opts.texture) {
        return crate::texture::generate(seed, &mut rng);
    }
    let subgroups = subgroups_available && rng.random_bool(opts.subgroups);
    let workgroup = if subgroups {
        [[32, 1, 1], [64, 1, 1]][rng.random_range(0..2)]
    } else {
        [
            [1, 1, 1],
            [7, 1, 1],
            [16, 1, 1],
            [8, 4, 1],
            [4, 2, 3],
            [64, 1, 1],
            [3, 3, 3],
            [32, 1, 1],
        ][rng.random_range(0..8)]
    };
    let grid = [
        rng.random_range(1..=3),
        rng.random_range(1..=2),
        if rng.random_bool(0.2) { 2 } else { 1 },
    ];
    let inputs = inputs(&mut rng);
    let mut prog = Program {
        seed,
        workgroup,
        grid,
        subgroups,
        inputs,
        funcs: Vec::new(),
        body: Vec::new(),
        coop: None,
        texture: None,
    };
    let mut next = 0;
    for n in 0..rng.random_range(0..=3usize) {
        let snapshot = prog.clone();
        let mut g = Gen::new(&snapshot, rng.clone(), next);
        let f = g.func(n);
        rng = g.rng.clone();
        next = g.next;
        prog.funcs.push(f);
    }
    let snapshot = prog.clone();
    let mut g = Gen::new(&snapshot, rng, next);
    g.budget = opts.statements;
    let _ = g.an.funcs();
    let mut body = g.block(0);
    if g.rng.random_bool(opts.mistake) {
        let m = if g.rng.random_bool(0.5) {
            Mistake::RevStepRev
        } else {
            Mistake::ForeignCall
        };
        let at = g.rng.random_range(0..=body.len());
        body.insert(at, Stmt::Mistake(m));
    }
    if g.slots.iter().all(|&s| s == 0) {
        // Every kernel writes something.
        let e = g.expr(Ty::S(Scalar::U32), 2);
        body.push(Stmt::Out(Scalar::U32, g.slot(Scalar::U32), e));
    }
    prog.body = body;
    prog
}

fn inputs(rng: &mut ChaCha8Rng) -> Inputs {
    let len = |rng: &mut ChaCha8Rng| 2 * rng.random_range(2..20usize) + 1;
    let special_f = [
        0.0f32, 1.0, -1.0, 0.5, -0.5, 8.0, -8.0, 0.0625, -0.0, 2.0, 3.0,
    ];
    let floats = |rng: &mut ChaCha8Rng| -> Vec<f32> {
        (0..len(rng))
            .map(|_| {
                if rng.random_bool(0.3) {
                    special_f[rng.random_range(0..special_f.len())]
                } else {
                    rng.random_range(-128i32..=128) as f32 / 16.0
                }
            })
            .collect()
    };
    let f32s = floats(rng);
    let f16s = floats(rng)
        .into_iter()
        .map(|v| half::f16::from_f32(v).to_bits())
        .collect();
    let special_u = [
        0u32,
        1,
        2,
        31,
        32,
        0x7fff_ffff,
        0x8000_0000,
        u32::MAX,
        0xff,
        0x100,
    ];
    let ints = |rng: &mut ChaCha8Rng| -> Vec<u32> {
        (0..len(rng))
            .map(|_| match rng.random_range(0..4) {
                0 => special_u[rng.random_range(0..special_u.len())],
                1 => rng.random_range(0..16),
                _ => rng.random(),
            })
            .collect()
    };
    let i32s = ints(rng).into_iter().map(|v| v as i32).collect();
    let u32s = ints(rng);
    let param = if rng.random_bool(0.5) {
        rng.random_range(0..8)
    } else {
        rng.random()
    };
    Inputs {
        f32: f32s,
        i32: i32s,
        u32: u32s,
        f16: f16s,
        param,
    }
}

const SCALARS: [Scalar; 5] = Scalar::ALL;

impl<'p> Gen<'p> {
    fn new(prog: &'p Program, rng: ChaCha8Rng, next: Id) -> Self {
        Gen {
            rng,
            next,
            an: Analyzer::new(prog),
            ctx: Analyzer::entry_ctx(),
            slots: [0; 4],
            budget: 0,
            exact: false,
            twin: false,
            own_atomic: 0,
            cas_used: false,
        }
    }

    fn prog(&self) -> &'p Program {
        self.an.prog()
    }

    fn id(&mut self) -> Id {
        self.next += 1;
        self.next
    }

    fn chance(&mut self, p: f64) -> bool {
        self.rng.random_bool(p)
    }

    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.rng.random_range(0..xs.len())]
    }

    fn slot(&mut self, s: Scalar) -> u32 {
        let i = out_index(s);
        self.slots[i] += 1;
        self.slots[i] - 1
    }

    fn info(&mut self, e: &Expr) -> Option<Info> {
        self.an.expr(e, self.ctx).ok()
    }

    fn ok(&mut self, e: &Expr, ty: Ty) -> bool {
        let (exact, twin) = (self.exact, self.twin);
        match self.an.expr(e, self.ctx) {
            Ok(i) => i.ty == ty && (!exact || i.is_exact()) && (!twin || i.konst || is_twin(e)),
            Err(_) => false,
        }
    }

    fn rand_ty(&mut self) -> Ty {
        let s = self.pick(&SCALARS);
        match self.rng.random_range(0..10) {
            0..=4 => Ty::S(s),
            5..=8 => Ty::V(s, self.rng.random_range(2..=4)),
            _ => Ty::M(self.rng.random_range(2..=4)),
        }
    }

    fn rand_sv(&mut self) -> Ty {
        loop {
            let t = self.rand_ty();
            if t.is_sv() {
                return t;
            }
        }
    }

    /// An input element of scalar `s` at a literal index (exact, always valid).
    fn input_at(&mut self, s: Scalar) -> Expr {
        let len = match s {
            Scalar::F32 => self.prog().inputs.f32.len(),
            Scalar::I32 => self.prog().inputs.i32.len(),
            Scalar::U32 => self.prog().inputs.u32.len(),
            _ => self.prog().inputs.f16.len(),
        };
        let j = self.rng.random_range(0..len as u32);
        Expr::Input(s, bx(lu(j)))
    }

    /// `n` `let`s of random scalar or vector expressions, those the analysis accepts (which
    /// stay in scope).
    fn random_lets(&mut self, n: i32) -> Vec<Stmt> {
        let mut v = Vec::new();
        for _ in 0..n {
            let ty = self.rand_sv();
            let e = self.expr(ty, 2);
            let s = Stmt::Let(self.id(), e);
            if self.an.stmt(&s, self.ctx).is_ok() {
                v.push(s);
            }
        }
        v
    }

    /// An expression of `ty` the analysis always accepts.
    fn leaf(&mut self, ty: Ty) -> Expr {
        if !self.twin {
            // A value in scope that fits.
            let exact = self.exact;
            let fitting = |scope: &[(Id, Info)]| -> Vec<Id> {
                scope
                    .iter()
                    .filter(|(_, i)| i.ty == ty && (!exact || i.is_exact()))
                    .map(|(id, _)| *id)
                    .collect()
            };
            let values = fitting(self.an.values());
            if !values.is_empty() && self.chance(0.4) {
                return Expr::Value(self.pick(&values));
            }
            let vars = fitting(self.an.vars());
            if !vars.is_empty() && self.chance(0.4) {
                return Expr::Var(self.pick(&vars));
            }
        }
        match ty {
            Ty::S(Scalar::Bool) => {
                if self.chance(0.5) || self.twin {
                    Expr::Lit(Lit::Bool(self.chance(0.5)))
                } else {
                    let x = self.input_at(Scalar::U32);
                    Expr::Cmp(Cmp::Ne, bx(x), bx(lu(0)))
                }
            }
            Ty::S(s) => {
                if self.chance(0.15) && !self.twin {
                    return self.literal(s);
                }
                if !self.twin && self.chance(0.2) {
                    let i = self.index_expr();
                    return Expr::Input(s, bx(i));
                }
                self.input_at(s)
            }
            Ty::V(s, n) => {
                if self.chance(0.1) {
                    return Expr::Zero(ty);
                }
                if self.chance(0.4) {
                    let x = self.leaf(Ty::S(s));
                    Expr::Splat(n, bx(x))
                } else {
                    Expr::Compose((0..n).map(|_| self.leaf(Ty::S(s))).collect())
                }
            }
            Ty::M(n) => Expr::Compose((0..n).map(|_| self.leaf(Ty::V(Scalar::F32, n))).collect()),
        }
    }

    fn literal(&mut self, s: Scalar) -> Expr {
        Expr::Lit(match s {
            Scalar::Bool => Lit::Bool(self.chance(0.5)),
            Scalar::I32 => Lit::I32(self.pick(&[0, 1, -1, 2, 7, -8, i32::MIN, i32::MAX, 31, 1000])),
            Scalar::U32 => Lit::U32(self.pick(&[0, 1, 2, 3, 8, 31, u32::MAX, 0x8000_0000, 255])),
            Scalar::F32 => Lit::F32(self.pick(&[0.0, 1.0, -1.0, 0.5, 2.0, -0.0, 0.25, 3.0, -4.0])),
            Scalar::F16 => Lit::F16(
                half::f16::from_f32(self.pick(&[0.0, 1.0, -1.0, 0.5, 2.0, -2.0])).to_bits(),
            ),
        })
    }

    /// A `u32` index source (any value; used reduced).
    fn index_expr(&mut self) -> Expr {
        match self.rng.random_range(0..5) {
            0 if self.ctx.in_func.is_none() => Expr::Builtin(Builtin::LocalIndex),
            1 if self.ctx.in_func.is_none() => {
                Expr::Component(0, bx(Expr::Builtin(Builtin::GlobalId)))
            }
            2 => Expr::Param,
            _ => self.input_at(Scalar::U32),
        }
    }

    /// A `u32` in `[0, n)`: `x % n`.
    fn below(&mut self, n: u32, d: u32) -> Expr {
        let x = if d > 0 && !self.twin {
            self.expr(Ty::S(Scalar::U32), d - 1)
        } else {
            self.leaf(Ty::S(Scalar::U32))
        };
        bin(Bin::Rem, x, lu(n))
    }

    /// An expression of `ty`, at most `d` levels deep.
    pub fn expr(&mut self, ty: Ty, d: u32) -> Expr {
        if d > 0 && !self.chance(0.15) {
            for _ in 0..3 {
                let e = self.candidate(ty, d);
                if self.ok(&e, ty) {
                    return e;
                }
            }
        }
        let e = self.leaf(ty);
        if self.ok(&e, ty) {
            return e;
        }
        // Literal indices are always valid; the leaf may have met a scope or phase rule.
        match ty {
            Ty::S(Scalar::Bool) => Expr::Lit(Lit::Bool(true)),
            Ty::S(s) => self.input_at(s),
            Ty::V(s, n) => {
                let x = self.input_at(s);
                if s == Scalar::Bool {
                    return Expr::Zero(ty);
                }
                Expr::Splat(n, bx(x))
            }
            Ty::M(_) => Expr::Zero(ty),
        }
    }

    /// An exact expression of `ty` (for operations whose result jumps).
    fn exact_expr(&mut self, ty: Ty, d: u32) -> Expr {
        let saved = self.exact;
        self.exact = true;
        let e = self.expr(ty, d);
        self.exact = saved;
        e
    }

    fn sub(&mut self, ty: Ty, d: u32) -> Expr {
        self.expr(ty, d.saturating_sub(1))
    }

    fn candidate(&mut self, ty: Ty, d: u32) -> Expr {
        // Producers every type has.
        let r = self.rng.random_range(0..100);
        if r < 8 && ty.is_sv() {
            let vector = matches!(ty, Ty::V(..)) && self.chance(0.5);
            let c = if vector {
                self.sub(ty.with_scalar(Scalar::Bool), d)
            } else {
                self.sub(Ty::S(Scalar::Bool), d)
            };
            let a = self.sub(ty, d);
            let b = self.sub(ty, d);
            return Expr::Select(vector, Box::new([c, a, b]));
        }
        if r < 11 && ty.is_sv() {
            let elems = (0..4).map(|_| self.sub(ty, d)).collect();
            let i = self.below(4, d - 1);
            return Expr::ArrayPick(elems, bx(i));
        }
        if r < 16
            && let Ty::S(s) = ty
        {
            let n = self.rng.random_range(2..=4);
            let v = self.sub(Ty::V(s, n), d);
            return if self.chance(0.5) {
                Expr::Component(self.rng.random_range(0..n), bx(v))
            } else {
                let i = self.below(n as u32, d - 1);
                Expr::Index(bx(v), bx(i))
            };
        }
        if r < 22
            && let Ty::V(s, n) = ty
        {
            return match self.rng.random_range(0..4) {
                0 => Expr::Splat(n, bx(self.sub(Ty::S(s), d))),
                1 if n == 2 => {
                    let w = self.rng.random_range(2..=4);
                    Expr::Swizzle(2, bx(self.sub(Ty::V(s, w), d)))
                }
                1 if n == 3 => Expr::Swizzle(3, bx(self.sub(Ty::V(s, 4), d))),
                _ => Expr::Compose((0..n).map(|_| self.sub(Ty::S(s), d)).collect()),
            };
        }
        match ty {
            Ty::S(Scalar::Bool) | Ty::V(Scalar::Bool, _) => self.boolean(ty, d),
            Ty::M(n) => self.matrix(n, d),
            t if float_ty(t) => self.float(t, d),
            t => self.integer(t, d),
        }
    }

    fn boolean(&mut self, ty: Ty, d: u32) -> Expr {
        let n = ty.width();
        match self.rng.random_range(0..6) {
            0 | 1 => {
                let mut t = self.rand_sv();
                t = Ty::sv(t.scalar(), n);
                let ops = if t.scalar() == Scalar::Bool {
                    vec![Cmp::Eq, Cmp::Ne]
                } else {
                    vec![Cmp::Lt, Cmp::Le, Cmp::Gt, Cmp::Ge, Cmp::Eq, Cmp::Ne]
                };
                let op = self.pick(&ops);
                let a = self.exact_expr(t, d - 1);
                let b = self.exact_expr(t, d - 1);
                Expr::Cmp(op, bx(a), bx(b))
            }
            2 if n == 1 => {
                let a = self.sub(ty, d);
                let b = self.sub(ty, d);
                Expr::Logic(self.chance(0.5), bx(a), bx(b))
            }
            3 if n == 1 => {
                if self.chance(0.5) {
                    Expr::Un(Un::Not, bx(self.sub(ty, d)))
                } else {
                    let w = self.rng.random_range(2..=4);
                    Expr::AnyAll(self.chance(0.5), bx(self.sub(Ty::V(Scalar::Bool, w), d)))
                }
            }
            _ => {
                let s = self.pick(&[Scalar::I32, Scalar::U32, Scalar::F32, Scalar::F16]);
                let a = self.exact_expr(Ty::sv(s, n), d - 1);
                Expr::Conv(Conv::To(Scalar::Bool), bx(a))
            }
        }
    }

    fn matrix(&mut self, n: u8, d: u32) -> Expr {
        let t = Ty::M(n);
        match self.rng.random_range(0..5) {
            0 => Expr::Compose((0..n).map(|_| self.sub(Ty::V(Scalar::F32, n), d)).collect()),
            1 => {
                let op = self.pick(&[Bin::Add, Bin::Sub, Bin::Mul]);
                bin(op, self.sub(t, d), self.sub(t, d))
            }
            2 => {
                let s = self.sub(Ty::S(Scalar::F32), d);
                if self.chance(0.5) {
                    bin(Bin::Mul, self.sub(t, d), s)
                } else {
                    bin(Bin::Mul, s, self.sub(t, d))
                }
            }
            _ => m(Fun::Transpose, vec![self.sub(t, d)]),
        }
    }

    /// A float operand reconditioned into `fun`'s domain.
    fn domain(&mut self, fun: Fun, t: Ty, d: u32) -> Expr {
        let x = self.sub(t, d);
        let lit = |v: f64| lit_like(t, v);
        let pos = |x: Expr, c: f64| bin(Bin::Add, m(Fun::Abs, vec![x]), lit_like(t, c));
        match fun {
            Fun::Log | Fun::Log2 | Fun::Sqrt | Fun::InverseSqrt => pos(x, 0.5),
            Fun::Acosh => pos(x, 1.5),
            Fun::Asinh => m(Fun::Abs, vec![x]),
            Fun::Exp | Fun::Exp2 | Fun::Sinh | Fun::Cosh | Fun::Tanh => {
                m(Fun::Clamp, vec![x, lit(-4.0), lit(4.0)])
            }
            Fun::Sin | Fun::Cos => m(Fun::Clamp, vec![x, lit(-3.0), lit(3.0)]),
            Fun::Tan => m(Fun::Clamp, vec![x, lit(-1.0), lit(1.0)]),
            Fun::Asin | Fun::Acos | Fun::Atanh => m(Fun::Clamp, vec![x, lit(-0.75), lit(0.75)]),
            _ => x,
        }
    }

    fn float(&mut self, t: Ty, d: u32) -> Expr {
        let s = t.scalar();
        let n = t.width();
        use Fun::*;
        match self.rng.random_range(0..32) {
            0..=5 => {
                let op = self.pick(&[Bin::Add, Bin::Sub, Bin::Mul, Bin::Mul]);
                if let Ty::V(..) = t
                    && self.chance(0.3)
                {
                    let sc = self.sub(Ty::S(s), d);
                    let v = self.sub(t, d);
                    return if self.chance(0.5) {
                        bin(op, v, sc)
                    } else {
                        bin(op, sc, v)
                    };
                }
                let a = self.sub(t, d);
                if op == Bin::Mul && self.chance(0.2) {
                    return bin(op, a.clone(), a);
                }
                bin(op, a, self.sub(t, d))
            }
            6 => {
                let a = self.sub(t, d);
                let b = self.sub(t, d);
                let div = bin(Bin::Add, m(Abs, vec![b]), lit_like(t, 0.5));
                bin(self.pick(&[Bin::Div, Bin::Rem]), a, div)
            }
            7 => Expr::Un(Un::Neg, bx(self.sub(t, d))),
            8..=11 => {
                let f = self.pick(&[
                    Exp,
                    Exp2,
                    Log,
                    Log2,
                    Sqrt,
                    InverseSqrt,
                    Sin,
                    Cos,
                    Tan,
                    Asin,
                    Acos,
                    Atan,
                    Sinh,
                    Cosh,
                    Tanh,
                    Asinh,
                    Acosh,
                    Atanh,
                    Saturate,
                    Radians,
                    Degrees,
                    Abs,
                ]);
                let x = self.domain(f, t, d);
                m(f, vec![x])
            }
            12 => {
                let f = self.pick(&[Floor, Ceil, Round, Trunc, Fract, Sign]);
                m(f, vec![self.exact_expr(t, d - 1)])
            }
            13 => {
                let f = self.pick(&[Min, Max]);
                m(f, vec![self.sub(t, d), self.sub(t, d)])
            }
            14 => {
                let lo = self.rng.random_range(-8i32..=0) as f64;
                let hi = lo + self.rng.random_range(0..=8) as f64;
                m(
                    Clamp,
                    vec![self.sub(t, d), lit_like(t, lo), lit_like(t, hi)],
                )
            }
            15 => {
                let base = self.domain(Log2, t, d);
                let e = m(
                    Clamp,
                    vec![self.sub(t, d), lit_like(t, -3.0), lit_like(t, 3.0)],
                );
                m(Pow, vec![base, e])
            }
            16 => {
                let y = self.sub(t, d);
                let x = self.domain(Log, t, d);
                m(Atan2, vec![y, x])
            }
            17 => m(
                Step,
                vec![self.exact_expr(t, d - 1), self.exact_expr(t, d - 1)],
            ),
            18 => {
                let tt = m(Saturate, vec![self.sub(t, d)]);
                m(Mix, vec![self.sub(t, d), self.sub(t, d), tt])
            }
            19 => m(Fma, vec![self.sub(t, d), self.sub(t, d), self.sub(t, d)]),
            20 => {
                let lo = self.rng.random_range(-4i32..=0) as f64;
                let hi = lo + self.rng.random_range(1..=4) as f64;
                m(
                    Smoothstep,
                    vec![lit_like(t, lo), lit_like(t, hi), self.sub(t, d)],
                )
            }
            21 => {
                if self.chance(0.5) {
                    m(Square, vec![self.sub(t, d)])
                } else {
                    m(Powi(self.rng.random_range(1..=3)), vec![self.sub(t, d)])
                }
            }
            22 if n > 1 => {
                let v = Ty::V(s, n);
                match self.rng.random_range(0..4) {
                    0 => m(Normalize, vec![self.domain(Log, v, d)]),
                    1 => m(Reflect, vec![self.sub(v, d), self.sub(v, d)]),
                    2 => {
                        let e3 = m(Clamp, vec![self.sub(Ty::S(s), d), lf(s, -0.5), lf(s, 0.5)]);
                        m(Refract, vec![self.sub(v, d), self.sub(v, d), e3])
                    }
                    _ => m(
                        FaceForward,
                        vec![
                            self.sub(v, d),
                            self.exact_expr(v, d - 1),
                            self.exact_expr(v, d - 1),
                        ],
                    ),
                }
            }
            22 | 23 => {
                let w = self.rng.random_range(2..=4);
                let v = Ty::V(s, w);
                match self.rng.random_range(0..4) {
                    0 => {
                        let lt = if self.chance(0.2) { t } else { v };
                        m(Length, vec![self.sub(lt, d)])
                    }
                    1 => m(Distance, vec![self.sub(v, d), self.sub(v, d)]),
                    2 => m(Dot, vec![self.sub(v, d), self.sub(v, d)]),
                    _ if s == Scalar::F32 => m(Determinant, vec![self.sub(Ty::M(w), d)]),
                    _ => m(Dot, vec![self.sub(v, d), self.sub(v, d)]),
                }
            }
            24 if s == Scalar::F32 && n > 1 => {
                let mt = self.sub(Ty::M(n), d);
                let v = self.sub(t, d);
                if self.chance(0.5) {
                    bin(Bin::Mul, mt, v)
                } else {
                    bin(Bin::Mul, v, mt)
                }
            }
            24 if t == Ty::V(Scalar::F32, 3) => m(Cross, vec![self.sub(t, d), self.sub(t, d)]),
            24 | 25 => {
                // Conversions into this float type.
                match self.rng.random_range(0..4) {
                    0 => {
                        let u = self.sub(t.with_scalar(Scalar::U32), d);
                        let mask = lit_like(t.with_scalar(Scalar::U32), 1023.0);
                        Expr::Conv(Conv::To(s), bx(bin(Bin::And, u, mask)))
                    }
                    1 => {
                        let i = self.sub(t.with_scalar(Scalar::I32), d);
                        let it = t.with_scalar(Scalar::I32);
                        let c = m(Clamp, vec![i, lit_like(it, -1000.0), lit_like(it, 1000.0)]);
                        Expr::Conv(Conv::To(s), bx(c))
                    }
                    2 => Expr::Conv(Conv::To(s), bx(self.sub(t.with_scalar(Scalar::Bool), d))),
                    _ => {
                        let other = if s == Scalar::F32 {
                            Scalar::F16
                        } else {
                            Scalar::F32
                        };
                        let ot = t.with_scalar(other);
                        let x = self.sub(ot, d);
                        let x = m(Clamp, vec![x, lit_like(ot, -1000.0), lit_like(ot, 1000.0)]);
                        Expr::Conv(Conv::To(s), bx(x))
                    }
                }
            }
            26 if s == Scalar::F32 => {
                let ut = t.with_scalar(Scalar::U32);
                let u = self.sub(ut, d);
                let bits = bin(
                    Bin::Or,
                    bin(Bin::And, u, lit_like(ut, f64::from(0x007f_ffffu32))),
                    lit_like(ut, f64::from(0x3f80_0000u32)),
                );
                Expr::Conv(Conv::Bitcast(t), bx(bits))
            }
            27 if s == Scalar::F32 && (n == 4 || n == 2) => {
                let u = self.sub(Ty::S(Scalar::U32), d);
                let f = match (n, self.rng.random_range(0..3)) {
                    (4, 0) => Unpack4x8snorm,
                    (4, _) => Unpack4x8unorm,
                    (_, 0) => Unpack2x16snorm,
                    (_, 1) => Unpack2x16unorm,
                    _ => {
                        let x = bin(Bin::Or, bin(Bin::And, u, lu(0x3bff_3bff)), lu(0x0400_0400));
                        return m(Unpack2x16float, vec![x]);
                    }
                };
                m(f, vec![u])
            }
            28 if s == Scalar::F32 => {
                let x = m(
                    Clamp,
                    vec![self.sub(t, d), lit_like(t, -1000.0), lit_like(t, 1000.0)],
                );
                m(QuantizeToF16, vec![x])
            }
            29 => {
                let it = t.with_scalar(Scalar::I32);
                let e = m(
                    Clamp,
                    vec![self.sub(it, d), lit_like(it, -4.0), lit_like(it, 4.0)],
                );
                m(Ldexp, vec![self.sub(t, d), e])
            }
            30 => {
                let part = self.pick(&[Part::ModfFract, Part::ModfWhole, Part::FrexpFract]);
                Expr::Split(part, bx(self.exact_expr(t, d - 1)))
            }
            _ => self.leaf(t),
        }
    }

    fn integer(&mut self, t: Ty, d: u32) -> Expr {
        let s = t.scalar();
        let n = t.width();
        let ut = t.with_scalar(Scalar::U32);
        use Fun::*;
        match self.rng.random_range(0..30) {
            0..=4 => {
                let op = self.pick(&[Bin::Add, Bin::Sub, Bin::Mul, Bin::Div, Bin::Rem]);
                let a = self.sub(t, d);
                let mut b = self.sub(t, d);
                if matches!(op, Bin::Div | Bin::Rem) && self.chance(0.5) {
                    // A literal divisor must not be 0 (a build error); others may be.
                    b = lit_like(t, f64::from(self.rng.random_range(1..=7)));
                }
                if let Ty::V(..) = t
                    && self.chance(0.3)
                {
                    let sc = self.sub(Ty::S(s), d);
                    return bin(op, a, sc);
                }
                bin(op, a, b)
            }
            5..=7 => {
                let op = self.pick(&[Bin::And, Bin::Or, Bin::Xor]);
                bin(op, self.sub(t, d), self.sub(t, d))
            }
            8 | 9 => {
                let op = self.pick(&[Bin::Shl, Bin::Shr]);
                let amount = if self.chance(0.5) {
                    lit_like(ut, f64::from(self.rng.random_range(0..32)))
                } else {
                    self.sub(ut, d)
                };
                bin(op, self.sub(t, d), amount)
            }
            10 if s == Scalar::I32 => Expr::Un(Un::Neg, bx(self.sub(t, d))),
            10 if n == 1 => Expr::Un(Un::BitNot, bx(self.sub(t, d))),
            11 => {
                let f = self.pick(&[
                    CountOneBits,
                    CountLeadingZeros,
                    CountTrailingZeros,
                    FirstLeadingBit,
                    FirstTrailingBit,
                    ReverseBits,
                    Abs,
                ]);
                m(f, vec![self.sub(t, d)])
            }
            12 => {
                let f = self.pick(&[Min, Max, Square, Powi(3)]);
                match f {
                    Min | Max => m(f, vec![self.sub(t, d), self.sub(t, d)]),
                    _ => m(f, vec![self.sub(t, d)]),
                }
            }
            13 => {
                let lo = self.rng.random_range(0..10) as f64;
                let hi = lo + self.rng.random_range(0..10) as f64;
                m(
                    Clamp,
                    vec![self.sub(t, d), lit_like(t, lo), lit_like(t, hi)],
                )
            }
            14 => {
                let (o, c) = if self.chance(0.6) {
                    let o = self.rng.random_range(0..32);
                    (lu(o), lu(self.rng.random_range(0..=32 - o)))
                } else {
                    (
                        self.sub(Ty::S(Scalar::U32), d),
                        self.sub(Ty::S(Scalar::U32), d),
                    )
                };
                if self.chance(0.5) {
                    m(ExtractBits, vec![self.sub(t, d), o, c])
                } else {
                    m(InsertBits, vec![self.sub(t, d), self.sub(t, d), o, c])
                }
            }
            15 if s == Scalar::I32 && n == 1 => m(Sign, vec![self.sub(t, d)]),
            15 | 16 => {
                // Conversions into this integer type.
                let ft = t.with_scalar(self.pick(&[Scalar::F32, Scalar::F16]));
                match self.rng.random_range(0..4) {
                    0 => {
                        let x = self.exact_expr(ft, d - 1);
                        let lo = if s == Scalar::U32 { 0.0 } else { -1000.0 };
                        let x = m(Clamp, vec![x, lit_like(ft, lo), lit_like(ft, 1000.0)]);
                        Expr::Conv(Conv::To(s), bx(x))
                    }
                    1 => Expr::Conv(Conv::To(s), bx(self.sub(t.with_scalar(Scalar::Bool), d))),
                    2 => {
                        let other = if s == Scalar::I32 {
                            Scalar::U32
                        } else {
                            Scalar::I32
                        };
                        Expr::Conv(Conv::To(s), bx(self.sub(t.with_scalar(other), d)))
                    }
                    _ => {
                        let other = if s == Scalar::I32 {
                            Scalar::U32
                        } else {
                            Scalar::I32
                        };
                        Expr::Conv(Conv::Bitcast(t), bx(self.sub(t.with_scalar(other), d)))
                    }
                }
            }
            17 => {
                // A bitcast of an exact float away from zero.
                let ft = t.with_scalar(Scalar::F32);
                let x = self.exact_expr(ft, d - 1);
                let x = bin(Bin::Add, m(Abs, vec![x]), lit_like(ft, 1.0));
                Expr::Conv(Conv::Bitcast(t), bx(x))
            }
            18 if n == 1 => {
                let x = self.exact_expr(Ty::S(Scalar::F32), d - 1);
                Expr::Conv(Conv::Saturating(s), bx(x))
            }
            19 if t == Ty::S(Scalar::U32) => {
                let f = self.pick(&[
                    Pack4x8snorm,
                    Pack4x8unorm,
                    Pack2x16snorm,
                    Pack2x16unorm,
                    Pack2x16float,
                    Pack4xI8,
                    Pack4xU8,
                    Pack4xI8Clamp,
                    Pack4xU8Clamp,
                    Dot4U8Packed,
                ]);
                let arg = match f {
                    Pack4x8snorm | Pack4x8unorm => self.exact_expr(Ty::V(Scalar::F32, 4), d - 1),
                    Pack2x16snorm | Pack2x16unorm => self.exact_expr(Ty::V(Scalar::F32, 2), d - 1),
                    Pack2x16float => {
                        let v = Ty::V(Scalar::F32, 2);
                        let x = self.exact_expr(v, d - 1);
                        let x = m(Clamp, vec![x, lit_like(v, -8.0), lit_like(v, 8.0)]);
                        bin(Bin::Add, m(Abs, vec![x]), lit_like(v, 0.5))
                    }
                    Pack4xI8 | Pack4xI8Clamp => self.sub(Ty::V(Scalar::I32, 4), d),
                    Dot4U8Packed => {
                        return m(f, vec![self.sub(t, d), self.sub(t, d)]);
                    }
                    _ => self.sub(Ty::V(Scalar::U32, 4), d),
                };
                m(f, vec![arg])
            }
            19 if t == Ty::S(Scalar::I32) => {
                m(Dot4I8Packed, vec![self.sub(ut, d), self.sub(ut, d)])
            }
            20 if n == 4 => {
                let f = if s == Scalar::I32 {
                    Unpack4xI8
                } else {
                    Unpack4xU8
                };
                m(f, vec![self.sub(Ty::S(Scalar::U32), d)])
            }
            21 if s == Scalar::I32 => Expr::Split(
                Part::FrexpExp,
                bx(self.exact_expr(t.with_scalar(Scalar::F32), d - 1)),
            ),
            22 if n == 1 => {
                let w = self.rng.random_range(2..=4);
                m(
                    Dot,
                    vec![self.sub(Ty::V(s, w), d), self.sub(Ty::V(s, w), d)],
                )
            }
            23 if t == Ty::S(Scalar::U32) && !self.twin => match self.rng.random_range(0..6) {
                0 => Expr::Param,
                1 if self.ctx.in_func.is_none() => Expr::Builtin(Builtin::LocalIndex),
                2 if self.ctx.in_func.is_none() && self.prog().subgroups => {
                    Expr::Builtin(self.pick(&[Builtin::SubgroupSize, Builtin::SubgroupId]))
                }
                3 if self.ctx.in_func.is_none() && self.ctx.phase == Phase::Read => {
                    if self.chance(0.7) {
                        let inv = self.prog().invocations();
                        Expr::Wg(bx(self.below(inv, d - 1)))
                    } else {
                        Expr::WgAtomic
                    }
                }
                3 if self.ctx.in_func.is_none() => Expr::Wg(bx(Expr::Builtin(Builtin::LocalIndex))),
                _ => {
                    let i = self.index_expr();
                    Expr::Input(Scalar::U32, bx(i))
                }
            },
            24 if t == Ty::V(Scalar::U32, 3) && self.ctx.in_func.is_none() && !self.twin => {
                Expr::Builtin(self.pick(&[
                    Builtin::GlobalId,
                    Builtin::LocalId,
                    Builtin::WorkgroupId,
                    Builtin::NumWorkgroups,
                ]))
            }
            _ => self.leaf(t),
        }
    }

    // ---- statements ----

    fn with_ctx<R>(&mut self, ctx: Ctx, f: impl FnOnce(&mut Self) -> R) -> R {
        let saved = self.ctx;
        let mark = self.an.mark();
        let slots = self.slots;
        self.ctx = ctx;
        let r = f(self);
        self.ctx = saved;
        self.an.restore(&mark);
        // Slots allocated inside stay allocated (they are in the statement).
        let _ = slots;
        r
    }

    fn block(&mut self, depth: u32) -> Vec<Stmt> {
        let start_phase = self.ctx.phase;
        let n = if depth == 0 {
            self.budget
        } else {
            self.rng.random_range(1..=4)
        };
        let mut out = Vec::new();
        for _ in 0..n {
            if self.budget <= 0 {
                break;
            }
            if let Some(s) = self.stmt(depth) {
                out.extend(s);
            }
        }
        if self.ctx.in_loop && depth > 0 && self.ctx.phase != start_phase {
            // A loop body ends in the phase it began in.
            let b = Stmt::Barrier(true);
            if let Ok((_, p)) = self.an.stmt(&b, self.ctx) {
                self.ctx.phase = p;
                out.push(b);
            }
        }
        out
    }

    /// Check and commit statements (their effects on scopes and the phase).
    fn commit(&mut self, stmts: Vec<Stmt>) -> Option<Vec<Stmt>> {
        let mark = self.an.mark();
        let ctx = self.ctx;
        for s in &stmts {
            match self.an.stmt(s, self.ctx) {
                Ok((diverged, phase)) => {
                    self.ctx.phase = phase;
                    if diverged {
                        self.ctx.uniform_cf = false;
                    }
                }
                Err(_) => {
                    self.an.restore(&mark);
                    self.ctx = ctx;
                    return None;
                }
            }
        }
        self.budget -= stmts.len() as i32;
        Some(stmts)
    }

    fn stmt(&mut self, depth: u32) -> Option<Vec<Stmt>> {
        for _ in 0..3 {
            let c = self.candidate_stmt(depth);
            if let Some(c) = c
                && let Some(s) = self.commit(c)
            {
                return Some(s);
            }
        }
        None
    }

    fn candidate_stmt(&mut self, depth: u32) -> Option<Vec<Stmt>> {
        let entry = self.ctx.in_func.is_none();
        let r = self.rng.random_range(0..100);
        let nested = depth < 2;
        Some(match r {
            0..=14 => {
                let t = self.rand_ty();
                let e = self.expr(t, 3);
                vec![Stmt::Let(self.id(), e)]
            }
            15..=34 if entry => self.outputs(),
            35..=41 => self.var(),
            42..=47 => self.assign()?,
            48..=55 if nested => {
                let c = self.expr(Ty::S(Scalar::Bool), 2);
                let ci = self.info(&c)?;
                let inner = Ctx {
                    uniform_cf: self.ctx.uniform_cf && ci.uniform,
                    ..self.ctx
                };
                let a = self.with_ctx(inner, |g| g.block(depth + 1));
                let b = if self.chance(0.5) {
                    self.with_ctx(inner, |g| g.block(depth + 1))
                } else {
                    Vec::new()
                };
                vec![Stmt::If(c, a, b)]
            }
            56..=59 if nested => self.if_value(depth)?,
            60..=67 if nested && entry => self.counted_loop(depth)?,
            68..=70 if nested && entry => self.switch(depth)?,
            71..=73 if self.ctx.in_loop => {
                let c = self.expr(Ty::S(Scalar::Bool), 2);
                let s = if self.chance(0.5) {
                    Stmt::Break
                } else {
                    Stmt::Continue
                };
                vec![Stmt::If(c, vec![s], Vec::new())]
            }
            74..=77 if entry && self.ctx.uniform_cf => {
                vec![Stmt::Barrier(self.chance(0.85))]
            }
            78..=80 if entry && self.ctx.phase == Phase::Own => {
                vec![Stmt::WgStore(self.expr(Ty::S(Scalar::U32), 2))]
            }
            81 if entry && self.ctx.uniform_cf => {
                let i = self.rng.random_range(0..self.prog().invocations());
                vec![Stmt::WgUniformLoad(self.id(), i)]
            }
            82..=85 if entry && !self.prog().funcs.is_empty() => self.call()?,
            86..=90 if entry => self.atomic()?,
            91..=97 if entry && self.prog().subgroups && self.ctx.uniform_cf => self.subgroup()?,
            _ => {
                let t = self.rand_sv();
                let e = self.expr(t, 2);
                vec![Stmt::Let(self.id(), e)]
            }
        })
    }

    fn outputs(&mut self) -> Vec<Stmt> {
        let r = self.rng.random_range(0..10);
        if r < 2 {
            // Oracle (d): a constant tree, and its twin loading the same values.
            let s = self.pick(&[
                Scalar::I32,
                Scalar::U32,
                Scalar::F32,
                Scalar::F16,
                Scalar::Bool,
            ]);
            let saved = self.twin;
            self.twin = true;
            let loaded = self.expr(Ty::S(s), 3);
            self.twin = saved;
            let literal = self.literal_twin(&loaded);
            if self.info(&literal).is_some() && literal != loaded {
                let a = self.slot(s);
                let b = self.slot(s);
                return vec![Stmt::Out(s, a, literal), Stmt::Out(s, b, loaded)];
            }
            let a = self.slot(s);
            return vec![Stmt::Out(s, a, loaded)];
        }
        let t = self.rand_sv();
        let e = self.expr(t, 4);
        match t {
            Ty::S(s) => vec![Stmt::Out(s, self.slot(s), e)],
            Ty::V(s, n) => {
                let id = self.id();
                let mut v = vec![Stmt::Let(id, e)];
                for i in 0..n {
                    let slot = self.slot(s);
                    v.push(Stmt::Out(s, slot, Expr::Component(i, bx(Expr::Value(id)))));
                }
                v
            }
            Ty::M(_) => Vec::new(),
        }
    }

    /// `e` with every input element at a literal index replaced by its value.
    fn literal_twin(&self, e: &Expr) -> Expr {
        let ins = &self.prog().inputs;
        let mut e = e.clone();
        replace(&mut e, &mut |x| {
            if let Expr::Input(s, i) = x
                && let Expr::Lit(Lit::U32(j)) = **i
            {
                let j = j as usize;
                *x = Expr::Lit(match s {
                    Scalar::F32 => Lit::F32(ins.f32[j % ins.f32.len()]),
                    Scalar::I32 => Lit::I32(ins.i32[j % ins.i32.len()]),
                    Scalar::U32 => Lit::U32(ins.u32[j % ins.u32.len()]),
                    _ => Lit::F16(ins.f16.get(j).copied().unwrap_or(0)),
                });
            }
        });
        e
    }

    fn contract_for(&mut self, init: &Info) -> Contract {
        let uniform = init.uniform && self.ctx.uniform_cf && self.chance(0.5);
        let num = match init.num {
            Num::Float(f) => {
                let r = f.mag().max(8.0).log2().ceil().exp2();
                let fmt = crate::accuracy::Fmt::of(init.ty.scalar());
                if f.is_exact() && r < 2f64.powi(fmt.precision - 8) {
                    Num::Float(F::exact_range(-r, r, f.grid.min(-4)))
                } else {
                    Num::Float(F {
                        lo: -r,
                        hi: r,
                        err: f.err.max(r * 2f64.powi(-10)),
                        grid: 0,
                        nonneg: false,
                    })
                }
            }
            Num::Int { .. } => full(init.ty.scalar()),
            Num::Bool => Num::Bool,
        };
        Info {
            ty: init.ty,
            num,
            konst: false,
            uniform,
        }
    }

    fn var(&mut self) -> Vec<Stmt> {
        let t = self.rand_ty();
        let e = self.expr(t, 3);
        let Some(i) = self.info(&e) else {
            return Vec::new();
        };
        let c = self.contract_for(&i);
        let id = self.id();
        match self.rng.random_range(0..5) {
            0 => vec![Stmt::Var(id, c, VarInit::Zero)],
            1 => vec![Stmt::Var(id, c, VarInit::Declared), Stmt::Assign(id, e)],
            _ => vec![Stmt::Var(id, c, VarInit::Value(e))],
        }
    }

    fn assign(&mut self) -> Option<Vec<Stmt>> {
        let vars: Vec<(Id, Contract)> = self.an.vars().to_vec();
        if vars.is_empty() {
            return None;
        }
        let (id, c) = vars[self.rng.random_range(0..vars.len())];
        let t = c.ty;
        if let Num::Int { .. } = c.num
            && self.chance(0.4)
        {
            let op = self.pick(&[Bin::Add, Bin::Sub, Bin::Mul, Bin::Xor, Bin::Or, Bin::And]);
            return Some(vec![Stmt::Update(id, op, self.expr(t, 2))]);
        }
        let saved = self.exact;
        self.exact = c.float().is_some_and(|f| f.is_exact());
        let mut e = self.expr(t, 3);
        self.exact = saved;
        if let Some(f) = c.float()
            && t.is_sv()
        {
            e = m(Fun::Clamp, vec![e, lit_like(t, f.lo), lit_like(t, f.hi)]);
        }
        Some(vec![Stmt::Assign(id, e)])
    }

    fn if_value(&mut self, depth: u32) -> Option<Vec<Stmt>> {
        let t = self.rand_ty();
        let c = self.expr(Ty::S(Scalar::Bool), 2);
        let ci = self.info(&c)?;
        let inner = Ctx {
            uniform_cf: self.ctx.uniform_cf && ci.uniform,
            ..self.ctx
        };
        let arm = |g: &mut Self| {
            g.with_ctx(inner, |g| {
                let stmts = if g.chance(0.5) {
                    let n = g.rng.random_range(1..=2);
                    g.random_lets(n)
                } else {
                    Vec::new()
                };
                let _ = depth;
                let e = g.expr(t, 3);
                (stmts, e)
            })
        };
        let a = arm(self);
        let b = arm(self);
        Some(vec![Stmt::IfValue(self.id(), t, c, a, b)])
    }

    fn loop_end(&mut self, s: Scalar, start: i32, trips: i32, inclusive: bool) -> Expr {
        let hi = start + trips;
        let lit = |v: i32| {
            if s == Scalar::I32 {
                li(v)
            } else {
                lu(v as u32)
            }
        };
        if self.chance(0.4) {
            return lit(hi);
        }
        let x = match self.rng.random_range(0..3) {
            0 if s == Scalar::U32 => Expr::Param,
            1 if self.ctx.in_func.is_none() && s == Scalar::U32 => {
                Expr::Builtin(Builtin::LocalIndex)
            }
            _ => self.input_at(s),
        };
        let lo = if inclusive { start + 1 } else { start };
        m(Fun::Clamp, vec![x, lit(lo), lit(hi)])
    }

    fn counted_loop(&mut self, depth: u32) -> Option<Vec<Stmt>> {
        let scalar = self.pick(&[Scalar::I32, Scalar::U32]);
        let start = if scalar == Scalar::I32 {
            self.rng.random_range(-3..=2)
        } else {
            self.rng.random_range(0..=2)
        };
        let trips = self.rng.random_range(1..=4);
        let form = match self.rng.random_range(0..6) {
            0 => LoopForm::Range,
            1 => LoopForm::Step(self.rng.random_range(1..=3)),
            2 => LoopForm::InclusiveIn {
                rev: self.chance(0.5),
                step: self.chance(0.5).then(|| self.rng.random_range(1..=3)),
            },
            3 => LoopForm::RevIn,
            4 => LoopForm::While,
            _ => LoopForm::Loop,
        };
        let inclusive = matches!(form, LoopForm::InclusiveIn { .. });
        let end = self.loop_end(scalar, start, trips, inclusive);
        let ei = self.info(&end)?;
        let counter = self.id();
        let (lo, hi) = ei.range()?;
        let cinfo = Info {
            ty: Ty::S(scalar),
            num: Num::Int {
                lo: i64::from(start).min(hi - 1),
                hi: (hi - 1).max(i64::from(start)),
            },
            konst: false,
            uniform: ei.uniform && self.ctx.uniform_cf,
        };
        let _ = lo;
        let inner = Ctx {
            in_loop: true,
            uniform_cf: self.ctx.uniform_cf && ei.uniform,
            ..self.ctx
        };
        let body = self.with_ctx(inner, |g| {
            g.an.push_value(counter, cinfo);
            g.block(depth + 1)
        });
        Some(vec![Stmt::Loop(CountedLoop {
            counter,
            scalar,
            start,
            end,
            form,
            body,
        })])
    }

    fn switch(&mut self, depth: u32) -> Option<Vec<Stmt>> {
        let (sel, values): (Expr, Vec<i32>) = if self.chance(0.5) {
            let m_ = self.rng.random_range(2..=6);
            (self.below(m_, 2), (0..m_ as i32).collect())
        } else {
            let x = self.expr(Ty::S(Scalar::I32), 2);
            (m(Fun::Clamp, vec![x, li(-2), li(4)]), (-2..=4).collect())
        };
        let si = self.info(&sel)?;
        let inner = Ctx {
            uniform_cf: self.ctx.uniform_cf && si.uniform,
            ..self.ctx
        };
        let mut pool = values;
        let mut arms = Vec::new();
        for _ in 0..self.rng.random_range(1..=3) {
            if pool.is_empty() {
                break;
            }
            let k = self.rng.random_range(1..=2.min(pool.len()));
            let vals: Vec<i32> = (0..k)
                .map(|_| pool.swap_remove(self.rng.random_range(0..pool.len())))
                .collect();
            let body = self.with_ctx(inner, |g| g.block(depth + 1));
            arms.push((vals, body));
        }
        let default = self
            .chance(0.6)
            .then(|| self.with_ctx(inner, |g| g.block(depth + 1)));
        Some(vec![Stmt::Switch(sel, arms, default)])
    }

    fn call(&mut self) -> Option<Vec<Stmt>> {
        let n = self.rng.random_range(0..self.prog().funcs.len());
        let f = self.prog().funcs[n].clone();
        let args = f
            .params
            .iter()
            .map(|_| {
                let saved = self.exact;
                self.exact = f.contract.is_exact();
                let mut e = self.expr(f.ty, 2);
                self.exact = saved;
                if let Some(c) = f.contract.float() {
                    e = m(
                        Fun::Clamp,
                        vec![e, lit_like(f.ty, c.lo), lit_like(f.ty, c.hi)],
                    );
                    if self.info(&e).is_none_or(|i| {
                        !i.fits(&Info {
                            uniform: false,
                            ..f.contract
                        })
                    }) {
                        e = self.leaf_in(f.ty, c);
                    }
                }
                e
            })
            .collect();
        Some(vec![Stmt::Call(self.id(), n, args)])
    }

    /// A value inside a float contract: an input element (multiples of 1/16 in [-8, 8]).
    fn leaf_in(&mut self, ty: Ty, _c: F) -> Expr {
        let x = self.input_at(ty.scalar());
        match ty {
            Ty::V(_, n) => Expr::Splat(n, bx(x)),
            _ => x,
        }
    }

    fn atomic(&mut self) -> Option<Vec<Stmt>> {
        /// The integer read-modify-write operations.
        const INT_RMW: [AtomicOp; 7] = [
            AtomicOp::Add,
            AtomicOp::Sub,
            AtomicOp::Min,
            AtomicOp::Max,
            AtomicOp::And,
            AtomicOp::Or,
            AtomicOp::Xor,
        ];
        let u = Ty::S(Scalar::U32);
        let value = self.expr(u, 2);
        let r = self.rng.random_range(0..10);
        Some(vec![match r {
            0..=3 => {
                let slot = self.rng.random_range(0..CAS_SLOT);
                self.own_atomic = self.own_atomic.max(slot + 1);
                let op =
                    self.pick(&[&INT_RMW[..], &[AtomicOp::Exchange, AtomicOp::Store]].concat());
                if op == AtomicOp::Add && self.rng.random_range(0..3) == 0 {
                    self.own_atomic = self.own_atomic.max(F32_SLOT + 1);
                    return Some(vec![Stmt::Atomic(
                        None,
                        AtomicTarget::Own(F32_SLOT),
                        AtomicOp::AddF32,
                        value,
                        None,
                    )]);
                }
                let id = (op != AtomicOp::Store).then(|| self.id());
                Stmt::Atomic(id, AtomicTarget::Own(slot), op, value, None)
            }
            4 if !self.cas_used && !self.ctx.in_loop => {
                self.cas_used = true;
                let cmp = self.expr(u, 2);
                Stmt::Atomic(
                    Some(self.id()),
                    AtomicTarget::Own(CAS_SLOT),
                    AtomicOp::CompareExchange,
                    value,
                    Some(cmp),
                )
            }
            5..=7 => {
                let slot = self.rng.random_range(0..6);
                let op = INT_RMW
                    .into_iter()
                    .filter(|o| shared_op_ok(slot, *o))
                    .nth(self.rng.random_range(0..2))
                    .unwrap_or(AtomicOp::Add);
                let op = if shared_op_ok(slot, op) {
                    op
                } else {
                    INT_RMW.into_iter().find(|o| shared_op_ok(slot, *o))?
                };
                Stmt::Atomic(None, AtomicTarget::Shared(slot), op, value, None)
            }
            _ if self.ctx.phase == Phase::Own => {
                Stmt::Atomic(None, AtomicTarget::Workgroup, AtomicOp::Add, value, None)
            }
            _ => return None,
        }])
    }

    fn subgroup(&mut self) -> Option<Vec<Stmt>> {
        use SubgroupOp as O;
        let op = self.pick(&[
            O::Add,
            O::Mul,
            O::Min,
            O::Max,
            O::And,
            O::Or,
            O::Xor,
            O::InclusiveAdd,
            O::ExclusiveAdd,
            O::InclusiveMul,
            O::ExclusiveMul,
            O::All,
            O::Any,
            O::Ballot,
            O::BroadcastFirst,
            O::Broadcast,
            O::Shuffle,
            O::ShuffleXor,
            O::ShuffleUp,
            O::ShuffleDown,
            O::QuadSwapX,
            O::QuadSwapY,
            O::QuadSwapDiagonal,
            O::QuadBroadcast,
            O::Elect,
        ]);
        let s = match op {
            O::All | O::Any | O::Ballot | O::Elect => Scalar::Bool,
            O::Mul | O::InclusiveMul | O::ExclusiveMul | O::And | O::Or | O::Xor => {
                self.pick(&[Scalar::I32, Scalar::U32])
            }
            O::Add | O::InclusiveAdd | O::ExclusiveAdd | O::Min | O::Max => {
                self.pick(&[Scalar::I32, Scalar::U32, Scalar::F32])
            }
            _ => self.pick(&[Scalar::I32, Scalar::U32, Scalar::F32]),
        };
        let t = if matches!(op, O::All | O::Any | O::Ballot | O::Elect) {
            Ty::S(Scalar::Bool)
        } else {
            Ty::sv(s, self.pick(&[1, 1, 2, 3, 4]))
        };
        let arg = self.expr(t, 2);
        let extra = match op {
            O::Broadcast | O::QuadBroadcast => Some(lu(self.rng.random_range(0..4))),
            O::ShuffleXor | O::ShuffleUp | O::ShuffleDown => Some(lu(self.rng.random_range(1..3))),
            O::Shuffle => Some(self.below(4, 1)),
            _ => None,
        };
        Some(vec![Stmt::Subgroup(self.id(), op, arg, extra)])
    }

    // ---- helper functions ----

    fn func(&mut self, n: usize) -> Func {
        let ty = loop {
            let t = self.rand_sv();
            if t.scalar() != Scalar::Bool || self.chance(0.2) {
                break t;
            }
        };
        let arity = self.rng.random_range(1..=3);
        let params: Vec<Id> = (0..arity).map(|_| self.id()).collect();
        let num = match ty.scalar() {
            Scalar::Bool => Num::Bool,
            s if s.is_int() => full(s),
            _ if self.chance(0.5) => Num::Float(F::exact_range(-8.0, 8.0, -4)),
            _ => Num::Float(F {
                lo: -8.0,
                hi: 8.0,
                err: 2f64.powi(-8),
                grid: 0,
                nonneg: false,
            }),
        };
        let contract = Info {
            ty,
            num,
            konst: false,
            uniform: false,
        };
        self.ctx = Ctx {
            in_func: Some(n),
            ..Analyzer::entry_ctx()
        };
        let _ = self.an.funcs();
        for &p in &params {
            self.an.push_value(p, contract);
        }
        let n = self.rng.random_range(0..=2);
        let mut body = self.random_lets(n);
        if self.chance(0.5) {
            let c = self.expr(Ty::S(Scalar::Bool), 2);
            let r = self.expr(ty, 2);
            body.push(Stmt::If(c, vec![Stmt::Return(r)], Vec::new()));
        }
        let result = self.expr(ty, 3);
        Func {
            ty,
            params,
            contract,
            body,
            result,
        }
    }
}

fn is_twin(e: &Expr) -> bool {
    let mut ok = true;
    crate::analysis::visit(e, &mut |x| match x {
        Expr::Input(_, i) if !matches!(**i, Expr::Lit(_)) => ok = false,
        Expr::Param
        | Expr::Builtin(_)
        | Expr::Value(_)
        | Expr::Var(_)
        | Expr::Wg(_)
        | Expr::WgAtomic => ok = false,
        _ => {}
    });
    ok
}

/// Apply `f` to every subexpression of `e`, parents first.
pub fn replace(e: &mut Expr, f: &mut dyn FnMut(&mut Expr)) {
    f(e);
    e.for_each_child_mut(&mut |a| replace(a, f));
}
