//! Automatic differentiation of expressions and kernels (ARCHITECTURE.md decision *Derivatives on the builder's DAG*: derivatives are
//! transformations of the same IR).
//!
//! - **Expressions** (this page): [`KernelBuilder::vjp`], [`KernelBuilder::grad`],
//!   [`KernelBuilder::jvp`].
//! - **Kernels**: [`derive()`] makes a kernel's backward kernel (reads of differentiable inputs
//!   become accumulations into gradient buffers, [`Accumulation`]; stores of outputs become
//!   reads of their incoming gradients); [`Backward::custom`] is a backward pass the author
//!   writes (Slang's `[BackwardDerivative]`, for tiled products); `#[kernel(differentiable)]`
//!   generates `<name>_backward`. `wgsl_dsl::autodiff::check` compares any backward pass with central
//!   differences of its forward kernel, on the interpreter or the GPU.
//!
//! # Expressions
//! [`KernelBuilder::vjp`] (reverse mode, a vector-Jacobian product) and
//! [`KernelBuilder::jvp`] (forward mode, a Jacobian-vector product) differentiate an
//! expression built with the DSL with respect to some of its subexpressions. The derivative is
//! an ordinary [`Exp`]: nodes of the same DAG, each recording the Rust call site of the node it
//! differentiates, lowered, folded, validated and emitted like any other expression.
//!
//! ```
//! # use wgsl_dsl_core as wgsl_dsl;
//! use wgsl_dsl::prelude::*;
//!
//! // y = tanh(w * x + b); dy/dw, dy/db and dy/dx for each invocation's element.
//! let mut k = KernelBuilder::new("neuron_grad", [64, 1, 1]);
//! let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
//! let params = k.uniform::<Vec2<f32>>("params");
//! let grads = k.storage::<RuntimeArray<Vec3<f32>>, ReadWrite>("grads");
//! let i = k.let_("i", global_invocation_id().x());
//! k.if_(i.lt(x.len()), |k| {
//!     let xi = k.let_("xi", x.at(&i).load());
//!     let w = k.let_("w", params.load().x());
//!     let b = k.let_("b", params.load().y());
//!     let z = k.let_("z", &w * &xi + &b);
//!     let y = tanh(&z);
//!     let (dw, db, dx) = k.grad(&y, (&w, &b, &xi));
//!     k.store(&grads.at(&i), vec3(dw, db, dx));
//! });
//! let shader = k.build()?;
//! assert!(shader.wgsl.contains("let d_z = ")); // the adjoint of `z`, computed once
//! # Ok::<(), wgsl_dsl::BuildError>(())
//! ```
//!
//! # What is differentiated
//! - **Variables are nodes.** The derivative is taken with respect to the given `Exp`s as
//!   nodes: an `Exp` and its clones are one node (the same `Rc`), and so is every use of a
//!   [`let_`](KernelBuilder::let_). Two loads of one buffer element built by two calls are two
//!   nodes; bind a value with `let_` to differentiate with respect to all its uses. A variable
//!   is independent: the derivative does not look into its definition (partial derivatives).
//! - **Through `let`s and helper functions.** A `let`'s uses lead to its value; a call of a
//!   helper function whose body is `let`s and one `return` is differentiated as its body with
//!   the arguments substituted (inlined into the derivative). Other helper functions are
//!   differentiated by kernel AD.
//! - **Sharing.** A node reached along several paths (a shared subtree, a `let` used many
//!   times) sums its adjoint contributions (a balanced sum) and passes them on once, in
//!   topological order: the derivative's node count is linear in the DAG's size. Reverse mode
//!   names the adjoint of each `let` `d_<name>` (a `let` at the call of `vjp`), forward mode
//!   its tangent `t_<name>`, and the results are `let`s too, so their values are computed
//!   once, where `vjp` or `jvp` is called.
//! - **Types.** `f32`, `f16` (feature `f16`) and vectors of them ([`Differentiable`]),
//!   componentwise; the adjoint of an `Exp<T>` is an `Exp<T>`. A scalar used with a vector
//!   (`v * s`, `splat`) gets the sum of the components' adjoints. Matrices may appear as
//!   constants (`m * v`, `v * m` with `m` not depending on the variables).
//! - **Constants.** Subexpressions that do not depend on the variables have derivative zero,
//!   and so do integer, `bool` and bitcast subtrees (comparisons, indices, conversions to
//!   integers): they are piecewise constant.
//!
//! # Errors
//! A node that depends on the variables and cannot be differentiated is a
//! [`BuildError::NotDifferentiable`] naming the operation and the Rust call site that built it,
//! never a silent zero:
//! - a bitcast to a float type, and `unpack*` of bits that depend on the variables;
//! - a load of a `var`, a read-write binding, workgroup memory or a storage texture into which
//!   the kernel stores values that depend on the variables (anywhere: checked again when the
//!   kernel is built, so a store recorded after `vjp` is found too);
//! - atomics, subgroup operations, `workgroupUniformLoad`, cooperative matrices, calls of
//!   helper functions that are not `let`s and one `return`;
//! - matrices, arrays and structs that depend on the variables (except the results of `modf`
//!   and `frexp`).
//!
//! [`KernelBuilder::vjp`], [`KernelBuilder::jvp`] and [`KernelBuilder::grad`] record the error
//! in the builder, like every mistake the builder sees (ARCHITECTURE: one error channel), and
//! return zeros in its place: [`KernelBuilder::build`] returns it, with any others, so it is
//! never lost because the derivative is unused, and they can be called where no `Result` can
//! be returned (`KernelDef::build`, `#[kernel]` bodies). [`KernelBuilder::try_vjp`] and
//! [`KernelBuilder::try_jvp`] return it instead and record nothing.
//!
//! # Derivative rules
//! Each is the derivative of the function's definition in the WGSL spec (§8.7 "Arithmetic
//! Expressions", §17.5 "Numeric Built-in Functions"; section numbers of the W3C Candidate
//! Recommendation). `y` is the result; `[c]` is 1 where `c` holds, else 0.
//!
//! | operation | derivative |
//! |---|---|
//! | `a + b`, `a - b`, `-a` | `1, 1`; `1, -1`; `-1` |
//! | `a * b`, `a / b` | `b, a`; `1 / b, -y / b` |
//! | `a % b` (= `a - b trunc(a / b)`) | `1, -trunc(a / b)` |
//! | `exp`, `exp2` | `y`, `y ln 2` |
//! | `log`, `log2` | `1 / x`, `1 / (x ln 2)` |
//! | `sqrt`, `inverseSqrt` | `1 / (2 y)`, `-y^3 / 2` |
//! | `pow(b, e)` | `e pow(b, e - 1)`, `y log(b)` |
//! | `sin`, `cos`, `tan` | `cos x`, `-sin x`, `1 + y^2` |
//! | `asin`, `acos`, `atan` | `1 / sqrt(1 - x^2)`, `-1 / sqrt(1 - x^2)`, `1 / (1 + x^2)` |
//! | `atan2(y, x)` | `x / (x^2 + y^2)`, `-y / (x^2 + y^2)` (undefined at the origin, as `atan2`) |
//! | `sinh`, `cosh`, `tanh` | `cosh x`, `sinh x`, `1 - y^2` |
//! | `asinh`, `acosh`, `atanh` | `1 / sqrt(x^2 + 1)`, `1 / sqrt(x^2 - 1)`, `1 / (1 - x^2)` |
//! | `abs` | `sign(x)`: **0 at 0** |
//! | `max(a, b)`, `min(a, b)` | `[a > b], [a <= b]`; `[a < b], [a >= b]`: **a tie goes to `b`**, so `max(x, 0.0)` passes 0 to `x` at 0 |
//! | `clamp(e, lo, hi)` (= `min(max(e, lo), hi)`) | `[lo < e][y < hi]`, `[e <= lo][y < hi]`, `[y >= hi]`: `e` gets 1 **strictly inside** `(lo, hi)`, 0 at the bounds |
//! | `saturate` | `[0 < x < 1]` |
//! | `fma(a, b, c)`, `mix(a, b, t)` | `b, a, 1`; `1 - t, t, b - a` |
//! | `smoothstep(lo, hi, x)` | with `s = clamp((x - lo) / (hi - lo), 0, 1)`, `g = 6 s (1 - s) / (hi - lo)`: `g (s - 1), -g s, g` |
//! | `fract`, `quantizeToF16`, `f32(e)`/`f16(e)` of a float | `1` (rounding to a narrower float is treated as the conversion it is) |
//! | `floor`, `ceil`, `round`, `trunc`, `sign`, `step`, comparisons, conversions to integers | `0` (piecewise constant) |
//! | `ldexp(e1, e2)` | `2^e2` (`e2` is an integer) |
//! | `modf(e).fract`, `.whole`; `frexp(e).fract` | `1`, `0`; `2^-exp` |
//! | `degrees`, `radians` | `180 / pi`, `pi / 180` |
//! | `dot(a, b)` | `b, a` |
//! | `length(e)`, `distance(a, b)` | `e / y` (`(a - b) / y`, and its negation): **0 at the zero vector**; `sign` for scalars |
//! | `normalize(e)` | `t -> (t - y dot(y, t)) / length(e)` |
//! | `cross(a, b)` | `t -> cross(t, b)`, `t -> cross(a, t)` |
//! | `reflect(i, n)` (= `i - 2 dot(n, i) n`) | `t -> reflect(t, n)`, `t -> -2 (dot(t, i) n + dot(n, i) t)` |
//! | `refract(i, n, eta)` | of `eta i - (eta d + sqrt(k)) n`, `d = dot(n, i)`, `k = 1 - eta^2 (1 - d^2)`; 0 where `k <= 0` |
//! | `faceForward(e1, e2, e3)` | `+-1` to `e1` (the sign it applies); `e2`, `e3` piecewise constant |
//! | `select(f, t, c)` | `t` where `c`, `f` elsewhere |
//! | components, swizzles, `vecN(..)`, `splat`, dynamic indices of vectors | routed to the components read |
//!
//! Where the function is undefined (outside its domain, WGSL spec §15.7.7), so is its
//! derivative; where the derivative is infinite (`sqrt` at 0, `acos` at 1, `pow(0, e)` for
//! `e < 1`), the result is the indeterminate value that an infinite float is in WGSL (§15.7.2).

mod accumulate;
mod backward;
mod derive;
mod element;
mod error;
mod exclusive;
mod forward;
mod graph;
mod linear;
mod loops;
mod make;
mod masked;
mod overwrite;
mod program;
mod reverse;
mod rules;
mod shared;
mod subst;
mod symbolic;
mod tangent;

pub use accumulate::{Accumulation, MAX_REDUCED};
pub use derive::{Backward, BackwardKernel, Choice, Derive, Role, derive};
pub use loops::{BoundedLoop, IterationLimitExceeded};
pub use symbolic::MAX_UNROLLED;
pub use tangent::{TangentKernel, TangentRole, derive_tangent, derive_tangent_magnitude};

use crate::error::BuildError;
use crate::exp::{Exp, ExprKind, IntoExp, NodeRef};
use crate::kernel::KernelBuilder;
use crate::kernel::stmt::Stmt;
use crate::kernel::values::MemoryCheck;
use crate::site::CallSite;
use crate::types::{Float, ScalarOrVector};
use crate::types::{ScalarTy, Ty};

use graph::{Graph, Key, key};
use make::At;

/// The types derivatives are taken of and with respect to: `f32`, `f16` (feature `f16`) and
/// their vectors.
pub trait Differentiable: Float + ScalarOrVector {}
impl<T: Float + ScalarOrVector> Differentiable for T {}

/// The variables of [`KernelBuilder::vjp`]: one `&Exp<T>`, a tuple of them (of up to six
/// types), an array or a slice of them. `Adjoints` has the same shape: `Exp<T>` for
/// `&Exp<T>`, `(Exp<A>, Exp<B>)` for `(&Exp<A>, &Exp<B>)`, `[Exp<T>; N]`, `Vec<Exp<T>>`.
pub trait Wrt {
    /// The adjoints, one per variable, each of its variable's type.
    type Adjoints;
    #[doc(hidden)]
    fn nodes(&self) -> Vec<NodeRef>;
    #[doc(hidden)]
    fn adjoints(nodes: Vec<NodeRef>) -> Self::Adjoints;
}

impl<T: Differentiable> Wrt for &Exp<T> {
    type Adjoints = Exp<T>;
    fn nodes(&self) -> Vec<NodeRef> {
        vec![self.node.clone()]
    }
    fn adjoints(nodes: Vec<NodeRef>) -> Exp<T> {
        Exp::from_ref(nodes.into_iter().next().expect("one adjoint per variable"))
    }
}

impl<T: Differentiable, const N: usize> Wrt for [&Exp<T>; N] {
    type Adjoints = [Exp<T>; N];
    fn nodes(&self) -> Vec<NodeRef> {
        self.iter().map(|e| e.node.clone()).collect()
    }
    fn adjoints(nodes: Vec<NodeRef>) -> [Exp<T>; N] {
        let v: Vec<Exp<T>> = nodes.into_iter().map(Exp::from_ref).collect();
        v.try_into()
            .unwrap_or_else(|_| unreachable!("one adjoint per variable"))
    }
}

impl<T: Differentiable> Wrt for &[&Exp<T>] {
    type Adjoints = Vec<Exp<T>>;
    fn nodes(&self) -> Vec<NodeRef> {
        self.iter().map(|e| e.node.clone()).collect()
    }
    fn adjoints(nodes: Vec<NodeRef>) -> Vec<Exp<T>> {
        nodes.into_iter().map(Exp::from_ref).collect()
    }
}

macro_rules! wrt_tuple {
    ($($t:ident $i:tt),*) => {
        impl<$($t: Differentiable),*> Wrt for ($(&Exp<$t>,)*) {
            type Adjoints = ($(Exp<$t>,)*);
            fn nodes(&self) -> Vec<NodeRef> {
                vec![$(self.$i.node.clone()),*]
            }
            fn adjoints(nodes: Vec<NodeRef>) -> Self::Adjoints {
                let mut it = nodes.into_iter();
                ($(Exp::<$t>::from_ref(it.next().expect("one adjoint per variable")),)*)
            }
        }
    };
}
wrt_tuple!(A 0);
wrt_tuple!(A 0, B 1);
wrt_tuple!(A 0, B 1, C 2);
wrt_tuple!(A 0, B 1, C 2, D 3);
wrt_tuple!(A 0, B 1, C 2, D 3, E 4);
wrt_tuple!(A 0, B 1, C 2, D 3, E 4, F 5);

/// A variable of [`KernelBuilder::jvp`] with its tangent (its direction of change), of the
/// same type: made by [`tangent`].
#[derive(Clone, Debug)]
pub struct Tangent {
    primal: NodeRef,
    tangent: NodeRef,
}

/// The variable `primal` with the tangent `tangent`, for [`KernelBuilder::jvp`].
#[track_caller]
pub fn tangent<T: Differentiable>(primal: &Exp<T>, tangent: impl IntoExp<T>) -> Tangent {
    Tangent {
        primal: primal.node.clone(),
        tangent: tangent.into_exp().node,
    }
}

/// Re-check every [`MemoryCheck`] of `k` against all of its stores.
/// True for `array<atomic<u32>>`: the type of an output kernel AD takes when the kernel only
/// adds into it with [`KernelBuilder::atomic_add_f32`] (its words are `f32` bits).
pub(crate) fn is_accumulated(ty: &Ty) -> bool {
    matches!(ty, Ty::Array { elem, len: None } if **elem == Ty::Atomic(ScalarTy::U32))
}

pub(crate) fn check_memory(k: &KernelBuilder) -> Result<(), BuildError> {
    for assumed in &k.memory_checks {
        let g = Graph::new(k, &assumed.loads, &assumed.wrt);
        for load in &assumed.loads {
            if g.depends_through_memory(load) {
                // The rule reports it with its message.
                rules::linearize(load, &g).map_err(|e| e.at(assumed.site))?;
            }
        }
    }
    Ok(())
}

impl KernelBuilder {
    /// The vector-Jacobian product of `y` with respect to the variables `wrt`: for each
    /// variable `x`, `sum_i seed_i dy_i/dx`, of `x`'s type (reverse mode). With a scalar `y`
    /// and `seed = 1` these are the partial derivatives of `y` ([`KernelBuilder::grad`]).
    ///
    /// `wrt` is one `&Exp<T>`, a tuple, an array or a slice of them; the adjoints come back
    /// in the same shape. They are `let`s at this point of the kernel, as are the adjoints of
    /// the `let`s between `y` and the variables (`d_<name>`). A variable `y` does not depend
    /// on has adjoint zero. See the [module docs](crate::autodiff) for what is differentiated.
    ///
    /// # Errors
    /// Recorded in the builder and returned by [`KernelBuilder::build`]: a
    /// [`BuildError::NotDifferentiable`] at the Rust call site of a node `y` depends on the
    /// variables through that cannot be differentiated (the adjoints are then zeros).
    /// [`KernelBuilder::try_vjp`] returns it instead.
    #[track_caller]
    pub fn vjp<Y: Differentiable, W: Wrt>(
        &mut self,
        y: &Exp<Y>,
        seed: impl IntoExp<Y>,
        wrt: W,
    ) -> W::Adjoints {
        let site = CallSite::caller();
        let seed = seed.into_exp();
        let nodes = wrt.nodes();
        match self.vjp_nodes(&y.node, &seed.node, &nodes, site) {
            Ok(adjoints) => W::adjoints(adjoints),
            Err(e) => {
                self.errors.push(e);
                W::adjoints(nodes.iter().map(|n| At(site).zero(&n.ty)).collect())
            }
        }
    }

    /// [`KernelBuilder::vjp`], returning its error instead of recording it (nothing is
    /// added to the kernel then).
    ///
    /// # Errors
    /// [`BuildError::NotDifferentiable`], at the call site of the node at fault.
    #[track_caller]
    pub fn try_vjp<Y: Differentiable, W: Wrt>(
        &mut self,
        y: &Exp<Y>,
        seed: impl IntoExp<Y>,
        wrt: W,
    ) -> Result<W::Adjoints, BuildError> {
        let site = CallSite::caller();
        let seed = seed.into_exp();
        self.vjp_nodes(&y.node, &seed.node, &wrt.nodes(), site)
            .map(W::adjoints)
    }

    /// The gradient of `y` with respect to `wrt`: [`KernelBuilder::vjp`] with the seed 1 (for
    /// a vector `y`, the gradient of the sum of its components).
    ///
    /// # Errors
    /// As [`KernelBuilder::vjp`] (recorded).
    #[track_caller]
    pub fn grad<Y: Differentiable, W: Wrt>(&mut self, y: &Exp<Y>, wrt: W) -> W::Adjoints {
        let site = CallSite::caller();
        let one = Exp::<Y>::from_ref(At(site).float(&Y::ty(), 1.0));
        self.vjp(y, one, wrt)
    }

    /// The Jacobian-vector product of `y`: its tangent, of `y`'s type, when each variable
    /// moves along its tangent (`sum_x dy/dx t_x`, forward mode). The tangents of the `let`s
    /// between the variables and `y` (`t_<name>`) and the result are `let`s at this point of
    /// the kernel. Zero if `y` depends on none of the variables.
    ///
    /// ```
    /// # use wgsl_dsl_core as wgsl_dsl;
    /// use wgsl_dsl::prelude::*;
    /// use wgsl_dsl::autodiff::tangent;
    /// let mut k = KernelBuilder::new("jvp", [1, 1, 1]);
    /// let out = k.storage::<RuntimeArray<f32>, ReadWrite>("out");
    /// let x = k.let_("x", out.at(0u32).load());
    /// let y = sin(&x) * &x;
    /// let dy = k.jvp(&y, [tangent(&x, 1.0f32)]); // cos(x) x + sin(x)
    /// k.store(&out.at(1u32), dy);
    /// k.build()?;
    /// # Ok::<(), wgsl_dsl::BuildError>(())
    /// ```
    ///
    /// # Errors
    /// As [`KernelBuilder::vjp`] (recorded; the tangent is then zero).
    #[track_caller]
    pub fn jvp<Y: Differentiable>(
        &mut self,
        y: &Exp<Y>,
        tangents: impl IntoIterator<Item = Tangent>,
    ) -> Exp<Y> {
        let site = CallSite::caller();
        let tangents: Vec<Tangent> = tangents.into_iter().collect();
        match self.jvp_node(&y.node, &tangents, site) {
            Ok(t) => Exp::from_ref(t),
            Err(e) => {
                self.errors.push(e);
                Exp::from_ref(At(site).zero(&Y::ty()))
            }
        }
    }

    /// [`KernelBuilder::jvp`], returning its error instead of recording it.
    ///
    /// # Errors
    /// [`BuildError::NotDifferentiable`], at the call site of the node at fault.
    #[track_caller]
    pub fn try_jvp<Y: Differentiable>(
        &mut self,
        y: &Exp<Y>,
        tangents: impl IntoIterator<Item = Tangent>,
    ) -> Result<Exp<Y>, BuildError> {
        let site = CallSite::caller();
        let tangents: Vec<Tangent> = tangents.into_iter().collect();
        self.jvp_node(&y.node, &tangents, site).map(Exp::from_ref)
    }

    /// The number of distinct nodes of `e`, through the `let`s and inlinable helper calls
    /// it uses, each counted once however often it is reached: the size of the DAG, in which
    /// a derivative's size is linear (see the [module docs](crate::autodiff)).
    pub fn dag_size<T>(&self, e: &Exp<T>) -> usize {
        Graph::new(self, std::slice::from_ref(&e.node), &[])
            .order
            .len()
    }

    fn vjp_nodes(
        &mut self,
        y: &NodeRef,
        seed: &NodeRef,
        wrt: &[NodeRef],
        site: CallSite,
    ) -> Result<Vec<NodeRef>, BuildError> {
        let (stmts, assumed, results) = {
            let g = Graph::new(self, std::slice::from_ref(y), wrt);
            let mut stmts = Vec::new();
            let mut bind = |n: &NodeRef, adjoint: NodeRef| {
                make::bind(&mut stmts, &graph::adjoint_name(&g, n), adjoint, n.site)
            };
            let adjoints = reverse::reverse(&g, &[(y.clone(), seed.clone())], &mut bind)
                .map_err(|e| e.at(site))?;
            let results: Vec<NodeRef> = wrt
                .iter()
                .map(|x| match adjoints.get(&key(x)) {
                    Some(a) => {
                        let name = format!("d_{}", variable_name(&g, x));
                        make::bind(&mut stmts, &name, a.clone(), site)
                    }
                    None => At(site).zero(&x.ty),
                })
                .collect();
            (stmts, memory_check(&g, wrt, site), results)
        };
        self.commit(stmts, assumed);
        Ok(results)
    }

    fn jvp_node(
        &mut self,
        y: &NodeRef,
        tangents: &[Tangent],
        site: CallSite,
    ) -> Result<NodeRef, BuildError> {
        let wrt: Vec<NodeRef> = tangents.iter().map(|t| t.primal.clone()).collect();
        let mut by_key: naga::FastHashMap<Key, NodeRef> = naga::FastHashMap::default();
        for t in tangents {
            let k = key(&t.primal);
            let sum = match by_key.remove(&k) {
                Some(prev) => At(site).add(&prev, &t.tangent),
                None => t.tangent.clone(),
            };
            by_key.insert(k, sum);
        }
        let (stmts, assumed, result) = {
            let g = Graph::new(self, std::slice::from_ref(y), &wrt);
            let mut stmts = Vec::new();
            let mut bind = |n: &NodeRef, t: NodeRef| {
                let name = format!("t_{}", g.let_name(n).unwrap_or("value"));
                make::bind(&mut stmts, &name, t, n.site)
            };
            let t = forward::forward(&g, y, &by_key, &mut bind, false).map_err(|e| e.at(site))?;
            let result = match t {
                Some(t) => make::bind(&mut stmts, "tangent", t, site),
                None => At(site).zero(&y.ty),
            };
            (stmts, memory_check(&g, &wrt, site), result)
        };
        self.commit(stmts, assumed);
        Ok(result)
    }

    /// Push the `let`s a derivative made, and keep its memory assumptions for `build`.
    fn commit(&mut self, stmts: Vec<(Stmt, CallSite)>, assumed: Option<MemoryCheck>) {
        for (stmt, site) in stmts {
            self.push(stmt, site);
        }
        if let Some(c) = assumed {
            self.memory_checks.push(c);
        }
    }
}

/// A name for a variable's adjoint: its `let`'s, its binding's, or `value`.
fn variable_name(g: &Graph<'_>, x: &NodeRef) -> String {
    if let Some(name) = g.let_name(x) {
        return name.to_string();
    }
    if let ExprKind::Load(place) = &x.kind
        && let Some(name) = g.place_name(place)
    {
        return name;
    }
    "value".to_string()
}

/// The loads of writable memory a derivative treated as constants, for `build` to check.
fn memory_check(g: &Graph<'_>, wrt: &[NodeRef], site: CallSite) -> Option<MemoryCheck> {
    let loads = g.memory_reads();
    (!loads.is_empty()).then(|| MemoryCheck {
        loads,
        wrt: wrt.to_vec(),
        site,
    })
}
