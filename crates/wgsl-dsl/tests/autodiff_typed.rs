//! The typed backward pass `#[kernel(differentiable)]` makes: `NameBackwardArgs<'a>` (the
//! forward kernel's bindings, `d_<output>`, `d_<input>`), `DifferentiableDef` for `Name`,
//! `Gpu::compile_backward` and `TypedBackward::dispatch` over the forward kernel's problem
//! size. Gradients are compared with closed forms evaluated in `f64` on odd sizes, the
//! gradient buffers filled first with a known value (the pass adds into them), on the test
//! adapter (lavapipe in CI).

mod autodiff_support;

use wgsl_dsl::autodiff::{Accumulation, Role};
use wgsl_dsl::prelude::*;
use wgsl_dsl::runtime::{DifferentiableDef, DispatchError, DispatchErrorKind, Gpu, GpuBuffer};

include!("kernels/softplus_scaled.rs");

/// `out[r * n + c] = x[c] * w[r]` on a 2-D grid: every row reads `x[c]` and every column
/// `w[r]`, so both gradients are accumulated atomically (bound from `GpuBuffer<f32>`s).
#[kernel(workgroup_size = [8, 4, 1], differentiable)]
fn outer(
    #[uniform] n: u32,
    #[storage(read)] x: &[f32],
    #[storage(read)] w: &[f32],
    #[storage(read_write)] out: &mut [f32],
    #[builtin(global_invocation_id)] gid: Vec3<u32>,
) {
    let c = gid.x;
    let r = gid.y;
    if c < n && r < w.len() {
        out[r * n + c] = x[c] * w[r];
    }
}

/// `no_diff(x)`: `x` is data, the struct has no `d_x`.
#[kernel(workgroup_size = 64, differentiable(no_diff(x)))]
fn weighted(
    #[storage(read)] x: &[f32],
    #[storage(read)] w: &[f32],
    #[storage(read_write)] y: &mut [f32],
    #[builtin(global_invocation_id)] gid: Vec3<u32>,
) {
    let i = gid.x;
    if i < y.len() {
        y[i] = x[i] * w[i] * w[i];
    }
}

/// Test data in `[-2.0, 2.0)`.
fn random(n: usize, seed: u64) -> Vec<f32> {
    autodiff_support::uniform(n, seed, -2.0, 2.0)
}

fn assert_close(what: &str, got: &[f32], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let err = (f64::from(g) - w).abs();
        assert!(
            err <= tol * (1.0 + w.abs()),
            "{what}[{i}]: got {g}, want {w} (error {err:e})"
        );
    }
}

#[test]
fn a_typed_backward_pass_adds_the_gradient_into_its_buffers() {
    let gpu = Gpu::new().expect("a GPU or lavapipe");
    let s = 0.75f32;
    let def = SoftplusScaled { s };
    let pass = gpu.compile_backward(def.clone()).expect("compiles");
    assert_eq!(
        pass.backward().choices[0].accumulation,
        Accumulation::Exclusive
    );
    let n = 1001;
    let x = random(n, 1);
    let dy = random(n, 2);
    let start = random(n, 3);
    let xb = GpuBuffer::from_slice(&gpu, &x).unwrap();
    let yb = GpuBuffer::from_slice(&gpu, &vec![f32::NAN; n]).unwrap();
    let dyb = GpuBuffer::from_slice(&gpu, &dy).unwrap();
    let mut dxb = GpuBuffer::from_slice(&gpu, &start).unwrap();
    pass.dispatch(
        &gpu,
        &SoftplusScaledBackwardArgs {
            x: &xb,
            y: &yb,
            d_y: &dyb,
            d_x: &mut dxb,
        },
        [n as u32, 1, 1],
    )
    .expect("runs");
    // d/dx log(exp(s x) + 1) = s sigmoid(s x).
    let want: Vec<f64> = (0..n)
        .map(|i| {
            let v = f64::from(s) * f64::from(x[i]);
            f64::from(start[i]) + f64::from(dy[i]) * f64::from(s) / (1.0 + (-v).exp())
        })
        .collect();
    assert_close("d_x", &dxb.read(&gpu).unwrap(), &want, 1e-6);
}

#[test]
fn an_atomic_gradient_binds_from_a_float_buffer_and_the_size_is_the_forward_size() {
    let gpu = Gpu::new().expect("a GPU or lavapipe");
    let pass = gpu.compile_backward(Outer).expect("compiles");
    let scheme = |input: &str| {
        pass.backward()
            .choices
            .iter()
            .find(|c| c.input == input)
            .map(|c| c.accumulation)
    };
    assert_eq!(scheme("x"), Some(Accumulation::Atomic));
    assert_eq!(scheme("w"), Some(Accumulation::Atomic));
    // Odd sizes: 37 columns (not a multiple of 8), 11 rows (not of 4).
    let (n, m) = (37usize, 11usize);
    let x = random(n, 4);
    let w = random(m, 5);
    let dout = random(n * m, 6);
    let nb = GpuBuffer::from_value(&gpu, n as u32).unwrap();
    let xb = GpuBuffer::from_slice(&gpu, &x).unwrap();
    let wb = GpuBuffer::from_slice(&gpu, &w).unwrap();
    let outb = GpuBuffer::<f32>::zeroed(&gpu, n * m).unwrap();
    let doutb = GpuBuffer::from_slice(&gpu, &dout).unwrap();
    let mut dxb = GpuBuffer::<f32>::zeroed(&gpu, n).unwrap();
    let mut dwb = GpuBuffer::<f32>::zeroed(&gpu, m).unwrap();
    pass.dispatch(
        &gpu,
        &OuterBackwardArgs {
            n: &nb,
            x: &xb,
            w: &wb,
            out: &outb,
            d_out: &doutb,
            d_x: &mut dxb,
            d_w: &mut dwb,
        },
        [n as u32, m as u32, 1],
    )
    .expect("runs");
    let dx: Vec<f64> = (0..n)
        .map(|c| {
            (0..m)
                .map(|r| f64::from(dout[r * n + c]) * f64::from(w[r]))
                .sum()
        })
        .collect();
    let dw: Vec<f64> = (0..m)
        .map(|r| {
            (0..n)
                .map(|c| f64::from(dout[r * n + c]) * f64::from(x[c]))
                .sum()
        })
        .collect();
    // Sums of 11 and 37 products in f32, in any order.
    assert_close("d_x", &dxb.read(&gpu).unwrap(), &dx, 1e-5);
    assert_close("d_w", &dwb.read(&gpu).unwrap(), &dw, 1e-5);
}

#[test]
fn no_diff_leaves_a_binding_without_gradient_and_the_roles_match_the_fields() {
    let gpu = Gpu::new().expect("a GPU or lavapipe");
    let backward = Weighted.backward().expect("derives");
    let roles: Vec<(&str, &Role)> = backward.kernels[0]
        .roles
        .iter()
        .map(|(n, r)| (n.as_str(), r))
        .collect();
    assert!(roles.iter().all(|(n, _)| *n != "d_x"), "{roles:?}");
    let pass = gpu.compile_backward(Weighted).expect("compiles");
    let n = 77;
    let x = random(n, 7);
    let w = random(n, 8);
    let dy = random(n, 9);
    let (xb, wb) = (
        GpuBuffer::from_slice(&gpu, &x).unwrap(),
        GpuBuffer::from_slice(&gpu, &w).unwrap(),
    );
    let yb = GpuBuffer::<f32>::zeroed(&gpu, n).unwrap();
    let dyb = GpuBuffer::from_slice(&gpu, &dy).unwrap();
    let mut dwb = GpuBuffer::<f32>::zeroed(&gpu, n).unwrap();
    // The struct has `d_w` and no `d_x` (a `d_x` field would not compile).
    let args = WeightedBackwardArgs {
        x: &xb,
        w: &wb,
        y: &yb,
        d_y: &dyb,
        d_w: &mut dwb,
    };
    pass.dispatch(&gpu, &args, [n as u32, 1, 1]).expect("runs");
    let want: Vec<f64> = (0..n)
        .map(|i| 2.0 * f64::from(dy[i]) * f64::from(x[i]) * f64::from(w[i]))
        .collect();
    assert_close("d_w", &dwb.read(&gpu).unwrap(), &want, 1e-6);
}

/// A gradient buffer of the wrong length is refused before anything runs, naming the binding
/// (bound as it is, the pass would write past its end: robust buffer access drops those
/// writes, a silently wrong gradient).
#[test]
fn a_gradient_of_the_wrong_length_is_refused() {
    let gpu = Gpu::new().expect("a GPU or lavapipe");
    let pass = gpu
        .compile_backward(SoftplusScaled { s: 1.0 })
        .expect("compiles");
    let n = 40;
    let xb = GpuBuffer::from_slice(&gpu, &random(n, 10)).unwrap();
    let yb = GpuBuffer::<f32>::zeroed(&gpu, n).unwrap();
    let dyb = GpuBuffer::<f32>::zeroed(&gpu, n).unwrap();
    // The backward pass's dispatch with the incoming gradient `d_y` and the gradient `d_x`.
    let dispatch = |d_y: &GpuBuffer<f32>, d_x: &mut GpuBuffer<f32>| {
        let args = SoftplusScaledBackwardArgs {
            x: &xb,
            y: &yb,
            d_y,
            d_x,
        };
        pass.dispatch(&gpu, &args, [n as u32, 1, 1])
    };
    let mut short = GpuBuffer::<f32>::zeroed(&gpu, 3).unwrap();
    let err = dispatch(&dyb, &mut short).expect_err("a 3-element gradient for a 40-element input");
    assert!(
        matches!(
            err,
            DispatchError {
                kind: DispatchErrorKind::Interface { .. },
                ..
            }
        ),
        "{err}"
    );
    assert!(
        err.to_string().contains("`d_x` holds 3 elements, `x` 40"),
        "{err}"
    );
    // The incoming gradient likewise.
    let short_dy = GpuBuffer::<f32>::zeroed(&gpu, 39).unwrap();
    let mut dxb = GpuBuffer::<f32>::zeroed(&gpu, n).unwrap();
    let err = dispatch(&short_dy, &mut dxb)
        .expect_err("a 39-element incoming gradient for a 40-element output");
    assert!(
        err.to_string().contains("`d_y` holds 39 elements, `y` 40"),
        "{err}"
    );
}
