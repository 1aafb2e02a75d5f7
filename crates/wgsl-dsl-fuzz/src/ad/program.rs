//! The AD fuzzer's kernels: the generator's differentiable subset as a small tree, and the
//! generator.
//!
//! A kernel runs over a 1-, 2- or 3-D grid of `N = nx * ny * nz` invocations (guarded by
//! `gid < extent` in each dimension); `g` is the invocation's linear index. It reads `f32`
//! inputs through index maps (gathers: `(a g + b) % len`, `(gid.d * a + b) % len`, the loop
//! counter) and stores into `f32` outputs of length `N` through bijections (scatters:
//! `(a g + b) % N` with `a` prime to `N`), so that the forward kernel is race-free; an
//! element may be stored several times by its invocation. Bodies have `let`s, `var`s,
//! `if`/`else` on comparisons of values (kinks), `switch` on `g % m`, loops of a build-time
//! trip count and loops of a run-time trip count bounded by `max_iterations` (the count read
//! from a `u32` buffer, different per invocation), workgroup memory and a barrier before the
//! body ([`Stage`]), helper functions (`let`s and one `return`), `select`s, `abs`/`max`/`min`
//! (kinks), and `f32` atomic additions (`atomic_add_f32`) into a few bins of an accumulated
//! output `acc` that many invocations add into ([`S::Accumulate`]). Every operation is defined on every value it can meet (`a / (1 + b^2)`,
//! `sqrt(1 + a^2)`, `exp(tanh a)`; the guarded `select(0, sqrt(max(a, 0)), a > 0)`): no NaN in the
//! forward kernel.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// An index map: which element of a buffer of length `len` an invocation reads.
#[derive(Clone, Debug, PartialEq)]
pub enum Index {
    /// `(a * g + b) % len`.
    Linear { a: u32, b: u32 },
    /// `(gid.dim * a + b) % len`.
    Coord { dim: usize, a: u32, b: u32 },
    /// `(g + c + b) % len`, with `c` the innermost loop's counter (`g + b` outside loops).
    Counter { b: u32 },
    /// `b % len`, a literal: every invocation reads that element (a gradient the derived
    /// kernel sums in each workgroup before one atomic addition).
    Const { b: u32 },
}

/// Where an output is stored: a bijection of the grid.
#[derive(Clone, Debug, PartialEq)]
pub struct Scatter {
    /// `(a * g + b) % N`, `a` prime to `N`.
    pub a: u32,
    pub b: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Un {
    Neg,
    Sin,
    Cos,
    Tanh,
    Abs,
    /// `sqrt(1 + a * a)`.
    SoftSqrt,
    /// `exp(tanh(a))`.
    ExpTanh,
    /// `floor(a)`: piecewise constant.
    Floor,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bin {
    Add,
    Sub,
    Mul,
    /// `a / (1 + b * b)`.
    SafeDiv,
    Max,
    Min,
}

/// An `f32` expression.
#[derive(Clone, Debug, PartialEq)]
pub enum E {
    Lit(f32),
    /// Input `buf` at an index map.
    In {
        buf: usize,
        index: Index,
    },
    /// A `let` by number (`0.5` where it is not in scope: shrinking removes `let`s freely).
    Let(usize),
    /// A `var`'s current value (`0.5` where it is not in scope).
    Var(usize),
    /// `f32` of the innermost loop's counter (0 outside loops).
    Counter,
    Un(Un, Box<E>),
    Bin(Bin, Box<E>, Box<E>),
    /// `select(b, a, cond)`: `a` where `cond`, else `b`.
    Select(Box<Cond>, Box<E>, Box<E>),
    /// `select(0.0, sqrt(max(a, 0.0)), a > 0.0)`: the untaken `sqrt`'s derivative is not finite
    /// (`max` keeps a constant negative `a` from being a const-expression error, WGSL §8.1.1).
    GuardedSqrt(Box<E>),
    /// A helper function of two arguments.
    Call(usize, Box<E>, Box<E>),
    /// A helper function's parameter (in helper bodies only).
    Param(usize),
    /// The value the invocation read back from workgroup memory ([`Stage`]; `0.5` without
    /// one).
    Staged,
}

/// Workgroup memory and a barrier before the body: each invocation of a workgroup stores
/// `in<buf>[(a g + b) % len]` into `tile[local_invocation_index]` (for every invocation of
/// the workgroup, inside the grid or not), a `workgroupBarrier()` at the top level, then
/// reads back `tile[(lid * p + q) % size]`, a neighbour's value (`p` prime to the
/// workgroup's size: a permutation), as [`E::Staged`].
#[derive(Clone, Debug, PartialEq)]
pub struct Stage {
    pub buf: usize,
    pub a: u32,
    pub b: u32,
    pub p: u32,
    pub q: u32,
}

/// `a < b` or `a > b`.
#[derive(Clone, Debug, PartialEq)]
pub struct Cond {
    pub a: E,
    pub less: bool,
    pub b: E,
}

/// A statement.
#[derive(Clone, Debug, PartialEq)]
pub enum S {
    /// `let l<id> = e;`
    Let(usize, E),
    /// `var v<id> = e;`
    Var(usize, E),
    /// `v<id> = e;`
    Assign(usize, E),
    /// `out<out>[scatter of out] = e;`
    Store { out: usize, value: E },
    If {
        cond: Cond,
        then: Vec<S>,
        otherwise: Vec<S>,
    },
    /// `switch g % modulus { case 0 {..} case 1 {..} ... default {..} }` (the last arm is
    /// the default).
    Switch { modulus: u32, arms: Vec<Vec<S>> },
    /// `for c in 0..trips { body }`; with `run_time`, a loop whose trip count is known only
    /// at run time: `for c in 0..min(counts[g % len], trips)` bounded by
    /// `k.max_iterations(trips)` (a different count per invocation).
    Loop {
        trips: u32,
        run_time: bool,
        body: Vec<S>,
    },
    /// `atomic_add_f32(&acc[index of bins], value)`: many invocations add into one bin.
    Accumulate { bin: Index, value: E },
}

/// One kernel of the AD fuzzer.
#[derive(Clone, Debug, PartialEq)]
pub struct AdProgram {
    /// The grid's extent in invocations (1 in unused dimensions).
    pub extent: [u32; 3],
    pub workgroup: [u32; 3],
    /// The inputs' lengths.
    pub inputs: Vec<u32>,
    /// How many outputs (each of length `N`).
    pub outputs: usize,
    /// Each output's scatter (one per output: two maps would make two invocations store
    /// into one element, a race of the forward kernel).
    pub scatters: Vec<Scatter>,
    /// Helper functions `h<i>(p0, p1)`: `let t = first; return second` (`Param(2)` is `t`).
    pub helpers: Vec<(E, E)>,
    pub body: Vec<S>,
    /// The contents of the `u32` data binding `counts` (per-invocation trip counts of the
    /// run-time loops), declared when the body has a run-time loop.
    pub counts: Vec<u32>,
    /// Workgroup memory and a barrier before the body, if any.
    pub stage: Option<Stage>,
    /// The bins of the accumulated output `acc` (`array<atomic<u32>>` of `f32` bits); 0:
    /// none.
    pub bins: u32,
}

impl AdProgram {
    /// `N`, the number of invocations.
    pub fn invocations(&self) -> u32 {
        self.extent.iter().product()
    }

    /// Workgroups to dispatch in each dimension.
    pub fn workgroups(&self) -> [u32; 3] {
        [0, 1, 2].map(|d| self.extent[d].div_ceil(self.workgroup[d]))
    }

    /// True if the body has a run-time loop (the kernel then has the binding `counts`).
    pub fn has_run_time_loop(&self) -> bool {
        fn any(body: &[S]) -> bool {
            body.iter().any(|s| match s {
                S::Loop { run_time, body, .. } => *run_time || any(body),
                S::If {
                    then, otherwise, ..
                } => any(then) || any(otherwise),
                S::Switch { arms, .. } => arms.iter().any(|a| any(a)),
                _ => false,
            })
        }
        any(&self.body)
    }
}

fn gcd(a: u32, b: u32) -> u32 {
    if b == 0 { a } else { gcd(b, a % b) }
}

struct Gen {
    rng: ChaCha8Rng,
    n: u32,
    dims: usize,
    inputs: usize,
    outputs: usize,
    helpers: usize,
    next_let: usize,
    next_var: usize,
    /// In scope: `let`s and `var`s, by block.
    lets: Vec<Vec<usize>>,
    vars: Vec<Vec<usize>>,
    in_loop: bool,
    /// The program reads a value back from workgroup memory.
    staged: bool,
    /// The accumulated output's bins (0: none).
    bins: u32,
    statements: i32,
}

impl Gen {
    fn pick<T: Clone>(&mut self, v: &[T]) -> T {
        v[self.rng.random_range(0..v.len())].clone()
    }

    fn scatter(&mut self) -> Scatter {
        if self.rng.random_bool(0.5) {
            return Scatter { a: 1, b: 0 };
        }
        loop {
            let a = self.rng.random_range(1..=self.n.max(2) * 2);
            if gcd(a, self.n) == 1 {
                return Scatter {
                    a,
                    b: self.rng.random_range(0..self.n.max(1) * 2),
                };
            }
        }
    }

    fn index(&mut self) -> Index {
        match self.rng.random_range(0..5) {
            4 => Index::Const {
                b: self.rng.random_range(0..40),
            },
            0 => Index::Linear { a: 1, b: 0 },
            1 => Index::Linear {
                a: self.rng.random_range(0..5),
                b: self.rng.random_range(0..40),
            },
            2 => Index::Coord {
                dim: self.rng.random_range(0..self.dims),
                a: self.rng.random_range(1..4),
                b: self.rng.random_range(0..9),
            },
            _ => Index::Counter {
                b: self.rng.random_range(0..9),
            },
        }
    }

    fn cond(&mut self, depth: u32) -> Cond {
        Cond {
            a: self.exp(depth),
            less: self.rng.random_bool(0.5),
            b: self.exp(depth),
        }
    }

    /// An expression; `params` > 0 in helper bodies (no loads, `let`s or `var`s there).
    fn exp_in(&mut self, depth: u32, params: usize) -> E {
        let leaf = depth == 0 || self.rng.random_bool(0.3);
        if leaf {
            if params > 0 {
                return match self.rng.random_range(0..3) {
                    0 => E::Lit(self.lit()),
                    _ => E::Param(self.rng.random_range(0..params)),
                };
            }
            let lets: Vec<usize> = self.lets.iter().flatten().copied().collect();
            let vars: Vec<usize> = self.vars.iter().flatten().copied().collect();
            return match self.rng.random_range(0..8) {
                0 => E::Lit(self.lit()),
                1 | 2 if !lets.is_empty() => E::Let(self.pick(&lets)),
                3 if !vars.is_empty() => E::Var(self.pick(&vars)),
                4 if self.in_loop => E::Counter,
                5 if self.staged => E::Staged,
                _ => E::In {
                    buf: self.rng.random_range(0..self.inputs),
                    index: self.index(),
                },
            };
        }
        let d = depth - 1;
        match self.rng.random_range(0..12) {
            0..=2 => {
                let op = self.pick(&[
                    Un::Neg,
                    Un::Sin,
                    Un::Cos,
                    Un::Tanh,
                    Un::Abs,
                    Un::SoftSqrt,
                    Un::ExpTanh,
                    Un::Floor,
                ]);
                E::Un(op, Box::new(self.exp_in(d, params)))
            }
            3..=7 => {
                let op = self.pick(&[
                    Bin::Add,
                    Bin::Sub,
                    Bin::Mul,
                    Bin::SafeDiv,
                    Bin::Max,
                    Bin::Min,
                ]);
                E::Bin(
                    op,
                    Box::new(self.exp_in(d, params)),
                    Box::new(self.exp_in(d, params)),
                )
            }
            8 => E::Select(
                Box::new(Cond {
                    a: self.exp_in(d, params),
                    less: self.rng.random_bool(0.5),
                    b: self.exp_in(d, params),
                }),
                Box::new(self.exp_in(d, params)),
                Box::new(self.exp_in(d, params)),
            ),
            9 => E::GuardedSqrt(Box::new(self.exp_in(d, params))),
            10 if params == 0 && self.helpers > 0 => E::Call(
                self.rng.random_range(0..self.helpers),
                Box::new(self.exp_in(d, 0)),
                Box::new(self.exp_in(d, 0)),
            ),
            _ => E::Bin(
                Bin::Mul,
                Box::new(self.exp_in(d, params)),
                Box::new(E::Lit(self.lit())),
            ),
        }
    }

    fn exp(&mut self, depth: u32) -> E {
        self.exp_in(depth, 0)
    }

    fn lit(&mut self) -> f32 {
        (self.rng.random_range(-20..=20) as f32) * 0.125
    }

    fn block(&mut self, depth: u32) -> Vec<S> {
        self.lets.push(Vec::new());
        self.vars.push(Vec::new());
        let count = self.rng.random_range(1..=4);
        let mut out = Vec::new();
        for _ in 0..count {
            if self.statements <= 0 {
                break;
            }
            out.push(self.stmt(depth));
        }
        self.lets.pop();
        self.vars.pop();
        out
    }

    fn stmt(&mut self, depth: u32) -> S {
        self.statements -= 1;
        let vars: Vec<usize> = self.vars.iter().flatten().copied().collect();
        let nested = depth > 0;
        match self.rng.random_range(0..14) {
            0..=2 => {
                let id = self.next_let;
                self.next_let += 1;
                let e = self.exp(3);
                self.lets.last_mut().expect("a block").push(id);
                S::Let(id, e)
            }
            3 => {
                let id = self.next_var;
                self.next_var += 1;
                let e = self.exp(2);
                self.vars.last_mut().expect("a block").push(id);
                S::Var(id, e)
            }
            4 if !vars.is_empty() => {
                let v = self.pick(&vars);
                S::Assign(v, self.exp(3))
            }
            5..=7 => S::Store {
                out: self.rng.random_range(0..self.outputs),
                value: self.exp(3),
            },
            8 | 9 if nested => S::If {
                cond: self.cond(2),
                then: self.block(depth - 1),
                otherwise: if self.rng.random_bool(0.5) {
                    self.block(depth - 1)
                } else {
                    Vec::new()
                },
            },
            10 if nested => {
                let modulus = self.rng.random_range(2..=4);
                let arms = (0..self.rng.random_range(2..=modulus))
                    .map(|_| self.block(depth - 1))
                    .collect();
                S::Switch { modulus, arms }
            }
            11 if nested && !self.in_loop => {
                self.in_loop = true;
                let body = self.block(depth - 1);
                self.in_loop = false;
                S::Loop {
                    trips: self.rng.random_range(1..=4),
                    run_time: self.rng.random_bool(0.5),
                    body,
                }
            }
            12 if self.bins > 0 => S::Accumulate {
                bin: self.index(),
                value: self.exp(3),
            },
            _ => S::Store {
                out: self.rng.random_range(0..self.outputs),
                value: self.exp(3),
            },
        }
    }
}

/// The AD fuzzer's kernel of `seed`, of at most `statements` statements.
pub fn generate(seed: u64, statements: i32) -> AdProgram {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let dims = rng.random_range(1..=3);
    let mut extent = [1u32; 3];
    let mut workgroup = [1u32; 3];
    for d in 0..dims {
        extent[d] = match dims {
            1 => rng.random_range(1..=45),
            2 => rng.random_range(1..=9),
            _ => rng.random_range(1..=5),
        };
        workgroup[d] = [1, 2, 4, 8][rng.random_range(0..4)];
    }
    // At most 256 invocations per workgroup (WebGPU's default maxComputeInvocationsPerWorkgroup):
    // 8 x 8 x 8 is halved along z.
    while workgroup.iter().product::<u32>() > 256 {
        let d = (0..3).max_by_key(|&d| (workgroup[d], d)).unwrap_or(2);
        workgroup[d] /= 2;
    }
    let n: u32 = extent.iter().product();
    let inputs: Vec<u32> = (0..rng.random_range(1..=3))
        .map(|_| {
            if rng.random_bool(0.4) {
                n
            } else {
                rng.random_range(1..=n + 6)
            }
        })
        .collect();
    let outputs = rng.random_range(1..=2);
    let helper_count = rng.random_range(0..=2);
    let mut g = Gen {
        rng,
        n,
        dims,
        inputs: inputs.len(),
        outputs,
        helpers: 0,
        next_let: 0,
        next_var: 0,
        lets: Vec::new(),
        vars: Vec::new(),
        in_loop: false,
        staged: false,
        bins: 0,
        statements,
    };
    let size: u32 = workgroup.iter().product();
    let stage = g.rng.random_bool(0.3).then(|| {
        let p = loop {
            let p = g.rng.random_range(1..=size.max(1) * 2 + 1);
            if gcd(p, size) == 1 {
                break p;
            }
        };
        Stage {
            buf: g.rng.random_range(0..inputs.len()),
            a: g.rng.random_range(0..=5),
            b: g.rng.random_range(0..=7),
            p,
            q: g.rng.random_range(0..size.max(1)),
        }
    });
    g.staged = stage.is_some();
    let helpers = (0..helper_count)
        .map(|_| (g.exp_in(2, 2), g.exp_in(2, 3)))
        .collect();
    g.helpers = helper_count;
    let scatters = (0..outputs).map(|_| g.scatter()).collect();
    g.bins = if g.rng.random_bool(0.3) {
        g.rng.random_range(1..=5)
    } else {
        0
    };
    let mut body = g.block(2);
    if g.bins > 0 && !accumulates(&body) {
        let (bin, value) = (g.index(), g.exp(3));
        body.push(S::Accumulate { bin, value });
    }
    // Every output is stored into somewhere.
    for out in 0..outputs {
        if !stores_into(&body, out) {
            let value = g.exp(3);
            body.push(S::Store { out, value });
        }
    }
    let counts = (0..g.rng.random_range(1..=7))
        .map(|_| g.rng.random_range(0..=5))
        .collect();
    AdProgram {
        extent,
        workgroup,
        inputs,
        outputs,
        scatters,
        helpers,
        body,
        counts,
        stage,
        bins: g.bins,
    }
}

/// True if `body` adds into the accumulated output somewhere.
pub(crate) fn accumulates(body: &[S]) -> bool {
    body.iter().any(|s| match s {
        S::Accumulate { .. } => true,
        S::If {
            then, otherwise, ..
        } => accumulates(then) || accumulates(otherwise),
        S::Switch { arms, .. } => arms.iter().any(|a| accumulates(a)),
        S::Loop { body, .. } => accumulates(body),
        _ => false,
    })
}

fn stores_into(body: &[S], out: usize) -> bool {
    body.iter().any(|s| match s {
        S::Store { out: o, .. } => *o == out,
        S::If {
            then, otherwise, ..
        } => stores_into(then, out) || stores_into(otherwise, out),
        S::Switch { arms, .. } => arms.iter().any(|a| stores_into(a, out)),
        S::Loop { body, .. } => stores_into(body, out),
        _ => false,
    })
}
