//! Scans on the GPU against their CPU specification ([`ScanOp::scan_host`]): workgroup scans
//! through workgroup memory and through subgroups (both paths of
//! `workgroup_scan_subgroups`: the subgroup one where the workgroup's subgroups allow it, the
//! workgroup-memory one where they do not), and whole-buffer scans of lengths that are not
//! multiples of the block or subgroup size (lavapipe's subgroups have 8 invocations), over
//! one, two and three levels of blocks. Inputs are random, outputs poisoned first.

use rand::{Rng, SeedableRng};
use wgsl_dsl::kernel::scan::{ScanKind, ScanOp, ScanScalar};
use wgsl_dsl::runtime::{Gpu, GpuBuffer, PrefixScan, wgpu};

fn gpu() -> Gpu {
    Gpu::new().expect("a GPU adapter (CI installs lavapipe)")
}

fn has_subgroups(gpu: &Gpu) -> bool {
    gpu.features().contains(wgpu::Features::SUBGROUP)
}

/// Scan `x` with `op` and `kind` through `PrefixScan<T, BLOCK>` and compare with the CPU.
fn check<T, const BLOCK: usize>(
    gpu: &Gpu,
    op: &ScanOp<T>,
    kind: ScanKind,
    subgroups: bool,
    x: &[T],
    close: impl Fn(T, T) -> bool,
) where
    T: ScanScalar + bytemuck::Pod,
{
    let scan = PrefixScan::<T, BLOCK>::with_subgroups(gpu, op, kind, subgroups)
        .unwrap_or_else(|e| panic!("{op:?} {kind:?}: {e}"));
    let input = GpuBuffer::from_slice(gpu, x).expect("upload");
    let mut output = GpuBuffer::from_slice(gpu, &vec![T::HIGHEST; x.len()]).expect("poisoned");
    scan.run(gpu, &input, &mut output).expect("scan");
    let got = output.read(gpu).expect("read back");
    let want = op.scan_host(x, kind);
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert!(
            close(*g, *w),
            "{op:?} {kind:?} BLOCK {BLOCK} subgroups {subgroups} n {}: [{i}] = {g:?}, want {w:?}",
            x.len()
        );
    }
}

fn exact<T: PartialEq>(a: T, b: T) -> bool {
    a == b
}

/// Sums of `n` values in [0, 1): an f32 scan in another order is within a few ulps times n.
fn sum_close(a: f32, b: f32) -> bool {
    (a - b).abs() <= 1e-5 * b.abs().max(1.0) * 8.0
}

#[test]
fn buffer_scans_of_every_op_match_the_cpu() {
    let gpu = gpu();
    let sub = has_subgroups(&gpu);
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    // 1, 7, 37: one partial block; 65, 129: two and three blocks; 4161: three levels.
    for n in [1usize, 7, 37, 65, 129, 4161] {
        let u: Vec<u32> = (0..n).map(|_| rng.random_range(0..1000)).collect();
        let bits: Vec<u32> = (0..n).map(|_| rng.random()).collect();
        let f: Vec<f32> = (0..n).map(|_| rng.random_range(0.0..1.0)).collect();
        let i: Vec<i32> = (0..n).map(|_| rng.random_range(-3..4)).collect();
        for kind in [ScanKind::Inclusive, ScanKind::Exclusive] {
            check::<u32, 64>(&gpu, &ScanOp::add(), kind, sub, &u, exact);
            check::<f32, 64>(&gpu, &ScanOp::add(), kind, sub, &f, sum_close);
            check::<i32, 64>(&gpu, &ScanOp::mul(), kind, sub, &i, exact);
            check::<f32, 64>(&gpu, &ScanOp::max(), kind, sub, &f, exact);
            check::<i32, 64>(&gpu, &ScanOp::min(), kind, sub, &i, exact);
            check::<u32, 64>(&gpu, &ScanOp::and(), kind, sub, &bits, exact);
            check::<u32, 64>(&gpu, &ScanOp::or(), kind, sub, &bits, exact);
            check::<u32, 64>(&gpu, &ScanOp::xor(), kind, sub, &bits, exact);
        }
    }
}

/// A non-commutative monoid (the scans combine `op(earlier, later)`): composition of affine
/// maps `x -> a x + b` modulo 2^16, packed as `a << 16 | b`; `(q . p)(x) = q_a (p_a x + p_b) +
/// q_b`. The identity `x -> x` is `1 << 16`.
#[test]
fn custom_non_commutative_scan_matches_the_cpu() {
    let gpu = gpu();
    let op = ScanOp::<u32>::custom(
        "affine",
        1 << 16,
        |p, q| {
            let (pa, pb) = (p.clone() >> 16u32, p & 0xffffu32);
            let (qa, qb) = (q.clone() >> 16u32, q & 0xffffu32);
            (((qa.clone() * pa) & 0xffffu32) << 16u32) | ((qa * pb + qb) & 0xffffu32)
        },
        |p: u32, q: u32| {
            let (pa, pb, qa, qb) = (p >> 16, p & 0xffff, q >> 16, q & 0xffff);
            ((qa.wrapping_mul(pa) & 0xffff) << 16) | (qa.wrapping_mul(pb).wrapping_add(qb) & 0xffff)
        },
    );
    let mut rng = rand::rngs::StdRng::seed_from_u64(8);
    for n in [37usize, 129] {
        let x: Vec<u32> = (0..n).map(|_| rng.random()).collect();
        for kind in [ScanKind::Inclusive, ScanKind::Exclusive] {
            check::<u32, 64>(&gpu, &op, kind, false, &x, exact);
        }
    }
}

/// Block sizes that are not powers of two nor multiples of the subgroup size, with and without
/// subgroups: with lavapipe's 8-invocation subgroups, 48 (6 subgroups) takes the subgroup
/// path, 100 (13 subgroups, the last partial) and 256 (32 subgroups, more than 8) the
/// workgroup-memory one inside `workgroup_scan_subgroups`.
#[test]
fn block_sizes_and_both_subgroup_paths_match_the_cpu() {
    let gpu = gpu();
    let mut rng = rand::rngs::StdRng::seed_from_u64(9);
    let x: Vec<u32> = (0..613).map(|_| rng.random_range(0..100)).collect();
    for sub in [false, true] {
        if sub && !has_subgroups(&gpu) {
            eprintln!("no subgroups on this adapter: the subgroup path is not run");
            continue;
        }
        for kind in [ScanKind::Inclusive, ScanKind::Exclusive] {
            check::<u32, 48>(&gpu, &ScanOp::add(), kind, sub, &x, exact);
            check::<u32, 100>(&gpu, &ScanOp::add(), kind, sub, &x, exact);
            check::<u32, 256>(&gpu, &ScanOp::add(), kind, sub, &x, exact);
            check::<u32, 7>(&gpu, &ScanOp::add(), kind, sub, &x[..50], exact);
        }
    }
}

#[test]
fn scan_host_is_the_sequential_definition() {
    let op = ScanOp::<i32>::add();
    assert_eq!(
        op.scan_host(&[3, -1, 4], ScanKind::Inclusive),
        vec![3, 2, 6]
    );
    assert_eq!(
        op.scan_host(&[3, -1, 4], ScanKind::Exclusive),
        vec![0, 3, 2]
    );
    assert_eq!(
        ScanOp::<u32>::and().scan_host(&[0b110, 0b011], ScanKind::Exclusive),
        vec![u32::MAX, 0b110]
    );
}
