//! `GpuBuffer::read_async`: a read-back queued between submissions sees exactly the work
//! submitted before it, whatever is submitted after it and in whichever order the reads are
//! collected (lavapipe in CI).

use wgsl_dsl::prelude::*;
use wgsl_dsl::runtime::{DeviceError, Gpu, GpuBuffer};

/// `x[i] = x[i] * 2 + 1` for `i < arrayLength(x)`.
#[kernel(workgroup_size = 64, grid = |len: usize| [(len as u32).div_ceil(64), 1, 1])]
fn double_plus_one(
    #[storage(read_write)] x: &mut [f32],
    #[builtin(global_invocation_id)] gid: Vec3<u32>,
) {
    let i = gid.x;
    if i < x.len() {
        x[i] = x[i] * 2.0f32 + 1.0f32;
    }
}

#[test]
fn read_async_sees_the_work_submitted_before_it() {
    let gpu = Gpu::new().expect("a GPU adapter (install mesa-vulkan-drivers for lavapipe)");
    let kernel = gpu.compile_typed(DoublePlusOne).expect("compiles");
    for n in [1usize, 37, 4099] {
        let start: Vec<f32> = (0..n).map(|i| (i % 97) as f32 - 48.5).collect();
        let mut x = GpuBuffer::from_slice(&gpu, &start).unwrap();
        let mut pending = Vec::new();
        let mut want = vec![start.clone()];
        for round in 0..3 {
            let mut rec = gpu.recorder();
            // Several dispatches per submission, so a read that waited for later work would
            // see a value several rounds on.
            for _ in 0..4 {
                kernel
                    .record(&mut rec, DoublePlusOneArgs { x: &mut x }, n)
                    .unwrap();
                let last = want.last().unwrap().clone();
                want.push(last.iter().map(|v| v * 2.0 + 1.0).collect());
            }
            rec.submit().unwrap();
            pending.push((4 * (round + 1), x.read_async(&gpu).unwrap()));
        }
        // Collected last to first: each still holds its own round's values.
        while let Some((at, read)) = pending.pop() {
            assert_eq!(
                read.wait(&gpu).unwrap(),
                want[at],
                "n = {n}, after {at} dispatches"
            );
        }
        assert_eq!(x.read(&gpu).unwrap(), want[12]);
    }
}

#[test]
fn read_async_refuses_another_gpu() {
    let a = Gpu::new().expect("a GPU adapter");
    let b = Gpu::new().expect("a second device on the adapter");
    let x = GpuBuffer::from_slice(&a, &[1.0f32, 2.0]).unwrap();
    assert!(matches!(x.read_async(&b), Err(DeviceError::WrongDevice)));
    let pending = x.read_async(&a).unwrap();
    assert!(matches!(pending.wait(&b), Err(DeviceError::WrongDevice)));
}
