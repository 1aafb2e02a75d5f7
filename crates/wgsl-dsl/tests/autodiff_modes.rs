//! Reverse and forward mode on whole expressions: random DAGs with shared nodes, `let`s and
//! inlined helper calls against central differences of an f64 evaluation of the same DAG;
//! the dot-product test `<J t, g> = <t, J^T g>` on vector-valued functions of vector
//! variables; `f16`; derivatives of derivatives; what a variable is (a node, a `let`).

mod autodiff_support;

use autodiff_support::{On, central_difference, close, run};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use wgsl_dsl::interp::{HostBuffer, Interpreter};
use wgsl_dsl::prelude::*;

/// One node of a random DAG over the variables, all of it smooth and bounded for inputs in
/// `[-1, 1]` (so that central differences are exact to ~1e-9 in f64).
#[derive(Clone, Copy, Debug)]
enum Op {
    Var(usize),
    Sin(usize),
    Cos(usize),
    Tanh(usize),
    Atan(usize),
    HalfSquare(usize),
    Gauss(usize),
    Hypot1(usize),
    Mean(usize, usize),
    HalfDiff(usize, usize),
    Mul(usize, usize),
    MulTanh(usize, usize),
    Atan2(usize, usize),
    Mix(usize, usize),
    Fma(usize, usize),
    /// A call of the helper `h(a, b) = a * sin(b) + b * 0.5` (its body is a `let` and a
    /// `return`, so it is inlined into the derivative).
    Helper(usize, usize),
}

struct Dag {
    ops: Vec<(Op, bool)>,
}

fn random_dag(rng: &mut StdRng, vars: usize, len: usize) -> Dag {
    let mut ops: Vec<(Op, bool)> = (0..vars).map(|v| (Op::Var(v), false)).collect();
    while ops.len() < len {
        let n = ops.len();
        // Prefer recent nodes, but reach back: values get shared.
        let mut pick = || {
            if rng.random_bool(0.5) {
                n - 1 - rng.random_range(0..n.min(4))
            } else {
                rng.random_range(0..n)
            }
        };
        let (a, b) = (pick(), pick());
        let op = match rng.random_range(0..16) {
            0 => Op::Sin(a),
            1 => Op::Cos(a),
            2 => Op::Tanh(a),
            3 => Op::Atan(a),
            4 => Op::HalfSquare(a),
            5 => Op::Gauss(a),
            6 => Op::Hypot1(a),
            7 => Op::Mean(a, b),
            8 => Op::HalfDiff(a, b),
            9 => Op::Mul(a, b),
            10 => Op::MulTanh(a, b),
            11 => Op::Atan2(a, b),
            12 => Op::Mix(a, b),
            13 => Op::Fma(a, b),
            _ => Op::Helper(a, b),
        };
        ops.push((op, rng.random_bool(0.3)));
    }
    Dag { ops }
}

impl Dag {
    fn eval(&self, x: &[f64]) -> f64 {
        let mut v: Vec<f64> = Vec::with_capacity(self.ops.len());
        for (op, _) in &self.ops {
            let r = match *op {
                Op::Var(j) => x[j],
                Op::Sin(a) => v[a].sin(),
                Op::Cos(a) => v[a].cos(),
                Op::Tanh(a) => v[a].tanh(),
                Op::Atan(a) => v[a].atan(),
                Op::HalfSquare(a) => v[a] * v[a] * 0.5,
                Op::Gauss(a) => (-v[a] * v[a]).exp(),
                Op::Hypot1(a) => (v[a] * v[a] + 1.0).sqrt(),
                Op::Mean(a, b) => (v[a] + v[b]) * 0.5,
                Op::HalfDiff(a, b) => (v[a] - v[b]) * 0.5,
                Op::Mul(a, b) => v[a] * v[b],
                Op::MulTanh(a, b) => v[a] * v[b].tanh(),
                Op::Atan2(a, b) => v[a].atan2(v[b] + 2.0),
                Op::Mix(a, b) => v[a] * 0.7 + v[b] * 0.3,
                Op::Fma(a, b) => v[a] * v[b] + 0.25,
                Op::Helper(a, b) => v[a] * v[b].sin() + v[b] * 0.5,
            };
            v.push(r);
        }
        *v.last().expect("a DAG has nodes")
    }

    /// The DSL expression of the DAG over `x`: each node built once and shared by its uses
    /// (the same `Exp`), some bound with `let_`.
    fn build(
        &self,
        k: &mut KernelBuilder,
        x: &[Exp<f32>],
        h: &Function<(f32, f32), f32>,
    ) -> Exp<f32> {
        let mut v: Vec<Exp<f32>> = Vec::with_capacity(self.ops.len());
        for (i, (op, bind)) in self.ops.iter().enumerate() {
            let e = match *op {
                Op::Var(j) => x[j].clone(),
                Op::Sin(a) => sin(&v[a]),
                Op::Cos(a) => cos(&v[a]),
                Op::Tanh(a) => tanh(&v[a]),
                Op::Atan(a) => atan(&v[a]),
                Op::HalfSquare(a) => &v[a] * &v[a] * 0.5f32,
                Op::Gauss(a) => exp(-(&v[a] * &v[a])),
                Op::Hypot1(a) => sqrt(&v[a] * &v[a] + 1.0f32),
                Op::Mean(a, b) => (&v[a] + &v[b]) * 0.5f32,
                Op::HalfDiff(a, b) => (&v[a] - &v[b]) * 0.5f32,
                Op::Mul(a, b) => &v[a] * &v[b],
                Op::MulTanh(a, b) => &v[a] * tanh(&v[b]),
                Op::Atan2(a, b) => atan2(&v[a], &v[b] + 2.0f32),
                Op::Mix(a, b) => mix(&v[a], &v[b], 0.3f32),
                Op::Fma(a, b) => fma(&v[a], &v[b], 0.25f32),
                Op::Helper(a, b) => k.call(h, (v[a].clone(), v[b].clone())),
            };
            let e = if *bind && !matches!(op, Op::Var(_)) {
                k.let_(&format!("v{i}"), e)
            } else {
                e
            };
            v.push(e);
        }
        v.pop().expect("a DAG has nodes")
    }
}

/// Gradient and directional derivative of random DAGs over 4 variables (40 nodes each, many
/// shared), at 37 random points each, against central differences of the f64 evaluation.
#[test]
fn random_shared_dags_against_central_differences_in_both_modes() {
    const VARS: usize = 4;
    const POINTS: usize = 37;
    let mut rng = StdRng::seed_from_u64(23);
    for (d, executor) in (0..12).zip([On::Interpreter, On::Gpu].into_iter().cycle()) {
        let dag = random_dag(&mut rng, VARS, 40);
        let mut k = KernelBuilder::new(format!("dag{d}"), [32, 1, 1]);
        let xs_b = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
        let ts_b = k.storage::<RuntimeArray<f32>, ReadOnly>("t");
        let grad_b = k.storage::<RuntimeArray<f32>, ReadWrite>("grad");
        let jvp_b = k.storage::<RuntimeArray<f32>, ReadWrite>("jvp");
        let h = k.function::<(f32, f32), f32>("h", ["a", "b"], |k, (a, b)| {
            let s = k.let_("s", sin(&b));
            a * s + b * 0.5f32
        });
        let i = k.let_("i", global_invocation_id().x());
        k.if_(i.lt(jvp_b.len()), |k| {
            let x: Vec<Exp<f32>> = (0..VARS as u32)
                .map(|j| k.let_(&format!("x{j}"), xs_b.at(&i * VARS as u32 + j).load()))
                .collect();
            let y = dag.build(k, &x, &h);
            let vars: Vec<&Exp<f32>> = x.iter().collect();
            let g = k.grad(&y, vars.as_slice());
            for (j, gj) in g.iter().enumerate() {
                k.store(&grad_b.at(&i * VARS as u32 + j as u32), gj);
            }
            let tangents: Vec<_> = (0..VARS)
                .map(|j| tangent(&x[j], ts_b.at(&i * VARS as u32 + j as u32).load()))
                .collect();
            let dy = k.jvp(&y, tangents);
            k.store(&jvp_b.at(&i), dy);
        });
        let shader = k.build().unwrap_or_else(|e| panic!("dag {d}: {e}"));
        let xs: Vec<f32> = (0..POINTS * VARS)
            .map(|_| rng.random_range(-1.0f32..1.0))
            .collect();
        let ts: Vec<f32> = (0..POINTS * VARS)
            .map(|_| rng.random_range(-1.0f32..1.0))
            .collect();
        let out = run(
            executor,
            &shader,
            &[&xs, &ts],
            &[POINTS * VARS, POINTS],
            [2, 1, 1],
        );
        for p in 0..POINTS {
            let x: Vec<f64> = (0..VARS).map(|j| f64::from(xs[p * VARS + j])).collect();
            let mut directional = 0.0;
            for j in 0..VARS {
                let fd = central_difference(|x| dag.eval(x), &x, j, 1e-6);
                directional += f64::from(ts[p * VARS + j]) * fd;
                let got = f64::from(out[0][p * VARS + j]);
                assert!(
                    close(got, fd, 1e-4),
                    "dag {d} ({executor:?}) at {x:?}: d/dx{j} = {got}, central difference {fd}\n{:?}",
                    dag.ops
                );
            }
            let got = f64::from(out[1][p]);
            assert!(
                close(got, directional, 4e-4),
                "dag {d} ({executor:?}) at {x:?}: jvp = {got}, want {directional}"
            );
        }
    }
}

/// `<J t, g> = <t, J^T g>` for vector-valued functions of a `vec3` and a scalar, each side
/// computed by the kernel from random `t` and `g`.
#[test]
fn forward_and_reverse_mode_agree_on_vector_functions() {
    type F = fn(&Exp<Vec3<f32>>, &Exp<f32>) -> Exp<Vec2<f32>>;
    let functions: [(&str, F); 4] = [
        ("trig", |v, s| {
            vec2(
                dot(sin(v) * s, normalize(v + vec3(2.0f32, 0.0f32, 0.0f32))),
                length(cross(v, vec3(s.clone(), lit(1.0f32), lit(2.0f32)))),
            )
        }),
        ("swizzles", |v, s| {
            v.xy() * exp(s * 0.5f32) + vec2(v.z() * v.x(), tanh(s))
        }),
        ("select_clamp", |v, s| {
            let c = clamp(
                v,
                Exp::<Vec3<f32>>::splat(-0.5f32),
                Exp::<Vec3<f32>>::splat(0.5f32),
            );
            let m = v.gt(Exp::<Vec3<f32>>::splat(0.0f32)).select(v * s, c);
            vec2(
                dot(&m, &m),
                max(v.y(), s.clone()) + distance(v, Exp::<Vec3<f32>>::splat(3.0f32)),
            )
        }),
        ("reflect_mix", |v, s| {
            let r = reflect(v, normalize(vec3(1.0f32, s.clone(), 0.5f32)));
            mix(
                r.xy(),
                vec2(v.y(), v.z()),
                Exp::<Vec2<f32>>::splat(sin(s) * 0.5f32 + 0.5f32),
            )
        }),
    ];
    const N: usize = 45;
    let mut rng = StdRng::seed_from_u64(99);
    for (name, f) in functions {
        let mut k = KernelBuilder::new(name, [64, 1, 1]);
        let data = k.storage::<RuntimeArray<f32>, ReadOnly>("data");
        let out = k.storage::<RuntimeArray<f32>, ReadWrite>("out");
        let i = k.let_("i", global_invocation_id().x());
        k.if_(i.lt(out.len() / 2u32), |k| {
            let at = |j: u32| data.at(&i * 12u32 + j).load();
            let v = k.let_("v", vec3(at(0), at(1), at(2)));
            let s = k.let_("s", at(3));
            let tv = vec3(at(4), at(5), at(6));
            let ts = at(7);
            let g = vec2(at(8), at(9));
            let y = f(&v, &s);
            let jt = k.jvp(&y, [tangent(&v, tv.clone()), tangent(&s, ts.clone())]);
            let (gv, gs) = k.vjp(&y, g.clone(), (&v, &s));
            k.store(&out.at(&i * 2u32), dot(jt, g));
            k.store(&out.at(&i * 2u32 + 1u32), dot(gv, tv) + gs * ts);
        });
        let shader = k.build().unwrap_or_else(|e| panic!("{name}: {e}"));
        let data: Vec<f32> = (0..N * 12)
            .map(|_| rng.random_range(-1.0f32..1.0))
            .collect();
        for executor in [On::Interpreter, On::Gpu] {
            let r = run(executor, &shader, &[&data], &[2 * N], [1, 1, 1]);
            for p in 0..N {
                let (fwd, rev) = (f64::from(r[0][2 * p]), f64::from(r[0][2 * p + 1]));
                assert!(
                    close(fwd, rev, 1e-5),
                    "{name} ({executor:?}) point {p}: <Jt, g> = {fwd}, <t, J^T g> = {rev}"
                );
            }
        }
    }
}

/// f16 (WGSL `enable f16;`), on the interpreter: scalar and vector derivatives against central
/// differences of the f64 function at f16's precision.
#[test]
fn f16_derivatives() {
    use half::f16;
    let mut k = KernelBuilder::new("f16_grad", [64, 1, 1]);
    let x = k.storage::<RuntimeArray<f16>, ReadOnly>("x");
    let out = k.storage::<RuntimeArray<f16>, ReadWrite>("out");
    let i = k.let_("i", global_invocation_id().x());
    // f16 buffers are padded to 4 bytes: 41 elements are an `array<f16>` of 42.
    k.if_(i.lt(out.len() / 3u32), |k| {
        let a = k.let_("a", x.at(&i).load());
        let v = k.let_("v", vec2(a.clone(), &a * lit(f16::from_f32(0.5))));
        let y =
            tanh(&a) * exp(-(&a * &a)) + max(&a, lit(f16::ZERO)) + dot(sin(&v), vec2(v.y(), v.x()));
        let (da, dv) = k.grad(&y, (&a, &v));
        k.store(&out.at(&i * 3u32), da);
        k.store(&out.at(&i * 3u32 + 1u32), dv.x());
        k.store(&out.at(&i * 3u32 + 2u32), dv.y());
    });
    let shader = k.build().expect("builds");
    let xs: Vec<f16> = (0..41)
        .map(|j| f16::from_f32(-1.9 + 0.0931 * j as f32))
        .collect();
    let xb = HostBuffer::from_slice(&xs);
    let ob = HostBuffer::from_slice(&vec![f16::NAN; 3 * xs.len()]);
    let cpu = Interpreter::new();
    let program = cpu.compile(&shader).expect("compiles");
    cpu.dispatch(&program, &[&xb, &ob], [1, 1, 1])
        .expect("runs");
    let got = ob.read();
    // y(a, v) = tanh(a) e^(-a^2) + max(a, 0) + sin(v0) v1 + sin(v1) v0, v = (a, a / 2)
    // held as independent variables.
    let y = |p: &[f64]| {
        let (a, v0, v1) = (p[0], p[1], p[2]);
        a.tanh() * (-a * a).exp() + a.max(0.0) + v0.sin() * v1 + v1.sin() * v0
    };
    for (j, a) in xs.iter().enumerate() {
        let a = a.to_f64();
        let p = [a, a, f64::from(f16::from_f64(a * 0.5).to_f32())];
        for c in 0..3 {
            let want = central_difference(y, &p, c, 1e-6);
            let g = got[3 * j + c].to_f64();
            assert!(
                close(g, want, 2e-2),
                "point {a}, component {c}: {g}, want {want}"
            );
        }
    }
}

/// A derivative is an expression like any other: differentiating it again gives the second
/// derivative (through the `let`s the first one made).
#[test]
fn derivatives_of_derivatives() {
    let mut k = KernelBuilder::new("second", [64, 1, 1]);
    let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    let out = k.storage::<RuntimeArray<f32>, ReadWrite>("out");
    let i = k.let_("i", global_invocation_id().x());
    k.if_(i.lt(x.len()), |k| {
        let a = k.let_("a", x.at(&i).load());
        let y = sin(&a) * &a;
        let d1 = k.grad(&y, &a); // cos(a) a + sin(a)
        let d2 = k.grad(&d1, &a); // -sin(a) a + 2 cos(a)
        let d2_fwd = k.jvp(&d1, [tangent(&a, 1.0f32)]);
        k.store(&out.at(&i * 2u32), d2);
        k.store(&out.at(&i * 2u32 + 1u32), d2_fwd);
    });
    let shader = k.build().expect("builds");
    let xs: Vec<f32> = (0..53).map(|j| -2.6 + 0.1 * j as f32).collect();
    for executor in [On::Interpreter, On::Gpu] {
        let r = run(executor, &shader, &[&xs], &[2 * xs.len()], [1, 1, 1]);
        for (j, a) in xs.iter().enumerate() {
            let a = f64::from(*a);
            let want = -a.sin() * a + 2.0 * a.cos();
            for m in 0..2 {
                let got = f64::from(r[0][2 * j + m]);
                assert!(
                    close(got, want, 1e-4),
                    "{executor:?} a = {a}: {got}, want {want}"
                );
            }
        }
    }
}

/// Variables are nodes: a `let` is one variable however often it is used; the same value
/// loaded twice is two nodes, and the derivative with respect to one of them is partial;
/// a variable's definition is not looked into.
#[test]
fn variables_are_nodes() {
    let mut k = KernelBuilder::new("partials", [1, 1, 1]);
    let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    let out = k.storage::<RuntimeArray<f32>, ReadWrite>("out");
    let first = x.at(0u32).load();
    let second = x.at(0u32).load();
    let y = &first * &second; // x0^2, as a product of two nodes
    let d_first = k.grad(&y, &first); // = second = x0
    let a = k.let_("a", x.at(1u32).load());
    let b = k.let_("b", &a * 3.0f32);
    let z = &b * &b + &a; // 9 a^2 + a
    let (da, db) = k.grad(&z, (&a, &b)); // partials: 1 and 2 b = 6 a
    let da_total = k.grad(&z, &a); // 18 a + 1
    let unrelated = k.grad(&z, &first); // 0
    for (j, v) in [d_first, da, db, da_total, unrelated]
        .into_iter()
        .enumerate()
    {
        k.store(&out.at(j as u32), v);
    }
    let shader = k.build().expect("builds");
    let r = run(On::Interpreter, &shader, &[&[1.5, 2.0]], &[5], [1, 1, 1]);
    assert_eq!(r[0], vec![1.5, 1.0, 12.0, 37.0, 0.0]);
}

fn gelu(x: &Exp<f32>) -> Exp<f32> {
    let c = 0.797_884_6f32; // sqrt(2 / pi)
    x * 0.5f32 * (tanh((x + x * x * x * 0.044715f32) * c) + 1.0f32)
}

/// The example of docs/autodiff.md: `dy * gelu'(z)` in a backward kernel.
#[test]
fn the_api_page_example() {
    let mut k = KernelBuilder::new("gelu_backward", [64, 1, 1]);
    let z = k.storage::<RuntimeArray<f32>, ReadOnly>("z");
    let dy = k.storage::<RuntimeArray<f32>, ReadOnly>("dy");
    let dz = k.storage::<RuntimeArray<f32>, ReadWrite>("dz");
    let i = k.let_("i", global_invocation_id().x());
    k.if_(i.lt(dz.len()), |k| {
        let zi = k.let_("zi", z.at(&i).load());
        let a = gelu(&zi);
        let d = k.vjp(&a, dy.at(&i).load(), &zi);
        k.store(&dz.at(&i), d);
    });
    let shader = k.build().expect("builds");
    let mut rng = StdRng::seed_from_u64(5);
    let zs: Vec<f32> = (0..77).map(|_| rng.random_range(-4.0f32..4.0)).collect();
    let dys: Vec<f32> = (0..77).map(|_| rng.random_range(-1.0f32..1.0)).collect();
    for executor in [On::Interpreter, On::Gpu] {
        let r = run(executor, &shader, &[&zs, &dys], &[77], [2, 1, 1]);
        for j in 0..77 {
            let x = f64::from(zs[j]);
            // gelu'(x) = 0.5 (1 + tanh u) + 0.5 x (1 - tanh^2 u) u', u = c (x + 0.044715 x^3)
            let c = (2.0 / std::f64::consts::PI).sqrt();
            let u = c * (x + 0.044715 * x * x * x);
            let du = c * (1.0 + 3.0 * 0.044715 * x * x);
            let want = f64::from(dys[j])
                * (0.5 * (1.0 + u.tanh()) + 0.5 * x * (1.0 - u.tanh().powi(2)) * du);
            assert!(
                close(f64::from(r[0][j]), want, 1e-5),
                "{executor:?} z = {x}: {} want {want}",
                r[0][j]
            );
        }
    }
}

/// Subgradient conventions compose: softplus written with `max` and `abs` (kinks that
/// cancel) gets 0 at exactly 0 where the derivative is 1/2; written with `select` between
/// smooth branches it is right everywhere (docs/autodiff.md, "Semantics to know").
#[test]
fn kink_conventions_compose() {
    let mut k = KernelBuilder::new("softplus", [1, 1, 1]);
    let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    let out = k.storage::<RuntimeArray<f32>, ReadWrite>("out");
    let v = k.let_("v", x.at(0u32).load());
    let kinked = max(&v, 0.0f32) + log(exp(-abs(&v)) + 1.0f32);
    let smooth = select(
        log(exp(&v) + 1.0f32),
        &v + log(exp(-&v) + 1.0f32),
        v.gt(0.0f32),
    );
    let a = k.grad(&kinked, &v);
    let b = k.grad(&smooth, &v);
    k.store(&out.at(0u32), a);
    k.store(&out.at(1u32), b);
    let shader = k.build().expect("builds");
    let r = run(On::Interpreter, &shader, &[&[0.0]], &[2], [1, 1, 1]);
    assert_eq!(r[0], vec![0.0, 0.5]);
}
