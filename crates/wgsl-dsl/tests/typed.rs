//! Typed kernel interfaces on the GPU (lavapipe in CI): a `#[kernel]` and a builder-written
//! kernel (`#[derive(Bindings)]`) dispatched through their argument structs, directly and in a
//! `Recorder`, against CPU results on odd sizes with poisoned outputs; a kernel whose bindings
//! differ from its argument struct is refused when compiled.

use wgsl_dsl::prelude::*;
use wgsl_dsl::runtime::{DispatchError, DispatchErrorKind, Gpu, GpuBuffer, KernelDef};

include!("kernels/step.rs");

/// `params[i] -= lr * grads[i]`, on a 2D grid of workgroups for any length.
#[kernel(workgroup_size = 64, grid = |len: usize| [(len as u32).div_ceil(64).min(8), (len as u32).div_ceil(64 * 8), 1])]
fn descend(
    #[uniform] step: Step,
    #[storage(read)] grads: &[f32],
    #[storage(read_write)] params: &mut [f32],
    #[builtin(global_invocation_id)] gid: Vec3<u32>,
) {
    let i = gid.x + gid.y * 512u32;
    if i < step.len {
        params[i] -= step.lr * grads[i];
    }
}

fn gpu() -> Gpu {
    Gpu::new().expect("a GPU adapter (install mesa-vulkan-drivers for lavapipe)")
}

/// `n` values in `[-2, 2)`, none zero-heavy.
fn values(n: usize, seed: u32) -> Vec<f32> {
    (0..n as u32)
        .map(|i| ((i.wrapping_mul(2_654_435_761) ^ seed) % 1000) as f32 / 250.0 - 2.0)
        .collect()
}

#[test]
fn a_kernel_runs_through_its_argument_struct() {
    let gpu = gpu();
    let kernel = gpu.compile_typed(Descend).expect("compiles");
    // 4099 elements need two rows of the 8-workgroup-wide grid.
    for n in [1usize, 37, 4099] {
        let (g, p) = (values(n, 1), values(n, 2));
        let step = Step {
            lr: 0.5,
            len: n as u32,
            _pad0: 0,
            _pad1: 0,
        };
        let step = GpuBuffer::from_value(&gpu, step).unwrap();
        let grads = GpuBuffer::from_slice(&gpu, &g).unwrap();
        let mut params = GpuBuffer::from_slice(&gpu, &p).unwrap();
        let args = DescendArgs {
            step: &step,
            grads: &grads,
            params: &mut params,
        };
        kernel.dispatch(&gpu, args, n).expect("dispatch");
        let want: Vec<f32> = p.iter().zip(&g).map(|(p, g)| p - 0.5 * g).collect();
        assert_eq!(params.read(&gpu).unwrap(), want, "n = {n}");
    }
}

#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable, WgslStruct)]
#[repr(C)]
#[wgsl(uniform)]
struct Shape {
    rows: u32,
    cols: u32,
    _pad0: u32,
    _pad1: u32,
}

/// `out[r, c] = scale * m[c, r]` for `m [cols, rows]`: a builder kernel with a 2D problem size.
#[derive(Bindings)]
struct TransposeBindings {
    #[uniform]
    shape: Place<Shape, ReadOnly>,
    m: Buffer<f32, ReadOnly>,
    out: Buffer<f32, ReadWrite>,
}

#[derive(Clone, Copy, Debug)]
struct Transpose {
    scale: f32,
    /// Declare the bindings by hand in another order than `TransposeBindings`.
    reorder: bool,
}

impl KernelDef for Transpose {
    type Args<'a> = TransposeArgs<'a>;
    /// `(rows, cols)` of the output.
    type Size = (u32, u32);
    fn build(&self) -> KernelBuilder {
        let mut k = KernelBuilder::new("transpose", [8, 8, 1]);
        let TransposeBindings { shape, m, out } = if self.reorder {
            let m = k.storage("m");
            let shape = k.uniform("shape");
            let out = k.storage("out");
            TransposeBindings { shape, m, out }
        } else {
            k.bindings()
        };
        let (r, c) = (global_invocation_id().y(), global_invocation_id().x());
        let rows = k.let_("rows", shape.rows().load());
        let cols = k.let_("cols", shape.cols().load());
        k.if_(r.lt(&rows).and(c.lt(&cols)), |k| {
            k.store(
                &out.at(&r * &cols + &c),
                m.at(&c * &rows + &r).load() * self.scale,
            );
        });
        k
    }
    fn workgroups(&self, (rows, cols): (u32, u32)) -> [u32; 3] {
        [cols.div_ceil(8), rows.div_ceil(8), 1]
    }
}

#[test]
fn a_builder_kernel_records_through_its_argument_struct() {
    let gpu = gpu();
    let def = Transpose {
        scale: 3.0,
        reorder: false,
    };
    let kernel = gpu.compile_typed(def).expect("compiles");
    let (rows, cols) = (13u32, 37u32);
    let m_host = values((rows * cols) as usize, 3);
    let m = GpuBuffer::from_slice(&gpu, &m_host).unwrap();
    let shape = GpuBuffer::from_value(
        &gpu,
        Shape {
            rows,
            cols,
            _pad0: 0,
            _pad1: 0,
        },
    )
    .unwrap();
    let mut out = GpuBuffer::from_slice(&gpu, &vec![f32::NAN; m_host.len()]).unwrap();
    let mut twice = GpuBuffer::from_slice(&gpu, &vec![f32::NAN; m_host.len()]).unwrap();
    let mut rec = gpu.recorder();
    let args = |out| TransposeArgs {
        shape: &shape,
        m: &m,
        out,
    };
    kernel
        .record(&mut rec, args(&mut out), (rows, cols))
        .unwrap();
    kernel
        .record(&mut rec, args(&mut twice), (rows, cols))
        .unwrap();
    assert_eq!(rec.dispatches(), 2);
    rec.submit().unwrap();
    let (rows, cols) = (rows as usize, cols as usize);
    let mut want = vec![0.0f32; rows * cols];
    for r in 0..rows {
        for c in 0..cols {
            want[r * cols + c] = m_host[c * rows + r] * 3.0;
        }
    }
    assert_eq!(out.read(&gpu).unwrap(), want);
    assert_eq!(twice.read(&gpu).unwrap(), want);
}

#[test]
fn a_kernel_whose_bindings_differ_from_its_arguments_is_refused() {
    let gpu = gpu();
    let def = Transpose {
        scale: 1.0,
        reorder: true,
    };
    let err = gpu.compile_typed(def).unwrap_err();
    assert!(
        matches!(&err, DispatchError { kernel: Some(kernel), kind: DispatchErrorKind::Interface { message }, .. }
            if kernel == "transpose" && message.contains("binding 0 is `m`")),
        "{err}"
    );
}
