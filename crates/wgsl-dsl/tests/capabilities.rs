//! Kernels that need more than portable WGSL: subgroup operations and `f16`. Each declares the
//! capability in its signature, fails to build for a target without it, and runs where the
//! adapter has it (lavapipe has both).

use naga::valid::Capabilities;
use wgsl_dsl::prelude::*;
use wgsl_dsl::runtime::{Gpu, GpuBuffer, wgpu};
use wgsl_dsl::{BuildError, TargetLimits};

mod common;
use common::{compiled_on, missing_capability};

const WG: u32 = 64;

/// `k` built for the default target, whose signature declares `capability`.
fn built_declaring(k: KernelBuilder, capability: Capabilities) -> Shader {
    let shader = k.build().expect("builds for the default target");
    assert!(
        shader.signature.capabilities.contains(capability),
        "{:?}",
        shader.signature.capabilities
    );
    shader
}

/// The kernel of `build`, built for the default target, declares `capability` and fails to
/// build for a target without it.
fn declared_and_needed(build: fn() -> KernelBuilder, capability: Capabilities) -> Shader {
    let shader = built_declaring(build(), capability);
    let (_, needed) = missing_capability(&build());
    assert!(needed.contains(capability), "{needed:?}");
    shader
}

/// The adapter's device where it has `feature`; `None`, with a note, where it has not.
fn gpu_with(feature: wgpu::Features, what: &str) -> Option<Gpu> {
    let gpu = Gpu::new().expect("a GPU adapter (CI installs lavapipe)");
    if !gpu.features().contains(feature) {
        eprintln!("adapter has no {what}; build-only checks above still ran");
        return None;
    }
    Some(gpu)
}

fn subgroup_sum() -> KernelBuilder {
    let mut k = KernelBuilder::new("subgroup_sum", [WG, 1, 1]);
    let x = k.storage::<RuntimeArray<u32>, ReadOnly>("x");
    let sums = k.storage::<RuntimeArray<u32>, ReadWrite>("sums");
    let lanes = k.storage::<RuntimeArray<u32>, ReadWrite>("lanes");
    let sizes = k.storage::<RuntimeArray<u32>, ReadWrite>("sizes");
    let i = k.let_("i", global_invocation_id().x());
    // Every invocation runs the subgroup operation (the dispatch covers x exactly).
    let total = k.subgroup_add(x.at(&i).load());
    let first = k.subgroup_broadcast_first(x.at(&i).load());
    k.store(&sums.at(&i * 2u32), total);
    k.store(&sums.at(&i * 2u32 + 1u32), first);
    k.store(&lanes.at(&i), subgroup_invocation_id());
    k.store(&sizes.at(&i), subgroup_size());
    k
}

#[test]
fn subgroup_kernels_declare_and_check_their_capability() {
    declared_and_needed(subgroup_sum, Capabilities::SUBGROUP);
}

#[test]
fn subgroup_add_and_broadcast_first_on_the_gpu() {
    let Some(gpu) = gpu_with(wgpu::Features::SUBGROUP, "subgroups") else {
        return;
    };
    let n = (WG * 7) as usize;
    let x: Vec<u32> = (0..n as u32)
        .map(|i| i.wrapping_mul(2_654_435_761) % 1000)
        .collect();
    let kernel = compiled_on(&gpu, &subgroup_sum());
    let xb = GpuBuffer::from_slice(&gpu, &x).expect("upload");
    let sums = GpuBuffer::from_slice(&gpu, &vec![u32::MAX; 2 * n]).expect("poisoned");
    let lanes = GpuBuffer::from_slice(&gpu, &vec![u32::MAX; n]).expect("poisoned");
    let sizes = GpuBuffer::from_slice(&gpu, &vec![u32::MAX; n]).expect("poisoned");
    common::dispatch_over(&gpu, &kernel, &[&xb, &sums, &lanes, &sizes], n);
    let (sums, lanes, sizes) = (
        sums.read(&gpu).expect("read"),
        lanes.read(&gpu).expect("read"),
        sizes.read(&gpu).expect("read"),
    );
    for i in 0..n {
        let (lane, size) = (lanes[i] as usize, sizes[i] as usize);
        assert!(
            size.is_power_of_two() && lane < size,
            "invocation {i}: lane {lane} of {size}"
        );
        // A 1-D workgroup is split into subgroups of consecutive invocations.
        let base = i - lane;
        let members = &x[base..(base + size).min(n)];
        assert_eq!(
            sums[2 * i],
            members.iter().sum::<u32>(),
            "subgroupAdd at {i}"
        );
        assert_eq!(sums[2 * i + 1], members[0], "subgroupBroadcastFirst at {i}");
    }
}

fn half_kernel() -> KernelBuilder {
    let mut k = KernelBuilder::new("halves", [WG, 1, 1]);
    let h = k.storage::<RuntimeArray<half::f16>, ReadOnly>("h");
    let out = k.storage::<RuntimeArray<half::f16>, ReadWrite>("out");
    let i = k.let_("i", global_invocation_id().x());
    k.if_(i.ge(h.len()), |k| k.return_());
    k.store(
        &out.at(&i),
        h.at(&i).load() * lit(half::f16::from_f32(2.0)) + lit(half::f16::ONE),
    );
    k
}

/// Found by the kernel fuzzer (crates/wgsl-dsl-fuzz): an `f16` that is only a literal or
/// a conversion's result (no binding, `let` or `var` of type `f16`) was lowered without the
/// `f16` capability, and naga's validator rejected the kernel the DSL had accepted.
#[test]
fn f16_only_as_a_literal_or_a_conversion_declares_the_capability() {
    let mut k = KernelBuilder::new("halves_inline", [1, 1, 1]);
    let x = k.storage::<RuntimeArray<f32>, ReadOnly>("x");
    let out = k.storage::<RuntimeArray<u32>, ReadWrite>("out");
    k.store(
        &out.at(0u32),
        select(0u32, 1u32, lit(half::f16::from_f32(0.5)).to_bool()),
    );
    k.store(&out.at(1u32), x.at(0u32).load().to_f16().to_u32());
    let shader = k.build().unwrap_or_else(|e| panic!("{e}"));
    assert!(
        shader
            .signature
            .capabilities
            .contains(Capabilities::SHADER_FLOAT16),
        "{:?}",
        shader.signature.capabilities
    );
    assert!(shader.wgsl.starts_with("enable f16;"), "{}", shader.wgsl);
    let err = k
        .build_for(&TargetLimits {
            capabilities: Capabilities::empty(),
            ..TargetLimits::default()
        })
        .unwrap_err();
    assert!(matches!(err, BuildError::MissingCapability { .. }), "{err}");
}

#[test]
fn f16_kernels_declare_the_capability_and_enable_f16() {
    let shader = declared_and_needed(half_kernel, Capabilities::SHADER_FLOAT16);
    assert!(shader.wgsl.starts_with("enable f16;"), "{}", shader.wgsl);
}

#[test]
fn f16_arithmetic_on_the_gpu() {
    let Some(gpu) = gpu_with(wgpu::Features::SHADER_F16, "f16") else {
        return;
    };
    let n = 301;
    let h: Vec<half::f16> = (0..n)
        .map(|i| half::f16::from_f32(i as f32 * 0.25 - 30.0))
        .collect();
    let kernel = compiled_on(&gpu, &half_kernel());
    let hb = GpuBuffer::from_slice(&gpu, &h).expect("upload");
    let out = GpuBuffer::from_slice(&gpu, &vec![half::f16::NAN; n]).expect("poisoned");
    common::dispatch_over(&gpu, &kernel, &[&hb, &out], n);
    let got = out.read(&gpu).expect("read");
    for (i, (g, x)) in got.iter().zip(&h).enumerate() {
        // x * 2 + 1 is exact in f16 for these quarter-step values.
        let want = half::f16::from_f32(x.to_f32() * 2.0 + 1.0);
        assert_eq!(g.to_bits(), want.to_bits(), "element {i}: {g} != {want}");
    }
}

/// `c = a b + c0` for one 16x16x16 product on the tensor cores: `a` row-major, `b`
/// column-major (so it reads `b^T` stored row-major), `c` row-major, one subgroup.
fn one_product() -> KernelBuilder {
    type F16 = half::f16;
    let mut k = KernelBuilder::new("one_product", [32, 1, 1]);
    let a = k.storage::<RuntimeArray<F16>, ReadOnly>("a");
    let b = k.storage::<RuntimeArray<F16>, ReadOnly>("b");
    let c = k.storage::<RuntimeArray<f32>, ReadWrite>("c");
    let x: Exp<CoopMat<F16, 16, 16, MatrixA>> =
        k.let_("x", a.at(0u32).coop_load(16u32, CoopLayout::RowMajor));
    let y: Exp<CoopMat<F16, 16, 16, MatrixB>> =
        k.let_("y", b.at(0u32).coop_load(16u32, CoopLayout::ColumnMajor));
    let c0: Exp<CoopMat<f32, 16, 16, Accumulator>> =
        k.let_("c0", c.at(0u32).coop_load(16u32, CoopLayout::RowMajor));
    let d = k.let_("d", coop_multiply_add(&x, &y, &c0));
    k.coop_store(&d, &c.at(0u32), 16u32, CoopLayout::RowMajor);
    k
}

#[test]
fn cooperative_matrix_kernels_declare_the_capability_and_their_shapes() {
    let shader = built_declaring(one_product(), Capabilities::COOPERATIVE_MATRIX);
    assert_eq!(
        shader.signature.cooperative_shapes,
        vec![wgsl_dsl::types::CoopShape {
            m: 16,
            n: 16,
            k: 16,
            input: wgsl_dsl::types::ScalarTy::F16,
            accumulator: wgsl_dsl::types::ScalarTy::F32,
        }]
    );
    assert!(shader.wgsl.contains("enable wgpu_cooperative_matrix;"));
    assert!(
        shader.wgsl.contains("coopLoadT<coop_mat16x16<f16,A>>"),
        "{}",
        shader.wgsl
    );
    assert!(
        shader.wgsl.contains("coopLoad<coop_mat16x16<f16,B>>"),
        "{}",
        shader.wgsl
    );
    assert!(shader.wgsl.contains("coopStoreT(d, "), "{}", shader.wgsl);
    let portable = TargetLimits {
        capabilities: Capabilities::SUBGROUP | Capabilities::SHADER_FLOAT16,
        ..TargetLimits::default()
    };
    let err = one_product().build_for(&portable).unwrap_err();
    assert!(
        matches!(err, BuildError::MissingCapability { needed, .. } if needed == Capabilities::COOPERATIVE_MATRIX),
        "{err}"
    );
}

#[test]
fn cooperative_matrix_product_on_the_gpu_or_a_clear_refusal() {
    use wgsl_dsl::runtime::{DispatchError, DispatchErrorKind, GpuOptions};
    let gpu = Gpu::with_options(&GpuOptions {
        cooperative_matrix: true,
        ..GpuOptions::from_env()
    })
    .expect("a GPU adapter (CI installs lavapipe)");
    let shader = one_product().build().expect("builds");
    let kernel = match gpu.compile(&shader) {
        Err(
            e @ DispatchError {
                kind: DispatchErrorKind::MissingCapability { .. },
                ..
            },
        ) => {
            // lavapipe: no cooperative matrices. The message says what is missing and why.
            let message = e.to_string();
            assert!(message.contains("COOPERATIVE_MATRIX"), "{message}");
            assert!(message.contains("lavapipe"), "{message}");
            return;
        }
        Err(e) => panic!("unexpected error: {e}"),
        Ok(k) => k,
    };
    // Spec: d[i][j] = c0[i][j] + sum_p a[i][p] b[j][p] (b read column-major: element (p, j)
    // at b[j * 16 + p]), in f64 from the f16 values.
    let a: Vec<half::f16> = (0..256)
        .map(|i| half::f16::from_f32(((i * 37 % 29) as f32 - 14.0) / 8.0))
        .collect();
    let b: Vec<half::f16> = (0..256)
        .map(|i| half::f16::from_f32(((i * 11 % 23) as f32 - 11.0) / 4.0))
        .collect();
    let c0: Vec<f32> = (0..256).map(|i| (i % 7) as f32 - 3.0).collect();
    let ab = GpuBuffer::from_slice(&gpu, &a).expect("upload");
    let bb = GpuBuffer::from_slice(&gpu, &b).expect("upload");
    let cb = GpuBuffer::from_slice(&gpu, &c0).expect("upload");
    gpu.dispatch(&kernel, &[&ab, &bb, &cb], [1, 1, 1])
        .expect("dispatch");
    let got = cb.read(&gpu).expect("read");
    for i in 0..16 {
        for j in 0..16 {
            let want: f64 = f64::from(c0[i * 16 + j])
                + (0..16)
                    .map(|p| f64::from(a[i * 16 + p].to_f32()) * f64::from(b[j * 16 + p].to_f32()))
                    .sum::<f64>();
            // Every product and partial sum here is a multiple of 1/32 below 2^11: exact in f32.
            assert_eq!(f64::from(got[i * 16 + j]), want, "d[{i}][{j}]");
        }
    }
}
