//! The MLP's custom backward kernels against derived ones (issue 31): the kernel AD cannot
//! derive the MLP's own forward products (workgroup tiles inside a run-time loop over `K`), so
//! each custom backward kernel of a linear layer (`linear_backward_weight`, `bias_grad`,
//! `linear_backward_input_<act>`) is checked against the derived backward pass of a plain
//! forward kernel of the same layer, `z = act(x_prev) W^T + b` (one invocation per element of
//! `z`), on the custom kernel's own case data (odd sizes, batch 1 among them), on the
//! interpreter (race, bounds and barrier checks on). Each side is also checked against `f64`
//! elsewhere (`tests/mlp_kernels.rs`, `tests/autodiff_kernels.rs`); this test says the two
//! ways of getting the layer's gradients agree.

use mlp::activation::Activation;
use mlp::kernels::uniforms::LinearDims;
use mlp_verified::ops::{self, CHECKED_SIZES, CaseSizes};
use wgsl_dsl::autodiff::{Data as AdData, Derive, derive, run_backward};
use wgsl_dsl::prelude::*;
use wgsl_dsl_harness::{Case, Data, Executor, Interpreter, SeedableRng, VerifiedOp, run};
use wgsl_dsl_workspace_tests::Rng;

/// `z[r, o] = sum_i act(x_prev[r, i]) w[o, i] + b[o]` (`[batch, outputs]`, row-major; `act`
/// `None`: the identity), over a 2-D grid (`o = gid.x`, `r = gid.y`); the sum unrolled over
/// the `inputs` known here.
fn dense(act: Option<Activation>, batch: u32, inputs: u32, outputs: u32) -> KernelBuilder {
    let mut k = KernelBuilder::new("dense_reference", [8, 8, 1]);
    let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x_prev");
    let w = k.storage::<RuntimeArray<f32>, ReadOnly>("w");
    let b = k.storage::<RuntimeArray<f32>, ReadOnly>("b");
    let z = k.storage::<RuntimeArray<f32>, ReadWrite>("z");
    let o = k.let_("o", global_invocation_id().x());
    let r = k.let_("r", global_invocation_id().y());
    k.if_(o.lt(outputs).and(r.lt(batch)), |k| {
        let mut sum = b.at(&o).load();
        for i in 0..inputs {
            let xi = x.at(&r * inputs + i).load();
            let a = k.let_("a", act.map_or(xi.clone(), |f| f.apply(&xi)));
            sum = sum + a * w.at(&o * inputs + i).load();
        }
        k.store(&z.at(&r * outputs + &o), sum);
    });
    k
}

/// The verified ops' checked sizes, and batch 1.
fn sizes() -> Vec<CaseSizes> {
    let mut v = CHECKED_SIZES.to_vec();
    v.push(CaseSizes::new(1, 13, 7, 3));
    v
}

fn f32s(d: &Data) -> &[f32] {
    match d {
        Data::F32(v) => v,
        other => panic!("an f32 buffer, not {other:?}"),
    }
}

#[track_caller]
fn close(what: &str, custom: &[f32], derived: &[f32]) {
    assert_eq!(custom.len(), derived.len(), "{what}");
    assert!(custom.iter().any(|v| *v != 0.0), "{what}: all zero");
    for (j, (c, d)) in custom.iter().zip(derived).enumerate() {
        assert!(
            (c - d).abs() <= 1e-4 * c.abs().max(1.0),
            "{what}[{j}]: custom {c}, derived {d}"
        );
    }
}

/// The custom kernel `name` run on the interpreter over its own case for `sizes`: the case
/// and every binding's contents after.
fn custom(name: &str, seed: u64, sizes: &ops::CaseSizes) -> (Case, Vec<Data>) {
    let op = ops::all()
        .into_iter()
        .find(|o| o.name() == name)
        .unwrap_or_else(|| panic!("no verified op {name}"));
    let case = op.case(&mut Rng::seed_from_u64(seed), sizes);
    let cpu = Interpreter::new();
    let kernel = Executor::build_and_compile(&cpu, &op.kernel()).expect("compiles");
    let after = run(&cpu, &kernel, &case).expect("runs");
    (case, after)
}

/// The derived gradients of [`dense`] for incoming gradient `dy` at `x_prev`, `w`, `b`.
fn derived(
    act: Option<Activation>,
    d: &LinearDims,
    x_prev: &[f32],
    w: &[f32],
    b: &[f32],
    dy: &[f32],
) -> wgsl_dsl::autodiff::Gradients {
    let (batch, inputs, outputs) = (d.batch, d.inputs, d.outputs);
    let forward = dense(act, batch, inputs, outputs);
    let backward = derive(&forward, &Derive::new()).expect("derives");
    run_backward(
        &backward,
        &[
            ("x_prev", AdData::F32(x_prev.to_vec())),
            ("w", AdData::F32(w.to_vec())),
            ("b", AdData::F32(b.to_vec())),
        ],
        &[("z", dy.to_vec())],
        [outputs.div_ceil(8), batch.div_ceil(8), 1],
        &Interpreter::new(),
    )
    .expect("the derived pass runs")
}

#[test]
fn weight_and_bias_gradients_match_the_derived_ones() {
    for (n, sizes) in sizes().iter().enumerate() {
        let seed = 300 + n as u64;
        // linear_backward_weight: [dims, dy, x, grads]; dW at weight_offset.
        let (case, after) = custom("linear_backward_weight", seed, sizes);
        let d: LinearDims = case.value(0);
        let (i, o) = (d.inputs as usize, d.outputs as usize);
        let (dy, x) = (f32s(&case.buffers[1]), f32s(&case.buffers[2]));
        let w: Vec<f32> = (0..o * i).map(|j| (j % 7) as f32 * 0.1 - 0.3).collect();
        let b = vec![0.0; o];
        // No activation: x_prev is the layer's input itself.
        let g = derived(None, &d, x, &w, &b, dy);
        let wo = d.weight_offset as usize;
        close(
            &format!("dW (sizes {sizes:?})"),
            &f32s(&after[3])[wo..wo + o * i],
            g.get("w").expect("dW"),
        );

        // bias_grad: [dims, dy, grads]; db at bias_offset (its own case, more rows).
        let (case, after) = custom("bias_grad", seed, sizes);
        let d: LinearDims = case.value(0);
        let (i, o) = (d.inputs as usize, d.outputs as usize);
        let dy = f32s(&case.buffers[1]);
        let x = vec![0.5; d.batch as usize * i];
        let w = vec![0.25; o * i];
        let g = derived(None, &d, &x, &w, &vec![0.0; o], dy);
        let bo = d.bias_offset as usize;
        close(
            &format!("db (sizes {sizes:?})"),
            &f32s(&after[2])[bo..bo + o],
            g.get("b").expect("db"),
        );
    }
}

#[test]
fn input_gradients_match_the_derived_ones() {
    // Activations whose backward reads the pre-activation z (relu and leaky-relu read the
    // output instead, and their case holds outputs).
    for act in Activation::ALL
        .into_iter()
        .filter(|a| !a.backward_reads_output())
    {
        for (n, sizes) in sizes().iter().enumerate() {
            // linear_backward_input_<act>: [dims, dy, params, saved z_prev, dx].
            let name = format!("linear_backward_input_{}", act.ident());
            let (case, after) = custom(&name, 400 + n as u64, sizes);
            let d: LinearDims = case.value(0);
            let (i, o) = (d.inputs as usize, d.outputs as usize);
            let (dy, params, z_prev) = (
                f32s(&case.buffers[1]),
                f32s(&case.buffers[2]),
                f32s(&case.buffers[3]),
            );
            let (wo, bo) = (d.weight_offset as usize, d.bias_offset as usize);
            let g = derived(
                Some(act),
                &d,
                z_prev,
                &params[wo..wo + o * i],
                &params[bo..bo + o],
                dy,
            );
            close(
                &format!("{name} dx (sizes {sizes:?})"),
                f32s(&after[4]),
                g.get("x_prev").expect("dx"),
            );
        }
    }
}
